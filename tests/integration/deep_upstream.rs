//! `--deep` on an upstream skyrl checkout: the entry module imported, the config built by the
//! real `SkyRLTrainConfig.from_cli_overrides`, the real `validate_cfg` run, the verdict verbatim.
//! Run by the real rlctl through the local cluster profile and its singularity stand-in, as
//! tests/integration/deep.rs does for MarinSkyRL.
//!
//! The checkout is tests/standin/upstream_checkout.py's (the stand-in entry modules over the
//! `skyrl` 0.4.0 wheel's real config). It lacks `skyrl/train/utils` and the backend modules
//! validate_cfg imports; the test LINKS the wheel's own folders into it (`WHEEL_PARTS`), so
//! deep.py finds validate_cfg where upstream's main_base imports it from,
//! `skyrl.train.utils.utils`, in the checkout's package. The venv is a STAND-IN: python3 with
//! a sitecustomize that loads the real numpy and pandas (the config's skyrl_gym needs them),
//! then tests/gpu_stack_standin/gpu_stack_standin.py's permissive stand-ins for torch, ray,
//! vllm and the rest of the GPU stack, which validate_cfg never runs.

use crate::common::{rlctl, stage_offline_files, stage_teachers, stderr, stdout, write_exec};
use std::path::Path;
use std::process::{Command, Output};

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// The wheel's parts validate_cfg imports, linked into the stand-in checkout.
const WHEEL_PARTS: [&str; 5] = [
    "train/utils",
    "env_vars.py",
    "backends/skyrl_train/distributed",
    "backends/skyrl_train/weight_sync",
    "backends/skyrl_train/utils",
];

const SITECUSTOMIZE: &str = r#""""STAND-IN venv of rlctl's upstream deep-check tests: the real numpy and pandas first (the
config's skyrl_gym imports them), then the GPU stack's stand-ins (gpu_stack_standin.py)."""
import skyrl_gym  # noqa: F401
import gpu_stack_standin

gpu_stack_standin.install(permissive=True)
"#;

struct Site {
    root: tempfile::TempDir,
}

impl Site {
    fn new() -> Site {
        let root = tempfile::Builder::new()
            .prefix("rlctl-deep-up-")
            .tempdir()
            .unwrap();
        let r = root.path();
        stage_offline_files(r);
        std::fs::create_dir_all(r.join("image")).unwrap();
        let checkout = r.join("checkout");
        let script = format!("{REPO}/tests/standin/upstream_checkout.py");
        let status = Command::new("python3")
            .arg(script)
            .arg(&checkout)
            .status()
            .unwrap();
        assert!(
            status.success(),
            "the skyrl wheel is missing: run tests/setup.sh"
        );
        let wheel = wheel();
        for part in WHEEL_PARTS {
            // The stand-in's own `train/utils` (the real callbacks and tracking) gives way to
            // the wheel's whole folder.
            let target = checkout.join("skyrl").join(part);
            if target.is_dir() {
                std::fs::remove_dir_all(&target).unwrap();
            }
            std::os::unix::fs::symlink(wheel.join(part), target).unwrap();
        }
        std::fs::create_dir_all(r.join("venv/bin")).unwrap();
        let site_dir = r.join("venv/site");
        std::fs::create_dir_all(&site_dir).unwrap();
        std::fs::write(site_dir.join("sitecustomize.py"), SITECUSTOMIZE).unwrap();
        write_exec(
            &r.join("venv/bin/python"),
            &format!(
                "#!/bin/sh\n# STAND-IN venv: python3 with the GPU stack's stand-ins.\n\
                 PYTHONPATH={}:{REPO}/tests/gpu_stack_standin${{PYTHONPATH:+:$PYTHONPATH}} exec {} \"$@\"\n",
                site_dir.display(),
                python3()
            ),
        );
        let local =
            std::fs::read_to_string(format!("{REPO}/tests/cluster/presets/clusters/local.toml"))
                .unwrap();
        let marin = [
            "skyrl = \"${REPO}/tests/standin/MarinSkyRL\"",
            "schema = \"marinskyrl-a559688\"",
        ];
        assert!(marin.iter().all(|m| local.contains(m)));
        let text = local
            .replace(marin[0], "skyrl = \"${ROOT}/checkout\"")
            .replace(marin[1], "schema = \"skyrl-0.4.0\"");
        std::fs::create_dir_all(r.join("presets/clusters")).unwrap();
        std::fs::write(r.join("presets/clusters/local.toml"), text).unwrap();
        Site { root }
    }

    fn path(&self) -> &Path {
        self.root.path()
    }

    fn run(&self, args: &[&str]) -> Output {
        rlctl()
            .env("RLCTL_PRESETS", self.path().join("presets"))
            .env("RLCTL_CLUSTER", "local")
            .env("RLCTL_LOCAL_ROOT", self.path())
            .env("RLCTL_REPO", REPO)
            .env_remove("SINGULARITY_SHIM_LOG")
            .args(args)
            .output()
            .unwrap()
    }

    fn text(&self, text: &str) -> String {
        text.replace(&self.path().display().to_string(), "<ROOT>")
    }

    fn preset(&self, name: &str, text: &str) {
        let runs = self.path().join("presets/runs");
        std::fs::create_dir_all(&runs).unwrap();
        std::fs::write(runs.join(format!("{name}.toml")), text).unwrap();
    }
}

fn python3() -> String {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// The installed `skyrl` wheel's package folder.
fn wheel() -> std::path::PathBuf {
    let out = Command::new("python3")
        .args([
            "-c",
            "import importlib.metadata as m, importlib.util as u; \
             assert m.version('skyrl') == '0.4.0'; \
             print(next(iter(u.find_spec('skyrl').submodule_search_locations)))",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the skyrl 0.4.0 wheel is missing: run tests/setup.sh"
    );
    String::from_utf8(out.stdout).unwrap().trim().into()
}

fn refused(site: &Site, output: &Output) -> String {
    assert_eq!(output.status.code(), Some(1), "{}", stderr(output));
    assert_eq!(stdout(output), "");
    let text = site.text(&stderr(output));
    let (_, problems) = text
        .split_once("nothing was written or submitted:\n")
        .unwrap_or_else(|| panic!("not a preflight failure:\n{text}"));
    problems.trim().to_owned()
}

#[test]
fn a_good_upstream_plan_passes_judged_by_the_wheels_parser_and_validate_cfg() {
    let site = Site::new();
    let out = site.run(&["check", "gsm8k-canary", "--deep"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        site.text(&stderr(&out)),
        "rlctl: note: [skyrl-deep] SkyRL's own config and validate_cfg in `<ROOT>/checkout` accept the plan\n"
    );
}

#[test]
fn a_refusal_of_upstreams_parser_is_reported_verbatim() {
    // The config's __post_init__ refuses the pair; rlctl's mirror does not read the data loader.
    let site = Site::new();
    let overrides = [
        "--",
        "data.dataloader.persistent_workers=true",
        "data.dataloader.num_workers=0",
    ];
    let mirror = site.run(&[&["check", "gsm8k-canary"][..], &overrides].concat());
    assert!(mirror.status.success(), "{}", stderr(&mirror));
    let out = site.run(&[&["check", "gsm8k-canary", "--deep"][..], &overrides].concat());
    assert_eq!(
        refused(&site, &out),
        "[skyrl-deep] upstream skyrl's `SkyRLTrainConfig.from_cli_overrides` refuses these overrides: ValueError: \
         data.dataloader.persistent_workers requires num_workers > 0, but it was set explicitly to 0.; this is the \
         config of the checkout `<ROOT>/checkout`; change the override or the checkout"
    );
}

/// An entry module of the checkout's own: it registers an advantage estimator on import and
/// imports a `validate_cfg` of its own that adds a rule to upstream's.
const CUSTOM_ENTRY: &str = r#"from skyrl.backends.skyrl_train.utils.ppo_utils import register_advantage_estimator
from skyrl.train.utils.utils import validate_cfg as skyrl_validate_cfg


@register_advantage_estimator("halved_grpo")
def halved_grpo(**kwargs):
    raise NotImplementedError("never called by validate_cfg")


def validate_cfg(cfg):
    skyrl_validate_cfg(cfg)
    if cfg.trainer.epochs > 2:
        raise ValueError(f"my_main trains at most 2 epochs, not {cfg.trainer.epochs}")
"#;

#[test]
fn the_entry_module_registers_names_and_brings_its_own_validate_cfg() {
    let site = Site::new();
    std::fs::write(site.path().join("checkout/my_main.py"), CUSTOM_ENTRY).unwrap();
    site.preset(
        "my-exp",
        "description = \"the canary through an entry module of the checkout's own\"\nextends = \"gsm8k-canary\"\n\
         entrypoint = \"my_main\"\n\n[knobs]\n\"trainer.algorithm.advantage_estimator\" = \"halved_grpo\"\n",
    );
    let ok = site.run(&["check", "my-exp", "--deep", "--", "trainer.epochs=2"]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    let out = site.run(&["check", "my-exp", "--deep", "--", "trainer.epochs=3"]);
    assert_eq!(
        refused(&site, &out),
        "[skyrl-deep] SkyRL refuses the plan: ValueError: my_main trains at most 2 epochs, not 3; this is SkyRL's \
         own validate_cfg in `<ROOT>/checkout`; change the knob or the checkout"
    );
    // The same estimator through upstream's own entry module: its registry refuses it, verbatim.
    site.preset(
        "plain-exp",
        "description = \"the canary with an estimator upstream lacks\"\nextends = \"gsm8k-canary\"\n\
         entrypoint = \"skyrl.train.entrypoints.main_base\"\n",
    );
    let mirror = site.run(&[
        "check",
        "plain-exp",
        "--",
        "trainer.algorithm.advantage_estimator=halved_grpo",
    ]);
    assert!(
        stderr(&mirror).contains("[skyrl-rules] `trainer.algorithm.advantage_estimator=halved_grpo` is not one of grpo, gae, rloo, reinforce++, maxrl"),
        "{}",
        stderr(&mirror)
    );
}

/// MarinSkyRL's OPD preset on the upstream checkout: upstream's OPD example imported (it
/// registers `no_op` with the wheel's real registry), the wheel's parser and validate_cfg accept
/// the translated plan; the mirror and the deep check agree.
#[test]
fn an_opd_preset_passes_upstreams_own_parser_and_validate_cfg() {
    let site = Site::new();
    stage_teachers(site.path());
    let mirror = site.run(&["check", "opd-qwen3-smoke"]);
    assert!(mirror.status.success(), "{}", stderr(&mirror));
    let out = site.run(&["check", "opd-qwen3-smoke", "--deep"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        site.text(&stderr(&out)).contains(
            "rlctl: note: [skyrl-deep] SkyRL's own config and validate_cfg in `<ROOT>/checkout` accept the plan\n"
        ),
        "{}",
        stderr(&out)
    );
    // The mirror knows what the example registers: a name it lacks is refused before the queue.
    let out = site.run(&[
        "check",
        "opd-qwen3-smoke",
        "--",
        "trainer.algorithm.advantage_estimator=grpo_x",
    ]);
    assert!(
        refused(&site, &out).contains(
            "[skyrl-rules] `trainer.algorithm.advantage_estimator=grpo_x` is not one of grpo, gae, rloo, \
             reinforce++, maxrl, no_op (what upstream skyrl's ppo_utils.py with \
             `examples.train.on_policy_distillation.main_on_policy_distill` registers)"
        ),
        "{}",
        stderr(&out)
    );
}

//! The wrapper's bash (`templates/partials/checkpoint.sh.tera`, run by every start of a job) and
//! [`decide`] must come to the same step on the same folders: each layout below is judged by
//! both, and they must agree on what to do (start fresh, resume, repair the pointer, refuse)
//! and from which step.

use super::layout::*;
use super::{Decision, Expect, Folder, decide};
use camino::Utf8Path;

const SCRIPT: &str = include_str!("../../templates/partials/checkpoint.sh.tera");

/// The bash verdict's first two words: `fresh`, `resume N`, `repair N`, `refuse`.
fn bash_verdict(ckpt: &Utf8Path, interval: u64, lora: bool) -> String {
    let program = format!("set -euo pipefail\n{SCRIPT}\nresume_point \"$1\" \"$2\" \"$3\"\n");
    let lora = u8::from(lora).to_string();
    let out = std::process::Command::new("bash")
        .args([
            "-c",
            &program,
            "bash",
            ckpt.as_str(),
            &interval.to_string(),
            &lora,
        ])
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "bash failed on {ckpt}: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.lines().count(), 1, "one line: {stdout}");
    let mut words = stdout.split_whitespace();
    let kind = words.next().unwrap_or_default();
    match kind {
        "resume" | "repair" => format!("{kind} {}", words.next().unwrap_or_default()),
        _ => kind.to_owned(),
    }
}

fn rust_verdict(ckpt: &Utf8Path, interval: u64, lora: bool) -> String {
    match decide(&Folder::read(ckpt, Expect { lora }), Some(interval)) {
        Decision::Fresh => "fresh".to_owned(),
        Decision::Resume { step, repair: None } => format!("resume {step}"),
        Decision::Resume { step, .. } => format!("repair {step}"),
        Decision::Refuse(_) => "refuse".to_owned(),
    }
}

fn remove(path: &Utf8Path) {
    if path.is_dir() {
        std::fs::remove_dir_all(path).unwrap();
    } else {
        std::fs::remove_file(path).unwrap();
    }
}

/// Each layout: its name, the interval, how it is made, and the verdict both must give.
type Layout = (&'static str, u64, fn(&Utf8Path), &'static str);

const LAYOUTS: &[Layout] = &[
    ("nothing saved", 10, |_| {}, "fresh"),
    (
        "a pointer over no folder",
        10,
        |r| pointer(r, "20"),
        "refuse",
    ),
    (
        "whole 10 and 20, pointer 20",
        10,
        |r| {
            fsdp_step(r, 10, 2, false);
            fsdp_step(r, 20, 2, false);
            pointer(r, "20\n");
        },
        "resume 20",
    ),
    (
        "an empty pointer over whole 10 and 20",
        10,
        |r| {
            fsdp_step(r, 10, 2, false);
            fsdp_step(r, 20, 2, false);
            pointer(r, "");
        },
        "repair 20",
    ),
    (
        "a garbage pointer",
        10,
        |r| {
            fsdp_step(r, 10, 2, false);
            fsdp_step(r, 20, 2, false);
            pointer(r, "x9");
        },
        "repair 20",
    ),
    (
        "a pointer naming a missing step",
        10,
        |r| {
            fsdp_step(r, 10, 1, false);
            pointer(r, "20");
        },
        "repair 10",
    ),
    (
        "rank 3's files missing in the step the pointer names",
        10,
        |r| {
            fsdp_step(r, 10, 4, false);
            fsdp_step(r, 20, 4, false);
            remove(&r.join("global_step_20/policy/model_world_size_4_rank_3.pt"));
            pointer(r, "20");
        },
        "repair 10",
    ),
    (
        "an empty rank file",
        10,
        |r| {
            fsdp_step(r, 10, 2, false);
            fsdp_step(r, 20, 2, false);
            std::fs::write(
                r.join("global_step_20/policy/extra_state_world_size_2_rank_1.pt"),
                "",
            )
            .unwrap();
            pointer(r, "20");
        },
        "repair 10",
    ),
    (
        "no pointer over whole 40 and 50",
        10,
        |r| {
            fsdp_step(r, 40, 1, false);
            fsdp_step(r, 50, 1, false);
        },
        "repair 50",
    ),
    (
        "a pointer behind the newest whole step by more than ckpt_interval",
        10,
        |r| {
            for step in [10, 20, 30] {
                fsdp_step(r, step, 1, false);
            }
            pointer(r, "10");
        },
        "repair 30",
    ),
    (
        "megatron: the newest without .metadata",
        10,
        |r| {
            megatron_step(r, 10, true);
            megatron_step(r, 20, false);
            pointer(r, "20");
        },
        "repair 10",
    ),
    (
        "megatron: none finalized",
        10,
        |r| {
            megatron_step(r, 10, false);
            pointer(r, "10");
        },
        "refuse",
    ),
    (
        "the critic incomplete",
        10,
        |r| {
            fsdp_step(r, 10, 2, true);
            fsdp_step(r, 20, 2, true);
            remove(&r.join("global_step_20/critic/optim_world_size_2_rank_0.pt"));
            pointer(r, "20");
        },
        "repair 10",
    ),
    (
        "no trainer_state.pt in the newest",
        10,
        |r| {
            fsdp_step(r, 10, 2, false);
            fsdp_step(r, 20, 2, false);
            remove(&r.join("global_step_20/trainer_state.pt"));
        },
        "repair 10",
    ),
    (
        "an unfinished save too far past the newest whole step",
        10,
        |r| {
            fsdp_step(r, 10, 1, false);
            std::fs::create_dir_all(r.join("global_step_40/policy")).unwrap();
            pointer(r, "10");
        },
        "refuse",
    ),
    (
        "an unfinished save within ckpt_interval",
        10,
        |r| {
            fsdp_step(r, 10, 1, false);
            std::fs::create_dir_all(r.join("global_step_20/policy")).unwrap();
            pointer(r, "10");
        },
        "resume 10",
    ),
    (
        "a garbage fsdp_config.json",
        10,
        |r| {
            fsdp_step(r, 10, 2, false);
            fsdp_step(r, 20, 2, false);
            std::fs::write(r.join("global_step_20/policy/fsdp_config.json"), "{oops").unwrap();
        },
        "repair 10",
    ),
    (
        "world_size as a string, and over several lines",
        10,
        |r| {
            fsdp_step(r, 10, 2, false);
            let indented = "{\n  \"fsdp_strategy\": \"fsdp\",\n  \"world_size\": 2\n}\n";
            std::fs::write(r.join("global_step_10/policy/fsdp_config.json"), indented).unwrap();
            fsdp_step(r, 20, 2, false);
            let text = "{\"world_size\": \"2\"}";
            std::fs::write(r.join("global_step_20/policy/fsdp_config.json"), text).unwrap();
            pointer(r, "20");
        },
        "repair 10",
    ),
    (
        "a pointer with blanks and a leading zero",
        10,
        |r| {
            fsdp_step(r, 20, 1, false);
            pointer(r, " 020 \n");
        },
        "resume 20",
    ),
    (
        "a pointer of 120 over whole 12",
        10,
        |r| {
            fsdp_step(r, 12, 1, false);
            pointer(r, "120");
        },
        "repair 12",
    ),
    (
        "names SkyRL never writes are not steps",
        10,
        |r| {
            fsdp_step(r, 10, 1, false);
            std::fs::create_dir_all(r.join("global_step_abc")).unwrap();
            std::fs::create_dir_all(r.join("global_step_012")).unwrap();
            std::fs::write(r.join("global_step_30"), "a file").unwrap();
            pointer(r, "10");
        },
        "resume 10",
    ),
    (
        "a pointer that is a folder",
        10,
        |r| {
            fsdp_step(r, 10, 1, false);
            std::fs::create_dir_all(r.join(super::POINTER_FILE)).unwrap();
        },
        "repair 10",
    ),
    (
        "only incomplete steps and no pointer",
        10,
        |r| {
            fsdp_step(r, 10, 2, false);
            remove(&r.join("global_step_10/policy/fsdp_config.json"));
        },
        "refuse",
    ),
    (
        "ckpt_interval unknown",
        0,
        |r| {
            fsdp_step(r, 10, 1, false);
            std::fs::create_dir_all(r.join("global_step_90")).unwrap();
            pointer(r, "");
        },
        "repair 10",
    ),
];

/// Layouts of runs that train LoRA or not (interval 10): name, whether the run trains the
/// policy with LoRA, how the folder is made, and the verdict both must give.
type LoraLayout = (&'static str, bool, fn(&Utf8Path), &'static str);

const LORA_LAYOUTS: &[LoraLayout] = &[
    (
        "lora: both steps with their adapter",
        true,
        |r| {
            for step in [10, 20] {
                fsdp_step(r, step, 2, false);
                lora_adapter(&r.join(format!("global_step_{step}/policy")));
            }
            pointer(r, "20");
        },
        "resume 20",
    ),
    (
        "lora: killed before the newest step's adapter",
        true,
        |r| {
            fsdp_step(r, 10, 2, false);
            lora_adapter(&r.join("global_step_10/policy"));
            fsdp_step(r, 20, 2, false);
            pointer(r, "20");
        },
        "repair 10",
    ),
    (
        "lora: killed while writing adapter_config.json",
        true,
        |r| {
            fsdp_step(r, 10, 2, false);
            lora_adapter(&r.join("global_step_10/policy"));
            fsdp_step(r, 20, 2, false);
            lora_adapter(&r.join("global_step_20/policy"));
            std::fs::write(
                r.join("global_step_20/policy/lora_adapter/adapter_config.json"),
                "",
            )
            .unwrap();
            pointer(r, "20");
        },
        "repair 10",
    ),
    (
        "lora: no step has its adapter",
        true,
        |r| {
            fsdp_step(r, 10, 1, false);
            pointer(r, "10");
        },
        "refuse",
    ),
    (
        "lora: a megatron step has no lora_adapter/",
        true,
        |r| {
            megatron_step(r, 10, true);
            pointer(r, "10");
        },
        "resume 10",
    ),
    (
        "no lora: steps without an adapter",
        false,
        |r| {
            fsdp_step(r, 10, 1, false);
            fsdp_step(r, 20, 1, false);
            pointer(r, "20");
        },
        "resume 20",
    ),
    (
        "no lora flag: a lora_adapter/ folder without its safetensors",
        false,
        |r| {
            fsdp_step(r, 10, 1, false);
            lora_adapter(&r.join("global_step_10/policy"));
            fsdp_step(r, 20, 1, false);
            lora_adapter(&r.join("global_step_20/policy"));
            remove(&r.join("global_step_20/policy/lora_adapter/adapter_model.safetensors"));
            pointer(r, "20");
        },
        "repair 10",
    ),
    (
        "no lora flag: an empty lora_adapter/ in the critic",
        false,
        |r| {
            fsdp_step(r, 10, 1, true);
            fsdp_step(r, 20, 1, true);
            std::fs::create_dir_all(r.join("global_step_20/critic/lora_adapter")).unwrap();
            pointer(r, "20");
        },
        "repair 10",
    ),
];

#[test]
fn the_wrappers_bash_and_rlctl_resume_from_the_same_step() {
    assert!(LAYOUTS.len() >= 15);
    let lora = LORA_LAYOUTS
        .iter()
        .map(|(name, lora, make, want)| (*name, 10, *lora, *make, *want));
    let plain = LAYOUTS
        .iter()
        .map(|(name, interval, make, want)| (*name, *interval, false, *make, *want));
    let mut disagree = Vec::new();
    for (name, interval, lora, make, want) in plain.chain(lora) {
        let dir = tempfile::tempdir().unwrap();
        let ckpt = Utf8Path::from_path(dir.path()).unwrap().join("ckpt");
        std::fs::create_dir_all(&ckpt).unwrap();
        make(&ckpt);
        let (rust, bash) = (
            rust_verdict(&ckpt, interval, lora),
            bash_verdict(&ckpt, interval, lora),
        );
        if rust != want || bash != want {
            disagree.push(format!("{name}: want {want}, rlctl {rust}, bash {bash}"));
        }
    }
    assert!(disagree.is_empty(), "{}", disagree.join("\n"));
}

#[test]
fn the_wrappers_bash_is_plain_text_to_its_template_engine() {
    // Included verbatim into sbatch.sh: nothing in it may read as a tera tag or comment.
    for tag in ["{{", "{%", "{#"] {
        assert!(!SCRIPT.contains(tag), "{tag}");
    }
}

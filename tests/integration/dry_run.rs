//! The full `--dry-run` output of every embedded preset and grid cell, and the help texts,
//! pinned as snapshots: any change to what rlctl would submit shows up in review.

use crate::common::{ok, rlctl, stdout};
use rlctl::preset::Library;

fn all_targets() -> Vec<(String, Vec<String>)> {
    let library = Library::load(None).unwrap();
    let mut targets: Vec<(String, Vec<String>)> = library
        .preset_names()
        .map(|p| (p.to_owned(), vec!["launch".to_owned(), p.to_owned()]))
        .collect();
    for grid in library.grid_names() {
        for cell in &library.grid(grid).unwrap().cells {
            let qualified = format!("{grid}/{}", cell.name);
            targets.push((qualified.clone(), vec!["grid".to_owned(), qualified]));
        }
    }
    targets
}

/// The `--dry-run` of one preset (`launch`) or grid cell (`grid`) against its own snapshot.
fn dry_run(command: &str, target: &str) {
    let output = ok(rlctl().args([command, target, "--dry-run"]));
    insta::assert_snapshot!(target.replace('/', "__"), stdout(&output));
}

/// One test per preset and grid cell, so that a template change lists every target it changes
/// rather than stopping at the first.
macro_rules! dry_run_tests {
    ($($test:ident: $command:literal $target:literal;)+) => {
        mod every_target {
            $(
                #[test]
                fn $test() {
                    super::dry_run($command, $target);
                }
            )+
        }

        const TESTED: &[(&str, &str)] = &[$(($command, $target)),+];
    };
}

dry_run_tests! {
    gsm8k_canary: "launch" "gsm8k-canary";
    gsm8k_multinode: "launch" "gsm8k-multinode";
    math_longcot: "launch" "math-longcot";
    math_multinode: "launch" "math-multinode";
    opd_qwen3: "launch" "opd-qwen3";
    opd_qwen3_smoke: "launch" "opd-qwen3-smoke";
    gsm8k_accuracy_base_long: "grid" "gsm8k-accuracy/base_long";
    gsm8k_accuracy_lr3e_7: "grid" "gsm8k-accuracy/lr3e-7";
    gsm8k_accuracy_lr1e_6: "grid" "gsm8k-accuracy/lr1e-6";
    gsm8k_accuracy_lr3e_6: "grid" "gsm8k-accuracy/lr3e-6";
    gsm8k_accuracy_lr1e_5: "grid" "gsm8k-accuracy/lr1e-5";
    gsm8k_accuracy_lr3e_5: "grid" "gsm8k-accuracy/lr3e-5";
    gsm8k_accuracy_n4: "grid" "gsm8k-accuracy/n4";
    gsm8k_accuracy_n16: "grid" "gsm8k-accuracy/n16";
    gsm8k_accuracy_gen1024: "grid" "gsm8k-accuracy/gen1024";
    gsm8k_accuracy_gen2048: "grid" "gsm8k-accuracy/gen2048";
    gsm8k_accuracy_kl001: "grid" "gsm8k-accuracy/kl001";
    gsm8k_accuracy_kl01: "grid" "gsm8k-accuracy/kl01";
    gsm8k_accuracy_temp07: "grid" "gsm8k-accuracy/temp07";
    gsm8k_accuracy_temp12: "grid" "gsm8k-accuracy/temp12";
    gsm8k_accuracy_clip028: "grid" "gsm8k-accuracy/clip028";
    gsm8k_accuracy_entbonus: "grid" "gsm8k-accuracy/entbonus";
    gsm8k_accuracy_nonstop0: "grid" "gsm8k-accuracy/nonstop0";
    gsm8k_accuracy_base_q3: "grid" "gsm8k-accuracy/base_q3";
    gsm8k_accuracy_combo_acc: "grid" "gsm8k-accuracy/combo_acc";
    gsm8k_accuracy_combo_acc_stab: "grid" "gsm8k-accuracy/combo_acc_stab";
    gsm8k_throughput_base: "grid" "gsm8k-throughput/base";
    gsm8k_throughput_tbs64: "grid" "gsm8k-throughput/tbs64";
    gsm8k_throughput_tbs128: "grid" "gsm8k-throughput/tbs128";
    gsm8k_throughput_tbs256: "grid" "gsm8k-throughput/tbs256";
    gsm8k_throughput_tbs512: "grid" "gsm8k-throughput/tbs512";
    gsm8k_throughput_n8: "grid" "gsm8k-throughput/n8";
    gsm8k_throughput_n16: "grid" "gsm8k-throughput/n16";
    gsm8k_throughput_gmu075: "grid" "gsm8k-throughput/gmu075";
    gsm8k_throughput_gmu080: "grid" "gsm8k-throughput/gmu080";
    gsm8k_throughput_gmu085: "grid" "gsm8k-throughput/gmu085";
    gsm8k_throughput_cudagraph: "grid" "gsm8k-throughput/cudagraph";
    gsm8k_throughput_2xtp2: "grid" "gsm8k-throughput/2xtp2";
    gsm8k_throughput_1xtp4: "grid" "gsm8k-throughput/1xtp4";
    gsm8k_throughput_micro16: "grid" "gsm8k-throughput/micro16";
    gsm8k_throughput_reshard_off: "grid" "gsm8k-throughput/reshard_off";
    gsm8k_throughput_colocate_off: "grid" "gsm8k-throughput/colocate_off";
    gsm8k_throughput_combo_c: "grid" "gsm8k-throughput/combo_C";
    gsm8k_throughput_combo_d: "grid" "gsm8k-throughput/combo_D";
    opd_speed_convergence_opd_base: "grid" "opd-speed-convergence/opd-base";
    opd_speed_convergence_opd_topk32: "grid" "opd-speed-convergence/opd-topk32";
    opd_speed_convergence_opd_topk64: "grid" "opd-speed-convergence/opd-topk64";
    opd_speed_convergence_opd_topk256: "grid" "opd-speed-convergence/opd-topk256";
    opd_speed_convergence_opd_teacher_tp4: "grid" "opd-speed-convergence/opd-teacher-tp4";
    opd_speed_convergence_opd_tbs128: "grid" "opd-speed-convergence/opd-tbs128";
    opd_speed_convergence_opd_gen512: "grid" "opd-speed-convergence/opd-gen512";
    opd_speed_convergence_opd_cudagraph: "grid" "opd-speed-convergence/opd-cudagraph";
    opd_speed_convergence_opd_lr3e_6: "grid" "opd-speed-convergence/opd-lr3e-6";
    opd_speed_convergence_opd_lr3e_5: "grid" "opd-speed-convergence/opd-lr3e-5";
    opd_speed_convergence_opd_lr1e_4: "grid" "opd-speed-convergence/opd-lr1e-4";
    opd_speed_convergence_opd_n4: "grid" "opd-speed-convergence/opd-n4";
    opd_speed_convergence_opd_n16: "grid" "opd-speed-convergence/opd-n16";
    opd_speed_convergence_opd_topk16: "grid" "opd-speed-convergence/opd-topk16";
    opd_speed_convergence_opd_combo_fast: "grid" "opd-speed-convergence/opd-combo_fast";
    opd_throughput_opdtp_base: "grid" "opd-throughput/opdtp-base";
    opd_throughput_opdtp_teacher_tp4: "grid" "opd-throughput/opdtp-teacher-tp4";
    opd_throughput_opdtp_topk16: "grid" "opd-throughput/opdtp-topk16";
    opd_throughput_opdtp_topk32: "grid" "opd-throughput/opdtp-topk32";
    opd_throughput_opdtp_topk128: "grid" "opd-throughput/opdtp-topk128";
    opd_throughput_opdtp_gen512: "grid" "opd-throughput/opdtp-gen512";
    opd_throughput_opdtp_n4: "grid" "opd-throughput/opdtp-n4";
    opd_throughput_opdtp_student_gmu085: "grid" "opd-throughput/opdtp-student-gmu085";
    opd_throughput_opdtp_teacher8b: "grid" "opd-throughput/opdtp-teacher8b";
    opd_throughput_opdtp_fp8: "grid" "opd-throughput/opdtp-fp8";
    opd_throughput_opdtp_chunk32: "grid" "opd-throughput/opdtp-chunk32";
    opd_throughput_opdtp_combo_fast: "grid" "opd-throughput/opdtp-combo_fast";
    opd_throughput_opdtp_combo_balanced: "grid" "opd-throughput/opdtp-combo_balanced";
}

#[test]
fn every_preset_and_cell_has_its_dry_run_test() {
    let targets = all_targets();
    assert_eq!(
        targets.len(),
        6 + 20 + 18 + 15 + 13,
        "6 presets; 20, 18, 15 and 13 cells (gsm8k-accuracy, gsm8k-throughput, opd-speed-convergence, \
         opd-throughput)"
    );
    let tested: Vec<(String, Vec<String>)> = TESTED
        .iter()
        .map(|(command, target)| {
            (
                target.to_string(),
                vec![command.to_string(), target.to_string()],
            )
        })
        .collect();
    assert_eq!(
        tested, targets,
        "add a line to dry_run_tests! for each new preset or cell"
    );
}

#[test]
fn help_texts() {
    for sub in ["", "launch", "grid", "render", "show", "list"] {
        let mut cmd = rlctl();
        if !sub.is_empty() {
            cmd.arg(sub);
        }
        let output = ok(cmd.arg("--help").env("COLUMNS", "100"));
        let name = if sub.is_empty() {
            "help".to_owned()
        } else {
            format!("help_{sub}")
        };
        insta::assert_snapshot!(name, stdout(&output));
    }
}

#[test]
fn list_names_every_preset_grid_and_cell() {
    let output = ok(rlctl().arg("list"));
    insta::assert_snapshot!("list", stdout(&output));
}

#[test]
fn show_prints_the_resolved_plan_as_toml() {
    let output = ok(rlctl().args(["show", "tbs128", "--", "trainer.epochs=2"]));
    let text = stdout(&output);
    let plan: toml::Table = toml::from_str(&text).unwrap();
    let knobs = plan["knobs"].as_table().unwrap();
    // Typed as hydra types them, the command line's too.
    assert_eq!(knobs["trainer.train_batch_size"].as_integer(), Some(128));
    assert_eq!(knobs["trainer.epochs"].as_integer(), Some(2));
    assert_eq!(
        knobs["trainer.placement.colocate_all"].as_bool(),
        Some(true)
    );
    assert_eq!(
        knobs["trainer.policy.optimizer_config.lr"].as_float(),
        Some(1e-6)
    );
    // Each knob says which layer set it.
    for (key, layer) in [
        (
            "trainer.policy.optimizer_config.lr",
            "# preset gsm8k-canary",
        ),
        (
            "trainer.placement.policy_num_gpus_per_node",
            "# profile leonardo",
        ),
        ("trainer.train_batch_size", "# cell gsm8k-throughput/tbs128"),
        ("trainer.epochs", "# command line"),
        ("trainer.ckpt_path", "# set by rlctl"),
    ] {
        let line = (text.lines())
            .find(|l| l.starts_with(&format!("\"{key}\" = ")))
            .unwrap_or_else(|| panic!("no {key} in\n{text}"));
        assert!(line.ends_with(&format!("  {layer}")), "{line}");
    }
    assert_eq!(
        plan["job"]["name"].as_str(),
        Some("gsm8k-throughput.tbs128")
    );
    insta::assert_snapshot!("show_tbs128", text);
}

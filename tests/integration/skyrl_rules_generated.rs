//! The `[skyrl-rules]` check on generated plans, proved against both flavours' real
//! `validate_cfg`: 1,000 seeded combinations per flavour of the keys validate_cfg reads (batch
//! sizes, mini and micro batches, samples per prompt, placement and colocation, engines and
//! their parallelism, strategy and Megatron's parallel sizes, sequence parallel, ref and critic,
//! estimators, losses, reductions, LoRA, async engine, backend, logprobs, logger, prompt
//! lengths). The hand-written corpora (skyrl_rules.rs, skyrl_rules_upstream.rs) run the binary
//! and quote each rule; these cases, too many for a process each, go through the library's own
//! `skyrl_rules::check`, the function `rlctl check` calls, and the oracles get them all in one
//! Python process (tests/skyrl_oracle.py, tests/skyrl_upstream_rules_oracle.py: what they stub is
//! in their docstrings).
//!
//! The plans run on 8 nodes of 4 GPUs, so that no generated placement (at most 8 GPUs a model)
//! exceeds the job: what fails only after validate_cfg (Ray placing the groups) stays out, and
//! both verdicts judge validate_cfg's rules alone. On MarinSkyRL the cases keep off what
//! a559688 judges otherwise than skyrl-train 0.3.1, the oracle (see skyrl_rules.rs's header):
//! context parallel and decode context parallel, LoRA under Megatron, `rloo_n*`, the global loss
//! reduction, and a ref model with a train batch below 8 prompts (the lcm rule compares prompts
//! on a559688, samples on 0.3.1).

use crate::common::Sandbox;
use crate::skyrl_rules::{Verdict, oracle_verdicts, verdict_word};
use crate::upstream::upstream_sandbox;
use rlctl::check::skyrl_rules::{Values, check};
use rlctl::plan::{Plan, PlanOptions};
use rlctl::preset::cluster::Cluster;
use rlctl::preset::{Library, Want};
use rlctl::schema::Schema;
use rlctl::schema::flavour::Flavour;

/// Cases per flavour; the seed makes them the same on every run.
const CASES: usize = 1000;
const SEED: u64 = 0x5eed_0036;

/// splitmix64: a small, seeded, portable generator (no dependency, same cases everywhere).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[(self.next() % items.len() as u64) as usize]
    }

    /// True with probability `percent` in 100.
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// The keys each flavour spells its own way (upstream moved the engine's under
/// `generator.inference_engine.`).
fn engine_key(upstream: bool, key: &str) -> String {
    if upstream {
        return format!("generator.inference_engine.{key}");
    }
    match key {
        "num_engines" => "generator.num_inference_engines".to_owned(),
        "tensor_parallel_size" => "generator.inference_engine_tensor_parallel_size".to_owned(),
        other => format!("generator.{other}"),
    }
}

/// One generated case: the overrides on top of the canary, in the flavour's names.
fn generate(rng: &mut Rng, upstream: bool) -> Vec<String> {
    let mut o: Vec<String> = Vec::new();
    let mut set = |key: &str, value: String| o.push(format!("{key}={value}"));
    let strategy = rng.pick(&["fsdp", "fsdp2", "fsdp2", "megatron"]);
    set("trainer.strategy", strategy.into());
    let megatron = strategy == "megatron";
    let colocate_all = rng.chance(60);
    set("trainer.placement.colocate_all", colocate_all.to_string());
    let (nodes, gpus) = (rng.pick(&[1, 1, 2]), rng.pick(&[1, 2, 4]));
    set("trainer.placement.policy_num_nodes", nodes.to_string());
    set(
        "trainer.placement.policy_num_gpus_per_node",
        gpus.to_string(),
    );
    let tp = rng.pick(&[1, 2]);
    let engines = if colocate_all && rng.chance(90) {
        (nodes * gpus / tp).max(1)
    } else {
        rng.pick(&[1, 2, 4])
    };
    set(&engine_key(upstream, "num_engines"), engines.to_string());
    set(
        &engine_key(upstream, "tensor_parallel_size"),
        tp.to_string(),
    );
    if megatron {
        for (key, values) in [
            ("tensor_model_parallel_size", &[1, 1, 2, 4][..]),
            ("pipeline_model_parallel_size", &[1, 1, 1, 2]),
            ("context_parallel_size", &[1, 1, 1, 2]),
        ] {
            set(
                &format!("trainer.policy.megatron_config.{key}"),
                rng.pick(values).to_string(),
            );
        }
    } else {
        let sp = rng.pick(&[1, 1, 1, 1, 2, 4]);
        set("trainer.policy.sequence_parallel_size", sp.to_string());
    }
    let kl = rng.chance(30);
    set("trainer.algorithm.use_kl_loss", kl.to_string());
    if rng.chance(10) {
        set("trainer.algorithm.use_kl_in_reward", "true".into());
    }
    let (ref_nodes, ref_gpus) = if rng.chance(75) {
        (nodes, gpus)
    } else {
        (rng.pick(&[1, 2]), rng.pick(&[1, 2, 4]))
    };
    set("trainer.placement.ref_num_nodes", ref_nodes.to_string());
    set(
        "trainer.placement.ref_num_gpus_per_node",
        ref_gpus.to_string(),
    );
    if rng.chance(30) {
        set("trainer.placement.colocate_policy_ref", "false".into());
    }
    if megatron && rng.chance(40) {
        let ref_tp = rng.pick(&[1, 2, 4]);
        set(
            "trainer.ref.megatron_config.tensor_model_parallel_size",
            ref_tp.to_string(),
        );
    } else if rng.chance(25) {
        set(
            "trainer.ref.sequence_parallel_size",
            rng.pick(&[1, 2]).to_string(),
        );
    }
    // MarinSkyRL: train batches of 8 prompts and more, where a559688's lcm rule (prompts) and
    // 0.3.1's (samples) agree: no model here has more than 8 data-parallel workers.
    let trains: &[i64] = if !upstream {
        &[8, 16, 24, 32, 48, 64, 96, 128]
    } else {
        &[1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128]
    };
    let train = rng.pick(trains);
    set("trainer.train_batch_size", train.to_string());
    let mini = if rng.chance(40) {
        train
    } else {
        rng.pick(&[1, 2, 4, 8, 16, 32, 64])
    };
    set("trainer.policy_mini_batch_size", mini.to_string());
    set(
        "trainer.micro_train_batch_size_per_gpu",
        rng.pick(&[1, 1, 1, 2, 2, 3, 4, 8, 16]).to_string(),
    );
    let forward = if rng.chance(3) {
        0
    } else {
        rng.pick(&[1, 4, 8, 16])
    };
    set(
        "trainer.micro_forward_batch_size_per_gpu",
        forward.to_string(),
    );
    set(
        "generator.n_samples_per_prompt",
        rng.pick(&[1, 2, 3, 4, 4, 4, 5, 8, 8, 16]).to_string(),
    );
    if !megatron && rng.chance(20) {
        // The critic on the policy's GPUs: another count is refused only when Ray places it.
        set(
            "trainer.critic.model.path",
            "Qwen/Qwen2.5-1.5B-Instruct".into(),
        );
        set(
            "trainer.critic_mini_batch_size",
            rng.pick(&[1, 4, 16, 32, 64]).to_string(),
        );
        set("trainer.placement.critic_num_nodes", nodes.to_string());
        set(
            "trainer.placement.critic_num_gpus_per_node",
            gpus.to_string(),
        );
        if rng.chance(30) {
            set(
                "trainer.critic.sequence_parallel_size",
                rng.pick(&[1, 2]).to_string(),
            );
        }
    }
    algorithm(rng, upstream, megatron, &mut o);
    generator(rng, upstream, &mut o);
    o
}

/// The algorithm's names (some misspelt), LoRA, the logger and checkpoints.
fn algorithm(rng: &mut Rng, upstream: bool, megatron: bool, o: &mut Vec<String>) {
    let mut set = |key: &str, value: &str| o.push(format!("{key}={value}"));
    if rng.chance(30) {
        let mut names = vec!["grpo", "grpo", "gae", "rloo", "reinforce++", "grpoo"];
        if upstream {
            names.push("maxrl");
        }
        set("trainer.algorithm.advantage_estimator", rng.pick(&names));
    }
    if rng.chance(30) {
        let mut names = vec![
            "regular",
            "dual_clip",
            "gspo",
            "cispo",
            "clip_cov",
            "kl_cov",
            "sapo",
            "regullar",
        ];
        if upstream {
            names.extend(["cross_entropy", "importance_sampling", "dppo", "rollout_is"]);
        }
        set("trainer.algorithm.policy_loss_type", rng.pick(&names));
    }
    if rng.chance(25) {
        let mut names = vec![
            "token_mean",
            "sequence_mean",
            "seq_mean_token_sum_norm",
            "mean",
        ];
        if upstream {
            names.extend(["token_mean_legacy", "prompt_mean"]);
        }
        set("trainer.algorithm.loss_reduction", rng.pick(&names));
    }
    // LoRA under Megatron: a559688 refuses it, 0.3.1 allows it.
    if (upstream || !megatron) && rng.chance(15) {
        set(
            "trainer.policy.model.lora.rank",
            rng.pick(&["0", "8", "32"]),
        );
    }
    if rng.chance(5) {
        set(
            "trainer.logger",
            rng.pick(&["console", "tensorboard", "wandb"]),
        );
    }
    if rng.chance(5) {
        set("trainer.max_ckpts_to_keep", rng.pick(&["-1", "0", "2"]));
    }
}

/// The generator and its engines.
fn generator(rng: &mut Rng, upstream: bool, o: &mut Vec<String>) {
    let mut set = |key: &str, value: &str| o.push(format!("{key}={value}"));
    if rng.chance(10) {
        set(&engine_key(upstream, "backend"), "sglang");
    }
    if rng.chance(15) {
        let mut names = vec!["nccl", "gloo"];
        if upstream {
            names.push("delta");
        }
        set(
            &engine_key(upstream, "weight_sync_backend"),
            rng.pick(&names),
        );
    }
    // Upstream refuses `async_engine=false` when it parses the command line.
    if !upstream && rng.chance(10) {
        set("generator.async_engine", "false");
        set("generator.batched", rng.pick(&["true", "false"]));
    }
    if rng.chance(15) {
        set(
            "generator.sampling_params.logprobs",
            rng.pick(&["null", "0", "1"]),
        );
    }
    if rng.chance(15) {
        set("generator.max_turns", rng.pick(&["1", "3"]));
        set(
            "generator.max_input_length",
            rng.pick(&["256", "512", "1024"]),
        );
    }
}

/// The sandbox's library, profile and trainer schema, read once for all the cases.
struct Site<'a> {
    selection: rlctl::preset::Selection<'a>,
    cluster: Cluster,
    schema: std::rc::Rc<Schema>,
}

impl<'a> Site<'a> {
    fn new(library: &'a Library) -> Site<'a> {
        let cluster = library.cluster("test").unwrap();
        Site {
            selection: library.select("gsm8k-canary", Want::Target).unwrap(),
            schema: library.trainer_schema(&cluster).unwrap(),
            cluster,
        }
    }

    /// The plan of a case: the canary with the overrides, on 8 nodes.
    fn plan(&self, overrides: &[String]) -> Plan {
        let knobs = rlctl::plan::overrides::parse(overrides).unwrap_or_else(|e| panic!("{e}"));
        let options = PlanOptions {
            nodes: Some(8),
            ..PlanOptions::default()
        };
        Plan::resolve(
            &self.selection,
            &self.cluster,
            &self.schema,
            &options,
            &knobs,
        )
        .unwrap_or_else(|e| panic!("{}: {e}", overrides.join(" ")))
    }
}

/// rlctl's verdict, by the function `rlctl check` calls.
fn rlctl_verdict(site: &Site, plan: &Plan) -> Verdict {
    let values = Values {
        plan,
        schema: &site.schema,
        hf_cache: &site.cluster.storage.hf_home,
    };
    let problems = check(&values);
    Verdict {
        ok: problems.is_empty(),
        why: problems.join("\n  "),
    }
}

/// What the oracle of the flavour reads: hydra overrides and the entrypoint, or upstream's argv.
fn oracle_case(name: &str, plan: &Plan) -> serde_json::Value {
    match plan.flavour {
        Flavour::Marin => {
            let overrides: Vec<String> = (plan.knobs.iter())
                .map(|k| format!("{}={}", k.path(), k.value.hydra_text()))
                .collect();
            serde_json::json!({"name": name, "entrypoint": plan.entrypoint, "overrides": overrides})
        }
        Flavour::Upstream => {
            let argv: Vec<String> = (plan.trainer_overrides())
                .map(|k| plan.trainer_arg(k))
                .collect();
            serde_json::json!({"name": name, "argv": argv})
        }
    }
}

/// Generates the cases, asks both sides, and fails with every disagreement.
fn agree(sandbox: &Sandbox, upstream: bool, oracle: &str, setup: &str, before: &str) {
    let library = Library::load(Some(sandbox.presets().to_str().unwrap().into())).unwrap();
    let site = Site::new(&library);
    let mut rng = Rng(SEED ^ u64::from(upstream));
    let cases: Vec<Vec<String>> = (0..CASES).map(|_| generate(&mut rng, upstream)).collect();
    let plans: Vec<Plan> = cases.iter().map(|c| site.plan(c)).collect();
    let flavour = if upstream {
        Flavour::Upstream
    } else {
        Flavour::Marin
    };
    assert!(plans.iter().all(|p| p.flavour == flavour));
    let asked: Vec<serde_json::Value> = (plans.iter().enumerate())
        .map(|(i, p)| oracle_case(&format!("case-{i}"), p))
        .collect();
    let theirs = oracle_verdicts(oracle, setup, &asked, before);
    let mut disagreements = Vec::new();
    let mut refused = 0;
    for (i, (plan, theirs)) in plans.iter().zip(&theirs).enumerate() {
        let mine = rlctl_verdict(&site, plan);
        refused += usize::from(!theirs.ok);
        if mine.ok != theirs.ok {
            disagreements.push(format!(
                "case-{i} (gsm8k-canary --nodes 8 -- {}): validate_cfg {} it ({}); rlctl {} it:\n  {}",
                cases[i].join(" "),
                verdict_word(theirs.ok),
                theirs.why,
                verdict_word(mine.ok),
                mine.why
            ));
        }
    }
    eprintln!(
        "{} of {CASES} generated cases agree; validate_cfg refuses {refused}",
        CASES - disagreements.len()
    );
    assert!(
        disagreements.is_empty(),
        "{} of {CASES} generated cases disagree:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
    // Both verdicts well represented, or the generator proves little.
    assert!(
        refused >= CASES / 5 && CASES - refused >= CASES / 5,
        "validate_cfg refuses {refused} of {CASES}"
    );
}

#[test]
fn generated_plans_agree_with_skyrl_train_validate_cfg() {
    agree(
        &Sandbox::new(),
        false,
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/skyrl_oracle.py"),
        "run `bash tests/setup.sh` (it installs hydra-core, omegaconf and skyrl-train==0.3.1 from PyPI)",
        "compose",
    );
}

#[test]
fn generated_plans_agree_with_upstream_skyrl_validate_cfg() {
    agree(
        &upstream_sandbox(),
        true,
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/skyrl_upstream_rules_oracle.py"
        ),
        "run `bash tests/setup.sh` (it installs the skyrl 0.4.0 wheel and what its config imports)",
        "parse",
    );
}

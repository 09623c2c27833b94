//! Where the models and engines go: validate_cfg's colocation rules, build_models' colocated
//! critic, and whether Ray can place every GPU the run asks for (policy, ref, critic, engines
//! and the on-policy-distillation teacher) in the job's nodes. Ray does not refuse a plan that
//! does not fit: it waits for GPUs that never come.

use super::Values;

pub fn check(v: &Values, problems: &mut Vec<String>) {
    let Some(policy) = Gpus::of(v, "policy") else {
        return;
    };
    let Some(engines) = Engines::of(v) else {
        return;
    };
    if v.truthy("trainer.placement.colocate_all") {
        colocated(v, &policy, &engines, problems);
    } else {
        disaggregated(v, &policy, &engines, problems);
    }
}

/// A model's GPUs: nodes x GPUs per node.
struct Gpus {
    nodes: i64,
    per_node: i64,
}

impl Gpus {
    fn of(v: &Values, role: &str) -> Option<Gpus> {
        Some(Gpus {
            nodes: v.int(&format!("trainer.placement.{role}_num_nodes"))?,
            per_node: v.int(&format!("trainer.placement.{role}_num_gpus_per_node"))?,
        })
    }

    fn total(&self) -> i64 {
        self.nodes * self.per_node
    }
}

/// The inference engines' GPUs: engines x (tensor x pipeline x data parallel), none for remote
/// engines.
struct Engines {
    count: i64,
    tp: i64,
    pp: i64,
    dp: i64,
    local: bool,
}

impl Engines {
    fn of(v: &Values) -> Option<Engines> {
        Some(Engines {
            count: v.int("generator.num_inference_engines")?,
            tp: v.int("generator.inference_engine_tensor_parallel_size")?,
            pp: v.int("generator.inference_engine_pipeline_parallel_size")?,
            dp: v.int("generator.inference_engine_data_parallel_size")?,
            local: v.truthy("generator.run_engines_locally"),
        })
    }

    fn per_engine(&self) -> i64 {
        self.tp * self.pp * self.dp
    }

    fn total(&self) -> i64 {
        self.count * self.per_engine()
    }
}

/// The vLLM teacher's GPUs in its own placement group: engines x tensor x pipeline parallel
/// (MarinSkyRL gives it no data parallel), zero without a teacher.
struct Teacher {
    count: i64,
    tp: i64,
    pp: i64,
}

impl Teacher {
    fn of(v: &Values) -> Teacher {
        let engines = v.int("teacher.num_inference_engines");
        let tp = v.int("teacher.inference_engine_tensor_parallel_size");
        let pp = v.int("teacher.inference_engine_pipeline_parallel_size");
        match (v.uses_teacher(), engines, tp, pp) {
            (true, Some(count), Some(tp), Some(pp)) => Teacher { count, tp, pp },
            _ => Teacher {
                count: 0,
                tp: 0,
                pp: 0,
            },
        }
    }

    fn per_engine(&self) -> i64 {
        self.tp * self.pp
    }

    fn total(&self) -> i64 {
        self.count * self.per_engine()
    }
}

fn job_gpus(v: &Values) -> (i64, i64, i64) {
    let (per_node, nodes) = (
        i64::from(v.plan.job.gpus_per_node),
        i64::from(v.plan.job.nodes),
    );
    (per_node * nodes, nodes, per_node)
}

/// The nodes that hold `gpus` GPUs.
fn nodes_for(gpus: i64, per_node: i64) -> i64 {
    if per_node <= 0 {
        return 1;
    }
    (gpus + per_node - 1) / per_node
}

/// Everything on the policy's GPUs: the engines must cover them exactly, the critic must match
/// them, and the teacher comes on top.
fn colocated(v: &Values, policy: &Gpus, engines: &Engines, problems: &mut Vec<String>) {
    let policy_gpus = policy.total();
    let engine_gpus = engines.total();
    if policy_gpus != engine_gpus {
        let per_engine = engines.per_engine();
        let fit = if per_engine > 0 && policy_gpus % per_engine == 0 {
            format!(
                ": set `generator.num_inference_engines={}`",
                policy_gpus / per_engine
            )
        } else {
            String::new()
        };
        problems.push(format!(
            "with `trainer.placement.colocate_all=true` the policy's {policy_gpus} GPUs ({} node(s) x {}) must \
             equal the engines' `generator.num_inference_engines` x `generator.inference_engine_tensor_parallel_size` \
             x `generator.inference_engine_pipeline_parallel_size` x `generator.inference_engine_data_parallel_size` \
             = {} x {} x {} x {} = {engine_gpus}{fit}",
            policy.nodes, policy.per_node, engines.count, engines.tp, engines.pp, engines.dp
        ));
        return;
    }
    if v.uses_critic()
        && let Some(critic) = Gpus::of(v, "critic")
        && critic.total() != policy_gpus
    {
        problems.push(format!(
            "with `trainer.placement.colocate_all=true` the critic shares the policy's {policy_gpus} GPUs, but it \
             asks for {} ({} node(s) x {}): set `trainer.placement.critic_num_nodes={}` and \
             `trainer.placement.critic_num_gpus_per_node={}`",
            critic.total(),
            critic.nodes,
            critic.per_node,
            policy.nodes,
            policy.per_node
        ));
    }
    let teacher = Teacher::of(v);
    let needed = engine_gpus + teacher.total();
    let (total, nodes, per_node) = job_gpus(v);
    if needed <= total {
        return;
    }
    let shared = format!(
        "with `trainer.placement.colocate_all=true` the policy and its inference engines share {engine_gpus} GPUs"
    );
    let (need, fix) = if teacher.total() > 0 {
        (
            format!(
                "{shared} and the teacher's `teacher.num_inference_engines` x \
                 `teacher.inference_engine_tensor_parallel_size` x `teacher.inference_engine_pipeline_parallel_size` \
                 = {} x {} x {} = {} GPUs come on top (its own placement group): {needed} GPUs",
                teacher.count,
                teacher.tp,
                teacher.pp,
                teacher.total()
            ),
            "or give the teacher fewer GPUs",
        )
    } else {
        (shared, "or lower `trainer.placement.policy_num_nodes`")
    };
    problems.push(format!(
        "{need}, but the job has {total} ({nodes} node(s) x {per_node}): Ray would wait for them forever; use \
         --nodes {}, {fix}",
        nodes_for(needed, per_node),
    ));
}

/// Each model in its own placement group (policy and ref in one when colocated).
fn disaggregated(v: &Values, policy: &Gpus, engines: &Engines, problems: &mut Vec<String>) {
    let colocate_ref = v.truthy("trainer.placement.colocate_policy_ref");
    let mut ref_gpus = 0;
    if v.uses_ref()
        && let Some(reference) = Gpus::of(v, "ref")
    {
        if colocate_ref {
            for (what, p, r) in [
                ("num_nodes", policy.nodes, reference.nodes),
                ("num_gpus_per_node", policy.per_node, reference.per_node),
            ] {
                if p != r {
                    problems.push(format!(
                        "with `trainer.placement.colocate_policy_ref=true` the ref model shares the policy's GPUs, but \
                         `trainer.placement.ref_{what}={r}` is not `trainer.placement.policy_{what}={p}`: set \
                         `trainer.placement.ref_{what}={p}`, or `trainer.placement.colocate_policy_ref=false`"
                    ));
                }
            }
        } else {
            ref_gpus = reference.total();
        }
    }
    let critic_gpus = match Gpus::of(v, "critic") {
        Some(critic) if v.uses_critic() => critic.total(),
        _ => 0,
    };
    let engine_gpus = if engines.local { engines.total() } else { 0 };
    let teacher = Teacher::of(v);
    let mut parts = vec![
        format!("the policy ({} GPUs)", policy.total()),
        format!("ref ({ref_gpus})"),
    ];
    if critic_gpus > 0 {
        parts.push(format!("critic ({critic_gpus})"));
    }
    parts.push(if engines.local {
        format!(
            "inference engines ({} x {} = {engine_gpus})",
            engines.count,
            engines.per_engine()
        )
    } else {
        "inference engines (remote, 0)".to_owned()
    });
    if teacher.total() > 0 {
        parts.push(format!(
            "the teacher ({} x {} = {})",
            teacher.count,
            teacher.per_engine(),
            teacher.total()
        ));
    }
    let needed = policy.total() + ref_gpus + critic_gpus + engine_gpus + teacher.total();
    let (total, _, per_node) = job_gpus(v);
    if needed > total {
        let last = parts.pop().unwrap_or_default();
        problems.push(format!(
            "without colocation {} and {last} need {needed} GPUs, but the job has {total}: Ray would wait for them \
             forever; lower `generator.num_inference_engines` or the placement's GPUs{}",
            parts.join(", "),
            if teacher.total() > 0 {
                format!(", or use --nodes {}", nodes_for(needed, per_node))
            } else {
                String::new()
            }
        ));
    }
}

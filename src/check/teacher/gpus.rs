//! `teacher-gpus`: the teacher's engines find GPUs on the job's nodes. MarinSkyRL creates them
//! last, after the student's placement groups, each engine of more than one GPU in a
//! `STRICT_PACK` placement group of its own (one node; `ray_wrapped_inference_engine.py`, the
//! cross-node tensor-parallel fix). Ray does not refuse a group that cannot be placed: it waits
//! `SKYRL_RAY_PG_TIMEOUT_IN_S` (180 s) after the queue and fails. The total count (student and
//! teacher against nodes x GPUs) is the `skyrl-rules` placement rule's; this is what the count
//! misses: the GPUs an engine needs on one node.

use crate::check::skyrl_rules::Values;

/// The teacher's engines, each of `per_engine` GPUs.
struct Engines {
    count: i64,
    tp: i64,
    pp: i64,
}

impl Engines {
    fn per_engine(&self) -> i64 {
        self.tp * self.pp
    }
}

/// The GPUs the student's side takes before the teacher: with colocation the policy's (its
/// engines, ref and critic on the same GPUs); without it each model's and the local engines'.
fn student_gpus(v: &Values) -> Option<(i64, String)> {
    let gpus = |role: &str| -> Option<i64> {
        Some(
            v.int(&format!("trainer.placement.{role}_num_nodes"))?
                * v.int(&format!("trainer.placement.{role}_num_gpus_per_node"))?,
        )
    };
    let engines = v.int("generator.num_inference_engines")?
        * v.int("generator.inference_engine_tensor_parallel_size")?
        * v.int("generator.inference_engine_pipeline_parallel_size")?
        * v.int("generator.inference_engine_data_parallel_size")?;
    if v.truthy("trainer.placement.colocate_all") {
        return Some((
            engines,
            format!("the student's policy and its {engines} engine GPUs, colocated"),
        ));
    }
    let mut total = gpus("policy")?;
    let mut parts = vec![format!("policy {total}")];
    if v.uses_ref() && !v.truthy("trainer.placement.colocate_policy_ref") {
        let r = gpus("ref")?;
        total += r;
        parts.push(format!("ref {r}"));
    }
    if v.uses_critic() {
        let c = gpus("critic")?;
        total += c;
        parts.push(format!("critic {c}"));
    }
    if v.truthy("generator.run_engines_locally") {
        total += engines;
        parts.push(format!("engines {engines}"));
    }
    Some((total, format!("the student's {}", parts.join(" + "))))
}

/// The problem of teacher engines that no node can hold, with the figures and the fix.
pub fn check(v: &Values) -> Option<String> {
    if !v.uses_teacher() {
        return None;
    }
    let teacher = Engines {
        count: v.int("teacher.num_inference_engines")?,
        tp: v.int("teacher.inference_engine_tensor_parallel_size")?,
        pp: v.int("teacher.inference_engine_pipeline_parallel_size")?,
    };
    let per_engine = teacher.per_engine();
    let (nodes, per_node) = (
        i64::from(v.plan.job.nodes),
        i64::from(v.plan.job.gpus_per_node),
    );
    let (student, said) = student_gpus(v)?;
    // Over the job's total, the placement rule says it (with --nodes); one engine of one GPU
    // is placed anywhere a GPU is free.
    if teacher.count <= 0
        || per_engine <= 1
        || per_node <= 0
        || student + teacher.count * per_engine > nodes * per_node
    {
        return None;
    }
    let layout = format!(
        "the teacher's `teacher.num_inference_engines` x `teacher.inference_engine_tensor_parallel_size` x \
         `teacher.inference_engine_pipeline_parallel_size` = {} x {} x {}, each engine's {per_engine} GPUs on \
         one node (a STRICT_PACK placement group)",
        teacher.count, teacher.tp, teacher.pp
    );
    if per_engine > per_node {
        let tp = per_node / teacher.pp.max(1);
        return Some(format!(
            "{layout}, but the job's nodes have {per_node} GPUs each: Ray waits 180 s after the queue and fails \
             (`Failed to create placement group`); set `teacher.inference_engine_tensor_parallel_size={tp}` or \
             lower"
        ));
    }
    let mut free: Vec<i64> = (0..nodes)
        .map(|i| per_node - (student - i * per_node).clamp(0, per_node))
        .collect();
    let before = free.clone();
    let mut placed = 0;
    for _ in 0..teacher.count {
        match free.iter_mut().find(|f| **f >= per_engine) {
            Some(f) => {
                *f -= per_engine;
                placed += 1;
            }
            None => break,
        }
    }
    if placed == teacher.count {
        return None;
    }
    let per_node_engines = per_node / per_engine;
    let more = (teacher.count - placed + per_node_engines - 1) / per_node_engines;
    let free_text: Vec<String> = before.iter().map(i64::to_string).collect();
    Some(format!(
        "{layout}: {said} take {student} of the job's {nodes} node(s) x {per_node} GPUs, leaving at best {} free \
         per node, where only {placed} of the {} teacher engines fit: Ray waits 180 s after the queue and fails \
         (`Failed to create placement group`); use --nodes {}, or fewer or smaller teacher engines",
        free_text.join(", "),
        teacher.count,
        nodes + more
    ))
}

//! The `qos` check: the job's time and nodes within its QOS, or the QOS that would take it.

use crate::plan::Plan;
use crate::preset::cluster::Cluster;

/// The job over its QOS's wall time or node count, naming a QOS that takes it or what to cut.
pub fn check(cluster: &Cluster, plan: &Plan) -> Vec<String> {
    let Ok(qos) = cluster.qos(&plan.job.qos) else {
        return vec![]; // resolving the plan already refused an unknown QOS
    };
    let (time, nodes) = (plan.job.time, plan.job.nodes);
    if time <= qos.max_wall && nodes <= qos.max_nodes {
        return vec![];
    }
    let fits = cluster
        .qos
        .iter()
        .find(|q| time <= q.max_wall && nodes <= q.max_nodes)
        .map(|q| {
            format!(
                "use --qos {} (up to {}, {} nodes)",
                q.name, q.max_wall, q.max_nodes
            )
        })
        .unwrap_or_else(|| {
            let widest = cluster.qos.iter().map(|q| q.max_nodes).max().unwrap_or(0);
            let longest = cluster.qos.iter().map(|q| q.max_wall).max();
            let mut fixes = Vec::new();
            if nodes > widest {
                fixes.push(format!("use at most --nodes {widest}"));
            }
            if longest.is_some_and(|l| time > l) {
                fixes.push("shorten --time and chain jobs (--chain K)".to_owned());
            }
            if fixes.is_empty() {
                fixes.push("shorten --time or use fewer --nodes".to_owned());
            }
            format!("no QOS of this cluster allows it: {}", fixes.join(" and "))
        });
    let mut over = Vec::new();
    if time > qos.max_wall {
        over.push(format!("--time {time} is over its {} limit", qos.max_wall));
    }
    if nodes > qos.max_nodes {
        over.push(format!(
            "--nodes {nodes} is over its {}-node limit",
            qos.max_nodes
        ));
    }
    vec![format!("QOS {}: {}; {fits}", qos.name, over.join(" and "))]
}

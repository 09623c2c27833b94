//! The environment a job runs in: offline, quiet, caches on writable storage, and for several
//! nodes the interconnect pinned.

use crate::error::{Error, Result};
use crate::plan::WandbPlan;
use crate::preset::cluster::Cluster;
use crate::preset::network::IPV4_ONLY;
use crate::schema::Schema;
use crate::schema::knob::{Knob, Scalar};
use crate::schema::list_items;
use crate::schema::resolve::Resolver;
use camino::Utf8Path;

/// Variables that broke jobs when inherited from the login shell; sbatch.sh unsets them.
pub const LEAKY_VARS: [&str; 5] = [
    "RAY_ADDRESS",
    "RAY_TMPDIR",
    "TMPDIR",
    "PYTHONHOME",
    "VIRTUAL_ENV",
];

/// Variables passed into the container with `--env`, in order; the profile's `[env]` last.
pub fn container_env(
    cluster: &Cluster,
    trainer_dir: &Utf8Path,
    venv_python: &Utf8Path,
    nodes: u32,
    wandb: Option<&WandbPlan>,
) -> Result<Vec<(String, String)>> {
    let storage = &cluster.storage;
    let gcc_bin = &cluster.software.gcc_bin;
    let hf_home = storage.hf_home.to_string();
    let cache = |name: &str| storage.cache_root.join(name).to_string();
    let mut env: Vec<(String, String)> = [
        ("HF_HUB_OFFLINE", "1".to_owned()),
        ("TRANSFORMERS_OFFLINE", "1".to_owned()),
        ("WANDB_MODE", "offline".to_owned()),
        ("HF_HOME", hf_home.clone()),
        ("HF_HUB_CACHE", hf_home),
        ("RAY_USAGE_STATS_ENABLED", "0".to_owned()),
        ("VLLM_NO_USAGE_STATS", "1".to_owned()),
        ("DO_NOT_TRACK", "1".to_owned()),
        ("VLLM_CACHE_ROOT", cache("vllm")),
        ("TRITON_CACHE_DIR", cache("triton")),
        ("FLASHINFER_WORKSPACE_BASE", cache("flashinfer")),
        ("XDG_CACHE_HOME", cache("xdg")),
        ("CC", gcc_bin.join("gcc").to_string()),
        ("CXX", gcc_bin.join("g++").to_string()),
        // Ray workers on other nodes import the trainer too; they do not start in its folder.
        ("PYTHONPATH", trainer_dir.to_string()),
        ("VENV_PY", venv_python.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    if let Some(wandb) = wandb {
        // One W&B run across requeues: the job passes WANDB_RUN_ID, which it reads from the
        // checkpoint folder at each start; these two say to continue it and where it is kept.
        env.push(("WANDB_RESUME".to_owned(), "allow".to_owned()));
        env.push(("WANDB_DIR".to_owned(), wandb.dir.to_string()));
    }
    if nodes > 1 {
        // Only the interconnect routes between nodes (ib0 on Leonardo, not the eno* NICs).
        for key in ["NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME"] {
            env.push((key.to_owned(), cluster.node.interconnect.clone()));
        }
    }
    if cluster.network.force_ipv4 {
        for (key, value) in IPV4_ONLY {
            env.push((key.to_owned(), value.to_owned()));
        }
    }
    for (key, value) in &cluster.env {
        env.retain(|(k, _)| k != key);
        env.push((key.clone(), value.clone()));
    }
    for (key, value) in &env {
        if value.contains([',', '\n']) {
            return Err(Error::Unsupported(format!(
                "{key}={value}: singularity's --env cannot carry commas or newlines; choose a path without them"
            )));
        }
    }
    Ok(env)
}

/// Whether the trainer logs to W&B, as SkyRL's `Tracking` reads `trainer.logger`: the one
/// backend `wandb`, or a list holding it. Unset, SkyRL's default (`wandb`) decides.
pub fn logs_to_wandb(knobs: &[Knob], schema: &Schema) -> bool {
    match (Resolver { knobs, schema }).value("trainer.logger") {
        Some(Scalar::Str(backend)) => backend == "wandb",
        Some(Scalar::List(text)) => list_items(&text).iter().any(|b| b == "wandb"),
        _ => false,
    }
}

/// Where HTTP(S) goes when the profile blocks egress: a closed port on loopback.
const CLOSED_PORT: &str = "http://127.0.0.1:9";

/// Variables exported on the node for every process of the job, container or not. With
/// `network.block_egress`, Ray's cloud-metadata and usage probes (made even with
/// --disable-usage-stats) go to a closed loopback port; Ray's own gRPC ignores proxies.
pub fn host_env(cluster: &Cluster) -> Vec<(String, String)> {
    if !cluster.network.block_egress {
        return Vec::new();
    }
    let loopback = "localhost,127.0.0.0/8";
    [
        ("http_proxy", CLOSED_PORT),
        ("https_proxy", CLOSED_PORT),
        ("HTTP_PROXY", CLOSED_PORT),
        ("HTTPS_PROXY", CLOSED_PORT),
        ("no_proxy", loopback),
        ("NO_PROXY", loopback),
        ("RAY_USAGE_STATS_REPORT_URL", "http://127.0.0.1:9/"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect()
}

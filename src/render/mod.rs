//! Renders a plan into the sbatch wrapper and the in-container run script. Every value is
//! shell-quoted here, in Rust; the templates only place words.

use crate::error::{Error, Result};
use crate::plan::Plan;
use crate::plan::env::LEAKY_VARS;
use crate::preset::cluster::{HeadAddress, Runtime};
use crate::preset::template;
use crate::schema::knob::Origin;
use crate::util::quote::sh;
use camino::Utf8PathBuf;
use serde::Serialize;
use std::io::Write;
use std::sync::OnceLock;

#[derive(Debug, Clone)]
pub struct RenderedFile {
    pub path: Utf8PathBuf,
    pub text: String,
}

#[derive(Serialize)]
struct Job {
    name: String,
    account: String,
    partition: String,
    qos: String,
    time: String,
    nodes: u32,
    cpus_per_task: u32,
    gpus_per_node: u32,
    mem: String,
    log: String,
}

#[derive(Serialize)]
struct SbatchContext {
    job: Job,
    target: String,
    cluster: String,
    description: String,
    run_dir: String,
    leaky_vars: String,
    wipe: bool,
    checkpoint_root: String,
    ckpt_path: String,
    export_path: String,
    home: String,
    cache_dirs: Vec<String>,
    runtime: &'static str,
    program: String,
    binds: String,
    pwd: String,
    image: String,
    env: Vec<String>,
    host_env: Vec<String>,
    venv_python: String,
    ray_tmp_root: String,
    ray: Option<RayContext>,
}

#[derive(Serialize)]
struct RayContext {
    head_address: &'static str,
    interface: String,
    timeout_s: u32,
    cpus_per_node: u32,
    gpus_per_node: u32,
}

#[derive(Serialize)]
struct KnobGroup {
    origin: String,
    args: Vec<String>,
}

#[derive(Serialize)]
struct RunContext {
    target: String,
    home: String,
    ray_tmp_root: String,
    gcc_bin: String,
    entrypoint: String,
    groups: Vec<KnobGroup>,
}

/// The two scripts of a plan, in submission order: the sbatch wrapper, then the run script.
pub fn render(plan: &Plan) -> Result<Vec<RenderedFile>> {
    let p = &plan.paths;
    // Job fields go on #SBATCH lines, which sbatch parses itself; the plan allows only
    // characters that need no quoting there.
    let job = Job {
        name: plan.job.name.clone(),
        account: plan.job.account.clone(),
        partition: plan.job.partition.clone(),
        qos: plan.job.qos.clone(),
        time: plan.job.time.to_string(),
        nodes: plan.job.nodes,
        cpus_per_task: plan.job.cpus_per_task,
        gpus_per_node: plan.job.gpus_per_node,
        mem: plan.job.mem.clone(),
        log: plan.job.log.to_string(),
    };
    let binds: Vec<&str> = plan.container.binds.iter().map(|b| b.as_str()).collect();
    let sbatch = SbatchContext {
        job,
        target: plan.target.clone(),
        cluster: plan.cluster.clone(),
        description: one_line(&plan.description),
        run_dir: sh(p.run_dir.as_str()),
        leaky_vars: LEAKY_VARS.join(" "),
        wipe: plan.wipe,
        checkpoint_root: sh(p.checkpoint_root.as_str()),
        ckpt_path: sh(p.ckpt_path.as_str()),
        export_path: sh(p.export_path.as_str()),
        home: sh(p.home.as_str()),
        cache_dirs: p.cache_dirs.iter().map(|d| sh(d.as_str())).collect(),
        runtime: match plan.container.runtime {
            Runtime::Singularity => "singularity",
            Runtime::None => "none",
        },
        program: sh(plan.container.program.as_str()),
        // Quoted even when plain: in an array, a bare comma reads like a mistyped separator.
        binds: sh_always(&binds.join(",")),
        pwd: sh(p.skyrl_train.as_str()),
        image: sh(plan.container.image.as_str()),
        env: assignments(&plan.env),
        host_env: assignments(&plan.host_env),
        venv_python: sh(p.venv_python.as_str()),
        ray_tmp_root: sh(p.ray_tmp_root.as_str()),
        ray: plan.ray.as_ref().map(|r| RayContext {
            head_address: match r.head_address {
                HeadAddress::Interface => "interface",
                HeadAddress::Hostname => "hostname",
            },
            interface: sh(&r.interface),
            timeout_s: r.timeout_s,
            cpus_per_node: r.cpus_per_node,
            gpus_per_node: r.gpus_per_node,
        }),
    };
    let mut groups: Vec<KnobGroup> = Vec::new();
    let mut last: Option<&Origin> = None;
    for knob in &plan.knobs {
        let arg = sh_always(&knob.hydra_arg());
        match groups.last_mut() {
            Some(group) if last == Some(&knob.origin) => group.args.push(arg),
            _ => groups.push(KnobGroup {
                origin: knob.origin.to_string(),
                args: vec![arg],
            }),
        }
        last = Some(&knob.origin);
    }
    let run = RunContext {
        target: plan.target.clone(),
        home: sh(p.home.as_str()),
        ray_tmp_root: sh(p.ray_tmp_root.as_str()),
        gcc_bin: sh(p.gcc_bin.as_str()),
        entrypoint: sh(&plan.entrypoint),
        groups,
    };
    Ok(vec![
        RenderedFile {
            path: p.sbatch_script.clone(),
            text: fill("sbatch.sh", &sbatch)?,
        },
        RenderedFile {
            path: p.run_script.clone(),
            text: fill("run.sh", &run)?,
        },
    ])
}

/// `NAME=value` words, each quoted as one.
fn assignments(vars: &[(String, String)]) -> Vec<String> {
    vars.iter().map(|(k, v)| sh(&format!("{k}={v}"))).collect()
}

/// Overrides are always single-quoted, so the list reads uniformly whatever they hold.
fn sh_always(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Descriptions land in a comment line; a newline there would end the comment.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The embedded templates, compiled once per process: a grid renders them many times.
fn templates() -> Result<&'static tera::Tera> {
    static TERA: OnceLock<Result<tera::Tera, String>> = OnceLock::new();
    TERA.get_or_init(|| {
        let mut tera = tera::Tera::default();
        tera.autoescape_on(vec![]);
        tera.add_raw_templates(TEMPLATES.map(|name| (name, template(&format!("{name}.tera")))))
            .map_err(|e| format!("{e:?}"))?;
        Ok(tera)
    })
    .as_ref()
    .map_err(|message| Error::Template {
        name: "templates/".to_owned(),
        message: message.clone(),
    })
}

const TEMPLATES: [&str; 2] = ["sbatch.sh", "run.sh"];

fn fill(name: &str, context: &impl Serialize) -> Result<String> {
    let failed = |message: String| Error::Template {
        name: name.to_owned(),
        message,
    };
    let context = tera::Context::from_serialize(context).map_err(|e| failed(e.to_string()))?;
    templates()?
        .render(name, &context)
        .map_err(|e| failed(format!("{e:?}")))
}

/// The files for the terminal: each under a `==> path <==` heading.
pub fn print_files(out: &mut dyn Write, files: &[RenderedFile]) -> Result<()> {
    for file in files {
        crate::util::out::emit(out, &format!("\n==> {} <==\n{}", file.path, file.text))?;
    }
    Ok(())
}

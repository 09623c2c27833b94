//! Renders a plan into the sbatch wrapper and the in-container run script. Every value is
//! shell-quoted and every decision made here, in Rust; the templates only place words and test
//! booleans, so they read like the scripts they produce. The line the wrapper ends its log with
//! and the line each of its starts begins with are defined here too, for the readers of logs
//! ([`finished_line`], [`slot_started_line`], [`slot_started_date`], [`finished_status`],
//! [`last_slot`]).

use crate::error::{Error, Result};
use crate::plan::env::LEAKY_VARS;
use crate::plan::{Paths, Plan, RESUME_KEY, RayPlan, Resume, UntilDone};
use crate::preset::cluster::HeadAddress;
use crate::preset::container::{EXEC_VALUED, Exec};
use crate::preset::template;
use crate::schema::flavour::Flavour;
use crate::schema::knob::Origin;
use crate::util::quote::sh;
use camino::Utf8PathBuf;
use serde::Serialize;
use std::io::Write;
use std::sync::{LazyLock, Mutex, PoisonError};

#[derive(Debug, Clone)]
pub struct RenderedFile {
    pub path: Utf8PathBuf,
    pub text: String,
    /// What the terminal shows in place of the text, for a file that is rlctl's own code rather
    /// than a script rendered from the plan; `None` shows the text.
    pub shown_as: Option<&'static str>,
}

/// Where the job id goes in a path the job completes at run time (SLURM's own mark).
const JOB_ID_MARK: &str = "%j";

/// rlctl's progress module, run by an upstream run's run.sh in front of the entry module: a
/// trainer callback that prints MarinSkyRL's `WANDB_MIRROR` line for each step, which upstream
/// skyrl does not print (the module's docstring says why and how).
pub const PROGRESS_MODULE: &str = include_str!("rlctl_progress.py");

/// The progress module's file name, in the run folder beside run.sh.
pub const PROGRESS_FILE: &str = "rlctl_progress.py";

const PROGRESS_SHOWN: &str = "# rlctl's progress module, the same in every run: run.sh starts the \
     entry module through it, so that each step prints a WANDB_MIRROR line (upstream skyrl prints \
     none); `rlctl render --out DIR` writes it.\n";

/// The `#SBATCH` lines' values: the plan's job as the plan has it, borrowed (a field the plan
/// adds to its job reaches the template with no line here), and the option that asks for the
/// node's GPUs. They go on lines sbatch parses itself; the plan allows only characters that need
/// no quoting there.
#[derive(Serialize)]
struct Header<'a> {
    #[serde(flatten)]
    job: &'a crate::plan::Job,
    /// `--gres=gpu:4` or `--gpus-per-node=4`.
    gpus: String,
}

#[derive(Serialize)]
struct SbatchContext<'a> {
    job: Header<'a>,
    target: String,
    cluster: String,
    description: String,
    run_dir: String,
    /// The job's alive file (`plan::alive_file`), around the job id only the job knows.
    alive_head: String,
    alive_tail: String,
    alive_every_s: u64,
    leaky_vars: String,
    wipe: bool,
    until_done: Option<UntilDone>,
    /// A fresh run's first submission: its first slot (and only that one) starts from step 0.
    first_slot: bool,
    /// `trainer.max_steps` when the plan sets it: a slot that finds it saved ends at once.
    max_steps: Option<u64>,
    /// `trainer.ckpt_interval`, 0 when unknown: how far past the step it resumes from SkyRL
    /// accepts a step folder.
    ckpt_interval: u64,
    /// 1 when a whole step must hold the policy's LoRA adapter ([`crate::checkpoint::Expect`]).
    lora: u8,
    checkpoint_root: String,
    ckpt_path: String,
    export_path: String,
    /// HOME and the caches, created before the container starts: the words after `mkdir -p`.
    writable_dirs: String,
    /// `<program> exec` the container; otherwise run on the node itself.
    in_container: bool,
    /// The words after `module load`; empty for none.
    modules: String,
    /// The `container` array's lines, each quoted words: [`container_lines`].
    container: Vec<String>,
    pwd: String,
    env: Vec<String>,
    host_env: Vec<String>,
    venv_python: String,
    ray_tmp_root: String,
    /// The wrapper's last line when it runs no Ray, where it may also run outside SLURM.
    finished: String,
    /// The line each slot begins with.
    slot_started: String,
    ray: Option<RayContext>,
    wandb: Option<WandbContext>,
    phase: PhaseContext,
}

/// What the phase clock's watcher looks for, each a quoted word ([`crate::plan::phases`]).
#[derive(Serialize)]
struct PhaseContext {
    every_s: u64,
    /// The job's log, around the job id only the job knows.
    log_head: String,
    log_tail: String,
    container_up: String,
    engines_ready: String,
    step_line: String,
}

impl PhaseContext {
    fn of(plan: &Plan) -> PhaseContext {
        use crate::plan::phases;
        let log = plan.log_file(JOB_ID_MARK).into_string();
        let (head, tail) = log.rsplit_once(JOB_ID_MARK).expect("the job id is in it");
        PhaseContext {
            every_s: phases::EVERY_S,
            log_head: sh(head),
            log_tail: sh(tail),
            container_up: sh_always(phases::CONTAINER_UP),
            engines_ready: sh_always(phases::ENGINES_READY),
            step_line: sh_always(phases::STEP_LINE),
        }
    }
}

/// The W&B run's folder and id file, when the trainer logs to W&B.
#[derive(Serialize)]
struct WandbContext {
    dir: String,
    run_id_file: String,
}

#[derive(Serialize)]
struct RayContext {
    /// The head's address is that of `interface`; otherwise `hostname --ip-address`.
    head_from_interface: bool,
    interface: String,
    /// Otherwise, the suffix that makes a hostname the interconnect's name, when there is one;
    /// else `hostname --ip-address`.
    hostname_suffix: Option<String>,
    timeout_s: u32,
    cpus_per_node: u32,
    gpus_per_node: u32,
    /// HOME and the compiler's folder (put first on PATH) for every process in the container:
    /// Ray's, not only run.sh's.
    home: String,
    gcc_bin: String,
    /// The wrapper's last line, from the EXIT trap that tears Ray down.
    finished: String,
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
    /// The checkout the entrypoint must import from.
    checkout: String,
    /// The progress module (upstream skyrl): run.sh starts the entry module through it.
    progress: Option<String>,
    /// One node: the trainer's Ray is its own, and so is its temp dir, removed at exit.
    own_ray: bool,
    groups: Vec<KnobGroup>,
    /// The line run.sh begins with, inside double quotes: a constant with nothing to expand.
    container_up: &'static str,
}

/// The job's alive file (`plan::alive_file`) as two quoted words around the job id, which only
/// the job knows: the last mark in the path is the id's (the file name ends `_%j.out.alive`).
fn alive_words(plan: &Plan) -> (String, String) {
    let alive = plan.alive_file_of(JOB_ID_MARK).into_string();
    let (head, tail) = alive.rsplit_once(JOB_ID_MARK).expect("the job id is in it");
    (sh(head), sh(tail))
}

/// The files of a plan's run folder, in submission order: the sbatch wrapper, the run script,
/// and for upstream skyrl the progress module the run script starts the trainer through.
pub fn render(plan: &Plan) -> Result<Vec<RenderedFile>> {
    let p = &plan.paths;
    // Upstream prints no per-step line: its run starts the entry through the progress module,
    // written beside run.sh. MarinSkyRL prints its own.
    let progress =
        (plan.flavour == Flavour::Upstream).then(|| p.run_script.with_file_name(PROGRESS_FILE));
    let run = RunContext::of(plan, progress.as_ref());
    // The wrapper ends by running the trainer, in the shape of the plan: its launch partial,
    // placed after the Ray bring-up or before the one node's last line.
    let mut sbatch = context("sbatch.sh", &SbatchContext::of(plan))?;
    let shape = Launch::of(plan);
    let trainer = fill(shape.trainer(), &sbatch)?;
    sbatch.insert("trainer", block(&trainer));
    let launch = fill(shape.job(), &sbatch)?;
    sbatch.insert("launch", block(&launch));
    let mut files = vec![
        RenderedFile {
            path: p.sbatch_script.clone(),
            text: fill("sbatch.sh", &sbatch)?,
            shown_as: None,
        },
        RenderedFile {
            path: p.run_script.clone(),
            text: fill("run.sh", &context("run.sh", &run)?)?,
            shown_as: None,
        },
    ];
    files.extend(progress.map(|path| RenderedFile {
        path,
        text: PROGRESS_MODULE.to_owned(),
        shown_as: Some(PROGRESS_SHOWN),
    }));
    Ok(files)
}

impl<'a> SbatchContext<'a> {
    /// The wrapper's words, each quoted for the shell.
    fn of(plan: &'a Plan) -> SbatchContext<'a> {
        let p = &plan.paths;
        let (alive_head, alive_tail) = alive_words(plan);
        SbatchContext {
            job: Header {
                job: &plan.job,
                gpus: plan.job.gpu_request.option(plan.job.gpus_per_node),
            },
            target: plan.target.clone(),
            cluster: plan.cluster.clone(),
            description: one_line(&plan.description),
            run_dir: sh(p.run_dir.as_str()),
            alive_head,
            alive_tail,
            alive_every_s: crate::plan::ALIVE_EVERY_S,
            leaky_vars: LEAKY_VARS.join(" "),
            wipe: plan.wipe,
            until_done: plan.until_done,
            first_slot: plan.resume == Resume::Fresh,
            max_steps: plan
                .knobs
                .iter()
                .find(|k| k.path() == "trainer.max_steps")
                .and_then(|k| k.value.hydra_text().trim().parse().ok()),
            lora: u8::from(plan.saves.lora),
            ckpt_interval: (plan.schedule.ckpt_interval)
                .and_then(|n| u64::try_from(n).ok())
                .unwrap_or(0),
            checkpoint_root: sh(p.checkpoint_root.as_str()),
            ckpt_path: sh(p.ckpt_path.as_str()),
            export_path: sh(p.export_path.as_str()),
            writable_dirs: std::iter::once(&p.home)
                .chain(&p.cache_dirs)
                .map(|d| sh(d.as_str()))
                .collect::<Vec<_>>()
                .join(" "),
            in_container: plan.container.runtime.in_container(),
            modules: (plan.container.modules.iter())
                .map(|m| sh(m))
                .collect::<Vec<_>>()
                .join(" "),
            container: container_lines(plan),
            pwd: sh(p.trainer_dir.as_str()),
            env: assignments(&plan.env),
            host_env: assignments(&plan.host_env),
            venv_python: sh(p.venv_python.as_str()),
            ray_tmp_root: sh(p.ray_tmp_root.as_str()),
            // Without Ray the wrapper also runs by hand, outside SLURM, where there is no job id.
            finished: finished_line("${SLURM_JOB_ID:-?}", "$rc"),
            slot_started: slot_started_line("$((restarts + 1))", "${SLURM_JOB_ID:-?}"),
            ray: plan.ray.as_ref().map(|r| RayContext::of(r, p)),
            wandb: plan.wandb.as_ref().map(|w| WandbContext {
                dir: sh(w.dir.as_str()),
                run_id_file: sh(w.run_id_file.as_str()),
            }),
            phase: PhaseContext::of(plan),
        }
    }
}

impl RayContext {
    /// How the wrapper brings Ray up across the job's nodes.
    fn of(r: &RayPlan, p: &Paths) -> RayContext {
        RayContext {
            head_from_interface: r.head_address == HeadAddress::Interface,
            interface: sh(&r.interface),
            hostname_suffix: (r.head_address == HeadAddress::HostnameSuffix)
                .then(|| sh(&r.hostname_suffix)),
            timeout_s: r.timeout_s,
            cpus_per_node: r.cpus_per_node,
            gpus_per_node: r.gpus_per_node,
            home: sh(p.home.as_str()),
            gcc_bin: sh(p.gcc_bin.as_str()),
            // Ray's bring-up needs SLURM's job and its id (the port, the temp dir).
            finished: finished_line("$SLURM_JOB_ID", "$rc"),
        }
    }
}

/// The trainer's arguments, grouped by where they came from (preset, grid, command line...) so
/// that run.sh says so above each group.
fn knob_groups(plan: &Plan) -> Vec<KnobGroup> {
    let mut groups: Vec<KnobGroup> = Vec::new();
    let mut last: Option<&Origin> = None;
    // The resume mode is decided by the job, slot by slot (see sbatch.sh), and reaches the
    // trainer as one more argument after these.
    for knob in plan.knobs.iter().filter(|k| k.path() != RESUME_KEY) {
        let arg = sh_always(&plan.trainer_arg(knob));
        match groups.last_mut() {
            Some(group) if last == Some(&knob.origin) => group.args.push(arg),
            _ => groups.push(KnobGroup {
                origin: knob.origin.to_string(),
                args: vec![arg],
            }),
        }
        last = Some(&knob.origin);
    }
    groups
}

impl RunContext {
    /// The in-container run script's words; `progress` is the progress module, if it runs one.
    fn of(plan: &Plan, progress: Option<&Utf8PathBuf>) -> RunContext {
        let p = &plan.paths;
        RunContext {
            target: plan.target.clone(),
            home: sh(p.home.as_str()),
            ray_tmp_root: sh(p.ray_tmp_root.as_str()),
            gcc_bin: sh(p.gcc_bin.as_str()),
            entrypoint: sh(&plan.entrypoint),
            checkout: sh(p.trainer_dir.as_str()),
            progress: progress.map(|path| sh(path.as_str())),
            own_ray: plan.ray.is_none(),
            groups: knob_groups(plan),
            container_up: crate::plan::phases::CONTAINER_UP,
        }
    }
}

/// How the wrapper starts the trainer and waits for it: one shape per partial in
/// `templates/partials/trainer/`, chosen here so that none of them tests what the others do,
/// and only the templates a plan renders are compiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Launch {
    /// One node, to the end: the trainer in the foreground.
    OneNode,
    /// Over Ray, to the end: the trainer in the background, while the wrapper notes any Ray step
    /// that ends before it.
    Ray,
    /// One node, `--until-done`: the trainer in its own process group, stopped when the slot runs
    /// out of time, and the job requeued.
    OneNodeSlots,
    /// Over Ray, `--until-done`: as [`Launch::OneNodeSlots`], the requeue left to the EXIT trap
    /// that tears Ray down first.
    RaySlots,
}

impl Launch {
    fn of(plan: &Plan) -> Self {
        match (plan.ray.is_some(), plan.until_done.is_some()) {
            (false, false) => Launch::OneNode,
            (true, false) => Launch::Ray,
            (false, true) => Launch::OneNodeSlots,
            (true, true) => Launch::RaySlots,
        }
    }

    /// The partial that starts the trainer this way and waits for it.
    fn trainer(self) -> &'static str {
        match self {
            Launch::OneNode => "partials/trainer/one_node.sh",
            Launch::Ray => "partials/trainer/ray.sh",
            Launch::OneNodeSlots => "partials/trainer/one_node_slots.sh",
            Launch::RaySlots => "partials/trainer/ray_slots.sh",
        }
    }

    /// The partial that runs the trainer's partial and ends the job: after bringing Ray up, or
    /// on the one node.
    fn job(self) -> &'static str {
        match self {
            Launch::OneNode | Launch::OneNodeSlots => "partials/one_node.sh",
            Launch::Ray | Launch::RaySlots => "partials/ray.sh",
        }
    }
}

/// A rendered partial as a block of lines for `{{ name }}` on a line of its own: the newline
/// that ends its last line is the including line's.
fn block(text: &str) -> &str {
    text.strip_suffix('\n').unwrap_or(text)
}

/// The line the wrapper ends its log with once the trainer has exited (a cancelled job has
/// none; SLURM writes its own `CANCELLED AT`). `rlctl status` reads it back with
/// [`finished_status`] once SLURM's accounting has forgotten the job. In the script, `job` and
/// `status` are shell expansions inside double quotes.
pub fn finished_line(job: &str, status: &str) -> String {
    // The status comes last: `finished_status` takes everything before it as the prefix.
    format!("rlctl: job {job} finished with status {status}")
}

/// How every [`slot_started_line`] begins: what readers of a log look for.
pub const SLOT_STARTED: &str = "rlctl: slot ";

/// The line each start of the wrapper (a slot) begins with; the date and node follow. In the
/// script, `slot` and `job` are shell expansions inside double quotes.
pub fn slot_started_line(slot: &str, job: &str) -> String {
    format!("{SLOT_STARTED}{slot} of job {job} started")
}

/// The date (`2026-07-14T09:00:00Z`, as the wrapper's `date -u` wrote it) of a slot-start line
/// that begins at `line`'s [`SLOT_STARTED`]; `None` for anything else, such as a user's echo of
/// `rlctl: slot ...` without a slot number, job and date.
pub fn slot_started_date(line: &str) -> Option<&str> {
    let rest = line.strip_prefix(SLOT_STARTED)?;
    let (slot, rest) = rest.split_once(" of job ")?;
    let (_job, rest) = rest.split_once(" started ")?;
    let date = rest.split_whitespace().next()?;
    (!slot.is_empty() && slot.bytes().all(|b| b.is_ascii_digit())).then_some(date)
}

/// What job `job_id`'s last slot wrote to `log`: the log from that slot's start line (the whole
/// log when there is none). An earlier slot's lines say nothing of how the job ended: a slot
/// that requeued the job, or was ended by a node failure, is not its end.
pub fn last_slot<'a>(log: &'a str, job_id: &str) -> &'a str {
    let started = format!(" of job {job_id} started ");
    let mut from = 0;
    let mut at = 0;
    for line in log.split_inclusive('\n') {
        if line.starts_with(SLOT_STARTED) && line.contains(&started) {
            from = at;
        }
        at += line.len();
    }
    &log[from..]
}

/// The exit status in the [`finished_line`] of job `job_id`'s last slot in `log`, if it has one.
pub fn finished_status<'a>(log: &'a str, job_id: &str) -> Option<&'a str> {
    let prefix = finished_line(job_id, "");
    last_slot(log, job_id)
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix(&prefix))
        .map(str::trim)
}

/// The job's `container` array, a line each: [`Container::exec_argv`]'s words quoted, the
/// options without a value on the first line, then each option and its value on one, then W&B's
/// run id (`$wandb_run_id`, known only once the job starts) and the image. Empty without a
/// container.
///
/// [`Container::exec_argv`]: crate::preset::cluster::Container::exec_argv
fn container_lines(plan: &Plan) -> Vec<String> {
    let mut argv = plan.container.exec_argv(&Exec {
        gpus: true,
        pwd: plan.paths.trainer_dir.as_str(),
        env: &plan.env,
    });
    let Some(image) = argv.pop() else {
        return Vec::new();
    };
    let mut head = Vec::new();
    let mut lines = Vec::new();
    let mut words = argv.into_iter();
    while let Some(word) = words.next() {
        if !EXEC_VALUED.contains(&word.as_str()) {
            head.push(sh(&word));
            continue;
        }
        let value = words.next().unwrap_or_default();
        // Quoted even when plain: in an array, a bare comma reads like a mistyped separator.
        let value = match word.as_str() {
            "--bind" => sh_always(&value),
            _ => sh(&value),
        };
        lines.push(format!("{word} {value}"));
    }
    lines.insert(0, head.join(" "));
    if plan.wandb.is_some() {
        lines.push("--env \"WANDB_RUN_ID=$wandb_run_id\"".to_owned());
    }
    lines.push(sh(&image));
    lines
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

/// The embedded templates compiled so far. Each is compiled at most once per process, since a
/// grid renders them many times, and only when a plan first renders it: parsing is a good part
/// of a dry run's time, and a one-node job never needs `partials/ray.sh`, nearly half of all the
/// template text.
static TERA: LazyLock<Mutex<tera::Tera>> = LazyLock::new(|| {
    let mut tera = tera::Tera::default();
    tera.autoescape_on(vec![]);
    Mutex::new(tera)
});

fn failed(name: &str, message: String) -> Error {
    Error::Template {
        name: name.to_owned(),
        message,
    }
}

/// The values template `name` is rendered with.
fn context(name: &str, values: &impl Serialize) -> Result<tera::Context> {
    tera::Context::from_serialize(values).map_err(|e| failed(name, e.to_string()))
}

/// Renders template `name` (its file name without `.tera`).
fn fill(name: &str, context: &tera::Context) -> Result<String> {
    // A poisoned lock is still sound: a template is added whole or not at all.
    let mut tera = TERA.lock().unwrap_or_else(PoisonError::into_inner);
    compile(&mut tera, name)?;
    tera.render(name, context)
        .map_err(|e| failed(name, format!("{e:?}")))
}

/// Compiles template `name` and the templates it includes, each once per process.
fn compile(tera: &mut tera::Tera, name: &str) -> Result<()> {
    if tera.get_template_names().any(|known| known == name) {
        return Ok(());
    }
    let text = template(&format!("{name}.tera"));
    tera.add_raw_template(name, text)
        .map_err(|e| failed(name, format!("{e:?}")))?;
    for included in includes(text) {
        compile(tera, included)?;
    }
    Ok(())
}

/// The names in a template's `{% include "NAME" %}` tags.
fn includes(text: &str) -> impl Iterator<Item = &str> {
    text.split("{%").skip(1).filter_map(|tag| {
        let tag = tag
            .split("%}")
            .next()?
            .trim_matches(|c: char| c == '-' || c.is_whitespace());
        tag.strip_prefix("include")?
            .trim()
            .strip_prefix('"')?
            .split('"')
            .next()
    })
}

/// The files for the terminal: each under a `==> path <==` heading.
pub fn print_files(out: &mut dyn Write, files: &[RenderedFile]) -> Result<()> {
    for file in files {
        let text = file.shown_as.unwrap_or(&file.text);
        crate::util::out::emit(out, &format!("\n==> {} <==\n{text}", file.path))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_names_what_it_includes() {
        let text =
            "a\n{% include \"partials/ray.sh\" %}\n{%- include \"x.sh\" -%}\n{% if y %}{% endif %}";
        assert_eq!(
            includes(text).collect::<Vec<_>>(),
            ["partials/ray.sh", "x.sh"]
        );
    }

    #[test]
    fn a_slot_start_line_gives_back_its_date() {
        // As the wrapper's echo prints it: the line, then `date -u +%Y-%m-%dT%H:%M:%SZ` and the host.
        let line = format!(
            "{} 2026-07-14T09:00:00Z on lrdn0001",
            slot_started_line("2", "1001")
        );
        assert_eq!(slot_started_date(&line), Some("2026-07-14T09:00:00Z"));
        assert_eq!(slot_started_date("rlctl: slot of job 1 started x"), None);
        assert_eq!(slot_started_date("rlctl: slot 2 is free"), None);
    }
}

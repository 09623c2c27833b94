//! The subcommands, one file each: each turns its parsed arguments into calls down the
//! pipeline and prints the result. Only this folder and `cli` see clap's types.

mod check_all;
mod clean;
mod doctor;
mod estimate;
mod init;
mod inspect;
mod launch;
mod list;
mod metrics;
mod report;
mod retire;
mod runs;
mod schema;
mod shell;
mod stage;
mod tend;
mod watch;

use crate::cli::{Cli, Command, DeepArgs, PlanArgs, SchemaCommand, SlurmArgs};
use crate::error::Result;
use crate::plan::{Plan, PlanOptions, overrides};
use crate::preset::cluster::Cluster;
use crate::preset::user_dir::PresetsDir;
use crate::preset::{Library, Target};
use crate::submit::ledger::Ledger;
use crate::submit::slurm::Slurm;
use std::io::Write;

/// What every command starts from: the presets in use, the cluster named, the SLURM programs.
pub struct Session {
    pub library: Library,
    cluster: String,
    pub slurm: Slurm,
    /// Your presets folder, given or default, used or not: `init` writes there, `list` says it.
    pub presets: PresetsDir,
}

impl Session {
    /// The cluster profile the command runs on, resolved.
    pub fn cluster(&self) -> Result<Cluster> {
        self.library.cluster(&self.cluster)
    }

    /// The cluster profile's name (`--cluster`).
    pub fn cluster_name(&self) -> &str {
        &self.cluster
    }

    /// The ledger of the cluster's run root.
    pub fn ledger(&self) -> Result<Ledger> {
        Ok(Ledger::at(&self.cluster()?.storage.run_root))
    }

    /// The plan of a preset or cell with the command line's flags and overrides.
    pub fn plan(
        &self,
        cluster: &Cluster,
        target: &Target,
        args: &PlanArgs,
        overrides: &[String],
    ) -> Result<Plan> {
        self.plan_with(cluster, target, &plan_options(args), overrides)
    }

    /// [`Session::plan`] with options the flags alone do not give (`render --out`'s folder).
    pub fn plan_with(
        &self,
        cluster: &Cluster,
        target: &Target,
        options: &PlanOptions,
        overrides: &[String],
    ) -> Result<Plan> {
        let overrides = overrides::parse(overrides)?;
        Plan::resolve(&self.library, cluster, target, options, &overrides)
    }
}

/// Runs one parsed command line, printing to `out`.
pub fn run(cli: Cli, out: &mut dyn Write) -> Result<()> {
    let presets = PresetsDir::choose(cli.presets);
    let user_dir = match (&cli.command, presets.in_use()) {
        // `init` creates the folder it is given.
        (Command::Init { .. }, Some(dir)) if !dir.exists() => None,
        (_, dir) => dir,
    };
    let session = Session {
        library: crate::preset::Library::load(user_dir)?,
        cluster: cli.cluster,
        slurm: slurm(&cli.slurm),
        presets: presets.clone(),
    };
    match cli.command {
        Command::Launch {
            preset,
            chain,
            submit,
            plan,
            deep,
            overrides,
        } => launch::launch(
            &session,
            &preset,
            chain,
            submit.dry_run,
            (&plan, &deep),
            &overrides,
            out,
        ),
        Command::Grid {
            cell,
            all,
            skip,
            as_cell,
            submit,
            plan,
            deep,
            overrides,
        } => launch::grid(
            &session,
            launch::Cells {
                cell,
                all,
                skip,
                as_cell,
            },
            submit.dry_run,
            (&plan, &deep),
            &overrides,
            out,
        ),
        Command::Render {
            name,
            out: dir,
            plan,
            overrides,
        } => inspect::render(&session, &name, dir.as_deref(), &plan, &overrides, out),
        // clap refuses a name with --all.
        Command::Check {
            all: Some(grid),
            plan,
            deep,
            overrides,
            ..
        } => check_all::run(&session, grid.as_deref(), (&plan, &deep), &overrides, out),
        Command::Check {
            name,
            all: None,
            plan,
            deep,
            overrides,
        } => {
            let name = name.expect("clap requires a name without --all");
            inspect::check(&session, &name, (&plan, &deep), &overrides, out)
        }
        Command::Estimate {
            name,
            all,
            json,
            plan,
            overrides,
        } => estimate::run(
            &session,
            name.as_deref(),
            all.as_deref(),
            json,
            &plan,
            &overrides,
            out,
        ),
        Command::Show {
            name,
            plan,
            overrides,
        } => inspect::show(&session, &name, &plan, &overrides, out),
        Command::List { json } => list::run(&session, json, out),
        Command::Init {
            profile,
            account,
            work,
            scratch,
            force,
        } => {
            let request = init::Request {
                profile,
                account,
                work,
                scratch,
                force,
            };
            init::run(&session, &request, out)
        }
        Command::Stage {
            name,
            all,
            dry_run,
            status,
            allow,
            overrides,
        } => {
            let mode = match (dry_run, status) {
                (true, _) => stage::Mode::DryRun,
                (_, true) => stage::Mode::Status,
                _ => stage::Mode::Start,
            };
            stage::run(
                &session,
                (name.as_deref(), all.as_deref()),
                mode,
                &allow,
                &overrides,
                out,
            )
        }
        Command::Completions { shell } => shell::completions(&shell, out),
        Command::Man => shell::man(out),
        Command::Doctor => doctor::run(&session, out),
        Command::Status { run, json } => runs::status(&session, run.as_deref(), json, out),
        Command::Cancel { run, yes } => runs::cancel(&session, &run, yes, out),
        Command::Retire { runs, yes } => retire::run(&session, &runs, yes, out),
        Command::Logs { run, follow } => runs::logs(&session, &run, follow, out),
        Command::Metrics { run, json, csv } => metrics::run(&session, &run, json, csv, out),
        Command::Watch {
            run,
            once,
            interval,
            entropy_floor,
            entropy_ratio,
            grad_spike,
            reward_stall_steps,
        } => {
            let mut thresholds = crate::runs::alerts::Thresholds::default();
            if let Some(x) = entropy_floor {
                thresholds.entropy_floor = x;
            }
            if let Some(x) = entropy_ratio {
                thresholds.entropy_min_ratio = x;
            }
            if let Some(x) = grad_spike {
                thresholds.grad_spike_factor = x;
            }
            if let Some(n) = reward_stall_steps {
                thresholds.reward_stall_steps = n;
            }
            watch::run(&session, &run, once, interval, thresholds, out)
        }
        Command::Tend {
            runs,
            max_attempts,
            cancel_on_alert,
            sync_wandb,
            wandb_timeout,
            wandb_budget,
            wandb,
        } => {
            let sync = crate::runs::wandb_sync::Options {
                program: wandb,
                per_call: std::time::Duration::from_secs(wandb_timeout),
                budget: std::time::Duration::from_secs(wandb_budget),
            };
            let sync = (sync_wandb, sync);
            tend::run(&session, &runs, max_attempts, cancel_on_alert, sync, out)
        }
        Command::Clean { run, yes } => clean::run(&session, &run, yes, out),
        Command::Report { grid, out: dir } => report::run(&session, &grid, dir, out),
        Command::Schema {
            action:
                SchemaCommand::Import {
                    config_dir,
                    out: file,
                },
        } => schema::import(&config_dir, file.as_deref(), out),
    }
}

/// The deep check's time limit when the flags, else the cluster profile, ask for it.
pub(crate) fn deep_limit(args: &DeepArgs, cluster: &Cluster) -> Option<std::time::Duration> {
    (args.wanted(cluster.check.deep))
        .then(|| std::time::Duration::from_secs(cluster.check.deep_timeout_s))
}

/// What the plan flags ask of the plan.
pub(crate) fn plan_options(args: &PlanArgs) -> PlanOptions {
    PlanOptions {
        nodes: args.nodes,
        qos: args.qos.clone(),
        time: args.time,
        job_name: args.job_name.clone(),
        resume: Some(args.resume),
        wipe: args.wipe,
        until_done: args.until_done.then_some(args.max_slots),
        cell_as: None,
        run_dir: None,
    }
}

fn slurm(args: &SlurmArgs) -> Slurm {
    Slurm {
        sbatch: args.sbatch.clone(),
        squeue: args.squeue.clone(),
        sacct: args.sacct.clone(),
        scancel: args.scancel.clone(),
    }
}

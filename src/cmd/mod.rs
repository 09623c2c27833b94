//! The subcommands, one file each: each turns its parsed arguments into calls down the
//! pipeline and prints the result. Only this folder and `cli` see clap's types.

mod check_all;
mod clean;
mod diff;
mod discover;
mod doctor;
mod estimate;
mod init;
mod inspect;
mod launch;
mod list;
mod man;
mod mcp;
mod metrics;
mod report;
mod retire;
mod runs;
mod schema;
pub mod schemas;
mod shell;
mod stage;
mod tend;
mod wait;
mod watch;

use crate::check::ready::Ledgered;
use crate::cli::{Cli, Command, DeepArgs, PlanArgs, SchemaCommand, SlurmArgs};
use crate::error::Result;
use crate::plan::{Plan, PlanOptions, overrides};
use crate::preset::cluster::Cluster;
use crate::preset::user_dir::PresetsDir;
use crate::preset::{Library, Selection};
use crate::schema::knob::Knob;
use crate::slurm::Slurm;
use crate::store::ledger::Ledger;
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

    /// The cluster profile, when it is the user's own: a command that submits or writes run
    /// folders (`doing`) refuses the shipped one, whose account and `$WORK` are its author's.
    pub fn yours(&self, doing: &'static str) -> Result<Cluster> {
        let cluster = self.cluster()?;
        if !cluster.shipped {
            return Ok(cluster);
        }
        Err(crate::error::Error::NotYourProfile {
            doing,
            cluster: cluster.name.clone(),
            account: cluster.sbatch.account.clone(),
            work: cluster.storage.work.to_string(),
            init: self.init_command(),
        })
    }

    /// The profile a command that submits runs on: the user's own ([`Session::yours`]), or, for
    /// a dry run, any, said whose it is.
    pub fn submitting(&self, doing: &'static str, dry_run: bool) -> Result<Cluster> {
        if !dry_run {
            return self.yours(doing);
        }
        let cluster = self.cluster()?;
        self.say_whose(&cluster);
        Ok(cluster)
    }

    /// What a look (`--dry-run`, `check`) on the shipped profile says first on stderr: whose
    /// account and folders it shows.
    pub fn say_whose(&self, cluster: &Cluster) {
        if cluster.shipped {
            crate::say!(
                "rlctl: note: profile {}: the embedded default (account {}, folders of {}), not yours; run `{}`",
                cluster.name,
                cluster.sbatch.account,
                cluster.storage.work,
                self.init_command()
            );
        }
    }

    /// The `rlctl init` command line that writes the user's own profile of this cluster.
    fn init_command(&self) -> String {
        let presets = match (&self.presets.chosen, &self.presets.path) {
            (crate::preset::user_dir::Chosen::Given, Some(dir)) => {
                format!(
                    " --presets {}",
                    crate::util::quote::sh_join(&[dir.as_str()])
                )
            }
            _ => String::new(),
        };
        format!("rlctl init {} --account ACCOUNT{presets}", self.cluster)
    }

    /// The ledger of the cluster's run root.
    pub fn ledger(&self) -> Result<Ledger> {
        Ok(Ledger::at(&self.cluster()?.storage.run_root))
    }

    /// The ledger of the cluster's run root, read for the checks before submitting.
    pub fn ledgered(&self) -> Result<Ledgered> {
        ledgered(self.ledger()?)
    }

    /// The plan of a preset or cell with the command line's flags and overrides.
    pub fn plan(&self, cluster: &Cluster, selection: &Selection, args: &PlanArgs) -> Result<Plan> {
        self.plan_with(cluster, selection, &plan_options(args), &args.overrides)
    }

    /// [`Session::plan`] with options the flags alone do not give (`render --out`'s folder).
    pub fn plan_with(
        &self,
        cluster: &Cluster,
        selection: &Selection,
        options: &PlanOptions,
        overrides: &[String],
    ) -> Result<Plan> {
        let overrides = self.parse_overrides(cluster, overrides)?;
        self.plan_parsed(cluster, selection, options, &overrides)
    }

    /// The command line's overrides, read with the grammar of the cluster's checkout.
    pub fn parse_overrides(&self, cluster: &Cluster, args: &[String]) -> Result<Vec<Knob>> {
        if args.is_empty() {
            return Ok(Vec::new());
        }
        let flavour = self.library.trainer_schema(cluster)?.flavour();
        overrides::parse_for(args, flavour)
    }

    /// [`Session::plan_with`] with the overrides parsed once for many plans.
    pub fn plan_parsed(
        &self,
        cluster: &Cluster,
        selection: &Selection,
        options: &PlanOptions,
        overrides: &[Knob],
    ) -> Result<Plan> {
        let schema = self.library.plan_schema(cluster, overrides)?;
        Plan::resolve(selection, cluster, &schema, options, overrides)
    }
}

/// Runs one parsed command line, printing to `out`.
pub fn run(cli: Cli, out: &mut dyn Write) -> Result<()> {
    let presets = PresetsDir::choose(cli.presets);
    let user_dir = match (&cli.command, presets.in_use()) {
        // `init` creates the folder it is given.
        (Command::Init(_), Some(dir)) if !dir.exists() => None,
        (_, dir) => dir,
    };
    let session = Session {
        library: crate::preset::Library::load(user_dir)?,
        cluster: cli.cluster,
        slurm: slurm(&cli.slurm),
        presets: presets.clone(),
    };
    match &cli.command {
        Command::Launch(args) => launch::launch(&session, args, out),
        Command::Grid(args) => launch::grid(&session, args, out),
        Command::Render(args) => inspect::render(&session, args, out),
        // clap refuses a name with --all.
        Command::Check(args) if args.all.is_some() => check_all::run(&session, args, out),
        Command::Check(args) => inspect::check(&session, args, out),
        Command::Estimate(args) => estimate::run(&session, args, out),
        Command::Show(args) => inspect::show(&session, args, out),
        Command::Diff(args) => diff::run(&session, args, out),
        Command::List(args) => list::run(&session, args, out),
        Command::Init(args) if args.discover => discover::run(&session, args, out),
        Command::Init(args) => init::run(&session, args, out),
        Command::Stage(args) => stage::run(&session, args, out),
        Command::Completions(args) => shell::completions(args, out),
        Command::Man => man::run(out),
        Command::Doctor(args) => doctor::run(&session, args, out),
        Command::Status(args) => runs::status(&session, args, out),
        Command::Cancel(args) => runs::cancel(&session, args, out),
        Command::Retire(args) => retire::run(&session, args, out),
        Command::Logs(args) => runs::logs(&session, args, out),
        Command::Metrics(args) => metrics::run(&session, args, out),
        Command::Watch(args) => watch::run(&session, args, out),
        Command::Wait(args) => wait::run(&session, args, out),
        Command::Tend(args) => tend::run(&session, args, out),
        Command::Clean(args) => clean::run(&session, args, out),
        Command::Report(args) => report::run(&session, args, out),
        Command::Mcp(args) => mcp::run(&session, args),
        Command::Schema(SchemaCommand::Import(args)) => schema::import(args, out),
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

/// `ledger` read for the checks before submitting, its estimates made from the speeds the runs'
/// logs recorded.
pub fn ledgered(ledger: Ledger) -> Result<Ledgered> {
    Ledgered::read(ledger, crate::runs::estimate::of)
}

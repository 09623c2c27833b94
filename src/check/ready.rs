//! What `launch` and `grid` judge before they submit, in one place: `check` (and `check --all`)
//! judge a preset or cell through these very functions, so that a check that passes is a
//! launch that preflight lets through. The checks that need what the run store recorded (the
//! slots and purge of the measured speed, wipes, flavours, a controlled grid's cells) run here.

use crate::check::Report;
use crate::check::borrowed::{flavour_problems, wipe_problems};
use crate::check::controlled::controlled;
use crate::check::purge;
use crate::check::slots::{self, Slots};
use crate::error::Result;
use crate::plan::ask::{Ask, Verb};
use crate::plan::estimate::Estimate;
use crate::plan::{Chain, Plan};
use crate::store::ledger::{Ledger, Record};
use crate::store::recorded::Recorded;
use crate::util::fs::Folder;

/// How a plan's estimate is made from the recorded speeds: given by the caller, since the
/// speeds are read from the runs' logs, a later stage.
pub type Estimator = fn(&Plan, &Recorded) -> Estimate;

/// What the ledger says, read once for every plan judged.
pub struct Ledgered {
    pub ledger: Ledger,
    /// The newest record of each run.
    pub latest: Vec<Record>,
    /// Every record, for the estimates' measured speeds.
    pub recorded: Recorded,
    /// The estimate of a plan from `recorded`.
    pub estimator: Estimator,
}

impl Ledgered {
    pub fn read(ledger: Ledger, estimator: Estimator) -> Result<Ledgered> {
        Ok(Ledgered {
            latest: ledger.latest()?,
            recorded: Recorded::read(ledger.clone())?,
            ledger,
            estimator,
        })
    }

    /// `plan`'s estimate, from the recorded speeds.
    fn of(&self, plan: &Plan) -> Estimate {
        (self.estimator)(plan, &self.recorded)
    }

    /// The recorded run `plan` would be: a cell by name, as `grid --all` skips it; a preset's
    /// run by its resolved checkpoint folder (another --job-name is another run).
    pub fn run_of(&self, plan: &Plan) -> Option<&Record> {
        let folder = Folder::of(&plan.paths.checkpoint_dir);
        (self.latest.iter()).find(|r| {
            r.target == plan.target
                && (plan.grid.is_some() || Folder::of(&r.checkpoint_dir).is(&folder))
        })
    }
}

/// One preset's launch: the jobs of its chain (preflight judges the first: the others differ
/// only in resuming), its estimate, and the findings made before preflight.
pub struct Launch {
    pub plans: Vec<Plan>,
    pub estimate: Estimate,
    pub chain: u32,
    pub extra: [Report; 1],
}

/// What `launch PRESET --chain CHAIN` judges of `first` before preflight.
pub fn launch(mut first: Plan, chain: Chain, ledgered: &Ledgered) -> Result<Launch> {
    let estimate = ledgered.of(&first);
    estimate.measured_into(&mut first);
    // `--chain auto`: as many slots as the estimate needs (one when it cannot tell, or when the
    // one job requeues itself).
    let chain = match chain {
        Chain::Jobs(k) => k,
        Chain::Auto if first.until_done.is_some() => 1,
        Chain::Auto => estimate
            .slots
            .map_or(1, |k| k.clamp(1, Chain::MAX.into()) as u32),
    };
    let mut extra = [slots::check(&estimate, Slots::of(&first, chain))];
    extra[0]
        .problems
        .extend(purge::check(&estimate, &first).problems);
    extra[0]
        .problems
        .extend(wipe_problems(&first, &ledgered.ledger)?.problems);
    extra[0]
        .problems
        .extend(flavour_problems(&first, &ledgered.ledger)?.problems);
    let mut plans: Vec<Plan> = (1..chain).map(|n| first.chained(n)).collect();
    plans.insert(0, first);
    Ok(Launch {
        plans,
        estimate,
        chain,
        extra,
    })
}

/// Cells of a grid to submit: those the ledger does not hold (one cell named alone is
/// launched again), with their estimates and findings.
pub struct Cells {
    /// Each cell's recorded run, when it is left alone.
    pub skip: Vec<Option<Record>>,
    pub fresh: Vec<Plan>,
    pub estimates: Vec<Estimate>,
    pub extra: Vec<Report>,
}

/// What `grid` (`asked`) judges of its `plans` before preflight: a controlled grid's recorded
/// cells keep their knobs; the others' slots and wipes.
pub fn cells(plans: &[Plan], ledgered: &Ledgered, asked: &Ask) -> Result<Cells> {
    controlled(plans, &ledgered.latest, asked)?;
    // `--all` leaves the cells the ledger holds alone; one named cell is launched again.
    let skip: Vec<Option<Record>> = (plans.iter())
        .map(|p| match plans.len() {
            1 => None,
            _ => (ledgered.latest.iter())
                .find(|r| r.target == p.target)
                .cloned(),
        })
        .collect();
    let mut fresh: Vec<Plan> = (plans.iter().zip(&skip))
        .filter(|(_, s)| s.is_none())
        .map(|(p, _)| p.clone())
        .collect();
    let estimates: Vec<Estimate> = (fresh.iter()).map(|p| ledgered.of(p)).collect();
    for (plan, estimate) in fresh.iter_mut().zip(&estimates) {
        estimate.measured_into(plan);
    }
    let mut extra: Vec<Report> = (estimates.iter().zip(&fresh))
        .map(|(e, plan)| slots::check(e, Slots::of(plan, 1)))
        .collect();
    for ((report, plan), estimate) in extra.iter_mut().zip(&fresh).zip(&estimates) {
        (report.problems).extend(purge::check(estimate, plan).problems);
        (report.problems).extend(wipe_problems(plan, &ledgered.ledger)?.problems);
        (report.problems).extend(flavour_problems(plan, &ledgered.ledger)?.problems);
    }
    Ok(Cells {
        skip,
        fresh,
        estimates,
        extra,
    })
}

/// The plans `check` judges for one plan, and their findings before preflight: what `launch`
/// (a preset, `--chain` jobs) or `grid CELL` (a cell, asked with the plan flags by `ask`) would
/// judge.
pub fn one(
    plan: Plan,
    chain: Chain,
    ledgered: &Ledgered,
    ask: impl FnOnce(Verb) -> Ask,
) -> Result<(Vec<Plan>, Vec<Report>)> {
    if plan.grid.is_some() {
        let asked = ask(Verb::Grid {
            cell: plan.target.clone(),
        });
        let cells = cells(std::slice::from_ref(&plan), ledgered, &asked)?;
        return Ok((cells.fresh, cells.extra));
    }
    let launch = launch(plan, chain, ledgered)?;
    let [extra] = launch.extra;
    let first = launch
        .plans
        .into_iter()
        .next()
        .expect("a chain has a first job");
    Ok((vec![first], vec![extra]))
}

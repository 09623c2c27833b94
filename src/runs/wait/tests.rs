//! `decide` and `standing` on the rounds a wait meets.

use super::*;

fn seen(state: &str, source: &'static str, step: u64) -> Seen {
    Seen {
        run: "p".into(),
        job_id: "7".into(),
        state: state.into(),
        source,
        reason: None,
        link: None,
        step,
        total: Some(20),
        exit_code: None,
        stall: None,
        alerts: Vec::new(),
    }
}

fn word(until: Until, s: &Seen) -> &'static str {
    standing(until, s).word()
}

#[test]
fn the_end_is_completed_and_any_other_end_misses_it() {
    let end = Until::Completed;
    assert_eq!(word(end, &seen("RUNNING", "squeue", 3)), "waiting");
    assert_eq!(word(end, &seen("COMPLETED", "sacct", 20)), "reached");
    assert_eq!(word(end, &seen("COMPLETED", "log", 20)), "reached");
    for state in [
        "FAILED",
        "CANCELLED",
        "TIMEOUT",
        "NODE_FAIL",
        "OUT_OF_MEMORY",
    ] {
        assert_eq!(word(end, &seen(state, "sacct", 3)), "missed", "{state}");
    }
    // Accounting still catching up with a job squeue no longer lists.
    assert_eq!(word(end, &seen("RUNNING", "sacct", 3)), "waiting");
    assert_eq!(word(end, &seen("unknown", "none", 0)), "unknown");
}

#[test]
fn running_is_reached_once_the_job_started_or_completed() {
    let start = Until::Running;
    assert_eq!(word(start, &seen("PENDING", "squeue", 0)), "waiting");
    assert_eq!(word(start, &seen("CONFIGURING", "squeue", 0)), "waiting");
    assert_eq!(word(start, &seen("RUNNING", "squeue", 0)), "reached");
    assert_eq!(word(start, &seen("COMPLETED", "sacct", 20)), "reached");
    assert_eq!(word(start, &seen("FAILED", "sacct", 0)), "missed");
}

#[test]
fn a_step_is_reached_by_the_logged_step_and_missed_by_an_end_before_it() {
    let step = Until::Step(5);
    assert_eq!(word(step, &seen("RUNNING", "squeue", 4)), "waiting");
    assert_eq!(word(step, &seen("RUNNING", "squeue", 5)), "reached");
    assert_eq!(word(step, &seen("TIMEOUT", "sacct", 7)), "reached");
    let short = standing(step, &seen("COMPLETED", "sacct", 3));
    assert!(
        matches!(&short, Standing::Missed(why) if why.contains("ended COMPLETED at step 3/20, before step 5")),
        "{short:?}"
    );
}

#[test]
fn a_hang_or_a_collapse_misses_and_a_reward_stall_waits_on() {
    let mut hung = seen("RUNNING", "squeue", 3);
    hung.stall = Some("no new step for 12m00s (limit 10m00s)".into());
    assert_eq!(word(Until::Completed, &hung), "missed");
    let mut fell = seen("RUNNING", "squeue", 3);
    fell.alerts = vec![AlertKind::EntropyCollapse];
    assert_eq!(word(Until::Completed, &fell), "missed");
    fell.alerts = vec![AlertKind::RewardStall];
    assert_eq!(word(Until::Completed, &fell), "waiting");
}

#[test]
fn a_round_ends_on_a_miss_first_then_unknown_then_all_reached_then_the_timeout() {
    let v = |standings: &[Standing], timed_out| {
        decide(&Round {
            standings,
            timed_out,
        })
    };
    let (w, r) = (Standing::Waiting, Standing::Reached);
    let (m, u) = (Standing::Missed("m".into()), Standing::Unknown("u".into()));
    assert_eq!(v(&[r.clone(), w.clone()], false), Verdict::Waiting);
    assert_eq!(v(&[r.clone(), w.clone()], true), Verdict::Timeout);
    assert_eq!(
        v(&[r.clone(), r.clone()], true),
        Verdict::Reached,
        "reached wins a late round"
    );
    assert_eq!(v(&[u.clone(), m.clone()], false), Verdict::Missed);
    assert_eq!(v(&[u, w, r], false), Verdict::Unknown);
}

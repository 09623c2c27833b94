//! The phase clock on the real cluster: `status` shows a job's start-up phase while its trainer
//! starts, and an `--until-done` slot ends right after a save, inside its limit less the grace
//! (the one-minute slot, less SLURM's 15 s), with no save cut.

use super::{Cluster, Site, launched, wait_for};
use std::time::{Duration, Instant};

pub fn status_shows_start_up_and_a_slot_ends_with_a_save_inside_its_limit(cluster: &Cluster) {
    let site = Site::new(cluster);
    let park = site.path().join("park");
    std::fs::create_dir_all(&park).unwrap();
    // One-minute slots, 14 steps of 5 s each saved: at least two slots. The stand-in trainer
    // waits in its start-up (after run.sh's first line) until the test lets it go.
    let id = launched(
        site.rlctl()
            .env("RLCTL_STANDIN_STEP_SECONDS", "5")
            .env("RLCTL_STANDIN_PARK", "startup")
            .env("RLCTL_STANDIN_PARK_DIR", &park)
            .args([
                "launch",
                "gsm8k-canary",
                "--until-done",
                "--time",
                "00:01:00",
            ])
            .args(["--", "trainer.max_steps=14", "trainer.ckpt_interval=1"]),
    );
    let start = Instant::now();
    while !park.join("parked").exists() {
        assert!(start.elapsed() < Duration::from_secs(180), "never parked");
        std::thread::sleep(Duration::from_millis(200));
    }
    // The watcher looks every 2 s: the container phase is written within that.
    let mut shown = String::new();
    while start.elapsed() < Duration::from_secs(200) {
        let out = site.rlctl().args(["status", &id]).output().unwrap();
        shown = String::from_utf8_lossy(&out.stdout).into_owned();
        if shown.contains("RUNNING, starting: container up ") {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    assert!(
        shown.contains("RUNNING, starting: container up "),
        "{shown}"
    );
    std::fs::write(park.join("unpark"), "").unwrap();

    let (state, _) = wait_for(cluster, &id, Duration::from_secs(900));
    assert_eq!(state, "COMPLETED");
    let run_dir = site.run_dir("gsm8k-canary", "gsm8k-canary", "001");
    let log = std::fs::read_to_string(run_dir.join(format!("gsm8k-canary_{id}.out"))).unwrap();
    let text = std::fs::read_to_string(run_dir.join(format!("phases/{id}.tsv"))).unwrap();
    let marks: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
    let shown = format!("{text}\n{log}");
    // Slot 1: started, container up, first step, saves, then its end right after a save.
    let slot2 = marks.iter().skip(1).position(|m| m[1] == "slot").unwrap() + 1;
    let slot1 = &marks[..slot2];
    // The slot ends after a save by one of two timers: rlctl's own (the next save would end past
    // the limit less the grace: a `stop` mark) or SLURM's USR1, which SLURM may send up to a minute
    // before the time asked (its event loop's resolution), so in a one-minute slot either comes
    // first. Either way no save is cut and the last one ends inside the limit less the grace.
    let saves = |kind: &str| -> Vec<&str> {
        slot1
            .iter()
            .filter(|m| m[1] == kind)
            .map(|m| m[2])
            .collect()
    };
    assert!(!saves("save_ended").is_empty(), "slot 1 saved: {shown}");
    assert_eq!(
        saves("save_begun"),
        saves("save_ended"),
        "every save slot 1 began, it ended: {shown}"
    );
    let save = slot1.iter().rev().find(|m| m[1] == "save_ended").unwrap();
    let at = |m: &Vec<&str>| m[0].parse::<i64>().unwrap();
    assert!(
        at(save) - at(&slot1[0]) <= 60 - 15,
        "the last save ended inside the limit less the grace: {shown}"
    );
    let by_rlctl = format!("rlctl: ending slot 1 after step {}'s save", save[2]);
    assert!(
        log.contains(&by_rlctl) || log.contains("rlctl: slot 1 is out of time"),
        "slot 1 ended by one of the two timers: {log}"
    );
    if let Some(stop) = slot1.iter().position(|m| m[1] == "stop") {
        assert_eq!(
            slot1[stop - 1][1],
            "save_ended",
            "the stop follows a save: {shown}"
        );
        assert!(log.contains(&by_rlctl), "{log}");
    }
    assert!(
        log.contains(&format!("rlctl: job {id} finished with status 0")),
        "{log}"
    );
}

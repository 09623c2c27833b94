//! `rlctl init NAME --discover` against stand-in sinfo, scontrol and sacctmgr that print what
//! SLURM 22.05 (Debian 12's) prints for the project's own test cluster (tests/cluster/up.sh
//! --accounting: partition boost_usr_prod, n1 and n2 of 32 CPUs, 494000 MB and gpu:4; QOS
//! normal and boost_qos_dbg). The outputs are in tests/data/discover/; each stand-in answers
//! only the exact arguments rlctl is meant to pass, and fails on anything else.

use crate::common::{fails, ok, rlctl, stdout, write_exec};
use std::path::{Path, PathBuf};
use std::process::Command;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/discover");

/// A login node: stand-in SLURM programs, `apptainer` and `gcc` on a PATH of their own, an ib0
/// and an eno1 in its /sys/class/net, and a home for the profile.
struct Login {
    dir: tempfile::TempDir,
}

impl Login {
    fn new() -> Login {
        let login = Login {
            dir: tempfile::tempdir().unwrap(),
        };
        let r = login.root();
        std::fs::create_dir_all(r.join("bin")).unwrap();
        for file in [
            "sinfo.txt",
            "scontrol_partition.txt",
            "scontrol_node.txt",
            "sacctmgr_qos.txt",
            "sacctmgr_assoc.txt",
        ] {
            std::fs::copy(Path::new(DATA).join(file), r.join(file)).unwrap();
        }
        login.program("sinfo", &[("--noheader --format=%P|%a|%D|%G", "sinfo.txt")]);
        login.program(
            "scontrol",
            &[
                ("--oneliner show partition", "scontrol_partition.txt"),
                ("--oneliner show node", "scontrol_node.txt"),
            ],
        );
        login.program(
            "sacctmgr",
            &[
                (
                    "--noheader --parsable2 show qos format=Name,MaxWall,MaxTRES,MaxTRESPU,MaxSubmitPU",
                    "sacctmgr_qos.txt",
                ),
                (
                    "--noheader --parsable2 show assoc where user=me format=Account,Partition,QOS",
                    "sacctmgr_assoc.txt",
                ),
            ],
        );
        write_exec(&r.join("bin/apptainer"), "#!/bin/sh\nexit 0\n");
        write_exec(&r.join("bin/gcc"), "#!/bin/sh\nexit 0\n");
        for (nic, kind) in [("eno1", "1"), ("ib0", "32"), ("lo", "772")] {
            let dir = r.join("host/sys/class/net").join(nic);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("type"), format!("{kind}\n")).unwrap();
        }
        std::fs::create_dir_all(r.join("host/proc/net")).unwrap();
        std::fs::write(
            r.join("host/proc/net/route"),
            "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n\
             eno1\t00000000\t0102A8C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n",
        )
        .unwrap();
        std::fs::create_dir_all(r.join("host/proc/sys/kernel")).unwrap();
        std::fs::write(r.join("host/proc/sys/kernel/hostname"), "login01\n").unwrap();
        login
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    /// A stand-in that prints `file` for each exact argument line, and fails otherwise.
    fn program(&self, name: &str, answers: &[(&str, &str)]) {
        let mut script = String::from("#!/bin/sh\ncase \"$*\" in\n");
        for (args, file) in answers {
            script.push_str(&format!(
                "  '{args}') exec /bin/cat '{}' ;;\n",
                self.root().join(file).display()
            ));
        }
        script.push_str(&format!(
            "  *) echo \"{name}: error: unexpected arguments: $*\" >&2; exit 1 ;;\nesac\n"
        ));
        write_exec(&self.root().join("bin").join(name), &script);
    }

    /// Replaces a stand-in with a script of its own (`body` after the `#!/bin/sh` line, its
    /// first line a comment saying which SLURM program it imitates and how).
    fn script(&self, name: &str, body: &str) {
        write_exec(
            &self.root().join("bin").join(name),
            &format!("#!/bin/sh\n{body}\n"),
        );
    }

    /// Replaces a stand-in with one that fails as `message` on stderr.
    fn failing(&self, name: &str, message: &str) {
        write_exec(
            &self.root().join("bin").join(name),
            &format!("#!/bin/sh\necho '{message}' >&2\nexit 1\n"),
        );
    }

    fn profile(&self, name: &str) -> PathBuf {
        self.root().join(format!("xdg/rlctl/clusters/{name}.toml"))
    }

    fn work(&self) -> String {
        format!("{}/work/me", self.root().display())
    }

    fn scratch(&self) -> String {
        format!("{}/scratch/me", self.root().display())
    }

    /// rlctl as the user `me` on this login node, its folders given.
    fn rlctl(&self) -> Command {
        let r = self.root();
        let mut cmd = rlctl();
        cmd.env("HOME", r.join("home"))
            .env("XDG_CONFIG_HOME", r.join("xdg"))
            .env("USER", "me")
            .env("PATH", r.join("bin"))
            .env("RLCTL_SINFO", r.join("bin/sinfo"))
            .env("RLCTL_SCONTROL", r.join("bin/scontrol"))
            .env("RLCTL_SACCTMGR", r.join("bin/sacctmgr"))
            .env("RLCTL_DISCOVER_ROOT", r.join("host"));
        for var in ["WORK", "FAST", "SCRATCH"] {
            cmd.env_remove(var);
        }
        cmd
    }

    fn discover(&self, extra: &[&str]) -> Command {
        let mut cmd = self.rlctl();
        cmd.args(["init", "site", "--discover", "--work", &self.work()])
            .args(["--scratch", &self.scratch()])
            .args(extra);
        cmd
    }
}

/// The comment above `value_line`, which must appear once.
fn comment_of<'a>(text: &'a str, value_line: &str) -> &'a str {
    let lines: Vec<&str> = text.lines().collect();
    let at: Vec<usize> = (0..lines.len())
        .filter(|i| lines[*i] == value_line)
        .collect();
    assert_eq!(at.len(), 1, "`{value_line}` is not once in:\n{text}");
    lines[at[0] - 1]
}

#[test]
fn every_discovered_value_says_where_it_came_from() {
    let login = Login::new();
    let out = ok(&mut login.discover(&["--account", "rlctl_test"]));
    let text = std::fs::read_to_string(login.profile("site")).unwrap();
    let node = "# discovered: scontrol --oneliner show node (n1, n2)";
    let qos = "# discovered: `sacctmgr --noheader --parsable2 show qos format=Name,MaxWall,MaxTRES,MaxTRESPU,MaxSubmitPU`";
    let expected = [
        ("account = \"rlctl_test\"", "# given: --account"),
        (
            "partition = \"boost_usr_prod\"",
            "# discovered: sinfo --noheader --format=%P|%a|%D|%G: the default partition (marked `*`)",
        ),
        ("gpus = 4", &format!("{node}: Gres=gpu:4") as &str),
        (
            "cpus = 32",
            &format!("{node}: CPUEfctv/CPUTot=32 (the fewest)"),
        ),
        (
            "mem = \"494000M\"",
            &format!("{node}: RealMemory=494000 (MB, the least)"),
        ),
        ("arch = \"x86_64\"", &format!("{node}: Arch=x86_64")),
        (
            "interconnect = \"ib0\"",
            "# discovered: /sys/class/net/ib0 on this login node: InfiniBand; compute nodes name theirs alike on the clusters rlctl knows",
        ),
        (
            "head_address = \"interface\"",
            "# discovered: the head's address is ib0's, the InfiniBand NIC",
        ),
        (
            "runtime = \"apptainer\"",
            &format!(
                "# discovered: `apptainer` on this login node's PATH: {}/bin/apptainer",
                login.root().display()
            ),
        ),
        (
            &format!("program = \"{}/bin/apptainer\"", login.root().display()) as &str,
            &format!(
                "# discovered: `apptainer` on this login node's PATH: {}/bin/apptainer",
                login.root().display()
            ),
        ),
        (
            &format!("gcc_bin = \"{}/bin\"", login.root().display()),
            &format!(
                "# discovered: `gcc` on this login node's PATH: {}/bin/gcc",
                login.root().display()
            ),
        ),
        (&format!("WORK = \"{}\"", login.work()), "# given: --work"),
        (
            &format!("SCRATCH = \"{}\"", login.scratch()),
            "# given: --scratch",
        ),
    ];
    for (line, comment) in expected {
        assert_eq!(comment_of(&text, line), comment, "{line}");
    }
    // Both QOS of the user's associations, with accounting's limits; where the QOS sets no
    // node limit, the partition's node count.
    for name in ["normal", "boost_qos_dbg"] {
        assert_eq!(
            comment_of(&text, &format!("name = \"{name}\"")),
            format!("{qos}: {name} (yours: sacctmgr show assoc)")
        );
    }
    let qos_tables: Vec<&str> = text.split("[[slurm.qos]]").skip(1).collect();
    assert!(qos_tables[0].contains(&format!(
        "{qos}: normal: MaxWall=23:59:00\nmax_wall = \"23:59:00\"\n"
    )));
    assert!(qos_tables[0].contains(
        "# discovered: `scontrol --oneliner show partition`: boost_usr_prod MaxNodes=UNLIMITED, TotalNodes=2\nmax_nodes = 2\n"
    ));
    assert!(qos_tables[1].contains(&format!(
        "{qos}: boost_qos_dbg: MaxWall=00:30:00\nmax_wall = \"00:30:00\"\n"
    )));
    assert!(qos_tables[1].contains(&format!(
        "{qos}: boost_qos_dbg: MaxTRES=node=2\nmax_nodes = 2\n"
    )));
    // The report names the file and the guesses left.
    let said = stdout(&out);
    assert!(
        said.starts_with(&format!(
            "wrote {}: a draft of partition boost_usr_prod with ",
            login.profile("site").display()
        )),
        "{said}"
    );
    assert!(said.contains("  guess: node.gpu_mem_gib\n"), "{said}");
}

#[test]
fn guesses_are_marked_and_doctor_lists_the_ones_left() {
    let login = Login::new();
    ok(&mut login.discover(&[]));
    let text = std::fs::read_to_string(login.profile("site")).unwrap();
    // Two accounts in the user's associations: the first, to confirm.
    assert_eq!(
        comment_of(&text, "account = \"root\""),
        "# guess: confirm (`sacctmgr show assoc where user=$USER` lists root, rlctl_test: choose the one to charge)"
    );
    let guessed = [
        "gpu_request = \"gres\"",
        "gpu_type = \"GPU\"",
        "gpu_mem_gib = 40",
        "max_gpu_memory_utilization = 0.85",
        "max_params_b_one_node = 19",
        "ray_tmp_root = \"/tmp\"",
        "skyrl = \"${WORK}/code/MarinSkyRL\"",
        "venv = \"${SCRATCH}/skyrl_venv\"",
        "schema = \"marinskyrl-a559688\"",
        "image = \"${WORK}/images/skyrl.sif\"",
        "image_kind = \"sif\"",
    ];
    for line in guessed {
        assert!(
            comment_of(&text, line).starts_with("# guess: confirm ("),
            "{line}: {text}"
        );
    }
    // Nothing else is a guess.
    let marks = text
        .lines()
        .filter(|l| l.starts_with("# guess: confirm ("))
        .count();
    assert_eq!(marks, guessed.len() + 1, "{text}");

    // doctor reads the draft and lists each guess left; a confirmed one (its mark deleted)
    // is no longer listed.
    let confirmed = text.replace(
        "# guess: confirm (`sacctmgr show assoc where user=$USER` lists root, rlctl_test: choose the one to charge)\n",
        "",
    );
    std::fs::write(login.profile("site"), confirmed).unwrap();
    let doctor = login
        .rlctl()
        .args(["doctor", "--cluster", "site"])
        .output()
        .unwrap();
    let said = stdout(&doctor);
    assert_eq!(doctor.status.code(), Some(1), "{said}");
    for key in [
        "slurm.gpu_request",
        "node.gpu_mem_gib",
        "software.skyrl",
        "container.image",
    ] {
        assert!(
            said.lines().any(|l| l.starts_with("problem")
                && l.contains("guess")
                && l.contains(&format!("{key}: "))),
            "{key}: {said}"
        );
    }
    assert!(!said.contains("slurm.account"), "{said}");
}

#[test]
fn the_draft_loads_and_the_canary_plans_on_it() {
    let login = Login::new();
    ok(&mut login.discover(&["--account", "rlctl_test"]));
    let show = ok(login
        .rlctl()
        .args(["launch", "gsm8k-canary", "--dry-run", "--cluster", "site"]));
    let script = stdout(&show);
    for line in [
        "#SBATCH --account=rlctl_test",
        "#SBATCH --partition=boost_usr_prod",
        "#SBATCH --qos=boost_qos_dbg",
        "#SBATCH --gres=gpu:4",
        "#SBATCH --mem=494000M",
    ] {
        assert!(script.contains(line), "{line}: {script}");
    }
    // The preflight's structure checks pass on the draft as it stands.
    let check = ok(login
        .rlctl()
        .args(["check", "gsm8k-canary", "--cluster", "site"]));
    assert!(
        stdout(&check).contains("gsm8k-canary: every preflight check passed"),
        "{}",
        stdout(&check)
    );
}

#[test]
fn an_existing_profile_is_kept_unless_forced() {
    let login = Login::new();
    ok(&mut login.discover(&["--account", "rlctl_test"]));
    let path = login.profile("site");
    std::fs::write(&path, "# mine\n").unwrap();
    let err = fails(&mut login.discover(&["--account", "rlctl_test"]));
    assert!(
        err.contains(&format!(
            "`{}` exists already: pass --force to draft it again",
            path.display()
        )),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "# mine\n");
    ok(&mut login.discover(&["--account", "rlctl_test", "--force"]));
    assert!(
        std::fs::read_to_string(&path)
            .unwrap()
            .contains("partition = \"boost_usr_prod\"")
    );
}

#[test]
fn a_cluster_without_gpus_in_its_gres_is_told_so() {
    let login = Login::new();
    for file in ["sinfo.txt", "scontrol_node.txt"] {
        let path = login.root().join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("gpu:4", "(null)")).unwrap();
    }
    let out = login.discover(&["--account", "x"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = crate::common::stderr(&out);
    assert!(
        err.contains("no partition of this cluster has GPUs in its GRES (`scontrol --oneliner show node` shows no `gpu:` in any node's Gres="),
        "{err}"
    );
    assert!(err.contains("rlctl runs GPU jobs"), "{err}");
    assert!(!login.profile("site").exists());
}

#[test]
fn without_accounting_the_qos_is_a_guess_with_the_partitions_limits() {
    let login = Login::new();
    login.failing(
        "sacctmgr",
        "sacctmgr: error: Problem talking to the database: Connection refused",
    );
    let out = ok(&mut login.discover(&["--account", "rlctl_test"]));
    let text = std::fs::read_to_string(login.profile("site")).unwrap();
    assert!(
        comment_of(&text, "name = \"normal\"").starts_with("# guess: confirm (no QOS list: `"),
        "{text}"
    );
    assert!(text.contains("Connection refused; without accounting SLURM ignores --qos)"));
    assert_eq!(
        comment_of(&text, "max_wall = \"1-00:00:00\""),
        "# discovered: `scontrol --oneliner show partition`: boost_usr_prod MaxTime=1-00:00:00 (the QOS sets no MaxWall)"
    );
    assert!(
        stdout(&out).contains("  no QOS from accounting: `"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn no_slurm_here_is_a_clear_refusal() {
    let login = Login::new();
    for program in ["sinfo", "scontrol"] {
        login.failing(
            program,
            &format!(
                "{program}: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host"
            ),
        );
    }
    let err = fails(&mut login.discover(&[]));
    assert!(
        err.contains("run this on a login node of a SLURM cluster"),
        "{err}"
    );
    assert!(err.contains("RLCTL_SINFO"), "{err}");
    let err = fails(&mut Login::new().discover(&["--partition", "nope"]));
    assert!(
        err.contains("--partition nope: `sinfo --noheader --format=%P|%a|%D|%G` lists no such partition; it lists boost_usr_prod"),
        "{err}"
    );
}

#[test]
fn a_default_partition_without_gpus_gives_way_to_one_with() {
    let login = Login::new();
    let path = |f: &str| login.root().join(f);
    std::fs::write(
        path("sinfo.txt"),
        "lrd_all_serial*|up|1|(null)\nboost_usr_prod|up|2|gpu:4\n",
    )
    .unwrap();
    let nodes = std::fs::read_to_string(path("scontrol_node.txt")).unwrap();
    let n1 = nodes.lines().next().unwrap();
    let serial = n1
        .replace("NodeName=n1 ", "NodeName=s1 ")
        .replace("Gres=gpu:4", "Gres=(null)")
        .replace("Partitions=boost_usr_prod", "Partitions=lrd_all_serial");
    std::fs::write(path("scontrol_node.txt"), format!("{serial}\n{nodes}")).unwrap();
    ok(&mut login.discover(&["--account", "rlctl_test"]));
    let text = std::fs::read_to_string(login.profile("site")).unwrap();
    assert_eq!(
        comment_of(&text, "partition = \"boost_usr_prod\""),
        "# discovered: sinfo --noheader --format=%P|%a|%D|%G: the first partition with GPU nodes; the default, lrd_all_serial, has none"
    );
    assert!(text.contains("(n1, n2): Gres=gpu:4\ngpus = 4\n"), "{text}");
    let err = fails(&mut login.discover(&["--partition", "lrd_all_serial", "--force"]));
    assert!(
        err.contains("--partition lrd_all_serial: no node of it has GPUs in its GRES"),
        "{err}"
    );
    assert!(
        err.contains("of this cluster's partitions boost_usr_prod has GPUs; pass one of them"),
        "{err}"
    );
}

#[test]
fn a_client_that_hangs_or_floods_leaves_guesses_not_an_abort() {
    let login = Login::new();
    login.script(
        "sinfo",
        "# Imitates sinfo waiting on a controller that never answers: it never ends.\nexec /bin/sleep 600",
    );
    // scontrol answers for partitions, and floods for nodes.
    let partitions = login.root().join("scontrol_partition.txt");
    login.script(
        "scontrol",
        &format!(
            "# Imitates scontrol: its partitions as SLURM 22.05 prints them, and a `show node` that \
             prints without end (a runaway node list).\n\
             case \"$*\" in\n  '--oneliner show partition') exec /bin/cat '{}' ;;\n  \
             *) exec /usr/bin/yes 'NodeName=n1 CPUTot=32 RealMemory=494000 Gres=gpu:4 Partitions=boost_usr_prod' ;;\nesac",
            partitions.display()
        ),
    );
    login.script(
        "sacctmgr",
        "# Imitates sacctmgr printing its QOS lines without end.\nexec /usr/bin/yes 'normal|23:59:00|||'",
    );
    let start = std::time::Instant::now();
    let out = ok(&mut login.discover(&["--account", "rlctl_test"]));
    // sinfo's 20 s, then the floods stopped at 16 MiB each.
    assert!(start.elapsed().as_secs() < 60, "{:?}", start.elapsed());
    let said = stdout(&out);
    let bin = login.root().join("bin");
    for unread in [
        format!(
            "could not read: `{}/sinfo --noheader --format=%P|%a|%D|%G` did not answer within 20 s",
            bin.display()
        ),
        format!(
            "could not read: `{}/scontrol --oneliner show node` printed more than 16.0 MiB and was stopped",
            bin.display()
        ),
    ] {
        assert!(
            said.contains(&format!("  {unread}; its values are guesses\n")),
            "{said}"
        );
    }
    assert!(
        said.contains("printed more than 16.0 MiB and was stopped"),
        "{said}"
    );
    let text = std::fs::read_to_string(login.profile("site")).unwrap();
    assert!(
        text.contains("# could not read: `") && text.contains("did not answer within 20 s"),
        "{text}"
    );
    // The partition comes from scontrol's list, a guess since no node said it has GPUs.
    assert!(
        comment_of(&text, "partition = \"boost_usr_prod\"").starts_with(
            "# guess: confirm (scontrol --oneliner show partition: the default partition; whether it has GPU nodes is unknown: `"
        ),
        "{text}"
    );
    for line in ["gpus = 4", "cpus = 32", "mem = \"0\"", "name = \"normal\""] {
        assert!(
            comment_of(&text, line).starts_with("# guess: confirm ("),
            "{line}: {text}"
        );
    }
    // The partition's own limits were read: they stay discovered.
    assert!(text.contains("TotalNodes=2\nmax_nodes = 2\n"), "{text}");
    for key in ["slurm.partition", "node.gpus", "node.cpus", "node.mem"] {
        assert!(said.contains(&format!("  guess: {key}\n")), "{key}: {said}");
    }
}

#[test]
fn a_frozen_qos_is_passed_over_and_the_rest_drafted() {
    let login = Login::new();
    std::fs::write(
        login.root().join("sacctmgr_qos.txt"),
        "normal|23:59:00|||\nboost_qos_dbg|00:30:00|node=2||\nboost_qos_frozen|1-00:00:00|||0\n",
    )
    .unwrap();
    std::fs::write(
        login.root().join("sacctmgr_assoc.txt"),
        "rlctl_test||boost_qos_dbg,boost_qos_frozen,normal\n",
    )
    .unwrap();
    let out = ok(&mut login.discover(&[]));
    let text = std::fs::read_to_string(login.profile("site")).unwrap();
    assert!(!text.contains("name = \"boost_qos_frozen\""), "{text}");
    assert!(text.contains("name = \"normal\"") && text.contains("name = \"boost_qos_dbg\""));
    let why = "QOS boost_qos_frozen: `sacctmgr --noheader --parsable2 show qos format=Name,MaxWall,MaxTRES,MaxTRESPU,MaxSubmitPU` \
               says MaxSubmitPU=0, so no job of yours gets in under it; add it by hand once the site opens it";
    assert!(text.contains(&format!("# passed over: {why}\n")), "{text}");
    assert!(
        stdout(&out).contains(&format!("  passed over: {why}\n")),
        "{}",
        stdout(&out)
    );
    // Every QOS frozen: one guessed entry that says so.
    std::fs::write(
        login.root().join("sacctmgr_assoc.txt"),
        "rlctl_test||boost_qos_frozen\n",
    )
    .unwrap();
    ok(&mut login.discover(&["--force"]));
    let text = std::fs::read_to_string(login.profile("site")).unwrap();
    assert!(
        comment_of(&text, "name = \"normal\"")
            .starts_with("# guess: confirm (every QOS you may use is frozen (MaxSubmitPU=0 in `"),
        "{text}"
    );
}

#[test]
fn a_cpu_count_past_two_to_the_32_is_a_guess_not_a_wrapped_one() {
    let login = Login::new();
    let path = login.root().join("scontrol_node.txt");
    let nodes = std::fs::read_to_string(&path).unwrap();
    // 2^32 + 1 CPUs on n1: as a u32 it would wrap to 1.
    let n1 = nodes.lines().next().unwrap();
    let odd = n1.replace(
        "CPUEfctv=32 CPUTot=32",
        "CPUEfctv=4294967297 CPUTot=4294967297",
    );
    std::fs::write(&path, nodes.replacen(n1, &odd, 1)).unwrap();
    let out = ok(&mut login.discover(&["--account", "rlctl_test"]));
    let text = std::fs::read_to_string(login.profile("site")).unwrap();
    assert!(!text.contains("cpus = 1\n"), "{text}");
    assert_eq!(
        comment_of(&text, "cpus = 32"),
        "# guess: confirm (scontrol --oneliner show node (n1, n2): n1 says CPUEfctv/CPUTot=4294967297, not a CPU count \
         rlctl can hold (1 to 4294967295): give the CPUs a job may use on one node)"
    );
    assert!(
        stdout(&out).contains("  guess: node.cpus\n"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_default_partition_rlctl_cannot_name_asks_for_partition() {
    let login = Login::new();
    let rename = |file: &str| {
        let path = login.root().join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("boost_usr_prod", "gpu+mig")).unwrap();
    };
    for file in ["sinfo.txt", "scontrol_partition.txt", "scontrol_node.txt"] {
        rename(file);
    }
    let out = login
        .discover(&["--account", "rlctl_test"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = crate::common::stderr(&out);
    assert!(
        err.contains(
            "the default partition `gpu+mig` has a name rlctl cannot write on an #SBATCH line"
        ),
        "{err}"
    );
    assert!(err.contains("pass --partition NAME"), "{err}");
    // No file is named that was not written.
    assert!(
        !err.contains("site.toml") && !err.contains("clusters/"),
        "{err}"
    );
    assert!(!login.profile("site").exists());

    // Another GPU partition with a plain name: drafted, the choice a guess that says why.
    let sinfo = login.root().join("sinfo.txt");
    std::fs::write(&sinfo, "gpu+mig*|up|2|gpu:4\nbooster|up|2|gpu:4\n").unwrap();
    let nodes = login.root().join("scontrol_node.txt");
    let text = std::fs::read_to_string(&nodes).unwrap();
    std::fs::write(
        &nodes,
        text.replace("Partitions=gpu+mig", "Partitions=gpu+mig,booster"),
    )
    .unwrap();
    let out = ok(&mut login.discover(&["--account", "rlctl_test"]));
    let text = std::fs::read_to_string(login.profile("site")).unwrap();
    assert!(
        comment_of(&text, "partition = \"booster\"").starts_with(
            "# guess: confirm (the default partition, gpu+mig, has a name rlctl cannot write;"
        ),
        "{text}"
    );
    assert!(
        stdout(&out).contains("  passed over: the default partition `gpu+mig`"),
        "{}",
        stdout(&out)
    );
}

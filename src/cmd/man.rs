//! `rlctl man`: one self-contained man page. Every command is a section of it (no
//! `rlctl-launch(1)` pages are installed to point at), followed by the environment, the files
//! rlctl reads and writes, and the exit status.

use crate::cli::Cli;
use crate::error::{Error, Result};
use crate::util::out::emit;
use clap::CommandFactory;
use clap_mangen::Man;
use std::io::Write;

/// The variables rlctl reads, and what each does.
const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "RLCTL_CLUSTER",
        "The cluster profile, as --cluster (default leonardo).",
    ),
    (
        "RLCTL_PRESETS",
        "Your presets folder, as --presets: its clusters/, runs/ and grids/ replace the embedded files of the same name.",
    ),
    (
        "XDG_CONFIG_HOME",
        "Where the default presets folder is: $XDG_CONFIG_HOME/rlctl, else ~/.config/rlctl; rlctl init writes your profile there.",
    ),
    (
        "RLCTL_SBATCH, RLCTL_SQUEUE, RLCTL_SACCT, RLCTL_SCANCEL",
        "The SLURM programs to call, as --sbatch, --squeue, --sacct and --scancel.",
    ),
    (
        "RLCTL_SINFO, RLCTL_SCONTROL, RLCTL_SACCTMGR",
        "The SLURM programs rlctl init --discover reads the cluster with, as its --sinfo, --scontrol and --sacctmgr.",
    ),
    (
        "NO_COLOR",
        "Set (to anything but empty): no colours, even on a terminal.",
    ),
    (
        "COMPLETE",
        "Set by the completion script when it calls rlctl back for candidates (see rlctl completions).",
    ),
];

/// The files rlctl reads and writes, and what each holds.
const FILES: &[(&str, &str)] = &[
    (
        "~/.config/rlctl/clusters/NAME.toml",
        "Your cluster profile (account, $WORK and scratch folders, QOS limits), written by rlctl init.",
    ),
    (
        "~/.config/rlctl/runs/*.toml, ~/.config/rlctl/grids/*.toml",
        "Your run presets and grids, beside the embedded ones.",
    ),
    (
        "RUN_ROOT/ledger.jsonl",
        "One JSON line per submitted job (RUN_ROOT is the profile's storage.run_root, on $WORK); status, tend, report, clean and retire read it.",
    ),
    (
        "RUN_ROOT/GRID/CELL/NNN/",
        "A run folder: sbatch.sh, run.sh, the plan, and the job's log.",
    ),
    (
        "RUN_ROOT/GRID/grid.toml",
        "What grid --all asked: every cell in order, submitted, recorded or waiting for room in its QOS.",
    ),
    (
        "RUN_ROOT/GRID/report/",
        "The grid's report (markdown table and SVG plots), written by report, and by tend once every cell has ended.",
    ),
    (
        "RUN_ROOT/.sealed, .LOG.steps, .LOG.row, RUN_ROOT/.ledger.jsonl.groups",
        "Caches (sealed runs, parsed steps, status rows, recorded speeds): only faster reads; a bad one is rebuilt.",
    ),
    (
        "CHECKPOINT_ROOT/.../",
        "A run's checkpoints, never on scratch; wandb_run_id and the offline W&B runs beside them.",
    ),
];

const EXIT_STATUS: &[(&str, &str)] = &[
    ("0", "All good."),
    (
        "1",
        "The command ran and found something wrong: preflight problems, an alert, doctor problems, a run that needs a person.",
    ),
    (
        "2",
        "It could not do its job: usage, unreadable input, a failed SLURM command.",
    ),
];

/// Text as roff reads it literally: backslashes and hyphens escaped, no line read as a request.
fn roff(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    (escaped.lines())
        .map(|l| {
            if l.starts_with('.') || l.starts_with('\'') {
                format!("\\&{l}")
            } else {
                l.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A section of tagged paragraphs.
fn tagged(page: &mut String, title: &str, items: &[(&str, &str)]) {
    page.push_str(&format!(".SH {title}\n"));
    for (tag, text) in items {
        page.push_str(&format!(".TP\n\\fB{}\\fR\n{}\n", roff(tag), roff(text)));
    }
}

fn render(man: &Man, part: impl Fn(&Man, &mut dyn Write) -> std::io::Result<()>) -> Result<String> {
    let mut bytes = Vec::new();
    part(man, &mut bytes).map_err(|e| Error::io("write", "standard output", e))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

pub fn run(out: &mut dyn Write) -> Result<()> {
    let mut cli = Cli::command();
    cli.build();
    let man = Man::new(cli.clone());
    let mut page = String::new();
    page.push_str(&render(&man, Man::render_title)?);
    page.push_str(&render(&man, Man::render_name_section)?);
    page.push_str(&render(&man, Man::render_synopsis_section)?);
    page.push_str(&render(&man, Man::render_description_section)?);
    page.push_str(&render(&man, Man::render_options_section)?.replacen(
        ".SH OPTIONS",
        ".SH GLOBAL OPTIONS",
        1,
    ));
    page.push_str(".SH COMMANDS\n");
    for sub in cli.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = sub.get_name();
        page.push_str(&format!(".SS \"rlctl {}\"\n", roff(name)));
        let about = (sub.get_long_about().or(sub.get_about())).map(|a| a.to_string());
        if let Some(about) = about {
            page.push_str(&format!("{}\n", roff(&about)));
        }
        let usage = sub.clone().bin_name(format!("rlctl {name}")).render_usage();
        let usage = usage.to_string();
        let usage = usage.trim_start_matches("Usage: ");
        page.push_str(&format!(".PP\n\\fB{}\\fR\n", roff(usage)));
        // The command's own options, its section heading dropped: they sit under its name.
        let options = render(&Man::new(sub.clone()), Man::render_options_section)?;
        let options = options.replacen(".SH OPTIONS\n", "", 1);
        if options.contains(".TP") {
            page.push_str(&options);
        }
    }
    tagged(&mut page, "ENVIRONMENT", ENVIRONMENT);
    tagged(&mut page, "FILES", FILES);
    tagged(&mut page, "EXIT STATUS", EXIT_STATUS);
    page.push_str(".SH EXAMPLES\n");
    for example in [
        "rlctl launch gsm8k-canary --dry-run",
        "rlctl grid tbs128 -- trainer.epochs=2",
        "rlctl grid --all gsm8k-throughput",
        "rlctl status gsm8k-throughput",
    ] {
        page.push_str(&format!(".PP\n.nf\n{}\n.fi\n", roff(example)));
    }
    page.push_str(".SH \"SEE ALSO\"\nsbatch(1), squeue(1), sacct(1), scancel(1)\n");
    page.push_str(&render(&man, Man::render_version_section)?);
    emit(out, &page)
}

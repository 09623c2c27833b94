//! `rlctl mcp`'s arguments: where each tool call runs (here, or over ssh) and how long it may take.

use clap::Args;

/// `rlctl mcp`'s arguments.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Carry each tool call out on HOST as one `ssh -o BatchMode=yes HOST rlctl ... --json`, this
    /// server running where the agent runs (a login node that ends long processes is never
    /// asked to keep one).
    #[arg(long, value_name = "HOST")]
    pub ssh: Option<String>,
    /// With --ssh: the rlctl program on HOST.
    #[arg(long, value_name = "PATH", default_value = "rlctl", requires = "ssh")]
    pub remote_rlctl: String,
    /// With --ssh: the ssh program to call.
    #[arg(
        long,
        env = "RLCTL_SSH",
        default_value = "ssh",
        value_name = "PATH",
        requires = "ssh"
    )]
    pub ssh_program: String,
    /// With --ssh: one more ssh option, passed as `-o OPTION` (repeatable), e.g.
    /// `--ssh-option Port=2222 --ssh-option IdentityFile=~/.ssh/leonardo`.
    #[arg(long, value_name = "KEY=VALUE", requires = "ssh")]
    pub ssh_option: Vec<String>,
    /// Seconds one tool call may take; its command is killed then (the default stays under a
    /// login node's ~100 s). `wait` is given a timeout a few seconds shorter.
    #[arg(long, value_name = "S", default_value_t = 90, value_parser = clap::value_parser!(u64).range(10..=86_400))]
    pub call_timeout: u64,
}

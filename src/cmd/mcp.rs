//! `rlctl mcp [--ssh HOST]`: rlctl's commands as tools for an agent (see `crate::mcp`).

use super::Session;
use crate::cli::mcp::McpArgs;
use crate::error::{Error, Result};
use crate::mcp::Runner;
use crate::preset::user_dir::Chosen;
use std::time::Duration;

pub fn run(session: &Session, args: &McpArgs) -> Result<()> {
    crate::mcp::serve(
        runner(session, args)?,
        Duration::from_secs(args.call_timeout),
    )
}

/// This rlctl with the cluster and presets folder the server was given, or the remote one.
fn runner(session: &Session, args: &McpArgs) -> Result<Runner> {
    if let Some(host) = &args.ssh {
        // A host that reads as an ssh option would be one.
        if host.is_empty() || host.starts_with('-') || host.chars().any(char::is_control) {
            return Err(Error::BadFlag {
                flag: "--ssh",
                value: host.clone(),
                reason: "a host name or alias from ~/.ssh/config (it may not start with `-`)"
                    .to_owned(),
            });
        }
        return Ok(Runner::Ssh {
            program: args.ssh_program.clone(),
            options: args.ssh_option.clone(),
            host: host.clone(),
            rlctl: args.remote_rlctl.clone(),
        });
    }
    let exe = std::env::current_exe()
        .map_err(|e| Error::Unsupported(format!("cannot find rlctl's own executable: {e}")))?;
    let mut globals = vec![format!("--cluster={}", session.cluster_name())];
    if let (Chosen::Given, Some(dir)) = (&session.presets.chosen, &session.presets.path) {
        globals.push(format!("--presets={dir}"));
    }
    Ok(Runner::Local {
        exe: exe.to_string_lossy().into_owned(),
        globals,
    })
}

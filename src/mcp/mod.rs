//! `rlctl mcp`: a Model Context Protocol server on stdio whose tools are rlctl's commands, each
//! carried out by rlctl itself (here, or over ssh), mutations only on a confirmed dry run.

mod call;
mod child;
mod inputs;
mod runner;
mod token;
mod tools;

pub use runner::Runner;

use crate::error::{Error, Result};
use rmcp::ServiceExt;
use std::time::Duration;

/// Standard output as a file of its own: `main` holds std's stdout lock for the whole command,
/// and tokio's stdout writes through that lock from another thread (it would wait forever).
fn stdout() -> Result<tokio::fs::File> {
    use std::os::fd::AsFd;
    let fd = (std::io::stdout().as_fd().try_clone_to_owned())
        .map_err(|e| Error::io("open", "standard output", e))?;
    Ok(tokio::fs::File::from_std(std::fs::File::from(fd)))
}

/// Serves MCP on stdin/stdout until the client closes it; each tool call runs through `runner`
/// within `limit`.
pub fn serve(runner: Runner, limit: Duration) -> Result<()> {
    let tokens = token::Tokens::new().map_err(|e| Error::io("read", "/dev/urandom", e))?;
    let core = call::Core {
        runner,
        tokens,
        limit,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Unsupported(format!("cannot start the MCP server: {e}")))?;
    runtime.block_on(async move {
        let service = (tools::Server::new(core))
            .serve((tokio::io::stdin(), stdout()?))
            .await
            .map_err(|e| Error::Unsupported(format!("MCP session did not start: {e}")))?;
        service
            .waiting()
            .await
            .map_err(|e| Error::Unsupported(format!("MCP session ended: {e}")))?;
        Ok(())
    })
}

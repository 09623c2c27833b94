//! The MCP tools: one per rlctl command an agent needs, each carried out by that command (see
//! `call`). Read-only tools are marked so; the five that act ask for a `confirm` token first.

use super::call::{Answer, Core, Mutation};
use super::inputs::{self, *};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ErrorData, ServerHandler, tool, tool_handler, tool_router};
use std::sync::Arc;

type Reply = Result<CallToolResult, ErrorData>;

/// The server: the calls' shared core, and the tools' router the macros build.
#[derive(Clone)]
pub struct Server {
    core: Arc<Core>,
    tool_router: ToolRouter<Server>,
}

/// What the server tells an agent once, at the start.
const INSTRUCTIONS: &str = "rlctl launches SkyRL RL runs on SLURM. Workflow: `list`, then \
    `plan` a preset (the dry run: the plan, the estimate, the jobs, and a confirm token), then \
    `launch` with the same inputs and that token, `wait` for it, `status`, `metrics`, `report`. \
    launch, grid, cancel, retire and clean change nothing without `confirm`: called without it \
    they return what they would do and a token, valid once, for exactly those inputs and that \
    state. rlctl enforces resume, checkpoint and preflight rules itself: never edit rendered \
    scripts, resume by hand, or delete checkpoints outside `clean`.";

#[tool_router]
impl Server {
    pub fn new(core: Core) -> Server {
        Server {
            core: Arc::new(core),
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        description = "The presets folder in use, clusters, run presets, grids and their cells.",
        annotations(read_only_hint = true)
    )]
    async fn list(&self, Parameters(_): Parameters<Nothing>) -> Reply {
        self.read(Ok(vec!["list".to_owned()])).await
    }

    #[tool(
        description = "A preset's or cell's resolved plan, each knob with the layer that set it.",
        annotations(read_only_hint = true)
    )]
    async fn show(&self, Parameters(t): Parameters<Target>) -> Reply {
        self.read(t.words("show")).await
    }

    #[tool(
        description = "Every preflight check on a preset or cell (exit_code 1: problems found).",
        annotations(read_only_hint = true)
    )]
    async fn check(&self, Parameters(t): Parameters<Target>) -> Reply {
        self.read(t.words("check")).await
    }

    #[tool(
        description = "Steps, s/step, wall time, GPU-hours and slots of a preset or cell.",
        annotations(read_only_hint = true)
    )]
    async fn estimate(&self, Parameters(t): Parameters<Target>) -> Reply {
        self.read(t.words("estimate")).await
    }

    #[tool(
        description = "The dry run of `launch`: what it would submit, submitting nothing, and a \
                       `confirm` token for `launch` with these same inputs.",
        annotations(read_only_hint = true)
    )]
    async fn plan(&self, Parameters(spec): Parameters<LaunchSpec>) -> Reply {
        let inputs = inputs::canonical(&spec);
        let dry = spec.words(true);
        self.mutate("launch", inputs, dry, Ok(Vec::new()), None)
            .await
    }

    #[tool(
        description = "Submit a run preset. Without `confirm`: the dry run and a token, nothing \
                       submitted. With the token from `plan` or that call: submits once.",
        annotations(destructive_hint = false, open_world_hint = true)
    )]
    async fn launch(&self, Parameters(input): Parameters<LaunchInput>) -> Reply {
        let (dry, act) = (input.spec.words(true), input.spec.words(false));
        let inputs = inputs::canonical(&input);
        self.mutate("launch", inputs, dry, act, input.confirm).await
    }

    #[tool(
        description = "Submit a grid cell, or every cell of a grid (`all`). Without `confirm`: \
                       the dry run and a token; with it: submits once.",
        annotations(destructive_hint = false, open_world_hint = true)
    )]
    async fn grid(&self, Parameters(input): Parameters<GridInput>) -> Reply {
        let (dry, act) = (input.spec.words(true), input.spec.words(false));
        let inputs = inputs::canonical(&input);
        self.mutate("grid", inputs, dry, act, input.confirm).await
    }

    #[tool(
        description = "Recorded runs: SLURM state, step, s/step, ETA, alerts.",
        annotations(read_only_hint = true)
    )]
    async fn status(&self, Parameters(input): Parameters<StatusInput>) -> Reply {
        let words = match &input.run {
            Some(run) => inputs::named("status", "run", std::slice::from_ref(run)),
            None => Ok(vec!["status".to_owned()]),
        };
        self.read(words).await
    }

    #[tool(
        description = "Block until runs end COMPLETED (or start, or reach a step), at most \
                       `timeout_s` (the server caps it); exit_code 0 reached, 1 ended otherwise, \
                       2 not yet (call again).",
        annotations(read_only_hint = true)
    )]
    async fn wait(&self, Parameters(input): Parameters<WaitInput>) -> Reply {
        // A few seconds under the call's own limit: rlctl says where the runs are itself.
        let cap = self.core.limit.as_secs().saturating_sub(5).max(1);
        self.read(input.words(cap)).await
    }

    #[tool(
        description = "A run's per-step metrics from its log.",
        annotations(read_only_hint = true)
    )]
    async fn metrics(&self, Parameters(input): Parameters<OneRun>) -> Reply {
        self.read(inputs::named("metrics", "run", &[input.run]))
            .await
    }

    #[tool(
        description = "A run's SLURM log: its last lines (`tail`, default 200) or its last error.",
        annotations(read_only_hint = true)
    )]
    async fn logs(&self, Parameters(input): Parameters<LogsInput>) -> Reply {
        self.read(input.words()).await
    }

    #[tool(
        description = "A table comparing a grid's cells or runs (its markdown and plots are \
                       written under the run folder's report/, as the command does).",
        annotations(read_only_hint = false, destructive_hint = false)
    )]
    async fn report(&self, Parameters(input): Parameters<ReportInput>) -> Reply {
        self.read(input.words()).await
    }

    #[tool(
        description = "The knobs that differ between two runs, presets or cells, and runs' metrics.",
        annotations(read_only_hint = true)
    )]
    async fn diff(&self, Parameters(input): Parameters<DiffInput>) -> Reply {
        self.read(input.words()).await
    }

    #[tool(
        description = "Cancel a run's or grid's pending and running jobs. Without `confirm`: \
                       the jobs it would cancel and a token; with it: cancels once.",
        annotations(destructive_hint = true)
    )]
    async fn cancel(&self, Parameters(input): Parameters<CancelInput>) -> Reply {
        let words = inputs::named("cancel", "run", std::slice::from_ref(&input.run));
        self.confirmed("cancel", &input, words, input.confirm.clone())
            .await
    }

    #[tool(
        description = "Retire runs (jobs cancelled, checkpoint folders moved aside, recorded as \
                       history) so a grid runs the cell afresh. Needs `confirm` as cancel does.",
        annotations(destructive_hint = true)
    )]
    async fn retire(&self, Parameters(input): Parameters<RetireInput>) -> Reply {
        let words = inputs::named("retire", "run", &input.runs);
        self.confirmed("retire", &input, words, input.confirm.clone())
            .await
    }

    #[tool(
        description = "Remove finished runs' checkpoints (exports kept unless `exports`). Needs \
                       `confirm` as cancel does.",
        annotations(destructive_hint = true)
    )]
    async fn clean(&self, Parameters(input): Parameters<CleanInput>) -> Reply {
        self.confirmed("clean", &input, input.words(), input.confirm.clone())
            .await
    }
}

impl Server {
    /// A command that asks before acting: `--dry-run` shows, `--yes` acts.
    async fn confirmed<T: serde::Serialize>(
        &self,
        tool: &'static str,
        input: &T,
        words: Result<Vec<String>, Refusal>,
        confirm: Option<String>,
    ) -> Reply {
        let with = |flag: &str| (words.clone()).map(|w| [w, vec![flag.to_owned()]].concat());
        let inputs = inputs::canonical(input);
        self.mutate(tool, inputs, with("--dry-run"), with("--yes"), confirm)
            .await
    }

    async fn read(&self, words: Result<Vec<String>, Refusal>) -> Reply {
        let words = match words {
            Ok(words) => words,
            Err(why) => return Ok(reply(Answer::refused(why))),
        };
        let core = self.core.clone();
        blocking(move || core.read(words)).await
    }

    /// `tool`'s dry run, then its act on a matching token (see [`Core::mutate`]).
    async fn mutate(
        &self,
        tool: &'static str,
        inputs: String,
        dry: Result<Vec<String>, Refusal>,
        act: Result<Vec<String>, Refusal>,
        confirm: Option<String>,
    ) -> Reply {
        let (dry, act) = match (dry, act) {
            (Ok(dry), Ok(act)) => (dry, act),
            (Err(why), _) | (_, Err(why)) => return Ok(reply(Answer::refused(why))),
        };
        let m = Mutation {
            tool,
            inputs,
            dry,
            act,
            confirm,
        };
        let core = self.core.clone();
        blocking(move || core.mutate(m)).await
    }
}

/// Runs `f` (a child process, waited for) off the protocol's thread.
async fn blocking(f: impl FnOnce() -> Answer + Send + 'static) -> Reply {
    let answer = tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    Ok(reply(answer))
}

fn reply(answer: Answer) -> CallToolResult {
    let text = vec![ContentBlock::text(answer.value.to_string())];
    match answer.error {
        true => CallToolResult::error(text),
        false => CallToolResult::success(text),
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("rlctl", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}

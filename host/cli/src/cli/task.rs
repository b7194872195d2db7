//! `guild task SPECIALIST DESCRIPTION`. Warns first about loaded plugins whose component is
//! stale (a failed build, or sources changed since: [`super::stale`]), then runs the task,
//! anchored as `--criterion`, `--constraint` and `--anchor` say (docs/delegation.md#the-root-anchor).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use guild_host::types::{TaskResult, TaskStatus};
use guild_host::validate::CheckStatus;
use guild_host::{TaskAnchor, TaskRequest};

use super::{print_json, render, start_host_lazily};

/// The exit codes of `guild task` and `guild batch`, as `--help` shows them.
pub(crate) const EXIT_CODES: &str = "\
Exit codes:
  0  the task succeeded and its report passed validation
  1  error: the task could not start (configuration, unknown specialist, ...)
  2  usage: wrong arguments
  3  the task ran but validation did not pass (verdict failed, unknown or error)
  4  the task failed or timed out";

/// Exit code: validation did not pass.
const VALIDATION_NOT_PASSED: u8 = 3;
/// Exit code: the task failed or timed out.
const TASK_FAILED: u8 = 4;

/// Arguments of `guild task`.
#[derive(Args)]
pub(crate) struct TaskArgs {
    /// Specialist name or alias.
    specialist: String,
    /// The self-contained brief; `-` reads it from stdin.
    description: String,
    /// A completion criterion of the root anchor, should the specialist delegate (repeatable;
    /// default: "the report answers the task's description").
    #[arg(long = "criterion", value_name = "TEXT")]
    criteria: Vec<String>,
    /// A constraint every task the specialist delegates to must keep (repeatable).
    #[arg(long = "constraint", value_name = "TEXT")]
    constraints: Vec<String>,
    /// The root anchor from a JSON file: `{"completion_criteria": [...], "constraints": [...]}`
    /// (the flags add to it).
    #[arg(long, value_name = "FILE.json")]
    anchor: Option<PathBuf>,
}

/// The root anchor the arguments give: the file's, then the flags'.
fn anchor(args: &TaskArgs) -> anyhow::Result<TaskAnchor> {
    let mut anchor = match &args.anchor {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("failed to read the anchor file {}", path.display()))?;
            serde_json::from_str::<TaskAnchor>(&text).with_context(|| {
                format!(
                    "anchor file {}: expected {{\"completion_criteria\": [TEXT, ...], \"constraints\": [TEXT, ...]}}",
                    path.display()
                )
            })?
        }
        None => TaskAnchor::default(),
    };
    anchor
        .completion_criteria
        .extend(args.criteria.iter().cloned());
    anchor.constraints.extend(args.constraints.iter().cloned());
    Ok(anchor)
}

pub(crate) async fn run(config: &Path, args: TaskArgs, json: bool) -> anyhow::Result<ExitCode> {
    let anchor = anchor(&args)?;
    let description = if args.description == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("failed to read the description from stdin")?;
        s
    } else {
        args.description.clone()
    };
    let request = TaskRequest::new(&args.specialist, description).with_anchor(anchor);
    let host = start_host_lazily(config).await?;
    super::stale::warn(&host);
    // The task's own time is for the task: its plugins are loaded first, the others behind.
    let spinner = render::spinner(&format!("loading {}", args.specialist));
    host.load_for(&args.specialist).await;
    spinner.finish_and_clear();
    let spinner = render::spinner(&format!("running {}", args.specialist));
    let result = host.task_request(&request).await;
    spinner.finish_and_clear();
    let result = result?;
    let printed = if json {
        print_json(&result)
    } else {
        out!("{}", render::task_result(&result)).map_err(Into::into)
    };
    // A call the task left running (it timed out mid-call) records its outcome first.
    super::finish_calls(&host).await;
    // A reader that stopped early (`| head`) still gets the verdict in the exit code.
    if let Err(e) = printed
        && !super::is_broken_pipe(&e)
    {
        return Err(e);
    }
    Ok(ExitCode::from(exit_code(&result)))
}

/// The exit code for one task's result (see [`EXIT_CODES`]).
pub(crate) fn exit_code(result: &TaskResult) -> u8 {
    if result.status != TaskStatus::Succeeded {
        return TASK_FAILED;
    }
    match &result.validation {
        Some(v) if v.verdict != CheckStatus::Passed => VALIDATION_NOT_PASSED,
        _ => 0,
    }
}

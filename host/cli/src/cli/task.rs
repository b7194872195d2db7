//! `guild task SPECIALIST DESCRIPTION`. Warns first about loaded plugins whose component is
//! stale (a failed build, or sources changed since: [`super::stale`]), then runs the task.

use std::io::Read;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use guild_host::types::{TaskResult, TaskStatus};
use guild_host::validate::CheckStatus;

use super::{print_json, render, start_host};

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
}

pub(crate) async fn run(config: &Path, args: TaskArgs, json: bool) -> anyhow::Result<ExitCode> {
    let description = if args.description == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("failed to read the description from stdin")?;
        s
    } else {
        args.description
    };
    let host = start_host(config).await?;
    super::stale::warn(&host);
    let spinner = render::spinner(&format!("running {}", args.specialist));
    let result = host.task(&args.specialist, &description).await;
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

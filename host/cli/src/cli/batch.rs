//! `guild batch FILE`: a JSON batch, `{"tasks": [{"subagent_type", "description"}, ...]}` or a
//! bare array; `-` reads stdin.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use guild_host::TaskRequest;
use guild_host::session::render_batch;

use super::{print_json, render, start_host_lazily, task};

/// Arguments of `guild batch`.
#[derive(Args)]
pub(crate) struct BatchArgs {
    /// JSON file with the tasks; `-` for stdin.
    file: PathBuf,
}

#[derive(serde::Deserialize)]
#[serde(untagged)]
enum BatchFile {
    Wrapped { tasks: Vec<TaskRequest> },
    Bare(Vec<TaskRequest>),
}

pub(crate) async fn run(config: &Path, args: BatchArgs, json: bool) -> anyhow::Result<ExitCode> {
    let text = if args.file == Path::new("-") {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("failed to read the batch from stdin")?;
        s
    } else {
        std::fs::read_to_string(&args.file)
            .with_context(|| format!("failed to read {}", args.file.display()))?
    };
    let tasks = match serde_json::from_str::<BatchFile>(&text).with_context(|| {
        format!(
            "{}: expected {{\"tasks\": [{{\"subagent_type\": ..., \"description\": ...}}]}}",
            args.file.display()
        )
    })? {
        BatchFile::Wrapped { tasks } | BatchFile::Bare(tasks) => tasks,
    };
    let host = start_host_lazily(config).await?;
    super::stale::warn(&host);
    // The tasks' own time is for the tasks: their plugins are loaded first, the others behind.
    let spinner = render::spinner("loading the batch's specialists");
    for t in &tasks {
        host.load_for(&t.subagent_type).await;
    }
    spinner.finish_and_clear();
    let spinner = render::spinner(&format!("running {} tasks", tasks.len()));
    let items = host.session().batch(&tasks).await;
    spinner.finish_and_clear();
    let items = items?;
    let printed = if json {
        print_json(&items)
    } else {
        out!(
            "{}",
            guild_host::text::for_terminal(&render_batch(&items, render::task_result))
        )
        .map_err(Into::into)
    };
    // Calls the tasks left running (a task timed out mid-call) record their outcome first.
    super::finish_calls(&host).await;
    if let Err(e) = printed
        && !super::is_broken_pipe(&e)
    {
        return Err(e);
    }
    // The worst task decides, with the codes of `guild task`; a child that could not start
    // counts as a failed task.
    let code = items
        .iter()
        .map(|i| i.result.as_ref().map_or(4, task::exit_code))
        .max()
        .unwrap_or(0);
    Ok(ExitCode::from(code))
}

//! `guild batch FILE`: a JSON batch, `{"tasks": [{"subagent_type", "description"}, ...]}` or a
//! bare array; `-` reads stdin.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use guild_host::TaskRequest;
use guild_host::session::render_batch;
use guild_host::types::TaskStatus;

use super::{render, start_host};

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
    let host = start_host(config).await?;
    let spinner = render::spinner(&format!("running {} tasks", tasks.len()));
    let items = host.session().batch(&tasks).await;
    spinner.finish_and_clear();
    let items = items?;
    if json {
        println!("{}", serde_json::to_string_pretty(&items)?);
    } else {
        print!("{}", render_batch(&items, render::task_result));
    }
    let all_ok = items.iter().all(|i| {
        i.result
            .as_ref()
            .is_ok_and(|r| r.status == TaskStatus::Succeeded)
    });
    Ok(if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

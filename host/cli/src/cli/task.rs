//! `guild task SPECIALIST DESCRIPTION`.

use std::io::Read;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use guild_host::types::TaskStatus;

use super::{render, start_host};

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
    let spinner = render::spinner(&format!("running {}", args.specialist));
    let result = host.task(&args.specialist, &description).await;
    spinner.finish_and_clear();
    let result = result?;
    if json {
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else {
        print!("{}", render::task_result(&result));
    }
    Ok(if result.status == TaskStatus::Succeeded {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

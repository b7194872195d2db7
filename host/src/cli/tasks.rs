//! `guild tasks start | check | update | cancel | list`.
//!
//! A background task lives as long as the host process that runs it. Until `guild serve` keeps
//! a host running, `tasks start` runs the task in this process and streams its reports; while
//! it runs, a line `update <text>` or `cancel` on stdin updates or cancels it. The other
//! A tool that needs approval pauses the task and shows the request; `approve` or `deny` on
//! stdin answers it. The other subcommands work on the task store, so `check` and `list` also show tasks of earlier runs
//! (a task whose process ended shows `interrupted`, with its reports), and `update` restarts an
//! interrupted task with the update appended.

use std::path::Path;
use std::process::ExitCode;

use clap::Subcommand;
use guild_host::Host;
use guild_host::background::{BackgroundStatus, TaskRecord};
use tokio::io::AsyncBufReadExt;

use guild_host::text::one_line;

use super::{print_json, render, start_host};

/// Background task subcommands.
#[derive(Subcommand)]
pub(crate) enum TasksCommand {
    /// Start a task and follow it; `update <text>`, `cancel`, `approve`, `deny` on stdin act on it.
    Start {
        /// Specialist name or alias.
        specialist: String,
        /// The self-contained brief.
        description: String,
    },
    /// Status, new reports and, when done, the result.
    Check {
        /// Task id.
        id: String,
    },
    /// Restart an interrupted task with an update appended to its brief, and follow it.
    Update {
        /// Task id.
        id: String,
        /// The update.
        text: String,
    },
    /// Cancel a task.
    Cancel {
        /// Task id.
        id: String,
    },
    /// Tasks, newest first.
    List {
        /// How many.
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
}

pub(crate) async fn run(config: &Path, cmd: TasksCommand, json: bool) -> anyhow::Result<ExitCode> {
    let host = start_host(config).await?;
    match cmd {
        TasksCommand::Start {
            specialist,
            description,
        } => {
            let id = host.start_task(&specialist, &description)?;
            eprintln!(
                "started task {id} (type `update <text>` or `cancel` and Enter to act on it)"
            );
            follow(&host, &id, json).await
        }
        TasksCommand::Update { id, text } => {
            let attempt = host.update_task(&id, &text)?;
            eprintln!("task {id}: attempt {attempt} started");
            follow(&host, &id, json).await
        }
        TasksCommand::Check { id } => {
            let check = host.check_task(&id)?;
            if json {
                print_json(&check)?;
            } else {
                print_record(&check.task)?;
                for r in &check.new_reports {
                    outln!("  report {}: {}", r.sequence, one_line(&r.output))?;
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        TasksCommand::Cancel { id } => {
            host.cancel_task(&id)?;
            outln!("task {id} cancelled")?;
            Ok(ExitCode::SUCCESS)
        }
        TasksCommand::List { limit } => {
            let tasks = host.list_tasks(limit)?;
            if json {
                print_json(&tasks)?;
            } else {
                for t in &tasks {
                    outln!(
                        "{}  {:<11} {:<10} attempt {}",
                        t.id,
                        status_name(t.status),
                        t.specialist,
                        t.attempt
                    )?;
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Streams reports until the task ends; stdin lines update or cancel it.
async fn follow(host: &Host, id: &str, json: bool) -> anyhow::Result<ExitCode> {
    let mut stdin = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let mut stdin_open = true;
    let mut announced: Option<String> = None;
    let mut tick = tokio::time::interval(std::time::Duration::from_millis(200));
    loop {
        tokio::select! {
            line = stdin.next_line(), if stdin_open => match line {
                Ok(Some(line)) => {
                    let line = line.trim();
                    if line == "cancel" {
                        host.cancel_task(id)?;
                    } else if line == "approve" || line == "deny" {
                        host.approve_task(id, line == "approve")?;
                    } else if let Some(text) = line.strip_prefix("update ") {
                        let attempt = host.update_task(id, text)?;
                        eprintln!("task {id}: attempt {attempt} started");
                    } else if !line.is_empty() {
                        eprintln!("unknown command {line:?}: use `update <text>`, `cancel`, `approve` or `deny`");
                    }
                }
                _ => stdin_open = false,
            },
            _ = tick.tick() => {
                let check = host.check_task(id)?;
                for r in &check.new_reports {
                    eprintln!("  report {}: {}", r.sequence, one_line(&r.output));
                }
                if let Some(req) = &check.pending_approval {
                    if announced.as_deref() != Some(req.tool.as_str()) {
                        eprintln!(
                            "  {} wants to call {} ({}) with {}: type `approve` or `deny`",
                            req.specialist,
                            one_line(&req.tool),
                            one_line(&req.description),
                            one_line(&req.input)
                        );
                        announced = Some(req.tool.clone());
                    }
                } else {
                    announced = None;
                }
                if !check.task.status.is_live() {
                    if json {
                        print_json(&check.task)?;
                    } else {
                        print_record(&check.task)?;
                    }
                    return Ok(if check.task.status == BackgroundStatus::Succeeded {
                        ExitCode::SUCCESS
                    } else {
                        ExitCode::from(2)
                    });
                }
            }
        }
    }
}

fn status_name(s: BackgroundStatus) -> &'static str {
    match s {
        BackgroundStatus::Queued => "queued",
        BackgroundStatus::Running => "running",
        BackgroundStatus::Succeeded => "succeeded",
        BackgroundStatus::Failed => "failed",
        BackgroundStatus::TimedOut => "timed_out",
        BackgroundStatus::Cancelled => "cancelled",
        BackgroundStatus::Interrupted => "interrupted",
    }
}

fn print_record(t: &TaskRecord) -> std::io::Result<()> {
    outln!(
        "task {} on {}: {} (attempt {}{})",
        t.id,
        t.specialist,
        status_name(t.status),
        t.attempt,
        if t.updates.is_empty() {
            String::new()
        } else {
            format!(", {} update(s)", t.updates.len())
        }
    )?;
    if let Some(r) = &t.result {
        out!("{}", render::task_result(r))?;
    }
    Ok(())
}

//! `guild tasks start | check | show | update | cancel | approve | list | tree`.
//!
//! A background task lives as long as the host process that runs it. When a `guild serve` runs
//! on the data dir it owns the task store: `start`, `update`, `cancel` and `approve` are sent to
//! it through its control socket (`guild_serve::control`), the task runs there and outlives
//! this command, and `check` follows it. Without a server, `tasks start` runs the task in this
//! process and streams its reports; while it runs, a line `update <text>` or `cancel` on stdin
//! updates or cancels it. A tool that needs approval pauses the task and shows the request;
//! `approve` or `deny` on stdin answers it. The other subcommands work on the task store, so
//! `check` and `list` also show tasks of earlier runs
//! (a task whose process ended shows `interrupted`, with its reports), `show` prints a task
//! with every report it sent (those `check` already showed included), and `update` restarts an
//! interrupted task with the update appended. `check`, `show` and `list` only read: they open
//! the store read-only and start no host (no plugin is loaded, nothing is written).

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;
use guild_host::background::{
    BackgroundError, BackgroundStatus, StoreError, TASKS_FILE, TaskReader, TaskRecord,
};
use guild_host::receipts::DbFileError;
use guild_host::{Config, Host};
use tokio::io::AsyncBufReadExt;

use guild_host::text::one_line;
use serde_json::Value;

use super::{print_json, render, start_host};
use guild_serve::control::{self, Request, Response};

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
    /// The task and every report it sent, those `check` already showed included (read-only).
    Show {
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
    /// Answer a task's pending approval on the running server (without a server, answer on the
    /// stdin of `guild tasks start`).
    Approve {
        /// Task id.
        id: String,
        /// Deny the call instead.
        #[arg(long)]
        deny: bool,
    },
    /// The delegation tree a task belongs to: each node's specialist, status, verdict and
    /// its parent's review (read-only).
    Tree {
        /// Task id (the root or any node).
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
    match cmd {
        TasksCommand::Check { id } => check(config, id, json).await,
        TasksCommand::Show { id } => show(config, id, json).await,
        TasksCommand::List { limit } => list(config, limit, json).await,
        TasksCommand::Tree { id } => super::tree::run(config, &id, json).await,
        TasksCommand::Start {
            specialist,
            description,
        } => start(config, specialist, description, json).await,
        TasksCommand::Update { id, text } => update(config, id, text, json).await,
        TasksCommand::Cancel { id } => cancel(config, id, json).await,
        TasksCommand::Approve { id, deny } => approve(config, id, !deny, json).await,
    }
}

// `check`, `show` and `list` need no host: the store is opened read-only, no plugin is
// loaded, nothing is written.

/// `tasks check`: status and the reports since the last check.
async fn check(config: &Path, id: String, json: bool) -> anyhow::Result<ExitCode> {
    let config = config.to_path_buf();
    let check = tokio::task::spawn_blocking(move || match reader(&config)? {
        Some(reader) => anyhow::Ok(reader.check(&id)?),
        None => Err(BackgroundError::NotFound(id).into()),
    })
    .await??;
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

/// `tasks show`: the task and every report it sent.
async fn show(config: &Path, id: String, json: bool) -> anyhow::Result<ExitCode> {
    let config = config.to_path_buf();
    let (task, reports) = tokio::task::spawn_blocking(move || match reader(&config)? {
        Some(reader) => anyhow::Ok(reader.show(&id)?),
        None => Err(BackgroundError::NotFound(id).into()),
    })
    .await??;
    if json {
        print_json(&serde_json::json!({ "task": task, "reports": reports }))?;
    } else {
        print_record(&task)?;
        for r in &reports {
            outln!("  report {}: {}", r.sequence, one_line(&r.output))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `tasks list`: the newest `limit` tasks.
async fn list(config: &Path, limit: usize, json: bool) -> anyhow::Result<ExitCode> {
    let config = config.to_path_buf();
    let tasks = tokio::task::spawn_blocking(move || match reader(&config)? {
        Some(reader) => anyhow::Ok(reader.list(limit)?),
        // No store yet: no task was ever started with this data dir.
        None => Ok(Vec::new()),
    })
    .await??;
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

/// `tasks start`: on the running server, or in this process, followed until it ends.
async fn start(
    config: &Path,
    specialist: String,
    description: String,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let request = Request::StartTask {
        specialist: specialist.clone(),
        description: description.clone(),
    };
    if let Some(response) = on_server(config, &request).await? {
        return answered(&response, json, "follow it with `guild tasks check ID`");
    }
    let host = start_host(config).await?;
    let id = host.start_task(&specialist, &description)?;
    eprintln!("started task {id} (type `update <text>` or `cancel` and Enter to act on it)");
    let code = follow(&host, &id, json).await;
    super::finish_calls(&host).await;
    code
}

/// `tasks update`: on the running server, or in this process, followed until it ends.
async fn update(config: &Path, id: String, text: String, json: bool) -> anyhow::Result<ExitCode> {
    let request = Request::UpdateTask {
        id: id.clone(),
        text: text.clone(),
    };
    if let Some(response) = on_server(config, &request).await? {
        return answered(&response, json, "follow it with `guild tasks check ID`");
    }
    let host = start_host(config).await?;
    let attempt = host.update_task(&id, &text)?;
    eprintln!("task {id}: attempt {attempt} started");
    let code = follow(&host, &id, json).await;
    super::finish_calls(&host).await;
    code
}

/// `tasks cancel`: on the running server, or through a host started here.
async fn cancel(config: &Path, id: String, json: bool) -> anyhow::Result<ExitCode> {
    if let Some(response) = on_server(config, &Request::CancelTask { id: id.clone() }).await? {
        return answered(&response, json, "");
    }
    let host = start_host(config).await?;
    host.cancel_task(&id)?;
    outln!("task {id} cancelled")?;
    Ok(ExitCode::SUCCESS)
}

/// `tasks approve`: answered on the running server only (without one, the task waits in the
/// `guild tasks start` that runs it).
async fn approve(
    config: &Path,
    id: String,
    approved: bool,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let request = Request::ApproveTask { id, approved };
    match on_server(config, &request).await? {
        Some(response) => answered(&response, json, ""),
        None => anyhow::bail!(
            "no server running for {}: a task waiting for approval runs in the `guild \
             tasks start` that started it; type `approve` or `deny` there",
            super::reload::data_dir(config)?.display()
        ),
    }
}

/// Sends `request` to the server running on the config's data dir; `None` when none runs.
async fn on_server(config: &Path, request: &Request) -> anyhow::Result<Option<Response>> {
    let data_dir = super::reload::data_dir(config)?;
    control::call(&data_dir, request).await
}

/// Prints the server's answer (`hint` on stderr, with `ID` replaced by the task id).
fn answered(response: &Response, json: bool, hint: &str) -> anyhow::Result<ExitCode> {
    if json {
        print_json(&response.result)?;
    } else {
        out!("{}", guild_host::text::for_terminal(&response.text))?;
    }
    if !hint.is_empty()
        && let Some(id) = response.result.get("task_id").and_then(Value::as_str)
    {
        eprintln!("{}", hint.replace("ID", &one_line(id)));
    }
    Ok(ExitCode::SUCCESS)
}

/// The task store of the configured data dir (or the shared one of `[store] url`), opened for
/// reading; `None` when there is none yet.
fn reader(config: &Path) -> anyhow::Result<Option<TaskReader>> {
    let config = Config::load(config).with_context(|| {
        format!(
            "failed to load {} (pass --config or set GUILD_CONFIG)",
            config.display()
        )
    })?;
    if let Some(shared) = guild_host::stores::postgres(&config)? {
        return Ok(Some(TaskReader::open_shared(&shared)?));
    }
    let path = config.data_dir().join(TASKS_FILE);
    match TaskReader::open(&path) {
        Ok(reader) => Ok(Some(reader)),
        Err(StoreError::File(DbFileError::Missing { .. })) => Ok(None),
        Err(e) => Err(e.into()),
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

#[cfg(test)]
mod tests {
    //! The read-only commands, parsed and run as the binary runs them, on a real data dir.

    use std::collections::BTreeMap;
    use std::path::PathBuf;
    use std::time::SystemTime;

    use clap::Parser;
    use guild_host::{Config, Host};

    use crate::cli::{Cli, run};

    /// A built plugin under the repository's `plugins/`.
    fn plugin(rel: &str) -> PathBuf {
        let name = rel.rsplit('/').next().unwrap_or(rel);
        let mut dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        loop {
            let candidate = dir.join("plugins").join(rel);
            if candidate.join(format!("{name}.wasm")).is_file() {
                return candidate;
            }
            assert!(
                dir.pop(),
                "plugins/{rel}/{name}.wasm is missing: run plugins/build.sh first"
            );
        }
    }

    /// Every file in `dir` with its bytes and modification time.
    fn files(dir: &std::path::Path) -> BTreeMap<String, (Vec<u8>, SystemTime)> {
        std::fs::read_dir(dir)
            .expect("list the data dir")
            .map(|e| {
                let e = e.expect("entry");
                let meta = e.metadata().expect("metadata");
                let bytes = if meta.is_file() {
                    std::fs::read(e.path()).expect("read")
                } else {
                    Vec::new()
                };
                (
                    e.file_name().to_string_lossy().into_owned(),
                    (bytes, meta.modified().expect("mtime")),
                )
            })
            .collect()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn read_only_commands_start_no_host_and_write_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = dir.path().join("guild.toml");
        std::fs::write(
            &config,
            format!(
                "[host]\nplugins = [{:?}]\ndata_dir = \"data\"\n\n[grants.probe]\nreport = true\n",
                plugin("testing/probe").display().to_string()
            ),
        )
        .expect("write guild.toml");
        let id = {
            let host = Host::new(Config::load(&config).expect("config"))
                .await
                .expect("host");
            assert!(host.load_errors().is_empty(), "{:?}", host.load_errors());
            let brief = r#"{"op": "reports", "texts": ["one"], "pause_ms": 0}"#;
            let id = host.start_task("probe", brief).expect("start");
            host.wait_task(&id).await.expect("wait");
            id
        };
        let data = dir.path().join("data");
        // A host start compiles plugins into the cache and audits their loads in the ledger:
        // with the cache gone, a host started below would show in both.
        std::fs::remove_dir_all(data.join("cache")).expect("remove the compile cache");
        let before = files(&data);
        assert!(before.contains_key("tasks.db") && before.contains_key("receipts.db"));
        let config = config.display().to_string();
        for args in [
            vec!["tasks", "list"],
            vec!["tasks", "check", id.as_str()],
            vec!["--json", "tasks", "check", id.as_str()],
            vec!["tasks", "show", id.as_str()],
            vec!["--json", "tasks", "show", id.as_str()],
            vec!["receipts"],
            vec!["receipts", "verify"],
        ] {
            let argv = ["guild", "--config", config.as_str()]
                .into_iter()
                .chain(args.iter().copied());
            let cli = Cli::try_parse_from(argv).expect("arguments parse");
            let code = run(cli).await.expect("command runs");
            assert_eq!(code, std::process::ExitCode::SUCCESS, "{args:?}");
        }
        let after = files(&data);
        for (name, was) in &before {
            assert!(after.get(name) == Some(was), "{name} was changed");
        }
        let added: Vec<&String> = after.keys().filter(|k| !before.contains_key(*k)).collect();
        assert!(added.is_empty(), "files were added: {added:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn read_only_commands_on_a_data_dir_without_stores_create_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = dir.path().join("guild.toml");
        std::fs::write(&config, "[host]\nplugins = []\ndata_dir = \"data\"\n").expect("write");
        let config = config.display().to_string();
        for (args, ok) in [
            (vec!["tasks", "list"], true),
            (vec!["receipts"], true),
            (vec!["receipts", "verify"], true),
            (vec!["tasks", "check", "no-such-task"], false),
        ] {
            let argv = ["guild", "--config", config.as_str()]
                .into_iter()
                .chain(args.iter().copied());
            let cli = Cli::try_parse_from(argv).expect("arguments parse");
            match run(cli).await {
                Ok(code) => assert!(ok && code == std::process::ExitCode::SUCCESS, "{args:?}"),
                Err(e) => assert!(
                    !ok && e.to_string().contains("no-such-task"),
                    "{args:?}: {e}"
                ),
            }
        }
        assert!(!dir.path().join("data").exists(), "nothing was created");
    }
}

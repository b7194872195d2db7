//! `guild memory show|update|history|restore --team|--private`: the supervisor's access to
//! team and private memory. No host is started and no plugin is loaded: the memory store in
//! the data dir is opened directly, except that `update` goes through the data dir's running
//! host when there is one (its control socket), so the host makes every write while it runs.
//! The workspace and user come from `[memory]` in guild.toml; `--workspace` / `--user`
//! override them.

use guild_serve::start::name_owners;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use guild_host::Config;
use guild_host::memory::{Actor, Memory, MemoryError, Scope, UpdateOutcome, VersionInfo};
use guild_host::text::for_terminal;

use super::print_json;

pub(crate) const EXIT_CODES: &str = "\
Exit codes:
  0  done (an update stored a version or changed nothing)
  1  error: configuration, no workspace/user named, unknown version, store failure
  2  usage: wrong arguments
  3  the update was refused by validation; the stored version is unchanged
  4  conflict: the document changed after the --base version; nothing was stored";

/// Exit code: validation refused the write.
const REFUSED: u8 = 3;
/// Exit code: the update's base is not the newest version.
const CONFLICT: u8 = 4;

/// Arguments of `guild memory`.
#[derive(Args)]
pub(crate) struct MemoryArgs {
    #[command(subcommand)]
    command: MemoryCommand,
    /// Workspace whose team memory to use (overrides `[memory] workspace` in guild.toml).
    #[arg(long, global = true)]
    workspace: Option<String>,
    /// User whose private memory to use (overrides `[memory] user` in guild.toml).
    #[arg(long, global = true)]
    user: Option<String>,
}

/// Which document.
#[derive(Args)]
#[group(required = true, multiple = false)]
struct ScopeArg {
    /// The workspace's team memory.
    #[arg(long)]
    team: bool,
    /// The user's private memory.
    #[arg(long)]
    private: bool,
}

impl ScopeArg {
    fn scope(&self) -> Scope {
        if self.team {
            Scope::Team
        } else {
            Scope::Private
        }
    }
}

#[derive(Subcommand)]
enum MemoryCommand {
    /// Print the current document (or one version of it) and its usage.
    Show {
        #[command(flatten)]
        scope: ScopeArg,
        /// Print this version instead of the newest.
        #[arg(long)]
        version: Option<u64>,
    },
    /// Replace the document with the full text of FILE (`-` reads stdin), validated first.
    Update {
        #[command(flatten)]
        scope: ScopeArg,
        /// The new document; `-` for stdin.
        #[arg(long)]
        file: PathBuf,
        /// The version the new text was written from (`guild memory show` prints it; 0 for an
        /// empty document): if another version was stored since, nothing is stored and the
        /// exit code is 4. Without it, the newest version is replaced whatever it is.
        #[arg(long)]
        base: Option<u64>,
    },
    /// List the stored versions, newest first.
    History {
        #[command(flatten)]
        scope: ScopeArg,
        /// How many versions.
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Store the text of an earlier version again as the newest (validated like an update).
    Restore {
        #[command(flatten)]
        scope: ScopeArg,
        /// The version to restore.
        version: u64,
    },
}

pub(crate) async fn run(config: &Path, args: MemoryArgs, json: bool) -> anyhow::Result<ExitCode> {
    let mut config = Config::load(config).with_context(|| {
        format!(
            "failed to load {} (pass --config or set GUILD_CONFIG)",
            config.display()
        )
    })?;
    name_owners(&mut config, args.workspace, args.user)?;
    let memory = {
        let config = config.clone();
        tokio::task::spawn_blocking(move || Memory::open(&config).map_err(anyhow::Error::from))
            .await
            .context("failed to open the memory store")??
    };
    match args.command {
        MemoryCommand::Show { scope, version } => show(&memory, scope.scope(), version, json).await,
        MemoryCommand::Update { scope, file, base } => {
            let text = read_input(&file)?;
            let owners = (config.memory.workspace.clone(), config.memory.user.clone());
            if let Some(code) =
                update_through_host(&config.data_dir(), scope.scope(), &text, base, owners, json)
                    .await?
            {
                return Ok(code);
            }
            let base = match base {
                Some(base) => base,
                None => memory
                    .read(scope.scope())
                    .await?
                    .version
                    .map_or(0, |v| v.version),
            };
            match memory
                .update(scope.scope(), &text, base, &Actor::Supervisor)
                .await
            {
                Ok(outcome) => report(&outcome, json),
                Err(e @ MemoryError::Conflict { .. }) => {
                    eprintln!("error: {e}");
                    Ok(ExitCode::from(CONFLICT))
                }
                Err(e) => Err(e.into()),
            }
        }
        MemoryCommand::History { scope, limit } => {
            let history = memory.history(scope.scope(), limit).await?;
            if json {
                print_json(&history)?;
            } else if history.is_empty() {
                outln!("no versions")?;
            }
            if !json {
                for v in &history {
                    outln!("{}", version_line(v))?;
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        MemoryCommand::Restore { scope, version } => {
            let outcome = memory
                .restore(scope.scope(), version, &Actor::Supervisor)
                .await?;
            report(&outcome, json)
        }
    }
}

async fn show(
    memory: &Memory,
    scope: Scope,
    version: Option<u64>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let (text, info) = match version {
        Some(v) => {
            let found = memory.version(scope, v).await?;
            (found.text, Some(found.info))
        }
        None => {
            let doc = memory.read(scope).await?;
            (doc.text, doc.version)
        }
    };
    let usage = guild_host::memory::Usage::of(&text);
    if json {
        print_json(&serde_json::json!({
            "doc": memory.doc(scope)?,
            "version": info,
            "text": text,
            "usage": usage,
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    out!("{}", for_terminal(&text))?;
    match &info {
        Some(v) => eprintln!("{} memory, {}: {usage}", scope, version_line(v)),
        None => eprintln!("{scope} memory is empty: {usage}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// `guild memory update` through the host running on `data_dir`: its exit code, or `None` when
/// no host runs (the caller writes the store itself).
async fn update_through_host(
    data_dir: &Path,
    scope: Scope,
    text: &str,
    base: Option<u64>,
    (workspace, user): (Option<String>, Option<String>),
    json: bool,
) -> anyhow::Result<Option<ExitCode>> {
    use guild_serve::control::{self, Request};
    let request = Request::UpdateMemory {
        scope,
        text: text.to_owned(),
        base,
        workspace,
        user,
    };
    let Some(response) = control::call(data_dir, &request).await? else {
        return Ok(None);
    };
    if response.result[control::CONFLICT] == true {
        let message = response.result["message"].as_str().unwrap_or_default();
        eprintln!("error: {}", for_terminal(message));
        return Ok(Some(ExitCode::from(CONFLICT)));
    }
    let outcome: UpdateOutcome = serde_json::from_value(response.result)
        .context("the host's answer to the memory update is not an update outcome")?;
    report(&outcome, json).map(Some)
}

/// Prints an update's outcome: warnings and errors on stderr, the result on stdout.
fn report(outcome: &UpdateOutcome, json: bool) -> anyhow::Result<ExitCode> {
    let code = match outcome {
        UpdateOutcome::Refused { .. } => ExitCode::from(REFUSED),
        _ => ExitCode::SUCCESS,
    };
    if json {
        print_json(outcome)?;
        return Ok(code);
    }
    match outcome {
        UpdateOutcome::Stored {
            doc,
            version,
            warnings,
            usage,
        } => {
            for w in warnings {
                eprintln!("warning: {}", for_terminal(w));
            }
            outln!("stored {doc} version {}: {usage}", version.version)?;
        }
        UpdateOutcome::NoOp { doc, reason, usage } => {
            outln!("{doc} unchanged: {}; {usage}", for_terminal(reason))?;
        }
        UpdateOutcome::Refused { doc, errors, usage } => {
            for e in errors {
                eprintln!("error: {}", for_terminal(e));
            }
            outln!("refused: {doc} is unchanged; the refused text was {usage}")?;
        }
    }
    Ok(code)
}

fn version_line(v: &VersionInfo) -> String {
    let restored = v
        .restored_from
        .map(|r| format!(" (restores v{r})"))
        .unwrap_or_default();
    format!(
        "v{} by {} at {} ms, {} chars, sha256 {}{restored}",
        v.version,
        for_terminal(&v.actor),
        v.at_ms,
        v.chars,
        &v.sha256[..v.sha256.len().min(12)]
    )
}

/// The text of `--file` (`-`: stdin).
fn read_input(file: &Path) -> anyhow::Result<String> {
    if file == Path::new("-") {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("failed to read the new memory from stdin (it must be UTF-8)")?;
        return Ok(text);
    }
    std::fs::read_to_string(file)
        .with_context(|| format!("failed to read the new memory from {}", file.display()))
}

//! `guild receipts [--task ID] [--limit N]` (a child task's receipts also name the chain from
//! its delegation tree's root, as the ledger recorded and hashed it), `guild receipts verify` (both read-only: no host, no plugins,
//! nothing written), `guild receipts confirm ID` and `guild receipts accept-head`.
//! With `[store] url` in guild.toml they read the shared PostgreSQL ledger instead of the
//! data dir's file (docs/postgres.md).

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use guild_host::Config;
use guild_host::receipts::{self, AuditEntry, DbFileError, Ledger, LedgerError};

use super::{print_json, render, start_host};

/// Arguments of `guild receipts`.
#[derive(Args)]
pub(crate) struct ReceiptsArgs {
    #[command(subcommand)]
    command: Option<ReceiptsCommand>,
    /// Only this task's receipts.
    #[arg(long)]
    task: Option<String>,
    /// How many of the newest receipts.
    #[arg(long, default_value_t = 50)]
    limit: usize,
}

#[derive(Subcommand)]
enum ReceiptsCommand {
    /// Check the hash chain; exit non-zero and name the first bad entry if it was tampered with.
    Verify,
    /// Fetch one receipt's verifiable URL (no credentials, public addresses unless
    /// `[host] verify_origins` names the origin) and say what was found.
    Confirm {
        /// Receipt id.
        id: String,
    },
    /// Accept the ledger as it is now when it no longer reaches its head anchor (entries cut
    /// from the end, an older copy restored, the anchor lost): records what was found as an
    /// audit entry and moves the anchor, so that hosts write to it again.
    AcceptHead,
}

pub(crate) async fn run(config: &Path, args: ReceiptsArgs, json: bool) -> anyhow::Result<ExitCode> {
    if let Some(ReceiptsCommand::Confirm { id }) = &args.command {
        let host = start_host(config).await?;
        let check = host.verify_receipt(id).await?;
        if json {
            print_json(&check)?;
        } else {
            outln!(
                "{}: {}",
                check.status,
                guild_host::text::one_line(&check.message)
            )?;
        }
        return Ok(
            if check.status == guild_host::validate::CheckStatus::Passed {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(2)
            },
        );
    }
    let loaded = load(config)?;
    if loaded.store.postgres_url().is_some() {
        return shared(&loaded, args, json).await;
    }
    if let Some(ReceiptsCommand::AcceptHead) = &args.command {
        let path = loaded.data_dir().join(receipts::LEDGER_FILE);
        let accepted =
            tokio::task::spawn_blocking(move || Ledger::accept_head_of_file(&path)).await??;
        return print_accepted(accepted.as_ref(), json);
    }
    // Listing and verifying only read: the ledger is opened read-only, no host is started, no
    // plugin is loaded and nothing is written.
    let path = loaded.data_dir().join(receipts::LEDGER_FILE);
    if let Some(ReceiptsCommand::Verify) = args.command {
        let report = tokio::task::spawn_blocking(move || receipts::verify_file(&path)).await??;
        return print_verify(&report, json);
    }
    let (task, limit) = (args.task, args.limit);
    let receipts = tokio::task::spawn_blocking(move || {
        let ledger = match Ledger::open_read_only(&path) {
            Ok(l) => l,
            Err(LedgerError::File(DbFileError::Missing { .. })) => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        match task {
            Some(t) => ledger.for_task(&t),
            None => ledger.list(limit),
        }
    })
    .await??;
    print_receipts(&receipts, json)
}

/// `guild receipts` and `guild receipts verify` on the PostgreSQL ledger of `[store] url`. No
/// host is started and no entry is written (an empty database is set up as a Guild one).
async fn shared(config: &Config, args: ReceiptsArgs, json: bool) -> anyhow::Result<ExitCode> {
    let config = config.clone();
    let store = tokio::task::spawn_blocking(move || {
        guild_host::stores::open_shared_ledger(&config).map_err(anyhow::Error::from)
    })
    .await??
    .context("`[store] url` names no PostgreSQL store")?;
    match args.command {
        Some(ReceiptsCommand::Verify) => {
            let report = tokio::task::spawn_blocking(move || store.verify()).await??;
            return print_verify(&report, json);
        }
        Some(ReceiptsCommand::AcceptHead) => {
            let accepted = tokio::task::spawn_blocking(move || store.accept_head()).await??;
            return print_accepted(accepted.as_ref(), json);
        }
        _ => {}
    }
    let (task, limit) = (args.task, args.limit);
    let receipts = tokio::task::spawn_blocking(move || match task {
        Some(t) => store.for_task(&t),
        None => store.list(limit),
    })
    .await??;
    print_receipts(&receipts, json)
}

/// Prints a verify report; exits non-zero when the chain is not intact.
fn print_verify(report: &receipts::VerifyReport, json: bool) -> anyhow::Result<ExitCode> {
    if json {
        print_json(report)?;
    } else if report.ok {
        outln!(
            "ok: {} entries, chain intact (head {}){}",
            report.entries,
            report.head_hash,
            match report.anchored_sequence {
                Some(seq) => format!(", head anchor at entry {seq}"),
                None => ", no head anchor (a truncated tail cannot be detected)".to_owned(),
            }
        )?;
    } else {
        outln!(
            "TAMPERED: first bad entry at sequence {}: {}",
            report
                .first_bad_sequence
                .map_or("?".to_owned(), |s| s.to_string()),
            report.reason.as_deref().unwrap_or("")
        )?;
    }
    Ok(if report.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Prints receipts, one line each (or JSON), with the delegation chain a child task's receipt
/// carries in the ledger (docs/delegation.md#receipts) under it.
fn print_receipts(receipts: &[receipts::Receipt], json: bool) -> anyhow::Result<ExitCode> {
    if json {
        print_json(&receipts)?;
        return Ok(ExitCode::SUCCESS);
    }
    if receipts.is_empty() {
        outln!("no receipts")?;
    }
    for r in receipts {
        outln!("{} {}", render::receipt_line(r), r.time)?;
        if !r.chain.is_empty() {
            outln!("  chain: {}", r.chain.join(" → "))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The configuration (for its data dir and `[store]`).
fn load(config: &Path) -> anyhow::Result<Config> {
    Config::load(config).with_context(|| {
        format!(
            "failed to load {} (pass --config or set GUILD_CONFIG)",
            config.display()
        )
    })
}

/// What `guild receipts accept-head` found and wrote, on either backend.
fn print_accepted(accepted: Option<&AuditEntry>, json: bool) -> anyhow::Result<ExitCode> {
    match accepted {
        _ if json => print_json(&accepted)?,
        Some(entry) => outln!(
            "accepted: audit entry {} records it: {}",
            entry.sequence,
            entry.detail
        )?,
        None => outln!("nothing to accept: the ledger reaches its head anchor")?,
    }
    Ok(ExitCode::SUCCESS)
}

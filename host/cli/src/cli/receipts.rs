//! `guild receipts [--task ID] [--limit N]` (a child task's receipts also name the chain from
//! its delegation tree's root), `guild receipts verify` (both read-only: no host, no plugins,
//! nothing written), `guild receipts confirm ID` and `guild receipts accept-head`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use guild_host::Config;
use guild_host::receipts::{self, DbFileError, Ledger, LedgerError};

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
    if let Some(ReceiptsCommand::AcceptHead) = &args.command {
        let path = ledger_path(config)?;
        let accepted = tokio::task::spawn_blocking(move || Ledger::accept_head(&path)).await??;
        match &accepted {
            _ if json => print_json(&accepted)?,
            Some(entry) => outln!(
                "accepted: audit entry {} records it: {}",
                entry.sequence,
                entry.detail
            )?,
            None => outln!("nothing to accept: the ledger reaches its head anchor")?,
        }
        return Ok(ExitCode::SUCCESS);
    }
    // Listing and verifying only read: the ledger is opened read-only, no host is started, no
    // plugin is loaded and nothing is written.
    let path = ledger_path(config)?;
    if let Some(ReceiptsCommand::Verify) = args.command {
        let report = tokio::task::spawn_blocking(move || receipts::verify_file(&path)).await??;
        if json {
            print_json(&report)?;
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
        return Ok(if report.ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        });
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
    if json {
        print_json(&receipts)?;
        return Ok(ExitCode::SUCCESS);
    }
    if receipts.is_empty() {
        outln!("no receipts")?;
    }
    // A child task's receipts name the chain from its tree's root (docs/delegation.md).
    let trees = ledger_path(config)?.with_file_name(guild_host::TREES_FILE);
    let ids: Vec<String> = receipts.iter().map(|r| r.task_id.clone()).collect();
    let chains = tokio::task::spawn_blocking(move || {
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        guild_host::read_chains(&trees, &ids)
    })
    .await??;
    for r in &receipts {
        outln!("{} {}", render::receipt_line(r), r.time)?;
        if let Some(chain) = chains.get(&r.task_id).filter(|c| c.len() > 1) {
            outln!("  chain: {}", chain.join(" → "))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The ledger file of the configured data dir.
fn ledger_path(config: &Path) -> anyhow::Result<PathBuf> {
    let config = Config::load(config).with_context(|| {
        format!(
            "failed to load {} (pass --config or set GUILD_CONFIG)",
            config.display()
        )
    })?;
    Ok(config.data_dir().join(receipts::LEDGER_FILE))
}

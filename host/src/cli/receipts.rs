//! `guild receipts [--task ID] [--limit N]` and `guild receipts verify`.

use std::path::Path;
use std::process::ExitCode;

use clap::{Args, Subcommand};

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
}

pub(crate) async fn run(config: &Path, args: ReceiptsArgs, json: bool) -> anyhow::Result<ExitCode> {
    let host = start_host(config).await?;
    if let Some(ReceiptsCommand::Confirm { id }) = &args.command {
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
    if let Some(ReceiptsCommand::Verify) = args.command {
        let report = host.verify_receipts().await?;
        if json {
            print_json(&report)?;
        } else if report.ok {
            outln!(
                "ok: {} entries, chain intact (head {})",
                report.entries,
                report.head_hash
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
    let receipts = host.receipts(args.task.as_deref(), args.limit).await?;
    if json {
        print_json(&receipts)?;
        return Ok(ExitCode::SUCCESS);
    }
    if receipts.is_empty() {
        outln!("no receipts")?;
    }
    for r in &receipts {
        outln!("{} {}", render::receipt_line(r), r.time)?;
    }
    Ok(ExitCode::SUCCESS)
}

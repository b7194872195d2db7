//! Appends receipts to a ledger until it is killed, printing each receipt's id on stdout only
//! after the ledger acknowledged it (the commit returned). The kill-loop durability test in
//! `all/receipts.rs` SIGKILLs it at random points and checks every printed id survived.
//!
//! Usage: `receipt-writer LEDGER single|batch`. `single` does begin + complete per receipt;
//! `batch` uses group commit, 8 receipts per transaction.

use std::io::Write;
use std::process::ExitCode;

use guild_host::receipts::{Begin, Completion, Intent, IntentId, Ledger};
use guild_host::types::CallStatus;
use sha2::{Digest, Sha256};

const BATCH: usize = 8;

fn intent(n: u64) -> Intent {
    Intent {
        task_id: format!("kill-loop-{}", std::process::id()),
        route: "writer".into(),
        plugin: "tracker@1.0.0".into(),
        tool: "tracker.create_issue".into(),
        receipt_type: "issue".into(),
        operation: "create".into(),
        input_sha256: hex::encode(Sha256::digest(format!("{}-{n}", std::process::id()))),
        idempotency_key: None,
    }
}

fn success(n: u64) -> Completion {
    Completion {
        status: CallStatus::Success,
        external_id: Some(format!("ISSUE-{n}")),
        verifiable_url: None,
        preview: Some(format!("issue {n}")),
        error: None,
    }
}

fn proceed(b: Begin) -> Result<IntentId, String> {
    match b {
        Begin::Proceed(id) => Ok(id),
        Begin::Replay(r) => Err(format!("unexpected replay of {}", r.id)),
    }
}

fn run(path: &str, batch: bool) -> Result<(), String> {
    let ledger = Ledger::open(path).map_err(|e| e.to_string())?;
    let mut stdout = std::io::stdout().lock();
    let mut n = 0u64;
    loop {
        let size = if batch { BATCH } else { 1 };
        let intents = (n..n + size as u64).map(intent).collect();
        let ids = ledger
            .begin_many(intents)
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(proceed)
            .collect::<Result<Vec<_>, _>>()?;
        let items = ids
            .iter()
            .zip(n..)
            .map(|(id, k)| (id, success(k)))
            .collect();
        let receipts = ledger.complete_many(items).map_err(|e| e.to_string())?;
        // Acknowledged: the commit returned, so the ids may be announced.
        for r in receipts {
            writeln!(stdout, "{}", r.id).map_err(|e| e.to_string())?;
        }
        stdout.flush().map_err(|e| e.to_string())?;
        n += size as u64;
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(mode)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: receipt-writer LEDGER single|batch");
        return ExitCode::from(2);
    };
    match run(path, mode == "batch") {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("receipt-writer: {e}");
            ExitCode::FAILURE
        }
    }
}

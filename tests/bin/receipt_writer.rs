//! Appends receipts to a ledger until it is killed, printing each receipt's id on stdout only
//! after the ledger acknowledged it (the commit returned). The kill-loop durability test in
//! `all/receipts.rs` SIGKILLs it at random points and checks every printed id survived.
//!
//! Usage: `receipt-writer LEDGER single|batch|concurrent`. `single` does begin + complete per
//! receipt; `batch` uses group commit, 8 receipts per transaction; `concurrent` runs 8 writers
//! the way concurrent tool calls write (intent committed, outcome queued, then waited for):
//! each prints `effect ID` once its intent is committed (where the connector would run) and
//! `ID` once the outcome is.

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
        chain: Vec::new(),
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

const WRITERS: u64 = 8;

/// 8 writers sharing one ledger, each writing one receipt at a time as the tool-call path does.
fn concurrent(path: &str) -> Result<(), String> {
    let ledger = Ledger::open(path).map_err(|e| e.to_string())?;
    let out = std::sync::Mutex::new(std::io::stdout());
    let say = |line: String| -> Result<(), String> {
        let mut out = out.lock().map_err(|e| e.to_string())?;
        writeln!(out, "{line}")
            .and_then(|()| out.flush())
            .map_err(|e| e.to_string())
    };
    std::thread::scope(|s| {
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (ledger, say) = (&ledger, &say);
                s.spawn(move || -> Result<(), String> {
                    for n in (w..).step_by(WRITERS as usize) {
                        let id = proceed(ledger.begin(intent(n)).map_err(|e| e.to_string())?)?;
                        // The intent is committed: the effect may happen now.
                        say(format!("effect {}", id.as_str()))?;
                        let queued = ledger.complete_queued(&id, success(n));
                        let receipt = ledger.wait(queued).map_err(|e| e.to_string())?;
                        say(receipt.id)?;
                    }
                    Ok(())
                })
            })
            .collect();
        for w in writers {
            w.join().map_err(|_| "a writer panicked".to_owned())??;
        }
        Ok(())
    })
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
        eprintln!("usage: receipt-writer LEDGER single|batch|concurrent");
        return ExitCode::from(2);
    };
    let written = match mode.as_str() {
        "concurrent" => concurrent(path),
        _ => run(path, mode == "batch"),
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("receipt-writer: {e}");
            ExitCode::FAILURE
        }
    }
}

//! The receipts ledger on real files: an acknowledged receipt survives SIGKILL of the writer
//! (kill loop, one writer and 8 concurrent ones), every effect has a durable intent, and
//! `verify` finds tampering done with raw SQL on the file.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use guild_host::receipts::{Begin, Completion, Intent, Ledger, ReceiptStatus};
use guild_host::types::CallStatus;

const ROUNDS: usize = 20;
const MAX_ROUND_MS: u64 = 200;

/// A small xorshift generator: kill points differ per run without a `rand` dependency; the
/// seed is printed so a failing run can be replayed with `GUILD_KILL_SEED`.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn seed() -> u64 {
    std::env::var("GUILD_KILL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        })
        | 1
}

/// What a writer announced: receipts acknowledged (outcome committed) and effects started
/// (intent committed). Complete lines only: a line cut by the kill has no newline and was never
/// announced.
#[derive(Default)]
struct Announced {
    acked: Vec<String>,
    effects: Vec<String>,
}

fn announced(out: impl std::io::Read) -> Announced {
    let mut reader = BufReader::new(out);
    let mut seen = Announced::default();
    let mut line = String::new();
    while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
        if let Some(id) = line.strip_suffix('\n') {
            match id.strip_prefix("effect ") {
                Some(effect) => seen.effects.push(effect.to_owned()),
                None => seen.acked.push(id.to_owned()),
            }
        }
        line.clear();
    }
    seen
}

#[test]
fn acknowledged_receipts_survive_sigkill() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let path = dir.path().join("ledger.db");
    let seed = seed();
    let mut rng = Rng(seed);
    let started = Instant::now();
    let mut acked: Vec<String> = Vec::new();
    let mut effects: Vec<String> = Vec::new();
    for round in 0..ROUNDS {
        let mode = ["single", "batch", "concurrent"][round % 3];
        let mut child = Command::new(env!("CARGO_BIN_EXE_receipt-writer"))
            .arg(&path)
            .arg(mode)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start receipt-writer");
        let stdout = child.stdout.take().expect("stdout piped");
        let reader = std::thread::spawn(move || announced(stdout));
        std::thread::sleep(Duration::from_millis(rng.next() % MAX_ROUND_MS + 1));
        // Child::kill is SIGKILL on Unix: no destructor, no rollback, no flush runs.
        let _ = child.kill();
        let status = child.wait().expect("wait");
        let seen = reader.join().expect("reader thread");
        if let Some(mut err) = child.stderr.take() {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut err, &mut text);
            assert!(
                text.is_empty(),
                "round {round}: writer said {text:?} ({status})"
            );
        }
        acked.extend(seen.acked);
        effects.extend(seen.effects);

        let ledger = Ledger::open(&path).expect("reopen after kill");
        for id in &acked {
            let r = ledger.get(id).expect("read").unwrap_or_else(|| {
                panic!("round {round} (seed {seed}): acknowledged receipt {id} is missing")
            });
            assert_eq!(r.status, ReceiptStatus::Success, "{id}");
        }
        // No effect without its intent: every call that started has a receipt (success, or
        // unknown when the kill came before its outcome was committed).
        for id in &effects {
            let r = ledger.get(id).expect("read").unwrap_or_else(|| {
                panic!("round {round} (seed {seed}): effect {id} has no intent in the ledger")
            });
            assert!(
                matches!(r.status, ReceiptStatus::Success | ReceiptStatus::Unknown),
                "{id}: {:?}",
                r.status
            );
        }
        let v = ledger.verify().expect("verify");
        assert!(v.ok, "round {round} (seed {seed}): {v}");
    }
    let ledger = Ledger::open(&path).expect("reopen");
    let all = ledger.list(usize::MAX).expect("list");
    let unknown = all
        .iter()
        .filter(|r| r.status == ReceiptStatus::Unknown)
        .count();
    eprintln!(
        "kill loop: {ROUNDS} rounds in {:?}, {} acknowledged, {} receipts, {unknown} left unknown \
         by a kill mid-call, seed {seed}",
        started.elapsed(),
        acked.len(),
        all.len()
    );
    assert!(!acked.is_empty(), "the writer never acknowledged anything");
    assert!(
        !effects.is_empty(),
        "the concurrent writer never started an effect"
    );
    // Interrupted calls read as unknown, never as success.
    assert!(
        all.iter()
            .filter(|r| r.status == ReceiptStatus::Unknown)
            .all(|r| r.external_id.is_none())
    );
}

fn intent(n: u8) -> Intent {
    Intent {
        task_id: "task-1".into(),
        route: "planner".into(),
        plugin: "tracker@1.0.0".into(),
        tool: "tracker.create_issue".into(),
        receipt_type: "issue".into(),
        operation: "create".into(),
        input_sha256: hex::encode([n; 32]),
        idempotency_key: None,
        chain: Vec::new(),
    }
}

/// A file ledger with `n` success receipts (2n entries) and one audit entry at the end.
fn filled(n: u8) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("ledger.db");
    let ledger = Ledger::open(&path).expect("open");
    for i in 0..n {
        let Begin::Proceed(id) = ledger.begin(intent(i)).expect("begin") else {
            panic!("no key, no replay");
        };
        ledger
            .complete(
                &id,
                Completion {
                    status: CallStatus::Success,
                    external_id: Some(format!("I-{i}")),
                    verifiable_url: None,
                    preview: None,
                    error: None,
                },
            )
            .expect("complete");
    }
    ledger
        .audit(
            guild_host::receipts::AuditKind::PluginLoaded,
            "tracker@1.0.0",
            "",
        )
        .expect("audit");
    (dir, path)
}

/// Tampers with the file the way someone with write access would: another connection, triggers
/// dropped first.
fn tamper(path: &std::path::Path, sql: &str) {
    let conn = rusqlite::Connection::open(path).expect("raw open");
    conn.execute_batch(&format!(
        "DROP TRIGGER entries_no_update; DROP TRIGGER entries_no_delete; {sql}"
    ))
    .expect("tamper");
}

#[test]
fn raw_update_and_delete_are_refused_on_the_file() {
    let (_dir, path) = filled(2);
    let conn = rusqlite::Connection::open(&path).expect("raw open");
    let e = conn
        .execute("UPDATE entries SET status = 'success' WHERE seq = 1", [])
        .expect_err("update refused");
    assert!(e.to_string().contains("append-only"), "{e}");
    let e = conn
        .execute("DELETE FROM entries WHERE seq = 1", [])
        .expect_err("delete refused");
    assert!(e.to_string().contains("append-only"), "{e}");
}

#[test]
fn verify_reports_the_first_bad_sequence_on_the_file() {
    let cases: &[(&str, &str, u64)] = &[
        (
            "edited field",
            "UPDATE entries SET external_id = 'I-999' WHERE seq = 4",
            4,
        ),
        ("deleted entry", "DELETE FROM entries WHERE seq = 5", 5),
        (
            "reordered entries",
            "UPDATE entries SET seq = 100 WHERE seq = 2; UPDATE entries SET seq = 2 WHERE seq = 4; \
             UPDATE entries SET seq = 4 WHERE seq = 100;",
            2,
        ),
        (
            "edited audit entry",
            "UPDATE entries SET plugin = 'evil@6.6.6' WHERE kind = 'audit'",
            7,
        ),
    ];
    for (name, sql, bad) in cases {
        let (_dir, path) = filled(3);
        assert!(
            Ledger::open(&path)
                .expect("open")
                .verify()
                .expect("verify")
                .ok
        );
        tamper(&path, sql);
        // Reopening recreates the triggers; it does not repair anything.
        let v = Ledger::open(&path).expect("open").verify().expect("verify");
        assert!(!v.ok, "{name}: {v}");
        assert_eq!(v.first_bad_sequence, Some(*bad), "{name}: {v}");
        let json = serde_json::to_value(&v).expect("json");
        assert_eq!(json["first_bad_sequence"], *bad, "{name}");
    }
}

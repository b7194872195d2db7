//! Receipts per second on the SQLite ledger and on PostgreSQL, with 1, 2 and 3 writers, each
//! writer its own store instance (its own connection, as separate hosts would have). A receipt
//! is an intent and its outcome: two durable commits. Figures and how to read them:
//! docs/performance.md.
//!
//! `cargo run --release -p guild-pg --example bench [receipts-per-writer]` (default 300). It
//! starts its own PostgreSQL server (guild_pg::testing, fsync on) and writes SQLite ledgers in
//! a temporary folder.

use std::sync::{Arc, Barrier};
use std::time::Instant;

use guild_core::types::CallStatus;
use guild_pg::PgLedgerStore;
use guild_pg::testing::TestServer;
use guild_receipts::{Begin, Completion, Intent, Ledger, LedgerStore};

fn intent(task: String) -> Intent {
    Intent {
        task_id: task,
        route: "planner".into(),
        plugin: "tracker@1.0.0".into(),
        tool: "tracker.create_issue".into(),
        receipt_type: "issue".into(),
        operation: "create".into(),
        input_sha256: "ab".repeat(32),
        idempotency_key: None,
        chain: Vec::new(),
    }
}

/// Runs `writers` threads, each writing `receipts` receipts to its own store; receipts/s.
fn run(stores: Vec<Box<dyn LedgerStore>>, receipts: usize) -> f64 {
    let barrier = Arc::new(Barrier::new(stores.len() + 1));
    let threads: Vec<_> = stores
        .into_iter()
        .enumerate()
        .map(|(w, store)| {
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                for n in 0..receipts {
                    let Begin::Proceed(id) =
                        store.begin(intent(format!("w{w}-{n}"))).expect("begin")
                    else {
                        panic!("no key, no replay");
                    };
                    let done = Completion {
                        status: CallStatus::Success,
                        external_id: Some(format!("I-{n}")),
                        verifiable_url: None,
                        preview: None,
                        error: None,
                    };
                    store.complete(&id, done).expect("complete");
                }
                store
            })
        })
        .collect();
    barrier.wait();
    let started = Instant::now();
    let stores: Vec<_> = threads
        .into_iter()
        .map(|t| t.join().expect("writer"))
        .collect();
    let elapsed = started.elapsed().as_secs_f64();
    let report = stores[0].verify().expect("verify");
    assert!(report.ok, "{report}");
    assert_eq!(report.entries, (2 * receipts * stores.len()) as u64);
    (receipts * stores.len()) as f64 / elapsed
}

fn main() {
    let receipts: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(300);
    let server = TestServer::start().expect("start PostgreSQL (run tests/setup.sh)");
    let dir = tempfile::tempdir().expect("temporary folder");
    println!("{receipts} receipts per writer (intent + outcome, each a durable commit)\n");
    println!("| writers | SQLite receipts/s | PostgreSQL receipts/s |");
    println!("|--------:|------------------:|----------------------:|");
    for writers in 1..=3 {
        let file = dir.path().join(format!("receipts-{writers}.db"));
        let sqlite: Vec<Box<dyn LedgerStore>> = (0..writers)
            .map(|_| Box::new(Ledger::open(&file).expect("open SQLite")) as Box<dyn LedgerStore>)
            .collect();
        let sqlite = run(sqlite, receipts);
        let config = server
            .create_database(&format!("bench_{writers}"))
            .expect("create database");
        let pg: Vec<Box<dyn LedgerStore>> = (0..writers)
            .map(|_| {
                Box::new(PgLedgerStore::open(&config).expect("open PostgreSQL"))
                    as Box<dyn LedgerStore>
            })
            .collect();
        let pg = run(pg, receipts);
        println!("| {writers} | {sqlite:.0} | {pg:.0} |");
    }
}

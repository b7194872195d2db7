//! The receipts ledger on SQLite (one host) against PostgreSQL with 1, 2 and 3 hosts on one
//! database, in the same run (docs/performance.md#postgresql-ledger). Reports medians; no
//! timing is asserted. Every run ends with `verify` passing over the one chain.
//!
//! Run: `GUILD_REQUIRE_PG=1 cargo bench --profile dev -p guild-tests --bench shared_ledger`
//! (dev profile: Guild's crates unoptimised; it starts its own PostgreSQL server, `fsync` on).
//!
//! 1. Receipts per second, 8 writers per host, each writing one receipt at a time as a tool
//!    call does (intent committed, then the outcome, waited for). SQLite: one `Ledger`, intent
//!    by `begin`, outcome by `complete_queued` + `wait`, its group commit merging the writers'
//!    writes. PostgreSQL: one `PgLedgerStore` per host (its own connection, as a host has),
//!    `begin` then `complete`, group-committed per store; and, as the baseline of the same run,
//!    the same writers with one transaction per write (`begin_many`/`complete_many` of one
//!    write, which bypass the group commit, as every write did before it).
//! 2. Mutating tasks per second: real `Host`s (the probe specialist calling `echo.create`, one
//!    receipt per task), 8 tasks at once per host, on SQLite (one host) and on PostgreSQL with
//!    1, 2 and 3 hosts, each with its own data dir, on one database.
//!
//! The configurations take turns within each round, so a change of the machine's load falls on
//! all of them alike.

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use guild_host::Host;
use guild_host::receipts::{Begin, Completion, Intent, IntentId, Ledger, LedgerStore};
use guild_host::types::CallStatus;
use guild_pg::PgLedgerStore;
use guild_pg::testing::TestServer;
use serde_json::json;

const WRITERS: usize = 8;
const RECEIPTS_PER_WRITER: usize = 20;
const TASKS_PER_HOST: usize = 8;
const RUNS: usize = 5;

const PLUGINS: &[&str] = &["testing/probe", "testing/echo"];
const GRANTS: &str = "[grants.probe]\nreport = true\ntools = [\"echo.create\"]\n";

fn intent(writer: &str, n: usize) -> Intent {
    Intent {
        task_id: format!("{writer}-{n}"),
        route: "bench".into(),
        plugin: "tracker@1.0.0".into(),
        tool: "tracker.create_issue".into(),
        receipt_type: "issue".into(),
        operation: "create".into(),
        input_sha256: format!("{n:064x}"),
        idempotency_key: None,
        chain: Vec::new(),
    }
}

fn success(n: usize) -> Completion {
    Completion {
        status: CallStatus::Success,
        external_id: Some(format!("ISSUE-{n}")),
        verifiable_url: None,
        preview: None,
        error: None,
    }
}

fn proceed(b: Begin) -> IntentId {
    match b {
        Begin::Proceed(id) => id,
        Begin::Replay(_) => panic!("no idempotency keys here"),
    }
}

/// A temporary folder under target/ (the disk the other receipts benches write to).
fn scratch() -> tempfile::TempDir {
    let under = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(under).expect("create target/tmp");
    tempfile::tempdir_in(under).expect("tempdir")
}

/// How one writer writes a receipt.
#[derive(Clone, Copy)]
enum Path {
    /// SQLite's tool-call path: `begin`, `complete_queued`, `wait`.
    SqliteQueued,
    /// `begin`, `complete` (on PostgreSQL: group-committed with concurrent callers).
    Grouped,
    /// One transaction per write: `begin_many` and `complete_many` of one.
    OnePerWrite,
}

fn write_receipt(ledger: &Ledger, store: &dyn LedgerStore, path: Path, who: &str, n: usize) {
    match path {
        Path::SqliteQueued => {
            let id = proceed(ledger.begin(intent(who, n)).expect("begin"));
            let queued = ledger.complete_queued(&id, success(n));
            ledger.wait(queued).expect("outcome");
        }
        Path::Grouped => {
            let id = proceed(store.begin(intent(who, n)).expect("begin"));
            store.complete(&id, success(n)).expect("complete");
        }
        Path::OnePerWrite => {
            let mut began = store.begin_many(vec![intent(who, n)]).expect("begin");
            let id = proceed(began.pop().expect("one answer"));
            store
                .complete_many(vec![(&id, success(n))])
                .expect("complete");
        }
    }
}

/// `WRITERS` threads per store write `RECEIPTS_PER_WRITER` receipts each; the time from
/// their common start until the last is done. `ledger` is the SQLite one (for its queued path).
fn writers_run(ledger: &Arc<Ledger>, stores: &[Arc<dyn LedgerStore>], path: Path) -> Duration {
    let threads = stores.len() * WRITERS;
    let barrier = Arc::new(Barrier::new(threads + 1));
    let workers: Vec<_> = stores
        .iter()
        .enumerate()
        .flat_map(|(h, store)| (0..WRITERS).map(move |w| (format!("h{h}w{w}"), store.clone())))
        .map(|(who, store)| {
            let (barrier, ledger) = (barrier.clone(), ledger.clone());
            std::thread::spawn(move || {
                barrier.wait();
                for n in 0..RECEIPTS_PER_WRITER {
                    write_receipt(&ledger, store.as_ref(), path, &who, n);
                }
            })
        })
        .collect();
    barrier.wait();
    let started = Instant::now();
    for w in workers {
        w.join().expect("writer");
    }
    started.elapsed()
}

/// One receipts configuration: its label, and a fresh set of stores for each run.
struct ReceiptsConfig {
    label: String,
    path: Path,
    hosts: usize,
    samples: Vec<Duration>,
    /// Entries per committed transaction (PostgreSQL: entries over distinct `xmin`s).
    per_commit: Vec<f64>,
}

fn receipts_bench(server: &TestServer) {
    let dir = scratch();
    let mut configs = vec![ReceiptsConfig {
        label: "SQLite, 1 host (group commit)".into(),
        path: Path::SqliteQueued,
        hosts: 0,
        samples: Vec::new(),
        per_commit: Vec::new(),
    }];
    for (path, what) in [
        (Path::OnePerWrite, "one transaction per write"),
        (Path::Grouped, "group commit"),
    ] {
        for hosts in 1..=3 {
            configs.push(ReceiptsConfig {
                label: format!("PostgreSQL, {hosts} host(s) ({what})"),
                path,
                hosts,
                samples: Vec::new(),
                per_commit: Vec::new(),
            });
        }
    }
    let mut databases = 0;
    for run in 0..RUNS {
        for config in &mut configs {
            let sqlite = Arc::new(
                Ledger::open(dir.path().join(format!("{run}-{}.db", config.hosts)))
                    .expect("open SQLite"),
            );
            let stores: Vec<Arc<dyn LedgerStore>> = if config.hosts == 0 {
                vec![sqlite.clone() as Arc<dyn LedgerStore>]
            } else {
                databases += 1;
                let db = server
                    .create_database(&format!("receipts_{databases}"))
                    .expect("create database");
                (0..config.hosts)
                    .map(|_| {
                        Arc::new(PgLedgerStore::open(&db).expect("open PostgreSQL"))
                            as Arc<dyn LedgerStore>
                    })
                    .collect()
            };
            config
                .samples
                .push(writers_run(&sqlite, &stores, config.path));
            let report = stores[0].verify().expect("verify");
            let expected = 2 * stores.len() * WRITERS * RECEIPTS_PER_WRITER;
            assert!(
                report.ok && report.entries as usize == expected,
                "{}: {report}",
                config.label
            );
            if config.hosts > 0 {
                let commits: i64 = server
                    .client(&format!("receipts_{databases}"))
                    .expect("client")
                    .query_one("SELECT count(DISTINCT xmin::text) FROM ledger_entries", &[])
                    .expect("count transactions")
                    .get(0);
                config.per_commit.push(expected as f64 / commits as f64);
            }
        }
    }
    println!(
        "receipts/s: {WRITERS} writers per host, {RECEIPTS_PER_WRITER} receipts each \
         (intent + outcome, each durable), median of {RUNS}"
    );
    println!(
        "{:<52} {:>12} {:>12} {:>14}",
        "", "median ms", "receipts/s", "writes/commit"
    );
    for config in &mut configs {
        let median = guild_tests::median(config.samples.clone());
        let receipts = config.hosts.max(1) * WRITERS * RECEIPTS_PER_WRITER;
        config.per_commit.sort_by(f64::total_cmp);
        let per_commit = config
            .per_commit
            .get(config.per_commit.len() / 2)
            .map_or("-".to_owned(), |n| format!("{n:.1}"));
        println!(
            "{:<52} {:>12.0} {:>12.0} {:>14}",
            config.label,
            median.as_secs_f64() * 1e3,
            receipts as f64 / median.as_secs_f64(),
            per_commit
        );
    }
    println!();
}

/// Runs `f` on a plain thread: the `postgres` client starts a runtime of its own, which cannot
/// be done on a runtime thread.
fn off_runtime<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    std::thread::scope(|s| s.spawn(f).join().expect("no panic"))
}

/// `TASKS_PER_HOST` mutating tasks started at once on every host; the time until all ended.
async fn tasks_round(hosts: &[Host], round: usize) -> Duration {
    let started = Instant::now();
    let runs = hosts.iter().enumerate().flat_map(|(h, host)| {
        (0..TASKS_PER_HOST).map(move |t| {
            let op = json!({"op": "tool", "name": "echo.create",
                "input": {"title": format!("r{round}-h{h}-t{t}")}});
            guild_tests::probe(host, op)
        })
    });
    let probes = futures::future::join_all(runs).await;
    let elapsed = started.elapsed();
    for p in &probes {
        assert!(p.ok && p.result.receipts.len() == 1, "{p:?}");
    }
    elapsed
}

fn tasks_bench(server: &TestServer) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    // Stores first, off the runtime; then every configuration's hosts, kept for all rounds.
    let stores: Vec<String> = (1..=3)
        .map(|hosts| {
            let db = format!("tasks_{hosts}");
            off_runtime(|| server.create_database(&db)).expect("create database");
            format!("[store]\nurl = {:?}\n\n", server.url(&db))
        })
        .collect();
    let dirs: Vec<tempfile::TempDir> = (0..7).map(|_| scratch()).collect();
    let mut labels = vec!["SQLite, 1 host".to_owned()];
    labels.extend((1..=3).map(|n| format!("PostgreSQL, {n} host(s)")));
    runtime.block_on(async {
        let mut next_dir = dirs.iter();
        let mut configs: Vec<Vec<Host>> = Vec::new();
        for (c, store) in std::iter::once("")
            .chain(stores.iter().map(String::as_str))
            .enumerate()
        {
            let mut hosts = Vec::new();
            for _ in 0..c.max(1) {
                let dir = next_dir.next().expect("a data dir");
                let grants = format!("{store}{GRANTS}");
                hosts.push(guild_tests::host(dir.path(), PLUGINS, &grants).await);
            }
            // A first round unmeasured: components instantiated, connections warm.
            tasks_round(&hosts, usize::MAX).await;
            configs.push(hosts);
        }
        let mut samples = vec![Vec::new(); configs.len()];
        for round in 0..RUNS {
            for (c, hosts) in configs.iter().enumerate() {
                samples[c].push(tasks_round(hosts, round).await);
            }
        }
        for hosts in &configs {
            let report = hosts[0].verify_receipts().await.expect("verify");
            assert!(report.ok, "{report}");
        }
        println!(
            "mutating tasks/s: {TASKS_PER_HOST} tasks at once per host (probe -> echo.create, \
             one receipt each), median of {RUNS}"
        );
        println!("{:<52} {:>12} {:>12}", "", "median ms", "tasks/s");
        for ((label, samples), hosts) in labels.iter().zip(samples).zip(&configs) {
            let median = guild_tests::median(samples);
            let tasks = hosts.len() * TASKS_PER_HOST;
            println!(
                "{label:<52} {:>12.0} {:>12.1}",
                median.as_secs_f64() * 1e3,
                tasks as f64 / median.as_secs_f64()
            );
        }
        drop(configs);
    });
}

fn main() {
    let server = TestServer::start().expect("start PostgreSQL (run tests/setup.sh)");
    println!(
        "shared ledger benchmark: SQLite vs PostgreSQL (a server on 127.0.0.1:{})",
        server.port()
    );
    println!();
    receipts_bench(&server);
    tasks_bench(&server);
}

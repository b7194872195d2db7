//! Receipts benchmarks, each against a baseline measured in the same run (docs/performance.md).
//!
//! Run: `cargo bench -p guild-tests --bench receipts`.
//! Reports medians and ratios; no timing is asserted anywhere.
//!
//! 1. receipts appended per second, durably (WAL, `synchronous=FULL`, a file under target/):
//!    one-by-one (begin + complete, each its own transaction: 2 fsyncs per receipt) vs group
//!    commit (`begin_many` + `complete_many`, N receipts per pair of transactions) vs 1 and 8
//!    writers each writing one receipt at a time the way a task with one mutating tool call
//!    does (intent committed, outcome queued, then waited for before the next receipt; the
//!    ledger groups concurrent writers' writes into shared commits on its own), and the same
//!    with tasks of 10 mutating calls, whose outcomes share the next intent's commit;
//!    The floor under the one-by-one row is timed in the same run: a bare 4 KiB append +
//!    `fsync`, twice per receipt, without SQLite;
//! 2. validation time per report: 10 claims against 50 receipts vs a report with neither.

use std::time::{Duration, Instant};

use guild_host::receipts::{Begin, Completion, Intent, IntentId, Ledger, Receipt};
use guild_host::types::{CallStatus, Claim, Outcome, Report};
use guild_host::validate::{self, NoWorkspace};

const RECEIPTS_PER_RUN: u64 = 400;
const RUNS: usize = 5;

fn intent(n: u64) -> Intent {
    Intent {
        task_id: format!("task-{}", n / 50),
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

fn success(n: u64) -> Completion {
    Completion {
        status: CallStatus::Success,
        external_id: Some(format!("ISSUE-{n}")),
        verifiable_url: Some(format!("https://tracker.example/issues/{n}")),
        preview: Some(format!("issue {n} created")),
        error: None,
    }
}

fn proceed(b: Begin) -> IntentId {
    match b {
        Begin::Proceed(id) => id,
        Begin::Replay(_) => panic!("no idempotency keys here"),
    }
}

/// Time to append `RECEIPTS_PER_RUN` receipts in batches of `batch` (1 = one-by-one) to a
/// fresh file ledger.
fn append_run(batch: u64) -> Duration {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let ledger = Ledger::open(dir.path().join("ledger.db")).expect("open");
    let t = Instant::now();
    let mut n = 0;
    while n < RECEIPTS_PER_RUN {
        if batch == 1 {
            let id = proceed(ledger.begin(intent(n)).expect("begin"));
            ledger.complete(&id, success(n)).expect("complete");
        } else {
            let ids: Vec<IntentId> = ledger
                .begin_many((n..n + batch).map(intent).collect())
                .expect("begin_many")
                .into_iter()
                .map(proceed)
                .collect();
            ledger
                .complete_many(
                    ids.iter()
                        .zip(n..)
                        .map(|(id, k)| (id, success(k)))
                        .collect(),
                )
                .expect("complete_many");
        }
        n += batch;
    }
    t.elapsed()
}

/// Time for `threads` writers to append `RECEIPTS_PER_RUN` receipts between them to a fresh
/// file ledger, each receipt as the tool-call path writes it, in tasks of `calls` mutating
/// calls each: `begin` (committed before the effect), `complete_queued` (the outcome left in
/// the queue, where the task's next intent commits it with its own), and at the task's end
/// `wait` for every outcome (durable before the task's result).
fn concurrent_run(threads: u64, calls: usize) -> Duration {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let ledger = std::sync::Arc::new(Ledger::open(dir.path().join("ledger.db")).expect("open"));
    let t = Instant::now();
    let workers: Vec<_> = (0..threads)
        .map(|w| {
            let ledger = ledger.clone();
            std::thread::spawn(move || {
                let mine: Vec<u64> = (w..RECEIPTS_PER_RUN).step_by(threads as usize).collect();
                for task in mine.chunks(calls) {
                    let queued: Vec<_> = task
                        .iter()
                        .map(|&n| {
                            let id = proceed(ledger.begin(intent(n)).expect("begin"));
                            ledger.complete_queued(&id, success(n))
                        })
                        .collect();
                    for q in queued {
                        ledger.wait(q).expect("outcome");
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("writer");
    }
    t.elapsed()
}

fn per_second(d: Duration) -> f64 {
    RECEIPTS_PER_RUN as f64 / d.as_secs_f64()
}

fn validation_inputs() -> (Report, Vec<Receipt>) {
    let ledger = Ledger::open_in_memory().expect("ledger");
    for n in 0..50 {
        let mut i = intent(n);
        i.task_id = "task-v".into();
        let id = proceed(ledger.begin(i).expect("begin"));
        ledger.complete(&id, success(n)).expect("complete");
    }
    let receipts = ledger.for_task("task-v").expect("for_task");
    let report = Report {
        summary: "Filed ten issues.".into(),
        outcome: Outcome::Satisfied,
        details: "Details.".into(),
        hard_passed: true,
        open_issues: vec![],
        remaining_issues: vec![],
        next_step: None,
        artifacts: vec![],
        claims: (0..10)
            .map(|n| Claim {
                tool: "tracker.create_issue".into(),
                external_id: Some(format!("ISSUE-{}", n * 5)),
                text: format!("created issue {}", n * 5),
            })
            .collect(),
    };
    (report, receipts)
}

fn time_validation(report: &Report, receipts: &[Receipt], iters: usize) -> Duration {
    let mut samples = Vec::with_capacity(iters);
    for i in 0..iters + iters / 10 {
        let t = Instant::now();
        let v = validate::check("task-v", Some(report), receipts, &NoWorkspace);
        let elapsed = t.elapsed();
        std::hint::black_box(v);
        if i >= iters / 10 {
            samples.push(elapsed);
        }
    }
    guild_tests::median(samples)
}

fn main() {
    println!("receipts benchmark: {RECEIPTS_PER_RUN} receipts per run, median of {RUNS} runs");
    println!(
        "file ledger, WAL, synchronous=FULL, under {}",
        env!("CARGO_TARGET_TMPDIR")
    );
    println!();
    println!(
        "{:<34} {:>12} {:>14} {:>8}",
        "append", "median ms", "receipts/s", "ratio"
    );
    // Each one-by-one run alternates with its floor: two bare fsyncs per receipt, timed right
    // after it on the same disk.
    let mut bare = guild_tests::BareFsync::new(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")));
    let (runs, floors): (Vec<Duration>, Vec<Duration>) = (0..RUNS)
        .map(|_| {
            let run = append_run(1);
            let floor: Duration = (0..2 * RECEIPTS_PER_RUN).map(|_| bare.once()).sum();
            (run, floor)
        })
        .unzip();
    let baseline = guild_tests::median(runs);
    let row = |name: &str, d: Duration| {
        println!(
            "{name:<34} {:>12.1} {:>14.0} {:>7.1}x",
            d.as_secs_f64() * 1e3,
            per_second(d),
            per_second(d) / per_second(baseline)
        );
    };
    row("one-by-one (baseline)", baseline);
    row(
        "floor: 2 bare fsyncs per receipt",
        guild_tests::median(floors),
    );
    for batch in [10, 100] {
        let d = guild_tests::median((0..RUNS).map(|_| append_run(batch)).collect());
        row(&format!("group commit, {batch} per transaction"), d);
    }
    let one = guild_tests::median((0..RUNS).map(|_| concurrent_run(1, 1)).collect());
    row("1 writer, tool-call path", one);
    let eight = guild_tests::median((0..RUNS).map(|_| concurrent_run(8, 1)).collect());
    row("8 writers, tool-call path", eight);
    let one_many = guild_tests::median((0..RUNS).map(|_| concurrent_run(1, 10)).collect());
    row("1 writer, tasks of 10 calls", one_many);
    let eight_many = guild_tests::median((0..RUNS).map(|_| concurrent_run(8, 10)).collect());
    row("8 writers, tasks of 10 calls", eight_many);
    println!(
        "8 writers / 1 writer: {:.1}x (tasks of one call), {:.1}x (tasks of 10 calls)",
        one.as_secs_f64() / eight.as_secs_f64(),
        one_many.as_secs_f64() / eight_many.as_secs_f64()
    );

    println!();
    let (report, receipts) = validation_inputs();
    let mut bare = report.clone();
    bare.claims.clear();
    let base = time_validation(&bare, &[], 2000);
    let full = time_validation(&report, &receipts, 2000);
    let v = validate::check("task-v", Some(&report), &receipts, &NoWorkspace);
    assert_eq!(v.verdict, validate::CheckStatus::Passed, "{:?}", v.checks);
    println!(
        "{:<34} {:>12} {:>8}",
        "validation per report", "median µs", "ratio"
    );
    println!(
        "{:<34} {:>12.1} {:>7.1}x",
        "rules only, no claims (baseline)",
        base.as_secs_f64() * 1e6,
        1.0
    );
    println!(
        "{:<34} {:>12.1} {:>7.1}x",
        "10 claims vs 50 receipts",
        full.as_secs_f64() * 1e6,
        full.as_secs_f64() / base.as_secs_f64()
    );
}

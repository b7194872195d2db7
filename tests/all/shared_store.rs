//! Several hosts on one PostgreSQL database (`[store] url`, docs/postgres.md), with real
//! components and a real server (`guild_pg::testing::TestServer`): mutating tasks run at once
//! from every host end in one verified chain; an idempotency key used on two hosts runs its call
//! once, and is refused as in flight while its call runs on the other host; memory
//! compare-and-swap holds across hosts; `guild receipts verify` reads the same
//! chain and finds tampering in it; a background task started on one host is checked, listed
//! and cancelled from another.

use std::collections::BTreeSet;
use std::sync::Arc;

use futures::future::BoxFuture;
use guild_host::background::{BackgroundError, BackgroundStatus};
use guild_host::memory::{Actor, Memory, MemoryError, Scope};
use guild_host::receipts::{EntryKind, ReceiptStatus};
use guild_host::{ApprovalRequest, Approver, Host};
use guild_pg::testing::{TestServer, TestServerError};
use guild_tests::probe;
use serde_json::{Value, json};

const PLUGINS: &[&str] = &["testing/probe", "testing/echo"];
const GRANTS: &str = "[memory]\nworkspace = \"acme\"\nuser = \"ana\"\n\n[grants.probe]\n\
    memory = [\"team:read\", \"team:write\"]\nreport = true\ntools = [\"echo.create\", \"echo.guarded\"]\n";

/// A started server, or `None` (with a loud message) when PostgreSQL is not installed here and
/// `GUILD_REQUIRE_PG` is not set.
pub(crate) fn server() -> Option<TestServer> {
    match off_runtime(TestServer::start) {
        Ok(server) => Some(server),
        Err(e @ TestServerError::NotInstalled)
            if std::env::var_os("GUILD_REQUIRE_PG").is_none() =>
        {
            eprintln!("\n*** SKIPPED: {e} (set GUILD_REQUIRE_PG=1 to fail instead) ***\n");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

/// Runs `f` on a plain thread: the `postgres` client starts a runtime of its own, which
/// cannot be done on a runtime thread.
fn off_runtime<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    std::thread::scope(|s| s.spawn(f).join().expect("no panic"))
}

/// The database `db` on `server` as guild.toml's `[store]` table.
pub(crate) fn store_table(server: &TestServer, db: &str) -> String {
    off_runtime(|| server.create_database(db)).expect("create database");
    format!("[store]\nurl = {:?}\n\n", server.url(db))
}

/// `n` hosts, each with a data dir of its own, on the database `store` names.
async fn hosts(n: usize, store: &str) -> (Vec<tempfile::TempDir>, Vec<Host>) {
    let mut dirs = Vec::new();
    let mut hosts = Vec::new();
    for _ in 0..n {
        let dir = tempfile::tempdir().expect("tempdir");
        let h = guild_tests::host(dir.path(), PLUGINS, &format!("{store}{GRANTS}")).await;
        dirs.push(dir);
        hosts.push(h);
    }
    (dirs, hosts)
}

fn create(title: &str, key: Option<&str>) -> Value {
    let mut op = json!({"op": "tool", "name": "echo.create", "input": {"title": title}});
    if let Some(key) = key {
        op["key"] = json!(key);
    }
    op
}

async fn concurrent_tasks_from_every_host_make_one_chain(n_hosts: usize) {
    let Some(server) = server() else { return };
    let store = store_table(&server, &format!("chain_{n_hosts}"));
    let (dirs, hosts) = hosts(n_hosts, &store).await;
    const PER_HOST: usize = 3;
    let runs = hosts.iter().enumerate().flat_map(|(h, host)| {
        (0..PER_HOST).map(move |t| probe(host, create(&format!("h{h}-t{t}"), None)))
    });
    let probes = futures::future::join_all(runs).await;
    let mut ids = BTreeSet::new();
    for p in &probes {
        assert!(p.ok, "{p:?}");
        assert_eq!(p.result.receipts.len(), 1, "{p:?}");
        assert_eq!(p.result.receipts[0].status, ReceiptStatus::Success);
        ids.insert(p.result.receipts[0].id.clone());
    }
    assert_eq!(ids.len(), n_hosts * PER_HOST, "one receipt per call");
    for (i, host) in hosts.iter().enumerate() {
        let report = host.verify_receipts().await.expect("verify");
        // Per call an intent and an outcome, and every host audited its two plugin loads.
        assert!(report.ok, "host {i}: {report}");
        assert_eq!(
            report.entries as usize,
            2 * n_hosts * PER_HOST + 2 * n_hosts,
            "host {i} sees every host's entries in one chain: {report}"
        );
        let listed: BTreeSet<String> = host
            .receipts(None, 100)
            .await
            .expect("receipts")
            .into_iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(listed, ids, "host {i} lists every host's receipts");
    }
    // The chain read by `guild receipts verify` with the same guild.toml.
    let config = dirs[0].path().join("guild.toml");
    std::fs::write(&config, store.as_bytes()).expect("write guild.toml");
    assert_eq!(cli(&["receipts", "verify"], &config), 0, "verify passes");
    drop(hosts);
    let db = format!("chain_{n_hosts}");
    // The last entry removed behind Guild's back: found, then accepted by the operator.
    off_runtime(|| {
        server.client(&db).expect("client").batch_execute(
            "ALTER TABLE ledger_entries DISABLE TRIGGER USER; \
             DELETE FROM ledger_entries WHERE seq = (SELECT max(seq) FROM ledger_entries)",
        )
    })
    .expect("a superuser removes the last entry");
    assert_ne!(cli(&["receipts", "verify"], &config), 0, "the gap is found");
    assert_eq!(cli(&["receipts", "accept-head"], &config), 0, "accepted");
    assert_eq!(
        cli(&["receipts", "verify"], &config),
        0,
        "verify passes again"
    );
    off_runtime(|| {
        server.client(&db).expect("client").batch_execute(
            "ALTER TABLE ledger_entries DISABLE TRIGGER USER; \
                 UPDATE ledger_entries SET external_id = 'forged' \
                 WHERE seq = (SELECT max(seq) FROM ledger_entries WHERE kind = 'outcome')",
        )
    })
    .expect("a superuser edits an outcome");
    assert_ne!(
        cli(&["receipts", "verify"], &config),
        0,
        "verify finds the edited entry"
    );
}

/// Runs the `guild` command in-process (on a thread of its own: it starts its own runtime)
/// and returns its exit status (0 or not).
fn cli(args: &[&str], config: &std::path::Path) -> u8 {
    let mut argv: Vec<String> = vec!["guild".into(), "--config".into()];
    argv.push(config.display().to_string());
    argv.extend(args.iter().map(|a| a.to_string()));
    let code = std::thread::spawn(move || guild_cli::run(argv))
        .join()
        .expect("the command does not panic");
    u8::from(code != std::process::ExitCode::SUCCESS)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hosts_write_one_chain() {
    concurrent_tasks_from_every_host_make_one_chain(2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_hosts_write_one_chain() {
    concurrent_tasks_from_every_host_make_one_chain(3).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idempotency_key_used_on_two_hosts_calls_once() {
    let Some(server) = server() else { return };
    let store = store_table(&server, "idempotency");
    let (_dirs, hosts) = hosts(2, &store).await;
    let (a, b) = futures::join!(
        probe(&hosts[0], create("a", Some("k-1"))),
        probe(&hosts[1], create("a", Some("k-1")))
    );
    let called = |p: &guild_tests::Probe| p.ok && !p.result.tool_calls[0].replayed;
    let (winner, other) = match (called(&a), called(&b)) {
        (true, false) => (&a, &b),
        (false, true) => (&b, &a),
        _ => panic!("exactly one host calls the connector: {a:?} {b:?}"),
    };
    // The other host's task came while the call ran (refused as in flight) or after it ended
    // (a replay of its outcome): never a second call.
    let replayed = other.ok && other.result.tool_calls[0].replayed;
    assert!(
        replayed || (!other.ok && other.error.contains("still in flight")),
        "{other:?} (winner {winner:?})"
    );
    // The ledger holds one intent under the key, and a replay entry if the other host replayed.
    let all = hosts[0].receipts(None, 100).await.expect("receipts");
    let intents: Vec<_> = all
        .iter()
        .filter(|r| r.tool == "echo.create" && r.replay_of.is_none())
        .collect();
    assert_eq!(intents.len(), 1, "{all:?}");
    let replays: Vec<_> = all
        .iter()
        .filter(|r| r.entry == EntryKind::Replay)
        .collect();
    assert_eq!(replays.len(), usize::from(replayed), "{all:?}");
    assert!(
        replays
            .iter()
            .all(|r| r.replay_of.as_deref() == Some(intents[0].id.as_str()))
    );
    // Once the first call is recorded, the key replays its outcome on either host.
    for (i, host) in hosts.iter().enumerate() {
        let again = probe(host, create("a", Some("k-1"))).await;
        assert!(again.ok, "host {i}: {again:?}");
        assert!(
            again.result.tool_calls[0].replayed,
            "host {i}: not called again"
        );
    }
    let conflict = probe(&hosts[1], create("b", Some("k-1"))).await;
    assert!(
        !conflict.ok && conflict.error.contains("different input"),
        "{conflict:?}"
    );
    assert!(hosts[1].verify_receipts().await.expect("verify").ok);
}

/// A call that stalls on one host (`echo.stall`, ended by the connector's 3 s timeout): the
/// same key on the other host is refused as in flight while it runs, and replays its outcome
/// once it is recorded. Neither host calls twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_whose_call_runs_on_another_host_is_refused_as_in_flight() {
    let Some(server) = server() else { return };
    let store = store_table(&server, "in_flight");
    let config = format!(
        "{store}[grants.probe]\ntools = [\"echo.stall\"]\n\n[grants.echo]\n\
         limits = {{ timeout_s = 3 }}\n"
    );
    let (dirs, mut hosts) = (
        [
            tempfile::tempdir().expect("tempdir"),
            tempfile::tempdir().expect("tempdir"),
        ],
        Vec::new(),
    );
    for dir in &dirs {
        hosts.push(guild_tests::host(dir.path(), PLUGINS, &config).await);
    }
    let stall = json!({"op": "tool", "name": "echo.stall", "input": {}, "key": "k-stall"});
    let first = tokio::spawn({
        let (host, op) = (hosts[0].clone(), stall.clone());
        async move { probe(&host, op).await }
    });
    // Once the first host's intent is in the shared chain, the second host's call is refused.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while hosts[1]
        .receipts(None, 10)
        .await
        .expect("receipts")
        .is_empty()
    {
        assert!(std::time::Instant::now() < deadline, "no intent appeared");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let refused = probe(&hosts[1], stall.clone()).await;
    assert!(
        !refused.ok && refused.error.contains("still in flight"),
        "{refused:?}"
    );
    let first = first.await.expect("first task");
    assert!(
        !first.ok && first.error.contains("timed out"),
        "the stalled call ends by its timeout: {first:?}"
    );
    let again = probe(&hosts[1], stall).await;
    assert!(
        again.result.tool_calls[0].replayed,
        "the recorded outcome is replayed, not called again: {again:?}"
    );
    let calls: Vec<_> = hosts[0]
        .receipts(None, 10)
        .await
        .expect("receipts")
        .into_iter()
        .filter(|r| r.replay_of.is_none())
        .collect();
    assert_eq!(calls.len(), 1, "one call in all: {calls:?}");
    assert_eq!(calls[0].status, ReceiptStatus::Failed);
}

/// Approves, after storing `.2` over version `.1` through another host's memory `.0`.
struct OtherHost(Memory, u64, String);

impl Approver for OtherHost {
    fn approve(&self, _request: ApprovalRequest) -> BoxFuture<'static, bool> {
        let (memory, base, text) = (self.0.clone(), self.1, self.2.clone());
        Box::pin(async move {
            memory
                .update(Scope::Team, &text, base, &Actor::Supervisor)
                .await
                .expect("the other host stores its version");
            true
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_compare_and_swap_holds_across_hosts() {
    let Some(server) = server() else { return };
    let store = store_table(&server, "memory");
    let (_dirs, hosts) = hosts(2, &store).await;
    let v1 = "## Decisions\n- 2026-03-01: releases go out on Tuesdays\n";
    hosts[0]
        .memory()
        .update(Scope::Team, v1, 0, &Actor::Supervisor)
        .await
        .expect("v1");
    // Two supervisors on two hosts update version 1 at once: one wins, one gets the conflict.
    let (x, y) = futures::join!(
        hosts[0]
            .memory()
            .update(Scope::Team, "x", 1, &Actor::Supervisor),
        hosts[1]
            .memory()
            .update(Scope::Team, "y", 1, &Actor::Supervisor)
    );
    let won = [x.is_ok(), y.is_ok()];
    assert_eq!(won.iter().filter(|w| **w).count(), 1, "{x:?} {y:?}");
    let lost = if won[0] { y } else { x };
    assert!(
        matches!(lost, Err(MemoryError::Conflict { current: 2, .. })),
        "{lost:?}"
    );
    let winner = if won[0] { "x" } else { "y" };
    for host in &hosts {
        let now = host.memory().read(Scope::Team).await.expect("read");
        assert_eq!(now.text.trim_end(), winner, "both hosts read the winner");
    }
    // A specialist on host 0 reads version 2, and while it waits for an approval host 1
    // stores version 3: its update, based on 2, is refused and host 1's version stands.
    let theirs = "## Decisions\n- no deploys on Fridays\n".to_owned();
    let op = json!({"op": "seq", "ops": [
        {"op": "memory_read", "scope": "team"},
        {"op": "tool", "name": "echo.guarded", "input": {"to": "team"}},
        {"op": "memory_update", "scope": "team", "text": "mine"},
    ]});
    let other = OtherHost(hosts[1].memory().clone(), 2, theirs.clone());
    let r = hosts[0]
        .session()
        .with_approver(Arc::new(other))
        .task("probe", &op.to_string())
        .await
        .expect("runs");
    let answer: Value =
        serde_json::from_str(&r.report.as_ref().expect("report").details).expect("answer");
    let steps = answer["value"].as_array().expect("steps");
    assert_eq!(steps[0]["value"]["version"], json!(2), "{steps:?}");
    assert_eq!(
        steps[2]["ok"],
        json!(false),
        "the stale update is refused: {steps:?}"
    );
    let now = hosts[0].memory().read(Scope::Team).await.expect("read");
    assert_eq!(now.text, theirs, "host 1's version stands");
}

/// Waits until `host` reads task `id` as `want` (a guard against hanging, not a timing check).
async fn until_status(host: &Host, id: &str, want: BackgroundStatus) {
    let mut last = None;
    for _ in 0..600 {
        last = host.check_task(id).ok().map(|c| c.task.status);
        if last == Some(want) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("task {id} never became {want:?}; last {last:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_started_on_one_host_is_checked_and_listed_on_another() {
    let Some(server) = server() else { return };
    let store = store_table(&server, "tasks_seen");
    let (_dirs, hosts) = hosts(2, &store).await;
    let (a, b) = (&hosts[0], &hosts[1]);
    let brief = json!({"op": "reports", "texts": ["half way"], "pause_ms": 0}).to_string();
    let id = a.start_task("probe", &brief).expect("starts on a");
    let ended = b.until_task_ended(&id).await.expect("b waits for a's task");
    assert_eq!(ended.status, BackgroundStatus::Succeeded, "{ended:?}");
    let check = b.check_task(&id).expect("b checks a's task");
    assert!(check.task.result.is_some(), "b reads the result a wrote");
    let reports: Vec<String> = check.new_reports.iter().map(|r| r.output.clone()).collect();
    assert_eq!(
        reports,
        ["half way"],
        "b takes the report a stored: {check:?}"
    );
    assert!(
        a.check_task(&id).expect("a checks").new_reports.is_empty(),
        "one report cursor for every host"
    );
    assert_eq!(b.task_reports(&id).expect("reports").len(), 1);
    let listed: Vec<String> = b
        .list_tasks(10)
        .expect("list on b")
        .into_iter()
        .map(|t| t.id)
        .collect();
    assert_eq!(listed, [id], "b lists the task a started");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_from_another_host_stops_the_running_attempt() {
    let Some(server) = server() else { return };
    let store = store_table(&server, "tasks_cancel");
    let (_dirs, hosts) = hosts(2, &store).await;
    let (a, b) = (&hosts[0], &hosts[1]);
    let id = a
        .start_task("probe", &json!({"op": "loop"}).to_string())
        .expect("starts on a");
    until_status(b, &id, BackgroundStatus::Running).await;
    // Updating stays with the host running it (it restarts the attempt there).
    let err = b.update_task(&id, "narrower").expect_err("update from b");
    assert!(
        matches!(err, BackgroundError::OwnedElsewhere { .. }) && err.to_string().contains("pid"),
        "{err}"
    );
    b.cancel_task(&id).expect("b cancels a's task");
    // a's attempt sees the cancel in the store and stops: its handle ends.
    let on_a = a.wait_task(&id).await.expect("a's attempt ends");
    assert_eq!(on_a.status, BackgroundStatus::Cancelled);
    assert_eq!(a.calls_running(), 0);
    let err = a.cancel_task(&id).expect_err("already cancelled");
    assert!(err.to_string().contains("Cancelled"), "{err}");
    // a keeps serving.
    let r = a
        .task("probe", &json!({"op": "log", "text": "x"}).to_string())
        .await
        .expect("runs");
    assert!(r.report.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_from_another_host_reaches_the_running_task() {
    let Some(server) = server() else { return };
    let store = store_table(&server, "tasks_approve");
    let (_dirs, hosts) = hosts(2, &store).await;
    let (a, b) = (&hosts[0], &hosts[1]);
    let brief = json!({"op": "tool", "name": "echo.guarded", "input": {"to": "team"}}).to_string();
    for (approve, expect) in [(true, "\"ok\":true"), (false, "did not approve")] {
        let id = a.start_task("probe", &brief).expect("starts on a");
        let mut pending = None;
        for _ in 0..600 {
            pending = b.check_task(&id).expect("b checks").pending_approval;
            if pending.is_some() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        let request = pending.expect("b sees the request a's task waits on");
        assert_eq!(request.tool, "echo.guarded");
        assert!(request.input.contains("team"), "{request:?}");
        b.approve_task(&id, approve).expect("b answers");
        let done = a.wait_task(&id).await.expect("a's task ends");
        let details = done
            .result
            .and_then(|r| r.report)
            .map(|r| r.details)
            .unwrap_or_default();
        assert!(details.contains(expect), "{approve}: {details}");
        for host in [a, b] {
            let err = host.approve_task(&id, true).expect_err("answered once");
            assert!(err.to_string().contains("not waiting"), "{err}");
            assert!(
                host.check_task(&id)
                    .expect("check")
                    .pending_approval
                    .is_none()
            );
        }
    }
}

/// A host that stops while its tasks run (here a store standing in for it, which stops as a
/// host does): its task of a retryable specialist is taken up by a live host that has the
/// specialist and runs to the end there as attempt 2; its other task ends `interrupted` and is
/// not run again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retryable_task_whose_host_stopped_is_taken_up_by_another_host() {
    let Some(server) = server() else { return };
    let store = store_table(&server, "orphans");
    let dir = tempfile::tempdir().expect("tempdir");
    let live = guild_tests::host(dir.path(), PLUGINS, &format!("{store}{GRANTS}")).await;
    let url = server.url("orphans");
    let brief = create("again", Some("k-retry")).to_string();
    off_runtime(|| {
        let config = guild_pg::PgConfig::with_password(&url, None).expect("url");
        let gone = guild_pg::PgTaskStore::open(&config, std::time::Duration::from_secs(1))
            .expect("the other host's store");
        gone.insert_retryable("retry", "probe", &brief)
            .expect("a retryable task");
        gone.insert("plain", "probe", &brief).expect("a plain task");
        for id in ["retry", "plain"] {
            assert!(gone.start_attempt(id, 1).expect("start"), "{id} runs there");
        }
        // The other host stops with both tasks live.
    });
    until_status(&live, "plain", BackgroundStatus::Interrupted).await;
    until_status(&live, "retry", BackgroundStatus::Succeeded).await;
    let check = live.check_task("retry").expect("check");
    assert_eq!(check.task.attempt, 2, "{:?}", check.task);
    let result = check.task.result.expect("a result");
    let answer: Value = serde_json::from_str(&result.report.expect("a report").details)
        .expect("the probe's answer");
    assert_eq!(answer["ok"], json!(true), "the stored brief ran: {answer}");
    let receipts = live.receipts(Some("retry"), 10).await.expect("receipts");
    assert_eq!(receipts.len(), 1, "its call, recorded once: {receipts:?}");
    assert_eq!(receipts[0].status, ReceiptStatus::Success);
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    let plain = live.check_task("plain").expect("check");
    assert_eq!(
        (plain.task.status, plain.task.attempt),
        (BackgroundStatus::Interrupted, 1),
        "a task that is not retryable is never taken up"
    );
}

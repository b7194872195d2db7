//! The group commit (src/group.rs) against a real server: writes queued while a group is
//! blocked form the next group, are linked in queue order and share one transaction, a refused
//! write fails alone, and no write is answered before its group is committed — a group whose
//! connection is killed mid-transaction leaves nothing of its writes and answers none of them
//! with success.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use guild_core::types::CallStatus;
use guild_receipts::{AuditKind, Begin, Completion, Intent, LedgerError, LedgerStore};

use crate::PgLedgerStore;
use crate::testing::{TestServer, TestServerError};

fn server() -> Option<TestServer> {
    match TestServer::start() {
        Ok(server) => Some(server),
        Err(e @ TestServerError::NotInstalled)
            if std::env::var_os("GUILD_REQUIRE_PG").is_none() =>
        {
            eprintln!("SKIPPED: {e} (set GUILD_REQUIRE_PG=1 to fail instead)");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

fn intent(task: &str, key: Option<&str>, input: u8) -> Intent {
    Intent {
        task_id: task.into(),
        route: "planner".into(),
        plugin: "tracker@1.0.0".into(),
        tool: "tracker.create_issue".into(),
        receipt_type: "issue".into(),
        operation: "create".into(),
        input_sha256: hex::encode([input; 32]),
        idempotency_key: key.map(str::to_owned),
        chain: Vec::new(),
    }
}

fn done(external_id: &str) -> Completion {
    Completion {
        status: CallStatus::Success,
        external_id: Some(external_id.into()),
        verifiable_url: None,
        preview: None,
        error: None,
    }
}

/// Polls until `ready` (a condition, not a duration: the wait ends as soon as it holds).
fn until(what: &str, mut ready: impl FnMut() -> bool) {
    for _ in 0..24_000 {
        if ready() {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("gave up waiting until {what}");
}

/// The process id of the store's connection while it waits for a lock, if it does.
fn waiting_on_a_lock(watcher: &mut postgres::Client) -> Option<i32> {
    watcher
        .query_opt(
            "SELECT pid FROM pg_stat_activity WHERE application_name = 'guild' \
             AND wait_event_type = 'Lock'",
            &[],
        )
        .expect("read pg_stat_activity")
        .map(|row| row.get(0))
}

fn spawn<T: Send + 'static>(
    store: &Arc<PgLedgerStore>,
    write: impl FnOnce(&PgLedgerStore) -> T + Send + 'static,
) -> JoinHandle<T> {
    let store = Arc::clone(store);
    std::thread::spawn(move || write(&store))
}

#[test]
fn writes_queued_behind_a_group_share_one_transaction_in_queue_order() {
    let Some(server) = server() else {
        return;
    };
    let config = server.create_database("group_order").expect("database");
    let store = Arc::new(PgLedgerStore::open(&config).expect("open"));
    let Begin::Proceed(first) = store.begin(intent("t0", Some("k"), 1)).expect("begin") else {
        panic!("a fresh key proceeds");
    };
    // Another host holds the chain head: the next group waits for it, and writes queue.
    let mut other_host = server.client("group_order").expect("client");
    let mut watcher = server.client("group_order").expect("client");
    let mut hold = other_host.transaction().expect("transaction");
    hold.query_one("SELECT seq FROM ledger_head FOR UPDATE", &[])
        .expect("lock the head");
    let blocked = spawn(&store, |s| {
        s.audit(AuditKind::GrantChanged, "blocked", "waits for the head")
    });
    until("the first group waits for the head row", || {
        store.queue.queued().is_empty() && waiting_on_a_lock(&mut watcher).is_some()
    });
    let mut begins: Vec<_> = (1..=5)
        .map(|n| spawn(&store, move |s| s.begin(intent(&format!("t{n}"), None, n))))
        .collect();
    let first_again = guild_receipts::backend::intent_id(first.as_str().to_owned());
    let completed = spawn(&store, move |s| s.complete(&first, done("I-0")));
    until("the outcome is queued", || store.queue.queued().len() == 6);
    // The same receipt completed again in the same group, after the first outcome: refused,
    // alone; and the same key with another input: refused, alone.
    let again = spawn(&store, move |s| s.complete(&first_again, done("I-again")));
    begins.push(spawn(&store, |s| s.begin(intent("t6", Some("k"), 2))));
    until("eight writes are queued", || {
        store.queue.queued().len() == 8
    });
    let order = store.queue.queued();
    assert!(
        begins.iter().all(|t| !t.is_finished()) && !completed.is_finished(),
        "nothing is answered before its commit"
    );
    hold.commit().expect("release the head");

    blocked.join().expect("thread").expect("the blocked audit");
    completed.join().expect("thread").expect("the outcome");
    let again = again.join().expect("thread");
    assert!(
        matches!(again, Err(LedgerError::AlreadyCompleted { .. })),
        "{again:?}"
    );
    let answers: Vec<_> = begins
        .into_iter()
        .map(|t| t.join().expect("thread"))
        .collect();
    for answer in &answers[..5] {
        assert!(matches!(answer, Ok(Begin::Proceed(_))), "{answer:?}");
    }
    assert!(
        matches!(answers[5], Err(LedgerError::IdempotencyConflict { .. })),
        "{:?}",
        answers[5]
    );

    // seq 1: t0's intent; 2: the audit; then the group.
    let rows = watcher
        .query(
            "SELECT kind, task_id, receipt_id, xmin::text FROM ledger_entries WHERE seq > 2 \
             ORDER BY seq",
            &[],
        )
        .expect("read the group");
    let written: Vec<String> = rows
        .iter()
        .map(|r| {
            let kind: String = r.get(0);
            if kind == "intent" { r.get(1) } else { r.get(2) }
        })
        .collect();
    let outcome = order
        .iter()
        .position(|w| !w.starts_with('t'))
        .expect("the outcome is queued");
    let expected: Vec<String> = order
        .iter()
        .enumerate()
        .filter(|(i, w)| *w != "t6" && (w.starts_with('t') || *i == outcome))
        .map(|(_, w)| w.clone())
        .collect();
    assert_eq!(written, expected, "entries are linked in queue order");
    let transactions: std::collections::HashSet<String> =
        rows.iter().map(|r| r.get::<_, String>(3)).collect();
    assert_eq!(
        transactions.len(),
        1,
        "the six queued writes were committed in one transaction"
    );
    let report = store.verify().expect("verify");
    assert!(report.ok && report.entries == 8, "{report}");
    assert_eq!(report.anchored_sequence, Some(8));
}

#[test]
fn a_group_killed_mid_transaction_answers_no_write_and_leaves_none() {
    let Some(server) = server() else {
        return;
    };
    let config = server.create_database("group_kill").expect("database");
    let store = Arc::new(PgLedgerStore::open(&config).expect("open"));
    let mut other_host = server.client("group_kill").expect("client");
    let mut phantom_writer = server.client("group_kill").expect("client");
    let mut watcher = server.client("group_kill").expect("client");

    // The head is held elsewhere: X's group waits, and three writes queue behind it.
    let mut hold = other_host.transaction().expect("transaction");
    hold.query_one("SELECT seq FROM ledger_head FOR UPDATE", &[])
        .expect("lock the head");
    let x = spawn(&store, |s| s.begin(intent("x", None, 1)));
    until("X's group waits for the head row", || {
        store.queue.queued().is_empty() && waiting_on_a_lock(&mut watcher).is_some()
    });
    let group: Vec<_> = ["b", "c", "d"]
        .into_iter()
        .map(|t| spawn(&store, move |s| s.begin(intent(t, None, 2))))
        .collect();
    until("three writes are queued", || {
        store.queue.queued().len() == 3
    });
    // An uncommitted row at sequence 2: the next group (b, c, d) gets the head, appends b at
    // sequence 2 and waits there, in the middle of its transaction.
    let mut phantom = phantom_writer.transaction().expect("transaction");
    phantom
        .execute(
            "INSERT INTO ledger_entries (seq, kind, receipt_id, task_id, route, plugin, tool, \
             receipt_type, operation, status, time, input_sha256, prev_hash, hash) \
             VALUES (2, 'audit', 'phantom', '', '', '', '', '', '', '', '', '', '', '')",
            &[],
        )
        .expect("an uncommitted row");
    hold.commit().expect("release the head");
    let x = x.join().expect("thread");
    assert!(matches!(x, Ok(Begin::Proceed(_))), "{x:?}");
    let mut pid = None;
    until("the group of three waits inside its transaction", || {
        pid = waiting_on_a_lock(&mut watcher);
        pid.is_some()
    });
    for t in &group {
        assert!(
            !t.is_finished(),
            "no write of the group is answered before its commit"
        );
    }
    let terminated: bool = watcher
        .query_one("SELECT pg_terminate_backend($1)", &[&pid])
        .expect("terminate")
        .get(0);
    assert!(terminated);
    for t in group {
        let answer = t.join().expect("thread");
        assert!(
            matches!(answer, Err(LedgerError::GroupCommit { writes: 3, .. })),
            "a write of the killed group: {answer:?}"
        );
    }
    phantom.rollback().expect("drop the uncommitted row");

    let after = store.begin(intent("e", None, 3));
    assert!(
        matches!(after, Ok(Begin::Proceed(_))),
        "the store reconnects for the next write: {after:?}"
    );
    let tasks: Vec<String> = watcher
        .query("SELECT task_id FROM ledger_entries ORDER BY seq", &[])
        .expect("read")
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(
        tasks,
        ["x", "e"],
        "what was acknowledged is there; nothing of the killed group is"
    );
    let report = store.verify().expect("verify");
    assert!(report.ok && report.entries == 2, "{report}");
}

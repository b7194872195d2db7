//! Several stores on one database, as several hosts would be: concurrent appends from separate
//! connections and separate processes make one chain (no fork, no gap, `verify` ok), an
//! idempotency key runs its call once across stores and is refused as in flight while that call
//! runs on another store, memory compare-and-swap lets one of two racing writers win, and a
//! ledger changed behind Guild's back is refused until the operator accepts it.

mod common;

use std::sync::{Arc, Barrier};

use guild_core::types::CallStatus;
use guild_memory::{DocId, MemoryStore, MemoryStoreError, NewVersion, Scope};
use guild_pg::{PgConfig, PgLedgerStore, PgMemoryStore};
use guild_receipts::{Begin, Completion, Intent, LedgerError, LedgerStore, ReceiptStatus};

/// Environment of a writer child process (see [`writer_process`]).
const CHILD_URL: &str = "GUILD_PG_TEST_WRITER_URL";
const CHILD_CALLS: &str = "GUILD_PG_TEST_WRITER_CALLS";

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

fn success(external_id: &str) -> Completion {
    Completion {
        status: CallStatus::Success,
        external_id: Some(external_id.into()),
        verifiable_url: None,
        preview: None,
        error: None,
    }
}

/// `calls` intents with their outcomes, and an audit entry every tenth call.
fn write_calls(store: &dyn LedgerStore, who: &str, calls: usize) {
    for n in 0..calls {
        let Begin::Proceed(id) = store
            .begin(intent(&format!("{who}-{n}"), None, 1))
            .expect("begin")
        else {
            panic!("no key, no replay");
        };
        store
            .complete(&id, success(&format!("{who}-{n}")))
            .expect("complete");
        if n % 10 == 0 {
            store
                .audit(guild_receipts::AuditKind::GrantChanged, who, "concurrent")
                .expect("audit");
        }
    }
}

fn entries_for(calls: usize) -> u64 {
    (2 * calls + calls.div_ceil(10)) as u64
}

#[test]
fn concurrent_stores_make_one_chain() {
    let Some(server) = common::server() else {
        return;
    };
    const CALLS: usize = 40;
    for writers in [2, 3] {
        let config = common::fresh(&server);
        let barrier = Arc::new(Barrier::new(writers));
        let threads: Vec<_> = (0..writers)
            .map(|w| {
                let store = PgLedgerStore::open(&config).expect("open");
                let barrier = Arc::clone(&barrier);
                std::thread::spawn(move || {
                    barrier.wait();
                    write_calls(&store, &format!("w{w}"), CALLS);
                })
            })
            .collect();
        for t in threads {
            t.join().expect("writer");
        }
        let report = PgLedgerStore::open(&config)
            .expect("open")
            .verify()
            .expect("verify");
        assert!(report.ok, "{writers} writers: {report}");
        assert_eq!(
            report.entries,
            writers as u64 * entries_for(CALLS),
            "{writers} writers: every entry is in the one chain"
        );
        assert_eq!(report.anchored_sequence, Some(report.entries));
    }
}

#[test]
fn eight_callers_on_each_of_two_stores_make_one_chain() {
    let Some(server) = common::server() else {
        return;
    };
    const CALLS: usize = 12;
    const CALLERS: usize = 8;
    let config = common::fresh(&server);
    let stores: Vec<Arc<PgLedgerStore>> = (0..2)
        .map(|_| Arc::new(PgLedgerStore::open(&config).expect("open")))
        .collect();
    let barrier = Arc::new(Barrier::new(2 * CALLERS));
    let threads: Vec<_> = stores
        .iter()
        .enumerate()
        .flat_map(|(h, store)| (0..CALLERS).map(move |c| (h, c, Arc::clone(store))))
        .map(|(h, c, store)| {
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                write_calls(store.as_ref(), &format!("h{h}c{c}"), CALLS);
            })
        })
        .collect();
    for t in threads {
        t.join().expect("caller");
    }
    for (h, store) in stores.iter().enumerate() {
        let report = store.verify().expect("verify");
        assert!(report.ok, "store {h}: {report}");
        assert_eq!(
            report.entries,
            (2 * CALLERS) as u64 * entries_for(CALLS),
            "every caller's every write is in the one chain"
        );
        assert_eq!(report.anchored_sequence, Some(report.entries));
    }
    let outcomes = stores[0].list(usize::MAX).expect("list");
    assert_eq!(outcomes.len(), 2 * CALLERS * CALLS);
    assert!(
        outcomes.iter().all(|r| r.status == ReceiptStatus::Success),
        "every acknowledged outcome is recorded"
    );
}

/// Entry point of the writer processes [`separate_processes_make_one_chain`] starts (this test
/// binary again); does nothing when run otherwise.
#[test]
#[ignore = "a child process of separate_processes_make_one_chain"]
fn writer_process() {
    let (Some(url), Some(calls)) = (std::env::var_os(CHILD_URL), std::env::var_os(CHILD_CALLS))
    else {
        return;
    };
    let config = PgConfig::with_password(url.to_str().expect("url"), None).expect("url");
    let calls: usize = calls.to_str().and_then(|c| c.parse().ok()).expect("calls");
    let store = PgLedgerStore::open(&config).expect("open");
    write_calls(&store, &format!("p{}", std::process::id()), calls);
}

#[test]
fn separate_processes_make_one_chain() {
    let Some(server) = common::server() else {
        return;
    };
    const CALLS: usize = 30;
    let config = common::fresh(&server);
    let url = server.url(config.target().rsplit('/').next().expect("db"));
    drop(PgLedgerStore::open(&config).expect("migrate before the race"));
    let exe = std::env::current_exe().expect("test binary");
    let children: Vec<_> = (0..2)
        .map(|_| {
            std::process::Command::new(&exe)
                .args(["--ignored", "--exact", "writer_process", "--test-threads=1"])
                .env(CHILD_URL, &url)
                .env(CHILD_CALLS, CALLS.to_string())
                .stdout(std::process::Stdio::null())
                .spawn()
                .expect("start a writer process")
        })
        .collect();
    write_calls(&PgLedgerStore::open(&config).expect("open"), "here", CALLS);
    for mut child in children {
        assert!(
            child.wait().expect("wait").success(),
            "a writer process failed"
        );
    }
    let report = PgLedgerStore::open(&config)
        .expect("open")
        .verify()
        .expect("verify");
    assert!(report.ok, "{report}");
    assert_eq!(
        report.entries,
        3 * entries_for(CALLS),
        "three processes, one chain"
    );
}

#[test]
fn an_idempotency_key_calls_once_across_stores() {
    let Some(server) = common::server() else {
        return;
    };
    let config = common::fresh(&server);
    let stores: Vec<Arc<PgLedgerStore>> = (0..3)
        .map(|_| Arc::new(PgLedgerStore::open(&config).expect("open")))
        .collect();
    let barrier = Arc::new(Barrier::new(stores.len()));
    let answers: Vec<Result<Begin, LedgerError>> = stores
        .iter()
        .map(|s| {
            let (s, barrier) = (Arc::clone(s), Arc::clone(&barrier));
            std::thread::spawn(move || {
                barrier.wait();
                s.begin(intent("t1", Some("k"), 7))
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().expect("thread"))
        .collect();
    let proceeded: Vec<usize> = (0..answers.len())
        .filter(|&i| matches!(answers[i], Ok(Begin::Proceed(_))))
        .collect();
    assert_eq!(proceeded.len(), 1, "exactly one store runs the call");
    for (i, answer) in answers.iter().enumerate() {
        if i != proceeded[0] {
            assert!(
                matches!(answer, Err(LedgerError::InFlight { .. })),
                "store {i}: another store's call in flight is refused as in flight, never \
                 run again: {answer:?}"
            );
        }
    }
    let winner = proceeded[0];
    let Ok(Begin::Proceed(id)) = &answers[winner] else {
        unreachable!("filtered above");
    };
    stores[winner]
        .complete(id, success("I-7"))
        .expect("complete");
    let other = &stores[(winner + 1) % stores.len()];
    match other.begin(intent("t2", Some("k"), 7)).expect("replay") {
        Begin::Replay(r) => assert_eq!(
            (r.status, r.external_id.as_deref()),
            (ReceiptStatus::Success, Some("I-7")),
            "another store replays the recorded outcome"
        ),
        Begin::Proceed(_) => panic!("a recorded key must not call again on another store"),
    }
    assert!(
        matches!(
            other.begin(intent("t3", Some("k"), 8)),
            Err(LedgerError::IdempotencyConflict { .. })
        ),
        "the key with another input is a conflict on every store"
    );
    assert!(other.verify().expect("verify").ok);
}

/// Begins `key`'s first call on `store` and returns the intent.
fn running(store: &PgLedgerStore, key: &str) -> guild_receipts::IntentId {
    match store.begin(intent("runs", Some(key), 9)).expect("begin") {
        Begin::Proceed(id) => id,
        Begin::Replay(r) => panic!("a new key proceeds: {r:?}"),
    }
}

/// Begins `key` on `store` until it is no longer refused as in flight (the other store's mark
/// goes with its connection, which the server notices a moment after it closes).
fn once_settled(store: &PgLedgerStore, key: &str) -> Begin {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        match store.begin(intent("later", Some(key), 9)) {
            Err(LedgerError::InFlight { .. }) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            answer => return answer.expect("begin"),
        }
    }
}

#[test]
fn a_call_running_on_another_store_is_in_flight_until_it_ends_or_its_store_goes() {
    let Some(server) = common::server() else {
        return;
    };
    let config = common::fresh(&server);
    let (a, b) = (
        PgLedgerStore::open(&config).expect("open a"),
        PgLedgerStore::open(&config).expect("open b"),
    );
    // Running on a: refused on b, for a replay and for an operator's resolution alike.
    let id = running(&a, "k-run");
    let refused = b.begin(intent("other", Some("k-run"), 9));
    assert!(
        matches!(refused, Err(LedgerError::InFlight { .. })),
        "{refused:?}"
    );
    let resolve = b.resolve(id.as_str(), success("by hand"));
    assert!(
        matches!(resolve, Err(LedgerError::InFlight { .. })),
        "{resolve:?}"
    );
    a.complete(&id, success("I-9")).expect("complete");
    match b.begin(intent("other", Some("k-run"), 9)).expect("replay") {
        Begin::Replay(r) => assert_eq!(r.status, ReceiptStatus::Success),
        Begin::Proceed(_) => panic!("a recorded key must not call again"),
    }

    // Given up by a (`release`): unknown, replayed and resolvable on b.
    let given_up = running(&a, "k-released");
    a.release(&given_up);
    match once_settled(&b, "k-released") {
        Begin::Replay(r) => assert_eq!(r.status, ReceiptStatus::Unknown),
        Begin::Proceed(_) => panic!("a released call must not run again"),
    }
    let resolved = b
        .resolve(given_up.as_str(), success("checked by hand"))
        .expect("a released call is resolvable on another store");
    assert_eq!(resolved.status, ReceiptStatus::Success);

    // a's host dies mid-call (its connection closes): unknown on b, never run again.
    let orphan = running(&a, "k-orphan");
    drop(a);
    match once_settled(&b, "k-orphan") {
        Begin::Replay(r) => {
            assert_eq!(r.status, ReceiptStatus::Unknown);
            assert_eq!(r.replay_of.as_deref(), Some(orphan.as_str()));
        }
        Begin::Proceed(_) => panic!("the orphan's key must not call again"),
    }
    assert!(b.verify().expect("verify").ok);
}

#[test]
fn memory_compare_and_swap_across_stores() {
    let Some(server) = common::server() else {
        return;
    };
    let config = common::fresh(&server);
    let doc = DocId::new(Scope::Team, "acme");
    let a = Arc::new(PgMemoryStore::open(&config).expect("open"));
    let b = Arc::new(PgMemoryStore::open(&config).expect("open"));
    let new = |text: &str| NewVersion {
        text: text.into(),
        actor: "supervisor".into(),
        restored_from: None,
    };
    a.append(&doc, None, new("## v1\n")).expect("first version");
    let barrier = Arc::new(Barrier::new(2));
    let results: Vec<_> = [
        (Arc::clone(&a), "## from a\n"),
        (Arc::clone(&b), "## from b\n"),
    ]
    .into_iter()
    .map(|(store, text)| {
        let (barrier, doc, v) = (Arc::clone(&barrier), doc.clone(), new(text));
        std::thread::spawn(move || {
            barrier.wait();
            (text, store.append(&doc, Some(1), v))
        })
    })
    .collect::<Vec<_>>()
    .into_iter()
    .map(|t| t.join().expect("thread"))
    .collect();
    let won: Vec<&str> = results
        .iter()
        .filter(|(_, r)| r.is_ok())
        .map(|(text, _)| *text)
        .collect();
    assert_eq!(won.len(), 1, "one of two racing writers wins: {results:?}");
    let lost = results.iter().find(|(_, r)| r.is_err()).expect("a loser");
    assert!(
        matches!(
            lost.1,
            Err(MemoryStoreError::Conflict {
                expected: 1,
                found: 2,
                ..
            })
        ),
        "the other gets a conflict naming the new head: {:?}",
        lost.1
    );
    let current = b.current(&doc).expect("read").expect("stored");
    assert_eq!(
        (current.info.version, current.text.as_str()),
        (2, won[0]),
        "no lost update: the winner's text is the head"
    );
    let v3 = b
        .append(&doc, Some(2), new("## v3\n"))
        .expect("the loser validates again against the new head and succeeds");
    assert_eq!(v3.version, 3);
}

#[test]
fn a_ledger_changed_behind_guilds_back_is_refused() {
    let Some(server) = common::server() else {
        return;
    };
    let config = common::fresh(&server);
    let store = PgLedgerStore::open(&config).expect("open");
    write_calls(&store, "w", 3);
    let db = config.target().rsplit('/').next().expect("db").to_owned();
    let mut client = server.client(&db).expect("client");
    let refused = client
        .execute("DELETE FROM ledger_entries WHERE seq = 7", &[])
        .expect_err("entries are append-only");
    assert!(
        refused.to_string().contains("append-only")
            || format!("{refused:?}").contains("append-only")
    );
    client
        .batch_execute(
            "ALTER TABLE ledger_entries DISABLE TRIGGER USER; \
             DELETE FROM ledger_entries WHERE seq = 7",
        )
        .expect("a superuser removes the last entry");
    let report = store.verify().expect("verify");
    assert!(!report.ok, "a truncated tail is found: {report}");
    assert_eq!(report.first_bad_sequence, Some(7));
    assert!(
        matches!(
            store.audit(guild_receipts::AuditKind::GrantChanged, "w", "after"),
            Err(LedgerError::HeadMismatch { .. })
        ),
        "no write goes past the gap"
    );

    // The operator accepts the ledger as it is (`guild receipts accept-head`), from any host.
    let other = PgLedgerStore::open(&config).expect("another host opens it");
    let accepted = other
        .accept_head()
        .expect("accept")
        .expect("an audit entry records the acceptance");
    assert_eq!(accepted.kind, guild_receipts::AuditKind::HeadAccepted);
    assert_eq!(accepted.sequence, 7, "it takes the removed entry's place");
    assert!(
        accepted.detail.contains("the last entry is 6")
            && accepted.detail.contains("records entry 7"),
        "it says what was found: {}",
        accepted.detail
    );
    let report = store.verify().expect("verify");
    assert!(report.ok, "the chain reaches its head again: {report}");
    write_calls(&store, "after", 1);
    assert!(
        other.accept_head().expect("accept").is_none(),
        "a ledger that reaches its head has nothing to accept, and nothing is written"
    );
    assert_eq!(other.verify().expect("verify").entries, 10);
}

#[test]
fn a_ledger_that_reaches_its_head_has_nothing_to_accept() {
    let Some(server) = common::server() else {
        return;
    };
    let config = common::fresh(&server);
    let store = PgLedgerStore::open(&config).expect("open");
    assert!(store.accept_head().expect("accept empty").is_none());
    write_calls(&store, "w", 2);
    assert!(store.accept_head().expect("accept").is_none());
    let report = store.verify().expect("verify");
    assert!(report.ok && report.entries == 5, "{report}");
    assert!(
        store
            .audit_log(10)
            .expect("audit")
            .iter()
            .all(|a| a.kind != guild_receipts::AuditKind::HeadAccepted)
    );
}

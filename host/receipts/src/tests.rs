//! Unit tests of the ledger: two-phase receipts, idempotency, resolution, append-only
//! triggers, tamper detection, audit entries and group commit.

use super::*;
use guild_core::types::CallStatus;

fn sha(n: u8) -> String {
    hex::encode([n; 32])
}

/// An intent of the tracker's `create_issue` (shared with the group-commit tests).
pub(super) fn intent(task: &str, key: Option<&str>, input: u8) -> Intent {
    Intent {
        task_id: task.into(),
        route: "planner".into(),
        plugin: "tracker@1.0.0".into(),
        tool: "tracker.create_issue".into(),
        receipt_type: "issue".into(),
        operation: "create".into(),
        input_sha256: sha(input),
        idempotency_key: key.map(str::to_owned),
        chain: Vec::new(),
    }
}

fn success(id: &str) -> Completion {
    Completion {
        status: CallStatus::Success,
        external_id: Some(id.into()),
        verifiable_url: Some(format!("https://tracker.example/issues/{id}")),
        preview: Some("created".into()),
        error: Some("ignored on success".into()),
    }
}

fn pending() -> Completion {
    Completion {
        status: CallStatus::Pending,
        external_id: None,
        verifiable_url: None,
        preview: None,
        error: None,
    }
}

fn proceed(b: Begin) -> IntentId {
    match b {
        Begin::Proceed(id) => id,
        Begin::Replay(r) => panic!("expected proceed, got replay of {r:?}"),
    }
}

fn start(l: &Ledger, task: &str) -> IntentId {
    proceed(l.begin(intent(task, None, 1)).expect("begin"))
}

fn mem() -> Ledger {
    Ledger::open_in_memory().expect("in-memory ledger")
}

/// Runs raw SQL with the append-only triggers dropped, as an attacker with file access would.
fn tamper(l: &Ledger, sql: &str) {
    let inner = l.lock();
    inner
        .conn
        .execute_batch(&format!(
            "DROP TRIGGER entries_no_update; DROP TRIGGER entries_no_delete; {sql}"
        ))
        .expect("tamper");
}

#[test]
fn success_receipt_has_every_field() {
    let l = mem();
    let id = start(&l, "t1");
    let r = l.complete(&id, success("ISSUE-1")).expect("complete");
    assert_eq!(r.id, id.as_str());
    assert_eq!(r.status, ReceiptStatus::Success);
    assert_eq!(r.entry, EntryKind::Outcome);
    assert_eq!((r.sequence, r.entry_sequence), (1, 2));
    assert_eq!(r.task_id, "t1");
    assert_eq!(r.route, "planner");
    assert_eq!(r.plugin, "tracker@1.0.0");
    assert_eq!(r.tool, "tracker.create_issue");
    assert_eq!(
        (r.receipt_type.as_str(), r.operation.as_str()),
        ("issue", "create")
    );
    assert_eq!(r.external_id.as_deref(), Some("ISSUE-1"));
    assert_eq!(r.error, None, "error only when failed");
    assert_eq!(r.input_sha256, sha(1));
    assert!(r.time.ends_with('Z') && r.time.len() == 24, "{}", r.time);
    assert_eq!(r.hash.len(), 64);
    assert_eq!(l.get(id.as_str()).expect("get"), Some(r.clone()));
    let json = serde_json::to_value(&r).expect("json");
    assert_eq!(json["type"], "issue");
    assert_eq!(json["status"], "success");
}

#[test]
fn failed_receipt_keeps_error_verbatim_and_never_loses_it() {
    let l = mem();
    let id = start(&l, "t1");
    let r = l
        .complete(&id, Completion::failed("403: project is archived"))
        .expect("complete");
    assert_eq!(r.status, ReceiptStatus::Failed);
    assert_eq!(r.error.as_deref(), Some("403: project is archived"));
    let id = start(&l, "t1");
    let mut silent = Completion::failed("");
    silent.error = None;
    let r = l.complete(&id, silent).expect("complete");
    assert_eq!(
        r.error.as_deref(),
        Some("the connector reported failure without an error message")
    );
}

#[test]
fn preview_is_cut_to_200_characters_on_a_boundary() {
    let l = mem();
    let id = start(&l, "t1");
    let mut c = success("X");
    c.preview = Some("é".repeat(300));
    let r = l.complete(&id, c).expect("complete");
    assert_eq!(r.preview.as_deref().map(|p| p.chars().count()), Some(200));
    let id = start(&l, "t1");
    let mut c = success("Y");
    c.preview = Some("short".into());
    assert_eq!(
        l.complete(&id, c).expect("complete").preview.as_deref(),
        Some("short")
    );
}

#[test]
fn intent_without_outcome_reads_unknown_after_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("ledger.db");
    let id = {
        let l = Ledger::open(&path).expect("open");
        start(&l, "t1").as_str().to_owned()
        // Dropped without `complete`: the host "crashed" mid-call.
    };
    let l = Ledger::open(&path).expect("reopen");
    let r = l.get(&id).expect("get").expect("present");
    assert_eq!(r.status, ReceiptStatus::Unknown);
    assert_eq!(r.entry, EntryKind::Intent);
    // Reconciliation appends a resolution; the intent stays as it was.
    let r = l.resolve(&id, success("ISSUE-9")).expect("resolve");
    assert_eq!(
        (r.status, r.entry),
        (ReceiptStatus::Success, EntryKind::Resolution)
    );
    assert!(l.verify().expect("verify").ok);
}

#[test]
fn file_ledger_uses_wal_and_full_sync() {
    let dir = tempfile::tempdir().expect("tempdir");
    let l = Ledger::open(dir.path().join("l.db")).expect("open");
    let inner = l.lock();
    let mode: String = inner
        .conn
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .expect("journal_mode");
    let sync: i64 = inner
        .conn
        .pragma_query_value(None, "synchronous", |r| r.get(0))
        .expect("synchronous");
    assert_eq!(mode, "wal");
    assert_eq!(sync, 2, "synchronous=FULL");
}

#[test]
fn complete_twice_is_refused() {
    let l = mem();
    let id = start(&l, "t1");
    l.complete(&id, success("A")).expect("first");
    let err = l.complete(&id, success("B")).expect_err("second");
    assert!(
        matches!(
            err,
            LedgerError::AlreadyCompleted {
                status: ReceiptStatus::Success,
                ..
            }
        ),
        "{err}"
    );
    assert!(matches!(
        l.complete(&IntentId("nope".into()), success("C")),
        Err(LedgerError::NotFound { .. })
    ));
}

#[test]
fn idempotency_replays_the_recorded_outcome() {
    let l = mem();
    let id = proceed(l.begin(intent("t1", Some("k1"), 7)).expect("begin"));
    let first = l.complete(&id, success("ISSUE-1")).expect("complete");
    let entries = l.verify().expect("verify").entries;
    match l.begin(intent("t1", Some("k1"), 7)).expect("again") {
        Begin::Replay(r) => assert_eq!(*r, first),
        Begin::Proceed(_) => panic!("same key and input must not call again"),
    }
    assert_eq!(
        l.verify().expect("verify").entries,
        entries,
        "a replay in the calling task appends nothing"
    );
    // In another task the answer is that task's replay entry, named by its own id.
    let replay = match l.begin(intent("t2", Some("k1"), 7)).expect("again") {
        Begin::Replay(r) => *r,
        Begin::Proceed(_) => panic!("same key and input must not call again"),
    };
    assert_eq!(
        (
            replay.entry,
            replay.task_id.as_str(),
            replay.replay_of.as_deref(),
            replay.status,
            replay.external_id.as_deref()
        ),
        (
            EntryKind::Replay,
            "t2",
            Some(first.id.as_str()),
            ReceiptStatus::Success,
            Some("ISSUE-1")
        )
    );
    assert_ne!(replay.id, first.id);
    assert_eq!(l.get(&replay.id).expect("get"), Some(replay.clone()));
    assert_eq!(
        l.verify().expect("verify").entries,
        entries + 1,
        "a replay in another task appends one replay entry for it"
    );
    // Replayed again in that task: the same replay entry answers, nothing is appended.
    match l.begin(intent("t2", Some("k1"), 7)).expect("again") {
        Begin::Replay(r) => assert_eq!(*r, replay),
        Begin::Proceed(_) => panic!("same key and input must not call again"),
    }
    assert_eq!(l.verify().expect("verify").entries, entries + 1);
    // A different key, or no key, proceeds.
    assert!(matches!(
        l.begin(intent("t1", Some("k2"), 7)).expect("k2"),
        Begin::Proceed(_)
    ));
    assert!(matches!(
        l.begin(intent("t1", None, 7)).expect("no key"),
        Begin::Proceed(_)
    ));
}

#[test]
fn idempotency_conflict_on_a_different_input() {
    let l = mem();
    let id = proceed(l.begin(intent("t1", Some("k1"), 7)).expect("begin"));
    l.complete(&id, success("ISSUE-1")).expect("complete");
    let err = l.begin(intent("t1", Some("k1"), 8)).expect_err("conflict");
    assert!(
        matches!(&err, LedgerError::IdempotencyConflict { key, .. } if key == "k1"),
        "{err}"
    );
    assert!(err.to_string().contains("different input"), "{err}");
    // The key is scoped to the tool.
    let mut other = intent("t1", Some("k1"), 8);
    other.tool = "tracker.comment".into();
    assert!(matches!(
        l.begin(other).expect("other tool"),
        Begin::Proceed(_)
    ));
}

#[test]
fn same_key_while_in_flight_is_refused_and_unknown_after_a_crash_replays() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("l.db");
    {
        let l = Ledger::open(&path).expect("open");
        let _id = proceed(l.begin(intent("t1", Some("k"), 1)).expect("begin"));
        let err = l.begin(intent("t1", Some("k"), 1)).expect_err("in flight");
        assert!(matches!(err, LedgerError::InFlight { .. }), "{err}");
    }
    let l = Ledger::open(&path).expect("reopen");
    match l.begin(intent("t1", Some("k"), 1)).expect("after crash") {
        Begin::Replay(r) => assert_eq!(r.status, ReceiptStatus::Unknown),
        Begin::Proceed(_) => panic!("an unknown outcome must not be called again"),
    }
}

#[test]
fn pending_is_resolved_by_a_new_entry() {
    let l = mem();
    let id = start(&l, "t1");
    let p = l.complete(&id, pending()).expect("pending");
    assert_eq!(p.status, ReceiptStatus::Pending);
    let r = l.resolve(id.as_str(), success("ISSUE-5")).expect("resolve");
    assert_eq!(r.status, ReceiptStatus::Success);
    assert_eq!(r.entry, EntryKind::Resolution);
    assert_eq!(r.sequence, p.sequence, "same receipt");
    assert_eq!(r.prev_hash, p.hash, "appended right after");
    assert_eq!(l.get(id.as_str()).expect("get"), Some(r));
    // Three entries: intent, outcome, resolution — none edited.
    assert_eq!(l.verify().expect("verify").entries, 3);
    let err = l
        .resolve(id.as_str(), Completion::failed("late"))
        .expect_err("already success");
    assert!(matches!(err, LedgerError::NotResolvable { .. }), "{err}");
    assert!(matches!(
        l.resolve("missing", success("x")),
        Err(LedgerError::NotFound { .. })
    ));
}

#[test]
fn resolving_an_in_flight_intent_is_refused() {
    let l = mem();
    let id = start(&l, "t1");
    let err = l.resolve(id.as_str(), success("x")).expect_err("in flight");
    assert!(matches!(err, LedgerError::InFlight { .. }), "{err}");
}

#[test]
fn invalid_intents_name_the_field() {
    let l = mem();
    let mut bad = intent("", None, 1);
    assert!(matches!(
        l.begin(bad.clone()),
        Err(LedgerError::InvalidIntent {
            field: "task_id",
            ..
        })
    ));
    bad.task_id = "t".into();
    bad.input_sha256 = "abc".into();
    assert!(matches!(
        l.begin(bad.clone()),
        Err(LedgerError::InvalidIntent {
            field: "input_sha256",
            ..
        })
    ));
    bad.input_sha256 = sha(1);
    bad.idempotency_key = Some(String::new());
    assert!(matches!(
        l.begin(bad),
        Err(LedgerError::InvalidIntent {
            field: "idempotency_key",
            ..
        })
    ));
}

/// A receipt of task `task` in a delegation tree under `root` (chain root → task).
fn child_intent(root: &str, task: &str, key: Option<&str>) -> Intent {
    Intent {
        task_id: task.into(),
        chain: vec![root.into(), task.into()],
        ..intent(task, key, 2)
    }
}

#[test]
fn a_childs_receipt_names_its_chain_in_every_entry_and_replay() {
    let l = mem();
    let top = start(&l, "root");
    l.complete(&top, success("A")).expect("complete");
    let id = proceed(
        l.begin(child_intent("root", "kid", Some("k")))
            .expect("begin"),
    );
    assert_eq!(
        l.get(id.as_str()).expect("get").expect("found").chain,
        ["root", "kid"]
    );
    l.complete(&id, success("B")).expect("complete");
    let done = l.get(id.as_str()).expect("get").expect("found");
    assert_eq!((done.entry, done.chain.len()), (EntryKind::Outcome, 2));
    // The top task's receipt names none (and serialises without the field).
    let top = l.get(top.as_str()).expect("get").expect("found");
    assert!(top.chain.is_empty());
    let json = serde_json::to_value(&top).expect("json");
    assert!(json.get("chain").is_none(), "{json}");
    // A replay in another child of the tree names that child's chain.
    let Begin::Replay(r) = l
        .begin(child_intent("root", "kid2", Some("k")))
        .expect("replay")
    else {
        panic!("the same key and input replay");
    };
    assert_eq!(
        (r.task_id.as_str(), r.chain.clone()),
        ("kid2", vec!["root".to_owned(), "kid2".to_owned()])
    );
    assert!(l.verify().expect("verify").ok);
}

#[test]
fn editing_a_chain_breaks_verify() {
    for sql in [
        "UPDATE entries SET chain = 'other kid' WHERE seq = 3",
        "UPDATE entries SET chain = NULL WHERE seq = 3",
        "UPDATE entries SET chain = 'root' WHERE seq = 1",
    ] {
        let l = mem();
        let top = start(&l, "root");
        l.complete(&top, success("A")).expect("complete");
        let id = proceed(l.begin(child_intent("root", "kid", None)).expect("begin"));
        l.complete(&id, success("B")).expect("complete");
        assert!(l.verify().expect("verify").ok);
        tamper(&l, sql);
        let v = l.verify().expect("verify");
        assert!(!v.ok, "{sql}: {v}");
        let seq = if sql.ends_with("seq = 1") { 1 } else { 3 };
        assert_eq!(v.first_bad_sequence, Some(seq), "{sql}: {v}");
    }
}

#[test]
fn a_chain_is_checked_and_capped() {
    let l = mem();
    let refused = |intent: Intent| match l.begin(intent) {
        Err(LedgerError::InvalidIntent {
            field: "chain",
            reason,
        }) => reason,
        other => panic!("expected a refused chain, got {other:?}"),
    };
    let mut wrong_end = child_intent("root", "kid", None);
    wrong_end.chain = vec!["root".into(), "someone".into()];
    assert!(refused(wrong_end).contains("must end with the intent's task"));
    let mut spaced = child_intent("root", "kid", None);
    spaced.chain = vec!["ro ot".into(), "kid".into()];
    assert!(refused(spaced).contains("without whitespace"));
    let mut long = child_intent("root", "kid", None);
    long.chain = (0..MAX_CHAIN_LEN).map(|i| format!("t{i}")).collect();
    long.chain.push("kid".into());
    assert!(refused(long).contains(&format!("at most {MAX_CHAIN_LEN}")));
    let mut deepest = child_intent("root", "kid", None);
    deepest.chain = (1..MAX_CHAIN_LEN).map(|i| format!("t{i}")).collect();
    deepest.chain.push("kid".into());
    assert!(matches!(l.begin(deepest), Ok(Begin::Proceed(_))));
}

#[test]
fn update_and_delete_are_refused() {
    let l = mem();
    let id = start(&l, "t1");
    l.complete(&id, success("A")).expect("complete");
    let inner = l.lock();
    let up = inner
        .conn
        .execute("UPDATE entries SET status = 'success' WHERE seq = 1", [])
        .expect_err("update");
    assert!(
        up.to_string().contains("append-only: UPDATE refused"),
        "{up}"
    );
    let del = inner
        .conn
        .execute("DELETE FROM entries WHERE seq = 2", [])
        .expect_err("delete");
    assert!(
        del.to_string().contains("append-only: DELETE refused"),
        "{del}"
    );
}

fn ledger_with(n: usize) -> Ledger {
    let l = mem();
    for i in 0..n {
        let id = start(&l, "t1");
        l.complete(&id, success(&format!("ISSUE-{i}")))
            .expect("complete");
    }
    l
}

#[test]
fn verify_passes_on_an_untouched_ledger() {
    let l = ledger_with(3);
    l.audit(AuditKind::GrantChanged, "tracker@1.0.0", "+tracker.close")
        .expect("audit");
    let v = l.verify().expect("verify");
    assert!(v.ok, "{v}");
    assert_eq!(v.entries, 7);
    assert_eq!(v.first_bad_sequence, None);
    assert!(v.to_string().starts_with("ok: 7 entries"), "{v}");
    let empty = mem().verify().expect("verify");
    assert!(empty.ok && empty.entries == 0);
}

#[test]
fn verify_finds_an_edited_field() {
    let l = ledger_with(3);
    tamper(
        &l,
        "UPDATE entries SET external_id = 'ISSUE-99' WHERE seq = 4",
    );
    let v = l.verify().expect("verify");
    assert!(!v.ok);
    assert_eq!(v.first_bad_sequence, Some(4), "{v}");
    assert!(v.reason.as_deref().unwrap_or("").contains("edited"), "{v}");
}

#[test]
fn verify_finds_a_deleted_entry() {
    let l = ledger_with(3);
    tamper(&l, "DELETE FROM entries WHERE seq = 3");
    let v = l.verify().expect("verify");
    assert_eq!(v.first_bad_sequence, Some(3), "{v}");
    assert!(v.reason.as_deref().unwrap_or("").contains("deleted"), "{v}");
}

#[test]
fn verify_finds_a_deletion_hidden_by_renumbering() {
    let l = ledger_with(3);
    tamper(
        &l,
        "DELETE FROM entries WHERE seq = 3; UPDATE entries SET seq = seq - 1 WHERE seq > 3;",
    );
    let v = l.verify().expect("verify");
    assert_eq!(v.first_bad_sequence, Some(3), "{v}");
}

#[test]
fn verify_finds_a_reorder() {
    let l = ledger_with(3);
    tamper(
        &l,
        "UPDATE entries SET seq = 100 WHERE seq = 3; \
         UPDATE entries SET seq = 3 WHERE seq = 5; \
         UPDATE entries SET seq = 5 WHERE seq = 100;",
    );
    let v = l.verify().expect("verify");
    assert!(!v.ok);
    assert_eq!(v.first_bad_sequence, Some(3), "{v}");
}

#[test]
fn verify_finds_an_outcome_without_intent() {
    // A well-hashed chain that is structurally wrong (e.g. rebuilt by a buggy tool).
    let l = ledger_with(1);
    tamper(&l, "DELETE FROM entries");
    let inner = l.lock();
    let mut e = chain::Entry {
        seq: 1,
        kind: "outcome".into(),
        receipt_id: "r".into(),
        task_id: "t".into(),
        route: String::new(),
        plugin: String::new(),
        tool: "x.y".into(),
        receipt_type: String::new(),
        operation: String::new(),
        status: "success".into(),
        external_id: None,
        verifiable_url: None,
        preview: None,
        error: None,
        time: "t".into(),
        input_sha256: sha(1),
        idempotency_key: None,
        detail: None,
        chain: None,
        prev_hash: chain::GENESIS.into(),
        hash: String::new(),
    };
    e.hash = e.compute_hash();
    inner
        .conn
        .execute(
            &format!(
                "INSERT INTO entries ({}) VALUES (1, 'outcome', 'r', 't', '', '', 'x.y', '', '', \
                 'success', NULL, NULL, NULL, NULL, 't', ?1, NULL, NULL, ?2, ?3, NULL)",
                chain::COLUMNS
            ),
            rusqlite::params![e.input_sha256, e.prev_hash, e.hash],
        )
        .expect("insert");
    drop(inner);
    let v = l.verify().expect("verify");
    assert_eq!(v.first_bad_sequence, Some(1), "{v}");
    assert!(
        v.reason
            .as_deref()
            .unwrap_or("")
            .contains("does not follow"),
        "{v}"
    );
}

#[test]
fn audit_entries_share_the_chain() {
    let l = mem();
    let a = l
        .audit(
            AuditKind::PluginLoaded,
            "tracker@1.0.0",
            "from plugins/tracker",
        )
        .expect("audit");
    let id = start(&l, "t1");
    let r = l.complete(&id, success("A")).expect("complete");
    let b = l
        .audit(AuditKind::PluginUnloaded, "tracker@1.0.0", "")
        .expect("audit");
    assert_eq!((a.sequence, r.sequence, b.sequence), (1, 2, 4));
    assert_eq!(b.prev_hash, r.hash);
    let log = l.audit_log(10).expect("log");
    assert_eq!(log, vec![a.clone(), b]);
    assert_eq!(
        l.get(&a.id).expect("get"),
        None,
        "audit ids are not receipts"
    );
    assert_eq!(l.list(10).expect("list").len(), 1);
    let json = serde_json::to_value(&a).expect("json");
    assert_eq!(json["kind"], "plugin_loaded");
}

#[test]
fn queries_by_task_and_recent() {
    let l = mem();
    let a = start(&l, "t1");
    let b = start(&l, "t2");
    let c = start(&l, "t1");
    l.complete(&a, pending()).expect("a");
    l.complete(&c, success("C")).expect("c");
    l.resolve(a.as_str(), success("A")).expect("resolve a");
    let t1 = l.for_task("t1").expect("t1");
    let ids: Vec<_> = t1.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, [a.as_str(), c.as_str()], "in call order");
    assert_eq!(t1[0].status, ReceiptStatus::Success, "shows the resolution");
    assert_eq!(
        l.for_task("t2").expect("t2")[0].status,
        ReceiptStatus::Unknown
    );
    assert!(l.for_task("t3").expect("t3").is_empty());
    let recent: Vec<_> = l.list(2).expect("list").into_iter().map(|r| r.id).collect();
    assert_eq!(recent, [b.as_str(), c.as_str()], "two newest, oldest first");
}

#[test]
fn group_commit_appends_many_in_one_transaction() {
    let l = mem();
    let intents: Vec<_> = (0..10).map(|i| intent("t1", None, i)).collect();
    let begun: Vec<_> = l
        .begin_many(intents)
        .expect("begin_many")
        .into_iter()
        .map(proceed)
        .collect();
    let receipts = l
        .complete_many(
            begun
                .iter()
                .enumerate()
                .map(|(i, id)| (id, success(&format!("I-{i}"))))
                .collect(),
        )
        .expect("complete_many");
    assert_eq!(receipts.len(), 10);
    assert!(receipts.iter().all(|r| r.status == ReceiptStatus::Success));
    assert_eq!(l.verify().expect("verify").entries, 20);
}

#[test]
fn group_commit_is_all_or_nothing() {
    let l = mem();
    let id = proceed(l.begin(intent("t1", Some("k"), 1)).expect("begin"));
    l.complete(&id, success("A")).expect("complete");
    let before = l.verify().expect("verify").entries;
    let err = l
        .begin_many(vec![intent("t1", None, 2), intent("t1", Some("k"), 9)])
        .expect_err("conflict in batch");
    assert!(
        matches!(err, LedgerError::IdempotencyConflict { .. }),
        "{err}"
    );
    assert_eq!(l.verify().expect("verify").entries, before, "rolled back");
    // A key repeated inside one batch: the second is in flight.
    let err = l
        .begin_many(vec![intent("t1", Some("n"), 2), intent("t1", Some("n"), 2)])
        .expect_err("repeat in batch");
    assert!(matches!(err, LedgerError::InFlight { .. }), "{err}");
}

//! Tests of the ledger file: what is refused (empty, not SQLite, another application's or
//! another store's database, a newer schema), what is created and adopted, read-only opens,
//! the head anchor that catches a truncated tail, and the [`LedgerStore`] conformance run.

use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::*;
use guild_core::types::CallStatus;

fn intent(n: u8) -> Intent {
    Intent {
        task_id: "t1".into(),
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

/// Appends `n` success receipts (2n entries).
pub(super) fn append(l: &Ledger, n: u8) {
    for i in 0..n {
        let Begin::Proceed(id) = l.begin(intent(i)).expect("begin") else {
            panic!("no key, no replay");
        };
        l.complete(
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
}

fn marks(path: &Path) -> (i32, i64) {
    let c = Connection::open(path).expect("raw open");
    let app = c
        .pragma_query_value(None, "application_id", |r| r.get(0))
        .expect("application_id");
    let version = c
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .expect("user_version");
    (app, version)
}

pub(super) fn ledger_in(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("receipts.db")
}

#[test]
fn a_fresh_path_gets_a_marked_ledger() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = ledger_in(&dir);
    let l = Ledger::open(&path).expect("created");
    append(&l, 1);
    drop(l);
    assert_eq!(marks(&path), (APPLICATION_ID, schema::VERSION));
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(names.is_empty(), "{names:?}");
    assert_eq!(
        Ledger::open(&path)
            .expect("reopened")
            .list(10)
            .expect("list")
            .len(),
        1
    );
}

#[test]
fn an_empty_file_is_refused_and_left_as_it_is() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = ledger_in(&dir);
    std::fs::write(&path, b"").expect("touch");
    for result in [Ledger::open(&path), Ledger::open_read_only(&path)] {
        let Err(err) = result else {
            panic!("an empty file was adopted");
        };
        assert!(
            matches!(err, LedgerError::File(DbFileError::Empty { .. })),
            "{err}"
        );
        let text = err.to_string();
        assert!(text.contains(&path.display().to_string()), "{text}");
        assert!(
            text.contains("0 bytes") && text.contains("backup"),
            "{text}"
        );
    }
    assert_eq!(std::fs::metadata(&path).expect("still there").len(), 0);
}

#[test]
fn a_foreign_database_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases: [(&str, &str, &str); 4] = [
        (
            "another app's tables",
            "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);",
            "tables (notes)",
        ),
        ("no tables at all", "PRAGMA user_version = 3;", "no tables"),
        (
            "our tables under another application id",
            "PRAGMA application_id = 1234;",
            "application_id is 0x000004d2",
        ),
        (
            "a task store",
            "PRAGMA application_id = 1196180564;",
            "0x474c4454",
        ),
    ];
    for (name, sql, says) in cases {
        let path = dir.path().join(format!("{}.db", name.replace(' ', "-")));
        let c = Connection::open(&path).expect("create");
        if name.starts_with("our") || name.starts_with("a task") {
            c.execute_batch(schema::SPEC.schema).expect("schema");
        }
        c.execute_batch(sql).expect("setup");
        drop(c);
        let before = std::fs::read(&path).expect("read");
        for result in [Ledger::open(&path), Ledger::open_read_only(&path)] {
            let Err(err) = result else {
                panic!("{name}: adopted");
            };
            assert!(
                matches!(err, LedgerError::File(DbFileError::Foreign { .. })),
                "{name}: {err}"
            );
            let text = err.to_string();
            assert!(text.contains(&path.display().to_string()), "{name}: {text}");
            assert!(text.contains(says), "{name}: {text}");
            assert!(text.contains("move the file away"), "{name}: {text}");
        }
        assert_eq!(std::fs::read(&path).expect("read"), before, "{name}");
    }
}

#[test]
fn a_file_that_is_not_sqlite_or_of_a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("text.db");
    std::fs::write(&path, "receipts, kept by hand\n".repeat(200)).expect("write");
    let err = Ledger::open(&path).err().expect("refused");
    assert!(
        matches!(err, LedgerError::File(DbFileError::NotSqlite { .. })),
        "{err}"
    );
    let path = ledger_in(&dir);
    drop(Ledger::open(&path).expect("created"));
    Connection::open(&path)
        .expect("raw")
        .pragma_update(None, "user_version", 3)
        .expect("bump");
    let err = Ledger::open(&path).err().expect("refused");
    assert!(
        matches!(
            err,
            LedgerError::File(DbFileError::UnsupportedSchema {
                found: 3,
                supported: 2,
                ..
            })
        ),
        "{err}"
    );
}

#[test]
fn a_ledger_of_an_earlier_build_is_read_as_is_then_stamped_and_anchored() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = ledger_in(&dir);
    // What earlier builds wrote: version 1's schema, user_version 1, no application id, no
    // anchor.
    write_v1(&path, 0, 2);
    std::fs::remove_file(dir.path().join("receipts.head")).expect("no anchor");
    assert_eq!(marks(&path).0, 0);

    let ro = Ledger::open_read_only(&path).expect("read-only adopts");
    assert_eq!(ro.list(10).expect("list").len(), 2);
    let v = ro.verify().expect("verify");
    assert!(v.ok && v.anchored_sequence.is_none(), "{v}");
    drop(ro);
    assert_eq!(marks(&path).0, 0, "a read-only open stamps nothing");
    assert!(!dir.path().join("receipts.head").exists());

    let l = Ledger::open(&path).expect("read-write adopts");
    assert_eq!(marks(&path), (APPLICATION_ID, schema::VERSION));
    let v = l.verify().expect("verify");
    assert!(v.ok, "{v}");
    assert_eq!(v.anchored_sequence, Some(4), "{v}");
}

/// A ledger file as a build before chains wrote it: version 1's schema and `n` success
/// receipts hashed under encoding v1, marked with `application_id` `app` (0: unstamped).
fn write_v1(path: &Path, app: i32, n: u8) {
    let c = Connection::open(path).expect("create");
    c.execute_batch(schema::SCHEMA_V1).expect("schema");
    c.pragma_update(None, "user_version", 1).expect("version");
    c.pragma_update(None, "application_id", app).expect("mark");
    let columns = chain::COLUMNS.trim_end_matches(", chain");
    let (mut seq, mut hash) = (0, chain::GENESIS.to_owned());
    for i in 0..n {
        let mut first = backend::intent_entry(intent(i), format!("r{i}"));
        backend::link(&mut first, seq, &hash);
        let mut second = backend::follow_up(
            first.clone(),
            EntryKind::Outcome,
            Completion {
                status: CallStatus::Success,
                external_id: Some(format!("I-{i}")),
                verifiable_url: None,
                preview: None,
                error: None,
            },
        );
        backend::link(&mut second, first.seq, &first.hash);
        for e in [first, second] {
            c.execute(
                &format!(
                    "INSERT INTO entries ({columns}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, \
                     ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)"
                ),
                rusqlite::params![
                    e.seq as i64,
                    e.kind,
                    e.receipt_id,
                    e.task_id,
                    e.route,
                    e.plugin,
                    e.tool,
                    e.receipt_type,
                    e.operation,
                    e.status,
                    e.external_id,
                    e.verifiable_url,
                    e.preview,
                    e.error,
                    e.time,
                    e.input_sha256,
                    e.idempotency_key,
                    e.detail,
                    e.prev_hash,
                    e.hash,
                ],
            )
            .expect("insert");
            (seq, hash) = (e.seq, e.hash);
        }
    }
    anchor::write(&anchor::path_for(path), &anchor::Head { seq, hash }).expect("anchor");
}

#[test]
fn a_version_1_ledger_verifies_read_only_then_upgrades_and_takes_chains() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = ledger_in(&dir);
    write_v1(&path, APPLICATION_ID, 2);

    // Read-only: every receipt reads (no chain), the chain verifies, the file is untouched.
    let before = std::fs::read(&path).expect("read");
    let ro = Ledger::open_read_only(&path).expect("read-only");
    let listed = ro.list(10).expect("list");
    assert_eq!(listed.len(), 2);
    assert!(listed.iter().all(|r| r.chain.is_empty()));
    let v = ro.verify().expect("verify");
    assert!(v.ok && v.entries == 4, "{v}");
    drop(ro);
    assert_eq!(std::fs::read(&path).expect("read"), before);
    assert_eq!(marks(&path), (APPLICATION_ID, 1));

    // Read-write: upgraded to version 2; old entries keep their v1 hashes, new ones name chains.
    let l = Ledger::open(&path).expect("upgrades");
    assert_eq!(marks(&path), (APPLICATION_ID, schema::VERSION));
    let child = Intent {
        task_id: "child".into(),
        chain: vec!["root".into(), "child".into()],
        ..intent(7)
    };
    let Begin::Proceed(id) = l.begin(child).expect("begin") else {
        panic!("no key, no replay");
    };
    let r = l.get(id.as_str()).expect("get").expect("found");
    assert_eq!(r.chain, ["root", "child"]);
    assert!(l.verify().expect("verify").ok);
    drop(l);
    let v = verify_file(&path).expect("verify_file");
    assert!(v.ok && v.entries == 5, "{v}");
}

#[test]
fn read_only_open_writes_nothing_and_refuses_writes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = ledger_in(&dir);
    let err = Ledger::open_read_only(&path).err().expect("missing");
    assert!(
        matches!(err, LedgerError::File(DbFileError::Missing { .. })),
        "{err}"
    );
    assert!(!path.exists(), "a read-only open creates nothing");
    append(&Ledger::open(&path).expect("open"), 2);
    let before = std::fs::read(&path).expect("read");
    let ro = Ledger::open_read_only(&path).expect("read-only");
    assert!(ro.verify().expect("verify").ok);
    assert!(
        ro.begin(intent(9)).is_err(),
        "a read-only ledger refuses writes"
    );
    drop(ro);
    assert_eq!(std::fs::read(&path).expect("read"), before);
}

#[test]
fn the_head_anchor_follows_every_append() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = ledger_in(&dir);
    let l = Ledger::open(&path).expect("open");
    assert_eq!(
        l.anchor_path(),
        Some(dir.path().join("receipts.head").as_path())
    );
    append(&l, 3);
    let v = l.verify().expect("verify");
    let head = anchor::read(&dir.path().join("receipts.head"))
        .expect("readable")
        .expect("present");
    assert_eq!((head.seq, head.hash.as_str()), (6, v.head_hash.as_str()));
    assert!(v.ok && v.anchored_sequence == Some(6), "{v}");
}

/// Deletes the last `n` entries with the append-only triggers dropped.
pub(super) fn cut_tail(path: &Path, n: u64) {
    let c = Connection::open(path).expect("raw");
    c.execute_batch(&format!(
        "DROP TRIGGER entries_no_delete; \
         DELETE FROM entries WHERE seq > (SELECT MAX(seq) FROM entries) - {n};"
    ))
    .expect("delete");
}

#[test]
fn verify_reports_a_truncated_tail_by_the_anchor_sequence() {
    for n in [1, 3, 6] {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = ledger_in(&dir);
        append(&Ledger::open(&path).expect("open"), 3);
        cut_tail(&path, n);
        // Refused for writing (see `anchor_tests`); read-only, and through `verify_file`.
        assert!(matches!(
            Ledger::open(&path),
            Err(LedgerError::HeadMismatch { .. })
        ));
        for v in [
            Ledger::open_read_only(&path)
                .expect("read-only")
                .verify()
                .expect("verify"),
            verify_file(&path).expect("verify_file"),
        ] {
            assert!(!v.ok, "{n}: {v}");
            assert_eq!(v.entries, 6 - n);
            assert_eq!(v.first_bad_sequence, Some(6 - n + 1), "{v}");
            assert_eq!(v.anchored_sequence, Some(6));
            let reason = v.reason.unwrap_or_default();
            assert!(
                reason.contains("records entry 6") && reason.contains("receipts.head"),
                "{reason}"
            );
        }
    }
}

#[test]
fn verify_reports_a_database_replaced_by_an_older_copy() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = ledger_in(&dir);
    let copy = dir.path().join("old.db");
    let l = Ledger::open(&path).expect("open");
    append(&l, 1);
    l.lock()
        .conn
        .execute_batch(&format!("VACUUM INTO '{}'", copy.display()))
        .expect("copy");
    append(&l, 1);
    drop(l);
    std::fs::rename(&copy, &path).expect("restore the old copy");
    let v = verify_file(&path).expect("verify");
    assert!(!v.ok, "{v}");
    assert_eq!(v.first_bad_sequence, Some(3), "{v}");
    // An anchor behind the database (a crash between commit and anchor write) is fine.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = ledger_in(&dir);
    let l = Ledger::open(&path).expect("open");
    append(&l, 1);
    let behind = std::fs::read(dir.path().join("receipts.head")).expect("anchor");
    append(&l, 1);
    std::fs::write(dir.path().join("receipts.head"), behind).expect("put back");
    let v = l.verify().expect("verify");
    assert!(v.ok && v.anchored_sequence == Some(2), "{v}");
}

#[test]
fn an_unreadable_anchor_or_a_deleted_ledger_fails_verify() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = ledger_in(&dir);
    append(&Ledger::open(&path).expect("open"), 1);
    let anchor = dir.path().join("receipts.head");
    std::fs::write(&anchor, "").expect("torn");
    let v = verify_file(&path).expect("verify");
    assert!(!v.ok, "{v}");
    assert!(v.reason.unwrap_or_default().contains("unreadable"));
    // A ledger whose file was deleted but whose anchor remains.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = ledger_in(&dir);
    append(&Ledger::open(&path).expect("open"), 1);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    let v = verify_file(&path).expect("verify");
    assert!(!v.ok, "{v}");
    assert!(v.reason.unwrap_or_default().contains("deleted"));
    // No ledger and no anchor: nothing was ever recorded.
    let dir = tempfile::tempdir().expect("tempdir");
    let v = verify_file(&ledger_in(&dir)).expect("verify");
    assert!(v.ok && v.entries == 0, "{v}");
}

#[test]
fn the_sqlite_ledger_conforms_in_memory_and_on_file() {
    conformance::run(&|| Box::new(Ledger::open_in_memory().expect("in memory")));
    let dir = tempfile::tempdir().expect("tempdir");
    let n = std::cell::Cell::new(0);
    conformance::run(&|| {
        n.set(n.get() + 1);
        Box::new(Ledger::open(dir.path().join(format!("l{}.db", n.get()))).expect("file"))
    });
}

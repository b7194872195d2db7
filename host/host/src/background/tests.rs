//! Tests of the task store file and of task ownership: refused files (empty, foreign), a fresh
//! store, a store of an earlier build, read-only opens, and which owners count as gone.

use std::path::Path;

use rusqlite::{Connection, params};

use super::owner::{Claim, boot_id};
use super::store::{APPLICATION_ID, StoreError, TaskStore, now_ms};
use super::{BackgroundStatus, TaskReader};
use crate::receipts::DbFileError;

/// The schema builds before owners and marks wrote, as they wrote it.
const LEGACY: &str = "CREATE TABLE IF NOT EXISTS tasks (
                 id TEXT PRIMARY KEY,
                 specialist TEXT NOT NULL,
                 description TEXT NOT NULL,
                 updates TEXT NOT NULL DEFAULT '[]',
                 status TEXT NOT NULL,
                 attempt INTEGER NOT NULL DEFAULT 1,
                 result TEXT,
                 created_ms INTEGER NOT NULL,
                 updated_ms INTEGER NOT NULL,
                 checked_seq INTEGER NOT NULL DEFAULT 0
             );
             CREATE TABLE IF NOT EXISTS events (
                 task_id TEXT NOT NULL,
                 seq INTEGER NOT NULL,
                 kind TEXT NOT NULL,
                 payload TEXT NOT NULL,
                 at_ms INTEGER NOT NULL,
                 PRIMARY KEY (task_id, seq)
             );";

fn app_id(path: &Path) -> i32 {
    Connection::open(path)
        .expect("raw open")
        .pragma_query_value(None, "application_id", |r| r.get(0))
        .expect("application_id")
}

fn refused(path: &Path) -> Vec<StoreError> {
    vec![
        TaskStore::open(path)
            .err()
            .expect("read-write open refused"),
        TaskReader::open(path)
            .err()
            .expect("read-only open refused"),
    ]
}

#[test]
fn an_empty_file_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("tasks.db");
    std::fs::write(&path, b"").expect("touch");
    for err in refused(&path) {
        assert!(
            matches!(err, StoreError::File(DbFileError::Empty { .. })),
            "{err}"
        );
        let text = err.to_string();
        assert!(
            text.contains(&path.display().to_string()) && text.contains("task store"),
            "{text}"
        );
    }
    assert_eq!(std::fs::metadata(&path).expect("kept").len(), 0);
}

#[test]
fn a_foreign_database_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("tasks.db");
    Connection::open(&path)
        .expect("create")
        .execute_batch("CREATE TABLE tasks (id TEXT PRIMARY KEY, title TEXT, done INTEGER);")
        .expect("another app's todo list");
    let ledger = dir.path().join("receipts.db");
    drop(crate::receipts::Ledger::open(&ledger).expect("a ledger"));
    for path in [&path, &ledger] {
        let before = std::fs::read(path).expect("read");
        for err in refused(path) {
            assert!(
                matches!(err, StoreError::File(DbFileError::Foreign { .. })),
                "{err}"
            );
            assert!(
                err.to_string().contains(&path.display().to_string()),
                "{err}"
            );
        }
        assert_eq!(std::fs::read(path).expect("read"), before);
    }
}

#[test]
fn a_fresh_path_gets_a_marked_store_and_read_only_needs_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("tasks.db");
    let err = TaskReader::open(&path).err().expect("missing");
    assert!(
        matches!(err, StoreError::File(DbFileError::Missing { .. })),
        "{err}"
    );
    assert!(!path.exists());
    let store = TaskStore::open(&path).expect("created");
    store.insert("t1", "probe", "brief").expect("insert");
    assert_eq!(app_id(&path), APPLICATION_ID);
    let reader = TaskReader::open(&path).expect("read-only");
    assert_eq!(
        reader.list(10).expect("list")[0].status,
        BackgroundStatus::Queued
    );
}

/// A store as an earlier build left it: one task still `running`, with one report.
fn legacy_store(path: &Path) {
    let c = Connection::open(path).expect("create");
    c.execute_batch(LEGACY).expect("legacy schema");
    c.execute(
        "INSERT INTO tasks (id, specialist, description, status, created_ms, updated_ms)
         VALUES ('old', 'probe', 'brief', 'running', 1, 1)",
        [],
    )
    .expect("task");
    c.execute(
        "INSERT INTO events (task_id, seq, kind, payload, at_ms) VALUES ('old', 1, 'report', ?1, 1)",
        [r#"{"id":"m1","sequence":1,"output":"halfway","at_ms":1}"#],
    )
    .expect("report");
}

#[test]
fn a_store_of_an_earlier_build_is_read_then_upgraded_and_its_orphans_interrupted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("tasks.db");
    legacy_store(&path);
    let before = std::fs::read(&path).expect("read");
    let reader = TaskReader::open(&path).expect("read-only adopts");
    let check = reader.check("old").expect("check");
    assert_eq!(check.task.status, BackgroundStatus::Interrupted);
    drop(reader);
    assert_eq!(
        std::fs::read(&path).expect("read"),
        before,
        "read-only wrote"
    );

    let store = TaskStore::open(&path).expect("read-write adopts");
    assert_eq!(app_id(&path), APPLICATION_ID);
    let task = store.get("old").expect("get").expect("kept");
    assert_eq!(task.status, BackgroundStatus::Interrupted);
    let reports = store.take_new_reports("old").expect("reports");
    assert_eq!(reports.len(), 1, "reports are kept");
    store
        .insert("new", "probe", "brief")
        .expect("the upgraded table takes owners");
}

fn claim(lease_ms: i64, pid: i64, boot: Option<String>) -> Claim {
    Claim {
        owner: Some("someone".into()),
        boot,
        pid: Some(pid),
        lease_ms: Some(lease_ms),
    }
}

/// A process id that was just used and has exited (reaped).
fn dead_pid() -> i64 {
    let mut child = std::process::Command::new("true").spawn().expect("spawn");
    let pid = child.id();
    child.wait().expect("wait");
    i64::from(pid)
}

#[test]
fn an_owner_is_gone_when_its_lease_expired_or_its_process_exited() {
    let now = now_ms();
    let later = now as i64 + 60_000;
    let me = i64::from(std::process::id());
    let boot = boot_id();
    // Alive: lease ahead, same boot, process running.
    assert_eq!(
        claim(later, me, boot.clone()).gone(boot.as_deref(), now),
        None
    );
    // Alive as far as anyone can tell: another machine or boot, lease ahead.
    assert_eq!(
        claim(later, dead_pid(), Some("elsewhere".into())).gone(boot.as_deref(), now),
        None
    );
    // Gone: the lease expired, even though the pid exists.
    let why = claim(now as i64 - 1, me, boot.clone()).gone(boot.as_deref(), now);
    assert!(why.is_some_and(|w| w.contains("lease")));
    // Gone: same boot, the process has exited (where boot ids are readable).
    if boot.is_some() {
        let why = claim(later, dead_pid(), boot.clone()).gone(boot.as_deref(), now);
        assert!(why.is_some_and(|w| w.contains("exited")));
    }
    // Gone: no owner recorded (an earlier build).
    assert!(Claim::default().gone(boot.as_deref(), now).is_some());
}

fn own(path: &Path, id: &str, lease_ms: i64, pid: i64) {
    Connection::open(path)
        .expect("raw")
        .execute(
            "UPDATE tasks SET status = 'running', owner = 'other-host', owner_boot = ?2,
                 owner_pid = ?3, lease_ms = ?4 WHERE id = ?1",
            params![id, boot_id(), pid, lease_ms],
        )
        .expect("own");
}

#[test]
fn opening_interrupts_only_tasks_whose_owner_is_gone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("tasks.db");
    let first = TaskStore::open(&path).expect("open");
    for id in ["live", "expired"] {
        first.insert(id, "probe", "brief").expect("insert");
    }
    drop(first);
    let later = now_ms() as i64 + 60_000;
    own(&path, "live", later, i64::from(std::process::id()));
    own(
        &path,
        "expired",
        now_ms() as i64 - 1_000,
        i64::from(std::process::id()),
    );
    let second = TaskStore::open(&path).expect("reopen");
    let status = |id| second.get(id).expect("get").expect("there").status;
    assert_eq!(status("live"), BackgroundStatus::Running);
    assert_eq!(status("expired"), BackgroundStatus::Interrupted);
    assert!(
        second.live_elsewhere("live").expect("owner").is_some(),
        "a live owner's task is not this host's to change"
    );
    assert_eq!(second.live_elsewhere("expired").expect("owner"), None);
}

#[test]
fn the_sqlite_task_store_conforms() {
    let dir = tempfile::tempdir().expect("tempdir");
    let n = std::cell::Cell::new(0);
    super::conformance::run(&|| {
        n.set(n.get() + 1);
        Box::new(TaskStore::open(&dir.path().join(format!("tasks{}.db", n.get()))).expect("open"))
    });
}

#[test]
fn an_interrupted_tasks_reports_can_be_shown_again_after_a_check_took_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("tasks.db");
    let store = TaskStore::open(&path).expect("open");
    store.insert("t", "probe", "brief").expect("insert");
    for (n, text) in ["found the bug", "half-way through the fix"]
        .iter()
        .enumerate()
    {
        let report = crate::types::ProgressReport {
            id: format!("r{n}"),
            sequence: n as u32 + 1,
            output: (*text).to_owned(),
            at_ms: 1,
        };
        store.report("t", &report).expect("report");
    }
    // A check hands both reports out and moves the cursor past them.
    assert_eq!(store.take_new_reports("t").expect("take").len(), 2);
    drop(store);
    // Its host dies: the next host marks the task interrupted.
    own(&path, "t", now_ms() as i64 - 1_000, dead_pid());
    drop(TaskStore::open(&path).expect("reopen"));
    let reader = TaskReader::open(&path).expect("reader");
    let check = reader.check("t").expect("check");
    assert_eq!(check.task.status, BackgroundStatus::Interrupted);
    assert!(
        check.new_reports.is_empty(),
        "check shows only reports no check returned"
    );
    let (task, reports) = reader.show("t").expect("show");
    assert_eq!(task.status, BackgroundStatus::Interrupted);
    let texts: Vec<&str> = reports.iter().map(|r| r.output.as_str()).collect();
    assert_eq!(texts, ["found the bug", "half-way through the fix"]);
    assert!(matches!(
        reader.show("no-such-task"),
        Err(super::BackgroundError::NotFound(_))
    ));
}

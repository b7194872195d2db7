//! Tests of the task store file and of task ownership: refused files (empty, foreign), a fresh
//! store, a store of an earlier build, read-only opens, and which owners count as gone (the
//! process first; a stalled owner or a reader whose clock runs ahead takes nothing); both stores
//! (SQLite and PostgreSQL) against the backend conformance suite.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rusqlite::{Connection, params};

use super::owner::{self, Claim, Clock, Owner, Watch, boot_id};
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

/// A clock whose wall time runs `ahead_ms` ahead of the system's, and whose monotonic time
/// moves only when told.
struct TestClock {
    ahead_ms: u64,
    start: Instant,
    elapsed: Mutex<Duration>,
}

impl TestClock {
    fn ahead(ahead_ms: u64) -> Arc<TestClock> {
        Arc::new(TestClock {
            ahead_ms,
            start: Instant::now(),
            elapsed: Mutex::new(Duration::ZERO),
        })
    }

    fn advance(&self, by: Duration) {
        *self.elapsed.lock().expect("clock") += by;
    }
}

impl Clock for TestClock {
    fn wall_ms(&self) -> u64 {
        now_ms() + self.ahead_ms
    }

    fn monotonic(&self) -> Instant {
        self.start + *self.elapsed.lock().expect("clock")
    }
}

const HOUR_MS: u64 = 3_600_000;

#[test]
fn on_this_boot_the_owners_process_decides_never_the_lease() {
    let clock = TestClock::ahead(HOUR_MS);
    let boot = boot_id();
    let Some(ours) = boot.clone() else {
        return; // No boot id here: only the heartbeat decides (tested below).
    };
    let watch = Watch::on_boot(boot.clone(), clock.clone());
    let me = i64::from(std::process::id());
    let long_ago = now_ms() as i64 - 1_000_000;
    // Live: the process runs, though its lease is long past (stalled, or read by a clock
    // that runs an hour ahead), and stays live however long the reader watches.
    for _ in 0..3 {
        assert_eq!(watch.gone("t", &claim(long_ago, me, boot.clone())), None);
        clock.advance(owner::LEASE * 2);
    }
    // Gone: the process has exited, though its lease is far ahead.
    let far = now_ms() as i64 + 1_000_000;
    let why = watch.gone("t", &claim(far, dead_pid(), boot.clone()));
    assert!(why.is_some_and(|w| w.contains("exited")));
    // Gone: the pid runs, but a process started later than the owner that recorded it.
    let reused = Claim {
        owner: Some("someone@1".into()),
        ..claim(far, me, boot.clone())
    };
    let why = watch.gone("t", &reused);
    assert!(
        why.as_ref().is_some_and(|w| w.contains("later process")),
        "{why:?}"
    );
    // ...while the owner id this process records names it.
    let mine = Claim {
        owner: Some(Owner::this_process().id),
        ..claim(long_ago, me, boot.clone())
    };
    assert_eq!(watch.gone("t", &mine), None);
    // Gone: the owner ran on another boot (before this machine restarted).
    let why = watch.gone("t", &claim(far, me, Some(format!("{ours}-before"))));
    assert!(why.is_some_and(|w| w.contains("restarted")));
    // Gone: no owner recorded (an earlier build).
    assert!(watch.gone("t", &Claim::default()).is_some());
}

#[test]
fn where_the_process_cannot_be_asked_a_heartbeat_standing_still_on_the_readers_clock_decides() {
    // A reader an hour ahead of the owner's wall clock: the lease it reads is long past, yet
    // only its own watching counts.
    let clock = TestClock::ahead(HOUR_MS);
    let watch = Watch::on_boot(None, clock.clone());
    let owner = |beat| claim(beat, dead_pid(), None);
    assert_eq!(watch.gone("t", &owner(5)), None, "first sight");
    clock.advance(owner::LEASE - Duration::from_millis(1));
    assert_eq!(watch.gone("t", &owner(5)), None, "not yet a lease");
    // It beat: watching starts over.
    assert_eq!(watch.gone("t", &owner(6)), None);
    clock.advance(owner::LEASE - Duration::from_millis(1));
    assert_eq!(watch.gone("t", &owner(6)), None);
    clock.advance(Duration::from_millis(1));
    let why = watch.gone("t", &owner(6));
    assert!(why.is_some_and(|w| w.contains("heartbeat")));
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
    for id in ["live", "stalled", "exited"] {
        first.insert(id, "probe", "brief").expect("insert");
    }
    drop(first);
    let me = i64::from(std::process::id());
    own(&path, "live", now_ms() as i64 + 60_000, me);
    // Its owner's process runs but has not beaten for a long time (stopped, paused).
    own(&path, "stalled", now_ms() as i64 - 1_000_000, me);
    own(&path, "exited", now_ms() as i64 + 60_000, dead_pid());
    let second = TaskStore::open(&path).expect("reopen");
    let status = |id| second.get(id).expect("get").expect("there").status;
    let gone = if boot_id().is_some() {
        BackgroundStatus::Interrupted
    } else {
        // No boot id: the heartbeat decides, after a lease of watching.
        BackgroundStatus::Running
    };
    assert_eq!(status("exited"), gone);
    for id in ["live", "stalled"] {
        assert_eq!(status(id), BackgroundStatus::Running);
        assert!(
            second.live_elsewhere(id).expect("owner").is_some(),
            "a live owner's task is not this host's to change"
        );
    }
    if boot_id().is_some() {
        assert_eq!(second.live_elsewhere("exited").expect("owner"), None);
    }
}

#[test]
fn a_host_whose_clock_runs_ahead_takes_no_task_of_a_live_owner() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("tasks.db");
    let owner = TaskStore::open(&path).expect("open");
    owner.insert("t", "probe", "brief").expect("insert");
    owner.start_attempt("t", 1).expect("running");
    // A second host on the same file, its clock an hour ahead: every lease the owner writes
    // is long past by that clock.
    let ahead = TaskStore::open_with_clock(&path, TestClock::ahead(HOUR_MS)).expect("open");
    ahead.interrupt_orphans().expect("reap");
    let status = |s: &TaskStore| s.get("t").expect("get").expect("there").status;
    assert_eq!(status(&ahead), BackgroundStatus::Running);
    assert!(ahead.live_elsewhere("t").expect("owner").is_some());
    // The read-only view of the file agrees.
    let reader = TaskReader::open(&path).expect("reader");
    assert_eq!(
        reader.check("t").expect("check").task.status,
        BackgroundStatus::Running
    );
    // The owner finishes it; once the owner is gone, the task is not touched again.
    owner
        .set_status("t", BackgroundStatus::Succeeded)
        .expect("finish");
    drop(owner);
    ahead.interrupt_orphans().expect("reap");
    assert_eq!(status(&ahead), BackgroundStatus::Succeeded);
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
fn the_postgres_task_store_conforms() {
    let server = match guild_pg::testing::TestServer::start() {
        Ok(server) => server,
        Err(e @ guild_pg::testing::TestServerError::NotInstalled)
            if std::env::var_os("GUILD_REQUIRE_PG").is_none() =>
        {
            eprintln!("\n*** SKIPPED: {e} (set GUILD_REQUIRE_PG=1 to fail instead) ***\n");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let n = std::cell::Cell::new(0);
    super::conformance::run(&|| {
        n.set(n.get() + 1);
        let config = server
            .create_database(&format!("tasks_{}", n.get()))
            .expect("database");
        Box::new(guild_pg::PgTaskStore::open(&config, Duration::from_secs(5)).expect("open"))
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

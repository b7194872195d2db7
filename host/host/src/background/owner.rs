//! Task ownership: which host process runs a background task, and whether it is still there.
//!
//! Every live task row names its owner: an id per task store (one per host, with the process's
//! start time on this boot appended, `UUID@TICKS`), the machine's boot id
//! (`/proc/sys/kernel/random/boot_id`, where readable), the process id, and a heartbeat the
//! owner keeps moving (`lease_ms`, see [`Heartbeat`]).
//!
//! Whether the owner is gone is decided from its process first, never from a clock: on this
//! boot of this machine, an owner whose process runs is live, however long it has not beaten
//! (a VM pause, SIGSTOP, a slow disk), and one whose process has exited (or whose pid now
//! belongs to a process started later) is gone. An owner of another boot ran before this
//! machine restarted: the store is in WAL mode, which SQLite shares only between processes of
//! one machine. Only where the process cannot be asked (no boot id) does the heartbeat decide,
//! and it is compared only with itself: the owner gone once the reader has watched it stand
//! still for [`LEASE`] on the reader's own monotonic clock. No reader compares another
//! process's wall clock with its own, so a clock that runs ahead takes nothing. Only tasks of
//! a gone owner become `interrupted`; a live owner's tasks are never touched by another
//! process. See docs/operations.md (Background tasks).

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags, params};

use super::store::append_event;

/// How often the owner beats its heartbeat.
pub(crate) const HEARTBEAT: Duration = Duration::from_secs(2);

/// How long a reader that cannot ask for the owner's process watches its heartbeat stand
/// still before the owner counts as gone: several heartbeats. Also how far ahead of its own
/// wall clock the owner writes `lease_ms`, as builds that read it as a lease expect.
pub(crate) const LEASE: Duration = Duration::from_secs(10);

/// Time as a task store sees it: its wall clock (the timestamps and leases it writes) and its
/// monotonic clock (how long it has watched a heartbeat stand still). Tests inject one.
pub(crate) trait Clock: Send + Sync {
    /// Milliseconds since the epoch.
    fn wall_ms(&self) -> u64;
    /// Monotonic time of this process.
    fn monotonic(&self) -> Instant;
}

/// The system's clocks.
pub(crate) struct SystemClock;

impl Clock for SystemClock {
    fn wall_ms(&self) -> u64 {
        super::store::now_ms()
    }

    fn monotonic(&self) -> Instant {
        Instant::now()
    }
}

/// The process that owns the tasks it starts.
#[derive(Debug, Clone)]
pub(crate) struct Owner {
    /// Unique per task store (so two hosts in one process are two owners), with the process's
    /// start time appended where known (`UUID@TICKS`).
    pub(crate) id: String,
    /// This boot of this machine, when known.
    pub(crate) boot: Option<String>,
    pub(crate) pid: u32,
}

impl Owner {
    /// A new owner for this process.
    pub(crate) fn this_process() -> Owner {
        let pid = std::process::id();
        let unique = uuid::Uuid::now_v7().to_string();
        let id = match process(i64::from(pid)) {
            Some(Some(start)) => format!("{unique}@{start}"),
            _ => unique,
        };
        Owner {
            id,
            boot: boot_id(),
            pid,
        }
    }
}

/// The start time an owner id records (`UUID@TICKS`); `None` for ids without one (earlier
/// builds, or no `/proc`).
fn recorded_start(owner: &str) -> Option<u64> {
    owner.rsplit_once('@').and_then(|(_, t)| t.parse().ok())
}

/// What a task row says about its owner.
#[derive(Debug, Clone, Default)]
pub(crate) struct Claim {
    pub(crate) owner: Option<String>,
    pub(crate) boot: Option<String>,
    pub(crate) pid: Option<i64>,
    /// The owner's heartbeat: it only grows while the owner beats.
    pub(crate) lease_ms: Option<i64>,
}

/// How a reader (any task store) tells whether an owner is gone: its boot id, its clocks, and
/// the heartbeats it has watched.
pub(crate) struct Watch {
    boot: Option<String>,
    clock: Arc<dyn Clock>,
    /// Per task: the heartbeat last seen, and when (monotonic) it was first seen at that value.
    beats: Mutex<HashMap<String, (Option<i64>, Instant)>>,
}

impl Watch {
    /// A reader on this boot of this machine, on `clock`.
    pub(crate) fn new(clock: Arc<dyn Clock>) -> Watch {
        Watch::on_boot(boot_id(), clock)
    }

    /// A reader that believes it runs on `boot`.
    pub(crate) fn on_boot(boot: Option<String>, clock: Arc<dyn Clock>) -> Watch {
        Watch {
            boot,
            clock,
            beats: Mutex::new(HashMap::new()),
        }
    }

    pub(crate) fn wall_ms(&self) -> u64 {
        self.clock.wall_ms()
    }

    /// Why the owner of live task `id` is gone, or `None` while it may still be running it.
    pub(crate) fn gone(&self, id: &str, claim: &Claim) -> Option<String> {
        let Some(owner) = &claim.owner else {
            return Some("it was started by an earlier Guild build that recorded no owner".into());
        };
        match (&claim.boot, &self.boot, claim.pid) {
            (Some(theirs), Some(ours), Some(pid)) if theirs == ours => {
                process_gone(pid, recorded_start(owner))
            }
            (Some(theirs), Some(ours), _) if theirs != ours => {
                Some("its owner ran before this machine restarted (another boot id)".into())
            }
            _ => self.stalled(id, claim.lease_ms),
        }
    }

    /// Whether task `id`'s heartbeat has stood still at `beat` for [`LEASE`], timed on this
    /// reader's monotonic clock from the first time it saw that value.
    fn stalled(&self, id: &str, beat: Option<i64>) -> Option<String> {
        let now = self.clock.monotonic();
        let mut beats = self.beats.lock().unwrap_or_else(|p| p.into_inner());
        let seen = beats.entry(id.to_owned()).or_insert((beat, now));
        if seen.0 != beat {
            *seen = (beat, now);
        }
        let still = now.saturating_duration_since(seen.1);
        (still >= LEASE).then(|| {
            format!(
                "its heartbeat has not moved for {} s and its process cannot be asked",
                still.as_secs()
            )
        })
    }

    /// Forgets the heartbeats of tasks not in `live`.
    fn keep_only(&self, live: &HashSet<&str>) {
        let mut beats = self.beats.lock().unwrap_or_else(|p| p.into_inner());
        beats.retain(|id, _| live.contains(id.as_str()));
    }
}

/// Why process `pid` of this boot no longer runs the owner that recorded `start`, or `None`
/// while it does (stopped or not).
fn process_gone(pid: i64, start: Option<u64>) -> Option<String> {
    match process(pid) {
        None => Some(format!("its owner (process {pid}) has exited")),
        Some(Some(now)) if start.is_some_and(|s| s != now) => Some(format!(
            "its owner (process {pid}) has exited; that pid now belongs to a later process"
        )),
        Some(_) => None,
    }
}

/// This boot of this machine (Linux); `None` elsewhere, where only the heartbeat decides.
pub(crate) fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

/// Process `pid` of this boot: `None` when it has exited (or is a zombie), else its start time
/// in clock ticks since boot (`/proc/PID/stat`, field 22) when readable. Asked only when the
/// boot ids matched, so `/proc` is there.
fn process(pid: i64) -> Option<Option<u64>> {
    if pid <= 0 {
        return None;
    }
    let dir = Path::new("/proc").join(pid.to_string());
    let Ok(stat) = std::fs::read_to_string(dir.join("stat")) else {
        return dir.exists().then_some(None);
    };
    // `PID (COMM) STATE …`: COMM may hold spaces and parentheses, so fields count from the
    // last `)`; STATE is field 3, the start time field 22.
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return Some(None);
    };
    let mut fields = rest.split_whitespace();
    match fields.next() {
        Some("Z" | "X" | "x") | None => None,
        Some(_) => Some(fields.nth(18).and_then(|t| t.parse().ok())),
    }
}

/// Marks the live tasks of owners that are gone as interrupted, each with an event saying why
/// (their reports are kept). `me`'s own tasks are never touched. Each change is conditional
/// on the row still naming the same owner, so two hosts reaping at once record it once.
pub(crate) fn interrupt_orphans(
    conn: &Connection,
    me: Option<&Owner>,
    watch: &Watch,
) -> rusqlite::Result<()> {
    let candidates: Vec<(String, Claim)> = {
        let mut stmt = conn.prepare_cached(
            "SELECT id, owner, owner_boot, owner_pid, lease_ms FROM tasks
             WHERE status IN ('queued', 'running')",
        )?;
        stmt.query_map([], |r| {
            Ok((
                r.get(0)?,
                Claim {
                    owner: r.get(1)?,
                    boot: r.get(2)?,
                    pid: r.get(3)?,
                    lease_ms: r.get(4)?,
                },
            ))
        })?
        .collect::<rusqlite::Result<_>>()?
    };
    watch.keep_only(&candidates.iter().map(|(id, _)| id.as_str()).collect());
    for (id, claim) in candidates {
        if me.is_some_and(|m| claim.owner.as_deref() == Some(m.id.as_str())) {
            continue;
        }
        let Some(why) = watch.gone(&id, &claim) else {
            continue;
        };
        let tx = conn.unchecked_transaction()?;
        let changed = tx.execute(
            "UPDATE tasks SET status = 'interrupted', updated_ms = ?2
             WHERE id = ?1 AND status IN ('queued', 'running') AND owner IS ?3",
            params![id, watch.wall_ms() as i64, claim.owner],
        )?;
        if changed == 1 {
            append_event(
                &tx,
                &id,
                "status",
                &format!("interrupted: the host process running it is gone ({why})"),
            )?;
            tracing::warn!(task_id = %id, "background task interrupted: {why}");
        }
        tx.commit()?;
    }
    Ok(())
}

/// The owner's heartbeat: a thread with its own connection that beats this owner's tasks every
/// [`HEARTBEAT`] and interrupts tasks of owners that have gone meanwhile. A beat sets
/// `lease_ms` to the owner's wall clock plus [`LEASE`], or one more than before when that
/// clock went back, so it only ever grows. It stops when this value is dropped (with the
/// store), and the drop waits for its connection to close, so that a dropped store has let go
/// of the file.
pub(crate) struct Heartbeat {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        // Dropping the sender wakes the thread at once.
        self.stop.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Heartbeat {
    pub(crate) fn start(
        path: &Path,
        owner: &Owner,
        watch: Arc<Watch>,
    ) -> rusqlite::Result<Heartbeat> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(LEASE / 2)?;
        let (stop, stopped) = mpsc::channel::<()>();
        let owner = owner.clone();
        let file = path.display().to_string();
        let thread = std::thread::Builder::new()
            .name("guild-task-lease".into())
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(HEARTBEAT) {
                    let lease = (watch.wall_ms() + LEASE.as_millis() as u64) as i64;
                    let beat = conn
                        .execute(
                            "UPDATE tasks SET lease_ms = MAX(COALESCE(lease_ms, 0) + 1, ?2)
                             WHERE owner = ?1 AND status IN ('queued', 'running')",
                            params![owner.id, lease],
                        )
                        .and_then(|_| interrupt_orphans(&conn, Some(&owner), &watch));
                    if let Err(e) = beat {
                        tracing::error!(store = %file, "failed to beat the task heartbeat: {e}");
                    }
                }
            })
            .map_err(|e| {
                rusqlite::Error::SqliteFailure(
                    rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_ERROR),
                    Some(format!("failed to start the lease thread: {e}")),
                )
            })?;
        Ok(Heartbeat {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

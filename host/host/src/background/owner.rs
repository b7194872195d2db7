//! Task ownership: which host process runs a background task, and whether it is still there.
//!
//! Every live task row names its owner: a random id per task store (one per host), the
//! machine's boot id (`/proc/sys/kernel/random/boot_id`, where readable), the process id, and
//! a lease the owner keeps moving forward (see [`super::store::Heartbeat`]). An owner is gone
//! when its lease expired, or when it ran on this boot of this machine and its process has
//! exited. Only tasks of a gone owner become `interrupted`; a live owner's tasks are never
//! touched by another process.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, params};

use super::store::{append_event, now_ms};

/// How often the owner moves its lease forward.
pub(crate) const HEARTBEAT: Duration = Duration::from_secs(2);

/// How long a lease lasts: several heartbeats, so a busy machine does not lose a live task.
pub(crate) const LEASE: Duration = Duration::from_secs(10);

/// The process that owns the tasks it starts.
#[derive(Debug, Clone)]
pub(crate) struct Owner {
    /// Unique per task store (so two hosts in one process are two owners).
    pub(crate) id: String,
    /// This boot of this machine, when known.
    pub(crate) boot: Option<String>,
    pub(crate) pid: u32,
}

impl Owner {
    /// A new owner for this process.
    pub(crate) fn this_process() -> Owner {
        Owner {
            id: uuid::Uuid::now_v7().to_string(),
            boot: boot_id(),
            pid: std::process::id(),
        }
    }
}

/// What a task row says about its owner.
#[derive(Debug, Clone, Default)]
pub(crate) struct Claim {
    pub(crate) owner: Option<String>,
    pub(crate) boot: Option<String>,
    pub(crate) pid: Option<i64>,
    pub(crate) lease_ms: Option<i64>,
}

impl Claim {
    /// Why the owner of a live task is gone, or `None` while it may still be running it.
    /// `boot` is the reader's boot id.
    pub(crate) fn gone(&self, boot: Option<&str>, now_ms: u64) -> Option<String> {
        if self.owner.is_none() {
            return Some("it was started by an earlier Guild build that recorded no owner".into());
        }
        let lease = self.lease_ms.unwrap_or(0);
        if lease < i64::try_from(now_ms).unwrap_or(i64::MAX) {
            return Some(match self.pid {
                Some(pid) => format!("the lease of its owner (process {pid}) expired"),
                None => "the lease of its owner expired".into(),
            });
        }
        match (self.pid, &self.boot, boot) {
            (Some(pid), Some(theirs), Some(ours)) if theirs == ours && !process_alive(pid) => {
                Some(format!("its owner (process {pid}) has exited"))
            }
            _ => None,
        }
    }
}

/// This boot of this machine (Linux); `None` elsewhere, where only the lease decides.
pub(crate) fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

/// Whether a process of this boot exists (asked only when the boot ids matched, so `/proc`
/// is there).
fn process_alive(pid: i64) -> bool {
    pid > 0 && std::path::Path::new("/proc").join(pid.to_string()).exists()
}

/// Marks the live tasks of owners that are gone as interrupted, each with an event saying why
/// (their reports are kept). `me`'s own tasks are never touched. Each change is conditional
/// on the row still naming the same owner, so two hosts reaping at once record it once.
pub(crate) fn interrupt_orphans(conn: &Connection, me: Option<&Owner>) -> rusqlite::Result<()> {
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
    let boot = boot_id();
    let now = now_ms();
    for (id, claim) in candidates {
        if me.is_some_and(|m| claim.owner.as_deref() == Some(m.id.as_str())) {
            continue;
        }
        let Some(why) = claim.gone(boot.as_deref(), now) else {
            continue;
        };
        let tx = conn.unchecked_transaction()?;
        let changed = tx.execute(
            "UPDATE tasks SET status = 'interrupted', updated_ms = ?2
             WHERE id = ?1 AND status IN ('queued', 'running') AND owner IS ?3",
            params![id, now as i64, claim.owner],
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

/// The owner's heartbeat: a thread with its own connection that moves this owner's leases
/// forward every [`HEARTBEAT`] and interrupts tasks of owners that have gone meanwhile. It
/// stops when this value is dropped (with the store), and the drop waits for its connection
/// to close, so that a dropped store has let go of the file.
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
    pub(crate) fn start(path: &Path, owner: &Owner) -> rusqlite::Result<Heartbeat> {
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
                    let beat = conn
                        .execute(
                            "UPDATE tasks SET lease_ms = ?2
                             WHERE owner = ?1 AND status IN ('queued', 'running')",
                            params![owner.id, (now_ms() + LEASE.as_millis() as u64) as i64],
                        )
                        .and_then(|_| interrupt_orphans(&conn, Some(&owner)));
                    if let Err(e) = beat {
                        tracing::error!(store = %file, "failed to renew task leases: {e}");
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

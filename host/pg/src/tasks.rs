//! [`PgTaskStore`]: background tasks and their event logs in PostgreSQL, shared by every host on
//! the database, with leases.
//!
//! # Leases
//! A task row names the host holding it (`owner`) and until when (`lease_until`, on the
//! server's clock, so the hosts' clocks do not matter). The host that starts a task holds it from
//! the insert; an attempt runs only after the conditional update that moves it from `queued` to
//! `running` while this host still holds a valid lease ([`PgTaskStore::start_attempt`]), so one
//! attempt runs on one host at a time. A thread of its own ([`Keeper`], with its own connection)
//! renews this host's leases every third of the lease and marks the live tasks of any host whose
//! lease expired as `interrupted` (`FOR UPDATE SKIP LOCKED`: hosts reaping at once each take
//! other rows, and each row is changed once). An interrupted task is never started again by a
//! host: only an explicit update starts a new attempt, and the holder of the old one stops it when
//! it sees the row moved on ([`PgTaskStore::still_running_here`]).
//!
//! # Hosts
//! The keeper also records this host in `guild_hosts` (id, name, last seen); the host's plugin
//! set is recorded by [`PgTaskStore::join`] (`join.rs`), which compares it with those of the live
//! hosts first.
//! A host that stops cleanly removes its row and interrupts what it still held.

use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use postgres::{GenericClient, Row};

use crate::worker::Worker;
use crate::{PgConfig, PgError, describe, schema};

type Result<T> = std::result::Result<T, PgError>;

/// The statuses of a task that can still change.
const LIVE: &str = "status IN ('queued', 'running')";

pub(crate) const COLUMNS: &str = "id, specialist, description, updates, status, attempt, result, created_ms, \
                       updated_ms, owner_name";

/// One stored task (statuses as the host names them: `queued`, `running`, `succeeded`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgTask {
    /// Task id.
    pub id: String,
    /// Specialist asked for.
    pub specialist: String,
    /// The original brief.
    pub description: String,
    /// Updates, in order.
    pub updates: Vec<String>,
    /// Current status.
    pub status: String,
    /// Attempt number.
    pub attempt: u32,
    /// The result of the last attempt (JSON, as the host wrote it).
    pub result: Option<String>,
    /// Created, ms since the epoch (the creating host's clock).
    pub created_ms: u64,
    /// Last change, ms since the epoch.
    pub updated_ms: u64,
    /// The host that holds (or last held) it.
    pub owner_name: String,
}

/// A host as recorded in `guild_hosts`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostRecord {
    /// Its id (new at every start).
    pub id: String,
    /// Machine and process, for people.
    pub name: String,
    /// The plugin set it joined with, as JSON (empty until it joined; see [`PgTaskStore::join`]).
    pub plugins: String,
}

/// This host process on the database: a new id per start, and a name for people.
#[derive(Debug, Clone)]
pub struct HostIdentity {
    /// Unique per process start.
    pub id: String,
    /// `host <machine> pid <pid>`.
    pub name: String,
}

impl HostIdentity {
    /// This process.
    pub fn this_process() -> HostIdentity {
        let machine = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "unknown".into());
        HostIdentity {
            id: uuid::Uuid::new_v4().to_string(),
            name: format!("host {machine} pid {}", std::process::id()),
        }
    }
}

pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// The task store on PostgreSQL for one host. `Send + Sync`; every method blocks (crate docs).
pub struct PgTaskStore {
    worker: Worker,
    me: HostIdentity,
    lease: Duration,
    target: String,
    /// Renews this host's leases and reaps expired ones; stops with the store. `None` for a
    /// reader ([`PgTaskStore::open_reader`]).
    keeper: Option<Keeper>,
}

impl PgTaskStore {
    /// Connects (migrating the database to this build's schema, or refusing it), registers this
    /// host, interrupts the tasks of hosts whose lease expired, and starts renewing this host's
    /// leases: every `lease / 3`, each for `lease`.
    pub fn open(config: &PgConfig, lease: Duration) -> Result<PgTaskStore> {
        let target = config.target().to_owned();
        let t = target.clone();
        let worker = Worker::start(config, "tasks", move |c| schema::migrate(c, &t))?;
        let me = HostIdentity::this_process();
        let keeper = Keeper::start(config, me.clone(), lease)?;
        Ok(PgTaskStore {
            worker,
            me,
            lease,
            target,
            keeper: Some(keeper),
        })
    }

    /// A store for reading only (what `guild tasks list|check|show` use without a running
    /// host): no host is registered, no lease is held or reaped, and
    /// [`PgTaskStore::take_new_reports`] leaves the report cursor where it is. The database is
    /// still migrated (or refused) as at any open.
    pub fn open_reader(config: &PgConfig) -> Result<PgTaskStore> {
        let target = config.target().to_owned();
        let t = target.clone();
        let worker = Worker::start(config, "tasks", move |c| schema::migrate(c, &t))?;
        Ok(PgTaskStore {
            worker,
            me: HostIdentity::this_process(),
            lease: Duration::from_secs(1),
            target,
            keeper: None,
        })
    }

    /// This host on the database.
    pub fn identity(&self) -> &HostIdentity {
        &self.me
    }

    /// How long a lease lasts without renewal.
    pub fn lease(&self) -> Duration {
        self.lease
    }

    /// The server and database, for errors.
    pub(crate) fn target(&self) -> &str {
        &self.target
    }

    pub(crate) fn call<R: Send + 'static>(
        &self,
        op: &'static str,
        f: impl FnOnce(&mut postgres::Client) -> std::result::Result<R, postgres::Error>
        + Send
        + 'static,
    ) -> Result<R> {
        let target = self.target.clone();
        let err = |reason: String| PgError::Query {
            target: target.clone(),
            op,
            reason,
        };
        match self.worker.run(f) {
            Some(answer) => answer.map_err(|e| err(describe(&e))),
            None => Err(err(
                "the connection thread stopped or the call panicked".into()
            )),
        }
    }

    /// A new queued task held by this host.
    pub fn insert(&self, id: &str, specialist: &str, description: &str) -> Result<()> {
        self.insert_marked(id, specialist, description, false)
    }

    /// A new queued task held by this host, which another host takes up as a new attempt if
    /// this one dies while it is live ([`PgTaskStore::claim_orphans`]).
    pub fn insert_retryable(&self, id: &str, specialist: &str, description: &str) -> Result<()> {
        self.insert_marked(id, specialist, description, true)
    }

    fn insert_marked(
        &self,
        id: &str,
        specialist: &str,
        description: &str,
        retryable: bool,
    ) -> Result<()> {
        let (id, specialist, description) =
            (id.to_owned(), specialist.to_owned(), description.to_owned());
        let (me, lease) = (self.me.clone(), millis(self.lease));
        self.call("insert a task", move |c| {
            c.execute(
                "INSERT INTO tasks (id, specialist, description, status, created_ms, updated_ms, \
                 owner, owner_name, lease_until, retryable) VALUES ($1, $2, $3, 'queued', $4, \
                 $4, $5, $6, clock_timestamp() + $7::bigint * interval '1 millisecond', $8)",
                &[
                    &id,
                    &specialist,
                    &description,
                    &now_ms(),
                    &me.id,
                    &me.name,
                    &lease,
                    &retryable,
                ],
            )
            .map(drop)
        })
    }

    /// Moves attempt `attempt` from queued to running if this host still holds the task with a
    /// valid lease; whether it did (only then may the attempt run).
    pub fn start_attempt(&self, id: &str, attempt: u32) -> Result<bool> {
        let (id, me) = (id.to_owned(), self.me.id.clone());
        let attempt = i32::try_from(attempt).unwrap_or(i32::MAX);
        self.call("start an attempt", move |c| {
            c.execute(
                "UPDATE tasks SET status = 'running', updated_ms = $3 WHERE id = $1 AND \
                 attempt = $2 AND status = 'queued' AND owner = $4 AND \
                 lease_until > clock_timestamp()",
                &[&id, &attempt, &now_ms(), &me],
            )
            .map(|n| n == 1)
        })
    }

    /// Records the result of attempt `attempt` run here, unless the task was cancelled or moved
    /// on meanwhile. An attempt interrupted while it still ran (its lease expired while this
    /// host stalled) records its real result.
    pub fn finish(&self, id: &str, attempt: u32, status: &str, result: &str) -> Result<()> {
        let (id, status, result, me) = (
            id.to_owned(),
            status.to_owned(),
            result.to_owned(),
            self.me.id.clone(),
        );
        let attempt = i32::try_from(attempt).unwrap_or(i32::MAX);
        self.call("record a task's result", move |c| {
            c.execute(
                "UPDATE tasks SET status = $2, result = $3, updated_ms = $4 WHERE id = $1 AND \
                 attempt = $5 AND owner = $6 AND \
                 status IN ('queued', 'running', 'interrupted')",
                &[&id, &status, &result, &now_ms(), &attempt, &me],
            )
            .map(drop)
        })
    }

    /// Ends a live task with `status` (cancelled), from any host; whether it was live.
    pub fn end(&self, id: &str, status: &str) -> Result<bool> {
        let (id, status) = (id.to_owned(), status.to_owned());
        self.call("set a task's status", move |c| {
            c.execute(
                &format!("UPDATE tasks SET status = $2, updated_ms = $3 WHERE id = $1 AND {LIVE}"),
                &[&id, &status, &now_ms()],
            )
            .map(|n| n == 1)
        })
    }

    /// Appends an update and queues the next attempt, held by this host from now on; the new
    /// attempt number (`None`: no such task).
    pub fn add_update(&self, id: &str, update: &str) -> Result<Option<u32>> {
        let (id, update, me) = (id.to_owned(), update.to_owned(), self.me.clone());
        let lease = millis(self.lease);
        self.call("update a task", move |c| {
            let row = c.query_opt(
                "UPDATE tasks SET updates = array_append(updates, $2), attempt = attempt + 1, \
                 status = 'queued', result = NULL, updated_ms = $3, owner = $4, owner_name = $5, \
                 lease_until = clock_timestamp() + $6::bigint * interval '1 millisecond' \
                 WHERE id = $1 RETURNING attempt",
                &[&id, &update, &now_ms(), &me.id, &me.name, &lease],
            )?;
            row.map(|r| {
                r.try_get::<_, i32>(0)
                    .map(|a| u32::try_from(a).unwrap_or(0))
            })
            .transpose()
        })
    }

    /// Appends an event to a task's log; its sequence number.
    pub fn event(&self, id: &str, kind: &str, payload: &str) -> Result<u64> {
        let (id, kind, payload) = (id.to_owned(), kind.to_owned(), payload.to_owned());
        self.call("append a task event", move |c| {
            let mut tx = c.transaction()?;
            let seq = append_event(&mut tx, &id, &kind, &payload)?;
            tx.commit()?;
            Ok(seq)
        })
    }

    /// Report payloads not yet returned, moving the task's cursor past them (a reader leaves
    /// the cursor where it is).
    pub fn take_new_reports(&self, id: &str) -> Result<Vec<String>> {
        let id = id.to_owned();
        let move_cursor = self.keeper.is_some();
        self.call("take a task's new reports", move |c| {
            let mut tx = c.transaction()?;
            let Some(row) = tx.query_opt(
                "SELECT checked_seq FROM tasks WHERE id = $1 FOR UPDATE",
                &[&id],
            )?
            else {
                return Ok(Vec::new());
            };
            let checked: i64 = row.try_get(0)?;
            let rows = tx.query(
                "SELECT seq, payload FROM task_events WHERE task_id = $1 AND kind = 'report' \
                 AND seq > $2 ORDER BY seq",
                &[&id, &checked],
            )?;
            if let Some(last) = rows.last().filter(|_| move_cursor) {
                let last: i64 = last.try_get(0)?;
                tx.execute(
                    "UPDATE tasks SET checked_seq = $2 WHERE id = $1",
                    &[&id, &last],
                )?;
            }
            tx.commit()?;
            rows.iter().map(|r| r.try_get(1)).collect()
        })
    }

    /// Every report payload of a task, in order, without moving the cursor.
    pub fn reports(&self, id: &str) -> Result<Vec<String>> {
        let id = id.to_owned();
        self.call("read a task's reports", move |c| {
            c.query(
                "SELECT payload FROM task_events WHERE task_id = $1 AND kind = 'report' \
                 ORDER BY seq",
                &[&id],
            )?
            .iter()
            .map(|r| r.try_get(0))
            .collect()
        })
    }

    /// Every event of a task as (kind, payload), in order.
    pub fn events(&self, id: &str) -> Result<Vec<(String, String)>> {
        let id = id.to_owned();
        self.call("read a task's events", move |c| {
            c.query(
                "SELECT kind, payload FROM task_events WHERE task_id = $1 ORDER BY seq",
                &[&id],
            )?
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect()
        })
    }

    /// One task.
    pub fn get(&self, id: &str) -> Result<Option<PgTask>> {
        let id = id.to_owned();
        self.call("read a task", move |c| {
            c.query_opt(
                &format!("SELECT {COLUMNS} FROM tasks WHERE id = $1"),
                &[&id],
            )?
            .map(|r| task(&r))
            .transpose()
        })
    }

    /// Tasks of every host, newest first.
    pub fn list(&self, limit: usize) -> Result<Vec<PgTask>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.call("list tasks", move |c| {
            c.query(
                &format!("SELECT {COLUMNS} FROM tasks ORDER BY created_ms DESC, id DESC LIMIT $1"),
                &[&limit],
            )?
            .iter()
            .map(task)
            .collect()
        })
    }

    /// Takes up orphaned retryable tasks of `specialists` (src/orphans.rs): each is held by
    /// this host from now on, on its new attempt, ready for [`PgTaskStore::start_attempt`].
    pub fn claim_orphans(&self, specialists: &[String]) -> Result<Vec<PgTask>> {
        let (me, lease, names) = (self.me.clone(), millis(self.lease), specialists.to_vec());
        self.call("claim orphaned tasks", move |c| {
            crate::orphans::claim(c, &me, lease, &names)
        })
    }

    /// For a live task that another host holds with a valid lease: that host's name.
    pub fn live_elsewhere(&self, id: &str) -> Result<Option<String>> {
        let (id, me) = (id.to_owned(), self.me.id.clone());
        self.call("read a task's owner", move |c| {
            c.query_opt(
                &format!(
                    "SELECT owner_name FROM tasks WHERE id = $1 AND {LIVE} AND owner <> $2 AND \
                     lease_until > clock_timestamp()"
                ),
                &[&id, &me],
            )?
            .map(|r| r.try_get(0))
            .transpose()
        })
    }

    /// Whether attempt `attempt` of a task is still live and held by this host: when not (it was
    /// cancelled from another host, updated, or interrupted after this host's lease expired), the
    /// attempt running here must stop.
    pub fn still_running_here(&self, id: &str, attempt: u32) -> Result<bool> {
        let (id, me) = (id.to_owned(), self.me.id.clone());
        let attempt = i32::try_from(attempt).unwrap_or(i32::MAX);
        self.call("check a task's lease", move |c| {
            c.query_one(
                &format!(
                    "SELECT EXISTS (SELECT 1 FROM tasks WHERE id = $1 AND attempt = $2 AND \
                     owner = $3 AND {LIVE})"
                ),
                &[&id, &attempt, &me],
            )?
            .try_get(0)
        })
    }

    /// The other hosts seen within one lease (that is, running), oldest first.
    pub fn live_hosts(&self) -> Result<Vec<HostRecord>> {
        let (me, lease) = (self.me.id.clone(), millis(self.lease));
        self.call("list the hosts", move |c| {
            c.query(
                "SELECT id, name, plugins FROM guild_hosts WHERE id <> $1 AND \
                 last_seen > clock_timestamp() - $2::bigint * interval '1 millisecond' \
                 ORDER BY started",
                &[&me, &lease],
            )?
            .iter()
            .map(|r| {
                Ok(HostRecord {
                    id: r.try_get(0)?,
                    name: r.try_get(1)?,
                    plugins: r.try_get(2)?,
                })
            })
            .collect()
        })
    }
}

pub(crate) fn task(r: &Row) -> std::result::Result<PgTask, postgres::Error> {
    let number = |i| -> std::result::Result<u64, postgres::Error> {
        Ok(u64::try_from(r.try_get::<_, i64>(i)?).unwrap_or(0))
    };
    Ok(PgTask {
        id: r.try_get(0)?,
        specialist: r.try_get(1)?,
        description: r.try_get(2)?,
        updates: r.try_get(3)?,
        status: r.try_get(4)?,
        attempt: u32::try_from(r.try_get::<_, i32>(5)?).unwrap_or(0),
        result: r.try_get(6)?,
        created_ms: number(7)?,
        updated_ms: number(8)?,
        owner_name: r.try_get(9)?,
    })
}

/// Appends an event inside `tx`, after locking the task's row so that events of one task from
/// several hosts get distinct, gapless sequence numbers.
pub(crate) fn append_event(
    tx: &mut impl GenericClient,
    id: &str,
    kind: &str,
    payload: &str,
) -> std::result::Result<u64, postgres::Error> {
    tx.execute("SELECT 1 FROM tasks WHERE id = $1 FOR UPDATE", &[&id])?;
    let seq: i64 = tx
        .query_one(
            "INSERT INTO task_events (task_id, seq, kind, payload, at_ms) \
             SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3, $4 FROM task_events WHERE task_id = $1 \
             RETURNING seq",
            &[&id, &kind, &payload, &now_ms()],
        )?
        .try_get(0)?;
    Ok(u64::try_from(seq).unwrap_or(0))
}

/// Marks the live tasks whose lease expired as interrupted (or, retryable ones, releases them
/// to another host: src/orphans.rs), each with an event naming the host that held it; rows
/// another host is reaping are skipped. The ids it ended or released.
fn reap(c: &mut postgres::Client) -> std::result::Result<Vec<String>, postgres::Error> {
    let mut tx = c.transaction()?;
    // Orphans waiting for a host (`owner = ''`) have no lease to expire.
    let expired = tx.query(
        &format!(
            "SELECT id, owner_name, retryable FROM tasks WHERE {LIVE} AND owner <> '' AND \
             lease_until < clock_timestamp() ORDER BY lease_until LIMIT 100 \
             FOR UPDATE SKIP LOCKED"
        ),
        &[],
    )?;
    let mut ids = Vec::new();
    for row in &expired {
        let (id, owner): (String, String) = (row.try_get(0)?, row.try_get(1)?);
        let why = format!("the host running it ({owner}) stopped renewing its lease");
        if row.try_get(2)? {
            crate::orphans::release(&mut tx, &id, &why)?;
            tracing::warn!(task_id = %id, owner = %owner, "background task orphaned: its host's lease expired; it waits for another host");
        } else {
            interrupt(&mut tx, &id, &why)?;
            tracing::warn!(task_id = %id, owner = %owner, "background task interrupted: its host's lease expired");
        }
        ids.push(id);
    }
    tx.commit()?;
    Ok(ids)
}

/// Marks task `id` interrupted and records `why` among its events.
fn interrupt(
    tx: &mut postgres::Transaction<'_>,
    id: &str,
    why: &str,
) -> std::result::Result<(), postgres::Error> {
    tx.execute(
        "UPDATE tasks SET status = 'interrupted', updated_ms = $2 WHERE id = $1",
        &[&id, &now_ms()],
    )?;
    append_event(tx, id, "status", &format!("interrupted: {why}")).map(|_| ())
}

/// Renews this host's leases and its `guild_hosts` row, and reaps expired leases.
fn beat(
    c: &mut postgres::Client,
    me: &HostIdentity,
    lease: i64,
) -> std::result::Result<(), postgres::Error> {
    c.execute(
        &format!(
            "UPDATE tasks SET lease_until = clock_timestamp() + $2::bigint * interval \
             '1 millisecond' WHERE owner = $1 AND {LIVE}"
        ),
        &[&me.id, &lease],
    )?;
    c.execute(
        "INSERT INTO guild_hosts (id, name) VALUES ($1, $2) \
         ON CONFLICT (id) DO UPDATE SET last_seen = clock_timestamp()",
        &[&me.id, &me.name],
    )?;
    while !reap(c)?.is_empty() {}
    Ok(())
}

/// Interrupts what this host still holds (releases what is retryable) and removes its
/// `guild_hosts` row (a clean stop).
fn leave(c: &mut postgres::Client, me: &HostIdentity) -> std::result::Result<(), postgres::Error> {
    let mut tx = c.transaction()?;
    let held = tx.query(
        &format!("SELECT id, retryable FROM tasks WHERE owner = $1 AND {LIVE} FOR UPDATE"),
        &[&me.id],
    )?;
    for row in &held {
        let id: String = row.try_get(0)?;
        let why = format!("the host running it ({}) stopped", me.name);
        if row.try_get(1)? {
            crate::orphans::release(&mut tx, &id, &why)?;
        } else {
            interrupt(&mut tx, &id, &why)?;
        }
    }
    tx.execute("DELETE FROM guild_hosts WHERE id = $1", &[&me.id])?;
    tx.commit()
}

/// The lease thread of one host: a connection of its own, a beat every third of the lease.
struct Keeper {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Keeper {
    fn start(config: &PgConfig, me: HostIdentity, lease: Duration) -> Result<Keeper> {
        let config = config.clone();
        let (ready_tx, ready_rx) = mpsc::sync_channel::<Result<()>>(1);
        let (stop, stopped) = mpsc::channel::<()>();
        let every = (lease / 3).max(Duration::from_millis(50));
        let thread = std::thread::Builder::new()
            .name("guild-pg-lease".into())
            .spawn(move || {
                let target = config.target().to_owned();
                let first = config.connect().and_then(|mut c| {
                    beat(&mut c, &me, millis(lease))
                        .map(|()| c)
                        .map_err(|e| PgError::Query {
                            target: target.clone(),
                            op: "register this host and reap expired task leases",
                            reason: describe(&e),
                        })
                });
                let mut client = match first {
                    Ok(c) => c,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                let _ = ready_tx.send(Ok(()));
                while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                    if client.is_closed() {
                        match config.connect() {
                            Ok(fresh) => client = fresh,
                            Err(e) => {
                                tracing::error!("task leases: reconnecting failed: {e}");
                                continue;
                            }
                        }
                    }
                    if let Err(e) = beat(&mut client, &me, millis(lease)) {
                        tracing::error!(target = %target, "failed to renew the task leases: {}", describe(&e));
                    }
                }
                if let Err(e) = leave(&mut client, &me) {
                    tracing::warn!(target = %target, "failed to release the task leases: {}", describe(&e));
                }
            })
            .map_err(PgError::Thread)?;
        let keeper = Keeper {
            stop: Some(stop),
            thread: Some(thread),
        };
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(keeper),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(PgError::Thread(std::io::Error::other(
                "the lease thread stopped during setup",
            ))),
        }
    }
}

impl Drop for Keeper {
    fn drop(&mut self) {
        // Dropping the sender wakes the thread at once; it releases this host's leases.
        self.stop.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

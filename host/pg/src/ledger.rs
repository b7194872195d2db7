//! [`PgLedgerStore`]: the receipts ledger in PostgreSQL, one hash chain shared by every host
//! that opens the same database (see the crate docs for how appends are serialized).
//!
//! The entries, their hashes and the rules of intents, outcomes, replays and resolutions are
//! [`guild_receipts::backend`]'s, so the chain is the one the SQLite ledger writes. "In flight"
//! (an intent whose call this store runs now) is kept per store, as in SQLite: another host
//! sees such an intent as `unknown` and replays it rather than calling again. Each write is one
//! transaction of [`crate::writer`]; single writes of concurrent callers share one
//! ([`crate::group`]).

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use guild_receipts::backend::{self, ChainWalk, Entry};
use guild_receipts::{
    AuditEntry, AuditKind, Begin, Completion, EntryKind, Intent, IntentId, LedgerError,
    LedgerStore, QueuedWrite, Receipt, ReceiptStatus, VerifyReport,
};
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::Type;
use postgres::{GenericClient, Row};

use crate::flight;
use crate::group::{Answer, Op, Queue, mismatch};
use crate::worker::Worker;
use crate::writer::Writer;
use crate::{PgConfig, PgError, describe, schema};

/// Column list in the order [`entry`] reads it.
pub(crate) const COLUMNS: &str = "seq, kind, receipt_id, task_id, route, plugin, tool, receipt_type, \
     operation, status, external_id, verifiable_url, preview, error, time, input_sha256, \
     idempotency_key, detail, prev_hash, hash, chain";

/// Where the head is kept, as `verify` names it.
const HEAD: &str = "the ledger_head row";

type Result<T> = std::result::Result<T, LedgerError>;

pub(crate) fn pg(op: &'static str) -> impl FnOnce(postgres::Error) -> LedgerError {
    move |e| LedgerError::Backend {
        backend: "postgres",
        op,
        reason: describe(&e),
    }
}

/// The receipts ledger on PostgreSQL. `Send + Sync`; every method blocks (crate docs).
pub struct PgLedgerStore {
    worker: Worker,
    /// Intents this store committed and has not completed (see the module docs).
    in_flight: Arc<Mutex<HashSet<String>>>,
    /// Single writes waiting for their group commit (src/group.rs).
    pub(crate) queue: Arc<Queue>,
    target: String,
}

impl PgLedgerStore {
    /// Connects, migrates the database to this build's schema (or refuses it), and checks that
    /// the chain reaches its head row.
    pub fn open(config: &PgConfig) -> std::result::Result<PgLedgerStore, PgError> {
        let target = config.target().to_owned();
        let t = target.clone();
        let worker = Worker::start(config, "ledger", move |c| schema::migrate(c, &t))?;
        Ok(PgLedgerStore {
            worker,
            in_flight: Arc::default(),
            queue: Arc::default(),
            target,
        })
    }

    /// Queues one write for the next group commit and waits until it is committed.
    fn submit(&self, op: Op) -> Result<Answer> {
        self.queue
            .submit(&self.worker, &self.in_flight, &self.target, op)
    }

    /// Runs `f` on the store's connection.
    fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut postgres::Client, &Mutex<HashSet<String>>, &str) -> Result<R>
        + Send
        + 'static,
    ) -> Result<R> {
        let in_flight = Arc::clone(&self.in_flight);
        let target = self.target.clone();
        self.worker
            .run(move |c| f(c, &in_flight, &target))
            .unwrap_or_else(|| {
                Err(LedgerError::Backend {
                    backend: "postgres",
                    op: "run a ledger call",
                    reason: "the connection thread stopped or the call panicked".into(),
                })
            })
    }
}

pub(crate) fn locked(set: &Mutex<HashSet<String>>) -> std::sync::MutexGuard<'_, HashSet<String>> {
    set.lock().unwrap_or_else(PoisonError::into_inner)
}

impl LedgerStore for PgLedgerStore {
    // Single writes (the tool-call path's) are group-committed with concurrent callers'.
    fn begin(&self, intent: Intent) -> Result<Begin> {
        match self.submit(Op::Begin(intent))? {
            Answer::Begin(b) => Ok(b),
            _ => Err(mismatch()),
        }
    }

    fn complete(&self, intent: &IntentId, outcome: Completion) -> Result<Receipt> {
        match self.submit(Op::Complete(intent.as_str().to_owned(), outcome))? {
            Answer::Complete(r) => Ok(*r),
            _ => Err(mismatch()),
        }
    }

    fn queue_outcome(self: Arc<Self>, intent: &IntentId, outcome: Completion) -> QueuedWrite {
        let op = Op::Complete(intent.as_str().to_owned(), outcome);
        let queued = self
            .queue
            .enqueue(&self.worker, &self.in_flight, &self.target, op);
        QueuedWrite::new(move || {
            // The store stays open until the write is answered.
            let _store = self;
            match queued.wait()? {
                Answer::Complete(r) => Ok(*r),
                _ => Err(mismatch()),
            }
        })
    }

    fn begin_many(&self, intents: Vec<Intent>) -> Result<Vec<Begin>> {
        self.call(move |c, in_flight, target| {
            let mut new_ids = Vec::new();
            let begun = begin_all(c, in_flight, target, intents, &mut new_ids);
            match begun {
                Ok(_) => locked(in_flight).extend(new_ids),
                Err(_) => flight::let_go(c, &new_ids),
            }
            begun
        })
    }

    fn complete_many(&self, items: Vec<(&IntentId, Completion)>) -> Result<Vec<Receipt>> {
        let items: Vec<(String, Completion)> = items
            .into_iter()
            .map(|(id, c)| (id.as_str().to_owned(), c))
            .collect();
        self.call(move |c, in_flight, target| {
            let mut w = Writer::start(c, target)?;
            let ids: Vec<String> = items.iter().map(|(id, _)| id.clone()).collect();
            w.prefetch(&ids)?;
            let mut written = Vec::with_capacity(items.len());
            for (id, outcome) in items {
                written.push(w.complete_one(&id, outcome)?);
            }
            w.commit()?;
            let done: Vec<String> = {
                let mut flying = locked(in_flight);
                written
                    .iter()
                    .filter(|(entry, _)| flying.remove(&entry.receipt_id))
                    .map(|(entry, _)| entry.receipt_id.clone())
                    .collect()
            };
            flight::let_go(c, &done);
            written
                .into_iter()
                .map(|(entry, first)| backend::receipt(entry, first))
                .collect()
        })
    }

    fn release(&self, intent: &IntentId) {
        let id = intent.as_str().to_owned();
        if locked(&self.in_flight).remove(&id) {
            // Other hosts may replay its key (as `unknown`) from now on.
            self.worker.send(move |c| flight::let_go(c, &[id]));
        }
    }

    fn resolve(&self, receipt_id: &str, outcome: Completion) -> Result<Receipt> {
        let id = receipt_id.to_owned();
        self.call(move |c, in_flight, target| {
            let mut w = Writer::start(c, target)?;
            let (latest, first) =
                latest(w.reads()?, &id)?.ok_or_else(|| LedgerError::NotFound { id: id.clone() })?;
            if latest.kind == EntryKind::Replay.as_str() {
                return Err(LedgerError::IsReplay {
                    id,
                    original: latest.detail.unwrap_or_default(),
                });
            }
            let status = backend::status_of(&latest)?;
            if status == ReceiptStatus::Unknown
                && (locked(in_flight).contains(&id) || flight::elsewhere(w.reads()?, &id)?)
            {
                return Err(LedgerError::InFlight {
                    key: latest.idempotency_key,
                    receipt_id: id,
                });
            }
            match status {
                ReceiptStatus::Pending | ReceiptStatus::Unknown => {}
                status @ (ReceiptStatus::Success | ReceiptStatus::Failed) => {
                    return Err(LedgerError::NotResolvable { id, status });
                }
            }
            let entry = w.append(backend::follow_up(latest, EntryKind::Resolution, outcome))?;
            w.commit()?;
            backend::receipt(entry, first)
        })
    }

    fn audit(&self, kind: AuditKind, plugin: &str, detail: &str) -> Result<AuditEntry> {
        let entry = backend::audit_entry(kind, plugin, detail);
        match self.submit(Op::Audit(Box::new(entry)))? {
            Answer::Audit(a) => Ok(*a),
            _ => Err(mismatch()),
        }
    }

    fn get(&self, id: &str) -> Result<Option<Receipt>> {
        let id = id.to_owned();
        self.call(move |c, _, _| match latest(c, &id)? {
            Some((entry, first)) => backend::receipt(entry, first).map(Some),
            None => Ok(None),
        })
    }

    fn for_task(&self, task_id: &str) -> Result<Vec<Receipt>> {
        let task = task_id.to_owned();
        self.call(move |c, _, _| {
            receipts(c, "WHERE task_id = $1 AND kind <> 'audit'", "ASC", &[&task])
        })
    }

    fn list(&self, limit: usize) -> Result<Vec<Receipt>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.call(move |c, _, _| {
            let mut newest_first =
                receipts(c, "WHERE kind <> 'audit'", "DESC LIMIT $1", &[&limit])?;
            newest_first.reverse();
            Ok(newest_first)
        })
    }

    fn audit_log(&self, limit: usize) -> Result<Vec<AuditEntry>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.call(move |c, _, _| {
            let sql = format!(
                "SELECT {COLUMNS} FROM ledger_entries WHERE kind = 'audit' \
                 ORDER BY seq DESC LIMIT $1"
            );
            let rows = c.query(&sql, &[&limit]).map_err(pg("read audit entries"))?;
            let mut out = rows
                .iter()
                .map(|r| entry(r, 0).and_then(backend::audit))
                .collect::<Result<Vec<_>>>()?;
            out.reverse();
            Ok(out)
        })
    }

    fn verify(&self) -> Result<VerifyReport> {
        self.call(|c, _, _| verify(c))
    }

    fn accept_head(&self) -> Result<Option<AuditEntry>> {
        self.call(|c, _, target| {
            let (mut w, problem) = Writer::start_unchecked(c)?;
            let Some(problem) = problem else {
                return Ok(None);
            };
            let entry = w.append(backend::head_accepted_entry(&problem))?;
            w.commit()?;
            tracing::warn!(
                target,
                seq = entry.seq,
                "accepted the ledger as it was: {problem}"
            );
            backend::audit(entry).map(Some)
        })
    }
}

/// Commits `intents` in one transaction, their new ids (collected in `new_ids`) marked in
/// flight before the commit.
fn begin_all(
    c: &mut postgres::Client,
    in_flight: &Mutex<HashSet<String>>,
    target: &str,
    intents: Vec<Intent>,
    new_ids: &mut Vec<String>,
) -> Result<Vec<Begin>> {
    let mut w = Writer::start(c, target)?;
    let mut answers = Vec::with_capacity(intents.len());
    {
        let flying = locked(in_flight);
        for intent in intents {
            answers.push(w.begin_one(&flying, new_ids, intent)?);
        }
    }
    w.hold(new_ids)?;
    w.commit()?;
    Ok(answers)
}

/// Walks the chain in one read-only snapshot, then compares it with the head row.
fn verify(c: &mut postgres::Client) -> Result<VerifyReport> {
    let op = "read entries for verification";
    let mut tx = c
        .build_transaction()
        .isolation_level(postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .map_err(pg(op))?;
    let head = head_row(&mut tx)?;
    let mut walk = ChainWalk::new(Some(head));
    let mut bad = None;
    let mut read = 0u64;
    {
        let sql = format!("SELECT {COLUMNS} FROM ledger_entries ORDER BY seq");
        let mut rows = tx
            .query_raw(&sql, std::iter::empty::<i64>())
            .map_err(pg(op))?;
        while let Some(row) = rows.next().map_err(pg(op))? {
            read += 1;
            let problem = match entry(&row, 0) {
                Ok(e) => walk.check(e),
                Err(e) => Some((read, format!("the entry cannot be read: {e}"))),
            };
            if problem.is_some() {
                bad = problem;
                break;
            }
        }
    }
    tx.commit().map_err(pg(op))?;
    Ok(walk.report(bad, HEAD))
}

/// The head row's sequence and hash.
fn head_row(c: &mut impl GenericClient) -> Result<(u64, String)> {
    let row = c
        .query_one("SELECT seq, hash FROM ledger_head", &[])
        .map_err(pg("read the chain head"))?;
    Ok((seq_of(&row, 0)?, text(&row, 1)?))
}

/// The latest non-audit entry of a receipt and the sequence of its first entry.
pub(crate) fn latest(c: &mut impl GenericClient, id: &str) -> Result<Option<(Entry, u64)>> {
    let sql = format!(
        "SELECT (SELECT MIN(seq) FROM ledger_entries WHERE receipt_id = $1 AND kind <> 'audit'), \
         {COLUMNS} FROM ledger_entries WHERE receipt_id = $1 AND kind <> 'audit' \
         ORDER BY seq DESC LIMIT 1"
    );
    let found = c
        .query_typed_opt(&sql, &[(&id, Type::TEXT)])
        .map_err(pg("read a receipt"))?;
    let Some(row) = found else {
        return Ok(None);
    };
    Ok(Some((entry(&row, 1)?, seq_of(&row, 0)?)))
}

/// Receipts grouped by id, each shown by its latest entry, ordered by their intent's sequence.
fn receipts(
    c: &mut impl GenericClient,
    filter: &str,
    order: &str,
    params: &[&(dyn postgres::types::ToSql + Sync)],
) -> Result<Vec<Receipt>> {
    let columns = COLUMNS
        .split(", ")
        .map(|c| format!("e.{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let sql = format!(
        "WITH r AS (SELECT receipt_id, MIN(seq) AS first, MAX(seq) AS last FROM ledger_entries \
         {filter} GROUP BY receipt_id) \
         SELECT r.first, {columns} FROM r JOIN ledger_entries e ON e.seq = r.last \
         ORDER BY r.first {order}"
    );
    let rows = c.query(&sql, params).map_err(pg("read receipts"))?;
    rows.iter()
        .map(|row| backend::receipt(entry(row, 1)?, seq_of(row, 0)?))
        .collect()
}

/// Reads an entry selected with [`COLUMNS`], starting at column `at`.
pub(crate) fn entry(row: &Row, at: usize) -> Result<Entry> {
    let opt = |i: usize| -> Result<Option<String>> {
        row.try_get(at + i).map_err(pg("read an entry's column"))
    };
    let s = |i: usize| text(row, at + i);
    Ok(Entry {
        seq: seq_of(row, at)?,
        kind: s(1)?,
        receipt_id: s(2)?,
        task_id: s(3)?,
        route: s(4)?,
        plugin: s(5)?,
        tool: s(6)?,
        receipt_type: s(7)?,
        operation: s(8)?,
        status: s(9)?,
        external_id: opt(10)?,
        verifiable_url: opt(11)?,
        preview: opt(12)?,
        error: opt(13)?,
        time: s(14)?,
        input_sha256: s(15)?,
        idempotency_key: opt(16)?,
        detail: opt(17)?,
        prev_hash: s(18)?,
        hash: s(19)?,
        chain: opt(20)?,
    })
}

pub(crate) fn text(row: &Row, i: usize) -> Result<String> {
    row.try_get(i).map_err(pg("read an entry's column"))
}

/// A stored sequence; a negative one can only come from tampering and will not match its hash.
pub(crate) fn seq_of(row: &Row, i: usize) -> Result<u64> {
    let seq: i64 = row.try_get(i).map_err(pg("read a sequence"))?;
    Ok(u64::try_from(seq).unwrap_or(0))
}

pub(crate) fn seq_param(seq: u64) -> Result<i64> {
    i64::try_from(seq).map_err(|_| LedgerError::Corrupt {
        seq,
        reason: "sequence overflow".into(),
    })
}

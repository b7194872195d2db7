//! [`PgLedgerStore`]: the receipts ledger in PostgreSQL, one hash chain shared by every host
//! that opens the same database (see the crate docs for how appends are serialized).
//!
//! The entries, their hashes and the rules of intents, outcomes, replays and resolutions are
//! [`guild_receipts::backend`]'s, so the chain is the one the SQLite ledger writes. "In flight"
//! (an intent whose call this store runs now) is kept per store, as in SQLite: another host
//! sees such an intent as `unknown` and replays it rather than calling again.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use guild_receipts::backend::{self, ChainWalk, Entry};
use guild_receipts::{
    AuditEntry, AuditKind, Begin, Completion, EntryKind, Intent, IntentId, LedgerError,
    LedgerStore, Receipt, ReceiptStatus, VerifyReport,
};
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::{ToSql, Type};
use postgres::{GenericClient, Row};

use crate::group::{Answer, Op, Queue, mismatch};
use crate::worker::Worker;
use crate::{PgConfig, PgError, describe, schema};

/// Column list in the order [`entry`] reads it.
const COLUMNS: &str = "seq, kind, receipt_id, task_id, route, plugin, tool, receipt_type, \
     operation, status, external_id, verifiable_url, preview, error, time, input_sha256, \
     idempotency_key, detail, prev_hash, hash, chain";

/// Where the head is kept, as `verify` names it.
const HEAD: &str = "the ledger_head row";

type Result<T> = std::result::Result<T, LedgerError>;

fn pg(op: &'static str) -> impl FnOnce(postgres::Error) -> LedgerError {
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

    fn begin_many(&self, intents: Vec<Intent>) -> Result<Vec<Begin>> {
        self.call(move |c, in_flight, target| {
            let mut w = Writer::start(c, target)?;
            let mut new_ids = Vec::new();
            let mut answers = Vec::with_capacity(intents.len());
            {
                let flying = locked(in_flight);
                for intent in intents {
                    answers.push(w.begin_one(&flying, &mut new_ids, intent)?);
                }
            }
            w.commit()?;
            locked(in_flight).extend(new_ids);
            Ok(answers)
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
            let mut flying = locked(in_flight);
            written
                .into_iter()
                .map(|(entry, first)| {
                    flying.remove(&entry.receipt_id);
                    backend::receipt(entry, first)
                })
                .collect()
        })
    }

    fn release(&self, intent: &IntentId) {
        locked(&self.in_flight).remove(intent.as_str());
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
            match backend::status_of(&latest)? {
                ReceiptStatus::Unknown if locked(in_flight).contains(&id) => {
                    return Err(LedgerError::InFlight {
                        key: latest.idempotency_key,
                        receipt_id: id,
                    });
                }
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

/// One write transaction, holding the head row's lock, and the chain head inside it. Its
/// statements name their parameters' types (`query_typed`), so each is one round trip to the
/// server, not a prepare and then an execute; appended entries are inserted together, before
/// the next read and before the commit: the head lock is held for fewer round trips.
pub(crate) struct Writer<'c> {
    tx: postgres::Transaction<'c>,
    seq: u64,
    hash: String,
    appended: bool,
    /// Entries appended and not inserted yet (see [`Writer::flush`]).
    unwritten: Vec<Entry>,
    /// The latest entry and first sequence of receipts read ahead or completed in this
    /// transaction.
    known: HashMap<String, (Entry, u64)>,
}

impl<'c> Writer<'c> {
    /// Starts a transaction and locks the head row: writers on every host wait here, in turn.
    /// Refuses a ledger whose last entry is not the one the head row records.
    pub(crate) fn start(c: &'c mut postgres::Client, target: &str) -> Result<Writer<'c>> {
        let mut tx = c.transaction().map_err(pg("start a write transaction"))?;
        let row = tx
            .query_typed_one("SELECT seq, hash FROM ledger_head FOR UPDATE", &[])
            .map_err(pg("lock the chain head"))?;
        let (seq, hash) = (seq_of(&row, 0)?, text(&row, 1)?);
        let last = tx
            .query_typed_opt(
                "SELECT seq, hash FROM ledger_entries ORDER BY seq DESC LIMIT 1",
                &[],
            )
            .map_err(pg("read the last entry"))?;
        let found = match &last {
            Some(row) => (seq_of(row, 0)?, text(row, 1)?),
            None => (0, backend::GENESIS.to_owned()),
        };
        if found != (seq, hash.clone()) {
            let problem = format!(
                "the last entry is {} (hash {}), but the ledger_head row records entry {seq} \
                 (hash {hash}): entries were removed or added outside Guild",
                found.0, found.1
            );
            tracing::error!(target, "{problem}");
            return Err(LedgerError::HeadMismatch {
                path: format!("postgres:{target}").into(),
                problem,
            });
        }
        Ok(Writer {
            tx,
            seq,
            hash,
            appended: false,
            unwritten: Vec::new(),
            known: HashMap::new(),
        })
    }

    /// The sequence of the chain's last entry, this transaction's appends included.
    pub(crate) fn seq(&self) -> u64 {
        self.seq
    }

    /// Links `entry` after the head. It is inserted with the others of this transaction before
    /// the next read and before the commit ([`Writer::flush`]).
    pub(crate) fn append(&mut self, mut entry: Entry) -> Result<Entry> {
        backend::link(&mut entry, self.seq, &self.hash);
        seq_param(entry.seq)?;
        self.unwritten.push(entry.clone());
        self.seq = entry.seq;
        self.hash.clone_from(&entry.hash);
        self.appended = true;
        Ok(entry)
    }

    /// Inserts the entries appended since the last flush, all in one statement.
    fn flush(&mut self) -> Result<()> {
        if self.unwritten.is_empty() {
            return Ok(());
        }
        let rows = std::mem::take(&mut self.unwritten);
        let seqs = rows
            .iter()
            .map(|e| seq_param(e.seq))
            .collect::<Result<Vec<i64>>>()?;
        let text = |f: fn(&Entry) -> &String| rows.iter().map(f).cloned().collect::<Vec<_>>();
        let opt =
            |f: fn(&Entry) -> &Option<String>| rows.iter().map(f).cloned().collect::<Vec<_>>();
        let columns = [
            text(|e| &e.kind),
            text(|e| &e.receipt_id),
            text(|e| &e.task_id),
            text(|e| &e.route),
            text(|e| &e.plugin),
            text(|e| &e.tool),
            text(|e| &e.receipt_type),
            text(|e| &e.operation),
            text(|e| &e.status),
        ];
        let optional = [
            opt(|e| &e.external_id),
            opt(|e| &e.verifiable_url),
            opt(|e| &e.preview),
            opt(|e| &e.error),
        ];
        let time = text(|e| &e.time);
        let input = text(|e| &e.input_sha256);
        let more = [opt(|e| &e.idempotency_key), opt(|e| &e.detail)];
        let hashes = [text(|e| &e.prev_hash), text(|e| &e.hash)];
        let chain = opt(|e| &e.chain);
        let mut params: Vec<(&(dyn ToSql + Sync), Type)> = vec![(&seqs, Type::INT8_ARRAY)];
        params.extend(columns.iter().map(|c| (c as _, Type::TEXT_ARRAY)));
        params.extend(optional.iter().map(|c| (c as _, Type::TEXT_ARRAY)));
        params.extend([
            (&time as _, Type::TEXT_ARRAY),
            (&input as _, Type::TEXT_ARRAY),
        ]);
        params.extend(more.iter().map(|c| (c as _, Type::TEXT_ARRAY)));
        params.extend(hashes.iter().map(|c| (c as _, Type::TEXT_ARRAY)));
        params.push((&chain, Type::TEXT_ARRAY));
        let sql = format!(
            "INSERT INTO ledger_entries ({COLUMNS}) SELECT * FROM unnest($1, $2, $3, $4, $5, \
             $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)"
        );
        self.tx
            .query_typed(&sql, &params)
            .map_err(pg("append entries"))?;
        Ok(())
    }

    /// The transaction, with every appended entry inserted: for reads that must see them.
    fn reads(&mut self) -> Result<&mut postgres::Transaction<'c>> {
        self.flush()?;
        Ok(&mut self.tx)
    }

    /// Reads the latest entries of the receipts `ids` in one query, for the outcomes of a
    /// group ([`Writer::complete_one`] then needs no read of its own).
    pub(crate) fn prefetch(&mut self, ids: &[String]) -> Result<()> {
        let sql = format!(
            "SELECT first, {COLUMNS} FROM (SELECT MIN(seq) OVER (PARTITION BY receipt_id) AS \
             first, row_number() OVER (PARTITION BY receipt_id ORDER BY seq DESC) AS n, \
             {COLUMNS} FROM ledger_entries WHERE receipt_id = ANY($1) AND kind <> 'audit') e \
             WHERE n = 1"
        );
        let rows = self
            .reads()?
            .query_typed(&sql, &[(&ids, Type::TEXT_ARRAY)])
            .map_err(pg("read receipts"))?;
        for row in rows {
            let latest = entry(&row, 1)?;
            let first = seq_of(&row, 0)?;
            self.known
                .insert(latest.receipt_id.clone(), (latest, first));
        }
        Ok(())
    }

    /// Moves the head row to the last appended entry and commits (the WAL is flushed before
    /// this returns).
    pub(crate) fn commit(mut self) -> Result<()> {
        self.flush()?;
        if self.appended {
            let seq = seq_param(self.seq)?;
            self.tx
                .query_typed(
                    "UPDATE ledger_head SET seq = $1, hash = $2",
                    &[(&seq, Type::INT8), (&self.hash, Type::TEXT)],
                )
                .map_err(pg("move the chain head"))?;
        }
        self.tx.commit().map_err(pg("commit a write"))
    }

    /// One intent: a replay answer, or a new intent entry whose id joins `new_ids`.
    pub(crate) fn begin_one(
        &mut self,
        in_flight: &HashSet<String>,
        new_ids: &mut Vec<String>,
        intent: Intent,
    ) -> Result<Begin> {
        let intent = backend::validate_intent(intent)?;
        if let Some(replayed) = self.replay(&intent, |id| {
            in_flight.contains(id) || new_ids.iter().any(|n| n == id)
        })? {
            let answer = self.record_replay(&intent, replayed)?;
            return Ok(Begin::Replay(Box::new(answer)));
        }
        let id = uuid::Uuid::now_v7().to_string();
        self.append(backend::intent_entry(intent, id.clone()))?;
        new_ids.push(id.clone());
        Ok(Begin::Proceed(backend::intent_id(id)))
    }

    /// With the same key and input recorded before: the receipt to replay, or an error.
    fn replay(
        &mut self,
        intent: &Intent,
        in_flight: impl Fn(&str) -> bool,
    ) -> Result<Option<Receipt>> {
        let Some(key) = &intent.idempotency_key else {
            return Ok(None);
        };
        let found = self
            .reads()?
            .query_typed_opt(
                "SELECT receipt_id, input_sha256 FROM ledger_entries \
                 WHERE kind = 'intent' AND tool = $1 AND idempotency_key = $2",
                &[(&intent.tool, Type::TEXT), (key, Type::TEXT)],
            )
            .map_err(pg("look up an idempotency key"))?;
        let Some(row) = found else {
            return Ok(None);
        };
        let (receipt_id, input) = (text(&row, 0)?, text(&row, 1)?);
        if input != intent.input_sha256 {
            return Err(LedgerError::IdempotencyConflict {
                key: key.clone(),
                tool: intent.tool.clone(),
                receipt_id,
            });
        }
        let (latest, first) =
            latest(self.reads()?, &receipt_id)?.ok_or_else(|| LedgerError::NotFound {
                id: receipt_id.clone(),
            })?;
        if latest.kind == EntryKind::Intent.as_str() && in_flight(&receipt_id) {
            return Err(LedgerError::InFlight {
                key: Some(key.clone()),
                receipt_id,
            });
        }
        backend::receipt(latest, first).map(Some)
    }

    /// The receipt answering for `intent`'s task: `replayed` when that task made the call, else
    /// its replay entry (an earlier one, or one appended now).
    fn record_replay(&mut self, intent: &Intent, replayed: Receipt) -> Result<Receipt> {
        if replayed.task_id == intent.task_id {
            return Ok(replayed);
        }
        let recorded = self
            .reads()?
            .query_typed_opt(
                "SELECT receipt_id FROM ledger_entries WHERE kind = 'replay' AND task_id = $1 \
                 AND detail = $2 ORDER BY seq LIMIT 1",
                &[(&intent.task_id, Type::TEXT), (&replayed.id, Type::TEXT)],
            )
            .map_err(pg("look up a replay entry"))?;
        if let Some(row) = recorded {
            let id = text(&row, 0)?;
            let (entry, first) = latest(self.reads()?, &id)?.ok_or(LedgerError::NotFound { id })?;
            return backend::receipt(entry, first);
        }
        let entry = self.append(backend::replay_entry(intent, replayed))?;
        let seq = entry.seq;
        backend::receipt(entry, seq)
    }

    /// One outcome: the outcome entry and the receipt's first sequence.
    pub(crate) fn complete_one(&mut self, id: &str, outcome: Completion) -> Result<(Entry, u64)> {
        let (latest, first) = match self.known.get(id) {
            Some(known) => known.clone(),
            None => latest(self.reads()?, id)?
                .ok_or_else(|| LedgerError::NotFound { id: id.to_owned() })?,
        };
        if latest.kind != EntryKind::Intent.as_str() {
            return Err(LedgerError::AlreadyCompleted {
                id: id.to_owned(),
                status: backend::status_of(&latest)?,
            });
        }
        let entry = self.append(backend::follow_up(latest, EntryKind::Outcome, outcome))?;
        // A second outcome for it in this transaction finds this one.
        self.known.insert(id.to_owned(), (entry.clone(), first));
        Ok((entry, first))
    }
}

/// The head row's sequence and hash.
fn head_row(c: &mut impl GenericClient) -> Result<(u64, String)> {
    let row = c
        .query_one("SELECT seq, hash FROM ledger_head", &[])
        .map_err(pg("read the chain head"))?;
    Ok((seq_of(&row, 0)?, text(&row, 1)?))
}

/// The latest non-audit entry of a receipt and the sequence of its first entry.
fn latest(c: &mut impl GenericClient, id: &str) -> Result<Option<(Entry, u64)>> {
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
fn entry(row: &Row, at: usize) -> Result<Entry> {
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

fn text(row: &Row, i: usize) -> Result<String> {
    row.try_get(i).map_err(pg("read an entry's column"))
}

/// A stored sequence; a negative one can only come from tampering and will not match its hash.
fn seq_of(row: &Row, i: usize) -> Result<u64> {
    let seq: i64 = row.try_get(i).map_err(pg("read a sequence"))?;
    Ok(u64::try_from(seq).unwrap_or(0))
}

fn seq_param(seq: u64) -> Result<i64> {
    i64::try_from(seq).map_err(|_| LedgerError::Corrupt {
        seq,
        reason: "sequence overflow".into(),
    })
}

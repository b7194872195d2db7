//! [`Ledger`]: opening the database and every write and read of receipts and audit entries.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

use super::anchor::{self, Head};
use super::chain::{COLUMNS, Entry, GENESIS, now_rfc3339};
use super::model::{
    AuditEntry, AuditKind, Begin, Completion, EntryKind, Intent, IntentId, Receipt, ReceiptStatus,
};
use super::{LedgerError, schema};
use guild_store::{self as dbfile, Access};

/// Longest idempotency key accepted, bytes.
const MAX_KEY_BYTES: usize = 256;

/// Most task ids a chain may name (a delegation tree is a few levels deep; this caps what
/// an entry can carry: `[delegate] max_depth` is at most 16, so a chain names at most 17).
pub const MAX_CHAIN_LEN: usize = 32;

/// Longest task id a chain may name, bytes.
const MAX_CHAIN_ID_BYTES: usize = 128;

/// The receipts ledger. `Send + Sync`: share it in an `Arc`; every method blocks on SQLite.
pub struct Ledger {
    inner: Mutex<Inner>,
    /// Single writes waiting for the next group commit (see [`super::group`]).
    pub(super) queue: Mutex<super::group::Queue>,
    path: PathBuf,
    /// Where the head anchor lives (see [`super::anchor`]).
    pub(super) anchor: Option<PathBuf>,
    /// An unstamped ledger of an earlier build, opened read-only: it never had an anchor.
    pub(super) legacy: bool,
    /// Write transactions committed since it was opened (see [`Ledger::commits`]).
    pub(super) commits: std::sync::atomic::AtomicU64,
}

pub(super) struct Inner {
    pub(super) conn: Connection,
    /// Intents this `Ledger` committed and has not completed: what [`LedgerError::InFlight`]
    /// means. An unknown receipt not in this set was left by a host that stopped mid-call.
    pub(super) in_flight: HashSet<String>,
}

impl Ledger {
    /// Opens the ledger file for appending, enabling WAL and `synchronous=FULL`; creates it
    /// when no file is there. A file that is empty, not SQLite, or not a Guild ledger is
    /// refused ([`super::DbFileError`]); a ledger of an earlier build is stamped and kept.
    ///
    /// A ledger that no longer reaches its head anchor (a truncated tail, an older copy swapped
    /// in, a deleted or unreadable anchor) is refused with [`LedgerError::HeadMismatch`]; every
    /// later write checks the same, so no append ever moves the anchor past a gap. Temporary
    /// anchor files a killed writer left are removed.
    pub fn open(path: impl AsRef<Path>) -> Result<Ledger, LedgerError> {
        let (ledger, adopted) = Ledger::open_for_writing(path.as_ref())?;
        ledger.anchor_if_missing(adopted)?;
        ledger.check_head()?;
        Ok(ledger)
    }

    /// Opens the file read-write without checking its anchor (see [`Ledger::open`]); `true`
    /// when it was a ledger of an earlier build, stamped just now.
    pub(super) fn open_for_writing(path: &Path) -> Result<(Ledger, bool), LedgerError> {
        let path = path.to_path_buf();
        let opened = dbfile::open(&path, &schema::SPEC, Access::ReadWrite)?;
        let mut conn = opened.conn;
        schema::prepare(&mut conn, &path)?;
        let anchor = anchor::path_for(&path);
        anchor::remove_leftovers(&anchor);
        Ok((Ledger::new(conn, path, Some(anchor)), opened.adopted))
    }

    /// Opens an existing ledger file with `SQLITE_OPEN_READ_ONLY` for reading and verifying:
    /// nothing is created, stamped or written, and every write method fails.
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Ledger, LedgerError> {
        let path = path.as_ref().to_path_buf();
        let opened = dbfile::open(&path, &schema::SPEC, Access::ReadOnly)?;
        if opened.version < schema::VERSION {
            schema::read_as_current(&opened.conn, &path)?;
        }
        let anchor = Some(anchor::path_for(&path));
        let mut ledger = Ledger::new(opened.conn, path, anchor);
        ledger.legacy = opened.legacy;
        Ok(ledger)
    }

    /// A ledger that lives in memory only (tests, dry runs); it has no head anchor.
    pub fn open_in_memory() -> Result<Ledger, LedgerError> {
        let path = PathBuf::from(":memory:");
        let mut conn = dbfile::open_in_memory(&schema::SPEC)?;
        schema::prepare(&mut conn, &path)?;
        Ok(Ledger::new(conn, path, None))
    }

    fn new(conn: Connection, path: PathBuf, anchor: Option<PathBuf>) -> Ledger {
        Ledger {
            commits: std::sync::atomic::AtomicU64::new(0),
            inner: Mutex::new(Inner {
                conn,
                in_flight: HashSet::new(),
            }),
            queue: Mutex::new(super::group::Queue::default()),
            path,
            anchor,
            legacy: false,
        }
    }

    /// The head anchor file (`None` for an in-memory ledger).
    pub fn anchor_path(&self) -> Option<&Path> {
        self.anchor.as_deref()
    }

    /// Writes the anchor of a ledger that has none yet: an empty one (anchored at entry 0, so
    /// that from its first append on, a missing anchor means a deleted one), or one of an
    /// earlier build, stamped just now (`adopted`), anchored at its current head.
    fn anchor_if_missing(&self, adopted: bool) -> Result<(), LedgerError> {
        let Some(path) = &self.anchor else {
            return Ok(());
        };
        if std::fs::symlink_metadata(path).is_ok() {
            return Ok(());
        }
        let inner = self.lock();
        let head = match head(&inner.conn)? {
            None => Head {
                seq: 0,
                hash: GENESIS.to_owned(),
            },
            Some(head) if adopted => head,
            // Entries and no anchor: `check_head` refuses it.
            Some(_) => return Ok(()),
        };
        tracing::info!(anchor = %path.display(), seq = head.seq, "writing a missing head anchor");
        if let Err(e) = anchor::write(path, &head) {
            tracing::error!(anchor = %path.display(), "failed to write the head anchor: {e}");
        }
        Ok(())
    }

    /// Refuses a ledger that does not reach its anchor (see [`super::anchor::check`]).
    fn check_head(&self) -> Result<(), LedgerError> {
        let mut inner = self.lock();
        let w = Writer::start(&mut inner.conn)?;
        self.guard(&w)
    }

    /// `Err` when the chain as `w` sees it does not reach the head anchor.
    fn guard(&self, w: &Writer<'_>) -> Result<(), LedgerError> {
        let Some(anchor) = &self.anchor else {
            return Ok(());
        };
        match anchor::check(anchor, w.seq, |seq| hash_at(&w.tx, seq))? {
            None => Ok(()),
            Some(problem) => {
                tracing::error!(ledger = %self.path.display(), "{problem}");
                Err(LedgerError::HeadMismatch {
                    path: self.path.clone(),
                    problem,
                })
            }
        }
    }

    /// Starts a write transaction on `conn` (this ledger's connection) and checks the head
    /// anchor inside it: every append goes through here.
    pub(super) fn writer<'c>(&self, conn: &'c mut Connection) -> Result<Writer<'c>, LedgerError> {
        let w = Writer::start(conn)?;
        self.guard(&w)?;
        Ok(w)
    }

    /// Where the ledger lives (`:memory:` for an in-memory one).
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock dropped its transaction, which rolled back: the
        // connection is still consistent.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Commits an intent before a mutating call runs, or answers from the idempotency key.
    ///
    /// Errors: [`LedgerError::IdempotencyConflict`] when the key was used with another input,
    /// [`LedgerError::InFlight`] when the key's first call has not finished in this process.
    ///
    /// Concurrent calls share one transaction and one fsync (group commit, see
    /// [`super::group`]); each still gets its own answer or error.
    pub fn begin(&self, intent: Intent) -> Result<Begin, LedgerError> {
        self.submit_begin(intent)
    }

    /// [`Ledger::begin`] for many intents in one transaction (group commit). All or nothing:
    /// any error leaves the ledger unchanged. A key repeated within the batch is in flight.
    pub fn begin_many(&self, intents: Vec<Intent>) -> Result<Vec<Begin>, LedgerError> {
        let mut inner = self.lock();
        let Inner { conn, in_flight } = &mut *inner;
        let mut w = self.writer(conn)?;
        let mut new_ids = Vec::new();
        let mut answers = Vec::with_capacity(intents.len());
        for intent in intents {
            answers.push(begin_one(&mut w, in_flight, &mut new_ids, intent)?);
        }
        w.commit(self.anchor.as_deref())?;
        self.count_commit();
        in_flight.extend(new_ids);
        Ok(answers)
    }

    /// Records what the call produced. Errors with [`LedgerError::AlreadyCompleted`] if the
    /// receipt already has an outcome; on any error the receipt stays as it was (retry is safe).
    ///
    /// Concurrent calls share one transaction and one fsync, like [`Ledger::begin`].
    pub fn complete(&self, intent: &IntentId, outcome: Completion) -> Result<Receipt, LedgerError> {
        self.submit_complete(intent, outcome)
    }

    /// [`Ledger::complete`] for many intents in one transaction (group commit), all or nothing.
    pub fn complete_many(
        &self,
        items: Vec<(&IntentId, Completion)>,
    ) -> Result<Vec<Receipt>, LedgerError> {
        let mut inner = self.lock();
        let Inner { conn, in_flight } = &mut *inner;
        let mut w = self.writer(conn)?;
        let mut written = Vec::with_capacity(items.len());
        for (intent, outcome) in items {
            written.push(complete_one(&mut w, intent, outcome)?);
        }
        w.commit(self.anchor.as_deref())?;
        self.count_commit();
        let mut receipts = Vec::with_capacity(written.len());
        for (entry, first) in written {
            in_flight.remove(&entry.receipt_id);
            receipts.push(Receipt::from_entry(entry, first)?);
        }
        Ok(receipts)
    }

    /// Forgets that this process is running the call of `intent`, without recording anything:
    /// for a call whose outcome could not be recorded (its caller was dropped, or the outcome
    /// write failed). The receipt stays `unknown` and becomes resolvable, and its idempotency
    /// key replays it instead of being refused as in flight. A no-op once the intent completed.
    pub fn release(&self, intent: &IntentId) {
        self.lock().in_flight.remove(intent.as_str());
    }

    /// Appends a resolution of a pending receipt (or reconciles an unknown one left by a
    /// crash). The earlier entries are untouched; reading the receipt shows the new status.
    pub fn resolve(&self, receipt_id: &str, outcome: Completion) -> Result<Receipt, LedgerError> {
        let mut inner = self.lock();
        let Inner { conn, in_flight } = &mut *inner;
        let mut w = self.writer(conn)?;
        let (latest, first) = latest(&w.tx, receipt_id)?.ok_or_else(|| LedgerError::NotFound {
            id: receipt_id.to_owned(),
        })?;
        if latest.kind == EntryKind::Replay.as_str() {
            return Err(LedgerError::IsReplay {
                id: receipt_id.to_owned(),
                original: latest.detail.unwrap_or_default(),
            });
        }
        let status = status_of(&latest)?;
        match status {
            ReceiptStatus::Unknown if in_flight.contains(receipt_id) => {
                return Err(LedgerError::InFlight {
                    key: latest.idempotency_key,
                    receipt_id: receipt_id.to_owned(),
                });
            }
            ReceiptStatus::Pending | ReceiptStatus::Unknown => {}
            ReceiptStatus::Success | ReceiptStatus::Failed => {
                return Err(LedgerError::NotResolvable {
                    id: receipt_id.to_owned(),
                    status,
                });
            }
        }
        let entry = w.append(follow_up(latest, EntryKind::Resolution, outcome))?;
        w.commit(self.anchor.as_deref())?;
        self.count_commit();
        Receipt::from_entry(entry, first)
    }

    /// Appends an audit entry (plugin loaded or unloaded, grant changed) to the same chain;
    /// concurrent writes share its commit, like [`Ledger::begin`].
    pub fn audit(
        &self,
        kind: AuditKind,
        plugin: &str,
        detail: &str,
    ) -> Result<AuditEntry, LedgerError> {
        self.submit_audit(audit_entry(kind, plugin, detail))
    }

    /// One receipt by id, showing its latest status.
    pub fn get(&self, id: &str) -> Result<Option<Receipt>, LedgerError> {
        let inner = self.lock();
        match latest(&inner.conn, id)? {
            Some((entry, first)) => Receipt::from_entry(entry, first).map(Some),
            None => Ok(None),
        }
    }

    /// Every receipt of a task, in the order the calls started.
    pub fn for_task(&self, task_id: &str) -> Result<Vec<Receipt>, LedgerError> {
        let inner = self.lock();
        query_receipts(
            &inner.conn,
            "WHERE task_id = ?1 AND kind != 'audit'",
            "ASC",
            rusqlite::params![task_id],
        )
    }

    /// The `limit` most recent receipts, oldest first.
    pub fn list(&self, limit: usize) -> Result<Vec<Receipt>, LedgerError> {
        let inner = self.lock();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut newest_first = query_receipts(
            &inner.conn,
            "WHERE kind != 'audit'",
            "DESC LIMIT ?1",
            rusqlite::params![limit],
        )?;
        newest_first.reverse();
        Ok(newest_first)
    }

    /// The `limit` most recent audit entries, oldest first.
    pub fn audit_log(&self, limit: usize) -> Result<Vec<AuditEntry>, LedgerError> {
        let inner = self.lock();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let sql = format!(
            "SELECT {COLUMNS} FROM entries WHERE kind = 'audit' ORDER BY seq DESC LIMIT ?1"
        );
        let mut stmt = inner
            .conn
            .prepare_cached(&sql)
            .map_err(LedgerError::sqlite("read audit entries"))?;
        let rows = stmt
            .query_map([limit], |r| Entry::read(r, 0))
            .map_err(LedgerError::sqlite("read audit entries"))?;
        let mut out = Vec::new();
        for row in rows {
            out.push(AuditEntry::from_entry(
                row.map_err(LedgerError::sqlite("read audit entries"))?,
            )?);
        }
        out.reverse();
        Ok(out)
    }
}

/// Receipts grouped by id, each shown by its latest entry, ordered by their intent's sequence.
fn query_receipts(
    conn: &Connection,
    filter: &str,
    order: &str,
    params: &[&dyn rusqlite::ToSql],
) -> Result<Vec<Receipt>, LedgerError> {
    let sql = format!(
        "WITH r AS (SELECT receipt_id, MIN(seq) AS first, MAX(seq) AS last FROM entries {filter} \
         GROUP BY receipt_id) \
         SELECT r.first, {} FROM r JOIN entries e ON e.seq = r.last ORDER BY r.first {order}",
        COLUMNS
            .split(", ")
            .map(|c| format!("e.{c}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let op = "read receipts";
    let mut stmt = conn.prepare_cached(&sql).map_err(LedgerError::sqlite(op))?;
    let rows = stmt
        .query_map(params, |row| {
            let first: i64 = row.get(0)?;
            // |r| Entry::read(r, 0) reads columns 0.., so read the rest by offset.
            Ok((first, Entry::read(row, 1)?))
        })
        .map_err(LedgerError::sqlite(op))?;
    let mut out = Vec::new();
    for row in rows {
        let (first, entry) = row.map_err(LedgerError::sqlite(op))?;
        out.push(Receipt::from_entry(
            entry,
            u64::try_from(first).unwrap_or(0),
        )?);
    }
    Ok(out)
}

/// The latest non-audit entry of a receipt and the sequence of its first entry.
fn latest(conn: &Connection, id: &str) -> Result<Option<(Entry, u64)>, LedgerError> {
    let op = "read a receipt";
    let sql = format!(
        "SELECT (SELECT MIN(seq) FROM entries WHERE receipt_id = ?1 AND kind != 'audit'), \
         {COLUMNS} FROM entries WHERE receipt_id = ?1 AND kind != 'audit' \
         ORDER BY seq DESC LIMIT 1"
    );
    conn.prepare_cached(&sql)
        .map_err(LedgerError::sqlite(op))?
        .query_row([id], |row| {
            let first: i64 = row.get(0)?;
            Ok((Entry::read(row, 1)?, u64::try_from(first).unwrap_or(0)))
        })
        .optional()
        .map_err(LedgerError::sqlite(op))
}

pub(super) fn status_of(e: &Entry) -> Result<ReceiptStatus, LedgerError> {
    ReceiptStatus::parse(&e.status).ok_or_else(|| LedgerError::Corrupt {
        seq: e.seq,
        reason: format!("status {:?} is not a receipt status", e.status),
    })
}

/// An outcome or resolution entry: the receipt's identity copied from `prev` (so each entry is
/// a complete receipt on its own), the facts from `outcome`.
pub(super) fn follow_up(prev: Entry, kind: EntryKind, outcome: Completion) -> Entry {
    let c = outcome.normalised();
    Entry {
        seq: 0,
        kind: kind.as_str().into(),
        status: ReceiptStatus::from(c.status).as_str().into(),
        external_id: c.external_id,
        verifiable_url: c.verifiable_url,
        preview: c.preview,
        error: c.error,
        time: now_rfc3339(),
        prev_hash: String::new(),
        hash: String::new(),
        ..prev
    }
}

pub(super) fn check_intent(mut i: Intent) -> Result<Intent, LedgerError> {
    let invalid = |field, reason: &str| LedgerError::InvalidIntent {
        field,
        reason: reason.to_owned(),
    };
    if i.task_id.trim().is_empty() {
        return Err(invalid("task_id", "is empty"));
    }
    if i.tool.trim().is_empty() {
        return Err(invalid("tool", "is empty"));
    }
    i.input_sha256.make_ascii_lowercase();
    if i.input_sha256.len() != 64 || !i.input_sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(invalid(
            "input_sha256",
            "must be 64 hex digits (the sha256 of the input)",
        ));
    }
    if let Some(key) = &i.idempotency_key
        && (key.is_empty() || key.len() > MAX_KEY_BYTES)
    {
        return Err(LedgerError::InvalidIntent {
            field: "idempotency_key",
            reason: format!("must be 1..={MAX_KEY_BYTES} bytes, got {}", key.len()),
        });
    }
    check_chain(&i)?;
    Ok(i)
}

/// A chain names at most [`MAX_CHAIN_LEN`] ids, each non-empty, without whitespace and at most
/// [`MAX_CHAIN_ID_BYTES`] bytes, and ends with the intent's own task.
fn check_chain(i: &Intent) -> Result<(), LedgerError> {
    let invalid = |reason: String| LedgerError::InvalidIntent {
        field: "chain",
        reason,
    };
    if i.chain.is_empty() {
        return Ok(());
    }
    if i.chain.len() > MAX_CHAIN_LEN {
        return Err(invalid(format!(
            "names {} task ids; at most {MAX_CHAIN_LEN} are kept",
            i.chain.len()
        )));
    }
    if let Some(bad) = i.chain.iter().find(|id| {
        id.is_empty() || id.len() > MAX_CHAIN_ID_BYTES || id.chars().any(char::is_whitespace)
    }) {
        return Err(invalid(format!(
            "task id {bad:?} must be 1..={MAX_CHAIN_ID_BYTES} bytes without whitespace"
        )));
    }
    if i.chain.last() != Some(&i.task_id) {
        return Err(invalid(format!(
            "must end with the intent's task {:?}",
            i.task_id
        )));
    }
    Ok(())
}

/// A new audit entry, to be linked by [`Writer::append`].
pub(super) fn audit_entry(kind: AuditKind, plugin: &str, detail: &str) -> Entry {
    Entry {
        seq: 0,
        kind: EntryKind::Audit.as_str().into(),
        receipt_id: uuid::Uuid::now_v7().to_string(),
        task_id: String::new(),
        route: String::new(),
        plugin: plugin.to_owned(),
        tool: String::new(),
        receipt_type: String::new(),
        operation: kind.as_str().into(),
        status: String::new(),
        external_id: None,
        verifiable_url: None,
        preview: None,
        error: None,
        time: now_rfc3339(),
        input_sha256: String::new(),
        idempotency_key: None,
        detail: Some(detail.to_owned()),
        chain: None,
        prev_hash: String::new(),
        hash: String::new(),
    }
}

/// The hash of entry `seq`, if there is one.
pub(super) fn hash_at(conn: &Connection, seq: u64) -> Result<Option<String>, LedgerError> {
    let seq = i64::try_from(seq).unwrap_or(i64::MAX);
    conn.prepare_cached("SELECT hash FROM entries WHERE seq = ?1")
        .and_then(|mut s| s.query_row([seq], |r| r.get(0)).optional())
        .map_err(LedgerError::sqlite("read an entry's hash"))
}

/// The last entry's sequence and hash (`None` for an empty ledger).
pub(super) fn head(conn: &Connection) -> Result<Option<Head>, LedgerError> {
    let head: Option<(i64, String)> = conn
        .prepare_cached("SELECT seq, hash FROM entries ORDER BY seq DESC LIMIT 1")
        .and_then(|mut s| s.query_row([], |r| Ok((r.get(0)?, r.get(1)?))).optional())
        .map_err(LedgerError::sqlite("read the chain head"))?;
    Ok(head.map(|(seq, hash)| Head {
        seq: u64::try_from(seq).unwrap_or(0),
        hash,
    }))
}

/// One write transaction and the chain head inside it.
/// One intent of a write transaction: a replay answer (recorded for another task) or a new
/// intent entry, whose id joins `new_ids` (in flight once the transaction commits).
pub(super) fn begin_one(
    w: &mut Writer<'_>,
    in_flight: &HashSet<String>,
    new_ids: &mut Vec<String>,
    intent: Intent,
) -> Result<Begin, LedgerError> {
    let intent = check_intent(intent)?;
    if let Some(replay) = w.replay(&intent, |id| {
        in_flight.contains(id) || new_ids.iter().any(|n| n == id)
    })? {
        let answer = w.record_replay(&intent, replay)?;
        return Ok(Begin::Replay(Box::new(answer)));
    }
    let id = uuid::Uuid::now_v7().to_string();
    w.append(crate::backend::intent_entry(intent, id.clone()))?;
    new_ids.push(id.clone());
    Ok(Begin::Proceed(IntentId(id)))
}

/// One outcome of a write transaction: the outcome entry and the receipt's first entry.
pub(super) fn complete_one(
    w: &mut Writer<'_>,
    intent: &IntentId,
    outcome: Completion,
) -> Result<(Entry, u64), LedgerError> {
    let (latest, first) = latest(&w.tx, intent.as_str())?.ok_or_else(|| LedgerError::NotFound {
        id: intent.0.clone(),
    })?;
    if latest.kind != EntryKind::Intent.as_str() {
        return Err(LedgerError::AlreadyCompleted {
            id: intent.0.clone(),
            status: status_of(&latest)?,
        });
    }
    let entry = w.append(follow_up(latest, EntryKind::Outcome, outcome))?;
    Ok((entry, first))
}

pub(super) struct Writer<'c> {
    pub(super) tx: Transaction<'c>,
    /// The chain head as this transaction sees it.
    pub(super) seq: u64,
    hash: String,
    appended: bool,
}

/// Where a [`Writer`]'s chain head stood, to step back to after a rolled-back savepoint.
pub(super) struct Mark {
    seq: u64,
    hash: String,
    appended: bool,
}

impl Writer<'_> {
    /// The chain head now.
    pub(super) fn mark(&self) -> Mark {
        Mark {
            seq: self.seq,
            hash: self.hash.clone(),
            appended: self.appended,
        }
    }

    /// Back to `mark` (the entries after it were rolled back).
    pub(super) fn reset(&mut self, mark: Mark) {
        self.seq = mark.seq;
        self.hash = mark.hash;
        self.appended = mark.appended;
    }
}

impl<'c> Writer<'c> {
    /// `BEGIN IMMEDIATE` takes the write lock first, so the head read here stays the head.
    pub(super) fn start(conn: &'c mut Connection) -> Result<Writer<'c>, LedgerError> {
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(LedgerError::sqlite("start a write transaction"))?;
        let (seq, hash) = match head(&tx)? {
            Some(Head { seq, hash }) => (seq, hash),
            None => (0, GENESIS.to_owned()),
        };
        Ok(Writer {
            tx,
            seq,
            hash,
            appended: false,
        })
    }

    /// With the same key and input recorded before: the receipt to replay, or an error.
    fn replay(
        &self,
        intent: &Intent,
        in_flight: impl Fn(&str) -> bool,
    ) -> Result<Option<Receipt>, LedgerError> {
        let Some(key) = &intent.idempotency_key else {
            return Ok(None);
        };
        let found: Option<(String, String)> = self
            .tx
            .prepare_cached(
                "SELECT receipt_id, input_sha256 FROM entries \
                 WHERE kind = 'intent' AND tool = ?1 AND idempotency_key = ?2",
            )
            .and_then(|mut s| {
                s.query_row(params![intent.tool, key], |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()
            })
            .map_err(LedgerError::sqlite("look up an idempotency key"))?;
        let Some((receipt_id, input)) = found else {
            return Ok(None);
        };
        if input != intent.input_sha256 {
            tracing::info!(key = %key, tool = %intent.tool, receipt = %receipt_id, "idempotency conflict");
            return Err(LedgerError::IdempotencyConflict {
                key: key.clone(),
                tool: intent.tool.clone(),
                receipt_id,
            });
        }
        let (latest, first) =
            latest(&self.tx, &receipt_id)?.ok_or_else(|| LedgerError::NotFound {
                id: receipt_id.clone(),
            })?;
        if latest.kind == EntryKind::Intent.as_str() && in_flight(&receipt_id) {
            return Err(LedgerError::InFlight {
                key: Some(key.clone()),
                receipt_id,
            });
        }
        tracing::info!(key = %key, tool = %intent.tool, receipt = %receipt_id, "idempotent replay");
        Receipt::from_entry(latest, first).map(Some)
    }

    /// Records that `intent`'s task was answered with `replayed`, unless that task made the
    /// call itself or already has a replay entry for it (one receipt backs one claim). Returns
    /// the receipt that answers for the task: its replay entry (new or earlier), or `replayed`
    /// itself when the task made the call.
    fn record_replay(
        &mut self,
        intent: &Intent,
        replayed: Receipt,
    ) -> Result<Receipt, LedgerError> {
        if replayed.task_id == intent.task_id {
            return Ok(replayed);
        }
        let op = "look up a replay entry";
        let recorded: Option<String> = self
            .tx
            .prepare_cached(
                "SELECT receipt_id FROM entries WHERE kind = 'replay' AND task_id = ?1 \
                 AND detail = ?2 ORDER BY seq LIMIT 1",
            )
            .and_then(|mut s| {
                s.query_row(params![intent.task_id, replayed.id], |r| r.get(0))
                    .optional()
            })
            .map_err(LedgerError::sqlite(op))?;
        if let Some(id) = recorded {
            let (entry, first) = latest(&self.tx, &id)?.ok_or(LedgerError::NotFound { id })?;
            return Receipt::from_entry(entry, first);
        }
        let entry = self.append(crate::backend::replay_entry(intent, replayed))?;
        let seq = entry.seq;
        Receipt::from_entry(entry, seq)
    }

    /// Links `entry` to the head, hashes and inserts it; returns it as stored.
    pub(super) fn append(&mut self, mut entry: Entry) -> Result<Entry, LedgerError> {
        entry.seq = self.seq + 1;
        entry.prev_hash = std::mem::take(&mut self.hash);
        entry.hash = entry.compute_hash();
        let seq = i64::try_from(entry.seq).map_err(|_| LedgerError::Corrupt {
            seq: entry.seq,
            reason: "sequence overflow".into(),
        })?;
        self.tx
            .prepare_cached(&format!(
                "INSERT INTO entries ({COLUMNS}) VALUES \
                 (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, \
                  ?18, ?19, ?20, ?21)"
            ))
            .and_then(|mut s| {
                s.execute(params![
                    seq,
                    entry.kind,
                    entry.receipt_id,
                    entry.task_id,
                    entry.route,
                    entry.plugin,
                    entry.tool,
                    entry.receipt_type,
                    entry.operation,
                    entry.status,
                    entry.external_id,
                    entry.verifiable_url,
                    entry.preview,
                    entry.error,
                    entry.time,
                    entry.input_sha256,
                    entry.idempotency_key,
                    entry.detail,
                    entry.prev_hash,
                    entry.hash,
                    entry.chain,
                ])
            })
            .map_err(LedgerError::sqlite("append an entry"))?;
        self.seq = entry.seq;
        self.hash = entry.hash.clone();
        self.appended = true;
        Ok(entry)
    }

    /// Commits, then moves the head anchor to the new head. The entries are durable once the
    /// commit returns, so a failed anchor write is logged, not returned: an anchor left behind
    /// the database is harmless (see [`super::anchor`]).
    pub(super) fn commit(self, anchor: Option<&Path>) -> Result<(), LedgerError> {
        let head = self.commit_durably()?;
        move_anchor(anchor, head);
        Ok(())
    }

    /// Commits (fsync) and returns the new head when entries were appended, for
    /// [`move_anchor`]: a group commit answers its writers before it moves the anchor.
    pub(super) fn commit_durably(self) -> Result<Option<Head>, LedgerError> {
        self.tx
            .commit()
            .map_err(LedgerError::sqlite("commit (fsync) a write"))?;
        Ok(self.appended.then_some(Head {
            seq: self.seq,
            hash: self.hash,
        }))
    }
}

/// Moves the head anchor at `anchor` to `head` (entries up to it are committed). A failed
/// write is logged, not returned: an anchor left behind the database is harmless (see
/// [`super::anchor`]).
pub(super) fn move_anchor(anchor: Option<&Path>, head: Option<Head>) {
    if let (Some(path), Some(head)) = (anchor, head)
        && let Err(e) = anchor::write(path, &head)
    {
        tracing::error!(anchor = %path.display(), seq = head.seq, "failed to write the head anchor: {e}");
    }
}

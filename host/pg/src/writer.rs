//! [`Writer`]: one write transaction of the PostgreSQL ledger. It locks the chain head (every
//! host's writers queue there, crate docs), links entries after it, and moves the head row in
//! the same transaction. What an entry holds and how it is hashed is
//! [`guild_receipts::backend`]'s; this module decides when the database is asked: statements
//! with typed parameters (one round trip each), entries inserted together before the next read
//! and before the commit, and the latest entries of a group's receipts read in one query.

use std::collections::{HashMap, HashSet};

use guild_receipts::backend::{self, Entry};
use guild_receipts::{Begin, Completion, EntryKind, Intent, LedgerError, Receipt};
use postgres::types::{ToSql, Type};

use crate::flight;
use crate::ledger::{COLUMNS, entry, latest, pg, seq_of, seq_param, text};

type Result<T> = std::result::Result<T, LedgerError>;

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
        let (writer, problem) = Writer::start_unchecked(c)?;
        if let Some(problem) = problem {
            tracing::error!(target, "{problem}");
            return Err(LedgerError::HeadMismatch {
                path: format!("postgres:{target}").into(),
                problem,
            });
        }
        Ok(writer)
    }

    /// [`Writer::start`] without the refusal: appends link after the last entry there is, and
    /// the second value says how it differs from the head row, if it does. Only the
    /// operator's acceptance of the ledger as it is ([`crate::PgLedgerStore`]'s
    /// `accept_head`) writes past such a difference.
    pub(crate) fn start_unchecked(
        c: &'c mut postgres::Client,
    ) -> Result<(Writer<'c>, Option<String>)> {
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
        let problem = (found != (seq, hash.clone())).then(|| {
            format!(
                "the last entry is {} (hash {}), but the ledger_head row records entry {seq} \
                 (hash {hash}): entries were removed or added outside Guild",
                found.0, found.1
            )
        });
        let (seq, hash) = found;
        let writer = Writer {
            tx,
            seq,
            hash,
            appended: false,
            unwritten: Vec::new(),
            known: HashMap::new(),
        };
        Ok((writer, problem))
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
    pub(crate) fn reads(&mut self) -> Result<&mut postgres::Transaction<'c>> {
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

    /// Marks the intents `ids`, appended in this transaction, as running on this connection
    /// ([`flight`]): from the commit on, another host's replay of their keys is refused as in
    /// flight. The marks outlive the transaction: if it fails, release them ([`flight::let_go`]).
    pub(crate) fn hold(&mut self, ids: &[String]) -> Result<()> {
        flight::hold(self.reads()?, ids)
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
        if latest.kind == EntryKind::Intent.as_str()
            && (in_flight(&receipt_id) || flight::elsewhere(self.reads()?, &receipt_id)?)
        {
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

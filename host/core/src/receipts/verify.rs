//! [`Ledger::verify`]: walks the chain and reports the first entry that does not check out.
//!
//! Checks, in order, for each entry: its sequence follows the previous one (a gap means a
//! deleted entry); its hash matches its content (an edited field, or an entry moved to another
//! sequence); its `prev_hash` is the previous entry's hash (reordered or spliced entries); and
//! it makes sense where it stands (an outcome follows an intent, a resolution follows a pending
//! or unknown state, ids are not reused).

use std::collections::HashMap;

use super::chain::{COLUMNS, Entry, GENESIS};
use super::model::{EntryKind, ReceiptStatus, VerifyReport};
use super::{Ledger, LedgerError};

impl Ledger {
    /// Verifies the whole chain. `Ok` with `ok: false` means tampering was found; `Err` means
    /// the ledger could not be read at all.
    pub fn verify(&self) -> Result<VerifyReport, LedgerError> {
        let op = "read entries for verification";
        let inner = self.lock();
        let mut stmt = inner
            .conn
            .prepare(&format!("SELECT {COLUMNS} FROM entries ORDER BY seq"))
            .map_err(LedgerError::sqlite(op))?;
        let mut rows = stmt.query([]).map_err(LedgerError::sqlite(op))?;
        let mut walk = Walk::default();
        loop {
            let next = match rows.next() {
                Ok(Some(row)) => Entry::read(row, 0),
                Ok(None) => break,
                Err(e) => return Err(LedgerError::Sqlite { op, source: e }),
            };
            let expected = walk.entries + 1;
            let problem = match next {
                Ok(entry) => walk.check(entry),
                Err(e) => Some((expected, format!("the entry cannot be read: {e}"))),
            };
            if let Some((seq, reason)) = problem {
                return Ok(VerifyReport {
                    ok: false,
                    entries: walk.entries,
                    first_bad_sequence: Some(seq),
                    reason: Some(reason),
                    head_hash: walk.head_hash(),
                });
            }
        }
        Ok(VerifyReport {
            ok: true,
            entries: walk.entries,
            first_bad_sequence: None,
            reason: None,
            head_hash: walk.head_hash(),
        })
    }
}

/// State carried along the chain.
#[derive(Default)]
struct Walk {
    entries: u64,
    prev_hash: Option<String>,
    /// Latest kind and status of every receipt id seen (audit ids included, to catch reuse).
    seen: HashMap<String, (EntryKind, Option<ReceiptStatus>)>,
}

impl Walk {
    fn head_hash(&self) -> String {
        self.prev_hash.clone().unwrap_or_else(|| GENESIS.to_owned())
    }

    /// Checks one entry; on success it becomes the head.
    fn check(&mut self, e: Entry) -> Option<(u64, String)> {
        let expected = self.entries + 1;
        if e.seq != expected {
            return Some((
                expected,
                format!(
                    "entry {expected} is missing (the next entry has sequence {}): an entry was \
                     deleted or renumbered",
                    e.seq
                ),
            ));
        }
        let bad = |reason: String| Some((e.seq, reason));
        if e.compute_hash() != e.hash {
            return bad(
                "its hash does not match its content: a field was edited or the entry was moved"
                    .into(),
            );
        }
        let prev = self.head_hash();
        if e.prev_hash != prev {
            return bad(format!(
                "its prev_hash does not match entry {}'s hash: entries were reordered, removed \
                 or spliced in",
                self.entries
            ));
        }
        if let Some(reason) = self.structure(&e) {
            return bad(reason);
        }
        self.entries = e.seq;
        self.prev_hash = Some(e.hash);
        None
    }

    /// Whether the entry makes sense after what came before it.
    fn structure(&mut self, e: &Entry) -> Option<String> {
        let Some(kind) = EntryKind::parse(&e.kind) else {
            return Some(format!("unknown entry kind {:?}", e.kind));
        };
        let status = ReceiptStatus::parse(&e.status);
        if kind != EntryKind::Audit && status.is_none() {
            return Some(format!("unknown receipt status {:?}", e.status));
        }
        let before = self.seen.get(&e.receipt_id).copied();
        let fits = match (kind, before) {
            (EntryKind::Intent | EntryKind::Audit, None) => true,
            (EntryKind::Intent | EntryKind::Audit, Some(_)) => {
                return Some(format!("id {} is used twice", e.receipt_id));
            }
            (EntryKind::Outcome, Some((EntryKind::Intent, _))) => true,
            (
                EntryKind::Resolution,
                Some((_, Some(ReceiptStatus::Pending | ReceiptStatus::Unknown))),
            ) => true,
            _ => false,
        };
        if !fits {
            return Some(format!(
                "{} entry for receipt {} does not follow an intent or a pending state",
                kind.as_str(),
                e.receipt_id
            ));
        }
        self.seen.insert(e.receipt_id.clone(), (kind, status));
        None
    }
}

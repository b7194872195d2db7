//! [`Ledger::verify`]: walks the chain and reports the first entry that does not check out.
//!
//! Checks, in order, for each entry: its sequence follows the previous one (a gap means a
//! deleted entry); its hash matches its content (an edited field, or an entry moved to another
//! sequence); its `prev_hash` is the previous entry's hash (reordered or spliced entries); and
//! it makes sense where it stands (an outcome follows an intent, a resolution follows a pending
//! or unknown state, ids are not reused). Then, if a head anchor exists, that the chain still
//! reaches the entry it records with the hash it records (a truncated tail, or a database
//! replaced by an older copy, does not).

use std::collections::HashMap;

use super::anchor::{self, Head};
use super::chain::{COLUMNS, Entry, GENESIS};
use super::model::{EntryKind, ReceiptStatus, VerifyReport};
use super::{DbFileError, Ledger, LedgerError};

impl Ledger {
    /// Verifies the whole chain. `Ok` with `ok: false` means tampering was found; `Err` means
    /// the ledger could not be read at all.
    pub fn verify(&self) -> Result<VerifyReport, LedgerError> {
        let op = "read entries for verification";
        let inner = self.lock();
        // Read under the lock: this process moves the anchor only while holding it.
        let anchor = match &self.anchor {
            Some(path) => match anchor::read(path) {
                Ok(head) => head,
                Err(why) => {
                    return Ok(VerifyReport {
                        ok: false,
                        entries: 0,
                        first_bad_sequence: None,
                        reason: Some(format!(
                            "the head anchor {} is unreadable ({why}): if the machine lost power \
                             while it was written, accept the ledger as it is with `guild \
                             receipts accept-head`; otherwise the ledger's files were tampered \
                             with",
                            path.display()
                        )),
                        head_hash: String::new(),
                        anchored_sequence: None,
                    });
                }
            },
            None => None,
        };
        let mut walk = Walk {
            anchor_seq: anchor.as_ref().map(|h| h.seq),
            ..Walk::default()
        };
        let mut stmt = inner
            .conn
            .prepare(&format!("SELECT {COLUMNS} FROM entries ORDER BY seq"))
            .map_err(LedgerError::sqlite(op))?;
        let mut rows = stmt.query([]).map_err(LedgerError::sqlite(op))?;
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
                    anchored_sequence: walk.anchor_seq,
                });
            }
        }
        let problem = match (anchor, &self.anchor) {
            (Some(head), file) => walk.reaches(&head, file.as_deref()),
            // Written before the first entry and only ever replaced: gone means deleted.
            (None, Some(file)) if walk.entries > 0 && !self.legacy => {
                Some((walk.entries + 1, anchor::missing(file, walk.entries)))
            }
            (None, _) => None,
        };
        Ok(VerifyReport {
            ok: problem.is_none(),
            entries: walk.entries,
            first_bad_sequence: problem.as_ref().map(|p| p.0),
            reason: problem.map(|p| p.1),
            head_hash: walk.head_hash(),
            anchored_sequence: walk.anchor_seq,
        })
    }
}

/// State carried along the chain.
#[derive(Default)]
pub(crate) struct Walk {
    entries: u64,
    prev_hash: Option<String>,
    /// Latest kind and status of every receipt id seen (audit ids included, to catch reuse).
    seen: HashMap<String, (EntryKind, Option<ReceiptStatus>)>,
    /// The sequence the head anchor records, and the hash found there.
    anchor_seq: Option<u64>,
    hash_at_anchor: Option<String>,
}

impl Walk {
    /// A walk that notes the hash of entry `anchor_seq` on its way.
    pub(crate) fn anchored_at(anchor_seq: Option<u64>) -> Walk {
        Walk {
            anchor_seq,
            ..Walk::default()
        }
    }

    /// The last sequence checked.
    pub(crate) fn entries(&self) -> u64 {
        self.entries
    }

    /// The hash found at the anchor's sequence, once the walk passed it.
    pub(crate) fn hash_at_anchor(&self) -> Option<&str> {
        self.hash_at_anchor.as_deref()
    }

    pub(crate) fn head_hash(&self) -> String {
        self.prev_hash.clone().unwrap_or_else(|| GENESIS.to_owned())
    }

    /// Checks one entry; on success it becomes the head.
    pub(crate) fn check(&mut self, e: Entry) -> Option<(u64, String)> {
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
        if self.anchor_seq == Some(e.seq) {
            self.hash_at_anchor = Some(e.hash.clone());
        }
        self.entries = e.seq;
        self.prev_hash = Some(e.hash);
        None
    }

    /// After a clean walk: whether the chain still holds the entry the anchor records.
    fn reaches(&self, head: &Head, file: Option<&std::path::Path>) -> Option<(u64, String)> {
        let file = file.unwrap_or(std::path::Path::new(""));
        anchor::compare(head, self.entries, self.hash_at_anchor.as_deref(), file)
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
            (EntryKind::Intent | EntryKind::Audit | EntryKind::Replay, None) => true,
            (EntryKind::Intent | EntryKind::Audit | EntryKind::Replay, Some(_)) => {
                return Some(format!("id {} is used twice", e.receipt_id));
            }
            (EntryKind::Outcome, Some((EntryKind::Intent, _))) => true,
            (
                EntryKind::Resolution,
                Some((prev, Some(ReceiptStatus::Pending | ReceiptStatus::Unknown))),
            ) => prev != EntryKind::Replay,
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

/// Verifies the ledger file at `path` without writing anything (read-only open). A missing
/// file is an empty ledger, unless its head anchor is still there: then it was deleted.
pub fn verify_file(path: &std::path::Path) -> Result<VerifyReport, LedgerError> {
    match Ledger::open_read_only(path) {
        Ok(ledger) => return ledger.verify(),
        Err(LedgerError::File(DbFileError::Missing { .. })) => {}
        Err(e) => return Err(e),
    }
    let anchor_path = anchor::path_for(path);
    let problem = match anchor::read(&anchor_path) {
        Ok(None) | Ok(Some(Head { seq: 0, .. })) => None,
        Ok(Some(head)) => Some(format!(
            "the ledger file {} is missing, but its head anchor {} records entry {}: the \
             ledger was deleted",
            path.display(),
            anchor_path.display(),
            head.seq
        )),
        Err(why) => Some(format!(
            "the ledger file {} is missing and its head anchor {} is unreadable ({why})",
            path.display(),
            anchor_path.display()
        )),
    };
    Ok(VerifyReport {
        ok: problem.is_none(),
        entries: 0,
        first_bad_sequence: problem.as_ref().map(|_| 1),
        reason: problem,
        head_hash: GENESIS.to_owned(),
        anchored_sequence: None,
    })
}

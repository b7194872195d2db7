//! [`Ledger::accept_head_of_file`]: the operator's deliberate acceptance of a ledger that no
//! longer reaches its head anchor (what `guild receipts accept-head` runs; other backends offer
//! the same through [`crate::LedgerStore::accept_head`]).
//!
//! A ledger refused for writing ([`LedgerError::HeadMismatch`]) stays refused until someone
//! decides that the entries past its end are gone for a reason they know (a backup restored on
//! purpose, a power loss that emptied the anchor). Accepting does not hide what happened: the
//! finding is appended as a `head_accepted` audit entry, then the anchor moves to that entry,
//! so the audit log ([`Ledger::audit_log`]) and anyone holding an earlier head hash still see
//! it.

use std::path::Path;

use super::LedgerError;
use super::anchor::{self, Head};
use super::ledger::{Ledger, Writer, hash_at};
use super::model::AuditEntry;

impl Ledger {
    /// Accepts the ledger file at `path` as it is now, if it no longer reaches its head anchor:
    /// appends a [`crate::AuditKind::HeadAccepted`] entry saying what was found and moves the anchor
    /// to it. `Ok(None)` when the ledger reaches its anchor (nothing is written). The hash
    /// chain itself is not repaired: `verify` still reports an edited or reordered entry.
    pub fn accept_head_of_file(path: impl AsRef<Path>) -> Result<Option<AuditEntry>, LedgerError> {
        let (ledger, _) = Ledger::open_for_writing(path.as_ref())?;
        ledger.accept_current_head()
    }

    /// [`Ledger::accept_head_of_file`] on a ledger already open (a ledger in memory has no
    /// anchor: nothing to accept).
    pub(crate) fn accept_current_head(&self) -> Result<Option<AuditEntry>, LedgerError> {
        let Some(anchor) = self.anchor.clone() else {
            return Ok(None);
        };
        let mut inner = self.lock();
        // Unchecked on purpose: this is the one write that may go past a mismatched anchor.
        let mut w = Writer::start(&mut inner.conn)?;
        let Some(problem) = anchor::check(&anchor, w.seq, |seq| hash_at(&w.tx, seq))? else {
            return Ok(None);
        };
        let entry = w.append(super::backend::head_accepted_entry(&problem))?;
        w.commit(None)?;
        let head = Head {
            seq: entry.seq,
            hash: entry.hash.clone(),
        };
        anchor::write(&anchor, &head).map_err(|source| LedgerError::AnchorWrite {
            path: anchor.clone(),
            source,
        })?;
        tracing::warn!(ledger = %self.path().display(), seq = head.seq, "{}", entry.detail.as_deref().unwrap_or_default());
        AuditEntry::from_entry(entry).map(Some)
    }
}

//! Building blocks for ledger backends outside this crate (PostgreSQL in `guild-pg`,
//! docs/postgres.md): the entry row and its hash, the entries an intent, an outcome, a replay or
//! an audit becomes, reading entries back as receipts, and the chain walk of `verify`. A backend
//! stores, locks and looks entries up; what an entry holds and how it is hashed stays here, so
//! every backend writes the same chain and `verify` reads them all alike.

use super::anchor::{self, Head};
use super::chain::now_rfc3339;
use super::ledger;
use super::verify::Walk;
use super::{
    AuditEntry, AuditKind, Completion, EntryKind, Intent, IntentId, LedgerError, Receipt,
    ReceiptStatus, VerifyReport,
};

pub use super::chain::{Entry, GENESIS};

/// The intent checked and normalised as every backend must before recording it (non-empty task
/// and tool, a 64-hex-digit input hash, a key of 1..=256 bytes).
pub fn validate_intent(intent: Intent) -> Result<Intent, LedgerError> {
    ledger::check_intent(intent)
}

/// The intent entry of a new receipt `id` (not yet linked: see [`link`]).
pub fn intent_entry(intent: Intent, id: String) -> Entry {
    Entry {
        seq: 0,
        kind: EntryKind::Intent.as_str().into(),
        receipt_id: id,
        task_id: intent.task_id,
        route: intent.route,
        plugin: intent.plugin,
        tool: intent.tool,
        receipt_type: intent.receipt_type,
        operation: intent.operation,
        status: ReceiptStatus::Unknown.as_str().into(),
        external_id: None,
        verifiable_url: None,
        preview: None,
        error: None,
        time: now_rfc3339(),
        input_sha256: intent.input_sha256,
        idempotency_key: intent.idempotency_key,
        detail: None,
        chain: chain_text(&intent.chain),
        prev_hash: String::new(),
        hash: String::new(),
    }
}

/// The stored form of a chain (ids joined by [`super::chain::CHAIN_SEPARATOR`]); `None` for
/// a top-level task.
fn chain_text(chain: &[String]) -> Option<String> {
    match chain {
        [] => None,
        ids => Some(ids.join(&super::chain::CHAIN_SEPARATOR.to_string())),
    }
}

/// An outcome ([`EntryKind::Outcome`]) or resolution entry following `latest`, the receipt's
/// latest entry: its identity copied, its facts from `outcome` (normalised).
pub fn follow_up(latest: Entry, kind: EntryKind, outcome: Completion) -> Entry {
    ledger::follow_up(latest, kind, outcome)
}

/// The replay entry recording that `intent`'s task was answered with `replayed` (a receipt of
/// another task): a new receipt id copying the replayed facts and naming it in `detail`.
pub fn replay_entry(intent: &Intent, replayed: Receipt) -> Entry {
    Entry {
        seq: 0,
        kind: EntryKind::Replay.as_str().into(),
        receipt_id: uuid::Uuid::now_v7().to_string(),
        task_id: intent.task_id.clone(),
        route: intent.route.clone(),
        plugin: replayed.plugin,
        tool: replayed.tool,
        receipt_type: replayed.receipt_type,
        operation: replayed.operation,
        status: replayed.status.as_str().into(),
        external_id: replayed.external_id,
        verifiable_url: replayed.verifiable_url,
        preview: replayed.preview,
        error: replayed.error,
        time: now_rfc3339(),
        input_sha256: intent.input_sha256.clone(),
        idempotency_key: intent.idempotency_key.clone(),
        detail: Some(replayed.id),
        chain: chain_text(&intent.chain),
        prev_hash: String::new(),
        hash: String::new(),
    }
}

/// The head-accepted audit entry of an operator's acceptance of a ledger that no longer
/// reaches its head anchor, saying what was found (not yet linked).
pub fn head_accepted_entry(problem: &str) -> Entry {
    ledger::audit_entry(
        AuditKind::HeadAccepted,
        "operator",
        &format!("accepted the ledger as it was: {problem}"),
    )
}

/// A new audit entry (not yet linked).
pub fn audit_entry(kind: AuditKind, plugin: &str, detail: &str) -> Entry {
    ledger::audit_entry(kind, plugin, detail)
}

/// Links `entry` after the head (`head_seq`, `head_hash`) and computes its hash.
pub fn link(entry: &mut Entry, head_seq: u64, head_hash: &str) {
    entry.seq = head_seq + 1;
    entry.prev_hash = head_hash.to_owned();
    entry.hash = entry.compute_hash();
}

/// The receipt shown by its latest entry `latest`, whose intent has sequence `first`.
pub fn receipt(latest: Entry, first: u64) -> Result<Receipt, LedgerError> {
    Receipt::from_entry(latest, first)
}

/// An audit entry as read back.
pub fn audit(entry: Entry) -> Result<AuditEntry, LedgerError> {
    AuditEntry::from_entry(entry)
}

/// The handle of a committed intent.
pub fn intent_id(receipt_id: String) -> IntentId {
    IntentId(receipt_id)
}

/// The status an entry records.
pub fn status_of(entry: &Entry) -> Result<ReceiptStatus, LedgerError> {
    ledger::status_of(entry)
}

/// The checks of `verify`, one entry at a time in sequence order, then against a head the
/// backend keeps (its anchor).
pub struct ChainWalk {
    walk: Walk,
    head: Option<Head>,
}

impl ChainWalk {
    /// A walk that will compare the chain with `head` (sequence and hash), if the backend
    /// keeps one.
    pub fn new(head: Option<(u64, String)>) -> ChainWalk {
        let head = head.map(|(seq, hash)| Head { seq, hash });
        ChainWalk {
            walk: Walk::anchored_at(head.as_ref().map(|h| h.seq)),
            head,
        }
    }

    /// Checks the next entry: `Some((sequence, why))` for the first that does not check out.
    pub fn check(&mut self, entry: Entry) -> Option<(u64, String)> {
        self.walk.check(entry)
    }

    /// The report after the last entry, or after the first bad one (`bad`). `anchor_name`
    /// names where the backend keeps its head, for the messages.
    pub fn report(self, bad: Option<(u64, String)>, anchor_name: &str) -> VerifyReport {
        let problem = bad.or_else(|| {
            self.head.as_ref().and_then(|head| {
                anchor::compare(
                    head,
                    self.walk.entries(),
                    self.walk.hash_at_anchor(),
                    std::path::Path::new(anchor_name),
                )
            })
        });
        VerifyReport {
            ok: problem.is_none(),
            entries: self.walk.entries(),
            first_bad_sequence: problem.as_ref().map(|p| p.0),
            reason: problem.map(|p| p.1),
            head_hash: self.walk.head_hash(),
            anchored_sequence: self.head.map(|h| h.seq),
        }
    }
}

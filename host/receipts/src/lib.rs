//! The receipts ledger (docs/receipts-and-validation.md): what the host records about every mutating tool call, and
//! the audit trail of plugin loads, unloads and grant changes.
//!
//! # Model
//! The ledger is one append-only, hash-chained table of *entries*. A receipt is the sequence of
//! entries that share its id:
//! 1. an **intent** ([`Ledger::begin`]), committed before the connector runs; until something
//!    follows it the receipt reads as [`ReceiptStatus::Unknown`] — a crash between intent and
//!    outcome is visible as unknown, never as success;
//! 2. an **outcome** ([`Ledger::complete`]): success, pending or failed;
//! 3. zero or more **resolutions** ([`Ledger::resolve`]) of a pending (or unknown) receipt.
//!
//! Reading a receipt ([`Ledger::get`], [`Ledger::for_task`], [`Ledger::list`]) shows its latest
//! entry. Nothing is ever edited in place: `UPDATE` and `DELETE` are refused by triggers.
//!
//! # Durability and concurrency
//! SQLite in WAL mode with `synchronous=FULL`: a call that returned `Ok` has been fsynced, so an
//! acknowledged receipt survives a crash of the process and a power loss. A [`Ledger`] owns one
//! connection behind a mutex (a single writer; reads share it): every write is one
//! `BEGIN IMMEDIATE` transaction that reads the chain head inside the transaction, so even a
//! second process writing the same file extends the chain correctly. The API is synchronous;
//! async callers use `spawn_blocking`. [`Ledger::begin_many`] and [`Ledger::complete_many`]
//! commit N entries in one transaction (group commit: one fsync instead of N); concurrent
//! single writes are grouped the same way on their own, and an outcome can be queued now and
//! waited for later ([`Ledger::complete_queued`], [`Ledger::wait`]).
//!
//! # Tamper evidence
//! Each entry's hash covers every field, its sequence and the previous hash, so
//! [`Ledger::verify`] finds the first edited, deleted or moved entry. A chain alone cannot
//! show a truncated tail, so the sequence and hash of the last committed entry are also kept
//! outside the database, in a head anchor file beside it (`receipts.head`): verify reports a
//! ledger that no longer reaches it, and no write is made to such a ledger until the operator
//! accepts it ([`Ledger::accept_head_of_file`], `guild receipts accept-head`). Neither detects a chain
//! recomputed from scratch together with its anchor (there is no secret): operators who need
//! that record [`VerifyReport::head_hash`] elsewhere and compare.
//!
//! # The file
//! A ledger file is marked as one (`PRAGMA application_id` = [`APPLICATION_ID`], schema version
//! in `user_version`); an empty file or another application's database is refused, never
//! adopted ([`dbfile`]). [`Ledger::open_read_only`] reads and verifies without writing.
//!
//! # Other backends
//! [`LedgerStore`] is the ledger's contract as a trait; [`conformance::run`] checks that a
//! backend keeps it (the SQLite ledger runs it in its tests). [`backend`] holds what every
//! backend shares: the entry, its hash, and the checks of `verify`.

mod accept;
mod anchor;
#[cfg(test)]
mod anchor_tests;
pub mod backend;
mod chain;
mod group;
mod ledger;
mod model;
mod schema;
mod store;
mod verify;

#[cfg(test)]
mod file_tests;
#[cfg(test)]
mod tests;

use std::path::PathBuf;

use thiserror::Error;

pub use group::QueuedOutcome;
pub use guild_store::DbFileError;
pub use ledger::{Ledger, MAX_CHAIN_LEN};
pub use schema::APPLICATION_ID;
pub use store::{LedgerStore, QueuedWrite, conformance};
pub use verify::verify_file;

/// File name of the ledger in the host's data dir (its head anchor is `receipts.head`).
pub const LEDGER_FILE: &str = "receipts.db";
pub use model::{
    AuditEntry, AuditKind, Begin, Completion, EntryKind, Intent, IntentId, PREVIEW_MAX_CHARS,
    Receipt, ReceiptStatus, VerifyReport,
};

/// What went wrong with the receipts ledger.
#[derive(Debug, Error)]
pub enum LedgerError {
    /// The database could not be opened or prepared.
    #[error("failed to open the receipts ledger at {}: {what}: {source}", path.display())]
    Open {
        /// The ledger file (`:memory:` for an in-memory ledger).
        path: PathBuf,
        /// Which step failed.
        what: &'static str,
        /// The SQLite error.
        source: rusqlite::Error,
    },
    /// The file is missing (read-only open), empty, not SQLite, not a Guild ledger, or of a
    /// schema version this build does not read.
    #[error(transparent)]
    File(#[from] DbFileError),
    /// A read or write failed.
    #[error("receipts ledger: failed to {op}: {source}")]
    Sqlite {
        /// What the ledger was doing.
        op: &'static str,
        /// The SQLite error.
        source: rusqlite::Error,
    },
    /// A read or write of another backend (PostgreSQL) failed.
    #[error("receipts ledger ({backend}): failed to {op}: {reason}")]
    Backend {
        /// Which backend.
        backend: &'static str,
        /// What the ledger was doing.
        op: &'static str,
        /// The backend's error, in full.
        reason: String,
    },
    /// An intent with a missing or malformed field.
    #[error("invalid receipt intent: `{field}` {reason}")]
    InvalidIntent {
        /// The field.
        field: &'static str,
        /// What was expected.
        reason: String,
    },
    /// The idempotency key was first used with a different input.
    #[error(
        "idempotency key {key:?} for tool '{tool}' was first used with a different input \
         (receipt {receipt_id}); use a new key for a different call"
    )]
    IdempotencyConflict {
        /// The key.
        key: String,
        /// The tool the key is scoped to.
        tool: String,
        /// The receipt recorded under the key.
        receipt_id: String,
    },
    /// The first call with this idempotency key (or this receipt) has not finished yet.
    #[error(
        "the call recorded as receipt {receipt_id} (idempotency key {key:?}) is still in flight; \
         wait for its outcome instead of calling again"
    )]
    InFlight {
        /// The key, if the call carried one.
        key: Option<String>,
        /// The in-flight receipt.
        receipt_id: String,
    },
    /// No receipt has this id.
    #[error("no receipt with id {id}")]
    NotFound {
        /// The id asked for.
        id: String,
    },
    /// `complete` on a receipt that already has an outcome.
    #[error("receipt {id} already has an outcome ({status}); record later news with `resolve`")]
    AlreadyCompleted {
        /// The receipt.
        id: String,
        /// Its status.
        status: ReceiptStatus,
    },
    /// `resolve` on a receipt that is not pending or unknown.
    #[error("receipt {id} is {status}: only pending or unknown receipts can be resolved")]
    NotResolvable {
        /// The receipt.
        id: String,
        /// Its status.
        status: ReceiptStatus,
    },
    /// `resolve` on a replay entry, which only copies another receipt.
    #[error(
        "receipt {id} records a replay of receipt {original} in another task; resolve {original} \
         instead"
    )]
    IsReplay {
        /// The replay receipt.
        id: String,
        /// The receipt it replayed.
        original: String,
    },
    /// The shared transaction of a group commit failed after this write was staged in it: the
    /// write is not recorded (nothing of the group is).
    #[error("receipts ledger: failed to commit a group of {writes} concurrent writes: {reason}")]
    GroupCommit {
        /// How many writes shared the transaction.
        writes: usize,
        /// What failed.
        reason: String,
    },
    /// The ledger no longer reaches the entry its head anchor records (a truncated tail, an
    /// older copy, a deleted or unreadable anchor): nothing is written to it until the
    /// operator accepts it with `guild receipts accept-head` ([`Ledger::accept_head_of_file`]).
    #[error(
        "refusing to write to the receipts ledger {}: {problem}. Nothing was written. \
         `guild receipts verify` shows the same finding. If you know why (a backup restored on \
         purpose, a power loss), accept the ledger as it is now with `guild receipts \
         accept-head`: it records what was found as an audit entry and moves the anchor. \
         Otherwise restore the missing entries from a backup",
        path.display()
    )]
    HeadMismatch {
        /// The ledger file.
        path: PathBuf,
        /// What was found.
        problem: String,
    },
    /// The head anchor could not be written where it had to be (accepting a head).
    #[error("failed to write the head anchor {}: {source}", path.display())]
    AnchorWrite {
        /// The anchor file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A stored entry that cannot be read back (tampering or a bug).
    #[error("receipts ledger entry {seq} is unreadable: {reason}; run `guild receipts verify`")]
    Corrupt {
        /// Its sequence.
        seq: u64,
        /// What is wrong.
        reason: String,
    },
}

impl LedgerError {
    fn sqlite(op: &'static str) -> impl FnOnce(rusqlite::Error) -> LedgerError {
        move |source| LedgerError::Sqlite { op, source }
    }
}

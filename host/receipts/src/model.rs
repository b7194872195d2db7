//! Public types of the ledger: what callers hand in ([`Intent`], [`Completion`]) and what they
//! read back ([`Receipt`], [`AuditEntry`], [`VerifyReport`]).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::LedgerError;
use super::chain::{Entry, truncate_chars};
use guild_core::types::{CallStatus, ToolOutcome};

/// Longest preview kept, in characters (longer ones are cut on a character boundary).
pub const PREVIEW_MAX_CHARS: usize = 200;

/// What the host knows before a mutating call runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Intent {
    /// The task the call belongs to.
    pub task_id: String,
    /// The specialist that made the call.
    pub route: String,
    /// `connector@version` that will serve it.
    pub plugin: String,
    /// `connector.tool`.
    pub tool: String,
    /// Receipt type from the tool spec (e.g. `issue`).
    pub receipt_type: String,
    /// Receipt operation from the tool spec (e.g. `create`).
    pub operation: String,
    /// Lowercase hex sha256 of the input document.
    pub input_sha256: String,
    /// Idempotency key, scoped to `tool`: the same key and input replay the recorded outcome.
    pub idempotency_key: Option<String>,
    /// For a task in a delegation tree: its chain, the root task's id first and this task's
    /// last (at most [`super::MAX_CHAIN_LEN`] ids); empty for a top-level task. It is part of
    /// every entry's hash (docs/delegation.md#receipts).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chain: Vec<String>,
}

/// What a call produced, as recorded in an outcome or resolution entry.
///
/// The ledger normalises it rather than refusing a fact: a failure without an error message
/// gets one saying so, `error` is dropped unless the status is failed, and the preview is cut
/// to [`PREVIEW_MAX_CHARS`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Completion {
    /// success, pending or failed.
    pub status: CallStatus,
    /// Id in the external system.
    pub external_id: Option<String>,
    /// Where the effect can be checked.
    pub verifiable_url: Option<String>,
    /// Short preview.
    pub preview: Option<String>,
    /// Verbatim error (kept only when failed).
    pub error: Option<String>,
}

impl Completion {
    /// A failure the host observed itself (trap, timeout, limit), with its message verbatim.
    pub fn failed(error: impl Into<String>) -> Completion {
        Completion {
            status: CallStatus::Failed,
            external_id: None,
            verifiable_url: None,
            preview: None,
            error: Some(error.into()),
        }
    }

    pub(crate) fn normalised(mut self) -> Completion {
        match self.status {
            CallStatus::Failed if self.error.as_deref().is_none_or(|e| e.trim().is_empty()) => {
                self.error = Some("the connector reported failure without an error message".into());
            }
            CallStatus::Failed => {}
            CallStatus::Success | CallStatus::Pending => self.error = None,
        }
        if let Some(p) = &self.preview {
            self.preview = Some(truncate_chars(p, PREVIEW_MAX_CHARS).to_owned());
        }
        self
    }
}

impl From<&ToolOutcome> for Completion {
    fn from(o: &ToolOutcome) -> Completion {
        Completion {
            status: o.status,
            external_id: o.external_id.clone(),
            verifiable_url: o.verifiable_url.clone(),
            preview: o.preview.clone(),
            error: o.error.clone(),
        }
    }
}

/// Status of a receipt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReceiptStatus {
    /// Committed in the external system.
    Success,
    /// Started, not finished; a later entry resolves it. Never re-dispatch hoping it completes.
    Pending,
    /// Did not happen; the error is verbatim. Do not retry unless the user asks.
    Failed,
    /// An intent with no outcome: the host stopped during the call. Reconcile; do not retry.
    Unknown,
}

impl ReceiptStatus {
    /// The stored and displayed name.
    pub fn as_str(self) -> &'static str {
        match self {
            ReceiptStatus::Success => "success",
            ReceiptStatus::Pending => "pending",
            ReceiptStatus::Failed => "failed",
            ReceiptStatus::Unknown => "unknown",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<ReceiptStatus> {
        Some(match s {
            "success" => ReceiptStatus::Success,
            "pending" => ReceiptStatus::Pending,
            "failed" => ReceiptStatus::Failed,
            "unknown" => ReceiptStatus::Unknown,
            _ => return None,
        })
    }
}

impl From<CallStatus> for ReceiptStatus {
    fn from(s: CallStatus) -> ReceiptStatus {
        match s {
            CallStatus::Success => ReceiptStatus::Success,
            CallStatus::Pending => ReceiptStatus::Pending,
            CallStatus::Failed => ReceiptStatus::Failed,
        }
    }
}

impl fmt::Display for ReceiptStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which kind of ledger entry recorded a receipt's current state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// Committed before the call ran.
    Intent,
    /// What the call produced.
    Outcome,
    /// Later news about a pending or unknown receipt.
    Resolution,
    /// A plugin load, unload or grant change.
    Audit,
    /// An idempotent replay in another task: a receipt of that task (its own id) copying the
    /// facts of the receipt it replayed, so that the task's honest claim is backed.
    Replay,
}

impl EntryKind {
    /// The stored name (`intent`, `outcome`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::Intent => "intent",
            EntryKind::Outcome => "outcome",
            EntryKind::Resolution => "resolution",
            EntryKind::Audit => "audit",
            EntryKind::Replay => "replay",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<EntryKind> {
        Some(match s {
            "intent" => EntryKind::Intent,
            "outcome" => EntryKind::Outcome,
            "resolution" => EntryKind::Resolution,
            "audit" => EntryKind::Audit,
            "replay" => EntryKind::Replay,
            _ => return None,
        })
    }
}

/// A receipt as read back: its intent's fields plus its latest entry's status and facts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    /// Stable, location-independent id (UUID v7 of the intent).
    pub id: String,
    /// Sequence of the intent entry: the receipt's place in the ledger.
    pub sequence: u64,
    /// Task that made the call.
    pub task_id: String,
    /// Specialist that made the call.
    pub route: String,
    /// Receipt type.
    #[serde(rename = "type")]
    pub receipt_type: String,
    /// Operation.
    pub operation: String,
    /// Current status.
    pub status: ReceiptStatus,
    /// Id in the external system.
    pub external_id: Option<String>,
    /// Where the effect can be checked.
    pub verifiable_url: Option<String>,
    /// Preview, at most [`PREVIEW_MAX_CHARS`] characters.
    pub preview: Option<String>,
    /// Verbatim error, only when failed.
    pub error: Option<String>,
    /// `connector@version`.
    pub plugin: String,
    /// `connector.tool`.
    pub tool: String,
    /// When the current status was recorded (RFC 3339, UTC).
    pub time: String,
    /// Hex sha256 of the call's input.
    pub input_sha256: String,
    /// The call's idempotency key.
    pub idempotency_key: Option<String>,
    /// Kind of the entry that recorded the current status.
    pub entry: EntryKind,
    /// Sequence of that entry.
    pub entry_sequence: u64,
    /// That entry's previous hash.
    pub prev_hash: String,
    /// That entry's hash.
    pub hash: String,
    /// For a replay entry ([`EntryKind::Replay`]): the id of the receipt it replayed, whose
    /// facts (status, external id) it copies as they were at the replay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_of: Option<String>,
    /// The delegation chain of the task (root first, [`Receipt::task_id`] last), as hashed in
    /// the entry; empty for a top-level task.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chain: Vec<String>,
}

impl Receipt {
    /// Builds the receipt view from its latest entry and its intent's sequence.
    pub(crate) fn from_entry(e: Entry, sequence: u64) -> Result<Receipt, LedgerError> {
        let corrupt = |reason: String| LedgerError::Corrupt { seq: e.seq, reason };
        let entry = match EntryKind::parse(&e.kind) {
            Some(EntryKind::Audit) | None => {
                return Err(corrupt(format!("kind {:?} is not a receipt entry", e.kind)));
            }
            Some(k) => k,
        };
        let chain = e
            .chain
            .as_deref()
            .map(|c| {
                c.split(super::chain::CHAIN_SEPARATOR)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let replay_of = match entry {
            EntryKind::Replay => e.detail.clone(),
            _ => None,
        };
        let Some(status) = ReceiptStatus::parse(&e.status) else {
            return Err(corrupt(format!(
                "status {:?} is not a receipt status",
                e.status
            )));
        };
        Ok(Receipt {
            id: e.receipt_id,
            sequence,
            task_id: e.task_id,
            route: e.route,
            receipt_type: e.receipt_type,
            operation: e.operation,
            status,
            external_id: e.external_id,
            verifiable_url: e.verifiable_url,
            preview: e.preview,
            error: e.error,
            plugin: e.plugin,
            tool: e.tool,
            time: e.time,
            input_sha256: e.input_sha256,
            idempotency_key: e.idempotency_key,
            entry,
            entry_sequence: e.seq,
            prev_hash: e.prev_hash,
            hash: e.hash,
            replay_of,
            chain,
        })
    }
}

/// Handle to a committed intent, passed to [`super::Ledger::complete`].
#[derive(Debug, PartialEq, Eq)]
pub struct IntentId(pub(crate) String);

impl IntentId {
    /// The receipt id.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Answer of [`super::Ledger::begin`].
#[derive(Debug)]
pub enum Begin {
    /// The intent is committed: run the connector, then `complete`.
    Proceed(IntentId),
    /// The same idempotency key and input were recorded before: return this receipt's outcome
    /// without calling the connector. Its status may be `unknown` (the first call's host
    /// stopped mid-call): that too means do not call again. It is the receipt that answers for
    /// the replaying task: when that task did not make the call, its replay entry (recorded in
    /// the same transaction, or at its first replay), whose [`Receipt::replay_of`] names the
    /// call's receipt; when it did, the call's own receipt.
    Replay(Box<Receipt>),
}

/// What an audit entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuditKind {
    /// A plugin was loaded.
    PluginLoaded,
    /// A plugin was unloaded.
    PluginUnloaded,
    /// An operator grant changed.
    GrantChanged,
    /// A signed bundle was installed (detail: digest, content digest, signers).
    BundleInstalled,
    /// A rollback or equivocation was installed because the operator asked for it.
    BundleOverride,
    /// The operator accepted a ledger that no longer reached its head anchor (detail: what
    /// was found); the anchor was moved to this entry.
    HeadAccepted,
}

impl AuditKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            AuditKind::PluginLoaded => "plugin_loaded",
            AuditKind::PluginUnloaded => "plugin_unloaded",
            AuditKind::GrantChanged => "grant_changed",
            AuditKind::BundleInstalled => "bundle_installed",
            AuditKind::BundleOverride => "bundle_override",
            AuditKind::HeadAccepted => "head_accepted",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<AuditKind> {
        Some(match s {
            "plugin_loaded" => AuditKind::PluginLoaded,
            "plugin_unloaded" => AuditKind::PluginUnloaded,
            "grant_changed" => AuditKind::GrantChanged,
            "bundle_installed" => AuditKind::BundleInstalled,
            "bundle_override" => AuditKind::BundleOverride,
            "head_accepted" => AuditKind::HeadAccepted,
            _ => return None,
        })
    }
}

/// An audit entry, in the same chain as receipts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditEntry {
    /// Its id (UUID v7).
    pub id: String,
    /// Its sequence.
    pub sequence: u64,
    /// What happened.
    pub kind: AuditKind,
    /// `plugin@version` it happened to.
    pub plugin: String,
    /// Free text (e.g. the grant before and after).
    pub detail: String,
    /// When (RFC 3339, UTC).
    pub time: String,
    /// Previous hash.
    pub prev_hash: String,
    /// Hash.
    pub hash: String,
}

impl AuditEntry {
    pub(crate) fn from_entry(e: Entry) -> Result<AuditEntry, LedgerError> {
        let Some(kind) = AuditKind::parse(&e.operation) else {
            return Err(LedgerError::Corrupt {
                seq: e.seq,
                reason: format!("audit kind {:?} is unknown", e.operation),
            });
        };
        Ok(AuditEntry {
            id: e.receipt_id,
            sequence: e.seq,
            kind,
            plugin: e.plugin,
            detail: e.detail.unwrap_or_default(),
            time: e.time,
            prev_hash: e.prev_hash,
            hash: e.hash,
        })
    }
}

/// Result of [`super::Ledger::verify`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyReport {
    /// Every entry checked out.
    pub ok: bool,
    /// Entries read.
    pub entries: u64,
    /// The first entry that does not check out.
    pub first_bad_sequence: Option<u64>,
    /// Why it does not.
    pub reason: Option<String>,
    /// Hash of the last entry read (record it elsewhere to detect a truncated tail).
    pub head_hash: String,
    /// The sequence the head anchor file records (`None`: no anchor, so a truncated tail
    /// could not be checked).
    pub anchored_sequence: Option<u64>,
}

impl fmt::Display for VerifyReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.ok, self.first_bad_sequence, &self.reason) {
            (true, _, _) => {
                write!(f, "ok: {} entries, head {}", self.entries, self.head_hash)?;
                match self.anchored_sequence {
                    Some(seq) => write!(f, ", head anchor at entry {seq}"),
                    None => write!(f, " (no head anchor: a truncated tail cannot be detected)"),
                }
            }
            (false, Some(seq), reason) => write!(
                f,
                "tampered: entry {seq}: {}",
                reason.as_deref().unwrap_or("does not check out")
            ),
            (false, None, reason) => write!(
                f,
                "tampered: {}",
                reason.as_deref().unwrap_or("does not check out")
            ),
        }
    }
}

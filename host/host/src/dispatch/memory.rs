//! Memory for a running task: [`TaskScope::memory_read`] and [`TaskScope::memory_update`], the
//! methods the runtime's `TaskHost` memory hook calls. They check the specialist's effective
//! memory rights (requested ∩ granted) and record every update like a mutating tool call: a
//! two-phase receipt of type `memory`, operation `update` in the same ledger, through the same
//! intent path dispatch uses for connectors, plus a call record in the task result. So a
//! report's claim "saved to team memory" can be checked against a success receipt of the task.

use std::time::Instant;

use guild_core::capability::{denied, trace_decision};
use guild_core::types::{CallStatus, ToolCallRecord, ToolError, ToolOutcome};
use guild_receipts::{Completion, Intent};

use super::open_intent::{self, Started};
use super::{TaskScope, sha256};
use crate::memory::{Actor, MemoryAccess, MemoryDoc, MemoryError, Scope, UpdateOutcome};

/// The tool name memory updates are recorded and receipted under.
pub(crate) const MEMORY_UPDATE_TOOL: &str = "memory.update";

impl TaskScope {
    /// Why this task's specialist may not use `right`, traced either way.
    fn memory_refusal(&self, scope: Scope, write: bool) -> Option<MemoryError> {
        let plugin = &self.plugin;
        let right = MemoryAccess::of(scope, write);
        let why = plugin
            .runtime
            .effective()
            .memory
            .refusal(&plugin.name, scope, write);
        trace_decision(&plugin.ident, "memory", right.as_str(), why.is_none());
        why.map(|why| MemoryError::Denied(denied(&plugin.name, "memory", right.as_str(), &why)))
    }

    /// Reads `scope`'s document, if the specialist holds `scope:read`.
    pub(crate) async fn memory_read(&self, scope: Scope) -> Result<MemoryDoc, MemoryError> {
        if let Some(refusal) = self.memory_refusal(scope, false) {
            return Err(refusal);
        }
        self.services.memory.read(scope).await
    }

    /// Replaces `scope`'s document with `text` (validated first), if the specialist holds
    /// `scope:write`. `base` is the version the instance read (and so merged into): a newer
    /// stored version is a [`MemoryError::Conflict`]. `None`, for an instance that read nothing
    /// of `scope`, replaces whatever is stored. Every attempt that passes the grant is
    /// receipted: success for a stored version or a no-op, failed (with the validation errors
    /// or the conflict verbatim) otherwise.
    pub(crate) async fn memory_update(
        &self,
        scope: Scope,
        base: Option<u64>,
        text: String,
    ) -> Result<UpdateOutcome, MemoryError> {
        let started = Instant::now();
        let input_sha256 = sha256(&text);
        if let Some(refusal) = self.memory_refusal(scope, true) {
            self.record_refusal(MEMORY_UPDATE_TOOL, &text, &refusal.to_string());
            return Err(refusal);
        }
        self.count_call(MEMORY_UPDATE_TOOL, &text)
            .map_err(|e| match e {
                ToolError::LimitExceeded(m) => MemoryError::LimitExceeded(m),
                other => MemoryError::LimitExceeded(other.to_string()),
            })?;
        let memory = &self.services.memory;
        if let Err(e) = memory.doc(scope) {
            self.record_refusal(MEMORY_UPDATE_TOOL, &text, &e.to_string());
            return Err(e);
        }
        let intent = Intent {
            task_id: self.task_id.clone(),
            route: self.specialist_name().to_owned(),
            plugin: self.plugin.ident.to_string(),
            tool: MEMORY_UPDATE_TOOL.to_owned(),
            receipt_type: "memory".to_owned(),
            operation: "update".to_owned(),
            input_sha256: input_sha256.clone(),
            idempotency_key: None,
            chain: self.services.forest.receipt_chain(&self.task_id),
        };
        let ledger = self.services.ledger.clone();
        let open = match tokio::task::spawn_blocking(move || open_intent::begin(ledger, intent))
            .await
        {
            Ok(Ok(Started::Open(open))) => open,
            // Without an idempotency key the ledger never replays.
            Ok(Ok(Started::Replay(_))) => {
                return Err(MemoryError::Join(
                    "unexpected replay of a memory update".into(),
                ));
            }
            Ok(Err(e)) => {
                let message = format!(
                    "memory was not updated: the receipts ledger could not record the intent: {e}"
                );
                self.record_refusal(MEMORY_UPDATE_TOOL, &text, &message);
                return Err(MemoryError::Join(message));
            }
            Err(e) => return Err(MemoryError::Join(e.to_string())),
        };
        let actor = Actor::Plugin(self.plugin.ident.to_string());
        let result = match base {
            Some(base) => memory.update(scope, &text, base, &actor).await,
            None => match memory.read(scope).await {
                Ok(doc) => {
                    let head = doc.version.map_or(0, |v| v.version);
                    memory.update(scope, &text, head, &actor).await
                }
                Err(e) => Err(e),
            },
        };
        let outcome = tool_outcome(&result);
        let receipt_id = open
            .complete(MEMORY_UPDATE_TOOL, Completion::from(&outcome))
            .await;
        self.record(ToolCallRecord {
            tool: MEMORY_UPDATE_TOOL.to_owned(),
            plugin: "host".to_owned(),
            mutating: true,
            input_sha256,
            outcome,
            receipt_id,
            replayed: false,
            wall_ms: started.elapsed().as_millis() as u64,
        });
        result
    }
}

/// What a memory update looks like as a call outcome (and so as a receipt).
fn tool_outcome(result: &Result<UpdateOutcome, MemoryError>) -> ToolOutcome {
    let (status, external_id, preview, error) = match result {
        Ok(UpdateOutcome::Stored {
            doc,
            version,
            usage,
            ..
        }) => (
            CallStatus::Success,
            Some(format!("{doc}@v{}", version.version)),
            Some(format!(
                "{} memory version {}: {usage}",
                doc.scope, version.version
            )),
            None,
        ),
        Ok(UpdateOutcome::NoOp { doc, reason, .. }) => (
            CallStatus::Success,
            None,
            Some(format!("{} memory unchanged: {reason}", doc.scope)),
            None,
        ),
        Ok(UpdateOutcome::Refused { doc, errors, .. }) => (
            CallStatus::Failed,
            None,
            Some(format!("{} memory update refused", doc.scope)),
            Some(errors.join(" ")),
        ),
        Err(e) => (CallStatus::Failed, None, None, Some(e.to_string())),
    };
    ToolOutcome {
        output: serde_json::to_string(&result.as_ref().ok()).unwrap_or_default(),
        status,
        external_id,
        verifiable_url: None,
        preview,
        error,
    }
}

//! [`OpenIntent`]: a committed intent whose call has not been recorded yet. However the call
//! ends — outcome recorded, outcome write failed, caller dropped, task panicked — the intent
//! does not stay "in flight" in the ledger: dropping an `OpenIntent` that was not completed
//! releases it, so the receipt reads `unknown`, can be resolved, and its idempotency key replays
//! it instead of being refused for the life of the process.
//!
//! A tool call's outcome is queued, not waited for ([`OpenIntent::complete_later`]): the
//! specialist goes on while it is committed, grouped with whatever else is queued, and the
//! task waits for it ([`PendingOutcome`]) before its result is built
//! (docs/receipts-and-validation.md, "Durability"). Both backends queue it the same way
//! ([`guild_receipts::LedgerStore::queue_outcome`]).

use guild_receipts::{Begin, Completion, Intent, IntentId, LedgerError, Receipt};

use super::in_flight::CallGuard;
use crate::stores::LedgerBackend;

/// Answer of [`begin`].
pub(crate) enum Started {
    /// The intent is committed: run the connector, then [`OpenIntent::complete`].
    Open(OpenIntent),
    /// The idempotency key answered with this recorded receipt.
    Replay(Box<Receipt>),
}

/// Commits `intent` (blocking: call it on a blocking thread). The handle is made here, on
/// that thread, so a caller dropped while waiting for it still releases the intent.
pub(crate) fn begin(ledger: LedgerBackend, intent: Intent) -> Result<Started, LedgerError> {
    Ok(match ledger.begin(intent)? {
        Begin::Proceed(id) => Started::Open(OpenIntent {
            ledger,
            id: Some(id),
        }),
        Begin::Replay(receipt) => Started::Replay(receipt),
    })
}

/// A committed intent; released on drop unless its outcome was recorded.
pub(crate) struct OpenIntent {
    ledger: LedgerBackend,
    /// `None` once the outcome is recorded.
    id: Option<IntentId>,
}

impl OpenIntent {
    /// Records the call's outcome on a blocking thread. Returns the receipt id, or `None` when
    /// the outcome could not be written: the intent stands and the receipt reads `unknown`
    /// (never success), released so that it can be resolved.
    pub(crate) async fn complete(mut self, tool: &str, completion: Completion) -> Option<String> {
        let written = tokio::task::spawn_blocking(move || {
            let id = self.id.take()?;
            let written = self.ledger.complete(&id, completion);
            if written.is_err() {
                self.ledger.release(&id);
            }
            Some(written)
        })
        .await;
        match written {
            Ok(Some(Ok(receipt))) => Some(receipt.id),
            Ok(Some(Err(e))) => {
                tracing::error!("failed to record the outcome of '{tool}': {e}");
                None
            }
            Ok(None) => None,
            Err(e) => {
                tracing::error!("receipts ledger task failed for '{tool}': {e}");
                None
            }
        }
    }
}

impl OpenIntent {
    /// Queues the call's outcome and returns at once: whatever the ledger writes next comes
    /// after it. A blocking thread then waits until it is committed (in a group with whatever
    /// else is queued); `counted` is held until then, so a host about to stop waits for it. If
    /// it cannot be written the intent is released and the receipt reads `unknown`.
    pub(crate) fn complete_later(
        mut self,
        tool: &str,
        completion: Completion,
        counted: Option<CallGuard>,
    ) -> Option<PendingOutcome> {
        let id = self.id.take()?;
        let queued = self.ledger.queue_outcome(&id, completion);
        let receipt_id = id.as_str().to_owned();
        let (tool, ledger) = (tool.to_owned(), self.ledger.clone());
        let durable = tokio::task::spawn_blocking(move || {
            let _counted = counted;
            match queued.wait() {
                Ok(_) => true,
                Err(e) => {
                    tracing::error!("failed to record the outcome of '{tool}': {e}");
                    ledger.release(&id);
                    false
                }
            }
        });
        Some(PendingOutcome {
            receipt_id,
            durable,
        })
    }
}

/// An outcome queued by [`OpenIntent::complete_later`], being committed.
pub(crate) struct PendingOutcome {
    /// The receipt it completes.
    pub(crate) receipt_id: String,
    durable: tokio::task::JoinHandle<bool>,
}

impl PendingOutcome {
    /// Waits until the outcome is committed: `true` when it was recorded, `false` when it
    /// could not be (the receipt reads `unknown`).
    pub(crate) async fn settled(self) -> bool {
        match self.durable.await {
            Ok(recorded) => recorded,
            Err(e) => {
                tracing::error!(
                    receipt = %self.receipt_id,
                    "receipts ledger task failed while recording an outcome: {e}"
                );
                false
            }
        }
    }
}

impl Drop for OpenIntent {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            tracing::warn!(
                receipt = id.as_str(),
                "a mutating call ended without a recorded outcome: its receipt stays unknown \
                 and can be resolved"
            );
            self.ledger.release(&id);
        }
    }
}

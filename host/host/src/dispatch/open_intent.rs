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
//!
//! Nobody asks for the outcome's commit at once: it lingers in the queue for at most
//! `[dispatch] outcome_linger_ms`, so that the task's next mutating call commits it together
//! with its own intent (one fsync per call instead of two). The task's end takes it from the
//! lingering task and has it committed at once, on a blocking thread, and dropping the
//! [`PendingOutcome`] asks the lingering task to; the linger only bounds how long an outcome
//! whose task goes on without another write stays undurable.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

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
    /// after it, and commits it with its own. After `linger` (or once the task asks for it) a
    /// blocking thread waits until it is committed; `counted` is held until then, so a host
    /// about to stop waits for it. If it cannot be written the intent is released and the
    /// receipt reads `unknown`.
    pub(crate) fn complete_later(
        mut self,
        tool: &str,
        completion: Completion,
        counted: Option<CallGuard>,
        linger: Duration,
    ) -> Option<PendingOutcome> {
        let id = self.id.take()?;
        let receipt_id = id.as_str().to_owned();
        let lingering = Lingering {
            queued: Some(self.ledger.queue_outcome(&id, completion)),
            ledger: self.ledger.clone(),
            id,
            tool: tool.to_owned(),
            _counted: counted,
        };
        let lingering = Arc::new(Mutex::new(Some(lingering)));
        let (now, asked) = tokio::sync::oneshot::channel::<()>();
        let durable = tokio::spawn({
            let lingering = lingering.clone();
            async move {
                // Until the task asks (its end), drops the handle, or the linger is over, the
                // outcome waits in the queue, where the next write of the ledger (this task's
                // next intent, another task's) commits it with its own.
                if !linger.is_zero() {
                    let _ = tokio::time::timeout(linger, asked).await;
                }
                match take(&lingering) {
                    Some(lingering) => lingering.commit_on_blocking_thread().await,
                    // The task's end took it and waits for its commit itself.
                    None => true,
                }
            }
        });
        Some(PendingOutcome {
            receipt_id,
            now,
            lingering,
            durable,
        })
    }
}

/// The queued outcome, held by whichever of the lingering task and the task's end takes it
/// first to have it committed.
type Shared = Arc<Mutex<Option<Lingering>>>;

fn take(shared: &Shared) -> Option<Lingering> {
    shared.lock().unwrap_or_else(PoisonError::into_inner).take()
}

/// A queued outcome nobody waits for yet. [`Lingering::commit`] waits until it is committed;
/// if it is dropped first (its runtime shutting down), the drop waits, so that no outcome is
/// left in the queue of a ledger about to close.
struct Lingering {
    queued: Option<guild_receipts::QueuedWrite>,
    ledger: LedgerBackend,
    id: IntentId,
    tool: String,
    /// Held until the outcome is committed, so that a host about to stop waits for it.
    _counted: Option<CallGuard>,
}

impl Lingering {
    /// Blocks until the outcome is committed: `true` when it was recorded; else the intent
    /// is released and the receipt reads `unknown`.
    fn commit(mut self) -> bool {
        self.wait()
    }

    /// [`Lingering::commit`] on a blocking thread.
    async fn commit_on_blocking_thread(self) -> bool {
        match tokio::task::spawn_blocking(move || self.commit()).await {
            Ok(recorded) => recorded,
            Err(e) => {
                tracing::error!("receipts ledger task failed while recording an outcome: {e}");
                false
            }
        }
    }

    fn wait(&mut self) -> bool {
        let Some(queued) = self.queued.take() else {
            return false;
        };
        match queued.wait() {
            Ok(_) => true,
            Err(e) => {
                tracing::error!("failed to record the outcome of '{}': {e}", self.tool);
                self.ledger.release(&self.id);
                false
            }
        }
    }
}

impl Drop for Lingering {
    fn drop(&mut self) {
        if self.queued.is_some() {
            self.wait();
        }
    }
}

/// An outcome queued by [`OpenIntent::complete_later`], lingering in the ledger's queue or
/// being committed.
pub(crate) struct PendingOutcome {
    /// The receipt it completes.
    pub(crate) receipt_id: String,
    /// Asks for the commit now (dropped unsent, it asks too).
    now: tokio::sync::oneshot::Sender<()>,
    /// The outcome while it lingers: [`PendingOutcome::settled`] takes it and has it committed
    /// itself, two hand-offs fewer than asking the lingering task.
    lingering: Shared,
    /// The lingering task: it commits the outcome when its linger is over or it is asked.
    durable: tokio::task::JoinHandle<bool>,
}

impl PendingOutcome {
    /// Has the outcome committed now and waits until it is: `true` when it was recorded,
    /// `false` when it could not be (the receipt reads `unknown`).
    pub(crate) async fn settled(self) -> bool {
        let mine = take(&self.lingering);
        // The lingering task ends (nothing is left to it) or, when it had already taken the
        // outcome, goes on committing it.
        let _ = self.now.send(());
        if let Some(lingering) = mine {
            return lingering.commit_on_blocking_thread().await;
        }
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

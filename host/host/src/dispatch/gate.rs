//! The host-wide task gate: at most `[dispatch] max_running_tasks` specialist instances run at
//! once, whichever front door started them (CLI, MCP over stdio or HTTP, batches, background
//! tasks), and at most `[dispatch] max_queued_tasks` wait for a slot. A task past both is
//! refused at once with [`DispatchError::Busy`], which names both settings: a flood of calls
//! costs a refusal each, never an instance (and its memory) each.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use guild_core::error::DispatchError;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Running slots and the bounded queue in front of them.
pub(crate) struct TaskGate {
    slots: Arc<Semaphore>,
    max_running: usize,
    max_queued: usize,
    waiting: AtomicUsize,
}

/// A running slot, given back when dropped.
pub(crate) struct Slot {
    _permit: OwnedSemaphorePermit,
}

/// Counts one waiting task; dropped when it got a slot or gave up (its caller went away).
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl TaskGate {
    pub(crate) fn new(max_running: usize, max_queued: usize) -> Self {
        Self {
            slots: Arc::new(Semaphore::new(max_running)),
            max_running,
            max_queued,
            waiting: AtomicUsize::new(0),
        }
    }

    /// A running slot: at once when one is free, after a wait in the queue when the queue has
    /// room, or [`DispatchError::Busy`] when it has none.
    pub(crate) async fn enter(&self) -> Result<Slot, DispatchError> {
        if let Ok(permit) = self.slots.clone().try_acquire_owned() {
            return Ok(Slot { _permit: permit });
        }
        let queued = self.waiting.fetch_add(1, Ordering::SeqCst);
        let waiting = Waiting(&self.waiting);
        if queued >= self.max_queued {
            drop(waiting);
            tracing::warn!(
                running = self.max_running,
                queued = self.max_queued,
                "task refused: the host is busy"
            );
            return Err(DispatchError::Busy {
                running: self.max_running,
                queued: self.max_queued,
            });
        }
        // The semaphore is never closed, so acquiring can only fail if it were.
        let permit = self
            .slots
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| DispatchError::Busy {
                running: self.max_running,
                queued: self.max_queued,
            })?;
        drop(waiting);
        Ok(Slot { _permit: permit })
    }

    /// Tasks running now.
    pub(crate) fn running(&self) -> usize {
        self.max_running - self.slots.available_permits()
    }

    /// Tasks waiting for a slot now.
    pub(crate) fn queued(&self) -> usize {
        self.waiting.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn slots_then_queue_then_busy() {
        let gate = Arc::new(TaskGate::new(2, 1));
        let first = gate.enter().await.expect("a free slot");
        let _second = gate.enter().await.expect("a free slot");
        assert_eq!(gate.running(), 2);
        // The third waits in the queue…
        let queued = tokio::spawn({
            let gate = gate.clone();
            async move { gate.enter().await.map(|_| ()) }
        });
        while gate.queued() == 0 {
            tokio::task::yield_now().await;
        }
        // …and the fourth finds the queue full.
        let err = gate.enter().await.err().expect("busy");
        let text = err.to_string();
        assert!(
            text.contains("max_running_tasks") && text.contains("max_queued_tasks"),
            "{text}"
        );
        drop(first);
        queued.await.expect("joined").expect("got the freed slot");
        assert_eq!(gate.queued(), 0);
    }

    #[tokio::test]
    async fn a_caller_that_gives_up_leaves_the_queue() {
        let gate = TaskGate::new(1, 1);
        let _held = gate.enter().await.expect("a free slot");
        let gave_up = tokio::time::timeout(std::time::Duration::from_millis(10), gate.enter());
        assert!(gave_up.await.is_err(), "it waited");
        assert_eq!(gate.queued(), 0);
        // The queue has room again.
        let again = tokio::time::timeout(std::time::Duration::from_millis(10), gate.enter());
        assert!(again.await.is_err(), "it waited in the queue, not refused");
    }
}

//! [`InFlight`]: the mutating connector calls whose outcome is not recorded yet.
//!
//! Once its intent is committed, a mutating call runs as a tokio task of its own and records
//! its outcome even when the task that made it is dropped (a task timeout, a cancel). That
//! holds only while the process lives: a process that exits right after a task timed out
//! would drop the call with the runtime, and its receipt would stay `unknown`. So every
//! front door that is about to stop waits here first ([`crate::Host::finish_calls`]): `guild
//! task`, `guild batch` and `guild tasks start` before they exit, `guild serve` when it
//! drains. The wait is bounded by each call's own timeout (`[limits] timeout_s`).

use tokio::sync::watch;

/// How many mutating calls are between their intent and their recorded outcome.
pub(crate) struct InFlight {
    count: watch::Sender<usize>,
}

impl Default for InFlight {
    fn default() -> Self {
        Self {
            count: watch::Sender::new(0),
        }
    }
}

impl InFlight {
    /// Counts one call until the returned guard is dropped (outcome recorded, intent
    /// released, or the call's task ended any other way).
    pub(crate) fn enter(&self) -> CallGuard {
        self.count.send_modify(|n| *n += 1);
        CallGuard {
            count: self.count.clone(),
        }
    }

    /// Calls running now.
    pub(crate) fn running(&self) -> usize {
        *self.count.borrow()
    }

    /// Waits until no call is running.
    pub(crate) async fn settled(&self) {
        let mut rx = self.count.subscribe();
        // `wait_for` fails only when every sender is gone; `self` holds one.
        let _ = rx.wait_for(|n| *n == 0).await;
    }
}

/// One counted call (see [`InFlight::enter`]).
pub(crate) struct CallGuard {
    count: watch::Sender<usize>,
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        self.count.send_modify(|n| *n = n.saturating_sub(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn settles_when_the_last_guard_is_dropped() {
        let calls = InFlight::default();
        calls.settled().await;
        let (a, b) = (calls.enter(), calls.enter());
        assert_eq!(calls.running(), 2);
        let waiter = tokio::spawn({
            let rx = calls.count.subscribe();
            async move {
                let mut rx = rx;
                let _ = rx.wait_for(|n| *n == 0).await;
            }
        });
        drop(a);
        assert_eq!(calls.running(), 1);
        assert!(!waiter.is_finished());
        drop(b);
        waiter.await.expect("settled");
        calls.settled().await;
        assert_eq!(calls.running(), 0);
    }
}

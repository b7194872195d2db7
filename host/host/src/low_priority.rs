//! Work that must not take the cores tasks run on: a reload's loading (reading and hashing
//! components, linking, the `describe()` and `tools()` instances of what changed) runs on a
//! thread of its own at a lower scheduling priority, with a single-threaded runtime of its own,
//! so that under load the tasks running beside it keep their share of the machine and the
//! reload takes longer instead (docs/performance.md, "guild serve: MCP round trips and
//! reload"). Threads it starts (its blocking pool) inherit the priority.
//!
//! The thread and its runtime are started on first use and then kept: one [`LowPriority`]
//! serves every later job until it is dropped. Starting a thread and a runtime for each job
//! cost more than a reload with nothing changed (a stack mapped and unmapped, whose unmapping
//! interrupts the tasks' threads on the other cores to flush their address translations; an
//! I/O driver and a timer made and torn down), so a storm of reloads slowed the tasks beside
//! it through the very thread meant to spare them (docs/performance.md, "A reload's low-priority
//! thread, kept").

use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

/// A job as the worker thread takes it: it makes its future there (the future need not be
/// `Send`) and sends its output back itself.
type Job = Box<dyn FnOnce() -> Pin<Box<dyn Future<Output = ()>>> + Send>;

/// A low-priority thread with a runtime of its own, started on first use, ended when this is
/// dropped (after the jobs it holds).
pub(crate) struct LowPriority {
    name: String,
    jobs: Mutex<Option<UnboundedSender<Job>>>,
}

impl LowPriority {
    /// A worker whose thread will be called `name`; nothing is started yet.
    pub(crate) fn new(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            jobs: Mutex::new(None),
        }
    }

    /// Runs the future `work` makes on the low-priority thread and waits for its output;
    /// `None` when no such thread or runtime could be made, or the job ended without an
    /// output (it panicked): the caller then does the work itself.
    pub(crate) async fn run<T, Fut>(&self, work: impl FnOnce() -> Fut + Send + 'static) -> Option<T>
    where
        Fut: Future<Output = T> + 'static,
        T: Send + 'static,
    {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            Box::pin(async move {
                let _ = tx.send(work().await);
            })
        });
        self.submit(job)?;
        rx.await.ok()
    }

    /// Hands `job` to the thread, starting it when there is none (or the last one ended).
    fn submit(&self, job: Job) -> Option<()> {
        // A poisoned lock means a panic while swapping the sender: the slot is still whole.
        let mut jobs = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
        let job = match jobs.as_ref() {
            Some(sender) => match sender.send(job) {
                Ok(()) => return Some(()),
                // The thread ended (its runtime could not be made): start another.
                Err(refused) => refused.0,
            },
            None => job,
        };
        let sender = start(&self.name)?;
        sender.send(job).ok()?;
        *jobs = Some(sender);
        Some(())
    }
}

/// Starts the thread: lowered priority, a current-thread runtime, each job a local task of
/// its own (a slow job does not hold up the next one's start). It ends when every sender is
/// gone.
fn start(name: &str) -> Option<UnboundedSender<Job>> {
    let (sender, mut jobs) = unbounded_channel::<Job>();
    let spawned = std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            guild_runtime::engine::lower_priority();
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(e) => {
                    tracing::warn!("no runtime for low-priority work: {e}");
                    return;
                }
            };
            let local = tokio::task::LocalSet::new();
            local.block_on(&runtime, async move {
                while let Some(job) = jobs.recv().await {
                    tokio::task::spawn_local(job());
                }
            });
            // Jobs still running when the last sender went: finished, not dropped.
            runtime.block_on(local);
        });
    match spawned {
        Ok(_) => Some(sender),
        Err(e) => {
            tracing::warn!("no thread for low-priority work: {e}");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn jobs_run_on_one_kept_thread_and_a_panicking_job_leaves_it_serving() {
        let worker = LowPriority::new("guild-test-low");
        let first = worker
            .run(|| async { std::thread::current().id() })
            .await
            .expect("a first job runs");
        assert_ne!(
            first,
            std::thread::current().id(),
            "not on the caller's thread"
        );
        assert_eq!(
            worker
                .run(|| async { std::thread::current().name().map(str::to_owned) })
                .await
                .flatten()
                .as_deref(),
            Some("guild-test-low")
        );
        // A job that panics gives no output; the thread goes on serving.
        let panicked: Option<()> = worker.run(|| async { panic!("a job failed") }).await;
        assert!(panicked.is_none());
        let again = worker
            .run(|| async { std::thread::current().id() })
            .await
            .expect("a later job runs");
        assert_eq!(first, again, "the same thread serves every job");
    }

    #[tokio::test]
    async fn jobs_run_side_by_side() {
        let worker = LowPriority::new("guild-test-low");
        let (open_tx, open_rx) = tokio::sync::oneshot::channel::<()>();
        // The first job waits for the second: on a worker that ran jobs one after the other
        // this would never end.
        let waiting = worker.run(|| async move { open_rx.await.is_ok() });
        let opening = worker.run(|| async move { open_tx.send(()).is_ok() });
        let (waited, opened) = tokio::join!(waiting, opening);
        assert_eq!((waited, opened), (Some(true), Some(true)));
    }
}

//! One connection on a thread of its own: what makes the blocking store traits safe to call
//! from anywhere, runtime threads included (see the crate docs).
//!
//! A store sends each call as a job and waits for its answer on a channel. Jobs run one at a
//! time, in order. A job that panics is caught (its transaction rolls back when dropped) and
//! its caller gets an error; a connection the server closed is replaced before the next job.

use std::panic::AssertUnwindSafe;
use std::sync::mpsc;
use std::thread::JoinHandle;

use crate::{PgConfig, PgError};

type Job = Box<dyn FnOnce(&mut postgres::Client) + Send>;

/// The connection thread of one store.
pub(crate) struct Worker {
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl Worker {
    /// Connects on a new thread and runs `setup` (the migrations) there before returning.
    pub(crate) fn start(
        config: &PgConfig,
        name: &str,
        setup: impl FnOnce(&mut postgres::Client) -> Result<(), PgError> + Send + 'static,
    ) -> Result<Worker, PgError> {
        let config = config.clone();
        let (ready_tx, ready_rx) = mpsc::sync_channel::<Result<(), PgError>>(1);
        let (jobs, queue) = mpsc::channel::<Job>();
        let thread = std::thread::Builder::new()
            .name(format!("guild-pg-{name}"))
            .spawn(move || {
                let mut client = match config.connect().and_then(|mut c| setup(&mut c).map(|()| c))
                {
                    Ok(client) => client,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                let _ = ready_tx.send(Ok(()));
                serve(&config, &mut client, queue);
            })
            .map_err(PgError::Thread)?;
        let worker = Worker {
            jobs: Some(jobs),
            thread: Some(thread),
        };
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(worker),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(PgError::Thread(std::io::Error::other(
                "the connection thread stopped during setup",
            ))),
        }
    }

    /// Queues `f` to run on the connection and returns at once; `false` if the thread is gone.
    /// `f` answers its callers itself (the group commit, src/group.rs).
    pub(crate) fn send(&self, f: impl FnOnce(&mut postgres::Client) + Send + 'static) -> bool {
        self.jobs
            .as_ref()
            .is_some_and(|jobs| jobs.send(Box::new(f)).is_ok())
    }

    /// Runs `f` on the connection and returns its answer; `None` if the thread is gone or the
    /// job panicked.
    pub(crate) fn run<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut postgres::Client) -> R + Send + 'static,
    ) -> Option<R> {
        let (answer, wait) = mpsc::sync_channel(1);
        self.jobs
            .as_ref()?
            .send(Box::new(move |client| {
                let _ = answer.send(f(client));
            }))
            .ok()?;
        wait.recv().ok()
    }
}

fn serve(config: &PgConfig, client: &mut postgres::Client, queue: mpsc::Receiver<Job>) {
    while let Ok(job) = queue.recv() {
        if client.is_closed() {
            match config.connect() {
                Ok(fresh) => *client = fresh,
                // The job runs on the closed client and reports the failure to its caller.
                Err(e) => tracing::warn!("reconnecting to PostgreSQL failed: {e}"),
            }
        }
        if std::panic::catch_unwind(AssertUnwindSafe(|| job(client))).is_err() {
            tracing::error!(target = config.target(), "a PostgreSQL store call panicked");
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Closing the queue ends the thread after the job it is running.
        drop(self.jobs.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

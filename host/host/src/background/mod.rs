//! Background tasks: `start_task` returns an id at once; `check_task`, `update_task`,
//! `cancel_task` and `list_tasks` act on it later. State and events live in the task store
//! (SQLite in the data dir, or PostgreSQL shared by several hosts: [`shared`]) with the host
//! process that owns them, so a task whose owner is gone turns into `interrupted` instead of
//! being lost, and a second process never disturbs a live owner. On a shared store a cancel may
//! come from any host: the owner's running attempt watches its row and stops.
//!
//! Store work never runs on a tokio worker as is: the running task uses `spawn_blocking`, and
//! the synchronous operations hand the worker's other tasks off first ([`blocking`]).
//!
//! The manager works on a [`TaskBackend`]; [`conformance::run`] checks that a backend keeps
//! the contract (the SQLite store runs it in its tests).
//!
//! Background tasks share the batch concurrency limit: beyond it they wait as `queued`.
//!
//! The manager runs its tasks through dispatch with the [`Services`] the host gives it at
//! construction; it knows nothing of the host above.

mod approvals;
mod backend;
mod orphans;
mod owner;
mod reader;
mod shared;
mod store;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use tokio::sync::{Semaphore, broadcast, mpsc, oneshot, watch};

pub use backend::{TaskBackend, conformance};
pub(crate) use orphans::take_up_in_background;
pub use reader::TaskReader;
pub(crate) use store::TaskStore;
pub use store::{APPLICATION_ID, BackgroundStatus, StoreError, TASKS_FILE, TaskRecord};

use crate::approval::{ApprovalRequest, Approver};
use crate::delegation::TaskAnchor;
use crate::dispatch::{self, Services, TaskOptions, TaskScope};
use crate::error::DispatchError;
use crate::settings::Delivery;
use crate::types::{ProgressReport, TaskResult, TaskStatus};

/// What `check_task` returns.
#[derive(Debug, Clone, Serialize)]
pub struct TaskCheck {
    /// The stored task.
    pub task: TaskRecord,
    /// Reports that arrived since the last check.
    pub new_reports: Vec<ProgressReport>,
    /// A tool call waiting for the caller's approval (answer with `approve_task`).
    pub pending_approval: Option<ApprovalRequest>,
}

/// A report pushed to subscribers in `wakeup` delivery.
#[derive(Debug, Clone, Serialize)]
pub struct TaskEvent {
    /// The task.
    pub task_id: String,
    /// The report.
    pub report: ProgressReport,
}

/// Why a background operation failed.
#[derive(Debug, thiserror::Error)]
pub enum BackgroundError {
    /// No task with that id.
    #[error("no background task with id '{0}'")]
    NotFound(String),
    /// The task is finished and cannot be changed.
    #[error("task '{id}' is already {status:?} and cannot be {action}")]
    Finished {
        /// Task id.
        id: String,
        /// Its final status.
        status: BackgroundStatus,
        /// What was attempted.
        action: &'static str,
    },
    /// The task could not start.
    #[error(transparent)]
    Dispatch(#[from] DispatchError),
    /// The task is not waiting for an approval.
    #[error("task '{0}' is not waiting for an approval")]
    NoApprovalPending(String),
    /// The task store failed.
    #[error("task store: {0}")]
    Store(String),
    /// A live task that another running host process owns.
    #[error(
        "task '{id}' is running in another host process ({owner}) and cannot be {action} from \
         this one: act on it through that process"
    )]
    OwnedElsewhere {
        /// Task id.
        id: String,
        /// Which process owns it.
        owner: String,
        /// What was attempted.
        action: &'static str,
    },
}

fn store_err(e: impl std::fmt::Display) -> BackgroundError {
    BackgroundError::Store(e.to_string())
}

struct Live {
    handle: tokio::task::JoinHandle<()>,
    scope: Arc<Mutex<Option<Arc<TaskScope>>>>,
}

/// The background task manager of one host.
pub(crate) struct Background {
    /// What dispatch needs to run a task.
    services: Arc<Services>,
    store: Arc<dyn TaskBackend>,
    slots: Arc<Semaphore>,
    live: Arc<Mutex<HashMap<String, Live>>>,
    events: broadcast::Sender<TaskEvent>,
    approvals: approvals::Approvals,
    /// Bumped whenever a task of this manager reaches an end (finished or cancelled), so
    /// [`Background::until_ended`] waits without polling.
    ended: Arc<watch::Sender<u64>>,
}

impl Background {
    /// A manager on any task store (the SQLite [`TaskStore`] or the shared PostgreSQL one) that
    /// runs its tasks with `services`, at most `[dispatch] batch_concurrency` at once.
    pub(crate) fn new(services: Arc<Services>, store: Arc<dyn TaskBackend>) -> Self {
        let concurrency = services.config.dispatch.batch_concurrency;
        Self {
            services,
            store,
            slots: Arc::new(Semaphore::new(concurrency)),
            live: Arc::default(),
            events: broadcast::channel(1024).0,
            approvals: approvals::Approvals::default(),
            ended: Arc::new(watch::channel(0).0),
        }
    }

    fn live(&self) -> std::sync::MutexGuard<'_, HashMap<String, Live>> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts a task; returns its id at once. With the caller's `anchor` the task is a
    /// delegation tree's root from now on, so every attempt of it keeps that anchor.
    pub(crate) fn start(
        &self,
        specialist: &str,
        description: &str,
        anchor: Option<&TaskAnchor>,
    ) -> Result<String, BackgroundError> {
        dispatch::precheck(&self.services, specialist, description, anchor)?;
        let id = uuid::Uuid::now_v7().to_string();
        if let Some(anchor) = anchor {
            dispatch::anchor_task(&self.services, &id, specialist, description, anchor)?;
        }
        let retryable = self
            .services
            .snapshot()
            .resolve(specialist)
            .is_some_and(|p| p.manifest.plugin.retryable);
        blocking(|| {
            if retryable {
                self.store.insert_retryable(&id, specialist, description)
            } else {
                self.store.insert(&id, specialist, description)
            }
        })
        .map_err(store_err)?;
        self.spawn(&id, 1, specialist, description.to_owned());
        Ok(id)
    }

    /// Runs attempt `attempt` of task `id`. Its status and result are written only while the
    /// stored task is still on that attempt and not cancelled, so an attempt that an update or
    /// a cancel ended never overwrites what came after it.
    fn spawn(&self, id: &str, attempt: u32, specialist: &str, brief: String) {
        let (tx, mut rx) = mpsc::unbounded_channel::<ProgressReport>();
        let (scope_tx, scope_rx) = oneshot::channel();
        let scope_slot: Arc<Mutex<Option<Arc<TaskScope>>>> = Arc::default();
        let store = self.store.clone();
        let slots = self.slots.clone();
        let events = self.events.clone();
        let wakeup = self.services.config.dispatch.delivery == Delivery::Wakeup;
        let services = self.services.clone();
        let (id_owned, specialist) = (id.to_owned(), specialist.to_owned());
        let slot_for_task = scope_slot.clone();
        let approver: Arc<dyn Approver> = match self.store.watch_interval() {
            Some(every) => Arc::new(approvals::SharedApprover {
                approvals: self.approvals.clone(),
                store: self.store.clone(),
                every,
            }),
            None => Arc::new(self.approvals.clone()),
        };
        let live = self.live.clone();
        let ended = self.ended.clone();
        let approvals = self.approvals.clone();
        let handle = tokio::spawn(async move {
            let id = id_owned;
            let _permit = slots.acquire().await;
            let started = {
                let id = id.clone();
                off_worker(&store, move |s| s.start_attempt(&id, attempt)).await
            };
            match started {
                Some(Ok(true)) => {}
                Some(Ok(false)) => {
                    // Cancelled, replaced, or (shared store) no longer this host's: never run.
                    tracing::info!(task_id = %id, attempt, "attempt not started: the task moved on");
                    live.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
                    ended.send_modify(|n| *n = n.wrapping_add(1));
                    return;
                }
                Some(Err(e)) => {
                    tracing::error!(task_id = %id, "failed to store the running status: {e}");
                }
                None => tracing::error!(task_id = %id, "storing the running status panicked"),
            }
            let options = TaskOptions {
                task_id: Some(id.clone()),
                subscriber: Some(tx),
                on_scope: Some(scope_tx),
                approver: Some(approver),
                ..TaskOptions::default()
            };
            // Reports are persisted as they arrive, so they survive a restart.
            let persist = {
                let (store, id, events) = (store.clone(), id.clone(), events.clone());
                tokio::spawn(async move {
                    while let Some(report) = rx.recv().await {
                        let stored = {
                            let (id, report) = (id.clone(), report.clone());
                            off_worker(&store, move |s| s.report(&id, &report)).await
                        };
                        if let Some(Err(e)) = stored {
                            tracing::error!(task_id = %id, "failed to store a report: {e}");
                        }
                        if wakeup {
                            let _ = events.send(TaskEvent {
                                task_id: id.clone(),
                                report,
                            });
                        }
                    }
                })
            };
            let scope_watch = tokio::spawn(async move {
                if let Ok(scope) = scope_rx.await {
                    *slot_for_task.lock().unwrap_or_else(|p| p.into_inner()) = Some(scope);
                }
            });
            let run = dispatch::task(&services, &specialist, &brief, options);
            let result = match store.watch_interval() {
                None => Some(run.await),
                Some(every) => tokio::select! {
                    r = run => Some(r),
                    () = moved_on(&store, &id, attempt, every) => None,
                },
            };
            let _ = persist.await;
            let _ = scope_watch.await;
            let Some(result) = result else {
                // Cancelled from another host, or interrupted there after this host's lease
                // expired: the attempt was dropped with its instance; the row says why.
                tracing::info!(task_id = %id, attempt, "attempt stopped: the task moved on in the shared store");
                approvals.forget(&id);
                live.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
                ended.send_modify(|n| *n = n.wrapping_add(1));
                return;
            };
            let (status, result) = match result {
                Ok(r) => (status_of(&r), r),
                Err(e) => (BackgroundStatus::Failed, failed_start(&id, &specialist, &e)),
            };
            let finished = {
                let id = id.clone();
                off_worker(&store, move |s| s.finish(&id, attempt, status, &result)).await
            };
            if let Some(Err(e)) = finished {
                tracing::error!(task_id = %id, "failed to store the result: {e}");
            }
            // This attempt is done; an update would have aborted it before getting here.
            live.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
            ended.send_modify(|n| *n = n.wrapping_add(1));
        });
        self.live().insert(
            id.to_owned(),
            Live {
                handle,
                scope: scope_slot,
            },
        );
    }

    /// Status, new reports and (when done) the result.
    pub(crate) fn check(&self, id: &str) -> Result<TaskCheck, BackgroundError> {
        let task = self.record(id)?;
        let new_reports = blocking(|| self.store.take_new_reports(id)).map_err(store_err)?;
        let pending_approval = match self.approvals.pending(id) {
            Some(here) => Some(here),
            // Waiting on another host, which recorded the request in the shared store.
            None => blocking(|| self.store.pending_approval(id))
                .map_err(store_err)?
                .and_then(|json| serde_json::from_str(&json).ok()),
        };
        Ok(TaskCheck {
            task,
            new_reports,
            pending_approval,
        })
    }

    /// Every report of a task, those already returned by a check included.
    pub(crate) fn reports(&self, id: &str) -> Result<Vec<ProgressReport>, BackgroundError> {
        self.record(id)?;
        blocking(|| self.store.reports(id)).map_err(store_err)
    }

    /// Cancels the running attempt and restarts with the original brief plus every update.
    pub(crate) fn update(&self, id: &str, update: &str) -> Result<u32, BackgroundError> {
        let record = self.record(id)?;
        if !record.status.is_live() && record.status != BackgroundStatus::Interrupted {
            return Err(BackgroundError::Finished {
                id: id.to_owned(),
                status: record.status,
                action: "updated",
            });
        }
        if update.trim().is_empty() {
            return Err(DispatchError::InvalidDescription("the update is empty".into()).into());
        }
        self.refuse_foreign(id, "updated")?;
        self.stop(id);
        let attempt = blocking(|| {
            let attempt = self.store.add_update(id, update)?;
            self.store
                .event(id, "status", &format!("restarted as attempt {attempt}"))?;
            Ok::<_, StoreError>(attempt)
        })
        .map_err(store_err)?;
        let mut updates = record.updates.clone();
        updates.push(update.to_owned());
        let brief = brief_of(&record.description, &updates);
        self.spawn(id, attempt, &record.specialist, brief);
        Ok(attempt)
    }

    /// Answers the approval request a task is waiting on.
    pub(crate) fn approve(&self, id: &str, approved: bool) -> Result<(), BackgroundError> {
        self.record(id)?;
        let verdict = approvals::verdict(approved);
        // On a shared store the answer is recorded there, once, whichever host gives it; the
        // host running the task takes it from there (or at once when that is this host).
        if blocking(|| self.store.answer_approval(id, verdict)).map_err(store_err)? {
            self.approvals.answer(id, approved);
            return Ok(());
        }
        if self.approvals.answer(id, approved) {
            let _ = blocking(|| self.store.event(id, "approval", verdict));
            Ok(())
        } else {
            Err(BackgroundError::NoApprovalPending(id.to_owned()))
        }
    }

    /// Cancels a live task.
    pub(crate) fn cancel(&self, id: &str) -> Result<(), BackgroundError> {
        let record = self.record(id)?;
        if !record.status.is_live() {
            return Err(BackgroundError::Finished {
                id: id.to_owned(),
                status: record.status,
                action: "cancelled",
            });
        }
        // On a shared store the cancel is written to the row and the owner stops its attempt.
        if self.store.watch_interval().is_none() {
            self.refuse_foreign(id, "cancelled")?;
        }
        self.stop(id);
        blocking(|| {
            self.store.set_status(id, BackgroundStatus::Cancelled)?;
            self.store.event(id, "status", "cancelled by the caller")
        })
        .map_err(store_err)?;
        self.ended.send_modify(|n| *n = n.wrapping_add(1));
        Ok(())
    }

    /// A live task that another host process owns, and that process is still there, is
    /// changed only by its owner.
    fn refuse_foreign(&self, id: &str, action: &'static str) -> Result<(), BackgroundError> {
        match blocking(|| self.store.live_elsewhere(id)).map_err(store_err)? {
            Some(owner) => Err(BackgroundError::OwnedElsewhere {
                id: id.to_owned(),
                owner,
                action,
            }),
            None => Ok(()),
        }
    }

    /// The parent stops listening (its session closed): the task runs on, but its reports
    /// fail with "direct parent is not live".
    pub(crate) fn detach(&self, id: &str) -> Result<(), BackgroundError> {
        self.record(id)?;
        if let Some(live) = self.live().get(id)
            && let Some(scope) = live
                .scope
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .as_ref()
        {
            scope.detach_parent();
        }
        Ok(())
    }

    /// Waits until a task is no longer queued or running, without taking it over: any number
    /// of callers may wait, the task can still be updated or cancelled meanwhile, and dropping
    /// the future leaves the task as it is. A task that another live process owns ends only
    /// in that process, so this process is not woken for it; on a shared store it looks again
    /// every [`TaskBackend::watch_interval`].
    pub(crate) async fn until_ended(&self, id: &str) -> Result<TaskRecord, BackgroundError> {
        // Subscribed before reading, so an end written between the read and the wait still
        // wakes this waiter.
        let mut ended = self.ended.subscribe();
        let every = self.store.watch_interval();
        loop {
            let record = self.record(id)?;
            if !record.status.is_live() {
                return Ok(record);
            }
            let woken = match every {
                None => ended.changed().await.is_ok(),
                Some(every) => tokio::select! {
                    changed = ended.changed() => changed.is_ok(),
                    () = tokio::time::sleep(every) => true,
                },
            };
            if !woken {
                return Ok(record);
            }
        }
    }

    pub(crate) fn list(&self, limit: usize) -> Result<Vec<TaskRecord>, BackgroundError> {
        blocking(|| self.store.list(limit)).map_err(store_err)
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<TaskEvent> {
        self.events.subscribe()
    }

    /// Waits until a task is no longer queued or running (for callers that want to block).
    pub(crate) async fn wait(&self, id: &str) -> Result<TaskRecord, BackgroundError> {
        let handle = self.live().remove(id).map(|l| l.handle);
        if let Some(h) = handle {
            let _ = h.await;
        }
        self.record(id)
    }

    fn record(&self, id: &str) -> Result<TaskRecord, BackgroundError> {
        blocking(|| self.store.get(id))
            .map_err(store_err)?
            .ok_or_else(|| BackgroundError::NotFound(id.to_owned()))
    }

    /// Ends the running attempt: the parent is detached first, then the attempt's future is
    /// dropped, which drops the store and the instance with it.
    fn stop(&self, id: &str) {
        self.approvals.forget(id);
        if let Some(live) = self.live().remove(id) {
            if let Some(scope) = live
                .scope
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .as_ref()
            {
                scope.detach_parent();
            }
            live.handle.abort();
        }
    }
}

/// Runs synchronous store work without stalling a tokio worker: on a multi-thread runtime the
/// worker hands its other tasks to another thread first; elsewhere it runs inline.
/// The brief an attempt runs: the task's description, then each update in order.
fn brief_of(description: &str, updates: &[String]) -> String {
    let mut brief = description.to_owned();
    for (i, u) in updates.iter().enumerate() {
        brief.push_str(&format!("\n\nUpdate {}: {u}", i + 1));
    }
    brief
}

fn blocking<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

/// Returns once attempt `attempt` of task `id` is no longer live and this process's in the store
/// (asked every `every`); a failed read counts as still running, as the lease decides.
async fn moved_on(
    store: &Arc<dyn TaskBackend>,
    id: &str,
    attempt: u32,
    every: std::time::Duration,
) {
    loop {
        tokio::time::sleep(every).await;
        let id = id.to_owned();
        if let Some(Ok(false)) =
            off_worker(store, move |s| s.still_running_here(&id, attempt)).await
        {
            return;
        }
    }
}

/// Runs store work on the blocking pool from inside a task; `None` if it panicked.
async fn off_worker<T: Send + 'static>(
    store: &Arc<dyn TaskBackend>,
    f: impl FnOnce(&dyn TaskBackend) -> T + Send + 'static,
) -> Option<T> {
    let store = store.clone();
    tokio::task::spawn_blocking(move || f(store.as_ref()))
        .await
        .ok()
}

fn status_of(r: &TaskResult) -> BackgroundStatus {
    match r.status {
        TaskStatus::Succeeded => BackgroundStatus::Succeeded,
        TaskStatus::Failed => BackgroundStatus::Failed,
        TaskStatus::TimedOut => BackgroundStatus::TimedOut,
    }
}

fn failed_start(id: &str, specialist: &str, e: &DispatchError) -> TaskResult {
    TaskResult::not_started(
        id.to_owned(),
        specialist.to_owned(),
        TaskStatus::Failed,
        Some(e.to_string()),
    )
}

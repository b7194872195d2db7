//! [`TaskBackend`]: what background tasks need from their store, as a trait, so that another
//! backend (PostgreSQL, for teams that outgrow one machine) can stand in for the embedded
//! SQLite [`TaskStore`] without touching dispatch. [`conformance`] is the behaviour every
//! backend must show; the SQLite store runs it in its tests, and a new backend runs the same
//! function.

use super::store::{StoreError, TaskStore};
use super::{BackgroundStatus, TaskRecord};
use crate::types::{ProgressReport, TaskResult};

/// A task store owned by one host process. Every method blocks; the background manager
/// calls them off the tokio workers.
pub trait TaskBackend: Send + Sync {
    /// A new queued task (attempt 1) owned by this process.
    fn insert(&self, id: &str, specialist: &str, description: &str) -> Result<(), StoreError>;
    /// Attempt `attempt` got a slot: running, unless it was cancelled or replaced meanwhile (or,
    /// on a shared store, this host no longer holds it); whether the attempt may run.
    fn start_attempt(&self, id: &str, attempt: u32) -> Result<bool, StoreError>;
    /// The result of attempt `attempt`, unless the task was cancelled or moved on meanwhile.
    fn finish(
        &self,
        id: &str,
        attempt: u32,
        status: BackgroundStatus,
        result: &TaskResult,
    ) -> Result<(), StoreError>;
    /// Sets the status (e.g. cancelled).
    fn set_status(&self, id: &str, status: BackgroundStatus) -> Result<(), StoreError>;
    /// Appends an update and queues the next attempt, owned by this process; its number.
    fn add_update(&self, id: &str, update: &str) -> Result<u32, StoreError>;
    /// Appends an event to the task's log; its sequence number.
    fn event(&self, id: &str, kind: &str, payload: &str) -> Result<u64, StoreError>;
    /// Appends a progress report; its sequence number.
    fn report(&self, id: &str, report: &ProgressReport) -> Result<u64, StoreError>;
    /// Reports not yet returned, moving the task's cursor past them.
    fn take_new_reports(&self, id: &str) -> Result<Vec<ProgressReport>, StoreError>;
    /// Every report of the task, in order, without moving the cursor.
    fn reports(&self, id: &str) -> Result<Vec<ProgressReport>, StoreError>;
    /// One task.
    fn get(&self, id: &str) -> Result<Option<TaskRecord>, StoreError>;
    /// Tasks, newest first.
    fn list(&self, limit: usize) -> Result<Vec<TaskRecord>, StoreError>;
    /// For a live task that another process owns and that process is still there: which one.
    fn live_elsewhere(&self, id: &str) -> Result<Option<String>, StoreError>;
    /// How often a running attempt asks [`TaskBackend::still_running_here`] whether it may go
    /// on, and a waiter looks again for an end written elsewhere: `Some` for a store other hosts
    /// share (where a cancel can come from another host), `None` when only this process ends
    /// its tasks.
    fn watch_interval(&self) -> Option<std::time::Duration> {
        None
    }
    /// A new queued task owned by this process, of a specialist marked `retryable`: on a store
    /// other hosts share, another host takes it up as a new attempt if this one dies while it
    /// is live ([`TaskBackend::claim_orphans`]). On a store only this process uses there is
    /// nobody else to take it up, so it is inserted as any other (and ends `interrupted`).
    fn insert_retryable(
        &self,
        id: &str,
        specialist: &str,
        description: &str,
    ) -> Result<(), StoreError> {
        self.insert(id, specialist, description)
    }
    /// Takes up retryable tasks of `specialists` whose host is gone: each is this process's
    /// from now on, on the attempt to run next. None on a store that only this process uses.
    fn claim_orphans(&self, _specialists: &[String]) -> Result<Vec<TaskRecord>, StoreError> {
        Ok(Vec::new())
    }
    /// Whether attempt `attempt` of task `id` is still live and this process's to run.
    fn still_running_here(&self, _id: &str, _attempt: u32) -> Result<bool, StoreError> {
        Ok(true)
    }
    /// Records the approval request (JSON) task `id` now waits on, for other hosts to see and
    /// answer; its sequence. `None` (the default): only this process holds requests.
    fn request_approval(&self, _id: &str, _request: &str) -> Result<Option<u64>, StoreError> {
        Ok(None)
    }
    /// The recorded request (JSON) task `id` waits on, if any.
    fn pending_approval(&self, _id: &str) -> Result<Option<String>, StoreError> {
        Ok(None)
    }
    /// Records `verdict` for the recorded request of task `id` if one is pending; whether it did.
    fn answer_approval(&self, _id: &str, _verdict: &str) -> Result<bool, StoreError> {
        Ok(false)
    }
    /// The verdict recorded for the request at sequence `request`, once there is one.
    fn approval_answer(&self, _id: &str, _request: u64) -> Result<Option<String>, StoreError> {
        Ok(None)
    }
}

impl TaskStore {
    fn sql(&self) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        |source| StoreError::Sqlite {
            path: self.path().to_path_buf(),
            source,
        }
    }
}

impl TaskBackend for TaskStore {
    fn insert(&self, id: &str, specialist: &str, description: &str) -> Result<(), StoreError> {
        TaskStore::insert(self, id, specialist, description).map_err(self.sql())
    }

    fn start_attempt(&self, id: &str, attempt: u32) -> Result<bool, StoreError> {
        TaskStore::start_attempt(self, id, attempt).map_err(self.sql())
    }

    fn finish(
        &self,
        id: &str,
        attempt: u32,
        status: BackgroundStatus,
        result: &TaskResult,
    ) -> Result<(), StoreError> {
        TaskStore::finish(self, id, attempt, status, result).map_err(self.sql())
    }

    fn set_status(&self, id: &str, status: BackgroundStatus) -> Result<(), StoreError> {
        TaskStore::set_status(self, id, status).map_err(self.sql())
    }

    fn add_update(&self, id: &str, update: &str) -> Result<u32, StoreError> {
        TaskStore::add_update(self, id, update).map_err(self.sql())
    }

    fn event(&self, id: &str, kind: &str, payload: &str) -> Result<u64, StoreError> {
        TaskStore::event(self, id, kind, payload).map_err(self.sql())
    }

    fn report(&self, id: &str, report: &ProgressReport) -> Result<u64, StoreError> {
        TaskStore::report(self, id, report).map_err(self.sql())
    }

    fn take_new_reports(&self, id: &str) -> Result<Vec<ProgressReport>, StoreError> {
        TaskStore::take_new_reports(self, id).map_err(self.sql())
    }

    fn reports(&self, id: &str) -> Result<Vec<ProgressReport>, StoreError> {
        TaskStore::reports(self, id).map_err(self.sql())
    }

    fn get(&self, id: &str) -> Result<Option<TaskRecord>, StoreError> {
        TaskStore::get(self, id).map_err(self.sql())
    }

    fn list(&self, limit: usize) -> Result<Vec<TaskRecord>, StoreError> {
        TaskStore::list(self, limit).map_err(self.sql())
    }

    fn live_elsewhere(&self, id: &str) -> Result<Option<String>, StoreError> {
        TaskStore::live_elsewhere(self, id).map_err(self.sql())
    }
}

/// The behaviour every [`TaskBackend`] must show, as one function a backend's tests call with
/// a way to make a new, empty store. It panics, naming the rule, at the first deviation.
pub mod conformance {
    use super::TaskBackend;
    use crate::background::BackgroundStatus::{self, Cancelled, Queued, Running, Succeeded};
    use crate::types::{ProgressReport, TaskResult, TaskStatus};

    fn result(id: &str, status: TaskStatus) -> TaskResult {
        TaskResult::not_started(id.to_owned(), "probe".into(), status, None)
    }

    fn status(s: &dyn TaskBackend, id: &str) -> BackgroundStatus {
        s.get(id)
            .expect("get")
            .unwrap_or_else(|| panic!("task {id} is missing"))
            .status
    }

    /// Runs every rule, each on a new store from `fresh`.
    pub fn run(fresh: &dyn Fn() -> Box<dyn TaskBackend>) {
        lifecycle(fresh().as_ref());
        stale_attempts(fresh().as_ref());
        reports(fresh().as_ref());
        listing(fresh().as_ref());
    }

    fn lifecycle(s: &dyn TaskBackend) {
        assert!(s.get("t").expect("get").is_none(), "an unknown id is None");
        s.insert("t", "probe", "brief").expect("insert");
        let t = s.get("t").expect("get").expect("inserted");
        assert_eq!(
            (t.status, t.attempt),
            (Queued, 1),
            "a new task is queued, attempt 1"
        );
        assert_eq!(t.description, "brief");
        assert_eq!(
            s.live_elsewhere("t").expect("owner"),
            None,
            "a task this process inserted is its own"
        );
        assert!(
            s.start_attempt("t", 1).expect("start"),
            "a queued attempt starts"
        );
        assert_eq!(status(s, "t"), Running);
        assert!(
            s.still_running_here("t", 1).expect("still here"),
            "a running attempt of this process goes on"
        );
        s.finish("t", 1, Succeeded, &result("t", TaskStatus::Succeeded))
            .expect("finish");
        let t = s.get("t").expect("get").expect("there");
        assert_eq!(t.status, Succeeded);
        assert!(t.result.is_some(), "the result is stored");
    }

    fn stale_attempts(s: &dyn TaskBackend) {
        s.insert("t", "probe", "brief").expect("insert");
        assert!(s.start_attempt("t", 1).expect("start"));
        assert_eq!(s.add_update("t", "narrower").expect("update"), 2);
        assert!(
            !s.start_attempt("t", 1).expect("stale start"),
            "a replaced attempt does not start"
        );
        let t = s.get("t").expect("get").expect("there");
        assert_eq!((t.status, t.attempt), (Queued, 2));
        assert_eq!(t.updates, ["narrower"]);
        s.finish("t", 1, Succeeded, &result("t", TaskStatus::Succeeded))
            .expect("stale finish");
        assert_eq!(
            status(s, "t"),
            Queued,
            "a replaced attempt's result does not overwrite the next attempt"
        );
        s.set_status("t", Cancelled).expect("cancel");
        assert!(
            !s.start_attempt("t", 2).expect("late start"),
            "a cancelled task's attempt does not start"
        );
        s.finish("t", 2, Succeeded, &result("t", TaskStatus::Succeeded))
            .expect("late finish");
        assert_eq!(
            status(s, "t"),
            Cancelled,
            "a cancelled task stays cancelled"
        );
    }

    fn reports(s: &dyn TaskBackend) {
        s.insert("t", "probe", "brief").expect("insert");
        for (n, text) in ["one", "two"].into_iter().enumerate() {
            let report = ProgressReport {
                id: format!("m{n}"),
                sequence: n as u32 + 1,
                output: text.into(),
                at_ms: 1,
            };
            s.report("t", &report).expect("report");
        }
        s.event("t", "status", "not a report").expect("event");
        let texts: Vec<String> = s
            .take_new_reports("t")
            .expect("take")
            .into_iter()
            .map(|r| r.output)
            .collect();
        assert_eq!(
            texts,
            ["one", "two"],
            "reports in order, other events left out"
        );
        assert!(
            s.take_new_reports("t").expect("take").is_empty(),
            "each report is returned once"
        );
        let all: Vec<String> = s
            .reports("t")
            .expect("reports")
            .into_iter()
            .map(|r| r.output)
            .collect();
        assert_eq!(
            all,
            ["one", "two"],
            "every report can be shown again after the checks took them"
        );
        assert!(
            s.reports("other").expect("reports").is_empty(),
            "another task's reports are not shown"
        );
    }

    fn listing(s: &dyn TaskBackend) {
        for id in ["a", "b", "c"] {
            s.insert(id, "probe", "brief").expect("insert");
        }
        let ids: Vec<String> = s.list(2).expect("list").into_iter().map(|t| t.id).collect();
        // Newest first; tasks created in the same millisecond by id, which is time-ordered.
        assert_eq!(ids, ["c", "b"], "newest first, at most `limit`");
    }
}

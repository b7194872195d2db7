//! Sessions: the unit a supervisor works in. A session counts task invocations (for the
//! billable warning), carries the caller's approver for tools that need approval, and offers
//! single and batch dispatch. Every adapter (CLI, MCP, library) dispatches through one.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use futures::future::join_all;
use serde::{Deserialize, Serialize};

pub use crate::approval::{ApprovalRequest, Approver};
use crate::delegation::TaskAnchor;
use crate::dispatch::{self, Services, TaskOptions};
use crate::error::DispatchError;
use crate::types::TaskResult;

/// One task to run: a single task or one child of a batch.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct TaskRequest {
    /// Specialist name or alias.
    pub subagent_type: String,
    /// Self-contained brief.
    pub description: String,
    /// The root anchor's completion criteria should the task delegate
    /// (docs/delegation.md#the-root-anchor); empty: the default one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub completion_criteria: Vec<String>,
    /// The root anchor's constraints: every brief of the task's tree must keep them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub constraints: Vec<String>,
}

impl TaskRequest {
    /// `description` for `specialist`, with the default root anchor.
    pub fn new(specialist: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            subagent_type: specialist.into(),
            description: description.into(),
            completion_criteria: Vec::new(),
            constraints: Vec::new(),
        }
    }

    /// The same request anchored to `anchor`'s criteria and constraints.
    pub fn with_anchor(mut self, anchor: TaskAnchor) -> Self {
        self.completion_criteria = anchor.completion_criteria;
        self.constraints = anchor.constraints;
        self
    }

    /// The caller's root anchor, `None` when it gave no criteria and no constraints.
    pub fn anchor(&self) -> Option<TaskAnchor> {
        let anchor = TaskAnchor {
            completion_criteria: self.completion_criteria.clone(),
            constraints: self.constraints.clone(),
        };
        (!anchor.is_empty()).then_some(anchor)
    }
}

/// The keys of a request's root anchor.
const ANCHOR_KEYS: [&str; 2] = ["completion_criteria", "constraints"];

/// One child's result, in input order.
#[derive(Debug, Clone, Serialize)]
pub struct BatchItem {
    /// 0-based position in the input, as in the `[task i]` label (`[task 0]` … `[task n-1]`).
    pub index: usize,
    /// The specialist asked for.
    pub subagent_type: String,
    /// The result, or why the child could not start.
    pub result: Result<TaskResult, String>,
}

/// The `task` operation's input as an agent sends it (the MCP tool's arguments): either the
/// single fields or `tasks`, never both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskInput {
    /// One specialist, one brief.
    Single(TaskRequest),
    /// A batch.
    Batch(Vec<TaskRequest>),
}

impl TaskInput {
    /// Parses `{"subagent_type", "description"}` (with the optional `completion_criteria` and
    /// `constraints` of its root anchor, arrays of strings) or `{"tasks": [...]}`; both,
    /// neither, or any other key is a clear error.
    pub fn from_json(value: &serde_json::Value) -> Result<Self, DispatchError> {
        let bad = |m: &str| DispatchError::InvalidBatch(m.to_owned());
        let obj = value
            .as_object()
            .ok_or_else(|| bad("the task input must be a JSON object"))?;
        if let Some(key) = obj.keys().find(|k| {
            !matches!(k.as_str(), "subagent_type" | "description" | "tasks")
                && !ANCHOR_KEYS.contains(&k.as_str())
        }) {
            return Err(bad(&format!(
                "unknown field `{key}`; expected `subagent_type` and `description` (and optionally `completion_criteria`, `constraints`), or `tasks`"
            )));
        }
        for key in ANCHOR_KEYS {
            let strings = |v: &serde_json::Value| {
                v.as_array()
                    .is_some_and(|items| items.iter().all(serde_json::Value::is_string))
            };
            if obj.get(key).is_some_and(|v| !strings(v)) {
                return Err(DispatchError::InvalidAnchor(format!(
                    "`{key}` must be an array of strings"
                )));
            }
        }
        if obj.contains_key("tasks") && ANCHOR_KEYS.iter().any(|k| obj.contains_key(*k)) {
            return Err(bad(
                "`completion_criteria` and `constraints` go with `subagent_type`/`description`, or on each item of `tasks`",
            ));
        }
        let single = obj.contains_key("subagent_type") || obj.contains_key("description");
        match (single, obj.get("tasks")) {
            (true, Some(_)) => Err(bad(
                "`tasks` is mutually exclusive with `subagent_type`/`description`: send one task or a batch",
            )),
            (false, None) => Err(bad(
                "missing input: send `subagent_type` and `description`, or `tasks`",
            )),
            (true, None) => serde_json::from_value(value.clone())
                .map(TaskInput::Single)
                .map_err(|e| bad(&format!("single task: {e}"))),
            (false, Some(tasks)) => serde_json::from_value(tasks.clone())
                .map(TaskInput::Batch)
                .map_err(|e| bad(&format!("`tasks`: {e}"))),
        }
    }
}

#[derive(Default)]
struct Counters {
    invocations: AtomicU32,
    warned: AtomicBool,
}

/// A supervisor's session.
#[derive(Clone)]
pub struct Session {
    services: Arc<Services>,
    counters: Arc<Counters>,
    approver: Option<Arc<dyn Approver>>,
}

impl Session {
    pub(crate) fn new(services: Arc<Services>) -> Self {
        Self {
            services,
            counters: Arc::default(),
            approver: None,
        }
    }

    /// Attaches the approver asked about `approval = always` tools in single tasks. Without
    /// one, such calls are refused.
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// Task invocations so far.
    pub fn invocations(&self) -> u32 {
        self.counters.invocations.load(Ordering::SeqCst)
    }

    /// Runs one task. See [`crate::Host::task`].
    pub async fn task(
        &self,
        specialist: &str,
        description: &str,
    ) -> Result<TaskResult, DispatchError> {
        self.task_request(&TaskRequest::new(specialist, description))
            .await
    }

    /// Runs one task, anchored as `request` says. See [`crate::Host::task_request`].
    pub async fn task_request(&self, request: &TaskRequest) -> Result<TaskResult, DispatchError> {
        self.run(request, None).await
    }

    /// Runs one task and sends each progress report it accepts to `reports` as it arrives
    /// (an adapter turns them into notifications). Dropping the future cancels the task.
    pub async fn task_with_reports(
        &self,
        specialist: &str,
        description: &str,
        reports: tokio::sync::mpsc::UnboundedSender<crate::types::ProgressReport>,
    ) -> Result<TaskResult, DispatchError> {
        let request = TaskRequest::new(specialist, description);
        self.run(&request, Some(reports)).await
    }

    /// [`Session::task_with_reports`], anchored as `request` says.
    pub async fn task_request_with_reports(
        &self,
        request: &TaskRequest,
        reports: tokio::sync::mpsc::UnboundedSender<crate::types::ProgressReport>,
    ) -> Result<TaskResult, DispatchError> {
        self.run(request, Some(reports)).await
    }

    async fn run(
        &self,
        request: &TaskRequest,
        subscriber: Option<tokio::sync::mpsc::UnboundedSender<crate::types::ProgressReport>>,
    ) -> Result<TaskResult, DispatchError> {
        let options = TaskOptions {
            approver: self.approver.clone(),
            subscriber,
            anchor: request.anchor(),
            ..TaskOptions::default()
        };
        let (specialist, description) = (&request.subagent_type, &request.description);
        let mut result = dispatch::task(&self.services, specialist, description, options).await?;
        result.warning = self.count();
        Ok(result)
    }

    /// Runs a batch: 1..=`batch_max_size` children, at most `batch_concurrency` at once (the
    /// rest queue), results in input order. A child that fails, traps or times out never
    /// cancels its siblings; a child that cannot start carries its error in its slot.
    pub async fn batch(&self, tasks: &[TaskRequest]) -> Result<Vec<BatchItem>, DispatchError> {
        let max = self.services.config.dispatch.batch_max_size;
        if tasks.is_empty() || tasks.len() > max {
            return Err(DispatchError::InvalidBatch(format!(
                "a batch holds 1 to {max} tasks, this one has {}",
                tasks.len()
            )));
        }
        let limit = Arc::new(tokio::sync::Semaphore::new(
            self.services.config.dispatch.batch_concurrency,
        ));
        // One plugin set for every child: a reload during the batch never mixes versions.
        let snapshot = self.services.snapshot();
        // Each child is its own runtime task, so children run in parallel and one that spins
        // or blocks cannot delay its siblings.
        let children = tasks.iter().enumerate().map(|(i, t)| {
            let limit = limit.clone();
            let services = self.services.clone();
            let snapshot = snapshot.clone();
            let t = t.clone();
            tokio::spawn(async move {
                // Queue until a slot is free; the semaphore is never closed.
                let _slot = limit.acquire().await;
                let options = TaskOptions {
                    in_batch: true,
                    snapshot: Some(snapshot),
                    anchor: t.anchor(),
                    ..TaskOptions::default()
                };
                let result = dispatch::task(&services, &t.subagent_type, &t.description, options)
                    .await
                    .map_err(|e| e.to_string());
                BatchItem {
                    index: i,
                    subagent_type: t.subagent_type,
                    result,
                }
            })
        });
        let joined = join_all(children).await;
        let mut items: Vec<BatchItem> = joined
            .into_iter()
            .enumerate()
            .map(|(i, j)| {
                j.unwrap_or_else(|e| BatchItem {
                    index: i,
                    subagent_type: tasks[i].subagent_type.clone(),
                    result: Err(format!("the host failed while running this child: {e}")),
                })
            })
            .collect();
        for item in &mut items {
            let warning = self.count();
            if let Ok(r) = &mut item.result {
                r.warning = warning;
            }
        }
        Ok(items)
    }

    /// Runs a parsed `task` input: one task, or a batch.
    pub async fn dispatch(&self, input: &TaskInput) -> Result<Vec<BatchItem>, DispatchError> {
        match input {
            TaskInput::Single(t) => {
                let result = self.task_request(t).await?;
                Ok(vec![BatchItem {
                    index: 0,
                    subagent_type: t.subagent_type.clone(),
                    result: Ok(result),
                }])
            }
            TaskInput::Batch(tasks) => self.batch(tasks).await,
        }
    }

    /// Counts one invocation; returns the one-time billable warning when the threshold is passed.
    fn count(&self) -> Option<String> {
        let n = self.counters.invocations.fetch_add(1, Ordering::SeqCst) + 1;
        let threshold = self.services.config.dispatch.billable_threshold;
        if threshold == 0 || n <= threshold {
            return None;
        }
        (!self.counters.warned.swap(true, Ordering::SeqCst)).then(|| {
            format!(
                "this session has made {n} task invocations (threshold {threshold}); each one is billable: wrap up and report back unless more delegation is clearly needed"
            )
        })
    }
}

/// Renders batch results as labelled blocks, `[task i]` first on each.
pub fn render_batch(items: &[BatchItem], render: impl Fn(&TaskResult) -> String) -> String {
    let mut out = String::new();
    for item in items {
        out.push_str(&format!("[task {}] {}\n", item.index, item.subagent_type));
        match &item.result {
            Ok(r) => out.push_str(&render(r)),
            Err(e) => out.push_str(&format!("  error: {e}\n")),
        }
        out.push('\n');
    }
    out
}

//! Dispatch: starting a task in a fresh specialist instance, and the one tool-call path.
//!
//! `call_tool` (in [`tool_call`]) is the only way a connector is ever invoked on behalf of a
//! specialist; it checks the grant, writes receipts (docs/receipts-and-validation.md) and records every call for the
//! task result. [`TaskScope`] is what the runtime's `TaskHost` view of a task is made of
//! (see [`task_host`]). What dispatch needs from the host comes in as [`Services`], so this
//! module imports nothing above it.

mod delegate;
mod gate;
mod in_flight;
mod llm;
mod memory;
#[cfg(test)]
mod memory_tests;
mod open_intent;
mod plugin_wait;
mod services;
mod task_host;
mod tool_call;
mod validation;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use tracing::Instrument;

use crate::types::{
    CallStatus, ProgressReport, Report, TaskResult, TaskStatus, ToolCallRecord, ToolOutcome, Usage,
};
use guild_core::error::DispatchError;
use guild_core::manifest::PluginKind;
use guild_runtime::{Failure, InstanceStats, ReportError, RunAnswer};

use crate::approval::Approver;
use crate::delegation::{TaskAnchor, root_anchor};
use crate::registry::{LoadedPlugin, Snapshot};

pub(crate) use gate::TaskGate;
pub(crate) use in_flight::InFlight;
use open_intent::PendingOutcome;
pub(crate) use services::Services;
use validation::validate_task;

use guild_core::limits::{
    MAX_DESCRIPTION_BYTES, MAX_RECORDED_BYTES, MAX_RECORDED_TOOL_BYTES, MAX_REPORT_BYTES,
    MAX_REPORTS, MAX_REPORTS_TOTAL_BYTES, RECORDS_DROPPED,
};
use guild_core::text::truncate;
use guild_core::types::ToolError;

/// Longest error text kept in one tool-call record, bytes.
const MAX_RECORDED_ERROR_BYTES: usize = 4 * 1024;

/// How a task handles tools whose spec says `approval = always`.
#[derive(Clone)]
pub(crate) enum Approval {
    /// Single task: ask this approver (refuse when there is none).
    Ask(Option<Arc<dyn Approver>>),
    /// Batch child: approvals are impossible; the child fails.
    InBatch,
}

/// What the host knows about a task while it runs.
pub(crate) struct TaskScope {
    pub(crate) task_id: String,
    /// The task's description: the root anchor's objective if it starts children
    /// (docs/delegation.md).
    description: String,
    /// The host services the task uses (ledger, skills, config); never reachable from an
    /// instance.
    pub(crate) services: Arc<Services>,
    /// The specialist running the task: its effective grant is checked on every tool call.
    pub(crate) plugin: Arc<LoadedPlugin>,
    /// The plugin set the task started with; its tool calls use the same versions.
    pub(crate) snapshot: Arc<Snapshot>,
    calls: Mutex<Vec<ToolCallRecord>>,
    /// Outcomes of this task's mutating calls queued in the ledger and not yet known durable:
    /// waited for before the task's result is built ([`TaskScope::settle_outcomes`]).
    outcomes: Mutex<Vec<PendingOutcome>>,
    /// Tool calls attempted, refused ones included (checked against `max_tool_calls`).
    calls_made: AtomicU64,
    /// Bytes of the records kept so far (checked against [`MAX_RECORDED_BYTES`]).
    recorded_bytes: AtomicUsize,
    reports: Mutex<Vec<ProgressReport>>,
    /// Bytes of the reports accepted so far (checked against [`MAX_REPORTS_TOTAL_BYTES`]).
    report_bytes: AtomicUsize,
    /// How `approval = always` tools are handled.
    approval: Approval,
    /// Set when a batch child hit a tool that needs approval.
    batch_refused: Mutex<Option<String>>,
    /// The specialist's skill catalog, built on first use and kept for the task.
    pub(crate) skill_catalog: tokio::sync::OnceCell<guild_skills::Catalog>,
    /// Which skills the task loaded, and the bytes disclosed at each level.
    pub(crate) skills: guild_skills::TaskSkills,
    /// False once whoever started the task stopped listening (cancelled, session closed).
    parent_live: AtomicBool,
    /// Pushes each accepted report to subscribers; closed when the task ends.
    subscriber: Mutex<Option<tokio::sync::mpsc::UnboundedSender<ProgressReport>>>,
    /// Model calls: per-alias usage, tokens spent, transcripts, the deadline ([`llm`]).
    pub(crate) llm: llm::TaskModels,
}

impl TaskScope {
    pub(crate) fn new(
        task_id: String,
        description: String,
        services: Arc<Services>,
        plugin: Arc<LoadedPlugin>,
        snapshot: Arc<Snapshot>,
        approval: Approval,
        subscriber: Option<tokio::sync::mpsc::UnboundedSender<ProgressReport>>,
    ) -> Self {
        let deadline = llm::deadline(&services.config, &plugin);
        Self {
            task_id,
            description,
            services,
            plugin,
            snapshot,
            calls: Mutex::new(Vec::new()),
            outcomes: Mutex::new(Vec::new()),
            calls_made: AtomicU64::new(0),
            recorded_bytes: AtomicUsize::new(0),
            reports: Mutex::new(Vec::new()),
            report_bytes: AtomicUsize::new(0),
            approval,
            batch_refused: Mutex::new(None),
            skill_catalog: tokio::sync::OnceCell::new(),
            skills: guild_skills::TaskSkills::new(),
            parent_live: AtomicBool::new(true),
            subscriber: Mutex::new(subscriber),
            llm: llm::TaskModels::new(deadline),
        }
    }

    fn batch_refusal(&self) -> Option<String> {
        self.batch_refused
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Marks the parent as gone: later reports fail with [`PARENT_GONE`].
    pub(crate) fn detach_parent(&self) {
        self.parent_live.store(false, Ordering::SeqCst);
    }

    /// Accepts one progress report from the specialist.
    pub(crate) fn accept_report(&self, output: String) -> Result<String, ReportError> {
        if !self.parent_live.load(Ordering::SeqCst) {
            return Err(ReportError::ParentGone);
        }
        if output.len() > MAX_REPORT_BYTES {
            return Err(ReportError::Rejected(format!(
                "report of {} bytes is over the limit of {MAX_REPORT_BYTES}",
                output.len()
            )));
        }
        let mut reports = self.reports.lock().unwrap_or_else(|p| p.into_inner());
        if reports.len() >= MAX_REPORTS {
            return Err(ReportError::Rejected(format!(
                "this task already sent {MAX_REPORTS} reports"
            )));
        }
        // Only changed under the `reports` lock held here.
        let sent = self.report_bytes.load(Ordering::SeqCst);
        if sent + output.len() > MAX_REPORTS_TOTAL_BYTES {
            return Err(ReportError::Rejected(format!(
                "report of {} bytes refused: this task's reports already total {sent} bytes and may total at most {MAX_REPORTS_TOTAL_BYTES}; put the rest in the final answer",
                output.len()
            )));
        }
        self.report_bytes
            .store(sent + output.len(), Ordering::SeqCst);
        let report = ProgressReport {
            id: uuid::Uuid::now_v7().to_string(),
            sequence: reports.len() as u32 + 1,
            output,
            at_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
        };
        if let Some(tx) = self
            .subscriber
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
        {
            // A closed receiver means the subscriber went away; the report is still kept.
            let _ = tx.send(report.clone());
        }
        let id = report.id.clone();
        reports.push(report);
        Ok(id)
    }

    fn take_reports(&self) -> Vec<ProgressReport> {
        std::mem::take(&mut *self.reports.lock().unwrap_or_else(|p| p.into_inner()))
    }
    /// Counts one tool call against `[dispatch] max_tool_calls`; past it the call is refused
    /// (the first refusal is recorded, later ones only counted).
    pub(crate) fn count_call(&self, tool: &str, input: &str) -> Result<(), ToolError> {
        let made = self.calls_made.fetch_add(1, Ordering::SeqCst) + 1;
        let max = u64::from(self.services.config.dispatch.max_tool_calls);
        if made <= max {
            // A child's calls are charged to its tree, up the chain.
            return self.charge_tree_call().map_err(|message| {
                self.record_refusal(tool, input, &message);
                ToolError::LimitExceeded(message)
            });
        }
        let message = format!(
            "tool call refused: this task reached its limit of {max} tool calls (`[dispatch] max_tool_calls`); stop calling tools and report what you have"
        );
        if made == max + 1 {
            self.record_refusal(tool, input, &message);
        }
        Err(ToolError::LimitExceeded(message))
    }

    /// Keeps one record, with its guest-supplied text capped; once the task's records passed
    /// [`MAX_RECORDED_BYTES`] their text is replaced by a note (the record still counts).
    fn record(&self, mut record: ToolCallRecord) {
        if record.tool.len() > MAX_RECORDED_TOOL_BYTES {
            record.tool = format!("{}…", truncate(&record.tool, MAX_RECORDED_TOOL_BYTES));
        }
        if let Some(error) = &record.outcome.error
            && error.len() > MAX_RECORDED_ERROR_BYTES
        {
            record.outcome.error = Some(format!(
                "{}…[truncated: {} bytes]",
                truncate(error, MAX_RECORDED_ERROR_BYTES),
                error.len()
            ));
        }
        let o = &record.outcome;
        let size = record.tool.len()
            + record.plugin.len()
            + record.input_sha256.len()
            + o.output.len()
            + [&o.external_id, &o.verifiable_url, &o.preview, &o.error]
                .into_iter()
                .map(|f| f.as_ref().map_or(0, String::len))
                .sum::<usize>();
        let total = self.recorded_bytes.fetch_add(size, Ordering::SeqCst) + size;
        if total > MAX_RECORDED_BYTES {
            let o = &mut record.outcome;
            o.output = String::new();
            o.preview = None;
            o.error = Some(RECORDS_DROPPED.to_owned());
        }
        self.calls
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(record);
    }

    /// Keeps a queued outcome until the task ends.
    fn defer_outcome(&self, pending: PendingOutcome) {
        self.outcomes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(pending);
    }

    /// Waits until every outcome this task queued is committed, so that nothing built from
    /// them (the result, its receipts, the validation) leaves the host before they are
    /// durable. A call whose outcome could not be recorded loses its receipt id: its receipt
    /// reads `unknown`, as when the outcome write fails on the spot.
    async fn settle_outcomes(&self) {
        let pending = std::mem::take(&mut *self.outcomes.lock().unwrap_or_else(|p| p.into_inner()));
        // All asked at once: the first commit takes every one of them still queued.
        let settled = futures::future::join_all(pending.into_iter().map(|outcome| async move {
            let id = outcome.receipt_id.clone();
            (!outcome.settled().await).then_some(id)
        }))
        .await;
        let lost: Vec<String> = settled.into_iter().flatten().collect();
        if lost.is_empty() {
            return;
        }
        let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        for call in calls.iter_mut() {
            if call.receipt_id.as_ref().is_some_and(|id| lost.contains(id)) {
                call.receipt_id = None;
            }
        }
    }

    fn take_calls(&self) -> Vec<ToolCallRecord> {
        std::mem::take(&mut *self.calls.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Records a call refused before any connector ran.
    pub(crate) fn record_refusal(&self, tool: &str, input: &str, error: &str) {
        self.record(ToolCallRecord {
            tool: tool.to_owned(),
            plugin: String::new(),
            mutating: self.snapshot.tool_spec(tool).is_some_and(|s| s.mutating),
            input_sha256: sha256(input),
            outcome: failed_outcome(error),
            receipt_id: None,
            replayed: false,
            wall_ms: 0,
        });
    }

    /// The specialist's name (without version), the receipts' `route`.
    fn specialist_name(&self) -> &str {
        &self.plugin.name
    }
}

fn sha256(s: &str) -> String {
    hex::encode(Sha256::digest(s.as_bytes()))
}

fn failed_outcome(error: &str) -> ToolOutcome {
    ToolOutcome {
        output: String::new(),
        status: CallStatus::Failed,
        external_id: None,
        verifiable_url: None,
        preview: None,
        error: Some(error.to_owned()),
    }
}

/// How a task is run: who approves, whether it is a batch child, where reports go.
#[derive(Default)]
pub(crate) struct TaskOptions {
    pub(crate) approver: Option<Arc<dyn Approver>>,
    pub(crate) in_batch: bool,
    pub(crate) subscriber: Option<tokio::sync::mpsc::UnboundedSender<ProgressReport>>,
    /// Fixed id (background tasks keep theirs across attempts).
    pub(crate) task_id: Option<String>,
    /// Receives the scope as soon as it exists (background tasks detach the parent on cancel).
    pub(crate) on_scope: Option<tokio::sync::oneshot::Sender<Arc<TaskScope>>>,
    /// The plugin set to run on (a batch pins one for all its children); the current one when
    /// `None`.
    pub(crate) snapshot: Option<Arc<Snapshot>>,
    /// A child of a running task (docs/delegation.md): it runs in its parent's slot of the
    /// host's task bound (its parent waits for it), so it takes none of its own.
    pub(crate) child: bool,
    /// A child's end: when the wall time its tree leaves it runs out.
    pub(crate) deadline: Option<tokio::time::Instant>,
    /// The caller's root anchor of a top task (docs/delegation.md#the-root-anchor): the task is
    /// a tree's root from its start.
    pub(crate) anchor: Option<TaskAnchor>,
}

/// Checks that a task could start (description, specialist, roster, the caller's anchor)
/// without starting it.
pub(crate) fn precheck(
    services: &Arc<Services>,
    name: &str,
    description: &str,
    anchor: Option<&TaskAnchor>,
) -> Result<(), DispatchError> {
    check_description(description)?;
    if let Some(anchor) = anchor {
        checked_anchor(description, anchor)?;
    }
    known(services, &services.snapshot(), name).map(|_| ())
}

/// Makes task `task_id`, to run on specialist `name`, a tree's root anchored to its caller's
/// `anchor` before it starts (a background task's, so that every attempt of it keeps the
/// anchor, across a restart of the host too).
pub(crate) fn anchor_task(
    services: &Arc<Services>,
    task_id: &str,
    name: &str,
    description: &str,
    anchor: &TaskAnchor,
) -> Result<(), DispatchError> {
    let plugin = known(services, &services.snapshot(), name)?;
    let anchor = checked_anchor(description, anchor)?;
    delegate::plant_root(services, task_id, &plugin, anchor)
}

/// The caller's root anchor of a top task on `description`, checked.
fn checked_anchor(
    description: &str,
    anchor: &TaskAnchor,
) -> Result<guild_delegate::RootAnchor, DispatchError> {
    root_anchor(description, Some(anchor)).map_err(|e| DispatchError::InvalidAnchor(e.0))
}

fn check_description(description: &str) -> Result<(), DispatchError> {
    if description.trim().is_empty() {
        return Err(DispatchError::InvalidDescription(
            "the description is empty; it must carry all the context the specialist needs".into(),
        ));
    }
    if description.len() > MAX_DESCRIPTION_BYTES {
        return Err(DispatchError::InvalidDescription(format!(
            "{} bytes is over the limit of {MAX_DESCRIPTION_BYTES}",
            description.len()
        )));
    }
    Ok(())
}

fn resolve(snapshot: &Snapshot, name: &str) -> Result<Arc<LoadedPlugin>, DispatchError> {
    let plugin = match snapshot.resolve(name) {
        Some(p) if p.manifest.plugin.kind == PluginKind::Specialist => p.clone(),
        _ => {
            return Err(DispatchError::UnknownSpecialist {
                name: name.to_owned(),
                roster: snapshot.roster().into_iter().map(|r| r.name).collect(),
            });
        }
    };
    if let Some(reason) = snapshot.unavailable(&plugin) {
        return Err(DispatchError::Unavailable {
            name: name.to_owned(),
            reason,
        });
    }
    Ok(plugin)
}

/// [`resolve`], but a specialist whose deferred load failed is refused with its load error.
fn resolve_loaded(
    services: &Services,
    snapshot: &Snapshot,
    name: &str,
) -> Result<Arc<LoadedPlugin>, DispatchError> {
    resolve(snapshot, name).map_err(|e| match services.deferred.failure(name) {
        Some(error) if snapshot.resolve(name).is_none() => DispatchError::Unavailable {
            name: name.to_owned(),
            reason: format!("it failed to load: {error}"),
        },
        _ => e,
    })
}

/// The name of the specialist `name` (name or alias) denotes, loaded in `snapshot` or still
/// queued by the background loader (a task on it will wait for it).
pub(crate) fn known(
    services: &Services,
    snapshot: &Snapshot,
    name: &str,
) -> Result<String, DispatchError> {
    match resolve_loaded(services, snapshot, name) {
        Ok(plugin) => Ok(plugin.name.to_string()),
        Err(e) => match services.deferred.pending(name) {
            Some(q) if q.kind == PluginKind::Specialist => Ok(q.name),
            _ => Err(e),
        },
    }
}

/// Runs one task; see [`crate::Host::task`]: starts the specialist in a fresh instance under
/// the host's task bound and the task's time budget, then builds its result.
pub(crate) async fn task(
    services: &Arc<Services>,
    name: &str,
    description: &str,
    mut options: TaskOptions,
) -> Result<TaskResult, DispatchError> {
    check_description(description)?;
    let anchor = options
        .anchor
        .take()
        .map(|a| checked_anchor(description, &a))
        .transpose()?;
    // A plugin of a lazy start still compiling: the task waits for it (and the plugins it
    // uses) inside its own time, and a pinned set gets them added.
    let waiting = Instant::now();
    let waited = match plugin_wait::ready(services, name, &options).await {
        Ok(waited) => waited,
        Err(timed_out) => return Ok(*timed_out),
    };
    let snapshot = match options.snapshot.clone() {
        Some(pinned) if !waited.is_empty() => {
            Arc::new(pinned.with_added(&services.snapshot(), &waited))
        }
        Some(pinned) => pinned,
        None => services.snapshot(),
    };
    let plugin = resolve_loaded(services, &snapshot, name)?;
    let spent = waiting.elapsed();
    // Held until the instance is gone: the host's bound on running specialists.
    let slot = if options.child {
        None
    } else {
        Some(services.tasks.enter().await?)
    };
    let scope = open_scope(services, plugin, snapshot, description, options);
    if let Some(anchor) = anchor {
        delegate::plant_root(services, &scope.task_id, &scope.plugin.name, anchor)?;
    }
    let guard = delegate::TreeGuard::start(services.clone(), scope.task_id.clone());
    let span =
        tracing::info_span!("task", task_id = %scope.task_id, specialist = %scope.plugin.ident);
    let started = Instant::now();
    let (answer, stats) = run_in_budget(services, &scope, description, spent, span.clone()).await;
    drop(slot);
    let result = finish(services, &scope, answer, stats, started)
        .instrument(span)
        .await;
    guard.done(result.validation.as_ref().map(|v| v.verdict));
    Ok(result)
}

/// The task's scope, with its id (the fixed one of a background task, else a new UUID v7), and
/// its approval mode; handed to `on_scope` as soon as it exists.
fn open_scope(
    services: &Arc<Services>,
    plugin: Arc<LoadedPlugin>,
    snapshot: Arc<Snapshot>,
    description: &str,
    options: TaskOptions,
) -> Arc<TaskScope> {
    let task_id = options
        .task_id
        .unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
    let approval = if options.in_batch {
        Approval::InBatch
    } else {
        Approval::Ask(options.approver)
    };
    let mut scope = TaskScope::new(
        task_id,
        description.to_owned(),
        services.clone(),
        plugin,
        snapshot,
        approval,
        options.subscriber,
    );
    if let Some(deadline) = options.deadline {
        scope.llm.cap_deadline(deadline);
    }
    let scope = Arc::new(scope);
    if let Some(tx) = options.on_scope {
        let _ = tx.send(scope.clone());
    }
    scope
}

/// Runs the specialist on `description` inside `[dispatch] task_timeout_s` (0: no budget),
/// less the time `spent` waiting for its plugins to load; past it the answer is
/// [`Failure::TimedOut`].
async fn run_in_budget(
    services: &Services,
    scope: &Arc<TaskScope>,
    description: &str,
    spent: Duration,
    span: tracing::Span,
) -> (Result<RunAnswer, Failure>, InstanceStats) {
    let budget = services.config.dispatch.task_timeout_s;
    let run = services
        .runtime
        .run_specialist(
            &scope.plugin.runtime,
            scope.clone(),
            &scope.task_id,
            description,
        )
        .instrument(span);
    if budget == 0 {
        return run.await;
    }
    let left = Duration::from_secs(u64::from(budget)).saturating_sub(spent);
    match tokio::time::timeout(left, run).await {
        Ok(done) => done,
        Err(_) => (
            Err(Failure::TimedOut { secs: budget }),
            InstanceStats::default(),
        ),
    }
}

/// The result of a task whose instance is gone: its records, reports, skills and usage, its
/// status from the answer, and the verdict on its report.
async fn finish(
    services: &Arc<Services>,
    scope: &TaskScope,
    answer: Result<RunAnswer, Failure>,
    stats: InstanceStats,
    started: Instant,
) -> TaskResult {
    // The task is over: close the report stream so its readers finish.
    scope
        .subscriber
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take();
    // The outcomes of its mutating calls are durable before anything built on them leaves.
    scope.settle_outcomes().await;
    let tool_calls = scope.take_calls();
    let reports = scope.take_reports();
    let skills = scope.skills.stats();
    let usage = Usage {
        wall_ms: started.elapsed().as_millis() as u64,
        instantiate_us: stats.instantiate_us,
        tool_calls: tool_calls.len() as u32,
        peak_memory_bytes: stats.peak_memory,
        models: scope.take_model_usage(),
    };
    let plugin = &scope.plugin;
    let ident = plugin.ident.to_string();
    let (status, report, error) = outcome(&ident, answer, scope.batch_refusal());
    let mutated = tool_calls.iter().any(|c| c.mutating);
    let attempt_from = services
        .forest
        .lock()
        .nodes
        .get(&scope.task_id)
        .filter(|n| n.parent.is_some())
        .map_or(0, |n| n.attempt_from);
    let (receipts, validation) = validate_task(
        services,
        plugin,
        &scope.task_id,
        report.clone(),
        mutated,
        attempt_from,
    )
    .await;
    tracing::info!(
        status = ?status,
        verdict = %validation.verdict,
        wall_ms = usage.wall_ms,
        tool_calls = usage.tool_calls,
        "task finished"
    );
    TaskResult {
        task_id: scope.task_id.clone(),
        specialist: ident,
        status,
        report,
        error,
        tool_calls,
        reports,
        receipts,
        validation: Some(validation),
        skills,
        warning: None,
        usage,
        transcripts: scope.take_transcripts(),
    }
}

/// A task's status, report and error from the specialist's answer. A batch child that needed
/// an approval (`batch_refusal`) fails as a whole, whatever it reported.
fn outcome(
    ident: &str,
    answer: Result<RunAnswer, Failure>,
    batch_refusal: Option<String>,
) -> (TaskStatus, Option<Report>, Option<String>) {
    let answer = match (answer, batch_refusal) {
        (Ok(_), Some(message)) => Ok(Err(message)),
        (answer, _) => answer,
    };
    match answer {
        Ok(Ok(report)) => (TaskStatus::Succeeded, Some(report), None),
        Ok(Err(message)) => (
            TaskStatus::Failed,
            None,
            Some(format!("specialist '{ident}' failed: {message}")),
        ),
        Err(Failure::TimedOut { secs }) => (
            TaskStatus::TimedOut,
            None,
            Some(format!(
                "specialist '{ident}' timed out after {secs} s; re-route with a narrower scope or a different specialist"
            )),
        ),
        Err(failure) => (
            TaskStatus::Failed,
            None,
            Some(format!("specialist '{ident}' {failure}")),
        ),
    }
}

//! The MCP Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663, as rmcp implements it)
//! over Guild's background tasks. For a client that declared the extension, a single `task`
//! call starts a background task (`Host::start_task`, the same operation as `start_task`) and
//! answers with the task handle; `tasks/get` is `Host::check_task` (the tool result inline once
//! the task ends) and `tasks/cancel` is `Host::cancel_task`. Clients without the extension get
//! the synchronous `task` call and the task tools.
//!
//! SEP-2663 dropped `tasks/list` and `tasks/result`; clients written against the 2025-11-25
//! spec's Tasks still send them, so they are answered too (rmcp hands them over as custom
//! requests): `tasks/list` pages through the data dir's background tasks, newest first, with
//! `nextCursor`; `tasks/result` waits for the task to end (no polling: the host wakes it) and
//! returns the tool result `tasks/get` embeds, or the JSON-RPC error of a task that never gave
//! one. Like `tasks/get`, they answer only clients that declared the extension; others get the
//! method-not-found error rmcp gives for any method it does not know. A task waiting for an
//! approval stays `working` with a status message naming `approve_task`.

use guild_host::TaskRequest;
use guild_host::background::{BackgroundStatus, TaskCheck, TaskRecord};
use guild_host::bundle::time::rfc3339;
use guild_host::text::one_line;
use guild_host::types::TaskStatus as ResultStatus;
use rmcp::model::{
    CallToolResult, CreateTaskResult, CustomRequest, CustomResult, DetailedTask, ErrorCode,
    GetTaskResult, JsonObject, ProtocolVersion, Task, TaskPayload, TaskStatus,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Value, json};

use super::artifacts::Artifacts;
use super::{Connection, success};
use crate::render;

/// How often a client should poll `tasks/get`, milliseconds.
pub(super) const POLL_INTERVAL_MS: u64 = 500;

/// True when the client of this request declared the Tasks extension.
pub(super) fn client_declared(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .is_some_and(|caps| caps.supports_tasks())
}

pub(super) fn time(ms: u64) -> String {
    rfc3339(ms / 1000)
}

/// The task fields every answer carries (status message aside).
fn base_task(record: &TaskRecord, status: TaskStatus) -> Task {
    let mut task = Task::new(
        record.id.clone(),
        status,
        time(record.created_ms),
        time(record.updated_ms),
    );
    task.poll_interval_ms = Some(POLL_INTERVAL_MS);
    task
}

fn task_of(check: &TaskCheck, status: TaskStatus) -> Task {
    let mut task = base_task(&check.task, status);
    task.status_message = status_message(check);
    task
}

/// What a task is doing, in one line: the approval it waits on, else its latest report.
pub(super) fn status_message(check: &TaskCheck) -> Option<String> {
    let record = &check.task;
    match (&check.pending_approval, check.new_reports.last()) {
        (Some(req), _) => Some(format!(
            "waiting for approval of {}: answer with approve_task(task_id: \"{}\", approved: true|false)",
            one_line(&req.tool),
            record.id
        )),
        (None, Some(report)) => Some(one_line(&report.output).into_owned()),
        (None, None) => None,
    }
}

/// The ended task's tool result, as the synchronous `task` call would have returned it (its
/// artifacts linked).
fn tool_result(record: &TaskRecord, artifacts: &Artifacts) -> JsonObject {
    let Some(result) = &record.result else {
        return JsonObject::new();
    };
    let mut out: CallToolResult = success(
        render::task_result(result),
        serde_json::to_value(result).unwrap_or(Value::Null),
    );
    out.content.extend(artifacts.links(result));
    if result.status != ResultStatus::Succeeded {
        out.is_error = Some(true);
    }
    match serde_json::to_value(out) {
        Ok(Value::Object(map)) => map,
        _ => JsonObject::new(),
    }
}

fn detailed(check: &TaskCheck, artifacts: &Artifacts) -> DetailedTask {
    let payload = match check.task.status {
        BackgroundStatus::Queued | BackgroundStatus::Running => TaskPayload::Working,
        // A task that ran to an end (timed out and failed included) completed its tool call.
        BackgroundStatus::Succeeded | BackgroundStatus::Failed | BackgroundStatus::TimedOut => {
            TaskPayload::Completed {
                result: tool_result(&check.task, artifacts),
            }
        }
        BackgroundStatus::Cancelled => TaskPayload::Cancelled,
        BackgroundStatus::Interrupted => TaskPayload::Failed {
            error: match serde_json::to_value(interrupted(&check.task.id)) {
                Ok(Value::Object(map)) => map,
                _ => JsonObject::new(),
            },
        },
    };
    DetailedTask::new(task_of(check, TaskStatus::Working), payload)
}

/// The JSON-RPC error of a task the server stopped while it ran.
fn interrupted(id: &str) -> ErrorData {
    ErrorData::internal_error(
        format!("the server stopped while task '{id}' ran; start it again"),
        None,
    )
}

impl Connection {
    /// A task-augmented `task` call: starts the background task and returns its handle (once
    /// the plugins are loaded, at start-up).
    pub(super) async fn start_as_task(
        &self,
        task: &TaskRequest,
    ) -> Result<CreateTaskResult, String> {
        self.server.check_open()?;
        self.server.ready().await;
        let host = self.server.host();
        let id = host.start_task_request(task).map_err(|e| e.to_string())?;
        let check = host.check_task(&id).map_err(|e| e.to_string())?;
        Ok(CreateTaskResult::new(task_of(&check, TaskStatus::Working)))
    }

    /// `tasks/get`.
    pub(super) fn get_task_state(&self, id: &str) -> Result<GetTaskResult, ErrorData> {
        let check = self
            .server
            .host()
            .check_task(id)
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        Ok(GetTaskResult::new(detailed(&check, &self.server.artifacts)))
    }

    /// `tasks/cancel`: a task already ended stays as it is.
    pub(super) fn cancel_task_run(&self, id: &str) -> Result<(), ErrorData> {
        let host = self.server.host();
        let check = host
            .check_task(id)
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        if check.task.status.is_live() {
            host.cancel_task(id)
                .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        }
        Ok(())
    }
}

/// `tasks/list` and `tasks/result` (2025-11-25 spec), which rmcp passes on as custom requests.
const LIST_METHOD: &str = "tasks/list";
const RESULT_METHOD: &str = "tasks/result";

/// Tasks per `tasks/list` page.
const LIST_PAGE: usize = 20;

/// The key both task-metadata methods carry in `_meta` to name the task a result belongs to.
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

#[derive(serde::Deserialize, Default)]
struct ListParams {
    #[serde(default)]
    cursor: Option<String>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResultParams {
    task_id: String,
}

/// Where the next `tasks/list` page starts: after the last task of the page before. The list
/// is ordered by creation time and id (newest first), so the page boundary stays put while new
/// tasks arrive at the top; `position` (that task's index then, which can only grow) says how
/// far down to read first.
#[derive(Debug, PartialEq)]
struct Cursor {
    position: usize,
    created_ms: u64,
    id: String,
}

impl Cursor {
    fn after(position: usize, record: &TaskRecord) -> Self {
        Self {
            position,
            created_ms: record.created_ms,
            id: record.id.clone(),
        }
    }

    fn encode(&self) -> String {
        format!("{}.{}.{}", self.position, self.created_ms, self.id)
    }

    fn parse(text: &str) -> Result<Self, ErrorData> {
        let mut parts = text.splitn(3, '.');
        let parsed = match (parts.next(), parts.next(), parts.next()) {
            (Some(position), Some(created), Some(id)) if !id.is_empty() => position
                .parse()
                .ok()
                .zip(created.parse().ok())
                .map(|(position, created_ms)| Self {
                    position,
                    created_ms,
                    id: id.to_owned(),
                }),
            _ => None,
        };
        parsed.ok_or_else(|| {
            ErrorData::invalid_params(
                format!(
                    "tasks/list: the cursor '{}' is not one this server gave out: pass the \
                     nextCursor of the page before, or no cursor for the first page",
                    one_line(text)
                ),
                None,
            )
        })
    }

    /// True when `record` comes after this cursor's task in the list.
    fn is_before(&self, record: &TaskRecord) -> bool {
        (record.created_ms, record.id.as_str()) < (self.created_ms, self.id.as_str())
    }
}

/// One page of the task list, newest first, and the cursor of the next one.
fn list_page(
    host: &guild_host::Host,
    cursor: Option<&Cursor>,
) -> Result<(Vec<TaskRecord>, Option<Cursor>), String> {
    // One more than the page tells whether another page follows.
    let mut limit = cursor.map_or(0, |c| c.position + 1) + LIST_PAGE + 1;
    loop {
        let all = host.list_tasks(limit).map_err(|e| e.to_string())?;
        let start = cursor.map_or(0, |c| {
            all.iter().position(|r| c.is_before(r)).unwrap_or(all.len())
        });
        let rest = all.len() - start;
        // Read further down only while the list goes on and the page is not full.
        if all.len() < limit || rest > LIST_PAGE {
            let next = (rest > LIST_PAGE).then(|| {
                let last = start + LIST_PAGE - 1;
                Cursor::after(last, &all[last])
            });
            let page = all.into_iter().skip(start).take(LIST_PAGE).collect();
            return Ok((page, next));
        }
        limit = limit.saturating_mul(2);
    }
}

/// A `tasks/list` entry: the task as `tasks/get` describes it (without the result), with the
/// 2025-11-25 names of the timing fields (`ttl`, `pollInterval`) next to SEP-2663's.
fn list_entry(record: &TaskRecord) -> Value {
    let status = match record.status {
        BackgroundStatus::Queued | BackgroundStatus::Running => TaskStatus::Working,
        BackgroundStatus::Succeeded | BackgroundStatus::Failed | BackgroundStatus::TimedOut => {
            TaskStatus::Completed
        }
        BackgroundStatus::Cancelled => TaskStatus::Cancelled,
        BackgroundStatus::Interrupted => TaskStatus::Failed,
    };
    let mut task = base_task(record, status);
    task.status_message = Some(list_message(record));
    let mut entry = serde_json::to_value(task).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut entry {
        map.insert("ttl".into(), Value::Null);
        map.insert("pollInterval".into(), json!(POLL_INTERVAL_MS));
    }
    entry
}

/// A `tasks/list` entry's status message: Guild's own status and the specialist.
fn list_message(record: &TaskRecord) -> String {
    let guild_status = serde_json::to_value(record.status).unwrap_or(Value::Null);
    format!(
        "{} task of {}",
        guild_status.as_str().unwrap_or("?"),
        one_line(&record.specialist)
    )
}

/// True when the request's session negotiated protocol 2025-11-25, whose Tasks
/// (`capabilities.tasks`) the server offers to every client (see `tasks_wire`).
fn session_2025(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v == ProtocolVersion::V_2025_11_25)
}

impl Connection {
    /// `tasks/list` and `tasks/result` for clients that declared the Tasks extension; any
    /// other custom method, or a client without the extension, gets method-not-found.
    pub(super) async fn tasks_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        if super::tasks_2025::answers(&request.method) {
            return self.tasks_2025(request, context).await;
        }
        let known = [LIST_METHOD, RESULT_METHOD].contains(&request.method.as_str());
        if !known
            && let Some(e) =
                super::malformed::invalid_params(&request.method, request.params.as_ref())
        {
            return Err(e);
        }
        if !known || !(client_declared(&context) || session_2025(&context)) {
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                request.method,
                None,
            ));
        }
        let bad_params = |e: serde_json::Error| {
            ErrorData::invalid_params(format!("{}: invalid params: {e}", request.method), None)
        };
        if request.method == LIST_METHOD {
            let params: ListParams = request.params_as().map_err(bad_params)?.unwrap_or_default();
            return self.list_tasks_page(params.cursor.as_deref());
        }
        let params: ResultParams = request.params_as().map_err(bad_params)?.ok_or_else(|| {
            ErrorData::invalid_params("tasks/result needs params with a taskId", None)
        })?;
        self.task_result_when_ended(&params.task_id, context).await
    }

    /// `tasks/list`: one page of the data dir's background tasks, newest first.
    fn list_tasks_page(&self, cursor: Option<&str>) -> Result<CustomResult, ErrorData> {
        let cursor = cursor.map(Cursor::parse).transpose()?;
        let (page, next) = list_page(self.server.host(), cursor.as_ref())
            .map_err(|e| ErrorData::internal_error(format!("tasks/list: {e}"), None))?;
        let mut answer = json!({"tasks": page.iter().map(list_entry).collect::<Vec<_>>()});
        if let Some(next) = next {
            answer["nextCursor"] = Value::String(next.encode());
        }
        Ok(CustomResult::new(answer))
    }

    /// `tasks/result`: waits until the task ended (or the client cancels this request), then
    /// returns its tool result, or the JSON-RPC error of a task that has none.
    async fn task_result_when_ended(
        &self,
        id: &str,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let record = tokio::select! {
            ended = self.server.host().until_task_ended(id) => {
                ended.map_err(|e| ErrorData::invalid_params(e.to_string(), None))?
            }
            () = context.ct.cancelled() => {
                return Err(ErrorData::invalid_request(
                    format!("tasks/result for task '{id}' was cancelled by the client; the task goes on"),
                    None,
                ));
            }
        };
        match record.status {
            BackgroundStatus::Cancelled => Err(ErrorData::invalid_request(
                format!("task '{id}' was cancelled before it ended: it has no result"),
                Some(json!({"taskId": id, "status": "cancelled"})),
            )),
            BackgroundStatus::Interrupted => Err(interrupted(id)),
            _ => {
                let mut result = tool_result(&record, &self.server.artifacts);
                result.insert("_meta".into(), json!({ RELATED_TASK: {"taskId": id} }));
                Ok(CustomResult::new(Value::Object(result)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_reads_back_as_written() {
        let cursor = Cursor {
            position: 19,
            created_ms: 1_764_000_000_123,
            id: "0199-abc".into(),
        };
        assert_eq!(Cursor::parse(&cursor.encode()).ok(), Some(cursor));
    }

    #[test]
    fn a_cursor_not_given_out_is_refused_by_name() {
        for bad in ["", "x", "1.2", "a.2.id", "1.b.id", "1.2."] {
            let err = Cursor::parse(bad).expect_err(bad);
            assert_eq!(err.code, ErrorCode::INVALID_PARAMS, "{bad}");
            assert!(
                err.message.contains("not one this server gave out"),
                "{bad}"
            );
        }
    }
}

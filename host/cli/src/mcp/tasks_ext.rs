//! The MCP Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663, as rmcp implements it)
//! over Guild's background tasks. For a client that declared the extension, a single `task`
//! call starts a background task (`Host::start_task`, the same operation as `start_task`) and
//! answers with the task handle; `tasks/get` is `Host::check_task` (the tool result inline once
//! the task ends) and `tasks/cancel` is `Host::cancel_task`. Clients without the extension get
//! the synchronous `task` call and the task tools.
//!
//! SEP-2663 has no `tasks/list` and no `tasks/result` (the result comes with `tasks/get`); a
//! task waiting for an approval stays `working` with a status message naming `approve_task`.

use guild_host::background::{BackgroundStatus, TaskCheck};
use guild_host::bundle::time::rfc3339;
use guild_host::text::one_line;
use guild_host::types::TaskStatus as ResultStatus;
use rmcp::model::{
    CallToolResult, CreateTaskResult, DetailedTask, GetTaskResult, JsonObject, Task, TaskPayload,
    TaskStatus,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Value, json};

use super::{Connection, success};
use crate::cli::render;

/// How often a client should poll `tasks/get`, milliseconds.
const POLL_INTERVAL_MS: u64 = 500;

/// True when the client of this request declared the Tasks extension.
pub(super) fn client_declared(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .is_some_and(|caps| caps.supports_tasks())
}

fn time(ms: u64) -> String {
    rfc3339(ms / 1000)
}

fn task_of(check: &TaskCheck, status: TaskStatus) -> Task {
    let record = &check.task;
    let mut task = Task::new(
        record.id.clone(),
        status,
        time(record.created_ms),
        time(record.updated_ms),
    );
    task.poll_interval_ms = Some(POLL_INTERVAL_MS);
    task.status_message = match (&check.pending_approval, check.new_reports.last()) {
        (Some(req), _) => Some(format!(
            "waiting for approval of {}: answer with approve_task(task_id: \"{}\", approved: true|false)",
            one_line(&req.tool),
            record.id
        )),
        (None, Some(report)) => Some(one_line(&report.output).into_owned()),
        (None, None) => None,
    };
    task
}

/// The ended task's tool result, as the synchronous `task` call would have returned it.
fn tool_result(check: &TaskCheck) -> JsonObject {
    let Some(result) = &check.task.result else {
        return JsonObject::new();
    };
    let mut out: CallToolResult = success(
        render::task_result(result),
        serde_json::to_value(result).unwrap_or(Value::Null),
    );
    if result.status != ResultStatus::Succeeded {
        out.is_error = Some(true);
    }
    match serde_json::to_value(out) {
        Ok(Value::Object(map)) => map,
        _ => JsonObject::new(),
    }
}

fn detailed(check: &TaskCheck) -> DetailedTask {
    let payload = match check.task.status {
        BackgroundStatus::Queued | BackgroundStatus::Running => TaskPayload::Working,
        // A task that ran to an end (timed out and failed included) completed its tool call.
        BackgroundStatus::Succeeded | BackgroundStatus::Failed | BackgroundStatus::TimedOut => {
            TaskPayload::Completed {
                result: tool_result(check),
            }
        }
        BackgroundStatus::Cancelled => TaskPayload::Cancelled,
        BackgroundStatus::Interrupted => TaskPayload::Failed {
            error: match json!({
                "code": -32603,
                "message": "the server stopped while the task ran; start it again",
            }) {
                Value::Object(map) => map,
                _ => JsonObject::new(),
            },
        },
    };
    DetailedTask::new(task_of(check, TaskStatus::Working), payload)
}

impl Connection {
    /// A task-augmented `task` call: starts the background task and returns its handle.
    pub(super) fn start_as_task(
        &self,
        specialist: &str,
        description: &str,
    ) -> Result<CreateTaskResult, String> {
        self.server.check_open()?;
        let host = self.server.host();
        let id = host
            .start_task(specialist, description)
            .map_err(|e| e.to_string())?;
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
        Ok(GetTaskResult::new(detailed(&check)))
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

//! The MCP Tasks of protocol 2025-11-25, as the official SDKs' task APIs speak them: a
//! task-augmented `tools/call` of `task` starts a background task and answers
//! `CreateTaskResult` (`{task: {...}}`); `tasks/get` and `tasks/cancel` answer the task itself
//! (`taskId`, `status`, `statusMessage`, `createdAt`, `lastUpdatedAt`, `ttl`,
//! `pollInterval`). `tasks/list` and `tasks/result` are shared with the Tasks extension (see
//! `tasks_ext`). rmcp does not parse these requests, so the wire layer (`tasks_wire`) hands
//! them over under the server's own method names.
//!
//! Only `task` with one task (`subagent_type`, `description`) runs as a task; `execution`
//! marks it `taskSupport: "optional"`, so a client that does not ask gets the synchronous call.

use guild_host::TaskInput;
use guild_host::background::{BackgroundStatus, TaskCheck, TaskRecord};
use rmcp::model::{CustomRequest, CustomResult, ErrorCode, TaskAckResult};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Value, json};

use super::Connection;
use super::tasks_ext::{POLL_INTERVAL_MS, client_declared, status_message, time};
use crate::tasks_wire::{CALL_AS_TASK, CANCEL, GET};

/// The methods this module answers.
pub(super) fn answers(method: &str) -> bool {
    [CALL_AS_TASK, GET, CANCEL].contains(&method)
}

/// A task's status in 2025-11-25's words. A task that ran to an end (failed and timed out
/// included) completed its tool call: `tasks/result` has the result, `isError` when it failed.
pub(super) fn status(status: BackgroundStatus) -> &'static str {
    match status {
        BackgroundStatus::Queued | BackgroundStatus::Running => "working",
        BackgroundStatus::Succeeded | BackgroundStatus::Failed | BackgroundStatus::TimedOut => {
            "completed"
        }
        BackgroundStatus::Cancelled => "cancelled",
        BackgroundStatus::Interrupted => "failed",
    }
}

/// The task as 2025-11-25 describes it. Guild keeps tasks until the data dir is cleaned, so
/// `ttl` is `null` (unlimited).
pub(super) fn task_json(record: &TaskRecord, status: &str, message: Option<String>) -> Value {
    let mut task = json!({
        "taskId": record.id,
        "status": status,
        "createdAt": time(record.created_ms),
        "lastUpdatedAt": time(record.updated_ms),
        "ttl": null,
        "pollInterval": POLL_INTERVAL_MS,
    });
    if let Some(message) = message {
        task["statusMessage"] = Value::String(message);
    }
    task
}

fn task_of(check: &TaskCheck) -> Value {
    task_json(
        &check.task,
        status(check.task.status),
        status_message(check),
    )
}

#[derive(serde::Deserialize)]
struct CallParams {
    name: String,
    #[serde(default)]
    arguments: Option<serde_json::Map<String, Value>>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaskParams {
    task_id: String,
}

impl Connection {
    /// A task-augmented `tools/call`, `tasks/get` or `tasks/cancel` of a 2025-11-25 session.
    pub(super) async fn tasks_2025(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let method = match request.method.as_str() {
            CALL_AS_TASK => "tools/call",
            GET => "tasks/get",
            _ => "tasks/cancel",
        };
        let bad_params = |e: serde_json::Error| {
            ErrorData::invalid_params(format!("{method}: invalid params: {e}"), None)
        };
        let missing = || ErrorData::invalid_params(format!("{method} needs params"), None);
        if request.method == CALL_AS_TASK {
            let params: CallParams = request
                .params_as()
                .map_err(bad_params)?
                .ok_or_else(missing)?;
            return self.call_as_task(params).await.map(CustomResult::new);
        }
        let params: TaskParams = request
            .params_as()
            .map_err(bad_params)?
            .ok_or_else(missing)?;
        let id = params.task_id.as_str();
        // A client of the Tasks extension (SEP-2663) on a 2025-11-25 session gets its shapes.
        let extension = client_declared(&context);
        let json = |value: Result<Value, serde_json::Error>| {
            value.map_err(|e| ErrorData::internal_error(format!("{method}: {e}"), None))
        };
        let answer = match (request.method == GET, extension) {
            (true, true) => json(serde_json::to_value(self.get_task_state(id)?))?,
            (false, true) => {
                self.cancel_task_run(id)?;
                json(serde_json::to_value(TaskAckResult::new()))?
            }
            (true, false) => task_of(&self.check(id)?),
            (false, false) => self.cancel_2025(id)?,
        };
        Ok(CustomResult::new(answer))
    }

    fn check(&self, id: &str) -> Result<TaskCheck, ErrorData> {
        self.server
            .host()
            .check_task(id)
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))
    }

    /// `tasks/cancel`: the task, cancelled. One that already ended cannot be (2025-11-25:
    /// invalid params).
    fn cancel_2025(&self, id: &str) -> Result<Value, ErrorData> {
        let check = self.check(id)?;
        if !check.task.status.is_live() {
            return Err(ErrorData::invalid_params(
                format!(
                    "task '{id}' already ended ({}): there is nothing to cancel",
                    status(check.task.status)
                ),
                Some(json!({"taskId": id})),
            ));
        }
        self.server
            .host()
            .cancel_task(id)
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        let after = self.check(id)?;
        // The cancel is taken: a task still winding down reads as cancelled.
        Ok(task_json(&after.task, "cancelled", status_message(&after)))
    }

    /// A task-augmented `tools/call`: `task` with one task starts it in the background.
    async fn call_as_task(&self, params: CallParams) -> Result<Value, ErrorData> {
        if params.name != "task" {
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!(
                    "tools/call: '{}' does not run as a task (only `task` has \
                     execution.taskSupport); call it without `task`",
                    guild_host::text::one_line(&params.name)
                ),
                None,
            ));
        }
        let args = Value::Object(params.arguments.unwrap_or_default());
        let depth = self.server.host.config().serve.max_json_depth;
        if guild_host::serve::value_depth_exceeds(&args, depth) {
            return Err(ErrorData::invalid_params(
                format!(
                    "the arguments of 'task' nest deeper than {depth} levels (`[serve] max_json_depth` in guild.toml)"
                ),
                None,
            ));
        }
        let task = match TaskInput::from_json(&args) {
            Ok(TaskInput::Single(task)) => task,
            Ok(TaskInput::Batch(_)) => {
                return Err(ErrorData::invalid_params(
                    "tools/call: a batch (`tasks`) does not run as one task; send each task as \
                     its own task-augmented call, or the batch without `task`",
                    None,
                ));
            }
            Err(e) => return Err(ErrorData::invalid_params(format!("task: {e}"), None)),
        };
        self.server
            .check_open()
            .map_err(|e| ErrorData::internal_error(e, None))?;
        self.server.ready().await;
        let host = self.server.host();
        let id = host
            .start_task_request(&task)
            .map_err(|e| ErrorData::invalid_params(format!("task: {e}"), None))?;
        Ok(json!({ "task": task_of(&self.check(&id)?) }))
    }
}

//! The tool calls, one function per tool: each parses its arguments, calls one `Host`
//! operation and renders the result with the CLI's renderer. `Err(message)` becomes an
//! `isError` result.

use guild_host::background::{BackgroundStatus, TaskCheck, TaskRecord};
use guild_host::session::render_batch;
use guild_host::text::one_line;
use guild_host::types::{ProgressReport, TaskStatus};
use guild_host::{ApprovalRequest, Host, TaskInput, TaskRequest};
use rmcp::RoleServer;
use rmcp::model::{CallToolResult, ProgressNotificationParam, ProgressToken};
use rmcp::service::RequestContext;
use serde_json::{Value, json};

use super::approvals::{client_elicits, elicit};
use super::{Connection, Running, success};
use crate::render;

fn str_arg<'a>(args: &'a Value, key: &str) -> Result<&'a str, String> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("missing string argument `{key}`"))
}

fn limit_arg(args: &Value) -> Result<usize, String> {
    match args.get("limit") {
        None | Some(Value::Null) => Ok(20),
        Some(v) => v
            .as_u64()
            .filter(|n| (1..=1000).contains(n))
            .map(|n| n as usize)
            .ok_or_else(|| "`limit` must be an integer from 1 to 1000".to_owned()),
    }
}

fn to_json(value: &impl serde::Serialize) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn status_name(s: BackgroundStatus) -> String {
    to_json(&s).as_str().unwrap_or("unknown").to_owned()
}

fn record_text(t: &TaskRecord) -> String {
    let mut out = format!(
        "task {} on {}: {} (attempt {}{})\n",
        t.id,
        one_line(&t.specialist),
        status_name(t.status),
        t.attempt,
        match t.updates.len() {
            0 => String::new(),
            n => format!(", {n} update(s)"),
        }
    );
    if let Some(r) = &t.result {
        out.push_str(&render::task_result(r));
    }
    out
}

fn check_text(check: &TaskCheck) -> String {
    let mut out = record_text(&check.task);
    for r in &check.new_reports {
        out.push_str(&format!(
            "  report {}: {}\n",
            r.sequence,
            one_line(&r.output)
        ));
    }
    if let Some(req) = &check.pending_approval {
        out.push_str(&approval_text(req));
    }
    out
}

fn approval_text(req: &ApprovalRequest) -> String {
    format!(
        "  approval needed: {} wants to call {} ({}) with {}; answer with approve_task(task_id: \"{}\", approved: true|false)\n",
        one_line(&req.specialist),
        one_line(&req.tool),
        one_line(&req.description),
        one_line(&req.input),
        req.task_id
    )
}

impl Connection {
    /// Runs tool `name` with `args`: each tool is one function below.
    pub(super) async fn call(
        &self,
        name: &str,
        args: &Value,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, String> {
        let host = self.server.host();
        match name {
            "task" => self.task(args, context).await,
            "start_task" => self.start_task(args).await,
            "check_task" => self.check_task(args),
            "update_task" => self.update_task(args),
            "cancel_task" => cancel_task(host, args),
            "list_tasks" => list_tasks(host, args),
            "task_tree" => task_tree(host, args),
            "approve_task" => self.approve_task(args),
            "list_skills" | "load_skill" | "read_skill_resource" => self.skill(name, args).await,
            "read_memory" => super::memory::read(host.memory(), args).await,
            "update_memory" => super::memory::update(host.memory(), args).await,
            "receipts" => receipts(host, args).await,
            "verify_receipt" => match args.get("receipt_id").and_then(Value::as_str) {
                Some(id) => verify_receipt(host, id).await,
                None => verify_chain(host).await,
            },
            "reload" => self.reload().await,
            other => Err(format!(
                "unknown tool `{other}`; call tools/list for the tools this server offers"
            )),
        }
    }

    /// `start_task`: a background task; its id at once (once the plugins are loaded, at
    /// start-up). Its optional `completion_criteria` and `constraints` anchor its tree.
    async fn start_task(&self, args: &Value) -> Result<CallToolResult, String> {
        self.server.check_open()?;
        str_arg(args, "subagent_type")?;
        str_arg(args, "description")?;
        let request = match TaskInput::from_json(args).map_err(|e| e.to_string())? {
            TaskInput::Single(request) => request,
            TaskInput::Batch(_) => {
                return Err("start_task starts one task: send `subagent_type` and `description`, not `tasks`".into());
            }
        };
        self.server.ready().await;
        let id = self
            .server
            .host()
            .start_task_request(&request)
            .map_err(|e| e.to_string())?;
        Ok(success(
            format!("started task {id}; follow it with check_task\n"),
            json!({ "task_id": id }),
        ))
    }

    /// `check_task`: the approval the task waits on, or its status and new reports (every
    /// report with `all_reports`).
    fn check_task(&self, args: &Value) -> Result<CallToolResult, String> {
        let host = self.server.host();
        let id = str_arg(args, "task_id")?;
        if let Some(req) = self.approvals.pending(id) {
            return Ok(success(
                approval_text(&req),
                json!({ "pending_approval": req }),
            ));
        }
        let check = host.check_task(id).map_err(|e| e.to_string())?;
        let (mut text, mut structured) = (check_text(&check), to_json(&check));
        // An ended task's artifacts are linked as the `task` call links them.
        let links = check
            .task
            .result
            .as_ref()
            .map(|result| self.server.artifacts.links(result))
            .unwrap_or_default();
        // Every report again, those earlier checks returned included (an interrupted
        // task's reports stay readable).
        if args.get("all_reports").and_then(Value::as_bool) == Some(true) {
            let all = host.task_reports(id).map_err(|e| e.to_string())?;
            text.push_str(&format!("every report ({}):\n", all.len()));
            for r in &all {
                text.push_str(&format!(
                    "  report {}: {}\n",
                    r.sequence,
                    one_line(&r.output)
                ));
            }
            structured["reports"] = to_json(&all);
        }
        let mut out = success(text, structured);
        out.content.extend(links);
        Ok(out)
    }

    /// `update_task`: restarts a background task with the update appended to its brief.
    fn update_task(&self, args: &Value) -> Result<CallToolResult, String> {
        self.server.check_open()?;
        let id = str_arg(args, "task_id")?;
        let attempt = self
            .server
            .host()
            .update_task(id, str_arg(args, "update")?)
            .map_err(|e| e.to_string())?;
        Ok(success(
            format!("task {id}: attempt {attempt} started\n"),
            json!({ "task_id": id, "attempt": attempt }),
        ))
    }

    /// `approve_task`: answers a pending approval, this connection's own (asked while its
    /// `task` call runs) or the host's (a background task's).
    fn approve_task(&self, args: &Value) -> Result<CallToolResult, String> {
        let id = str_arg(args, "task_id")?;
        let approved = args
            .get("approved")
            .and_then(Value::as_bool)
            .ok_or("missing boolean argument `approved`")?;
        if !self.approvals.answer(id, approved) {
            self.server
                .host()
                .approve_task(id, approved)
                .map_err(|e| e.to_string())?;
        }
        let word = if approved { "approved" } else { "denied" };
        Ok(success(
            format!("task {id}: call {word}\n"),
            json!({ "task_id": id, "approved": approved }),
        ))
    }

    /// `reload`: loads plugins and config again; an `isError` result when something was
    /// rejected.
    async fn reload(&self) -> Result<CallToolResult, String> {
        let report = self.server.reload().await.map_err(|e| format!("{e:#}"))?;
        let mut result = success(report.render(), to_json(&report));
        if !report.errors.is_empty() {
            result.is_error = Some(true);
        }
        Ok(result)
    }

    /// `task`: one task (with progress notifications and cancellation) or a batch.
    async fn task(
        &self,
        args: &Value,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, String> {
        self.server.check_open()?;
        let input = TaskInput::from_json(args).map_err(|e| e.to_string())?;
        let _running = Running::start(&self.server.running);
        let (request, cancelled) = (context.clone(), context.ct.clone());
        let work = async {
            // At start-up the task waits for the plugins (cancellable like the task itself).
            self.server.ready().await;
            match &input {
                TaskInput::Single(t) => self.single(t, request).await,
                TaskInput::Batch(tasks) => {
                    let items = self.session.batch(tasks).await.map_err(|e| e.to_string())?;
                    let text = render_batch(&items, render::task_result);
                    let mut out = success(text, json!({ "tasks": items }));
                    for item in &items {
                        if let Ok(result) = &item.result {
                            out.content.extend(self.server.artifacts.links(result));
                        }
                    }
                    Ok(out)
                }
            }
        };
        tokio::select! {
            result = work => result,
            // The client sent `notifications/cancelled`: dropping the work cancels the task.
            () = cancelled.cancelled() => {
                tracing::info!("task call cancelled by the client");
                Err("cancelled by the client".to_owned())
            }
        }
    }

    async fn single(
        &self,
        task: &TaskRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, String> {
        let token = context.meta.get_progress_token();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<ProgressReport>();
        let mut asked = self.approvals.asked.subscribe();
        let run = self.session.task_request_with_reports(task, tx);
        tokio::pin!(run);
        let mut step = 0.0;
        let result = loop {
            tokio::select! {
                // Reports first: each is sent before the result that follows it.
                biased;
                Some(report) = rx.recv() => {
                    step += 1.0;
                    notify(&context, token.as_ref(), step, one_line(&report.output).into_owned()).await;
                }
                Ok(req) = asked.recv() => {
                    notify(&context, token.as_ref(), step, approval_text(&req).trim().to_owned()).await;
                    if client_elicits(&context.peer) && self.approvals.claim_for_elicitation(&req.task_id) {
                        self.ask_by_elicitation(&context, req);
                    }
                }
                result = &mut run => break result,
            }
        };
        // Reports sent just before the task ended are still waiting in the channel.
        while let Ok(report) = rx.try_recv() {
            step += 1.0;
            notify(
                &context,
                token.as_ref(),
                step,
                one_line(&report.output).into_owned(),
            )
            .await;
        }
        let result = result.map_err(|e| e.to_string())?;
        let mut out = success(render::task_result(&result), to_json(&result));
        out.content.extend(self.server.artifacts.links(&result));
        if result.status != TaskStatus::Succeeded {
            out.is_error = Some(true);
        }
        Ok(out)
    }

    /// Sends `elicitation/create` for `req` without holding up the task's other events; the
    /// user's answer approves or refuses the call.
    fn ask_by_elicitation(&self, context: &RequestContext<RoleServer>, req: ApprovalRequest) {
        let (peer, approvals) = (context.peer.clone(), self.approvals.clone());
        tokio::spawn(async move {
            if let Some(approved) = elicit(&peer, &req).await {
                tracing::info!(task_id = %req.task_id, approved, "approval answered by elicitation");
                approvals.answer(&req.task_id, approved);
            }
        });
    }

    async fn skill(&self, name: &str, args: &Value) -> Result<CallToolResult, String> {
        let skills = self.server.host().skills();
        let catalog = skills.catalog(None).await.map_err(|e| e.to_string())?;
        match name {
            "list_skills" => {
                let d = skills.disclose_catalog(&catalog, &self.skills);
                Ok(success(
                    d.content.clone(),
                    json!({
                        "skills": catalog.items(),
                        "omitted": catalog.omitted(),
                        "bytes": d.bytes,
                        "approx_tokens": d.approx_tokens,
                    }),
                ))
            }
            "load_skill" => {
                let d = skills
                    .load(&catalog, &self.skills, str_arg(args, "name")?)
                    .await
                    .map_err(|e| e.to_string())?;
                Ok(success(d.content.clone(), to_json(&d)))
            }
            _ => {
                let d = skills
                    .read(
                        &catalog,
                        &self.skills,
                        str_arg(args, "name")?,
                        str_arg(args, "path")?,
                    )
                    .await
                    .map_err(|e| e.to_string())?;
                let text = String::from_utf8(d.content.clone()).map_err(|_| {
                    "this resource is binary; read it with `guild skills read`".to_owned()
                })?;
                Ok(success(
                    text.clone(),
                    json!({ "skill": d.skill, "content": text, "bytes": d.bytes, "approx_tokens": d.approx_tokens }),
                ))
            }
        }
    }
}

/// A progress notification, when the client asked for them with a progress token.
async fn notify(
    context: &RequestContext<RoleServer>,
    token: Option<&ProgressToken>,
    progress: f64,
    message: String,
) {
    let Some(token) = token else { return };
    let mut param = ProgressNotificationParam::new(token.clone(), progress);
    param.message = Some(message);
    if let Err(e) = context.peer.notify_progress(param).await {
        tracing::debug!("failed to send a progress notification: {e}");
    }
}

/// `cancel_task`: cancels a live background task.
fn cancel_task(host: &Host, args: &Value) -> Result<CallToolResult, String> {
    let id = str_arg(args, "task_id")?;
    host.cancel_task(id).map_err(|e| e.to_string())?;
    Ok(success(
        format!("task {id} cancelled\n"),
        json!({ "task_id": id, "cancelled": true }),
    ))
}

/// `list_tasks`: background tasks, newest first.
fn list_tasks(host: &Host, args: &Value) -> Result<CallToolResult, String> {
    let tasks = host
        .list_tasks(limit_arg(args)?)
        .map_err(|e| e.to_string())?;
    let text: String = tasks
        .iter()
        .map(|t| {
            format!(
                "{}  {:<11} {:<10} attempt {}\n",
                t.id,
                status_name(t.status),
                one_line(&t.specialist),
                t.attempt
            )
        })
        .collect();
    Ok(success(text, json!({ "tasks": tasks })))
}

/// `receipts`: the newest receipts, or one task's.
async fn receipts(host: &Host, args: &Value) -> Result<CallToolResult, String> {
    let task = args.get("task_id").and_then(Value::as_str);
    let receipts = host
        .receipts(task, limit_arg(args)?)
        .await
        .map_err(|e| format!("{e:#}"))?;
    // A delegated task's receipt names its chain, as the ledger hashed it.
    let mut text: String = receipts
        .iter()
        .map(|r| match r.chain.as_slice() {
            [] => format!("{} {}\n", render::receipt_line(r), r.time),
            chain => format!(
                "{} {}\n  chain: {}\n",
                render::receipt_line(r),
                r.time,
                chain.join(" → ")
            ),
        })
        .collect();
    if receipts.is_empty() {
        text.push_str("no receipts\n");
    }
    Ok(success(text, json!({ "receipts": receipts })))
}

/// `task_tree`: the delegation tree a task belongs to, as `guild tasks tree` shows it (the
/// same text; its `TreeView` as structured content). Read-only.
fn task_tree(host: &Host, args: &Value) -> Result<CallToolResult, String> {
    let id = str_arg(args, "task_id")?;
    let tree = host.task_tree(id).ok_or_else(|| {
        format!("task {id} is in no delegation tree: it started no child and is no child")
    })?;
    Ok(success(tree.to_text(), to_json(&tree)))
}

/// `verify_receipt` with `receipt_id`: what the receipt's verifiable URL shows.
async fn verify_receipt(host: &Host, id: &str) -> Result<CallToolResult, String> {
    let check = host
        .verify_receipt(id)
        .await
        .map_err(|e| format!("{e:#}"))?;
    Ok(success(
        format!("{}: {}\n", check.status, one_line(&check.message)),
        to_json(&check),
    ))
}

/// `verify_receipt` without `receipt_id`: the whole receipts chain checked.
async fn verify_chain(host: &Host) -> Result<CallToolResult, String> {
    let report = host.verify_receipts().await.map_err(|e| format!("{e:#}"))?;
    let text = match report.ok {
        true => format!(
            "ok: {} entries, chain intact (head {})\n",
            report.entries, report.head_hash
        ),
        false => format!(
            "TAMPERED: first bad entry at sequence {}: {}\n",
            report
                .first_bad_sequence
                .map_or("?".to_owned(), |s| s.to_string()),
            report.reason.as_deref().unwrap_or("")
        ),
    };
    Ok(success(text, to_json(&report)))
}

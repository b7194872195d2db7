//! The host side of the plugin-facing WIT interfaces: `log`, `config`, `http`, `tools` and
//! `progress`, in the latest `guild:plugin` version (older versions adapt onto these).
//!
//! Each function checks the instance's effective capabilities first and answers a refusal as a
//! guest-visible `host-error::denied` naming plugin, capability and target (a WIT error, not a
//! trap: the plugin can act on it). Every decision is traced with the same fields.
//!
//! The plugin's granted secrets are kept out of what crosses here ([`guild_http::redact`] says
//! why each path redacts or refuses): redacted from log messages, progress reports, HTTP
//! answers and errors and tool outcomes handed in; a tool input carrying one is refused.

use guild_core::capability::{denied, trace_decision};
use std::borrow::Cow;

use guild_core::text::truncate;
use guild_core::types::{Approval, CallStatus as Status, ToolError, ToolOutcome, ToolSpec};
use guild_http::redact::Redactor;
use guild_http::{HttpError, OutboundRequest, OutboundResponse};

use crate::bindings::types::{
    CallStatus, HostError, ProgressError, ToolOutcome as WitOutcome, ToolSpec as WitSpec,
};
use crate::bindings::{config, http, log, progress, tools, types};
use crate::state::StoreState;
use crate::task::ReportError;

/// Longest log message forwarded; the rest is cut.
const MAX_LOG_CHARS: usize = 8 * 1024;

/// Most lines one log message becomes; the rest are counted in a last line.
const MAX_LOG_LINES: usize = 200;

impl types::Host for StoreState {}

impl log::Host for StoreState {
    async fn log(&mut self, level: log::Level, message: String) -> wasmtime::Result<()> {
        // Redacted whole (before the cut, which could split a secret). A message of several
        // lines (a Python traceback, a JavaScript stack) is logged line by line, so the author
        // reads it as written; each line is escaped and is its own event carrying the plugin,
        // so a guest can neither drive a terminal nor write a line that looks like the host's.
        let message = self.redactor.redact_str(&message);
        let message = truncate(&message, MAX_LOG_CHARS);
        let message = message.strip_suffix('\n').unwrap_or(message);
        let plugin = &*self.plugin;
        let mut lines = message.split('\n');
        for line in lines.by_ref().take(MAX_LOG_LINES) {
            let line = line.strip_suffix('\r').unwrap_or(line);
            guest_event(level, plugin, &guild_core::text::one_line(line));
        }
        let more = lines.count();
        if more > 0 {
            guest_event(level, plugin, &format!("[{more} more lines not shown]"));
        }
        Ok(())
    }
}

/// One line of a guest's log message, at its level.
fn guest_event(level: log::Level, plugin: &str, line: &str) {
    match level {
        log::Level::Trace => tracing::trace!(target: "guild::guest", plugin, "{line}"),
        log::Level::Debug => tracing::debug!(target: "guild::guest", plugin, "{line}"),
        log::Level::Info => tracing::info!(target: "guild::guest", plugin, "{line}"),
        log::Level::Warn => tracing::warn!(target: "guild::guest", plugin, "{line}"),
        log::Level::Error => tracing::error!(target: "guild::guest", plugin, "{line}"),
    }
}

impl config::Host for StoreState {
    async fn get(&mut self, key: String) -> wasmtime::Result<Result<String, HostError>> {
        let answer = match self.caps.config.get(&key) {
            Some(v) => Ok(v.clone()),
            None => Err(HostError::Denied(denied(
                &self.name,
                "config",
                &key,
                "key not granted",
            ))),
        };
        trace_decision(&self.plugin, "config", &key, answer.is_ok());
        self.counted(answer)
    }
}

impl http::Host for StoreState {
    async fn send(
        &mut self,
        request: http::Request,
    ) -> wasmtime::Result<Result<http::Response, HostError>> {
        let outbound = OutboundRequest {
            method: request.method,
            url: request.url,
            headers: request.headers,
            body: request.body.unwrap_or_default().into(),
        };
        let rt = self.rt.clone();
        let result = rt.http().send(&self.caps.http, outbound).await;
        let answer = match result {
            Ok(resp) => {
                let resp = redact_response(&self.redactor, resp);
                Ok(http::Response {
                    status: resp.status,
                    headers: resp.headers,
                    body: resp.body.to_vec(),
                })
            }
            Err(e) => Err(redact_host_error(&self.redactor, http_error(e))),
        };
        self.counted(answer)
    }
}

impl tools::Host for StoreState {
    async fn granted(&mut self) -> wasmtime::Result<Vec<tools::GrantedTool>> {
        let Some(task) = &self.task else {
            return Ok(Vec::new());
        };
        Ok(task
            .granted_tools()
            .into_iter()
            .map(|(name, spec)| tools::GrantedTool {
                name,
                spec: wit_spec(&spec),
            })
            .collect())
    }

    async fn call(
        &mut self,
        name: String,
        input: String,
        idempotency_key: Option<String>,
    ) -> wasmtime::Result<Result<WitOutcome, HostError>> {
        let Some(task) = self.task.clone() else {
            trace_decision(&self.plugin, "tools", &name, false);
            return self.counted(Err(HostError::Denied(denied(
                &self.name,
                "tools",
                &name,
                "only specialists running a task can call tools",
            ))));
        };
        // Refused, not redacted: a connector must never act on an input the specialist did not
        // send, and nothing of it reaches a receipt.
        let carried = [name.as_bytes(), input.as_bytes()]
            .into_iter()
            .chain(idempotency_key.as_deref().map(str::as_bytes))
            .find_map(|field| self.redactor.find(field));
        if let Some(secret) = carried {
            let shown = self.redactor.redact_str(&name);
            trace_decision(&self.plugin, "tools", &shown, false);
            let refusal = HostError::Denied(denied(
                &self.name,
                "tools",
                &shown,
                &format!(
                    "the call carries the value of secret `{secret}`, which is only ever sent \
                     to its own hosts"
                ),
            ));
            return self.counted(Err(refusal));
        }
        // The grant is checked inside the one tool-call path, behind this call; its refusals
        // (denied, or past the task's tool-call limit) also count against this instance.
        let redactor = self.redactor.clone();
        let answer = task
            .call_tool(name, input, idempotency_key)
            .await
            .map(|o| wit_outcome(&redact_outcome(&redactor, o)))
            .map_err(|e| redact_host_error(&redactor, tool_error(e)));
        self.counted(answer)
    }
}

impl progress::Host for StoreState {
    async fn send(&mut self, output: String) -> wasmtime::Result<Result<String, ProgressError>> {
        let Some(task) = &self.task else {
            return Ok(Err(ProgressError::ParentGone));
        };
        let allowed = self.caps.report;
        trace_decision(&self.plugin, "report", "send", allowed);
        if !allowed {
            self.count_refusal()?;
            return Ok(Err(ProgressError::Denied(denied(
                &self.name,
                "report",
                "send",
                "not granted",
            ))));
        }
        let output = self.redactor.redact_str(&output).into_owned();
        let answer = task.send_report(output).map_err(|e| match e {
            ReportError::ParentGone => ProgressError::ParentGone,
            ReportError::Rejected(m) => ProgressError::LimitExceeded(m),
        });
        if matches!(answer, Err(ProgressError::LimitExceeded(_))) {
            self.count_refusal()?;
        }
        Ok(answer)
    }
}

/// An HTTP answer as the guest may see it: header values and the body redacted, a header whose
/// name carries a secret left out.
pub(crate) fn redact_response(redactor: &Redactor, mut resp: OutboundResponse) -> OutboundResponse {
    if redactor.is_empty() {
        return resp;
    }
    resp.headers
        .retain(|(name, _)| redactor.find(name.as_bytes()).is_none());
    for (_, value) in &mut resp.headers {
        redactor.redact_in_place(value);
    }
    if let Cow::Owned(body) = redactor.redact(&resp.body) {
        resp.body = body.into();
    }
    resp
}

/// A host error's text with secrets redacted.
pub(crate) fn redact_host_error(redactor: &Redactor, mut e: HostError) -> HostError {
    match &mut e {
        HostError::Denied(m)
        | HostError::InvalidInput(m)
        | HostError::LimitExceeded(m)
        | HostError::Failed(m) => redactor.redact_in_place(m),
    }
    e
}

/// A tool outcome with secrets redacted from its texts; an identifier carrying one is dropped
/// (a cut identifier would name another object).
pub(crate) fn redact_outcome(redactor: &Redactor, mut o: ToolOutcome) -> ToolOutcome {
    if redactor.is_empty() {
        return o;
    }
    redactor.redact_in_place(&mut o.output);
    for text in [&mut o.preview, &mut o.error].into_iter().flatten() {
        redactor.redact_in_place(text);
    }
    for id in [&mut o.external_id, &mut o.verifiable_url] {
        if id
            .as_deref()
            .is_some_and(|v| redactor.find(v.as_bytes()).is_some())
        {
            tracing::warn!("dropped an identifier that carries a granted secret's value");
            *id = None;
        }
    }
    o
}

fn http_error(e: HttpError) -> HostError {
    match e {
        HttpError::Denied { .. } => HostError::Denied(e.to_string()),
        HttpError::InvalidRequest(_) => HostError::InvalidInput(e.to_string()),
        HttpError::TooLarge { .. } | HttpError::Limit(_) | HttpError::Timeout => {
            HostError::LimitExceeded(e.to_string())
        }
        HttpError::Transport(_) => HostError::Failed(e.to_string()),
    }
}

fn tool_error(e: ToolError) -> HostError {
    match e {
        ToolError::Denied(m) => HostError::Denied(m),
        ToolError::InvalidInput(m) => HostError::InvalidInput(m),
        ToolError::LimitExceeded(m) => HostError::LimitExceeded(m),
        ToolError::Failed(m) => HostError::Failed(m),
    }
}

pub(crate) fn wit_outcome(o: &ToolOutcome) -> WitOutcome {
    WitOutcome {
        output: o.output.clone(),
        status: match o.status {
            Status::Success => CallStatus::Success,
            Status::Pending => CallStatus::Pending,
            Status::Failed => CallStatus::Failed(o.error.clone().unwrap_or_default()),
        },
        external_id: o.external_id.clone(),
        verifiable_url: o.verifiable_url.clone(),
        preview: o.preview.clone(),
    }
}

/// The host's outcome: a failed status's text becomes `error`, which the receipt keeps verbatim.
pub(crate) fn from_wit_outcome(o: WitOutcome) -> ToolOutcome {
    let (status, error) = match o.status {
        CallStatus::Success => (Status::Success, None),
        CallStatus::Pending => (Status::Pending, None),
        CallStatus::Failed(e) => (Status::Failed, Some(e)),
    };
    ToolOutcome {
        output: o.output,
        status,
        external_id: o.external_id,
        verifiable_url: o.verifiable_url,
        // Capped with the other fields in `caps::cap_outcome`.
        preview: o.preview,
        error,
    }
}

pub(crate) fn wit_spec(s: &ToolSpec) -> WitSpec {
    WitSpec {
        name: s.name.clone(),
        description: s.description.clone(),
        input_schema: s.input_schema.clone(),
        mutating: s.mutating,
        receipt_type: s.receipt_type.clone(),
        operation: s.operation.clone(),
        requires_skill: s.requires_skill.clone(),
        approval: match s.approval {
            Approval::Never => types::Approval::Never,
            Approval::Always => types::Approval::Always,
        },
    }
}

pub(crate) fn from_wit_spec(s: WitSpec) -> ToolSpec {
    ToolSpec {
        name: s.name,
        description: s.description,
        input_schema: s.input_schema,
        mutating: s.mutating,
        receipt_type: s.receipt_type,
        operation: s.operation,
        requires_skill: s.requires_skill,
        approval: match s.approval {
            types::Approval::Never => Approval::Never,
            types::Approval::Always => Approval::Always,
        },
    }
}

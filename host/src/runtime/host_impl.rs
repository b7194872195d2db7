//! The host side of the plugin-facing WIT interfaces: `log`, `config`, `http` and `tools`.
//!
//! Each function checks the instance's effective capabilities first and answers a refusal as a
//! guest-visible `host-error::denied` naming plugin, capability and target (a WIT error, not a
//! trap: the plugin can act on it). Every decision is traced with the same fields.

use super::bindings::types::{
    CallStatus, HostError, ToolOutcome as WitOutcome, ToolSpec as WitSpec,
};
use super::bindings::{config, http, log, report, tools, types};
use super::state::StoreState;
use crate::http::{HttpError, OutboundRequest};
use crate::types::{CallStatus as Status, ToolOutcome, ToolSpec};

/// Longest log message forwarded; the rest is cut.
const MAX_LOG_CHARS: usize = 8 * 1024;

impl types::Host for StoreState {}

impl log::Host for StoreState {
    async fn log(&mut self, level: log::Level, message: String) -> wasmtime::Result<()> {
        // Escaped: a guest message can neither drive a terminal nor start a log line.
        let message = crate::text::one_line(truncate(&message, MAX_LOG_CHARS));
        let plugin = &*self.plugin;
        match level {
            log::Level::Trace => tracing::trace!(target: "guild::guest", plugin, "{message}"),
            log::Level::Debug => tracing::debug!(target: "guild::guest", plugin, "{message}"),
            log::Level::Info => tracing::info!(target: "guild::guest", plugin, "{message}"),
            log::Level::Warn => tracing::warn!(target: "guild::guest", plugin, "{message}"),
            log::Level::Error => tracing::error!(target: "guild::guest", plugin, "{message}"),
        }
        Ok(())
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
        Ok(answer)
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
        let shared = self.shared.clone();
        let result = shared.http.send(&self.caps.http, outbound).await;
        Ok(match result {
            Ok(resp) => Ok(http::Response {
                status: resp.status,
                headers: resp.headers,
                body: resp.body.to_vec(),
            }),
            Err(e) => Err(http_error(e)),
        })
    }
}

impl tools::Host for StoreState {
    async fn granted(&mut self) -> wasmtime::Result<Vec<tools::GrantedTool>> {
        let Some(task) = &self.task else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for full in &self.caps.tools {
            if let Some(spec) = task.snapshot.tool_spec(full) {
                out.push(tools::GrantedTool {
                    name: full.clone(),
                    spec: wit_spec(&spec),
                });
            }
        }
        Ok(out)
    }

    async fn call(
        &mut self,
        name: String,
        input: String,
        idempotency_key: Option<String>,
    ) -> wasmtime::Result<Result<WitOutcome, HostError>> {
        let Some(task) = self.task.clone() else {
            return Ok(Err(HostError::Denied(denied(
                &self.name,
                "tools",
                &name,
                "only specialists running a task can call tools",
            ))));
        };
        let refusal = self.caps.tool_refusal(&self.name, &name);
        trace_decision(&self.plugin, "tools", &name, refusal.is_none());
        if let Some(why) = refusal {
            let err = denied(&self.name, "tools", &name, &why);
            task.record_refusal(&name, &input, &err);
            return Ok(Err(HostError::Denied(err)));
        }
        let shared = self.shared.clone();
        Ok(
            crate::dispatch::call_tool(&shared, &task, &name, input, idempotency_key)
                .await
                .map(|o| wit_outcome(&o))
                .map_err(|e| e.into_wit()),
        )
    }
}

impl report::Host for StoreState {
    async fn send(&mut self, output: String) -> wasmtime::Result<Result<String, String>> {
        let Some(task) = &self.task else {
            return Ok(Err(crate::dispatch::PARENT_GONE.to_owned()));
        };
        if !self.caps.report {
            trace_decision(&self.plugin, "report", "", false);
            return Ok(Err(denied(&self.name, "report", "send", "not granted")));
        }
        Ok(task.send_report(output))
    }
}

/// A refusal message: `denied: plugin 'P' capability C target 'T': why`.
pub(crate) fn denied(plugin: &str, capability: &str, target: &str, why: &str) -> String {
    format!("denied: plugin '{plugin}' capability {capability} target '{target}': {why}")
}

fn trace_decision(plugin: &str, capability: &str, target: &str, allowed: bool) {
    tracing::debug!(
        target: "guild::capability",
        plugin,
        capability,
        target,
        outcome = if allowed { "allowed" } else { "denied" },
    );
}

fn http_error(e: HttpError) -> HostError {
    match e {
        HttpError::Denied { .. } => HostError::Denied(e.to_string()),
        HttpError::InvalidRequest(_) => HostError::InvalidInput(e.to_string()),
        HttpError::TooLarge { .. } | HttpError::Timeout => HostError::LimitExceeded(e.to_string()),
        HttpError::Transport(_) => HostError::Failed(e.to_string()),
    }
}

pub(crate) fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Errors the tool path returns to a specialist.
#[derive(Debug, Clone)]
pub(crate) enum ToolError {
    Denied(String),
    InvalidInput(String),
    LimitExceeded(String),
    Failed(String),
}

impl ToolError {
    fn into_wit(self) -> HostError {
        match self {
            Self::Denied(m) => HostError::Denied(m),
            Self::InvalidInput(m) => HostError::InvalidInput(m),
            Self::LimitExceeded(m) => HostError::LimitExceeded(m),
            Self::Failed(m) => HostError::Failed(m),
        }
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Denied(m) | Self::InvalidInput(m) | Self::LimitExceeded(m) | Self::Failed(m) => {
                f.write_str(m)
            }
        }
    }
}

pub(crate) fn wit_outcome(o: &ToolOutcome) -> WitOutcome {
    WitOutcome {
        output: o.output.clone(),
        status: match o.status {
            Status::Success => CallStatus::Success,
            Status::Pending => CallStatus::Pending,
            Status::Failed => CallStatus::Failed,
        },
        external_id: o.external_id.clone(),
        verifiable_url: o.verifiable_url.clone(),
        preview: o.preview.clone(),
        error: o.error.clone(),
    }
}

pub(crate) fn from_wit_outcome(o: WitOutcome) -> ToolOutcome {
    ToolOutcome {
        output: o.output,
        status: match o.status {
            CallStatus::Success => Status::Success,
            CallStatus::Pending => Status::Pending,
            CallStatus::Failed => Status::Failed,
        },
        external_id: o.external_id,
        verifiable_url: o.verifiable_url,
        preview: o.preview.map(|p| truncate(&p, 200).to_owned()),
        error: o.error,
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
        approval: if s.approval_always {
            types::Approval::Always
        } else {
            types::Approval::Never
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
        approval_always: matches!(s.approval, types::Approval::Always),
    }
}

pub(crate) use truncate as truncate_str;

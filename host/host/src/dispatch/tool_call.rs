//! The one tool-call path: every connector call a specialist makes goes through
//! [`call_tool`]. It checks the tool, gates it on skills and approvals, writes the two-phase
//! receipt for mutating tools, runs the connector in a fresh instance, and records the call in
//! the task's result. The intent is committed before the connector runs; the outcome is queued
//! and the specialist goes on, and the task waits for it before its result is built
//! ([`super::TaskScope::settle_outcomes`]).

use std::time::{Duration, Instant};

use tracing::Instrument;

use guild_core::capability::{denied, trace_decision};
use guild_core::limits::MAX_IDEMPOTENCY_KEY_BYTES;
use guild_core::manifest::parse_tool_name;
use guild_core::text::truncate as truncate_str;
use guild_core::tool_names::unknown_tool;
use guild_core::types::{CallStatus, ToolCallRecord, ToolError, ToolOutcome, ToolSpec};
use guild_receipts::{Completion, Intent, LedgerError, Receipt, ReceiptStatus};
use guild_runtime::Failure;

use super::open_intent::{self, Started};
use super::{Approval, TaskScope, failed_outcome, sha256};
use crate::approval::ApprovalRequest;
use crate::registry::LoadedPlugin;

/// Calls `connector.tool` for a task, in a fresh connector instance. This is the one place the
/// specialist's tool grant is checked: every front door reaches connectors through here.
pub(crate) async fn call_tool(
    task: &TaskScope,
    full: &str,
    input: String,
    idempotency_key: Option<String>,
) -> Result<ToolOutcome, ToolError> {
    let started = Instant::now();
    let services = &task.services;
    let refuse = |e: ToolError| {
        task.record_refusal(full, &input, &e.to_string());
        Err(e)
    };
    task.count_call(full, &input)?;
    let (plugin, tool, spec) = match admit(task, full, &input, idempotency_key.as_deref()).await {
        Ok(admitted) => admitted,
        Err(e) => return refuse(e),
    };
    let input_sha256 = sha256(&input);
    let span = tracing::info_span!("tool", tool = full, connector = %plugin.ident, mutating = spec.mutating);
    let record = |outcome: ToolOutcome, receipt_id: Option<String>, replayed: bool| {
        task.record(ToolCallRecord {
            tool: full.to_owned(),
            plugin: plugin.ident.to_string(),
            mutating: spec.mutating,
            input_sha256: input_sha256.clone(),
            outcome,
            receipt_id,
            replayed,
            wall_ms: started.elapsed().as_millis() as u64,
        });
    };

    // Mutating calls are two-phase: the intent is committed before the connector runs, so a
    // crash in between reads as `unknown`, never as success. No intent, no call.
    let intent = if spec.mutating {
        let intent = Intent {
            task_id: task.task_id.clone(),
            route: task.specialist_name().to_owned(),
            plugin: plugin.ident.to_string(),
            tool: full.to_owned(),
            receipt_type: spec.receipt_type.clone().unwrap_or_default(),
            operation: spec.operation.clone().unwrap_or_default(),
            input_sha256: input_sha256.clone(),
            idempotency_key: idempotency_key.clone(),
            chain: services.forest.receipt_chain(&task.task_id),
        };
        let ledger = services.ledger.clone();
        match tokio::task::spawn_blocking(move || open_intent::begin(ledger, intent)).await {
            Ok(Ok(Started::Open(open))) => Some(open),
            Ok(Ok(Started::Replay(receipt))) => {
                let outcome = outcome_of(&receipt);
                record(outcome.clone(), Some(receipt.id.clone()), true);
                return Ok(outcome);
            }
            Ok(Err(
                e @ (LedgerError::IdempotencyConflict { .. } | LedgerError::InFlight { .. }),
            )) => {
                return refuse(ToolError::InvalidInput(e.to_string()));
            }
            Ok(Err(e)) => {
                return refuse(ToolError::Failed(format!(
                    "tool '{full}' was not called: the receipts ledger could not record its intent: {e}"
                )));
            }
            Err(e) => {
                return refuse(ToolError::Failed(format!(
                    "tool '{full}' was not called: the receipts ledger task failed: {e}"
                )));
            }
        }
    } else {
        None
    };

    // The connector call and its outcome entry run as one unit. For a mutating call it is a
    // task of its own: once the intent is committed, the call finishes (the connector has its
    // own timeout) and its outcome is recorded even if this caller is dropped (task timeout,
    // cancel). If even that fails, dropping the intent releases it (see `open_intent`).
    let call = {
        let (services, plugin, tool, full) = (
            services.clone(),
            plugin.clone(),
            tool.to_owned(),
            full.to_owned(),
        );
        // Counted until the outcome is recorded, so that a host about to stop waits for it
        // (see `in_flight`).
        let counted = intent.as_ref().map(|_| services.calls.enter());
        async move {
            let result = services
                .runtime
                .connector_call(&plugin.runtime, &tool, input)
                .await;
            let (outcome, answer) = match result.map(normalise) {
                Ok(outcome) => match not_json(&outcome) {
                    None => (outcome.clone(), Ok(outcome)),
                    Some(e) => {
                        let message = format!(
                            "tool '{full}' failed: connector '{}' returned output that is not JSON ({e}); a connector's output must be one JSON document",
                            plugin.ident
                        );
                        // What the connector said it changed stays on the record.
                        let failed = ToolOutcome {
                            external_id: outcome.external_id,
                            verifiable_url: outcome.verifiable_url,
                            preview: outcome.preview,
                            ..failed_outcome(&message)
                        };
                        (failed, Err(ToolError::Failed(message)))
                    }
                },
                Err(failure) => {
                    let message = format!(
                        "tool '{full}' failed: connector '{}' {failure}",
                        plugin.ident
                    );
                    let error = connector_error(&failure, message.clone());
                    (failed_outcome(&message), Err(error))
                }
            };
            tracing::info!(status = ?outcome.status, "tool call finished");
            // Queued, not waited for: the next write of the ledger comes after it, and the
            // task waits for it before its result leaves the host.
            let pending = intent
                .and_then(|open| {
                    let linger = Duration::from_millis(u64::from(
                        services.config.dispatch.outcome_linger_ms,
                    ));
                    open.complete_later(&full, Completion::from(&outcome), counted, linger)
                });
            (outcome, answer, pending)
        }
        .instrument(span)
    };
    let (outcome, answer, pending) = if spec.mutating {
        match tokio::spawn(call).await {
            Ok(done) => done,
            Err(e) => {
                let message = format!("tool '{full}' failed: its call task ended: {e}");
                (
                    failed_outcome(&message),
                    Err(ToolError::Failed(message)),
                    None,
                )
            }
        }
    } else {
        call.await
    };
    let receipt_id = pending.as_ref().map(|p| p.receipt_id.clone());
    record(outcome, receipt_id, false);
    if let Some(pending) = pending {
        task.defer_outcome(pending);
    }
    answer
}

/// Admits a call of `full` (`connector.tool`): the idempotency key's size, the caller's tool
/// grant, the connector and its tool, the input against the tool's schema, the skill gates and,
/// for an `approval = always` tool, the caller's approval. Nothing has been recorded or started
/// when this refuses.
async fn admit<'a>(
    task: &TaskScope,
    full: &'a str,
    input: &str,
    idempotency_key: Option<&str>,
) -> Result<(std::sync::Arc<LoadedPlugin>, &'a str, ToolSpec), ToolError> {
    if let Some(key) = idempotency_key
        && key.len() > MAX_IDEMPOTENCY_KEY_BYTES
    {
        return Err(ToolError::InvalidInput(format!(
            "the idempotency key for '{full}' is {} bytes, over the limit of {MAX_IDEMPOTENCY_KEY_BYTES}; use a shorter key",
            key.len()
        )));
    }
    let caller = &task.plugin;
    let refusal = caller.runtime.effective().tool_refusal(&caller.name, full);
    trace_decision(&caller.ident, "tools", full, refusal.is_none());
    // A name no connector offers is most often a typo: say that first, with the nearest tool,
    // rather than sending the author to add the typo to the manifest and the grants.
    if task.snapshot.tool_spec(full).is_none() {
        let offered = task.snapshot.offered_tools();
        let unknown = unknown_tool(full, offered.iter().map(String::as_str));
        return Err(match refusal {
            Some(_) => ToolError::Denied(denied(&caller.name, "tools", full, &unknown)),
            None => ToolError::InvalidInput(unknown),
        });
    }
    if let Some(why) = refusal {
        return Err(ToolError::Denied(denied(&caller.name, "tools", full, &why)));
    }
    // Offered, so loaded and well-formed; checked again rather than trusted.
    let (connector, tool) = parse_tool_name(full).map_err(ToolError::InvalidInput)?;
    let found = task.snapshot.plugins.get(connector).and_then(|p| {
        let spec = p.tools.iter().find(|t| t.name == tool)?;
        Some((p.clone(), spec.clone()))
    });
    let Some((plugin, spec)) = found else {
        return Err(ToolError::InvalidInput(unknown_tool(full, [])));
    };
    // Checked against the tool's declared schema before any connector instance exists. The
    // connector then gets `input` itself, the bytes checked here: a key repeated in an object
    // is refused (`check_text`), so no parser can read those bytes differently.
    if let Err(e) = crate::schema::check_text(&spec.input_schema, input) {
        return Err(ToolError::InvalidInput(format!("input for '{full}' {e}")));
    }
    if let Some(message) = task
        .skills
        .requires_skill_gate(spec.requires_skill.as_deref())
    {
        return Err(ToolError::InvalidInput(message));
    }
    let strict = task
        .services
        .config
        .skills
        .strict_allowed_tools_for(task.specialist_name());
    if let Some(message) = task.skills.allowed_tools_gate(full, strict) {
        return Err(ToolError::Denied(message));
    }
    if spec.needs_approval() {
        approve(task, full, &spec.description, input).await?;
    }
    Ok((plugin, tool, spec))
}

/// The tool error a connector failure becomes: a limit the connector hit is `limit-exceeded`,
/// anything else `failed`.
fn connector_error(failure: &Failure, message: String) -> ToolError {
    match failure {
        Failure::TimedOut { .. }
        | Failure::OutputTooLarge { .. }
        | Failure::HostcallData { .. }
        | Failure::MemoryExceeded { .. }
        | Failure::HandleLimit { .. }
        | Failure::RefusalLimit { .. } => ToolError::LimitExceeded(message),
        _ => ToolError::Failed(message),
    }
}

/// The outcome a recorded receipt stands for (an idempotent replay). `r` is the receipt that
/// answers for this task: its replay entry (`replay_of` names the call's receipt), or the
/// call's own receipt when this task made the call.
fn outcome_of(r: &Receipt) -> ToolOutcome {
    let status = match r.status {
        ReceiptStatus::Success => CallStatus::Success,
        ReceiptStatus::Failed => CallStatus::Failed,
        _ => CallStatus::Pending,
    };
    ToolOutcome {
        output: serde_json::json!({
            "replayed": true,
            "receipt": r.id,
            "replay_of": r.replay_of,
            "external_id": r.external_id,
        })
        .to_string(),
        status,
        external_id: r.external_id.clone(),
        verifiable_url: r.verifiable_url.clone(),
        preview: r.preview.clone(),
        error: r.error.clone(),
    }
}

/// Asks for approval of one call, or refuses it inside a batch.
async fn approve(
    task: &TaskScope,
    tool: &str,
    description: &str,
    input: &str,
) -> Result<(), ToolError> {
    match &task.approval {
        Approval::InBatch => {
            let message = format!(
                "tool '{tool}' needs the caller's approval, which a batch cannot give: re-dispatch this task on its own"
            );
            *task.batch_refused.lock().unwrap_or_else(|p| p.into_inner()) = Some(message.clone());
            Err(ToolError::Denied(message))
        }
        Approval::Ask(None) => Err(ToolError::Denied(format!(
            "denied: tool '{tool}' needs the caller's approval and no approver is attached to this session"
        ))),
        Approval::Ask(Some(approver)) => {
            let request = ApprovalRequest {
                task_id: task.task_id.clone(),
                specialist: task.plugin.ident.to_string(),
                tool: tool.to_owned(),
                description: description.to_owned(),
                input: truncate_str(input, 2048).to_owned(),
            };
            if approver.approve(request).await {
                tracing::info!(tool, "approved by the caller");
                Ok(())
            } else {
                Err(ToolError::Denied(format!(
                    "denied: the caller did not approve tool '{tool}'"
                )))
            }
        }
    }
}

/// Why a connector's output is not one JSON document, if it is not. A failed outcome may leave
/// its output empty, as the host's own failed outcomes do.
fn not_json(o: &ToolOutcome) -> Option<String> {
    if o.status == CallStatus::Failed && o.output.trim().is_empty() {
        return None;
    }
    serde_json::from_str::<serde::de::IgnoredAny>(&o.output)
        .err()
        .map(|e| e.to_string())
}

/// Makes a connector's report self-consistent: a failure always carries an error, a success
/// never does, and the preview fits in 200 characters.
fn normalise(mut o: ToolOutcome) -> ToolOutcome {
    match o.status {
        CallStatus::Failed if o.error.as_deref().is_none_or(str::is_empty) => {
            o.error = Some("the connector reported failure without an error message".into());
        }
        CallStatus::Success | CallStatus::Pending => o.error = None,
        CallStatus::Failed => {}
    }
    if let Some(p) = &o.preview {
        o.preview = Some(truncate_str(p, 200).to_owned());
    }
    o
}

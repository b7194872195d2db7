//! Running one call in one fresh instance, under the plugin's limits.
//!
//! Every task and every tool call gets a new [`Store`] from the plugin's `InstancePre`; the
//! store is dropped when the call returns, so a trapped instance is never re-entered. Limits are
//! enforced here: the memory limiter (summed over all memories), the epoch deadline (guest code)
//! *and* a tokio wall-clock timeout (a guest blocked in a host call), hostcall fuel, and output
//! caps. A failure is classified so callers get "timed out after 10 s" rather than a raw trap.
//!
//! Everything a call returns — a report, an error, a tool outcome, a description, tool specs,
//! the cause of a trap — leaves here with the plugin's granted secrets redacted
//! ([`guild_http::redact`]), before any size check, receipt or client sees it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use wasmtime::{Store, Trap};

use guild_core::types::{
    ArtifactRef, Claim, NextAction, NextStep, Outcome, Report, ToolOutcome, ToolSpec,
};
use guild_http::redact::Redactor;

use crate::Runtime;
use crate::bindings::types;
use crate::caps::{MAX_ERROR_BYTES, cap_outcome, capped};
use crate::host_impl::{from_wit_outcome, from_wit_spec, redact_outcome};
use crate::plugin::{Plugin, PluginPre};
use crate::state::{StoreState, new_store};
use crate::task::TaskHost;

/// Why an instance ended without a usable answer. Only that instance is affected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The guest trapped (panic, unreachable, out-of-bounds, stack exhausted, a host error).
    Trapped {
        /// What ended it: wasmtime's trap ("wasm trap: out of bounds memory access") or the
        /// host error the guest ran into, never a backtrace.
        cause: String,
        /// The guest's last stderr lines (a panic message, a Python traceback), oldest first,
        /// already escaped.
        stderr: Vec<String>,
    },
    /// The wall-clock or epoch deadline passed.
    TimedOut {
        /// The budget, seconds.
        secs: u32,
    },
    /// Growing memory past the plugin's budget was refused and the guest gave up.
    MemoryExceeded {
        /// The budget, MiB.
        limit_mb: u32,
    },
    /// The answer was larger than `max_output_kb`.
    OutputTooLarge {
        /// Size of the answer, bytes.
        size: usize,
        /// The cap, KiB.
        limit_kb: u32,
    },
    /// The guest passed more data to the host in one call than the hostcall budget allows.
    HostcallData {
        /// The budget, KiB.
        limit_kb: u32,
    },
    /// The guest held more handles (open files, streams, …) at once than the host allows.
    HandleLimit {
        /// The cap, entries of the instance's resource table.
        limit: u32,
    },
    /// The guest kept making calls the host refused (denied by its capabilities, or over a
    /// limit) past its budget, and was stopped.
    RefusalLimit {
        /// The budget (`[dispatch] max_tool_calls`).
        limit: u32,
    },
    /// The host could not set up the instance (a granted folder vanished, ...).
    Setup(String),
    /// The plugin is not of the kind this call needs.
    WrongKind(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Trapped { cause, stderr } => {
                write!(f, "trapped: {cause}")?;
                if !stderr.is_empty() {
                    write!(f, "; its last stderr lines:")?;
                }
                for line in stderr {
                    write!(f, "\n    stderr: {line}")?;
                }
                Ok(())
            }
            Self::TimedOut { secs } => write!(f, "timed out after {secs} s"),
            Self::MemoryExceeded { limit_mb } => {
                write!(f, "exceeded its memory limit of {limit_mb} MiB")
            }
            Self::OutputTooLarge { size, limit_kb } => write!(
                f,
                "returned {size} bytes, over its output limit of {limit_kb} KiB"
            ),
            Self::HostcallData { limit_kb } => write!(
                f,
                "passed more than {limit_kb} KiB to the host in one call, over its data limit"
            ),
            Self::HandleLimit { limit } => write!(
                f,
                "held more than {limit} open handles (files, directories, streams) at once, over its handle limit; close handles it no longer needs"
            ),
            Self::RefusalLimit { limit } => write!(
                f,
                "was stopped after more than {limit} refused calls (denied by its grants or over a limit; `[dispatch] max_tool_calls`); stop calling what it may not use"
            ),
            Self::Setup(m) => write!(f, "could not be instantiated: {m}"),
            Self::WrongKind(m) => f.write_str(m),
        }
    }
}

/// Measurements of one instance's life.
#[derive(Debug, Clone, Copy, Default)]
pub struct InstanceStats {
    /// Time to instantiate, µs.
    pub instantiate_us: u64,
    /// Peak linear memory, bytes (summed over all memories).
    pub peak_memory: u64,
}

type Call<'a, T> = BoxFuture<'a, wasmtime::Result<T>>;

/// Runs `call` in a fresh store for `plugin`, under its limits.
pub(crate) async fn guarded<T: Send + 'static>(
    rt: &Runtime,
    plugin: &Plugin,
    task: Option<Arc<dyn TaskHost>>,
    call: impl for<'a> FnOnce(&'a mut Store<StoreState>, &'a PluginPre, &'a mut Instant) -> Call<'a, T>,
) -> (Result<T, Failure>, InstanceStats) {
    let limits = plugin.effective.limits;
    let mut store = match new_store(rt, plugin, task) {
        Ok(s) => s,
        Err(e) => {
            return (
                Err(Failure::Setup(format!("{e:#}"))),
                InstanceStats::default(),
            );
        }
    };
    let started = Instant::now();
    let mut instantiated = started;
    let budget = Duration::from_secs(u64::from(limits.timeout_s));
    let outcome =
        tokio::time::timeout(budget, call(&mut store, &plugin.pre, &mut instantiated)).await;
    let stats = InstanceStats {
        instantiate_us: instantiated.duration_since(started).as_micros() as u64,
        peak_memory: store.data().limiter.used() as u64,
    };
    let result = match outcome {
        Err(_elapsed) => Err(Failure::TimedOut {
            secs: limits.timeout_s,
        }),
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(classify(&e, &store, limits.timeout_s, limits.memory_mb)),
    };
    if let Err(f) = &result {
        // One log line: the guest's stderr lines are in the log already, as guest output.
        let why = match f {
            Failure::Trapped { cause, .. } => format!("trapped: {cause}"),
            other => other.to_string(),
        };
        tracing::warn!(plugin = %plugin.ident, "instance ended: {why}");
    }
    // The store (and with it the instance) is dropped here: never re-entered after a trap.
    (result, stats)
}

fn classify(e: &wasmtime::Error, store: &Store<StoreState>, secs: u32, limit_mb: u32) -> Failure {
    if store.data().limiter.exceeded() {
        return Failure::MemoryExceeded { limit_mb };
    }
    if matches!(e.downcast_ref::<Trap>(), Some(Trap::Interrupt)) {
        return Failure::TimedOut { secs };
    }
    if let Some(refused) = e.downcast_ref::<crate::state::RefusedTooOften>() {
        return Failure::RefusalLimit {
            limit: refused.limit,
        };
    }
    let text = format!("{e:#}");
    // wasmtime reports an exhausted hostcall budget as a plain error; its text is the only
    // signal (checked against wasmtime 48's message).
    if text.contains("fuel allocated for hostcalls has been exhausted") {
        return Failure::HostcallData {
            limit_kb: store.data().rt.io().hostcall_kb,
        };
    }
    // A full resource table is a plain error too (wasmtime 48's `ResourceTableError::Full`).
    if text.contains("resource table has no free keys") {
        return Failure::HandleLimit {
            limit: store.data().rt.io().max_handles,
        };
    }
    // The cause is the trap code or the host error at the root; the guest backtrace that
    // wasmtime puts on top is for the log only.
    tracing::debug!("trap detail: {text}");
    let cause = match e.downcast_ref::<Trap>() {
        Some(trap) => trap.to_string(),
        None => {
            let parts: Vec<String> = e
                .chain()
                .map(|c| c.to_string())
                .filter(|m| !m.starts_with("error while executing at wasm backtrace"))
                .collect();
            if parts.is_empty() {
                text.lines().next().unwrap_or_default().to_owned()
            } else {
                parts.join(": ")
            }
        }
    };
    let cause = store.data().redactor.redact_str(&cause).into_owned();
    Failure::Trapped {
        cause: guild_core::text::one_line(&cause).into_owned(),
        stderr: store.data().stderr_tail.lines(),
    }
}

pub(crate) fn wrong_kind(plugin: &Plugin, wanted: &str) -> Failure {
    Failure::WrongKind(format!(
        "plugin '{}' is a {}, not a {wanted}",
        plugin.name, plugin.kind
    ))
}

/// What a specialist's `run` returned: a report, or the specialist's own error message.
pub type RunAnswer = Result<Report, String>;

impl Runtime {
    /// Calls `run` of a specialist for one task, in a fresh instance whose `tools`, `progress` and
    /// `skills` imports go to `task`.
    pub async fn run_specialist(
        &self,
        plugin: &Plugin,
        task: Arc<dyn TaskHost>,
        task_id: &str,
        description: &str,
    ) -> (Result<RunAnswer, Failure>, InstanceStats) {
        if !matches!(*plugin.pre, PluginPre::Specialist(_)) {
            return (
                Err(wrong_kind(plugin, "specialist")),
                InstanceStats::default(),
            );
        }
        let brief = types::Brief {
            task_id: task_id.to_owned(),
            description: description.to_owned(),
        };
        let limit_kb = plugin.effective.limits.max_output_kb;
        let (answer, stats) = guarded(self, plugin, Some(task), move |store, pre, t| {
            Box::pin(async move {
                let PluginPre::Specialist(pre) = pre else {
                    unreachable_kind()?
                };
                pre.run(store, &brief, t).await
            })
        })
        .await;
        let redactor = &plugin.redactor;
        let answer = answer.and_then(|r| match r {
            Ok(report) => {
                let report = redact_report(redactor, report_from_wit(report));
                let size = report.size();
                if size > limit_kb as usize * 1024 {
                    Err(Failure::OutputTooLarge { size, limit_kb })
                } else {
                    Ok(Ok(report))
                }
            }
            Err(types::RunError::InvalidBrief(m)) => Ok(Err(format!(
                "invalid brief: {}",
                capped(&redactor.redact_str(&m), MAX_ERROR_BYTES)
            ))),
            Err(types::RunError::Failed(m)) => {
                Ok(Err(capped(&redactor.redact_str(&m), MAX_ERROR_BYTES)))
            }
        });
        (answer, stats)
    }

    /// Calls `describe` of a specialist (at load time).
    pub async fn describe(&self, plugin: &Plugin) -> Result<String, Failure> {
        if !matches!(*plugin.pre, PluginPre::Specialist(_)) {
            return Err(wrong_kind(plugin, "specialist"));
        }
        guarded(self, plugin, None, |store, pre, _| {
            Box::pin(async move {
                let PluginPre::Specialist(pre) = pre else {
                    unreachable_kind()?
                };
                Ok(pre.describe(store).await?.description)
            })
        })
        .await
        .0
        .map(|d| plugin.redactor.redact_str(&d).into_owned())
    }

    /// Calls `tools` of a connector (at load time).
    pub async fn connector_tools(&self, plugin: &Plugin) -> Result<Vec<ToolSpec>, Failure> {
        if !matches!(*plugin.pre, PluginPre::Connector(_)) {
            return Err(wrong_kind(plugin, "connector"));
        }
        guarded(self, plugin, None, |store, pre, _| {
            Box::pin(async move {
                let PluginPre::Connector(pre) = pre else {
                    unreachable_kind()?
                };
                Ok(pre
                    .tools(store)
                    .await?
                    .into_iter()
                    .map(from_wit_spec)
                    .collect())
            })
        })
        .await
        .0
        .map(|specs| redact_specs(&plugin.redactor, specs))
    }

    /// Calls one tool of a connector in a fresh instance.
    pub async fn connector_call(
        &self,
        plugin: &Plugin,
        tool: &str,
        input: String,
    ) -> Result<ToolOutcome, Failure> {
        if !matches!(*plugin.pre, PluginPre::Connector(_)) {
            return Err(wrong_kind(plugin, "connector"));
        }
        let limit_kb = plugin.effective.limits.max_output_kb;
        let tool = tool.to_owned();
        let (answer, _) = guarded(self, plugin, None, move |store, pre, _| {
            Box::pin(async move {
                let PluginPre::Connector(pre) = pre else {
                    unreachable_kind()?
                };
                pre.call(store, &tool, &input).await
            })
        })
        .await;
        let outcome = redact_outcome(&plugin.redactor, from_wit_outcome(answer?));
        let outcome = cap_outcome(&plugin.ident, outcome);
        let size = outcome.output.len();
        if size > limit_kb as usize * 1024 {
            return Err(Failure::OutputTooLarge { size, limit_kb });
        }
        Ok(outcome)
    }
}

fn unreachable_kind<T>() -> wasmtime::Result<T> {
    Err(wasmtime::Error::msg(
        "plugin kind changed under a running call",
    ))
}

/// Every text of a report with secrets redacted.
fn redact_report(redactor: &Redactor, mut r: Report) -> Report {
    if redactor.is_empty() {
        return r;
    }
    let Report {
        summary,
        details,
        open_issues,
        remaining_issues,
        next_step,
        artifacts,
        claims,
        ..
    } = &mut r;
    let texts = [summary, details]
        .into_iter()
        .chain(open_issues.iter_mut())
        .chain(remaining_issues.iter_mut())
        .chain(
            next_step
                .iter_mut()
                .filter_map(|n| n.suggested_task.as_mut()),
        )
        .chain(artifacts.iter_mut().flat_map(|a| {
            [&mut a.id, &mut a.kind, &mut a.mime_type, &mut a.sha256]
                .into_iter()
                .chain(a.version.as_mut())
        }))
        .chain(claims.iter_mut().flat_map(|c| {
            [&mut c.tool, &mut c.text]
                .into_iter()
                .chain(c.external_id.as_mut())
        }));
    for text in texts {
        redactor.redact_in_place(text);
    }
    r
}

/// Tool specs with secrets redacted from their texts.
fn redact_specs(redactor: &Redactor, mut specs: Vec<ToolSpec>) -> Vec<ToolSpec> {
    for s in &mut specs {
        for text in [&mut s.name, &mut s.description, &mut s.input_schema] {
            redactor.redact_in_place(text);
        }
    }
    specs
}

fn report_from_wit(r: types::Report) -> Report {
    Report {
        summary: r.summary,
        outcome: match r.outcome {
            types::Outcome::Satisfied => Outcome::Satisfied,
            types::Outcome::Partial => Outcome::Partial,
            types::Outcome::Failed => Outcome::Failed,
        },
        details: r.details,
        hard_passed: r.hard_passed,
        open_issues: r.open_issues,
        remaining_issues: r.remaining_issues,
        next_step: r.next_step.map(|n| NextStep {
            action: match n.action {
                types::NextAction::Stop => NextAction::Stop,
                types::NextAction::Descend => NextAction::Descend,
                types::NextAction::Refine => NextAction::Refine,
                types::NextAction::Ascend => NextAction::Ascend,
            },
            suggested_task: n.suggested_task,
        }),
        artifacts: r
            .artifacts
            .into_iter()
            .map(|a| ArtifactRef {
                id: a.id,
                kind: a.kind,
                mime_type: a.mime_type,
                sha256: a.sha256,
                version: a.version,
            })
            .collect(),
        claims: r
            .claims
            .into_iter()
            .map(|c| Claim {
                tool: c.tool,
                external_id: c.external_id,
                text: c.text,
            })
            .collect(),
    }
}

//! The host side of the `memory` interface: read and update the team or private document
//! through the task's [`TaskHost`](crate::TaskHost), which checks the specialist's grant,
//! validates, stores and receipts. Here live the conversion between WIT and the runtime's plain
//! types, the refusal for an instance that serves no task, and the base of each update.
//!
//! Every update is a compare-and-swap: its base is the version this instance last read (or
//! stored) of that document, so two instances that read the same version cannot both replace
//! it; the second gets a refusal naming both versions and reads again. (The WIT `update` has
//! no base parameter and its error no conflict case: the instance's own read is the base, and
//! the conflict reaches the guest as `refused`, the case that means "nothing stored: merge and
//! send the full document again".) An instance that read nothing of a document replaces it
//! as it is.
//!
//! Keeping the plugin's granted secrets out of both directions also lives here: they are
//! redacted from a document read and from a text written (so a team memory served to every
//! client never holds one; the rest of the text is kept, see [`guild_http::redact`]).

use guild_core::capability::{denied, trace_decision};
use guild_memory::{Scope, Usage};

use crate::bindings::memory::{self, Document, Refusal, UpdateError, UpdateOutcome, UpdateResult};
use crate::bindings::types::HostError;
use crate::state::StoreState;
use crate::task::{MemoryCallError, MemoryText, MemoryWrite};

fn scope(scope: memory::Scope) -> Scope {
    match scope {
        memory::Scope::Team => Scope::Team,
        memory::Scope::Private => Scope::Private,
    }
}

/// Sizes beyond `u32` cannot reach the store (the hard limit is far below), so they saturate.
fn usage(usage: Usage) -> memory::Usage {
    let n = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
    memory::Usage {
        chars: n(usage.chars),
        soft_limit: n(usage.soft_limit),
        limit: n(usage.limit),
    }
}

/// A failed call as the WIT's `host-error` (a refusal only comes from an update, which reports
/// it as its own variant before calling this).
fn host_error(e: MemoryCallError) -> HostError {
    match e {
        MemoryCallError::Denied(m) => HostError::Denied(m),
        MemoryCallError::LimitExceeded(m) => HostError::LimitExceeded(m),
        refused @ (MemoryCallError::Refused { .. } | MemoryCallError::Conflict { .. }) => {
            HostError::Failed(refused.to_string())
        }
        MemoryCallError::Failed(m) => HostError::Failed(m),
    }
}

impl StoreState {
    /// The refusal for an instance that serves no task (`describe` runs without one).
    fn no_memory_task(&self, right: &str) -> HostError {
        trace_decision(&self.plugin, "memory", right, false);
        HostError::Denied(denied(
            &self.name,
            "memory",
            right,
            "only specialists running a task can use memory",
        ))
    }
}

impl memory::Host for StoreState {
    async fn read(
        &mut self,
        which: memory::Scope,
    ) -> wasmtime::Result<Result<Document, HostError>> {
        let which = scope(which);
        let Some(task) = self.task.clone() else {
            let refusal = self.no_memory_task(&format!("{which}:read"));
            return self.counted(Err(refusal));
        };
        let answer = match task.memory_read(which).await {
            Ok(MemoryText {
                text,
                version,
                usage: u,
            }) => {
                self.memory_bases.set(which, version);
                Ok(Document {
                    text: self.redactor.redact_str(&text).into_owned(),
                    version,
                    usage: usage(u),
                })
            }
            Err(e) => Err(host_error(e)),
        };
        self.counted(answer)
    }

    async fn update(
        &mut self,
        which: memory::Scope,
        text: String,
    ) -> wasmtime::Result<Result<UpdateResult, UpdateError>> {
        let which = scope(which);
        let Some(task) = self.task.clone() else {
            let refusal = self.no_memory_task(&format!("{which}:write"));
            self.count_refusal()?;
            return Ok(Err(UpdateError::Host(refusal)));
        };
        let text = self.redactor.redact_str(&text).into_owned();
        let base = self.memory_bases.get(which);
        let refused_usage = Usage::of(&text);
        let answer = match task.memory_update(which, base, text).await {
            Ok(MemoryWrite::Stored {
                version,
                warnings,
                usage: u,
            }) => {
                self.memory_bases.set(which, version);
                Ok(UpdateResult {
                    outcome: UpdateOutcome::Stored(version),
                    warnings,
                    usage: usage(u),
                })
            }
            Ok(MemoryWrite::NoOp { reason, usage: u }) => Ok(UpdateResult {
                outcome: UpdateOutcome::NoOp(reason),
                warnings: Vec::new(),
                usage: usage(u),
            }),
            Err(MemoryCallError::Refused { errors, usage: u }) => {
                Err(UpdateError::Refused(Refusal {
                    errors,
                    usage: usage(u),
                }))
            }
            Err(MemoryCallError::Conflict { message, .. }) => Err(UpdateError::Refused(Refusal {
                errors: vec![message],
                usage: usage(refused_usage),
            })),
            Err(e) => Err(UpdateError::Host(host_error(e))),
        };
        if matches!(
            answer,
            Err(UpdateError::Host(
                HostError::Denied(_) | HostError::LimitExceeded(_)
            ))
        ) {
            self.count_refusal()?;
        }
        Ok(answer)
    }
}

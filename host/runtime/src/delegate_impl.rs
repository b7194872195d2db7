//! The host side of the `delegate` interface (docs/delegation.md).
//!
//! The grant is checked here (requested and granted, at least one specialist named; a
//! specialist the grant does not name is refused by the brief check behind the call, which
//! names the rule). Then the call goes to the task's
//! [`TaskHost::delegate_run`](crate::TaskHost::delegate_run) or
//! [`TaskHost::delegate_review`](crate::TaskHost::delegate_review), behind which the host keeps
//! the tree, checks briefs, limits, budgets and reviews, and runs the child as a task of its
//! own. This module only converts between the WIT records and the host's types.

use guild_core::capability::{denied, trace_decision};
use guild_core::types::{Outcome, Report};
use guild_delegate::{BudgetKind, ReviewEffect, TaskBrief, TaskReview};
use guild_validate::{Check, CheckStatus, Decision};

use crate::bindings::delegate as wit;
use crate::bindings::types;
use crate::state::StoreState;
use crate::task::{ChildReport, DelegateError};

fn brief_from_wit(b: wit::TaskBrief) -> TaskBrief {
    TaskBrief {
        specialist: b.specialist,
        objective: b.objective,
        reason: b.reason,
        completion_criteria: b.completion_criteria,
        expected_outputs: b.expected_outputs,
        parent_findings: b.parent_findings,
        context: b.context,
        constraints: b.constraints,
        context_refs: b.context_refs,
        validation_scopes: b.validation_scopes,
    }
}

fn brief_to_wit(b: TaskBrief) -> wit::TaskBrief {
    wit::TaskBrief {
        specialist: b.specialist,
        objective: b.objective,
        reason: b.reason,
        completion_criteria: b.completion_criteria,
        expected_outputs: b.expected_outputs,
        parent_findings: b.parent_findings,
        context: b.context,
        constraints: b.constraints,
        context_refs: b.context_refs,
        validation_scopes: b.validation_scopes,
    }
}

fn decision_from_wit(d: wit::Decision) -> Decision {
    match d {
        wit::Decision::AcceptRefine => Decision::AcceptRefine,
        wit::Decision::RejectRefine => Decision::RejectRefine,
        wit::Decision::ReviseChild => Decision::ReviseChild,
        wit::Decision::DescendAgain => Decision::DescendAgain,
        wit::Decision::Ascend => Decision::Ascend,
        wit::Decision::ReplanCurrent => Decision::ReplanCurrent,
        wit::Decision::Fail => Decision::Fail,
    }
}

fn decision_to_wit(d: Decision) -> wit::Decision {
    match d {
        Decision::AcceptRefine => wit::Decision::AcceptRefine,
        Decision::RejectRefine => wit::Decision::RejectRefine,
        Decision::ReviseChild => wit::Decision::ReviseChild,
        Decision::DescendAgain => wit::Decision::DescendAgain,
        Decision::Ascend => wit::Decision::Ascend,
        Decision::ReplanCurrent => wit::Decision::ReplanCurrent,
        Decision::Fail => wit::Decision::Fail,
    }
}

fn status_to_wit(s: CheckStatus) -> wit::CheckStatus {
    match s {
        CheckStatus::Passed => wit::CheckStatus::Passed,
        CheckStatus::Unknown => wit::CheckStatus::Unknown,
        CheckStatus::Failed => wit::CheckStatus::Failed,
        CheckStatus::Error => wit::CheckStatus::Error,
    }
}

fn check_to_wit(c: Check) -> wit::Check {
    wit::Check {
        name: c.name,
        status: status_to_wit(c.status),
        message: c.message,
    }
}

/// The report as the parent reads it; the host's `protocol_error` outcome reads `failed` (WIT
/// has no such case) and `child-report.protocol-error` says so.
fn report_to_wit(r: Report) -> types::Report {
    use guild_core::types::NextAction;
    types::Report {
        summary: r.summary,
        outcome: match r.outcome {
            Outcome::Satisfied => types::Outcome::Satisfied,
            Outcome::Partial => types::Outcome::Partial,
            Outcome::Failed | Outcome::ProtocolError => types::Outcome::Failed,
        },
        details: r.details,
        hard_passed: r.hard_passed,
        open_issues: r.open_issues,
        remaining_issues: r.remaining_issues,
        next_step: r.next_step.map(|n| types::NextStep {
            action: match n.action {
                NextAction::Stop => types::NextAction::Stop,
                NextAction::Descend => types::NextAction::Descend,
                NextAction::Refine => types::NextAction::Refine,
                NextAction::Ascend => types::NextAction::Ascend,
            },
            suggested_task: n.suggested_task,
        }),
        artifacts: r
            .artifacts
            .into_iter()
            .map(|a| types::ArtifactRef {
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
            .map(|c| types::Claim {
                tool: c.tool,
                external_id: c.external_id,
                text: c.text,
            })
            .collect(),
    }
}

fn effect_to_wit(e: ReviewEffect) -> wit::ReviewEffect {
    match e {
        ReviewEffect::TakeSuggestion { next_task } => {
            wit::ReviewEffect::TakeSuggestion(brief_to_wit(next_task))
        }
        ReviewEffect::KeepPlan => wit::ReviewEffect::KeepPlan,
        ReviewEffect::ContinueChild { feedback } => wit::ReviewEffect::ContinueChild(feedback),
        ReviewEffect::NewChild { next_task } => {
            wit::ReviewEffect::NewChild(brief_to_wit(next_task))
        }
        ReviewEffect::ReopenParentGoal => wit::ReviewEffect::ReopenParentGoal,
        ReviewEffect::CompleteParentGoal => wit::ReviewEffect::CompleteParentGoal,
        ReviewEffect::FailParentGoal => wit::ReviewEffect::FailParentGoal,
    }
}

impl StoreState {
    /// `text` with the plugin's granted secrets redacted.
    fn scrub(&self, text: String) -> String {
        self.redactor.redact_str(&text).into_owned()
    }

    fn child_to_wit(&self, c: ChildReport) -> wit::ChildReport {
        wit::ChildReport {
            child_id: c.child_id,
            report: report_to_wit(c.report),
            protocol_error: c.protocol_error,
            error: c.error.map(|e| self.scrub(e)),
            verdict: status_to_wit(c.verdict),
            checks: c.checks.into_iter().map(check_to_wit).collect(),
            allowed: c.allowed.into_iter().map(decision_to_wit).collect(),
            usage: wit::Usage {
                wall_ms: c.wall_ms,
                tool_calls: c.tool_calls,
                tokens: c.tokens,
            },
        }
    }

    fn delegate_error(&self, e: DelegateError) -> wit::DelegateError {
        match e {
            DelegateError::Denied(m) => wit::DelegateError::Denied(m),
            DelegateError::BriefRefused {
                rule,
                field,
                message,
            } => wit::DelegateError::BriefRefused(wit::BriefRefused {
                rule: rule.to_owned(),
                field,
                message,
            }),
            DelegateError::ReviewRefused { message, allowed } => {
                wit::DelegateError::ReviewRefused(wit::ReviewRefused {
                    message,
                    allowed: allowed.into_iter().map(decision_to_wit).collect(),
                })
            }
            DelegateError::BudgetExceeded {
                kind, limit, used, ..
            } => wit::DelegateError::BudgetExceeded(wit::BudgetExceeded {
                budget: match kind {
                    BudgetKind::Tasks => wit::BudgetKind::Tasks,
                    BudgetKind::ToolCalls => wit::BudgetKind::ToolCalls,
                    BudgetKind::Tokens => wit::BudgetKind::Tokens,
                    BudgetKind::WallMs => wit::BudgetKind::WallMs,
                },
                limit,
                used,
            }),
            DelegateError::TooDeep(m) => wit::DelegateError::TooDeep(m),
            DelegateError::TooManyChildren(m) => wit::DelegateError::TooManyChildren(m),
            DelegateError::ReviewPending(m) => wit::DelegateError::ReviewPending(m),
            DelegateError::NoPendingReview(m) => wit::DelegateError::NoPendingReview(m),
            DelegateError::Cancelled(m) => wit::DelegateError::Cancelled(m),
            DelegateError::ChildFailed(m) => wit::DelegateError::ChildFailed(self.scrub(m)),
        }
    }

    /// Why this instance may not delegate at all, or `None`.
    fn delegate_refusal(&self, target: &str) -> Option<DelegateError> {
        if self.caps.delegate.is_empty() {
            let why = if self.caps.delegate_requested {
                "not granted: the operator adds `delegate = [\"SPECIALIST\", ...]` to \
                 `[grants.NAME]` in guild.toml"
            } else {
                "not requested: add `delegate = [\"SPECIALIST\", ...]` to `[capabilities]` in \
                 plugin.toml"
            };
            return Some(DelegateError::Denied(denied(
                &self.name, "delegate", target, why,
            )));
        }
        if self.task.is_none() {
            return Some(DelegateError::Denied(denied(
                &self.name,
                "delegate",
                target,
                "no task: children are started only while running a task",
            )));
        }
        None
    }

    /// `e` for the guest, after counting it when it is a refusal.
    fn delegate_refused<T>(
        &mut self,
        e: DelegateError,
    ) -> wasmtime::Result<Result<T, wit::DelegateError>> {
        if matches!(
            e,
            DelegateError::Denied(_) | DelegateError::BudgetExceeded { .. }
        ) {
            self.count_refusal()?;
        }
        Ok(Err(self.delegate_error(e)))
    }
}

impl wit::Host for StoreState {
    async fn specialists(&mut self) -> wasmtime::Result<Vec<String>> {
        Ok(self.caps.delegate.iter().cloned().collect())
    }

    async fn run(
        &mut self,
        brief: wit::TaskBrief,
    ) -> wasmtime::Result<Result<wit::ChildReport, wit::DelegateError>> {
        let target = brief.specialist.clone();
        if let Some(refusal) = self.delegate_refusal(&target) {
            trace_decision(&self.plugin, "delegate", &target, false);
            return self.delegate_refused(refusal);
        }
        trace_decision(&self.plugin, "delegate", &target, true);
        let Some(task) = self.task.clone() else {
            return Ok(Err(wit::DelegateError::Denied("no task".to_owned())));
        };
        match task.delegate_run(brief_from_wit(brief)).await {
            Ok(child) => Ok(Ok(self.child_to_wit(child))),
            Err(e) => self.delegate_refused(e),
        }
    }

    async fn review(
        &mut self,
        child_id: String,
        review: wit::TaskReview,
    ) -> wasmtime::Result<Result<wit::ReviewEffect, wit::DelegateError>> {
        if let Some(refusal) = self.delegate_refusal(&child_id) {
            return self.delegate_refused(refusal);
        }
        let Some(task) = self.task.clone() else {
            return Ok(Err(wit::DelegateError::Denied("no task".to_owned())));
        };
        let review = TaskReview {
            decision: decision_from_wit(review.decision),
            reason: review.reason,
            next_task: review.next_task.map(brief_from_wit),
        };
        match task.delegate_review(child_id, review).await {
            Ok(effect) => Ok(Ok(effect_to_wit(effect))),
            Err(e) => self.delegate_refused(e),
        }
    }
}

//! The parent's review of a child's report. The report has been through the host's validation
//! (receipts, hashes, rules); the parent must then answer with a [`TaskReview`], and the host
//! accepts it only when the decision matrix allows it for that verdict and outcome
//! (`guild_validate::check_decision`) and the batch rules hold:
//!
//! - ASCEND and FAIL only on the last pending report of the batch, and only when no approved
//!   next action is still waiting to run;
//! - DESCEND_AGAIN carries the brief of the new direct child (checked like any brief);
//!   ACCEPT_REFINE takes the child's own suggested next task, so the child must have made one;
//!   no other decision carries a brief;
//! - every review says why.
//!
//! While a review is pending the parent may only review and read context
//! ([`tool_allowed_during_review`]); an approved next task must be dispatched exactly as
//! approved ([`check_dispatch`]). Nothing cascades: REPLAN_CURRENT reopens only the goal of the
//! direct parent that created the child (the host finds it from the child's persisted parent
//! ids, never from an argument), ASCEND and FAIL end only the parent's current goal.

use guild_core::types::Outcome;
use guild_validate::CheckStatus;
use guild_validate::{Decision, DecisionError, check_decision};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::brief::TaskBrief;
use crate::text::check_field;

/// A parent's answer to one child's validated report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskReview {
    /// What the parent does with the report.
    pub decision: Decision,
    /// Why (for REVISE_CHILD, what the child should change).
    pub reason: String,
    /// DESCEND_AGAIN only: the new child's brief.
    #[serde(default)]
    pub next_task: Option<TaskBrief>,
}

/// What the host knows about the report under review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewContext {
    /// The host's verdict on the child's report.
    pub verdict: CheckStatus,
    /// The report's own outcome.
    pub outcome: Outcome,
    /// This is the last report of the batch still waiting for a review.
    pub last_pending: bool,
    /// An approved next action has not been dispatched yet.
    pub unexecuted_next_action: bool,
    /// The next task the child's report suggested, if any.
    pub child_suggestion: Option<TaskBrief>,
}

/// What the host does with an accepted review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "effect", rename_all = "snake_case")]
pub enum ReviewEffect {
    /// ACCEPT_REFINE: the child's suggested task becomes the parent's next action (checked as a
    /// brief before it runs).
    TakeSuggestion {
        /// The suggestion.
        next_task: TaskBrief,
    },
    /// REJECT_REFINE: the suggestion is dropped; the parent's plan stands.
    KeepPlan,
    /// REVISE_CHILD: the same child continues with its report history and this feedback; no new
    /// child slot is used.
    ContinueChild {
        /// What the child should change.
        feedback: String,
    },
    /// DESCEND_AGAIN: a new direct child with this brief (checked as a brief before it runs).
    NewChild {
        /// The brief.
        next_task: TaskBrief,
    },
    /// REPLAN_CURRENT: the goal of the direct parent that created the child is reopened.
    ReopenParentGoal,
    /// ASCEND: the parent's current goal is complete (no cascade).
    CompleteParentGoal,
    /// FAIL: the parent's current goal failed (no cascade).
    FailParentGoal,
}

/// A review the host refuses; the message says what is allowed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ReviewError {
    /// The decision matrix does not allow it.
    #[error("review refused: {0}")]
    Matrix(#[from] DecisionError),
    /// ASCEND or FAIL before the batch's last report.
    #[error(
        "review refused: {0} only on the last pending report of the batch; review the other reports first (revise_child or replan_current are allowed now)"
    )]
    NotLast(Decision),
    /// ASCEND or FAIL while an approved next action waits.
    #[error(
        "review refused: {0} while an approved next task has not run; dispatch it (exactly as approved) first"
    )]
    PendingNextAction(Decision),
    /// DESCEND_AGAIN without a brief.
    #[error("review refused: descend_again needs next_task, the brief of the new child")]
    MissingNextTask,
    /// A brief where the decision takes none.
    #[error(
        "review refused: only descend_again carries next_task (accept_refine takes the child's own suggestion); {0} does not"
    )]
    UnexpectedNextTask(Decision),
    /// ACCEPT_REFINE when the child suggested nothing.
    #[error(
        "review refused: accept_refine takes the child's suggested next task, and this report suggests none"
    )]
    NoSuggestion,
    /// No reason given.
    #[error("review refused: {0}")]
    Reason(String),
    /// A call other than the review or a context read while a review is pending.
    #[error(
        "{0} refused: a child's report is waiting for your review; until you review it you may only review and read context"
    )]
    ReviewPending(String),
    /// A next task dispatched other than as approved.
    #[error(
        "dispatch refused: an approved next task must be dispatched exactly as approved (approved {approved}, got {got})"
    )]
    NotAsApproved {
        /// Hash of the approved brief.
        approved: String,
        /// Hash of the brief dispatched.
        got: String,
    },
}

/// Checks `review` of a report in `ctx` and says what the host does.
pub fn check_review(review: &TaskReview, ctx: &ReviewContext) -> Result<ReviewEffect, ReviewError> {
    let d = review.decision;
    check_field("reason", &review.reason, 4_000).map_err(ReviewError::Reason)?;
    check_decision(ctx.verdict, ctx.outcome, d)?;
    if matches!(d, Decision::Ascend | Decision::Fail) {
        if !ctx.last_pending {
            return Err(ReviewError::NotLast(d));
        }
        if ctx.unexecuted_next_action {
            return Err(ReviewError::PendingNextAction(d));
        }
    }
    match (d, &review.next_task) {
        (Decision::DescendAgain, None) => return Err(ReviewError::MissingNextTask),
        (Decision::DescendAgain, Some(_)) => {}
        (other, Some(_)) => return Err(ReviewError::UnexpectedNextTask(other)),
        (_, None) => {}
    }
    Ok(match d {
        Decision::AcceptRefine => ReviewEffect::TakeSuggestion {
            next_task: ctx
                .child_suggestion
                .clone()
                .ok_or(ReviewError::NoSuggestion)?,
        },
        Decision::RejectRefine => ReviewEffect::KeepPlan,
        Decision::ReviseChild => ReviewEffect::ContinueChild {
            feedback: review.reason.trim().to_owned(),
        },
        Decision::DescendAgain => ReviewEffect::NewChild {
            next_task: review
                .next_task
                .clone()
                .ok_or(ReviewError::MissingNextTask)?,
        },
        Decision::ReplanCurrent => ReviewEffect::ReopenParentGoal,
        Decision::Ascend => ReviewEffect::CompleteParentGoal,
        Decision::Fail => ReviewEffect::FailParentGoal,
    })
}

/// What a parent calls while a review is pending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PendingCall<'a> {
    /// The review itself.
    Review,
    /// A read of context (a report, an artifact, memory, receipts).
    ContextRead,
    /// Anything else, by name.
    Other(&'a str),
}

/// Whether a parent with a pending review may make this call.
pub fn tool_allowed_during_review(call: PendingCall<'_>) -> Result<(), ReviewError> {
    match call {
        PendingCall::Review | PendingCall::ContextRead => Ok(()),
        PendingCall::Other(name) => Err(ReviewError::ReviewPending(name.to_owned())),
    }
}

/// Accepts the dispatch of `brief` as the next task approved with hash `approved`.
pub fn check_dispatch(approved: &str, brief: &TaskBrief) -> Result<(), ReviewError> {
    let got = brief.hash();
    if got == approved {
        Ok(())
    } else {
        Err(ReviewError::NotAsApproved {
            approved: approved.to_owned(),
            got,
        })
    }
}

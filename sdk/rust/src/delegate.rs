//! Child tasks through the host (the `delegate` interface, docs/delegation.md). Specialists
//! granted `delegate` only. [`run`] starts one child with a [`TaskBrief`] and returns its report
//! after the host validated it; the parent must then answer with [`review`] before it calls a
//! tool or starts another child. The host checks the brief, the tree's limits and budget, and
//! the review's decision against the matrix; every refusal is a typed [`DelegateError`].
//!
//! ```no_run
//! use guild_sdk::delegate::{self, Decision, TaskBrief, TaskReview};
//!
//! # fn work() -> Result<(), guild_sdk::delegate::DelegateError> {
//! let child = delegate::run(&TaskBrief {
//!     specialist: "kb".into(),
//!     objective: "Find the runbook for the payment outage".into(),
//!     reason: "The incident summary must link it".into(),
//!     completion_criteria: vec!["the runbook's page id is reported".into()],
//!     expected_outputs: vec![],
//!     parent_findings: String::new(),
//!     context: String::new(),
//!     constraints: vec![],
//!     context_refs: vec![],
//!     validation_scopes: vec![],
//! })?;
//! delegate::review(
//!     &child.child_id,
//!     &TaskReview { decision: Decision::Ascend, reason: "found it".into(), next_task: None },
//! )?;
//! # Ok(())
//! # }
//! ```

pub use crate::bindings::specialist::guild::plugin::delegate::{
    BriefRefused, BudgetExceeded, BudgetKind, Check, CheckStatus, ChildReport, Decision,
    DelegateError, ReviewEffect, ReviewRefused, TaskBrief, TaskReview, Usage, review, run,
    specialists,
};

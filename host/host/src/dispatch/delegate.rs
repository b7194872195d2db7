//! A task's children (docs/delegation.md): `delegate.run` and `delegate.review` as the host
//! carries them out for the task in [`TaskScope`].
//!
//! `run` checks the brief (`TaskBrief::check`, against the tree's root anchor and the caller's
//! own constraints, grant and context), refuses while a review is pending, holds an approved
//! next task to its hash (`check_dispatch`), admits the child (depth, fan-out, the tree's task
//! budget, charged up the chain), and runs it through [`super::task`] like any task: a fresh
//! instance, the child's own grants, its report validated. The child's deadline is what the
//! tree leaves it of wall time, never later than its parent's own (so a grandchild started late
//! in its parent's run gets only what is left); its tool calls and model tokens are charged up
//! the chain as it spends them and refused once its node has none left, its wall time when it
//! ends. A review is then pending on the caller.
//!
//! `review` checks the caller's review with `check_review` and records what it approved. The
//! top task becomes a tree's root when it starts, if its caller anchored it ([`plant_root`]),
//! else on its first `run`, anchored to its description.

use std::sync::Arc;
use std::time::Duration;

use guild_core::limits::MAX_DESCRIPTION_BYTES;
use guild_core::llm::LlmError;
use guild_core::memory_access::MemoryAccess;
use guild_core::types::{NextAction, Outcome};
use guild_delegate::{
    BriefError, BriefParent, Budget, BudgetKind, CheckedBrief, ReviewContext, ReviewEffect,
    ReviewError, RootAnchor, TaskBrief, TaskReview, TreeError, check_dispatch, check_review,
};
use guild_runtime::{ChildReport, DelegateError};
use guild_validate::{CheckStatus, Decision, allowed_decisions};

use super::{Approval, TaskOptions, TaskScope};
use crate::delegation::{Approved, Node, NodeStatus, Pending, ReviewRecord, root_anchor};
use crate::types::TaskResult;
use guild_core::error::DispatchError;

fn tree_error(e: TreeError) -> DelegateError {
    let message = e.to_string();
    match e {
        TreeError::TooDeep { .. } => DelegateError::TooDeep(message),
        TreeError::TooManyChildren { .. } => DelegateError::TooManyChildren(message),
        TreeError::Exhausted { kind, limit, used } => DelegateError::BudgetExceeded {
            kind,
            limit,
            used,
            message,
        },
    }
}

fn brief_error(e: BriefError) -> DelegateError {
    let (rule, field) = match &e {
        BriefError::Field(m) => ("field", m.split('`').nth(1).unwrap_or("brief").to_owned()),
        BriefError::Specialist { .. } => ("specialist", "specialist".to_owned()),
        BriefError::DroppedConstraint { .. } => ("constraints", "constraints".to_owned()),
        BriefError::ContextRef(_) => ("context-refs", "context_refs".to_owned()),
        BriefError::Scope(_) => ("validation-scope", "validation_scopes".to_owned()),
    };
    DelegateError::BriefRefused {
        rule,
        field,
        message: e.to_string(),
    }
}

fn review_refused(e: &ReviewError, allowed: &[Decision]) -> DelegateError {
    DelegateError::ReviewRefused {
        message: e.to_string(),
        allowed: allowed.to_vec(),
    }
}

/// The child's description: its brief, rendered for a reader that sees nothing else, with
/// `context` last and verbatim.
fn render(parent: &str, brief: &TaskBrief, revision: Option<(&[String], &str)>) -> String {
    let list = |items: &[String]| items.iter().map(|i| format!("- {i}\n")).collect::<String>();
    let mut out = format!(
        "# A task from {parent}\n\n## Objective\n{}\n\n## Why\n{}\n\n## Completion criteria\n{}",
        brief.objective,
        brief.reason,
        list(&brief.completion_criteria)
    );
    for (title, items) in [
        ("Expected outputs", &brief.expected_outputs),
        ("Constraints (all must be kept)", &brief.constraints),
        ("Context you may read", &brief.context_refs),
        ("Validation scopes", &brief.validation_scopes),
    ] {
        if !items.is_empty() {
            out.push_str(&format!("\n## {title}\n{}", list(items)));
        }
    }
    if !brief.parent_findings.is_empty() {
        out.push_str(&format!(
            "\n## What the parent found\n{}\n",
            brief.parent_findings
        ));
    }
    if let Some((history, feedback)) = revision {
        out.push_str(&format!(
            "\n## Your earlier reports\n{}\n## Feedback: revise your work\n{feedback}\n",
            list(history)
        ));
    }
    out.push_str(&format!("\n## Context\n{}", brief.context));
    out
}

/// Refuses a rendered brief that would not fit a task description.
fn fits(description: &str) -> Result<(), DelegateError> {
    if description.len() <= MAX_DESCRIPTION_BYTES {
        return Ok(());
    }
    Err(DelegateError::BriefRefused {
        rule: "field",
        field: "context".into(),
        message: format!(
            "brief refused: rendered as the child's description it is {} bytes, over the limit of {MAX_DESCRIPTION_BYTES}",
            description.len()
        ),
    })
}

/// The brief an ACCEPT_REFINE takes: the child's suggested task as a JSON brief, or, when it
/// is plain text, the child's own brief with that text as its objective.
fn suggestion(child: &Node, child_id: &str, r: &guild_core::types::Report) -> Option<TaskBrief> {
    let step = r.next_step.as_ref()?;
    if !matches!(step.action, NextAction::Descend | NextAction::Refine) {
        return None;
    }
    let text = step.suggested_task.as_deref()?.trim();
    if text.is_empty() {
        return None;
    }
    if let Ok(brief) = serde_json::from_str::<TaskBrief>(text) {
        return Some(brief);
    }
    let mut brief = child.brief.clone()?;
    brief.objective = text.to_owned();
    brief.reason = format!("suggested by child task {child_id}");
    Some(brief)
}

impl TaskScope {
    /// Whether this task may hold `reference` as context: its own memory scopes it may read,
    /// and `task:ID` of itself or one of its children.
    fn holds(&self, children: &[String], reference: &str) -> bool {
        let memory = &self.plugin.runtime.effective().memory.allowed;
        match reference {
            "memory:team" => memory.contains(&MemoryAccess::TeamRead),
            "memory:private" => memory.contains(&MemoryAccess::PrivateRead),
            other => other
                .strip_prefix("task:")
                .is_some_and(|id| id == self.task_id || children.iter().any(|c| c == id)),
        }
    }

    /// `Some(refusal)` when a child's report waits for this task's review: `what` (a tool
    /// call, a memory update, a new child) may not happen until it is reviewed.
    pub(crate) fn review_gate(&self, what: &str) -> Option<String> {
        let forest = self.services.forest.lock();
        let pending = forest.nodes.get(&self.task_id)?.pending.as_ref()?;
        Some(format!(
            "{} (child task {})",
            ReviewError::ReviewPending(what.to_owned()),
            pending.child_id
        ))
    }

    /// Charges one tool call to this task's tree when it is a child; `Err` says which budget
    /// is spent.
    pub(crate) fn charge_tree_call(&self) -> Result<(), String> {
        let mut forest = self.services.forest.lock();
        if forest
            .nodes
            .get(&self.task_id)
            .is_none_or(|n| n.parent.is_none())
        {
            return Ok(());
        }
        let one = Budget {
            tool_calls: 1,
            ..Budget::default()
        };
        forest.charge(&self.task_id, &one).map_err(|e| {
            format!("tool call refused: {e}; stop calling tools and report what you have")
        })?;
        self.services.forest.save(&forest, &self.task_id);
        Ok(())
    }

    /// `Err` when this task is a child and its tree has no model tokens left to its node: the
    /// call is refused before anything is sent.
    pub(crate) fn tree_tokens_left(&self) -> Result<(), LlmError> {
        let forest = self.services.forest.lock();
        if forest
            .nodes
            .get(&self.task_id)
            .is_none_or(|n| n.parent.is_none())
        {
            return Ok(());
        }
        let left = forest.left(&self.task_id, BudgetKind::Tokens);
        if left > 0 {
            return Ok(());
        }
        let limit = self.services.forest.limits.budget.tokens;
        Err(LlmError::BudgetExceeded {
            budget: guild_core::llm::BudgetKind::TreeTokens,
            limit,
            used: limit.saturating_sub(left),
        })
    }

    /// Charges the tokens of an answered model call to this task's tree when it is a child
    /// (what was spent cannot be refused: past the budget what is left is 0).
    pub(crate) fn charge_tree_tokens(&self, tokens: u64) {
        let mut forest = self.services.forest.lock();
        if forest
            .nodes
            .get(&self.task_id)
            .is_none_or(|n| n.parent.is_none())
        {
            return;
        }
        forest.charge_spent(
            &self.task_id,
            &Budget {
                tokens,
                ..Budget::default()
            },
        );
        self.services.forest.save(&forest, &self.task_id);
    }

    /// Makes this task a tree's root if it is in none yet, anchored to its description.
    fn ensure_node(&self) -> Result<(), DelegateError> {
        let mut forest = self.services.forest.lock();
        if forest.nodes.contains_key(&self.task_id) {
            return Ok(());
        }
        let anchor = root_anchor(&self.description, None)
            .map_err(|e| DelegateError::ChildFailed(e.to_string()))?;
        let limits = &self.services.forest.limits;
        forest
            .plant_root(&self.task_id, &self.plugin.name, limits, anchor)
            .map_err(tree_error)?;
        self.services.forest.save(&forest, &self.task_id);
        Ok(())
    }

    /// The specialists this task's `delegate` grant names.
    fn may_call(&self) -> Vec<String> {
        self.plugin
            .runtime
            .effective()
            .delegate
            .iter()
            .cloned()
            .collect()
    }

    /// Checks `brief` and admits its child (or picks the revised child), recording it; returns
    /// the child's id, the checked brief, its description and its wall-clock allowance.
    fn admit_child(
        &self,
        brief: &TaskBrief,
    ) -> Result<(String, CheckedBrief, String, u64), DelegateError> {
        self.ensure_node()?;
        let may_call = self.may_call();
        let mut forest = self.services.forest.lock();
        let forest = &mut *forest;
        let node = forest
            .nodes
            .get(&self.task_id)
            .ok_or_else(|| DelegateError::ChildFailed("the task's tree is gone".into()))?;
        if let Some(p) = &node.pending {
            return Err(DelegateError::ReviewPending(format!(
                "{} (child task {})",
                ReviewError::ReviewPending("delegate.run".into()),
                p.child_id
            )));
        }
        let anchor = forest
            .anchors
            .get(&node.root)
            .ok_or_else(|| DelegateError::ChildFailed("the tree's root anchor is gone".into()))?;
        let children = node.children.clone();
        let holds = |r: &str| self.holds(&children, r);
        let checked = brief
            .check(&BriefParent {
                anchor,
                constraints: &node.constraints,
                may_call: &may_call,
                holds: &holds,
            })
            .map_err(brief_error)?;
        // The specialist must be loaded before a slot is spent on it (the grant was checked).
        // A specialist a lazy start still compiles counts: the child's task waits for it.
        super::known(&self.services, &self.snapshot, &checked.brief.specialist)
            .map_err(|e| DelegateError::ChildFailed(e.to_string()))?;
        let approved = node.approved.clone();
        if let Some(a) = &approved {
            check_dispatch(&a.hash, &checked.brief).map_err(|e| DelegateError::BriefRefused {
                rule: "not-as-approved",
                field: "brief".into(),
                message: e.to_string(),
            })?;
        }
        // A revised child continues under its own id, in its own slot.
        if let Some((child_id, feedback)) = approved.and_then(|a| a.continue_child) {
            let child = forest
                .nodes
                .get_mut(&child_id)
                .ok_or_else(|| DelegateError::ChildFailed(format!("child {child_id} is gone")))?;
            let description = render(
                &self.plugin.name,
                &checked.brief,
                Some((&child.history, &feedback)),
            );
            fits(&description)?;
            child.status = NodeStatus::Running;
            if let Some(n) = forest.nodes.get_mut(&self.task_id) {
                n.approved = None;
            }
            let wall = self.wall_allowance(forest, &child_id);
            self.services.forest.save(forest, &self.task_id);
            return Ok((child_id, checked, description, wall));
        }
        let description = render(&self.plugin.name, &checked.brief, None);
        fits(&description)?;
        let state = forest
            .admit(&self.task_id, &self.services.forest.limits)
            .map_err(tree_error)?;
        let child_id = uuid::Uuid::now_v7().to_string();
        let root = forest
            .nodes
            .get_mut(&self.task_id)
            .map(|n| {
                n.approved = None;
                n.children.push(child_id.clone());
                n.root.clone()
            })
            .unwrap_or_default();
        let node = Node::child(&self.task_id, root, &checked.brief, state);
        forest.nodes.insert(child_id.clone(), node);
        let wall = self.wall_allowance(forest, &child_id);
        self.services.forest.save(forest, &self.task_id);
        Ok((child_id, checked, description, wall))
    }

    /// The wall-clock milliseconds `child` may run from now (its clock starts): what its
    /// tree leaves it, and no more than this task has left before its own deadline.
    fn wall_allowance(&self, forest: &mut crate::delegation::ForestState, child: &str) -> u64 {
        forest.start_clock(&self.task_id, child, tokio::time::Instant::now())
    }

    /// `delegate.run`: one child, run to its end; its validated report is then pending review.
    pub(crate) async fn delegate_run(
        &self,
        brief: TaskBrief,
    ) -> Result<ChildReport, DelegateError> {
        let (child_id, checked, description, wall_ms) = self.admit_child(&brief)?;
        let (approver, in_batch) = match &self.approval {
            Approval::Ask(a) => (a.clone(), false),
            Approval::InBatch => (None, true),
        };
        let options = TaskOptions {
            approver,
            in_batch,
            task_id: Some(child_id.clone()),
            snapshot: Some(self.snapshot.clone()),
            child: true,
            deadline: Some(tokio::time::Instant::now() + Duration::from_millis(wall_ms)),
            ..TaskOptions::default()
        };
        let services = self.services.clone();
        let specialist = checked.brief.specialist.clone();
        let run =
            Box::pin(
                async move { super::task(&services, &specialist, &description, options).await },
            );
        let started = std::time::Instant::now();
        let result = tokio::time::timeout(Duration::from_millis(wall_ms), run).await;
        let spent_wall = started.elapsed().as_millis() as u64;
        self.services.forest.lock().deadlines.remove(&child_id);
        match result {
            Err(_) => {
                let mut forest = self.services.forest.lock();
                forest.charge_spent(
                    &child_id,
                    &Budget {
                        wall_ms: spent_wall,
                        ..Budget::default()
                    },
                );
                self.services.forest.save(&forest, &child_id);
                Err(DelegateError::BudgetExceeded {
                    kind: guild_delegate::BudgetKind::WallMs,
                    limit: wall_ms,
                    used: spent_wall,
                    message: format!(
                        "tree budget exceeded: wall-clock ms ({spent_wall} used of {wall_ms}); child task {child_id} was cancelled"
                    ),
                })
            }
            Ok(Err(e)) => {
                let mut forest = self.services.forest.lock();
                forest.cancel_subtree(&child_id);
                self.services.forest.save(&forest, &child_id);
                Err(DelegateError::ChildFailed(e.to_string()))
            }
            Ok(Ok(result)) => Ok(self.child_ended(&child_id, result, spent_wall)),
        }
    }

    /// Records a finished child: what it spent, its verdict, the review now pending.
    fn child_ended(&self, child_id: &str, result: TaskResult, wall_ms: u64) -> ChildReport {
        let validation = result.validation.unwrap_or_else(|| {
            guild_validate::check(
                child_id,
                result.report.as_ref(),
                &[],
                &guild_validate::NoWorkspace,
            )
        });
        let report = validation.report.clone();
        let outcome = report.outcome;
        let tokens: u64 = result
            .usage
            .models
            .values()
            .map(|m| m.prompt_tokens + m.completion_tokens)
            .sum();
        let mut forest = self.services.forest.lock();
        // Its tokens were charged call by call (`charge_tree_tokens`); its wall time now.
        forest.charge_spent(
            child_id,
            &Budget {
                wall_ms,
                ..Budget::default()
            },
        );
        let suggestion = forest
            .nodes
            .get(child_id)
            .and_then(|child| suggestion(child, child_id, &report));
        if let Some(child) = forest.nodes.get_mut(child_id) {
            child.status = NodeStatus::Finished;
            child.verdict = Some(validation.verdict);
            child.history.push(report.summary.clone());
            // A later attempt (a revision) is judged on the receipts appended after this one.
            if let Some(last) = result.receipts.iter().map(|r| r.sequence).max() {
                child.attempt_from = child.attempt_from.max(last + 1);
            }
        }
        if let Some(parent) = forest.nodes.get_mut(&self.task_id) {
            parent.pending = Some(Pending {
                child_id: child_id.to_owned(),
                verdict: validation.verdict,
                outcome,
                suggestion,
            });
        }
        self.services.forest.save(&forest, child_id);
        ChildReport {
            child_id: child_id.to_owned(),
            protocol_error: outcome == Outcome::ProtocolError,
            report,
            error: result.error,
            verdict: validation.verdict,
            checks: validation.checks,
            allowed: allowed_decisions(validation.verdict, outcome).to_vec(),
            wall_ms,
            tool_calls: u64::from(result.usage.tool_calls),
            tokens,
        }
    }

    /// `delegate.review`: the caller's review of its pending child's report.
    pub(crate) fn delegate_review(
        &self,
        child_id: &str,
        review: &TaskReview,
    ) -> Result<ReviewEffect, DelegateError> {
        let may_call = self.may_call();
        let mut forest = self.services.forest.lock();
        let forest = &mut *forest;
        let Some(node) = forest.nodes.get(&self.task_id) else {
            return Err(DelegateError::NoPendingReview(format!(
                "review refused: this task started no child, so there is no report to review (asked for {child_id:?})"
            )));
        };
        let pending = match &node.pending {
            Some(p) if p.child_id == child_id => p.clone(),
            Some(p) => {
                return Err(DelegateError::NoPendingReview(format!(
                    "review refused: the report waiting for review is child task {}'s, not {child_id:?}",
                    p.child_id
                )));
            }
            None => {
                return Err(DelegateError::NoPendingReview(format!(
                    "review refused: no report of child task {child_id:?} is waiting for review"
                )));
            }
        };
        let allowed = allowed_decisions(pending.verdict, pending.outcome);
        let ctx = ReviewContext {
            verdict: pending.verdict,
            outcome: pending.outcome,
            // One child runs at a time: its report is the batch's last, and no approved task
            // can wait while a report does.
            last_pending: true,
            unexecuted_next_action: node.approved.is_some(),
            child_suggestion: pending.suggestion.clone(),
        };
        let effect = check_review(review, &ctx).map_err(|e| review_refused(&e, allowed))?;
        // A next task is checked as a brief now, so the approval holds a checked hash.
        let anchor = forest
            .anchors
            .get(&node.root)
            .ok_or_else(|| DelegateError::ChildFailed("the tree's root anchor is gone".into()))?;
        let children = node.children.clone();
        let holds = |r: &str| self.holds(&children, r);
        let parent = BriefParent {
            anchor,
            constraints: &node.constraints,
            may_call: &may_call,
            holds: &holds,
        };
        let approved = match &effect {
            ReviewEffect::TakeSuggestion { next_task } | ReviewEffect::NewChild { next_task } => {
                Some(Approved {
                    hash: next_task.check(&parent).map_err(brief_error)?.hash,
                    continue_child: None,
                })
            }
            ReviewEffect::ContinueChild { feedback } => {
                let hash = forest
                    .nodes
                    .get(child_id)
                    .and_then(|c| c.brief.as_ref())
                    .map(TaskBrief::hash)
                    .unwrap_or_default();
                Some(Approved {
                    hash,
                    continue_child: Some((child_id.to_owned(), feedback.clone())),
                })
            }
            _ => None,
        };
        if let Some(n) = forest.nodes.get_mut(&self.task_id) {
            n.pending = None;
            n.approved = approved;
        }
        if let Some(c) = forest.nodes.get_mut(child_id) {
            c.review = Some(ReviewRecord {
                decision: review.decision,
                reason: review.reason.trim().to_owned(),
            });
        }
        self.services.forest.save(forest, child_id);
        tracing::info!(child = child_id, decision = %review.decision, "child report reviewed");
        Ok(effect)
    }
}

/// Makes `task_id` (run by `specialist`) a tree's root from its start, anchored to its caller's
/// `anchor` ([`crate::delegation::root_anchor`], checked already). A task already in a tree (a
/// new attempt of a background task) keeps its node and anchor.
pub(crate) fn plant_root(
    services: &super::Services,
    task_id: &str,
    specialist: &str,
    anchor: RootAnchor,
) -> Result<(), DispatchError> {
    let mut forest = services.forest.lock();
    let planted = forest
        .plant_root(task_id, specialist, &services.forest.limits, anchor)
        .map_err(|e| DispatchError::InvalidAnchor(e.to_string()))?;
    if planted {
        services.forest.save(&forest, task_id);
    }
    Ok(())
}

/// A task's run as its tree sees it. Started with the task ([`TreeGuard::start`]: a re-run of
/// a tree's top task sets its node running again); marks the task's subtree cancelled unless
/// [`TreeGuard::done`] was called: dropped while its task still runs means the task was
/// cancelled (its caller dropped it, an update replaced it, or a budget ran out). Only the
/// latest run of a task changes its node.
pub(crate) struct TreeGuard {
    services: Arc<super::Services>,
    task_id: String,
    run: u64,
    done: bool,
}

impl TreeGuard {
    /// A run of `task_id` starts.
    pub(crate) fn start(services: Arc<super::Services>, task_id: String) -> Self {
        let run = {
            let mut forest = services.forest.lock();
            let (run, reopened) = forest.begin_run(&task_id);
            if reopened {
                services.forest.save(&forest, &task_id);
            }
            run
        };
        Self {
            services,
            task_id,
            run,
            done: false,
        }
    }

    /// The task ended: its node (if it is in a tree) is finished with `verdict`.
    pub(crate) fn done(mut self, verdict: Option<CheckStatus>) {
        self.done = true;
        let mut forest = self.services.forest.lock();
        if !forest.end_run(&self.task_id, self.run) {
            return;
        }
        if let Some(n) = forest.nodes.get_mut(&self.task_id)
            && n.status == NodeStatus::Running
        {
            n.status = NodeStatus::Finished;
            if verdict.is_some() {
                n.verdict = verdict;
            }
        }
        self.services.forest.save(&forest, &self.task_id);
    }
}

impl Drop for TreeGuard {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let mut forest = self.services.forest.lock();
        if forest.end_run(&self.task_id, self.run) {
            forest.cancel_subtree(&self.task_id);
            self.services.forest.save(&forest, &self.task_id);
        }
    }
}

//! Delegation offered to the model (docs/delegation.md): one tool per specialist the
//! `delegate` grant names (`delegate_to__NAME`, whose arguments are the child's brief) and
//! `review_child` (the decision about a child's report). The child's validated report, its
//! verdict, its checks and the decisions the host allows go back to the model as the tool
//! result; a refusal (`brief-refused`, `review-refused`, `budget-exceeded`, …) goes back as a
//! tool error naming its kind, so the model can correct the brief or the review. Nothing is
//! offered without a grant, and the host checks every call again.

use std::fmt::Write as _;

use guild_sdk::Report;
use guild_sdk::agent::{function_name, refusal};
use guild_sdk::delegate::{
    CheckStatus, ChildReport, Decision, DelegateError, ReviewEffect, TaskBrief, TaskReview,
};
use guild_sdk::llm::ToolDefinition;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::env::Env;
use crate::prompt::clip;

/// The prefix of a delegation tool; the specialist's name follows.
pub(crate) const RUN_PREFIX: &str = "delegate_to__";
/// The review tool.
pub(crate) const REVIEW: &str = "review_child";
/// The most of a child's details the model is shown, bytes.
const DETAILS_SHOWN: usize = 8 * 1024;

/// Every decision, as the model spells it.
const DECISIONS: [(&str, Decision); 7] = [
    ("accept_refine", Decision::AcceptRefine),
    ("reject_refine", Decision::RejectRefine),
    ("revise_child", Decision::ReviseChild),
    ("descend_again", Decision::DescendAgain),
    ("ascend", Decision::Ascend),
    ("replan_current", Decision::ReplanCurrent),
    ("fail", Decision::Fail),
];

/// The function name a delegation to `specialist` is offered under.
pub(crate) fn run_tool(specialist: &str) -> String {
    function_name(&format!("{RUN_PREFIX}{specialist}"))
}

/// The brief's fields as a JSON schema (`specialist` left out: the tool names it, except in a
/// `descend_again` review).
fn brief_schema(with_specialist: Option<&[String]>) -> Value {
    let list =
        |what: &str| json!({"type": "array", "items": {"type": "string"}, "description": what});
    let mut properties = json!({
        "objective": {"type": "string", "description": "What the child is to achieve."},
        "reason": {"type": "string", "description": "Why you need it."},
        "completion_criteria": {
            "type": "array", "items": {"type": "string"}, "minItems": 1,
            "description": "How the child knows it is done (1 to 32).",
        },
        "expected_outputs": list("What the child should hand back."),
        "parent_findings": {"type": "string", "description": "What you found so far that the child should know."},
        "context": {"type": "string", "description": "Anything else the child needs, verbatim: it sees nothing of this conversation."},
        "constraints": list("Every constraint you were given, plus any you add; none may be dropped."),
        "context_refs": list("Context the child may read by reference: memory:team, memory:private, task:ID."),
        "validation_scopes": list("Validations the child's report goes through; `task` is always one."),
    });
    let mut required = vec!["objective", "reason", "completion_criteria"];
    if let Some(names) = with_specialist {
        properties["specialist"] = json!({"type": "string", "enum": names});
        required.insert(0, "specialist");
    }
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// The tools for `specialists` (the grant's names): one delegation tool each and the review
/// tool; none when the list is empty.
pub(crate) fn definitions(specialists: &[String]) -> Vec<ToolDefinition> {
    if specialists.is_empty() {
        return Vec::new();
    }
    let mut tools: Vec<ToolDefinition> = specialists
        .iter()
        .map(|name| {
            ToolDefinition::new(
                run_tool(name),
                format!(
                    "Delegates one task to specialist `{name}` and waits for its report, which \
                     the system validates. Review the report with `{REVIEW}` before any other \
                     tool call."
                ),
                &brief_schema(None),
            )
        })
        .collect();
    let decisions: Vec<&str> = DECISIONS.iter().map(|(d, _)| *d).collect();
    tools.push(ToolDefinition::new(
        REVIEW,
        "Decides about a delegated task's report: `revise_child` sends it back with your reason \
         as feedback (delegate the same brief again to continue it), `ascend` accepts it as \
         finishing your goal, `fail` gives up; `accept_refine` takes the child's suggested next \
         task, `reject_refine` drops it, `descend_again` starts a new child (give `next_task`), \
         `replan_current` reopens your goal. Only the decisions the report's `allowed_decisions` \
         lists are accepted.",
        &json!({
            "type": "object",
            "properties": {
                "child_id": {"type": "string", "description": "The child_id of the report; the report waiting for your review when left out."},
                "decision": {"type": "string", "enum": decisions},
                "reason": {"type": "string", "description": "Why; for revise_child, what the child must change."},
                "next_task": brief_schema(Some(specialists)),
            },
            "required": ["decision", "reason"],
            "additionalProperties": false,
        }),
    ));
    tools
}

/// A brief's fields as the model writes them.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BriefArgs {
    #[serde(default)]
    specialist: Option<String>,
    objective: String,
    reason: String,
    completion_criteria: Vec<String>,
    #[serde(default)]
    expected_outputs: Vec<String>,
    #[serde(default)]
    parent_findings: String,
    #[serde(default)]
    context: String,
    #[serde(default)]
    constraints: Vec<String>,
    #[serde(default)]
    context_refs: Vec<String>,
    #[serde(default)]
    validation_scopes: Vec<String>,
}

impl BriefArgs {
    fn into_brief(self, specialist: String) -> TaskBrief {
        TaskBrief {
            specialist,
            objective: self.objective,
            reason: self.reason,
            completion_criteria: self.completion_criteria,
            expected_outputs: self.expected_outputs,
            parent_findings: self.parent_findings,
            context: self.context,
            constraints: self.constraints,
            context_refs: self.context_refs,
            validation_scopes: self.validation_scopes,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReviewArgs {
    #[serde(default)]
    child_id: Option<String>,
    decision: String,
    reason: String,
    #[serde(default)]
    next_task: Option<BriefArgs>,
}

/// One delegated child, for the report's table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChildLine {
    pub(crate) child_id: String,
    pub(crate) specialist: String,
    pub(crate) verdict: &'static str,
    pub(crate) decision: Option<&'static str>,
}

/// The delegations of one run: the granted specialists and every child reported so far.
#[derive(Debug, Default)]
pub(crate) struct Delegations {
    specialists: Vec<String>,
    children: Vec<ChildLine>,
}

impl Delegations {
    /// Delegations to `specialists` (the grant's names).
    pub(crate) fn new(specialists: Vec<String>) -> Self {
        Self {
            specialists,
            children: Vec::new(),
        }
    }

    /// Whether `tool` is one of the delegation tools.
    pub(crate) fn owns(&self, tool: &str) -> bool {
        !self.specialists.is_empty() && (tool == REVIEW || tool.starts_with(RUN_PREFIX))
    }

    /// The children so far, in the order they first reported.
    pub(crate) fn children(&self) -> &[ChildLine] {
        &self.children
    }

    /// Runs a delegation tool; returns what the model reads.
    pub(crate) fn call(&mut self, env: &mut dyn Env, tool: &str, arguments: &Value) -> String {
        if tool == REVIEW {
            return self.review(env, arguments);
        }
        let Some(specialist) = self
            .specialists
            .iter()
            .find(|s| run_tool(s) == tool)
            .cloned()
        else {
            return refusal(&format!("no tool named `{tool}` is available to you"));
        };
        let args = match BriefArgs::deserialize(arguments) {
            Ok(args) => args,
            Err(e) => return refusal(&format!("the brief for `{specialist}` is malformed: {e}")),
        };
        if args.specialist.is_some() {
            return refusal(&format!(
                "`{tool}` names its specialist; `specialist` is only for a review's `next_task`"
            ));
        }
        env.progress(&format!("delegating to {specialist}"));
        match env.delegate(args.into_brief(specialist.clone())) {
            Ok(child) => {
                let verdict = status_word(child.verdict);
                env.progress(&format!(
                    "child {} ({specialist}) reported: verdict {verdict}",
                    child.child_id
                ));
                self.record(&child.child_id, &specialist, verdict);
                child_json(&specialist, &child).to_string()
            }
            Err(e) => error_json(&e).to_string(),
        }
    }

    fn record(&mut self, child_id: &str, specialist: &str, verdict: &'static str) {
        match self.children.iter_mut().find(|c| c.child_id == child_id) {
            Some(line) => {
                line.verdict = verdict;
                line.decision = None;
            }
            None => self.children.push(ChildLine {
                child_id: child_id.to_owned(),
                specialist: specialist.to_owned(),
                verdict,
                decision: None,
            }),
        }
    }

    fn review(&mut self, env: &mut dyn Env, arguments: &Value) -> String {
        let args = match ReviewArgs::deserialize(arguments) {
            Ok(args) => args,
            Err(e) => return refusal(&format!("the review is malformed: {e}")),
        };
        let Some((word, decision)) = DECISIONS.iter().find(|(d, _)| *d == args.decision) else {
            return refusal(&format!(
                "`decision` `{}` is not one of: {}",
                args.decision,
                DECISIONS.map(|(d, _)| d).join(", ")
            ));
        };
        let child_id = match args.child_id.or_else(|| {
            self.children
                .iter()
                .rev()
                .find(|c| c.decision.is_none())
                .map(|c| c.child_id.clone())
        }) {
            Some(id) => id,
            None => return refusal("no delegated report waits for your review; give `child_id`"),
        };
        let next_task = match args.next_task {
            None => None,
            Some(mut brief) => match brief.specialist.take() {
                Some(s) if self.specialists.contains(&s) => Some(brief.into_brief(s)),
                Some(s) => {
                    return refusal(&format!(
                        "`next_task.specialist` `{s}` is not one you may delegate to: {}",
                        self.specialists.join(", ")
                    ));
                }
                None => return refusal("`next_task` needs its `specialist`"),
            },
        };
        let review = TaskReview {
            decision: *decision,
            reason: args.reason,
            next_task,
        };
        match env.review(&child_id, review) {
            Ok(effect) => {
                if let Some(line) = self.children.iter_mut().find(|c| c.child_id == child_id) {
                    line.decision = Some(word);
                }
                env.progress(&format!("reviewed child {child_id}: {word}"));
                effect_json(&child_id, word, &effect).to_string()
            }
            Err(e) => error_json(&e).to_string(),
        }
    }
}

/// A markdown table of the delegated children, for the report's details.
pub(crate) fn children_table(children: &[ChildLine]) -> String {
    if children.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n\n### Delegated tasks\n\n| child task | specialist | verdict | review |\n|---|---|---|---|\n",
    );
    for c in children {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            c.child_id,
            c.specialist,
            c.verdict,
            c.decision.unwrap_or("not reviewed")
        );
    }
    out
}

fn status_word(status: CheckStatus) -> &'static str {
    match status {
        CheckStatus::Passed => "passed",
        CheckStatus::Unknown => "unknown",
        CheckStatus::Failed => "failed",
        CheckStatus::Error => "error",
    }
}

fn decision_word(decision: Decision) -> &'static str {
    DECISIONS
        .iter()
        .find(|(_, d)| *d == decision)
        .map_or("unknown", |(w, _)| *w)
}

fn decision_words(allowed: &[Decision]) -> Vec<&'static str> {
    allowed.iter().copied().map(decision_word).collect()
}

/// What the model reads about a child that reported.
fn child_json(specialist: &str, child: &ChildReport) -> Value {
    let r = Report::from(child.report.clone());
    let checks: Vec<Value> = child
        .checks
        .iter()
        .map(|c| json!({"name": c.name, "status": status_word(c.status), "message": c.message}))
        .collect();
    let allowed = decision_words(&child.allowed);
    let mut report = json!({
        "outcome": r.outcome,
        "summary": r.summary,
        "details": clip(&r.details, DETAILS_SHOWN),
        "hard_passed": r.hard_passed,
        "open_issues": r.open_issues,
        "claims": r.claims,
    });
    if let Some(step) = &r.next_step {
        report["next_step"] = json!(step);
    }
    let mut out = json!({
        "status": "reported",
        "child_id": child.child_id,
        "specialist": specialist,
        "verdict": status_word(child.verdict),
        "checks": checks,
        "report": report,
        "protocol_error": child.protocol_error,
        "allowed_decisions": allowed,
        "usage": {"wall_ms": child.usage.wall_ms, "tool_calls": child.usage.tool_calls,
                  "tokens": child.usage.tokens},
        "next": format!(
            "Review this report with `{REVIEW}` (child_id {}) before any other tool call; \
             allowed decisions: {}.",
            child.child_id,
            allowed.join(", ")
        ),
    });
    if let Some(error) = &child.error {
        out["error"] = json!(error);
    }
    out
}

/// What the model reads about an accepted review.
fn effect_json(child_id: &str, decision: &str, effect: &ReviewEffect) -> Value {
    let (effect, next) = match effect {
        ReviewEffect::TakeSuggestion(b) => (
            "take_suggestion",
            format!(
                "Delegate exactly this brief next with `{}`: {}",
                run_tool(&b.specialist),
                brief_text(b)
            ),
        ),
        ReviewEffect::KeepPlan => ("keep_plan", "Your plan stands.".to_owned()),
        ReviewEffect::ContinueChild(feedback) => (
            "continue_child",
            format!(
                "Delegate the child's brief again, unchanged, to continue child {child_id} with \
                 this feedback: {feedback}"
            ),
        ),
        ReviewEffect::NewChild(b) => (
            "new_child",
            format!(
                "Delegate exactly this brief next with `{}`: {}",
                run_tool(&b.specialist),
                brief_text(b)
            ),
        ),
        ReviewEffect::ReopenParentGoal => (
            "reopen_parent_goal",
            "Your goal is open again: plan what is left.".to_owned(),
        ),
        ReviewEffect::CompleteParentGoal => (
            "complete_parent_goal",
            "Your goal is complete: give your final answer.".to_owned(),
        ),
        ReviewEffect::FailParentGoal => (
            "fail_parent_goal",
            "Your goal failed: give your final answer saying why.".to_owned(),
        ),
    };
    json!({"status": "reviewed", "child_id": child_id, "decision": decision, "effect": effect,
           "next": next})
}

fn brief_text(b: &TaskBrief) -> String {
    json!({
        "objective": b.objective, "reason": b.reason,
        "completion_criteria": b.completion_criteria, "expected_outputs": b.expected_outputs,
        "parent_findings": b.parent_findings, "context": b.context,
        "constraints": b.constraints, "context_refs": b.context_refs,
        "validation_scopes": b.validation_scopes,
    })
    .to_string()
}

/// What the model reads about a refused delegation or review: `{"error", "kind", …}`.
pub(crate) fn error_json(e: &DelegateError) -> Value {
    let (kind, message, mut extra) = match e {
        DelegateError::Denied(m) => ("denied", m.clone(), json!({})),
        DelegateError::BriefRefused(b) => (
            "brief-refused",
            b.message.clone(),
            json!({"rule": b.rule, "field": b.field}),
        ),
        DelegateError::ReviewRefused(r) => (
            "review-refused",
            r.message.clone(),
            json!({"allowed_decisions": decision_words(&r.allowed)}),
        ),
        DelegateError::BudgetExceeded(b) => {
            let budget = match b.budget {
                guild_sdk::delegate::BudgetKind::Tasks => "tasks",
                guild_sdk::delegate::BudgetKind::ToolCalls => "tool_calls",
                guild_sdk::delegate::BudgetKind::Tokens => "tokens",
                guild_sdk::delegate::BudgetKind::WallMs => "wall_ms",
            };
            (
                "budget-exceeded",
                format!(
                    "the tree's {budget} budget is spent: {} asked, {} left",
                    b.used, b.limit
                ),
                json!({"budget": budget, "limit": b.limit, "used": b.used}),
            )
        }
        DelegateError::TooDeep(m) => ("too-deep", m.clone(), json!({})),
        DelegateError::TooManyChildren(m) => ("too-many-children", m.clone(), json!({})),
        DelegateError::ReviewPending(m) => ("review-pending", m.clone(), json!({})),
        DelegateError::NoPendingReview(m) => ("no-pending-review", m.clone(), json!({})),
        DelegateError::Cancelled(m) => ("cancelled", m.clone(), json!({})),
        DelegateError::ChildFailed(m) => ("child-failed", m.clone(), json!({})),
    };
    extra["status"] = json!("refused");
    extra["kind"] = json!(kind);
    extra["error"] = json!(message);
    extra
}

#[cfg(test)]
mod tests;

//! Test specialist `delegator`: its brief holds one JSON object, the script (the whole
//! description, or for a child task everything after its `## Context` heading):
//!
//! ```json
//! {"steps": [STEP, ...], "report": {"outcome": "satisfied", "summary": "...",
//!  "suggest": "a next task", "artifacts": [{"id": "...", "sha256": "..."}]}}
//! ```
//!
//! Steps: `{"op": "run", "brief": BRIEF}` (BRIEF a JSON task brief; missing lists are empty),
//! `{"op": "review", "child": "last" | ID, "decision": "ascend", "reason": "...",
//! "next_task": BRIEF?}`, `{"op": "tool", "tool": "connector.tool", "input": {...}}`,
//! `{"op": "memory_read"}` and `{"op": "memory_write", "text": "..."}` (team scope),
//! `{"op": "specialists"}`, `{"op": "run_approved"}` (runs the brief the latest review
//! approved, or the revised child's brief again), `{"op": "model", "model": ALIAS}` (one chat
//! completion), `{"op": "busy", "ms": N}` (keeps the instance busy for at least N ms of wall
//! time) and `{"op": "spin"}` (loops until the task is stopped). The report's
//! `details` is a JSON array with one result per step: `{"ok": true, ...}` or `{"ok": false,
//! "kind": ..., "error": ...}`. A revised child (whose description carries its parent's
//! feedback) runs the script's `revised_steps` and reports its `revised_report` instead, when
//! it has them. A report's `claims` (`[{"tool": ..., "external_id": ..., "text": ...}]`) are
//! its claims.

use guild_sdk::delegate::{self, Decision, DelegateError, ReviewEffect, TaskBrief, TaskReview};
use guild_sdk::llm;
use guild_sdk::memory::{self, Scope};
use guild_sdk::serde_json::{self, Value, json};
use guild_sdk::{
    ArtifactRef, Brief, Claim, NextAction, NextStep, Outcome, Report, RunError, Specialist,
    SpecialistInfo, tools,
};

struct Delegator;

fn text(v: &Value, k: &str) -> String {
    v.get(k)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn texts(v: &Value, k: &str) -> Vec<String> {
    v.get(k)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_owned))
        .collect()
}

fn brief_of(v: &Value) -> TaskBrief {
    TaskBrief {
        specialist: text(v, "specialist"),
        objective: text(v, "objective"),
        reason: text(v, "reason"),
        completion_criteria: texts(v, "completion_criteria"),
        expected_outputs: texts(v, "expected_outputs"),
        parent_findings: text(v, "parent_findings"),
        // A child's script travels in its context, as JSON.
        context: match v.get("context") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        },
        constraints: texts(v, "constraints"),
        context_refs: texts(v, "context_refs"),
        validation_scopes: texts(v, "validation_scopes"),
    }
}

fn decision_of(name: &str) -> Decision {
    match name {
        "accept_refine" => Decision::AcceptRefine,
        "reject_refine" => Decision::RejectRefine,
        "revise_child" => Decision::ReviseChild,
        "descend_again" => Decision::DescendAgain,
        "replan_current" => Decision::ReplanCurrent,
        "fail" => Decision::Fail,
        _ => Decision::Ascend,
    }
}

fn decision_name(d: Decision) -> &'static str {
    match d {
        Decision::AcceptRefine => "accept_refine",
        Decision::RejectRefine => "reject_refine",
        Decision::ReviseChild => "revise_child",
        Decision::DescendAgain => "descend_again",
        Decision::Ascend => "ascend",
        Decision::ReplanCurrent => "replan_current",
        Decision::Fail => "fail",
    }
}

fn error_json(e: &DelegateError) -> Value {
    let (kind, detail) = match e {
        DelegateError::Denied(m) => ("denied", json!(m)),
        DelegateError::BriefRefused(b) => (
            "brief_refused",
            json!({"rule": b.rule, "field": b.field, "message": b.message}),
        ),
        DelegateError::ReviewRefused(r) => (
            "review_refused",
            json!({"message": r.message,
                   "allowed": r.allowed.iter().map(|d| decision_name(*d)).collect::<Vec<_>>()}),
        ),
        DelegateError::BudgetExceeded(b) => (
            "budget_exceeded",
            json!({"budget": format!("{:?}", b.budget), "limit": b.limit, "used": b.used}),
        ),
        DelegateError::TooDeep(m) => ("too_deep", json!(m)),
        DelegateError::TooManyChildren(m) => ("too_many_children", json!(m)),
        DelegateError::ReviewPending(m) => ("review_pending", json!(m)),
        DelegateError::NoPendingReview(m) => ("no_pending_review", json!(m)),
        DelegateError::Cancelled(m) => ("cancelled", json!(m)),
        DelegateError::ChildFailed(m) => ("child_failed", json!(m)),
    };
    json!({"ok": false, "kind": kind, "error": detail})
}

/// What the steps so far left behind: the latest child's id, and the brief the latest review
/// approved (`take-suggestion`, `new-child`) or asked to run again (`continue-child`).
#[derive(Default)]
struct State {
    last: String,
    last_brief: Option<TaskBrief>,
    approved: Option<TaskBrief>,
}

/// Runs one step.
fn step(s: &Value, st: &mut State) -> Value {
    match text(s, "op").as_str() {
        "run_approved" => match st.approved.take() {
            Some(b) => run(&b, st),
            None => json!({"ok": false, "kind": "script", "error": "no approved brief"}),
        },
        "run" => run(&brief_of(s.get("brief").unwrap_or(&Value::Null)), st),
        "review" => {
            let child = match text(s, "child").as_str() {
                "" | "last" => st.last.clone(),
                id => id.to_owned(),
            };
            let review = TaskReview {
                decision: decision_of(&text(s, "decision")),
                reason: text(s, "reason"),
                next_task: s.get("next_task").map(brief_of),
            };
            match delegate::review(&child, &review) {
                Ok(effect) => {
                    let name = match &effect {
                        ReviewEffect::TakeSuggestion(b) | ReviewEffect::NewChild(b) => {
                            st.approved = Some(b.clone());
                            if matches!(effect, ReviewEffect::NewChild(_)) {
                                "new_child"
                            } else {
                                "take_suggestion"
                            }
                        }
                        ReviewEffect::ContinueChild(_) => {
                            st.approved = st.last_brief.clone();
                            "continue_child"
                        }
                        ReviewEffect::KeepPlan => "keep_plan",
                        ReviewEffect::ReopenParentGoal => "reopen_parent_goal",
                        ReviewEffect::CompleteParentGoal => "complete_parent_goal",
                        ReviewEffect::FailParentGoal => "fail_parent_goal",
                    };
                    json!({"ok": true, "effect": name})
                }
                Err(e) => error_json(&e),
            }
        }
        "tool" => {
            let input = s.get("input").cloned().unwrap_or(json!({})).to_string();
            match tools::call_raw(&text(s, "tool"), &input) {
                Ok(o) => json!({"ok": true, "output": o.output}),
                Err(e) => json!({"ok": false, "kind": "tool", "error": e.to_string()}),
            }
        }
        "memory_read" => match memory::read(Scope::Team) {
            Ok(d) => json!({"ok": true, "text": d.text}),
            Err(e) => json!({"ok": false, "kind": "memory", "error": e.to_string()}),
        },
        "memory_write" => match memory::update(Scope::Team, &text(s, "text")) {
            Ok(_) => json!({"ok": true}),
            Err(e) => json!({"ok": false, "kind": "memory", "error": e.to_string()}),
        },
        "specialists" => json!({"ok": true, "names": delegate::specialists()}),
        "model" => {
            let request = llm::Request::new(text(s, "model")).message(llm::Message::user("hello"));
            match llm::complete(&request) {
                Ok(a) => {
                    json!({"ok": true, "tokens": u64::from(a.usage.prompt_tokens) + u64::from(a.usage.completion_tokens)})
                }
                Err(e) => json!({"ok": false, "kind": "llm", "error": e.to_string()}),
            }
        }
        "busy" => {
            let ms = s.get("ms").and_then(Value::as_u64).unwrap_or(0);
            let started = std::time::Instant::now();
            let mut n: u64 = 0;
            while started.elapsed() < std::time::Duration::from_millis(ms) {
                n = n.wrapping_add(1);
                std::hint::black_box(n);
            }
            json!({"ok": true})
        }
        "spin" => {
            let mut n: u64 = 0;
            loop {
                n = n.wrapping_add(1);
                std::hint::black_box(n);
            }
        }
        other => json!({"ok": false, "kind": "script", "error": format!("unknown op {other:?}")}),
    }
}

fn run(brief: &TaskBrief, st: &mut State) -> Value {
    match delegate::run(brief) {
        Ok(c) => {
            st.last.clone_from(&c.child_id);
            st.last_brief = Some(brief.clone());
            json!({
                "ok": true,
                "child": c.child_id,
                "verdict": format!("{:?}", c.verdict),
                "protocol_error": c.protocol_error,
                "outcome": format!("{:?}", c.report.outcome),
                "summary": c.report.summary,
                "details": c.report.details,
                "error": c.error,
                "allowed": c.allowed.iter().map(|d| decision_name(*d)).collect::<Vec<_>>(),
                "tool_calls": c.usage.tool_calls,
                "tokens": c.usage.tokens,
            })
        }
        Err(e) => error_json(&e),
    }
}

/// The script: the description as JSON, or what follows its `## Context` heading.
fn script(description: &str) -> Result<Value, RunError> {
    let text = description
        .rsplit_once("## Context\n")
        .map_or(description, |(_, rest)| rest);
    serde_json::from_str(text.trim())
        .map_err(|e| RunError::InvalidBrief(format!("the script is not JSON: {e}")))
}

impl Specialist for Delegator {
    fn describe() -> SpecialistInfo {
        SpecialistInfo::new("Test specialist: delegates as its JSON brief says.")
    }

    fn run(brief: Brief) -> Result<Report, RunError> {
        let script = script(&brief.description)?;
        // A revised child (its description carries its parent's feedback) runs
        // `revised_steps` and reports `revised_report` when the script has them.
        let revised = brief
            .description
            .contains("\n## Feedback: revise your work\n");
        let mut st = State::default();
        let results: Vec<Value> = script
            .get("revised_steps")
            .filter(|_| revised)
            .or_else(|| script.get("steps"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|s| step(s, &mut st))
            .collect();
        let r = script
            .get("revised_report")
            .filter(|_| revised)
            .or_else(|| script.get("report"))
            .cloned()
            .unwrap_or(json!({}));
        let outcome = match text(&r, "outcome").as_str() {
            "failed" => Outcome::Failed,
            "partial" => Outcome::Partial,
            _ => Outcome::Satisfied,
        };
        let summary = match text(&r, "summary") {
            s if s.is_empty() => format!("ran {} step(s)", results.len()),
            s => s,
        };
        let suggest = text(&r, "suggest");
        Ok(Report {
            summary,
            outcome,
            details: Value::Array(results).to_string(),
            hard_passed: outcome == Outcome::Satisfied,
            open_issues: if outcome == Outcome::Satisfied {
                vec![]
            } else {
                vec!["not all of it was done".into()]
            },
            remaining_issues: vec![],
            next_step: if suggest.is_empty() {
                None
            } else {
                Some(NextStep {
                    action: NextAction::Refine,
                    suggested_task: Some(suggest),
                })
            },
            artifacts: r
                .get("artifacts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|a| ArtifactRef {
                    id: text(a, "id"),
                    kind: "file".into(),
                    mime_type: "text/plain".into(),
                    sha256: text(a, "sha256"),
                    version: None,
                })
                .collect(),
            claims: r
                .get("claims")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|c| Claim {
                    tool: text(c, "tool"),
                    external_id: c
                        .get("external_id")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    text: text(c, "text"),
                })
                .collect(),
        })
    }
}

guild_sdk::export_specialist!(Delegator);

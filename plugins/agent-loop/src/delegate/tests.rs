//! The delegation tools against a scripted host: what is offered, how the model's arguments
//! become a brief and a review, and what the model reads back (reports, effects, refusals).

use guild_sdk::delegate::{BriefRefused, Check, ReviewRefused, Usage};
use guild_sdk::tools::GrantedTool;
use guild_sdk::{HostError, SkillMeta, ToolOutcome};

use super::*;

/// A host that answers every delegation with `child` (or refuses with `refuse`) and every
/// review with `effect`, recording what it was sent.
#[derive(Default)]
struct Host {
    briefs: Vec<TaskBrief>,
    reviews: Vec<(String, TaskReview)>,
    refuse: Option<DelegateError>,
    progress: Vec<String>,
}

impl Env for Host {
    fn models(&mut self) -> Vec<String> {
        Vec::new()
    }
    fn granted(&mut self) -> Vec<GrantedTool> {
        Vec::new()
    }
    fn catalog(&mut self) -> Vec<SkillMeta> {
        Vec::new()
    }
    fn load_skill(&mut self, _: &str) -> Result<String, HostError> {
        Err(HostError::InvalidInput("none".into()))
    }
    fn read_skill(&mut self, _: &str, _: &str) -> Result<Vec<u8>, HostError> {
        Err(HostError::InvalidInput("none".into()))
    }
    fn call_tool(&mut self, _: &str, _: &str) -> Result<ToolOutcome, HostError> {
        Err(HostError::InvalidInput("none".into()))
    }
    fn progress(&mut self, text: &str) {
        self.progress.push(text.to_owned());
    }
    fn delegates(&mut self) -> Vec<String> {
        vec!["kb".into()]
    }
    fn delegate(&mut self, brief: TaskBrief) -> Result<ChildReport, DelegateError> {
        self.briefs.push(brief);
        if let Some(e) = self.refuse.clone() {
            return Err(e);
        }
        Ok(ChildReport {
            child_id: "child-1".into(),
            report: Report::partial("saved 1 note")
                .claim("kb.save", "n1", "saved notes/a.md")
                .into(),
            protocol_error: false,
            error: None,
            verdict: CheckStatus::Failed,
            checks: vec![Check {
                name: "claim".into(),
                status: CheckStatus::Failed,
                message: "no receipt backs kb.save n1".into(),
            }],
            allowed: vec![
                Decision::ReviseChild,
                Decision::ReplanCurrent,
                Decision::Fail,
            ],
            usage: Usage {
                wall_ms: 5,
                tool_calls: 1,
                tokens: 0,
            },
        })
    }
    fn review(
        &mut self,
        child_id: &str,
        review: TaskReview,
    ) -> Result<ReviewEffect, DelegateError> {
        let feedback = review.reason.clone();
        self.reviews.push((child_id.to_owned(), review));
        if let Some(e) = self.refuse.clone() {
            return Err(e);
        }
        Ok(ReviewEffect::ContinueChild(feedback))
    }
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).expect("the tool result is JSON")
}

#[test]
fn nothing_is_offered_without_specialists_and_one_tool_each_with_them() {
    assert!(definitions(&[]).is_empty());
    let names: Vec<String> = definitions(&["kb".into(), "triage agent".into()])
        .into_iter()
        .map(|d| d.name)
        .collect();
    assert_eq!(
        names,
        [
            "delegate_to__kb",
            "delegate_to__triage_agent",
            "review_child"
        ]
    );
    assert!(!Delegations::new(Vec::new()).owns("review_child"));
    assert!(Delegations::new(vec!["kb".into()]).owns("delegate_to__kb"));
}

#[test]
fn a_delegation_sends_the_brief_and_reads_back_verdict_checks_and_decisions() {
    let mut host = Host::default();
    let mut d = Delegations::new(vec!["kb".into()]);
    let out = parse(&d.call(
        &mut host,
        "delegate_to__kb",
        &json!({"objective": "Save a note", "reason": "the team needs it",
                "completion_criteria": ["the note is saved"], "context": "save notes/a.md"}),
    ));
    assert_eq!(host.briefs.len(), 1);
    assert_eq!(host.briefs[0].specialist, "kb");
    assert_eq!(host.briefs[0].context, "save notes/a.md");
    assert_eq!(out["status"], "reported");
    assert_eq!(out["child_id"], "child-1");
    assert_eq!(out["verdict"], "failed");
    assert_eq!(out["checks"][0]["status"], "failed");
    assert_eq!(out["report"]["outcome"], "partial");
    assert_eq!(out["report"]["claims"][0]["external_id"], "n1");
    assert_eq!(
        out["allowed_decisions"],
        json!(["revise_child", "replan_current", "fail"])
    );

    let effect = parse(&d.call(
        &mut host,
        "review_child",
        &json!({"decision": "revise_child", "reason": "cite the real id"}),
    ));
    // Without `child_id`, the report waiting for review is the one reviewed.
    assert_eq!(host.reviews[0].0, "child-1");
    assert_eq!(host.reviews[0].1.decision, Decision::ReviseChild);
    assert_eq!(effect["effect"], "continue_child");
    let table = children_table(d.children());
    assert!(
        table.contains("| child-1 | kb | failed | revise_child |"),
        "{table}"
    );
}

#[test]
fn malformed_arguments_and_unknown_decisions_never_reach_the_host() {
    let mut host = Host::default();
    let mut d = Delegations::new(vec!["kb".into()]);
    let out = parse(&d.call(&mut host, "delegate_to__kb", &json!({"objective": "x"})));
    assert!(
        out["error"]
            .as_str()
            .is_some_and(|e| e.contains("malformed")),
        "{out}"
    );
    let out = parse(&d.call(&mut host, "delegate_to__other", &json!({})));
    assert!(
        out["error"]
            .as_str()
            .is_some_and(|e| e.contains("no tool named")),
        "{out}"
    );
    let out = parse(&d.call(
        &mut host,
        "review_child",
        &json!({"child_id": "c", "decision": "approve", "reason": "ok"}),
    ));
    assert!(
        out["error"]
            .as_str()
            .is_some_and(|e| e.contains("`approve`")),
        "{out}"
    );
    let out = parse(&d.call(
        &mut host,
        "review_child",
        &json!({"child_id": "c", "decision": "descend_again", "reason": "more",
                "next_task": {"specialist": "tracker", "objective": "o", "reason": "r",
                              "completion_criteria": ["c"]}}),
    ));
    assert!(
        out["error"]
            .as_str()
            .is_some_and(|e| e.contains("`tracker`")),
        "{out}"
    );
    let out = parse(&d.call(
        &mut host,
        "review_child",
        &json!({"decision": "ascend", "reason": "nothing delegated yet"}),
    ));
    assert!(
        out["error"]
            .as_str()
            .is_some_and(|e| e.contains("no delegated report")),
        "{out}"
    );
    assert!(host.briefs.is_empty() && host.reviews.is_empty());
}

#[test]
fn refusals_go_back_as_tool_errors_with_their_kind() {
    let mut host = Host {
        refuse: Some(DelegateError::BriefRefused(BriefRefused {
            rule: "field".into(),
            field: "objective".into(),
            message: "brief refused: `objective` is empty".into(),
        })),
        ..Host::default()
    };
    let mut d = Delegations::new(vec!["kb".into()]);
    let out = parse(&d.call(
        &mut host,
        "delegate_to__kb",
        &json!({"objective": " ", "reason": "r", "completion_criteria": ["c"]}),
    ));
    assert_eq!(out["status"], "refused");
    assert_eq!(out["kind"], "brief-refused");
    assert_eq!(out["field"], "objective");
    host.refuse = Some(DelegateError::ReviewRefused(ReviewRefused {
        message: "review refused: ascend is not allowed for a failed verdict".into(),
        allowed: vec![Decision::ReviseChild, Decision::Fail],
    }));
    let out = parse(&d.call(
        &mut host,
        "review_child",
        &json!({"child_id": "c", "decision": "ascend", "reason": "fine"}),
    ));
    assert_eq!(out["kind"], "review-refused");
    assert_eq!(out["allowed_decisions"], json!(["revise_child", "fail"]));
}

//! The protocol's rules, each allowed and refused.

use guild_core::types::Outcome;
use guild_validate::{CheckStatus, Decision};

use crate::brief::TASK_SCOPE;
use crate::*;

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| (*x).to_owned()).collect()
}

fn anchor() -> RootAnchor {
    RootAnchor::new(
        "Triage the open bugs",
        &s(&["every open bug has a priority"]),
        &s(&["do not close bugs", "cite the tracker ids"]),
    )
    .expect("a valid anchor")
}

fn brief() -> TaskBrief {
    TaskBrief {
        specialist: "triage".into(),
        objective: "Prioritise the UI bugs".into(),
        reason: "the UI bugs are a third of the list".into(),
        completion_criteria: s(&["each UI bug has a priority"]),
        expected_outputs: s(&["a list of ids and priorities"]),
        parent_findings: "12 UI bugs, 3 crashes".into(),
        context: String::new(),
        constraints: s(&["Do not close   bugs", "cite the tracker ids", "UI only"]),
        context_refs: s(&["artifact:bug-list"]),
        validation_scopes: vec![],
    }
}

fn holds(r: &str) -> bool {
    r == "artifact:bug-list"
}

fn check(b: &TaskBrief, parent_constraints: &[String]) -> Result<CheckedBrief, BriefError> {
    let a = anchor();
    b.check(&BriefParent {
        anchor: &a,
        constraints: parent_constraints,
        may_call: &s(&["triage", "tracker-agent"]),
        holds: &holds,
    })
}

#[test]
fn an_anchor_needs_an_objective_and_a_criterion_and_hashes_its_normalized_text() {
    let a = anchor();
    let same = RootAnchor::new(
        "  triage the OPEN   bugs ",
        &s(&["Every open bug has a priority"]),
        &s(&[
            "do not close bugs",
            "Cite the tracker IDs",
            "do not  close bugs",
        ]),
    )
    .expect("valid");
    assert_eq!(a.hash(), same.hash());
    assert_eq!(same.constraints.len(), 2, "duplicates are dropped");
    let other =
        RootAnchor::new("Triage the open bugs", &s(&["all bugs closed"]), &[]).expect("valid");
    assert_ne!(a.hash(), other.hash());
    for (objective, criteria) in [("", s(&["x"])), ("x", vec![]), ("x", s(&["  "]))] {
        let e = RootAnchor::new(objective, &criteria, &[]).expect_err("refused");
        assert!(e.to_string().starts_with("root anchor refused"), "{e}");
    }
}

#[test]
fn a_brief_that_keeps_every_constraint_is_checked_and_normalized() {
    let parent = s(&["UI only"]);
    let checked = check(&brief(), &parent).expect("allowed");
    assert_eq!(
        checked.brief.validation_scopes,
        [TASK_SCOPE],
        "task is always included"
    );
    assert_eq!(checked.hash, checked.brief.hash());
    assert_eq!(checked.brief.constraints[0], "Do not close   bugs");
}

#[test]
fn a_brief_that_drops_a_constraint_names_it_and_where_it_came_from() {
    let mut b = brief();
    b.constraints.retain(|c| c != "cite the tracker ids");
    let e = check(&b, &[]).expect_err("refused");
    assert!(
        matches!(&e, BriefError::DroppedConstraint { from: "root anchor", constraint } if constraint == "cite the tracker ids"),
        "{e}"
    );
    assert!(e.to_string().contains("never dropped"), "{e}");
    // The parent's own constraints are inherited too.
    let e = check(&brief(), &s(&["no weekends"])).expect_err("refused");
    assert!(
        matches!(e, BriefError::DroppedConstraint { from: "parent", .. }),
        "{e}"
    );
}

/// A change that breaks a brief.
type Breaker = Box<dyn Fn(&mut TaskBrief)>;

#[test]
fn a_malformed_brief_is_refused_with_the_rule_it_broke() {
    let cases: Vec<(Breaker, &str)> = vec![
        (
            Box::new(|b| b.objective = " ".into()),
            "`objective` is empty",
        ),
        (Box::new(|b| b.reason.clear()), "`reason` is empty"),
        (
            Box::new(|b| b.completion_criteria.clear()),
            "`completion_criteria` needs at least 1",
        ),
        (
            Box::new(|b| b.specialist = "ghost".into()),
            "does not name specialist \"ghost\"",
        ),
        (
            Box::new(|b| b.context_refs.push("memory:private".into())),
            "does not hold \"memory:private\"",
        ),
        (
            Box::new(|b| b.validation_scopes.push("Tree!".into())),
            "not a scope name",
        ),
        (
            Box::new(|b| b.context = "x".repeat(20_000)),
            "`context` has 20000 characters",
        ),
    ];
    for (break_it, rule) in cases {
        let mut b = brief();
        break_it(&mut b);
        let e = check(&b, &[]).expect_err(rule);
        assert!(e.to_string().contains(rule), "expected {rule:?}: {e}");
    }
}

fn limits() -> TreeLimits {
    TreeLimits {
        max_depth: 2,
        max_children: 2,
        budget: Budget {
            tasks: 4,
            tool_calls: 100,
            tokens: 10_000,
            wall_ms: 60_000,
        },
    }
}

#[test]
fn depth_fan_out_and_budget_bound_the_tree() {
    let l = limits();
    let mut root = l.root().expect("root");
    assert_eq!(root.remaining.tasks, 3, "the root is a task");
    let asked = Budget {
        tasks: 10,
        tool_calls: 10,
        tokens: 50_000,
        wall_ms: 1_000,
    };
    let mut child = root.admit_child(&l, Some(asked)).expect("first child");
    assert_eq!(child.depth, 1);
    assert_eq!(
        child.remaining.tasks, 2,
        "never more than the parent has left"
    );
    assert_eq!(
        child.remaining.tokens, 10_000,
        "never more than the parent has left"
    );
    assert_eq!(
        child.remaining.tool_calls, 10,
        "what the parent asked, when less"
    );
    let grandchild = child.admit_child(&l, None).expect("level 2");
    let mut deepest = grandchild;
    assert!(matches!(
        deepest.admit_child(&l, None),
        Err(TreeError::TooDeep { depth: 2, max: 2 })
    ));
    root.admit_child(&l, None).expect("second child");
    let e = root.admit_child(&l, None).expect_err("third child");
    assert!(matches!(e, TreeError::TooManyChildren { max: 2 }), "{e}");
    let e = child
        .charge(&Budget {
            tokens: 20_000,
            ..Budget::default()
        })
        .expect_err("over budget");
    assert!(e.to_string().contains("model tokens"), "{e}");
    assert_eq!(
        child.remaining.tokens, 10_000,
        "a refused charge charges nothing"
    );
    child
        .charge(&Budget {
            tokens: 2_500,
            ..Budget::default()
        })
        .expect("within budget");
    assert_eq!(child.remaining.tokens, 7_500);
}

#[test]
fn a_budget_of_one_task_admits_no_child() {
    let l = TreeLimits {
        budget: Budget {
            tasks: 1,
            ..limits().budget
        },
        ..limits()
    };
    let mut root = l.root().expect("root");
    let e = root.admit_child(&l, None).expect_err("no task left");
    assert!(
        matches!(
            e,
            TreeError::Exhausted {
                kind: BudgetKind::Tasks,
                ..
            }
        ),
        "{e}"
    );
}

fn ctx(verdict: CheckStatus, outcome: Outcome) -> ReviewContext {
    ReviewContext {
        verdict,
        outcome,
        last_pending: true,
        unexecuted_next_action: false,
        child_suggestion: Some(brief()),
    }
}

fn review(decision: Decision) -> TaskReview {
    TaskReview {
        decision,
        reason: "because".into(),
        next_task: (decision == Decision::DescendAgain).then(brief),
    }
}

#[test]
fn every_decision_is_allowed_after_a_passed_report_and_has_its_effect() {
    let c = ctx(CheckStatus::Passed, Outcome::Satisfied);
    let effects: Vec<ReviewEffect> = [
        Decision::AcceptRefine,
        Decision::RejectRefine,
        Decision::ReviseChild,
        Decision::DescendAgain,
        Decision::ReplanCurrent,
        Decision::Ascend,
        Decision::Fail,
    ]
    .into_iter()
    .map(|d| check_review(&review(d), &c).expect("allowed on passed"))
    .collect();
    assert_eq!(
        effects,
        [
            ReviewEffect::TakeSuggestion { next_task: brief() },
            ReviewEffect::KeepPlan,
            ReviewEffect::ContinueChild {
                feedback: "because".into()
            },
            ReviewEffect::NewChild { next_task: brief() },
            ReviewEffect::ReopenParentGoal,
            ReviewEffect::CompleteParentGoal,
            ReviewEffect::FailParentGoal,
        ]
    );
}

#[test]
fn the_matrix_narrows_what_a_failed_or_broken_report_allows() {
    for (verdict, outcome, allowed) in [
        (
            CheckStatus::Failed,
            Outcome::Satisfied,
            &[
                Decision::ReviseChild,
                Decision::ReplanCurrent,
                Decision::Fail,
            ][..],
        ),
        (
            CheckStatus::Unknown,
            Outcome::Partial,
            &[
                Decision::ReviseChild,
                Decision::ReplanCurrent,
                Decision::Fail,
            ][..],
        ),
        (
            CheckStatus::Error,
            Outcome::Satisfied,
            &[Decision::ReviseChild, Decision::Fail][..],
        ),
        (
            CheckStatus::Passed,
            Outcome::Failed,
            &[Decision::ReviseChild, Decision::Fail][..],
        ),
        (
            CheckStatus::Passed,
            Outcome::ProtocolError,
            &[Decision::ReviseChild, Decision::Fail][..],
        ),
    ] {
        let c = ctx(verdict, outcome);
        for d in [
            Decision::AcceptRefine,
            Decision::DescendAgain,
            Decision::Ascend,
            Decision::ReplanCurrent,
        ] {
            let got = check_review(&review(d), &c);
            assert_eq!(
                got.is_ok(),
                allowed.contains(&d),
                "{verdict:?}/{outcome:?}/{d}: {got:?}"
            );
            if let Err(e) = got {
                assert!(e.to_string().contains("allowed:"), "{e}");
            }
        }
    }
}

#[test]
fn ascend_and_fail_wait_for_the_last_report_and_the_approved_next_task() {
    let mut c = ctx(CheckStatus::Passed, Outcome::Satisfied);
    c.last_pending = false;
    for d in [Decision::Ascend, Decision::Fail] {
        assert_eq!(check_review(&review(d), &c), Err(ReviewError::NotLast(d)));
    }
    check_review(&review(Decision::ReviseChild), &c).expect("not the last: revise is fine");
    c.last_pending = true;
    c.unexecuted_next_action = true;
    for d in [Decision::Ascend, Decision::Fail] {
        assert_eq!(
            check_review(&review(d), &c),
            Err(ReviewError::PendingNextAction(d))
        );
    }
}

#[test]
fn briefs_go_only_with_descend_again_and_suggestions_only_with_accept_refine() {
    let mut c = ctx(CheckStatus::Passed, Outcome::Satisfied);
    let mut r = review(Decision::DescendAgain);
    r.next_task = None;
    assert_eq!(check_review(&r, &c), Err(ReviewError::MissingNextTask));
    let mut r = review(Decision::ReviseChild);
    r.next_task = Some(brief());
    assert_eq!(
        check_review(&r, &c),
        Err(ReviewError::UnexpectedNextTask(Decision::ReviseChild))
    );
    c.child_suggestion = None;
    assert_eq!(
        check_review(&review(Decision::AcceptRefine), &c),
        Err(ReviewError::NoSuggestion)
    );
    let mut r = review(Decision::Fail);
    r.reason = "  ".into();
    assert!(matches!(check_review(&r, &c), Err(ReviewError::Reason(_))));
}

#[test]
fn a_pending_review_allows_only_the_review_and_context_reads() {
    assert!(tool_allowed_during_review(PendingCall::Review).is_ok());
    assert!(tool_allowed_during_review(PendingCall::ContextRead).is_ok());
    let e = tool_allowed_during_review(PendingCall::Other("tracker.create_issue"))
        .expect_err("refused");
    assert!(
        e.to_string().starts_with("tracker.create_issue refused"),
        "{e}"
    );
}

#[test]
fn an_approved_next_task_is_dispatched_exactly_as_approved() {
    let approved = check(&brief(), &[]).expect("checked");
    check_dispatch(&approved.hash, &approved.brief).expect("as approved");
    let mut changed = approved.brief.clone();
    changed.objective.push_str(" and close the duplicates");
    let e = check_dispatch(&approved.hash, &changed).expect_err("changed");
    assert!(e.to_string().contains("exactly as approved"), "{e}");
}

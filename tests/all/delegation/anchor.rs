//! A root anchor the top task's caller gives (docs/delegation.md#the-root-anchor): its
//! constraints kept by every brief of the tree (a brief that drops one is refused), shown with
//! the tree, kept by every attempt of a background task; an anchor over its caps refused before
//! the task starts, naming the field.

use guild_host::{DispatchError, TaskAnchor, TaskRequest};

use super::*;

const NEVER: &str = "never touch production";

fn anchored(script: Value) -> TaskRequest {
    TaskRequest::new("boss", script.to_string()).with_anchor(TaskAnchor {
        completion_criteria: vec!["every open incident is listed".into()],
        constraints: vec![NEVER.into()],
    })
}

/// A run step whose brief carries `constraints`.
fn run_with(constraints: Value) -> Value {
    let mut b = brief("worker", json!({"steps": [run("leaf", json!({}))]}));
    b["constraints"] = constraints;
    json!({"op": "run", "brief": b})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callers_constraints_are_kept_by_every_brief_of_the_tree() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), "").await;
    let script = json!({"steps": [
        run_with(json!([])),
        // Re-spaced and re-cased, it is the same constraint.
        run_with(json!(["Never  touch PRODUCTION", "and report by noon"])),
        review("ascend"),
    ]});
    let done = h.task_request(&anchored(script)).await.expect("runs");
    let r: Value = serde_json::from_str(&done.report.as_ref().expect("report").details)
        .expect("details are JSON");
    let e = refused(&r[0], "brief_refused");
    assert!(
        e.contains("\"rule\":\"constraints\"") && e.contains("root anchor") && e.contains(NEVER),
        "{e}"
    );
    ok(&r[1]);
    // The child's own brief to `leaf` drops the anchor's constraint: refused one level down.
    let child: Value =
        serde_json::from_str(r[1]["details"].as_str().expect("details")).expect("JSON");
    let e = refused(&child[0], "brief_refused");
    assert!(e.contains(NEVER), "{e}");

    let tree = h.task_tree(&done.task_id).expect("tree");
    assert!(tree.anchored_by_caller);
    assert_eq!(tree.constraints, [NEVER]);
    assert_eq!(tree.completion_criteria, ["every open incident is listed"]);
    assert_eq!(tree.nodes.len(), 2, "the refused briefs started nothing");
    let text = tree.to_text();
    assert!(
        text.contains("\n  completion criterion: every open incident is listed\n")
            && text.contains(&format!("\n  constraint: {NEVER}\n")),
        "{text}"
    );

    // Without an anchor, the same first brief runs: the default anchor has no constraints.
    let (plain, r) = boss(&h, json!([run_with(json!([]))])).await;
    ok(&r[0]);
    let tree = h.task_tree(&plain.task_id).expect("tree");
    assert!(!tree.anchored_by_caller);
    assert_eq!(tree.completion_criteria, [guild_host::DEFAULT_CRITERION]);
    assert!(!tree.to_text().contains("constraint:"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_tasks_anchor_is_its_trees_from_the_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), "").await;
    let script =
        json!({"steps": [run_with(json!([])), run_with(json!([NEVER])), review("ascend")]});
    let id = h.start_task_request(&anchored(script)).expect("starts");
    // The tree exists before the task delegates: its anchor is there to see.
    let tree = h.task_tree(&id).expect("a tree from the start");
    assert_eq!(tree.constraints, [NEVER]);
    let record = h.until_task_ended(&id).await.expect("ends");
    assert_eq!(record.status, BackgroundStatus::Succeeded, "{record:?}");
    let tree = h.task_tree(&id).expect("tree");
    assert_eq!(
        tree.nodes.len(),
        2,
        "the brief without the constraint was refused"
    );
    assert_eq!(tree.nodes[0].status, NodeStatus::Finished);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_anchor_over_its_caps_is_refused_before_the_task_starts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), "").await;
    let with = |criteria: Vec<String>, constraints: Vec<String>| {
        TaskRequest::new("boss", json!({"steps": []}).to_string()).with_anchor(TaskAnchor {
            completion_criteria: criteria,
            constraints,
        })
    };
    let cases = [
        (
            with(vec![], (0..33).map(|i| format!("rule {i}")).collect()),
            "`constraints` has 33 items, over the limit of 32",
        ),
        (
            with(vec!["x".repeat(1_001)], vec![]),
            "`completion_criteria[0]` has 1001 characters, over the limit of 1000",
        ),
        (
            with(vec![], vec!["ok".into(), "  ".into()]),
            "`constraints[1]` is empty",
        ),
    ];
    for (request, message) in cases {
        match h.task_request(&request).await {
            Err(DispatchError::InvalidAnchor(m)) => assert!(m.contains(message), "{m}"),
            other => panic!("expected an invalid anchor: {other:?}"),
        }
        let e = h.start_task_request(&request).expect_err("refused");
        assert!(e.to_string().contains(message), "{e}");
    }
    // Nothing started: no task, no tree.
    assert!(h.list_tasks(10).expect("list").is_empty());
    // At the caps, it is accepted.
    let full = with(
        (0..32).map(|i| format!("criterion {i}")).collect(),
        vec!["y".repeat(1_000)],
    );
    let done = h.task_request(&full).await.expect("runs");
    assert!(done.error.is_none(), "{:?}", done.error);
    let tree = h.task_tree(&done.task_id).expect("anchored from the start");
    assert_eq!(tree.completion_criteria.len(), 32);
}

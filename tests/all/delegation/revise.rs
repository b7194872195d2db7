//! A revised child judged on its own attempt (docs/delegation.md, "Revising a child"): failed
//! calls of an earlier attempt are set aside, a failed call of the current attempt still fails it.

use super::*;

async fn host_with_receipts(dir: &Path) -> Host {
    let caps = "tools = [\"echo.create\", \"echo.fail\"]";
    host_with(
        dir,
        [BOSS_CAPS, caps, ""],
        &format!("{BOSS_GRANT}[grants.worker]\n{caps}\n"),
    )
    .await
}

/// A worker script whose first attempt creates an item and fails a call, and whose revised
/// attempt runs `revised_steps` and claims two created items (one from each attempt).
fn failing_then(revised_steps: Value) -> Value {
    let create = |n: u32| json!({"op": "tool", "tool": "echo.create", "input": {"n": n}});
    let claim = |text: &str| json!({"tool": "echo.create", "text": text});
    json!({
        "steps": [create(1), {"op": "tool", "tool": "echo.fail", "input": {}}],
        "report": {"summary": "created one item, the second failed", "claims": [claim("item 1")]},
        "revised_steps": revised_steps,
        "revised_report": {"summary": "created two items",
                           "claims": [claim("item 1"), claim("item 2")]},
    })
}

/// Runs `worker` with `script`, revises it once and runs it again; the two child results.
async fn revised_once(h: &Host, script: Value) -> (String, Value, Value) {
    let (done, r) = boss(
        h,
        json!([
            run("worker", script),
            {"op": "review", "decision": "revise_child", "reason": "the second item is missing"},
            {"op": "run_approved"},
        ]),
    )
    .await;
    assert_eq!(r[1]["effect"], json!("continue_child"), "{}", r[1]);
    ok(&r[2]);
    assert_eq!(r[2]["child"], r[0]["child"], "a revised child keeps its id");
    (done.task_id, r[0].clone(), r[2].clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revised_child_is_judged_on_its_own_attempt() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host_with_receipts(dir.path()).await;
    let create = json!([{"op": "tool", "tool": "echo.create", "input": {"n": 2}}]);
    let (root, first, second) = revised_once(&h, failing_then(create)).await;
    assert_eq!(first["verdict"], json!("CheckStatus::Failed"), "{first}");
    // The first attempt's failed call does not count against the second; its created item
    // (a fact) still backs the second report's claim of it.
    assert_eq!(second["verdict"], json!("CheckStatus::Passed"), "{second}");
    let tree = h.task_tree(&root).expect("tree");
    assert_eq!(tree.nodes.len(), 2, "the revised child used no new slot");
    assert_eq!(
        tree.nodes[1].verdict,
        Some(guild_host::validate::CheckStatus::Passed)
    );
    // Every receipt is still the child's, in the ledger.
    let child = second["child"].as_str().expect("child id");
    let receipts = h.receipts(Some(child), 100).await.expect("receipts");
    assert_eq!(receipts.len(), 3, "{receipts:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_call_of_the_current_attempt_still_fails_a_revised_child() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host_with_receipts(dir.path()).await;
    let create_and_fail = json!([
        {"op": "tool", "tool": "echo.create", "input": {"n": 2}},
        {"op": "tool", "tool": "echo.fail", "input": {"again": true}},
    ]);
    let (_, first, second) = revised_once(&h, failing_then(create_and_fail)).await;
    assert_eq!(first["verdict"], json!("CheckStatus::Failed"), "{first}");
    assert_eq!(second["verdict"], json!("CheckStatus::Failed"), "{second}");
    // Without a call in the revised attempt, the second claim has nothing to back it.
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host_with_receipts(dir.path()).await;
    let (_, _, second) = revised_once(&h, failing_then(json!([]))).await;
    assert_eq!(second["verdict"], json!("CheckStatus::Failed"), "{second}");
}

/// The host restarts between the review that asked for a revision and the revised attempt: the
/// approval, the child's history and where its new attempt starts are kept with the tree, so the
/// top task's next attempt (an update of the interrupted background task) continues the same
/// child, and the judgement counts only the receipts of the new attempt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revised_child_is_judged_on_its_own_attempt_across_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let create = json!([{"op": "tool", "tool": "echo.create", "input": {"n": 2}}]);
    let child_brief = brief("worker", failing_then(create));
    let child_brief = &child_brief;
    let (id, first) = {
        let h = host_with_receipts(dir.path()).await;
        let script = json!({"steps": [
            {"op": "run", "brief": child_brief},
            {"op": "review", "decision": "revise_child", "reason": "the second item is missing"},
        ]});
        let id = h.start_task("boss", &script.to_string()).expect("starts");
        let record = h.until_task_ended(&id).await.expect("ends");
        let r: Value = serde_json::from_str(
            &record
                .result
                .expect("result")
                .report
                .expect("report")
                .details,
        )
        .expect("details are JSON");
        assert_eq!(r[0]["verdict"], json!("CheckStatus::Failed"), "{}", r[0]);
        assert_eq!(r[1]["effect"], json!("continue_child"), "{}", r[1]);
        (id, r[0]["child"].as_str().expect("child id").to_owned())
    };
    // The host died with the task still running (its process is gone).
    crate::background::owned_elsewhere(
        dir.path(),
        &id,
        crate::background::now_ms() + 60_000,
        crate::background::dead_pid(),
    );
    let h = host_with_receipts(dir.path()).await;
    assert_eq!(
        h.check_task(&id).expect("check").task.status,
        BackgroundStatus::Interrupted
    );
    // The next attempt runs the approved brief again: the same child continues.
    let again = json!({"steps": [{"op": "run", "brief": child_brief}, review("ascend")]});
    h.update_task(&id, &format!("continue\n## Context\n{again}"))
        .expect("updates");
    let record = h.until_task_ended(&id).await.expect("ends");
    let r: Value = serde_json::from_str(
        &record
            .result
            .expect("result")
            .report
            .expect("report")
            .details,
    )
    .expect("details are JSON");
    ok(&r[0]);
    assert_eq!(r[0]["child"], json!(first), "a revised child keeps its id");
    // Only the new attempt's receipts count: the first attempt's failed call is set aside.
    assert_eq!(r[0]["verdict"], json!("CheckStatus::Passed"), "{}", r[0]);
    assert_eq!(r[1]["effect"], json!("complete_parent_goal"), "{}", r[1]);
    let tree = h.task_tree(&id).expect("tree");
    assert_eq!(tree.nodes.len(), 2, "the revised child used no new slot");
    assert_eq!(tree.nodes[0].status, NodeStatus::Finished);
    let receipts = h.receipts(Some(&first), 100).await.expect("receipts");
    assert_eq!(
        receipts.len(),
        3,
        "both attempts' receipts are in the ledger"
    );
}

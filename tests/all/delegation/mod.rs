//! Recursive delegation through the real host (docs/delegation.md): the `delegator` test
//! specialist, copied as `boss` (the top task), `worker` (its child) and `leaf` (a grandchild),
//! runs the script of delegate and review calls its brief carries. Grants in pairs (allowed;
//! not requested, not granted, empty, specialist not named), malformed briefs naming their rule,
//! the decision matrix (allowed and refused cells for each verdict), a pending review blocking
//! other calls, depth and fan-out limits, budgets spent at two levels, a cancelled subtree,
//! a revised child judged on its own attempt (and a failed call of that attempt still failing it).

use std::path::{Path, PathBuf};
use std::time::Duration;

use guild_host::background::BackgroundStatus;
use guild_host::llm::standin::StandIn;
use guild_host::types::TaskResult;
use guild_host::{Config, Host, NodeStatus};
use serde_json::{Value, json};

/// A copy of the `delegator` component as plugin `name`, with `capabilities` as its
/// `[capabilities]` body.
pub(crate) fn specialist(dir: &Path, name: &str, capabilities: &str) -> PathBuf {
    let from = guild_tests::plugin_dir("testing/delegator");
    let to = dir.join(name);
    std::fs::create_dir_all(&to).expect("mkdir");
    std::fs::copy(from.join("delegator.wasm"), to.join("delegator.wasm")).expect("copy");
    let manifest = format!(
        "[plugin]\nname = \"{name}\"\nversion = \"0.1.0\"\nkind = \"specialist\"\n\
         component = \"delegator.wasm\"\ndescription = \"test delegator\"\n\n\
         [capabilities]\n{capabilities}\n\n[limits]\nmemory_mb = 64\ntimeout_s = 60\n\
         max_output_kb = 256\n"
    );
    std::fs::write(to.join("plugin.toml"), manifest).expect("manifest");
    to
}

const BOSS_CAPS: &str = "delegate = [\"worker\", \"leaf\"]\ntools = [\"echo.echo\"]\n\
                         memory = [\"team:read\", \"team:write\"]";
const BOSS_GRANT: &str = "[grants.boss]\ndelegate = [\"worker\", \"leaf\"]\n\
                          tools = [\"echo.echo\"]\nmemory = [\"team:read\", \"team:write\"]\n";
const WORKER_CAPS: &str = "delegate = [\"leaf\"]\ntools = [\"echo.echo\"]\n\
                           fs = [{ guest = \"/workspace\", mode = \"ro\" }]";
const WORKER_GRANT: &str = "[grants.worker]\ndelegate = [\"leaf\"]\ntools = [\"echo.echo\"]\n\
                            fs = [{ guest = \"/workspace\", host = \"ws\", mode = \"ro\" }]\n";

/// A host with `boss`, `worker` and `leaf` (each with `caps`), the `echo` connector, and
/// `extra` (grants and settings).
async fn host_with(dir: &Path, caps: [&str; 3], extra: &str) -> Host {
    let folders = [
        specialist(dir, "boss", caps[0]),
        specialist(dir, "worker", caps[1]),
        specialist(dir, "leaf", caps[2]),
        guild_tests::plugin_dir("testing/echo"),
    ];
    let list: Vec<String> = folders
        .iter()
        .map(|f| format!("{:?}", f.display().to_string()))
        .collect();
    let text = format!(
        "[host]\nplugins = [{}]\ndata_dir = \".guild\"\n\n[memory]\nworkspace = \"acme\"\n\n{extra}",
        list.join(", ")
    );
    let config = Config::parse(&text, &dir.join("guild.toml"), dir).expect("config parses");
    let host = Host::with_engine(config, guild_tests::engine())
        .await
        .expect("host starts");
    assert!(host.load_errors().is_empty(), "{:?}", host.load_errors());
    host
}

/// The usual host: boss may call worker and leaf, worker may call leaf and reads the folder
/// `ws` (its artifacts resolve there).
async fn host(dir: &Path, extra: &str) -> Host {
    std::fs::create_dir_all(dir.join("ws")).expect("workspace");
    host_with(
        dir,
        [BOSS_CAPS, WORKER_CAPS, ""],
        &format!("{BOSS_GRANT}{WORKER_GRANT}{extra}"),
    )
    .await
}

/// A brief for `specialist` whose child runs `script`.
fn brief(specialist: &str, script: Value) -> Value {
    json!({
        "specialist": specialist,
        "objective": "Check the tracker for open incidents",
        "reason": "The weekly summary needs them",
        "completion_criteria": ["every open incident is listed"],
        "context": script,
    })
}

fn run(specialist: &str, script: Value) -> Value {
    json!({"op": "run", "brief": brief(specialist, script)})
}

fn review(decision: &str) -> Value {
    json!({"op": "review", "decision": decision, "reason": "checked the report"})
}

/// Runs `boss` with `steps`; the task result and one JSON result per step.
async fn boss(h: &Host, steps: Value) -> (TaskResult, Vec<Value>) {
    let done = h
        .task("boss", &json!({ "steps": steps }).to_string())
        .await
        .expect("task starts");
    let details = done
        .report
        .as_ref()
        .map(|r| serde_json::from_str(&r.details).expect("details are JSON"))
        .unwrap_or_else(|| panic!("boss reported nothing: {:?}", done.error));
    (done, details)
}

/// `r` is a refusal of `kind`; its error text (or JSON) as a string.
fn refused(r: &Value, kind: &str) -> String {
    assert_eq!(r["ok"], json!(false), "expected a refusal: {r}");
    assert_eq!(r["kind"], json!(kind), "{r}");
    r["error"].to_string()
}

fn ok(r: &Value) {
    assert_eq!(r["ok"], json!(true), "expected success: {r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_granted_child_runs_is_validated_reviewed_and_shown_in_the_tree() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), "").await;
    let (done, r) = boss(
        &h,
        json!([
            {"op": "specialists"},
            run("worker", json!({"steps": [{"op": "tool", "tool": "echo.echo", "input": {"a": 1}}],
                                  "report": {"summary": "listed 3 incidents"}})),
            review("ascend"),
        ]),
    )
    .await;
    assert_eq!(r[0]["names"], json!(["leaf", "worker"]));
    ok(&r[1]);
    assert_eq!(r[1]["verdict"], json!("CheckStatus::Passed"), "{}", r[1]);
    assert_eq!(r[1]["summary"], json!("listed 3 incidents"));
    assert_eq!(r[1]["tool_calls"], json!(1));
    assert_eq!(r[1]["allowed"].as_array().map(Vec::len), Some(7));
    let child_steps: Value =
        serde_json::from_str(r[1]["details"].as_str().expect("details")).expect("JSON");
    ok(&child_steps[0]);
    assert_eq!(r[2]["effect"], json!("complete_parent_goal"), "{}", r[2]);

    let tree = h.task_tree(&done.task_id).expect("the top task is a root");
    assert_eq!(tree.root, done.task_id);
    assert_eq!(tree.nodes.len(), 2);
    let child = &tree.nodes[1];
    assert_eq!(child.task_id, r[1]["child"].as_str().expect("child id"));
    assert_eq!(child.parent.as_deref(), Some(&*done.task_id));
    assert_eq!(child.specialist, "worker");
    assert_eq!(child.depth, 1);
    assert_eq!(child.status, NodeStatus::Finished);
    assert_eq!(
        child.review.as_ref().map(|r| r.decision.as_str()),
        Some("ascend")
    );
    assert_eq!(tree.nodes[0].status, NodeStatus::Finished);
    // The child's tool call was charged to it and to the root.
    let budget = guild_host::settings::TreeBudget::default();
    assert_eq!(tree.nodes[0].remaining.tool_calls, budget.tool_calls - 1);
    assert_eq!(tree.nodes[0].remaining.tasks, budget.tasks - 2);
    // The child's receipts are its own: the tree names the chain.
    assert!(h.task_tree(&child.task_id).is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delegation_is_denied_without_a_request_a_grant_or_a_named_specialist() {
    let dir = tempfile::tempdir().expect("tempdir");
    // boss requests worker but is granted nothing; worker is granted but requests nothing;
    // leaf has an empty grant.
    let h = host_with(
        dir.path(),
        [
            "delegate = [\"worker\"]",
            "tools = [\"echo.echo\"]",
            "delegate = [\"worker\"]",
        ],
        "[grants.worker]\ndelegate = [\"leaf\"]\n[grants.leaf]\ndelegate = []\n",
    )
    .await;
    let (_, r) = boss(&h, json!([run("worker", json!({}))])).await;
    let e = refused(&r[0], "denied");
    assert!(e.contains("not granted") && e.contains("delegate"), "{e}");
    assert!(h.task_tree("nothing").is_none());

    let script = json!({"steps": [run("leaf", json!({}))]});
    let done = h.task("worker", &script.to_string()).await.expect("runs");
    let r: Value = serde_json::from_str(&done.report.expect("report").details).expect("JSON");
    let e = refused(&r[0], "denied");
    assert!(e.contains("not requested"), "{e}");

    let script = json!({"steps": [run("worker", json!({}))]});
    let done = h.task("leaf", &script.to_string()).await.expect("runs");
    let r: Value = serde_json::from_str(&done.report.expect("report").details).expect("JSON");
    refused(&r[0], "denied");

    // Granted, but for other specialists: the brief names the rule.
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), "").await;
    let script = json!({"steps": [run("boss", json!({}))]});
    let done = h.task("worker", &script.to_string()).await.expect("runs");
    let r: Value = serde_json::from_str(&done.report.expect("report").details).expect("JSON");
    let e = refused(&r[0], "brief_refused");
    assert!(
        e.contains("\"rule\":\"specialist\"") && e.contains("does not name specialist"),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_brief_is_refused_with_the_rule_it_broke() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), "").await;
    let with = |patch: Value| {
        let mut b = brief("worker", json!({}));
        for (k, v) in patch.as_object().expect("object") {
            b[k] = v.clone();
        }
        json!({"op": "run", "brief": b})
    };
    // worker, constrained, tries to drop its constraint when it delegates to leaf.
    let mut constrained = brief("worker", json!({"steps": [run("leaf", json!({}))]}));
    constrained["constraints"] = json!(["never touch production"]);
    let (done, r) = boss(
        &h,
        json!([
            with(json!({"objective": "  "})),
            with(json!({"completion_criteria": []})),
            with(json!({"context_refs": ["memory:private"]})),
            with(json!({"context_refs": ["task:someone-else"]})),
            with(json!({"validation_scopes": ["Not A Scope"]})),
            {"op": "run", "brief": constrained},
        ]),
    )
    .await;
    let rules: Vec<String> = r[..5].iter().map(|x| refused(x, "brief_refused")).collect();
    assert!(
        rules[0].contains("\"rule\":\"field\"") && rules[0].contains("`objective`"),
        "{}",
        rules[0]
    );
    assert!(rules[1].contains("completion_criteria"), "{}", rules[1]);
    assert!(
        rules[2].contains("context-refs") && rules[2].contains("memory:private"),
        "{}",
        rules[2]
    );
    assert!(rules[3].contains("context-refs"), "{}", rules[3]);
    assert!(rules[4].contains("validation-scope"), "{}", rules[4]);
    // Nothing refused started a child.
    ok(&r[5]);
    let child: Value =
        serde_json::from_str(r[5]["details"].as_str().expect("details")).expect("JSON");
    let e = refused(&child[0], "brief_refused");
    assert!(
        e.contains("\"rule\":\"constraints\"") && e.contains("never touch production"),
        "{e}"
    );
    let tree = h.task_tree(&done.task_id).expect("tree");
    assert_eq!(tree.nodes.len(), 2, "one child, no grandchild");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_decision_matrix_is_checked_for_each_verdict() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), "").await;
    let passed = json!({"report": {"suggest": "list only the incidents opened this week"}});
    let failed = json!({"report": {"artifacts": [{"id": "a.txt", "sha256": "not-a-hash"}]}});
    let unknown = json!({"report": {"artifacts": [{"id": "a.txt", "sha256": "ab".repeat(32)}]}});
    let outcome_failed = json!({"report": {"outcome": "failed", "summary": "could not"}});
    let error =
        json!({"report": {"artifacts": [{"id": "../outside.txt", "sha256": "ab".repeat(32)}]}});
    let (_, r) = boss(
        &h,
        json!([
            // passed: every decision; ones that need a brief need the right one.
            run("worker", passed),
            {"op": "review", "decision": "descend_again", "reason": "more"},
            {"op": "review", "decision": "reject_refine", "reason": "x",
             "next_task": brief("leaf", json!({}))},
            {"op": "review", "decision": "accept_refine", "reason": "narrower is better"},
            {"op": "run", "brief": brief("worker", json!({}))},
            {"op": "run_approved"},
            {"op": "review", "decision": "descend_again", "reason": "one more",
             "next_task": brief("leaf", json!({"report": {"summary": "leaf done"}}))},
            run("leaf", json!({"report": {"summary": "not the approved one"}})),
            {"op": "run_approved"},
            review("reject_refine"),
            // failed: ascend refused, replan_current allowed.
            run("worker", failed),
            review("ascend"),
            review("replan_current"),
        ]),
    )
    .await;
    ok(&r[0]);
    assert_eq!(r[0]["verdict"], json!("CheckStatus::Passed"));
    let e = refused(&r[1], "review_refused");
    assert!(e.contains("descend_again needs next_task"), "{e}");
    let e = refused(&r[2], "review_refused");
    assert!(e.contains("only descend_again carries next_task"), "{e}");
    assert_eq!(r[3]["effect"], json!("take_suggestion"), "{}", r[3]);
    // The approved next task runs exactly as approved, and nothing else.
    let e = refused(&r[4], "brief_refused");
    assert!(e.contains("not-as-approved"), "{e}");
    ok(&r[5]);
    assert_eq!(r[6]["effect"], json!("new_child"), "{}", r[6]);
    refused(&r[7], "brief_refused");
    ok(&r[8]);
    assert_eq!(r[8]["summary"], json!("leaf done"));
    assert_eq!(r[9]["effect"], json!("keep_plan"));
    assert_eq!(r[10]["verdict"], json!("CheckStatus::Failed"), "{}", r[10]);
    let e = refused(&r[11], "review_refused");
    assert!(
        e.contains("revise_child") && e.contains("replan_current") && e.contains("fail"),
        "{e}"
    );
    assert_eq!(r[12]["effect"], json!("reopen_parent_goal"));

    let (done, r) = boss(
        &h,
        json!([
            // unknown (leaf has no workspace to check the artifact in): reject_refine refused,
            // revise_child continues the same child.
            run("leaf", unknown),
            review("reject_refine"),
            {"op": "review", "decision": "revise_child", "reason": "hash the real file"},
            {"op": "run_approved"},
            review("fail"),
            // the report's own outcome failed: only revise_child or fail.
            run("worker", outcome_failed),
            review("replan_current"),
            review("fail"),
            review("fail"),
            // error: only revise_child or fail.
            run("worker", error),
            review("reject_refine"),
            review("revise_child"),
        ]),
    )
    .await;
    assert_eq!(r[0]["verdict"], json!("CheckStatus::Unknown"), "{}", r[0]);
    refused(&r[1], "review_refused");
    assert_eq!(r[2]["effect"], json!("continue_child"));
    ok(&r[3]);
    assert_eq!(r[3]["child"], r[0]["child"], "a revised child keeps its id");
    assert_eq!(r[4]["effect"], json!("fail_parent_goal"));
    assert_eq!(r[5]["outcome"], json!("Outcome::Failed"));
    assert_eq!(r[5]["allowed"], json!(["revise_child", "fail"]));
    refused(&r[6], "review_refused");
    assert_eq!(r[7]["effect"], json!("fail_parent_goal"));
    // Nothing is pending any more.
    refused(&r[8], "no_pending_review");
    assert_eq!(r[9]["verdict"], json!("CheckStatus::Error"), "{}", r[9]);
    let e = refused(&r[10], "review_refused");
    assert!(e.contains("allowed: revise_child, fail"), "{e}");
    assert_eq!(r[11]["effect"], json!("continue_child"));
    let tree = h.task_tree(&done.task_id).expect("tree");
    assert_eq!(tree.nodes.len(), 4, "the revised child used no new slot");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_review_allows_only_the_review_and_context_reads() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), "").await;
    let (_, r) = boss(
        &h,
        json!([
            run("worker", json!({})),
            {"op": "tool", "tool": "echo.echo", "input": {}},
            {"op": "memory_write", "text": "# Notes\n\n- one\n"},
            run("worker", json!({})),
            {"op": "memory_read"},
            review("ascend"),
            {"op": "tool", "tool": "echo.echo", "input": {}},
        ]),
    )
    .await;
    ok(&r[0]);
    let e = refused(&r[1], "tool");
    assert!(e.contains("waiting for your review"), "{e}");
    let e = refused(&r[2], "memory");
    assert!(e.contains("waiting for your review"), "{e}");
    refused(&r[3], "review_pending");
    ok(&r[4]);
    ok(&r[5]);
    ok(&r[6]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn depth_and_fan_out_are_limited() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), "[delegate]\nmax_depth = 1\nmax_children = 1\n").await;
    let (_, r) = boss(
        &h,
        json!([
            run("worker", json!({"steps": [run("leaf", json!({}))]})),
            review("ascend"),
            run("leaf", json!({})),
        ]),
    )
    .await;
    let child: Value =
        serde_json::from_str(r[0]["details"].as_str().expect("details")).expect("JSON");
    let e = refused(&child[0], "too_deep");
    assert!(e.contains("1 level(s) deep"), "{e}");
    ok(&r[1]);
    let e = refused(&r[2], "too_many_children");
    assert!(e.contains("may start 1 children"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn budgets_are_spent_at_each_level() {
    // Level 0: the top task is the tree's only task.
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), "[delegate.budget]\ntasks = 1\n").await;
    let (_, r) = boss(&h, json!([run("worker", json!({}))])).await;
    let e = refused(&r[0], "budget_exceeded");
    assert!(e.contains("Tasks"), "{e}");

    // Level 1: the child may not start a grandchild, and its second tool call is refused.
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), "[delegate.budget]\ntasks = 2\ntool_calls = 1\n").await;
    let (done, r) = boss(
        &h,
        json!([run(
            "worker",
            json!({"steps": [
                run("leaf", json!({})),
                {"op": "tool", "tool": "echo.echo", "input": {}},
                {"op": "tool", "tool": "echo.echo", "input": {}},
            ]})
        )]),
    )
    .await;
    ok(&r[0]);
    let child: Value =
        serde_json::from_str(r[0]["details"].as_str().expect("details")).expect("JSON");
    let e = refused(&child[0], "budget_exceeded");
    assert!(e.contains("Tasks"), "{e}");
    ok(&child[1]);
    let e = refused(&child[2], "tool");
    assert!(e.contains("tree budget exceeded: tool calls"), "{e}");
    let tree = h.task_tree(&done.task_id).expect("tree");
    assert_eq!(tree.nodes[0].remaining.tool_calls, 0);
    assert_eq!(tree.nodes[0].remaining.tasks, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_top_task_cancels_its_subtree() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), "").await;
    let script = json!({"steps": [run(
        "worker",
        json!({"steps": [run("leaf", json!({"steps": [{"op": "spin"}]}))]}),
    )]});
    let id = h.start_task("boss", &script.to_string()).expect("starts");
    // Wait (bounded) until the grandchild is running.
    let mut depth = 0;
    for _ in 0..400 {
        depth = h
            .task_tree(&id)
            .map_or(0, |t| t.nodes.iter().map(|n| n.depth).max().unwrap_or(0));
        if depth == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(depth, 2, "the grandchild never started");
    h.cancel_task(&id).expect("cancels");
    assert_eq!(
        h.check_task(&id).expect("check").task.status,
        BackgroundStatus::Cancelled
    );
    let mut statuses = Vec::new();
    for _ in 0..400 {
        statuses = h
            .task_tree(&id)
            .expect("tree")
            .nodes
            .iter()
            .map(|n| n.status)
            .collect();
        if statuses.iter().all(|s| *s == NodeStatus::Cancelled) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(statuses, [NodeStatus::Cancelled; 3]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_review_and_the_budget_spent_survive_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (root, child, before) = {
        let h = host(dir.path(), "").await;
        let (done, r) = boss(
            &h,
            json!([run(
                "worker",
                json!({"steps": [
                    {"op": "tool", "tool": "echo.echo", "input": {}},
                ]})
            )]),
        )
        .await;
        ok(&r[0]);
        let tree = h.task_tree(&done.task_id).expect("tree");
        (
            done.task_id,
            r[0]["child"].as_str().expect("child").to_owned(),
            tree,
        )
    };
    let h = host(dir.path(), "").await;
    let after = h.task_tree(&root).expect("the tree survived the restart");
    assert_eq!(after.anchor_hash, before.anchor_hash);
    assert_eq!(after.nodes.len(), 2);
    assert_eq!(after.nodes[0].pending_review.as_deref(), Some(&*child));
    assert_eq!(after.nodes[0].remaining, before.nodes[0].remaining);
    assert_eq!(after.nodes[1].remaining, before.nodes[1].remaining);
    assert_eq!(after.nodes[1].verdict, before.nodes[1].verdict);
    assert_eq!(after.nodes[1].parent.as_deref(), Some(&*root));
}

/// Polls (bounded) until `done` holds for the tree `id` belongs to.
async fn until_tree(h: &Host, id: &str, done: impl Fn(&guild_host::TreeView) -> bool) {
    for _ in 0..400 {
        if h.task_tree(id).is_some_and(|t| done(&t)) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the tree of {id} never got there: {:?}", h.task_tree(id));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_top_task_run_again_under_its_id_finishes_its_node() {
    let dir = tempfile::tempdir().expect("tempdir");
    // One background slot: the new attempt starts only once the replaced one is gone.
    let h = host(dir.path(), "[dispatch]\nbatch_concurrency = 1\n").await;
    let echo = json!({"steps": [{"op": "tool", "tool": "echo.echo", "input": {}}]});
    let first = json!({"steps": [run("worker", echo.clone()), review("ascend"), {"op": "spin"}]});
    let id = h.start_task("boss", &first.to_string()).expect("starts");
    until_tree(&h, &id, |t| {
        t.nodes.len() == 2 && t.nodes[1].review.is_some()
    })
    .await;
    // An update replaces the running attempt (its node is cancelled with it); the new attempt,
    // under the same id, delegates once more and ends.
    let again = json!({"steps": [run("worker", echo), review("ascend")]});
    h.update_task(&id, &format!("once more\n## Context\n{again}"))
        .expect("updates");
    let record = h.until_task_ended(&id).await.expect("ends");
    assert_eq!(record.status, BackgroundStatus::Succeeded, "{record:?}");
    let tree = h.task_tree(&id).expect("tree");
    assert_eq!(tree.nodes.len(), 3, "{tree:?}");
    assert_eq!(tree.nodes[0].status, NodeStatus::Finished, "{tree:?}");
    assert_eq!(
        tree.nodes[0].verdict,
        Some(guild_host::validate::CheckStatus::Passed)
    );
    // What the first attempt spent stays spent: the root and both children.
    let budget = guild_host::settings::TreeBudget::default();
    assert_eq!(tree.nodes[0].remaining.tasks, budget.tasks - 3);
    assert_eq!(tree.nodes[0].remaining.tool_calls, budget.tool_calls - 2);
}

/// The `echo` connector's mutating `create` tool granted to all three specialists.
const CREATE_CAPS: [&str; 3] = [
    "delegate = [\"worker\"]\ntools = [\"echo.create\"]",
    "delegate = [\"leaf\"]\ntools = [\"echo.create\"]",
    "tools = [\"echo.create\"]",
];
const CREATE_GRANTS: &str = "[grants.boss]\ndelegate = [\"worker\"]\ntools = [\"echo.create\"]\n\
                             [grants.worker]\ndelegate = [\"leaf\"]\ntools = [\"echo.create\"]\n\
                             [grants.leaf]\ntools = [\"echo.create\"]\n";

mod anchor;
mod revise;
mod spend;

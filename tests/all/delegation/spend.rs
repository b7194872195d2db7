//! What a child spends, seen from outside: every receipt naming its chain inside the ledger's
//! hash, model tokens refused once the tree's are spent, and a child ended at the wall time its
//! tree leaves it.

use super::*;

fn create(n: u32) -> Value {
    json!({"op": "tool", "tool": "echo.create", "input": {"title": format!("item {n}")}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_receipt_of_a_child_names_its_chain_inside_the_ledgers_hash() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host_with(dir.path(), CREATE_CAPS, CREATE_GRANTS).await;
    let (done, r) = boss(
        &h,
        json!([
            create(0),
            run(
                "worker",
                json!({"steps": [create(1), run("leaf", json!({"steps": [create(2)]}))]})
            ),
        ]),
    )
    .await;
    ok(&r[0]);
    ok(&r[1]);
    let worker = r[1]["child"].as_str().expect("child id").to_owned();
    let worker_steps: Value =
        serde_json::from_str(r[1]["details"].as_str().expect("details")).expect("JSON");
    ok(&worker_steps[1]);
    let leaf = worker_steps[1]["child"].as_str().expect("grandchild id");
    let root = done.task_id.clone();

    let chain_of = |receipts: &[guild_host::receipts::Receipt]| {
        assert_eq!(receipts.len(), 1, "{receipts:?}");
        receipts[0].chain.clone()
    };
    let top = h.receipts(Some(&root), 10).await.expect("receipts");
    assert!(chain_of(&top).is_empty(), "a top-level task names no chain");
    let mid = h.receipts(Some(&worker), 10).await.expect("receipts");
    assert_eq!(chain_of(&mid), [root.clone(), worker.clone()]);
    let low = h.receipts(Some(leaf), 10).await.expect("receipts");
    assert_eq!(
        chain_of(&low),
        [root.clone(), worker.clone(), leaf.to_owned()]
    );
    assert!(h.verify_receipts().await.expect("verify").ok);
    drop(h);

    // The chain is in the hash: editing it in the file is found by verify.
    let path = dir
        .path()
        .join(".guild")
        .join(guild_host::receipts::LEDGER_FILE);
    let ledger = rusqlite::Connection::open(&path).expect("raw open");
    ledger
        .execute("DROP TRIGGER entries_no_update", [])
        .expect("drop trigger");
    let changed = ledger
        .execute(
            "UPDATE entries SET chain = ?1 WHERE task_id = ?2",
            [format!("{root} {leaf}"), leaf.to_owned()],
        )
        .expect("edit");
    assert!(changed > 0);
    drop(ledger);
    let v = guild_host::receipts::verify_file(&path).expect("verify");
    assert!(!v.ok, "{v}");
    assert!(v.to_string().contains("edited"), "{v}");
}

/// A host whose `worker` and `leaf` may call model `fast` on the stand-in endpoint (every
/// answer spends 18 tokens), under `[delegate.budget]` `budget`.
async fn model_host(dir: &Path, standin: &StandIn, budget: &str) -> Host {
    std::fs::write(dir.join("key"), "sk-test\n").expect("key file");
    let llm_grant =
        "[grants.worker.llm]\nmodels = [\"fast\"]\n[grants.leaf.llm]\nmodels = [\"fast\"]\n";
    let extra = format!(
        "[grants.boss]\ndelegate = [\"worker\"]\n[grants.worker]\ndelegate = [\"leaf\"]\n\
         {llm_grant}\
         [llm.endpoints.local]\nbase_url = \"{}\"\napi_key_file = \"key\"\n\
         [llm.models]\nfast = {{ endpoint = \"local\", model = \"m-fast\" }}\n\
         [delegate.budget]\n{budget}\n",
        standin.base_url()
    );
    host_with(
        dir,
        [
            "delegate = [\"worker\"]",
            "delegate = [\"leaf\"]\nllm = true",
            "llm = true",
        ],
        &extra,
    )
    .await
}

fn model() -> Value {
    json!({"op": "model", "model": "fast"})
}

fn steps_of(r: &Value) -> Value {
    serde_json::from_str(r["details"].as_str().expect("details")).expect("JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_childs_model_calls_are_refused_once_the_trees_tokens_are_spent() {
    let s = StandIn::start(vec![]).await.expect("stand-in");
    // Level 1: 30 tokens; the first call leaves 12, the second spends them (what was spent
    // cannot be refused), the third is refused before anything is sent.
    let dir = tempfile::tempdir().expect("tempdir");
    let h = model_host(dir.path(), &s, "tokens = 30").await;
    let (done, r) = boss(
        &h,
        json!([run("worker", json!({"steps": [model(), model(), model()]}))]),
    )
    .await;
    ok(&r[0]);
    let child = steps_of(&r[0]);
    ok(&child[0]);
    ok(&child[1]);
    let e = refused(&child[2], "llm");
    assert!(
        e.contains("budget-exceeded: task token budget spent (30 of 30"),
        "{e}"
    );
    assert_eq!(s.requests().len(), 2, "the refused call sent nothing");
    assert_eq!(r[0]["tokens"], json!(36), "{}", r[0]);
    let tree = h.task_tree(&done.task_id).expect("tree");
    assert_eq!(tree.nodes[0].remaining.tokens, 0);
    drop(h);

    // Level 2: 40 tokens; the child spends 18, its grandchild 18 and then 18 more than is left,
    // so the grandchild's next call and the child's own next call are refused.
    let dir = tempfile::tempdir().expect("tempdir");
    let h = model_host(dir.path(), &s, "tokens = 40").await;
    let before = s.requests().len();
    let (done, r) = boss(
        &h,
        json!([run(
            "worker",
            json!({"steps": [
                model(),
                run("leaf", json!({"steps": [model(), model(), model()]})),
                model(),
            ]})
        )]),
    )
    .await;
    ok(&r[0]);
    let child = steps_of(&r[0]);
    ok(&child[0]);
    ok(&child[1]);
    let grandchild = steps_of(&child[1]);
    ok(&grandchild[0]);
    ok(&grandchild[1]);
    let e = refused(&grandchild[2], "llm");
    assert!(e.contains("budget-exceeded"), "{e}");
    let e = refused(&child[2], "llm");
    assert!(e.contains("budget-exceeded"), "{e}");
    assert_eq!(s.requests().len() - before, 3);
    let tree = h.task_tree(&done.task_id).expect("tree");
    assert!(
        tree.nodes.iter().all(|n| n.remaining.tokens == 0),
        "{tree:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_ends_at_the_wall_time_its_tree_leaves_it() {
    // Level 1: the child spins; it is ended when the tree's wall time runs out.
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), "[delegate.budget]\nwall_ms = 1500\n").await;
    let (done, r) = boss(
        &h,
        json!([run("worker", json!({"steps": [{"op": "spin"}]}))]),
    )
    .await;
    let e = refused(&r[0], "budget_exceeded");
    assert!(e.contains("WallMs"), "{e}");
    let tree = h.task_tree(&done.task_id).expect("tree");
    assert_eq!(tree.nodes[0].remaining.wall_ms, 0);
    assert_eq!(tree.nodes[1].status, NodeStatus::Cancelled);
    drop(h);

    // Level 2: the child works, then its grandchild spins: the grandchild may run only what its
    // parent has left, so both end at the child's deadline. The budget leaves the child's work
    // (500 ms) far from its deadline even on a loaded machine, so that the grandchild starts
    // and it is its spin that meets the deadline.
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), "[delegate.budget]\nwall_ms = 5000\n").await;
    let (done, r) = boss(
        &h,
        json!([run(
            "worker",
            json!({"steps": [
                {"op": "busy", "ms": 500},
                run("leaf", json!({"steps": [{"op": "spin"}]})),
            ]})
        )]),
    )
    .await;
    let e = refused(&r[0], "budget_exceeded");
    assert!(e.contains("WallMs"), "{e}");
    let tree = h.task_tree(&done.task_id).expect("tree");
    assert_eq!(tree.nodes.len(), 3);
    assert_eq!(tree.nodes[0].remaining.wall_ms, 0);
    assert!(
        tree.nodes[1..]
            .iter()
            .all(|n| n.status == NodeStatus::Cancelled),
        "{tree:?}"
    );
}

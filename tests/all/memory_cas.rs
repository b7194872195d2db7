//! Compare-and-swap on memory versions through the real `memory` WIT import: an update is based
//! on the version its instance read, so two writers that read the same version cannot both
//! replace it. The interleaving is made deterministic with an approval: the probe reads, asks
//! to call an approval-gated tool, and while it waits the approver (standing in for another
//! writer) stores a new version; then the probe's update runs.

use std::sync::Arc;

use futures::future::BoxFuture;
use guild_host::memory::{Actor, Memory, Scope};
use guild_host::receipts::ReceiptStatus;
use guild_host::{ApprovalRequest, Approver, Host};
use serde_json::{Value, json};

const PLUGINS: &[&str] = &["testing/probe", "testing/echo"];
const CONFIG: &str = "[memory]\nworkspace = \"acme\"\nuser = \"ana\"\n\n[grants.probe]\n\
    memory = [\"team:read\", \"team:write\"]\ntools = [\"echo.guarded\"]\n";
const V1: &str = "## Decisions\n- 2026-03-01: releases go out on Tuesdays\n";

/// Approves, after storing `text` over version `base` as another writer when it has one.
struct OtherWriter(Memory, Option<(u64, String)>);

impl Approver for OtherWriter {
    fn approve(&self, _request: ApprovalRequest) -> BoxFuture<'static, bool> {
        let (memory, write) = (self.0.clone(), self.1.clone());
        Box::pin(async move {
            if let Some((base, text)) = write {
                memory
                    .update(Scope::Team, &text, base, &Actor::Supervisor)
                    .await
                    .expect("the other writer stores its version");
            }
            true
        })
    }
}

async fn host_with_v1(dir: &std::path::Path) -> Host {
    let h = guild_tests::host(dir, PLUGINS, CONFIG).await;
    h.memory()
        .update(Scope::Team, V1, 0, &Actor::Supervisor)
        .await
        .expect("v1");
    h
}

/// Runs the probe's read → approval-gated call → update sequence; the answers of the steps.
async fn read_wait_update(
    h: &Host,
    other: OtherWriter,
    text: &str,
) -> (Vec<Value>, Vec<ReceiptStatus>) {
    let op = json!({"op": "seq", "ops": [
        {"op": "memory_read", "scope": "team"},
        {"op": "tool", "name": "echo.guarded", "input": {"to": "team"}},
        {"op": "memory_update", "scope": "team", "text": text},
    ]});
    let r = h
        .session()
        .with_approver(Arc::new(other))
        .task("probe", &op.to_string())
        .await
        .expect("runs");
    let report = r.report.as_ref().expect("report");
    let answer: Value = serde_json::from_str(&report.details).expect("probe answer");
    let steps = answer["value"].as_array().expect("steps").clone();
    let memory_receipts = r
        .receipts
        .iter()
        .filter(|x| x.receipt_type == "memory")
        .map(|x| x.status)
        .collect();
    (steps, memory_receipts)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_based_on_the_version_read_is_stored() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host_with_v1(dir.path()).await;
    let mine = format!("{V1}- 2026-03-02: tags are signed\n");
    let (steps, receipts) =
        read_wait_update(&h, OtherWriter(h.memory().clone(), None), &mine).await;
    assert_eq!(steps[0]["value"]["version"], json!(1), "{steps:?}");
    assert_eq!(steps[2]["ok"], json!(true), "{steps:?}");
    assert_eq!(steps[2]["value"]["stored"], json!(2), "{steps:?}");
    assert_eq!(receipts, [ReceiptStatus::Success]);
    assert_eq!(h.memory().read(Scope::Team).await.expect("read").text, mine);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_based_on_a_version_another_writer_replaced_is_refused_naming_both() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host_with_v1(dir.path()).await;
    let theirs = format!("{V1}- 2026-03-02: no deploys on Fridays\n");
    let mine = format!("{V1}- 2026-03-02: tags are signed\n");
    let other = OtherWriter(h.memory().clone(), Some((1, theirs.clone())));
    let (steps, receipts) = read_wait_update(&h, other, &mine).await;
    assert_eq!(steps[0]["value"]["version"], json!(1), "{steps:?}");
    assert_eq!(steps[1]["ok"], json!(true), "approved: {steps:?}");
    // The guest sees a typed refusal (nothing stored) whose message names both versions.
    assert_eq!(steps[2]["ok"], json!(false), "{steps:?}");
    let error: Value =
        serde_json::from_str(steps[2]["error"].as_str().expect("error")).expect("typed error");
    assert_eq!(error["kind"], "refused", "{error}");
    let message = error["errors"][0].as_str().expect("message");
    assert!(
        message.contains("team:acme")
            && message.contains("based on version 1")
            && message.contains("version 2 is stored now"),
        "{message}"
    );
    assert_eq!(
        receipts,
        [ReceiptStatus::Failed],
        "the conflict is receipted"
    );
    // The other writer's version stands; the lost update did not happen.
    let now = h.memory().read(Scope::Team).await.expect("read");
    assert_eq!(now.text, theirs);
    assert_eq!(now.version.expect("version").version, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_that_stored_a_version_updates_from_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host_with_v1(dir.path()).await;
    let a = format!("{V1}- 2026-03-02: a\n");
    let b = format!("{a}- 2026-03-03: b\n");
    let op = json!({"op": "seq", "ops": [
        {"op": "memory_read", "scope": "team"},
        {"op": "memory_update", "scope": "team", "text": a},
        {"op": "memory_update", "scope": "team", "text": b},
    ]});
    let p = guild_tests::probe(&h, op).await;
    let steps = p.value.as_array().expect("steps");
    assert_eq!(steps[1]["value"]["stored"], json!(2), "{steps:?}");
    assert_eq!(steps[2]["value"]["stored"], json!(3), "{steps:?}");
}

//! A mutating call whose caller is dropped (here: the task timed out mid-call) still records
//! its outcome, and its idempotency key does not stay "in flight" afterwards.

use std::time::{Duration, Instant};

use guild_host::receipts::ReceiptStatus;
use guild_host::types::TaskStatus;
use guild_tests::{host, probe};
use serde_json::json;

const PLUGINS: &[&str] = &["testing/probe", "testing/echo"];
/// The task gives up after 1 s; the connector's own timeout (3 s) ends the call later.
const CONFIG: &str = r#"[dispatch]
task_timeout_s = 1
[grants.probe]
tools = ["echo.stall", "echo.create"]
[grants.echo]
limits = { timeout_s = 3 }"#;

/// Waits (bounded) until the task's only receipt is no longer `unknown`.
async fn settled(h: &guild_host::Host, task_id: &str) -> guild_host::receipts::Receipt {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let receipts = h.receipts(Some(task_id), 10).await.expect("receipts");
        assert_eq!(receipts.len(), 1, "one intent was committed: {receipts:?}");
        if receipts[0].status != ReceiptStatus::Unknown || Instant::now() > deadline {
            return receipts[0].clone();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_outliving_its_task_records_its_outcome_and_frees_its_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PLUGINS, CONFIG).await;
    let op = json!({"op": "tool", "name": "echo.stall", "input": {}, "key": "k-stall"});
    let first = probe(&h, op.clone()).await;
    assert_eq!(
        first.result.status,
        TaskStatus::TimedOut,
        "the task must be dropped mid-call: {:?}",
        first.result
    );
    let receipt = settled(&h, &first.result.task_id).await;
    assert_eq!(
        receipt.status,
        ReceiptStatus::Failed,
        "the call's outcome is recorded although its caller is gone: {receipt:?}"
    );
    assert!(
        receipt.error.as_deref().unwrap_or("").contains("timed out"),
        "{receipt:?}"
    );

    let retry = probe(&h, op).await;
    assert!(retry.ok, "a retry with the same key is answered: {retry:?}");
    let call = &retry.result.tool_calls[0];
    assert!(
        call.replayed,
        "the key replays the recorded outcome: {call:?}"
    );
    let replays: Vec<_> = retry
        .result
        .receipts
        .iter()
        .map(|r| (r.id.as_str(), r.replay_of.as_deref(), r.status))
        .collect();
    assert_eq!(
        replays,
        [(
            call.receipt_id.as_deref().unwrap_or("none"),
            Some(receipt.id.as_str()),
            ReceiptStatus::Failed
        )],
        "the replaying task has a replay entry of its own, and its call names it"
    );
    assert!(h.verify_receipts().await.expect("verify").ok);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_within_its_task_is_not_detached() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PLUGINS, CONFIG).await;
    let op = json!({"op": "tool", "name": "echo.create", "input": {"n": 1}, "key": "k-create"});
    let first = probe(&h, op.clone()).await;
    assert!(first.ok, "{first:?}");
    let receipts = &first.result.receipts;
    assert_eq!(receipts.len(), 1);
    assert_eq!(
        receipts[0].status,
        ReceiptStatus::Success,
        "the outcome is recorded before the task reads its receipts"
    );
}

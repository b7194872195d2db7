//! The report channel: any number of progress reports, never ending the run; denied unless
//! requested and granted.

use guild_host::types::TaskStatus;
use guild_tests::{host, probe};
use serde_json::json;

const PROBE: &[&str] = &["testing/probe", "testing/echo"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_are_kept_in_order_and_do_not_end_the_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, "[grants.probe]\nreport = true").await;
    let p = probe(
        &h,
        json!({"op": "reports", "texts": ["started", "half way", "almost"]}),
    )
    .await;
    assert!(p.ok, "{p:?}");
    assert_eq!(p.result.status, TaskStatus::Succeeded);
    let outputs: Vec<_> = p.result.reports.iter().map(|r| r.output.as_str()).collect();
    assert_eq!(outputs, ["started", "half way", "almost"]);
    let ids: Vec<_> = p
        .value
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    let kept: Vec<_> = p.result.reports.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, kept, "the ids the guest got are the ids the host kept");
    assert_eq!(
        p.result
            .reports
            .iter()
            .map(|r| r.sequence)
            .collect::<Vec<_>>(),
        [1, 2, 3]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_denied_without_grant() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, "").await;
    let p = probe(&h, json!({"op": "report", "text": "hello"})).await;
    assert!(!p.ok, "{p:?}");
    assert!(
        p.error.contains("denied") && p.error.contains("report"),
        "{}",
        p.error
    );
    assert!(p.result.reports.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_report_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, "[grants.probe]\nreport = true").await;
    let big = "x".repeat(guild_host::MAX_REPORT_BYTES + 1);
    let p = probe(&h, json!({"op": "report", "text": big})).await;
    assert!(!p.ok);
    assert!(p.error.contains("over the limit"), "{}", p.error);
}

//! Dispatch: batch ordering, queueing and isolation; task timeout; billable warning;
//! approvals in single tasks and in batches.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use futures::future::BoxFuture;
use guild_host::types::TaskStatus;
use guild_host::{ApprovalRequest, Approver, Host, TaskRequest};
use guild_tests::probe;
use serde_json::json;

use super::server;

async fn host_with(dir: &std::path::Path, dispatch: &str, grants: &str) -> Host {
    let extra = format!("[dispatch]\n{dispatch}\n\n{grants}");
    guild_tests::host_with_config(dir, &["testing/probe", "testing/echo"], &extra).await
}

fn req(op: serde_json::Value) -> TaskRequest {
    TaskRequest::new("probe", op.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_queues_beyond_concurrency_and_keeps_order() {
    let (addr, gauge) = server::start_with_gauge().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let grants = format!(
        "[grants.probe]\nhttp = [\"http://127.0.0.1:{}\"]",
        addr.port()
    );
    let h = host_with(
        dir.path(),
        "batch_concurrency = 2\nbatch_max_size = 8",
        &grants,
    )
    .await;
    gauge.hold_until.store(2, Ordering::SeqCst);
    let slow = json!({"op": "http", "url": format!("http://{addr}/slow")});
    let mut tasks: Vec<_> = (0..5).map(|_| req(slow.clone())).collect();
    tasks.push(req(json!({"op": "log", "text": "last"})));
    let items = h.session().batch(&tasks).await.expect("batch runs");
    assert_eq!(items.len(), 6);
    for (i, item) in items.iter().enumerate() {
        assert_eq!(item.index, i);
        let r = item.result.as_ref().expect("child started");
        assert_eq!(
            r.status,
            TaskStatus::Succeeded,
            "child {}: {:?}",
            i + 1,
            r.error
        );
    }
    let last = items[5].result.as_ref().expect("ok");
    assert!(
        last.report
            .as_ref()
            .is_some_and(|r| r.details.contains("last")),
        "results are in input order"
    );
    // Exactly 2: more breaks the limit, 1 means the batch ran one child at a time.
    let max = gauge.max.load(Ordering::SeqCst);
    assert_eq!(max, 2, "2 children run at once, never more; saw {max}");
    let text = guild_host::session::render_batch(&items, |r| format!("{:?}\n", r.status));
    assert!(
        text.starts_with("[task 0] probe")
            && text.contains("[task 5] probe")
            && !text.contains("[task 6]"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_child_failure_does_not_cancel_siblings() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host_with(dir.path(), "batch_concurrency = 3\ntask_timeout_s = 2", "").await;
    let tasks = vec![
        req(json!({"op": "trap"})),
        req(json!({"op": "loop"})),
        TaskRequest::new("nobody", "x"),
        req(json!({"op": "log", "text": "fine"})),
    ];
    let items = h.session().batch(&tasks).await.expect("batch runs");
    let status = |i: usize| items[i].result.as_ref().map(|r| r.status);
    assert_eq!(status(0), Ok(TaskStatus::Failed));
    assert_eq!(status(1), Ok(TaskStatus::TimedOut));
    assert!(
        items[2]
            .result
            .as_ref()
            .is_err_and(|e| e.contains("unknown specialist 'nobody'") && e.contains("probe"))
    );
    assert_eq!(status(3), Ok(TaskStatus::Succeeded));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_size_is_checked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host_with(dir.path(), "batch_max_size = 2", "").await;
    let s = h.session();
    let err = s.batch(&[]).await.expect_err("empty");
    assert!(err.to_string().contains("1 to 2"), "{err}");
    let three = vec![req(json!({"op": "log", "text": "x"})); 3];
    assert!(s.batch(&three).await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_timeout_tells_the_caller_to_reroute() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host_with(dir.path(), "task_timeout_s = 1", "").await;
    let p = probe(&h, json!({"op": "sleep", "ms": 20_000})).await;
    assert_eq!(p.result.status, TaskStatus::TimedOut);
    let e = p.result.error.unwrap_or_default();
    assert!(
        e.contains("timed out after 1 s") && e.contains("narrower scope"),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn billable_warning_appears_once_after_the_threshold() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host_with(dir.path(), "billable_threshold = 2", "").await;
    let s = h.session();
    let brief = json!({"op": "log", "text": "x"}).to_string();
    let mut warnings = Vec::new();
    for _ in 0..5 {
        warnings.push(s.task("probe", &brief).await.expect("runs").warning);
    }
    assert_eq!(
        warnings.iter().filter(|w| w.is_some()).count(),
        1,
        "{warnings:?}"
    );
    assert!(
        warnings[2]
            .as_deref()
            .is_some_and(|w| w.contains("wrap up")),
        "{warnings:?}"
    );
    // A new session counts from zero; threshold 0 turns it off.
    assert!(
        h.session()
            .task("probe", &brief)
            .await
            .expect("runs")
            .warning
            .is_none()
    );
    let off = host_with(dir.path(), "billable_threshold = 0", "").await;
    let s = off.session();
    for _ in 0..4 {
        assert!(
            s.task("probe", &brief)
                .await
                .expect("runs")
                .warning
                .is_none()
        );
    }
}

struct Answer(bool, Arc<std::sync::Mutex<Vec<ApprovalRequest>>>);

impl Approver for Answer {
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'static, bool> {
        self.1.lock().expect("lock").push(request);
        let yes = self.0;
        Box::pin(async move { yes })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_asked_in_single_task_and_refused_in_batch() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host_with(dir.path(), "", "[grants.probe]\ntools = [\"echo.guarded\"]").await;
    let op = json!({"op": "tool", "name": "echo.guarded", "input": {"to": "team"}}).to_string();

    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let yes = h
        .session()
        .with_approver(Arc::new(Answer(true, asked.clone())));
    let r = yes.task("probe", &op).await.expect("runs");
    assert!(
        r.report
            .as_ref()
            .is_some_and(|p| p.details.contains("\"ok\":true")),
        "{r:?}"
    );
    let seen = asked.lock().expect("lock").clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].tool, "echo.guarded");
    assert!(seen[0].input.contains("team"));

    let no = h
        .session()
        .with_approver(Arc::new(Answer(false, asked.clone())));
    let r = no.task("probe", &op).await.expect("runs");
    assert!(
        r.report
            .as_ref()
            .is_some_and(|p| p.details.contains("did not approve")),
        "{r:?}"
    );

    let none = h.session();
    let r = none.task("probe", &op).await.expect("runs");
    assert!(
        r.report
            .as_ref()
            .is_some_and(|p| p.details.contains("no approver")),
        "{r:?}"
    );

    let items = yes
        .batch(&[TaskRequest::new("probe", op.clone())])
        .await
        .expect("batch");
    let child = items[0].result.as_ref().expect("started");
    assert_eq!(child.status, TaskStatus::Failed);
    assert!(
        child
            .error
            .as_deref()
            .unwrap_or("")
            .contains("re-dispatch this task on its own"),
        "{child:?}"
    );
    assert_eq!(asked.lock().expect("lock").len(), 2, "a batch never asks");
}

#[test]
fn task_input_single_and_batch_are_mutually_exclusive() {
    use guild_host::TaskInput;
    let single =
        TaskInput::from_json(&json!({"subagent_type": "kb", "description": "x"})).expect("single");
    assert!(matches!(single, TaskInput::Single(_)));
    let batch =
        TaskInput::from_json(&json!({"tasks": [{"subagent_type": "kb", "description": "x"}]}))
            .expect("batch");
    assert!(matches!(batch, TaskInput::Batch(ref t) if t.len() == 1));
    let both =
        TaskInput::from_json(&json!({"subagent_type": "kb", "description": "x", "tasks": []}));
    assert!(both.is_err_and(|e| e.to_string().contains("mutually exclusive")));
    let neither = TaskInput::from_json(&json!({}));
    assert!(neither.is_err_and(|e| e.to_string().contains("missing input")));
    let typo = TaskInput::from_json(&json!({"subagent": "kb"}));
    assert!(typo.is_err_and(|e| e.to_string().contains("unknown field `subagent`")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aliases_route_to_their_target_and_the_roster_lists_the_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host_with(dir.path(), "", "").await;
    let r = h
        .task(
            "probe_legacy",
            &json!({"op": "log", "text": "x"}).to_string(),
        )
        .await
        .expect("alias routes");
    assert!(r.specialist.starts_with("probe@"));
    let roster = h.roster();
    assert_eq!(
        roster.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
        ["probe"]
    );
    assert_eq!(roster[0].aliases, ["probe_legacy"]);
    let input = guild_host::TaskInput::from_json(&json!({"subagent_type": "probe_legacy", "description": json!({"op": "log", "text": "y"}).to_string()})).expect("input");
    let items = h.session().dispatch(&input).await.expect("dispatch");
    assert_eq!(items.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wakeup_delivery_pushes_reports_and_quiet_keeps_them_for_check() {
    let dir = tempfile::tempdir().expect("tempdir");
    let brief = json!({"op": "reports", "texts": ["one", "two"]}).to_string();
    let wakeup = host_with(
        dir.path(),
        "delivery = \"wakeup\"",
        "[grants.probe]\nreport = true",
    )
    .await;
    let mut rx = wakeup.subscribe();
    let id = wakeup.start_task("probe", &brief).expect("starts");
    let mut pushed = Vec::new();
    while pushed.len() < 2 {
        let event = tokio::time::timeout(std::time::Duration::from_secs(10), rx.recv())
            .await
            .expect("a report is pushed")
            .expect("channel open");
        assert_eq!(event.task_id, id);
        pushed.push(event.report.output);
    }
    assert_eq!(pushed, ["one", "two"]);

    let dir = tempfile::tempdir().expect("tempdir");
    let quiet = host_with(
        dir.path(),
        "delivery = \"quiet\"",
        "[grants.probe]\nreport = true",
    )
    .await;
    let mut rx = quiet.subscribe();
    let id = quiet.start_task("probe", &brief).expect("starts");
    quiet.wait_task(&id).await.expect("finishes");
    assert!(rx.try_recv().is_err(), "quiet delivery pushes nothing");
    let texts: Vec<_> = quiet
        .check_task(&id)
        .expect("check")
        .new_reports
        .into_iter()
        .map(|r| r.output)
        .collect();
    assert_eq!(texts, ["one", "two"]);
}

//! Background tasks: start → check → result, reports kept across checks, update restarts with
//! the updates appended (same id), cancel, detach ("parent not live"), ownership: a second
//! host never disturbs a live owner's task, a gone owner's task becomes interrupted.

use std::time::Duration;

use guild_host::background::BackgroundStatus;
use guild_host::{Host, PARENT_GONE};
use serde_json::json;

async fn host_in(dir: &std::path::Path, dispatch: &str) -> Host {
    let extra = format!("[dispatch]\n{dispatch}\n\n[grants.probe]\nreport = true\n");
    guild_tests::host_with_config(dir, &["testing/probe", "testing/echo"], &extra).await
}

/// Polls (without moving the report cursor) until the task reaches `want`; bounded to 10 s.
async fn until(h: &Host, id: &str, want: BackgroundStatus) {
    let mut last = None;
    for _ in 0..200 {
        last = h
            .list_tasks(100)
            .expect("list")
            .into_iter()
            .find(|t| t.id == id)
            .map(|t| t.status);
        if last == Some(want) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("task {id} never became {want:?}; last {last:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_check_and_result_with_reports() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host_in(dir.path(), "").await;
    let brief = json!({"op": "reports", "texts": ["one", "two"], "pause_ms": 200}).to_string();
    let id = h.start_task("probe", &brief).expect("starts at once");
    until(&h, &id, BackgroundStatus::Running).await;
    let done = h.wait_task(&id).await.expect("finishes");
    assert_eq!(done.status, BackgroundStatus::Succeeded);
    let check = h.check_task(&id).expect("check");
    let texts: Vec<_> = check
        .new_reports
        .iter()
        .map(|r| r.output.as_str())
        .collect();
    assert_eq!(texts, ["one", "two"]);
    let result = check.task.result.expect("result when done");
    assert_eq!(result.task_id, id);
    assert_eq!(result.reports.len(), 2);
    // Reports are returned once: the next check has none new.
    assert!(h.check_task(&id).expect("check").new_reports.is_empty());
    assert!(h.list_tasks(10).expect("list").iter().any(|t| t.id == id));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_specialist_or_task_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host_in(dir.path(), "").await;
    let err = h.start_task("nobody", "x").expect_err("unknown");
    assert!(
        err.to_string().contains("unknown specialist 'nobody'"),
        "{err}"
    );
    let err = h.check_task("no-such-id").expect_err("unknown id");
    assert!(err.to_string().contains("no-such-id"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_ends_the_running_attempt() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host_in(dir.path(), "").await;
    let id = h
        .start_task("probe", &json!({"op": "loop"}).to_string())
        .expect("starts");
    until(&h, &id, BackgroundStatus::Running).await;
    h.cancel_task(&id).expect("cancels");
    assert_eq!(
        h.check_task(&id).expect("check").task.status,
        BackgroundStatus::Cancelled
    );
    let err = h.cancel_task(&id).expect_err("already cancelled");
    assert!(err.to_string().contains("Cancelled"), "{err}");
    // The host keeps serving.
    let r = h
        .task("probe", &json!({"op": "log", "text": "x"}).to_string())
        .await
        .expect("runs");
    assert!(r.report.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn update_restarts_with_updates_appended_same_id() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host_in(dir.path(), "").await;
    let id = h
        .start_task(
            "probe",
            &json!({"op": "brief", "delay_ms": 1500}).to_string(),
        )
        .expect("starts");
    until(&h, &id, BackgroundStatus::Running).await;
    assert_eq!(
        h.update_task(&id, "only the checkout module")
            .expect("updates"),
        2
    );
    let done = h.wait_task(&id).await.expect("finishes");
    assert_eq!(done.status, BackgroundStatus::Succeeded, "{done:?}");
    assert_eq!(done.attempt, 2);
    assert_eq!(done.updates, ["only the checkout module"]);
    let details = done
        .result
        .and_then(|r| r.report)
        .map(|r| r.details)
        .unwrap_or_default();
    assert!(
        details.contains("Update 1: only the checkout module"),
        "{details}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn detached_parent_makes_reports_fail_with_the_exact_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host_in(dir.path(), "").await;
    let brief =
        json!({"op": "reports", "texts": ["a", "b", "c", "d"], "pause_ms": 400}).to_string();
    let id = h.start_task("probe", &brief).expect("starts");
    until(&h, &id, BackgroundStatus::Running).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    h.detach_task(&id).expect("detaches");
    let done = h.wait_task(&id).await.expect("finishes");
    let result = done.result.expect("result");
    // The probe stops at the first refused report and says why.
    let said = format!("{:?} {:?}", result.error, result.report.map(|r| r.details));
    assert!(said.contains(PARENT_GONE), "{said}");
    assert!(
        !result.reports.is_empty() && result.reports.len() < 4,
        "{:?}",
        result.reports
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_host_leaves_a_live_owners_task_running() {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = host_in(dir.path(), "").await;
    let brief =
        json!({"op": "reports", "texts": ["one", "two", "three"], "delay_ms": 0, "pause_ms": 700})
            .to_string();
    let id = first.start_task("probe", &brief).expect("starts");
    until(&first, &id, BackgroundStatus::Running).await;
    // Another process (here: another host on the same data dir) opens the store while the
    // first one is running the task.
    let second = host_in(dir.path(), "").await;
    let seen = second
        .check_task(&id)
        .expect("the second host sees the task");
    assert_eq!(seen.task.status, BackgroundStatus::Running);
    let err = second
        .cancel_task(&id)
        .expect_err("not the second host's to cancel");
    assert!(err.to_string().contains("another host process"), "{err}");
    // The owner runs it to the end: every report made, the result recorded.
    let done = first.wait_task(&id).await.expect("finishes");
    assert_eq!(done.status, BackgroundStatus::Succeeded, "{done:?}");
    let reports = done.result.map(|r| r.reports.len()).unwrap_or_default();
    assert_eq!(reports, 3);
    assert_eq!(
        second.check_task(&id).expect("check").task.status,
        BackgroundStatus::Succeeded
    );
}

/// Makes a stored task `running` and owned by process `pid`, as that process would have.
pub(crate) fn owned_elsewhere(dir: &std::path::Path, id: &str, lease_ms: i64, pid: i64) {
    let db = dir.join(".guild").join(guild_host::background::TASKS_FILE);
    let conn = rusqlite::Connection::open(db).expect("raw open");
    conn.execute(
        "UPDATE tasks SET status = 'running', owner = 'gone-host', owner_pid = ?2, lease_ms = ?3
         WHERE id = ?1",
        rusqlite::params![id, pid, lease_ms],
    )
    .expect("owned elsewhere");
}

/// A process id that was just used and has exited (reaped).
pub(crate) fn dead_pid() -> i64 {
    let mut child = std::process::Command::new("true").spawn().expect("spawn");
    let pid = child.id();
    child.wait().expect("wait");
    i64::from(pid)
}

pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_owner_is_gone_is_interrupted_with_reports_kept() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (expired, live) = {
        let h = host_in(dir.path(), "").await;
        let brief =
            json!({"op": "reports", "texts": ["before the crash"], "pause_ms": 0}).to_string();
        let expired = h.start_task("probe", &brief).expect("starts");
        let live = h.start_task("probe", &brief).expect("starts");
        for id in [&expired, &live] {
            h.wait_task(id).await.expect("finishes");
        }
        (expired, live)
    };
    // The owner "crashed" mid-run: its process has exited (its lease is still ahead). The
    // other one's process runs, though its lease ran out long ago (it is stalled).
    owned_elsewhere(dir.path(), &expired, now_ms() + 60_000, dead_pid());
    owned_elsewhere(
        dir.path(),
        &live,
        now_ms() - 1_000_000,
        i64::from(std::process::id()),
    );
    let next = host_in(dir.path(), "").await;
    let check = next.check_task(&expired).expect("the task survived");
    assert_eq!(check.task.status, BackgroundStatus::Interrupted);
    let texts: Vec<_> = check
        .new_reports
        .iter()
        .map(|r| r.output.as_str())
        .collect();
    assert_eq!(texts, ["before the crash"]);
    assert_eq!(
        next.check_task(&live).expect("check").task.status,
        BackgroundStatus::Running,
        "a task whose owner's process runs is left alone, whatever its lease"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_pauses_a_background_task_until_the_caller_answers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let extra = "[grants.probe]\ntools = [\"echo.guarded\"]\n";
    let h =
        guild_tests::host_with_config(dir.path(), &["testing/probe", "testing/echo"], extra).await;
    let brief = json!({"op": "tool", "name": "echo.guarded", "input": {"to": "team"}}).to_string();
    for (approve, expect) in [(true, "\"ok\":true"), (false, "did not approve")] {
        let id = h.start_task("probe", &brief).expect("starts");
        let mut pending = None;
        for _ in 0..200 {
            pending = h.check_task(&id).expect("check").pending_approval;
            if pending.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let request = pending.expect("the task waits for approval");
        assert_eq!(request.tool, "echo.guarded");
        assert!(request.input.contains("team"));
        h.approve_task(&id, approve).expect("answered");
        let done = h.wait_task(&id).await.expect("finishes");
        let details = done
            .result
            .and_then(|r| r.report)
            .map(|r| r.details)
            .unwrap_or_default();
        assert!(details.contains(expect), "{approve}: {details}");
        let err = h.approve_task(&id, true).expect_err("nothing pending");
        assert!(err.to_string().contains("not waiting"), "{err}");
    }
}

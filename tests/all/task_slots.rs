//! The host-wide bound on running tasks (`[dispatch] max_running_tasks`) and its bounded queue
//! (`[dispatch] max_queued_tasks`): a task past both is refused as busy, naming the settings;
//! within them it waits and runs. Real probe components; a task is known to be running once
//! its first progress report arrived, so nothing here depends on timing.

use guild_host::{DispatchError, Host};
use guild_tests::host_with_config;
use serde_json::json;

const PLUGINS: &[&str] = &["testing/probe", "testing/echo"];

/// A probe task that reports, then sleeps long: running until its future is dropped.
fn sleeper() -> String {
    json!({"op": "seq", "ops": [
        {"op": "report", "text": "started"},
        {"op": "sleep", "ms": 600_000},
    ]})
    .to_string()
}

/// Starts the sleeper and returns once it runs; dropping the handle cancels it.
async fn running_sleeper(h: &Host) -> tokio::task::JoinHandle<()> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let session = h.session();
    let handle = tokio::spawn(async move {
        let _ = session.task_with_reports("probe", &sleeper(), tx).await;
    });
    rx.recv().await.expect("the sleeper reports once it runs");
    handle
}

fn config(running: usize, queued: usize) -> String {
    format!(
        "[grants.probe]\nreport = true\n\n[dispatch]\nmax_running_tasks = {running}\nmax_queued_tasks = {queued}\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_past_the_running_slots_and_a_full_queue_is_refused_as_busy() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host_with_config(dir.path(), PLUGINS, &config(1, 0)).await;
    let first = running_sleeper(&h).await;
    let err = h
        .task("probe", &json!({"op": "log", "text": "hi"}).to_string())
        .await
        .expect_err("no slot and no queue");
    assert!(matches!(err, DispatchError::Busy { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("[dispatch] max_running_tasks") && text.contains("max_queued_tasks"),
        "{text}"
    );
    first.abort();
    let _ = first.await;
    // The slot came back with the cancelled task.
    let again = guild_tests::probe(&h, json!({"op": "log", "text": "hi"})).await;
    assert!(again.ok, "{again:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_within_the_queue_waits_for_a_slot_and_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host_with_config(dir.path(), PLUGINS, &config(1, 1)).await;
    let first = running_sleeper(&h).await;
    let waiting = tokio::spawn({
        let h = h.clone();
        async move { guild_tests::probe(&h, json!({"op": "log", "text": "hi"})).await }
    });
    while h.task_load() != (1, 1) {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    first.abort();
    let _ = first.await;
    let p = waiting.await.expect("joined");
    assert!(p.ok, "{p:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_slot_settings_out_of_range_are_refused_with_their_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (text, key) in [
        (config(0, 1), "max_running_tasks"),
        (config(1, 1_000_000), "max_queued_tasks"),
    ] {
        let err = guild_host::Config::parse(&text, &dir.path().join("guild.toml"), dir.path())
            .expect_err("out of range");
        assert!(err.to_string().contains(key), "{err}");
    }
}

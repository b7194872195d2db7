//! A task's wait for plugins a lazy start has not compiled yet (docs/architecture.md, "Eager
//! or lazy"): the specialist, the connectors of its granted tools and `[requires]`, and its
//! skill loaders move to the front of the loader's queue, and the task waits for them within
//! its own time. A wait that runs out of time ends the task `timed_out` before any instance
//! starts, as any task whose time runs out.

use std::time::{Duration, Instant};

use super::{Services, TaskOptions};
use crate::types::{TaskResult, TaskStatus};

/// Waits for the plugins a task on `name` needs that are still queued; returns their names
/// (none when nothing was queued), or the task's `timed_out` result when its time ran out.
pub(super) async fn ready(
    services: &Services,
    name: &str,
    options: &TaskOptions,
) -> Result<Vec<String>, Box<TaskResult>> {
    let waiting = Instant::now();
    let until = wait_until(services, options);
    services
        .deferred
        .ready_for(&services.snapshot(), name, until)
        .await
        .map_err(|still| {
            Box::new(timed_out_loading(
                name,
                &still,
                options.task_id.clone(),
                waiting,
            ))
        })
}

/// When the wait of a task for its plugins ends: its own time budget (`[dispatch]
/// task_timeout_s`, none when 0) and a child's deadline, whichever comes first.
fn wait_until(services: &Services, options: &TaskOptions) -> Option<tokio::time::Instant> {
    let budget = services.config.dispatch.task_timeout_s;
    let own =
        (budget > 0).then(|| tokio::time::Instant::now() + Duration::from_secs(u64::from(budget)));
    match (own, options.deadline) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The result of a task whose time ran out while the plugins it needs still compiled (a lazy
/// first start): `timed_out`, as any task whose time runs out, with no instance started.
fn timed_out_loading(
    name: &str,
    still: &[String],
    task_id: Option<String>,
    waiting: Instant,
) -> TaskResult {
    tracing::warn!(
        specialist = name,
        "a task's time ran out while {} still loaded",
        still.join(", ")
    );
    let mut result = TaskResult::not_started(
        task_id.unwrap_or_else(|| uuid::Uuid::now_v7().to_string()),
        name.to_owned(),
        TaskStatus::TimedOut,
        Some(format!(
            "specialist '{name}' timed out before it started: {} still loaded (compiling on a \
             first start); try again shortly",
            still.join(", ")
        )),
    );
    result.usage.wall_ms = waiting.elapsed().as_millis() as u64;
    result
}

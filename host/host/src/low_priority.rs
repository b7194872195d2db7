//! Work that must not take the cores tasks run on: a reload's loading (reading and hashing
//! components, linking, the `describe()` and `tools()` instances of what changed) runs on a
//! thread of its own at a lower scheduling priority, with a single-threaded runtime of its own,
//! so that under load the tasks running beside it keep their share of the machine and the
//! reload takes longer instead (docs/performance.md, "guild serve: MCP round trips and
//! reload"). Threads it starts (its blocking pool) inherit the priority.

use std::future::Future;

/// Runs the future `work` makes on a new low-priority thread and waits for its output; `None`
/// when no such thread or runtime could be made (the caller then does the work itself).
pub(crate) async fn run<T, Fut>(
    name: &str,
    work: impl FnOnce() -> Fut + Send + 'static,
) -> Option<T>
where
    Fut: Future<Output = T>,
    T: Send + 'static,
{
    let (tx, rx) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            guild_runtime::engine::lower_priority();
            match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => {
                    let _ = tx.send(runtime.block_on(work()));
                }
                Err(e) => tracing::warn!("no runtime for low-priority work: {e}"),
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("no thread for low-priority work: {e}");
        return None;
    }
    rx.await.ok()
}

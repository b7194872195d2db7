//! Compiling in the background: the optimized compile of a component already serving baseline
//! code must not take the cores its tasks run on. It runs on its own Rayon pool (wasmtime's
//! parallel compilation uses the pool it is called from) of one thread fewer than the machine
//! has cores, at least one, each at a lower scheduling priority; a compile helper child gets the
//! same thread count and priority ([`active`] tells the helper).

use std::cell::Cell;

/// The nice value of background compile threads (0 is normal, 19 the lowest priority).
pub(crate) const NICE: i32 = 10;

thread_local! {
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
}

/// Threads a background compile uses: one fewer than the cores, at least one.
pub(crate) fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1).max(1))
}

/// Whether the calling thread runs a background compile.
pub(super) fn active() -> bool {
    ACTIVE.with(Cell::get)
}

/// Lowers the calling thread's scheduling priority to [`NICE`] (on Linux the nice value is a
/// thread's own; threads it starts inherit it). Best effort: a refusal leaves it unchanged.
pub fn lower_priority() {
    #[cfg(unix)]
    if let Err(e) = rustix::process::setpriority_process(None, NICE) {
        tracing::debug!("cannot lower the priority of a background compile: {e}");
    }
}

/// Runs `compile` on a pool of [`threads`] low-priority threads.
pub(super) fn run<T: Send>(compile: impl FnOnce() -> T + Send) -> T {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads())
        .thread_name(|i| format!("guild-optimize-{i}"))
        .start_handler(|_| lower_priority())
        .build();
    match pool {
        Ok(pool) => pool.install(|| {
            ACTIVE.with(|a| a.set(true));
            let result = compile();
            ACTIVE.with(|a| a.set(false));
            result
        }),
        Err(e) => {
            tracing::warn!("no thread pool for a background compile ({e}); compiling here");
            compile()
        }
    }
}

//! The second tier of a first start: every plugin a load left on baseline (Winch) code is
//! compiled again with Cranelift in the background ([`guild_runtime::Runtime::optimize`], one
//! at a time at a lower priority) and its optimized version is swapped in like a reload: tasks
//! already running finish on the baseline code, new tasks get the optimized code. Nothing is
//! audited: the plugin's version, component digest and grant stay what they were.
//!
//! A reload while an optimized compile runs is fine: the swap happens only while the version
//! it was compiled for still serves, and the reload's own pass finds the optimized code in the
//! engine's memory cache instead of compiling it again.

use std::sync::Arc;
use std::time::Instant;

use guild_runtime::{Compiler, Plugin};

use crate::dispatch::Services;
use crate::registry::{LoadedPlugin, Snapshot};
use crate::reload::Reloader;

/// Starts an optimized compile for every plugin of the current set that runs baseline code.
///
/// A compile holds only the engine: the host's services and reloader are held weakly, so a
/// host dropped while its plugins still compile closes its stores at once (a one-shot command
/// does not keep the ledger open for a compile whose result nobody will use).
pub(crate) fn optimize_in_background(services: &Arc<Services>, reloader: &Arc<Reloader>) {
    let snapshot = services.snapshot();
    let baseline = snapshot
        .plugins
        .values()
        .filter(|p| p.runtime.compiler() == Compiler::Baseline)
        .cloned()
        .collect();
    optimize(services, reloader, baseline);
}

/// Starts an optimized compile for each of `plugins` (a plugin the background loader just
/// added on baseline code). Compiles queue on the engine's optimizer lock, one at a time, and
/// one of the same bytes compiled before is found in the engine's memory cache.
pub(crate) fn optimize(
    services: &Arc<Services>,
    reloader: &Arc<Reloader>,
    plugins: Vec<Arc<LoadedPlugin>>,
) {
    for plugin in plugins {
        let runtime = services.runtime.clone();
        let (services, reloader) = (Arc::downgrade(services), Arc::downgrade(reloader));
        tokio::spawn(async move {
            let started = Instant::now();
            match runtime.optimize(&plugin.runtime).await {
                Ok(Some(optimized)) => {
                    let (Some(services), Some(reloader)) = (services.upgrade(), reloader.upgrade())
                    else {
                        return;
                    };
                    if swap_in(&services, &reloader, &plugin, optimized).await {
                        tracing::info!(
                            "{} optimized in {:.1} s (new tasks run Cranelift code)",
                            plugin.name,
                            started.elapsed().as_secs_f64()
                        );
                    }
                }
                Ok(None) => {}
                Err(e) => tracing::warn!(
                    plugin = %plugin.ident,
                    "optimized compile failed; the plugin keeps running baseline code: {e}"
                ),
            }
        });
    }
}

/// Makes `optimized` the code of `baseline`'s plugin if `baseline` still serves; says whether
/// it did.
async fn swap_in(
    services: &Services,
    reloader: &Reloader,
    baseline: &Arc<LoadedPlugin>,
    optimized: Plugin,
) -> bool {
    let _no_reload_meanwhile = reloader.exclusive().await;
    let current = services.snapshot();
    let serving = current.plugins.get(&*baseline.name);
    if !serving.is_some_and(|s| Arc::ptr_eq(s, baseline)) {
        return false;
    }
    services.registry.swap(replacing(
        &current,
        Arc::new(baseline.with_runtime(optimized)),
    ));
    true
}

/// `snapshot` with `plugin` in place of the plugin of the same name.
fn replacing(snapshot: &Snapshot, plugin: Arc<LoadedPlugin>) -> Snapshot {
    let mut plugins = snapshot.plugins.clone();
    plugins.insert(plugin.name.to_string(), plugin);
    Snapshot {
        plugins,
        aliases: snapshot.aliases.clone(),
        errors: snapshot.errors.clone(),
        warnings: snapshot.warnings.clone(),
        kept: snapshot.kept.clone(),
    }
}

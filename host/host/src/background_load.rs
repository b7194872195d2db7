//! The background loader of a lazy start: compiles the plugins the queue (`deferred`) holds,
//! one at a time (wasmtime compiles one component's functions in parallel on its own threads),
//! and adds each to the plugin set as soon as it is ready, under the reloader's exclusive lock
//! as the optimized-code swap does (`tiering`): a reload never runs between the check that the
//! plugin is still wanted and its swap. Each addition is audited like a reload's, and a plugin
//! on baseline code gets its optimized compile in the background.
//!
//! The loader holds the host's services and reloader weakly while it compiles, so a host
//! dropped meanwhile closes its stores at once; it ends when the queue is empty and is started
//! again by the next load that queues something.

use std::sync::Arc;

use guild_runtime::Compiler;

use crate::dispatch::Services;
use crate::reload::{ReloadReport, Reloader};

/// Starts the loader unless one runs or nothing is queued.
pub(crate) fn start(services: &Arc<Services>, reloader: &Arc<Reloader>) {
    if !services.deferred.claim_loader() {
        return;
    }
    let deferred = services.deferred.clone();
    let runtime = services.runtime.clone();
    let (services, reloader) = (Arc::downgrade(services), Arc::downgrade(reloader));
    tokio::spawn(async move {
        loop {
            let gate = deferred.gate();
            let held = gate.lock().await;
            let Some(take) = deferred.take() else {
                return;
            };
            drop(held);
            let (name, size) = (take.queued.name.clone(), take.queued.size);
            let (n, of) = take.position;
            tracing::info!(
                "compiling {name} ({:.1} MB), {n} of {of} queued",
                size as f64 / 1e6
            );
            let loaded = crate::plugin_load::finish(&runtime, take.staged).await;
            let (Some(services), Some(reloader)) = (services.upgrade(), reloader.upgrade()) else {
                return;
            };
            let _no_reload_meanwhile = reloader.exclusive().await;
            let (wanted, last) = deferred.still_wanted(take.take);
            if !wanted {
                tracing::info!("{name} compiled, but a reload changed or removed it: dropped");
                deferred.done(take.take, None);
                continue;
            }
            let error = loaded.as_ref().err().map(ToString::to_string);
            let loaded = loaded.map(Arc::new).map_err(|e| e.to_string());
            let plugin = loaded.as_ref().ok().cloned();
            let old = services.snapshot();
            let config = reloader.plugin_config();
            let new = old.with_plugin(loaded, last, &config.file);
            crate::reload::audit(&services, &old, &new, &mut ReloadReport::default()).await;
            let added = plugin.filter(|p| {
                new.plugins
                    .get(&*p.name)
                    .is_some_and(|serving| Arc::ptr_eq(serving, p))
            });
            services.registry.swap(new);
            deferred.done(take.take, error.clone());
            match (&added, error) {
                (Some(_), _) => tracing::info!(
                    "{name} usable in {:.1} s",
                    take.since.elapsed().as_secs_f64()
                ),
                (None, Some(e)) => tracing::warn!("{e}"),
                (None, None) => {}
            }
            drop(_no_reload_meanwhile);
            if let Some(plugin) = added
                && plugin.runtime.compiler() == Compiler::Baseline
            {
                crate::tiering::optimize(&services, &reloader, vec![plugin]);
            }
        }
    });
}

//! Taking up retryable tasks whose host died (on a shared store; docs/postgres.md). While the
//! host runs, a loop asks the store every watch interval for orphaned tasks of the specialists
//! this host has loaded and runs the attempt each was released for, from its stored brief and
//! updates, exactly as an update's new attempt runs. The store decides who takes which task
//! (one host each); the loop holds the manager weakly, so it ends with the host.

use std::sync::{Arc, Weak};

use guild_core::manifest::PluginKind;

use super::{Background, brief_of};

/// Starts the loop for `manager`, if its store is shared with other hosts.
pub(crate) fn take_up_in_background(manager: &Arc<Background>) {
    let Some(every) = manager.store.watch_interval() else {
        return;
    };
    let manager: Weak<Background> = Arc::downgrade(manager);
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let Some(manager) = manager.upgrade() else {
                return;
            };
            take_up(&manager).await;
        }
    });
}

/// One look: claims what this host can run and starts each claimed attempt.
async fn take_up(manager: &Background) {
    let specialists: Vec<String> = manager
        .services
        .snapshot()
        .plugins
        .values()
        .filter(|p| p.manifest.plugin.kind == PluginKind::Specialist)
        .map(|p| p.name.to_string())
        .collect();
    if specialists.is_empty() {
        return;
    }
    let store = manager.store.clone();
    let claimed = tokio::task::spawn_blocking(move || store.claim_orphans(&specialists)).await;
    let tasks = match claimed {
        Ok(Ok(tasks)) => tasks,
        Ok(Err(e)) => {
            tracing::warn!("looking for orphaned background tasks failed: {e}");
            return;
        }
        Err(e) => {
            tracing::warn!("looking for orphaned background tasks failed: {e}");
            return;
        }
    };
    for task in tasks {
        tracing::info!(
            task_id = %task.id,
            specialist = %task.specialist,
            attempt = task.attempt,
            "taking up a retryable background task whose host is gone"
        );
        let brief = brief_of(&task.description, &task.updates);
        manager.spawn(&task.id, task.attempt, &task.specialist, brief);
    }
}

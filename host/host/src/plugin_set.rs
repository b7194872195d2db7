//! The plugin set a host shows the other hosts on a shared database, and what it does when one
//! of them runs a plugin of the same name with other code (docs/postgres.md#joining).
//!
//! - **At start** ([`join_at_start`]), before the first load writes anything to the shared
//!   database, the host hashes what its configured plugin folders hold (component, `plugin.toml`,
//!   `prompt.md`; nothing is compiled) and joins with that set: a mismatch refuses the start,
//!   unless `[store] allow_plugin_mismatch = true`, which logs a warning per plugin instead.
//! - **On reload** ([`rejoin`]), the loaded set is compared again before it is swapped in. A
//!   plugin whose new version would differ from a live host's is refused like any failed load:
//!   the version that served before keeps serving (a plugin that was not loaded stays out), and
//!   the reload's errors say why. The set that is swapped in is then recorded for the hosts that
//!   join later. With `allow_plugin_mismatch` the new version is swapped in with a warning.
//!
//! So a fleet changes a plugin's code by restarting its hosts on the new version together, or
//! rolls it out host by host with `allow_plugin_mismatch` set for the time of the rollout.

use std::sync::Arc;

use guild_core::config::Config;
use guild_core::manifest::Manifest;
use guild_pg::{Mismatch, PgError, PgTaskStore, PluginDigest, PluginSet};
use guild_runtime::ComponentFile;

use crate::registry::{self, Snapshot};
use crate::stores::StoreOpenError;

/// The set the configured plugin folders hold now (blocking: it reads and hashes components). A
/// folder that cannot be read is left out: its load fails and is reported as usual; of two
/// folders with one name the first counts, as at load.
fn from_folders(config: &Config) -> PluginSet {
    let mut set = PluginSet::new();
    for dir in config.plugin_folders().unwrap_or_default() {
        let Ok((manifest, text)) = Manifest::load_with_text(&dir) else {
            continue;
        };
        let Ok(definition) = guild_core::definition::Definition::load(&manifest) else {
            continue;
        };
        let Some(component) = manifest
            .component_file()
            .ok()
            .and_then(|path| ComponentFile::read(&path).ok())
        else {
            continue;
        };
        set.entry(manifest.name().to_owned())
            .or_insert_with(|| PluginDigest {
                component: component.sha256(),
                definition: registry::definition_sha256(&text, definition.prompt.as_deref()),
            });
    }
    set
}

/// The set of a loaded snapshot.
fn from_snapshot(snapshot: &Snapshot) -> PluginSet {
    snapshot
        .plugins
        .iter()
        .map(|(name, p)| {
            (
                name.clone(),
                PluginDigest {
                    component: p.runtime.sha256().to_owned(),
                    definition: p.definition_sha256(),
                },
            )
        })
        .collect()
}

fn warn(mismatches: &[Mismatch]) {
    for m in mismatches {
        tracing::warn!(plugin = %m.plugin, other_host = %m.host, "{m} (allowed by [store] allow_plugin_mismatch)");
    }
}

/// Joins the hosts on the shared database with the plugins `config`'s folders hold; refuses the
/// start on a mismatch unless `[store] allow_plugin_mismatch` (see the module docs).
pub(crate) async fn join_at_start(
    store: Arc<PgTaskStore>,
    config: &Config,
) -> Result<(), StoreOpenError> {
    let (folders_of, allow) = (config.clone(), config.store.allow_plugin_mismatch);
    let joined = tokio::task::spawn_blocking(move || store.join(&from_folders(&folders_of), allow))
        .await
        .unwrap_or_else(|e| {
            Err(PgError::Thread(std::io::Error::other(format!(
                "the plugin check stopped: {e}"
            ))))
        });
    match joined {
        Ok(mismatches) => {
            warn(&mismatches);
            Ok(())
        }
        Err(source) => Err(StoreOpenError::Postgres {
            file: config.file.clone(),
            source,
        }),
    }
}

/// Compares a reloaded `snapshot` with the live hosts and records what is swapped in; a plugin
/// whose new version mismatches goes back to its version in `old` (see the module docs).
pub(crate) async fn rejoin(
    store: Arc<PgTaskStore>,
    allow: bool,
    mut snapshot: Snapshot,
    old: &Snapshot,
) -> Snapshot {
    // Each refused round takes at least one plugin back, so this ends; the bound is a guard.
    for _ in 0..=snapshot.plugins.len() {
        let set = from_snapshot(&snapshot);
        let s = store.clone();
        let joined = tokio::task::spawn_blocking(move || s.join(&set, allow)).await;
        let refused = match joined {
            Ok(Ok(mismatches)) => {
                warn(&mismatches);
                return snapshot;
            }
            Ok(Err(PgError::PluginMismatch { mismatches, .. })) => mismatches
                .into_iter()
                .map(|m| (m.plugin.clone(), m.to_string()))
                .collect::<Vec<_>>(),
            // The check could not run: no changed code is swapped in unchecked.
            Ok(Err(e)) => changed(
                &snapshot,
                old,
                &format!("its check against the other hosts failed: {e}"),
            ),
            Err(e) => changed(
                &snapshot,
                old,
                &format!("its check against the other hosts stopped: {e}"),
            ),
        };
        if refused.is_empty() {
            return snapshot;
        }
        for (name, why) in refused {
            if !snapshot.plugins.contains_key(&name) {
                continue;
            }
            // The version that served before, unless that is the one refused now.
            let before = old.plugins.get(&name).filter(|b| {
                !snapshot
                    .plugins
                    .get(&name)
                    .is_some_and(|p| Arc::ptr_eq(p, b))
            });
            snapshot.errors.push(match before {
                Some(b) => format!(
                    "{why}: the new version was refused; {} keeps serving",
                    b.ident
                ),
                None => format!("{why}: not serving"),
            });
            registry::replace(&mut snapshot, &name, before);
        }
    }
    snapshot
}

/// The plugins of `snapshot` whose digests differ from their version in `old`, with `why`.
fn changed(snapshot: &Snapshot, old: &Snapshot, why: &str) -> Vec<(String, String)> {
    let before = from_snapshot(old);
    from_snapshot(snapshot)
        .into_iter()
        .filter(|(name, digest)| before.get(name) != Some(digest))
        .map(|(name, _)| (name.clone(), format!("plugin '{name}': {why}")))
        .collect()
}

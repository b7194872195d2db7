//! Reload: load the configured plugins again off the request path, then swap the whole set in
//! at once. A plugin whose files and grant did not change is kept as it is (the registry's
//! `plugin_load`), so a reload costs what changed, not what is loaded. Tasks already running hold the snapshot they started with, so they finish on their
//! version; new tasks get the new one. A plugin whose new version fails any step keeps its old
//! version serving (the registry does that); a removed plugin stops taking new tasks. Every
//! swap is audited in the receipts chain: `plugin_loaded`, `plugin_unloaded` and
//! `grant_changed`, each naming versions and component digests.
//!
//! [`Reloader`] keeps what lives between reloads (the plugin configuration in force, the lock
//! that serialises them); it works on the dispatch [`Services`] the host passes in.

use std::collections::BTreeSet;
use std::sync::{Arc, RwLock};

use serde::Serialize;

use guild_core::capability::{CapabilityRow, RowStatus};
use guild_core::config::Config;
use guild_receipts::{AuditKind, LedgerStore};

use crate::dispatch::Services;
use crate::low_priority::LowPriority;
use crate::registry::{self, Snapshot};

/// What one reload did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReloadReport {
    /// One line per plugin that failed (with "keeps serving" when its old version stayed).
    pub errors: Vec<String>,
    /// `name@version (sha256 …)` of every version newly serving.
    pub loaded: Vec<String>,
    /// `name@version` of every plugin that stopped taking new tasks.
    pub unloaded: Vec<String>,
    /// `name@version` of every plugin kept as it was: component, `plugin.toml`, `prompt.md` and
    /// effective grant unchanged, so nothing of it was compiled, linked or run again.
    pub kept: Vec<String>,
    /// `name@version: what changed` for every plugin whose effective grant changed.
    pub grant_changes: Vec<String>,
    /// Whether the roster (names, versions, descriptions) differs from before.
    pub roster_changed: bool,
    /// Names of the plugins a lazy start's first load left to the background loader (no cache
    /// holds their code); each is added to the set, and audited, when it is ready.
    pub queued: Vec<String>,
}

impl ReloadReport {
    /// Whether anything was swapped.
    pub fn changed(&self) -> bool {
        !self.loaded.is_empty() || !self.unloaded.is_empty() || !self.grant_changes.is_empty()
    }

    /// The report as a person reads it, one line per fact.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for l in &self.loaded {
            out.push_str(&format!("loaded {l}\n"));
        }
        for u in &self.unloaded {
            out.push_str(&format!("unloaded {u}\n"));
        }
        for g in &self.grant_changes {
            out.push_str(&format!("grant changed {g}\n"));
        }
        for q in &self.queued {
            out.push_str(&format!("loading {q} (compiling in the background)\n"));
        }
        for e in &self.errors {
            out.push_str(&format!("error: {e}\n"));
        }
        if out.is_empty() {
            out.push_str("no change\n");
        }
        out
    }
}

/// What lives between reloads.
pub(crate) struct Reloader {
    /// The configuration the current plugin set was loaded with (plugin folders and grants);
    /// a reload may bring a newer one. Every other setting keeps its value from the start.
    plugin_config: RwLock<Arc<Config>>,
    /// Serialises reloads: one loads and swaps at a time.
    reloading: tokio::sync::Mutex<()>,
    /// On a shared database: the store this host joined through, and `[store]
    /// allow_plugin_mismatch`. Each reload's set is compared and recorded there before the swap.
    shared: Option<(Arc<guild_pg::PgTaskStore>, bool)>,
    /// The low-priority thread later reloads load on (started by the first of them).
    off_workers: LowPriority,
}

impl Reloader {
    /// Reloads start from `config`'s plugin folders and grants; `shared` is the task store of a
    /// shared database, whose hosts see each reloaded set (docs/postgres.md#joining).
    pub(crate) fn new(config: Arc<Config>, shared: Option<Arc<guild_pg::PgTaskStore>>) -> Self {
        let allow = config.store.allow_plugin_mismatch;
        Self {
            plugin_config: RwLock::new(config),
            reloading: tokio::sync::Mutex::new(()),
            shared: shared.map(|store| (store, allow)),
            off_workers: LowPriority::new("guild-reload"),
        }
    }

    /// The plugin folders and grants in force.
    pub(crate) fn plugin_config(&self) -> Arc<Config> {
        // A poisoned lock means a panic while swapping an `Arc`: the old value is still whole.
        self.plugin_config
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn set_plugin_config(&self, config: Arc<Config>) {
        *self
            .plugin_config
            .write()
            .unwrap_or_else(|p| p.into_inner()) = config;
    }

    /// Holds off reloads until the guard drops (a swap of one plugin's code runs under it).
    pub(crate) async fn exclusive(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.reloading.lock().await
    }

    /// Reloads the plugin set of `services`; see `Host::reload_with`.
    pub(crate) async fn reload(&self, services: &Services, config: Option<Config>) -> ReloadReport {
        let _one_at_a_time = self.reloading.lock().await;
        let config = match config {
            Some(c) => Arc::new(c),
            None => self.plugin_config(),
        };
        let old = services.snapshot();
        // A lazy first load defers every new plugin whose code is not cached; a later reload
        // compiles new plugins itself and leaves queued ones (the same version) to the loader.
        // On a shared database every host compares whole sets: nothing is deferred there.
        let deferred = services.deferred.clone();
        let first = services.deferred.take_first_load();
        let defer_all = first && self.shared.is_none();
        let load = {
            let (runtime, skills) = (services.runtime.clone(), services.skills.clone());
            let (config, old) = (config.clone(), old.clone());
            move || async move {
                registry::load_all(&runtime, &skills, &config, &old, |s| {
                    defer_all || deferred.holds(&s.version())
                })
                .await
            }
        };
        // A later reload loads off the tasks' workers, at a lower priority
        // (src/low_priority.rs); the first load at start has no tasks to make room for.
        let off_workers = match first {
            true => None,
            false => self.off_workers.run(load.clone()).await,
        };
        let (mut snapshot, staged) = match off_workers {
            Some(loaded) => loaded,
            None => load().await,
        };
        if let Some((store, allow)) = &self.shared {
            snapshot = crate::plugin_set::rejoin(store.clone(), *allow, snapshot, &old).await;
        }
        let mut report = ReloadReport {
            errors: snapshot.errors.clone(),
            kept: snapshot
                .kept
                .iter()
                .filter_map(|name| snapshot.plugins.get(name))
                .map(|p| p.ident.to_string())
                .collect(),
            // Plugins a later reload leaves queued were queued before: no change of its own.
            queued: match defer_all {
                true => staged.iter().map(|s| s.name().to_owned()).collect(),
                false => Vec::new(),
            },
            roster_changed: old.roster() != snapshot.roster(),
            ..ReloadReport::default()
        };
        audit(services, &old, &snapshot, &mut report).await;
        services.registry.swap(snapshot);
        if services.deferred.is_lazy() {
            services.deferred.replace(staged);
        }
        self.set_plugin_config(config);
        report
    }
}

/// Writes the audit entries of the change from `old` to `new` (plugins loaded, replaced and
/// unloaded, grants changed, grants widened since the last run) and notes them in `report`.
pub(crate) async fn audit(
    services: &Services,
    old: &Snapshot,
    new: &Snapshot,
    report: &mut ReloadReport,
) {
    let mut audit = loaded_and_regranted(old, new, report);
    audit.extend(unloaded(old, new, report));
    let first_seen = first_seen(old, new);
    if audit.is_empty() && first_seen.is_empty() {
        // Nothing to record (a reload that changed nothing): no trip to a blocking thread.
        return;
    }
    let ledger = services.ledger.clone();
    let audited = tokio::task::spawn_blocking(move || record(&*ledger, first_seen, audit)).await;
    if let Ok(Err(e)) = audited {
        tracing::error!("failed to audit plugin changes: {e}");
    }
}

/// One audit entry: kind, `name@version`, detail.
type Audit = (AuditKind, String, String);

/// Plugins loaded or replaced, and grants that changed, into `report`; their audit entries.
fn loaded_and_regranted(old: &Snapshot, new: &Snapshot, report: &mut ReloadReport) -> Vec<Audit> {
    let mut audit = Vec::new();
    for p in new.plugins.values() {
        let before = old.plugins.get(&*p.name);
        let digest = grants_digest(&p.rows);
        if before.is_none_or(|o| o.runtime.sha256() != p.runtime.sha256() || o.ident != p.ident) {
            let detail = match before {
                Some(o) => format!(
                    "component sha256 {} (replaces {} sha256 {}); {GRANTS_DIGEST}{digest}",
                    p.runtime.sha256(),
                    o.ident,
                    o.runtime.sha256()
                ),
                None => format!(
                    "component sha256 {}; {GRANTS_DIGEST}{digest}",
                    p.runtime.sha256()
                ),
            };
            report
                .loaded
                .push(format!("{} (sha256 {})", p.ident, p.runtime.sha256()));
            audit.push((AuditKind::PluginLoaded, p.ident.to_string(), detail));
        }
        if let Some(change) = before.and_then(|b| grant_change(&b.rows, &p.rows)) {
            report.grant_changes.push(format!("{}: {change}", p.ident));
            audit.push((
                AuditKind::GrantChanged,
                p.ident.to_string(),
                format!("{change}; {GRANTS_DIGEST}{digest}"),
            ));
        }
    }
    audit
}

/// Plugins the new set no longer has, into `report`; their audit entries.
fn unloaded(old: &Snapshot, new: &Snapshot, report: &mut ReloadReport) -> Vec<Audit> {
    let mut audit = Vec::new();
    for p in old.plugins.values() {
        if !new.plugins.contains_key(&*p.name) {
            report.unloaded.push(p.ident.to_string());
            audit.push((
                AuditKind::PluginUnloaded,
                p.ident.to_string(),
                format!(
                    "no longer configured or no longer loadable (sha256 {})",
                    p.runtime.sha256()
                ),
            ));
        }
    }
    audit
}

/// Plugins seen for the first time by this process: (name, ident, grants digest, granted list).
/// Their grant is compared with the one the ledger recorded when they last loaded (in an
/// earlier run), so a grant widened while the host was stopped is audited too.
fn first_seen(old: &Snapshot, new: &Snapshot) -> Vec<(String, String, String, String)> {
    new.plugins
        .values()
        .filter(|p| !old.plugins.contains_key(&*p.name))
        .map(|p| {
            (
                p.name.to_string(),
                p.ident.to_string(),
                grants_digest(&p.rows),
                granted_list(&p.rows),
            )
        })
        .collect()
}

/// Writes the audit entries: grants widened since the last run first, then this reload's.
fn record(
    ledger: &dyn LedgerStore,
    first_seen: Vec<(String, String, String, String)>,
    audit: Vec<Audit>,
) -> Result<(), guild_receipts::LedgerError> {
    let recent = match first_seen.is_empty() {
        true => Vec::new(),
        false => ledger.audit_log(AUDIT_LOOKBACK)?,
    };
    for (name, ident, digest, list) in first_seen {
        let Some(before) = last_grants_digest(&recent, &name) else {
            continue;
        };
        if before != digest {
            let detail = format!(
                "granted since the last run: {list}; {GRANTS_DIGEST}{digest} (was {before})"
            );
            ledger.audit(AuditKind::GrantChanged, &ident, &detail)?;
        }
    }
    for (kind, ident, detail) in audit {
        ledger.audit(kind, &ident, &detail)?;
    }
    Ok(())
}

/// Marks the digest of a plugin's effective grant in `plugin_loaded` and `grant_changed` audit
/// details; the next run compares against it.
const GRANTS_DIGEST: &str = "grants sha256 ";
/// How many recent audit entries a start reads to find each plugin's last recorded grant.
const AUDIT_LOOKBACK: usize = 10_000;

/// The granted rows of a plugin, one string each, sorted (what `guild plugins show` prints as
/// granted, computed by the code that enforces them).
fn granted_rows(rows: &[CapabilityRow]) -> BTreeSet<String> {
    rows.iter()
        .filter_map(|r| match &r.status {
            RowStatus::Granted(how) => Some(format!("{} {} ({how})", r.capability, r.target)),
            _ => None,
        })
        .collect()
}

/// The granted rows as one line, `none` when nothing is granted.
fn granted_list(rows: &[CapabilityRow]) -> String {
    let rows = granted_rows(rows);
    match rows.is_empty() {
        true => "none".to_owned(),
        false => rows.into_iter().collect::<Vec<_>>().join(", "),
    }
}

/// A short digest of the effective grant, stable across runs.
fn grants_digest(rows: &[CapabilityRow]) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    for row in granted_rows(rows) {
        hasher.update(row.as_bytes());
        hasher.update(b"\n");
    }
    hex::encode(&hasher.finalize()[..12])
}

/// The grant digest of the newest audit entry in `recent` (oldest first) about plugin `name`
/// that records one.
fn last_grants_digest(recent: &[guild_receipts::AuditEntry], name: &str) -> Option<String> {
    recent
        .iter()
        .rev()
        .filter(|a| a.plugin.split_once('@').is_some_and(|(n, _)| n == name))
        .find_map(|a| {
            let (_, rest) = a.detail.rsplit_once(GRANTS_DIGEST)?;
            rest.split_whitespace().next().map(str::to_owned)
        })
}

/// What changed in a plugin's effective grant between two loads (the rows `guild plugins show`
/// prints as granted, computed by the code that enforces them), or `None` when nothing did.
fn grant_change(before: &[CapabilityRow], after: &[CapabilityRow]) -> Option<String> {
    let (before, after) = (granted_rows(before), granted_rows(after));
    if before == after {
        return None;
    }
    let list = |items: Vec<&String>| match items.is_empty() {
        true => "none".to_owned(),
        false => items
            .into_iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(", "),
    };
    Some(format!(
        "granted now: {}; no longer granted: {}",
        list(after.difference(&before).collect()),
        list(before.difference(&after).collect())
    ))
}

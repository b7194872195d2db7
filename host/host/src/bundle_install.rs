//! Installing a signed bundle into the plugins folder (docs/bundles.md, "Install"): verify everything in memory
//! first (`guild_bundle`), refuse a rollback or equivocation the ledger knows about unless
//! the operator overrides it (audited), then write the verified bytes into a private staging
//! folder, compile the verified component bytes (held in memory, never read back) and exchange
//! the staged folder with the installed one atomically. Nothing reaches the plugins folder's
//! top level before every check passed, the files written and compiled are the bytes that were
//! hashed, and a crash at any step leaves the old or the new version, never a mix.

use std::io::Write;
use std::path::{Path, PathBuf};

use guild_bundle::{self as bundle, BundleError, Caps, Signer, TrustPolicy, Verified};
use guild_core::capability::{self, CapabilityRow};
use guild_core::config::Config;
use guild_receipts::{AuditKind, LedgerError, LedgerStore};
use guild_runtime::{EngineOptions, GuildEngine};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Folder under the plugins folder where installs are staged; two levels deep, so a host
/// scanning the plugins folder never loads a half-written plugin.
pub const STAGING_DIR: &str = ".guild-staging";

/// Why an install (or inspection) was refused.
#[derive(Debug, Error)]
pub enum InstallError {
    /// The bundle failed verification.
    #[error(transparent)]
    Bundle(#[from] BundleError),
    /// A lower version than the one installed.
    #[error(
        "rollback refused: {name} {installed} is installed (digest {digest}); {name} {offered} is \
         lower. Pass --allow-rollback to install it anyway (the override is audited)"
    )]
    Rollback {
        /// Plugin.
        name: String,
        /// Highest installed version.
        installed: String,
        /// Its content digest.
        digest: String,
        /// The bundle's version.
        offered: String,
    },
    /// The same version with other content.
    #[error(
        "equivocation refused: {name} {version} was installed with content digest {installed}, \
         this bundle's is {offered}. A new release needs a new version; pass \
         --allow-equivocation to install it anyway (the override is audited)"
    )]
    Equivocation {
        /// Plugin.
        name: String,
        /// The version.
        version: String,
        /// Content digest installed.
        installed: String,
        /// Content digest offered.
        offered: String,
    },
    /// The operator's configuration does not allow an install.
    #[error("{0}")]
    Config(String),
    /// The grants in `guild.toml` could not be resolved for this plugin.
    #[error("{0}")]
    Grant(String),
    /// Writing the plugin folder failed (staging was removed).
    #[error("failed to install into {}: {message}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// The verified component does not compile (nothing was installed).
    #[error(
        "{plugin}: the component {component:?} in the bundle does not compile: {message}; \
         nothing was installed"
    )]
    Compile {
        /// Plugin.
        plugin: String,
        /// Its plugin-relative path.
        component: String,
        /// Why.
        message: String,
    },
    /// The ledger could not be read or written.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// The ledger `[store]` names could not be opened.
    #[error(transparent)]
    Store(#[from] Box<crate::stores::StoreOpenError>),
}

/// What the ledger records about one install (the audit entry's detail, as JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstallRecord {
    /// Plugin name.
    pub name: String,
    /// Version.
    pub version: String,
    /// SHA-256 of the signed manifest.
    pub digest: String,
    /// SHA-256 of the file list ([`guild_bundle::DigestManifest::content_digest`]).
    pub content_digest: String,
    /// Distinct trusted signers.
    pub signers: Vec<Signer>,
}

/// The outcome of [`inspect`]: the verified bundle and what the operator's grants give it.
#[derive(Debug, Clone)]
pub struct Inspection {
    /// The verified bundle.
    pub verified: Verified,
    /// Requested vs granted vs denied, from the code `guild plugins show` uses.
    pub capabilities: Vec<CapabilityRow>,
    /// Where it would be installed; `None` when the configuration names no plugins folder
    /// (verifying needs none, installing does).
    pub target: Option<PathBuf>,
    /// Lines of the trust file refused on their own, one warning each (file and line named).
    pub warnings: Vec<String>,
}

/// Options for [`install`] and [`inspect`].
#[derive(Debug, Clone, Default)]
pub struct InstallOptions {
    /// Trust file instead of the one `[trust]` names.
    pub allowed_signers: Option<PathBuf>,
    /// Install a lower version than the highest installed one.
    pub allow_rollback: bool,
    /// Install the same version with other content.
    pub allow_equivocation: bool,
}

/// The result of [`install`].
#[derive(Debug, Clone)]
pub struct Installed {
    /// What was installed and recorded.
    pub record: InstallRecord,
    /// The plugin folder.
    pub dir: PathBuf,
    /// The capability rows shown before installing.
    pub capabilities: Vec<CapabilityRow>,
    /// The override applied, if any.
    pub override_note: Option<String>,
    /// Lines of the trust file refused on their own.
    pub warnings: Vec<String>,
}

/// Verifies a bundle file against the operator's trust and shows what its grants would give
/// it, without writing anything.
pub fn inspect(
    config: &Config,
    file: &Path,
    options: &InstallOptions,
) -> Result<Inspection, InstallError> {
    let policy = TrustPolicy::from_config(config, options.allowed_signers.as_deref())?;
    let bundle = bundle::archive::read_file(file, Caps::default())?;
    let peek = bundle::DigestManifest::parse(&bundle.manifest_bytes)?;
    guild_core::manifest::validate_name(&peek.name)
        .map_err(|m| BundleError::Manifest(format!("name {:?}: {m}", peek.name)))?;
    let target = plugins_dir(config).ok().map(|dir| dir.join(&peek.name));
    // Without a plugins folder the plugin.toml inside is read as if it lived in a folder named
    // after the plugin (paths in it resolve there; nothing is written).
    let install_dir = target.clone().unwrap_or_else(|| PathBuf::from(&peek.name));
    let verified = bundle::verify(bundle, &policy, bundle::time::now_unix(), &install_dir)?;
    let (_, capabilities) = capability::resolve(&verified.plugin, config)
        .map_err(|e| InstallError::Grant(e.to_string()))?;
    Ok(Inspection {
        verified,
        capabilities,
        target,
        warnings: policy.signers.warnings(),
    })
}

/// Verifies, checks the ledger for rollback and equivocation, stages the verified bytes and
/// renames them into `plugins_dir/NAME`, then records the install in the ledger.
pub fn install(
    config: &Config,
    file: &Path,
    options: &InstallOptions,
) -> Result<Installed, InstallError> {
    let plugins_dir = plugins_dir(config)?;
    let inspection = inspect(config, file, options)?;
    let target = plugins_dir.join(&inspection.verified.manifest.name);
    let v = &inspection.verified;
    let record = InstallRecord {
        name: v.manifest.name.clone(),
        version: v.manifest.version.clone(),
        digest: v.digest.clone(),
        content_digest: v.content_digest.clone(),
        signers: v.signers.clone(),
    };
    let data_dir = config.data_dir();
    std::fs::create_dir_all(&data_dir).map_err(|e| io(&data_dir, e))?;
    let ledger = crate::stores::open_ledger(config, &data_dir).map_err(Box::new)?;
    let override_note = check_history(&*ledger, &record, options)?;

    clean_stale_staging(&plugins_dir);
    let compile = || compile_verified(config, v);
    stage_and_swap(&plugins_dir, &target, &v.files, compile, None)?;

    let ident = format!("{}@{}", record.name, record.version);
    if let Some(note) = &override_note {
        ledger.audit(AuditKind::BundleOverride, &ident, note)?;
    }
    let detail = serde_json::to_string(&record).unwrap_or_default();
    ledger.audit(AuditKind::BundleInstalled, &ident, &detail)?;
    Ok(Installed {
        record,
        dir: target,
        capabilities: inspection.capabilities,
        override_note,
        warnings: inspection.warnings,
    })
}

/// Compiles the verified component bytes (the ones hashed, held in memory) with the engine
/// options the host uses, so the compile cache then holds the entry the host loads; a
/// component that does not compile is refused before anything is renamed into place.
fn compile_verified(config: &Config, v: &Verified) -> Result<(), InstallError> {
    let compile_err = |message: String| InstallError::Compile {
        plugin: v.manifest.name.clone(),
        component: v.component.clone(),
        message,
    };
    let bytes = v
        .files
        .get(&v.component)
        .ok_or_else(|| compile_err("not among the verified files".into()))?;
    let options = EngineOptions {
        // One compile needs no instance pool (the compatibility key does not depend on it).
        pooling: false,
        ..crate::engine::engine_options(config)
    };
    let engine = GuildEngine::new(options).map_err(|e| compile_err(format!("{e:#}")))?;
    engine
        .warm_bytes(bytes)
        .map_err(|e| compile_err(e.to_string()))?;
    Ok(())
}

/// Every install the ledger records, oldest first.
pub fn history(ledger: &dyn LedgerStore) -> Result<Vec<InstallRecord>, LedgerError> {
    Ok(ledger
        .audit_log(usize::MAX)?
        .into_iter()
        .filter(|e| e.kind == AuditKind::BundleInstalled)
        .filter_map(|e| serde_json::from_str(&e.detail).ok())
        .collect())
}

/// The latest install of `name` at `version`, if it came from a bundle.
pub fn provenance(
    ledger: &dyn LedgerStore,
    name: &str,
    version: &str,
) -> Result<Option<InstallRecord>, LedgerError> {
    Ok(history(ledger)?
        .into_iter()
        .rev()
        .find(|r| r.name == name && r.version == version))
}

/// Refuses a rollback or equivocation unless overridden; returns the override's note.
///
/// Versions are compared without their build metadata, as semver orders them: `2.0.0+evil` is
/// the release `2.0.0`, so it may not carry other content than the `2.0.0` installed before,
/// nor count as newer.
fn check_history(
    ledger: &dyn LedgerStore,
    offered: &InstallRecord,
    options: &InstallOptions,
) -> Result<Option<String>, InstallError> {
    let Some(new) = release(&offered.version) else {
        return Err(
            BundleError::Manifest(format!("version {:?} is not semver", offered.version)).into(),
        );
    };
    let earlier: Vec<(semver::Version, InstallRecord)> = history(ledger)?
        .into_iter()
        .filter(|r| r.name == offered.name)
        .filter_map(|r| release(&r.version).map(|v| (v, r)))
        .collect();
    let mut notes = Vec::new();
    // The latest install of the same release (after an audited override, its content is the
    // one that counts).
    if let Some((_, record)) = earlier
        .iter()
        .rev()
        .find(|(v, _)| *v == new)
        .filter(|(_, r)| r.content_digest != offered.content_digest)
    {
        if !options.allow_equivocation {
            return Err(InstallError::Equivocation {
                name: offered.name.clone(),
                version: describe(&new, &record.version, &offered.version),
                installed: record.content_digest.clone(),
                offered: offered.content_digest.clone(),
            });
        }
        notes.push(format!(
            "equivocation at {}: content {} replaces {} (--allow-equivocation)",
            describe(&new, &record.version, &offered.version),
            offered.content_digest,
            record.content_digest
        ));
    }
    if let Some((top, record)) = earlier.iter().max_by(|a, b| a.0.cmp(&b.0))
        && new < *top
    {
        if !options.allow_rollback {
            return Err(InstallError::Rollback {
                name: offered.name.clone(),
                installed: top.to_string(),
                digest: record.content_digest.clone(),
                offered: new.to_string(),
            });
        }
        notes.push(format!(
            "rollback from {top} to {new} allowed by the operator (--allow-rollback)"
        ));
    }
    Ok((!notes.is_empty()).then(|| notes.join("; ")))
}

/// The release a version string names: semver without its build metadata (`+…`).
fn release(version: &str) -> Option<semver::Version> {
    let mut v = semver::Version::parse(version).ok()?;
    v.build = semver::BuildMetadata::EMPTY;
    Some(v)
}

/// `2.0.0`, or `2.0.0 (installed as 2.0.0, offered as 2.0.0+evil)` when build metadata differs.
fn describe(release: &semver::Version, installed: &str, offered: &str) -> String {
    if installed == offered {
        release.to_string()
    } else {
        format!("{release} (installed as {installed}, offered as {offered})")
    }
}

fn plugins_dir(config: &Config) -> Result<PathBuf, InstallError> {
    let Some(dir) = &config.host.plugins_dir else {
        let source = if config.file.as_os_str().is_empty() || !config.file.is_file() {
            format!(
                "no configuration file was found{}, so none",
                match config.file.as_os_str().is_empty() {
                    true => String::new(),
                    false => format!(" at {}", config.file.display()),
                }
            )
        } else {
            config.file.display().to_string()
        };
        return Err(InstallError::Config(format!(
            "{source} sets no [host] plugins_dir: bundle install needs a plugins folder to install into"
        )));
    };
    Ok(config.resolve(dir))
}

fn io(path: &Path, e: impl std::fmt::Display) -> InstallError {
    InstallError::Io {
        path: path.to_owned(),
        message: e.to_string(),
    }
}

/// The steps of an install after verification, in order. Tests make each one fail in turn to
/// show the old version survives every failure ([`stage_and_swap`]'s `fail_at`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Writing the verified files into the private staging folder.
    Stage,
    /// Compiling the verified component bytes.
    Compile,
    /// Exchanging the staged folder with the installed one (or renaming it into place).
    Exchange,
    /// Removing the old version, now inside the staging folder.
    RemoveOld,
}

/// Writes `files` into `PLUGINS/.guild-staging/<id>/new`, compiles `component` (the verified
/// bytes in memory, never read back from disk) with `compile`, then exchanges the staged folder
/// with `target` in one `renameat2(RENAME_EXCHANGE)` and removes the old version from staging.
/// A crash or failure at any point leaves either the old or the new folder at `target`, never a
/// mix; on failure the staging folder is removed. `fail_at` injects a failure (tests only).
pub(crate) fn stage_and_swap(
    plugins_dir: &Path,
    target: &Path,
    files: &std::collections::BTreeMap<String, Vec<u8>>,
    compile: impl FnOnce() -> Result<(), InstallError>,
    fail_at: Option<Step>,
) -> Result<(), InstallError> {
    let injected = |step: Step, path: &Path| match fail_at == Some(step) {
        true => Err(io(path, format!("injected failure at {step:?}"))),
        false => Ok(()),
    };
    let staging = plugins_dir
        .join(STAGING_DIR)
        .join(uuid::Uuid::new_v4().to_string());
    let new = staging.join("new");
    // Held until the staging folder is gone: a start meanwhile sees it in use and leaves it.
    let mut _lock = None;
    let result = (|| {
        std::fs::create_dir_all(&new).map_err(|e| io(&new, e))?;
        _lock = Some(lock(&staging).map_err(|e| io(&staging, e))?);
        for (path, bytes) in files {
            let dest = new.join(path);
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
            }
            let mut f = std::fs::File::create_new(&dest).map_err(|e| io(&dest, e))?;
            f.write_all(bytes).map_err(|e| io(&dest, e))?;
            f.sync_all().map_err(|e| io(&dest, e))?;
        }
        injected(Step::Stage, &new)?;
        compile()?;
        injected(Step::Compile, &new)?;
        match std::fs::symlink_metadata(target) {
            Ok(m) if m.file_type().is_symlink() || !m.is_dir() => {
                return Err(io(
                    target,
                    "exists and is not a plain folder; remove it first",
                ));
            }
            Ok(_) => {
                injected(Step::Exchange, target)?;
                swap::exchange(&new, target).map_err(|e| io(target, e))?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                injected(Step::Exchange, target)?;
                swap::rename_new(&new, target).map_err(|e| io(target, e))?;
            }
            Err(e) => return Err(io(target, e)),
        }
        // The new version is in place; what is left in staging is the old one (or nothing).
        swap::sync_dir(plugins_dir);
        Ok(())
    })();
    let removed = if fail_at == Some(Step::RemoveOld) {
        Err(std::io::Error::other("injected failure at RemoveOld"))
    } else {
        std::fs::remove_dir_all(&staging)
    };
    if let Err(e) = removed {
        // Installed (or refused) all the same: a leftover in the hidden staging folder is
        // never loaded, only wasted space.
        tracing::warn!(path = %staging.display(), "failed to remove the staging folder: {e}");
    }
    if let Ok(mut rest) = std::fs::read_dir(plugins_dir.join(STAGING_DIR))
        && rest.next().is_none()
    {
        let _ = std::fs::remove_dir(plugins_dir.join(STAGING_DIR));
    }
    result
}

/// Removes what killed installs left in `PLUGINS/.guild-staging` (a crash, `kill -9` or power
/// loss between staging and clean-up leaves a whole plugin copy there each time). A staging
/// folder an install in progress holds locked is left alone. Returns how many were removed;
/// failures are logged, never fatal (a leftover is only wasted space, never loaded).
pub fn clean_stale_staging(plugins_dir: &Path) -> usize {
    let root = plugins_dir.join(STAGING_DIR);
    let Ok(entries) = std::fs::read_dir(&root) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        // Locked while it is removed, so an install cannot start using it meanwhile.
        let held = if is_dir {
            match lock(&path) {
                Ok(held) => Some(held),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                Err(e) => {
                    tracing::warn!(path = %path.display(), "cannot lock a staging folder: {e}");
                    continue;
                }
            }
        } else {
            None
        };
        let done = match is_dir {
            true => std::fs::remove_dir_all(&path),
            false => std::fs::remove_file(&path),
        };
        drop(held);
        match done {
            Ok(()) => {
                tracing::info!(path = %path.display(), "removed what an interrupted install left");
                removed += 1;
            }
            Err(e) => {
                tracing::warn!(path = %path.display(), "cannot remove a stale staging folder: {e}")
            }
        }
    }
    let _ = std::fs::remove_dir(&root);
    removed
}

/// [`clean_stale_staging`] for the plugins folder `config` names, if it names one.
pub fn clean_staging(config: &Config) -> usize {
    match &config.host.plugins_dir {
        Some(dir) => clean_stale_staging(&config.resolve(dir)),
        None => 0,
    }
}

/// An exclusive advisory lock on a folder, without waiting (`WouldBlock` when held elsewhere);
/// released when the returned handle is dropped or its process dies.
fn lock(dir: &Path) -> std::io::Result<std::fs::File> {
    let handle = std::fs::File::open(dir)?;
    match handle.try_lock() {
        Ok(()) => Ok(handle),
        Err(std::fs::TryLockError::WouldBlock) => Err(std::io::ErrorKind::WouldBlock.into()),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

/// The atomic folder operations of an install.
mod swap {
    use std::path::Path;

    /// Exchanges `new` and `target` (both existing folders) atomically: afterwards `target`
    /// holds the new version and `new` the old one. Where the kernel or filesystem cannot
    /// exchange, falls back to renaming the old folder aside first (a crash between the two
    /// renames then leaves no folder at `target`, but still never a mix).
    pub(super) fn exchange(new: &Path, target: &Path) -> std::io::Result<()> {
        #[cfg(target_os = "linux")]
        {
            use rustix::fs::{CWD, RenameFlags, renameat_with};
            match renameat_with(CWD, new, CWD, target, RenameFlags::EXCHANGE) {
                Ok(()) => return Ok(()),
                Err(e) if e == rustix::io::Errno::INVAL || e == rustix::io::Errno::NOSYS => {
                    tracing::warn!(
                        path = %target.display(),
                        "RENAME_EXCHANGE unsupported here ({e}); replacing with two renames"
                    );
                }
                Err(e) => return Err(e.into()),
            }
        }
        let aside = new.with_file_name("old");
        std::fs::rename(target, &aside)?;
        if let Err(e) = std::fs::rename(new, target) {
            let _ = std::fs::rename(&aside, target);
            return Err(e);
        }
        std::fs::rename(&aside, new)
    }

    /// Renames `new` to `target`, which must not exist (a folder created there meanwhile is
    /// never replaced).
    pub(super) fn rename_new(new: &Path, target: &Path) -> std::io::Result<()> {
        #[cfg(target_os = "linux")]
        {
            use rustix::fs::{CWD, RenameFlags, renameat_with};
            match renameat_with(CWD, new, CWD, target, RenameFlags::NOREPLACE) {
                Ok(()) => return Ok(()),
                Err(e) if e == rustix::io::Errno::INVAL || e == rustix::io::Errno::NOSYS => {}
                Err(e) => return Err(e.into()),
            }
        }
        std::fs::rename(new, target)
    }

    /// Makes the rename durable (best effort: not every filesystem syncs folders).
    pub(super) fn sync_dir(dir: &Path) {
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
}

#[cfg(test)]
#[path = "bundle_install_tests.rs"]
mod tests;

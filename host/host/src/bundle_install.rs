//! Installing a signed bundle into the plugins folder (DESIGN §10): verify everything in memory
//! first (`guild_core::bundle`), refuse a rollback or equivocation the ledger knows about unless
//! the operator overrides it (audited), then write the verified bytes into a private staging
//! folder and rename it into place. Nothing reaches the plugins folder's top level before every
//! check passed, and the files written are the bytes that were hashed.

use std::io::Write;
use std::path::{Path, PathBuf};

use guild_core::bundle::{self, BundleError, Caps, Signer, TrustPolicy, Verified};
use guild_core::capability::{self, CapabilityRow};
use guild_core::config::Config;
use guild_core::receipts::{AuditKind, Ledger, LedgerError};
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
    /// The ledger could not be read or written.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
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
    /// SHA-256 of the file list ([`guild_core::bundle::DigestManifest::content_digest`]).
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
    /// Where it would be installed.
    pub target: PathBuf,
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
    let plugins_dir = plugins_dir(config)?;
    let peek = bundle::DigestManifest::parse(&bundle.manifest_bytes)?;
    guild_core::manifest::validate_name(&peek.name)
        .map_err(|m| BundleError::Manifest(format!("name {:?}: {m}", peek.name)))?;
    let target = plugins_dir.join(&peek.name);
    let verified = bundle::verify(bundle, &policy, bundle::time::now_unix(), &target)?;
    let (_, capabilities) = capability::resolve(&verified.plugin, config)
        .map_err(|e| InstallError::Grant(e.to_string()))?;
    Ok(Inspection {
        verified,
        capabilities,
        target,
    })
}

/// Verifies, checks the ledger for rollback and equivocation, stages the verified bytes and
/// renames them into `plugins_dir/NAME`, then records the install in the ledger.
pub fn install(
    config: &Config,
    file: &Path,
    options: &InstallOptions,
) -> Result<Installed, InstallError> {
    let inspection = inspect(config, file, options)?;
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
    let ledger = Ledger::open(data_dir.join(guild_core::receipts::LEDGER_FILE))?;
    let override_note = check_history(&ledger, &record, options)?;

    let plugins_dir = plugins_dir(config)?;
    stage_and_swap(&plugins_dir, &inspection.target, &v.files)?;

    let ident = format!("{}@{}", record.name, record.version);
    if let Some(note) = &override_note {
        ledger.audit(AuditKind::BundleOverride, &ident, note)?;
    }
    let detail = serde_json::to_string(&record).unwrap_or_default();
    ledger.audit(AuditKind::BundleInstalled, &ident, &detail)?;
    Ok(Installed {
        record,
        dir: inspection.target,
        capabilities: inspection.capabilities,
        override_note,
    })
}

/// Every install the ledger records, oldest first.
pub fn history(ledger: &Ledger) -> Result<Vec<InstallRecord>, LedgerError> {
    Ok(ledger
        .audit_log(usize::MAX)?
        .into_iter()
        .filter(|e| e.kind == AuditKind::BundleInstalled)
        .filter_map(|e| serde_json::from_str(&e.detail).ok())
        .collect())
}

/// The latest install of `name` at `version`, if it came from a bundle.
pub fn provenance(
    ledger: &Ledger,
    name: &str,
    version: &str,
) -> Result<Option<InstallRecord>, LedgerError> {
    Ok(history(ledger)?
        .into_iter()
        .rev()
        .find(|r| r.name == name && r.version == version))
}

/// Refuses a rollback or equivocation unless overridden; returns the override's note.
fn check_history(
    ledger: &Ledger,
    offered: &InstallRecord,
    options: &InstallOptions,
) -> Result<Option<String>, InstallError> {
    let parse = |v: &str| semver::Version::parse(v).ok();
    let Some(new) = parse(&offered.version) else {
        return Err(
            BundleError::Manifest(format!("version {:?} is not semver", offered.version)).into(),
        );
    };
    let mut highest: Option<(semver::Version, InstallRecord)> = None;
    for r in history(ledger)?
        .into_iter()
        .filter(|r| r.name == offered.name)
    {
        if let Some(v) = parse(&r.version)
            && highest.as_ref().is_none_or(|(h, _)| v >= *h)
        {
            highest = Some((v, r));
        }
    }
    let Some((top, record)) = highest else {
        return Ok(None);
    };
    if new < top {
        if !options.allow_rollback {
            return Err(InstallError::Rollback {
                name: offered.name.clone(),
                installed: top.to_string(),
                digest: record.content_digest,
                offered: new.to_string(),
            });
        }
        return Ok(Some(format!(
            "rollback from {top} to {new} allowed by the operator (--allow-rollback)"
        )));
    }
    if new == top && record.content_digest != offered.content_digest {
        if !options.allow_equivocation {
            return Err(InstallError::Equivocation {
                name: offered.name.clone(),
                version: new.to_string(),
                installed: record.content_digest,
                offered: offered.content_digest.clone(),
            });
        }
        return Ok(Some(format!(
            "equivocation at {new}: content {} replaces {} (--allow-equivocation)",
            offered.content_digest, record.content_digest
        )));
    }
    Ok(None)
}

fn plugins_dir(config: &Config) -> Result<PathBuf, InstallError> {
    let Some(dir) = &config.host.plugins_dir else {
        return Err(InstallError::Config(format!(
            "{} sets no [host] plugins_dir: bundle install needs a plugins folder to install into",
            config.file.display()
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

/// Writes `files` into `PLUGINS/.guild-staging/<id>/new`, then swaps it with `target`: the old
/// folder (if any) is renamed aside first and removed only after the new one is in place. On
/// any failure the staging folder is removed and the old folder put back.
fn stage_and_swap(
    plugins_dir: &Path,
    target: &Path,
    files: &std::collections::BTreeMap<String, Vec<u8>>,
) -> Result<(), InstallError> {
    let staging = plugins_dir
        .join(STAGING_DIR)
        .join(uuid::Uuid::new_v4().to_string());
    let result = (|| {
        let new = staging.join("new");
        std::fs::create_dir_all(&new).map_err(|e| io(&new, e))?;
        for (path, bytes) in files {
            let dest = new.join(path);
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
            }
            let mut f = std::fs::File::create_new(&dest).map_err(|e| io(&dest, e))?;
            f.write_all(bytes).map_err(|e| io(&dest, e))?;
            f.sync_all().map_err(|e| io(&dest, e))?;
        }
        let old = staging.join("old");
        match std::fs::symlink_metadata(target) {
            Ok(m) if m.file_type().is_symlink() || !m.is_dir() => {
                return Err(io(
                    target,
                    "exists and is not a plain folder; remove it first",
                ));
            }
            Ok(_) => std::fs::rename(target, &old).map_err(|e| io(target, e))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(target, e)),
        }
        if let Err(e) = std::fs::rename(&new, target) {
            if old.exists() {
                let _ = std::fs::rename(&old, target);
            }
            return Err(io(target, e));
        }
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&staging);
    if let Ok(mut rest) = std::fs::read_dir(plugins_dir.join(STAGING_DIR))
        && rest.next().is_none()
    {
        let _ = std::fs::remove_dir(plugins_dir.join(STAGING_DIR));
    }
    result
}

//! Fail-closed verification of a bundle held in memory: the signatures over the manifest's
//! exact bytes, the trust policy, the bundle's validity, then every file against the manifest
//! and the `plugin.toml` inside against the manifest's identity. What comes out
//! ([`Verified`]) holds the very bytes that were hashed, so an installer writes and compiles
//! those and never reads the bundle again.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::archive::{Bundle, component_path, kind_name};
use super::manifest::{DigestManifest, sha256_hex};
use super::paths::{NameSet, check_path};
use super::sign::check;
use super::time::rfc3339;
use super::trust::TrustPolicy;
pub use super::trust::TrustedSigner as Signer;
use super::{BundleError, SIGNATURES_PREFIX};
use guild_core::manifest::{MANIFEST_FILE, Manifest};

/// How far a bundle's creation time may lie ahead of this host's clock, seconds: clocks of
/// signer and host differ a little, but a bundle from the future is refused (it would outlive
/// a key revoked or expired meanwhile by looking newer than it is).
pub const CREATED_SKEW_S: u64 = 300;

/// A bundle that passed every check.
#[derive(Debug, Clone)]
pub struct Verified {
    /// The digest manifest.
    pub manifest: DigestManifest,
    /// Its exact bytes (what was signed).
    pub manifest_bytes: Vec<u8>,
    /// SHA-256 of those bytes.
    pub digest: String,
    /// SHA-256 over the file list alone ([`DigestManifest::content_digest`]).
    pub content_digest: String,
    /// One per distinct trusted key (empty when unsigned bundles are allowed).
    pub signers: Vec<Signer>,
    /// The plugin's files, exactly as hashed.
    pub files: BTreeMap<String, Vec<u8>>,
    /// The plugin-relative path of the component (a key of `files`).
    pub component: String,
    /// The `plugin.toml` inside, parsed as if it lived in the folder it will be installed to.
    pub plugin: Manifest,
}

/// Verifies `bundle` under `policy` at time `now`; `install_dir` is where its plugin would
/// live (the parsed `plugin.toml` resolves paths against it). The error names the first
/// signature, entry or file that failed.
pub fn verify(
    bundle: Bundle,
    policy: &TrustPolicy,
    now: u64,
    install_dir: &Path,
) -> Result<Verified, BundleError> {
    let manifest = DigestManifest::parse(&bundle.manifest_bytes)?;

    let mut checked = Vec::new();
    for (i, sig) in bundle.signatures.iter().enumerate() {
        let label = format!("signature {SIGNATURES_PREFIX}{i:03}.sig");
        checked.push((label.clone(), check(&label, sig, &bundle.manifest_bytes)?));
    }
    let signers = policy.evaluate(&checked, now)?;

    if manifest.created > now.saturating_add(CREATED_SKEW_S) {
        return Err(BundleError::Validity(format!(
            "{}@{} says it was created at {}, later than now ({}) by more than the {} s clock \
             skew allowed: check the signer's clock (or this host's) and pack it again",
            manifest.name,
            manifest.version,
            rfc3339(manifest.created),
            rfc3339(now),
            CREATED_SKEW_S
        )));
    }
    if let Some(expires) = manifest.expires
        && now >= expires
    {
        return Err(BundleError::Validity(format!(
            "{}@{} expired at {} (ask for a fresh bundle)",
            manifest.name,
            manifest.version,
            rfc3339(expires)
        )));
    }

    check_files(&manifest, &bundle.files)?;
    let (plugin, component) = check_plugin(&manifest, &bundle.files, install_dir)?;
    Ok(Verified {
        digest: sha256_hex(&bundle.manifest_bytes),
        content_digest: manifest.content_digest(),
        manifest,
        manifest_bytes: bundle.manifest_bytes,
        signers,
        files: bundle.files,
        component,
        plugin,
    })
}

/// Every listed file present with its size and hash, and no file that is not listed; the
/// first offender in path order is named.
fn check_files(
    manifest: &DigestManifest,
    files: &BTreeMap<String, Vec<u8>>,
) -> Result<(), BundleError> {
    let mut names = NameSet::default();
    let listed: BTreeSet<&str> = manifest.files.iter().map(|f| f.path.as_str()).collect();
    let all: BTreeSet<&str> = listed
        .iter()
        .copied()
        .chain(files.keys().map(String::as_str))
        .collect();
    for path in all {
        let content = |reason: String| BundleError::Content {
            path: path.to_owned(),
            reason,
        };
        check_path(path).map_err(content)?;
        names.insert(path).map_err(content)?;
        match (manifest.file(path), files.get(path)) {
            (Some(_), None) => {
                return Err(content(
                    "listed in the signed manifest but missing from the bundle".into(),
                ));
            }
            (None, Some(_)) => {
                return Err(content(
                    "in the bundle but not in the signed manifest".into(),
                ));
            }
            (Some(entry), Some(bytes)) => {
                if bytes.len() as u64 != entry.size {
                    return Err(content(format!(
                        "is {} bytes, the signed manifest says {}: changed after signing",
                        bytes.len(),
                        entry.size
                    )));
                }
                let actual = sha256_hex(bytes);
                if actual != entry.sha256 {
                    return Err(content(format!(
                        "sha256 {actual} differs from the signed {}: changed after signing",
                        entry.sha256
                    )));
                }
            }
            (None, None) => {}
        }
    }
    Ok(())
}

/// The `plugin.toml` inside parses and names the manifest's plugin, version and kind, and its
/// component is one of the signed files; returns the parsed manifest and the component's path.
fn check_plugin(
    manifest: &DigestManifest,
    files: &BTreeMap<String, Vec<u8>>,
    install_dir: &Path,
) -> Result<(Manifest, String), BundleError> {
    let bytes = files
        .get(MANIFEST_FILE)
        .ok_or_else(|| BundleError::Manifest(format!("the bundle holds no {MANIFEST_FILE}")))?;
    let text = std::str::from_utf8(bytes)
        .map_err(|_| BundleError::Manifest(format!("{MANIFEST_FILE} is not UTF-8")))?;
    let plugin =
        Manifest::parse(text, install_dir).map_err(|e| BundleError::Manifest(e.to_string()))?;
    let said = (
        plugin.plugin.name.as_str(),
        plugin.plugin.version.to_string(),
        kind_name(&plugin),
    );
    if said.0 != manifest.name || said.1 != manifest.version || said.2 != manifest.kind {
        return Err(BundleError::Manifest(format!(
            "{MANIFEST_FILE} says {}@{} ({}) but the digest manifest says {}@{} ({})",
            said.0, said.1, said.2, manifest.name, manifest.version, manifest.kind
        )));
    }
    let component = component_path(&plugin)?;
    if !files.contains_key(&component) {
        return Err(BundleError::Manifest(format!(
            "the component {component:?} named by {MANIFEST_FILE} is not in the bundle"
        )));
    }
    Ok((plugin, component))
}

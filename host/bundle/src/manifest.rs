//! The digest manifest: the bytes that are signed. One line of canonical JSON listing the
//! bundle's identity, its creation time, optional expiry, and every file (path, size, sha256)
//! sorted by path. Parsing refuses unknown fields and any encoding other than the canonical one
//! ([`DigestManifest::to_bytes`]), so one manifest has exactly one byte form and a signature
//! over it covers everything the plugin asks for (its `plugin.toml` is one of the files).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::BundleError;

/// Format tag of this manifest version.
pub const FORMAT: &str = "guild-bundle/1";

/// Largest manifest accepted, bytes.
pub const MAX_MANIFEST_BYTES: usize = 1024 * 1024;

/// The signed description of a bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DigestManifest {
    /// Always [`FORMAT`].
    pub format: String,
    /// The plugin's name (`[plugin] name`).
    pub name: String,
    /// Its version (`[plugin] version`).
    pub version: String,
    /// Its kind (`[plugin] kind`).
    pub kind: String,
    /// The WIT package version of the host that packed it.
    pub wit: String,
    /// Creation time, Unix seconds (UTC).
    pub created: u64,
    /// Expiry, Unix seconds (UTC); after it the bundle is refused.
    pub expires: Option<u64>,
    /// Every file, sorted by path.
    pub files: Vec<FileDigest>,
}

/// One file of the plugin folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileDigest {
    /// Plugin-relative path, `/`-separated.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Lower-case hex SHA-256 of its bytes.
    pub sha256: String,
}

impl DigestManifest {
    /// The canonical bytes: compact JSON in field order, one trailing newline.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec(self).unwrap_or_default();
        out.push(b'\n');
        out
    }

    /// Parses manifest bytes, refusing any that are not the canonical form of what they hold.
    pub fn parse(bytes: &[u8]) -> Result<Self, BundleError> {
        if bytes.len() > MAX_MANIFEST_BYTES {
            return Err(BundleError::Manifest(format!(
                "larger than {MAX_MANIFEST_BYTES} bytes"
            )));
        }
        let manifest: DigestManifest = serde_json::from_slice(bytes)
            .map_err(|e| BundleError::Manifest(format!("not a digest manifest: {e}")))?;
        if manifest.format != FORMAT {
            return Err(BundleError::Manifest(format!(
                "format {:?} is not {FORMAT:?} (a newer Guild made it?)",
                manifest.format
            )));
        }
        if manifest.to_bytes() != bytes {
            return Err(BundleError::Manifest(
                "not in canonical form (compact JSON, fields in order, one trailing newline)"
                    .into(),
            ));
        }
        if !manifest.files.windows(2).all(|w| w[0].path < w[1].path) {
            return Err(BundleError::Manifest(
                "files are not sorted by path or a path repeats".into(),
            ));
        }
        Ok(manifest)
    }

    /// SHA-256 of the canonical bytes: the bundle digest signatures cover.
    pub fn digest(&self) -> String {
        hex::encode(Sha256::digest(self.to_bytes()))
    }

    /// SHA-256 over the file list alone (path, size, hash per line): two bundles with the same
    /// content have the same content digest whatever their creation time, so installing the
    /// same version with another content digest is equivocation.
    pub fn content_digest(&self) -> String {
        let mut h = Sha256::new();
        for f in &self.files {
            h.update(format!("{} {} {}\n", f.sha256, f.size, f.path));
        }
        hex::encode(h.finalize())
    }

    /// The entry for `path`, if listed.
    pub fn file(&self, path: &str) -> Option<&FileDigest> {
        self.files
            .binary_search_by(|f| f.path.as_str().cmp(path))
            .ok()
            .and_then(|i| self.files.get(i))
    }
}

/// Hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

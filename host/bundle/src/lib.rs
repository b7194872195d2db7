//! Signed plugin bundles (docs/bundles.md): the format, its digest manifest, SSH signatures over it,
//! the team's trust file and the fail-closed verification that runs before anything is written.
//!
//! A bundle is one uncompressed tar file with three kinds of entries, in this order:
//! `bundle/manifest.json` (the canonical digest manifest, [`DigestManifest`]), `files/<path>`
//! for every file of the plugin folder (sorted), and `signatures/<n>.sig` (armored SSHSIG
//! signatures over the manifest's exact bytes, namespace [`SIG_NAMESPACE`]). Every entry is a
//! regular file with mode 0644, owner 0:0 and mtime 0, and the archive ends with exactly two
//! zero blocks, so the same folder packs to the same bytes; a reader accepts only that one byte
//! form (no trailing data, no cut or missing end marker, nothing hidden in ignored header fields).
//!
//! The archive is never unpacked by the tar crate: [`archive::read`] walks the raw headers
//! (extension headers included), accepts only regular files, reads each into memory with caps on
//! the actual bytes, and refuses anything else. That is why the advisories on tar crates
//! (symlink-then-file overwrite, PAX size desync, chmod through symlinks) cannot apply: no link,
//! no PAX header and no file mode is ever honoured, and nothing is written while reading.
//! Uncompressed on purpose: no decompression step means no decompression bomb.
//!
//! This module needs no wasm engine; installing (staging, the atomic rename, the ledger) lives in
//! `guild-host`.

pub mod agent;
pub mod archive;
pub mod cert;
pub mod manifest;
pub mod openssh_key;
pub mod paths;
pub mod pattern;
pub mod policy;
pub mod sign;
pub mod time;
pub mod trust;
pub mod verify;

#[cfg(test)]
mod archive_tests;
#[cfg(test)]
mod interop_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod trust_tests;

use thiserror::Error;

pub use archive::{Bundle, Caps};
pub use manifest::{DigestManifest, FileDigest};
pub use trust::{AllowedSigners, Revoked, TrustPolicy};
pub use verify::{Signer, Verified, verify};

/// The SSHSIG namespace of every bundle signature (`ssh-keygen -Y … -n guild-bundle`).
pub const SIG_NAMESPACE: &str = "guild-bundle";

/// Entry name of the digest manifest inside the archive.
pub const MANIFEST_ENTRY: &str = "bundle/manifest.json";

/// Prefix of the plugin's files inside the archive.
pub const FILES_PREFIX: &str = "files/";

/// Prefix of the signatures inside the archive.
pub const SIGNATURES_PREFIX: &str = "signatures/";

/// The WIT package version this host implements, read from `wit/guild.wit` at build time, so a
/// bundle records the contract its component was built against.
pub fn wit_version() -> &'static str {
    const WIT: &str = include_str!("../../../wit/guild.wit");
    WIT.lines()
        .find_map(|l| l.trim().strip_prefix("package guild:plugin@"))
        .map(|v| v.trim_end_matches(';'))
        .unwrap_or("unknown")
}

/// Why a bundle was refused or could not be made. Each variant names the entry, key or signer
/// at fault and, where there is one, what to do.
#[derive(Debug, Error)]
pub enum BundleError {
    /// Reading or writing a file failed.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// What failed.
        message: String,
    },
    /// The archive is malformed or uses something the format does not allow.
    #[error("bundle entry {entry:?} refused: {reason}")]
    Entry {
        /// The first offending entry (its name as stored).
        entry: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The archive as a whole breaks a rule (caps, missing manifest).
    #[error("bundle refused: {0}")]
    Archive(String),
    /// The digest manifest is malformed or does not match the plugin inside.
    #[error("bundle manifest refused: {0}")]
    Manifest(String),
    /// A file's bytes do not match the digest manifest, or the file lists differ.
    #[error("bundle file {path:?} refused: {reason}")]
    Content {
        /// The plugin-relative path.
        path: String,
        /// What does not match.
        reason: String,
    },
    /// Signatures missing, invalid, untrusted, revoked, expired or under the threshold.
    #[error("bundle signature refused: {0}")]
    Signature(String),
    /// The bundle itself has expired or is not valid yet.
    #[error("bundle refused: {0}")]
    Validity(String),
    /// The trust file or revocation list is malformed.
    #[error("{file}:{line}: {message}")]
    TrustFile {
        /// The file.
        file: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A signing key could not be read or used.
    #[error("signing key {path}: {message}")]
    Key {
        /// The key file.
        path: String,
        /// What is wrong.
        message: String,
    },
}

impl BundleError {
    pub(crate) fn io(path: &std::path::Path, e: impl std::fmt::Display) -> Self {
        BundleError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        }
    }

    pub(crate) fn entry(entry: &str, reason: impl Into<String>) -> Self {
        BundleError::Entry {
            entry: entry.to_owned(),
            reason: reason.into(),
        }
    }
}

//! Artifacts (docs/receipts-and-validation.md, "Artifacts"): every artifact a report lists must resolve in the task's workspace
//! with the content hash it claims.
//!
//! Missing or hash mismatch ⇒ failed; resolver unavailable ⇒ unknown; an id outside the
//! task's workspace (another task's artifact, `..`, an absolute path, a symlink out) ⇒ error.

use std::io::{ErrorKind, Read};
use std::path::{Component, Path};

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use sha2::{Digest, Sha256};
use thiserror::Error;

use super::{Check, CheckStatus};
use guild_core::types::ArtifactRef;

/// Largest artifact [`DirResolver`] reads, bytes.
pub const MAX_ARTIFACT_BYTES: u64 = 64 * 1024 * 1024;

/// Why an artifact could not be resolved.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ResolveError {
    /// The store cannot answer now (I/O error, too large, no workspace): verdict unknown.
    #[error("artifact store unavailable: {0}")]
    Unavailable(String),
    /// The id points outside this task's workspace: verdict error.
    #[error("outside this task's workspace: {0}")]
    OutOfScope(String),
}

/// Where a task's artifacts are looked up.
pub trait ArtifactResolver {
    /// The artifact's bytes, `Ok(None)` when it does not exist.
    fn resolve(&self, id: &str) -> Result<Option<Vec<u8>>, ResolveError>;
}

/// Resolver for a task that has no workspace: every lookup is unavailable.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoWorkspace;

impl ArtifactResolver for NoWorkspace {
    fn resolve(&self, _id: &str) -> Result<Option<Vec<u8>>, ResolveError> {
        Err(ResolveError::Unavailable(
            "this task has no workspace".into(),
        ))
    }
}

/// Resolves artifact ids as relative paths under one folder, through a cap-std [`Dir`]: no id
/// can reach outside it, whether by `..`, an absolute path or a symlink.
#[derive(Debug)]
pub struct DirResolver {
    dir: Dir,
}

impl DirResolver {
    /// Opens the workspace folder.
    pub fn open(root: &Path) -> std::io::Result<DirResolver> {
        Ok(DirResolver {
            dir: Dir::open_ambient_dir(root, ambient_authority())?,
        })
    }
}

impl ArtifactResolver for DirResolver {
    fn resolve(&self, id: &str) -> Result<Option<Vec<u8>>, ResolveError> {
        let path = Path::new(id);
        // Refused before touching the file system; cap-std would refuse them too, but with an
        // error that reads like an I/O failure.
        if id.is_empty()
            || id.contains('\0')
            || path
                .components()
                .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return Err(ResolveError::OutOfScope(format!(
                "{id:?} is not a relative path inside the workspace"
            )));
        }
        let file = match self.dir.open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            // cap-std reports a path that leads out (e.g. through a symlink) as permission
            // denied.
            Err(e) if e.kind() == ErrorKind::PermissionDenied => {
                return Err(ResolveError::OutOfScope(format!("{id:?}: {e}")));
            }
            Err(e) => return Err(ResolveError::Unavailable(format!("{id:?}: {e}"))),
        };
        // A folder is not an artifact: report it as missing rather than as an I/O failure.
        if file.metadata().is_ok_and(|m| m.is_dir()) {
            return Ok(None);
        }
        let mut bytes = Vec::new();
        file.take(MAX_ARTIFACT_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| ResolveError::Unavailable(format!("{id:?}: {e}")))?;
        if bytes.len() as u64 > MAX_ARTIFACT_BYTES {
            return Err(ResolveError::Unavailable(format!(
                "{id:?} is larger than {MAX_ARTIFACT_BYTES} bytes"
            )));
        }
        Ok(Some(bytes))
    }
}

/// One check per artifact.
pub(super) fn checks(refs: &[ArtifactRef], resolver: &dyn ArtifactResolver) -> Vec<Check> {
    refs.iter().map(|a| check(a, resolver)).collect()
}

fn check(a: &ArtifactRef, resolver: &dyn ArtifactResolver) -> Check {
    let check = |status, message: String| Check::new("artifact", status, message);
    let claimed = a.sha256.to_ascii_lowercase();
    if claimed.len() != 64 || !claimed.bytes().all(|b| b.is_ascii_hexdigit()) {
        return check(
            CheckStatus::Failed,
            format!(
                "artifact {:?}: sha256 {:?} is not 64 hex digits",
                a.id, a.sha256
            ),
        );
    }
    match resolver.resolve(&a.id) {
        Ok(Some(bytes)) => {
            let actual = hex::encode(Sha256::digest(&bytes));
            if actual == claimed {
                check(
                    CheckStatus::Passed,
                    format!("artifact {:?} found with the claimed sha256", a.id),
                )
            } else {
                check(
                    CheckStatus::Failed,
                    format!(
                        "artifact {:?}: sha256 mismatch: the report says {claimed}, the content \
                         is {actual}",
                        a.id
                    ),
                )
            }
        }
        Ok(None) => check(
            CheckStatus::Failed,
            format!("artifact {:?} is missing from the task's workspace", a.id),
        ),
        Err(e @ ResolveError::Unavailable(_)) => check(
            CheckStatus::Unknown,
            format!("artifact {:?} cannot be checked: {e}", a.id),
        ),
        Err(e @ ResolveError::OutOfScope(_)) => {
            check(CheckStatus::Error, format!("artifact {:?}: {e}", a.id))
        }
    }
}

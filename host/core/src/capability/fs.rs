//! Filesystem mounts: requested guest path ∩ granted guest path → host folder.
//!
//! The effective mode is the lower of the two (read-only wins). Enforcement is wasmtime-wasi's
//! preopens, which confine every access with cap-std: no `..`, no absolute paths, no symlink
//! escape, and read-only is checked on every open.

use std::path::PathBuf;

use super::report::CapabilityRow;
use crate::config::{Config, FsGrant};
use crate::manifest::{FsMode, FsRequest};

/// One preopened folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsMount {
    /// Path the guest sees.
    pub guest: String,
    /// Host folder behind it (canonical).
    pub host: PathBuf,
    /// Effective mode.
    pub mode: FsMode,
}

pub(super) fn resolve(
    requested: &[FsRequest],
    granted: &[FsGrant],
    config: &Config,
    rows: &mut Vec<CapabilityRow>,
) -> Result<Vec<FsMount>, String> {
    let mut mounts = Vec::new();
    for req in requested {
        let Some(grant) = granted.iter().find(|g| g.guest == req.guest) else {
            rows.push(CapabilityRow::denied(
                "fs",
                &format!("{} ({})", req.guest, req.mode),
                "not granted",
            ));
            continue;
        };
        let host = config.resolve(&grant.host);
        let host = host.canonicalize().map_err(|e| {
            format!(
                "key `fs`: host folder {} for guest path {} cannot be used: {e}",
                host.display(),
                req.guest
            )
        })?;
        if !host.is_dir() {
            return Err(format!(
                "key `fs`: {} (for guest path {}) is not a folder",
                host.display(),
                req.guest
            ));
        }
        let mode = req.mode.min(grant.mode);
        rows.push(CapabilityRow::granted(
            "fs",
            &format!("{} ({})", req.guest, req.mode),
            &format!("{} -> {} ({mode})", req.guest, host.display()),
        ));
        mounts.push(FsMount {
            guest: req.guest.clone(),
            host,
            mode,
        });
    }
    for grant in granted {
        if !requested.iter().any(|r| r.guest == grant.guest) {
            rows.push(CapabilityRow::unused("fs", &grant.guest));
        }
    }
    Ok(mounts)
}

//! Filesystem mounts: requested guest path ∩ granted guest path → host folder.
//!
//! The effective mode is the lower of the two (read-only wins). Enforcement is wasmtime-wasi's
//! preopens, which confine every access with cap-std: no `..`, no absolute paths, no symlink
//! escape, and read-only is checked on every open.
//!
//! A grant's host folder is judged only after it is resolved: it is canonicalized first (so
//! `/tmp/..` is `/`, and a symlink is judged by where it leads), and a folder that does not
//! exist is refused. Then every rule applies: never `/`, and never the host's own state (the
//! data folder, the config file, the plugins folder, any plugin folder, a secret's file): a
//! grant that equals, contains or lies inside one of them is refused, naming both paths.
//!
//! A read-write mount carries a disk quota (bytes and files under the folder), from the grant's
//! `quota_mb` / `quota_files` or the `[host]` defaults; the runtime enforces it. Two read-write
//! grants of one plugin may not overlap (the same folder, or one inside the other): writes
//! through the inner one would not count against the outer one's quota.

use std::path::PathBuf;

use super::report::CapabilityRow;
use crate::config::{Config, FsGrant, SecretSource};
use crate::host_paths::canonical_or_planned;
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
    /// How much the guest may store under the folder; `Some` exactly for read-write mounts.
    pub quota: Option<FsQuota>,
}

/// The disk quota of one read-write mount: everything under the folder together, including
/// what was there before the plugin started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FsQuota {
    /// Bytes of all regular files (apparent size: a sparse file counts at its full length).
    pub bytes: u64,
    /// Entries: files, folders and links.
    pub files: u64,
}

pub(super) fn resolve(
    plugin: &str,
    requested: &[FsRequest],
    granted: &[FsGrant],
    config: &Config,
    rows: &mut Vec<CapabilityRow>,
) -> Result<Vec<FsMount>, String> {
    // Every grant is judged, requested or not: an unused grant of the data folder is an
    // operator mistake that a later manifest would turn into an escape.
    let owned = host_owned(config);
    let hosts = granted
        .iter()
        .enumerate()
        .map(|(i, grant)| judge(plugin, i, grant, config, &owned))
        .collect::<Result<Vec<_>, _>>()?;
    refuse_nested_rw(plugin, granted, &hosts)?;
    let mut mounts = Vec::new();
    for req in requested {
        let Some((grant, host)) = granted
            .iter()
            .zip(&hosts)
            .find(|(g, _)| g.guest == req.guest)
        else {
            rows.push(CapabilityRow::denied(
                "fs",
                &format!("{} ({})", req.guest, req.mode),
                "not granted",
            ));
            continue;
        };
        let mode = req.mode.min(grant.mode);
        let quota = (mode == FsMode::Rw).then(|| FsQuota {
            bytes: u64::from(grant.quota_mb.unwrap_or(config.host.fs_quota_mb)) * 1024 * 1024,
            files: u64::from(grant.quota_files.unwrap_or(config.host.fs_quota_files)),
        });
        let limit = match quota {
            Some(q) => format!(
                ", quota {} MiB / {} files",
                q.bytes / (1024 * 1024),
                q.files
            ),
            None => String::new(),
        };
        rows.push(CapabilityRow::granted(
            "fs",
            &format!("{} ({})", req.guest, req.mode),
            &format!("{} -> {} ({mode}{limit})", req.guest, host.display()),
        ));
        mounts.push(FsMount {
            guest: req.guest.clone(),
            host: host.clone(),
            mode,
            quota,
        });
    }
    for grant in granted {
        if !requested.iter().any(|r| r.guest == grant.guest) {
            rows.push(CapabilityRow::unused("fs", &grant.guest));
        }
    }
    Ok(mounts)
}

/// A host path that no grant may touch, and what it is (for the error).
struct Owned {
    path: PathBuf,
    what: String,
}

/// The host's own state, canonical: the data folder, the config file, each plugin folder, the
/// plugins folder, and every secret file any grant reads. Paths that do not exist yet (a data folder created at
/// start) are resolved as far as they exist.
fn host_owned(config: &Config) -> Vec<Owned> {
    let mut owned = vec![Owned {
        path: canonical_or_planned(&config.data_dir()),
        what: "the host's data folder".to_owned(),
    }];
    if !config.file.as_os_str().is_empty() {
        owned.push(Owned {
            path: canonical_or_planned(&config.file),
            what: "the host's config file".to_owned(),
        });
    }
    // A listing error leaves out only the children, which the plugins folder itself covers.
    for dir in config.plugin_folders().unwrap_or_default() {
        owned.push(Owned {
            path: canonical_or_planned(&dir),
            what: "a plugin folder".to_owned(),
        });
    }
    if let Some(dir) = &config.host.plugins_dir {
        owned.push(Owned {
            path: canonical_or_planned(&config.resolve(dir)),
            what: "the plugins folder".to_owned(),
        });
    }
    for (name, grant) in &config.grants {
        for (secret, secret_grant) in &grant.secrets {
            if let SecretSource::File(file) = &secret_grant.source {
                owned.push(Owned {
                    path: canonical_or_planned(&config.resolve(file)),
                    what: format!("the file of secret {secret} (`[grants.{name}.secrets]`)"),
                });
            }
        }
    }
    owned
}

/// Resolves grant `index` of `plugin` and applies every rule to the canonical path.
fn judge(
    plugin: &str,
    index: usize,
    grant: &FsGrant,
    config: &Config,
    owned: &[Owned],
) -> Result<PathBuf, String> {
    let key = format!("`[grants.{plugin}] fs[{index}].host`");
    let written = config.resolve(&grant.host);
    let host = written.canonicalize().map_err(|e| {
        format!(
            "{key}: host folder {} for guest path {} cannot be used: {e} (a granted folder must exist)",
            written.display(),
            grant.guest
        )
    })?;
    if !host.is_dir() {
        return Err(format!(
            "{key}: {} (for guest path {}) is not a folder",
            host.display(),
            grant.guest
        ));
    }
    let shown = if host == written {
        host.display().to_string()
    } else {
        format!("{} (resolved from {})", host.display(), written.display())
    };
    if host.parent().is_none() {
        return Err(format!(
            "{key}: {shown} is the root folder; grant a dedicated folder, never '/'"
        ));
    }
    for o in owned {
        let relation = if host == o.path {
            "is"
        } else if o.path.starts_with(&host) {
            "contains"
        } else if host.starts_with(&o.path) {
            "lies inside"
        } else {
            continue;
        };
        return Err(format!(
            "{key}: {shown} {relation} {} {}; the host's state is never granted to a plugin: \
             grant a dedicated folder outside it",
            o.what,
            o.path.display()
        ));
    }
    Ok(host)
}

/// Refuses two read-write grants of one plugin whose folders are the same or one inside the
/// other: each has its own disk quota, so writes through the inner mount would not count
/// against the outer one's (and renames between them are refused as cross-device, which an
/// author would not expect of one folder). Read-only grants may overlap anything: nothing is
/// written through them.
fn refuse_nested_rw(plugin: &str, granted: &[FsGrant], hosts: &[PathBuf]) -> Result<(), String> {
    let rw: Vec<(usize, &FsGrant, &PathBuf)> = granted
        .iter()
        .zip(hosts)
        .enumerate()
        .filter(|(_, (g, _))| g.mode == FsMode::Rw)
        .map(|(i, (g, h))| (i, g, h))
        .collect();
    for (n, (i, a, a_host)) in rw.iter().enumerate() {
        for (j, b, b_host) in &rw[n + 1..] {
            let relation = if a_host == b_host {
                "is the same folder as"
            } else if b_host.starts_with(a_host) {
                "contains"
            } else if a_host.starts_with(b_host) {
                "lies inside"
            } else {
                continue;
            };
            return Err(format!(
                "`[grants.{plugin}] fs[{i}].host` {} (guest {}) {relation} `fs[{j}].host` {}                  (guest {}): two read-write grants may not overlap, since each has its own disk                  quota and writes through one would escape the other's; grant folders side by                  side, or one folder once",
                a_host.display(),
                a.guest,
                b_host.display(),
                b.guest
            ));
        }
    }
    Ok(())
}

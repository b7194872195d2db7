//! Disk quotas on read-write folder grants: the bytes and the entries (files, folders, links)
//! under each read-write preopen, shared by every instance of the plugin version that holds the
//! grant.
//!
//! wasmtime-wasi confines paths but does not bound what a guest stores, so this module wraps
//! its `wasi:filesystem` host (`types` and `preopens`, the interfaces the p1 adapter uses too):
//! every call that can grow a folder — `write`, `set-size`, streams from `write-via-stream` and
//! `append-via-stream`, `open-at` with `create`/`truncate`, `create-directory-at`,
//! `symlink-at`, `link-at` — is accounted against the grant before it runs, and a call past the
//! quota fails with the WASI error `insufficient-space` (a stream write with
//! `last-operation-failed`, whose `filesystem-error-code` is `insufficient-space`); the guest
//! gets a typed error, never a trap, and the host is unaffected. Removals and truncations give
//! the space back. Renames and links between two different grants fail with `cross-device`
//! (guests then copy and delete), so usage never moves between quotas unaccounted.
//!
//! Usage starts from a walk of the folder when the plugin version is prepared (what was there
//! before counts) and is updated on each call; a sparse file counts at its full length, and a
//! hard link counts its file again. Changes made to the folder from outside the host are seen
//! at the next load.

mod host;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use bytes::Bytes;
use guild_core::capability::{Effective, FsQuota};
use guild_core::manifest::FsMode;
use wasmtime::component::{HasData, Linker};
use wasmtime_wasi::filesystem::{Dir, WasiFilesystemCtxView};
use wasmtime_wasi::p2::bindings::filesystem::{preopens, types};
use wasmtime_wasi::p2::{
    DynOutputStream, FsError, OutputStream, Pollable, StreamError, StreamResult,
};
use wasmtime_wasi::{FsPerms, OpenMode};

use crate::state::StoreState;

/// The usage and limits of one read-write grant.
pub(crate) struct DiskQuota {
    plugin: Arc<str>,
    guest: String,
    limit: FsQuota,
    bytes: AtomicU64,
    files: AtomicU64,
    /// Whether a refusal was logged at warn level already (later ones go to debug, so a guest
    /// retrying in a loop cannot flood the log).
    warned: AtomicBool,
}

impl DiskQuota {
    /// A quota whose usage starts at `bytes` and `files` (what lies under the folder now).
    fn new(plugin: &str, guest: &str, limit: FsQuota, bytes: u64, files: u64) -> Self {
        Self {
            plugin: plugin.into(),
            guest: guest.to_owned(),
            limit,
            bytes: AtomicU64::new(bytes),
            files: AtomicU64::new(files),
            warned: AtomicBool::new(false),
        }
    }

    /// Bytes and entries in use now.
    fn usage(&self) -> (u64, u64) {
        (
            self.bytes.load(Ordering::Relaxed),
            self.files.load(Ordering::Relaxed),
        )
    }

    /// Takes `n` more bytes, or refuses with `insufficient-space` when they do not fit.
    pub(crate) fn reserve_bytes(&self, n: u64) -> Result<(), FsError> {
        if take(&self.bytes, n, self.limit.bytes) {
            return Ok(());
        }
        self.refused(&format!("{n} more bytes"));
        Err(types::ErrorCode::InsufficientSpace.into())
    }

    /// Takes `n` more entries, or refuses with `insufficient-space`.
    pub(crate) fn reserve_files(&self, n: u64) -> Result<(), FsError> {
        if take(&self.files, n, self.limit.files) {
            return Ok(());
        }
        self.refused(&format!("{n} more file(s)"));
        Err(types::ErrorCode::InsufficientSpace.into())
    }

    /// Gives `n` bytes back.
    pub(crate) fn release_bytes(&self, n: u64) {
        give(&self.bytes, n);
    }

    /// Gives `n` entries back.
    pub(crate) fn release_files(&self, n: u64) {
        give(&self.files, n);
    }

    fn refused(&self, wanted: &str) {
        let (bytes, files) = self.usage();
        let message = format!(
            "refused {wanted} under {}: over its disk quota of {} MiB / {} files \
             (in use: {bytes} bytes, {files} files); raise quota_mb / quota_files on the grant \
             if the plugin needs more",
            self.guest,
            self.limit.bytes / (1024 * 1024),
            self.limit.files,
        );
        if self.warned.swap(true, Ordering::Relaxed) {
            tracing::debug!(plugin = %self.plugin, capability = "fs", "{message}");
        } else {
            tracing::warn!(plugin = %self.plugin, capability = "fs", "{message}");
        }
    }
}

/// Adds `n` to `counter` unless the sum passes `max`.
fn take(counter: &AtomicU64, n: u64, max: u64) -> bool {
    n == 0
        || counter
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(n).filter(|total| *total <= max)
            })
            .is_ok()
}

/// Subtracts `n` from `counter`, stopping at zero.
fn give(counter: &AtomicU64, n: u64) {
    if n > 0 {
        let _ = counter.fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
            Some(used.saturating_sub(n))
        });
    }
}

/// One preopen of a plugin version: its guest path, the folder itself (opened once, when the
/// version is prepared, and handed to every instance: a grant can never be re-pointed by
/// changing what its path leads to) and, when read-write, its quota.
pub(crate) struct QuotaMount {
    guest: String,
    dir: Dir,
    quota: Option<Arc<DiskQuota>>,
}

/// The mounts of a plugin version, in preopen order: each granted folder opened without
/// following links ([`guild_core::host_paths::open_folder_nofollow`]) and each read-write one
/// measured. Walks the folders: call off the async workers.
pub(crate) fn mounts_for(plugin: &str, effective: &Effective) -> Result<Arc<[QuotaMount]>, String> {
    effective
        .fs
        .iter()
        .map(|m| {
            let folder = guild_core::host_paths::open_folder_nofollow(&m.host).map_err(|e| {
                format!(
                    "cannot mount {} for guest path {}: {e}",
                    m.host.display(),
                    m.guest
                )
            })?;
            let quota = m.quota.map(|limit| {
                let (bytes, files) = guild_core::host_paths::usage_under(&folder);
                Arc::new(DiskQuota::new(plugin, &m.guest, limit, bytes, files))
            });
            let (perms, open_mode) = match m.mode {
                FsMode::Ro => (FsPerms::ReadOnly, OpenMode::READ),
                FsMode::Rw => (FsPerms::ReadWrite, OpenMode::READ | OpenMode::WRITE),
            };
            Ok(QuotaMount {
                guest: m.guest.clone(),
                dir: Dir::new(folder, perms, open_mode, false),
                quota,
            })
        })
        .collect()
}

/// Per-instance state: the plugin's mounts and which mount each live descriptor lies under.
pub(crate) struct FsQuotas {
    mounts: Arc<[QuotaMount]>,
    /// Descriptor table index → index into `mounts`.
    owner: HashMap<u32, usize>,
}

impl FsQuotas {
    pub(crate) fn new(mounts: Arc<[QuotaMount]>) -> Self {
        Self {
            mounts,
            owner: HashMap::new(),
        }
    }
}

/// What the wrapped `wasi:filesystem` host functions see: wasmtime-wasi's view plus the quotas.
pub(crate) struct QuotaView<'a> {
    pub(crate) fs: WasiFilesystemCtxView<'a>,
    pub(crate) quotas: &'a mut FsQuotas,
}

/// The [`HasData`] marker under which the wrapped interfaces are linked.
pub(crate) struct QuotaFs;

impl HasData for QuotaFs {
    type Data<'a> = QuotaView<'a>;
}

/// Replaces wasmtime-wasi's `wasi:filesystem/types` and `preopens` in `linker` (which must
/// hold them already) with the quota-enforcing wrappers.
pub(crate) fn add_to_linker(linker: &mut Linker<StoreState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let linked = types::add_to_linker::<StoreState, QuotaFs>(linker, StoreState::fs_quota_view)
        .and_then(|()| {
            preopens::add_to_linker::<StoreState, QuotaFs>(linker, StoreState::fs_quota_view)
        });
    linker.allow_shadowing(false);
    linked
}

/// The `std::io::Error` a stream write past the quota fails with: `filesystem-error-code`
/// turns it into `insufficient-space`.
fn no_space() -> std::io::Error {
    #[cfg(unix)]
    {
        std::io::Error::from_raw_os_error(rustix::io::Errno::NOSPC.raw_os_error())
    }
    #[cfg(not(unix))]
    {
        std::io::Error::from(std::io::ErrorKind::StorageFull)
    }
}

/// An output stream into a file under a quota'd grant: each write is accounted before it is
/// handed to wasmtime-wasi's stream.
struct QuotaStream {
    inner: DynOutputStream,
    file: Arc<std::fs::File>,
    /// The next write's offset; `None` for an appending stream (it writes at the end).
    position: Option<u64>,
    quota: Arc<DiskQuota>,
}

impl QuotaStream {
    /// Accounts a write of `len` bytes. The previous write has finished (wasmtime-wasi allows
    /// the next write only then), so the file's size is current.
    fn charge(&mut self, len: usize) -> StreamResult<()> {
        let size = self
            .file
            .metadata()
            .map_err(|e| StreamError::LastOperationFailed(e.into()))?
            .len();
        let start = self.position.unwrap_or(size);
        let end = start.saturating_add(len as u64);
        self.quota
            .reserve_bytes(end.saturating_sub(size))
            .map_err(|_| StreamError::LastOperationFailed(no_space().into()))?;
        if let Some(position) = &mut self.position {
            *position = end;
        }
        Ok(())
    }
}

#[wasmtime_wasi::async_trait]
impl OutputStream for QuotaStream {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.charge(bytes.len())?;
        self.inner.write(bytes)
    }

    async fn blocking_write_and_flush(&mut self, bytes: Bytes) -> StreamResult<()> {
        // Let a write still in flight finish first, so the size `charge` reads is current.
        self.inner.ready().await;
        self.charge(bytes.len())?;
        self.inner.blocking_write_and_flush(bytes).await
    }

    fn flush(&mut self) -> StreamResult<()> {
        self.inner.flush()
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        self.inner.check_write()
    }

    async fn cancel(&mut self) {
        self.inner.cancel().await
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for QuotaStream {
    async fn ready(&mut self) {
        self.inner.ready().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quota(bytes: u64, files: u64) -> DiskQuota {
        DiskQuota {
            plugin: "probe@0.1.0".into(),
            guest: "/data".to_owned(),
            limit: FsQuota { bytes, files },
            bytes: AtomicU64::new(0),
            files: AtomicU64::new(0),
            warned: AtomicBool::new(false),
        }
    }

    #[test]
    fn reservations_up_to_the_limit_pass_and_past_it_are_refused() {
        let q = quota(100, 2);
        assert!(q.reserve_bytes(60).is_ok());
        assert!(q.reserve_bytes(40).is_ok());
        let refused = q.reserve_bytes(1).expect_err("over");
        assert!(matches!(
            refused.downcast(),
            Ok(types::ErrorCode::InsufficientSpace)
        ));
        assert_eq!(q.usage(), (100, 0), "a refusal takes nothing");
        q.release_bytes(30);
        assert!(q.reserve_bytes(30).is_ok(), "released space is usable");
        assert!(q.reserve_files(2).is_ok());
        assert!(q.reserve_files(1).is_err());
        q.release_files(5);
        assert_eq!(q.usage(), (100, 0), "releases stop at zero");
    }

    #[test]
    fn measuring_counts_bytes_of_files_and_every_entry() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("a"), [0u8; 10]).expect("write");
        std::fs::create_dir(dir.path().join("sub")).expect("mkdir");
        std::fs::write(dir.path().join("sub/b"), [0u8; 5]).expect("write");
        let root = dir.path().canonicalize().expect("canonical");
        let folder = guild_core::host_paths::open_folder_nofollow(&root).expect("open");
        assert_eq!(guild_core::host_paths::usage_under(&folder), (15, 3));
    }
}

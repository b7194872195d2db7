//! [`ComponentFile`]: a plugin's component read from disk with its sha256, and the
//! [`FileStamp`] that lets a reload skip hashing a component nobody wrote since.
//!
//! A reload stages every configured plugin, and staging compares the component's sha256 with
//! the version serving. Hashing is most of that for a large component (18 MB of Python:
//! about 15 ms of a CPU each reload, taken from the tasks running beside it). So a read also
//! notes what the file system says of the file (device, inode, length, modification and change
//! times) when the file was settled: its change time at least [`SETTLE`] older than the read.
//! A later read that finds the same stamp takes the digest of the version serving instead of
//! hashing the bytes again.
//!
//! Why that is safe: the kernel sets a file's change time to the current time on every write,
//! truncate, rename over it and `utimes` (a program can set the modification time, not the
//! change time). A write after a settled read therefore gets a later change time than the
//! stamp's, and the next read hashes. A file written within [`SETTLE`] before it was read
//! could be written again within the same timestamp tick and keep its stamp (git's "racy"
//! case), so such a read notes no stamp and the next read hashes too. The bytes are read and
//! their length checked either way; only the hash is skipped. (docs/operations.md, "Reload".)

use std::fs::Metadata;
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

use crate::engine::CompileError;

/// How much older than the read a component's change time must be for the read to note a
/// stamp: wider than any file system's timestamp granularity here (ext4, xfs, tmpfs: a clock
/// tick; FAT's two seconds are the coarsest).
pub(crate) const SETTLE: Duration = Duration::from_secs(3);

/// What the file system says of a component file; equal stamps of a settled file mean nobody
/// wrote it in between (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl FileStamp {
    fn of(meta: &Metadata) -> Self {
        Self {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// Whether the file had not been changed for [`SETTLE`] when it was read at `read_at`.
    fn settled(&self, read_at: SystemTime) -> bool {
        let Ok(since_epoch) = read_at.duration_since(SystemTime::UNIX_EPOCH) else {
            return false;
        };
        let Some(limit) = since_epoch.checked_sub(SETTLE) else {
            return false;
        };
        // A change time the file system does not really keep (zero, before 1970, nanoseconds
        // out of range) proves nothing: such a file is hashed at every read.
        let (secs, nanos) = self.ctime;
        let (Ok(secs), Ok(nanos)) = (u64::try_from(secs), u32::try_from(nanos)) else {
            return false;
        };
        if secs == 0 || nanos >= 1_000_000_000 {
            return false;
        }
        Duration::new(secs, nanos) <= limit
    }
}

/// A component file read once: its bytes and their sha256, which a load compares with the
/// version serving before it compiles anything, and its stamp when it was settled.
pub struct ComponentFile {
    bytes: Vec<u8>,
    digest: [u8; 32],
    stamp: Option<FileStamp>,
}

impl ComponentFile {
    /// Reads and hashes the component at `path` (blocking: call off the async workers).
    pub fn read(path: &Path) -> Result<Self, CompileError> {
        Self::read_since(path, None)
    }

    /// Reads the component at `path`, and hashes it unless `serving` (the stamp and hex
    /// sha256 of the version serving from this file) still describes it: then that digest is
    /// taken (blocking: call off the async workers).
    pub fn read_since(
        path: &Path,
        serving: Option<(FileStamp, &str)>,
    ) -> Result<Self, CompileError> {
        Self::read_at(path, serving, SystemTime::now())
    }

    fn read_at(
        path: &Path,
        serving: Option<(FileStamp, &str)>,
        now: SystemTime,
    ) -> Result<Self, CompileError> {
        let io = |e: std::io::Error| CompileError::Io(format!("{}: {e}", path.display()));
        let before = FileStamp::of(&std::fs::metadata(path).map_err(io)?);
        let bytes = std::fs::read(path).map_err(io)?;
        let after = FileStamp::of(&std::fs::metadata(path).map_err(io)?);
        // Written while it was read: hashed, and no stamp noted.
        let steady = before == after && after.len == bytes.len() as u64;
        let stamp = (steady && after.settled(now)).then_some(after);
        let known = serving
            .filter(|(old, _)| stamp == Some(*old))
            .and_then(|(_, sha256)| digest_of_hex(sha256));
        let digest = match known {
            Some(digest) => digest,
            None => Sha256::digest(&bytes).into(),
        };
        Ok(Self {
            bytes,
            digest,
            stamp,
        })
    }

    /// Hex sha256 of the bytes.
    pub fn sha256(&self) -> String {
        hex::encode(self.digest)
    }

    /// How many bytes the component has.
    pub fn size(&self) -> usize {
        self.bytes.len()
    }

    /// The file's stamp, when it was settled as it was read.
    pub fn stamp(&self) -> Option<FileStamp> {
        self.stamp
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub(crate) fn digest(&self) -> &[u8; 32] {
        &self.digest
    }
}

fn digest_of_hex(sha256: &str) -> Option<[u8; 32]> {
    hex::decode(sha256).ok()?.try_into().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const WRONG: &str = "0000000000000000000000000000000000000000000000000000000000000000";

    fn sha(bytes: &[u8]) -> String {
        hex::encode(Sha256::digest(bytes))
    }

    fn later() -> SystemTime {
        SystemTime::now() + SETTLE + Duration::from_secs(1)
    }

    #[test]
    fn a_file_written_just_before_its_read_notes_no_stamp_and_is_always_hashed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("c.wasm");
        std::fs::write(&path, b"component one").expect("write");
        let fresh = ComponentFile::read(&path).expect("read");
        assert_eq!(fresh.stamp(), None, "a file changed now is not settled");
        assert_eq!(fresh.sha256(), sha(b"component one"));
    }

    #[test]
    fn a_settled_unchanged_file_takes_the_serving_digest_and_a_rewrite_is_hashed_again() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("c.wasm");
        std::fs::write(&path, b"component one").expect("write");
        let first = ComponentFile::read_at(&path, None, later()).expect("read");
        let stamp = first.stamp().expect("settled when read later");
        assert_eq!(first.sha256(), sha(b"component one"));

        // Allowed: the same stamp takes the serving version's digest without hashing. A digest
        // that no bytes have proves it was taken, not computed.
        let kept = ComponentFile::read_at(&path, Some((stamp, WRONG)), later()).expect("read");
        assert_eq!(kept.sha256(), WRONG);

        // Denied: a rewrite of the same length, even with its modification time put back,
        // has another change time, so it is hashed.
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(&path, b"component two").expect("rewrite");
        let file = std::fs::File::options()
            .write(true)
            .open(&path)
            .expect("open");
        let old_mtime = SystemTime::UNIX_EPOCH
            + Duration::new(
                u64::try_from(stamp.mtime.0).expect("after 1970"),
                u32::try_from(stamp.mtime.1).expect("nanoseconds"),
            );
        file.set_modified(old_mtime).expect("set mtime back");
        drop(file);
        let changed = ComponentFile::read_at(&path, Some((stamp, WRONG)), later()).expect("read");
        assert_eq!(changed.sha256(), sha(b"component two"));
        assert_ne!(changed.stamp(), Some(stamp));

        // Denied: another file at the same path (a new inode) is hashed.
        std::fs::remove_file(&path).expect("remove");
        std::fs::write(&path, b"component one").expect("write again");
        let replaced = ComponentFile::read_at(&path, Some((stamp, WRONG)), later()).expect("read");
        assert_eq!(replaced.sha256(), sha(b"component one"));
    }

    #[test]
    fn a_change_time_the_file_system_does_not_keep_is_never_settled() {
        let stamp = |ctime| FileStamp {
            dev: 1,
            ino: 2,
            len: 3,
            mtime: (0, 0),
            ctime,
        };
        assert!(
            stamp((1_000, 0)).settled(later()),
            "allowed: a real, old change time"
        );
        assert!(!stamp((0, 0)).settled(later()), "denied: zero");
        assert!(!stamp((-5, 0)).settled(later()), "denied: before 1970");
        assert!(
            !stamp((1_000, 2_000_000_000)).settled(later()),
            "denied: bad nanoseconds"
        );
    }

    #[test]
    fn a_digest_that_is_not_hex_is_never_taken() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("c.wasm");
        std::fs::write(&path, b"component one").expect("write");
        let first = ComponentFile::read_at(&path, None, later()).expect("read");
        let stamp = first.stamp().expect("settled");
        let read = ComponentFile::read_at(&path, Some((stamp, "not hex")), later()).expect("read");
        assert_eq!(read.sha256(), first.sha256());
    }
}

//! The on-disk compile cache: entries bound to their component and authenticated.
//!
//! `Component::deserialize` runs whatever machine code the artifact holds, so an entry is
//! trusted only after two checks, both made before wasmtime sees a byte of it:
//! - its trailer names the sha256 of the `.wasm` it was compiled from and the engine's
//!   compatibility key, and both must be the ones being loaded (a renamed entry of another
//!   component fails here);
//! - a keyed BLAKE3 tag over artifact and trailer, keyed with 32 random bytes the host keeps next
//!   to the cache folder (`<cache>.key`, created 0600 on first use), must verify (a changed byte,
//!   or an entry written by anyone without the key, fails here).
//!
//! An entry that fails is discarded with a warning and the component is compiled again. The key
//! lives outside the cache folder so that a cache restored from elsewhere never brings its own.
//!
//! The same format, with its own magic (`GUILDRF1`), holds a remembered refusal
//! ([`super::refusal`]): its body is the refusal's text instead of an artifact, and one kind can
//! never be read as the other.
//!
//! File layout: artifact | `GUILDCW2` | wasm sha256 (32) | engine key (16) | artifact length
//! (u64 LE) | tag (32). The artifact comes first so that wasmtime can map the verified file
//! itself (it ignores bytes after the artifact's last section) instead of copying it: BLAKE3
//! streams the file once through a small buffer at several GB/s, where HMAC-SHA256 over an
//! in-memory copy made host start 6× slower.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;

/// What an entry holds; each kind has its own magic, checked under the tag.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// Compiled code (`.cwasm`).
    Artifact,
    /// A remembered refusal (`.refused`).
    Refusal,
}

impl Kind {
    fn magic(self) -> &'static [u8; 8] {
        match self {
            Kind::Artifact => b"GUILDCW2",
            Kind::Refusal => b"GUILDRF1",
        }
    }
}

const MAGIC_LEN: usize = 8;
const KEY_LEN: usize = 32;
const TAG_LEN: usize = 32;
const ENGINE_KEY_LEN: usize = 16;
/// The trailer without its tag.
const FIELDS_LEN: usize = MAGIC_LEN + 32 + ENGINE_KEY_LEN + 8;
const TRAILER_LEN: usize = FIELDS_LEN + TAG_LEN;

/// The disk cache of one engine: its folder and its authentication key.
pub(super) struct DiskCache {
    dir: PathBuf,
    key: [u8; KEY_LEN],
    engine_key: [u8; ENGINE_KEY_LEN],
}

/// Why a cache entry was not used.
#[derive(Debug, thiserror::Error)]
pub(super) enum Rejected {
    #[error("cannot read: {0}")]
    Io(std::io::Error),
    #[error("not a Guild cache entry (bad trailer or length)")]
    Malformed,
    #[error("compiled from other component bytes (sha256 {0})")]
    OtherComponent(String),
    #[error("compiled by another engine configuration")]
    OtherEngine,
    #[error("authentication failed (changed, or written without this host's key)")]
    BadTag,
}

/// An entry that verified: the open file (read from here on, never the path again, so a rename
/// after the check changes nothing) and the length of the artifact at its start.
pub(super) struct Verified {
    pub(super) file: File,
    pub(super) artifact_len: u64,
}

impl DiskCache {
    /// Opens the cache in `dir`, creating its key file `<dir>.key` on first use.
    pub(super) fn open(dir: PathBuf, engine_key: &str) -> anyhow::Result<Self> {
        let engine_key: [u8; ENGINE_KEY_LEN] = engine_key
            .as_bytes()
            .try_into()
            .context("engine key has an unexpected length")?;
        let key = load_or_create_key(&key_file(&dir))?;
        Ok(Self {
            dir,
            key,
            engine_key,
        })
    }

    /// The cache folder.
    pub(super) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The entry file of the component whose `.wasm` has this hex sha256.
    pub(super) fn entry(&self, sha256: &str) -> PathBuf {
        let engine_key = String::from_utf8_lossy(&self.engine_key);
        self.dir.join(format!("{sha256}-{engine_key}.cwasm"))
    }

    /// The refusal file of the component with this hex sha256 under the limits `limits_key`.
    pub(super) fn refusal_entry(&self, sha256: &str, limits_key: &str) -> PathBuf {
        let engine_key = String::from_utf8_lossy(&self.engine_key);
        self.dir
            .join(format!("{sha256}-{engine_key}-{limits_key}.refused"))
    }

    /// The entry `file`, if it is bound to `sha256` and authentic. Only an entry returned from
    /// here may be deserialised.
    pub(super) fn read(
        &self,
        path: &Path,
        sha256: &[u8; 32],
        kind: Kind,
    ) -> Result<Option<Verified>, Rejected> {
        let mut file = match File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Rejected::Io(e)),
        };
        let len = file.metadata().map_err(Rejected::Io)?.len();
        if len < TRAILER_LEN as u64 {
            return Err(Rejected::Malformed);
        }
        let mut trailer = [0u8; TRAILER_LEN];
        file.seek(SeekFrom::Start(len - TRAILER_LEN as u64))
            .and_then(|_| file.read_exact(&mut trailer))
            .map_err(Rejected::Io)?;
        let (fields, tag) = trailer.split_at(FIELDS_LEN);
        let mut artifact_len = [0u8; 8];
        artifact_len.copy_from_slice(&fields[FIELDS_LEN - 8..]);
        let artifact_len = u64::from_le_bytes(artifact_len);
        if &fields[..MAGIC_LEN] != kind.magic() || artifact_len != len - TRAILER_LEN as u64 {
            return Err(Rejected::Malformed);
        }
        // One streaming pass over artifact and fields; the file's own tag is never hashed.
        file.seek(SeekFrom::Start(0)).map_err(Rejected::Io)?;
        let mut hasher = blake3::Hasher::new_keyed(&self.key);
        hasher
            .update_reader((&mut file).take(artifact_len))
            .map_err(Rejected::Io)?;
        hasher.update(fields);
        let tag: [u8; TAG_LEN] = tag.try_into().map_err(|_| Rejected::Malformed)?;
        // `blake3::Hash` compares in constant time.
        if hasher.finalize() != blake3::Hash::from(tag) {
            return Err(Rejected::BadTag);
        }
        // Authentic, so the trailer is ours: now check it is for this component and engine.
        let bound = &fields[MAGIC_LEN..MAGIC_LEN + 32];
        if bound != sha256 {
            return Err(Rejected::OtherComponent(hex::encode(bound)));
        }
        if fields[MAGIC_LEN + 32..MAGIC_LEN + 32 + ENGINE_KEY_LEN] != self.engine_key {
            return Err(Rejected::OtherEngine);
        }
        Ok(Some(Verified { file, artifact_len }))
    }

    /// Writes `artifact` (compiled from the `.wasm` with this sha256) as an authenticated entry,
    /// private to the host's user, atomically (temporary file, then rename).
    pub(super) fn write(
        &self,
        file: &Path,
        sha256: &[u8; 32],
        artifact: &[u8],
        kind: Kind,
    ) -> anyhow::Result<()> {
        std::fs::create_dir_all(&self.dir)
            .with_context(|| format!("failed to create {}", self.dir.display()))?;
        let mut fields = Vec::with_capacity(FIELDS_LEN);
        fields.extend_from_slice(kind.magic());
        fields.extend_from_slice(sha256);
        fields.extend_from_slice(&self.engine_key);
        fields.extend_from_slice(&(artifact.len() as u64).to_le_bytes());
        let mut hasher = blake3::Hasher::new_keyed(&self.key);
        hasher.update(artifact);
        hasher.update(&fields);
        let tag = hasher.finalize();
        let tmp = file.with_extension(format!("tmp-{}", uuid::Uuid::new_v4().simple()));
        let mut out = private_options()
            .open(&tmp)
            .with_context(|| format!("failed to create {}", tmp.display()))?;
        let written = out
            .write_all(artifact)
            .and_then(|()| out.write_all(&fields))
            .and_then(|()| out.write_all(tag.as_bytes()));
        drop(out);
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(e).with_context(|| format!("failed to write {}", tmp.display()));
        }
        std::fs::rename(&tmp, file)
            .with_context(|| format!("failed to rename into {}", file.display()))?;
        Ok(())
    }
}

/// A new file only the host's user can read (0600 on unix).
fn private_options() -> std::fs::OpenOptions {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
}

/// `DIR.key` next to the cache folder `DIR`.
fn key_file(dir: &Path) -> PathBuf {
    let mut name = dir.file_name().unwrap_or_default().to_owned();
    name.push(".key");
    dir.with_file_name(name)
}
/// Reads the key, or creates it: 32 random bytes, written to a private temporary file and then
/// hard-linked into place, so concurrent hosts agree on one key and none reads a partial one.
fn load_or_create_key(file: &Path) -> anyhow::Result<[u8; KEY_LEN]> {
    if let Some(key) = read_key(file)? {
        return Ok(key);
    }
    let dir = file.parent().context("key file has no folder")?;
    std::fs::create_dir_all(dir).with_context(|| format!("failed to create {}", dir.display()))?;
    let mut key = [0u8; KEY_LEN];
    getrandom::fill(&mut key)
        .map_err(|e| anyhow::anyhow!("no randomness for the cache key: {e}"))?;
    let tmp = file.with_extension(format!("key-tmp-{}", uuid::Uuid::new_v4().simple()));
    let written = private_options()
        .open(&tmp)
        .and_then(|mut f| f.write_all(&key).and_then(|()| f.sync_all()));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("failed to write {}", tmp.display()));
    }
    let linked = if file.exists() {
        // There but unusable (wrong length): replace it; old entries then fail and recompile.
        tracing::warn!(file = %file.display(), "replacing an unusable compile cache key");
        std::fs::rename(&tmp, file)
    } else {
        let r = std::fs::hard_link(&tmp, file);
        let _ = std::fs::remove_file(&tmp);
        r
    };
    match linked {
        Ok(()) => {}
        // Another host created it first: use theirs.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e).with_context(|| format!("failed to create {}", file.display())),
    }
    read_key(file)?.with_context(|| format!("{} is not a 32-byte key", file.display()))
}

fn read_key(file: &Path) -> anyhow::Result<Option<[u8; KEY_LEN]>> {
    match std::fs::read(file) {
        Ok(bytes) => Ok(bytes.try_into().ok()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("failed to read {}", file.display())),
    }
}

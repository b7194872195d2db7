//! The head anchor: the sequence and hash of the last committed entry, kept in a small file
//! beside the ledger (`receipts.head` for `receipts.db`).
//!
//! A hash chain alone cannot tell a ledger whose last entries were deleted, or a database
//! replaced by an older copy, from an intact one: both are valid chains. The anchor lives
//! outside the database, so [`super::Ledger::verify`] can check that the chain still reaches
//! the entry it names. It is rewritten in place, under a lock its readers share, after every
//! committed append (see [`write`] for why not a renamed temporary file). An anchor *behind* the database is harmless (two processes appending, or
//! a crash between the commit and the anchor write); one *ahead* of it means entries are gone.
//!
//! Every write transaction checks the anchor first ([`check`]): a ledger that no longer
//! reaches its anchor is refused for writing, so the next append cannot move the anchor past
//! the gap and make `verify` say "ok" again. The operator accepts such a ledger deliberately
//! with `guild receipts accept-head` ([`super::Ledger::accept_head_of_file`]), which records what was
//! found as an audit entry before it moves the anchor.
//!
//! It guards against accidents and careless tools, not against someone who can rewrite both
//! files: the hash is no secret.

use std::io::Write;
use std::path::{Path, PathBuf};

/// First word of an anchor file, with its format version.
const MAGIC: &str = "guild-ledger-head v1";

/// What the anchor records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Head {
    pub(crate) seq: u64,
    pub(crate) hash: String,
}

/// The anchor file of a ledger file.
pub(crate) fn path_for(db: &Path) -> PathBuf {
    db.with_extension("head")
}

/// Where the chain stands against its anchor: `None` when it reaches the entry the anchor
/// records with the hash it records (or goes beyond it), else the sequence of the first
/// missing or different entry and what was found. `ends_at` is the last sequence of the
/// ledger, `hash_at_anchor` the hash of its entry `head.seq`, if it has one.
pub(crate) fn compare(
    head: &Head,
    ends_at: u64,
    hash_at_anchor: Option<&str>,
    file: &Path,
) -> Option<(u64, String)> {
    let file = file.display();
    match hash_at_anchor {
        _ if head.seq == 0 => None,
        None => Some((
            ends_at + 1,
            format!(
                "the ledger ends at entry {ends_at} but its head anchor {file} records entry {} \
                 (hash {}): entries {}..={} were removed from the end, or the database was \
                 replaced by an older copy",
                head.seq,
                head.hash,
                ends_at + 1,
                head.seq
            ),
        )),
        Some(found) if found != head.hash => Some((
            head.seq,
            format!(
                "entry {} has hash {found}, but the head anchor {file} records {}: the ledger \
                 was rewritten or replaced by another copy",
                head.seq, head.hash
            ),
        )),
        Some(_) => None,
    }
}

/// What a write must not go past: the anchor is unreadable, or the ledger no longer reaches it
/// ([`compare`]). `ends_at` is the ledger's last sequence; `hash_at(seq)` reads one entry's hash.
pub(crate) fn check(
    path: &Path,
    ends_at: u64,
    hash_at: impl FnOnce(u64) -> Result<Option<String>, super::LedgerError>,
) -> Result<Option<String>, super::LedgerError> {
    let head = match read(path) {
        Ok(Some(head)) => head,
        Ok(None) if ends_at == 0 => return Ok(None),
        Ok(None) => return Ok(Some(missing(path, ends_at))),
        Err(why) => {
            return Ok(Some(format!(
                "its head anchor {} is unreadable ({why})",
                path.display()
            )));
        }
    };
    let found = if head.seq <= ends_at {
        hash_at(head.seq)?
    } else {
        None
    };
    Ok(compare(&head, ends_at, found.as_deref(), path).map(|(_, why)| why))
}

/// Why a ledger of `ends_at` entries without its anchor file is not trusted: the anchor is
/// written when the ledger is created, before its first entry, and only ever replaced.
pub(crate) fn missing(path: &Path, ends_at: u64) -> String {
    format!(
        "its head anchor {} is missing, though the ledger holds {ends_at} entries: the anchor \
         was deleted, or the ledger was copied without it",
        path.display()
    )
}

/// Prefix of the temporary files [`write`] renames into place, for the anchor at `path`.
fn temp_prefix(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_string_lossy().into_owned();
    Some(format!(".{name}.new-"))
}

/// Removes the temporary files a killed [`write`] left beside the anchor: only names of
/// exactly its pattern (`.receipts.head.new-` and 32 hex digits), only regular files, and only
/// when they are empty or hold an anchor line (what a kill between create, write and rename
/// leaves). Anything else is left alone. A concurrent writer whose file is removed here fails
/// its rename, which is logged and leaves the anchor behind the database: harmless.
/// Returns how many were removed.
pub(crate) fn remove_leftovers(path: &Path) -> usize {
    let (Some(dir), Some(prefix)) = (path.parent(), temp_prefix(path)) else {
        return 0;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(suffix) = name.to_str().and_then(|n| n.strip_prefix(prefix.as_str())) else {
            continue;
        };
        if suffix.len() != 32 || !suffix.bytes().all(|b| b.is_ascii_hexdigit()) {
            continue;
        }
        let file = entry.path();
        // `symlink_metadata`: a symlink with this name is not ours and is never followed.
        let Ok(meta) = std::fs::symlink_metadata(&file) else {
            continue;
        };
        let ours = meta.is_file()
            && (meta.len() == 0 || (meta.len() <= 256 && matches!(read(&file), Ok(Some(_)))));
        if ours && std::fs::remove_file(&file).is_ok() {
            tracing::info!(file = %file.display(), "removed a head anchor left half-written");
            removed += 1;
        }
    }
    removed
}

/// The anchor file's text, read under a shared lock so that a rewrite in progress ([`write`])
/// is not seen half done.
fn read_locked(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    // A file that cannot be locked (a filesystem without locks) is read as it is.
    let _ = file.lock_shared();
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    Ok(text)
}

/// `Ok(None)` when there is no anchor; `Err` with the reason when it cannot be read.
pub(crate) fn read(path: &Path) -> Result<Option<Head>, String> {
    let text = match read_locked(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let mut words = text.split_whitespace();
    let magic = [words.next(), words.next()];
    if magic != [Some("guild-ledger-head"), Some("v1")] {
        return Err(format!("it does not start with {MAGIC:?}"));
    }
    let seq = words
        .next()
        .and_then(|s| s.parse::<u64>().ok())
        .ok_or("its sequence is missing or not a number")?;
    let hash = words
        .next()
        .filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
        .ok_or("its hash is missing or not 64 hex digits")?;
    if words.next().is_some() {
        return Err("it has trailing words".into());
    }
    Ok(Some(Head {
        seq,
        hash: hash.to_owned(),
    }))
}

/// Moves the anchor to `head`: rewrites the record in place, under an exclusive lock that
/// readers share ([`read`]), so a reader sees the old record or the new one, never a mix.
///
/// In place, not a new file renamed over the old one: on ext4 each rename started writeback of
/// the new file and freed the old one's block (a discard with the `discard` mount option), I/O
/// that the ledger's next fsync then waited behind. Measured on this project's machine, a commit
/// followed by a renamed anchor took about twice as long as the commit alone, one followed by
/// an in-place write about as long (docs/performance.md, "Receipts"). Every record has the same
/// length (the sequence is zero-padded), so a rewrite covers the whole previous record.
///
/// Something other than a regular file at `path` (a symlink, never followed) is replaced
/// by a new file as before.
pub(crate) fn write(path: &Path, head: &Head) -> std::io::Result<()> {
    match write_in_place(path, head) {
        Ok(true) => Ok(()),
        Ok(false) => replace(path, head),
        Err(e) if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => {
            replace(path, head)
        }
        Err(e) => Err(e),
    }
}

/// The anchor's one line, `MAGIC SEQ HASH`, with the sequence zero-padded to 20 digits (the
/// width of `u64::MAX`) so that every record has the same length. Readers parse the padded
/// number as any other.
fn record(head: &Head) -> String {
    format!("{MAGIC} {:020} {}\n", head.seq, head.hash)
}

/// Rewrites a regular anchor file in place, creating it if absent; `Ok(false)` when `path` is
/// something else (not written).
fn write_in_place(path: &Path, head: &Head) -> std::io::Result<bool> {
    use std::os::unix::fs::{FileExt, OpenOptionsExt};
    let record = record(head);
    // No symlink is followed; `NONBLOCK` keeps a FIFO planted at the path from blocking the
    // open (it has no effect on a regular file).
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o644)
        .custom_flags(flags.bits() as i32)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Ok(false);
    }
    // Best effort, as in `read_locked`: a filesystem without locks still gets the record.
    let _ = file.lock();
    file.write_all_at(record.as_bytes(), 0)?;
    // Only a file left by an older build (unpadded, shorter) or a foreign one differs.
    if file.metadata()?.len() != record.len() as u64 {
        file.set_len(record.len() as u64)?;
    }
    // Not fsynced: that would cost more than the ledger's own commit (measured: one-by-one
    // appends at 28/s instead of 74/s). A power loss can leave the anchor behind the database
    // (harmless). Closing the file releases the lock.
    Ok(true)
}

/// Replaces whatever is at `path` with a new anchor file: written beside it, renamed over it.
fn replace(path: &Path, head: &Head) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let prefix = temp_prefix(path).unwrap_or_else(|| ".head.new-".to_owned());
    let tmp = dir.join(format!("{prefix}{}", uuid::Uuid::now_v7().simple()));
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(record(head).as_bytes())?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

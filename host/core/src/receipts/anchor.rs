//! The head anchor: the sequence and hash of the last committed entry, kept in a small file
//! beside the ledger (`receipts.head` for `receipts.db`).
//!
//! A hash chain alone cannot tell a ledger whose last entries were deleted, or a database
//! replaced by an older copy, from an intact one: both are valid chains. The anchor lives
//! outside the database, so [`super::Ledger::verify`] can check that the chain still reaches
//! the entry it names. It is replaced atomically (temporary file, rename) after every
//! committed append. An anchor *behind* the database is harmless (two processes appending, or
//! a crash between the commit and the anchor write); one *ahead* of it means entries are gone.
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

/// `Ok(None)` when there is no anchor; `Err` with the reason when it cannot be read.
pub(crate) fn read(path: &Path) -> Result<Option<Head>, String> {
    let text = match std::fs::read_to_string(path) {
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

/// Replaces the anchor atomically: a reader sees the old or the new one, never a mix.
pub(crate) fn write(path: &Path, head: &Head) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.new-{}", uuid::Uuid::now_v7().simple()));
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        writeln!(f, "{MAGIC} {} {}", head.seq, head.hash)?;
        // Not fsynced: that would cost more than the ledger's own commit (measured: one-by-one
        // appends at 28/s instead of 74/s). A power loss can leave the anchor behind the
        // database (harmless) or, rarely, empty; verify then reports it unreadable and says
        // to delete it.
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

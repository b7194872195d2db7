//! Telling a full disk from other storage errors, so that a store that cannot be opened or
//! written for lack of space says so instead of "disk I/O error".
//!
//! SQLite reports a full disk as `SQLITE_FULL` only when a write of its own fails with
//! `ENOSPC`; when the disk is already full at open, the failure comes earlier, creating or
//! growing the `-wal` or `-shm` file beside the database, and reads as `SQLITE_IOERR` or
//! `SQLITE_CANTOPEN` with no errno attached. Those two are taken for a full disk only when the
//! filesystem holding the file has (almost) no space left for this user.

use std::path::Path;

use rusqlite::ErrorCode;

/// Below this many bytes available, an I/O error of SQLite is taken for a full disk: SQLite
/// needs a few pages for its write-ahead log and shared-memory index.
const NEARLY_FULL: u64 = 1 << 20;

/// Bytes available to this user on the filesystem holding `path` (`None` when unknown).
pub fn available(path: &Path) -> Option<u64> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let stat = rustix::fs::statvfs(dir).ok()?;
    Some(stat.f_bavail.saturating_mul(stat.f_frsize))
}

/// `Some(bytes available)` when `error`, from a step on the database at `path`, means the
/// disk is full (see the module doc).
pub fn sqlite_full(path: &Path, error: &rusqlite::Error) -> Option<Option<u64>> {
    match error.sqlite_error_code()? {
        ErrorCode::DiskFull => Some(available(path)),
        ErrorCode::SystemIoFailure | ErrorCode::CannotOpen => {
            let free = available(path)?;
            (free < NEARLY_FULL).then_some(Some(free))
        }
        _ => None,
    }
}

/// `Some(bytes available)` when `error` is `ENOSPC` or `EDQUOT` (no space, or the user's
/// disk quota is used up).
pub fn io_full(path: &Path, error: &std::io::Error) -> Option<Option<u64>> {
    let code = error.raw_os_error()?;
    let full = [rustix::io::Errno::NOSPC, rustix::io::Errno::DQUOT]
        .iter()
        .any(|e| e.raw_os_error() == code);
    full.then(|| available(path))
}

/// "12 KiB available" or "no space available", for messages.
pub fn describe(available: Option<u64>) -> String {
    match available {
        Some(0) => "no space available".to_owned(),
        Some(n) if n < 1024 => format!("{n} bytes available"),
        Some(n) => format!("{} KiB available", n / 1024),
        None => "space available unknown".to_owned(),
    }
}

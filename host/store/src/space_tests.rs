//! Tests of the disk-full mapping: which storage errors are said as "the disk is full" and
//! which are left as they were. (A real full disk is a small tmpfs; it cannot be mounted in
//! every test environment, so these feed the errors SQLite and the system give then.)

use std::path::PathBuf;

use rusqlite::ffi;

use super::DbFileError;

fn sqlite_error(code: i32) -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(ffi::Error::new(code), None)
}

fn ledger_here() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("receipts.db");
    (dir, path)
}

#[test]
fn sqlite_full_is_said_as_a_full_disk() {
    let (_dir, path) = ledger_here();
    let e = DbFileError::from_sqlite(
        "receipts ledger",
        path.clone(),
        "read the application id of",
        sqlite_error(ffi::SQLITE_FULL),
    );
    assert!(matches!(e, DbFileError::DiskFull { .. }), "{e:?}");
    let message = e.to_string();
    assert!(
        message.contains("the disk is full") && message.contains("receipts.db"),
        "{message}"
    );
}

#[test]
fn an_io_error_with_space_left_is_not_a_full_disk() {
    // The temporary folder has space: a disk I/O error there is something else.
    let (_dir, path) = ledger_here();
    for code in [ffi::SQLITE_IOERR, ffi::SQLITE_CANTOPEN, ffi::SQLITE_BUSY] {
        let e = DbFileError::from_sqlite(
            "receipts ledger",
            path.clone(),
            "read the application id of",
            sqlite_error(code),
        );
        assert!(matches!(e, DbFileError::Sqlite { .. }), "{code}: {e:?}");
        assert!(!e.to_string().contains("disk is full"), "{e}");
    }
}

#[test]
fn enospc_and_edquot_are_a_full_disk_other_errnos_are_not() {
    let (_dir, path) = ledger_here();
    for errno in [rustix::io::Errno::NOSPC, rustix::io::Errno::DQUOT] {
        let e = std::io::Error::from_raw_os_error(errno.raw_os_error());
        assert!(super::space::io_full(&path, &e).is_some(), "{e}");
    }
    for errno in [rustix::io::Errno::ACCESS, rustix::io::Errno::IO] {
        let e = std::io::Error::from_raw_os_error(errno.raw_os_error());
        assert!(super::space::io_full(&path, &e).is_none(), "{e}");
    }
    assert!(super::space::io_full(&path, &std::io::Error::other("x")).is_none());
}

#[test]
fn available_space_is_described() {
    use super::space::describe;
    assert_eq!(describe(Some(0)), "no space available");
    assert_eq!(describe(Some(512)), "512 bytes available");
    assert_eq!(describe(Some(8192)), "8 KiB available");
    assert_eq!(describe(None), "space available unknown");
}

//! Tests of the head anchor as a write guard: a ledger that no longer reaches its anchor is
//! refused for writing (at open and on every later write) until the operator accepts it, and
//! the temporary files a killed anchor write leaves are removed at open, nothing else; the anchor
//! is rewritten in place and never through a symlink.

use std::path::Path;

use rusqlite::Connection;

use super::file_tests::{append, cut_tail, ledger_in};
use super::*;

fn refused(result: Result<Ledger, LedgerError>) -> String {
    match result {
        Err(e @ LedgerError::HeadMismatch { .. }) => e.to_string(),
        Err(e) => panic!("refused for another reason: {e}"),
        Ok(_) => panic!("a ledger that does not reach its anchor was opened for writing"),
    }
}

fn entries(path: &Path) -> i64 {
    Connection::open(path)
        .expect("raw")
        .query_row("SELECT COUNT(*) FROM entries", [], |r| r.get(0))
        .expect("count")
}

#[test]
fn a_truncated_ledger_is_refused_for_writing_until_accepted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = ledger_in(&dir);
    append(&Ledger::open(&path).expect("open"), 3);
    cut_tail(&path, 2);
    // Denied: the next host start does not append, so verify keeps saying what happened.
    let message = refused(Ledger::open(&path));
    assert!(
        message.contains("ends at entry 4")
            && message.contains("records entry 6")
            && message.contains("guild receipts accept-head"),
        "{message}"
    );
    assert_eq!(entries(&path), 4, "nothing was written");
    let v = verify_file(&path).expect("verify");
    assert!(!v.ok && v.first_bad_sequence == Some(5), "{v}");
    // Allowed, deliberately: the finding becomes an audit entry and the anchor moves to it.
    let accepted = Ledger::accept_head_of_file(&path)
        .expect("accept")
        .expect("there was something to accept");
    assert_eq!(
        (accepted.kind, accepted.sequence),
        (AuditKind::HeadAccepted, 5)
    );
    assert!(accepted.detail.contains("records entry 6"), "{accepted:?}");
    let l = Ledger::open(&path).expect("accepted ledger opens");
    append(&l, 1);
    let v = l.verify().expect("verify");
    assert!(
        v.ok && v.entries == 7 && v.anchored_sequence == Some(7),
        "{v}"
    );
    // Accepting an intact ledger writes nothing.
    assert!(
        Ledger::accept_head_of_file(&path)
            .expect("accept")
            .is_none()
    );
    assert_eq!(entries(&path), 7);
}

#[test]
fn a_ledger_truncated_under_a_running_writer_is_refused_at_its_next_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = ledger_in(&dir);
    let l = Ledger::open(&path).expect("open");
    append(&l, 2);
    cut_tail(&path, 1);
    let begin = l.begin(super::tests::intent("t9", None, 9));
    assert!(
        matches!(begin, Err(LedgerError::HeadMismatch { .. })),
        "{begin:?}"
    );
    let audit = l.audit(AuditKind::GrantChanged, "p@1", "x");
    assert!(
        matches!(audit, Err(LedgerError::HeadMismatch { .. })),
        "{audit:?}"
    );
    let v = l.verify().expect("verify");
    assert!(!v.ok && v.entries == 3, "{v}");
}

#[test]
fn an_older_or_another_copy_swapped_in_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = ledger_in(&dir);
    let l = Ledger::open(&path).expect("open");
    append(&l, 1);
    // A copy of the ledger at entry 2 that goes on on its own (its own folder and anchor).
    let other = tempfile::tempdir().expect("tempdir");
    let fork = ledger_in(&other);
    l.lock()
        .conn
        .execute_batch(&format!("VACUUM INTO '{}'", fork.display()))
        .expect("copy");
    append(&l, 1);
    drop(l);
    // The copy has no anchor of its own: it is accepted as it is, then goes on.
    Ledger::accept_head_of_file(&fork).expect("accept the copy");
    append(&Ledger::open(&fork).expect("fork"), 2);
    // Another copy, as long as the original and longer: entry 4 is not the anchored one.
    std::fs::copy(&fork, &path).expect("swap in");
    let message = refused(Ledger::open(&path));
    assert!(message.contains("entry 4 has hash"), "{message}");
    // An older copy: shorter than the anchor.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = ledger_in(&dir);
    let l = Ledger::open(&path).expect("open");
    append(&l, 1);
    let old = dir.path().join("old.db");
    l.lock()
        .conn
        .execute_batch(&format!("VACUUM INTO '{}'", old.display()))
        .expect("copy");
    append(&l, 1);
    drop(l);
    std::fs::rename(&old, &path).expect("restore the old copy");
    let message = refused(Ledger::open(&path));
    assert!(message.contains("ends at entry 2"), "{message}");
}

#[test]
fn an_anchor_behind_the_ledger_is_allowed() {
    // A crash between a commit and its anchor write, or two processes appending.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = ledger_in(&dir);
    let l = Ledger::open(&path).expect("open");
    append(&l, 1);
    let behind = std::fs::read(dir.path().join("receipts.head")).expect("anchor");
    append(&l, 1);
    drop(l);
    std::fs::write(dir.path().join("receipts.head"), behind).expect("put back");
    let l = Ledger::open(&path).expect("an anchor behind is fine");
    append(&l, 1);
    let v = l.verify().expect("verify");
    assert!(v.ok && v.anchored_sequence == Some(6), "{v}");
}

#[test]
fn a_deleted_or_unreadable_anchor_is_refused_an_empty_ledger_is_not() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = ledger_in(&dir);
    let anchor = dir.path().join("receipts.head");
    // Allowed: a new ledger is anchored at entry 0 before anything is written, and a missing
    // anchor of a ledger with no entries is written again.
    drop(Ledger::open(&path).expect("create"));
    assert!(anchor.exists());
    std::fs::remove_file(&anchor).expect("remove");
    append(&Ledger::open(&path).expect("empty ledger"), 1);
    // Denied: a ledger with entries whose anchor is gone (deleted to hide a truncation).
    std::fs::remove_file(&anchor).expect("remove");
    let message = refused(Ledger::open(&path));
    assert!(message.contains("is missing"), "{message}");
    let v = verify_file(&path).expect("verify");
    assert!(!v.ok, "{v}");
    // Denied: an unreadable anchor.
    std::fs::write(&anchor, "guild-ledger-head v1 two words").expect("torn");
    let message = refused(Ledger::open(&path));
    assert!(message.contains("unreadable"), "{message}");
    assert!(
        Ledger::accept_head_of_file(&path)
            .expect("accept")
            .is_some()
    );
    let v = Ledger::open(&path)
        .expect("accepted")
        .verify()
        .expect("verify");
    assert!(v.ok && v.entries == 3, "{v}");
}

#[test]
fn a_deleted_ledger_whose_anchor_remains_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = ledger_in(&dir);
    append(&Ledger::open(&path).expect("open"), 1);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    let message = refused(Ledger::open(&path));
    assert!(message.contains("ends at entry 0"), "{message}");
}

#[test]
fn leftover_anchor_temporaries_are_removed_at_open_and_nothing_else() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = ledger_in(&dir);
    append(&Ledger::open(&path).expect("open"), 1);
    let hex = |c: char| c.to_string().repeat(32);
    let d = dir.path();
    let ours = [
        // What a kill between create and write leaves, and between write and rename.
        (
            d.join(format!(".receipts.head.new-{}", hex('a'))),
            String::new(),
        ),
        (
            d.join(format!(".receipts.head.new-{}", hex('b'))),
            format!("guild-ledger-head v1 1 {}\n", hex('c').repeat(2)),
        ),
    ];
    let not_ours = [
        (d.join(".receipts.head.new-short"), String::new()),
        (
            d.join(format!(".receipts.head.new-{}x", hex('d'))),
            String::new(),
        ),
        (
            d.join(format!(".receipts.head.new-{}", hex('e'))),
            "notes".into(),
        ),
        (
            d.join(format!("receipts.head.new-{}", hex('f'))),
            String::new(),
        ),
        (
            d.join(format!(".receipts.db.new-{}", hex('a'))),
            String::new(),
        ),
        (
            d.join(format!(".other.head.new-{}", hex('a'))),
            String::new(),
        ),
    ];
    for (file, text) in ours.iter().chain(not_ours.iter()) {
        std::fs::write(file, text).expect("write");
    }
    // A symlink with the pattern, pointing at an empty file elsewhere: never followed.
    let target = tempfile::NamedTempFile::new().expect("target");
    let link = d.join(format!(".receipts.head.new-{}", hex('9')));
    std::os::unix::fs::symlink(target.path(), &link).expect("symlink");
    drop(Ledger::open(&path).expect("open"));
    for (file, _) in &ours {
        assert!(!file.exists(), "{} was left", file.display());
    }
    for (file, _) in &not_ours {
        assert!(file.exists(), "{} was removed", file.display());
    }
    assert!(link.symlink_metadata().is_ok() && target.path().exists());
}

#[test]
fn the_anchor_is_rewritten_in_place_and_a_symlink_there_is_never_written_through() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = ledger_in(&dir);
    let anchor = dir.path().join("receipts.head");
    let l = Ledger::open(&path).expect("open");
    append(&l, 1);
    let inode = std::fs::metadata(&anchor).expect("anchor").ino();
    let first = std::fs::read_to_string(&anchor).expect("anchor");
    append(&l, 2);
    let second = std::fs::read_to_string(&anchor).expect("anchor");
    // The same file, a record of the same length, now at the later head.
    assert_eq!(std::fs::metadata(&anchor).expect("anchor").ino(), inode);
    assert_eq!(first.len(), second.len(), "{first:?} {second:?}");
    let head = anchor::read(&anchor).expect("readable").expect("present");
    assert_eq!(head.seq, l.verify().expect("verify").entries);
    // A shorter record an earlier build wrote is overwritten whole, not left with a tail.
    std::fs::write(
        &anchor,
        format!("guild-ledger-head v1 {} {}\n", head.seq, head.hash),
    )
    .expect("unpadded");
    append(&l, 1);
    let v = l.verify().expect("verify");
    assert!(v.ok && v.anchored_sequence == Some(v.entries), "{v}");
    // Denied: writing through a symlink planted at the anchor's path. The symlink is replaced
    // by an anchor file; the file it pointed at is untouched.
    let elsewhere = dir.path().join("elsewhere.txt");
    std::fs::write(&elsewhere, "not an anchor").expect("target");
    let text = std::fs::read_to_string(&anchor).expect("anchor");
    std::fs::remove_file(&anchor).expect("remove");
    std::fs::write(dir.path().join("copy.head"), &text).expect("copy");
    std::os::unix::fs::symlink(dir.path().join("copy.head"), &anchor).expect("symlink");
    append(&l, 1);
    assert!(!anchor.symlink_metadata().expect("anchor").is_symlink());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("copy.head")).expect("copy"),
        text
    );
    assert_eq!(
        std::fs::read_to_string(&elsewhere).expect("target"),
        "not an anchor"
    );
    let v = l.verify().expect("verify");
    assert!(v.ok && v.anchored_sequence == Some(v.entries), "{v}");
}

//! The SQLite memory store against the store contract, its file marks, and [`Memory`]'s
//! update, history and restore flows.

use std::sync::Arc;

use super::*;
use crate::config::MemorySettings;

fn settings() -> MemorySettings {
    MemorySettings {
        workspace: Some("acme".into()),
        user: Some("ana".into()),
    }
}

fn memory() -> Memory {
    let store = SqliteMemoryStore::open_in_memory().expect("in-memory store");
    Memory::new(Arc::new(store), settings())
}

fn stored(outcome: UpdateOutcome) -> (VersionInfo, Vec<String>) {
    match outcome {
        UpdateOutcome::Stored {
            version, warnings, ..
        } => (version, warnings),
        other => panic!("expected a stored version, got {other:?}"),
    }
}

#[test]
fn sqlite_store_keeps_the_store_contract() {
    conformance::run(&|| Box::new(SqliteMemoryStore::open_in_memory().expect("store")));
    let dir = tempfile::tempdir().expect("tempdir");
    let n = std::sync::atomic::AtomicUsize::new(0);
    conformance::run(&|| {
        let i = n.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let path = dir.path().join(format!("memory-{i}.db"));
        Box::new(SqliteMemoryStore::open(path).expect("file store"))
    });
}

#[test]
fn versions_survive_reopening_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(MEMORY_FILE);
    let doc = DocId::new(Scope::Team, "acme");
    let new = NewVersion {
        text: "## A\n".into(),
        actor: "supervisor".into(),
        restored_from: None,
    };
    let info = SqliteMemoryStore::open(&path)
        .expect("create")
        .append(&doc, None, new)
        .expect("append");
    let again = SqliteMemoryStore::open(&path).expect("reopen");
    let current = again.current(&doc).expect("read").expect("kept");
    assert_eq!((current.info, current.text.as_str()), (info, "## A\n"));
}

#[test]
fn an_empty_or_foreign_file_is_refused_never_adopted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").expect("write");
    let err = SqliteMemoryStore::open(&empty)
        .err()
        .expect("empty file refused")
        .to_string();
    assert!(
        err.contains("memory store") && err.contains("empty file"),
        "{err}"
    );

    let foreign = dir.path().join("foreign.db");
    rusqlite::Connection::open(&foreign)
        .and_then(|c| c.execute_batch("CREATE TABLE notes (x TEXT);"))
        .expect("foreign db");
    let err = SqliteMemoryStore::open(&foreign)
        .err()
        .expect("foreign refused")
        .to_string();
    assert!(err.contains("did not create"), "{err}");

    let ledger = dir.path().join("receipts.db");
    drop(crate::receipts::Ledger::open(&ledger).expect("ledger"));
    let err = SqliteMemoryStore::open(&ledger)
        .err()
        .expect("ledger refused")
        .to_string();
    assert!(err.contains("application_id"), "{err}");
    // The ledger's own open refuses a memory store the same way.
    let mem = dir.path().join(MEMORY_FILE);
    drop(SqliteMemoryStore::open(&mem).expect("memory store"));
    assert!(crate::receipts::Ledger::open(&mem).is_err());
}

#[test]
fn stored_versions_cannot_be_edited_or_deleted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(MEMORY_FILE);
    let store = SqliteMemoryStore::open(&path).expect("store");
    let doc = DocId::new(Scope::Team, "acme");
    let new = NewVersion {
        text: "## A\n".into(),
        actor: "supervisor".into(),
        restored_from: None,
    };
    store.append(&doc, None, new).expect("append");
    let conn = rusqlite::Connection::open(&path).expect("open");
    for sql in ["UPDATE versions SET text = 'x'", "DELETE FROM versions"] {
        let err = conn.execute(sql, []).expect_err("append-only").to_string();
        assert!(err.contains("append-only"), "{sql}: {err}");
    }
}

#[tokio::test]
async fn a_refused_write_leaves_the_stored_version_byte_identical() {
    let memory = memory();
    let text = "## Decisions\n- 2026-01-01: use tabs\n";
    stored(
        memory
            .update(Scope::Team, text, 0, &Actor::Supervisor)
            .await
            .expect("update"),
    );
    let before = memory.read(Scope::Team).await.expect("read");
    for bad in [
        format!("## Decisions\n- 2026-01-01: {}\n", "x".repeat(25_000)),
        "no heading at all, but well over forty characters long".to_owned(),
        "## Decisions\n- 2026-01-01: use tabs\n## Preferences\n- 2026-01-01: mine\n".to_owned(),
    ] {
        match memory
            .update(Scope::Team, &bad, 1, &Actor::Supervisor)
            .await
            .expect("update")
        {
            UpdateOutcome::Refused { errors, .. } => assert!(!errors.is_empty()),
            other => panic!("must be refused: {other:?}"),
        }
        let after = memory.read(Scope::Team).await.expect("read");
        assert_eq!(
            after.text.as_bytes(),
            before.text.as_bytes(),
            "text unchanged"
        );
        assert_eq!(after.version, before.version, "no new version");
    }
    assert_eq!(
        memory
            .history(Scope::Team, 10)
            .await
            .expect("history")
            .len(),
        1
    );
}

#[tokio::test]
async fn updates_are_versioned_shown_and_restored() {
    let memory = memory();
    let v1 = "## Decisions\n- 2026-01-01: use tabs\n";
    let v2 = "## Decisions\n- 2026-01-01: use spaces\n";
    stored(
        memory
            .update(Scope::Team, v1, 0, &Actor::Supervisor)
            .await
            .expect("v1"),
    );
    let actor = Actor::Plugin("scribe@1.0.0".into());
    let (info, _) = stored(memory.update(Scope::Team, v2, 1, &actor).await.expect("v2"));
    assert_eq!((info.version, info.actor.as_str()), (2, "scribe@1.0.0"));
    let history = memory.history(Scope::Team, 10).await.expect("history");
    assert_eq!(
        history.iter().map(|v| v.version).collect::<Vec<_>>(),
        [2, 1]
    );
    assert_eq!(memory.version(Scope::Team, 1).await.expect("v1").text, v1);
    let (restored, _) = stored(
        memory
            .restore(Scope::Team, 1, &Actor::Supervisor)
            .await
            .expect("restore"),
    );
    assert_eq!((restored.version, restored.restored_from), (3, Some(1)));
    assert_eq!(memory.read(Scope::Team).await.expect("read").text, v1);
    // Restoring what is already current is a no-op.
    assert!(matches!(
        memory
            .restore(Scope::Team, 1, &Actor::Supervisor)
            .await
            .expect("restore"),
        UpdateOutcome::NoOp { .. }
    ));
    let err = memory
        .version(Scope::Team, 9)
        .await
        .expect_err("no v9")
        .to_string();
    assert!(err.contains("no version 9 (its newest is 3)"), "{err}");
    // The private document is another document.
    let private = memory.read(Scope::Private).await.expect("read");
    assert_eq!((private.text.as_str(), private.version), ("", None));
}

#[tokio::test]
async fn a_sentinel_stores_nothing() {
    let memory = memory();
    stored(
        memory
            .update(Scope::Private, "## A\n", 0, &Actor::Supervisor)
            .await
            .expect("v1"),
    );
    let outcome = memory
        .update(Scope::Private, "NO_UPDATE", 1, &Actor::Supervisor)
        .await
        .expect("noop");
    assert!(matches!(outcome, UpdateOutcome::NoOp { .. }), "{outcome:?}");
    assert_eq!(
        memory
            .history(Scope::Private, 10)
            .await
            .expect("history")
            .len(),
        1
    );
}

#[tokio::test]
async fn unnamed_workspace_or_user_is_an_error_naming_the_key() {
    let store = SqliteMemoryStore::open_in_memory().expect("store");
    let memory = Memory::new(Arc::new(store), MemorySettings::default());
    let err = memory
        .read(Scope::Team)
        .await
        .expect_err("unnamed")
        .to_string();
    assert_eq!(
        err,
        "no workspace is named for team memory: set `[memory] workspace` in guild.toml or pass --workspace"
    );
    let err = memory
        .update(Scope::Private, "## A\n", 0, &Actor::Supervisor)
        .await
        .expect_err("unnamed")
        .to_string();
    assert!(
        err.contains("`[memory] user`") && err.contains("--user"),
        "{err}"
    );
}

/// A rewriter test double that shortens by answering with a fixed valid document.
struct Shorten;

impl LlmRewriter for Shorten {
    fn rewrite<'a>(&'a self, _text: &'a str, _limit: usize) -> RewriteFuture<'a> {
        Box::pin(async { Ok("## Decisions\n- 2026-01-01: merged\n".to_owned()) })
    }
}

#[tokio::test]
async fn an_over_limit_update_is_rewritten_when_a_rewriter_is_configured() {
    let memory = memory().with_rewriter(Arc::new(Shorten));
    let long = format!("## Decisions\n- 2026-01-01: {}\n", "x".repeat(25_000));
    let (info, warnings) = stored(
        memory
            .update(Scope::Team, &long, 0, &Actor::Supervisor)
            .await
            .expect("update"),
    );
    assert_eq!(warnings[0], REWRITE_NOTICE);
    assert_eq!(info.chars, "## Decisions\n- 2026-01-01: merged\n".len());
}

#[tokio::test]
async fn two_updates_from_the_same_base_store_one_and_refuse_the_other_naming_both_versions() {
    let memory = memory();
    let base = "## Decisions\n- 2026-01-01: use tabs\n";
    stored(
        memory
            .update(Scope::Team, base, 0, &Actor::Supervisor)
            .await
            .expect("v1"),
    );
    // Two writers read version 1 and each merge their own entry into it.
    let first = format!("{base}- 2026-01-02: releases on tuesdays\n");
    let second = format!("{base}- 2026-01-03: no deploys on fridays\n");
    let (v2, _) = stored(
        memory
            .update(Scope::Team, &first, 1, &Actor::Plugin("a@1.0.0".into()))
            .await
            .expect("first writer"),
    );
    assert_eq!(v2.version, 2);
    let err = memory
        .update(Scope::Team, &second, 1, &Actor::Plugin("b@1.0.0".into()))
        .await
        .expect_err("second writer conflicts");
    match &err {
        MemoryError::Conflict { doc, base, current } => {
            assert_eq!(
                (doc.to_string().as_str(), *base, *current),
                ("team:acme", 1, 2)
            );
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    let message = err.to_string();
    assert!(
        message.contains("based on version 1") && message.contains("version 2 is stored now"),
        "{message}"
    );
    // The first writer's entry is kept; nothing else was stored.
    let now = memory.read(Scope::Team).await.expect("read");
    assert_eq!(now.text, first);
    assert_eq!(now.version.expect("version").version, 2);
    // Merged into the version it names, the second write goes through.
    let merged = format!("{first}- 2026-01-03: no deploys on fridays\n");
    let (v3, _) = stored(
        memory
            .update(Scope::Team, &merged, 2, &Actor::Plugin("b@1.0.0".into()))
            .await
            .expect("merged"),
    );
    assert_eq!(v3.version, 3);
    // A base from the future, or 0 on a document that has versions, is a conflict too.
    for stale in [0, 2, 4] {
        assert!(
            matches!(
                memory
                    .update(Scope::Team, &merged, stale, &Actor::Supervisor)
                    .await,
                Err(MemoryError::Conflict { current: 3, .. })
            ),
            "base {stale}"
        );
    }
}

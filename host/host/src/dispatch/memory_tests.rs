//! `TaskScope::memory_read` / `memory_update` on a real specialist instance's grant: allowed
//! and denied pairs, the empty grant, and the receipt every update leaves in the ledger.
//!
//! The specialist is the real probe component under a manifest that requests memory (copied
//! into a temporary plugin folder: the component is the built one, only the request differs).

use std::path::{Path, PathBuf};

use guild_receipts::ReceiptStatus;
use guild_runtime::{EngineOptions, GuildEngine};

use super::{Approval, TaskScope};
use crate::memory::{MemoryError, Scope, UpdateOutcome};
use crate::{Config, Host};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("..")
}

/// A plugin folder `scribe` with the probe's component and a manifest requesting memory.
fn scribe(dir: &Path) -> PathBuf {
    let probe = repo_root().join("plugins/testing/probe/probe.wasm");
    assert!(
        probe.is_file(),
        "{} is missing: run plugins/build.sh first",
        probe.display()
    );
    let folder = dir.join("scribe");
    std::fs::create_dir_all(&folder).expect("plugin folder");
    std::fs::copy(&probe, folder.join("scribe.wasm")).expect("copy component");
    std::fs::write(
        folder.join("plugin.toml"),
        "[plugin]\nname = \"scribe\"\nversion = \"1.0.0\"\nkind = \"specialist\"\n\
         component = \"scribe.wasm\"\n\n[capabilities]\n\
         memory = [\"team:read\", \"team:write\", \"private:read\"]\n",
    )
    .expect("manifest");
    folder
}

async fn host(dir: &Path, extra: &str) -> Host {
    let text = format!(
        "[host]\nplugins = [{:?}]\ndata_dir = \"data\"\n\n[memory]\nworkspace = \"acme\"\nuser = \"ana\"\n\n{extra}",
        scribe(dir).display().to_string()
    );
    let config = Config::parse(&text, &dir.join("guild.toml"), dir).expect("config");
    let engine = GuildEngine::new(EngineOptions {
        cache_dir: Some(repo_root().join("target").join("guild-test-cache")),
        ..EngineOptions::default()
    })
    .expect("engine");
    let host = Host::with_engine(config, engine).await.expect("host");
    assert!(host.load_errors().is_empty(), "{:?}", host.load_errors());
    host
}

fn task(host: &Host, id: &str) -> TaskScope {
    let services = host.services().clone();
    let snapshot = services.snapshot();
    let plugin = snapshot
        .plugins
        .get("scribe")
        .cloned()
        .expect("scribe loaded");
    TaskScope::new(
        id.into(),
        String::new(),
        services,
        plugin,
        snapshot,
        Approval::Ask(None),
        None,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn granted_memory_rights_work_and_updates_are_receipted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let host = host(
        dir.path(),
        "[grants.scribe]\nmemory = [\"team:read\", \"team:write\", \"private:write\"]\n",
    )
    .await;
    let scope = task(&host, "t-mem-1");
    // Allowed: team:write and team:read, requested and granted.
    let text = "## Decisions\n- 2026-01-01: releases go out on tuesdays\n".to_owned();
    let outcome = scope
        .memory_update(Scope::Team, Some(0), text.clone())
        .await
        .expect("update");
    assert!(
        matches!(outcome, UpdateOutcome::Stored { .. }),
        "{outcome:?}"
    );
    let read = scope.memory_read(Scope::Team).await.expect("read");
    assert_eq!(read.text, text);
    assert_eq!(read.version.expect("version").actor, "scribe@1.0.0");
    // A refused write is receipted as failed, with the errors verbatim.
    let refused = scope
        .memory_update(Scope::Team, Some(1), "x".repeat(50))
        .await
        .expect("validated");
    assert!(
        matches!(refused, UpdateOutcome::Refused { .. }),
        "{refused:?}"
    );

    let receipts = host.services().ledger.for_task("t-mem-1").expect("ledger");
    assert_eq!(receipts.len(), 2, "{receipts:#?}");
    let (ok, bad) = (&receipts[0], &receipts[1]);
    assert_eq!(
        (ok.receipt_type.as_str(), ok.operation.as_str()),
        ("memory", "update")
    );
    assert_eq!(ok.status, ReceiptStatus::Success);
    assert_eq!(ok.route, "scribe");
    assert_eq!(ok.external_id.as_deref(), Some("team:acme@v1"));
    assert_eq!(bad.status, ReceiptStatus::Failed);
    assert_eq!(
        bad.error.as_deref(),
        Some("Memory must be markdown with at least one ## heading.")
    );
    let calls = scope.take_calls();
    assert_eq!(calls.len(), 2);
    assert!(
        calls
            .iter()
            .all(|c| c.mutating && c.tool == "memory.update")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_rights_not_granted_or_not_requested_are_denied() {
    let dir = tempfile::tempdir().expect("tempdir");
    let host = host(
        dir.path(),
        "[grants.scribe]\nmemory = [\"team:write\", \"private:write\"]\n",
    )
    .await;
    let scope = task(&host, "t-mem-2");
    // Requested (team:read) but not granted.
    let err = scope.memory_read(Scope::Team).await.expect_err("denied");
    assert!(matches!(err, MemoryError::Denied(_)), "{err:?}");
    assert!(
        err.to_string().contains("`[grants.scribe] memory`"),
        "{err}"
    );
    // Granted (private:write) but not requested.
    let err = scope
        .memory_update(Scope::Private, None, "## A\n".into())
        .await
        .expect_err("denied");
    assert!(err.to_string().contains("`[capabilities] memory`"), "{err}");
    // A denied write stores nothing and writes no receipt.
    assert!(
        host.services()
            .ledger
            .for_task("t-mem-2")
            .expect("ledger")
            .is_empty()
    );
    assert_eq!(
        host.memory()
            .read(Scope::Private)
            .await
            .expect("read")
            .version,
        None
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_memory_grant_denies_everything() {
    let dir = tempfile::tempdir().expect("tempdir");
    let host = host(dir.path(), "").await;
    let scope = task(&host, "t-mem-3");
    for s in [Scope::Team, Scope::Private] {
        assert!(scope.memory_read(s).await.is_err(), "{s} read");
        assert!(
            scope.memory_update(s, None, "## A\n".into()).await.is_err(),
            "{s} write"
        );
    }
    assert!(
        host.services()
            .ledger
            .for_task("t-mem-3")
            .expect("ledger")
            .is_empty()
    );
}

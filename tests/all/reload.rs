//! Hot reload through the library: a task running across a swap finishes on the version it
//! started with, new tasks get the new version, a broken new version is rejected while the old
//! one keeps serving, a removed plugin stops taking tasks, and every swap is audited.

use guild_host::receipts::{AuditKind, Ledger};
use guild_host::{Config, Host};
use serde_json::json;

/// A copy of the probe at `version`, requesting `echo.guarded` (a tool that waits for approval).
fn probe_copy(dir: &std::path::Path, version: &str) {
    std::fs::create_dir_all(dir).expect("plugin dir");
    std::fs::copy(
        guild_tests::plugin_dir("testing/probe").join("probe.wasm"),
        dir.join("probe.wasm"),
    )
    .expect("component");
    let manifest = format!(
        "[plugin]\nname = \"probe\"\nversion = \"{version}\"\nkind = \"specialist\"\n\
         component = \"probe.wasm\"\ndescription = \"Probe copy.\"\n\n[capabilities]\n\
         tools = [\"echo.guarded\"]\n"
    );
    std::fs::write(dir.join("plugin.toml"), manifest).expect("manifest");
}

fn config(dir: &std::path::Path, plugins: &[&std::path::Path]) -> Config {
    let list: Vec<String> = plugins
        .iter()
        .map(|p| format!("{:?}", p.display().to_string()))
        .collect();
    let text = format!(
        "[host]\nplugins = [{}]\ndata_dir = \".guild\"\n\n[grants.probe]\ntools = [\"echo.guarded\"]\n",
        list.join(", ")
    );
    Config::parse(&text, &dir.join("guild.toml"), dir).expect("config")
}

fn audits(dir: &std::path::Path) -> Vec<(AuditKind, String)> {
    Ledger::open_read_only(dir.join(".guild").join("receipts.db"))
        .expect("ledger")
        .audit_log(100)
        .expect("audit log")
        .into_iter()
        .map(|a| (a.kind, a.plugin))
        .collect()
}

async fn specialist_of_new_task(h: &Host) -> String {
    let r = h
        .task("probe", &json!({"op": "brief"}).to_string())
        .await
        .expect("task starts");
    r.specialist
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_swap_keeps_running_tasks_on_their_version_and_rejects_a_broken_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let copy = dir.path().join("probe");
    let echo = guild_tests::plugin_dir("testing/echo");
    probe_copy(&copy, "0.1.0");
    let h = Host::with_engine(config(dir.path(), &[&copy, &echo]), guild_tests::engine())
        .await
        .expect("host starts");
    assert!(h.load_errors().is_empty(), "{:?}", h.load_errors());

    // A task that pauses on an approval: it is running while the set is swapped.
    let brief = json!({"op": "tool", "name": "echo.guarded", "input": {"to": "team"}}).to_string();
    let running = h.start_task("probe", &brief).expect("start");
    for _ in 0..2000 {
        if h.check_task(&running)
            .expect("check")
            .pending_approval
            .is_some()
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert!(
        h.check_task(&running)
            .expect("check")
            .pending_approval
            .is_some()
    );

    probe_copy(&copy, "0.2.0");
    let report = h.reload_with(None).await;
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert!(report.roster_changed);
    assert!(
        report.loaded.iter().any(|l| l.starts_with("probe@0.2.0")),
        "{report:?}"
    );
    assert_eq!(specialist_of_new_task(&h).await, "probe@0.2.0");

    h.approve_task(&running, true).expect("approve");
    let record = h.wait_task(&running).await.expect("wait");
    let result = record.result.expect("result");
    assert_eq!(
        result.specialist, "probe@0.1.0",
        "kept the version it started on"
    );

    // A broken version: rejected with a clear error, the old one keeps serving.
    std::fs::write(copy.join("probe.wasm"), b"not a component").expect("break it");
    probe_copy_manifest_only(&copy, "0.3.0");
    let report = h.reload_with(None).await;
    assert_eq!(report.errors.len(), 1, "{report:?}");
    assert!(
        report.errors[0].contains("probe")
            && report.errors[0].contains("probe@0.2.0 keeps serving"),
        "{}",
        report.errors[0]
    );
    assert!(!report.changed(), "{report:?}");
    assert_eq!(specialist_of_new_task(&h).await, "probe@0.2.0");

    // Removed from the configuration: no new tasks.
    let report = h.reload_with(Some(config(dir.path(), &[&echo]))).await;
    assert_eq!(report.unloaded, ["probe@0.2.0"], "{report:?}");
    let err = h
        .task("probe", "anything")
        .await
        .expect_err("no longer on the roster");
    assert!(
        err.to_string().contains("unknown specialist 'probe'"),
        "{err}"
    );

    let kinds: Vec<(AuditKind, String)> = audits(dir.path());
    for want in [
        (AuditKind::PluginLoaded, "probe@0.1.0"),
        (AuditKind::PluginLoaded, "probe@0.2.0"),
        (AuditKind::PluginUnloaded, "probe@0.2.0"),
    ] {
        assert!(
            kinds.iter().any(|(k, p)| *k == want.0 && p == want.1),
            "{want:?} not audited: {kinds:?}"
        );
    }
    assert!(
        !kinds.iter().any(|(_, p)| p == "probe@0.3.0"),
        "the broken version never loaded: {kinds:?}"
    );
}

/// Rewrites only the manifest (the component stays as it is).
fn probe_copy_manifest_only(dir: &std::path::Path, version: &str) {
    let manifest = std::fs::read_to_string(dir.join("plugin.toml")).expect("manifest");
    let manifest = manifest
        .lines()
        .map(|l| match l.starts_with("version = ") {
            true => format!("version = \"{version}\""),
            false => l.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(dir.join("plugin.toml"), manifest).expect("manifest");
}

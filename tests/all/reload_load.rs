//! Hot reload under load, through the library (an in-process `Host`, as `guild serve` holds
//! one): 100 reloads that alternate two versions of a connector with a broken third, while
//! clients keep more than 1,000 tool-calling tasks flowing. No task fails, every task's receipt
//! names a version that was serving, and the broken version never serves.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use guild_host::receipts::Ledger;
use guild_host::types::TaskStatus;
use guild_host::{Config, Host};
use serde_json::json;

const RELOADS: usize = 100;
const MIN_TASKS: usize = 1_000;
const CLIENTS: usize = 4;
const BROKEN: &str = "6.6.6";

/// Points the echo copy's manifest at `version`; the broken version's component is not one.
fn echo_version(dir: &std::path::Path, version: &str) {
    let component = match version {
        BROKEN => "broken.wasm",
        _ => "echo.wasm",
    };
    let manifest = format!(
        "[plugin]\nname = \"echo\"\nversion = \"{version}\"\nkind = \"connector\"\n\
         component = \"{component}\"\ndescription = \"Echo copy.\"\n"
    );
    std::fs::write(dir.join("plugin.toml"), manifest).expect("manifest");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_reloads_under_a_thousand_tasks_fail_none_and_never_serve_the_broken_version() {
    let dir = tempfile::tempdir().expect("tempdir");
    let echo = dir.path().join("echo");
    std::fs::create_dir_all(&echo).expect("echo dir");
    std::fs::copy(
        guild_tests::plugin_dir("testing/echo").join("echo.wasm"),
        echo.join("echo.wasm"),
    )
    .expect("component");
    std::fs::write(echo.join("broken.wasm"), b"not a component").expect("broken component");
    // Starts on 2.0.0, so the first reload (to 1.0.0) swaps.
    echo_version(&echo, "2.0.0");
    let probe = guild_tests::plugin_dir("testing/probe");
    let text = format!(
        "[host]\nplugins = [{:?}, {:?}]\ndata_dir = \".guild\"\n\n[dispatch]\nbillable_threshold = 0\n\n\
         [grants.probe]\ntools = [\"echo.create\"]\n",
        probe.display().to_string(),
        echo.display().to_string()
    );
    let config = Config::parse(&text, &dir.path().join("guild.toml"), dir.path()).expect("config");
    let host = Host::with_engine(config, guild_tests::engine())
        .await
        .expect("host starts");
    assert!(host.load_errors().is_empty(), "{:?}", host.load_errors());

    let reloading = Arc::new(AtomicBool::new(true));
    let mut clients = Vec::new();
    for client in 0..CLIENTS {
        let host = host.clone();
        let reloading = reloading.clone();
        clients.push(tokio::spawn(async move {
            let mut results = Vec::new();
            let mut n = 0usize;
            while reloading.load(Ordering::SeqCst) || results.len() < MIN_TASKS / CLIENTS {
                let brief = json!({"op": "tool", "name": "echo.create",
                                   "input": {"client": client, "n": n}});
                n += 1;
                let result = host
                    .task("probe", &brief.to_string())
                    .await
                    .expect("the probe is always on the roster");
                results.push(result);
            }
            results
        }));
    }

    let mut rejected = 0;
    for i in 0..RELOADS {
        let version = ["1.0.0", "2.0.0", BROKEN][i % 3];
        echo_version(&echo, version);
        let report = host.reload_with(None).await;
        if version == BROKEN {
            assert_eq!(report.errors.len(), 1, "{report:?}");
            assert!(
                report.errors[0].contains("keeps serving"),
                "{}",
                report.errors[0]
            );
            assert!(report.loaded.is_empty(), "{report:?}");
            rejected += 1;
        } else {
            assert!(report.errors.is_empty(), "{report:?}");
            assert!(
                report
                    .loaded
                    .iter()
                    .any(|l| l.starts_with(&format!("echo@{version} "))),
                "reload {i}: {report:?}"
            );
        }
        // Let some tasks run on each version.
        tokio::task::yield_now().await;
    }
    reloading.store(false, Ordering::SeqCst);

    let mut by_version: BTreeMap<String, usize> = BTreeMap::new();
    let mut total = 0;
    for client in clients {
        for result in client.await.expect("client ran") {
            total += 1;
            assert_eq!(
                result.status,
                TaskStatus::Succeeded,
                "task {} failed: {:?}",
                result.task_id,
                result.error
            );
            assert_eq!(result.receipts.len(), 1, "task {}", result.task_id);
            let receipt = &result.receipts[0];
            assert_eq!(receipt.task_id, result.task_id);
            assert!(
                receipt.plugin == "echo@1.0.0" || receipt.plugin == "echo@2.0.0",
                "task {} ran on {}",
                result.task_id,
                receipt.plugin
            );
            *by_version.entry(receipt.plugin.clone()).or_default() += 1;
        }
    }
    assert!(total >= MIN_TASKS, "{total} tasks");
    assert_eq!(rejected, RELOADS / 3);
    assert_eq!(by_version.len(), 2, "both versions served: {by_version:?}");

    // The ledger agrees: receipts name only the two good versions, and the broken one was
    // never audited as loaded.
    let ledger =
        Ledger::open_read_only(dir.path().join(".guild").join("receipts.db")).expect("ledger");
    let audits = ledger.audit_log(10_000).expect("audit log");
    assert!(
        !audits.iter().any(|a| a.plugin == format!("echo@{BROKEN}")),
        "the broken version never loaded"
    );
    let loads = audits
        .iter()
        .filter(|a| a.plugin.starts_with("echo@"))
        .count();
    assert!(loads > RELOADS / 2, "every good swap was audited: {loads}");
}

//! `guild:plugin` versions: components built against the frozen 0.1.0 WIT (plain wit-bindgen,
//! `plugins/testing/legacy-*`) and the frozen 0.2.0 WIT (`plugins/testing/v02-*`) load and serve
//! beside 0.3.0 ones, through the adapters at the runtime's bindings edge, with receipts written
//! as for any call; a component of a version this host does not know is refused at load, naming
//! the versions it supports.

use guild_host::receipts::ReceiptStatus;
use guild_host::types::{CallStatus, TaskStatus};
use guild_host::validate::CheckStatus;
use guild_tests::{host, probe};
use serde_json::json;

/// `key: value` from the legacy specialist's details.
fn field<'a>(details: &'a str, key: &str) -> &'a str {
    details
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(": "))
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_0_1_specialist_calls_a_0_2_connector_and_a_receipt_is_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(
        dir.path(),
        &["testing/legacy-specialist", "testing/echo"],
        "[grants.legacy-specialist]\ntools = [\"echo.create\", \"echo.fail\"]\nreport = true",
    )
    .await;

    // Allowed: the call goes through, the 0.1.0 outcome has no error, the report is delivered.
    let done = h
        .task("legacy-specialist", "echo.create\n{\"a\":1}")
        .await
        .expect("task starts");
    assert_eq!(done.status, TaskStatus::Succeeded, "{:?}", done.error);
    let details = &done.report.as_ref().expect("a report").details;
    assert_eq!(field(details, "status"), "success", "{details}");
    assert_eq!(field(details, "error"), "-", "{details}");
    assert_eq!(field(details, "report"), "sent", "{details}");
    assert_eq!(done.reports.len(), 1, "{:?}", done.reports);
    let receipts = h.receipts(Some(&done.task_id), 10).await.expect("receipts");
    assert_eq!(receipts.len(), 1, "{receipts:?}");
    assert_eq!(receipts[0].status, ReceiptStatus::Success);
    assert_eq!(
        receipts[0].external_id.as_deref(),
        Some(field(details, "external_id"))
    );
    let validation = done.validation.as_ref().expect("validated");
    assert_eq!(validation.verdict, CheckStatus::Passed, "{validation:?}");

    // A failed 0.2.0 call reaches the 0.1.0 plugin as status failed plus its verbatim error.
    let failed = h
        .task("legacy-specialist", "echo.fail\n{}")
        .await
        .expect("task starts");
    let details = &failed.report.as_ref().expect("a report").details;
    assert_eq!(field(details, "status"), "failed", "{details}");
    assert_eq!(
        field(details, "error"),
        "quota exceeded for project demo",
        "{details}"
    );
    let receipts = h
        .receipts(Some(&failed.task_id), 10)
        .await
        .expect("receipts");
    assert_eq!(receipts.len(), 1, "{receipts:?}");
    assert_eq!(
        receipts[0].error.as_deref(),
        Some("quota exceeded for project demo")
    );

    // Denied: a tool not granted is a 0.1.0 `host-error::denied` naming the tool (the plugin
    // prints the kind, then the host's text).
    let denied = h
        .task("legacy-specialist", "echo.echo\n{}")
        .await
        .expect("task starts");
    let details = &denied.report.as_ref().expect("a report").details;
    let refusal = field(details, "host-error");
    assert!(refusal.starts_with("denied: "), "{details}");
    assert!(refusal.contains("echo.echo"), "{details}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_0_2_specialist_calls_a_0_1_connector_and_a_receipt_is_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(
        dir.path(),
        &["testing/probe", "testing/legacy-connector"],
        "[grants.probe]\ntools = [\"legacy-connector.note\", \"legacy-connector.fail\"]",
    )
    .await;
    let kinds: Vec<_> = h
        .plugins()
        .into_iter()
        .map(|p| (p.name, p.tools.len()))
        .collect();
    assert!(
        kinds.contains(&("legacy-connector".to_owned(), 2)),
        "{kinds:?}"
    );

    let input = json!({"a": 1});
    let done = probe(
        &h,
        json!({"op": "tool", "name": "legacy-connector.note", "input": input}),
    )
    .await;
    assert!(done.ok, "{done:?}");
    assert_eq!(done.value["status"], json!("success"));
    let id = format!("note-{}", input.to_string().len());
    assert_eq!(done.value["external_id"], json!(id));
    assert_eq!(done.value["error"], json!(null));
    let receipts = h
        .receipts(Some(&done.result.task_id), 10)
        .await
        .expect("receipts");
    assert_eq!(receipts.len(), 1, "{receipts:?}");
    assert_eq!(receipts[0].status, ReceiptStatus::Success);
    assert_eq!(receipts[0].external_id.as_deref(), Some(id.as_str()));
    assert_eq!(receipts[0].receipt_type, "note");

    // 0.1.0's `failed` + `error` becomes one failed status; the receipt keeps the error verbatim.
    let failed = probe(&h, json!({"op": "tool", "name": "legacy-connector.fail"})).await;
    assert!(failed.ok, "{failed:?}");
    assert_eq!(failed.value["status"], json!("failed"));
    assert_eq!(failed.value["error"], json!("legacy quota exceeded (fail)"));
    assert_eq!(
        failed.result.tool_calls[0].outcome.status,
        CallStatus::Failed
    );
    let receipts = h
        .receipts(Some(&failed.result.task_id), 10)
        .await
        .expect("receipts");
    assert_eq!(
        receipts[0].error.as_deref(),
        Some("legacy quota exceeded (fail)")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_component_of_an_unknown_version_is_refused_naming_the_supported_ones() {
    let dir = tempfile::tempdir().expect("tempdir");
    // echo, rebuilt as if against a future guild:plugin@0.9.0: every versioned name is rewritten
    // (same length, so the component stays well-formed).
    let bytes = std::fs::read(guild_tests::plugin_dir("testing/echo").join("echo.wasm"))
        .expect("echo.wasm built by plugins/build.sh");
    let (from, to) = (b"guild:plugin/".as_slice(), b"@0.3.0".as_slice());
    let mut patched = bytes.clone();
    let mut renamed = 0;
    for i in 0..patched.len() {
        if patched[i..].starts_with(from)
            && let Some(at) = patched[i..]
                .windows(to.len())
                .take(64)
                .position(|w| w == to)
        {
            patched[i + at + 3] = b'9';
            renamed += 1;
        }
    }
    assert!(renamed > 0, "no versioned names found in echo.wasm");
    let plugin = dir.path().join("future");
    std::fs::create_dir_all(&plugin).expect("mkdir");
    std::fs::write(plugin.join("future.wasm"), patched).expect("write");
    std::fs::write(
        plugin.join("plugin.toml"),
        "[plugin]\nname = \"future\"\nversion = \"0.1.0\"\nkind = \"connector\"\ncomponent = \"future.wasm\"\n",
    )
    .expect("write");
    let config = format!(
        "[host]\nplugins = [{:?}, {:?}]\ndata_dir = \".guild\"\n",
        plugin.display().to_string(),
        guild_tests::plugin_dir("testing/echo")
            .display()
            .to_string(),
    );
    let config = guild_host::Config::parse(&config, &dir.path().join("guild.toml"), dir.path())
        .expect("config");
    let h = guild_host::Host::with_engine(config, guild_tests::engine())
        .await
        .expect("host starts");
    let errors = h.load_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let error = &errors[0];
    assert!(error.contains("future"), "{error}");
    assert!(error.contains("guild:plugin@0.9.0"), "{error}");
    assert!(
        error.contains("guild:plugin@0.3.0, guild:plugin@0.2.0, guild:plugin@0.1.0"),
        "{error}"
    );
    // Allowed: the unpatched echo beside it loads.
    assert!(h.plugins().iter().any(|p| p.name == "echo"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_0_1_skill_loader_serves_a_0_2_specialist() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A private probe whose manifest requests the legacy loader as a skill source.
    let src = guild_tests::plugin_dir("testing/probe");
    let plugin = dir.path().join("probe");
    std::fs::create_dir_all(&plugin).expect("mkdir");
    std::fs::copy(src.join("probe.wasm"), plugin.join("probe.wasm")).expect("copy wasm");
    let manifest = std::fs::read_to_string(src.join("plugin.toml")).expect("read manifest");
    let manifest = manifest.replace(
        "skills = [\"skills/\"]",
        "skills = [\"loader:legacy-loader\"]",
    );
    std::fs::write(plugin.join("plugin.toml"), manifest).expect("write manifest");
    let plugin = plugin.display().to_string();
    let h = host(
        dir.path(),
        &[plugin.as_str(), "testing/legacy-loader"],
        "[grants.probe]\nskills = [\"loader:legacy-loader\"]",
    )
    .await;

    let catalog = h.skills().catalog(Some("probe")).await.expect("catalog");
    assert!(catalog.problems.is_empty(), "{:?}", catalog.problems);
    let entry = catalog.get("legacy-guide").expect("legacy-guide listed");
    assert_eq!(entry.source, "loader:legacy-loader");

    let body = probe(&h, json!({"op": "skill_load", "name": "legacy-guide"})).await;
    assert!(body.ok, "{body:?}");
    assert!(
        body.value
            .as_str()
            .unwrap_or_default()
            .contains("Served by a loader built against guild:plugin@0.1.0."),
        "{:?}",
        body.value
    );
    let notes = probe(
        &h,
        json!({"op": "skill_read", "name": "legacy-guide", "path": "notes.txt"}),
    )
    .await;
    assert!(notes.ok, "{notes:?}");
    // Refused: a resource the loader does not have comes back as the loader's own error.
    let missing = probe(
        &h,
        json!({"op": "skill_read", "name": "legacy-guide", "path": "absent.txt"}),
    )
    .await;
    assert!(!missing.ok, "{missing:?}");
    assert!(missing.error.contains("absent.txt"), "{}", missing.error);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_0_2_specialist_and_connector_serve_beside_0_3_plugins() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(
        dir.path(),
        &[
            "testing/v02-specialist",
            "testing/v02-connector",
            "testing/echo",
        ],
        "[grants.v02-specialist]\ntools = [\"echo.create\", \"v02-connector.note\"]\n\
         config = { greeting = \"hello\" }\nreport = true",
    )
    .await;
    let versions: Vec<_> = h
        .plugins()
        .into_iter()
        .map(|p| (p.name, p.tools.len()))
        .collect();
    assert!(
        versions.contains(&("v02-connector".to_owned(), 1)),
        "{versions:?}"
    );

    // Allowed: a 0.2.0 specialist calls a 0.3.0 connector and a 0.2.0 one; progress and config
    // go through the adapter; each mutating call is receipted.
    for (tool, id) in [
        ("echo.create", None),
        ("v02-connector.note", Some("v02-note-7")),
    ] {
        let done = h
            .task("v02-specialist", &format!("{tool}\n{{\"a\":1}}"))
            .await
            .expect("task starts");
        assert_eq!(done.status, TaskStatus::Succeeded, "{:?}", done.error);
        let details = &done.report.as_ref().expect("a report").details;
        assert_eq!(field(details, "status"), "success", "{details}");
        assert_eq!(field(details, "progress"), "sent", "{details}");
        assert_eq!(field(details, "greeting"), "hello", "{details}");
        if let Some(id) = id {
            assert_eq!(field(details, "external_id"), id, "{details}");
        }
        let receipts = h.receipts(Some(&done.task_id), 10).await.expect("receipts");
        assert_eq!(receipts.len(), 1, "{receipts:?}");
        assert_eq!(receipts[0].status, ReceiptStatus::Success);
    }

    // A 0.2.0 connector's failed status reaches a 0.3.0 caller verbatim.
    let done = h
        .task("v02-specialist", "v02-connector.note\n{\"fail\":true}")
        .await
        .expect("task starts");
    let details = &done.report.as_ref().expect("a report").details;
    assert_eq!(
        field(details, "status"),
        "failed: v02 quota exceeded",
        "{details}"
    );

    // Denied: a tool not granted is a 0.2.0 `host-error::denied` naming the tool.
    let denied = h
        .task("v02-specialist", "echo.echo\n{}")
        .await
        .expect("task starts");
    let details = &denied.report.as_ref().expect("a report").details;
    let refusal = field(details, "host-error");
    assert!(refusal.starts_with("denied: "), "{details}");
    assert!(refusal.contains("echo.echo"), "{details}");
}

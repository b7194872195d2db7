//! Receipts written by the host in the one tool-call path, and validation of what the
//! specialist claims, end to end with real components.

use guild_host::receipts::{AuditKind, Ledger, ReceiptStatus};
use guild_host::types::CallStatus;
use guild_host::validate::CheckStatus;
use guild_tests::{host, probe};
use serde_json::json;

const PROBE: &[&str] = &["testing/probe", "testing/echo"];
const GRANTS: &str = r#"[grants.probe]
tools = ["echo.echo", "echo.create", "echo.fail", "echo.crash", "echo.stall"]
[grants.echo]
limits = { timeout_s = 1 }"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutating_success_gets_a_receipt_and_reads_do_not() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, GRANTS).await;
    let p = probe(
        &h,
        json!({"op": "tool", "name": "echo.create", "input": {"title": "a"}}),
    )
    .await;
    assert!(p.ok, "{p:?}");
    let r = &p.result;
    assert_eq!(r.receipts.len(), 1);
    let receipt = &r.receipts[0];
    assert_eq!(receipt.status, ReceiptStatus::Success);
    assert_eq!(
        (receipt.receipt_type.as_str(), receipt.operation.as_str()),
        ("item", "create")
    );
    assert_eq!(receipt.route, "probe");
    assert_eq!(receipt.tool, "echo.create");
    assert_eq!(receipt.task_id, r.task_id);
    assert_eq!(receipt.input_sha256, r.tool_calls[0].input_sha256);
    assert_eq!(
        r.tool_calls[0].receipt_id.as_deref(),
        Some(receipt.id.as_str())
    );
    assert!(receipt.external_id.is_some());
    let p = probe(&h, json!({"op": "tool", "name": "echo.echo", "input": {}})).await;
    assert!(
        p.result.receipts.is_empty(),
        "a read-only tool writes no receipt"
    );
    assert!(h.verify_receipts().await.expect("verify").ok);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_trapped_and_timed_out_calls_are_receipted_as_failed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, GRANTS).await;
    for (tool, error) in [
        ("echo.fail", "quota exceeded for project demo"),
        ("echo.crash", "trapped"),
        ("echo.stall", "timed out"),
    ] {
        let p = probe(&h, json!({"op": "tool", "name": tool, "input": {}})).await;
        let receipts = &p.result.receipts;
        assert_eq!(receipts.len(), 1, "{tool}");
        assert_eq!(receipts[0].status, ReceiptStatus::Failed, "{tool}");
        assert!(
            receipts[0].error.as_deref().unwrap_or("").contains(error),
            "{tool}: {:?}",
            receipts[0].error
        );
        let v = p.result.validation.as_ref().expect("validated");
        assert_eq!(
            v.verdict,
            CheckStatus::Failed,
            "{tool}: a failed receipt fails the check"
        );
        assert!(
            v.checks.iter().any(|c| c.message.contains(error)),
            "{tool}: error quoted verbatim: {:?}",
            v.checks
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idempotency_key_replays_and_conflicts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, GRANTS).await;
    let op = |title: &str| json!({"op": "tool", "name": "echo.create", "input": {"title": title}, "key": "k-1"});
    let first = probe(&h, op("a")).await;
    assert!(first.ok, "{first:?}");
    let again = probe(&h, op("a")).await;
    assert!(again.ok, "{again:?}");
    let call = &again.result.tool_calls[0];
    assert!(call.replayed, "the connector was not called again");
    // The call names the replay entry of its own task, which names the first call's receipt.
    let own: Vec<_> = again
        .result
        .receipts
        .iter()
        .map(|r| (Some(r.id.clone()), r.replay_of.clone()))
        .collect();
    assert_eq!(
        own,
        [(
            call.receipt_id.clone(),
            first.result.tool_calls[0].receipt_id.clone()
        )],
        "{call:?}"
    );
    assert_ne!(call.receipt_id, first.result.tool_calls[0].receipt_id);
    assert_eq!(call.outcome.status, CallStatus::Success);
    let conflict = probe(&h, op("b")).await;
    assert!(!conflict.ok);
    assert!(
        conflict.error.contains("different input"),
        "{}",
        conflict.error
    );
}

/// The audit entries of the host's ledger in `dir`, as (kind, plugin, detail).
fn audits(dir: &std::path::Path) -> Vec<(AuditKind, String, String)> {
    Ledger::open_read_only(dir.join(".guild").join("receipts.db"))
        .expect("ledger")
        .audit_log(100)
        .expect("audit log")
        .into_iter()
        .map(|a| (a.kind, a.plugin, a.detail))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plugin_loads_are_audited_in_the_same_chain() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, GRANTS).await;
    let report = h.verify_receipts().await.expect("verify");
    assert!(report.ok);
    assert_eq!(
        report.entries, 2,
        "the audits are chain entries: {report:?}"
    );
    let mut loads: Vec<(AuditKind, String)> = audits(dir.path())
        .into_iter()
        .map(|(kind, plugin, detail)| {
            assert!(detail.starts_with("component sha256 "), "{detail}");
            (kind, plugin)
        })
        .collect();
    loads.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(
        loads,
        [
            (AuditKind::PluginLoaded, "echo@0.1.0".to_owned()),
            (AuditKind::PluginLoaded, "probe@0.1.0".to_owned()),
        ]
    );
    h.reload().await;
    assert_eq!(
        audits(dir.path()).len(),
        2,
        "reloading unchanged plugins audits nothing"
    );
}

/// A copy of the probe whose manifest requests `tools`.
fn probe_requesting(dir: &std::path::Path, tools: &[&str]) {
    std::fs::create_dir_all(dir).expect("plugin dir");
    std::fs::copy(
        guild_tests::plugin_dir("testing/probe").join("probe.wasm"),
        dir.join("probe.wasm"),
    )
    .expect("component");
    let manifest = format!(
        "[plugin]\nname = \"probe\"\nversion = \"0.1.0\"\nkind = \"specialist\"\n\
         component = \"probe.wasm\"\ndescription = \"Probe copy.\"\n\n[capabilities]\ntools = {tools:?}\n"
    );
    std::fs::write(dir.join("plugin.toml"), manifest).expect("manifest");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_change_between_loads_is_audited_and_nothing_else_is() {
    let dir = tempfile::tempdir().expect("tempdir");
    let copy = dir.path().join("probe");
    probe_requesting(&copy, &["echo.echo", "echo.create"]);
    let text = format!(
        "[host]\nplugins = [{:?}, {:?}]\ndata_dir = \".guild\"\n\n\
         [grants.probe]\ntools = [\"echo.echo\", \"echo.create\"]\n",
        copy.display().to_string(),
        guild_tests::plugin_dir("testing/echo")
            .display()
            .to_string()
    );
    let config = guild_host::Config::parse(&text, &dir.path().join("guild.toml"), dir.path())
        .expect("config");
    let h = guild_host::Host::with_engine(config, guild_tests::engine())
        .await
        .expect("host starts");
    assert_eq!(audits(dir.path()).len(), 2, "two loads");

    // The manifest no longer requests echo.create: the effective grant shrank.
    probe_requesting(&copy, &["echo.echo"]);
    assert!(h.reload().await.is_empty());
    let after = audits(dir.path());
    assert_eq!(after.len(), 3, "{after:?}");
    let (kind, plugin, detail) = &after[2];
    assert_eq!(
        (*kind, plugin.as_str()),
        (AuditKind::GrantChanged, "probe@0.1.0")
    );
    assert!(
        detail.starts_with(
            "granted now: none; no longer granted: tools echo.create (granted); grants sha256 "
        ),
        "{detail}"
    );

    // A request the operator does not grant changes no effective grant: no entry.
    probe_requesting(&copy, &["echo.echo", "echo.fail"]);
    assert!(h.reload().await.is_empty());
    assert_eq!(audits(dir.path()).len(), 3, "{:?}", audits(dir.path()));
    assert!(h.verify_receipts().await.expect("verify").ok);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_changed_while_the_host_was_stopped_is_audited_at_the_next_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let copy = dir.path().join("probe");
    probe_requesting(&copy, &["echo.echo", "echo.create"]);
    let start = |grant: &'static str| {
        let text = format!(
            "[host]\nplugins = [{:?}, {:?}]\ndata_dir = \".guild\"\n\n[grants.probe]\ntools = {grant}\n",
            copy.display().to_string(),
            guild_tests::plugin_dir("testing/echo")
                .display()
                .to_string()
        );
        let config = guild_host::Config::parse(&text, &dir.path().join("guild.toml"), dir.path())
            .expect("config");
        guild_host::Host::with_engine(config, guild_tests::engine())
    };
    let grant_changes = || {
        audits(dir.path())
            .into_iter()
            .filter(|(kind, _, _)| *kind == AuditKind::GrantChanged)
            .map(|(_, plugin, detail)| (plugin, detail))
            .collect::<Vec<_>>()
    };
    drop(start("[\"echo.echo\"]").await.expect("first run"));
    drop(start("[\"echo.echo\"]").await.expect("same grant"));
    assert!(
        grant_changes().is_empty(),
        "an unchanged grant is not a change"
    );

    // The operator widened the grant while no host ran.
    let h = start("[\"echo.echo\", \"echo.create\"]")
        .await
        .expect("widened");
    let changes = grant_changes();
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0].0, "probe@0.1.0");
    let detail = &changes[0].1;
    assert!(
        detail.starts_with("granted since the last run: ")
            && detail
                .contains("tools echo.create (granted), tools echo.echo (granted); grants sha256 "),
        "{detail}"
    );
    assert!(changes[0].1.contains("(was "), "{}", changes[0].1);
    assert!(h.verify_receipts().await.expect("verify").ok);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_refuses_an_empty_or_foreign_store_file_by_name() {
    for file in ["receipts.db", "tasks.db"] {
        for foreign in [false, true] {
            let dir = tempfile::tempdir().expect("tempdir");
            let data = dir.path().join("data");
            std::fs::create_dir_all(&data).expect("data dir");
            let path = data.join(file);
            if foreign {
                rusqlite::Connection::open(&path)
                    .expect("create")
                    .execute_batch("CREATE TABLE photos (id INTEGER PRIMARY KEY, jpeg BLOB);")
                    .expect("another app's database");
            } else {
                std::fs::write(&path, b"").expect("empty file");
            }
            let text = "[host]\nplugins = []\ndata_dir = \"data\"\n";
            let config =
                guild_host::Config::parse(text, &dir.path().join("guild.toml"), dir.path())
                    .expect("config");
            let Err(err) = guild_host::Host::with_engine(config, guild_tests::engine()).await
            else {
                panic!("{file} (foreign: {foreign}) was adopted");
            };
            match (file, &err) {
                ("receipts.db", guild_host::HostError::Ledger(_))
                | ("tasks.db", guild_host::HostError::TaskStore { .. }) => {}
                _ => panic!("{file}: the error names the wrong part: {err:?}"),
            }
            let msg = format!("{err:#}");
            assert!(msg.contains(&path.display().to_string()), "{msg}");
            let why = if foreign { "did not create" } else { "0 bytes" };
            assert!(msg.contains(why), "{msg}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_data_dir_that_cannot_be_created_is_a_typed_error_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("data"), b"a file, not a folder").expect("file");
    let text = "[host]\nplugins = []\ndata_dir = \"data/inner\"\n";
    let config = guild_host::Config::parse(text, &dir.path().join("guild.toml"), dir.path())
        .expect("config");
    let Err(err) = guild_host::Host::with_engine(config, guild_tests::engine()).await else {
        panic!("a host started without its data dir");
    };
    let guild_host::HostError::DataDir { path, .. } = &err else {
        panic!("not a data dir error: {err:?}");
    };
    assert_eq!(path, &dir.path().join("data").join("inner"));
    assert!(err.to_string().contains("data_dir"), "{err}");
}

/// Four mutating calls in a row, with a linger long enough that no outcome is committed on
/// its own before the next call: each outcome shares the next intent's commit, so the task
/// costs five commits (four intents, the last outcome at its end), not eight; every receipt
/// still reads success in the task's result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tasks_outcomes_share_the_commits_of_its_next_intents() {
    let dir = tempfile::tempdir().expect("tempdir");
    let extra = format!("[dispatch]\noutcome_linger_ms = 10000\n\n{GRANTS}");
    let h = host(dir.path(), PROBE, &extra).await;
    let before = h
        .ledger_commits()
        .expect("a SQLite ledger counts its commits");
    let ops: Vec<_> = (0..4)
        .map(|n| json!({"op": "tool", "name": "echo.create", "input": {"title": format!("t{n}")}}))
        .collect();
    let p = probe(&h, json!({"op": "seq", "ops": ops})).await;
    assert!(p.ok, "{p:?}");
    let receipts = &p.result.receipts;
    assert_eq!(receipts.len(), 4, "{receipts:?}");
    assert!(
        receipts.iter().all(|r| r.status == ReceiptStatus::Success),
        "{receipts:?}"
    );
    let commits = h.ledger_commits().expect("commits") - before;
    assert_eq!(
        commits, 5,
        "4 intents + the last outcome, each other outcome shared"
    );
    assert!(h.verify_receipts().await.expect("verify").ok);
}

/// The linger bounds how long an effect stands without a durable outcome: a task that goes
/// on after its mutating call (here it sleeps) has the outcome committed within
/// `outcome_linger_ms`, long before the task ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outcome_is_committed_within_its_linger_while_its_task_goes_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let extra = format!("[dispatch]\noutcome_linger_ms = 100\n\n{GRANTS}");
    let h = host(dir.path(), PROBE, &extra).await;
    let before = h.ledger_commits().expect("commits");
    let brief = json!({"op": "seq", "ops": [
        {"op": "tool", "name": "echo.create", "input": {"title": "then sleep"}},
        {"op": "sleep", "ms": 60_000},
    ]})
    .to_string();
    let task = {
        let h = h.clone();
        tokio::spawn(async move { h.task("probe", &brief).await })
    };
    // Intent and outcome: two commits, the second once the linger is over.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while h.ledger_commits().expect("commits") < before + 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the outcome was not committed within 30 s"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(!task.is_finished(), "the task still sleeps");
    // Read back through a connection of its own: committed, not just queued.
    let ledger = Ledger::open_read_only(dir.path().join(".guild/receipts.db")).expect("reader");
    let receipts = ledger.list(10).expect("receipts");
    assert_eq!(receipts.len(), 1, "{receipts:?}");
    assert_eq!(receipts[0].status, ReceiptStatus::Success, "{receipts:?}");
    task.abort();
}

/// `outcome_linger_ms` has a cap: at most 10 s without a durable outcome; past it the
/// config is refused, naming the key.
#[test]
fn an_outcome_linger_past_its_cap_is_refused_by_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let parse = |ms: u32| {
        guild_host::Config::parse(
            &format!("[dispatch]\noutcome_linger_ms = {ms}\n"),
            &dir.path().join("guild.toml"),
            dir.path(),
        )
    };
    assert_eq!(
        parse(10_000)
            .expect("at the cap")
            .dispatch
            .outcome_linger_ms,
        10_000
    );
    let err = parse(10_001).expect_err("past the cap").to_string();
    assert!(
        err.contains("dispatch.outcome_linger_ms") && err.contains("guild.toml"),
        "{err}"
    );
}

/// A task cancelled after its mutating call does not leave the outcome to its linger: the
/// cancelled task drops the outcome's handle, which asks for the commit at once. The linger
/// here is 10 s; the outcome is durable long before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_tasks_outcome_is_committed_at_once_not_after_its_linger() {
    let dir = tempfile::tempdir().expect("tempdir");
    let grants = GRANTS.replace("[grants.echo]", "report = true\n[grants.echo]");
    let extra = format!("[dispatch]\noutcome_linger_ms = 10000\n\n{grants}");
    let h = host(dir.path(), PROBE, &extra).await;
    let brief = json!({"op": "seq", "ops": [
        {"op": "tool", "name": "echo.create", "input": {"title": "then cancelled"}},
        {"op": "report", "text": "created"},
        {"op": "sleep", "ms": 60_000},
    ]})
    .to_string();
    let id = h.start_task("probe", &brief).expect("started");
    // The report comes after the call returned: its outcome is queued, lingering.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !h
        .task_reports(&id)
        .expect("reports")
        .iter()
        .any(|r| r.output == "created")
    {
        assert!(std::time::Instant::now() < deadline, "no report in 60 s");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let cancelled = std::time::Instant::now();
    h.cancel_task(&id).expect("cancelled");
    let reader = Ledger::open_read_only(dir.path().join(".guild/receipts.db")).expect("reader");
    loop {
        let receipts = reader.list(10).expect("receipts");
        if receipts
            .first()
            .is_some_and(|r| r.status == ReceiptStatus::Success)
        {
            break;
        }
        assert!(
            cancelled.elapsed() < std::time::Duration::from_secs(8),
            "the outcome waited for its linger: {receipts:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

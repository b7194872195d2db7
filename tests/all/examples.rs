//! The example plugins end to end: kb in its folder, triage and the Python digest specialist
//! through the tracker connector against the local tracker stand-in on 127.0.0.1.

use guild_cli::demo::tracker::TrackerServer;
use guild_host::types::{CallStatus, Outcome, TaskStatus};
use guild_tests::host;

const ALL: &[&str] = &["kb", "tracker", "triage", "digest"];

fn grants(base_url: &str, token_file: &str) -> String {
    format!(
        r#"[grants.kb]
fs = [{{ guest = "/workspace", host = "ws", mode = "rw" }}]
[grants.tracker]
http = ["{base_url}"]
config = {{ base_url = "{base_url}", repo = "acme/shop" }}
secrets = {{ TRACKER_TOKEN = {{ file = "{token_file}", hosts = ["{base_url}"] }} }}
[grants.triage]
tools = ["tracker.create_issue", "tracker.search_issues"]
[grants.digest]
tools = ["tracker.search_issues"]
"#
    )
}

/// A data folder (kb workspace, token file) and a tracker stand-in with that token.
async fn workspace_and_tracker() -> (tempfile::TempDir, TrackerServer) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("ws")).expect("mkdir");
    std::fs::write(dir.path().join("token"), "tok-123\n").expect("token");
    let tracker = TrackerServer::start("tok-123")
        .await
        .expect("tracker starts");
    (dir, tracker)
}

async fn setup() -> (tempfile::TempDir, TrackerServer, guild_host::Host) {
    let (dir, tracker) = workspace_and_tracker().await;
    let h = host(dir.path(), ALL, &grants(tracker.base_url(), "token")).await;
    (dir, tracker, h)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kb_saves_searches_and_reports_artifacts() {
    let (dir, _tracker, h) = setup().await;
    let r = h
        .task(
            "kb",
            "save notes/a.md\n# A\nThe checkout is slow.\nsave b.md\nnothing here\n",
        )
        .await
        .expect("starts");
    assert_eq!(r.status, TaskStatus::Succeeded, "{:?}", r.error);
    let report = r.report.expect("report");
    assert_eq!(report.outcome, Outcome::Satisfied);
    assert_eq!(report.artifacts.len(), 2, "{report:?}");
    let written =
        std::fs::read_to_string(dir.path().join("ws/notes/a.md")).expect("kb wrote the file");
    assert!(written.contains("checkout is slow"));
    use sha2::Digest;
    let a = report
        .artifacts
        .iter()
        .find(|a| a.id.ends_with("notes/a.md"))
        .expect("artifact for notes/a.md");
    assert_eq!(
        a.sha256,
        hex::encode(sha2::Sha256::digest(written.as_bytes()))
    );
    let r = h.task("kb", "search CHECKOUT").await.expect("starts");
    let report = r.report.expect("report");
    assert!(report.details.contains("notes/a.md"), "{}", report.details);
    let r = h.task("kb", "read ../../etc/passwd").await.expect("starts");
    assert!(
        r.status != TaskStatus::Succeeded
            || r.report
                .as_ref()
                .is_some_and(|p| p.outcome != Outcome::Satisfied),
        "{r:?}"
    );
}

/// The demo's memory steps: kb records a team decision, a second kb task reads it back; without
/// the grant both are denied and nothing is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kb_records_a_team_decision_and_a_second_task_reads_it_back() {
    let decision = "## Decisions\n- 2026-03-01: checkout caps the cart at 50 items\n";
    let (dir, _tracker) = workspace_and_tracker().await;
    let names = "[memory]\nworkspace = \"shop\"\n";
    let h = host(dir.path(), &["kb"], &format!("{names}{}", kb_grant(true))).await;
    let r = h
        .task("kb", &format!("remember team\n{decision}"))
        .await
        .expect("starts");
    assert_eq!(r.status, TaskStatus::Succeeded, "{:?}", r.error);
    let report = r.report.expect("report");
    assert_eq!(report.outcome, Outcome::Satisfied, "{}", report.details);
    assert!(
        report.details.contains("stored version 1"),
        "{}",
        report.details
    );
    assert_eq!(r.receipts.len(), 1, "{:#?}", r.receipts);
    assert_eq!(r.receipts[0].receipt_type, "memory");
    let r = h.task("kb", "recall team").await.expect("starts");
    let report = r.report.expect("report");
    assert!(
        report.details.contains(decision.trim_end()),
        "{}",
        report.details
    );

    let (dir, _tracker) = workspace_and_tracker().await;
    let h = host(dir.path(), &["kb"], &format!("{names}{}", kb_grant(false))).await;
    let r = h
        .task("kb", &format!("remember team\n{decision}\nrecall team"))
        .await
        .expect("starts");
    let report = r.report.expect("report");
    assert_eq!(report.outcome, Outcome::Failed, "{}", report.details);
    assert!(
        report.details.contains("denied") && report.details.contains("team:write"),
        "{}",
        report.details
    );
    assert!(r.receipts.is_empty(), "{:#?}", r.receipts);
    let team = h
        .memory()
        .read(guild_host::memory::Scope::Team)
        .await
        .expect("read");
    assert_eq!(team.version, None);
}

/// kb's grant: its folder, and team memory when `memory`.
fn kb_grant(memory: bool) -> String {
    let rights = if memory {
        "memory = [\"team:read\", \"team:write\"]\n"
    } else {
        ""
    };
    format!(
        "[grants.kb]\nfs = [{{ guest = \"/workspace\", host = \"ws\", mode = \"rw\" }}]\n{rights}"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn triage_files_issues_and_finds_duplicates() {
    let (_dir, tracker, h) = setup().await;
    let r = h
        .task(
            "triage",
            "- [bug] Checkout times out\n- [ux] Error page shows a stack trace\n",
        )
        .await
        .expect("starts");
    assert_eq!(r.status, TaskStatus::Succeeded, "{:?}", r.error);
    let issues = tracker.issues();
    assert_eq!(issues.len(), 2, "{issues:?}");
    let creates: Vec<_> = r
        .tool_calls
        .iter()
        .filter(|c| c.tool == "tracker.create_issue")
        .collect();
    assert_eq!(creates.len(), 2);
    for c in &creates {
        assert!(c.mutating);
        assert_eq!(c.outcome.status, CallStatus::Success);
        let id = c.outcome.external_id.clone().expect("external id");
        assert!(issues.iter().any(|i| i.number.to_string() == id));
        assert!(
            c.outcome
                .verifiable_url
                .as_deref()
                .is_some_and(|u| u.contains(&format!("/issues/{id}")))
        );
    }
    let report = r.report.expect("report");
    assert_eq!(report.claims.len(), 2, "{report:?}");
    // Same bug again: found as a duplicate, not filed twice.
    let r = h
        .task("triage", "- [bug] Checkout times out\n")
        .await
        .expect("starts");
    assert_eq!(r.status, TaskStatus::Succeeded, "{:?}", r.error);
    assert_eq!(tracker.issues().len(), 2);
    assert!(
        r.tool_calls
            .iter()
            .all(|c| c.tool != "tracker.create_issue"),
        "{:?}",
        r.tool_calls
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn triage_reports_tracker_refusal_verbatim() {
    let (_dir, tracker, h) = setup().await;
    tracker.set_refuse_creates(Some((410, "Issues are disabled for this repo".to_owned())));
    let r = h
        .task("triage", "- [bug] Something broke\n")
        .await
        .expect("starts");
    let create = r
        .tool_calls
        .iter()
        .find(|c| c.tool == "tracker.create_issue")
        .expect("create attempted");
    assert_eq!(create.outcome.status, CallStatus::Failed);
    assert!(
        create
            .outcome
            .error
            .as_deref()
            .unwrap_or("")
            .contains("Issues are disabled for this repo")
    );
    let report = r.report.expect("report");
    assert_ne!(report.outcome, Outcome::Satisfied);
    assert!(
        report
            .open_issues
            .iter()
            .any(|i| i.contains("Issues are disabled")),
        "{report:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_digest_specialist_uses_the_connector() {
    let (_dir, _tracker, h) = setup().await;
    let r = h
        .task(
            "triage",
            "- [bug] Crash on start\n- [bug] Crash on exit\n- [ux] Ugly button\n",
        )
        .await
        .expect("starts");
    assert_eq!(r.status, TaskStatus::Succeeded, "{:?}", r.error);
    let r = h.task("digest", "crash").await.expect("starts");
    assert_eq!(r.status, TaskStatus::Succeeded, "{:?}", r.error);
    assert!(r.specialist.starts_with("digest@"));
    let report = r.report.expect("report");
    assert!(report.summary.contains('2'), "{}", report.summary);
    assert!(
        report.details.contains("Crash on start") && !report.details.contains("Ugly button"),
        "{}",
        report.details
    );
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(r.tool_calls[0].tool, "tracker.search_issues");
    assert!(!r.tool_calls[0].mutating);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn roster_gates_on_required_connectors() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("ws")).expect("mkdir");
    let h = host(
        dir.path(),
        &["kb", "triage", "digest"],
        "[grants.kb]\nfs = [{ guest = \"/workspace\", host = \"ws\", mode = \"rw\" }]",
    )
    .await;
    let roster: Vec<_> = h.roster().into_iter().map(|r| r.name).collect();
    assert_eq!(roster, vec!["kb"]);
    let err = h
        .task("triage", "- a bug")
        .await
        .expect_err("tracker is not loaded");
    assert!(err.to_string().contains("tracker"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn validation_catches_a_specialist_claiming_what_the_tracker_refused() {
    use guild_host::validate::CheckStatus;
    let (dir, tracker) = workspace_and_tracker().await;
    let grants = grants(tracker.base_url(), "token")
        + "[grants.optimist]\ntools = [\"tracker.create_issue\"]\n";
    let h = host(dir.path(), &["tracker", "optimist"], &grants).await;

    // Honest case: the tracker accepts, claims match success receipts.
    let r = h
        .task("optimist", "- Checkout times out\n")
        .await
        .expect("starts");
    let v = r.validation.expect("validated");
    assert_eq!(v.verdict, CheckStatus::Passed, "{:?}", v.checks);

    // The tracker refuses; the specialist still says it created the issue.
    tracker.set_refuse_creates(Some((410, "Issues are disabled for this repo".to_owned())));
    let r = h
        .task("optimist", "- Search ignores accents\n")
        .await
        .expect("starts");
    assert_eq!(
        r.report.as_ref().map(|p| p.outcome),
        Some(Outcome::Satisfied),
        "it claims success"
    );
    let v = r.validation.expect("validated");
    assert_eq!(v.verdict, CheckStatus::Failed, "{:?}", v.checks);
    assert!(
        v.checks.iter().any(|c| c.status == CheckStatus::Failed
            && c.message.contains("Issues are disabled for this repo")),
        "the tracker's error is quoted verbatim: {:?}",
        v.checks
    );
    assert_eq!(r.receipts.len(), 1);
    assert_eq!(
        r.receipts[0].status,
        guild_host::receipts::ReceiptStatus::Failed
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_receipt_fetches_the_verifiable_url_only_where_allowed() {
    use guild_host::validate::CheckStatus;
    let (dir, tracker) = workspace_and_tracker().await;
    let g = grants(tracker.base_url(), "token");

    let closed = host(dir.path(), &["tracker", "triage"], &g).await;
    let r = closed
        .task("triage", "- [bug] Checkout times out\n")
        .await
        .expect("starts");
    let id = r.receipts[0].id.clone();
    let check = closed.verify_receipt(&id).await.expect("answers");
    assert_ne!(
        check.status,
        CheckStatus::Passed,
        "loopback is not public: {check:?}"
    );
    assert!(
        check.message.contains("verify_origins"),
        "{}",
        check.message
    );

    // The operator names the origin: now it is fetched, without credentials, and found.
    let text = format!(
        "[host]\nplugins = [{:?}, {:?}]\ndata_dir = \".guild\"\nverify_origins = [\"{}\"]\n\n{g}",
        guild_tests::plugin_dir("tracker").display().to_string(),
        guild_tests::plugin_dir("triage").display().to_string(),
        tracker.base_url()
    );
    let config = guild_host::Config::parse(&text, &dir.path().join("guild.toml"), dir.path())
        .expect("config");
    let open = guild_host::Host::with_engine(config, guild_tests::engine())
        .await
        .expect("host");
    let check = open.verify_receipt(&id).await.expect("answers");
    assert_eq!(check.status, CheckStatus::Passed, "{check:?}");
    assert!(check.message.contains("found"), "{}", check.message);
    assert!(open.verify_receipt("no-such-receipt").await.is_err());
}

/// The call-chain rule: a connector acts with **its own** grants, never the caller's. The
/// specialist is granted the tool; what the tool may reach is the connector's grant. So a
/// specialist with no HTTP grant files an issue through the tracker's grant (and the receipt
/// names it as the route), while an HTTP grant given to the specialist never reaches a
/// connector that has none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connector_acts_with_its_own_grants_not_the_callers() {
    use guild_host::receipts::ReceiptStatus;
    // Allowed: triage has no http grant at all; the tracker's own grant carries the call.
    let (_dir, tracker, h) = setup().await;
    let triage = h.plugin("triage").expect("triage loaded");
    assert!(
        !triage.capabilities.iter().any(|r| r.capability == "http"
            && matches!(r.status, guild_host::capability::RowStatus::Granted(_))),
        "{:?}",
        triage.capabilities
    );
    let r = h
        .task("triage", "- [bug] Search box ignores accents\n")
        .await
        .expect("starts");
    assert_eq!(r.status, TaskStatus::Succeeded, "{:?}", r.error);
    assert_eq!(tracker.issues().len(), 1);
    let receipt = r
        .receipts
        .iter()
        .find(|x| x.tool == "tracker.create_issue")
        .expect("a receipt for the create");
    assert_eq!(receipt.status, ReceiptStatus::Success);
    assert_eq!(receipt.route, "triage", "the receipt names the specialist");
    assert!(receipt.plugin.starts_with("tracker@"), "{}", receipt.plugin);
    drop(h);

    // Denied: the tracker has no http grant; an http grant given to the caller does not flow
    // down the chain, so the connector's request is refused and nothing is filed.
    let (dir, tracker) = workspace_and_tracker().await;
    let base = tracker.base_url().to_owned();
    let text = grants(&base, "token")
        .replace(&format!("http = [\"{base}\"]\n"), "")
        .replace(
            "[grants.triage]\n",
            &format!("[grants.triage]\nhttp = [\"{base}\"]\n"),
        );
    let h = host(dir.path(), ALL, &text).await;
    let r = h
        .task("triage", "- [bug] Search box ignores accents\n")
        .await
        .expect("starts");
    assert!(
        tracker.issues().is_empty(),
        "nothing filed without the connector's grant"
    );
    let refused = r
        .tool_calls
        .iter()
        .filter(|c| c.tool.starts_with("tracker."))
        .any(|c| {
            c.outcome
                .error
                .as_deref()
                .is_some_and(|e| e.contains("denied"))
        });
    assert!(refused, "{:?}", r.tool_calls);
}

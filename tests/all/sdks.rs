//! The Python and JavaScript SDKs: their own unit tests (plain `python3 -m unittest`, `node
//! --test`, no wasm) run from here so `cargo test --workspace` covers them, and the same
//! specialist written with each SDK (plugins/recap-py, plugins/recap-js) runs as a real component:
//! a tool call through the tracker connector, a team memory read and update, a report; and the
//! denied pair, where the ungranted tool reaches the guest as the SDK's typed `Denied` and the
//! report names it, with the line of the specialist's source that made the call.

use std::path::Path;
use std::process::Command;

use guild_cli::demo::tracker::TrackerServer;
use guild_host::Host;
use guild_host::llm::standin::{StandIn, Step};
use guild_host::memory::{Actor, Scope};
use guild_host::types::{Outcome, TaskStatus};
use guild_host::validate::CheckStatus;
use guild_tests::{host, repo_root};

/// Runs `program args` in `dir` (relative to the repository root) and fails with its output.
fn run_unit_tests(dir: &str, program: &str, args: &[&str], env: &[(&str, &Path)]) {
    let root = repo_root();
    let mut cmd = Command::new(program);
    cmd.args(args).current_dir(root.join(dir));
    for (key, value) in env {
        cmd.env(key, root.join(value));
    }
    let out = cmd.output().unwrap_or_else(|e| {
        panic!(
            "could not run {program} in {dir} ({e}): install it (the README lists the toolchains)"
        )
    });
    assert!(
        out.status.success(),
        "{program} {args:?} in {dir} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn python_sdk_and_python_plugins_pass_their_unit_tests() {
    let sdk = Path::new("sdk/python");
    run_unit_tests("sdk/python", "python3", &["-m", "unittest", "-q"], &[]);
    for plugin in ["plugins/digest", "plugins/recap-py"] {
        run_unit_tests(
            plugin,
            "python3",
            &["-m", "unittest", "-q"],
            &[("PYTHONPATH", sdk)],
        );
    }
}

#[test]
fn js_sdk_and_js_plugins_pass_their_unit_tests() {
    run_unit_tests("sdk/js/guild-sdk", "node", &["--test", "test/"], &[]);
    run_unit_tests(
        ".",
        "node",
        &[
            "--import",
            "./sdk/js/guild-sdk/register.js",
            "--test",
            "plugins/recap-js/",
        ],
        &[],
    );
}

const NAMES: &str = "[memory]\nworkspace = \"shop\"\n";

/// A tracker stand-in holding two "crash" issues (filed by the triage specialist) and a host
/// with `plugin` granted `plugin_grant`.
async fn tracker_and_host(
    plugin: &str,
    plugin_grant: &str,
) -> (tempfile::TempDir, TrackerServer, Host) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("token"), "tok-1\n").expect("token");
    let tracker = TrackerServer::start("tok-1").await.expect("tracker starts");
    let url = tracker.base_url();
    let grants = format!(
        r#"{NAMES}
[grants.tracker]
http = ["{url}"]
config = {{ base_url = "{url}", repo = "acme/shop" }}
secrets = {{ TRACKER_TOKEN = {{ file = "token", hosts = ["{url}"] }} }}
[grants.triage]
tools = ["tracker.create_issue", "tracker.search_issues"]
[grants.{plugin}]
{plugin_grant}
"#
    );
    let h = host(dir.path(), &["tracker", "triage", plugin], &grants).await;
    let r = h
        .task(
            "triage",
            "- [bug] Crash on start\n- [bug] Crash on exit\n- [ux] Ugly button\n",
        )
        .await
        .expect("triage starts");
    assert_eq!(r.status, TaskStatus::Succeeded, "{:?}", r.error);
    (dir, tracker, h)
}

/// The granted run: the search goes through the connector, the count lands in team memory
/// (receipted, claimed, validated), the report lists the matches.
async fn searches_records_and_reports(plugin: &str) {
    let grant = "tools = [\"tracker.search_issues\"]\nmemory = [\"team:read\", \"team:write\"]";
    let (_dir, _tracker, h) = tracker_and_host(plugin, grant).await;
    h.memory()
        .update(
            Scope::Team,
            "## Decisions\n- 2026-03-01: ship on Tuesdays\n",
            0,
            &Actor::Supervisor,
        )
        .await
        .expect("seed team memory");

    let r = h.task(plugin, "crash").await.expect("task starts");
    assert_eq!(r.status, TaskStatus::Succeeded, "{:?}", r.error);
    assert!(
        r.specialist.starts_with(&format!("{plugin}@")),
        "{}",
        r.specialist
    );
    let report = r.report.as_ref().expect("report");
    assert_eq!(report.outcome, Outcome::Satisfied, "{report:?}");
    assert_eq!(report.summary, "2 issues match 'crash'");
    assert!(
        report.details.contains("Crash on start") && !report.details.contains("Ugly button"),
        "{}",
        report.details
    );
    // The search through the connector, then the memory update (recorded like a mutating call).
    let calls: Vec<_> = r.tool_calls.iter().map(|c| c.tool.as_str()).collect();
    assert_eq!(
        calls,
        ["tracker.search_issues", "memory.update"],
        "{:?}",
        r.tool_calls
    );
    assert_eq!(r.receipts.len(), 1, "{:#?}", r.receipts);
    assert_eq!(r.receipts[0].receipt_type, "memory");
    assert_eq!(report.claims.len(), 1, "{report:?}");
    assert_eq!(report.claims[0].tool, "memory.update");
    let v = r.validation.as_ref().expect("validated");
    assert_eq!(v.verdict, CheckStatus::Passed, "{:#?}", v.checks);

    let stored = h.memory().read(Scope::Team).await.expect("read").text;
    assert!(
        stored.starts_with("## Decisions\n- 2026-03-01: ship on Tuesdays\n\n## Issue recaps\n- "),
        "{stored}"
    );
    assert!(stored.ends_with(": 2 issues match 'crash'\n"), "{stored}");
}

/// The denied pair: without the tool grant the guest's SDK raises `Denied`, the specialist turns
/// it into a failed report naming the tool, and nothing reaches the tracker or memory.
async fn ungranted_tool_is_a_typed_denial_in_the_report(plugin: &str) {
    let (_dir, _tracker, h) =
        tracker_and_host(plugin, "memory = [\"team:read\", \"team:write\"]").await;
    let r = h.task(plugin, "crash").await.expect("task starts");
    assert_eq!(r.status, TaskStatus::Succeeded, "{:?}", r.error);
    let report = r.report.as_ref().expect("report");
    assert_eq!(report.outcome, Outcome::Failed, "{report:?}");
    let issue = report
        .open_issues
        .first()
        .map(String::as_str)
        .unwrap_or_default();
    assert!(issue.contains("denied"), "not a denial: {issue}");
    assert!(
        issue.contains("tracker.search_issues"),
        "does not name the tool: {issue}"
    );
    assert!(issue.contains(plugin), "does not name the plugin: {issue}");
    // ... and the line of the specialist's source that made the call.
    let (file, call) = match plugin {
        "recap-py" => ("recap.py", "found = guild.tools.call(SEARCH"),
        _ => ("recap.js", "found = tools.call(SEARCH"),
    };
    let at = guild_tests::source_line(plugin, file, call);
    assert!(issue.ends_with(&format!(" (at {at})")), "{issue}");
    assert!(r.receipts.is_empty(), "{:#?}", r.receipts);
    let stored = h.memory().read(Scope::Team).await.expect("read");
    assert!(stored.text.is_empty(), "{}", stored.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_specialist_searches_records_memory_and_reports() {
    searches_records_and_reports("recap-py").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_specialist_sees_an_ungranted_tool_as_denied() {
    ungranted_tool_is_a_typed_denial_in_the_report("recap-py").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn js_sdk_specialist_searches_records_memory_and_reports() {
    searches_records_and_reports("recap-js").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn js_sdk_specialist_sees_an_ungranted_tool_as_denied() {
    ungranted_tool_is_a_typed_denial_in_the_report("recap-js").await;
}

/// `[llm]` tables naming the stand-in as endpoint `local` with alias `fast`, after `grant`.
fn with_model(standin: &StandIn, grant: &str) -> String {
    format!(
        "{grant}\n[llm.endpoints.local]\nbase_url = \"{}\"\n[llm.models]\nfast = {{ endpoint = \
         \"local\", model = \"m-fast\" }}\n",
        standin.base_url()
    )
}

/// The Python kit's `llm` in a real component: recap-py asks the granted model (the scripted
/// stand-in) for a summary, which lands in its report, and the call's tokens in the task's usage.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_specialist_summarizes_with_a_granted_model() {
    let s = StandIn::start(vec![Step::Text(
        "Two crashes, at start and at exit.".into(),
    )])
    .await
    .expect("stand-in");
    let grant = "tools = [\"tracker.search_issues\"]\nmemory = [\"team:read\", \"team:write\"]\n\
                 [grants.recap-py.llm]\nmodels = [\"fast\"]";
    let (_dir, _tracker, h) = tracker_and_host("recap-py", &with_model(&s, grant)).await;
    let r = h
        .task("recap-py", "crash\nsummarize with fast")
        .await
        .expect("task starts");
    assert_eq!(r.status, TaskStatus::Succeeded, "{:?}", r.error);
    let report = r.report.as_ref().expect("report");
    assert!(report.open_issues.is_empty(), "{report:?}");
    assert!(
        report
            .details
            .ends_with("\n\nSummary: Two crashes, at start and at exit."),
        "{}",
        report.details
    );
    assert_eq!(r.usage.models["fast"].calls, 1);
    let sent = s.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].body["model"], "m-fast");
    let asked = sent[0].body["messages"][1]["content"]
        .as_str()
        .unwrap_or_default();
    assert!(asked.contains("Crash on start"), "{asked}");
    assert_eq!(sent[0].body["max_tokens"], 100);
}

/// The denied pair: without an `llm` grant the Python kit raises `LlmDenied`; its text (kind
/// once, plugin and capability named) reaches the report, and nothing reaches the endpoint.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_specialist_sees_an_ungranted_model_as_denied() {
    let s = StandIn::start(vec![Step::Text("never sent".into())])
        .await
        .expect("stand-in");
    let grant = "tools = [\"tracker.search_issues\"]\nmemory = [\"team:read\", \"team:write\"]";
    let (_dir, _tracker, h) = tracker_and_host("recap-py", &with_model(&s, grant)).await;
    let r = h
        .task("recap-py", "crash\nsummarize with fast")
        .await
        .expect("task starts");
    assert_eq!(r.status, TaskStatus::Succeeded, "{:?}", r.error);
    let report = r.report.as_ref().expect("report");
    assert!(!report.hard_passed, "{report:?}");
    let issue = report
        .open_issues
        .first()
        .map(String::as_str)
        .unwrap_or_default();
    assert!(
        issue.starts_with("no summary: denied: plugin 'recap-py' capability llm"),
        "{issue}"
    );
    assert_eq!(issue.matches("denied").count(), 1, "{issue}");
    assert!(s.requests().is_empty(), "nothing reached the endpoint");
}

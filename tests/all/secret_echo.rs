//! Secrets never come back: an upstream on 127.0.0.1 echoes the secret the host attached,
//! plain and encoded, and the value reaches neither the guest nor anything the guest returns
//! (report, progress, memory, receipts, tool calls, a trap's stderr). Each path is paired with
//! the same data carrying no granted secret, which passes untouched.

use guild_host::memory::Scope;
use guild_host::types::TaskStatus;
use guild_tests::{Probe, host, probe};
use serde_json::{Value, json};

use super::server::{self, SPELLINGS, TOKEN, spell};

const PLUGINS: &[&str] = &["testing/probe", "testing/echo"];
const MARKER: &str = guild_http::redact::MARKER;

/// Grants `probe` the loopback origin of `port`, team memory, reports and `echo.echo`, with
/// the `API_TOKEN` secret (valued [`TOKEN`]) when `secret` is true.
fn grants(port: u16, secret: bool) -> String {
    let mut text = format!(
        "[memory]\nworkspace = \"acme\"\nuser = \"ana\"\n\n[grants.probe]\n\
         http = [\"http://127.0.0.1:{port}\"]\nreport = true\ntools = [\"echo.echo\"]\n\
         memory = [\"team:read\", \"team:write\"]\n"
    );
    if secret {
        text.push_str(&format!(
            "secrets = {{ API_TOKEN = {{ value = \"{TOKEN}\", hosts = [\"http://127.0.0.1:*\"] }} }}\n"
        ));
    }
    text
}

/// Whether `text` carries the token, as it is or in the spelling `how`.
fn reveals(text: &str, how: &str) -> bool {
    text.contains(TOKEN)
        || text.to_lowercase().contains(TOKEN)
        || text.contains(&spell(how, TOKEN))
        || text.contains(&spell(how, &format!("Bearer {TOKEN}")))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_echoed_secret_reaches_the_guest_redacted_in_every_spelling() {
    let addr = server::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PLUGINS, &grants(addr.port(), true)).await;
    for how in SPELLINGS {
        let url = format!("http://{addr}/echo?as={how}");
        let p = probe(&h, json!({"op": "http", "url": url})).await;
        assert!(p.ok, "{how}: {p:?}");
        // What the guest received, reversed by the guest so that no redaction on the way out
        // could hide a value that got in.
        let reversed = p.value["body_reversed"].as_str().unwrap_or_default();
        let received: String = reversed.chars().rev().collect();
        assert!(
            !reveals(&received, how),
            "{how}: the guest received {received}"
        );
        assert!(received.contains(MARKER), "{how}: {received}");
        assert!(received.contains("\"note\": \"kept\""), "{how}: {received}");
        let echoed = header(&p.value, "x-echo");
        assert!(!reveals(&echoed, how), "{how}: header {echoed}");
        assert!(echoed.contains(MARKER), "{how}: header {echoed}");
        let everything = format!("{:?}", p.result);
        assert!(!reveals(&everything, how), "{how}: {everything}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_echo_without_a_granted_secret_is_handed_over_untouched() {
    let addr = server::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PLUGINS, &grants(addr.port(), false)).await;
    let brief = json!({"op": "http", "url": format!("http://{addr}/echo?as=base64"),
                       "headers": {"Authorization": format!("Bearer {TOKEN}")}});
    let p = probe(&h, brief).await;
    assert!(p.ok, "{p:?}");
    let spelled = spell("base64", &format!("Bearer {TOKEN}"));
    let body = p.value["body"].as_str().unwrap_or_default();
    assert!(body.contains(&spelled), "{body}");
    assert_eq!(header(&p.value, "x-echo"), spelled);
}

fn header(value: &Value, name: &str) -> String {
    value["headers"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|pair| pair[0].as_str() == Some(name))
        .and_then(|pair| pair[1].as_str())
        .unwrap_or_default()
        .to_owned()
}

/// One task in which the guest, holding the token (a path this suite does not know of), puts
/// it, spelled `how`, in a progress report, the team memory, its answer and a claim.
async fn leak(h: &guild_host::Host, how: &str) -> Probe {
    let text = format!("the token is {}", spell(how, TOKEN));
    let p = probe(
        h,
        json!({"op": "seq", "ops": [
            {"op": "report", "text": text},
            {"op": "memory_update", "scope": "team", "text": format!("## Notes\n- {text}\n")},
            {"op": "log", "text": text},
            {"op": "brief"},
        ], "claim": {"tool": "echo.echo", "text": text}}),
    )
    .await;
    assert_eq!(p.result.status, TaskStatus::Succeeded, "{how}: {p:?}");
    p
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_the_guest_sends_out_is_redacted_from_report_progress_memory_and_receipts() {
    let addr = server::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PLUGINS, &grants(addr.port(), true)).await;
    for how in ["plain", "upper", "percent", "base64", "hex"] {
        let p = leak(&h, how).await;
        let progress: Vec<&str> = p.result.reports.iter().map(|r| r.output.as_str()).collect();
        assert_eq!(progress.len(), 1, "{how}: {progress:?}");
        assert!(!reveals(progress[0], how), "{how}: {progress:?}");
        assert!(progress[0].contains(MARKER), "{how}: {progress:?}");
        let report = p.result.report.as_ref().expect("report");
        assert!(!reveals(&format!("{report:?}"), how), "{how}: {report:?}");
        assert!(report.details.contains(MARKER), "{how}: {}", report.details);
        let memory = h.memory().read(Scope::Team).await.expect("read");
        assert!(!reveals(&memory.text, how), "{how}: {}", memory.text);
        assert!(memory.text.contains(MARKER), "{how}: {}", memory.text);
        let receipts = format!("{:?}", p.result.receipts);
        assert!(
            !p.result.receipts.is_empty(),
            "the memory update is receipted"
        );
        assert!(!reveals(&receipts, how), "{how}: {receipts}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_granted_secret_the_same_text_goes_out_untouched() {
    let addr = server::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PLUGINS, &grants(addr.port(), false)).await;
    let p = leak(&h, "plain").await;
    assert!(p.result.reports[0].output.contains(TOKEN), "{p:?}");
    let report = p.result.report.as_ref().expect("report");
    assert!(report.details.contains(TOKEN), "{}", report.details);
    let memory = h.memory().read(Scope::Team).await.expect("read");
    assert!(memory.text.contains(TOKEN), "{}", memory.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_input_carrying_a_secret_is_refused_before_any_receipt() {
    let addr = server::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PLUGINS, &grants(addr.port(), true)).await;
    let call = |text: String| json!({"op": "tool", "name": "echo.echo", "input": {"text": text}});
    let p = probe(&h, call("hello".to_owned())).await;
    assert!(p.ok, "an input without the secret is sent: {p:?}");
    assert_eq!(p.result.tool_calls.len(), 1, "{:?}", p.result.tool_calls);
    for how in ["plain", "percent", "base64"] {
        let p = probe(&h, call(format!("token {}", spell(how, TOKEN)))).await;
        assert!(!p.ok, "{how}: {p:?}");
        assert!(
            p.error.contains("denied") && p.error.contains("API_TOKEN"),
            "{how}: {}",
            p.error
        );
        assert!(
            p.result.receipts.is_empty(),
            "{how}: {:?}",
            p.result.receipts
        );
        assert!(
            p.result.tool_calls.is_empty(),
            "{how}: {:?}",
            p.result.tool_calls
        );
        assert!(!reveals(&p.error, how), "{how}: {}", p.error);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trap_shows_the_guests_last_stderr_lines_redacted() {
    let addr = server::start().await;
    for (secret, kept) in [(true, false), (false, true)] {
        let dir = tempfile::tempdir().expect("tempdir");
        let h = host(dir.path(), PLUGINS, &grants(addr.port(), secret)).await;
        let p = probe(
            &h,
            json!({"op": "seq", "ops": [
                {"op": "print", "text": format!("about to fail with {TOKEN}")},
                {"op": "trap"},
            ]}),
        )
        .await;
        assert_eq!(p.result.status, TaskStatus::Failed, "{p:?}");
        let error = p.result.error.clone().unwrap_or_default();
        assert!(error.contains("about to fail with"), "{error}");
        assert_eq!(
            error.contains(TOKEN),
            kept,
            "secret granted: {secret}: {error}"
        );
        assert_eq!(error.contains(MARKER), secret, "{error}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guest_log_messages_and_stdio_are_logged_redacted() {
    let logs = crate::guest_logs::captured_logs();
    let addr = server::start().await;
    for (secret, how) in [(true, "plain"), (true, "base64"), (false, "plain")] {
        let dir = tempfile::tempdir().expect("tempdir");
        let h = host(dir.path(), PLUGINS, &grants(addr.port(), secret)).await;
        let tag = format!("log-check-{secret}-{how}");
        let text = format!("{tag} {}", spell(how, TOKEN));
        let p = probe(
            &h,
            json!({"op": "seq", "ops": [
                {"op": "log", "text": text, "level": "warn"},
                {"op": "print", "text": text},
            ]}),
        )
        .await;
        assert!(p.ok, "{p:?}");
        let logs =
            String::from_utf8_lossy(&logs.lock().unwrap_or_else(|p| p.into_inner())).into_owned();
        let lines: Vec<&str> = logs.lines().filter(|l| l.contains(&tag)).collect();
        // The log message, and the printed line on stdout and on stderr.
        assert_eq!(lines.len(), 3, "{how}: {lines:#?}");
        for line in lines {
            assert_eq!(reveals(line, how), !secret, "{how}: {line}");
            assert_eq!(line.contains(MARKER), secret, "{how}: {line}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_echoed_to_javascript_fetch_over_wasi_http_never_comes_back() {
    let addr = server::start().await;
    // One host per grant: compiling the JavaScript engine is the slow part.
    for (secret, spellings) in [(true, &["plain", "json", "basic"][..]), (false, &["plain"])] {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut grants = format!("[grants.jsfetch]\nhttp = [\"http://{addr}\"]\n");
        if secret {
            grants.push_str(&format!(
                "secrets = {{ API_TOKEN = {{ value = \"{TOKEN}\", hosts = [\"http://127.0.0.1:*\"] }} }}\n"
            ));
        }
        let h = host(dir.path(), &["testing/jsfetch"], &grants).await;
        for how in spellings {
            let url = format!("http://{addr}/echo?as={how}");
            let result = h.task("jsfetch", &url).await.expect("task starts");
            assert_eq!(result.status, TaskStatus::Succeeded, "{result:?}");
            let details = &result.report.as_ref().expect("report").details;
            let answer: Value = serde_json::from_str(details).expect("the guest reports JSON");
            let body = answer["body"].as_str().unwrap_or_default();
            assert!(body.contains("\"note\": \"kept\""), "{how}: {body}");
            assert!(!reveals(details, how), "{how}: {details}");
            assert_eq!(body.contains(MARKER), secret, "{how}: {body}");
        }
    }
}

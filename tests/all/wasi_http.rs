//! `wasi:http/outgoing-handler`: a JavaScript guest's standard `fetch()` (jco's default
//! StarlingMonkey build) goes through the same guarded client, allowlist and secrets as the
//! `http` interface. Every request goes to 127.0.0.1.

use guild_host::Host;
use guild_host::types::TaskStatus;
use guild_tests::host;
use serde_json::{Value, json};

use super::server::{self, TOKEN};

const JSFETCH: &[&str] = &["testing/jsfetch"];

/// What the guest answered: `{"ok": true, "status", "body"}` or `{"ok": false, "error"}`.
async fn fetch(h: &Host, url: String) -> Value {
    let result = h.task("jsfetch", &url).await.expect("jsfetch task starts");
    assert_eq!(
        result.status,
        TaskStatus::Succeeded,
        "task failed: {:?}",
        result.error
    );
    let report = result.report.expect("a successful task has a report");
    serde_json::from_str(&report.details).expect("the guest reports JSON")
}

fn grant(http: &[String]) -> String {
    let list: Vec<String> = http.iter().map(|o| format!("{o:?}")).collect();
    format!("[grants.jsfetch]\nhttp = [{}]", list.join(", "))
}

/// Asserts that `fetch()` rejected. The host's refusal travels as `internal-error` with the
/// guarded client's text; where the JavaScript engine passes that text on, it must name the
/// plugin, the capability and the refused origin.
fn assert_refused(answer: &Value, origin: &str) {
    assert_eq!(answer["ok"], json!(false), "expected a refusal: {answer}");
    let error = answer["error"].as_str().unwrap_or_default();
    assert!(!error.is_empty(), "a refusal without an error: {answer}");
    if error.contains("denied") {
        assert!(
            error.contains("jsfetch"),
            "does not name the plugin: {error}"
        );
        assert!(
            error.contains("`http`"),
            "does not name the capability: {error}"
        );
        assert!(error.contains(origin), "does not name {origin}: {error}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn js_fetch_allowed_when_granted() {
    let addr = server::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), JSFETCH, &grant(&[format!("http://{addr}")])).await;
    let answer = fetch(&h, format!("http://{addr}/hello")).await;
    assert_eq!(answer["ok"], json!(true), "{answer}");
    assert_eq!(answer["status"], json!(200));
    assert_eq!(answer["body"], json!("hello from 127.0.0.1"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn js_fetch_denied_without_grant() {
    let addr = server::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), JSFETCH, "").await;
    let answer = fetch(&h, format!("http://{addr}/hello")).await;
    assert_refused(&answer, &format!("http://{addr}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn js_fetch_other_port_and_redirect_refused() {
    let addr = server::start().await;
    let other = server::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), JSFETCH, &grant(&[format!("http://{addr}")])).await;
    let answer = fetch(&h, format!("http://{other}/hello")).await;
    assert_refused(&answer, &format!("http://{other}"));
    // A redirect from the granted origin is re-validated: the ungranted hop is refused.
    let answer = fetch(
        &h,
        format!("http://{addr}/redirect?to=http://{other}/hello"),
    )
    .await;
    assert_refused(&answer, &format!("http://{other}"));
    // A redirect within the granted origin is followed.
    let answer = fetch(&h, format!("http://{addr}/redirect?to=/hello")).await;
    assert_eq!(answer["body"], json!("hello from 127.0.0.1"), "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn js_fetch_gets_host_attached_secret_only_when_granted() {
    let addr = server::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let secret = format!(
        "\nsecrets = {{ API_TOKEN = {{ value = \"{TOKEN}\", hosts = [\"http://127.0.0.1:*\"] }} }}"
    );
    let granted = grant(&[format!("http://{addr}")]) + &secret;
    let h = host(dir.path(), JSFETCH, &granted).await;
    let answer = fetch(&h, format!("http://{addr}/auth")).await;
    let body: Value = serde_json::from_str(answer["body"].as_str().unwrap_or("")).expect("json");
    assert_eq!(body["authorized"], json!(true), "{answer}");
    let h = host(dir.path(), JSFETCH, &grant(&[format!("http://{addr}")])).await;
    let answer = fetch(&h, format!("http://{addr}/auth")).await;
    let body: Value = serde_json::from_str(answer["body"].as_str().unwrap_or("")).expect("json");
    assert_eq!(body["had_authorization"], json!(false), "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn js_fetch_oversized_response_refused() {
    let addr = server::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), JSFETCH, &grant(&[format!("http://{addr}")])).await;
    let answer = fetch(&h, format!("http://{addr}/big")).await;
    assert_eq!(answer["ok"], json!(false), "{answer}");
    assert!(
        answer.get("body").is_none(),
        "no part of the body reaches the guest"
    );
}

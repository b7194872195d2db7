//! `guild serve --http` bounds every client: a bearer token by default (generated private
//! into the data dir, even on loopback) and no token only as the operator's explicit,
//! loopback-only, warned-about choice; a cap on MCP sessions with idle ones expired; request
//! bodies and JSON depth bounded. Each limit is a `[serve]` setting, tested allowed and denied
//! against the real binary with plain HTTP requests on 127.0.0.1.

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, ChildStderr, Stdio};

use reqwest::StatusCode;
use serde_json::{Value, json};

mod common;

/// A folder with `guild.toml` (the echo connector; `serve` appended as a `[serve]` table).
fn setup(serve: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = format!(
        "[host]\nplugins = [{:?}]\ndata_dir = \"data\"\n\n[serve]\n{serve}\n",
        common::plugin("testing/echo").display().to_string()
    );
    std::fs::write(dir.path().join("guild.toml"), text).expect("guild.toml");
    dir
}

/// A running `guild serve --http 127.0.0.1:0`, its URL and what it printed before serving.
struct Server {
    child: Child,
    url: String,
    printed: String,
}

impl Server {
    fn start(dir: &Path, extra: &[&str]) -> Self {
        let mut child = common::guild(dir, &["serve", "--http", "127.0.0.1:0", "--watch-ms", "0"])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("guild serve starts");
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let (url, printed) = read_until_url(&mut stderr);
        // Keep draining stderr so the server never blocks on a full pipe.
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        Self {
            child,
            url,
            printed,
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_until_url(stderr: &mut BufReader<ChildStderr>) -> (String, String) {
    let mut printed = String::new();
    loop {
        let mut line = String::new();
        let n = stderr.read_line(&mut line).expect("read stderr");
        assert!(n > 0, "guild serve ended before serving:\n{printed}");
        printed.push_str(&line);
        if let Some(url) = line.trim().strip_prefix("guild serve: MCP on ") {
            return (url.to_owned(), printed);
        }
    }
}

fn token(dir: &Path) -> String {
    let text = std::fs::read_to_string(dir.join("data/serve.token")).expect("token file");
    format!("Bearer {}", text.trim())
}

fn initialize(extra: Value) -> String {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {"experimental": extra},
                   "clientInfo": {"name": "bounds", "version": "1"}}
    })
    .to_string()
}

/// POSTs `body` with the MCP headers plus `headers`; the status, the session id it got and
/// the response text.
async fn post(
    url: &str,
    body: String,
    headers: &[(&str, &str)],
) -> (StatusCode, Option<String>, String) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let response = request.send().await.expect("request is answered");
    let status = response.status();
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    // An SSE answer stays open after the result; its first event is enough here.
    let text = match tokio::time::timeout(std::time::Duration::from_secs(30), response.text()).await
    {
        Ok(text) => text.unwrap_or_default(),
        Err(_) => String::new(),
    };
    (status, session, text)
}

/// A new MCP session (initialize), as a client without a token may open one.
async fn open_session(url: &str, auth: &[(&str, &str)]) -> (StatusCode, Option<String>, String) {
    post(url, initialize(json!({})), auth).await
}

#[tokio::test]
async fn http_requires_a_generated_private_token_even_on_loopback() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = setup("");
    let server = Server::start(dir.path(), &[]);
    let file = dir.path().join("data/serve.token");
    let mode = std::fs::metadata(&file)
        .expect("token file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let bearer = token(dir.path());
    // Where the token is, never the token itself.
    assert!(server.printed.contains("serve.token"), "{}", server.printed);
    assert!(
        !server
            .printed
            .contains(bearer.trim_start_matches("Bearer ")),
        "the token was printed"
    );
    // Denied without it, allowed with it.
    assert_eq!(
        open_session(&server.url, &[]).await.0,
        StatusCode::UNAUTHORIZED
    );
    let (status, session, _) = open_session(&server.url, &[("authorization", &bearer)]).await;
    assert_eq!(status, StatusCode::OK);
    assert!(session.is_some());
}

#[tokio::test]
async fn no_token_is_an_explicit_loopback_choice_warned_about_at_every_start() {
    let dir = setup("");
    {
        let server = Server::start(dir.path(), &["--no-token"]);
        assert!(
            server.printed.contains("WITHOUT a bearer token"),
            "{}",
            server.printed
        );
        assert_eq!(open_session(&server.url, &[]).await.0, StatusCode::OK);
    }
    assert!(
        !dir.path().join("data/serve.token").exists(),
        "no token was made"
    );
    // The same choice made in guild.toml, warned about again.
    let dir = setup("no_token = true");
    {
        let server = Server::start(dir.path(), &[]);
        assert!(
            server.printed.contains("WITHOUT a bearer token"),
            "{}",
            server.printed
        );
        assert_eq!(open_session(&server.url, &[]).await.0, StatusCode::OK);
    }
    // Never on an address other machines reach (TEST-NET: refused before anything binds).
    let out = common::guild(
        dir.path(),
        &["serve", "--http", "192.0.2.1:8080", "--no-token"],
    )
    .output()
    .expect("guild serve runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("loopback addresses only"), "{stderr}");
}

#[tokio::test]
async fn sessions_past_max_sessions_are_refused_until_one_closes() {
    let dir = setup("no_token = true\nmax_sessions = 2");
    let server = Server::start(dir.path(), &[]);
    let (a, first, _) = open_session(&server.url, &[]).await;
    let (b, _, _) = open_session(&server.url, &[]).await;
    assert_eq!((a, b), (StatusCode::OK, StatusCode::OK));
    // Denied: a third while two are open.
    let (status, _, text) = open_session(&server.url, &[]).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{text}");
    assert!(text.contains("[serve] max_sessions"), "{text}");
    // Allowed: once a client closes its session, a new one fits.
    let first = first.expect("a session id");
    let closed = reqwest::Client::new()
        .delete(&server.url)
        .header("mcp-session-id", &first)
        .send()
        .await
        .expect("DELETE answered");
    assert!(closed.status().is_success(), "{}", closed.status());
    assert_eq!(open_session(&server.url, &[]).await.0, StatusCode::OK);
}

#[tokio::test]
async fn idle_sessions_expire_and_make_room() {
    let dir = setup("no_token = true\nmax_sessions = 1\nsession_idle_s = 1");
    let server = Server::start(dir.path(), &[]);
    let (status, old, _) = open_session(&server.url, &[]).await;
    assert_eq!(status, StatusCode::OK);
    // The only slot frees once the first session was idle for a second.
    let mut tries = 0;
    loop {
        let (status, _, text) = open_session(&server.url, &[]).await;
        if status == StatusCode::OK {
            break;
        }
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{text}");
        tries += 1;
        assert!(tries < 600, "the idle session never expired");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    // The expired session is gone for its client.
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}).to_string();
    let old = old.expect("a session id");
    let (status, _, _) = post(&server.url, ping, &[("mcp-session-id", &old)]).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn bodies_and_json_depth_are_bounded() {
    let dir = setup("no_token = true\nmax_body_kb = 64\nmax_json_depth = 16");
    let server = Server::start(dir.path(), &[]);
    // Allowed: a body under 64 KiB nested 15 deep (5 levels of initialize, 10 more).
    let nested = |n: usize| -> Value {
        serde_json::from_str(&format!("{}{}", "[".repeat(n), "]".repeat(n))).expect("json")
    };
    let (status, _, text) = post(
        &server.url,
        initialize(json!({"pad": {"x": "x".repeat(60_000)}, "deep": {"d": nested(10)}})),
        &[],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    // Denied: over 64 KiB.
    let (status, _, text) = post(
        &server.url,
        initialize(json!({"pad": {"x": "x".repeat(70_000)}})),
        &[],
    )
    .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{text}");
    assert!(text.contains("[serve] max_body_kb"), "{text}");
    // Denied: nested past 16 (5 + 16 levels).
    let (status, _, text) = post(
        &server.url,
        initialize(json!({"deep": {"d": nested(16)}})),
        &[],
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{text}");
    assert!(text.contains("[serve] max_json_depth"), "{text}");
}

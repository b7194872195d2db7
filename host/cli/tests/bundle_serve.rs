//! A bundle installed while `guild serve` runs for the data dir: the server's watcher picks the
//! new plugin folder up and the installed version serves a task over streamable HTTP, first a
//! fresh install, then an upgrade swapped in place.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::{Value, json};

mod common;

fn probe_dir() -> PathBuf {
    common::plugin("testing/probe")
}

fn guild(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = common::guild(dir, args);
    cmd.current_dir(dir);
    cmd
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let out: Output = guild(dir, args).output().expect("guild runs");
    assert!(
        out.status.success(),
        "guild {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A team folder: guild.toml with an empty plugins folder, the probe's files in `src/` and a
/// trusted lead key.
fn team() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path();
    std::fs::write(
        path.join("guild.toml"),
        "[host]\nplugins_dir = \"plugins\"\ndata_dir = \"data\"\n\n[trust]\nthreshold = 1\n",
    )
    .expect("guild.toml");
    std::fs::create_dir_all(path.join("plugins")).expect("mkdir");
    std::fs::create_dir_all(path.join("src")).expect("mkdir");
    for f in ["plugin.toml", "probe.wasm"] {
        std::fs::copy(probe_dir().join(f), path.join("src").join(f)).expect("copy");
    }
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "lead", "-f"])
        .arg(path.join("lead"))
        .output()
        .expect("ssh-keygen runs (./plugins/build.sh installs it: tests/setup.sh)");
    assert!(out.status.success());
    ok(path, &["keys", "add", "lead@team", "lead.pub"]);
    dir
}

/// Packs and signs `src/` at `version` into `NAME.guild`.
fn bundle(dir: &Path, version: &str) -> String {
    let manifest = std::fs::read_to_string(probe_dir().join("plugin.toml")).expect("read");
    let manifest = manifest.replacen(
        "version = \"0.1.0\"",
        &format!("version = \"{version}\""),
        1,
    );
    std::fs::write(dir.join("src/plugin.toml"), manifest).expect("write");
    let file = format!("probe-{version}.guild");
    ok(dir, &["bundle", "pack", "src", "-o", &file]);
    ok(dir, &["bundle", "sign", &file, "--key", "lead"]);
    file
}

/// `guild serve --http` on loopback, stopped when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start(dir: &Path) -> Server {
        let mut child = guild(
            dir,
            &[
                "serve",
                "--http",
                "127.0.0.1:0",
                "--watch-ms",
                "100",
                "--no-token",
            ],
        )
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("guild serve starts");
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let url = common::serve_url(&mut stderr);
        // Keep draining stderr so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in stderr.lines() {});
        Server { child, url }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A minimal MCP client over streamable HTTP: JSON-RPC posts, answers read from JSON or SSE.
struct Client {
    http: reqwest::Client,
    url: String,
    session: Option<String>,
    next_id: u64,
}

impl Client {
    async fn connect(url: &str) -> Client {
        let mut client = Client {
            http: reqwest::Client::new(),
            url: url.to_owned(),
            session: None,
            next_id: 1,
        };
        client
            .call(
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "bundle-test", "version": "1"}}),
            )
            .await;
        client
            .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        client
    }

    async fn post(&mut self, body: Value) -> String {
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string());
        if let Some(s) = &self.session {
            request = request.header("mcp-session-id", s);
        }
        let response = request.send().await.expect("request is answered");
        assert!(response.status().is_success(), "{}", response.status());
        if let Some(s) = response.headers().get("mcp-session-id") {
            self.session = Some(s.to_str().expect("session id").to_owned());
        }
        response.text().await.expect("body")
    }

    /// The result of one JSON-RPC request.
    async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let body = self
            .post(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let answer = body
            .lines()
            .map(|l| l.strip_prefix("data:").unwrap_or(l).trim())
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v["id"] == id)
            .unwrap_or_else(|| panic!("no answer to {method} in {body}"));
        assert!(answer["error"].is_null(), "{method}: {answer}");
        answer["result"].clone()
    }

    /// The `task` tool's description (it lists the roster with versions).
    async fn roster(&mut self) -> String {
        let tools = self.call("tools/list", json!({})).await;
        tools["tools"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["name"] == "task"))
            .and_then(|t| t["description"].as_str())
            .unwrap_or_default()
            .to_owned()
    }

    /// Waits until the roster lists `entry` (the watcher reloads after a short debounce); gives
    /// up after a generous bound.
    async fn wait_for(&mut self, entry: &str) {
        for _ in 0..600 {
            if self.roster().await.contains(entry) {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        panic!("the server never listed {entry}: {}", self.roster().await);
    }

    async fn task(&mut self, specialist: &str) -> Value {
        self.call(
            "tools/call",
            json!({"name": "task", "arguments": {"subagent_type": specialist,
                                                 "description": "{\"op\":\"brief\"}"}}),
        )
        .await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bundle_installed_into_a_running_server_serves_a_task() {
    let dir = team();
    let v1 = bundle(dir.path(), "0.1.0");
    let v2 = bundle(dir.path(), "0.2.0");
    let server = Server::start(dir.path());
    let mut client = Client::connect(&server.url).await;
    assert!(
        client.roster().await.contains("(none loaded)"),
        "the plugins folder starts empty"
    );
    let before = client.task("probe").await;
    assert_eq!(before["isError"], true, "no probe yet: {before}");

    let installed = ok(dir.path(), &["bundle", "install", &v1]);
    assert!(installed.contains("installed probe@0.1.0"), "{installed}");
    client.wait_for("probe@0.1.0").await;
    let served = client.task("probe").await;
    assert_ne!(served["isError"], true, "{served}");

    ok(dir.path(), &["bundle", "install", &v2]);
    client.wait_for("probe@0.2.0").await;
    let served = client.task("probe").await;
    assert_ne!(served["isError"], true, "{served}");
    drop(server);
}

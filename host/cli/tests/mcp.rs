//! `guild serve` driven by a real MCP client: the official Python SDK (`mcp`, installed in
//! `.venv/` by tests/setup.sh, which plugins/build.sh runs) runs `mcp_client.py` against the
//! built binary over stdio and over streamable HTTP, with the real probe, echo and kb
//! components and a supervisor skill folder. The HTTP side's access rules (Origin, bearer
//! token, one server per data dir, SIGTERM) are checked here with plain requests.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod common;

use common::http_server::HttpServer;
use common::mcp_setup::{setup, setup_with};
use common::stdio_peer::StdioPeer;

/// The Python of the checkout's test environment (`.venv/`), where tests/setup.sh (run by
/// plugins/build.sh) installed the pinned `mcp`; never the system's, whose packages vary.
fn venv_python() -> PathBuf {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("host/cli is two folders below the repository root");
    let venv = repo.join(".venv");
    let python = if cfg!(windows) {
        venv.join("Scripts").join("python.exe")
    } else {
        venv.join("bin").join("python")
    };
    assert!(
        python.is_file(),
        "{} is missing: the MCP client runs in the test environment that ./plugins/build.sh \
         installs (it runs tests/setup.sh)",
        python.display()
    );
    python
}

fn python_client(args: &[&str]) {
    python_client_with(args, None);
}

/// The client, sending `token` as its bearer token over HTTP.
fn python_client_with(args: &[&str], token: Option<&str>) {
    python_script("mcp_client.py", args, token);
}

/// Runs `host/cli/tests/SCRIPT` with the test environment's Python; it must print
/// "all checks passed".
fn python_script(script: &str, args: &[&str], token: Option<&str>) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(script);
    let python = venv_python();
    let mut command = Command::new(&python);
    if let Some(token) = token {
        command.env("MCP_BEARER_TOKEN", token);
    }
    let out = command
        .arg(&script)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{} could not run: {e}", python.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("all checks passed"),
        "the MCP client failed:\n{stdout}\n{stderr}"
    );
}

fn guild(dir: &Path) -> Command {
    common::guild(dir, &[])
}

#[test]
fn a_python_mcp_client_drives_guild_serve_over_stdio() {
    let dir = setup();
    let config = dir.path().join("guild.toml").display().to_string();
    let reloaded = dir.path().join("reloaded.toml").display().to_string();
    python_client(&["stdio", env!("CARGO_BIN_EXE_guild"), &config, &reloaded]);
    // The MCP memory tools wrote through the same store as `guild memory`.
    let out = guild(dir.path())
        .args(["memory", "history", "--team", "--json"])
        .output()
        .expect("guild memory history runs");
    let history: serde_json::Value = serde_json::from_slice(&out.stdout).expect("history is JSON");
    let actors: Vec<&str> = history
        .as_array()
        .expect("a list of versions")
        .iter()
        .filter_map(|v| v["actor"].as_str())
        .collect();
    assert_eq!(actors, ["supervisor", "supervisor"], "{history}");
}

#[test]
fn wakeup_delivery_sends_background_reports_as_log_notifications() {
    let dir = setup_with("\n[dispatch]\ndelivery = \"wakeup\"\n");
    let config = dir.path().join("guild.toml").display().to_string();
    python_client(&["wakeup", env!("CARGO_BIN_EXE_guild"), &config]);
}

#[test]
fn quiet_delivery_sends_no_log_notifications() {
    let dir = setup_with("");
    let config = dir.path().join("guild.toml").display().to_string();
    python_client(&["quiet", env!("CARGO_BIN_EXE_guild"), &config]);
}

#[test]
fn a_python_mcp_client_drives_guild_serve_over_streamable_http() {
    let dir = setup();
    let server = HttpServer::start(dir.path(), &[]);
    let config = dir.path().join("guild.toml").display().to_string();
    let reloaded = dir.path().join("reloaded.toml").display().to_string();
    // The default: a bearer token, read from the data dir as an operator hands it out.
    let token = std::fs::read_to_string(dir.path().join("data/serve.token")).expect("token");
    python_client_with(
        &["http", &server.url, &config, &reloaded],
        Some(token.trim()),
    );
    let (status, stderr) = server.stop();
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("guild serve: stopped"), "{stderr}");
}

fn initialize_body() -> String {
    serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "curl", "version": "1"}}
    })
    .to_string()
}

async fn post(url: &str, headers: &[(&str, &str)]) -> reqwest::StatusCode {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(initialize_body());
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    request.send().await.expect("request is answered").status()
}

#[tokio::test]
async fn http_refuses_foreign_origins_and_a_second_server_on_the_data_dir() {
    let dir = setup();
    let server = HttpServer::start(dir.path(), &["--no-token"]);
    assert!(post(&server.url, &[]).await.is_success());
    let own = server.url.trim_end_matches("/mcp").to_owned();
    assert!(
        post(&server.url, &[("origin", own.as_str())])
            .await
            .is_success()
    );
    // A page elsewhere (DNS rebinding) is refused.
    assert_eq!(
        post(&server.url, &[("origin", "http://evil.example")]).await,
        reqwest::StatusCode::FORBIDDEN
    );

    let second = guild(dir.path())
        .args(["serve", "--http", "127.0.0.1:0"])
        .output()
        .expect("second guild serve runs");
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("another guild serve already runs")
            && stderr.contains(&format!("pid {}", server.child.id())),
        "{stderr}"
    );
    // A stdio `guild serve` is not refused: it is a proxy to this host.
    let (proxy, _) = StdioPeer::start(dir.path(), serde_json::json!({}));
    proxy.stop();
    let log = dir.path().join("data/serve.log");
    assert!(!log.exists(), "the proxy started a host of its own");
    let (status, _) = server.stop();
    assert!(status.success());
}

#[tokio::test]
async fn with_token_only_the_bearer_token_gets_in() {
    let dir = setup();
    let server = HttpServer::start(dir.path(), &["--token"]);
    let token_file: PathBuf = dir.path().join("data/serve.token");
    let token = std::fs::read_to_string(&token_file).expect("token written");
    let bearer = format!("Bearer {}", token.trim());
    assert_eq!(
        post(&server.url, &[]).await,
        reqwest::StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        post(&server.url, &[("authorization", "Bearer wrong")]).await,
        reqwest::StatusCode::UNAUTHORIZED
    );
    // The refusal is one an MCP SDK can show: a JSON-RPC error and an RFC 6750 challenge.
    let refused = reqwest::Client::new()
        .post(&server.url)
        .header("content-type", "application/json")
        .header("authorization", "Bearer wrong")
        .body(initialize_body())
        .send()
        .await
        .expect("answered");
    let challenge = refused.headers()["www-authenticate"]
        .to_str()
        .expect("ascii")
        .to_owned();
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    let body = refused.bytes().await.expect("a body");
    let body: serde_json::Value = serde_json::from_slice(&body).expect("a JSON body");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("serve.token")),
        "{body}"
    );
    assert!(
        post(&server.url, &[("authorization", bearer.as_str())])
            .await
            .is_success()
    );
    let (status, _) = server.stop();
    assert!(status.success());
}

#[test]
fn tasks_extension_runs_a_task_call_as_a_background_task() {
    let dir = setup();
    let tasks = serde_json::json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let (mut peer, init) = StdioPeer::start(dir.path(), tasks);
    assert!(
        init["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"].is_object(),
        "{init}"
    );
    let call = |op: serde_json::Value| serde_json::json!({"name": "task", "arguments": {"subagent_type": "probe", "description": op.to_string()}});
    let created = peer.request(
        "tools/call",
        call(serde_json::json!({"op": "reports", "texts": ["first"]})),
    );
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task_id = created["result"]["taskId"]
        .as_str()
        .expect("taskId")
        .to_owned();
    let done = peer.wait(&task_id);
    assert_eq!(done["result"]["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["result"]["structuredContent"]["status"], "succeeded",
        "{done}"
    );
    // The same background task the task tools see.
    let checked = peer.request(
        "tools/call",
        serde_json::json!({"name": "check_task", "arguments": {"task_id": task_id}}),
    );
    assert_eq!(
        checked["result"]["structuredContent"]["task"]["status"], "succeeded",
        "{checked}"
    );

    let created = peer.request(
        "tools/call",
        call(serde_json::json!({"op": "sleep", "ms": 20000})),
    );
    let task_id = created["result"]["taskId"]
        .as_str()
        .expect("taskId")
        .to_owned();
    let cancelled = peer.request("tasks/cancel", serde_json::json!({"taskId": task_id}));
    assert!(cancelled.get("error").is_none(), "{cancelled}");
    let done = peer.wait(&task_id);
    assert_eq!(done["result"]["status"], "cancelled", "{done}");
    let unknown = peer.request("tasks/get", serde_json::json!({"taskId": "nope"}));
    assert!(
        unknown["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("nope")),
        "{unknown}"
    );
    peer.stop();

    // A client that did not declare the extension gets the result itself, and no tasks/get.
    let (mut peer, _) = StdioPeer::start(dir.path(), serde_json::json!({}));
    let result = peer.request("tools/call", call(serde_json::json!({"op": "brief"})));
    assert_eq!(
        result["result"]["structuredContent"]["status"], "succeeded",
        "{result}"
    );
    let refused = peer.request("tasks/get", serde_json::json!({"taskId": task_id}));
    assert!(refused["error"]["code"].is_i64(), "{refused}");
    peer.stop();
}

/// Starts a probe task as a task-augmented `task` call; returns its id.
fn start_probe_task(peer: &mut StdioPeer, op: serde_json::Value) -> String {
    let created = peer.request(
        "tools/call",
        serde_json::json!({"name": "task", "arguments": {"subagent_type": "probe", "description": op.to_string()}}),
    );
    created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task handle: {created}"))
        .to_owned()
}

/// One `tasks/list` page: the task ids and the next cursor.
fn list_page(peer: &mut StdioPeer, cursor: Option<&str>) -> (Vec<String>, Option<String>) {
    let params = match cursor {
        Some(c) => serde_json::json!({"cursor": c}),
        None => serde_json::json!({}),
    };
    let page = peer.request("tasks/list", params);
    let tasks = page["result"]["tasks"]
        .as_array()
        .unwrap_or_else(|| panic!("no tasks in {page}"));
    // Newest first, each described as tasks/get describes it.
    let created: Vec<&str> = tasks
        .iter()
        .filter_map(|t| t["createdAt"].as_str())
        .collect();
    assert!(created.windows(2).all(|w| w[0] >= w[1]), "{page}");
    for task in tasks {
        assert!(
            task["status"].is_string() && task["ttl"].is_null(),
            "{task}"
        );
    }
    let ids = tasks
        .iter()
        .map(|t| t["taskId"].as_str().expect("taskId").to_owned())
        .collect();
    let next = page["result"]["nextCursor"].as_str().map(str::to_owned);
    (ids, next)
}

#[test]
fn tasks_list_pages_newest_first_and_tasks_result_waits_for_the_end() {
    let dir = setup();
    let tasks = serde_json::json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let (mut peer, _) = StdioPeer::start(dir.path(), tasks);

    // More tasks than one page (20).
    let mut started: Vec<String> = (0..23)
        .map(|i| start_probe_task(&mut peer, serde_json::json!({"op": "brief", "n": i})))
        .collect();
    let (first, cursor) = list_page(&mut peer, None);
    assert_eq!(first.len(), 20);
    let cursor = cursor.expect("a second page");
    // A task started between two pages goes to the top; the next page neither repeats nor
    // skips one.
    started.push(start_probe_task(
        &mut peer,
        serde_json::json!({"op": "brief"}),
    ));
    let (second, last) = list_page(&mut peer, Some(&cursor));
    assert_eq!(second.len(), 3, "{second:?}");
    assert_eq!(last, None);
    let mut listed: Vec<String> = first.iter().chain(&second).cloned().collect();
    listed.push(started[23].clone());
    listed.sort();
    let mut expected = started.clone();
    expected.sort();
    assert_eq!(listed, expected);
    let (top, _) = list_page(&mut peer, None);
    assert_eq!(top[0], started[23], "the newest task comes first");
    let bad = peer.request("tasks/list", serde_json::json!({"cursor": "not-a-cursor"}));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    assert!(
        bad["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("not-a-cursor")),
        "{bad}"
    );

    // A finished task: the tool result tasks/get embeds, naming its task.
    let done = started[0].clone();
    let result = peer.request("tasks/result", serde_json::json!({"taskId": done}));
    assert_eq!(
        result["result"]["structuredContent"]["status"], "succeeded",
        "{result}"
    );
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], done,
        "{result}"
    );
    let got = peer.request("tasks/get", serde_json::json!({"taskId": done}));
    assert_eq!(
        got["result"]["result"]["structuredContent"], result["result"]["structuredContent"],
        "{got}"
    );
    assert_eq!(
        got["result"]["result"]["content"],
        result["result"]["content"]
    );

    // A failed task: its tool result, marked as an error.
    let failed = start_probe_task(&mut peer, serde_json::json!({"op": "trap"}));
    let result = peer.request("tasks/result", serde_json::json!({"taskId": failed}));
    assert_eq!(result["result"]["isError"], true, "{result}");
    assert_eq!(
        result["result"]["structuredContent"]["status"], "failed",
        "{result}"
    );

    // tasks/result waits while the task runs: it answers once the task is cancelled, with
    // the error naming the task.
    let sleeper = start_probe_task(&mut peer, serde_json::json!({"op": "sleep", "ms": 60000}));
    let waiting = peer.send_request("tasks/result", serde_json::json!({"taskId": sleeper}));
    let cancelled = peer.request("tasks/cancel", serde_json::json!({"taskId": sleeper}));
    assert!(cancelled.get("error").is_none(), "{cancelled}");
    let result = peer.response(waiting);
    assert_eq!(result["error"]["code"], -32600, "{result}");
    assert!(
        result["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains(&sleeper) && m.contains("cancelled")),
        "{result}"
    );

    // The client gives up waiting: its request ends unanswered (as MCP asks of a cancelled
    // request), the task goes on.
    let sleeper = start_probe_task(&mut peer, serde_json::json!({"op": "sleep", "ms": 60000}));
    let waiting = peer.send_request("tasks/result", serde_json::json!({"taskId": sleeper}));
    peer.send(
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                 "params": {"requestId": waiting, "reason": "user gave up"}}),
    );
    let still = peer.request("tasks/get", serde_json::json!({"taskId": sleeper}));
    assert_eq!(still["result"]["status"], "working", "{still}");
    peer.request("tasks/cancel", serde_json::json!({"taskId": sleeper}));

    let unknown = peer.request(
        "tasks/result",
        serde_json::json!({"taskId": "no-such-task"}),
    );
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert!(
        unknown["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("no-such-task")),
        "{unknown}"
    );
    peer.stop();

    // A client that did not declare the extension: method not found, as for any unknown method.
    let (mut peer, _) = StdioPeer::start(dir.path(), serde_json::json!({}));
    for method in ["tasks/list", "tasks/result"] {
        let refused = peer.request(method, serde_json::json!({"taskId": done}));
        assert_eq!(refused["error"]["code"], -32601, "{refused}");
        assert_eq!(refused["error"]["message"], method, "{refused}");
    }
    peer.stop();
}

#[test]
fn stdio_bounds_message_size_and_argument_depth() {
    use serde_json::json;
    let dir = setup_with("\n[serve]\nmax_body_kb = 64\nmax_json_depth = 16\n");
    let (mut peer, _) = StdioPeer::start(dir.path(), json!({}));
    // Denied: a line over 64 KiB is dropped unread; the session goes on.
    peer.send(json!({"jsonrpc": "2.0", "id": 999, "method": "ping",
                     "params": {"pad": "x".repeat(70_000)}}));
    // Allowed: an ordinary request is answered.
    let tools = peer.request("tools/list", json!({}));
    assert!(tools["result"]["tools"].is_array(), "{tools}");
    let nested = |n: usize| -> serde_json::Value {
        serde_json::from_str(&format!("{}{}", "[".repeat(n), "]".repeat(n))).expect("json")
    };
    let call = |peer: &mut StdioPeer, depth: usize| {
        peer.request(
            "tools/call",
            json!({"name": "check_task", "arguments": {"task_id": "none", "deep": nested(depth)}}),
        )
    };
    // Allowed: arguments 1 + 5 levels deep reach the tool (which does not know the task).
    let shallow = call(&mut peer, 5).to_string();
    assert!(!shallow.contains("max_json_depth"), "{shallow}");
    // Denied: 1 + 20 levels.
    let deep = call(&mut peer, 20);
    assert_eq!(deep["result"]["isError"], json!(true), "{deep}");
    assert!(
        deep.to_string().contains("[serve] max_json_depth"),
        "{deep}"
    );
    peer.stop();
}

/// Every specialist is a prompt taking a `brief`; a missing brief or an unknown prompt is
/// invalid params (-32602), never method-not-found.
#[test]
fn each_specialist_is_a_prompt_and_bad_prompt_requests_are_invalid_params() {
    let dir = setup();
    let (mut peer, init) = StdioPeer::start(dir.path(), serde_json::json!({}));
    assert!(
        init["result"]["capabilities"]["prompts"]["listChanged"] == true,
        "{init}"
    );
    let listed = peer.request("prompts/list", serde_json::json!({}));
    let names: Vec<&str> = listed["result"]["prompts"]
        .as_array()
        .expect("prompts")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(names, ["probe"], "{listed}");
    let got = peer.request(
        "prompts/get",
        serde_json::json!({"name": "probe", "arguments": {"brief": "count the open issues"}}),
    );
    let text = got["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains("count the open issues") && text.contains("`task` tool"),
        "{got}"
    );
    for params in [
        serde_json::json!({"name": "probe"}),
        serde_json::json!({"name": "nobody", "arguments": {"brief": "x"}}),
    ] {
        let refused = peer.request("prompts/get", params);
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
    }
    peer.stop();
}

/// A standard method with params of the wrong shape is invalid params (-32602) naming the
/// method; a method the server does not have is method-not-found (-32601).
#[test]
fn malformed_params_are_invalid_params_and_unknown_methods_not_found() {
    let dir = setup();
    let (mut peer, _) = StdioPeer::start(dir.path(), serde_json::json!({}));
    for (method, params) in [
        (
            "tools/call",
            serde_json::json!({"name": "task", "arguments": "not an object"}),
        ),
        ("tools/call", serde_json::json!({"arguments": {}})),
        ("prompts/get", serde_json::json!({"name": 7})),
        ("resources/read", serde_json::json!({"uri": ["skill://x"]})),
    ] {
        let refused = peer.request(method, params.clone());
        assert_eq!(
            refused["error"]["code"], -32602,
            "{method} {params}: {refused}"
        );
        let message = refused["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(method), "{method}: {refused}");
    }
    let unknown = peer.request("no/such/method", serde_json::json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    peer.stop();
}

/// A line that is not JSON-RPC gets JSON-RPC's answer on stdio (-32700 for text that is not
/// JSON, -32600 for JSON that is not a message) and the session goes on.
#[test]
fn a_malformed_line_on_stdio_is_answered_and_the_session_goes_on() {
    use std::io::{BufRead as _, Write as _};
    let dir = setup();
    let (mut peer, _) = StdioPeer::start(dir.path(), serde_json::json!({}));
    for (line, code) in [
        ("{not json", -32700),
        ("{\"id\": 9, \"method\": \"ping\"}", -32600),
    ] {
        writeln!(peer.stdin, "{line}").expect("write");
        peer.stdin.flush().expect("flush");
        let mut answer = String::new();
        peer.stdout.read_line(&mut answer).expect("an answer");
        let answer: serde_json::Value = serde_json::from_str(&answer).expect("JSON");
        assert_eq!(answer["error"]["code"], code, "{line}: {answer}");
    }
    let pong = peer.request("ping", serde_json::json!({}));
    assert!(pong["result"].is_object(), "{pong}");
    peer.stop();
}

/// The SDK's 2026-07-28 client, probing with `server/discover` (its default) and with the
/// version pinned: tools, prompts, a task, and list changes on `subscriptions/listen`.
#[test]
fn a_2026_07_28_client_discovers_and_listens() {
    for mode in ["auto", "2026-07-28"] {
        let dir = setup();
        let config = dir.path().join("guild.toml").display().to_string();
        let reloaded = dir.path().join("reloaded.toml").display().to_string();
        python_script(
            "mcp_modern.py",
            &[mode, env!("CARGO_BIN_EXE_guild"), &config, &reloaded],
            None,
        );
    }
}

/// Tool annotations: the host's read-only tools say so, approving says it is destructive, and
/// the delegation tools follow what the roster's specialists are granted (a mutating tool makes
/// `task` destructive; with only a read-only tool granted, `task` is read-only).
#[test]
fn tool_annotations_follow_the_specialists_grants() {
    let hints = |dir: &Path| {
        let (mut peer, _) = StdioPeer::start(dir, serde_json::json!({}));
        let listed = peer.request("tools/list", serde_json::json!({}));
        peer.stop();
        let tools = listed["result"]["tools"].as_array().expect("tools").clone();
        move |name: &str| {
            tools
                .iter()
                .find(|t| t["name"] == name)
                .map(|t| t["annotations"].clone())
                .unwrap_or_default()
        }
    };
    // probe may call echo.guarded, a mutating tool.
    let dir = setup();
    let of = hints(dir.path());
    assert_eq!(of("read_memory")["readOnlyHint"], true);
    assert_eq!(of("check_task")["readOnlyHint"], true);
    assert_eq!(of("approve_task")["destructiveHint"], true);
    assert_eq!(of("task")["readOnlyHint"], false, "{}", of("task"));
    assert_eq!(of("task")["destructiveHint"], true, "{}", of("task"));
    assert_eq!(of("start_task"), of("task"));

    // Only echo.echo, which changes nothing: delegating is read-only and closed-world.
    let config = dir.path().join("guild.toml");
    let text = std::fs::read_to_string(&config).expect("config");
    std::fs::write(&config, text.replace("echo.guarded", "echo.echo")).expect("write");
    // The data dir's host outlives each session (and does not watch here): it reloads.
    let reloaded = guild(dir.path())
        .arg("reload")
        .output()
        .expect("guild reload");
    assert!(reloaded.status.success(), "{reloaded:?}");
    let of = hints(dir.path());
    assert_eq!(of("task")["readOnlyHint"], true, "{}", of("task"));
    assert_eq!(of("task")["openWorldHint"], false, "{}", of("task"));
    assert!(
        of("task").get("destructiveHint").is_none(),
        "{}",
        of("task")
    );
}

/// A task whose specialist calls a model carries the model's calls and tokens in its MCP result:
/// the Python SDK's `task` call (structuredContent, validated against the output schema, and the
/// text) and a background task's `check_task`. The stand-in got one request per task.
#[test]
fn a_task_that_calls_a_model_carries_its_usage_in_the_mcp_result() {
    use common::prompt_agent::{Model, answer, setup};
    let model = Model::start(vec![answer("Said it.")]);
    let dir = tempfile::tempdir().expect("tempdir");
    setup(
        dir.path(),
        &model.base_url(),
        "# Writer\n\nYou write one line.\n",
    );
    let config = dir.path().join("guild.toml").display().to_string();
    python_script(
        "mcp_models.py",
        &[env!("CARGO_BIN_EXE_guild"), &config],
        None,
    );
    let prompts = model.system_prompts();
    assert_eq!(prompts.len(), 2, "one completion per task");
    assert!(
        prompts.iter().all(|p| p.starts_with("# Writer")),
        "{prompts:?}"
    );
}

/// `task_tree` over MCP: the tree of a top task that handed one task to a child, as structured
/// content and as the text `guild tasks tree` prints, and the chain the child's receipt carries
/// (the Python SDK; see `mcp_task_tree.py`).
#[test]
fn the_task_tree_tool_and_a_childs_receipt_chain_over_mcp() {
    let dir = tempfile::tempdir().expect("tempdir");
    let delegator = common::plugin("testing/delegator");
    let mut folders = Vec::new();
    for (name, caps) in [
        ("boss", "delegate = [\"worker\"]"),
        ("worker", "tools = [\"echo.create\"]"),
    ] {
        let to = dir.path().join(name);
        std::fs::create_dir_all(&to).expect("mkdir");
        std::fs::copy(delegator.join("delegator.wasm"), to.join("delegator.wasm")).expect("copy");
        std::fs::write(
            to.join("plugin.toml"),
            format!(
                "[plugin]\nname = \"{name}\"\nversion = \"0.1.0\"\nkind = \"specialist\"\n\
                 component = \"delegator.wasm\"\ndescription = \"test delegator\"\n\n\
                 [capabilities]\n{caps}\n\n[limits]\nmemory_mb = 64\ntimeout_s = 60\n\
                 max_output_kb = 256\n"
            ),
        )
        .expect("manifest");
        folders.push(format!("{:?}", to.display().to_string()));
    }
    folders.push(format!("{:?}", common::plugin("testing/echo")));
    let config = dir.path().join("guild.toml");
    std::fs::write(
        &config,
        format!(
            "[host]\nplugins = [{}]\ndata_dir = \"data\"\n\n[grants.boss]\ndelegate = [\"worker\"]\n\
             [grants.worker]\ntools = [\"echo.create\"]\n",
            folders.join(", ")
        ),
    )
    .expect("config");
    python_script(
        "mcp_task_tree.py",
        &[env!("CARGO_BIN_EXE_guild"), &config.display().to_string()],
        None,
    );
}

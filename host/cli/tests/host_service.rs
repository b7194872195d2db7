//! One host per data dir that every stdio `guild serve` shares: stdio serves are proxies to the
//! data dir's host, which the first one starts in the background. Real binary, real probe and
//! echo components, the official Python MCP SDK and a bare JSON-RPC peer: clients at once and
//! per call, a background task that outlives the client that started it, the host killed
//! under a client, the idle policy (allowed and denied), a configuration the host does not
//! serve, and a host whose data dir is removed.

use std::io::{BufRead as _, BufReader, Read as _};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

mod common;
use common::host_proc::{
    alive, assert_passed, check, check_until, client_script, host_pid, stop_host, venv_python,
    wait_gone,
};
use common::stdio_peer::StdioPeer;
use common::{guild, output_text, plugin};

/// A folder with `guild.toml` (probe, which may call `echo.guarded`, which needs approval, and
/// echo; `extra` appended) and data under `data/`.
fn setup(extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = format!(
        "[host]\nplugins = [{:?}, {:?}]\ndata_dir = \"data\"\n\n[grants.probe]\ntools = [\"echo.guarded\"]\n{extra}",
        plugin("testing/probe").display().to_string(),
        plugin("testing/echo").display().to_string()
    );
    std::fs::write(dir.path().join("guild.toml"), text).expect("guild.toml");
    dir
}

fn run(dir: &Path, args: &[&str]) -> Output {
    guild(dir, args).output().expect("guild runs")
}

/// Starts, in an MCP session, a background task whose call waits for approval; the task id.
fn waiting_task(peer: &mut StdioPeer) -> String {
    let brief = json!({"op": "tool", "name": "echo.guarded", "input": {"to": "team"}});
    let started = peer.request(
        "tools/call",
        json!({"name": "start_task", "arguments":
            {"subagent_type": "probe", "description": brief.to_string()}}),
    );
    started["result"]["structuredContent"]["task_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no task id: {started}"))
        .to_owned()
}

/// Approves `id`'s pending call through the host (retried until the call waits).
fn approve(dir: &Path, id: &str) {
    for _ in 0..1200 {
        if run(dir, &["tasks", "approve", id]).status.success() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("task {id} never waited for approval: {}", check(dir, id));
}

/// One Python SDK session (initialize, tools/list, a task) through a new stdio `guild serve`.
fn python_session(dir: &Path) -> Output {
    client_script(&venv_python(".venv"), "mcp_shared_host.py", dir)
}

#[test]
fn four_stdio_serves_at_once_share_one_host() {
    let dir = setup("");
    // All four race to start the host: the lock keeps one, every client gets its session.
    let outputs: Vec<Output> = std::thread::scope(|scope| {
        let runs: Vec<_> = (0..4)
            .map(|_| scope.spawn(|| python_session(dir.path())))
            .collect();
        runs.into_iter()
            .map(|r| r.join().expect("thread"))
            .collect()
    });
    outputs.iter().for_each(assert_passed);
    let log = std::fs::read_to_string(dir.path().join("data/serve.log")).unwrap_or_default();
    assert_eq!(log.matches("guild serve: host for").count(), 1, "{log}");
    stop_host(dir.path());
}

#[test]
fn per_call_clients_in_parallel_all_succeed() {
    let dir = setup("");
    // Three clients at a time, each call a new `guild serve` (as LangGraph's adapter does).
    std::thread::scope(|scope| {
        let runs: Vec<_> = (0..3)
            .map(|_| {
                scope.spawn(|| {
                    for _ in 0..3 {
                        assert_passed(&python_session(dir.path()));
                    }
                })
            })
            .collect();
        runs.into_iter().for_each(|r| r.join().expect("thread"));
    });
    stop_host(dir.path());
}

#[test]
fn a_background_task_outlives_the_client_that_started_it() {
    let dir = setup("");
    let (mut first, _) = StdioPeer::start(dir.path(), json!({}));
    let id = waiting_task(&mut first);
    first.stop();
    // The first client is gone; another session sees the task, approves it, and it completes.
    let (mut second, _) = StdioPeer::start(dir.path(), json!({}));
    let checked = second.request(
        "tools/call",
        json!({"name": "check_task", "arguments": {"task_id": id}}),
    );
    let status = &checked["result"]["structuredContent"]["task"]["status"];
    assert_eq!(status, "running", "{checked}");
    approve(dir.path(), &id);
    let task = check_until(dir.path(), &id, |t| t["status"] != "running");
    assert_eq!(task["status"], "succeeded", "{task}");
    second.stop();
    stop_host(dir.path());
}

#[test]
fn a_killed_host_fails_its_proxy_clearly_and_the_next_serve_starts_another() {
    use std::io::Write as _;
    let dir = setup("");
    let mut proxy = guild(dir.path(), &["serve", "--watch-ms", "0"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("guild serve starts");
    let mut stdin = proxy.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(proxy.stdout.take().expect("stdout"));
    let mut send = |message: Value| writeln!(stdin, "{message}").expect("send");
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "0"}}}));
    let mut line = String::new();
    stdout.read_line(&mut line).expect("initialize answered");
    assert!(line.contains("\"result\""), "{line}");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    // A background task waiting for approval, and a foreground call waiting too (pending).
    let brief = json!({"op": "tool", "name": "echo.guarded", "input": {"to": "team"}}).to_string();
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params":
        {"name": "start_task", "arguments": {"subagent_type": "probe", "description": brief}}}),
    );
    // Notifications may come first (the tool list once the plugins are loaded).
    let started: Value = loop {
        line.clear();
        stdout.read_line(&mut line).expect("start_task answered");
        let message: Value = serde_json::from_str(&line).expect("JSON");
        if message["id"] == 2 {
            break message;
        }
    };
    let id = started["result"]["structuredContent"]["task_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{line}"))
        .to_owned();
    check_until(dir.path(), &id, |t| t["status"] == "running");
    send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params":
        {"name": "task", "arguments": {"subagent_type": "probe", "description": brief}}}),
    );
    // A ping answered after it: the call has reached the host (lines go in order).
    send(json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}));
    loop {
        line.clear();
        assert!(
            stdout.read_line(&mut line).expect("read") > 0,
            "the proxy ended early"
        );
        let message: Value = serde_json::from_str(&line).expect("JSON");
        if message["id"] == 4 {
            break;
        }
    }
    let host = host_pid(dir.path());
    let status = Command::new("kill")
        .args(["-KILL", &host.to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    // The pending request gets a JSON-RPC error; the proxy says why and exits non-zero.
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).expect("read the rest");
    let answers: Vec<Value> = rest
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let failed = answers
        .iter()
        .find(|a| a["id"] == 3)
        .unwrap_or_else(|| panic!("no answer to the pending call: {rest}"));
    assert_eq!(failed["error"]["code"], -32000, "{failed}");
    let mut err = String::new();
    proxy
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut err)
        .expect("stderr");
    let exit = proxy.wait().expect("wait");
    assert_eq!(exit.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("the guild host (pid {host})")) && err.contains("ended"),
        "{err}"
    );
    wait_gone(host, "after SIGKILL");
    // The next serve starts a new host; the task is interrupted and the receipts verify.
    let (mut next, _) = StdioPeer::start(dir.path(), json!({}));
    let listed = next.request("tools/list", json!({}));
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    assert_ne!(host_pid(dir.path()), host);
    assert_eq!(check(dir.path(), &id)["status"], "interrupted");
    next.stop();
    let verified = run(dir.path(), &["receipts", "verify"]);
    assert!(verified.status.success(), "{}", output_text(&verified));
    stop_host(dir.path());
}

#[test]
fn an_idle_host_exits_and_one_with_a_running_task_does_not() {
    let dir = setup("\n[serve]\nidle_exit_s = 2\n");
    // Denied: a background task still runs after its client left.
    let (mut peer, _) = StdioPeer::start(dir.path(), json!({}));
    let id = waiting_task(&mut peer);
    peer.stop();
    let host = host_pid(dir.path());
    std::thread::sleep(Duration::from_secs(5));
    assert!(alive(host), "the host exited with a task running");
    // Allowed: once the task ends and no client is attached, it exits by itself.
    approve(dir.path(), &id);
    check_until(dir.path(), &id, |t| t["status"] == "succeeded");
    wait_gone(host, "idle");
    let log = std::fs::read_to_string(dir.path().join("data/serve.log")).expect("serve.log");
    assert!(log.contains("[serve] idle_exit_s"), "{log}");
    assert!(!dir.path().join("data/serve.sock").exists());
}

#[test]
fn a_client_of_another_configuration_is_refused_naming_both() {
    let dir = setup("");
    let (peer, _) = StdioPeer::start(dir.path(), json!({}));
    // Same data dir, another guild.toml.
    let other = dir.path().join("other.toml");
    std::fs::copy(dir.path().join("guild.toml"), &other).expect("copy");
    let out = Command::new(env!("CARGO_BIN_EXE_guild"))
        .arg("--config")
        .arg(&other)
        .args(["serve", "--watch-ms", "0"])
        .env_remove("GUILD_CONFIG")
        .stdin(Stdio::null())
        .output()
        .expect("guild serve runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("other.toml") && err.contains("guild.toml"),
        "{err}"
    );
    peer.stop();
    stop_host(dir.path());
}

#[test]
fn a_host_whose_data_dir_is_removed_exits() {
    let dir = setup("");
    let (peer, _) = StdioPeer::start(dir.path(), json!({}));
    peer.stop();
    let host = host_pid(dir.path());
    // Moved away in one step, then removed: a host still writing into it (its log, its
    // compile cache) would make a plain recursive removal fail with "directory not empty".
    let gone = dir.path().join("data.removed");
    std::fs::rename(dir.path().join("data"), &gone).expect("move the data dir away");
    wait_gone(host, "data dir removed");
    std::fs::remove_dir_all(&gone).expect("remove the data dir");
}

#[test]
fn a_cold_start_serves_at_once_and_lists_the_plugins_when_they_are_loaded() {
    // recap-py is an 18 MB Python component; with the new data dir's compile cache empty, its
    // first compile takes seconds, while a session's first round trips take milliseconds (and
    // `load_wait_ms = 0` has tools/list answer without waiting for the load).
    let dir = tempfile::tempdir().expect("tempdir");
    let text = format!(
        "[host]\nplugins = [{:?}, {:?}, {:?}]\ndata_dir = \"data\"\n\n[serve]\nload_wait_ms = 0\n",
        plugin("testing/probe").display().to_string(),
        plugin("testing/echo").display().to_string(),
        plugin("recap-py").display().to_string()
    );
    std::fs::write(dir.path().join("guild.toml"), text).expect("guild.toml");
    let out = client_script(&venv_python(".venv"), "mcp_cold_start.py", dir.path());
    assert_passed(&out);
    // The host's progress, on its stderr (the data dir's log).
    let log = std::fs::read_to_string(dir.path().join("data/serve.log")).expect("serve.log");
    assert!(
        log.contains("loading the plugins (2 specialist(s): probe, recap-py)")
            && log.contains("plugins ready in")
            && log.contains("guild serve: recap-py done loading after")
            && log.contains("every plugin loaded in"),
        "{log}"
    );
    stop_host(dir.path());
}

#[test]
fn memory_update_is_the_running_hosts_write() {
    let dir = setup("\n[memory]\nworkspace = \"acme\"\n");
    let (mut peer, _) = StdioPeer::start(dir.path(), json!({}));
    let file = dir.path().join("team.md");
    std::fs::write(&file, "## Decisions\n- 2026-01-01: ship on Fridays\n").expect("team.md");
    let file = file.display().to_string();
    let update = ["memory", "update", "--team", "--file", &file, "--base", "0"];
    let out = run(dir.path(), &update);
    assert!(out.status.success(), "{}", output_text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("stored team:acme version 1"),
        "{}",
        output_text(&out)
    );
    // The host's own session reads what the command stored.
    let read = peer.request(
        "tools/call",
        json!({"name": "read_memory", "arguments": {"scope": "team"}}),
    );
    assert!(read.to_string().contains("ship on Fridays"), "{read}");
    // A stale base is refused by the host as a conflict (exit 4), nothing stored.
    std::fs::write(
        dir.path().join("team.md"),
        "## Decisions\n- 2026-01-02: ship on Mondays\n",
    )
    .expect("team.md");
    let out = run(dir.path(), &update);
    assert_eq!(out.status.code(), Some(4), "{}", output_text(&out));
    let history = run(dir.path(), &["memory", "history", "--team"]);
    let history = String::from_utf8_lossy(&history.stdout).into_owned();
    assert_eq!(history.lines().count(), 1, "{history}");
    peer.stop();
    stop_host(dir.path());
}

#[test]
fn memory_update_goes_to_the_hosts_socket_and_not_to_the_store() {
    use std::io::Write as _;
    let dir = setup("\n[memory]\nworkspace = \"acme\"\n");
    std::fs::create_dir_all(dir.path().join("data")).expect("data");
    // A stand-in for the host on the data dir's socket: it records the request and refuses.
    let listener =
        std::os::unix::net::UnixListener::bind(dir.path().join("data/serve.sock")).expect("bind");
    let file = dir.path().join("team.md");
    std::fs::write(&file, "## Decisions\n- 2026-01-01: ship on Fridays\n").expect("team.md");
    let file = file.display().to_string();
    let answers = [
        (
            json!({"ok": false, "error": "refused by the stand-in host"}),
            1,
        ),
        (
            json!({"ok": true, "result": {"conflict": true, "message": "changed since"}}),
            4,
        ),
    ];
    for (answer, code) in answers {
        let child = guild(dir.path(), &["memory", "update", "--team", "--file", &file])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("guild runs");
        let (stream, _) = listener.accept().expect("the command connects");
        let mut line = String::new();
        BufReader::new(&stream)
            .read_line(&mut line)
            .expect("a request");
        let request: Value = serde_json::from_str(&line).expect("JSON");
        assert_eq!(request["op"], "update_memory", "{request}");
        assert_eq!(request["scope"], "team", "{request}");
        assert_eq!(request["workspace"], "acme", "{request}");
        assert!(
            request["text"]
                .as_str()
                .is_some_and(|t| t.contains("Fridays")),
            "{request}"
        );
        writeln!(&stream, "{answer}").expect("answer");
        let out = child.wait_with_output().expect("guild ends");
        assert_eq!(out.status.code(), Some(code), "{}", output_text(&out));
        let said = match code {
            4 => "changed since",
            _ => "refused by the stand-in host",
        };
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(said), "{err}");
    }
    // Without a host the store is written directly; here nothing was.
    drop(listener);
    let history = run(dir.path(), &["memory", "history", "--team"]);
    assert!(
        String::from_utf8_lossy(&history.stdout).contains("no versions"),
        "{}",
        output_text(&history)
    );
}

#[test]
fn clients_arriving_as_an_idle_host_ends_all_get_a_session() {
    let dir = setup("\n[serve]\nidle_exit_s = 1\n");
    // Each session starts about when the previous one's host decides to end (the idle time,
    // checked every half second): some arrive just before, some just after, some while it
    // ends. None may meet "host ended"; each gets a host.
    for pause_ms in [900, 1000, 1100, 1200, 1300, 1400, 1500, 1600] {
        assert_passed(&python_session(dir.path()));
        std::thread::sleep(Duration::from_millis(pause_ms));
    }
    assert_passed(&python_session(dir.path()));
    if dir.path().join("data/serve.sock").exists() {
        stop_host(dir.path());
    }
}

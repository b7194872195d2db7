//! A running `guild serve` as the CLI and an operator meet it: the control socket (`guild
//! reload`, `guild tasks start|cancel|approve` going through the server that owns the data
//! dir), and hot reload when a plugin's files change (file system events and polling, a change
//! arriving in pieces reloaded once), and on SIGHUP; a server stopped (SIGSTOP) past the task
//! lease keeps its tasks, a killed one's are interrupted, a stdio serve (a proxy) told to stop exits
//! though its client holds stdin, and a control socket that never answers fails the command; an
//! edit of a prompt-defined specialist's `prompt.md` reaches the model on the next task.
//! Real binary, real probe, echo and agent-loop components, a scripted model on 127.0.0.1.

use std::io::{BufRead as _, BufReader, Read as _};
use std::path::Path;
use std::process::{Child, ChildStderr, Command, Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

mod common;
use common::{guild, plugin};

/// Writes a copy of the probe at `version` into `dir` (the component first, in two pieces
/// when `pieces`, then the manifest).
fn probe_copy(dir: &Path, version: &str, pieces: bool) {
    std::fs::create_dir_all(dir).expect("plugin dir");
    let bytes = std::fs::read(plugin("testing/probe").join("probe.wasm")).expect("probe.wasm");
    if pieces {
        use std::io::Write as _;
        let mut file = std::fs::File::create(dir.join("probe.wasm")).expect("create");
        let (first, second) = bytes.split_at(bytes.len() / 2);
        file.write_all(first).expect("first half");
        file.sync_all().expect("sync");
        std::thread::sleep(std::time::Duration::from_millis(150));
        file.write_all(second).expect("second half");
        file.sync_all().expect("sync");
        std::thread::sleep(std::time::Duration::from_millis(150));
    } else {
        std::fs::write(dir.join("probe.wasm"), &bytes).expect("component");
    }
    let manifest = format!(
        "[plugin]\nname = \"probe\"\nversion = \"{version}\"\nkind = \"specialist\"\n\
         component = \"probe.wasm\"\ndescription = \"Probe copy.\"\n\n[capabilities]\n\
         tools = [\"echo.guarded\"]\n"
    );
    std::fs::write(dir.join("plugin.toml"), manifest).expect("manifest");
}

/// A folder with `guild.toml` loading a copy of the probe (0.1.0) and the echo connector.
fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    probe_copy(&dir.path().join("probe"), "0.1.0", false);
    let text = format!(
        "[host]\nplugins = [\"probe\", {:?}]\ndata_dir = \"data\"\n\n[grants.probe]\ntools = [\"echo.guarded\"]\n",
        plugin("testing/echo").display().to_string()
    );
    std::fs::write(dir.path().join("guild.toml"), text).expect("guild.toml");
    dir
}

fn run(dir: &Path, args: &[&str]) -> Output {
    guild(dir, args).output().expect("guild runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A running `guild serve --http 127.0.0.1:0`.
struct Server {
    child: Child,
    stderr: BufReader<ChildStderr>,
    /// Stderr lines read so far.
    seen: Vec<String>,
}

impl Server {
    fn start(dir: &Path, extra: &[&str]) -> Self {
        let mut child = guild(dir, &["serve", "--http", "127.0.0.1:0"])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("guild serve starts");
        let stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let mut server = Self {
            child,
            stderr,
            seen: Vec::new(),
        };
        server.wait_for("guild serve: MCP on ");
        // The plugins load behind the server: the tests start from the loaded set (a change
        // made while the first load runs could be part of it rather than of a reload).
        if !server
            .seen
            .iter()
            .any(|l| l.contains("guild serve: plugins ready"))
        {
            server.wait_for("guild serve: plugins ready");
        }
        server
    }

    /// Reads stderr until a line containing `text`, and returns it.
    fn wait_for(&mut self, text: &str) -> String {
        loop {
            let mut line = String::new();
            let n = self.stderr.read_line(&mut line).expect("read stderr");
            assert!(
                n > 0,
                "guild serve ended before printing {text:?}:\n{}",
                self.seen.join("")
            );
            self.seen.push(line.clone());
            if line.contains(text) {
                return line;
            }
        }
    }

    fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
    }

    /// Kills the server if it is still running after `limit`, so that a line it never prints
    /// fails [`Server::wait_for`] instead of hanging the test; disarmed when dropped.
    fn watchdog(&self, limit: std::time::Duration) -> std::sync::mpsc::Sender<()> {
        let (disarm, disarmed) = std::sync::mpsc::channel::<()>();
        let pid = self.child.id().to_string();
        std::thread::spawn(move || {
            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = disarmed.recv_timeout(limit) {
                let _ = Command::new("kill").args(["-KILL", &pid]).status();
            }
        });
        disarm
    }

    /// SIGTERM; returns everything it printed on stderr.
    fn stop(mut self) -> String {
        self.signal("TERM");
        let mut rest = String::new();
        let _ = self.stderr.read_to_string(&mut rest);
        let status = self.child.wait().expect("wait");
        let all = self.seen.concat() + &rest;
        assert!(status.success(), "{all}");
        all
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `guild tasks check ID --json`.
fn check(dir: &Path, id: &str) -> Value {
    let out = run(dir, &["--json", "tasks", "check", id]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str::<Value>(&stdout(&out)).expect("check prints JSON")["task"].clone()
}

/// Checks the task until `done` holds (the server runs it), and returns the last record.
fn check_until(dir: &Path, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..600 {
        let task = check(dir, id);
        if done(&task) {
            return task;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("task {id} never got there: {}", check(dir, id));
}

/// `guild --json tasks start` of the probe through the server; returns the task id.
fn start_on_server(dir: &Path, brief: &Value) -> String {
    start_specialist_on_server(dir, "probe", &brief.to_string())
}

/// `guild --json tasks start SPECIALIST DESCRIPTION` through the server; returns the task id.
fn start_specialist_on_server(dir: &Path, specialist: &str, description: &str) -> String {
    let out = run(dir, &["--json", "tasks", "start", specialist, description]);
    assert!(out.status.success(), "{}", stderr(&out));
    let answer: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    answer["task_id"].as_str().expect("task id").to_owned()
}

#[test]
fn guild_reload_without_a_server_names_the_data_dir() {
    let dir = setup();
    let out = run(dir.path(), &["reload"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("no server running for") && err.contains("data"),
        "{err}"
    );
    let out = run(dir.path(), &["tasks", "approve", "some-task"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no server running for"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn task_commands_and_reload_go_through_the_running_server() {
    let dir = setup();
    let server = Server::start(dir.path(), &["--watch", "off"]);
    let socket = dir.path().join("data/serve.sock");
    assert!(socket.exists());

    let out = run(dir.path(), &["reload"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "no change\n");

    // A task waiting for approval runs on the server, which owns it: the starting command has
    // ended, yet the task is not interrupted.
    let guarded = json!({"op": "tool", "name": "echo.guarded", "input": {"to": "team"}});
    let id = start_on_server(dir.path(), &guarded);
    let task = check_until(dir.path(), &id, |t| t["status"] == "running");
    assert_eq!(task["specialist"], "probe");
    let out = run(dir.path(), &["tasks", "cancel", &id]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("task {id} cancelled\n"));
    check_until(dir.path(), &id, |t| t["status"] == "cancelled");

    // Approved through the server, the call goes ahead and the task succeeds.
    let id = start_on_server(dir.path(), &guarded);
    let mut approved = None;
    for _ in 0..600 {
        let out = run(dir.path(), &["tasks", "approve", &id]);
        if out.status.success() {
            approved = Some(stdout(&out));
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(
        approved.as_deref(),
        Some(format!("task {id}: call approved\n").as_str())
    );
    let task = check_until(dir.path(), &id, |t| t["status"] == "succeeded");
    assert_eq!(task["result"]["specialist"], "probe@0.1.0");

    // An unknown task is the server's error, shown as the CLI's.
    let out = run(dir.path(), &["tasks", "cancel", "no-such-task"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no-such-task"), "{}", stderr(&out));

    server.stop();
    assert!(
        !socket.exists(),
        "the control socket is removed on shutdown"
    );
}

/// Changes the probe's files in pieces while the server watches in `mode`; a task started
/// afterwards runs on the new version, and the change caused exactly one reload.
fn a_change_in_pieces_reloads_once(mode: &str) {
    let dir = setup();
    let mut server = Server::start(dir.path(), &["--watch", mode, "--watch-ms", "700"]);
    probe_copy(&dir.path().join("probe"), "0.2.0", true);
    let line = server.wait_for("guild serve: reloaded after a change");
    assert!(line.contains("loaded probe@0.2.0"), "{line}");
    assert!(!line.contains("error"), "{line}");

    let id = start_on_server(dir.path(), &json!({"op": "brief"}));
    let task = check_until(dir.path(), &id, |t| t["status"] == "succeeded");
    assert_eq!(task["result"]["specialist"], "probe@0.2.0");

    let log = server.stop();
    assert_eq!(
        log.matches("reloaded after a change").count(),
        1,
        "one debounced reload:\n{log}"
    );
}

#[test]
fn with_file_system_events_a_change_in_pieces_reloads_once() {
    a_change_in_pieces_reloads_once("events");
}

#[test]
fn with_polling_a_change_in_pieces_reloads_once() {
    a_change_in_pieces_reloads_once("poll");
}

#[test]
fn with_file_system_events_a_change_deep_in_a_plugin_folder_reloads() {
    let dir = setup();
    let deep = dir.path().join("probe").join("assets").join("deep");
    std::fs::create_dir_all(&deep).expect("deep folder");
    let mut server = Server::start(dir.path(), &["--watch", "events", "--watch-ms", "300"]);
    let watchdog = server.watchdog(std::time::Duration::from_secs(60));
    std::fs::write(deep.join("notes.txt"), "changed").expect("write deep");
    server.wait_for("guild serve: reloaded after a change");

    // A folder made while serving is watched too.
    let later = dir.path().join("probe").join("later").join("deeper");
    std::fs::create_dir_all(&later).expect("later folder");
    server.wait_for("guild serve: reloaded after a change");
    std::fs::write(later.join("notes.txt"), "changed").expect("write later");
    server.wait_for("guild serve: reloaded after a change");
    drop(watchdog);
    server.stop();
}

/// Editing a prompt-defined specialist's `prompt.md` while `guild serve` watches reloads it:
/// the next task sends the new prompt to the model (the stand-in's recorded system message).
/// `guild tasks show` prints the task's model usage, as text and as JSON.
#[test]
fn editing_prompt_md_reloads_the_specialist_and_the_next_task_sends_the_new_prompt() {
    use common::prompt_agent::{Model, SPECIALIST, answer, setup};
    let model = Model::start(vec![answer("Done.")]);
    let dir = tempfile::tempdir().expect("tempdir");
    setup(
        dir.path(),
        &model.base_url(),
        "# Writer v1\n\nYou write one line.\n",
    );
    let mut server = Server::start(dir.path(), &["--watch", "events", "--watch-ms", "300"]);
    let watchdog = server.watchdog(Duration::from_secs(120));
    let done = |t: &Value| t["status"] == "succeeded";

    let first = start_specialist_on_server(dir.path(), SPECIALIST, "Say hello.");
    check_until(dir.path(), &first, done);
    std::fs::write(
        dir.path().join(SPECIALIST).join("prompt.md"),
        "# Writer v2\n\nYou write two short lines, never more.\n",
    )
    .expect("edit prompt.md");
    let line = server.wait_for("guild serve: reloaded after a change");
    assert!(!line.contains("error"), "{line}");
    let second = start_specialist_on_server(dir.path(), SPECIALIST, "Say hello again.");
    check_until(dir.path(), &second, done);

    let prompts = model.system_prompts();
    assert_eq!(prompts.len(), 2, "one completion per task: {prompts:?}");
    assert!(prompts[0].starts_with("# Writer v1\n"), "{}", prompts[0]);
    assert!(
        prompts[1].starts_with("# Writer v2\n\nYou write two short lines"),
        "{}",
        prompts[1]
    );

    let shown = run(dir.path(), &["tasks", "show", &second]);
    assert!(shown.status.success(), "{}", stderr(&shown));
    assert!(
        stdout(&shown).contains("model fast: 1 call, 11 prompt + 7 completion tokens"),
        "{}",
        stdout(&shown)
    );
    let shown = run(dir.path(), &["--json", "tasks", "show", &second]);
    let shown: Value = serde_json::from_str(&stdout(&shown)).expect("show prints JSON");
    assert_eq!(
        shown["task"]["result"]["usage"]["models"]["fast"],
        json!({"calls": 1, "prompt_tokens": 11, "completion_tokens": 7}),
        "{shown}"
    );
    drop(watchdog);
    server.stop();
}

#[test]
fn events_mode_refuses_a_folder_it_cannot_watch_and_auto_falls_back_to_polling() {
    let dir = setup();
    let config = std::fs::read_to_string(dir.path().join("guild.toml")).expect("read");
    let config = config.replace(
        "data_dir",
        "plugins_dir = \"not-there-yet/plugins\"\ndata_dir",
    );
    std::fs::write(dir.path().join("guild.toml"), config).expect("write");
    let out = run(
        dir.path(),
        &["serve", "--http", "127.0.0.1:0", "--watch", "events"],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("failed to watch for changes") && err.contains("--watch poll"),
        "{err}"
    );

    let mut server = Server::start(dir.path(), &["--watch", "auto"]);
    let _ = &mut server;
    let log = server.stop();
    assert!(log.contains("polling every"), "{log}");
}

#[test]
fn sighup_reloads() {
    let dir = setup();
    let mut server = Server::start(dir.path(), &["--watch", "off"]);
    probe_copy(&dir.path().join("probe"), "0.3.0", false);
    server.signal("HUP");
    let line = server.wait_for("guild serve: reloaded on SIGHUP");
    assert!(line.contains("loaded probe@0.3.0"), "{line}");
    server.stop();
}

#[test]
fn the_control_socket_is_private_and_survives_garbage_and_over_long_lines() {
    use std::io::{BufRead as _, Write as _};
    use std::os::unix::fs::PermissionsExt as _;
    use std::os::unix::net::UnixStream;

    let dir = setup();
    // The data dir as its owner made it, group-readable: the server neither widens it nor
    // changes it otherwise.
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).expect("mkdir data");
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o750)).expect("chmod");
    let mut server = Server::start(dir.path(), &["--watch", "off"]);
    // A lazy start compiles the plugins in the background (the cache is new); once they are
    // in, a reload has nothing to change.
    server.wait_for("0 still loading");
    let socket = data.join("serve.sock");
    let mode = |path: &Path| std::fs::metadata(path).expect("stat").permissions().mode() & 0o777;
    assert_eq!(mode(&socket), 0o600, "only the owner may drive the server");
    assert_eq!(mode(&data), 0o750, "the data dir keeps its mode");

    let stream = UnixStream::connect(&socket).expect("connect to the control socket");
    let mut reader = std::io::BufReader::new(stream.try_clone().expect("clone"));
    let mut writer = stream;
    let mut answer = |writer: &mut UnixStream, line: &[u8]| -> Value {
        writer.write_all(line).expect("write");
        let mut back = String::new();
        reader.read_line(&mut back).expect("read the answer");
        serde_json::from_str(&back).unwrap_or_else(|e| panic!("{e}: {back:?}"))
    };
    // Garbage and an unknown op: a clear error, and the connection goes on.
    let garbage = answer(&mut writer, b"this is not json\n");
    assert_eq!(garbage["ok"], false);
    let error = garbage["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("not a control request") && error.contains("reload, start_task"),
        "{error}"
    );
    let unknown = answer(&mut writer, b"{\"op\": \"format_disk\"}\n");
    assert_eq!(unknown["ok"], false);
    assert!(
        unknown["error"]
            .as_str()
            .is_some_and(|e| e.contains("format_disk")),
        "{unknown}"
    );
    let reload = answer(&mut writer, b"{\"op\": \"reload\"}\n");
    assert_eq!(reload["ok"], true, "{reload}");
    // A line longer than the limit (256 KiB): refused by name, that connection ends.
    let mut long = vec![b'x'; 256 * 1024 + 1];
    long.push(b'\n');
    let too_long = answer(&mut writer, &long);
    assert_eq!(too_long["ok"], false);
    assert_eq!(too_long["error"], "request line too long");

    // The server keeps serving the next client.
    let out = run(dir.path(), &["reload"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "no change\n");
    server.stop();
}

/// Runs `cmd` to its end and returns what it printed; fails the test if it is still running
/// after `limit` (it is killed then), instead of hanging it.
fn output_within(mut cmd: Command, limit: Duration) -> Output {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("guild starts");
    let pid = child.id().to_string();
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    match finished.recv_timeout(limit) {
        Ok(out) => out.expect("wait"),
        Err(_) => {
            let _ = Command::new("kill").args(["-KILL", &pid]).status();
            panic!("guild was still running after {limit:?}");
        }
    }
}

/// Approves `id`'s pending call through the server (retried until the call is waiting).
fn approve_on_server(dir: &Path, id: &str) {
    for _ in 0..600 {
        let out = run(dir, &["tasks", "approve", id]);
        if out.status.success() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("task {id} never waited for approval: {}", check(dir, id));
}

/// A task waiting for approval on the server, running.
fn waiting_task(dir: &Path) -> String {
    let guarded = json!({"op": "tool", "name": "echo.guarded", "input": {"to": "team"}});
    let id = start_on_server(dir, &guarded);
    check_until(dir, &id, |t| t["status"] == "running");
    id
}

#[test]
fn a_server_stopped_past_the_lease_keeps_its_task_and_finishes_it() {
    let dir = setup();
    let server = Server::start(dir.path(), &["--watch", "off"]);
    let watchdog = server.watchdog(Duration::from_secs(180));
    let id = waiting_task(dir.path());
    // Stopped past the lease (10 s): it has not beaten its heartbeat since.
    server.signal("STOP");
    std::thread::sleep(Duration::from_secs(12));
    // Another process opens the task store for writing (a host marks the tasks of owners it
    // finds gone), and a reader checks: the stopped server's process is there, so its task is
    // still its own.
    let other = run(dir.path(), &["task", "probe", r#"{"op":"brief"}"#]);
    assert!(other.status.success(), "{}", stderr(&other));
    assert_eq!(check(dir.path(), &id)["status"], "running");
    // A command sent to the stopped server fails after the client's wait, naming the socket.
    let mut reload = guild(dir.path(), &["reload"]);
    reload.env("GUILD_CONTROL_TIMEOUT_S", "1");
    let out = output_within(reload, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("did not answer") && err.contains("serve.sock") && err.contains("within 1 s"),
        "{err}"
    );
    // Resumed, the server finishes its task.
    server.signal("CONT");
    approve_on_server(dir.path(), &id);
    let task = check_until(dir.path(), &id, |t| t["status"] == "succeeded");
    assert_eq!(task["result"]["specialist"], "probe@0.1.0");
    drop(watchdog);
    server.stop();
}

#[test]
fn a_killed_servers_tasks_are_interrupted() {
    let dir = setup();
    let mut server = Server::start(dir.path(), &["--watch", "off"]);
    let id = waiting_task(dir.path());
    server.signal("KILL");
    server.child.wait().expect("wait");
    // A reader sees it at once; the next host records it.
    assert_eq!(check(dir.path(), &id)["status"], "interrupted");
    let other = run(dir.path(), &["task", "probe", r#"{"op":"brief"}"#]);
    assert!(other.status.success(), "{}", stderr(&other));
    let out = run(dir.path(), &["--json", "tasks", "show", &id]);
    assert!(out.status.success(), "{}", stderr(&out));
    let shown: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(shown["task"]["status"], "interrupted");
}

/// Starts `guild serve` on stdio (a proxy to the data dir's host) whose client holds stdin
/// open (after the MCP handshake when `handshake`, else without ever writing), sends SIGTERM,
/// and checks that it exits while the host goes on; then stops the host with SIGTERM.
fn stdio_server_stops(dir: &Path, handshake: bool) {
    use std::io::Write as _;
    let mut child = guild(dir, &["serve", "--watch", "off"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("guild serve starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut err = BufReader::new(child.stderr.take().expect("stderr"));
    let mut seen = String::new();
    while !seen.contains("guild serve: MCP on stdio") {
        let n = err.read_line(&mut seen).expect("read stderr");
        assert!(n > 0, "guild serve ended before serving:\n{seen}");
    }
    if handshake {
        let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "test", "version": "0"}}});
        writeln!(stdin, "{initialize}").expect("send initialize");
        let mut answer = String::new();
        out.read_line(&mut answer).expect("read the answer");
        assert!(answer.contains("\"result\""), "{answer}");
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        writeln!(stdin, "{initialized}").expect("send initialized");
    }
    let pid = child.id().to_string();
    let status = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill runs");
    assert!(status.success());
    // No task runs, so the drain ends at once; 30 s is a bound for a loaded machine, not a
    // measure (before, it stayed until the client closed stdin).
    let (done, exited) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = err.read_to_string(&mut rest);
        let _ = done.send((child.wait(), rest));
    });
    let Ok((status, rest)) = exited.recv_timeout(Duration::from_secs(30)) else {
        let _ = Command::new("kill").args(["-KILL", &pid]).status();
        panic!(
            "guild serve was still running 30 s after SIGTERM (handshake: {handshake}):\n{seen}"
        );
    };
    waiter.join().expect("waiter");
    drop(stdin);
    let all = seen + &rest;
    assert!(status.expect("wait").success(), "{all}");
    assert!(all.contains("guild serve: stopped (the host on"), "{all}");
    // The host goes on until it is told to stop itself.
    assert!(dir.join("data/serve.sock").exists(), "{all}");
    let lock = std::fs::read_to_string(dir.join("data/serve.lock")).expect("serve.lock");
    let host = lock.split_whitespace().nth(1).expect("pid").to_owned();
    let status = Command::new("kill")
        .args(["-TERM", &host])
        .status()
        .expect("kill runs");
    assert!(status.success());
    for _ in 0..600 {
        if !dir.join("data/serve.sock").exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        !dir.join("data/serve.sock").exists(),
        "the host removes its control socket when it stops"
    );
    // Its lock goes with the process.
    for _ in 0..600 {
        let lock = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.join("data/serve.lock"))
            .expect("serve.lock");
        if lock.try_lock().is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the host {host} still holds its lock after SIGTERM");
}

#[test]
fn a_stdio_server_told_to_stop_exits_though_its_client_holds_stdin_open() {
    let dir = setup();
    stdio_server_stops(dir.path(), true);
    // Also before the client has said anything.
    stdio_server_stops(dir.path(), false);
    // The data dir is free for the next server.
    let next = Server::start(dir.path(), &["--watch", "off"]);
    next.stop();
}

#[test]
fn a_control_socket_that_never_answers_fails_the_command_naming_it() {
    let dir = setup();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).expect("mkdir data");
    // Accepts connections (the kernel queues them) and never answers, as a stopped server.
    let socket = data.join("serve.sock");
    let _silent = std::os::unix::net::UnixListener::bind(&socket).expect("bind");
    let commands: [&[&str]; 4] = [
        &["tasks", "start", "probe", r#"{"op":"brief"}"#],
        &["tasks", "cancel", "some-task"],
        &["tasks", "approve", "some-task"],
        &["reload"],
    ];
    for args in commands {
        let mut cmd = guild(dir.path(), args);
        cmd.env("GUILD_CONTROL_TIMEOUT_S", "1");
        let out = output_within(cmd, Duration::from_secs(30));
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = stderr(&out);
        assert!(
            err.contains("did not answer")
                && err.contains(&socket.display().to_string())
                && err.contains("within 1 s")
                && err.contains("kill -CONT"),
            "{args:?}: {err}"
        );
    }
}

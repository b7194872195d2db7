//! The data dir's background host as the client tests see it from outside: its pid from the
//! lock file, whether it still runs, ending it, and the Python clients (the official SDK in
//! `.venv`, LangChain's adapter in `.venv/langchain`) that reach it through a stdio `guild
//! serve` and must print "all checks passed", and a task's state as `guild tasks check` reads it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::{guild, output_text};

/// The repository's root (this crate is `host/cli`).
pub(crate) fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("repository root")
        .to_path_buf()
}

/// The pid of the host holding `dir`'s data dir `data/` (from its lock file).
pub(crate) fn host_pid(dir: &Path) -> u32 {
    let text = std::fs::read_to_string(dir.join("data/serve.lock")).expect("serve.lock");
    text.split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no pid in serve.lock: {text}"))
}

/// Whether process `pid` runs (a zombie does not).
pub(crate) fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
    })
}

/// Waits (bounded, for a loaded machine) until `pid` has exited.
pub(crate) fn wait_gone(pid: u32, what: &str) {
    for _ in 0..1200 {
        if !alive(pid) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{what}: host {pid} still runs after a minute");
}

/// Ends the host of `dir` (SIGTERM) and waits for it: no test leaves one behind.
pub(crate) fn stop_host(dir: &Path) {
    let pid = host_pid(dir);
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    wait_gone(pid, "after SIGTERM");
}

/// `guild --json tasks check ID`'s task, through `dir`'s configuration.
pub(crate) fn check(dir: &Path, id: &str) -> Value {
    let out = guild(dir, &["--json", "tasks", "check", id])
        .output()
        .expect("guild runs");
    assert!(out.status.success(), "{}", output_text(&out));
    serde_json::from_slice::<Value>(&out.stdout).expect("JSON")["task"].clone()
}

/// Checks task `id` until `done` holds; bounded only against hanging on a loaded machine.
pub(crate) fn check_until(dir: &Path, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..1200 {
        let task = check(dir, id);
        if done(&task) {
            return task;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("task {id} never got there: {}", check(dir, id));
}

/// The Python of the virtual environment `venv` (relative to the repository), which
/// tests/setup.sh installs.
pub(crate) fn venv_python(venv: &str) -> PathBuf {
    let python = repo().join(venv).join("bin/python");
    assert!(
        python.is_file(),
        "{} is missing: tests/setup.sh installs it (./plugins/build.sh runs it)",
        python.display()
    );
    python
}

/// Runs `host/cli/tests/SCRIPT GUILD DIR/guild.toml` with `python`, nothing inherited that
/// would change the host it reaches.
pub(crate) fn client_script(python: &Path, script: &str, dir: &Path) -> Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(script);
    Command::new(python)
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_guild"))
        .arg(dir.join("guild.toml"))
        .env_remove("GUILD_CONFIG")
        .env_remove("GUILD_LOG")
        .env_remove("GUILD_CONTROL_TIMEOUT_S")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{} could not run: {e}", python.display()))
}

/// The client ended well and said so.
pub(crate) fn assert_passed(out: &Output) {
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("all checks passed"),
        "{}",
        output_text(out)
    );
}

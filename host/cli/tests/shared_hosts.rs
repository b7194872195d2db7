//! Two `guild serve` host processes, each with a data dir of its own, on one PostgreSQL database
//! (`[store] url`, a real server from `guild_pg::testing`): one is SIGKILLed while its task runs.
//! The other host sees the task interrupted once the lease expires; what was acknowledged before
//! (a finished mutating task and its receipt) is all there, `guild receipts verify` passes, and
//! the interrupted task is never run again, not even by a host restarted on the dead one's dir.

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, ChildStderr, Output, Stdio};

use guild_pg::testing::{TestServer, TestServerError};
use serde_json::{Value, json};

mod common;
use common::host_proc::{check, check_until};
use common::{guild, output_text, plugin};

/// A started server, or `None` (with a loud message) when PostgreSQL is not installed here and
/// `GUILD_REQUIRE_PG` is not set.
fn server() -> Option<TestServer> {
    match TestServer::start() {
        Ok(server) => Some(server),
        Err(e @ TestServerError::NotInstalled)
            if std::env::var_os("GUILD_REQUIRE_PG").is_none() =>
        {
            eprintln!("\n*** SKIPPED: {e} (set GUILD_REQUIRE_PG=1 to fail instead) ***\n");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

/// A folder with a guild.toml on the database `url`, with a one-second task lease.
fn setup(url: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = format!(
        "[host]\nplugins = [{:?}, {:?}]\ndata_dir = \"data\"\n\n[grants.probe]\n\
         tools = [\"echo.create\"]\n\n[store]\nurl = {url:?}\nlease_seconds = 1\n",
        plugin("testing/probe").display().to_string(),
        plugin("testing/echo").display().to_string()
    );
    std::fs::write(dir.path().join("guild.toml"), text).expect("guild.toml");
    dir
}

fn run(dir: &Path, args: &[&str]) -> Output {
    guild(dir, args).output().expect("guild runs")
}

/// A running `guild serve --http 127.0.0.1:0`; killed when dropped.
struct Served {
    child: Child,
    _stderr: BufReader<ChildStderr>,
}

impl Served {
    fn start(dir: &Path) -> Served {
        let mut child = guild(dir, &["serve", "--http", "127.0.0.1:0"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("guild serve starts");
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let mut seen = String::new();
        loop {
            let mut line = String::new();
            let n = stderr.read_line(&mut line).expect("read stderr");
            assert!(n > 0, "guild serve ended early:\n{seen}");
            seen.push_str(&line);
            if line.contains("guild serve: plugins ready") {
                break;
            }
        }
        Served {
            child,
            _stderr: stderr,
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_task(dir: &Path, brief: &Value) -> String {
    let out = run(
        dir,
        &["--json", "tasks", "start", "probe", &brief.to_string()],
    );
    assert!(out.status.success(), "{}", output_text(&out));
    let answer: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    answer["task_id"].as_str().expect("task id").to_owned()
}

#[test]
fn a_host_killed_mid_task_leaves_it_interrupted_and_loses_nothing_acknowledged() {
    let Some(server) = server() else { return };
    server.create_database("killed").expect("database");
    let url = server.url("killed");
    let (a_dir, b_dir) = (setup(&url), setup(&url));
    let mut a = Served::start(a_dir.path());
    let _b = Served::start(b_dir.path());

    // Acknowledged before the kill: a mutating task on a, seen finished from b.
    let done = start_task(
        a_dir.path(),
        &json!({"op": "tool", "name": "echo.create", "input": {"title": "kept"}}),
    );
    let finished = check_until(b_dir.path(), &done, |t| {
        t["status"] != "queued" && t["status"] != "running"
    });
    assert_eq!(finished["status"], "succeeded", "{finished}");
    let receipt = finished["result"]["receipts"][0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no receipt: {finished}"))
        .to_owned();

    // A task running on a when it dies.
    let running = start_task(a_dir.path(), &json!({"op": "loop"}));
    check_until(b_dir.path(), &running, |t| t["status"] == "running");
    a.child.kill().expect("SIGKILL host a");
    a.child.wait().expect("reap host a");

    let interrupted = check_until(b_dir.path(), &running, |t| t["status"] != "running");
    assert_eq!(interrupted["status"], "interrupted", "{interrupted}");
    assert_eq!(interrupted["attempt"], 1);
    let shown = run(b_dir.path(), &["tasks", "show", &running]);
    let text = output_text(&shown);
    assert!(text.contains("interrupted"), "{text}");

    // A host restarted on a's data dir does not take the task up again.
    drop(a);
    let _a_again = Served::start(a_dir.path());
    let after = check(a_dir.path(), &running);
    assert_eq!(
        (after["status"].clone(), after["attempt"].clone()),
        (json!("interrupted"), json!(1))
    );
    assert_eq!(check(a_dir.path(), &done)["status"], "succeeded");

    // The acknowledged receipt is in the chain once (one intent, one outcome), which verifies.
    let mut client = server.client("killed").expect("client");
    let counted: Vec<(String, i64)> = client
        .query(
            "SELECT kind, count(*) FROM ledger_entries WHERE receipt_id = $1 GROUP BY kind \
             ORDER BY kind",
            &[&receipt],
        )
        .expect("query")
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert_eq!(
        counted,
        [("intent".to_owned(), 1), ("outcome".to_owned(), 1)],
        "the acknowledged call is recorded once"
    );
    let verified = run(b_dir.path(), &["receipts", "verify"]);
    assert!(verified.status.success(), "{}", output_text(&verified));
}

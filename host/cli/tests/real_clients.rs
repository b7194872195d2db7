//! MCP clients as their users run them against a stdio `guild serve`: the MCP Inspector's CLI
//! (`@modelcontextprotocol/inspector-cli`, pinned in host/cli/tests/mcp_ts, one method per
//! process) and LangChain's MCP adapter (`langchain-mcp-adapters`, pinned, in its own virtual
//! environment `.venv/langchain` because it needs the 1.x Python SDK) in its per-call mode,
//! where every tool call starts a `guild serve` of its own, with parallel calls. Both are
//! installed by tests/setup.sh.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

mod common;
use common::host_proc::{assert_passed, client_script, stop_host, venv_python};
use common::{output_text, plugin};

/// A folder with `guild.toml` (probe and echo) and data under `data/`.
fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = format!(
        "[host]\nplugins = [{:?}, {:?}]\ndata_dir = \"data\"\n",
        plugin("testing/probe").display().to_string(),
        plugin("testing/echo").display().to_string()
    );
    std::fs::write(dir.path().join("guild.toml"), text).expect("guild.toml");
    dir
}

/// One Inspector CLI run: `--method METHOD` (and `extra`) against a new `guild serve`; its JSON.
fn inspector(dir: &Path, method: &str, extra: &[&str]) -> Value {
    let cli = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp_ts/node_modules/@modelcontextprotocol/inspector-cli/build/index.js");
    assert!(
        cli.is_file(),
        "the MCP Inspector CLI is not installed: run tests/setup.sh (plugins/build.sh does)"
    );
    // The command comes first; its own arguments after `--`, so the Inspector keeps them.
    let out = Command::new("node")
        .arg(&cli)
        .arg(env!("CARGO_BIN_EXE_guild"))
        .args(["--method", method])
        .args(extra)
        .arg("--")
        .arg("--config")
        .arg(dir.join("guild.toml"))
        .args(["serve", "--watch-ms", "0"])
        .env_remove("GUILD_CONFIG")
        .env_remove("GUILD_LOG")
        // It finds its own package.json relative to the working directory.
        .current_dir(cli.parent().unwrap_or(dir))
        .stdin(Stdio::null())
        .output()
        .expect("node runs");
    assert!(out.status.success(), "{method}: {}", output_text(&out));
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{method}: not JSON ({e}): {}", output_text(&out)))
}

#[test]
fn the_inspector_cli_lists_and_runs_a_task() {
    let dir = setup();
    let tools = inspector(dir.path(), "tools/list", &[]);
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .map(|t| t.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    assert!(
        ["task", "start_task", "check_task", "read_memory"]
            .iter()
            .all(|n| names.contains(n)),
        "{names:?}"
    );
    let prompts = inspector(dir.path(), "prompts/list", &[]);
    assert!(prompts.to_string().contains("\"probe\""), "{prompts}");
    let resources = inspector(dir.path(), "resources/list", &[]);
    assert!(resources["resources"].is_array(), "{resources}");
    // The brief is JSON text: quoted, the Inspector passes it on as a string.
    let brief = json!({"op": "brief"}).to_string();
    let description = format!("description={}", json!(brief));
    let called = inspector(
        dir.path(),
        "tools/call",
        &[
            "--tool-name",
            "task",
            "--tool-arg",
            "subagent_type=probe",
            &description,
        ],
    );
    assert_eq!(
        called["structuredContent"]["status"], "succeeded",
        "{called}"
    );
    assert_ne!(called["isError"], true, "{called}");
    stop_host(dir.path());
}

#[test]
fn langchains_adapter_runs_parallel_calls_each_with_its_own_serve() {
    let dir = setup();
    let out = client_script(
        &venv_python(".venv/langchain"),
        "mcp_langchain.py",
        dir.path(),
    );
    assert_passed(&out);
    // Every call was a `guild serve` of its own; all of them shared one host.
    let log = std::fs::read_to_string(dir.path().join("data/serve.log")).unwrap_or_default();
    assert_eq!(log.matches("guild serve: host for").count(), 1, "{log}");
    stop_host(dir.path());
}

//! `guild demo` end to end, with its last step in view: rmcp's client (the official Rust MCP
//! SDK) starts `guild serve` over stdio and drives it. The demo folder lives under the test
//! target's scratch folder so that its compile cache (kept across demo runs) spares the next
//! run from compiling the Python digest again.

use std::path::Path;
use std::process::Command;

mod common;

#[test]
fn the_demo_ends_with_an_mcp_client_driving_guild_serve() {
    let plugins = common::plugin("kb")
        .parent()
        .expect("the plugins folder")
        .to_path_buf();
    let data = Path::new(env!("CARGO_TARGET_TMPDIR")).join("guild-demo");
    let out = Command::new(env!("CARGO_BIN_EXE_guild"))
        .arg("demo")
        .arg("--plugins")
        .arg(&plugins)
        .arg("--data")
        .arg(&data)
        .env_remove("GUILD_CONFIG")
        .env_remove("GUILD_LOG")
        .env_remove("SSH_AUTH_SOCK")
        .output()
        .expect("guild demo runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let step = stdout
        .split("== 14.")
        .nth(1)
        .unwrap_or_else(|| panic!("no MCP step in:\n{stdout}"));
    for expected in [
        "initialize: the client (rmcp) starts `guild serve`; server guild ",
        "tools/list: ",
        "the task tool lists the specialists an agent may ask: ",
        "tools/call task {subagent_type: kb",
        "resources/read memory://team",
        "session closed",
    ] {
        assert!(
            step.contains(expected),
            "{expected:?} missing from:\n{step}"
        );
    }
    // The roster the server offers, the task's answer and the team memory kb wrote.
    let roster = step
        .lines()
        .find(|l| l.contains("the task tool lists"))
        .unwrap_or_default();
    for name in ["kb", "triage", "digest"] {
        assert!(roster.contains(name), "{roster}");
    }
    assert!(step.contains("succeeded"), "{step}");
    let memory = step
        .split("resources/read memory://team")
        .nth(1)
        .unwrap_or_default();
    assert!(
        memory.lines().nth(1).is_some_and(|l| !l.trim().is_empty()),
        "the team memory read came back empty:\n{step}"
    );
}

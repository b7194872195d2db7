//! `guild demo` end to end, with two scenes in view: the prompt-defined triage-agent calling the
//! scripted model stand-in (tokens shown, its claim validated, its receipt in the ledger), and
//! the last step, where rmcp's client (the official Rust MCP SDK) starts `guild serve` over
//! stdio and drives it. The demo folder lives under the test
//! target's scratch folder so that its compile cache (kept across demo runs) spares the next
//! run from compiling the Python digest again.

use std::path::Path;
use std::process::Command;

mod common;

#[test]
fn the_demo_runs_a_prompt_defined_specialist_and_ends_with_an_mcp_client_driving_guild_serve() {
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
    prompt_defined_scene(&stdout);
    let step = stdout
        .split("== 15.")
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

/// Scene 11: triage-agent's run through the model stand-in: the text says the model is scripted
/// and where to point a real one; the four completions' tokens are accounted (the stand-in reports
/// 11 + 7 per answer), the skill was loaded, the create call left a receipt, its claim cites that
/// receipt's issue and passed validation, and the ledger (scene 12) holds the receipt.
fn prompt_defined_scene(stdout: &str) {
    let scene = stdout
        .split("== 11.")
        .nth(1)
        .and_then(|s| s.split("== 12.").next())
        .unwrap_or_else(|| panic!("no prompt-defined scene in:\n{stdout}"));
    for expected in [
        "local scripted stand-in at http://127.0.0.1:",
        "docs/models.md",
        "on triage-agent@0.1.0: succeeded",
        "outcome: Satisfied",
        "validation: PASSED",
        "model fast: 4 calls, 44 prompt + 28 completion tokens",
        "Skills loaded: triage-labels.",
        "tracker.search_issues [tracker@0.1.0] success",
        "tracker.create_issue [tracker@0.1.0, mutating] success",
        "the stand-in answered 4 completion request(s)",
    ] {
        assert!(
            scene.contains(expected),
            "{expected:?} missing from:\n{scene}"
        );
    }
    let receipt = scene
        .lines()
        .find(|l| l.trim_start().starts_with("receipt #"))
        .unwrap_or_else(|| panic!("no receipt in:\n{scene}"));
    let id = receipt
        .split(" id=")
        .nth(1)
        .unwrap_or_else(|| panic!("the receipt names no issue: {receipt}"));
    let claim = scene
        .lines()
        .find(|l| l.trim_start().starts_with("claim: tracker.create_issue"))
        .unwrap_or_else(|| panic!("no claim in:\n{scene}"));
    assert!(claim.contains(&format!(" {id} ")), "{claim} vs {receipt}");
    let task_id = scene
        .lines()
        .find_map(|l| l.strip_prefix("task "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no task headline in:\n{scene}"));
    let ledger = stdout
        .split("== 12.")
        .nth(1)
        .and_then(|s| s.split("== 13.").next())
        .unwrap_or_default();
    assert!(
        ledger
            .lines()
            .any(|l| l.contains("via tracker.create_issue")
                && l.contains(&format!("task {task_id} id={id}"))),
        "the ledger lacks task {task_id}'s receipt for issue {id}:\n{ledger}"
    );
}

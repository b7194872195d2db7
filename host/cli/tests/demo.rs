//! `guild demo` end to end, with three scenes in view: the prompt-defined triage-agent calling the
//! scripted model stand-in (tokens shown, its claim validated, its receipt in the ledger), the
//! prompt-defined triage-lead delegating to two specialists and revising the one whose claim
//! failed validation (the tree shown), and the last step, where rmcp's client (the official Rust MCP SDK) starts `guild serve` over
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
    delegation_scene(&stdout);
    let step = stdout
        .split("== 16.")
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
/// receipt's issue and passed validation, and the ledger (scene 13) holds the receipt.
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
        .split("== 13.")
        .nth(1)
        .and_then(|s| s.split("== 14.").next())
        .unwrap_or_default();
    assert!(
        ledger
            .lines()
            .any(|l| l.contains("via tracker.create_issue")
                && l.contains(&format!("task {task_id} id={id}"))),
        "the ledger lacks task {task_id}'s receipt for issue {id}:\n{ledger}"
    );
}

/// Scene 12: triage-lead splits the job between optimist and triage. Optimist's first report
/// fails the host's validation (the tracker refused its create, its claim is a silent failure);
/// the lead revises it, the same child's second report passes with the earlier failure set
/// aside; triage passes; the lead ascends, succeeds, and the tree shows the lead and both
/// children with their verdicts and reviews.
fn delegation_scene(stdout: &str) {
    let scene = stdout
        .split("== 12.")
        .nth(1)
        .and_then(|s| s.split("== 13.").next())
        .unwrap_or_else(|| panic!("no delegation scene in:\n{stdout}"));
    let steps: Vec<&str> = scene
        .lines()
        .filter(|l| l.trim_start().starts_with("lead → "))
        .collect();
    assert_eq!(steps.len(), 6, "{scene}");
    let child = |line: &str| {
        line.split("child ")
            .nth(1)
            .and_then(|s| s.split([' ', ')']).next())
            .unwrap_or_else(|| panic!("no child id in {line}"))
            .to_owned()
    };
    assert!(
        steps[0].contains("delegate_to__optimist") && steps[0].ends_with("verdict failed"),
        "{scene}"
    );
    assert!(
        scene.contains("check receipt failed: tracker.create_issue failed")
            && scene.contains("HTTP 503")
            && scene.contains("check claim failed: silent failure"),
        "{scene}"
    );
    assert!(
        steps[1].contains("review_child revise_child: continue_child"),
        "{scene}"
    );
    assert!(
        steps[2].contains("delegate_to__optimist") && steps[2].ends_with("verdict passed"),
        "{scene}"
    );
    assert_eq!(
        child(steps[0]),
        child(steps[2]),
        "a revised child keeps its id"
    );
    assert!(
        scene.contains("check receipt.earlier_attempt passed: 1 receipt(s)"),
        "{scene}"
    );
    assert!(steps[3].contains("reject_refine: keep_plan"), "{scene}");
    assert!(
        steps[4].contains("delegate_to__triage")
            && steps[4].contains("created 2 issue(s)")
            && steps[4].ends_with("verdict passed"),
        "{scene}"
    );
    assert!(steps[5].contains("ascend: complete_parent_goal"), "{scene}");
    assert!(scene.contains("on triage-lead@0.1.0: succeeded"), "{scene}");

    // The tree: the lead at level 0, its two children at level 1, in the order they started.
    let tree: Vec<&str> = scene
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("tree "))
        .take_while(|l| !l.trim().is_empty())
        .collect();
    assert_eq!(tree.len(), 4, "{scene}");
    let root = tree[0]
        .trim_start()
        .strip_prefix("tree ")
        .and_then(|s| s.split(' ').next())
        .unwrap_or_default();
    assert!(
        tree[1].starts_with(&format!("    {root} triage-lead finished verdict=passed")),
        "{scene}"
    );
    assert!(
        tree[2].starts_with(&format!(
            "      {} optimist finished verdict=passed review=reject_refine",
            child(steps[0])
        )),
        "{scene}"
    );
    assert!(
        tree[3].starts_with(&format!(
            "      {} triage finished verdict=passed review=ascend",
            child(steps[4])
        )),
        "{scene}"
    );
}

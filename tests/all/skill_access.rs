//! Skills through a specialist's `skills` import: only its own declared sources, the three
//! disclosure levels with byte accounting, requires-skill gating and strict allowed-tools.

use guild_tests::{host, probe};
use serde_json::{Value, json};

const PROBE: &[&str] = &["testing/probe", "testing/echo"];
const TOOLS: &str = r#"tools = ["echo.echo", "echo.create", "echo.documented"]"#;

fn seq(ops: Value) -> Value {
    json!({"op": "seq", "ops": ops})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn specialist_sees_only_its_declared_skills_level_by_level() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, &format!("[grants.probe]\n{TOOLS}")).await;
    let p = probe(
        &h,
        seq(json!([
            {"op": "skills"},
            {"op": "skill_load", "name": "echo-guide"},
            {"op": "skill_load", "name": "echo-guide"},
            {"op": "skill_read", "name": "echo-guide", "path": "reference/notes.md"},
            {"op": "skill_read", "name": "echo-guide", "path": "../careful-echo/SKILL.md"},
            {"op": "skill_load", "name": "brainstorming"},
        ])),
    )
    .await;
    assert!(p.ok, "{p:?}");
    let a = p.value.as_array().expect("answers");
    let names: Vec<_> = a[0]["value"]
        .as_array()
        .expect("catalog")
        .iter()
        .map(|s| s["name"].clone())
        .collect();
    assert_eq!(names, vec![json!("careful-echo"), json!("echo-guide")]);
    let body = a[1]["value"].as_str().unwrap_or_default();
    assert!(
        body.contains("# Echo guide") && !body.contains("description:"),
        "frontmatter stripped: {body}"
    );
    assert!(
        body.contains("reference/notes.md"),
        "resources listed: {body}"
    );
    let again = a[2]["value"].as_str().unwrap_or_default();
    assert!(
        again.contains("already loaded") && again.len() < body.len(),
        "{again}"
    );
    assert_eq!(
        a[3]["value"],
        json!("Notes: the documented tool echoes its input.\n")
    );
    assert!(
        !a[4]["ok"].as_bool().unwrap_or(true),
        "escape refused: {:?}",
        a[4]
    );
    assert!(
        !a[5]["ok"].as_bool().unwrap_or(true),
        "a skill it did not declare is invisible: {:?}",
        a[5]
    );
    let stats = &p.result.skills;
    assert!(
        stats.catalog_bytes > 0 && stats.body_bytes > 0 && stats.resource_bytes > 0,
        "{stats:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requires_skill_gates_the_tool_until_loaded_in_that_task() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, &format!("[grants.probe]\n{TOOLS}")).await;
    let call = json!({"op": "tool", "name": "echo.documented", "input": {"x": 1}});
    let p = probe(
        &h,
        seq(json!([call, {"op": "skill_load", "name": "echo-guide"}, call])),
    )
    .await;
    let a = p.value.as_array().expect("answers");
    assert!(!a[0]["ok"].as_bool().unwrap_or(true));
    assert!(
        a[0]["error"]
            .as_str()
            .unwrap_or("")
            .contains("load skill 'echo-guide' first"),
        "{:?}",
        a[0]
    );
    assert!(
        a[2]["ok"].as_bool().unwrap_or(false),
        "after loading: {:?}",
        a[2]
    );
    // A new task starts with nothing loaded.
    let p = probe(&h, call.clone()).await;
    assert!(p.error.contains("load skill 'echo-guide' first"), "{p:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strict_allowed_tools_refuses_tools_outside_the_active_skill() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ops = seq(json!([
        {"op": "skill_load", "name": "careful-echo"},
        {"op": "tool", "name": "echo.echo", "input": {}},
        {"op": "tool", "name": "echo.create", "input": {}},
    ]));
    let strict = host(
        dir.path(),
        PROBE,
        &format!("[skills]\nstrict_allowed_tools = [\"probe\"]\n[grants.probe]\n{TOOLS}"),
    )
    .await;
    let p = probe(&strict, ops.clone()).await;
    let a = p.value.as_array().expect("answers");
    assert!(a[1]["ok"].as_bool().unwrap_or(false), "{:?}", a[1]);
    assert!(
        !a[2]["ok"].as_bool().unwrap_or(true),
        "outside allowed-tools: {:?}",
        a[2]
    );
    assert!(
        a[2]["error"]
            .as_str()
            .unwrap_or("")
            .contains("careful-echo"),
        "{:?}",
        a[2]
    );
    // Off by default.
    let lax = host(dir.path(), PROBE, &format!("[grants.probe]\n{TOOLS}")).await;
    let p = probe(&lax, ops).await;
    let a = p.value.as_array().expect("answers");
    assert!(a[2]["ok"].as_bool().unwrap_or(false), "{:?}", a[2]);
}

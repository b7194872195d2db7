//! Skills through a specialist's `skills` import: only its own declared sources, the three
//! disclosure levels with byte accounting, requires-skill gating and strict allowed-tools.

use guild_tests::{host, probe};
use serde_json::{Value, json};

const PROBE: &[&str] = &["testing/probe", "testing/echo"];
const TOOLS: &str = r#"tools = ["echo.echo", "echo.create", "echo.documented"]
skills = ["skills/"]"#;

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_added_changed_and_removed_show_without_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A private copy of the probe plugin, so the test can edit its skills folder.
    let src = guild_tests::plugin_dir("testing/probe");
    let plugin = dir.path().join("probe");
    std::fs::create_dir_all(plugin.join("skills")).expect("mkdir");
    for f in ["plugin.toml", "probe.wasm"] {
        std::fs::copy(src.join(f), plugin.join(f)).expect("copy");
    }
    let text = format!(
        "[host]\nplugins = [{:?}, {:?}]\ndata_dir = \"data\"\n[skills]\nwatch_interval_ms = 50\n[grants.probe]\nskills = [\"skills/\"]\n",
        plugin.display().to_string(),
        guild_tests::plugin_dir("testing/echo")
            .display()
            .to_string()
    );
    let config = guild_host::Config::parse(&text, &dir.path().join("guild.toml"), dir.path())
        .expect("config");
    let h = guild_host::Host::with_engine(config, guild_tests::engine())
        .await
        .expect("host");
    let names = |p: &guild_tests::Probe| -> Vec<String> {
        p.value
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s["name"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let skill =
        |name: &str, desc: &str| format!("---\nname: {name}\ndescription: {desc}\n---\nbody\n");
    assert!(names(&probe(&h, json!({"op": "skills"})).await).is_empty());

    let eventually = |want: Vec<&'static str>| {
        let h = h.clone();
        async move {
            for _ in 0..100 {
                let p = probe(&h, json!({"op": "skills"})).await;
                if names(&p) == want {
                    return p;
                }
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            panic!("catalog never became {want:?}");
        }
    };
    std::fs::create_dir(plugin.join("skills/fresh")).expect("mkdir");
    std::fs::write(
        plugin.join("skills/fresh/SKILL.md"),
        skill("fresh", "first words"),
    )
    .expect("write");
    eventually(vec!["fresh"]).await;
    std::fs::write(
        plugin.join("skills/fresh/SKILL.md"),
        skill("fresh", "second words"),
    )
    .expect("write");
    let mut changed = false;
    for _ in 0..100 {
        let p = probe(&h, json!({"op": "skills"})).await;
        if p.value.to_string().contains("second words") {
            changed = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(changed, "a changed description shows");
    std::fs::remove_dir_all(plugin.join("skills/fresh")).expect("rm");
    eventually(vec![]).await;
}

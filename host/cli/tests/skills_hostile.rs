//! Hostile skills against the programs that read the catalog: `guild skills list --json`,
//! `guild skills check`, and a `guild serve` MCP client (`list_skills`, `resources/list`)
//! driven over stdio with bare JSON-RPC. Control and bidi characters must not come out raw, a
//! cut catalog must say so as data, and a deeply nested frontmatter must not stall the first
//! `list_skills`.

use std::path::Path;

use serde_json::{Value, json};

mod common;

use common::stdio_peer::StdioPeer;

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

/// A folder with `guild.toml` (no plugins, supervisor skills in `skills/`, `extra` appended)
/// and, in `skills/`: one skill whose description carries ESC, BEL, NUL and U+202E, one
/// with a 16,000-character description, one nested 50,000 levels deep and a plain one.
fn setup(extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        dir.path(),
        "guild.toml",
        &format!(
            "[host]\nplugins = []\ndata_dir = \"data\"\n\n[skills]\nsupervisor = [\"skills\"]\n{extra}"
        ),
    );
    write(
        dir.path(),
        "skills/ansi/SKILL.md",
        "---\nname: ansi\ndescription: \"Red \\e[31mtext\\e]0;pwned\\a NUL \\0 and \\u202Edesrever\"\n---\nBody.\n",
    );
    write(
        dir.path(),
        "skills/aaa-hog/SKILL.md",
        &format!(
            "---\nname: aaa-hog\ndescription: {}\n---\nBody.\n",
            "x".repeat(16_000)
        ),
    );
    write(
        dir.path(),
        "skills/deep/SKILL.md",
        &format!(
            "---\nname: deep\ndescription: d\nmetadata: {}x{}\n---\nBody.\n",
            "[".repeat(50_000),
            "]".repeat(50_000)
        ),
    );
    write(
        dir.path(),
        "skills/pdf/SKILL.md",
        "---\nname: pdf\ndescription: Work with PDF files.\n---\nBody.\n",
    );
    // Resource files: one plain, one whose name carries ESC and a bidi override.
    write(dir.path(), "skills/pdf/forms.md", "# Forms\n");
    write(dir.path(), "skills/pdf/evil\u{1b}[2J\u{202e}dm.txt", "x\n");
    dir
}

/// Characters that must never reach a model or a terminal raw.
fn raw_control(s: &str) -> Option<char> {
    s.chars().find(|c| {
        matches!(c, '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    })
}

/// Every string inside `v`, recursively.
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|i| strings(i, out)),
        Value::Object(map) => map.iter().for_each(|(k, v)| {
            out.push(k.clone());
            strings(v, out);
        }),
        _ => {}
    }
}

fn assert_no_raw_control(v: &Value) {
    let mut all = Vec::new();
    strings(v, &mut all);
    for s in all {
        assert_eq!(raw_control(&s), None, "raw control character in {s:?}");
    }
}

#[test]
fn skills_list_json_carries_neutral_text_and_the_omitted_count() {
    let dir = setup("catalog_max_bytes = 1024\n");
    let out = common::guild(dir.path(), &["--json", "skills", "list"])
        .output()
        .expect("guild runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_no_raw_control(&v);
    let listed = v["skills"].as_array().expect("skills").len();
    assert_eq!(v["omitted"]["reason"], "catalog_max_bytes", "{v}");
    assert_eq!(v["omitted"]["limit_bytes"], 1024);
    // aaa-hog, ansi, pdf can be listed; deep never loads.
    assert_eq!(
        v["omitted"]["count"].as_u64(),
        Some(3 - listed as u64),
        "{v}"
    );
    assert!(v["omitted"]["count"].as_u64() > Some(0));
    // With room for all: nothing omitted.
    let dir = setup("");
    let out = common::guild(dir.path(), &["--json", "skills", "list"])
        .output()
        .expect("guild runs");
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["omitted"]["count"], 0, "{v}");
    assert_eq!(v["omitted"]["reason"], Value::Null);
    let names: Vec<&str> = v["skills"]
        .as_array()
        .expect("skills")
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert_eq!(names, vec!["aaa-hog", "ansi", "pdf"], "{v}");
    let ansi = &v["skills"][1]["description"];
    assert_eq!(
        ansi, "Red \\x1b[31mtext\\x1b]0;pwned\\x07 NUL \\x00 and \\u{202e}desrever",
        "{v}"
    );
}

#[test]
fn skills_check_refuses_control_characters_and_deep_nesting() {
    let dir = setup("");
    let out = common::guild(dir.path(), &["skills", "check", "skills"])
        .current_dir(dir.path())
        .output()
        .expect("guild runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{text}");
    assert_eq!(raw_control(&text), None, "{text}");
    assert!(
        text.contains("ansi/SKILL.md: field `description`: contains the control or invisible format character U+001B"),
        "{text}"
    );
    assert!(text.contains("deep/SKILL.md: frontmatter is"), "{text}");
    // The allowed twin: the plain skill alone passes.
    let out = common::guild(dir.path(), &["skills", "check", "skills/pdf"])
        .current_dir(dir.path())
        .output()
        .expect("guild runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// The `result` of a request to `peer`, which must not be an error.
fn result(peer: &mut StdioPeer, method: &str, params: Value) -> Value {
    let message = peer.request(method, params);
    assert!(message.get("error").is_none(), "{method}: {message}");
    message["result"].clone()
}

#[test]
fn mcp_list_skills_and_resources_list_carry_no_raw_control_characters() {
    let dir = setup("catalog_max_bytes = 1024\n");
    let (mut peer, _) = StdioPeer::start(dir.path(), json!({}));
    let started = std::time::Instant::now();
    let list = result(
        &mut peer,
        "tools/call",
        json!({"name": "list_skills", "arguments": {}}),
    );
    eprintln!(
        "first list_skills with a 50,000-level frontmatter: {:?}",
        started.elapsed()
    );
    assert_no_raw_control(&list);
    let structured = &list["structuredContent"];
    let listed = structured["skills"].as_array().expect("skills").len();
    assert!(listed > 0, "{list}");
    assert_eq!(
        structured["omitted"]["count"].as_u64(),
        Some(3 - listed as u64),
        "{list}"
    );
    assert_eq!(
        structured["omitted"]["reason"], "catalog_max_bytes",
        "{list}"
    );
    assert_eq!(structured["omitted"]["limit_bytes"], 1024, "{list}");
    for item in structured["skills"].as_array().expect("skills") {
        let description = item["description"].as_str().expect("description");
        assert!(description.chars().count() <= 1024, "{item}");
    }
    let resources = result(&mut peer, "resources/list", json!({}));
    assert_no_raw_control(&resources);
    let ansi = resources["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .find(|r| r["uri"] == "skill://ansi/SKILL.md")
        .expect("ansi listed");
    assert_eq!(
        ansi["description"],
        "Red \\x1b[31mtext\\x1b]0;pwned\\x07 NUL \\x00 and \\u{202e}desrever"
    );
    // The allowed twin: a plain description comes through as written.
    let pdf = resources["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .find(|r| r["uri"] == "skill://pdf/SKILL.md")
        .expect("pdf listed");
    assert_eq!(pdf["description"], "Work with PDF files.");
    // A file name with control characters is not listed; its plain sibling is.
    let uris: Vec<&str> = resources["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .filter_map(|r| r["uri"].as_str())
        .filter(|u| u.starts_with("skill://pdf/"))
        .collect();
    assert_eq!(uris, vec!["skill://pdf/SKILL.md", "skill://pdf/forms.md"]);
    peer.stop();
}

//! `guild new` → `guild build` → `guild task`, as a new plugin author meets them, for every
//! language with templates: a scaffolded specialist calls the `echo` tool of a scaffolded
//! connector and the task succeeds with that tool call in its result. Plus the refusals an
//! author meets (existing folder, bad name, unknown template, wrong world). (The check that the
//! C SDK's checked-in bindings match `wit/` is in tests/all/c_plugins.rs.)
//!
//! Rust scaffolds build with one shared `CARGO_TARGET_DIR` under `target/`, so the SDK's
//! dependencies compile once. Python and JavaScript components take a while to compile: the
//! config lets them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("..")
}

fn guild(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_guild"))
        .args(args)
        .current_dir(cwd)
        .env_remove("GUILD_CONFIG")
        .env_remove("GUILD_LOG")
        // Rust scaffolds share one target dir, so guild-sdk and its dependencies build once.
        .env("CARGO_TARGET_DIR", repo().join("target").join("scaffolds"))
        .stdin(Stdio::null())
        .output()
        .expect("guild runs")
}

fn text(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn ok(out: Output) -> Output {
    assert!(out.status.success(), "{}", text(&out));
    out
}

/// Scaffolds `LANG-conn` and `LANG-spec`, builds both, and runs one task through them; the
/// folder they are in.
fn new_build_task(lang: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let connector = format!("{lang}-conn");
    let specialist = format!("{lang}-spec");
    let tool = format!("{connector}.echo");
    ok(guild(
        root,
        &["new", "connector", &connector, "--lang", lang],
    ));
    let created = ok(guild(
        root,
        &[
            "new",
            "specialist",
            &specialist,
            "--lang",
            lang,
            "--tool",
            &tool,
        ],
    ));
    let printed = String::from_utf8_lossy(&created.stdout);
    assert!(
        printed.contains(&format!("[grants.{specialist}]"))
            && printed.contains(&format!("tools = [\"{tool}\"]")),
        "the grant snippet is printed:\n{printed}"
    );
    for name in [&connector, &specialist] {
        assert!(root.join(name).join("build.sh").is_file());
        assert!(root.join(name).join("wit").join("guild.wit").is_file());
        ok(guild(root, &["build", name]));
    }
    let config = format!(
        "[host]\nplugins = [{connector:?}, {specialist:?}]\ndata_dir = \"data\"\n\
         compile_timeout_s = 900\n\n[grants.{specialist}]\ntools = [{tool:?}]\n"
    );
    std::fs::write(root.join("guild.toml"), config).expect("write guild.toml");
    let out = ok(guild(
        root,
        &["--json", "task", &specialist, "hello from the test"],
    ));
    let result: Value = serde_json::from_slice(&out.stdout).expect("task JSON");
    assert_eq!(result["status"], "succeeded", "{result:#}");
    let calls = result["tool_calls"].as_array().expect("tool_calls");
    assert_eq!(calls.len(), 1, "{result:#}");
    assert_eq!(calls[0]["tool"], tool.as_str(), "{result:#}");
    let output = calls[0]["outcome"]["output"].as_str().unwrap_or_default();
    assert!(
        output.contains("hello from the test"),
        "the connector echoed the brief: {result:#}"
    );
    dir
}

#[test]
fn rust_scaffolds_build_and_run_a_task() {
    let dir = new_build_task("rust");
    // The author's loop, once: builds, loads both under a development grant, runs the brief.
    let out = ok(guild(
        dir.path(),
        &[
            "dev",
            "rust-spec",
            "--with",
            "rust-conn",
            "--once",
            "--brief",
            "from dev",
        ],
    ));
    let shown = text(&out);
    assert!(
        shown.contains("tool call 1: rust-conn.echo") && shown.contains("from dev"),
        "{shown}"
    );
    // Without the connector, the tool is granted but missing: the run says so.
    let out = guild(dir.path(), &["dev", "rust-spec", "--once"]);
    assert!(!out.status.success(), "{}", text(&out));
}

#[test]
fn python_scaffolds_build_and_run_a_task() {
    new_build_task("python");
}

#[test]
fn js_scaffolds_build_and_run_a_task() {
    new_build_task("js");
}

#[test]
fn c_scaffolds_build_and_run_a_task() {
    let dir = new_build_task("c");
    // The third kind builds and loads as its kind too (C builds take seconds).
    ok(guild(
        dir.path(),
        &["new", "skill-loader", "c-skills", "--lang", "c"],
    ));
    let out = ok(guild(dir.path(), &["build", "c-skills"]));
    assert!(text(&out).contains("ok: c-skills@0.1.0"), "{}", text(&out));
}

#[test]
fn new_refuses_an_existing_folder_a_bad_name_and_a_missing_template() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::create_dir(root.join("taken")).expect("mkdir");
    std::fs::write(root.join("taken").join("notes.txt"), "mine").expect("write");
    let out = guild(root, &["new", "connector", "taken", "--lang", "python"]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("already exists and is not empty"),
        "{}",
        text(&out)
    );
    assert_eq!(
        std::fs::read_to_string(root.join("taken").join("notes.txt")).expect("read"),
        "mine",
        "an existing folder is left alone"
    );

    let out = guild(root, &["new", "connector", "Bad_Name", "--lang", "python"]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("not a valid plugin name"),
        "{}",
        text(&out)
    );
    assert!(!root.join("Bad_Name").exists());

    let out = guild(root, &["new", "skill-loader", "skills", "--lang", "js"]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("no skill-loader template for js"),
        "{}",
        text(&out)
    );

    let out = guild(root, &["new", "connector", "x", "--lang", "cobol"]);
    assert!(!out.status.success());
    assert!(text(&out).contains("possible values"), "{}", text(&out));

    // An empty folder is fine to scaffold into.
    std::fs::create_dir(root.join("empty")).expect("mkdir");
    ok(guild(
        root,
        &["new", "connector", "empty", "--lang", "python"],
    ));
    assert!(root.join("empty").join("plugin.toml").is_file());
}

#[test]
fn build_names_a_missing_or_failing_build_script() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    ok(guild(
        root,
        &["new", "connector", "broken", "--lang", "python"],
    ));
    std::fs::remove_file(root.join("broken").join("build.sh")).expect("rm");
    let out = guild(root, &["build", "broken"]);
    assert!(!out.status.success());
    assert!(text(&out).contains("has no build.sh"), "{}", text(&out));

    std::fs::write(
        root.join("broken").join("build.sh"),
        "echo compiling >&2\necho 'app.py:3: syntax error' >&2\nexit 3\n",
    )
    .expect("write");
    let out = guild(root, &["build", "broken"]);
    assert!(!out.status.success());
    let shown = text(&out);
    assert!(
        shown.contains("build.sh failed (exit status: 3); its last stderr lines:\ncompiling\napp.py:3: syntax error"),
        "{shown}"
    );
}

#[test]
fn build_suggests_the_kind_a_component_implements() {
    // A folder that says `specialist` but holds the (already built) echo test connector.
    let echo = repo().join("plugins").join("testing").join("echo");
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let folder = root.join("mixed");
    std::fs::create_dir(&folder).expect("mkdir");
    std::fs::copy(echo.join("echo.wasm"), folder.join("mixed.wasm"))
        .expect("plugins/testing/echo/echo.wasm exists: run plugins/build.sh");
    std::fs::write(
        folder.join("plugin.toml"),
        "[plugin]\nname = \"mixed\"\nversion = \"0.1.0\"\nkind = \"specialist\"\ncomponent = \"mixed.wasm\"\n",
    )
    .expect("write");
    std::fs::write(folder.join("build.sh"), "true\n").expect("write");
    let out = guild(root, &["build", "mixed"]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("implements the `connector` world")
            && text(&out).contains("set `kind = \"connector\"`"),
        "{}",
        text(&out)
    );

    // The same folder declared as what it is builds and loads.
    std::fs::write(
        folder.join("plugin.toml"),
        "[plugin]\nname = \"mixed\"\nversion = \"0.1.0\"\nkind = \"connector\"\ncomponent = \"mixed.wasm\"\n",
    )
    .expect("write");
    let out = ok(guild(root, &["build", "mixed"]));
    assert!(text(&out).contains("ok: mixed@0.1.0"), "{}", text(&out));
}

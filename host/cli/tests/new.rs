//! `guild new` → `guild build` → `guild task`, as a new plugin author meets them, for every
//! language with templates: all three kinds are scaffolded; a scaffolded specialist calls the
//! `save` tool of a scaffolded connector and the task succeeds with that tool call in its
//! result; the scaffolded skill loader serves its skill to a specialist through the host
//! (catalog, body, resource; C: it builds and loads as its kind). The Python, JavaScript and C
//! scaffolds' own unit tests run too, outside wasm (C: `./test.sh`, natively with the C SDK's
//! fake host), and a C scaffold whose save loses its external id fails its `./test.sh` naming
//! the check. The task claims the id the mutating call returned. A prompt scaffold (specialists
//! only) builds by copying the shared agent-loop component in.
//! Plus the refusals an author meets (existing folder, bad name, unknown language, wrong world).
//! (The check that the C SDK's checked-in bindings match `wit/` is in tests/all/c_plugins.rs.)
//!
//! Cost: Rust scaffolds build with `CARGO_TARGET_DIR` set to plugins/target, where
//! plugins/build.sh already compiled the SDK and its dependencies: only the scaffolds compile.
//! guild.toml is written before the builds, so each `guild build` leaves its compiled component
//! in the config's compile cache and the tasks compile nothing: every component is compiled by
//! wasmtime once (Python and JavaScript ones take seconds each).

mod common;

use common::output_text as text;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("..")
}

fn guild(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_guild"))
        .args(args)
        .current_dir(cwd)
        .env_remove("GUILD_CONFIG")
        .env_remove("GUILD_LOG")
        // Rust scaffolds build into the plugins' build folder: same SDK, same pinned versions
        // (the scaffold's Cargo.lock is the SDK's), same release profile and target as
        // plugins/build.sh's, so guild-sdk and its dependencies are already built there.
        .env("CARGO_TARGET_DIR", repo().join("plugins").join("target"))
        .stdin(Stdio::null())
        .output()
        .expect("guild runs")
}

fn ok(out: Output) -> Output {
    assert!(out.status.success(), "{}", text(&out));
    out
}

/// A copy of the probe test specialist (plugins/testing/probe, already built) in `root/probe`
/// whose manifest requests the skills of the loader `loader` instead of its own folder.
fn probe_reading(root: &Path, loader: &str) {
    let src = repo().join("plugins").join("testing").join("probe");
    let dest = root.join("probe");
    std::fs::create_dir(&dest).expect("mkdir probe");
    std::fs::copy(src.join("probe.wasm"), dest.join("probe.wasm"))
        .expect("plugins/testing/probe/probe.wasm exists: run plugins/build.sh");
    let manifest = std::fs::read_to_string(src.join("plugin.toml")).expect("read probe manifest");
    let requested = "skills = [\"skills/\"]";
    assert!(manifest.contains(requested), "{manifest}");
    let manifest = manifest.replace(requested, &format!("skills = [\"loader:{loader}\"]"));
    std::fs::write(dest.join("plugin.toml"), manifest).expect("write probe manifest");
}

/// Runs a scaffold's own unit tests the way its files say (outside wasm, with the SDK's test
/// double); Rust scaffolds' `cargo test` is left to their authors (it builds the SDK natively).
fn unit_tests(lang: &str, dir: &Path) {
    let (program, args): (&str, &[&str]) = match lang {
        "python" => ("python3", &["-m", "unittest", "-v"]),
        "js" => ("npm", &["test", "--silent"]),
        "c" => ("./test.sh", &[]),
        _ => return,
    };
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{program} runs: {e}"));
    assert!(
        out.status.success(),
        "{} in {}: {}",
        program,
        dir.display(),
        text(&out)
    );
}

/// Scaffolds `LANG-conn`, `LANG-spec` and `LANG-skills`, runs their unit tests, builds them,
/// runs one task through the connector and one that reads the loader's skill; the folder they
/// are in.
fn new_build_task(lang: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let connector = format!("{lang}-conn");
    let specialist = format!("{lang}-spec");
    let loader = format!("{lang}-skills");
    // The connector's mutating tool: the task's call has a receipt and the report a claim.
    let tool = format!("{connector}.save");
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
            && printed.contains(&format!("tools = [\"{tool}\"]"))
            && printed.contains("report = true"),
        "the grant snippet is printed:\n{printed}"
    );
    ok(guild(
        root,
        &["new", "skill-loader", &loader, "--lang", lang],
    ));
    probe_reading(root, &loader);
    // Written first, as the printed snippet suggests: the builds then compile into its cache.
    let config = format!(
        "[host]\nplugins = [{connector:?}, {specialist:?}, {loader:?}, \"probe\"]\n\
         data_dir = \"data\"\ncompile_timeout_s = 900\n\n[grants.{specialist}]\ntools = [{tool:?}]\nreport = true\n\n\
         [grants.probe]\nskills = [\"loader:{loader}\"]\n"
    );
    std::fs::write(root.join("guild.toml"), config).expect("write guild.toml");
    for name in [&connector, &specialist, &loader] {
        assert!(root.join(name).join("build.sh").is_file());
        assert!(root.join(name).join("wit").join("guild.wit").is_file());
        unit_tests(lang, &root.join(name));
        ok(guild(root, &["build", name]));
    }

    let out = ok(guild(
        root,
        &["--json", "task", &specialist, "hello from the test"],
    ));
    // What the builds compiled is what the task loads: nothing discarded, nothing compiled twice.
    assert!(
        !text(&out).contains("discarding compile cache entry"),
        "{}",
        text(&out)
    );
    let result: Value = serde_json::from_slice(&out.stdout).expect("task JSON");
    assert_eq!(result["status"], "succeeded", "{result:#}");
    let calls = result["tool_calls"].as_array().expect("tool_calls");
    assert_eq!(calls.len(), 1, "{result:#}");
    assert_eq!(calls[0]["tool"], tool.as_str(), "{result:#}");
    // The template shows progress: one report before the call.
    let reports = result["reports"].to_string();
    assert!(reports.contains(&format!("calling {tool}")), "{result:#}");
    let output = calls[0]["outcome"]["output"].as_str().unwrap_or_default();
    assert!(
        output.contains("hello from the test"),
        "the connector saved the brief: {result:#}"
    );
    let id = calls[0]["outcome"]["external_id"]
        .as_str()
        .unwrap_or_default();
    assert!(
        id.starts_with("note-") && calls[0]["receipt_id"].is_string(),
        "{result:#}"
    );
    let claims = &result["report"]["claims"];
    assert_eq!(claims[0]["tool"], tool.as_str(), "{result:#}");
    assert_eq!(
        claims[0]["external_id"], id,
        "the claim names the call's id: {result:#}"
    );

    // The loader's skill reaches a specialist: catalog, body, resource; a missing resource is
    // the loader's own refusal.
    let brief = json!({"op": "seq", "ops": [
        {"op": "skills"},
        {"op": "skill_load", "name": "hello"},
        {"op": "skill_read", "name": "hello", "path": "checklist.md"},
        {"op": "skill_read", "name": "hello", "path": "absent.md"},
    ]});
    let out = ok(guild(
        root,
        &["--json", "task", "probe", &brief.to_string()],
    ));
    let result: Value = serde_json::from_slice(&out.stdout).expect("task JSON");
    assert_eq!(result["status"], "succeeded", "{result:#}");
    let details = result["report"]["details"].as_str().unwrap_or_default();
    let answer: Value = serde_json::from_str(details).expect("probe details JSON");
    let steps = answer["value"].as_array().expect("one answer per op");
    let catalog = &steps[0]["value"];
    assert_eq!(
        catalog,
        &json!([{"name": "hello", "description": "How to greet a new teammate."}]),
        "{result:#}"
    );
    let body = steps[1]["value"].as_str().unwrap_or_default();
    assert!(body.contains("# Hello"), "{result:#}");
    let resource = steps[2]["value"].as_str().unwrap_or_default();
    assert!(resource.contains("one next step"), "{result:#}");
    assert_eq!(steps[3]["ok"], false, "{result:#}");
    let refused = steps[3]["error"].as_str().unwrap_or_default();
    assert!(refused.contains("absent.md"), "{result:#}");
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
        shown.contains("tool call 1: rust-conn.save") && shown.contains("from dev"),
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
    new_build_task("c");
}

/// The lines an author reads in one scaffolded plugin folder: non-blank, non-comment lines of
/// its source files (`.rs`, `.py`, `.js`, `.c`), tests left out (test files; in Rust, the
/// `#[cfg(test)]` module at the end). Build scripts and manifests are not counted.
fn author_lines(folder: &Path) -> usize {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut dirs = vec![folder.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("read scaffold folder") {
            let path = entry.expect("entry").path();
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            if path.is_dir() {
                if !["node_modules", "target", "wit"].contains(&name) {
                    dirs.push(path);
                }
            } else if [".rs", ".py", ".js", ".c"]
                .iter()
                .any(|x| name.ends_with(x))
                && !name.starts_with("test_")
                && !name.ends_with(".test.js")
            {
                files.push(path);
            }
        }
    }
    let mut count = 0;
    for file in files {
        let source = std::fs::read_to_string(&file).expect("read source");
        let python = file.extension().is_some_and(|x| x == "py");
        let mut in_block = false;
        for line in source.lines() {
            let line = line.trim();
            if line.starts_with("#[cfg(test)]") {
                break;
            }
            if in_block {
                in_block = !line.contains("*/");
                continue;
            }
            if line.starts_with("/*") {
                in_block = !line.contains("*/");
                continue;
            }
            let comment = line.starts_with("//") || (python && line.starts_with('#'));
            if !line.is_empty() && !comment {
                count += 1;
            }
        }
    }
    count
}

/// A scaffolded connector and specialist stay short: what the kit can own (parsing, schemas,
/// export glue, memory) is in the kit, and the rest fits on a screen, with tools and their
/// schemas, a mutating tool with its receipt type, the outcome's external id and a claim.
#[test]
fn scaffolds_stay_within_their_line_budgets() {
    for (lang, budget) in [("rust", 60), ("python", 40), ("js", 40), ("c", 60)] {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        ok(guild(root, &["new", "connector", "conn", "--lang", lang]));
        ok(guild(
            root,
            &[
                "new",
                "specialist",
                "spec",
                "--lang",
                lang,
                "--tool",
                "conn.save",
            ],
        ));
        let lines = author_lines(&root.join("conn")) + author_lines(&root.join("spec"));
        assert!(
            lines <= budget,
            "a {lang} connector and specialist take {lines} lines, over the budget of {budget}"
        );
        assert!(lines > 10, "{lang}: nothing counted ({lines} lines)");
    }
}

#[test]
fn c_scaffold_unit_tests_fail_naming_the_broken_check() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    ok(guild(
        root,
        &["new", "connector", "c-broken", "--lang", "c"],
    ));
    let folder = root.join("c-broken");
    unit_tests("c", &folder);

    // Save forgets its external id: the scaffold's own test must catch it.
    let app = folder.join("app.c");
    let source = std::fs::read_to_string(&app).expect("read app.c");
    let save = "guild_outcome_external_id(out, id);";
    assert!(source.contains(save), "{source}");
    std::fs::write(&app, source.replace(save, "")).expect("write app.c");
    let out = Command::new("./test.sh")
        .current_dir(&folder)
        .stdin(Stdio::null())
        .output()
        .expect("./test.sh runs");
    let shown = text(&out);
    assert!(!out.status.success(), "{shown}");
    assert!(
        shown.contains(
            "FAILED: the mutating tool returns an external id, the same for the same text"
        ) && shown.contains("1 of 11 checks FAILED: the mutating tool returns an external id")
            && shown.contains("ok: the read-only tool answers with the text"),
        "{shown}"
    );
}

#[test]
fn new_refuses_an_existing_folder_a_bad_name_and_an_unknown_language() {
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

    // Every language has a template of every kind; a language without templates is refused.
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

#[test]
fn a_quickjs_build_is_refused_once_naming_the_engine_to_build_with() {
    // jco's QuickJS engine emits the component model's async ABI, which the host leaves out.
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    ok(guild(root, &["new", "connector", "qjs", "--lang", "js"]));
    let script = root.join("qjs").join("build.sh");
    let build = std::fs::read_to_string(&script).expect("read build.sh");
    let line = "\"$here/qjs.wasm\"";
    assert!(build.contains(line), "{build}");
    let quickjs = build.replace(line, &format!("{line} --backend quickjs"));
    std::fs::write(&script, quickjs).expect("write build.sh");
    // With a data folder, compiles run in the compile helper: its refusal is reported once.
    std::fs::write(
        root.join("guild.toml"),
        "[host]\nplugins = [\"qjs\"]\ndata_dir = \"data\"\ncompile_timeout_s = 900\n",
    )
    .expect("write guild.toml");
    let out = guild(root, &["build", "qjs"]);
    assert!(!out.status.success(), "{}", text(&out));
    let shown = text(&out);
    assert!(
        shown.contains("requires the component model async feature")
            && shown.contains("default StarlingMonkey engine, i.e. without `--backend quickjs`"),
        "{shown}"
    );
    assert_eq!(shown.matches("does not compile").count(), 1, "{shown}");
}

#[test]
fn a_prompt_scaffold_is_a_folder_built_into_the_shared_agent_loop_for_specialists_only() {
    let agent_loop = repo()
        .join("plugins")
        .join("agent-loop")
        .join("agent-loop.wasm");
    let shared = std::fs::read(&agent_loop)
        .expect("plugins/agent-loop/agent-loop.wasm exists: run plugins/build.sh");
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let created = ok(guild(
        root,
        &[
            "new",
            "specialist",
            "helper",
            "--lang",
            "prompt",
            "--tool",
            "notes.echo",
        ],
    ));
    let printed = String::from_utf8_lossy(&created.stdout);
    assert!(
        printed.contains("[grants.helper]")
            && printed.contains("tools = [\"notes.echo\"]")
            && printed.contains("[grants.helper.llm]\nmodels = [\"...\"]"),
        "the grant snippet is printed:\n{printed}"
    );
    let folder = root.join("helper");
    for file in [
        "plugin.toml",
        "prompt.md",
        "build.sh",
        "skills/house-style/SKILL.md",
    ] {
        assert!(folder.join(file).is_file(), "{file} is written");
    }
    assert!(
        !folder.join("wit").exists(),
        "a prompt builds nothing against the WIT"
    );
    let manifest = std::fs::read_to_string(folder.join("plugin.toml")).expect("read manifest");
    assert!(
        manifest.contains("component = \"agent-loop.wasm\""),
        "{manifest}"
    );
    assert!(
        std::fs::read_to_string(folder.join("prompt.md"))
            .expect("read prompt")
            .contains("notes.echo")
    );

    // The build copies the shared component in; the host loads it as a specialist.
    let built = ok(guild(root, &["build", "helper"]));
    assert_eq!(
        std::fs::read(folder.join("agent-loop.wasm")).expect("the build copied the component"),
        shared
    );
    assert!(
        text(&built).contains("specialist"),
        "the component loads as a specialist: {}",
        text(&built)
    );

    // Only a specialist can be a prompt.
    let out = guild(root, &["new", "connector", "tools", "--lang", "prompt"]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("there is no connector template for prompt"),
        "{}",
        text(&out)
    );
    assert!(!root.join("tools").exists());
}

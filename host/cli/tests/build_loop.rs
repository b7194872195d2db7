//! `guild build` against the configuration in use, and what the author's loop does with the
//! outcome (docs/plugin-authors.md): with a configuration, the build checks the plugin against
//! its grants (granted / denied) and compiles into its compile cache, which the next
//! `guild task` reads without compiling or discarding anything; without one it says so instead
//! of reporting denials. A failed build leaves the old component in place: `guild task` warns
//! naming the plugin, `guild dev` refuses to run it; sources changed after the build are stale
//! too. Real Rust scaffolds from `guild new`, built into plugins/target like tests/new.rs.

mod common;

use common::output_text as text;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use guild_host::{CompileSource, Config, EngineOptions, GuildEngine};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("..")
}

/// `guild --config ROOT/CONFIG ARGS` in `root`, Rust builds in plugins/target.
fn guild_with(root: &Path, config: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_guild"))
        .arg("--config")
        .arg(root.join(config))
        .args(args)
        .current_dir(root)
        .env_remove("GUILD_CONFIG")
        .env_remove("GUILD_LOG")
        .env("CARGO_TARGET_DIR", repo().join("plugins").join("target"))
        .stdin(Stdio::null())
        .output()
        .expect("guild runs")
}

fn guild(root: &Path, args: &[&str]) -> Output {
    guild_with(root, "guild.toml", args)
}

fn ok(out: Output) -> String {
    assert!(out.status.success(), "{}", text(&out));
    text(&out)
}

/// Scaffolds the Rust connector `PREFIX-conn` and the specialist `PREFIX-spec` that calls its
/// echo, and a config loading both and granting the specialist the tool. Each test has its own
/// prefix: cargo tells same-named crates in one target folder apart by name, not by path.
fn scaffold(root: &Path, prefix: &str) {
    let (conn, spec) = (format!("{prefix}-conn"), format!("{prefix}-spec"));
    let tool = format!("{conn}.echo");
    ok(guild(root, &["new", "connector", &conn, "--lang", "rust"]));
    ok(guild(
        root,
        &[
            "new",
            "specialist",
            &spec,
            "--lang",
            "rust",
            "--tool",
            &tool,
        ],
    ));
}

/// A config loading both, granting the specialist the echo tool and its progress reports.
fn write_config(root: &Path, prefix: &str) {
    std::fs::write(
        root.join("guild.toml"),
        format!(
            "[host]\nplugins = [\"{prefix}-conn\", \"{prefix}-spec\"]\ndata_dir = \"data\"\n\n\
             [grants.{prefix}-spec]\ntools = [\"{prefix}-conn.echo\"]\nreport = true\n"
        ),
    )
    .expect("write config");
}

/// Where a fresh engine with the host's options for `root/guild.toml` finds `plugin`'s
/// component: `Disk` when a build left it in the configuration's compile cache.
fn cached(root: &Path, plugin: &str) -> CompileSource {
    let config = Config::load(&root.join("guild.toml")).expect("config loads");
    let engine = GuildEngine::new(EngineOptions {
        pooling: false,
        ..guild_host::engine_options(&config)
    })
    .expect("engine");
    engine
        .warm(&root.join(plugin).join(format!("{plugin}.wasm")))
        .expect("compiles")
}

#[test]
fn build_checks_the_configs_grants_and_compiles_into_its_cache() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    scaffold(root, "cache");

    // No configuration: said so, the requests shown unchecked, no denial, no roster verdict.
    let shown = ok(guild(root, &["build", "cache-spec"]));
    assert!(
        shown.contains("note: no configuration found at")
            && shown.contains("capabilities: not checked: no configuration found")
            && shown.contains("tools     cache-conn.echo"),
        "{shown}"
    );
    assert!(
        !shown.contains("DENIED") && !shown.contains("NOT ON THE ROSTER"),
        "{shown}"
    );
    let out = guild(root, &["--json", "build", "cache-spec"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("build JSON");
    assert_eq!(json["config"], serde_json::Value::Null, "{json:#}");
    assert_eq!(json["capabilities"][0]["status"], "unchecked", "{json:#}");

    // Allowed: the configuration grants the tool and loads the connector.
    write_config(root, "cache");
    ok(guild(root, &["build", "cache-conn"]));
    let shown = ok(guild(root, &["build", "cache-spec"]));
    assert!(
        shown.contains("tools     granted  cache-conn.echo") && !shown.contains("warning:"),
        "{shown}"
    );
    assert!(
        !shown.contains("DENIED") && !shown.contains("NOT ON THE ROSTER"),
        "{shown}"
    );

    // What the builds compiled is in the cache the host reads, under its key.
    assert_eq!(cached(root, "cache-conn"), CompileSource::Disk);
    assert_eq!(cached(root, "cache-spec"), CompileSource::Disk);
    let shown = ok(guild(root, &["task", "cache-spec", "hello from the test"]));
    assert!(shown.contains("hello from the test"), "{shown}");
    assert!(!shown.contains("discarding compile cache entry"), "{shown}");

    // A grant that misspells the connector's tool: building the connector names it, the line
    // to fix and the tool meant; loading it for a task says so too.
    std::fs::write(
        root.join("typo.toml"),
        "[host]\nplugins = [\"cache-conn\", \"cache-spec\"]\ndata_dir = \"data\"\n\n\
         [grants.cache-spec]\ntools = [\"cache-conn.ech\"]\n",
    )
    .expect("write typo.toml");
    let shown = ok(guild_with(root, "typo.toml", &["build", "cache-conn"]));
    assert!(
        shown.contains("warning: [grants.cache-spec] tools in ")
            && shown.contains(
                "typo.toml names `cache-conn.ech`, but no loaded connector offers `cache-conn.ech`; did you mean `cache-conn.echo`?"
            ),
        "{shown}"
    );
    let shown = text(&guild_with(
        root,
        "typo.toml",
        &["task", "cache-spec", "hi"],
    ));
    assert!(
        shown.contains("warning: plugin 'cache-spec': [grants.cache-spec] tools in ")
            && shown.contains("typo.toml names `cache-conn.ech`")
            && shown.contains("did you mean `cache-conn.echo`?"),
        "{shown}"
    );

    // The specialist's own manifest: a tool the configuration's connectors offer builds quietly;
    // a misspelled one builds with a warning naming the file, the key, the tool and the nearest
    // offered one; a malformed one is refused naming the key and the rule.
    let manifest = root.join("cache-spec").join("plugin.toml");
    let requested = std::fs::read_to_string(&manifest).expect("read plugin.toml");
    let with = |tool: &str| requested.replace("\"cache-conn.echo\"", &format!("{tool:?}"));
    std::fs::write(&manifest, with("cache-conn.ech")).expect("write plugin.toml");
    let shown = ok(guild(root, &["build", "cache-spec"]));
    let file = manifest.canonicalize().expect("plugin.toml");
    assert!(
        shown.contains(&format!(
            "warning: [capabilities] tools in {} names `cache-conn.ech`, but no loaded connector \
             offers `cache-conn.ech`; did you mean `cache-conn.echo`?",
            file.display()
        )),
        "{shown}"
    );
    std::fs::write(&manifest, with("Cache-conn.echo")).expect("write plugin.toml");
    let out = guild(root, &["build", "cache-spec"]);
    let shown = text(&out);
    assert!(!out.status.success(), "{shown}");
    assert!(
        shown.contains(
            "plugin.toml: key `capabilities.tools`: \"Cache-conn.echo\" is not a tool name"
        ),
        "{shown}"
    );
    std::fs::write(&manifest, &requested).expect("write plugin.toml");

    // Denied: a configuration without the grant, nor the connector, says both.
    std::fs::write(
        root.join("strict.toml"),
        "[host]\nplugins = [\"cache-spec\"]\ndata_dir = \"data\"\n",
    )
    .expect("write strict.toml");
    let shown = ok(guild_with(root, "strict.toml", &["build", "cache-spec"]));
    assert!(
        shown.contains("tools     DENIED   cache-conn.echo")
            && shown.contains("NOT ON THE ROSTER: needs any of connectors [\"cache-conn\"]"),
        "{shown}"
    );
}

#[test]
fn a_failed_build_makes_task_warn_and_dev_refuse() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    scaffold(root, "stale");
    write_config(root, "stale");
    ok(guild(root, &["build", "stale-conn"]));
    ok(guild(root, &["build", "stale-spec"]));
    let shown = ok(guild(root, &["task", "stale-spec", "hi"]));
    assert!(!shown.contains("warning:"), "{shown}");

    // A syntax error: the build fails and the old component stays.
    let lib = root.join("stale-conn").join("src").join("lib.rs");
    let source = std::fs::read_to_string(&lib).expect("read lib.rs");
    std::fs::write(&lib, format!("{source}\nfn broken( {{\n")).expect("write lib.rs");
    let out = guild(root, &["build", "stale-conn"]);
    assert!(!out.status.success(), "{}", text(&out));

    // `guild task` runs it, but says it is stale.
    let shown = ok(guild(root, &["task", "stale-spec", "hi"]));
    assert!(
        shown.contains("warning: stale-conn: the last build failed at ")
            && shown.contains("stale-conn.wasm is from an earlier build; run `guild build"),
        "{shown}"
    );
    assert!(!shown.contains("warning: stale-spec"), "{shown}");

    // `guild dev` builds it again, fails again, and refuses to run the old one.
    let out = guild(
        root,
        &["dev", "stale-spec", "--with", "stale-conn", "--once"],
    );
    let shown = text(&out);
    assert!(!out.status.success(), "{shown}");
    assert!(
        shown.contains("not running: a build failed")
            && shown.contains("stale-conn: the last build failed at "),
        "{shown}"
    );
    assert!(!shown.contains("running stale-spec"), "{shown}");

    // Fixed and built: fresh again; dev runs.
    std::fs::write(&lib, &source).expect("write lib.rs");
    ok(guild(root, &["build", "stale-conn"]));
    let shown = ok(guild(root, &["task", "stale-spec", "hi"]));
    assert!(!shown.contains("warning:"), "{shown}");
    let shown = ok(guild(
        root,
        &["dev", "stale-spec", "--with", "stale-conn", "--once"],
    ));
    assert!(shown.contains("tool call 1: stale-conn.echo"), "{shown}");

    // An edit after the build, not built yet: stale too.
    let component = root.join("stale-conn").join("stale-conn.wasm");
    let built = std::fs::metadata(&component)
        .and_then(|m| m.modified())
        .expect("component mtime");
    std::fs::write(&lib, format!("{source}\n// an edit\n")).expect("write lib.rs");
    std::fs::File::options()
        .write(true)
        .open(&lib)
        .and_then(|f| f.set_modified(built + std::time::Duration::from_secs(5)))
        .expect("set mtime");
    let shown = ok(guild(root, &["task", "stale-spec", "hi"]));
    assert!(
        shown.contains("warning: stale-conn: sources are newer than ")
            && shown.contains("lib.rs changed since it was built"),
        "{shown}"
    );
}

/// Waits until `log` holds `count` lines containing `text`; panics with the log when `child`
/// exits first or ten minutes pass (a build on a loaded machine, not a timing assertion).
fn wait_for_lines(log: &Path, text: &str, count: usize, child: &mut std::process::Child) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(600);
    loop {
        let shown = std::fs::read_to_string(log).unwrap_or_default();
        if shown.lines().filter(|l| l.contains(text)).count() >= count {
            return shown;
        }
        let exited = child.try_wait().expect("try_wait").is_some();
        assert!(
            !exited && std::time::Instant::now() < deadline,
            "no {count}× `{text}`:\n{shown}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn dev_rebuilds_only_the_changed_folder_with_the_dev_profile() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    scaffold(root, "pickup");
    // Only stderr (the rounds' lines); the task's report goes to stdout.
    let log = root.join("dev.err");
    let mut child = Command::new(env!("CARGO_BIN_EXE_guild"))
        .args([
            "dev",
            "pickup-spec",
            "--with",
            "pickup-conn",
            "--brief",
            "hi",
        ])
        .current_dir(root)
        .env_remove("GUILD_CONFIG")
        .env("CARGO_TARGET_DIR", repo().join("plugins").join("target"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("log"))
        .spawn()
        .expect("guild dev starts");
    let first = wait_for_lines(&log, "watching ", 1, &mut child);
    assert!(first.contains("running pickup-spec: hi"), "{first}");
    assert!(!first.contains("unchanged since its last build"), "{first}");
    // guild dev builds with the scaffold's `guild-dev` profile (GUILD_BUILD=dev): the folder's
    // component is that profile's output (a release build's bytes differ).
    let dev_built = repo().join("plugins/target/wasm32-wasip2/guild-dev/pickup_spec.wasm");
    let component = root.join("pickup-spec").join("pickup-spec.wasm");
    assert!(
        std::fs::read(&dev_built).ok() == std::fs::read(&component).ok(),
        "{first}"
    );

    let lib = root.join("pickup-spec").join("src").join("lib.rs");
    let source = std::fs::read_to_string(&lib).expect("read lib.rs");
    std::fs::write(&lib, source.replace(" answered\")", " answered again\")")).expect("write");
    let second = wait_for_lines(&log, "watching ", 2, &mut child);
    let _ = child.kill();
    let _ = child.wait();
    let conn = root
        .join("pickup-conn")
        .canonicalize()
        .expect("conn folder");
    assert!(
        second.contains(&format!(
            "unchanged since its last build: {}",
            conn.display()
        )),
        "{second}"
    );
    assert_eq!(
        second.matches("running pickup-spec: hi").count(),
        2,
        "{second}"
    );
    assert_eq!(
        second.matches("built pickup-spec.wasm").count(),
        2,
        "{second}"
    );
    assert_eq!(
        second.matches("built pickup-conn.wasm").count(),
        1,
        "{second}"
    );
}

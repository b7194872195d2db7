//! `guild memory` as scripts and people meet it: show, update (file and stdin), history and
//! restore, `--json`, the workspace/user flags, exit codes, and warnings and errors printed.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// A folder with a `guild.toml` naming workspace `acme` and user `ana`, its data dir inside.
fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("guild.toml"),
        "[host]\ndata_dir = \"data\"\n\n[memory]\nworkspace = \"acme\"\nuser = \"ana\"\n",
    )
    .expect("write guild.toml");
    dir
}

fn guild(dir: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_guild"))
        .arg("--config")
        .arg(dir.join("guild.toml"))
        .args(args)
        .env_remove("GUILD_CONFIG")
        .env_remove("GUILD_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("guild runs");
    let mut input = child.stdin.take().expect("stdin");
    input
        .write_all(stdin.unwrap_or("").as_bytes())
        .expect("write stdin");
    drop(input);
    child.wait_with_output().expect("guild ends")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

#[test]
fn update_show_history_and_restore() {
    let dir = setup();
    let d = dir.path();
    let file = d.join("team.md");
    std::fs::write(
        &file,
        "Here you go:\n## Decisions\n- (2026-01-02) [ci] cache builds\n",
    )
    .expect("write");
    let out = guild(
        d,
        &[
            "memory",
            "update",
            "--team",
            "--file",
            file.to_str().expect("utf-8"),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with("stored team:acme version 1: "),
        "{}",
        text(&out.stdout)
    );
    let err = text(&out.stderr);
    assert!(
        err.contains("warning: Removed the 13 characters before the first ## heading"),
        "{err}"
    );
    assert!(
        err.contains("warning: Normalized 1 legacy bullet(s)"),
        "{err}"
    );

    let out = guild(
        d,
        &["memory", "update", "--team", "--file", "-"],
        Some("## Decisions\n- 2026-01-03: cache builds and tests\n"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let out = guild(d, &["memory", "show", "--team"], None);
    assert_eq!(
        text(&out.stdout),
        "## Decisions\n- 2026-01-03: cache builds and tests\n"
    );
    assert!(
        text(&out.stderr).contains("/ 25,000 characters"),
        "{}",
        text(&out.stderr)
    );

    let out = guild(d, &["--json", "memory", "history", "--team"], None);
    let history = json(&out);
    let versions: Vec<u64> = history
        .as_array()
        .expect("array")
        .iter()
        .map(|v| v["version"].as_u64().expect("version"))
        .collect();
    assert_eq!(versions, [2, 1]);
    assert_eq!(history[0]["actor"], "supervisor");

    let out = guild(d, &["--json", "memory", "restore", "--team", "1"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let restored = json(&out);
    assert_eq!(restored["result"], "stored");
    assert_eq!(restored["version"]["restored_from"], 1);

    let out = guild(
        d,
        &["--json", "memory", "show", "--team", "--version", "1"],
        None,
    );
    assert_eq!(
        json(&out)["text"],
        "## Decisions\n- 2026-01-02: [ci] cache builds\n"
    );
    let out = guild(d, &["memory", "show", "--team", "--version", "9"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("has no version 9"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_refused_update_exits_3_and_changes_nothing() {
    let dir = setup();
    let d = dir.path();
    let good = "## Notes\n- 2026-01-01: keep\n";
    assert_eq!(
        guild(
            d,
            &["memory", "update", "--private", "--file", "-"],
            Some(good)
        )
        .status
        .code(),
        Some(0)
    );
    let out = guild(
        d,
        &["memory", "update", "--private", "--file", "-"],
        Some("this is a long note without any heading at all, refused"),
    );
    assert_eq!(out.status.code(), Some(3));
    assert!(
        text(&out.stderr).contains("error: Memory must be markdown with at least one ## heading."),
        "{}",
        text(&out.stderr)
    );
    let out = guild(
        d,
        &["--json", "memory", "update", "--private", "--file", "-"],
        Some("NO_UPDATE"),
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(json(&out)["result"], "no_op");
    assert_eq!(
        text(&guild(d, &["memory", "show", "--private"], None).stdout),
        good
    );
}

#[test]
fn an_update_from_a_stale_base_exits_4_and_one_from_the_newest_is_stored() {
    let dir = setup();
    let d = dir.path();
    let update = |base: &str, doc: &str| {
        guild(
            d,
            &["memory", "update", "--team", "--base", base, "--file", "-"],
            Some(doc),
        )
    };
    let v1 = "## Decisions\n- 2026-01-01: use tabs\n";
    assert_eq!(update("0", v1).status.code(), Some(0));
    let v2 = format!("{v1}- 2026-01-02: releases on tuesdays\n");
    let out = update("1", &v2);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // A second writer that also read version 1.
    let out = update("1", &format!("{v1}- 2026-01-03: no friday deploys\n"));
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("based on version 1") && err.contains("version 2 is stored now"),
        "{err}"
    );
    assert_eq!(
        text(&guild(d, &["memory", "show", "--team"], None).stdout),
        v2,
        "the first writer's version stays"
    );
}

#[test]
fn workspace_and_user_come_from_the_operator() {
    let dir = setup();
    let d = dir.path();
    let doc = "## Decisions\n- 2026-01-01: other team\n";
    let out = guild(
        d,
        &[
            "memory",
            "--workspace",
            "beta",
            "update",
            "--team",
            "--file",
            "-",
        ],
        Some(doc),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&guild(d, &["memory", "show", "--team"], None).stdout),
        "",
        "acme is another workspace"
    );
    assert_eq!(
        text(
            &guild(
                d,
                &["memory", "show", "--team", "--workspace", "beta"],
                None
            )
            .stdout
        ),
        doc
    );
    let out = guild(
        d,
        &["memory", "show", "--team", "--workspace", "../x"],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("--workspace"),
        "{}",
        text(&out.stderr)
    );

    std::fs::write(d.join("guild.toml"), "[host]\ndata_dir = \"data\"\n").expect("write");
    let out = guild(d, &["memory", "show", "--private"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains(
            "no user is named for private memory: set `[memory] user` in guild.toml or pass --user"
        ),
        "{}",
        text(&out.stderr)
    );
    // A scope is required, and only one.
    assert_eq!(guild(d, &["memory", "show"], None).status.code(), Some(2));
    assert_eq!(
        guild(d, &["memory", "show", "--team", "--private"], None)
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn plugins_show_lists_memory_rights_requested_granted_and_denied() {
    let dir = setup();
    let d = dir.path();
    let probe =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../plugins/testing/probe/probe.wasm");
    assert!(
        probe.is_file(),
        "{} is missing: run plugins/build.sh first",
        probe.display()
    );
    let folder = d.join("scribe");
    std::fs::create_dir_all(&folder).expect("folder");
    std::fs::copy(&probe, folder.join("scribe.wasm")).expect("copy");
    std::fs::write(
        folder.join("plugin.toml"),
        "[plugin]\nname = \"scribe\"\nversion = \"1.0.0\"\nkind = \"specialist\"\ncomponent = \"scribe.wasm\"\n\n[capabilities]\nmemory = [\"team:read\", \"team:write\"]\n",
    )
    .expect("manifest");
    std::fs::write(
        d.join("guild.toml"),
        "[host]\nplugins = [\"scribe\"]\ndata_dir = \"data\"\ncompile_cache = false\n\n[grants.scribe]\nmemory = [\"team:read\", \"private:read\"]\n",
    )
    .expect("guild.toml");
    let out = guild(d, &["--json", "plugins", "show", "scribe"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let info = json(&out);
    let rows: Vec<(String, String)> = info["capabilities"]
        .as_array()
        .expect("rows")
        .iter()
        .filter(|r| r["capability"] == "memory")
        .map(|r| {
            (
                r["target"].as_str().unwrap_or_default().to_owned(),
                r["status"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("team:read".to_owned(), "granted".to_owned()),
            ("team:write".to_owned(), "denied".to_owned()),
            ("private:read".to_owned(), "unused".to_owned()),
        ]
    );
}

//! The `guild` binary as scripts and people meet it: exit codes, a stdout closed early, and
//! hostile guest text kept away from the terminal. Runs the built binary against the real
//! probe component (built by `plugins/build.sh`).

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::{Value, json};

mod common;
use common::guild;

/// The probe's folder, checking that its component was built.
fn probe_dir() -> PathBuf {
    common::plugin("testing/probe")
}

/// A folder with a `guild.toml` loading the probe (nothing granted), its data dir inside.
fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = format!(
        "[host]\nplugins = [{:?}]\ndata_dir = \"data\"\ncompile_cache = false\n",
        probe_dir().display().to_string()
    );
    std::fs::write(dir.path().join("guild.toml"), text).expect("write guild.toml");
    dir
}

fn run(dir: &Path, args: &[&str]) -> Output {
    guild(dir, args).output().expect("guild runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn code(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

fn task(dir: &Path, op: &Value, extra: &[&str]) -> Output {
    let brief = op.to_string();
    let mut args = extra.to_vec();
    args.extend(["task", "probe", brief.as_str()]);
    run(dir, &args)
}

#[test]
fn task_exit_codes_say_how_it_went() {
    let dir = setup();
    let passed = task(dir.path(), &json!({"op": "brief"}), &[]);
    assert_eq!(code(&passed), 0, "{}", text(&passed.stderr));

    // The report claims an external effect no receipt backs: validation fails, the task ran.
    let unbacked = json!({"op": "report_as", "summary": "filed it",
        "claim": {"tool": "echo.create", "text": "created issue 7"}});
    let out = task(dir.path(), &unbacked, &[]);
    assert_eq!(code(&out), 3, "{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        text(&out.stdout).contains("validation: FAILED"),
        "{}",
        text(&out.stdout)
    );

    let out = task(dir.path(), &json!({"op": "trap"}), &[]);
    assert_eq!(code(&out), 4, "{}", text(&out.stdout));

    let out = run(dir.path(), &["task", "nobody", "do it"]);
    assert_eq!(code(&out), 1);
    assert!(
        text(&out.stderr).contains("unknown specialist 'nobody'"),
        "{}",
        text(&out.stderr)
    );

    let out = run(dir.path(), &["task", "probe"]);
    assert_eq!(code(&out), 2, "a usage error: {}", text(&out.stderr));

    let help = run(dir.path(), &["task", "--help"]);
    let help = text(&help.stdout);
    for line in [
        "Exit codes:",
        "0  the task succeeded",
        "3  the task ran but validation",
        "4  the task failed",
    ] {
        assert!(help.contains(line), "--help lacks {line:?}:\n{help}");
    }
}

/// A stdout whose reader is already gone: every write fails with EPIPE.
fn closed_stdout() -> std::io::PipeWriter {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    writer
}

#[test]
fn closing_stdout_early_never_panics() {
    let dir = setup();
    for args in [
        &["receipts"][..],
        &["plugins", "list"][..],
        &["skills", "list", "--for", "probe"][..],
        &["--json", "receipts"][..],
    ] {
        let out = guild(dir.path(), args)
            .stdout(closed_stdout())
            .stderr(Stdio::piped())
            .output()
            .expect("guild runs");
        let stderr = text(&out.stderr);
        // A panic exits with 101 and says "failed printing to stdout".
        assert_eq!(code(&out), 0, "guild {args:?}: {stderr}");
        assert!(
            !stderr.contains("failed printing"),
            "guild {args:?}: {stderr}"
        );
        assert!(!stderr.contains("Broken pipe"), "guild {args:?}: {stderr}");
    }
    // The verdict still reaches a script that stopped reading.
    let out = guild(dir.path(), &["task", "probe", r#"{"op": "trap"}"#])
        .stdout(closed_stdout())
        .stderr(Stdio::piped())
        .output()
        .expect("guild runs");
    let stderr = text(&out.stderr);
    assert_eq!(code(&out), 4, "{stderr}");
    assert!(!stderr.contains("failed printing"), "{stderr}");
}

/// Sequences a terminal acts on, in everything a guest can make the CLI print.
const HOSTILE: &str = "\u{1b}]0;pwned\u{7}\u{1b}[2Jclear\rFORGED\u{9b}31m\u{202e}";

fn assert_no_raw_controls(what: &str, out: &str) {
    for c in ['\u{1b}', '\u{7}', '\r', '\u{9b}', '\u{202e}'] {
        assert!(
            !out.contains(c),
            "{what}: raw {c:?} reached the terminal:\n{out:?}"
        );
    }
}

#[test]
fn guest_text_is_escaped_in_reports_errors_and_json() {
    let dir = setup();
    let hostile = json!({"op": "report_as", "summary": HOSTILE,
        "details": format!("first line\n{HOSTILE}\nlast line")});
    let out = task(dir.path(), &hostile, &[]);
    let stdout = text(&out.stdout);
    assert_eq!(code(&out), 0, "{stdout}{}", text(&out.stderr));
    assert_no_raw_controls("report", &stdout);
    assert!(
        stdout.contains("\\x1b]0;pwned\\x07\\x1b[2Jclear\\rFORGED\\u{9b}31m\\u{202e}"),
        "{stdout}"
    );
    assert!(
        stdout.contains("    first line\n") && stdout.contains("    last line\n"),
        "{stdout}"
    );

    // The same report as JSON: still valid, same text, nothing raw.
    let out = task(dir.path(), &hostile, &["--json"]);
    let stdout = text(&out.stdout);
    assert_no_raw_controls("json", &stdout);
    let doc: Value = serde_json::from_str(&stdout).expect("stdout is one JSON document");
    assert_eq!(doc["report"]["summary"], json!(HOSTILE));

    // A guest error (the unknown op is echoed back in the specialist's error).
    let out = task(dir.path(), &json!({"op": HOSTILE}), &[]);
    let stdout = text(&out.stdout);
    assert_eq!(code(&out), 4, "{stdout}");
    assert_no_raw_controls("error", &stdout);
    assert!(stdout.contains("unknown op"), "{stdout}");
}

#[test]
fn guest_log_lines_cannot_forge_a_log_line() {
    let dir = setup();
    let forged = format!("real\n2026-01-01T00:00:00Z ERROR forged line {HOSTILE}");
    for op in [
        json!({"op": "log", "level": "warn", "text": forged}),
        json!({"op": "print", "text": forged.replace('\n', "\r")}),
    ] {
        let out = task(dir.path(), &op, &["-v"]);
        let stderr = text(&out.stderr);
        assert_eq!(code(&out), 0, "{stderr}");
        assert_no_raw_controls("log", &stderr);
        assert!(
            stderr.contains("forged line"),
            "the guest's line was logged: {stderr}"
        );
        for line in stderr.lines().filter(|l| l.contains("forged line")) {
            assert!(
                line.contains("probe"),
                "a log line without the plugin: {line:?}"
            );
            assert!(
                !line.starts_with("2026-01-01"),
                "a forged log line: {line:?}"
            );
        }
    }
}

#[test]
fn guest_stdout_never_reaches_the_hosts_stdout() {
    let dir = setup();
    let marker = "GUEST-STDOUT-MARKER";
    let out = task(
        dir.path(),
        &json!({"op": "print", "text": marker}),
        &["--json"],
    );
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    // The report quotes the marker inside its JSON; a raw guest line would break the document.
    let doc: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("stdout is not only the result ({e}): {stdout}"));
    assert_eq!(doc["status"], json!("succeeded"), "{stdout}");
    assert!(
        !stdout.lines().any(|l| l.trim() == marker),
        "guest stdout leaked: {stdout}"
    );
}

#[test]
fn each_load_error_is_printed_once() {
    let dir = setup();
    let broken = dir.path().join("broken");
    std::fs::create_dir(&broken).expect("mkdir");
    std::fs::write(
        broken.join("plugin.toml"),
        "[plugin]\nname = \"broken\"\nversion = \"0.1.0\"\nkind = \"specialist\"\ncomponent = \"missing.wasm\"\n",
    )
    .expect("write manifest");
    let text_config = format!(
        "[host]\nplugins = [{:?}, \"broken\"]\ndata_dir = \"data\"\ncompile_cache = false\n",
        probe_dir().display().to_string()
    );
    std::fs::write(dir.path().join("guild.toml"), text_config).expect("write guild.toml");
    let out = run(dir.path(), &["plugins", "list"]);
    let stderr = text(&out.stderr);
    assert_eq!(code(&out), 2, "{stderr}");
    assert_eq!(
        stderr
            .lines()
            .filter(|l| l.contains("plugin 'broken'"))
            .count(),
        1,
        "the load error must be printed exactly once:\n{stderr}"
    );
}

#[test]
fn a_config_typo_names_the_key_path_and_the_expected_keys() {
    let dir = setup();
    std::fs::write(
        dir.path().join("guild.toml"),
        "[host]\ndata_dir = \"data\"\n\n[grants.kb]\ntols = [\"tracker.search\"]\n",
    )
    .expect("write guild.toml");
    let out = run(dir.path(), &["plugins", "list"]);
    let stderr = text(&out.stderr);
    assert_eq!(code(&out), 1, "{stderr}");
    assert!(
        stderr.contains("unknown key `tols` in [grants.kb]") && stderr.contains("`tools`"),
        "{stderr}"
    );
}

#[test]
fn a_one_shot_task_on_a_cold_cache_starts_lazily_and_runs_on_its_own_plugin() {
    // Three plugins, none compiled yet: the task waits for the probe only (it is moved to the
    // front of the compile queue); the others compile behind it.
    let dir = tempfile::tempdir().expect("tempdir");
    let folders: Vec<String> = ["testing/probe", "testing/echo", "textstats"]
        .iter()
        .map(|p| format!("{:?}", common::plugin(p).display().to_string()))
        .collect();
    let config = format!(
        "[host]\nplugins = [{}]\ndata_dir = \"data\"\n",
        folders.join(", ")
    );
    std::fs::write(dir.path().join("guild.toml"), config).expect("write guild.toml");
    let out = task(dir.path(), &json!({"op": "brief"}), &[]);
    let stderr = text(&out.stderr);
    assert_eq!(code(&out), 0, "{}{stderr}", text(&out.stdout));
    assert!(
        stderr.contains("compiling ") && stderr.contains(" in the background (a first start"),
        "{stderr}"
    );
    for name in ["probe", "echo", "textstats"] {
        assert!(stderr.contains(name), "{name} queued: {stderr}");
    }
}

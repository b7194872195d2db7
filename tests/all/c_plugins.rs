//! The C authoring kit (sdk/c): the checked-in bindings match `wit/`; the C example specialist
//! (plugins/textstats) runs as a real component through the host; and a C guest writing files
//! with stdio through the WASI preview1 adapter (plugins/testing/cwrite) stays under its grant's
//! disk quota: a write that fits lands on disk, one past the quota is refused. A C connector
//! (plugins/testing/cnotes) reads its input with the kit's JSON reader and answers a mutating
//! call with an external id; its mistakes reach the caller naming it: output that is not JSON
//! fails the call, GUILD_ABORT's reason and line are in the trap's error, and a bare abort()
//! still says where (or at least that it was abort()). The kit's own
//! helpers are unit-tested natively (sdk/c/testing/kit_test.c).

use std::path::Path;

use guild_host::types::{Outcome, TaskStatus};
use guild_tests::{host, probe, repo_root};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// `sdk/c/bindings/SOURCE` records the sha256 of every `wit/*.wit` file the bindings were
/// generated from; a changed, added or removed WIT file makes the bindings stale.
#[test]
fn c_bindings_match_the_wit() {
    let root = repo_root();
    let source = std::fs::read_to_string(root.join("sdk/c/bindings/SOURCE"))
        .expect("sdk/c/bindings/SOURCE exists (written by sdk/c/bindings.sh)");
    assert!(
        source.lines().any(|l| l.starts_with("generator: ")),
        "SOURCE names its generator:\n{source}"
    );
    let mut recorded: Vec<(String, String)> = source
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("generator: ") && !l.is_empty())
        .filter_map(|l| {
            let (hash, path) = l.split_once("  ")?;
            Some((path.to_owned(), hash.to_owned()))
        })
        .collect();
    recorded.sort();
    let mut current: Vec<(String, String)> = std::fs::read_dir(root.join("wit"))
        .expect("wit/ exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "wit"))
        .map(|p| {
            let bytes = std::fs::read(&p).expect("read a WIT file");
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            (format!("wit/{name}"), hex::encode(Sha256::digest(&bytes)))
        })
        .collect();
    current.sort();
    assert_eq!(
        recorded, current,
        "C bindings are stale: run sdk/c/bindings.sh (it needs wit-bindgen-cli 0.63 with the C generator)"
    );
    for world in ["specialist", "connector", "skill_loader"] {
        let dir = root.join("sdk/c/bindings").join(world.replace('_', "-"));
        for file in [
            format!("{world}.h"),
            format!("{world}.c"),
            format!("{world}_component_type.o"),
        ] {
            assert!(
                dir.join(&file).is_file(),
                "{} is missing: run sdk/c/bindings.sh",
                dir.join(file).display()
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c_specialist_measures_its_brief() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), &["textstats"], "").await;
    let text = "héllo world\nfoo\n\nbar baz qux";
    let r = h.task("textstats", text).await.expect("task starts");
    assert_eq!(r.status, TaskStatus::Succeeded, "{:?}", r.error);
    let report = r.report.as_ref().expect("report");
    assert_eq!(report.outcome, Outcome::Satisfied, "{report:?}");
    assert_eq!(report.summary, "4 lines, 6 words, 28 characters");
    let details: Value = serde_json::from_str(&report.details).expect("details are JSON");
    let sha = hex::encode(Sha256::digest(text.as_bytes()));
    assert_eq!(
        details,
        serde_json::json!({"bytes": 29, "characters": 28, "words": 6, "lines": 4,
            "longest_line": 11, "sha256": sha}),
    );
}

const MIB: u64 = 1024 * 1024;

/// A host with cwrite granted `/data` read-write under a 1 MiB quota.
async fn cwrite_host(dir: &Path) -> guild_host::Host {
    std::fs::create_dir_all(dir.join("data")).expect("mkdir");
    let grants = "[grants.cwrite]\nfs = [{ guest = \"/data\", host = \"data\", mode = \"rw\", \
                  quota_mb = 1 }]\n";
    host(dir, &["testing/cwrite"], grants).await
}

/// Runs cwrite with `brief`; returns (bytes written, error text).
async fn cwrite(h: &guild_host::Host, brief: &str) -> (u64, Option<String>) {
    let r = h.task("cwrite", brief).await.expect("task starts");
    assert_eq!(r.status, TaskStatus::Succeeded, "{:?}", r.error);
    let report = r.report.expect("report");
    let answer: Value = serde_json::from_str(&report.details).expect("details are JSON");
    (
        answer["done"].as_u64().expect("done"),
        answer["error"].as_str().map(str::to_owned),
    )
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c_stdio_writes_under_the_quota_land_on_disk() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = cwrite_host(dir.path()).await;
    let (done, error) = cwrite(&h, "/data/notes.bin 500000").await;
    assert_eq!((done, error.as_deref()), (500_000, None));
    assert_eq!(size(&dir.path().join("data/notes.bin")), 500_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c_stdio_writes_past_the_quota_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = cwrite_host(dir.path()).await;
    let (done, error) = cwrite(&h, "/data/big.bin 2097152").await;
    let error = error.unwrap_or_default();
    assert!(
        error.contains("No space left on device"),
        "the adapter reports ENOSPC: {error} (after {done} bytes)"
    );
    assert!(done <= MIB, "{done} bytes went through");
    assert!(size(&dir.path().join("data/big.bin")) <= MIB);
}

/// The SDK's `guild_run_error`: a brief the C guest cannot act on fails the task as invalid.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c_specialist_refuses_a_malformed_brief_as_invalid() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = cwrite_host(dir.path()).await;
    let r = h.task("cwrite", "no size here").await.expect("task starts");
    assert_eq!(r.status, TaskStatus::Failed, "{r:?}");
    let error = r.error.unwrap_or_default();
    assert!(
        error.contains("invalid brief: the brief must be `PATH BYTES`"),
        "{error}"
    );
}

/// A host with the probe specialist and the C connector, the probe granted `tools`.
async fn cnotes_host(dir: &Path, tools: &str) -> guild_host::Host {
    let grants = format!("[grants.probe]\ntools = [{tools}]\n");
    host(dir, &["testing/probe", "testing/cnotes"], &grants).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c_connector_reads_its_input_and_returns_an_external_id() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = cnotes_host(dir.path(), r#""cnotes.save""#).await;
    let p = probe(
        &h,
        serde_json::json!({"op": "tool", "name": "cnotes.save", "input": {"text": "héllo \"C\""}}),
    )
    .await;
    assert!(p.ok, "{p:?}");
    let id = p.value["external_id"].as_str().expect("an external id");
    assert!(id.starts_with("note-"), "{id}");
    assert_eq!(p.value["output"], serde_json::json!({"id": id}));
    assert_eq!(p.value["preview"], "saved a note");
    let call = &p.result.tool_calls[0];
    assert!(call.mutating && call.receipt_id.is_some(), "{call:?}");
}

/// Output that is not JSON fails the call (never a success the task passes with), naming the
/// connector; what it said it changed stays on the record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c_connector_output_that_is_not_json_fails_the_call_naming_the_plugin() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = cnotes_host(dir.path(), r#""cnotes.garbled""#).await;
    let p = probe(
        &h,
        serde_json::json!({"op": "tool", "name": "cnotes.garbled", "input": {}}),
    )
    .await;
    assert!(!p.ok, "{p:?}");
    assert!(
        p.error.contains(
            "tool 'cnotes.garbled' failed: connector 'cnotes@0.1.0' returned output that is not JSON"
        ) && p.error.contains("must be one JSON document"),
        "{}",
        p.error
    );
    let call = &p.result.tool_calls[0];
    assert_eq!(
        call.outcome.status,
        guild_host::types::CallStatus::Failed,
        "{call:?}"
    );
}

/// GUILD_ABORT writes file, line and reason to stderr; the trap's error carries them, where a
/// bare abort() says only "unreachable".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c_abort_names_its_file_line_and_reason() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = cnotes_host(dir.path(), r#""cnotes.abort""#).await;
    let p = probe(
        &h,
        serde_json::json!({"op": "tool", "name": "cnotes.abort", "input": {"n": 1}}),
    )
    .await;
    assert!(!p.ok, "{p:?}");
    assert!(
        p.error.contains("cnotes.c:")
            && p.error
                .contains(r#"aborted: asked to abort with input {"n":1}"#),
        "{}",
        p.error
    );
}

/// A bare abort() says why too: in a file that includes guild.h the kit's macro names the file
/// and line; called through a pointer, as a library would, the kit's abort() still says that
/// abort() was called, where wasi-libc's would leave only "unreachable".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c_bare_abort_names_its_file_and_line_or_at_least_abort() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = cnotes_host(dir.path(), r#""cnotes.abort""#).await;
    let bare = serde_json::json!({"op": "tool", "name": "cnotes.abort", "input": {"bare": true}});
    let p = probe(&h, bare).await;
    assert!(!p.ok, "{p:?}");
    let at_line = has_file_line(&p.error, "cnotes.c:", ": aborted: abort() called");
    assert!(at_line, "{}", p.error);

    let pointer =
        serde_json::json!({"op": "tool", "name": "cnotes.abort", "input": {"bare": "pointer"}});
    let p = probe(&h, pointer).await;
    assert!(!p.ok, "{p:?}");
    assert!(
        p.error.contains("aborted: abort() called (use GUILD_ABORT"),
        "{}",
        p.error
    );
}

/// Whether `text` has `before`, digits, then `after` (a `FILE:LINE: ...` line).
fn has_file_line(text: &str, before: &str, after: &str) -> bool {
    text.match_indices(before).any(|(i, _)| {
        let rest = &text[i + before.len()..];
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        digits > 0 && rest[digits..].starts_with(after)
    })
}

/// The kit's helpers (JSON reader, claims, mutating specs, outcome ids, refusal texts) pass
/// their native unit tests in both worlds that use them.
#[test]
fn c_kit_helpers_pass_their_native_tests() {
    let testing = repo_root().join("sdk/c/testing");
    for world in ["specialist", "connector"] {
        let out = std::process::Command::new(testing.join("test.sh"))
            .arg(world)
            .arg(testing.join("kit_test.c"))
            .output()
            .expect("sdk/c/testing/test.sh runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("checks passed"),
            "{world}: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

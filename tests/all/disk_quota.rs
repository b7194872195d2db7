//! The disk quota on read-write folder grants: writes under it land on disk; every way of
//! growing a folder past it (descriptor writes, write and append streams, `set-size`, std's
//! files, new files and folders) fails with `insufficient-space` while the host keeps
//! serving; usage is shared by every task of the grant and freed by removals; read-only grants
//! are unaffected.

use std::path::Path;

use guild_host::types::TaskStatus;
use guild_tests::{Probe, host, probe};
use serde_json::{Value, json};

const PROBE: &[&str] = &["testing/probe", "testing/echo"];
const MIB: u64 = 1024 * 1024;

/// `/data` read-write (1 MiB, 5 files) and `/ro` read-only, holding 2 MiB already.
fn grants(dir: &Path) -> String {
    std::fs::create_dir_all(dir.join("data")).expect("mkdir");
    std::fs::create_dir_all(dir.join("ro")).expect("mkdir");
    std::fs::write(dir.join("ro/big"), vec![0u8; 2 * MIB as usize]).expect("write");
    std::fs::write(dir.join("ro/readme.md"), "read me").expect("write");
    "[grants.probe]\nfs = [{ guest = \"/data\", host = \"data\", mode = \"rw\", quota_mb = 1, \
     quota_files = 5 }, { guest = \"/ro\", host = \"ro\", mode = \"ro\" }]\n"
        .to_owned()
}

/// Runs the probe's `disk` op; returns (done, error). (Also used by `grant_crossing`.)
pub(super) async fn disk(h: &guild_host::Host, op: Value) -> (u64, Option<String>) {
    let mut op = op;
    op["op"] = json!("disk");
    let p: Probe = probe(h, op).await;
    assert_eq!(
        p.result.status,
        TaskStatus::Succeeded,
        "the task itself must not fail: {:?}",
        p.result.error
    );
    assert!(p.ok, "the op was malformed: {p:?}");
    (
        p.value["done"].as_u64().expect("done"),
        p.value["error"].as_str().map(str::to_owned),
    )
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_under_the_quota_land_on_disk_by_every_path() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, &grants(dir.path())).await;
    for (how, file) in [
        ("write", "a"),
        ("stream", "b"),
        ("append", "c"),
        ("std", "d"),
    ] {
        let (done, error) = disk(
            &h,
            json!({"how": how, "path": format!("/data/{file}"), "bytes": 100_000}),
        )
        .await;
        assert_eq!((done, error.as_deref()), (100_000, None), "{how}");
        assert_eq!(size(&dir.path().join("data").join(file)), 100_000, "{how}");
    }
    let (done, error) = disk(
        &h,
        json!({"how": "set_size", "path": "/data/a", "size": 200_000}),
    )
    .await;
    assert_eq!((done, error.as_deref()), (1, None));
    assert_eq!(size(&dir.path().join("data/a")), 200_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bytes_past_the_quota_are_insufficient_space_by_every_path() {
    // Rust's std writes files through wasi-libc, which reports every failed stream write as
    // EIO without asking `filesystem-error-code` (the stream error itself says
    // `insufficient-space`, as the `stream` row shows); so std sees "I/O error" there.
    for (how, wanted) in [
        ("write", "insufficient-space"),
        ("stream", "insufficient-space"),
        ("std", "Uncategorized"),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let h = host(dir.path(), PROBE, &grants(dir.path())).await;
        let (done, error) =
            disk(&h, json!({"how": how, "path": "/data/f", "bytes": 2 * MIB})).await;
        assert_eq!(error.as_deref(), Some(wanted), "{how}: done {done}");
        assert!(done <= MIB, "{how}: {done} bytes went through");
        let on_disk = size(&dir.path().join("data/f"));
        assert!(on_disk <= MIB, "{how}: {on_disk} bytes on disk");
        // The host keeps serving, this plugin included.
        let after = probe(&h, json!({"op": "read", "path": "/ro/readme.md"})).await;
        assert!(after.ok, "{how}: {after:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn appending_past_the_quota_is_insufficient_space() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, &grants(dir.path())).await;
    let (done, error) = disk(
        &h,
        json!({"how": "write", "path": "/data/log", "bytes": 900_000}),
    )
    .await;
    assert_eq!((done, error.as_deref()), (900_000, None));
    let (done, error) = disk(
        &h,
        json!({"how": "append", "path": "/data/log", "bytes": 300_000}),
    )
    .await;
    assert_eq!(
        error.as_deref(),
        Some("insufficient-space"),
        "appended {done}"
    );
    assert!(size(&dir.path().join("data/log")) <= MIB);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_set_size_or_a_write_far_past_the_end_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, &grants(dir.path())).await;
    let (_, error) = disk(
        &h,
        json!({"how": "set_size", "path": "/data/sparse", "size": 1u64 << 40}),
    )
    .await;
    assert_eq!(error.as_deref(), Some("insufficient-space"));
    // One byte at 10 GiB would make a sparse file of 10 GiB.
    let (done, error) = disk(
        &h,
        json!({"how": "write", "path": "/data/sparse", "bytes": 1, "offset": 10u64 << 30}),
    )
    .await;
    assert_eq!((done, error.as_deref()), (0, Some("insufficient-space")));
    assert_eq!(size(&dir.path().join("data/sparse")), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_and_folders_past_the_count_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, &grants(dir.path())).await;
    let (done, error) = disk(&h, json!({"how": "files", "path": "/data", "count": 8})).await;
    assert_eq!((done, error.as_deref()), (5, Some("StorageFull")));
    assert_eq!(
        std::fs::read_dir(dir.path().join("data"))
            .expect("ls")
            .count(),
        5
    );
    std::fs::remove_file(dir.path().join("data/f0")).expect("rm");
    let h = host(dir.path(), PROBE, &grants(dir.path())).await;
    let (done, error) = disk(&h, json!({"how": "dirs", "path": "/data", "count": 3})).await;
    assert_eq!(
        (done, error.as_deref()),
        (1, Some("StorageFull")),
        "one entry was left"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_is_shared_by_every_task_of_the_grant_and_freed_by_removal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, &grants(dir.path())).await;
    let first = disk(
        &h,
        json!({"how": "write", "path": "/data/one", "bytes": 600_000}),
    );
    let second = disk(
        &h,
        json!({"how": "stream", "path": "/data/two", "bytes": 600_000}),
    );
    let (first, second) = tokio::join!(first, second);
    // Each alone fits the 1 MiB quota, both together do not: at least one is refused (both
    // may be, when their writes interleave and fill the quota between them), and together
    // they never hold more than the quota. A task that was not refused wrote everything.
    let refused = [&first, &second]
        .iter()
        .filter(|(_, e)| e.as_deref() == Some("insufficient-space"))
        .count();
    assert!(
        refused >= 1,
        "the two tasks share one quota: {first:?} {second:?}"
    );
    assert!(
        first.0 + second.0 <= 1 << 20,
        "never more than the quota: {first:?} {second:?}"
    );
    for (done, error) in [&first, &second] {
        if error.is_none() {
            assert_eq!(*done, 600_000, "{first:?} {second:?}");
        }
    }
    // The refused task left what fit before the refusal; removing both frees everything.
    for file in ["one", "two"] {
        let (_, error) = disk(
            &h,
            json!({"how": "remove", "path": format!("/data/{file}")}),
        )
        .await;
        assert_eq!(error, None, "{file}");
    }
    let (done, error) = disk(
        &h,
        json!({"how": "write", "path": "/data/three", "bytes": 900_000}),
    )
    .await;
    assert_eq!(
        (done, error.as_deref()),
        (900_000, None),
        "removal gave the space back"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_grants_are_unaffected_by_quotas() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, &grants(dir.path())).await;
    // 2 MiB under /ro, more than any quota here: still listed and read.
    let p = probe(&h, json!({"op": "list", "path": "/ro"})).await;
    assert_eq!(p.value, json!(["big", "readme.md"]), "{p:?}");
    let p = probe(&h, json!({"op": "read", "path": "/ro/readme.md"})).await;
    assert_eq!(p.value, json!("read me"), "{p:?}");
    // Writing there is refused as before: read-only, not out of space.
    let (_, error) = disk(&h, json!({"how": "std", "path": "/ro/new", "bytes": 10})).await;
    assert!(
        error.as_deref().is_some_and(|e| e != "StorageFull"),
        "{error:?}"
    );
    assert!(!dir.path().join("ro/new").exists());
}

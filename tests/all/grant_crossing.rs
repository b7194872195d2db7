//! No name crosses between two folder grants of one plugin: a rename or hard link from one
//! preopen into another fails (`cross-device`, never a copy) and leaves both folders as they
//! were, whether the grants are read-write with their own quotas or one is read-only; inside
//! one grant the same calls work and links count against its quota. A symlink made in one
//! grant that leads into another (relative or absolute) lets no write through, so no write
//! lands outside the quota of the grant it was made in (a relative one is made but never
//! followed out of its grant; an absolute one is not made).

use std::collections::BTreeMap;
use std::path::Path;

use guild_tests::host;

use super::disk_quota::disk;
use serde_json::json;

const PROBE: &[&str] = &["testing/probe", "testing/echo"];
const MIB: u64 = 1024 * 1024;

/// `/data` read-write (1 MiB, `files` entries) holding `f`, `/other` read-write (4 MiB)
/// holding `g`, `/ro` read-only holding `readme.md`; all three side by side in `dir`.
fn grants(dir: &Path, files: u32) -> String {
    for (folder, file, text) in [
        ("data", "f", "data's file"),
        ("other", "g", "other's file"),
        ("ro", "readme.md", "read me"),
    ] {
        std::fs::create_dir_all(dir.join(folder)).expect("mkdir");
        std::fs::write(dir.join(folder).join(file), text).expect("write");
    }
    format!(
        "[grants.probe]\nfs = [{{ guest = \"/data\", host = \"data\", mode = \"rw\", quota_mb = 1, \
         quota_files = {files} }}, {{ guest = \"/other\", host = \"other\", mode = \"rw\", \
         quota_mb = 4 }}, {{ guest = \"/ro\", host = \"ro\", mode = \"ro\" }}]\n"
    )
}

/// Every entry under the three folders (symlinks by their text), with file contents.
fn snapshot(dir: &Path) -> BTreeMap<String, String> {
    let mut seen = BTreeMap::new();
    for folder in ["data", "other", "ro"] {
        for entry in std::fs::read_dir(dir.join(folder)).expect("ls") {
            let entry = entry.expect("entry");
            let path = entry.path();
            let meta = std::fs::symlink_metadata(&path).expect("lstat");
            let value = if meta.is_symlink() {
                format!(
                    "-> {}",
                    std::fs::read_link(&path).expect("readlink").display()
                )
            } else {
                String::from_utf8_lossy(&std::fs::read(&path).expect("read")).into_owned()
            };
            seen.insert(
                format!("{folder}/{}", entry.file_name().to_string_lossy()),
                value,
            );
        }
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renames_and_links_between_two_grants_fail_and_change_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, &grants(dir.path(), 4)).await;
    let before = snapshot(dir.path());
    for how in ["rename", "link"] {
        for (from, to) in [
            // Out of a quota'd grant into another one, and back in.
            ("/data/f", "/other/f"),
            ("/other/g", "/data/g"),
            // Out of a read-only grant (a link would let /data's writes reach /ro's file).
            ("/ro/readme.md", "/data/readme.md"),
            // Into a read-only grant.
            ("/data/f", "/ro/f"),
        ] {
            let (done, error) = disk(&h, json!({"how": how, "path": from, "to": to})).await;
            assert_eq!(
                (done, error.as_deref()),
                (0, Some("cross-device")),
                "{how} {from} -> {to}"
            );
            assert_eq!(snapshot(dir.path()), before, "{how} {from} -> {to}");
        }
    }
    // The refusals took nothing from either quota: /data still takes its full megabyte
    // less what it held.
    let room = MIB - "data's file".len() as u64;
    let (done, error) = disk(
        &h,
        json!({"how": "write", "path": "/data/fill", "bytes": room}),
    )
    .await;
    assert_eq!((done, error.as_deref()), (room, None));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renames_and_links_inside_one_grant_work_and_links_are_counted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, &grants(dir.path(), 4)).await;
    let (_, error) = disk(
        &h,
        json!({"how": "rename", "path": "/data/f", "to": "/data/moved"}),
    )
    .await;
    assert_eq!(error, None);
    let (_, error) = disk(
        &h,
        json!({"how": "rename", "path": "/other/g", "to": "/other/moved"}),
    )
    .await;
    assert_eq!(error, None);
    assert!(!dir.path().join("data/f").exists());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("data/moved")).expect("read"),
        "data's file"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("other/moved")).expect("read"),
        "other's file"
    );
    // /data holds 1 entry of its 4: three more names fit, hard links included, the fourth not.
    for (name, wanted) in [
        ("a", None),
        ("b", None),
        ("c", None),
        ("d", Some("insufficient-space")),
    ] {
        let (_, error) = disk(
            &h,
            json!({"how": "link", "path": "/data/moved", "to": format!("/data/{name}")}),
        )
        .await;
        assert_eq!(error.as_deref(), wanted, "link {name}");
    }
    assert!(dir.path().join("data/c").exists());
    assert!(!dir.path().join("data/d").exists());
    // Read-only stays read-only inside itself too.
    let (_, error) = disk(
        &h,
        json!({"how": "rename", "path": "/ro/readme.md", "to": "/ro/moved"}),
    )
    .await;
    assert_eq!(error.as_deref(), Some("not-permitted"));
    assert!(dir.path().join("ro/readme.md").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_symlink_into_another_grant_lets_no_write_escape() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), PROBE, &grants(dir.path(), 10)).await;
    // On the host these texts lead from data/ to other/g and ro/readme.md (the folders are
    // siblings): the links are made, but in the guest they leave /data and are never followed.
    for (link, text) in [
        ("/data/up-other", "../other/g"),
        ("/data/up-ro", "../ro/readme.md"),
    ] {
        let (_, error) = disk(&h, json!({"how": "symlink", "path": link, "to": text})).await;
        assert_eq!(error, None, "{link} -> {text}");
        let before = snapshot(dir.path());
        for bytes in [10, 2 * MIB] {
            let (_, error) = disk(&h, json!({"how": "std", "path": link, "bytes": bytes})).await;
            assert_eq!(
                error.as_deref(),
                Some("PermissionDenied"),
                "{bytes} bytes through {link} -> {text}"
            );
            assert_eq!(snapshot(dir.path()), before, "{link} -> {text}");
        }
    }
    // Absolute texts (the other grants' guest paths) are refused when the link is made.
    for (link, text) in [
        ("/data/abs-other", "/other/g"),
        ("/data/abs-ro", "/ro/readme.md"),
    ] {
        let (_, error) = disk(&h, json!({"how": "symlink", "path": link, "to": text})).await;
        assert_eq!(error.as_deref(), Some("not-permitted"), "{link} -> {text}");
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("other/g")).expect("read"),
        "other's file"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("ro/readme.md")).expect("read"),
        "read me"
    );
    // Allowed: a symlink inside the grant is followed, and what goes through it is counted
    // against the grant's quota like any other write.
    let (_, error) = disk(
        &h,
        json!({"how": "symlink", "path": "/data/inner", "to": "f"}),
    )
    .await;
    assert_eq!(error, None);
    let (done, error) = disk(
        &h,
        json!({"how": "std", "path": "/data/inner", "bytes": 100}),
    )
    .await;
    assert_eq!((done, error), (100, None));
    assert_eq!(
        std::fs::metadata(dir.path().join("data/f"))
            .expect("stat")
            .len(),
        100
    );
    let (_, error) = disk(
        &h,
        json!({"how": "std", "path": "/data/inner", "bytes": 2 * MIB}),
    )
    .await;
    assert_eq!(error.as_deref(), Some("Uncategorized"), "past the quota");
    assert!(
        std::fs::metadata(dir.path().join("data/f"))
            .expect("stat")
            .len()
            <= MIB
    );
}

//! A reload keeps a plugin whose component, `plugin.toml`, `prompt.md` and effective grant are
//! unchanged: it shares the compiled, pre-instantiated component of the version serving
//! (`ReloadReport::kept`), and nothing of it is compiled, linked or run again. Each of those
//! inputs changed, alone, loads the plugin again; so does a granted folder that is gone, which
//! refuses the new load while the old version keeps serving.

use std::path::Path;

use guild_host::{Config, Host};
use guild_tests::wasm_bytes::{leb128, section};
use serde_json::json;

const MANIFEST: &str = "[plugin]\nname = \"probe\"\nversion = \"0.1.0\"\nkind = \"specialist\"\n\
     component = \"probe.wasm\"\ndescription = \"Probe copy.\"\n\n[capabilities]\n\
     fs = [{ guest = \"/data\", mode = \"rw\" }]\n";

/// The probe's component with a custom section named `tag` appended: other bytes, same code.
fn tagged_probe(tag: &str) -> Vec<u8> {
    let mut bytes = std::fs::read(guild_tests::plugin_dir("testing/probe").join("probe.wasm"))
        .expect("component");
    let mut contents = leb128(tag.len());
    contents.extend_from_slice(tag.as_bytes());
    section(&mut bytes, 0, &contents);
    bytes
}

/// The probe copy's folder `dir/probe` with its component tagged `tag`, and its granted folder
/// `dir/data`; the component's path.
fn probe_folder(dir: &Path, tag: &str) -> std::path::PathBuf {
    let folder = dir.join("probe");
    std::fs::create_dir_all(&folder).expect("plugin folder");
    std::fs::create_dir_all(dir.join("data")).expect("granted folder");
    std::fs::write(folder.join("plugin.toml"), MANIFEST).expect("manifest");
    let component = folder.join("probe.wasm");
    std::fs::write(&component, tagged_probe(tag)).expect("component");
    component
}

/// `guild.toml` loading the probe copy in `dir/probe`, granting `/data` in `mode`.
fn config(dir: &Path, mode: &str) -> Config {
    let text = format!(
        "[host]\nplugins = [\"probe\"]\ndata_dir = \".guild\"\n\n[grants.probe]\n\
         fs = [{{ guest = \"/data\", host = \"data\", mode = \"{mode}\" }}]\n"
    );
    Config::parse(&text, &dir.join("guild.toml"), dir).expect("config")
}

/// Reloads with `config` (the one in force when `None`) and says whether the probe was kept,
/// failing on any error.
async fn kept(h: &Host, config: Option<Config>) -> bool {
    let report = h.reload_with(config).await;
    assert!(report.errors.is_empty(), "{report:?}");
    let task = h
        .task("probe", &json!({"op": "brief"}).to_string())
        .await
        .expect("the probe serves after the reload");
    assert_eq!(task.status, guild_host::types::TaskStatus::Succeeded);
    report.kept.iter().any(|k| k == "probe@0.1.0")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unchanged_plugin_is_kept_and_each_change_loads_it_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    probe_folder(dir.path(), "first");
    let (folder, data) = (dir.path().join("probe"), dir.path().join("data"));
    let h = Host::with_engine(config(dir.path(), "rw"), guild_tests::engine())
        .await
        .expect("host starts");
    assert!(h.load_errors().is_empty(), "{:?}", h.load_errors());

    assert!(kept(&h, None).await, "nothing changed");
    std::fs::write(folder.join("probe.wasm"), tagged_probe("first")).expect("same bytes");
    assert!(kept(&h, None).await, "the same bytes written again");

    // Each change loads the probe again; the reload after it, with nothing changed, keeps it.
    std::fs::write(folder.join("probe.wasm"), tagged_probe("second")).expect("component");
    assert!(!kept(&h, None).await, "other component bytes");
    assert!(kept(&h, None).await);

    std::fs::write(folder.join("prompt.md"), "Be brief.").expect("prompt");
    assert!(!kept(&h, None).await, "a prompt.md written");
    assert!(kept(&h, None).await);

    let described = MANIFEST.replace("Probe copy.", "Probe copy, described again.");
    std::fs::write(folder.join("plugin.toml"), described).expect("manifest");
    assert!(!kept(&h, None).await, "another plugin.toml");
    assert!(kept(&h, None).await);

    assert!(
        !kept(&h, Some(config(dir.path(), "ro"))).await,
        "a narrower grant"
    );
    assert!(kept(&h, None).await);

    // The granted folder gone: the kept version is refused like a new one, the old one serves.
    std::fs::remove_dir(&data).expect("remove the granted folder");
    let report = h.reload_with(None).await;
    assert!(report.kept.is_empty(), "{report:?}");
    assert_eq!(report.errors.len(), 1, "{report:?}");
    assert!(
        report.errors[0].contains("/data")
            && report.errors[0].contains("probe@0.1.0 keeps serving"),
        "{}",
        report.errors[0]
    );
}

/// A component file that had settled when the host read it is not hashed again while its
/// stamp (inode, length, modification and change times) holds; a rewrite of the same length
/// with its modification time put back changes the change time, and loads again with the new
/// bytes' digest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_settled_component_rewritten_with_its_length_and_time_kept_loads_again() {
    use sha2::{Digest as _, Sha256};

    let dir = tempfile::tempdir().expect("tempdir");
    let component = probe_folder(dir.path(), "aaaaa");
    let modified = std::fs::metadata(&component)
        .and_then(|m| m.modified())
        .expect("modification time");
    // Older than the settle margin (3 s) when the host reads it, so the read notes a stamp.
    tokio::time::sleep(std::time::Duration::from_millis(3_300)).await;
    let h = Host::with_engine(config(dir.path(), "rw"), guild_tests::engine())
        .await
        .expect("host starts");
    assert!(h.load_errors().is_empty(), "{:?}", h.load_errors());
    assert!(kept(&h, None).await, "nothing changed");

    let second = tagged_probe("bbbbb");
    std::fs::write(&component, &second).expect("same length, other bytes");
    let file = std::fs::File::options()
        .write(true)
        .open(&component)
        .expect("open");
    file.set_modified(modified)
        .expect("modification time put back");
    drop(file);
    // Settled again before the reload, so that the reload notes a stamp and compares it with
    // the serving one (a file changed just before a read is always hashed).
    tokio::time::sleep(std::time::Duration::from_millis(3_300)).await;
    let report = h.reload_with(None).await;
    assert!(report.errors.is_empty(), "{report:?}");
    let digest = hex::encode(Sha256::digest(&second));
    assert!(
        report
            .loaded
            .iter()
            .any(|l| l.starts_with("probe@0.1.0") && l.contains(&digest)),
        "the rewrite loads with its own digest: {report:?}"
    );
    assert!(kept(&h, None).await, "and is kept after that");
}

//! Skill sources are requested by the manifest and granted by the operator: a granted
//! `loader:` source is visible, the same request without a grant is not (and the loader never
//! runs for it), and an empty grant denies every source, the plugin's own `skills/` included.

use std::path::Path;

use guild_host::capability::RowStatus;
use guild_host::skills::Catalog;
use guild_tests::{host_with_config, plugin_dir, probe};
use serde_json::json;

/// A private copy of the probe specialist whose manifest requests `loader:team-skills` and
/// its own `skills/`, beside the team-skills loader serving the example folder.
fn setup(dir: &Path) -> String {
    let src = plugin_dir("testing/probe");
    let plugin = dir.join("probe");
    std::fs::create_dir_all(&plugin).expect("mkdir");
    std::fs::copy(src.join("probe.wasm"), plugin.join("probe.wasm")).expect("copy wasm");
    let manifest = std::fs::read_to_string(src.join("plugin.toml")).expect("read manifest");
    assert!(manifest.contains("skills = [\"skills/\"]"), "{manifest}");
    let manifest = manifest.replace(
        "skills = [\"skills/\"]",
        "skills = [\"skills/\", \"loader:team-skills\"]",
    );
    std::fs::write(plugin.join("plugin.toml"), manifest).expect("write manifest");
    copy_dir(&src.join("skills"), &plugin.join("skills"));
    copy_dir(
        &guild_tests::repo_root().join("plugins/team-skills/example"),
        &dir.join("team"),
    );
    plugin.display().to_string()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir").flatten() {
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).expect("copy");
        }
    }
}

/// A host with the private probe, the team-skills loader and `probe_grant` as the body of
/// `[grants.probe]`; asserts it loaded cleanly.
async fn start(dir: &Path, probe_grant: &str) -> guild_host::Host {
    let plugin = setup(dir);
    let config = format!(
        "[grants.team-skills]\nfs = [{{ guest = \"/skills\", host = \"team\", mode = \"ro\" }}]\n\n\
         [grants.probe]\n{probe_grant}\n"
    );
    let h = host_with_config(
        dir,
        &[plugin.as_str(), "team-skills", "testing/echo"],
        &config,
    )
    .await;
    assert!(h.load_errors().is_empty(), "{:?}", h.load_errors());
    h
}

async fn catalog(h: &guild_host::Host) -> Catalog {
    h.skills().catalog(Some("probe")).await.expect("catalog")
}

fn skill_status(h: &guild_host::Host, target: &str) -> Option<RowStatus> {
    h.plugin("probe")
        .expect("probe loaded")
        .capabilities
        .iter()
        .find(|r| r.capability == "skills" && r.target == target)
        .map(|r| r.status.clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn granted_loader_source_is_visible() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = start(dir.path(), "skills = [\"loader:team-skills\", \"skills/\"]").await;
    let c = catalog(&h).await;
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    let names = c.names();
    assert!(names.contains(&"release-checklist".to_owned()), "{names:?}");
    assert_eq!(
        c.get("release-checklist").expect("entry").source,
        "loader:team-skills"
    );
    assert!(names.contains(&"echo-guide".to_owned()), "{names:?}");
    assert!(matches!(
        skill_status(&h, "loader:team-skills"),
        Some(RowStatus::Granted(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ungranted_loader_source_is_invisible_and_the_loader_never_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = start(dir.path(), "skills = [\"skills/\"]").await;
    let c = catalog(&h).await;
    // No problem either: the loader was never asked (an instantiation would list its skills
    // or report its failure).
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    assert!(
        c.names()
            .iter()
            .all(|n| c.get(n).expect("entry").source != "loader:team-skills"),
        "{:?}",
        c.names()
    );
    assert!(!c.names().contains(&"release-checklist".to_owned()));
    assert!(c.names().contains(&"echo-guide".to_owned()));
    assert_eq!(
        skill_status(&h, "loader:team-skills"),
        Some(RowStatus::Denied("not granted".into()))
    );
    // The specialist's own task sees the same set.
    let p = probe(&h, json!({"op": "skill_load", "name": "release-checklist"})).await;
    assert!(!p.ok, "an ungranted loader's skill was loaded: {p:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_skill_grant_denies_every_source() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = start(dir.path(), "skills = []").await;
    let c = catalog(&h).await;
    assert!(c.is_empty(), "{:?}", c.names());
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    for target in ["skills/", "loader:team-skills"] {
        assert_eq!(
            skill_status(&h, target),
            Some(RowStatus::Denied("not granted".into())),
            "{target}"
        );
    }
    let p = probe(&h, json!({"op": "skills"})).await;
    assert!(p.ok, "{p:?}");
    assert_eq!(p.value, json!([]), "the task's catalog is empty too");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_grant_the_plugin_did_not_request_is_unused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = start(dir.path(), "skills = [\"skills/\", \"loader:other\"]").await;
    assert_eq!(skill_status(&h, "loader:other"), Some(RowStatus::Unused));
    assert!(matches!(
        skill_status(&h, "skills/"),
        Some(RowStatus::Granted(_))
    ));
}

/// A private probe whose manifest requests (and whose grant gives) `loader:echo`: echo is a
/// connector, so the probe is refused at load, whichever of the two folders is listed first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loader_source_naming_a_connector_is_refused_at_load_in_either_order() {
    for probe_first in [true, false] {
        let dir = tempfile::tempdir().expect("tempdir");
        let plugin = setup(dir.path());
        let manifest = Path::new(&plugin).join("plugin.toml");
        let text = std::fs::read_to_string(&manifest).expect("read manifest");
        std::fs::write(
            &manifest,
            text.replace("\"loader:team-skills\"", "\"loader:echo\""),
        )
        .expect("write manifest");
        let plugins = match probe_first {
            true => [plugin.as_str(), "testing/echo"],
            false => ["testing/echo", plugin.as_str()],
        };
        let h = host_with_config(
            dir.path(),
            &plugins,
            "[grants.probe]\nskills = [\"skills/\", \"loader:echo\"]\n",
        )
        .await;
        let errors = h.load_errors();
        assert_eq!(errors.len(), 1, "probe first: {probe_first}: {errors:?}");
        for part in [
            "plugin 'probe'",
            "`capabilities.skills`",
            "plugin.toml",
            "\"loader:echo\"",
            "which is a connector, not a skill-loader",
        ] {
            assert!(
                errors[0].contains(part),
                "missing {part:?} in {}",
                errors[0]
            );
        }
        assert!(h.plugin("probe").is_none(), "the probe was loaded anyway");
        assert!(
            h.plugin("echo").is_some(),
            "the connector itself still loads"
        );
    }
}

/// The same manifest without the grant: the source is not in force, so nothing is refused
/// (the allowed side of the pair above; a granted real loader is `granted_loader_source_is_visible`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ungranted_loader_source_naming_a_connector_is_not_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plugin = setup(dir.path());
    let manifest = Path::new(&plugin).join("plugin.toml");
    let text = std::fs::read_to_string(&manifest).expect("read manifest");
    std::fs::write(
        &manifest,
        text.replace("\"loader:team-skills\"", "\"loader:echo\""),
    )
    .expect("write manifest");
    let h = host_with_config(
        dir.path(),
        &[plugin.as_str(), "testing/echo"],
        "[grants.probe]\nskills = [\"skills/\"]\n",
    )
    .await;
    assert!(h.load_errors().is_empty(), "{:?}", h.load_errors());
    assert!(h.plugin("probe").is_some());
}

//! Escapes an operator's config could open, each refused at plugin load: a grant that reaches
//! host state (the data folder, a plugin folder, the plugins folder, a secret's file), a grant
//! path that only resolves to something forbidden, a component that is a symlink, and a secret
//! whose manifest asks for hosts the operator did not name.

use std::path::{Path, PathBuf};

use guild_host::{Config, Host};
use guild_tests::{engine, host, host_with_config, plugin_dir, probe};
use serde_json::json;

use super::server::{self, TOKEN};

const PROBE: &[&str] = &["testing/probe", "testing/echo"];

/// The one load error of a host whose probe grant is `grant` (TOML of `[grants.probe]`'s body).
async fn probe_load_error(dir: &Path, grant: &str) -> String {
    let h = host_with_config(dir, PROBE, &format!("[grants.probe]\n{grant}\n")).await;
    let errors = h.load_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(h.plugin("probe").is_none(), "probe loaded despite {grant}");
    assert!(
        h.plugin("echo").is_some(),
        "the other plugin must still load"
    );
    errors[0].clone()
}

fn rw(host: &str) -> String {
    format!("fs = [{{ guest = \"/data\", host = {host:?}, mode = \"rw\" }}]")
}

fn assert_names(msg: &str, parts: &[&str]) {
    for part in parts {
        assert!(msg.contains(part), "error lacks {part:?}: {msg}");
    }
}

fn canonical(p: &Path) -> String {
    p.canonicalize().expect("exists").display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grant_of_the_data_dir_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join(".guild")).expect("mkdir");
    let msg = probe_load_error(dir.path(), &rw(".guild")).await;
    let data = canonical(&dir.path().join(".guild"));
    assert_names(
        &msg,
        &[
            "[grants.probe] fs[0].host",
            "is the host's data folder",
            &data,
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grant_of_the_folder_holding_the_data_dir_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let msg = probe_load_error(dir.path(), &rw(".")).await;
    let data = canonical(&dir.path().join(".guild"));
    assert_names(
        &msg,
        &[
            "[grants.probe] fs[0].host",
            &canonical(dir.path()),
            "contains the host's data folder",
            &data,
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grant_inside_the_data_dir_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join(".guild/cache")).expect("mkdir");
    let msg = probe_load_error(dir.path(), &rw(".guild/cache")).await;
    assert_names(&msg, &["lies inside the host's data folder"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grant_inside_own_plugin_folder_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let skills = plugin_dir("testing/probe").join("skills");
    let msg = probe_load_error(dir.path(), &rw(&skills.display().to_string())).await;
    assert_names(
        &msg,
        &[
            "[grants.probe] fs[0].host",
            &canonical(&skills),
            "lies inside a plugin folder",
            &canonical(&plugin_dir("testing/probe")),
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grant_of_another_plugins_folder_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let echo = plugin_dir("testing/echo");
    // The second grant is the bad one: the key names its index.
    let grant = format!(
        "fs = [{{ guest = \"/ro\", host = \"ro\", mode = \"ro\" }}, {{ guest = \"/data\", host = {:?}, mode = \"rw\" }}]",
        echo.display().to_string()
    );
    std::fs::create_dir(dir.path().join("ro")).expect("mkdir");
    let msg = probe_load_error(dir.path(), &grant).await;
    assert_names(
        &msg,
        &[
            "[grants.probe] fs[1].host",
            "is a plugin folder",
            &canonical(&echo),
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grant_of_the_plugins_dir_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plugins = dir.path().join("plugins");
    copy_plugin(&plugin_dir("testing/echo"), &plugins.join("echo"));
    let text = format!(
        "[host]\nplugins_dir = \"plugins\"\nplugins = [{:?}]\n\n[grants.probe]\n{}\n",
        plugin_dir("testing/probe").display().to_string(),
        rw("plugins")
    );
    let config = Config::parse(&text, &dir.path().join("guild.toml"), dir.path()).expect("parses");
    let h = Host::with_engine(config, engine()).await.expect("starts");
    let errors = h.load_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    // The plugins folder contains echo's folder; either way both paths are named.
    assert_names(
        &errors[0],
        &[
            "[grants.probe] fs[0].host",
            &canonical(&plugins),
            "contains",
        ],
    );
    assert!(h.plugin("echo").is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grant_containing_a_secret_file_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("work")).expect("mkdir");
    std::fs::write(dir.path().join("work/token"), "t0ken").expect("token");
    let grant = format!(
        "{}\n[grants.probe.secrets.API_TOKEN]\nfile = \"work/token\"\nhosts = [\"http://127.0.0.1:*\"]",
        rw("work")
    );
    let msg = probe_load_error(dir.path(), &grant).await;
    assert_names(
        &msg,
        &["contains the file of secret API_TOKEN", "work/token"],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sibling_of_the_data_dir_allowed() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("work")).expect("mkdir");
    let h = host(
        dir.path(),
        PROBE,
        &format!("[grants.probe]\n{}", rw("work")),
    )
    .await;
    let p = probe(
        &h,
        json!({"op": "write", "path": "/data/note.md", "content": "ok"}),
    )
    .await;
    assert!(p.ok, "{p:?}");
    assert!(dir.path().join("work/note.md").is_file());
    assert!(
        dir.path().join(".guild/receipts.db").is_file(),
        "the data folder is the sibling"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grant_resolving_to_root_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    for written in ["/tmp/..", "/tmp/../.", "/tmp/../tmp/.."] {
        let msg = probe_load_error(dir.path(), &rw(written)).await;
        assert_names(
            &msg,
            &["[grants.probe] fs[0].host", "root folder", "never '/'"],
        );
    }
    // Relative: enough `..` from the config folder reaches `/` too.
    let depth = dir
        .path()
        .canonicalize()
        .expect("tempdir")
        .components()
        .count();
    let up = vec![".."; depth].join("/");
    let msg = probe_load_error(dir.path(), &rw(&up)).await;
    assert_names(&msg, &["root folder", "resolved from"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grant_through_a_symlink_judged_by_its_target() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join(".guild")).expect("mkdir");
    std::os::unix::fs::symlink(dir.path().join(".guild"), dir.path().join("innocent"))
        .expect("symlink");
    let msg = probe_load_error(dir.path(), &rw("innocent")).await;
    assert_names(
        &msg,
        &["is the host's data folder", "resolved from", "innocent"],
    );
    // `..` through a harmless-looking folder, too.
    std::fs::create_dir(dir.path().join("work")).expect("mkdir");
    let msg = probe_load_error(dir.path(), &rw("work/../.guild")).await;
    assert_names(&msg, &["is the host's data folder"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grant_of_a_missing_folder_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let msg = probe_load_error(dir.path(), &rw("not-there")).await;
    assert_names(
        &msg,
        &["[grants.probe] fs[0].host", "not-there", "must exist"],
    );
}

/// Copies a built plugin's manifest and component into `to`.
fn copy_plugin(from: &Path, to: &Path) -> PathBuf {
    std::fs::create_dir_all(to).expect("mkdir");
    std::fs::copy(from.join("plugin.toml"), to.join("plugin.toml")).expect("copy manifest");
    let name = from
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    let wasm = to.join(format!("{name}.wasm"));
    std::fs::copy(from.join(format!("{name}.wasm")), &wasm).expect("copy component");
    wasm
}

async fn load_errors_of(dir: &Path, plugin: &Path) -> Vec<String> {
    let text = format!("[host]\nplugins = [{:?}]\n", plugin.display().to_string());
    let config = Config::parse(&text, &dir.join("guild.toml"), dir).expect("parses");
    Host::with_engine(config, engine())
        .await
        .expect("starts")
        .load_errors()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn symlinked_component_refused_regular_copy_loads() {
    let dir = tempfile::tempdir().expect("tempdir");
    let echo = plugin_dir("testing/echo");
    let plugin = dir.path().join("echo");
    let wasm = copy_plugin(&echo, &plugin);
    assert!(load_errors_of(dir.path(), &plugin).await.is_empty());

    // The same bytes behind a symlink (here to a file outside the plugin folder).
    std::fs::remove_file(&wasm).expect("rm");
    std::os::unix::fs::symlink(echo.join("echo.wasm"), &wasm).expect("symlink");
    let errors = load_errors_of(dir.path(), &plugin).await;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_names(&errors[0], &["plugin 'echo'", "echo.wasm", "symbolic link"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn component_behind_a_symlinked_folder_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let echo = plugin_dir("testing/echo");
    let plugin = dir.path().join("echo");
    copy_plugin(&echo, &plugin);
    std::fs::remove_file(plugin.join("echo.wasm")).expect("rm");
    std::fs::create_dir(dir.path().join("elsewhere")).expect("mkdir");
    std::fs::copy(
        echo.join("echo.wasm"),
        dir.path().join("elsewhere/echo.wasm"),
    )
    .expect("copy");
    std::os::unix::fs::symlink(dir.path().join("elsewhere"), plugin.join("bin")).expect("symlink");
    let manifest = std::fs::read_to_string(plugin.join("plugin.toml")).expect("read");
    std::fs::write(
        plugin.join("plugin.toml"),
        manifest.replace("component = \"echo.wasm\"", "component = \"bin/echo.wasm\""),
    )
    .expect("write");
    let errors = load_errors_of(dir.path(), &plugin).await;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_names(&errors[0], &["plugin 'echo'", "outside the plugin folder"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secret_requested_for_hosts_outside_the_grant_refused() {
    let addr = server::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    // The probe's manifest asks for API_TOKEN at http://127.0.0.1:* (any port); the operator
    // names one port only, so the manifest's wider list is refused, naming both.
    let grant = format!(
        "http = [\"http://127.0.0.1:{p}\"]\n[grants.probe.secrets.API_TOKEN]\nvalue = \"{TOKEN}\"\nhosts = [\"http://127.0.0.1:{p}\"]",
        p = addr.port()
    );
    let msg = probe_load_error(dir.path(), &grant).await;
    assert_names(
        &msg,
        &[
            "API_TOKEN",
            "http://127.0.0.1:*",
            "[grants.probe.secrets.API_TOKEN] hosts",
            &format!("http://127.0.0.1:{}", addr.port()),
        ],
    );
    assert!(!msg.contains(TOKEN), "the error shows the secret: {msg}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secret_goes_only_to_the_granted_hosts() {
    let addr = server::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let grants = format!(
        "[grants.probe]\nhttp = [\"http://127.0.0.1:{p}\", \"http://localhost:{p}\"]\n\
         [grants.probe.secrets.API_TOKEN]\nvalue = \"{TOKEN}\"\nhosts = [\"http://127.0.0.1:*\"]",
        p = addr.port()
    );
    let h = host(dir.path(), PROBE, &grants).await;
    let auth = |p: &guild_tests::Probe| -> serde_json::Value {
        serde_json::from_str(p.value["body"].as_str().unwrap_or("")).unwrap_or_default()
    };
    let p = probe(
        &h,
        json!({"op": "http", "method": "GET", "url": format!("http://{addr}/auth")}),
    )
    .await;
    assert_eq!(auth(&p)["authorized"], json!(true), "{p:?}");
    let p = probe(
        &h,
        json!({"op": "http", "method": "GET", "url": format!("http://localhost:{}/auth", addr.port())}),
    )
    .await;
    assert!(p.ok, "{p:?}");
    assert_eq!(auth(&p)["had_authorization"], json!(false), "{p:?}");
    let info = h.plugin("probe").expect("loaded");
    let row = info
        .capabilities
        .iter()
        .find(|r| r.capability == "secrets")
        .expect("secret row");
    assert_eq!(
        row.status,
        guild_host::capability::RowStatus::Granted(
            "attached as Authorization to http://127.0.0.1:*".to_owned()
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grant_of_the_folder_holding_the_config_file_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("conf")).expect("mkdir");
    // The data folder is elsewhere; the grant reaches only guild.toml's folder.
    let text = format!(
        "[host]\nplugins = [{:?}, {:?}]\ndata_dir = {:?}\n\n[grants.probe]\n{}\n",
        plugin_dir("testing/probe").display().to_string(),
        plugin_dir("testing/echo").display().to_string(),
        state.path().display().to_string(),
        rw(".")
    );
    let conf = dir.path().join("conf");
    let config = Config::parse(&text, &conf.join("guild.toml"), &conf).expect("parses");
    let h = Host::with_engine(config, engine()).await.expect("starts");
    let errors = h.load_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_names(
        &errors[0],
        &[
            "[grants.probe] fs[0].host",
            "contains the host's config file",
            "guild.toml",
        ],
    );
}

/// Two read-write grants of one folder tree would give each its own quota over the same files:
/// refused when one lies inside the other (or they are the same), naming both; side by side,
/// or read-only inside read-write, they load.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overlapping_read_write_grants_refused_side_by_side_allowed() {
    let dir = tempfile::tempdir().expect("tempdir");
    for sub in ["work/inner", "other"] {
        std::fs::create_dir_all(dir.path().join(sub)).expect("mkdir");
    }
    let grant = |second: &str, mode: &str| {
        format!(
            "fs = [{{ guest = \"/data\", host = \"work\", mode = \"rw\" }}, \
             {{ guest = \"/other\", host = {second:?}, mode = {mode:?} }}]"
        )
    };
    let msg = probe_load_error(dir.path(), &grant("work/inner", "rw")).await;
    assert_names(
        &msg,
        &[
            "[grants.probe] fs[0].host",
            "contains `fs[1].host`",
            &canonical(&dir.path().join("work/inner")),
            "escape the other's",
        ],
    );
    let msg = probe_load_error(dir.path(), &grant("work", "rw")).await;
    assert_names(&msg, &["is the same folder as"]);

    for (second, mode) in [("other", "rw"), ("work/inner", "ro")] {
        let h = host_with_config(
            dir.path(),
            PROBE,
            &format!("[grants.probe]\n{}\n", grant(second, mode)),
        )
        .await;
        assert!(
            h.load_errors().is_empty(),
            "{second} {mode}: {:?}",
            h.load_errors()
        );
        assert!(h.plugin("probe").is_some());
    }
}

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

/// The config error of `guild.toml` text `extra` (after `[host]`), which must not parse.
fn config_error(dir: &Path, extra: &str) -> String {
    let text = format!("[host]\ndata_dir = \".guild\"\n\n{extra}");
    match Config::parse(&text, &dir.join("guild.toml"), dir) {
        Ok(_) => panic!("config parsed despite {extra}"),
        Err(e) => e.to_string(),
    }
}

/// A grant inside a folder that some plugin may write could be re-pointed by that plugin (it
/// replaces a folder on the inner grant's path with a link, or a folder of its own): refused when
/// the config is read, naming both grants, whether the two belong to one plugin or two, and
/// whatever the inner grant's mode. Two read-write grants of the same folder would give each its
/// own quota over the same files: refused at load. Side by side, the same folder read-only, or
/// anything inside a read-only folder, they load.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grants_nested_in_a_writable_grant_refused_side_by_side_allowed() {
    let dir = tempfile::tempdir().expect("tempdir");
    for sub in ["work/inner", "other"] {
        std::fs::create_dir_all(dir.path().join(sub)).expect("mkdir");
    }
    let pair = |first: &str, first_mode: &str, second: &str, mode: &str| {
        format!(
            "fs = [{{ guest = \"/data\", host = {first:?}, mode = {first_mode:?} }}, \
             {{ guest = \"/other\", host = {second:?}, mode = {mode:?} }}]"
        )
    };
    for mode in ["rw", "ro"] {
        let msg = config_error(
            dir.path(),
            &format!(
                "[grants.probe]\n{}\n",
                pair("work", "rw", "work/inner", mode)
            ),
        );
        assert_names(
            &msg,
            &[
                "key `grants.probe.fs[1].host`",
                "lies inside `grants.probe.fs[0]`",
                "granted read-write",
                "re-point",
            ],
        );
    }
    // Across plugins: echo's read-only grant inside probe's read-write one.
    let msg = config_error(
        dir.path(),
        "[grants.echo]\nfs = [{ guest = \"/in\", host = \"work/inner\", mode = \"ro\" }]\n\
         [grants.probe]\nfs = [{ guest = \"/data\", host = \"work\", mode = \"rw\" }]\n",
    );
    assert_names(
        &msg,
        &[
            "key `grants.echo.fs[0].host`",
            "lies inside `grants.probe.fs[0]`",
        ],
    );
    // A path written through a link that sits in a writable folder counts as inside it.
    std::os::unix::fs::symlink(dir.path().join("other"), dir.path().join("work/link"))
        .expect("link");
    let msg = config_error(
        dir.path(),
        &format!(
            "[grants.probe]\n{}\n",
            pair("work", "rw", "work/link", "ro")
        ),
    );
    assert_names(&msg, &["key `grants.probe.fs[1].host`", "lies inside"]);

    let msg = probe_load_error(dir.path(), &pair("work", "rw", "work", "rw")).await;
    assert_names(&msg, &["is the same folder as", "escape the other's"]);

    for (first, first_mode, second, mode) in [
        ("work", "rw", "other", "rw"),
        ("work", "rw", "work", "ro"),
        ("work", "ro", "work/inner", "rw"),
        ("work", "ro", "work/inner", "ro"),
    ] {
        let h = host_with_config(
            dir.path(),
            PROBE,
            &format!(
                "[grants.probe]\n{}\n",
                pair(first, first_mode, second, mode)
            ),
        )
        .await;
        assert!(
            h.load_errors().is_empty(),
            "{first} {first_mode} / {second} {mode}: {:?}",
            h.load_errors()
        );
        assert!(h.plugin("probe").is_some());
    }
}

/// A granted folder is opened once, when the plugin version loads, and every instance gets that
/// handle: replacing the folder on the grant's path by a link (what a plugin that could write
/// the parent would do) changes nothing for the running host; the task still reads the folder
/// the operator granted, never what the link leads to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_keeps_its_folder_when_its_path_is_re_pointed() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (folder, text) in [("x/inner", "granted"), ("elsewhere", "elsewhere")] {
        std::fs::create_dir_all(dir.path().join(folder)).expect("mkdir");
        std::fs::write(dir.path().join(folder).join("note.txt"), text).expect("write");
    }
    let h = host(
        dir.path(),
        PROBE,
        "[grants.probe]\nfs = [{ guest = \"/ro\", host = \"x/inner\", mode = \"ro\" }]\n",
    )
    .await;
    let read = json!({"op": "read", "path": "/ro/note.txt"});
    assert_eq!(probe(&h, read.clone()).await.value, json!("granted"));

    std::fs::rename(dir.path().join("x/inner"), dir.path().join("x/moved")).expect("move");
    std::os::unix::fs::symlink("../elsewhere", dir.path().join("x/inner")).expect("link");
    for _ in 0..2 {
        let p = probe(&h, read.clone()).await;
        assert!(p.ok, "{p:?}");
        assert_eq!(p.value, json!("granted"), "followed the planted link");
    }
    // A write to the folder the operator granted, from outside, is seen: it is that folder.
    std::fs::write(dir.path().join("x/moved/note.txt"), "updated").expect("write");
    assert_eq!(probe(&h, read).await.value, json!("updated"));
}

/// A plugin folder under `plugins_dir` that is a link leading out of it is refused at load,
/// naming the link and where it leads; a link to a folder inside `plugins_dir` loads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_folder_linked_out_of_the_plugins_folder_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plugins = dir.path().join("plugins");
    std::fs::create_dir_all(&plugins).expect("mkdir");
    // Outside: a copy of echo somewhere else, reached by a link.
    let outside = dir.path().join("outside-echo");
    let _ = copy_plugin(&plugin_dir("testing/echo"), &outside);
    std::os::unix::fs::symlink(&outside, plugins.join("echo")).expect("link");
    let text = "[host]\nplugins_dir = \"plugins\"\ndata_dir = \".guild\"\n";
    let config = Config::parse(text, &dir.path().join("guild.toml"), dir.path()).expect("parses");
    let h = Host::with_engine(config.clone(), engine())
        .await
        .expect("host starts");
    assert!(
        h.plugin("echo").is_none(),
        "a link out of plugins_dir loaded"
    );
    let errors = h.load_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_names(
        &errors[0],
        &[
            &plugins.join("echo").display().to_string(),
            "is a symbolic link to",
            &canonical(&outside),
            "outside the plugins folder",
        ],
    );
    drop(h);

    // Allowed: the link leads to a folder inside plugins_dir.
    std::fs::remove_file(plugins.join("echo")).expect("unlink");
    std::fs::rename(&outside, plugins.join("echo-real")).expect("move in");
    std::os::unix::fs::symlink("echo-real", plugins.join("echo")).expect("link");
    let h = Host::with_engine(config, engine())
        .await
        .expect("host starts");
    // Both names list the same manifest; the second is a duplicate, not a refused link.
    assert!(h.plugin("echo").is_some());
    assert!(
        h.load_errors()
            .iter()
            .all(|e| !e.contains("outside the plugins folder")),
        "{:?}",
        h.load_errors()
    );
}

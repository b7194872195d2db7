//! Components compile in a child process (`guild __compile-component`) under a time and memory
//! ceiling: a normal component compiles there and runs, one over the memory ceiling is refused
//! with an error that names the plugin, the limit and the setting, and the host keeps serving.

use std::path::{Path, PathBuf};

use guild_host::{Config, Host};

fn plugin(rel: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../plugins")
        .join(rel);
    let name = dir
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    assert!(
        dir.join(format!("{name}.wasm")).is_file(),
        "{} is not built: run plugins/build.sh before the tests",
        dir.display()
    );
    dir
}

/// A config loading probe and echo with the disk cache on and `guild` as compile helper.
fn config(dir: &Path, extra: &str) -> Config {
    let text = format!(
        "[host]\nplugins = [{:?}, {:?}]\ndata_dir = \"data\"\n{extra}\n",
        plugin("testing/probe").display().to_string(),
        plugin("testing/echo").display().to_string(),
    );
    let mut config = Config::parse(&text, &dir.join("guild.toml"), dir).expect("config parses");
    config.host.compile_helper = Some(PathBuf::from(env!("CARGO_BIN_EXE_guild")));
    config
}

fn cache_entries(dir: &Path) -> usize {
    std::fs::read_dir(dir.join("data").join("cache"))
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.path().extension().is_some_and(|x| x == "cwasm"))
                .count()
        })
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn components_compile_in_the_helper_and_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let host = Host::new(config(dir.path(), ""))
        .await
        .expect("host starts");
    assert!(host.load_errors().is_empty(), "{:?}", host.load_errors());
    assert_eq!(cache_entries(dir.path()), 2, "the helper left both entries");
    let result = host
        .task("probe", r#"{"op": "print", "text": "compiled elsewhere"}"#)
        .await
        .expect("task runs");
    assert!(
        format!("{result:?}").contains("compiled elsewhere"),
        "{result:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compile_over_the_memory_ceiling_is_refused_naming_plugin_limit_and_setting() {
    let dir = tempfile::tempdir().expect("tempdir");
    let host = Host::new(config(dir.path(), "compile_memory_mb = 16"))
        .await
        .expect("the host starts without the refused plugins");
    let errors = host.load_errors().join("\n");
    for wanted in ["probe", "16 MiB", "[host] compile_memory_mb"] {
        assert!(errors.contains(wanted), "no {wanted:?} in: {errors}");
    }
    assert!(
        host.plugin("probe").is_none(),
        "a refused component must not load"
    );
    assert_eq!(cache_entries(dir.path()), 0, "nothing was cached");
}

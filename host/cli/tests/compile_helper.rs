//! Components compile in a child process (`guild __compile-component`) under a time and memory
//! ceiling: a normal component compiles there and runs, one over the memory ceiling is refused
//! with an error that names the plugin, the limit and the setting, and the host keeps serving;
//! so is a compile bomb (deeply nested blocks) under low ceilings that normal plugins fit in.

use std::path::{Path, PathBuf};

use guild_host::{Config, Host};

// The wasm binary writer the workspace tests use too.
#[path = "../../../tests/wasm_bytes.rs"]
#[allow(unreachable_pub)]
mod wasm_bytes;
use wasm_bytes::{COMPONENT, CORE_MODULE, leb128, pool_heavy_component, section};

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

/// A component holding one core function of `depth` nested empty blocks: a few MB to ship,
/// far more to compile (the shape of the compile bomb in the hardening issue).
fn nested_blocks_component(depth: usize) -> Vec<u8> {
    let mut body = vec![0x00]; // no locals
    for _ in 0..depth {
        body.extend([0x02, 0x40]); // block (no result)
    }
    body.extend(std::iter::repeat_n(0x0b, depth + 1)); // the blocks' ends, then the function's
    let mut code = leb128(1);
    code.extend(leb128(body.len()));
    code.extend(body);
    let mut module = CORE_MODULE.to_vec();
    section(&mut module, 1, &[1, 0x60, 0, 0]); // one type: () -> ()
    section(&mut module, 3, &[1, 0]); // one function of that type
    section(&mut module, 10, &code);
    let mut component = COMPONENT.to_vec();
    section(&mut component, 1, &module); // a core module inside the component
    component
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compile_bomb_is_refused_at_load_naming_the_ceiling_and_the_host_keeps_serving() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bomb = dir.path().join("bomb");
    std::fs::create_dir(&bomb).expect("mkdir");
    std::fs::write(
        bomb.join("plugin.toml"),
        "[plugin]\nname = \"bomb\"\nversion = \"0.1.0\"\nkind = \"connector\"\n\
         component = \"bomb.wasm\"\ndescription = \"nested blocks\"\n",
    )
    .expect("write manifest");
    let component = nested_blocks_component(2_000_000);
    assert!(component.len() < 8 * 1024 * 1024, "within the size cap");
    std::fs::write(bomb.join("bomb.wasm"), component).expect("write component");
    // Low ceilings keep the test short; the normal plugins compile under the same ones.
    let text = format!(
        "[host]\nplugins = [{:?}, {:?}, {:?}]\ndata_dir = \"data\"\n\
         compile_timeout_s = 20\ncompile_memory_mb = 1024\n",
        plugin("testing/probe").display().to_string(),
        plugin("testing/echo").display().to_string(),
        bomb.display().to_string(),
    );
    let config =
        Config::parse(&text, &dir.path().join("guild.toml"), dir.path()).expect("config parses");
    let with_helper = |helper: PathBuf| {
        let mut config = config.clone();
        config.host.compile_helper = Some(helper);
        config
    };
    let host = Host::new(with_helper(PathBuf::from(env!("CARGO_BIN_EXE_guild"))))
        .await
        .expect("the host starts without the bomb");
    let errors = host.load_errors().join("\n");
    assert!(errors.contains("bomb"), "{errors}");
    assert!(
        errors.contains("[host] compile_memory_mb") || errors.contains("[host] compile_timeout_s"),
        "the refusal names the ceiling it hit: {errors}"
    );
    assert!(
        host.plugin("bomb").is_none(),
        "a refused component must not load"
    );
    // Allowed: the normal plugins compiled under the same ceilings and serve.
    assert!(host.plugin("echo").is_some(), "{errors}");
    let result = host
        .task("probe", r#"{"op": "print", "text": "still serving"}"#)
        .await
        .expect("task runs");
    assert!(
        format!("{result:?}").contains("still serving"),
        "{result:?}"
    );
    drop(host);
    // The refusal was remembered: the next start refuses the bomb again without a compile
    // child (a helper that cannot even start is never asked), and the other plugins load
    // from the cache.
    let again = Host::new(with_helper(dir.path().join("no-such-helper")))
        .await
        .expect("host starts");
    let remembered = again.load_errors().join("\n");
    assert_eq!(remembered, errors);
    assert!(again.plugin("echo").is_some(), "{remembered}");
}

/// A folder with a connector `wide` whose component has 65 core instances, and the config
/// loading it with `helper` as compile helper and `extra` in `[host]`.
fn wide_config(dir: &Path, helper: &Path, extra: &str) -> Config {
    let wide = dir.join("wide");
    std::fs::create_dir_all(&wide).expect("mkdir");
    std::fs::write(
        wide.join("plugin.toml"),
        "[plugin]\nname = \"wide\"\nversion = \"0.1.0\"\nkind = \"connector\"\n\
         component = \"wide.wasm\"\ndescription = \"65 core instances\"\n",
    )
    .expect("write manifest");
    std::fs::write(wide.join("wide.wasm"), pool_heavy_component(65, 0, 0)).expect("component");
    let text = format!(
        "[host]\nplugins = [{:?}]\ndata_dir = \"data\"\n{extra}\n",
        wide.display().to_string()
    );
    let mut config = Config::parse(&text, &dir.join("guild.toml"), dir).expect("config parses");
    config.host.compile_helper = Some(helper.to_owned());
    config
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_names_the_limit_and_is_remembered_until_the_limits_change() {
    let dir = tempfile::tempdir().expect("tempdir");
    let guild = PathBuf::from(env!("CARGO_BIN_EXE_guild"));
    let host = Host::new(wide_config(dir.path(), &guild, ""))
        .await
        .expect("the host starts without the refused plugin");
    let first = host.load_errors().join("\n");
    for wanted in [
        "wide",
        "65 core module instances",
        "at most 64 core instances",
    ] {
        assert!(first.contains(wanted), "no {wanted:?} in: {first}");
    }
    assert!(!first.contains("authentic"), "{first}");
    drop(host);
    // Remembered: the next start refuses it the same way without compiling, so a helper that
    // cannot even start is never asked.
    let missing = dir.path().join("no-such-helper");
    let host = Host::new(wide_config(dir.path(), &missing, ""))
        .await
        .expect("host starts");
    assert_eq!(host.load_errors().join("\n"), first);
    drop(host);
    // Other limits: compiled again (here: the missing helper is asked, and fails).
    let host = Host::new(wide_config(dir.path(), &missing, "compile_timeout_s = 121"))
        .await
        .expect("host starts");
    let retried = host.load_errors().join("\n");
    assert!(
        retried.contains("cannot start the compile helper"),
        "{retried}"
    );
}

//! Hosts joining one PostgreSQL database compare their plugins (docs/postgres.md#joining): a
//! host whose `echo` component differs from a live host's is refused at start, naming the
//! plugin, both digests and the other host, unless `[store] allow_plugin_mismatch = true`; a
//! reload that would bring such a version keeps the old one serving. Real components, a real
//! server; the other cases (same digests, a dead host, hosts starting at once) are in
//! `cargo test -p guild-pg --test join`.

use std::path::{Path, PathBuf};

use guild_host::{Config, Host};
use guild_runtime::ComponentFile;
use guild_tests::{engine, plugin_dir};

use super::shared_store::{server, store_table};

/// A copy of the echo connector in `into`, its component with a custom section appended: the
/// same code, another sha256.
fn echo_variant(into: &Path) -> PathBuf {
    let from = plugin_dir("testing/echo");
    let dir = into.join("echo");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::copy(from.join("plugin.toml"), dir.join("plugin.toml")).expect("copy manifest");
    let mut wasm = std::fs::read(from.join("echo.wasm")).expect("read echo.wasm");
    let mut custom = guild_tests::wasm_bytes::leb128("variant".len());
    custom.extend_from_slice(b"variant");
    custom.extend_from_slice(b"another build");
    guild_tests::wasm_bytes::section(&mut wasm, 0, &custom);
    std::fs::write(dir.join("echo.wasm"), wasm).expect("write variant");
    dir
}

fn sha256(dir: &Path) -> String {
    ComponentFile::read(&dir.join("echo.wasm"))
        .expect("read component")
        .sha256()
}

/// A host on `store` loading `plugins` (folders), its data dir in `dir`.
async fn start(dir: &Path, plugins: &[PathBuf], store: &str) -> Result<Host, String> {
    let list: Vec<String> = plugins
        .iter()
        .map(|p| format!("{:?}", p.display().to_string()))
        .collect();
    let text = format!(
        "[host]\nplugins = [{}]\ndata_dir = \".guild\"\n\n{store}",
        list.join(", ")
    );
    let config = Config::parse(&text, &dir.join("guild.toml"), dir).expect("config parses");
    Host::with_engine(config, engine())
        .await
        .map_err(|e| format!("{e:#}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_with_another_component_is_refused_unless_allowed() {
    let Some(server) = server() else { return };
    let store = store_table(&server, "join_refused");
    let (a_dir, b_dir, variants) = (tempdir(), tempdir(), tempdir());
    let echo = plugin_dir("testing/echo");
    let a = start(
        a_dir.path(),
        &[plugin_dir("testing/probe"), echo.clone()],
        &store,
    )
    .await
    .expect("the first host starts");
    let variant = echo_variant(variants.path());
    let (ours, theirs) = (sha256(&echo), sha256(&variant));
    assert_ne!(ours, theirs);

    let err = start(b_dir.path(), std::slice::from_ref(&variant), &store)
        .await
        .err()
        .expect("a host with another echo is refused");
    for part in [
        "plugin 'echo'",
        &format!("component sha256 {theirs} here but {ours} on host "),
        "allow_plugin_mismatch = true",
    ] {
        assert!(err.contains(part), "names {part:?}: {err}");
    }
    assert!(!err.contains("'probe'"), "only b has probe: {err}");

    let allowed = format!("{}\nallow_plugin_mismatch = true\n\n", store.trim_end());
    let b = start(b_dir.path(), std::slice::from_ref(&variant), &allowed)
        .await
        .expect("allowed, the host starts");
    assert_eq!(b.plugin("echo").expect("echo loads").sha256, theirs);
    assert_eq!(a.plugin("echo").expect("a keeps its echo").sha256, ours);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_that_would_differ_from_another_host_keeps_the_old_version() {
    let Some(server) = server() else { return };
    let store = store_table(&server, "join_reload");
    let (a_dir, b_dir, folders) = (tempdir(), tempdir(), tempdir());
    let echo = plugin_dir("testing/echo");
    let _a = start(a_dir.path(), std::slice::from_ref(&echo), &store)
        .await
        .expect("a starts");
    // b serves a copy of the same echo, then its folder gets another build.
    let b_echo = folders.path().join("echo");
    std::fs::create_dir_all(&b_echo).expect("mkdir");
    for file in ["plugin.toml", "echo.wasm"] {
        std::fs::copy(echo.join(file), b_echo.join(file)).expect("copy");
    }
    let b = start(b_dir.path(), std::slice::from_ref(&b_echo), &store)
        .await
        .expect("the same digests join");
    let ours = sha256(&echo);
    assert_eq!(b.plugin("echo").expect("echo").sha256, ours);
    echo_variant(folders.path());
    let report = b.reload_with(None).await;
    let errors = report.errors.join("\n");
    assert!(
        errors.contains("plugin 'echo' has component sha256")
            && errors.contains("echo@0.1.0 keeps serving"),
        "{errors}"
    );
    assert!(report.loaded.is_empty(), "{report:?}");
    assert_eq!(
        b.plugin("echo").expect("echo still serves").sha256,
        ours,
        "the old version keeps serving"
    );
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

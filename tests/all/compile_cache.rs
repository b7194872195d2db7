//! The compile cache is not trusted: an entry is used only when it is bound to the component
//! bytes being loaded and authenticated with this host's key. Swapped, changed or foreign
//! entries are discarded and the component is compiled again; it never runs other code.

use std::path::{Path, PathBuf};

use guild_host::CompileSource;
use guild_host::{Config, EngineOptions, GuildEngine, Host};
use guild_tests::wasm_bytes::pool_heavy_component;
use guild_tests::{plugin_dir, probe};
use serde_json::json;
use sha2::{Digest, Sha256};

/// A fresh engine (empty memory cache) over the disk cache in `dir/cache`.
fn engine(dir: &Path) -> GuildEngine {
    GuildEngine::new(EngineOptions {
        pooling: false,
        cache_dir: Some(dir.join("cache")),
        ..EngineOptions::default()
    })
    .expect("engine starts")
}

fn wasm(rel: &str) -> PathBuf {
    let dir = plugin_dir(rel);
    let name = dir
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    dir.join(format!("{name}.wasm"))
}

fn sha256(file: &Path) -> [u8; 32] {
    Sha256::digest(std::fs::read(file).expect("read component")).into()
}

/// The cache entry of a component (named by the sha256 of its `.wasm`).
fn entry(dir: &Path, component: &Path) -> PathBuf {
    let prefix = hex::encode(sha256(component));
    std::fs::read_dir(dir.join("cache"))
        .expect("cache folder")
        .map(|e| e.expect("entry").path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".cwasm"))
        })
        .expect("a cache entry for the component")
}

fn source(engine: &GuildEngine, component: &Path) -> CompileSource {
    engine.warm(component).expect("compiles")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn swapped_cache_entries_are_recompiled_not_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (victim, other) = (wasm("testing/probe"), wasm("testing/echo"));
    let first = engine(dir.path());
    assert_eq!(source(&first, &victim), CompileSource::Compiled);
    assert_eq!(source(&first, &other), CompileSource::Compiled);
    // Untouched entries are used: a restart does not recompile.
    let second = engine(dir.path());
    assert_eq!(source(&second, &victim), CompileSource::Disk);
    assert_eq!(source(&second, &other), CompileSource::Disk);

    // The attack: give the victim's entry name to the other component's compiled code.
    let (v, o) = (entry(dir.path(), &victim), entry(dir.path(), &other));
    let tmp = dir.path().join("swap");
    std::fs::rename(&v, &tmp).expect("rename");
    std::fs::rename(&o, &v).expect("rename");
    std::fs::rename(&tmp, &o).expect("rename");

    // A host on a fresh engine loads the victim: it is its own code (a specialist that answers
    // the probe protocol), recompiled, not the other's.
    let text = format!(
        "[host]\nplugins = [{:?}, {:?}]\n",
        plugin_dir("testing/probe").display().to_string(),
        plugin_dir("testing/echo").display().to_string()
    );
    let config = Config::parse(&text, &dir.path().join("guild.toml"), dir.path()).expect("parses");
    let h = Host::with_engine(config, engine(dir.path()))
        .await
        .expect("host starts");
    assert!(h.load_errors().is_empty(), "{:?}", h.load_errors());
    let p = probe(&h, json!({"op": "print", "text": "still me"})).await;
    assert!(p.ok, "{p:?}");
    assert_eq!(
        h.plugin("probe").expect("loaded").sha256,
        hex::encode(sha256(&victim))
    );

    // The swapped entries were replaced by authentic ones bound to the right bytes.
    let after = std::fs::read(&v).expect("entry rewritten");
    // Trailer: magic (8) | wasm sha256 (32) | engine key (16) | length (8) | tag (32).
    let binding = after.len() - 96 + 8;
    assert_eq!(
        &after[binding..binding + 32],
        &sha256(&victim),
        "entry trailer binds the victim"
    );
    let fresh = engine(dir.path());
    assert_eq!(source(&fresh, &victim), CompileSource::Disk);
    assert_eq!(source(&fresh, &other), CompileSource::Disk);
}

#[test]
fn tampered_cache_entry_refused_and_recompiled() {
    let dir = tempfile::tempdir().expect("tempdir");
    let component = wasm("testing/echo");
    assert_eq!(
        source(&engine(dir.path()), &component),
        CompileSource::Compiled
    );
    let file = entry(dir.path(), &component);
    let mut bytes = std::fs::read(&file).expect("read");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    std::fs::write(&file, &bytes).expect("write");
    assert_eq!(
        source(&engine(dir.path()), &component),
        CompileSource::Compiled,
        "a changed byte must not be deserialised"
    );
    assert_eq!(source(&engine(dir.path()), &component), CompileSource::Disk);
}

#[test]
fn entry_written_under_another_key_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let component = wasm("testing/echo");
    assert_eq!(
        source(&engine(dir.path()), &component),
        CompileSource::Compiled
    );
    let key = dir.path().join("cache.key");
    assert_eq!(std::fs::read(&key).expect("key file").len(), 32);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key).expect("meta").permissions().mode();
        assert_eq!(mode & 0o077, 0, "the key is readable by others: {mode:o}");
    }
    // Another host's key (or an entry forged without ours): the entry does not verify.
    std::fs::remove_file(&key).expect("rm key");
    assert_eq!(
        source(&engine(dir.path()), &component),
        CompileSource::Compiled
    );
    // A plain wasmtime artifact without our header is refused too.
    let file = entry(dir.path(), &component);
    let plain = engine(dir.path())
        .plain_artifact(&component)
        .expect("compiles");
    std::fs::write(&file, plain).expect("write");
    assert_eq!(
        source(&engine(dir.path()), &component),
        CompileSource::Compiled
    );
}

/// A pooled engine (the per-component limits apply) over the disk cache in `dir/cache`.
fn pooled_engine(dir: &Path) -> GuildEngine {
    GuildEngine::new(EngineOptions {
        cache_dir: Some(dir.join("cache")),
        ..EngineOptions::default()
    })
    .expect("engine starts")
}

fn refusal_files(dir: &Path) -> usize {
    std::fs::read_dir(dir.join("cache"))
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.path().extension().is_some_and(|x| x == "refused"))
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn components_within_the_pool_limits_load() {
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = pooled_engine(dir.path());
    for bytes in [
        pool_heavy_component(64, 0, 0),
        pool_heavy_component(16, 1, 0),
        pool_heavy_component(1, 1, 1),
    ] {
        assert_eq!(
            engine.warm_bytes(&bytes).expect("within the limits"),
            CompileSource::Compiled
        );
    }
    assert_eq!(refusal_files(dir.path()), 0);
}

#[test]
fn components_over_a_pool_limit_are_refused_naming_it_and_the_refusal_is_remembered() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (bytes, names) in [
        (pool_heavy_component(65, 0, 0), "65 core module instances"),
        (pool_heavy_component(17, 1, 0), "17 Wasm linear memories"),
        (pool_heavy_component(1, 2, 0), "defined memories count of 2"),
        (pool_heavy_component(1, 0, 2), "defined tables count of 2"),
    ] {
        let err = pooled_engine(dir.path())
            .warm_bytes(&bytes)
            .expect_err("over a limit");
        let text = err.to_string();
        assert!(
            matches!(err, guild_host::CompileError::OverLimit(_)),
            "{err:?}"
        );
        assert!(
            text.contains(names)
                && text.contains("at most 64 core instances, 16 memories and 64 tables")
                && text.contains("each core module at most 1 memory and 1 table"),
            "{text}"
        );
        assert!(!text.contains("authentic"), "{text}");
        // A fresh engine on the same cache is refused the same way (remembered).
        let again = pooled_engine(dir.path())
            .warm_bytes(&bytes)
            .expect_err("still over");
        assert_eq!(again.to_string(), text);
    }
    assert_eq!(refusal_files(dir.path()), 4, "one refusal per component");
}

//! Two compile tiers on a first start: a cold host serves a task on baseline (Winch) code before
//! its optimized compile finishes (held here through the engine's optimizer lock, never by
//! timing), swaps the optimized code in once it does, compiles nothing twice, and a restart
//! with the optimized artifacts cached never compiles Winch. A component Winch refuses is
//! compiled with Cranelift only. `[host] baseline_tier = false` turns the tier off.

use std::path::Path;
use std::time::Duration;

use guild_host::{Config, EngineOptions, GuildEngine, Host, engine_options};
use guild_tests::wasm_bytes::{COMPONENT, CORE_MODULE, section};
use guild_tests::{host_on, probe};
use serde_json::json;

const PROBE: &[&str] = &["testing/probe", "testing/echo"];

fn tiered_engine(cache: &Path) -> GuildEngine {
    GuildEngine::new(EngineOptions {
        cache_dir: Some(cache.to_path_buf()),
        baseline_tier: true,
        ..EngineOptions::default()
    })
    .expect("engine with a baseline tier starts")
}

fn on_baseline(h: &Host) -> Vec<String> {
    h.plugins()
        .into_iter()
        .filter(|p| p.baseline)
        .map(|p| p.name)
        .collect()
}

/// Waits until no plugin of `h` runs baseline code (the background compiles finished and were
/// swapped in); gives up, failing, long after any compile of these small components.
async fn until_optimized(h: &Host) {
    let waiting = async {
        while !on_baseline(h).is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(600), waiting)
        .await
        .expect("the optimized code was swapped in");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cold_host_serves_on_baseline_code_then_swaps_in_the_optimized_code_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = dir.path().join("cache");
    let engine = tiered_engine(&cache);
    let baseline = engine.baseline().expect("a baseline tier").clone();
    let optimizer = engine.optimizer();
    let held = optimizer.lock().await;

    let first = dir.path().join("first");
    std::fs::create_dir_all(&first).expect("folder");
    let h = host_on(engine.clone(), &first, PROBE, "").await;
    assert!(h.load_errors().is_empty(), "{:?}", h.load_errors());
    assert_eq!(
        on_baseline(&h),
        ["echo", "probe"],
        "usable before any Cranelift compile"
    );
    let p = probe(&h, json!({"op": "log", "text": "on baseline code"})).await;
    assert!(p.ok, "{p:?}");
    assert_eq!(
        baseline.compiles(),
        2,
        "probe and echo, once each, with Winch"
    );
    assert_eq!(
        engine.compiles(),
        0,
        "no Cranelift compile while the optimizer is held"
    );

    drop(held);
    until_optimized(&h).await;
    let p = probe(&h, json!({"op": "log", "text": "on optimized code"})).await;
    assert!(p.ok, "{p:?}");
    assert_eq!(
        engine.compiles(),
        2,
        "probe and echo, once each, with Cranelift"
    );
    // A reload of unchanged plugins keeps the optimized code and compiles nothing.
    let errors = h.reload().await;
    assert!(errors.is_empty(), "{errors:?}");
    assert!(on_baseline(&h).is_empty(), "{:?}", on_baseline(&h));
    assert_eq!((baseline.compiles(), engine.compiles()), (2, 2));
    drop(h);

    // A restart (a new engine on the same cache) loads the optimized artifacts: no Winch.
    let restarted = tiered_engine(&cache);
    let second = dir.path().join("second");
    std::fs::create_dir_all(&second).expect("folder");
    let h = host_on(restarted.clone(), &second, PROBE, "").await;
    assert!(on_baseline(&h).is_empty(), "{:?}", on_baseline(&h));
    let restarted_baseline = restarted.baseline().expect("a baseline tier");
    assert_eq!(
        (restarted_baseline.compiles(), restarted.compiles()),
        (0, 0)
    );
    let p = probe(&h, json!({"op": "log", "text": "after a restart"})).await;
    assert!(p.ok, "{p:?}");
}

#[test]
fn the_baseline_tier_is_on_by_default_and_the_operator_can_turn_it_off() {
    let dir = tempfile::tempdir().expect("tempdir");
    let parse = |text: &str| {
        Config::parse(text, &dir.path().join("guild.toml"), dir.path()).expect("config parses")
    };
    assert!(engine_options(&parse("[host]\n")).baseline_tier);
    let off = engine_options(&parse("[host]\nbaseline_tier = false\n"));
    assert!(!off.baseline_tier);
    let engine = GuildEngine::new(off).expect("engine starts");
    assert!(
        engine.baseline().is_none(),
        "no Winch engine without the tier"
    );
}

/// A component whose one core module has a function ending in `return_call` (the tail-call
/// proposal): Cranelift compiles it, Winch refuses it. It exports nothing.
fn tail_call_component() -> Vec<u8> {
    let mut module = CORE_MODULE.to_vec();
    section(&mut module, 1, &[0x01, 0x60, 0x00, 0x00]); // one type: [] -> []
    section(&mut module, 3, &[0x01, 0x00]); // one function of that type
    // One body: no locals, `return_call 0`, `end`.
    section(&mut module, 10, &[0x01, 0x04, 0x00, 0x12, 0x00, 0x0b]);
    let mut component = COMPONENT.to_vec();
    section(&mut component, 1, &module);
    section(&mut component, 2, &[0x01, 0x00, 0x00, 0x00]); // instantiate it, no arguments
    component
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_component_winch_refuses_is_compiled_with_cranelift_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plugin = dir.path().join("tails");
    std::fs::create_dir_all(&plugin).expect("folder");
    std::fs::write(plugin.join("tails.wasm"), tail_call_component()).expect("component");
    std::fs::write(
        plugin.join("plugin.toml"),
        "[plugin]\nname = \"tails\"\nversion = \"0.1.0\"\nkind = \"connector\"\n\
         component = \"tails.wasm\"\ndescription = \"Uses tail calls.\"\n",
    )
    .expect("manifest");
    let engine = tiered_engine(&dir.path().join("cache"));
    let baseline = engine.baseline().expect("a baseline tier").clone();
    let config = Config::parse(
        &format!(
            "[host]\nplugins = [{:?}]\ndata_dir = \"data\"\n",
            plugin.display().to_string()
        ),
        &dir.path().join("guild.toml"),
        dir.path(),
    )
    .expect("config parses");
    let h = Host::with_engine(config, engine.clone())
        .await
        .expect("host starts");
    // Winch tried and refused it; Cranelift compiled it; the load then stops at the world
    // check (it exports nothing), past the compile.
    assert_eq!((baseline.compiles(), engine.compiles()), (1, 1));
    let errors = h.load_errors();
    assert!(
        errors.len() == 1 && errors[0].contains("missing export"),
        "{errors:?}"
    );
}

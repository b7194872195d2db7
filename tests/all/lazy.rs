//! A lazy first start (`Host::load_plugins_lazily`) on a cold compile cache: the host is ready
//! before any plugin is compiled, a background loader compiles them one at a time, and a task
//! on a plugin still queued moves it (and the connectors its specialist is granted) to the
//! front and waits for it. The order is observed through the loader's gate and its record of
//! compile starts, never by timing; the engines' compile counters show that nothing is compiled
//! twice, across a reload during the queue too. Background, batch and delegated child tasks
//! wait the same way. A deferred load that fails is the task's error, in the words of a load at
//! start.

use std::path::Path;
use std::time::Duration;

use guild_host::{Config, EngineOptions, GuildEngine, Host};
use guild_tests::{assert_denied, plugin_dir, probe};
use serde_json::json;

/// Smallest first: textstats, optimist, echo, probe.
const FOUR: &[&str] = &["testing/probe", "testing/echo", "textstats", "optimist"];

fn cold_engine(cache: &Path) -> GuildEngine {
    GuildEngine::new(EngineOptions {
        cache_dir: Some(cache.to_path_buf()),
        baseline_tier: true,
        ..EngineOptions::default()
    })
    .expect("engine with a baseline tier starts")
}

fn config(dir: &Path, folders: &[String], extra: &str) -> Config {
    let list: Vec<String> = folders.iter().map(|f| format!("{f:?}")).collect();
    let text = format!(
        "[host]\nplugins = [{}]\ndata_dir = \".guild\"\n\n{extra}",
        list.join(", ")
    );
    Config::parse(&text, &dir.join("guild.toml"), dir).expect("test config parses")
}

fn folders(plugins: &[&str]) -> Vec<String> {
    plugins
        .iter()
        .map(|p| plugin_dir(p).display().to_string())
        .collect()
}

/// A host opened on `engine` whose plugins are not loaded yet.
async fn opened(engine: &GuildEngine, dir: &Path, plugins: &[String], extra: &str) -> Host {
    Host::open(config(dir, plugins, extra), engine.clone())
        .await
        .expect("host opens")
}

/// A lazy start on a new cache in `dir`: Cranelift held back while `_no_cranelift` lives, the
/// background loader stopped at its gate while `held` lives.
struct Cold {
    engine: GuildEngine,
    h: Host,
    report: guild_host::ReloadReport,
    held: tokio::sync::OwnedMutexGuard<()>,
    _no_cranelift: tokio::sync::OwnedMutexGuard<()>,
}

async fn cold_start(dir: &Path, plugins: &[String], extra: &str) -> Cold {
    let engine = cold_engine(&dir.join("cache"));
    let no_cranelift = engine.optimizer().lock_owned().await;
    let h = opened(&engine, dir, plugins, extra).await;
    let held = h.deferred_gate().lock_owned().await;
    let report = h.load_plugins_lazily().await;
    Cold {
        engine,
        h,
        report,
        held,
        _no_cranelift: no_cranelift,
    }
}

/// Waits until the queue's first plugin is `name` (a task moved it there).
async fn until_first(h: &Host, name: &str) {
    let moved = async {
        while h.queued().first().map(String::as_str) != Some(name) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(120), moved)
        .await
        .expect("the task moved its plugin to the front");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_on_a_queued_specialist_moves_it_and_its_granted_connector_to_the_front() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Cold {
        engine,
        h,
        report,
        held,
        _no_cranelift,
    } = cold_start(
        dir.path(),
        &folders(FOUR),
        "[grants.probe]\ntools = [\"echo.echo\"]\n",
    )
    .await;
    let winch = engine.baseline().expect("a baseline tier").clone();
    assert_eq!(report.queued.len(), 4, "{report:?}");
    assert!(h.roster().is_empty(), "nothing compiled yet");
    assert_eq!(h.queued(), ["textstats", "optimist", "echo", "probe"]);
    assert_eq!(
        h.loading(),
        ["textstats", "optimist", "probe"],
        "queued specialists are listed as loading"
    );
    assert_eq!(winch.compiles(), 0, "the host is ready before any compile");

    let task = tokio::spawn({
        let h = h.clone();
        async move {
            let op = json!({"op": "tool", "name": "echo.echo", "input": {"hi": 1}});
            probe(&h, op).await
        }
    });
    until_first(&h, "probe").await;
    assert_eq!(h.queued()[..2], ["probe", "echo"]);
    drop(held);
    let p = task.await.expect("task joins");
    assert!(p.ok, "the granted call works once both loaded: {p:?}");
    assert_eq!(h.deferred_order()[..2], ["probe", "echo"]);

    let errors = h.all_loaded().await;
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        h.deferred_order(),
        ["probe", "echo", "textstats", "optimist"]
    );
    assert!(h.queued().is_empty() && h.loading().is_empty());
    assert_eq!(winch.compiles(), 4, "each plugin compiled once");
    let errors = h.reload().await;
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(winch.compiles(), 4, "a reload compiles nothing");
    assert_eq!(engine.compiles(), 0, "Cranelift held back meanwhile");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_grant_only_the_specialist_jumps_the_queue_and_its_call_is_denied() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Cold {
        h,
        held,
        _no_cranelift,
        ..
    } = cold_start(dir.path(), &folders(FOUR), "").await;
    let task = tokio::spawn({
        let h = h.clone();
        async move {
            let op = json!({"op": "tool", "name": "echo.echo", "input": {"hi": 1}});
            probe(&h, op).await
        }
    });
    until_first(&h, "probe").await;
    assert_eq!(h.queued(), ["probe", "textstats", "optimist", "echo"]);
    drop(held);
    let p = task.await.expect("task joins");
    assert_denied(&p, "echo.echo");
    h.all_loaded().await;
    assert_eq!(
        h.deferred_order(),
        ["probe", "textstats", "optimist", "echo"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deferred_load_that_fails_is_the_tasks_error_in_the_words_of_a_load_at_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A copy of the probe whose component is not a component.
    let broken = dir.path().join("broken-probe");
    std::fs::create_dir_all(&broken).expect("folder");
    let manifest = std::fs::read_to_string(plugin_dir("testing/probe").join("plugin.toml"))
        .expect("probe manifest");
    std::fs::write(broken.join("plugin.toml"), manifest).expect("manifest");
    std::fs::write(broken.join("probe.wasm"), b"\0asm not really").expect("component");
    let plugins = vec![broken.display().to_string()];

    let eager_dir = dir.path().join("eager");
    std::fs::create_dir_all(&eager_dir).expect("folder");
    let eager = Host::with_engine(
        config(&eager_dir, &plugins, ""),
        cold_engine(&eager_dir.join("cache")),
    )
    .await
    .expect("host starts");
    let at_start = eager.load_errors();
    assert_eq!(at_start.len(), 1, "{at_start:?}");

    let lazy_dir = dir.path().join("lazy");
    std::fs::create_dir_all(&lazy_dir).expect("folder");
    let h = opened(
        &cold_engine(&lazy_dir.join("cache")),
        &lazy_dir,
        &plugins,
        "",
    )
    .await;
    let report = h.load_plugins_lazily().await;
    assert_eq!(report.queued, ["probe"], "{report:?}");
    assert!(report.errors.is_empty(), "{report:?}");
    let e = h
        .task("probe", "{\"op\":\"log\",\"text\":\"x\"}")
        .await
        .expect_err("the probe never loaded");
    let e = e.to_string();
    assert!(
        e.starts_with("specialist 'probe' is not available: it failed to load: "),
        "{e}"
    );
    assert!(e.ends_with(&at_start[0]), "{e}\nvs\n{}", at_start[0]);
    assert_eq!(h.all_loaded().await, at_start, "listed as a load error too");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_during_the_queue_loses_no_plugin_and_compiles_none_twice() {
    let dir = tempfile::tempdir().expect("tempdir");
    let all = folders(FOUR);
    let Cold {
        engine,
        h,
        held,
        _no_cranelift,
        ..
    } = cold_start(dir.path(), &all, "").await;
    let winch = engine.baseline().expect("a baseline tier").clone();
    let gate = h.deferred_gate();

    // Nothing compiling: a reload keeps the queue as it was, and compiles a plugin new to it
    // itself (its report says so, as an eager host's does).
    let mut with_kb = all.clone();
    with_kb.push(plugin_dir("kb").display().to_string());
    let report = h.reload_with(Some(config(dir.path(), &with_kb, ""))).await;
    assert!(report.errors.is_empty(), "{report:?}");
    assert!(
        report.loaded.iter().any(|l| l.starts_with("kb@")),
        "{report:?}"
    );
    assert_eq!(h.queued(), ["textstats", "optimist", "echo", "probe"]);
    assert_eq!(winch.compiles(), 1, "kb only");

    // Let the loader take the first plugin, then hold it before the next one and reload while
    // the first compiles (or has just been added): either way it is compiled once.
    drop(held);
    let held = loop {
        let held = gate.lock().await;
        if !h.deferred_order().is_empty() {
            break held;
        }
        drop(held);
        tokio::task::yield_now().await;
    };
    // The reload also drops probe, the last in the queue, from the configuration: it leaves
    // the queue uncompiled.
    let fewer = folders(&["testing/echo", "textstats", "optimist"]);
    let report = h.reload_with(Some(config(dir.path(), &fewer, ""))).await;
    assert!(report.errors.is_empty(), "{report:?}");
    assert!(
        !h.queued().contains(&"probe".to_owned()),
        "{:?}",
        h.queued()
    );
    drop(held);

    let errors = h.all_loaded().await;
    assert!(errors.is_empty(), "{errors:?}");
    let mut names: Vec<String> = h.plugins().into_iter().map(|p| p.name).collect();
    names.sort();
    assert_eq!(names, ["echo", "optimist", "textstats"]);
    assert_eq!(
        winch.compiles(),
        4,
        "kb and each queued plugin still configured, once"
    );
    assert!(!h.deferred_order().contains(&"probe".to_owned()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_and_batch_tasks_on_queued_plugins_wait_for_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Cold {
        h,
        held,
        _no_cranelift,
        ..
    } = cold_start(dir.path(), &folders(FOUR), "").await;

    // Accepted while queued; a name that is neither loaded nor queued is still refused.
    let id = h
        .start_task("probe", &json!({"op": "log", "text": "bg"}).to_string())
        .expect("a queued specialist is accepted");
    let unknown = h
        .start_task("nobody", "x")
        .expect_err("not configured")
        .to_string();
    assert!(unknown.contains("unknown specialist 'nobody'"), "{unknown}");
    let batch = tokio::spawn({
        let h = h.clone();
        async move {
            let tasks = [
                guild_host::TaskRequest::new("textstats", "one two three"),
                guild_host::TaskRequest::new(
                    "probe",
                    json!({"op": "log", "text": "b"}).to_string(),
                ),
            ];
            h.session().batch(&tasks).await
        }
    });
    drop(held);
    let record = h.wait_task(&id).await.expect("background task ends");
    assert_eq!(
        record.status,
        guild_host::background::BackgroundStatus::Succeeded,
        "{record:?}"
    );
    let items = batch.await.expect("joins").expect("batch runs");
    for item in items {
        let result = item.result.expect("each child starts");
        assert_eq!(
            result.status,
            guild_host::types::TaskStatus::Succeeded,
            "{result:?}"
        );
    }
    assert!(h.all_loaded().await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delegated_child_on_a_queued_specialist_moves_it_to_the_front_and_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    // One component, three plugins: in config order, the worker is queued last.
    let plugins: Vec<String> = [
        ("boss", "delegate = [\"worker\"]"),
        ("leaf", ""),
        ("worker", ""),
    ]
    .into_iter()
    .map(|(name, caps)| {
        crate::delegation::specialist(dir.path(), name, caps)
            .display()
            .to_string()
    })
    .collect();
    let Cold {
        h,
        held,
        _no_cranelift,
        ..
    } = cold_start(
        dir.path(),
        &plugins,
        "[grants.boss]\ndelegate = [\"worker\"]\n",
    )
    .await;
    let gate = h.deferred_gate();
    let steps = json!({"steps": [{"op": "run", "brief": {
        "specialist": "worker",
        "objective": "Check the tracker for open incidents",
        "reason": "The weekly summary needs them",
        "completion_criteria": ["every open incident is listed"],
        "context": {"report": {"summary": "listed 3 incidents"}},
    }}]});
    let task = tokio::spawn({
        let h = h.clone();
        async move { h.task("boss", &steps.to_string()).await }
    });
    until_first(&h, "boss").await;
    assert_eq!(h.queued(), ["boss", "leaf", "worker"]);
    // Let the loader take the boss only, then hold it before the next plugin.
    drop(held);
    let held = loop {
        let held = gate.lock().await;
        if !h.deferred_order().is_empty() {
            break held;
        }
        drop(held);
        tokio::task::yield_now().await;
    };
    assert_eq!(h.deferred_order(), ["boss"]);
    // The boss runs and delegates to the worker, still queued: the child's task moves it.
    until_first(&h, "worker").await;
    drop(held);
    let done = task.await.expect("joins").expect("the boss's task starts");
    let details: serde_json::Value =
        serde_json::from_str(&done.report.as_ref().expect("the boss reports").details)
            .expect("details are JSON");
    assert_eq!(details[0]["ok"], json!(true), "{details}");
    assert_eq!(
        details[0]["summary"],
        json!("listed 3 incidents"),
        "{details}"
    );
    h.all_loaded().await;
    assert_eq!(h.deferred_order(), ["boss", "worker", "leaf"]);
}

/// A task whose time runs out while its specialist still compiles ends `timed_out`, as any
/// task whose time runs out, naming what was still loading; no instance started. The same
/// task once the plugin is in runs to the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_time_runs_out_while_its_specialist_compiles_is_timed_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Cold {
        h,
        held,
        _no_cranelift,
        ..
    } = cold_start(
        dir.path(),
        &folders(&["testing/probe"]),
        "[dispatch]\ntask_timeout_s = 1\n",
    )
    .await;
    let brief = json!({"op": "log", "text": "x"}).to_string();
    let r = h
        .task("probe", &brief)
        .await
        .expect("a result, not a refusal");
    assert_eq!(r.status, guild_host::types::TaskStatus::TimedOut, "{r:?}");
    let error = r.error.as_deref().unwrap_or_default();
    assert!(
        error.contains("timed out before it started") && error.contains("probe still loaded"),
        "{error}"
    );
    assert!(r.tool_calls.is_empty() && r.report.is_none(), "{r:?}");
    drop(held);
    h.all_loaded().await;
    let r = h.task("probe", &brief).await.expect("task");
    assert_eq!(r.status, guild_host::types::TaskStatus::Succeeded, "{r:?}");
}

//! Support for the workspace integration tests: where the built plugins are, one shared engine
//! (so each component compiles once per test run), hosts built from inline `guild.toml` text,
//! and the probe specialist's JSON protocol; [`wasm_bytes`] writes components by hand.
//!
//! The plugins are real components built by `plugins/build.sh`; nothing here fakes a plugin.

pub mod bench_tracker;
pub mod wasm_bytes;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use guild_host::types::{TaskResult, TaskStatus};
use guild_host::{Config, EngineOptions, GuildEngine, Host};
use serde_json::Value;

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// `FILE:LINE` of the one line of `plugins/REL` that contains `needle`, for errors that name
/// where a plugin's source made a call. The file is named as its kit names it: `REL`'s path
/// relative to `under` (its folder in plugins/, or plugins/ itself for a Rust workspace member).
pub fn source_line(under: &str, rel: &str, needle: &str) -> String {
    let path = repo_root().join("plugins").join(under).join(rel);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let lines: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, line)| line.contains(needle))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(
        lines.len(),
        1,
        "`{needle}` in {}: {lines:?}",
        path.display()
    );
    format!("{rel}:{}", lines[0])
}

/// Folder of a built plugin, checking that the component its manifest names exists.
pub fn plugin_dir(rel: &str) -> PathBuf {
    let dir = repo_root().join("plugins").join(rel);
    let wasm = match guild_host::manifest::Manifest::load(&dir) {
        Ok(manifest) => manifest.component_path(),
        Err(_) => {
            let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            dir.join(format!("{name}.wasm"))
        }
    };
    assert!(
        wasm.is_file(),
        "{} is missing: run plugins/build.sh before the tests (the README's test command does)",
        wasm.display()
    );
    dir
}

/// One engine for the whole test binary, with its disk cache under target/.
pub fn engine() -> GuildEngine {
    static ENGINE: OnceLock<GuildEngine> = OnceLock::new();
    ENGINE
        .get_or_init(|| {
            GuildEngine::new(EngineOptions {
                cache_dir: Some(repo_root().join("target").join("guild-test-cache")),
                ..EngineOptions::default()
            })
            .expect("engine starts")
        })
        .clone()
}

/// One engine for the whole test binary that compiles with Winch, wasmtime's baseline compiler,
/// with its own disk cache under target/.
pub fn baseline_engine() -> GuildEngine {
    static ENGINE: OnceLock<GuildEngine> = OnceLock::new();
    ENGINE
        .get_or_init(|| {
            GuildEngine::new(EngineOptions {
                cache_dir: Some(repo_root().join("target").join("guild-test-cache-baseline")),
                compiler: guild_host::Compiler::Baseline,
                ..EngineOptions::default()
            })
            .expect("baseline engine starts")
        })
        .clone()
}

/// A host loading `plugins` (paths under plugins/) with the given grants (TOML text of
/// `[grants.*]` tables), with relative paths resolved against `dir`.
pub async fn host(dir: &Path, plugins: &[&str], grants: &str) -> Host {
    let host = host_with_config(dir, plugins, grants).await;
    assert!(
        host.load_errors().is_empty(),
        "load errors: {:?}",
        host.load_errors()
    );
    host
}

/// A host loading `plugins` with extra `guild.toml` text (tables such as `[dispatch]`,
/// `[skills]`, `[grants.*]`) after `[host]`; load errors are allowed (tests inspect them).
pub async fn host_with_config(dir: &Path, plugins: &[&str], extra: &str) -> Host {
    host_on(engine(), dir, plugins, extra).await
}

/// [`host_with_config`] on `engine`.
pub async fn host_on(engine: GuildEngine, dir: &Path, plugins: &[&str], extra: &str) -> Host {
    let list: Vec<String> = plugins
        .iter()
        .map(|p| format!("{:?}", plugin_dir(p).display().to_string()))
        .collect();
    let text = format!(
        "[host]\nplugins = [{}]\ndata_dir = \".guild\"\n\n{extra}",
        list.join(", ")
    );
    let config = Config::parse(&text, &dir.join("guild.toml"), dir).expect("test config parses");
    Host::with_engine(config, engine)
        .await
        .expect("host starts")
}

/// What the probe specialist answered for one operation.
#[derive(Debug)]
pub struct Probe {
    /// The whole task result.
    pub result: TaskResult,
    /// `ok` of the probe's answer (false when the task itself failed).
    pub ok: bool,
    /// `value` of the answer.
    pub value: Value,
    /// `error` of the answer, or the task's error.
    pub error: String,
}

/// Runs the probe specialist with one JSON operation.
pub async fn probe(host: &Host, op: Value) -> Probe {
    let result = host
        .task("probe", &op.to_string())
        .await
        .expect("probe task starts");
    let Some(report) = &result.report else {
        return Probe {
            ok: false,
            value: Value::Null,
            error: result.error.clone().unwrap_or_default(),
            result,
        };
    };
    let answer: Value = serde_json::from_str(&report.details).unwrap_or(Value::Null);
    Probe {
        ok: answer["ok"].as_bool().unwrap_or(false),
        value: answer["value"].clone(),
        error: answer["error"].as_str().unwrap_or_default().to_owned(),
        result,
    }
}

/// Asserts that a probe operation was refused with a `denied:` error naming `what`.
pub fn assert_denied(p: &Probe, what: &str) {
    assert_eq!(
        p.result.status,
        TaskStatus::Succeeded,
        "task itself failed: {:?}",
        p.result.error
    );
    assert!(!p.ok, "expected a refusal, got {:?}", p.value);
    assert!(p.error.contains("denied"), "not a denial: {}", p.error);
    assert!(
        p.error.contains(what),
        "denial does not name {what:?}: {}",
        p.error
    );
}

/// Median of timing samples (benchmarks).
pub fn median(mut samples: Vec<std::time::Duration>) -> std::time::Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

/// Writes `message` and a newline to a JSON-lines peer with one `write` (benchmarks' clients).
/// `writeln!` on an unbuffered pipe or socket issues a `write` per formatted piece, a JSON
/// value's every token: 40 system calls for one MCP request, each waking the reader, measured
/// as part of the server's round trip.
pub fn write_line<W: std::io::Write + ?Sized>(
    out: &mut W,
    message: &impl std::fmt::Display,
) -> std::io::Result<()> {
    let mut line = message.to_string();
    line.push('\n');
    out.write_all(line.as_bytes())?;
    out.flush()
}

/// One bare durable append at a time in a file of its own: 4 KiB written at the end, then
/// `fsync` (what SQLite's WAL does per commit with `synchronous=FULL`, without SQLite). The
/// floor under any durable commit on that disk, for benchmarks to read their rows against; time
/// it interleaved with the rows it is the floor of, as the disk's fsync time moves by several
/// times with other writers.
pub struct BareFsync {
    file: std::fs::File,
    path: std::path::PathBuf,
}

impl BareFsync {
    /// A new, empty file in `dir` (removed on drop).
    pub fn new(dir: &std::path::Path) -> Self {
        let path = dir.join(format!("bare-fsync-{}.bin", std::process::id()));
        let file = std::fs::File::create(&path).expect("bare fsync file");
        Self { file, path }
    }

    /// Appends 4 KiB and fsyncs; returns how long that took.
    pub fn once(&mut self) -> std::time::Duration {
        use std::io::Write;
        let t = std::time::Instant::now();
        self.file.write_all(&[7u8; 4096]).expect("append");
        self.file.sync_all().expect("fsync");
        t.elapsed()
    }
}

impl Drop for BareFsync {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Median time of `f` over `iters` runs, after `warmup` unmeasured runs (benchmarks).
pub fn time_median<F: FnMut()>(iters: usize, warmup: usize, mut f: F) -> std::time::Duration {
    for _ in 0..warmup {
        f();
    }
    median(
        (0..iters)
            .map(|_| {
                let t = std::time::Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

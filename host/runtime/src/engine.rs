//! The wasmtime engine, its epoch ticker and the compile cache.
//!
//! One [`GuildEngine`] serves every plugin of a host (and may be shared by several hosts in one
//! process, as the test suite does). Compilation happens only here, when a plugin is loaded,
//! never on the request path, and only from a `.wasm` component: precompiled artifacts shipped
//! by a plugin are refused. Compiled code is cached in memory (per process) and on disk in a
//! host-owned folder keyed by the component's sha256 and the engine's compatibility hash, so a
//! restart does not recompile. Disk entries are bound to their component and authenticated
//! before anything is deserialised ([`cache`]). With a compile helper, Cranelift runs in a child
//! process under a time and memory ceiling and its result comes back through that same cache
//! ([`helper`]). A refusal (too slow, too big, invalid, over a per-component limit) is remembered
//! in the same folder, keyed by the limits in force, so it costs nothing the next time
//! ([`refusal`]).
//!
//! An engine compiles with Cranelift or with Winch ([`Compiler`]); a Cranelift engine may carry
//! the Winch engine of a baseline tier, whose entries sit in the same cache under its own
//! engine key (`crate::tier`). A background compile runs at a lower priority on fewer threads
//! ([`background`]).

mod background;
mod cache;
mod helper;
mod refusal;
mod settings;

pub use background::lower_priority;
pub use settings::Compiler;
pub(crate) use settings::{POOL_LIMITS, PoolLimits};

pub use helper::{COMPILE_COMMAND, CompileHelper};

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

/// How often the epoch advances. Deadlines are expressed in ticks of this length.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Engine construction options.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// Use the pooling instance allocator (default true). Fresh instances per task are cheap
    /// only with pooling; turning it off exists for benchmarks.
    pub pooling: bool,
    /// On-disk compile cache folder; `None` disables the disk cache. Its authentication key
    /// lives next to it (`<cache_dir>.key`), so neither may be inside anything grantable.
    pub cache_dir: Option<PathBuf>,
    /// Largest linear memory any plugin may grow to, MiB (a pool slot size).
    pub max_memory_mb: u32,
    /// Compile in a child process under a time and memory ceiling (needs `cache_dir`, where the
    /// child leaves its result); `None` compiles in this process.
    pub compile_helper: Option<CompileHelper>,
    /// Which compiler this engine compiles with (default: Cranelift, optimising).
    pub compiler: Compiler,
    /// With Cranelift: also keep a Winch engine, so that a component with no optimized
    /// artifact in a cache is usable at once while Cranelift compiles it in the background
    /// (`[host] baseline_tier`; [`crate::Runtime::optimize`]). Default false.
    pub baseline_tier: bool,
}

impl Default for EngineOptions {
    fn default() -> Self {
        Self {
            pooling: true,
            cache_dir: None,
            max_memory_mb: 512,
            compile_helper: None,
            compiler: Compiler::Optimizing,
            baseline_tier: false,
        }
    }
}

/// Where a compiled component came from (for start-up reports and benchmarks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompileSource {
    /// Compiled earlier in this process.
    Memory,
    /// Deserialised from the disk cache.
    Disk,
    /// Compiled now with Cranelift.
    Compiled,
}

/// A compiled component and its identity.
#[derive(Clone)]
pub(crate) struct Compiled {
    /// The component.
    pub(crate) component: Component,
    /// Hex sha256 of the `.wasm` bytes.
    pub sha256: String,
    /// Where it came from.
    pub source: CompileSource,
}

/// Why [`GuildEngine::new`] could not build an engine.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// wasmtime refused the configuration (e.g. the pooling allocator could not reserve its
    /// address space under this process's limits).
    #[error("wasmtime refused the engine configuration: {0}")]
    Config(String),
    /// The thread that interrupts long-running guests (the epoch ticker) could not start.
    #[error("could not start the epoch ticker thread: {0}")]
    Ticker(#[source] std::io::Error),
}

/// Why a component could not be compiled.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// The file could not be read.
    #[error("cannot read: {0}")]
    Io(String),
    /// Not a WebAssembly component (with a hint of what it is).
    #[error("{0}")]
    NotAComponent(String),
    /// Cranelift or validation refused it.
    #[error("does not compile: {0}")]
    Invalid(String),
    /// It needs more than one of this host's per-component limits (core instances, memories,
    /// tables, memory size); the message names the limit.
    #[error("is over a limit of this host: {0}")]
    OverLimit(String),
    /// The compiling child ran past its deadline and was killed.
    #[error(
        "compiling took longer than {0} s and was stopped; raise [host] compile_timeout_s if the component is trusted"
    )]
    TimedOut(u64),
    /// The compiling child ran out of its address space.
    #[error(
        "compiling needed more than {0} MiB of memory and was stopped; raise [host] compile_memory_mb if the component is trusted"
    )]
    OutOfMemory(u32),
    /// The compile helper could not be run or gave no usable result.
    #[error("compile helper: {0}")]
    Helper(String),
}

/// The shared engine plus caches. Cheap to clone.
#[derive(Clone)]
pub struct GuildEngine {
    inner: Arc<EngineInner>,
}

struct EngineInner {
    engine: Engine,
    options: EngineOptions,
    disk_cache: Option<cache::DiskCache>,
    memory_cache: Mutex<HashMap<String, Component>>,
    /// Key of the limits a refusal is remembered under ([`refusal::limits_key`]).
    limits_key: String,
    ticker_stop: Arc<AtomicBool>,
    /// The Winch engine of a baseline tier ([`EngineOptions::baseline_tier`]).
    baseline: Option<GuildEngine>,
    /// Components this engine compiled (not found in a cache), for tests and reports.
    compiles: AtomicU64,
    /// Held by the one background compile running ([`GuildEngine::optimizer`]).
    optimizer: Arc<tokio::sync::Mutex<()>>,
}

impl Drop for EngineInner {
    fn drop(&mut self) {
        self.ticker_stop.store(true, Ordering::Relaxed);
    }
}

impl GuildEngine {
    /// Builds an engine: its compiler (Cranelift unless told otherwise), async, epoch
    /// interruption driven by a ticker thread, the pooling allocator (unless turned off), and
    /// only the wasm proposals plugins need; with [`EngineOptions::baseline_tier`], also the
    /// Winch engine of that tier (same options, its own pool and ticker).
    pub fn new(options: EngineOptions) -> Result<Self, EngineError> {
        let baseline = match (options.baseline_tier, options.compiler) {
            (true, Compiler::Optimizing) => Some(GuildEngine::new(EngineOptions {
                compiler: Compiler::Baseline,
                baseline_tier: false,
                ..options.clone()
            })?),
            _ => None,
        };
        let config =
            settings::wasmtime_config(options.compiler, options.pooling, options.max_memory_mb);
        let engine = Engine::new(&config).map_err(|e| EngineError::Config(format!("{e:#}")))?;
        let mut hasher = DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        let engine_key = format!("{:016x}", hasher.finish());
        // The disk cache is an optimisation: without a usable key, compile every time.
        let disk_cache = options.cache_dir.clone().and_then(|dir| {
            cache::DiskCache::open(dir, &engine_key)
                .inspect_err(|e| tracing::warn!("compile cache disabled: {e:#}"))
                .ok()
        });

        let ticker_stop = Arc::new(AtomicBool::new(false));
        let stop = ticker_stop.clone();
        let ticking = engine.clone();
        std::thread::Builder::new()
            .name("guild-epoch".into())
            .spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(EPOCH_TICK);
                    ticking.increment_epoch();
                }
            })
            .map_err(EngineError::Ticker)?;
        Ok(Self {
            inner: Arc::new(EngineInner {
                engine,
                limits_key: refusal::limits_key(&options),
                options,
                disk_cache,
                memory_cache: Mutex::new(HashMap::new()),
                ticker_stop,
                baseline,
                compiles: AtomicU64::new(0),
                optimizer: Arc::new(tokio::sync::Mutex::new(())),
            }),
        })
    }

    /// The wasmtime engine.
    pub(crate) fn engine(&self) -> &Engine {
        &self.inner.engine
    }

    /// Options this engine was built with.
    pub fn options(&self) -> &EngineOptions {
        &self.inner.options
    }

    /// The Winch engine of this engine's baseline tier, if it has one.
    pub fn baseline(&self) -> Option<&GuildEngine> {
        self.inner.baseline.as_ref()
    }

    /// How many components this engine compiled in this process (a cache hit is not a compile).
    pub fn compiles(&self) -> u64 {
        self.inner.compiles.load(Ordering::Relaxed)
    }

    /// The lock every background compile holds while it runs, so they run one at a time.
    /// Holding it (`lock().await`) keeps them waiting: tests use that to see a host serve
    /// baseline code before its optimized compile finishes.
    pub fn optimizer(&self) -> Arc<tokio::sync::Mutex<()>> {
        self.inner.optimizer.clone()
    }

    /// The compiled component for these bytes when the memory or the disk cache has it;
    /// nothing is compiled.
    pub(crate) fn cached(&self, bytes: &[u8], digest: &[u8; 32]) -> Option<Compiled> {
        check_component_bytes(bytes).ok()?;
        let sha256 = hex::encode(digest);
        if let Some(component) = self.lock_cache().get(&sha256).cloned() {
            return Some(Compiled {
                component,
                sha256,
                source: CompileSource::Memory,
            });
        }
        let component = self.load_cached(digest, &sha256)?;
        self.lock_cache().insert(sha256.clone(), component.clone());
        Some(Compiled {
            component,
            sha256,
            source: CompileSource::Disk,
        })
    }

    /// [`compile_digested`](Self::compile_digested) at a lower priority, on fewer threads than
    /// the machine has cores, so that tasks keep a core while it runs ([`background`]).
    pub(crate) fn compile_in_background(
        &self,
        bytes: &[u8],
        digest: &[u8; 32],
    ) -> Result<Compiled, CompileError> {
        background::run(|| self.compile_digested(bytes, digest))
    }

    /// Compiles (or fetches from a cache) the component at `path` without loading it, and says
    /// where the compiled code came from (cache warm-up, benchmarks, tests).
    pub fn warm(&self, path: &Path) -> Result<CompileSource, CompileError> {
        let bytes = std::fs::read(path).map_err(|e| CompileError::Io(e.to_string()))?;
        self.compile(&bytes).map(|c| c.source)
    }

    /// Compiles (or fetches from a cache) these component bytes, the very bytes the caller
    /// holds (a bundle install passes the ones it verified, never read again from disk), and
    /// says where the compiled code came from. The cache entry is keyed by their sha256, so a
    /// later load of the same bytes from a file finds it.
    pub fn warm_bytes(&self, bytes: &[u8]) -> Result<CompileSource, CompileError> {
        self.compile(bytes).map(|c| c.source)
    }

    /// A plain wasmtime artifact of the component at `path`, without the cache's trailer and
    /// tag: only for tests that prove such an artifact is refused.
    #[doc(hidden)]
    pub fn plain_artifact(&self, path: &Path) -> Result<Vec<u8>, CompileError> {
        // Compiled afresh: a component loaded from the cache maps the whole entry file, and
        // its `serialize` would hand back the authenticated entry, trailer included.
        let bytes = std::fs::read(path).map_err(|e| CompileError::Io(e.to_string()))?;
        check_component_bytes(&bytes)?;
        Component::new(&self.inner.engine, &bytes)
            .and_then(|c| c.serialize())
            .map_err(|e| refused(e, self.inner.options.max_memory_mb))
    }

    /// Compiles (or fetches from cache) component bytes.
    pub(crate) fn compile(&self, bytes: &[u8]) -> Result<Compiled, CompileError> {
        self.compile_digested(bytes, &Sha256::digest(bytes).into())
    }

    /// Compiles (or fetches from cache) component bytes whose sha256 the caller computed
    /// (a load hashes the file once, to compare it with the version serving).
    pub(crate) fn compile_digested(
        &self,
        bytes: &[u8],
        digest: &[u8; 32],
    ) -> Result<Compiled, CompileError> {
        check_component_bytes(bytes)?;
        let digest = *digest;
        let sha256 = hex::encode(digest);
        if let Some(component) = self.lock_cache().get(&sha256).cloned() {
            return Ok(Compiled {
                component,
                sha256,
                source: CompileSource::Memory,
            });
        }
        let limits = self.inner.limits_key.as_str();
        if let Some(cache) = &self.inner.disk_cache
            && let Some((error, file)) = refusal::remembered(cache, &digest, &sha256, limits)
        {
            tracing::info!(
                file = %file.display(),
                "refused without compiling: these bytes were refused under the same limits \
                 before (delete the file to compile them again)"
            );
            return Err(error);
        }
        let mut source = CompileSource::Compiled;
        let component = match self.load_cached(&digest, &sha256) {
            Some(c) => {
                source = CompileSource::Disk;
                c
            }
            None => match self.compile_new(bytes, &digest, &sha256) {
                Ok(c) => c,
                Err(e) => {
                    if let Some(cache) = &self.inner.disk_cache {
                        refusal::remember(cache, &digest, &sha256, limits, &e);
                    }
                    return Err(e);
                }
            },
        };
        self.lock_cache().insert(sha256.clone(), component.clone());
        Ok(Compiled {
            component,
            sha256,
            source,
        })
    }

    /// Compiles with this engine's compiler: in the compile helper when there is one (its
    /// result read back through the authenticated disk cache), in this process otherwise.
    fn compile_new(
        &self,
        bytes: &[u8],
        digest: &[u8; 32],
        sha256: &str,
    ) -> Result<Component, CompileError> {
        let options = &self.inner.options;
        self.inner.compiles.fetch_add(1, Ordering::Relaxed);
        if let (Some(helper), Some(cache)) = (&options.compile_helper, &self.inner.disk_cache) {
            let child = helper::Child {
                cache_dir: cache.dir(),
                max_memory_mb: options.max_memory_mb,
                compiler: options.compiler,
                background: background::active(),
            };
            helper::compile_in_child(helper, &child, bytes)?;
            return match self.read_entry(digest, sha256) {
                Ok(Some(c)) => Ok(c),
                // The child compiles without the pool; the pool's limits apply only here.
                Err(e) if over_limit(&format!("{e:#}")) => {
                    let _ = std::fs::remove_file(cache.entry(sha256));
                    Err(over_limit_error(&format!("{e:#}"), options.max_memory_mb))
                }
                Err(e) => Err(CompileError::Helper(format!(
                    "its result could not be loaded: {e:#}"
                ))),
                Ok(None) => Err(CompileError::Helper(
                    "its result is not an authentic cache entry for this component".into(),
                )),
            };
        }
        let c = Component::new(&self.inner.engine, bytes)
            .map_err(|e| refused(e, options.max_memory_mb))?;
        if let Some(cache) = &self.inner.disk_cache {
            let file = cache.entry(sha256);
            let written = c
                .serialize()
                .map_err(wasm_err)
                .and_then(|artifact| cache.write(&file, digest, &artifact, cache::Kind::Artifact));
            if let Err(e) = written {
                tracing::warn!(file = %file.display(), "failed to write compile cache: {e:#}");
            }
        }
        Ok(c)
    }

    /// The compile helper's side: compiles `bytes` and writes them into the disk cache, failing
    /// if it cannot (the parent reads the result from there).
    fn compile_into_cache(&self, bytes: &[u8]) -> Result<(), CompileError> {
        check_component_bytes(bytes)?;
        let cache = self
            .inner
            .disk_cache
            .as_ref()
            .ok_or_else(|| CompileError::Helper("no usable compile cache folder".into()))?;
        let digest: [u8; 32] = Sha256::digest(bytes).into();
        let component = Component::new(&self.inner.engine, bytes)
            .map_err(|e| refused(e, self.inner.options.max_memory_mb))?;
        component
            .serialize()
            .map_err(wasm_err)
            .and_then(|artifact| {
                let file = cache.entry(&hex::encode(digest));
                cache.write(&file, &digest, &artifact, cache::Kind::Artifact)
            })
            .map_err(|e| CompileError::Helper(format!("{e:#}")))
    }

    fn lock_cache(&self) -> std::sync::MutexGuard<'_, HashMap<String, Component>> {
        // A poisoned cache only means another thread panicked mid-insert; the map is still valid.
        self.inner
            .memory_cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// The disk cache's component for these `.wasm` bytes, if there is an authentic entry.
    fn load_cached(&self, digest: &[u8; 32], sha256: &str) -> Option<Component> {
        self.read_entry(digest, sha256)
            .inspect_err(|e| tracing::warn!(sha256, "ignoring unusable cache entry: {e:#}"))
            .ok()
            .flatten()
    }

    /// The disk cache's component for these `.wasm` bytes: `None` without an authentic entry
    /// (a forged or broken one is deleted), an error when an authentic entry does not load here
    /// (e.g. it is over a limit of the pool).
    fn read_entry(&self, digest: &[u8; 32], sha256: &str) -> anyhow::Result<Option<Component>> {
        let Some(cache) = self.inner.disk_cache.as_ref() else {
            return Ok(None);
        };
        let file = cache.entry(sha256);
        let verified = match cache.read(&file, digest, cache::Kind::Artifact) {
            Ok(Some(verified)) => verified,
            Ok(None) => return Ok(None),
            Err(e) => {
                tracing::warn!(file = %file.display(), "discarding compile cache entry: {e}");
                let _ = std::fs::remove_file(&file);
                return Ok(None);
            }
        };
        deserialize_verified(&self.inner.engine, verified)
            .with_context(|| format!("failed to load {}", file.display()))
            .map(Some)
    }
}

/// Deserialises an entry the cache verified, from the file it verified (never by its path
/// again): mapped in place through `/proc/self/fd` where there is one, read into memory
/// otherwise.
#[allow(unsafe_code)]
fn deserialize_verified(engine: &Engine, verified: cache::Verified) -> anyhow::Result<Component> {
    // SAFETY (both calls): the cache returned this open file only after its keyed BLAKE3 tag
    // verified under the host's own key (kept outside anything grantable) and its authenticated
    // trailer named exactly these component bytes and this engine: it is what this host
    // serialised from this `.wasm`. Reading through the open descriptor means a rename after
    // the check cannot substitute another file; changing it in place needs write access to
    // the host's private (0600) cache entries, which is the host's own user. wasmtime
    // additionally checks the artifact against the engine. Plugin-supplied artifacts never
    // reach here.
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let path = format!("/proc/self/fd/{}", verified.file.as_raw_fd());
        if Path::new(&path).exists() {
            return unsafe { Component::deserialize_file(engine, &path) }.map_err(wasm_err);
        }
    }
    // Verifying read the file to its end: the artifact is at its start.
    std::io::Seek::seek(&mut &verified.file, std::io::SeekFrom::Start(0))
        .context("failed to rewind the verified cache entry")?;
    let mut artifact = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(&verified.file, verified.artifact_len),
        &mut artifact,
    )
    .context("failed to read the verified cache entry")?;
    unsafe { Component::deserialize(engine, &artifact) }.map_err(wasm_err)
}

/// The hidden compile command (run by [`CompileHelper`]): limits its own address space to
/// `limit_memory_mb`, reads a component from stdin, compiles it with an engine configured like
/// the parent's (but without the pool, whose reservations the limit would refuse) and leaves
/// the result in the disk cache at `cache_dir`. An `Invalid` error means the component was
/// refused; the caller exits with code 2 for it.
///
/// `compiler` is the parent engine's; a `background` compile lowers its own priority first.
pub fn compile_command(
    cache_dir: PathBuf,
    max_memory_mb: u32,
    limit_memory_mb: u32,
    compiler: Compiler,
    background: bool,
) -> Result<(), CompileError> {
    if background {
        background::lower_priority();
    }
    #[cfg(unix)]
    {
        use rustix::process::{Resource, Rlimit, setrlimit};
        let bytes = u64::from(limit_memory_mb) * 1024 * 1024;
        let limit = Rlimit {
            current: Some(bytes),
            maximum: Some(bytes),
        };
        setrlimit(Resource::As, limit)
            .map_err(|e| CompileError::Helper(format!("cannot limit its memory: {e}")))?;
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut bytes)
        .map_err(|e| CompileError::Io(e.to_string()))?;
    let engine = GuildEngine::new(EngineOptions {
        pooling: false,
        cache_dir: Some(cache_dir),
        max_memory_mb,
        compile_helper: None,
        compiler,
        baseline_tier: false,
    })
    .map_err(|e| CompileError::Helper(format!("{e:#}")))?;
    engine.compile_into_cache(&bytes)
}

/// Converts wasmtime's own error type into `anyhow` for glue code.
pub(crate) fn wasm_err(e: wasmtime::Error) -> anyhow::Error {
    anyhow::Error::from_boxed(e.into_boxed_dyn_error())
}

/// Whether wasmtime's message says the component does not fit the pool's limits.
fn over_limit(message: &str) -> bool {
    message.contains("pooling allocator")
}

/// The refusal of a component over a per-component limit: wasmtime's text names the count and
/// the limit it exceeds; the host's limits follow.
fn over_limit_error(message: &str, max_memory_mb: u32) -> CompileError {
    let PoolLimits {
        core_instances,
        memories,
        tables,
        memories_per_module,
        tables_per_module,
    } = POOL_LIMITS;
    let reason = message
        .rsplit(": ")
        .find(|part| part.contains("exceeds") || part.contains("maximum"))
        .unwrap_or(message);
    CompileError::OverLimit(format!(
        "{reason} (a component may have at most {core_instances} core instances, {memories} \
         memories and {tables} tables, each core module at most {memories_per_module} memory and \
         {tables_per_module} table, and a memory at most {max_memory_mb} MiB)"
    ))
}

/// A component Cranelift or the validator refused, with the fix for the refusals authors meet.
fn refused(e: wasmtime::Error, max_memory_mb: u32) -> CompileError {
    let message = format!("{e:#}");
    if over_limit(&message) {
        return over_limit_error(&message, max_memory_mb);
    }
    // jco's QuickJS engine (and any toolchain emitting async exports) uses the component
    // model's async ABI, which this host leaves out: it costs every task (README, Performance).
    let fix = if message.contains("requires the component model async feature") {
        "; this component uses the component model's async ABI, which this host does not \
         enable: rebuild it without async exports (JavaScript: build with the default \
         StarlingMonkey engine, i.e. without `--backend quickjs`)"
    } else {
        ""
    };
    CompileError::Invalid(format!("{message}{fix}"))
}

/// Refuses anything that is not a component binary before Cranelift sees it, with a hint.
fn check_component_bytes(bytes: &[u8]) -> Result<(), CompileError> {
    const COMPONENT: [u8; 8] = [0x00, b'a', b's', b'm', 0x0d, 0x00, 0x01, 0x00];
    const MODULE: [u8; 8] = [0x00, b'a', b's', b'm', 0x01, 0x00, 0x00, 0x00];
    if bytes.len() >= 8 && bytes[..8] == COMPONENT {
        return Ok(());
    }
    let what = if bytes.len() >= 8 && bytes[..8] == MODULE {
        "is a core WebAssembly module, not a component: build for wasm32-wasip2 or wrap it with `wasm-tools component new`"
    } else if bytes.starts_with(b"\x7fELF") {
        "is a native or precompiled artifact; only .wasm components are accepted and the host compiles them itself"
    } else if bytes.starts_with(b"\0asm") {
        "is WebAssembly of an unsupported version or layer"
    } else if bytes.is_empty() {
        "is empty"
    } else {
        "is not WebAssembly (no \\0asm header)"
    };
    Err(CompileError::NotAComponent(what.to_owned()))
}

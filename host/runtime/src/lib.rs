//! Guild's runtime: the only crate that knows wasmtime.
//!
//! It owns the engine and compile cache ([`engine`]), the generated bindings, one linker per
//! plugin world, per-instance store state (a deny-by-default WASI context, the memory limiter,
//! the instance's effective capabilities, the guarded HTTP client and, for a specialist, the
//! [`TaskHost`] of the task it serves), and the host side of every plugin-facing interface.
//!
//! Callers see plain types: a [`Plugin`] is a compiled, pre-instantiated plugin version; each
//! call ([`Runtime::run_specialist`], [`Runtime::connector_call`], …) runs in a fresh instance
//! under the plugin's limits and ends it afterwards. No wasmtime type crosses this crate's API.

mod bindings;
mod caps;
mod component_file;
mod delegate_impl;
pub mod engine;
mod fs_quota;
mod host_impl;
mod imports;
mod instance;
mod limiter;
mod llm_impl;
mod loader;
mod memory_impl;
mod plugin;
mod skills_impl;
mod state;
mod stdio;
mod task;
mod tier;
mod wasi_http;

use std::sync::Arc;

use guild_http::GuardedClient;

pub use component_file::{ComponentFile, FileStamp};
pub use engine::{
    COMPILE_COMMAND, CompileError, CompileHelper, CompileSource, Compiler, EngineError,
    EngineOptions, GuildEngine, compile_command,
};
pub use instance::{Failure, InstanceStats, RunAnswer};
pub use loader::Answer as LoaderAnswer;
pub use plugin::{Plugin, PrepareError};
pub use task::{
    ChildReport, DelegateError, MemoryCallError, MemoryText, MemoryWrite, ReportError,
    SkillSummary, TaskHost,
};

/// Per-instance input/output budgets that come from the operator's `[host]` settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoBudget {
    /// Bytes of guest stdout + stderr forwarded to the log per instance, KiB.
    pub stdio_kb: u32,
    /// Data the guest may pass to the host in one call (`Store::set_hostcall_fuel`), KiB.
    pub hostcall_kb: u32,
    /// Entries (open files, directories, streams, …) one instance's WASI resource table may
    /// hold at once; the next open fails the instance with [`Failure::HandleLimit`].
    pub max_handles: u32,
    /// Refused host calls (denied by the instance's capabilities, or over a limit) one
    /// instance may make; the next one stops it with [`Failure::RefusalLimit`]
    /// (`[dispatch] max_tool_calls`).
    pub max_refused_calls: u32,
}

/// The engine, the linkers and the services every instance may use. Cheap to clone.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

struct Inner {
    engine: GuildEngine,
    linkers: plugin::Linkers,
    /// The linkers of the engine's baseline tier, if it has one.
    baseline_linkers: Option<plugin::Linkers>,
    http: GuardedClient,
    io: IoBudget,
}

impl Runtime {
    /// Links the host interfaces for every world on `engine`.
    pub fn new(
        engine: GuildEngine,
        http: GuardedClient,
        io: IoBudget,
    ) -> Result<Self, PrepareError> {
        let linkers = plugin::Linkers::new(&engine)?;
        let baseline_linkers = engine.baseline().map(plugin::Linkers::new).transpose()?;
        Ok(Self {
            inner: Arc::new(Inner {
                engine,
                linkers,
                baseline_linkers,
                http,
                io,
            }),
        })
    }

    /// The engine (to share it, and its caches, with another host).
    pub fn engine(&self) -> &GuildEngine {
        &self.inner.engine
    }

    /// The wasmtime engine whose code `compiler` produced (the baseline tier's for Winch).
    pub(crate) fn wasm_engine(&self, compiler: Compiler) -> &wasmtime::Engine {
        match (compiler, self.inner.engine.baseline()) {
            (Compiler::Baseline, Some(baseline)) => baseline.engine(),
            _ => self.inner.engine.engine(),
        }
    }

    /// The linkers of the engine `compiler` produced code for.
    fn linkers(&self, compiler: Compiler) -> &plugin::Linkers {
        match (compiler, &self.inner.baseline_linkers) {
            (Compiler::Baseline, Some(linkers)) => linkers,
            _ => &self.inner.linkers,
        }
    }

    /// The guarded outbound HTTP client every instance uses.
    pub fn http(&self) -> &GuardedClient {
        &self.inner.http
    }

    /// The per-instance I/O budgets.
    pub fn io(&self) -> IoBudget {
        self.inner.io
    }
}

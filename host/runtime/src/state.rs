//! Per-instance store state: one [`StoreState`] per plugin instance, built fresh for every task
//! and every tool call from the plugin's effective capabilities.
//!
//! This is where deny-by-default becomes concrete for WASI: the context starts empty (no env,
//! no args, closed stdin, no preopens, sockets off) and only granted folders are preopened.

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use std::time::{Duration, Instant};

use wasmtime::component::ResourceTable;
use wasmtime::{Store, UpdateDeadline};
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtxView, WasiHttpView};

use guild_core::capability::Effective;
use guild_core::definition::Definition;
use guild_http::redact::Redactor;

use crate::Runtime;
use crate::bindings::types::HostError;
use crate::fs_quota::{FsQuotas, QuotaView};
use crate::limiter::MemoryLimiter;
use crate::plugin::Plugin;
use crate::stdio::{GuestOutput, StderrTail};
use crate::task::TaskHost;
use crate::wasi_http::GuestHttp;

/// Everything a host function may need about the instance that called it.
pub(crate) struct StoreState {
    wasi: WasiCtx,
    table: ResourceTable,
    pub(crate) limiter: MemoryLimiter,
    /// `name@version` of the plugin.
    pub(crate) plugin: Arc<str>,
    /// Plugin name alone.
    pub(crate) name: Arc<str>,
    pub(crate) caps: Arc<Effective>,
    /// Engine, guarded HTTP client and I/O budgets; never the ledger or the registry.
    pub(crate) rt: Runtime,
    /// The task this instance serves (specialists; `None` for connectors and loaders).
    pub(crate) task: Option<Arc<dyn TaskHost>>,
    /// The guest's last stderr lines, shown when it traps.
    pub(crate) stderr_tail: Arc<StderrTail>,
    /// The plugin's granted secrets, redacted from what crosses the guest boundary.
    pub(crate) redactor: Arc<Redactor>,
    /// `wasi:http` requests, sent through the guarded client ([`crate::wasi_http`]).
    http: GuestHttp,
    /// Disk quotas of the read-write folders ([`crate::fs_quota`]).
    fs_quota: FsQuotas,
    /// Host calls refused so far (checked against [`crate::IoBudget::max_refused_calls`]).
    refused: u32,
    /// The memory version this instance last read or stored, per scope: the base of its next
    /// update ([`crate::memory_impl`]).
    pub(crate) memory_bases: MemoryBases,
    /// The plugin's name, `prompt.md` and `[agent]` settings (the `definition` interface).
    pub(crate) definition: Arc<Definition>,
}

/// Why an instance was stopped: it kept making calls the host refuses.
#[derive(Debug, thiserror::Error)]
#[error("made more than {limit} refused host calls")]
pub(crate) struct RefusedTooOften {
    /// The budget (`[dispatch] max_tool_calls`).
    pub(crate) limit: u32,
}

impl StoreState {
    /// Counts one refused host call (denied by the instance's capabilities, or over a limit).
    /// Past the budget the instance is stopped with a trap: a guest that keeps asking for what
    /// it may not have gets its task ended, not an endless stream of cheap refusals.
    pub(crate) fn count_refusal(&mut self) -> wasmtime::Result<()> {
        self.refused = self.refused.saturating_add(1);
        let limit = self.rt.io().max_refused_calls;
        if self.refused > limit {
            return Err(wasmtime::Error::new(RefusedTooOften { limit }));
        }
        Ok(())
    }

    /// `answer`, after counting it when it is a refusal.
    pub(crate) fn counted<T>(
        &mut self,
        answer: Result<T, HostError>,
    ) -> wasmtime::Result<Result<T, HostError>> {
        if matches!(
            answer,
            Err(HostError::Denied(_) | HostError::LimitExceeded(_))
        ) {
            self.count_refusal()?;
        }
        Ok(answer)
    }
}

/// The version of each memory document an instance last read or stored (`None`: none yet).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct MemoryBases {
    team: Option<u64>,
    private: Option<u64>,
}

impl MemoryBases {
    fn slot(&mut self, scope: guild_memory::Scope) -> &mut Option<u64> {
        match scope {
            guild_memory::Scope::Team => &mut self.team,
            guild_memory::Scope::Private => &mut self.private,
        }
    }

    /// The base for an update of `scope`.
    pub(crate) fn get(&mut self, scope: guild_memory::Scope) -> Option<u64> {
        *self.slot(scope)
    }

    /// Records that the instance now holds `version` of `scope`.
    pub(crate) fn set(&mut self, scope: guild_memory::Scope, version: u64) {
        *self.slot(scope) = Some(version);
    }
}

impl StoreState {
    /// The view the quota-enforcing `wasi:filesystem` host functions work on.
    pub(crate) fn fs_quota_view(&mut self) -> QuotaView<'_> {
        QuotaView {
            fs: wasmtime_wasi::filesystem::WasiFilesystemCtxView {
                ctx: self.wasi.filesystem(),
                table: &mut self.table,
            },
            quotas: &mut self.fs_quota,
        }
    }
}

impl WasiView for StoreState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for StoreState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http.ctx,
            hooks: &mut self.http.hooks,
            table: &mut self.table,
        }
    }
}

/// Builds a fresh store for one call of `plugin`.
pub(crate) fn new_store(
    rt: &Runtime,
    plugin: &Plugin,
    task: Option<Arc<dyn TaskHost>>,
) -> anyhow::Result<Store<StoreState>> {
    let (name, caps, redactor) = (&plugin.name, &plugin.effective, &plugin.redactor);

    let mut wasi = WasiCtxBuilder::new();
    // Explicit even where it repeats the defaults: a future wasmtime-wasi default must not
    // widen the sandbox silently.
    wasi.allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false);
    let budget = Arc::new(AtomicUsize::new(rt.io().stdio_kb as usize * 1024));
    let output = |stream| GuestOutput::new(name.clone(), stream, budget.clone(), redactor.clone());
    wasi.stdout(output("stdout"));
    let stderr_tail = Arc::new(StderrTail::default());
    wasi.stderr(output("stderr").with_tail(stderr_tail.clone()));
    // Granted folders are not preopened here: `fs_quota` hands each instance the handles opened
    // once for the plugin version.
    // Bounds the handles one instance can hold, so a leaking guest exhausts its own table and
    // never the host process's file descriptors.
    let mut table = ResourceTable::new();
    table.set_max_capacity(rt.io().max_handles as usize);
    let state = StoreState {
        wasi: wasi.build(),
        table,
        limiter: MemoryLimiter::new(caps.limits.memory_mb as usize * 1024 * 1024),
        plugin: plugin.ident.clone(),
        name: name.clone(),
        caps: caps.clone(),
        rt: rt.clone(),
        task,
        stderr_tail,
        redactor: redactor.clone(),
        http: GuestHttp::new(rt, caps, redactor),
        fs_quota: FsQuotas::new(plugin.quotas.clone()),
        refused: 0,
        memory_bases: MemoryBases::default(),
        definition: plugin.definition.clone(),
    };
    let mut store = Store::new(rt.wasm_engine(plugin.compiler), state);
    store.limiter(|s| &mut s.limiter);
    store.set_hostcall_fuel(rt.io().hostcall_kb as usize * 1024);
    // Every epoch tick (10 ms) the guest yields to the async runtime, so a spinning guest never
    // holds a worker thread and the wall-clock timeout and cancellation stay responsive; once
    // the plugin's budget has passed, the next tick interrupts it with a trap.
    let deadline = Instant::now() + Duration::from_secs(u64::from(caps.limits.timeout_s));
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(move |_| {
        Ok(if Instant::now() >= deadline {
            UpdateDeadline::Interrupt
        } else {
            UpdateDeadline::Yield(1)
        })
    });
    Ok(store)
}

//! The wasm runtime: generated bindings, per-instance store state, limits, and the host side
//! of every plugin-facing interface. wasmtime types stay inside this module.

pub(crate) mod bindings;
mod host_impl;
pub(crate) mod instance;
mod limiter;
pub(crate) mod skill_loader;
mod skills_impl;
pub(crate) mod state;
mod stdio;

pub(crate) use host_impl::{ToolError, truncate_str};
pub use instance::Failure;

use wasmtime::component::Linker;

use crate::engine::{GuildEngine, wasm_err};
use state::StoreState;

/// The one linker every plugin is instantiated against: WASI p2 (deny-by-default context per
/// instance) plus the Guild interfaces. wasi:http and every other import are absent, so a
/// component that needs them fails to load with a clear error instead of escaping the sandbox.
pub(crate) fn linker(engine: &GuildEngine) -> anyhow::Result<Linker<StoreState>> {
    let mut linker = Linker::new(engine.engine());
    wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(wasm_err)?;
    bindings::specialist::Specialist::add_to_linker::<_, wasmtime::component::HasSelf<_>>(
        &mut linker,
        |s| s,
    )
    .map_err(wasm_err)?;
    Ok(linker)
}

//! The bare-wasmtime floor of the dispatch bench: the same two guests (the `probe` specialist and
//! the `echo` connector) run with nothing but wasmtime, wasmtime-wasi and bindings generated
//! here from `wit/`, on an engine of its own built from the host's own settings (the runtime's
//! `engine/settings.rs`, included below: the same pooling, keep-resident, epoch and Cranelift
//! settings) with the host's epoch tick.
//!
//! One run is what a Guild task does at its core: a fresh store + instantiate the specialist +
//! `run`, whose one tool call makes a fresh store + instantiates the connector + `call`s it, and
//! both stores dropped. Every other import answers "denied" without doing anything. No limiter,
//! no hostcall fuel, no stdio capture, no grants, receipts, validation or tracing: what Guild
//! adds on top of this is the difference the bench reports.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use guild_host::EngineOptions;
use guild_runtime::engine::EPOCH_TICK;

use wasmtime::component::{HasSelf, Linker, ResourceTable};
use wasmtime::{Engine, Store};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

/// The runtime's engine settings, shared by source: the runtime hands out no wasmtime types.
/// The floor runs Cranelift only, so the baseline variant of `Compiler` goes unused here, and
/// the enum the runtime exports is private to this bench.
#[path = "../../../host/runtime/src/engine/settings.rs"]
#[allow(dead_code, unreachable_pub)]
mod settings;

#[allow(missing_docs, unreachable_pub, clippy::all)]
mod specialist {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "specialist",
        imports: { default: async },
        exports: { default: async },
    });
}

#[allow(missing_docs, unreachable_pub, clippy::all)]
mod connector {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "connector",
        imports: { default: async },
        exports: { default: async },
        with: {
            "guild:plugin/types": super::specialist::guild::plugin::types,
            "guild:plugin/log": super::specialist::guild::plugin::log,
            "guild:plugin/config": super::specialist::guild::plugin::config,
            "guild:plugin/http": super::specialist::guild::plugin::http,
        },
    });
}

use specialist::guild::plugin::{
    config, definition, delegate, http, llm, log, memory, progress, skills, tools, types,
};
use types::{HostError, ToolOutcome};

/// The two guests, pre-instantiated on one engine, and that engine's epoch ticker.
pub(crate) struct Floor {
    engine: Engine,
    specialist: specialist::SpecialistPre<Bare>,
    connector: connector::ConnectorPre<Bare>,
    ticker_stop: Arc<AtomicBool>,
}

impl Drop for Floor {
    fn drop(&mut self) {
        self.ticker_stop.store(true, Ordering::Relaxed);
    }
}

/// One instance's store state: an empty WASI context (what the guests' std needs to link) and,
/// in the specialist's store, the way to its one tool.
pub(crate) struct Bare {
    wasi: WasiCtx,
    table: ResourceTable,
    floor: Option<Arc<Floor>>,
}

impl WasiView for Bare {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl Floor {
    /// Builds a pooled engine with the host's default settings and an epoch ticker (stopped
    /// when the floor is dropped), then compiles and pre-instantiates `specialist` and
    /// `connector` (component files) on it.
    pub(crate) fn new(
        specialist: &std::path::Path,
        connector: &std::path::Path,
    ) -> wasmtime::Result<Arc<Self>> {
        let options = EngineOptions::default();
        let engine = &Engine::new(&settings::wasmtime_config(
            settings::Compiler::Optimizing,
            options.pooling,
            options.max_memory_mb,
        ))?;
        let ticker_stop = Arc::new(AtomicBool::new(false));
        let (stop, ticking) = (ticker_stop.clone(), engine.clone());
        std::thread::Builder::new()
            .name("bare-epoch".into())
            .spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(EPOCH_TICK);
                    ticking.increment_epoch();
                }
            })?;
        let mut s_linker = Linker::<Bare>::new(engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut s_linker)?;
        specialist::Specialist::add_to_linker::<_, HasSelf<_>>(&mut s_linker, |s| s)?;
        let mut c_linker = Linker::<Bare>::new(engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut c_linker)?;
        connector::Connector::add_to_linker::<_, HasSelf<_>>(&mut c_linker, |s| s)?;
        let s = wasmtime::component::Component::from_file(engine, specialist)?;
        let c = wasmtime::component::Component::from_file(engine, connector)?;
        Ok(Arc::new(Self {
            engine: engine.clone(),
            specialist: specialist::SpecialistPre::new(s_linker.instantiate_pre(&s)?)?,
            connector: connector::ConnectorPre::new(c_linker.instantiate_pre(&c)?)?,
            ticker_stop,
        }))
    }

    fn store(&self, floor: Option<Arc<Floor>>) -> Store<Bare> {
        let mut store = Store::new(
            &self.engine,
            Bare {
                wasi: WasiCtx::builder().build(),
                table: ResourceTable::new(),
                floor,
            },
        );
        // The engine interrupts at epochs: yield at each tick, as the host does.
        store.epoch_deadline_async_yield_and_update(1);
        store
    }

    /// One task's worth of bare wasmtime: fresh specialist store + instantiate + `run(brief)`
    /// (its tool call goes to [`Floor::call_connector`]) + drop. Returns the report's details.
    pub(crate) async fn run(self: &Arc<Self>, brief: &str) -> wasmtime::Result<String> {
        let mut store = self.store(Some(self.clone()));
        let instance = self.specialist.instantiate_async(&mut store).await?;
        let brief = types::Brief {
            task_id: "bare".into(),
            description: brief.to_owned(),
        };
        let report = instance
            .guild_plugin_specialist_api()
            .call_run(&mut store, &brief)
            .await?
            .map_err(|e| wasmtime::Error::msg(format!("run failed: {e:?}")))?;
        Ok(report.details)
    }

    /// One tool call: fresh connector store + instantiate + `call` + drop.
    async fn call_connector(&self, tool: &str, input: &str) -> wasmtime::Result<ToolOutcome> {
        let mut store = self.store(None);
        let instance = self.connector.instantiate_async(&mut store).await?;
        instance
            .guild_plugin_connector_api()
            .call_call(&mut store, tool, input)
            .await
    }
}

fn denied<T>() -> Result<T, HostError> {
    Err(HostError::Denied("not in the bare floor".into()))
}

impl types::Host for Bare {}

impl log::Host for Bare {
    async fn log(&mut self, _level: log::Level, _message: String) {}
}

impl config::Host for Bare {
    async fn get(&mut self, _key: String) -> Result<String, HostError> {
        denied()
    }
}

impl http::Host for Bare {
    async fn send(&mut self, _request: http::Request) -> Result<http::Response, HostError> {
        denied()
    }
}

impl tools::Host for Bare {
    async fn granted(&mut self) -> Vec<tools::GrantedTool> {
        Vec::new()
    }

    async fn call(
        &mut self,
        name: String,
        input: String,
        _idempotency_key: Option<String>,
    ) -> Result<ToolOutcome, HostError> {
        let Some(floor) = self.floor.clone() else {
            return denied();
        };
        // `connector.tool` → the connector's own tool name, as the host's forwarding does.
        let tool = name.rsplit('.').next().unwrap_or(&name);
        floor
            .call_connector(tool, &input)
            .await
            .map_err(|e| HostError::Failed(format!("{e:#}")))
    }
}

impl progress::Host for Bare {
    async fn send(&mut self, _output: String) -> Result<String, types::ProgressError> {
        Err(types::ProgressError::ParentGone)
    }
}

impl skills::Host for Bare {
    async fn catalog(&mut self) -> Vec<types::SkillMeta> {
        Vec::new()
    }

    async fn load(&mut self, _name: String) -> Result<String, HostError> {
        denied()
    }

    async fn read(&mut self, _name: String, _path: String) -> Result<Vec<u8>, HostError> {
        denied()
    }
}

impl llm::Host for Bare {
    async fn models(&mut self) -> Vec<String> {
        Vec::new()
    }

    async fn complete(&mut self, _request: llm::Request) -> Result<llm::Answer, llm::LlmError> {
        Err(llm::LlmError::Denied("not in the bare floor".into()))
    }
}

impl definition::Host for Bare {
    async fn name(&mut self) -> String {
        String::new()
    }

    async fn prompt(&mut self) -> Option<String> {
        None
    }

    async fn settings(&mut self) -> String {
        "{}".into()
    }
}

impl delegate::Host for Bare {
    async fn specialists(&mut self) -> Vec<String> {
        Vec::new()
    }

    async fn run(
        &mut self,
        _brief: delegate::TaskBrief,
    ) -> Result<delegate::ChildReport, delegate::DelegateError> {
        Err(delegate::DelegateError::Denied(
            "not in the bare floor".into(),
        ))
    }

    async fn review(
        &mut self,
        _child_id: String,
        _review: delegate::TaskReview,
    ) -> Result<delegate::ReviewEffect, delegate::DelegateError> {
        Err(delegate::DelegateError::Denied(
            "not in the bare floor".into(),
        ))
    }
}

impl memory::Host for Bare {
    async fn read(&mut self, _scope: memory::Scope) -> Result<memory::Document, HostError> {
        denied()
    }

    async fn update(
        &mut self,
        _scope: memory::Scope,
        _text: String,
    ) -> Result<memory::UpdateResult, memory::UpdateError> {
        Err(memory::UpdateError::Host(HostError::Denied(
            "not in the bare floor".into(),
        )))
    }
}

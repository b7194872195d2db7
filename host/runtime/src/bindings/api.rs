//! One object per world that runs a prepared plugin's exports in a fresh instance, whatever
//! `guild:plugin` version the plugin was built against, in the latest version's types.
//!
//! Each supported version is one [`Bindings`] entry: how to link its host interfaces, which
//! export and import names it uses, and how to wrap a pre-instantiated component of each world
//! into a [`PluginPre`]. The latest version implements the world traits here, directly on its
//! generated `*Pre` types; an older version implements them once in its own module by converting
//! at the edge. The rest of the runtime calls the traits and never asks which version it holds.

use std::time::Instant;

use futures::future::BoxFuture;
use guild_core::manifest::PluginKind;
use wasmtime::Store;
use wasmtime::component::{InstancePre, Linker};

use super::{add_to_linker, connector, skill_loader, specialist, types, wrap};
use crate::state::StoreState;

/// A call into a fresh instance; the error is wasmtime's (a trap, a failed instantiation).
pub(crate) type Call<'a, T> = BoxFuture<'a, wasmtime::Result<T>>;

/// The exports of the `specialist` world.
pub(crate) trait SpecialistApi: Send + Sync {
    /// `describe`, in a fresh instance.
    fn describe<'a>(&'a self, store: &'a mut Store<StoreState>) -> Call<'a, types::SpecialistInfo>;
    /// `run`, in a fresh instance; `instantiated` is set once the instance exists.
    fn run<'a>(
        &'a self,
        store: &'a mut Store<StoreState>,
        brief: &'a types::Brief,
        instantiated: &'a mut Instant,
    ) -> Call<'a, Result<types::Report, types::RunError>>;
}

/// The exports of the `connector` world.
pub(crate) trait ConnectorApi: Send + Sync {
    /// `tools`, in a fresh instance.
    fn tools<'a>(&'a self, store: &'a mut Store<StoreState>) -> Call<'a, Vec<types::ToolSpec>>;
    /// `call`, in a fresh instance.
    fn call<'a>(
        &'a self,
        store: &'a mut Store<StoreState>,
        tool: &'a str,
        input: &'a str,
    ) -> Call<'a, types::ToolOutcome>;
}

/// The exports of the `skill-loader` world.
pub(crate) trait LoaderApi: Send + Sync {
    /// `list`, in a fresh instance; `instantiated` is set once the instance exists.
    fn list<'a>(
        &'a self,
        store: &'a mut Store<StoreState>,
        instantiated: &'a mut Instant,
    ) -> Call<'a, Vec<types::SkillMeta>>;
    /// `load`, in a fresh instance.
    fn load<'a>(
        &'a self,
        store: &'a mut Store<StoreState>,
        name: &'a str,
    ) -> Call<'a, Result<String, types::HostError>>;
    /// `read`, in a fresh instance.
    fn read<'a>(
        &'a self,
        store: &'a mut Store<StoreState>,
        name: &'a str,
        path: &'a str,
    ) -> Call<'a, Result<Vec<u8>, types::HostError>>;
}

/// A pre-instantiated component of one of the three worlds, of any supported version.
pub(crate) enum PluginPre {
    Specialist(Box<dyn SpecialistApi>),
    Connector(Box<dyn ConnectorApi>),
    SkillLoader(Box<dyn LoaderApi>),
}

/// What one `guild:plugin` version brings to the bindings edge.
pub(crate) struct Bindings {
    /// The package version, `0.3.0`.
    pub(crate) version: &'static str,
    /// Adds this version's host interfaces for `kind`'s world to `linker` (WASI is added once,
    /// by the caller).
    pub(crate) add_to_linker: fn(PluginKind, &mut Linker<StoreState>) -> wasmtime::Result<()>,
    /// Checks a pre-instantiated component against `kind`'s world and wraps it.
    pub(crate) wrap: fn(PluginKind, InstancePre<StoreState>) -> wasmtime::Result<PluginPre>,
    /// The export names `kind`'s world requires, as the component lists them.
    pub(crate) exports: fn(PluginKind) -> &'static [&'static str],
    /// The `guild:plugin` interfaces `kind`'s world may import.
    pub(crate) imports: fn(PluginKind) -> &'static [&'static str],
}

/// Every version this host loads, newest first. The first is the one the host implements.
pub(crate) const SUPPORTED: &[&Bindings] =
    &[&LATEST, &super::v0_2::BINDINGS, &super::v0_1::BINDINGS];

/// `guild:plugin@0.3.0`, the version `wit/` holds.
pub(crate) const LATEST: Bindings = Bindings {
    version: "0.3.0",
    add_to_linker,
    wrap,
    exports: |kind| match kind {
        PluginKind::Specialist => &["guild:plugin/specialist-api@0.3.0"],
        PluginKind::Connector => &["guild:plugin/connector-api@0.3.0"],
        PluginKind::SkillLoader => &["guild:plugin/skill-loader-api@0.3.0"],
    },
    imports: |kind| match kind {
        PluginKind::Specialist => &[
            "types",
            "log",
            "config",
            "http",
            "tools",
            "progress",
            "skills",
            "memory",
            "llm",
            "definition",
            "delegate",
        ],
        PluginKind::Connector | PluginKind::SkillLoader => &["types", "log", "config", "http"],
    },
};

impl SpecialistApi for specialist::SpecialistPre<StoreState> {
    fn describe<'a>(&'a self, store: &'a mut Store<StoreState>) -> Call<'a, types::SpecialistInfo> {
        Box::pin(async move {
            let instance = self.instantiate_async(&mut *store).await?;
            instance
                .guild_plugin_specialist_api()
                .call_describe(&mut *store)
                .await
        })
    }

    fn run<'a>(
        &'a self,
        store: &'a mut Store<StoreState>,
        brief: &'a types::Brief,
        instantiated: &'a mut Instant,
    ) -> Call<'a, Result<types::Report, types::RunError>> {
        Box::pin(async move {
            let instance = self.instantiate_async(&mut *store).await?;
            *instantiated = Instant::now();
            instance
                .guild_plugin_specialist_api()
                .call_run(&mut *store, brief)
                .await
        })
    }
}

impl ConnectorApi for connector::ConnectorPre<StoreState> {
    fn tools<'a>(&'a self, store: &'a mut Store<StoreState>) -> Call<'a, Vec<types::ToolSpec>> {
        Box::pin(async move {
            let instance = self.instantiate_async(&mut *store).await?;
            instance
                .guild_plugin_connector_api()
                .call_tools(&mut *store)
                .await
        })
    }

    fn call<'a>(
        &'a self,
        store: &'a mut Store<StoreState>,
        tool: &'a str,
        input: &'a str,
    ) -> Call<'a, types::ToolOutcome> {
        Box::pin(async move {
            let instance = self.instantiate_async(&mut *store).await?;
            instance
                .guild_plugin_connector_api()
                .call_call(&mut *store, tool, input)
                .await
        })
    }
}

impl LoaderApi for skill_loader::SkillLoaderPre<StoreState> {
    fn list<'a>(
        &'a self,
        store: &'a mut Store<StoreState>,
        instantiated: &'a mut Instant,
    ) -> Call<'a, Vec<types::SkillMeta>> {
        Box::pin(async move {
            let instance = self.instantiate_async(&mut *store).await?;
            *instantiated = Instant::now();
            instance
                .guild_plugin_skill_loader_api()
                .call_list(&mut *store)
                .await
        })
    }

    fn load<'a>(
        &'a self,
        store: &'a mut Store<StoreState>,
        name: &'a str,
    ) -> Call<'a, Result<String, types::HostError>> {
        Box::pin(async move {
            let instance = self.instantiate_async(&mut *store).await?;
            instance
                .guild_plugin_skill_loader_api()
                .call_load(&mut *store, name)
                .await
        })
    }

    fn read<'a>(
        &'a self,
        store: &'a mut Store<StoreState>,
        name: &'a str,
        path: &'a str,
    ) -> Call<'a, Result<Vec<u8>, types::HostError>> {
        Box::pin(async move {
            let instance = self.instantiate_async(&mut *store).await?;
            instance
                .guild_plugin_skill_loader_api()
                .call_read(&mut *store, name, path)
                .await
        })
    }
}

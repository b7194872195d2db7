//! Preparing a plugin version: compile (cache first), check the component against the world its
//! manifest declares, and pre-instantiate it against that world's linker.
//!
//! There is one linker per world, holding only what that world may import: a connector or a
//! skill loader that imports `tools`, `report` or `skills` is refused here, at load, with an
//! error that names the import — never at call time.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use guild_core::capability::Effective;
use guild_core::manifest::PluginKind;
use wasmtime::component::{Component, Linker};

use crate::Runtime;
use crate::bindings::{connector, skill_loader, specialist};
use crate::engine::{CompileError, CompileSource, GuildEngine, wasm_err};
use crate::imports;
use crate::state::StoreState;

/// Why a plugin version could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// The file could not be read or compiled.
    #[error("{0}")]
    Compile(#[from] CompileError),
    /// The component does not implement the world its manifest declares, or imports something
    /// this host does not provide to that world.
    #[error("{0}")]
    WrongWorld(String),
    /// The host could not link its own interfaces (a host bug).
    #[error("failed to link host interfaces: {0}")]
    Link(String),
}

/// A pre-instantiated component of one of the three worlds.
pub(crate) enum PluginPre {
    Specialist(specialist::SpecialistPre<StoreState>),
    Connector(connector::ConnectorPre<StoreState>),
    SkillLoader(skill_loader::SkillLoaderPre<StoreState>),
}

/// A compiled, pre-instantiated plugin version with its effective capabilities. Every call
/// makes a fresh instance from it.
pub struct Plugin {
    pub(crate) name: Arc<str>,
    pub(crate) ident: Arc<str>,
    pub(crate) kind: PluginKind,
    pub(crate) effective: Arc<Effective>,
    pub(crate) pre: PluginPre,
    sha256: String,
    source: CompileSource,
}

impl Plugin {
    /// Plugin name.
    pub fn name(&self) -> &Arc<str> {
        &self.name
    }

    /// `name@version`.
    pub fn ident(&self) -> &Arc<str> {
        &self.ident
    }

    /// The world it implements.
    pub fn kind(&self) -> PluginKind {
        self.kind
    }

    /// What it may do.
    pub fn effective(&self) -> &Arc<Effective> {
        &self.effective
    }

    /// Hex sha256 of the component bytes.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// Whether it was compiled now or came from a cache.
    pub fn compile_source(&self) -> CompileSource {
        self.source
    }
}

/// The guild interfaces each world may import (besides WASI).
fn world_imports(kind: PluginKind) -> &'static [&'static str] {
    match kind {
        PluginKind::Specialist => &[
            "types", "log", "config", "http", "tools", "report", "skills",
        ],
        PluginKind::Connector | PluginKind::SkillLoader => &["types", "log", "config", "http"],
    }
}

/// One linker per world.
pub(crate) struct Linkers {
    specialist: Linker<StoreState>,
    connector: Linker<StoreState>,
    skill_loader: Linker<StoreState>,
}

impl Linkers {
    pub(crate) fn new(engine: &GuildEngine) -> Result<Self, PrepareError> {
        let link = |e: wasmtime::Error| PrepareError::Link(format!("{:#}", wasm_err(e)));
        let base = || -> Result<Linker<StoreState>, PrepareError> {
            let mut linker = Linker::new(engine.engine());
            wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(link)?;
            crate::wasi_http::add_to_linker(&mut linker).map_err(link)?;
            Ok(linker)
        };
        let mut specialist = base()?;
        specialist::Specialist::add_to_linker::<_, wasmtime::component::HasSelf<_>>(
            &mut specialist,
            |s| s,
        )
        .map_err(link)?;
        let mut connector = base()?;
        connector::Connector::add_to_linker::<_, wasmtime::component::HasSelf<_>>(
            &mut connector,
            |s| s,
        )
        .map_err(link)?;
        let mut skill_loader = base()?;
        skill_loader::SkillLoader::add_to_linker::<_, wasmtime::component::HasSelf<_>>(
            &mut skill_loader,
            |s| s,
        )
        .map_err(link)?;
        Ok(Self {
            specialist,
            connector,
            skill_loader,
        })
    }

    fn for_kind(&self, kind: PluginKind) -> &Linker<StoreState> {
        match kind {
            PluginKind::Specialist => &self.specialist,
            PluginKind::Connector => &self.connector,
            PluginKind::SkillLoader => &self.skill_loader,
        }
    }
}

impl Runtime {
    /// Compiles the component at `file` (cache first; off the async workers), checks it
    /// against the `kind` world and pre-instantiates it. Nothing of the plugin runs here.
    pub async fn prepare(
        &self,
        name: &str,
        ident: &str,
        kind: PluginKind,
        file: &Path,
        effective: Arc<Effective>,
    ) -> Result<Plugin, PrepareError> {
        let engine = self.engine().clone();
        let path = file.to_path_buf();
        let compiled = tokio::task::spawn_blocking(move || engine.compile_file(&path))
            .await
            .map_err(|e| CompileError::Io(format!("compiler task failed: {e}")))??;
        let component = &compiled.component;
        check_exports(self.engine(), component, kind)?;
        check_imports(self.engine(), component, kind)?;
        let instance_pre = self
            .inner
            .linkers
            .for_kind(kind)
            .instantiate_pre(component)
            .map_err(|e| {
                let error = format!("{:#}", wasm_err(e));
                let ty = component.component_type();
                let names = ty.imports(self.engine().engine()).map(|(n, _)| n);
                PrepareError::WrongWorld(imports::unprovided(names, &error))
            })?;
        let wrong = |e: wasmtime::Error| PrepareError::WrongWorld(format!("{:#}", wasm_err(e)));
        let pre = match kind {
            PluginKind::Specialist => specialist::SpecialistPre::new(instance_pre)
                .map(PluginPre::Specialist)
                .map_err(wrong)?,
            PluginKind::Connector => connector::ConnectorPre::new(instance_pre)
                .map(PluginPre::Connector)
                .map_err(wrong)?,
            PluginKind::SkillLoader => skill_loader::SkillLoaderPre::new(instance_pre)
                .map(PluginPre::SkillLoader)
                .map_err(wrong)?,
        };
        Ok(Plugin {
            name: name.into(),
            ident: ident.into(),
            kind,
            effective,
            pre,
            sha256: compiled.sha256,
            source: compiled.source,
        })
    }
}

fn check_exports(
    engine: &GuildEngine,
    component: &Component,
    kind: PluginKind,
) -> Result<(), PrepareError> {
    let exports: BTreeSet<String> = component
        .component_type()
        .exports(engine.engine())
        .map(|(n, _)| n.to_owned())
        .collect();
    let missing: Vec<&str> = kind
        .required_exports()
        .iter()
        .copied()
        .filter(|e| !exports.contains(*e))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let found: Vec<_> = exports.iter().map(String::as_str).collect();
    Err(PrepareError::WrongWorld(format!(
        "missing export(s) {} (it exports: {})",
        missing.join(", "),
        if found.is_empty() {
            "nothing".to_owned()
        } else {
            found.join(", ")
        }
    )))
}

/// Refuses, by name, a guild interface that this world may not import (e.g. `tools` in a
/// connector), before the linker's generic "not provided" error could hide why.
fn check_imports(
    engine: &GuildEngine,
    component: &Component,
    kind: PluginKind,
) -> Result<(), PrepareError> {
    let allowed = world_imports(kind);
    for (import, _) in component.component_type().imports(engine.engine()) {
        let Some(rest) = import.strip_prefix("guild:plugin/") else {
            continue;
        };
        let interface = rest.split('@').next().unwrap_or(rest);
        if !allowed.contains(&interface) {
            let hint = if world_imports(PluginKind::Specialist).contains(&interface) {
                format!(
                    "only specialists may import `{interface}`; set `kind = \"specialist\"` in \
                     plugin.toml or remove the import"
                )
            } else {
                "this host does not provide it; build against the host's wit/ folder".to_owned()
            };
            return Err(PrepareError::WrongWorld(format!(
                "a {kind} may not import `{import}`: {hint}"
            )));
        }
    }
    Ok(())
}

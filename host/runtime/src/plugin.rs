//! Preparing a plugin version: compile (cache first), read the `guild:plugin` version it was
//! built against from its export and import names, check it against the world its manifest
//! declares, and pre-instantiate it with that version's bindings.
//!
//! A reload of a plugin whose component, manifest and grant are unchanged does none of that: it
//! [`reopen`](Runtime::reopen)s the version serving, which shares its pre-instantiated
//! component and opens and measures only its granted folders again.
//!
//! There is one linker per world, holding only what that world may import (in every supported
//! version): a connector or a skill loader that imports `tools`, `progress` or `skills` is refused
//! here, at load, with an error that names the import — never at call time.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use guild_core::capability::Effective;
use guild_core::definition::Definition;
use guild_core::manifest::PluginKind;
use guild_http::redact::Redactor;
use wasmtime::component::Linker;

use crate::Runtime;
pub(crate) use crate::bindings::api::PluginPre;
use crate::bindings::api::{Bindings, SUPPORTED};
use crate::bindings::version;
use crate::component_file::ComponentFile;
use crate::engine::{CompileError, CompileSource, Compiled, Compiler, GuildEngine, wasm_err};
use crate::fs_quota::{self, QuotaMount};
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
    /// The component was built against a `guild:plugin` version this host does not load.
    #[error("{0}")]
    UnsupportedVersion(String),
    /// The host could not link its own interfaces (a host bug).
    #[error("failed to link host interfaces: {0}")]
    Link(String),
    /// A granted folder could not be opened (it is gone, or a component of its path is now a
    /// symbolic link), or the folders could not be measured for their disk quotas.
    #[error("granted folder: {0}")]
    Mount(String),
}

/// A compiled, pre-instantiated plugin version with its effective capabilities. Every call
/// makes a fresh instance from it.
pub struct Plugin {
    pub(crate) name: Arc<str>,
    pub(crate) ident: Arc<str>,
    pub(crate) kind: PluginKind,
    pub(crate) effective: Arc<Effective>,
    /// Shared with every version [`reopen`](Runtime::reopen)ed from this one.
    pub(crate) pre: Arc<PluginPre>,
    /// Its folders with their disk quotas, shared by all its instances.
    pub(crate) quotas: Arc<[QuotaMount]>,
    /// Its granted secrets, kept out of what crosses its boundary ([`guild_http::redact`]).
    pub(crate) redactor: Arc<Redactor>,
    /// Its name, `prompt.md` and `[agent]` settings, read at load.
    pub(crate) definition: Arc<Definition>,
    pub(crate) api_version: &'static str,
    pub(crate) sha256: String,
    pub(crate) source: CompileSource,
    /// Which compiler's code it runs.
    pub(crate) compiler: Compiler,
    /// For baseline code: the component, kept until [`Runtime::optimize`] compiles it again.
    pub(crate) pending: Option<Arc<ComponentFile>>,
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

    /// The `guild:plugin` version it was built against (`0.2.0`), read before instantiation.
    pub fn api_version(&self) -> &'static str {
        self.api_version
    }

    /// Its name, `prompt.md` and `[agent]` settings, as read at load.
    pub fn definition(&self) -> &Arc<Definition> {
        &self.definition
    }

    /// Hex sha256 of the component bytes.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// Whether it was compiled now or came from a cache.
    pub fn compile_source(&self) -> CompileSource {
        self.source
    }

    /// Which compiler's code it runs: Winch's until its optimized version replaces it.
    pub fn compiler(&self) -> Compiler {
        self.compiler
    }
}

/// One linker per world, holding only what that world may import, in every supported version.
pub(crate) struct Linkers {
    specialist: Linker<StoreState>,
    connector: Linker<StoreState>,
    skill_loader: Linker<StoreState>,
}

impl Linkers {
    pub(crate) fn new(engine: &GuildEngine) -> Result<Self, PrepareError> {
        let engine = engine.engine();
        let link = |e: wasmtime::Error| PrepareError::Link(format!("{:#}", wasm_err(e)));
        let world = |kind: PluginKind| -> Result<Linker<StoreState>, PrepareError> {
            let mut linker = Linker::new(engine);
            wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(link)?;
            for bindings in SUPPORTED {
                (bindings.add_to_linker)(kind, &mut linker).map_err(link)?;
            }
            crate::wasi_http::add_to_linker(&mut linker).map_err(link)?;
            crate::fs_quota::add_to_linker(&mut linker).map_err(link)?;
            Ok(linker)
        };
        Ok(Self {
            specialist: world(PluginKind::Specialist)?,
            connector: world(PluginKind::Connector)?,
            skill_loader: world(PluginKind::SkillLoader)?,
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
        definition: Arc<Definition>,
    ) -> Result<Plugin, PrepareError> {
        let path = file.to_path_buf();
        let component = tokio::task::spawn_blocking(move || ComponentFile::read(&path))
            .await
            .map_err(|e| CompileError::Io(format!("reading task failed: {e}")))??;
        self.prepare_component(name, ident, kind, component, effective, definition)
            .await
    }

    /// [`prepare`](Self::prepare) of a component file already read.
    pub async fn prepare_component(
        &self,
        name: &str,
        ident: &str,
        kind: PluginKind,
        file: ComponentFile,
        effective: Arc<Effective>,
        definition: Arc<Definition>,
    ) -> Result<Plugin, PrepareError> {
        let engine = self.engine().clone();
        let file = Arc::new(file);
        let first = file.clone();
        let (compiled, compiler) =
            tokio::task::spawn_blocking(move || crate::tier::compile_first(&engine, &first))
                .await
                .map_err(|e| CompileError::Io(format!("compiler task failed: {e}")))??;
        let (pre, api_version) = self.link(kind, &compiled, compiler)?;
        let quotas = mounts(name, &effective).await?;
        // Built once per plugin version: every instance shares it.
        let redactor = Arc::new(Redactor::for_policy(&effective.http));
        Ok(Plugin {
            name: name.into(),
            ident: ident.into(),
            kind,
            effective,
            pre: Arc::new(pre),
            quotas,
            redactor,
            definition,
            api_version,
            sha256: compiled.sha256,
            source: compiled.source,
            compiler,
            pending: (compiler == Compiler::Baseline).then_some(file),
        })
    }

    /// Reads the `guild:plugin` version `compiled` was built against from its export and import
    /// names, checks it against the `kind` world and pre-instantiates it with that version's
    /// bindings, on the linkers of the engine `compiler` compiled it for.
    pub(crate) fn link(
        &self,
        kind: PluginKind,
        compiled: &Compiled,
        compiler: Compiler,
    ) -> Result<(PluginPre, &'static str), PrepareError> {
        let component = &compiled.component;
        let ty = component.component_type();
        let engine = self.wasm_engine(compiler);
        let exports: BTreeSet<String> = ty.exports(engine).map(|(n, _)| n.to_owned()).collect();
        let imports: BTreeSet<String> = ty.imports(engine).map(|(n, _)| n.to_owned()).collect();
        // The version decides the bindings; it is read before anything is instantiated.
        let bindings =
            version::detect(kind, &exports, &imports).map_err(PrepareError::UnsupportedVersion)?;
        check_exports(bindings, &exports, kind)?;
        check_imports(bindings, &imports, kind)?;
        let instance_pre = self
            .linkers(compiler)
            .for_kind(kind)
            .instantiate_pre(component)
            .map_err(|e| {
                let error = format!("{:#}", wasm_err(e));
                let ty = component.component_type();
                let names = ty.imports(engine).map(|(n, _)| n);
                PrepareError::WrongWorld(imports::unprovided(names, &error))
            })?;
        let pre = (bindings.wrap)(kind, instance_pre)
            .map_err(|e| PrepareError::WrongWorld(format!("{:#}", wasm_err(e))))?;
        Ok((pre, bindings.version))
    }
}

impl Runtime {
    /// The version `plugin` again, for a reload that found its component, manifest, prompt and
    /// grant unchanged: it shares the compiled, pre-instantiated component (nothing is read,
    /// compiled or linked), and only its granted folders are opened and measured again, so a
    /// folder gone or turned into a link refuses it as a full load would.
    pub async fn reopen(&self, plugin: &Plugin) -> Result<Plugin, PrepareError> {
        let quotas = mounts(&plugin.name, &plugin.effective).await?;
        Ok(Plugin {
            name: plugin.name.clone(),
            ident: plugin.ident.clone(),
            kind: plugin.kind,
            effective: plugin.effective.clone(),
            pre: plugin.pre.clone(),
            quotas,
            redactor: plugin.redactor.clone(),
            definition: plugin.definition.clone(),
            api_version: plugin.api_version,
            sha256: plugin.sha256.clone(),
            source: CompileSource::Memory,
            compiler: plugin.compiler,
            pending: plugin.pending.clone(),
        })
    }

    /// Whether `a` and `b` share one compiled, pre-instantiated component (`b` was
    /// [`reopen`](Self::reopen)ed from `a`, or the other way round).
    pub fn same_component(a: &Plugin, b: &Plugin) -> bool {
        Arc::ptr_eq(&a.pre, &b.pre)
    }
}

/// Opens the granted folders of a plugin version and measures the read-write ones; walking
/// them runs off the async workers.
async fn mounts(name: &str, effective: &Arc<Effective>) -> Result<Arc<[QuotaMount]>, PrepareError> {
    let (plugin, caps) = (name.to_owned(), effective.clone());
    tokio::task::spawn_blocking(move || fs_quota::mounts_for(&plugin, &caps))
        .await
        .map_err(|e| PrepareError::Mount(e.to_string()))?
        .map_err(PrepareError::Mount)
}

fn check_exports(
    bindings: &Bindings,
    exports: &BTreeSet<String>,
    kind: PluginKind,
) -> Result<(), PrepareError> {
    let missing: Vec<&str> = (bindings.exports)(kind)
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
    bindings: &Bindings,
    imports: &BTreeSet<String>,
    kind: PluginKind,
) -> Result<(), PrepareError> {
    let allowed = (bindings.imports)(kind);
    for import in imports {
        let Some(rest) = import.strip_prefix("guild:plugin/") else {
            continue;
        };
        let interface = rest.split('@').next().unwrap_or(rest);
        if !allowed.contains(&interface) {
            let hint = if (bindings.imports)(PluginKind::Specialist).contains(&interface) {
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

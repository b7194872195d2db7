//! Two compile tiers for a first start. A component with no optimized (Cranelift) artifact in a
//! cache is compiled with Winch, wasmtime's baseline compiler, and is usable within seconds;
//! the optimized compile runs afterwards in the background ([`Runtime::optimize`]), one
//! component at a time and at a lower priority so running tasks keep a core, and the host swaps
//! the optimized version in like a reload: tasks running finish on the baseline code, new tasks
//! get the optimized code. A restart finds the optimized artifact in the disk cache and never
//! compiles Winch; a component Winch refuses is compiled with Cranelift straight away.
//! docs/performance.md has both tiers' compile and task times.

use std::sync::Arc;

use crate::Runtime;
use crate::component_file::ComponentFile;
use crate::engine::{CompileError, Compiled, Compiler, GuildEngine};
use crate::plugin::{Plugin, PrepareError};

/// Compiles `file` for its first use (blocking: call off the async workers): the optimized
/// artifact when a cache holds it; otherwise, with a baseline tier, Winch's; otherwise (no
/// tier, or Winch refused what it does not support) Cranelift's. A component past a compile
/// limit under Winch is refused at once. Says which compiler's code it is.
pub(crate) fn compile_first(
    engine: &GuildEngine,
    file: &ComponentFile,
) -> Result<(Compiled, Compiler), CompileError> {
    if let Some(baseline) = engine.baseline() {
        if let Some(compiled) = engine.cached(file.bytes(), file.digest()) {
            return Ok((compiled, Compiler::Optimizing));
        }
        match baseline.compile_digested(file.bytes(), file.digest()) {
            Ok(compiled) => return Ok((compiled, Compiler::Baseline)),
            // Past a compile limit, or over a pool limit both engines share: Cranelift, slower
            // and hungrier than Winch, would be refused too, after as long again.
            Err(
                e @ (CompileError::TimedOut(_)
                | CompileError::OutOfMemory(_)
                | CompileError::OverLimit(_)
                | CompileError::NotAComponent(_)
                | CompileError::Io(_)),
            ) => return Err(e),
            // What Winch does not support (tail calls, exceptions, GC) is Cranelift's to compile.
            Err(e) => tracing::info!(
                sha256 = %file.sha256(),
                "the baseline compiler refused the component ({e}); compiling it with \
                 Cranelift only"
            ),
        }
    }
    engine
        .compile_digested(file.bytes(), file.digest())
        .map(|compiled| (compiled, Compiler::Optimizing))
}

impl Runtime {
    /// Whether a cache of this runtime's engines (memory or disk) holds code for `file`, the
    /// optimized tier's or the baseline tier's, so that preparing it compiles nothing
    /// (blocking: a disk entry is mapped and authenticated, and kept in the memory cache for
    /// the prepare that follows). A host defers the load of a plugin without such code.
    pub fn has_code(&self, file: &ComponentFile) -> bool {
        let engine = self.engine();
        engine.cached(file.bytes(), file.digest()).is_some()
            || engine
                .baseline()
                .is_some_and(|b| b.cached(file.bytes(), file.digest()).is_some())
    }

    /// The optimized version of `plugin` when it runs baseline code: compiled with Cranelift
    /// (or taken from a cache) in the background, one component at a time, then linked like
    /// the baseline version; everything else (capabilities, folders, definition) is shared with
    /// it. `Ok(None)` when `plugin` runs optimized code already.
    pub async fn optimize(&self, plugin: &Plugin) -> Result<Option<Plugin>, PrepareError> {
        let Some(file) = plugin.pending.clone() else {
            return Ok(None);
        };
        let engine = self.engine().clone();
        let _one_at_a_time = engine.optimizer().lock_owned().await;
        let compiled = tokio::task::spawn_blocking(move || {
            engine.compile_in_background(file.bytes(), file.digest())
        })
        .await
        .map_err(|e| CompileError::Io(format!("compiler task failed: {e}")))??;
        let (pre, _) = self.link(plugin.kind, &compiled, Compiler::Optimizing)?;
        Ok(Some(Plugin {
            name: plugin.name.clone(),
            ident: plugin.ident.clone(),
            kind: plugin.kind,
            effective: plugin.effective.clone(),
            pre: Arc::new(pre),
            quotas: plugin.quotas.clone(),
            redactor: plugin.redactor.clone(),
            definition: plugin.definition.clone(),
            api_version: plugin.api_version,
            sha256: compiled.sha256,
            source: compiled.source,
            compiler: Compiler::Optimizing,
            pending: None,
        }))
    }
}

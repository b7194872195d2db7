//! The wasmtime settings of Guild's engine, in one function that uses nothing but `wasmtime`.
//!
//! `GuildEngine::new` builds its engine from it. The dispatch bench includes this file
//! (`#[path]`) to run its bare-wasmtime floor on exactly these settings: the runtime never
//! hands its wasmtime engine out, so wasmtime types stay out of its public API. Keep this file
//! free of anything but `wasmtime` for that reason.

use wasmtime::{Config, InstanceAllocationStrategy, PoolingAllocationConfig, Strategy};

/// Which of wasmtime's compilers turns a component into machine code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compiler {
    /// Cranelift optimising for speed: full-speed code, slow to compile a large component.
    #[default]
    Optimizing,
    /// Winch, wasmtime's single-pass baseline compiler: compiles many times faster, runs slower
    /// (docs/performance.md has both measured). Epoch deadlines, memory limits and traps hold
    /// as under Cranelift.
    Baseline,
}

/// Per-component limits of the instance pool: a component needing more is refused at load
/// with [`CompileError::OverLimit`] naming the one it exceeds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PoolLimits {
    /// Core module instances one component may create.
    pub(crate) core_instances: u32,
    /// Linear memories one component may define.
    pub(crate) memories: u32,
    /// Tables one component may define.
    pub(crate) tables: u32,
    /// Linear memories one core module may define.
    pub(crate) memories_per_module: u32,
    /// Tables one core module may define.
    pub(crate) tables_per_module: u32,
}

/// The pool's per-component limits.
pub(crate) const POOL_LIMITS: PoolLimits = PoolLimits {
    core_instances: 64,
    memories: 16,
    tables: 64,
    memories_per_module: 1,
    tables_per_module: 1,
};

/// The configuration of a Guild engine: `compiler` (Cranelift optimising for speed, or Winch),
/// epoch interruption (the caller drives the epoch), a 1 MiB wasm stack, no memory64, and, with
/// `pooling`, the pooling instance allocator whose slots hold linear memories of up to
/// `max_memory_mb` MiB.
pub(crate) fn wasmtime_config(compiler: Compiler, pooling: bool, max_memory_mb: u32) -> Config {
    let mut config = Config::new();
    config.epoch_interruption(true);
    // The threads proposal is not compiled into this wasmtime build at all.
    config.wasm_memory64(false);
    match compiler {
        Compiler::Optimizing => {
            config.strategy(Strategy::Cranelift);
            config.cranelift_opt_level(wasmtime::OptLevel::Speed);
        }
        Compiler::Baseline => {
            config.strategy(Strategy::Winch);
        }
    }
    config.max_wasm_stack(1 << 20);
    if pooling {
        let mut pool = PoolingAllocationConfig::default();
        pool.total_component_instances(1000)
            .total_core_instances(4000)
            .total_memories(2000)
            .total_tables(4000)
            .total_stacks(1000)
            .max_core_instances_per_component(POOL_LIMITS.core_instances)
            .max_memories_per_component(POOL_LIMITS.memories)
            .max_tables_per_component(POOL_LIMITS.tables)
            .max_memories_per_module(POOL_LIMITS.memories_per_module)
            .max_tables_per_module(POOL_LIMITS.tables_per_module)
            .max_component_instance_size(1 << 20)
            .max_core_instance_size(4 << 20)
            .table_elements(64 * 1024)
            .max_memory_size(max_memory_mb as usize * 1024 * 1024)
            // Keeping the first pages of each pooled slot resident (and letting the kernel
            // report which pages a guest touched) makes a fresh instance per task ~3x
            // cheaper: measured 7.5 µs vs 23.1 µs for instantiate + one host call + drop.
            .linear_memory_keep_resident(2 << 20)
            .table_keep_resident(64 * 1024)
            .async_stack_keep_resident(128 * 1024)
            .pagemap_scan(wasmtime::Enabled::Auto);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    }
    config
}

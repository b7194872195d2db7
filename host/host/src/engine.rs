//! The engine options a configuration asks for. The host starts its engine with them and a
//! bundle install and `guild build` compile with the same ones, so all share one compile cache.

use guild_core::config::Config;
use guild_runtime::{CompileHelper, EngineOptions};

/// The engine options `config` asks for: the compile cache in `DATA_DIR/cache` and, with it,
/// the compile helper. A bundle install and `guild build` compile with the same options, so the
/// cache entry they leave is the one the host then loads (docs/plugin-authors.md).
pub fn engine_options(config: &Config) -> EngineOptions {
    let cache_dir = config
        .host
        .compile_cache
        .then(|| config.data_dir().join("cache"));
    // Compiling in a child needs the disk cache, where the child leaves its result.
    let compile_helper = match (&config.host.compile_helper, &cache_dir) {
        (Some(program), Some(_)) => Some(CompileHelper {
            program: program.clone(),
            timeout: std::time::Duration::from_secs(config.host.compile_timeout_s.into()),
            memory_mb: config.host.compile_memory_mb,
        }),
        _ => None,
    };
    EngineOptions {
        cache_dir,
        compile_helper,
        baseline_tier: config.host.baseline_tier,
        ..EngineOptions::default()
    }
}

//! Guild: a WebAssembly plugin host for AI-agent specialists and skills.
//!
//! Specialists, connectors and skill loaders are WASI components behind the WIT package
//! `guild:plugin` (see `wit/`). Each runs sandboxed in a fresh instance per task or tool call,
//! with only the capabilities its manifest requests *and* the operator grants. The host owns
//! dispatch, capability enforcement and limits; plugins only report facts.
//!
//! This crate is the top of the library: the plugin registry, dispatch and the one tool-call
//! path, sessions, background tasks, team and private [`memory`] and the [`Host`] facade. It builds on `guild-core` (types,
//! manifests, config, capabilities, receipts, validation, skills — re-exported here) and
//! `guild-runtime` (the only crate that knows wasmtime).
//!
//! Start with [`Config`] (the operator's `guild.toml`) and [`Host`].

mod approval;
pub mod background;
mod background_load;
pub mod bundle_install;
mod deferred;
mod delegation;
mod dispatch;
mod engine;
mod host;
mod host_error;
mod low_priority;
pub mod memory;
mod plugin_load;
mod plugin_set;
mod reach;
mod registry;
mod reload;
pub mod session;
mod skills_host;
pub mod stores;
mod tiering;
pub mod types;

pub use guild_core::{
    capability, config, error, limits, manifest, schema, serve, settings, text, tool_names,
};
pub use {
    guild_bundle as bundle, guild_delegate as delegate, guild_http as http, guild_llm as llm,
    guild_receipts as receipts, guild_skills as skills, guild_validate as validate,
    guild_watch as watch,
};

pub use config::Config;
pub use delegation::{
    DEFAULT_CRITERION, NodeStatus, ReviewRecord, TREES_FILE, TaskAnchor, TreeNode, TreeStoreError,
    TreeView, read_tree,
};
pub use engine::engine_options;
pub use error::{ConfigError, DispatchError, LoadError, ManifestError};
pub use guild_runtime::{
    COMPILE_COMMAND, CompileError, CompileHelper, CompileSource, Compiler, EngineOptions, Failure,
    GuildEngine, compile_command,
};
pub use host::Host;
pub use host_error::{HostError, ReceiptsError};
pub use limits::{MAX_DESCRIPTION_BYTES, MAX_REPORT_BYTES, MAX_REPORTS, PARENT_GONE};
pub use reach::Reach;
pub use registry::PluginInfo;
pub use reload::ReloadReport;
pub use session::{ApprovalRequest, Approver, BatchItem, Session, TaskInput, TaskRequest};
pub use skills_host::HostSkills;

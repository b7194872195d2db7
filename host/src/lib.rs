//! Guild: a WebAssembly plugin host for AI-agent specialists and skills.
//!
//! Specialists, connectors and skill loaders are WASI components behind the WIT package
//! `guild:plugin` (see `wit/`). Each runs sandboxed in a fresh instance per task or tool call,
//! with only the capabilities its manifest requests *and* the operator grants. The host owns
//! dispatch, capability enforcement and limits; plugins only report facts.
//!
//! Start with [`Config`] (the operator's `guild.toml`) and [`Host`].

pub mod background;
pub mod capability;
pub mod config;
pub mod demo;
mod dispatch;
pub mod engine;
pub mod error;
mod host;
pub mod http;
pub mod manifest;
pub mod receipts;
mod registry;
mod runtime;
pub mod schema;
pub mod session;
pub mod settings;
pub mod skills;
pub mod text;
pub mod types;
pub mod validate;

pub use config::Config;
pub use dispatch::{MAX_DESCRIPTION_BYTES, MAX_REPORT_BYTES, MAX_REPORTS, PARENT_GONE};
pub use engine::{EngineOptions, GuildEngine};
pub use error::{ConfigError, DispatchError, LoadError, ManifestError};
pub use host::Host;
pub use registry::PluginInfo;
pub use runtime::Failure;
pub use session::{ApprovalRequest, Approver, BatchItem, Session, TaskInput, TaskRequest};

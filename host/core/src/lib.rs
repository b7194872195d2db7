//! Guild's core: everything the host decides that does not need a WebAssembly runtime.
//!
//! Plugin manifests ([`manifest`]) and the operator's configuration ([`config`]), the
//! capability model that intersects them ([`capability`]), the guarded outbound HTTP client
//! ([`http`]), the receipts ledger ([`receipts`]), validation of specialist reports
//! ([`validate`]), skills with progressive disclosure ([`skills`]), team and private memory
//! ([`memory`]) and the file-system events every watcher reads ([`watch`]).
//!
//! This crate depends on no wasm engine: `guild-runtime` builds on it, and `guild-host` builds
//! on both. Nothing here can call upward; where a lower layer needs a service from a higher one
//! it defines a trait (e.g. [`skills::SkillLoaders`]).

pub mod bundle;
mod calendar;
pub mod capability;
pub mod config;
pub mod decision;
pub mod error;
pub mod host_paths;
pub mod http;
pub mod limits;
pub mod manifest;
pub mod memory;
pub mod receipts;
pub mod redact;
pub mod schema;
pub mod serve;
pub mod settings;
pub mod skills;
pub mod strict_json;
pub mod text;
pub mod types;
pub mod validate;
pub mod watch;

pub use config::Config;
pub use error::{ConfigError, DispatchError, LoadError, ManifestError};

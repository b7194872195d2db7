//! Guild's core: what a plugin is and what it may do, decided before anything runs.
//!
//! Plugin manifests ([`manifest`]) and the operator's configuration ([`config`]), and the
//! capability model that intersects them ([`capability`]): what a manifest requests, what
//! `guild.toml` grants, and what is never grantable. The vocabulary the other crates share sits
//! here too: the task and tool-call records ([`types`]), skill sources ([`skill_sources`]),
//! memory rights ([`memory_access`]), model access ([`llm`]), host-wide limits ([`limits`]) and folder handling that never
//! follows a link ([`host_paths`]).
//!
//! The crates above build on this one and never the other way (docs/architecture.md):
//! `guild-http` sits below it (the egress allow-lists a grant is made of), the stores, skills,
//! memory, bundles, the runtime and the host above it. Where a lower layer needs a service from a
//! higher one it defines a trait.

pub mod calendar;
pub mod capability;
pub mod config;
pub mod definition;
pub mod error;
pub mod host_paths;
pub mod limits;
pub mod llm;
pub mod manifest;
pub mod memory_access;
pub mod schema;
pub mod serve;
pub mod settings;
pub mod skill_sources;
pub mod store;
pub mod strict_json;
pub mod text;
pub mod tool_names;
pub mod types;

pub use config::Config;
pub use error::{ConfigError, DispatchError, LoadError, ManifestError};

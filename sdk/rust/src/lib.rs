//! Write Guild plugins in Rust: specialists, connectors and skill loaders, as WASI components.
//!
//! Implement one of [`Specialist`], [`Connector`] or [`SkillLoader`], export it with the matching
//! macro, and build with `cargo build --target wasm32-wasip2 --release` (crate type `cdylib`).
//! Host capabilities are plain functions: [`log`], [`config`], [`http`] and, for specialists,
//! [`tools`], [`skills`], [`progress`], [`memory`], [`llm`] and [`definition`]; [`agent`] runs a
//! model's tool calls in a loop. Each must be requested in `plugin.toml`
//! and granted by the operator; otherwise the call returns a `denied` error
//! ([`HostError::Denied`]).
//!
//! ```no_run
//! use guild_sdk::{Brief, Report, RunError, Specialist, SpecialistInfo, config, log};
//!
//! struct Greeter;
//!
//! impl Specialist for Greeter {
//!     fn describe() -> SpecialistInfo {
//!         SpecialistInfo::new("Greets whoever the brief names.")
//!     }
//!
//!     fn run(brief: Brief) -> Result<Report, RunError> {
//!         let name = brief.description.trim();
//!         if name.is_empty() {
//!             return Err(RunError::InvalidBrief("name someone to greet".into()));
//!         }
//!         let greeting = config::get("greeting").unwrap_or_else(|_| "Hello".into());
//!         log::info(format!("greeting {name}"));
//!         Ok(Report::satisfied(format!("greeted {name}")).details(format!("{greeting}, {name}!")))
//!     }
//! }
//!
//! guild_sdk::export_specialist!(Greeter);
//! ```
//!
//! A crate exports exactly one world: invoke exactly one `export_*!` macro.

// The generated bindings name their runtime through this crate's own path, so the same paths
// work when the export macros expand inside a plugin crate.
extern crate self as guild_sdk;

pub mod agent;
mod bindings;
pub mod config;
pub mod definition;
pub mod delegate;
mod export;
pub mod http;
pub mod llm;
pub mod log;
pub mod memory;
pub mod progress;
mod report;
pub mod skills;
mod tool;
pub mod tools;
mod typed;
mod types;

pub use export::{Connector, SkillLoader, Specialist};
// Shared with the host: one definition of what a plugin builds and the host reads.
pub use guild_types::{
    Approval, ArtifactRef, Claim, NextAction, NextStep, Outcome, Report, ToolSpec, sha256_hex,
};
pub use tool::{CallStatus, ToolOutcome};
pub use typed::{Tool, Toolbox, call_typed, spec_of};
pub use types::{Brief, HostError, RunError, SkillMeta, SpecialistInfo};

/// Re-exported so plugins can use the same `serde_json` as the SDK's builders.
pub use serde_json;

/// Re-exported: the JSON Schema derive typed tools use (`#[derive(JsonSchema)]` needs the
/// `schemars` crate as a dependency of the plugin, same major version).
pub use schemars;

/// Implementation details of the export macros. Not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use crate::bindings::connector;
    pub use crate::bindings::skill_loader;
    pub use crate::bindings::specialist;
    pub use crate::bindings::specialist::guild::plugin::types as raw;
    pub use crate::export::{call, describe, list, load, read, run, tools};
    pub use wit_bindgen;
}

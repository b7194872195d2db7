//! The plain data types a Guild plugin and the Guild host exchange, defined once.
//!
//! A specialist's [`Report`] (with its [`Outcome`], [`NextStep`], [`ArtifactRef`]s and
//! [`Claim`]s) and a connector's [`ToolSpec`] are built by plugins through the Rust SDK
//! (`guild-sdk`, which re-exports them) and read by the host (`guild-core`, which re-exports them
//! from `guild_core::types`). Each side converts them to and from its own WIT bindings at its
//! edge; this crate knows no WIT version, no wasm engine and no binding generator, so it builds
//! for `wasm32-wasip2` and for the host alike. See docs/plugin-authors.md and docs/wit.md.

mod artifact;
mod report;
mod tool;

pub use artifact::{ArtifactRef, Claim, sha256_hex};
pub use report::{NextAction, NextStep, Outcome, Report};
pub use tool::{Approval, ToolSpec};

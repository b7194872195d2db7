//! The demo: a local tracker server and the end-to-end walk-through.
pub mod tracker;

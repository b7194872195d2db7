//! The `guild` command's library half: the demo's local stand-in services, shared by the binary
//! and the integration tests. The command itself lives in `main.rs` and `cli/`.

pub mod demo;

//! Limits of the task protocol (DESIGN §4) that every layer agrees on: dispatch enforces them,
//! validation and the adapters quote them.

/// The exact error a report gets when nobody is waiting for it (DESIGN §4).
pub const PARENT_GONE: &str = "direct parent is not live; report was not delivered";

/// Largest single progress report, bytes.
pub const MAX_REPORT_BYTES: usize = 64 * 1024;

/// Most progress reports one task may send.
pub const MAX_REPORTS: usize = 1000;

/// Largest task description accepted, bytes.
pub const MAX_DESCRIPTION_BYTES: usize = 256 * 1024;

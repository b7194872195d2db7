//! Limits of the task protocol (docs/architecture.md, "The task protocol") that every layer agrees on: dispatch enforces them,
//! validation and the adapters quote them.

/// The exact error a report gets when nobody is waiting for it (docs/architecture.md, "The task protocol").
pub const PARENT_GONE: &str = "direct parent is not live; report was not delivered";

/// Largest single progress report, bytes.
pub const MAX_REPORT_BYTES: usize = 64 * 1024;

/// Most progress reports one task may send.
pub const MAX_REPORTS: usize = 1000;

/// Largest task description accepted, bytes.
pub const MAX_DESCRIPTION_BYTES: usize = 256 * 1024;

/// Total bytes of progress reports one task may send (each report also obeys
/// [`MAX_REPORT_BYTES`]).
pub const MAX_REPORTS_TOTAL_BYTES: usize = 1024 * 1024;

/// Bytes of tool-call records (refusals included) one task keeps in full; past it, records are
/// still kept and counted but their text fields are replaced by [`RECORDS_DROPPED`].
pub const MAX_RECORDED_BYTES: usize = 1024 * 1024;

/// What replaces a record's text once the task's records passed [`MAX_RECORDED_BYTES`].
pub const RECORDS_DROPPED: &str =
    "[dropped: this task's tool-call records passed their 1 MiB limit]";

/// Longest tool name kept in a record, bytes (a refused name is guest-supplied).
pub const MAX_RECORDED_TOOL_BYTES: usize = 256;

/// Longest idempotency key a specialist may pass with a tool call, bytes (it is written to the
/// receipts ledger).
pub const MAX_IDEMPOTENCY_KEY_BYTES: usize = 256;

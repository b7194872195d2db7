//! Progress reports to whoever started the task (the `report` interface). Sending never ends the
//! run; the host decides whether the report is kept for the next check or pushed at once.

use crate::bindings::specialist::guild::plugin::report as raw;

/// Sends one progress report; returns its message id. Fails with
/// `direct parent is not live; report was not delivered` when the task's parent is gone.
pub fn send(output: impl AsRef<str>) -> Result<String, String> {
    raw::send(output.as_ref())
}

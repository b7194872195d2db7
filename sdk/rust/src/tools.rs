//! Calls to connector tools granted to a specialist. Specialists only: the connector and
//! skill-loader worlds do not import tools, so calling these from them fails to componentize.
//!
//! A refused call's [`HostError`] ends with the caller's file and line (`… (at src/lib.rs:14)`,
//! the calls are `#[track_caller]`), as in every kit: a misspelled tool name is then reported
//! at the line that wrote it (docs/kits.md, "Errors that name what to fix").

use std::panic::Location;

use serde::Serialize;

use crate::ToolSpec;
use crate::bindings::specialist::guild::plugin::tools as raw;
use crate::tool::ToolOutcome;
use crate::types::HostError;

/// A tool this specialist may call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantedTool {
    /// `connector.tool`.
    pub name: String,
    /// The connector's description of the tool.
    pub spec: ToolSpec,
}

/// The tools this specialist may call.
pub fn granted() -> Vec<GrantedTool> {
    raw::granted()
        .into_iter()
        .map(|tool| GrantedTool {
            name: tool.name,
            spec: ToolSpec::from(tool.spec),
        })
        .collect()
}

/// Calls `connector.tool` with `input` serialised as JSON. The connector runs in a fresh
/// instance; a failed call is an `Ok` outcome with status failed, a refused one a [`HostError`]
/// naming the caller's line.
#[track_caller]
pub fn call<T: Serialize + ?Sized>(name: &str, input: &T) -> Result<ToolOutcome, HostError> {
    let at = Location::caller();
    let input = input_json(input).map_err(|e| e.at(at))?;
    host_call(name, &input, None).map_err(|e| e.at(at))
}

/// [`call`] under the name the other kits give the call that returns the whole outcome
/// (Python `tools.call_outcome`, JavaScript `tools.callOutcome`, C `guild_tool_call`): status,
/// output, external id, verifiable URL and preview.
#[track_caller]
pub fn call_outcome<T: Serialize + ?Sized>(
    name: &str,
    input: &T,
) -> Result<ToolOutcome, HostError> {
    call(name, input)
}

/// Calls `connector.tool` with an input that is already a JSON document.
#[track_caller]
pub fn call_raw(name: &str, input_json: &str) -> Result<ToolOutcome, HostError> {
    let at = Location::caller();
    host_call(name, input_json, None).map_err(|e| e.at(at))
}

/// Calls a mutating tool with an idempotency key: calling again with the same key and input
/// returns the recorded outcome without a second call; the same key with another input is refused.
#[track_caller]
pub fn call_idempotent<T: Serialize + ?Sized>(
    name: &str,
    input: &T,
    key: &str,
) -> Result<ToolOutcome, HostError> {
    let at = Location::caller();
    let input = input_json(input).map_err(|e| e.at(at))?;
    host_call(name, &input, Some(key)).map_err(|e| e.at(at))
}

fn input_json<T: Serialize + ?Sized>(input: &T) -> Result<String, HostError> {
    serde_json::to_string(input)
        .map_err(|err| HostError::InvalidInput(format!("tool input is not JSON: {err}")))
}

/// The host's answer, a refusal without a caller's line: the tool-calling loop
/// ([`crate::agent`]) runs calls a model asked for, which no line of the author's wrote.
pub(crate) fn host_call(
    name: &str,
    input_json: &str,
    key: Option<&str>,
) -> Result<ToolOutcome, HostError> {
    raw::call(name, input_json, key)
        .map(ToolOutcome::from_raw)
        .map_err(HostError::from_raw)
}

//! Calls to connector tools granted to a specialist. Specialists only: the connector and
//! skill-loader worlds do not import tools, so calling these from them fails to componentize.

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
/// instance; a failed call is an `Ok` outcome with status failed, a refused one a [`HostError`].
pub fn call<T: Serialize + ?Sized>(name: &str, input: &T) -> Result<ToolOutcome, HostError> {
    let input = serde_json::to_string(input)
        .map_err(|err| HostError::InvalidInput(format!("tool input is not JSON: {err}")))?;
    call_raw(name, &input)
}

/// [`call`] under the name the other kits give the call that returns the whole outcome
/// (Python `tools.call_outcome`, JavaScript `tools.callOutcome`, C `guild_tool_call`): status,
/// output, external id, verifiable URL and preview.
pub fn call_outcome<T: Serialize + ?Sized>(
    name: &str,
    input: &T,
) -> Result<ToolOutcome, HostError> {
    call(name, input)
}

/// Calls `connector.tool` with an input that is already a JSON document.
pub fn call_raw(name: &str, input_json: &str) -> Result<ToolOutcome, HostError> {
    raw::call(name, input_json, None)
        .map(ToolOutcome::from_raw)
        .map_err(HostError::from_raw)
}

/// Calls a mutating tool with an idempotency key: calling again with the same key and input
/// returns the recorded outcome without a second call; the same key with another input is refused.
pub fn call_idempotent<T: Serialize + ?Sized>(
    name: &str,
    input: &T,
    key: &str,
) -> Result<ToolOutcome, HostError> {
    let input = serde_json::to_string(input)
        .map_err(|err| HostError::InvalidInput(format!("tool input is not JSON: {err}")))?;
    raw::call(name, &input, Some(key))
        .map(ToolOutcome::from_raw)
        .map_err(HostError::from_raw)
}

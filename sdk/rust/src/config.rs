//! Operator-granted, non-secret configuration values.

use crate::bindings::specialist::guild::plugin::config as raw;
use crate::types::HostError;

/// The value of `key`; [`HostError::Denied`] when the key was not both requested in
/// `plugin.toml` and granted by the operator.
pub fn get(key: &str) -> Result<String, HostError> {
    raw::get(key).map_err(HostError::from_raw)
}

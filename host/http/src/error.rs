//! The error every outbound request can end with.
//!
//! Messages name the plugin and the target origin but never a secret value: secrets live only
//! in header values, which no variant carries.

use super::policy::DenyReason;

/// Why an outbound request failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpError {
    /// The policy refused the request; nothing was sent.
    #[error("denied: plugin `{plugin}` lacks capability `http` for `{target}`: {reason}")]
    Denied {
        /// The plugin that made the request.
        plugin: String,
        /// The refused origin (`scheme://host[:port]`).
        target: String,
        /// Why.
        reason: DenyReason,
    },
    /// The request itself is malformed (method, URL, header, redirect target).
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// A request or response body exceeds its cap.
    #[error("body exceeds the limit of {limit} bytes")]
    TooLarge {
        /// The cap in bytes.
        limit: usize,
    },
    /// A cap on headers (count, one value, all together), on the plugin's request rate or on
    /// its concurrent requests was hit. The message says which cap and its value.
    #[error("limit exceeded: {0}")]
    Limit(String),
    /// The whole exchange (DNS, connect, redirects, body) took longer than the timeout.
    #[error("request timed out")]
    Timeout,
    /// DNS, connection, TLS or protocol failure.
    #[error("transport error: {0}")]
    Transport(String),
}

impl HttpError {
    /// Whether the policy refused the request.
    pub fn is_denied(&self) -> bool {
        matches!(self, Self::Denied { .. })
    }
}

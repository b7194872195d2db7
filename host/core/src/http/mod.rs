//! Outbound HTTP for plugins: the one guarded path by which a plugin's request leaves the host.
//!
//! * [`allowlist`]: Spin-style `scheme://host[:port]` patterns, compiled once.
//! * [`address`]: which IP addresses are special (loopback, private, metadata, ...).
//! * [`policy`]: requested ∩ granted origins, the explicit-grant rule for special addresses,
//!   and the secret headers the host attaches (pure, table-tested).
//! * [`client`]: the [`GuardedClient`] that resolves DNS once, pins the connection to the
//!   validated addresses, follows redirects by hand (each hop re-validated) and caps sizes and
//!   time.
//!
//! Nothing here reads the environment: proxies are disabled and there is no cookie store.

pub mod address;
pub mod allowlist;
pub mod client;
pub mod error;
mod headers;
mod pin;
pub mod policy;

pub use address::{AddressClass, classify};
pub use allowlist::{AllowList, HostMatch, HostPattern, PatternError, PortMatch, Scheme};
pub use client::{GuardedClient, HttpLimits, OutboundRequest, OutboundResponse};
pub use error::HttpError;
pub use policy::{DenyReason, EgressPolicy, SecretHeader, SecretHeaderError};

#[cfg(test)]
mod tests;

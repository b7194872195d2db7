//! Outbound HTTP for plugins: the one guarded path by which a plugin's request leaves the host.
//!
//! * [`hostname`]: the one normalised spelling of a host name every decision sees.
//! * [`allowlist`]: Spin-style `scheme://host[:port]` patterns, compiled once.
//! * [`address`]: which IP addresses are special (loopback, private, metadata, ...).
//! * [`policy`]: requested ∩ granted origins, the explicit-grant rule for special addresses,
//!   and the secret headers the host attaches (pure, table-tested).
//! * [`reflection`]: a secret's value refused on its way to a host it is not granted for.
//! * [`client`]: the [`GuardedClient`] that resolves DNS once, pins the connection to the
//!   validated addresses, follows redirects by hand (each hop re-validated) and caps sizes and
//!   time.
//! * [`budget`]: each plugin's request rate and requests in flight.
//! * [`pool`]: pinned clients kept per plugin and validated address set, for connection reuse.
//!
//! * [`redact`]: secrets the host attached, never handed back (a response echoing one is
//!   redacted before the guest sees it).
//! * [`decision`]: how every capability decision is worded and traced, shared with the
//!   capability model above this crate.
//!
//! Nothing here reads the environment: proxies are disabled and there is no cookie store. This
//! crate knows nothing of manifests or config: `guild-core` builds on it (docs/architecture.md).

pub mod address;
pub mod allowlist;
pub mod budget;
pub mod client;
pub mod decision;
pub mod error;
mod headers;
pub mod hostname;
mod pin;
pub mod policy;
pub mod pool;
pub mod redact;
pub mod reflection;

pub use address::{AddressClass, classify};
pub use allowlist::{AllowList, HostMatch, HostPattern, PatternError, PortMatch, Scheme};
pub use client::{GuardedClient, HttpLimits, OutboundRequest, OutboundResponse};
pub use error::HttpError;
pub use hostname::{names_special_host, normalize as normalize_url};
pub use policy::{DenyReason, EgressPolicy, SecretHeader, SecretHeaderError};

#[cfg(test)]
mod tests;

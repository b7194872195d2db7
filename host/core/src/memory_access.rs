//! Memory rights and documents (docs/memory.md): the vocabulary manifests request, the operator
//! grants and the capability model intersects. The documents themselves, their rules and their
//! stores are the `guild-memory` crate's.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Which memory document: the workspace's shared one, or the user's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// One document per workspace, shared by every member and plugin granted `team:*`.
    Team,
    /// One document per user.
    Private,
}

impl Scope {
    /// `team` or `private`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Team => "team",
            Scope::Private => "private",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One memory right, as a manifest requests it (`[capabilities] memory`) and the operator
/// grants it (`[grants.NAME] memory`): `team:read`, `team:write`, `private:read`,
/// `private:write`. Write does not imply read: each is requested and granted on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum MemoryAccess {
    /// `team:read`.
    TeamRead,
    /// `team:write`.
    TeamWrite,
    /// `private:read`.
    PrivateRead,
    /// `private:write`.
    PrivateWrite,
}

impl MemoryAccess {
    /// Every right, in display order.
    pub const ALL: [MemoryAccess; 4] = [
        MemoryAccess::TeamRead,
        MemoryAccess::TeamWrite,
        MemoryAccess::PrivateRead,
        MemoryAccess::PrivateWrite,
    ];

    /// The right to read (`write == false`) or write `scope`.
    pub fn of(scope: Scope, write: bool) -> Self {
        match (scope, write) {
            (Scope::Team, false) => MemoryAccess::TeamRead,
            (Scope::Team, true) => MemoryAccess::TeamWrite,
            (Scope::Private, false) => MemoryAccess::PrivateRead,
            (Scope::Private, true) => MemoryAccess::PrivateWrite,
        }
    }

    /// The canonical spelling, `scope:read|write`.
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryAccess::TeamRead => "team:read",
            MemoryAccess::TeamWrite => "team:write",
            MemoryAccess::PrivateRead => "private:read",
            MemoryAccess::PrivateWrite => "private:write",
        }
    }

    /// Parses one entry; the error lists the accepted spellings.
    pub fn parse(entry: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|a| a.as_str() == entry)
            .ok_or_else(|| {
                format!(
                    "unknown memory right {entry:?}: expected one of \"team:read\", \
                     \"team:write\", \"private:read\", \"private:write\""
                )
            })
    }
}

impl TryFrom<String> for MemoryAccess {
    type Error = String;

    fn try_from(entry: String) -> Result<Self, String> {
        Self::parse(&entry)
    }
}

impl From<MemoryAccess> for String {
    fn from(a: MemoryAccess) -> String {
        a.as_str().to_owned()
    }
}

impl fmt::Display for MemoryAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One memory document: its scope and the operator-chosen name of its owner (the workspace
/// for team memory, the user for private memory). Plugins never choose it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct DocId {
    /// Team or private.
    pub scope: Scope,
    /// The workspace (team) or user (private) name.
    pub owner: String,
}

impl DocId {
    /// The document of `owner` in `scope`.
    pub fn new(scope: Scope, owner: impl Into<String>) -> Self {
        Self {
            scope,
            owner: owner.into(),
        }
    }
}

impl fmt::Display for DocId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.scope, self.owner)
    }
}

/// Checks a workspace or user name: 1 to 128 characters of ASCII letters, digits, `.`, `_`,
/// `-` and `@`, so that it prints and stores unambiguously.
pub fn validate_owner_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 128
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '@'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{name:?} is not a valid name: expected 1 to 128 ASCII letters, digits, '.', '_', '-' or '@'"
        ))
    }
}

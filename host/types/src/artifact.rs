//! What a report points at: the [`ArtifactRef`]s a specialist produced and the [`Claim`]s of
//! external effects it says it caused, both checked by the host's validation.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// A file or document the specialist produced, resolvable by the host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactRef {
    /// Path or id within the task's workspace.
    pub id: String,
    /// Kind: file, document, page, ...
    pub kind: String,
    /// MIME type.
    pub mime_type: String,
    /// Lowercase hex sha256 of the content.
    pub sha256: String,
    /// Version in the system that holds it (page revision, commit), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

impl ArtifactRef {
    /// An artifact whose hash is already known.
    pub fn new(
        id: impl Into<String>,
        kind: impl Into<String>,
        mime_type: impl Into<String>,
        sha256: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            kind: kind.into(),
            mime_type: mime_type.into(),
            sha256: sha256.into(),
            version: None,
        }
    }

    /// A `file` artifact; the sha256 is computed from `content`, the bytes that were written.
    ///
    /// ```
    /// let a = guild_types::ArtifactRef::file("out/notes.md", "text/markdown", b"");
    /// assert_eq!(a.sha256, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    /// ```
    pub fn file(id: impl Into<String>, mime_type: impl Into<String>, content: &[u8]) -> Self {
        Self::new(id, "file", mime_type, sha256_hex(content))
    }

    /// Sets the version the artifact has in the system that holds it (a page revision, a commit).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }
}

/// Lowercase hex sha256 of `bytes`, as artifacts carry it.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for byte in digest {
        // Writing to a String cannot fail.
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// An external effect the specialist claims to have caused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claim {
    /// The tool that caused it, `connector.tool`.
    pub tool: String,
    /// The external id the tool returned.
    pub external_id: Option<String>,
    /// Free text of what was claimed.
    pub text: String,
}

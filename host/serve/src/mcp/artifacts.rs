//! A task's artifacts as MCP resources. A `task` result carries one `resource_link` content item
//! for each artifact its report references: `artifact://TASK_ID/ID` (the id percent-encoded),
//! with the report's MIME type and `_meta.sha256`. `resources/read` of that URI reads the bytes
//! again through the library ([`guild_host::Host::artifact`]: the specialist's granted folder,
//! where validation resolved them, confined there) and serves them only while their sha256 is
//! still the one the report claimed; changed or gone, the read fails naming the artifact.
//!
//! The server remembers the last [`REMEMBERED`] links (any client may read them, as any client
//! may check any task); an older or unknown `artifact://` URI is "resource not found".

use std::collections::VecDeque;
use std::sync::Mutex;

use base64::Engine as _;
use guild_host::Host;
use guild_host::bundle::manifest::sha256_hex;
use guild_host::types::TaskResult;
use rmcp::ErrorData;
use rmcp::model::{ContentBlock, MetaObject, Resource, ResourceContents};
use serde_json::json;

/// The URI scheme of artifact links.
pub(crate) const SCHEME: &str = "artifact://";
/// How many links the server remembers (the oldest go first).
const REMEMBERED: usize = 4096;

/// One remembered link.
struct Link {
    uri: String,
    /// The specialist's name (without version).
    specialist: String,
    id: String,
    mime_type: String,
    sha256: String,
}

/// The links handed out, newest last.
#[derive(Default)]
pub(crate) struct Artifacts {
    links: Mutex<VecDeque<Link>>,
}

impl Artifacts {
    /// The `resource_link` items of `result`'s artifacts, remembered for `resources/read`.
    pub(crate) fn links(&self, result: &TaskResult) -> Vec<ContentBlock> {
        let Some(report) = &result.report else {
            return Vec::new();
        };
        let specialist = result
            .specialist
            .split_once('@')
            .map_or(result.specialist.as_str(), |(name, _)| name);
        let mut remembered = self.links.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = Vec::new();
        for artifact in &report.artifacts {
            let uri = format!("{SCHEME}{}/{}", result.task_id, encode(&artifact.id));
            let mut meta = MetaObject::default();
            meta.0.insert("sha256".to_owned(), json!(artifact.sha256));
            meta.0.insert("kind".to_owned(), json!(artifact.kind));
            let resource = Resource::new(&uri, &artifact.id)
                .with_mime_type(&artifact.mime_type)
                .with_meta(meta);
            out.push(ContentBlock::resource_link(resource));
            remembered.retain(|l| l.uri != uri);
            if remembered.len() >= REMEMBERED {
                remembered.pop_front();
            }
            remembered.push_back(Link {
                uri,
                specialist: specialist.to_owned(),
                id: artifact.id.clone(),
                mime_type: artifact.mime_type.clone(),
                sha256: artifact.sha256.to_ascii_lowercase(),
            });
        }
        out
    }

    /// `resources/read` of an `artifact://` URI.
    pub(crate) async fn read(&self, host: &Host, uri: &str) -> Result<ResourceContents, ErrorData> {
        let (specialist, id, mime_type, sha256) = {
            let links = self.links.lock().unwrap_or_else(|p| p.into_inner());
            let link = links.iter().find(|l| l.uri == uri).ok_or_else(|| {
                ErrorData::resource_not_found(
                    format!(
                        "no artifact {uri:?}: artifact links are those of task results this \
                         server returned (the last {REMEMBERED})"
                    ),
                    None,
                )
            })?;
            (
                link.specialist.clone(),
                link.id.clone(),
                link.mime_type.clone(),
                link.sha256.clone(),
            )
        };
        let found = {
            let (host, specialist, id) = (host.clone(), specialist.clone(), id.clone());
            tokio::task::spawn_blocking(move || host.artifact(&specialist, &id))
                .await
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
        };
        let bytes = found
            .map_err(|e| ErrorData::internal_error(format!("artifact {id:?}: {e}"), None))?
            .ok_or_else(|| {
                ErrorData::resource_not_found(
                    format!("artifact {id:?} of {specialist} is no longer in its folder"),
                    None,
                )
            })?;
        let now = sha256_hex(&bytes);
        if now != sha256 {
            return Err(ErrorData::invalid_params(
                format!(
                    "artifact {id:?} of {specialist} changed since the report: its sha256 is now \
                     {now}, the report said {sha256}"
                ),
                None,
            ));
        }
        let mut meta = MetaObject::default();
        meta.0.insert("sha256".to_owned(), json!(now));
        Ok(match String::from_utf8(bytes) {
            Ok(text) => ResourceContents::TextResourceContents {
                uri: uri.to_owned(),
                mime_type: Some(mime_type),
                text,
                meta: Some(meta),
            },
            Err(e) => ResourceContents::BlobResourceContents {
                uri: uri.to_owned(),
                mime_type: Some(mime_type),
                blob: base64::engine::general_purpose::STANDARD.encode(e.into_bytes()),
                meta: Some(meta),
            },
        })
    }
}

/// `id` with every byte outside the URI's unreserved characters and `/` percent-encoded.
fn encode(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for byte in id.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(char::from(byte));
            }
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_percent_encoded_except_unreserved_characters_and_slashes() {
        assert_eq!(encode("out/report.md"), "out/report.md");
        assert_eq!(encode("a b?#%é"), "a%20b%3F%23%25%C3%A9");
    }
}

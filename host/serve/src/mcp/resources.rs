//! MCP resources: the supervisor's skills as `skill://NAME/SKILL.md` and `skill://NAME/PATH`
//! (sha256 of each file in `_meta`), the memory documents ([`super::memory`]) and the
//! artifacts task results link ([`super::artifacts`], read only, never listed).
//!
//! Reading a skill resource goes through the same library call as `read_skill_resource`
//! (`HostSkills::read`): the path is confined to the skill folder and the bytes are counted in
//! the connection's disclosure accounting. Listing reads the files only to hash them and
//! discloses nothing. Content is byte-exact: UTF-8 files as text, anything else as a blob.

use base64::Engine as _;
use guild_host::bundle::manifest::sha256_hex;
use guild_host::skills::{Catalog, SKILL_FILE, SkillLocation, neutralize, read_resource};
use rmcp::ErrorData;
use rmcp::model::{MetaObject, Resource, ResourceContents};
use serde_json::json;

use super::Connection;

/// `skill://NAME/PATH`.
pub(crate) fn skill_uri(name: &str, path: &str) -> String {
    format!("skill://{name}/{path}")
}

/// The skill name and path of a `skill://` URI.
pub(crate) fn parse_skill_uri(uri: &str) -> Option<(&str, &str)> {
    uri.strip_prefix("skill://")?
        .split_once('/')
        .filter(|(name, path)| !name.is_empty() && !path.is_empty())
}

fn mime(path: &str) -> &'static str {
    match path
        .rsplit_once('.')
        .map(|(_, ext)| ext.to_ascii_lowercase())
    {
        Some(ext) if ext == "md" => "text/markdown",
        Some(ext) if ext == "json" => "application/json",
        Some(ext) if ["txt", "toml", "yaml", "yml", "csv"].contains(&ext.as_str()) => "text/plain",
        Some(ext) if ext == "png" => "image/png",
        _ => "application/octet-stream",
    }
}

fn sha_meta(bytes: &[u8]) -> MetaObject {
    let mut meta = MetaObject::default();
    meta.0.insert("sha256".to_owned(), json!(sha256_hex(bytes)));
    meta
}

/// A signature of the skill set (names and fingerprints): it changes whenever a skill or one
/// of its files does.
pub(crate) fn signature(catalog: &Catalog) -> String {
    catalog
        .iter()
        .map(|e| format!("{}={}\n", e.name, e.fingerprint))
        .collect()
}

/// Every file of every folder skill the supervisor's catalog lists, hashed. Skills served by a
/// loader plugin have no files to list; they are read through `load_skill`.
fn list_skill_files(catalog: &Catalog, max: u64) -> Vec<Resource> {
    let listed = catalog.listed_names();
    let mut out = Vec::new();
    for entry in catalog.iter().filter(|e| listed.contains(&e.name)) {
        let SkillLocation::Folder { dir } = &entry.location else {
            continue;
        };
        let files =
            std::iter::once(SKILL_FILE).chain(entry.resources().iter().map(|r| r.path.as_str()));
        for path in files {
            // A file name with a control or invisible format character would reach the
            // client raw in the URI: such a file is not listed (a body's listing shows it
            // escaped).
            if neutralize(path) != path {
                tracing::debug!(skill = %entry.name, "resources/list: a file name with control characters is not listed");
                continue;
            }
            // A skill's SKILL.md is named after the skill (as the skills extension asks).
            let title = if path == SKILL_FILE {
                entry.name.clone()
            } else {
                format!("{}/{path}", entry.name)
            };
            let mut resource =
                Resource::new(skill_uri(&entry.name, path), title).with_mime_type(mime(path));
            if path == SKILL_FILE {
                resource = resource.with_description(entry.description.clone());
            }
            match read_resource(&entry.name, dir, path, max) {
                Ok(bytes) => {
                    resource = resource
                        .with_size(bytes.len() as u64)
                        .with_meta(sha_meta(&bytes));
                }
                // Listed without a hash; reading it says why it cannot be served.
                Err(e) => tracing::debug!("resources/list: {e}"),
            }
            out.push(resource);
        }
    }
    out
}

impl Connection {
    /// resources/list: the skill files, then the memory documents.
    pub(super) async fn resource_list(&self) -> Result<Vec<Resource>, ErrorData> {
        let skills = self.server.host().skills();
        let catalog = skills
            .catalog(None)
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let max = skills.service().settings().max_resource_bytes();
        let mut out = tokio::task::spawn_blocking(move || list_skill_files(&catalog, max))
            .await
            .map_err(|e| {
                ErrorData::internal_error(format!("failed to list the skill files: {e}"), None)
            })?;
        out.extend(super::memory::resources(self.server.host().memory()).await);
        Ok(out)
    }

    /// resources/read of one URI.
    pub(super) async fn resource_contents(&self, uri: &str) -> Result<ResourceContents, ErrorData> {
        if let Some(scope) = super::memory::scope_of_uri(uri) {
            return super::memory::read_resource(self.server.host().memory(), scope)
                .await
                .map_err(|e| ErrorData::invalid_params(e, None));
        }
        if uri.starts_with(super::artifacts::SCHEME) {
            return self.server.artifacts.read(self.server.host(), uri).await;
        }
        let Some((name, path)) = parse_skill_uri(uri) else {
            return Err(ErrorData::resource_not_found(
                format!(
                    "no resource {uri:?}: this server serves skill://NAME/PATH, memory://team, memory://private (see resources/list) and the artifact:// links of task results"
                ),
                None,
            ));
        };
        let skills = self.server.host().skills();
        let catalog = skills
            .catalog(None)
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let d = skills
            .read(&catalog, &self.skills, name, path)
            .await
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        let meta = sha_meta(&d.content);
        let contents = match String::from_utf8(d.content) {
            Ok(text) => ResourceContents::TextResourceContents {
                uri: uri.to_owned(),
                mime_type: Some(match mime(path) {
                    "application/octet-stream" => "text/plain".to_owned(),
                    known => known.to_owned(),
                }),
                text,
                meta: Some(meta),
            },
            Err(e) => ResourceContents::BlobResourceContents {
                uri: uri.to_owned(),
                mime_type: Some(mime(path).to_owned()),
                blob: base64::engine::general_purpose::STANDARD.encode(e.into_bytes()),
                meta: Some(meta),
            },
        };
        Ok(contents)
    }
}

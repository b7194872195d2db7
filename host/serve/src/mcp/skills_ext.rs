//! The MCP Skills extension (`io.modelcontextprotocol/skills`, SEP-2640) over the supervisor's
//! skills: `skills/list` and `skills/get` answer with each skill's entry — its `SKILL.md`'s
//! frontmatter verbatim, and a complete manifest of its files with `sha256:` digests and sizes —
//! and the files themselves are the `skill://NAME/PATH` resources [`super::resources`] already
//! serves through `resources/read` (the same confinement and disclosure accounting).
//!
//! A folder skill's entry reads its files only to hash them; nothing is disclosed until a client
//! reads a resource. A skill served by a skill-loader plugin has no stable files: its entry says
//! `"resources": "dynamic"` and its frontmatter is the catalog's. A skill over the extension's
//! per-skill limits (512 files, 16 MiB) is not listed, and `skills/get` says which limit it
//! breaks. Skills hidden from the model's catalog (`disable-model-invocation`) are not listed but
//! `skills/get` answers for them, as the extension requires for every skill a server serves.

use guild_host::bundle::manifest::sha256_hex;
use guild_host::skills::{
    Catalog, SKILL_FILE, SkillEntry, SkillLocation, frontmatter_json, neutralize, read_resource,
};
use rmcp::ErrorData;
use rmcp::model::{
    Cursor, GetSkillResult, ListSkillsResult, Skill, SkillFrontmatter, SkillResource,
    SkillResources,
};
use serde_json::{Value, json};

use super::Connection;
use super::resources::{parse_skill_uri, skill_uri};

/// Files one skill may have (the extension's limit, `SKILL.md` included).
const MAX_FILES: usize = 512;
/// Bytes one skill's files may total (the extension's limit).
const MAX_TOTAL_BYTES: u64 = 16 * 1024 * 1024;
/// Entries per `skills/list` page: each one hashes its skill's files.
const PAGE: usize = 50;

/// Why a skill has no entry.
#[derive(Debug)]
enum NoEntry {
    /// A file could not be read or its frontmatter not parsed.
    Unreadable(String),
    /// Over one of the extension's limits.
    TooLarge(String),
}

impl std::fmt::Display for NoEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoEntry::Unreadable(why) | NoEntry::TooLarge(why) => f.write_str(why),
        }
    }
}

/// One file's manifest line.
fn manifest_line(name: &str, path: &str, bytes: &[u8]) -> SkillResource {
    SkillResource::new(
        skill_uri(name, path),
        format!("sha256:{}", sha256_hex(bytes)),
        bytes.len() as u64,
    )
}

/// The frontmatter of a skill as the extension carries it: `name` and `description` apart,
/// every other field the author wrote beside them.
fn frontmatter(mut fields: serde_json::Map<String, Value>, entry: &SkillEntry) -> SkillFrontmatter {
    let text = |v: Option<Value>, fallback: &str| match v {
        Some(Value::String(s)) => s,
        _ => fallback.to_owned(),
    };
    let name = text(fields.remove("name"), &entry.name);
    let description = text(fields.remove("description"), &entry.meta.description);
    let mut out = SkillFrontmatter::new(name, description);
    out.extra = fields;
    out
}

/// The entry of a skill on disk: its frontmatter read from `SKILL.md`, every file hashed.
fn folder_entry(entry: &SkillEntry, dir: &std::path::Path, max: u64) -> Result<Skill, NoEntry> {
    let name = entry.name.as_str();
    let files: Vec<&str> = std::iter::once(SKILL_FILE)
        .chain(entry.resources().iter().map(|r| r.path.as_str()))
        .collect();
    if files.len() > MAX_FILES {
        return Err(NoEntry::TooLarge(format!(
            "skill {name:?} has {} files, over the skills extension's limit of {MAX_FILES}",
            files.len()
        )));
    }
    let mut manifest = Vec::with_capacity(files.len());
    let mut total = 0u64;
    let mut fields = serde_json::Map::new();
    for path in files {
        // A name with control characters would reach the client raw in its URI (resources/list
        // leaves such files out too); a manifest without it would not be complete.
        if neutralize(path) != path {
            return Err(NoEntry::Unreadable(format!(
                "skill {name:?} has a file whose name holds control characters"
            )));
        }
        let bytes = read_resource(name, dir, path, max)
            .map_err(|e| NoEntry::Unreadable(format!("skill {name:?}: {e}")))?;
        total += bytes.len() as u64;
        if total > MAX_TOTAL_BYTES {
            return Err(NoEntry::TooLarge(format!(
                "skill {name:?} holds more than {MAX_TOTAL_BYTES} bytes, the skills extension's limit"
            )));
        }
        if path == SKILL_FILE {
            let text = String::from_utf8_lossy(&bytes);
            fields = frontmatter_json(&text)
                .map_err(|e| NoEntry::Unreadable(format!("skill {name:?}: {SKILL_FILE}: {e}")))?;
        }
        manifest.push(manifest_line(name, path, &bytes));
    }
    Ok(Skill::new(
        skill_uri(name, SKILL_FILE),
        frontmatter(fields, entry),
        SkillResources::Files(manifest),
    ))
}

/// The entry of a skill a loader plugin serves: no files to hash, the catalog's frontmatter.
fn loader_entry(entry: &SkillEntry) -> Skill {
    let fields = match serde_json::to_value(&entry.meta) {
        Ok(Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    let mut front = frontmatter(fields, entry);
    // The catalog's own names for what the file spells differently.
    if let Some(tools) = front.extra.remove("allowed_tools")
        && let Some(list) = tools.as_array()
    {
        let joined: Vec<&str> = list.iter().filter_map(Value::as_str).collect();
        front
            .extra
            .insert("allowed-tools".into(), json!(joined.join(" ")));
    }
    front.extra.retain(|_, v| !v.is_null() && v != &json!({}));
    Skill::new(
        skill_uri(&entry.name, SKILL_FILE),
        front,
        SkillResources::Dynamic,
    )
}

fn entry_of(entry: &SkillEntry, max: u64) -> Result<Skill, NoEntry> {
    match &entry.location {
        SkillLocation::Folder { dir } => folder_entry(entry, dir, max),
        _ => Ok(loader_entry(entry)),
    }
}

/// One page of `skills/list`: the listed skills from `offset`, and the next page's offset.
fn list_page(catalog: &Catalog, offset: usize, max: u64) -> (Vec<Skill>, Option<usize>) {
    let listed = catalog.listed_names();
    let mut skills = Vec::new();
    for name in listed.iter().skip(offset).take(PAGE) {
        let Some(entry) = catalog.get(name) else {
            continue;
        };
        match entry_of(entry, max) {
            Ok(skill) => skills.push(skill),
            Err(e) => tracing::warn!("skills/list: {e}; the skill is not listed"),
        }
    }
    let next = offset + PAGE;
    (skills, (next < listed.len()).then_some(next))
}

fn bad_cursor(cursor: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!("invalid cursor {cursor:?}: pass back the nextCursor of a skills/list answer"),
        None,
    )
}

impl Connection {
    /// `skills/list`, a page at a time (`cursor` is the offset the last page gave).
    pub(super) async fn skills_list(
        &self,
        cursor: Option<Cursor>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let offset = match cursor.as_deref() {
            None => 0,
            Some(c) => c.parse::<usize>().map_err(|_| bad_cursor(c))?,
        };
        let (catalog, max) = self.skill_catalog().await?;
        let (skills, next) = tokio::task::spawn_blocking(move || list_page(&catalog, offset, max))
            .await
            .map_err(|e| ErrorData::internal_error(format!("skills/list failed: {e}"), None))?;
        let mut result = ListSkillsResult::with_all_items(skills);
        result.next_cursor = next.map(|n| n.to_string());
        Ok(result)
    }

    /// `skills/get` of the `SKILL.md` URI of one skill this server serves; `-32602` otherwise.
    pub(super) async fn skills_get(&self, uri: &str) -> Result<GetSkillResult, ErrorData> {
        let unknown = |why: &str| {
            ErrorData::invalid_params(
                format!(
                    "no skill at {uri:?}: {why} (skills/list names every skill this server lists)"
                ),
                None,
            )
        };
        let Some((name, path)) = parse_skill_uri(uri) else {
            return Err(unknown("a skill is named by skill://NAME/SKILL.md"));
        };
        if path != SKILL_FILE {
            return Err(unknown("a skill is named by the URI of its SKILL.md"));
        }
        let (catalog, max) = self.skill_catalog().await?;
        let Some(entry) = catalog.get(name).cloned() else {
            return Err(unknown("this server serves no skill of that name"));
        };
        let skill = tokio::task::spawn_blocking(move || entry_of(&entry, max))
            .await
            .map_err(|e| ErrorData::internal_error(format!("skills/get failed: {e}"), None))?
            .map_err(|e| match e {
                NoEntry::TooLarge(why) => ErrorData::invalid_params(why, None),
                NoEntry::Unreadable(why) => ErrorData::internal_error(why, None),
            })?;
        Ok(GetSkillResult::new(skill))
    }

    /// The supervisor's catalog and the largest file served from it.
    async fn skill_catalog(&self) -> Result<(Catalog, u64), ErrorData> {
        let skills = self.server.host().skills();
        let catalog = skills
            .catalog(None)
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok((catalog, skills.service().settings().max_resource_bytes()))
    }
}

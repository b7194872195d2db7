//! Skill loader `team-skills`: serves a team's Agent Skills from an index in its granted,
//! read-only `/skills` folder. Every call runs in a fresh instance and reads the index again,
//! so editing the folder takes effect on the next call.
//!
//! The index is `/skills/index.json`:
//!
//! ```json
//! { "skills": [ { "name": "release-checklist",
//!                 "description": "Use when preparing a release ...",
//!                 "body": "release-checklist/SKILL.md",
//!                 "resources": { "notes-template.md": "release-checklist/notes-template.md" } } ] }
//! ```
//!
//! or, when there is no `index.json`, `/skills/INDEX.md`: one `## skill-name` section per
//! skill, whose first line is the description and whose remaining lines are the body.
//!
//! Only files the index names are ever read: a resource path must be a key of the skill's
//! `resources` map, and every file path must be relative without `..` (the host's preopen
//! confines the plugin to `/skills` in any case).

use std::collections::BTreeMap;

use guild_sdk::{HostError, SkillLoader, SkillMeta, log};
use serde::Deserialize;

const ROOT: &str = "/skills";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Index {
    skills: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    name: String,
    description: String,
    /// File holding the body (a whole `SKILL.md` or plain markdown).
    #[serde(default)]
    body: Option<String>,
    /// Inline body, for INDEX.md sections.
    #[serde(skip)]
    inline: Option<String>,
    /// Resource path as the caller asks for it → file under `/skills`.
    #[serde(default)]
    resources: BTreeMap<String, String>,
}

/// Reads a whole file under `/skills` with direct WASI filesystem calls.
///
/// Not `std::fs`: std reads through libc's `read`, and this component's world exports a
/// top-level function also named `read`; the two core-wasm symbols collide and every libc read
/// lands on a signature-mismatch stub and traps. The WASI import has no such twin.
fn read_file(path: &str) -> std::io::Result<Vec<u8>> {
    use wasip2::filesystem::preopens::get_directories;
    use wasip2::filesystem::types::{DescriptorFlags, OpenFlags, PathFlags};
    let io = |e: wasip2::filesystem::types::ErrorCode| std::io::Error::other(format!("{e:?}"));
    let rel = path
        .strip_prefix(ROOT)
        .and_then(|r| r.strip_prefix('/'))
        .ok_or_else(|| std::io::Error::other(format!("{path} is not under {ROOT}")))?;
    let dirs = get_directories();
    let (dir, _) = dirs
        .iter()
        .find(|(_, guest)| guest == ROOT)
        .ok_or_else(|| std::io::Error::other(format!("{ROOT} is not granted")))?;
    let file = dir
        .open_at(
            PathFlags::SYMLINK_FOLLOW,
            rel,
            OpenFlags::empty(),
            DescriptorFlags::READ,
        )
        .map_err(|e| match e {
            wasip2::filesystem::types::ErrorCode::NoEntry => {
                std::io::Error::new(std::io::ErrorKind::NotFound, "not found")
            }
            other => io(other),
        })?;
    let mut out = Vec::new();
    loop {
        let (chunk, eof) = file.read(64 * 1024, out.len() as u64).map_err(io)?;
        out.extend_from_slice(&chunk);
        if eof || chunk.is_empty() {
            return Ok(out);
        }
    }
}

fn read_text(path: &str) -> std::io::Result<String> {
    String::from_utf8(read_file(path)?)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

fn failed(message: String) -> HostError {
    HostError::Failed(message)
}

/// A path under `/skills` named by the index: relative, no `..`.
fn file_path(rel: &str) -> Result<String, HostError> {
    let inside = !rel.is_empty()
        && !rel.starts_with('/')
        && rel.split('/').all(|part| part != ".." && !part.is_empty());
    if inside {
        Ok(format!("{ROOT}/{rel}"))
    } else {
        Err(failed(format!(
            "the index names {rel:?}: expected a relative path inside {ROOT} without '..'"
        )))
    }
}

fn read_index() -> Result<Vec<Entry>, HostError> {
    match read_text(&format!("{ROOT}/index.json")) {
        Ok(text) => serde_json::from_str::<Index>(&text)
            .map(|i| i.skills)
            .map_err(|e| failed(format!("{ROOT}/index.json: {e}"))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let text = read_text(&format!("{ROOT}/INDEX.md")).map_err(|e| {
                failed(format!(
                    "neither {ROOT}/index.json nor {ROOT}/INDEX.md can be read ({e}); is /skills granted?"
                ))
            })?;
            Ok(parse_markdown_index(&text))
        }
        Err(e) => Err(failed(format!("{ROOT}/index.json: {e}"))),
    }
}

/// `## name` sections: first non-empty line is the description, the rest the body.
fn parse_markdown_index(text: &str) -> Vec<Entry> {
    let mut out: Vec<Entry> = Vec::new();
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("## ") {
            out.push(Entry {
                name: name.trim().to_owned(),
                description: String::new(),
                body: None,
                inline: Some(String::new()),
                resources: BTreeMap::new(),
            });
        } else if let Some(entry) = out.last_mut() {
            if entry.description.is_empty() {
                entry.description = line.trim().to_owned();
            } else if let Some(body) = &mut entry.inline {
                body.push_str(line);
                body.push('\n');
            }
        }
    }
    out
}

fn find(name: &str) -> Result<Entry, HostError> {
    read_index()?
        .into_iter()
        .find(|e| e.name == name)
        .ok_or_else(|| HostError::InvalidInput(format!("no skill named '{name}' in the index")))
}

struct TeamSkills;

impl SkillLoader for TeamSkills {
    fn list() -> Vec<SkillMeta> {
        match read_index() {
            Ok(entries) => entries
                .into_iter()
                .map(|e| SkillMeta::new(e.name, e.description))
                .collect(),
            Err(e) => {
                // `list` cannot fail in the WIT: an unreadable index is an empty catalog and a log line.
                log::error(format!("cannot read the skills index: {e:?}"));
                Vec::new()
            }
        }
    }

    fn load(name: String) -> Result<String, HostError> {
        let entry = find(&name)?;
        match (entry.inline, entry.body) {
            (Some(body), _) => Ok(body),
            (None, Some(file)) => {
                let path = file_path(&file)?;
                read_text(&path).map_err(|e| failed(format!("{path}: {e}")))
            }
            (None, None) => Err(failed(format!("skill '{name}' has no body in the index"))),
        }
    }

    fn read(name: String, path: String) -> Result<Vec<u8>, HostError> {
        let entry = find(&name)?;
        let file = entry.resources.get(&path).ok_or_else(|| {
            let known: Vec<&str> = entry.resources.keys().map(String::as_str).collect();
            HostError::InvalidInput(format!(
                "skill '{name}' has no resource {path:?}; it has: {}",
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            ))
        })?;
        let full = file_path(file)?;
        read_file(&full).map_err(|e| failed(format!("{full}: {e}")))
    }
}

guild_sdk::export_skill_loader!(TeamSkills);

//! Levels 2 and 3 of disclosure for skills on disk: the body of a skill (frontmatter stripped,
//! wrapped with its name and a listing of its resource files) and one resource file, confined
//! to the skill folder with cap-std.
//!
//! Confinement is layered: a path is first checked lexically (no absolute path, no `..`, no
//! empty or NUL path), then opened through a cap-std [`Dir`] rooted at the skill folder, which
//! refuses any symlink that leads outside it. Size is checked before reading and enforced while
//! reading (a file that grows in between is still cut at the cap).

use std::io::Read;
use std::path::{Component, Path};

use cap_std::fs::Dir;
use serde::Serialize;

use super::SkillError;
use super::catalog::SkillEntry;
use super::folder::ResourceFile;
use super::format::{Mode, SKILL_FILE, parse_skill_md, strip_frontmatter};

/// Which level of disclosure a call served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Name + description of every visible skill.
    Catalog,
    /// One skill's body.
    Body,
    /// One resource file.
    Resource,
}

/// What one disclosure call returned, with its size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Disclosure<T> {
    /// The level served.
    pub level: Level,
    /// The skill (none for the catalog).
    pub skill: Option<String>,
    /// What the caller gets.
    pub content: T,
    /// Bytes returned.
    pub bytes: u64,
    /// Approximate tokens (bytes / 4, rounded up).
    pub approx_tokens: u64,
    /// True when the skill was already loaded in this task and only a short note was returned.
    pub already_loaded: bool,
}

impl<T: AsRef<[u8]>> Disclosure<T> {
    pub(crate) fn new(level: Level, skill: Option<&str>, content: T) -> Self {
        let bytes = content.as_ref().len() as u64;
        Self {
            level,
            skill: skill.map(str::to_owned),
            content,
            bytes,
            approx_tokens: approx_tokens(bytes),
            already_loaded: false,
        }
    }
}

/// The usual rough estimate: one token per four bytes of English text.
pub fn approx_tokens(bytes: u64) -> u64 {
    bytes.div_ceil(4)
}

/// The text returned when a skill is loaded a second time in one task.
pub fn already_loaded_note(name: &str) -> String {
    format!(
        "Skill '{name}' is already loaded in this task; its instructions were returned earlier."
    )
}

/// Wraps a body with the skill's name and a listing of its resources (names and sizes only).
pub fn wrap_body(name: &str, body: &str, resources: Option<&[ResourceFile]>) -> String {
    let mut out = format!("<skill name=\"{name}\">\n{}\n", body.trim());
    match resources {
        Some([]) => out.push_str("<resources>none</resources>\n"),
        Some(list) => {
            out.push_str(&format!(
                "<resources note=\"read one by its path relative to skill '{name}'\">\n"
            ));
            for r in list {
                out.push_str(&format!("{} ({} bytes)\n", r.path, r.size));
            }
            out.push_str("</resources>\n");
        }
        None => out.push_str(
            "<resources>served by a skill-loader plugin: read one by the path the instructions name</resources>\n",
        ),
    }
    out.push_str("</skill>\n");
    out
}

/// Reads and wraps the body of a skill on disk. `SKILL.md` is read again (not cached), so the
/// body is always the current file; it is parsed leniently to strip the frontmatter.
pub(super) fn folder_body(entry: &SkillEntry, dir: &Path) -> Result<String, SkillError> {
    let file = dir.join(SKILL_FILE);
    let text = std::fs::read_to_string(&file).map_err(|e| SkillError::Io {
        file: file.clone(),
        reason: e.to_string(),
    })?;
    let folder = dir.file_name().map(|n| n.to_string_lossy().into_owned());
    let body = match parse_skill_md(&text, &file, folder.as_deref(), Mode::Lenient) {
        (Some(parsed), _) => parsed.body,
        (None, problems) => {
            let p = problems.into_iter().next();
            return Err(SkillError::Invalid {
                file,
                field: p.as_ref().map(|p| p.field.clone()).unwrap_or_default(),
                reason: p.map_or_else(|| "invalid".to_owned(), |p| p.reason),
            });
        }
    };
    Ok(wrap_body(&entry.name, &body, Some(&entry.resources)))
}

/// Wraps a body a loader returned (its frontmatter, if any, stripped).
pub(super) fn loader_body(name: &str, text: &str) -> String {
    wrap_body(name, strip_frontmatter(text), None)
}

/// Checks a resource path lexically: relative, no `..`, not empty, no NUL.
pub fn check_relative(skill: &str, path: &str) -> Result<(), SkillError> {
    let bad = |reason: &str| SkillError::InvalidPath {
        skill: skill.to_owned(),
        path: path.to_owned(),
        reason: reason.to_owned(),
    };
    if path.is_empty() {
        return Err(bad("empty path"));
    }
    if path.contains('\0') {
        return Err(bad("path contains a NUL byte"));
    }
    if path.starts_with('/') || path.starts_with('\\') || Path::new(path).is_absolute() {
        return Err(bad(
            "absolute paths are not allowed; give a path relative to the skill folder",
        ));
    }
    for c in Path::new(path).components() {
        match c {
            Component::Normal(_) | Component::CurDir => {}
            Component::ParentDir => {
                return Err(bad(
                    "'..' is not allowed: a resource must be inside the skill folder",
                ));
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(bad("absolute paths are not allowed"));
            }
        }
    }
    Ok(())
}

/// Reads one resource of a skill on disk, confined to `dir` and capped at `max` bytes.
pub fn read_resource(skill: &str, dir: &Path, path: &str, max: u64) -> Result<Vec<u8>, SkillError> {
    check_relative(skill, path)?;
    let root =
        Dir::open_ambient_dir(dir, cap_std::ambient_authority()).map_err(|e| SkillError::Io {
            file: dir.to_owned(),
            reason: e.to_string(),
        })?;
    let map = |e: std::io::Error| map_open_error(skill, path, e);
    let meta = root.metadata(path).map_err(map)?;
    if meta.is_dir() {
        return Err(SkillError::InvalidPath {
            skill: skill.to_owned(),
            path: path.to_owned(),
            reason: "is a folder, not a file".to_owned(),
        });
    }
    let too_large = |size: u64| SkillError::TooLarge {
        skill: skill.to_owned(),
        path: path.to_owned(),
        size,
        limit: max,
    };
    if meta.len() > max {
        return Err(too_large(meta.len()));
    }
    let file = root.open(path).map_err(map)?;
    let mut out = Vec::with_capacity(meta.len() as usize);
    file.take(max + 1)
        .read_to_end(&mut out)
        .map_err(|e| SkillError::Io {
            file: dir.join(path),
            reason: e.to_string(),
        })?;
    if out.len() as u64 > max {
        return Err(too_large(out.len() as u64));
    }
    Ok(out)
}

fn map_open_error(skill: &str, path: &str, e: std::io::Error) -> SkillError {
    match e.kind() {
        std::io::ErrorKind::NotFound => SkillError::NotFound {
            skill: skill.to_owned(),
            path: path.to_owned(),
        },
        // cap-std reports an escape (a symlink or path leading outside the folder) as
        // PermissionDenied.
        std::io::ErrorKind::PermissionDenied => SkillError::InvalidPath {
            skill: skill.to_owned(),
            path: path.to_owned(),
            reason: format!("leads outside the skill folder ({e})"),
        },
        _ => SkillError::InvalidPath {
            skill: skill.to_owned(),
            path: path.to_owned(),
            reason: e.to_string(),
        },
    }
}

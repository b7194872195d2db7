//! Levels 2 and 3 of disclosure for skills on disk: the body of a skill (frontmatter stripped,
//! wrapped with its name and a listing of its resource files) and one resource file, confined
//! to the skill folder with cap-std.
//!
//! Confinement is layered: a path is first checked lexically (no absolute path, no `..`, no
//! empty or NUL path), then opened through a cap-std `Dir` on the skill folder (itself opened through the skills
//! folder, so a symlinked skill folder leading outside is refused), which
//! refuses any symlink that leads outside it. Size is checked before reading and enforced while
//! reading (a file that grows in between is still cut at the cap).

use std::path::{Component, Path};

use serde::Serialize;

use super::SkillError;
use super::catalog::SkillEntry;
use super::contents::{ResourceFile, walk_skill};
use super::folder::read_skill_md;
use super::format::{Mode, SKILL_FILE, parse_skill_md, strip_frontmatter};
use super::layout::{ReadError, open_file, open_skill_dir, read_sized};
use super::safe_text::{disguising, neutralize};

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
///
/// Nothing a skill's author controls can end the wrapper early: the name and resource paths
/// are escaped, and in the body every tag that could close or open the wrapper's elements
/// (`</skill>`, `<resources>`, in any case or spacing) has its `<` written as `&lt;`. Nor can
/// it drive a terminal or disguise text: control and invisible format characters in the body
/// are escaped ([`neutralize`]; newlines, tabs and CRLF line ends stay). Bodies without such
/// tags or characters come back byte for byte.
pub fn wrap_body(name: &str, body: &str, resources: Option<&[ResourceFile]>) -> String {
    let name = escape_text(name);
    let body = neutralize(body.trim());
    let mut out = format!("<skill name=\"{name}\">\n{}\n", escape_wrapper_tags(&body));
    match resources {
        Some([]) => out.push_str("<resources>none</resources>\n"),
        Some(list) => {
            out.push_str(&format!(
                "<resources note=\"read one by its path relative to skill '{name}'\">\n"
            ));
            for r in list {
                out.push_str(&format!("{} ({} bytes)\n", escape_text(&r.path), r.size));
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

/// The wrapper's own element names: a tag of one of these inside a body is escaped.
const WRAPPER_TAGS: &[&str] = &["skill", "resources"];

/// Escapes `<` where it starts a tag (opening or closing, any case, optional spaces after
/// `<` or `</`) of one of the [`WRAPPER_TAGS`].
fn escape_wrapper_tags(body: &str) -> std::borrow::Cow<'_, str> {
    let opens_wrapper_tag = |rest: &str| {
        let rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '/');
        WRAPPER_TAGS.iter().any(|tag| {
            rest.get(..tag.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(tag))
                && !rest[tag.len()..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_alphanumeric() || c == '-' || c == '_')
        })
    };
    if !body
        .match_indices('<')
        .any(|(i, _)| opens_wrapper_tag(&body[i + 1..]))
    {
        return std::borrow::Cow::Borrowed(body);
    }
    let mut out = String::with_capacity(body.len() + 16);
    for (i, c) in body.char_indices() {
        if c == '<' && opens_wrapper_tag(&body[i + 1..]) {
            out.push_str("&lt;");
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Escapes a name or path for the wrapper: `&`, `<`, `>` and `"` as entities, control and
/// invisible format characters (a newline or a bidi override in a file name) as `\u{..}`.
fn escape_text(s: &str) -> std::borrow::Cow<'_, str> {
    if !s
        .chars()
        .any(|c| matches!(c, '&' | '<' | '>' | '"') || c.is_control() || disguising(c, None))
    {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c if c.is_control() || disguising(c, None) => {
                out.push_str(&c.escape_unicode().to_string())
            }
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Reads and wraps the body of a skill on disk. `SKILL.md` is read again (not cached), confined
/// and capped like at scan time, so the body is always the current file; it is parsed leniently
/// to strip the frontmatter. The resource listing is taken now too: the watcher's cheap
/// re-scan does not see edits inside resource sub-folders.
pub(super) fn folder_body(entry: &SkillEntry, dir: &Path) -> Result<(String, u64), SkillError> {
    let file = dir.join(SKILL_FILE);
    let text = read_skill_md(None, dir).map_err(|reason| SkillError::Io {
        file: file.clone(),
        reason,
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
    let walked = walk_skill(dir);
    Ok((
        wrap_body(&entry.name, &body, Some(&walked.resources)),
        walked.full_bytes,
    ))
}

/// Wraps a body a loader returned (its frontmatter, if any, stripped).
pub(super) fn loader_body(name: &str, text: &str) -> String {
    wrap_body(name, strip_frontmatter(text), None)
}

/// The placeholder skills written for other clients use for their own folder
/// (`{baseDir}/reference/x.md`).
pub const BASE_DIR: &str = "{baseDir}";

/// A resource path with a leading `{baseDir}/` (or `${baseDir}/`) removed: the placeholder
/// stands for the skill's own root, which is what resource paths are relative to anyway.
pub fn resolve_base_dir(path: &str) -> &str {
    let rest = path.strip_prefix('$').unwrap_or(path);
    match rest.strip_prefix(BASE_DIR) {
        Some(tail) if tail.starts_with('/') || tail.starts_with('\\') => {
            tail.trim_start_matches(['/', '\\'])
        }
        _ => path,
    }
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
    // Through the skills folder: a skill folder symlinked to elsewhere is refused too.
    let root = open_skill_dir(dir).map_err(|e| match e.kind() {
        std::io::ErrorKind::PermissionDenied => SkillError::InvalidPath {
            skill: skill.to_owned(),
            path: path.to_owned(),
            reason: format!("the skill folder leads outside the skills folder ({e})"),
        },
        _ => SkillError::Io {
            file: dir.to_owned(),
            reason: e.to_string(),
        },
    })?;
    let too_large = |size: u64| SkillError::TooLarge {
        skill: skill.to_owned(),
        path: path.to_owned(),
        size,
        limit: max,
    };
    let (file, meta) = open_file(&root, path).map_err(|e| match e {
        ReadError::Escapes(e) | ReadError::Io(e) => map_open_error(skill, path, e),
        ReadError::NotAFile(reason) => SkillError::InvalidPath {
            skill: skill.to_owned(),
            path: path.to_owned(),
            reason: reason.to_owned(),
        },
        ReadError::TooLarge(size) => too_large(size),
    })?;
    let out = read_sized(file, meta.len(), max).map_err(|e| match e {
        ReadError::TooLarge(size) => too_large(size),
        ReadError::NotAFile(reason) => SkillError::Io {
            file: dir.join(path),
            reason: reason.to_owned(),
        },
        ReadError::Escapes(e) | ReadError::Io(e) => SkillError::Io {
            file: dir.join(path),
            reason: e.to_string(),
        },
    })?;
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

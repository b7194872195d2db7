//! What a skill folder holds besides its `SKILL.md`: the resource listing (paths and sizes) and
//! the bytes of the whole skill, found by walking the folder without reading any file.
//!
//! The walk is the bulk of a cold scan's file-system work (a real-shaped skill has a few
//! sub-folders and files: a dozen or more system calls, against four for reading `SKILL.md`),
//! and nothing in the catalog a model sees needs it. So a scanned skill carries [`Contents`]:
//! the walk runs once, on first use (a body load's byte accounting, `guild skills list`, MCP
//! resources), or ahead of time on a background thread ([`Contents::prefetch`]) so that first
//! use finds it done. A skill whose folder changes is loaded again with fresh contents; edits
//! deeper down are not tracked, which is why a body's resource listing is always walked fresh
//! at load (see [`super::disclose`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde::Serialize;
use serde::ser::SerializeStruct as _;

use super::format::SKILL_FILE;
use super::layout;

/// Deepest resource listed, in folders below the skill folder.
const MAX_DEPTH: usize = 8;
/// Most resource files listed per skill; the rest is counted, not listed.
pub const MAX_LISTED: usize = 500;

/// One resource file of a skill: its path relative to the skill folder, and its size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResourceFile {
    /// Relative path with `/` separators.
    pub path: String,
    /// Bytes.
    pub size: u64,
}

/// The stat-only view of one skill folder.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Walked {
    /// Resource files (everything but `SKILL.md`), sorted by path, at most [`MAX_LISTED`].
    pub resources: Vec<ResourceFile>,
    /// Files past [`MAX_LISTED`] or deeper than the depth limit: counted, not listed.
    pub unlisted: usize,
    /// `SKILL.md` plus every file walked, bytes.
    pub full_bytes: u64,
}

/// A skill's [`Walked`] view, computed once on first use and shared by every clone.
#[derive(Clone, Default)]
pub struct Contents(Arc<Lazy>);

#[derive(Default)]
struct Lazy {
    /// The skill folder; `None` for a skill a loader plugin serves (no files to list).
    dir: Option<PathBuf>,
    walked: OnceLock<Walked>,
}

impl Contents {
    /// The contents of the skill folder `dir`, walked on first use.
    pub(crate) fn of_folder(dir: PathBuf) -> Self {
        Self(Arc::new(Lazy {
            dir: Some(dir),
            walked: OnceLock::new(),
        }))
    }

    /// No files: a skill served by a loader plugin.
    pub fn none() -> Self {
        Self::default()
    }

    /// The walked view (walking the folder now if no one has yet).
    pub fn get(&self) -> &Walked {
        self.0.walked.get_or_init(|| match &self.0.dir {
            Some(dir) => walk_skill(dir),
            None => Walked::default(),
        })
    }

    /// Walks every one of `contents` not walked yet on a background thread (two threads where
    /// the machine has the cores), so that later use finds them done. Returns at once.
    pub(crate) fn prefetch(contents: Vec<Contents>) {
        let pending: Vec<Contents> = contents
            .into_iter()
            .filter(|c| c.0.walked.get().is_none() && c.0.dir.is_some())
            .collect();
        if pending.is_empty() {
            return;
        }
        let spawned = std::thread::Builder::new()
            .name("guild-skills-walk".to_owned())
            .spawn(move || {
                layout::parallel(&pending, 512, |c| {
                    c.get();
                });
            });
        if let Err(e) = spawned {
            // Nothing is lost: each skill is walked on first use instead.
            tracing::debug!("cannot start the skills walk thread: {e}");
        }
    }
}

/// Contents are not part of an entry's identity (its fingerprint is): equal when they describe
/// the same folder, walked or not.
impl PartialEq for Contents {
    fn eq(&self, other: &Self) -> bool {
        self.0.dir == other.0.dir
    }
}

impl Eq for Contents {}

impl std::fmt::Debug for Contents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Contents")
            .field("dir", &self.0.dir)
            .field("walked", &self.0.walked.get())
            .finish()
    }
}

/// Serialized as the walked view (walking now if needed): `resources` and `full_bytes`.
impl Serialize for Contents {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let walked = self.get();
        let mut out = s.serialize_struct("Contents", 2)?;
        out.serialize_field("resources", &walked.resources)?;
        out.serialize_field("full_bytes", &walked.full_bytes)?;
        out.end()
    }
}

/// Walks one skill folder without reading any file. Symlinks are neither followed nor listed;
/// dot-folders are skipped.
pub(crate) fn walk_skill(dir: &Path) -> Walked {
    let mut files = Vec::new();
    let mut unlisted = 0;
    walk(dir, "", 0, &mut files, &mut unlisted);
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let mut resources = Vec::new();
    let mut full_bytes = 0;
    for (path, size) in files {
        full_bytes += size;
        if path == SKILL_FILE {
            continue;
        }
        if resources.len() < MAX_LISTED {
            resources.push(ResourceFile { path, size });
        } else {
            unlisted += 1;
        }
    }
    Walked {
        resources,
        unlisted,
        full_bytes,
    }
}

fn walk(
    dir: &Path,
    prefix: &str,
    depth: usize,
    out: &mut Vec<(String, u64)>,
    unlisted: &mut usize,
) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in rd.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        // The entry's type is known from the listing: a symlink is neither followed nor listed.
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let rel = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        if kind.is_dir() {
            if name.starts_with('.') {
                continue;
            }
            if depth + 1 >= MAX_DEPTH {
                *unlisted += 1;
                continue;
            }
            walk(&entry.path(), &rel, depth + 1, out, unlisted);
        } else if kind.is_file() {
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            out.push((rel, meta.len()));
        }
    }
}

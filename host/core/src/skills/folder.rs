//! Skills on disk: scanning a folder of skill folders into a [`Catalog`], incrementally.
//!
//! Each direct sub-folder holding a `SKILL.md` is one skill. A scan stats every file of every
//! skill (no reads) to get a fingerprint and the resource listing; `SKILL.md` is parsed only
//! when its skill's fingerprint changed since the previous scan, so re-scanning for the watcher
//! is cheap. Symlinked files are not listed as resources (reading one still works when it stays
//! inside the skill folder: confinement is checked at read time, see [`super::disclose`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::UNIX_EPOCH;

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::catalog::{Catalog, SkillEntry, SkillLocation};
use super::format::{Mode, Problem, SKILL_FILE, Severity, parse_skill_md};

/// Largest `SKILL.md` the host parses, bytes.
pub const MAX_SKILL_MD: u64 = 1024 * 1024;
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

/// What one scan of a skills folder found.
#[derive(Debug, Clone, Default)]
pub struct FolderScan {
    /// The folder.
    pub dir: PathBuf,
    /// The skills that loaded, by name.
    pub catalog: Catalog,
    /// Per sub-folder: fingerprint and result, to skip unchanged skills next time.
    seen: BTreeMap<String, Seen>,
}

#[derive(Debug, Clone)]
struct Seen {
    fingerprint: String,
    entry: Option<Arc<SkillEntry>>,
    problems: Vec<Problem>,
}

/// The stat-only view of one skill folder.
struct Stat {
    fingerprint: String,
    skill_md_bytes: u64,
    resources: Vec<ResourceFile>,
    unlisted: usize,
    full_bytes: u64,
}

/// Scans `dir` (a folder of skill folders) from scratch.
pub fn scan_folder(dir: &Path, mode: Mode, label: &str) -> FolderScan {
    rescan_folder(dir, mode, label, None)
}

/// Scans `dir` again, reusing every skill of `previous` whose files did not change.
pub fn rescan_folder(
    dir: &Path,
    mode: Mode,
    label: &str,
    previous: Option<&FolderScan>,
) -> FolderScan {
    let mut scan = FolderScan {
        dir: dir.to_owned(),
        ..FolderScan::default()
    };
    let children = match std::fs::read_dir(dir) {
        Ok(rd) => {
            let mut v: Vec<_> = rd
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .filter(|p| !file_name(p).starts_with('.'))
                .collect();
            v.sort();
            v
        }
        Err(e) => {
            scan.catalog.problems.push(Problem::new(
                dir,
                "",
                format!("cannot read skills folder: {e}"),
                Severity::Error,
            ));
            return scan;
        }
    };
    let mut entries = Vec::new();
    for child in children {
        let folder = file_name(&child);
        if !child.join(SKILL_FILE).is_file() {
            if mode == Mode::Strict {
                scan.catalog.problems.push(Problem::new(
                    &child,
                    "",
                    format!("no {SKILL_FILE}: not a skill folder"),
                    Severity::Warning,
                ));
            }
            continue;
        }
        let stat = stat_skill(&child);
        let seen = match previous.and_then(|p| p.seen.get(&folder)) {
            Some(old) if old.fingerprint == stat.fingerprint => old.clone(),
            _ => {
                let fingerprint = stat.fingerprint.clone();
                let (entry, problems) = load_skill(&child, &folder, mode, label, stat);
                Seen {
                    fingerprint,
                    entry: entry.map(Arc::new),
                    problems,
                }
            }
        };
        scan.catalog.problems.extend(seen.problems.iter().cloned());
        if let Some(entry) = &seen.entry {
            entries.push(entry.clone());
        }
        scan.seen.insert(folder, seen);
    }
    for entry in entries {
        scan.catalog.insert_first_wins(entry, dir);
    }
    scan
}

/// Loads one skill folder: parses its `SKILL.md` in `mode`.
pub fn scan_skill(dir: &Path, mode: Mode, label: &str) -> (Option<SkillEntry>, Vec<Problem>) {
    let folder = file_name(dir);
    let stat = stat_skill(dir);
    load_skill(dir, &folder, mode, label, stat)
}

fn load_skill(
    dir: &Path,
    folder: &str,
    mode: Mode,
    label: &str,
    stat: Stat,
) -> (Option<SkillEntry>, Vec<Problem>) {
    let file = dir.join(SKILL_FILE);
    if stat.skill_md_bytes > MAX_SKILL_MD {
        let reason = format!(
            "is {} bytes, over the limit of {MAX_SKILL_MD}",
            stat.skill_md_bytes
        );
        return (None, vec![Problem::new(&file, "", reason, Severity::Error)]);
    }
    let text = match std::fs::read(&file) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(t) => t,
            Err(_) => {
                let p = Problem::new(&file, "", "is not valid UTF-8", Severity::Error);
                return (None, vec![p]);
            }
        },
        Err(e) => {
            let p = Problem::new(&file, "", format!("cannot read: {e}"), Severity::Error);
            return (None, vec![p]);
        }
    };
    let (parsed, mut problems) = parse_skill_md(&text, &file, Some(folder), mode);
    if stat.unlisted > 0 {
        problems.push(Problem::new(
            dir,
            "",
            format!(
                "{} resource files beyond the first {MAX_LISTED} (or deeper than {MAX_DEPTH} folders) are not listed",
                stat.unlisted
            ),
            Severity::Warning,
        ));
    }
    let entry = parsed.map(|p| SkillEntry {
        name: p.meta.name.clone(),
        description: p.meta.description.clone(),
        meta: p.meta,
        location: SkillLocation::Folder {
            dir: dir.to_owned(),
        },
        source: label.to_owned(),
        resources: stat.resources,
        skill_md_bytes: stat.skill_md_bytes,
        full_bytes: stat.full_bytes,
        fingerprint: stat.fingerprint,
    });
    (entry, problems)
}

/// Walks one skill folder without reading any file.
fn stat_skill(dir: &Path) -> Stat {
    let mut files = Vec::new();
    let mut unlisted = 0;
    walk(dir, "", 0, &mut files, &mut unlisted);
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let mut hasher = Sha256::new();
    let mut resources = Vec::new();
    let mut skill_md_bytes = 0;
    let mut full_bytes = 0;
    for (path, size, mtime) in files {
        hasher.update(path.as_bytes());
        hasher.update([0]);
        hasher.update(size.to_le_bytes());
        hasher.update(mtime.to_le_bytes());
        full_bytes += size;
        if path == SKILL_FILE {
            skill_md_bytes = size;
        } else if resources.len() < MAX_LISTED {
            resources.push(ResourceFile { path, size });
        } else {
            unlisted += 1;
        }
    }
    Stat {
        fingerprint: hex::encode(&hasher.finalize()[..12]),
        skill_md_bytes,
        resources,
        unlisted,
        full_bytes,
    }
}

fn walk(
    dir: &Path,
    prefix: &str,
    depth: usize,
    out: &mut Vec<(String, u64, u128)>,
    unlisted: &mut usize,
) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in rd.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        // symlink_metadata: a symlink is neither followed nor listed.
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        let rel = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        if meta.is_dir() {
            if name.starts_with('.') {
                continue;
            }
            if depth + 1 >= MAX_DEPTH {
                *unlisted += 1;
                continue;
            }
            walk(&entry.path(), &rel, depth + 1, out, unlisted);
        } else if meta.is_file() {
            let mtime = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            out.push((rel, meta.len(), mtime));
        }
    }
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

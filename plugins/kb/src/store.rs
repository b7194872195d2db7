//! The document store: files under the `/workspace` preopen, read and written with std.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Where the host mounts this specialist's workspace.
pub(crate) const ROOT: &str = "/workspace";

/// Stop a listing or search after this many entries so a report stays within its output limit.
pub(crate) const MAX_ENTRIES: usize = 500;

fn full(path: &str) -> PathBuf {
    if path.is_empty() {
        PathBuf::from(ROOT)
    } else {
        Path::new(ROOT).join(path)
    }
}

/// Writes `content` to `path`, creating parent folders.
pub(crate) fn save(path: &str, content: &str) -> io::Result<()> {
    let full = full(path);
    if let Some(parent) = full.parent() {
        fs::create_dir_all(parent)?;
    }
    fs::write(full, content)
}

/// Reads the document at `path` as text.
pub(crate) fn read(path: &str) -> io::Result<String> {
    fs::read_to_string(full(path))
}

/// Every file below `dir` as a workspace-relative path with its size, sorted, at most
/// [`MAX_ENTRIES`]; the flag is true when the list was cut.
pub(crate) fn list(dir: &str) -> io::Result<(Vec<(String, u64)>, bool)> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_owned()];
    let mut cut = false;
    while let Some(rel) = pending.pop() {
        for entry in fs::read_dir(full(&rel))? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let child = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            let kind = entry.file_type()?;
            if kind.is_dir() {
                pending.push(child);
            } else if kind.is_file() {
                if files.len() == MAX_ENTRIES {
                    cut = true;
                    break;
                }
                files.push((child, entry.metadata()?.len()));
            }
        }
    }
    files.sort();
    Ok((files, cut))
}

/// One search hit.
pub(crate) struct Hit {
    pub(crate) path: String,
    pub(crate) line: usize,
    pub(crate) text: String,
}

/// Lines of any text file containing every word (already lowercase), case-insensitively.
/// Files that are not UTF-8 are skipped. At most [`MAX_ENTRIES`] hits; the flag says when cut.
pub(crate) fn search(words: &[String]) -> io::Result<(Vec<Hit>, bool)> {
    let (files, mut cut) = list("")?;
    let mut hits = Vec::new();
    'files: for (path, _) in files {
        let Ok(text) = read(&path) else { continue };
        for (index, line) in text.lines().enumerate() {
            let lower = line.to_lowercase();
            if words.iter().all(|word| lower.contains(word.as_str())) {
                if hits.len() == MAX_ENTRIES {
                    cut = true;
                    break 'files;
                }
                hits.push(Hit {
                    path: path.clone(),
                    line: index + 1,
                    text: line.trim().to_owned(),
                });
            }
        }
    }
    Ok((hits, cut))
}

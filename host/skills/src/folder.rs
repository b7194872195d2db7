//! Skills on disk: scanning a folder of skill folders into a [`Catalog`], incrementally.
//!
//! Each direct sub-folder holding a `SKILL.md` is one skill. A cold scan reads and parses every
//! `SKILL.md`, spread over a few threads; what else a skill folder holds (its resource listing
//! and sizes) is walked later, once, on first use or in the background (see
//! [`super::contents`]). A re-scan (what the watcher runs every second) costs one `stat`
//! of the skills folder and two per skill: the skill folder's own metadata changes when an
//! entry is added, removed or renamed in it, and `SKILL.md`'s (size, mtime, ctime, inode)
//! changes when it is written or replaced; a skill is walked and parsed again only when one of
//! them changed, and the folder is listed again only when its own metadata changed; when nothing
//! changed at all the watcher keeps its cached scan as it was (no catalog is rebuilt). Edits
//! inside a resource sub-folder do not change those, so the resource listing a body shows is
//! taken fresh when the body is loaded (see [`super::disclose`]). Where the watcher has file
//! system events ([`super::events`]), it does not even stat unchanged skills: only the skill
//! folders an event named are compared.
//!
//! Confinement: a skill folder that is a symlink leading outside the skills folder, and a
//! `SKILL.md` that is a symlink leading outside its skill folder, are refused (the same rule as
//! resources); `SKILL.md` is read through a capability handle rooted at the skills folder and
//! cut at [`MAX_SKILL_MD`] while reading. Symlinked resource files are not listed.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cap_std::fs::Dir;

use super::catalog::{Catalog, SkillEntry, SkillLocation, listed_description};
use super::contents::{Contents, MAX_LISTED, walk_skill};
use super::events::Check;
use super::format::{Mode, Problem, SKILL_FILE, Severity, check_skill_md};
use super::layout::{self, SkillMd, Stamp};

/// Largest `SKILL.md` the host parses, bytes.
pub const MAX_SKILL_MD: u64 = 1024 * 1024;
/// Skills (re)loaded per worker thread at least: below this one thread does it all.
const PER_THREAD: usize = 256;

/// What one scan of a skills folder found.
#[derive(Debug, Clone, Default)]
pub struct FolderScan {
    /// The folder.
    pub dir: PathBuf,
    /// The skills that loaded, by name.
    pub catalog: Catalog,
    /// The folder's own metadata when it was last listed: unchanged means same children.
    root: Option<Stamp>,
    /// What listing the folder found besides skill candidates (refused symlinks, dot-folders).
    listing: layout::Listing,
    /// Per sub-folder: metadata and result, to skip unchanged skills next time.
    seen: BTreeMap<String, Arc<Seen>>,
    /// Skill folders compared or loaded by the scan that built this one.
    compared: usize,
}

#[derive(Debug)]
struct Seen {
    /// The sub-folder's own metadata (follows a symlinked folder).
    dir: Stamp,
    /// `SKILL.md`'s metadata, `None` when there is none.
    skill_md: Option<Stamp>,
    entry: Option<Arc<SkillEntry>>,
    problems: Vec<Problem>,
    /// What a folder without `SKILL.md` holds instead, for the "nothing found" warning.
    hint: Option<String>,
    /// A stamp was too recent to trust (see [`Stamp::is_recent`]): load again next time.
    recent: bool,
}

/// Scans `dir` (a folder of skill folders) from scratch.
pub fn scan_folder(dir: &Path, mode: Mode, label: &str) -> FolderScan {
    rescan_folder(dir, mode, label, None)
}

/// Scans `dir` again, reusing every skill of `previous` whose `SKILL.md` and folder did not
/// change (see the module docs for what is compared).
pub fn rescan_folder(
    dir: &Path,
    mode: Mode,
    label: &str,
    previous: Option<&FolderScan>,
) -> FolderScan {
    match previous {
        Some(p) => rescan_if_changed(dir, mode, label, p, &Check::All).unwrap_or_else(|| p.clone()),
        None => rescan(dir, mode, label, None, false, &Check::All).unwrap_or_default(),
    }
}

/// [`rescan_folder`] for the watcher: `None` when nothing changed (same listing, every skill
/// reused), so the caller keeps `previous` as it is instead of rebuilding an equal catalog.
/// `check` says which skill folders to compare (file-system events vouch for the others).
pub(crate) fn rescan_if_changed(
    dir: &Path,
    mode: Mode,
    label: &str,
    previous: &FolderScan,
    check: &Check,
) -> Option<FolderScan> {
    rescan(dir, mode, label, Some(previous), true, check)
}

impl FolderScan {
    /// The skill folder candidates the last listing found.
    pub(crate) fn children(&self) -> &[String] {
        &self.listing.children
    }

    /// How many skill folders the scan that built this compared or loaded (events spare the
    /// rest).
    pub(crate) fn compared(&self) -> usize {
        self.compared
    }
}

/// The scan itself; with `keep_if_same`, `None` when it would rebuild `previous` unchanged.
fn rescan(
    dir: &Path,
    mode: Mode,
    label: &str,
    previous: Option<&FolderScan>,
    keep_if_same: bool,
    check: &Check,
) -> Option<FolderScan> {
    let mut scan = FolderScan {
        dir: dir.to_owned(),
        ..FolderScan::default()
    };
    let root = match Stamp::of(dir) {
        Ok(stamp) => stamp,
        Err(e) => {
            scan.catalog.problems.push(Problem::new(
                dir,
                "",
                format!("cannot read skills folder: {e}"),
                Severity::Error,
            ));
            return Some(scan);
        }
    };
    scan.root = Some(root);
    let same_listing = previous.is_some_and(|p| p.root == Some(root));
    // Events named nothing and the listing is the same. (A skill loaded after its watch was
    // added needs no second look even when its stamps are too recent to trust: a write after
    // the watch raised an event. One loaded before is among the dirty ones; see `events`.)
    if let (Some(_), Check::Only(dirty)) = (previous, check)
        && keep_if_same
        && same_listing
        && dirty.is_empty()
    {
        return None;
    }
    let listing = match previous {
        Some(p) if same_listing => Cow::Borrowed(&p.listing),
        _ => match layout::list(dir) {
            Ok(listing) => Cow::Owned(listing),
            Err(e) => {
                scan.catalog.problems.push(Problem::new(
                    dir,
                    "",
                    format!("cannot read skills folder: {e}"),
                    Severity::Error,
                ));
                return Some(scan);
            }
        },
    };

    // Which children can be reused as they were; the others are (re)loaded in parallel.
    // Two stats per skill, spread over threads like the loads.
    let children: Vec<usize> = (0..listing.children.len()).collect();
    let mut slots: Vec<Option<Arc<Seen>>> = layout::parallel(&children, PER_THREAD * 4, |&i| {
        let name = &listing.children[i];
        let old = previous.and_then(|p| p.seen.get(name))?;
        let vouched = match check {
            Check::Only(dirty) => !dirty.contains(name),
            Check::All => false,
        };
        (vouched || unchanged(&dir.join(name), old)).then(|| old.clone())
    });
    scan.compared = match check {
        Check::All => listing.children.len(),
        Check::Only(dirty) => listing
            .children
            .iter()
            .filter(|n| dirty.contains(*n) || previous.and_then(|p| p.seen.get(*n)).is_none())
            .count(),
    };
    let todo: Vec<usize> = (0..slots.len()).filter(|&i| slots[i].is_none()).collect();
    if keep_if_same && same_listing && todo.is_empty() {
        // Same children, every one reused: the result would equal `previous`.
        return None;
    }
    scan.listing = listing.into_owned();
    scan.catalog.problems.extend(scan.listing.problems.clone());
    let handle = if todo.is_empty() {
        None
    } else {
        layout::open_root(dir)
    };
    let loaded = layout::parallel(&todo, PER_THREAD, |&i| {
        let name = &scan.listing.children[i];
        load_child(handle.as_ref(), dir, name, mode, label)
    });
    for (i, seen) in todo.into_iter().zip(loaded) {
        slots[i] = Some(Arc::new(seen));
    }

    let mut entries = Vec::with_capacity(slots.len());
    let mut seen = Vec::with_capacity(slots.len());
    for (name, one) in scan.listing.children.iter().zip(slots) {
        let Some(one) = one else { continue };
        scan.catalog.problems.extend(one.problems.iter().cloned());
        if let Some(entry) = &one.entry {
            entries.push(entry.clone());
        }
        seen.push((name.clone(), one));
    }
    // The children are sorted and unique: the map is built in one pass.
    scan.seen = seen.into_iter().collect();
    if !scan.seen.values().any(|s| s.skill_md.is_some()) {
        let hints: Vec<&str> = scan
            .seen
            .values()
            .filter_map(|s| s.hint.as_deref())
            .collect();
        scan.catalog
            .problems
            .push(nothing_found(dir, mode, &scan.listing, &hints));
    }
    scan.catalog.fill_first_wins(entries, dir);
    scan.catalog.warn_lookalikes(false);
    Some(scan)
}

/// True when neither the folder nor its `SKILL.md` changed since `old` was loaded.
fn unchanged(child: &Path, old: &Seen) -> bool {
    if old.recent {
        return false;
    }
    let Ok(dir) = Stamp::of(child) else {
        return false;
    };
    if dir != old.dir {
        return false;
    }
    match Stamp::of(&child.join(SKILL_FILE)) {
        Ok(md) => old.skill_md == Some(md),
        Err(_) => old.skill_md.is_none(),
    }
}

/// The problem for a folder where no skill was found: where it looked, and what it saw.
fn nothing_found(dir: &Path, mode: Mode, listing: &layout::Listing, hints: &[&str]) -> Problem {
    let mut saw = Vec::new();
    let plain = listing.children.len() - hints.len();
    if plain > 0 {
        saw.push(format!("{plain} folder(s) without a {SKILL_FILE}"));
    }
    saw.extend(hints.iter().take(5).map(|h| (*h).to_owned()));
    if hints.len() > 5 {
        saw.push(format!("{} more like these", hints.len() - 5));
    }
    saw.extend(listing.notes.iter().cloned());
    if saw.is_empty() {
        saw.push("nothing".to_owned());
    }
    let sev = match mode {
        Mode::Strict => Severity::Error,
        Mode::Lenient => Severity::Warning,
    };
    Problem::new(
        dir,
        "",
        format!(
            "no skill found: looked for {}/<skill>/{SKILL_FILE}; saw {}",
            dir.display(),
            saw.join("; ")
        ),
        sev,
    )
}

/// Loads one sub-folder of the skills folder: a skill when it holds `SKILL.md`.
fn load_child(handle: Option<&Dir>, root: &Path, name: &str, mode: Mode, label: &str) -> Seen {
    let child = root.join(name);
    let opened = layout::open_skill(handle, root, name);
    let dir = opened.dir;
    let (skill_md, read) = match opened.skill_md {
        SkillMd::Missing => (None, None),
        SkillMd::Open(file, stamp) => (
            Some(stamp),
            Some(layout::read_sized(file, stamp.len(), MAX_SKILL_MD).map_err(read_problem)),
        ),
        SkillMd::Refused(e, stamp) => (stamp, Some(Err(read_problem(e)))),
    };
    let recent = dir.is_recent() || skill_md.is_some_and(|s| s.is_recent());
    let Some(read) = read else {
        let hint = layout::what_instead(&child, name);
        let mut problems = Vec::new();
        if mode == Mode::Strict || hint.as_ref().is_some_and(|h| h.wrong_case) {
            let reason = match &hint {
                Some(h) => format!("no {SKILL_FILE}: not a skill folder ({})", h.text),
                None => format!("no {SKILL_FILE}: not a skill folder"),
            };
            problems.push(Problem::new(&child, "", reason, Severity::Warning));
        }
        return Seen {
            dir,
            skill_md,
            entry: None,
            problems,
            hint: hint.map(|h| h.text),
            recent,
        };
    };
    let text = read.and_then(utf8);
    let (entry, problems) = parse_entry(text, &child, dir, name, mode, label);
    Seen {
        dir,
        skill_md,
        entry: entry.map(Arc::new),
        problems,
        hint: None,
        recent,
    }
}

/// Loads one skill folder: parses its `SKILL.md` in `mode`.
pub fn scan_skill(dir: &Path, mode: Mode, label: &str) -> (Option<SkillEntry>, Vec<Problem>) {
    let folder = file_name(dir);
    let stamp = Stamp::of(dir).unwrap_or_default();
    load_skill(None, dir, stamp, &folder, mode, label)
}

fn load_skill(
    handle: Option<&Dir>,
    dir: &Path,
    stamp: Stamp,
    folder: &str,
    mode: Mode,
    label: &str,
) -> (Option<SkillEntry>, Vec<Problem>) {
    parse_entry(read_skill_md(handle, dir), dir, stamp, folder, mode, label)
}

/// The catalog entry for the skill folder `dir` from its `SKILL.md` as read (or why it could
/// not be), with the problems found.
fn parse_entry(
    text: Result<String, String>,
    dir: &Path,
    stamp: Stamp,
    folder: &str,
    mode: Mode,
    label: &str,
) -> (Option<SkillEntry>, Vec<Problem>) {
    let file = dir.join(SKILL_FILE);
    let text = match text {
        Ok(text) => text,
        Err(reason) => return (None, vec![Problem::new(&file, "", reason, Severity::Error)]),
    };
    let (parsed, mut problems) = check_skill_md(&text, &file, Some(folder), mode);
    let entry = parsed.map(|(meta, _body)| {
        let (description, cut) = listed_description(&meta.name, &meta.description, &file);
        problems.extend(cut);
        SkillEntry {
            name: meta.name.clone(),
            description,
            meta,
            location: SkillLocation::Folder {
                dir: dir.to_owned(),
            },
            source: label.to_owned(),
            contents: Contents::of_folder(dir.to_owned()),
            skill_md_bytes: text.len() as u64,
            fingerprint: fingerprint(&text, stamp),
        }
    });
    (entry, problems)
}

/// Changes when `SKILL.md` does or when entries are added to, removed from or renamed in the
/// skill folder (its stamp): what a catalog diff compares. Only compared within one process,
/// so a fast hash will do (no cryptographic strength is needed: the text is compared with the
/// text it was before, by the host, not against an adversary's forgery). foldhash, not std's
/// SipHash: hashing every `SKILL.md` was 4 % of a cold scan's CPU time with SipHash.
fn fingerprint(skill_md: &str, folder: Stamp) -> String {
    use std::hash::BuildHasher as _;
    let hash = foldhash::quality::FixedState::default().hash_one((skill_md, folder));
    format!("{hash:016x}")
}

/// The warning for a skill with more resource files than a body lists, found by walking it.
pub(crate) fn unlisted_problem(dir: &Path) -> Option<Problem> {
    let walked = walk_skill(dir);
    (walked.unlisted > 0).then(|| {
        Problem::new(
            dir,
            "",
            format!(
                "{} resource files beyond the first {MAX_LISTED} (or too deep) are not listed",
                walked.unlisted
            ),
            Severity::Warning,
        )
    })
}

/// Reads `SKILL.md` of the skill folder `dir`, confined and capped; `Err` says why not.
/// `handle`: the skills folder, already open.
pub(crate) fn read_skill_md(handle: Option<&Dir>, dir: &Path) -> Result<String, String> {
    layout::read_confined(handle, dir, SKILL_FILE, MAX_SKILL_MD)
        .map_err(read_problem)
        .and_then(utf8)
}

/// Why `SKILL.md` could not be read, as a problem's reason.
fn read_problem(e: layout::ReadError) -> String {
    match e {
        layout::ReadError::TooLarge(size) => {
            format!("is {size} bytes, over the limit of {MAX_SKILL_MD}")
        }
        layout::ReadError::Escapes(e) => format!(
            "is a symlink (or lies in a folder) leading outside the skill's folder: refused ({e})"
        ),
        layout::ReadError::NotAFile(why) => why.to_owned(),
        layout::ReadError::Io(e) => format!("cannot read: {e}"),
    }
}

fn utf8(bytes: Vec<u8>) -> Result<String, String> {
    String::from_utf8(bytes).map_err(|_| "is not valid UTF-8".to_owned())
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

//! The file-system side of skill folders: listing a skills folder (refusing symlinked skill
//! folders that lead outside it, noting what is there instead of skills), cheap change stamps,
//! confined and capped reads, and spreading per-skill work over a few threads.

use std::path::Path;
use std::time::UNIX_EPOCH;

use cap_std::fs::Dir;

use super::format::{Problem, SKILL_FILE, Severity};

/// What changes when a file or folder is written, replaced, or has entries added or removed:
/// size, modification and change times, inode. Equal stamps mean "not touched" (ctime cannot be
/// set back by a user, unlike mtime).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub(crate) struct Stamp {
    len: u64,
    mtime: u128,
    ctime: i128,
    ino: u64,
}

impl Stamp {
    /// The stamp of `path`, following symlinks.
    pub(crate) fn of(path: &Path) -> std::io::Result<Self> {
        std::fs::metadata(path).map(|m| Self::from_meta(&m))
    }

    /// True when the stamp is too recent to trust: a write in the same timestamp tick (up to
    /// 2 s on some file systems) would leave it unchanged. Such entries are checked again on
    /// every re-scan until they are older (what git calls "racily clean").
    pub(crate) fn is_recent(&self) -> bool {
        const WINDOW_NANOS: i128 = 2_000_000_000;
        let now = std::time::SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i128);
        let changed = self.ctime.max(self.mtime as i128);
        now - changed < WINDOW_NANOS
    }

    /// The size it records, bytes.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    pub(crate) fn from_meta(meta: &std::fs::Metadata) -> Self {
        #[cfg(unix)]
        let (ctime, ino) = {
            use std::os::unix::fs::MetadataExt as _;
            (
                i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
                meta.ino(),
            )
        };
        #[cfg(not(unix))]
        let (ctime, ino) = (0, 0);
        Self {
            len: meta.len(),
            mtime: mtime_nanos(meta),
            ctime,
            ino,
        }
    }
}

/// Modification time in nanoseconds since the epoch (0 when unknown).
pub(crate) fn mtime_nanos(meta: &std::fs::Metadata) -> u128 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos())
}

/// One listing of a skills folder.
#[derive(Debug, Clone, Default)]
pub(crate) struct Listing {
    /// Sub-folders that may be skills (plain folders, and symlinks to folders inside), sorted.
    pub(crate) children: Vec<String>,
    /// Refused entries (a symlinked skill folder leading outside).
    pub(crate) problems: Vec<Problem>,
    /// What else is there, for the "no skill found" warning.
    pub(crate) notes: Vec<String>,
}

/// Lists `dir`: its sub-folders that may be skills, with symlinked ones checked to stay inside.
pub(crate) fn list(dir: &Path) -> std::io::Result<Listing> {
    let mut out = Listing::default();
    let mut root_handle: Option<Dir> = None;
    let mut dot_folders = Vec::new();
    let mut files = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            out.notes.push(format!(
                "a folder with a non-UTF-8 name ({:?})",
                entry.file_name()
            ));
            continue;
        };
        if kind.is_dir() {
            if name.starts_with('.') {
                dot_folders.push(name);
            } else {
                out.children.push(name);
            }
        } else if kind.is_symlink() {
            if name.starts_with('.') {
                continue;
            }
            // Judged as reads will be: through a handle on the skills folder, which follows a
            // symlink only while it stays inside (and never an absolute one).
            let root = match &root_handle {
                Some(root) => root,
                None => {
                    root_handle.insert(Dir::open_ambient_dir(dir, cap_std::ambient_authority())?)
                }
            };
            match root.open_dir(&name) {
                Ok(_) => out.children.push(name),
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                    let path = entry.path();
                    let target = std::fs::canonicalize(&path)
                        .map_or_else(|_| "?".to_owned(), |t| t.display().to_string());
                    out.problems.push(Problem::new(
                        &path,
                        "",
                        format!(
                            "is a symlink leading outside the skills folder (to {target}), or an absolute one: refused; copy the skill into {} or use a relative symlink to a folder inside it",
                            dir.display()
                        ),
                        Severity::Error,
                    ));
                }
                Err(_) => {} // dangling, or not a folder: nothing to load
            }
        } else if name == SKILL_FILE {
            out.notes.push(format!(
                "a {SKILL_FILE} directly in {}: that folder is one skill; use the folder above it as the source",
                dir.display()
            ));
        } else {
            files += 1;
        }
    }
    out.children.sort();
    if files > 0 {
        out.notes.push(format!("{files} file(s)"));
    }
    dot_folders.sort();
    for name in dot_folders {
        let skills = dir.join(&name).join(SKILL_FILE).is_file();
        out.notes.push(if skills {
            format!("dot-folder {name}/ holds a {SKILL_FILE}, but dot-folders are skipped")
        } else {
            format!("dot-folder {name}/ (skipped)")
        });
    }
    Ok(out)
}

/// What a sub-folder without `SKILL.md` holds instead.
pub(crate) struct Hint {
    /// One phrase: what was seen and what to do.
    pub(crate) text: String,
    /// A `skill.md` in another case: almost certainly meant as a skill.
    pub(crate) wrong_case: bool,
}

/// Looks inside `child` (named `name`) for a `SKILL.md` in the wrong case or one level deeper.
pub(crate) fn what_instead(child: &Path, name: &str) -> Option<Hint> {
    let mut deeper = None;
    for entry in std::fs::read_dir(child).ok()?.filter_map(Result::ok) {
        let file = entry.file_name().to_string_lossy().into_owned();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_file() && file.eq_ignore_ascii_case(SKILL_FILE) {
            return Some(Hint {
                text: format!("{name}/{file}: the file must be named {SKILL_FILE}, in capitals"),
                wrong_case: true,
            });
        }
        if deeper.is_none() && kind.is_dir() && entry.path().join(SKILL_FILE).is_file() {
            deeper = Some(format!(
                "{name}/{file}/{SKILL_FILE}: skills one level deeper; use {} as the source",
                child.display()
            ));
        }
    }
    deeper.map(|text| Hint {
        text,
        wrong_case: false,
    })
}

/// Why a confined read failed.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// Over the cap: the size seen (at least).
    TooLarge(u64),
    /// A symlink (or path) leading outside the folder.
    Escapes(std::io::Error),
    /// Not a regular file (a folder, a FIFO, a device): why.
    NotAFile(&'static str),
    /// Anything else.
    Io(std::io::Error),
}

impl From<std::io::Error> for ReadError {
    fn from(e: std::io::Error) -> Self {
        // cap-std reports an escape as PermissionDenied.
        if e.kind() == std::io::ErrorKind::PermissionDenied {
            Self::Escapes(e)
        } else {
            Self::Io(e)
        }
    }
}

/// Opens the skill folder `dir` through a handle on its parent (the skills folder), so a
/// skill folder that is a symlink leading outside the skills folder is refused.
pub(crate) fn open_skill_dir(dir: &Path) -> std::io::Result<Dir> {
    let parent = match dir.parent() {
        Some(p) if p.as_os_str().is_empty() => Path::new("."),
        Some(p) => p,
        None => return Dir::open_ambient_dir(dir, cap_std::ambient_authority()),
    };
    match dir.file_name() {
        Some(name) => Dir::open_ambient_dir(parent, cap_std::ambient_authority())?.open_dir(name),
        None => Dir::open_ambient_dir(dir, cap_std::ambient_authority()),
    }
}

/// One skill folder opened for a scan: the stamps of the folder and of its `SKILL.md` come
/// from the open handles (`fstat`), not from walking their paths again.
pub(crate) struct OpenedSkill {
    /// The folder's stamp (default when it could not be opened).
    pub(crate) dir: Stamp,
    /// `SKILL.md`: open with its stamp, absent, or refused.
    pub(crate) skill_md: SkillMd,
}

/// What opening a skill folder's `SKILL.md` found.
pub(crate) enum SkillMd {
    /// Open, with its stamp.
    Open(std::fs::File, Stamp),
    /// No such file (or the folder itself could not be opened).
    Missing,
    /// There, but refused (a symlink leading outside, a folder); the stamp its path has.
    Refused(ReadError, Option<Stamp>),
}

/// Opens the skill folder `name` of the skills folder `root` (through `handle`, an open handle
/// on `root`, when there is one) and its `SKILL.md`.
pub(crate) fn open_skill(handle: Option<&Dir>, root: &Path, name: &str) -> OpenedSkill {
    #[cfg(target_os = "linux")]
    if let Some(opened) = handle.and_then(|h| fast::open_skill(h, name)) {
        return opened;
    }
    let child = root.join(name);
    let opened = match handle {
        Some(handle) => handle.open_dir(name),
        None => open_skill_dir(&child),
    };
    let Ok(folder) = opened else {
        return OpenedSkill {
            dir: Stamp::of(&child).unwrap_or_default(),
            skill_md: SkillMd::Missing,
        };
    };
    let folder = folder.into_std_file();
    let dir = folder
        .metadata()
        .map(|m| Stamp::from_meta(&m))
        .unwrap_or_default();
    let folder = Dir::from_std_file(folder);
    let skill_md = match open_file(&folder, SKILL_FILE) {
        Ok((file, meta)) => SkillMd::Open(file, Stamp::from_meta(&meta)),
        Err(ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => SkillMd::Missing,
        Err(e) => SkillMd::Refused(e, Stamp::of(&child.join(SKILL_FILE)).ok()),
    };
    OpenedSkill { dir, skill_md }
}

/// Opens `path` (relative) inside `folder`, confined to it, as a regular file: a folder, a
/// FIFO or a device is refused. Opened non-blocking, so a FIFO does not hang the caller in
/// `open` waiting for a writer (reads of a regular file are not affected).
pub(crate) fn open_file(
    folder: &Dir,
    path: impl AsRef<Path>,
) -> Result<(std::fs::File, std::fs::Metadata), ReadError> {
    let mut options = cap_std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt as _;
        options.custom_flags(NONBLOCK);
    }
    let file = folder.open_with(path, &options)?.into_std();
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(ReadError::NotAFile(IS_A_FOLDER));
    }
    if !meta.is_file() {
        return Err(ReadError::NotAFile(NOT_REGULAR));
    }
    Ok((file, meta))
}

#[cfg(unix)]
const NONBLOCK: i32 = rustix::fs::OFlags::NONBLOCK.bits() as i32;
const IS_A_FOLDER: &str = "is a folder, not a file";
const NOT_REGULAR: &str = "is not a regular file";

/// Reads the open regular file `f`, which `fstat` said holds `len` bytes, capped at `max`
/// bytes while reading (a file that grew meanwhile is still cut). A read that comes back short
/// once `len` bytes are in is taken as the end of the file, as the size said, so a file read
/// whole costs one `read`, not a second one that finds the end.
pub(crate) fn read_sized(mut f: std::fs::File, len: u64, max: u64) -> Result<Vec<u8>, ReadError> {
    use std::io::Read as _;
    if len > max {
        return Err(ReadError::TooLarge(len));
    }
    // One byte past the size: a full buffer means the file grew since the `fstat`.
    let want = len as usize + 1;
    let mut out = vec![0u8; want];
    let mut got = 0;
    loop {
        let n = match f.read(&mut out[got..]) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        got += n;
        if n == 0 || (got as u64 >= len && got < want) {
            out.truncate(got);
            return Ok(out);
        }
        if got == want {
            break;
        }
    }
    // Grown: read on, up to the cap.
    (&mut f).take(max + 1 - want as u64).read_to_end(&mut out)?;
    if out.len() as u64 > max {
        return Err(ReadError::TooLarge(out.len() as u64));
    }
    Ok(out)
}

/// Reads `file` (relative) inside `folder`, confined to it and capped at `max` bytes while
/// reading (a file that grows in between is still cut).
pub(crate) fn read_capped(folder: &Dir, file: &str, max: u64) -> Result<Vec<u8>, ReadError> {
    let (file, meta) = open_file(folder, file)?;
    read_sized(file, meta.len(), max)
}

/// Reads `file` of the skill folder `dir` (see [`open_skill_dir`], [`read_capped`]); with
/// `root`, a handle already open on the skills folder, through it.
pub(crate) fn read_confined(
    root: Option<&Dir>,
    dir: &Path,
    file: &str,
    max: u64,
) -> Result<Vec<u8>, ReadError> {
    let folder = match (root, dir.file_name()) {
        (Some(root), Some(name)) => root.open_dir(name)?,
        _ => open_skill_dir(dir)?,
    };
    read_capped(&folder, file, max)
}

/// A handle on the skills folder `dir`, to open its skills through.
pub(crate) fn open_root(dir: &Path) -> Option<Dir> {
    Dir::open_ambient_dir(dir, cap_std::ambient_authority()).ok()
}

/// `f` over `items`, on up to four threads when there are at least `per_thread` items per
/// thread; results in the order of `items`.
pub(crate) fn parallel<T: Sync, R: Send>(
    items: &[T],
    per_thread: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let threads = cores.min(4).min(items.len() / per_thread.max(1)).max(1);
    if threads == 1 {
        return items.iter().map(f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    std::thread::scope(|s| {
        let f = &f;
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| s.spawn(move || part.iter().map(f).collect::<Vec<R>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}

/// The usual case of [`open_skill`]: five system calls with the read and the close, not nine.
/// The folder's stamp by `statx` relative to the skills folder's handle, and `SKILL.md` opened
/// through that handle in one `openat2` that stays beneath it and follows no symlink in the
/// last step (no handle on the skill folder to open, stat and close). A
/// `SKILL.md` that is a symlink (allowed while it stays inside its own folder), and every
/// error, take the general path, which judges them exactly as before.
#[cfg(target_os = "linux")]
mod fast {
    use cap_std::fs::Dir;
    use rustix::fs::{AtFlags, Mode, OFlags, ResolveFlags, StatxFlags};

    use super::{IS_A_FOLDER, NOT_REGULAR, OpenedSkill, ReadError, SKILL_FILE, SkillMd, Stamp};

    pub(super) fn open_skill(root: &Dir, name: &str) -> Option<OpenedSkill> {
        let dir = rustix::fs::statx(root, name, AtFlags::empty(), StatxFlags::BASIC_STATS).ok()?;
        if !rustix::fs::FileType::from_raw_mode(dir.stx_mode.into()).is_dir() {
            return None;
        }
        let fd = rustix::fs::openat2(
            root,
            format!("{name}/{SKILL_FILE}"),
            // Non-blocking: a FIFO named `SKILL.md` must not hang the scan in `open`.
            OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW | OFlags::NOCTTY | OFlags::NONBLOCK,
            Mode::empty(),
            ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
        )
        .ok()?;
        let file = rustix::fs::statx(&fd, "", AtFlags::EMPTY_PATH, StatxFlags::BASIC_STATS).ok()?;
        let skill_md = match rustix::fs::FileType::from_raw_mode(file.stx_mode.into()) {
            rustix::fs::FileType::RegularFile => {
                SkillMd::Open(std::fs::File::from(fd), stamp(&file))
            }
            rustix::fs::FileType::Directory => {
                SkillMd::Refused(ReadError::NotAFile(IS_A_FOLDER), Some(stamp(&file)))
            }
            _ => SkillMd::Refused(ReadError::NotAFile(NOT_REGULAR), Some(stamp(&file))),
        };
        Some(OpenedSkill {
            dir: stamp(&dir),
            skill_md,
        })
    }

    /// The same stamp [`Stamp::from_meta`] takes from `std`'s metadata (which is `statx` too).
    fn stamp(s: &rustix::fs::Statx) -> Stamp {
        let nanos = |t: rustix::fs::StatxTimestamp| {
            i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec)
        };
        Stamp {
            len: s.stx_size,
            mtime: u128::try_from(nanos(s.stx_mtime)).unwrap_or(0),
            ctime: nanos(s.stx_ctime),
            ino: s.stx_ino,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ReadError, read_sized};

    fn file_of(bytes: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("f");
        std::fs::write(&path, bytes).expect("write");
        (dir, path)
    }

    fn read(path: &std::path::Path, len: u64, max: u64) -> Result<Vec<u8>, ReadError> {
        read_sized(std::fs::File::open(path).expect("open"), len, max)
    }

    #[test]
    fn a_sized_read_takes_what_is_there_when_the_size_was_stale() {
        let (_dir, path) = file_of(b"0123456789");
        // As the size said.
        assert_eq!(read(&path, 10, 100).expect("read"), b"0123456789");
        // Grown since the size was taken: read on, to the end.
        assert_eq!(read(&path, 4, 100).expect("read"), b"0123456789");
        // Shrunk since: what is there.
        assert_eq!(read(&path, 30, 100).expect("read"), b"0123456789");
        assert_eq!(read(&path, 0, 100).expect("read"), b"0123456789");
    }

    #[test]
    fn a_sized_read_is_cut_at_the_cap_even_when_the_size_was_stale() {
        let (_dir, path) = file_of(b"0123456789");
        assert!(matches!(read(&path, 10, 9), Err(ReadError::TooLarge(10))));
        // Grown past the cap after the size was taken: cut while reading.
        assert!(matches!(read(&path, 4, 8), Err(ReadError::TooLarge(9))));
        assert_eq!(read(&path, 4, 10).expect("at the cap"), b"0123456789");
    }
}

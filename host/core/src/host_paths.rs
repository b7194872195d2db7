//! Host paths that the operator wrote, resolved and opened the way grants need them.
//!
//! A folder grant names a host folder once, in `guild.toml`; a plugin holding another grant may
//! be able to write near it. So a grant is resolved once (symbolic links the operator wrote are
//! followed, to a canonical path), and from then on the folder is opened **without following any
//! symbolic link in any component** ([`open_folder_nofollow`]): a link planted later by anyone
//! is refused instead of being followed, and the opened handle is what every instance gets.
//! Everything here is a leaf: it knows paths, not plugins or configs (docs/security.md,
//! "Folder grants").

use std::fs::File;
use std::io;
use std::path::{Component, Path, PathBuf};

/// The canonical form of `path`, or, when it does not exist (yet), the canonical form of its
/// longest existing ancestor with the rest appended (`..` in the rest applied lexically).
pub fn canonical_or_planned(path: &Path) -> PathBuf {
    if let Ok(c) = path.canonicalize() {
        return c;
    }
    let absolute = absolute(path);
    let mut base = absolute.as_path();
    let mut rest = Vec::new();
    let mut resolved = loop {
        if let Ok(c) = base.canonicalize() {
            break c;
        }
        match (base.parent(), base.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                base = parent;
            }
            // `..` at the end or nothing exists at all: fall back to the lexical path.
            _ => break absolute.clone(),
        }
    };
    for part in rest.iter().rev() {
        match Path::new(part).components().next() {
            Some(Component::ParentDir) => {
                resolved.pop();
            }
            Some(Component::CurDir) | None => {}
            Some(_) => resolved.push(part),
        }
    }
    resolved
}

/// `path` made absolute against the current folder and normalised lexically (`.` dropped, `..`
/// applied to what precedes it) without asking the file system: what the operator wrote, as a
/// place, before any symbolic link in it is followed.
pub fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in absolute(path).components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_owned()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    }
}

/// Whether `inner` lies strictly inside `outer` (a different, deeper path).
pub fn strictly_inside(inner: &Path, outer: &Path) -> bool {
    inner != outer && inner.starts_with(outer)
}

/// Opens the folder at the absolute, canonical `path` one component at a time from `/`, never
/// following a symbolic link: a component that is a link (or not a folder) fails the open with
/// an error naming it. The returned handle is the folder itself; operations through it stay
/// inside it whatever is renamed or re-linked around it later.
pub fn open_folder_nofollow(path: &Path) -> io::Result<File> {
    let mut components = path.components();
    let Some(Component::RootDir) = components.next() else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not an absolute path", path.display()),
        ));
    };
    let mut dir = File::open("/")?;
    let mut walked = PathBuf::from("/");
    for part in components {
        let Component::Normal(name) = part else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a canonical path", path.display()),
            ));
        };
        walked.push(name);
        dir = nofollow::open_dir(&dir, name).map_err(|e| {
            let what = match std::fs::symlink_metadata(&walked) {
                Ok(m) if m.file_type().is_symlink() => "is a symbolic link now".to_owned(),
                Ok(m) if !m.is_dir() => "is not a folder now".to_owned(),
                _ => format!("cannot be opened ({e})"),
            };
            io::Error::new(
                e.kind(),
                format!(
                    "{} {what}; a granted folder is opened without following links, so that \
                     nobody can re-point it after the operator named it",
                    walked.display()
                ),
            )
        })?;
    }
    Ok(dir)
}

/// Bytes of regular files and number of entries (files, folders, links) under the open
/// `folder`, without following links: every step is relative to a handle, so a folder swapped
/// for a link while the walk runs is counted as a link, never walked. Entries that cannot be
/// read are left out (the host could not have written them either).
pub fn usage_under(folder: &File) -> (u64, u64) {
    let (mut bytes, mut files) = (0u64, 0u64);
    let Ok(root) = folder.try_clone() else {
        return (0, 0);
    };
    let mut folders = vec![root];
    while let Some(dir) = folders.pop() {
        for (name, kind, len) in nofollow::entries(&dir) {
            files += 1;
            match kind {
                nofollow::Kind::Folder => {
                    if let Ok(sub) = nofollow::open_dir(&dir, &name) {
                        folders.push(sub);
                    }
                }
                nofollow::Kind::File => bytes = bytes.saturating_add(len),
                nofollow::Kind::Other => {}
            }
        }
    }
    (bytes, files)
}

/// Handle-relative opens and listings that never follow a link.
#[cfg(unix)]
mod nofollow {
    use std::ffi::{OsStr, OsString};
    use std::fs::File;
    use std::io;
    use std::os::unix::ffi::OsStrExt;

    use rustix::fs::{AtFlags, FileType, Mode, OFlags};

    pub(super) enum Kind {
        Folder,
        File,
        Other,
    }

    /// Opens the folder `name` inside `dir`; a link there fails (`ELOOP`), as does a file.
    pub(super) fn open_dir(dir: &File, name: &OsStr) -> io::Result<File> {
        let fd = rustix::fs::openat(
            dir,
            name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(File::from(fd))
    }

    /// The entries of `dir` with their kind and (for files) length, links not followed.
    pub(super) fn entries(dir: &File) -> Vec<(OsString, Kind, u64)> {
        let Ok(list) = rustix::fs::Dir::read_from(dir) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for entry in list.flatten() {
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let Ok(stat) = rustix::fs::statat(dir, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW)
            else {
                continue;
            };
            let kind = match FileType::from_raw_mode(stat.st_mode) {
                FileType::Directory => Kind::Folder,
                FileType::RegularFile => Kind::File,
                _ => Kind::Other,
            };
            let len = u64::try_from(stat.st_size).unwrap_or(0);
            out.push((OsStr::from_bytes(name).to_owned(), kind, len));
        }
        out
    }
}

/// Elsewhere the standard library's path operations stand in (they follow links: Guild's
/// confinement guarantees are stated for Unix).
#[cfg(not(unix))]
mod nofollow {
    use std::ffi::{OsStr, OsString};
    use std::fs::File;
    use std::io;

    pub(super) enum Kind {
        Folder,
        File,
        Other,
    }

    pub(super) fn open_dir(_dir: &File, _name: &OsStr) -> io::Result<File> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "granted folders are supported on Unix only",
        ))
    }

    pub(super) fn entries(_dir: &File) -> Vec<(OsString, Kind, u64)> {
        Vec::new()
    }
}

/// One folder grant as the nesting rule sees it: the path as written (resolved against the
/// config's folder) and whether the grant lets its plugin write.
pub struct GrantPlace<'a> {
    /// The path from `guild.toml`, resolved against the config's folder.
    pub written: &'a Path,
    /// Whether the plugin may write there (`mode = "rw"`).
    pub writable: bool,
}

/// The first pair `(outer, inner)` of grants where `inner` lies strictly inside the writable
/// `outer`, judged both as written and as resolved (a path written through a link in a writable
/// folder counts as inside it, and so does a link that resolves inside it). A plugin that can
/// write the outer folder could otherwise replace a folder on the inner grant's path (with a
/// link, or a folder of its own) and re-point that grant at the next start. The same folder
/// granted twice is not nesting: both mounts are held by one handle of that folder.
pub fn nested_in_writable(grants: &[GrantPlace<'_>]) -> Option<(usize, usize)> {
    let forms: Vec<[PathBuf; 2]> = grants
        .iter()
        .map(|g| [lexical(g.written), canonical_or_planned(g.written)])
        .collect();
    for (o, outer) in grants.iter().enumerate() {
        if !outer.writable {
            continue;
        }
        for (i, inner) in forms.iter().enumerate() {
            if i != o
                && inner
                    .iter()
                    .any(|a| forms[o].iter().any(|b| strictly_inside(a, b)))
            {
                return Some((o, i));
            }
        }
    }
    None
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_real_folder_opens_and_a_linked_component_is_refused() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().canonicalize().expect("canonical");
        std::fs::create_dir_all(root.join("a/b")).expect("mkdir");
        std::fs::write(root.join("a/b/f"), b"1234").expect("write");
        let opened = open_folder_nofollow(&root.join("a/b")).expect("real folder opens");
        assert_eq!(usage_under(&opened), (4, 1));

        // Replace `a` by a link to somewhere else holding the same shape: refused, naming `a`.
        std::fs::create_dir_all(root.join("elsewhere/b")).expect("mkdir");
        std::fs::rename(root.join("a"), root.join("moved")).expect("rename");
        std::os::unix::fs::symlink(root.join("elsewhere"), root.join("a")).expect("link");
        let err = open_folder_nofollow(&root.join("a/b")).expect_err("link refused");
        let text = err.to_string();
        assert!(text.contains("is a symbolic link now"), "{text}");
        assert!(
            text.contains(&root.join("a").display().to_string()),
            "{text}"
        );
        // The handle opened before the swap still names the original folder.
        assert_eq!(usage_under(&opened), (4, 1));
    }

    #[test]
    fn a_link_as_the_last_component_is_refused_and_relative_paths_are_not_taken() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().canonicalize().expect("canonical");
        std::fs::create_dir(root.join("real")).expect("mkdir");
        std::os::unix::fs::symlink("real", root.join("alias")).expect("link");
        assert!(open_folder_nofollow(&root.join("real")).is_ok());
        assert!(open_folder_nofollow(&root.join("alias")).is_err());
        assert!(open_folder_nofollow(Path::new("relative/path")).is_err());
    }

    #[test]
    fn the_usage_walk_counts_a_link_and_never_walks_it() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().canonicalize().expect("canonical");
        std::fs::create_dir_all(root.join("g/sub")).expect("mkdir");
        std::fs::create_dir_all(root.join("big")).expect("mkdir");
        std::fs::write(root.join("big/f"), vec![0u8; 1000]).expect("write");
        std::os::unix::fs::symlink(root.join("big"), root.join("g/sub/link")).expect("link");
        let g = open_folder_nofollow(&root.join("g")).expect("open");
        // `sub` and `link`: two entries, no bytes (the 1000-byte file behind the link is not counted).
        assert_eq!(usage_under(&g), (0, 2));
    }

    #[test]
    fn nesting_under_a_writable_grant_is_found_as_written_and_as_resolved() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().canonicalize().expect("canonical");
        std::fs::create_dir_all(root.join("data/sub")).expect("mkdir");
        std::fs::create_dir_all(root.join("side")).expect("mkdir");
        std::os::unix::fs::symlink(root.join("side"), root.join("data/link")).expect("link");
        let place = |p: &str, writable| (root.join(p), writable);
        let check = |list: &[(PathBuf, bool)]| {
            let grants: Vec<GrantPlace<'_>> = list
                .iter()
                .map(|(p, w)| GrantPlace {
                    written: p,
                    writable: *w,
                })
                .collect();
            nested_in_writable(&grants)
        };
        // Denied: inside a writable folder, as written (through a link) or resolved.
        assert_eq!(
            check(&[place("data", true), place("data/sub", false)]),
            Some((0, 1))
        );
        assert_eq!(
            check(&[place("data/link", false), place("data", true)]),
            Some((1, 0))
        );
        // Allowed: side by side, the same folder twice, nesting under a read-only folder.
        assert_eq!(check(&[place("data", true), place("side", true)]), None);
        assert_eq!(check(&[place("data", true), place("data", false)]), None);
        assert_eq!(
            check(&[place("data", false), place("data/sub", true)]),
            None
        );
    }

    #[test]
    fn lexical_and_inside() {
        assert_eq!(lexical(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert!(strictly_inside(Path::new("/a/b"), Path::new("/a")));
        assert!(!strictly_inside(Path::new("/a"), Path::new("/a")));
        assert!(!strictly_inside(Path::new("/ab"), Path::new("/a")));
    }
}

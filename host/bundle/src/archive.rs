//! The bundle file: packing a plugin folder, writing the tar deterministically, and reading one
//! back entry by entry into memory with every archive trick refused (see the module docs of
//! [`super`]). Nothing here trusts a header: sizes are measured on the bytes actually read.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::Path;

use super::manifest::{DigestManifest, FORMAT, FileDigest, sha256_hex};
use super::paths::{NameSet, check_contents, check_path};
use super::{BundleError, FILES_PREFIX, MANIFEST_ENTRY, SIGNATURES_PREFIX};
use guild_core::manifest::{MANIFEST_FILE, Manifest};

/// A bundle held in memory: the manifest's exact bytes, the files by plugin-relative path and
/// the armored signatures, in archive order.
#[derive(Debug, Clone, Default)]
pub struct Bundle {
    /// The digest manifest exactly as stored (the signed bytes).
    pub manifest_bytes: Vec<u8>,
    /// Plugin files by `/`-separated relative path.
    pub files: BTreeMap<String, Vec<u8>>,
    /// Armored SSHSIG signatures.
    pub signatures: Vec<Vec<u8>>,
}

/// Size and count caps, measured on the bytes actually read.
#[derive(Debug, Clone, Copy)]
pub struct Caps {
    /// Largest bundle file.
    pub bundle_bytes: u64,
    /// Most entries of any kind.
    pub entries: usize,
    /// Sum of the sizes of every entry.
    pub total_bytes: u64,
    /// Most signatures.
    pub signatures: usize,
    /// Largest signature.
    pub signature_bytes: u64,
}

impl Default for Caps {
    /// 256 MiB per bundle and in total, 4096 entries, 32 signatures of at most 16 KiB each.
    fn default() -> Self {
        Self {
            bundle_bytes: 256 << 20,
            entries: 4096,
            total_bytes: 256 << 20,
            signatures: 32,
            signature_bytes: 16 << 10,
        }
    }
}

/// Options for [`pack`].
#[derive(Debug, Clone, Copy)]
pub struct PackOptions {
    /// Creation time recorded in the manifest, Unix seconds.
    pub created: u64,
    /// Optional expiry, Unix seconds.
    pub expires: Option<u64>,
}

/// Reads a plugin folder into an unsigned bundle: every regular file, sorted; a symbolic link,
/// a special file or a name the format refuses stops the pack with its path.
pub fn pack(dir: &Path, options: PackOptions, caps: Caps) -> Result<Bundle, BundleError> {
    let text = std::fs::read_to_string(dir.join(MANIFEST_FILE))
        .map_err(|e| BundleError::io(&dir.join(MANIFEST_FILE), e))?;
    let plugin = Manifest::parse(&text, dir)
        .map_err(|e| BundleError::Manifest(format!("{MANIFEST_FILE}: {e}")))?;
    let mut files = BTreeMap::new();
    let mut walk = Walk {
        total: 0,
        names: NameSet::default(),
        caps,
    };
    collect(dir, "", &mut files, &mut walk)?;
    let component = component_path(&plugin)?;
    if !files.contains_key(&component) {
        return Err(BundleError::Manifest(format!(
            "the component {component:?} named by {MANIFEST_FILE} is not in {} (did the plugin build run?)",
            dir.display()
        )));
    }
    let manifest = DigestManifest {
        format: FORMAT.to_owned(),
        name: plugin.plugin.name.clone(),
        version: plugin.plugin.version.to_string(),
        kind: kind_name(&plugin),
        wit: super::wit_version().to_owned(),
        created: options.created,
        expires: options.expires,
        files: files
            .iter()
            .map(|(path, bytes): (&String, &Vec<u8>)| FileDigest {
                path: path.clone(),
                size: bytes.len() as u64,
                sha256: sha256_hex(bytes),
            })
            .collect(),
    };
    Ok(Bundle {
        manifest_bytes: manifest.to_bytes(),
        files,
        signatures: Vec::new(),
    })
}

/// The creation time `pack` records when none is given: the modification time of the newest
/// file in the plugin folder (capped at `now`), so packing the same folder twice gives the same
/// bytes. Symbolic links are not followed (`pack` refuses them anyway).
pub fn newest_mtime(dir: &Path, now: u64) -> Result<u64, BundleError> {
    let mut newest = 0u64;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for child in std::fs::read_dir(&dir).map_err(|e| BundleError::io(&dir, e))? {
            let child = child.map_err(|e| BundleError::io(&dir, e))?;
            let path = child.path();
            let meta = std::fs::symlink_metadata(&path).map_err(|e| BundleError::io(&path, e))?;
            if meta.is_dir() {
                stack.push(path);
            } else if meta.is_file() {
                let secs = meta
                    .modified()
                    .ok()
                    .and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_secs());
                newest = newest.max(secs);
            }
        }
    }
    Ok(newest.min(now))
}

/// The manifest's component path in bundle form (`/`-separated, checked).
pub(crate) fn component_path(plugin: &Manifest) -> Result<String, BundleError> {
    let parts: Option<Vec<&str>> = plugin
        .plugin
        .component
        .components()
        .map(|c| match c {
            std::path::Component::Normal(s) => s.to_str(),
            _ => None,
        })
        .collect();
    let path = parts.map(|p| p.join("/")).unwrap_or_default();
    check_path(&path).map_err(|e| {
        BundleError::Manifest(format!(
            "{MANIFEST_FILE} [plugin] component {:?}: {e}",
            plugin.plugin.component
        ))
    })?;
    Ok(path)
}

/// `[plugin] kind` as written in `plugin.toml`.
pub(crate) fn kind_name(plugin: &Manifest) -> String {
    serde_json::to_value(plugin.plugin.kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// What a walk of the plugin folder has seen so far.
struct Walk {
    total: u64,
    names: NameSet,
    caps: Caps,
}

/// Adds every regular file under `dir` to `files`, refusing at pack time everything
/// [`read`] (and so `sign` and `verify`) would refuse: a bad path, a name that collides with
/// another after case folding or Unicode normalization (`README.md` beside `readme.md`), an
/// archive inside, a folder over the caps.
fn collect(
    dir: &Path,
    prefix: &str,
    files: &mut BTreeMap<String, Vec<u8>>,
    walk: &mut Walk,
) -> Result<(), BundleError> {
    let mut children: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| BundleError::io(dir, e))?
        .collect::<Result<_, _>>()
        .map_err(|e| BundleError::io(dir, e))?;
    children.sort_by_key(|e| e.file_name());
    for child in children {
        let path = child.path();
        let name = child.file_name();
        let Some(name) = name.to_str() else {
            return Err(BundleError::io(&path, "file name is not UTF-8"));
        };
        let rel = format!("{prefix}{name}");
        let meta = std::fs::symlink_metadata(&path).map_err(|e| BundleError::io(&path, e))?;
        let kind = meta.file_type();
        if kind.is_dir() {
            collect(&path, &format!("{rel}/"), files, walk)?;
            continue;
        }
        if kind.is_symlink() {
            return Err(BundleError::io(
                &path,
                "is a symbolic link; a bundle ships regular files only (copy the target in)",
            ));
        }
        if !kind.is_file() {
            return Err(BundleError::io(&path, "is not a regular file"));
        }
        check_path(&rel).map_err(|e| BundleError::io(&path, e))?;
        walk.names
            .insert(&rel)
            .map_err(|e| BundleError::io(&path, format!("{e}: a bundle refuses both")))?;
        walk.total += meta.len();
        let caps = walk.caps;
        if walk.total > caps.total_bytes || files.len() + 1 > caps.entries {
            return Err(BundleError::Archive(format!(
                "{} is over the caps ({} files, {} bytes)",
                dir.display(),
                caps.entries,
                caps.total_bytes
            )));
        }
        let bytes = std::fs::read(&path).map_err(|e| BundleError::io(&path, e))?;
        check_contents(&bytes).map_err(|e| BundleError::io(&path, e))?;
        files.insert(rel, bytes);
    }
    Ok(())
}

/// Writes the tar: the manifest, the files sorted by path, then the signatures; every header
/// ustar, regular file, mode 0644, owner 0:0, mtime 0. The same bundle gives the same bytes.
pub fn write(bundle: &Bundle) -> Result<Vec<u8>, BundleError> {
    write_to(bundle, Vec::new())
}

/// [`write`] into any writer (the reader compares a bundle against this without a copy).
fn write_to<W: Write>(bundle: &Bundle, out: W) -> Result<W, BundleError> {
    let mut builder = tar::Builder::new(out);
    let mut add = |name: &str, data: &[u8]| -> Result<(), BundleError> {
        let mut header = tar::Header::new_ustar();
        header
            .set_path(name)
            .map_err(|e| BundleError::entry(name, format!("cannot be stored: {e}")))?;
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_uid(0);
        header.set_gid(0);
        header.set_mtime(0);
        header.set_cksum();
        builder
            .append(&header, data)
            .map_err(|e| BundleError::entry(name, e.to_string()))
    };
    add(MANIFEST_ENTRY, &bundle.manifest_bytes)?;
    for (path, bytes) in &bundle.files {
        add(&format!("{FILES_PREFIX}{path}"), bytes)?;
    }
    for (i, sig) in bundle.signatures.iter().enumerate() {
        add(&format!("{SIGNATURES_PREFIX}{i:03}.sig"), sig)?;
    }
    builder
        .into_inner()
        .map_err(|e| BundleError::Archive(format!("cannot finish the archive: {e}")))
}

/// Reads a bundle file into memory, refusing one larger than the cap before reading it.
pub fn read_file(path: &Path, caps: Caps) -> Result<Bundle, BundleError> {
    let file = std::fs::File::open(path).map_err(|e| BundleError::io(path, e))?;
    let mut bytes = Vec::new();
    file.take(caps.bundle_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| BundleError::io(path, e))?;
    if bytes.len() as u64 > caps.bundle_bytes {
        return Err(BundleError::Archive(format!(
            "{} is larger than {} bytes",
            path.display(),
            caps.bundle_bytes
        )));
    }
    read(&bytes, caps)
}

/// Parses bundle bytes. Every header is seen raw (extension headers included, never applied);
/// only regular files named like the format's entries are accepted, each read into memory.
pub fn read(bytes: &[u8], caps: Caps) -> Result<Bundle, BundleError> {
    let mut archive = tar::Archive::new(bytes);
    let entries = archive
        .entries()
        .map_err(|e| BundleError::Archive(format!("not a tar archive: {e}")))?
        .raw(true);
    let mut bundle = Bundle::default();
    let mut names = NameSet::default();
    let mut seen_manifest = false;
    let mut total = 0u64;
    // Where each entry's header starts, and where the last entry's padded data ends.
    let mut starts: Vec<(u64, String)> = Vec::new();
    let mut end = 0u64;
    for (index, entry) in entries.enumerate() {
        let mut entry =
            entry.map_err(|e| BundleError::Archive(format!("entry {index} is unreadable: {e}")))?;
        if index >= caps.entries {
            return Err(BundleError::Archive(format!(
                "more than {} entries",
                caps.entries
            )));
        }
        let name = String::from_utf8(entry.path_bytes().into_owned())
            .map_err(|_| BundleError::entry(&format!("#{index}"), "name is not UTF-8"))?;
        refuse_special(&name, entry.header().entry_type())?;
        let declared = entry
            .header()
            .entry_size()
            .map_err(|e| BundleError::entry(&name, format!("bad size field: {e}")))?;
        let room = caps.total_bytes.saturating_sub(total);
        if declared > room {
            return Err(BundleError::Archive(format!(
                "entry {name:?} takes the bundle over {} bytes",
                caps.total_bytes
            )));
        }
        let mut data = Vec::new();
        (&mut entry)
            .take(room + 1)
            .read_to_end(&mut data)
            .map_err(|e| BundleError::entry(&name, format!("unreadable: {e}")))?;
        total += data.len() as u64;
        if total > caps.total_bytes || data.len() as u64 != declared {
            return Err(BundleError::entry(
                &name,
                format!(
                    "size field says {declared} bytes, read {} (cap {} in total)",
                    data.len(),
                    caps.total_bytes
                ),
            ));
        }
        starts.push((entry.raw_header_position(), name.clone()));
        end = entry.raw_file_position() + declared.div_ceil(BLOCK) * BLOCK;
        names
            .insert(&name)
            .map_err(|reason| BundleError::entry(&name, reason))?;
        if name == MANIFEST_ENTRY {
            if index != 0 {
                return Err(BundleError::entry(&name, "the manifest must come first"));
            }
            seen_manifest = true;
            bundle.manifest_bytes = data;
        } else if let Some(rel) = name.strip_prefix(FILES_PREFIX) {
            check_path(rel).map_err(|reason| BundleError::entry(&name, reason))?;
            check_contents(&data).map_err(|reason| BundleError::entry(&name, reason))?;
            bundle.files.insert(rel.to_owned(), data);
        } else if is_signature_name(&name) {
            if bundle.signatures.len() >= caps.signatures
                || data.len() as u64 > caps.signature_bytes
            {
                return Err(BundleError::entry(
                    &name,
                    format!(
                        "over the signature caps ({} signatures of {} bytes)",
                        caps.signatures, caps.signature_bytes
                    ),
                ));
            }
            bundle.signatures.push(data);
        } else {
            return Err(BundleError::entry(
                &name,
                format!(
                    "not part of the bundle format (expected {MANIFEST_ENTRY}, {FILES_PREFIX}… or {SIGNATURES_PREFIX}NNN.sig)"
                ),
            ));
        }
    }
    if !seen_manifest {
        return Err(BundleError::Archive(format!(
            "no {MANIFEST_ENTRY}: not a Guild bundle"
        )));
    }
    check_end(bytes, end)?;
    check_canonical(bytes, &bundle, &starts)?;
    Ok(bundle)
}

/// A tar block.
const BLOCK: u64 = 512;

/// The end marker [`write`] puts after the last entry: two zero blocks, then nothing.
const END_MARKER: usize = 1024;

/// After the last entry comes exactly the end marker: a missing or cut marker, bytes after it
/// (trailing data, or entries a reader that skips zero blocks would find) are refused.
fn check_end(bytes: &[u8], end: u64) -> Result<(), BundleError> {
    let rest = usize::try_from(end)
        .ok()
        .and_then(|end| bytes.get(end..))
        .unwrap_or_default();
    let marker = rest.get(..END_MARKER.min(rest.len())).unwrap_or_default();
    if marker.iter().any(|&b| b != 0) {
        return Err(BundleError::Archive(
            "the end marker after the last entry is not two zero blocks".into(),
        ));
    }
    if rest.len() < END_MARKER {
        return Err(BundleError::Archive(format!(
            "the end marker is missing or cut: {} of its {END_MARKER} zero bytes follow the \
             last entry (a truncated download?)",
            rest.len()
        )));
    }
    if rest.len() > END_MARKER {
        return Err(BundleError::Archive(format!(
            "{} bytes after the end marker: trailing data or entries after the end are refused",
            rest.len() - END_MARKER
        )));
    }
    Ok(())
}

/// The bytes are exactly what [`write`] makes of what was read: one bundle has one byte form,
/// so nothing can hide in header fields the reader ignores (mode, owner, times, padding),
/// entries are in order and named as the writer names them. `starts` (each entry's header
/// offset and name) names the entry where the first difference lies.
fn check_canonical(
    bytes: &[u8],
    bundle: &Bundle,
    starts: &[(u64, String)],
) -> Result<(), BundleError> {
    let compared = write_to(
        bundle,
        Compare {
            expected: bytes,
            at: 0,
            first_difference: None,
        },
    )?;
    let differs = compared.first_difference.or(
        // Same prefix, other length.
        (compared.at != bytes.len()).then_some(compared.at.min(bytes.len())),
    );
    let Some(at) = differs else {
        return Ok(());
    };
    let entry = starts
        .iter()
        .rev()
        .find(|(start, _)| *start <= at as u64)
        .map_or("the archive", |(_, name)| name.as_str());
    Err(BundleError::Archive(format!(
        "not in the canonical layout `guild bundle pack` writes: byte {at} (in {entry:?}) \
         differs (header fields, padding or entry order were changed)"
    )))
}

/// A writer that compares what is written with `expected` and remembers the first difference.
struct Compare<'a> {
    expected: &'a [u8],
    at: usize,
    first_difference: Option<usize>,
}

impl Write for Compare<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.first_difference.is_none() {
            let expected = self.expected.get(self.at..).unwrap_or_default();
            let same = buf.iter().zip(expected).take_while(|(a, b)| a == b).count();
            if same < buf.len() {
                self.first_difference = Some(self.at + same);
            }
        }
        self.at += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn is_signature_name(name: &str) -> bool {
    name.strip_prefix(SIGNATURES_PREFIX)
        .and_then(|n| n.strip_suffix(".sig"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Only regular files are accepted; every other entry type is named in the refusal.
fn refuse_special(name: &str, kind: tar::EntryType) -> Result<(), BundleError> {
    use tar::EntryType as T;
    let what = match kind {
        T::Regular => return Ok(()),
        T::Symlink => "a symbolic link",
        T::Link => "a hard link",
        T::Char | T::Block => "a device node",
        T::Fifo => "a FIFO",
        T::Directory => "a directory entry",
        T::XHeader | T::XGlobalHeader => "a PAX extension header",
        T::GNULongName | T::GNULongLink | T::GNUSparse => "a GNU extension header",
        _ => "an unsupported entry type",
    };
    Err(BundleError::entry(
        name,
        format!("is {what}; a bundle holds regular files only"),
    ))
}

//! What a file inside a bundle may be called and may contain: normalized relative paths only,
//! no name that collides with another after case folding or Unicode normalization, no policy or
//! grant file, no nested archive and no precompiled artifact.

use std::collections::BTreeMap;

use unicode_normalization::UnicodeNormalization;

/// Longest plugin-relative path accepted, in bytes.
pub const MAX_PATH_BYTES: usize = 240;

/// File names a bundle may never ship, compared case-insensitively: grants and trust only ever
/// come from the operator (`guild.toml`, the trust file and revocation list).
const POLICY_FILES: &[&str] = &[
    "guild.toml",
    "allowed_signers",
    "revoked_signers",
    "revoked_keys",
];

/// Extensions of archives and precompiled artifacts, compared case-insensitively. A precompiled
/// component is never accepted (deserialising one is unsafe by design; docs/security.md, "Compile cache").
const NESTED_EXTENSIONS: &[&str] = &[
    "tar", "tgz", "gz", "zip", "xz", "zst", "bz2", "7z", "rar", "jar", "whl", "guild", "cwasm",
];

/// Checks a plugin-relative path: `/`-separated, no empty, `.` or `..` segment, not absolute,
/// no drive letter or `\`, no control characters, at most [`MAX_PATH_BYTES`].
pub fn check_path(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err("empty path".into());
    }
    if path.len() > MAX_PATH_BYTES {
        return Err(format!("path longer than {MAX_PATH_BYTES} bytes"));
    }
    if path.starts_with('/') {
        return Err("absolute path".into());
    }
    if path.contains('\\') {
        return Err("backslash in path (Windows separator)".into());
    }
    if path.contains(':') {
        return Err("':' in path (drive letter or stream name)".into());
    }
    if path.chars().any(char::is_control) {
        return Err("control character in path".into());
    }
    for segment in path.split('/') {
        match segment {
            "" => return Err("empty path segment (`//` or trailing `/`)".into()),
            "." | ".." => return Err(format!("`{segment}` segment in path")),
            _ => {}
        }
    }
    let name = path.rsplit('/').next().unwrap_or(path).to_lowercase();
    if POLICY_FILES.contains(&name.as_str()) {
        return Err(format!(
            "policy file `{name}` inside a bundle: grants and trust come only from the operator's own files"
        ));
    }
    if let Some((_, ext)) = name.rsplit_once('.')
        && NESTED_EXTENSIONS.contains(&ext)
    {
        return Err(format!(
            "nested archive or precompiled artifact (`.{ext}`): a bundle ships plain files only"
        ));
    }
    Ok(())
}

/// Refuses contents that are an archive or compressed stream whatever the name says.
pub fn check_contents(bytes: &[u8]) -> Result<(), String> {
    const MAGIC: &[(&[u8], &str)] = &[
        (b"PK\x03\x04", "zip"),
        (b"\x1f\x8b", "gzip"),
        (b"\xfd7zXZ\x00", "xz"),
        (b"\x28\xb5\x2f\xfd", "zstd"),
        (b"BZh", "bzip2"),
        (b"7z\xbc\xaf\x27\x1c", "7z"),
        (b"Rar!", "rar"),
    ];
    for (magic, kind) in MAGIC {
        if bytes.starts_with(magic) {
            return Err(format!("nested {kind} archive inside a bundle"));
        }
    }
    if bytes.get(257..262) == Some(b"ustar") {
        return Err("nested tar archive inside a bundle".into());
    }
    Ok(())
}

/// The key two names collide under: Unicode compatibility normalization then lower case, so
/// `Plugin.toml`, `plugin.toml` and `plug\u{0131}n.toml`-style look-alikes that a
/// case-insensitive or normalizing file system would merge are caught.
pub fn fold_key(path: &str) -> String {
    path.nfkc()
        .collect::<String>()
        .to_lowercase()
        .nfkc()
        .collect()
}

/// Tracks names seen so far and refuses an exact duplicate or a fold collision.
#[derive(Default)]
pub struct NameSet {
    seen: BTreeMap<String, String>,
}

impl NameSet {
    /// Adds `path`, or says which earlier name it duplicates or collides with.
    pub fn insert(&mut self, path: &str) -> Result<(), String> {
        let key = fold_key(path);
        if let Some(earlier) = self.seen.get(&key) {
            return Err(if earlier == path {
                "duplicate entry".to_owned()
            } else {
                format!("collides with {earlier:?} after case folding or Unicode normalization")
            });
        }
        self.seen.insert(key, path.to_owned());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_relative_normalized_and_plain() {
        for ok in ["plugin.toml", "skills/triage/SKILL.md", "a.b/c-d_e.wasm"] {
            assert_eq!(check_path(ok), Ok(()), "{ok}");
        }
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../b",
            "a/./b",
            "a//b",
            "a/",
            "C:evil",
            "a\\b",
            "x\u{7}",
            "guild.toml",
            "sub/GUILD.TOML",
            "allowed_signers",
            "inner.tar",
            "x.ZIP",
            "app.cwasm",
        ] {
            assert!(check_path(bad).is_err(), "{bad:?} accepted");
        }
        assert!(check_path(&"a".repeat(MAX_PATH_BYTES + 1)).is_err());
    }

    #[test]
    fn archive_magic_is_refused_whatever_the_name() {
        assert!(check_contents(b"PK\x03\x04rest").is_err());
        assert!(check_contents(b"\x1f\x8b\x08").is_err());
        let mut tar = vec![0u8; 512];
        tar[257..262].copy_from_slice(b"ustar");
        assert!(check_contents(&tar).is_err());
        assert!(check_contents(b"\0asm\x0d\0\x01\0").is_ok());
        assert!(check_contents(b"plain text").is_ok());
    }

    #[test]
    fn duplicates_and_fold_collisions_are_refused() {
        let mut set = NameSet::default();
        set.insert("skills/a.md").expect("first");
        assert_eq!(set.insert("skills/a.md"), Err("duplicate entry".into()));
        assert!(set.insert("Skills/A.md").is_err(), "case fold");
        set.insert("caf\u{e9}.md").expect("composed");
        assert!(set.insert("cafe\u{301}.md").is_err(), "NFC/NFD");
        assert!(set.insert("\u{fb01}le.md").is_ok(), "first ligature name");
        assert!(set.insert("file.md").is_err(), "NFKC ligature");
    }
}

//! Remembered refusals: a component that did not compile (too slow, too much memory, invalid,
//! over a per-component limit) is refused again at the next start without compiling it again.
//! Without this a compile bomb costs every start the whole compile timeout and a child of
//! `compile_memory_mb`.
//!
//! A refusal is kept in the host-owned cache folder next to compiled entries, authenticated
//! and bound to the component's sha256 the same way ([`super::cache`]), and keyed by the limits
//! in force ([`limits_key`]): raising `[host] compile_timeout_s` or `compile_memory_mb` (or any
//! other limit a refusal depends on) compiles the component again. Failures that say nothing
//! about the component (the helper could not start, the disk failed) are never remembered.

use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::PathBuf;

use sha2::{Digest, Sha256};

use super::cache::{DiskCache, Kind};
use super::{CompileError, EngineOptions, POOL_LIMITS};

/// A short key of every limit a compile's outcome depends on.
pub(super) fn limits_key(options: &EngineOptions) -> String {
    let helper = options
        .compile_helper
        .as_ref()
        .map(|h| format!("{}ms/{}MiB", h.timeout.as_millis(), h.memory_mb));
    let text = format!(
        "v1 pooling={} max_memory_mb={} helper={helper:?} pool={POOL_LIMITS:?}",
        options.pooling, options.max_memory_mb
    );
    hex::encode(&Sha256::digest(text.as_bytes())[..8])
}

/// How a refusal is written: its kind, then its text or number.
fn encode(error: &CompileError) -> Option<String> {
    Some(match error {
        CompileError::TimedOut(secs) => format!("timed-out\n{secs}"),
        CompileError::OutOfMemory(mb) => format!("out-of-memory\n{mb}"),
        CompileError::Invalid(message) => format!("invalid\n{message}"),
        CompileError::OverLimit(message) => format!("over-limit\n{message}"),
        // Not about the component: the next start tries again.
        CompileError::Io(_) | CompileError::NotAComponent(_) | CompileError::Helper(_) => {
            return None;
        }
    })
}

fn decode(text: &str) -> Option<CompileError> {
    let (kind, value) = text.split_once('\n')?;
    Some(match kind {
        "timed-out" => CompileError::TimedOut(value.parse().ok()?),
        "out-of-memory" => CompileError::OutOfMemory(value.parse().ok()?),
        "invalid" => CompileError::Invalid(value.to_owned()),
        "over-limit" => CompileError::OverLimit(value.to_owned()),
        _ => return None,
    })
}

/// Longest refusal kept, bytes (a refusal's text is one message).
const MAX_REFUSAL_BYTES: u64 = 64 * 1024;

/// The refusal remembered for this component under these limits, if an authentic one exists.
pub(super) fn remembered(
    cache: &DiskCache,
    digest: &[u8; 32],
    sha256: &str,
    limits: &str,
) -> Option<(CompileError, PathBuf)> {
    let file = cache.refusal_entry(sha256, limits);
    let verified = match cache.read(&file, digest, Kind::Refusal) {
        Ok(verified) => verified?,
        Err(e) => {
            tracing::warn!(file = %file.display(), "discarding a remembered refusal: {e}");
            let _ = std::fs::remove_file(&file);
            return None;
        }
    };
    // Verifying read the file to its end: the refusal's text is at its start.
    let mut entry = &verified.file;
    entry.seek(SeekFrom::Start(0)).ok()?;
    let mut text = String::new();
    entry
        .take(verified.artifact_len.min(MAX_REFUSAL_BYTES))
        .read_to_string(&mut text)
        .ok()?;
    decode(&text).map(|error| (error, file))
}

/// Remembers `error` for this component under these limits, when it is about the component.
pub(super) fn remember(
    cache: &DiskCache,
    digest: &[u8; 32],
    sha256: &str,
    limits: &str,
    error: &CompileError,
) {
    let Some(text) = encode(error) else { return };
    let file = cache.refusal_entry(sha256, limits);
    if let Err(e) = cache.write(&file, digest, text.as_bytes(), Kind::Refusal) {
        tracing::warn!(file = %file.display(), "failed to remember a compile refusal: {e:#}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_about_the_component_round_trip_and_others_are_not_kept() {
        for error in [
            CompileError::TimedOut(120),
            CompileError::OutOfMemory(4096),
            CompileError::Invalid("bad type\nsecond line".into()),
            CompileError::OverLimit("65 core instances".into()),
        ] {
            let text = encode(&error).expect("kept");
            assert_eq!(
                decode(&text).map(|e| e.to_string()),
                Some(error.to_string())
            );
        }
        for error in [
            CompileError::Io("gone".into()),
            CompileError::Helper("cannot start".into()),
            CompileError::NotAComponent("is empty".into()),
        ] {
            assert!(encode(&error).is_none(), "{error}");
        }
        assert!(decode("unknown\nx").is_none());
        assert!(decode("timed-out\nsoon").is_none());
    }

    #[test]
    fn the_limits_key_changes_with_every_compile_limit() {
        use super::super::CompileHelper;
        let helper = |secs, mb| CompileHelper {
            program: "guild".into(),
            timeout: std::time::Duration::from_secs(secs),
            memory_mb: mb,
        };
        let base = EngineOptions {
            compile_helper: Some(helper(120, 4096)),
            ..EngineOptions::default()
        };
        let key = limits_key(&base);
        assert_eq!(key, limits_key(&base.clone()), "stable");
        for other in [
            EngineOptions {
                compile_helper: Some(helper(121, 4096)),
                ..base.clone()
            },
            EngineOptions {
                compile_helper: Some(helper(120, 4097)),
                ..base.clone()
            },
            EngineOptions {
                max_memory_mb: 256,
                ..base.clone()
            },
            EngineOptions {
                pooling: false,
                ..base.clone()
            },
            EngineOptions {
                compile_helper: None,
                ..base.clone()
            },
        ] {
            assert_ne!(limits_key(&other), key, "{other:?}");
        }
    }
}

//! The `disk` op: grows, shrinks and fills granted folders through each `wasi:filesystem` path a
//! guest has (`descriptor.write`, `write-via-stream`, `append-via-stream`, `set-size`, std's
//! files and folders), so host tests can check the disk quota on every one of them; and moves,
//! links and symlinks a name from one path to another (within a granted folder or across two),
//! so they can check that no name crosses between grants.
//!
//! The answer is `{"done": N, "error": E}`: how many bytes (or files) went through and the WASI
//! error code (`insufficient-space`, …) or std error kind that stopped it, `null` if none.

use serde_json::{Value, json};
use wasip2::filesystem::preopens::get_directories;
use wasip2::filesystem::types::{Descriptor, DescriptorFlags, ErrorCode, OpenFlags, PathFlags};
use wasip2::io::streams::{OutputStream, StreamError};

/// Runs one `disk` op: `how` is write | stream | append | set_size | std | files | dirs | remove
/// | rename | link | symlink. `rename` and `link` move or hard-link `path` to `to` (both
/// absolute guest paths, each under its own preopen); `symlink` makes `path` a symlink whose
/// text is `to`, as given.
pub(crate) fn disk(req: &Value) -> Result<Value, String> {
    let path = crate::ops::str_arg(req, "path")?;
    let how = crate::ops::str_arg(req, "how")?;
    let n = |field: &str| {
        req.get(field)
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("field `{field}` must be a non-negative integer"))
    };
    let offset = req.get("offset").and_then(Value::as_u64).unwrap_or(0);
    let answer = |done: u64, error: Option<String>| json!({"done": done, "error": error});
    Ok(match how {
        "write" => {
            let file = open(path).map_err(|e| e.name().to_owned())?;
            let (done, error) = by_write(&file, n("bytes")?, offset);
            answer(done, error.map(|e| e.name().to_owned()))
        }
        "stream" | "append" => {
            let file = open(path).map_err(|e| e.name().to_owned())?;
            let stream = if how == "stream" {
                file.write_via_stream(offset)
            } else {
                file.append_via_stream()
            }
            .map_err(|e| e.name().to_owned())?;
            let (done, error) = by_stream(&stream, n("bytes")?);
            answer(done, error)
        }
        "set_size" => {
            let file = open(path).map_err(|e| e.name().to_owned())?;
            match file.set_size(n("size")?) {
                Ok(()) => answer(1, None),
                Err(e) => answer(0, Some(e.name().to_owned())),
            }
        }
        "std" => {
            let bytes = vec![b'q'; usize::try_from(n("bytes")?).map_err(|e| e.to_string())?];
            match std::fs::write(path, &bytes) {
                Ok(()) => answer(bytes.len() as u64, None),
                Err(e) => answer(0, Some(format!("{:?}", e.kind()))),
            }
        }
        "files" | "dirs" => {
            let count = n("count")?;
            for i in 0..count {
                let made = if how == "files" {
                    std::fs::File::create(format!("{path}/f{i}")).map(drop)
                } else {
                    std::fs::create_dir(format!("{path}/d{i}"))
                };
                if let Err(e) = made {
                    return Ok(answer(i, Some(format!("{:?}", e.kind()))));
                }
            }
            answer(count, None)
        }
        "remove" => match std::fs::remove_file(path) {
            Ok(()) => answer(1, None),
            Err(e) => answer(0, Some(format!("{:?}", e.kind()))),
        },
        "rename" | "link" | "symlink" => {
            let to = crate::ops::str_arg(req, "to")?;
            match name(how, path, to) {
                Ok(()) => answer(1, None),
                Err(e) => answer(0, Some(e.name().to_owned())),
            }
        }
        other => {
            return Err(format!(
                "unknown `how` {other:?}: write, stream, append, set_size, std, files, dirs, \
                 remove, rename, link, symlink"
            ));
        }
    })
}

/// The preopen the absolute guest `path` lies under, and the rest of the path inside it.
fn locate(path: &str) -> Result<(Descriptor, String), ErrorCode> {
    get_directories()
        .into_iter()
        .find_map(|(dir, guest)| {
            let rest = path.strip_prefix(guest.as_str())?;
            (rest.is_empty() || rest.starts_with('/'))
                .then(|| (dir, rest.trim_start_matches('/').to_owned()))
        })
        .ok_or(ErrorCode::NoEntry)
}

/// Renames or hard-links `path` to `to` through `rename-at` / `link-at` on their two preopens,
/// or makes `path` a symlink to the text `to` through `symlink-at`.
fn name(how: &str, path: &str, to: &str) -> Result<(), ErrorCode> {
    let (dir, rest) = locate(path)?;
    if how == "symlink" {
        return dir.symlink_at(to, &rest);
    }
    let (to_dir, to_rest) = locate(to)?;
    if how == "rename" {
        dir.rename_at(&rest, &to_dir, &to_rest)
    } else {
        dir.link_at(PathFlags::empty(), &rest, &to_dir, &to_rest)
    }
}

/// Opens (creating) the file at the absolute guest `path` under the preopen it starts with.
fn open(path: &str) -> Result<Descriptor, ErrorCode> {
    let (dir, rest) = locate(path)?;
    dir.open_at(
        PathFlags::empty(),
        &rest,
        OpenFlags::CREATE,
        DescriptorFlags::READ | DescriptorFlags::WRITE,
    )
}

/// Writes `total` bytes at `offset` with `descriptor.write`, 64 KiB a call.
fn by_write(file: &Descriptor, total: u64, offset: u64) -> (u64, Option<ErrorCode>) {
    let chunk = vec![b'w'; 64 * 1024];
    let mut done = 0;
    while done < total {
        let len = (total - done).min(chunk.len() as u64) as usize;
        match file.write(&chunk[..len], offset + done) {
            Ok(n) => done += n,
            Err(e) => return (done, Some(e)),
        }
    }
    (done, None)
}

/// Writes `total` bytes through an output stream, 4 KiB a call; the error is the stream's
/// `filesystem-error-code` when it has one.
fn by_stream(stream: &OutputStream, total: u64) -> (u64, Option<String>) {
    let chunk = [b's'; 4096];
    let mut done = 0;
    while done < total {
        let len = (total - done).min(chunk.len() as u64) as usize;
        match stream.blocking_write_and_flush(&chunk[..len]) {
            Ok(()) => done += len as u64,
            Err(StreamError::LastOperationFailed(e)) => {
                let code = wasip2::filesystem::types::filesystem_error_code(&e)
                    .map_or_else(|| e.to_debug_string(), |c| c.name().to_owned());
                return (done, Some(code));
            }
            Err(StreamError::Closed) => return (done, Some("closed".to_owned())),
        }
    }
    (done, None)
}

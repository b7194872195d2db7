//! One host per data dir: `DATA_DIR/serve.lock` is held with an OS file lock while a host runs
//! and names its pid and address, so a second host (`guild serve --host` or `--http`) on the
//! same data dir is refused with a message naming the first; proxies racing to start a host
//! end with this one ([`crate::launch`]). The OS drops the lock when the process ends, so a
//! crashed server never leaves a stale lock behind.

use std::fs::{File, OpenOptions};
use std::io::{Read as _, Seek as _, Write as _};
use std::path::Path;

use anyhow::{Context, bail};

/// The lock file's name inside the data dir.
pub(crate) const LOCK_FILE: &str = "serve.lock";

/// Held for the life of the server.
pub(crate) struct ServeLock {
    _file: File,
}

impl ServeLock {
    /// Takes the lock of `data_dir` and writes `address` and this pid into it.
    pub(crate) fn acquire(data_dir: &Path, address: &str) -> anyhow::Result<Self> {
        std::fs::create_dir_all(data_dir)
            .with_context(|| format!("failed to create the data dir {}", data_dir.display()))?;
        let path = data_dir.join(LOCK_FILE);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("failed to open {}", path.display()))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                bail!(
                    "another guild serve already runs on the data dir {} ({}); stop it first, or \
                     give this one another data_dir",
                    data_dir.display(),
                    match holder.trim() {
                        "" => "it has not written its address yet".to_owned(),
                        h => h.to_owned(),
                    }
                );
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("failed to lock {}", path.display()));
            }
        }
        file.set_len(0)?;
        file.rewind()?;
        write!(file, "pid {} serving {address}", std::process::id())
            .and_then(|()| file.flush())
            .with_context(|| format!("failed to write {}", path.display()))?;
        Ok(Self { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_server_on_the_same_data_dir_is_refused_naming_the_first() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = ServeLock::acquire(dir.path(), "stdio").expect("first lock");
        let err = ServeLock::acquire(dir.path(), "http://127.0.0.1:1")
            .err()
            .expect("second is refused");
        let message = format!("{err:#}");
        assert!(
            message.contains(&format!("pid {} serving stdio", std::process::id())),
            "{message}"
        );
        drop(first);
        ServeLock::acquire(dir.path(), "stdio").expect("free again once the first is gone");
    }
}

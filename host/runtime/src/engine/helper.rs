//! Compiling off the serving path: a component is compiled in a child process (the `guild`
//! binary run with its hidden compile command) under a wall-clock and an address-space
//! ceiling, so a compile bomb costs one killed child, not the host's memory or its start.
//!
//! The child gets the component bytes on stdin and writes its result as an ordinary entry of
//! the disk cache, authenticated with the host's key ([`super::cache`]). The parent never
//! deserialises what the child wrote directly: it loads the entry through the same check as any
//! cache entry, so a child tricked into writing something else is refused like a forged entry.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::{CompileError, Compiler};

/// The command line of the hidden compile command.
pub const COMPILE_COMMAND: &str = "__compile-component";

/// How to compile in a child process, and its limits.
#[derive(Debug, Clone)]
pub struct CompileHelper {
    /// The program to run (the `guild` binary); it is given [`COMPILE_COMMAND`], the cache
    /// folder and the limits as arguments, and the component on stdin.
    pub program: PathBuf,
    /// Longest a compile may take; the child is killed after it (`[host] compile_timeout_s`).
    pub timeout: Duration,
    /// Address space the child may use, MiB (`[host] compile_memory_mb`).
    pub memory_mb: u32,
}

/// What one child compiles with, besides the helper's limits.
pub(super) struct Child<'a> {
    /// The cache folder the child leaves its result in.
    pub(super) cache_dir: &'a Path,
    /// The engine's largest linear memory, MiB.
    pub(super) max_memory_mb: u32,
    /// The compiler the parent's engine compiles with.
    pub(super) compiler: Compiler,
    /// A background compile: the child runs at a lower priority on fewer threads.
    pub(super) background: bool,
}

/// Runs the helper on `bytes`; on success the cache in `child.cache_dir` holds the entry.
pub(super) fn compile_in_child(
    helper: &CompileHelper,
    child: &Child<'_>,
    bytes: &[u8],
) -> Result<(), CompileError> {
    let mut command = Command::new(&helper.program);
    command
        .arg(COMPILE_COMMAND)
        .arg("--cache-dir")
        .arg(child.cache_dir)
        .arg("--max-memory-mb")
        .arg(child.max_memory_mb.to_string())
        .arg("--limit-memory-mb")
        .arg(helper.memory_mb.to_string());
    if child.compiler == Compiler::Baseline {
        command.arg("--baseline");
    }
    if child.background {
        command.arg("--background").env(
            "RAYON_NUM_THREADS",
            super::background::threads().to_string(),
        );
    }
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            CompileError::Helper(format!(
                "cannot start the compile helper {}: {e}",
                helper.program.display()
            ))
        })?;
    let (stdin, stderr) = (child.stdin.take(), child.stderr.take());
    // Feed stdin and drain stderr on their own threads, so neither pipe can stall the child
    // and the deadline below always applies.
    let (status, stderr) = std::thread::scope(|scope| {
        scope.spawn(move || {
            // A child that dies early closes its stdin: its status says why.
            if let Some(mut stdin) = stdin {
                let _ = stdin.write_all(bytes);
            }
        });
        let reader = scope.spawn(move || {
            let mut text = String::new();
            if let Some(mut stderr) = stderr {
                let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
            }
            text
        });
        let status = wait(&mut child, helper.timeout);
        (status, reader.join().unwrap_or_default())
    });
    match status? {
        status if status.success() => Ok(()),
        status => Err(failure(status, &stderr, helper.memory_mb)),
    }
}

/// Waits for the child until `timeout`, then kills it.
fn wait(child: &mut std::process::Child, timeout: Duration) -> Result<ExitStatus, CompileError> {
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) if started.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(CompileError::TimedOut(timeout.as_secs()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => {
                let _ = child.kill();
                return Err(CompileError::Helper(format!("cannot wait for it: {e}")));
            }
        }
    }
}

/// Why the child failed: a refused component (exit code 2, message on stderr) or a limit.
fn failure(status: ExitStatus, stderr: &str, memory_mb: u32) -> CompileError {
    let last = stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    if status.code() == Some(2) {
        return CompileError::Invalid(last.trim_start_matches("error: ").to_owned());
    }
    // Out of address space shows as an allocation failure (abort) or a failed mapping.
    let out_of_memory = stderr.contains("memory allocation of")
        || stderr.contains("Cannot allocate memory")
        || stderr.contains("out of memory")
        || status.code().is_none();
    if out_of_memory {
        return CompileError::OutOfMemory(memory_mb);
    }
    CompileError::Helper(format!("the compile helper failed ({status}): {last}"))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_child_past_its_deadline_is_killed_and_refused_with_the_setting() {
        let mut child = Command::new("sleep").arg("30").spawn().expect("sleep runs");
        let err = wait(&mut child, Duration::from_millis(50)).expect_err("must time out");
        assert!(matches!(err, CompileError::TimedOut(0)), "{err:?}");
        assert!(
            err.to_string().contains("[host] compile_timeout_s"),
            "{err}"
        );
        assert!(
            child.try_wait().expect("status").is_some(),
            "the child was killed"
        );
    }

    #[test]
    fn a_child_within_its_deadline_reports_its_status() {
        let mut child = Command::new("true").spawn().expect("true runs");
        let status = wait(&mut child, Duration::from_secs(60)).expect("finishes");
        assert!(status.success());
    }

    #[test]
    fn failures_say_which_limit_or_why() {
        use std::os::unix::process::ExitStatusExt;
        let refused = failure(ExitStatus::from_raw(2 << 8), "error: bad type\n", 64);
        assert!(
            matches!(&refused, CompileError::Invalid(m) if m == "bad type"),
            "{refused:?}"
        );
        // SIGABRT from a failed allocation.
        let oom = failure(
            ExitStatus::from_raw(6),
            "memory allocation of 8 bytes failed\n",
            64,
        );
        assert!(oom.to_string().contains("more than 64 MiB"), "{oom}");
        assert!(
            oom.to_string().contains("[host] compile_memory_mb"),
            "{oom}"
        );
        let other = failure(ExitStatus::from_raw(1 << 8), "error: no cache folder\n", 64);
        assert!(matches!(other, CompileError::Helper(_)), "{other:?}");
    }
}

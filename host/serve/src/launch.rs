//! Starting the data dir's host for a stdio `guild serve` that found none running
//! ([`crate::proxy`]).
//!
//! The host is this same binary as `guild --config CONFIG serve --host …`, detached from the
//! client: a process group of its own (a ctrl-c in the client's terminal or the client's end
//! does not reach it), stdin and stdout on /dev/null, stderr appended to `DATA_DIR/serve.log`.
//! Two proxies that start a host at once both spawn one; the data dir's lock ([`crate::lock`])
//! keeps one, the other exits at once, and both proxies connect to the one that runs. A host
//! started while the previous one is ending (idle) finds the lock still held and exits: when
//! nobody binds the socket it is started again, a few times.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::Context;

use crate::control;

/// The host's log inside the data dir.
pub(crate) const LOG_FILE: &str = "serve.log";

/// How long a started host may take to bind its socket (it does so before loading plugins).
const BIND_WAIT: Duration = Duration::from_secs(60);
/// How long after a started host exited without anyone binding the socket it is started again.
const RESPAWN_AFTER: Duration = Duration::from_millis(300);
/// How many times it is started again.
const RESPAWNS: u32 = 3;

/// What the started host is told, from the proxy's own `guild serve` arguments.
pub(crate) struct Launch<'a> {
    /// The `guild` binary.
    pub(crate) exe: PathBuf,
    /// `--config`.
    pub(crate) config: &'a Path,
    /// The data dir (for the log and the socket).
    pub(crate) data_dir: &'a Path,
    /// `serve` arguments passed on (`--watch`, `--grace-s`, `--workspace`, …).
    pub(crate) args: Vec<String>,
}

impl Launch<'_> {
    /// Starts a host in the background and waits until its control socket takes connections,
    /// or another host's does (a race lost to another proxy).
    pub(crate) async fn start(&self) -> anyhow::Result<()> {
        let mut child = self.spawn()?;
        let socket = self.data_dir.join(control::SOCKET_FILE);
        let deadline = tokio::time::Instant::now() + BIND_WAIT;
        let (mut exited_at, mut respawns) = (None, 0);
        while tokio::time::Instant::now() < deadline {
            if std::os::unix::net::UnixStream::connect(&socket).is_ok() {
                return Ok(());
            }
            // A host that lost the race exits at once; the winner binds right after its lock.
            if exited_at.is_none() && matches!(child.try_wait(), Ok(Some(_))) {
                exited_at = Some(tokio::time::Instant::now());
            }
            let waited = exited_at.map(|t| t.elapsed());
            // No winner bound: the lock was a host's that was ending (idle) as this one
            // started. Start again, a few times.
            if waited.is_some_and(|w| w > RESPAWN_AFTER) && respawns < RESPAWNS {
                child = self.spawn()?;
                (exited_at, respawns) = (None, respawns + 1);
                continue;
            }
            if waited.is_some_and(|w| w > Duration::from_secs(10)) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        anyhow::bail!(
            "the guild host did not start on {}: see {}",
            self.data_dir.display(),
            self.data_dir.join(LOG_FILE).display()
        )
    }

    fn spawn(&self) -> anyhow::Result<Child> {
        std::fs::create_dir_all(self.data_dir).with_context(|| {
            format!("failed to create the data dir {}", self.data_dir.display())
        })?;
        let log_path = self.data_dir.join(LOG_FILE);
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .with_context(|| format!("failed to open {}", log_path.display()))?;
        use std::os::unix::process::CommandExt as _;
        Command::new(&self.exe)
            .arg("--config")
            .arg(self.config)
            .args(["serve", "--host"])
            .args(&self.args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .process_group(0)
            .spawn()
            .with_context(|| format!("failed to start {} serve --host", self.exe.display()))
    }
}

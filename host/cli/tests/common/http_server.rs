//! A `guild serve --http` on 127.0.0.1 for a test folder: started, its URL read from stderr,
//! stopped with SIGTERM.

use std::io::BufReader;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use super::guild;

/// A running `guild serve --http 127.0.0.1:0`, its URL and the rest of its stderr.
pub(crate) struct HttpServer {
    pub(crate) child: Child,
    pub(crate) url: String,
    stderr: BufReader<std::process::ChildStderr>,
}

impl HttpServer {
    pub(crate) fn start(dir: &Path, extra: &[&str]) -> Self {
        let mut child = guild(dir, &[])
            .args(["serve", "--http", "127.0.0.1:0", "--watch-ms", "200"])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("guild serve starts");
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let url = super::serve_url(&mut stderr);
        Self { child, url, stderr }
    }

    /// SIGTERM; returns the exit status and the rest of stderr.
    pub(crate) fn stop(mut self) -> (std::process::ExitStatus, String) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut self.stderr, &mut rest);
        (self.child.wait().expect("wait"), rest)
    }
}

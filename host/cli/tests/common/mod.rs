//! What every test of the `guild` binary needs: a built plugin folder, the binary run against a
//! test folder's `guild.toml` with nothing inherited from the caller's environment, and the URL
//! a `guild serve --http` prints once it serves. Each test binary uses part of it.
#![allow(dead_code)]

pub(crate) mod host_proc;
pub(crate) mod http_server;
pub(crate) mod mcp_setup;
pub(crate) mod prompt_agent;
pub(crate) mod stdio_peer;

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{ChildStderr, Command, Output, Stdio};

/// A built plugin folder under the repository's `plugins/` (`rel` like `testing/probe`),
/// checking that its component exists.
pub(crate) fn plugin(rel: &str) -> PathBuf {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../plugins")
        .join(rel);
    assert!(
        dir.join(format!("{name}.wasm")).is_file(),
        "{} is missing: run plugins/build.sh before the tests",
        dir.display()
    );
    dir
}

/// The `guild` binary with `--config DIR/guild.toml` and `args`; no configuration, log
/// filter, reproducible-build time, ssh-agent or control socket timeout comes from the caller's
/// environment.
pub(crate) fn guild(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_guild"));
    cmd.arg("--config")
        .arg(dir.join("guild.toml"))
        .args(args)
        .env_remove("GUILD_CONFIG")
        .env_remove("GUILD_LOG")
        .env_remove("SOURCE_DATE_EPOCH")
        .env_remove("SSH_AUTH_SOCK")
        .env_remove("GUILD_CONTROL_TIMEOUT_S")
        .stdin(Stdio::null());
    cmd
}

/// Reads a starting `guild serve --http`'s stderr up to the line naming its URL.
pub(crate) fn serve_url(stderr: &mut BufReader<ChildStderr>) -> String {
    let mut line = String::new();
    loop {
        line.clear();
        let n = stderr.read_line(&mut line).expect("read stderr");
        assert!(n > 0, "guild serve ended before serving");
        if let Some(url) = line.trim().strip_prefix("guild serve: MCP on ") {
            return url.to_owned();
        }
    }
}

/// A finished command as a failure message shows it: exit code, stdout and stderr.
pub(crate) fn output_text(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

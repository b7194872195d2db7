//! [`TestServer`]: a throwaway PostgreSQL server for tests and benchmarks. `initdb` in a
//! temporary folder, `postgres` on a free 127.0.0.1 port (and a unix socket in that folder),
//! stopped and removed on drop, also when a test panics.
//!
//! The binaries are Debian's (`tests/setup.sh` installs the `postgresql` package): found on
//! `PATH`, else in the newest `/usr/lib/postgresql/*/bin`, or in `GUILD_PG_BIN`. PostgreSQL
//! refuses to run as root, so as root the server runs as the unprivileged `nobody` user (the
//! folder is handed to it); CI runs the tests as root.

use std::fs::File;
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::PgConfig;

/// Environment variable naming a folder with `initdb` and `postgres`.
pub const BIN_ENV: &str = "GUILD_PG_BIN";

/// The superuser of a [`TestServer`] (trust authentication on 127.0.0.1 and its socket).
pub const USER: &str = "guild";

/// Longest wait for a new server to accept connections (a slow machine, not a timing check).
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// A running PostgreSQL server in a temporary folder.
pub struct TestServer {
    dir: tempfile::TempDir,
    port: u16,
    child: Child,
    bin: PathBuf,
    run_as: Option<(u32, u32)>,
}

/// Why a server could not be started.
#[derive(Debug, thiserror::Error)]
pub enum TestServerError {
    /// No PostgreSQL binaries on this machine.
    #[error(
        "PostgreSQL is not installed (no initdb/postgres on PATH, in /usr/lib/postgresql/*/bin \
         or in ${BIN_ENV}); run tests/setup.sh"
    )]
    NotInstalled,
    /// A step failed.
    #[error("test PostgreSQL server: {0}")]
    Failed(String),
}

impl TestServer {
    /// Runs `initdb` and starts the server; returns once it accepts connections.
    pub fn start() -> Result<TestServer, TestServerError> {
        TestServer::launch(None)
    }

    /// [`TestServer::start`] with `ssl = on`, serving the PEM certificate (chain) `cert` and
    /// its key `key`; clients may still connect without TLS.
    pub fn start_tls(cert: &[u8], key: &[u8]) -> Result<TestServer, TestServerError> {
        TestServer::launch(Some((cert, key)))
    }

    fn launch(tls: Option<(&[u8], &[u8])>) -> Result<TestServer, TestServerError> {
        let bin = find_bin().ok_or(TestServerError::NotInstalled)?;
        let failed =
            |what: &str, e: &dyn std::fmt::Display| TestServerError::Failed(format!("{what}: {e}"));
        let run_as = unprivileged_user()?;
        let dir = tempfile::Builder::new()
            .prefix("guild-pg-")
            .tempdir()
            .map_err(|e| failed("create a temporary folder", &e))?;
        if let Some((uid, gid)) = run_as {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid))
                .map_err(|e| failed("hand the folder to nobody", &e))?;
        }
        let data = dir.path().join("data");
        let log = dir.path().join("initdb.log");
        let status = command(&bin, "initdb", run_as)
            .args(["-D"])
            .arg(&data)
            .args([
                "-U",
                USER,
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
                "--locale=C",
            ])
            .stdout(log_file(&log, run_as)?)
            .stderr(log_file(&log.with_extension("err"), run_as)?)
            .status()
            .map_err(|e| failed("run initdb", &e))?;
        if !status.success() {
            return Err(failed("initdb failed", &read(&log.with_extension("err"))));
        }
        let port = free_port().map_err(|e| failed("find a free port", &e))?;
        let server_log = dir.path().join("postgres.log");
        let mut settings = Vec::new();
        if let Some((cert, key)) = tls {
            // The server refuses a key file others can read; it must be its user's.
            for (name, pem) in [("server.crt", cert), ("server.key", key)] {
                let path = dir.path().join(name);
                std::fs::write(&path, pem).map_err(|e| failed("write the TLS files", &e))?;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
                    .map_err(|e| failed("restrict the TLS files", &e))?;
                if let Some((uid, gid)) = run_as {
                    std::os::unix::fs::chown(&path, Some(uid), Some(gid))
                        .map_err(|e| failed("hand the TLS files to nobody", &e))?;
                }
                let key = if name == "server.crt" {
                    "ssl_cert_file"
                } else {
                    "ssl_key_file"
                };
                settings.push(format!("{key}={}", path.display()));
            }
            settings.push("ssl=on".to_owned());
        }
        let child = command(&bin, "postgres", run_as)
            .arg("-D")
            .arg(&data)
            .args(["-p", &port.to_string(), "-c", "listen_addresses=127.0.0.1"])
            .args(settings.iter().flat_map(|s| ["-c", s.as_str()]))
            .arg("-k")
            .arg(dir.path())
            .stdin(Stdio::null())
            .stdout(log_file(&server_log, run_as)?)
            .stderr(log_file(&server_log.with_extension("err"), run_as)?)
            .spawn()
            .map_err(|e| failed("start postgres", &e))?;
        let mut server = TestServer {
            dir,
            port,
            child,
            bin,
            run_as,
        };
        server.wait_ready()?;
        Ok(server)
    }

    fn wait_ready(&mut self) -> Result<(), TestServerError> {
        let started = Instant::now();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(TestServerError::Failed(format!(
                    "postgres exited ({status}): {}",
                    read(&self.dir.path().join("postgres.err"))
                )));
            }
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok()
                && self
                    .config("postgres")
                    .and_then(|c| {
                        c.connect()
                            .map_err(|e| TestServerError::Failed(e.to_string()))
                    })
                    .is_ok()
            {
                return Ok(());
            }
            if started.elapsed() > START_TIMEOUT {
                return Err(TestServerError::Failed(format!(
                    "postgres did not accept connections within {START_TIMEOUT:?}: {}",
                    read(&self.dir.path().join("postgres.err"))
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The TCP port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The folder holding the data directory and the unix socket.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The URL of database `db` on this server.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://{USER}@127.0.0.1:{}/{db}", self.port)
    }

    /// A connection config for database `db`.
    pub fn config(&self, db: &str) -> Result<PgConfig, TestServerError> {
        PgConfig::with_password(&self.url(db), None)
            .map_err(|e| TestServerError::Failed(e.to_string()))
    }

    /// Creates database `name` and returns its config.
    pub fn create_database(&self, name: &str) -> Result<PgConfig, TestServerError> {
        let fail = |e: &dyn std::fmt::Display| {
            TestServerError::Failed(format!("create database {name}: {e}"))
        };
        let mut admin = self.config("postgres")?.connect().map_err(|e| fail(&e))?;
        admin
            .batch_execute(&format!("CREATE DATABASE \"{name}\""))
            .map_err(|e| fail(&crate::describe(&e)))?;
        self.config(name)
    }

    /// A plain connection to database `db`, as the superuser (to set up or tamper in tests).
    pub fn client(&self, db: &str) -> Result<postgres::Client, TestServerError> {
        self.config(db)?
            .connect()
            .map_err(|e| TestServerError::Failed(e.to_string()))
    }

    /// Where the PostgreSQL binaries are.
    pub fn bin(&self) -> &Path {
        &self.bin
    }

    /// The uid and gid the server runs as, when not the current user's.
    pub fn run_as(&self) -> Option<(u32, u32)> {
        self.run_as
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        // SIGINT: fast shutdown (clients disconnected, clean stop); SIGKILL if it lingers.
        if let Some(pid) = rustix::process::Pid::from_raw(self.child.id() as i32) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::INT);
        }
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(30) {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `initdb` and `postgres`: from [`BIN_ENV`], `PATH`, or the newest Debian cluster version.
fn find_bin() -> Option<PathBuf> {
    let has = |dir: &Path| dir.join("initdb").is_file() && dir.join("postgres").is_file();
    if let Some(dir) = std::env::var_os(BIN_ENV).map(PathBuf::from) {
        return has(&dir).then_some(dir);
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            if has(&dir) {
                return Some(dir);
            }
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let n = e.file_name().to_str()?.parse().ok()?;
            Some((n, e.path().join("bin")))
        })
        .filter(|(_, dir)| has(dir))
        .collect();
    versions.sort();
    versions.pop().map(|(_, dir)| dir)
}

/// As root, the uid and gid of `nobody` (PostgreSQL refuses to run as root).
fn unprivileged_user() -> Result<Option<(u32, u32)>, TestServerError> {
    if !rustix::process::geteuid().is_root() {
        return Ok(None);
    }
    let id = |flag: &str| -> Result<u32, TestServerError> {
        let out = Command::new("id")
            .args([flag, "nobody"])
            .output()
            .map_err(|e| TestServerError::Failed(format!("run `id {flag} nobody`: {e}")))?;
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .map_err(|_| {
                TestServerError::Failed(
                    "running as root, and there is no `nobody` user to run PostgreSQL as".into(),
                )
            })
    };
    Ok(Some((id("-u")?, id("-g")?)))
}

fn command(bin: &Path, program: &str, run_as: Option<(u32, u32)>) -> Command {
    let mut cmd = Command::new(bin.join(program));
    // LC_ALL: initdb and the server must not depend on the machine's locale settings.
    cmd.env("LC_ALL", "C").env_remove("PGDATA");
    if let Some((uid, gid)) = run_as {
        // As root, std also clears the supplementary groups before switching user.
        cmd.uid(uid).gid(gid);
    }
    cmd
}

/// A log file the server's user can write.
fn log_file(path: &Path, run_as: Option<(u32, u32)>) -> Result<File, TestServerError> {
    let file = File::create(path)
        .map_err(|e| TestServerError::Failed(format!("create {}: {e}", path.display())))?;
    if let Some((uid, gid)) = run_as {
        std::os::unix::fs::chown(path, Some(uid), Some(gid))
            .map_err(|e| TestServerError::Failed(format!("chown {}: {e}", path.display())))?;
    }
    Ok(file)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| format!("({}: {e})", path.display()))
}

fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind(("127.0.0.1", 0))?.local_addr()?.port())
}

//! The stdio proxy's cost and the shared host's throughput (see docs/operations.md, One host
//! per data dir):
//!
//! 1. one task (`tools/call task` on the probe) over an MCP session opened directly on the
//!    host's control socket (the JSON-lines stream a stdio server speaks, no proxy) vs through
//!    a stdio `guild serve` (the proxy every client launches): medians and their ratio;
//! 2. throughput of 8 clients at once (each its own proxy) vs one, on one host.
//!
//! Run (release, after `plugins/build.sh`): `cargo build --release --workspace --bins && cargo
//! bench -p guild-tests --bench host_service`. `GUILD_BENCH_ITERS` sets the calls per figure
//! (default 200). Prints figures; no timing is asserted anywhere.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use guild_tests::{median, plugin_dir};
use serde_json::{Value, json};

fn main() {
    let iters: usize = std::env::var("GUILD_BENCH_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let dir = tempfile::tempdir().expect("tempdir");
    let config = write_config(dir.path());
    let mut host = start_host(&config, &dir.path().join("data"));

    let mut direct = Client::direct(&config, &dir.path().join("data"));
    let direct = median(direct.calls(iters));
    let mut proxied = Client::proxied(&config);
    let proxied = median(proxied.calls(iters));
    println!("task round trip (probe, median of {iters}):");
    println!(
        "  MCP session on the host's socket   {:>8.3} ms  1.00x",
        ms(direct)
    );
    println!(
        "  through the stdio proxy             {:>8.3} ms  {:.2}x",
        ms(proxied),
        proxied.as_secs_f64() / direct.as_secs_f64()
    );

    let one = throughput(&config, 1, iters);
    let eight = throughput(&config, 8, iters / 8);
    println!("throughput (tasks/s, each client its own proxy, one host):");
    println!("  1 client                            {one:>8.1}");
    println!(
        "  8 clients at once                   {eight:>8.1}  {:.2}x",
        eight / one
    );
    let _ = Command::new("kill")
        .args(["-TERM", &host.id().to_string()])
        .status();
    let _ = host.wait();
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The built `guild` next to this bench's executable (target/release/deps/… → ../guild).
fn guild_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("bench path");
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .map(|d| d.join("guild"))
        .expect("target dir");
    assert!(
        bin.is_file(),
        "{} is missing: run `cargo build --release --workspace --bins` first",
        bin.display()
    );
    bin
}

fn write_config(dir: &Path) -> PathBuf {
    let text = format!(
        "[host]\nplugins = [{:?}, {:?}]\ndata_dir = \"data\"\n\n[dispatch]\nbillable_threshold = 0\n",
        plugin_dir("testing/probe").display().to_string(),
        plugin_dir("testing/echo").display().to_string()
    );
    let path = dir.join("guild.toml");
    std::fs::write(&path, text).expect("config");
    // The host compares canonical paths.
    path.canonicalize().expect("canonical")
}

/// `guild serve --host` in the foreground, once its socket opens sessions.
fn start_host(config: &Path, data: &Path) -> Child {
    let mut child = Command::new(guild_binary())
        .arg("--config")
        .arg(config)
        .args(["serve", "--host", "--watch", "off", "--idle-exit-s", "0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("guild serve --host");
    // The first session waits for the plugins to load.
    for _ in 0..6000 {
        if UnixStream::connect(data.join("serve.sock")).is_ok() {
            return child;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("the host never bound its socket");
}

/// One MCP client over JSON lines.
struct Client {
    send: Box<dyn Write + Send>,
    read: Box<dyn BufRead + Send>,
    /// The proxy process, when there is one.
    _proxy: Option<Child>,
    next: u64,
}

impl Client {
    /// A session opened on the host's control socket.
    fn direct(config: &Path, data: &Path) -> Self {
        let stream = UnixStream::connect(data.join("serve.sock")).expect("connect");
        let mut read = BufReader::new(stream.try_clone().expect("clone"));
        let mut send = stream;
        let open = json!({"op": "mcp_session", "config": config});
        writeln!(send, "{open}").expect("open");
        let mut answer = String::new();
        read.read_line(&mut answer).expect("answer");
        assert!(answer.contains("\"ok\":true"), "{answer}");
        Self::initialized(Box::new(send), Box::new(read), None)
    }

    /// A session through a stdio `guild serve`.
    fn proxied(config: &Path) -> Self {
        let mut child = Command::new(guild_binary())
            .arg("--config")
            .arg(config)
            .arg("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("guild serve");
        let send = child.stdin.take().expect("stdin");
        let read = BufReader::new(child.stdout.take().expect("stdout"));
        Self::initialized(Box::new(send), Box::new(read), Some(child))
    }

    fn initialized(
        send: Box<dyn Write + Send>,
        read: Box<dyn BufRead + Send>,
        proxy: Option<Child>,
    ) -> Self {
        let mut client = Self {
            send,
            read,
            _proxy: proxy,
            next: 0,
        };
        client.request(json!({"method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"}}}));
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        guild_tests::write_line(&mut client.send, &initialized).expect("initialized");
        client
    }

    fn request(&mut self, mut message: Value) -> Value {
        self.next += 1;
        message["jsonrpc"] = json!("2.0");
        message["id"] = json!(self.next);
        guild_tests::write_line(&mut self.send, &message).expect("send");
        loop {
            let mut line = String::new();
            assert!(
                self.read.read_line(&mut line).expect("read") > 0,
                "session ended"
            );
            let answer: Value = serde_json::from_str(&line).expect("JSON-RPC");
            if answer["id"] == json!(self.next) && answer.get("method").is_none() {
                return answer;
            }
        }
    }

    fn task(&mut self) -> Duration {
        let t = Instant::now();
        let answer = self.request(json!({"method": "tools/call", "params": {"name": "task",
            "arguments": {"subagent_type": "probe", "description": json!({"op": "brief"}).to_string()}}}));
        let took = t.elapsed();
        assert!(answer["result"]["isError"] != true, "{answer}");
        took
    }

    /// `iters` calls after 20 to warm up; their durations.
    fn calls(&mut self, iters: usize) -> Vec<Duration> {
        (0..iters + 20).map(|_| self.task()).skip(20).collect()
    }
}

/// Tasks per second of `clients` proxied clients at once, `each` calls each.
fn throughput(config: &Path, clients: usize, each: usize) -> f64 {
    let mut sessions: Vec<Client> = (0..clients).map(|_| Client::proxied(config)).collect();
    for s in &mut sessions {
        s.task();
    }
    let t = Instant::now();
    std::thread::scope(|scope| {
        for s in &mut sessions {
            scope.spawn(move || {
                for _ in 0..each {
                    s.task();
                }
            });
        }
    });
    (clients * each) as f64 / t.elapsed().as_secs_f64()
}

//! A bare JSON-RPC client over a `guild serve` stdio pipe: for what the Python SDK's client does
//! not do (the Tasks extension), and for lines no SDK would send.

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};

/// Numbers the proxies' stderr files (a test may start several in one folder).
static PROXIES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// A bare JSON-RPC client over a `guild serve` stdio pipe, for the Tasks extension, which the
/// Python SDK's client does not implement.
pub(crate) struct StdioPeer {
    pub(crate) child: Child,
    /// The test's folder (the config's), where the data dir is.
    dir: std::path::PathBuf,
    /// Where the proxy's stderr goes.
    stderr_file: std::path::PathBuf,
    pub(crate) stdin: std::process::ChildStdin,
    pub(crate) stdout: BufReader<std::process::ChildStdout>,
    pub(crate) next_id: u64,
    /// Responses read while waiting for another one, by id.
    pub(crate) early: std::collections::HashMap<u64, serde_json::Value>,
}

impl StdioPeer {
    pub(crate) fn start(dir: &Path, capabilities: serde_json::Value) -> (Self, serde_json::Value) {
        // The proxy's stderr goes to a file in the test's folder, shown if the proxy ends early.
        let n = PROXIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let stderr_file = dir.join(format!("serve-proxy-{n}.stderr"));
        let stderr = std::fs::File::create(&stderr_file).expect("create the stderr file");
        let mut child = super::guild(dir, &[])
            .args(["serve", "--watch-ms", "0"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("guild serve starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut peer = Self {
            child,
            dir: dir.to_path_buf(),
            stderr_file,
            stdin,
            stdout,
            next_id: 0,
            early: std::collections::HashMap::new(),
        };
        let init = peer.request(
            "initialize",
            serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": capabilities,
                               "clientInfo": {"name": "tasks-test", "version": "1"}}),
        );
        peer.send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        (peer, init)
    }

    pub(crate) fn send(&mut self, message: serde_json::Value) {
        use std::io::Write as _;
        writeln!(self.stdin, "{message}").expect("write to the server");
        self.stdin.flush().expect("flush");
    }

    /// Sends a request and returns its whole response (`result` or `error`), skipping
    /// notifications.
    pub(crate) fn request(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        let id = self.send_request(method, params);
        self.response(id)
    }

    /// Sends a request without waiting; returns its id.
    pub(crate) fn send_request(&mut self, method: &str, params: serde_json::Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        );
        id
    }

    /// The response to request `id`, keeping the others that arrive first.
    pub(crate) fn response(&mut self, id: u64) -> serde_json::Value {
        if let Some(early) = self.early.remove(&id) {
            return early;
        }
        loop {
            let mut line = String::new();
            let n = self
                .stdout
                .read_line(&mut line)
                .expect("read from the server");
            assert!(
                n > 0,
                "the server closed stdout while request {id} was pending\n{}",
                self.what_it_said()
            );
            let message: serde_json::Value = serde_json::from_str(&line).expect("a JSON line");
            match message["id"].as_u64() {
                Some(got) if got == id => return message,
                Some(other) if message.get("method").is_none() => {
                    self.early.insert(other, message);
                }
                _ => {}
            }
        }
    }

    /// The proxy's stderr and the end of the host's log, for a failure message.
    fn what_it_said(&self) -> String {
        let read = |path: &Path| std::fs::read_to_string(path).unwrap_or_default();
        let log = read(&self.dir.join("data").join("serve.log"));
        let tail: Vec<&str> = log.lines().rev().take(40).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        format!(
            "proxy stderr:\n{}\nend of data/serve.log:\n{}",
            read(&self.stderr_file),
            tail.join("\n")
        )
    }

    /// `tasks/get` until the task leaves `working`.
    pub(crate) fn wait(&mut self, task_id: &str) -> serde_json::Value {
        for _ in 0..1200 {
            let got = self.request("tasks/get", serde_json::json!({"taskId": task_id}));
            if got["result"]["status"] != "working" {
                return got;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("task {task_id} still working after a minute");
    }

    pub(crate) fn stop(mut self) {
        drop(self.stdin);
        let _ = self.child.wait();
    }
}

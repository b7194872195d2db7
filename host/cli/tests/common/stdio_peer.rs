//! A bare JSON-RPC client over a `guild serve` stdio pipe: for what the Python SDK's client does
//! not do (the Tasks extension), and for lines no SDK would send.

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};

/// A bare JSON-RPC client over a `guild serve` stdio pipe, for the Tasks extension, which the
/// Python SDK's client does not implement.
pub(crate) struct StdioPeer {
    pub(crate) child: Child,
    pub(crate) stdin: std::process::ChildStdin,
    pub(crate) stdout: BufReader<std::process::ChildStdout>,
    pub(crate) next_id: u64,
    /// Responses read while waiting for another one, by id.
    pub(crate) early: std::collections::HashMap<u64, serde_json::Value>,
}

impl StdioPeer {
    pub(crate) fn start(dir: &Path, capabilities: serde_json::Value) -> (Self, serde_json::Value) {
        let mut child = super::guild(dir, &[])
            .args(["serve", "--watch-ms", "0"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("guild serve starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut peer = Self {
            child,
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
                "the server closed stdout while request {id} was pending"
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

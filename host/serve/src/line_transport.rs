//! The JSON-lines transport of an MCP session on the host's control socket: rmcp's service
//! loop reads the client's messages from the connection and writes its own to it through this
//! [`Transport`], with nothing in between (no relay task, no in-memory pipe, no second writer;
//! see docs/performance.md, guild serve: MCP round trips and reload).
//!
//! Each line the client sends passes the stdio guard's checks ([`crate::stdio_guard`]) on the
//! way: a line that is not JSON, not a JSON-RPC 2.0 message or over `[serve] max_body_kb` is
//! answered here with JSON-RPC's error and the session goes on. A 2025-11-25 session's task
//! requests are rewritten for the server's own methods ([`tasks_wire`]) before rmcp reads them.
//!
//! Every line the server sends is serialized once, in the caller of `send`, and written whole
//! (newline included) under the one writer lock, so lines never interleave. Only the two
//! answers the 2025-11-25 Tasks rewrite (an `initialize` result and a `tools/list` result) are
//! looked at again; a tool call's answer is never scanned.
//!
//! `receive` is polled inside the service loop's `select!` and may be dropped at any await:
//! the line being read and the refusals not yet written are kept in the transport, so a
//! dropped `receive` loses nothing.

use std::collections::VecDeque;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{JsonRpcMessage, ServerResult};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};
use tokio::sync::Mutex;

use crate::stdio_guard::{self, Line, Scan};
use crate::tasks_wire;

/// The writer of the client's side, `None` once the transport closed.
type Writer<W> = Arc<Mutex<Option<W>>>;

/// An MCP session's transport over one connection (a reader and a writer).
pub(crate) struct LineTransport<R, W> {
    read: BufReader<R>,
    /// The line being read (kept across a dropped `receive`).
    scan: Scan,
    max_line: usize,
    write: Writer<W>,
    /// Answers to the client's bad lines, not yet written.
    refusals: VecDeque<Vec<u8>>,
    /// The 2025-11-25 Tasks rewriting of this session.
    wire: tasks_wire::StdioSession,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// A transport reading the client's lines (at most `max_line` bytes each) from `read` and
    /// writing the server's to `write`.
    pub(crate) fn new(read: R, write: W, max_line: usize) -> Self {
        Self {
            read: BufReader::new(read),
            scan: Scan::new(max_line),
            max_line,
            write: Arc::new(Mutex::new(Some(write))),
            refusals: VecDeque::new(),
            wire: tasks_wire::StdioSession::default(),
        }
    }

    /// The next line from the client; `None` at the end of its input. Cancel-safe: bytes are
    /// consumed only into `self.scan`, with no await in between.
    async fn next_line(&mut self) -> std::io::Result<Option<Line>> {
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                let scan = std::mem::replace(&mut self.scan, Scan::new(self.max_line));
                return Ok(scan.end());
            }
            let (consumed, ended) = self.scan.feed(available);
            self.read.consume(consumed);
            if let Some(Some(line)) = ended {
                return Ok(Some(line));
            }
        }
    }

    /// Writes the refusals waiting, in order, once the writer is free. The lock is taken here
    /// (a dropped `receive` keeps them queued); the writing is handed to a task holding it, so
    /// that a dropped `receive` never leaves half a line written.
    async fn write_refusals(&mut self) {
        if self.refusals.is_empty() {
            return;
        }
        let mut writer = self.write.clone().lock_owned().await;
        let lines: Vec<Vec<u8>> = self.refusals.drain(..).collect();
        tokio::spawn(async move {
            let Some(out) = writer.as_mut() else { return };
            for line in lines {
                if out.write_all(&line).await.is_err() {
                    return;
                }
            }
            let _ = out.flush().await;
        });
    }

    /// One server message as the line to write (newline included).
    fn encode(&self, item: &TxJsonRpcMessage<RoleServer>) -> std::io::Result<Vec<u8>> {
        let mut line = serde_json::to_vec(item)?;
        // Only these answers carry what the 2025-11-25 Tasks add (see `tasks_wire`).
        let rewritten = matches!(item, JsonRpcMessage::Response(response)
            if matches!(response.result,
                ServerResult::InitializeResult(_) | ServerResult::ListToolsResult(_)));
        if rewritten && let Some(changed) = self.wire.outbound(&line) {
            line = changed;
        }
        line.push(b'\n');
        Ok(line)
    }
}

/// A good line (a JSON-RPC 2.0 message) as rmcp reads it: `Ok(None)` for a notification of no
/// type rmcp knows (dropped, as JSON-RPC never answers one), `Err` with the answer for a request
/// of no shape rmcp reads.
fn parse(bytes: &[u8], message: &Value) -> Result<Option<RxJsonRpcMessage<RoleServer>>, Vec<u8>> {
    match serde_json::from_slice(bytes) {
        Ok(parsed) => Ok(Some(parsed)),
        Err(e) => match message.get("id") {
            None if message.is_object() => {
                tracing::debug!("ignored a notification the MCP crate does not read: {e}");
                Ok(None)
            }
            id => {
                let id = id.cloned().unwrap_or(Value::Null);
                let answer = stdio_guard::error(id, -32600, &format!("invalid request: {e}"));
                Err(answer_line(&answer))
            }
        },
    }
}

fn answer_line(answer: &Value) -> Vec<u8> {
    let mut line = answer.to_string().into_bytes();
    line.push(b'\n');
    line
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let line = self.encode(&item);
        let write = self.write.clone();
        async move {
            let line = line?;
            let mut write = write.lock().await;
            let Some(out) = write.as_mut() else {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::NotConnected,
                    "the session's connection is closed",
                ));
            };
            out.write_all(&line).await?;
            out.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            self.write_refusals().await;
            let line = match self.next_line().await {
                Ok(Some(line)) => line,
                Ok(None) => {
                    self.write_refusals().await;
                    return None;
                }
                Err(e) => {
                    tracing::debug!("a session's connection failed: {e}");
                    return None;
                }
            };
            let mut message = match stdio_guard::judge(&line, self.max_line) {
                Ok(message) => message,
                Err(answer) => {
                    self.refusals.push_back(answer_line(&answer));
                    continue;
                }
            };
            let Line::Whole(bytes) = line else { continue };
            // A 2025-11-25 session's task requests go to the server's own methods.
            let bytes = self.wire.inbound(&mut message).unwrap_or(bytes);
            match parse(&bytes, &message) {
                Ok(Some(parsed)) => return Some(parsed),
                Ok(None) => {}
                Err(answer) => self.refusals.push_back(answer),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let mut write = self.write.lock().await;
        match write.take() {
            Some(mut out) => out.shutdown().await,
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt as _;

    #[tokio::test]
    async fn bad_lines_are_answered_and_good_ones_reach_the_session() {
        let client = concat!(
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n",
            "not json\n",
            "{\"id\":7,\"method\":\"ping\"}\n",
            "42\n",
            "\n",
            "[]\n",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n",
            "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/list\"}",
        );
        let (output, mut seen) = tokio::io::duplex(4096);
        let mut transport = LineTransport::new(client.as_bytes(), output, 1024);
        let mut got = Vec::new();
        while let Some(message) = transport.receive().await {
            got.push(serde_json::to_value(&message).expect("JSON"));
        }
        let methods: Vec<(Value, Value)> = got
            .iter()
            .map(|m| (m["id"].clone(), m["method"].clone()))
            .collect();
        assert_eq!(
            methods,
            [
                (Value::from(1), Value::from("ping")),
                (Value::Null, Value::from("notifications/initialized")),
                (Value::from(8), Value::from("tools/list")),
            ]
        );
        // The server's own line goes out whole, after the refusals.
        let pong: TxJsonRpcMessage<RoleServer> =
            JsonRpcMessage::response(ServerResult::empty(()), rmcp::model::RequestId::Number(1));
        transport.send(pong).await.expect("send");
        transport.close().await.expect("close");
        let mut answers = String::new();
        seen.read_to_string(&mut answers)
            .await
            .expect("client side");
        let answers: Vec<Value> = answers
            .lines()
            .map(|l| serde_json::from_str(l).expect("each answer is one JSON line"))
            .collect();
        let codes: Vec<(Value, i64)> = answers
            .iter()
            .map(|a| (a["id"].clone(), a["error"]["code"].as_i64().unwrap_or(0)))
            .collect();
        assert_eq!(
            codes,
            [
                (Value::Null, -32700),
                (Value::from(7), -32600),
                (Value::Null, -32600),
                (Value::Null, -32600),
                (Value::from(1), 0),
            ]
        );
        assert!(answers[4]["result"].is_object(), "{}", answers[4]);
    }

    #[tokio::test]
    async fn an_oversize_line_is_refused_and_the_next_one_read() {
        let long = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"{}\"}}\n",
            "x".repeat(64)
        );
        let client = format!("{long}{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}}\n");
        let (output, mut seen) = tokio::io::duplex(4096);
        let client = std::io::Cursor::new(client.into_bytes());
        let mut transport = LineTransport::new(client, output, 48);
        // A small read buffer: the long line arrives in pieces.
        transport.read = BufReader::with_capacity(8, transport.read.into_inner());
        let next = transport.receive().await.expect("the ping");
        assert_eq!(serde_json::to_value(&next).expect("JSON")["id"], 2);
        assert!(transport.receive().await.is_none());
        transport.close().await.expect("close");
        let mut answers = String::new();
        seen.read_to_string(&mut answers)
            .await
            .expect("client side");
        assert!(
            answers.contains("-32600") && answers.contains("max_body_kb"),
            "{answers}"
        );
    }
}

//! The JSON-lines transport's front door (a proxy's stdin, and each MCP session on the host's
//! control socket): every line a client sends is looked at before the MCP session sees it, so
//! that a line the session cannot use still gets the answer JSON-RPC prescribes instead of
//! silence.
//!
//! - a line that is not JSON: `-32700` (parse error), id `null`;
//! - JSON that is not a JSON-RPC 2.0 message (no `"jsonrpc": "2.0"`, or not an object or a
//!   batch): `-32600` (invalid request), with the line's id when it has one;
//! - a line over `[serve] max_body_kb`: `-32600` naming the limit; the line is skipped as it
//!   streams in and never buffered whole.
//!
//! Good lines go to the session through an in-memory pipe; the session's output and these
//! answers reach the client through one writer task, a whole line at a time, so they never
//! interleave. Both ways, the messages of a session on protocol 2025-11-25 pass through
//! [`tasks_wire`] (the 2025-11-25 Tasks, which the MCP crate does not speak).

use serde_json::{Value, json};
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream,
};
use tokio::sync::mpsc;

use crate::tasks_wire;

/// Bytes buffered in each in-memory pipe between the guard and the session.
const PIPE_BYTES: usize = 64 * 1024;

/// One line read from the client.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    /// A whole line, without its newline.
    Whole(Vec<u8>),
    /// A line longer than the limit, skipped.
    TooLong,
}

/// The session's side of a guard: what it reads, where it writes, and the writer task.
pub(crate) struct Guarded {
    /// The client's good lines.
    pub(crate) input: DuplexStream,
    /// Where the session writes its lines.
    pub(crate) output: DuplexStream,
    /// Ends once everything written to `output` before it was closed has reached the client.
    pub(crate) written: tokio::task::JoinHandle<()>,
}

/// What the one writer of the client's side writes.
enum Out {
    Line(Vec<u8>),
    /// The session closed its output: nothing more is written.
    End,
}

/// Starts the guard between a client's reader and writer (a control socket's MCP session;
/// tests use in-memory ones) and an MCP session. Lines longer than `max_line` bytes are
/// refused.
pub(crate) fn guard<R, W>(input: R, output: W, max_line: usize) -> Guarded
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (session_in, feed) = tokio::io::duplex(PIPE_BYTES);
    let (session_out, drain) = tokio::io::duplex(PIPE_BYTES);
    let (lines, mut outgoing) = mpsc::channel::<Out>(64);
    // The 2025-11-25 Tasks, which the session (rmcp) does not read or write itself.
    let wire_in = tasks_wire::StdioSession::default();
    let wire_out = wire_in.clone();
    // The one writer of the client's side; it ends when the session's output does.
    let written = tokio::spawn(async move {
        let mut output = output;
        while let Some(Out::Line(mut line)) = outgoing.recv().await {
            line.push(b'\n');
            if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
                break;
            }
        }
        let _ = output.shutdown().await;
    });
    // The session's answers, line by line.
    let from_session = lines.clone();
    tokio::spawn(async move {
        let mut drain = BufReader::new(drain);
        loop {
            let mut line = Vec::new();
            match drain.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if line.last() == Some(&b'\n') {
                        line.pop();
                    }
                    if let Some(rewritten) = wire_out.outbound(&line) {
                        line = rewritten;
                    }
                    if from_session.send(Out::Line(line)).await.is_err() {
                        return;
                    }
                }
            }
        }
        let _ = from_session.send(Out::End).await;
    });
    // The client's lines: good ones to the session, the others answered here.
    tokio::spawn(async move {
        let mut input = BufReader::new(input);
        let mut feed = feed;
        loop {
            let line = match read_line(&mut input, max_line).await {
                Ok(Some(line)) => line,
                Ok(None) | Err(_) => break,
            };
            match judge(&line, max_line) {
                Ok(mut message) => {
                    let Line::Whole(bytes) = line else { break };
                    // A 2025-11-25 session's task requests go to the server's own methods.
                    let mut bytes = wire_in.inbound(&mut message).unwrap_or(bytes);
                    bytes.push(b'\n');
                    if feed.write_all(&bytes).await.is_err() {
                        break;
                    }
                }
                Err(answer) => {
                    let answer = Out::Line(answer.to_string().into_bytes());
                    if lines.send(answer).await.is_err() {
                        break;
                    }
                }
            }
        }
        // End of input: the session sees it and ends.
        let _ = feed.shutdown().await;
    });
    Guarded {
        input: session_in,
        output: session_out,
        written,
    }
}

/// One line being read, never holding more than `max` bytes of it.
struct Scan {
    line: Vec<u8>,
    too_long: bool,
    max: usize,
}

impl Scan {
    fn new(max: usize) -> Self {
        Self {
            line: Vec::new(),
            too_long: false,
            max,
        }
    }

    /// Takes what it needs of `available` (not empty): how many bytes it took, and the line
    /// when they ended one (`Some(None)` for a blank line, which is skipped).
    fn feed(&mut self, available: &[u8]) -> (usize, Option<Option<Line>>) {
        let end = available.iter().position(|b| *b == b'\n');
        let take = end.unwrap_or(available.len());
        if !self.too_long && self.line.len() + take <= self.max {
            self.line.extend_from_slice(&available[..take]);
        } else {
            self.too_long = true;
            self.line.clear();
        }
        let Some(end) = end else {
            return (take, None);
        };
        let line = std::mem::take(&mut self.line);
        let ended = match std::mem::take(&mut self.too_long) {
            true => Some(Line::TooLong),
            false if line.iter().all(u8::is_ascii_whitespace) => None,
            false => Some(Line::Whole(line)),
        };
        (end + 1, Some(ended))
    }

    /// At the end of input: a last line without a newline still counts.
    fn end(self) -> Option<Line> {
        match (self.too_long, self.line.is_empty()) {
            (true, _) => Some(Line::TooLong),
            (false, true) => None,
            (false, false) => Some(Line::Whole(self.line)),
        }
    }
}

/// Reads one `\n`-terminated line, never holding more than `max` bytes of it; `None` at the
/// end of input. A blank line is skipped.
async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    max: usize,
) -> std::io::Result<Option<Line>> {
    let mut scan = Scan::new(max);
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(scan.end());
        }
        let (consumed, ended) = scan.feed(available);
        reader.consume(consumed);
        if let Some(Some(line)) = ended {
            return Ok(Some(line));
        }
    }
}

/// [`read_line`] on a blocking reader (the proxy's stdin, read on a thread of its own).
fn read_line_blocking<R: std::io::BufRead>(
    reader: &mut R,
    max: usize,
) -> std::io::Result<Option<Line>> {
    let mut scan = Scan::new(max);
    loop {
        let available = reader.fill_buf()?;
        if available.is_empty() {
            return Ok(scan.end());
        }
        let (consumed, ended) = scan.feed(available);
        reader.consume(consumed);
        if let Some(Some(line)) = ended {
            return Ok(Some(line));
        }
    }
}

/// Reads the client's lines from `input` (blocking) until it ends: each good one, newline
/// included, goes to `good`; each other is answered through `answer` (one JSON line, no
/// newline). Stops early when either returns an error.
pub(crate) fn guard_blocking<R: std::io::BufRead>(
    input: &mut R,
    max_line: usize,
    mut good: impl FnMut(Vec<u8>) -> std::io::Result<()>,
    mut answer: impl FnMut(Vec<u8>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    while let Some(line) = read_line_blocking(input, max_line)? {
        match judge(&line, max_line) {
            Ok(_) => {
                let Line::Whole(mut bytes) = line else {
                    return Ok(());
                };
                bytes.push(b'\n');
                good(bytes)?;
            }
            Err(refusal) => answer(refusal.to_string().into_bytes())?,
        }
    }
    Ok(())
}

/// The message when `line` is a JSON-RPC message for the session, else the error to answer.
fn judge(line: &Line, max_line: usize) -> Result<Value, Value> {
    let bytes = match line {
        Line::TooLong => {
            return Err(error(
                Value::Null,
                -32600,
                &format!(
                    "message over {} KiB ([serve] max_body_kb); it was not read",
                    max_line / 1024
                ),
            ));
        }
        Line::Whole(bytes) => bytes,
    };
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(value) => value,
        Err(e) => return Err(error(Value::Null, -32700, &format!("parse error: {e}"))),
    };
    let is_message = |v: &Value| v.get("jsonrpc").and_then(Value::as_str) == Some("2.0");
    let ok = match &value {
        Value::Object(_) => is_message(&value),
        Value::Array(items) => !items.is_empty() && items.iter().all(is_message),
        _ => false,
    };
    if ok {
        return Ok(value);
    }
    let id = value.get("id").cloned().unwrap_or(Value::Null);
    Err(error(
        id,
        -32600,
        "invalid request: expected a JSON-RPC 2.0 message (an object with \"jsonrpc\": \"2.0\")",
    ))
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn lines_are_capped_and_blank_lines_skipped() {
        let input = b"abc\n\n   \nxxxxxxxxxx\nlast".to_vec();
        let mut reader = BufReader::with_capacity(3, &input[..]);
        let mut got = Vec::new();
        while let Some(line) = read_line(&mut reader, 5).await.expect("read") {
            got.push(line);
        }
        let expected = [
            Line::Whole(b"abc".to_vec()),
            Line::TooLong,
            Line::Whole(b"last".to_vec()),
        ];
        assert_eq!(got, expected);
        // The blocking reader (a proxy's stdin) reads the same lines.
        let mut reader = std::io::BufReader::with_capacity(3, &input[..]);
        let mut got = Vec::new();
        while let Some(line) = read_line_blocking(&mut reader, 5).expect("read") {
            got.push(line);
        }
        assert_eq!(got, expected);
    }

    #[tokio::test]
    async fn bad_lines_are_answered_and_good_ones_reach_the_session() {
        let client = concat!(
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n",
            "not json\n",
            "{\"id\":7,\"method\":\"ping\"}\n",
            "42\n",
            "[]\n",
        );
        let (output, mut seen) = tokio::io::duplex(4096);
        let Guarded {
            input: mut session_in,
            output: session_out,
            ..
        } = guard(client.as_bytes(), output, 1024);
        let mut forwarded = String::new();
        session_in
            .read_to_string(&mut forwarded)
            .await
            .expect("session input");
        assert_eq!(
            forwarded,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"
        );
        drop(session_out);
        let mut answers = String::new();
        seen.read_to_string(&mut answers).await.expect("stdout");
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
            ]
        );
    }
}

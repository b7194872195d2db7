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
//! A proxy's stdin is read with [`guard_blocking`] on a thread of its own; a session on the
//! host's control socket reads its lines with the same [`Scan`] and [`judge`] inside its
//! transport ([`crate::line_transport`]), where the session's answers are written too.

use serde_json::{Value, json};

/// One line read from the client.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// A whole line, without its newline.
    Whole(Vec<u8>),
    /// A line longer than the limit, skipped.
    TooLong,
}

/// One line being read, never holding more than `max` bytes of it.
pub(crate) struct Scan {
    line: Vec<u8>,
    too_long: bool,
    max: usize,
}

impl Scan {
    pub(crate) fn new(max: usize) -> Self {
        Self {
            line: Vec::new(),
            too_long: false,
            max,
        }
    }

    /// Takes what it needs of `available` (not empty): how many bytes it took, and the line
    /// when they ended one (`Some(None)` for a blank line, which is skipped).
    pub(crate) fn feed(&mut self, available: &[u8]) -> (usize, Option<Option<Line>>) {
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
    pub(crate) fn end(self) -> Option<Line> {
        match (self.too_long, self.line.is_empty()) {
            (true, _) => Some(Line::TooLong),
            (false, true) => None,
            (false, false) => Some(Line::Whole(self.line)),
        }
    }
}

/// Reads one `\n`-terminated line from a blocking reader (the proxy's stdin, read on a thread
/// of its own), never holding more than `max` bytes of it; `None` at the end of input. A blank
/// line is skipped.
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
pub(crate) fn judge(line: &Line, max_line: usize) -> Result<Value, Value> {
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

/// A JSON-RPC error answer.
pub(crate) fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_capped_and_blank_lines_skipped() {
        let input = b"abc\n\n   \nxxxxxxxxxx\nlast".to_vec();
        let mut reader = std::io::BufReader::with_capacity(3, &input[..]);
        let mut got = Vec::new();
        while let Some(line) = read_line_blocking(&mut reader, 5).expect("read") {
            got.push(line);
        }
        let expected = [
            Line::Whole(b"abc".to_vec()),
            Line::TooLong,
            Line::Whole(b"last".to_vec()),
        ];
        assert_eq!(got, expected);
    }

    #[test]
    fn bad_lines_are_answered_and_good_ones_passed_on() {
        let client = concat!(
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n",
            "not json\n",
            "{\"id\":7,\"method\":\"ping\"}\n",
            "42\n",
            "[]\n",
        );
        let (mut good, mut answers) = (Vec::new(), Vec::new());
        guard_blocking(
            &mut client.as_bytes(),
            1024,
            |line| {
                good.push(line);
                Ok(())
            },
            |answer| {
                answers.push(serde_json::from_slice::<Value>(&answer).expect("JSON"));
                Ok(())
            },
        )
        .expect("guard");
        assert_eq!(
            good,
            [b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n".to_vec()]
        );
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

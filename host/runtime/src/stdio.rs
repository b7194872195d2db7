//! Guest stdout and stderr, forwarded to `tracing` tagged with the plugin.
//!
//! Nothing of the host's own stdio is ever inherited. Output is split into lines, each line is
//! one tracing event (target `guild::guest`), and a per-instance byte budget stops a chatty or
//! hostile guest from flooding the host's logs; what is over budget is counted and dropped.
//! A line is escaped before it is logged ([`guild_core::text::one_line`]), so guest output can
//! neither drive a terminal nor start a log line of its own.
//!
//! Each line has the plugin's granted secrets redacted before it is logged or kept
//! ([`guild_http::redact`]): a log line loses only the secret. A line longer than
//! [`LINE_BYTES`] is cut into pieces, each keeping the redactor's longest match for the next,
//! so a value written across a cut is still found.
//!
//! The last few stderr lines of each instance are also kept in a small ring ([`StderrTail`]):
//! when the guest traps, they are the reason (a Rust panic message, a Python traceback), and
//! the failure carries them to the caller without `-v`.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use guild_http::redact::Redactor;
use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};

/// Lines of guest stderr kept per instance for a failure message.
const TAIL_LINES: usize = 12;
/// Characters kept of each of those lines.
const TAIL_LINE_CHARS: usize = 400;
/// A line longer than this (plus the redactor's longest match) is logged in pieces.
const LINE_BYTES: usize = 4096;

/// The last [`TAIL_LINES`] lines a guest wrote to stderr, each cut to [`TAIL_LINE_CHARS`].
#[derive(Debug, Default)]
pub(crate) struct StderrTail {
    lines: Mutex<VecDeque<String>>,
}

impl StderrTail {
    fn push(&self, line: &str) {
        if line.trim().is_empty() {
            return;
        }
        let line: String = line.chars().take(TAIL_LINE_CHARS).collect();
        let mut lines = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        if lines.len() == TAIL_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// The kept lines, oldest first.
    pub(crate) fn lines(&self) -> Vec<String> {
        let lines = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        lines.iter().cloned().collect()
    }
}

/// One of the guest's output streams.
#[derive(Clone)]
pub(crate) struct GuestOutput {
    plugin: Arc<str>,
    stream: &'static str,
    budget: Arc<AtomicUsize>,
    tail: Option<Arc<StderrTail>>,
    redactor: Arc<Redactor>,
}

impl GuestOutput {
    /// A stream named `stream` ("stdout" or "stderr") sharing `budget` bytes with its sibling,
    /// with `redactor`'s secrets taken out of every line.
    pub(crate) fn new(
        plugin: Arc<str>,
        stream: &'static str,
        budget: Arc<AtomicUsize>,
        redactor: Arc<Redactor>,
    ) -> Self {
        Self {
            plugin,
            stream,
            budget,
            tail: None,
            redactor,
        }
    }

    /// Also keeps the last lines of this stream in `tail`.
    pub(crate) fn with_tail(mut self, tail: Arc<StderrTail>) -> Self {
        self.tail = Some(tail);
        self
    }
}

impl IsTerminal for GuestOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for GuestOutput {
    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(LineWriter {
            out: self.clone(),
            line: Vec::new(),
            logging: true,
        })
    }
}

struct LineWriter {
    out: GuestOutput,
    line: Vec<u8>,
    /// False once the budget is spent: lines then only feed the tail (if any).
    logging: bool,
}

impl LineWriter {
    fn emit(&mut self) {
        if self.line.is_empty() {
            return;
        }
        let redacted = self.out.redactor.redact(&self.line);
        let text = String::from_utf8_lossy(&redacted);
        let text = guild_core::text::one_line(text.trim_end_matches(['\r', '\n']));
        if self.logging {
            tracing::info!(
                target: "guild::guest",
                plugin = %self.out.plugin,
                stream = self.out.stream,
                "{text}"
            );
        }
        if let Some(tail) = &self.out.tail {
            tail.push(&text);
        }
        self.line.clear();
    }

    /// Emits a long line without its last `max_span` bytes (fewer if a secret starts in them
    /// and ends after them), which stay for the next piece.
    fn emit_piece(&mut self) {
        let keep = self.out.redactor.max_span();
        let mut cut = self.line.len().saturating_sub(keep);
        if let Some(span) = self
            .out
            .redactor
            .spans(&self.line)
            .into_iter()
            .find(|s| s.start < cut && s.end > cut)
        {
            cut = span.start;
        }
        if cut == 0 {
            return self.emit();
        }
        let rest = self.line.split_off(cut);
        self.emit();
        self.line = rest;
    }
}

impl AsyncWrite for LineWriter {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = &mut *self;
        // Log what the budget allows; the rest is accepted and dropped so the guest never
        // blocks, except that stderr keeps feeding its small tail: the last lines before a
        // trap are the ones worth showing.
        let allowed = this
            .out
            .budget
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                Some(left.saturating_sub(buf.len()))
            })
            .unwrap_or(0)
            .min(buf.len());
        for (i, &b) in buf.iter().enumerate() {
            if i == allowed && this.logging {
                this.emit();
                this.logging = false;
                if allowed > 0 {
                    tracing::warn!(
                        target: "guild::guest",
                        plugin = %this.out.plugin,
                        stream = this.out.stream,
                        "output budget exhausted; further guest output is dropped"
                    );
                }
            }
            if i >= allowed && this.out.tail.is_none() {
                break;
            }
            this.line.push(b);
            if b == b'\n' {
                this.emit();
            } else if this.line.len() >= LINE_BYTES + this.out.redactor.max_span() {
                this.emit_piece();
            }
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.emit();
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.emit();
        Poll::Ready(Ok(()))
    }
}

impl Drop for LineWriter {
    fn drop(&mut self) {
        self.emit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    #[tokio::test]
    async fn stderr_tail_keeps_the_last_lines_escaped_even_past_the_budget() {
        let tail = Arc::new(StderrTail::default());
        // A budget of 8 bytes: almost nothing is logged, the tail still follows.
        let budget = Arc::new(AtomicUsize::new(8));
        let out = GuestOutput::new("probe".into(), "stderr", budget, Arc::default())
            .with_tail(tail.clone());
        let mut writer = Pin::from(out.async_stream());
        for i in 0..30 {
            let line = format!("line {i}\n");
            writer.write_all(line.as_bytes()).await.expect("write");
        }
        let long = format!("\u{1b}[31m{}\n", "x".repeat(1000));
        writer.write_all(long.as_bytes()).await.expect("write");
        drop(writer);
        let lines = tail.lines();
        assert_eq!(lines.len(), TAIL_LINES);
        assert_eq!(lines[0], "line 19");
        assert_eq!(lines[TAIL_LINES - 2], "line 29");
        let last = &lines[TAIL_LINES - 1];
        assert!(last.starts_with("\\x1b[31mxxx"), "{last}");
        assert_eq!(last.chars().count(), TAIL_LINE_CHARS);
    }

    /// Writes `lines` to a stderr stream redacting `Bearer tail-s3cret-value` (or nothing) and
    /// returns its tail.
    async fn tail_of(secret: bool, lines: &[String]) -> Vec<String> {
        use guild_http::{AllowList, SecretHeader};
        let redactor = if secret {
            let hosts = AllowList::parse(["https://api.example.com"]).expect("hosts");
            let header = SecretHeader::new("T", "Authorization", "Bearer tail-s3cret-value", hosts);
            Redactor::new([&header.expect("valid")])
        } else {
            Redactor::default()
        };
        let tail = Arc::new(StderrTail::default());
        let budget = Arc::new(AtomicUsize::new(1 << 20));
        let out = GuestOutput::new("probe".into(), "stderr", budget, Arc::new(redactor))
            .with_tail(tail.clone());
        let mut writer = Pin::from(out.async_stream());
        for line in lines {
            // Byte by byte: a secret never arrives in one write.
            for b in line.as_bytes() {
                writer.write_all(&[*b]).await.expect("write");
            }
        }
        drop(writer);
        tail.lines()
    }

    #[tokio::test]
    async fn a_secret_is_redacted_from_a_line_and_across_the_cut_of_a_long_one() {
        // The secret straddles LINE_BYTES, where a line is cut when there is no secret to keep
        // whole; the tail shows the start of each piece.
        let long = format!(
            "{}tail-s3cret-value {}\n",
            "y".repeat(LINE_BYTES - 5),
            "z".repeat(600)
        );
        let lines = ["short tail-s3cret-value\n".to_owned(), long];
        let tail = tail_of(true, &lines).await;
        assert!(!tail.concat().contains("s3cret-value"), "{tail:?}");
        assert_eq!(tail.concat().matches(guild_http::redact::MARKER).count(), 2);
        assert!(tail[2].starts_with(guild_http::redact::MARKER), "{tail:?}");
        let tail = tail_of(false, &lines).await;
        assert_eq!(tail[0], "short tail-s3cret-value");
        assert!(tail[2].starts_with("s3cret-value"), "cut inside: {tail:?}");
    }
}

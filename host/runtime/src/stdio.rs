//! Guest stdout and stderr, forwarded to `tracing` tagged with the plugin.
//!
//! Nothing of the host's own stdio is ever inherited. Output is split into lines, each line is
//! one tracing event (target `guild::guest`), and a per-instance byte budget stops a chatty or
//! hostile guest from flooding the host's logs; what is over budget is counted and dropped.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};

/// One of the guest's output streams.
#[derive(Clone)]
pub(crate) struct GuestOutput {
    plugin: Arc<str>,
    stream: &'static str,
    budget: Arc<AtomicUsize>,
}

impl GuestOutput {
    /// A stream named `stream` ("stdout" or "stderr") sharing `budget` bytes with its sibling.
    pub(crate) fn new(plugin: Arc<str>, stream: &'static str, budget: Arc<AtomicUsize>) -> Self {
        Self {
            plugin,
            stream,
            budget,
        }
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
        })
    }
}

struct LineWriter {
    out: GuestOutput,
    line: Vec<u8>,
}

impl LineWriter {
    fn emit(&mut self) {
        if self.line.is_empty() {
            return;
        }
        let text = String::from_utf8_lossy(&self.line);
        tracing::info!(
            target: "guild::guest",
            plugin = %self.out.plugin,
            stream = self.out.stream,
            "{}",
            text.trim_end_matches(['\r', '\n'])
        );
        self.line.clear();
    }
}

impl AsyncWrite for LineWriter {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = &mut *self;
        // Take what the budget allows; the rest is accepted and dropped so the guest never blocks.
        let allowed = this
            .out
            .budget
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                Some(left.saturating_sub(buf.len()))
            })
            .unwrap_or(0)
            .min(buf.len());
        for &b in &buf[..allowed] {
            this.line.push(b);
            if b == b'\n' || this.line.len() >= 4096 {
                this.emit();
            }
        }
        if allowed < buf.len() && allowed > 0 {
            this.emit();
            tracing::warn!(
                target: "guild::guest",
                plugin = %this.out.plugin,
                stream = this.out.stream,
                "output budget exhausted; further guest output is dropped"
            );
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

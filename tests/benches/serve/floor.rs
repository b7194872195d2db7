//! The transports' own floors: what one round trip costs with no server work at all, measured
//! with the same client, the same bytes and in the same run as the Guild rows.
//!
//! - stdio: a long-lived `cat` child; the answer line Guild gave, written to its stdin, comes
//!   back on its stdout and is parsed as the Guild row's client parses it.
//!   That is one pipe round trip to a process that does nothing, one hop pair fewer than a
//!   stdio `guild serve` (whose proxy relays to the host over a socket).
//! - HTTP: a server on its own thread (its own single-threaded runtime, 127.0.0.1, keep-alive,
//!   `TCP_NODELAY`) that answers every POST with the answer Guild gave, in the form Guild gave
//!   it (one JSON body, or one server-sent event), without reading what it was sent beyond the
//!   body.
//!
//! The gap between a floor and its Guild row is what Guild adds; the floor itself is the
//! machine's (docs/performance.md, "What a transport costs before any server work").

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Median-ready samples of `iters` round trips of `line` (one JSON line) through `cat`.
pub(crate) fn stdio(line: &str, iters: usize, warmup: usize) -> Vec<Duration> {
    let mut child = Command::new("cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("cat");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let line = format!("{}\n", line.trim_end());
    let mut back = String::with_capacity(line.len());
    let samples = (0..iters + warmup)
        .map(|_| {
            back.clear();
            let t = Instant::now();
            stdin.write_all(line.as_bytes()).expect("write");
            stdin.flush().expect("flush");
            stdout.read_line(&mut back).expect("read");
            // The Guild row's client parses each answer line; so does this one.
            let parsed: serde_json::Value = serde_json::from_str(&back).expect("JSON line");
            let took = t.elapsed();
            assert!(parsed.get("result").is_some(), "cat gave back another line");
            took
        })
        .skip(warmup)
        .collect();
    drop(stdin);
    let _ = child.wait();
    samples
}

/// A do-nothing MCP-shaped HTTP server: every POST to `/mcp` is answered with `answer`, as
/// one server-sent event when `event_stream`, else as a JSON body. Returns its URL; it lives
/// until the process ends.
pub(crate) fn http_server(answer: String, event_stream: bool) -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind 127.0.0.1");
            let addr = listener.local_addr().expect("address");
            let (content_type, body) = match event_stream {
                true => ("text/event-stream", format!("data: {answer}\n\n")),
                false => ("application/json", answer),
            };
            let app = axum::Router::new().route(
                "/mcp",
                axum::routing::post(move |_body: axum::body::Bytes| {
                    let body = body.clone();
                    async move { ([("content-type", content_type)], body) }
                }),
            );
            let listener = axum::serve::ListenerExt::tap_io(listener, |stream| {
                let _ = stream.set_nodelay(true);
            });
            tx.send(format!("http://{addr}/mcp")).expect("report URL");
            axum::serve(listener, app).await.expect("floor server");
        });
    });
    rx.recv().expect("floor server started")
}

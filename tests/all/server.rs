//! A small HTTP server on 127.0.0.1 for capability tests.

use axum::Router;
use axum::extract::Query;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The token `/auth` accepts.
pub(crate) const TOKEN: &str = "s3cret-token-value";

/// Counts requests to `/slow` in flight, and the most seen at once.
#[derive(Default)]
pub(crate) struct Gauge {
    now: AtomicUsize,
    /// Highest number of `/slow` requests in flight at the same time.
    pub(crate) max: AtomicUsize,
    /// When set, each `/slow` request waits until this many have been in flight at once (or
    /// 5 s passed), so a test sees concurrency whenever the host allows it, however the
    /// scheduler interleaves the requests.
    pub(crate) hold_until: AtomicUsize,
}

/// Starts the server and returns its address; it runs until the test's runtime ends.
pub(crate) async fn start() -> SocketAddr {
    start_with_gauge().await.0
}

/// Like [`start`], also returning the `/slow` gauge.
pub(crate) async fn start_with_gauge() -> (SocketAddr, Arc<Gauge>) {
    let gauge = Arc::new(Gauge::default());
    let g = gauge.clone();
    let app = Router::new()
        .route(
            "/slow",
            get(move || {
                let g = g.clone();
                async move {
                    let now = g.now.fetch_add(1, Ordering::SeqCst) + 1;
                    g.max.fetch_max(now, Ordering::SeqCst);
                    let give_up = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
                    while g.max.load(Ordering::SeqCst) < g.hold_until.load(Ordering::SeqCst)
                        && tokio::time::Instant::now() < give_up
                    {
                        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(150)).await;
                    g.now.fetch_sub(1, Ordering::SeqCst);
                    "slow"
                }
            }),
        )
        .route("/hello", get(|| async { "hello from 127.0.0.1" }))
        .route("/auth", get(auth))
        .route("/redirect", get(redirect))
        .route("/echo", get(echo))
        .route("/big", get(|| async { "x".repeat(20 << 20) }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1");
    let addr = listener.local_addr().expect("local addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (addr, gauge)
}

/// Says whether the request carried the right bearer token, without echoing any header.
async fn auth(headers: HeaderMap) -> Response {
    let got = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let body = serde_json::json!({
        "authorized": got == format!("Bearer {TOKEN}"),
        "had_authorization": !got.is_empty(),
    });
    (StatusCode::OK, body.to_string()).into_response()
}

/// The ways `/echo?as=` spells what it echoes.
pub(crate) const SPELLINGS: &[&str] = &[
    "plain", "upper", "json", "percent", "html", "base64", "basic", "hex",
];

/// `value` as `/echo?as={how}` spells it: as it is, upper-cased, every byte a JSON `\uXXXX`
/// escape, percent-encoded or an HTML reference, base64 of the value or of `user:` and the value
/// (as a Basic-auth check would answer), or hex.
pub(crate) fn spell(how: &str, value: &str) -> String {
    use base64::Engine as _;
    let base64 = base64::engine::general_purpose::STANDARD;
    match how {
        "upper" => value.to_uppercase(),
        "json" => value.bytes().map(|b| format!("\\u{b:04x}")).collect(),
        "percent" => value.bytes().map(|b| format!("%{b:02X}")).collect(),
        "html" => value.bytes().map(|b| format!("&#{b};")).collect(),
        "base64" => base64.encode(value),
        "basic" => base64.encode(format!("user:{value}")),
        "hex" => hex::encode(value),
        _ => value.to_owned(),
    }
}

/// An upstream that reflects what it receives: the request's `Authorization` header, spelled
/// as `?as=` says, in the body (inside a JSON document) and in the `X-Echo` response header.
async fn echo(headers: HeaderMap, Query(q): Query<HashMap<String, String>>) -> Response {
    let got = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let how = q.get("as").map_or("plain", String::as_str);
    let spelled = spell(how, got);
    let body = format!("{{\"you_sent\": \"{spelled}\", \"note\": \"kept\"}}");
    (StatusCode::OK, [("x-echo", spelled)], body).into_response()
}

async fn redirect(Query(q): Query<HashMap<String, String>>) -> Response {
    let to = q.get("to").cloned().unwrap_or_default();
    (StatusCode::FOUND, [(header::LOCATION, to)], "").into_response()
}

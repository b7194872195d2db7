//! A small HTTP server on 127.0.0.1 for capability tests.

use axum::Router;
use axum::extract::Query;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use std::collections::HashMap;
use std::net::SocketAddr;

/// The token `/auth` accepts.
pub(crate) const TOKEN: &str = "s3cret-token-value";

/// Starts the server and returns its address; it runs until the test's runtime ends.
pub(crate) async fn start() -> SocketAddr {
    let app = Router::new()
        .route("/hello", get(|| async { "hello from 127.0.0.1" }))
        .route("/auth", get(auth))
        .route("/redirect", get(redirect))
        .route("/big", get(|| async { "x".repeat(20 << 20) }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1");
    let addr = listener.local_addr().expect("local addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    addr
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

async fn redirect(Query(q): Query<HashMap<String, String>>) -> Response {
    let to = q.get("to").cloned().unwrap_or_default();
    (StatusCode::FOUND, [(header::LOCATION, to)], "").into_response()
}

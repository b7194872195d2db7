//! Live tests of the guarded client against axum servers on 127.0.0.1.
//!
//! Only loopback servers are ever contacted. Every denial test asserts the error kind (a
//! denial happens before connecting) and, where a server exists, that it saw no request.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::routing::{any, get};

use super::*;

#[path = "volume_tests.rs"]
mod volume;

/// A test server on 127.0.0.1:0 that counts requests; aborted on drop.
struct Server {
    addr: SocketAddr,
    hits: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    async fn start(router: Router) -> Self {
        let hits = Arc::new(AtomicUsize::new(0));
        let counter = hits.clone();
        let router = router.layer(axum::middleware::map_request(
            move |req: axum::extract::Request| {
                counter.fetch_add(1, Ordering::SeqCst);
                async move { req }
            },
        ));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        let task = tokio::spawn(async move {
            axum::serve(listener, router).await.expect("serve");
        });
        Self { addr, hits, task }
    }

    fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.origin())
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

/// Echoes method, body length and the headers the tests care about (`-` when absent).
async fn echo(method: Method, headers: HeaderMap, body: axum::body::Bytes) -> String {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("-")
            .to_owned()
    };
    format!(
        "method={method} len={} auth={} host={} x-guest={} cookie={} x-api-key={}",
        body.len(),
        get("authorization"),
        get("host"),
        get("x-guest"),
        get("cookie"),
        get("x-api-key"),
    )
}

fn redirect(
    status: StatusCode,
    to: String,
) -> impl Fn() -> std::future::Ready<(StatusCode, [(header::HeaderName, String); 1])> + Clone {
    move || std::future::ready((status, [(header::LOCATION, to.clone())]))
}

fn policy(requested: &[&str], granted: &[&str]) -> EgressPolicy {
    EgressPolicy {
        plugin: "kb".into(),
        requested: AllowList::parse(requested).expect("requested"),
        granted: AllowList::parse(granted).expect("granted"),
        secrets: Vec::new(),
    }
}

fn both(patterns: &[&str]) -> EgressPolicy {
    policy(patterns, patterns)
}

fn body_text(response: &OutboundResponse) -> String {
    String::from_utf8_lossy(&response.body).into_owned()
}

fn assert_denied(result: Result<OutboundResponse, HttpError>, target: &str, reason: DenyReason) {
    match result {
        Err(HttpError::Denied {
            plugin,
            target: t,
            reason: r,
        }) => {
            assert_eq!((plugin.as_str(), t.as_str(), r), ("kb", target, reason));
        }
        other => panic!("expected a denial for {target}, got {other:?}"),
    }
}

#[tokio::test]
async fn granted_loopback_origin_is_allowed() {
    let server = Server::start(Router::new().route("/hello", get(|| async { "hi" }))).await;
    let origin = server.origin();
    let client = GuardedClient::default();
    let response = client
        .send(
            &both(&[&origin]),
            OutboundRequest::get(server.url("/hello#frag")),
        )
        .await
        .expect("allowed");
    assert_eq!((response.status, body_text(&response)), (200, "hi".into()));
    assert_eq!(server.hits(), 1);
}

#[tokio::test]
async fn exact_localhost_grant_reaches_loopback() {
    let server = Server::start(Router::new().fallback(echo)).await;
    let url = format!("http://localhost:{}/", server.addr.port());
    let response = GuardedClient::default()
        .send(&both(&["http://localhost:*"]), OutboundRequest::get(url))
        .await
        .expect("allowed");
    assert_eq!(response.status, 200);
}

#[tokio::test]
async fn trailing_dot_and_case_are_one_host_for_every_decision() {
    let server = Server::start(Router::new().fallback(echo)).await;
    let port = server.addr.port();
    let client = GuardedClient::default();
    let dotted = format!("http://LocalHost.:{port}/");
    let plain = format!("http://localhost:{port}");
    for p in [both(&[&server.origin()]), both(&["http://*.localhost:*"])] {
        let result = client.send(&p, OutboundRequest::get(&dotted)).await;
        assert_denied(result, &plain, DenyReason::NotRequested);
    }
    let result = client
        .send(
            &both(&[&server.origin()]),
            OutboundRequest::get("http://localhost../"),
        )
        .await;
    assert!(
        matches!(result, Err(HttpError::InvalidRequest(_))),
        "{result:?}"
    );
    assert_eq!(server.hits(), 0);

    // Granted `localhost`, secret listed with a dot: one host under every spelling.
    let mut p = both(&["http://localhost:*"]);
    let hosts = AllowList::parse(["http://localhost.:*"]).expect("hosts");
    let secret = SecretHeader::new("TOKEN", "Authorization", "Bearer local-s3cret", hosts);
    p.secrets.push(secret.expect("valid"));
    let response = client
        .send(&p, OutboundRequest::get(&dotted))
        .await
        .expect("allowed");
    let seen = body_text(&response);
    assert!(
        seen.contains("auth=Bearer local-s3cret ")
            && seen.contains(&format!("host=localhost:{port}")),
        "{seen}"
    );
    assert_eq!(response.url.as_str(), format!("{plain}/"));
    let literal = format!("http://127.0.0.1.:{port}/");
    let response = client
        .send(&both(&[&server.origin()]), OutboundRequest::get(literal))
        .await
        .expect("the same address");
    assert_eq!(response.status, 200);
}

#[tokio::test]
async fn ungranted_or_name_only_grants_are_refused_before_connecting() {
    let server = Server::start(Router::new().fallback(echo)).await;
    let origin = server.origin();
    let client = GuardedClient::default();
    let url = server.url("/");
    let cases = [
        (
            policy(&[&origin], &["http://localhost:*"]),
            DenyReason::NotGranted,
        ),
        (policy(&[&origin], &[]), DenyReason::NotGranted),
        (policy(&[], &[&origin]), DenyReason::NotRequested),
        (both(&["http://*.localhost:*"]), DenyReason::NotRequested),
    ];
    for (p, reason) in cases {
        assert_denied(
            client.send(&p, OutboundRequest::get(&url)).await,
            &origin,
            reason,
        );
    }
    assert_eq!(server.hits(), 0);

    let err = client
        .send(&policy(&[&origin], &[]), OutboundRequest::get(&url))
        .await
        .expect_err("denied");
    let message = err.to_string();
    assert!(message.starts_with("denied:"), "{message}");
    assert!(message.contains("`kb`") && message.contains("`http`") && message.contains(&origin));
}

#[tokio::test]
async fn redirects_are_revalidated_per_hop() {
    let other = Server::start(Router::new().fallback(echo)).await;
    let to_private = redirect(StatusCode::FOUND, "http://10.0.0.1/admin".into());
    let to_other = redirect(StatusCode::TEMPORARY_REDIRECT, other.url("/x"));
    let router = Router::new()
        .route("/private", get(to_private))
        .route("/other", get(to_other));
    let server = Server::start(router).await;
    let p = policy(
        &[&server.origin(), &other.origin(), "http://10.0.0.1"],
        &[&server.origin()],
    );
    let client = GuardedClient::default();

    let result = client
        .send(&p, OutboundRequest::get(server.url("/private")))
        .await;
    assert_denied(result, "http://10.0.0.1", DenyReason::NotGranted);
    let result = client
        .send(&p, OutboundRequest::get(server.url("/other")))
        .await;
    assert_denied(result, &other.origin(), DenyReason::NotGranted);
    assert_eq!((server.hits(), other.hits()), (2, 0));
}

#[tokio::test]
async fn redirect_limit_and_303_becomes_get() {
    let echo_server = Server::start(Router::new().fallback(echo)).await;
    let router = Router::new()
        .route(
            "/see-other",
            any(redirect(StatusCode::SEE_OTHER, echo_server.url("/"))),
        )
        .route(
            "/keep",
            any(redirect(
                StatusCode::PERMANENT_REDIRECT,
                echo_server.url("/"),
            )),
        )
        .route("/loop", get(redirect(StatusCode::FOUND, "/loop".into())));
    let server = Server::start(router).await;
    let p = both(&[&server.origin(), &echo_server.origin()]);
    let client = GuardedClient::new(HttpLimits {
        max_redirects: 3,
        ..HttpLimits::default()
    });
    let post = |path: &str| {
        OutboundRequest::new("POST", server.url(path))
            .header("Content-Type", "text/plain")
            .body("payload")
    };

    let response = client.send(&p, post("/see-other")).await.expect("followed");
    assert!(
        body_text(&response).starts_with("method=GET len=0"),
        "{}",
        body_text(&response)
    );
    assert_eq!(response.url.as_str(), echo_server.url("/"));
    let response = client.send(&p, post("/keep")).await.expect("followed");
    assert!(body_text(&response).starts_with("method=POST len=7"));

    let err = client
        .send(&p, OutboundRequest::get(server.url("/loop")))
        .await
        .expect_err("loop");
    assert!(
        matches!(&err, HttpError::Transport(m) if m.contains("more than 3 redirects")),
        "{err}"
    );
    assert_eq!(server.hits(), 2 + 4);
}

#[tokio::test]
async fn secrets_go_only_to_their_hosts_and_override_the_guest() {
    let other = Server::start(Router::new().fallback(echo)).await;
    let hop = redirect(StatusCode::FOUND, other.url("/"));
    let api = Server::start(Router::new().route("/hop", get(hop)).fallback(echo)).await;
    let mut p = both(&[&api.origin(), &other.origin()]);
    let hosts = AllowList::parse([api.origin()]).expect("hosts");
    let secret = SecretHeader::new("TOKEN", "Authorization", "Bearer host-s3cret", hosts);
    p.secrets.push(secret.expect("valid"));
    let client = GuardedClient::default();
    let send = |url: String, guest_auth: Option<&str>| {
        let mut req = OutboundRequest::get(url).header("X-Guest", "1");
        if let Some(v) = guest_auth {
            req = req.header("authorization", v);
        }
        client.send(&p, req)
    };

    let seen = body_text(&send(api.url("/"), None).await.expect("api"));
    assert!(
        seen.contains("auth=Bearer host-s3cret ") && seen.contains("x-guest=1"),
        "{seen}"
    );
    let seen = body_text(&send(api.url("/"), Some("Bearer guest")).await.expect("api"));
    assert!(seen.contains("auth=Bearer host-s3cret"), "{seen}");
    let seen = body_text(&send(other.url("/"), None).await.expect("other"));
    assert!(seen.contains("auth=-"), "{seen}");
    let seen = body_text(
        &send(other.url("/"), Some("Bearer guest"))
            .await
            .expect("other"),
    );
    assert!(seen.contains("auth=Bearer guest"), "{seen}");
    // Redirected from the secret's host to another: the secret stays behind.
    let seen = body_text(&send(api.url("/hop"), None).await.expect("hop"));
    assert!(
        seen.contains("auth=- ") && seen.contains("x-guest=1"),
        "{seen}"
    );
    assert!(!format!("{p:?}").contains("s3cret"));
}

#[tokio::test]
async fn credentials_follow_same_origin_redirects_only() {
    let other = Server::start(Router::new().fallback(echo)).await;
    let router = Router::new()
        .route("/cross", get(redirect(StatusCode::FOUND, other.url("/"))))
        .route("/same", get(redirect(StatusCode::FOUND, "/echo".into())))
        .fallback(echo);
    let api = Server::start(router).await;
    let mut p = both(&[&api.origin(), &other.origin()]);
    let hosts = AllowList::parse([api.origin()]).expect("hosts");
    let secret = SecretHeader::new("KEY", "X-Api-Key", "host-key-s3cret", hosts);
    p.secrets.push(secret.expect("valid"));
    let client = GuardedClient::default();
    let send = |path: &str| {
        let req = OutboundRequest::get(api.url(path))
            .header("Authorization", "Bearer guest-cred")
            .header("Cookie", "session=guest")
            .header("X-Api-Key", "guest-key")
            .header("X-Guest", "1");
        client.send(&p, req)
    };

    let seen = body_text(&send("/same").await.expect("same origin"));
    assert!(
        seen.contains("auth=Bearer guest-cred ")
            && seen.contains("cookie=session=guest ")
            && seen.contains("x-api-key=host-key-s3cret")
            && seen.contains("x-guest=1"),
        "{seen}"
    );
    let response = send("/cross").await.expect("cross origin");
    assert_eq!(response.url.as_str(), other.url("/"));
    let seen = body_text(&response);
    assert!(
        seen.contains("auth=- ")
            && seen.contains("cookie=- ")
            && seen.ends_with("x-api-key=-")
            && seen.contains("x-guest=1"),
        "{seen}"
    );
}

#[tokio::test]
async fn guest_cannot_set_host_or_framing_headers() {
    let server = Server::start(Router::new().fallback(echo)).await;
    let req = OutboundRequest::new("POST", server.url("/"))
        .header("Host", "evil.example")
        .header("Content-Length", "999")
        .header("Transfer-Encoding", "chunked")
        .body("abc");
    let response = GuardedClient::default()
        .send(&both(&[&server.origin()]), req)
        .await
        .expect("sent");
    let seen = body_text(&response);
    assert!(
        seen.contains(&format!("len=3 auth=- host={}", server.addr)),
        "{seen}"
    );
}

#[tokio::test]
async fn oversized_responses_are_refused() {
    let big = || async { "x".repeat(64 * 1024) };
    let streamed = || async {
        let chunks = (0..64).map(|_| Ok::<_, std::io::Error>(vec![b'y'; 1024]));
        Body::from_stream(futures::stream::iter(chunks))
    };
    let router = Router::new()
        .route("/big", get(big))
        .route("/streamed", get(streamed));
    let server = Server::start(router).await;
    let p = both(&[&server.origin()]);
    let client = GuardedClient::new(HttpLimits {
        max_response_body: 1024,
        ..HttpLimits::default()
    });
    for path in ["/big", "/streamed"] {
        let result = client
            .send(&p, OutboundRequest::get(server.url(path)))
            .await;
        assert_eq!(result, Err(HttpError::TooLarge { limit: 1024 }), "{path}");
    }
    let head = client
        .send(&p, OutboundRequest::new("HEAD", server.url("/big")))
        .await
        .expect("HEAD has no body");
    assert!(head.body.is_empty());
}

#[tokio::test]
async fn slow_servers_time_out() {
    let slow = || async {
        tokio::time::sleep(Duration::from_secs(10)).await;
        "late"
    };
    let server = Server::start(Router::new().route("/slow", get(slow))).await;
    let client = GuardedClient::new(HttpLimits {
        timeout: Duration::from_millis(200),
        ..HttpLimits::default()
    });
    let started = Instant::now();
    let result = client
        .send(
            &both(&[&server.origin()]),
            OutboundRequest::get(server.url("/slow")),
        )
        .await;
    assert_eq!(result, Err(HttpError::Timeout));
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn malformed_requests_are_refused_before_any_policy_or_network() {
    let client = GuardedClient::new(HttpLimits {
        max_request_body: 4,
        ..HttpLimits::default()
    });
    let p = both(&["http://127.0.0.1:9"]);
    let invalid = [
        OutboundRequest::new("TRACE", "http://127.0.0.1:9/"),
        OutboundRequest::new("get", "http://127.0.0.1:9/"),
        OutboundRequest::get("/relative"),
        OutboundRequest::get("ftp://127.0.0.1:9/"),
        OutboundRequest::get("http://user:pw@127.0.0.1:9/"),
        OutboundRequest::get("http://127.0.0.1:9/").header("bad name", "v"),
    ];
    for req in invalid {
        let shown = format!("{req:?}");
        let result = client.send(&p, req).await;
        assert!(
            matches!(result, Err(HttpError::InvalidRequest(_))),
            "{shown}: {result:?}"
        );
    }
    let big = OutboundRequest::new("POST", "http://127.0.0.1:9/").body("12345");
    assert_eq!(
        client.send(&p, big).await,
        Err(HttpError::TooLarge { limit: 4 })
    );
}

/// A server that answers with the `Accept-Encoding` and `Range` it received, its body marked
/// `Content-Encoding: gzip` when asked with `?gzip`.
async fn encoding_server() -> Server {
    let answer = |headers: HeaderMap, query: axum::extract::RawQuery| async move {
        let get = |name: &str| {
            let value = headers.get(name).and_then(|v| v.to_str().ok());
            value.unwrap_or("-").to_owned()
        };
        let text = format!("ae={} range={}", get("accept-encoding"), get("range"));
        let encoding = if query.0.as_deref() == Some("gzip") {
            "gzip"
        } else {
            "identity"
        };
        ([(header::CONTENT_ENCODING, encoding)], text)
    };
    Server::start(Router::new().fallback(get(answer))).await
}

#[tokio::test]
async fn a_hop_carrying_a_secret_asks_for_the_whole_plain_body_and_refuses_an_encoded_one() {
    let server = encoding_server().await;
    let client = GuardedClient::default();
    let plain = both(&[&server.origin()]);
    let mut secret = plain.clone();
    let hosts = AllowList::parse([server.origin()]).expect("hosts");
    let header = SecretHeader::new("TOKEN", "Authorization", "Bearer host-s3cret", hosts);
    secret.secrets.push(header.expect("valid"));
    let request = |path: &str| {
        OutboundRequest::get(server.url(path))
            .header("Accept-Encoding", "gzip")
            .header("Range", "bytes=5-9")
    };
    // Without a secret, the guest's headers go as they are and any encoding comes back.
    let response = client.send(&plain, request("/")).await.expect("sent");
    assert_eq!(body_text(&response), "ae=gzip range=bytes=5-9");
    let response = client.send(&plain, request("/?gzip")).await;
    assert!(response.is_ok(), "{response:?}");
    // With one, the body is asked for whole and plain, and an encoded answer is refused.
    let response = client.send(&secret, request("/")).await.expect("sent");
    assert_eq!(body_text(&response), "ae=identity range=-");
    match client.send(&secret, request("/?gzip")).await {
        Err(HttpError::Transport(m)) => assert!(m.contains("`gzip`"), "{m}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

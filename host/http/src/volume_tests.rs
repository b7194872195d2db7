//! Live tests of the volume caps against axum servers on 127.0.0.1: header caps each way, the
//! per-plugin request rate and requests in flight, and connection reuse through the pool.

use std::collections::HashSet;

use axum::extract::ConnectInfo;

use super::*;

#[tokio::test]
async fn request_header_caps_are_typed_errors_at_the_boundary() {
    let server = Server::start(Router::new().fallback(echo)).await;
    let p = both(&[&server.origin()]);
    let client = GuardedClient::default();
    let limits = client.limits().clone();
    let with = |count: usize, value_len: usize| {
        let mut req = OutboundRequest::get(server.url("/"));
        for i in 0..count {
            req = req.header(format!("x-h{i}"), "v".repeat(value_len));
        }
        req
    };
    assert_eq!(limits.max_headers, 64);
    client
        .send(&p, with(limits.max_headers, 1))
        .await
        .expect("at the count cap");
    client
        .send(&p, with(1, limits.max_header_value))
        .await
        .expect("at the value cap");
    assert_eq!(server.hits(), 2);
    let over = [
        (with(limits.max_headers + 1, 1), "65 headers"),
        (with(1, limits.max_header_value + 1), "8193 bytes"),
        (with(5, limits.max_header_value), "total"),
        (with(100_000, 1), "100000 headers"),
        (with(3, 1 << 20), "1048576 bytes"),
    ];
    for (req, why) in over {
        match client.send(&p, req).await {
            Err(HttpError::Limit(m)) => assert!(m.contains(why), "{m}"),
            other => panic!("expected a header limit ({why}), got {other:?}"),
        }
    }
    assert_eq!(server.hits(), 2, "nothing over a cap was sent");
}

#[tokio::test]
async fn response_header_caps_are_typed_errors_at_the_boundary() {
    let value_cap = HttpLimits::default().max_header_value;
    let sized = |len: usize| move || std::future::ready(([("x-big", "b".repeat(len))], "ok"));
    let router = Router::new()
        .route("/at", get(sized(value_cap)))
        .route("/over", get(sized(value_cap + 1)));
    let server = Server::start(router).await;
    let p = both(&[&server.origin()]);
    let client = GuardedClient::default();
    let response = client
        .send(&p, OutboundRequest::get(server.url("/at")))
        .await
        .expect("at the cap");
    assert_eq!(body_text(&response), "ok");
    match client
        .send(&p, OutboundRequest::get(server.url("/over")))
        .await
    {
        Err(HttpError::Limit(m)) => {
            assert!(
                m.contains("response") && m.contains("`x-big` is 8193 bytes"),
                "{m}"
            );
        }
        other => panic!("expected a header limit, got {other:?}"),
    }
}

#[tokio::test]
async fn a_reflected_secret_may_not_leave_for_another_host() {
    let api = Server::start(Router::new().fallback(echo)).await;
    let other = Server::start(Router::new().fallback(echo)).await;
    let mut p = both(&[&api.origin(), &other.origin()]);
    let hosts = AllowList::parse([api.origin()]).expect("hosts");
    let secret = SecretHeader::new("TOKEN", "Authorization", "Bearer reflected-s3cret", hosts);
    p.secrets.push(secret.expect("valid"));
    let client = GuardedClient::default();

    // The secret's own host echoes it back: the guest now holds the value.
    let echoed = body_text(
        &client
            .send(&p, OutboundRequest::get(api.url("/")))
            .await
            .expect("api"),
    );
    let stolen = echoed
        .split_whitespace()
        .skip_while(|w| !w.starts_with("auth="))
        .nth(1)
        .expect("the echo shows the token")
        .to_owned();
    assert_eq!(stolen, "reflected-s3cret");

    let leaks = [
        OutboundRequest::new("POST", other.url("/")).body(format!("got {stolen}")),
        OutboundRequest::get(other.url(&format!("/?t={stolen}"))),
        OutboundRequest::get(other.url("/")).header("X-Guest", format!("Bearer {stolen}")),
    ];
    for (req, place) in leaks
        .into_iter()
        .zip(["the body", "the URL", "header `X-Guest`"])
    {
        let result = client.send(&p, req).await;
        let reason = DenyReason::SecretReflected {
            secret: "TOKEN".into(),
            place: place.into(),
        };
        assert_denied(result, &other.origin(), reason);
    }
    assert_eq!(other.hits(), 0, "nothing reached the other host");
    let err = client
        .send(&p, OutboundRequest::get(other.url(&format!("/{stolen}"))))
        .await
        .expect_err("denied");
    assert!(err.to_string().contains("secret `TOKEN`") && !err.to_string().contains("s3cret"));

    // Back to its own host, and anything without the value elsewhere: allowed.
    let home = OutboundRequest::new("POST", api.url("/")).body(format!("got {stolen}"));
    client.send(&p, home).await.expect("its own host");
    let clean = OutboundRequest::new("POST", other.url("/")).body("reflected-s3cre");
    client.send(&p, clean).await.expect("no secret in it");
    assert_eq!(other.hits(), 1);
}

/// A test server that also records the client address of every request: one per connection.
async fn start_counting_connections() -> (Server, Arc<std::sync::Mutex<HashSet<SocketAddr>>>) {
    let peers = Arc::new(std::sync::Mutex::new(HashSet::new()));
    let seen = peers.clone();
    let router = Router::new().fallback(move |ConnectInfo(peer): ConnectInfo<SocketAddr>| {
        if let Ok(mut set) = seen.lock() {
            set.insert(peer);
        }
        std::future::ready("ok")
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    let task = tokio::spawn(async move {
        let service = router.into_make_service_with_connect_info::<SocketAddr>();
        axum::serve(listener, service).await.expect("serve");
    });
    let hits = Arc::new(AtomicUsize::new(0));
    (Server { addr, hits, task }, peers)
}

fn connections(peers: &std::sync::Mutex<HashSet<SocketAddr>>) -> usize {
    peers.lock().map(|set| set.len()).unwrap_or(usize::MAX)
}

#[tokio::test]
async fn sequential_requests_reuse_a_pooled_connection() {
    const REQUESTS: usize = 10;
    let (server, peers) = start_counting_connections().await;
    let p = both(&[&server.origin()]);
    let client = GuardedClient::default();
    for _ in 0..REQUESTS {
        let response = client
            .send(&p, OutboundRequest::get(server.url("/")))
            .await
            .expect("allowed");
        assert_eq!(body_text(&response), "ok");
    }
    // Reuse may rarely race a connection's return to the pool; never one per request.
    assert!(
        connections(&peers) <= 2,
        "{} connections",
        connections(&peers)
    );

    // Without a pool, every request opens its own connection: what the count above would be.
    let (server, peers) = start_counting_connections().await;
    let p = both(&[&server.origin()]);
    let unpooled = GuardedClient::new(HttpLimits {
        max_pooled_clients: 0,
        ..HttpLimits::default()
    });
    for _ in 0..REQUESTS {
        unpooled
            .send(&p, OutboundRequest::get(server.url("/")))
            .await
            .expect("allowed");
    }
    assert_eq!(connections(&peers), REQUESTS);
}

#[tokio::test]
async fn a_plugin_over_its_request_rate_gets_a_typed_limit() {
    let server = Server::start(Router::new().fallback(echo)).await;
    let client = GuardedClient::new(HttpLimits {
        request_burst: 3,
        request_interval: Duration::from_secs(3600),
        ..HttpLimits::default()
    });
    let kb = both(&[&server.origin()]);
    let mut tracker = kb.clone();
    tracker.plugin = "tracker".into();
    // A refused request spends the budget too.
    let denied = client
        .send(&kb, OutboundRequest::get("http://127.0.0.1:9/"))
        .await;
    assert!(
        matches!(denied, Err(HttpError::Denied { .. })),
        "{denied:?}"
    );
    for _ in 0..2 {
        client
            .send(&kb, OutboundRequest::get(server.url("/")))
            .await
            .expect("within the burst");
    }
    match client
        .send(&kb, OutboundRequest::get(server.url("/")))
        .await
    {
        Err(HttpError::Limit(m)) => assert!(m.contains("plugin `kb`"), "{m}"),
        other => panic!("expected a rate limit, got {other:?}"),
    }
    assert_eq!(server.hits(), 2);
    client
        .send(&tracker, OutboundRequest::get(server.url("/")))
        .await
        .expect("another plugin has its own budget");
}

#[tokio::test]
async fn requests_in_flight_over_the_cap_get_a_typed_limit() {
    let hold = || async {
        tokio::time::sleep(Duration::from_secs(30)).await;
        "late"
    };
    let router = Router::new().route("/hold", get(hold)).fallback(echo);
    let server = Server::start(router).await;
    let client = GuardedClient::new(HttpLimits {
        max_concurrent_requests: 1,
        timeout: Duration::from_secs(1),
        ..HttpLimits::default()
    });
    let kb = both(&[&server.origin()]);
    let mut tracker = kb.clone();
    tracker.plugin = "tracker".into();
    // The held request may wait far longer than the others: it must still be in flight when
    // the next one gives up waiting for its slot.
    let patient = client.with_timeout(Duration::from_secs(60));
    let held = tokio::spawn({
        let (kb, url) = (kb.clone(), server.url("/hold"));
        async move { patient.send(&kb, OutboundRequest::get(url)).await }
    });
    for _ in 0..500 {
        if server.hits() == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(server.hits(), 1, "the first request is in flight");
    client
        .send(&tracker, OutboundRequest::get(server.url("/")))
        .await
        .expect("another plugin has its own slots");
    match client
        .send(&kb, OutboundRequest::get(server.url("/")))
        .await
    {
        Err(HttpError::Limit(m)) => assert!(m.contains("1 requests in flight"), "{m}"),
        other => panic!("expected a concurrency limit, got {other:?}"),
    }
    held.abort();
    assert!(held.await.is_err_and(|e| e.is_cancelled()));
    client
        .send(&kb, OutboundRequest::get(server.url("/")))
        .await
        .expect("the slot is free again");
}

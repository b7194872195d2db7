//! Route tests against a live tracker on 127.0.0.1.

use serde_json::{Value, json};

use super::*;

const TOKEN: &str = "test-token";

/// reqwest's `json` feature is off in this workspace; these two stand in for it.
fn with_json(req: reqwest::RequestBuilder, body: &Value) -> reqwest::RequestBuilder {
    req.header("Content-Type", "application/json")
        .body(body.to_string())
}

async fn json_of(response: reqwest::Response) -> Value {
    let bytes = response.bytes().await.expect("body");
    serde_json::from_slice(&bytes).expect("json body")
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client")
}

async fn call(
    server: &TrackerServer,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut req = client()
        .request(method, format!("{}{path}", server.base_url()))
        .bearer_auth(TOKEN);
    if let Some(body) = body {
        req = with_json(req, &body);
    }
    let response = req.send().await.expect("send");
    let status = response.status().as_u16();
    (status, json_of(response).await)
}

async fn create(server: &TrackerServer, repo: &str, body: Value) -> (u16, Value) {
    let path = format!("/repos/{repo}/issues");
    call(server, reqwest::Method::POST, &path, Some(body)).await
}

#[tokio::test]
async fn create_returns_github_shaped_issue() {
    let server = TrackerServer::start(TOKEN).await.expect("start");
    let base = server.base_url().to_owned();
    let (status, issue) = create(
        &server,
        "acme/web",
        json!({ "title": "Login fails", "body": "500 from /auth", "labels": ["bug"] }),
    )
    .await;
    assert_eq!(status, 201);
    assert_eq!(issue["number"], 1);
    assert_eq!(issue["title"], "Login fails");
    assert_eq!(issue["body"], "500 from /auth");
    assert_eq!(issue["state"], "open");
    assert_eq!(issue["labels"], json!([{ "name": "bug" }]));
    assert_eq!(issue["html_url"], format!("{base}/acme/web/issues/1"));
    assert_eq!(issue["url"], format!("{base}/repos/acme/web/issues/1"));
    assert!(issue["id"].as_u64().is_some());
    let created = issue["created_at"].as_str().expect("created_at");
    assert!(created.len() == 20 && created.ends_with('Z'), "{created}");

    let (_, second) = create(&server, "acme/web", json!({ "title": "Second" })).await;
    assert_eq!(
        (second["number"].clone(), second["body"].clone()),
        (json!(2), Value::Null)
    );
    let (_, elsewhere) = create(&server, "acme/api", json!({ "title": "Other repo" })).await;
    assert_eq!(elsewhere["number"], 1);
    let stored = server.issues();
    assert_eq!(stored.len(), 3);
    assert_eq!(
        (stored[0].title.as_str(), stored[0].state),
        ("Login fails", IssueState::Open)
    );
}

#[tokio::test]
async fn create_validates_and_can_be_refused() {
    let server = TrackerServer::start(TOKEN).await.expect("start");
    for body in [json!({ "title": "" }), json!({ "body": "no title" })] {
        let (status, error) = create(&server, "acme/web", body).await;
        assert_eq!(status, 422);
        assert_eq!(
            error,
            json!({
                "message": "Validation Failed",
                "errors": [{ "resource": "Issue", "field": "title", "code": "missing_field" }],
            })
        );
    }
    server.set_refuse_creates(Some((410, "Issues are disabled for this repo".into())));
    let (status, error) = create(&server, "acme/web", json!({ "title": "x" })).await;
    assert_eq!(
        (status, error),
        (
            410,
            json!({ "message": "Issues are disabled for this repo" })
        )
    );
    server.set_refuse_creates(None);
    let (status, _) = create(&server, "acme/web", json!({ "title": "x" })).await;
    assert_eq!(status, 201);
    assert_eq!(server.issues().len(), 1);
}

#[tokio::test]
async fn only_the_next_n_creates_are_refused() {
    let server = TrackerServer::start(TOKEN).await.expect("start");
    server.refuse_next_creates(2, 503, "Service Unavailable");
    for _ in 0..2 {
        let (status, error) = create(&server, "acme/web", json!({ "title": "x" })).await;
        assert_eq!(
            (status, error),
            (503, json!({ "message": "Service Unavailable" }))
        );
    }
    let (status, _) = create(&server, "acme/web", json!({ "title": "x" })).await;
    assert_eq!(status, 201);
    assert_eq!(server.issues().len(), 1);
    // A count of 0 refuses nothing.
    server.refuse_next_creates(0, 503, "Service Unavailable");
    let (status, _) = create(&server, "acme/web", json!({ "title": "y" })).await;
    assert_eq!(status, 201);
}

#[tokio::test]
async fn every_api_route_requires_the_token() {
    let server = TrackerServer::start(TOKEN).await.expect("start");
    let routes = [
        (reqwest::Method::POST, "/repos/acme/web/issues"),
        (reqwest::Method::GET, "/repos/acme/web/issues"),
        (reqwest::Method::GET, "/repos/acme/web/issues/1"),
        (reqwest::Method::PATCH, "/repos/acme/web/issues/1"),
        (reqwest::Method::GET, "/search/issues?q=x"),
    ];
    for (method, path) in routes {
        for auth in [None, Some("Bearer wrong"), Some("test-token")] {
            let mut req = client().request(method.clone(), format!("{}{path}", server.base_url()));
            if let Some(auth) = auth {
                req = req.header("Authorization", auth);
            }
            let req = with_json(req, &json!({ "title": "t" }));
            let response = req.send().await.expect("send");
            assert_eq!(response.status().as_u16(), 401, "{method} {path} {auth:?}");
            let body = json_of(response).await;
            assert_eq!(body, json!({ "message": "Bad credentials" }));
        }
    }
    assert!(server.issues().is_empty());
}

#[tokio::test]
async fn get_list_update_and_not_found() {
    let server = TrackerServer::start(TOKEN).await.expect("start");
    create(&server, "acme/web", json!({ "title": "First" })).await;
    create(&server, "acme/web", json!({ "title": "Second" })).await;
    let get = reqwest::Method::GET;

    let (status, issue) = call(&server, get.clone(), "/repos/acme/web/issues/2", None).await;
    assert_eq!((status, issue["title"].clone()), (200, json!("Second")));
    for path in [
        "/repos/acme/web/issues/3",
        "/repos/acme/api/issues/1",
        "/repos/acme/web/issues/x",
    ] {
        let (status, body) = call(&server, get.clone(), path, None).await;
        assert_eq!(
            (status, body),
            (404, json!({ "message": "Not Found" })),
            "{path}"
        );
    }

    let patch = Some(json!({ "state": "closed" }));
    let (status, closed) = call(
        &server,
        reqwest::Method::PATCH,
        "/repos/acme/web/issues/1",
        patch,
    )
    .await;
    assert_eq!((status, closed["state"].clone()), (200, json!("closed")));

    let (_, open) = call(&server, get.clone(), "/repos/acme/web/issues", None).await;
    let titles = |v: &Value| -> Vec<String> {
        v.as_array()
            .expect("array")
            .iter()
            .map(|i| i["title"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    assert_eq!(titles(&open), ["Second"]);
    let (_, all) = call(
        &server,
        get.clone(),
        "/repos/acme/web/issues?state=all",
        None,
    )
    .await;
    assert_eq!(titles(&all), ["Second", "First"]);
    let (_, none) = call(&server, get, "/repos/acme/api/issues", None).await;
    assert_eq!(none, json!([]));
}

#[tokio::test]
async fn search_uses_qualifiers_and_words() {
    let server = TrackerServer::start(TOKEN).await.expect("start");
    let issues = [
        (
            "acme/web",
            json!({ "title": "Login fails on Safari", "labels": ["bug"] }),
        ),
        (
            "acme/web",
            json!({ "title": "Dark mode", "body": "users want LOGIN screen dark" }),
        ),
        ("acme/api", json!({ "title": "Login rate limit" })),
    ];
    for (repo, body) in issues {
        create(&server, repo, body).await;
    }
    let search = |q: &str| {
        let url = format!("{}/search/issues", server.base_url());
        let req = client().get(url).query(&[("q", q)]).bearer_auth(TOKEN);
        async move {
            let body = json_of(req.send().await.expect("send")).await;
            assert_eq!(body["incomplete_results"], false);
            let titles: Vec<String> = body["items"]
                .as_array()
                .expect("items")
                .iter()
                .map(|i| i["title"].as_str().unwrap_or_default().to_owned())
                .collect();
            assert_eq!(body["total_count"], titles.len());
            titles
        }
    };
    assert_eq!(
        search("login").await,
        ["Login rate limit", "Dark mode", "Login fails on Safari"]
    );
    assert_eq!(
        search("repo:acme/web login").await,
        ["Dark mode", "Login fails on Safari"]
    );
    assert_eq!(
        search("repo:acme/web label:bug").await,
        ["Login fails on Safari"]
    );
    assert_eq!(search("is:closed login").await, Vec::<String>::new());
    assert_eq!(search("is:open safari").await, ["Login fails on Safari"]);

    let (status, body) = call(&server, reqwest::Method::GET, "/search/issues", None).await;
    assert_eq!(
        (status, body["message"].clone()),
        (422, json!("Validation Failed"))
    );
}

#[tokio::test]
async fn html_page_is_public_and_escaped() {
    let server = TrackerServer::start(TOKEN).await.expect("start");
    let (_, issue) = create(
        &server,
        "acme/web",
        json!({ "title": "<script>x</script>" }),
    )
    .await;
    let url = issue["html_url"].as_str().expect("html_url");
    let response = client().get(url).send().await.expect("send");
    assert_eq!(response.status().as_u16(), 200);
    let page = response.text().await.expect("text");
    assert!(page.contains("&lt;script&gt;x&lt;/script&gt;") && !page.contains("<script>"));
    let missing = format!("{}/acme/web/issues/99", server.base_url());
    let response = client().get(missing).send().await.expect("send");
    assert_eq!(response.status().as_u16(), 404);
}

#[tokio::test]
async fn drop_stops_the_server() {
    let server = TrackerServer::start(TOKEN).await.expect("start");
    let addr = server.addr();
    drop(server);
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}

#[test]
fn rfc3339_formats_known_instants() {
    assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
    assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    assert_eq!(rfc3339(1_704_067_199), "2023-12-31T23:59:59Z");
}

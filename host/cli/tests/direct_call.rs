//! Tool calls answered in their HTTP connection (`host/serve/src/direct_call.rs`): which calls
//! are, that their answers match the session's, that `notifications/cancelled` still cancels
//! them, and that everything else keeps the transport's own answer. A real `guild serve
//! --http` on 127.0.0.1, plain HTTP requests.

mod common;

use std::time::Duration;

use serde_json::{Value, json};

use common::http_server::HttpServer;
use common::mcp_setup::setup;

/// One MCP session over streamable HTTP.
struct Session {
    client: reqwest::Client,
    url: String,
    id: String,
}

impl Session {
    /// `initialize` (declaring `capabilities`) and `notifications/initialized`.
    async fn open(url: &str, capabilities: Value) -> Self {
        let client = reqwest::Client::new();
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": capabilities,
            "clientInfo": {"name": "direct-call-test", "version": "1"}}});
        let answer = request(&client, url, None, &init).await;
        assert!(
            answer.status().is_success(),
            "initialize: {}",
            answer.status()
        );
        let id = answer.headers()["mcp-session-id"]
            .to_str()
            .expect("ascii session id")
            .to_owned();
        let _ = answer.text().await;
        let session = Self {
            client,
            url: url.to_owned(),
            id,
        };
        let initialized = session
            .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        assert!(initialized.status().is_success());
        session
    }

    /// Waits until the server answers this session's plain calls in their connection: it
    /// registers a session when it handles `notifications/initialized`, which happens after
    /// that notification was accepted, so a call sent at once may still go through the
    /// session (answered the same, in an event stream). Returns the content type of each
    /// answer seen meanwhile.
    async fn until_direct(&self) -> Vec<String> {
        let mut kinds = Vec::new();
        for n in 0..200 {
            let call = task_call(1_000 + n, json!({"op": "brief"}), None);
            let (kind, message) = answer(self.post(&call).await, 1_000 + n).await;
            assert_eq!(
                message["result"]["structuredContent"]["status"],
                "succeeded"
            );
            kinds.push(kind);
            if kinds
                .last()
                .is_some_and(|k| k.starts_with("application/json"))
            {
                return kinds;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("no call of the session was answered in its connection: {kinds:?}");
    }

    async fn post(&self, body: &Value) -> reqwest::Response {
        request(&self.client, &self.url, Some(&self.id), body).await
    }
}

async fn request(
    client: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: &Value,
) -> reqwest::Response {
    let mut request = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(id) = session {
        request = request.header("mcp-session-id", id);
    }
    request.send().await.expect("answered")
}

fn task_call(id: u64, brief: Value, meta: Option<Value>) -> Value {
    let mut params = json!({"name": "task", "arguments": {
        "subagent_type": "probe", "description": brief.to_string()}});
    if let Some(meta) = meta {
        params["_meta"] = meta;
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

/// The answer's `Content-Type`, empty when it has none.
fn content_type(response: &reqwest::Response) -> String {
    response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

/// The answer's content type and its JSON-RPC message with `id` (from a JSON body, or from
/// the event stream that carries it).
async fn answer(response: reqwest::Response, id: u64) -> (String, Value) {
    let kind = content_type(&response);
    let body = response.text().await.expect("a body");
    let message = match kind.starts_with("application/json") {
        true => serde_json::from_str(&body).expect("a JSON answer"),
        false => body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|m| m["id"] == id)
            .unwrap_or_else(|| panic!("no answer to {id} in {body}")),
    };
    (kind, message)
}

#[tokio::test]
async fn a_plain_tool_call_is_answered_in_its_connection_and_the_others_through_the_session() {
    let dir = setup();
    let server = HttpServer::start(dir.path(), &["--no-token"]);
    let brief = json!({"op": "brief"});

    let plain = Session::open(&server.url, json!({})).await;
    plain.until_direct().await;
    let (kind, direct) = answer(plain.post(&task_call(1, brief.clone(), None)).await, 1).await;
    assert!(kind.starts_with("application/json"), "{kind}");
    // A progress token needs the request's event stream: the session answers it.
    let meta = Some(json!({"progressToken": "p-2"}));
    let (kind, streamed) = answer(plain.post(&task_call(2, brief.clone(), meta)).await, 2).await;
    assert!(kind.starts_with("text/event-stream"), "{kind}");
    // The same call, the same answer either way.
    for message in [&direct, &streamed] {
        let result = &message["result"];
        assert_ne!(result["isError"], true, "{message}");
        assert_eq!(
            result["structuredContent"]["status"], "succeeded",
            "{message}"
        );
        assert!(
            result["content"][0]["text"]
                .as_str()
                .is_some_and(|t| t.contains("succeeded")),
            "{message}"
        );
    }
    assert_eq!(
        direct["result"]["structuredContent"]["report"],
        streamed["result"]["structuredContent"]["report"]
    );

    // A client that declared elicitation may be asked for approvals mid-call, on the
    // request's event stream: its calls go through the session.
    // Its registration is not visible to the client, so the calls are spread over a second:
    // a plain session is answered directly within a few calls (above), this one never is.
    let eliciting = Session::open(&server.url, json!({"elicitation": {}})).await;
    for id in 3..13 {
        let call = task_call(id, brief.clone(), None);
        let (kind, message) = answer(eliciting.post(&call).await, id).await;
        assert!(kind.starts_with("text/event-stream"), "{kind}");
        assert_eq!(
            message["result"]["structuredContent"]["status"],
            "succeeded"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let (status, _) = server.stop();
    assert!(status.success());
}

#[tokio::test]
async fn notifications_cancelled_cancels_a_call_answered_in_its_connection() {
    let dir = setup();
    let server = HttpServer::start(dir.path(), &["--no-token"]);
    let session = Session::open(&server.url, json!({})).await;
    session.until_direct().await;
    let sleeping = task_call(7, json!({"op": "sleep", "ms": 60_000}), None);
    let call = session.post(&sleeping);
    tokio::pin!(call);
    // Cancelled again every 300 ms until the call answers: one sent before the call was
    // registered would be missed, and on a loaded machine the first may be.
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 7, "reason": "test"}});
    // Bounded so that a call the cancellation missed fails the test instead of hanging it (the
    // task's own 10 s timeout would end it with an answer, which the test refuses below).
    let response = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            tokio::select! {
                response = &mut call => break response,
                () = tokio::time::sleep(Duration::from_millis(300)) => {
                    let sent = session.post(&cancel).await;
                    assert!(sent.status().is_success(), "{}", sent.status());
                }
            }
        }
    })
    .await
    .expect("the call answered");
    // A cancelled request gets no answer: its stream ends empty, where a call the
    // cancellation missed would have answered (the task's timeout ends the sleep first).
    let body = response.text().await.expect("a body");
    assert!(
        !body.contains("\"id\":7") && !body.contains("\"result\""),
        "the cancelled call answered: {body}"
    );
    // The session serves on.
    let (_, again) = answer(
        session
            .post(&task_call(8, json!({"op": "brief"}), None))
            .await,
        8,
    )
    .await;
    assert_eq!(again["result"]["structuredContent"]["status"], "succeeded");
    let (status, _) = server.stop();
    assert!(status.success());
}

#[tokio::test]
async fn a_closed_session_or_a_foreign_host_gets_the_transports_answer() {
    let dir = setup();
    let server = HttpServer::start(dir.path(), &["--no-token"]);
    let session = Session::open(&server.url, json!({})).await;
    let call = task_call(1, json!({"op": "brief"}), None);

    // DNS rebinding: a Host this server does not serve is refused, call or not.
    let foreign = session
        .client
        .post(&session.url)
        .header("host", "evil.example")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &session.id)
        .body(call.to_string())
        .send()
        .await
        .expect("answered");
    assert_eq!(foreign.status(), reqwest::StatusCode::FORBIDDEN);

    // A session ended by DELETE is gone for its calls too (404, as for any request).
    let deleted = session
        .client
        .delete(&session.url)
        .header("mcp-session-id", &session.id)
        .send()
        .await
        .expect("answered");
    assert!(deleted.status().is_success(), "{}", deleted.status());
    let after = session.post(&call).await;
    assert_eq!(after.status(), reqwest::StatusCode::NOT_FOUND);

    // An id no session had: 404.
    let unknown = request(
        &session.client,
        &session.url,
        Some("no-such-session"),
        &call,
    )
    .await;
    assert_eq!(unknown.status(), reqwest::StatusCode::NOT_FOUND);
    let (status, _) = server.stop();
    assert!(status.success());
}

/// This layer reads a call's id and parameters itself (not through rmcp's message parse): a
/// string id comes back as it was sent, and a call whose parts do not parse (no tool name,
/// or not JSON-RPC 2.0) gets the transport's own answer, as before.
#[tokio::test]
async fn a_call_read_here_keeps_its_id_and_a_malformed_one_gets_the_transports_answer() {
    let dir = setup();
    let server = HttpServer::start(dir.path(), &["--no-token"]);
    let session = Session::open(&server.url, json!({})).await;
    session.until_direct().await;

    let mut call = task_call(0, json!({"op": "brief"}), None);
    call["id"] = json!("call-7 ü");
    let response = session.post(&call).await;
    let kind = content_type(&response);
    let message: Value =
        serde_json::from_str(&response.text().await.expect("a body")).expect("a JSON answer");
    assert!(kind.starts_with("application/json"), "{kind}");
    assert_eq!(message["id"], "call-7 ü", "{message}");
    assert_eq!(
        message["result"]["structuredContent"]["status"],
        "succeeded"
    );

    let nameless = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                          "params": {"arguments": {}}});
    let not_v2 = json!({"jsonrpc": "1.0", "id": 9, "method": "tools/call",
                        "params": {"name": "list_tasks", "arguments": {}}});
    for bad in [nameless, not_v2] {
        let response = session.post(&bad).await;
        let status = response.status();
        let kind = content_type(&response);
        let body = response.text().await.expect("a body");
        // Never a result: rmcp refuses the message (an HTTP error or a JSON-RPC error).
        assert!(
            !body.contains("\"result\""),
            "{bad}: {status} {kind} {body}"
        );
        assert!(
            !status.is_success() || body.contains("\"error\""),
            "{bad}: {status} {kind} {body}"
        );
    }
    // The session serves on.
    let (kind, message) = answer(
        session
            .post(&task_call(10, json!({"op": "brief"}), None))
            .await,
        10,
    )
    .await;
    assert!(kind.starts_with("application/json"), "{kind}");
    assert_eq!(
        message["result"]["structuredContent"]["status"],
        "succeeded"
    );
    let (status, _) = server.stop();
    assert!(status.success());
}

//! A session's `tools/call` answered in the HTTP connection that read it (docs/performance.md,
//! "A tool call answered where it is read").
//!
//! Through rmcp's streamable HTTP sessions a POST is handed from task to task: to the session's
//! worker, to its service loop, to a handler task spawned for it, and the answer back through
//! the session's event channel into the response stream. On a machine whose threads wake on
//! other CPUs each hand-off is a wake-up, and together they cost more than the task the call
//! runs. This layer, inside the transport's other layers (the token, the bounds, the Tasks
//! rewriting), answers a `tools/call` itself when nothing in the call can need the session's
//! streams: it runs the same handler (the session's `mcp::Connection`, through rmcp's own
//! request dispatch, handed in as a [`Handler`] so that this module needs nothing above it) in
//! the connection's task and writes the JSON-RPC answer as one `application/json` body, which
//! the streamable HTTP transport allows for any POST.
//!
//! A call is answered here only when all of these hold; any other request, and any call that
//! misses one, goes to rmcp exactly as before:
//! - a POST carrying the `Mcp-Session-Id` of a live session whose `notifications/initialized`
//!   this host saw over HTTP (the session's handler and peer are registered then);
//! - the headers rmcp would accept: `Accept` names JSON and event streams, the body is JSON,
//!   the `Host` is one this server serves, no `Origin` (a browser's requests keep rmcp's
//!   checks), and no `MCP-Protocol-Version` other than one of the versions before standard
//!   headers;
//! - one request (not a batch), with no `_meta` (no progress token: progress rides the
//!   request's event stream, which this answer does not open);
//! - a client that declared no elicitation: approvals asked mid-call go to the request's event
//!   stream. A client without it finds approvals with `check_task` and answers with
//!   `approve_task`, on either path.
//!
//! `notifications/cancelled` naming a call running here cancels it (and still reaches rmcp),
//! and the call then gets no answer: its response is an event stream that ends empty, as
//! rmcp's is. A client that hangs up drops the call, which cancels its task.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientJsonRpcMessage, ClientNotification,
    ClientRequest, JsonRpcMessage, RequestId, ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::SessionManager as _;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::{Peer, RoleServer};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// A session's MCP request handler: the request, its context, and rmcp's dispatch of it.
pub(crate) type Handler = Arc<
    dyn Fn(
            ClientRequest,
            RequestContext<RoleServer>,
        ) -> futures::future::BoxFuture<'static, Result<ServerResult, ErrorData>>
        + Send
        + Sync,
>;

/// The header naming a streamable HTTP session.
const SESSION_HEADER: &str = "mcp-session-id";
/// The header naming a request's protocol version.
const VERSION_HEADER: &str = "mcp-protocol-version";
/// The protocol versions whose requests carry no standard headers that rmcp checks against
/// the body: only these are answered here.
const PLAIN_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The HTTP sessions whose calls may be answered here, by session id.
#[derive(Default)]
pub(crate) struct Sessions {
    by_id: Mutex<HashMap<Arc<str>, Arc<Registered>>>,
}

/// One session: its handler, its peer, and the calls running here.
struct Registered {
    handler: Handler,
    peer: Peer<RoleServer>,
    calls: Mutex<HashMap<RequestId, CancellationToken>>,
}

impl Sessions {
    /// Registers the session of an HTTP request's `parts` (from `notifications/initialized`);
    /// nothing for a session without one (stdio).
    pub(crate) fn register(
        &self,
        parts: Option<&axum::http::request::Parts>,
        handler: Handler,
        peer: Peer<RoleServer>,
    ) {
        let Some(id) = parts.and_then(|p| header_str(&p.headers, SESSION_HEADER)) else {
            return;
        };
        let registered = Arc::new(Registered {
            handler,
            peer,
            calls: Mutex::default(),
        });
        let mut by_id = self.by_id.lock().unwrap_or_else(|p| p.into_inner());
        // Ended sessions go with the next registration; a live one is looked up again below.
        by_id.retain(|_, r| !r.peer.is_transport_closed());
        by_id.insert(Arc::from(id), registered);
    }

    fn get(&self, id: &str) -> Option<Arc<Registered>> {
        let by_id = self.by_id.lock().unwrap_or_else(|p| p.into_inner());
        by_id.get(id).cloned()
    }

    fn forget(&self, id: &str) {
        let mut by_id = self.by_id.lock().unwrap_or_else(|p| p.into_inner());
        by_id.remove(id);
    }
}

/// What the layer needs: the registered sessions, rmcp's session table (the authority on which
/// sessions are live) and the `Host` names this server answers to.
pub(crate) struct Direct {
    pub(crate) sessions: Arc<Sessions>,
    pub(crate) live: Arc<LocalSessionManager>,
    pub(crate) hosts: Vec<String>,
}

/// The layer: a call answered here, anything else passed on (its body read once, given on
/// whole).
pub(crate) async fn http(
    State(direct): State<Arc<Direct>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(session) = candidate(&direct, &request) else {
        return next.run(request).await;
    };
    let (parts, body) = request.into_parts();
    // The bounds layer outside this one read the body whole, within `[serve] max_body_kb`.
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return next.run(Request::from_parts(parts, Body::empty())).await;
    };
    let pass = |parts, bytes: Bytes| next.run(Request::from_parts(parts, Body::from(bytes)));
    let Some(registered) = direct.sessions.get(&session) else {
        return pass(parts, bytes).await;
    };
    let call = match inspect(&bytes, &registered) {
        Inspected::Call(call) => call,
        Inspected::Cancel(id) => {
            if let Some(ct) = registered.lock_calls().get(&id) {
                ct.cancel();
            }
            return pass(parts, bytes).await;
        }
        Inspected::Other => return pass(parts, bytes).await,
    };
    // rmcp's table decides whether the session is live (closed by DELETE or by the idle
    // expiry): a closed one gets rmcp's answer (404).
    let live = direct
        .live
        .has_session(&Arc::from(session.as_str()))
        .await
        .unwrap_or(false);
    if !live {
        direct.sessions.forget(&session);
        return pass(parts, bytes).await;
    }
    answer(&registered, call, parts).await
}

/// The session id of a request that may be answered here, from its method and headers alone.
fn candidate(direct: &Direct, request: &Request) -> Option<String> {
    let headers = request.headers();
    if request.method() != Method::POST
        || request.uri().path() != "/mcp"
        || headers.contains_key(header::ORIGIN)
    {
        return None;
    }
    let accepts = header_str(headers, header::ACCEPT.as_str()).unwrap_or_default();
    let accepts = accepts.to_ascii_lowercase();
    if !accepts.contains("application/json") || !accepts.contains("text/event-stream") {
        return None;
    }
    let json = header_str(headers, header::CONTENT_TYPE.as_str())
        .and_then(|t| t.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"));
    let host_allowed = header_str(headers, header::HOST.as_str())
        .map(host_name)
        .is_some_and(|h| direct.hosts.iter().any(|a| a.eq_ignore_ascii_case(h)));
    let version_plain =
        header_str(headers, VERSION_HEADER).is_none_or(|v| PLAIN_VERSIONS.contains(&v));
    (json && host_allowed && version_plain)
        .then(|| header_str(headers, SESSION_HEADER).map(str::to_owned))
        .flatten()
}

/// The host name of a `Host` header: without its port, an IPv6 literal without its brackets.
fn host_name(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    host.rsplit_once(':').map_or(host, |(name, _)| name)
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// What a request body is to this layer.
enum Inspected {
    /// A `tools/call` to answer here.
    Call(Box<(RequestId, ClientRequest)>),
    /// `notifications/cancelled` for a request id.
    Cancel(RequestId),
    Other,
}

fn inspect(bytes: &Bytes, registered: &Registered) -> Inspected {
    // Most requests of a session are neither: they are not parsed here at all.
    if !mentions(bytes, b"tools/call") && !mentions(bytes, b"notifications/cancelled") {
        return Inspected::Other;
    }
    let Ok(mut value) = serde_json::from_slice::<Value>(bytes) else {
        return Inspected::Other;
    };
    match value.get("method").and_then(Value::as_str) {
        Some("tools/call") => call(&mut value, registered),
        Some("notifications/cancelled") => cancelled(value),
        _ => Inspected::Other,
    }
}

/// A `tools/call` this layer answers, built from its two parts; anything else is left to rmcp.
///
/// rmcp's own parse of a message goes through its untagged message enum, which buffers the
/// whole request once more before trying each shape; a call's shape is known here, so its id
/// and parameters are read as rmcp's types directly (docs/performance.md, "A tool call
/// answered where it is read"). What it accepts is what rmcp's parse accepts for a call with
/// no `_meta`: rmcp's `Request` puts only `_meta` in its extensions.
fn call(value: &mut Value, registered: &Registered) -> Inspected {
    let plain = value.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
        && value["params"].get("_meta").is_none()
        && value["params"].get("task").is_none()
        && !client_elicits(&registered.peer);
    let Some(message) = value.as_object_mut().filter(|_| plain) else {
        return Inspected::Other;
    };
    let (Some(id), Some(params)) = (message.remove("id"), message.remove("params")) else {
        return Inspected::Other;
    };
    let (Ok(id), Ok(params)) = (
        serde_json::from_value::<RequestId>(id),
        serde_json::from_value::<CallToolRequestParams>(params),
    ) else {
        return Inspected::Other;
    };
    Inspected::Call(Box::new((
        id,
        ClientRequest::CallToolRequest(CallToolRequest::new(params)),
    )))
}

/// The request a `notifications/cancelled` names, if it is one.
fn cancelled(value: Value) -> Inspected {
    match serde_json::from_value::<ClientJsonRpcMessage>(value) {
        Ok(JsonRpcMessage::Notification(notification)) => match notification.notification {
            ClientNotification::CancelledNotification(cancelled) => cancelled
                .params
                .request_id
                .map_or(Inspected::Other, Inspected::Cancel),
            _ => Inspected::Other,
        },
        _ => Inspected::Other,
    }
}

/// Whether `needle` occurs in `haystack` (a quick look before a parse).
fn mentions(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn client_elicits(peer: &Peer<RoleServer>) -> bool {
    peer.peer_info()
        .is_none_or(|info| info.capabilities.elicitation.is_some())
}

impl Registered {
    fn lock_calls(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, CancellationToken>> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Forgets a running call when it ends or is dropped (the client hung up).
struct Running<'a> {
    registered: &'a Registered,
    id: RequestId,
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.registered.lock_calls().remove(&self.id);
    }
}

/// Runs the call through rmcp's dispatch for the session's handler and writes its answer.
async fn answer(
    registered: &Registered,
    call: Box<(RequestId, ClientRequest)>,
    parts: axum::http::request::Parts,
) -> Response {
    let (id, request) = *call;
    let mut context = RequestContext::new(id.clone(), registered.peer.clone());
    context.extensions.insert(parts);
    let cancelled = context.ct.clone();
    registered
        .lock_calls()
        .insert(id.clone(), cancelled.clone());
    let _running = Running {
        registered,
        id: id.clone(),
    };
    let outcome = (registered.handler)(request, context).await;
    if cancelled.is_cancelled() {
        // A cancelled request gets no answer (as rmcp does it: its event stream ends empty).
        return Response::builder()
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, "text/event-stream")
            .body(Body::empty())
            .unwrap_or_else(|_| internal_error());
    }
    let message: ServerJsonRpcMessage = match outcome {
        Ok(result) => JsonRpcMessage::response(result, id),
        Err(error) => JsonRpcMessage::error(error, Some(id)),
    };
    match serde_json::to_vec(&message) {
        Ok(body) => Response::builder()
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body))
            .unwrap_or_else(|_| internal_error()),
        Err(e) => {
            tracing::error!("failed to serialise a tool call's answer: {e}");
            internal_error()
        }
    }
}

fn internal_error() -> Response {
    let mut response = Response::new(Body::from("failed to write the answer"));
    *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_calls_and_cancellations_are_looked_at() {
        assert!(mentions(br#"{"method":"tools/call"}"#, b"tools/call"));
        assert!(!mentions(br#"{"method":"tools/list"}"#, b"tools/call"));
        assert!(!mentions(b"", b"tools/call"));
    }

    #[test]
    fn host_names_lose_their_port_and_brackets() {
        assert_eq!(host_name("127.0.0.1:8080"), "127.0.0.1");
        assert_eq!(host_name("localhost"), "localhost");
        assert_eq!(host_name("[::1]:9000"), "::1");
        assert_eq!(host_name("[::1]"), "::1");
    }
}

//! The MCP Tasks of protocol 2025-11-25 on the wire, below the MCP crate (rmcp). rmcp speaks
//! the Tasks extension (SEP-2663) only: it drops the `task` parameter of a `tools/call`, has no
//! `capabilities.tasks` and no tool `execution.taskSupport`, and answers `tasks/get` and
//! `tasks/cancel` in SEP-2663's shapes (or refuses them). The official SDKs' task APIs (the
//! TypeScript `@modelcontextprotocol/ext-tasks` client on an initialized session, the Python
//! SDK's `session.experimental`) speak 2025-11-25, so for a session that negotiated 2025-11-25
//! this module rewrites the JSON messages between the client and rmcp:
//!
//! - from the client: a `tools/call` with `params.task`, `tasks/get` and `tasks/cancel` become
//!   the server's own methods [`CALL_AS_TASK`], [`GET`] and [`CANCEL`], which reach the MCP
//!   handler as custom requests and answer in 2025-11-25's shapes (see `mcp::tasks_2025`);
//! - to the client: the `initialize` result that settles on 2025-11-25 gains
//!   `capabilities.tasks` (list, cancel, task-augmented `tools/call`), and a `tools/list`
//!   result marks the `task` tool `execution.taskSupport: "optional"`.
//!
//! Stdio sessions pass through it line by line (`line_transport`), HTTP requests through
//! [`http`]; a session of any other protocol version is left as it is.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::header;
use axum::middleware::Next;
use axum::response::Response;
use futures::StreamExt as _;
use serde_json::{Value, json};

/// The protocol version whose Tasks this module carries.
pub(crate) const PROTOCOL: &str = "2025-11-25";
/// A task-augmented `tools/call` as the handler receives it.
pub(crate) const CALL_AS_TASK: &str = "guild/tasks-2025-11-25/tools/call";
/// `tasks/get` of a 2025-11-25 session as the handler receives it.
pub(crate) const GET: &str = "guild/tasks-2025-11-25/tasks/get";
/// `tasks/cancel` of a 2025-11-25 session as the handler receives it.
pub(crate) const CANCEL: &str = "guild/tasks-2025-11-25/tasks/cancel";

/// The one tool that runs as a task.
const TASK_TOOL: &str = "task";

/// Rewrites one client message (or a batch) of a 2025-11-25 session; true when it changed.
pub(crate) fn inbound(message: &mut Value) -> bool {
    match message {
        // Every item is looked at (no short circuit).
        Value::Array(items) => items.iter_mut().map(inbound_one).filter(|c| *c).count() > 0,
        one => inbound_one(one),
    }
}

fn inbound_one(message: &mut Value) -> bool {
    let Some(method) = message.get("method").and_then(Value::as_str) else {
        return false;
    };
    let internal = match method {
        "tools/call" if message["params"].get("task").is_some() => CALL_AS_TASK,
        "tasks/get" => GET,
        "tasks/cancel" => CANCEL,
        _ => return false,
    };
    message["method"] = Value::String(internal.to_owned());
    true
}

/// What [`outbound`] did to a server message.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Outbound {
    /// The message changed.
    pub(crate) changed: bool,
    /// It was the `initialize` result that settled the session on 2025-11-25.
    pub(crate) settled: bool,
}

/// Rewrites one server message: an `initialize` result of protocol 2025-11-25 gains
/// `capabilities.tasks`; in a 2025-11-25 session (`legacy`), a `tools/list` result marks the
/// `task` tool as one that may run as a task.
pub(crate) fn outbound(message: &mut Value, legacy: bool) -> Outbound {
    let Some(result) = message.get_mut("result").and_then(Value::as_object_mut) else {
        return Outbound::default();
    };
    let version = result
        .get("protocolVersion")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if result.contains_key("serverInfo")
        && let Some(version) = version
        && let Some(Value::Object(capabilities)) = result.get_mut("capabilities")
    {
        if version != PROTOCOL {
            return Outbound::default();
        }
        capabilities.insert(
            "tasks".into(),
            json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
        );
        return Outbound {
            changed: true,
            settled: true,
        };
    }
    if !legacy {
        return Outbound::default();
    }
    let Some(Value::Array(tools)) = result.get_mut("tools") else {
        return Outbound::default();
    };
    let mut changed = false;
    for tool in tools {
        if tool.get("name").and_then(Value::as_str) == Some(TASK_TOOL)
            && let Value::Object(tool) = tool
        {
            tool.insert("execution".into(), json!({"taskSupport": "optional"}));
            changed = true;
        }
    }
    Outbound {
        changed,
        settled: false,
    }
}

/// A line the server writes might be one [`outbound`] rewrites (checked before parsing it;
/// rmcp writes compact JSON).
fn may_rewrite(line: &[u8]) -> bool {
    let has = |needle: &[u8]| line.windows(needle.len()).any(|w| w == needle);
    has(b"\"protocolVersion\"") || has(b"\"tools\":[")
}

/// One stdio session's side of the rewriting: whether it settled on 2025-11-25.
#[derive(Clone, Default)]
pub(crate) struct StdioSession {
    legacy: Arc<AtomicBool>,
}

impl StdioSession {
    /// A client line (already parsed): `Some` with the bytes to pass on when it changed.
    pub(crate) fn inbound(&self, message: &mut Value) -> Option<Vec<u8>> {
        if !self.legacy.load(Ordering::Acquire) || !inbound(message) {
            return None;
        }
        serde_json::to_vec(message).ok()
    }

    /// A server line: the rewritten line when it changed.
    pub(crate) fn outbound(&self, line: &[u8]) -> Option<Vec<u8>> {
        if !may_rewrite(line) {
            return None;
        }
        let mut message: Value = serde_json::from_slice(line).ok()?;
        let done = outbound(&mut message, self.legacy.load(Ordering::Acquire));
        if done.settled {
            self.legacy.store(true, Ordering::Release);
        }
        done.changed
            .then(|| serde_json::to_vec(&message).ok())
            .flatten()
    }
}

/// The header a streamable HTTP client sends with the session's protocol version.
const VERSION_HEADER: &str = "mcp-protocol-version";

/// The HTTP side: a request of a 2025-11-25 session (by its `MCP-Protocol-Version` header) is
/// rewritten; the answer to an `initialize`, and in such a session to a `tools/list`, too. The
/// body was read whole, within `[serve] max_body_kb`, by the bounds layer outside this one.
pub(crate) async fn http(request: Request, next: Next) -> Response {
    let legacy = request
        .headers()
        .get(VERSION_HEADER)
        .is_some_and(|v| v.as_bytes() == PROTOCOL.as_bytes());
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return next.run(Request::from_parts(parts, Body::empty())).await;
    };
    let mut rewrite_answer = false;
    let bytes = match serde_json::from_slice::<Value>(&bytes) {
        Ok(mut message) => {
            let method = message.get("method").and_then(Value::as_str);
            rewrite_answer =
                method == Some("initialize") || (legacy && method == Some("tools/list"));
            match legacy && inbound(&mut message) {
                true => serde_json::to_vec(&message).map_or(bytes, Bytes::from),
                false => bytes,
            }
        }
        Err(_) => bytes,
    };
    let mut parts = parts;
    parts.headers.remove(header::CONTENT_LENGTH);
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    if !rewrite_answer {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    let is_stream = parts
        .headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    if !is_stream {
        // One JSON answer: rewritten whole.
        let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
            return Response::from_parts(parts, Body::empty());
        };
        let rewritten = serde_json::from_slice::<Value>(&bytes)
            .ok()
            .and_then(|mut message| {
                outbound(&mut message, legacy)
                    .changed
                    .then(|| serde_json::to_vec(&message).ok())
                    .flatten()
            });
        return Response::from_parts(parts, Body::from(rewritten.map_or(bytes, Bytes::from)));
    }
    let mut events = Events::default();
    let stream = body
        .into_data_stream()
        .map(move |chunk| chunk.map(|bytes| Bytes::from(events.feed(&bytes, legacy))));
    Response::from_parts(parts, Body::from_stream(stream))
}

/// Server-sent events (or one JSON body) passing through, rewritten a whole event at a time.
#[derive(Default)]
struct Events {
    pending: Vec<u8>,
}

impl Events {
    /// Takes a chunk; gives back the complete events it ended, rewritten.
    fn feed(&mut self, chunk: &[u8], legacy: bool) -> Vec<u8> {
        self.pending.extend_from_slice(chunk);
        let mut out = Vec::new();
        while let Some(end) = find(&self.pending, b"\n\n") {
            let event: Vec<u8> = self.pending.drain(..end + 2).collect();
            out.extend(rewrite_event(&event, legacy));
        }
        out
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// One event (`field: value` lines and the blank line that ends it) with its `data` rewritten.
fn rewrite_event(event: &[u8], legacy: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(event.len());
    for line in event.split_inclusive(|b| *b == b'\n') {
        let data = line
            .strip_prefix(b"data: ")
            .or_else(|| line.strip_prefix(b"data:"));
        let rewritten = data.and_then(|data| {
            let mut message: Value = serde_json::from_slice(data.trim_ascii_end()).ok()?;
            outbound(&mut message, legacy).changed.then(|| {
                let mut line = b"data: ".to_vec();
                line.extend(serde_json::to_vec(&message).unwrap_or_default());
                line.push(b'\n');
                line
            })
        });
        match rewritten {
            Some(line) => out.extend(line),
            None => out.extend_from_slice(line),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn initialize_result(version: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": 0, "result": {
            "protocolVersion": version, "serverInfo": {"name": "guild", "version": "1"},
            "capabilities": {"tools": {}}}})
    }

    #[test]
    fn only_a_2025_11_25_initialize_result_gains_the_tasks_capability() {
        let mut settled = initialize_result(PROTOCOL);
        assert!(outbound(&mut settled, false).settled);
        assert_eq!(
            settled["result"]["capabilities"]["tasks"]["requests"]["tools"]["call"],
            json!({})
        );
        let mut older = initialize_result("2025-06-18");
        assert_eq!(outbound(&mut older, false), Outbound::default());
        assert!(older["result"]["capabilities"].get("tasks").is_none());
    }

    #[test]
    fn the_task_tool_is_marked_only_in_a_2025_11_25_session() {
        let list = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
            {"name": "task", "inputSchema": {"type": "object"}},
            {"name": "check_task", "inputSchema": {"type": "object"}}]}});
        let mut legacy = list.clone();
        assert!(outbound(&mut legacy, true).changed);
        assert_eq!(
            legacy["result"]["tools"][0]["execution"]["taskSupport"],
            "optional"
        );
        assert!(legacy["result"]["tools"][1].get("execution").is_none());
        let mut other = list.clone();
        assert!(!outbound(&mut other, false).changed);
        assert_eq!(other, list);
    }

    #[test]
    fn task_requests_become_the_servers_own_methods() {
        let mut call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "task", "arguments": {}, "task": {"ttl": 1000}}});
        assert!(inbound(&mut call));
        assert_eq!(call["method"], CALL_AS_TASK);
        let mut plain = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "task", "arguments": {}}});
        assert!(!inbound(&mut plain));
        assert_eq!(plain["method"], "tools/call");
        let mut batch = json!([
            {"jsonrpc": "2.0", "id": 4, "method": "tasks/get", "params": {"taskId": "a"}},
            {"jsonrpc": "2.0", "id": 5, "method": "tasks/cancel", "params": {"taskId": "a"}},
            {"jsonrpc": "2.0", "id": 6, "method": "tasks/list"}]);
        assert!(inbound(&mut batch));
        assert_eq!(batch[0]["method"], GET);
        assert_eq!(batch[1]["method"], CANCEL);
        assert_eq!(batch[2]["method"], "tasks/list");
    }

    #[test]
    fn a_stdio_session_rewrites_requests_only_once_it_settled_on_2025_11_25() {
        let session = StdioSession::default();
        let mut get = json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get",
            "params": {"taskId": "a"}});
        assert!(session.inbound(&mut get.clone()).is_none());
        let init = serde_json::to_vec(&initialize_result(PROTOCOL)).expect("json");
        assert!(session.outbound(&init).is_some());
        let line = session.inbound(&mut get).expect("rewritten");
        assert!(String::from_utf8_lossy(&line).contains(GET));
    }

    #[test]
    fn events_are_rewritten_whole_across_chunks() {
        let list = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "task"}]}});
        let stream = format!("id: 0\ndata: {list}\n\n");
        let (a, b) = stream.as_bytes().split_at(20);
        let mut events = Events::default();
        let mut out = events.feed(a, true);
        assert!(out.is_empty(), "an event is held until it ends");
        out.extend(events.feed(b, true));
        let text = String::from_utf8(out).expect("utf-8");
        assert!(text.starts_with("id: 0\ndata: "), "{text}");
        assert!(text.contains("\"taskSupport\":\"optional\""), "{text}");
        assert!(text.ends_with("\n\n"), "{text}");
    }
}

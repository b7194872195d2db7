//! A scripted OpenAI-compatible endpoint on 127.0.0.1: `POST /v1/chat/completions` answers
//! with the next [`Step`] of its script (the last one repeats), and every request it got is
//! recorded (headers and JSON body), so a test can assert what the host sent. Used by the
//! tests and, as a local model that needs no network, by demos.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Step {
    /// A completion with this text.
    Text(String),
    /// A completion asking for tool calls: `(id, name, arguments)`.
    ToolCalls(Vec<(String, String, String)>),
    /// An error status with an OpenAI-shaped error message and, if set, `Retry-After` seconds.
    Status {
        /// The status.
        status: u16,
        /// The message.
        message: String,
        /// `Retry-After`, seconds.
        retry_after: Option<u32>,
    },
    /// Status 400 whose message echoes the request's `Authorization` header (a provider that
    /// quotes the key it refused).
    EchoAuthorization,
    /// A 200 whose body is this text (malformed JSON, say).
    Raw(String),
    /// Waits, then answers with the inner step.
    Slow(Duration, Box<Step>),
}

/// One request the stand-in got.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The `Authorization` header, if any.
    pub authorization: Option<String>,
    /// The JSON body (`Null` when it was not JSON).
    pub body: Value,
}

/// Tokens every scripted completion reports: prompt and completion.
pub const USAGE: (u32, u32) = (11, 7);

struct Shared {
    script: Mutex<VecDeque<Step>>,
    requests: Mutex<Vec<Recorded>>,
}

/// A running stand-in; it stops when dropped.
pub struct StandIn {
    addr: SocketAddr,
    shared: Arc<Shared>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl StandIn {
    /// Serves `script` on a free port of 127.0.0.1 (an empty script answers `"ok"`).
    pub async fn start(script: Vec<Step>) -> std::io::Result<Self> {
        let shared = Arc::new(Shared {
            script: Mutex::new(script.into()),
            requests: Mutex::new(Vec::new()),
        });
        let app = Router::new()
            .route("/v1/chat/completions", post(handle))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(async {
                let _ = stopped.await;
            });
            if let Err(e) = serve.await {
                tracing::warn!("model stand-in stopped: {e}");
            }
        });
        Ok(Self {
            addr,
            shared,
            _stop: stop,
        })
    }

    /// `http://127.0.0.1:PORT/v1`, the `base_url` to configure.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Replaces the script: the next request gets the first of `steps`.
    pub fn set(&self, steps: impl IntoIterator<Item = Step>) {
        let mut script = self.shared.script.lock().unwrap_or_else(|p| p.into_inner());
        script.clear();
        script.extend(steps);
    }

    /// Appends steps to the script.
    pub fn push(&self, steps: impl IntoIterator<Item = Step>) {
        self.shared
            .script
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(steps);
    }
}

fn next_step(shared: &Shared) -> Step {
    let mut script = shared.script.lock().unwrap_or_else(|p| p.into_inner());
    match script.len() {
        0 => Step::Text("ok".to_owned()),
        1 => script[0].clone(),
        _ => script
            .pop_front()
            .unwrap_or_else(|| Step::Text("ok".to_owned())),
    }
}

fn completion(message: Value, finish: &str) -> Response {
    let (prompt, completion) = USAGE;
    axum::Json(json!({
        "id": "chatcmpl-standin",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                  "total_tokens": prompt + completion},
    }))
    .into_response()
}

async fn handle(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let authorization = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    shared
        .requests
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(Recorded {
            authorization: authorization.clone(),
            body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        });
    let mut step = next_step(&shared);
    while let Step::Slow(delay, inner) = step {
        tokio::time::sleep(delay).await;
        step = *inner;
    }
    answer(step, authorization)
}

fn answer(step: Step, authorization: Option<String>) -> Response {
    let error = |status: u16, message: String| {
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (
            status,
            axum::Json(json!({"error": {"message": message, "type": "standin"}})),
        )
    };
    match step {
        Step::Text(text) => completion(json!({"role": "assistant", "content": text}), "stop"),
        Step::ToolCalls(calls) => {
            let calls: Vec<Value> = calls
                .into_iter()
                .map(|(id, name, args)| {
                    json!({"id": id, "type": "function",
                           "function": {"name": name, "arguments": args}})
                })
                .collect();
            completion(
                json!({"role": "assistant", "content": null, "tool_calls": calls}),
                "tool_calls",
            )
        }
        Step::Status {
            status,
            message,
            retry_after,
        } => {
            let mut r = error(status, message).into_response();
            if let Some(secs) = retry_after
                && let Ok(v) = secs.to_string().parse()
            {
                r.headers_mut().insert("retry-after", v);
            }
            r
        }
        Step::EchoAuthorization => error(
            400,
            format!(
                "invalid api key: {}",
                authorization.as_deref().unwrap_or("(none)")
            ),
        )
        .into_response(),
        Step::Raw(text) => (StatusCode::OK, text).into_response(),
        Step::Slow(_, inner) => answer(*inner, authorization),
    }
}

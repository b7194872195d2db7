//! How `guild serve --http` bounds every client (`[serve]` in guild.toml): at most
//! `max_sessions` MCP sessions at once, each closed after `session_idle_s` without a request
//! or an open answer stream, request bodies of at most `max_body_kb` and JSON nested at most
//! `max_json_depth` deep. The MCP transport (rmcp) keeps a session for as long as nobody closes
//! it; this layer sits in front of it, sees every request and owns the expiry.
//!
//! A refusal is a plain HTTP status with a one-line text naming the setting: 413 for a body,
//! 400 for depth, 503 (with `Retry-After`) for sessions.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt as _;
use guild_host::serve::{ServeSettings, json_depth_exceeds};
use rmcp::transport::streamable_http_server::session::SessionManager as _;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

/// The MCP session header (HTTP header names are case-insensitive).
const SESSION_HEADER: &str = "mcp-session-id";

/// The limits, the transport's sessions and what this layer knows of each.
pub(crate) struct Bounds {
    settings: ServeSettings,
    manager: Arc<LocalSessionManager>,
    /// Per live session: when it was last used and how many answers are still streaming.
    activity: Mutex<HashMap<Arc<str>, Activity>>,
    /// Session creation, one at a time: the count check and the creation are one step.
    creating: tokio::sync::Mutex<()>,
}

#[derive(Clone, Copy)]
struct Activity {
    last: Instant,
    open: usize,
}

impl Bounds {
    pub(crate) fn new(settings: ServeSettings, manager: Arc<LocalSessionManager>) -> Arc<Self> {
        Arc::new(Self {
            settings,
            manager,
            activity: Mutex::new(HashMap::new()),
            creating: tokio::sync::Mutex::new(()),
        })
    }

    fn idle_after(&self) -> Duration {
        Duration::from_secs(self.settings.session_idle_s)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Arc<str>, Activity>> {
        // A poisoned map only means a panic mid-update; its entries are still whole.
        self.activity.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Marks `id` used now and one more answer open; `None` for a session the transport does
    /// not hold (the transport answers those itself).
    async fn begin(self: &Arc<Self>, id: &str) -> Option<OpenAnswer> {
        let id: Arc<str> = self
            .manager
            .sessions
            .read()
            .await
            .get_key_value(id)?
            .0
            .clone();
        let mut map = self.lock();
        let entry = map.entry(id.clone()).or_insert(Activity {
            last: Instant::now(),
            open: 0,
        });
        entry.last = Instant::now();
        entry.open += 1;
        Some(OpenAnswer {
            bounds: self.clone(),
            id,
        })
    }

    /// Closes every session idle for longer than `session_idle_s` (no request, no answer
    /// streaming), and forgets sessions the transport no longer holds. Returns how many it
    /// closed.
    pub(crate) async fn expire_idle(&self) -> usize {
        let live: Vec<Arc<str>> = self.manager.sessions.read().await.keys().cloned().collect();
        let now = Instant::now();
        let idle: Vec<Arc<str>> = {
            let mut map = self.lock();
            map.retain(|id, _| live.contains(id));
            live.iter()
                .filter(|id| {
                    // A session never seen here was created moments ago by this layer's
                    // caller: it starts its idle time now.
                    let a = map
                        .entry((*id).clone())
                        .or_insert(Activity { last: now, open: 0 });
                    a.open == 0 && now.duration_since(a.last) >= self.idle_after()
                })
                .cloned()
                .collect()
        };
        for id in &idle {
            if let Err(e) = self.manager.close_session(id).await {
                tracing::debug!(session = %id, "failed to close an idle session: {e}");
            }
            self.lock().remove(id);
        }
        if !idle.is_empty() {
            tracing::info!(
                closed = idle.len(),
                idle_s = self.settings.session_idle_s,
                "closed idle MCP sessions"
            );
        }
        idle.len()
    }

    /// Expires idle sessions every so often (a quarter of the idle time, at most 30 s), for
    /// as long as the server runs.
    pub(crate) fn spawn_expiry(self: &Arc<Self>) {
        let period =
            (self.idle_after() / 4).clamp(Duration::from_millis(250), Duration::from_secs(30));
        let bounds = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(period);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(bounds) = bounds.upgrade() else {
                    return;
                };
                bounds.expire_idle().await;
            }
        });
    }
}

/// One answer still streaming to a session: the session is not idle until it is dropped.
struct OpenAnswer {
    bounds: Arc<Bounds>,
    id: Arc<str>,
}

impl Drop for OpenAnswer {
    fn drop(&mut self) {
        if let Some(a) = self.bounds.lock().get_mut(&self.id) {
            a.open = a.open.saturating_sub(1);
            a.last = Instant::now();
        }
    }
}

/// A refusal the client reads: the status and one line naming the setting.
fn refuse(status: StatusCode, message: String) -> Response {
    tracing::info!(status = status.as_u16(), "request refused: {message}");
    (status, format!("{message}\n")).into_response()
}

/// The middleware: bounds the body and its depth, caps sessions and keeps their activity.
pub(crate) async fn bound(
    State(bounds): State<Arc<Bounds>>,
    request: Request,
    next: Next,
) -> Response {
    let settings = bounds.settings;
    let max = settings.max_body_bytes();
    let (parts, body) = request.into_parts();
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let too_big = || {
        refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the request body is over {} KiB (`[serve] max_body_kb` in guild.toml)",
                settings.max_body_kb
            ),
        )
    };
    if declared.is_some_and(|n| n > max as u64) {
        return too_big();
    }
    // Read whole, never past the limit, whatever the body claims or however it is chunked.
    let Ok(bytes) = axum::body::to_bytes(body, max).await else {
        return too_big();
    };
    if json_depth_exceeds(&bytes, settings.max_json_depth) {
        return refuse(
            StatusCode::BAD_REQUEST,
            format!(
                "the request nests JSON deeper than {} levels (`[serve] max_json_depth` in guild.toml)",
                settings.max_json_depth
            ),
        );
    }
    let session = parts
        .headers
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let request = Request::from_parts(parts, Body::from(bytes));
    let creates = session.is_none() && request.method() == Method::POST;
    let response = match &session {
        Some(id) => {
            let open = bounds.begin(id).await;
            let response = next.run(request).await;
            return keep_open(response, open);
        }
        None if creates => {
            let _one = bounds.creating.lock().await;
            if bounds.manager.sessions.read().await.len() >= settings.max_sessions {
                bounds.expire_idle().await;
            }
            if bounds.manager.sessions.read().await.len() >= settings.max_sessions {
                let mut refused = refuse(
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!(
                        "too many MCP sessions: {} are open (`[serve] max_sessions` in guild.toml); \
                         close one (DELETE with its Mcp-Session-Id) or retry once an idle one \
                         expired (`[serve] session_idle_s` = {})",
                        settings.max_sessions, settings.session_idle_s
                    ),
                );
                refused
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("30"));
                return refused;
            }
            next.run(request).await
        }
        None => next.run(request).await,
    };
    // A session created just now starts its idle time with its first answer.
    let created = response
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    match created {
        Some(id) => {
            let open = bounds.begin(&id).await;
            keep_open(response, open)
        }
        None => response,
    }
}

/// The response, whose session stays active until its body (an SSE stream, maybe long) ends.
fn keep_open(response: Response, open: Option<OpenAnswer>) -> Response {
    let Some(open) = open else {
        return response;
    };
    let (parts, body) = response.into_parts();
    let stream = body.into_data_stream().map(move |chunk| {
        let _held = &open;
        chunk
    });
    Response::from_parts(parts, Body::from_stream(stream))
}

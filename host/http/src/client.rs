//! The guarded client: validates, resolves, pins, sends, follows redirects by hand and caps the
//! response.
//!
//! Every hop (the first request and each redirect) goes through the same steps from scratch:
//! URL shape, requested ∩ granted, DNS once, every address checked, a client pinned to those
//! addresses, headers rebuilt with the secrets that apply to *this* hop's origin. A hop to
//! another origin also loses the guest's credentials (`Authorization`, cookies, headers named
//! like a secret's) for the rest of the exchange. Before the first hop, the plugin's request
//! budget is spent and a slot among its requests in flight taken; the pinned client comes from
//! a bounded pool, so one origin's requests share connections.
//!
//! A hop that carries a secret asks for the body whole and unencoded (no guest `Range` or
//! `Accept-Encoding`), and an encoded answer to it is refused: the runtime redacts an echoed
//! secret from what it hands the guest ([`crate::redact`]), which it can only do in a body it
//! can read.

use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use reqwest::header::LOCATION;
use reqwest::{Method, StatusCode};
use tracing::Instrument;
use url::Url;

use super::budget::Budgets;
use super::error::HttpError;
use super::headers;
use super::hostname;
use super::pin;
use super::policy::EgressPolicy;
use super::pool::Pool;
use super::reflection;

/// Caps on one outbound exchange.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpLimits {
    /// Wall-clock cap on the whole exchange: DNS, connects, every redirect hop and the body.
    pub timeout: Duration,
    /// Largest request body accepted from the guest, in bytes.
    pub max_request_body: usize,
    /// Largest response body returned to the guest, in bytes.
    pub max_response_body: usize,
    /// Redirects followed before giving up (0 returns the redirect response itself).
    pub max_redirects: u32,
    /// Most headers in a request (as the guest lists them, dropped ones included) or in a
    /// response.
    pub max_headers: usize,
    /// Largest single header value, in bytes, in a request or a response.
    pub max_header_value: usize,
    /// Largest sum of header name and value lengths, in bytes, in a request or a response.
    pub max_header_bytes: usize,
    /// Requests one plugin may make at once before the rate applies (0 refuses every request).
    pub request_burst: u32,
    /// One more request is allowed per interval, up to the burst ([`Duration::ZERO`]: no rate
    /// limit).
    pub request_interval: Duration,
    /// Requests of one plugin in flight at once (all its instances together); one more waits
    /// for a slot until its timeout, then is refused (0 refuses every request that way).
    pub max_concurrent_requests: usize,
    /// Pinned clients kept for connection reuse, over all plugins (0: a new connection for
    /// every request).
    pub max_pooled_clients: usize,
}

impl Default for HttpLimits {
    /// 30 s in total, 1 MiB request body, 8 MiB response body, 5 redirects; at most 64
    /// headers, 8 KiB per header value and 32 KiB of headers in all, each way; per plugin a
    /// burst of 100 requests then 50 per second, 16 in flight; 64 pooled clients.
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(30),
            max_request_body: 1 << 20,
            max_response_body: 8 << 20,
            max_redirects: 5,
            max_headers: 64,
            max_header_value: 8 << 10,
            max_header_bytes: 32 << 10,
            request_burst: 100,
            request_interval: Duration::from_millis(20),
            max_concurrent_requests: 16,
            max_pooled_clients: 64,
        }
    }
}

/// A request as a plugin makes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboundRequest {
    /// `GET`, `POST`, `PUT`, `PATCH`, `DELETE` or `HEAD`.
    pub method: String,
    /// Absolute `http` or `https` URL without userinfo.
    pub url: String,
    /// Header name/value pairs; connection-level headers are dropped.
    pub headers: Vec<(String, String)>,
    /// Request body (empty for none).
    pub body: Bytes,
}

impl OutboundRequest {
    /// A request with no headers and no body.
    pub fn new(method: impl Into<String>, url: impl Into<String>) -> Self {
        Self {
            method: method.into(),
            url: url.into(),
            headers: Vec::new(),
            body: Bytes::new(),
        }
    }

    /// A `GET` for `url`.
    pub fn get(url: impl Into<String>) -> Self {
        Self::new("GET", url)
    }

    /// Adds a header.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sets the body.
    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = body.into();
        self
    }
}

/// The final response handed back to the plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboundResponse {
    /// HTTP status code.
    pub status: u16,
    /// Response headers (values decoded lossily as UTF-8).
    pub headers: Vec<(String, String)>,
    /// The whole body, at most [`HttpLimits::max_response_body`] bytes.
    pub body: Bytes,
    /// The URL that produced this response, after redirects.
    pub url: Url,
}

/// The one path by which plugin HTTP requests leave the host.
///
/// Clones share the per-plugin budgets ([`budget`](super::budget)) and the pool of pinned
/// clients ([`pool`](super::pool)).
#[derive(Debug, Clone, Default)]
pub struct GuardedClient {
    limits: HttpLimits,
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    budgets: Budgets,
    pool: Pool,
}

impl GuardedClient {
    /// A client enforcing `limits`.
    pub fn new(limits: HttpLimits) -> Self {
        Self {
            limits,
            shared: Arc::default(),
        }
    }

    /// This client with another timeout, sharing budgets and pool (a test needs two requests
    /// of one plugin with different patience).
    #[cfg(test)]
    pub(crate) fn with_timeout(&self, timeout: Duration) -> Self {
        Self {
            limits: HttpLimits {
                timeout,
                ..self.limits.clone()
            },
            shared: self.shared.clone(),
        }
    }

    /// The limits this client enforces.
    pub fn limits(&self) -> &HttpLimits {
        &self.limits
    }

    /// Sends `req` on behalf of `policy.plugin`, if and only if `policy` allows every hop.
    pub async fn send(
        &self,
        policy: &EgressPolicy,
        req: OutboundRequest,
    ) -> Result<OutboundResponse, HttpError> {
        let span = tracing::info_span!(
            "http.request",
            plugin = %policy.plugin,
            capability = "http",
            method = %req.method,
        );
        async {
            let method = parse_method(&req.method)?;
            if req.body.len() > self.limits.max_request_body {
                return Err(HttpError::TooLarge {
                    limit: self.limits.max_request_body,
                });
            }
            let url = parse_url(&req.url)?;
            // Reject oversized and malformed headers up front, before any DNS or policy work.
            let guest_headers = req.headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes()));
            headers::check_caps(req.headers.len(), guest_headers, &self.limits, "request")?;
            headers::build(&req.headers, std::iter::empty())?;
            let deadline = tokio::time::Instant::now() + self.limits.timeout;
            let budget = self.shared.budgets.of(&policy.plugin, &self.limits);
            let limited = |e: HttpError| {
                crate::decision::trace_refusal(&policy.plugin, "http", &req.url, &e.to_string());
                e
            };
            budget
                .spend(&policy.plugin, &self.limits)
                .map_err(limited)?;
            let slot = budget.slot(&policy.plugin, &self.limits, deadline).await;
            let _slot = slot.map_err(limited)?;
            let exchange = self.exchange(policy, method, url, req.headers, req.body);
            match tokio::time::timeout_at(deadline, exchange).await {
                Ok(result) => result,
                Err(_) => Err(HttpError::Timeout),
            }
        }
        .instrument(span)
        .await
    }

    async fn exchange(
        &self,
        policy: &EgressPolicy,
        mut method: Method,
        mut url: Url,
        mut guest_headers: Vec<(String, String)>,
        mut body: Bytes,
    ) -> Result<OutboundResponse, HttpError> {
        let mut redirects = 0;
        loop {
            let target = url.origin().ascii_serialization();
            let resolved = authorize(policy, &url, &target, &guest_headers, &body).await?;
            let headers = headers::build(&guest_headers, policy.secrets_for(&url))?;
            let client = self
                .shared
                .pool
                .client(&policy.plugin, &resolved, &self.limits)?;
            let mut request = client.request(method.clone(), url.clone()).headers(headers);
            if !body.is_empty() {
                request = request.body(body.clone());
            }
            let response = request.send().await.map_err(|e| transport(&target, &e))?;
            let received = response.headers();
            let pairs = received.iter().map(|(n, v)| (n.as_str(), v.as_bytes()));
            let side = format!("the response from {target}");
            headers::check_caps(received.len(), pairs, &self.limits, &side)?;
            let status = response.status();
            let location = response.headers().get(LOCATION).cloned();
            let Some(location) = location.filter(|_| is_followed_redirect(status)) else {
                tracing::info!(target = %target, status = status.as_u16(), "http response");
                if policy.secrets_for(&url).next().is_some() {
                    check_plain(&target, response.headers())?;
                }
                return self.read(method, url, response).await;
            };
            if redirects >= self.limits.max_redirects {
                return Err(HttpError::Transport(format!(
                    "{target}: more than {} redirects",
                    self.limits.max_redirects
                )));
            }
            redirects += 1;
            let next = location
                .to_str()
                .ok()
                .and_then(|l| url.join(l).ok())
                .ok_or_else(|| {
                    HttpError::InvalidRequest(format!("{target} sent an invalid redirect location"))
                })?;
            let next = check_shape(next)?;
            if next.origin() != url.origin() {
                let secret_headers = policy.secrets.iter().map(|s| s.header());
                guest_headers = headers::without_credentials(&guest_headers, secret_headers);
            }
            url = next;
            let to_get = status == StatusCode::SEE_OTHER
                || (method == Method::POST
                    && matches!(status, StatusCode::MOVED_PERMANENTLY | StatusCode::FOUND));
            if to_get && method != Method::HEAD {
                method = Method::GET;
                body = Bytes::new();
                guest_headers = headers::without_body_headers(&guest_headers);
            }
            tracing::info!(from = %target, status = status.as_u16(), "following redirect");
        }
    }

    async fn read(
        &self,
        method: Method,
        url: Url,
        mut response: reqwest::Response,
    ) -> Result<OutboundResponse, HttpError> {
        let limit = self.limits.max_response_body;
        let too_large = HttpError::TooLarge { limit };
        let declared = response.content_length().unwrap_or(0);
        if method != Method::HEAD && usize::try_from(declared).map_or(true, |n| n > limit) {
            return Err(too_large);
        }
        let target = url.origin().ascii_serialization();
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .map(|(n, v)| {
                let value = String::from_utf8_lossy(v.as_bytes()).into_owned();
                (n.as_str().to_owned(), value)
            })
            .collect();
        let mut body = BytesMut::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| transport(&target, &e))? {
            if body.len() + chunk.len() > limit {
                return Err(too_large);
            }
            body.extend_from_slice(&chunk);
        }
        Ok(OutboundResponse {
            status,
            headers,
            body: body.freeze(),
            url,
        })
    }
}

/// The policy decision for one hop: origin first (no DNS for a refused origin), then no secret
/// carried where it does not belong, then every resolved address. Traced either way.
async fn authorize(
    policy: &EgressPolicy,
    url: &Url,
    target: &str,
    guest_headers: &[(String, String)],
    body: &[u8],
) -> Result<pin::Resolved, HttpError> {
    let deny = |reason: super::DenyReason| {
        crate::decision::trace_refusal(&policy.plugin, "http", target, &reason.to_string());
        HttpError::Denied {
            plugin: policy.plugin.clone(),
            target: target.to_owned(),
            reason,
        }
    };
    policy.check_url(url).map_err(deny)?;
    reflection::check(policy, url, guest_headers, body).map_err(deny)?;
    let resolved = pin::resolve(url).await?;
    for ip in resolved.ips() {
        policy.check_address(url, ip).map_err(deny)?;
    }
    crate::decision::trace_decision(&policy.plugin, "http", target, true);
    Ok(resolved)
}

/// Refuses an answer to a hop that carried a secret when its body is encoded: the host could
/// not search it for an echo of the secret.
fn check_plain(target: &str, headers: &reqwest::header::HeaderMap) -> Result<(), HttpError> {
    let encoded = headers
        .get_all(reqwest::header::CONTENT_ENCODING)
        .iter()
        .flat_map(|v| v.to_str().unwrap_or("?").split(','))
        .map(str::trim)
        .find(|e| !e.is_empty() && !e.eq_ignore_ascii_case("identity"));
    match encoded {
        None => Ok(()),
        Some(encoding) => Err(HttpError::Transport(format!(
            "{target}: the answer to a request carrying a secret is encoded (`{}`), so the host \
             cannot search it for the secret; the server must honour `Accept-Encoding: identity`",
            headers::shorten(encoding)
        ))),
    }
}

fn is_followed_redirect(status: StatusCode) -> bool {
    matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308)
}

fn parse_method(method: &str) -> Result<Method, HttpError> {
    match method {
        "GET" => Ok(Method::GET),
        "POST" => Ok(Method::POST),
        "PUT" => Ok(Method::PUT),
        "PATCH" => Ok(Method::PATCH),
        "DELETE" => Ok(Method::DELETE),
        "HEAD" => Ok(Method::HEAD),
        other => Err(HttpError::InvalidRequest(format!(
            "method `{other}` is not allowed (GET, POST, PUT, PATCH, DELETE, HEAD)"
        ))),
    }
}

fn parse_url(text: &str) -> Result<Url, HttpError> {
    let url = Url::parse(text)
        .map_err(|e| HttpError::InvalidRequest(format!("`{text}` is not an absolute URL: {e}")))?;
    check_shape(url)
}

/// http(s) only, with a host and no userinfo; the fragment is never sent; the host is
/// normalised ([`hostname::normalize`]) before anything is decided on it.
fn check_shape(url: Url) -> Result<Url, HttpError> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(HttpError::InvalidRequest(format!(
            "scheme `{}` is not http or https",
            url.scheme()
        )));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(HttpError::InvalidRequest(
            "userinfo (`user@`) is not allowed in a URL".into(),
        ));
    }
    if url.host().is_none() {
        return Err(HttpError::InvalidRequest("URL has no host".into()));
    }
    let mut url = hostname::normalize(url).map_err(|e| HttpError::InvalidRequest(e.to_string()))?;
    url.set_fragment(None);
    Ok(url)
}

fn transport(target: &str, error: &reqwest::Error) -> HttpError {
    if error.is_timeout() {
        return HttpError::Timeout;
    }
    // The error's own text names the full URL; the chain of sources says what went wrong.
    let mut message = target.to_owned();
    let mut source: Option<&dyn std::error::Error> = Some(error);
    while let Some(e) = source {
        message.push_str(": ");
        message.push_str(&e.to_string());
        source = e.source();
    }
    HttpError::Transport(message)
}

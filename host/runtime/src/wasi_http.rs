//! `wasi:http/outgoing-handler` for guests: the route by which a guest's standard library
//! (JavaScript `fetch()`, Python's `urllib` over componentize-py, Rust's `wasi` crate) reaches
//! the network.
//!
//! `wasmtime-wasi-http` provides the resource plumbing (requests, fields, bodies, futures);
//! every request it builds is handed to [`GuardedHooks::send_request`], which sends it with
//! the runtime's one [`GuardedClient`] under the instance's one [`EgressPolicy`]: the same
//! allowlist, address checks, DNS pinning, redirect re-validation, size, time and rate caps,
//! host-attached secrets and secret-reflection refusal as Guild's own `http` interface. The
//! crate's own client is never compiled in (no `default-send-request` feature). The answer is
//! handed back with the plugin's granted secrets redacted, as there ([`guild_http::redact`]).
//!
//! The interface is linked for every plugin, so a plugin without an `http` grant loads and
//! each request is refused one by one, with a message naming plugin, capability and origin.
//!
//! [`EgressPolicy`]: guild_http::EgressPolicy

use std::sync::Arc;

use bytes::BytesMut;
use http_body_util::{BodyExt, Full};
use wasmtime::component::Linker;
use wasmtime_wasi_http::p2::add_only_http_to_linker_async;
use wasmtime_wasi_http::{
    Error, RequestOptions, WasiBody, WasiHttpCtx, WasiHttpHooks, WasiHttpView,
};

use guild_core::capability::Effective;
use guild_http::redact::Redactor;
use guild_http::{GuardedClient, HttpError, OutboundRequest, OutboundResponse};

use crate::Runtime;
use crate::host_impl::redact_response;

/// The `wasi:http` state of one instance.
pub(crate) struct GuestHttp {
    pub(crate) ctx: WasiHttpCtx,
    pub(crate) hooks: GuardedHooks,
}

impl GuestHttp {
    /// The state for an instance running under `caps`.
    pub(crate) fn new(rt: &Runtime, caps: &Arc<Effective>, redactor: &Arc<Redactor>) -> Self {
        Self {
            ctx: WasiHttpCtx::new(),
            hooks: GuardedHooks {
                client: rt.http().clone(),
                caps: caps.clone(),
                redactor: redactor.clone(),
            },
        }
    }
}

/// Links `wasi:http/types` and `wasi:http/outgoing-handler` (the `wasi:io` and `wasi:clocks`
/// interfaces they use come with `wasmtime_wasi::p2`).
pub(crate) fn add_to_linker<T: WasiHttpView + 'static>(
    linker: &mut Linker<T>,
) -> wasmtime::Result<()> {
    add_only_http_to_linker_async(linker)
}

/// Sends every guest request through the guarded client.
pub(crate) struct GuardedHooks {
    client: GuardedClient,
    caps: Arc<Effective>,
    redactor: Arc<Redactor>,
}

/// What [`WasiHttpHooks::send_request`] returns.
type Sent = Box<
    dyn Future<
            Output = wasmtime_wasi_http::Result<(
                http::Response<WasiBody>,
                Box<dyn Future<Output = wasmtime_wasi_http::Result<()>> + Send>,
            )>,
        > + Send,
>;

impl WasiHttpHooks for GuardedHooks {
    /// The guarded client sets `Host` from the URL itself (a guest-set one is dropped).
    fn set_host_header(&mut self) -> bool {
        false
    }

    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        _options: Option<RequestOptions>,
        _fut: Box<dyn Future<Output = wasmtime_wasi_http::Result<()>> + Send>,
    ) -> Sent {
        // Guest-chosen connect/read timeouts are ignored: the host's limits apply.
        let client = self.client.clone();
        let caps = self.caps.clone();
        let redactor = self.redactor.clone();
        Box::new(async move {
            let outbound = outbound(request, client.limits().max_request_body).await?;
            let response = client
                .send(&caps.http, outbound)
                .await
                .map_err(|e| redacted(&redactor, error_code(e)))?;
            let done: Box<dyn Future<Output = wasmtime_wasi_http::Result<()>> + Send> =
                Box::new(async { Ok(()) });
            Ok((inbound(redact_response(&redactor, response))?, done))
        })
    }
}

/// The guest's request as the guarded client takes it: the body read whole, up to `limit`.
async fn outbound(
    request: http::Request<WasiBody>,
    limit: usize,
) -> Result<OutboundRequest, Error> {
    let (parts, mut body) = request.into_parts();
    let mut headers = Vec::with_capacity(parts.headers.len());
    for (name, value) in &parts.headers {
        let value = value.to_str().map_err(|_| {
            error_code(HttpError::InvalidRequest(format!(
                "request header `{name}` is not valid UTF-8"
            )))
        })?;
        headers.push((name.as_str().to_owned(), value.to_owned()));
    }
    let mut bytes = BytesMut::new();
    while let Some(frame) = body.frame().await {
        // Trailers are not sent: the guarded client has none.
        let Ok(data) = frame?.into_data() else {
            continue;
        };
        if bytes.len() + data.len() > limit {
            return Err(error_code(HttpError::TooLarge { limit }));
        }
        bytes.extend_from_slice(&data);
    }
    Ok(OutboundRequest {
        method: parts.method.as_str().to_owned(),
        url: parts.uri.to_string(),
        headers,
        body: bytes.freeze(),
    })
}

/// The guarded client's response as `wasi:http` hands it to the guest; the body was already
/// read (and capped) by the client, so the framing header that described it is left out.
fn inbound(response: OutboundResponse) -> Result<http::Response<WasiBody>, Error> {
    let mut builder = http::Response::builder().status(response.status);
    for (name, value) in &response.headers {
        if !name.eq_ignore_ascii_case("transfer-encoding") {
            builder = builder.header(name, value);
        }
    }
    let body = Full::new(response.body)
        .map_err(|never| match never {})
        .boxed_unsync();
    builder
        .body(body)
        .map_err(|e| Error::InternalError(Some(format!("invalid response: {e}"))))
}

/// An error's text with the plugin's secrets redacted.
fn redacted(redactor: &Redactor, e: Error) -> Error {
    match e {
        Error::InternalError(Some(text)) => {
            Error::InternalError(Some(redactor.redact_str(&text).into_owned()))
        }
        other => other,
    }
}

/// A refusal or failure as the guest sees it. The guarded client's message (which names the
/// plugin, the capability and the origin for a denial) travels in `internal-error`, the one
/// `error-code` case that carries text, so `fetch()` and `urllib` show it; a timeout keeps
/// its own case.
fn error_code(e: HttpError) -> Error {
    match e {
        HttpError::Timeout => Error::HttpResponseTimeout,
        other => Error::InternalError(Some(other.to_string())),
    }
}

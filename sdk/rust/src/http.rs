//! Outbound HTTP through the host: a small request builder over the `http` import.
//!
//! The host enforces the allowlist and attaches granted secrets; a plugin never sees a token.
//!
//! ```no_run
//! # fn demo() -> Result<(), guild_sdk::HostError> {
//! use guild_sdk::http;
//! let resp = http::post("https://api.example.com/items")
//!     .header("Accept", "application/json")
//!     .json(&serde_json::json!({"name": "x"}))
//!     .send()?;
//! if resp.status == 201 {
//!     let _item: serde_json::Value = resp.json().map_err(|e| guild_sdk::HostError::Failed(e.to_string()))?;
//! }
//! # Ok(()) }
//! ```

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::bindings::specialist::guild::plugin::http as raw;
use crate::types::HostError;

/// A request being built; send it with [`RequestBuilder::send`].
#[derive(Debug, Clone)]
#[must_use = "a request does nothing until it is sent"]
pub struct RequestBuilder {
    method: String,
    url: String,
    headers: Vec<(String, String)>,
    body: Option<Vec<u8>>,
    /// A body that could not be serialised; reported by `send` so the builder stays chainable.
    error: Option<String>,
}

/// A request with any method: GET, POST, PUT, PATCH, DELETE or HEAD.
pub fn request(method: impl Into<String>, url: impl Into<String>) -> RequestBuilder {
    RequestBuilder {
        method: method.into(),
        url: url.into(),
        headers: Vec::new(),
        body: None,
        error: None,
    }
}

/// A GET request.
pub fn get(url: impl Into<String>) -> RequestBuilder {
    request("GET", url)
}

/// A POST request.
pub fn post(url: impl Into<String>) -> RequestBuilder {
    request("POST", url)
}

/// A PUT request.
pub fn put(url: impl Into<String>) -> RequestBuilder {
    request("PUT", url)
}

/// A PATCH request.
pub fn patch(url: impl Into<String>) -> RequestBuilder {
    request("PATCH", url)
}

/// A DELETE request.
pub fn delete(url: impl Into<String>) -> RequestBuilder {
    request("DELETE", url)
}

/// A HEAD request.
pub fn head(url: impl Into<String>) -> RequestBuilder {
    request("HEAD", url)
}

impl RequestBuilder {
    /// Adds a header (headers with the same name are all sent).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sets a raw body.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = Some(body.into());
        self
    }

    /// Sets a JSON body and, unless one was set, `Content-Type: application/json`.
    pub fn json<T: Serialize + ?Sized>(mut self, value: &T) -> Self {
        match serde_json::to_vec(value) {
            Ok(bytes) => self.body = Some(bytes),
            Err(err) => self.error = Some(format!("request body is not JSON: {err}")),
        }
        if !self
            .headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case("content-type"))
        {
            self.headers
                .push(("Content-Type".to_owned(), "application/json".to_owned()));
        }
        self
    }

    /// Sends the request through the host. Any HTTP status is `Ok`; a refusal (not allowlisted,
    /// too large, timed out, network error) is a [`HostError`].
    pub fn send(self) -> Result<Response, HostError> {
        if let Some(err) = self.error {
            return Err(HostError::InvalidInput(err));
        }
        let request = raw::Request {
            method: self.method,
            url: self.url,
            headers: self.headers,
            body: self.body,
        };
        raw::send(&request)
            .map(|resp| Response {
                status: resp.status,
                headers: resp.headers,
                body: resp.body,
            })
            .map_err(HostError::from_raw)
    }
}

/// A response, whatever its status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// HTTP status code.
    pub status: u16,
    /// Response headers in the order received.
    pub headers: Vec<(String, String)>,
    /// The body bytes.
    pub body: Vec<u8>,
}

impl Response {
    /// True for a 2xx status.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The body as text; invalid UTF-8 is replaced, never an error.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body parsed as JSON.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_slice(&self.body)
    }
}

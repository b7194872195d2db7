//! HTTP access control. Every bind needs a bearer token, loopback included (other users and
//! processes of the machine reach loopback too): generated once into `DATA_DIR/serve.token`
//! (mode 0600) and compared in constant time. Going without one is the operator's explicit
//! choice (`--no-token` or `[serve] no_token`), allowed on loopback only and warned about on
//! every start. `Host` and `Origin` are checked by the MCP transport (DNS rebinding).

use std::io::Write as _;
use std::path::Path;

use anyhow::{Context, bail};
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq as _;

/// The token file's name inside the data dir.
pub(crate) const TOKEN_FILE: &str = "serve.token";

/// The token the server at `addr` requires, or `None` when the operator chose none
/// (`no_token`), which only a loopback address may.
pub(crate) fn token_for(
    data_dir: &Path,
    addr: std::net::SocketAddr,
    no_token: bool,
) -> anyhow::Result<Option<String>> {
    if no_token {
        if !addr.ip().is_loopback() {
            bail!(
                "refusing to serve {addr} without a bearer token: --no-token and [serve] no_token \
                 are for loopback addresses only"
            );
        }
        tracing::warn!(
            "serving http://{addr}/mcp WITHOUT a bearer token (--no-token or [serve] no_token): \
             every user and process on this machine can run tasks through it"
        );
        return Ok(None);
    }
    let token = load_or_create_token(data_dir)?;
    eprintln!(
        "guild serve: clients send `Authorization: Bearer <token>` with the token in {}",
        data_dir.join(TOKEN_FILE).display()
    );
    Ok(Some(token))
}

/// The token of `data_dir`, created (32 random bytes, hex, mode 0600) when missing. An existing
/// file that others may read is refused: the token would no longer be a secret.
pub(crate) fn load_or_create_token(data_dir: &Path) -> anyhow::Result<String> {
    use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
    let path = data_dir.join(TOKEN_FILE);
    if path.exists() {
        let mode = std::fs::metadata(&path)
            .with_context(|| format!("failed to read {}", path.display()))?
            .permissions()
            .mode();
        if mode & 0o077 != 0 {
            bail!(
                "{} is readable by other users (mode {:o}); run `chmod 600 {}` or delete it to \
                 have a new token generated",
                path.display(),
                mode & 0o777,
                path.display()
            );
        }
        let token = std::fs::read_to_string(&path)
            .with_context(|| format!("failed to read {}", path.display()))?;
        let token = token.trim().to_owned();
        if token.len() < 32 {
            bail!(
                "{} holds a token shorter than 32 characters; delete it to have a new one generated",
                path.display()
            );
        }
        return Ok(token);
    }
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("failed to generate a token: {e}"))?;
    let token = hex::encode(bytes);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .with_context(|| format!("failed to create {}", path.display()))?;
    writeln!(file, "{token}").with_context(|| format!("failed to write {}", path.display()))?;
    Ok(token)
}

/// The JSON-RPC error code of a refused token (in the implementation-defined server range).
const UNAUTHORIZED_CODE: i64 = -32001;

/// Whether `header_value` is `Bearer <token>`, compared in constant time.
pub(crate) fn bearer_matches(header_value: Option<&str>, token: &str) -> bool {
    let Some(given) = header_value.and_then(|v| v.strip_prefix("Bearer ")) else {
        return false;
    };
    given.as_bytes().ct_eq(token.as_bytes()).into()
}

/// Refuses a request without the right bearer token.
pub(crate) async fn require_token(
    State(token): State<std::sync::Arc<String>>,
    request: Request,
    next: Next,
) -> Response {
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    if bearer_matches(given, &token) {
        return next.run(request).await;
    }
    unauthorized(given.is_some())
}

/// The 401 an MCP client can read: a JSON-RPC error body (SDKs surface its message, where a
/// plain-text body is hidden behind "connection closed") and an RFC 6750 challenge that says
/// whether the token was missing or wrong.
fn unauthorized(token_given: bool) -> Response {
    let (challenge, message) = if token_given {
        (
            r#"Bearer realm="guild", error="invalid_token", error_description="the bearer token is not this server's""#,
            "wrong bearer token: send `Authorization: Bearer <token>` with the token from \
             serve.token in the server's data dir",
        )
    } else {
        (
            r#"Bearer realm="guild""#,
            "missing bearer token: send `Authorization: Bearer <token>` with the token from \
             serve.token in the server's data dir",
        )
    };
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": UNAUTHORIZED_CODE, "message": message },
    });
    (
        StatusCode::UNAUTHORIZED,
        [
            (header::WWW_AUTHENTICATE, challenge),
            (header::CONTENT_TYPE, "application/json"),
        ],
        body.to_string(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_private_and_only_the_exact_bearer_matches() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().expect("tempdir");
        let token = load_or_create_token(dir.path()).expect("token");
        let mode = std::fs::metadata(dir.path().join(TOKEN_FILE))
            .expect("metadata")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(load_or_create_token(dir.path()).expect("again"), token);
        assert!(bearer_matches(Some(&format!("Bearer {token}")), &token));
        for wrong in [
            None,
            Some(token.as_str()),
            Some("Bearer "),
            Some(&format!("Bearer {token}x")[..]),
            Some(&format!("bearer {token}")[..]),
        ] {
            assert!(!bearer_matches(wrong, &token), "{wrong:?}");
        }
    }

    #[tokio::test]
    async fn a_refusal_is_json_rpc_with_a_challenge_saying_missing_or_wrong() {
        for (given, error) in [(false, None), (true, Some("invalid_token"))] {
            let response = unauthorized(given);
            assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
            let challenge = response.headers()[header::WWW_AUTHENTICATE]
                .to_str()
                .expect("ascii")
                .to_owned();
            assert!(
                challenge.starts_with("Bearer realm=\"guild\""),
                "{challenge}"
            );
            assert_eq!(
                error.is_some_and(|e| challenge.contains(&format!("error=\"{e}\""))),
                given,
                "{challenge}"
            );
            assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
            let body = axum::body::to_bytes(response.into_body(), 4096)
                .await
                .expect("body");
            let body: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
            assert_eq!(body["error"]["code"], UNAUTHORIZED_CODE);
            let message = body["error"]["message"].as_str().expect("message");
            assert!(
                message.contains(if given { "wrong" } else { "missing" }),
                "{message}"
            );
            assert!(message.contains("serve.token"), "{message}");
        }
    }

    #[test]
    fn a_token_file_others_can_read_is_refused() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().expect("tempdir");
        load_or_create_token(dir.path()).expect("token");
        let path = dir.path().join(TOKEN_FILE);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let err = load_or_create_token(dir.path()).expect_err("refused");
        assert!(format!("{err}").contains("chmod 600"), "{err}");
    }
}

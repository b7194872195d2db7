//! TLS to the server, chosen by `sslmode` in `[store] url` (libpq's names), with rustls and
//! its `ring` provider (no OpenSSL):
//!
//! - `disable`, or no `sslmode`: plain TCP or a unix socket, as before TLS was supported;
//! - `require`: TLS, or no connection; the server's certificate is not checked (libpq's
//!   meaning: encrypted, not authenticated);
//! - `verify-full`: TLS whose certificate chains to the CA certificates of `sslrootcert` (a PEM
//!   file, required) and names the host of the URL.
//!
//! `prefer` and `allow` are refused (they fall back to plain text without saying so), and so is
//! `verify-ca` (it accepts any host the CA ever certified). The client library parses neither
//! `verify-full` nor `sslrootcert`, so [`split`] takes both out of the URL before it does.

use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect, TlsStream};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::PgError;

/// What `sslmode` asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Disable,
    Require,
    VerifyFull { ca: PathBuf },
}

/// Takes `sslmode` and `sslrootcert` out of a URL or `key=value` string; returns the rest and
/// the mode they ask for.
pub(crate) fn split(url: &str) -> Result<(String, Mode), PgError> {
    let (rest, mode, root) = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        split_url(url)
    } else {
        split_key_values(url)
    };
    let mode = match (mode.as_deref(), root) {
        (None | Some("disable"), None) => Mode::Disable,
        (Some("require"), None) => Mode::Require,
        (Some("verify-full"), Some(ca)) => Mode::VerifyFull { ca: ca.into() },
        (Some("verify-full"), None) => {
            return Err(PgError::Url(
                "sslmode=verify-full needs sslrootcert=FILE, the PEM file of the CA \
                 certificates the server's certificate must chain to"
                    .into(),
            ));
        }
        (mode, Some(_)) => {
            return Err(PgError::Url(format!(
                "sslrootcert is only used with sslmode=verify-full (sslmode is {})",
                mode.unwrap_or("not set")
            )));
        }
        (Some(other), None) => {
            return Err(PgError::Url(format!(
                "sslmode={other} is not supported: use disable, require (TLS, certificate \
                 not checked) or verify-full with sslrootcert (TLS, certificate and host \
                 checked)"
            )));
        }
    };
    Ok((rest, mode))
}

/// `postgres://…?a=b&sslmode=…`: the query's `sslmode` and `sslrootcert` (percent-decoded).
fn split_url(url: &str) -> (String, Option<String>, Option<String>) {
    let Some((base, query)) = url.split_once('?') else {
        return (url.to_owned(), None, None);
    };
    let (mut mode, mut root, mut kept) = (None, None, Vec::new());
    for pair in query.split('&') {
        match pair.split_once('=') {
            Some(("sslmode", v)) => mode = Some(decode(v)),
            Some(("sslrootcert", v)) => root = Some(decode(v)),
            _ => kept.push(pair),
        }
    }
    let rest = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    (rest, mode, root)
}

/// `host=… sslmode=… sslrootcert=…`: the two settings (unquoted values), the rest kept as is.
fn split_key_values(text: &str) -> (String, Option<String>, Option<String>) {
    let (mut mode, mut root, mut kept) = (None, None, Vec::new());
    for token in tokens(text) {
        match token.split_once('=') {
            Some(("sslmode", v)) => mode = Some(unquote(v)),
            Some(("sslrootcert", v)) => root = Some(unquote(v)),
            _ => kept.push(token),
        }
    }
    (kept.join(" "), mode, root)
}

/// Whitespace-separated tokens, a single-quoted value (with `\'` escapes) staying whole.
fn tokens(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut quoted, mut escaped) = (None, false, false);
    for (i, c) in text.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' if quoted => escaped = true,
            '\'' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => {
                if let Some(s) = start.take() {
                    out.push(&text[s..i]);
                }
                continue;
            }
            _ => {}
        }
        start.get_or_insert(i);
    }
    if let Some(s) = start {
        out.push(&text[s..]);
    }
    out
}

fn unquote(v: &str) -> String {
    v.strip_prefix('\'')
        .and_then(|v| v.strip_suffix('\''))
        .map_or_else(
            || v.to_owned(),
            |v| v.replace("\\'", "'").replace("\\\\", "\\"),
        )
}

/// `%XX` escapes decoded (a malformed one is kept as written).
fn decode(v: &str) -> String {
    let bytes = v.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The rustls client settings of `mode` (`None` for plain connections). Reads the CA file now,
/// so that a missing or unreadable one is reported when the URL is read.
pub(crate) fn client_config(mode: &Mode) -> Result<Option<Arc<ClientConfig>>, PgError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = || {
        ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| PgError::Url(format!("TLS settings: {e}")))
    };
    let config = match mode {
        Mode::Disable => return Ok(None),
        Mode::Require => builder()?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Unchecked(provider.clone())))
            .with_no_client_auth(),
        Mode::VerifyFull { ca } => builder()?
            .with_root_certificates(roots(ca)?)
            .with_no_client_auth(),
    };
    Ok(Some(Arc::new(config)))
}

/// The CA certificates of a PEM file.
fn roots(path: &Path) -> Result<rustls::RootCertStore, PgError> {
    let bad = |why: String| PgError::Url(format!("sslrootcert {}: {why}", path.display()));
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| bad(e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(e.to_string()))?;
    let mut store = rustls::RootCertStore::empty();
    let (added, ignored) = store.add_parsable_certificates(certs);
    if added == 0 {
        return Err(bad(format!(
            "no usable CA certificate in it ({ignored} unusable)"
        )));
    }
    Ok(store)
}

/// `sslmode=require`: any certificate, but the handshake's signatures are still checked (the
/// session is encrypted to whoever holds the key of the certificate shown).
#[derive(Debug)]
struct Unchecked(Arc<CryptoProvider>);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// The client library's TLS hook, made from rustls settings.
#[derive(Clone)]
pub(crate) struct Rustls(pub(crate) Arc<ClientConfig>);

impl<S> MakeTlsConnect<S> for Rustls
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = Stream<S>;
    type TlsConnect = Connect;
    type Error = rustls::pki_types::InvalidDnsNameError;

    fn make_tls_connect(&mut self, host: &str) -> Result<Connect, Self::Error> {
        Ok(Connect {
            config: self.0.clone(),
            name: ServerName::try_from(host.to_owned())?,
        })
    }
}

/// One connection's handshake, to `name`.
pub(crate) struct Connect {
    config: Arc<ClientConfig>,
    name: ServerName<'static>,
}

impl<S> TlsConnect<S> for Connect
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = Stream<S>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<Stream<S>>> + Send>>;

    fn connect(self, stream: S) -> Self::Future {
        Box::pin(async move {
            tokio_rustls::TlsConnector::from(self.config)
                .connect(self.name, stream)
                .await
                .map(Stream)
        })
    }
}

/// A TLS session over the connection's socket.
pub(crate) struct Stream<S>(tokio_rustls::client::TlsStream<S>);

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for Stream<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for Stream<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> TlsStream for Stream<S> {
    fn channel_binding(&self) -> ChannelBinding {
        // No SCRAM channel binding: the server's authentication does not need it.
        ChannelBinding::none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sslmode_and_sslrootcert_are_taken_out_of_urls() {
        let (rest, mode) = split(
            "postgres://guild@db:5432/guild?application_name=x&sslmode=verify-full&\
             sslrootcert=/etc/guild/ca%20file.pem",
        )
        .expect("parse");
        assert_eq!(rest, "postgres://guild@db:5432/guild?application_name=x");
        assert_eq!(
            mode,
            Mode::VerifyFull {
                ca: "/etc/guild/ca file.pem".into()
            }
        );
        let (rest, mode) = split("postgres://db/guild?sslmode=require").expect("parse");
        assert_eq!(
            (rest.as_str(), mode),
            ("postgres://db/guild", Mode::Require)
        );
        let (rest, mode) = split("postgres://db/guild").expect("parse");
        assert_eq!(
            (rest.as_str(), mode),
            ("postgres://db/guild", Mode::Disable)
        );
        let (rest, mode) =
            split("host=db dbname='my db' sslmode=verify-full sslrootcert='/c a.pem'")
                .expect("parse");
        assert_eq!(rest, "host=db dbname='my db'");
        assert_eq!(
            mode,
            Mode::VerifyFull {
                ca: "/c a.pem".into()
            }
        );
    }

    #[test]
    fn unsafe_or_incomplete_settings_are_refused() {
        for (url, why) in [
            ("postgres://db/guild?sslmode=prefer", "sslmode=prefer"),
            ("postgres://db/guild?sslmode=allow", "sslmode=allow"),
            ("postgres://db/guild?sslmode=verify-ca", "sslmode=verify-ca"),
            (
                "postgres://db/guild?sslmode=verify-full",
                "needs sslrootcert",
            ),
            ("postgres://db/guild?sslrootcert=/ca.pem", "only used with"),
            (
                "postgres://db/guild?sslmode=require&sslrootcert=/ca.pem",
                "only used with",
            ),
        ] {
            match split(url) {
                Err(PgError::Url(e)) => assert!(e.contains(why), "{url}: {e}"),
                other => panic!("{url} was accepted: {other:?}"),
            }
        }
    }

    #[test]
    fn a_missing_or_empty_ca_file_is_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = dir.path().join("missing.pem");
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").expect("write");
        for path in [missing, empty] {
            match client_config(&Mode::VerifyFull { ca: path.clone() }) {
                Err(PgError::Url(e)) => {
                    assert!(e.contains(&path.display().to_string()), "{e}")
                }
                Err(other) => panic!("{other}"),
                Ok(_) => panic!("{} was accepted", path.display()),
            }
        }
    }
}

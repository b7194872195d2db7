//! MCP sessions on the control socket: how a stdio `guild serve` (a proxy, [`crate::proxy`])
//! reaches the host that owns the data dir.
//!
//! A client sends one `{"op": "mcp_session", "config": …, "workspace": …, "user": …}` line
//! ([`crate::control::Request::McpSession`]); the host answers `{"ok": true, "result": {"pid":
//! …}}` when the client's configuration is its own (same `guild.toml`, same memory owners),
//! else a failure naming both. From then on the connection carries the JSON-lines MCP stream a
//! stdio server speaks, read and written by rmcp's service loop through
//! [`crate::line_transport`] (the stdio guard's checks included) and served by the same
//! [`Connection`] as any other session. The session ends when the client hangs up: its
//! foreground calls are cancelled, background tasks go on in the host.
//!
//! The count of attached sessions feeds the idle policy ([`crate::idle`]).

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::ServiceExt as _;
use serde::{Deserialize, Serialize};

use crate::line_transport::LineTransport;
use crate::mcp::{Connection, Server};

/// Which configuration a client asks for; a host serves only its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    /// The `guild.toml`, canonical.
    pub config: PathBuf,
    /// The memory tools' workspace (after `--workspace`).
    #[serde(default)]
    pub workspace: Option<String>,
    /// The memory tools' user (after `--user`).
    #[serde(default)]
    pub user: Option<String>,
}

impl Identity {
    /// The identity of `config` loaded from `path` (canonicalised when it can be).
    pub fn of(path: &std::path::Path, config: &guild_host::Config) -> Self {
        Self {
            config: std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
            workspace: config.memory.workspace.clone(),
            user: config.memory.user.clone(),
        }
    }
}

/// The host's sessions on its control socket.
pub(crate) struct Sessions {
    identity: Identity,
    max_line: usize,
    attached: AtomicUsize,
    /// Set, under its lock, when the host decided to end idle: admitting a client and deciding
    /// that none is attached exclude each other, so no client is admitted by a host that is
    /// ending ([`Sessions::close_if_unattached`]).
    closing: Mutex<bool>,
}

/// Why a client gets no session.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// The host is ending (idle): it hangs up without an answer, which a proxy reads as "no
    /// host" and starts a new one.
    Closing,
    /// Another configuration or other memory owners: the message names both.
    Mismatch(String),
}

impl Sessions {
    pub(crate) fn new(identity: Identity, max_line: usize) -> Arc<Self> {
        Arc::new(Self {
            identity,
            max_line,
            attached: AtomicUsize::new(0),
            closing: Mutex::new(false),
        })
    }

    /// Stops admitting clients when none is attached (the idle exit); false, and nothing
    /// changes, when one is.
    pub(crate) fn close_if_unattached(&self) -> bool {
        let mut closing = self.closing.lock().unwrap_or_else(|p| p.into_inner());
        if self.attached() == 0 {
            *closing = true;
        }
        *closing
    }

    /// Sessions attached now.
    pub(crate) fn attached(&self) -> usize {
        self.attached.load(Ordering::SeqCst)
    }

    /// Counts the client asking for `asked` as attached when it may have a session here (before
    /// it is told, so that the host does not go idle meanwhile); else why not.
    pub(crate) fn admit(&self, asked: &Identity) -> Result<Attached<'_>, Refusal> {
        let own = &self.identity;
        if asked.config != own.config {
            return Err(Refusal::Mismatch(format!(
                "the guild host on this data dir serves {} but this client asked for {}: one \
                 host serves one configuration per data dir; use that configuration, or give \
                 this one another data_dir",
                own.config.display(),
                asked.config.display()
            )));
        }
        if asked.workspace != own.workspace || asked.user != own.user {
            return Err(Refusal::Mismatch(format!(
                "the guild host for {} serves the memory of workspace {:?} and user {:?}, but \
                 this client asked for {:?} and {:?}",
                own.config.display(),
                own.workspace,
                own.user,
                asked.workspace,
                asked.user
            )));
        }
        let closing = self.closing.lock().unwrap_or_else(|p| p.into_inner());
        if *closing {
            return Err(Refusal::Closing);
        }
        Ok(Attached::new(&self.attached))
    }

    /// Serves one admitted client's MCP session until it hangs up.
    pub(crate) async fn serve<R, W>(
        &self,
        attached: Attached<'_>,
        server: Arc<Server>,
        read: R,
        write: W,
    ) where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        // The service loop closes the transport (and so the connection's writing side) once
        // everything it had to send is written.
        let transport = LineTransport::new(read, write, self.max_line);
        match Connection::new(server).serve(transport).await {
            Ok(service) => {
                let quit = service.waiting().await;
                tracing::info!("a client closed its session: {quit:?}");
            }
            Err(e) => tracing::info!("a session on the control socket did not start: {e}"),
        }
        drop(attached);
    }
}

/// Counts one session for as long as it lives.
pub(crate) struct Attached<'a>(&'a AtomicUsize);

impl<'a> Attached<'a> {
    fn new(count: &'a AtomicUsize) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        Self(count)
    }
}

impl Drop for Attached<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_hosts_own_configuration_and_owners_are_admitted() {
        let own = Identity {
            config: PathBuf::from("/a/guild.toml"),
            workspace: Some("team".into()),
            user: None,
        };
        let sessions = Sessions::new(own.clone(), 1024);
        let attached = sessions.admit(&own).expect("its own configuration");
        assert_eq!(sessions.attached(), 1);
        drop(attached);
        assert_eq!(sessions.attached(), 0);
        let other = Identity {
            config: PathBuf::from("/b/guild.toml"),
            ..own.clone()
        };
        let Some(Refusal::Mismatch(err)) = sessions.admit(&other).err() else {
            panic!("another config is admitted");
        };
        assert!(
            err.contains("/a/guild.toml") && err.contains("/b/guild.toml"),
            "{err}"
        );
        let other_user = Identity {
            user: Some("sam".into()),
            ..own
        };
        let Some(Refusal::Mismatch(err)) = sessions.admit(&other_user).err() else {
            panic!("another user is admitted");
        };
        assert!(err.contains("sam"), "{err}");
    }

    #[test]
    fn a_host_closes_only_with_no_session_and_then_admits_none() {
        let own = Identity {
            config: PathBuf::from("/a/guild.toml"),
            workspace: None,
            user: None,
        };
        let sessions = Sessions::new(own.clone(), 1024);
        let attached = sessions.admit(&own).expect("open");
        // Denied: a session is attached, the host stays open.
        assert!(!sessions.close_if_unattached());
        assert!(sessions.admit(&own).is_ok());
        drop(attached);
        // Allowed: none attached; from then on a client gets no session.
        assert!(sessions.close_if_unattached());
        assert!(matches!(sessions.admit(&own), Err(Refusal::Closing)));
    }
}

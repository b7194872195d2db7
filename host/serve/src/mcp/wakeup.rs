//! `wakeup` report delivery over MCP: with `[dispatch] delivery = "wakeup"`, every report a
//! running background task sends (as the host accepted and stored it) also reaches each
//! connected client as a `notifications/message` log notification (level `info`, logger
//! `guild.report`, data with the task id, the message id and the text). A client that set its
//! log level above `info` (`logging/setLevel`) gets none; `quiet` delivery sends none at all.
// MCP logging is deprecated by SEP-2577 in newer protocol revisions; clients on the revisions
// the SDKs negotiate today still use it, and it is what the wakeup contract names.
#![allow(deprecated)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use guild_host::settings::Delivery;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::{Peer, RoleServer};
use serde_json::json;
use tokio::sync::broadcast::error::RecvError;

use super::Server;

/// The logger name of report notifications.
pub(crate) const LOGGER: &str = "guild.report";

/// The lowest level a client wants (default `info`), set by `logging/setLevel`.
pub(crate) struct LogLevel(AtomicU8);

impl Default for LogLevel {
    fn default() -> Self {
        Self(AtomicU8::new(LoggingLevel::Info as u8))
    }
}

impl LogLevel {
    pub(crate) fn set(&self, level: LoggingLevel) {
        self.0.store(level as u8, Ordering::SeqCst);
    }

    fn allows(&self, level: LoggingLevel) -> bool {
        level as u8 >= self.0.load(Ordering::SeqCst)
    }
}

/// Forwards report events to `peer` while its session lasts (nothing in `quiet` delivery).
pub(crate) fn spawn(server: &Server, peer: Peer<RoleServer>, level: Arc<LogLevel>) {
    if server.host().config().dispatch.delivery != Delivery::Wakeup {
        return;
    }
    let mut events = server.host().subscribe();
    tokio::spawn(async move {
        loop {
            let event = match events.recv().await {
                Ok(event) => event,
                Err(RecvError::Lagged(missed)) => {
                    tracing::warn!(
                        "{missed} report notification(s) dropped: the client is slow; check_task still has them"
                    );
                    continue;
                }
                Err(RecvError::Closed) => break,
            };
            if peer.is_transport_closed() {
                break;
            }
            if !level.allows(LoggingLevel::Info) {
                continue;
            }
            let data = json!({
                "task_id": event.task_id,
                "message_id": event.report.id,
                "sequence": event.report.sequence,
                "text": event.report.output,
            });
            let mut param = LoggingMessageNotificationParam::new(LoggingLevel::Info, data);
            param.logger = Some(LOGGER.to_owned());
            if let Err(e) = peer.notify_logging_message(param).await {
                tracing::debug!("failed to send a report notification: {e}");
            }
        }
    });
}

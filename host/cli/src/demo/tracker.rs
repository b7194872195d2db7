//! Local stand-in for GitHub's REST issues API, for the demo and for tests.
//!
//! It speaks the subset the tracker connector uses, with GitHub's JSON shapes and error bodies:
//! create/get/list/update issues, `GET /search/issues`, and an HTML page per issue so the
//! `html_url`s it hands out are real links. Every API route requires `Authorization: Bearer
//! <token>`. It binds loopback only; real use points the connector at the real service.

mod routes;
mod search;
#[cfg(test)]
mod tests;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::oneshot;

/// Whether an issue is open or closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IssueState {
    /// Open (the state of a new issue).
    Open,
    /// Closed.
    Closed,
}

/// One stored issue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    /// Globally unique id.
    pub id: u64,
    /// Number within its repository, from 1.
    pub number: u64,
    /// Repository owner.
    pub owner: String,
    /// Repository name.
    pub repo: String,
    /// Title (never empty).
    pub title: String,
    /// Body, if any.
    pub body: Option<String>,
    /// Open or closed.
    pub state: IssueState,
    /// Label names.
    pub labels: Vec<String>,
    /// Creation time, RFC 3339 UTC.
    pub created_at: String,
}

impl Issue {
    fn in_repo(&self, owner: &str, repo: &str) -> bool {
        self.owner.eq_ignore_ascii_case(owner) && self.repo.eq_ignore_ascii_case(repo)
    }

    fn to_json(&self, base: &str) -> Value {
        let (o, r, n) = (&self.owner, &self.repo, self.number);
        json!({
            "id": self.id,
            "number": n,
            "title": self.title,
            "body": self.body,
            "state": self.state,
            "labels": self.labels.iter().map(|l| json!({ "name": l })).collect::<Vec<_>>(),
            "html_url": format!("{base}/{o}/{r}/issues/{n}"),
            "url": format!("{base}/repos/{o}/{r}/issues/{n}"),
            "repository_url": format!("{base}/repos/{o}/{r}"),
            "user": { "login": "guild-demo" },
            "created_at": self.created_at,
        })
    }
}

/// Creates the server refuses, with GitHub's error shape.
struct Refusal {
    status: u16,
    message: String,
    /// How many more creates it refuses; `None`: every one until it is lifted.
    remaining: Option<u32>,
}

#[derive(Default)]
struct Data {
    issues: Vec<Issue>,
    refuse_creates: Option<Refusal>,
}

impl Data {
    /// The refusal for this create, if one is set; a counted refusal is used up by it.
    fn refusal(&mut self) -> Option<(u16, String)> {
        let r = self.refuse_creates.as_mut()?;
        let answer = (r.status, r.message.clone());
        if let Some(n) = &mut r.remaining {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.refuse_creates = None;
            }
        }
        Some(answer)
    }
}

struct Shared {
    token: String,
    base_url: String,
    data: Mutex<Data>,
}

impl Shared {
    fn data(&self) -> MutexGuard<'_, Data> {
        // A panicking handler cannot leave `Data` half-updated in a way that matters here.
        self.data.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

type AppState = Arc<Shared>;

/// A running tracker server; it stops when dropped.
pub struct TrackerServer {
    addr: SocketAddr,
    shared: AppState,
    shutdown: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for TrackerServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrackerServer")
            .field("base_url", &self.shared.base_url)
            .finish_non_exhaustive()
    }
}

impl TrackerServer {
    /// Starts a server on `127.0.0.1` with an OS-chosen port, accepting `token`.
    pub async fn start(token: &str) -> std::io::Result<Self> {
        Self::start_on(SocketAddr::from(([127, 0, 0, 1], 0)), token).await
    }

    /// Starts a server on `addr`, accepting `token`.
    pub async fn start_on(addr: SocketAddr, token: &str) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            token: token.to_owned(),
            base_url: format!("http://{addr}"),
            data: Mutex::new(Data::default()),
        });
        let (shutdown, stop) = oneshot::channel::<()>();
        let app = routes::router(shared.clone());
        let task = tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(async move {
                let _ = stop.await;
            });
            if let Err(e) = serve.await {
                tracing::warn!(error = %e, "tracker server stopped");
            }
        });
        Ok(Self {
            addr,
            shared,
            shutdown: Some(shutdown),
            task,
        })
    }

    /// `http://127.0.0.1:PORT`, with no trailing slash.
    pub fn base_url(&self) -> &str {
        &self.shared.base_url
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A snapshot of every issue, in creation order.
    pub fn issues(&self) -> Vec<Issue> {
        self.shared.data().issues.clone()
    }

    /// Makes creates fail with `(status, message)` (e.g. `(410, "Issues are disabled for this
    /// repo")`), or succeed again with `None`.
    pub fn set_refuse_creates(&self, refusal: Option<(u16, String)>) {
        self.shared.data().refuse_creates = refusal.map(|(status, message)| Refusal {
            status,
            message,
            remaining: None,
        });
    }

    /// Makes the next `count` creates fail with `status` and `message` (e.g. `(1, 503,
    /// "Service Unavailable")`: a passing outage); later ones succeed.
    pub fn refuse_next_creates(&self, count: u32, status: u16, message: &str) {
        self.shared.data().refuse_creates = (count > 0).then(|| Refusal {
            status,
            message: message.to_owned(),
            remaining: Some(count),
        });
    }
}

impl Drop for TrackerServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        self.task.abort();
    }
}

/// The current UTC time as `YYYY-MM-DDTHH:MM:SSZ` (no date crate needed for one format).
fn rfc3339_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    rfc3339(secs)
}

fn rfc3339(secs: u64) -> String {
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Howard Hinnant's civil-from-days, for days since 1970-01-01.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

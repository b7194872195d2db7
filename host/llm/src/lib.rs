//! Guild's model broker (docs/models.md): chat completions for granted plugins on the
//! OpenAI-compatible endpoints the operator configured under `[llm]`.
//!
//! The broker holds every endpoint's key (read from the host's environment at start, kept in
//! memory only) and attaches it as the guarded client attaches a granted secret, so no key ever
//! crosses into a guest. Each endpoint has its own egress policy naming exactly its origin, so
//! a loopback endpoint (a local model, the stand-in) is reachable by the broker without opening
//! loopback to any plugin. Around each call: the request checked against its caps ([`wire`]),
//! the task's and the day's token budgets ([`budget`]), the grant's concurrency, retries on
//! 429 and 5xx honouring `Retry-After` within the task's deadline, and the key redacted from
//! anything the endpoint says back.
//!
//! [`standin`] is a scripted OpenAI-compatible endpoint on 127.0.0.1 for tests and demos.

pub mod budget;
mod call;
pub mod standin;
#[cfg(test)]
mod tests;
pub mod wire;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use guild_core::llm::{LlmSettings, ModelUsage};
use guild_http::redact::Redactor;
use guild_http::{AllowList, EgressPolicy, GuardedClient, HostPattern, HttpLimits, SecretHeader};
use tokio::sync::Semaphore;

pub use budget::{BudgetError, DailyTokens, TokenBudgets};
pub use call::{CallScope, Completed};

/// Why the broker could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// An endpoint's key variable is not set in the host's environment.
    #[error(
        "`[llm.endpoints.{endpoint}]`: api_key_env names the environment variable {variable}, \
         which is not set; set it in the environment Guild starts in (or remove api_key_env \
         for an endpoint that needs no key)"
    )]
    MissingKey {
        /// The endpoint's name.
        endpoint: String,
        /// The variable.
        variable: String,
    },
    /// An endpoint's base URL or key cannot be used.
    #[error("`[llm.endpoints.{endpoint}]`: {message}")]
    Endpoint {
        /// The endpoint's name.
        endpoint: String,
        /// What is wrong (never the key).
        message: String,
    },
    /// The daily budget store could not be opened.
    #[error(transparent)]
    Store(#[from] guild_store::DbFileError),
}

/// One configured endpoint.
struct Endpoint {
    /// `{base_url}/chat/completions`.
    url: String,
    /// Its origin alone, with the key attached to requests for it.
    policy: EgressPolicy,
    timeout: Duration,
}

/// The broker every task's model calls go through. Cheap to clone.
#[derive(Clone)]
pub struct Broker {
    inner: Arc<Inner>,
}

struct Inner {
    client: GuardedClient,
    endpoints: BTreeMap<String, Endpoint>,
    /// alias → (endpoint, model id).
    models: BTreeMap<String, (String, String)>,
    /// Tokens spent per plugin and day: SQLite by default, or a store hosts share.
    daily: Arc<dyn TokenBudgets>,
    /// Calls in flight per plugin and grant size (the grant's `concurrency`).
    slots: Mutex<HashMap<String, Arc<Semaphore>>>,
    /// Every key, in every form the redactor knows.
    redactor: Redactor,
    record_transcripts: bool,
}

/// The client's caps for model calls: one call may be long (the broker bounds it by the
/// endpoint's timeout and the task's deadline), bodies are bounded, redirects not followed.
fn limits() -> HttpLimits {
    HttpLimits {
        timeout: Duration::from_secs(3600),
        max_request_body: wire::MAX_REQUEST_BYTES,
        max_response_body: 8 << 20,
        max_redirects: 0,
        request_burst: 10_000,
        request_interval: Duration::ZERO,
        max_concurrent_requests: 1024,
        ..HttpLimits::default()
    }
}

impl Broker {
    /// Reads each endpoint's key through `env` (the host's environment) or from its file
    /// (relative to `base_dir`), and opens the daily budgets in `data_dir` (`None`: in memory,
    /// for a host that keeps no state).
    pub fn start(
        settings: &LlmSettings,
        base_dir: &Path,
        data_dir: Option<&Path>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, StartError> {
        let daily = match data_dir {
            Some(dir) if !settings.models.is_empty() => DailyTokens::open(dir)?,
            _ => DailyTokens::in_memory()?,
        };
        Self::start_with_budgets(settings, base_dir, Arc::new(daily), env)
    }

    /// [`Broker::start`] with the daily budgets kept in `budgets` (a store several hosts share)
    /// instead of the data dir.
    pub fn start_with_budgets(
        settings: &LlmSettings,
        base_dir: &Path,
        budgets: Arc<dyn TokenBudgets>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, StartError> {
        let mut endpoints = BTreeMap::new();
        let mut secrets = Vec::new();
        for (name, e) in &settings.endpoints {
            let err = |message: String| StartError::Endpoint {
                endpoint: name.clone(),
                message,
            };
            let base = url::Url::parse(&e.base_url).map_err(|x| err(x.to_string()))?;
            let origin = base.origin().ascii_serialization();
            let pattern = HostPattern::parse(&origin).map_err(|x| err(x.to_string()))?;
            let list = AllowList::new(vec![pattern]);
            let mut policy = EgressPolicy {
                plugin: format!("llm:{name}"),
                requested: list.clone(),
                granted: list.clone(),
                secrets: Vec::new(),
            };
            let key = match (&e.api_key_env, &e.api_key_file) {
                (Some(variable), _) => {
                    Some(env(variable).ok_or_else(|| StartError::MissingKey {
                        endpoint: name.clone(),
                        variable: variable.clone(),
                    })?)
                }
                (None, Some(file)) => {
                    let text = std::fs::read_to_string(base_dir.join(file))
                        .map_err(|x| err(format!("api_key_file {}: {x}", file.display())))?;
                    Some(text.trim_end_matches(['\n', '\r']).to_owned())
                }
                (None, None) => None,
            };
            if let Some(key) = key {
                let key = zeroize::Zeroizing::new(key);
                let secret = SecretHeader::new(
                    format!("{name} key"),
                    "Authorization",
                    &format!("Bearer {}", key.trim()),
                    list,
                )
                .map_err(|x| err(x.to_string()))?
                .with_granted_value(&key);
                policy.secrets.push(secret.clone());
                secrets.push(secret);
            }
            endpoints.insert(
                name.clone(),
                Endpoint {
                    url: format!("{}/chat/completions", e.base_url.trim_end_matches('/')),
                    policy,
                    timeout: Duration::from_secs(u64::from(e.timeout_s)),
                },
            );
        }
        let models = settings
            .models
            .iter()
            .map(|(a, m)| (a.clone(), (m.endpoint.clone(), m.model.clone())))
            .collect();
        Ok(Self {
            inner: Arc::new(Inner {
                client: GuardedClient::new(limits()),
                endpoints,
                models,
                daily: budgets,
                slots: Mutex::new(HashMap::new()),
                redactor: Redactor::new(&secrets),
                record_transcripts: settings.record_transcripts,
            }),
        })
    }

    /// Tokens `plugin` spent today (UTC), across tasks and restarts (and hosts, on a shared
    /// store); 0 when the store cannot be read. Blocks until the store answers.
    pub fn used_today(&self, plugin: &str) -> u64 {
        self.inner
            .daily
            .used(plugin, budget::today())
            .unwrap_or_default()
    }

    /// The plugin's call slots; keyed by the concurrency too, so a reload that changes the
    /// grant gets slots of the new size.
    fn slots(&self, plugin: &str, concurrency: u32) -> Arc<Semaphore> {
        let mut slots = self.inner.slots.lock().unwrap_or_else(|p| p.into_inner());
        slots
            .entry(format!("{plugin}#{concurrency}"))
            .or_insert_with(|| Arc::new(Semaphore::new(concurrency.max(1) as usize)))
            .clone()
    }
}

/// Per-model usage of one task, keyed by alias.
pub type TaskUsage = BTreeMap<String, ModelUsage>;

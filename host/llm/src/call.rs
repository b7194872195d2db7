//! One model call: alias to endpoint, the request's caps, the task's and the day's budgets,
//! the grant's concurrency, then the exchange with retries within the task's deadline.

use std::time::Duration;

use guild_core::llm::{BudgetKind, ChatAnswer, ChatRequest, LlmError, ModelGrant};
use guild_http::{HttpError, OutboundRequest, OutboundResponse};
use tokio::time::Instant;

use crate::{Broker, Endpoint, budget, wire};

/// Attempts per call (the first and up to three retries).
const MAX_ATTEMPTS: u32 = 4;
/// The longest wait between attempts, whatever `Retry-After` says.
const MAX_WAIT: Duration = Duration::from_secs(30);

/// Who is calling, under which grant, and until when.
#[derive(Debug, Clone, Copy)]
pub struct CallScope<'a> {
    /// The plugin's name (budgets and concurrency are its own).
    pub plugin: &'a str,
    /// Its effective model grant.
    pub grant: &'a ModelGrant,
    /// Tokens its task spent so far.
    pub task_tokens: u64,
    /// The task's deadline: no request is sent, and no answer awaited, past it.
    pub deadline: Instant,
}

/// An answered call.
#[derive(Debug, Clone)]
pub struct Completed {
    /// The model's answer.
    pub answer: ChatAnswer,
    /// The request and answer as JSON, keys redacted, when `[llm] record_transcripts` is on.
    pub transcript: Option<serde_json::Value>,
}

/// Waits before attempt `attempt + 1`: 250 ms, 500 ms, 1 s, ...
fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(250u64 << attempt.saturating_sub(1).min(6))
}

fn retry_after(resp: &OutboundResponse) -> Option<Duration> {
    let value = |name: &str| {
        resp.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .and_then(|(_, v)| v.trim().parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    value("retry-after-ms")
        .map(|ms| Duration::from_secs_f64(ms / 1000.0))
        .or_else(|| value("retry-after").map(Duration::from_secs_f64))
}

impl Broker {
    /// One chat completion for `scope.plugin`. Budgets are checked before any request; the
    /// answer's tokens are added to the day's count (the caller adds them to its task).
    pub async fn complete(
        &self,
        scope: &CallScope<'_>,
        request: ChatRequest,
    ) -> Result<Completed, LlmError> {
        let alias = request.model.as_str();
        if let Some(refusal) = scope.grant.refusal(scope.plugin, alias) {
            return Err(LlmError::ModelNotGranted(refusal));
        }
        let Some((endpoint, model)) = self.inner.models.get(alias) else {
            return Err(LlmError::ModelNotGranted(format!(
                "model `{alias}` is not configured in this host's `[llm.models]`"
            )));
        };
        let Some(ep) = self.inner.endpoints.get(endpoint) else {
            return Err(LlmError::ModelNotGranted(format!(
                "model `{alias}` names endpoint `{endpoint}`, which is not configured"
            )));
        };
        let body = wire::body(&request, model)?;
        if let Some(limit) = scope.grant.tokens_per_task
            && scope.task_tokens >= limit
        {
            return Err(LlmError::BudgetExceeded {
                budget: BudgetKind::TaskTokens,
                limit,
                used: scope.task_tokens,
            });
        }
        let day = budget::today();
        if let Some(limit) = scope.grant.tokens_per_day {
            let used = self.daily_used(scope.plugin, day).await?;
            if used >= limit {
                return Err(LlmError::BudgetExceeded {
                    budget: BudgetKind::DailyTokens,
                    limit,
                    used,
                });
            }
        }
        let slots = self.slots(scope.plugin, scope.grant.concurrency);
        let _slot = tokio::time::timeout_at(scope.deadline, slots.acquire_owned())
            .await
            .map_err(|_| deadline_passed())?
            .map_err(|_| LlmError::Timeout("the broker is shutting down".to_owned()))?;
        let answer = self.exchange(ep, body, scope.deadline).await?;
        let (daily, plugin, tokens) = (
            self.inner.daily.clone(),
            scope.plugin.to_owned(),
            answer.usage.total(),
        );
        let added = tokio::task::spawn_blocking(move || daily.add(&plugin, day, tokens)).await;
        match added {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(
                plugin = scope.plugin,
                "could not record daily model tokens: {e}"
            ),
            Err(e) => tracing::warn!(
                plugin = scope.plugin,
                "could not record daily model tokens: the store call failed: {e}"
            ),
        }
        tracing::info!(
            plugin = scope.plugin,
            model = alias,
            prompt_tokens = answer.usage.prompt_tokens,
            completion_tokens = answer.usage.completion_tokens,
            "model call"
        );
        let transcript = self.inner.record_transcripts.then(|| {
            let json = serde_json::json!({"model": alias, "request": request, "answer": answer});
            let text = self
                .inner
                .redactor
                .redact_str(&json.to_string())
                .into_owned();
            serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text))
        });
        Ok(Completed { answer, transcript })
    }

    /// The day's count, read off the async tasks (the store blocks until it answers).
    async fn daily_used(&self, plugin: &str, day: i64) -> Result<u64, LlmError> {
        let (daily, owned) = (self.inner.daily.clone(), plugin.to_owned());
        let failed = |message: String| LlmError::Upstream {
            status: 0,
            message: format!("the host could not read its daily model budget: {message}"),
        };
        tokio::task::spawn_blocking(move || daily.used(&owned, day))
            .await
            .map_err(|e| failed(format!("the store call failed: {e}")))?
            .map_err(|e| failed(e.to_string()))
    }

    fn redact(&self, text: &str) -> String {
        self.inner.redactor.redact_str(text).into_owned()
    }

    /// Sends `body` until it is answered, retrying 429, 5xx and unreachable endpoints with
    /// backoff (or the endpoint's `Retry-After`) while the deadline allows.
    async fn exchange(
        &self,
        ep: &Endpoint,
        body: Vec<u8>,
        deadline: Instant,
    ) -> Result<ChatAnswer, LlmError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let own = Instant::now() + ep.timeout;
            let until = own.min(deadline);
            let request = OutboundRequest::new("POST", ep.url.clone())
                .header("content-type", "application/json")
                .body(body.clone());
            let sent = tokio::time::timeout_at(until, self.inner.client.send(&ep.policy, request));
            let timed_out = || {
                if until == deadline {
                    deadline_passed()
                } else {
                    LlmError::Timeout(format!(
                        "the endpoint did not answer within {} s",
                        ep.timeout.as_secs()
                    ))
                }
            };
            let (wait, failure) = match sent.await {
                Err(_) | Ok(Err(HttpError::Timeout)) => return Err(timed_out()),
                Ok(Err(e)) => (
                    backoff(attempt),
                    LlmError::Upstream {
                        status: 0,
                        message: self.redact(&e.to_string()),
                    },
                ),
                Ok(Ok(resp)) if (200..300).contains(&resp.status) => {
                    return wire::answer(&resp.body).map_err(|e| match e {
                        LlmError::MalformedAnswer(m) => LlmError::MalformedAnswer(self.redact(&m)),
                        other => other,
                    });
                }
                Ok(Ok(resp)) => {
                    let after = retry_after(&resp);
                    let failure = if resp.status == 429 {
                        LlmError::RateLimited(after.map(|d| d.as_millis() as u64))
                    } else {
                        LlmError::Upstream {
                            status: resp.status,
                            message: self.redact(&wire::error_text(&resp.body)),
                        }
                    };
                    if resp.status != 429 && resp.status < 500 {
                        return Err(failure);
                    }
                    (after.unwrap_or_else(|| backoff(attempt)), failure)
                }
            };
            let wait = wait.min(MAX_WAIT);
            if attempt >= MAX_ATTEMPTS || Instant::now() + wait >= deadline {
                return Err(failure);
            }
            tracing::debug!(
                attempt,
                wait_ms = wait.as_millis() as u64,
                "model call retried"
            );
            tokio::time::sleep(wait).await;
        }
    }
}

fn deadline_passed() -> LlmError {
    LlmError::Timeout("the task's deadline passed before the model answered".to_owned())
}

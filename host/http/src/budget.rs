//! How much network one plugin may use: a request rate (token bucket) and a cap on requests in
//! flight, shared by every instance of the plugin.
//!
//! Every request the guest makes spends a token, refused ones included (hammering a denied
//! origin is volume too). Tokens come back at one per [`HttpLimits::request_interval`] up to
//! [`HttpLimits::request_burst`]; with none left the request is refused at once with
//! [`HttpError::Limit`]. Requests in flight are capped at
//! [`HttpLimits::max_concurrent_requests`]: one more waits for a slot until its own timeout,
//! then is refused the same way. Since each request in flight holds at most one connection,
//! that cap also bounds the plugin's open connections (idle pooled ones are bounded by the
//! pool).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::client::HttpLimits;
use super::error::HttpError;

/// The budgets of every plugin that made a request through one client.
#[derive(Debug, Default)]
pub(crate) struct Budgets {
    plugins: Mutex<HashMap<String, Arc<Budget>>>,
}

/// One plugin's budget.
#[derive(Debug)]
pub(crate) struct Budget {
    bucket: Mutex<Bucket>,
    in_flight: Arc<Semaphore>,
}

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    refilled: Instant,
}

impl Budgets {
    /// `plugin`'s budget, created full on first use.
    pub(crate) fn of(&self, plugin: &str, limits: &HttpLimits) -> Arc<Budget> {
        let mut plugins = self.plugins.lock().unwrap_or_else(PoisonError::into_inner);
        plugins
            .entry(plugin.to_owned())
            .or_insert_with(|| {
                Arc::new(Budget {
                    bucket: Mutex::new(Bucket {
                        tokens: f64::from(limits.request_burst),
                        refilled: Instant::now(),
                    }),
                    in_flight: Arc::new(Semaphore::new(
                        limits.max_concurrent_requests.min(Semaphore::MAX_PERMITS),
                    )),
                })
            })
            .clone()
    }
}

impl Budget {
    /// Spends one request token, or refuses when the plugin is over its rate.
    pub(crate) fn spend(&self, plugin: &str, limits: &HttpLimits) -> Result<(), HttpError> {
        let mut bucket = self.bucket.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        let burst = f64::from(limits.request_burst);
        if limits.request_interval.is_zero() {
            bucket.tokens = burst;
        } else {
            let earned = now.duration_since(bucket.refilled).as_secs_f64()
                / limits.request_interval.as_secs_f64();
            bucket.tokens = (bucket.tokens + earned).min(burst);
        }
        bucket.refilled = now;
        if bucket.tokens < 1.0 {
            return Err(HttpError::Limit(format!(
                "plugin `{plugin}` made more than {} requests in a burst (one more every {:?}); \
                 slow down and retry later",
                limits.request_burst, limits.request_interval
            )));
        }
        bucket.tokens -= 1.0;
        Ok(())
    }

    /// A slot for one request in flight, waiting at most until `deadline`.
    pub(crate) async fn slot(
        &self,
        plugin: &str,
        limits: &HttpLimits,
        deadline: tokio::time::Instant,
    ) -> Result<OwnedSemaphorePermit, HttpError> {
        let wait = self.in_flight.clone().acquire_owned();
        match tokio::time::timeout_at(deadline, wait).await {
            Ok(Ok(permit)) => Ok(permit),
            // The semaphore is never closed; a closed one refuses like a full one.
            Ok(Err(_)) | Err(_) => Err(HttpError::Limit(format!(
                "plugin `{plugin}` already has {} requests in flight and none finished \
                 within the request timeout",
                limits.max_concurrent_requests
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn the_burst_is_spent_then_refused_per_plugin() {
        let limits = HttpLimits {
            request_burst: 2,
            request_interval: Duration::from_secs(3600),
            ..HttpLimits::default()
        };
        let budgets = Budgets::default();
        let kb = budgets.of("kb", &limits);
        assert_eq!(kb.spend("kb", &limits), Ok(()));
        assert_eq!(budgets.of("kb", &limits).spend("kb", &limits), Ok(()));
        let err = kb.spend("kb", &limits).expect_err("over the burst");
        assert!(
            err.to_string().contains("plugin `kb` made more than 2"),
            "{err}"
        );
        let other = budgets.of("tracker", &limits);
        assert_eq!(other.spend("tracker", &limits), Ok(()));
    }

    #[test]
    fn a_zero_interval_never_runs_dry() {
        let limits = HttpLimits {
            request_burst: 1,
            request_interval: Duration::ZERO,
            ..HttpLimits::default()
        };
        let budget = Budgets::default().of("kb", &limits);
        for _ in 0..10 {
            assert_eq!(budget.spend("kb", &limits), Ok(()));
        }
    }
}

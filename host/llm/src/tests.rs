//! The broker against the stand-in: the grant's concurrency holds calls back (and a larger one
//! lets them run together), the key is attached and never handed back, and two brokers given
//! one budget store share the day's tokens.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use guild_core::llm::{BudgetKind, ChatMessage, ChatRequest, LlmError, LlmSettings, ModelGrant};
use tokio::time::Instant;

use crate::standin::{StandIn, Step};
use crate::{Broker, BudgetError, CallScope, TokenBudgets};

const KEY: &str = "sk-unit-5d1e8a7c3b9f2e4d6a0c";

fn settings(base_url: &str) -> LlmSettings {
    let text = format!(
        "[endpoints.local]\nbase_url = \"{base_url}\"\napi_key_env = \"KEY\"\n\
         [models]\nfast = {{ endpoint = \"local\", model = \"m\" }}\n"
    );
    toml::from_str(&text).expect("settings")
}

fn key(v: &str) -> Option<String> {
    (v == "KEY").then(|| KEY.to_owned())
}

fn broker(base_url: &str) -> Broker {
    Broker::start(&settings(base_url), Path::new("."), None, key).expect("starts")
}

fn grant(concurrency: u32) -> ModelGrant {
    ModelGrant {
        models: ["fast".to_owned()].into(),
        concurrency,
        requested: true,
        ..ModelGrant::default()
    }
}

fn request() -> ChatRequest {
    ChatRequest {
        model: "fast".into(),
        messages: vec![ChatMessage::User {
            content: "hi".into(),
        }],
        tools: vec![],
        max_tokens: None,
        temperature: None,
        stop: vec![],
    }
}

/// Two calls started together; returns how many requests the stand-in holds once the second
/// call has had time to send, and the calls' answers.
async fn two_calls(concurrency: u32) -> (usize, Vec<Result<String, LlmError>>) {
    let slow = Step::Slow(
        Duration::from_millis(1500),
        Box::new(Step::Text("ok".into())),
    );
    let s = StandIn::start(vec![slow]).await.expect("stand-in");
    let b = broker(&s.base_url());
    let g = grant(concurrency);
    let deadline = Instant::now() + Duration::from_secs(30);
    let call = || {
        let (b, g) = (b.clone(), g.clone());
        tokio::spawn(async move {
            let scope = CallScope {
                plugin: "p",
                grant: &g,
                task_tokens: 0,
                deadline,
            };
            b.complete(&scope, request())
                .await
                .map(|c| c.answer.content.unwrap_or_default())
        })
    };
    let first = call();
    while s.requests().is_empty() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let second = call();
    // Long enough for the second call to send if it may; far shorter than the slow answer.
    for _ in 0..50 {
        if s.requests().len() > 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let seen = s.requests().len();
    let answers = vec![first.await.expect("joins"), second.await.expect("joins")];
    assert!(
        s.requests()
            .iter()
            .all(|r| r.authorization.as_deref() == Some(&*format!("Bearer {KEY}")))
    );
    (seen, answers)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_one_holds_the_second_call_until_the_first_is_answered() {
    let (seen, answers) = two_calls(1).await;
    assert_eq!(seen, 1, "the second call waited for the slot");
    assert!(
        answers.iter().all(|a| a.as_deref() == Ok("ok")),
        "{answers:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_two_lets_both_calls_run_together() {
    let (seen, answers) = two_calls(2).await;
    assert_eq!(seen, 2, "both calls were in flight at once");
    assert!(
        answers.iter().all(|a| a.as_deref() == Ok("ok")),
        "{answers:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_echoed_key_is_redacted_from_the_upstream_error() {
    let s = StandIn::start(vec![Step::EchoAuthorization])
        .await
        .expect("stand-in");
    let b = broker(&s.base_url());
    let g = grant(1);
    let scope = CallScope {
        plugin: "p",
        grant: &g,
        task_tokens: 0,
        deadline: Instant::now() + Duration::from_secs(30),
    };
    let Err(LlmError::Upstream { status, message }) = b.complete(&scope, request()).await else {
        panic!("expected an upstream error");
    };
    assert_eq!(status, 400);
    assert!(message.starts_with("invalid api key: Bearer "), "{message}");
    assert!(
        !message.contains(KEY) && !message.contains("5d1e8a7c"),
        "{message}"
    );
}

/// A budget store two brokers share, as two hosts share one on PostgreSQL.
#[derive(Debug, Default)]
struct Shared(Mutex<HashMap<(String, i64), u64>>);

impl TokenBudgets for Shared {
    fn used(&self, plugin: &str, day: i64) -> Result<u64, BudgetError> {
        let counts = self.0.lock().expect("not poisoned");
        Ok(counts.get(&(plugin.to_owned(), day)).copied().unwrap_or(0))
    }

    fn add(&self, plugin: &str, day: i64, tokens: u64) -> Result<(), BudgetError> {
        let mut counts = self.0.lock().expect("not poisoned");
        *counts.entry((plugin.to_owned(), day)).or_default() += tokens;
        Ok(())
    }
}

/// A store that cannot be read.
#[derive(Debug)]
struct Broken;

impl TokenBudgets for Broken {
    fn used(&self, _: &str, _: i64) -> Result<u64, BudgetError> {
        Err(BudgetError {
            store: "the test store".into(),
            op: "read a daily count",
            reason: "unreachable".into(),
        })
    }

    fn add(&self, _: &str, _: i64, _: u64) -> Result<(), BudgetError> {
        self.used("", 0).map(drop)
    }
}

async fn call(b: &Broker, tokens_per_day: u64) -> Result<String, LlmError> {
    let g = ModelGrant {
        tokens_per_day: Some(tokens_per_day),
        ..grant(1)
    };
    let scope = CallScope {
        plugin: "p",
        grant: &g,
        task_tokens: 0,
        deadline: Instant::now() + Duration::from_secs(30),
    };
    b.complete(&scope, request())
        .await
        .map(|c| c.answer.content.unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn brokers_on_one_budget_store_share_the_days_tokens() {
    let s = StandIn::start(vec![]).await.expect("stand-in");
    let store = Arc::new(Shared::default());
    let start = |budgets: Arc<dyn TokenBudgets>| {
        Broker::start_with_budgets(&settings(&s.base_url()), Path::new("."), budgets, key)
            .expect("starts")
    };
    let (a, b) = (start(store.clone()), start(store.clone()));
    assert_eq!(call(&a, 1000).await.as_deref(), Ok("ok"));
    let spent = a.used_today("p");
    assert!(spent > 0, "the call's tokens are counted");
    assert_eq!(b.used_today("p"), spent, "the other broker sees them");
    // Above what the first broker spent: allowed.
    assert_eq!(call(&b, spent + 1).await.as_deref(), Ok("ok"));
    // Now both calls' tokens count: refused on either broker, before anything is sent.
    let sent = s.requests().len();
    for broker in [&a, &b] {
        match call(broker, spent + 1).await {
            Err(LlmError::BudgetExceeded {
                budget: BudgetKind::DailyTokens,
                limit,
                used,
            }) => assert_eq!((limit, used), (spent + 1, 2 * spent)),
            other => panic!("expected the daily budget to refuse, got {other:?}"),
        }
    }
    assert_eq!(s.requests().len(), sent, "refused calls sent nothing");

    // A store that cannot be read refuses the call, naming the store.
    let broken = start(Arc::new(Broken));
    match call(&broken, 1000).await {
        Err(LlmError::Upstream { message, .. }) => assert!(
            message.contains("daily model budget") && message.contains("the test store"),
            "{message}"
        ),
        other => panic!("expected an unreadable store to refuse, got {other:?}"),
    }
    assert_eq!(s.requests().len(), sent, "nothing sent");
}

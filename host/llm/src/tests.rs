//! The broker against the stand-in: the grant's concurrency holds calls back (and a larger one
//! lets them run together), and the key is attached and never handed back.

use std::path::Path;
use std::time::Duration;

use guild_core::llm::{ChatMessage, ChatRequest, LlmError, LlmSettings, ModelGrant};
use tokio::time::Instant;

use crate::standin::{StandIn, Step};
use crate::{Broker, CallScope};

const KEY: &str = "sk-unit-5d1e8a7c3b9f2e4d6a0c";

fn broker(base_url: &str) -> Broker {
    let text = format!(
        "[endpoints.local]\nbase_url = \"{base_url}\"\napi_key_env = \"KEY\"\n\
         [models]\nfast = {{ endpoint = \"local\", model = \"m\" }}\n"
    );
    let settings: LlmSettings = toml::from_str(&text).expect("settings");
    Broker::start(&settings, Path::new("."), None, |v| {
        (v == "KEY").then(|| KEY.to_owned())
    })
    .expect("starts")
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

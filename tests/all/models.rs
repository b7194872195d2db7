//! Model access through the host (docs/models.md): the `asker` test specialist calls the
//! scripted stand-in endpoint on 127.0.0.1 through the broker. Grants in pairs (allowed and
//! denied: not requested, not granted, empty grant, alias not granted, not configured),
//! budgets per task and per day (surviving a restart), retries, upstream errors, the deadline,
//! malformed answers, cancellation, usage in the task result, and the key never reaching a
//! guest.

use std::path::{Path, PathBuf};
use std::time::Duration;

use guild_host::background::BackgroundStatus;
use guild_host::capability::RowStatus;
use guild_host::llm::standin::{Recorded, StandIn, Step};
use guild_host::types::{TaskResult, TaskStatus};
use guild_host::{Config, Host};
use serde_json::{Value, json};

/// The key the endpoint is configured with (written to a key file the host reads at start).
const KEY: &str = "sk-test-7f3a9c1e5b2d8f4a6c0e9b7d";

/// `asker`'s folder copied into `dir`, its manifest's `[capabilities] llm` line replaced by
/// `llm` (`None` removes it).
fn asker_in(dir: &Path, llm: Option<&str>) -> PathBuf {
    let from = guild_tests::plugin_dir("testing/asker");
    let to = dir.join("asker");
    std::fs::create_dir_all(&to).expect("mkdir");
    for f in ["asker.wasm", "prompt.md"] {
        std::fs::copy(from.join(f), to.join(f)).expect("copy");
    }
    let manifest = std::fs::read_to_string(from.join("plugin.toml")).expect("manifest");
    let manifest = manifest.replace("llm = true\n", llm.unwrap_or(""));
    std::fs::write(to.join("plugin.toml"), manifest).expect("write manifest");
    to
}

/// `guild.toml` text: the stand-in as endpoint `local` with models `fast` and `smart`, then
/// `extra` (grants and settings).
fn config_text(folder: &Path, base_url: &str, extra: &str) -> String {
    format!(
        "[host]\nplugins = [{:?}]\ndata_dir = \".guild\"\n\n\
         [llm.endpoints.local]\nbase_url = \"{base_url}\"\napi_key_file = \"key\"\n\
         [llm.models]\nfast = {{ endpoint = \"local\", model = \"m-fast\" }}\n\
         smart = {{ endpoint = \"local\", model = \"m-smart\" }}\n\n{extra}",
        folder.display().to_string()
    )
}

async fn start(dir: &Path, text: &str) -> Host {
    std::fs::write(dir.join("key"), format!("{KEY}\n")).expect("key file");
    let config = Config::parse(text, &dir.join("guild.toml"), dir).expect("config parses");
    let host = Host::with_engine(config, guild_tests::engine())
        .await
        .expect("host starts");
    assert!(host.load_errors().is_empty(), "{:?}", host.load_errors());
    host
}

/// A host with `asker` (manifest `llm = true`) granted `grant` (the `[grants.asker.llm]` body;
/// `None`: no such table).
pub(crate) async fn host(dir: &Path, standin: &StandIn, grant: Option<&str>, extra: &str) -> Host {
    let folder = asker_in(dir, Some("llm = true\n"));
    let grant = grant.map_or_else(String::new, |g| format!("[grants.asker.llm]\n{g}\n"));
    let extra = format!("[grants.asker]\nconfig = {{ greeting = \"hi\" }}\n{grant}{extra}");
    start(dir, &config_text(&folder, &standin.base_url(), &extra)).await
}

/// Runs `asker` with `brief`; the result and its details as JSON.
pub(crate) async fn ask(h: &Host, brief: Value) -> (TaskResult, Value) {
    let done = h
        .task("asker", &brief.to_string())
        .await
        .expect("task starts");
    let details = done
        .report
        .as_ref()
        .map(|r| serde_json::from_str(&r.details).expect("details are JSON"))
        .unwrap_or(Value::Null);
    (done, details)
}

pub(crate) fn complete(model: &str, times: u32) -> Value {
    json!({"op": "complete", "model": model, "user": "hello", "times": times})
}

/// The error text of the `i`th answer, `""` when it succeeded.
pub(crate) fn error(details: &Value, i: usize) -> &str {
    details[i]["error"].as_str().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_granted_alias_is_answered_the_key_sent_and_usage_in_the_result() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = StandIn::start(vec![Step::ToolCalls(vec![(
        "call-1".into(),
        "look".into(),
        "{\"q\":1}".into(),
    )])])
    .await
    .expect("stand-in");
    let h = host(dir.path(), &s, Some("models = [\"fast\"]"), "").await;

    let brief = json!({"op": "complete", "model": "fast", "user": "find it",
                       "tools": [{"name": "look"}]});
    let (done, details) = ask(&h, brief).await;
    assert_eq!(done.status, TaskStatus::Succeeded, "{:?}", done.error);
    assert_eq!(details[0]["ok"], json!(true), "{details}");
    assert_eq!(details[0]["finish_reason"], json!("ToolCalls"));
    assert_eq!(details[0]["tool_calls"][0]["name"], json!("look"));
    assert_eq!(details[0]["tool_calls"][0]["arguments"], json!("{\"q\":1}"));

    let sent: Vec<Recorded> = s.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0].authorization.as_deref(),
        Some(&*format!("Bearer {KEY}"))
    );
    assert_eq!(sent[0].body["model"], json!("m-fast"));
    assert_eq!(sent[0].body["messages"][1]["content"], json!("find it"));
    assert_eq!(sent[0].body["tools"][0]["type"], json!("function"));
    assert_eq!(sent[0].body["tools"][0]["function"]["name"], json!("look"));
    assert_eq!(sent[0].body["max_tokens"], json!(64));

    let usage = &done.usage.models["fast"];
    assert_eq!(
        (usage.calls, usage.prompt_tokens, usage.completion_tokens),
        (1, 11, 7)
    );
    let json = serde_json::to_value(&done).expect("serialises");
    assert_eq!(json["usage"]["models"]["fast"]["calls"], json!(1));
    assert!(
        done.transcripts.is_empty(),
        "transcripts are off by default"
    );

    let (_, models) = ask(&h, json!({"op": "models"})).await;
    assert_eq!(models, json!(["fast"]));
    let rows = &h.plugins()[0].capabilities;
    let row = rows
        .iter()
        .find(|r| r.capability == "llm")
        .expect("an llm row");
    assert!(
        matches!(&row.status, RowStatus::Granted(d) if d.contains("m-fast at local")),
        "{row:?}"
    );
}

/// A refusal case: its name, the manifest's `llm` line, the grant, the alias called, and how
/// the error starts.
type Denial = (
    &'static str,
    Option<&'static str>,
    Option<&'static str>,
    &'static str,
    &'static str,
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn not_requested_not_granted_empty_and_other_aliases_are_refused_before_any_request() {
    let s = StandIn::start(vec![]).await.expect("stand-in");
    let cases: [Denial; 5] = [
        (
            "not requested",
            None,
            Some("models = [\"fast\"]"),
            "fast",
            "denied: ",
        ),
        (
            "not granted",
            Some("llm = true\n"),
            None,
            "fast",
            "denied: ",
        ),
        (
            "empty grant",
            Some("llm = true\n"),
            Some("models = []"),
            "fast",
            "denied: ",
        ),
        (
            "alias not granted",
            Some("llm = true\n"),
            Some("models = [\"fast\"]"),
            "smart",
            "model-not-granted: ",
        ),
        (
            "not configured",
            Some("llm = true\n"),
            Some("models = [\"fast\"]"),
            "nope",
            "model-not-granted: ",
        ),
    ];
    for (case, line, grant, alias, want) in cases {
        let dir = tempfile::tempdir().expect("tempdir");
        let folder = asker_in(dir.path(), line);
        let grant = grant.map_or_else(String::new, |g| format!("[grants.asker.llm]\n{g}\n"));
        let h = start(dir.path(), &config_text(&folder, &s.base_url(), &grant)).await;
        let (done, details) = ask(&h, complete(alias, 1)).await;
        assert_eq!(
            done.status,
            TaskStatus::Succeeded,
            "{case}: {:?}",
            done.error
        );
        let e = error(&details, 0);
        assert!(e.starts_with(want), "{case}: {e}");
        assert!(
            e.contains("asker"),
            "{case}: the refusal names the plugin: {e}"
        );
        assert!(done.usage.models.is_empty(), "{case}");
    }
    assert!(
        s.requests().is_empty(),
        "no refused call reached the endpoint"
    );

    // Allowed, on the same stand-in: the granted alias.
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), &s, Some("models = [\"fast\"]"), "").await;
    let (_, details) = ask(&h, complete("fast", 1)).await;
    assert_eq!(details[0]["content"], json!("ok"), "{details}");
    assert_eq!(s.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_task_budget_refuses_before_sending_and_the_daily_one_survives_a_restart() {
    let s = StandIn::start(vec![]).await.expect("stand-in");
    // Every call spends 18 tokens.
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(
        dir.path(),
        &s,
        Some("models = [\"fast\"]\ntokens_per_task = 18"),
        "",
    )
    .await;
    let (done, details) = ask(&h, complete("fast", 2)).await;
    assert_eq!(details[0]["ok"], json!(true), "{details}");
    assert!(
        error(&details, 1).starts_with("budget-exceeded: task token budget spent (18 of 18"),
        "{details}"
    );
    assert_eq!(done.usage.models["fast"].calls, 1);
    assert_eq!(s.requests().len(), 1, "the refused call sent nothing");
    // A new task has its own budget.
    let (_, details) = ask(&h, complete("fast", 1)).await;
    assert_eq!(details[0]["ok"], json!(true), "{details}");
    drop(h);

    let dir = tempfile::tempdir().expect("tempdir");
    let grant = Some("models = [\"fast\"]\ntokens_per_day = 30");
    let h = host(dir.path(), &s, grant, "").await;
    let (_, details) = ask(&h, complete("fast", 3)).await;
    assert_eq!(details[0]["ok"], json!(true), "{details}");
    assert_eq!(details[1]["ok"], json!(true), "{details}");
    assert!(
        error(&details, 2).starts_with("budget-exceeded: daily token budget spent (36 of 30"),
        "{details}"
    );
    drop(h);
    // Restarted on the same data folder: the day's tokens are still spent.
    let h = host(dir.path(), &s, grant, "").await;
    let (_, details) = ask(&h, complete("fast", 1)).await;
    assert!(
        error(&details, 0).starts_with("budget-exceeded: daily"),
        "{details}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limits_are_retried_and_errors_reported_with_their_status() {
    let dir = tempfile::tempdir().expect("tempdir");
    let busy = |status| Step::Status {
        status,
        message: "busy".into(),
        retry_after: Some(0),
    };
    let s = StandIn::start(vec![busy(429), Step::Text("after a retry".into())])
        .await
        .expect("stand-in");
    let h = host(dir.path(), &s, Some("models = [\"fast\"]"), "").await;
    let (_, details) = ask(&h, complete("fast", 1)).await;
    assert_eq!(details[0]["content"], json!("after a retry"), "{details}");
    assert_eq!(s.requests().len(), 2);

    // Always 429: the retries run out and the plugin gets rate-limited.
    let s = StandIn::start(vec![busy(429)]).await.expect("stand-in");
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), &s, Some("models = [\"fast\"]"), "").await;
    let (_, details) = ask(&h, complete("fast", 1)).await;
    assert!(
        error(&details, 0).starts_with("rate-limited: retry after 0 ms"),
        "{details}"
    );
    assert_eq!(s.requests().len(), 4, "the first attempt and three retries");

    // Always 500: upstream error with the status and the provider's message.
    let s = StandIn::start(vec![busy(500)]).await.expect("stand-in");
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), &s, Some("models = [\"fast\"]"), "").await;
    let (_, details) = ask(&h, complete("fast", 1)).await;
    assert_eq!(error(&details, 0), "upstream: HTTP 500: busy", "{details}");

    // A malformed body is a malformed answer, not retried.
    let s = StandIn::start(vec![Step::Raw("{\"choices\": [".into())])
        .await
        .expect("stand-in");
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), &s, Some("models = [\"fast\"]"), "").await;
    let (_, details) = ask(&h, complete("fast", 1)).await;
    assert!(
        error(&details, 0).starts_with("malformed-answer: "),
        "{details}"
    );
    assert_eq!(s.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_endpoint_times_out_and_the_task_deadline_ends_the_call() {
    let slow = Step::Slow(
        Duration::from_secs(120),
        Box::new(Step::Text("late".into())),
    );
    let s = StandIn::start(vec![slow]).await.expect("stand-in");

    // The endpoint's own timeout: the plugin gets `timeout` and carries on.
    let dir = tempfile::tempdir().expect("tempdir");
    let folder = asker_in(dir.path(), Some("llm = true\n"));
    let text = config_text(
        &folder,
        &s.base_url(),
        "[grants.asker.llm]\nmodels = [\"fast\"]\n",
    )
    .replace(
        "api_key_file = \"key\"\n",
        "api_key_file = \"key\"\ntimeout_s = 1\n",
    );
    let h = start(dir.path(), &text).await;
    let (done, details) = ask(&h, complete("fast", 1)).await;
    assert_eq!(done.status, TaskStatus::Succeeded, "{:?}", done.error);
    assert_eq!(
        error(&details, 0),
        "timeout: the endpoint did not answer within 1 s",
        "{details}"
    );

    // The task's deadline (2 s) passes first: the task times out instead of waiting 120 s.
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(
        dir.path(),
        &s,
        Some("models = [\"fast\"]"),
        "[grants.asker.limits]\ntimeout_s = 2\n",
    )
    .await;
    let (done, _) = ask(&h, complete("fast", 1)).await;
    assert_eq!(done.status, TaskStatus::TimedOut, "{:?}", done.error);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_task_aborts_its_call_in_flight() {
    let slow = Step::Slow(
        Duration::from_secs(120),
        Box::new(Step::Text("late".into())),
    );
    let s = StandIn::start(vec![slow]).await.expect("stand-in");
    let dir = tempfile::tempdir().expect("tempdir");
    let h = host(dir.path(), &s, Some("models = [\"fast\"]"), "").await;
    let id = h
        .start_task("asker", &complete("fast", 1).to_string())
        .expect("starts");
    for _ in 0..400 {
        if !s.requests().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(s.requests().len(), 1, "the call is in flight");
    h.cancel_task(&id).expect("cancels");
    let record = h.wait_task(&id).await.expect("ends");
    assert_eq!(record.status, BackgroundStatus::Cancelled);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_never_reaches_the_guest_even_when_the_endpoint_echoes_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = StandIn::start(vec![Step::EchoAuthorization, Step::Text("fine".into())])
        .await
        .expect("stand-in");
    let h = host(
        dir.path(),
        &s,
        Some("models = [\"fast\"]"),
        "[llm]\nrecord_transcripts = true\n",
    )
    .await;
    let brief = json!({"op": "dump", "model": "fast", "user": "hi", "times": 2});
    let (done, details) = ask(&h, brief).await;
    let text = details["text"].as_str().expect("a dump");
    // Allowed: the endpoint got the key, and the plugin saw both answers (the first redacted).
    assert_eq!(
        s.requests()[0].authorization.as_deref(),
        Some(&*format!("Bearer {KEY}"))
    );
    assert!(text.contains("config: Ok(\"hi\")"), "{text}");
    assert!(
        error(&details["answers"], 0).starts_with("upstream: HTTP 400: invalid api key: "),
        "{details}"
    );
    assert_eq!(details["answers"][1]["content"], json!("fine"), "{details}");
    // Denied: the key is nowhere in what the guest saw, nor in the task's result.
    assert!(!text.contains(KEY), "the guest saw the key: {text}");
    let all = serde_json::to_string(&done).expect("serialises");
    assert!(!all.contains(KEY), "the result holds the key");
    assert_eq!(
        done.transcripts.len(),
        1,
        "one answered call, one transcript"
    );
    assert!(!all.contains("sk-test"), "no part of the key either");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_key_variable_stops_the_host_naming_endpoint_and_variable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let folder = asker_in(dir.path(), Some("llm = true\n"));
    let text = config_text(&folder, "http://127.0.0.1:9/v1", "").replace(
        "api_key_file = \"key\"",
        "api_key_env = \"GUILD_TEST_NO_SUCH_VARIABLE\"",
    );
    let config = Config::parse(&text, &dir.path().join("guild.toml"), dir.path()).expect("parses");
    let Err(e) = Host::with_engine(config, guild_tests::engine()).await else {
        panic!("the host started without its key");
    };
    let e = e.to_string();
    assert!(
        e.contains("[llm.endpoints.local]") && e.contains("GUILD_TEST_NO_SUCH_VARIABLE"),
        "{e}"
    );
    // With the key (from its file) the same configuration starts.
    let text = config_text(&folder, "http://127.0.0.1:9/v1", "");
    start(dir.path(), &text).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_definition_is_read_at_load_and_follows_prompt_edits_on_reload() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = StandIn::start(vec![]).await.expect("stand-in");
    let h = host(dir.path(), &s, None, "").await;
    let (_, d) = ask(&h, json!({"op": "definition"})).await;
    assert_eq!(d["name"], json!("asker"));
    assert_eq!(
        d["prompt"],
        json!("You are the asker test specialist. Answer in one word.\n")
    );
    assert_eq!(d["settings"], json!({"model": "fast", "max_turns": 3}));

    let prompt = dir.path().join("asker").join("prompt.md");
    std::fs::write(&prompt, "Answer in two words.").expect("edit");
    assert!(h.reload().await.is_empty());
    let (_, d) = ask(&h, json!({"op": "definition"})).await;
    assert_eq!(d["prompt"], json!("Answer in two words."));

    // Too large: the reload is refused naming the file, and the loaded version keeps serving.
    std::fs::write(&prompt, "x".repeat(64 * 1024 + 1)).expect("edit");
    let errors = h.reload().await;
    assert!(
        errors
            .iter()
            .any(|e| e.contains("prompt.md") && e.contains("larger than")),
        "{errors:?}"
    );
    let (_, d) = ask(&h, json!({"op": "definition"})).await;
    assert_eq!(d["prompt"], json!("Answer in two words."));
}

//! The loop against a scripted model and scripted tools, natively.

use std::collections::VecDeque;

use super::*;
use crate::ToolSpec;
use crate::llm::{Answer, Budget};

/// Answers from a script, and remembers every request.
struct Scripted {
    answers: VecDeque<Result<Answer, LlmError>>,
    requests: Vec<Request>,
}

impl Scripted {
    fn new(answers: Vec<Result<Answer, LlmError>>) -> Self {
        Self {
            answers: answers.into(),
            requests: Vec::new(),
        }
    }
}

impl Model for Scripted {
    fn complete(&mut self, request: &Request) -> Result<Answer, LlmError> {
        self.requests.push(request.clone());
        self.answers
            .pop_front()
            .unwrap_or_else(|| Ok(Answer::text("script over")))
    }
}

/// Every call succeeds with external id `7`; remembers the calls.
#[derive(Default)]
struct Recorder {
    called: Vec<(String, String)>,
    after: usize,
}

impl Tools for Recorder {
    fn call(&mut self, name: &str, input: &str) -> Result<ToolOutcome, HostError> {
        self.called.push((name.to_owned(), input.to_owned()));
        Ok(ToolOutcome::success(json!({"number": 7})).external_id("7"))
    }

    fn local(&mut self, name: &str, arguments: &Value) -> String {
        format!("local {name} {arguments}")
    }

    fn after_call(&mut self, _record: &CallRecord) {
        self.after += 1;
    }
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

fn granted(name: &str, mutating: bool) -> GrantedTool {
    let mut spec = ToolSpec::new(name.rsplit('.').next().unwrap_or(name), "does it")
        .schema(json!({"type": "object"}));
    if mutating {
        spec = spec.mutating("issue", "create");
    }
    GrantedTool {
        name: name.into(),
        spec,
    }
}

fn chat() -> ToolLoop {
    ToolLoop::new("fast")
        .system("be brief")
        .user("file it")
        .offer_connector(&granted("tracker.create_issue", true))
}

fn tool_content(chat: &ToolLoop, call_id: &str) -> Value {
    let text = chat
        .messages()
        .iter()
        .find_map(|m| match m {
            Message::Tool {
                call_id: id,
                content,
            } if id == call_id => Some(content.clone()),
            _ => None,
        })
        .expect("a tool message answers the call");
    serde_json::from_str(&text).expect("tool messages are JSON")
}

#[test]
fn runs_an_offered_tool_under_its_connector_name_and_records_it() {
    let mut model = Scripted::new(vec![
        Ok(Answer::calls(vec![call(
            "c1",
            "tracker__create_issue",
            r#"{"title":"x"}"#,
        )])),
        Ok(Answer::text("done")),
    ]);
    let mut tools = Recorder::default();
    let mut chat = chat();
    assert_eq!(
        chat.run(&mut model, &mut tools),
        Ending::Answered("done".into())
    );
    assert_eq!(
        tools.called,
        [("tracker.create_issue".into(), r#"{"title":"x"}"#.into())]
    );
    assert_eq!(tools.after, 1);
    let record = &chat.calls()[0];
    assert!(record.succeeded() && record.mutating);
    assert_eq!(record.external_id(), Some("7"));
    let content = tool_content(&chat, "c1");
    assert_eq!(content["status"], "success");
    assert_eq!(content["external_id"], "7");
    assert_eq!(content["output"]["number"], 7);
    assert_eq!(model.requests[0].tools[0].name, "tracker__create_issue");
    assert_eq!(chat.steps(), 2);
}

#[test]
fn a_tool_that_was_not_offered_is_refused_and_the_loop_goes_on() {
    let mut model = Scripted::new(vec![
        Ok(Answer::calls(vec![
            call("c1", "tracker__close_issue", "{}"),
            call("c2", "tracker.create_issue", "{}"),
        ])),
        Ok(Answer::text("sorry")),
    ]);
    let mut tools = Recorder::default();
    let mut chat = chat();
    assert_eq!(
        chat.run(&mut model, &mut tools),
        Ending::Answered("sorry".into())
    );
    assert!(tools.called.is_empty() && chat.calls().is_empty());
    for id in ["c1", "c2"] {
        let error = tool_content(&chat, id)["error"].as_str().map(str::to_owned);
        let error = error.expect("a refusal");
        assert!(error.contains("is available to you") && error.contains("tracker__create_issue"));
    }
}

#[test]
fn malformed_arguments_get_an_error_and_nothing_is_called() {
    let mut model = Scripted::new(vec![
        Ok(Answer::calls(vec![
            call("c1", "tracker__create_issue", "{title: x"),
            call("c2", "tracker__create_issue", "[1]"),
            call("c3", "tracker__create_issue", ""),
        ])),
        Ok(Answer::text("ok")),
    ]);
    let mut tools = Recorder::default();
    let mut chat = chat();
    chat.run(&mut model, &mut tools);
    for id in ["c1", "c2"] {
        let error = tool_content(&chat, id)["error"].as_str().map(str::to_owned);
        assert!(
            error.is_some_and(|e| e.contains("not a JSON object")),
            "{id}"
        );
    }
    // Empty arguments are an empty object (models send them for parameterless tools).
    assert_eq!(tools.called, [("tracker.create_issue".into(), "{}".into())]);
}

#[test]
fn the_step_limit_ends_a_model_that_keeps_calling() {
    let again = || {
        Ok(Answer::calls(vec![call(
            "c",
            "tracker__create_issue",
            "{}",
        )]))
    };
    let mut model = Scripted::new(vec![again(), again(), again(), again()]);
    let mut tools = Recorder::default();
    let mut chat = chat().max_steps(3);
    assert_eq!(chat.run(&mut model, &mut tools), Ending::StepLimit);
    assert_eq!(
        (chat.steps(), model.requests.len(), tools.called.len()),
        (3, 3, 3)
    );
    assert_eq!(chat.steps_left(), 0);
    assert_eq!(chat.run(&mut model, &mut tools), Ending::StepLimit);
    assert_eq!(model.requests.len(), 3);
}

#[test]
fn a_model_error_ends_the_run_with_the_calls_so_far() {
    let spent = LlmError::BudgetExceeded {
        budget: Budget::TaskTokens,
        limit: 10,
        used: 12,
    };
    let mut model = Scripted::new(vec![
        Ok(Answer::calls(vec![call(
            "c1",
            "tracker__create_issue",
            "{}",
        )])),
        Err(spent.clone()),
    ]);
    let mut tools = Recorder::default();
    let mut chat = chat();
    assert_eq!(
        chat.run(&mut model, &mut tools),
        Ending::ModelError(spent.clone())
    );
    assert!(spent.is_final());
    assert_eq!(chat.calls().len(), 1);
}

#[test]
fn local_tools_go_to_the_caller_and_are_not_recorded() {
    let mut model = Scripted::new(vec![
        Ok(Answer::calls(vec![call(
            "c1",
            "load_skill",
            r#"{"name":"a"}"#,
        )])),
        Ok(Answer::text("ok")),
    ]);
    let mut tools = Recorder::default();
    let mut chat = chat().offer_local(ToolDefinition::new("load_skill", "loads", &json!({})));
    chat.run(&mut model, &mut tools);
    assert!(chat.calls().is_empty() && tools.called.is_empty());
    let answered = chat.messages().iter().any(|m| {
        matches!(m, Message::Tool { content, .. } if content == r#"local load_skill {"name":"a"}"#)
    });
    assert!(answered);
}

#[test]
fn names_are_legal_and_unique() {
    assert_eq!(function_name("kb.search"), "kb__search");
    assert_eq!(function_name("my-conn.do it"), "my-conn__do_it");
    assert_eq!(function_name(&"a".repeat(80)).len(), 64);
    let chat = ToolLoop::new("m")
        .offer_connector(&granted("a.b", false))
        .offer_connector(&granted("a__b", false));
    let names: Vec<&str> = chat.offered().iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["a__b", "a__b_2"]);
    assert_eq!(chat.connector_tool("a__b_2"), Some("a__b"));
    assert_eq!(chat.connector_tool("a__b"), Some("a.b"));
}

#[test]
fn refused_and_failed_calls_read_as_such() {
    struct Refuser;
    impl Tools for Refuser {
        fn call(&mut self, name: &str, _input: &str) -> Result<ToolOutcome, HostError> {
            if name.ends_with("create_issue") {
                Err(HostError::Denied("denied: not granted".into()))
            } else {
                Ok(ToolOutcome::failed("HTTP 500"))
            }
        }
    }
    let mut model = Scripted::new(vec![
        Ok(Answer::calls(vec![
            call("c1", "tracker__create_issue", "{}"),
            call("c2", "tracker__search_issues", "{}"),
        ])),
        Ok(Answer::text("ok")),
    ]);
    let mut chat = chat().offer_connector(&granted("tracker.search_issues", false));
    chat.run(&mut model, &mut Refuser);
    assert_eq!(tool_content(&chat, "c1")["status"], "refused");
    assert_eq!(tool_content(&chat, "c2")["error"], "HTTP 500");
    assert!(chat.calls().iter().all(|c| !c.succeeded()));
}

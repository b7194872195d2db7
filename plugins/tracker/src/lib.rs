//! Connector `tracker`: issue tools over GitHub's REST issues API. Configured by `base_url` and
//! `repo`; the `TRACKER_TOKEN` secret is attached by the host, never read here.
//!
//! Each tool is a type (`guild_sdk::Tool`) whose input is a serde struct: its JSON Schema is
//! derived from the struct and its doc comments, and a `Toolbox` routes calls, so no tool
//! parses JSON or writes a schema by hand.

mod github;

use std::num::NonZeroU64;

use guild_sdk::{Connector, Tool, ToolOutcome, ToolSpec, Toolbox, log};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use github::Repo;

/// Input of `create_issue`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateIssueInput {
    /// Issue title.
    #[schemars(length(min = 1))]
    title: String,
    /// Markdown body.
    #[serde(default)]
    body: Option<String>,
    /// Label names.
    #[serde(default)]
    labels: Option<Vec<String>>,
}

/// `create_issue`: opens an issue; mutating, so the host records a receipt.
struct CreateIssue;

impl Tool for CreateIssue {
    type Input = CreateIssueInput;
    const NAME: &'static str = "create_issue";
    const DESCRIPTION: &'static str =
        "Create an issue in the configured repository. Search first to avoid duplicates.";

    fn spec(spec: ToolSpec) -> ToolSpec {
        spec.mutating("issue", "create")
    }

    fn run(input: CreateIssueInput) -> ToolOutcome {
        if input.title.trim().is_empty() {
            return ToolOutcome::invalid_input("field `title` must not be empty");
        }
        finish(Self::NAME, create_issue(input))
    }
}

/// Input of `search_issues`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchIssuesInput {
    /// Search terms and qualifiers; the repository is added.
    #[schemars(length(min = 1))]
    query: String,
}

/// `search_issues`: GitHub issue search within the configured repository.
struct SearchIssues;

impl Tool for SearchIssues {
    type Input = SearchIssuesInput;
    const NAME: &'static str = "search_issues";
    const DESCRIPTION: &'static str = "Search issues in the configured repository with GitHub \
         search syntax, e.g. `is:open in:title \"crash on start\"`.";

    fn run(input: SearchIssuesInput) -> ToolOutcome {
        if input.query.trim().is_empty() {
            return ToolOutcome::invalid_input("field `query` must not be empty");
        }
        finish(Self::NAME, search_issues(&input.query))
    }
}

/// Input of `get_issue`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetIssueInput {
    /// Issue number.
    number: NonZeroU64,
}

/// `get_issue`: one issue with its body.
struct GetIssue;

impl Tool for GetIssue {
    type Input = GetIssueInput;
    const NAME: &'static str = "get_issue";
    const DESCRIPTION: &'static str = "Fetch one issue of the configured repository by number.";

    fn run(input: GetIssueInput) -> ToolOutcome {
        finish(Self::NAME, get_issue(input.number.get()))
    }
}

/// The connector's tools, in the order `tools()` lists them.
fn toolbox() -> Toolbox {
    Toolbox::new()
        .tool::<CreateIssue>()
        .tool::<SearchIssues>()
        .tool::<GetIssue>()
}

struct Tracker;

impl Connector for Tracker {
    fn tools() -> Vec<ToolSpec> {
        toolbox().specs()
    }

    fn call(tool: String, input: String) -> ToolOutcome {
        toolbox().call(&tool, &input)
    }
}

/// A tool's result as its outcome; an error (config, HTTP, the API's refusal) is kept verbatim
/// and logged.
fn finish(tool: &str, result: Result<ToolOutcome, String>) -> ToolOutcome {
    result.unwrap_or_else(|error| {
        log::warn(format!("{tool} failed: {error}"));
        ToolOutcome::failed(error)
    })
}

fn create_issue(input: CreateIssueInput) -> Result<ToolOutcome, String> {
    let repo = Repo::from_config()?;
    let issue = repo.create_issue(&input.title, input.body.as_deref(), input.labels.as_deref())?;
    let Some(number) = issue.get("number").and_then(Value::as_u64) else {
        return Err("created, but the response has no issue `number`".to_owned());
    };
    let created_title = issue
        .get("title")
        .and_then(Value::as_str)
        .unwrap_or(&input.title);
    let mut outcome = ToolOutcome::success(github::summary(&issue))
        .external_id(number.to_string())
        .preview(format!("#{number} {created_title}"));
    if let Some(url) = issue.get("html_url").and_then(Value::as_str) {
        outcome = outcome.verifiable_url(url);
    }
    log::info(format!("created issue #{number}"));
    Ok(outcome)
}

fn search_issues(query: &str) -> Result<ToolOutcome, String> {
    let repo = Repo::from_config()?;
    let found = repo.search_issues(query)?;
    let items: Vec<Value> = found
        .get("items")
        .and_then(Value::as_array)
        .map(|items| items.iter().map(github::summary).collect())
        .unwrap_or_default();
    let total = found
        .get("total_count")
        .and_then(Value::as_u64)
        .unwrap_or(items.len() as u64);
    Ok(ToolOutcome::success(
        json!({ "total_count": total, "items": items }),
    ))
}

fn get_issue(number: u64) -> Result<ToolOutcome, String> {
    let repo = Repo::from_config()?;
    let issue = repo.get_issue(number)?;
    let mut output = github::summary(&issue);
    output["body"] = issue.get("body").cloned().unwrap_or(Value::Null);
    Ok(ToolOutcome::success(output))
}

guild_sdk::export_connector!(Tracker);

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(tool: &str) -> Value {
        let spec = toolbox()
            .specs()
            .into_iter()
            .find(|s| s.name == tool)
            .expect("the tool is listed");
        serde_json::from_str(&spec.input_schema).expect("the schema is JSON")
    }

    #[test]
    fn tools_keep_their_names_order_and_kinds() {
        let specs = toolbox().specs();
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["create_issue", "search_issues", "get_issue"]);
        assert!(specs[0].mutating && !specs[1].mutating && !specs[2].mutating);
    }

    #[test]
    fn derived_schemas_keep_the_hand_written_constraints() {
        let create = schema("create_issue");
        assert_eq!(create["required"], json!(["title"]));
        assert_eq!(create["additionalProperties"], json!(false));
        assert_eq!(create["properties"]["title"]["minLength"], json!(1));
        assert_eq!(
            create["properties"]["title"]["description"],
            json!("Issue title.")
        );
        let search = schema("search_issues");
        assert_eq!(search["required"], json!(["query"]));
        assert_eq!(search["properties"]["query"]["minLength"], json!(1));
        let get = schema("get_issue");
        assert_eq!(get["required"], json!(["number"]));
        assert_eq!(get["properties"]["number"]["type"], json!("integer"));
        assert_eq!(get["properties"]["number"]["minimum"], json!(1));
    }

    #[test]
    fn inputs_that_do_not_fit_are_refused_before_any_request() {
        let tools = toolbox();
        for (tool, input, expected) in [
            ("create_issue", r#"{"body": "x"}"#, "missing field `title`"),
            (
                "create_issue",
                r#"{"title": "  "}"#,
                "`title` must not be empty",
            ),
            (
                "create_issue",
                r#"{"title": "t", "x": 1}"#,
                "unknown field `x`",
            ),
            ("search_issues", r#"{"query": 3}"#, "invalid type"),
            ("get_issue", r#"{"number": 0}"#, "nonzero"),
            ("get_issue", "not json", "tool `get_issue`"),
        ] {
            let outcome = tools.call(tool, input);
            let error = outcome.error().unwrap_or_default();
            assert!(
                error.starts_with("invalid input") && error.contains(expected),
                "{tool} {input}: {error}"
            );
        }
        let unknown = tools.call("close_issue", "{}");
        assert!(
            unknown
                .error()
                .is_some_and(|e| e.contains("tools: create_issue, search_issues, get_issue")),
            "{unknown:?}"
        );
    }
}

//! Connector `tracker`: issue tools over GitHub's REST issues API. Configured by `base_url` and
//! `repo`; the `TRACKER_TOKEN` secret is attached by the host, never read here.

mod github;
mod input;

use guild_sdk::{Connector, ToolOutcome, ToolSpec, log};
use serde_json::{Value, json};

use github::Repo;

struct Tracker;

impl Connector for Tracker {
    fn tools() -> Vec<ToolSpec> {
        vec![
            ToolSpec::new(
                "create_issue",
                "Create an issue in the configured repository. Search first to avoid duplicates.",
            )
            .schema(json!({
                "type": "object",
                "properties": {
                    "title": {"type": "string", "minLength": 1, "description": "Issue title."},
                    "body": {"type": "string", "description": "Markdown body."},
                    "labels": {"type": "array", "items": {"type": "string"}, "description": "Label names."}
                },
                "required": ["title"],
                "additionalProperties": false
            }))
            .mutating("issue", "create"),
            ToolSpec::new(
                "search_issues",
                "Search issues in the configured repository with GitHub search syntax, e.g. \
                 `is:open in:title \"crash on start\"`.",
            )
            .schema(json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1, "description": "Search terms and qualifiers; the repository is added."}
                },
                "required": ["query"],
                "additionalProperties": false
            })),
            ToolSpec::new("get_issue", "Fetch one issue of the configured repository by number.")
                .schema(json!({
                    "type": "object",
                    "properties": {
                        "number": {"type": "integer", "minimum": 1, "description": "Issue number."}
                    },
                    "required": ["number"],
                    "additionalProperties": false
                })),
        ]
    }

    fn call(tool: String, input: String) -> ToolOutcome {
        let result = match tool.as_str() {
            "create_issue" => create_issue(&input),
            "search_issues" => search_issues(&input),
            "get_issue" => get_issue(&input),
            other => Err(format!(
                "unknown tool `{other}`; tools: create_issue, search_issues, get_issue"
            )),
        };
        result.unwrap_or_else(|error| {
            log::warn(format!("{tool} failed: {error}"));
            ToolOutcome::failed(error)
        })
    }
}

fn create_issue(input: &str) -> Result<ToolOutcome, String> {
    let input = input::object(input)?;
    let title = input::required_str(&input, "title")?;
    let body = input::optional_str(&input, "body")?;
    let labels = input::optional_strings(&input, "labels")?;
    let repo = Repo::from_config()?;
    let issue = repo.create_issue(&title, body.as_deref(), labels.as_deref())?;
    let Some(number) = issue.get("number").and_then(Value::as_u64) else {
        return Err("created, but the response has no issue `number`".to_owned());
    };
    let created_title = issue.get("title").and_then(Value::as_str).unwrap_or(&title);
    let mut outcome = ToolOutcome::success(github::summary(&issue))
        .external_id(number.to_string())
        .preview(format!("#{number} {created_title}"));
    if let Some(url) = issue.get("html_url").and_then(Value::as_str) {
        outcome = outcome.verifiable_url(url);
    }
    log::info(format!("created issue #{number}"));
    Ok(outcome)
}

fn search_issues(input: &str) -> Result<ToolOutcome, String> {
    let input = input::object(input)?;
    let query = input::required_str(&input, "query")?;
    let repo = Repo::from_config()?;
    let found = repo.search_issues(&query)?;
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

fn get_issue(input: &str) -> Result<ToolOutcome, String> {
    let input = input::object(input)?;
    let number = input::required_number(&input, "number")?;
    let repo = Repo::from_config()?;
    let issue = repo.get_issue(number)?;
    let mut output = github::summary(&issue);
    output["body"] = issue.get("body").cloned().unwrap_or(Value::Null);
    Ok(ToolOutcome::success(output))
}

guild_sdk::export_connector!(Tracker);

//! GitHub's REST issues API shape: building requests from config and turning responses into
//! outputs or verbatim `HTTP <code>: <message>` errors.

use guild_sdk::{config, http};
use serde_json::{Value, json};

/// Where the API lives and which repository the tools act on, from granted config.
pub(crate) struct Repo {
    base_url: String,
    repo: String,
}

impl Repo {
    /// Reads `base_url` and `repo` from config.
    pub(crate) fn from_config() -> Result<Self, String> {
        let base_url = config::get("base_url").map_err(|e| format!("config `base_url`: {e}"))?;
        let repo = config::get("repo").map_err(|e| format!("config `repo`: {e}"))?;
        let base_url = base_url.trim().trim_end_matches('/').to_owned();
        if !(base_url.starts_with("https://") || base_url.starts_with("http://")) {
            return Err(format!(
                "config `base_url` must be an http(s) URL, got `{base_url}`"
            ));
        }
        let valid = |part: &str| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        };
        match repo.trim().split_once('/') {
            Some((owner, name)) if valid(owner) && valid(name) => Ok(Self {
                base_url,
                repo: format!("{owner}/{name}"),
            }),
            _ => Err(format!("config `repo` must be `owner/name`, got `{repo}`")),
        }
    }

    /// POST /repos/{repo}/issues.
    pub(crate) fn create_issue(
        &self,
        title: &str,
        body: Option<&str>,
        labels: Option<&[String]>,
    ) -> Result<Value, String> {
        let mut payload = json!({ "title": title });
        if let Some(body) = body {
            payload["body"] = json!(body);
        }
        if let Some(labels) = labels {
            payload["labels"] = json!(labels);
        }
        let url = format!("{}/repos/{}/issues", self.base_url, self.repo);
        send(headers(http::post(url)).json(&payload))
    }

    /// GET /search/issues?q=repo:{repo} {query}.
    pub(crate) fn search_issues(&self, query: &str) -> Result<Value, String> {
        let q = format!("repo:{} {}", self.repo, query.trim());
        let url = format!("{}/search/issues?q={}", self.base_url, encode(&q));
        send(headers(http::get(url)))
    }

    /// GET /repos/{repo}/issues/{number}.
    pub(crate) fn get_issue(&self, number: u64) -> Result<Value, String> {
        let url = format!("{}/repos/{}/issues/{number}", self.base_url, self.repo);
        send(headers(http::get(url)))
    }
}

fn headers(request: http::RequestBuilder) -> http::RequestBuilder {
    request
        .header("Accept", "application/vnd.github+json")
        .header("User-Agent", "guild-tracker")
        .header("X-GitHub-Api-Version", "2022-11-28")
}

/// Sends and parses a 2xx JSON body; anything else is a verbatim error.
fn send(request: http::RequestBuilder) -> Result<Value, String> {
    let response = request.send().map_err(|e| e.to_string())?;
    if !response.is_success() {
        return Err(format!(
            "HTTP {}: {}",
            response.status,
            error_message(&response)
        ));
    }
    response
        .json::<Value>()
        .map_err(|e| format!("HTTP {}: response is not JSON: {e}", response.status))
}

/// GitHub puts the reason in `message` (plus `errors[].message` for validation failures).
fn error_message(response: &http::Response) -> String {
    let Ok(body) = response.json::<Value>() else {
        let text = response.text();
        let text = text.trim();
        return if text.is_empty() {
            "(empty body)".to_owned()
        } else {
            text.chars().take(300).collect()
        };
    };
    let mut message = body
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("(no message)")
        .to_owned();
    let details: Vec<String> = body
        .get("errors")
        .and_then(Value::as_array)
        .map(|errors| errors.iter().filter_map(validation_error).collect())
        .unwrap_or_default();
    if !details.is_empty() {
        message = format!("{message} ({})", details.join("; "));
    }
    message
}

/// One entry of GitHub's `errors` list: its `message`, else `field: code`.
fn validation_error(error: &Value) -> Option<String> {
    if let Some(message) = error.get("message").and_then(Value::as_str) {
        return Some(message.to_owned());
    }
    let field = error.get("field").and_then(Value::as_str);
    let code = error.get("code").and_then(Value::as_str);
    match (field, code) {
        (Some(field), Some(code)) => Some(format!("{field}: {code}")),
        (None, Some(code)) => Some(code.to_owned()),
        _ => None,
    }
}

/// Percent-encodes a query value: everything but RFC 3986 unreserved characters.
fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len() * 3);
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The fields of an issue the tools return; labels flattened to their names.
pub(crate) fn summary(issue: &Value) -> Value {
    let labels: Vec<Value> = issue
        .get("labels")
        .and_then(Value::as_array)
        .map(|labels| {
            labels
                .iter()
                .filter_map(|label| match label {
                    Value::String(name) => Some(json!(name)),
                    other => other.get("name").cloned(),
                })
                .collect()
        })
        .unwrap_or_default();
    json!({
        "number": issue.get("number").cloned().unwrap_or(Value::Null),
        "title": issue.get("title").cloned().unwrap_or(Value::Null),
        "state": issue.get("state").cloned().unwrap_or(Value::Null),
        "labels": labels,
        "html_url": issue.get("html_url").cloned().unwrap_or(Value::Null),
    })
}

#[cfg(test)]
mod tests {
    use super::encode;

    #[test]
    fn encodes_query() {
        assert_eq!(
            encode("repo:o/n is:open \"a&b\""),
            "repo%3Ao%2Fn%20is%3Aopen%20%22a%26b%22"
        );
        assert_eq!(encode("é"), "%C3%A9");
    }
}

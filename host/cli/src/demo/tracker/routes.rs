//! The HTTP routes of the tracker: GitHub's issue endpoints and error bodies, and the HTML
//! issue page behind each `html_url`.

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{AppState, Issue, IssueState, Shared, rfc3339_now, search};

pub(super) fn router(shared: AppState) -> Router {
    Router::new()
        .route(
            "/repos/{owner}/{repo}/issues",
            get(list_issues).post(create_issue),
        )
        .route(
            "/repos/{owner}/{repo}/issues/{number}",
            get(get_issue).patch(update_issue),
        )
        .route("/search/issues", get(search_issues))
        .route("/{owner}/{repo}/issues/{number}", get(issue_page))
        .fallback(|| async { not_found() })
        .with_state(shared)
}

/// An API error: GitHub's `{"message": ...}` body (plus `errors` for validation failures).
struct ApiError {
    status: StatusCode,
    body: Value,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        json_response(self.status, self.body)
    }
}

type ApiResult = Result<Response, ApiError>;

fn api_error(status: StatusCode, message: &str) -> ApiError {
    ApiError {
        status,
        body: json!({ "message": message }),
    }
}

fn authorize(shared: &Shared, headers: &HeaderMap) -> Result<(), ApiError> {
    let presented = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("token "))
        });
    match presented {
        Some(token) if token == shared.token => Ok(()),
        _ => Err(api_error(StatusCode::UNAUTHORIZED, "Bad credentials")),
    }
}

fn json_response(status: StatusCode, value: Value) -> Response {
    (status, axum::Json(value)).into_response()
}

fn not_found() -> ApiError {
    api_error(StatusCode::NOT_FOUND, "Not Found")
}

fn parse_body<T: for<'de> Deserialize<'de>>(body: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(body)
        .map_err(|_| api_error(StatusCode::BAD_REQUEST, "Problems parsing JSON"))
}

fn validation_failed(resource: &str, field: &str, code: &str) -> ApiError {
    ApiError {
        status: StatusCode::UNPROCESSABLE_ENTITY,
        body: json!({
            "message": "Validation Failed",
            "errors": [{ "resource": resource, "field": field, "code": code }],
        }),
    }
}

#[derive(Deserialize)]
struct NewIssue {
    title: Option<String>,
    body: Option<String>,
    #[serde(default)]
    labels: Vec<String>,
}

async fn create_issue(
    State(shared): State<AppState>,
    Path((owner, repo)): Path<(String, String)>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> ApiResult {
    authorize(&shared, &headers)?;
    let mut data = shared.data();
    if let Some((status, message)) = data.refusal() {
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::GONE);
        return Err(api_error(status, &message));
    }
    let new: NewIssue = parse_body(&body)?;
    let title = new.title.unwrap_or_default();
    if title.trim().is_empty() {
        return Err(validation_failed("Issue", "title", "missing_field"));
    }
    let number = 1 + data
        .issues
        .iter()
        .filter(|i| i.in_repo(&owner, &repo))
        .count() as u64;
    let issue = Issue {
        id: 1000 + data.issues.len() as u64 + 1,
        number,
        owner,
        repo,
        title,
        body: new.body,
        state: IssueState::Open,
        labels: new.labels,
        created_at: rfc3339_now(),
    };
    let value = issue.to_json(&shared.base_url);
    data.issues.push(issue);
    Ok(json_response(StatusCode::CREATED, value))
}

#[derive(Deserialize)]
struct IssueUpdate {
    title: Option<String>,
    body: Option<String>,
    state: Option<IssueState>,
    labels: Option<Vec<String>>,
}

async fn update_issue(
    State(shared): State<AppState>,
    Path((owner, repo, number)): Path<(String, String, String)>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> ApiResult {
    authorize(&shared, &headers)?;
    let update: IssueUpdate = parse_body(&body)?;
    if update.title.as_deref().is_some_and(|t| t.trim().is_empty()) {
        return Err(validation_failed("Issue", "title", "missing_field"));
    }
    let number: u64 = number.parse().map_err(|_| not_found())?;
    let mut data = shared.data();
    let issue = data
        .issues
        .iter_mut()
        .find(|i| i.in_repo(&owner, &repo) && i.number == number)
        .ok_or_else(not_found)?;
    if let Some(title) = update.title {
        issue.title = title;
    }
    if let Some(body) = update.body {
        issue.body = Some(body);
    }
    if let Some(state) = update.state {
        issue.state = state;
    }
    if let Some(labels) = update.labels {
        issue.labels = labels;
    }
    Ok(json_response(
        StatusCode::OK,
        issue.to_json(&shared.base_url),
    ))
}

fn find(shared: &Shared, owner: &str, repo: &str, number: &str) -> Option<Issue> {
    let number: u64 = number.parse().ok()?;
    let data = shared.data();
    let found = data
        .issues
        .iter()
        .find(|i| i.in_repo(owner, repo) && i.number == number);
    found.cloned()
}

async fn get_issue(
    State(shared): State<AppState>,
    Path((owner, repo, number)): Path<(String, String, String)>,
    headers: HeaderMap,
) -> ApiResult {
    authorize(&shared, &headers)?;
    let issue = find(&shared, &owner, &repo, &number).ok_or_else(not_found)?;
    Ok(json_response(
        StatusCode::OK,
        issue.to_json(&shared.base_url),
    ))
}

#[derive(Deserialize)]
struct ListQuery {
    state: Option<String>,
}

async fn list_issues(
    State(shared): State<AppState>,
    Path((owner, repo)): Path<(String, String)>,
    Query(query): Query<ListQuery>,
    headers: HeaderMap,
) -> ApiResult {
    authorize(&shared, &headers)?;
    let wanted = match query.state.as_deref().unwrap_or("open") {
        "open" => Some(IssueState::Open),
        "closed" => Some(IssueState::Closed),
        "all" => None,
        _ => return Err(validation_failed("Issue", "state", "invalid")),
    };
    let data = shared.data();
    // GitHub lists newest first.
    let items: Vec<Value> = data
        .issues
        .iter()
        .rev()
        .filter(|i| i.in_repo(&owner, &repo) && wanted.is_none_or(|s| i.state == s))
        .map(|i| i.to_json(&shared.base_url))
        .collect();
    Ok(json_response(StatusCode::OK, Value::Array(items)))
}

#[derive(Deserialize)]
struct SearchQuery {
    q: Option<String>,
}

async fn search_issues(
    State(shared): State<AppState>,
    Query(query): Query<SearchQuery>,
    headers: HeaderMap,
) -> ApiResult {
    authorize(&shared, &headers)?;
    let Some(q) = query.q.filter(|q| !q.trim().is_empty()) else {
        return Err(validation_failed("Search", "q", "missing"));
    };
    let filter = search::Filter::parse(&q);
    let data = shared.data();
    let items: Vec<Value> = data
        .issues
        .iter()
        .rev()
        .filter(|i| filter.matches(i))
        .map(|i| i.to_json(&shared.base_url))
        .collect();
    Ok(json_response(
        StatusCode::OK,
        json!({ "total_count": items.len(), "incomplete_results": false, "items": items }),
    ))
}

async fn issue_page(
    State(shared): State<AppState>,
    Path((owner, repo, number)): Path<(String, String, String)>,
) -> Response {
    let Some(issue) = find(&shared, &owner, &repo, &number) else {
        return (
            StatusCode::NOT_FOUND,
            Html("<h1>404 Not Found</h1>".to_owned()),
        )
            .into_response();
    };
    let labels: Vec<String> = issue.labels.iter().map(|l| escape(l)).collect();
    let page = format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>{title} · Issue #{n} · \
         {o}/{r}</title></head>\n<body><h1>{title} <span>#{n}</span></h1>\n\
         <p class=\"state\">{state:?}</p>\n<p class=\"labels\">{labels}</p>\n\
         <div class=\"body\"><pre>{body}</pre></div></body></html>\n",
        title = escape(&issue.title),
        n = issue.number,
        o = escape(&issue.owner),
        r = escape(&issue.repo),
        state = issue.state,
        labels = labels.join(", "),
        body = escape(issue.body.as_deref().unwrap_or("")),
    );
    Html(page).into_response()
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

//! The GitHub-ish search query language of `GET /search/issues`.
//!
//! Supported: `repo:owner/name`, `is:open|closed` (or `state:`), `is:issue`, `label:name`
//! (repeatable; all must match); `is:pr` matches nothing (the tracker has no pull requests).
//! Every other word must occur, case-insensitively, in the title or the body.

use super::{Issue, IssueState};

/// A parsed search query.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Filter {
    repo: Option<(String, String)>,
    state: Option<IssueState>,
    labels: Vec<String>,
    words: Vec<String>,
    nothing: bool,
}

impl Filter {
    pub(super) fn parse(query: &str) -> Self {
        let mut filter = Self::default();
        for token in query.split_whitespace() {
            let (key, value) = token.split_once(':').unwrap_or(("", token));
            match (
                key.to_ascii_lowercase().as_str(),
                value.to_ascii_lowercase().as_str(),
            ) {
                ("repo", _) => match value.split_once('/') {
                    Some((o, r)) => filter.repo = Some((o.to_owned(), r.to_owned())),
                    None => filter.nothing = true,
                },
                ("is" | "state", "open") => filter.state = Some(IssueState::Open),
                ("is" | "state", "closed") => filter.state = Some(IssueState::Closed),
                ("is" | "type", "issue") => {}
                ("is" | "type", "pr") => filter.nothing = true,
                ("label", _) => filter.labels.push(value.trim_matches('"').to_lowercase()),
                _ => filter.words.push(token.to_lowercase()),
            }
        }
        filter
    }

    pub(super) fn matches(&self, issue: &Issue) -> bool {
        if self.nothing {
            return false;
        }
        if let Some((owner, repo)) = &self.repo
            && !issue.in_repo(owner, repo)
        {
            return false;
        }
        if self.state.is_some_and(|s| s != issue.state) {
            return false;
        }
        let has_label = |want: &String| issue.labels.iter().any(|l| l.to_lowercase() == *want);
        if !self.labels.iter().all(has_label) {
            return false;
        }
        let text = format!(
            "{}\n{}",
            issue.title,
            issue.body.as_deref().unwrap_or_default()
        )
        .to_lowercase();
        self.words.iter().all(|w| text.contains(w.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issue(
        repo: &str,
        title: &str,
        body: Option<&str>,
        state: IssueState,
        labels: &[&str],
    ) -> Issue {
        let (owner, repo) = repo.split_once('/').expect("owner/repo");
        Issue {
            id: 1,
            number: 1,
            owner: owner.into(),
            repo: repo.into(),
            title: title.into(),
            body: body.map(Into::into),
            state,
            labels: labels.iter().map(|l| (*l).to_owned()).collect(),
            created_at: "2024-01-01T00:00:00Z".into(),
        }
    }

    #[test]
    fn query_table() {
        use IssueState::*;
        let login = issue(
            "acme/web",
            "Login fails on Safari",
            Some("500 from /auth"),
            Open,
            &["bug"],
        );
        let closed = issue(
            "acme/web",
            "Dark mode",
            None,
            Closed,
            &["enhancement", "UI"],
        );
        let other = issue("acme/api", "Login rate limit", None, Open, &[]);
        let table: &[(&str, &Issue, bool)] = &[
            ("login", &login, true),
            ("LOGIN safari", &login, true),
            ("login firefox", &login, false),
            ("/auth", &login, true),
            ("repo:acme/web login", &login, true),
            ("repo:ACME/Web", &login, true),
            ("repo:acme/web login", &other, false),
            ("repo:acme", &login, false),
            ("is:open", &login, true),
            ("is:open", &closed, false),
            ("is:closed mode", &closed, true),
            ("state:closed", &closed, true),
            ("is:issue login", &other, true),
            ("is:pr login", &login, false),
            ("label:bug", &login, true),
            ("label:Bug", &login, true),
            ("label:bug", &other, false),
            ("label:ui label:enhancement", &closed, true),
            ("label:ui label:bug", &closed, false),
            ("repo:acme/web is:open label:bug safari", &login, true),
        ];
        for (query, issue, expected) in table {
            assert_eq!(
                Filter::parse(query).matches(issue),
                *expected,
                "{query} vs {}",
                issue.title
            );
        }
    }
}

//! Reading the bug list out of a brief: lines starting with `- `, each with optional `[label]`
//! prefixes.

/// One bug to file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Bug {
    pub(crate) title: String,
    pub(crate) labels: Vec<String>,
}

/// Every bug in the brief, in order, without repeated titles (compared case-insensitively).
pub(crate) fn parse(brief: &str) -> Vec<Bug> {
    let mut bugs: Vec<Bug> = Vec::new();
    for line in brief.lines() {
        let Some(rest) = line.trim_start().strip_prefix("- ") else {
            continue;
        };
        let mut rest = rest.trim();
        let mut labels = Vec::new();
        while let Some(inner) = rest.strip_prefix('[') {
            let Some((label, after)) = inner.split_once(']') else {
                break;
            };
            let label = label.trim();
            if !label.is_empty() && !labels.iter().any(|l: &String| l == label) {
                labels.push(label.to_owned());
            }
            rest = after.trim_start();
        }
        let title = rest.split_whitespace().collect::<Vec<_>>().join(" ");
        if title.is_empty() || bugs.iter().any(|b| same_title(&b.title, &title)) {
            continue;
        }
        bugs.push(Bug { title, labels });
    }
    bugs
}

/// Titles are the same when they match ignoring case and surrounding or repeated whitespace.
pub(crate) fn same_title(a: &str, b: &str) -> bool {
    let norm = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    norm(a) == norm(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_labels_and_titles() {
        let bugs = parse(
            "Bugs:\n- [bug][ui] Button does nothing\n  - [crash] App dies\n-no\n- button DOES nothing\n",
        );
        assert_eq!(
            bugs,
            vec![
                Bug {
                    title: "Button does nothing".into(),
                    labels: vec!["bug".into(), "ui".into()]
                },
                Bug {
                    title: "App dies".into(),
                    labels: vec!["crash".into()]
                },
            ]
        );
    }
}

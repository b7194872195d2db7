//! How tools are named, and what to say when a name matches no tool: the rule every error about
//! a tool name quotes ([`TOOL_NAME_RULE`]), and the nearest loaded tool to suggest for a
//! misspelled one ([`unknown_tool`]), so that a typo is reported as a typo and not as a missing
//! grant (docs/plugin-authors.md, Tool names).

/// The naming rule, quoted by every refusal of a tool name.
pub const TOOL_NAME_RULE: &str = "a tool is called as `connector.tool`: the connector's plugin \
     name ([a-z0-9-]{1,64}), a dot, and the tool's own name ([a-z0-9_-]{1,64}, no dot); a \
     connector's aliases do not route tool calls";

/// What to say about `full`, which no loaded connector offers: the nearest of `offered` when
/// one is close enough to be a typo, then the naming rule.
pub fn unknown_tool<'a>(full: &str, offered: impl IntoIterator<Item = &'a str>) -> String {
    let suggestion = nearest(full, offered)
        .map(|near| format!("; did you mean `{near}`?"))
        .unwrap_or_else(|| ".".to_owned());
    format!("no loaded connector offers `{full}`{suggestion} ({TOOL_NAME_RULE})")
}

/// The candidate closest to `name` by edit distance, if it is within a typo's reach (two edits,
/// or one in five characters for long names). Ties go to the first candidate in order.
pub fn nearest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let reach = 2.max(name.chars().count() / 5);
    let mut best: Option<(usize, &str)> = None;
    for candidate in candidates {
        let d = edit_distance(name, candidate);
        if d <= reach && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// Levenshtein distance over characters (insert, delete, substitute; each costs one).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != *cb))
                .min(above + 1)
                .min(row[j] + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_single_edits() {
        assert_eq!(edit_distance("weather.lokup", "weather.lookup"), 1);
        assert_eq!(edit_distance("abc", "abc"), 0);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn a_typo_gets_the_nearest_tool_and_a_stranger_gets_none() {
        let offered = [
            "weather.lookup",
            "weather.forecast",
            "tracker.search_issues",
        ];
        assert_eq!(
            nearest("weather.lokup", offered),
            Some("weather.lookup"),
            "one edit"
        );
        assert_eq!(
            nearest("tracker.search_issue", offered),
            Some("tracker.search_issues")
        );
        assert_eq!(nearest("mail.send", offered), None);
    }

    #[test]
    fn the_message_names_the_tool_the_suggestion_and_the_rule() {
        let m = unknown_tool("weather.lokup", ["weather.lookup"]);
        assert!(
            m.starts_with(
                "no loaded connector offers `weather.lokup`; did you mean `weather.lookup`?"
            ),
            "{m}"
        );
        assert!(
            m.contains("[a-z0-9_-]{1,64}") && m.contains("aliases do not route"),
            "{m}"
        );
        let m = unknown_tool("mail.send", ["weather.lookup"]);
        assert!(
            m.starts_with("no loaded connector offers `mail.send`. ("),
            "{m}"
        );
    }
}

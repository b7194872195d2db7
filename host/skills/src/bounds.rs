//! Bounds on a frontmatter checked before any YAML parser sees it: its size and how deeply it
//! nests.
//!
//! libyaml (under serde_yaml_ng) spends time quadratic in the nesting depth: a `SKILL.md` whose
//! frontmatter opens 50,000 flow collections (`[[[[…`) took 10 s to parse, 100,000 took 25 s,
//! and it stalled `guild skills check`, `list` and a starting `guild serve`. Real frontmatter is
//! a few hundred bytes two or three levels deep. This pre-scan is one linear pass over the
//! bytes; it over-estimates the depth (brackets inside quoted text count too) and never
//! under-estimates it, so anything it lets through parses in bounded time, and only text with
//! dozens of unclosed brackets is refused by mistake.

/// Largest frontmatter parsed, bytes (real ones are under 2 KiB; the specification's fields
/// together are under 2 KiB plus `metadata`).
pub const MAX_FRONTMATTER: usize = 64 * 1024;
/// Deepest nesting parsed: indentation levels, `- `/`? ` entries opened on one line, and open
/// `[`/`{` together.
pub const MAX_DEPTH: usize = 64;

/// Checks `yaml` (the frontmatter, fences excluded) against [`MAX_FRONTMATTER`] and
/// [`MAX_DEPTH`]; the error names the limit and, for depth, the line (counted from the
/// file's first line, the opening fence).
pub(crate) fn check(yaml: &str) -> Result<(), String> {
    if yaml.len() > MAX_FRONTMATTER {
        return Err(format!(
            "frontmatter is {} bytes, over the limit of {MAX_FRONTMATTER}",
            yaml.len()
        ));
    }
    // Indentations of the open block levels, innermost last.
    let mut indents: Vec<usize> = Vec::new();
    let mut flow = 0usize;
    for (n, line) in yaml.split('\n').enumerate() {
        let indent = line.bytes().take_while(|&b| b == b' ').count();
        let rest = &line[indent..];
        let content = rest.trim_start_matches([' ', '\t']);
        let mut depth = 0;
        // Inside a flow collection too: an unclosed `[` in text must not switch this off.
        if !content.is_empty() && !content.starts_with('#') {
            while indents.last().is_some_and(|&i| i > indent) {
                indents.pop();
            }
            if indents.last().is_none_or(|&i| i < indent) {
                indents.push(indent);
            }
            depth = indents.len() + entries_opened(content);
        }
        for b in line.bytes() {
            match b {
                b'[' | b'{' => flow += 1,
                b']' | b'}' => flow = flow.saturating_sub(1),
                _ => {}
            }
            if depth + flow > MAX_DEPTH {
                return Err(format!(
                    "frontmatter nests more than {MAX_DEPTH} levels deep (line {})",
                    n + 2
                ));
            }
        }
        if depth > MAX_DEPTH {
            return Err(format!(
                "frontmatter nests more than {MAX_DEPTH} levels deep (line {})",
                n + 2
            ));
        }
    }
    Ok(())
}

/// How many block entries `content` opens at its start: `- - - x` opens three sequences,
/// `? ? x` two complex keys.
fn entries_opened(content: &str) -> usize {
    let mut rest = content.as_bytes();
    let mut n = 0;
    while let [b'-' | b'?', tail @ ..] = rest {
        match tail {
            [] => return n + 1,
            [b' ' | b'\t', ..] => {
                n += 1;
                rest = trim_blank(tail);
            }
            _ => break,
        }
    }
    n
}

fn trim_blank(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', tail @ ..] = s {
        s = tail;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_frontmatter_passes() {
        let yaml = "name: pdf\ndescription: Use [this] for {PDF} files - any - kind\nmetadata:\n  author: x\n  tags: [a, b, {c: d}]\nallowed-tools:\n  - Read\n  - - Nested\n";
        assert_eq!(check(yaml), Ok(()));
    }

    #[test]
    fn deep_flow_block_and_sequence_nesting_are_refused() {
        let flow = format!("a: {}{}\n", "[".repeat(65), "]".repeat(65));
        assert!(
            check(&flow)
                .expect_err("flow")
                .contains("more than 64 levels deep (line 2)")
        );
        let at_limit = format!("a: {}{}\n", "[".repeat(63), "]".repeat(63));
        assert_eq!(check(&at_limit), Ok(()));
        let seq = format!("a:\n  {}x\n", "- ".repeat(80));
        assert!(check(&seq).expect_err("sequence").contains("line 3"));
        let block: String = (0..80)
            .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
            .collect();
        assert!(check(&block).is_err());
        // An unclosed bracket earlier does not hide block nesting after it.
        let hidden = format!("a: \"[\"\nb:\n  {}x\n", "- ".repeat(80));
        assert!(check(&hidden).is_err());
        // Brackets closed again do not add up.
        let flat = "a: [x]\n".repeat(500);
        assert_eq!(check(&flat), Ok(()));
    }

    #[test]
    fn oversized_frontmatter_is_refused_before_it_is_scanned() {
        let big = format!("description: {}\n", "x".repeat(MAX_FRONTMATTER));
        assert!(
            check(&big)
                .expect_err("size")
                .contains("over the limit of 65536")
        );
    }
}

//! OpenSSH pattern lists, as `allowed_signers` uses them for `namespaces="…"` and for the
//! principals a `cert-authority` line accepts: comma-separated patterns where `*` matches any
//! run of characters and `?` any one character, and a pattern starting with `!` is a negation
//! that refuses the whole list when it matches. The semantics are those of OpenSSH's
//! `match_pattern_list` (case-sensitive), so a trust file means the same to Guild and to
//! `ssh-keygen -Y verify`.
//!
//! The matcher is iterative (one backtrack point per `*`), so a hostile pattern or string
//! costs at most `pattern × string` steps, never the exponential time of naive recursion.

/// Longest single pattern OpenSSH accepts (its buffer is 1024 bytes with the terminator); a
/// longer one makes the whole list match nothing, as in OpenSSH.
const MAX_SUBPATTERN: usize = 1022;

/// How `text` fares against a comma-separated pattern list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListMatch {
    /// A positive pattern matched and no negated one did.
    Yes,
    /// No pattern matched.
    No,
    /// A negated pattern (`!…`) matched: refused whatever else matches.
    Negated,
}

/// Matches `text` against `list` as OpenSSH's `match_pattern_list(text, list, 0)` does.
pub fn match_list(text: &str, list: &str) -> ListMatch {
    let mut positive = false;
    // OpenSSH walks the list once: an empty list, or one ending in a comma, has no empty
    // trailing pattern.
    let mut rest = list;
    while !rest.is_empty() {
        let (negated, body) = match rest.strip_prefix('!') {
            Some(after) => (true, after),
            None => (false, rest),
        };
        let (pattern, next) = match body.split_once(',') {
            Some((p, n)) => (p, n),
            None => (body, ""),
        };
        if pattern.len() > MAX_SUBPATTERN {
            return ListMatch::No;
        }
        if matches(text.as_bytes(), pattern.as_bytes()) {
            if negated {
                return ListMatch::Negated;
            }
            positive = true;
        }
        rest = next;
    }
    if positive {
        ListMatch::Yes
    } else {
        ListMatch::No
    }
}

/// One pattern against the whole of `text`: `*` any run, `?` one byte, the rest literal.
/// Bytes, as OpenSSH compares them (a `?` matches one byte of a multi-byte character).
fn matches(text: &[u8], pattern: &[u8]) -> bool {
    let (mut t, mut p) = (0, 0);
    // Where the last `*` was and which text position it currently absorbs up to.
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if c == b'?' || c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::ListMatch::{Negated, No, Yes};
    use super::*;

    #[test]
    fn single_patterns_match_as_openssh_does() {
        for (text, pattern) in [
            ("guild-bundle", "guild-bundle"),
            ("guild-bundle", "guild-*"),
            ("guild-bundle", "*"),
            ("guild-bundle", "guild-bund??"),
            ("guild-bundle", "*-*"),
            ("guild-bundle", "g*e"),
            ("", "*"),
            ("", ""),
        ] {
            assert!(matches(text.as_bytes(), pattern.as_bytes()), "{pattern}");
        }
        for (text, pattern) in [
            ("guild-bundle", "guild"),
            ("guild-bundle", "Guild-*"),
            ("guild-bundle", "guild-bund?"),
            ("guild-bundle", "guild-bundle?"),
            ("guild-bundle", "*x*"),
            ("guild-bundle", ""),
            ("x", "?*?"),
        ] {
            assert!(!matches(text.as_bytes(), pattern.as_bytes()), "{pattern}");
        }
    }

    #[test]
    fn lists_allow_and_deny_like_match_pattern_list() {
        assert_eq!(match_list("guild-bundle", "git,guild-*"), Yes);
        assert_eq!(match_list("guild-bundle", "git,file"), No);
        assert_eq!(match_list("guild-bundle", "*,!guild-bundle"), Negated);
        assert_eq!(match_list("guild-bundle", "!guild-bundle,*"), Negated);
        assert_eq!(match_list("guild-bundle", "!git,*"), Yes);
        // A list of negations alone allows nothing (OpenSSH needs a positive match).
        assert_eq!(match_list("guild-bundle", "!git"), No);
        assert_eq!(match_list("guild-bundle", ""), No);
        assert_eq!(match_list("guild-bundle", "guild-bundle,"), Yes);
        // Case-sensitive, as ssh-keygen compares namespaces.
        assert_eq!(match_list("guild-bundle", "GUILD-BUNDLE"), No);
        let long = format!("{}*", "g".repeat(MAX_SUBPATTERN));
        assert_eq!(match_list("guild-bundle", &format!("*,{long}")), No);
    }

    #[test]
    fn hostile_patterns_cost_linear_backtracking_only() {
        let text = "a".repeat(4000);
        let pattern = format!("{}b", "*a".repeat(500));
        assert_eq!(match_list(&text, &pattern), No);
        assert_eq!(match_list(&text, &"*a".repeat(500)), Yes);
    }
}

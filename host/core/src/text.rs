//! Small text helpers shared by every layer that stores or shows plugin-supplied text.

/// The longest prefix of `s` that is at most `max` bytes and ends on a character boundary.
pub fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::truncate;

    #[test]
    fn cuts_on_char_boundaries() {
        assert_eq!(truncate("héllo", 2), "h");
        assert_eq!(truncate("héllo", 3), "hé");
        assert_eq!(truncate("ab", 5), "ab");
    }
}

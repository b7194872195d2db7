//! Table tests for pattern parsing and matching.

use super::*;

fn url(text: &str) -> Url {
    Url::parse(text).expect("test URL parses")
}

#[test]
fn valid_patterns_parse_to_their_canonical_form() {
    let table = [
        ("https://api.example.com", "https://api.example.com"),
        ("HTTPS://API.Example.COM", "https://api.example.com"),
        ("https://api.example.com:443", "https://api.example.com"),
        ("http://api.example.com:8080", "http://api.example.com:8080"),
        ("https://*.example.org:8443", "https://*.example.org:8443"),
        ("http://localhost:*", "http://localhost:*"),
        ("http://127.0.0.1:3000", "http://127.0.0.1:3000"),
        ("http://[::1]:3000", "http://[::1]:3000"),
        ("http://[0:0::1]", "http://[::1]"),
        ("https://bücher.example", "https://xn--bcher-kva.example"),
        ("https://example.com.", "https://example.com"),
    ];
    for (input, canonical) in table {
        let pattern =
            HostPattern::parse(input).unwrap_or_else(|e| panic!("`{input}` should parse, got {e}"));
        assert_eq!(pattern.to_string(), canonical, "for `{input}`");
    }
}

#[test]
fn invalid_patterns_are_rejected_with_a_reason() {
    let table = [
        ("api.example.com", "expected `scheme://host[:port]`"),
        ("ftp://example.com", "scheme `ftp`"),
        ("https://*", "bare `*`"),
        ("https://*:443", "bare `*`"),
        ("http://*:*", "bare `*`"),
        ("https://api.*.example.com", "first label"),
        ("https://*example.com", "first label"),
        ("https://*.*.example.com", "only once"),
        ("https://*.10.0.0.1", "not IP addresses"),
        ("https://example.com/", "remove the path"),
        ("https://example.com/v1", "remove the path"),
        ("https://example.com?x=1", "remove the path"),
        ("https://user@example.com", "userinfo"),
        ("https://user:pw@example.com", "userinfo"),
        ("https://example.com:", "not a number"),
        ("https://example.com:http", "not a number"),
        ("https://example.com:+80", "not a number"),
        ("https://example.com:0", "not in 1-65535"),
        ("https://example.com:65536", "not in 1-65535"),
        ("https://", "missing host"),
        ("https://:443", "missing host"),
        ("http://[::1", "unclosed"),
        ("http://[::1]x", "after the IPv6 host"),
        ("http://::1", "not a number"),
        ("https://exa mple.com", "whitespace"),
        ("https://exa%mple.com", "invalid host"),
    ];
    for (input, needle) in table {
        let err = HostPattern::parse(input).expect_err(input);
        let message = err.to_string();
        assert!(message.contains(input), "`{message}` names the pattern");
        assert!(
            message.contains(needle),
            "`{message}` should mention `{needle}`"
        );
    }
}

#[test]
fn matching_table() {
    // (pattern, url, matches)
    let table = [
        (
            "https://api.example.com",
            "https://api.example.com/v1/x?q=1",
            true,
        ),
        ("https://api.example.com", "https://API.example.com./", true),
        (
            "https://api.example.com",
            "https://api.example.com:443/",
            true,
        ),
        ("https://api.example.com", "http://api.example.com/", false),
        (
            "https://api.example.com",
            "https://api.example.com:8443/",
            false,
        ),
        ("https://api.example.com", "https://example.com/", false),
        (
            "https://api.example.com",
            "https://api.example.com.evil.net/",
            false,
        ),
        (
            "https://api.example.com",
            "https://evilapi.example.com/",
            false,
        ),
        ("https://*.example.com", "https://a.example.com/", true),
        ("https://*.example.com", "https://a.b.example.com/", true),
        ("https://*.example.com", "https://example.com/", false),
        ("https://*.example.com", "https://badexample.com/", false),
        (
            "https://*.example.com",
            "https://a.example.com.evil.net/",
            false,
        ),
        ("https://*.example.com", "http://a.example.com/", false),
        ("http://localhost:*", "http://localhost:1234/", true),
        ("http://localhost:*", "http://localhost/", true),
        ("http://localhost:*", "http://127.0.0.1:1234/", false),
        ("http://localhost:*", "http://a.localhost:1234/", false),
        ("http://127.0.0.1:3000", "http://127.0.0.1:3000/", true),
        ("http://127.0.0.1:3000", "http://127.1:3000/", true),
        ("http://127.0.0.1:3000", "http://0x7f000001:3000/", true),
        ("http://127.0.0.1:3000", "http://127.0.0.1:3001/", false),
        (
            "http://127.0.0.1:3000",
            "http://[::ffff:127.0.0.1]:3000/",
            false,
        ),
        ("http://[::1]:*", "http://[::1]:9/", true),
        ("http://[::1]:*", "http://[::2]:9/", false),
        ("http://example.com", "http://93.184.215.14/", false),
    ];
    for (pattern, target, expected) in table {
        let p = HostPattern::parse(pattern).expect(pattern);
        assert_eq!(p.matches(&url(target)), expected, "{pattern} vs {target}");
    }
}

#[test]
fn allow_list_reports_first_bad_pattern_and_empty_allows_nothing() {
    let err = AllowList::parse(["https://ok.example.com", "https://*"]).expect_err("bare *");
    assert_eq!(err.pattern, "https://*");

    let empty = AllowList::default();
    assert!(empty.is_empty());
    assert!(!empty.allows(&url("https://example.com/")));

    let list = AllowList::parse(["https://a.example.com", "https://*.example.com"]).expect("ok");
    let target = url("https://a.example.com/");
    assert!(list.allows(&target));
    assert_eq!(list.matching(&target).count(), 2);
    assert!(!list.allows(&url("https://example.com/")));
}

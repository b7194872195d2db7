use std::borrow::Cow;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};

use super::*;
use crate::{AllowList, SecretHeader};

/// The credentials of the header value; `/`, `+` and `=` make every encoding differ from it.
const VALUE: &str = "tok/en+42=s3cret";

fn redactor() -> Redactor {
    let hosts = AllowList::parse(["https://api.example.com"]).expect("hosts");
    let header = format!("Bearer {VALUE}");
    let secret = SecretHeader::new("TOKEN", "Authorization", &header, hosts).expect("valid");
    Redactor::new([&secret])
}

fn percent_all(text: &str) -> String {
    text.bytes().map(|b| format!("%{b:02x}")).collect()
}

/// Each way an upstream may echo the value, inside some surrounding text.
fn echoes() -> Vec<(&'static str, String)> {
    let json =
        serde_json::to_string(&serde_json::json!({ "authorization": format!("Bearer {VALUE}") }))
            .expect("json");
    vec![
        ("plain", format!("you sent Bearer {VALUE} ok")),
        ("upper-cased", format!("YOU SENT {}", VALUE.to_uppercase())),
        ("json", json),
        (
            "json, slashes escaped",
            format!("{{\"t\":\"{}\"}}", VALUE.replace('/', "\\/")),
        ),
        (
            "json \\u escapes",
            VALUE.bytes().map(|b| format!("\\u{b:04X}")).collect(),
        ),
        ("percent-encoded", format!("q={}", percent_all(VALUE))),
        ("form-encoded", "q=tok%2Fen%2B42%3Ds3cret&x=1".to_owned()),
        (
            "html references",
            "<p>tok&#47;en&#x2B;42&#61;s3cret</p>".to_owned(),
        ),
        (
            "base64 of the header",
            STANDARD.encode(format!("Bearer {VALUE}")),
        ),
        (
            "base64 of user:value",
            format!("Basic {}", STANDARD.encode(format!("user:{VALUE}"))),
        ),
        (
            "base64 url-safe",
            URL_SAFE_NO_PAD.encode(format!("xy{VALUE}zz")),
        ),
        (
            "base64 wrapped",
            wrap(&STANDARD.encode(format!("{{\"echo\":\"{VALUE}\"}}")), 8),
        ),
        ("hex", hex::encode(format!("a{VALUE}"))),
        ("hex upper-case", hex::encode_upper(VALUE)),
        (
            "json inside json",
            serde_json::to_string(&format!("{{\"t\":\"{}\"}}", VALUE.replace('/', "\\/")))
                .expect("json"),
        ),
        (
            "percent-encoded twice",
            format!("u={}", percent_all(VALUE).replace('%', "%25")),
        ),
        (
            "json \\u inside json",
            VALUE.bytes().map(|b| format!("\\\\u{b:04x}")).collect(),
        ),
    ]
}

fn wrap(text: &str, width: usize) -> String {
    let chunks: Vec<&str> = text
        .as_bytes()
        .chunks(width)
        .map(|c| std::str::from_utf8(c).expect("ascii"))
        .collect();
    chunks.join("\r\n")
}

#[test]
fn every_echo_is_found_and_redacted() {
    let r = redactor();
    for (how, text) in echoes() {
        assert_eq!(r.find(text.as_bytes()), Some("TOKEN"), "{how}: {text}");
        let redacted = r.redact_str(&text);
        assert!(redacted.contains(MARKER), "{how}: {redacted}");
        assert_eq!(r.find(redacted.as_bytes()), None, "{how}: {redacted}");
    }
}

#[test]
fn text_without_the_value_is_left_as_it_is() {
    let r = redactor();
    let near = [
        "Bearer tok/en+42=s3cre",
        "tok/en+42 =s3cret",
        "ordinary text with % and \\ and &amp; and + signs",
        "dG9rL2VuKzQy",
    ];
    for text in near {
        assert_eq!(r.find(text.as_bytes()), None, "{text}");
        assert!(matches!(r.redact_str(text), Cow::Borrowed(_)), "{text}");
    }
    let none = Redactor::default();
    assert!(none.is_empty());
    let text = format!("Bearer {VALUE}");
    assert!(matches!(none.redact_str(&text), Cow::Borrowed(_)));
}

#[test]
fn only_the_value_is_replaced_and_utf8_survives() {
    let r = redactor();
    let text = format!("é {VALUE} ü {VALUE}");
    assert_eq!(r.redact_str(&text), format!("é {MARKER} ü {MARKER}"));
    let json = format!("{{\"a\":\"{}\"}}", VALUE.replace('/', "\\/"));
    let redacted = r.redact_str(&json);
    let parsed: serde_json::Value = serde_json::from_str(&redacted).expect("still JSON");
    assert_eq!(parsed["a"], serde_json::json!(MARKER));
}

#[test]
fn the_granted_value_is_searched_when_the_format_hides_it() {
    let hosts = AllowList::parse(["https://api.example.com"]).expect("hosts");
    let bare = SecretHeader::new("KEY", "X-Auth", "key=abcdef123456", hosts.clone()).expect("ok");
    assert_eq!(Redactor::new([&bare]).find(b"abcdef123456"), None);
    let granted = bare.with_granted_value("abcdef123456");
    assert_eq!(Redactor::new([&granted]).find(b"abcdef123456"), Some("KEY"));
}

#[test]
fn short_values_are_not_searched() {
    let hosts = AllowList::parse(["https://api.example.com"]).expect("hosts");
    let short = SecretHeader::new("PIN", "X-Pin", "1234567", hosts).expect("ok");
    let r = Redactor::new([&short]);
    assert!(r.is_empty());
    assert_eq!(r.find(b"1234567"), None);
}

#[test]
fn a_hostile_text_of_escapes_stays_linear() {
    let hosts = AllowList::parse(["https://api.example.com"]).expect("hosts");
    let secret = SecretHeader::new("B", "X-B", "\\\\\\\\\\\\\\\\\\\\", hosts).expect("ok");
    let r = Redactor::new([&secret]);
    let text = "\\".repeat(100_000);
    assert!(r.find(text.as_bytes()).is_some());
    let near = "\\\\\\\\\\\\\\\\\\x".repeat(10_000);
    assert!(r.find(near.as_bytes()).is_none());
}

//! External confirmation, review decisions and the verdict's serialised form: each rule with a
//! passing and a failing case.

use super::tests::{TASK, none, receipt};
use super::*;
use guild_core::types::Outcome;
use guild_receipts::ReceiptStatus;

#[test]
fn external_target_table() {
    let mut r = receipt("r1", TASK, "t.x", ReceiptStatus::Success, Some("I-1"));
    assert_eq!(
        external::target(&r).expect("url").as_str(),
        "https://tracker.example/issues/I-1"
    );
    let cases: &[(Option<&str>, CheckStatus)] = &[
        (None, CheckStatus::Unknown),
        (Some(""), CheckStatus::Unknown),
        (Some("ftp://tracker.example/x"), CheckStatus::Error),
        (Some("file:///etc/passwd"), CheckStatus::Error),
        (
            Some("https://user:pw@tracker.example/x"),
            CheckStatus::Error,
        ),
        (Some("not a url"), CheckStatus::Error),
    ];
    for (url, status) in cases {
        r.verifiable_url = url.map(str::to_owned);
        let c = external::target(&r).expect_err("refused");
        assert_eq!(c.status, *status, "{url:?}: {}", c.message);
        assert_eq!(c.name, external::CHECK_NAME);
    }
}

#[test]
fn external_interpretation_table() {
    let r = receipt("r1", TASK, "t.x", ReceiptStatus::Success, Some("I-1"));
    let url = external::target(&r).expect("url");
    let cases: &[(u16, &[u8], CheckStatus, &str)] = &[
        (200, b"<h1>I-1</h1>", CheckStatus::Passed, "mentions I-1"),
        (204, b"", CheckStatus::Passed, "found"),
        (404, b"", CheckStatus::Failed, "not found"),
        (410, b"", CheckStatus::Failed, "not found"),
        (500, b"", CheckStatus::Unknown, "answered 500"),
        (302, b"", CheckStatus::Unknown, "answered 302"),
        (401, b"", CheckStatus::Unknown, "answered 401"),
    ];
    for (status, body, expected, text) in cases {
        let c = external::interpret(&r, &url, *status, body);
        assert_eq!(c.status, *expected, "{status}: {}", c.message);
        assert!(c.message.contains(text), "{status}: {}", c.message);
    }
    let c = external::fetch_failed(&r, &url, "connection refused");
    assert_eq!(c.status, CheckStatus::Unknown);
}

#[test]
fn decision_matrix() {
    use CheckStatus::*;
    use Decision::*;
    let all = [
        AcceptRefine,
        RejectRefine,
        ReviseChild,
        DescendAgain,
        Ascend,
        ReplanCurrent,
        Fail,
    ];
    let cases: &[(CheckStatus, Outcome, &[Decision])] = &[
        (
            Passed,
            Outcome::Satisfied,
            &[
                AcceptRefine,
                RejectRefine,
                ReviseChild,
                DescendAgain,
                Ascend,
                ReplanCurrent,
                Fail,
            ],
        ),
        (
            Passed,
            Outcome::Partial,
            &[
                AcceptRefine,
                RejectRefine,
                ReviseChild,
                DescendAgain,
                Ascend,
                ReplanCurrent,
                Fail,
            ],
        ),
        (
            Failed,
            Outcome::Satisfied,
            &[ReviseChild, ReplanCurrent, Fail],
        ),
        (
            Unknown,
            Outcome::Partial,
            &[ReviseChild, ReplanCurrent, Fail],
        ),
        (Error, Outcome::Satisfied, &[ReviseChild, Fail]),
        (Passed, Outcome::Failed, &[ReviseChild, Fail]),
        (Passed, Outcome::ProtocolError, &[ReviseChild, Fail]),
        (Unknown, Outcome::ProtocolError, &[ReviseChild, Fail]),
    ];
    for (verdict, outcome, allowed) in cases {
        for d in all {
            let got = check_decision(*verdict, *outcome, d);
            assert_eq!(
                got.is_ok(),
                allowed.contains(&d),
                "{verdict} {outcome:?} {d}"
            );
            if let Err(e) = got {
                assert_eq!(e.allowed, allowed.to_vec());
                let names: Vec<_> = allowed.iter().map(|d| d.as_str()).collect();
                assert!(
                    e.to_string()
                        .ends_with(&format!("allowed: {}", names.join(", "))),
                    "{e}"
                );
            }
        }
    }
}

#[test]
fn decision_names_round_trip() {
    for d in [
        "accept_refine",
        "reject_refine",
        "revise_child",
        "descend_again",
        "ascend",
        "replan_current",
        "fail",
    ] {
        let parsed: Decision = d.parse().expect("known");
        assert_eq!(parsed.to_string(), d);
        assert_eq!(serde_json::to_value(parsed).expect("json"), d);
    }
    let err = "approve".parse::<Decision>().expect_err("unknown");
    assert!(err.contains("revise_child"), "{err}");
}

#[test]
fn validation_serialises_for_the_cli() {
    let v = check(TASK, None, &[], &none());
    let json = serde_json::to_value(&v).expect("json");
    assert_eq!(json["verdict"], "failed");
    assert_eq!(json["report"]["outcome"], "protocol_error");
}

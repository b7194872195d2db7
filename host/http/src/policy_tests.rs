//! Table tests for the egress decision (no network: addresses are given as DNS would).

use super::*;

fn policy(requested: &[&str], granted: &[&str]) -> EgressPolicy {
    EgressPolicy {
        plugin: "kb".into(),
        requested: AllowList::parse(requested).expect("requested parses"),
        granted: AllowList::parse(granted).expect("granted parses"),
        secrets: Vec::new(),
    }
}

fn ips(list: &[&str]) -> Vec<IpAddr> {
    list.iter().map(|s| s.parse().expect("ip")).collect()
}

#[test]
fn decision_table() {
    use DenyReason::*;
    let special = |addr: &str, class| {
        Err(SpecialAddress {
            addr: addr.parse().expect("ip"),
            class,
        })
    };
    type Case<'a> = (
        &'a [&'a str],
        &'a [&'a str],
        &'a str,
        &'a [&'a str],
        Result<(), DenyReason>,
    );
    let table: Vec<Case> = vec![
        // Public origin, requested and granted.
        (
            &["https://api.example.com"],
            &["https://api.example.com"],
            "https://api.example.com/x",
            &["93.184.215.14"],
            Ok(()),
        ),
        // Effective = requested ∩ granted.
        (
            &["https://api.example.com"],
            &[],
            "https://api.example.com/",
            &["93.184.215.14"],
            Err(NotGranted),
        ),
        (
            &[],
            &["https://api.example.com"],
            "https://api.example.com/",
            &["93.184.215.14"],
            Err(NotRequested),
        ),
        (
            &["https://*.example.com"],
            &["https://api.example.com"],
            "https://other.example.com/",
            &["93.184.215.14"],
            Err(NotGranted),
        ),
        (
            &["https://*.example.com"],
            &["https://*.example.com"],
            "https://a.example.com/",
            &["93.184.215.14"],
            Ok(()),
        ),
        // A public name resolving to a special address (DNS rebinding) is refused...
        (
            &["https://*.example.com"],
            &["https://*.example.com"],
            "https://a.example.com/",
            &["10.0.0.5"],
            special("10.0.0.5", AddressClass::Private),
        ),
        (
            &["https://api.example.com"],
            &["https://api.example.com"],
            "https://api.example.com/",
            &["93.184.215.14", "127.0.0.1"],
            special("127.0.0.1", AddressClass::Loopback),
        ),
        (
            &["https://api.example.com"],
            &["https://api.example.com"],
            "https://api.example.com/",
            &["::ffff:169.254.169.254"],
            special("::ffff:169.254.169.254", AddressClass::Metadata),
        ),
        (
            &["https://api.example.com"],
            &["https://api.example.com"],
            "https://api.example.com/",
            &["64:ff9b::a00:1"],
            special("64:ff9b::a00:1", AddressClass::Private),
        ),
        // ...wildcard patterns never authorise one, not even for loopback names.
        (
            &["http://*.localhost:*"],
            &["http://*.localhost:*"],
            "http://app.localhost:8080/",
            &["127.0.0.1"],
            special("127.0.0.1", AddressClass::Loopback),
        ),
        // An exact IP literal grant authorises that address.
        (
            &["http://127.0.0.1:8080"],
            &["http://127.0.0.1:8080"],
            "http://127.0.0.1:8080/",
            &["127.0.0.1"],
            Ok(()),
        ),
        (
            &["http://10.0.0.1"],
            &["http://10.0.0.1"],
            "http://10.0.0.1/",
            &["10.0.0.1"],
            Ok(()),
        ),
        (
            &["http://[::1]:*"],
            &["http://[::1]:*"],
            "http://[::1]:9000/",
            &["::1"],
            Ok(()),
        ),
        (
            &["http://169.254.169.254"],
            &["http://169.254.169.254"],
            "http://169.254.169.254/",
            &["169.254.169.254"],
            Ok(()),
        ),
        // Requested but not granted: the IP literal in the manifest alone does nothing.
        (
            &["http://10.0.0.1"],
            &["http://localhost"],
            "http://10.0.0.1/",
            &["10.0.0.1"],
            Err(NotGranted),
        ),
        // `localhost` exactly authorises loopback, and only loopback.
        (
            &["http://localhost:*"],
            &["http://localhost:*"],
            "http://localhost:3000/",
            &["127.0.0.1", "::1"],
            Ok(()),
        ),
        (
            &["http://localhost:*"],
            &["http://localhost:*"],
            "http://localhost:3000/",
            &["127.0.0.1", "10.0.0.1"],
            special("10.0.0.1", AddressClass::Private),
        ),
        (
            &["http://localhost:*"],
            &["http://localhost:*"],
            "http://127.0.0.1:3000/",
            &["127.0.0.1"],
            Err(NotRequested),
        ),
        (
            &["http://127.0.0.1:*"],
            &["http://localhost:*"],
            "http://127.0.0.1:3000/",
            &["127.0.0.1"],
            Err(NotGranted),
        ),
        // Unspecified/multicast are refused even when named.
        (
            &["http://0.0.0.0:8080"],
            &["http://0.0.0.0:8080"],
            "http://0.0.0.0:8080/",
            &["0.0.0.0"],
            Err(Unreachable {
                addr: "0.0.0.0".parse().expect("ip"),
                class: AddressClass::Unspecified,
            }),
        ),
        // Empty policy denies everything.
        (
            &[],
            &[],
            "https://api.example.com/",
            &["93.184.215.14"],
            Err(NotRequested),
        ),
    ];
    for (requested, granted, url, addrs, expected) in table {
        let p = policy(requested, granted);
        let target = Url::parse(url).expect("url");
        assert_eq!(
            p.check(&target, &ips(addrs)),
            expected,
            "requested {requested:?} granted {granted:?} url {url} addrs {addrs:?}"
        );
    }
    assert_eq!(
        EgressPolicy::deny_all("kb").check_url(&Url::parse("https://a.example/").expect("url")),
        Err(DenyReason::NotRequested)
    );
}

#[test]
fn secret_header_is_redacted_and_scoped() {
    let secret = SecretHeader::new(
        "TRACKER_TOKEN",
        "Authorization",
        "Bearer s3cr3t-value",
        AllowList::parse(["https://api.example.com"]).expect("hosts"),
    )
    .expect("valid secret");
    let mut p = policy(&["https://*.example.com"], &["https://*.example.com"]);
    p.secrets.push(secret);

    let debug = format!("{p:?}");
    assert!(!debug.contains("s3cr3t"), "{debug}");
    assert!(debug.contains("<redacted>"));

    let api = Url::parse("https://api.example.com/issues").expect("url");
    let other = Url::parse("https://other.example.com/").expect("url");
    assert_eq!(p.secrets_for(&api).count(), 1);
    assert_eq!(p.secrets_for(&other).count(), 0);

    let bad = SecretHeader::new(
        "T",
        "Authorization",
        "line\nbreak-s3cr3t",
        AllowList::default(),
    )
    .expect_err("newline refused");
    assert!(!bad.to_string().contains("s3cr3t"));
    let bad = SecretHeader::new("T", "bad header", "v", AllowList::default()).expect_err("name");
    assert!(bad.to_string().contains("bad header"));
}

//! The trust file as ssh-keygen reads it: `namespaces=` pattern lists, and lines Guild cannot
//! honour refused one by one with a warning naming them, the rest of the file still in force.

use std::path::Path;

use super::sign::fingerprint;
use super::tests::{check, err, key, plugin_dir, signed};
use super::trust::{AllowedSigners, Revoked, TrustPolicy};

fn policy_text(text: &str) -> TrustPolicy {
    TrustPolicy {
        signers: AllowedSigners::parse(text, Path::new("team/allowed_signers")).expect("signers"),
        revoked: Revoked::default(),
        require_signed: true,
        threshold: 1,
    }
}

fn openssh(seed: u8) -> String {
    key(seed).public_key().to_openssh().expect("openssh")
}

#[test]
fn namespaces_are_matched_as_ssh_keygen_pattern_lists() {
    let dir = plugin_dir("1.0.0", b"\0asm");
    let lead = key(1);
    let with = |namespaces: &str| {
        let line = format!("lead@team namespaces=\"{namespaces}\" {}", openssh(1));
        check(signed(dir.path(), &[&lead]), &policy_text(&line))
    };
    for allowed in [
        "guild-*",
        "git,guild-bundle",
        "guild-bund?e",
        "*",
        "!git,guild-*",
    ] {
        let v = with(allowed).unwrap_or_else(|e| panic!("{allowed}: {e}"));
        assert_eq!(v.signers[0].principals, ["lead@team"]);
    }
    for denied in [
        "git",
        "guild",
        "guild-bundle?",
        "*,!guild-*",
        "!git",
        "GUILD-BUNDLE",
        "",
    ] {
        let e = err(with(denied));
        assert!(e.contains("untrusted"), "{denied}: {e}");
    }
}

#[test]
fn a_line_guild_cannot_honour_is_refused_alone_with_a_warning_naming_it() {
    let dir = plugin_dir("1.0.0", b"\0asm");
    let text = [
        format!("one@team verify-required {}", openssh(1)),
        format!("two@team namespaces=guild-bundle {}", openssh(2)),
        format!(
            "three@team no-touch-required,namespaces=\"guild-bundle\" {}",
            openssh(3)
        ),
        format!(
            "four@team namespaces=\"git\",namespaces=\"guild-bundle\" {}",
            openssh(4)
        ),
        "# a comment".to_owned(),
        format!("five@team namespaces=\"guild-bundle\" {}", openssh(5)),
        format!("six@team cert-authority {}", openssh(6)),
    ]
    .join("\n");
    let p = policy_text(&text);
    let refused: Vec<usize> = p.signers.refused.iter().map(|r| r.line).collect();
    assert_eq!(refused, [1, 2, 3, 4]);
    let warnings = p.signers.warnings().join("\n");
    for needle in [
        "team/allowed_signers:1: line refused: option \"verify-required\" is not supported",
        "team/allowed_signers:2: line refused: option \"namespaces\" needs a value in double quotes",
        "team/allowed_signers:3: line refused: option \"no-touch-required\"",
        "team/allowed_signers:4: line refused: option \"namespaces\" is given twice",
    ] {
        assert!(warnings.contains(needle), "{needle} not in\n{warnings}");
    }
    // Allowed: the other lines still count (a plain key and a CA line).
    let v = check(signed(dir.path(), &[&key(5)]), &p).expect("line 6 trusts key 5");
    assert_eq!(v.signers[0].principals, ["five@team"]);
    assert!(
        p.signers
            .entries
            .iter()
            .any(|e| e.cert_authority && e.line == 7)
    );
    // Denied: the refused line's key is untrusted, and the refusal says which line and why.
    let e = err(check(signed(dir.path(), &[&key(1)]), &p));
    assert!(
        e.contains("team/allowed_signers:1 lists this key but that line was refused")
            && e.contains("verify-required"),
        "{e}"
    );
    // A CA line never vouches for the CA key's own bare signature.
    let e = err(check(signed(dir.path(), &[&key(6)]), &p));
    assert!(e.contains("untrusted"), "{e}");
}

#[test]
fn a_malformed_line_still_stops_the_whole_file() {
    for (line, needle) in [
        (
            "lead@team ssh-ed25519 not-base64".to_owned(),
            ":1: not a public key",
        ),
        ("lead@team".to_owned(), ":1: no key after the principals"),
        (
            format!("lead@team valid-before=\"2026\" {}", openssh(1)),
            "is not a time",
        ),
    ] {
        let e = AllowedSigners::parse(&line, Path::new("allowed_signers"))
            .expect_err("malformed line accepted");
        assert!(e.to_string().contains(needle), "{line}: {e}");
    }
    let fine = AllowedSigners::parse(
        &format!("lead@team valid-before=\"20300101Z\" {}", openssh(1)),
        Path::new("allowed_signers"),
    )
    .expect("well formed");
    assert_eq!(fine.entries.len(), 1);
    assert!(fine.refused.is_empty());
    assert_eq!(
        fingerprint(&fine.entries[0].key),
        fingerprint(key(1).public_key())
    );
}

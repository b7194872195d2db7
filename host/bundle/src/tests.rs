//! Bundle format, signature, trust and verification tests: one bundle built for each refusal.

use std::path::{Path, PathBuf};

use ssh_key::PrivateKey;
use ssh_key::private::Ed25519Keypair;

use super::archive::{self, PackOptions};
use super::sign::{self, fingerprint};
use super::trust::{AllowedSigners, Revoked, TrustPolicy, format_entry};
use super::*;

const NOW: u64 = 1_800_000_000;

pub(super) fn key(seed: u8) -> PrivateKey {
    PrivateKey::from(Ed25519Keypair::from_seed(&[seed; 32]))
}

pub(super) fn plugin_dir(version: &str, component: &[u8]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("plugin.toml"),
        format!(
            "[plugin]\nname = \"demo\"\nversion = \"{version}\"\nkind = \"specialist\"\ncomponent = \"demo.wasm\"\n\n[capabilities]\nllm = true\n"
        ),
    )
    .expect("write plugin.toml");
    std::fs::write(dir.path().join("demo.wasm"), component).expect("write component");
    std::fs::create_dir_all(dir.path().join("skills/triage")).expect("mkdir");
    std::fs::write(
        dir.path().join("skills/triage/SKILL.md"),
        "---\nname: triage\n---\n",
    )
    .expect("write skill");
    dir
}

pub(super) fn pack(dir: &Path, expires: Option<u64>) -> Bundle {
    archive::pack(
        dir,
        PackOptions {
            created: NOW - 100,
            expires,
        },
        Caps::default(),
    )
    .expect("pack")
}

pub(super) fn signed(dir: &Path, keys: &[&PrivateKey]) -> Bundle {
    let mut b = pack(dir, None);
    for k in keys {
        b.signatures
            .push(sign::sign(k, &b.manifest_bytes).expect("sign"));
    }
    b
}

fn policy(lines: &[String], revoked: &[&PrivateKey], threshold: usize) -> TrustPolicy {
    let text = lines.join("\n");
    TrustPolicy {
        signers: AllowedSigners::parse(&text, Path::new("allowed_signers")).expect("signers"),
        revoked: Revoked::parse(
            &revoked
                .iter()
                .map(|k| fingerprint(k.public_key()))
                .collect::<Vec<_>>()
                .join("\n"),
            Path::new("revoked_signers"),
        )
        .expect("revoked"),
        require_signed: true,
        threshold,
    }
}

fn trusts(principal: &str, k: &PrivateKey) -> String {
    format_entry(principal, k.public_key(), None, None).expect("entry")
}

pub(super) fn check(bundle: Bundle, policy: &TrustPolicy) -> Result<Verified, BundleError> {
    // Round trip through the archive bytes so every test reads what a file would hold.
    let bytes = archive::write(&bundle).expect("write");
    let read = archive::read(&bytes, Caps::default())?;
    verify(read, policy, NOW, &PathBuf::from("/nonexistent/demo"))
}

pub(super) fn err(result: Result<Verified, BundleError>) -> String {
    match result {
        Ok(v) => panic!("accepted {}@{}", v.manifest.name, v.manifest.version),
        Err(e) => e.to_string(),
    }
}

#[test]
fn packing_the_same_folder_twice_gives_the_same_bytes() {
    let dir = plugin_dir("1.0.0", b"\0asm\x0d\0\x01\0component");
    let a = archive::write(&pack(dir.path(), None)).expect("write");
    let b = archive::write(&pack(dir.path(), None)).expect("write");
    assert_eq!(a, b);
    let m = DigestManifest::parse(&pack(dir.path(), None).manifest_bytes).expect("manifest");
    let paths: Vec<_> = m.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        ["demo.wasm", "plugin.toml", "skills/triage/SKILL.md"]
    );
    assert_eq!(
        (m.name.as_str(), m.version.as_str(), m.kind.as_str()),
        ("demo", "1.0.0", "specialist")
    );
    assert_eq!(m.wit, wit_version());
    assert_ne!(m.wit, "unknown");
}

#[test]
fn a_bundle_signed_by_a_trusted_key_verifies_and_names_its_signer() {
    let dir = plugin_dir("1.0.0", b"\0asm");
    let lead = key(1);
    let v = check(
        signed(dir.path(), &[&lead]),
        &policy(&[trusts("lead@team", &lead)], &[], 1),
    )
    .expect("verifies");
    assert_eq!(v.signers.len(), 1);
    assert_eq!(v.signers[0].principals, ["lead@team"]);
    assert_eq!(v.signers[0].fingerprint, fingerprint(lead.public_key()));
    assert_eq!(v.files["demo.wasm"], b"\0asm");
    assert_eq!(v.plugin.name(), "demo");
}

#[test]
fn unsigned_untrusted_and_other_namespace_are_refused() {
    let dir = plugin_dir("1.0.0", b"\0asm");
    let lead = key(1);
    let stranger = key(2);
    let p = policy(&[trusts("lead@team", &lead)], &[], 1);
    assert!(err(check(pack(dir.path(), None), &p)).contains("unsigned"));
    assert!(err(check(signed(dir.path(), &[&stranger]), &p)).contains("untrusted"));
    let git_only = format!(
        "lead@team namespaces=\"git\" {}",
        lead.public_key().to_openssh().expect("openssh")
    );
    assert!(
        err(check(
            signed(dir.path(), &[&lead]),
            &policy(&[git_only], &[], 1)
        ))
        .contains("untrusted")
    );
    let mut lenient = policy(&[], &[], 1);
    lenient.require_signed = false;
    let v = check(pack(dir.path(), None), &lenient).expect("unsigned allowed when not required");
    assert!(v.signers.is_empty());
}

#[test]
fn a_signature_in_another_namespace_is_refused() {
    let dir = plugin_dir("1.0.0", b"\0asm");
    let lead = key(1);
    let mut b = pack(dir.path(), None);
    let sig = lead
        .sign("git", ssh_key::HashAlg::Sha512, &b.manifest_bytes)
        .expect("sign");
    b.signatures.push(
        sig.to_pem(ssh_key::LineEnding::LF)
            .expect("pem")
            .into_bytes(),
    );
    let e = err(check(b, &policy(&[trusts("lead@team", &lead)], &[], 1)));
    assert!(e.contains("namespace \"git\""), "{e}");
}

#[test]
fn revocation_wins_over_every_other_signature() {
    let dir = plugin_dir("1.0.0", b"\0asm");
    let (a, b) = (key(1), key(2));
    let p = policy(&[trusts("a@team", &a), trusts("b@team", &b)], &[&b], 1);
    let e = err(check(signed(dir.path(), &[&a, &b]), &p));
    assert!(e.contains("revoked key") && e.contains("001.sig"), "{e}");
    check(signed(dir.path(), &[&a]), &p).expect("a alone is fine");
}

#[test]
fn threshold_counts_distinct_keys_only() {
    let dir = plugin_dir("1.0.0", b"\0asm");
    let (a, b) = (key(1), key(2));
    let same_key_two_principals = [
        trusts("a@team", &a),
        trusts("alias@team", &a),
        trusts("b@team", &b),
    ];
    let p = policy(&same_key_two_principals, &[], 2);
    let e = err(check(signed(dir.path(), &[&a, &a]), &p));
    assert!(
        e.contains("needs 2 distinct") && e.contains("counted once"),
        "{e}"
    );
    let v = check(signed(dir.path(), &[&a, &b]), &p).expect("two keys");
    assert_eq!(v.signers.len(), 2);
}

#[test]
fn expired_bundles_and_keys_outside_their_window_are_refused() {
    let dir = plugin_dir("1.0.0", b"\0asm");
    let lead = key(1);
    let p = policy(&[trusts("lead@team", &lead)], &[], 1);
    let mut b = pack(dir.path(), Some(NOW - 1));
    b.signatures
        .push(sign::sign(&lead, &b.manifest_bytes).expect("sign"));
    assert!(err(check(b, &p)).contains("expired at"));
    let mut fresh = pack(dir.path(), Some(NOW + 60));
    fresh
        .signatures
        .push(sign::sign(&lead, &fresh.manifest_bytes).expect("sign"));
    check(fresh, &p).expect("not expired yet");

    let old = format_entry("lead@team", lead.public_key(), None, Some("20200101")).expect("entry");
    let e = err(check(signed(dir.path(), &[&lead]), &policy(&[old], &[], 1)));
    assert!(e.contains("expired at 2020-01-01"), "{e}");
    let future =
        format_entry("lead@team", lead.public_key(), Some("21000101Z"), None).expect("entry");
    let e = err(check(
        signed(dir.path(), &[&lead]),
        &policy(&[future], &[], 1),
    ));
    assert!(e.contains("not valid until 2100-01-01"), "{e}");
}

#[test]
fn a_bundle_created_in_the_future_is_refused_beyond_the_clock_skew() {
    let dir = plugin_dir("1.0.0", b"\0asm");
    let lead = key(1);
    let p = policy(&[trusts("lead@team", &lead)], &[], 1);
    let at = |created: u64| {
        let mut b = archive::pack(
            dir.path(),
            PackOptions {
                created,
                expires: None,
            },
            Caps::default(),
        )
        .expect("pack");
        b.signatures
            .push(sign::sign(&lead, &b.manifest_bytes).expect("sign"));
        check(b, &p)
    };
    at(NOW + verify::CREATED_SKEW_S).expect("within the skew");
    let e = err(at(NOW + verify::CREATED_SKEW_S + 1));
    assert!(
        e.contains("demo@1.0.0 says it was created at") && e.contains("clock skew"),
        "{e}"
    );
    let e = err(at(NOW + 365 * 86_400));
    assert!(e.contains("later than now"), "{e}");
}

#[test]
fn a_key_is_refused_before_valid_after_and_from_valid_before_on() {
    let dir = plugin_dir("1.0.0", b"\0asm");
    let lead = key(1);
    let window = |after: &str, before: &str| {
        let entry =
            format_entry("lead@team", lead.public_key(), Some(after), Some(before)).expect("entry");
        check(signed(dir.path(), &[&lead]), &policy(&[entry], &[], 1))
    };
    // NOW is 2027-01-15T08:00:00Z.
    window("20270115Z", "20270116Z").expect("inside its window");
    let e = err(window("20270116Z", "20270201Z"));
    assert!(e.contains("not valid until 2027-01-16"), "{e}");
    let e = err(window("20260101Z", "20270115Z"));
    assert!(e.contains("expired at 2027-01-15"), "{e}");
}

#[test]
fn any_byte_changed_after_signing_is_refused() {
    let dir = plugin_dir("1.0.0", b"\0asm-original");
    let lead = key(1);
    let p = policy(&[trusts("lead@team", &lead)], &[], 1);

    let mut b = signed(dir.path(), &[&lead]);
    b.files
        .insert("demo.wasm".into(), b"\0asm-Original".to_vec());
    let e = err(check(b, &p));
    assert!(
        e.contains("\"demo.wasm\"") && e.contains("changed after signing"),
        "{e}"
    );

    let mut b = signed(dir.path(), &[&lead]);
    b.files
        .insert("demo.wasm".into(), b"\0asm-original+".to_vec());
    assert!(err(check(b, &p)).contains("bytes, the signed manifest says"));

    let mut b = signed(dir.path(), &[&lead]);
    let at = b.manifest_bytes.len() - 3;
    b.manifest_bytes[at] ^= 1;
    let e = err(check(b, &p));
    assert!(e.contains("manifest"), "{e}");

    let mut b = signed(dir.path(), &[&lead]);
    b.files.insert("skills/extra.md".into(), b"hi".to_vec());
    let e = err(check(b, &p));
    assert!(
        e.contains("skills/extra.md") && e.contains("not in the signed manifest"),
        "{e}"
    );

    let mut b = signed(dir.path(), &[&lead]);
    b.files.remove("skills/triage/SKILL.md");
    let e = err(check(b, &p));
    assert!(
        e.contains("SKILL.md") && e.contains("missing from the bundle"),
        "{e}"
    );
}

#[test]
fn a_tampered_manifest_fails_its_signature() {
    let dir = plugin_dir("1.0.0", b"\0asm");
    let lead = key(1);
    let p = policy(&[trusts("lead@team", &lead)], &[], 1);
    let mut b = signed(dir.path(), &[&lead]);
    let mut m = DigestManifest::parse(&b.manifest_bytes).expect("manifest");
    m.expires = None;
    m.version = "9.9.9".into();
    b.manifest_bytes = m.to_bytes();
    let e = err(check(b, &p));
    assert!(e.contains("changed after signing"), "{e}");
}

#[test]
fn mixing_two_bundles_parts_is_refused() {
    let lead = key(1);
    let p = policy(&[trusts("lead@team", &lead)], &[], 1);
    let one = plugin_dir("1.0.0", b"\0asm-one");
    let two = plugin_dir("2.0.0", b"\0asm-two");
    let a = signed(one.path(), &[&lead]);
    let b = signed(two.path(), &[&lead]);
    // A's signed manifest with B's files.
    let mixed = Bundle {
        manifest_bytes: a.manifest_bytes.clone(),
        files: b.files.clone(),
        signatures: a.signatures.clone(),
    };
    let e = err(check(mixed, &p));
    assert!(e.contains("changed after signing"), "{e}");
    // B's signature on A's manifest.
    let swapped = Bundle {
        signatures: b.signatures,
        ..a
    };
    assert!(err(check(swapped, &p)).contains("does not match the manifest"));
}

#[test]
fn a_non_canonical_manifest_is_refused() {
    let dir = plugin_dir("1.0.0", b"\0asm");
    let b = pack(dir.path(), None);
    let mut pretty =
        serde_json::to_vec_pretty(&DigestManifest::parse(&b.manifest_bytes).expect("manifest"))
            .expect("json");
    pretty.push(b'\n');
    assert!(DigestManifest::parse(&pretty).is_err());
    let extra = String::from_utf8(b.manifest_bytes.clone())
        .expect("utf8")
        .replacen("{", "{\"grants\":1,", 1);
    assert!(DigestManifest::parse(extra.as_bytes()).is_err());
}

#[test]
fn packing_refuses_symlinks_and_policy_files() {
    let dir = plugin_dir("1.0.0", b"\0asm");
    std::fs::write(dir.path().join("guild.toml"), "[grants.demo]\n").expect("write");
    let e = archive::pack(
        dir.path(),
        PackOptions {
            created: 0,
            expires: None,
        },
        Caps::default(),
    )
    .expect_err("policy file packed");
    assert!(e.to_string().contains("policy file"), "{e}");
    std::fs::remove_file(dir.path().join("guild.toml")).expect("rm");
    std::os::unix::fs::symlink("/etc/passwd", dir.path().join("link")).expect("symlink");
    let e = archive::pack(
        dir.path(),
        PackOptions {
            created: 0,
            expires: None,
        },
        Caps::default(),
    )
    .expect_err("symlink packed");
    assert!(e.to_string().contains("symbolic link"), "{e}");
}

//! Every key type Guild supports, against the real `ssh-keygen` both ways (it signs and Guild
//! verifies; Guild signs and `ssh-keygen -Y verify` accepts), and certificates made with
//! `ssh-keygen -s` under `cert-authority` lines, refused and accepted as ssh-keygen decides.

use std::path::{Path, PathBuf};
use std::process::Command;

use ssh_key::PrivateKey;

use super::archive::{self, PackOptions};
use super::sign::{self, fingerprint};
use super::trust::{AllowedSigners, Revoked, TrustPolicy};
use super::*;

/// 2027-01-15T08:00:00Z, inside the certificates' windows below.
const NOW: u64 = 1_800_000_000;

struct Keys {
    dir: tempfile::TempDir,
}

impl Keys {
    fn new() -> Keys {
        Keys {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn ssh_keygen(&self, args: &[&str]) -> std::process::Output {
        Command::new("ssh-keygen")
            .current_dir(self.dir.path())
            .args(args)
            .output()
            .expect("ssh-keygen runs (install openssh-client)")
    }

    fn ok(&self, args: &[&str]) {
        let out = self.ssh_keygen(args);
        assert!(
            out.status.success(),
            "ssh-keygen {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// A key made by ssh-keygen: `kind` is `-t`, `bits` is `-b` (empty for the default).
    fn keygen(&self, name: &str, kind: &str, bits: &str) -> PrivateKey {
        let mut args = vec!["-q", "-t", kind, "-N", "", "-C", name, "-f", name];
        if !bits.is_empty() {
            args.extend(["-b", bits]);
        }
        self.ok(&args);
        self.load(name)
    }

    /// The key file `name` read as `guild bundle sign` reads it.
    fn load(&self, name: &str) -> PrivateKey {
        sign::load_private_key(&self.path(name), || Err("no passphrase".into()))
            .unwrap_or_else(|e| panic!("guild reads the key {name}: {e}"))
    }

    fn public(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(&format!("{name}.pub")))
            .expect("public key")
            .trim()
            .to_owned()
    }

    /// `ssh-keygen -Y sign` over `message` with the key (or certificate) file `signer`.
    fn sign(&self, signer: &str, message: &[u8]) -> Vec<u8> {
        std::fs::write(self.path("message"), message).expect("write");
        let _ = std::fs::remove_file(self.path("message.sig"));
        self.ok(&["-Y", "sign", "-n", SIG_NAMESPACE, "-f", signer, "message"]);
        std::fs::read(self.path("message.sig")).expect("signature")
    }

    /// Whether `ssh-keygen -Y verify` accepts `sig` over `message` for `principal`.
    fn ssh_keygen_accepts(
        &self,
        signers: &str,
        principal: &str,
        sig: &[u8],
        message: &[u8],
    ) -> bool {
        std::fs::write(self.path("allowed"), signers).expect("write");
        std::fs::write(self.path("check.sig"), sig).expect("write");
        std::fs::write(self.path("check"), message).expect("write");
        let out = Command::new("sh")
            .current_dir(self.dir.path())
            .arg("-c")
            .arg(format!(
                "ssh-keygen -Y verify -f allowed -I '{principal}' -n {SIG_NAMESPACE} \
                 -s check.sig -Overify-time=20270115080000Z < check"
            ))
            .output()
            .expect("sh runs");
        out.status.success()
    }
}

fn plugin() -> (tempfile::TempDir, Bundle) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("plugin.toml"),
        "[plugin]\nname = \"demo\"\nversion = \"1.0.0\"\nkind = \"specialist\"\ncomponent = \"demo.wasm\"\n",
    )
    .expect("write");
    std::fs::write(dir.path().join("demo.wasm"), b"\0asm").expect("write");
    let b = archive::pack(
        dir.path(),
        PackOptions {
            created: NOW - 100,
            expires: None,
        },
        Caps::default(),
    )
    .expect("pack");
    (dir, b)
}

fn policy(signers: &str, revoked: &str) -> TrustPolicy {
    TrustPolicy {
        signers: AllowedSigners::parse(signers, Path::new("allowed_signers")).expect("signers"),
        revoked: Revoked::parse(revoked, Path::new("revoked_signers")).expect("revoked"),
        require_signed: true,
        threshold: 1,
    }
}

fn verify_with(
    bundle: &Bundle,
    sig: Vec<u8>,
    policy: &TrustPolicy,
) -> Result<Verified, BundleError> {
    let mut b = bundle.clone();
    b.signatures.push(sig);
    let bytes = archive::write(&b).expect("write");
    verify(
        archive::read(&bytes, Caps::default())?,
        policy,
        NOW,
        Path::new("/nonexistent/demo"),
    )
}

const KEY_TYPES: &[(&str, &str)] = &[
    ("ed25519", ""),
    ("ecdsa", "256"),
    ("ecdsa", "384"),
    ("ecdsa", "521"),
    ("rsa", "2048"),
    ("rsa", "4096"),
];

#[test]
fn every_key_type_verifies_what_ssh_keygen_signed_and_ssh_keygen_verifies_guild() {
    let keys = Keys::new();
    let (_dir, bundle) = plugin();
    for (kind, bits) in KEY_TYPES {
        let name = format!("{kind}{bits}");
        let key = keys.keygen(&name, kind, bits);
        let line = format!(
            "{name}@team namespaces=\"{SIG_NAMESPACE}\" {}",
            keys.public(&name)
        );
        let p = policy(&line, "");

        let by_ssh_keygen = keys.sign(&name, &bundle.manifest_bytes);
        let v = verify_with(&bundle, by_ssh_keygen, &p)
            .unwrap_or_else(|e| panic!("{name} signed by ssh-keygen: {e}"));
        assert_eq!(v.signers[0].principals, [format!("{name}@team")]);
        assert_eq!(v.signers[0].fingerprint, fingerprint(key.public_key()));

        let by_guild = sign::sign(&key, &bundle.manifest_bytes).expect("guild signs");
        assert!(
            keys.ssh_keygen_accepts(
                &line,
                &format!("{name}@team"),
                &by_guild,
                &bundle.manifest_bytes
            ),
            "ssh-keygen refused what guild signed with {name}"
        );
        verify_with(&bundle, by_guild.clone(), &p).expect("guild verifies its own");

        // The same signature over other bytes is a change after signing, for every type.
        let mut other = bundle.clone();
        let text = String::from_utf8(other.manifest_bytes).expect("utf8");
        other.manifest_bytes = text
            .replacen("\"created\":", "\"created\":1", 1)
            .into_bytes();
        let e = verify_with(&other, by_guild, &p).expect_err("tampered");
        assert!(
            e.to_string().contains("changed after signing"),
            "{name}: {e}"
        );
    }
}

#[test]
fn rsa_signs_with_sha2_and_a_short_rsa_key_is_refused_by_name() {
    let keys = Keys::new();
    let (_dir, bundle) = plugin();
    keys.keygen("rsa", "rsa", "2048");
    let line = format!("rsa@team {}", keys.public("rsa"));
    // ssh-keygen signs with rsa-sha2-512.
    let sig = keys.sign("rsa", &bundle.manifest_bytes);
    verify_with(&bundle, sig, &policy(&line, "")).expect("rsa-sha2-512");

    keys.ok(&["-q", "-t", "rsa", "-b", "1024", "-N", "", "-f", "short"]);
    let sig = keys.sign("short", &bundle.manifest_bytes);
    let line = format!("short@team {}", keys.public("short"));
    let e = verify_with(&bundle, sig, &policy(&line, "")).expect_err("1024-bit key");
    assert!(e.to_string().contains("1024 bits is not supported"), "{e}");
}

/// A CA, a user key and its certificate (`ssh-keygen -s`), with the given extra arguments.
fn certified(keys: &Keys, ca: &str, user: &str, args: &[&str]) {
    if !keys.path(ca).exists() {
        keys.keygen(ca, "ed25519", "");
    }
    if !keys.path(user).exists() {
        keys.keygen(user, "ecdsa", "256");
    }
    let _ = std::fs::remove_file(keys.path(&format!("{user}-cert.pub")));
    let mut all = vec!["-q", "-s", ca, "-I", "alice-laptop"];
    all.extend(args);
    let pubkey = format!("{user}.pub");
    all.push(&pubkey);
    keys.ok(&all);
}

#[test]
fn a_certificate_from_a_trusted_ca_verifies_for_the_principals_the_line_accepts() {
    let keys = Keys::new();
    let (_dir, bundle) = plugin();
    certified(
        &keys,
        "ca",
        "alice",
        &["-n", "alice@team,ops", "-V", "20260101:20280101"],
    );
    let sig = keys.sign("alice-cert.pub", &bundle.manifest_bytes);
    let ca_line = |principals: &str| {
        format!(
            "{principals} cert-authority,namespaces=\"guild-*\" {}",
            keys.public("ca")
        )
    };
    for (principals, expected) in [
        ("alice@team", vec!["alice@team"]),
        ("*@team", vec!["alice@team"]),
        ("*", vec!["alice@team", "ops"]),
    ] {
        let line = ca_line(principals);
        let v = verify_with(&bundle, sig.clone(), &policy(&line, ""))
            .unwrap_or_else(|e| panic!("{principals}: {e}"));
        assert_eq!(v.signers[0].principals, expected, "{principals}");
        let ca = keys.load("ca");
        assert_eq!(
            v.signers[0].certified_by,
            Some(fingerprint(ca.public_key()))
        );
        let alice = keys.load("alice");
        assert_eq!(v.signers[0].fingerprint, fingerprint(alice.public_key()));
        assert!(keys.ssh_keygen_accepts(&line, "alice@team", &sig, &bundle.manifest_bytes));
    }
    // Denied: a principal the line does not accept, the same refusal ssh-keygen makes.
    let line = ca_line("bob@team,!alice@team");
    let e = verify_with(&bundle, sig.clone(), &policy(&line, "")).expect_err("bob only");
    assert!(e.to_string().contains("no cert-authority line"), "{e}");
    assert!(!keys.ssh_keygen_accepts(&line, "alice@team", &sig, &bundle.manifest_bytes));
    // Denied: a namespace list that negates the bundle namespace.
    let line = format!(
        "* cert-authority,namespaces=\"*,!guild-bundle\" {}",
        keys.public("ca")
    );
    let e = verify_with(&bundle, sig.clone(), &policy(&line, "")).expect_err("negated");
    assert!(e.to_string().contains("untrusted"), "{e}");
    assert!(!keys.ssh_keygen_accepts(&line, "alice@team", &sig, &bundle.manifest_bytes));
}

#[test]
fn certificates_are_refused_outside_their_window_from_another_ca_or_a_revoked_one() {
    let keys = Keys::new();
    let (_dir, bundle) = plugin();
    let line = |ca: &str| format!("*@team cert-authority {}", keys.public(ca));
    let refused = |args: &[&str], signers: &str, revoked: &str, needle: &str| {
        certified(&keys, "ca", "alice", args);
        let sig = keys.sign("alice-cert.pub", &bundle.manifest_bytes);
        let e = verify_with(&bundle, sig, &policy(signers, revoked)).expect_err(needle);
        assert!(e.to_string().contains(needle), "{needle}: {e}");
    };
    keys.keygen("ca", "ed25519", "");
    keys.keygen("other", "ed25519", "");
    let ca = line("ca");
    refused(
        &["-n", "a@team", "-V", "20200101:20200201"],
        &ca,
        "",
        "expired at 2020-02-01",
    );
    refused(
        &["-n", "a@team", "-V", "20300101:20310101"],
        &ca,
        "",
        "not valid until 2030",
    );
    refused(&["-n", "a@team", "-h"], &ca, "", "host certificate");
    refused(
        &["-n", "a@team", "-O", "force-command=/bin/true"],
        &ca,
        "",
        "critical option(s) force-command",
    );
    refused(
        &["-n", "a@team"],
        &line("other"),
        "",
        "which no cert-authority line",
    );
    refused(&["-n", "a@team"], &ca, &keys.public("ca"), "revoked CA key");
    // The certified key listed as a bare key does not vouch for the certificate (nor does
    // ssh-keygen), and a CA line does not vouch for the CA key's own bare signatures.
    certified(&keys, "ca", "alice", &["-n", "a@team"]);
    let sig = keys.sign("alice-cert.pub", &bundle.manifest_bytes);
    let bare = format!("a@team {}", keys.public("alice"));
    verify_with(&bundle, sig.clone(), &policy(&bare, "")).expect_err("bare line");
    assert!(!keys.ssh_keygen_accepts(&bare, "a@team", &sig, &bundle.manifest_bytes));
    let by_ca = keys.sign("ca", &bundle.manifest_bytes);
    verify_with(&bundle, by_ca, &policy(&ca, "")).expect_err("bare CA signature");
    // Allowed: the same certificate, valid forever (no -V), under the right line.
    verify_with(&bundle, sig, &policy(&ca, "")).expect("forever certificate");
}

#[test]
fn a_certificate_whose_principals_were_edited_fails_its_ca_signature() {
    let keys = Keys::new();
    let (_dir, bundle) = plugin();
    certified(&keys, "ca", "alice", &["-n", "alice@team"]);
    let sig = keys.sign("alice-cert.pub", &bundle.manifest_bytes);
    // Alice (who holds her key) rewrites her certificate to say "admin@team" and signs anew.
    let forged = forge(
        &keys,
        &sig,
        b"alice@team",
        b"admin@tea1",
        &bundle.manifest_bytes,
    );
    let line = format!("admin@tea1 cert-authority {}", keys.public("ca"));
    let e = verify_with(&bundle, forged, &policy(&line, "")).expect_err("forged");
    assert!(e.to_string().contains("does not verify"), "{e}");
}

/// Re-signs `sig`'s SSHSIG with alice's key after replacing `from` by `to` (same length) in
/// the certificate it carries: a certificate edited by its holder.
fn forge(keys: &Keys, sig: &[u8], from: &[u8], to: &[u8], message: &[u8]) -> Vec<u8> {
    use ssh_encoding::base64::{Base64, Encoding};
    use ssh_encoding::{Decode, Encode};
    let body: String = std::str::from_utf8(sig)
        .expect("text")
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .collect();
    let blob = Base64::decode_vec(&body).expect("base64");
    let r = &mut &blob[6 + 4..];
    let mut cert = Vec::<u8>::decode(r).expect("cert");
    let at = cert
        .windows(from.len())
        .position(|w| w == from)
        .expect("principal in the certificate");
    cert[at..at + from.len()].copy_from_slice(to);
    let alice = keys.load("alice");
    let data = ssh_key::SshSig::signed_data(SIG_NAMESPACE, ssh_key::HashAlg::Sha512, message)
        .expect("signed data");
    let signature =
        signature::Signer::<ssh_key::Signature>::try_sign(alice.key_data(), &data).expect("sign");
    let mut out = b"SSHSIG".to_vec();
    1u32.encode(&mut out).expect("encode");
    cert.encode(&mut out).expect("encode");
    SIG_NAMESPACE.encode(&mut out).expect("encode");
    Vec::<u8>::new().encode(&mut out).expect("encode");
    "sha512".encode(&mut out).expect("encode");
    let mut sig_blob = Vec::new();
    signature.encode(&mut sig_blob).expect("encode");
    sig_blob.encode(&mut out).expect("encode");
    let encoded = Base64::encode_string(&out);
    let mut pem = String::from("-----BEGIN SSH SIGNATURE-----\n");
    for line in encoded.as_bytes().chunks(70) {
        pem.push_str(std::str::from_utf8(line).expect("ascii"));
        pem.push('\n');
    }
    pem.push_str("-----END SSH SIGNATURE-----\n");
    pem.into_bytes()
}

/// Signs with `key` through Guild and asks `ssh-keygen -Y verify` whether it accepts the signature
/// for the public key in `public` (an `authorized_keys`-style line).
fn ssh_keygen_accepts_guild(keys: &Keys, key: &PrivateKey, public: &str) -> bool {
    let (_dir, bundle) = plugin();
    let by_guild = sign::sign(key, &bundle.manifest_bytes).expect("guild signs");
    let line = format!("k@team namespaces=\"{SIG_NAMESPACE}\" {public}");
    keys.ssh_keygen_accepts(&line, "k@team", &by_guild, &bundle.manifest_bytes)
}

/// OpenSSH writes an ECDSA scalar as an mpint without its leading zero bytes: about half of all
/// P-521 keys and one P-256 key in 256. The fixtures are such keys (ssh-key 0.6.7 alone refuses
/// each); Guild reads them, plain and encrypted (aes256-ctr and aes256-gcm), and signs with them.
#[test]
fn ecdsa_keys_with_a_short_scalar_are_read_and_sign() {
    let keys = Keys::new();
    let fixture = |name: &str, text: &str| {
        let path = keys.path(name);
        std::fs::write(&path, text).expect("write");
        path
    };
    let cases = [
        (
            "p521-short.key",
            include_str!("testdata/p521-short.key"),
            None,
        ),
        (
            "p256-short.key",
            include_str!("testdata/p256-short.key"),
            None,
        ),
        (
            "p521-short-pass.key",
            include_str!("testdata/p521-short-pass.key"),
            Some("correct horse"),
        ),
        (
            "p521-short-gcm.key",
            include_str!("testdata/p521-short-gcm.key"),
            Some("correct horse"),
        ),
    ];
    for (name, text, pass) in cases {
        let refused_by_ssh_key = match PrivateKey::from_openssh(text) {
            Err(_) => true,
            Ok(k) => k.decrypt(pass.unwrap_or_default()).is_err(),
        };
        assert!(
            refused_by_ssh_key,
            "{name} no longer shows the short-scalar case"
        );
        let path = fixture(name, text);
        let key = sign::load_private_key(&path, || {
            pass.map(str::to_owned)
                .ok_or_else(|| "asked for a passphrase".to_owned())
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        let public = if name.starts_with("p256") {
            include_str!("testdata/p256-short.key.pub")
        } else {
            include_str!("testdata/p521-short.key.pub")
        };
        let expected = ssh_key::PublicKey::from_openssh(public.trim()).expect("public");
        assert_eq!(key.public_key().key_data(), expected.key_data(), "{name}");
        assert!(
            ssh_keygen_accepts_guild(&keys, &key, public.trim()),
            "{name}"
        );
    }
}

#[test]
fn a_wrong_or_missing_passphrase_and_a_non_key_are_named() {
    let keys = Keys::new();
    for (name, text) in [
        ("ctr", include_str!("testdata/p521-short-pass.key")),
        ("gcm", include_str!("testdata/p521-short-gcm.key")),
    ] {
        std::fs::write(keys.path(name), text).expect("write");
        let e = sign::load_private_key(&keys.path(name), || Ok("wrong horse".into()))
            .expect_err("wrong passphrase");
        assert!(e.to_string().contains("wrong passphrase"), "{name}: {e}");
        let e = sign::load_private_key(&keys.path(name), || Err("no terminal to ask".into()))
            .expect_err("no passphrase");
        assert!(e.to_string().contains("no terminal to ask"), "{name}: {e}");
    }
    std::fs::write(keys.path("not-a-key"), "hello\n").expect("write");
    let e = sign::load_private_key(&keys.path("not-a-key"), || Ok(String::new()))
        .expect_err("not a key");
    assert!(
        e.to_string().contains("not an OpenSSH private key") && e.to_string().contains("not-a-key"),
        "{e}"
    );
}

/// Fresh P-521 keys from ssh-keygen, enough that several have a short scalar: every one signs.
#[test]
fn every_fresh_p521_key_signs() {
    let keys = Keys::new();
    for i in 0..12 {
        let name = format!("p521-{i}");
        let key = keys.keygen(&name, "ecdsa", "521");
        assert!(
            ssh_keygen_accepts_guild(&keys, &key, &keys.public(&name)),
            "{name}"
        );
    }
}

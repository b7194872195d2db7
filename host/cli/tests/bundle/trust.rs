//! Trust as teams set it up, through the built binary: ECDSA and RSA keys, certificates from a
//! team CA, a trust file with lines Guild cannot honour, verification without a guild.toml, and
//! the byte-level refusals (trailing data, fold collisions at pack, pack determinism).

use std::process::Command;

use super::{Team, text};

fn ssh_keygen(team: &Team, args: &[&str]) {
    let out = Command::new("ssh-keygen")
        .current_dir(team.path(""))
        .args(args)
        .output()
        .expect("ssh-keygen runs");
    assert!(
        out.status.success(),
        "ssh-keygen {args:?}: {}",
        text(&out.stderr)
    );
}

fn public(team: &Team, name: &str) -> String {
    std::fs::read_to_string(team.path(&format!("{name}.pub")))
        .expect("public key")
        .trim()
        .to_owned()
}

#[test]
fn verify_needs_no_guild_toml_and_install_names_the_missing_one() {
    let team = Team::new();
    std::fs::remove_file(team.path("guild.toml")).expect("rm");
    ssh_keygen(
        &team,
        &["-q", "-t", "ecdsa", "-b", "384", "-N", "", "-f", "ops"],
    );
    team.ok(&["bundle", "pack", "src", "-o", "p.guild"]);
    team.ok(&["bundle", "sign", "p.guild", "--key", "ops"]);
    std::fs::write(
        team.path("signers"),
        format!("ops@team namespaces=\"guild-*\" {}\n", public(&team, "ops")),
    )
    .expect("write");
    let out = team.ok(&[
        "bundle",
        "verify",
        "p.guild",
        "--allowed-signers",
        "signers",
    ]);
    assert!(
        out.contains("ok: probe@0.1.0") && out.contains("ops@team"),
        "{out}"
    );
    let out = team.ok(&[
        "bundle",
        "inspect",
        "p.guild",
        "--allowed-signers",
        "signers",
    ]);
    assert!(out.contains("would not install"), "{out}");
    // Denied: installing needs a plugins folder, and the message names the file looked for.
    let e = team.refused(&[
        "bundle",
        "install",
        "p.guild",
        "--allowed-signers",
        "signers",
    ]);
    assert!(
        e.contains("no configuration file was found at") && e.contains("guild.toml"),
        "{e}"
    );
    assert!(!e.contains(":  sets"), "{e}");
    assert!(team.installed().is_empty());
}

#[test]
fn a_team_ca_certificate_signs_and_a_refused_line_only_warns() {
    let team = Team::new();
    ssh_keygen(&team, &["-q", "-t", "ed25519", "-N", "", "-f", "team-ca"]);
    ssh_keygen(
        &team,
        &["-q", "-t", "rsa", "-b", "3072", "-N", "", "-f", "alice"],
    );
    ssh_keygen(
        &team,
        &[
            "-q",
            "-s",
            "team-ca",
            "-I",
            "alice",
            "-n",
            "alice@team",
            "alice.pub",
        ],
    );
    team.ok(&["bundle", "pack", "src", "-o", "p.guild"]);
    let manifest = team
        .guild(&["bundle", "extract-manifest", "p.guild"])
        .stdout;
    std::fs::write(team.path("m.json"), manifest).expect("write");
    ssh_keygen(
        &team,
        &[
            "-Y",
            "sign",
            "-n",
            "guild-bundle",
            "-f",
            "alice-cert.pub",
            "m.json",
        ],
    );
    team.ok(&["bundle", "sign", "p.guild", "--signature", "m.json.sig"]);

    // Line 1 asks for something Guild does not do; line 2 is the team CA.
    std::fs::write(
        team.path("allowed_signers"),
        format!(
            "lead@team verify-required {}\n*@team cert-authority,namespaces=\"guild-bundle\" {}\n",
            public(&team, "lead"),
            public(&team, "team-ca")
        ),
    )
    .expect("write");
    let out = team.guild(&["bundle", "verify", "p.guild"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains("alice@team") && stdout.contains("certificate by CA SHA256:"),
        "{stdout}"
    );
    assert!(
        stderr.contains("allowed_signers:1: line refused")
            && stderr.contains("\"verify-required\""),
        "{stderr}"
    );
    // Denied: the lead's key is on the refused line only, so its signature alone is untrusted.
    team.ok(&["bundle", "pack", "src", "-o", "q.guild"]);
    team.ok(&["bundle", "sign", "q.guild", "--key", "lead"]);
    let e = team.refused(&["bundle", "verify", "q.guild"]);
    assert!(
        e.contains("allowed_signers:1 lists this key but that line was refused"),
        "{e}"
    );
}

#[test]
fn trailing_bytes_are_refused_and_pack_is_deterministic_and_refuses_fold_collisions() {
    let team = Team::new();
    team.ok(&["keys", "add", "lead@team", "lead.pub"]);
    let bundle = team.signed_bundle("p.guild");
    team.ok(&["bundle", "verify", &bundle]);
    let mut bytes = std::fs::read(team.path(&bundle)).expect("read");
    bytes.extend_from_slice(b"appended after the end");
    std::fs::write(team.path("trailing.guild"), &bytes).expect("write");
    let e = team.refused(&["bundle", "verify", "trailing.guild"]);
    assert!(e.contains("bytes after the end marker"), "{e}");

    // No --created and no SOURCE_DATE_EPOCH: the newest file's time, so the same bytes twice.
    team.ok(&["bundle", "pack", "src", "-o", "a.guild"]);
    team.ok(&["bundle", "pack", "src", "-o", "b.guild"]);
    let a = std::fs::read(team.path("a.guild")).expect("read");
    assert_eq!(a, std::fs::read(team.path("b.guild")).expect("read"));

    std::fs::write(team.path("src/readme.md"), "lower\n").expect("write");
    std::fs::write(team.path("src/README.md"), "upper\n").expect("write");
    let e = team.refused(&["bundle", "pack", "src", "-o", "c.guild"]);
    assert!(e.contains("collides with"), "{e}");
    assert!(!team.path("c.guild").exists());
}

//! Signed bundles end to end with the built binary and the real `ssh-keygen`: pack → sign →
//! trust → install → the plugin serves a task, interop with `ssh-keygen -Y` both ways, and the
//! refusals an operator meets (tampered, unsigned, revoked, rollback, equivocation).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

#[path = "bundle/trust.rs"]
mod trust;

fn probe_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../plugins/testing/probe");
    assert!(
        dir.join("probe.wasm").is_file(),
        "plugins/testing/probe/probe.wasm is missing: run plugins/build.sh before the tests"
    );
    dir
}

/// A team folder: guild.toml installing into `plugins/`, the probe's shippable files copied
/// into `src/` (plugin.toml, component, skills), and a lead key made by ssh-keygen.
struct Team {
    dir: tempfile::TempDir,
}

impl Team {
    fn new() -> Team {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join("guild.toml"),
            "[host]\nplugins_dir = \"plugins\"\ndata_dir = \"data\"\ncompile_cache = false\n\n[trust]\nthreshold = 1\n",
        )
        .expect("guild.toml");
        let src = dir.path().join("src");
        std::fs::create_dir_all(src.join("skills")).expect("mkdir");
        for f in ["plugin.toml", "probe.wasm"] {
            std::fs::copy(probe_dir().join(f), src.join(f)).expect("copy");
        }
        copy_dir(&probe_dir().join("skills"), &src.join("skills"));
        let team = Team { dir };
        team.keygen("lead", "");
        team
    }

    fn path(&self, p: &str) -> PathBuf {
        self.dir.path().join(p)
    }

    fn keygen(&self, name: &str, passphrase: &str) {
        let out = Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", passphrase, "-C", name, "-f"])
            .arg(self.path(name))
            .output()
            .expect("ssh-keygen runs (./plugins/build.sh installs it: tests/setup.sh)");
        assert!(out.status.success(), "{}", text(&out.stderr));
    }

    fn guild(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_guild"))
            .current_dir(self.dir.path())
            .arg("--config")
            .arg(self.path("guild.toml"))
            .args(args)
            .env_remove("GUILD_CONFIG")
            .env_remove("GUILD_LOG")
            .env_remove("SOURCE_DATE_EPOCH")
            .env_remove("SSH_AUTH_SOCK")
            .stdin(Stdio::null())
            .output()
            .expect("guild runs")
    }

    /// `guild` with the ssh-agent at `socket`.
    fn guild_with_agent(&self, socket: &Path, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_guild"))
            .current_dir(self.dir.path())
            .arg("--config")
            .arg(self.path("guild.toml"))
            .args(args)
            .env_remove("GUILD_CONFIG")
            .env("SSH_AUTH_SOCK", socket)
            .stdin(Stdio::null())
            .output()
            .expect("guild runs")
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.guild(args);
        assert!(
            out.status.success(),
            "guild {args:?} failed: {}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        text(&out.stdout)
    }

    fn refused(&self, args: &[&str]) -> String {
        let out = self.guild(args);
        assert!(
            !out.status.success(),
            "guild {args:?} succeeded: {}",
            text(&out.stdout)
        );
        text(&out.stderr)
    }

    fn set_version(&self, version: &str) {
        let file = self.path("src/plugin.toml");
        let text = std::fs::read_to_string(&file).expect("read");
        let text = text.replacen(
            "version = \"0.1.0\"",
            &format!("version = \"{version}\""),
            1,
        );
        std::fs::write(file, text).expect("write");
    }

    /// Packs `src/` into `name`, signed by the lead key.
    fn signed_bundle(&self, name: &str) -> String {
        self.ok(&[
            "bundle",
            "pack",
            "src",
            "-o",
            name,
            "--created",
            "1760000000",
        ]);
        self.ok(&["bundle", "sign", name, "--key", "lead"]);
        name.to_owned()
    }

    fn installed(&self) -> Vec<String> {
        match std::fs::read_dir(self.path("plugins")) {
            Ok(rd) => rd
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect(),
            Err(_) => Vec::new(),
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir").flatten() {
        let dest = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).expect("copy");
        }
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn pack_sign_install_then_the_plugin_serves_a_task() {
    let team = Team::new();
    let bundle = team.signed_bundle("probe.guild");
    let again = team.ok(&[
        "bundle",
        "pack",
        "src",
        "-o",
        "again.guild",
        "--created",
        "1760000000",
    ]);
    assert!(again.contains("packed probe@0.1.0"), "{again}");
    let unsigned = std::fs::read(team.path("again.guild")).expect("read");
    team.ok(&[
        "bundle",
        "pack",
        "src",
        "-o",
        "third.guild",
        "--created",
        "1760000000",
    ]);
    assert_eq!(
        unsigned,
        std::fs::read(team.path("third.guild")).expect("read"),
        "deterministic"
    );

    team.ok(&["keys", "add", "lead@team", "lead.pub"]);
    let listed = team.ok(&["keys", "list"]);
    assert!(
        listed.contains("trusted") && listed.contains("lead@team"),
        "{listed}"
    );

    let verified = team.ok(&["bundle", "verify", &bundle]);
    assert!(
        verified.contains("signed by: lead@team (SHA256:"),
        "{verified}"
    );
    let inspected = team.ok(&["bundle", "inspect", &bundle]);
    assert!(
        inspected.contains("DENIED") && inspected.contains("REQUESTED"),
        "{inspected}"
    );
    assert!(
        team.installed().is_empty(),
        "inspect wrote into the plugins folder"
    );

    let installed = team.ok(&["bundle", "install", &bundle]);
    assert!(installed.contains("installed probe@0.1.0"), "{installed}");
    assert!(installed.contains("capabilities:"), "{installed}");
    assert_eq!(team.installed(), ["probe"], "no staging left behind");

    let out = team.guild(&["task", "probe", r#"{"op":"brief"}"#]);
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );

    let shown = team.ok(&["plugins", "show", "probe"]);
    assert!(
        shown.contains("installed from a signed bundle") && shown.contains("signed by: lead@team"),
        "{shown}"
    );
    let json = team.ok(&["--json", "plugins", "show", "probe"]);
    let value: serde_json::Value = serde_json::from_str(&json).expect("json");
    assert_eq!(value["bundle"]["version"], "0.1.0");
    assert_eq!(value["bundle"]["signers"][0]["principals"][0], "lead@team");
}

#[test]
fn ssh_keygen_verifies_what_guild_signed() {
    let team = Team::new();
    let bundle = team.signed_bundle("probe.guild");
    team.ok(&["keys", "add", "lead@team", "lead.pub"]);
    let manifest = team.guild(&["bundle", "extract-manifest", &bundle]).stdout;
    std::fs::write(team.path("manifest.json"), &manifest).expect("write");
    let sig = team.guild(&["bundle", "extract-signature", &bundle]).stdout;
    std::fs::write(team.path("manifest.sig"), sig).expect("write");
    let verify = |namespace: &str| {
        Command::new("ssh-keygen")
            .args(["-Y", "verify", "-f"])
            .arg(team.path("allowed_signers"))
            .args(["-I", "lead@team", "-n", namespace, "-s"])
            .arg(team.path("manifest.sig"))
            .stdin(std::fs::File::open(team.path("manifest.json")).expect("open"))
            .output()
            .expect("ssh-keygen runs")
    };
    let out = verify("guild-bundle");
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(
        !verify("git").status.success(),
        "another namespace must fail"
    );
}

#[test]
fn guild_accepts_what_ssh_keygen_signed_and_encrypted_keys() {
    let team = Team::new();
    team.keygen("second", "correct horse");
    team.ok(&["keys", "add", "lead@team", "lead.pub"]);
    team.ok(&["keys", "add", "second@team", "second.pub"]);
    team.ok(&["bundle", "pack", "src", "-o", "p.guild"]);
    let manifest = team
        .guild(&["bundle", "extract-manifest", "p.guild"])
        .stdout;
    std::fs::write(team.path("m.json"), manifest).expect("write");
    let out = Command::new("ssh-keygen")
        .args(["-Y", "sign", "-f"])
        .arg(team.path("lead"))
        .args(["-n", "guild-bundle"])
        .arg(team.path("m.json"))
        .output()
        .expect("ssh-keygen runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    team.ok(&["bundle", "sign", "p.guild", "--signature", "m.json.sig"]);
    let verified = team.ok(&["bundle", "verify", "p.guild"]);
    assert!(verified.contains("lead@team"), "{verified}");

    std::fs::write(team.path("wrong"), "nope\n").expect("write");
    let e = team.refused(&[
        "bundle",
        "sign",
        "p.guild",
        "--key",
        "second",
        "--passphrase-file",
        "wrong",
    ]);
    assert!(e.contains("wrong passphrase"), "{e}");
    std::fs::write(team.path("pass"), "correct horse\n").expect("write");
    team.ok(&[
        "bundle",
        "sign",
        "p.guild",
        "--key",
        "second",
        "--passphrase-file",
        "pass",
    ]);
    std::fs::write(
        team.path("guild.toml"),
        "[host]\nplugins_dir = \"plugins\"\ndata_dir = \"data\"\n\n[trust]\nthreshold = 2\n",
    )
    .expect("write");
    let verified = team.ok(&["bundle", "verify", "p.guild"]);
    assert!(
        verified.contains("second@team") && verified.contains("lead@team"),
        "{verified}"
    );
}

#[test]
fn tampered_unsigned_and_revoked_bundles_are_refused_and_nothing_is_written() {
    let team = Team::new();
    team.ok(&["keys", "add", "lead@team", "lead.pub"]);
    let bundle = team.signed_bundle("probe.guild");

    // One byte of the component flipped inside the signed archive.
    let mut bytes = std::fs::read(team.path(&bundle)).expect("read");
    let wasm = std::fs::read(team.path("src/probe.wasm")).expect("read");
    let at = bytes
        .windows(wasm.len().min(64))
        .position(|w| w == &wasm[..wasm.len().min(64)])
        .expect("component inside the archive")
        + 40;
    bytes[at] ^= 0x01;
    std::fs::write(team.path("tampered.guild"), bytes).expect("write");
    let e = team.refused(&["bundle", "install", "tampered.guild"]);
    assert!(
        e.contains("\"probe.wasm\"") && e.contains("changed after signing"),
        "{e}"
    );

    team.ok(&["bundle", "pack", "src", "-o", "unsigned.guild"]);
    let e = team.refused(&["bundle", "install", "unsigned.guild"]);
    assert!(e.contains("unsigned"), "{e}");

    team.keygen("stranger", "");
    team.ok(&["bundle", "pack", "src", "-o", "stranger.guild"]);
    team.ok(&["bundle", "sign", "stranger.guild", "--key", "stranger"]);
    let e = team.refused(&["bundle", "verify", "stranger.guild"]);
    assert!(e.contains("untrusted"), "{e}");

    team.ok(&["keys", "revoke", "lead.pub"]);
    let listed = team.ok(&["keys", "list"]);
    assert!(listed.contains("REVOKED"), "{listed}");
    let e = team.refused(&["bundle", "install", &bundle]);
    assert!(e.contains("revoked key"), "{e}");
    assert!(
        team.installed().is_empty(),
        "a refused install wrote {:?}",
        team.installed()
    );
}

#[test]
fn rollback_and_equivocation_need_an_explicit_audited_override() {
    let team = Team::new();
    team.ok(&["keys", "add", "lead@team", "lead.pub"]);
    team.set_version("0.2.0");
    let v2 = team.signed_bundle("v2.guild");
    team.ok(&["bundle", "install", &v2]);

    std::fs::write(team.path("src/skills/extra.md"), "new content\n").expect("write");
    let other = team.signed_bundle("v2-other.guild");
    let e = team.refused(&["bundle", "install", &other]);
    assert!(
        e.contains("equivocation refused") && e.contains("0.2.0"),
        "{e}"
    );
    std::fs::remove_file(team.path("src/skills/extra.md")).expect("rm");

    let file = team.path("src/plugin.toml");
    let t = std::fs::read_to_string(&file)
        .expect("read")
        .replacen("0.2.0", "0.1.0", 1);
    std::fs::write(&file, t).expect("write");
    let v1 = team.signed_bundle("v1.guild");
    let e = team.refused(&["bundle", "install", &v1]);
    assert!(
        e.contains("rollback refused") && e.contains("--allow-rollback"),
        "{e}"
    );
    let done = team.ok(&["bundle", "install", &v1, "--allow-rollback"]);
    assert!(
        done.contains("OVERRIDE (audited): rollback from 0.2.0 to 0.1.0"),
        "{done}"
    );
    let shown = team.ok(&["plugins", "show", "probe"]);
    assert!(shown.contains("probe@0.1.0"), "{shown}");
    // The ledger still knows 0.2.0 was installed: the rollback stays refused without the flag.
    let e = team.refused(&["bundle", "install", &v1]);
    assert!(e.contains("rollback refused"), "{e}");
}

/// A real `ssh-agent` on a socket in the test's folder, stopped when dropped.
struct Agent {
    child: std::process::Child,
    socket: PathBuf,
}

impl Agent {
    fn start(dir: &Path) -> Agent {
        let socket = dir.join("agent.sock");
        let child = Command::new("ssh-agent")
            .arg("-D")
            .arg("-a")
            .arg(&socket)
            .stdout(Stdio::null())
            .spawn()
            .expect("ssh-agent runs (install openssh-client)");
        let agent = Agent { child, socket };
        // The socket appears once the agent listens; give up after a generous bound.
        for _ in 0..500 {
            if agent.socket.exists() {
                return agent;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        panic!("ssh-agent did not create {}", agent.socket.display());
    }

    fn add(&self, key: &Path) {
        let out = Command::new("ssh-add")
            .arg(key)
            .env("SSH_AUTH_SOCK", &self.socket)
            .output()
            .expect("ssh-add runs");
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_public_key_signs_through_the_ssh_agent_holding_its_private_half() {
    let team = Team::new();
    team.keygen("second", "");
    team.ok(&["keys", "add", "lead@team", "lead.pub"]);
    team.ok(&["bundle", "pack", "src", "-o", "p.guild"]);
    let agent = Agent::start(team.dir.path());
    agent.add(&team.path("lead"));
    // The private key file is gone: only the agent can sign now.
    std::fs::remove_file(team.path("lead")).expect("rm");

    let e = team.refused(&["bundle", "sign", "p.guild", "--key", "lead.pub"]);
    assert!(e.contains("SSH_AUTH_SOCK is not set"), "{e}");
    let out = team.guild_with_agent(
        &agent.socket,
        &["bundle", "sign", "p.guild", "--key", "second.pub"],
    );
    assert!(!out.status.success(), "a key the agent lacks signed");
    let e = text(&out.stderr);
    assert!(
        e.contains("refused to sign") && e.contains("ssh-add"),
        "{e}"
    );

    let out = team.guild_with_agent(
        &agent.socket,
        &["bundle", "sign", "p.guild", "--key", "lead.pub"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let verified = team.ok(&["bundle", "verify", "p.guild"]);
    assert!(verified.contains("signed by: lead@team"), "{verified}");

    // What the agent signed checks out with ssh-keygen too.
    let manifest = team
        .guild(&["bundle", "extract-manifest", "p.guild"])
        .stdout;
    let sig = team
        .guild(&["bundle", "extract-signature", "p.guild"])
        .stdout;
    std::fs::write(team.path("m.sig"), sig).expect("write");
    let mut verify = Command::new("ssh-keygen")
        .args(["-Y", "verify", "-f"])
        .arg(team.path("allowed_signers"))
        .args(["-I", "lead@team", "-n", "guild-bundle", "-s"])
        .arg(team.path("m.sig"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ssh-keygen runs");
    std::io::Write::write_all(&mut verify.stdin.take().expect("stdin"), &manifest).expect("write");
    let out = verify.wait_with_output().expect("ssh-keygen ends");
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn a_bundle_created_in_the_future_is_refused() {
    let team = Team::new();
    team.ok(&["keys", "add", "lead@team", "lead.pub"]);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    let tomorrow = (now + 86_400).to_string();
    team.ok(&[
        "bundle",
        "pack",
        "src",
        "-o",
        "f.guild",
        "--created",
        &tomorrow,
    ]);
    team.ok(&["bundle", "sign", "f.guild", "--key", "lead"]);
    let e = team.refused(&["bundle", "install", "f.guild"]);
    assert!(
        e.contains("later than now") && e.contains("clock skew"),
        "{e}"
    );
    assert!(team.installed().is_empty());
    let now = now.to_string();
    team.ok(&["bundle", "pack", "src", "-o", "n.guild", "--created", &now]);
    team.ok(&["bundle", "sign", "n.guild", "--key", "lead"]);
    team.ok(&["bundle", "install", "n.guild"]);
}

#[test]
fn install_compiles_the_verified_bytes_and_a_bad_component_keeps_the_old_version() {
    let team = Team::new();
    std::fs::write(
        team.path("guild.toml"),
        "[host]\nplugins_dir = \"plugins\"\ndata_dir = \"data\"\n\n[trust]\nthreshold = 1\n",
    )
    .expect("guild.toml");
    team.ok(&["keys", "add", "lead@team", "lead.pub"]);
    let v1 = team.signed_bundle("v1.guild");
    team.ok(&["bundle", "install", &v1]);
    // The compile cache holds the entry of exactly the component bytes that were verified.
    let wasm = std::fs::read(team.path("src/probe.wasm")).expect("read");
    let sha = sha256_hex(&wasm);
    let cached: Vec<String> = std::fs::read_dir(team.path("data/cache"))
        .expect("cache folder")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        cached
            .iter()
            .any(|n| n.starts_with(&sha) && n.ends_with(".cwasm")),
        "{sha} not in {cached:?}"
    );
    let before = std::fs::read(team.path("plugins/probe/plugin.toml")).expect("read");

    // A component header followed by garbage: signed and intact, but it does not compile.
    team.set_version("0.2.0");
    let mut junk = vec![0x00, b'a', b's', b'm', 0x0d, 0x00, 0x01, 0x00];
    junk.extend_from_slice(b"not a component body");
    std::fs::write(team.path("src/probe.wasm"), junk).expect("write");
    let v2 = team.signed_bundle("v2.guild");
    let e = team.refused(&["bundle", "install", &v2]);
    assert!(
        e.contains("\"probe.wasm\"") && e.contains("does not compile"),
        "{e}"
    );
    assert_eq!(
        std::fs::read(team.path("plugins/probe/plugin.toml")).expect("read"),
        before,
        "the installed version changed"
    );
    assert_eq!(
        std::fs::read(team.path("plugins/probe/probe.wasm")).expect("read"),
        wasm
    );
    assert_eq!(team.installed(), ["probe"], "no staging left behind");
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

#[test]
fn keys_edits_replace_the_trust_files_atomically() {
    let team = Team::new();
    team.keygen("second", "");
    // The team's list lives in a checkout and is linked in; its mode is the team's choice.
    std::fs::create_dir_all(team.path("checkout")).expect("mkdir");
    let real = team.path("checkout/allowed_signers");
    std::fs::write(&real, "# team keys\n").expect("write");
    std::os::unix::fs::symlink(&real, team.path("allowed_signers")).expect("symlink");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).expect("chmod");

    team.ok(&["keys", "add", "lead@team", "lead.pub"]);
    team.ok(&["keys", "add", "second@team", "second.pub"]);
    team.ok(&["keys", "remove", "lead@team"]);
    let link = std::fs::symlink_metadata(team.path("allowed_signers")).expect("stat");
    assert!(link.file_type().is_symlink(), "the symlink was replaced");
    let text_now = std::fs::read_to_string(&real).expect("read");
    assert!(
        text_now.starts_with("# team keys\n")
            && text_now.contains("second@team")
            && !text_now.contains("lead@team"),
        "{text_now}"
    );
    let mode = std::fs::metadata(&real).expect("stat").permissions().mode();
    assert_eq!(mode & 0o777, 0o640, "permissions kept");

    team.ok(&["keys", "revoke", "lead.pub"]);
    let revoked = team.path("revoked_signers");
    let mode = std::fs::metadata(&revoked)
        .expect("stat")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o644, "a new trust file is readable");
    for dir in [team.path(""), team.path("checkout")] {
        let leftovers: Vec<_> = std::fs::read_dir(&dir)
            .expect("read_dir")
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(".guild-keys-"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    // A list that does not parse is never rewritten.
    std::fs::write(&real, "lead@team not-a-key\n").expect("write");
    let e = team.refused(&["keys", "add", "lead@team", "lead.pub"]);
    assert!(e.contains("allowed_signers"), "{e}");
    assert_eq!(
        std::fs::read_to_string(&real).expect("read"),
        "lead@team not-a-key\n"
    );
}

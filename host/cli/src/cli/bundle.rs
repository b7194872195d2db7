//! `guild bundle pack | sign | extract-manifest | extract-signature | verify | inspect | install`:
//! signed plugin bundles (docs/bundles.md). The checks live in `guild_bundle` and
//! `guild_host::bundle_install`; this module reads arguments and prints.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;
use guild_host::Config;
use guild_host::bundle::{self, Caps, archive};
use guild_host::bundle_install::{self, InstallOptions};

use super::{print_json, render};

/// Bundle subcommands.
#[derive(Subcommand)]
pub(crate) enum BundleCommand {
    /// Pack a plugin folder into one deterministic bundle file (unsigned).
    Pack {
        /// The plugin folder (holding plugin.toml).
        dir: PathBuf,
        /// Output file (default: NAME-VERSION.guild in the current folder).
        #[arg(long, short)]
        output: Option<PathBuf>,
        /// Creation time to record, Unix seconds (default: $SOURCE_DATE_EPOCH, else the
        /// modification time of the newest file, so the same folder gives the same bytes).
        #[arg(long)]
        created: Option<u64>,
        /// Refuse the bundle this many days after its creation time.
        #[arg(long)]
        expires_in_days: Option<u64>,
    },
    /// Add a signature: made here with an OpenSSH private key, or one made elsewhere
    /// (`ssh-keygen -Y sign -n guild-bundle`) over `extract-manifest`'s output.
    Sign {
        /// The bundle file (rewritten in place).
        file: PathBuf,
        /// OpenSSH private key file (ed25519; an encrypted key asks for its passphrase), or a
        /// public key whose private half is in the ssh-agent SSH_AUTH_SOCK names.
        #[arg(long, required_unless_present = "signature")]
        key: Option<PathBuf>,
        /// Read the passphrase of an encrypted key from this file instead of the terminal.
        #[arg(long)]
        passphrase_file: Option<PathBuf>,
        /// Attach this armored SSH signature instead of signing (it must check out).
        #[arg(long, conflicts_with = "key")]
        signature: Option<PathBuf>,
    },
    /// Print the exact signed bytes (the digest manifest).
    ExtractManifest {
        /// The bundle file.
        file: PathBuf,
    },
    /// Print one armored signature of a bundle.
    ExtractSignature {
        /// The bundle file.
        file: PathBuf,
        /// Which signature (0 is the first).
        #[arg(long, default_value_t = 0)]
        index: usize,
    },
    /// Check a bundle against the trust file; writes nothing.
    Verify {
        /// The bundle file.
        file: PathBuf,
        /// Trust file instead of the one guild.toml's [trust] names.
        #[arg(long)]
        allowed_signers: Option<PathBuf>,
    },
    /// Verify and show what the operator's grants would give the plugin; writes nothing.
    Inspect {
        /// The bundle file.
        file: PathBuf,
        /// Trust file instead of the one guild.toml's [trust] names.
        #[arg(long)]
        allowed_signers: Option<PathBuf>,
    },
    /// Verify, then install into [host] plugins_dir (next start or reload picks it up).
    Install {
        /// The bundle file.
        file: PathBuf,
        /// Trust file instead of the one guild.toml's [trust] names.
        #[arg(long)]
        allowed_signers: Option<PathBuf>,
        /// Install a lower version than the highest installed one (audited).
        #[arg(long)]
        allow_rollback: bool,
        /// Install the same version with other content (audited).
        #[arg(long)]
        allow_equivocation: bool,
    },
}

pub(crate) async fn run(config: &Path, cmd: BundleCommand, json: bool) -> anyhow::Result<ExitCode> {
    match cmd {
        BundleCommand::Pack {
            dir,
            output,
            created,
            expires_in_days,
        } => pack(&dir, output, created, expires_in_days, json),
        BundleCommand::Sign {
            file,
            key,
            passphrase_file,
            signature,
        } => sign(&file, key, passphrase_file, signature),
        BundleCommand::ExtractManifest { file } => {
            let b = archive::read_file(&file, Caps::default())?;
            use std::io::Write as _;
            std::io::stdout().lock().write_all(&b.manifest_bytes)?;
            Ok(ExitCode::SUCCESS)
        }
        BundleCommand::ExtractSignature { file, index } => {
            let b = archive::read_file(&file, Caps::default())?;
            let Some(sig) = b.signatures.get(index) else {
                anyhow::bail!(
                    "{} has {} signature(s); no index {index}",
                    file.display(),
                    b.signatures.len()
                );
            };
            use std::io::Write as _;
            std::io::stdout().lock().write_all(sig)?;
            Ok(ExitCode::SUCCESS)
        }
        BundleCommand::Verify {
            file,
            allowed_signers,
        } => show(config, &file, allowed_signers, false, json),
        BundleCommand::Inspect {
            file,
            allowed_signers,
        } => show(config, &file, allowed_signers, true, json),
        BundleCommand::Install {
            file,
            allowed_signers,
            allow_rollback,
            allow_equivocation,
        } => {
            let mut config = load_config(config)?;
            // The component compiles in a child process under the compile limits, as a host
            // start would (a unit test's executable has no compile command).
            if cfg!(not(test)) {
                config.host.compile_helper = std::env::current_exe().ok();
            }
            let options = InstallOptions {
                allowed_signers,
                allow_rollback,
                allow_equivocation,
            };
            let done = bundle_install::install(&config, &file, &options)
                .with_context(|| format!("refused to install {}", file.display()))?;
            warn_refused_lines(&done.warnings);
            if json {
                print_json(&serde_json::json!({
                    "installed": done.record,
                    "dir": done.dir,
                    "override": done.override_note,
                    "capabilities": done.capabilities,
                }))?;
            } else {
                outln!(
                    "installed {}@{} into {}",
                    done.record.name,
                    done.record.version,
                    done.dir.display()
                )?;
                outln!(
                    "{}",
                    render::bundle_signers(&done.record.signers, &done.record.digest)
                )?;
                if let Some(note) = &done.override_note {
                    outln!("OVERRIDE (audited): {note}")?;
                }
                out!("{}", render::capability_rows(&done.capabilities))?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The operator's config, or the defaults when there is no file (trust files then resolve
/// against the current folder; messages still name the file that was looked for).
fn load_config(path: &Path) -> anyhow::Result<Config> {
    if path.is_file() {
        Config::load(path).with_context(|| format!("failed to load {}", path.display()))
    } else {
        Ok(Config {
            file: path.to_owned(),
            ..Config::default()
        })
    }
}

/// One line on stderr per trust-file line refused on its own (the others still count).
fn warn_refused_lines(warnings: &[String]) {
    for w in warnings {
        eprintln!("warning: {}", guild_host::text::for_terminal(w));
    }
}

fn pack(
    dir: &Path,
    output: Option<PathBuf>,
    created: Option<u64>,
    expires_in_days: Option<u64>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let now = bundle::time::now_unix();
    let created = match created {
        Some(t) => t,
        None => match std::env::var("SOURCE_DATE_EPOCH") {
            Ok(v) => v
                .trim()
                .parse()
                .context("SOURCE_DATE_EPOCH is not a number of seconds")?,
            // The newest file's time, not the clock: the same folder packs to the same bytes.
            Err(_) => archive::newest_mtime(dir, now)
                .with_context(|| format!("failed to pack {}", dir.display()))?,
        },
    };
    let expires = expires_in_days.map(|d| created.saturating_add(d.saturating_mul(86_400)));
    if let Some(at) = expires
        && at <= now
    {
        anyhow::bail!(
            "the bundle would expire at {}, already past: its creation time {} comes from \
             --created, SOURCE_DATE_EPOCH or the newest file; pass a later --created or more \
             --expires-in-days",
            bundle::time::rfc3339(at),
            bundle::time::rfc3339(created)
        );
    }
    let b = archive::pack(
        dir,
        archive::PackOptions { created, expires },
        Caps::default(),
    )
    .with_context(|| format!("failed to pack {}", dir.display()))?;
    let manifest = bundle::DigestManifest::parse(&b.manifest_bytes)?;
    let output = output
        .unwrap_or_else(|| PathBuf::from(format!("{}-{}.guild", manifest.name, manifest.version)));
    write_atomically(&output, &archive::write(&b)?)?;
    if json {
        print_json(&serde_json::json!({
            "file": output, "name": manifest.name, "version": manifest.version,
            "digest": manifest.digest(), "files": manifest.files.len(),
        }))?;
    } else {
        outln!(
            "packed {}@{} ({} files) into {}\n  digest {}\n  unsigned: sign it with `guild bundle sign {} --key KEY`",
            manifest.name,
            manifest.version,
            manifest.files.len(),
            output.display(),
            manifest.digest(),
            output.display()
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn sign(
    file: &Path,
    key: Option<PathBuf>,
    passphrase_file: Option<PathBuf>,
    signature: Option<PathBuf>,
) -> anyhow::Result<ExitCode> {
    let mut b = archive::read_file(file, Caps::default())?;
    bundle::DigestManifest::parse(&b.manifest_bytes)?;
    let sig = match (key, signature) {
        (_, Some(sig_file)) => std::fs::read(&sig_file)
            .with_context(|| format!("failed to read {}", sig_file.display()))?,
        (Some(key_file), None) => match public_key(&key_file) {
            Some(key) => sign_with_agent(&key_file, &key, &b.manifest_bytes)?,
            None => {
                let key = bundle::sign::load_private_key(&key_file, || match &passphrase_file {
                    Some(p) => std::fs::read_to_string(p)
                        .map(|s| s.trim_end_matches(['\n', '\r']).to_owned())
                        .map_err(|e| format!("cannot read passphrase file {}: {e}", p.display())),
                    None => rpassword::prompt_password(format!(
                        "passphrase for {}: ",
                        key_file.display()
                    ))
                    .map_err(|e| format!("cannot read the passphrase: {e}")),
                })?;
                bundle::sign::sign(&key, &b.manifest_bytes)?
            }
        },
        (None, None) => anyhow::bail!("pass --key KEY or --signature SIG"),
    };
    let label = format!("signature {}", b.signatures.len());
    let checked = bundle::sign::check(&label, &sig, &b.manifest_bytes)?;
    b.signatures.push(sig);
    write_atomically(file, &archive::write(&b)?)?;
    outln!(
        "signed {} with key {} ({} signature(s))",
        file.display(),
        bundle::sign::fingerprint(&checked.key),
        b.signatures.len()
    )?;
    Ok(ExitCode::SUCCESS)
}

/// Signs through the ssh-agent that `SSH_AUTH_SOCK` names, with the private half of `key`.
fn sign_with_agent(
    key_file: &Path,
    key: &ssh_key::PublicKey,
    manifest: &[u8],
) -> anyhow::Result<Vec<u8>> {
    let socket = std::env::var_os("SSH_AUTH_SOCK").with_context(|| {
        format!(
            "{} is a public key: signing with it needs its private half in an ssh-agent, and \
             SSH_AUTH_SOCK is not set (start one with `eval $(ssh-agent)`, then `ssh-add`)",
            key_file.display()
        )
    })?;
    Ok(bundle::agent::sign_with_agent(
        Path::new(&socket),
        key,
        &key_file.display().to_string(),
        manifest,
    )?)
}

/// The OpenSSH public key in `file`, if that is what it holds (its private half is then asked
/// of the ssh-agent).
fn public_key(file: &Path) -> Option<ssh_key::PublicKey> {
    let text = std::fs::read_to_string(file).ok()?;
    ssh_key::PublicKey::from_openssh(text.trim()).ok()
}

/// Writes beside the destination, then renames over it.
fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("failed to create a file in {}", dir.display()))?;
    std::fs::write(tmp.path(), bytes)
        .with_context(|| format!("failed to write {}", tmp.path().display()))?;
    tmp.persist(path)
        .with_context(|| format!("failed to write {}", path.display()))?;
    Ok(())
}

fn show(
    config: &Path,
    file: &Path,
    allowed_signers: Option<PathBuf>,
    capabilities: bool,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let config = load_config(config)?;
    let options = InstallOptions {
        allowed_signers,
        ..InstallOptions::default()
    };
    let seen = bundle_install::inspect(&config, file, &options)
        .with_context(|| format!("{} did not verify", file.display()))?;
    warn_refused_lines(&seen.warnings);
    let v = &seen.verified;
    if json {
        print_json(&serde_json::json!({
            "ok": true,
            "name": v.manifest.name, "version": v.manifest.version, "kind": v.manifest.kind,
            "wit": v.manifest.wit, "created": v.manifest.created, "expires": v.manifest.expires,
            "digest": v.digest, "content_digest": v.content_digest, "signers": v.signers,
            "warnings": seen.warnings,
            "capabilities": if capabilities { serde_json::to_value(&seen.capabilities)? } else { serde_json::Value::Null },
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "ok: {}@{} ({}, WIT {}), {} files, created {}{}",
        v.manifest.name,
        v.manifest.version,
        v.manifest.kind,
        v.manifest.wit,
        v.manifest.files.len(),
        bundle::time::rfc3339(v.manifest.created),
        v.manifest
            .expires
            .map(|e| format!(", expires {}", bundle::time::rfc3339(e)))
            .unwrap_or_default()
    )?;
    outln!("{}", render::bundle_signers(&v.signers, &v.digest))?;
    if capabilities {
        match &seen.target {
            Some(target) => outln!("would install into {}", target.display())?,
            None => outln!("would not install: the configuration names no [host] plugins_dir")?,
        }
        out!("{}", render::capability_rows(&seen.capabilities))?;
    }
    Ok(ExitCode::SUCCESS)
}

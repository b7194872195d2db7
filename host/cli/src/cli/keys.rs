//! `guild keys add | list | remove | revoke`: edit the team's `allowed_signers` file and the
//! revocation list that `[trust]` in `guild.toml` names. Every edit replaces the file
//! atomically (temporary file in the same folder, fsync, rename), so a host verifying a bundle
//! meanwhile reads the old list or the new one.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;
use guild_host::Config;
use guild_host::bundle::sign::fingerprint;
use guild_host::bundle::time::rfc3339;
use guild_host::bundle::trust::{AllowedSigners, Revoked, format_entry};
use ssh_key::PublicKey;

use super::print_json;

/// Key subcommands.
#[derive(Subcommand)]
pub(crate) enum KeysCommand {
    /// Trust a public key for bundles, as PRINCIPAL.
    Add {
        /// Who the key belongs to (e.g. an e-mail address).
        principal: String,
        /// The public key: a `.pub` file or the `ssh-ed25519 AAAA…` text.
        key: String,
        /// Not valid before this time (YYYYMMDD[HHMM[SS]][Z], UTC).
        #[arg(long)]
        valid_after: Option<String>,
        /// Not valid from this time on (YYYYMMDD[HHMM[SS]][Z], UTC).
        #[arg(long)]
        valid_before: Option<String>,
    },
    /// Every trusted key, with its principals, window and whether it is revoked.
    List,
    /// Stop trusting every line whose principal or key fingerprint is given.
    Remove {
        /// A principal or a `SHA256:…` fingerprint.
        who: String,
    },
    /// Revoke a key: refused from now on whatever else signed, even if still listed.
    Revoke {
        /// A `.pub` file, the `ssh-ed25519 AAAA…` text or a `SHA256:…` fingerprint.
        key: String,
    },
}

fn files(config: &Path) -> anyhow::Result<(PathBuf, PathBuf)> {
    let config = if config.is_file() {
        Config::load(config).with_context(|| format!("failed to load {}", config.display()))?
    } else {
        Config::default()
    };
    Ok((
        config.resolve(&config.trust.allowed_signers),
        config.resolve(&config.trust.revoked),
    ))
}

fn read_key(text: &str) -> anyhow::Result<PublicKey> {
    let text = if Path::new(text).is_file() {
        std::fs::read_to_string(text).with_context(|| format!("failed to read {text}"))?
    } else {
        text.to_owned()
    };
    PublicKey::from_openssh(text.trim())
        .context("not an OpenSSH public key (expected a .pub file or `ssh-ed25519 AAAA…`)")
}

/// Adds `line` at the end of `path` (created if missing), atomically ([`replace`]).
fn append(path: &Path, line: &str) -> anyhow::Result<()> {
    let mut text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("failed to read {}", path.display())),
    };
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(line);
    text.push('\n');
    replace(path, &text)
}

/// Replaces the file at `path` with `text` so that a reader (a host verifying a bundle) or a
/// crash sees the old or the new file, never a half-written one: the text goes to a temporary
/// file in the same folder, is synced, takes the old file's permissions and is renamed over it,
/// then the folder is synced. A symlinked trust file (one kept in a team's git checkout, say)
/// stays a symlink: its target is what gets replaced.
fn replace(path: &Path, text: &str) -> anyhow::Result<()> {
    let target = match std::fs::canonicalize(path) {
        Ok(real) => real,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => path.to_owned(),
        Err(e) => return Err(e).with_context(|| format!("failed to resolve {}", path.display())),
    };
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".guild-keys-")
        .tempfile_in(dir)
        .with_context(|| format!("failed to create a temporary file in {}", dir.display()))?;
    let written = tmp
        .write_all(text.as_bytes())
        .and_then(|()| match std::fs::metadata(&target) {
            Ok(old) => tmp.as_file().set_permissions(old.permissions()),
            Err(_) => set_readable(tmp.as_file()),
        })
        .and_then(|()| tmp.as_file().sync_all());
    written.with_context(|| format!("failed to write {}", tmp.path().display()))?;
    tmp.persist(&target)
        .with_context(|| format!("failed to replace {}", target.display()))?;
    if let Ok(d) = std::fs::File::open(dir) {
        // Best effort: makes the rename itself durable where the filesystem supports it.
        let _ = d.sync_all();
    }
    Ok(())
}

/// A new trust file is readable by everyone, like the `allowed_signers` of a git checkout
/// (it holds public keys only).
fn set_readable(file: &std::fs::File) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o644))
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        Ok(())
    }
}

pub(crate) async fn run(config: &Path, cmd: KeysCommand, json: bool) -> anyhow::Result<ExitCode> {
    let (signers_file, revoked_file) = files(config)?;
    match cmd {
        KeysCommand::Add {
            principal,
            key,
            valid_after,
            valid_before,
        } => add(
            &signers_file,
            &principal,
            &key,
            valid_after.as_deref(),
            valid_before.as_deref(),
        )?,
        KeysCommand::List => list(&signers_file, &revoked_file, json)?,
        KeysCommand::Remove { who } => remove(&signers_file, &who)?,
        KeysCommand::Revoke { key } => revoke(&revoked_file, key)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `keys add`: appends the key's `allowed_signers` line (the file, when it exists, must parse
/// first).
fn add(
    signers_file: &Path,
    principal: &str,
    key: &str,
    valid_after: Option<&str>,
    valid_before: Option<&str>,
) -> anyhow::Result<()> {
    let key = read_key(key)?;
    let line =
        format_entry(principal, &key, valid_after, valid_before).map_err(anyhow::Error::msg)?;
    if signers_file.exists() {
        AllowedSigners::load(signers_file)?;
    }
    append(signers_file, &line)?;
    outln!(
        "trusted {} as {principal} in {}",
        fingerprint(&key),
        signers_file.display()
    )?;
    Ok(())
}

/// `keys list`: every key with its principals and status (revoked, outside its window,
/// trusted).
fn list(signers_file: &Path, revoked_file: &Path, json: bool) -> anyhow::Result<()> {
    let signers = AllowedSigners::load(signers_file)?;
    for w in signers.warnings() {
        eprintln!("warning: {}", guild_host::text::for_terminal(&w));
    }
    let revoked = Revoked::load(revoked_file)?;
    let now = guild_host::bundle::time::now_unix();
    let rows: Vec<_> = signers
        .entries
        .iter()
        .map(|e| {
            let fp = fingerprint(&e.key);
            let status = if revoked.fingerprints.contains(&fp) {
                "REVOKED".to_owned()
            } else if !e.allows_bundles() {
                "other namespaces only".to_owned()
            } else {
                e.outside_window(now)
                    .unwrap_or_else(|| match e.cert_authority {
                        true => "trusted CA".into(),
                        false => "trusted".into(),
                    })
            };
            serde_json::json!({
                "principals": e.principals, "fingerprint": fp, "status": status,
                "cert_authority": e.cert_authority,
                "valid_after": e.valid_after.map(rfc3339),
                "valid_before": e.valid_before.map(rfc3339),
            })
        })
        .collect();
    if json {
        print_json(&rows)?;
    } else {
        for r in &rows {
            outln!(
                "{}  {}  {}",
                r["fingerprint"].as_str().unwrap_or_default(),
                r["status"].as_str().unwrap_or_default(),
                guild_host::text::for_terminal(
                    &r["principals"]
                        .as_array()
                        .map(|p| p
                            .iter()
                            .filter_map(|x| x.as_str())
                            .collect::<Vec<_>>()
                            .join(","))
                        .unwrap_or_default()
                )
            )?;
        }
    }
    Ok(())
}

/// `keys remove`: drops every line naming the fingerprint or principal `who`.
fn remove(signers_file: &Path, who: &str) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(signers_file)
        .with_context(|| format!("failed to read {}", signers_file.display()))?;
    let parsed = AllowedSigners::parse(&text, signers_file)?;
    let drop: std::collections::BTreeSet<usize> = parsed
        .entries
        .iter()
        .filter(|e| fingerprint(&e.key) == who || e.principals.iter().any(|p| p == who))
        .map(|e| e.line)
        .collect();
    if drop.is_empty() {
        anyhow::bail!("no line of {} names {who}", signers_file.display());
    }
    let kept: String = text
        .lines()
        .enumerate()
        .filter(|(i, _)| !drop.contains(&(i + 1)))
        .map(|(_, l)| format!("{l}\n"))
        .collect();
    replace(signers_file, &kept)?;
    outln!(
        "removed {} line(s) from {}",
        drop.len(),
        signers_file.display()
    )?;
    Ok(())
}

/// `keys revoke`: appends the fingerprint (given, or of the key file) to the revocation list.
fn revoke(revoked_file: &Path, key: String) -> anyhow::Result<()> {
    let fp = if key.starts_with("SHA256:") {
        key
    } else {
        fingerprint(&read_key(&key)?)
    };
    Revoked::load(revoked_file)?;
    append(revoked_file, &fp)?;
    outln!("revoked {fp} in {}", revoked_file.display())?;
    Ok(())
}

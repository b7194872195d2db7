//! The demo's signed-bundle step: the lead generates a key (with the library: no ssh-keygen),
//! packs and signs the kb plugin, a teammate's host that trusts that key installs the bundle
//! and runs kb; a copy whose `plugin.toml` was changed after signing is refused.

use std::path::Path;

use anyhow::Context;
use guild_host::bundle::{Caps, archive, sign, trust};
use guild_host::bundle_install::{self, InstallOptions};
use guild_host::types::TaskStatus;
use guild_host::{Config, bundle};
use ssh_key::PrivateKey;
use ssh_key::private::Ed25519Keypair;

use super::{render, start_host_with};

/// Runs the step; `say` prints one block of the walk-through. Returns whether kb succeeded on
/// the teammate's host and the tampered copy was refused.
pub(super) async fn run(plugins: &Path, data: &Path, say: impl Fn(&str)) -> anyhow::Result<bool> {
    let root = data.join("bundle");
    if root.exists() {
        std::fs::remove_dir_all(&root)
            .with_context(|| format!("failed to reset {}", root.display()))?;
    }
    let teammate = root.join("teammate");
    std::fs::create_dir_all(teammate.join("plugins"))
        .and_then(|()| std::fs::create_dir_all(teammate.join("kb-workspace")))
        .with_context(|| format!("failed to create {}", teammate.display()))?;

    // The lead: a fresh ed25519 key, then pack and sign kb.
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(|e| anyhow::anyhow!("no randomness for a key: {e}"))?;
    let lead = PrivateKey::from(Ed25519Keypair::from_seed(&seed));
    let mut packed = archive::pack(
        &plugins.join("kb"),
        archive::PackOptions {
            created: bundle::time::now_unix(),
            expires: None,
        },
        Caps::default(),
    )?;
    packed
        .signatures
        .push(sign::sign(&lead, &packed.manifest_bytes)?);
    let manifest = bundle::DigestManifest::parse(&packed.manifest_bytes)?;
    let file = root.join(format!("{}-{}.guild", manifest.name, manifest.version));
    std::fs::write(&file, archive::write(&packed)?)
        .with_context(|| format!("failed to write {}", file.display()))?;
    say(&format!(
        "lead: packed {}@{} ({} files) and signed it with key {}\n  -> {}",
        manifest.name,
        manifest.version,
        manifest.files.len(),
        sign::fingerprint(lead.public_key()),
        file.display()
    ));

    // The teammate: trusts the lead's key, grants kb its own folder, installs.
    let signers = trust::format_entry("lead@team", lead.public_key(), None, None)
        .map_err(anyhow::Error::msg)?;
    std::fs::write(teammate.join("allowed_signers"), format!("{signers}\n"))?;
    let config_file = teammate.join("guild.toml");
    std::fs::write(
        &config_file,
        "# Written by `guild demo`: a teammate's host that trusts the lead's key.\n\
         [host]\nplugins_dir = \"plugins\"\ndata_dir = \"state\"\n\n\
         [trust]\nallowed_signers = \"allowed_signers\"\n\n\
         [grants.kb]\nfs = [{ guest = \"/workspace\", host = \"kb-workspace\", mode = \"rw\" }]\n",
    )
    .with_context(|| format!("failed to write {}", config_file.display()))?;
    let mut config = Config::load(&config_file)?;
    if cfg!(not(test)) {
        config.host.compile_helper = std::env::current_exe().ok();
    }
    let done = bundle_install::install(&config, &file, &InstallOptions::default())
        .with_context(|| format!("the teammate's host refused {}", file.display()))?;
    say(&format!(
        "teammate: installed {}@{} into {}\n{}",
        done.record.name,
        done.record.version,
        done.dir.display(),
        render::bundle_signers(&done.record.signers, &done.record.digest).trim_end()
    ));

    let host = start_host_with(config.clone()).await?;
    let result = host
        .task(
            "kb",
            "save notes/hello.md\n# Hello\nInstalled from a signed bundle.\n",
        )
        .await?;
    say(&format!(
        "kb on the teammate's host:\n{}",
        render::task_result(&result).trim_end()
    ));

    // A tampered copy: plugin.toml asks for more after signing; the signature still "fits"
    // the manifest, but the file no longer matches it.
    let mut tampered = packed;
    if let Some(toml) = tampered.files.get_mut(guild_host::manifest::MANIFEST_FILE) {
        toml.extend_from_slice(b"\n# widened after signing\n");
    }
    let tampered_file = root.join("kb-tampered.guild");
    std::fs::write(&tampered_file, archive::write(&tampered)?)?;
    let refused = match bundle_install::install(&config, &tampered_file, &InstallOptions::default())
    {
        Ok(_) => {
            say("tampered copy: INSTALLED (this is a bug)");
            false
        }
        Err(e) => {
            say(&format!("tampered copy: refused: {e}"));
            true
        }
    };
    Ok(result.status == TaskStatus::Succeeded && refused)
}

//! The team's trust: an `allowed_signers` file in the format git and `ssh-keygen -Y verify`
//! read (principals, optional `namespaces=`, `valid-after=`, `valid-before=`, then the key), a
//! revocation list that always wins, and the policy (`require_signed`, `threshold` distinct
//! keys) that decides whether a bundle's checked signatures are enough.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use ssh_key::PublicKey;

use super::sign::{Checked, fingerprint};
use super::time::{parse_signers_time, rfc3339};
use super::{BundleError, SIG_NAMESPACE};

/// One line of an `allowed_signers` file.
#[derive(Debug, Clone)]
pub struct SignerEntry {
    /// Principals (e-mail addresses or names) this key signs as.
    pub principals: Vec<String>,
    /// The key.
    pub key: PublicKey,
    /// `namespaces=`: `None` allows every namespace.
    pub namespaces: Option<Vec<String>>,
    /// `valid-after=`, Unix seconds.
    pub valid_after: Option<u64>,
    /// `valid-before=`, Unix seconds.
    pub valid_before: Option<u64>,
    /// 1-based line in the file.
    pub line: usize,
}

impl SignerEntry {
    /// Whether the entry allows the bundle namespace.
    pub fn allows_bundles(&self) -> bool {
        self.namespaces
            .as_ref()
            .is_none_or(|ns| ns.iter().any(|n| n == SIG_NAMESPACE))
    }

    /// Why the entry is not valid at `now`, or `None` when it is.
    pub fn outside_window(&self, now: u64) -> Option<String> {
        if let Some(after) = self.valid_after
            && now < after
        {
            return Some(format!("not valid until {}", rfc3339(after)));
        }
        if let Some(before) = self.valid_before
            && now >= before
        {
            return Some(format!("expired at {}", rfc3339(before)));
        }
        None
    }
}

/// A parsed `allowed_signers` file.
#[derive(Debug, Clone, Default)]
pub struct AllowedSigners {
    /// Where it was read from (for messages).
    pub file: PathBuf,
    /// Its entries, in file order.
    pub entries: Vec<SignerEntry>,
}

impl AllowedSigners {
    /// Reads a file; a missing file is an error that says how to create one.
    pub fn load(file: &Path) -> Result<Self, BundleError> {
        let text = std::fs::read_to_string(file).map_err(|e| {
            BundleError::io(
                file,
                format!("{e} (create it with `guild keys add PRINCIPAL KEY.pub`)"),
            )
        })?;
        Self::parse(&text, file)
    }

    /// Parses the text of an `allowed_signers` file.
    pub fn parse(text: &str, file: &Path) -> Result<Self, BundleError> {
        let mut entries = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let err = |message: String| BundleError::TrustFile {
                file: file.display().to_string(),
                line: i + 1,
                message,
            };
            entries.push(parse_line(line, i + 1).map_err(err)?);
        }
        Ok(Self {
            file: file.to_owned(),
            entries,
        })
    }
}

fn parse_line(line: &str, number: usize) -> Result<SignerEntry, String> {
    let tokens = tokenize(line);
    let principals: Vec<String> = tokens
        .first()
        .map(String::as_str)
        .unwrap_or_default()
        .trim_matches('"')
        .split(',')
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect();
    if principals.is_empty() {
        return Err("no principal".into());
    }
    let mut options = Options::default();
    let mut key_at = 1;
    match tokens.get(1) {
        Some(t) if !is_key_type(t) => {
            for option in split_options(t) {
                options.apply(&option)?;
            }
            key_at = 2;
        }
        Some(_) => {}
        None => return Err("no key after the principals".into()),
    }
    let key_text = tokens.get(key_at..).unwrap_or_default().join(" ");
    let key = PublicKey::from_openssh(&key_text).map_err(|e| {
        format!("not a public key ({e}): expected `PRINCIPALS [OPTIONS] KEYTYPE BASE64`")
    })?;
    Ok(SignerEntry {
        principals,
        key,
        namespaces: options.namespaces,
        valid_after: options.valid_after,
        valid_before: options.valid_before,
        line: number,
    })
}

#[derive(Default)]
struct Options {
    namespaces: Option<Vec<String>>,
    valid_after: Option<u64>,
    valid_before: Option<u64>,
}

impl Options {
    fn apply(&mut self, option: &str) -> Result<(), String> {
        let (name, value) = option.split_once('=').unwrap_or((option, ""));
        let value = value.trim_matches('"');
        match name.to_ascii_lowercase().as_str() {
            "namespaces" => self.namespaces = Some(value.split(',').map(str::to_owned).collect()),
            "valid-after" => self.valid_after = Some(parse_signers_time(value)?),
            "valid-before" => self.valid_before = Some(parse_signers_time(value)?),
            "cert-authority" => {
                return Err(
                    "cert-authority entries are not supported: list each signing key".into(),
                );
            }
            _ => return Err(format!("unknown option {name:?}")),
        }
        Ok(())
    }
}

fn is_key_type(token: &str) -> bool {
    token.starts_with("ssh-") || token.starts_with("ecdsa-sha2-") || token.starts_with("sk-")
}

/// Splits on whitespace outside double quotes (quotes are kept).
fn tokenize(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in line.chars() {
        if c == '"' {
            quoted = !quoted;
        }
        if c.is_whitespace() && !quoted {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
        } else {
            current.push(c);
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Splits an options token on commas outside double quotes.
fn split_options(token: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in token.chars() {
        if c == '"' {
            quoted = !quoted;
        }
        if c == ',' && !quoted {
            out.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
    }
    out.push(current);
    out
}

/// The line `guild keys add` writes: the principal, the bundle namespace, an optional window.
pub fn format_entry(
    principal: &str,
    key: &PublicKey,
    valid_after: Option<&str>,
    valid_before: Option<&str>,
) -> Result<String, String> {
    if principal.is_empty() || principal.chars().any(|c| c.is_whitespace() || c == '"') {
        return Err(format!(
            "principal {principal:?} must be one word without quotes"
        ));
    }
    let mut options = vec![format!("namespaces=\"{SIG_NAMESPACE}\"")];
    if let Some(t) = valid_after {
        parse_signers_time(t)?;
        options.push(format!("valid-after=\"{t}\""));
    }
    if let Some(t) = valid_before {
        parse_signers_time(t)?;
        options.push(format!("valid-before=\"{t}\""));
    }
    let key = key.to_openssh().map_err(|e| e.to_string())?;
    Ok(format!("{principal} {} {key}", options.join(",")))
}

/// The revocation list: one public key (`ssh-ed25519 AAAA…`) or fingerprint (`SHA256:…`) per
/// line. A signature by a listed key refuses the bundle, whatever else signed it.
#[derive(Debug, Clone, Default)]
pub struct Revoked {
    /// Where it was read from.
    pub file: PathBuf,
    /// Revoked fingerprints, `SHA256:…`.
    pub fingerprints: BTreeSet<String>,
}

impl Revoked {
    /// Reads the list; a missing file is an empty list.
    pub fn load(file: &Path) -> Result<Self, BundleError> {
        match std::fs::read_to_string(file) {
            Ok(text) => Self::parse(&text, file),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self {
                file: file.to_owned(),
                fingerprints: BTreeSet::new(),
            }),
            Err(e) => Err(BundleError::io(file, e)),
        }
    }

    /// Parses the text of a revocation list.
    pub fn parse(text: &str, file: &Path) -> Result<Self, BundleError> {
        let mut fingerprints = BTreeSet::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if line.starts_with("SHA256:") {
                fingerprints.insert(line.to_owned());
                continue;
            }
            let key = PublicKey::from_openssh(line).map_err(|e| BundleError::TrustFile {
                file: file.display().to_string(),
                line: i + 1,
                message: format!("not a public key or SHA256 fingerprint: {e}"),
            })?;
            fingerprints.insert(fingerprint(&key));
        }
        Ok(Self {
            file: file.to_owned(),
            fingerprints,
        })
    }
}

/// Who vouched for a bundle: one per distinct trusted key.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TrustedSigner {
    /// The principals the trust file lists for the key.
    pub principals: Vec<String>,
    /// `SHA256:…`.
    pub fingerprint: String,
}

/// The operator's trust policy (`[trust]` in `guild.toml` plus the files it names).
#[derive(Debug, Clone)]
pub struct TrustPolicy {
    /// The allowed signers.
    pub signers: AllowedSigners,
    /// Revoked keys.
    pub revoked: Revoked,
    /// Refuse unsigned bundles (default true).
    pub require_signed: bool,
    /// Distinct trusted keys needed (at least 1).
    pub threshold: usize,
}

impl TrustPolicy {
    /// Decides on a bundle's checked signatures (`labels[i]` names `checked[i]`) at `now`.
    pub fn evaluate(
        &self,
        checked: &[(String, Checked)],
        now: u64,
    ) -> Result<Vec<TrustedSigner>, BundleError> {
        if checked.is_empty() {
            return if self.require_signed {
                Err(BundleError::Signature(
                    "unsigned: the bundle carries no signature (sign it with `guild bundle sign`; \
                     unsigned bundles need `require_signed = false` in [trust])"
                        .into(),
                ))
            } else {
                Ok(Vec::new())
            };
        }
        let mut trusted: Vec<TrustedSigner> = Vec::new();
        let mut notes = Vec::new();
        for (label, c) in checked {
            let fp = fingerprint(&c.key);
            if self.revoked.fingerprints.contains(&fp) {
                return Err(BundleError::Signature(format!(
                    "{label} is by revoked key {fp} (listed in {})",
                    self.revoked.file.display()
                )));
            }
            let matching: Vec<&SignerEntry> = self
                .signers
                .entries
                .iter()
                .filter(|e| e.key.key_data() == c.key.key_data() && e.allows_bundles())
                .collect();
            if matching.is_empty() {
                notes.push(format!(
                    "{label} by key {fp}: untrusted (not in {} for namespace {SIG_NAMESPACE})",
                    self.signers.file.display()
                ));
                continue;
            }
            let valid: Vec<&&SignerEntry> = matching
                .iter()
                .filter(|e| e.outside_window(now).is_none())
                .collect();
            if valid.is_empty() {
                let why = matching
                    .iter()
                    .filter_map(|e| e.outside_window(now))
                    .collect::<Vec<_>>()
                    .join("; ");
                notes.push(format!("{label} by key {fp}: key {why}"));
                continue;
            }
            if trusted.iter().any(|t| t.fingerprint == fp) {
                notes.push(format!("{label} by key {fp}: same key again, counted once"));
                continue;
            }
            let mut principals: Vec<String> =
                valid.iter().flat_map(|e| e.principals.clone()).collect();
            principals.dedup();
            trusted.push(TrustedSigner {
                principals,
                fingerprint: fp,
            });
        }
        let needed = if self.require_signed {
            self.threshold.max(1)
        } else {
            0
        };
        if trusted.len() < needed {
            return Err(BundleError::Signature(format!(
                "needs {needed} distinct trusted key(s), found {}: {}",
                trusted.len(),
                notes.join("; ")
            )));
        }
        Ok(trusted)
    }
}

impl TrustPolicy {
    /// The policy `guild.toml`'s `[trust]` describes; `allowed_signers` overrides its file
    /// (`--allowed-signers`). A missing allowed-signers file is an error only when signatures
    /// are required.
    pub fn from_config(
        config: &crate::config::Config,
        allowed_signers: Option<&Path>,
    ) -> Result<Self, BundleError> {
        let trust = &config.trust;
        let file = allowed_signers
            .map(Path::to_path_buf)
            .unwrap_or_else(|| config.resolve(&trust.allowed_signers));
        let signers = if !trust.require_signed && !file.exists() {
            AllowedSigners {
                file,
                entries: Vec::new(),
            }
        } else {
            AllowedSigners::load(&file)?
        };
        Ok(Self {
            signers,
            revoked: Revoked::load(&config.resolve(&trust.revoked))?,
            require_signed: trust.require_signed,
            threshold: usize::try_from(trust.threshold).unwrap_or(usize::MAX),
        })
    }
}

//! The team's trust file: an `allowed_signers` file in the format git and `ssh-keygen -Y verify`
//! read (principals, optional `cert-authority`, `namespaces=`, `valid-after=`, `valid-before=`,
//! then the key), and the revocation list that always wins. Deciding whether a bundle's checked
//! signatures are enough is [`super::policy`]'s job.
//!
//! A line Guild cannot honour (an option it does not implement such as `verify-required`, a key
//! type it does not verify) is refused on its own, with a warning naming the file and line: the
//! rest of the file keeps working, and dropping a line can only narrow trust. A line that is
//! malformed (no key, a key that does not decode, a bad time) stops the whole file, since a
//! typo should be fixed, not skipped.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use ssh_key::PublicKey;

use super::pattern::{ListMatch, match_list};
pub use super::policy::{TrustPolicy, TrustedSigner};
use super::sign::{fingerprint, supported_key};
use super::time::{parse_signers_time, rfc3339};
use super::{BundleError, SIG_NAMESPACE};

/// One line of an `allowed_signers` file.
#[derive(Debug, Clone)]
pub struct SignerEntry {
    /// Principals (e-mail addresses or names) this key signs as; on a `cert-authority` line,
    /// patterns the certificate's principals must match.
    pub principals: Vec<String>,
    /// The key (on a `cert-authority` line, the CA key).
    pub key: PublicKey,
    /// `cert-authority`: the key vouches for certificates it signed, not for its own signatures.
    pub cert_authority: bool,
    /// `namespaces=`, the pattern list as written: `None` allows every namespace.
    pub namespaces: Option<String>,
    /// `valid-after=`, Unix seconds.
    pub valid_after: Option<u64>,
    /// `valid-before=`, Unix seconds.
    pub valid_before: Option<u64>,
    /// 1-based line in the file.
    pub line: usize,
}

impl SignerEntry {
    /// Whether the entry allows the bundle namespace (OpenSSH pattern-list semantics).
    pub fn allows_bundles(&self) -> bool {
        self.namespaces
            .as_deref()
            .is_none_or(|ns| match_list(SIG_NAMESPACE, ns) == ListMatch::Yes)
    }

    /// Whether `principal` (a certificate's) is one this line's principal patterns accept.
    pub fn accepts_principal(&self, principal: &str) -> bool {
        match_list(principal, &self.principals.join(",")) == ListMatch::Yes
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

/// A line of the trust file that was refused on its own (the rest of the file still counts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedLine {
    /// 1-based line in the file.
    pub line: usize,
    /// Why Guild cannot honour it.
    pub reason: String,
    /// The line's key, `SHA256:…`, when it decoded (so a signature by it can say why it is not
    /// trusted).
    pub fingerprint: Option<String>,
}

/// A parsed `allowed_signers` file.
#[derive(Debug, Clone, Default)]
pub struct AllowedSigners {
    /// Where it was read from (for messages).
    pub file: PathBuf,
    /// Its entries, in file order.
    pub entries: Vec<SignerEntry>,
    /// Lines refused on their own, in file order.
    pub refused: Vec<RefusedLine>,
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

    /// Parses the text of an `allowed_signers` file. Each refused line is logged as a warning
    /// and listed in [`AllowedSigners::refused`].
    pub fn parse(text: &str, file: &Path) -> Result<Self, BundleError> {
        let mut entries = Vec::new();
        let mut refused = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            match parse_line(line, i + 1) {
                Ok(entry) => entries.push(entry),
                Err(LineError::Unsupported {
                    reason,
                    fingerprint,
                }) => {
                    tracing::warn!(file = %file.display(), line = i + 1, "allowed_signers line refused: {reason}");
                    refused.push(RefusedLine {
                        line: i + 1,
                        reason,
                        fingerprint,
                    });
                }
                Err(LineError::Malformed(message)) => {
                    return Err(BundleError::TrustFile {
                        file: file.display().to_string(),
                        line: i + 1,
                        message,
                    });
                }
            }
        }
        Ok(Self {
            file: file.to_owned(),
            entries,
            refused,
        })
    }

    /// One warning per refused line, naming the file and the line.
    pub fn warnings(&self) -> Vec<String> {
        self.refused
            .iter()
            .map(|r| {
                format!(
                    "{}:{}: line refused: {} (the other lines still count)",
                    self.file.display(),
                    r.line,
                    r.reason
                )
            })
            .collect()
    }
}

enum LineError {
    /// Well formed, but asks for something Guild does not implement: only this line is refused.
    Unsupported {
        reason: String,
        fingerprint: Option<String>,
    },
    /// Not a line of the format at all: the file is refused.
    Malformed(String),
}

fn parse_line(line: &str, number: usize) -> Result<SignerEntry, LineError> {
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
        return Err(LineError::Malformed("no principal".into()));
    }
    let mut key_at = 1;
    let mut option_tokens = Vec::new();
    match tokens.get(1) {
        Some(t) if !is_key_type(t) => {
            option_tokens = split_options(t);
            key_at = 2;
        }
        Some(_) => {}
        None => return Err(LineError::Malformed("no key after the principals".into())),
    }
    let key_type = tokens.get(key_at).cloned().unwrap_or_default();
    let key_text = tokens.get(key_at..).unwrap_or_default().join(" ");
    let key = match PublicKey::from_openssh(&key_text) {
        Ok(key) => key,
        Err(_) if is_known_unsupported_type(&key_type) => {
            return Err(LineError::Unsupported {
                reason: format!("{key_type} keys are not supported"),
                fingerprint: None,
            });
        }
        Err(e) => {
            return Err(LineError::Malformed(format!(
                "not a public key ({e}): expected `PRINCIPALS [OPTIONS] KEYTYPE BASE64`"
            )));
        }
    };
    let unsupported = |reason: String| LineError::Unsupported {
        reason,
        fingerprint: Some(fingerprint(&key)),
    };
    let mut options = Options::default();
    for option in &option_tokens {
        options.apply(option).map_err(|e| match e {
            OptionError::Unsupported(reason) => unsupported(reason),
            OptionError::Malformed(m) => LineError::Malformed(m),
        })?;
    }
    supported_key(key.key_data()).map_err(unsupported)?;
    Ok(SignerEntry {
        principals,
        key,
        cert_authority: options.cert_authority,
        namespaces: options.namespaces,
        valid_after: options.valid_after,
        valid_before: options.valid_before,
        line: number,
    })
}

#[derive(Default)]
struct Options {
    cert_authority: bool,
    namespaces: Option<String>,
    valid_after: Option<u64>,
    valid_before: Option<u64>,
}

enum OptionError {
    Unsupported(String),
    Malformed(String),
}

impl Options {
    /// One option, named case-insensitively as ssh-keygen does; a value must be in double
    /// quotes (ssh-keygen refuses the line otherwise), and an option given twice refuses it.
    fn apply(&mut self, option: &str) -> Result<(), OptionError> {
        let (name, value) = match option.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (option, None),
        };
        let name = name.to_ascii_lowercase();
        let quoted = |v: Option<&str>| -> Result<String, OptionError> {
            v.and_then(|v| v.strip_prefix('"'))
                .and_then(|v| v.strip_suffix('"'))
                .map(str::to_owned)
                .ok_or_else(|| {
                    OptionError::Unsupported(format!(
                        "option {name:?} needs a value in double quotes ({name}=\"…\"), as ssh-keygen requires"
                    ))
                })
        };
        let twice = || OptionError::Unsupported(format!("option {name:?} is given twice"));
        let time = |v: String| parse_signers_time(&v).map_err(OptionError::Malformed);
        match name.as_str() {
            "cert-authority" if value.is_none() => {
                if self.cert_authority {
                    return Err(twice());
                }
                self.cert_authority = true;
            }
            "namespaces" => {
                let v = quoted(value)?;
                if self.namespaces.replace(v).is_some() {
                    return Err(twice());
                }
            }
            "valid-after" => {
                let v = time(quoted(value)?)?;
                if self.valid_after.replace(v).is_some() {
                    return Err(twice());
                }
            }
            "valid-before" => {
                let v = time(quoted(value)?)?;
                if self.valid_before.replace(v).is_some() {
                    return Err(twice());
                }
            }
            _ => {
                return Err(OptionError::Unsupported(format!(
                    "option {:?} is not supported by Guild (it supports cert-authority, \
                     namespaces, valid-after and valid-before)",
                    name
                )));
            }
        }
        Ok(())
    }
}

/// Key types OpenSSH knows that Guild does not verify (security keys, DSA): a line with one is
/// refused on its own rather than stopping the file.
fn is_known_unsupported_type(token: &str) -> bool {
    token.starts_with("sk-") || token == "ssh-dss" || token.ends_with("-cert-v01@openssh.com")
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

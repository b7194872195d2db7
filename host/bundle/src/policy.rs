//! The trust decision: given a bundle's checked signatures, the team's `allowed_signers`, the
//! revocation list and `[trust]`'s `require_signed` and `threshold`, which distinct keys vouch
//! for it. A bare-key signature is vouched for by a line listing that key; a certificate
//! signature only by a `cert-authority` line whose CA signed the certificate, for the
//! certificate's principals that line's principal patterns accept, as `ssh-keygen -Y verify`
//! decides.

use std::path::Path;

use super::cert::UserCert;
use super::sign::{Checked, fingerprint};
use super::trust::{AllowedSigners, Revoked, SignerEntry};
use super::{BundleError, SIG_NAMESPACE};

/// Who vouched for a bundle: one per distinct trusted key.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TrustedSigner {
    /// The principals the trust file lists for the key (for a certificate: the certificate's
    /// principals that its `cert-authority` line accepts).
    pub principals: Vec<String>,
    /// The signing key, `SHA256:…`.
    pub fingerprint: String,
    /// For a certificate signature: the CA key that certified the signing key, `SHA256:…`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certified_by: Option<String>,
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
            self.refuse_revoked(label, c)?;
            let fp = fingerprint(&c.key);
            let found = match &c.certificate {
                None => self.vouch_for_key(c, now),
                Some(cert) => self.vouch_for_certificate(cert, now),
            };
            let principals = match found {
                Ok(principals) => principals,
                Err(why) => {
                    notes.push(format!("{label} by key {fp}: {why}"));
                    continue;
                }
            };
            if trusted.iter().any(|t| t.fingerprint == fp) {
                notes.push(format!("{label} by key {fp}: same key again, counted once"));
                continue;
            }
            trusted.push(TrustedSigner {
                principals,
                fingerprint: fp,
                certified_by: c.certificate.as_ref().map(|cert| fingerprint(&cert.ca)),
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

    /// A signature by a revoked key, or under a certificate from a revoked CA, refuses the
    /// bundle whatever else signed it.
    fn refuse_revoked(&self, label: &str, c: &Checked) -> Result<(), BundleError> {
        let revoked = |what: &str, fp: String| {
            BundleError::Signature(format!(
                "{label} is by {what} {fp} (listed in {})",
                self.revoked.file.display()
            ))
        };
        let fp = fingerprint(&c.key);
        if self.revoked.fingerprints.contains(&fp) {
            return Err(revoked("revoked key", fp));
        }
        if let Some(cert) = &c.certificate {
            let ca = fingerprint(&cert.ca);
            if self.revoked.fingerprints.contains(&ca) {
                return Err(revoked("a certificate from revoked CA key", ca));
            }
        }
        Ok(())
    }

    /// The lines (not `cert-authority`) listing this bare key for the bundle namespace.
    fn vouch_for_key(&self, c: &Checked, now: u64) -> Result<Vec<String>, String> {
        let matching: Vec<&SignerEntry> = self
            .bundle_lines(false)
            .filter(|e| e.key.key_data() == c.key.key_data())
            .collect();
        if matching.is_empty() {
            return Err(self.untrusted(c));
        }
        in_window(
            &matching,
            now,
            |e| Some(e.principals.clone()),
            String::new(),
        )
    }

    /// The `cert-authority` lines whose CA signed `cert`, for the certificate's principals the
    /// line accepts.
    fn vouch_for_certificate(&self, cert: &UserCert, now: u64) -> Result<Vec<String>, String> {
        let matching: Vec<&SignerEntry> = self
            .bundle_lines(true)
            .filter(|e| e.key.key_data() == cert.ca.key_data())
            .collect();
        let Some(first) = matching.first() else {
            return Err(format!(
                "untrusted (certificate {:?} serial {} is by CA {}, which no cert-authority line \
                 of {} lists for namespace {SIG_NAMESPACE})",
                cert.key_id,
                cert.serial,
                fingerprint(&cert.ca),
                self.signers.file.display()
            ));
        };
        if let Some(why) = cert.refusal(&first.key, now) {
            return Err(format!("certificate {:?} {why}", cert.key_id));
        }
        let accepted = |e: &SignerEntry| {
            let accepted: Vec<String> = cert
                .principals
                .iter()
                .filter(|p| e.accepts_principal(p))
                .cloned()
                .collect();
            (!accepted.is_empty()).then_some(accepted)
        };
        let none = format!(
            "untrusted (certificate {:?} names {}, and no cert-authority line for its CA accepts \
             any of them)",
            cert.key_id,
            cert.principals.join(", ")
        );
        in_window(&matching, now, accepted, none)
    }

    /// Lines that allow the bundle namespace, `cert-authority` ones or the others.
    fn bundle_lines(&self, cert_authority: bool) -> impl Iterator<Item = &SignerEntry> {
        self.signers
            .entries
            .iter()
            .filter(move |e| e.cert_authority == cert_authority && e.allows_bundles())
    }

    /// Why a key is untrusted, naming a refused line that lists it, if one does.
    fn untrusted(&self, c: &Checked) -> String {
        let fp = fingerprint(&c.key);
        match self
            .signers
            .refused
            .iter()
            .find(|r| r.fingerprint.as_deref() == Some(fp.as_str()))
        {
            Some(r) => format!(
                "untrusted ({}:{} lists this key but that line was refused: {})",
                self.signers.file.display(),
                r.line,
                r.reason
            ),
            None => format!(
                "untrusted (not in {} for namespace {SIG_NAMESPACE})",
                self.signers.file.display()
            ),
        }
    }
}

/// Of the `matching` lines, those that vouch (`principals` says for whom; `None`: nobody) and are
/// valid at `now`; their principals, or why none vouches (`none` when no line vouches at all).
fn in_window(
    matching: &[&SignerEntry],
    now: u64,
    principals: impl Fn(&SignerEntry) -> Option<Vec<String>>,
    none: String,
) -> Result<Vec<String>, String> {
    let vouching: Vec<(&SignerEntry, Vec<String>)> = matching
        .iter()
        .filter_map(|e| principals(e).map(|p| (*e, p)))
        .collect();
    if vouching.is_empty() {
        return Err(none);
    }
    let mut out = Vec::new();
    let mut why = Vec::new();
    for (e, p) in vouching {
        match e.outside_window(now) {
            None => out.extend(p),
            Some(w) => why.push(w),
        }
    }
    if out.is_empty() {
        return Err(format!("key {}", why.join("; ")));
    }
    out.dedup();
    Ok(out)
}

impl TrustPolicy {
    /// The policy `guild.toml`'s `[trust]` describes; `allowed_signers` overrides its file
    /// (`--allowed-signers`). A missing allowed-signers file is an error only when signatures
    /// are required.
    pub fn from_config(
        config: &guild_core::config::Config,
        allowed_signers: Option<&Path>,
    ) -> Result<Self, BundleError> {
        let trust = &config.trust;
        let file = allowed_signers
            .map(Path::to_path_buf)
            .unwrap_or_else(|| config.resolve(&trust.allowed_signers));
        let signers = if !trust.require_signed && !file.exists() {
            AllowedSigners {
                file,
                ..AllowedSigners::default()
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

//! OpenSSH user certificates, as they arrive inside an SSH signature made with
//! `ssh-keygen -Y sign -f KEY-cert.pub`: the certified key, its principals and validity window,
//! the CA key and the CA's signature over the certificate's exact bytes.
//!
//! Read here field by field rather than with `ssh_key::Certificate`: that type refuses a
//! `valid_before` above `i64::MAX`, and `ssh-keygen -s` without `-V` writes `u64::MAX`
//! ("forever"), so the most common certificate could not be read at all. The CA signature is
//! checked over the bytes as received, never over a re-encoding.

use signature::Verifier;
use ssh_encoding::Decode;
use ssh_key::{PublicKey, Signature};

use super::sign::supported_key;

/// The suffix of every OpenSSH certificate key type.
const CERT_SUFFIX: &str = "-cert-v01@openssh.com";

/// `SSH2_CERT_TYPE_USER`: only user certificates sign (a host certificate is refused).
const USER_CERT: u32 = 1;

/// A user certificate read from an SSHSIG's public-key field.
#[derive(Debug, Clone)]
pub struct UserCert {
    /// The certified key: the one that made the signature.
    pub key: PublicKey,
    /// The certificate's key id (`ssh-keygen -s … -I ID`), for messages and records.
    pub key_id: String,
    /// Its serial number.
    pub serial: u64,
    /// The principals it certifies (`-n`); an empty list certifies nobody here.
    pub principals: Vec<String>,
    /// Start of validity, Unix seconds.
    pub valid_after: u64,
    /// End of validity (exclusive), Unix seconds; `u64::MAX` is "forever".
    pub valid_before: u64,
    /// Names of its critical options (`force-command`, `source-address`, …).
    pub critical_options: Vec<String>,
    /// The CA key that signed it.
    pub ca: PublicKey,
    cert_type: u32,
    signature: Signature,
    signed_bytes: Vec<u8>,
}

/// Whether an SSH public-key blob is a certificate (its key type ends in `-cert-v01@openssh.com`).
pub fn is_certificate(blob: &[u8]) -> bool {
    String::decode(&mut &blob[..]).is_ok_and(|t| t.ends_with(CERT_SUFFIX))
}

impl UserCert {
    /// Reads a certificate blob; the error says which field is wrong.
    pub fn parse(blob: &[u8]) -> Result<Self, String> {
        let bad =
            |field: &'static str| move |e: ssh_encoding::Error| format!("bad {field} field: {e}");
        let r = &mut &blob[..];
        let cert_type_name = String::decode(r).map_err(bad("key type"))?;
        let plain = cert_type_name
            .strip_suffix(CERT_SUFFIX)
            .ok_or_else(|| format!("{cert_type_name:?} is not a certificate type"))?;
        // The certified key's own fields, in the order its plain form has them.
        let key_fields = match plain {
            "ssh-ed25519" => 1,
            "ecdsa-sha2-nistp256" | "ecdsa-sha2-nistp384" | "ecdsa-sha2-nistp521" | "ssh-rsa" => 2,
            other => {
                return Err(format!(
                    "{other} certificates are not supported (ed25519, ECDSA and RSA are)"
                ));
            }
        };
        let _nonce = Vec::<u8>::decode(r).map_err(bad("nonce"))?;
        let mut plain_blob = Vec::new();
        put_string(&mut plain_blob, plain.as_bytes());
        for _ in 0..key_fields {
            let field = Vec::<u8>::decode(r).map_err(bad("public key"))?;
            put_string(&mut plain_blob, &field);
        }
        let key = PublicKey::from_bytes(&plain_blob)
            .map_err(|e| format!("the certified {plain} key does not decode: {e}"))?;
        supported_key(key.key_data())?;
        let serial = u64::decode(r).map_err(bad("serial"))?;
        let cert_type = u32::decode(r).map_err(bad("type"))?;
        let key_id = String::decode(r).map_err(bad("key id"))?;
        let principals = strings(&Vec::<u8>::decode(r).map_err(bad("principals"))?)
            .map_err(bad("principals"))?;
        let valid_after = u64::decode(r).map_err(bad("valid after"))?;
        let valid_before = u64::decode(r).map_err(bad("valid before"))?;
        let critical_options =
            option_names(&Vec::<u8>::decode(r).map_err(bad("critical options"))?)
                .map_err(bad("critical options"))?;
        let _extensions = Vec::<u8>::decode(r).map_err(bad("extensions"))?;
        let _reserved = Vec::<u8>::decode(r).map_err(bad("reserved"))?;
        let ca_blob = Vec::<u8>::decode(r).map_err(bad("signature key"))?;
        if is_certificate(&ca_blob) {
            return Err("the CA key is itself a certificate".into());
        }
        let ca = PublicKey::from_bytes(&ca_blob)
            .map_err(|e| format!("the CA key does not decode: {e}"))?;
        supported_key(ca.key_data()).map_err(|e| format!("CA key: {e}"))?;
        let signed_len = blob.len() - r.len();
        let sig_blob = Vec::<u8>::decode(r).map_err(bad("signature"))?;
        if !r.is_empty() {
            return Err(format!("{} bytes after the certificate", r.len()));
        }
        let signature = Signature::try_from(&sig_blob[..])
            .map_err(|e| format!("the CA signature does not decode: {e}"))?;
        Ok(Self {
            key,
            key_id,
            serial,
            principals,
            valid_after,
            valid_before,
            critical_options,
            ca,
            cert_type,
            signature,
            signed_bytes: blob[..signed_len].to_vec(),
        })
    }

    /// Why this certificate cannot vouch for a signature at `now` under the CA key `ca`, or
    /// `None` when it can: signed by that CA, a user certificate, inside its validity window,
    /// naming at least one principal and no critical option (each one restricts how the key
    /// may be used, and none has a meaning for a bundle, so honouring none means refusing).
    pub fn refusal(&self, ca: &PublicKey, now: u64) -> Option<String> {
        if self.ca.key_data() != ca.key_data() {
            return Some("signed by another CA".into());
        }
        if self
            .ca
            .key_data()
            .verify(&self.signed_bytes, &self.signature)
            .is_err()
        {
            return Some("its CA signature does not verify (forged or altered)".into());
        }
        if self.cert_type != USER_CERT {
            return Some("is a host certificate, not a user certificate".into());
        }
        if now < self.valid_after {
            return Some(format!(
                "not valid until {}",
                super::time::rfc3339(self.valid_after)
            ));
        }
        if now >= self.valid_before {
            return Some(format!(
                "expired at {}",
                super::time::rfc3339(self.valid_before)
            ));
        }
        if self.principals.is_empty() {
            return Some("names no principal".into());
        }
        if !self.critical_options.is_empty() {
            return Some(format!(
                "carries critical option(s) {}, which a bundle signature cannot honour",
                self.critical_options.join(", ")
            ));
        }
        None
    }
}

/// A packed list of SSH strings.
fn strings(mut bytes: &[u8]) -> Result<Vec<String>, ssh_encoding::Error> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        out.push(String::decode(&mut bytes)?);
    }
    Ok(out)
}

/// The names of a packed list of (name, data) options.
fn option_names(mut bytes: &[u8]) -> Result<Vec<String>, ssh_encoding::Error> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        out.push(String::decode(&mut bytes)?);
        Vec::<u8>::decode(&mut bytes)?;
    }
    Ok(out)
}

fn put_string(out: &mut Vec<u8>, bytes: &[u8]) {
    // Fields of a certificate that fit in a 16 KiB signature.
    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(bytes);
}

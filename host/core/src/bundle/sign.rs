//! SSH signatures (SSHSIG) over the digest manifest: made with an OpenSSH private key file,
//! checked against a public key. The same bytes `ssh-keygen -Y sign -n guild-bundle` makes and
//! `ssh-keygen -Y verify` checks.

use std::path::Path;

use ssh_key::{HashAlg, LineEnding, PrivateKey, PublicKey, SshSig};

use super::{BundleError, SIG_NAMESPACE};

/// Reads an OpenSSH private key file; `passphrase` is asked for only when the key is encrypted.
pub fn load_private_key(
    path: &Path,
    passphrase: impl FnOnce() -> Result<String, String>,
) -> Result<PrivateKey, BundleError> {
    let key_err = |message: String| BundleError::Key {
        path: path.display().to_string(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| key_err(e.to_string()))?;
    let key = PrivateKey::from_openssh(&text)
        .map_err(|e| key_err(format!("not an OpenSSH private key: {e}")))?;
    if !key.is_encrypted() {
        return Ok(key);
    }
    let pass = passphrase().map_err(key_err)?;
    key.decrypt(pass.as_bytes())
        .map_err(|_| key_err("wrong passphrase (or the key cannot be decrypted)".into()))
}

/// Signs `message` (the manifest bytes) in the `guild-bundle` namespace; returns the armored
/// signature.
pub fn sign(key: &PrivateKey, message: &[u8]) -> Result<Vec<u8>, BundleError> {
    let sig = key
        .sign(SIG_NAMESPACE, HashAlg::Sha512, message)
        .map_err(|e| BundleError::Key {
            path: key.comment().to_owned(),
            message: format!(
                "cannot sign ({:?} keys are supported? {e})",
                key.algorithm()
            ),
        })?;
    let pem = sig
        .to_pem(LineEnding::LF)
        .map_err(|e| BundleError::Signature(format!("cannot encode the signature: {e}")))?;
    Ok(pem.into_bytes())
}

/// A signature that checked out: who made it, with which key.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The signing key.
    pub key: PublicKey,
}

/// Parses one armored signature and checks it over `message` in the `guild-bundle` namespace.
/// `label` names the signature in errors.
pub fn check(label: &str, armored: &[u8], message: &[u8]) -> Result<Checked, BundleError> {
    let text = std::str::from_utf8(armored)
        .map_err(|_| BundleError::Signature(format!("{label} is not text")))?;
    let sig = SshSig::from_pem(text)
        .map_err(|e| BundleError::Signature(format!("{label} is not an SSH signature: {e}")))?;
    if sig.namespace() != SIG_NAMESPACE {
        return Err(BundleError::Signature(format!(
            "{label} is for namespace {:?}, not {SIG_NAMESPACE:?}",
            sig.namespace()
        )));
    }
    let key = PublicKey::from(sig.public_key().clone());
    key.verify(SIG_NAMESPACE, message, &sig).map_err(|_| {
        BundleError::Signature(format!(
            "{label} by key {} does not match the manifest: the bundle was changed after signing",
            fingerprint(&key)
        ))
    })?;
    Ok(Checked { key })
}

/// `SHA256:…`, as `ssh-keygen -l` prints it.
pub fn fingerprint(key: &PublicKey) -> String {
    key.fingerprint(HashAlg::Sha256).to_string()
}

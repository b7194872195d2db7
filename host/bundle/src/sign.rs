//! SSH signatures (SSHSIG) over the digest manifest: made with an OpenSSH private key file,
//! checked against the public key or certificate they carry. The same bytes
//! `ssh-keygen -Y sign -n guild-bundle` makes and `ssh-keygen -Y verify` checks, for ed25519,
//! ECDSA (P-256, P-384, P-521) and RSA (SHA-2) keys.

use std::path::Path;

use ssh_encoding::pem::PemLabel;
use ssh_encoding::{Decode, DecodePem, Reader};
use ssh_key::private::RsaKeypair;
use ssh_key::public::KeyData;
use ssh_key::{HashAlg, LineEnding, PrivateKey, PublicKey, Signature, SshSig};

use super::cert::{UserCert, is_certificate};
use super::openssh_key::{self, WidenError};
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
    let text =
        zeroize::Zeroizing::new(std::fs::read_to_string(path).map_err(|e| key_err(e.to_string()))?);
    let widened = |pass: Option<&[u8]>, first: ssh_key::Error| {
        openssh_key::read_widened(&text, pass).map_err(|e| match e {
            WidenError::WrongPassphrase => key_err("wrong passphrase".into()),
            WidenError::NeedsPassphrase => key_err("the key needs a passphrase".into()),
            // Not a short ECDSA scalar: ssh-key's own complaint is the one that explains.
            WidenError::Unreadable(_) => key_err(format!("not an OpenSSH private key: {first}")),
        })
    };
    let key = match PrivateKey::from_openssh(&*text) {
        Ok(key) => key,
        // An unencrypted ECDSA key whose scalar OpenSSH wrote short (docs/bundles.md).
        Err(e) => return widened(None, e),
    };
    if !key.is_encrypted() {
        return Ok(key);
    }
    let pass = zeroize::Zeroizing::new(passphrase().map_err(key_err)?);
    match key.decrypt(pass.as_bytes()) {
        Ok(key) => Ok(key),
        Err(ssh_key::Error::Crypto) => Err(key_err("wrong passphrase".into())),
        Err(e) => widened(Some(pass.as_bytes()), e),
    }
}

/// Signs `message` (the manifest bytes) in the `guild-bundle` namespace; returns the armored
/// signature.
pub fn sign(key: &PrivateKey, message: &[u8]) -> Result<Vec<u8>, BundleError> {
    let key_err = |message: String| BundleError::Key {
        path: key.comment().to_owned(),
        message,
    };
    supported_key(key.public_key().key_data()).map_err(key_err)?;
    // SHA-512 over the message, as `ssh-keygen -Y sign` does for every key type (the key's
    // own signature hash is fixed by its type: rsa-sha2-512, or the curve's for ECDSA).
    let cannot = |e: String| {
        key_err(format!(
            "cannot sign with this {} key: {e}",
            key.algorithm()
        ))
    };
    let sig = match key.key_data().rsa() {
        Some(rsa) => {
            let data = SshSig::signed_data(SIG_NAMESPACE, HashAlg::Sha512, message)
                .map_err(|e| cannot(e.to_string()))?;
            let signature = sign_rsa(rsa, &data).map_err(cannot)?;
            SshSig::new(
                key.public_key().key_data().clone(),
                SIG_NAMESPACE,
                HashAlg::Sha512,
                signature,
            )
            .map_err(|e| cannot(e.to_string()))?
        }
        None => key
            .sign(SIG_NAMESPACE, HashAlg::Sha512, message)
            .map_err(|e| cannot(e.to_string()))?,
    };
    let pem = sig
        .to_pem(LineEnding::LF)
        .map_err(|e| BundleError::Signature(format!("cannot encode the signature: {e}")))?;
    Ok(pem.into_bytes())
}

/// An `rsa-sha2-512` signature over `data`. Done here because ssh-key 0.6.7 builds the RSA
/// private key with the first prime twice (`[p, p]`) and so cannot sign with any RSA key.
fn sign_rsa(key: &RsaKeypair, data: &[u8]) -> Result<Signature, String> {
    use signature::{SignatureEncoding, Signer};
    let big = |m: &ssh_key::Mpint| rsa::BigUint::try_from(m).map_err(|e| e.to_string());
    let private = rsa::RsaPrivateKey::from_components(
        big(&key.public.n)?,
        big(&key.public.e)?,
        big(&key.private.d)?,
        vec![big(&key.private.p)?, big(&key.private.q)?],
    )
    .map_err(|e| e.to_string())?;
    let signed = rsa::pkcs1v15::SigningKey::<sha2::Sha512>::new(private)
        .try_sign(data)
        .map_err(|e| e.to_string())?;
    Signature::new(
        ssh_key::Algorithm::Rsa {
            hash: Some(HashAlg::Sha512),
        },
        signed.to_vec(),
    )
    .map_err(|e| e.to_string())
}

/// A signature that checked out: who made it, with which key, under which certificate.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The signing key (for a certificate, the certified key).
    pub key: PublicKey,
    /// The certificate the signature carried instead of a bare key (`ssh-keygen -Y sign -f
    /// KEY-cert.pub`); only a `cert-authority` line of the trust file can vouch for it.
    pub certificate: Option<UserCert>,
}

/// Whether Guild signs and verifies with this kind of key: ed25519, ECDSA on P-256, P-384 or
/// P-521, and RSA of 2048 to 4096 bits (with SHA-2 signatures; SHA-1 `ssh-rsa` signatures are
/// refused). The error names the key type.
pub fn supported_key(key: &KeyData) -> Result<(), String> {
    match key {
        KeyData::Ed25519(_) | KeyData::Ecdsa(_) => Ok(()),
        KeyData::Rsa(rsa) => {
            let n = rsa.n.as_positive_bytes().unwrap_or_default();
            let bits =
                (n.len() * 8).saturating_sub(n.first().map_or(0, |b| b.leading_zeros() as usize));
            if (2048..=4096).contains(&bits) {
                Ok(())
            } else {
                Err(format!(
                    "an RSA key of {bits} bits is not supported (2048 to 4096 bits are)"
                ))
            }
        }
        other => Err(format!(
            "{} keys are not supported (ssh-ed25519, ecdsa-sha2-nistp256/384/521 and ssh-rsa \
             are)",
            other.algorithm()
        )),
    }
}

/// Parses one armored signature and checks it over `message` in the `guild-bundle` namespace.
/// `label` names the signature in errors. A signature that does not verify is reported as a
/// change after signing only when its key type is supported and its fields decode: anything
/// else is named for what it is.
pub fn check(label: &str, armored: &[u8], message: &[u8]) -> Result<Checked, BundleError> {
    let fail = |what: String| BundleError::Signature(format!("{label} {what}"));
    let text = std::str::from_utf8(armored).map_err(|_| fail("is not text".into()))?;
    let raw = RawSig::decode_pem(text.trim())
        .map_err(|e| fail(format!("is not an SSH signature: {e}")))?;
    if raw.namespace != SIG_NAMESPACE {
        return Err(fail(format!(
            "is for namespace {:?}, not {SIG_NAMESPACE:?}",
            raw.namespace
        )));
    }
    let hash = match raw.hash_alg.as_str() {
        "sha256" => HashAlg::Sha256,
        "sha512" => HashAlg::Sha512,
        other => {
            return Err(fail(format!(
                "uses hash {other:?} (sha256 or sha512 expected)"
            )));
        }
    };
    let (key, certificate) = if is_certificate(&raw.public_key) {
        let cert = UserCert::parse(&raw.public_key)
            .map_err(|e| fail(format!("carries a certificate Guild cannot read: {e}")))?;
        (cert.key.clone(), Some(cert))
    } else {
        let key = PublicKey::from_bytes(&raw.public_key)
            .map_err(|e| fail(format!("carries a public key that does not decode: {e}")))?;
        (key, None)
    };
    supported_key(key.key_data())
        .map_err(|e| fail(format!("is by key {}: {e}", fingerprint(&key))))?;
    let signature = Signature::try_from(&raw.signature[..])
        .map_err(|e| fail(format!("holds a signature that does not decode: {e}")))?;
    let sig = SshSig::new(key.key_data().clone(), SIG_NAMESPACE, hash, signature)
        .map_err(|e| fail(format!("cannot be rebuilt: {e}")))?;
    key.verify(SIG_NAMESPACE, message, &sig).map_err(|_| {
        fail(format!(
            "by key {} does not match the manifest: the bundle was changed after signing",
            fingerprint(&key)
        ))
    })?;
    Ok(Checked { key, certificate })
}

/// The fields of an armored SSHSIG (`-----BEGIN SSH SIGNATURE-----`), kept raw so that the
/// public-key field may hold a certificate.
struct RawSig {
    public_key: Vec<u8>,
    namespace: String,
    hash_alg: String,
    signature: Vec<u8>,
}

impl PemLabel for RawSig {
    const PEM_LABEL: &'static str = "SSH SIGNATURE";
}

impl Decode for RawSig {
    type Error = ssh_key::Error;

    fn decode(reader: &mut impl Reader) -> Result<Self, Self::Error> {
        let mut magic = [0u8; 6];
        reader.read(&mut magic)?;
        if &magic != b"SSHSIG" {
            return Err(ssh_key::Error::FormatEncoding);
        }
        if u32::decode(reader)? != 1 {
            return Err(ssh_key::Error::FormatEncoding);
        }
        let public_key = Vec::decode(reader)?;
        let namespace = String::decode(reader)?;
        let _reserved = Vec::<u8>::decode(reader)?;
        let hash_alg = String::decode(reader)?;
        let signature = Vec::decode(reader)?;
        Ok(Self {
            public_key,
            namespace,
            hash_alg,
            signature,
        })
    }
}

/// `SHA256:…`, as `ssh-keygen -l` prints it.
pub fn fingerprint(key: &PublicKey) -> String {
    key.fingerprint(HashAlg::Sha256).to_string()
}

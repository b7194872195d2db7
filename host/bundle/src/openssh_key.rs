//! OpenSSH private keys whose ECDSA scalar is written short.
//!
//! OpenSSH writes an ECDSA private scalar as an `mpint`, which drops leading zero bytes. About
//! half of all P-521 keys `ssh-keygen` makes (and one P-256 or P-384 key in 256) therefore carry
//! a scalar one byte or more under the curve's width, and ssh-key 0.6.7 refuses them with
//! `Encoding(Length)`. This module reads the key container itself, decrypting the private
//! section first when the key has a passphrase, writes the scalar back at the curve's full width
//! into an unencrypted container held only in memory, and hands that to ssh-key. Nothing else
//! about the key changes: ssh-key still checks the public half against the private one.

use ssh_encoding::{Decode, Encode, Reader};
use ssh_key::{Cipher, Kdf, PrivateKey};
use zeroize::Zeroizing;

const MAGIC: &[u8] = b"openssh-key-v1\0";

/// What stopped the key from being read; the caller adds the path.
#[derive(Debug, PartialEq, Eq)]
pub enum WidenError {
    /// The passphrase did not decrypt the private section.
    WrongPassphrase,
    /// The key is encrypted and no passphrase was given.
    NeedsPassphrase,
    /// Not an OpenSSH private key, or not one this reader repairs; the text says why.
    Unreadable(String),
}

/// Reads the OpenSSH private key `text` (PEM), widening a short ECDSA scalar. Returns the
/// decrypted key; `passphrase` is used only when the key is encrypted.
pub fn read_widened(text: &str, passphrase: Option<&[u8]>) -> Result<PrivateKey, WidenError> {
    let bad = |what: &str| WidenError::Unreadable(what.to_owned());
    let der = Zeroizing::new(unarmor(text).ok_or_else(|| bad("not an OpenSSH PEM block"))?);
    let mut r: &[u8] = &der;
    let field = |e: ssh_encoding::Error| WidenError::Unreadable(format!("container: {e}"));
    let mut magic = [0u8; MAGIC.len()];
    r.read(&mut magic).map_err(field)?;
    if magic != MAGIC {
        return Err(bad("no openssh-key-v1 magic"));
    }
    let cipher_name = String::decode(&mut r).map_err(field)?;
    let kdf = Kdf::decode(&mut r).map_err(|e| WidenError::Unreadable(format!("kdf: {e}")))?;
    if u32::decode(&mut r).map_err(field)? != 1 {
        return Err(bad("the file must hold exactly one key"));
    }
    let public = Vec::<u8>::decode(&mut r).map_err(field)?;
    let mut private = Zeroizing::new(Vec::<u8>::decode(&mut r).map_err(field)?);
    let cipher = Cipher::new(&cipher_name)
        .map_err(|_| WidenError::Unreadable(format!("cipher {cipher_name:?}")))?;
    if cipher.is_some() {
        let pass = passphrase.ok_or(WidenError::NeedsPassphrase)?;
        let tag = match r.remaining_len() {
            0 => None,
            16 => {
                let mut tag = [0u8; 16];
                r.read(&mut tag).map_err(field)?;
                Some(tag)
            }
            _ => return Err(bad("trailing bytes after the private section")),
        };
        let (key, iv) = kdf
            .derive_key_and_iv(cipher, pass)
            .map_err(|e| WidenError::Unreadable(format!("kdf: {e}")))?;
        cipher
            .decrypt(&key, &iv, &mut private, tag)
            .map_err(|_| WidenError::WrongPassphrase)?;
    }
    let section = widen_section(&private)?;
    let mut out = Zeroizing::new(Vec::new());
    let write = |e: ssh_encoding::Error| WidenError::Unreadable(format!("re-encoding: {e}"));
    out.extend_from_slice(MAGIC);
    "none".encode(&mut *out).map_err(write)?;
    Kdf::None
        .encode(&mut *out)
        .map_err(|e| WidenError::Unreadable(format!("re-encoding: {e}")))?;
    1u32.encode(&mut *out).map_err(write)?;
    public.encode(&mut *out).map_err(write)?;
    section.as_slice().encode(&mut *out).map_err(write)?;
    PrivateKey::from_bytes(&out).map_err(|e| WidenError::Unreadable(e.to_string()))
}

/// The bytes between `BEGIN` and `END OPENSSH PRIVATE KEY` (OpenSSH wraps at 70 columns, which
/// strict RFC 7468 readers refuse).
fn unarmor(text: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    let body = text
        .trim()
        .strip_prefix("-----BEGIN OPENSSH PRIVATE KEY-----")?
        .strip_suffix("-----END OPENSSH PRIVATE KEY-----")?;
    let joined: Zeroizing<String> =
        Zeroizing::new(body.split_ascii_whitespace().collect::<String>());
    base64::engine::general_purpose::STANDARD
        .decode(joined.as_bytes())
        .ok()
}

/// The plaintext private section with an ECDSA scalar at full width and padding for the
/// unencrypted block size (8).
fn widen_section(private: &[u8]) -> Result<Zeroizing<Vec<u8>>, WidenError> {
    let field = |e: ssh_encoding::Error| WidenError::Unreadable(format!("private section: {e}"));
    let mut r = private;
    let check1 = u32::decode(&mut r).map_err(field)?;
    let check2 = u32::decode(&mut r).map_err(field)?;
    if check1 != check2 {
        return Err(WidenError::WrongPassphrase);
    }
    let kind = String::decode(&mut r).map_err(field)?;
    let curve = String::decode(&mut r).map_err(field)?;
    let width = match (kind.as_str(), curve.as_str()) {
        ("ecdsa-sha2-nistp256", "nistp256") => 32,
        ("ecdsa-sha2-nistp384", "nistp384") => 48,
        ("ecdsa-sha2-nistp521", "nistp521") => 66,
        _ => return Err(WidenError::Unreadable(format!("key type {kind:?}"))),
    };
    let point = Vec::<u8>::decode(&mut r).map_err(field)?;
    let scalar = Zeroizing::new(Vec::<u8>::decode(&mut r).map_err(field)?);
    let comment = String::decode(&mut r).map_err(field)?;
    let digits = scalar
        .iter()
        .position(|b| *b != 0)
        .map_or(&[][..], |i| &scalar[i..]);
    if digits.is_empty() || digits.len() > width {
        return Err(WidenError::Unreadable(format!(
            "an ECDSA scalar of {} bytes for {curve}",
            digits.len()
        )));
    }
    // Full width, plus the mpint's sign byte when the top bit is set.
    let mut wide = Zeroizing::new(vec![0u8; width - digits.len()]);
    wide.extend_from_slice(digits);
    if wide.first().is_some_and(|b| b & 0x80 != 0) {
        wide.insert(0, 0);
    }
    let mut out = Zeroizing::new(Vec::new());
    let write = |e: ssh_encoding::Error| WidenError::Unreadable(format!("re-encoding: {e}"));
    for n in [check1, check1] {
        n.encode(&mut *out).map_err(write)?;
    }
    kind.encode(&mut *out).map_err(write)?;
    curve.encode(&mut *out).map_err(write)?;
    point.encode(&mut *out).map_err(write)?;
    wide.as_slice().encode(&mut *out).map_err(write)?;
    comment.encode(&mut *out).map_err(write)?;
    let mut pad = 1u8;
    while out.len() % 8 != 0 {
        out.push(pad);
        pad += 1;
    }
    Ok(out)
}

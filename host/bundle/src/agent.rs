//! Signing through an `ssh-agent`: the private key never leaves the agent. Only the one request
//! this needs is spoken (the agent protocol's `SSH_AGENTC_SIGN_REQUEST`, over the unix socket
//! `SSH_AUTH_SOCK` names); the agent signs SSHSIG's "signed data" blob and the signature is
//! wrapped exactly as `ssh-keygen -Y sign` wraps it.

use std::io::{Read, Write};
use std::path::Path;

use ssh_key::{HashAlg, LineEnding, PublicKey, Signature, SshSig};

use super::{BundleError, SIG_NAMESPACE};

const SIGN_REQUEST: u8 = 13;
const SIGN_RESPONSE: u8 = 14;
const FAILURE: u8 = 5;
/// `SSH_AGENT_RSA_SHA2_512`: sign with rsa-sha2-512.
const RSA_SHA2_512: u32 = 4;
/// Replies larger than this are not signatures.
const MAX_REPLY: usize = 256 * 1024;

/// Signs `message` (the manifest bytes) in the `guild-bundle` namespace with the agent at
/// `socket`, using the key whose public half is `key`; returns the armored signature. `label`
/// names the key in errors (its file).
pub fn sign_with_agent(
    socket: &Path,
    key: &PublicKey,
    label: &str,
    message: &[u8],
) -> Result<Vec<u8>, BundleError> {
    let key_err = |message: String| BundleError::Key {
        path: label.to_owned(),
        message,
    };
    let blob = key
        .to_bytes()
        .map_err(|e| key_err(format!("cannot encode the public key: {e}")))?;
    let hash = HashAlg::Sha512;
    let data = SshSig::signed_data(SIG_NAMESPACE, hash, message)
        .map_err(|e| key_err(format!("cannot prepare the signed data: {e}")))?;

    let mut body = vec![SIGN_REQUEST];
    put_string(&mut body, &blob);
    put_string(&mut body, &data);
    // An RSA key signs rsa-sha2-512 only when asked to: the default is SHA-1 `ssh-rsa`, which
    // verification refuses.
    let flags = if key.key_data().rsa().is_some() {
        RSA_SHA2_512
    } else {
        0
    };
    body.extend_from_slice(&flags.to_be_bytes());
    let reply = round_trip(socket, &body).map_err(|e| {
        key_err(format!(
            "cannot talk to the ssh-agent at {} (SSH_AUTH_SOCK): {e}",
            socket.display()
        ))
    })?;
    let raw = match reply.split_first() {
        Some((&SIGN_RESPONSE, rest)) => get_string(rest)
            .ok_or_else(|| key_err("the ssh-agent sent a malformed signature".into()))?,
        Some((&FAILURE, _)) => {
            return Err(key_err(format!(
                "the ssh-agent refused to sign: is the private half of {} added (`ssh-add -l`)?",
                super::sign::fingerprint(key)
            )));
        }
        _ => return Err(key_err("unexpected reply from the ssh-agent".into())),
    };
    let signature = Signature::try_from(raw)
        .map_err(|e| key_err(format!("the ssh-agent's signature does not decode: {e}")))?;
    let sig = SshSig::new(key.key_data().clone(), SIG_NAMESPACE, hash, signature)
        .map_err(|e| key_err(format!("cannot build the SSH signature: {e}")))?;
    let pem = sig
        .to_pem(LineEnding::LF)
        .map_err(|e| BundleError::Signature(format!("cannot encode the signature: {e}")))?;
    Ok(pem.into_bytes())
}

/// Sends one framed request and reads one framed reply.
fn round_trip(socket: &Path, body: &[u8]) -> std::io::Result<Vec<u8>> {
    #[cfg(unix)]
    {
        let mut stream = std::os::unix::net::UnixStream::connect(socket)?;
        let len = u32::try_from(body.len()).map_err(std::io::Error::other)?;
        stream.write_all(&len.to_be_bytes())?;
        stream.write_all(body)?;
        let mut len = [0u8; 4];
        stream.read_exact(&mut len)?;
        let len = u32::from_be_bytes(len) as usize;
        if len > MAX_REPLY {
            return Err(std::io::Error::other(format!("reply of {len} bytes")));
        }
        let mut reply = vec![0u8; len];
        stream.read_exact(&mut reply)?;
        Ok(reply)
    }
    #[cfg(not(unix))]
    {
        let _ = (socket, body);
        Err(std::io::Error::other(
            "ssh-agent signing needs a unix socket",
        ))
    }
}

fn put_string(out: &mut Vec<u8>, bytes: &[u8]) {
    // Keys and signed-data blobs are far below 4 GiB.
    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(bytes);
}

/// The SSH `string` at the start of `bytes`.
fn get_string(bytes: &[u8]) -> Option<&[u8]> {
    let (len, rest) = bytes.split_first_chunk::<4>()?;
    rest.get(..u32::from_be_bytes(*len) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_round_trip_and_short_input_is_refused() {
        let mut out = Vec::new();
        put_string(&mut out, b"abc");
        assert_eq!(get_string(&out), Some(&b"abc"[..]));
        assert_eq!(get_string(&out[..5]), None);
        assert_eq!(get_string(&[0, 0]), None);
    }

    #[test]
    fn a_missing_agent_socket_is_named() {
        let key = ssh_key::PrivateKey::from(ssh_key::private::Ed25519Keypair::from_seed(&[7; 32]));
        let err = sign_with_agent(
            Path::new("/nonexistent/agent.sock"),
            key.public_key(),
            "lead.pub",
            b"m",
        )
        .expect_err("no agent");
        let text = err.to_string();
        assert!(
            text.contains("lead.pub") && text.contains("SSH_AUTH_SOCK"),
            "{text}"
        );
    }
}

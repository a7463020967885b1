//! Signed heads: the server's ed25519 signature over a game's id, a version and the head hash
//! of a stream at that version (`docs/review.md`). A verifier who holds the server's public
//! key — printed when it starts and served at [`KEY_PATH`] — knows that the server vouched for
//! exactly this log up to there; without the key a file proves only its internal consistency.
//!
//! The stream a head belongs to is named ([`Stream`]): exports carry the head of the full log;
//! every `joined` and `accepted` frame carries the head of the receiving viewer's own stream
//! (`record::stream`) — its own sequence and running hash, nothing of the log's length or
//! head, so a receipt a player keeps says nothing of hidden activity. A signature never
//! covers one stream's head under another's name: the stream is part of what is signed.

use crate::game::Viewer;
use crate::record::chain::LogHash;
use crate::record::stream::StreamHash;
use data_encoding::HEXLOWER;
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use serde::{Deserialize, Serialize};

pub use ed25519_dalek::SigningKey as ServerSigningKey;

/// Where a server serves its public key, as 64 lowercase hex digits and a newline.
pub const KEY_PATH: &str = "/.well-known/asl-server-key";

/// The context every signed message starts with, so a signature made for a head can never be
/// taken for one over anything else.
pub const SIGNING_CONTEXT: &[u8] = b"asl-server signed head v1\0";

/// Which sequence of events a head is the hash of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stream {
    /// The whole stored log, every event in its envelope: what exports hold.
    FullLog,
    /// One viewer's own stream (`record::stream`): `version` is the viewer's sequence and
    /// `head` its running `StreamHash`. What a player keeps as a receipt.
    Viewer(Viewer),
}

/// A server's public key: 32 bytes, written as 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ServerKey(pub [u8; 32]);

crate::game::digest_text!(ServerKey);

impl ServerKey {
    pub fn of(key: &SigningKey) -> ServerKey {
        ServerKey(key.verifying_key().to_bytes())
    }

    /// Reads 64 hex digits (surrounding whitespace ignored, as in a key file).
    pub fn from_hex(text: &str) -> Option<ServerKey> {
        let bytes = HEXLOWER.decode(text.trim().as_bytes()).ok()?;
        Some(ServerKey(bytes.try_into().ok()?))
    }
}

/// What the server signs: a stream's head at a version of a game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignedHead {
    pub game: String,
    pub stream: Stream,
    pub version: u64,
    pub head: LogHash,
    /// The key that signed: a verifier compares it with the server's it trusts.
    pub signer: ServerKey,
    /// The ed25519 signature, 64 bytes.
    pub signature: Vec<u8>,
}

fn message(game: &str, stream: Stream, version: u64, head: &LogHash) -> Vec<u8> {
    let mut m = SIGNING_CONTEXT.to_vec();
    m.extend(
        bincode::serde::encode_to_vec((game, stream, version, head), bincode::config::standard())
            .expect("a head always encodes"),
    );
    m
}

impl SignedHead {
    pub fn sign(
        key: &SigningKey,
        game: &str,
        stream: Stream,
        version: u64,
        head: LogHash,
    ) -> SignedHead {
        let signature = key.sign(&message(game, stream, version, &head));
        SignedHead {
            game: game.to_string(),
            stream,
            version,
            head,
            signer: ServerKey::of(key),
            signature: signature.to_bytes().to_vec(),
        }
    }

    /// The head of `viewer`'s own stream after its event `seq`, signed: a receipt.
    pub fn of_stream(
        key: &SigningKey,
        game: &str,
        viewer: Viewer,
        seq: u64,
        head: StreamHash,
    ) -> SignedHead {
        SignedHead::sign(key, game, Stream::Viewer(viewer), seq, LogHash(head.0))
    }

    /// The viewer whose own stream this head is of, with the stream's hash at `version`; `None`
    /// for a head of the full log.
    pub fn viewer_head(&self) -> Option<(Viewer, StreamHash)> {
        match self.stream {
            Stream::Viewer(viewer) => Some((viewer, StreamHash(self.head.0))),
            Stream::FullLog => None,
        }
    }

    /// Checks the signature under `trusted`, the key of the server the verifier trusts. The
    /// reasons name what is wrong, never a value to copy.
    pub fn check(&self, trusted: &ServerKey) -> Result<(), String> {
        if self.signer != *trusted {
            return Err(
                "it is signed with another key than the server's: whoever signed it is not that server"
                    .into(),
            );
        }
        let key = VerifyingKey::from_bytes(&trusted.0)
            .map_err(|_| "the server's key is not an ed25519 public key".to_string())?;
        let signature = <[u8; 64]>::try_from(self.signature.as_slice())
            .map(|b| Signature::from_bytes(&b))
            .map_err(|_| "the signature is not 64 bytes".to_string())?;
        key.verify(
            &message(&self.game, self.stream, self.version, &self.head),
            &signature,
        )
        .map_err(|_| {
            "the signature does not match the game, version and head: they were changed after signing"
                .to_string()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_holds_only_for_its_head_and_its_key() {
        let key = SigningKey::from_bytes(&[7; 32]);
        let other = SigningKey::from_bytes(&[8; 32]);
        let signed = SignedHead::sign(&key, "ab", Stream::FullLog, 9, LogHash([1; 32]));
        signed.check(&ServerKey::of(&key)).unwrap();
        let err = signed.check(&ServerKey::of(&other)).unwrap_err();
        assert!(err.contains("another key"), "{err}");
        // Re-signed by another key that claims to be the server: the key is compared.
        let mut forged = SignedHead::sign(&other, "ab", Stream::FullLog, 9, LogHash([1; 32]));
        forged.signer = ServerKey::of(&key);
        assert!(forged.check(&ServerKey::of(&key)).is_err());
        for changed in [
            SignedHead {
                version: 10,
                ..signed.clone()
            },
            SignedHead {
                head: LogHash([2; 32]),
                ..signed.clone()
            },
            SignedHead {
                game: "ac".into(),
                ..signed.clone()
            },
        ] {
            let err = changed.check(&ServerKey::of(&key)).unwrap_err();
            assert!(err.contains("changed after signing"), "{err}");
        }
        // A viewer's head is signed as that viewer's: it is no other stream's.
        let receipt = SignedHead::of_stream(&key, "ab", Viewer::Spectator, 9, StreamHash([1; 32]));
        receipt.check(&ServerKey::of(&key)).unwrap();
        assert_eq!(
            receipt.viewer_head(),
            Some((Viewer::Spectator, StreamHash([1; 32])))
        );
        assert_eq!(signed.viewer_head(), None);
        for stream in [
            Stream::FullLog,
            Stream::Viewer(Viewer::Side(crate::board::scenario::Side::A)),
        ] {
            let moved = SignedHead {
                stream,
                ..receipt.clone()
            };
            let err = moved.check(&ServerKey::of(&key)).unwrap_err();
            assert!(err.contains("changed after signing"), "{err}");
        }
        let text = ServerKey::of(&key).to_string();
        assert_eq!(
            ServerKey::from_hex(&format!("{text}\n")),
            Some(ServerKey::of(&key))
        );
        assert_eq!(ServerKey::from_hex("zz"), None);
    }
}

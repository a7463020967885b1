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
//!
//! Two forms of signature:
//! - **Direct** (`batch: None`): the signature over `SIGNING_CONTEXT` and the head itself.
//!   Exports carry this form (their file has no room for a proof), and receipts kept from
//!   servers before batches are still read and checked in it.
//! - **Batched** (`batch: Some(proof)`, every receipt a server sends now): the server signs
//!   one Merkle root over every head asked of it at about the same moment, across all its
//!   games, so a busy server pays one ed25519 signature for many receipts ([`sign_batch`]).
//!   Each head is a leaf — blake3 of `LEAF_CONTEXT`, the leaf's salt and the head's bytes —
//!   and two nodes hash to their parent under `NODE_CONTEXT`; a node left without a partner
//!   at the end of a level is carried up unchanged. The signature is over `BATCH_CONTEXT`
//!   and the root. A receipt carries its leaf's salt and the path from its leaf to the root
//!   ([`BatchProof`]), so it is checked alone, as before: leaf, path, root, signature. A batch
//!   of one is a root equal to its leaf and an empty path.
//!
//! What a batched receipt shows its holder beyond its own head (the projection law: a receipt
//! must say nothing its viewer's projection doesn't show):
//! - The path's hashes are of other receipts' leaves, each salted with a value derived from
//!   the server's secret key and the leaf's own content (`leaf_salt`), sent only to that
//!   leaf's own holder. Without the salt a sibling cannot be tested against any guess, however
//!   guessable the head under it (a spectator's stream after `GameCreated` is a function of
//!   the scenario alone): the hashes say nothing of any other game or viewer.
//! - No other head of the holder's own game can be in its batch: a game's writer task handles
//!   one request at a time and waits for its receipt before the next, so each batch holds at
//!   most one head per game (`server/src/signer.rs`).
//! - The path's length and its left/right steps say how many receipts the server signed at
//!   that moment, across all its games, and where in that batch this one was: the server's
//!   load, nothing of any game.
//!
//! The salt is deterministic (no randomness in this crate): the same head signed again gets
//! the same salt, so two receipts of the same head differ only in their batch's path and
//! signature.

use crate::chain::LogHash;
use crate::stream::StreamHash;
use data_encoding::HEXLOWER;
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use game::Viewer;
use serde::{Deserialize, Serialize};

pub use ed25519_dalek::SigningKey as ServerSigningKey;

/// Where a server serves its public key, as 64 lowercase hex digits and a newline.
pub const KEY_PATH: &str = "/.well-known/asl-server-key";

/// The context every directly signed message starts with, so a signature made for a head can
/// never be taken for one over anything else.
pub(crate) const SIGNING_CONTEXT: &[u8] = b"asl-server signed head v1\0";

/// The context a batch's root is signed under: a root's signature is never a head's, nor the
/// other way round (the two contexts differ before either ends).
pub(crate) const BATCH_CONTEXT: &[u8] = b"asl-server signed batch v2\0";

/// What a leaf's hash starts with. Leaves and inner nodes hash under different contexts of the
/// same length, so no node can pass for a leaf: a path cannot end at a made-up "head" that is
/// really an inner node of some batch.
pub(crate) const LEAF_CONTEXT: &[u8] = b"asl-server receipt leaf v2\0";

/// What an inner node's hash starts with (see [`LEAF_CONTEXT`]).
pub(crate) const NODE_CONTEXT: &[u8] = b"asl-server receipt node v2\0";

/// The blake3 key-derivation context of the key leaf salts are drawn with ([`leaf_salt`]).
const SALT_KEY_CONTEXT: &str = "asl-server receipt leaf salt v2";

/// Longest path a batch proof may have: a batch of 2^32 heads, far more than a server signs at
/// once (its batches are at most `server::signer::BATCH_HEADS_MAX`). A proof past it is
/// refused before any hash is computed, so a hostile receipt cannot make its checker do
/// unbounded work.
pub const PROOF_DEPTH_MAX: usize = 32;

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

game::digest_text!(ServerKey);

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

/// A hash in a batch's Merkle tree: a leaf, an inner node or the root; also a leaf's salt.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct NodeHash(pub [u8; 32]);

game::digest_text!(NodeHash);

/// One step of a path from a leaf to its batch's root: the sibling, and on which side of the
/// node so far it stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sibling {
    /// The sibling is the left child: the parent is `node(sibling, so_far)`.
    Left(NodeHash),
    /// The sibling is the right child: the parent is `node(so_far, sibling)`.
    Right(NodeHash),
}

/// How a batched head reaches the root its batch's signature covers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchProof {
    /// The leaf's salt (`leaf_salt`): known to this head's holder alone.
    pub salt: NodeHash,
    /// The siblings from the leaf up, at most [`PROOF_DEPTH_MAX`]; empty for a batch of one.
    pub path: Vec<Sibling>,
}

/// A head to sign: a stream's head at a version of a game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Head {
    pub game: String,
    pub stream: Stream,
    pub version: u64,
    pub head: LogHash,
}

impl Head {
    /// The head of `viewer`'s own stream after its event `seq`: what a receipt signs.
    pub fn of_stream(game: &str, viewer: Viewer, seq: u64, head: StreamHash) -> Head {
        Head {
            game: game.to_string(),
            stream: Stream::Viewer(viewer),
            version: seq,
            head: LogHash(head.0),
        }
    }

    fn bytes(&self) -> Vec<u8> {
        body(&self.game, self.stream, self.version, &self.head)
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
    /// The ed25519 signature, 64 bytes: over the head itself, or over its batch's root.
    pub signature: Vec<u8>,
    /// How the head reaches the root the signature covers, if it was signed in a batch; absent
    /// from a head signed directly (and from receipts kept before batches, which still read).
    #[serde(default)]
    pub batch: Option<BatchProof>,
}

/// The bytes a head is: its game, stream, version and hash.
fn body(game: &str, stream: Stream, version: u64, head: &LogHash) -> Vec<u8> {
    bincode::serde::encode_to_vec((game, stream, version, head), bincode::config::standard())
        .expect("a head always encodes")
}

fn message(game: &str, stream: Stream, version: u64, head: &LogHash) -> Vec<u8> {
    let mut m = SIGNING_CONTEXT.to_vec();
    m.extend(body(game, stream, version, head));
    m
}

/// The key leaf salts are drawn with: derived from the server's secret key, so nobody else can
/// compute a salt, and under its own context, so it is no other use of that key.
fn salt_key(key: &SigningKey) -> [u8; 32] {
    blake3::derive_key(SALT_KEY_CONTEXT, key.as_bytes())
}

/// A leaf's salt: a keyed hash of the head's bytes under the server's salt key. Unpredictable
/// to anyone without the server's secret, and the same for the same head.
fn leaf_salt(salt_key: &[u8; 32], body: &[u8]) -> NodeHash {
    NodeHash(*blake3::keyed_hash(salt_key, body).as_bytes())
}

fn leaf(salt: &NodeHash, body: &[u8]) -> NodeHash {
    let mut hasher = blake3::Hasher::new();
    hasher.update(LEAF_CONTEXT).update(&salt.0).update(body);
    NodeHash(*hasher.finalize().as_bytes())
}

fn node(left: &NodeHash, right: &NodeHash) -> NodeHash {
    let mut hasher = blake3::Hasher::new();
    hasher.update(NODE_CONTEXT).update(&left.0).update(&right.0);
    NodeHash(*hasher.finalize().as_bytes())
}

fn batch_message(root: &NodeHash) -> Vec<u8> {
    let mut m = BATCH_CONTEXT.to_vec();
    m.extend(root.0);
    m
}

/// Signs every head of `heads` with one signature over their batch's Merkle root, returning
/// each head signed with its own proof, in the order given. An empty batch signs nothing.
///
/// # Panics
/// If the batch is so large that a path would pass [`PROOF_DEPTH_MAX`] (2^32 heads).
pub fn sign_batch(key: &SigningKey, heads: Vec<Head>) -> Vec<SignedHead> {
    if heads.is_empty() {
        return vec![];
    }
    assert!(
        (heads.len() as u64) <= 1u64 << PROOF_DEPTH_MAX,
        "a batch of {} heads is past the longest proof a receipt may carry",
        heads.len()
    );
    let salt_key = salt_key(key);
    let (salts, mut level): (Vec<NodeHash>, Vec<NodeHash>) = heads
        .iter()
        .map(|h| {
            let body = h.bytes();
            let salt = leaf_salt(&salt_key, &body);
            (salt, leaf(&salt, &body))
        })
        .unzip();
    // Each leaf's path, built level by level; `at[i]` is where leaf i's node stands now.
    let mut paths: Vec<Vec<Sibling>> = vec![vec![]; heads.len()];
    let mut at: Vec<usize> = (0..heads.len()).collect();
    while level.len() > 1 {
        for (path, at) in paths.iter_mut().zip(&mut at) {
            let i = *at;
            if i % 2 == 1 {
                path.push(Sibling::Left(level[i - 1]));
            } else if i + 1 < level.len() {
                path.push(Sibling::Right(level[i + 1]));
            }
            // The last node of an odd level has no partner: carried up as it is.
            *at = i / 2;
        }
        level = level
            .chunks(2)
            .map(|pair| match pair {
                [left, right] => node(left, right),
                [alone] => *alone,
                _ => unreachable!("chunks of two"),
            })
            .collect();
    }
    let signature = key.sign(&batch_message(&level[0])).to_bytes().to_vec();
    let signer = ServerKey::of(key);
    heads
        .into_iter()
        .zip(salts)
        .zip(paths)
        .map(|((h, salt), path)| SignedHead {
            game: h.game,
            stream: h.stream,
            version: h.version,
            head: h.head,
            signer,
            signature: signature.clone(),
            batch: Some(BatchProof { salt, path }),
        })
        .collect()
}

impl SignedHead {
    /// The head signed directly, alone (what exports carry: their file has room for no proof).
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
            batch: None,
        }
    }

    /// The head of `viewer`'s own stream after its event `seq`, signed as a batch of one: a
    /// receipt.
    pub fn of_stream(
        key: &SigningKey,
        game: &str,
        viewer: Viewer,
        seq: u64,
        head: StreamHash,
    ) -> SignedHead {
        sign_batch(key, vec![Head::of_stream(game, viewer, seq, head)])
            .pop()
            .expect("a batch of one signs one head")
    }

    /// The viewer whose own stream this head is of, with the stream's hash at `version`; `None`
    /// for a head of the full log.
    pub fn viewer_head(&self) -> Option<(Viewer, StreamHash)> {
        match self.stream {
            Stream::Viewer(viewer) => Some((viewer, StreamHash(self.head.0))),
            Stream::FullLog => None,
        }
    }

    /// The root of this head's batch, from its leaf and the proof's path.
    fn root(&self, proof: &BatchProof) -> NodeHash {
        let body = body(&self.game, self.stream, self.version, &self.head);
        proof
            .path
            .iter()
            .fold(leaf(&proof.salt, &body), |so_far, step| match step {
                Sibling::Left(left) => node(left, &so_far),
                Sibling::Right(right) => node(&so_far, right),
            })
    }

    /// Checks the signature under `trusted`, the key of the server the verifier trusts: over
    /// the head itself, or over the root its batch proof leads to. The reasons name what is
    /// wrong, never a value to copy.
    pub fn check(&self, trusted: &ServerKey) -> Result<(), SignatureError> {
        if self.signer != *trusted {
            return Err(SignatureError::OtherKey);
        }
        let key = VerifyingKey::from_bytes(&trusted.0).map_err(|_| SignatureError::NotAKey)?;
        let signature = <[u8; 64]>::try_from(self.signature.as_slice())
            .map(|b| Signature::from_bytes(&b))
            .map_err(|_| SignatureError::Length)?;
        let signed = match &self.batch {
            None => message(&self.game, self.stream, self.version, &self.head),
            Some(proof) if proof.path.len() > PROOF_DEPTH_MAX => {
                return Err(SignatureError::ProofTooDeep(proof.path.len()))
            }
            Some(proof) => batch_message(&self.root(proof)),
        };
        key.verify(&signed, &signature)
            .map_err(|_| match self.batch {
                None => SignatureError::Changed,
                Some(_) => SignatureError::ChangedInBatch,
            })
    }
}

/// Why a signed head does not hold under the key the verifier trusts. The reasons name what
/// is wrong, never a value to copy.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error(
        "it is signed with another key than the server's: whoever signed it is not that server"
    )]
    OtherKey,
    #[error("the server's key is not an ed25519 public key")]
    NotAKey,
    #[error("the signature is not 64 bytes")]
    Length,
    #[error("its batch proof has {0} steps, more than the {PROOF_DEPTH_MAX} any batch the server signs has: it is not the server's")]
    ProofTooDeep(usize),
    #[error(
        "the signature does not match the game, version and head: they were changed after signing"
    )]
    Changed,
    #[error("the signature does not match the game, version, head and batch proof: they were changed after signing")]
    ChangedInBatch,
    /// Asked of a server that holds no signing key.
    #[error("this server signs no heads")]
    NotSigning,
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
        assert_eq!(err, SignatureError::OtherKey);
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
            assert!(err.to_string().contains("changed after signing"), "{err}");
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
            Stream::Viewer(Viewer::Side(board::scenario::Side::A)),
        ] {
            let moved = SignedHead {
                stream,
                ..receipt.clone()
            };
            let err = moved.check(&ServerKey::of(&key)).unwrap_err();
            assert!(err.to_string().contains("changed after signing"), "{err}");
        }
        let text = ServerKey::of(&key).to_string();
        assert_eq!(
            ServerKey::from_hex(&format!("{text}\n")),
            Some(ServerKey::of(&key))
        );
        assert_eq!(ServerKey::from_hex("zz"), None);
    }

    fn heads(n: usize) -> Vec<Head> {
        (0..n)
            .map(|i| {
                Head::of_stream(
                    &format!("g{i}"),
                    Viewer::Spectator,
                    i as u64 + 1,
                    StreamHash([i as u8; 32]),
                )
            })
            .collect()
    }

    #[test]
    fn every_head_of_a_batch_holds_under_one_signature() {
        let key = SigningKey::from_bytes(&[7; 32]);
        let trusted = ServerKey::of(&key);
        for n in [1, 2, 3, 4, 5, 7, 8, 9, 33, 100] {
            let signed = sign_batch(&key, heads(n));
            assert_eq!(signed.len(), n);
            for (s, h) in signed.iter().zip(heads(n)) {
                assert_eq!(
                    (&s.game, s.stream, s.version, s.head),
                    (&h.game, h.stream, h.version, h.head)
                );
                s.check(&trusted)
                    .unwrap_or_else(|e| panic!("batch of {n}: {e}"));
                let path = &s.batch.as_ref().unwrap().path;
                // A path climbs one level at most per step: no longer than the tree is high.
                assert!(
                    path.len() <= (n as f64).log2().ceil() as usize,
                    "{n}: {path:?}"
                );
            }
            // One signature for the whole batch.
            assert!(signed.iter().all(|s| s.signature == signed[0].signature));
        }
        // A batch of one: the root is the leaf.
        let alone = &sign_batch(&key, heads(1))[0];
        assert!(alone.batch.as_ref().unwrap().path.is_empty());
        assert_eq!(
            *alone,
            SignedHead::of_stream(&key, "g0", Viewer::Spectator, 1, StreamHash([0; 32]))
        );
        assert!(sign_batch(&key, vec![]).is_empty());
    }

    #[test]
    fn a_changed_head_path_salt_or_signature_does_not_hold() {
        let key = SigningKey::from_bytes(&[7; 32]);
        let trusted = ServerKey::of(&key);
        let signed = sign_batch(&key, heads(5));
        let receipt = &signed[2];
        let proof = receipt.batch.clone().unwrap();
        let changed_after_signing = |changed: &SignedHead| {
            let err = changed.check(&trusted).unwrap_err();
            assert!(err.to_string().contains("changed after signing"), "{err}");
        };
        // The head: each field it covers.
        changed_after_signing(&SignedHead {
            version: 4,
            ..receipt.clone()
        });
        changed_after_signing(&SignedHead {
            head: LogHash([9; 32]),
            ..receipt.clone()
        });
        changed_after_signing(&SignedHead {
            game: "g0".into(),
            ..receipt.clone()
        });
        changed_after_signing(&SignedHead {
            stream: Stream::Viewer(Viewer::Side(board::scenario::Side::B)),
            ..receipt.clone()
        });
        // Another head of the same batch under this one's proof.
        changed_after_signing(&SignedHead {
            batch: Some(proof.clone()),
            ..signed[3].clone()
        });
        // The salt, a sibling, a side of the path, a step dropped or added.
        let mut salt = proof.clone();
        salt.salt.0[0] ^= 1;
        let mut sibling = proof.clone();
        sibling.path[0] = match sibling.path[0] {
            Sibling::Left(mut h) | Sibling::Right(mut h) => {
                h.0[0] ^= 1;
                Sibling::Left(h)
            }
        };
        let mut side = proof.clone();
        side.path[0] = match side.path[0] {
            Sibling::Left(h) => Sibling::Right(h),
            Sibling::Right(h) => Sibling::Left(h),
        };
        let mut shorter = proof.clone();
        shorter.path.pop();
        let mut longer = proof.clone();
        longer.path.push(Sibling::Right(NodeHash([0; 32])));
        for proof in [salt, sibling, side, shorter, longer] {
            changed_after_signing(&SignedHead {
                batch: Some(proof),
                ..receipt.clone()
            });
        }
        // The signature.
        let mut signature = receipt.clone();
        signature.signature[5] ^= 1;
        changed_after_signing(&signature);
        // A batched head taken for a direct one, and the other way round.
        changed_after_signing(&SignedHead {
            batch: None,
            ..receipt.clone()
        });
        let direct = SignedHead::sign(&key, "g2", receipt.stream, receipt.version, receipt.head);
        direct.check(&trusted).unwrap();
        changed_after_signing(&SignedHead {
            batch: Some(proof.clone()),
            ..direct
        });
        // A proof longer than any batch is refused before any hashing, in words.
        let mut endless = proof.clone();
        endless.path = vec![Sibling::Left(NodeHash([1; 32])); PROOF_DEPTH_MAX + 1];
        let err = SignedHead {
            batch: Some(endless),
            ..receipt.clone()
        }
        .check(&trusted)
        .unwrap_err();
        assert_eq!(err, SignatureError::ProofTooDeep(PROOF_DEPTH_MAX + 1));
        assert!(err.to_string().contains("more than the 32"), "{err}");
        // Another key's batch.
        let other = SigningKey::from_bytes(&[8; 32]);
        let mut forged = sign_batch(&other, heads(5)).remove(2);
        assert_eq!(
            forged.check(&trusted).unwrap_err(),
            SignatureError::OtherKey
        );
        forged.signer = trusted;
        changed_after_signing(&forged);
    }

    #[test]
    fn a_receipt_kept_before_batches_still_reads_and_holds() {
        let key = SigningKey::from_bytes(&[7; 32]);
        let direct = SignedHead::sign(
            &key,
            "ab",
            Stream::Viewer(Viewer::Spectator),
            3,
            LogHash([4; 32]),
        );
        let mut json: serde_json::Value = serde_json::to_value(&direct).unwrap();
        json.as_object_mut().unwrap().remove("batch");
        let read: SignedHead = serde_json::from_value(json).unwrap();
        assert_eq!(read, direct);
        read.check(&ServerKey::of(&key)).unwrap();
    }

    #[test]
    fn a_salt_is_the_servers_alone_and_the_same_for_the_same_head() {
        let key = SigningKey::from_bytes(&[7; 32]);
        let salt_of =
            |key: &SigningKey, n: usize| sign_batch(key, heads(n)).remove(0).batch.unwrap().salt;
        // The same head, in batches of other sizes: the same salt.
        assert_eq!(salt_of(&key, 1), salt_of(&key, 6));
        // Another key salts it otherwise, and another head gets another salt.
        assert_ne!(
            salt_of(&key, 1),
            salt_of(&SigningKey::from_bytes(&[8; 32]), 1)
        );
        let two = sign_batch(&key, heads(2));
        assert_ne!(
            two[0].batch.as_ref().unwrap().salt,
            two[1].batch.as_ref().unwrap().salt
        );
    }
}

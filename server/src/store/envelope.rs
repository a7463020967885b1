//! The stored form of a game: each event in a versioned envelope that carries its sequence,
//! the hash of the envelope before it and who issued it (`protocol::chain`, shared with every
//! offline verifier), so any edit, drop, reorder or truncation in the middle of a log is caught
//! when the log is read back. Plus what the server keeps beside the log: [`GameMeta`].

use crate::store::GameKey;
use data_encoding::{HEXLOWER, HEXLOWER_PERMISSIVE};
use protocol::chain::{self, ChainError, Entry, LogHash, Salt};
use protocol::fair_dice::Seed;
use protocol::Event;
use serde::{Deserialize, Serialize};

pub use protocol::chain::{ENVELOPE_FORMAT, GENESIS};

/// Version of the game metadata layout. 1: token digests; 2: adds the dice seeds. Format 1 is
/// still read (its games get a seed when loaded); other formats are refused by name.
pub const META_FORMAT: u16 = 2;

/// The most a stored metadata record may claim while it is decoded: token digests, a few dice
/// seeds and the marks are a few hundred bytes, so a larger claim is damage (a flipped length
/// byte), refused as undecodable instead of allocated.
pub const META_BYTES_MAX: usize = 1024 * 1024;

/// Encodes one event for the store, in its own one-event command issued by nobody; returns
/// the bytes and their hash (the next event's `prev`). For tools and benchmarks; the game task
/// seals with a salt and the issuing side ([`seal`]).
pub fn encode(seq: u64, prev: LogHash, event: &Event) -> (Vec<u8>, LogHash) {
    chain::seal(seq, prev, [0; 16], None, seq, event)
}

/// Encoding one event of a command (`first` is the sequence of the command's first event):
/// the chain's own.
pub use protocol::chain::seal;

/// Encodes one entry of a command, with the command and the client's exactly-once key
/// recorded on its first event.
pub fn seal_entry(prev: LogHash, salt: Salt, entry: &Entry) -> (Vec<u8>, LogHash) {
    chain::seal_entry(prev, salt, entry)
}

/// Why a stored log cannot be served, naming the first bad event.
pub type LogError = ChainError;

/// A log read back and checked: its entries in order and the hash of each envelope (the last
/// is the head).
#[derive(Debug)]
pub struct VerifiedLog {
    pub entries: Vec<Entry>,
    pub hashes: Vec<LogHash>,
}

impl VerifiedLog {
    pub fn head(&self) -> LogHash {
        self.hashes.last().copied().unwrap_or(GENESIS)
    }
}

/// Decodes and checks a stored log (see `protocol::chain::ChainReader`).
pub fn verify(records: &[(u64, Vec<u8>)]) -> Result<VerifiedLog, LogError> {
    let mut hashes = Vec::with_capacity(records.len());
    let entries = chain::read_all(records, |head| hashes.push(head))?;
    Ok(VerifiedLog { entries, hashes })
}

/// What the server keeps about a game besides its events: digests of its tokens, and its dice
/// seeds. The tokens themselves are never stored, so a copy of the data directory grants no
/// seat at any game; the seeds are stored as they are, since the server must derive rolls from
/// them after a restart (see `docs/dice.md` on what that means for whoever holds the disk).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct GameMeta {
    pub format: u16,
    /// blake3 digests of side A's, side B's and the spectator token.
    pub token_digests: [[u8; 32]; 3],
    /// Every dice seed the game has had, oldest first: the last is in use (or next to be), the
    /// others were revealed in the log.
    pub seeds: Vec<Seed>,
}

/// Format 1, read to be upgraded.
#[derive(Deserialize)]
struct GameMetaV1 {
    #[allow(dead_code)]
    format: u16,
    token_digests: [[u8; 32]; 3],
}

/// Why a game's stored metadata or marks cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MetaError {
    #[error("game metadata cannot be decoded ({0})")]
    Meta(String),
    #[error("game metadata format {0} is unknown (this server reads 1 and {META_FORMAT})")]
    Format(u16),
    #[error("game marks cannot be decoded ({0})")]
    Marks(String),
}

impl GameMeta {
    pub fn encode(&self) -> Vec<u8> {
        bincode::serde::encode_to_vec(self, bincode::config::standard())
            .expect("metadata always encodes")
    }

    /// Reads stored metadata. Format 1 (before dice) comes back with no seeds; the loader
    /// gives the game one.
    pub fn decode(bytes: &[u8]) -> Result<GameMeta, MetaError> {
        let config = bincode::config::standard().with_limit::<META_BYTES_MAX>();
        let cannot = |e: bincode::error::DecodeError| MetaError::Meta(e.to_string());
        let (format, _): (u16, usize) =
            bincode::serde::decode_from_slice(bytes, config).map_err(cannot)?;
        match format {
            META_FORMAT => Ok(bincode::serde::decode_from_slice(bytes, config)
                .map_err(cannot)?
                .0),
            1 => {
                let (old, _): (GameMetaV1, usize) =
                    bincode::serde::decode_from_slice(bytes, config).map_err(cannot)?;
                Ok(GameMeta {
                    format: META_FORMAT,
                    token_digests: old.token_digests,
                    seeds: vec![],
                })
            }
            other => Err(MetaError::Format(other)),
        }
    }
}

/// What the server has found about a game that must outlive a restart: stored after the
/// game's metadata (format 2) in the same record, so servers that do not know of it still read
/// the metadata. A restore writes the metadata alone: restoring a game is what clears a mark.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameMarks {
    /// Why the game was found rolled back (`game::GameTask`): it is refused until restored.
    pub rolled_back: Option<String>,
}

impl GameMeta {
    /// The metadata with `marks` after it (nothing after it when there are none).
    pub fn encode_marked(&self, marks: &GameMarks) -> Vec<u8> {
        let mut bytes = self.encode();
        if *marks != GameMarks::default() {
            bytes.extend(
                bincode::serde::encode_to_vec(marks, bincode::config::standard())
                    .expect("marks always encode"),
            );
        }
        bytes
    }
}

impl GameMarks {
    /// The marks stored after metadata of the current format; none for older formats or when
    /// nothing follows.
    pub fn decode(bytes: &[u8]) -> Result<GameMarks, MetaError> {
        let config = bincode::config::standard().with_limit::<META_BYTES_MAX>();
        let cannot = |e: bincode::error::DecodeError| MetaError::Marks(e.to_string());
        let (format, _): (u16, usize) =
            bincode::serde::decode_from_slice(bytes, config).map_err(cannot)?;
        if format != META_FORMAT {
            return Ok(GameMarks::default());
        }
        let (_, read): (GameMeta, usize) =
            bincode::serde::decode_from_slice(bytes, config).map_err(cannot)?;
        if read == bytes.len() {
            return Ok(GameMarks::default());
        }
        let (marks, used): (GameMarks, usize) =
            bincode::serde::decode_from_slice(&bytes[read..], config).map_err(cannot)?;
        if read + used != bytes.len() {
            return Err(MetaError::Marks(format!(
                "{} bytes left over",
                bytes.len() - read - used
            )));
        }
        Ok(marks)
    }
}

pub fn game_id(key: &GameKey) -> String {
    HEXLOWER.encode(key)
}

/// Reads a game id typed by a person; `None` for anything that is not 32 hex digits.
pub fn game_key(id: &str) -> Option<GameKey> {
    // Either case: a person may type it in capitals. Written ids are always lowercase.
    HEXLOWER_PERMISSIVE
        .decode(id.as_bytes())
        .ok()?
        .try_into()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::event::StepEnded;
    use protocol::phase::Clock;
    use protocol::Side;

    fn sample_log(n: u64) -> Vec<(u64, Vec<u8>)> {
        let mut prev = GENESIS;
        (1..=n)
            .map(|seq| {
                let event = Event::StepEnded(StepEnded {
                    by: Side::A,
                    ended: Clock::START,
                    next: Clock::START,
                });
                let (bytes, hash) = seal(seq, prev, [seq as u8; 16], Some(Side::A), seq, &event);
                prev = hash;
                (seq, bytes)
            })
            .collect()
    }

    /// A damaged length in stored metadata (a flipped byte claiming exabytes) is refused as
    /// undecodable, never allocated: the server names the damage instead of aborting.
    #[test]
    fn a_damaged_length_in_metadata_is_an_error_not_an_allocation() {
        let meta = GameMeta {
            format: META_FORMAT,
            token_digests: [[7; 32]; 3],
            seeds: vec![],
        };
        let huge = |mut bytes: Vec<u8>| {
            bytes.push(0xFD); // bincode's varint marker for a u64 that follows
            bytes.extend(u64::MAX.to_le_bytes());
            bytes
        };
        let mut bytes = meta.encode();
        assert_eq!(
            bytes.pop(),
            Some(0),
            "the empty seed list's length ends the record"
        );
        assert!(GameMeta::decode(&huge(bytes)).is_err());

        let mut marked = meta.encode();
        marked.push(1); // `rolled_back: Some(..)`, its string's length next
        let err = GameMarks::decode(&huge(marked)).unwrap_err();
        assert!(matches!(err, MetaError::Marks(_)), "{err}");
    }

    /// The chain itself is tested in `protocol::chain`; here, that the store's records are read
    /// through it, with each envelope's hash kept for the head at any version.
    #[test]
    fn a_stored_log_verifies_with_the_hash_of_every_envelope() {
        let log = sample_log(4);
        let verified = verify(&log).unwrap();
        assert_eq!(verified.entries.len(), 4);
        assert_eq!(verified.hashes[1], LogHash::of(&log[1].1));
        assert_eq!(verified.head(), LogHash::of(&log[3].1));
        let mut dropped = log.clone();
        dropped.remove(1);
        assert_eq!(verify(&dropped).unwrap_err().seq, 2);
    }

    #[test]
    fn metadata_of_format_one_is_read_and_others_refused() {
        #[derive(Serialize)]
        struct V1 {
            format: u16,
            token_digests: [[u8; 32]; 3],
        }
        let old = bincode::serde::encode_to_vec(
            V1 {
                format: 1,
                token_digests: [[1; 32], [2; 32], [3; 32]],
            },
            bincode::config::standard(),
        )
        .unwrap();
        let meta = GameMeta::decode(&old).unwrap();
        assert_eq!(meta.token_digests[2], [3; 32]);
        assert!(meta.seeds.is_empty());
        assert_eq!(meta.format, META_FORMAT);

        let now = GameMeta {
            format: META_FORMAT,
            token_digests: [[4; 32]; 3],
            seeds: vec![[5; 32], [6; 32]],
        };
        assert_eq!(GameMeta::decode(&now.encode()).unwrap(), now);

        // Marks follow the metadata: read back, and invisible to a reader of the metadata.
        let marks = GameMarks {
            rolled_back: Some("events 5..=7 are missing".into()),
        };
        let marked = now.encode_marked(&marks);
        assert_eq!(GameMeta::decode(&marked).unwrap(), now);
        assert_eq!(GameMarks::decode(&marked).unwrap(), marks);
        assert_eq!(
            GameMarks::decode(&now.encode()).unwrap(),
            GameMarks::default()
        );
        assert_eq!(now.encode_marked(&GameMarks::default()), now.encode());
        assert_eq!(GameMarks::decode(&old).unwrap(), GameMarks::default());
        let mut junk = marked.clone();
        junk.push(0);
        assert!(GameMarks::decode(&junk).is_err());

        let mut future = now.encode();
        future[0] = 9;
        let err = GameMeta::decode(&future).unwrap_err();
        assert_eq!(err, MetaError::Format(9));
    }

    #[test]
    fn game_ids_round_trip_and_junk_is_refused() {
        let key = [0xab; 16];
        assert_eq!(game_key(&game_id(&key)), Some(key));
        assert_eq!(game_key(&game_id(&key).to_uppercase()), Some(key));
        assert_eq!(game_key(&format!("{}+1", &game_id(&key)[..30])), None);
        assert_eq!(game_key("xyz"), None);
        assert_eq!(game_key(&"g".repeat(32)), None);
    }
}

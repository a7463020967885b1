//! The stored form of a game: each event in a versioned envelope that carries its sequence
//! and the hash of the envelope before it, so any edit, drop, reorder or truncation in the
//! middle of a log is caught when the log is read back.

use crate::store::GameKey;
use protocol::Event;
use serde::{Deserialize, Serialize};

/// Version of the envelope layout. Bumped on any change; a reader refuses versions it does
/// not know instead of misreading them.
pub const ENVELOPE_FORMAT: u16 = 1;

/// Version of the game metadata layout.
pub const META_FORMAT: u16 = 1;

/// The chain's starting point: the `prev` of a game's first event.
pub const GENESIS: [u8; 32] = [0; 32];

#[derive(Serialize, Deserialize)]
struct Envelope {
    format: u16,
    seq: u64,
    prev: [u8; 32],
    event: Event,
}

/// Borrowing twin of [`Envelope`] so encoding does not clone the event.
#[derive(Serialize)]
struct EnvelopeRef<'a> {
    format: u16,
    seq: u64,
    prev: [u8; 32],
    event: &'a Event,
}

/// Encodes one event for the store; returns the bytes and their hash (the next event's `prev`).
pub fn encode(seq: u64, prev: [u8; 32], event: &Event) -> (Vec<u8>, [u8; 32]) {
    let bytes = bincode::serde::encode_to_vec(
        EnvelopeRef {
            format: ENVELOPE_FORMAT,
            seq,
            prev,
            event,
        },
        bincode::config::standard(),
    )
    .expect("events always encode");
    let hash = *blake3::hash(&bytes).as_bytes();
    (bytes, hash)
}

/// Why a stored log cannot be served, naming the first bad event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("event {seq}: {why}")]
pub struct LogError {
    pub seq: u64,
    pub why: String,
}

/// A log read back and checked: its events in order and the hash of the last envelope.
#[derive(Debug)]
pub struct VerifiedLog {
    pub events: Vec<Event>,
    pub head: [u8; 32],
}

/// Decodes and checks a stored log: contiguous sequences from 1, known envelope format, each
/// envelope's `prev` equal to the hash of the one before, and every event decodable.
pub fn verify(records: &[(u64, Vec<u8>)]) -> Result<VerifiedLog, LogError> {
    let mut events = Vec::with_capacity(records.len());
    let mut prev = GENESIS;
    for (i, (seq, bytes)) in records.iter().enumerate() {
        let expected = i as u64 + 1;
        let err = |why: String| LogError { seq: *seq, why };
        if *seq != expected {
            return Err(LogError {
                seq: expected,
                why: format!("missing; the log jumps to {seq}"),
            });
        }
        let (envelope, read): (Envelope, usize) =
            bincode::serde::decode_from_slice(bytes, bincode::config::standard())
                .map_err(|e| err(format!("cannot be decoded ({e})")))?;
        if read != bytes.len() {
            return Err(err("has trailing bytes".into()));
        }
        if envelope.format != ENVELOPE_FORMAT {
            return Err(err(format!(
                "envelope format {} is not one this server reads ({ENVELOPE_FORMAT})",
                envelope.format
            )));
        }
        if envelope.seq != *seq {
            return Err(err(format!(
                "is stored under {seq} but says it is {}",
                envelope.seq
            )));
        }
        if envelope.prev != prev {
            return Err(err(
                "does not follow the event before it (hash chain broken)".into(),
            ));
        }
        prev = *blake3::hash(bytes).as_bytes();
        events.push(envelope.event);
    }
    Ok(VerifiedLog { events, head: prev })
}

/// What the server keeps about a game besides its events: digests of its tokens. The tokens
/// themselves are never stored, so a copy of the data directory grants no seat at any game.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct GameMeta {
    pub format: u16,
    /// blake3 digests of side A's, side B's and the spectator token.
    pub token_digests: [[u8; 32]; 3],
}

impl GameMeta {
    pub fn encode(&self) -> Vec<u8> {
        bincode::serde::encode_to_vec(self, bincode::config::standard())
            .expect("metadata always encodes")
    }

    pub fn decode(bytes: &[u8]) -> Result<GameMeta, String> {
        let (meta, _): (GameMeta, usize) =
            bincode::serde::decode_from_slice(bytes, bincode::config::standard())
                .map_err(|e| format!("game metadata cannot be decoded ({e})"))?;
        if meta.format != META_FORMAT {
            return Err(format!("game metadata format {} is unknown", meta.format));
        }
        Ok(meta)
    }
}

pub fn game_id(key: &GameKey) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

/// Reads a game id typed by a person; `None` for anything that is not 32 hex digits.
pub fn game_key(id: &str) -> Option<GameKey> {
    if id.len() != 32 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let mut key = [0u8; 16];
    for (i, byte) in key.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&id[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::phase::Clock;
    use protocol::Side;

    fn sample_log(n: u64) -> Vec<(u64, Vec<u8>)> {
        let mut prev = GENESIS;
        (1..=n)
            .map(|seq| {
                let event = Event::GameEnded {
                    turns_played: seq as u16,
                };
                let event = if seq % 2 == 0 {
                    Event::StepEnded {
                        by: Side::A,
                        ended: Clock::START,
                        next: Clock::START,
                    }
                } else {
                    event
                };
                let (bytes, hash) = encode(seq, prev, &event);
                prev = hash;
                (seq, bytes)
            })
            .collect()
    }

    #[test]
    fn a_clean_log_verifies() {
        let log = sample_log(5);
        let verified = verify(&log).unwrap();
        assert_eq!(verified.events.len(), 5);
        assert_eq!(verified.head, *blake3::hash(&log[4].1).as_bytes());
    }

    #[test]
    fn every_flipped_byte_is_caught() {
        let log = sample_log(3);
        for i in 0..log.len() {
            for at in 0..log[i].1.len() {
                let mut bad = log.clone();
                bad[i].1[at] ^= 0x01;
                // The last envelope has no successor to vouch for it; a flip there is caught
                // only if it breaks the decoding or its own fields.
                if i + 1 < log.len() {
                    assert!(verify(&bad).is_err(), "flip at event {} byte {at}", i + 1);
                }
            }
        }
    }

    #[test]
    fn dropped_and_swapped_events_are_named() {
        let log = sample_log(4);
        let mut dropped = log.clone();
        dropped.remove(1);
        assert_eq!(verify(&dropped).unwrap_err().seq, 2);

        let mut swapped = log.clone();
        let (a, b) = (swapped[1].1.clone(), swapped[2].1.clone());
        swapped[1].1 = b;
        swapped[2].1 = a;
        assert_eq!(verify(&swapped).unwrap_err().seq, 2);
    }

    #[test]
    fn game_ids_round_trip_and_junk_is_refused() {
        let key = [0xab; 16];
        assert_eq!(game_key(&game_id(&key)), Some(key));
        assert_eq!(game_key("xyz"), None);
        assert_eq!(game_key(&"g".repeat(32)), None);
    }
}

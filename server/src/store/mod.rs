//! Where events live. The [`EventStore`] trait is the whole contract between the rules and the
//! disk: append-only per game, sequence-checked, durable when `append` returns. The sled store
//! is the default; the memory store serves tests and benchmarks that must not touch a disk.
//!
//! Stores hold opaque bytes; what the bytes mean (envelope, hash chain) is [`crate::log`]'s
//! business, so every store is verified by the same code.

mod memory;
mod sled_store;

pub use memory::MemoryStore;
pub use sled_store::SledStore;

/// A game's key in the store: 16 random bytes, shown to people as 32 hex digits.
pub type GameKey = [u8; 16];

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The log's last sequence was not the one the writer expected: someone else wrote, or
    /// the writer's idea of the log is wrong. Nothing was written.
    #[error("sequence mismatch: expected to append after {expected}, but the log ends at {found}")]
    SequenceMismatch { expected: u64, found: u64 },
    #[error("storage failed: {0}")]
    Io(String),
}

pub trait EventStore: Send + Sync + 'static {
    /// Appends `records` to `game`'s log, the first getting sequence `first_seq`. Refused
    /// (with nothing written) unless the log currently ends at `first_seq - 1`. All or none
    /// of the records are written, and they are durable when this returns `Ok`.
    fn append(&self, game: &GameKey, first_seq: u64, records: &[Vec<u8>])
        -> Result<(), StoreError>;

    /// Every record of `game`'s log with its sequence, in order.
    fn load(&self, game: &GameKey) -> Result<Vec<(u64, Vec<u8>)>, StoreError>;

    /// Records game metadata (token digests), durably, before the game's first event.
    fn put_meta(&self, game: &GameKey, meta: &[u8]) -> Result<(), StoreError>;

    /// Every game that has metadata, with it.
    fn games(&self) -> Result<Vec<(GameKey, Vec<u8>)>, StoreError>;
}

/// The sequence number as stored in a key: big-endian, so keys sort in log order.
pub(crate) fn event_key(game: &GameKey, seq: u64) -> [u8; 24] {
    let mut key = [0u8; 24];
    key[..16].copy_from_slice(game);
    key[16..].copy_from_slice(&seq.to_be_bytes());
    key
}

#[cfg(test)]
pub(crate) mod contract {
    //! The behaviour every store must show, run against each implementation.
    use super::*;

    pub fn appends_in_sequence(store: &dyn EventStore) {
        let g = [7u8; 16];
        store.put_meta(&g, b"meta").unwrap();
        store
            .append(&g, 1, &[b"one".to_vec(), b"two".to_vec()])
            .unwrap();
        store.append(&g, 3, &[b"three".to_vec()]).unwrap();
        let log = store.load(&g).unwrap();
        assert_eq!(
            log,
            vec![
                (1, b"one".to_vec()),
                (2, b"two".to_vec()),
                (3, b"three".to_vec())
            ]
        );
        assert_eq!(store.games().unwrap(), vec![(g, b"meta".to_vec())]);
    }

    pub fn refuses_wrong_sequence(store: &dyn EventStore) {
        let g = [9u8; 16];
        store.append(&g, 1, &[b"one".to_vec()]).unwrap();
        for wrong in [1, 3, 0] {
            let err = store.append(&g, wrong, &[b"x".to_vec()]).unwrap_err();
            assert!(
                matches!(err, StoreError::SequenceMismatch { found: 1, .. }),
                "{err}"
            );
        }
        assert_eq!(store.load(&g).unwrap().len(), 1);
    }

    pub fn keeps_games_apart(store: &dyn EventStore) {
        let (a, b) = ([1u8; 16], [2u8; 16]);
        store.append(&a, 1, &[b"a1".to_vec()]).unwrap();
        store.append(&b, 1, &[b"b1".to_vec()]).unwrap();
        store.append(&a, 2, &[b"a2".to_vec()]).unwrap();
        assert_eq!(store.load(&a).unwrap().len(), 2);
        assert_eq!(store.load(&b).unwrap(), vec![(1, b"b1".to_vec())]);
        assert!(store.load(&[3u8; 16]).unwrap().is_empty());
    }
}

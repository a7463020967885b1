//! The default store: sled, in a data directory. Two trees: `events` (key = game key ‖
//! big-endian sequence, value = the encoded envelope) and `games` (key = game key, value =
//! metadata). Every append is one atomic batch followed by a flush, so an acknowledged event
//! is on disk and a crash never leaves half of a command's events.

use super::{event_key, EventStore, GameKey, StoreError};
use std::path::Path;

pub struct SledStore {
    db: sled::Db,
    events: sled::Tree,
    games: sled::Tree,
}

fn io(e: sled::Error) -> StoreError {
    StoreError::Io(e.to_string())
}

impl SledStore {
    /// Opens (or creates) the store in `dir`.
    pub fn open(dir: &Path) -> Result<SledStore, StoreError> {
        let db = sled::Config::new().path(dir).open().map_err(io)?;
        let events = db.open_tree("events").map_err(io)?;
        let games = db.open_tree("games").map_err(io)?;
        Ok(SledStore { db, events, games })
    }

    /// The last sequence stored for `game`, 0 for none.
    fn last_seq(&self, game: &GameKey) -> Result<u64, StoreError> {
        match self.events.scan_prefix(game).next_back() {
            None => Ok(0),
            Some(entry) => {
                let (key, _) = entry.map_err(io)?;
                let bytes: [u8; 8] = key[16..]
                    .try_into()
                    .map_err(|_| StoreError::Io("an event key is not 24 bytes".into()))?;
                Ok(u64::from_be_bytes(bytes))
            }
        }
    }
}

impl EventStore for SledStore {
    /// The check of the last sequence and the write are not one transaction: it is the game's
    /// single writer task that makes them safe, and the check catches a writer that is wrong.
    fn append(
        &self,
        game: &GameKey,
        first_seq: u64,
        records: &[Vec<u8>],
    ) -> Result<(), StoreError> {
        let last = self.last_seq(game)?;
        if first_seq != last + 1 {
            return Err(StoreError::SequenceMismatch {
                expected: first_seq.saturating_sub(1),
                found: last,
            });
        }
        let mut batch = sled::Batch::default();
        for (i, record) in records.iter().enumerate() {
            batch.insert(
                &event_key(game, first_seq + i as u64)[..],
                record.as_slice(),
            );
        }
        self.events.apply_batch(batch).map_err(io)?;
        self.db.flush().map_err(io)?;
        Ok(())
    }

    fn load(&self, game: &GameKey) -> Result<Vec<(u64, Vec<u8>)>, StoreError> {
        self.events
            .scan_prefix(game)
            .map(|entry| {
                let (key, value) = entry.map_err(io)?;
                let seq: [u8; 8] = key[16..]
                    .try_into()
                    .map_err(|_| StoreError::Io("an event key is not 24 bytes".into()))?;
                Ok((u64::from_be_bytes(seq), value.to_vec()))
            })
            .collect()
    }

    fn put_meta(&self, game: &GameKey, meta: &[u8]) -> Result<(), StoreError> {
        self.games.insert(game, meta).map_err(io)?;
        self.db.flush().map_err(io)?;
        Ok(())
    }

    fn games(&self) -> Result<Vec<(GameKey, Vec<u8>)>, StoreError> {
        self.games
            .iter()
            .map(|entry| {
                let (key, value) = entry.map_err(io)?;
                let key: GameKey = key
                    .as_ref()
                    .try_into()
                    .map_err(|_| StoreError::Io("a game key is not 16 bytes".into()))?;
                Ok((key, value.to_vec()))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::contract;

    #[test]
    fn contract() {
        for check in [
            contract::appends_in_sequence as fn(&dyn EventStore),
            contract::refuses_wrong_sequence,
            contract::keeps_games_apart,
        ] {
            let dir = tempfile::tempdir().unwrap();
            check(&SledStore::open(dir.path()).unwrap());
        }
    }

    #[test]
    fn survives_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let g = [5u8; 16];
        {
            let store = SledStore::open(dir.path()).unwrap();
            store.put_meta(&g, b"m").unwrap();
            store.append(&g, 1, &[b"e1".to_vec()]).unwrap();
        }
        let store = SledStore::open(dir.path()).unwrap();
        assert_eq!(store.load(&g).unwrap(), vec![(1, b"e1".to_vec())]);
        assert_eq!(store.games().unwrap().len(), 1);
    }
}

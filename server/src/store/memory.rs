//! An in-memory store for tests and benchmarks: the same contract as sled, nothing on disk.
//! Writes are performed in the caller's thread, so every [`Durable`] it returns is settled.

use super::{Durable, EventStore, GameKey, NotifyRecords, NotifyWrites, StoreError};
use std::collections::BTreeMap;
use std::sync::Mutex;

#[derive(Default)]
pub struct MemoryStore {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    logs: BTreeMap<GameKey, Vec<Vec<u8>>>,
    meta: BTreeMap<GameKey, Vec<u8>>,
    notify: BTreeMap<Vec<u8>, Vec<u8>>,
}

impl MemoryStore {
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }
}

impl EventStore for MemoryStore {
    /// Under one lock: no reader sees the records without their notices.
    fn append_with_notify(
        &self,
        game: &GameKey,
        first_seq: u64,
        records: Vec<Vec<u8>>,
        notify: NotifyWrites,
    ) -> Durable {
        let mut inner = self.inner.lock().expect("store lock");
        let log = inner.logs.entry(*game).or_default();
        let last = log.len() as u64;
        if first_seq != last + 1 {
            return Durable::settled(Err(StoreError::SequenceMismatch {
                expected: first_seq.saturating_sub(1),
                found: last,
            }));
        }
        log.extend(records);
        for (key, value) in notify {
            match value {
                Some(value) => inner.notify.insert(key, value),
                None => inner.notify.remove(&key),
            };
        }
        Durable::settled(Ok(()))
    }

    fn load(&self, game: &GameKey) -> Result<Vec<(u64, Vec<u8>)>, StoreError> {
        let inner = self.inner.lock().expect("store lock");
        Ok(inner
            .logs
            .get(game)
            .map(|log| {
                log.iter()
                    .enumerate()
                    .map(|(i, r)| (i as u64 + 1, r.clone()))
                    .collect()
            })
            .unwrap_or_default())
    }

    fn put_meta(&self, game: &GameKey, meta: Vec<u8>) -> Durable {
        let mut inner = self.inner.lock().expect("store lock");
        inner.meta.insert(*game, meta);
        Durable::settled(Ok(()))
    }

    fn games(&self) -> Result<Vec<(GameKey, Vec<u8>)>, StoreError> {
        let inner = self.inner.lock().expect("store lock");
        Ok(inner.meta.iter().map(|(k, v)| (*k, v.clone())).collect())
    }

    fn put_notify(&self, key: Vec<u8>, value: Option<Vec<u8>>) -> Durable {
        let mut inner = self.inner.lock().expect("store lock");
        match value {
            Some(value) => inner.notify.insert(key, value),
            None => inner.notify.remove(&key),
        };
        Durable::settled(Ok(()))
    }

    fn notify_records(&self) -> Result<NotifyRecords, StoreError> {
        let inner = self.inner.lock().expect("store lock");
        Ok(inner
            .notify
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::contract;

    #[test]
    fn contract() {
        contract::all(|| Box::new(MemoryStore::new()));
    }
}

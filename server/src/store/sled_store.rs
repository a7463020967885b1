//! The default store: sled, in a data directory. Two trees: `events` (key = game key ‖
//! big-endian sequence, value = the encoded envelope) and `games` (key = game key, value =
//! metadata).
//!
//! Group commit: one committer thread owns every write. Callers hand their writes to its queue
//! and wait on a [`Durable`]; the committer takes everything queued, checks each append's
//! sequence, writes them as one atomic sled batch, flushes once, and only then settles each
//! write. A flush costs the same for one event as for hundreds, so while one runs, the writes
//! of every other game pile up and share the next. An acknowledged event is on disk, and a
//! crash never leaves half of a batch — so never half of a command's events.

use super::{event_key, Durable, EventStore, GameKey, StoreError};
use std::collections::HashMap;
use std::path::Path;
use std::sync::mpsc;
use std::thread;
use tokio::sync::oneshot;

pub struct SledStore {
    events: sled::Tree,
    games: sled::Tree,
    /// The committer's queue. Unbounded because its callers bound it: a game task hands over
    /// one command's append and waits for it, and a creation waits for its own two writes, so
    /// at most `games + connections` writes are ever queued. `None` only while dropping.
    queue: Option<mpsc::Sender<Write>>,
    committer: Option<thread::JoinHandle<()>>,
}

type Settle = oneshot::Sender<Result<(), StoreError>>;

/// A write on its way to the committer.
enum Write {
    Append {
        game: GameKey,
        first_seq: u64,
        records: Vec<Vec<u8>>,
        settle: Settle,
    },
    Meta {
        game: GameKey,
        meta: Vec<u8>,
        settle: Settle,
    },
}

fn io(e: sled::Error) -> StoreError {
    StoreError::Io(e.to_string())
}

/// The last sequence stored for `game` in `events`, 0 for none.
fn last_seq(events: &sled::Tree, game: &GameKey) -> Result<u64, StoreError> {
    match events.scan_prefix(game).next_back() {
        None => Ok(0),
        Some(entry) => {
            let (key, _) = entry.map_err(io)?;
            seq_of(&key)
        }
    }
}

fn seq_of(key: &[u8]) -> Result<u64, StoreError> {
    let bytes: [u8; 8] = key
        .get(16..)
        .and_then(|s| s.try_into().ok())
        .ok_or_else(|| StoreError::Io("an event key is not 24 bytes".into()))?;
    Ok(u64::from_be_bytes(bytes))
}

impl SledStore {
    /// Opens (or creates) the store in `dir` and starts its committer.
    pub fn open(dir: &Path) -> Result<SledStore, StoreError> {
        // No background flusher: the committer flushes after every group, and a flusher
        // thread would keep the database (and its file lock) alive for up to its period after
        // the store is dropped, so the directory could not be reopened at once.
        let db = sled::Config::new()
            .path(dir)
            .flush_every_ms(None)
            .open()
            .map_err(io)?;
        let events = db.open_tree("events").map_err(io)?;
        let games = db.open_tree("games").map_err(io)?;
        let (queue, writes) = mpsc::channel();
        let committer = Committer {
            db,
            events: events.clone(),
            games: games.clone(),
            last: HashMap::new(),
            failed: None,
        };
        let committer = thread::Builder::new()
            .name("sled-committer".into())
            .spawn(move || committer.run(writes))
            .map_err(|e| StoreError::Io(format!("cannot start the committer thread: {e}")))?;
        Ok(SledStore {
            events,
            games,
            queue: Some(queue),
            committer: Some(committer),
        })
    }

    fn hand_over(&self, write: impl FnOnce(Settle) -> Write) -> Durable {
        let (settle, durable) = Durable::pending();
        if let Some(queue) = &self.queue {
            // A send fails only if the committer is gone; the write is then dropped unsettled
            // and the Durable resolves to an error saying so.
            let _ = queue.send(write(settle));
        }
        durable
    }
}

impl Drop for SledStore {
    /// Closes the queue and waits for the committer to settle what is queued and let go of
    /// the database, so the same directory can be opened again as soon as this returns.
    fn drop(&mut self) {
        self.queue = None;
        if let Some(committer) = self.committer.take() {
            let _ = committer.join();
        }
    }
}

impl EventStore for SledStore {
    fn append(&self, game: &GameKey, first_seq: u64, records: Vec<Vec<u8>>) -> Durable {
        self.hand_over(|settle| Write::Append {
            game: *game,
            first_seq,
            records,
            settle,
        })
    }

    fn load(&self, game: &GameKey) -> Result<Vec<(u64, Vec<u8>)>, StoreError> {
        self.events
            .scan_prefix(game)
            .map(|entry| {
                let (key, value) = entry.map_err(io)?;
                Ok((seq_of(&key)?, value.to_vec()))
            })
            .collect()
    }

    fn load_range(
        &self,
        game: &GameKey,
        from: u64,
        bytes_max: usize,
    ) -> Result<Vec<(u64, Vec<u8>)>, StoreError> {
        let mut records = vec![];
        let mut bytes = 0;
        let start = event_key(game, from);
        let end = event_key(game, u64::MAX);
        for entry in self.events.range(start..=end) {
            let (key, value) = entry.map_err(io)?;
            if !records.is_empty() && bytes + value.len() > bytes_max {
                break;
            }
            bytes += value.len();
            records.push((seq_of(&key)?, value.to_vec()));
        }
        Ok(records)
    }

    fn put_meta(&self, game: &GameKey, meta: Vec<u8>) -> Durable {
        self.hand_over(|settle| Write::Meta {
            game: *game,
            meta,
            settle,
        })
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

/// The one writer of the database.
struct Committer {
    db: sled::Db,
    events: sled::Tree,
    games: sled::Tree,
    /// Each game's last sequence, as this committer wrote or first read it: the sequence
    /// check without a tree scan per append. Only the committer writes, so it cannot go stale.
    last: HashMap<GameKey, u64>,
    /// Why a write or flush failed, once one has. sled's memory and disk may then disagree
    /// about what is written, so every later write is refused instead of guessed at; a
    /// restart recovers from what is on disk.
    failed: Option<String>,
}

impl Committer {
    /// Commits groups until every sender is gone: each group is everything queued by the time
    /// the previous flush ended.
    fn run(mut self, writes: mpsc::Receiver<Write>) {
        while let Ok(first) = writes.recv() {
            let mut group = vec![first];
            group.extend(writes.try_iter());
            self.commit(group);
        }
    }

    fn commit(&mut self, group: Vec<Write>) {
        if let Some(why) = &self.failed {
            let refusal = StoreError::Io(format!(
                "the store failed earlier ({why}) and takes no writes until the server restarts"
            ));
            for write in group {
                let (Write::Append { settle, .. } | Write::Meta { settle, .. }) = write;
                let _ = settle.send(Err(refusal.clone()));
            }
            return;
        }
        let (mut events, mut games) = (sled::Batch::default(), sled::Batch::default());
        let (mut any_events, mut any_games) = (false, false);
        let mut waiting = Vec::with_capacity(group.len());
        for write in group {
            match write {
                Write::Append {
                    game,
                    first_seq,
                    records,
                    settle,
                } => match self.check(&game, first_seq) {
                    Ok(()) => {
                        for (i, record) in records.iter().enumerate() {
                            events.insert(
                                &event_key(&game, first_seq + i as u64)[..],
                                record.as_slice(),
                            );
                        }
                        any_events |= !records.is_empty();
                        self.last.insert(game, first_seq - 1 + records.len() as u64);
                        waiting.push(settle);
                    }
                    Err(refused) => {
                        let _ = settle.send(Err(refused));
                    }
                },
                Write::Meta { game, meta, settle } => {
                    games.insert(&game[..], meta);
                    any_games = true;
                    waiting.push(settle);
                }
            }
        }
        if waiting.is_empty() {
            return;
        }
        let flushing = std::time::Instant::now();
        let written = (|| {
            if any_games {
                self.games.apply_batch(games)?;
            }
            if any_events {
                self.events.apply_batch(events)?;
            }
            self.db.flush().map(|_| ())
        })();
        crate::metrics::METRICS.store_flushed(waiting.len(), flushing.elapsed());
        let result = written.map_err(|e| {
            let why = e.to_string();
            self.failed = Some(why.clone());
            self.last.clear();
            StoreError::Io(why)
        });
        for settle in waiting {
            let _ = settle.send(result.clone());
        }
    }

    /// Refuses an append unless `game`'s log ends just before `first_seq`.
    fn check(&mut self, game: &GameKey, first_seq: u64) -> Result<(), StoreError> {
        let last = match self.last.get(game) {
            Some(last) => *last,
            None => last_seq(&self.events, game)?,
        };
        if first_seq != last + 1 {
            return Err(StoreError::SequenceMismatch {
                expected: first_seq.saturating_sub(1),
                found: last,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::contract;

    #[test]
    fn contract() {
        let dirs = std::cell::RefCell::new(vec![]);
        contract::all(|| {
            let dir = tempfile::tempdir().unwrap();
            let store = SledStore::open(dir.path()).unwrap();
            dirs.borrow_mut().push(dir);
            Box::new(store)
        });
    }

    #[test]
    fn survives_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let g = [5u8; 16];
        {
            let store = SledStore::open(dir.path()).unwrap();
            store.put_meta(&g, b"m".to_vec()).wait().unwrap();
            store.append(&g, 1, vec![b"e1".to_vec()]).wait().unwrap();
        }
        let store = SledStore::open(dir.path()).unwrap();
        assert_eq!(store.load(&g).unwrap(), vec![(1, b"e1".to_vec())]);
        assert_eq!(store.games().unwrap().len(), 1);
        // The sequence check reads the reopened log, not an empty cache.
        assert!(matches!(
            store.append(&g, 1, vec![b"again".to_vec()]).wait(),
            Err(StoreError::SequenceMismatch { found: 1, .. })
        ));
    }
}

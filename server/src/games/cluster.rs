//! Several server nodes in front of one NATS store: which node owns a game's writer, and how a
//! connection on any other node reaches it.
//!
//! **Ownership.** A game's writer runs on the node holding its lease: a key (the game id) in
//! the JetStream KV bucket [`LEASE_BUCKET`], whose value names the node and the websocket
//! address other nodes reach it at. The bucket's `max_age` is the lease's TTL: the holder
//! renews (a compare-and-set on the key's revision) every third of it, and a lease not renewed
//! disappears, after which the first node asked for the game creates the key again and loads
//! the game from the log. A node that fails to renew (its revision was taken, or the cluster
//! did not answer within the TTL) gives the game up: the game task tells its viewers to
//! reconnect and ends.
//!
//! **Fencing.** A lease is a promise, not a lock: a paused node may still believe it owns a
//! game after its lease lapsed and another node took over. What makes that harmless is the
//! store: every append carries the expected last subject sequence, so of two writers only the
//! first to append after a load is stored; the other's append is refused, and its game task
//! drops the game before anything it decided was acknowledged or broadcast (`game.rs`).
//!
//! **Forwarding.** A `join` that reaches a node not owning the game is proxied: the node opens
//! a websocket to the owner, sends the join, and from then on relays frames both ways. Events
//! therefore reach every viewer from the owner's game task, only after the store's ack; no
//! node reads a game's subject directly. When the owner goes away the proxied connection is
//! closed with `moved`, and the client reconnects (`since`), to this node or another: the
//! lease has lapsed by then or soon will, and the join waits for it.

use crate::store::envelope;
use crate::store::nats::{self, Connected};
use crate::store::GameKey;
use async_nats::jetstream::kv;
use futures_util::{SinkExt, StreamExt};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;
use tokio::sync::mpsc;
use tracing::{info, warn};

/// The KV bucket of game leases.
pub const LEASE_BUCKET: &str = "asl-owners";
/// How long a lease lasts without renewal, by default: the longest a game waits for a new
/// owner after its node dies (plus the reconnect of its clients), within the 30 s a takeover
/// may take.
pub const LEASE_TTL: Duration = Duration::from_secs(10);
/// The shortest TTL accepted: renewal runs every third of it, and each renewal is a round
/// trip through the cluster's Raft group.
pub const LEASE_TTL_MIN: Duration = Duration::from_secs(2);
/// How long a join waits for a game's owner to be reachable, or its lease to lapse, beyond
/// the TTL itself.
pub const JOIN_WAIT_EXTRA: Duration = Duration::from_secs(10);
/// How long connecting to the owner node may take.
const PROXY_CONNECT_MAX: Duration = Duration::from_secs(5);

/// What a lease says: who owns the game, and where to reach it.
#[derive(serde::Serialize, serde::Deserialize, Debug, Clone, PartialEq, Eq)]
struct Lease {
    node: String,
    address: String,
}

/// Where a game is served from, for this node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// Here. `fresh`: this node has just taken the lease, so anything it held of the game
    /// before is stale and must be loaded again from the log.
    Local { fresh: bool },
    /// On node `node`, reached at `address` (`ws://HOST:PORT`).
    Remote { node: String, address: String },
}

/// A lease this node holds, with the task renewing it.
struct Held {
    renewing: tokio::task::JoinHandle<()>,
}

pub struct Cluster {
    pub node_id: String,
    /// Where other nodes reach this one (`ws://HOST:PORT`); set once the listener is bound.
    address: OnceLock<String>,
    leases: kv::Store,
    ttl: Duration,
    held: Mutex<HashMap<GameKey, Held>>,
    /// Games whose lease this node lost, for the registry to stop.
    lost: mpsc::UnboundedSender<GameKey>,
    lost_receiver: Mutex<Option<mpsc::UnboundedReceiver<GameKey>>>,
    runtime: tokio::runtime::Handle,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("node_id", &self.node_id)
            .field("address", &self.address.get())
            .field("ttl", &self.ttl)
            .finish()
    }
}

/// Why the cluster's leases or its shared signing key cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error("a lease TTL of {ttl:?} is below the minimum {minimum:?}")]
    TtlTooShort { ttl: Duration, minimum: Duration },
    #[error(transparent)]
    Nats(#[from] nats::NatsError),
    /// The thread doing `what` panicked.
    #[error("{what} panicked")]
    Panicked { what: &'static str },
    #[error("cannot take the new game's lease: {0}")]
    Claim(String),
    #[error("cannot read the game's lease: {0}")]
    LeaseUnread(String),
    #[error("the game's lease is not readable: {0}")]
    LeaseGarbled(String),
    #[error("{KEY_BUCKET}/{KEY_NAME} is not a signing key (32 bytes)")]
    NotAKey,
}

/// Why the owner node of a game could not be joined through.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    #[error("{url} did not answer within {waited:?}")]
    NoAnswer { url: String, waited: Duration },
    #[error("cannot reach {url}: {why}")]
    Unreachable { url: String, why: String },
    #[error("cannot send the join to {url}: {why}")]
    JoinNotSent { url: String, why: String },
}

impl Cluster {
    /// Opens the lease bucket (created if missing, with `ttl` as its `max_age`). Blocks: call
    /// it before serving. `runtime`: where the renewals run (the store's).
    pub fn open(
        connected: &Connected,
        runtime: tokio::runtime::Handle,
        node_id: String,
        ttl: Duration,
    ) -> Result<Cluster, ClusterError> {
        if ttl < LEASE_TTL_MIN {
            return Err(ClusterError::TtlTooShort {
                ttl,
                minimum: LEASE_TTL_MIN,
            });
        }
        let leases = std::thread::scope(|scope| {
            scope
                .spawn(|| runtime.block_on(nats::bucket(connected, LEASE_BUCKET, ttl)))
                .join()
                .map_err(|_| ClusterError::Panicked {
                    what: "opening the lease bucket",
                })
        })??;
        let (lost, lost_receiver) = mpsc::unbounded_channel();
        Ok(Cluster {
            node_id,
            address: OnceLock::new(),
            leases,
            ttl,
            held: Mutex::new(HashMap::new()),
            lost,
            lost_receiver: Mutex::new(Some(lost_receiver)),
            runtime,
        })
    }

    /// Where other nodes reach this one; the first call wins.
    pub fn set_address(&self, address: String) {
        let _ = self.address.set(address);
    }

    fn lease(&self) -> Lease {
        Lease {
            node: self.node_id.clone(),
            address: self.address.get().cloned().unwrap_or_default(),
        }
    }

    fn encoded(&self) -> bytes::Bytes {
        serde_json::to_vec(&self.lease())
            .expect("a lease encodes")
            .into()
    }

    /// The games whose lease this node lost, once (the registry takes it).
    pub fn take_lost(&self) -> Option<mpsc::UnboundedReceiver<GameKey>> {
        self.lost_receiver.lock().expect("lost lock").take()
    }

    /// Whether this node holds `game`'s lease.
    pub fn holds(&self, game: &GameKey) -> bool {
        self.held.lock().expect("held lock").contains_key(game)
    }

    /// Takes the lease of a game this node has just created (no one else knows its id yet).
    pub async fn claim_new(&self, game: &GameKey) -> Result<(), ClusterError> {
        let id = envelope::game_id(game);
        let revision = self
            .leases
            .create(&id, self.encoded())
            .await
            .map_err(|e| ClusterError::Claim(e.to_string()))?;
        self.hold(*game, revision);
        Ok(())
    }

    /// Where `game` is served from: here if this node holds its lease or can take it (the
    /// lease lapsed, or was never taken since the cluster started), else the holder.
    pub async fn route(&self, game: &GameKey) -> Result<Route, ClusterError> {
        let id = envelope::game_id(game);
        let deadline = tokio::time::Instant::now() + self.join_wait();
        loop {
            if self.holds(game) {
                return Ok(Route::Local { fresh: false });
            }
            let entry = match self.leases.entry(&id).await {
                Ok(entry) => entry,
                // The bucket's leader being elected: its reads fail for a few seconds.
                Err(_) if tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(250)).await;
                    continue;
                }
                Err(e) => return Err(ClusterError::LeaseUnread(e.to_string())),
            };
            let taken = match entry {
                Some(entry) if entry.operation == kv::Operation::Put => {
                    let lease: Lease = serde_json::from_slice(&entry.value)
                        .map_err(|e| ClusterError::LeaseGarbled(e.to_string()))?;
                    if lease.node != self.node_id {
                        return Ok(Route::Remote {
                            node: lease.node,
                            address: lease.address,
                        });
                    }
                    // This node's own lease from before a restart: renew it as ours.
                    self.leases
                        .update(&id, self.encoded(), entry.revision)
                        .await
                        .map_err(|e| e.to_string())
                }
                _ => self
                    .leases
                    .create(&id, self.encoded())
                    .await
                    .map_err(|e| e.to_string()),
            };
            match taken {
                Ok(revision) => {
                    info!(game = %id, node = %self.node_id, "took the game's lease");
                    self.hold(*game, revision);
                    return Ok(Route::Local { fresh: true });
                }
                // Another node got there first: read again who.
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
    }

    /// How long a join may wait for an unreachable owner's lease to lapse.
    pub fn join_wait(&self) -> Duration {
        self.ttl + JOIN_WAIT_EXTRA
    }

    fn hold(self: &Cluster, game: GameKey, revision: u64) {
        let leases = self.leases.clone();
        let value = self.encoded();
        let ttl = self.ttl;
        let lost = self.lost.clone();
        let renewing = self.runtime.spawn(async move {
            let id = envelope::game_id(&game);
            let mut revision = revision;
            let mut renewed = tokio::time::Instant::now();
            loop {
                tokio::time::sleep(ttl / 3).await;
                match tokio::time::timeout(ttl / 3, leases.update(&id, value.clone(), revision))
                    .await
                {
                    Ok(Ok(next)) => {
                        revision = next;
                        renewed = tokio::time::Instant::now();
                    }
                    Ok(Err(e)) if e.kind() == kv::UpdateErrorKind::WrongLastRevision => {
                        warn!(game = %id, "the game's lease was taken by another node");
                        break;
                    }
                    failed => {
                        // Not answered (an election, a reconnect): keep trying while the lease
                        // may still stand. Past the TTL another node may hold it; the store's
                        // fencing keeps that safe even before this node notices.
                        if renewed.elapsed() >= ttl {
                            warn!(game = %id, ?failed, "the game's lease could not be renewed within its TTL");
                            break;
                        }
                    }
                }
            }
            let _ = lost.send(game);
        });
        if let Some(old) = self
            .held
            .lock()
            .expect("held lock")
            .insert(game, Held { renewing })
        {
            old.renewing.abort();
        }
    }

    /// Forgets a lost lease (the renewal has ended).
    pub fn forget(&self, game: &GameKey) {
        if let Some(held) = self.held.lock().expect("held lock").remove(game) {
            held.renewing.abort();
        }
    }

    /// Lets every lease go (at shutdown), so other nodes take the games at once.
    pub async fn release_all(&self) {
        let held: Vec<GameKey> = {
            let mut held = self.held.lock().expect("held lock");
            held.drain()
                .map(|(game, h)| {
                    h.renewing.abort();
                    game
                })
                .collect()
        };
        for game in held {
            let _ = self.leases.purge(envelope::game_id(&game)).await;
        }
    }
}

type Socket = tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>;
type Upstream =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Opens a websocket to the owner node at `address` and sends it `join`.
pub async fn connect_owner(
    address: &str,
    join: tokio_tungstenite::tungstenite::Message,
) -> Result<Upstream, ProxyError> {
    let url = format!("{address}{}", protocol::wire::WIRE_PATH);
    let config = crate::operations::config::websocket_config();
    let (mut upstream, _) = tokio::time::timeout(
        PROXY_CONNECT_MAX,
        tokio_tungstenite::connect_async_with_config(url.as_str(), Some(config), true),
    )
    .await
    .map_err(|_| ProxyError::NoAnswer {
        url: url.clone(),
        waited: PROXY_CONNECT_MAX,
    })?
    .map_err(|e| ProxyError::Unreachable {
        url: url.clone(),
        why: e.to_string(),
    })?;
    upstream
        .send(join)
        .await
        .map_err(|e| ProxyError::JoinNotSent {
            url: url.clone(),
            why: e.to_string(),
        })?;
    Ok(upstream)
}

/// How a relayed connection ended.
pub enum Relayed {
    /// The client closed (or its socket failed).
    Client,
    /// A send to the client waited its whole deadline: it is not reading, and nothing more
    /// (not even a close frame) is sent to it.
    NotReading,
    /// The owner closed or went away; the client must reconnect.
    Owner(String),
}

/// Relays frames both ways between the client and the owner until one side ends. Each send to
/// the client has `send_timeout`, as every send of a connection served here has: a client that
/// stops reading cannot hold the relay, nor the owner's frames it waits behind.
pub async fn relay(
    client: &mut Socket,
    upstream: &mut Upstream,
    idle: Duration,
    send_timeout: Duration,
) -> Relayed {
    use tokio_tungstenite::tungstenite::Message;
    loop {
        tokio::select! {
            from_client = tokio::time::timeout(idle, client.next()) => match from_client {
                Ok(Some(Ok(Message::Close(frame)))) => {
                    let _ = upstream.close(frame).await;
                    return Relayed::Client;
                }
                Ok(Some(Ok(message))) => {
                    if upstream.send(message).await.is_err() {
                        return Relayed::Owner("the owner node stopped answering".into());
                    }
                }
                _ => {
                    let _ = upstream.close(None).await;
                    return Relayed::Client;
                }
            },
            from_owner = upstream.next() => match from_owner {
                Some(Ok(Message::Close(frame))) => {
                    let why = frame.map(|f| f.reason.to_string()).unwrap_or_default();
                    return Relayed::Owner(format!("the owner node closed the connection ({why})"));
                }
                Some(Ok(message)) => match tokio::time::timeout(send_timeout, client.send(message)).await {
                    Ok(Ok(())) => {}
                    Ok(Err(_)) => {
                        let _ = upstream.close(None).await;
                        return Relayed::Client;
                    }
                    Err(_) => {
                        let _ = upstream.close(None).await;
                        return Relayed::NotReading;
                    }
                },
                Some(Err(e)) => return Relayed::Owner(format!("the owner node went away ({e})")),
                None => return Relayed::Owner("the owner node went away".into()),
            },
        }
    }
}

/// The KV bucket holding the signing key every node shares, so an export is signed with the
/// same key whichever node serves it.
pub const KEY_BUCKET: &str = "asl-keys";
const KEY_NAME: &str = "server-signing-key";

/// The cluster's signing key: created by the first node to start, read by every other.
pub fn signing_key(
    connected: &Connected,
    runtime: &tokio::runtime::Handle,
) -> Result<protocol::record::signed::ServerSigningKey, ClusterError> {
    use protocol::record::signed::ServerSigningKey;
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                runtime.block_on(async {
                    let keys = nats::bucket(connected, KEY_BUCKET, Duration::ZERO).await?;
                    let fresh = crate::signing::key::fresh();
                    let _ = keys
                        .create(KEY_NAME, fresh.to_bytes().to_vec().into())
                        .await;
                    // A bucket just created may not answer reads on every node at once.
                    let stored = nats::until_ready("reading the cluster's signing key", || {
                        let keys = keys.clone();
                        async move {
                            match keys.get(KEY_NAME).await {
                                Ok(Some(key)) => Ok(key),
                                Ok(None) => Err("the key is missing".to_string()),
                                Err(e) => Err(e.to_string()),
                            }
                        }
                    })
                    .await?;
                    let bytes: [u8; 32] = stored
                        .as_ref()
                        .try_into()
                        .map_err(|_| ClusterError::NotAKey)?;
                    Ok(ServerSigningKey::from_bytes(&bytes))
                })
            })
            .join()
            .unwrap_or(Err(ClusterError::Panicked {
                what: "reading the signing key",
            }))
    })
}

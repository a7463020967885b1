//! The game server: a websocket endpoint in front of one writer task per game, each game's
//! events kept in an append-only log, and on the same port the spectator page (`web`).
//!
//! `asl-server`'s `main` only parses flags, opens the store and binds the listener; [`run`]
//! does the rest, and tests call the same `run` on `127.0.0.1:0`.

pub mod games;
pub mod network;
pub mod notify;
pub mod operations;
pub mod signing;
pub mod store;

use games::registry::Registry;
use operations::config::Config;
use operations::metrics::METRICS;
use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use store::EventStore;
use tokio::net::TcpListener;
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tracing::{info, warn};

/// Connections refused at once with a reason (server full, per-IP cap). Past this, a
/// connection over a limit is closed without a word: telling why must not itself become the
/// work an attacker makes the server do.
pub const REFUSALS_AT_ONCE_MAX: usize = 64;

/// The first pause after `accept` fails (out of file descriptors, say), doubled on each failure
/// in a row up to [`ACCEPT_BACKOFF_MAX`]: a failing accept must not spin a core and flood the
/// log.
pub const ACCEPT_BACKOFF_MIN: Duration = Duration::from_millis(10);
pub const ACCEPT_BACKOFF_MAX: Duration = Duration::from_secs(1);

/// What every connection shares: the games, the limits, and the counters the limits need.
pub struct Shared {
    pub(crate) registry: Arc<Registry>,
    pub(crate) config: Arc<Config>,
    /// Spectators joined to any game, against `spectators_max`.
    pub(crate) spectators: AtomicUsize,
    /// Exports open for review, against `reviews_max`.
    pub(crate) reviews: Arc<Semaphore>,
    /// Bytes of the exports open for review, one permit a byte, against `review_bytes_max`.
    pub(crate) review_bytes: Arc<Semaphore>,
    /// VASL saves being read for `import_save`, against `imports_max`: each place is held by
    /// the read itself, which goes on if its connection leaves.
    pub(crate) imports: Arc<Semaphore>,
    /// Whether creating a game without the admin token is allowed here.
    pub(crate) open_creation: bool,
    /// Games created per IP address in the current hour, when creation is open.
    pub(crate) creations: Mutex<HashMap<IpAddr, (Instant, u32)>>,
    per_ip: Mutex<HashMap<IpAddr, usize>>,
    pub(crate) stopping: watch::Receiver<bool>,
    /// Where spectators' connections are served once joined (`audience`).
    pub(crate) audience: tokio::runtime::Handle,
    /// Board images the page has asked for, read once from the operator's archives.
    pub(crate) board_images: operations::boards::BoardImages,
}

/// A connection's place under the connection limits, held for as long as it lives.
pub struct Admitted {
    /// Why it is refused, when it is over a limit.
    pub(crate) refusal: Option<String>,
    _permit: Option<OwnedSemaphorePermit>,
    ip: Option<(IpAddr, Arc<Shared>)>,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        if let Some((ip, shared)) = &self.ip {
            let mut per_ip = shared.per_ip.lock().expect("per-IP lock");
            if let Some(n) = per_ip.get_mut(ip) {
                *n -= 1;
                if *n == 0 {
                    per_ip.remove(ip);
                }
            }
        }
    }
}

impl Shared {
    /// Counts a connection from `ip`; the refusal says which limit it is over, if any.
    fn admit(self: &Arc<Shared>, ip: IpAddr, permits: &Arc<Semaphore>) -> Admitted {
        let limit = self.config.connections_per_ip_max;
        {
            let mut per_ip = self.per_ip.lock().expect("per-IP lock");
            let n = per_ip.entry(ip).or_default();
            if *n >= limit {
                METRICS.refused("connections_per_ip_max");
                return Admitted {
                    refusal: Some(format!(
                        "your address holds {limit} connections, the per-address limit; close some and try again"
                    )),
                    _permit: None,
                    ip: None,
                };
            }
            *n += 1;
        }
        let ip = Some((ip, self.clone()));
        match permits.clone().try_acquire_owned() {
            Ok(permit) => Admitted {
                refusal: None,
                _permit: Some(permit),
                ip,
            },
            Err(_) => {
                METRICS.refused("connections_max");
                Admitted {
                    refusal: Some(format!(
                        "the server holds {} connections, its limit; try again later",
                        self.config.connections_max
                    )),
                    _permit: None,
                    ip,
                }
            }
        }
    }
}

/// Why the server does not start serving.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Notify(#[from] notify::StartError),
    #[error("cannot start the audience's threads: {0}")]
    Audience(String),
    #[error("{0}")]
    Games(#[from] games::registry::ListError),
}

/// Serves games on `listener` until `shutdown` completes, then closes every connection with a
/// close frame, waits for the game tasks to finish, and returns. Every acknowledged event is
/// already durable, so stopping loses nothing. Shutdown takes at most the configured deadline:
/// connections still busy then (a send to a reader that never reads) are dropped.
pub async fn run(
    listener: TcpListener,
    store: Arc<dyn EventStore>,
    config: Config,
    shutdown: impl Future<Output = ()>,
) -> Result<(), RunError> {
    run_in_cluster(listener, store, config, None, shutdown).await
}

/// [`run`] on a node of a cluster of servers sharing a NATS store (`games::cluster`).
pub async fn run_in_cluster(
    listener: TcpListener,
    store: Arc<dyn EventStore>,
    config: Config,
    cluster: Option<Arc<games::cluster::Cluster>>,
    shutdown: impl Future<Output = ()>,
) -> Result<(), RunError> {
    let local = listener.local_addr().ok();
    // Creating games without the admin token is for a server only this machine can reach,
    // unless the operator says otherwise.
    let open_creation = config.open_creation.unwrap_or_else(|| {
        config.admin_token.is_none() && local.is_some_and(|a| a.ip().is_loopback())
    });
    if let (Some(cluster), Some(local)) = (&cluster, local) {
        let host = match local.ip() {
            ip if ip.is_unspecified() => "127.0.0.1".to_string(),
            ip => ip.to_string(),
        };
        cluster.set_address(format!("ws://{host}:{}", local.port()));
    }
    let config = Arc::new(config);
    let holds = cluster.clone().map(|cluster| -> notify::Holds {
        Arc::new(move |game: &store::GameKey| cluster.holds(game))
    });
    let notifier = notify::Notifier::start(store.clone(), config.clone(), holds)?;
    let registry = Arc::new(Registry::open_in_cluster(
        store,
        (*config).clone(),
        cluster.clone(),
    )?);
    registry.notify_with(notifier.clone());
    // Games under a clock run their timers again (`clock`), beside serving.
    registry.start_waking();
    let permits = Arc::new(Semaphore::new(config.connections_max));
    let refusals = Arc::new(Semaphore::new(REFUSALS_AT_ONCE_MAX));
    let (stop, stopping) = watch::channel(false);
    let audience = network::audience::Audience::start(network::audience::AUDIENCE_NICE)
        .map_err(|e| RunError::Audience(e.to_string()))?;
    let shared = Arc::new(Shared {
        registry: registry.clone(),
        config: config.clone(),
        spectators: AtomicUsize::new(0),
        reviews: Arc::new(Semaphore::new(config.reviews_max)),
        review_bytes: Arc::new(Semaphore::new(
            config.review_bytes_max.min(Semaphore::MAX_PERMITS),
        )),
        imports: Arc::new(Semaphore::new(config.imports_max)),
        open_creation,
        creations: Mutex::new(HashMap::new()),
        per_ip: Mutex::new(HashMap::new()),
        stopping,
        audience: audience.handle(),
        board_images: operations::boards::BoardImages::default(),
    });
    let mut connections = JoinSet::new();
    if let Some(addr) = local {
        info!(%addr, open_creation, "serving");
    }
    let mut backoff = ACCEPT_BACKOFF_MIN;
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept() => {
                let (stream, peer): (_, SocketAddr) = match accepted {
                    Ok(a) => a,
                    Err(e) => {
                        // Out of descriptors, most often: wait for connections to end rather
                        // than spin. Shutdown still interrupts the pause.
                        warn!(error = %e, pause_ms = backoff.as_millis() as u64, "accept failed; pausing");
                        METRICS.refused("accept_failed");
                        tokio::select! {
                            _ = &mut shutdown => break,
                            _ = tokio::time::sleep(backoff) => {}
                        }
                        backoff = (backoff * 2).min(ACCEPT_BACKOFF_MAX);
                        continue;
                    }
                };
                backoff = ACCEPT_BACKOFF_MIN;
                let _ = stream.set_nodelay(true);
                // Bound what the kernel holds for a reader that stops reading, so it falls
                // behind its queue (and is cut off) instead of parking megabytes in the socket.
                let _ = socket2::SockRef::from(&stream)
                    .set_send_buffer_size(config.socket_send_buffer_bytes);
                let admitted = shared.admit(peer.ip(), &permits);
                let refusing = match admitted.refusal {
                    None => None,
                    Some(_) => match refusals.clone().try_acquire_owned() {
                        Ok(p) => Some(p),
                        Err(_) => continue,
                    },
                };
                let shared = shared.clone();
                connections.spawn(async move {
                    network::web::serve(stream, peer, shared, admitted).await;
                    drop(refusing);
                });
            }
        }
    }
    info!("shutting down");
    let _ = stop.send(true);
    let deadline = config.shutdown_deadline;
    let drained = tokio::time::timeout(deadline, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        warn!(
            left = connections.len(),
            "connections still open at the shutdown deadline; dropping them"
        );
        connections.abort_all();
        while connections.join_next().await.is_some() {}
    }
    // Every connection has ended, so the audience's threads serve none: let them go.
    drop(audience);
    if tokio::time::timeout(deadline, registry.shutdown())
        .await
        .is_err()
    {
        warn!("games still stopping at the shutdown deadline");
    }
    notifier.stop().await;
    if let Some(cluster) = &cluster {
        cluster.release_all().await;
    }
    info!("stopped");
    Ok(())
}

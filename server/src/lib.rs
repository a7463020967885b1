//! The game server: a websocket endpoint in front of one writer task per game, each game's
//! events kept in an append-only log, and on the same port the spectator page (`web`).
//!
//! `asl-server`'s `main` only parses flags, opens the store and binds the listener; [`run`]
//! does the rest, and tests call the same `run` on `127.0.0.1:0`.

pub mod config;
mod connection;
pub mod game;
pub mod log;
pub mod registry;
mod review;
pub mod signing;
pub mod store;
pub mod web;

use config::Config;
use registry::Registry;
use std::future::Future;
use std::sync::Arc;
use store::EventStore;
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinSet;
use tracing::{info, warn};

/// Serves games on `listener` until `shutdown` completes, then closes every connection with a
/// close frame, waits for the game tasks to finish, and returns. Every acknowledged event is
/// already durable, so stopping loses nothing.
pub async fn run(
    listener: TcpListener,
    store: Arc<dyn EventStore>,
    config: Config,
    shutdown: impl Future<Output = ()>,
) -> Result<(), String> {
    let config = Arc::new(config);
    let registry = Arc::new(Registry::open(store, (*config).clone())?);
    let permits = Arc::new(Semaphore::new(config.connections_max));
    let (stop, stopping) = watch::channel(false);
    let mut connections = JoinSet::new();
    if let Ok(addr) = listener.local_addr() {
        info!(%addr, "serving");
    }
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(a) => a,
                    Err(e) => {
                        warn!(error = %e, "accept failed");
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                // Bound what the kernel holds for a reader that stops reading, so it falls
                // behind its queue (and is cut off) instead of parking megabytes in the socket.
                let _ = socket2::SockRef::from(&stream)
                    .set_send_buffer_size(config.socket_send_buffer_bytes);
                match permits.clone().try_acquire_owned() {
                    Ok(permit) => {
                        let (registry, config, stopping) =
                            (registry.clone(), config.clone(), stopping.clone());
                        connections.spawn(async move {
                            // The spectator page shares the port: a browser opening a watch
                            // link reaches the same server its websocket then talks to.
                            if web::wants_page(&stream).await {
                                web::serve(stream, registry.server_key()).await;
                            } else {
                                connection::serve(stream, registry, config, stopping).await;
                            }
                            drop(permit);
                        });
                    }
                    Err(_) => {
                        warn!(%peer, limit = config.connections_max, "connection refused: server full");
                        connections.spawn(connection::refuse_full(stream, config.connections_max));
                    }
                }
            }
        }
    }
    info!("shutting down");
    let _ = stop.send(true);
    while connections.join_next().await.is_some() {}
    registry.shutdown().await;
    info!("stopped");
    Ok(())
}

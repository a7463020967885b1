//! `asl-server`: parses flags, opens the store, binds the listener and hands over to
//! [`server::run`]. Everything else lives in the library so tests run the same code.

use clap::Parser;
use server::config::{self, Config};
use server::store::SledStore;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tracing_subscriber::EnvFilter;

/// Serve remote ASL games over websockets, keeping every game's events in a local sled log.
#[derive(Parser)]
#[command(version)]
struct Flags {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:7878", env = "ASL_LISTEN")]
    listen: String,
    /// Directory of the sled event log (created if missing).
    #[arg(long, default_value = "data", env = "ASL_DATA_DIR")]
    data_dir: PathBuf,
    /// Require this token to create games (for public deployments).
    #[arg(long, env = "ASL_ADMIN_TOKEN")]
    admin_token: Option<String>,
    /// Most connections at once.
    #[arg(long, default_value_t = config::CONNECTIONS_MAX)]
    connections_max: usize,
    /// Most connections joined to one game.
    #[arg(long, default_value_t = config::CONNECTIONS_PER_GAME_MAX)]
    connections_per_game_max: usize,
    /// Messages queued for one connection before it is cut off as too slow.
    #[arg(long, default_value_t = config::OUTBOUND_QUEUE_MAX)]
    outbound_queue_max: usize,
    /// Bytes the kernel may buffer for sending on one connection.
    #[arg(long, default_value_t = config::SOCKET_SEND_BUFFER_BYTES)]
    socket_send_buffer_bytes: usize,
    /// Commands one connection may send per second.
    #[arg(long, default_value_t = config::COMMANDS_PER_SECOND_MAX)]
    commands_per_second_max: u32,
    /// Seconds of silence before a connection is closed.
    #[arg(long, default_value_t = config::IDLE_TIMEOUT.as_secs())]
    idle_timeout_s: u64,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .init();
    let flags = Flags::parse();
    let signing_key = server::signing::load_or_create(&flags.data_dir)
        .map_err(|e| anyhow::anyhow!("the signing key: {e}"))?;
    let public = protocol::record::signed::ServerKey::of(&signing_key);
    println!(
        "server key {public} (exports are signed with it; also served at {})",
        protocol::record::signed::KEY_PATH
    );
    tracing::info!(key = %public, "signing heads");
    let config = Config {
        signing_key: Arc::new(signing_key),
        connections_max: flags.connections_max,
        connections_per_game_max: flags.connections_per_game_max,
        outbound_queue_max: flags.outbound_queue_max,
        socket_send_buffer_bytes: flags.socket_send_buffer_bytes,
        commands_per_second_max: flags.commands_per_second_max,
        idle_timeout: Duration::from_secs(flags.idle_timeout_s),
        admin_token: flags.admin_token,
        ..Config::default()
    };
    let store = SledStore::open(&flags.data_dir).map_err(|e| {
        anyhow::anyhow!("cannot open the data dir {}: {e}", flags.data_dir.display())
    })?;
    let listener = tokio::net::TcpListener::bind(&flags.listen)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", flags.listen))?;
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    server::run(listener, Arc::new(store), config, shutdown)
        .await
        .map_err(|e| anyhow::anyhow!(e))
}

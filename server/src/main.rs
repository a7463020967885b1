//! `asl-server`: parses flags, opens the store, binds the listener and hands over to
//! [`server::run`]. Everything else lives in the library so tests run the same code.

use clap::Parser;
use server::config::{self, Config};
use server::store::SledStore;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

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
    /// Let anyone create games without the admin token (default: only when listening on
    /// loopback).
    #[arg(long)]
    open_creation: bool,
    /// Origins (scheme://host[:port]) besides the server's own whose pages may open websockets.
    #[arg(long)]
    allowed_origin: Vec<String>,
    /// Most spectators joined to one game (a game's two seats can always join).
    #[arg(long, default_value_t = config::SPECTATORS_PER_GAME_MAX)]
    spectators_per_game_max: usize,
    /// Most spectators on the whole server.
    #[arg(long, default_value_t = config::SPECTATORS_MAX)]
    spectators_max: usize,
    /// Most connections from one IP address.
    #[arg(long, default_value_t = config::CONNECTIONS_PER_IP_MAX)]
    connections_per_ip_max: usize,
    /// Reads (get_state, get_state_at, ...) one connection may send per second.
    #[arg(long, default_value_t = config::READS_PER_SECOND_MAX)]
    reads_per_second_max: u32,
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
    server::logging::init();
    let flags = Flags::parse();
    let config = Config {
        connections_max: flags.connections_max,
        spectators_per_game_max: flags.spectators_per_game_max,
        spectators_max: flags.spectators_max,
        connections_per_ip_max: flags.connections_per_ip_max,
        reads_per_second_max: flags.reads_per_second_max,
        open_creation: flags.open_creation.then_some(true),
        allowed_origins: flags.allowed_origin,
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

//! `asl-server`: parses flags, opens the store, binds the listener and hands over to
//! [`server::run`]; or, as `asl-server backup DIR` / `asl-server restore DIR`, copies games
//! out as verified export files and back. Everything else lives in the library so tests run
//! the same code.

use clap::{Parser, Subcommand};
use server::config::{self, Config};
use server::startup;
use server::store::backup::{self, admin};
use server::store::{OpenError, SledStore};
use std::io::Write;
use std::path::{Path, PathBuf};
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
    /// The address players and spectators reach this server at, when it is not the listen
    /// address (behind a TLS reverse proxy: `wss://asl.example.org`); used in the links the
    /// server prints and sends with a new game.
    #[arg(long, env = "ASL_PUBLIC_URL")]
    public_url: Option<String>,
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
    /// Most games in memory at once; past it the least recently joined game nobody is
    /// connected to is unloaded, or loading another is refused.
    #[arg(long, default_value_t = config::LOADED_GAMES_MAX)]
    loaded_games_max: usize,
    /// Seconds a game nobody is connected to stays in memory before it is unloaded (it is
    /// replayed from its log on the next join).
    #[arg(long, default_value_t = config::GAME_UNLOAD_AFTER_IDLE.as_secs())]
    game_unload_after_idle_s: u64,
    #[command(subcommand)]
    task: Option<Task>,
}

#[derive(Subcommand)]
enum Task {
    /// Write every game of the data dir into DIR as a verified export file (`<id>.asl-log`,
    /// which `asl verify` reads) with its metadata (`<id>.meta`). Works while the server runs
    /// (through its admin socket in the data dir) and while it is stopped.
    Backup { dir: PathBuf },
    /// Load every export in DIR (as `backup` wrote them) into the data dir, which must hold no
    /// games; each is verified first. Run it with the server stopped.
    Restore { dir: PathBuf },
}

/// Exit status when the data directory cannot be used.
const EXIT_STORE: i32 = 2;

/// Opens the store, or ends the process with a message saying which directory, what failed
/// and what to do: never a backtrace.
fn open_store(dir: &Path) -> SledStore {
    SledStore::open(dir).unwrap_or_else(|e| {
        let advice = match &e {
            OpenError::Locked(_) => "Stop the other server first, or give this one its own --data-dir.".to_string(),
            OpenError::Damaged(_) => damaged_advice(dir),
            OpenError::Io(_) => "Check that the directory exists, is writable by this user and that its disk has space.".into(),
        };
        eprintln!(
            "asl-server: cannot open the data directory {}: {e}\n{advice}",
            dir.display()
        );
        std::process::exit(EXIT_STORE);
    })
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    server::logging::init();
    let flags = Flags::parse();
    match &flags.task {
        Some(Task::Backup { dir }) => {
            let done = backup_command(&flags.data_dir, dir).await;
            server::logging::flush();
            return done;
        }
        Some(Task::Restore { dir }) => {
            // The key first: the restored games' receipts are signed with it.
            match server::signing::restore(dir, &flags.data_dir) {
                Ok(Some(key)) => println!("server key {key} restored with the backup"),
                Ok(None) => println!(
                    "the backup holds no signing key: the server will make a new one, and receipts or exports signed before cannot be checked against it"
                ),
                Err(e) => anyhow::bail!("restore into {} failed: {e}", flags.data_dir.display()),
            }
            let store = Arc::new(open_store(&flags.data_dir));
            let from = dir.clone();
            // The store's writes are waited for by blocking: off the async threads.
            let report = tokio::task::spawn_blocking(move || backup::restore(store, &from))
                .await?
                .map_err(|e| {
                    anyhow::anyhow!("restore into {} failed: {e}", flags.data_dir.display())
                })?;
            println!("restored {report}");
            server::logging::flush();
            return Ok(());
        }
        None => {}
    }
    let public_url = flags
        .public_url
        .as_deref()
        .map(startup::public_url)
        .transpose()
        .map_err(|e| anyhow::anyhow!(e))?;
    let signing_key = server::signing::load_or_create(&flags.data_dir)
        .map_err(|e| anyhow::anyhow!("the signing key: {e}"))?;
    let public = protocol::record::signed::ServerKey::of(&signing_key);
    // Written, not `println!`: with stdout on a full disk the server still serves.
    let _ = writeln!(
        std::io::stdout(),
        "server key {public} (exports are signed with it; also served at {})",
        protocol::record::signed::KEY_PATH
    );
    tracing::info!(key = %public, "signing heads");
    let config = Config {
        signing_key: Arc::new(signing_key),
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
        loaded_games_max: flags.loaded_games_max,
        game_unload_after_idle: Duration::from_secs(flags.game_unload_after_idle_s),
        admin_token: flags.admin_token,
        public_url: public_url.clone(),
        ..Config::default()
    };
    let store = Arc::new(open_store(&flags.data_dir));
    admin::listen(&flags.data_dir, store.clone(), config.signing_key.clone()).map_err(|e| {
        anyhow::anyhow!(
            "cannot open the admin socket in {}: {e}",
            flags.data_dir.display()
        )
    })?;
    let listener = tokio::net::TcpListener::bind(&flags.listen)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", flags.listen))?;
    if let Ok(local) = listener.local_addr() {
        // Written, not `println!`: with stdout on a full disk the server still serves (the
        // banner is a courtesy; `println!` would panic).
        let _ = writeln!(
            std::io::stdout(),
            "{}",
            startup::banner(local, public_url.as_deref())
        );
    }
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    if let Err(e) = server::run(listener, store, config, shutdown).await {
        // The one way `run` fails: the store's list of games cannot be read.
        eprintln!(
            "asl-server: cannot open the data directory {}: {e}\n{}",
            flags.data_dir.display(),
            damaged_advice(&flags.data_dir)
        );
        std::process::exit(EXIT_STORE);
    }
    server::logging::flush();
    Ok(())
}

fn damaged_advice(dir: &Path) -> String {
    format!(
        "The store is damaged. Keep {} as it is for inspection, and restore the games from a backup into an empty directory: asl-server --data-dir NEW_DIR restore BACKUP_DIR",
        dir.display()
    )
}

/// `asl-server backup DIR`: through the running server if one answers on the data dir's admin
/// socket, else straight from the store (which then must not be locked by anyone).
async fn backup_command(data_dir: &Path, dir: &Path) -> anyhow::Result<()> {
    let dir = std::path::absolute(dir)?;
    let report = match admin::request_backup(data_dir, &dir).await {
        Some(answer) => answer.map_err(|e| anyhow::anyhow!("backup failed: {e}"))?,
        None => {
            let store = open_store(data_dir);
            let signer = server::signing::load_or_create(data_dir)
                .map_err(|e| anyhow::anyhow!("the signing key: {e}"))?;
            let into = dir.clone();
            tokio::task::spawn_blocking(move || backup::backup(&store, &into, &signer))
                .await?
                .map_err(|e| anyhow::anyhow!("backup failed: {e}"))?
                .to_string()
        }
    };
    println!("backed up into {}: {report}", dir.display());
    if report.contains("not copied") {
        anyhow::bail!("some games could not be copied (named above)");
    }
    Ok(())
}

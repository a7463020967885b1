//! `asl-server`: parses flags, opens the store, binds the listener and hands over to
//! [`server::run`]; or, as `asl-server backup DIR` / `asl-server restore DIR`, copies games
//! out as verified export files and back; or, as `asl-server salvage --from DIR --to DIR`,
//! copies what still verifies out of a damaged data directory. Everything else lives in the library so tests run
//! the same code.

use clap::{Parser, Subcommand};
use server::operations::config::{self, Config};
use server::operations::startup;
use server::store::backup::{self, admin};
use server::store::{OpenError, SledStore};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// mimalloc, not glibc's malloc: a command allocates and frees many small values on one thread
/// while the store's committer and the connections free theirs on others, and glibc's arenas
/// paid for that in locks and page faults (BENCHMARKS.md, the matches rows). Transparent huge
/// pages are turned off for the process first thing in `main`: each page mimalloc gives back
/// and takes again would otherwise be faulted in and zeroed 2 MiB at a time.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Turns transparent huge pages off for this process (see [`ALLOCATOR`]). Best effort: a
/// kernel without the switch serves as well, only with more time spent zeroing pages.
fn no_transparent_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: a plain system call on this process's own flags; no memory is passed.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

/// Serve remote ASL games over websockets, keeping every game's events in a local sled log.
#[derive(Parser)]
#[command(version)]
struct Flags {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:7878", env = "ASL_LISTEN")]
    listen: String,
    /// Directory of the sled event log (created if missing): `--data-dir DIR` is
    /// `--store sled:DIR`.
    #[arg(long, default_value = "data", env = "ASL_DATA_DIR")]
    data_dir: PathBuf,
    /// Where every game's log lives: `sled:DIR` (the default, `sled:./data`) or
    /// `nats://HOST:PORT[,HOST:PORT…]`, a NATS JetStream cluster (nats-server 2.11 or newer)
    /// that several server nodes may share.
    #[arg(long, env = "ASL_STORE")]
    store: Option<String>,
    /// This node's name, given as the owner of the games it serves (default: the host name
    /// and the listen port).
    #[arg(long, env = "ASL_NODE_ID")]
    node_id: Option<String>,
    /// Seconds a game's lease lasts without renewal on a NATS store: how long a game waits
    /// for a new owner after its node dies.
    #[arg(long, default_value_t = server::games::cluster::LEASE_TTL.as_secs())]
    lease_ttl_s: u64,
    /// The address players and spectators reach this server at, when it is not the listen
    /// address (behind a TLS reverse proxy: `wss://asl.example.org`); used in the links the
    /// server prints and sends with a new game.
    #[arg(long, env = "ASL_PUBLIC_URL")]
    public_url: Option<String>,
    /// Directory of VASL board archives (`bd01` …, as VASL keeps them) for scenarios on real
    /// boards; VASL's terrain codes are read from its `SharedBoardMetadata.xml` when present.
    #[arg(long, env = "ASL_BOARDS")]
    boards: Option<PathBuf>,
    /// A VASL module (`.vmod`) or `SharedBoardMetadata.xml` to read VASL's terrain codes from.
    #[arg(long, env = "ASL_VASL_MODULE")]
    vasl_module: Option<PathBuf>,
    /// Require this token to create games (for public deployments).
    #[arg(long, env = "ASL_ADMIN_TOKEN")]
    admin_token: Option<String>,
    /// Serve `/metrics` to requests bearing this token (`Authorization: Bearer TOKEN`) from
    /// any address; without it, `/metrics` answers loopback only, with the public metrics
    /// (connections, games loaded). The counters follow every game's activity, hidden units'
    /// too, so they are the operator's, not the players'.
    #[arg(long, env = "ASL_METRICS_TOKEN")]
    metrics_token: Option<String>,
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
    /// Let webhooks point at loopback, private and link-local addresses (a receiver on the
    /// same host or network); off, such URLs are refused (docs/notifications.md).
    #[arg(long)]
    notify_allow_private: bool,
    /// Seconds a seat's notice waits, with nothing newer for it, before it is sent: several
    /// hand-overs in a row become one message.
    #[arg(long, default_value_t = config::NOTIFY_QUIET.as_secs())]
    notify_quiet_s: u64,
    /// Notification targets (webhooks, e-mail addresses) one seat may register.
    #[arg(long, default_value_t = config::NOTIFY_TARGETS_PER_SEAT_MAX)]
    notify_targets_per_seat_max: usize,
    /// Notices sent to one seat per hour; more wait for the hour to turn.
    #[arg(long, default_value_t = config::NOTIFY_SENDS_PER_HOUR_MAX)]
    notify_sends_per_hour_max: u32,
    /// Tries of one notice to one target before it is given up.
    #[arg(long, default_value_t = config::NOTIFY_TRIES_MAX)]
    notify_tries_max: u32,
    /// Hours of time left below which a side's clock owes its seat a notice.
    #[arg(long, default_value_t = config::NOTIFY_CLOCK_LOW_BELOW.as_secs() / 3600)]
    notify_clock_low_h: u64,
    /// The SMTP relay e-mail notices go through (`HOST:PORT`); without it, e-mail targets are
    /// refused.
    #[arg(long, env = "ASL_SMTP_RELAY")]
    smtp_relay: Option<String>,
    /// The sender address of e-mail notices (needed with --smtp-relay).
    #[arg(long, env = "ASL_SMTP_FROM")]
    smtp_from: Option<String>,
    /// Speak to the relay with STARTTLS, refusing to send without it.
    #[arg(long)]
    smtp_starttls: bool,
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
    /// Copy every game of a damaged data dir whose hash chain still verifies (the longest part
    /// of it that does) into a new data dir, with the signing key; FROM is only read. Exits
    /// non-zero if any game was lost or cut short. Run it with the server stopped.
    Salvage {
        /// The damaged data directory (never written).
        #[arg(long)]
        from: PathBuf,
        /// The new data directory: missing or empty.
        #[arg(long)]
        to: PathBuf,
    },
}

/// Exit status when the data directory cannot be used.
const EXIT_STORE: i32 = 2;

/// Exit status of a salvage that copied what it could, but not every game whole.
const EXIT_SALVAGE_INCOMPLETE: i32 = 3;

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

/// What `--store` names.
enum StoreUrl {
    Sled(PathBuf),
    Nats(String),
}

fn store_url(flags: &Flags) -> anyhow::Result<StoreUrl> {
    match flags.store.as_deref() {
        None => Ok(StoreUrl::Sled(flags.data_dir.clone())),
        Some(url) => {
            if let Some(dir) = url.strip_prefix("sled:") {
                if dir.is_empty() {
                    anyhow::bail!("--store sled: needs a directory, as in `sled:./data`");
                }
                Ok(StoreUrl::Sled(PathBuf::from(dir)))
            } else if url.starts_with("nats://") {
                server::store::nats::parse_url(url).map_err(|e| anyhow::anyhow!("--store: {e}"))?;
                Ok(StoreUrl::Nats(url.to_string()))
            } else {
                anyhow::bail!(
                    "--store `{url}` is neither `sled:DIR` nor `nats://HOST:PORT[,HOST:PORT…]`"
                )
            }
        }
    }
}

/// The host's name, for the default node id.
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    no_transparent_huge_pages();
    server::operations::logging::init();
    let mut flags = Flags::parse();
    let store_url = store_url(&flags)?;
    if let StoreUrl::Sled(dir) = &store_url {
        flags.data_dir = dir.clone();
    }
    if let StoreUrl::Nats(url) = &store_url {
        if flags.task.is_some() {
            anyhow::bail!(
                "backup, restore and salvage read a sled data directory; a NATS store's games are copied with JetStream's own tools (stream {} and bucket {}) or exported one by one with `asl export`",
                server::store::nats::STREAM,
                server::store::nats::META_BUCKET
            );
        }
        return serve_nats(flags, url.clone()).await;
    }
    match &flags.task {
        Some(Task::Backup { dir }) => {
            let done = backup_command(&flags.data_dir, dir).await;
            server::operations::logging::flush();
            return done;
        }
        Some(Task::Restore { dir }) => {
            // The key first: the restored games' receipts are signed with it.
            match server::signing::key::restore(dir, &flags.data_dir) {
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
            server::operations::logging::flush();
            return Ok(());
        }
        Some(Task::Salvage { from, to }) => {
            let (from, to) = (from.clone(), to.clone());
            let report = tokio::task::spawn_blocking(move || {
                server::store::salvage::salvage(&from, &to).map(|r| (r, to))
            })
            .await?;
            server::operations::logging::flush();
            let (report, to) = report.unwrap_or_else(|e| {
                eprintln!("asl-server: salvage failed: {e}");
                std::process::exit(EXIT_STORE);
            });
            println!("salvaged into {}: {report}", to.display());
            if !report.all_intact() {
                eprintln!(
                    "asl-server: some games were lost or cut short (named above); {} serves the rest: asl-server --data-dir {}",
                    to.display(),
                    to.display()
                );
                std::process::exit(EXIT_SALVAGE_INCOMPLETE);
            }
            return Ok(());
        }
        None => {}
    }
    let public_url = public_url(&flags)?;
    let signing_key = server::signing::key::load_or_create(&flags.data_dir)
        .map_err(|e| anyhow::anyhow!("the signing key: {e}"))?;
    let public = protocol::record::signed::ServerKey::of(&signing_key);
    // Written, not `println!`: with stdout on a full disk the server still serves.
    let _ = writeln!(
        std::io::stdout(),
        "server key {public} (exports are signed with it; also served at {})",
        protocol::record::signed::KEY_PATH
    );
    tracing::info!(key = %public, "signing heads");
    let mut config =
        config_of(&flags, signing_key, public_url.clone()).map_err(|e| anyhow::anyhow!("{e}"))?;
    let store = Arc::new(open_store(&flags.data_dir));
    admin::listen(&flags.data_dir, store.clone(), config.signing_key.clone()).map_err(|e| {
        anyhow::anyhow!(
            "cannot open the admin socket in {}: {e}",
            flags.data_dir.display()
        )
    })?;
    // Bound only once the store is open: a server that cannot open it never listens.
    let listener = bind(&flags.listen).await?;
    config.node_id = Some(node_id(&flags, &listener));
    serve(listener, store, config, None, public_url.as_deref())
        .await
        .unwrap_or_else(|e| {
            // The one way `run` fails: the store's list of games cannot be read.
            eprintln!(
                "asl-server: cannot open the data directory {}: {e}\n{}",
                flags.data_dir.display(),
                damaged_advice(&flags.data_dir)
            );
            server::operations::logging::flush();
            std::process::exit(EXIT_STORE);
        });
    server::operations::logging::flush();
    Ok(())
}

async fn bind(listen: &str) -> anyhow::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {listen}: {e}"))
}

fn node_id(flags: &Flags, listener: &tokio::net::TcpListener) -> String {
    flags.node_id.clone().unwrap_or_else(|| {
        let port = listener.local_addr().map(|a| a.port()).unwrap_or_default();
        format!("{}:{port}", hostname())
    })
}

fn config_of(
    flags: &Flags,
    signing_key: protocol::record::signed::ServerSigningKey,
    public_url: Option<String>,
) -> Result<Config, FlagError> {
    let boards = match &flags.boards {
        None => None,
        Some(dir) => Some(server::operations::boards::open(
            dir,
            flags.vasl_module.as_deref(),
        )?),
    };
    Ok(Config {
        signing_key: Arc::new(signing_key),
        connections_max: flags.connections_max,
        spectators_per_game_max: flags.spectators_per_game_max,
        spectators_max: flags.spectators_max,
        connections_per_ip_max: flags.connections_per_ip_max,
        reads_per_second_max: flags.reads_per_second_max,
        open_creation: flags.open_creation.then_some(true),
        outbound_queue_max: flags.outbound_queue_max,
        socket_send_buffer_bytes: flags.socket_send_buffer_bytes,
        commands_per_second_max: flags.commands_per_second_max,
        idle_timeout: Duration::from_secs(flags.idle_timeout_s),
        loaded_games_max: flags.loaded_games_max,
        game_unload_after_idle: Duration::from_secs(flags.game_unload_after_idle_s),
        admin_token: flags.admin_token.clone(),
        metrics_token: flags.metrics_token.clone(),
        allowed_origins: flags.allowed_origin.clone(),
        public_url,
        boards,
        notify_allow_private: flags.notify_allow_private,
        notify_quiet: Duration::from_secs(flags.notify_quiet_s),
        notify_targets_per_seat_max: flags.notify_targets_per_seat_max,
        notify_sends_per_hour_max: flags.notify_sends_per_hour_max,
        notify_tries_max: flags.notify_tries_max,
        notify_clock_low_below: Duration::from_secs(flags.notify_clock_low_h * 3600),
        smtp: smtp_relay(flags)?,
        ..Config::default()
    })
}

/// Why the flags do not make a configuration.
#[derive(Debug, thiserror::Error)]
enum FlagError {
    #[error("--boards: {0}")]
    Boards(#[from] server::operations::boards::OpenError),
    #[error("--smtp-relay `{0}` is not HOST:PORT")]
    Relay(String),
    #[error("--smtp-relay needs --smtp-from, the sender address of e-mail notices")]
    NoSender,
    #[error("--smtp-from `{from}` is not an e-mail address ({why})")]
    Sender { from: String, why: String },
}

/// `--smtp-relay HOST:PORT` with `--smtp-from`, checked.
fn smtp_relay(flags: &Flags) -> Result<Option<server::notify::SmtpRelay>, FlagError> {
    let Some(relay) = &flags.smtp_relay else {
        return Ok(None);
    };
    let (host, port) = relay
        .rsplit_once(':')
        .and_then(|(host, port)| Some((host, port.parse::<u16>().ok()?)))
        .ok_or_else(|| FlagError::Relay(relay.clone()))?;
    let from = flags.smtp_from.clone().ok_or(FlagError::NoSender)?;
    from.parse::<lettre::Address>()
        .map_err(|e| FlagError::Sender {
            from: from.clone(),
            why: e.to_string(),
        })?;
    Ok(Some(server::notify::SmtpRelay {
        host: host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string(),
        port,
        from,
        starttls: flags.smtp_starttls,
    }))
}

/// Completes on Ctrl-C (SIGINT) or SIGTERM, what `kill`, systemd and container runtimes send
/// to stop a service: either way the server stops as `run` stops it — connections closed, games'
/// writes settled, the notifier's deliveries under way finished — not in the middle of them,
/// as SIGTERM's default action would.
///
/// SIGTERM is taken at once, before the future is first awaited: one sent as soon as the
/// banner is out already stops the server cleanly.
fn stop_signal() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::{signal, SignalKind};
    let terminate = signal(SignalKind::terminate());
    async move {
        match terminate {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot take SIGTERM; only Ctrl-C stops the server cleanly");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
}

/// Prints the banner and serves until Ctrl-C or SIGTERM.
async fn serve(
    listener: tokio::net::TcpListener,
    store: Arc<dyn server::store::EventStore>,
    config: Config,
    cluster: Option<Arc<server::games::cluster::Cluster>>,
    public_url: Option<&str>,
) -> Result<(), server::RunError> {
    let shutdown = stop_signal();
    if let Ok(local) = listener.local_addr() {
        // Written, not `println!`: with stdout on a full disk the server still serves (the
        // banner is a courtesy; `println!` would panic).
        let _ = writeln!(std::io::stdout(), "{}", startup::banner(local, public_url));
    }
    server::run_in_cluster(listener, store, config, cluster, shutdown).await
}

/// `--public-url`, checked.
fn public_url(flags: &Flags) -> anyhow::Result<Option<String>> {
    flags
        .public_url
        .as_deref()
        .map(startup::public_url)
        .transpose()
        .map_err(|e| anyhow::anyhow!(e))
}

/// `--store nats://…`: the log on a JetStream cluster, shared with other server nodes; the
/// signing key is the cluster's (`cluster::signing_key`), and games are owned through leases.
async fn serve_nats(flags: Flags, url: String) -> anyhow::Result<()> {
    let public_url = public_url(&flags)?;
    let ttl = Duration::from_secs(flags.lease_ttl_s);
    let opened = tokio::task::spawn_blocking(move || {
        server::store::NatsStore::open(&url)
            .map_err(|e| format!("cannot use the NATS store {url}: {e}"))
    })
    .await?;
    let store = opened.unwrap_or_else(|e| {
        eprintln!("asl-server: {e}");
        std::process::exit(EXIT_STORE);
    });
    // Bound only once the store is open: a server that cannot open it never listens.
    let listener = bind(&flags.listen).await?;
    let node_id = node_id(&flags, &listener);
    let (connected, runtime, id) = (store.connected(), store.runtime(), node_id.clone());
    let opened = tokio::task::spawn_blocking(move || {
        let cluster = server::games::cluster::Cluster::open(&connected, runtime.clone(), id, ttl)?;
        let key = server::games::cluster::signing_key(&connected, &runtime)?;
        Ok::<_, server::games::cluster::ClusterError>((cluster, key))
    })
    .await?;
    let (cluster, signing_key) = opened.unwrap_or_else(|e| {
        eprintln!("asl-server: {e}");
        std::process::exit(EXIT_STORE);
    });
    let public = protocol::record::signed::ServerKey::of(&signing_key);
    let _ = writeln!(
        std::io::stdout(),
        "node {node_id}; server key {public} (the cluster's; exports are signed with it)"
    );
    let config = Config {
        node_id: Some(node_id),
        ..config_of(&flags, signing_key, public_url.clone()).unwrap_or_else(|e| {
            eprintln!("asl-server: {e}");
            std::process::exit(2);
        })
    };
    let cluster = Some(Arc::new(cluster));
    if let Err(e) = serve(
        listener,
        Arc::new(store),
        config,
        cluster,
        public_url.as_deref(),
    )
    .await
    {
        eprintln!("asl-server: the NATS store's list of games cannot be read: {e}");
        std::process::exit(EXIT_STORE);
    }
    server::operations::logging::flush();
    Ok(())
}

fn damaged_advice(dir: &Path) -> String {
    format!(
        "The store is damaged. Keep {} as it is for inspection, and restore the games from a backup into an empty directory: asl-server --data-dir NEW_DIR restore BACKUP_DIR; or, without a backup, copy every game whose log still verifies: asl-server salvage --from {} --to NEW_DIR",
        dir.display(),
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
            let signer = server::signing::key::load_or_create(data_dir)
                .map_err(|e| anyhow::anyhow!("the signing key: {e}"))?;
            let into = dir.clone();
            tokio::task::spawn_blocking(move || backup::backup(&store, &into, &signer))
                .await?
                .map_err(|e| anyhow::anyhow!("backup failed: {e}"))?
        }
    };
    println!("backed up into {}: {report}", dir.display());
    if !report.failed.is_empty() {
        anyhow::bail!("some games could not be copied (named above)");
    }
    Ok(())
}

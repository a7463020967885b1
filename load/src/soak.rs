//! The hostile soak: two real players play one game while hostile clients do everything issue
//! 18 lists at once — sockets that never send a byte, ping floods, an audience looping
//! `get_state_at`, anonymous reviews of junk, game creation in a loop, readers that never read,
//! malformed frames. The players' round trips are timed before the attack and during it, in the
//! same run on the same game.
//!
//! The server runs with its default limits (commands per second aside, so the players' steps
//! are not throttled): the attackers come from 127.0.0.2 upwards, many addresses, as a
//! distributed attack would, so the per-address cap bounds each but does not stop them all.

use crate::bench::round_trips_of;
use crate::child::{Scratch, ServerProcess};
use crate::client::websocket_config;
use crate::stats::{cpu_seconds, ms, percentile};
use crate::table::Table;
use futures_util::{SinkExt, StreamExt};
use protocol::wire::{self, ClientMessage, WIRE_PATH};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::net::{TcpSocket, TcpStream};
use tokio_tungstenite::tungstenite::Message;

/// How many of each kind of attacker.
#[derive(Clone, Copy)]
pub struct Attack {
    pub silent: usize,
    pub pingers: usize,
    pub readers: usize,
    pub reviewers: usize,
    pub creators: usize,
    pub stalled: usize,
    pub malformed: usize,
}

/// Addresses the attackers connect from: 127.0.0.2 to 127.0.0.(1 + ATTACKER_ADDRESSES).
const ATTACKER_ADDRESSES: u32 = 200;

/// Counters of what the attackers did.
#[derive(Default)]
struct Tally {
    connections: AtomicU64,
    frames: AtomicU64,
    refused: AtomicU64,
}

fn attacker_ip(n: usize) -> IpAddr {
    IpAddr::V4(Ipv4Addr::from(
        u32::from(Ipv4Addr::new(127, 0, 0, 2)) + (n as u32 % ATTACKER_ADDRESSES),
    ))
}

async fn tcp_from(ip: IpAddr, server: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(ip, 0))?;
    socket.connect(server).await
}

type Ws = tokio_tungstenite::WebSocketStream<TcpStream>;

async fn ws_from(ip: IpAddr, server: SocketAddr) -> Option<Ws> {
    let stream = tcp_from(ip, server).await.ok()?;
    let url = format!("ws://{server}{WIRE_PATH}");
    tokio::time::timeout(
        Duration::from_secs(10),
        tokio_tungstenite::client_async_with_config(url, stream, Some(websocket_config())),
    )
    .await
    .ok()?
    .ok()
    .map(|(ws, _)| ws)
}

fn text(message: &ClientMessage) -> Message {
    Message::text(wire::to_json(message))
}

/// Sends `frame` over and over, reading whatever comes back, until the server closes the
/// connection or the attack stops; then connects again.
async fn flood(
    n: usize,
    server: SocketAddr,
    prelude: Vec<Message>,
    frame: Message,
    stop: Arc<AtomicBool>,
    tally: Arc<Tally>,
) {
    while !stop.load(Ordering::Relaxed) {
        let Some(ws) = ws_from(attacker_ip(n), server).await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        tally.connections.fetch_add(1, Ordering::Relaxed);
        let (mut sink, mut stream) = ws.split();
        let reading = {
            let tally = tally.clone();
            tokio::spawn(async move {
                while let Some(Ok(message)) = stream.next().await {
                    if let Message::Text(t) = message {
                        if t.as_str().contains("limit_reached") {
                            tally.refused.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            })
        };
        let mut ok = true;
        for p in &prelude {
            ok &= sink.send(p.clone()).await.is_ok();
        }
        while ok && !stop.load(Ordering::Relaxed) && !reading.is_finished() {
            ok = sink.send(frame.clone()).await.is_ok();
            tally.frames.fetch_add(1, Ordering::Relaxed);
        }
        reading.abort();
    }
}

/// Holds a socket that sends nothing; opens another when the server drops it.
async fn silent(n: usize, server: SocketAddr, stop: Arc<AtomicBool>, tally: Arc<Tally>) {
    while !stop.load(Ordering::Relaxed) {
        let Ok(mut stream) = tcp_from(attacker_ip(n), server).await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        tally.connections.fetch_add(1, Ordering::Relaxed);
        let mut buffer = [0u8; 256];
        let _ = tokio::time::timeout(Duration::from_secs(60), stream.read(&mut buffer)).await;
    }
}

/// Joins as a spectator and never reads again.
async fn stalled(n: usize, server: SocketAddr, join: Message, stop: Arc<AtomicBool>) {
    if let Some(mut ws) = ws_from(attacker_ip(n), server).await {
        let _ = ws.send(join).await;
        while !stop.load(Ordering::Relaxed) {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// Starts every attacker; they run until `stop` is set.
fn launch(
    attack: Attack,
    server: SocketAddr,
    table: &Table,
    stop: &Arc<AtomicBool>,
    tally: &Arc<Tally>,
) -> tokio::task::JoinSet<()> {
    let mut set = tokio::task::JoinSet::new();
    let join = text(&ClientMessage::Join {
        game: table.game.clone(),
        token: table.tokens.spectator.clone(),
        since: None,
    });
    let mut n = 0;
    let mut next = || {
        n += 1;
        n
    };
    for _ in 0..attack.silent {
        set.spawn(silent(next(), server, stop.clone(), tally.clone()));
    }
    for _ in 0..attack.stalled {
        set.spawn(stalled(next(), server, join.clone(), stop.clone()));
    }
    let mut floods = vec![];
    for _ in 0..attack.pingers {
        floods.push((vec![], text(&ClientMessage::Ping { nonce: 7 })));
    }
    for _ in 0..attack.readers {
        floods.push((
            vec![join.clone()],
            text(&ClientMessage::GetStateAt { version: 1 }),
        ));
    }
    let junk = format!("asl-game-log 1\ngame 00\n{}\n", "ab".repeat(256 * 1024));
    for _ in 0..attack.reviewers {
        floods.push((
            vec![],
            text(&ClientMessage::Review {
                export: junk.clone(),
                server_key: None,
                receipts: vec![],
            }),
        ));
    }
    for _ in 0..attack.creators {
        floods.push((
            vec![],
            text(&ClientMessage::CreateGame {
                scenario: crate::table::scenario(),
                admin_token: None,
            }),
        ));
    }
    for _ in 0..attack.malformed {
        floods.push((vec![], Message::text("{\"teleport\":1}")));
    }
    for (prelude, frame) in floods {
        set.spawn(flood(
            next(),
            server,
            prelude,
            frame,
            stop.clone(),
            tally.clone(),
        ));
    }
    set
}

/// The refusal counters from the server's `/metrics`.
async fn refusals(server: SocketAddr) -> Vec<String> {
    use tokio::io::AsyncWriteExt;
    let Ok(mut stream) = TcpStream::connect(server).await else {
        return vec![];
    };
    let request = format!(
        "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\r\n",
        crate::child::LOAD_METRICS_TOKEN
    );
    let _ = stream.write_all(request.as_bytes()).await;
    let mut body = String::new();
    let _ = stream.read_to_string(&mut body).await;
    body.lines()
        .filter(|l| {
            l.starts_with("asl_refusals_total")
                || l.starts_with("asl_slow_readers_dropped_total")
                || l.starts_with("asl_connections{")
        })
        .map(str::to_string)
        .collect()
}

pub async fn soak(server_bin: &Path, attack: Attack, moves: u64) -> anyhow::Result<()> {
    let scratch = Scratch::new("soak")?;
    let server = ServerProcess::start_with_default_limits(server_bin, &scratch.data_dir())?;
    let addr = server.addr;
    let mut table = Table::create(addr).await?;

    let mut quiet = round_trips_of(&mut table, 0, moves, "no attack").await?;

    let stop = Arc::new(AtomicBool::new(false));
    let tally = Arc::new(Tally::default());
    let me = std::process::id();
    let cpu_before = (cpu_seconds(server.pid())?, cpu_seconds(me)?);
    let started = std::time::Instant::now();
    let mut attackers = launch(attack, addr, &table, &stop, &tally);
    // Let the attack build up before timing.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mut attacked = round_trips_of(&mut table, moves, moves, "under attack").await?;
    let seen = refusals(addr).await;
    let wall = started.elapsed().as_secs_f64();
    let cpu = (
        cpu_seconds(server.pid())? - cpu_before.0,
        cpu_seconds(me)? - cpu_before.1,
    );
    stop.store(true, Ordering::Relaxed);
    attackers.abort_all();
    while attackers.join_next().await.is_some() {}
    server.kill()?;

    let (q50, q99) = (percentile(&mut quiet, 50.0), percentile(&mut quiet, 99.0));
    let (a50, a99) = (
        percentile(&mut attacked, 50.0),
        percentile(&mut attacked, 99.0),
    );
    println!(
        "hostile soak: {moves} player steps before and {moves} during an attack of {} silent sockets, {} ping floods, {} spectators looping get_state_at, {} junk reviews, {} create loops, {} readers that never read, {} malformed floods (from {ATTACKER_ADDRESSES} addresses)",
        attack.silent,
        attack.pingers,
        attack.readers,
        attack.reviewers,
        attack.creators,
        attack.stalled,
        attack.malformed
    );
    println!(
        "  attackers: {} connections, {} frames sent, {} answered limit_reached",
        tally.connections.load(Ordering::Relaxed),
        tally.frames.load(Ordering::Relaxed),
        tally.refused.load(Ordering::Relaxed)
    );
    println!(
        "  no attack:    command round trip p50 {} p99 {}",
        ms(q50),
        ms(q99)
    );
    println!(
        "  under attack: command round trip p50 {} p99 {}",
        ms(a50),
        ms(a99)
    );
    println!(
        "  ratio (under attack / no attack): p50 {:.2}x p99 {:.2}x",
        a50.as_secs_f64() / q50.as_secs_f64(),
        a99.as_secs_f64() / q99.as_secs_f64()
    );
    println!(
        "  CPU during the attack ({wall:.1} s): server {:.1} s ({:.0}% of a core), this generator (attackers and players) {:.1} s ({:.0}%)",
        cpu.0,
        100.0 * cpu.0 / wall,
        cpu.1,
        100.0 * cpu.1 / wall
    );
    println!("  server metrics during the attack:");
    for line in seen {
        println!("    {line}");
    }
    Ok(())
}

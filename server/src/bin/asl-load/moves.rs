//! Matches against a bare relay: N matches at once, two seats each sending one cheap legal
//! command at a time, timed from its send to the opponent's receipt. The same shape is driven
//! against the real server (durable: every command flushed and `fdatasync`ed before it is
//! sent on) and against a bare tokio-tungstenite relay that forwards each frame to the other
//! seat of its match and does nothing else. Both run as child processes, started once; the
//! runs alternate between them (`--repeats`, the order swapped each repeat), and each run's
//! server CPU is read from `/proc/PID/task/*/schedstat` around it. The figures are medians over repeats.

use crate::child::{Scratch, ServerProcess};
use crate::client::Client;
use crate::stats::{cpu_nanos, percentile};
use crate::table::{next_step, Table};
use anyhow::{bail, Context};
use protocol::game::view::apply_viewed;
use protocol::wire::{ClientMessage, ServerMessage};
use protocol::Side;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// One run of one target: moves per second, each move's send → opponent receipt, and the
/// target's CPU per move.
struct Run {
    rate: f64,
    latencies: Vec<Duration>,
    cpu_per_move: Duration,
}

/// The bytes the relay's seats send: as long as a bincode `done` command, so both targets
/// carry frames of the size a move has.
fn relay_frame() -> Vec<u8> {
    protocol::wire::to_bincode(&ClientMessage::Command {
        id: 1,
        command: protocol::Command::Done,
        key: None,
    })
}

/// A match's seat on the relay: an 8-byte match number and the seat (0 or 1), the first frame
/// a relay connection sends.
fn hello(game: u64, seat: u8) -> Vec<u8> {
    let mut frame = game.to_be_bytes().to_vec();
    frame.push(seat);
    frame
}

/// Runs `play` on every match at once (each sends its samples), putting the matches back when
/// all are done; the target is `pid`, whose CPU is read around the run.
async fn run_all<M, F, Fut>(matches: &mut Vec<M>, pid: u32, play: F) -> anyhow::Result<Run>
where
    M: Send + 'static,
    F: Fn(M, mpsc::UnboundedSender<Duration>) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<M>> + Send + 'static,
{
    let (samples_tx, mut samples_rx) = mpsc::unbounded_channel();
    let cpu = cpu_nanos(pid)?;
    let start = Instant::now();
    let mut running = tokio::task::JoinSet::new();
    for one in matches.drain(..) {
        running.spawn(play(one, samples_tx.clone()));
    }
    drop(samples_tx);
    while let Some(one) = running.join_next().await {
        matches.push(one??);
    }
    let elapsed = start.elapsed();
    let cpu = cpu_nanos(pid)? - cpu;
    let mut latencies = vec![];
    while let Some(s) = samples_rx.recv().await {
        latencies.push(s);
    }
    let total = latencies.len() as f64;
    Ok(Run {
        rate: total / elapsed.as_secs_f64(),
        cpu_per_move: Duration::from_secs_f64(cpu as f64 / 1e9 / total),
        latencies,
    })
}

/// Plays `moves` moves in each of `tables` at once; the target is `pid`.
async fn server_run(tables: &mut Vec<Table>, moves: u64, pid: u32) -> anyhow::Result<Run> {
    run_all(tables, pid, |mut table, samples| async move {
        for id in 0..moves {
            let at = play_unchecked(&mut table, id).await?;
            let _ = samples.send(at);
        }
        anyhow::Ok(table)
    })
    .await
}

/// One step of play without predicting it: the acting side sends the command that moves play
/// on, the opponent's first event is timed, and both replicas follow what each side received
/// (every event of these commands is public, so each side receives as many as the actor's
/// `accepted` lists). Returns send → opponent's receipt.
async fn play_unchecked(table: &mut Table, id: u64) -> anyhow::Result<Duration> {
    let (side, command) = next_step(&table.replica);
    let (me, other) = match side {
        Side::A => (0, 1),
        Side::B => (1, 0),
    };
    let sent = Instant::now();
    table.seats[me]
        .send(&ClientMessage::Command {
            id,
            command,
            key: None,
        })
        .await?;
    let mut theirs = vec![expect_event(table.seats[other].recv().await?)?];
    let latency = sent.elapsed();
    let mine = match table.seats[me].recv().await? {
        ServerMessage::Accepted { events, .. } => events,
        other => bail!("game {}: expected `accepted`, got {other:?}", table.game),
    };
    for _ in 1..mine.len() {
        theirs.push(expect_event(table.seats[other].recv().await?)?);
    }
    let [a, b] = match side {
        Side::A => [mine.into_iter().map(|s| s.viewed).collect(), theirs],
        Side::B => [theirs, mine.into_iter().map(|s| s.viewed).collect()],
    };
    for viewed in &a {
        apply_viewed(&mut table.replica, viewed);
    }
    for viewed in &b {
        apply_viewed(&mut table.replica_b, viewed);
    }
    if table.replica.over {
        bail!("game {} ended; a run must fit one game's steps", table.game);
    }
    Ok(latency)
}

fn expect_event(message: ServerMessage) -> anyhow::Result<protocol::game::view::Viewed> {
    match message {
        ServerMessage::Event(s) => Ok(s.viewed),
        other => bail!("expected an event on the other seat, got {other:?}"),
    }
}

/// Both seats of `count` relay matches, numbered from `first`.
async fn relay_matches(
    addr: SocketAddr,
    first: u64,
    count: usize,
) -> anyhow::Result<Vec<[Client; 2]>> {
    let mut matches = Vec::with_capacity(count);
    for n in first..first + count as u64 {
        let mut seats = [Client::connect(addr).await?, Client::connect(addr).await?];
        for (seat, client) in (0..).zip(seats.iter_mut()) {
            client.send_raw(hello(n, seat)).await?;
            // Seated: the relay echoes the hello once the seat is in its table.
            client.recv_raw().await?;
        }
        matches.push(seats);
    }
    Ok(matches)
}

/// Plays `moves` moves in each relay match at once, seats alternating.
async fn relay_run(matches: &mut Vec<[Client; 2]>, moves: u64, pid: u32) -> anyhow::Result<Run> {
    let frame = relay_frame();
    run_all(matches, pid, |mut seats, samples| {
        let frame = frame.clone();
        async move {
            for m in 0..moves {
                let (me, other) = if m % 2 == 0 { (0, 1) } else { (1, 0) };
                let sent = Instant::now();
                seats[me].send_raw(frame.clone()).await?;
                seats[other].recv_raw().await?;
                let _ = samples.send(sent.elapsed());
            }
            anyhow::Ok(seats)
        }
    })
    .await
}

/// The median of `values`.
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Medians over a target's repeats: moves/s, p50, p99 and CPU per move (ms).
struct Summary {
    rate: f64,
    p50: f64,
    p99: f64,
    cpu_ms: f64,
}

fn summarize(runs: &mut [Run]) -> Summary {
    let pick = |runs: &mut [Run], p: f64| {
        median(
            runs.iter_mut()
                .map(|r| percentile(&mut r.latencies, p).as_secs_f64() * 1e3)
                .collect(),
        )
    };
    Summary {
        rate: median(runs.iter().map(|r| r.rate).collect()),
        p50: pick(runs, 50.0),
        p99: pick(runs, 99.0),
        cpu_ms: median(
            runs.iter()
                .map(|r| r.cpu_per_move.as_secs_f64() * 1e3)
                .collect(),
        ),
    }
}

/// N matches against the relay, for each N in `sizes`, `repeats` times interleaved.
pub async fn moves(
    server_bin: &Path,
    sizes: &[usize],
    moves: u64,
    repeats: u32,
) -> anyhow::Result<()> {
    if moves > crate::table::STEPS_PER_GAME_MIN {
        bail!(
            "--moves {moves}: a run plays one game per match, which has at least {} steps",
            crate::table::STEPS_PER_GAME_MIN
        );
    }
    let scratch = Scratch::new("moves")?;
    let server = ServerProcess::start(server_bin, &scratch.data_dir())?;
    let relay = ServerProcess::relay()?;
    let floor = crate::bench::raw_fdatasync_rate(&scratch.path.join("floor"), &relay_frame(), 200)?;
    println!(
        "matches: {moves} moves per match, one in flight per match, send -> opponent's receipt; {repeats} repeats alternating server and relay"
    );
    println!(
        "  write+fdatasync on this disk (the floor, same run): {:.3} ms per sync; a `done` is a {} B frame, a {} B stored event",
        1e3 / floor,
        relay_frame().len(),
        crate::bench::step_record().len()
    );
    let mut next_match = 0;
    for &n in sizes {
        let (mut ours, mut bare) = (vec![], vec![]);
        for repeat in 0..repeats {
            for target in [repeat % 2, 1 - repeat % 2] {
                if target == 0 {
                    let mut tables = Vec::with_capacity(n);
                    for _ in 0..n {
                        tables.push(Table::create(server.addr).await?);
                    }
                    ours.push(server_run(&mut tables, moves, server.pid()).await?);
                } else {
                    let mut matches = relay_matches(relay.addr, next_match, n).await?;
                    next_match += n as u64;
                    bare.push(relay_run(&mut matches, moves, relay.pid()).await?);
                }
            }
        }
        let (s, r) = (summarize(&mut ours), summarize(&mut bare));
        println!("  N = {n}:");
        println!(
            "    server: {:.0} moves/s, p50 {:.3} ms, p99 {:.3} ms, CPU {:.4} ms/move",
            s.rate, s.p50, s.p99, s.cpu_ms
        );
        println!(
            "    relay:  {:.0} moves/s, p50 {:.3} ms, p99 {:.3} ms, CPU {:.4} ms/move",
            r.rate, r.p50, r.p99, r.cpu_ms
        );
        println!(
            "    ratio server/relay: moves/s {:.2}x, p50 {:.2}x (+{:.3} ms), CPU/move {:.2}x",
            s.rate / r.rate,
            s.p50 / r.p50,
            s.p50 - r.p50,
            s.cpu_ms / r.cpu_ms
        );
    }
    server.kill()?;
    relay.kill()?;
    scratch.remove();
    Ok(())
}

/// Frames the relay queues per connection. One move is in flight per match, so this never
/// fills.
const RELAY_QUEUE: usize = 64;

/// The bare relay: each connection names its match and seat in its first frame; every later
/// binary frame goes to the other seat of its match, through a queue and a writer task per
/// connection. No rules, no storage, no encoding.
pub async fn relay_server(listen: SocketAddr) -> anyhow::Result<()> {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    type Seats = Arc<Mutex<HashMap<u64, [Option<mpsc::Sender<Message>>; 2]>>>;
    let seats: Seats = Arc::default();
    let listener = tokio::net::TcpListener::bind(listen).await?;
    loop {
        let (stream, _) = listener.accept().await?;
        let seats = seats.clone();
        tokio::spawn(async move {
            let Some(ws) = crate::client::accept(stream).await else {
                return;
            };
            let (mut sink, mut frames) = ws.split();
            let Some(Ok(Message::Binary(first))) = frames.next().await else {
                return;
            };
            let Some((game, seat)) = first
                .get(..8)
                .and_then(|g| g.try_into().ok())
                .map(u64::from_be_bytes)
                .zip(first.get(8).filter(|s| **s < 2))
            else {
                return;
            };
            let seat = usize::from(*seat);
            let (tx, mut rx) = mpsc::channel::<Message>(RELAY_QUEUE);
            seats.lock().expect("seats lock").entry(game).or_default()[seat] = Some(tx);
            if sink.send(Message::Binary(first)).await.is_err() {
                return;
            }
            let mut other: Option<mpsc::Sender<Message>> = None;
            loop {
                tokio::select! {
                    frame = frames.next() => match frame {
                        Some(Ok(m)) if m.is_binary() => {
                            if other.is_none() {
                                other = seats.lock().expect("seats lock")
                                    .get(&game)
                                    .and_then(|s| s[1 - seat].clone());
                            }
                            if let Some(other) = &other {
                                let _ = other.send(m).await;
                            }
                        }
                        Some(Ok(_)) => {}
                        _ => break,
                    },
                    m = rx.recv() => match m {
                        Some(m) => if sink.send(m).await.is_err() { break },
                        None => break,
                    },
                }
            }
            seats.lock().expect("seats lock").remove(&game);
        });
    }
}

/// Parses `1,50,200`.
pub fn sizes(text: &str) -> anyhow::Result<Vec<usize>> {
    text.split(',')
        .map(|n| {
            n.trim()
                .parse::<usize>()
                .ok()
                .filter(|n| *n > 0)
                .with_context(|| format!("`{n}` is not a number of matches"))
        })
        .collect()
}

//! Matches against a bare relay: N matches at once, two seats each sending one legal command
//! at a time, timed from its send to the opponent's receipt: on the toy game a cheap `done`,
//! on a real-board scenario (`--scenario`, `crate::shapes`) moves of units and `done`s through
//! the phases. The same shape is driven
//! against three targets, each a child process started once:
//! - the real server (durable: every command `fdatasync`ed before it is sent on);
//! - the floor: the same relay storing each move in the project's own sled store (journal
//!   record and `fdatasync` per group, sled's insert) before forwarding it, then acknowledging
//!   it to its sender: what any durable referee pays per move before its rules;
//! - a bare tokio-tungstenite relay that forwards each frame to the other seat of its match and
//!   does nothing else.
//!
//! The runs are interleaved (`--repeats`, the order rotated each repeat), and each run's
//! target CPU is read from `/proc/PID/task/*/schedstat` (`procfs`) around it. The figures are medians
//! over repeats.

use crate::child::{Scratch, ServerProcess};
use crate::client::Client;
use crate::shapes::{Mover, Shape};
use crate::stats::{cpu_nanos, percentile};
use crate::table::Table;
use anyhow::{bail, Context};
use protocol::game::view::apply_viewed;
use protocol::wire::{ClientMessage, ServerMessage};
use protocol::Side;
use server::store::{EventStore, GameKey, SledStore};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
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

/// What the seats' commands came to over a server run, across its matches: refusals are
/// never counted as moves (the generator decides each command on its replica first, so any
/// refusal is unexpected and fails the run).
#[derive(Default)]
pub struct Tally {
    /// Commands the server refused.
    pub refused: AtomicU64,
    /// The first refusal, in words.
    pub first_refusal: Mutex<Option<String>>,
    /// Accepted commands that moved a unit (`move`).
    pub unit_moves: AtomicU64,
    /// Accepted commands in all.
    pub accepted: AtomicU64,
    /// Moves the generator's replica said the rules would refuse, so not sent.
    pub skipped: AtomicU64,
}

/// A match on the server: its table and what its seats play next.
pub struct Match {
    pub table: Table,
    pub mover: Mover,
}

/// Plays `moves` commands in each of `tables` at once; the target is `pid`.
async fn server_run(
    tables: &mut Vec<Match>,
    moves: u64,
    pid: u32,
    shape: Shape,
    tally: &Arc<Tally>,
) -> anyhow::Result<Run> {
    run_all(tables, pid, |mut one, samples| {
        let tally = tally.clone();
        async move {
            let skipped_before = one.mover.skipped;
            for id in 0..moves {
                let (side, command) =
                    one.mover
                        .next(shape, &one.table.replica, &one.table.replica_b);
                let moved_unit = matches!(command, protocol::Command::Move { .. });
                match play_unchecked(&mut one.table, id, side, command).await? {
                    Outcome::Accepted(at) => {
                        let _ = samples.send(at);
                        tally.accepted.fetch_add(1, Ordering::Relaxed);
                        if moved_unit {
                            tally.unit_moves.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    Outcome::Refused(why) => {
                        tally.refused.fetch_add(1, Ordering::Relaxed);
                        tally
                            .first_refusal
                            .lock()
                            .expect("tally lock")
                            .get_or_insert(format!("game {}, command {id}: {why}", one.table.game));
                    }
                }
            }
            tally
                .skipped
                .fetch_add(one.mover.skipped - skipped_before, Ordering::Relaxed);
            anyhow::Ok(one)
        }
    })
    .await
}

/// What the server answered to one command of [`play_unchecked`].
enum Outcome {
    /// Accepted: send → the opponent's receipt of its first event.
    Accepted(Duration),
    /// Refused, with the rule and reason the server gave.
    Refused(protocol::RuleViolation),
}

/// One command of play without predicting its events: `side` sends `command`, the opponent's
/// first event is timed, and both replicas follow what each side received (every event of
/// these commands is public, so each side receives as many as the actor's `accepted` lists).
/// Whichever seat hears first is read first: a refused command reaches the opponent not at
/// all, and an accepted one reaches it before or after its sender's `accepted`.
async fn play_unchecked(
    table: &mut Table,
    id: u64,
    side: Side,
    command: protocol::Command,
) -> anyhow::Result<Outcome> {
    let me = match side {
        Side::A => 0,
        Side::B => 1,
    };
    let sent = Instant::now();
    table.seats[me]
        .send(&ClientMessage::Command {
            id,
            command,
            key: None,
        })
        .await?;
    let [a, b] = &mut table.seats;
    let (mine_seat, other_seat) = if me == 0 { (a, b) } else { (b, a) };
    // Both reads are cancel-safe (the socket's `next` keeps a partly read frame), so the one
    // not chosen loses nothing.
    let (mut theirs, latency, answer) = tokio::select! {
        biased;
        theirs = other_seat.recv() => {
            let latency = sent.elapsed();
            (vec![expect_event(theirs?)?], Some(latency), None)
        }
        answer = mine_seat.recv() => (vec![], None, Some(answer?)),
    };
    let answer = match answer {
        Some(answer) => answer,
        None => mine_seat.recv().await?,
    };
    let mine = match answer {
        ServerMessage::Accepted { events, .. } => events,
        ServerMessage::Refused { violation, .. } => {
            if !theirs.is_empty() {
                bail!(
                    "game {}: the opponent received an event of a refused command",
                    table.game
                );
            }
            return Ok(Outcome::Refused(violation));
        }
        other => bail!("game {}: expected `accepted`, got {other:?}", table.game),
    };
    let latency = match latency {
        Some(latency) => latency,
        None => {
            theirs.push(expect_event(other_seat.recv().await?)?);
            sent.elapsed()
        }
    };
    for _ in theirs.len()..mine.len() {
        theirs.push(expect_event(other_seat.recv().await?)?);
    }
    let [a, b] = match side {
        Side::A => [
            mine.into_iter()
                .map(|s| std::sync::Arc::unwrap_or_clone(s.viewed))
                .collect(),
            theirs,
        ],
        Side::B => [
            theirs,
            mine.into_iter()
                .map(|s| std::sync::Arc::unwrap_or_clone(s.viewed))
                .collect(),
        ],
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
    Ok(Outcome::Accepted(latency))
}

fn expect_event(message: ServerMessage) -> anyhow::Result<protocol::game::view::Viewed> {
    match message {
        ServerMessage::Event(s) => Ok(std::sync::Arc::unwrap_or_clone(s.viewed)),
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

/// Plays `moves` moves in each relay match at once, seats alternating; with `acked` (the
/// durable relay) the sender also reads its acknowledgement, as a player reads `accepted`.
async fn relay_run(
    matches: &mut Vec<[Client; 2]>,
    moves: u64,
    pid: u32,
    acked: bool,
) -> anyhow::Result<Run> {
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
                if acked {
                    let ack = seats[me].recv_raw().await?;
                    if ack != ACK {
                        bail!("the durable relay answered a move with {ack:?}, not its acknowledgement");
                    }
                }
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

/// The pause before each timed sync of the idle-disk floor: about the rest of one game's
/// round trip at N = 1 (the network and the server's own work around its sync).
const GAME_PACE_IDLE: Duration = Duration::from_micros(300);

/// The targets of `matches`, in the order they print.
const TARGETS: [&str; 3] = ["server", "floor", "relay"];

fn ratio_line(label: &str, s: &Summary, r: &Summary) {
    println!(
        "    ratio {label}: moves/s {:.2}x, p50 {:.2}x ({:+.3} ms), CPU/move {:.2}x",
        s.rate / r.rate,
        s.p50 / r.p50,
        s.p50 - r.p50,
        s.cpu_ms / r.cpu_ms
    );
}

/// N matches against the relay and the durable relay (the floor), for each N in `sizes`,
/// `repeats` times interleaved.
pub async fn moves(
    server_bin: &Path,
    sizes: &[usize],
    moves: u64,
    repeats: u32,
    shape: Shape,
    floor_bin: Option<&Path>,
) -> anyhow::Result<()> {
    if moves > crate::table::STEPS_PER_GAME_MIN {
        bail!(
            "--moves {moves}: a run plays one game per match, which has at least {} steps",
            crate::table::STEPS_PER_GAME_MIN
        );
    }
    let scratch = Scratch::new("moves")?;
    let server = start_for(shape, server_bin, &scratch)?;
    let scenario = shape.scenario();
    let tally = Arc::new(Tally::default());
    let floor_data = scratch.path.join("floor-data");
    let floor_server = ServerProcess::durable_relay(&floor_data, floor_bin)?;
    let relay = ServerProcess::relay()?;
    let sync_dir = scratch.path.join("floor");
    let floor = crate::bench::raw_fdatasync_rate(&sync_dir, &relay_frame(), 200)?;
    let sync_after_idle =
        crate::bench::raw_fdatasync_p50_after_idle(&sync_dir, &relay_frame(), 200, GAME_PACE_IDLE)?;
    println!(
        "matches: {moves} moves per match, one in flight per match, send -> opponent's receipt; {repeats} repeats, targets interleaved (order rotated each repeat)"
    );
    println!("  scenario: {}", shape.name());
    println!(
        "  server: asl-server; floor: the relay storing each move in the project's sled store (journal, fdatasync per group) before forwarding it, and acknowledging it; relay: forwarding only"
    );
    println!(
        "  write+fdatasync on this disk (same run): {:.3} ms per sync back to back, p50 {:.3} ms after {} us idle; a `done` is a {} B frame, a {} B stored event",
        1e3 / floor,
        sync_after_idle.as_secs_f64() * 1e3,
        GAME_PACE_IDLE.as_micros(),
        relay_frame().len(),
        crate::bench::step_record().len()
    );
    let mut next_match = 0;
    let mut floor_matches = vec![];
    for &n in sizes {
        let mut runs: [Vec<Run>; 3] = Default::default();
        for repeat in 0..repeats as usize {
            for i in 0..TARGETS.len() {
                let target = (i + repeat) % TARGETS.len();
                let run = if target == 0 {
                    let mut tables = Vec::with_capacity(n);
                    for _ in 0..n {
                        tables.push(Match {
                            table: Table::create_of(server.addr, &scenario).await?,
                            mover: Mover::default(),
                        });
                    }
                    server_run(&mut tables, moves, server.pid(), shape, &tally).await?
                } else {
                    let (process, acked) = if target == 1 {
                        (&floor_server, true)
                    } else {
                        (&relay, false)
                    };
                    let mut matches = relay_matches(process.addr, next_match, n).await?;
                    if acked {
                        floor_matches.extend(next_match..next_match + n as u64);
                    }
                    next_match += n as u64;
                    relay_run(&mut matches, moves, process.pid(), acked).await?
                };
                runs[target].push(run);
            }
        }
        let [s, f, r] = runs.each_mut().map(|runs| summarize(runs));
        println!("  N = {n}:");
        for (name, t) in TARGETS.iter().zip([&s, &f, &r]) {
            println!(
                "    {name:<7} {:.0} moves/s, p50 {:.3} ms, p99 {:.3} ms, CPU {:.4} ms/move",
                t.rate, t.p50, t.p99, t.cpu_ms
            );
        }
        if n == 1 {
            println!(
                "    one game's p50 against the relay's + one sync: server {:.3} ms, floor {:.3} ms; relay + sync {:.3} ms back to back, {:.3} ms after idle",
                s.p50,
                f.p50,
                r.p50 + 1e3 / floor,
                r.p50 + sync_after_idle.as_secs_f64() * 1e3
            );
        }
        ratio_line("server/relay", &s, &r);
        ratio_line("floor/relay ", &f, &r);
        ratio_line("server/floor", &s, &f);
    }
    server.kill()?;
    floor_server.kill()?;
    relay.kill()?;
    if floor_bin.is_none() {
        let stored = floor_stored(&floor_data, &floor_matches, moves)?;
        println!("  the floor's store, opened after the floor was killed: all {stored} acknowledged moves found");
    } else {
        println!("  the floor's store not opened: the floor ran through --floor-bin");
    }
    let refused = tally.refused.load(Ordering::Relaxed);
    println!(
        "  the server's games: {} commands accepted, {} of them moves of a unit; {refused} refused; {} moves not sent (the replica's rules refused them)",
        tally.accepted.load(Ordering::Relaxed),
        tally.unit_moves.load(Ordering::Relaxed),
        tally.skipped.load(Ordering::Relaxed),
    );
    if refused > 0 {
        let first = tally.first_refusal.lock().expect("tally lock").take();
        bail!(
            "the server refused {refused} commands the generator's replica found legal; the first: {}",
            first.unwrap_or_default()
        );
    }
    scratch.remove();
    Ok(())
}

/// Opens the floor's store once the floor is killed and checks that every match in `matches`
/// holds its `moves` acknowledged records: the floor is durable, not just slow. Returns how
/// many records were checked.
fn floor_stored(dir: &Path, matches: &[u64], moves: u64) -> anyhow::Result<u64> {
    let store =
        SledStore::open(dir).map_err(|e| anyhow::anyhow!("opening {}: {e}", dir.display()))?;
    for &game in matches {
        let found = store.load(&durable_key(game))?.len() as u64;
        if found != moves {
            bail!(
                "the floor acknowledged {moves} moves of match {game} but its store holds {found}"
            );
        }
    }
    Ok(matches.len() as u64 * moves)
}

/// The durable relay's key for match `game`.
fn durable_key(game: u64) -> GameKey {
    let mut key = GameKey::default();
    key[..8].copy_from_slice(&game.to_be_bytes());
    key
}

/// Frames the relay queues per connection. One move is in flight per match, so this never
/// fills.
const RELAY_QUEUE: usize = 64;

/// A match's log on the durable relay: its key in the store and the last sequence written. The
/// lock makes each match's appends one writer's, as a game task's are.
type MatchLog = Arc<tokio::sync::Mutex<(GameKey, u64)>>;

/// The bare relay: each connection names its match and seat in its first frame; every later
/// binary frame goes to the other seat of its match, through a queue and a writer task per
/// connection. No rules, no storage, no encoding.
///
/// With `durable`, the floor of a durable referee instead: each frame is first appended to the
/// project's own sled store in that directory (journal record and `fdatasync` per group,
/// sled's insert) and only once that write is durable forwarded to the other seat, and the
/// sender gets an acknowledgement frame — what the server must do for any move, with no rules,
/// chain, signature or encoding.
pub async fn relay_server(listen: SocketAddr, durable: Option<PathBuf>) -> anyhow::Result<()> {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    type Seats = Arc<Mutex<HashMap<u64, ([Option<mpsc::Sender<Message>>; 2], MatchLog)>>>;
    let store = match durable {
        Some(dir) => {
            Some(Arc::new(SledStore::open(&dir).map_err(|e| {
                anyhow::anyhow!("opening {}: {e}", dir.display())
            })?))
        }
        None => None,
    };
    // What the durable relay stores for a move: a stored event of the server's own size, so
    // the journal and sled carry what they carry for the real server.
    let record = crate::bench::step_record();
    let seats: Seats = Arc::default();
    let listener = tokio::net::TcpListener::bind(listen).await?;
    loop {
        let (stream, _) = listener.accept().await?;
        let seats = seats.clone();
        let store = store.clone();
        let record = record.clone();
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
            let log = {
                let mut seats = seats.lock().expect("seats lock");
                let entry = seats.entry(game).or_insert_with(|| {
                    let log = (durable_key(game), 0);
                    ([None, None], Arc::new(tokio::sync::Mutex::new(log)))
                });
                entry.0[seat] = Some(tx);
                entry.1.clone()
            };
            if sink.send(Message::Binary(first)).await.is_err() {
                return;
            }
            let mut other: Option<mpsc::Sender<Message>> = None;
            loop {
                tokio::select! {
                    frame = frames.next() => match frame {
                        Some(Ok(m)) if m.is_binary() => {
                            if let Some(store) = &store {
                                let mut log = log.lock().await;
                                let (key, last) = *log;
                                if store.append(&key, last + 1, vec![record.clone()]).await.is_err() {
                                    break;
                                }
                                log.1 = last + 1;
                            }
                            if other.is_none() {
                                other = seats.lock().expect("seats lock")
                                    .get(&game)
                                    .and_then(|s| s.0[1 - seat].clone());
                            }
                            if let Some(other) = &other {
                                let _ = other.send(m).await;
                            }
                            if store.is_some()
                                && sink.send(Message::Binary(ACK.to_vec().into())).await.is_err()
                            {
                                break;
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

/// The durable relay's acknowledgement to a move's sender.
const ACK: [u8; 8] = *b"accepted";

/// The server under test for `shape`: started with a boards directory of the shape's
/// synthesised archives (`--boards`, in the run's scratch space) when it is on real boards.
pub fn start_for(
    shape: Shape,
    server_bin: &Path,
    scratch: &Scratch,
) -> anyhow::Result<ServerProcess> {
    if shape.boards() == 0 {
        return ServerProcess::start(server_bin, &scratch.data_dir());
    }
    let boards = scratch.path.join("boards");
    shape.synthesise_boards(&boards)?;
    let boards = boards.to_str().context("the scratch path is not UTF-8")?;
    ServerProcess::start_with(server_bin, &scratch.data_dir(), &["--boards", boards])
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

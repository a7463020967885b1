//! The benchmarks that need real websockets: each starts the real server as a child process,
//! drives it over loopback, and measures its baseline in the same run.

use crate::child::{self, Scratch, ServerProcess};
use crate::client::Client;
use crate::stats::{ms, percentile, rss_kib};
use crate::table::Table;
use anyhow::{bail, Context};
use indicatif::{ProgressBar, ProgressStyle};
use protocol::event::{GameCreated, StepEnded};
use protocol::phase::Clock;
use protocol::wire::{self, Sequenced, ServerMessage};
use protocol::ReadScenario;
use protocol::{Event, Side, Viewer};
use server::store::envelope::{self, GameMeta, META_FORMAT};
use server::store::{EventStore, SledStore};
use std::fs::File;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

pub(crate) fn bar(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(len).with_message(what.to_string());
    bar.set_style(
        ProgressStyle::with_template("{msg:>24} [{bar:40}] {pos}/{len} {elapsed}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    bar
}

/// One `done`'s event as the store holds it: the size the raw baseline writes.
pub fn step_record() -> Vec<u8> {
    let event = Event::StepEnded(StepEnded {
        by: Side::A,
        ended: Clock::START,
        next: Clock::START,
    });
    envelope::encode(2, envelope::GENESIS, &event).0
}

/// The raw baseline for durable appends: `count` inserts of `record` under 24-byte keys, each
/// followed by a flush, into a fresh sled beside the server's data. Per second.
pub fn raw_sled_flush_rate(dir: &Path, record: &[u8], count: u64) -> anyhow::Result<f64> {
    let db = sled::Config::new().path(dir).open()?;
    let tree = db.open_tree("events")?;
    let start = Instant::now();
    for seq in 0..count {
        let mut key = [7u8; 24];
        key[16..].copy_from_slice(&seq.to_be_bytes());
        tree.insert(&key[..], record)?;
        db.flush()?;
    }
    Ok(count as f64 / start.elapsed().as_secs_f64())
}

/// A file of `name` in `dir` with room for `count` writes of `record`, written full of zeros
/// and synced beforehand (as sled's segments and the journal are, so no sync has to commit a
/// new file size): where the floors below write.
fn preallocated(dir: &Path, name: &str, record: &[u8], count: u64) -> anyhow::Result<File> {
    use std::io::Write;
    std::fs::create_dir_all(dir)?;
    let mut file = File::create(dir.join(name))?;
    file.write_all(&vec![0u8; record.len() * count as usize])?;
    file.sync_all()?;
    Ok(file)
}

/// Write `i` of `record` into a [`preallocated`] file, then `fdatasync`: what a durable
/// write costs at the least.
fn write_and_sync(file: &File, record: &[u8], i: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.write_all_at(record, i * record.len() as u64)?;
    file.sync_data()
}

/// The floor for any durable write on this disk: `count` writes of `record`, one after
/// another into a [`preallocated`] file, each followed by `fdatasync`; beside the server's
/// data. Per second.
pub fn raw_fdatasync_rate(dir: &Path, record: &[u8], count: u64) -> anyhow::Result<f64> {
    let file = preallocated(dir, "fdatasync-floor", record, count)?;
    let start = Instant::now();
    for i in 0..count {
        write_and_sync(&file, record, i)?;
    }
    Ok(count as f64 / start.elapsed().as_secs_f64())
}

/// The median write + `fdatasync` of `record` when the disk was left idle for `idle` before
/// each: one game's commands come a network round trip apart, and a virtual disk answers a
/// sync after a pause more slowly than one right after another (BENCHMARKS.md, ninth pass).
pub fn raw_fdatasync_p50_after_idle(
    dir: &Path,
    record: &[u8],
    count: u64,
    idle: Duration,
) -> anyhow::Result<Duration> {
    let file = preallocated(dir, "fdatasync-idle", record, count)?;
    let mut times = Vec::with_capacity(count as usize);
    for i in 0..count {
        std::thread::sleep(idle);
        let start = Instant::now();
        write_and_sync(&file, record, i)?;
        times.push(start.elapsed());
    }
    times.sort();
    Ok(times[times.len() / 2])
}

/// Durable appends through the whole server: one game, `commands` `done`s one after another,
/// each acknowledged only after its flush; against raw sled insert+flush of the same record.
pub async fn append(server_bin: &Path, commands: u64) -> anyhow::Result<()> {
    let scratch = Scratch::new("append")?;
    let server = ServerProcess::start(server_bin, &scratch.data_dir())?;
    let progress = bar(commands, "durable append");
    let mut table = Table::create(server.addr).await?;
    let start = Instant::now();
    for id in 0..commands {
        if table.replica.over {
            table = Table::create(server.addr).await?;
        }
        table
            .done(id)
            .await?
            .result
            .map_err(|v| anyhow::anyhow!("refused: {v}"))?;
        progress.inc(1);
    }
    let served = commands as f64 / start.elapsed().as_secs_f64();
    progress.finish_and_clear();
    server.kill()?;
    let record = step_record();
    let raw = raw_sled_flush_rate(&scratch.path.join("raw"), &record, commands)?;
    let floor = raw_fdatasync_rate(&scratch.path.join("floor"), &record, commands)?;
    println!(
        "durable append, one game, {commands} commands ({} B events)",
        record.len()
    );
    println!(
        "  server: {served:.0} commands/s acknowledged after its journal record and fdatasync"
    );
    println!("  raw sled insert+flush (no fdatasync): {raw:.0} /s");
    println!("  raw write+fdatasync (the floor): {floor:.0} /s");
    println!(
        "  ratio: {:.2}x of sled insert+flush, {:.2}x of the fdatasync floor",
        served / raw,
        served / floor
    );
    scratch.remove();
    Ok(())
}

/// Many games at once: throughput with group commit, and the latency from a command's send
/// to the opponent receiving its event.
pub async fn games(server_bin: &Path, games: usize, commands: u64) -> anyhow::Result<()> {
    let scratch = Scratch::new("games")?;
    let server = ServerProcess::start(server_bin, &scratch.data_dir())?;
    let addr = server.addr;
    let setup = bar(games as u64, "seating games");
    let mut tables = Vec::with_capacity(games);
    for _ in 0..games {
        tables.push(Table::create(addr).await?);
        setup.inc(1);
    }
    setup.finish_and_clear();
    let progress = bar(games as u64 * commands, "commands");
    let (samples_tx, mut samples_rx) = mpsc::unbounded_channel();
    let start = Instant::now();
    let mut running = tokio::task::JoinSet::new();
    for mut table in tables {
        let (samples, progress) = (samples_tx.clone(), progress.clone());
        running.spawn(async move {
            for id in 0..commands {
                if table.replica.over {
                    table = Table::create(addr).await?;
                }
                let sent = Instant::now();
                let played = table.done(id).await?;
                if let Err(refused) = played.result {
                    bail!("game {}: a step was refused: {refused}", table.game);
                }
                if let Some(at) = played.opponent_at {
                    let _ = samples.send(at - sent);
                }
                progress.inc(1);
            }
            anyhow::Ok(())
        });
    }
    drop(samples_tx);
    while let Some(finished) = running.join_next().await {
        finished??;
    }
    let elapsed = start.elapsed();
    progress.finish_and_clear();
    server.kill()?;
    let mut samples = vec![];
    while let Some(s) = samples_rx.recv().await {
        samples.push(s);
    }
    let total = games as f64 * commands as f64;
    let rate = total / elapsed.as_secs_f64();
    let raw_count = 500;
    let raw = raw_sled_flush_rate(&scratch.path.join("raw"), &step_record(), raw_count)?;
    let floor = raw_fdatasync_rate(&scratch.path.join("floor"), &step_record(), raw_count)?;
    println!("{games} concurrent games, {commands} commands each (group commit)");
    println!("  server: {rate:.0} commands/s acknowledged after its journal record and fdatasync");
    println!("  raw sled insert+flush, one event per flush: {raw:.0} /s ({raw_count} flushes)");
    println!(
        "  raw write+fdatasync, one event per sync (the floor): {floor:.0} /s ({raw_count} syncs)"
    );
    println!(
        "  ratio: {:.1}x of sled insert+flush, {:.1}x of the fdatasync floor (goal >= 10x)",
        rate / raw,
        rate / floor
    );
    println!(
        "  command -> opponent receives: p50 {} p99 {} max {} ({} samples; goal p99 <= 5 ms)",
        ms(percentile(&mut samples, 50.0)),
        ms(percentile(&mut samples, 99.0)),
        ms(percentile(&mut samples, 100.0)),
        samples.len()
    );
    scratch.remove();
    Ok(())
}

/// Opens `count` connections and runs `join` on each, `parallel` at a time.
async fn connect_many<F, Fut>(count: usize, what: &str, join: F) -> anyhow::Result<Vec<Client>>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<Client>> + Send + 'static,
{
    /// Handshakes in flight at once: enough to fill both cores, few enough not to overflow
    /// the listen backlog.
    const CONNECTING_MAX: usize = 64;
    let progress = bar(count as u64, what);
    let mut clients = Vec::with_capacity(count);
    let mut pending = tokio::task::JoinSet::new();
    for _ in 0..count {
        if pending.len() >= CONNECTING_MAX {
            clients.push(pending.join_next().await.expect("pending")??);
            progress.inc(1);
        }
        pending.spawn(join());
    }
    while let Some(client) = pending.join_next().await {
        clients.push(client??);
        progress.inc(1);
    }
    progress.finish_and_clear();
    Ok(clients)
}

/// Starts a reader per client that reports `(seq, when)` for each broadcast it receives.
fn listen(
    clients: Vec<Client>,
    decode: fn(&ServerMessage) -> Option<u64>,
) -> mpsc::UnboundedReceiver<(u64, Instant)> {
    let (tx, rx) = mpsc::unbounded_channel();
    for mut client in clients {
        let tx = tx.clone();
        tokio::spawn(async move {
            while let Ok(message) = client.recv().await {
                if let Some(seq) = decode(&message) {
                    if tx.send((seq, Instant::now())).is_err() {
                        break;
                    }
                }
            }
        });
    }
    rx
}

fn event_seq(message: &ServerMessage) -> Option<u64> {
    match message {
        ServerMessage::Event(Sequenced { seq, .. }) => Some(*seq),
        _ => None,
    }
}

/// Waits until `count` receipts of `seq` arrived; returns the last arrival.
async fn last_arrival(
    receipts: &mut mpsc::UnboundedReceiver<(u64, Instant)>,
    seq: u64,
    count: usize,
) -> anyhow::Result<Instant> {
    let mut seen = 0;
    let mut last = None;
    while seen < count {
        let (s, at) = tokio::time::timeout(crate::client::REPLY_WAIT_MAX, receipts.recv())
            .await
            .context("spectators stopped receiving")?
            .context("every spectator reader ended")?;
        if s == seq {
            seen += 1;
            last = Some(at);
        }
    }
    last.context("no spectator")
}

/// One move to `spectators` watchers: time until the last receives it, against a bare
/// tokio-tungstenite broadcast of a frame of the same size to as many connections.
/// Joins `count` spectators to the table's game, each on its own connection.
async fn seat_spectators(
    game: &str,
    token: &str,
    addr: SocketAddr,
    count: usize,
) -> anyhow::Result<Vec<Client>> {
    connect_many(count, "spectators joining", || {
        let (game, token) = (game.to_string(), token.to_string());
        async move { Ok(Client::seat(addr, &game, &token).await?.0) }
    })
    .await
}

/// Times `moves` of the acting player's steps, each from send to its acknowledgement.
async fn round_trips(table: &mut Table, moves: u64, what: &str) -> anyhow::Result<Vec<Duration>> {
    round_trips_of(table, 0, moves, what).await
}

/// [`round_trips`] with command ids from `first`.
pub async fn round_trips_of(
    table: &mut Table,
    first: u64,
    moves: u64,
    what: &str,
) -> anyhow::Result<Vec<Duration>> {
    let progress = bar(moves, what);
    let mut times = Vec::with_capacity(moves as usize);
    for id in first..first + moves {
        let sent = Instant::now();
        table.done(id).await?;
        times.push(sent.elapsed());
        progress.inc(1);
    }
    progress.finish_and_clear();
    Ok(times)
}

/// What spectators cost the players: the same steps timed in a game nobody watches and in one
/// watched by `spectators` readers plus one connection that never reads, which the server must
/// cut off rather than wait for.
pub async fn spectator_impact(
    server_bin: &Path,
    spectators: usize,
    moves: u64,
) -> anyhow::Result<()> {
    let scratch = Scratch::new("impact")?;
    let server = ServerProcess::start(server_bin, &scratch.data_dir())?;
    let addr = server.addr;

    let mut unwatched = Table::create(addr).await?;
    let mut quiet = round_trips(&mut unwatched, moves, "no spectators").await?;

    let mut table = Table::create(addr).await?;
    // The audience runs on a runtime of its own (one thread, its own sockets and event loop),
    // as it would on other machines: the players' round trips never wait in the same task
    // queue as 500 readers, only for the CPU the kernel gives each thread.
    let audience = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("audience")
        .enable_all()
        .build()?;
    let (game, token) = (
        table.game.clone(),
        table.viewer_token(Viewer::Spectator).to_string(),
    );
    let receipts = audience
        .spawn(async move {
            let watchers = seat_spectators(&game, &token, addr, spectators).await?;
            anyhow::Ok(listen(watchers, event_seq))
        })
        .await??;
    let (stalled, _) =
        Client::seat(addr, &table.game, table.viewer_token(Viewer::Spectator)).await?;
    let mut busy = round_trips(&mut table, moves, "watched, one stalled").await?;
    drop(receipts);
    audience.shutdown_background();
    server.kill()?;
    drop(stalled);

    let (q50, q99) = (percentile(&mut quiet, 50.0), percentile(&mut quiet, 99.0));
    let (b50, b99) = (percentile(&mut busy, 50.0), percentile(&mut busy, 99.0));
    println!(
        "spectator impact: {moves} player steps, alone and watched by {spectators} readers + 1 that never reads"
    );
    println!(
        "  no spectators: command round trip p50 {} p99 {}",
        ms(q50),
        ms(q99)
    );
    println!(
        "  watched:       command round trip p50 {} p99 {}",
        ms(b50),
        ms(b99)
    );
    println!(
        "  ratio (watched time / unwatched time): p50 {:.2}x p99 {:.2}x (goal <= 2x)",
        b50.as_secs_f64() / q50.as_secs_f64(),
        b99.as_secs_f64() / q99.as_secs_f64()
    );
    if let Some(cpus) = child::SERVER_CPUS.get() {
        println!("  server pinned to CPUs {cpus} (taskset)");
    }
    scratch.remove();
    Ok(())
}

pub async fn fanout(server_bin: &Path, spectators: usize, moves: u64) -> anyhow::Result<()> {
    let scratch = Scratch::new("fanout")?;
    let server = ServerProcess::start(server_bin, &scratch.data_dir())?;
    let addr = server.addr;
    let mut table = Table::create(addr).await?;
    let watchers = seat_spectators(
        &table.game,
        table.viewer_token(Viewer::Spectator),
        addr,
        spectators,
    )
    .await?;
    let mut receipts = listen(watchers, event_seq);
    let progress = bar(moves, "server fan-out");
    let mut ours = vec![];
    for id in 0..moves {
        let sent = Instant::now();
        table.done(id).await?;
        let last = last_arrival(&mut receipts, table.replica.version, spectators).await?;
        ours.push(last - sent);
        progress.inc(1);
    }
    progress.finish_and_clear();
    let rss = rss_kib(server.pid())?;
    server.kill()?;
    drop(receipts);

    // The baseline forwards the very frame the spectators received from the server.
    let frame = |seq| {
        wire::to_bincode(&ServerMessage::Event(Sequenced {
            seq,
            viewed: protocol::game::view::Viewed {
                event: Event::StepEnded(StepEnded {
                    by: Side::A,
                    ended: Clock::START,
                    next: Clock::START,
                }),
                renamed: vec![],
                weapons: vec![],
            }
            .into(),
            hash: protocol::record::stream::StreamHash::default(),
        }))
    };
    let baseline = ServerProcess::baseline()?;
    let baddr = baseline.addr;
    let watchers = connect_many(spectators, "baseline connecting", || async move {
        Client::connect(baddr).await
    })
    .await?;
    let mut receipts = listen(watchers, event_seq);
    let mut trigger = Client::connect(baddr).await?;
    let mut bare = vec![];
    let progress = bar(moves, "bare broadcast");
    for round in 0..moves {
        let sent = Instant::now();
        trigger.send_raw(frame(round)).await?;
        let last = last_arrival(&mut receipts, round, spectators).await?;
        bare.push(last - sent);
        progress.inc(1);
    }
    progress.finish_and_clear();
    baseline.kill()?;
    let (ours50, ours99) = (percentile(&mut ours, 50.0), percentile(&mut ours, 99.0));
    let (bare50, bare99) = (percentile(&mut bare, 50.0), percentile(&mut bare, 99.0));
    println!(
        "fan-out: one move to {spectators} spectators, {moves} moves, {} B frames",
        frame(2).len()
    );
    println!(
        "  server: last spectator after p50 {} p99 {}",
        ms(ours50),
        ms(ours99)
    );
    println!(
        "  bare tokio-tungstenite broadcast: p50 {} p99 {}",
        ms(bare50),
        ms(bare99)
    );
    println!(
        "  ratio (baseline time / server time): p50 {:.2}x p99 {:.2}x (goal >= 0.8x, p99 <= 50 ms)",
        bare50.as_secs_f64() / ours50.as_secs_f64(),
        bare99.as_secs_f64() / ours99.as_secs_f64()
    );
    println!(
        "  server RSS with {spectators} spectators joined: {} KiB",
        rss
    );
    scratch.remove();
    Ok(())
}

/// Lets the server settle (allocations returned, lazy pages touched) before reading its RSS.
async fn settled_rss(pid: u32) -> anyhow::Result<u64> {
    tokio::time::sleep(Duration::from_millis(500)).await;
    rss_kib(pid)
}

/// RSS per idle game and per spectator connection, and a restarted server's RSS with those
/// games stored but not loaded. On a real-board `shape` the server is given the shape's
/// boards, and one game of it is created and played a few commands (so its boards are read
/// and its map built and shared) before the empty figure is read: the figure per game is
/// then what each further game holds beyond the shared boards.
pub async fn memory(
    server_bin: &Path,
    games: usize,
    spectators: usize,
    shape: crate::shapes::Shape,
) -> anyhow::Result<()> {
    let scratch = Scratch::new("memory")?;
    let server = crate::moves::start_for(shape, server_bin, &scratch)?;
    let addr = server.addr;
    let text = Arc::new(shape.scenario());
    let first =
        if shape.boards() > 0 {
            let mut first = Table::create_of(addr, &text).await?;
            let mut mover = crate::shapes::Mover::default();
            for id in 0..FIRST_GAME_COMMANDS {
                let (side, command) = mover.next(shape, &first.replica, &first.replica_b);
                first.play(id, side, command).await?.result.map_err(|v| {
                    anyhow::anyhow!("the first game's command {id} was refused: {v}")
                })?;
            }
            Some(first)
        } else {
            None
        };
    let empty = settled_rss(server.pid()).await?;
    // Creations over a few connections at once, as they would come from many clients.
    const CREATORS: usize = 8;
    let progress = bar(games as u64, "creating idle games");
    let mut creators = tokio::task::JoinSet::new();
    for n in 0..CREATORS {
        let progress = progress.clone();
        let text = text.clone();
        let share = games / CREATORS + usize::from(n < games % CREATORS);
        creators.spawn(async move {
            // A connection per creation: one connection's creations are rate limited
            // (`attempts_per_second_max`), as a client's would be.
            for _ in 0..share {
                Client::connect(addr).await?.create(&text).await?;
                progress.inc(1);
            }
            anyhow::Ok(())
        });
    }
    while let Some(done) = creators.join_next().await {
        done??;
    }
    progress.finish_and_clear();
    let with_games = settled_rss(server.pid()).await?;
    let table = Table::create(addr).await?;
    let (game, token) = (
        table.game.clone(),
        table.viewer_token(Viewer::Spectator).to_string(),
    );
    let before_spectators = settled_rss(server.pid()).await?;
    let watchers = connect_many(spectators, "spectators joining", || {
        let (game, token) = (game.clone(), token.clone());
        async move { Ok(Client::seat(addr, &game, &token).await?.0) }
    })
    .await?;
    let with_spectators = settled_rss(server.pid()).await?;
    drop(watchers);
    drop(first);
    server.kill()?;
    let restarted = crate::moves::start_for(shape, server_bin, &scratch)?;
    let stored = settled_rss(restarted.pid()).await?;
    restarted.kill()?;
    let per_game = (with_games.saturating_sub(empty)) as f64 / games as f64;
    println!(
        "memory (server RSS from /proc/PID/status), scenario {}",
        shape.name()
    );
    if shape.boards() > 0 {
        println!(
            "  empty server, then one game of the scenario created and {FIRST_GAME_COMMANDS} commands played (its boards read, its map shared): {empty} KiB"
        );
        println!("  {games} idle games created: {with_games} KiB -> {per_game:.1} KiB per idle game beyond the shared boards (goal <= 256 KiB)");
    } else {
        println!("  empty server: {empty} KiB");
        println!("  {games} idle games created: {with_games} KiB -> {per_game:.1} KiB per idle game (goal <= 64 KiB)");
    }
    if spectators > 0 {
        let per_spectator =
            (with_spectators.saturating_sub(before_spectators)) as f64 / spectators as f64;
        println!(
            "  {spectators} spectators joined to one game: {before_spectators} -> {with_spectators} KiB -> {per_spectator:.1} KiB per spectator (goal <= 32 KiB)"
        );
    }
    println!(
        "  restarted with those {} games stored, none loaded: {stored} KiB",
        games + 1 + usize::from(shape.boards() > 0)
    );
    scratch.remove();
    Ok(())
}

/// Commands played in the first game of a real-board scenario before the memory baseline:
/// past its first Movement Phase, so its moves have asked the map.
const FIRST_GAME_COMMANDS: u64 = 20;

/// Writes `games` finished two-turn games straight into a sled store at `dir`, each with
/// known tokens (`{n}-a`, `{n}-b`, `{n}-s`), as a server would have left them.
fn populate(dir: &Path, games: usize) -> anyhow::Result<u64> {
    let scenario =
        protocol::Scenario::from_toml(include_str!("../../scenarios/b9-41-wall-advantage.toml"))?;
    let mut events = vec![Event::GameCreated(GameCreated { scenario })];
    let mut game = protocol::Game::replay(&events).map_err(|e| anyhow::anyhow!("{e}"))?;
    while !game.over {
        let (side, command) = protocol::rules::moving_on(&game);
        let step = protocol::decide(
            &game,
            side,
            &command,
            &mut protocol::ScriptedDice::default(),
        )
        .map_err(|v| anyhow::anyhow!("{v}"))?;
        for e in step {
            protocol::apply(&mut game, &e);
            events.push(e);
        }
    }
    let mut prev = envelope::GENESIS;
    let records: Vec<Vec<u8>> = events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let (bytes, hash) = envelope::encode(i as u64 + 1, prev, e);
            prev = hash;
            bytes
        })
        .collect();
    let store = SledStore::open(dir)?;
    let progress = bar(games as u64, "writing games");
    let mut pending = Vec::with_capacity(2 * games);
    for n in 0..games {
        let key = game_key(n);
        let digest = |t: String| *blake3::hash(t.as_bytes()).as_bytes();
        let meta = GameMeta {
            format: META_FORMAT,
            token_digests: [
                digest(format!("{n}-a")),
                digest(format!("{n}-b")),
                digest(format!("{n}-s")),
            ],
            seeds: vec![[n as u8; 32]],
        };
        pending.push(store.put_meta(&key, meta.encode()));
        pending.push(store.append(&key, 1, records.clone()));
        progress.inc(1);
    }
    for write in pending {
        write.wait()?;
    }
    progress.finish_and_clear();
    Ok(records.len() as u64)
}

fn game_key(n: usize) -> server::store::GameKey {
    let mut key = [0x5a; 16];
    key[8..].copy_from_slice(&(n as u64).to_be_bytes());
    key
}

/// Cold start: a server over `games` stored games, timed from spawn to listening and to the
/// first join answered (which loads that game).
pub async fn cold_start(server_bin: &Path, games: usize) -> anyhow::Result<()> {
    let scratch = Scratch::new("cold")?;
    let dir = scratch.data_dir();
    let events = tokio::task::spawn_blocking(move || populate(&dir, games)).await??;
    let spawned = Instant::now();
    let server = ServerProcess::start(server_bin, &scratch.data_dir())?;
    let listening = spawned.elapsed();
    let last = games - 1;
    let (_client, joined) = Client::seat(
        server.addr,
        &envelope::game_id(&game_key(last)),
        &format!("{last}-s"),
    )
    .await?;
    let serving = spawned.elapsed();
    if joined.version != events {
        bail!(
            "game {last} came back at version {} instead of {events}",
            joined.version
        );
    }
    let start = Instant::now();
    let (_second, _) = Client::seat(
        server.addr,
        &envelope::game_id(&game_key(games / 2)),
        &format!("{}-a", games / 2),
    )
    .await?;
    let another = start.elapsed();
    let rss = rss_kib(server.pid())?;
    server.kill()?;
    println!("cold start with {games} games on disk ({events} events each)");
    println!("  spawn -> listening: {}", ms(listening));
    println!(
        "  spawn -> first join answered (that game loaded): {} (goal <= 2 s)",
        ms(serving)
    );
    println!("  join of another cold game: {}", ms(another));
    println!("  RSS after two games loaded: {rss} KiB");
    scratch.remove();
    Ok(())
}

/// The bare broadcast baseline: every binary frame any connection sends is sent to every
/// connection, through one tokio broadcast channel and a task per connection — a websocket
/// fan-out with nothing else around it.
pub async fn baseline_server(listen: SocketAddr) -> anyhow::Result<()> {
    use futures_util::{SinkExt, StreamExt};
    use tokio::sync::broadcast;
    use tokio_tungstenite::tungstenite::Message;
    /// Frames the baseline queues per connection; a round is one frame, so this never fills.
    const BASELINE_QUEUE: usize = 256;
    let listener = tokio::net::TcpListener::bind(listen).await?;
    let (tx, _) = broadcast::channel::<Message>(BASELINE_QUEUE);
    let tx = Arc::new(tx);
    loop {
        let (stream, _) = listener.accept().await?;
        let tx = tx.clone();
        let mut rx = tx.subscribe();
        tokio::spawn(async move {
            let Some(ws) = crate::client::accept(stream).await else {
                return;
            };
            let (mut sink, mut frames) = ws.split();
            loop {
                tokio::select! {
                    frame = frames.next() => match frame {
                        Some(Ok(m)) if m.is_binary() => { let _ = tx.send(m); }
                        Some(Ok(_)) => {}
                        _ => break,
                    },
                    m = rx.recv() => match m {
                        Ok(m) => if sink.send(m).await.is_err() { break },
                        Err(broadcast::error::RecvError::Lagged(_)) => continue,
                        Err(broadcast::error::RecvError::Closed) => break,
                    },
                }
            }
        });
    }
}

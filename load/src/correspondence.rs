//! A server full of correspondence games (issue 55): tens of thousands of games under a
//! running clock in the store, nobody connected, and the figures an operator of such a server
//! cares about — cold start to serving, resident memory, how late each clock's running out is
//! recorded, and what a burst of turn notices costs the server per notice against a bare HTTP
//! POST loop to the same receiver.
//!
//! The games are written through the server's own store and envelope code (`SledStore`,
//! `envelope::seal_entry`), each log a `GameCreated` and the server's `ClockStarted`, as
//! `Registry::create_timed` leaves it. The expiring games' clocks are started in the past so
//! that their deadlines fall at known moments spread over the run; the others hold a
//! correspondence clock with days left. Everything after that goes through the running
//! server: the webhook registrations and the hand-overs are sent over websockets, and the
//! expiries are read back from the store the server wrote.

use crate::child::{Scratch, ServerProcess};
use crate::client::Client;
use crate::stats::{cpu_nanos, ms, percentile, rss_kib};
use anyhow::{anyhow, bail, Context};
use protocol::board::time_control::TimeControl;
use protocol::chain::Entry;
use protocol::event::{ClockExpired, ClockStarted, GameCreated};
use protocol::wire::{ClientMessage, NotifyTarget, ServerMessage};
use protocol::{Command, Event, ReadScenario, Side};
use server::store::envelope::{self, GameMeta, META_FORMAT};
use server::store::{EventStore, GameKey, SledStore};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Semaphore;

/// The scenario every synthesised game plays: the project's walkthrough (4 units).
const SCENARIO: &str = include_str!("../../scenarios/b9-41-wall-advantage.toml");

/// The live bank of an expiring game. Its clock is started this long before its deadline.
const EXPIRING_BANK_MS: u64 = 10 * 60 * 1000;

/// Requests in flight at once from the drill (registrations, hand-overs) and from the bare
/// POST loop: the server's own cap on deliveries at once (`DELIVERIES_AT_ONCE_MAX` in
/// `server/src/notify/worker.rs`), so both sides of the comparison keep as many requests open.
const AT_ONCE: usize = 64;

/// How long the drill waits for the notices of the burst after their quiet interval.
const NOTICES_WAIT_MAX: Duration = Duration::from_secs(180);

pub struct Options {
    pub server_bin: PathBuf,
    /// Games in the store, every one under a running clock.
    pub games: usize,
    /// Of those, how many run out during the run.
    pub expiring: usize,
    /// Of the others, how many are handed over in the burst (one hand-over each).
    pub handovers: usize,
    /// The first deadline comes this long after the synthesis starts.
    pub lead: Duration,
    /// The deadlines are spread evenly over this long.
    pub spread: Duration,
    /// The server's quiet interval for notices (`--notify-quiet-s`): long enough that the
    /// whole burst of hand-overs is made before the first notice goes.
    pub quiet: Duration,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The store key of synthesised game `n`, apart from the other drills' keys.
pub fn game_key(n: usize) -> GameKey {
    let mut key = [0xc0; 16];
    key[8..].copy_from_slice(&(n as u64).to_be_bytes());
    key
}

/// The tokens of game `n`: `{n}-a`, `{n}-b`, `{n}-s`.
fn token(n: usize, viewer: protocol::Viewer) -> String {
    match viewer {
        protocol::Viewer::Side(Side::A) => format!("{n}-a"),
        protocol::Viewer::Side(Side::B) => format!("{n}-b"),
        protocol::Viewer::Spectator => format!("{n}-s"),
    }
}

/// What each synthesised game is: an expiring one has a deadline (ms since the epoch).
pub struct Plan {
    pub deadlines: Vec<u64>,
    pub games: usize,
}

impl Plan {
    /// `expiring` deadlines evenly from `first` over `spread`, for games `0..expiring`.
    pub fn new(games: usize, expiring: usize, first: u64, spread: Duration) -> Plan {
        let spread = spread.as_millis() as u64;
        let deadlines = (0..expiring as u64)
            .map(|i| first + i * spread / (expiring as u64).max(1))
            .collect();
        Plan { deadlines, games }
    }

    /// The clock game `n` is started under, and when.
    fn clock(&self, n: usize, now: u64) -> (TimeControl, u64) {
        match self.deadlines.get(n) {
            Some(deadline) => (
                TimeControl::Live {
                    bank: EXPIRING_BANK_MS,
                    increment: 0,
                },
                deadline - EXPIRING_BANK_MS,
            ),
            None => (
                TimeControl::parse("correspondence:12h/5d").expect("a valid time control"),
                now,
            ),
        }
    }
}

/// Writes the plan's games into a sled store at `dir` through the server's store and envelope
/// code: `GameCreated` and `ClockStarted` sealed as `Registry::create_timed` seals them.
pub fn synthesise(dir: &Path, plan: &Plan) -> anyhow::Result<()> {
    let scenario = protocol::Scenario::from_toml(SCENARIO)?;
    let created = Entry::created(scenario);
    let (created_record, head) = envelope::seal_entry(envelope::GENESIS, [0; 16], &created);
    let store = SledStore::open(dir)?;
    let progress = crate::bench::bar(plan.games as u64, "writing timed games");
    let now = now_ms();
    let mut pending = Vec::with_capacity(2 * plan.games);
    for n in 0..plan.games {
        let key = game_key(n);
        let digest = |t: String| *blake3::hash(t.as_bytes()).as_bytes();
        let meta = GameMeta {
            format: META_FORMAT,
            token_digests: [
                digest(token(n, protocol::Viewer::Side(Side::A))),
                digest(token(n, protocol::Viewer::Side(Side::B))),
                digest(token(n, protocol::Viewer::Spectator)),
            ],
            seeds: vec![[n as u8; 32]],
        };
        let (control, at) = plan.clock(n, now);
        let mut salt = [0u8; 16];
        salt[..8].copy_from_slice(&(n as u64).to_le_bytes());
        let (started, _) = envelope::seal_entry(head, salt, &Entry::clock_started(control, at));
        pending.push(store.put_meta(&key, meta.encode()));
        pending.push(store.append(&key, 1, vec![created_record.clone(), started]));
        // Bounded: a write's memory is let go once it is durable.
        if pending.len() >= 4_096 {
            for write in pending.drain(..) {
                write.wait()?;
            }
        }
        progress.inc(1);
    }
    for write in pending {
        write.wait()?;
    }
    progress.finish_and_clear();
    Ok(())
}

/// The commands that bring a freshly timed game to its first hand-over, the last of them
/// handing over: each by the side the game waits on, so the other side's seat is away
/// throughout. Worked out on the game itself, as the server will decide them.
pub fn to_first_handover() -> anyhow::Result<(Side, Vec<Command>)> {
    let scenario = protocol::Scenario::from_toml(SCENARIO)?;
    let control = TimeControl::parse("correspondence:12h/5d")?;
    let events = [
        Event::GameCreated(GameCreated { scenario }),
        Event::ClockStarted(ClockStarted { control, at: 0 }),
    ];
    let mut game = protocol::Game::replay(&events).map_err(|e| anyhow!("{e}"))?;
    let waiting = protocol::game::timing::awaited(&game)
        .ok_or_else(|| anyhow!("the scenario waits on nobody at its start"))?;
    let mut commands = Vec::new();
    while !game.over && commands.len() < 100 {
        let (side, command) = protocol::rules::moving_on(&game);
        if side != waiting {
            bail!("the game waits on {waiting:?} but {side:?} moves it on");
        }
        let step = protocol::decide(
            &game,
            side,
            &command,
            &mut protocol::ScriptedDice::default(),
        )
        .map_err(|v| anyhow!("{v}"))?;
        for e in &step {
            protocol::apply(&mut game, e);
        }
        commands.push(command);
        if protocol::game::timing::awaited(&game) != Some(waiting) {
            return Ok((waiting, commands));
        }
    }
    bail!("no hand-over in the scenario's first 100 commands")
}

/// Reads the server's `/metrics` line `name` (a gauge or counter without labels).
async fn metric(server: SocketAddr, name: &str) -> Option<f64> {
    let mut stream = tokio::net::TcpStream::connect(server).await.ok()?;
    let request = format!(
        "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\nConnection: close\r\n\r\n",
        crate::child::LOAD_METRICS_TOKEN
    );
    stream.write_all(request.as_bytes()).await.ok()?;
    let mut body = String::new();
    let _ = stream.read_to_string(&mut body).await;
    body.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

/// The webhook receiver (`asl-load webhook-sink`): answers every POST `204` and counts it;
/// `GET /count` answers the count and the last body's length. HTTP/1.1 with keep-alive,
/// read by hand: the least a receiver can do, so it costs either sender the same.
pub async fn webhook_sink(listen: SocketAddr) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(listen).await?;
    let posts = Arc::new(AtomicU64::new(0));
    let last_len = Arc::new(AtomicU64::new(0));
    loop {
        let (stream, _) = listener.accept().await?;
        let (posts, last_len) = (posts.clone(), last_len.clone());
        tokio::spawn(async move {
            let _ = serve_sink(stream, &posts, &last_len).await;
        });
    }
}

/// Header bytes a sink request may have before the connection is dropped.
const SINK_HEAD_MAX: usize = 64 * 1024;

async fn serve_sink(
    mut stream: tokio::net::TcpStream,
    posts: &AtomicU64,
    last_len: &AtomicU64,
) -> anyhow::Result<()> {
    let _ = stream.set_nodelay(true);
    let mut buffer = Vec::with_capacity(4096);
    let mut chunk = [0u8; 8192];
    loop {
        let head_end = loop {
            if let Some(i) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            if buffer.len() > SINK_HEAD_MAX {
                bail!("a request head over {SINK_HEAD_MAX} bytes");
            }
            let n = stream.read(&mut chunk).await?;
            if n == 0 {
                return Ok(());
            }
            buffer.extend_from_slice(&chunk[..n]);
        };
        let head = String::from_utf8_lossy(&buffer[..head_end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .map(|v| v.trim().parse())
            .transpose()?
            .unwrap_or(0);
        while buffer.len() < head_end + length {
            let n = stream.read(&mut chunk).await?;
            if n == 0 {
                return Ok(());
            }
            buffer.extend_from_slice(&chunk[..n]);
        }
        let reply = if head.starts_with("post ") {
            posts.fetch_add(1, Ordering::Relaxed);
            last_len.store(length as u64, Ordering::Relaxed);
            "HTTP/1.1 204 No Content\r\n\r\n".to_string()
        } else {
            let body = format!(
                "{} {}",
                posts.load(Ordering::Relaxed),
                last_len.load(Ordering::Relaxed)
            );
            format!(
                "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            )
        };
        stream.write_all(reply.as_bytes()).await?;
        buffer.drain(..head_end + length);
    }
}

/// The sink's count of POSTs and the last body's length.
async fn sink_count(http: &reqwest::Client, sink: SocketAddr) -> anyhow::Result<(u64, u64)> {
    let text = http
        .get(format!("http://{sink}/count"))
        .send()
        .await?
        .text()
        .await?;
    let mut parts = text.split(' ').map(str::parse::<u64>);
    match (parts.next(), parts.next()) {
        (Some(Ok(count)), Some(Ok(len))) => Ok((count, len)),
        _ => bail!("the sink answered `{text}`"),
    }
}

/// The largest VmRSS seen while it runs, sampled every 100 ms.
fn sample_rss(pid: u32) -> (Arc<AtomicU64>, tokio::task::JoinHandle<()>) {
    let peak = Arc::new(AtomicU64::new(0));
    let task = tokio::spawn({
        let peak = peak.clone();
        async move {
            while let Ok(rss) = rss_kib(pid) {
                peak.fetch_max(rss, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    });
    (peak, task)
}

fn vm_hwm_kib(pid: u32) -> anyhow::Result<u64> {
    let status = procfs::process::Process::new(pid as i32)?.status()?;
    status
        .vmhwm
        .ok_or_else(|| anyhow!("no VmHWM in /proc/{pid}/status"))
}

/// One game's hand-over over its own connection: the away seat's webhook registered, then the
/// waiting side joins and sends the commands that hand the game over.
async fn hand_over(
    server: SocketAddr,
    n: usize,
    waiting: Side,
    commands: &[Command],
    hook: &str,
) -> anyhow::Result<()> {
    let game = envelope::game_id(&game_key(n));
    let mut client = Client::connect(server).await?;
    client
        .send(&ClientMessage::Notify {
            game: game.clone(),
            token: token(n, protocol::Viewer::Side(waiting.opponent())),
            target: NotifyTarget::Webhook { url: hook.into() },
        })
        .await?;
    match client.recv().await? {
        ServerMessage::Notifying { .. } => {}
        other => bail!("game {n}: expected `notifying`, got {other:?}"),
    }
    client
        .join(&game, &token(n, protocol::Viewer::Side(waiting)))
        .await?;
    for (id, command) in commands.iter().enumerate() {
        client
            .send(&ClientMessage::Command {
                id: id as u64 + 1,
                command: command.clone(),
                key: None,
            })
            .await?;
        loop {
            match client.recv().await? {
                ServerMessage::Accepted { .. } => break,
                ServerMessage::Refused { violation, .. } => {
                    bail!("game {n}: command {command:?} refused: {violation}")
                }
                ServerMessage::Error { message, .. } => bail!("game {n}: {message}"),
                _ => {}
            }
        }
    }
    Ok(())
}

/// The bare baseline: `count` POSTs of `len` bytes to the sink, [`AT_ONCE`] in flight, through
/// one `reqwest` client (as the server's notifier sends). Returns this process's CPU for it.
async fn post_loop(sink: SocketAddr, count: u64, len: usize) -> anyhow::Result<(u64, Duration)> {
    let http = reqwest::Client::new();
    let body = bytes_of(len);
    let gate = Arc::new(Semaphore::new(AT_ONCE));
    let me = std::process::id();
    let cpu = cpu_nanos(me)?;
    let start = Instant::now();
    let mut posts = tokio::task::JoinSet::new();
    for _ in 0..count {
        let permit = gate.clone().acquire_owned().await?;
        let (http, body) = (http.clone(), body.clone());
        posts.spawn(async move {
            let _permit = permit;
            let answer = http
                .post(format!("http://{sink}/hook"))
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await?;
            anyhow::ensure!(
                answer.status().is_success(),
                "the sink answered {}",
                answer.status()
            );
            Ok::<(), anyhow::Error>(())
        });
        while let Some(done) = posts.try_join_next() {
            done??;
        }
    }
    while let Some(done) = posts.join_next().await {
        done??;
    }
    Ok((cpu_nanos(me)? - cpu, start.elapsed()))
}

fn bytes_of(len: usize) -> Vec<u8> {
    let mut body = b"{\"kind\":\"asl.notice\",\"text\":\"".to_vec();
    body.resize(len.saturating_sub(2), b'x');
    body.extend_from_slice(b"\"}");
    body
}

pub async fn run(o: Options) -> anyhow::Result<()> {
    if o.expiring + o.handovers > o.games {
        bail!(
            "--expiring {} and --handovers {} are more than --games {}",
            o.expiring,
            o.handovers,
            o.games
        );
    }
    let (waiting, commands) = to_first_handover()?;
    let scratch = Scratch::new("correspondence")?;
    let sink = ServerProcess::webhook_sink()?;
    let http = reqwest::Client::new();
    let started = now_ms();
    let first_deadline = started + o.lead.as_millis() as u64;
    let plan = Arc::new(Plan::new(o.games, o.expiring, first_deadline, o.spread));
    let dir = scratch.data_dir();
    let written = Instant::now();
    tokio::task::spawn_blocking({
        let (dir, plan) = (dir.clone(), plan.clone());
        move || synthesise(&dir, &plan)
    })
    .await??;
    let writing = written.elapsed();
    let loaded_max = (o.games + 1_000).to_string();
    let quiet = o.quiet.as_secs().to_string();
    let spawned = Instant::now();
    let server = ServerProcess::start_with(
        &o.server_bin,
        &dir,
        &[
            "--loaded-games-max",
            &loaded_max,
            "--notify-allow-private",
            "--notify-quiet-s",
            &quiet,
        ],
    )?;
    let listening = spawned.elapsed();
    let (peak_rss, sampler) = sample_rss(server.pid());
    // A game no clock run of: one of the hand-over games, joined as its spectator.
    let probe = o.games - 1;
    let (probe_client, _) = Client::seat(
        server.addr,
        &envelope::game_id(&game_key(probe)),
        &token(probe, protocol::Viewer::Spectator),
    )
    .await?;
    let serving = spawned.elapsed();
    drop(probe_client);
    if now_ms() > first_deadline {
        println!(
            "  note: the first deadline passed {} ms before the server served (raise --lead-s)",
            now_ms() - first_deadline
        );
    }
    // Every timed game loaded (`Registry::wake_clocks`).
    let mut all_loaded = None;
    let last_deadline = plan.deadlines.last().copied().unwrap_or(started);
    loop {
        let loaded = metric(server.addr, "asl_games_loaded").await.unwrap_or(0.0);
        if all_loaded.is_none() && loaded as usize >= o.games {
            all_loaded = Some(spawned.elapsed());
        }
        if all_loaded.is_some() && now_ms() > last_deadline + 2_000 {
            break;
        }
        if spawned.elapsed() > Duration::from_secs(600) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let rss_after_expiries = rss_kib(server.pid())?;

    // The burst: the server's CPU while idle first, then over the notices' delivery.
    let idle_from = (cpu_nanos(server.pid())?, Instant::now());
    tokio::time::sleep(Duration::from_secs(3)).await;
    let idle_rate =
        (cpu_nanos(server.pid())? - idle_from.0) as f64 / idle_from.1.elapsed().as_secs_f64();
    let hook = format!("http://{}/hook", sink.addr);
    let burst = Instant::now();
    let gate = Arc::new(Semaphore::new(AT_ONCE));
    let mut tasks = tokio::task::JoinSet::new();
    let commands = Arc::new(commands);
    let first = o.games - o.handovers;
    for n in first..o.games {
        let permit = gate.clone().acquire_owned().await?;
        let (hook, commands, addr) = (hook.clone(), commands.clone(), server.addr);
        tasks.spawn(async move {
            let _permit = permit;
            hand_over(addr, n, waiting, &commands, &hook).await
        });
        while let Some(done) = tasks.try_join_next() {
            done??;
        }
    }
    while let Some(done) = tasks.join_next().await {
        done??;
    }
    let handing = burst.elapsed();
    let (before_quiet, _) = sink_count(&http, sink.addr).await?;
    // Deliveries begin a quiet interval after the first hand-over; from here the server
    // does nothing but deliver them (the expiries are behind, nobody is connected).
    let cpu_from = (cpu_nanos(server.pid())?, Instant::now());
    let mut delivered;
    loop {
        let (count, _) = sink_count(&http, sink.addr).await?;
        delivered = count;
        if delivered >= o.handovers as u64 || burst.elapsed() > o.quiet + NOTICES_WAIT_MAX {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let delivery_wall = cpu_from.1.elapsed();
    let server_cpu = cpu_nanos(server.pid())? - cpu_from.0;
    let idle_share = (idle_rate * delivery_wall.as_secs_f64()) as u64;
    let (_, body_len) = sink_count(&http, sink.addr).await?;
    let burst_to_delivered = burst.elapsed();
    let hwm = vm_hwm_kib(server.pid())?;
    sampler.abort();
    let peak = peak_rss.load(Ordering::Relaxed);
    server.kill()?;

    // The baseline, same sink, same run.
    let (post_cpu, post_wall) = post_loop(sink.addr, o.handovers as u64, body_len as usize).await?;
    drop(sink);

    // The expiries, as the server recorded them.
    let (mut lag_ms, missing) = tokio::task::spawn_blocking({
        let (dir, plan) = (dir.clone(), plan.clone());
        move || expiry_lags(&dir, &plan)
    })
    .await??;
    let over_1s = lag_ms
        .iter()
        .filter(|l| **l > Duration::from_secs(1))
        .count();

    let per_notice = (server_cpu.saturating_sub(idle_share)) as f64 / delivered.max(1) as f64;
    let per_post = post_cpu as f64 / o.handovers.max(1) as f64;
    println!(
        "correspondence: {} games under running clocks ({} expiring over {:?} from {:?} after the start of writing, {} handed over), load average {}",
        o.games,
        o.expiring,
        o.spread,
        o.lead,
        o.handovers,
        load_average()
    );
    println!("  writing the store: {}", ms(writing));
    println!("  spawn -> listening: {}", ms(listening));
    println!(
        "  spawn -> first join answered: {} (goal <= 5 s)",
        ms(serving)
    );
    match all_loaded {
        Some(t) => println!("  spawn -> every timed game loaded: {}", ms(t)),
        None => println!("  every timed game loaded: not within the wait"),
    }
    println!(
        "  resident memory: peak VmRSS sampled {:.1} MiB, VmHWM {:.1} MiB, after the expiries {:.1} MiB (goal <= 2048 MiB)",
        peak as f64 / 1024.0,
        hwm as f64 / 1024.0,
        rss_after_expiries as f64 / 1024.0
    );
    println!(
        "  expiries recorded: {} of {} ({} missing); lag (recorded `at` - deadline) p50 {}, p99 {}, max {}; {} over 1 s (goal: every one within 1 s)",
        lag_ms.len(),
        o.expiring,
        missing,
        ms(percentile(&mut lag_ms, 50.0)),
        ms(percentile(&mut lag_ms, 99.0)),
        ms(lag_ms.iter().max().copied().unwrap_or_default()),
        over_1s
    );
    println!(
        "  burst: {} hand-overs (registration, join, {} command(s) each) in {}; {} notices had arrived before the quiet interval ({}s) ended",
        o.handovers,
        commands.len(),
        ms(handing),
        before_quiet,
        o.quiet.as_secs()
    );
    println!(
        "  notices delivered: {} of {} in {} from the end of the burst ({} after its start), body {} B",
        delivered,
        o.handovers,
        ms(delivery_wall),
        ms(burst_to_delivered),
        body_len
    );
    println!(
        "  server CPU per notice: {:.1} µs ({:.3} s over the delivery, less {:.3} s idle at {:.1} ms/s)",
        per_notice / 1e3,
        server_cpu as f64 / 1e9,
        idle_share as f64 / 1e9,
        idle_rate / 1e6
    );
    println!(
        "  bare POST loop, same sink, same bodies: {:.1} µs CPU per POST ({} POSTs in {}); ratio {:.2}x",
        per_post / 1e3,
        o.handovers,
        ms(post_wall),
        per_notice / per_post
    );
    if delivered < o.handovers as u64 || missing > 0 {
        bail!(
            "{} of {} notices delivered, {missing} expiries missing; the data is kept in {}",
            delivered,
            o.handovers,
            scratch.path.display()
        );
    }
    scratch.remove();
    Ok(())
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split(' ').take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// Each expiring game's `ClockExpired` time less its deadline, from the store the server
/// wrote; and how many expiring games have none.
pub fn expiry_lags(dir: &Path, plan: &Plan) -> anyhow::Result<(Vec<Duration>, usize)> {
    let store = SledStore::open(dir).context("opening the drill's store")?;
    let mut lags = Vec::with_capacity(plan.deadlines.len());
    let mut missing = 0;
    for (n, deadline) in plan.deadlines.iter().enumerate() {
        let records = store.load(&game_key(n))?;
        let log = envelope::verify(&records).map_err(|e| anyhow!("game {n}: {e}"))?;
        let at = log.entries.iter().find_map(|e| match &e.event {
            Event::ClockExpired(ClockExpired { at, .. }) => Some(*at),
            _ => None,
        });
        match at {
            Some(at) => lags.push(Duration::from_millis(at.saturating_sub(*deadline))),
            None => missing += 1,
        }
    }
    Ok((lags, missing))
}

//! The corruption drill: the real server under load is SIGKILLed, then a copy of its data
//! directory is damaged the way a bad disk or a careless operator would — random bytes
//! flipped in sled's files or the store's journal, or sled's log truncated — and a server
//! started on the copy. Every game is then joined from the start by a player who was last
//! acknowledged some version of it. It checks, from outside the server:
//! - the server never panics: it either serves, or refuses to open with a message naming
//!   the directory (never a backtrace);
//! - every game is served at no less than what was acknowledged, or is refused by name
//!   (damaged, naming the first bad event; or rolled back, naming the missing events);
//! - never silently rolled back: no join answers with a version below the one the player
//!   holds.
//!
//! Then `asl-server salvage` copies the damaged copy into a new directory (issue 36), a server
//! is started on that, and every game joined again: a game salvage calls intact must be served
//! at no less than what was acknowledged, and one served short must be named in its report.
//! The damaged copy must be left as it was.
//!
//! The original directory is never damaged: load goes on in it, cycle after cycle.

use crate::child::{Scratch, ServerProcess};
use crate::client::Client;
use crate::stats::{Problems, Rng};
use crate::table::Table;
use anyhow::Context;
use protocol::wire::{ClientMessage, ErrorCode, ServerMessage, Tokens};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What Rust's panic hook prints (`thread 'main' panicked at src/…`): the server's own clear
/// message may say that sled panicked, but never this.
const PANIC: &str = "panicked at";

pub struct Options {
    pub server_bin: PathBuf,
    pub cycles: u32,
    pub games: usize,
    pub seed: u64,
    /// Load runs this long (at most) before each kill.
    pub load_ms_max: u64,
}

/// A game as its players know it: the version they were last acknowledged.
struct Track {
    game: String,
    tokens: Tokens,
    acked: u64,
}

#[derive(Default)]
struct Tally {
    /// Cycles whose damaged copy the server refused to open, saying why.
    refused_to_open: u32,
    /// Joins answered with at least the acknowledged version.
    served: u64,
    /// Games refused as damaged, naming the first bad event (or, when sled cannot read the
    /// log at all, saying so).
    damaged_named: u64,
    /// Games refused as rolled back, naming the missing events.
    rollback_flagged: u64,
    /// Games the damaged copy no longer lists at all: refused as lost, since the player holds
    /// a version of them.
    unknown: u64,
    /// Salvage: games tracked in each cycle, and those its copy serves at no less than what
    /// was acknowledged.
    salvage_games: u64,
    salvage_recovered: u64,
    /// A few of the games named short, as salvage named them.
    salvage_short_samples: Vec<String>,
    /// By damage: games recovered whole, and games tracked.
    salvage_by_damage: std::collections::BTreeMap<String, (u64, u64)>,
    /// Served short (or not at all) from the copy, and named so in salvage's report.
    salvage_named_short: u64,
    /// Cycles whose salvage exited 0 (every game intact) and 3 (some named short or lost).
    salvage_all_intact: u32,
    salvage_incomplete: u32,
    // Failures:
    /// A game served short from the salvaged copy that salvage did not name, or called intact.
    salvage_silent: u64,
    /// Salvage panicked, failed to run, changed the damaged copy, or left a copy no server opens.
    salvage_failed: u32,
    panics: u32,
    unclear_exits: u32,
    silent_rollbacks: u64,
    other: u64,
    problems: Problems,
}

impl Tally {
    fn failures(&self) -> u64 {
        u64::from(self.panics + self.unclear_exits + self.salvage_failed)
            + self.silent_rollbacks
            + self.other
            + self.salvage_silent
    }
}

pub async fn run(options: Options) -> anyhow::Result<()> {
    let scratch = Scratch::new("corrupt")?;
    let data = scratch.data_dir();
    let mut rng = Rng::new(options.seed);
    let mut tally = Tally::default();
    let mut tracks: Vec<Track> = vec![];
    let mut damages = std::collections::BTreeMap::<&'static str, u32>::new();
    for cycle in 0..options.cycles {
        // Load on the original, killed at a random moment.
        let server = ServerProcess::start(&options.server_bin, &data)?;
        while tracks.len() < options.games {
            let table = Table::create(server.addr).await?;
            tracks.push(Track {
                game: table.game.clone(),
                tokens: table.tokens.clone(),
                acked: table.replica.version,
            });
        }
        let load_for = Duration::from_millis(rng.below(options.load_ms_max.max(1)) + 1);
        let deadline = Instant::now() + load_for;
        let mut drivers = tokio::task::JoinSet::new();
        for (i, track) in tracks.iter().enumerate() {
            let (addr, game, tokens) = (server.addr, track.game.clone(), track.tokens.clone());
            drivers.spawn(async move { (i, drive(addr, game, tokens, deadline).await) });
        }
        tokio::time::sleep(load_for).await;
        server.kill()?;
        while let Some(driven) = drivers.join_next().await {
            let (i, acked) = driven?;
            if let Some(acked) = acked {
                tracks[i].acked = tracks[i].acked.max(acked);
            }
        }

        // A damaged copy, served.
        let copy = scratch.path.join(format!("copy-{cycle}"));
        copy_dir(&data, &copy)?;
        let damage = damage(&copy, &mut rng)?;
        *damages.entry(damage).or_default() += 1;
        // Salvaged first: a server started on the copy writes into it.
        salvage(
            &options,
            &scratch.path,
            &copy,
            &tracks,
            &mut tally,
            cycle,
            damage,
        )
        .await?;
        let log = copy.with_extension("server.log");
        match ServerProcess::start(&options.server_bin, &copy) {
            Ok(server) => {
                for track in &tracks {
                    check(server.addr, track, &mut tally, cycle).await?;
                }
                server.kill()?;
            }
            Err(_) => {
                let said = std::fs::read_to_string(&log).unwrap_or_default();
                if said.contains("cannot open the data directory") && !said.contains(PANIC) {
                    tally.refused_to_open += 1;
                } else {
                    tally.unclear_exits += 1;
                    tally.problems.add(format!(
                        "cycle {cycle} ({damage}): the server exited without saying why: {said}"
                    ));
                }
            }
        }
        let said = std::fs::read_to_string(&log).unwrap_or_default();
        if said.contains(PANIC) {
            tally.panics += 1;
            tally.problems.add(format!(
                "cycle {cycle} ({damage}): the server panicked: {said}"
            ));
        }
        let _ = std::fs::remove_dir_all(&copy);
        let _ = std::fs::remove_file(&log);
    }
    let acked: u64 = tracks.iter().map(|t| t.acked).sum();
    println!(
        "corrupt: {} cycles, {} games, {acked} events acknowledged by the last cycle; damage: {}",
        options.cycles,
        tracks.len(),
        damages
            .iter()
            .map(|(what, n)| format!("{what} x{n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "  outcomes: refused to open (clear message) {}, games served intact {}, damaged and named {}, rollback flagged {}, lost whole (refused as lost) {}",
        tally.refused_to_open, tally.served, tally.damaged_named, tally.rollback_flagged, tally.unknown
    );
    println!(
        "  salvage: {} of {} games recovered whole ({:.1}%); named short or lost {}; runs all intact {}, incomplete {}",
        tally.salvage_recovered,
        tally.salvage_games,
        100.0 * tally.salvage_recovered as f64 / tally.salvage_games.max(1) as f64,
        tally.salvage_named_short,
        tally.salvage_all_intact,
        tally.salvage_incomplete
    );
    for sample in &tally.salvage_short_samples {
        println!("    named short: {sample}");
    }
    println!(
        "  salvage by damage: {}",
        tally
            .salvage_by_damage
            .iter()
            .map(|(what, (whole, of))| format!("{what} {whole}/{of}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "  failures: panics {}, unclear exits {}, silent rollbacks {}, other {}; salvage: silent losses {}, failed runs {}",
        tally.panics,
        tally.unclear_exits,
        tally.silent_rollbacks,
        tally.other,
        tally.salvage_silent,
        tally.salvage_failed
    );
    tally.problems.conclude(tally.failures(), scratch)
}

/// Plays `done`s on one game until `deadline` or the server dies; returns the version last
/// acknowledged.
async fn drive(addr: SocketAddr, game: String, tokens: Tokens, deadline: Instant) -> Option<u64> {
    let mut table = Table::sit(addr, game, tokens).await.ok()?;
    let mut acked = table.replica.version;
    let mut id = 0;
    while Instant::now() < deadline && !table.replica.over {
        id += 1;
        match table.done(id).await {
            Ok(played) if played.result.is_ok() => acked = table.replica.version,
            Ok(_) => {}
            Err(_) => break,
        }
    }
    Some(acked)
}

/// Joins one game on the damaged copy as side A, from the start. Not with `since` set to the
/// acknowledged version: a player's claim past the log's end is refused (`beyond_end`), which
/// hid a server serving the game short to everyone who does not hold that version (issue 50).
/// The server itself must serve the game whole or name it.
async fn check(
    addr: SocketAddr,
    track: &Track,
    tally: &mut Tally,
    cycle: u32,
) -> anyhow::Result<()> {
    let mut client = Client::connect(addr).await?;
    client
        .send(&ClientMessage::Join {
            game: track.game.clone(),
            token: track.tokens.side_a.clone(),
            since: None,
        })
        .await?;
    match client.recv().await? {
        ServerMessage::Joined { version, .. } if version >= track.acked => tally.served += 1,
        ServerMessage::Joined { version, .. } => {
            tally.silent_rollbacks += 1;
            tally.problems.add(format!(
                "cycle {cycle}: game {} served at version {version}, but version {} was acknowledged",
                track.game, track.acked
            ));
        }
        ServerMessage::Error {
            code: ErrorCode::RolledBack,
            message,
        } if message.contains("rolled back") => tally.rollback_flagged += 1,
        ServerMessage::Error {
            code: ErrorCode::GameUnavailable,
            message,
        } if message.contains("damaged at event")
            || message.contains("cannot be read")
            || message.contains("acknowledged are missing")
            || message.contains("not the one the server acknowledged") =>
        {
            tally.damaged_named += 1
        }
        // sled lost its metadata (tokens' digests) too: not listed, named DAMAGED in the
        // server's log at start.
        ServerMessage::Error {
            code: ErrorCode::UnknownGame,
            ..
        } => tally.unknown += 1,
        other => {
            tally.other += 1;
            tally
                .problems
                .add(format!("cycle {cycle}: game {}: {other:?}", track.game));
        }
    }
    Ok(())
}

fn copy_dir(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)
                .with_context(|| format!("copying {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// Damages sled's files in `dir` one way, chosen at random; returns which.
fn damage(dir: &Path, rng: &mut Rng) -> anyhow::Result<&'static str> {
    let db = dir.join("db");
    let len = std::fs::metadata(&db)?.len();
    let roll = rng.below(100);
    if roll < 20 {
        // A torn end: the log cut short somewhere in its last quarter.
        let keep = len - rng.below(len / 4 + 1);
        std::fs::OpenOptions::new()
            .write(true)
            .open(&db)?
            .set_len(keep)?;
        return Ok("db truncated");
    }
    let journal = dir.join("journal");
    if (80..90).contains(&roll) && journal.is_file() {
        // The journal: its header slots and the first records, where a killed server's
        // acknowledged groups since sled's last checkpoint are (the rest is zeros or records
        // already checkpointed).
        let mut bytes = std::fs::read(&journal)?;
        let span = bytes.len().min(256 * 1024) as u64;
        for _ in 0..=rng.below(4) {
            let at = rng.below(span) as usize;
            bytes[at] ^= 1 << rng.below(8);
        }
        std::fs::write(&journal, bytes)?;
        return Ok("journal bytes flipped");
    }
    if roll < 60 {
        // sled's log fills `db` from its start and most of the file past it is zeros: flips
        // where it wrote, at random offsets, most of them behind the journal's records (its
        // checkpoints emptied it) — what sled's recovery cuts its log at (issue 50).
        let mut bytes = std::fs::read(&db)?;
        let written = bytes.iter().rposition(|b| *b != 0).map_or(1, |at| at + 1);
        for _ in 0..=rng.below(3) {
            let at = rng.below(written as u64) as usize;
            bytes[at] ^= 1 << rng.below(8);
        }
        std::fs::write(&db, bytes)?;
        return Ok("db bytes flipped where sled wrote");
    }
    let (path, what) = if roll < 90 {
        (db, "db bytes flipped")
    } else {
        // Another of sled's files: its config, or a snapshot if one was written.
        let others: Vec<PathBuf> = std::fs::read_dir(dir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.is_file()
                    && p.file_name().is_some_and(|n| {
                        let n = n.to_string_lossy();
                        n == "conf" || n.starts_with("snap.")
                    })
            })
            .collect();
        if others.is_empty() {
            return Ok("nothing damaged");
        }
        let pick = others[rng.below(others.len() as u64) as usize].clone();
        (pick, "conf or snapshot bytes flipped")
    };
    let mut bytes = std::fs::read(&path)?;
    if bytes.is_empty() {
        return Ok("nothing damaged");
    }
    for _ in 0..=rng.below(4) {
        let at = rng.below(bytes.len() as u64) as usize;
        bytes[at] ^= 1 << rng.below(8);
    }
    std::fs::write(&path, bytes)?;
    Ok(what)
}

/// Every file below `dir` with a hash of its bytes: what "left as it was" means.
fn fingerprint(dir: &Path) -> anyhow::Result<Vec<(PathBuf, [u8; 32])>> {
    let mut all = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            if kind.is_dir() {
                stack.push(entry.path());
            } else if kind.is_file() {
                let bytes = std::fs::read(entry.path())?;
                all.push((entry.path(), *blake3::hash(&bytes).as_bytes()));
            }
        }
    }
    all.sort();
    Ok(all)
}

/// `asl-server salvage` of the damaged `copy` into a new directory, a server started on that,
/// and every game joined: served whole, or named short in salvage's report.
async fn salvage(
    options: &Options,
    scratch: &Path,
    copy: &Path,
    tracks: &[Track],
    tally: &mut Tally,
    cycle: u32,
    damage: &str,
) -> anyhow::Result<()> {
    let into = scratch.join(format!("salvaged-{cycle}"));
    let before = fingerprint(copy)?;
    let out = std::process::Command::new(&options.server_bin)
        .arg("salvage")
        .arg("--from")
        .arg(copy)
        .arg("--to")
        .arg(&into)
        .output()
        .context("running asl-server salvage")?;
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut failed = |why: String| {
        tally.salvage_failed += 1;
        tally
            .problems
            .add(format!("cycle {cycle} ({damage}): salvage {why}"));
    };
    if said.contains(PANIC) {
        failed(format!("panicked: {said}"));
    }
    if fingerprint(copy)? != before {
        failed("changed the damaged directory".into());
    }
    match out.status.code() {
        Some(0) => tally.salvage_all_intact += 1,
        Some(3) => tally.salvage_incomplete += 1,
        _ => {
            failed(format!("exited {}: {said}", out.status));
            let _ = std::fs::remove_dir_all(&into);
            return Ok(());
        }
    }
    let server = match ServerProcess::start(&options.server_bin, &into) {
        Ok(server) => server,
        Err(e) => {
            failed(format!("left a directory no server opens ({e}): {said}"));
            let _ = std::fs::remove_dir_all(&into);
            return Ok(());
        }
    };
    for track in tracks {
        tally.salvage_games += 1;
        let mut client = Client::connect(server.addr).await?;
        client
            .send(&ClientMessage::Join {
                game: track.game.clone(),
                token: track.tokens.side_a.clone(),
                since: None,
            })
            .await?;
        // What the server answered instead of serving it, for the problem's line.
        let (served, answered) = match client.recv().await? {
            ServerMessage::Joined { version, .. } => (version, String::new()),
            other => (0, format!("{other:?}").chars().take(300).collect()),
        };
        // The game's line in the report: named short, or called intact.
        let line = said
            .lines()
            .find(|l| l.contains(&track.game))
            .unwrap_or_default();
        let by_damage = tally
            .salvage_by_damage
            .entry(damage.to_string())
            .or_default();
        by_damage.1 += 1;
        if served >= track.acked {
            by_damage.0 += 1;
            tally.salvage_recovered += 1;
        } else if !line.is_empty() && !line.contains("intact") {
            tally.salvage_named_short += 1;
            if tally.salvage_short_samples.len() < 5 {
                tally.salvage_short_samples.push(format!(
                    "cycle {cycle} ({damage}), {} acknowledged, {served} served: {}",
                    track.acked,
                    line.trim()
                ));
            }
        } else {
            tally.salvage_silent += 1;
            tally.problems.add(format!(
                "cycle {cycle} ({damage}): game {} served at {served} from the salvaged copy, {} acknowledged, and salvage said: {}{}",
                track.game,
                track.acked,
                if line.is_empty() { "nothing of it" } else { line },
                if answered.is_empty() { String::new() } else { format!("; the server answered {answered}") }
            ));
        }
    }
    server.kill()?;
    let _ = std::fs::remove_dir_all(&into);
    let _ = std::fs::remove_file(into.with_extension("server.log"));
    Ok(())
}

//! The crash drill: the real server under load, killed with SIGKILL at random moments and
//! restarted, again and again. After every kill it checks, from outside the server:
//! - every event a client saw acknowledged is in the log, unchanged (none lost);
//! - the command in flight at the kill is either wholly in the log or not at all (none half
//!   written);
//! - every game's hash chain verifies, read straight from the data directory;
//! - the restarted server's state hash equals the one the client's replica reached live
//!   (replay in a fresh process is deterministic);
//! - `asl-server salvage` of the crashed directory (issue 36) calls every game intact and
//!   copies each one's log record for record as a server on that directory reads it.

use crate::child::{Scratch, ServerProcess};
use crate::client::Client;
use crate::stats::{Problems, Rng};
use crate::table::{Divergence, Table};
use anyhow::{bail, Context};
use indicatif::{ProgressBar, ProgressStyle};
use protocol::event::GameCreated;
use protocol::game::view::{apply_viewed, Viewed};
use protocol::wire::{ClientMessage, ServerMessage, Tokens};
use protocol::ReadScenario;
use protocol::{Command, Event, Game, Outcome, RuleViolation, Scenario, Side, Viewer};
use server::store::envelope;
use server::store::{EventStore, SledStore};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The drill plays the two-turn scenario as written: games end after 44 `done`s, so
/// every cycle also creates games, and creation is crashed into as well as play.
const SCENARIO: &str = include_str!("../../scenarios/b9-41-wall-advantage.toml");

/// German units, which both sides see, for adjudications: an event both seats receive.
const UNITS: [&str; 2] = ["467a", "447a"];

pub struct Options {
    pub server_bin: PathBuf,
    pub cycles: u32,
    pub games: usize,
    pub seed: u64,
    /// Each kill comes this long after the load starts, drawn from 0..kill_after_ms_max.
    pub kill_after_ms_max: u64,
}

/// One game as the clients know it.
struct Track {
    game: String,
    tokens: Tokens,
    /// Every event acknowledged to a client, in order; `acked[0]` is `GameCreated`.
    acked: Vec<Event>,
    /// Side A's projection after `acked`, built by applying what the server sent.
    replica: Game,
    /// What the rules say the command sent but not yet answered does, if one is.
    in_flight: Option<Result<Vec<Event>, RuleViolation>>,
}

#[derive(Default)]
struct Tally {
    commands_acked: u64,
    lost: u64,
    half_written: u64,
    altered: u64,
    chain_failures: u64,
    hash_mismatches: u64,
    in_flight_kept: u64,
    in_flight_absent: u64,
    /// Games salvage copied from a crashed directory the same as the store holds them.
    salvaged_same: u64,
    /// Games salvage left out, cut short, changed, or did not call intact.
    salvaged_wrong: u64,
    /// Salvage runs that did not exit 0 (every game intact) on a crashed directory.
    salvage_failed: u64,
    problems: Problems,
}

impl Tally {
    fn failures(&self) -> u64 {
        self.lost
            + self.half_written
            + self.altered
            + self.chain_failures
            + self.hash_mismatches
            + self.salvaged_wrong
            + self.salvage_failed
    }
}

pub async fn run(options: Options) -> anyhow::Result<()> {
    let scratch = Scratch::new("crash")?;
    let data = scratch.data_dir();
    let mut rng = Rng::new(options.seed);
    let mut tally = Tally::default();
    let mut active: Vec<Track> = vec![];
    let mut finished: Vec<Track> = vec![];
    let progress = ProgressBar::new(u64::from(options.cycles));
    progress.set_style(
        ProgressStyle::with_template("crash cycles [{bar:40}] {pos}/{len} {elapsed} {msg}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    for cycle in 0..=options.cycles {
        let server = ServerProcess::start(&options.server_bin, &data)?;
        for track in active
            .iter_mut()
            .chain(finished.iter_mut().filter(|_| cycle == options.cycles))
        {
            verify(server.addr, track, &mut tally).await?;
        }
        if cycle == options.cycles {
            server.kill()?;
            break;
        }
        // Games that ended were verified once after their end; the last cycle checks them again.
        let (done, playing): (Vec<Track>, Vec<Track>) =
            active.drain(..).partition(|t| t.replica.over);
        finished.extend(done);
        active = playing;
        while active.len() < options.games {
            active.push(create(server.addr).await?);
        }
        let kill_after = Duration::from_millis(rng.below(options.kill_after_ms_max.max(1)));
        let mut drivers = tokio::task::JoinSet::new();
        for track in active.drain(..) {
            drivers.spawn(drive(server.addr, track, rng.next()));
        }
        tokio::time::sleep(kill_after).await;
        server.kill()?;
        while let Some(driven) = drivers.join_next().await {
            let (tracks, commands, divergence) = driven?;
            tally.commands_acked += commands;
            if let Some(d) = divergence {
                bail!("the server diverged from the rules: {d}");
            }
            active.extend(tracks);
        }
        // Salvage first: it must read the directory exactly as the crash left it.
        let (dir, into) = (
            data.clone(),
            data.with_file_name(format!("salvaged-{cycle}")),
        );
        let bin = options.server_bin.clone();
        let (salvaged, broken) =
            tokio::task::spawn_blocking(move || after_crash(&bin, &dir, &into)).await??;
        tally.salvaged_same += salvaged.same;
        tally.salvaged_wrong += salvaged.wrong.len() as u64;
        for why in salvaged.wrong {
            tally.problems.add(format!("cycle {cycle}: salvage {why}"));
        }
        if let Some(why) = salvaged.failed {
            tally.salvage_failed += 1;
            tally.problems.add(format!("cycle {cycle}: salvage {why}"));
        }
        for why in broken {
            tally.chain_failures += 1;
            tally.problems.add(format!("cycle {cycle}: {why}"));
        }
        progress.inc(1);
        progress.set_message(format!(
            "{} acked, {} failures",
            tally.commands_acked,
            tally.failures()
        ));
    }
    progress.finish_and_clear();
    let games = active.len() + finished.len();
    println!(
        "crash: {} SIGKILL cycles, {games} games, {} commands acknowledged; lost {}, half-written {}, altered {}, chain failures {}, state-hash mismatches {}",
        options.cycles,
        tally.commands_acked,
        tally.lost,
        tally.half_written,
        tally.altered,
        tally.chain_failures,
        tally.hash_mismatches
    );
    println!(
        "  commands in flight at a kill: {} found whole in the log, {} absent (both allowed)",
        tally.in_flight_kept, tally.in_flight_absent
    );
    println!(
        "  salvage of each crashed directory: {} games copied as the store holds them, {} wrong, {} runs not all intact",
        tally.salvaged_same, tally.salvaged_wrong, tally.salvage_failed
    );
    tally.problems.conclude(tally.failures(), scratch)
}

async fn create(addr: SocketAddr) -> anyhow::Result<Track> {
    let mut client = Client::connect(addr).await?;
    let (game, tokens) = client.create(SCENARIO).await?;
    let created = Event::GameCreated(GameCreated {
        scenario: Scenario::from_toml(SCENARIO)?,
    });
    let mut replica = Game::replay([&created])
        .map_err(|e| anyhow::anyhow!("{e}"))?
        .project(Viewer::Side(Side::A));
    // A projection carries the count of events its viewer received: here, `GameCreated`.
    replica.version = 1;
    Ok(Track {
        game,
        tokens,
        acked: vec![created],
        replica,
        in_flight: None,
    })
}

/// Plays random commands on one game (and on the games that follow it when it ends) until
/// the server dies. Returns the games with what was acknowledged, the number of commands
/// acknowledged, and a divergence from the rules if one was seen.
async fn drive(addr: SocketAddr, track: Track, seed: u64) -> (Vec<Track>, u64, Option<String>) {
    let mut rng = Rng::new(seed);
    let mut tracks = vec![];
    let mut current = track;
    let mut commands = 0;
    let divergence = loop {
        match play(addr, &mut current, &mut rng, &mut commands).await {
            // The game ended; a new one takes its place.
            Ok(()) => match create(addr).await {
                Ok(next) => tracks.push(std::mem::replace(&mut current, next)),
                Err(_) => break None,
            },
            Err(e) => break e.downcast_ref::<Divergence>().map(|d| d.0.clone()),
        }
    };
    tracks.push(current);
    (tracks, commands, divergence)
}

/// Plays `track`'s game until it ends (`Ok`) or the connection fails.
async fn play(
    addr: SocketAddr,
    track: &mut Track,
    rng: &mut Rng,
    commands: &mut u64,
) -> anyhow::Result<()> {
    let mut table = Table::sit(addr, track.game.clone(), track.tokens.clone()).await?;
    table.replica = track.replica.clone();
    let mut id = 0;
    while !table.replica.over {
        id += 1;
        let (side, command) = if rng.below(100) < 85 {
            protocol::rules::moving_on(&table.replica)
        } else {
            let side = if rng.below(2) == 0 { Side::A } else { Side::B };
            let outcome = [
                Outcome::Break,
                Outcome::Rally,
                Outcome::Pin,
                Outcome::Eliminate,
            ][rng.below(4) as usize];
            let unit = UNITS[rng.below(UNITS.len() as u64) as usize].to_string();
            (
                side,
                Command::Adjudicate {
                    unit,
                    outcome,
                    note: "crash drill".into(),
                },
            )
        };
        track.in_flight = Some(table.predict(side, &command));
        let played = table.play(id, side, command).await?;
        track.in_flight = None;
        if played.result.is_ok() {
            // Side A's view: what its replica follows and its log shows.
            track.acked.extend(played.seen_by_a);
        }
        track.replica = table.replica.clone();
        *commands += 1;
    }
    Ok(())
}

/// Every event from 1 to `version`, as side A sees them, page by page.
async fn full_log(client: &mut Client, version: u64) -> anyhow::Result<Vec<Viewed>> {
    let mut events = vec![];
    while (events.len() as u64) < version {
        client
            .send(&ClientMessage::GetLog {
                from: events.len() as u64 + 1,
            })
            .await?;
        match client.recv().await? {
            ServerMessage::Log { events: page, .. } if !page.is_empty() => {
                events.extend(
                    page.into_iter()
                        .map(|s| std::sync::Arc::unwrap_or_clone(s.viewed)),
                );
            }
            other => bail!("expected a log page, got {other:?}"),
        }
    }
    Ok(events)
}

/// Checks one game on the restarted server against what its clients were told.
async fn verify(addr: SocketAddr, track: &mut Track, tally: &mut Tally) -> anyhow::Result<()> {
    let mut client = Client::connect(addr).await?;
    client
        .send(&ClientMessage::Join {
            game: track.game.clone(),
            token: track.tokens.side_a.clone(),
            since: None,
        })
        .await?;
    let (version, state_hash) = match client.recv().await? {
        ServerMessage::Joined {
            version,
            state_hash,
            ..
        } => (version, state_hash),
        ServerMessage::Error { code, message } => {
            tally.chain_failures += 1;
            tally.problems.add(format!(
                "game {} refused after restart: {code:?}: {message}",
                track.game
            ));
            return Ok(());
        }
        other => bail!("expected `joined`, got {other:?}"),
    };
    let acked = track.acked.len() as u64;
    if version < acked {
        tally.lost += acked - version;
        tally.problems.add(format!(
            "game {}: {} acknowledged events, the restarted server has {version}",
            track.game, acked
        ));
        return Ok(());
    }
    let stored = full_log(&mut client, version).await?;
    // Event 1 is compared as the state hash covers it; the rest one by one.
    for (i, (mine, theirs)) in track.acked.iter().zip(&stored).enumerate().skip(1) {
        if &theirs.event != mine {
            tally.altered += 1;
            tally.problems.add(format!(
                "game {}: event {} differs from the one acknowledged",
                track.game,
                i + 1
            ));
            return Ok(());
        }
    }
    let extra: Vec<Viewed> = stored[acked as usize..].to_vec();
    match track.in_flight.take() {
        Some(predicted) => {
            let whole = predicted.unwrap_or_default();
            if extra.is_empty() {
                tally.in_flight_absent += 1;
            } else if extra
                .iter()
                .map(|v| v.event.name())
                .eq(whole.iter().map(Event::name))
            {
                // Predicted in the acting side's view, read in side A's: the same events, each
                // naming units as its viewer knows them.
                tally.in_flight_kept += 1;
                for viewed in &extra {
                    apply_viewed(&mut track.replica, viewed);
                }
                track.acked.extend(extra.into_iter().map(|v| v.event));
            } else {
                tally.half_written += 1;
                tally.problems.add(format!(
                    "game {}: after the acknowledged events the log holds {} events, not the in-flight command's {}",
                    track.game,
                    extra.len(),
                    whole.len()
                ));
                return Ok(());
            }
        }
        None if !extra.is_empty() => {
            tally.half_written += 1;
            tally.problems.add(format!(
                "game {}: {} events no command accounts for",
                track.game,
                extra.len()
            ));
            return Ok(());
        }
        None => {}
    }
    if state_hash != track.replica.state_hash() {
        tally.hash_mismatches += 1;
        tally.problems.add(format!(
            "game {}: restarted server's state hash {state_hash} differs from the live one {}",
            track.game,
            track.replica.state_hash()
        ));
    }
    Ok(())
}

/// Whether salvage's copy of one game (`None`: not copied) is what the crashed store holds.
/// A game with metadata and no event is a kill between a creation's two writes: nothing was
/// acknowledged, and salvage rightly copies nothing (`Outcome::Empty`).
fn judge(records: &[(u64, Vec<u8>)], copy: Option<&[(u64, Vec<u8>)]>) -> Result<(), &'static str> {
    match copy {
        None if records.is_empty() => Ok(()),
        None => Err("left out"),
        Some(copy) if copy != records => Err("copied unlike the store holds it"),
        Some(_) => Ok(()),
    }
}

/// What salvage made of one crashed directory.
struct Salvaged {
    same: u64,
    wrong: Vec<String>,
    failed: Option<String>,
}

/// Runs `asl-server salvage` from the crashed `dir` into `into`, then reads the crashed store
/// once, as sled reads it after the crash: every game's hash chain is verified (what is broken
/// is returned), and its log is compared with salvage's copy. A crash damages nothing, so
/// salvage must exit 0 and copy every game record for record. Runs between the kill and the
/// restart, so it sees exactly what the crash left.
fn after_crash(
    server_bin: &Path,
    dir: &Path,
    into: &Path,
) -> anyhow::Result<(Salvaged, Vec<String>)> {
    let out = std::process::Command::new(server_bin)
        .arg("salvage")
        .arg("--from")
        .arg(dir)
        .arg("--to")
        .arg(into)
        .output()
        .context("running asl-server salvage")?;
    let mut salvaged = Salvaged {
        same: 0,
        wrong: vec![],
        failed: None,
    };
    if !out.status.success() {
        salvaged.failed = Some(format!(
            "exited {}: {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let mut broken = vec![];
    {
        let crashed = SledStore::open(dir).context("opening the crashed data directory")?;
        let copy = if salvaged.failed.is_none() {
            Some(SledStore::open(into).context("opening the salvaged directory")?)
        } else {
            None
        };
        let copied: std::collections::BTreeSet<_> = match &copy {
            Some(copy) => copy.games()?.into_iter().map(|(key, _)| key).collect(),
            None => Default::default(),
        };
        for (key, _) in crashed.games()? {
            let id = envelope::game_id(&key);
            let records = crashed.load(&key)?;
            if let Err(e) = envelope::verify(&records) {
                broken.push(format!("game {id}: {e}"));
            }
            let Some(copy) = &copy else { continue };
            let held = if copied.contains(&key) {
                Some(copy.load(&key)?)
            } else {
                None
            };
            match judge(&records, held.as_deref()) {
                Ok(()) => salvaged.same += 1,
                Err(why) => salvaged.wrong.push(format!("{why} game {id}")),
            }
        }
    }
    if into.exists() {
        std::fs::remove_dir_all(into).context("removing the salvaged copy")?;
    }
    Ok((salvaged, broken))
}

#[cfg(test)]
mod tests {
    use super::judge;

    #[test]
    fn a_creation_killed_before_its_first_event_has_nothing_to_salvage() {
        let log = vec![(1, b"created".to_vec()), (2, b"moved".to_vec())];
        assert_eq!(judge(&[], None), Ok(()));
        assert_eq!(judge(&log, None), Err("left out"));
        assert_eq!(
            judge(&log, Some(&log[..1])),
            Err("copied unlike the store holds it")
        );
        assert_eq!(judge(&log, Some(&log)), Ok(()));
    }
}

//! `asl watch`: print a game's events as they happen, riding out dropped connections.

use super::{join_fresh, side_to_act, GameArgs, ServerArg};
use crate::connection::{Connection, ConnectionError};
use crate::follower::Follower;
use crate::record::Record;
use crate::{Failure, Status};
use protocol::wire;
use protocol::{Game, Viewer};
use std::io::Write;
use std::time::Duration;

/// The first wait before reconnecting: long enough not to hammer a server that is restarting,
/// short enough that a blip goes unnoticed.
pub const RECONNECT_DELAY_FIRST: Duration = Duration::from_millis(250);
/// Waits double up to this, so a long outage costs one attempt every few seconds.
pub const RECONNECT_DELAY_MAX: Duration = Duration::from_secs(5);
/// Attempts before giving up: about a minute and a half of trying, which outlasts a restart.
pub const RECONNECT_TRIES_MAX: usize = 20;

#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct WatchArgs {
    #[command(flatten)]
    pub server: ServerArg,
    #[command(flatten)]
    pub game: GameArgs,
    /// Print each event as one JSON line {seq, event} instead of text.
    #[arg(long)]
    pub json: bool,
    /// Stop after this many events instead of at the end of the game.
    #[arg(long)]
    pub count: Option<u64>,
}

/// Prints events until the game ends or `--count` events were printed. The binary stops it on
/// Ctrl-C by dropping the future; every line is written whole, so the output stays readable.
pub async fn watch(args: &WatchArgs, out: &mut (dyn Write + Send)) -> Result<Status, Failure> {
    let (mut connection, joined, mut follower) = join_fresh(&args.server, &args.game).await?;
    if !args.json {
        let preface = preface(follower.game(), joined.viewer);
        writeln!(out, "{}", crate::printable(&preface))?;
    }
    let mut record = Record::default();
    let mut printed = 0;
    while !follower.game().over && args.count.is_none_or(|n| printed < n) {
        let event = match connection.next_event().await {
            Ok(event) => event,
            Err(e) if e.is_transient() => {
                connection = reconnect(args, &mut follower, e).await?;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let lines = record.follow(&mut follower, &event)?;
        if lines.is_empty() {
            continue; // a duplicate after resuming
        }
        printed += 1;
        if args.json {
            writeln!(out, "{}", crate::printable_json(&wire::to_json(&event)))?;
        } else {
            for line in lines {
                writeln!(out, "{line}")?;
            }
        }
    }
    connection.close().await;
    Ok(Status::Success)
}

/// What is being watched and where it stands, before the first event.
fn preface(game: &Game, viewer: Viewer) -> String {
    let viewer = match viewer {
        Viewer::Side(side) => game.side_name(side).to_string(),
        Viewer::Spectator => "spectator".to_string(),
    };
    let at = if game.over {
        "the game is over".to_string()
    } else {
        format!(
            "Turn {}, {} Player Turn, {}; {} to act",
            game.clock.turn,
            game.side_name(game.attacker()),
            game.clock.step().name,
            game.side_name(side_to_act(game))
        )
    };
    format!(
        "Watching \"{}\" as {viewer} from version {}: {at}.",
        game.scenario.name, game.version
    )
}

/// The waits before each reconnection attempt: 250 ms doubling up to 5 s, 20 in all.
pub(crate) fn reconnect_delays() -> impl Iterator<Item = Duration> {
    std::iter::successors(Some(RECONNECT_DELAY_FIRST), |d| {
        Some((*d * 2).min(RECONNECT_DELAY_MAX))
    })
    .take(RECONNECT_TRIES_MAX)
}

/// Opens a new connection and resumes the stream after the follower's version, so nothing is
/// missed and nothing repeats. Gives up at once on an error a retry cannot fix (a bad token).
async fn reconnect(
    args: &WatchArgs,
    follower: &mut Follower,
    cause: ConnectionError,
) -> Result<Connection, Failure> {
    eprintln!(
        "asl: {}; reconnecting",
        crate::printable_lines(&cause.to_string())
    );
    let mut last = cause;
    for delay in reconnect_delays() {
        tokio::time::sleep(delay).await;
        let attempt = async {
            let mut connection = Connection::connect(&args.server.url).await?;
            let joined = connection
                .join(&args.game.game, &args.game.token, Some(follower.version()))
                .await?;
            Ok::<_, ConnectionError>((connection, joined))
        };
        match attempt.await {
            Ok((connection, joined)) => {
                match joined.state {
                    // A server may answer a resume with a snapshot instead (if it no longer
                    // keeps the events since our version); what happened between is lost to
                    // this watch, so say so.
                    Some(state) => {
                        if state.version > follower.version() {
                            eprintln!(
                                "asl: resumed from a snapshot at version {}; events {}–{} are \
                                 not shown (see `asl log`)",
                                state.version,
                                follower.version() + 1,
                                state.version
                            );
                        }
                        *follower = Follower::from_snapshot(state, joined.state_hash)?;
                    }
                    None => follower.expect_hash(joined.version, joined.state_hash)?,
                }
                eprintln!("asl: reconnected at version {}", follower.version());
                return Ok(connection);
            }
            Err(e) if e.is_transient() => last = e,
            Err(e) => return Err(e.into()),
        }
    }
    Err(Failure::Server(format!(
        "gave up reconnecting after {RECONNECT_TRIES_MAX} tries; last: {last}"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::script::{parse_script, run_offline};
    use protocol::ReadScenario;
    use protocol::{Scenario, Side};

    #[test]
    fn backoff_doubles_to_its_cap_and_stops() {
        let delays: Vec<u64> = reconnect_delays().map(|d| d.as_millis() as u64).collect();
        assert_eq!(delays.len(), RECONNECT_TRIES_MAX);
        assert_eq!(delays[..6], [250, 500, 1000, 2000, 4000, 5000]);
        assert!(delays[5..].iter().all(|d| *d == 5000));
    }

    #[test]
    fn preface_says_what_and_where() {
        let game = Game::new(
            Scenario::from_toml(include_str!("../../../scenarios/b9-41-wall-advantage.toml"))
                .unwrap(),
        );
        assert_eq!(
            preface(&game, Viewer::Side(Side::B)),
            "Watching \"B9.41: Wall Advantage at 55H6\" as Russian from version 0: Turn 1, \
             German Player Turn, RPh; German to act."
        );
    }

    /// Joining while the Russian may claim WA in the German MPh (B9.322): the Russian is to act.
    #[test]
    fn preface_names_the_side_play_waits_for() {
        let game = Game::new(
            Scenario::from_toml(include_str!("../../../scenarios/b9-41-wall-advantage.toml"))
                .unwrap(),
        );
        let script = "german done\ngerman done\ngerman move 467a H6\n";
        let lines = parse_script(script, &game.scenario).unwrap();
        let (game, reports) = run_offline(game, &lines);
        assert!(reports.iter().all(|r| r.result.is_ok()), "{reports:?}");
        let preface = preface(&game, Viewer::Spectator);
        assert!(
            preface.ends_with("German Player Turn, MPh; Russian to act."),
            "{preface}"
        );
    }
}

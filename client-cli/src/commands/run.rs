//! `asl run`: play a script's lines on a server as one side.
//!
//! Two players can each run a script against the same game at once: before each line the
//! runner waits, following the game, until its side is to act — `done` and `move` need that,
//! and an `adjudicate` belongs to the step in which its side fired, which is its own step. The local game it follows is also what the lines' expectations are checked
//! against.

use super::{join_fresh, GameArgs, ServerArg};
use crate::connection::{Connection, ConnectionError, Reply, REPLY_WAIT_MAX};
use crate::follower::{Advance, Follower};
use crate::report::LineOutcome;
use crate::{read_input, Failure, Status};
use protocol::script::{check_expectation, parse_script, Action, ScriptLine};
use protocol::wire::Sequenced;
use protocol::{Command, Game, Side, Viewer};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct RunArgs {
    #[command(flatten)]
    pub server: ServerArg,
    #[command(flatten)]
    pub game: GameArgs,
    /// The script to play (see docs/script.md).
    pub script: PathBuf,
    /// Send each line at once instead of waiting until the joined side is to act.
    #[arg(long)]
    pub no_wait: bool,
    /// Print one JSON object per line instead of text.
    #[arg(long)]
    pub json: bool,
}

pub async fn run(args: &RunArgs, out: &mut (dyn Write + Send)) -> Result<Status, Failure> {
    let text = read_input(&args.script)?;
    let (mut connection, joined, mut follower) = join_fresh(&args.server, &args.game).await?;
    let Viewer::Side(side) = joined.viewer else {
        return Err(Failure::Input(
            "this is the spectator token; `asl run` plays a side and needs that side's token"
                .into(),
        ));
    };
    let lines = parse_script(&text, &follower.game().scenario)
        .map_err(|e| at_line(&args.script, e.line, &e.message))?;
    let plan =
        plan(&lines, side, follower.game()).map_err(|(line, m)| at_line(&args.script, line, &m))?;

    let mut status = Status::Success;
    for (line, command) in plan {
        if !args.no_wait {
            wait_for_turn(&mut connection, &mut follower, side).await?;
        }
        let reply = connection
            .command(line.line as u64, command.clone())
            .await?;
        let descriptions = catch_up(&mut connection, &mut follower, &reply).await?;
        let result = reply.result();
        let failures = line
            .expect
            .as_ref()
            .map(|e| check_expectation(follower.game(), e, &result))
            .unwrap_or_default();
        if !failures.is_empty() {
            status = Status::ExpectationsFailed;
        }
        let outcome = LineOutcome {
            line: line.line,
            text: line.text.clone(),
            result,
            descriptions,
            failures,
        };
        outcome.write(out, args.json)?;
    }
    connection.close().await;
    Ok(status)
}

fn at_line(script: &Path, line: usize, message: &str) -> Failure {
    Failure::Input(format!("{}:{line}: {message}", script.display()))
}

/// The commands to send, checked before any is sent so a script never stops half-played for a
/// mistake that was there from the start: every line must be `side`'s, and none may set dice.
fn plan<'a>(
    lines: &'a [ScriptLine],
    side: Side,
    game: &Game,
) -> Result<Vec<(&'a ScriptLine, &'a Command)>, (usize, String)> {
    lines
        .iter()
        .map(|l| match &l.action {
            Action::Dice(_) => Err((
                l.line,
                "`dice` lines work only offline (asl check); the server rolls its own dice".into(),
            )),
            Action::Command(_) if l.side.is_some_and(|s| s != side) => Err((
                l.line,
                format!(
                    "the line is for the {}, but this token plays the {}",
                    game.side_name(side.opponent()),
                    game.side_name(side)
                ),
            )),
            Action::Command(c) => Ok((l, c)),
        })
        .collect()
}

/// Follows the game until `side` is to act (or the game is over, when the server's refusal
/// says more than waiting could).
async fn wait_for_turn(
    connection: &mut Connection,
    follower: &mut Follower,
    side: Side,
) -> Result<(), Failure> {
    loop {
        while let Some(event) = connection.pop_buffered() {
            follower.advance(&event)?;
        }
        if follower.game().over || follower.game().acting() == side {
            return Ok(());
        }
        let event = connection.next_event().await?;
        follower.advance(&event)?;
    }
}

/// Applies what arrived while the command waited and then the command's own events, in version
/// order, and returns the descriptions of the command's own events.
///
/// The server sends other players' events before the reply that follows them, but a server
/// that routes replies and the event stream separately may deliver one late; then we wait for
/// it rather than apply our events over a gap.
async fn catch_up(
    connection: &mut Connection,
    follower: &mut Follower,
    reply: &Reply,
) -> Result<Vec<String>, Failure> {
    let own: &[Sequenced] = match reply {
        Reply::Accepted { events, .. } => events,
        Reply::Refused { .. } => &[],
    };
    let own_seqs: BTreeSet<u64> = own.iter().map(|s| s.seq).collect();
    let mut pending: BTreeMap<u64, Sequenced> = own.iter().map(|s| (s.seq, s.clone())).collect();
    while let Some(event) = connection.pop_buffered() {
        pending.insert(event.seq, event);
    }
    let mut descriptions = vec![];
    while let Some(entry) = pending.first_entry() {
        if *entry.key() > follower.version() + 1 {
            let late = tokio::time::timeout(REPLY_WAIT_MAX, connection.next_event())
                .await
                .map_err(|_| ConnectionError::TimedOut("event before the command's own"))??;
            pending.insert(late.seq, late);
            continue;
        }
        let event = entry.remove();
        if let Advance::Applied(d) = follower.advance(&event)? {
            if own_seqs.contains(&event.seq) {
                descriptions.push(d);
            }
        }
    }
    Ok(descriptions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::Scenario;

    fn game() -> Game {
        Game::new(
            Scenario::from_toml(include_str!("../../../scenarios/b9-41-wall-advantage.toml"))
                .unwrap(),
        )
    }

    #[test]
    fn lines_without_a_side_are_the_joined_sides() {
        let game = game();
        let lines = parse_script("done\ngerman move 467a H6\n", &game.scenario).unwrap();
        let plan = plan(&lines, Side::A, &game).unwrap();
        assert_eq!(plan.len(), 2);
        assert_eq!(plan[0].1, &Command::Done);
    }

    #[test]
    fn the_other_sides_line_is_refused_before_sending() {
        let game = game();
        let lines = parse_script("done\n\nrussian done\n", &game.scenario).unwrap();
        let (line, message) = plan(&lines, Side::A, &game).unwrap_err();
        assert_eq!(line, 3);
        assert_eq!(
            message,
            "the line is for the Russian, but this token plays the German"
        );
    }

    #[test]
    fn dice_lines_are_offline_only() {
        let game = game();
        let lines = parse_script("dice 3 4\ndone\n", &game.scenario).unwrap();
        let (line, message) = plan(&lines, Side::B, &game).unwrap_err();
        assert_eq!(line, 1);
        assert!(
            message.contains("the server rolls its own dice"),
            "{message}"
        );
    }

    #[test]
    fn errors_point_into_the_script() {
        let f = at_line(Path::new("moves.txt"), 7, "unknown command `fly`");
        assert_eq!(f.to_string(), "moves.txt:7: unknown command `fly`");
        assert_eq!(f.exit_code(), 2);
    }
}

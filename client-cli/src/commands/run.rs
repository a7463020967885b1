//! `asl run`: play a script's lines on a server as one side.
//!
//! Two players can each run a script against the same game at once: before each line the
//! runner waits, following the game, until its side is to act — `done` and `move` need that,
//! and an `adjudicate` belongs to the step in which its side fired, which is its own step.
//! While play waits for one side's answer (a chance to claim Wall Advantage, a lost sewer
//! stack's designation), that side is to act, whoever's step it is. The local game it follows
//! is also what the lines' expectations are checked against.

use super::{join_fresh, side_to_act, GameArgs, ServerArg};
use crate::connection::{Connection, ConnectionError, Reply, REPLY_WAIT_MAX};
use crate::follower::{Advance, FollowError, Follower};
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
    // This side's nonce goes into the dice key before anything it does (docs/dice.md).
    crate::dice::contribute(&mut connection, &mut follower).await?;

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
            Action::Tem { .. } | Action::Cover { .. } => Err((
                l.line,
                "`tem` and `cover` questions are answered offline (asl check); they send nothing to a game"
                    .into(),
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
/// says more than waiting could). Not `Game::acting`: during a pause for one side's answer
/// that is the step's side, whose every command would be refused (B8.41, B9.322).
async fn wait_for_turn(
    connection: &mut Connection,
    follower: &mut Follower,
    side: Side,
) -> Result<(), Failure> {
    loop {
        while let Some(event) = connection.pop_buffered() {
            follower.advance(&event)?;
        }
        if follower.game().over || side_to_act(follower.game()) == side {
            return Ok(());
        }
        let event = connection.next_event().await?;
        follower.advance(&event)?;
    }
}

/// Applies what arrived while the command waited and then the command's own events, in version
/// order, and returns the descriptions of the command's own events.
///
/// asl-server queues other players' events ahead of the reply that follows them, but a server
/// that routes replies and the event stream separately may deliver one late; then we wait for
/// it rather than apply our events over a gap.
async fn catch_up(
    connection: &mut Connection,
    follower: &mut Follower,
    reply: &Reply,
) -> Result<Vec<String>, Failure> {
    let mut catching_up = CatchUp::new(reply);
    while let Some(event) = connection.pop_buffered() {
        catching_up.add(event);
    }
    while !catching_up.apply_ready(follower)? {
        let late = tokio::time::timeout(REPLY_WAIT_MAX, connection.next_event())
            .await
            .map_err(|_| ConnectionError::TimedOut("event before the command's own"))??;
        catching_up.add(late);
    }
    Ok(catching_up.descriptions)
}

/// The events [`catch_up`] holds until the local game reaches them: the command's own and any
/// from the other player, by version. Kept apart from the connection so the ordering can be
/// tested with hand-built messages.
struct CatchUp {
    pending: BTreeMap<u64, Sequenced>,
    own: BTreeSet<u64>,
    /// What the command's own events did, in order.
    descriptions: Vec<String>,
}

impl CatchUp {
    fn new(reply: &Reply) -> CatchUp {
        let own: &[Sequenced] = match reply {
            Reply::Accepted { events, .. } => events,
            Reply::Refused { .. } => &[],
        };
        CatchUp {
            pending: own.iter().map(|s| (s.seq, s.clone())).collect(),
            own: own.iter().map(|s| s.seq).collect(),
            descriptions: vec![],
        }
    }

    fn add(&mut self, event: Sequenced) {
        self.pending.insert(event.seq, event);
    }

    /// Applies the pending events that continue the local game. `false` while an earlier
    /// event is still missing: those after it stay pending rather than be applied over a gap.
    fn apply_ready(&mut self, follower: &mut Follower) -> Result<bool, FollowError> {
        while let Some(entry) = self.pending.first_entry() {
            if *entry.key() > follower.version() + 1 {
                return Ok(false);
            }
            let event = entry.remove();
            if let Advance::Applied(d) = follower.advance(&event)? {
                if self.own.contains(&event.seq) {
                    self.descriptions.push(d);
                }
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::{Scenario, ScriptedDice};

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

    /// The events a command makes on `game`, applied there too, numbered as a server would.
    fn play(game: &mut Game, side: Side, command: Command) -> Vec<Sequenced> {
        let events = protocol::decide(game, side, &command, &mut ScriptedDice::default()).unwrap();
        events
            .into_iter()
            .map(|e| {
                protocol::apply(game, &e);
                crate::follower::sequenced(game.version, e)
            })
            .collect()
    }

    /// The reply overtakes the German's event that precedes it: the Russian's own event waits
    /// until that one arrives, and only the Russian's is described as the command's.
    #[test]
    fn own_events_wait_for_the_ones_before_them() {
        let mut server = game();
        let mut russian = Follower::new(server.clone());
        let rph = play(&mut server, Side::A, Command::Done);
        let german_wa = play(&mut server, Side::A, Command::Done);
        let russian_wa = play(&mut server, Side::B, Command::Done);
        russian.advance(&rph[0]).unwrap();
        let reply = Reply::Accepted {
            version: server.version,
            events: russian_wa,
        };

        let mut catching_up = CatchUp::new(&reply);
        assert!(!catching_up.apply_ready(&mut russian).unwrap());
        assert_eq!(russian.version(), 1, "nothing applied over the gap");
        // The late event, and a repeat of one already applied, as a resumed stream may send.
        catching_up.add(german_wa[0].clone());
        catching_up.add(rph[0].clone());
        assert!(catching_up.apply_ready(&mut russian).unwrap());
        assert_eq!(russian.game(), &server);
        assert_eq!(catching_up.descriptions.len(), 1);
        assert!(
            catching_up.descriptions[0].starts_with("Russian ended"),
            "{:?}",
            catching_up.descriptions
        );
    }

    /// A refusal carries no events, but the other player's that came with it are applied.
    #[test]
    fn a_refusal_still_catches_up() {
        let mut server = game();
        let mut russian = Follower::new(server.clone());
        let rph = play(&mut server, Side::A, Command::Done);
        let violation = protocol::decide(
            &server,
            Side::B,
            &Command::Done,
            &mut ScriptedDice::default(),
        )
        .unwrap_err();
        let reply = Reply::Refused {
            version: server.version,
            violation,
        };
        let mut catching_up = CatchUp::new(&reply);
        catching_up.add(rph[0].clone());
        assert!(catching_up.apply_ready(&mut russian).unwrap());
        assert_eq!(russian.game(), &server);
        assert!(catching_up.descriptions.is_empty());
    }

    #[test]
    fn errors_point_into_the_script() {
        let f = at_line(Path::new("moves.txt"), 7, "unknown command `fly`");
        assert_eq!(f.to_string(), "moves.txt:7: unknown command `fly`");
        assert_eq!(f.exit_code(), 2);
    }
}

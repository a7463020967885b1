//! `asl run`: play a script's lines on a server as one side.
//!
//! Two players can each run a script against the same game at once: before each line the
//! runner waits, following the game, until its side is to act — `done` and `move` need that,
//! and an `adjudicate` belongs to the step in which its side fired, which is its own step.
//! While play waits for one side's answer (a chance to claim Wall Advantage, a lost sewer
//! stack's designation), that side is to act, whoever's step it is. The local game it follows
//! is also what the lines' expectations are checked against.
//!
//! A script file is checked whole before anything is sent; `-` reads the script from standard
//! input instead, sending each line as it arrives. The run stops at the first refusal the
//! script did not expect (`=> refused …`), unless `--keep-going`, and then exits 1.

use super::{join_fresh, side_to_act, GameArgs, ServerArg};
use crate::connection::{Connection, ConnectionError, Reply, REPLY_WAIT_MAX};
use crate::follower::{Advance, FollowError, Follower};
use crate::report::LineOutcome;
use crate::{read_input, Failure, Status};
use protocol::script::{check_expectation, parse_script, Action, ScriptLine, SCRIPT_LINES_MAX};
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
    /// The script to play (see docs/script.md); `-` reads it from standard input, line by
    /// line, sending each as it comes.
    pub script: PathBuf,
    /// Send each line at once instead of waiting until the joined side is to act.
    #[arg(long)]
    pub no_wait: bool,
    /// Play on after a refusal instead of stopping there (the exit code is still 1).
    #[arg(long)]
    pub keep_going: bool,
    /// Play every line anew. Without it, lines an earlier run of this script (the same path,
    /// and the same lines up to there) played in this game are answered from the game's log
    /// instead of being played twice, so a script run again resumes where the game is.
    #[arg(long)]
    pub fresh: bool,
    /// Print one JSON object per line instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Where the script's lines come from: a file checked whole before anything is sent, or
/// standard input, each line checked and sent as it arrives.
enum Source {
    File(std::vec::IntoIter<ScriptLine>),
    Stdin {
        lines: tokio::io::Lines<tokio::io::BufReader<tokio::io::Stdin>>,
        number: usize,
    },
}

impl Source {
    /// The next line with a command, checked against `plan`'s rules; `None` at the end.
    async fn next(
        &mut self,
        script: &Path,
        side: Side,
        game: &Game,
    ) -> Result<Option<ScriptLine>, Failure> {
        match self {
            Source::File(lines) => Ok(lines.next()),
            Source::Stdin { lines, number } => loop {
                let Some(raw) = lines
                    .next_line()
                    .await
                    .map_err(|e| Failure::Input(format!("cannot read standard input: {e}")))?
                else {
                    return Ok(None);
                };
                *number += 1;
                if *number > SCRIPT_LINES_MAX {
                    return Err(at_line(
                        script,
                        *number,
                        &format!("scripts end at {SCRIPT_LINES_MAX} lines"),
                    ));
                }
                let parsed = parse_script(&raw, &game.scenario)
                    .map_err(|e| at_line(script, *number, &e.message))?;
                let Some(mut line) = parsed.into_iter().next() else {
                    continue;
                };
                line.line = *number;
                plan(std::slice::from_ref(&line), side, game)
                    .map_err(|(_, m)| at_line(script, *number, &m))?;
                return Ok(Some(line));
            },
        }
    }
}

pub async fn run(args: &RunArgs, out: &mut (dyn Write + Send)) -> Result<Status, Failure> {
    let from_stdin = args.script.as_os_str() == "-";
    let text = if from_stdin {
        None
    } else {
        Some(read_input(&args.script)?)
    };
    let (mut connection, joined, mut follower) = join_fresh(&args.server, &args.game).await?;
    let Viewer::Side(side) = joined.viewer else {
        return Err(Failure::Input(
            "this is the spectator token; `asl run` plays a side and needs that side's token"
                .into(),
        ));
    };
    let mut source = match text {
        Some(text) => {
            let lines = parse_script(&text, &follower.game().scenario)
                .map_err(|e| at_line(&args.script, e.line, &e.message))?;
            plan(&lines, side, follower.game())
                .map_err(|(line, m)| at_line(&args.script, line, &m))?;
            Source::File(lines.into_iter())
        }
        None => Source::Stdin {
            lines: tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(tokio::io::stdin())),
            number: 0,
        },
    };
    // This side's nonce goes into the dice key before anything it does (docs/dice.md).
    crate::dice::contribute(&mut connection, &mut follower).await?;

    let mut status = Status::Success;
    let mut keys = LineKeys::new(&args.script, args.fresh)?;
    while let Some(line) = source.next(&args.script, side, follower.game()).await? {
        let key = keys.next(&line);
        let mut delays = super::watch::reconnect_delays();
        // The line's key makes sending it again safe: after a lost connection the server
        // answers with what it made, if the first send reached it, instead of playing it twice.
        let (reply, held) = loop {
            let sent = send_line(&mut connection, &mut follower, side, args, &line, key).await;
            match sent {
                Ok(sent) => break sent,
                Err(Stop::Link(e)) if e.is_transient() => {
                    let Some(delay) = delays.next() else {
                        return Err(e.into());
                    };
                    eprintln!(
                        "asl: {}; reconnecting for line {}",
                        crate::printable_lines(&e.to_string()),
                        line.line
                    );
                    tokio::time::sleep(delay).await;
                    if let Ok((c, _, f)) = join_fresh(&args.server, &args.game).await {
                        (connection, follower) = (c, f);
                    }
                }
                Err(Stop::Link(e)) => return Err(e.into()),
                Err(Stop::Failed(f)) => return Err(f),
            }
        };
        let earlier = played_earlier(&reply, held);
        let mut descriptions = catch_up(&mut connection, &mut follower, &reply).await?;
        let result = reply.result();
        // A line played by an earlier run was checked then; the game has moved on since.
        let failures = match (&line.expect, earlier) {
            (Some(e), None) => check_expectation(follower.game(), e, &result),
            _ => vec![],
        };
        if let Some((first, last)) = earlier {
            descriptions = vec![format!("played already, as #{first}–#{last}")];
        }
        let unexpected_refusal = result.is_err() && (line.expect.is_none() || !failures.is_empty());
        if !failures.is_empty() && status == Status::Success {
            status = Status::ExpectationsFailed;
        }
        if unexpected_refusal {
            status = Status::Refused;
        }
        let outcome = LineOutcome {
            line: line.line,
            text: line.text.clone(),
            result,
            descriptions,
            failures,
        };
        outcome.write(out, args.json)?;
        if unexpected_refusal && !args.keep_going {
            eprintln!(
                "{}:{}: refused; stopping here (--keep-going plays on after a refusal)",
                args.script.display(),
                line.line
            );
            break;
        }
    }
    connection.close().await;
    Ok(status)
}

fn at_line(script: &Path, line: usize, message: &str) -> Failure {
    Failure::Input(format!("{}:{line}: {message}", script.display()))
}

/// The commands to send, checked before any is sent so a script never stops half-played for a
/// mistake that was there from the start: every line must be `side`'s, and none may set dice.
pub(crate) fn plan<'a>(
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
            Action::Tem { .. } | Action::Cover { .. } | Action::Los { .. } => Err((
                l.line,
                "`tem`, `cover` and `los` questions are answered offline (asl check); they send nothing to a game"
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

/// Why sending a line stopped: the link (worth reconnecting, if transient) or anything else.
enum Stop {
    Link(ConnectionError),
    Failed(Failure),
}

impl From<ConnectionError> for Stop {
    fn from(e: ConnectionError) -> Stop {
        Stop::Link(e)
    }
}

impl From<FollowError> for Stop {
    fn from(e: FollowError) -> Stop {
        Stop::Failed(e.into())
    }
}

/// Waits until `line` may be sent (unless `--no-wait`), sends it with its `key`, and returns
/// the reply with the version the game stood at when it was sent.
async fn send_line(
    connection: &mut Connection,
    follower: &mut Follower,
    side: Side,
    args: &RunArgs,
    line: &ScriptLine,
    key: u64,
) -> Result<(Reply, u64), Stop> {
    let Action::Command(command) = &line.action else {
        unreachable!("`plan` lets only commands through");
    };
    if !args.no_wait {
        let script = args.script.display();
        let wait = Wait::before(command);
        wait_for(connection, follower, side, wait, |game| {
            eprintln!(
                "{}",
                waiting_words(&script.to_string(), line.line, wait, game, side)
            );
        })
        .await?;
    }
    let held = follower.version();
    let reply = connection
        .command(line.line as u64, command.clone(), Some(key))
        .await?;
    Ok((reply, held))
}

/// The keys that make script lines exactly-once (`docs/protocol.md`). A line's key is a hash
/// of the script's path as given (`-` for standard input) and of every command line up to and
/// including it, with their numbers: run again, the lines an earlier run played are answered
/// from the game's log instead of being played twice; a line edited (after a refusal, say)
/// and every line after it are new commands. `fresh` mixes in a random salt: nothing repeats.
struct LineKeys {
    prefix: blake3::Hasher,
}

impl LineKeys {
    fn new(script: &Path, fresh: bool) -> Result<LineKeys, Failure> {
        let mut prefix = blake3::Hasher::new();
        prefix.update(b"asl run script\0");
        prefix.update(script.as_os_str().as_encoded_bytes());
        prefix.update(b"\0");
        if fresh {
            let mut salt = [0u8; 16];
            getrandom::fill(&mut salt)
                .map_err(|e| Failure::Server(format!("no randomness for --fresh: {e}")))?;
            prefix.update(&salt);
        }
        Ok(LineKeys { prefix })
    }

    fn next(&mut self, line: &ScriptLine) -> u64 {
        self.prefix.update(&(line.line as u64).to_le_bytes());
        self.prefix.update(line.text.as_bytes());
        self.prefix.update(b"\n");
        let hash = self.prefix.finalize();
        u64::from_le_bytes(hash.as_bytes()[..8].try_into().expect("8 of 32 bytes"))
    }
}

/// `Some((first, last))` when the reply gives back events the game held already before the
/// command was sent (`held`): the server answered a line an earlier run played.
fn played_earlier(reply: &Reply, held: u64) -> Option<(u64, u64)> {
    match reply {
        Reply::Accepted { events, .. } => {
            let first = events.first()?.seq;
            let last = events.last()?.seq;
            (last <= held).then_some((first, last))
        }
        Reply::Refused { .. } => None,
    }
}

/// What a command waits for before it is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wait {
    /// Its side to act (most commands).
    Turn,
    /// The opponent's offer to end the game (`accept-end`).
    Offer,
    /// Nothing: `concede` is taken at any moment.
    Nothing,
}

impl Wait {
    fn before(command: &Command) -> Wait {
        match command {
            Command::Concede => Wait::Nothing,
            Command::AcceptEnd => Wait::Offer,
            _ => Wait::Turn,
        }
    }

    /// Whether `side` may send now (or the game is over, when the server's refusal says more
    /// than waiting could). Not `Game::acting`: during a pause for one side's answer that is
    /// the step's side, whose every command would be refused (B8.41, B9.322).
    fn ready(self, game: &Game, side: Side) -> bool {
        game.over
            || match self {
                Wait::Turn => side_to_act(game) == side,
                Wait::Offer => game.end_proposal == Some(side.opponent()),
                Wait::Nothing => true,
            }
    }

    fn awaited(self, game: &Game, side: Side) -> String {
        match self {
            Wait::Offer => format!(
                "the {} to offer to end the game (propose-end)",
                game.side_name(side.opponent())
            ),
            Wait::Turn | Wait::Nothing => super::awaited(game),
        }
    }
}

/// What `asl run` says while it waits before a line: what the game waits for, in the words
/// of the local game, which a hostile server's events fill (a unit id holding a terminal
/// escape): escaped, as everything else it prints of the server's is.
fn waiting_words(script: &str, line: usize, wait: Wait, game: &Game, side: Side) -> String {
    crate::printable(&format!(
        "{script}:{line}: waiting for {} (this token plays the {})",
        wait.awaited(game, side),
        game.side_name(side)
    ))
}

/// Follows the game until `wait` is over for `side`. `waiting` hears once what the game waits
/// for, when it has to wait.
async fn wait_for(
    connection: &mut Connection,
    follower: &mut Follower,
    side: Side,
    wait: Wait,
    waiting: impl FnOnce(&Game),
) -> Result<(), Stop> {
    let mut waiting = Some(waiting);
    loop {
        while let Some(event) = connection.pop_buffered() {
            follower.advance(&event)?;
        }
        // Between a step begun and its passing by itself (B9.322) the step's side is not
        // asked: whose turn it is is read where the command's events end.
        if follower.settled() {
            if wait.ready(follower.game(), side) {
                return Ok(());
            }
            if let Some(say) = waiting.take() {
                say(follower.game());
            }
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
pub(crate) async fn catch_up(
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
    use protocol::ReadScenario;
    use protocol::{Scenario, ScriptedDice};

    fn game() -> Game {
        Game::new(
            Scenario::from_toml(include_str!("../../../scenarios/b9-41-wall-advantage.toml"))
                .unwrap(),
        )
    }

    /// What `asl run` says while it waits names units and sides of the local game, which a
    /// hostile server's events fill: it reaches the terminal escaped. Before, a WA chance
    /// naming a unit id holding a terminal escape was written to stderr as it came.
    #[test]
    fn the_wait_is_said_in_escaped_words() {
        use protocol::event::WallAdvantageChanceOffered;
        let mut game = game();
        protocol::apply(
            &mut game,
            &protocol::Event::WallAdvantageChanceOffered(WallAdvantageChanceOffered {
                side: Side::B,
                units: vec!["\u{1b}]0;owned\u{7}".into()],
            }),
        );
        let said = waiting_words("s.script", 3, Wait::Turn, &game, Side::A);
        assert!(crate::plain(&said), "{said:?}");
        assert!(said.starts_with("s.script:3: waiting for "), "{said}");
        assert!(said.contains("\\u{1b}]0;owned"), "{said}");
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
        // The RPh ends and both end-of-RPh steps pass by themselves (B9.322): the German
        // plays on to the Russian's DFPh.
        let rph = play(&mut server, Side::A, Command::Done);
        let pfph = play(&mut server, Side::A, Command::Done);
        let mph = play(&mut server, Side::A, Command::Done);
        let russian_dfph = play(&mut server, Side::B, Command::Done);
        for e in rph.iter().chain(&pfph) {
            russian.advance(e).unwrap();
        }
        let reply = Reply::Accepted {
            version: server.version,
            events: russian_dfph,
        };

        let mut catching_up = CatchUp::new(&reply);
        assert!(!catching_up.apply_ready(&mut russian).unwrap());
        assert_eq!(russian.version(), 4, "nothing applied over the gap");
        // The late event, and a repeat of one already applied, as a resumed stream may send.
        catching_up.add(mph[0].clone());
        catching_up.add(pfph[0].clone());
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
        for e in &rph {
            catching_up.add(e.clone());
        }
        assert!(catching_up.apply_ready(&mut russian).unwrap());
        assert_eq!(russian.game(), &server);
        assert!(catching_up.descriptions.is_empty());
    }

    #[test]
    fn a_lines_key_follows_the_script_up_to_it() {
        let game = game();
        let keys = |path: &str, text: &str, fresh: bool| -> Vec<u64> {
            let lines = parse_script(text, &game.scenario).unwrap();
            let mut k = LineKeys::new(Path::new(path), fresh).unwrap();
            lines.iter().map(|l| k.next(l)).collect()
        };
        let first = keys("g.txt", "done\ndone\nmove 467a H6\n", false);
        assert_eq!(first, keys("g.txt", "done\ndone\nmove 467a H6\n", false));
        let edited = keys("g.txt", "done\ndone\nmove 467a G6\ndone\n", false);
        assert_eq!(edited[..2], first[..2], "the lines before the edit resume");
        assert_ne!(edited[2], first[2]);
        assert_ne!(
            first[0], first[1],
            "the same text on another line is another command"
        );
        assert_ne!(keys("r.txt", "done\n", false)[0], first[0]);
        assert_ne!(keys("g.txt", "done\n", true)[0], first[0]);
    }

    #[test]
    fn errors_point_into_the_script() {
        let f = at_line(Path::new("moves.txt"), 7, "unknown command `fly`");
        assert_eq!(f.to_string(), "moves.txt:7: unknown command `fly`");
        assert_eq!(f.exit_code(), 2);
    }
}

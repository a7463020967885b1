//! `asl play`: an interactive session as one side. Each line typed is a script line
//! (docs/script.md) sent at once; its result, the opponent's events as they come, and a status
//! line saying what the game waits for are printed above the prompt.
//!
//! The line editor (rustyline: history, completion of commands, unit ids and hexes) runs on a
//! thread of its own and hands each line to [`session`], which owns the connection: the
//! session is the same with any source of lines, which is how it is tested.

use super::run::{catch_up, plan};
use super::{awaited, join_fresh, side_to_act, GameArgs, ServerArg};
use crate::connection::Connection;
use crate::follower::Follower;
use crate::record::Record;
use crate::report::LineOutcome;
use crate::{Failure, Status};
use protocol::script::{parse_script, COMMAND_WORDS};
use protocol::{Game, Side, Viewer};
use rustyline::completion::{Completer, Pair};
use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
use rustyline::{Context, Editor, ExternalPrinter, Helper};
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// Lines typed ahead of the session: a paste of a few dozen lines, not an unbounded queue.
const TYPED_AHEAD_MAX: usize = 64;

/// Lines the history keeps, here and in its file.
const HISTORY_LINES_MAX: usize = 1_000;

/// Words the session itself answers, besides the script's commands.
const SESSION_WORDS: &[&str] = &["help", "status", "left", "preview", "quit"];

#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct PlayArgs {
    #[command(flatten)]
    pub server: ServerArg,
    #[command(flatten)]
    pub game: GameArgs,
    /// Where to keep the line history (default: `asl-history` beside the saved games).
    #[arg(long)]
    pub history: Option<PathBuf>,
}

/// What completion offers: updated by the session as the game moves on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Vocabulary {
    pub units: Vec<String>,
    pub hexes: Vec<String>,
}

impl Vocabulary {
    /// The unit ids the viewer's projection shows (its own, and the opponent's it may see),
    /// the units of its order of battle still off board (to set up or to enter), and every
    /// hex of the board.
    pub fn of(game: &Game) -> Vocabulary {
        let off_board = game.viewer.and_then(|v| match v {
            protocol::game::Viewer::Side(side) => Some(side),
            protocol::game::Viewer::Spectator => None,
        });
        let mut units: Vec<String> = game
            .units
            .values()
            .filter(|u| !u.eliminated)
            .map(|u| u.id.clone())
            .collect();
        if let Some(side) = off_board {
            units.extend(game.left_to_set_up(side).iter().map(|u| u.id.clone()));
            units.extend(game.waiting_to_enter(side).iter().map(|u| u.id.clone()));
        }
        Vocabulary {
            units,
            hexes: game.scenario.hexes.keys().map(|h| h.to_string()).collect(),
        }
    }

    /// Candidates for the word being typed: a command (or session word) in first place, else
    /// a unit id or a hex, each starting with `prefix` (case-insensitively).
    pub fn complete(&self, first_word: bool, prefix: &str) -> Vec<String> {
        let starts =
            |c: &&str| c.len() >= prefix.len() && c[..prefix.len()].eq_ignore_ascii_case(prefix);
        let words: Vec<&str> = if first_word {
            COMMAND_WORDS.iter().chain(SESSION_WORDS).copied().collect()
        } else {
            self.units
                .iter()
                .chain(&self.hexes)
                .map(String::as_str)
                .collect()
        };
        words
            .into_iter()
            .filter(starts)
            .map(str::to_string)
            .collect()
    }
}

struct PlayHelper {
    vocabulary: Arc<Mutex<Vocabulary>>,
}

impl Completer for PlayHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let before = &line[..pos];
        let start = before.rfind(char::is_whitespace).map_or(0, |i| i + 1);
        let first_word = before[..start].trim().is_empty();
        let vocabulary = self.vocabulary.lock().expect("no panic holds the lock");
        let pairs = vocabulary
            .complete(first_word, &before[start..])
            .into_iter()
            .map(|w| Pair {
                display: w.clone(),
                replacement: w,
            })
            .collect();
        Ok((start, pairs))
    }
}

impl rustyline::hint::Hinter for PlayHelper {
    type Hint = String;
}
impl rustyline::highlight::Highlighter for PlayHelper {}
impl rustyline::validate::Validator for PlayHelper {}
impl Helper for PlayHelper {}

pub async fn play(args: &PlayArgs, out: &mut (dyn Write + Send)) -> Result<Status, Failure> {
    let (mut connection, joined, mut follower) = join_fresh(&args.server, &args.game).await?;
    let Viewer::Side(side) = joined.viewer else {
        return Err(Failure::Input(
            "this is the spectator token; `asl play` plays a side (`asl watch` follows a game)"
                .into(),
        ));
    };
    crate::dice::contribute(&mut connection, &mut follower).await?;

    let vocabulary = Arc::new(Mutex::new(Vocabulary::of(follower.game())));
    let config = rustyline::Config::builder()
        .max_history_size(HISTORY_LINES_MAX)
        .map_err(|e| Failure::Input(format!("cannot set up the line editor: {e}")))?
        .auto_add_history(true)
        .build();
    let mut editor: Editor<PlayHelper, DefaultHistory> = Editor::with_config(config)
        .map_err(|e| Failure::Input(format!("cannot start the line editor: {e}")))?;
    editor.set_helper(Some(PlayHelper {
        vocabulary: vocabulary.clone(),
    }));
    let history = match &args.history {
        Some(path) => Some(path.clone()),
        None => crate::saved::saved_dir()
            .ok()
            .and_then(|d| d.parent().map(|p| p.join("asl-history"))),
    };
    if let Some(path) = &history {
        let _ = editor.load_history(path); // none yet on the first session
    }
    // Printed above the prompt when the terminal allows, else straight to stdout.
    let printer: Box<dyn FnMut(String) + Send> = match editor.create_external_printer() {
        Ok(mut p) => Box::new(move |text: String| {
            let _ = p.print(format!("{text}\n"));
        }),
        Err(_) => Box::new(|text: String| println!("{text}")),
    };
    let prompt = format!("{}> ", follower.game().side_name(side).to_lowercase());
    let (lines, typed) = mpsc::channel(TYPED_AHEAD_MAX);
    let reader = std::thread::spawn(move || {
        loop {
            match editor.readline(&prompt) {
                Ok(line) => {
                    if lines.blocking_send(line).is_err() {
                        break;
                    }
                }
                Err(ReadlineError::Interrupted | ReadlineError::Eof) => break,
                Err(e) => {
                    eprintln!("asl: the line editor failed: {e}");
                    break;
                }
            }
        }
        if let Some(path) = &history {
            let _ = editor.save_history(path);
        }
    });
    let mut say = printer;
    let status = session(
        &mut connection,
        &mut follower,
        side,
        typed,
        &mut *say,
        &vocabulary,
    )
    .await;
    connection.close().await;
    writeln!(out)?;
    // The reader ends at the next line or end of input; a finished game does not wait for it.
    if reader.is_finished() {
        let _ = reader.join();
    }
    status
}

fn fresh_key() -> Result<u64, Failure> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes)
        .map_err(|e| Failure::Server(format!("no randomness for a command key: {e}")))?;
    Ok(u64::from_le_bytes(bytes))
}

/// The status line: whose step it is and what the game waits for.
pub fn status_line(game: &Game, side: Side) -> String {
    let mut line = if game.over {
        "-- the game is over".to_string()
    } else if side_to_act(game) == side {
        format!("-- your turn: {}", awaited(game))
    } else {
        format!("-- waiting for {}", awaited(game))
    };
    if game.setup.is_some() && side_to_act(game) == side {
        match super::left_to_set_up(game, side) {
            Some(left) => {
                line += &format!(
                    "; left to set up: {left} (`setup UNIT HEX [concealed|hidden]`, `lift UNIT`)"
                )
            }
            None => line += "; every unit is placed: `done` ends your set-up",
        }
    }
    match game.end_proposal {
        Some(by) if !game.over && by != side => {
            line += &format!(
                "; the {} offers to end the game (accept-end agrees)",
                game.side_name(by)
            )
        }
        Some(_) if !game.over => line += "; your offer to end the game stands",
        _ => {}
    }
    line
}

/// A preview's answer as the session prints it: the verdict on the first line, then an
/// attack's fire panel line by line (FP and column, each DRM with its rule, Cowering, each
/// firer's LOS to the target hex), or why the referee leaves the attack to the players.
pub fn preview_words(text: &str, outcome: &protocol::wire::PreviewOutcome) -> Vec<String> {
    use protocol::preview::FireAssessment;
    use protocol::wire::PreviewOutcome;
    let preview = match outcome {
        PreviewOutcome::Refused(v) => return vec![format!("preview {text} -> refused {v}")],
        PreviewOutcome::Allowed(p) => p,
    };
    let Some(attack) = &preview.attack else {
        return vec![format!("preview {text} -> {}", preview.summary)];
    };
    let mut lines = vec![format!("preview {text} -> allowed; before the dice (A7):")];
    match &attack.assessment {
        FireAssessment::Resolved {
            fp,
            shares,
            column,
            drms,
            cowering,
        } => {
            lines.push(format!(
                "  {fp} FP on the {column} column (A7.3): {}",
                shares.join("; ")
            ));
            if drms.is_empty() {
                lines.push("  no DRM".into());
            }
            for m in drms {
                lines.push(format!("  DRM {:+} {} ({})", m.value, m.reason, m.rule));
            }
            lines.push(format!("  {cowering}"));
        }
        FireAssessment::LeftToPlayers { rule, why } => lines.push(format!(
            "  the referee leaves it to the players: {why} ({rule})"
        )),
    }
    for los in &attack.los {
        lines.push(format!(
            "  LOS {} -> {}: {}{}",
            los.unit,
            attack.target,
            los.verdict
                .map_or("cannot be traced".to_string(), |v| v.to_string()),
            if los.reasons.is_empty() {
                String::new()
            } else {
                format!(": {}", los.reasons.join("; "))
            }
        ));
    }
    lines
}

const HELP: &str = "Type a command as in a script (docs/script.md), e.g. `move g1 C4`, `done`, \
`claim-wa g1`, `concede`; in the set-up step `setup g1 C4 [concealed|hidden]`, `lift g1` and \
`done`. Tab completes commands, unit ids and hexes. `status` shows what the game waits for; \
`left` lists the units still to set up or waiting to enter; `preview LINE` asks the referee what \
a command would do without sending it (an attack's FP, column, DRMs and LOS, A7); `quit` (or Ctrl-D) leaves, and the game goes on without you.";

/// Plays `side` with the lines from `typed` until they end, `quit`, or the game is over,
/// printing through `say`; follows the opponent's events as they come in between lines.
///
/// Everything the session says goes through one function that escapes control and bidi
/// characters ([`crate::printable_lines`]): the status line, `left` and a refusal name units
/// and sides from the local game, which the server's events fill, and a server is hostile.
/// Before, only the events' descriptions were escaped, so a WA chance naming a unit id that
/// held a terminal escape reached the terminal raw in the status line.
pub async fn session(
    connection: &mut Connection,
    follower: &mut Follower,
    side: Side,
    typed: mpsc::Receiver<String>,
    say: &mut (dyn FnMut(String) + Send),
    vocabulary: &Mutex<Vocabulary>,
) -> Result<Status, Failure> {
    let mut escaped = |text: String| say(crate::printable_lines(&text));
    play_lines(connection, follower, side, typed, &mut escaped, vocabulary).await
}

/// [`session`], saying through `say` as it is.
async fn play_lines(
    connection: &mut Connection,
    follower: &mut Follower,
    side: Side,
    mut typed: mpsc::Receiver<String>,
    say: &mut (dyn FnMut(String) + Send),
    vocabulary: &Mutex<Vocabulary>,
) -> Result<Status, Failure> {
    let mut record = Record::starting_at(follower.version() + 1);
    let mut last_status = status_line(follower.game(), side);
    say(last_status.clone());
    let mut number = 0;
    while !follower.game().over {
        tokio::select! {
            line = typed.recv() => {
                let Some(line) = line else { break };
                number += 1;
                let text = line.trim();
                match text {
                    "" => continue,
                    "quit" | "exit" => break,
                    "help" => {
                        say(HELP.into());
                        continue;
                    }
                    "status" => {
                        say(status_line(follower.game(), side));
                        continue;
                    }
                    "preview" => {
                        say("? preview what: `preview attack g1 g2 at C4`, `preview move g1 C4`".into());
                        continue;
                    }
                    "left" => {
                        let game = follower.game();
                        let waiting: Vec<&str> =
                            game.waiting_to_enter(side).iter().map(|u| u.id.as_str()).collect();
                        say(match super::left_to_set_up(game, side) {
                            Some(left) => format!("left to set up: {left}"),
                            None if game.setup.is_some() => "every unit of your set-up is placed".into(),
                            None => "nothing left to set up".into(),
                        });
                        if !waiting.is_empty() {
                            say(format!("waiting off board to enter (A2.51): {}", waiting.join(", ")));
                        }
                        continue;
                    }
                    _ => {}
                }
                // `preview LINE`: the line is asked of the referee, not sent.
                let (previewing, text) = match text.strip_prefix("preview ") {
                    Some(rest) => (true, rest.trim()),
                    None => (false, text),
                };
                let parsed = parse_script(text, &follower.game().scenario)
                    .map_err(|e| e.message)
                    .and_then(|lines| {
                        plan(&lines, side, follower.game()).map_err(|(_, m)| m)?;
                        Ok(lines)
                    });
                let line = match parsed {
                    Ok(lines) => match lines.into_iter().next() {
                        Some(line) => line,
                        None => continue, // a comment
                    },
                    Err(message) => {
                        say(format!("? {message}"));
                        continue;
                    }
                };
                let protocol::script::Action::Command(command) = &line.action else {
                    unreachable!("`plan` lets only commands through");
                };
                if previewing {
                    let outcome = connection.preview(number, command.clone()).await?;
                    for said in preview_words(&line.text, &outcome) {
                        say(said);
                    }
                    continue;
                }
                // A fresh key a line: sent once, whatever happens to the connection.
                let reply = connection
                    .command(number, command.clone(), Some(fresh_key()?))
                    .await?;
                let descriptions = catch_up(connection, follower, &reply).await?;
                let result = reply.result();
                let outcome = LineOutcome {
                    line: number as usize,
                    text: line.text.clone(),
                    result,
                    descriptions,
                    failures: vec![],
                };
                say(outcome.text());
            }
            event = connection.next_event() => {
                let event = event?;
                for text in record.follow(follower, &event)? {
                    say(text);
                }
            }
        }
        *vocabulary.lock().expect("no panic holds the lock") = Vocabulary::of(follower.game());
        // Mid-command (a step begun that passes by itself, B9.322) whose turn it is waits.
        let now = status_line(follower.game(), side);
        if follower.settled() && now != last_status {
            say(now.clone());
            last_status = now;
        }
    }
    // A refusal at the prompt is answered there; leaving is a success however play went.
    Ok(Status::Success)
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::event::EndProposed;
    use protocol::ReadScenario;
    use protocol::Scenario;

    fn game() -> Game {
        Game::new(
            Scenario::from_toml(include_str!("../../../scenarios/village-outskirts.toml")).unwrap(),
        )
    }

    /// An attack's preview prints its fire panel line by line; a refusal its rule.
    #[test]
    fn a_preview_prints_the_fire_panel() {
        use protocol::preview::{FireAssessment, FirePreview, FirerLos, Preview};
        use protocol::wire::PreviewOutcome;
        let attack = PreviewOutcome::Allowed(Preview {
            summary: "8 FP …".into(),
            cost: None,
            mf: vec![],
            attack: Some(FirePreview {
                target: "2W5".parse().unwrap(),
                assessment: FireAssessment::Resolved {
                    fp: "8".into(),
                    shares: vec!["w1 8 at range 1, PBF ×2 (A7.21)".into()],
                    column: "8".into(),
                    drms: vec![protocol::game::dice::Modifier {
                        value: 1,
                        reason: "TEM: in-hex TEM 1 (Woods B13)".into(),
                        rule: "B13".into(),
                    }],
                    cowering: "doubles cower 1 column(s) left (A7.9)".into(),
                },
                los: vec![FirerLos {
                    unit: "w1".into(),
                    verdict: Some(protocol::board::los::Verdict::Hindered(1)),
                    reasons: vec!["Brush in 2W4: +1 Hindrance (B12.2)".into()],
                }],
            }),
        });
        assert_eq!(
            preview_words("attack w1 at 2W5", &attack),
            [
                "preview attack w1 at 2W5 -> allowed; before the dice (A7):",
                "  8 FP on the 8 column (A7.3): w1 8 at range 1, PBF ×2 (A7.21)",
                "  DRM +1 TEM: in-hex TEM 1 (Woods B13) (B13)",
                "  doubles cower 1 column(s) left (A7.9)",
                "  LOS w1 -> 2W5: hindered 1: Brush in 2W4: +1 Hindrance (B12.2)",
            ]
        );
        let refused = PreviewOutcome::Refused(protocol::RuleViolation::new(
            "A7",
            protocol::rules::violation::ViolationKind::WrongPhase,
            "the German does not fire in the RPh",
        ));
        assert_eq!(
            preview_words("attack w1 at 2W5", &refused),
            ["preview attack w1 at 2W5 -> refused A7: the German does not fire in the RPh"]
        );
    }

    #[test]
    fn completion_offers_commands_first_then_units_and_hexes() {
        let v = Vocabulary::of(&game().project(Viewer::Side(Side::A)));
        assert_eq!(
            v.complete(true, "dec"),
            ["decline-wa", "decline-undo"].map(String::from)
        );
        assert!(v.complete(true, "con").contains(&"concede".to_string()));
        assert!(v.complete(true, "qu").contains(&"quit".to_string()));
        assert_eq!(v.complete(false, "g-"), ["g-ldr"].map(String::from));
        assert!(v.complete(false, "12c").contains(&"12C4".to_string()));
        assert!(
            v.complete(false, "r").iter().all(|u| u != "r3"),
            "the Russian's hidden unit is not offered to the German"
        );
    }

    #[test]
    fn the_status_line_shows_an_offer_to_end() {
        let mut game = game();
        protocol::apply(
            &mut game,
            &protocol::Event::EndProposed(EndProposed { side: Side::B }),
        );
        assert!(
            status_line(&game, Side::A)
                .ends_with("; the Russian offers to end the game (accept-end agrees)"),
            "{}",
            status_line(&game, Side::A)
        );
        assert!(status_line(&game, Side::B).ends_with("; your offer to end the game stands"));
    }

    #[test]
    fn in_set_up_the_status_line_lists_what_is_left_to_place() {
        let scenario = Scenario::from_toml(include_str!(
            "../../../protocol/tests/positions/scenarios/setup.toml"
        ))
        .unwrap();
        let game = Game::new(scenario);
        let russian = game.project(Viewer::Side(Side::B));
        let line = status_line(&russian, Side::B);
        assert!(
            line.starts_with("-- your turn: the Russian: its set-up before Turn 1 (A12.12)"),
            "{line}"
        );
        assert!(
            line.contains("r1 (squad 4-4-7, may be concealed)"),
            "{line}"
        );
        assert!(line.contains("r4 (squad 4-4-7, may be HIP)"), "{line}");
        let german = game.project(Viewer::Side(Side::A));
        let line = status_line(&german, Side::A);
        assert!(
            line.starts_with("-- waiting for the Russian: its set-up"),
            "{line}"
        );
        let v = Vocabulary::of(&german);
        assert!(v.complete(false, "g").contains(&"g1".to_string()));
        assert!(
            v.complete(false, "g").contains(&"g8".to_string()),
            "waiting to enter"
        );
        assert!(v.complete(true, "set").contains(&"setup".to_string()));
    }

    /// A hostile server's words reach the terminal escaped, whatever line says them: the
    /// status line names units and sides from the local game, which the server's events fill
    /// (a WA chance naming a unit id holding a terminal escape). Before, the status line and
    /// `left` were printed as they were, where the events themselves were escaped.
    #[tokio::test]
    async fn a_hostile_servers_words_in_the_status_line_reach_the_terminal_escaped() {
        use futures_util::{SinkExt, StreamExt};
        use protocol::event::WallAdvantageChanceOffered;
        use protocol::wire::{self, ServerMessage};
        use tokio_tungstenite::tungstenite::Message;
        const HOSTILE: &str = "\u{1b}]0;owned\u{7}\u{1b}[2J";
        let game = game().project(Viewer::Side(Side::A));
        let seq = game.version + 1;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = tokio::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            let mut socket = tokio_tungstenite::accept_async(stream).await.unwrap();
            let event = ServerMessage::Event(crate::follower::sequenced(
                seq,
                protocol::Event::WallAdvantageChanceOffered(WallAdvantageChanceOffered {
                    side: Side::A,
                    units: vec![HOSTILE.into()],
                }),
            ));
            socket
                .send(Message::Text(wire::to_json(&event).into()))
                .await
                .unwrap();
            // Held open until the client is done.
            let _ = socket.next().await;
        });
        let mut connection = Connection::connect(&format!("ws://127.0.0.1:{port}"))
            .await
            .unwrap();
        let mut follower = Follower::new(game);
        let said = Arc::new(Mutex::new(Vec::<String>::new()));
        let heard = said.clone();
        let (typed, lines) = mpsc::channel(8);
        let vocabulary = Mutex::new(Vocabulary::default());
        let session = tokio::spawn(async move {
            let mut say = move |text: String| heard.lock().unwrap().push(text);
            let _ = session(
                &mut connection,
                &mut follower,
                Side::A,
                lines,
                &mut say,
                &vocabulary,
            )
            .await;
        });
        let chance = async {
            while !said
                .lock()
                .unwrap()
                .iter()
                .any(|l| l.contains("a chance to claim Wall Advantage"))
            {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
        };
        tokio::time::timeout(std::time::Duration::from_secs(20), chance)
            .await
            .unwrap_or_else(|_| panic!("no WA chance said: {:?}", said.lock().unwrap()));
        typed.send("status".into()).await.unwrap();
        typed.send("quit".into()).await.unwrap();
        session.await.unwrap();
        server.abort();
        let said = said.lock().unwrap();
        assert!(said.len() >= 3, "{said:?}");
        for line in said.iter() {
            assert!(crate::plain(line), "said raw: {line:?}");
        }
        assert!(
            said.iter().any(|l| l.contains("\\u{1b}]0;owned")),
            "{said:?}"
        );
    }

    #[test]
    fn the_status_line_says_whose_turn_and_what_for() {
        let game = game();
        assert!(status_line(&game, Side::A).starts_with("-- your turn: the German: Turn 1"));
        assert!(
            status_line(&game, Side::B).starts_with("-- waiting for the German: Turn 1"),
            "{}",
            status_line(&game, Side::B)
        );
    }
}

//! `asl games`: the games saved under `asl new --save` (`crate::saved`), each with whose turn
//! it is and both clocks, read by joining each game as a spectator (so no seat is taken and
//! no player counts as present: a turn notice owed is still sent).
//!
//! Every game is asked at once, each within [`GAME_ANSWER_WAIT`]: a server that does not
//! answer, or answers nonsense, gives that game an error line and holds up nothing else.
//! Whatever a server says is printed through [`crate::printable`].

use crate::connection::Connection;
use crate::saved::{self, SavedGame};
use crate::{printable, Failure, Status};
use futures_util::StreamExt;
use protocol::board::time_control::duration_text;
use protocol::game::timing::ClockView;
use protocol::{Game, Side};
use std::io::Write;
use std::path::Path;
use std::time::Duration;

/// Longest a game's server has to answer, connection and join together.
pub const GAME_ANSWER_WAIT: Duration = Duration::from_secs(10);

/// Most games listed: a saved-games directory holds a player's games, not an archive.
pub const GAMES_LISTED_MAX: usize = 200;

/// Games asked at once.
const GAMES_ASKED_AT_ONCE: usize = 8;

#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct GamesArgs {
    /// Print one JSON object per game instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Where one saved game stands, as its server told it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Standing {
    pub scenario: String,
    /// The side the game waits on (`None`: the game is over), by name.
    pub to_act: Option<String>,
    pub sides: [String; 2],
    pub clocks: Option<ClockView>,
}

/// Why a saved game's standing is not known: said on its line, and the other games go on.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unanswered {
    #[error("the saved game is gone")]
    Gone,
    /// The saved game's file could not be read.
    #[error("{0}")]
    Saved(String),
    /// The server could not be reached or refused the join (its words, printed escaped).
    #[error("{0}")]
    Connection(String),
    #[error("the server sent no position")]
    NoPosition,
    #[error("no answer from {server} within {} s", waited.as_secs())]
    NoAnswer { server: String, waited: Duration },
}

pub async fn games(args: &GamesArgs, out: &mut (dyn Write + Send)) -> Result<Status, Failure> {
    let dir = saved::saved_dir()?;
    let names = saved_names(&dir)?;
    let answers: Vec<(String, Result<Standing, Unanswered>)> =
        futures_util::stream::iter(names.into_iter().map(|name| {
            let dir = dir.clone();
            async move {
                let standing = match saved::load(&dir, &name) {
                    Ok(Some(game)) => ask(&game).await,
                    Ok(None) => Err(Unanswered::Gone),
                    Err(e) => Err(Unanswered::Saved(e.to_string())),
                };
                (name, standing)
            }
        }))
        .buffered(GAMES_ASKED_AT_ONCE)
        .collect()
        .await;
    if answers.is_empty() && !args.json {
        writeln!(
            out,
            "No saved games in {} (asl new --save NAME keeps one there).",
            dir.display()
        )?;
    }
    let mut failed = false;
    for (name, standing) in &answers {
        failed |= standing.is_err();
        if args.json {
            writeln!(
                out,
                "{}",
                crate::printable_json(&json(name, standing).to_string())
            )?;
        } else {
            writeln!(out, "{}", line(name, standing))?;
        }
    }
    Ok(if failed {
        Status::Unanswered
    } else {
        Status::Success
    })
}

/// The names of the games saved in `dir`, sorted, at most [`GAMES_LISTED_MAX`]; none when
/// the directory is not there yet.
fn saved_names(dir: &Path) -> Result<Vec<String>, Failure> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => {
            return Err(Failure::Input(format!(
                "cannot read the saved games in {}: {e}",
                dir.display()
            )))
        }
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let stem = name.strip_suffix(".json")?.to_string();
            saved::check_name(&stem).is_ok().then_some(stem)
        })
        .collect();
    names.sort();
    names.truncate(GAMES_LISTED_MAX);
    Ok(names)
}

/// Joins `game` as its spectator and reads where it stands, within [`GAME_ANSWER_WAIT`].
async fn ask(game: &SavedGame) -> Result<Standing, Unanswered> {
    let asked = async {
        let mut connection = Connection::connect(&game.server)
            .await
            .map_err(|e| Unanswered::Connection(e.to_string()))?;
        let joined = connection
            .join(&game.game, &game.tokens.spectator, None)
            .await
            .map_err(|e| Unanswered::Connection(e.to_string()));
        connection.close().await;
        let joined = joined?;
        let state = joined.state.ok_or(Unanswered::NoPosition)?;
        Ok(standing(&state, joined.clocks))
    };
    match tokio::time::timeout(GAME_ANSWER_WAIT, asked).await {
        Ok(answer) => answer,
        Err(_) => Err(Unanswered::NoAnswer {
            server: game.server.clone(),
            waited: GAME_ANSWER_WAIT,
        }),
    }
}

/// Where `game` (a spectator's projection) stands, with the server's clocks. With clocks,
/// the side whose clock runs is the side the game waits on (the server's whole game knows a
/// prompt a spectator may not see).
pub fn standing(game: &Game, clocks: Option<ClockView>) -> Standing {
    let waits_on = match &clocks {
        Some(view) if !game.over => view.running.or_else(|| super::awaited_side(game)),
        _ => super::awaited_side(game),
    };
    Standing {
        scenario: game.scenario.name.clone(),
        to_act: waits_on.map(|s| game.side_name(s).to_string()),
        sides: Side::BOTH.map(|s| game.side_name(s).to_string()),
        clocks,
    }
}

/// One game's line: `NAME  Scenario  waits on: German  clocks: German 2d3h (running),
/// Russian 4d`.
pub fn line(name: &str, standing: &Result<Standing, Unanswered>) -> String {
    let standing = match standing {
        Ok(s) => s,
        Err(e) => return format!("{name}  error: {}", printable(&e.to_string())),
    };
    let to_act = match &standing.to_act {
        Some(side) => format!("waits on: {}", printable(side)),
        None => "over".to_string(),
    };
    let clocks = match &standing.clocks {
        None => "no clock".to_string(),
        Some(view) => format!(
            "clocks ({}): {}",
            printable(&view.control),
            clocks_text(&standing.sides, view)
        ),
    };
    format!(
        "{name}  {}  {to_act}  {clocks}",
        printable(&standing.scenario)
    )
}

/// Both clocks in words: `German 2d3h (running), Russian 4d (on vacation, 3d left)`.
pub fn clocks_text(sides: &[String; 2], view: &ClockView) -> String {
    Side::BOTH
        .into_iter()
        .enumerate()
        .map(|(i, side)| {
            let mut notes = vec![];
            if view.running == Some(side) {
                notes.push("running".to_string());
            }
            if view.expired == Some(side) {
                notes.push("ran out".to_string());
            }
            if view.on_vacation[i] {
                notes.push(format!(
                    "on vacation, {} left",
                    duration_text(view.vacation_left[i])
                ));
            }
            let notes = if notes.is_empty() {
                String::new()
            } else {
                format!(" ({})", notes.join(", "))
            };
            format!(
                "{} {}{notes}",
                printable(&sides[i]),
                duration_text(view.bank[i])
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn json(name: &str, standing: &Result<Standing, Unanswered>) -> serde_json::Value {
    match standing {
        Ok(s) => serde_json::json!({
            "name": name,
            "scenario": s.scenario,
            "waits_on": s.to_act,
            "sides": s.sides,
            "clocks": s.clocks,
        }),
        Err(e) => serde_json::json!({ "name": name, "error": e.to_string() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(running: Option<Side>) -> ClockView {
        ClockView {
            control: "correspondence:12h/5d".into(),
            at: 0,
            running,
            bank: [2 * 86_400_000 + 3 * 3_600_000, 4 * 86_400_000],
            vacation_left: [0, 0],
            on_vacation: [false, false],
            expired: None,
        }
    }

    #[test]
    fn a_line_names_whose_turn_and_both_clocks() {
        let standing = Standing {
            scenario: "Village".into(),
            to_act: Some("German".into()),
            sides: ["German".into(), "Russian".into()],
            clocks: Some(view(Some(Side::A))),
        };
        assert_eq!(
            line("v", &Ok(standing)),
            "v  Village  waits on: German  clocks (correspondence:12h/5d): German 2d3h (running), Russian 4d"
        );
    }

    #[test]
    fn a_servers_words_reach_the_terminal_escaped() {
        let standing = Standing {
            scenario: "\u{1b}]0;owned\u{7}".into(),
            to_act: Some("Ger\u{1b}[2Jman".into()),
            sides: ["A\u{9b}".into(), "B".into()],
            clocks: Some(view(None)),
        };
        let line = line("v", &Ok(standing));
        assert!(!line.chars().any(|c| c.is_control()), "{line:?}");
        let error = super::line("v", &Err(Unanswered::Connection("bad\u{1b}[31m".into())));
        assert!(!error.chars().any(|c| c.is_control()), "{error:?}");
    }
}

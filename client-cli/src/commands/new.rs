//! `asl new`: create a game from a scenario file and hand out its tokens.

use super::ServerArg;
use crate::connection::{Connection, NewGame};
use crate::{printable, read_input, saved, Failure, Status, DEFAULT_SERVER};
use protocol::wire::{WATCH_PATH, WIRE_PATH};
use protocol::ReadScenario;
use protocol::Scenario;
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct NewArgs {
    #[command(flatten)]
    pub server: ServerArg,
    /// The scenario file (TOML), or a VASL saved game (`.vsav`) to import first
    /// (docs/vasl-import.md).
    pub scenario: PathBuf,
    /// Print one JSON object {game, sides, tokens} instead of text.
    #[arg(long)]
    pub json: bool,
    /// Needed only when the server restricts who may create games.
    #[arg(long)]
    pub admin_token: Option<String>,
    /// Save the game's id, tokens and server under NAME, so later commands take
    /// `--game NAME --token german` (see `asl help run`).
    #[arg(long, value_name = "NAME")]
    pub save: Option<String>,
    #[command(flatten)]
    pub boards: super::boards::BoardsArg,
    /// Play under this time control instead of the scenario's own `[clock]`:
    /// `live:30m+30s` (bank + increment per hand-over) or `correspondence:12h/5d` (step per
    /// hand-over / cap), with `,vacation=10d` if wanted (docs/clock.md).
    #[arg(long, value_name = "CONTROL")]
    pub clock: Option<String>,
}

pub async fn new(args: &NewArgs, out: &mut (dyn Write + Send)) -> Result<Status, Failure> {
    if let Some(name) = &args.save {
        saved::check_name(name)?;
    }
    let (mut text, imported) = scenario_text(args)?;
    // A save's refusal names the save's piece, not a line of a file the user never wrote.
    let refused = |e: protocol::ScenarioError| {
        let within = args.scenario.display().to_string();
        Failure::Input(printable(&match &imported {
            Some(i) => match i.imported.piece_of_field(&e.field) {
                Some(piece) => format!("{within}: {piece}: {}", e.reason),
                None => format!("{within}: the scenario imported from it: {e}"),
            },
            None => e.in_file(&within),
        }))
    };
    if let Some(control) = &args.clock {
        let control = protocol::board::time_control::TimeControl::parse(control)
            .map_err(|e| Failure::Input(format!("--clock: {e}")))?;
        text = Scenario::with_time_control(&text, &control).map_err(refused)?;
    }
    // Checked here first so a mistake is reported with its field before anything is sent, and
    // without needing a server at all. The file (or the save it was imported from) is from
    // others, and a refusal may quote it: escaped for the terminal.
    let boards = args.boards.open()?;
    Scenario::from_toml_on(&text, boards.as_deref()).map_err(refused)?;
    Scenario::time_control_in(&text).map_err(refused)?;
    let mut connection = Connection::connect(&args.server.url).await?;
    let created = connection
        .create_game(&text, args.admin_token.as_deref())
        .await?;
    connection.close().await;
    // Saved first: the report then names the game by its saved name, and a failure to save
    // still shows the tokens, which are shown only now.
    let assumed = imported.as_ref().map_or(&[][..], |i| i.assumed.as_slice());
    let saved_as = match &args.save {
        Some(name) => match save_game(name, &created, &args.server.url) {
            Ok(path) => Some((name.as_str(), path)),
            Err(e) => {
                report(args, &created, None, assumed, out)?;
                return Err(e);
            }
        },
        None => None,
    };
    report(args, &created, saved_as, assumed, out)?;
    Ok(Status::Success)
}

/// What a save became, for the report: the import, and what the file assumes.
struct FromSave {
    imported: vasl_save::from_save::Imported,
    assumed: Vec<String>,
}

/// The scenario's text: the file itself, or for a VASL save (`.vsav`) the scenario
/// `asl import` would write from it, with the save's file name and the default length.
fn scenario_text(args: &NewArgs) -> Result<(String, Option<FromSave>), Failure> {
    let is_save = args
        .scenario
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("vsav"));
    if !is_save {
        return Ok((read_input(&args.scenario)?, None));
    }
    let boards = args.boards.dir.as_deref().ok_or_else(|| {
        Failure::Input(format!(
            "{} is a VASL saved game: give --boards DIR (or ASL_BOARDS), the directory of VASL's board archives",
            args.scenario.display()
        ))
    })?;
    let bytes = super::import::read_save(&args.scenario)?;
    let name = args
        .scenario
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let made = vasl_save::from_save::new_game_from_save(&bytes, &name)
        .map_err(|e| super::import::save_failure(&args.scenario, e))?;
    super::import::check_boards(&made.imported, boards)?;
    Ok((
        made.scenario,
        Some(FromSave {
            imported: made.imported,
            assumed: made.assumed,
        }),
    ))
}

/// `assumed`: what the game assumes because the VASL save it came from does not say it.
fn report(
    args: &NewArgs,
    created: &NewGame,
    saved_as: Option<(&str, PathBuf)>,
    assumed: &[String],
    out: &mut (dyn Write + Send),
) -> Result<(), Failure> {
    if args.json {
        let mut v = json(created, &args.server.url);
        if let Some((name, path)) = &saved_as {
            v["saved"] = serde_json::json!({ "name": name, "file": path });
        }
        if !assumed.is_empty() {
            v["assumed"] = serde_json::json!(assumed);
        }
        writeln!(out, "{v}")?;
    } else {
        write!(
            out,
            "{}",
            text_report(
                created,
                &args.server.url,
                saved_as.as_ref().map(|(n, _)| *n)
            )
        )?;
        if let Some((name, path)) = &saved_as {
            writeln!(out, "\nSaved as `{name}` in {}.", path.display())?;
        }
        if !assumed.is_empty() {
            writeln!(
                out,
                "\nAssumed, since the save does not say it (to play the card's own, write the file with `asl import`, change it and create the game from it; docs/vasl-import.md):"
            )?;
            for line in assumed {
                writeln!(out, "  - {line}")?;
            }
        }
    }
    Ok(())
}

fn save_game(name: &str, created: &NewGame, server: &str) -> Result<PathBuf, Failure> {
    let game = saved::SavedGame {
        server: server.to_string(),
        game: created.game.clone(),
        sides: created.sides.clone(),
        tokens: created.tokens.clone(),
    };
    saved::save(&saved::saved_dir()?, name, &game)
}

fn json(created: &NewGame, server: &str) -> serde_json::Value {
    let server = created.public_url.as_deref().unwrap_or(server);
    serde_json::json!({
        "game": created.game,
        "sides": created.sides,
        "tokens": created.tokens,
        "watch": watch_link(server, &created.game, &created.tokens.spectator),
    })
}

/// The spectator page for a game on `server` (`ws://HOST:PORT`, perhaps with the protocol's
/// path): the same host and port over HTTP, since the server serves the page itself. Game and
/// token go in the fragment, which the browser keeps to itself. Of several comma-separated
/// servers (nodes of one cluster, each serving every game), the first.
pub fn watch_link(server: &str, game: &str, spectator_token: &str) -> String {
    let first = server.split(',').next().unwrap_or(server);
    let endpoint = crate::connection::endpoint(first);
    let base = endpoint.strip_suffix(WIRE_PATH).unwrap_or(&endpoint);
    let base = match (base.strip_prefix("wss://"), base.strip_prefix("ws://")) {
        (Some(host), _) => format!("https://{host}"),
        (None, Some(host)) => format!("http://{host}"),
        (None, None) => base.to_string(),
    };
    format!("{base}{WATCH_PATH}#game={game}&token={spectator_token}")
}

/// The game, its tokens and commands to paste. The `--server` flag appears in them only when
/// the game is not on the default server, so the common case stays short; a game saved as
/// `saved_as` is named by that name and its sides.
fn text_report(created: &NewGame, server: &str, saved_as: Option<&str>) -> String {
    let NewGame {
        game,
        sides,
        tokens,
        public_url,
    } = created;
    // Where others reach the server, when its operator said: the links are for them.
    let server = public_url.as_deref().unwrap_or(server);
    let server_flag = if server == DEFAULT_SERVER || saved_as.is_some() {
        String::new()
    } else {
        format!(" --server {server}")
    };
    let side_tokens = [&tokens.side_a, &tokens.side_b];
    let width = sides
        .iter()
        .map(|s| s.name.len() + s.id.len() + 3)
        .max()
        .unwrap_or(0)
        .max("Spectator".len());
    let mut s = format!("Game {game} created.\n\n");
    for (side, token) in sides.iter().zip(side_tokens) {
        let label = format!("{} ({})", side.name, side.id);
        s += &format!("  {label:<width$}  token {token}\n");
    }
    s += &format!(
        "  {:<width$}  token {}\n\nThe tokens are shown only now; keep them.\n",
        "Spectator", tokens.spectator
    );
    let game_flag = saved_as.unwrap_or(game);
    for (side, token) in sides.iter().zip(side_tokens) {
        let token = if saved_as.is_some() { &side.id } else { token };
        s += &format!(
            "\nPlay as {}:\n  asl play{server_flag} --game {game_flag} --token {token}\n  \
             asl run{server_flag} --game {game_flag} --token {token} script.txt\n",
            side.name
        );
    }
    // The same page, opened with a side's token, is that side's board to play on: one link
    // per player, each as secret as its token.
    s += "\nPlay in a browser (each link is secret to its player):\n";
    for (side, token) in sides.iter().zip(side_tokens) {
        s += &format!("  {}: {}\n", side.name, watch_link(server, game, token));
    }
    let spectator = if saved_as.is_some() {
        "spectator"
    } else {
        &tokens.spectator
    };
    s += &format!(
        "\nWatch the game:\n  asl watch{server_flag} --game {game_flag} --token {spectator}\n"
    );
    s += &format!(
        "\nWatch in a browser (share this link with spectators):\n  {}\n",
        watch_link(server, game, &tokens.spectator)
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::scenario::SideSpec;
    use protocol::wire::Tokens;

    fn created() -> NewGame {
        NewGame {
            game: "g1".into(),
            sides: [
                SideSpec {
                    id: "german".into(),
                    name: "German".into(),
                    nationality: None,
                },
                SideSpec {
                    id: "russian".into(),
                    name: "Russian".into(),
                    nationality: None,
                },
            ],
            tokens: Tokens {
                side_a: "ta".into(),
                side_b: "tb".into(),
                spectator: "ts".into(),
            },
            public_url: None,
        }
    }

    #[test]
    fn text_lists_tokens_and_ready_commands() {
        let text = text_report(&created(), DEFAULT_SERVER, None);
        assert!(
            text.contains("  Russian: http://127.0.0.1:7878/watch#game=g1&token=tb\n"),
            "{text}"
        );
        assert!(text.contains("  German (german)    token ta\n"), "{text}");
        assert!(text.contains("  Spectator          token ts\n"), "{text}");
        assert!(
            text.contains("  asl run --game g1 --token tb script.txt\n"),
            "{text}"
        );
        assert!(
            text.contains("  asl watch --game g1 --token ts\n"),
            "{text}"
        );
        assert!(
            text.contains("  http://127.0.0.1:7878/watch#game=g1&token=ts\n"),
            "{text}"
        );
    }

    #[test]
    fn a_saved_game_is_named_by_its_name_and_sides() {
        let text = text_report(&created(), "ws://example:9000", Some("walk"));
        assert!(
            text.contains("  asl run --game walk --token russian script.txt\n"),
            "{text}"
        );
        assert!(
            text.contains("  asl play --game walk --token german\n"),
            "{text}"
        );
        assert!(
            text.contains("  asl watch --game walk --token spectator\n"),
            "{text}"
        );
        assert!(
            text.contains("  German (german)    token ta\n"),
            "the tokens are shown: {text}"
        );
    }

    #[test]
    fn the_servers_public_url_makes_the_links() {
        let created = NewGame {
            public_url: Some("wss://asl.example.org".into()),
            ..created()
        };
        let text = text_report(&created, DEFAULT_SERVER, None);
        assert!(
            text.contains("  https://asl.example.org/watch#game=g1&token=ts\n"),
            "{text}"
        );
        assert!(
            text.contains("asl watch --server wss://asl.example.org --game g1 --token ts"),
            "{text}"
        );
        assert_eq!(
            json(&created, DEFAULT_SERVER)["watch"],
            "https://asl.example.org/watch#game=g1&token=ts"
        );
    }

    #[test]
    fn the_watch_link_is_the_server_over_http() {
        assert_eq!(
            watch_link("ws://example:9000/v1/", "g", "t"),
            "http://example:9000/watch#game=g&token=t"
        );
        assert_eq!(
            watch_link("example:9000", "g", "t"),
            "http://example:9000/watch#game=g&token=t"
        );
        assert_eq!(
            watch_link("wss://asl.example.org", "g", "t"),
            "https://asl.example.org/watch#game=g&token=t"
        );
        assert_eq!(
            watch_link("ws://a:1,ws://b:2", "g", "t"),
            "http://a:1/watch#game=g&token=t",
            "the first of several nodes"
        );
    }

    #[test]
    fn commands_name_a_server_other_than_the_default() {
        let text = text_report(&created(), "ws://example:9000", None);
        assert!(
            text.contains("asl watch --server ws://example:9000 --game g1 --token ts"),
            "{text}"
        );
    }

    #[test]
    fn json_has_game_sides_and_tokens() {
        let v = json(&created(), DEFAULT_SERVER);
        assert_eq!(v["game"], "g1");
        assert_eq!(v["sides"][1]["id"], "russian");
        assert_eq!(v["tokens"]["side_a"], "ta");
        assert_eq!(v["tokens"]["spectator"], "ts");
        assert_eq!(v["watch"], "http://127.0.0.1:7878/watch#game=g1&token=ts");
    }

    #[test]
    fn a_vasl_save_is_imported_with_its_boards() {
        use vasl_save::save::{writer, Encoding};
        let dir = tempfile::tempdir().unwrap();
        let text = writer::saved_game_text(&[
            "bd\t0\t0\t02\tVER\t6.4\t".to_string(),
            writer::piece_command(
                "1",
                &[
                    ("conceal;C;ge/geqmark;ge;;", "null;"),
                    ("piece;K;D;ge/ge467S;4-6-7 1sq", "Main Map;500;500;1"),
                ],
            ),
        ]);
        let save = dir.path().join("Hill 621.vsav");
        std::fs::write(
            &save,
            writer::vsav(&writer::encode(&text, Encoding::Xz), Some("VASL")),
        )
        .unwrap();
        std::fs::create_dir(dir.path().join("boards")).unwrap();
        std::fs::write(dir.path().join("boards").join("bd02"), b"archive").unwrap();
        let mut args = NewArgs {
            server: ServerArg {
                url: "ws://127.0.0.1:1".into(),
            },
            scenario: save,
            boards: Default::default(),
            json: false,
            admin_token: None,
            save: None,
            clock: None,
        };
        let Err(err) = scenario_text(&args) else {
            panic!("a save needs --boards")
        };
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("give --boards DIR"), "{err}");
        args.boards.dir = Some(dir.path().join("boards"));
        let (scenario, from_save) = scenario_text(&args).unwrap();
        let assumed = from_save.expect("read from a save").assumed.join("\n");
        assert!(assumed.contains("6 Game Turns"), "{assumed}");
        assert!(scenario.contains("name = \"Hill 621\""), "{scenario}");
        assert!(scenario.contains("boards = [[\"2\"]]"), "{scenario}");
        assert!(scenario.contains("hex = \"2C2\""), "{scenario}");
    }

    /// Issue 50: what `asl new SAVE.vsav` prints of a save it refuses is escaped: the board
    /// name below holds CR, BEL, BS, a C1 control and a bidi override.
    #[test]
    fn a_refused_save_is_named_with_its_words_escaped() {
        use vasl_save::save::{writer, Encoding};
        let dir = tempfile::tempdir().unwrap();
        let text = writer::saved_game_text(&[
            "bd\t0\t0\tRB\r\u{7}\u{8}\u{85}\u{202e}\tVER\t6.4\t".to_string(),
            writer::piece_command(
                "1",
                &[("piece;K;D;ge/ge467S;4-6-7 1sq", "Main Map;500;500;1")],
            ),
        ]);
        let save = dir.path().join("s.vsav");
        std::fs::write(
            &save,
            writer::vsav(&writer::encode(&text, Encoding::Plain), Some("VASL")),
        )
        .unwrap();
        std::fs::create_dir(dir.path().join("boards")).unwrap();
        let mut args = NewArgs {
            server: ServerArg {
                url: "ws://127.0.0.1:1".into(),
            },
            scenario: save,
            boards: Default::default(),
            json: false,
            admin_token: None,
            save: None,
            clock: None,
        };
        args.boards.dir = Some(dir.path().join("boards"));
        let Err(err) = scenario_text(&args) else {
            panic!("refused")
        };
        let err = err.to_string();
        assert!(
            !err.chars().any(|c| c.is_control() || c == '\u{202e}'),
            "{err:?}"
        );
        assert!(
            err.contains("RB\\u{d}\\u{7}\\u{8}\\u{85}\\u{202e}"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_bad_clock_is_refused_before_connecting() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.toml");
        std::fs::write(
            &path,
            include_str!("../../../scenarios/b9-41-wall-advantage.toml"),
        )
        .unwrap();
        let args = NewArgs {
            boards: Default::default(),
            // Nothing listens here: reaching the network would fail with exit code 3, not 2.
            server: ServerArg {
                url: "ws://127.0.0.1:1".into(),
            },
            scenario: path,
            json: false,
            admin_token: None,
            save: None,
            clock: Some("live:5s".into()),
        };
        let err = new(&args, &mut Vec::new()).await.unwrap_err();
        assert_eq!(err.exit_code(), 2, "{err}");
        assert!(err.to_string().starts_with("--clock: "), "{err}");
    }

    #[tokio::test]
    async fn a_bad_scenario_is_refused_before_connecting() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.toml");
        std::fs::write(&path, "name = \"x\"\nturns = 0\n").unwrap();
        let args = NewArgs {
            boards: Default::default(),
            // Nothing listens here: reaching the network would fail with exit code 3, not 2.
            server: ServerArg {
                url: "ws://127.0.0.1:1".into(),
            },
            scenario: path.clone(),
            json: false,
            admin_token: None,
            save: None,
            clock: None,
        };
        let err = new(&args, &mut Vec::new()).await.unwrap_err();
        assert_eq!(err.exit_code(), 2, "{err}");
        assert!(
            err.to_string().starts_with(&path.display().to_string()),
            "{err}"
        );
        assert!(err.to_string().contains("scenario field"), "{err}");
    }
}

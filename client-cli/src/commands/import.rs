//! `asl import`: a VASL saved game (`.vsav`) made into a scenario file (docs/vasl-import.md).
//! The work is `protocol::board::vasl`; this reads the files and writes the results.

use crate::{Failure, Status};
use protocol::board::scenario::TURNS_MAX;
use std::io::Write;
use std::path::{Path, PathBuf};
use vasl_save::from_save::{import as import_save, FileOptions, Imported};
use vasl_save::save::{self, SAVE_BYTES_MAX};

pub use vasl_save::from_save::TURNS_DEFAULT;

#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct ImportArgs {
    /// The VASL saved game (`.vsav`).
    pub save: PathBuf,
    /// The directory holding VASL's board archives (`bd01`, `bd02` …); every board the save
    /// lays out must be there.
    #[arg(long)]
    pub boards: PathBuf,
    /// Write the scenario here (and the report to standard output); by default the scenario
    /// goes to standard output and the report to standard error.
    #[arg(short = 'o', long = "out")]
    pub out: Option<PathBuf>,
    /// The scenario's name; by default the save's file name.
    #[arg(long)]
    pub name: Option<String>,
    /// The scenario's number of Game Turns, which a save does not record.
    #[arg(long, default_value_t = TURNS_DEFAULT)]
    pub turns: u16,
    /// Print the report as this side may read it (a side id such as `german`): nothing of
    /// the other side that is hidden or concealed.
    #[arg(long)]
    pub side: Option<String>,
}

pub fn import(args: &ImportArgs, out: &mut (dyn Write + Send)) -> Result<Status, Failure> {
    if args.turns == 0 || args.turns > TURNS_MAX {
        return Err(Failure::Input(format!(
            "--turns {}: a scenario lasts 1 to {TURNS_MAX} Game Turns",
            args.turns
        )));
    }
    let imported = read_and_import(&args.save)?;
    check_boards(&imported, &args.boards)?;
    let viewer = match &args.side {
        None => None,
        Some(name) => Some(
            imported
                .sides
                .iter()
                .position(|s| s.id.eq_ignore_ascii_case(name) || s.name.eq_ignore_ascii_case(name))
                .ok_or_else(|| {
                    Failure::Input(format!(
                        "`{name}` is not a side of this save; its sides are {} and {}",
                        imported.sides[0].id, imported.sides[1].id
                    ))
                })?,
        ),
    };
    let name = args.name.clone().unwrap_or_else(|| {
        args.save
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "Imported scenario".into())
    });
    let text = imported.to_toml(&FileOptions {
        name,
        turns: args.turns,
    });
    // The save's words reach a terminal: escaped, as every command prints others' text.
    let report = imported.report_text(viewer, crate::printable);
    match &args.out {
        Some(path) => {
            std::fs::write(path, &text)
                .map_err(|e| Failure::Input(format!("cannot write {}: {e}", path.display())))?;
            writeln!(out, "wrote {}", path.display())?;
            write!(out, "{report}")?;
        }
        None => {
            write!(out, "{text}")?;
            eprint!("{report}");
        }
    }
    Ok(Status::Success)
}

/// The save read and imported; a bad file is bad input naming the file and what is wrong.
/// What is wrong may quote the save (a board's name, a module's, a piece's), so it is
/// escaped for the terminal it is printed on.
pub fn read_and_import(path: &Path) -> Result<Imported, Failure> {
    let bytes = read_save(path)?;
    let game = save::read(&bytes).map_err(|e| save_failure(path, e))?;
    import_save(&game).map_err(|e| save_failure(path, e))
}

/// A save's bytes, refused unread over [`SAVE_BYTES_MAX`].
pub(crate) fn read_save(path: &Path) -> Result<Vec<u8>, Failure> {
    let len = std::fs::metadata(path)
        .map_err(|e| Failure::Input(format!("cannot read {}: {e}", path.display())))?
        .len();
    if len > SAVE_BYTES_MAX as u64 {
        return Err(save_failure(
            path,
            format!("{len} bytes is over the {SAVE_BYTES_MAX}-byte limit for a saved game"),
        ));
    }
    std::fs::read(path).map_err(|e| Failure::Input(format!("cannot read {}: {e}", path.display())))
}

/// What is wrong with the save at `path`, escaped for the terminal (it may quote the save).
pub(crate) fn save_failure(path: &Path, what: impl std::fmt::Display) -> Failure {
    Failure::Input(crate::printable(&format!("{}: {what}", path.display())))
}

/// Every board of the layout is in the directory, as VASL keeps them (`bd02`).
pub(crate) fn check_boards(imported: &Imported, dir: &Path) -> Result<(), Failure> {
    if !dir.is_dir() {
        return Err(Failure::Input(format!(
            "--boards {}: not a directory of VASL board archives",
            dir.display()
        )));
    }
    let missing: Vec<&str> = imported
        .board_files
        .iter()
        .filter(|f| !dir.join(f).is_file())
        .map(|f| f.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(Failure::Input(format!(
            "the save lays out boards that are not in {}: {} (VASL names its board archives bdNN)",
            dir.display(),
            missing.join(", ")
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::ReadScenario;
    use vasl_save::save::{writer, Encoding};

    fn save(layout: &str) -> Vec<u8> {
        let commands = vec![
            layout.to_string(),
            writer::piece_command(
                "1",
                &[
                    ("conceal;C;ge/geqmark;ge;;", "null;"),
                    ("piece;K;D;ge/ge467S;4-6-7 1sq", "Main Map;500;500;1"),
                ],
            ),
            writer::piece_command(
                "2",
                &[
                    ("hide;72,130;HIP;;player:;0.3", "bob"),
                    ("conceal;C;ru/ruqmark;ru;;", "null;"),
                    ("piece;K;D;ru/veh/T34M43;T-34 M43", "Main Map;600;500;1"),
                ],
            ),
            writer::piece_command(
                "3",
                &[
                    ("conceal;C;ru/ruqmark;ru;;", "null;"),
                    ("piece;K;D;ru/ru447S;4-4-7 1sq", "Main Map;100;100;1"),
                ],
            ),
        ];
        let text = writer::saved_game_text(&commands);
        writer::vsav(
            &writer::encode(&text, Encoding::Obfuscated { key: 0x42 }),
            Some("VASL"),
        )
    }

    struct Files {
        dir: tempfile::TempDir,
    }

    impl Files {
        fn new(save_bytes: &[u8], boards: &[&str]) -> Files {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("s.vsav"), save_bytes).unwrap();
            std::fs::create_dir(dir.path().join("boards")).unwrap();
            for b in boards {
                std::fs::write(dir.path().join("boards").join(b), b"archive").unwrap();
            }
            Files { dir }
        }
        fn args(&self) -> ImportArgs {
            ImportArgs {
                save: self.dir.path().join("s.vsav"),
                boards: self.dir.path().join("boards"),
                out: Some(self.dir.path().join("s.toml")),
                name: None,
                turns: TURNS_DEFAULT,
                side: None,
            }
        }
    }

    #[test]
    fn a_save_becomes_a_scenario_file_and_a_report() {
        let files = Files::new(&save("bd\t0\t0\t02\tVER\t6.4\t"), &["bd02"]);
        let mut out = Vec::new();
        assert_eq!(import(&files.args(), &mut out), Ok(Status::Success));
        let report = String::from_utf8(out).unwrap();
        assert!(report.contains("ru-veh1: T-34 M43, 2E2"), "{report}");
        let text = std::fs::read_to_string(files.dir.path().join("s.toml")).unwrap();
        let file: toml::Table = text.parse().unwrap();
        assert_eq!(file["name"].as_str(), Some("s"));
        assert_eq!(file["map"]["boards"].to_string(), "[[\"2\"]]");
        let units = file["units"].as_array().unwrap();
        assert_eq!(units[0]["hex"].as_str(), Some("2C2"));
        assert_eq!(units[1]["kind"].as_str(), Some("counter"));
        assert_eq!(units[1]["ratings"].as_str(), Some("T-34 M43"));
        assert_eq!(units[2]["offboard"].as_bool(), Some(true));

        // The German side does not learn of the hidden Russian tank.
        let mut out = Vec::new();
        let args = ImportArgs {
            side: Some("german".into()),
            ..files.args()
        };
        import(&args, &mut out).unwrap();
        let german = String::from_utf8(out).unwrap();
        assert!(!german.contains("T-34"), "{german}");
    }

    /// Issue 50: CR, BEL, BS, a C1 control and a bidi override in a save's words.
    const HOSTILE: &str = "\r\u{7}\u{8}\u{85}\u{202e}";
    const HOSTILE_SHOWN: &str = "\\u{d}\\u{7}\\u{8}\\u{85}\\u{202e}";

    /// Nothing but line ends reaches the terminal raw: no control character, no bidi override.
    fn assert_inert(text: &str) {
        let raw = text.chars().find(|c| {
            (c.is_control() && *c != '\n')
                || ('\u{2066}'..='\u{2069}').contains(c)
                || ('\u{202a}'..='\u{202e}').contains(c)
        });
        assert_eq!(raw, None, "{text:?}");
    }

    /// Every word of the report that comes from the save (a counter's name, a unit's VASL
    /// name, a map window's name) is printed escaped, as every other command prints others'
    /// text (`printable`).
    #[test]
    fn the_report_prints_the_saves_words_escaped() {
        let squad = format!("piece;K;D;ge/ge467S;4-6-7 {HOSTILE}x 1sq");
        let tank = format!("piece;K;D;ru/veh/T34M43;T-34{HOSTILE}");
        let window = format!("Window{HOSTILE};1;1;1");
        let commands = vec![
            "bd\t0\t0\t02\tVER\t6.4\t".to_string(),
            writer::piece_command("1", &[(squad.as_str(), "Main Map;500;500;1")]),
            writer::piece_command(
                "2",
                &[
                    ("conceal;C;ru/ruqmark;ru;;", "null;"),
                    (tank.as_str(), "Main Map;600;500;1"),
                ],
            ),
            writer::piece_command("3", &[("piece;K;D;ge/ge467S;4-6-7 1sq", window.as_str())]),
        ];
        let text = writer::saved_game_text(&commands);
        let files = Files::new(
            &writer::vsav(&writer::encode(&text, Encoding::Plain), Some("VASL")),
            &["bd02"],
        );
        let mut out = Vec::new();
        import(&files.args(), &mut out).unwrap();
        let report = String::from_utf8(out).unwrap();
        assert_inert(&report);
        assert!(
            report.contains(&format!("ru-veh1: T-34{HOSTILE_SHOWN}, 2E2")),
            "{report}"
        );
        assert!(
            report.contains(&format!("ge-sq1: 4-6-7 {HOSTILE_SHOWN}x 1sq, 2C2")),
            "{report}"
        );
        assert!(
            report.contains(&format!("map window `Window{HOSTILE_SHOWN}`")),
            "{report}"
        );
    }

    /// A refusal quoting the save (a board's name, a module's) is escaped too.
    #[test]
    fn a_refusal_quoting_the_save_is_escaped() {
        let board = Files::new(&save(&format!("bd\t0\t0\tRB{HOSTILE}\tVER\t1\t")), &[]);
        let err = import(&board.args(), &mut Vec::new()).unwrap_err();
        assert_inert(&err.to_string());
        assert!(
            err.to_string().contains(&format!("`RB{HOSTILE_SHOWN}`")),
            "{err}"
        );
        let text = writer::saved_game_text(&["bd\t0\t0\t02\t".to_string()]);
        let module = Files::new(
            &writer::vsav(
                &writer::encode(&text, Encoding::Plain),
                Some("Panzer\u{85}\u{202e}"),
            ),
            &[],
        );
        let err = import(&module.args(), &mut Vec::new()).unwrap_err();
        assert_inert(&err.to_string());
        assert!(err.to_string().contains("Panzer\\u{85}\\u{202e}"), "{err}");
    }

    #[test]
    fn bad_input_says_what_is_wrong() {
        let missing = Files::new(&save("bd\t0\t0\t02\tbd\t1\t0\tr4\t"), &["bd02"]);
        let err = import(&missing.args(), &mut Vec::new()).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("not in"), "{err}");
        assert!(
            err.to_string()
                .ends_with(": bd4 (VASL names its board archives bdNN)"),
            "{err}"
        );

        let not_zip = Files::new(b"plain text", &[]);
        let err = import(&not_zip.args(), &mut Vec::new()).unwrap_err();
        assert!(err.to_string().contains("not a zip archive"), "{err}");
        assert!(err.to_string().contains("s.vsav"), "{err}");

        let files = Files::new(&save("bd\t0\t0\t02\t"), &["bd02"]);
        let args = ImportArgs {
            side: Some("french".into()),
            ..files.args()
        };
        let err = import(&args, &mut Vec::new()).unwrap_err();
        assert!(err.to_string().contains("german and russian"), "{err}");

        for turns in [0, TURNS_MAX + 1] {
            let args = ImportArgs {
                turns,
                ..files.args()
            };
            let err = import(&args, &mut Vec::new()).unwrap_err();
            assert!(err.to_string().contains("1 to 30 Game Turns"), "{err}");
        }
        let at_limit = ImportArgs {
            turns: TURNS_MAX,
            ..files.args()
        };
        assert_eq!(import(&at_limit, &mut Vec::new()), Ok(Status::Success));

        let args = ImportArgs {
            boards: files.dir.path().join("nowhere"),
            ..files.args()
        };
        let err = import(&args, &mut Vec::new()).unwrap_err();
        assert!(err.to_string().contains("not a directory"), "{err}");
    }

    /// Published saves of real scenarios, when `ASL_VASL_SAVES` names a directory of them
    /// (they are never in the repository): each reads, and each that lays out boards
    /// imports with every unit rated and every hex a hex name the engine reads; one without
    /// boards or units is refused saying so.
    #[test]
    fn real_saves_import_when_asl_vasl_saves_names_them() {
        let Some(dir) = std::env::var_os("ASL_VASL_SAVES") else {
            println!("skipped: set ASL_VASL_SAVES to a directory of .vsav files to run it");
            return;
        };
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).expect("ASL_VASL_SAVES is a readable directory") {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "vsav") {
                continue;
            }
            seen += 1;
            match read_and_import(&path) {
                Ok(imported) => {
                    assert!(!imported.units.is_empty(), "{}", path.display());
                    for u in &imported.units {
                        let rated =
                            u.kind == protocol::scenario::UnitKind::Dummy || !u.ratings.is_empty();
                        assert!(rated, "{}: {} has no ratings", path.display(), u.id);
                        if let Some(h) = &u.hex {
                            h.parse::<protocol::Hex>()
                                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                        }
                    }
                    // With the boards too (`ASL_BOARDS`), the save becomes a scenario that
                    // loads as written, and nothing but markers is left out (issue 49).
                    if let Some(boards) = std::env::var_os("ASL_BOARDS") {
                        let boards =
                            super::super::boards::open(std::path::Path::new(&boards), None)
                                .unwrap_or_else(|e| panic!("ASL_BOARDS: {e}"));
                        let text = imported.to_toml(&FileOptions {
                            name: "Published".into(),
                            turns: TURNS_DEFAULT,
                        });
                        if let Err(e) = protocol::Scenario::from_toml_on(&text, Some(&boards)) {
                            panic!(
                                "{}: {}: {e}",
                                path.display(),
                                imported.piece_of_field(&e.field).unwrap_or_default()
                            );
                        }
                        for r in &imported.report {
                            if r.category == vasl_save::from_save::Category::NotUnderstood {
                                assert!(
                                    r.what.starts_with("marker "),
                                    "{}: left out: {}",
                                    path.display(),
                                    r.what
                                );
                            }
                        }
                    }
                    println!(
                        "{}: boards {:?}, {} units, {} weapons, {} report lines",
                        path.display(),
                        imported.boards,
                        imported.units.len(),
                        imported.weapons.len(),
                        imported.report.len()
                    );
                }
                // Saves of a few counters (tools' test fixtures) are refused with a reason.
                Err(e)
                    if e.to_string().contains("lays out no boards")
                        || e.to_string().contains("no unit was understood") =>
                {
                    println!("{e}");
                }
                Err(e) => panic!("{e}"),
            }
        }
        assert!(seen > 0, "no .vsav file in {}", dir.to_string_lossy());
    }

    /// The file `asl import` writes is a scenario the loader plays on real boards: boards
    /// synthesised in VASL's format, a save with units on board 2 and on board 4 turned
    /// round, and every unit where the save put it.
    #[test]
    fn the_imported_file_loads_on_real_boards() {
        use protocol::board::vasl::synth::SynthBoard;
        use protocol::{Hex, Scenario};
        let layout = "bd\t0\t0\t02\tVER\t6.1\tbd\t1\t0\tr04\tVER\t6.1\t";
        // Map pixels: board 2 from (400, 400), board 4 from (2200, 400) upside down. 2C2's
        // centre is (112.5, 96.75) on its board; 4E5's is (225, 290.25) on board 4, so
        // (1575, 354.75) of what the map shows of it.
        let commands = vec![
            layout.to_string(),
            writer::piece_command(
                "1",
                &[
                    ("conceal;C;ge/geqmark;ge;;", "null;"),
                    ("piece;K;D;ge/ge467S;4-6-7 1sq", "Main Map;512;497;1"),
                ],
            ),
            writer::piece_command(
                "2",
                &[
                    ("hide;72,130;HIP;;player:;0.3", "bob"),
                    ("conceal;C;ru/ruqmark;ru;;", "null;"),
                    ("piece;K;D;ru/ru447S;4-4-7 1sq", "Main Map;3775;755;1"),
                ],
            ),
        ];
        let text = writer::saved_game_text(&commands);
        let files = Files::new(
            &writer::vsav(&writer::encode(&text, Encoding::Plain), Some("VASL")),
            &[],
        );
        let boards_dir = files.dir.path().join("boards");
        for name in ["02", "04"] {
            std::fs::write(
                boards_dir.join(format!("bd{name}")),
                SynthBoard::geomorphic(name).archive(),
            )
            .unwrap();
        }
        import(&files.args(), &mut Vec::new()).unwrap();
        let scenario_text = std::fs::read_to_string(files.dir.path().join("s.toml")).unwrap();
        let boards = super::super::boards::open(&boards_dir, None).unwrap();
        let scenario = Scenario::from_toml_on(&scenario_text, Some(&boards))
            .unwrap_or_else(|e| panic!("{e}\n{scenario_text}"));
        let ge = &scenario.units["ge-sq1"];
        assert_eq!(ge.hex, "2C2".parse::<Hex>().unwrap());
        assert_eq!(ge.ratings, "4-6-7");
        let ru = &scenario.units["ru-sq1"];
        assert_eq!(ru.hex, "4E5".parse::<Hex>().unwrap());
        assert!(ru.hidden);
    }

    /// A set-up save: the units in the map's margin are their side's order of battle. The
    /// file gives them a set-up with whole-board areas marked for checking against the card,
    /// and the game begins in its set-up step, played through to the first legal move.
    #[test]
    fn off_board_units_become_a_set_up_played_through_to_a_first_move() {
        use protocol::board::vasl::synth::SynthBoard;
        use protocol::game::Game;
        use protocol::{decide, Command, Hex, Scenario, ScriptedDice, Side};
        let layout = "bd\t0\t0\t02\tVER\t6.1\t";
        let margin = |x: i64| format!("Main Map;{x};100;1");
        let (a, b, c, d) = (margin(100), margin(100), margin(200), margin(300));
        let commands = vec![
            layout.to_string(),
            // 2C2 on the board: a German squad.
            writer::piece_command(
                "1",
                &[("piece;K;D;ge/ge467S;4-6-7 1sq", "Main Map;512;497;1")],
            ),
            // Off the boards: a German squad with its LMG, a concealed Russian squad and a
            // Russian leader.
            writer::piece_command("2", &[("piece;K;D;ge/ge467S;4-6-7 1sq", a.as_str())]),
            writer::piece_command(
                "3",
                &[
                    ("mark;DBCounterType", "common"),
                    ("piece;K;D;ge/geLMG;LMG", b.as_str()),
                ],
            ),
            writer::stack_command("s1", "Main Map", 100, 100, &["2", "3"]),
            writer::piece_command(
                "4",
                &[
                    ("conceal;C;ru/ruqmark;ru;;", "null;"),
                    ("piece;K;D;ru/ru447S;4-4-7 1sq", c.as_str()),
                ],
            ),
            writer::piece_command("5", &[("piece;K;D;ru/ru447S;4-4-7 1sq", d.as_str())]),
        ];
        let text = writer::saved_game_text(&commands);
        let files = Files::new(
            &writer::vsav(&writer::encode(&text, Encoding::Plain), Some("VASL")),
            &[],
        );
        let boards_dir = files.dir.path().join("boards");
        std::fs::write(
            boards_dir.join("bd02"),
            SynthBoard::geomorphic("02").archive(),
        )
        .unwrap();
        let mut report = Vec::new();
        import(&files.args(), &mut report).unwrap();
        let report = String::from_utf8(report).unwrap();
        assert!(report.contains("set-up areas"), "{report}");
        let scenario_text = std::fs::read_to_string(files.dir.path().join("s.toml")).unwrap();
        assert!(
            scenario_text.contains("CHECK AGAINST THE SCENARIO CARD"),
            "{scenario_text}"
        );
        let boards = super::super::boards::open(&boards_dir, None).unwrap();
        let scenario = Scenario::from_toml_on(&scenario_text, Some(&boards))
            .unwrap_or_else(|e| panic!("{e}\n{scenario_text}"));
        let setup = scenario.setup.as_ref().expect("a set-up");
        assert_eq!(setup.order, vec![Side::B, Side::A], "{scenario_text}");
        let off: Vec<&str> = setup.units.keys().map(String::as_str).collect();
        assert_eq!(off, ["ge-sq2", "ru-sq1", "ru-sq2"], "{scenario_text}");
        assert_eq!(setup.weapons["ge-lmg1"].held_by.as_deref(), Some("ge-sq2"));
        assert!(setup.area(Side::A).contains(&"2A1".parse::<Hex>().unwrap()));
        assert!(scenario.units.contains_key("ge-sq1"));

        let mut game = Game::new(scenario);
        assert_eq!(
            game.acting(),
            Side::B,
            "the side listed second sets up first"
        );
        let play = |game: &mut Game, side, command: Command| {
            let events = decide(game, side, &command, &mut ScriptedDice::default())
                .unwrap_or_else(|v| panic!("{command:?}: {v}"));
            for e in &events {
                protocol::game::apply(game, e);
            }
        };
        let hex = |h: &str| h.parse::<Hex>().unwrap();
        let place = |unit: &str, at: &str| Command::SetUp {
            unit: unit.into(),
            hex: hex(at),
            concealed: false,
            hidden: false,
            weapons: vec![],
        };
        play(&mut game, Side::B, place("ru-sq1", "2H5"));
        play(&mut game, Side::B, place("ru-sq2", "2H5"));
        play(&mut game, Side::B, Command::Done);
        play(&mut game, Side::A, place("ge-sq2", "2C3"));
        play(&mut game, Side::A, Command::Done);
        assert!(game.setup.is_none());
        assert_eq!(game.weapons["ge-lmg1"].hex, hex("2C3"));
        while game.clock.phase() != protocol::phase::Phase::Movement {
            let side = game.acting();
            play(&mut game, side, Command::Done);
        }
        let german = game.acting();
        play(
            &mut game,
            german,
            Command::Move {
                units: vec!["ge-sq2".into()],
                to: hex("2C4"),
            },
        );
        assert_eq!(game.units["ge-sq2"].hex, hex("2C4"));
    }
}

//! The law of `asl import`'s two outputs: the scenario file `Imported::to_toml` writes is read
//! by the scenario reader as exactly the units and weapons the import holds (and so reports),
//! whatever the counters of the save are named. A save is a file from others: a counter name
//! holding a newline, a quote, a `#` or a `]` stays a name and cannot add a unit, hide one or
//! move one (issue 50).

use protocol::ReadScenario;
use std::collections::BTreeMap;
use std::sync::OnceLock;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use protocol::board::vasl::codes::TerrainTable;
use protocol::board::vasl::library::Boards;
use protocol::board::vasl::synth::SynthBoard;
use protocol::{Hex, Scenario, Side};
use vasl_save::from_save::{import, FileOptions, Imported};
use vasl_save::geometry::{BoardSlot, GridHex, MapLayout};
use vasl_save::save::{parse, writer};

const LAYOUT: &str = "bd\t0\t0\t02\tVER\t6.1\t";

/// Board 2 of open ground, synthesised in VASL's format.
fn boards() -> Boards {
    static ARCHIVE: OnceLock<Vec<u8>> = OnceLock::new();
    let archive = ARCHIVE
        .get_or_init(|| SynthBoard::geomorphic("02").archive())
        .clone();
    Boards::new(
        "synthesised",
        TerrainTable::builtin(),
        Box::new(move |name| match name {
            "2" => Ok(archive.clone()),
            other => Err(protocol::board::vasl::library::BoardError::NotIn {
                board: other.to_string(),
                place: "the test's boards".into(),
                tried: "board 2 only".into(),
            }),
        }),
    )
}

/// Map pixels of a hex of board 2 (the only board of [`LAYOUT`]).
fn pixel(column: u16, row: u16) -> (i64, i64) {
    let layout = MapLayout::new(vec![BoardSlot {
        name: "2".into(),
        column: 0,
        row: 0,
        rotated: false,
        crop: None,
    }]);
    let p = layout.map_point(0, GridHex::new(column, row).unwrap());
    (p.x.round() as i64, p.y.round() as i64)
}

/// Where a drafted piece lies: three hexes of board 2, each held by one army so the scenario
/// has no enemies stacked together, and the map's margin (off the boards: an order of battle).
const PLACES: [(&str, Option<(u16, u16)>); 4] = [
    ("ge", Some((2, 3))),
    ("ru", Some((4, 5))),
    ("ge", Some((6, 7))),
    ("ru", None),
];

#[derive(Clone, Copy, Debug)]
enum Secrecy {
    Open,
    Hidden,
    Masked,
}

#[derive(Clone, Debug)]
struct Draft {
    place: usize,
    weapon: bool,
    /// Written inside the counter's name, where the import still reads the counter:
    /// `4-6-7 TAIL 1sq`, `LMG TAIL`.
    tail: String,
    secrecy: Secrecy,
}

/// The basic piece's definition, escaped as VASSAL escapes it, so any name reaches the save.
fn basic(image: &str, name: &str) -> String {
    writer::join_escaped(&["piece", "K", "D", image, name], ';')
}

/// The save's commands for the drafts: at most three pieces a place (no overstacking), a
/// weapon never off the boards (one there with no unit beneath it is written without an
/// owner, which the file says the player must give it), and a stack for each place.
fn save(drafts: &[Draft]) -> Vec<String> {
    let mut commands = vec![LAYOUT.to_string()];
    let mut stacks: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for (i, d) in drafts.iter().enumerate() {
        let place = if d.weapon && PLACES[d.place].1.is_none() {
            0
        } else {
            d.place
        };
        let members = stacks.entry(place).or_default();
        if members.len() == 3 {
            continue;
        }
        let (army, hex) = PLACES[place];
        let (x, y) = hex.map_or((100, 100), |(c, r)| pixel(c, r));
        let position = format!("Main Map;{x};{y};1");
        let conceal = format!("conceal;C;{army}/{army}qmark;{army};;");
        let masked = if matches!(d.secrecy, Secrecy::Masked) {
            "alice;|0"
        } else {
            "null;"
        };
        let hidden = if matches!(d.secrecy, Secrecy::Hidden) {
            "alice"
        } else {
            "null"
        };
        let (image, name) = match (d.weapon, army) {
            (true, _) => (format!("{army}/{army}LMG"), format!("LMG {}", d.tail)),
            (false, "ge") => ("ge/ge467S".to_string(), format!("4-6-7 {} 1sq", d.tail)),
            (false, _) => ("ru/ru447S".to_string(), format!("4-4-7 {} 1sq", d.tail)),
        };
        let kind = if d.weapon { "common" } else { "unit" };
        let piece = basic(&image, &name);
        let id = format!("p{i}");
        commands.push(writer::piece_command(
            &id,
            &[
                ("mark;DBCounterType", kind),
                ("hide;72,130;HIP;;player:;0.3", hidden),
                (conceal.as_str(), masked),
                (piece.as_str(), position.as_str()),
            ],
        ));
        members.push(id);
    }
    for (place, members) in &stacks {
        let (x, y) = PLACES[*place].1.map_or((100, 100), |(c, r)| pixel(c, r));
        let ids: Vec<&str> = members.iter().map(String::as_str).collect();
        commands.push(writer::stack_command(
            &format!("s{place}"),
            "Main Map",
            x,
            y,
            &ids,
        ));
    }
    commands
}

fn side(i: usize) -> Side {
    if i == 0 {
        Side::A
    } else {
        Side::B
    }
}

fn hex(name: &str) -> Hex {
    name.parse()
        .unwrap_or_else(|e| panic!("the import's hex {name}: {e}"))
}

/// The law itself: the file reads back as the import's units and weapons, no more, no fewer,
/// each with its id, side, hex or place off the boards, and hidden and concealed flags.
fn file_agrees_with_the_import(imported: &Imported, boards: &Boards) -> Result<(), String> {
    let text = imported.to_toml(&FileOptions {
        name: "Law \"of\" the file\n[[units]]".into(),
        turns: 3,
    });
    let scenario =
        Scenario::from_toml_on(&text, Some(boards)).map_err(|e| format!("{e}\n{text}"))?;
    let setup_units = scenario.setup.as_ref().map(|s| &s.units);
    let setup_weapons = scenario.setup.as_ref().map(|s| &s.weapons);
    let read_units = scenario.units.len() + setup_units.map_or(0, |u| u.len());
    if read_units != imported.units.len() {
        return Err(format!(
            "the file holds {read_units} units, the import {}\n{text}",
            imported.units.len()
        ));
    }
    for u in &imported.units {
        match &u.hex {
            Some(h) => {
                let read = scenario
                    .units
                    .get(&u.id)
                    .ok_or_else(|| format!("{} is not on the map in the file\n{text}", u.id))?;
                let same = read.hex == hex(h)
                    && read.side == side(u.side)
                    && read.kind == u.kind
                    && read.ratings == u.ratings
                    && read.hidden == u.hidden
                    && read.concealed == u.concealed;
                if !same {
                    return Err(format!(
                        "{} reads back as {read:?}, not {u:?}\n{text}",
                        u.id
                    ));
                }
            }
            None => {
                let read = setup_units
                    .and_then(|s| s.get(&u.id))
                    .ok_or_else(|| format!("{} is not off the boards in the file\n{text}", u.id))?;
                let same = read.side == side(u.side)
                    && read.kind == u.kind
                    && read.ratings == u.ratings
                    && read.may_hide == u.hidden
                    && read.may_conceal == u.concealed;
                if !same {
                    return Err(format!(
                        "{} reads back as {read:?}, not {u:?}\n{text}",
                        u.id
                    ));
                }
            }
        }
    }
    let read_weapons = scenario.weapons.len() + setup_weapons.map_or(0, |w| w.len());
    if read_weapons != imported.weapons.len() {
        return Err(format!(
            "the file holds {read_weapons} weapons, the import {}\n{text}",
            imported.weapons.len()
        ));
    }
    for w in &imported.weapons {
        let on_map = scenario
            .weapons
            .get(&w.id)
            .map(|r| (r.name.clone(), r.pp, r.held_by.clone(), Some(r.hex), None));
        let off = setup_weapons
            .and_then(|s| s.get(&w.id))
            .map(|r| (r.name.clone(), r.pp, r.held_by.clone(), None, Some(r.side)));
        let (name, pp, held_by, at, given_by) = on_map
            .or(off)
            .ok_or_else(|| format!("weapon {} is not in the file\n{text}", w.id))?;
        let place_agrees = match (&w.held_by, &w.hex, at) {
            (Some(_), _, _) => true,
            (None, Some(h), Some(at)) => at == hex(h),
            // In the margin: its side gives it at set-up.
            (None, None, None) => given_by.is_some() && given_by == w.side.map(side),
            _ => false,
        };
        if name != w.name || pp != w.pp || held_by != w.held_by || !place_agrees {
            return Err(format!(
                "weapon {} reads back otherwise: {w:?}\n{text}",
                w.id
            ));
        }
    }
    Ok(())
}

/// Characters a hostile name is made of: TOML's own syntax, line ends, controls, and text.
fn hostile_tail() -> impl Strategy<Value = String> {
    let pieces = prop_oneof![
        Just("\n".to_string()),
        Just("\r".to_string()),
        Just("\"".to_string()),
        Just("#".to_string()),
        Just("]".to_string()),
        Just("[[units]]".to_string()),
        Just("\nhex = \"2C2\"\nhidden = true\n".to_string()),
        Just("'''".to_string()),
        Just("\\".to_string()),
        Just("\u{7}\u{85}\u{202e}".to_string()),
        "[ -~]{0,4}",
        any::<char>().prop_map(String::from),
    ];
    proptest::collection::vec(pieces, 0..5).prop_map(|p| p.concat())
}

fn drafts() -> impl Strategy<Value = Vec<Draft>> {
    let secrecy = prop_oneof![
        Just(Secrecy::Open),
        Just(Secrecy::Hidden),
        Just(Secrecy::Masked)
    ];
    let draft = (0..PLACES.len(), any::<bool>(), hostile_tail(), secrecy).prop_map(
        |(place, weapon, tail, secrecy)| Draft {
            place,
            weapon,
            tail,
            secrecy,
        },
    );
    proptest::collection::vec(draft, 1..10)
}

/// The property: for any synthesised save, the file and the import agree.
#[test]
fn the_file_reads_back_as_the_imported_units_and_weapons_whatever_the_names() {
    const CASES: u32 = 128;
    let boards = boards();
    let checked = std::cell::Cell::new(0u32);
    let mut runner = TestRunner::new(Config {
        cases: CASES,
        ..Config::default()
    });
    runner
        .run(&drafts(), |drafts| {
            // A save refused (a tab in a name ends its basic piece early; no unit the engine
            // understands) writes no file: nothing to agree with.
            let Ok(game) = parse(&writer::saved_game_text(&save(&drafts))) else {
                return Ok(());
            };
            let Ok(imported) = import(&game) else {
                return Ok(());
            };
            checked.set(checked.get() + 1);
            file_agrees_with_the_import(&imported, &boards).map_err(TestCaseError::fail)
        })
        .unwrap();
    assert!(
        checked.get() > CASES / 2,
        "only {} of {CASES} saves were imported: the drafts test too little",
        checked.get()
    );
}

/// Issue 50's own save: a squad whose name goes on to write a HIP squad of its own. The file
/// holds one unit, the squad, where the save put it, and it is not hidden.
#[test]
fn a_name_that_writes_a_unit_stays_a_name() {
    let hostile = "4-6-7 1sq\nhex=\"2C2\"\nhidden=true\n[[units]]\nid=\"ge-sq9\"\nside=\"german\"\nkind=\"squad\"\nratings=\"4-6-7\"\n# 1sq";
    let (x, y) = pixel(4, 5);
    let piece = basic("ge/ge467S", hostile);
    let commands = vec![
        LAYOUT.to_string(),
        writer::piece_command(
            "1",
            &[
                ("conceal;C;ge/geqmark;ge;;", "null;"),
                (piece.as_str(), &format!("Main Map;{x};{y};1")),
            ],
        ),
    ];
    let game = parse(&writer::saved_game_text(&commands)).unwrap();
    let imported = import(&game).unwrap();
    assert_eq!(imported.units.len(), 1);
    assert!(!imported.units[0].hidden);
    file_agrees_with_the_import(&imported, &boards()).unwrap();
    let text = imported.to_toml(&FileOptions {
        name: "x".into(),
        turns: 1,
    });
    let scenario = Scenario::from_toml_on(&text, Some(&boards())).unwrap();
    assert_eq!(scenario.units.len(), 1, "{text}");
    assert!(!scenario.units["ge-sq1"].hidden, "{text}");
    assert_eq!(scenario.units["ge-sq1"].hex, hex("2D5"), "{text}");
}

/// A set-up save as published: every unit off the boards, each side's support weapons in the
/// margin beside its units, a vehicle among them. The file loads as written: the weapons go to
/// their side's set-up, given to units as they are placed (A4.43), the vehicle comes in as a
/// counter the engine does not rule on, and a weapon no unit of its side could take (the
/// German sets up no Infantry here) is reported, not written into a file that would not load.
#[test]
fn a_set_up_save_loads_with_its_margin_weapons_and_its_vehicles() {
    let piece = |id: &str, army: &str, image: &str, name: &str, kind: &str, x: i64| {
        let position = format!("Main Map;{x};100;1");
        let conceal = format!("conceal;C;{army}/{army}qmark;{army};;");
        writer::piece_command(
            id,
            &[
                ("mark;DBCounterType", kind),
                (conceal.as_str(), "null;"),
                (basic(image, name).as_str(), position.as_str()),
            ],
        )
    };
    let mut commands = vec![LAYOUT.to_string()];
    commands.push(piece("a", "ru", "ru/ru447S", "4-4-7 1sq", "unit", 100));
    commands.push(piece("b", "ru", "ru/ru447S", "4-4-7 1sq", "unit", 160));
    commands.push(piece("c", "ru", "ru/ruLMG", "LMG", "common", 220));
    commands.push(piece("d", "ru", "ru/ruDC", "DC", "common", 280));
    commands.push(piece("e", "ru", "ru/veh/T34M43", "T-34 M43", "unit", 340));
    commands.push(piece("f", "ge", "ge/veh/pzivh", "PzKw IVH", "unit", 400));
    commands.push(piece("g", "ge", "ge/geMMG", "MMG", "common", 460));
    let game = parse(&writer::saved_game_text(&commands)).unwrap();
    let imported = import(&game).unwrap();
    file_agrees_with_the_import(&imported, &boards()).unwrap();
    let text = imported.to_toml(&FileOptions {
        name: "Set-up".into(),
        turns: 5,
    });
    let scenario = Scenario::from_toml_on(&text, Some(&boards())).unwrap();
    let setup = scenario.setup.as_ref().unwrap();
    let russian = side(
        scenario
            .sides
            .iter()
            .position(|s| s.id == "russian")
            .unwrap(),
    );
    let given: Vec<&str> = setup.to_give(russian).map(|w| w.name.as_str()).collect();
    assert_eq!(given, ["DC", "LMG"], "{text}");
    assert_eq!(setup.to_give(russian.opponent()).count(), 0);
    let vehicles: Vec<(&str, protocol::board::scenario::UnitKind)> = setup
        .units
        .values()
        .filter(|u| u.kind == protocol::board::scenario::UnitKind::Counter)
        .map(|u| (u.ratings.as_str(), u.kind))
        .collect();
    assert_eq!(vehicles.len(), 2, "{text}");
    assert!(vehicles.iter().any(|(name, _)| *name == "PzKw IVH"));
    let report = imported.report_text(None, str::to_string);
    assert!(
        report.contains("MMG (off the boards, and no Infantry"),
        "{report}"
    );
    // What the file assumes, in words for the person who imports it.
    let assumed = imported
        .assumptions(&FileOptions {
            name: "Set-up".into(),
            turns: 5,
        })
        .join("\n");
    assert!(
        assumed.contains("2 support weapon(s) in the margin"),
        "{assumed}"
    );
    assert!(assumed.contains("2 vehicle(s)"), "{assumed}");
    assert!(assumed.contains("set-up order"), "{assumed}");
    // A refusal of the file names the save's piece.
    let field = format!(
        "units[{}].ratings",
        imported
            .units
            .iter()
            .position(|u| u.vasl_name == "PzKw IVH")
            .unwrap()
    );
    let piece = imported.piece_of_field(&field).unwrap();
    assert!(
        piece.contains("`PzKw IVH`") && piece.contains("off board"),
        "{piece}"
    );
}

/// A save's weapon named with a terminal escape, in a save whose file name carries one too:
/// the file names the weapon and the scenario without them (the scenario refuses such names,
/// as both players are shown them), and still reads back as the import.
#[test]
fn a_weapons_name_and_the_saves_file_name_reach_the_scenario_without_controls() {
    let (x, y) = pixel(4, 5);
    let squad = basic("ge/ge467S", "4-6-7 1sq");
    // ESC separates VASSAL's commands; CSI (U+9B) starts the same sequences in one character.
    let lmg = basic("ge/geLMG", "LMG \u{9b}2J\u{7}\u{202e}");
    let at = format!("Main Map;{x};{y};1");
    let commands = vec![
        LAYOUT.to_string(),
        writer::piece_command(
            "1",
            &[
                ("mark;DBCounterType", "unit"),
                (squad.as_str(), at.as_str()),
            ],
        ),
        writer::piece_command(
            "2",
            &[
                ("mark;DBCounterType", "common"),
                (lmg.as_str(), at.as_str()),
            ],
        ),
        writer::stack_command("s", "Main Map", x, y, &["1", "2"]),
    ];
    let game = parse(&writer::saved_game_text(&commands)).unwrap();
    let imported = import(&game).unwrap();
    assert_eq!(imported.weapons.len(), 1, "{imported:?}");
    file_agrees_with_the_import(&imported, &boards()).unwrap();
    let text = imported.to_toml(&FileOptions {
        name: "\u{1b}[2Jbriefing\u{202e}".into(),
        turns: 1,
    });
    let scenario =
        Scenario::from_toml_on(&text, Some(&boards())).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let clean = |s: &str| {
        !s.chars()
            .any(|c| c.is_control() || protocol::board::scenario::is_bidi(c))
    };
    assert!(clean(&scenario.name), "{:?}", scenario.name);
    assert_eq!(scenario.name, "[2Jbriefing");
    for w in scenario.weapons.values() {
        assert!(clean(&w.name), "{:?}", w.name);
        assert!(w.name.starts_with("LMG"), "{:?}", w.name);
    }
}

/// A save laying out VASL's board 0 (`bd00`, a geomorphic board of Open Ground that VASL
/// tools' own saves use): its units stand in board 0's hexes and the file loads on it, as on
/// any numbered board.
#[test]
fn a_save_on_board_0_loads_on_board_0() {
    let archive = SynthBoard::geomorphic("00").archive();
    let boards = Boards::new(
        "synthesised",
        TerrainTable::builtin(),
        Box::new(move |name| match name {
            "0" => Ok(archive.clone()),
            other => Err(protocol::board::vasl::library::BoardError::NotIn {
                board: other.to_string(),
                place: "the test's boards".into(),
                tried: "board 0 only".into(),
            }),
        }),
    );
    // Board 0 in the picker's one slot: its hexes lie where board 2's do in [`LAYOUT`].
    let (gx, gy) = pixel(2, 2);
    let (rx, ry) = pixel(4, 5);
    let commands = vec![
        "bd\t0\t0\t00\tVER\t6.0\t".to_string(),
        writer::piece_command(
            "1",
            &[(
                basic("ge/ge467S", "4-6-7 1sq").as_str(),
                &format!("Main Map;{gx};{gy};1"),
            )],
        ),
        writer::piece_command(
            "2",
            &[(
                basic("ru/ru447S", "4-4-7 1sq").as_str(),
                &format!("Main Map;{rx};{ry};1"),
            )],
        ),
    ];
    let game = parse(&writer::saved_game_text(&commands)).unwrap();
    let imported = import(&game).unwrap();
    assert_eq!(imported.board_files, ["bd00"]);
    assert_eq!(imported.boards, [["0"]]);
    file_agrees_with_the_import(&imported, &boards).unwrap();
    let text = imported.to_toml(&FileOptions {
        name: "x".into(),
        turns: 1,
    });
    let scenario =
        Scenario::from_toml_on(&text, Some(&boards)).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(scenario.units["ge-sq1"].hex, hex("0B2"), "{text}");
    assert_eq!(scenario.units["ru-sq1"].hex, hex("0D5"), "{text}");
}

//! Play across the seams of a map of real boards (`[map] boards`), on archives the tests
//! synthesise: a seam hex is one hex under either name, units move from board to board (onto
//! and off a board turned 180°, across east–west and north–south seams), range across a seam
//! is the map grid's (VASL's), and the rules that ask adjacency or the hexside fire enters by
//! see across the seam too (`board::geometry`).

use protocol::ReadScenario;
use std::collections::BTreeMap;
use std::sync::Arc;

use proptest::prelude::*;
use protocol::board::geometry::Geometry;
use protocol::board::hex::{Direction, DIRECTIONS};
use protocol::board::scenario::{MapSpec, PlacedBoard};
use protocol::board::vasl::codes::TerrainTable;
use protocol::board::vasl::library::Boards;
use protocol::board::vasl::map::{BoardMap, Placed};
use protocol::board::vasl::synth::{code, SynthBoard};
use protocol::phase::Phase;
use protocol::{apply, decide, Command, Event, Game, Hex, Scenario, ScriptedDice, Side};

fn hex(name: &str) -> Hex {
    name.parse().unwrap()
}

/// Boards 1–4 of open ground; board 1 has a wall along its east edge between FF5 and GG5.
fn boards() -> Boards {
    let mut archives: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for n in 1..=4 {
        let mut b = SynthBoard::geomorphic(&format!("0{n}"));
        if n == 1 {
            b.hexside(hex("FF5"), hex("GG5"), code::WALL, 3.0);
        }
        archives.insert(format!("bd0{n}"), b.archive());
    }
    Boards::new(
        "synthesised",
        TerrainTable::builtin(),
        Box::new(move |name| {
            protocol::board::vasl::library::archive_names(name)
                .iter()
                .find_map(|file| archives.get(file).cloned())
                .ok_or_else(|| protocol::board::vasl::library::BoardError::NotIn {
                    board: name.to_string(),
                    place: "the test's boards".into(),
                    tried: protocol::board::vasl::library::archive_names(name).join(", "),
                })
        }),
    )
}

fn scenario(boards: &Boards, map: &str, german: &str, russian: &str) -> Scenario {
    let text = format!(
        "name = \"Seams\"\nturns = 2\nfirst = \"german\"\nsides = [{{ id = \"german\", name = \"German\" }}, {{ id = \"russian\", name = \"Russian\" }}]\n\n[map]\nboards = {map}\n\n[[units]]\nid = \"ge\"\nside = \"german\"\nkind = \"squad\"\nratings = \"4-6-7\"\nhex = \"{german}\"\n\n[[units]]\nid = \"ru\"\nside = \"russian\"\nkind = \"squad\"\nratings = \"4-4-7\"\nhex = \"{russian}\"\n"
    );
    Scenario::from_toml_on(&text, Some(boards)).unwrap()
}

fn play(game: &mut Game, side: Side, command: Command) -> Result<Vec<Event>, String> {
    let events =
        decide(game, side, &command, &mut ScriptedDice::default()).map_err(|v| v.to_string())?;
    for e in &events {
        apply(game, e);
    }
    Ok(events)
}

/// The game at the German Movement Phase.
fn at(phase: Phase, scenario: Scenario) -> Game {
    let mut game = Game::new(scenario);
    for _ in 0..20 {
        if game.clock.phase() == phase {
            return game;
        }
        let side = game.acting();
        play(&mut game, side, Command::Done).unwrap();
    }
    panic!("never reached {phase:?}");
}

fn step(game: &mut Game, to: &str) -> Result<Vec<Event>, String> {
    play(
        game,
        Side::A,
        Command::Move {
            units: vec!["ge".into()],
            to: hex(to),
        },
    )
}

fn where_is(game: &Game, id: &str) -> Hex {
    game.units[id].hex
}

#[test]
fn a_unit_moves_across_an_east_west_seam_by_either_name_of_the_seam_hex() {
    let boards = boards();
    for seam in ["1GG3", "2A3"] {
        let mut game = at(
            Phase::Movement,
            scenario(&boards, "[[\"1\", \"2\"]]", "1FF3", "2Z9"),
        );
        step(&mut game, seam).unwrap_or_else(|e| panic!("into {seam}: {e}"));
        // The seam hex is kept under the map's name, the later board's.
        assert_eq!(where_is(&game, "ge"), hex("2A3"));
        step(&mut game, "2B3").unwrap();
        assert_eq!(where_is(&game, "ge"), hex("2B3"));
    }
    // Two hexes apart across the seam are not adjacent.
    let mut game = at(
        Phase::Movement,
        scenario(&boards, "[[\"1\", \"2\"]]", "1FF3", "2Z9"),
    );
    let e = step(&mut game, "2B3").unwrap_err();
    assert!(e.contains("not adjacent"), "{e}");
}

#[test]
fn a_unit_moves_onto_and_off_a_rotated_board() {
    let boards = boards();
    let s = scenario(&boards, "[[\"1\", \"2r\"]]", "1FF4", "2Z9");
    let g = s.geometry();
    // Board 2 is turned round: its GG column is the seam, and map north is its printed south.
    assert_eq!(g.canonical(hex("1GG4")), hex("2GG7"));
    let mut game = at(Phase::Movement, s);
    step(&mut game, "1GG4").unwrap();
    assert_eq!(where_is(&game, "ge"), hex("2GG7"));
    // East of the seam is board 2's FF column; its rows run the other way.
    step(&mut game, "2FF7").unwrap();
    step(&mut game, "2GG7").unwrap();
    step(&mut game, "1FF4").unwrap();
    assert_eq!(where_is(&game, "ge"), hex("1FF4"));
}

#[test]
fn a_unit_moves_across_the_north_south_seam_of_a_two_by_two_map() {
    let boards = boards();
    let mut game = at(
        Phase::Movement,
        scenario(&boards, "[[\"1\", \"2\"], [\"3\", \"4\"]]", "1C9", "4Z9"),
    );
    step(&mut game, "1C10").unwrap();
    step(&mut game, "3C1").unwrap();
    assert_eq!(where_is(&game, "ge"), hex("3C1"));
    // Row 10's half hexes of an even column are the southern board's row 0.
    step(&mut game, "3B1").unwrap();
    step(&mut game, "1B10").unwrap();
    assert_eq!(where_is(&game, "ge"), hex("3B0"));
}

#[test]
fn an_attack_across_a_seam_is_declared_and_the_wall_on_the_seam_gives_tem() {
    let boards = boards();
    // The Russian squad in 1FF5, behind board 1's wall on the seam hexside FF5-GG5; the German
    // fires from board 2's B5, through 2A5 (= 1GG5).
    let s = scenario(&boards, "[[\"1\", \"2\"]]", "2C5", "1FF5");
    let g = s.geometry();
    assert_eq!(g.distance(hex("2C5"), hex("1FF5")), Some(3));
    let wall = g.hexside(hex("1FF5"), hex("1GG5")).unwrap();
    assert_eq!(Some(wall), g.hexside(hex("2A5"), hex("1FF5")));
    assert!(s.hexside_feature(wall).is_some(), "the wall is on the seam");
    let game = at(Phase::PrepFire, s.clone());
    let report = protocol::tem::query(
        &game,
        &["ge".into()],
        &"ru".into(),
        protocol::tem::Fire::Direct,
    )
    .unwrap();
    assert!(report.tem >= 1, "{report:?}");
    assert!(
        report.reasons.iter().any(|r| r.contains("B9")),
        "{report:?}"
    );
    let mut game = game;
    let events = play(
        &mut game,
        Side::A,
        Command::DeclareAttack {
            firers: vec!["ge".into()],
            target: hex("1FF5"),
            into_sewer: false,
        },
    )
    .unwrap();
    assert!(
        events.iter().any(|e| matches!(e, Event::AttackDeclared(_))),
        "{events:?}"
    );
}

#[test]
fn adjacency_rules_see_across_the_seam() {
    let boards = boards();
    // A unit in 1FF5 holds the wall on the seam hexside: WA is claimable there (B9.32).
    let s = scenario(&boards, "[[\"1\", \"2\"]]", "1FF5", "2Z9");
    let mut game = at(Phase::Movement, s);
    let events = play(
        &mut game,
        Side::A,
        Command::ClaimWallAdvantage {
            units: vec!["ge".into()],
        },
    );
    // Held already (settled when play began) or claimed now: either way, held.
    if let Err(e) = &events {
        assert!(e.contains("holds WA already"), "{e}");
    }
    assert!(game.units["ge"].wall_advantage);
    // Off the seam, with no wall, the same claim is refused.
    let s = scenario(&boards, "[[\"1\", \"2\"]]", "1FF7", "2Z9");
    let mut game = at(Phase::Movement, s);
    let refused = play(
        &mut game,
        Side::A,
        Command::ClaimWallAdvantage {
            units: vec!["ge".into()],
        },
    );
    assert!(refused.is_err());
    assert!(!game.units["ge"].wall_advantage);
}

fn spec(rows: &[&[(u16, bool)]]) -> MapSpec {
    MapSpec {
        rows: rows
            .iter()
            .map(|r| {
                r.iter()
                    .map(|(board, rotated)| PlacedBoard {
                        board: *board,
                        rotated: *rotated,
                        version: "6.1".into(),
                        digest: String::new(),
                    })
                    .collect()
            })
            .collect(),
    }
}

/// The open boards as a [`BoardMap`] laid out like `spec`, to measure range on its pixel grid.
fn pixel_map(spec: &MapSpec) -> BoardMap {
    let archive = Arc::new(protocol::board::vasl::map::painted_board("open", |_, _| {
        (0, 0)
    }));
    let rows = spec
        .rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|b| Placed {
                    number: b.board,
                    rotated: b.rotated,
                    archive: archive.clone(),
                })
                .collect()
        })
        .collect();
    BoardMap::new(rows, Arc::new(TerrainTable::builtin())).unwrap()
}

fn layouts() -> Vec<MapSpec> {
    vec![
        spec(&[&[(1, false), (2, false)]]),
        spec(&[&[(1, false), (2, true)]]),
        spec(&[&[(1, true), (2, false)], &[(3, false), (4, true)]]),
        spec(&[&[(1, false)], &[(3, true)]]),
    ]
}

fn any_hex(boards: u16) -> impl Strategy<Value = Hex> {
    (1..=boards, 1u16..=33, 0u16..=10)
        .prop_filter("printed on a board", |(_, c, r)| c % 2 == 0 || *r >= 1)
        .prop_map(|(b, c, r)| Hex::new(Some(b), c, r))
}

#[test]
fn range_across_seams_is_the_pixel_grids() {
    let layouts = layouts();
    let maps: Vec<BoardMap> = layouts.iter().map(pixel_map).collect();
    for (spec, map) in layouts.iter().zip(&maps) {
        let g = Geometry::of_map(Some(spec));
        let hexes: Vec<Hex> = map.hexes().collect();
        for (i, a) in hexes.iter().enumerate().step_by(7) {
            assert_eq!(
                g.canonical(*a),
                *a,
                "the pixel map names {a} as the geometry does"
            );
            for b in hexes.iter().skip(i % 5).step_by(11) {
                assert_eq!(g.distance(*a, *b), map.range(*a, *b), "{a} to {b}");
            }
        }
    }
}

proptest! {
    #[test]
    fn map_geometry_laws(layout in 0usize..4, a in any_hex(4), b in any_hex(4), c in any_hex(4), d in 0usize..6) {
        let specs = layouts();
        let spec = &specs[layout];
        let on: Vec<u16> = spec.rows.iter().flatten().map(|p| p.board).collect();
        prop_assume!(on.contains(&a.board.unwrap()) && on.contains(&b.board.unwrap()) && on.contains(&c.board.unwrap()));
        let g = Geometry::of_map(Some(spec));
        let (ab, ba) = (g.distance(a, b).unwrap(), g.distance(b, a).unwrap());
        prop_assert_eq!(ab, ba);
        prop_assert_eq!(ab == 0, g.same_hex(a, b));
        prop_assert_eq!(g.is_adjacent(a, b), ab == 1);
        prop_assert!(g.distance(a, c).unwrap() <= ab + g.distance(b, c).unwrap());
        let dir: Direction = DIRECTIONS[d];
        if let Some(n) = g.step(a, dir) {
            prop_assert_eq!(g.step(n, dir.opposite()), Some(g.canonical(a)));
            prop_assert_eq!(g.direction_to(a, n), Some(dir));
            prop_assert_eq!(g.hexside(a, n), g.hexside(n, a));
            prop_assert_eq!(g.distance(a, n), Some(1));
        }
    }
}

#[test]
fn wall_advantage_over_a_seam_wall_is_denied_across_it_under_either_name() {
    let boards = boards();
    // Open ground either side of board 1's wall on the seam: both squads must hold WA when
    // they can (B9.323), but only one may hold it over the one hexside (B9.321), whichever
    // name the hex across the wall goes by (1GG5 is 2A5). The German claims it at setup.
    for across in ["1GG5", "2A5"] {
        let text = format!(
            "name = \"Seams\"\nturns = 2\nfirst = \"german\"\nsides = [{{ id = \"german\", name = \"German\" }}, {{ id = \"russian\", name = \"Russian\" }}]\n\n[map]\nboards = [[\"1\", \"2\"]]\n\n[[units]]\nid = \"ge\"\nside = \"german\"\nkind = \"squad\"\nratings = \"4-6-7\"\nhex = \"1FF5\"\nwall_advantage = true\n\n[[units]]\nid = \"ru\"\nside = \"russian\"\nkind = \"squad\"\nratings = \"4-4-7\"\nhex = \"{across}\"\n"
        );
        let s = Scenario::from_toml_on(&text, Some(&boards)).unwrap();
        let mut game = at(Phase::Movement, s);
        play(&mut game, Side::A, Command::Done).unwrap();
        assert!(game.units["ge"].wall_advantage, "across {across}");
        assert!(!game.units["ru"].wall_advantage, "across {across}");
        let deniers = protocol::rules::wall_advantage::deniers(&game, &game.units["ru"]);
        assert_eq!(
            deniers.iter().map(|u| u.id.as_str()).collect::<Vec<_>>(),
            ["ge"],
            "across {across}"
        );
    }
}

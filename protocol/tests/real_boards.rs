//! Scenarios on real boards (`[map] boards`), on archives the tests synthesise in VASL's
//! format: the layout is read, every hex and hexside of each board becomes scenario terrain,
//! the scenario's own `[[hexes]]` apply on top, and every mistake is named.

use protocol::ReadScenario;
use std::collections::BTreeMap;

use protocol::board::terrain::{HexsideFeature, Terrain};
use protocol::board::vasl::codes::TerrainTable;
use protocol::board::vasl::library::Boards;
use protocol::board::vasl::synth::{code, SynthBoard};
use protocol::{Hex, Scenario};

fn hex(name: &str) -> Hex {
    name.parse().unwrap()
}

/// Board 1: woods in E5, a wall between M3 and M4, a hill at K4, a swamp (not modelled) at P5.
/// Board 2: open ground with a stone building in C3.
fn boards() -> Boards {
    let mut one = SynthBoard::geomorphic("01");
    one.hex(hex("E5"), code::WOODS, 38.0);
    one.hexside(hex("M3"), hex("M4"), code::WALL, 3.0);
    one.raise(hex("K4"), 1, 36.0);
    one.hex(hex("P5"), code::SWAMP, 36.0);
    let mut two = SynthBoard::geomorphic("02");
    two.hex(hex("C3"), code::STONE_BUILDING, 40.0);
    let archives: BTreeMap<String, Vec<u8>> = [
        ("bd01".to_string(), one.archive()),
        ("bd02".to_string(), two.archive()),
        ("bd03".to_string(), b"not a zip".to_vec()),
    ]
    .into_iter()
    .collect();
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

fn scenario(map: &str, rest: &str) -> String {
    format!(
        "name = \"On real boards\"\nturns = 2\nfirst = \"german\"\nsides = [{{ id = \"german\", name = \"German\" }}, {{ id = \"russian\", name = \"Russian\" }}]\n\n[map]\n{map}\n\n{rest}\n[[units]]\nid = \"ge\"\nside = \"german\"\nkind = \"squad\"\nratings = \"4-6-7\"\nhex = \"1L4\"\n\n[[units]]\nid = \"ru\"\nside = \"russian\"\nkind = \"squad\"\nratings = \"4-4-7\"\nhex = \"2B3\"\n"
    )
}

#[test]
fn a_map_of_two_boards_reads_every_hex_of_both() {
    let boards = boards();
    let text = scenario("boards = [[\"1\", \"2r\"]]", "");
    let s = Scenario::from_toml_on(&text, Some(&boards)).unwrap();
    let map = s.map.as_ref().unwrap();
    assert_eq!(map.rows.len(), 1);
    assert_eq!(map.rows[0][0].board, 1);
    assert!(!map.rows[0][0].rotated);
    assert!(map.rows[0][1].rotated);
    assert_eq!(map.rows[0][1].version, "6.1");
    // Board 1's GG column is board 2's (rotated: its GG) column: one hex each, named by board 2.
    assert_eq!(s.hexes.len(), 2 * (17 * 10 + 16 * 11) - 10);
    assert!(!s.hexes.contains_key(&hex("1GG5")));
    assert_eq!(s.geometry().canonical(hex("1GG5")), hex("2GG6"));
    assert_eq!(s.hexes[&hex("1E5")].terrain, Terrain::Woods);
    assert_eq!(s.hexes[&hex("1K4")].elevation, 1);
    assert_eq!(s.hexes[&hex("2C3")].terrain, Terrain::StoneBuilding);
    assert_eq!(s.hexes[&hex("1P5")].unmodelled.as_deref(), Some("Swamp"));
    let wall = hex("1M3").hexside(hex("1M4")).unwrap();
    assert_eq!(s.hexside_feature(wall), Some(HexsideFeature::Wall));
}

#[test]
fn the_scenarios_own_hexes_apply_on_top_of_the_boards() {
    let boards = boards();
    let rest = "[[hexes]]\nhex = \"1E5\"\nterrain = \"open_ground\"\n\n[[hexsides]]\nhexside = \"1M3-1M4\"\nfeature = \"hedge\"\n";
    let s = Scenario::from_toml_on(&scenario("boards = [[\"1\", \"2\"]]", rest), Some(&boards))
        .unwrap();
    assert_eq!(s.hexes[&hex("1E5")].terrain, Terrain::OpenGround);
    let side = hex("1M3").hexside(hex("1M4")).unwrap();
    assert_eq!(s.hexside_feature(side), Some(HexsideFeature::Hedge));
}

#[test]
fn every_mistake_in_a_map_is_named() {
    let boards = boards();
    let refused = |map: &str| {
        Scenario::from_toml_on(&scenario(map, ""), Some(&boards))
            .unwrap_err()
            .to_string()
    };
    let e = refused("boards = [[\"1\", \"9\"]]");
    assert!(e.contains("board 9 is not in the test's boards"), "{e}");
    let e = refused("boards = [[\"1\", \"3\"]]");
    assert!(e.contains("board 3") && e.contains("zip"), "{e}");
    let e = refused("boards = [[\"1\", \"x\"]]");
    assert!(e.contains("`x` is not a board"), "{e}");
    let e = refused("boards = [[\"1\", \"2\"], [\"1\"]]");
    assert!(e.contains("equally long"), "{e}");
    let e = refused("boards = [[\"1\", \"1r\"]]");
    assert!(e.contains("named twice"), "{e}");
    let e = refused("boards = []");
    assert!(e.contains("names no board"), "{e}");
    let e = Scenario::from_toml(&scenario("boards = [[\"1\"]]", ""))
        .unwrap_err()
        .to_string();
    assert!(e.contains("--boards") && e.contains("ASL_BOARDS"), "{e}");
}

#[test]
fn los_on_real_boards_is_traced_over_their_pixels() {
    use protocol::board::los::Verdict;
    use protocol::rules::los::{between, Spot};
    let boards = boards();
    let s =
        Scenario::from_toml_on(&scenario("boards = [[\"1\", \"2r\"]]", ""), Some(&boards)).unwrap();
    let game = protocol::Game::new(s.clone());
    let los = |a: &str, b: &str| between(&game, &Spot::Hex(hex(a)), &Spot::Hex(hex(b))).unwrap();
    // The woods filling 1E5 lie across the thread from 1A5 to 1I5 (A6.2).
    let blocked = los("1A5", "1I5");
    assert_eq!(blocked.verdict, Verdict::Blocked, "{blocked:?}");
    assert!(blocked.reasons[0].contains("A6"), "{blocked:?}");
    assert_eq!(los("1I5", "1A5").verdict, Verdict::Blocked);
    assert_eq!(los("1A2", "1I2").verdict, Verdict::Clear);
    // Into the woods hex itself: its own terrain does not block (A6.1's ends).
    assert_eq!(los("1A5", "1E5").verdict, Verdict::Clear);
    // Across the seam onto the rotated board, and its building in the way.
    assert_eq!(los("2A3", "2E3").verdict, Verdict::Blocked);
    assert_ne!(los("1Y2", "2DD2").verdict, Verdict::Blocked);

    // A scenario read back from a log names its boards by digest only, and the core finds
    // no board by itself: until the host hands the boards in, LOS on it says which is missing.
    let config = bincode::config::standard();
    let bytes = bincode::serde::encode_to_vec(&s, config).unwrap();
    let (stored, _): (Scenario, usize) = bincode::serde::decode_from_slice(&bytes, config).unwrap();
    assert_eq!(stored, s);
    let game = protocol::Game::new(stored.clone());
    let e = between(&game, &Spot::Hex(hex("1A5")), &Spot::Hex(hex("1I5"))).unwrap_err();
    assert!(e.to_string().contains("not loaded"), "{e}");
    // Handed them, it traces what the game created with them traced.
    let mut handed = stored.clone();
    boards.attach(&mut handed);
    let game = protocol::Game::new(handed);
    let again = between(&game, &Spot::Hex(hex("1A5")), &Spot::Hex(hex("1I5"))).unwrap();
    assert_eq!(again, blocked);
    // Handed boards whose archive is not the one the game was created with, it is told so.
    let mut other = stored;
    other.map.as_mut().unwrap().rows[0][0].digest = "00".repeat(32);
    boards.attach(&mut other);
    let game = protocol::Game::new(other);
    let e = between(&game, &Spot::Hex(hex("1A5")), &Spot::Hex(hex("1I5"))).unwrap_err();
    assert!(
        e.to_string()
            .contains("not the archive the game was created with"),
        "{e}"
    );
}

//! The round-trip law on every layout of real boards: what the server writes about a game on a
//! map — its stored envelopes, the snapshot, the messages it sends in both codecs — reads back
//! equal, whichever way 1–4 boards are laid (rows, columns, a square, turned or not) and
//! whichever name a seam hex is given (`3X0` is `4X10` where board 3 lies south of board 4).
//!
//! A hexside between two boards is adjacent only on the map that lays them side by side; the
//! value read back carries no map, so reading it must not ask for adjacency the map alone
//! knows. A game on boards stacked north–south was once written and never read again.

use protocol::event::GameCreated;
use protocol::ReadScenario;
use std::collections::BTreeMap;
use std::sync::OnceLock;

use proptest::prelude::*;
use protocol::board::hex::{Hexside, DIRECTIONS};
use protocol::board::vasl::codes::TerrainTable;
use protocol::board::vasl::library::Boards;
use protocol::board::vasl::synth::{code, SynthBoard};
use protocol::edges::wire::{from_bincode, from_json, to_bincode, to_json, ServerMessage};
use protocol::record::chain::{self, ChainReader, GENESIS};
use protocol::{apply, decide, Command, Event, Game, Hex, Scenario, ScriptedDice, Side, Viewer};

fn hex(name: &str) -> Hex {
    name.parse().unwrap()
}

/// Whether a printed hex lies in the band along a board's edges.
fn on_edge(h: Hex) -> bool {
    h.column <= 2 || h.column >= 32 || h.row <= 1 || h.row >= 9
}

/// The archives of boards 1–4: open ground with a wall on every hexside between two hexes of
/// the band along the edges, so that every seam of every layout has walls on hexsides whose
/// two hexes the map names on two boards.
fn archives() -> &'static BTreeMap<String, Vec<u8>> {
    static ARCHIVES: OnceLock<BTreeMap<String, Vec<u8>>> = OnceLock::new();
    ARCHIVES.get_or_init(|| {
        let mut archives = BTreeMap::new();
        for n in 1..=4u16 {
            let mut board = SynthBoard::geomorphic(&format!("0{n}"));
            for column in 1..=33u16 {
                for row in 0..=10u16 {
                    let h = Hex::new(None, column, row);
                    if (column % 2 == 1 && row == 0) || !on_edge(h) {
                        continue;
                    }
                    for n in h.neighbours() {
                        if h < n && on_edge(n) {
                            board.hexside(h, n, code::WALL, 3.0);
                        }
                    }
                }
            }
            archives.insert(format!("bd0{n}"), board.archive());
        }
        archives
    })
}

fn boards() -> Boards {
    Boards::new(
        "synthesised",
        TerrainTable::builtin(),
        Box::new(|name| {
            protocol::board::vasl::library::archive_names(name)
                .iter()
                .find_map(|file| archives().get(file).cloned())
                .ok_or_else(|| protocol::board::vasl::library::BoardError::NotIn {
                    board: name.to_string(),
                    place: "the test's boards".into(),
                    tried: protocol::board::vasl::library::archive_names(name).join(", "),
                })
        }),
    )
}

/// A layout of `count` boards, `across` to a row, each turned or not.
fn layout(count: usize, across: usize, turned: &[bool]) -> Vec<Vec<String>> {
    (0..count)
        .collect::<Vec<_>>()
        .chunks(across)
        .map(|row| {
            row.iter()
                .map(|i| format!("{}{}", i + 1, if turned[*i] { "r" } else { "" }))
                .collect()
        })
        .collect()
}

fn layouts() -> impl Strategy<Value = Vec<Vec<String>>> {
    (
        1usize..=4,
        0usize..3,
        prop::collection::vec(any::<bool>(), 4),
    )
        .prop_map(|(count, shape, turned)| {
            // One row, one column, or (for four) two by two.
            let across = match (count, shape) {
                (4, 2) => 2,
                (_, 0) => count,
                _ => 1,
            };
            layout(count, across, &turned)
        })
}

/// Two squads on the map; the German claims WA at set-up when `claims` (both stand by walls on
/// a seam, and only one may hold it over a shared hexside, B9.321).
fn scenario(
    boards: &Boards,
    rows: &[Vec<String>],
    german: Hex,
    russian: Hex,
    claims: bool,
) -> Scenario {
    let map = toml::to_string(&BTreeMap::from([("boards", rows)])).unwrap();
    let text = format!(
        "name = \"Layouts\"\nturns = 2\nfirst = \"german\"\nsides = [{{ id = \"german\", name = \"German\" }}, {{ id = \"russian\", name = \"Russian\" }}]\n\n[map]\n{map}\n[[units]]\nid = \"ge\"\nside = \"german\"\nkind = \"squad\"\nratings = \"4-6-7\"\nhex = \"{german}\"\nwall_advantage = {claims}\n\n[[units]]\nid = \"ru\"\nside = \"russian\"\nkind = \"squad\"\nratings = \"4-4-7\"\nhex = \"{russian}\"\n"
    );
    Scenario::from_toml_on(&text, Some(boards)).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// Every hex of the map that has two names: its name on each board that prints it.
fn seam_names(s: &Scenario) -> Vec<(Hex, Hex)> {
    let g = s.geometry();
    let boards: Vec<u16> = s
        .map
        .iter()
        .flat_map(|m| m.rows.iter().flatten().map(|p| p.board))
        .collect();
    let mut seams = vec![];
    for board in boards {
        for column in 1..=33u16 {
            for row in 0..=10u16 {
                let h = Hex::new(Some(board), column, row);
                if (column % 2 == 1 && row == 0) || g.plane(h).is_none() {
                    continue;
                }
                let canonical = g.canonical(h);
                if canonical != h {
                    seams.push((h, canonical));
                }
            }
        }
    }
    seams
}

fn round_trips<T>(value: &T)
where
    T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let json = to_json(value);
    let back: T = from_json(&json).unwrap_or_else(|e| panic!("JSON does not read back: {e}"));
    assert!(back == *value, "JSON reads back another value");
    let binary = to_bincode(value);
    let back: T = from_bincode(&binary).unwrap_or_else(|e| panic!("bincode: {e}"));
    assert!(back == *value, "bincode reads back another value");
}

/// Plays `command` on both the game and the record: the events sealed into a chain as the
/// store keeps them.
fn play(game: &mut Game, log: &mut Vec<(u64, Vec<u8>)>, side: Side, command: Command) -> bool {
    let Ok(events) = decide(game, side, &command, &mut ScriptedDice::default()) else {
        return false;
    };
    let first = log.len() as u64 + 1;
    for event in &events {
        seal(log, Some(side), first, event);
        apply(game, event);
    }
    true
}

fn seal(log: &mut Vec<(u64, Vec<u8>)>, by: Option<Side>, first: u64, event: &Event) {
    let prev = log
        .last()
        .map(|(_, bytes)| chain::LogHash::of(bytes))
        .unwrap_or(GENESIS);
    let seq = log.len() as u64 + 1;
    let (bytes, _) = chain::seal(seq, prev, [seq as u8; 16], by, first, event);
    log.push((seq, bytes));
}

fn check_law(rows: &[Vec<String>], pick: usize) {
    let boards = boards();
    // First the map alone, to find its seams; then units on a seam hex under its other name.
    let first = rows[0][0].trim_end_matches('r');
    let inland = (hex(&format!("{first}M5")), hex(&format!("{first}P5")));
    let probe = scenario(&boards, rows, inland.0, inland.1, false);
    let seams = seam_names(&probe);
    let s = match seams.len() {
        0 => probe,
        n => {
            let german = seams[pick % n];
            // Another hex of the seams, not the German's Location (B9.32: no WA there).
            let russian = (0..n)
                .map(|i| seams[(pick / 7 + n / 2 + i) % n])
                .find(|(_, canonical)| *canonical != german.1)
                .expect("a seam has more than one hex");
            scenario(&boards, rows, german.0, russian.0, true)
        }
    };
    let g = s.geometry();
    let crossing = s
        .hexsides
        .keys()
        .filter(|side| side.a.board != side.b.board)
        .count();
    assert_eq!(
        crossing > 0,
        rows.iter().flatten().count() > 1,
        "every seam of {rows:?} has walls on hexsides between two boards"
    );

    // Every hexside of a seam hex, built from either of its names, reads back equal.
    for (other, canonical) in &seams {
        for d in DIRECTIONS {
            if let Some(side) = g.hexside_towards(*other, d) {
                assert_eq!(side.a, g.canonical(side.a));
                let text = side.to_string();
                assert_eq!(Hexside::from_stored(&text), Ok(side), "{text}");
                round_trips(&side);
            }
            if let Some(across) = g.step(*canonical, d) {
                let raw = Hexside::from_stored(&format!("{other}-{across}"))
                    .unwrap_or_else(|e| panic!("{other}-{across}: {e}"));
                assert_eq!(
                    g.canonical_hexside(raw),
                    g.hexside(*canonical, across).unwrap()
                );
                round_trips(&raw);
            }
        }
    }

    // The game: created, played a little (a move onto the seam too), stored and read back.
    let mut game = Game::new(s.clone());
    let mut log = vec![];
    seal(
        &mut log,
        None,
        1,
        &Event::GameCreated(GameCreated {
            scenario: s.clone(),
        }),
    );
    for _ in 0..3 {
        let side = game.acting();
        play(&mut game, &mut log, side, Command::Done);
    }
    if let Some((other, _)) = seams.get(pick % seams.len().max(1)) {
        let from = game.units["ge"].hex;
        if g.is_adjacent(from, *other) {
            play(
                &mut game,
                &mut log,
                Side::A,
                Command::Move {
                    units: vec!["ge".into()],
                    to: *other,
                },
            );
        }
    }
    let verified = chain::verify(&log).unwrap_or_else(|e| panic!("{rows:?}: {e}"));
    let mut replayed: Option<Game> = None;
    let mut reader = ChainReader::default();
    for (entry, (seq, bytes)) in verified.entries.iter().zip(&log) {
        assert_eq!(reader.read(*seq, bytes).unwrap().event, entry.event);
        match (&mut replayed, &entry.event) {
            (None, Event::GameCreated(GameCreated { scenario })) => {
                replayed = Some(Game::new(scenario.clone()))
            }
            (Some(g), e) => apply(g, e),
            (None, e) => panic!("the log starts with {e:?}"),
        }
    }
    let replayed = replayed.expect("a created game");
    assert_eq!(replayed.state_hash(), game.state_hash(), "{rows:?}");

    for viewer in [
        Viewer::Side(Side::A),
        Viewer::Side(Side::B),
        Viewer::Spectator,
    ] {
        let view = game.project(viewer);
        round_trips(&view);
        round_trips(&ServerMessage::State {
            version: log.len() as u64,
            state_hash: view.state_hash(),
            state: Box::new(protocol::wire::Position::from(view.clone())),
            head: protocol::record::stream::StreamHash([1; 32]),
            owner: None,
            clocks: None,
        });
    }
    for entry in &verified.entries {
        round_trips(&entry.event);
    }
}

#[test]
fn boards_stacked_north_south_read_back() {
    for rows in [
        vec![vec!["2".to_string()], vec!["4".into()], vec!["3".into()]],
        vec![vec!["4".to_string()], vec!["3".into()]],
        vec![vec!["4r".to_string()], vec!["2r".into()], vec!["3r".into()]],
        vec![vec!["1".to_string(), "2".into()]],
    ] {
        for pick in [0, 3, 17] {
            check_law(&rows, pick);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn everything_written_about_a_game_on_any_layout_reads_back_equal(
        rows in layouts(),
        pick in 0usize..1000,
    ) {
        check_law(&rows, pick);
    }
}

//! Laws of the LOS tracer (`board::los`), checked over random maps:
//! - a map with nothing on it is clear between every two hexes;
//! - between two hexes (no units, so no Wall Advantage, bocage or entrenchment status), LOS is
//!   reciprocal: blocked one way iff blocked the other (A6.1; the Hindrance DRM may differ,
//!   the target's own hex counting and the firer's not);
//! - making a hex an obstacle never turns a blocked LOS clear. (Walls are left out of this law
//!   on purpose: B9.2 EX itself shows a hedge along the thread opening a LOS that a wall's
//!   vertex had blocked — `positions/b9-2-ex-none.script` against `b9-2-ex-hexspines.script`.)

use proptest::prelude::*;
use protocol::board::hex::Hex;
use protocol::board::los::{trace, verdict as verdict_only, End, LosMap, Verdict};
use protocol::ReadScenario;
use protocol::Scenario;

const COLUMNS: u16 = 12;
const ROWS: u16 = 10;

fn map_text(hexes: &[(u16, u16, &str, i8)], walls: &[(Hex, Hex, &str)]) -> String {
    let mut s = format!(
        "name = \"los law\"\nturns = 1\nfirst = \"a\"\nmonth = 7\nsides = [{{ id = \"a\", name = \"A\" }}, {{ id = \"b\", name = \"B\" }}]\n[[area]]\nfrom = \"1A1\"\nto = \"1{}{ROWS}\"\nterrain = \"open_ground\"\n",
        (b'A' + (COLUMNS - 1) as u8) as char
    );
    let mut seen = std::collections::BTreeSet::new();
    for (c, r, t, e) in hexes {
        if seen.insert((*c, *r)) {
            let hex = Hex::new(Some(1), *c, *r);
            s += &format!("[[hexes]]\nhex = \"{hex}\"\nterrain = \"{t}\"\nelevation = {e}\n");
        }
    }
    let mut sides = std::collections::BTreeSet::new();
    for (a, b, f) in walls {
        if let Some(side) = a.hexside(*b) {
            if sides.insert(side) {
                s += &format!("[[hexsides]]\nhexside = \"{side}\"\nfeature = \"{f}\"\n");
            }
        }
    }
    s
}

fn verdict(map: &LosMap, a: Hex, b: Hex) -> Verdict {
    trace(map, End::hex(map, a), End::hex(map, b))
        .expect("both on the map")
        .verdict
}

fn any_hex() -> impl Strategy<Value = Hex> {
    (1..=COLUMNS, 1..=ROWS).prop_map(|(c, r)| Hex::new(Some(1), c, r))
}

fn terrain() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just("woods"),
        Just("stone_building"),
        Just("brush"),
        Just("orchard"),
        Just("grain"),
        Just("open_ground"),
    ]
}

fn hexes() -> impl Strategy<Value = Vec<(u16, u16, &'static str, i8)>> {
    prop::collection::vec((1..=COLUMNS, 1..=ROWS, terrain(), 0i8..=2), 0..25)
}

fn walls() -> impl Strategy<Value = Vec<(Hex, Hex, &'static str)>> {
    prop::collection::vec(
        (
            any_hex(),
            0usize..6,
            prop_oneof![Just("wall"), Just("hedge")],
        )
            .prop_filter_map("a neighbour on the map", |(h, d, f)| {
                let n = h.step(protocol::board::hex::DIRECTIONS[d])?;
                (n.column >= 1 && n.column <= COLUMNS && n.row >= 1 && n.row <= ROWS)
                    .then_some((h, n, f))
            }),
        0..12,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn an_empty_map_is_clear_everywhere(a in any_hex(), b in any_hex()) {
        let scenario = Scenario::from_toml(&map_text(&[], &[])).unwrap();
        let map = LosMap::new(&scenario);
        prop_assert_eq!(verdict(&map, a, b), Verdict::Clear);
    }

    #[test]
    fn blocked_is_reciprocal_between_hexes(
        hexes in hexes(), walls in walls(), a in any_hex(), b in any_hex()
    ) {
        let scenario = Scenario::from_toml(&map_text(&hexes, &walls)).unwrap();
        let map = LosMap::new(&scenario);
        let there = verdict(&map, a, b) == Verdict::Blocked;
        let back = verdict(&map, b, a) == Verdict::Blocked;
        prop_assert_eq!(there, back, "{} -> {}", a, b);
    }

    /// Explaining is on demand: the verdict traced without reasons is the explained one, and
    /// the map a scenario keeps (`LosMap::of`) is the one built afresh.
    #[test]
    fn the_bare_verdict_is_the_explained_one(
        hexes in hexes(), walls in walls(), a in any_hex(), b in any_hex()
    ) {
        let scenario = Scenario::from_toml(&map_text(&hexes, &walls)).unwrap();
        let fresh = LosMap::new(&scenario);
        let kept = LosMap::of(&scenario);
        let (x, y) = (End::hex(&fresh, a), End::hex(&fresh, b));
        let explained = trace(&fresh, x, y).unwrap();
        prop_assert!(!explained.reasons.is_empty());
        prop_assert_eq!(verdict_only(&fresh, x, y).unwrap(), explained.verdict);
        prop_assert_eq!(verdict_only(kept, x, y).unwrap(), explained.verdict);
        prop_assert_eq!(trace(kept, x, y).unwrap(), explained);
    }

    #[test]
    fn an_added_obstacle_never_clears_a_blocked_los(
        hexes in hexes(), walls in walls(), a in any_hex(), b in any_hex(),
        extra in any_hex(), woods in prop_oneof![Just("woods"), Just("wooden_building")]
    ) {
        prop_assume!(extra != a && extra != b);
        let before = Scenario::from_toml(&map_text(&hexes, &walls)).unwrap();
        let level = before.hexes[&extra].elevation;
        let mut more = vec![(extra.column, extra.row, woods, level)];
        more.extend(hexes.iter().copied());
        let after = Scenario::from_toml(&map_text(&more, &walls)).unwrap();
        let (m0, m1) = (LosMap::new(&before), LosMap::new(&after));
        if verdict(&m0, a, b) == Verdict::Blocked {
            prop_assert_eq!(verdict(&m1, a, b), Verdict::Blocked, "{} -> {} with {} in {}", a, b, woods, extra);
        }
    }
}

fn scenario(text: &str) -> Scenario {
    Scenario::from_toml(&format!(
        "name = \"t\"\nturns = 1\nfirst = \"a\"\nsides = [{{ id = \"a\", name = \"A\" }}, {{ id = \"b\", name = \"B\" }}]\n[[area]]\nfrom = \"1A1\"\nto = \"1L10\"\nterrain = \"open_ground\"\n{text}"
    ))
    .unwrap()
}

fn los(s: &Scenario, a: &str, b: &str) -> Verdict {
    let map = LosMap::new(s);
    verdict(&map, a.parse().unwrap(), b.parse().unwrap())
}

/// A6.2: woods between two ground-level hexes block; beside the thread they do not.
#[test]
fn woods_block_same_level_los() {
    let s = scenario("[[hexes]]\nhex = \"1E5\"\nterrain = \"woods\"\n");
    assert_eq!(los(&s, "1E3", "1E7"), Verdict::Blocked);
    assert_eq!(los(&s, "1D3", "1D7"), Verdict::Clear);
    // Its own hex never blocks: from the woods out, and into them.
    assert_eq!(los(&s, "1E5", "1E9"), Verdict::Clear);
    assert_eq!(los(&s, "1E9", "1E5"), Verdict::Clear);
}

/// A6.1: along a hexspine, obstacles on one side leave the thread clear; on both sides block it.
#[test]
fn hexspine_between_obstacles() {
    // C4 → E4 runs exactly along the D3-D4 hexside.
    let one = scenario("[[hexes]]\nhex = \"1D3\"\nterrain = \"woods\"\n");
    assert_eq!(los(&one, "1C4", "1E4"), Verdict::Clear);
    let both = scenario(
        "[[hexes]]\nhex = \"1D3\"\nterrain = \"woods\"\n[[hexes]]\nhex = \"1D4\"\nterrain = \"woods\"\n",
    );
    assert_eq!(los(&both, "1C4", "1E4"), Verdict::Blocked);
}

/// B10.2, A6.4: a unit on a level-2 hill sees over level-0 woods to level-0 hexes beyond their
/// Blind Hex; at level 0 the woods block.
#[test]
fn height_and_blind_hexes() {
    let s = scenario(
        "[[hexes]]\nhex = \"1E2\"\nterrain = \"open_ground\"\nelevation = 2\n[[hexes]]\nhex = \"1E5\"\nterrain = \"woods\"\n",
    );
    assert_eq!(los(&s, "1E2", "1E6"), Verdict::Blocked, "the Blind Hex");
    assert_eq!(los(&s, "1E2", "1E7"), Verdict::Clear);
    assert_eq!(los(&s, "1E3", "1E7"), Verdict::Blocked);
}

/// B10.2: a lower unit sees only the first crest of a higher level; units on a plateau see
/// each other over their own level's ground.
#[test]
fn hills_and_crests() {
    let s = scenario(
        "[[area]]\nfrom = \"1F1\"\nto = \"1H10\"\nterrain = \"open_ground\"\nelevation = 1\n",
    );
    assert_eq!(los(&s, "1C5", "1F5"), Verdict::Clear);
    assert_eq!(los(&s, "1C5", "1G5"), Verdict::Blocked);
    assert_eq!(los(&s, "1F5", "1H5"), Verdict::Clear);
    assert_eq!(los(&s, "1H5", "1C5"), Verdict::Blocked);
}

/// B12.2, B15, A6.1: brush hinders +1 per hex between the ends; neither end's own hex
/// counts, so the answer is the same whichever end fires.
#[test]
fn hindrances() {
    let s = scenario(
        "[[hexes]]\nhex = \"1E4\"\nterrain = \"brush\"\n[[hexes]]\nhex = \"1E5\"\nterrain = \"brush\"\n[[hexes]]\nhex = \"1E7\"\nterrain = \"brush\"\n",
    );
    assert_eq!(los(&s, "1E3", "1E6"), Verdict::Hindered(2));
    assert_eq!(los(&s, "1E3", "1E7"), Verdict::Hindered(2));
    assert_eq!(los(&s, "1E7", "1E3"), Verdict::Hindered(2));
}

/// A6.7: hindrances add up, and a total of +6 or more blocks the LOS instead of hindering it.
#[test]
fn six_hindrances_block() {
    let brush: String = (3..=8)
        .map(|row| format!("[[hexes]]\nhex = \"1E{row}\"\nterrain = \"brush\"\n"))
        .collect();
    let s = scenario(&brush);
    // Neither end's own hex counts (B12.2): E3 to E7 between E2 and E8 are five.
    assert_eq!(los(&s, "1E2", "1E8"), Verdict::Hindered(5));
    assert_eq!(los(&s, "1E2", "1E9"), Verdict::Blocked);
    assert_eq!(los(&s, "1E2", "1E10"), Verdict::Blocked);
    assert_eq!(los(&s, "1E3", "1E9"), Verdict::Hindered(5));
    let map = LosMap::new(&s);
    let (a, b) = ("1E2".parse().unwrap(), "1E9".parse().unwrap());
    let report = trace(&map, End::hex(&map, a), End::hex(&map, b)).unwrap();
    assert!(
        report.reasons.iter().any(|r| r.contains("A6.7")),
        "{:?}",
        report.reasons
    );
}

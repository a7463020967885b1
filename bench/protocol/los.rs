//! LOS between two hexes of a four-board-sized map (33 columns × 60 rows = 1,980 hexes, on one
//! board number since the engine does not join boards), mixed terrain: woods, buildings, brush,
//! grain, level 1–2 hills, walls and hedges. Goal (issue 14): ≤ 20 µs per LOS.
//!
//! `cargo bench -p asl-protocol --bench los`. Figures in BENCHMARKS.md.

use criterion::{criterion_group, criterion_main, Criterion};
use protocol::board::hex::{Hex, DIRECTIONS};
use protocol::board::los::{trace, verdict, End, LosMap};
use protocol::ReadScenario;
use protocol::Scenario;
use std::hint::black_box;

const COLUMNS: u16 = 33;
const ROWS: u16 = 60;

/// A fixed pseudo-random sequence (no OS randomness; the same map every run).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
    fn hex(&mut self) -> Hex {
        let column = 1 + self.next(u64::from(COLUMNS)) as u16;
        Hex::new(Some(1), column, 1 + self.next(u64::from(ROWS)) as u16)
    }
}

fn map() -> Scenario {
    Scenario::from_toml(&map_text()).expect("bench map reads")
}

fn map_text() -> String {
    let mut rng = Lcg(14);
    let mut s = String::from(
        "name = \"bench\"\nturns = 1\nfirst = \"a\"\nmonth = 7\nsides = [{ id = \"a\", name = \"A\" }, { id = \"b\", name = \"B\" }]\n[[area]]\nfrom = \"1A1\"\nto = \"1GG60\"\nterrain = \"open_ground\"\n",
    );
    let mut used = std::collections::BTreeSet::new();
    for _ in 0..500 {
        let hex = rng.hex();
        if !used.insert(hex) {
            continue;
        }
        let terrain = [
            "woods",
            "stone_building",
            "brush",
            "grain",
            "orchard",
            "open_ground",
        ][rng.next(6) as usize];
        let elevation = [0, 0, 0, 1, 2][rng.next(5) as usize];
        s += &format!(
            "[[hexes]]\nhex = \"{hex}\"\nterrain = \"{terrain}\"\nelevation = {elevation}\n"
        );
    }
    let mut sides = std::collections::BTreeSet::new();
    for _ in 0..300 {
        let hex = rng.hex();
        let Some(n) = hex.step(DIRECTIONS[rng.next(6) as usize]) else {
            continue;
        };
        if n.column < 1 || n.row < 1 || n.row > ROWS {
            continue;
        }
        let side = hex.hexside(n).unwrap();
        if sides.insert(side) {
            let f = ["wall", "hedge"][rng.next(2) as usize];
            s += &format!("[[hexsides]]\nhexside = \"{side}\"\nfeature = \"{f}\"\n");
        }
    }
    s
}

/// The bench map with one squad in its middle (1Q30), for questions asked through the rules
/// (`rules::los::between`), as the `los` line, an attack or the watch page ask them.
fn game() -> protocol::Game {
    let mut text = map_text();
    text += "[[units]]\nid = \"u\"\nside = \"a\"\nkind = \"squad\"\nratings = \"4-6-7\"\nhex = \"1Q30\"\n";
    protocol::Game::new(Scenario::from_toml(&text).expect("bench game reads"))
}

fn bench(c: &mut Criterion) {
    let scenario = map();
    assert_eq!(
        scenario.hexes.len(),
        usize::from(COLUMNS) * usize::from(ROWS)
    );
    let map = LosMap::new(&scenario);
    let hexes: Vec<Hex> = scenario.hexes.keys().copied().collect();
    let mut rng = Lcg(7);
    let pairs: Vec<(End, End)> = (0..1024)
        .map(|_| {
            let a = hexes[rng.next(hexes.len() as u64) as usize];
            let b = hexes[rng.next(hexes.len() as u64) as usize];
            (End::hex(&map, a), End::hex(&map, b))
        })
        .collect();
    let mut i = 0;
    c.bench_function("los/random pair, 1,980-hex map", |b| {
        b.iter(|| {
            let (x, y) = pairs[i % pairs.len()];
            i += 1;
            black_box(trace(&map, x, y).unwrap())
        })
    });
    let far = (
        End::hex(&map, Hex::new(Some(1), 1, 1)),
        End::hex(&map, Hex::new(Some(1), COLUMNS, ROWS)),
    );
    c.bench_function("los/corner to corner (longest)", |b| {
        b.iter(|| black_box(trace(&map, far.0, far.1).unwrap()))
    });
    // The longest clear thread: corner to corner over open ground, every hex evaluated.
    let open = Scenario::from_toml(
        "name = \"open\"\nturns = 1\nfirst = \"a\"\nsides = [{ id = \"a\", name = \"A\" }, { id = \"b\", name = \"B\" }]\n[[area]]\nfrom = \"1A1\"\nto = \"1GG60\"\nterrain = \"brush\"\n",
    )
    .unwrap();
    let open_map = LosMap::new(&open);
    let far_open = (
        End::hex(&open_map, Hex::new(Some(1), 1, 1)),
        End::hex(&open_map, Hex::new(Some(1), COLUMNS, ROWS)),
    );
    c.bench_function(
        "los/corner to corner through brush (longest, never blocked)",
        |b| b.iter(|| black_box(trace(&open_map, far_open.0, far_open.1).unwrap())),
    );
    // A question through the rules: the unit's ends, the map (built per question before it
    // was kept with the scenario), the trace with its reasons.
    let game = game();
    let targets: Vec<Hex> = (0..1024)
        .map(|_| hexes[rng.next(hexes.len() as u64) as usize])
        .collect();
    let unit = protocol::rules::los::Spot::Unit("u".into());
    let mut j = 0;
    c.bench_function(
        "los/rules question, unit to random hex, with reasons",
        |b| {
            b.iter(|| {
                let to = protocol::rules::los::Spot::Hex(targets[j % targets.len()]);
                j += 1;
                black_box(protocol::rules::los::between(&game, &unit, &to).unwrap())
            })
        },
    );
    let mut k = 0;
    c.bench_function(
        "los/rules question, unit to random hex, verdict only",
        |b| {
            b.iter(|| {
                let to = protocol::rules::los::Spot::Hex(targets[k % targets.len()]);
                k += 1;
                let map = LosMap::of(&game.scenario);
                black_box(protocol::rules::los::verdict_on(&game, map, &unit, &to).unwrap())
            })
        },
    );
    let mut i2 = 0;
    c.bench_function("los/random pair, verdict only", |b| {
        b.iter(|| {
            let (x, y) = pairs[i2 % pairs.len()];
            i2 += 1;
            black_box(verdict(&map, x, y).unwrap())
        })
    });
    c.bench_function("los/corner to corner through brush, verdict only", |b| {
        b.iter(|| black_box(verdict(&open_map, far_open.0, far_open.1).unwrap()))
    });
    c.bench_function("los/build the map model", |b| {
        b.iter(|| black_box(LosMap::new(&scenario)))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);

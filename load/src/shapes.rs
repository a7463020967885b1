//! The scenarios a run plays (`--scenario`): the toy game every figure before issue 55 was
//! measured on, and real-board scenarios of the published shapes (issue 55): one board with
//! 140 counters, as Stalingrad C has (about 110 squads and leaders and 30 SW), and the same
//! counters on three boards stacked north–south.
//!
//! Real boards are never committed: the run synthesises their archives in VASL's format
//! (`board::vasl::synth`) into a boards directory of its scratch space and starts the server
//! with `--boards DIR`, as an operator points it at VASL's boards.
//!
//! On a real shape the seats do not only say `done`: in each Movement Phase the ATTACKER
//! moves [`MOVES_PER_MPH`] squads a hex each (towards the enemy, and back the next time),
//! so the rules' per-command cost at that size is in the figure. Each move is decided first
//! on the mover's own replica; one the rules would refuse there is not sent, and any refusal
//! from the server is counted and fails the run.

use anyhow::Context;
use board::vasl::synth::{code, SynthBoard};
use protocol::game::phase::Phase;
use protocol::{decide, Command, Game, Hex, ScriptedDice, Side};
use std::path::Path;

/// A scenario `asl-load` can play.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Shape {
    /// The 4-unit walkthrough (`scenarios/b9-41-wall-advantage.toml`), stretched to 30 turns,
    /// played by `done` (and declining Wall Advantage).
    Toy,
    /// One synthesised board, 140 counters: 90 squads, 20 leaders and 30 LMGs, both sides.
    OneBoard,
    /// The same 140 counters on three synthesised boards stacked north–south.
    ThreeBoards,
}

/// Squads per side on a real shape.
const SQUADS_PER_SIDE: usize = 45;
/// Leaders per side, each stacked with a squad.
const LEADERS_PER_SIDE: usize = 10;
/// LMGs per side, each held by a squad.
const WEAPONS_PER_SIDE: usize = 15;

/// Counters on a real shape: squads, leaders and SW of both sides.
pub const COUNTERS: usize = 2 * (SQUADS_PER_SIDE + LEADERS_PER_SIDE + WEAPONS_PER_SIDE);

/// Squads the ATTACKER moves in each Movement Phase of a real shape before its `done`.
pub const MOVES_PER_MPH: usize = 6;

/// The columns of a geomorphic board, west to east.
const COLUMNS: [&str; 33] = [
    "A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L", "M", "N", "O", "P", "Q", "R", "S",
    "T", "U", "V", "W", "X", "Y", "Z", "AA", "BB", "CC", "DD", "EE", "FF", "GG",
];

/// Where each side's squads stand, as (home row, row of the hex it moves to and back from),
/// the German's to the north of every board and the Russian's to its south.
const GERMAN_ROWS: [(u16, u16); 2] = [(2, 3), (3, 4)];
const RUSSIAN_ROWS: [(u16, u16); 2] = [(9, 8), (8, 7)];

impl Shape {
    /// How many boards its map has (none: the toy's map is typed in its scenario).
    pub fn boards(self) -> usize {
        match self {
            Shape::Toy => 0,
            Shape::OneBoard => 1,
            Shape::ThreeBoards => 3,
        }
    }

    pub fn name(self) -> String {
        match self {
            Shape::Toy => "toy (b9-41 walkthrough, 4 units)".into(),
            Shape::OneBoard => format!("one-board (1 synthesised board, {COUNTERS} counters)"),
            Shape::ThreeBoards => {
                format!("three-boards (3 synthesised boards north-south, {COUNTERS} counters)")
            }
        }
    }

    /// The scenario file's text, at the longest turn count a scenario may have (so a run
    /// makes fewer games for the same load).
    pub fn scenario(self) -> String {
        let text = match self {
            Shape::Toy => return crate::table::scenario(),
            Shape::OneBoard | Shape::ThreeBoards => self.real_scenario(),
        };
        protocol::scenario::longest(&text).expect("the scenario has a turn count")
    }

    /// Writes the shape's board archives (`bd01` …) into `dir`, as VASL keeps them; nothing
    /// for the toy.
    pub fn synthesise_boards(self, dir: &Path) -> anyhow::Result<()> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        for n in 1..=self.boards() {
            let mut board = SynthBoard::geomorphic(&format!("{n:02}"));
            // Some terrain between the lines, so that the map is more than open ground: a
            // woods belt and a few stone buildings on rows 5 and 6.
            for (i, column) in COLUMNS.iter().enumerate().skip(2).step_by(4) {
                let woods: Hex = format!("{column}5").parse()?;
                board.hex(woods, code::WOODS, 38.0);
                if i % 8 == 2 {
                    let building: Hex = format!("{column}6").parse()?;
                    board.hex(building, code::STONE_BUILDING, 30.0);
                }
            }
            let path = dir.join(format!("bd{n:02}"));
            std::fs::write(&path, board.archive())
                .with_context(|| format!("writing {}", path.display()))?;
        }
        Ok(())
    }

    /// A real shape's scenario: [`SQUADS_PER_SIDE`] squads a side in two lines facing each
    /// other across each board, dealt round the boards; leaders stacked with the first squads,
    /// LMGs held by the first squads.
    fn real_scenario(self) -> String {
        let boards = self.boards();
        let map = (1..=boards)
            .map(|n| format!("[\"{n}\"]"))
            .collect::<Vec<_>>()
            .join(", ");
        let mut text = format!(
            "name = \"{}\"\nturns = 10\nfirst = \"german\"\nsides = [{{ id = \"german\", name = \"German\" }}, {{ id = \"russian\", name = \"Russian\" }}]\n\n[map]\nboards = [{map}]\n",
            self.name()
        );
        for (side, prefix, ratings, leader) in [
            ("german", "ge", "4-6-7", "8-1"),
            ("russian", "ru", "4-4-7", "8-0"),
        ] {
            for i in 0..SQUADS_PER_SIDE {
                let hex = home(self, side_of(prefix), i);
                text += &format!(
                    "\n[[units]]\nid = \"{prefix}{i}\"\nside = \"{side}\"\nkind = \"squad\"\nratings = \"{ratings}\"\nhex = \"{hex}\"\n"
                );
            }
            for i in 0..LEADERS_PER_SIDE {
                let hex = home(self, side_of(prefix), i);
                text += &format!(
                    "\n[[units]]\nid = \"{prefix}-ldr{i}\"\nside = \"{side}\"\nkind = \"leader\"\nratings = \"{leader}\"\nhex = \"{hex}\"\n"
                );
            }
            for i in 0..WEAPONS_PER_SIDE {
                text += &format!(
                    "\n[[weapons]]\nid = \"{prefix}-lmg{i}\"\nname = \"LMG\"\npp = 1\nheld_by = \"{prefix}{i}\"\n"
                );
            }
        }
        text
    }
}

fn side_of(prefix: &str) -> Side {
    if prefix == "ge" {
        Side::A
    } else {
        Side::B
    }
}

/// Where squad `i` of `side` is set up, and the hex it moves to and back from.
fn places(shape: Shape, side: Side, i: usize) -> (String, String) {
    let boards = shape.boards().max(1);
    let board = 1 + i % boards;
    let slot = i / boards;
    let rows = match side {
        Side::A => GERMAN_ROWS,
        Side::B => RUSSIAN_ROWS,
    };
    let (home, away) = rows[slot / COLUMNS.len() % rows.len()];
    let column = COLUMNS[slot % COLUMNS.len()];
    (
        format!("{board}{column}{home}"),
        format!("{board}{column}{away}"),
    )
}

fn home(shape: Shape, side: Side, i: usize) -> String {
    places(shape, side, i).0
}

/// What a seat plays next on a real shape, and how far it is through its Movement Phase.
#[derive(Default)]
pub struct Mover {
    /// The next squad of each side to try moving.
    cursor: [usize; 2],
    /// Moves made in the current Movement Phase, and the Player Turn they were made in.
    moved: usize,
    turn: Option<(u16, u8)>,
    /// Moves the replica said the rules would refuse, which were not sent.
    pub skipped: u64,
}

impl Mover {
    /// The command `side`'s seat sends next on `shape`: in the ATTACKER's Movement Phase a
    /// squad's move of one hex, decided first on `replica` (the mover's own projection), until
    /// [`MOVES_PER_MPH`] were made; otherwise what moves play on (`rules::moving_on`).
    pub fn next(&mut self, shape: Shape, replica: &Game, replica_b: &Game) -> (Side, Command) {
        let (side, on) = protocol::rules::moving_on(replica);
        if shape == Shape::Toy
            || on != Command::Done
            || replica.clock.phase() != Phase::Movement
            || side != replica.attacker()
        {
            return (side, on);
        }
        let turn = (replica.clock.turn, replica.clock.player_turn);
        if self.turn != Some(turn) {
            self.turn = Some(turn);
            self.moved = 0;
        }
        let own = match side {
            Side::A => replica,
            Side::B => replica_b,
        };
        let s = usize::from(side == Side::B);
        // A bounded look for a squad that may move: every squad of the side at most once.
        for _ in 0..SQUADS_PER_SIDE {
            if self.moved >= MOVES_PER_MPH {
                break;
            }
            let i = self.cursor[s] % SQUADS_PER_SIDE;
            self.cursor[s] += 1;
            let Some(command) = move_of(shape, own, side, i) else {
                self.skipped += 1;
                continue;
            };
            if decide(own, side, &command, &mut ScriptedDice::default()).is_ok() {
                self.moved += 1;
                return (side, command);
            }
            self.skipped += 1;
        }
        (side, on)
    }
}

/// Squad `i` of `side` one hex from where it stands: to its forward hex from home, home from
/// anywhere else. `None` if the squad is gone from `game` (eliminated).
fn move_of(shape: Shape, game: &Game, side: Side, i: usize) -> Option<Command> {
    let prefix = if side == Side::A { "ge" } else { "ru" };
    let id = format!("{prefix}{i}");
    let unit = game.units.get(&id).filter(|u| !u.eliminated)?;
    let (home, away) = places(shape, side, i);
    let (home, away): (Hex, Hex) = (home.parse().ok()?, away.parse().ok()?);
    let to = if unit.hex == home { away } else { home };
    Some(Command::Move {
        units: vec![id],
        to,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::event::GameCreated;
    use protocol::{apply, Event, ReadScenario, Scenario};

    /// Each real shape's boards and scenario read as the server reads them (its boards
    /// directory), the game starts, and the generator's commands — moves and `done`s — are
    /// legal through two whole Game Turns, with the moves made in every Movement Phase.
    #[test]
    fn real_shapes_build_load_and_play_legally() {
        for shape in [Shape::OneBoard, Shape::ThreeBoards] {
            let dir = std::env::temp_dir().join(format!(
                "asl-load-shape-test-{}-{}",
                std::process::id(),
                shape.boards()
            ));
            shape.synthesise_boards(&dir).unwrap();
            let boards = server::operations::boards::open(&dir, None).unwrap();
            let text = shape.scenario();
            let scenario = Scenario::from_toml_on(&text, Some(&boards))
                .unwrap_or_else(|e| panic!("{shape:?}: {e}"));
            let counters = scenario.units.len() + scenario.weapons.len();
            assert_eq!(counters, COUNTERS, "{shape:?}");
            let mut game = Game::replay(&[Event::GameCreated(GameCreated { scenario })]).unwrap();
            let mut mover = Mover::default();
            let (mut moves, mut steps) = (0, 0);
            while game.clock.turn < 3 {
                let (side, command) = mover.next(shape, &game, &game);
                let events = decide(&game, side, &command, &mut ScriptedDice::default())
                    .unwrap_or_else(|v| panic!("{shape:?} step {steps}: {command:?}: {v}"));
                if matches!(command, Command::Move { .. }) {
                    moves += 1;
                }
                for event in &events {
                    apply(&mut game, event);
                }
                steps += 1;
            }
            // Two Game Turns: four Movement Phases, each with its moves.
            assert_eq!(moves, 4 * MOVES_PER_MPH, "{shape:?}");
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

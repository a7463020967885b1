//! The pure core of the ASL game server, shared by the server and every client.
//!
//! Hex geometry, the scenario model, the game state, commands and events, the rules state
//! machine ([`decide`] and [`apply`]) and the wire codecs. Nothing in this crate touches a
//! disk, a socket, a clock or the operating system's randomness: anything the rules need from
//! outside (a die roll, a player's choice) arrives inside a command or an event. That is what
//! lets the server, the CLI's offline `check` and a reviewer's replay reach the same state.
//!
//! The modules form five layers, and a module imports only from layers below it
//! (`ARCHITECTURE.md` draws the picture; Cargo checks the board, a crate of its own, and
//! `tests/layers.rs` the four layers in this one):
//!
//! ```text
//! edges   wire messages and codecs, the script language
//! record  the event chain, the dice scheme, referee, dispute, export, events in words
//! rules   decide per command, TEM, refusals
//! game    the state and apply, events, commands, phases and clock, logged dice
//! board   hex geometry, terrain table, scenario, VASL files (the `asl-board` crate)
//! ```
//!
//! The re-exports below are the crate's public face for its users (`protocol::wire`,
//! `protocol::Game`); code inside the crate names the layered path instead.

/// The board layer is its own crate (`asl-board`, in `protocol/board/`), so Cargo keeps it
/// from importing anything above it; it keeps its path here.
pub use board;
pub mod edges;
pub use game;
pub use record;
pub use rules;

pub use board::{hex, scenario, setup, terrain};
pub use edges::{script, wire};
pub use game::{command, dice, event, phase};
pub use record::{chain, dispute, export, fair_dice, preview, recheck, referee, signed, words};
pub use rules::{fire, tem, violation};

pub use board::hex::{Hex, Hexside};
pub use board::scenario::{Scenario, ScenarioError, Side};
pub use game::command::{Command, Outcome};
pub use game::dice::{DiceSource, ScriptedDice};
pub use game::event::Event;
pub use game::{apply, Game, StateHash, Viewer};
pub use rules::decide;
pub use rules::violation::{RuleViolation, ViolationKind};
pub use rules::wall_advantage::ReadScenario;

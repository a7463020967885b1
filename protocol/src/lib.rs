//! The pure core of the ASL game server, shared by the server and every client.
//!
//! Hex geometry, the scenario model, the game state, commands and events, the rules state
//! machine ([`decide`] and [`apply`]) and the wire codecs. Nothing in the core touches a
//! disk, a socket, a clock or the operating system's randomness: anything the rules need from
//! outside (a die roll, a player's choice) arrives inside a command or an event. That is what
//! lets the server, the CLI's offline `check` and a reviewer's replay reach the same state.
//!
//! The core is five crates, one per layer, each depending only on the ones below it, so Cargo
//! refuses an upward import (`ARCHITECTURE.md` draws the picture; `tests/crates.rs` reads the
//! order off the manifests):
//!
//! ```text
//! edges   wire messages and codecs, the script language (this crate, `asl-protocol`)
//! record  the event chain, the dice scheme, referee, dispute, export, events in words (`asl-record`)
//! rules   decide per command, TEM, refusals (`asl-rules`)
//! game    the state and apply, events, commands, phases and clock, logged dice (`asl-game`)
//! board   hex geometry, terrain table, scenario, VASL files (`asl-board`)
//! ```
//!
//! This crate is the façade: it re-exports the four below it under their layer's name
//! (`protocol::game::…`, `protocol::rules::…`) and the public face its users name
//! (`protocol::wire`, `protocol::Game`), so the server, the CLI and the tests depend on one
//! crate. Code inside the core names the layer's crate instead.

// The layers below the edges, each a crate of its own (`protocol/board`, `protocol/game`,
// `protocol/rules`, `protocol/record`): they keep their paths here.
pub use board;
pub use game;
pub use record;
pub use rules;

pub mod edges;

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

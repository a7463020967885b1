//! The pure core of the ASL game server, shared by the server and every client.
//!
//! Hex geometry, the scenario model, the game state, commands and events, the rules state
//! machine ([`decide`] and [`apply`]) and the wire codecs. Nothing in this crate touches a
//! disk, a socket, a clock or the operating system's randomness: anything the rules need from
//! outside (a die roll, a player's choice) arrives inside a command or an event. That is what
//! lets the server, the CLI's offline `check` and a reviewer's replay reach the same state.

pub mod chain;
pub mod command;
pub mod dice;
pub mod dispute;
pub mod event;
pub mod export;
pub mod fair_dice;
pub mod game;
pub mod hex;
pub mod phase;
pub mod referee;
pub mod rules;
pub mod scenario;
pub mod script;
pub mod tem;
pub mod terrain;
pub mod violation;
pub mod wire;

pub use command::{Command, Outcome};
pub use dice::{DiceSource, ScriptedDice};
pub use event::Event;
pub use game::{apply, Game, StateHash, Viewer};
pub use hex::{Hex, Hexside};
pub use rules::decide;
pub use scenario::{Scenario, ScenarioError, Side};
pub use violation::{RuleViolation, ViolationKind};

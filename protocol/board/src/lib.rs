//! The board: what a scenario is played on, before anyone moves. Hex geometry ([`hex`]), the
//! terrain table with its movement costs and the rules it cites ([`terrain`]), what a
//! scenario is made of ([`model`]), line of sight over a map ([`los`]), and the scenario read
//! from TOML and checked ([`scenario`]).
//!
//! The lowest layer of the core. Inside it, modules import in one direction, lowest first:
//! `words`, `terrain`, `toml_place`, `hex`; `model`; `vasl` (archives, codes, grids, what a board
//! shows, the board library); `geometry`; `los`; `setup`, `time_control`; `scenario`. A
//! module never names one after it (test modules aside); `tests/board_order.rs` checks it.

pub mod geometry;
pub mod half_squads;
pub mod hex;
pub mod los;
pub mod model;
pub mod scenario;
pub mod setup;
pub mod terrain;
pub mod time_control;
pub mod toml_place;
pub mod vasl;
pub mod words;

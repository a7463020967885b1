//! The board: what a scenario is played on, before anyone moves. Hex geometry ([`hex`]), the
//! terrain table with its movement costs and the rules it cites ([`terrain`]), and the
//! scenario model read from TOML ([`scenario`]), and line of sight over it ([`los`]).
//!
//! The lowest layer: it imports nothing else from this crate.

pub mod geometry;
pub mod hex;
pub mod los;
pub mod scenario;
pub mod setup;
pub mod terrain;
pub mod time_control;
pub mod toml_place;
pub mod vasl;

//! VASL's saved games (`.vsav`), read as bytes (the caller does the IO) and turned into a
//! scenario: the save's board layout (`geometry`), its pieces (`save`), each piece read as a
//! counter of a nationality (`counters`), and the scenario file with a report of what was
//! left out (`from_save`). A save is another player's file, so every reader here is
//! bounded and refuses what it cannot read, naming it. VASL (vasl-developers/vasl, LGPL) is
//! the reference for the format; this code is the project's own.
//!
//! A crate above the board's (`asl-board`), because only the CLI's `asl import` and
//! `asl new --from-save` read saves: the rules core never does, and keeps none of the save's
//! dependencies (xz).

pub mod counters;
pub mod from_save;
pub mod geometry;
pub mod save;

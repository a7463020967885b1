//! VASL's files, read as bytes (the caller does the IO): board archives (`bdNN`: metadata,
//! the terrain grid LOS is traced over, the image) and saved games (`.vsav`: the board
//! layout and the counters on it). VASL (vasl-developers/vasl, LGPL) is the reference for
//! these formats; this code is the project's own.

pub mod archive;
pub mod codes;
pub mod counters;
pub mod from_save;
pub mod geometry;
pub mod import;
pub mod library;
pub mod los;
pub mod map;
pub mod save;
/// Test support: VASL files synthesised for tests (`synth` feature).
#[cfg(any(test, feature = "synth"))]
pub mod synth;

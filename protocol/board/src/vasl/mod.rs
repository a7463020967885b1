//! VASL's board archives, read as bytes (the caller does the IO): `bdNN`'s metadata, the
//! terrain grid LOS is traced over, the image. VASL (vasl-developers/vasl, LGPL) is the
//! reference for the format; this code is the project's own. Saved games (`.vsav`) are read
//! by a crate of their own above this one (`asl-vasl-save`), which only the CLI needs.

pub mod archive;
pub mod codes;
pub mod import;
pub mod library;
pub mod los;
pub mod map;
/// Test support: VASL files synthesised for tests (`synth` feature).
#[cfg(any(test, feature = "synth"))]
pub mod synth;

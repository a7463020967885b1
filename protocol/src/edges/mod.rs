//! The edges: where the core meets the outside. The wire messages and their codecs
//! ([`wire`]) and the script language players and rules tests write ([`script`]).
//!
//! The top layer: it may import from every layer below, and nothing in this crate imports it.

mod position;
pub mod script;
pub mod wire;

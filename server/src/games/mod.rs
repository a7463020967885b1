//! The games: each one's session (the game with no IO in it), the task that does its IO,
//! the registry that loads and unloads them, which node serves which (`cluster`), the socket a
//! game shares with its players' connections to write their frames itself (`socket`), the
//! exactly-once command keys, the frame limits, and anonymous review of exports.

pub mod cluster;
pub mod command_keys;
pub mod frames;
pub mod registry;
pub(crate) mod review;
pub mod session;
pub mod socket;
pub mod task;

//! What faces the network: a player's or spectator's websocket connection, the HTTP edge
//! (spectator pages, boards, metrics) and the audience's shared frames.

pub mod audience;
pub(crate) mod connection;
pub mod web;

//! Every limit the server enforces, with its default and the reason for that number.
//! Each is a field so an operator can change it from the command line and tests can run at
//! and past the limit with small numbers.

use std::time::Duration;

/// Most connections the server holds at once. A connection costs a task, two buffers and a
/// socket; 10,000 keeps a small VM well inside its file-descriptor and memory budget.
pub const CONNECTIONS_MAX: usize = 10_000;

/// Most connections (players and spectators) joined to one game. Two players plus a large
/// tournament audience; past this, spectators should watch through a relay.
pub const CONNECTIONS_PER_GAME_MAX: usize = 2_500;

/// Messages queued for one connection before it counts as too slow and is cut off. A move
/// produces a handful of events; 256 is minutes of play for a reader that is merely slow,
/// while bounding what a reader that never reads can pin in memory.
pub const OUTBOUND_QUEUE_MAX: usize = 256;

/// Bytes the kernel may buffer for sending on one connection (SO_SNDBUF). Linux grows it up
/// to megabytes on its own; bounding it keeps a spectator's memory small and makes a reader
/// that stopped reading fall behind its queue within seconds rather than hours.
pub const SOCKET_SEND_BUFFER_BYTES: usize = 64 * 1024;

/// Requests queued for one game's writer task. Commands are decided in microseconds; a full
/// inbox means the game's storage is stalled, and callers get `LimitReached` instead of waiting.
pub const GAME_INBOX_MAX: usize = 1_024;

/// Commands one connection may send per second (a token bucket with this burst). A player
/// clicks a few times a second; a runaway script is slowed instead of starving other games.
pub const COMMANDS_PER_SECOND_MAX: u32 = 50;

/// Malformed frames tolerated on one connection before it is closed: a buggy client gets
/// readable errors, a hostile one does not get to spin the decoder forever.
pub const MALFORMED_FRAMES_MAX: u32 = 16;

/// A connection that sends nothing (not even a websocket ping) for this long is closed.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// Most games one server creates and keeps; a scenario's log is small, but not free.
pub const GAMES_MAX: usize = 100_000;

/// Bytes a connection's websocket reads from its socket at once. tungstenite zero-fills this
/// much before every read, so its 128 KiB default spent ~40% of the server's CPU under load
/// and kept 128 KiB per connection; client frames are tens of bytes, and a larger frame (a
/// scenario) is still read whole, in more reads. Not a limit: `FRAME_BYTES_MAX` is.
pub const READ_BUFFER_BYTES: usize = 4 * 1024;

#[derive(Clone, Debug)]
pub struct Config {
    pub connections_max: usize,
    pub connections_per_game_max: usize,
    pub outbound_queue_max: usize,
    pub socket_send_buffer_bytes: usize,
    pub game_inbox_max: usize,
    pub commands_per_second_max: u32,
    pub malformed_frames_max: u32,
    pub idle_timeout: Duration,
    pub games_max: usize,
    /// When set, creating a game needs this token (for public deployments).
    pub admin_token: Option<String>,
    /// The key the server signs heads with (`docs/review.md`): loaded from the data directory
    /// by `asl-server`; a fresh one for each `Config::default()` (tests, tools).
    pub signing_key: std::sync::Arc<protocol::record::signed::ServerSigningKey>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            connections_max: CONNECTIONS_MAX,
            connections_per_game_max: CONNECTIONS_PER_GAME_MAX,
            outbound_queue_max: OUTBOUND_QUEUE_MAX,
            socket_send_buffer_bytes: SOCKET_SEND_BUFFER_BYTES,
            game_inbox_max: GAME_INBOX_MAX,
            commands_per_second_max: COMMANDS_PER_SECOND_MAX,
            malformed_frames_max: MALFORMED_FRAMES_MAX,
            idle_timeout: IDLE_TIMEOUT,
            games_max: GAMES_MAX,
            admin_token: None,
            signing_key: std::sync::Arc::new(crate::signing::fresh()),
        }
    }
}

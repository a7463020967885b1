//! Every limit the server enforces, with its default and the reason for that number.
//! Each is a field so an operator can change it from the command line and tests can run at
//! and past the limit with small numbers.

use std::time::Duration;

/// Most connections the server holds at once. A connection costs a task, two buffers and a
/// socket; 10,000 keeps a small VM well inside its file-descriptor and memory budget.
pub const CONNECTIONS_MAX: usize = 10_000;

/// Most spectators joined to one game. A large tournament audience; past this, spectators
/// should watch through a relay. Seats are not counted: a game's two players can always join.
pub const SPECTATORS_PER_GAME_MAX: usize = 2_500;

/// Most spectators joined to any game on the server. Below [`CONNECTIONS_MAX`] so that an
/// audience, however large, always leaves room for players to connect.
pub const SPECTATORS_MAX: usize = 9_000;

/// Connections one side's seat may hold in one game at once: a player with a second window or
/// reconnecting before the old socket timed out, not a crowd sharing a player's token.
pub const SEAT_CONNECTIONS_MAX: usize = 4;

/// Connections one IP address may hold at once. A household or office behind one NAT watching
/// a tournament stays well under it; one host holding every slot does not get to.
pub const CONNECTIONS_PER_IP_MAX: usize = 256;

/// How long a new connection has to complete its HTTP request head, or its websocket
/// handshake. A browser or client does both in one round trip; a socket that sends nothing, or
/// trickles bytes, is dropped instead of holding a slot.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

/// How long one send to a client may take. A reader that has stopped reading fills its socket
/// buffer, and its send then waits for ever: past this it is closed.
pub const SEND_TIMEOUT: Duration = Duration::from_secs(10);

/// How long one send to a client may take once shutdown has begun, a send already waiting
/// then included: a client that stopped reading is given this for the rest of what the
/// connection sends (its last frames, the shutdown notice, the close frame), so it cannot hold
/// shutdown for `SEND_TIMEOUT` a send, and shutdown takes little longer than this whatever
/// its clients do.
pub const SHUTDOWN_SEND_TIMEOUT: Duration = Duration::from_secs(1);

/// How long shutdown waits for connections to say goodbye and games to stop before it drops
/// whatever is left. Every acknowledged event is already durable, so this loses nothing.
pub const SHUTDOWN_DEADLINE: Duration = Duration::from_secs(10);

/// Reads (`get_state`, `get_state_at`, `get_log`, `get_record`, `get_export`) one connection
/// may send per second. The spectator page asks a few at a time when scrubbing through history;
/// each may replay a game, so a loop of them is slowed rather than served.
pub const READS_PER_SECOND_MAX: u32 = 5;

/// Reads the audience of one game may have answered per second, all spectators together (burst
/// twice that). Each may replay and project a position; past this the game answers
/// `limit_reached` at once, so however large the audience, the game task's time goes to the
/// players first.
pub const AUDIENCE_READS_PER_SECOND_MAX: u32 = 200;

/// Pings one connection may send per second. Keepalive needs one a minute.
pub const PINGS_PER_SECOND_MAX: u32 = 5;

/// Attempts with a token or an expensive payload (`join`, `create_game`, `review`) one
/// connection may make per second. A client makes one; a guesser gets one a second.
pub const ATTEMPTS_PER_SECOND_MAX: u32 = 2;

/// Exports open for review at once on the whole server. Verifying an export replays the whole
/// game (up to a second of CPU and a few MB for a long one), and review needs no token, so the
/// number open at once is what bounds that work and memory.
pub const REVIEWS_MAX: usize = 8;

/// Bytes of export files under review at once on the whole server, each charged its file's
/// size from before it is verified until its connection ends. A review keeps about its file's
/// size in memory (`games::review`: the decoded events, their hashes and words), so this is
/// what bounds the memory anonymous reviews hold, where [`REVIEWS_MAX`] alone would let eight
/// files of a whole frame each. Half of that: a few exports of the largest games at once, or
/// [`REVIEWS_MAX`] of ordinary ones (tens of KB).
pub const REVIEW_BYTES_MAX: usize = 4 * 1024 * 1024;

/// VASL saves read at once on the whole server (`import_save`). Reading a hostile save within
/// the save reader's own limits (a 64 MiB `savedGame` unzipped or unpacked from xz, then up to
/// `UNESCAPED_BYTES_MAX`, 128 MB, of VASSAL's nested escapes undone) holds up to some 300 MB
/// while it is read, from a frame of a few KB, and each connection that may create games could
/// hold such a read. The number at once is what bounds that memory: a read takes its place
/// before the save is read and gives it back only when the read ends, whether or not its
/// connection is still there.
pub const IMPORTS_MAX: usize = 2;

/// Games one IP address may create per hour when creation needs no admin token.
pub const CREATES_PER_IP_PER_HOUR_MAX: u32 = 20;

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
/// much before every read, the one that finds the socket empty after a frame included, so its
/// 128 KiB default spent ~40% of the server's CPU under load and kept 128 KiB per connection;
/// at 4 KiB the two fills of a command's frame were still ~5% of the instructions a move costs
/// the whole server (issue 55). Client frames are tens to hundreds of bytes (a join with its
/// receipt, a kilobyte or two), and a larger frame (a scenario) is still read whole, in more
/// reads. Not a limit: `FRAME_BYTES_MAX` is.
pub const READ_BUFFER_BYTES: usize = 1024;

/// Accepted commands whose client keys one seat of one game remembers (`crate::games::command_keys`). A
/// re-sent command is one a client lost the answer to, or a script run again from its start;
/// 100,000 is more commands than any one side gives in a long campaign game, so every re-sent
/// command of a game is recognised, at about 40 bytes a key.
pub const COMMAND_KEYS_PER_SEAT_MAX: usize = 100_000;

/// Games whose writer task (the replayed position, the per-viewer streams, checkpoints) is
/// kept in memory at once. A game of a typical scenario holds a few hundred KB; one at the
/// scenario limits a few MB, so 1,000 bounds a server's games to a few GB at worst. A game
/// nobody is connected to is unloaded to make room (the least recently joined first); when
/// every loaded game has someone connected, loading or creating one more is refused with
/// `limit_reached`. Stored games are not counted: they cost disk, not memory.
pub const LOADED_GAMES_MAX: usize = 1_000;

/// How long a loaded game with no connections and no requests stays in memory before it is
/// unloaded. It is replayed from its log on the next join (a few milliseconds for a long
/// game), so this only spares reloading a game whose players stepped away for a moment.
pub const GAME_UNLOAD_AFTER_IDLE: Duration = Duration::from_secs(10 * 60);

/// Targets (webhooks and e-mail addresses) one seat may register for notices
/// (`crate::notify`). A player with a phone, a mailbox and a chat hook is served; a seat
/// cannot make the server post each notice to a crowd.
pub const NOTIFY_TARGETS_PER_SEAT_MAX: usize = 4;

/// Notices delivered to one seat per hour. A hand-over in a live game comes every few
/// minutes, but a player taking part live is connected and sent none; past this a seat's
/// next notice waits for the hour to turn, so no opponent can make the server flood a player.
pub const NOTIFY_SENDS_PER_HOUR_MAX: u32 = 20;

/// How long a seat's notice waits, with nothing newer for that seat, before it goes: several
/// hand-overs in quick succession (a WA chance answered, then the turn handed over) become one
/// message, and a player who comes back at once is sent none.
pub const NOTIFY_QUIET: Duration = Duration::from_secs(60);

/// Tries of one notice to one target before it is given up (webhook or relay down).
pub const NOTIFY_TRIES_MAX: u32 = 6;

/// The pause before a notice's second try, doubled before each later one: with six tries,
/// about a minute from the first to the last.
pub const NOTIFY_RETRY_FIRST: Duration = Duration::from_secs(2);

/// Notices queued from the game tasks to the notifier. A full queue loses nothing (the notice
/// is in the store's outbox, found by the next look, [`NOTIFY_OUTBOX_RESCAN`]) and never makes
/// a game task wait.
pub const NOTIFY_QUEUE_MAX: usize = 1_024;

/// How often the notifier looks in the outbox for notices it was not handed (a full queue).
pub const NOTIFY_OUTBOX_RESCAN: Duration = Duration::from_secs(60);

/// A side's clock below this owes the seat a `clock_low` notice (`notify::Watch::clock_low`).
pub const NOTIFY_CLOCK_LOW_BELOW: Duration = Duration::from_secs(24 * 3600);

/// The operator's SMTP relay for e-mail notices (`--smtp-relay`, `--smtp-from`,
/// `--smtp-starttls`; `crate::notify`).
#[derive(Clone, Debug)]
pub struct SmtpRelay {
    pub host: String,
    pub port: u16,
    /// The sender address of every notice.
    pub from: String,
    /// Upgrade the connection with STARTTLS (and refuse to send without it); off, the relay is
    /// spoken to in plain text, for a relay on the same host or network.
    pub starttls: bool,
}

#[derive(Clone, Debug)]
pub struct Config {
    pub connections_max: usize,
    pub spectators_per_game_max: usize,
    pub spectators_max: usize,
    pub seat_connections_max: usize,
    pub connections_per_ip_max: usize,
    pub handshake_timeout: Duration,
    pub send_timeout: Duration,
    pub shutdown_deadline: Duration,
    pub reads_per_second_max: u32,
    pub audience_reads_per_second_max: u32,
    pub pings_per_second_max: u32,
    pub attempts_per_second_max: u32,
    pub reviews_max: usize,
    /// [`REVIEW_BYTES_MAX`].
    pub review_bytes_max: usize,
    /// [`IMPORTS_MAX`].
    pub imports_max: usize,
    pub creates_per_ip_per_hour_max: u32,
    /// How long a reader with frames waiting may write nothing before it is cut off
    /// ([`SLOW_READER_GRACE`]).
    pub slow_reader_grace: Duration,
    pub outbound_queue_max: usize,
    pub socket_send_buffer_bytes: usize,
    pub game_inbox_max: usize,
    pub commands_per_second_max: u32,
    pub malformed_frames_max: u32,
    pub idle_timeout: Duration,
    pub games_max: usize,
    /// Games in memory at once ([`LOADED_GAMES_MAX`]).
    pub loaded_games_max: usize,
    /// Idle time after which a game nobody is connected to is unloaded
    /// ([`GAME_UNLOAD_AFTER_IDLE`]).
    pub game_unload_after_idle: Duration,
    /// When set, creating a game needs this token (for public deployments).
    pub admin_token: Option<String>,
    /// When set, `/metrics` is served to a request bearing this token
    /// (`Authorization: Bearer …`), from any address. When unset, only to loopback. The
    /// counters move as a game's hidden units act (commands, events, receipts), so a player
    /// reading them could follow what his opponent's concealed units do.
    pub metrics_token: Option<String>,
    /// Where players and spectators reach this server (`wss://HOST`), when not at the listen
    /// address: sent with each new game for the links its creator is shown.
    pub public_url: Option<String>,
    /// Whether anyone may create games without the admin token. `None` (the default) decides
    /// from the listening address: open on loopback, closed elsewhere, so a server put on a
    /// public address without a token does not hand out games to everyone.
    pub open_creation: Option<bool>,
    /// Origins (`scheme://host[:port]`) whose pages may open websockets besides the server's
    /// own. A browser sends `Origin`; any other origin is refused at the handshake, so a page
    /// elsewhere cannot drive a visitor's browser to create games or send commands.
    pub allowed_origins: Vec<String>,
    /// The key the server signs heads with (`docs/review.md`): loaded from the data directory
    /// by `asl-server`; a fresh one for each `Config::default()` (tests, tools).
    pub signing_key: std::sync::Arc<protocol::record::signed::ServerSigningKey>,
    /// This server node's name (`--node-id`), given as the owner of the games it serves.
    pub node_id: Option<String>,
    /// The operator's VASL board archives (`--boards DIR`): scenarios on real boards
    /// (`[map] boards`) are refused without them.
    pub boards: Option<std::sync::Arc<protocol::board::vasl::library::Boards>>,
    /// Whether webhooks may point at loopback, private and link-local addresses
    /// (`--notify-allow-private`): off, a player could make the server probe its own network.
    pub notify_allow_private: bool,
    /// [`NOTIFY_QUIET`] (`--notify-quiet-s`).
    pub notify_quiet: Duration,
    /// [`NOTIFY_TARGETS_PER_SEAT_MAX`].
    pub notify_targets_per_seat_max: usize,
    /// [`NOTIFY_SENDS_PER_HOUR_MAX`].
    pub notify_sends_per_hour_max: u32,
    /// [`NOTIFY_TRIES_MAX`].
    pub notify_tries_max: u32,
    /// [`NOTIFY_RETRY_FIRST`].
    pub notify_retry_first: Duration,
    /// [`NOTIFY_QUEUE_MAX`].
    pub notify_queue_max: usize,
    /// [`NOTIFY_OUTBOX_RESCAN`].
    pub notify_outbox_rescan: Duration,
    /// [`NOTIFY_CLOCK_LOW_BELOW`].
    pub notify_clock_low_below: Duration,
    /// The relay e-mail notices go through; without one, e-mail targets are refused.
    pub smtp: Option<SmtpRelay>,
    /// The time the server gives the rules with every command and charges the players'
    /// clocks by (`crate::operations::clock`): the system's, or one a test moves itself.
    pub time: crate::operations::clock::TimeSource,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            connections_max: CONNECTIONS_MAX,
            spectators_per_game_max: SPECTATORS_PER_GAME_MAX,
            spectators_max: SPECTATORS_MAX,
            seat_connections_max: SEAT_CONNECTIONS_MAX,
            connections_per_ip_max: CONNECTIONS_PER_IP_MAX,
            handshake_timeout: HANDSHAKE_TIMEOUT,
            send_timeout: SEND_TIMEOUT,
            shutdown_deadline: SHUTDOWN_DEADLINE,
            reads_per_second_max: READS_PER_SECOND_MAX,
            audience_reads_per_second_max: AUDIENCE_READS_PER_SECOND_MAX,
            pings_per_second_max: PINGS_PER_SECOND_MAX,
            attempts_per_second_max: ATTEMPTS_PER_SECOND_MAX,
            reviews_max: REVIEWS_MAX,
            review_bytes_max: REVIEW_BYTES_MAX,
            imports_max: IMPORTS_MAX,
            creates_per_ip_per_hour_max: CREATES_PER_IP_PER_HOUR_MAX,
            slow_reader_grace: SLOW_READER_GRACE,
            outbound_queue_max: OUTBOUND_QUEUE_MAX,
            socket_send_buffer_bytes: SOCKET_SEND_BUFFER_BYTES,
            game_inbox_max: GAME_INBOX_MAX,
            commands_per_second_max: COMMANDS_PER_SECOND_MAX,
            malformed_frames_max: MALFORMED_FRAMES_MAX,
            idle_timeout: IDLE_TIMEOUT,
            games_max: GAMES_MAX,
            loaded_games_max: LOADED_GAMES_MAX,
            game_unload_after_idle: GAME_UNLOAD_AFTER_IDLE,
            admin_token: None,
            metrics_token: None,
            public_url: None,
            open_creation: None,
            allowed_origins: vec![],
            signing_key: std::sync::Arc::new(fresh_signing_key()),
            node_id: None,
            boards: None,
            notify_allow_private: false,
            notify_quiet: NOTIFY_QUIET,
            notify_targets_per_seat_max: NOTIFY_TARGETS_PER_SEAT_MAX,
            notify_sends_per_hour_max: NOTIFY_SENDS_PER_HOUR_MAX,
            notify_tries_max: NOTIFY_TRIES_MAX,
            notify_retry_first: NOTIFY_RETRY_FIRST,
            notify_queue_max: NOTIFY_QUEUE_MAX,
            notify_outbox_rescan: NOTIFY_OUTBOX_RESCAN,
            notify_clock_low_below: NOTIFY_CLOCK_LOW_BELOW,
            smtp: None,
            time: crate::operations::clock::TimeSource::system(),
        }
    }
}

/// How long a reader whose queue is full may go without writing a single frame before it is
/// cut off. Judging by progress, not by how full its queue is at one instant, is what keeps a
/// watcher that is merely not scheduled for a moment (a loaded machine) from being cut off with
/// the one that has stopped reading.
pub const SLOW_READER_GRACE: Duration = Duration::from_secs(10);

/// A signing key drawn from the operating system, for a server started without one (tests):
/// what `signing::fresh` draws, drawn here so the configuration needs nothing above it.
fn fresh_signing_key() -> protocol::record::signed::ServerSigningKey {
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret).expect("the operating system provides randomness");
    protocol::record::signed::ServerSigningKey::from_bytes(&secret)
}

/// The websocket settings every connection gets: frames and messages capped at
/// [`FRAME_BYTES_MAX`](protocol::wire::FRAME_BYTES_MAX), so an oversized frame is refused by
/// the reader before it is buffered, and reads of [`READ_BUFFER_BYTES`].
pub fn websocket_config() -> tokio_tungstenite::tungstenite::protocol::WebSocketConfig {
    tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
        .read_buffer_size(READ_BUFFER_BYTES)
        .max_message_size(Some(protocol::wire::FRAME_BYTES_MAX))
        .max_frame_size(Some(protocol::wire::FRAME_BYTES_MAX))
}

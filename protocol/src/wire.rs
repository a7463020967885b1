//! Messages between clients and the server, and their two codecs: JSON in text frames,
//! bincode 2 (standard config) in binary frames — the same schema in both.
//!
//! Enums are externally tagged and no field is skipped, because bincode cannot read the
//! self-describing forms serde offers JSON; one schema that both codecs read is worth more
//! than a prettier JSON.

use crate::command::Command;
use crate::event::Event;
use crate::game::{Game, StateHash, Viewer};
use crate::scenario::SideSpec;
use crate::violation::RuleViolation;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// The websocket path of this version of the protocol. A client of another version is refused
/// at the handshake instead of misreading frames.
pub const WIRE_PATH: &str = "/v1";

/// Largest frame either side sends or accepts, in bytes. A scenario file is the largest thing a
/// client sends (limit [`SCENARIO_BYTES_MAX`](crate::scenario::SCENARIO_BYTES_MAX)); a full
/// state snapshot of a big scenario is the largest the server sends.
pub const FRAME_BYTES_MAX: usize = 1024 * 1024;

/// Most events one `GetLog` reply carries; a client pages through longer logs.
pub const LOG_PAGE_EVENTS_MAX: u64 = 1_000;

/// A game's id: 32 lowercase hex digits, chosen by the server.
pub type GameId = String;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientMessage {
    /// Create a game from a scenario (TOML text). `admin_token` is needed only when the server
    /// restricts game creation.
    CreateGame {
        scenario: String,
        admin_token: Option<String>,
    },
    /// Join a game with a side's token or the spectator token. `since`: the version the client
    /// already holds; it then receives the events after it instead of a full snapshot.
    Join {
        game: GameId,
        token: String,
        since: Option<u64>,
    },
    /// A command for the joined side; `id` is the client's own, echoed in the one reply.
    Command {
        id: u64,
        command: Command,
    },
    /// Ask for the current state snapshot (this viewer's projection).
    GetState,
    /// Ask for events `from..` (at most [`LOG_PAGE_EVENTS_MAX`]), as this viewer may see them.
    GetLog {
        from: u64,
    },
    Ping {
        nonce: u64,
    },
}

/// One event in a viewer's stream. `event` is `None` when the viewer may not see it: the
/// version still advances, so gaps never appear and nothing about the contents leaks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sequenced {
    /// The game's version after this event (the first event of a game is 1).
    pub seq: u64,
    pub event: Option<Event>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    pub side_a: String,
    pub side_b: String,
    pub spectator: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerMessage {
    /// The game exists; the tokens are shown once, to the creator, and never again.
    Created {
        game: GameId,
        sides: [SideSpec; 2],
        tokens: Tokens,
    },
    /// Joined as `viewer`. `state` is the viewer's projection at `version`, or `None` when the
    /// client asked to resume and the missed events follow instead.
    Joined {
        game: GameId,
        viewer: Viewer,
        version: u64,
        state: Option<Box<Game>>,
        state_hash: StateHash,
    },
    /// The command `id` was accepted; these are its events (as this viewer sees them).
    Accepted {
        id: u64,
        version: u64,
        events: Vec<Sequenced>,
    },
    /// The command `id` was refused; nothing changed.
    Refused {
        id: u64,
        version: u64,
        violation: RuleViolation,
    },
    /// Another participant's command produced this event.
    Event(Sequenced),
    State {
        version: u64,
        state_hash: StateHash,
        state: Box<Game>,
    },
    Log {
        version: u64,
        events: Vec<Sequenced>,
    },
    Pong {
        nonce: u64,
    },
    /// A request that could not be served, with what to do about it.
    Error {
        code: ErrorCode,
        message: String,
    },
}

/// Why a request failed outside the rules. Documented in `docs/protocol.md` with the policy
/// (connection kept or closed) for each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The frame was not a message of this protocol.
    Malformed,
    /// The frame was larger than [`FRAME_BYTES_MAX`].
    TooLarge,
    /// No game has that id.
    UnknownGame,
    /// The token is not one of the game's.
    BadToken,
    /// The connection has not joined a game yet, or has joined one already.
    NotJoined,
    AlreadyJoined,
    /// A spectator sent a command.
    ReadOnly,
    /// The scenario was refused.
    BadScenario,
    /// Creating games needs the admin token on this server.
    CreationRestricted,
    /// A limit was reached (connections, games, commands per second); the message names it.
    LimitReached,
    /// The game cannot be served (its log is damaged); other games are unaffected.
    GameUnavailable,
    /// The server failed to store the event; nothing was applied.
    Storage,
    ShuttingDown,
}

#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("frame of {0} bytes is over the {FRAME_BYTES_MAX}-byte limit")]
    TooLarge(usize),
    #[error("not a message of this protocol: {0}")]
    Malformed(String),
}

fn bincode_config() -> impl bincode::config::Config {
    bincode::config::standard().with_limit::<FRAME_BYTES_MAX>()
}

pub fn to_json<T: Serialize>(message: &T) -> String {
    serde_json::to_string(message).expect("messages always encode")
}

pub fn from_json<T: DeserializeOwned>(text: &str) -> Result<T, WireError> {
    if text.len() > FRAME_BYTES_MAX {
        return Err(WireError::TooLarge(text.len()));
    }
    serde_json::from_str(text).map_err(|e| WireError::Malformed(e.to_string()))
}

pub fn to_bincode<T: Serialize>(message: &T) -> Vec<u8> {
    bincode::serde::encode_to_vec(message, bincode::config::standard())
        .expect("messages always encode")
}

/// Reads a bincode frame. The decoder's allocation limit is the frame limit, so a forged
/// length prefix cannot make it reserve more memory than a real frame could need, and trailing
/// bytes are an error rather than silently ignored.
pub fn from_bincode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, WireError> {
    if bytes.len() > FRAME_BYTES_MAX {
        return Err(WireError::TooLarge(bytes.len()));
    }
    let (message, read) = bincode::serde::decode_from_slice(bytes, bincode_config())
        .map_err(|e| WireError::Malformed(e.to_string()))?;
    if read != bytes.len() {
        return Err(WireError::Malformed(format!(
            "{} bytes left over after the message",
            bytes.len() - read
        )));
    }
    Ok(message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::Outcome;

    fn round_trip<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(m: &T) {
        assert_eq!(&from_json::<T>(&to_json(m)).unwrap(), m);
        assert_eq!(&from_bincode::<T>(&to_bincode(m)).unwrap(), m);
    }

    #[test]
    fn client_messages_round_trip_in_both_codecs() {
        round_trip(&ClientMessage::Command {
            id: 7,
            command: Command::Adjudicate {
                unit: "467a".into(),
                outcome: Outcome::Break,
                note: "IFT".into(),
            },
        });
        round_trip(&ClientMessage::Join {
            game: "g".into(),
            token: "t".into(),
            since: Some(4),
        });
        round_trip(&ClientMessage::CreateGame {
            scenario: "x".into(),
            admin_token: None,
        });
    }

    #[test]
    fn garbage_is_a_typed_error() {
        assert!(matches!(
            from_json::<ClientMessage>("{\"nope\":1}"),
            Err(WireError::Malformed(_))
        ));
        assert!(matches!(
            from_bincode::<ClientMessage>(&[200, 1, 2, 3]),
            Err(WireError::Malformed(_))
        ));
        let mut frame = to_bincode(&ClientMessage::GetState);
        frame.push(0);
        assert!(matches!(
            from_bincode::<ClientMessage>(&frame),
            Err(WireError::Malformed(_))
        ));
    }

    #[test]
    fn oversized_frames_are_refused_before_decoding() {
        let big = "x".repeat(FRAME_BYTES_MAX + 1);
        assert!(matches!(
            from_json::<ClientMessage>(&big),
            Err(WireError::TooLarge(_))
        ));
        assert!(matches!(
            from_bincode::<ClientMessage>(big.as_bytes()),
            Err(WireError::TooLarge(_))
        ));
    }

    /// A length prefix claiming a huge string must not make the decoder allocate it.
    #[test]
    fn forged_length_prefix_is_refused() {
        // Variant 0 (CreateGame), then a string length of u64::MAX (varint 253 + 8 bytes).
        let mut frame = vec![0u8, 253];
        frame.extend_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(
            from_bincode::<ClientMessage>(&frame),
            Err(WireError::Malformed(_))
        ));
    }
}

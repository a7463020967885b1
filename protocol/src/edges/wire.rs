//! Messages between clients and the server, and their two codecs: JSON in text frames,
//! bincode 2 (standard config) in binary frames — the same schema in both.
//!
//! Enums are externally tagged and no field is skipped, because bincode cannot read the
//! self-describing forms serde offers JSON; one schema that both codecs read is worth more
//! than a prettier JSON.

pub use super::position::{Names, Position, PositionError, POSITION_FORMAT};
use board::hex::Hex;
use board::scenario::SideSpec;
use game::command::Command;
use game::event::Event;
use game::view::Viewed;
use game::{Game, StateHash, Viewer};
use record::chain::LogHash;
use record::fair_dice::Commitment;
use record::signed::SignedHead;
use record::stream::StreamHash;
use rules::violation::RuleViolation;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The websocket path of this version of the protocol. A client of another version is refused
/// at the handshake instead of misreading frames.
pub const WIRE_PATH: &str = "/v1";

/// Where the server serves the spectator page, on the same host and port over HTTP. The game
/// and the spectator token follow in the link's fragment (`/watch#game=…&token=…`), which a
/// browser never sends, so no server or proxy log ever records the token.
pub const WATCH_PATH: &str = "/watch";

/// Whether `url` may be a server's public address (`created`'s `public_url`): `asl new` prints
/// it inside commands to paste into a shell (`asl play --server URL …`) and links, so it is
/// written in a URL's letters, digits and `-_.:/[]%~@+,` only — no space, quote, `;`, `&`, `$`
/// or control character — within [`PUBLIC_URL_BYTES_MAX`] bytes. The server refuses any other
/// `--public-url` at start, and the client any other `created`.
pub fn is_public_url(url: &str) -> bool {
    !url.is_empty()
        && url.len() <= PUBLIC_URL_BYTES_MAX
        && url
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:/[]%~@+,".contains(&b))
}

/// Longest public address a server may give ([`is_public_url`]).
pub const PUBLIC_URL_BYTES_MAX: usize = 256;

/// Largest frame either side sends or accepts, in bytes. A scenario file is the largest thing a
/// client sends (limit [`SCENARIO_BYTES_MAX`](board::scenario::SCENARIO_BYTES_MAX)); a full
/// state snapshot of a big scenario is the largest the server sends.
pub const FRAME_BYTES_MAX: usize = 1024 * 1024;

// The record's envelope limit is derived from the largest frame (see its doc comment); the
// record sits below the wire and cannot name this constant, so the relation is held here.
const _: () = assert!(record::chain::ENVELOPE_BYTES_MAX == 2 * FRAME_BYTES_MAX);

/// Most events one `GetLog` reply carries; a client pages through longer logs.
pub const LOG_PAGE_EVENTS_MAX: u64 = 1_000;

/// Most envelope bytes one `Export` page carries (hex doubles them on the wire): with the
/// page's other fields well inside [`FRAME_BYTES_MAX`]. A page holds at least one envelope, and
/// the largest envelope (an undo carrying a whole position) is smaller than the snapshot a
/// `joined` frame carries as JSON.
pub const EXPORT_PAGE_BYTES_MAX: usize = 384 * 1024;

/// Most receipts one `Review` may carry: a browser keeps one per seat of a game (two players
/// and a spectator), with room for a few kept under an older key.
pub const REVIEW_RECEIPTS_MAX: usize = 16;

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
    /// `key`, when given, makes the command exactly-once: sent again with a key the game
    /// accepted before, for the same seat, it is answered with the events it made then
    /// instead of being decided again (`docs/protocol.md`). JSON may leave it out.
    Command {
        id: u64,
        command: Command,
        #[serde(default)]
        key: Option<u64>,
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
    /// Ask for the state as it stood at `version`, this viewer's projection, rebuilt from the
    /// log: an earlier position to review. Answered with `State`; a version past the head gives
    /// the head's state, version 0 the state after `GameCreated`.
    GetStateAt {
        version: u64,
    },
    /// Ask for the game record `from..` (at most [`LOG_PAGE_EVENTS_MAX`] entries): each event
    /// as this viewer may see it, in words, with when it happened. For clients that do not
    /// carry the rules to describe events themselves, such as the spectator page.
    GetRecord {
        from: u64,
    },
    /// Ask for the game's log as stored, envelopes `from..` (at most
    /// [`EXPORT_PAGE_BYTES_MAX`] bytes a page), to write an export file (`docs/review.md`).
    /// Only once the game is over: until then the log holds what one side may not know.
    GetExport {
        from: u64,
    },
    /// Open an export file (`record::export`, as `asl export` writes it) for review on this
    /// connection instead of joining a game: the server verifies it end to end and answers
    /// `Reviewing`, then `get_state`, `get_state_at`, `get_record` and `get_log` read the whole
    /// game from it. An export fits one frame up to [`FRAME_BYTES_MAX`]; `asl verify` reads
    /// any size.
    Review {
        export: String,
        /// The server key the client trusts (64 lowercase hex digits), as `asl verify
        /// --server-key` takes it: the file's signed head must be signed with it, and the
        /// report says so. Without it the export is still checked under this server's own key.
        #[serde(default)]
        server_key: Option<String>,
        /// Receipts the client kept during play (at most [`REVIEW_RECEIPTS_MAX`]), checked
        /// against the file as `asl verify --receipts` checks them, under `server_key`, which
        /// they need: any that does not hold refuses the export (`bad_export`), naming it.
        #[serde(default)]
        receipts: Vec<SignedHead>,
    },
    /// Ask whether there is a LOS from one hex to another (hex centres at ground level, no
    /// units: nothing hidden is consulted), answered with `Los`. Changes nothing.
    Los {
        from: Hex,
        to: Hex,
    },
    /// Ask what `command` would do for the joined side, without doing it: answered with
    /// `Previewed`, decided by the same rules as the command against the game as it stands,
    /// and nothing is appended, applied or rolled (`record::preview`). A read: it
    /// counts against the connection's read budget, not its commands.
    Preview {
        id: u64,
        command: Command,
    },
    /// Join as [`ClientMessage::Join`] does, resuming after the viewer's event the receipt
    /// names (`record::receipt`): the signed head of this viewer's own stream it was last
    /// sent. A server whose log for that viewer is behind the receipt, or reaches its sequence
    /// with another hash, was rolled back: it says so (`rolled_back`) and marks the game,
    /// instead of serving what it has as if nothing were missing.
    JoinWithReceipt {
        game: GameId,
        token: String,
        receipt: SignedHead,
        /// Send a whole snapshot, as a join without `since` does, instead of the events after
        /// the receipt (once the receipt is checked).
        #[serde(default)]
        snapshot: bool,
    },
    /// Where the server tells this seat that the game waits on it (its turn, a prompt, an
    /// undo or end asked, the game over: `docs/notifications.md`), set with the seat's token
    /// (a spectator token is refused). Needs no join; answered with `Notifying`.
    Notify {
        game: GameId,
        token: String,
        target: NotifyTarget,
    },
    /// Make a VASL saved game (`.vsav`, its bytes in standard base64) the scenario a new game
    /// starts from, as `asl new SAVE.vsav` does (`vasl_save::from_save::new_game_from_save`,
    /// docs/vasl-import.md), `name` being the file's stem: answered with `SaveImported`, whose
    /// scenario the client then sends as `CreateGame`. Nothing is created or stored. The
    /// save is read as hostile bytes within its limits; `admin_token` as for `CreateGame`.
    ImportSave {
        save: String,
        name: String,
        admin_token: Option<String>,
    },
}

/// A seat's notification target (`ClientMessage::Notify`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NotifyTarget {
    /// A JSON POST to this `http`/`https` URL, signed with the seat's secret.
    Webhook { url: String },
    /// An e-mail to this address through the operator's SMTP relay.
    Email { address: String },
    /// No more notices: every target of the seat is removed, with its secret.
    Off,
    /// The code the server e-mailed to an address this seat registered: only then does the
    /// address get notices, so nobody is sent them who did not ask.
    Confirm { code: String },
}

/// One event of a viewer's own stream (`record::stream`): the viewer's sequence number,
/// the event as the viewer may know it, and the stream's running hash after it. Events the
/// viewer may not know are absent, not announced: numbers never skip, and nothing marks that
/// something happened unseen.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sequenced {
    /// The number of this event in the viewer's stream (its first event, `GameCreated`, is 1).
    pub seq: u64,
    /// Shared with the viewer's stream that keeps it (`record::stream::StreamEntry`): a frame
    /// made of a stream's event holds it, not a copy; encoded as the event itself.
    pub viewed: Arc<Viewed>,
    /// The running hash of the viewer's stream after this event.
    pub hash: StreamHash,
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
    /// `public_url`: where players and spectators reach this server (`wss://HOST`), when its
    /// operator said (`asl-server --public-url`), for the links a client prints.
    Created {
        game: GameId,
        sides: [SideSpec; 2],
        tokens: Tokens,
        #[serde(default)]
        public_url: Option<String>,
    },
    /// Joined as `viewer`. `version` is the length of the viewer's own stream; `state` is the
    /// viewer's projection after it, as a [`Position`], or `None` when the client asked to
    /// resume and the missed events follow instead. `state_hash` is that projection's
    /// (`Game::state_hash`), which the game [`Position::into_game`] rebuilds reaches too.
    Joined {
        game: GameId,
        viewer: Viewer,
        version: u64,
        state: Option<Box<Position>>,
        state_hash: StateHash,
        /// The running hash of the viewer's stream at `version` (`record::stream`):
        /// keep it, and an export of the game can later be checked to pass through it.
        head: StreamHash,
        /// The hash of the server's secret dice seed in use (or next to be): every roll is
        /// derived from that seed and the players' contributions (`docs/dice.md`).
        dice_commitment: Commitment,
        /// `head` at `version`, signed by the server as this viewer's stream's
        /// (`record::signed`): the receipt to keep. `None` from a server without a key.
        #[serde(default)]
        signed: Option<SignedHead>,
        /// The server node that owns the game's writer (`asl-server --node-id`); with several
        /// nodes, the one commands reach whichever node the client is connected to.
        #[serde(default)]
        owner: Option<String>,
        /// Both sides' clocks, in a game with a time control (`docs/clock.md`): the same for
        /// every viewer, since they change only at moments everyone sees.
        #[serde(default)]
        clocks: Option<game::timing::ClockView>,
    },
    /// The command `id` was accepted; these are its events as this viewer sees them, and
    /// `version` the viewer's stream length after them.
    Accepted {
        id: u64,
        version: u64,
        events: Vec<Sequenced>,
        /// The viewer's stream hash after them.
        head: StreamHash,
        /// `head` at `version`, signed by the server as the actor's own stream's: the receipt
        /// to keep (`record::receipt`). It names nothing but what the actor was shown.
        #[serde(default)]
        signed: Option<SignedHead>,
    },
    /// The command `id` was refused; nothing changed. `version`: the viewer's stream length.
    Refused {
        id: u64,
        version: u64,
        violation: RuleViolation,
    },
    /// Another participant's command produced this event.
    Event(Sequenced),
    /// A position, the answer to `GetState` and `GetStateAt`: the viewer's projection as a
    /// [`Position`], and its hash as in `Joined`.
    State {
        version: u64,
        state_hash: StateHash,
        state: Box<Position>,
        /// The viewer's stream hash at `version` (reviewing an export, whose stream is the
        /// whole log: the log's head there).
        head: StreamHash,
        /// The server node that owns the game's writer, as in `Joined`.
        #[serde(default)]
        owner: Option<String>,
        /// The clocks now, as in `Joined`; `None` for a past position.
        #[serde(default)]
        clocks: Option<game::timing::ClockView>,
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
    /// The answer to `GetRecord`: entries `from..`, in order, up to the head at `version` or
    /// the page limit.
    Record {
        version: u64,
        entries: Vec<RecordEntry>,
    },
    /// The answer to `GetExport`: a page of the stored log.
    Export(ExportPage),
    /// The export sent with `Review` is valid and open: `version` events ending at `head`;
    /// `report` is the verifier's summary, as `asl verify` prints it.
    Reviewing {
        game: GameId,
        version: u64,
        head: LogHash,
        report: String,
    },
    /// The answer to `Los`: the engine's verdict (`None` when it could not be traced, the
    /// reason then in `reasons`) and its reasons, each citing its rule.
    Los {
        from: Hex,
        to: Hex,
        verdict: Option<board::los::Verdict>,
        reasons: Vec<String>,
    },
    /// The answer to `Preview` `id`: what the command would cost, or the refusal it would get
    /// (the same rule and words). `version`: the viewer's stream length it was decided at.
    Previewed {
        id: u64,
        version: u64,
        outcome: PreviewOutcome,
    },
    /// The answer to `Notify`: the seat's targets now (webhook URLs, e-mail addresses).
    /// `secret`: the key the seat's webhook bodies are signed with (HMAC-SHA256), in hex, sent
    /// only when it was made, this once; `None` otherwise.
    Notifying {
        game: GameId,
        targets: Vec<String>,
        secret: Option<String>,
    },
    /// The answer to `ImportSave`: the scenario file made of the save, and what it assumes
    /// because the save does not say it (each in words, as `asl new` prints them).
    SaveImported {
        scenario: String,
        assumed: Vec<String>,
    },
}

/// What a previewed command would meet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PreviewOutcome {
    Allowed(record::preview::Preview),
    Refused(RuleViolation),
}

/// The answer to [`ClientMessage::Los`] on `game`: LOS between two hexes as the engine traces
/// it (`rules::los`), from the map alone.
pub fn los_answer(game: &Game, from: Hex, to: Hex) -> ServerMessage {
    use rules::los::{between, Spot};
    match between(game, &Spot::Hex(from), &Spot::Hex(to)) {
        Ok(report) => ServerMessage::Los {
            from,
            to,
            verdict: Some(report.verdict),
            reasons: report.reasons,
        },
        Err(e) => ServerMessage::Los {
            from,
            to,
            verdict: None,
            reasons: vec![e.to_string()],
        },
    }
}

/// A page of a finished game's stored log, for an export file (`record::export`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportPage {
    pub game: GameId,
    /// How many events the log holds (the game is over; it no longer grows).
    pub version: u64,
    /// The hash of the last envelope.
    pub head: LogHash,
    /// The state hash of the whole game after the last event.
    pub state_hash: StateHash,
    /// The sequence of the first envelope in `envelopes`.
    pub from: u64,
    /// The stored envelopes, each in lowercase hex, in order.
    pub envelopes: Vec<String>,
    /// The server's signature over the game, `version` and `head` (`docs/review.md`).
    #[serde(default)]
    pub signed: Option<record::signed::SignedHead>,
}

/// One event of the game record as a viewer may see it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordEntry {
    /// The event's number in the viewer's stream.
    pub seq: u64,
    /// The event as the viewer may know it (events it may not know are not in its record).
    pub event: Event,
    /// The event in words with the rule behind it (`protocol::words::describe_event`), written
    /// from the viewer's projection of the position it happened in.
    pub text: String,
    /// When it happened, "Turn 1, German Player Turn: MPh": public, so given for every event.
    pub when: String,
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
    /// Asked for what the game has not reached: an export before the game is over.
    NotYet,
    /// The export sent for review is not valid; the message names the first problem.
    BadExport,
    /// The game's log was rolled back: a receipt (or a version) a client holds shows events
    /// it was sent that the log no longer has, or has otherwise. The game is marked, play and
    /// joins are refused, and the mark survives restarts until the operator restores the game.
    RolledBack,
    /// The receipt sent with `join_with_receipt` is not one this server signed for this game
    /// and viewer; the message says what does not match. Nothing was marked.
    BadReceipt,
    /// The server node no longer serves this game (another node owns its writer now): nothing
    /// unacknowledged was applied; reconnect, to any node, with `since` to resume.
    Moved,
    /// A `join`'s `since` is past the end of the viewer's stream and nothing proves it was
    /// sent: a bare number is a claim anyone holding a token can make up, so it is refused to
    /// that connection alone and marks nothing. A client that was sent those events shows the
    /// server's receipt for them with `join_with_receipt`.
    BeyondEnd,
    /// A command's exactly-once key was already used by another accepted command of the same
    /// seat: the new command was not run (answering with the old command's events would say
    /// it had been).
    KeyReused,
    /// A notification target was refused (not a URL, an address the server may not post to,
    /// no SMTP relay, too many targets); the message says which and why.
    BadNotifyTarget,
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
    use game::command::Outcome;
    use game::event::{
        AdjudicationAccepted, AdjudicationDisputed, DiceCommitted, EntropyContributed,
        EventsUndone, SeedRevealAgreed, SeedRevealed, UndoDeclined, UndoRequested,
        WallAdvantageChanceDeclined,
    };
    use rules::wall_advantage::ReadScenario;

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
            key: None,
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
        round_trip(&ClientMessage::GetStateAt { version: 3 });
        round_trip(&ClientMessage::Review {
            export: "asl-game-log 1\n".into(),
            server_key: None,
            receipts: vec![],
        });
        round_trip(&ClientMessage::GetRecord { from: 1 });
    }

    /// The LOS question of the watch page, in both codecs and as the page writes it.
    #[test]
    fn notify_round_trips_in_both_codecs() {
        for target in [
            NotifyTarget::Webhook {
                url: "https://hooks.example.org/a".into(),
            },
            NotifyTarget::Email {
                address: "a@example.org".into(),
            },
            NotifyTarget::Off,
            NotifyTarget::Confirm {
                code: "abcd-efgh".into(),
            },
        ] {
            round_trip(&ClientMessage::Notify {
                game: "g".into(),
                token: "t".into(),
                target,
            });
        }
        assert_eq!(
            from_json::<ClientMessage>(r#"{"notify":{"game":"g","token":"t","target":"off"}}"#)
                .unwrap(),
            ClientMessage::Notify {
                game: "g".into(),
                token: "t".into(),
                target: NotifyTarget::Off
            }
        );
        round_trip(&ServerMessage::Notifying {
            game: "g".into(),
            targets: vec!["webhook https://hooks.example.org/a".into()],
            secret: Some("00ff".into()),
        });
        round_trip(&ServerMessage::Error {
            code: ErrorCode::BadNotifyTarget,
            message: "no".into(),
        });
        round_trip(&ClientMessage::ImportSave {
            save: "UEsDBA==".into(),
            name: "Hill 621".into(),
            admin_token: None,
        });
        round_trip(&ServerMessage::SaveImported {
            scenario: "name = \"Hill 621\"\n".into(),
            assumed: vec!["the game lasts 6 Game Turns".into()],
        });
    }

    #[test]
    fn los_round_trips_and_answers_from_the_map() {
        let (from, to): (Hex, Hex) = ("6Z9".parse().unwrap(), "6X6".parse().unwrap());
        round_trip(&ClientMessage::Los { from, to });
        assert_eq!(
            from_json::<ClientMessage>(r#"{"los":{"from":"6Z9","to":"6X6"}}"#).unwrap(),
            ClientMessage::Los { from, to }
        );
        let scenario = board::scenario::Scenario::from_toml(include_str!(
            "../../tests/positions/scenarios/b9-2-6z9-none.toml"
        ))
        .unwrap();
        let game = Game::new(scenario);
        let answer = los_answer(&game, from, to);
        round_trip(&answer);
        let json = to_json(&answer);
        assert!(json.contains(r#""verdict":"blocked""#), "{json}");
        assert!(json.contains("B9.2"), "{json}");
        match los_answer(&game, from, "9A1".parse().unwrap()) {
            ServerMessage::Los {
                verdict: None,
                reasons,
                ..
            } => {
                assert!(reasons[0].contains("not on the map"), "{reasons:?}")
            }
            other => panic!("{other:?}"),
        }
    }

    /// A preview and both its answers, in both codecs and as the page writes them.
    #[test]
    fn preview_round_trips_in_both_codecs() {
        let command = Command::Move {
            units: vec!["447a".into()],
            to: "55I8".parse().unwrap(),
        };
        round_trip(&ClientMessage::Preview {
            id: 4,
            command: command.clone(),
        });
        assert_eq!(
            from_json::<ClientMessage>(
                r#"{"preview":{"id":4,"command":{"move":{"units":["447a"],"to":"55I8"}}}}"#
            )
            .unwrap(),
            ClientMessage::Preview { id: 4, command }
        );
        round_trip(&ServerMessage::Previewed {
            id: 4,
            version: 9,
            outcome: PreviewOutcome::Allowed(record::preview::Preview {
                summary: "allowed".into(),
                cost: None,
                mf: vec![],
                attack: None,
            }),
        });
        round_trip(&ServerMessage::Previewed {
            id: 5,
            version: 9,
            outcome: PreviewOutcome::Refused(RuleViolation::new(
                "A4.1",
                rules::violation::ViolationKind::NotEnoughMf,
                "needs 3 MF, 2 left",
            )),
        });
    }

    #[test]
    fn record_round_trips_in_both_codecs() {
        round_trip(&ServerMessage::Record {
            version: 9,
            entries: vec![RecordEntry {
                seq: 9,
                event: Event::WallAdvantageChanceDeclined(WallAdvantageChanceDeclined {
                    side: board::scenario::Side::B,
                }),
                text: "Russian let the chance to claim Wall Advantage pass".into(),
                when: "Turn 1, German Player Turn: MPh".into(),
            }],
        });
        assert_eq!(
            to_json(&ClientMessage::GetStateAt { version: 3 }),
            r#"{"get_state_at":{"version":3}}"#
        );
    }

    /// Dispute review: its commands, the events they log (an undo carries a whole position),
    /// and the head, commitment and export pages the server sends.
    #[test]
    fn review_messages_round_trip_in_both_codecs() {
        use record::chain::LogHash;
        use record::fair_dice::Commitment;
        use record::signed::SignedHead;
        let scenario = board::scenario::Scenario::from_toml(include_str!(
            "../../../scenarios/sewer-infiltration.toml"
        ))
        .unwrap();
        let game = Game::new(scenario);
        for command in [
            Command::ContributeEntropy { nonce: [7; 32] },
            Command::AgreeToRevealSeed,
            Command::AcceptAdjudication { event: 12 },
            Command::DisputeAdjudication {
                event: 12,
                reason: "no LOS".into(),
            },
            Command::RequestUndo { from: 20 },
            Command::ConsentToUndo,
            Command::DeclineUndo,
        ] {
            round_trip(&ClientMessage::Command {
                id: 1,
                command,
                key: None,
            });
        }
        round_trip(&ClientMessage::GetExport { from: 1 });
        let events = [
            Event::DiceCommitted(DiceCommitted {
                commitment: Commitment([1; 32]),
            }),
            Event::EntropyContributed(EntropyContributed {
                side: board::scenario::Side::A,
                nonce: [2; 32],
            }),
            Event::SeedRevealAgreed(SeedRevealAgreed {
                side: board::scenario::Side::B,
            }),
            Event::SeedRevealed(SeedRevealed { seed: [3; 32] }),
            Event::AdjudicationAccepted(AdjudicationAccepted {
                by: board::scenario::Side::A,
                event: 4,
            }),
            Event::AdjudicationDisputed(AdjudicationDisputed {
                by: board::scenario::Side::A,
                event: 4,
                reason: "range".into(),
            }),
            Event::UndoRequested(UndoRequested {
                by: board::scenario::Side::A,
                from: 5,
                to: 6,
            }),
            Event::UndoDeclined(UndoDeclined {
                by: board::scenario::Side::B,
            }),
            Event::EventsUndone(EventsUndone {
                requested_by: board::scenario::Side::A,
                consented_by: board::scenario::Side::B,
                from: 5,
                to: 6,
                restored: Box::new(game.clone()),
            }),
        ];
        round_trip(&ServerMessage::Accepted {
            id: 1,
            version: 9,
            events: events
                .into_iter()
                .zip(1..)
                .map(|(event, seq)| Sequenced {
                    seq,
                    viewed: Arc::new(Viewed {
                        event,
                        renamed: vec![game::view::Renamed {
                            from: "?1".into(),
                            to: "467a".into(),
                        }],
                        weapons: vec![],
                    }),
                    hash: StreamHash([seq as u8; 32]),
                })
                .collect(),
            head: StreamHash([8; 32]),
            signed: Some(SignedHead::of_stream(
                &record::signed::ServerSigningKey::from_bytes(&[3; 32]),
                "g",
                Viewer::Side(board::scenario::Side::A),
                9,
                StreamHash([8; 32]),
            )),
        });
        round_trip(&ClientMessage::JoinWithReceipt {
            game: "g".into(),
            token: "t".into(),
            receipt: SignedHead::of_stream(
                &record::signed::ServerSigningKey::from_bytes(&[3; 32]),
                "g",
                Viewer::Spectator,
                1,
                StreamHash([8; 32]),
            ),
            snapshot: true,
        });
        round_trip(&ServerMessage::Joined {
            game: "g".into(),
            viewer: Viewer::Spectator,
            version: 1,
            state_hash: game.state_hash(),
            state: Some(Box::new(Position::from(game.clone()))),
            head: StreamHash([9; 32]),
            dice_commitment: Commitment([10; 32]),
            signed: None,
            owner: Some("node-a".into()),
            clocks: None,
        });
        round_trip(&ServerMessage::State {
            version: 1,
            state_hash: game.state_hash(),
            state: Box::new(Position::from(game)),
            head: StreamHash([9; 32]),
            owner: None,
            clocks: Some(game::timing::ClockView {
                control: "live:30m+30s".into(),
                at: 1,
                running: Some(board::scenario::Side::A),
                bank: [1_800_000, 1_790_000],
                vacation_left: [0, 0],
                on_vacation: [false, false],
                expired: None,
            }),
        });
        round_trip(&ServerMessage::Export(ExportPage {
            game: "g".into(),
            version: 2,
            head: LogHash([1; 32]),
            state_hash: StateHash([2; 32]),
            from: 1,
            envelopes: vec!["00ff".into(), "01".into()],
            signed: Some(record::signed::SignedHead::sign(
                &record::signed::ServerSigningKey::from_bytes(&[3; 32]),
                "g",
                record::signed::Stream::FullLog,
                2,
                LogHash([1; 32]),
            )),
        }));
        assert_eq!(
            to_json(&ClientMessage::Command {
                id: 3,
                command: Command::ConsentToUndo,
                key: None,
            }),
            r#"{"command":{"id":3,"command":"consent_to_undo","key":null}}"#
        );
        // A client that knows nothing of exactly-once keys may leave `key` out.
        assert_eq!(
            from_json::<ClientMessage>(r#"{"command":{"id":3,"command":"concede"}}"#).unwrap(),
            ClientMessage::Command {
                id: 3,
                command: Command::Concede,
                key: None,
            }
        );
        assert_eq!(
            from_json::<ClientMessage>(r#"{"command":{"id":3,"command":"accept_end","key":9}}"#)
                .unwrap(),
            ClientMessage::Command {
                id: 3,
                command: Command::AcceptEnd,
                key: Some(9),
            }
        );
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

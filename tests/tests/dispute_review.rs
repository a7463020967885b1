//! End to end, dispute review (issue #6): a real server plays the sewer scenario with dice
//! derived from its committed seed and both players' nonces; an undo with consent, a refused
//! undo past a roll, an adjudication accepted and one disputed; the game played to its end,
//! exported, verified offline, replayed to phase boundaries and compared with the live states
//! saved then; the dice checked against the revealed seed; tampered exports refused naming the
//! event; and nothing a client received before a roll lets it compute that roll.

use client::commands::export::{export, ExportArgs};
use client::commands::replay::{replay, ReplayArgs};
use client::commands::verify::{verify as verify_cli, VerifyArgs};
use client::commands::{GameArgs, ServerArg};
use client::connection::{Connection, ConnectionError, Reply, Snapshot};
use client::{Follower, Status};
use data_encoding::HEXLOWER;
use e2e::TestServer;
use futures_util::{SinkExt, StreamExt};
use protocol::chain::{seal_entry, Entry, GENESIS};
use protocol::dice::derive_die;
use protocol::event::{DiceCommitted, DiceRolled, EventsUndone, SeedRevealed, UnitMoved};
use protocol::export::{render, replay_to, verify, Moment, Where};
use protocol::fair_dice::{roll_key, Commitment};
use protocol::record::signed::{ServerKey, ServerSigningKey, SignedHead, Stream, KEY_PATH};
use protocol::record::stream::Streams;
use protocol::wire::{self, ClientMessage, ErrorCode, Sequenced, ServerMessage};
use protocol::{Command, Event, Hex, Outcome, Side, Viewer, ViolationKind};
use server::operations::config::Config;
use std::path::Path;
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;

const SCENARIO: &str = include_str!("../../scenarios/sewer-infiltration.toml");
const WAIT: Duration = Duration::from_secs(10);

struct Seat {
    conn: Connection,
    follower: Follower,
    commitment: Commitment,
    ids: u64,
}

impl Seat {
    async fn join(url: &str, game: &str, token: &str) -> Seat {
        let mut conn = Connection::connect(url).await.unwrap();
        let joined = conn.join(game, token, None).await.unwrap();
        let follower =
            Follower::from_snapshot(joined.state.expect("a snapshot"), joined.state_hash).unwrap();
        Seat {
            conn,
            follower,
            commitment: joined.dice_commitment,
            ids: 0,
        }
    }

    /// Reads events until the local game reaches `version`.
    async fn follow_to(&mut self, version: u64) {
        while let Some(e) = self.conn.pop_buffered() {
            self.follower.advance(&e).unwrap();
        }
        while self.follower.version() < version {
            let e = tokio::time::timeout(WAIT, self.conn.next_event())
                .await
                .expect("event in time")
                .unwrap();
            self.follower.advance(&e).unwrap();
        }
    }

    /// Sends a command once the seat has seen everything up to `version`, and folds its reply
    /// into the local game.
    async fn play(&mut self, version: u64, command: Command) -> Reply {
        self.follow_to(version).await;
        self.ids += 1;
        let reply = tokio::time::timeout(WAIT, self.conn.command(self.ids, command, None))
            .await
            .expect("reply in time")
            .unwrap();
        while let Some(e) = self.conn.pop_buffered() {
            self.follower.advance(&e).unwrap();
        }
        if let Reply::Accepted { events, .. } = &reply {
            for e in events {
                self.follower.advance(e).unwrap();
            }
        }
        reply
    }
}

fn accepted(reply: &Reply) -> Vec<Event> {
    match reply {
        Reply::Accepted { events, .. } => events.iter().map(|s| s.viewed.event.clone()).collect(),
        Reply::Refused { violation, .. } => panic!("refused: {violation}"),
    }
}

fn first_seq(reply: &Reply) -> u64 {
    match reply {
        Reply::Accepted { events, .. } => events[0].seq,
        Reply::Refused { violation, .. } => panic!("refused: {violation}"),
    }
}

/// The number of the adjudication a reply holds: a break also puts the unit under
/// Desperation Morale (A10.62), an event of its own after it.
fn adjudication_seq(reply: &Reply) -> u64 {
    match reply {
        Reply::Accepted { events, .. } => {
            events
                .iter()
                .find(|e| matches!(e.viewed.event, Event::OutcomeAdjudicated(_)))
                .expect("an adjudication")
                .seq
        }
        Reply::Refused { violation, .. } => panic!("refused: {violation}"),
    }
}

fn hex(name: &str) -> Hex {
    name.parse().unwrap()
}

/// Both players and a spectator at one table; `version` is the newest version any command
/// reached, which every seat follows to before it acts.
struct Table {
    german: Seat,
    russian: Seat,
    spectator: Seat,
    version: u64,
}

impl Table {
    fn seat(&mut self, side: Side) -> &mut Seat {
        match side {
            Side::A => &mut self.german,
            Side::B => &mut self.russian,
        }
    }

    async fn play(&mut self, side: Side, command: Command) -> Reply {
        let version = self.version;
        let reply = self.seat(side).play(version, command).await;
        if let Reply::Accepted { version, .. } = &reply {
            self.version = *version;
        }
        reply
    }

    /// `Done` by whoever play waits for; a lost sewer stack is sent to the first choice.
    async fn step(&mut self) -> Reply {
        let version = self.version;
        self.german.follow_to(version).await;
        let game = self.german.follower.game().clone();
        if let Some(d) = &game.sewer_designation {
            return self
                .play(d.defender, Command::DesignateSewer { to: d.options[0] })
                .await;
        }
        self.play(game.acting(), Command::Done).await
    }

    /// Steps to the German MPh of turn 1: the RPh, each end-of-RPh step that does not pass by
    /// itself (B9.322), the PFPh.
    async fn play_to_german_mph(&mut self) {
        loop {
            let version = self.version;
            self.german.follow_to(version).await;
            if self.german.follower.game().clock.phase() == protocol::phase::Phase::Movement {
                return;
            }
            self.step().await;
        }
    }

    /// The spectator's live state now, as `asl state` would show it.
    async fn spectator_state(&mut self) -> Snapshot {
        let version = self.version;
        self.spectator.follow_to(version).await;
        let snapshot = self.spectator.conn.get_state().await.unwrap();
        assert_eq!(snapshot.version, version);
        snapshot
    }

    async fn over(&mut self) -> bool {
        let version = self.version;
        self.german.follow_to(version).await;
        self.german.follower.game().over
    }
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A raw connection with the German's token that keeps every frame it receives as text: all
/// a German client could learn, byte for byte.
struct Recorder {
    ws: Socket,
    frames: Vec<String>,
}

impl Recorder {
    async fn join(url: &str, game: &str, token: &str) -> Recorder {
        let (ws, _) = tokio_tungstenite::connect_async(format!("{url}/v1"))
            .await
            .unwrap();
        let mut recorder = Recorder { ws, frames: vec![] };
        recorder
            .send(&ClientMessage::Join {
                game: game.into(),
                token: token.into(),
                since: None,
            })
            .await;
        recorder
            .until(|m| matches!(m, ServerMessage::Joined { .. }))
            .await;
        recorder
    }

    async fn send(&mut self, message: &ClientMessage) {
        self.ws
            .send(Message::text(wire::to_json(message)))
            .await
            .unwrap();
    }

    /// Reads frames, keeping each, until one satisfies `done`.
    async fn until(&mut self, done: impl Fn(&ServerMessage) -> bool) {
        loop {
            let frame = tokio::time::timeout(WAIT, self.ws.next())
                .await
                .expect("a frame in time")
                .unwrap()
                .unwrap();
            let Message::Text(text) = frame else { continue };
            let message: ServerMessage = wire::from_json(text.as_str()).unwrap();
            self.frames.push(text.to_string());
            if done(&message) {
                return;
            }
        }
    }
}

fn is_roll(message: &ServerMessage) -> bool {
    let rolled = |events: &[Sequenced]| {
        events
            .iter()
            .any(|s| matches!(s.viewed.event, Event::DiceRolled(_)))
    };
    match message {
        ServerMessage::Event(s) => rolled(std::slice::from_ref(s)),
        ServerMessage::Accepted { events, .. } => rolled(events),
        _ => false,
    }
}

/// The byte forms a 32-byte secret would take in a JSON frame: as serde writes arrays, and as
/// hex.
fn spellings(secret: &[u8; 32]) -> [String; 2] {
    let array: Vec<String> = secret.iter().map(|b| b.to_string()).collect();
    [format!("[{}]", array.join(",")), HEXLOWER.encode(secret)]
}

fn event_line(seq: u64) -> usize {
    6 + seq as usize // seven header lines (signed), then event 1
}

fn rewrite(text: &str, change: impl FnOnce(&mut Vec<String>)) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    change(&mut lines);
    lines.join("\n") + "\n"
}

async fn start(dir: &Path) -> (TestServer, String, protocol::wire::Tokens) {
    let server = TestServer::start(dir, Config::default()).await;
    let mut creator = Connection::connect(&server.url).await.unwrap();
    let created = creator.create_game(SCENARIO, None).await.unwrap();
    creator.close().await;
    (server, created.game, created.tokens)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sewer_game_is_played_exported_verified_and_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let (server, game, tokens) = start(dir.path()).await;
    let mut recorder = Recorder::join(&server.url, &game, &tokens.side_a).await;
    let mut table = Table {
        german: Seat::join(&server.url, &game, &tokens.side_a).await,
        russian: Seat::join(&server.url, &game, &tokens.side_b).await,
        spectator: Seat::join(&server.url, &game, &tokens.spectator).await,
        version: 1,
    };
    let commitment = table.german.commitment;
    assert_eq!(
        table.russian.commitment, commitment,
        "one commitment for all"
    );

    // Both players add their nonces; the first brings the commitment into the log.
    let nonces = [[0x11; 32], [0x22; 32]];
    let events = accepted(
        &table
            .play(Side::A, Command::ContributeEntropy { nonce: nonces[0] })
            .await,
    );
    assert_eq!(
        events[0],
        Event::DiceCommitted(DiceCommitted { commitment })
    );
    accepted(
        &table
            .play(Side::B, Command::ContributeEntropy { nonce: nonces[1] })
            .await,
    );
    let again = table
        .play(Side::A, Command::ContributeEntropy { nonce: [0x33; 32] })
        .await;
    assert!(matches!(again, Reply::Refused { .. }), "once per seed");

    // To the German MPh: RPh, the ends of the RPh that do not pass by themselves, PFPh.
    table.play_to_german_mph().await;
    let at_mph = table.spectator_state().await;
    let receipt = table.german.conn.head().expect("a head with each reply");

    // A move taken back with the Russian's consent.
    let moved = table
        .play(
            Side::A,
            Command::Move {
                units: vec!["g3".into()],
                to: hex("20A3"),
            },
        )
        .await;
    let from = first_seq(&moved);
    let not_russian = table.play(Side::B, Command::RequestUndo { from }).await;
    assert!(
        matches!(not_russian, Reply::Refused { ref violation, .. } if violation.kind == ViolationKind::WrongSide)
    );
    accepted(&table.play(Side::A, Command::RequestUndo { from }).await);
    let undone = accepted(&table.play(Side::B, Command::ConsentToUndo).await);
    assert!(matches!(undone[0], Event::EventsUndone(EventsUndone { from: f, .. }) if f == from));
    let version = table.version;
    for seat in [&mut table.german, &mut table.russian, &mut table.spectator] {
        seat.follow_to(version).await;
        assert_eq!(
            seat.follower.game().units["g3"].hex,
            hex("20A2"),
            "back in A2"
        );
    }
    let spectator_now = table.spectator.conn.get_state().await.unwrap();
    assert_eq!(
        spectator_now.state_hash,
        table.spectator.follower.game().state_hash(),
        "a viewer's copy follows the undo"
    );

    // What the German could learn before the first roll: its join, its state, its log, an
    // earlier state, and every event — recorded frame by frame.
    recorder.send(&ClientMessage::GetState).await;
    recorder
        .until(|m| matches!(m, ServerMessage::State { .. }))
        .await;
    recorder.send(&ClientMessage::GetLog { from: 1 }).await;
    recorder
        .until(|m| matches!(m, ServerMessage::Log { .. }))
        .await;
    recorder
        .send(&ClientMessage::GetStateAt { version: 2 })
        .await;
    recorder
        .until(|m| matches!(m, ServerMessage::State { .. }))
        .await;
    let before_the_roll = recorder.frames.len();

    // The assault group goes down the Manhole and moves: the lost dr.
    let sewer = table
        .play(
            Side::A,
            Command::SewerMove {
                units: vec!["g1".into(), "g2".into(), "gl".into()],
                to: hex("20E4"),
            },
        )
        .await;
    let sewer_from = first_seq(&sewer);
    assert!(accepted(&sewer)
        .iter()
        .any(|e| matches!(e, Event::DiceRolled(_))));
    recorder.until(is_roll).await;
    let refused = table
        .play(Side::A, Command::RequestUndo { from: sewer_from })
        .await;
    match refused {
        Reply::Refused { violation, .. } => {
            assert_eq!(violation.kind, ViolationKind::NotUndoable);
            assert!(violation.detail.contains("die roll"), "{violation}");
        }
        Reply::Accepted { .. } => panic!("an undo past a die roll was accepted"),
    }
    if table.german.follower.game().sewer_designation.is_some() {
        table.step().await; // the Russian designates where the lost stack goes
    }
    table.step().await; // the MPh ends: the Sewer Emergence dr
    let at_dfph = table.spectator_state().await;

    // DFPh: the Russian's adjudications, one accepted, one disputed.
    accepted(
        &table
            .play(
                Side::B,
                Command::Adjudicate {
                    unit: "g3".into(),
                    outcome: Outcome::Pin,
                    note: "DFPh 4 FP vs A2, PTC failed".into(),
                },
            )
            .await,
    );
    let pin = table.version;
    accepted(
        &table
            .play(Side::A, Command::AcceptAdjudication { event: pin })
            .await,
    );
    let broke = adjudication_seq(
        &table
            .play(
                Side::B,
                Command::Adjudicate {
                    unit: "g3".into(),
                    outcome: Outcome::Break,
                    note: "1MC failed".into(),
                },
            )
            .await,
    );
    accepted(
        &table
            .play(
                Side::A,
                Command::DisputeAdjudication {
                    event: broke,
                    reason: "A2 is beyond r1's normal range".into(),
                },
            )
            .await,
    );

    // An export before the end is refused: the log still holds what one side may not know.
    let mut early = Connection::connect(&server.url).await.unwrap();
    early.join(&game, &tokens.spectator, None).await.unwrap();
    match early.export_page(1).await {
        Err(ConnectionError::Server { code, .. }) => assert_eq!(code, ErrorCode::NotYet),
        other => panic!("an export before the end: {other:?}"),
    }

    while !table.over().await {
        table.step().await;
    }
    let after = table
        .play(Side::B, Command::AcceptAdjudication { event: pin })
        .await;
    assert!(matches!(after, Reply::Refused { .. }), "the log is final");
    let final_spectator = table.spectator_state().await;

    // The export, through `asl export`, checked against the head the server shows.
    let mut out = vec![];
    let args = ExportArgs {
        server: ServerArg {
            url: server.url.clone(),
        },
        game: GameArgs {
            game: game.clone(),
            token: tokens.spectator.clone(),
        },
        out: None,
    };
    assert_eq!(export(&args, &mut out).await, Ok(Status::Success));
    let text = String::from_utf8(out).unwrap();
    let path = dir.path().join("game.log");
    std::fs::write(&path, &text).unwrap();

    // Valid; and the whole game it replays to is the server's, seen by the spectator.
    let verified = verify(text.as_bytes(), &mut |_, _| {}).unwrap();
    assert!(verified.summary.over);
    assert_eq!(verified.summary.rolls_unverified, 0);
    assert!(
        verified.summary.rolls_verified >= 2,
        "the lost dr and Emergence"
    );
    assert_eq!(
        (verified.summary.accepted, verified.summary.disputed),
        (1, 1)
    );
    assert_eq!(verified.summary.undone, 1);
    // A projection carries the count of events its viewer received.
    let spectator_at = |game: &protocol::Game, version| {
        let mut view = game.project(Viewer::Spectator);
        view.version = version;
        view.state_hash()
    };
    assert_eq!(
        spectator_at(&verified.game, final_spectator.version),
        final_spectator.state_hash,
        "verify's result is the server's state"
    );
    assert_eq!(verified.header.state_hash, verified.game.state_hash());
    // The receipt is the head of the German's own stream, rebuilt from the export.
    let streams = Streams::of_log(verified.entries.iter().map(|e| &e.event));
    assert_eq!(streams.hash(Viewer::Side(Side::A), receipt.0), receipt.1);

    // `asl verify` with the German's receipt from the start of the MPh.
    let mut out = vec![];
    let status = verify_cli(
        &VerifyArgs {
            boards: Default::default(),
            file: path.clone(),
            head: Some(receipt.1.to_string()),
            server_key: None,
            receipts: None,
        },
        &mut out,
    )
    .unwrap();
    let report = String::from_utf8(out).unwrap();
    assert_eq!(status, Status::Success, "{report}");
    assert!(
        report.contains(&format!(
            "passes through head {}: the German player's stream, its event {}",
            receipt.1, receipt.0
        )),
        "{report}"
    );
    assert!(report.contains("valid: game"), "{report}");

    // The dice: the revealed seed hashes to the commitment shown at joining, and every roll is
    // the die the seed and both nonces give for its draw.
    let seed = verified
        .entries
        .iter()
        .find_map(|e| match e.event {
            Event::SeedRevealed(SeedRevealed { seed }) => Some(seed),
            _ => None,
        })
        .expect("the seed is revealed at the end");
    assert_eq!(Commitment::to(&seed), commitment);
    let key = roll_key(&seed, &[Some(nonces[0]), Some(nonces[1])]);
    let mut rolls = 0;
    for e in &verified.entries {
        if let Event::DiceRolled(DiceRolled { roll }) = &e.event {
            for (i, face) in roll.dice.iter().enumerate() {
                assert_eq!(*face, derive_die(&key, roll.first_draw + i as u64));
            }
            rolls += 1;
        }
    }
    assert!(rolls >= 2);

    // Nothing the German received before the roll holds the seed or the key; the commitment,
    // its hash, is all it had.
    let before = recorder.frames[..before_the_roll].join("\n");
    for secret in [seed, key] {
        for spelled in spellings(&secret) {
            assert!(
                !before.contains(&spelled),
                "a secret was sent before the roll"
            );
        }
    }
    assert!(
        before.contains(&spellings(&commitment.0)[0]),
        "the commitment was"
    );
    // Nor does the commitment stand in for the seed: the dice it would give are others.
    let guess = roll_key(&commitment.0, &[Some(nonces[0]), Some(nonces[1])]);
    assert!(
        (0..64).any(|n| derive_die(&guess, n) != derive_die(&key, n)),
        "the commitment gives the seed's dice"
    );

    // Replay to a phase boundary is the live state saved at that moment.
    let scenario = &verified.game.scenario;
    for (moment, saved) in [
        ("turn 1 German MPh", &at_mph),
        ("turn 1 German DFPh", &at_dfph),
    ] {
        let moment = Moment::parse(moment, scenario).unwrap();
        let then = replay_to(&verified.entries, &moment).unwrap();
        assert_eq!(then.version, saved.version);
        assert_eq!(spectator_at(&then, saved.version), saved.state_hash);
    }
    // … and over the socket.
    let at = table
        .spectator
        .conn
        .get_state_at(at_dfph.version)
        .await
        .unwrap();
    assert_eq!(at.state_hash, at_dfph.state_hash);
    // The head of the spectator's own stream at that event, rebuilt from the export.
    assert_eq!(at.head, streams.hash(Viewer::Spectator, at_dfph.version));

    // `asl replay` from the file and live.
    let replay_args = |file: Option<std::path::PathBuf>, token: Option<String>| ReplayArgs {
        file,
        server: ServerArg {
            url: server.url.clone(),
        },
        game: token.as_ref().map(|_| game.clone()),
        token,
        to: "turn 1 German DFPh".into(),
        viewer: None,
        record: true,
        stats: true,
    };
    let mut out = vec![];
    let status = replay(&replay_args(Some(path.clone()), None), &mut out)
        .await
        .unwrap();
    let text_out = String::from_utf8(out).unwrap();
    assert_eq!(status, Status::Success, "{text_out}");
    assert!(
        text_out.contains("== Turn 1, German Player Turn: MPh =="),
        "{text_out}"
    );
    assert!(
        text_out.contains("taken back at the German's request"),
        "{text_out}"
    );
    assert!(text_out.contains("Dice:\nGerman: "), "{text_out}");
    assert!(
        text_out.contains("Turn 1, German Player Turn: DFPh (A3.4)"),
        "{text_out}"
    );
    assert!(text_out.contains("Sewer stack beneath"), "{text_out}");
    // As the spectators saw it: their own stream's number and head at that moment (what a
    // spectator's receipt holds), not the log's under the spectators' name.
    let mut out = vec![];
    let as_spectators = ReplayArgs {
        viewer: Some("spectator".into()),
        record: false,
        stats: false,
        ..replay_args(Some(path.clone()), None)
    };
    replay(&as_spectators, &mut out).await.unwrap();
    let seen = String::from_utf8(out).unwrap();
    assert!(
        seen.contains(&format!(
            "Stream head of the spectators after its event {}: {}",
            at_dfph.version, at.head
        )),
        "{seen}"
    );
    assert!(!seen.contains("version 0"), "{seen}");
    let mut out = vec![];
    replay(&replay_args(None, Some(tokens.spectator.clone())), &mut out)
        .await
        .unwrap();
    let live = String::from_utf8(out).unwrap();
    assert!(
        live.contains("Turn 1, German Player Turn: DFPh (A3.4)"),
        "{live}"
    );

    // Tampered exports: each fails, naming the event.
    let flipped = rewrite(&text, |lines| {
        let line = &mut lines[event_line(5)];
        let mid = line.len() / 2;
        let c = line.as_bytes()[mid];
        let flipped = if c == b'0' { '1' } else { '0' };
        line.replace_range(mid..=mid, &flipped.to_string());
    });
    let err = verify(flipped.as_bytes(), &mut |_, _| {}).unwrap_err();
    // A broken link names the event before it: the changed one, unless the link itself was.
    assert!(matches!(err.at, Where::Event(4) | Where::Event(5)), "{err}");
    let dropped = rewrite(&text, |lines| {
        lines.remove(event_line(8));
    });
    let err = verify(dropped.as_bytes(), &mut |_, _| {}).unwrap_err();
    assert_eq!(err.at, Where::Event(8), "{err}");
    let swapped = rewrite(&text, |lines| lines.swap(event_line(10), event_line(11)));
    let err = verify(swapped.as_bytes(), &mut |_, _| {}).unwrap_err();
    assert_eq!(err.at, Where::Event(10), "{err}");
    std::fs::write(&path, &swapped).unwrap();
    let mut out = vec![];
    let status = verify_cli(
        &VerifyArgs {
            boards: Default::default(),
            file: path,
            head: None,
            server_key: None,
            receipts: None,
        },
        &mut out,
    )
    .unwrap();
    assert_eq!(status, Status::Invalid);
    assert!(String::from_utf8(out)
        .unwrap()
        .starts_with("invalid: event 10: "));

    forgeries_are_refused(&server.url, &text, dir.path()).await;
    server.stop().await;
}

/// The server's public key, from its well-known path.
async fn server_key(url: &str) -> ServerKey {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = url.trim_start_matches("ws://");
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(format!("GET {KEY_PATH} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    ServerKey::from_hex(response.lines().last().unwrap()).unwrap()
}

/// The server's review of an uploaded export: `Ok` once it is open, or the refusal.
async fn review(url: &str, export: &str) -> Result<(), String> {
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("{url}/v1"))
        .await
        .unwrap();
    let message = wire::to_json(&ClientMessage::Review {
        export: export.into(),
        server_key: None,
        receipts: vec![],
    });
    ws.send(Message::Text(message.into())).await.unwrap();
    loop {
        let frame = tokio::time::timeout(WAIT, ws.next())
            .await
            .expect("an answer in time")
            .unwrap()
            .unwrap();
        let Message::Text(text) = frame else { continue };
        match wire::from_json::<ServerMessage>(text.as_str()).unwrap() {
            ServerMessage::Reviewing { .. } => return Ok(()),
            ServerMessage::Error { code, message } => {
                assert_eq!(code, ErrorCode::BadExport, "{message}");
                return Err(message);
            }
            _ => continue,
        }
    }
}

/// The export rewritten by someone without the server's key: entries changed, chain, header
/// and checksum made anew, and the head signed with a key of their own.
fn reseal(text: &str, change: impl FnOnce(&mut Vec<Entry>)) -> String {
    let verified = verify(text.as_bytes(), &mut |_, _| {}).unwrap();
    let mut entries = verified.entries.clone();
    change(&mut entries);
    let mut prev = GENESIS;
    let mut lines = vec![];
    for e in &entries {
        let (bytes, hash) = seal_entry(prev, [0; 16], e);
        lines.push(HEXLOWER.encode(&bytes));
        prev = hash;
    }
    let forger = ServerSigningKey::from_bytes(&[0x66; 32]);
    let mut header = verified.header.clone();
    header.events = entries.len() as u64;
    header.head = prev;
    header.signed = Some(SignedHead::sign(
        &forger,
        &header.game,
        Stream::FullLog,
        header.events,
        prev,
    ));
    render(&header, &lines)
}

/// Each forgery of issue #15 is refused by `verify` and by the server's review, naming the
/// first bad event; the honest export passes both, and only under the server's key.
async fn forgeries_are_refused(url: &str, honest: &str, dir: &Path) {
    let key = server_key(url).await;
    review(url, honest).await.unwrap();
    let verified = verify(honest.as_bytes(), &mut |_, _| {}).unwrap();
    verified.check_signature(&key).unwrap();
    let entries = verified.entries.clone();
    let path = dir.join("forged.log");
    let cli = |file: &Path, server_key: Option<String>| {
        let mut out = vec![];
        let status = verify_cli(
            &VerifyArgs {
                boards: Default::default(),
                file: file.to_path_buf(),
                head: None,
                server_key,
                receipts: None,
            },
            &mut out,
        )
        .unwrap();
        (status, String::from_utf8(out).unwrap())
    };
    let honest_path = dir.join("honest.log");
    std::fs::write(&honest_path, honest).unwrap();
    let (status, report) = cli(&honest_path, Some(key.to_string()));
    assert_eq!(status, Status::Success, "{report}");
    assert!(report.contains("signed by the server's key"), "{report}");
    let (_, report) = cli(&honest_path, None);
    assert!(
        report.contains("proves only its internal consistency"),
        "{report}"
    );

    let moved = entries
        .iter()
        .position(|e| matches!(e.event, Event::UnitMoved(_)))
        .unwrap();
    let rolled = entries
        .iter()
        .position(|e| matches!(e.event, Event::DiceRolled(_)))
        .unwrap();
    let ended = entries
        .iter()
        .position(|e| matches!(e.event, Event::GameEnded(_)))
        .unwrap();
    let salt = rewrite(honest, |lines| {
        let line = &mut lines[event_line(5)];
        // Format (1 byte), seq (1 byte), prev (32 bytes): the salt starts at byte 34.
        let at = 2 * 36;
        let c = line.as_bytes()[at];
        line.replace_range(at..=at, if c == b'0' { "1" } else { "0" });
    });
    let illegal = reseal(honest, |entries| {
        if let Event::UnitMoved(UnitMoved { to, .. }) = &mut entries[moved].event {
            *to = hex("20H5");
        }
        if let Some(issued) = &mut entries[moved].command {
            if let Command::Move { to, .. } = &mut issued.command {
                *to = hex("20H5");
            }
        }
    });
    let die = reseal(honest, |entries| {
        if let Event::DiceRolled(DiceRolled { roll }) = &mut entries[rolled].event {
            roll.dice[0] = roll.dice[0] % 6 + 1;
            roll.final_result = roll.raw()
                + roll
                    .modifiers
                    .iter()
                    .map(|m| i16::from(m.value))
                    .sum::<i16>();
        }
        entries.retain(|e| !matches!(e.event, Event::SeedRevealed(_)) || e.seq <= ended as u64);
    });
    for (name, forged, first_bad) in [
        ("a salt byte flipped", salt, vec![5]),
        ("an illegal move re-sealed", illegal, vec![moved as u64 + 1]),
        // The changed die is caught at its roll when what the rules make of it changed too
        // (the outcome of a lost dr); otherwise, with the seed gone, at the unrevealed end.
        (
            "a forged die, its reveal dropped",
            die,
            vec![rolled as u64 + 1, ended as u64 + 1],
        ),
    ] {
        let err = verify(forged.as_bytes(), &mut |_, _| {}).unwrap_err();
        let Where::Event(named) = err.at else {
            panic!("{name}: {err}")
        };
        assert!(first_bad.contains(&named), "{name}: {err}");
        let first_bad = named;
        // The server checks the signature before it replays (issue 36): a file re-sealed by
        // anyone else is refused for its key, unread; one still under the server's signature
        // is read and its first bad event named.
        let refused = review(url, &forged).await.unwrap_err();
        let expected = match name {
            "a salt byte flipped" => format!("event {first_bad}: "),
            _ => "signed with another key than the server's".to_string(),
        };
        assert!(refused.contains(&expected), "{name}: {refused}");
        std::fs::write(&path, &forged).unwrap();
        let (status, report) = cli(&path, None);
        assert_eq!(status, Status::Invalid, "{name}: {report}");
        assert!(
            report.starts_with(&format!("invalid: event {first_bad}: ")),
            "{name}: {report}"
        );
    }

    // The honest log re-signed with another key: consistent in itself, refused under the
    // server's key and by the server's review.
    let resigned = reseal(honest, |_| {});
    verify(resigned.as_bytes(), &mut |_, _| {}).unwrap();
    std::fs::write(&path, &resigned).unwrap();
    let (status, report) = cli(&path, Some(key.to_string()));
    assert_eq!(status, Status::Invalid, "{report}");
    assert!(report.contains("another key"), "{report}");
    let key_file = dir.join("server.key");
    std::fs::write(&key_file, format!("{key}\n")).unwrap();
    let (status, _) = cli(&path, Some(key_file.display().to_string()));
    assert_eq!(status, Status::Invalid);
    let refused = review(url, &resigned).await.unwrap_err();
    assert!(refused.contains("another key"), "{refused}");

    // Endless input stops at once.
    let (status, report) = cli(Path::new("/dev/zero"), None);
    assert_eq!(status, Status::Invalid, "{report}");
}

/// The seed is the server's to keep: revealed by agreement mid-game, a fresh one is committed
/// to, stored, and still the one in use after a restart on the same data directory; the
/// finished game verifies with both seeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seed_revealed_by_agreement_is_replaced_and_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (server, game, tokens) = start(dir.path()).await;
    let mut table = Table {
        german: Seat::join(&server.url, &game, &tokens.side_a).await,
        russian: Seat::join(&server.url, &game, &tokens.side_b).await,
        spectator: Seat::join(&server.url, &game, &tokens.spectator).await,
        version: 1,
    };
    let first = table.german.commitment;
    accepted(
        &table
            .play(Side::A, Command::ContributeEntropy { nonce: [7; 32] })
            .await,
    );
    table.play_to_german_mph().await;
    accepted(
        &table
            .play(
                Side::A,
                Command::SewerMove {
                    units: vec!["g1".into(), "g2".into(), "gl".into()],
                    to: hex("20E4"),
                },
            )
            .await,
    );
    if table.german.follower.game().sewer_designation.is_some() {
        table.step().await;
    }
    accepted(&table.play(Side::A, Command::AgreeToRevealSeed).await);
    let events = accepted(&table.play(Side::B, Command::AgreeToRevealSeed).await);
    let Event::SeedRevealed(SeedRevealed { seed }) = events[1] else {
        panic!("the second agreement reveals the seed: {events:?}");
    };
    assert_eq!(Commitment::to(&seed), first);
    let Event::DiceCommitted(DiceCommitted { commitment: second }) = events[2] else {
        panic!("and commits to a fresh one: {events:?}");
    };
    assert_ne!(second, first);
    let version = table.version;
    drop(table);
    server.stop().await;

    let server = TestServer::start(dir.path(), Config::default()).await;
    let mut table = Table {
        german: Seat::join(&server.url, &game, &tokens.side_a).await,
        russian: Seat::join(&server.url, &game, &tokens.side_b).await,
        spectator: Seat::join(&server.url, &game, &tokens.spectator).await,
        version,
    };
    assert_eq!(table.german.commitment, second, "the new seed was stored");
    accepted(
        &table
            .play(Side::B, Command::ContributeEntropy { nonce: [8; 32] })
            .await,
    );
    while !table.over().await {
        table.step().await;
    }
    let mut out = vec![];
    let args = ExportArgs {
        server: ServerArg {
            url: server.url.clone(),
        },
        game: GameArgs {
            game: game.clone(),
            token: tokens.side_b.clone(),
        },
        out: None,
    };
    assert_eq!(export(&args, &mut out).await, Ok(Status::Success));
    let verified = verify(&out, &mut |_, _| {}).unwrap();
    let epochs = verified.ledger.epochs();
    assert_eq!(epochs.len(), 2);
    assert_eq!(
        (epochs[0].commitment, epochs[1].commitment),
        (first, second)
    );
    assert!(epochs.iter().all(|e| e.seed.is_some()), "both revealed");
    assert!(
        !epochs[0].rolls.is_empty(),
        "the lost dr, under the first seed"
    );
    assert!(
        !epochs[1].rolls.is_empty(),
        "the Emergence dr, under the second"
    );
    assert_eq!(
        epochs[1].contributions,
        [None, Some([8; 32])],
        "nonces start again"
    );
    assert_eq!(verified.summary.rolls_unverified, 0);
    server.stop().await;
}

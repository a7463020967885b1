//! End to end: the two reads the spectator page is built on. `get_record` gives each event in
//! words, in the position it happened in, with when; `get_state_at` gives any earlier position.
//! Both are projections: what a viewer may not see stays out of both, and a past position
//! hides what was hidden then. And `review` opens only an export that verifies.

use client::{Connection, Reply};
use e2e::{Socket, TestServer};
use protocol::wire::{self, ClientMessage, ErrorCode, RecordEntry, ServerMessage};
use protocol::{Command, Event, Game, Hex, Outcome};
use server::operations::config::Config;
use std::time::Duration;

const SCENARIO: &str = include_str!("../../scenarios/village-outskirts.toml");
const WAIT: Duration = Duration::from_secs(10);

/// A raw JSON connection joined with `token`, as the page speaks.
async fn viewer(url: &str, game: &str, token: &str) -> Socket {
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("{url}/v1"))
        .await
        .expect("connect");
    ask(
        &mut ws,
        &ClientMessage::Join {
            game: game.into(),
            token: token.into(),
            since: None,
        },
    )
    .await;
    ws
}

/// A new game of the village scenario on `server`.
async fn create(server: &TestServer) -> client::NewGame {
    Connection::connect(&server.url)
        .await
        .unwrap()
        .create_game(SCENARIO, None)
        .await
        .unwrap()
}

/// Sends `message` and returns the first answer that is not a stream event.
async fn ask(ws: &mut Socket, message: &ClientMessage) -> ServerMessage {
    e2e::ask(ws, message, WAIT).await
}

async fn record(ws: &mut Socket, from: u64) -> (u64, Vec<RecordEntry>) {
    match ask(ws, &ClientMessage::GetRecord { from }).await {
        ServerMessage::Record { version, entries } => (version, entries),
        other => panic!("expected a record, got {other:?}"),
    }
}

async fn state_at(ws: &mut Socket, version: u64) -> Game {
    match ask(ws, &ClientMessage::GetStateAt { version }).await {
        ServerMessage::State {
            version: at,
            state_hash,
            state,
            ..
        } => {
            let state = state
                .into_game()
                .expect("a position of this version's format");
            assert_eq!(at, state.version);
            assert_eq!(state_hash, state.state_hash());
            state
        }
        other => panic!("expected a state, got {other:?}"),
    }
}

async fn accept(conn: &mut Connection, command: Command) {
    match tokio::time::timeout(WAIT, conn.command(1, command, None))
        .await
        .expect("a reply in time")
        .unwrap()
    {
        Reply::Accepted { .. } => {}
        Reply::Refused { violation, .. } => panic!("refused: {violation}"),
    }
}

#[tokio::test]
async fn the_record_and_past_positions_are_projections() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path(), Config::default()).await;
    let created = create(&server).await;
    let (game, tokens) = (created.game, created.tokens);
    let mut german = Connection::connect(&server.url).await.unwrap();
    german.join(&game, &tokens.side_a, None).await.unwrap();
    let mut russian = Connection::connect(&server.url).await.unwrap();
    russian.join(&game, &tokens.side_b, None).await.unwrap();

    // #2 the RPh ends, #3 the German's end-of-RPh step passes by itself: no German unit could
    // claim WA (B9.322). The Russian's is asked: a squad of its could.
    accept(&mut german, Command::Done).await;
    accept(&mut russian, Command::Done).await; // #4: into the PFPh
    accept(
        &mut russian,
        Command::Adjudicate {
            unit: "r3".into(),
            outcome: Outcome::Pin,
            note: "the hidden half-squad".into(),
        },
    )
    .await; // #5: about the hidden unit, so only the Russian sees it
    accept(&mut german, Command::Done).await; // #6: into the MPh
    let c4: Hex = "12C4".parse().unwrap();
    accept(
        &mut german,
        Command::Move {
            units: vec!["g1".into(), "g2".into(), "g-ldr".into()],
            to: c4,
        },
    )
    .await; // #7 the move, #8 the Russian's moment to place a hidden unit first (B9.324)
    accept(&mut russian, Command::DeclineWallAdvantage).await; // #9, #10–#12 mandatory WA

    // The spectator's own stream: #5, about the hidden unit, is not in it at all, so its
    // events are numbered 1–11.
    let mut spectator = viewer(&server.url, &game, &tokens.spectator).await;
    let (version, entries) = record(&mut spectator, 1).await;
    assert_eq!(version, 11);
    assert_eq!(
        entries.iter().map(|e| e.seq).collect::<Vec<_>>(),
        (1..=11).collect::<Vec<_>>()
    );
    assert!(
        entries
            .iter()
            .all(|e| !matches!(e.event, Event::OutcomeAdjudicated(_))),
        "{entries:?}"
    );
    let moved = entries[5].text.as_str();
    assert!(
        moved.starts_with("g1+g2+g-ldr 12B4 → 12C4: 1½ MF"),
        "{moved}"
    );
    assert_eq!(entries[5].when, "Turn 1, German Player Turn: MPh");
    assert!(entries[6].text.contains("(B9.324)"), "{entries:?}");
    assert!(
        entries[8..].iter().all(|e| e.text.ends_with("(B9.323)")),
        "{entries:?}"
    );
    // The scenario in #1 is the spectator's too: the hidden unit is not in it.
    assert!(matches!(entries[0].event, Event::GameCreated(_)));
    let json = wire::to_json(&entries);
    assert!(!json.contains("\"r3\""), "{json}");

    let (_, tail) = record(&mut spectator, 10).await;
    assert_eq!(tail.iter().map(|e| e.seq).collect::<Vec<_>>(), [10, 11]);

    // Past positions, by the spectator's own numbers: before the move (its #5), the stack was
    // in 12B4 and held no WA.
    let before = state_at(&mut spectator, 5).await;
    assert_eq!(before.version, 5);
    assert_eq!(before.units["g1"].hex.to_string(), "12B4");
    assert!(!before.units["g1"].wall_advantage);
    assert!(!before.units.contains_key("r3"));
    assert_eq!(state_at(&mut spectator, 0).await.version, 1);
    let head = state_at(&mut spectator, 999).await;
    let live = match ask(&mut spectator, &ClientMessage::GetState).await {
        ServerMessage::State { state, .. } => state.into_game().unwrap(),
        other => panic!("expected a state, got {other:?}"),
    };
    assert_eq!(head, live);
    assert_eq!(head.units["g1"].hex, c4);

    // The owner sees its hidden unit in the past position and its event in the record.
    let mut owner = viewer(&server.url, &game, &tokens.side_b).await;
    assert!(state_at(&mut owner, 6).await.units["r3"].pinned);
    assert!(!state_at(&mut owner, 4).await.units["r3"].pinned);
    let (_, entries) = record(&mut owner, 5).await;
    assert!(entries[0].text.contains("r3 pin"), "{entries:?}");

    server.stop().await;
}

/// An export that does not verify is refused with the verifier's reason, and the connection
/// stays as it was. (A valid one is opened by the spectator page's test, `watch_page.rs`.)
#[tokio::test]
async fn a_review_needs_a_valid_export() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path(), Config::default()).await;
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("{}/v1", server.url))
        .await
        .unwrap();
    let refused = ask(
        &mut ws,
        &ClientMessage::Review {
            export: "asl-game-log 1\ngame 00\n".into(),
            server_key: None,
            receipts: vec![],
        },
    )
    .await;
    match refused {
        ServerMessage::Error { code, message } => {
            assert_eq!(code, ErrorCode::BadExport);
            assert!(message.starts_with("not a valid export: "), "{message}");
        }
        other => panic!("expected bad_export, got {other:?}"),
    }
    // Still open, and not reviewing: reads need a game.
    match ask(&mut ws, &ClientMessage::GetRecord { from: 1 }).await {
        ServerMessage::Error { code, .. } => assert_eq!(code, ErrorCode::NotJoined),
        other => panic!("expected not_joined, got {other:?}"),
    }
    server.stop().await;
}

/// The watch page's LOS thread: a spectator asks for the LOS between two hexes and the server
/// answers with the engine's verdict and reasons; nothing changes.
#[tokio::test]
async fn a_spectator_asks_for_los_between_two_hexes() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path(), Config::default()).await;
    let created = create(&server).await;
    let mut ws = viewer(&server.url, &created.game, &created.tokens.spectator).await;
    let (from, to): (Hex, Hex) = ("12E3".parse().unwrap(), "12E7".parse().unwrap());
    match ask(&mut ws, &ClientMessage::Los { from, to }).await {
        ServerMessage::Los {
            verdict, reasons, ..
        } => {
            assert_eq!(
                verdict,
                Some(protocol::board::los::Verdict::Blocked),
                "{reasons:?}"
            );
            assert!(reasons.iter().any(|r| r.contains("B23")), "{reasons:?}");
        }
        other => panic!("expected a LOS answer, got {other:?}"),
    }
    assert_eq!(
        state_at(&mut ws, 99).await.version,
        1,
        "asking changed nothing"
    );
}

//! End to end: every kind of bad input gets a clear, typed answer under the documented policy
//! (docs/protocol.md), and the game is untouched by it.

use e2e::TestServer;
use futures_util::{SinkExt, StreamExt};
use protocol::wire::{self, ClientMessage, ErrorCode, ServerMessage, FRAME_BYTES_MAX};
use protocol::Command;
use server::operations::config::Config;
use std::time::Duration;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::Message;

const SCENARIO: &str = include_str!("../../scenarios/b9-41-wall-advantage.toml");

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn open(url: &str) -> Socket {
    let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
        .max_message_size(Some(4 * FRAME_BYTES_MAX))
        .max_frame_size(Some(4 * FRAME_BYTES_MAX));
    tokio_tungstenite::connect_async_with_config(format!("{url}/v1"), Some(config), false)
        .await
        .expect("connect")
        .0
}

async fn send(ws: &mut Socket, message: &ClientMessage) {
    ws.send(Message::text(wire::to_json(message)))
        .await
        .unwrap();
}

/// The next protocol message, whichever codec it came in.
async fn recv(ws: &mut Socket) -> ServerMessage {
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(10), ws.next())
            .await
            .expect("a message in time")
            .expect("connection open")
            .expect("a frame");
        match frame {
            Message::Text(t) => return wire::from_json(t.as_str()).unwrap(),
            Message::Binary(b) => return wire::from_bincode(&b).unwrap(),
            Message::Close(c) => panic!("closed: {c:?}"),
            _ => continue,
        }
    }
}

fn error_code(message: ServerMessage) -> ErrorCode {
    match message {
        ServerMessage::Error { code, .. } => code,
        other => panic!("expected an error, got {other:?}"),
    }
}

async fn ping_answers(ws: &mut Socket) {
    send(ws, &ClientMessage::Ping { nonce: 42 }).await;
    assert_eq!(recv(ws).await, ServerMessage::Pong { nonce: 42 });
}

/// Waits for the close frame and returns its code.
async fn close_code(ws: &mut Socket) -> CloseCode {
    loop {
        match tokio::time::timeout(Duration::from_secs(10), ws.next())
            .await
            .expect("close in time")
        {
            Some(Ok(Message::Close(Some(frame)))) => return frame.code,
            Some(Ok(_)) => continue,
            other => panic!("expected a close frame, got {other:?}"),
        }
    }
}

async fn create(ws: &mut Socket) -> (String, protocol::wire::Tokens) {
    send(
        ws,
        &ClientMessage::CreateGame {
            scenario: SCENARIO.into(),
            admin_token: None,
        },
    )
    .await;
    match recv(ws).await {
        ServerMessage::Created { game, tokens, .. } => (game, tokens),
        other => panic!("expected created, got {other:?}"),
    }
}

async fn join(ws: &mut Socket, game: &str, token: &str) -> ServerMessage {
    send(
        ws,
        &ClientMessage::Join {
            game: game.into(),
            token: token.into(),
            since: None,
        },
    )
    .await;
    recv(ws).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_answered_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(
        dir.path(),
        Config {
            malformed_frames_max: 3,
            ..Config::default()
        },
    )
    .await;
    let mut ws = open(&server.url).await;

    // Malformed JSON, an unknown message type, and bincode garbage: typed errors, still open.
    ws.send(Message::text("{not json")).await.unwrap();
    assert_eq!(error_code(recv(&mut ws).await), ErrorCode::Malformed);
    ws.send(Message::text(r#"{"teleport":{"unit":"467a"}}"#))
        .await
        .unwrap();
    assert_eq!(error_code(recv(&mut ws).await), ErrorCode::Malformed);
    ping_answers(&mut ws).await;

    // A command before joining, a refused scenario naming its field.
    send(
        &mut ws,
        &ClientMessage::Command {
            id: 1,
            command: Command::Done,
            key: None,
        },
    )
    .await;
    assert_eq!(error_code(recv(&mut ws).await), ErrorCode::NotJoined);
    send(
        &mut ws,
        &ClientMessage::CreateGame {
            scenario: SCENARIO.replace("hex = \"55H5\"", "hex = \"55Z1\""),
            admin_token: None,
        },
    )
    .await;
    match recv(&mut ws).await {
        ServerMessage::Error { code, message } => {
            assert_eq!(code, ErrorCode::BadScenario);
            assert!(message.contains("units[0].hex"), "{message}");
            let line = SCENARIO
                .lines()
                .position(|l| l.contains("hex = \"55H5\""))
                .unwrap()
                + 1;
            assert!(
                message.starts_with(&format!("line {line}, column ")),
                "{message}"
            );
        }
        other => panic!("{other:?}"),
    }

    // Unknown games and wrong tokens are told apart; neither joins.
    let (game, tokens) = create(&mut ws).await;
    let unknown = join(&mut ws, &"0".repeat(32), &tokens.side_a).await;
    assert_eq!(error_code(unknown), ErrorCode::UnknownGame);
    assert_eq!(
        error_code(join(&mut ws, "not-a-game-id", &tokens.side_a).await),
        ErrorCode::UnknownGame
    );
    assert_eq!(
        error_code(join(&mut ws, &game, "wrong-token").await),
        ErrorCode::BadToken
    );

    // A spectator cannot act.
    let mut watcher = open(&server.url).await;
    assert!(matches!(
        join(&mut watcher, &game, &tokens.spectator).await,
        ServerMessage::Joined { .. }
    ));
    send(
        &mut watcher,
        &ClientMessage::Command {
            id: 1,
            command: Command::Done,
            key: None,
        },
    )
    .await;
    assert_eq!(error_code(recv(&mut watcher).await), ErrorCode::ReadOnly);

    // A side in bincode: the same schema, answered in bincode. A second join is refused.
    let mut russian = open(&server.url).await;
    let join_b = ClientMessage::Join {
        game: game.clone(),
        token: tokens.side_b.clone(),
        since: None,
    };
    russian
        .send(Message::binary(wire::to_bincode(&join_b)))
        .await
        .unwrap();
    let joined = russian.next().await.unwrap().unwrap();
    assert!(joined.is_binary(), "answered in the codec it was asked in");
    russian
        .send(Message::binary(wire::to_bincode(&join_b)))
        .await
        .unwrap();
    assert_eq!(
        error_code(recv(&mut russian).await),
        ErrorCode::AlreadyJoined
    );
    let wrong_turn = ClientMessage::Command {
        id: 5,
        command: Command::Done,
        key: None,
    };
    russian
        .send(Message::binary(wire::to_bincode(&wrong_turn)))
        .await
        .unwrap();
    match recv(&mut russian).await {
        ServerMessage::Refused { id, violation, .. } => {
            assert_eq!(id, 5);
            assert_eq!(violation.rule, "A3.1");
        }
        other => panic!("{other:?}"),
    }

    // None of it touched the game: still version 1, nobody's step taken.
    send(&mut watcher, &ClientMessage::GetState).await;
    match recv(&mut watcher).await {
        ServerMessage::State { version, .. } => assert_eq!(version, 1),
        other => panic!("{other:?}"),
    }

    // The malformed-frame limit (3 here) closes the connection with a policy close.
    ws.send(Message::binary(vec![0xff, 0xff])).await.unwrap();
    assert_eq!(error_code(recv(&mut ws).await), ErrorCode::Malformed);
    assert_eq!(close_code(&mut ws).await, CloseCode::Policy);

    // An oversized frame is refused and the connection closed as "too big".
    let mut big = open(&server.url).await;
    big.send(Message::text("x".repeat(FRAME_BYTES_MAX + 1)))
        .await
        .unwrap();
    assert_eq!(error_code(recv(&mut big).await), ErrorCode::TooLarge);
    assert_eq!(close_code(&mut big).await, CloseCode::Size);

    // Any path but /v1 is refused at the handshake.
    let wrong_path = tokio_tungstenite::connect_async(format!("{}/v2", server.url)).await;
    assert!(wrong_path.is_err());

    drop((watcher, russian));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_are_enforced_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(
        dir.path(),
        Config {
            connections_max: 4,
            spectators_per_game_max: 1,
            commands_per_second_max: 2,
            admin_token: Some("let-me-create".into()),
            ..Config::default()
        },
    )
    .await;

    // Creation needs the admin token on this server.
    let mut a = open(&server.url).await;
    send(
        &mut a,
        &ClientMessage::CreateGame {
            scenario: SCENARIO.into(),
            admin_token: Some("guess".into()),
        },
    )
    .await;
    assert_eq!(
        error_code(recv(&mut a).await),
        ErrorCode::CreationRestricted
    );
    send(
        &mut a,
        &ClientMessage::CreateGame {
            scenario: SCENARIO.into(),
            admin_token: Some("let-me-create".into()),
        },
    )
    .await;
    let (game, tokens) = match recv(&mut a).await {
        ServerMessage::Created { game, tokens, .. } => (game, tokens),
        other => panic!("{other:?}"),
    };

    // One spectator per game: the second is refused by name. Seats have their own quota.
    assert!(matches!(
        join(&mut a, &game, &tokens.side_a).await,
        ServerMessage::Joined { .. }
    ));
    let mut b = open(&server.url).await;
    assert!(matches!(
        join(&mut b, &game, &tokens.spectator).await,
        ServerMessage::Joined { .. }
    ));
    let mut b2 = open(&server.url).await;
    match join(&mut b2, &game, &tokens.spectator).await {
        ServerMessage::Error { code, message } => {
            assert_eq!(code, ErrorCode::LimitReached);
            assert!(message.contains("per-game limit"), "{message}");
        }
        other => panic!("{other:?}"),
    }

    // Commands per second: a burst of 2 passes, the third is refused unsent.
    let mut limited = 0;
    for id in 1..=3 {
        send(
            &mut a,
            &ClientMessage::Command {
                id,
                command: Command::Adjudicate {
                    unit: "467a".into(),
                    outcome: protocol::Outcome::Pin,
                    note: String::new(),
                },
                key: None,
            },
        )
        .await;
    }
    for _ in 1..=3 {
        if let ServerMessage::Error { code, .. } = recv(&mut a).await {
            assert_eq!(code, ErrorCode::LimitReached);
            limited += 1;
        }
    }
    assert_eq!(limited, 1);

    // Past the connection limit (4: a, b, b2, c), a fifth is told why and closed.
    let _c = open(&server.url).await;
    let mut d = open(&server.url).await;
    assert_eq!(error_code(recv(&mut d).await), ErrorCode::LimitReached);
    assert_eq!(close_code(&mut d).await, CloseCode::Again);

    drop((a, b, b2, _c));
    server.stop().await;
}

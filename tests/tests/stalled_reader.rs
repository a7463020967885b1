//! A client that asks for the state and never reads its socket again: the server ends the
//! connection within the bound `docs/protocol.md` states for it, `IDLE_TIMEOUT` and one
//! `SEND_TIMEOUT` after the client's last frame.
//!
//! Alone in its file (its own test binary, so its own process): it watches the server's
//! `asl_connections{kind="player"}` gauge, which counts the connections of the whole process,
//! and no other test's players may move it meanwhile.

use e2e::TestServer;
use futures_util::SinkExt;
use protocol::wire::{self, ClientMessage};
use server::operations::config::Config;
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::Message;

const SCENARIO: &str = include_str!("../../scenarios/b9-41-wall-advantage.toml");
const PLAYERS: &str = "asl_connections{kind=\"player\"}";

async fn players(server: &TestServer) -> f64 {
    e2e::metric(server.addr, PLAYERS).await
}

async fn send<S>(ws: &mut tokio_tungstenite::WebSocketStream<S>, message: &ClientMessage)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    ws.send(Message::text(wire::to_json(message)))
        .await
        .unwrap();
}

/// Runs one stalled reader against a server with `idle` and `send` as its idle timeout and
/// send deadline, asking for the state `asks` times; returns how long after its last frame the
/// server let go of it.
async fn stalled(idle: Duration, send_timeout: Duration, asks: usize) -> Duration {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(
        dir.path(),
        Config {
            idle_timeout: idle,
            send_timeout,
            socket_send_buffer_bytes: 4 * 1024,
            reads_per_second_max: 100_000,
            ..Config::default()
        },
    )
    .await;
    let created = {
        let mut c = client::Connection::connect(&server.url).await.unwrap();
        c.create_game(SCENARIO, None).await.unwrap()
    };
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(2048).unwrap();
    let stream = socket.connect(server.addr).await.unwrap();
    let (mut stuck, _) = tokio_tungstenite::client_async(format!("{}/v1", server.url), stream)
        .await
        .unwrap();
    send(
        &mut stuck,
        &ClientMessage::Join {
            game: created.game,
            token: created.tokens.side_a,
            since: None,
        },
    )
    .await;
    for _ in 0..asks {
        send(&mut stuck, &ClientMessage::GetState).await;
    }
    let last = Instant::now();
    // Polled, not timed: the server's own count of its players says when it let go.
    let gone = tokio::time::timeout(Duration::from_secs(120), async {
        // It is counted once it has joined.
        while players(&server).await < 1.0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        while players(&server).await > 0.0 {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    let took = last.elapsed();
    assert!(gone.is_ok(), "the connection ends at all");
    drop(stuck);
    server.stop().await;
    took
}

/// Issue 50: a client that asks for the state and never reads was let go two send deadlines
/// and two seconds after its request (the stuck send, then a close frame queued behind it,
/// then a drain for a client still sending): 8 s past a 3 s idle timeout. Now the send that
/// finds it not reading ends the connection, within `idle_timeout + send_timeout` of its last
/// frame as documented. The margin over that bound is for a slow, shared machine; before the
/// fix this took 22 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_asks_and_never_reads_is_let_go_within_the_documented_bound() {
    const IDLE: Duration = Duration::from_secs(3);
    const SEND: Duration = Duration::from_secs(10);
    const MARGIN: Duration = Duration::from_secs(6);
    let took = stalled(IDLE, SEND, 50).await;
    assert!(
        took <= IDLE + SEND + MARGIN,
        "held {took:?} after its last frame; the bound is {:?}",
        IDLE + SEND
    );
}

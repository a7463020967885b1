//! What the websocket tests of this crate share: a client socket and one request's answer.

use futures_util::{SinkExt, StreamExt};
use protocol::wire::{self, ClientMessage, ServerMessage};
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;

pub type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

pub async fn open(url: &str) -> Socket {
    tokio_tungstenite::connect_async(url).await.unwrap().0
}

/// Sends `message` as JSON and returns the next text frame's message.
pub async fn ask(ws: &mut Socket, message: ClientMessage) -> ServerMessage {
    ws.send(Message::text(wire::to_json(&message)))
        .await
        .unwrap();
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(20), ws.next())
            .await
            .expect("an answer in time")
            .expect("open")
            .expect("a frame");
        if let Message::Text(text) = frame {
            return wire::from_json(text.as_str()).unwrap();
        }
    }
}

/// Copies a stopped server's data directory (sled's files, not the admin socket).
#[allow(dead_code)]
pub fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_dir(&entry.path(), &target);
        } else if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Creates a game of `scenario` on the server at `url`: its id and tokens.
#[allow(dead_code)]
pub async fn create(url: &str, scenario: &str) -> (String, protocol::wire::Tokens) {
    let mut ws = open(url).await;
    match ask(
        &mut ws,
        ClientMessage::CreateGame {
            scenario: scenario.into(),
            admin_token: None,
        },
    )
    .await
    {
        ServerMessage::Created { game, tokens, .. } => (game, tokens),
        other => panic!("expected created, got {other:?}"),
    }
}

/// Joins game `game` with `token` on a new socket, from the start: the socket and the answer.
#[allow(dead_code)]
pub async fn join(url: &str, game: &str, token: &str) -> (Socket, ServerMessage) {
    let mut ws = open(url).await;
    let answer = ask(
        &mut ws,
        ClientMessage::Join {
            game: game.into(),
            token: token.into(),
            since: None,
        },
    )
    .await;
    (ws, answer)
}

/// Starts an `asl-server` child on a loopback port the system picks (`--listen
/// 127.0.0.1:0`) and returns it with the port its banner names, failing the test if no banner
/// comes within `within` (saying whether the child exited). No port is picked first and let
/// go, for another socket to take before the child binds it. The child's stdout is read to
/// its end on a thread of its own, so the child never blocks writing to it.
#[allow(dead_code)]
pub fn spawn_listening(
    mut command: std::process::Command,
    within: Duration,
    what: &str,
) -> (std::process::Child, u16) {
    use std::io::BufRead;
    let mut child = command
        .args(["--listen", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    let stdout = child.stdout.take().expect("the child's stdout, piped");
    let (port_tx, port_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut port_tx = Some(port_tx);
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let port = line
                .strip_prefix("asl-server listening on ")
                .and_then(|addr| addr.trim().parse::<std::net::SocketAddr>().ok())
                .map(|addr| addr.port());
            if let Some(port) = port {
                if let Some(tx) = port_tx.take() {
                    let _ = tx.send(port);
                }
            }
        }
    });
    match port_rx.recv_timeout(within) {
        Ok(port) => (child, port),
        Err(e) => {
            let _ = child.kill();
            let status = child.wait();
            panic!("{what} did not say where it listens within {within:?} ({e}); it ended with {status:?}")
        }
    }
}

/// A server run in this process on a loopback port, until `stop`.
#[allow(dead_code)]
pub struct Running {
    pub url: String,
    stop: tokio::sync::oneshot::Sender<()>,
    done: tokio::task::JoinHandle<Result<(), server::RunError>>,
}

#[allow(dead_code)]
impl Running {
    pub async fn start(
        store: std::sync::Arc<dyn server::store::EventStore>,
        config: server::operations::config::Config,
    ) -> Running {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("ws://{}/v1", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let done = tokio::spawn(server::run(listener, store, config, async {
            let _ = stopped.await;
        }));
        Running { url, stop, done }
    }

    /// Stops the server and waits until it has let go of its store.
    pub async fn stop(self) {
        let _ = self.stop.send(());
        self.done.await.unwrap().unwrap();
    }
}

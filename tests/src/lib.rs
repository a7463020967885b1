//! Starting and stopping a real server for end-to-end tests: the same `server::run` the
//! binary calls, on `127.0.0.1:0`, with a sled store in a directory the test owns; and a
//! headless browser for the spectator page ([`chromium`]).

pub mod chromium;
pub mod receiver;
pub mod smtp;

use server::operations::config::Config;
use server::store::{EventStore, SledStore};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// How long [`TestServer::start_at`] keeps trying to bind an address a stopped server has just
/// let go of. The listening socket is released as soon as `stop` returns, so this only covers
/// a loaded machine; it is short enough that an address taken for good fails the test quickly.
pub const REBIND_WAIT_MAX: Duration = Duration::from_secs(2);

pub struct TestServer {
    /// `ws://127.0.0.1:PORT`, for the client's `--server`.
    pub url: String,
    /// Where it listens, for [`TestServer::start_at`] after a stop.
    pub addr: SocketAddr,
    stop: oneshot::Sender<()>,
    running: JoinHandle<Result<(), server::RunError>>,
}

impl TestServer {
    /// Starts a server on a free loopback port, storing its log in `data_dir`.
    pub async fn start(data_dir: &Path, config: Config) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        TestServer::serve(listener, data_dir, config)
    }

    /// Starts a server at `addr`, typically the address of one just stopped on the same
    /// `data_dir`: a client that lost its connection to the first one (`asl watch`) reconnects
    /// to the same URL, as it would to a production server restarted in place.
    ///
    /// The socket is bound with `SO_REUSEADDR`, because connections the old server closed leave
    /// that port in TIME_WAIT; binding is retried for up to [`REBIND_WAIT_MAX`].
    pub async fn start_at(data_dir: &Path, config: Config, addr: SocketAddr) -> TestServer {
        let deadline = Instant::now() + REBIND_WAIT_MAX;
        let listener = loop {
            match bind_reusing(addr) {
                Ok(listener) => break listener,
                Err(_) if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(e) => panic!("cannot bind {addr} again within {REBIND_WAIT_MAX:?}: {e}"),
            }
        };
        TestServer::serve(listener, data_dir, config)
    }

    /// Starts a server on a free loopback port over `store`: a test's own store, standing in
    /// for the disk where the test must decide when a write settles.
    pub async fn start_on(store: Arc<dyn EventStore>, config: Config) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        TestServer::serve_on(listener, store, config)
    }

    fn serve(listener: TcpListener, data_dir: &Path, config: Config) -> TestServer {
        let store = SledStore::open(data_dir).expect("open sled store");
        TestServer::serve_on(listener, Arc::new(store), config)
    }

    /// Starts a server on a free loopback port as [`TestServer::start`] does, but with no
    /// metrics token even by default: loopback then reads the public metrics only.
    pub async fn start_without_metrics_token(data_dir: &Path, config: Config) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let store = SledStore::open(data_dir).expect("open sled store");
        TestServer::serve_as_given(listener, Arc::new(store), config)
    }

    /// Serves with `config`, given [`METRICS_TOKEN`] when it sets no metrics token, so that
    /// [`metric`] reads every metric.
    fn serve_on(listener: TcpListener, store: Arc<dyn EventStore>, config: Config) -> TestServer {
        let config = Config {
            metrics_token: config.metrics_token.or(Some(METRICS_TOKEN.into())),
            ..config
        };
        TestServer::serve_as_given(listener, store, config)
    }

    fn serve_as_given(
        listener: TcpListener,
        store: Arc<dyn EventStore>,
        config: Config,
    ) -> TestServer {
        let addr = listener.local_addr().expect("local addr");
        let (stop, stopped) = oneshot::channel::<()>();
        let running = tokio::spawn(server::run(listener, store, config, async {
            let _ = stopped.await;
        }));
        TestServer {
            url: format!("ws://{addr}"),
            addr,
            stop,
            running,
        }
    }

    /// Stops the server as Ctrl-C would and waits until it has let go of the store and the
    /// listening socket, so the same data directory (and address) can be used again.
    pub async fn stop(self) {
        let _ = self.stop.send(());
        self.running
            .await
            .expect("server task")
            .expect("server ran cleanly");
    }
}

/// The metrics token a [`TestServer`] is given unless its config names one: `/metrics` serves
/// the operator's metrics only with a token (loopback without one reads the public ones).
pub const METRICS_TOKEN: &str = "e2e-metrics";

/// The `i`th adjudication (from 0) by the German on the Russian "?" `337a` of the scenarios the
/// tests use (`b9-41-wall-advantage`), named by the alias the German knows it by (`?1`, its only
/// "?"; A12): broken, rallied, broken… each one accepted in turn.
pub fn adjudicate(i: u64) -> protocol::Command {
    protocol::Command::Adjudicate {
        unit: "?1".into(),
        outcome: if i.is_multiple_of(2) {
            protocol::Outcome::Break
        } else {
            protocol::Outcome::Rally
        },
        note: String::new(),
    }
}

/// The value of one line of the server's `/metrics` (`name` with its labels, as printed), or
/// 0 when the line is absent. Metrics are process-wide, so tests compare before and after.
pub async fn metric(addr: SocketAddr, name: &str) -> f64 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    stream
        .write_all(
            format!(
                "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {METRICS_TOKEN}\r\n\r\n"
            )
            .as_bytes(),
        )
        .await
        .expect("send request");
    let mut text = String::new();
    stream.read_to_string(&mut text).await.expect("metrics");
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
        .unwrap_or(0.0)
}

fn bind_reusing(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = match addr {
        SocketAddr::V4(_) => TcpSocket::new_v4()?,
        SocketAddr::V6(_) => TcpSocket::new_v6()?,
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    // The backlog `TcpListener::bind` uses.
    socket.listen(1024)
}

/// Copies a stopped server's data directory (sled's files): an older copy to put back, as an
/// operator restoring one would.
pub fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("read the data directory") {
        let entry = entry.expect("a directory entry");
        let target = to.join(entry.file_name());
        let kind = entry.file_type().expect("a file type");
        if kind.is_dir() {
            std::fs::create_dir_all(&target).expect("create a directory");
            copy_dir(&entry.path(), &target);
        } else if kind.is_file() {
            std::fs::copy(entry.path(), target).expect("copy a file");
        }
    }
}

/// A raw websocket client, for the tests that speak the protocol frame by frame.
pub type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// The next JSON message on `ws`, stream events included, within `wait` (a test's own bound:
/// generous, since the machine may be loaded).
pub async fn message(ws: &mut Socket, wait: Duration) -> protocol::wire::ServerMessage {
    use futures_util::StreamExt;
    use tokio_tungstenite::tungstenite::Message;
    loop {
        let frame = tokio::time::timeout(wait, ws.next())
            .await
            .expect("a message in time")
            .expect("connection open")
            .expect("a frame");
        if let Message::Text(text) = frame {
            return protocol::wire::from_json(text.as_str()).unwrap();
        }
    }
}

/// The next JSON message on `ws` that is not a stream event, within `wait`.
pub async fn answer(ws: &mut Socket, wait: Duration) -> protocol::wire::ServerMessage {
    loop {
        match message(ws, wait).await {
            protocol::wire::ServerMessage::Event(_) => continue,
            answer => return answer,
        }
    }
}

/// Sends `message` as JSON and returns the first answer that is not a stream event.
pub async fn ask(
    ws: &mut Socket,
    message: &protocol::wire::ClientMessage,
    wait: Duration,
) -> protocol::wire::ServerMessage {
    use futures_util::SinkExt;
    use tokio_tungstenite::tungstenite::Message;
    ws.send(Message::text(protocol::wire::to_json(message)))
        .await
        .unwrap();
    answer(ws, wait).await
}

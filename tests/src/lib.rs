//! Starting and stopping a real server for end-to-end tests: the same `server::run` the
//! binary calls, on `127.0.0.1:0`, with a sled store in a directory the test owns.

use server::config::Config;
use server::store::SledStore;
use std::path::Path;
use std::sync::Arc;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub struct TestServer {
    /// `ws://127.0.0.1:PORT`, for the client's `--server`.
    pub url: String,
    stop: oneshot::Sender<()>,
    running: JoinHandle<Result<(), String>>,
}

impl TestServer {
    /// Starts a server on a free loopback port, storing its log in `data_dir`.
    pub async fn start(data_dir: &Path, config: Config) -> TestServer {
        let store = SledStore::open(data_dir).expect("open sled store");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let url = format!("ws://{}", listener.local_addr().expect("local addr"));
        let (stop, stopped) = oneshot::channel::<()>();
        let running = tokio::spawn(server::run(listener, Arc::new(store), config, async {
            let _ = stopped.await;
        }));
        TestServer { url, stop, running }
    }

    /// Stops the server as Ctrl-C would and waits until it has let go of the store, so the
    /// same data directory can be opened again.
    pub async fn stop(self) {
        let _ = self.stop.send(());
        self.running
            .await
            .expect("server task")
            .expect("server ran cleanly");
    }
}

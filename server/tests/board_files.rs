//! The operator's boards directory holding what is not a board archive (issue 50): a named pipe
//! where `bd09` should be, and a file far larger than any archive. Anyone may ask for a
//! board's image, so neither may cost the server more than a refusal: the pipe never holds a
//! thread of the runtime (`/healthz`, new games and other games go on answering while image
//! requests for it pile up), and the large file is never read.
//!
//! The server runs on a runtime of its own with two workers, as on a two-core machine; the
//! test's clients run on another, so a server whose workers are all stuck cannot stop the
//! test from noticing. No timing assertions: each answer is awaited with a generous bound.

mod common;

use protocol::board::vasl::synth::SynthBoard;
use protocol::wire::{ClientMessage, ErrorCode, ServerMessage};
use server::operations::config::Config;
use server::store::MemoryStore;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const SCENARIO: &str = include_str!("../../scenarios/b9-41-wall-advantage.toml");

/// A generous bound for an answer that must not wait on a board file.
const ANSWER_WAIT_MAX: Duration = Duration::from_secs(20);

/// Image requests fired at once: more than the runtime's workers, and than the blocking reads
/// the server allows, so any of them holding a thread would be seen.
const IMAGE_REQUESTS: usize = 16;

/// A game on board 9 (whose archive is the named pipe).
const ON_BOARD_9: &str = r#"name = "On board 9"
turns = 2
first = "german"
sides = [{ id = "german", name = "German" }, { id = "russian", name = "Russian" }]

[map]
boards = [["9"]]

[[units]]
id = "ge"
side = "german"
kind = "squad"
ratings = "4-6-7"
hex = "9D5"
"#;

/// A server on a runtime of its own, stopped without waiting for its workers when dropped (a
/// worker stuck in `open` would never finish), after the named pipes it was given are opened
/// for writing and closed, so whatever blocks on them wakes.
struct Server {
    addr: SocketAddr,
    runtime: Option<tokio::runtime::Runtime>,
    pipes: Vec<PathBuf>,
}

impl Server {
    fn start(boards: &Path, pipes: Vec<PathBuf>) -> Server {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let config = Config {
            boards: Some(server::operations::boards::open(boards, None).unwrap()),
            ..Config::default()
        };
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let addr = listener.local_addr().unwrap();
        runtime.spawn(server::run(
            listener,
            Arc::new(MemoryStore::new()),
            config,
            std::future::pending(),
        ));
        Server {
            addr,
            runtime: Some(runtime),
            pipes,
        }
    }

    fn url(&self) -> String {
        format!("ws://{}/v1", self.addr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        for pipe in &self.pipes {
            use std::os::unix::fs::OpenOptionsExt;
            // Fails when no one has it open for reading: nothing to wake then.
            let _ = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(pipe);
        }
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

fn mkfifo(path: &Path) {
    let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `name` is a NUL-terminated path that lives across the call.
    let made = unsafe { libc::mkfifo(name.as_ptr(), 0o600) };
    assert_eq!(made, 0, "mkfifo {}", path.display());
}

/// `GET path` as HTTP/1.1: the status and the body.
async fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(
            format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .await
        .unwrap();
    let mut answer = vec![];
    stream.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {answer}"));
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

async fn within<T>(what: &str, future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(ANSWER_WAIT_MAX, future)
        .await
        .unwrap_or_else(|_| panic!("{what}: no answer within {ANSWER_WAIT_MAX:?}"))
}

fn client_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn a_named_pipe_among_the_boards_blocks_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut one = SynthBoard::sized("01", 5, 2, 230, 130);
    one.image = Some(one.painted_png());
    std::fs::write(dir.path().join("bd01"), one.archive()).unwrap();
    let pipe = dir.path().join("bd09");
    mkfifo(&pipe);
    let server = Server::start(dir.path(), vec![pipe]);
    let addr = server.addr;
    let url = server.url();

    client_runtime().block_on(async move {
        let images: Vec<_> = (0..IMAGE_REQUESTS)
            .map(|_| tokio::spawn(get(addr, "/boards/9/image")))
            .collect();
        // Give the requests time to reach the server and be stuck, if they can be.
        tokio::time::sleep(Duration::from_millis(500)).await;

        let (status, body) = within("/healthz", get(addr, "/healthz")).await;
        assert_eq!((status, body.as_str()), (200, "ok\n"));
        let (game, _) = within("a new game", common::create(&url, SCENARIO)).await;
        assert!(!game.is_empty());
        // Another board's image is served meanwhile.
        let (status, _) = within("board 1's image", get(addr, "/boards/1/image")).await;
        assert_eq!(status, 200);

        // A game on board 9 is refused at once, saying what the file is.
        let mut ws = within("a socket", common::open(&url)).await;
        let answer = within(
            "a game on board 9",
            common::ask(
                &mut ws,
                ClientMessage::CreateGame {
                    scenario: ON_BOARD_9.into(),
                    admin_token: None,
                },
            ),
        )
        .await;
        match answer {
            ServerMessage::Error { code, message } => {
                assert_eq!(code, ErrorCode::BadScenario, "{message}");
                assert!(message.contains("bd09 is a named pipe"), "{message}");
                assert!(message.contains("regular files only"), "{message}");
            }
            other => panic!("expected a refusal, got {other:?}"),
        }

        // Every image request is refused, in words, without a path of the operator's.
        for request in images {
            let (status, body) = within("an image of board 9", request).await.unwrap();
            assert_eq!(status, 404, "{body}");
            assert!(body.contains("no board 9"), "{body}");
            assert!(!body.contains("bd09"), "{body}");
        }
    });
    drop(server);
}

/// Bytes this process has read (`rchar` of `/proc/self/io`): from files, sockets, anything.
fn bytes_read_by_this_process() -> u64 {
    let io = std::fs::read_to_string("/proc/self/io").unwrap();
    io.lines()
        .find_map(|l| l.strip_prefix("rchar: "))
        .and_then(|n| n.trim().parse().ok())
        .expect("rchar in /proc/self/io")
}

#[test]
fn an_oversized_board_file_is_refused_without_being_read() {
    use protocol::board::vasl::archive::ARCHIVE_BYTES_MAX;
    let dir = tempfile::tempdir().unwrap();
    // Sparse: 80 MiB to whoever reads it, no room on the disk.
    let big = std::fs::File::create(dir.path().join("bd07")).unwrap();
    const OVERSIZED_BYTES: u64 = 80 << 20;
    const { assert!(OVERSIZED_BYTES > ARCHIVE_BYTES_MAX as u64) };
    big.set_len(OVERSIZED_BYTES).unwrap();
    let server = Server::start(dir.path(), vec![]);
    let addr = server.addr;

    client_runtime().block_on(async move {
        let before = bytes_read_by_this_process();
        let asked: Vec<_> = (0..8)
            .map(|_| tokio::spawn(get(addr, "/boards/7/image")))
            .collect();
        for request in asked {
            let (status, body) = within("an image of board 7", request).await.unwrap();
            assert_eq!(status, 404, "{body}");
            assert!(body.to_lowercase().contains("board 7"), "{body}");
        }
        let (status, _) = within("board 7 again", get(addr, "/boards/7/image")).await;
        assert_eq!(status, 404);
        let read = bytes_read_by_this_process() - before;
        // Not one archive's worth: only requests, answers and the like (kilobytes). Other
        // tests of this file run meanwhile, and read little.
        assert!(
            read < (ARCHIVE_BYTES_MAX as u64) / 8,
            "{read} bytes read to refuse an oversized board file nine times"
        );
    });
    drop(server);
}

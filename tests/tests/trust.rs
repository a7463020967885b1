//! End to end, the third round of trust (issue 36): what a player, a spectator or a page can
//! no longer do over the wire. One test per attack, each showing what the server does now;
//! none measures time.

use client::{Connection, ConnectionError, Reply};
use e2e::TestServer;
use protocol::wire::ErrorCode;
use protocol::Command;
use server::operations::config::Config;

const SCENARIO: &str = include_str!("../../scenarios/b9-41-wall-advantage.toml");

fn config() -> Config {
    Config {
        commands_per_second_max: 100_000,
        ..Config::default()
    }
}

async fn create(url: &str) -> (String, protocol::wire::Tokens) {
    let mut c = Connection::connect(url).await.unwrap();
    let game = c.create_game(SCENARIO, None).await.unwrap();
    c.close().await;
    (game.game, game.tokens)
}

/// Asserts `result` is the server's error `code`, its message containing `why`.
fn assert_error<T: std::fmt::Debug>(
    result: Result<T, ConnectionError>,
    code: ErrorCode,
    why: &str,
) {
    match result {
        Err(ConnectionError::Server { code: got, message }) => {
            assert_eq!(got, code, "{message}");
            assert!(message.contains(why), "{message}");
        }
        other => panic!("expected {code:?} ({why}), got {other:?}"),
    }
}

/// An exactly-once key is bound to its command: `concede` sent under the key of an accepted
/// adjudication is refused (never answered `accepted` with the old events, as if it had run),
/// while the adjudication sent again is still answered from the log — before a restart and
/// after, when the key is known from the log alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_used_key_with_another_command_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path(), config()).await;
    let (game, tokens) = create(&server.url).await;
    let mut german = Connection::connect(&server.url).await.unwrap();
    german.join(&game, &tokens.side_a, None).await.unwrap();
    let first = match german
        .command(1, e2e::adjudicate(0), Some(5))
        .await
        .unwrap()
    {
        Reply::Accepted { events, .. } => events.iter().map(|e| e.seq).collect::<Vec<_>>(),
        other => panic!("{other:?}"),
    };
    let mut server = server;
    for restarted in [false, true] {
        if restarted {
            german.close().await;
            server.stop().await;
            server = TestServer::start(dir.path(), config()).await;
            german = Connection::connect(&server.url).await.unwrap();
            german.join(&game, &tokens.side_a, None).await.unwrap();
        }
        assert_error(
            german.command(2, Command::Concede, Some(5)).await,
            ErrorCode::KeyReused,
            "already used by another command",
        );
        match german
            .command(3, e2e::adjudicate(0), Some(5))
            .await
            .unwrap()
        {
            Reply::Accepted { events, .. } => {
                let again: Vec<u64> = events.iter().map(|e| e.seq).collect();
                assert_eq!(again, first, "restarted: {restarted}")
            }
            other => panic!("{other:?}"),
        }
        // The concession never ran: the game goes on (rallied, then broken again, so each
        // round starts from a broken squad).
        for (id, i) in [(4, 1), (5, 2)] {
            assert!(matches!(
                german.command(id, e2e::adjudicate(i), None).await.unwrap(),
                Reply::Accepted { .. }
            ));
        }
    }
    german.close().await;
    server.stop().await;
}

/// One HTTP exchange on a fresh socket: the status line the server answers `request` with.
async fn status_of(addr: std::net::SocketAddr, request: String) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = vec![0; 512];
    let n = stream.read(&mut answer).await.unwrap();
    String::from_utf8_lossy(&answer[..n])
        .lines()
        .next()
        .unwrap_or("")
        .to_string()
}

/// DNS rebinding: a page at `evil.example`, its name pointed at 127.0.0.1, opens the game
/// protocol with an `Origin` matching its `Host`. Refused (421) by the name it uses, as is its
/// fetch of a page; the same requests naming the server by its address are served, and a
/// scraper (no browser headers) is served whatever its `Host`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebound_host_name_is_refused_to_browsers() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path(), config()).await;
    let port = server.addr.port();
    let upgrade = |host: &str| {
        format!(
            "GET /v1 HTTP/1.1\r\nHost: {host}:{port}\r\nOrigin: http://{host}:{port}\r\n\
             Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
        )
    };
    let page = |host: &str, browser: bool| {
        let fetch = if browser {
            "Sec-Fetch-Mode: navigate\r\n"
        } else {
            ""
        };
        format!("GET /watch HTTP/1.1\r\nHost: {host}:{port}\r\n{fetch}\r\n")
    };
    let addr = server.addr;
    assert!(status_of(addr, upgrade("evil.example"))
        .await
        .contains(" 421 "));
    assert!(status_of(addr, page("evil.example", true))
        .await
        .contains(" 421 "));
    assert!(status_of(addr, upgrade("127.0.0.1"))
        .await
        .contains(" 101 "));
    assert!(status_of(addr, upgrade("localhost"))
        .await
        .contains(" 101 "));
    assert!(status_of(addr, page("127.0.0.1", true))
        .await
        .contains(" 200 "));
    assert!(status_of(addr, page("evil.example", false))
        .await
        .contains(" 200 "));
    server.stop().await;
}

/// The whole answer to an HTTP request (the server closes the connection after it).
async fn answer_of(addr: std::net::SocketAddr, request: String) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = vec![];
    stream.read_to_end(&mut answer).await.unwrap();
    String::from_utf8_lossy(&answer).into_owned()
}

/// A player on the server's own machine, no metrics token set: `/metrics` answers him the
/// public metrics only, and they stay as they were while the opponent's HIP unit acts (an
/// adjudication his stream never shows) — no count of commands, appends or receipts moves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn public_metrics_say_nothing_of_a_hidden_unit() {
    const HIDDEN: &str = include_str!("../../protocol/tests/hidden/scenario.toml");
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start_without_metrics_token(dir.path(), config()).await;
    let mut c = Connection::connect(&server.url).await.unwrap();
    let created = c.create_game(HIDDEN, None).await.unwrap();
    c.close().await;
    let mut russian = Connection::connect(&server.url).await.unwrap();
    russian
        .join(&created.game, &created.tokens.side_b, None)
        .await
        .unwrap();
    let scrape = || {
        answer_of(
            server.addr,
            "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".into(),
        )
    };
    // Connections and games loaded move as other tests in this process connect; the rest of
    // the text is what must not move.
    let steady = |answer: String| -> Vec<String> {
        let body = answer.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
        body.lines()
            .filter(|l| !l.starts_with("asl_connections") && !l.starts_with("asl_games_loaded"))
            .map(str::to_string)
            .collect()
    };
    let before = scrape().await;
    assert!(before.contains(" 200 "), "{before}");
    assert!(!before.contains("asl_commands"), "{before}");
    for key in 1..=3 {
        let hidden = protocol::Command::Adjudicate {
            unit: "rh".into(),
            outcome: if key % 2 == 1 {
                protocol::Outcome::Break
            } else {
                protocol::Outcome::Rally
            },
            note: String::new(),
        };
        match russian.command(key, hidden, Some(key)).await.unwrap() {
            Reply::Accepted { .. } => {}
            other => panic!("{other:?}"),
        }
    }
    let after = scrape().await;
    assert_eq!(steady(after), steady(before));
    server.stop().await;
}

/// `/metrics` counts commands, events and receipts as a game's hidden units act: it is the
/// operator's. With a metrics token set, a scrape without it is refused (401) and one bearing
/// it is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_are_the_operators() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(
        dir.path(),
        Config {
            metrics_token: Some("operator-only".into()),
            ..config()
        },
    )
    .await;
    let scrape = |auth: &str| format!("GET /metrics HTTP/1.1\r\nHost: x\r\n{auth}\r\n");
    assert!(status_of(server.addr, scrape("")).await.contains(" 401 "));
    let wrong = scrape("Authorization: Bearer guess\r\n");
    assert!(status_of(server.addr, wrong).await.contains(" 401 "));
    let right = scrape("Authorization: Bearer operator-only\r\n");
    assert!(status_of(server.addr, right).await.contains(" 200 "));
    server.stop().await;
}

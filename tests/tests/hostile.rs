//! End to end, hostile clients: one test per attack of issue 18, each showing what the server
//! does now. None measures time: where a limit is about time (handshake, sends, shutdown) the
//! test sets it small and waits, with a generous bound, for what must follow.

use client::{Connection, Reply};
use e2e::{Socket, TestServer};
use futures_util::{SinkExt, StreamExt};
use protocol::wire::{self, ClientMessage, ErrorCode, ServerMessage};
use protocol::Command;
use protocol::ReadScenario;
use server::operations::config::Config;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;

const SCENARIO: &str = include_str!("../../scenarios/b9-41-wall-advantage.toml");
const WAIT: Duration = Duration::from_secs(60);

async fn open(url: &str) -> Socket {
    tokio_tungstenite::connect_async(format!("{url}/v1"))
        .await
        .expect("connect")
        .0
}

async fn send<S>(ws: &mut tokio_tungstenite::WebSocketStream<S>, message: &ClientMessage)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    ws.send(Message::text(wire::to_json(message)))
        .await
        .unwrap();
}

/// The next message that is not a stream event.
async fn recv(ws: &mut Socket) -> ServerMessage {
    e2e::answer(ws, WAIT).await
}

fn error_code(message: ServerMessage) -> ErrorCode {
    match message {
        ServerMessage::Error { code, .. } => code,
        other => panic!("expected an error, got {other:?}"),
    }
}

/// Reads until the close frame; returns it (or `None` if the socket ended without one).
async fn close_frame(ws: &mut Socket) -> Option<CloseFrame> {
    tokio::time::timeout(WAIT, async {
        while let Some(frame) = ws.next().await {
            match frame {
                Ok(Message::Close(frame)) => return frame,
                Ok(_) => continue,
                Err(_) => return None,
            }
        }
        None
    })
    .await
    .expect("the connection ends in time")
}

async fn create(url: &str, scenario: &str) -> (String, protocol::wire::Tokens) {
    let mut c = Connection::connect(url).await.unwrap();
    let game = c.create_game(scenario, None).await.unwrap();
    (game.game, game.tokens)
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

use e2e::adjudicate;

/// One HTTP exchange on a fresh socket: what the server answers to `request`, whole.
async fn http(addr: SocketAddr, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    // The server may answer and close before it has read everything sent.
    let _ = stream.write_all(request).await;
    let mut answer = vec![];
    let _ = tokio::time::timeout(WAIT, stream.read_to_end(&mut answer))
        .await
        .expect("an answer in time");
    String::from_utf8_lossy(&answer).into_owned()
}

fn status(answer: &str) -> &str {
    answer.lines().next().unwrap_or("")
}

/// A server with `config` in a directory of its own (kept as long as the server runs).
async fn start(config: Config) -> (tempfile::TempDir, TestServer) {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path(), config).await;
    (dir, server)
}

/// Asserts `message` is `limit_reached` naming `why`.
fn assert_limit(message: ServerMessage, why: &str) {
    match message {
        ServerMessage::Error { code, message } => {
            assert_eq!(code, ErrorCode::LimitReached, "{message}");
            assert!(message.contains(why), "{message}");
        }
        other => panic!("expected limit_reached ({why}), got {other:?}"),
    }
}

fn start_config() -> Config {
    Config {
        commands_per_second_max: 100_000,
        ..Config::default()
    }
}

/// Row 1: sockets that never send a byte are dropped at the handshake deadline, and a player
/// then gets in — they no longer hold every slot for ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_sockets_are_dropped_at_the_handshake_deadline() {
    let (_dir, server) = start(Config {
        connections_max: 20,
        handshake_timeout: Duration::from_millis(500),
        ..start_config()
    })
    .await;
    let (game, tokens) = create(&server.url, SCENARIO).await;
    let mut silent = vec![];
    for _ in 0..20 {
        silent.push(TcpStream::connect(server.addr).await.unwrap());
    }
    // Each is closed by the server: the read sees the end, having been sent nothing.
    for s in &mut silent {
        let mut buffer = [0u8; 64];
        let n = tokio::time::timeout(WAIT, s.read(&mut buffer))
            .await
            .expect("dropped in time")
            .unwrap_or(0);
        assert_eq!(n, 0, "a silent socket was answered");
    }
    let mut player = open(&server.url).await;
    assert!(matches!(
        join(&mut player, &game, &tokens.side_a).await,
        ServerMessage::Joined { .. }
    ));
    server.stop().await;
}

/// Row 3: an audience cannot fill a game: spectators have their own caps (per game and on the
/// whole server), and both seats still join.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spectators_cannot_take_a_players_seat() {
    let (_dir, server) = start(Config {
        spectators_per_game_max: 3,
        spectators_max: 4,
        ..start_config()
    })
    .await;
    let (game, tokens) = create(&server.url, SCENARIO).await;
    let (other, other_tokens) = create(&server.url, SCENARIO).await;
    let mut audience = vec![];
    for _ in 0..3 {
        let mut s = open(&server.url).await;
        assert!(matches!(
            join(&mut s, &game, &tokens.spectator).await,
            ServerMessage::Joined { .. }
        ));
        audience.push(s);
    }
    let mut fourth = open(&server.url).await;
    assert_limit(
        join(&mut fourth, &game, &tokens.spectator).await,
        "per-game limit",
    );
    // The server-wide cap: one more on another game, then none.
    assert!(matches!(
        join(&mut fourth, &other, &other_tokens.spectator).await,
        ServerMessage::Joined { .. }
    ));
    let mut sixth = open(&server.url).await;
    assert_limit(
        join(&mut sixth, &other, &other_tokens.spectator).await,
        "players can still join",
    );
    for token in [&tokens.side_a, &tokens.side_b] {
        let mut seat = open(&server.url).await;
        assert!(matches!(
            join(&mut seat, &game, token).await,
            ServerMessage::Joined { .. }
        ));
    }
    server.stop().await;
}

/// Row 4: an audience looping `get_state_at` cannot make a player's command wait behind it:
/// reads go to the audience's inbox, which the game serves after the players', and a full one
/// refuses the reader, never the player.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spectators_reading_in_a_loop_never_make_a_player_busy() {
    const READERS: usize = 30;
    const COMMANDS: u64 = 100;
    let (_dir, server) = start(Config {
        game_inbox_max: 4,
        reads_per_second_max: 1_000_000,
        ..start_config()
    })
    .await;
    let (game, tokens) = create(&server.url, SCENARIO).await;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut readers = vec![];
    for _ in 0..READERS {
        let (url, game, token, stop) = (
            server.url.clone(),
            game.clone(),
            tokens.spectator.clone(),
            stop.clone(),
        );
        readers.push(tokio::spawn(async move {
            let mut ws = open(&url).await;
            join(&mut ws, &game, &token).await;
            let mut busy = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                // Pipelined, to keep the audience's inbox full.
                for _ in 0..8 {
                    send(&mut ws, &ClientMessage::GetStateAt { version: 1 }).await;
                }
                for _ in 0..8 {
                    if let ServerMessage::Error { code, .. } = recv(&mut ws).await {
                        assert_eq!(code, ErrorCode::LimitReached);
                        busy += 1;
                    }
                }
            }
            busy
        }));
    }
    let mut player = Connection::connect(&server.url).await.unwrap();
    player.join(&game, &tokens.side_a, None).await.unwrap();
    for id in 1..=COMMANDS {
        match player.command(id, adjudicate(id - 1), None).await {
            Ok(Reply::Accepted { .. }) => {}
            other => panic!("command {id}: {other:?}"),
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for r in readers {
        tokio::time::timeout(WAIT, r).await.unwrap().unwrap();
    }
    server.stop().await;
}

/// Rows 6 and 13: creation is closed to anyone without the admin token where the operator has
/// not opened it (the default on any non-loopback address); where open, each address gets an
/// hourly allowance; a foreign page's websocket is refused at the handshake.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creation_is_bounded_and_foreign_pages_are_refused() {
    let (_dir, closed) = start(Config {
        open_creation: Some(false),
        ..start_config()
    })
    .await;
    let mut ws = open(&closed.url).await;
    send(
        &mut ws,
        &ClientMessage::CreateGame {
            scenario: SCENARIO.into(),
            admin_token: None,
        },
    )
    .await;
    assert_eq!(
        error_code(recv(&mut ws).await),
        ErrorCode::CreationRestricted
    );
    drop(ws);
    closed.stop().await;

    let (_dir, server) = start(Config {
        creates_per_ip_per_hour_max: 3,
        ..start_config()
    })
    .await;
    let mut ws = open(&server.url).await;
    let mut created = 0;
    let mut limited = 0;
    for _ in 0..5 {
        send(
            &mut ws,
            &ClientMessage::CreateGame {
                scenario: SCENARIO.into(),
                admin_token: None,
            },
        )
        .await;
        match recv(&mut ws).await {
            ServerMessage::Created { .. } => created += 1,
            ServerMessage::Error { code, message } => {
                assert_eq!(code, ErrorCode::LimitReached, "{message}");
                limited += 1;
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!((created, limited), (3, 2));

    // Origin: a foreign one is refused with 403; the server's own page is served.
    let host = server.addr.to_string();
    for (origin, allowed) in [
        ("https://evil.example".to_string(), false),
        (format!("http://{host}"), true),
    ] {
        let mut request = format!("{}/v1", server.url).into_client_request().unwrap();
        request
            .headers_mut()
            .insert("Origin", origin.parse().unwrap());
        let result = tokio_tungstenite::connect_async(request).await;
        match (result, allowed) {
            (Ok(_), true) => {}
            (Err(tokio_tungstenite::tungstenite::Error::Http(response)), false) => {
                assert_eq!(response.status(), 403)
            }
            (other, _) => panic!("origin {origin}: {:?}", other.map(|_| ())),
        }
    }
    server.stop().await;
}

/// Row 10: pings have a budget like commands: past it one is refused, and the socket is not
/// read until the budget allows the next, so a flood of a million waits in the client's own
/// buffers instead of being answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ping_flood_is_served_at_its_budget_and_the_rest_waits_with_the_client() {
    const FLOOD: u64 = 1_000_000;
    let (_dir, server) = start(Config {
        pings_per_second_max: 1,
        ..start_config()
    })
    .await;
    let ws = open(&server.url).await;
    let ping = Message::text(wire::to_json(&ClientMessage::Ping { nonce: 1 }));
    let (mut sink, mut stream) = ws.split();
    let sent = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let flood = {
        let sent = sent.clone();
        tokio::spawn(async move {
            for _ in 0..FLOOD {
                if sink.send(ping.clone()).await.is_err() {
                    break;
                }
                sent.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        })
    };
    let (mut pongs, mut refused) = (0, 0);
    tokio::time::timeout(WAIT, async {
        while pongs < 4 {
            let frame = stream.next().await.expect("open").expect("a frame");
            let Message::Text(text) = frame else { continue };
            match wire::from_json(text.as_str()).unwrap() {
                ServerMessage::Pong { .. } => pongs += 1,
                ServerMessage::Error { code, .. } => {
                    assert_eq!(code, ErrorCode::LimitReached);
                    refused += 1;
                }
                other => panic!("{other:?}"),
            }
        }
    })
    .await
    .expect("pongs at the budget's rate");
    assert!(refused > 0);
    let sent = sent.load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        !flood.is_finished() && sent < FLOOD,
        "{sent} pings went out: the server read them all"
    );
    flood.abort();
    server.stop().await;
}

/// Row 11: a client's Close is answered with a Close carrying its code (RFC 6455 5.5.1).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_close_from_the_client_is_echoed() {
    let (_dir, server) = start(start_config()).await;
    let mut ws = open(&server.url).await;
    ws.send(Message::Close(Some(CloseFrame {
        code: CloseCode::Normal,
        reason: "bye".into(),
    })))
    .await
    .unwrap();
    let echo = close_frame(&mut ws).await.expect("a close frame back");
    assert_eq!(echo.code, CloseCode::Normal);
    server.stop().await;
}

/// Row 12: HTTP through a real stack: status codes, not timeouts or silence.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_requests_get_proper_answers() {
    let (_dir, server) = start(start_config()).await;
    let addr = server.addr;

    let root = http(addr, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").await;
    assert!(status(&root).contains(" 303 "), "{root}");
    assert!(root.to_lowercase().contains("location: /watch"), "{root}");

    let post = http(
        addr,
        b"POST /watch HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
    )
    .await;
    assert!(status(&post).contains(" 405 "), "{post}");
    assert!(post.to_lowercase().contains("allow: get, head"), "{post}");

    let tls = http(addr, b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03").await;
    assert!(status(&tls).contains(" 400 "), "{tls:?}");

    for (path, code) in [
        ("/watch", " 200 "),
        ("/watch/watch.js", " 200 "),
        ("/watch/secret", " 404 "),
        ("/watch/../Cargo.toml", " 404 "),
        ("/elsewhere", " 404 "),
        ("/healthz", " 200 "),
        ("/v1", " 426 "),
    ] {
        let answer = http(
            addr,
            format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes(),
        )
        .await;
        assert!(status(&answer).contains(code), "{path}: {answer}");
    }

    let gzip = http(
        addr,
        b"GET /watch/watch.js HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n",
    )
    .await;
    assert!(
        gzip.to_lowercase().contains("content-encoding: gzip"),
        "{}",
        &gzip[..200]
    );

    let head = |len: usize| {
        let start = "GET /watch HTTP/1.1\r\nHost: x\r\nX-Pad: ";
        let pad = "p".repeat(len - start.len() - 4);
        format!("{start}{pad}\r\n\r\n").into_bytes()
    };
    let big = http(
        addr,
        &head(server::network::web::REQUEST_HEAD_BYTES_MAX * 2),
    )
    .await;
    assert!(status(&big).contains(" 431 "), "{}", status(&big));

    let body = format!(
        "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n",
        server::network::web::REQUEST_BODY_BYTES_MAX + 1
    );
    let too_long = http(addr, body.as_bytes()).await;
    assert!(status(&too_long).contains(" 413 "), "{too_long}");

    let scrape = format!(
        "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\r\n",
        e2e::METRICS_TOKEN
    );
    let metrics = http(addr, scrape.as_bytes()).await;
    assert!(status(&metrics).contains(" 200 "), "{metrics}");
    for name in [
        "asl_connections",
        "asl_games_loaded",
        "asl_commands_total",
        "asl_refusals_total",
        "asl_store_append_seconds_bucket",
        "asl_store_group_writes_bucket",
        "asl_store_flush_seconds_bucket",
        "asl_slow_readers_dropped_total",
    ] {
        assert!(metrics.contains(name), "{name} not in\n{metrics}");
    }
    server.stop().await;
}

/// Per-address caps: one address cannot hold every connection, and a connection over the cap
/// is told so at once; yet a player on that address can still join a seat on it, so nobody
/// sharing an address with an attacker is locked out of their own game.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_cannot_hold_every_connection_but_a_player_still_sits() {
    let (_dir, server) = start(Config {
        connections_per_ip_max: 3,
        ..start_config()
    })
    .await;
    // The game is created on one of the three, so that no other connection comes and goes.
    let mut held: Vec<Socket> =
        futures_util::future::join_all((0..3).map(|_| open(&server.url))).await;
    send(
        &mut held[0],
        &ClientMessage::CreateGame {
            scenario: SCENARIO.into(),
            admin_token: None,
        },
    )
    .await;
    let ServerMessage::Created { game, tokens, .. } = recv(&mut held[0]).await else {
        panic!("not created");
    };
    let mut fourth = open(&server.url).await;
    assert_limit(recv(&mut fourth).await, "per-address");
    // Anything but a seat's join is closed with 1013 (try again later).
    assert_limit(
        join(&mut fourth, &game, &tokens.spectator).await,
        "per-address",
    );
    assert_eq!(
        close_frame(&mut fourth).await.map(|f| f.code),
        Some(CloseCode::Again)
    );
    let mut player = open(&server.url).await;
    assert_limit(recv(&mut player).await, "per-address");
    assert!(matches!(
        join(&mut player, &game, &tokens.side_b).await,
        ServerMessage::Joined { .. }
    ));
    drop(held);
    server.stop().await;
}

/// Row 8: a client that never reads, with sends pending, is closed at the send deadline, and
/// stopping the server is not held up by it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_reads_does_not_hold_sends_or_shutdown() {
    let (_dir, server) = start(Config {
        send_timeout: Duration::from_millis(500),
        shutdown_deadline: Duration::from_secs(2),
        socket_send_buffer_bytes: 4 * 1024,
        // Large enough that the game keeps it: only its own sends are stuck.
        outbound_queue_max: 100_000,
        ..start_config()
    })
    .await;
    let (game, tokens) = create(&server.url, SCENARIO).await;
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(2048).unwrap();
    let stream = socket.connect(server.addr).await.unwrap();
    let (mut slow, _) = tokio_tungstenite::client_async(format!("{}/v1", server.url), stream)
        .await
        .unwrap();
    send(
        &mut slow,
        &ClientMessage::Join {
            game: game.clone(),
            token: tokens.spectator.clone(),
            since: None,
        },
    )
    .await;
    let before = e2e::metric(server.addr, "asl_slow_readers_dropped_total").await;
    let mut player = Connection::connect(&server.url).await.unwrap();
    player.join(&game, &tokens.side_a, None).await.unwrap();
    // Play until the slow one's sends are stuck long enough to be cut off.
    let mut id = 0;
    tokio::time::timeout(WAIT, async {
        while e2e::metric(server.addr, "asl_slow_readers_dropped_total").await <= before {
            for _ in 0..20 {
                id += 1;
                let _ = player.command(id, adjudicate(id - 1), None).await.unwrap();
            }
        }
    })
    .await
    .expect("the reader that never reads is cut off");
    // And stopping returns, whatever else is pending.
    tokio::time::timeout(WAIT, server.stop())
        .await
        .expect("shutdown within its deadline");
    drop(slow);
}

/// A player that asks for the state again and again and never reads: the server's send to it
/// waits on a full socket. With the send deadline, the idle timeout and the shutdown deadline
/// all an hour, stopping the server still returns: from the moment shutdown begins, every send
/// of a connection (the one already waiting too) has `SHUTDOWN_SEND_TIMEOUT`, the named bound
/// a non-reading client can delay shutdown by. (Before, the waiting send kept its hour.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_asks_and_never_reads_delays_shutdown_by_its_bound_only() {
    const HOUR: Duration = Duration::from_secs(3600);
    let (_dir, server) = start(Config {
        send_timeout: HOUR,
        idle_timeout: HOUR,
        shutdown_deadline: HOUR,
        socket_send_buffer_bytes: 4 * 1024,
        reads_per_second_max: 100_000,
        ..start_config()
    })
    .await;
    let (game, tokens) = create(&server.url, SCENARIO).await;
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(2048).unwrap();
    let stream = socket.connect(server.addr).await.unwrap();
    let (mut stuck, _) = tokio_tungstenite::client_async(format!("{}/v1", server.url), stream)
        .await
        .unwrap();
    send(
        &mut stuck,
        &ClientMessage::Join {
            game,
            token: tokens.side_a,
            since: None,
        },
    )
    .await;
    // Far more state than the two sockets' buffers hold, asked for and never read.
    for _ in 0..200 {
        send(&mut stuck, &ClientMessage::GetState).await;
    }
    // Let the server reach the send that waits (this only makes the case the hard one; the
    // test asserts no time).
    tokio::time::sleep(Duration::from_millis(300)).await;
    tokio::time::timeout(WAIT, server.stop())
        .await
        .expect("shutdown is not held by a client that never reads");
    drop(stuck);
}

/// Plays `Done` by whoever acts until the game is over; an error the server answers a command
/// with ends the play and is returned.
async fn play_done_to_the_end(
    a: &mut Connection,
    b: &mut Connection,
) -> Result<(), client::ConnectionError> {
    let mut id = 0;
    for _ in 0..500 {
        let state = a.get_state().await?.state;
        if state.over {
            break;
        }
        id += 1;
        let seat = match state.acting() {
            protocol::Side::A => &mut *a,
            protocol::Side::B => &mut *b,
        };
        match seat.command(id, Command::Done, None).await? {
            Reply::Accepted { .. } => {}
            Reply::Refused { violation, .. } => panic!("Done refused: {violation}"),
        }
    }
    Ok(())
}

/// Plays a one-turn game to its end with `Done` by whoever acts, and exports it.
async fn finished_export(url: &str) -> String {
    use client::commands::export::{export, ExportArgs};
    use client::commands::{GameArgs, ServerArg};
    let short = SCENARIO.replace("turns = 2", "turns = 1");
    let (game, tokens) = create(url, &short).await;
    let mut a = Connection::connect(url).await.unwrap();
    a.join(&game, &tokens.side_a, None).await.unwrap();
    let mut b = Connection::connect(url).await.unwrap();
    b.join(&game, &tokens.side_b, None).await.unwrap();
    play_done_to_the_end(&mut a, &mut b).await.unwrap();
    assert!(a.get_state().await.unwrap().state.over, "the game ends");
    let mut out = vec![];
    let args = ExportArgs {
        server: ServerArg { url: url.into() },
        game: GameArgs {
            game,
            token: tokens.spectator,
        },
        out: None,
    };
    export(&args, &mut out).await.unwrap();
    String::from_utf8(out).unwrap()
}

/// A save that takes the reader to its limits from a frame of some 20 KB: a `savedGame` of
/// 16 MB of one letter (zipped to almost nothing) nested 28 levels deep as VASSAL nests
/// commands, each level unescaped into a copy of its own, until `UNESCAPED_BYTES_MAX` refuses
/// it. In base64, as `import_save` carries it.
fn a_save_read_to_the_readers_limits() -> String {
    use vasl_save::save::{writer, Encoding};
    let mut command = format!("x{}", "a".repeat(16 << 20));
    for _ in 0..28 {
        command = writer::join_escaped(&["y", &command], '\u{1b}');
    }
    let text = writer::saved_game_text(&[command]);
    let file = writer::vsav(&writer::encode(&text, Encoding::Plain), Some("VASL"));
    data_encoding::BASE64.encode(&file)
}

/// `import_save` reads a save within the reader's limits, up to some 300 MB for a hostile one,
/// and holds no game: the reads at once are capped on the whole server (`imports_max`), and a
/// read keeps its place until it ends, so a client that sends a save and leaves at once does
/// not free its place. Before, nothing bounded the reads at once but the connections (256 an
/// address).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saves_read_at_once_are_capped_even_when_their_senders_leave() {
    let (_dir, server) = start(Config {
        imports_max: 1,
        ..start_config()
    })
    .await;
    let import = ClientMessage::ImportSave {
        save: a_save_read_to_the_readers_limits(),
        name: "heavy".into(),
        admin_token: None,
    };
    let mut first = open(&server.url).await;
    send(&mut first, &import).await;
    drop(first);
    let mut second = open(&server.url).await;
    send(&mut second, &import).await;
    assert_limit(recv(&mut second).await, "imports_max");
    // Once the first read ends its place is free: a save is read again, and refused by the
    // reader's own limit.
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        send(&mut second, &import).await;
        match recv(&mut second).await {
            ServerMessage::Error {
                code: ErrorCode::LimitReached,
                ..
            } if tokio::time::Instant::now() < deadline => continue,
            ServerMessage::Error {
                code: ErrorCode::BadScenario,
                message,
            } => {
                assert!(message.contains("unescap"), "{message}");
                break;
            }
            other => panic!("the save is read once the first read ends: {other:?}"),
        }
    }
    server.stop().await;
}

/// Nanoseconds every living thread of this process has run.
fn cpu_of_process() -> u64 {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        .map(|task| ran(&task.path().join("schedstat")))
        .sum()
}

/// A connection served on the audience's threads (a spectator's, a review's) may still create
/// a game, and the game's task was spawned where that connection ran: its players' commands
/// were then decided, stored and written at the audience's lower priority, and the audience's
/// threads are let go at shutdown before the games are stopped. A game's task runs on the
/// players' threads whoever creates it: its play costs the audience's threads next to nothing.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_created_on_a_spectators_connection_is_played_on_the_players_threads() {
    let (_dir, server) = start(start_config()).await;
    let (watched, tokens) = create(&server.url, SCENARIO).await;
    let mut ws = open(&server.url).await;
    let joined = join(&mut ws, &watched, &tokens.spectator).await;
    assert!(matches!(joined, ServerMessage::Joined { .. }), "{joined:?}");
    send(
        &mut ws,
        &ClientMessage::CreateGame {
            scenario: SCENARIO.replace("turns = 2", "turns = 1"),
            admin_token: None,
        },
    )
    .await;
    let ServerMessage::Created { game, tokens, .. } = recv(&mut ws).await else {
        panic!("the game is created");
    };
    let mut a = Connection::connect(&server.url).await.unwrap();
    a.join(&game, &tokens.side_a, None).await.unwrap();
    let mut b = Connection::connect(&server.url).await.unwrap();
    b.join(&game, &tokens.side_b, None).await.unwrap();
    let (audience, all) = (cpu_of_threads_named("audience"), cpu_of_process());
    play_done_to_the_end(&mut a, &mut b).await.unwrap();
    let (audience, all) = (
        cpu_of_threads_named("audience") - audience,
        cpu_of_process() - all,
    );
    assert!(
        audience < all / 20,
        "the audience's threads ran {audience} ns of the {all} ns the game's play took"
    );
    server.stop().await;
}

/// A save is read on the audience's threads, below the players': a read that takes the
/// reader to its limits costs a core for a while, and the [`IMPORTS_MAX`] reads at once of
/// anyone who may create games (anyone on loopback, or with open creation) took as many cores
/// from the players' threads, at their priority. The audience's threads do at least a quarter
/// of what reading that save here takes: the test's own read is timed twice and the faster
/// kept, as the first touches fresh pages for the hundreds of MB the read holds (the server's
/// read reuses them, and ran 4× faster than a single first read under load); a read on the
/// players' threads leaves the audience's at nothing.
///
/// [`IMPORTS_MAX`]: server::operations::config::IMPORTS_MAX
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_save_is_read_on_the_audiences_threads() {
    let (_dir, server) = start(start_config()).await;
    let save = a_save_read_to_the_readers_limits();
    let bytes = data_encoding::BASE64.decode(save.as_bytes()).unwrap();
    let read = || vasl_save::from_save::new_game_from_save(&bytes, "heavy").is_err();
    let mine = cpu_of(read).min(cpu_of(read));
    let before = cpu_of_threads_named("audience");
    let mut ws = open(&server.url).await;
    send(
        &mut ws,
        &ClientMessage::ImportSave {
            save,
            name: "heavy".into(),
            admin_token: None,
        },
    )
    .await;
    let refused = recv(&mut ws).await;
    assert_eq!(error_code(refused), ErrorCode::BadScenario);
    let audience = cpu_of_threads_named("audience") - before;
    assert!(
        audience >= mine / 4,
        "the audience's threads ran {audience} ns for a read that takes {mine} ns here"
    );
    server.stop().await;
}

/// Row 5: review needs no token, so the exports open at once are capped on the whole server;
/// one more is refused until one closes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reviews_open_at_once_are_capped() {
    let (_dir, server) = start(Config {
        reviews_max: 2,
        ..start_config()
    })
    .await;
    let export = finished_export(&server.url).await;
    two_reviews_then_a_refusal_until_one_closes(&server, &export, "reviews_max").await;
    server.stop().await;
}

/// Nanoseconds a thread has run, from its `schedstat` file (Linux's, per thread).
fn ran(schedstat: &std::path::Path) -> u64 {
    std::fs::read_to_string(schedstat)
        .unwrap_or_default()
        .split_whitespace()
        .next()
        .and_then(|ns| ns.parse().ok())
        .unwrap_or(0)
}

/// Nanoseconds the threads of this process named `name` have run, living threads only.
fn cpu_of_threads_named(name: &str) -> u64 {
    let mut total = 0;
    for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if comm.trim_end() == name {
            total += ran(&task.path().join("schedstat"));
        }
    }
    total
}

/// Nanoseconds of CPU `work` takes on the calling thread.
fn cpu_of<T>(work: impl FnOnce() -> T) -> u64 {
    let this = std::path::Path::new("/proc/thread-self/schedstat");
    let before = ran(this);
    std::hint::black_box(work());
    ran(this) - before
}

/// A review needs no token, and each of its reads of a position replays the game from its
/// first event: an anonymous client reviewing a long export and asking for positions took the
/// players' threads for as long as the replays ran, and so delayed every game's commands
/// (with eight reviews open, their reads could hold both cores). The review's verifying and
/// every read of it run on the audience's threads, which the kernel schedules below the
/// players': the audience's threads do the replays' work, at least a quarter of what replaying
/// the export here takes (CPU time measured in two places on a loaded machine differs by a few
/// times; replays on the players' threads leave the audience's at nothing).
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_is_read_on_the_audiences_threads() {
    let (_dir, server) = start(Config {
        reads_per_second_max: 100_000,
        ..start_config()
    })
    .await;
    let export = finished_export(&server.url).await;
    const READS: usize = 40;
    let verified = protocol::export::verify(export.as_bytes(), &mut |_, _| {}).unwrap();
    let events: Vec<_> = verified.entries.into_iter().map(|e| e.event).collect();
    let mine = cpu_of(|| {
        for _ in 0..READS {
            std::hint::black_box(protocol::Game::replay(events.iter()).unwrap());
        }
    });

    let before = cpu_of_threads_named("audience");
    let mut ws = open(&server.url).await;
    send(
        &mut ws,
        &ClientMessage::Review {
            export: export.clone(),
            server_key: None,
            receipts: vec![],
        },
    )
    .await;
    let ServerMessage::Reviewing { version, .. } = recv(&mut ws).await else {
        panic!("the export is opened for review");
    };
    for _ in 0..READS {
        send(&mut ws, &ClientMessage::GetStateAt { version }).await;
        let state = recv(&mut ws).await;
        assert!(matches!(state, ServerMessage::State { .. }), "{state:?}");
    }
    let audience = cpu_of_threads_named("audience") - before;
    assert!(
        audience >= mine / 4,
        "the audience's threads ran {audience} ns for {READS} replays that take {mine} ns here"
    );
    server.stop().await;
}

/// Issue 50: the bytes of the exports under review are capped too (`REVIEW_BYTES_MAX`), each
/// file charged from before it is verified until its connection ends: with room for two and
/// a half files, a third is refused naming the limit, however many reviews the count allows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bytes_under_review_are_capped() {
    // The export is made on a server of its own: its size sets the second one's limit, and
    // the second is given the first one's signing key, under which the export verifies.
    let first = start_config();
    let signing_key = first.signing_key.clone();
    let export = {
        let (_dir, server) = start(first).await;
        let export = finished_export(&server.url).await;
        server.stop().await;
        export
    };
    let (_dir, server) = start(Config {
        reviews_max: 100,
        review_bytes_max: export.len() * 5 / 2,
        signing_key,
        ..start_config()
    })
    .await;
    two_reviews_then_a_refusal_until_one_closes(&server, &export, "review_bytes_max").await;
    server.stop().await;
}

/// A review's reads tell one story: the record and the log hold the same events, numbered
/// from 1 to the review's `version`, and the log's last hash and the state's head are the
/// export's head.
async fn reads_agree(ws: &mut Socket, version: u64, head: protocol::chain::LogHash) {
    send(ws, &ClientMessage::GetRecord { from: 1 }).await;
    let ServerMessage::Record { entries, .. } = recv(ws).await else {
        panic!("a record page");
    };
    send(ws, &ClientMessage::GetLog { from: 1 }).await;
    let ServerMessage::Log { events, .. } = recv(ws).await else {
        panic!("a log page");
    };
    send(ws, &ClientMessage::GetState).await;
    let ServerMessage::State { head: at_end, .. } = recv(ws).await else {
        panic!("the state");
    };
    assert_eq!(entries.len() as u64, version);
    assert_eq!(events.len() as u64, version);
    for ((entry, event), seq) in entries.iter().zip(&events).zip(1..) {
        assert_eq!((entry.seq, event.seq), (seq, seq));
        assert_eq!(entry.event, event.viewed.event);
        assert!(
            !entry.text.is_empty() && !entry.when.is_empty(),
            "{entry:?}"
        );
    }
    assert_eq!(events.last().unwrap().hash.0, head.0);
    assert_eq!(at_end.0, head.0);
}

/// Opens two reviews of `export` on connections of their own, sees a third refused naming
/// `limit`, closes one of the two and sees the third opened once the server has seen it go.
async fn two_reviews_then_a_refusal_until_one_closes(
    server: &TestServer,
    export: &str,
    limit: &str,
) {
    let review = ClientMessage::Review {
        export: export.to_string(),
        server_key: None,
        receipts: vec![],
    };
    let mut open_ones = vec![];
    for _ in 0..2 {
        let mut ws = open(&server.url).await;
        send(&mut ws, &review).await;
        let ServerMessage::Reviewing { version, head, .. } = recv(&mut ws).await else {
            panic!("the export is opened for review");
        };
        reads_agree(&mut ws, version, head).await;
        open_ones.push(ws);
    }
    let mut third = open(&server.url).await;
    send(&mut third, &review).await;
    assert_limit(recv(&mut third).await, limit);
    // One closes; its place is free again once the server has seen it go.
    let mut closing = open_ones.pop().unwrap();
    closing.close(None).await.unwrap();
    let _ = close_frame(&mut closing).await;
    let reopened = tokio::time::timeout(WAIT, async {
        loop {
            send(&mut third, &review).await;
            match recv(&mut third).await {
                ServerMessage::Reviewing { .. } => return,
                ServerMessage::Error { code, message } => {
                    assert_eq!(code, ErrorCode::LimitReached, "{message}");
                    tokio::time::sleep(Duration::from_millis(600)).await;
                }
                other => panic!("{other:?}"),
            }
        }
    })
    .await;
    assert!(reopened.is_ok(), "a review place came free");
}

/// The largest scenarios the scenario limits let through, each pushing a different size to its
/// limit: the map (`MAP_HEXES_MAX`), the units (`UNITS_MAX`) with the longest ids the file
/// allows, and the name; each file just under `SCENARIO_BYTES_MAX`.
fn scenarios_at_the_limits() -> Vec<(&'static str, String)> {
    use protocol::scenario::{MAP_HEXES_MAX, SCENARIO_BYTES_MAX, UNITS_MAX};
    let head = |name: &str| {
        format!(
            "name = \"{name}\"\nturns = 1\nfirst = \"german\"\nsides = [\n  {{ id = \"german\", name = \"German\" }},\n  {{ id = \"russian\", name = \"Russian\" }},\n]\n"
        )
    };
    // 20 columns × 99 rows, and the rest of the map on a second board.
    let map = {
        let mut m =
            String::from("[[area]]\nfrom = \"1A1\"\nto = \"1T99\"\nterrain = \"open_ground\"\n");
        let rest = MAP_HEXES_MAX - 20 * 99;
        m += &format!("[[area]]\nfrom = \"2A1\"\nto = \"2A{rest}\"\nterrain = \"woods\"\n");
        m
    };
    let unit = |id: &str, i: usize| {
        let side = if i.is_multiple_of(2) {
            "german"
        } else {
            "russian"
        };
        format!(
            "[[units]]\nid = \"{id}\"\nside = \"{side}\"\nkind = \"squad\"\nratings = \"4-6-7\"\nhex = \"1{}{}\"\nconcealed = {}\n",
            (b'A' + (i % 20) as u8) as char,
            1 + i % 99,
            i.is_multiple_of(3),
        )
    };
    let fill = |fixed: usize, count: usize| (SCENARIO_BYTES_MAX - fixed) / count;

    let mut out = vec![];
    // Many units, long ids.
    let base = head("units") + &map;
    let skeleton: usize = base.len() + (0..UNITS_MAX).map(|i| unit("", i).len()).sum::<usize>();
    let id_len = fill(skeleton + 1024, UNITS_MAX);
    let mut s = base;
    for i in 0..UNITS_MAX {
        s += &unit(&format!("{i:04}{}", "u".repeat(id_len - 4)), i);
    }
    out.push(("long unit ids", s));
    // The longest name a scenario may carry (`SCENARIO_NAME_BYTES_MAX`), of characters JSON
    // must escape (a quote and a backslash, each written in two bytes), with the units' ids
    // filling the rest of the file. A name of control characters, which JSON writes six bytes
    // each, is refused by the scenario itself, as the other player is shown it
    // (`every_scenario_inside_the_limits_fits_the_frame_limit_or_is_refused`).
    let name = "\\\"\\\\".repeat(protocol::scenario::SCENARIO_NAME_BYTES_MAX / 2);
    let base = head(&name) + &map;
    let skeleton: usize = base.len() + (0..UNITS_MAX).map(|i| unit("", i).len()).sum::<usize>();
    let id_len = fill(skeleton + 1024, UNITS_MAX);
    let mut s = base;
    for i in 0..UNITS_MAX {
        s += &unit(&format!("{i:04}{}", "e".repeat(id_len - 4)), i);
    }
    out.push(("escaped name", s));
    for (what, s) in &out {
        assert!(s.len() <= SCENARIO_BYTES_MAX, "{what}: {}", s.len());
        assert!(s.len() > SCENARIO_BYTES_MAX - 4096, "{what}: {}", s.len());
    }
    out
}

/// Row 9: the limits agree. Every scenario inside the scenario limits is either refused by
/// name, or every frame it makes — each seat's and the audience's `joined`, the first log and
/// record pages, which carry the whole scenario — fits `FRAME_BYTES_MAX` (the client reads
/// with exactly that limit).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scenario_inside_the_limits_fits_the_frame_limit_or_is_refused() {
    let (_dir, server) = start(start_config()).await;
    // A name of control characters fills a frame six bytes a character once JSON writes it:
    // refused by the scenario, naming its field, before any frame is made of it.
    let mut c = Connection::connect(&server.url).await.unwrap();
    let controls = format!(
        "name = \"{}\"\nturns = 1\nfirst = \"german\"\nsides = [{{ id = \"german\", name = \"German\" }}, {{ id = \"russian\", name = \"Russian\" }}]\n[[area]]\nfrom = \"1A1\"\nto = \"1B2\"\nterrain = \"open_ground\"\n",
        "\\u0001".repeat(100)
    );
    let e = c
        .create_game(&controls, None)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("name") && e.contains("control or bidi"), "{e}");
    for (what, scenario) in scenarios_at_the_limits() {
        let mut c = Connection::connect(&server.url).await.unwrap();
        let created = match c.create_game(&scenario, None).await {
            Ok(created) => created,
            Err(e) => {
                let text = e.to_string();
                assert!(
                    text.contains("frame"),
                    "{what}: refused, but not by the frame limit: {text}"
                );
                continue;
            }
        };
        for token in [
            &created.tokens.side_a,
            &created.tokens.side_b,
            &created.tokens.spectator,
        ] {
            let mut viewer = Connection::connect(&server.url).await.unwrap();
            viewer
                .join(&created.game, token, None)
                .await
                .unwrap_or_else(|e| panic!("{what}: joining: {e}"));
            viewer
                .get_log(1)
                .await
                .unwrap_or_else(|e| panic!("{what}: the first log page: {e}"));
            viewer
                .get_state_at(1)
                .await
                .unwrap_or_else(|e| panic!("{what}: the first position: {e}"));
        }
    }
    server.stop().await;
}

/// A scenario at the map limit (`MAP_HEXES_MAX` hexes) with `units` units, a third of them
/// concealed, whose ids are `id_len` bytes long.
fn scenario_with_units(units: usize, id_len: usize) -> String {
    use protocol::scenario::MAP_HEXES_MAX;
    let mut s = String::from(
        "name = \"at the limits\"\nturns = 1\nfirst = \"german\"\nsides = [\n  { id = \"german\", name = \"German\" },\n  { id = \"russian\", name = \"Russian\" },\n]\n",
    );
    s += "[[area]]\nfrom = \"1A1\"\nto = \"1T99\"\nterrain = \"open_ground\"\n";
    let rest = MAP_HEXES_MAX - 20 * 99;
    s += &format!("[[area]]\nfrom = \"2A1\"\nto = \"2A{rest}\"\nterrain = \"woods\"\n");
    for i in 0..units {
        let side = if i.is_multiple_of(2) {
            "german"
        } else {
            "russian"
        };
        let id = format!("{i:04}{}", "u".repeat(id_len.saturating_sub(4)));
        s += &format!(
            "[[units]]\nid = \"{id}\"\nside = \"{side}\"\nkind = \"squad\"\nratings = \"4-6-7\"\nhex = \"1{}{}\"\nconcealed = {}\n",
            (b'A' + (i % 20) as u8) as char,
            1 + i % 99,
            i.is_multiple_of(3),
        );
    }
    s
}

/// The scenario at the map limit with the most units (ids of 16 bytes) the server takes: the
/// largest opening position the frame check lets through, and so the largest frames in play.
fn largest_scenario_taken() -> String {
    const ID_BYTES: usize = 16;
    let taken = |units: usize| {
        let text = scenario_with_units(units, ID_BYTES);
        text.len() <= protocol::scenario::SCENARIO_BYTES_MAX
            && protocol::Scenario::from_toml(&text)
                .ok()
                .is_some_and(|s| server::games::frames::check_frames(&s).is_ok())
    };
    let (mut low, mut high) = (2, protocol::scenario::UNITS_MAX + 1);
    assert!(
        taken(low),
        "a two-unit scenario on the largest map is refused"
    );
    while high - low > 1 {
        let mid = (low + high) / 2;
        if taken(mid) {
            low = mid;
        } else {
            high = mid;
        }
    }
    eprintln!(
        "the largest scenario taken: {low} units with ids of {ID_BYTES} bytes on {} hexes",
        protocol::scenario::MAP_HEXES_MAX
    );
    scenario_with_units(low, ID_BYTES)
}

/// Row 9, in play: each game of a scenario at the limits that the server takes is played to
/// its end with a spectator joined, and every frame it makes fits `FRAME_BYTES_MAX` — the
/// players' `accepted` batches and events, every viewer's `joined`, `state`, `state_at` and log
/// pages from the start, and the export's pages. (The client reads with exactly that limit:
/// a frame past it fails the read.) A command whose frames would not fit is refused, naming
/// the frame limit, before anything is stored (`server::games::frames`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_at_the_limits_is_played_and_exported_inside_the_frame_limit() {
    use client::commands::export::{export, ExportArgs};
    use client::commands::{GameArgs, ServerArg};
    let (_dir, server) = start(start_config()).await;
    let mut played = 0;
    let mut scenarios = scenarios_at_the_limits();
    scenarios.push(("the longest ids taken", largest_scenario_taken()));
    for (what, scenario) in scenarios {
        let mut c = Connection::connect(&server.url).await.unwrap();
        let created = match c.create_game(&scenario, None).await {
            Ok(created) => created,
            Err(e) => {
                eprintln!("{what}: refused: {e}");
                continue;
            }
        };
        played += 1;
        let (game, tokens) = (created.game, created.tokens);
        let mut watcher = Connection::connect(&server.url).await.unwrap();
        watcher.join(&game, &tokens.spectator, None).await.unwrap();
        let mut a = Connection::connect(&server.url).await.unwrap();
        a.join(&game, &tokens.side_a, None).await.unwrap();
        let mut b = Connection::connect(&server.url).await.unwrap();
        b.join(&game, &tokens.side_b, None).await.unwrap();
        match play_done_to_the_end(&mut a, &mut b).await {
            Ok(()) => {}
            Err(client::ConnectionError::Server { code, message }) => {
                assert_eq!(code, ErrorCode::TooLarge, "{what}: {message}");
                assert!(message.contains("frame"), "{what}: {message}");
            }
            Err(e) => panic!("{what}: {e}"),
        }
        for (viewer, token) in [
            (&mut a, &tokens.side_a),
            (&mut b, &tokens.side_b),
            (&mut watcher, &tokens.spectator),
        ] {
            let mut fresh = Connection::connect(&server.url).await.unwrap();
            let joined = fresh
                .join(&game, token, None)
                .await
                .unwrap_or_else(|e| panic!("{what}: joining again: {e}"));
            let version = joined.version;
            for at in [1, version / 2, version] {
                viewer
                    .get_state_at(at)
                    .await
                    .unwrap_or_else(|e| panic!("{what}: the position at {at}: {e}"));
            }
            let mut from = 1;
            while from <= version {
                let page = viewer
                    .get_log(from)
                    .await
                    .unwrap_or_else(|e| panic!("{what}: the log from {from}: {e}"));
                from += page.events.len() as u64;
            }
        }
        let mut out = vec![];
        let args = ExportArgs {
            server: ServerArg {
                url: server.url.clone(),
            },
            game: GameArgs {
                game,
                token: tokens.spectator.clone(),
            },
            out: None,
        };
        if a.get_state().await.unwrap().state.over {
            export(&args, &mut out)
                .await
                .unwrap_or_else(|e| panic!("{what}: the export: {e}"));
            assert!(!out.is_empty());
        }
    }
    assert!(played > 0, "no scenario at the limits was taken");
    server.stop().await;
}

//! The players' clocks end to end (issue 41, `docs/clock.md`): a real server on 127.0.0.1
//! whose time the test moves itself (`server::operations::clock::TimeSource::manual`), so days of
//! correspondence play pass at once. A hand-over adds the step up to the cap; a clock that
//! runs out is recorded by the server (`ClockExpired`) and the opponent claims the game; the
//! clocks survive a restart, the downtime charged to the side whose clock ran; a live hand-over
//! adds the increment; an away seat registered for notices is told once when its clock runs low.

use e2e::{ask, message, Socket, TestServer};
use protocol::event::{ClaimedOnTime, ClockExpired, ClockHandedOver};
use protocol::game::timing::ClockView;
use protocol::wire::{ClientMessage, NotifyTarget, ServerMessage, Tokens};
use protocol::{Command, Event, Side};
use server::operations::clock::TimeSource;
use server::operations::config::Config;
use std::time::Duration;

const SCENARIO: &str = include_str!("../../scenarios/village-outskirts.toml");
/// A safeguard on every wait for a message: generous for a loaded machine, never the thing a
/// test asserts.
const WAIT: Duration = Duration::from_secs(20);

const S: u64 = 1000;
const M: u64 = 60 * S;
const H: u64 = 60 * M;
const D: u64 = 24 * H;
/// The server's time at the start: 2026-01-01, milliseconds since the Unix epoch.
const T0: u64 = 1_767_225_600_000;

fn config(time: &TimeSource) -> Config {
    Config {
        time: time.clone(),
        ..Config::default()
    }
}

fn timed(control: &str) -> String {
    format!("{SCENARIO}\n[clock]\ncontrol = \"{control}\"\n")
}

async fn socket(url: &str) -> Socket {
    tokio_tungstenite::connect_async(format!("{url}/v1"))
        .await
        .expect("connect")
        .0
}

async fn create(url: &str, scenario: String) -> (String, Tokens) {
    let mut ws = socket(url).await;
    match ask(
        &mut ws,
        &ClientMessage::CreateGame {
            scenario,
            admin_token: None,
        },
        WAIT,
    )
    .await
    {
        ServerMessage::Created { game, tokens, .. } => (game, tokens),
        other => panic!("expected created, got {other:?}"),
    }
}

/// Joins with `token`; the socket and the clocks `joined` told.
async fn join(url: &str, game: &str, token: &str) -> (Socket, ClockView) {
    let mut ws = socket(url).await;
    let join = ClientMessage::Join {
        game: game.into(),
        token: token.into(),
        since: None,
    };
    match ask(&mut ws, &join, WAIT).await {
        ServerMessage::Joined {
            clocks: Some(clocks),
            ..
        } => (ws, clocks),
        other => panic!("expected joined with clocks, got {other:?}"),
    }
}

/// Sends `command`; its events, or the refusal's words.
async fn command(ws: &mut Socket, command: Command) -> Result<Vec<Event>, String> {
    let sent = ClientMessage::Command {
        id: 1,
        command,
        key: None,
    };
    match ask(ws, &sent, WAIT).await {
        ServerMessage::Accepted { events, .. } => Ok(events
            .into_iter()
            .map(|e| std::sync::Arc::unwrap_or_clone(e.viewed).event)
            .collect()),
        ServerMessage::Refused { violation, .. } => Err(violation.to_string()),
        other => panic!("expected accepted or refused, got {other:?}"),
    }
}

/// The clocks as a `state` answer tells them now.
async fn clocks(ws: &mut Socket) -> ClockView {
    match ask(ws, &ClientMessage::GetState, WAIT).await {
        ServerMessage::State {
            clocks: Some(clocks),
            ..
        } => clocks,
        other => panic!("expected a state with clocks, got {other:?}"),
    }
}

/// `done` by `side` until the game waits on the other side; the events of the last.
async fn hand_over(ws: &mut Socket, side: Side) -> Vec<Event> {
    for _ in 0..8 {
        let events = command(ws, Command::Done).await.expect("done is taken");
        if events
            .iter()
            .any(|e| matches!(e, Event::ClockHandedOver(ClockHandedOver { to, .. }) if *to == Some(side.opponent())))
        {
            return events;
        }
    }
    panic!("eight `done`s never handed the clock over");
}

fn token(tokens: &Tokens, side: Side) -> &str {
    match side {
        Side::A => &tokens.side_a,
        Side::B => &tokens.side_b,
    }
}

fn i(side: Side) -> usize {
    match side {
        Side::A => 0,
        Side::B => 1,
    }
}

/// Registers `url` as the webhook of the seat `token` holds in `game`.
async fn register_webhook(server: &str, game: &str, token: &str, url: &str) {
    let mut ws = socket(server).await;
    let register = ClientMessage::Notify {
        game: game.to_string(),
        token: token.into(),
        target: NotifyTarget::Webhook { url: url.into() },
    };
    match ask(&mut ws, &register, WAIT).await {
        ServerMessage::Notifying { .. } => {}
        other => panic!("expected notifying, got {other:?}"),
    }
}

#[tokio::test]
async fn a_correspondence_clock_steps_up_to_its_cap_runs_out_and_is_claimed() {
    let dir = tempfile::tempdir().unwrap();
    let time = TimeSource::manual(T0);
    let server = TestServer::start(dir.path(), config(&time)).await;
    let (game, tokens) = create(&server.url, timed("correspondence:12h/2d")).await;
    let (_, view) = join(&server.url, &game, &tokens.spectator).await;
    let first = view.running.expect("the first side's clock runs");
    assert_eq!(view.bank, [2 * D, 2 * D], "each side starts at the cap");
    let (mut mover, _) = join(&server.url, &game, token(&tokens, first)).await;
    let (mut other, _) = join(&server.url, &game, token(&tokens, first.opponent())).await;

    // 6 hours used, the 12-hour step added, the cap keeps it at 2 days.
    time.advance(Duration::from_millis(6 * H));
    assert_eq!(clocks(&mut mover).await.bank[i(first)], 2 * D - 6 * H);
    hand_over(&mut mover, first).await;
    let view = clocks(&mut mover).await;
    assert_eq!(view.running, Some(first.opponent()));
    assert_eq!(view.bank[i(first)], 2 * D, "the step stops at the cap");

    // 20 hours used and the step added: 2d - 20h + 12h.
    time.advance(Duration::from_millis(20 * H));
    hand_over(&mut other, first.opponent()).await;
    let view = clocks(&mut other).await;
    assert_eq!(view.bank[i(first.opponent())], 2 * D - 20 * H + 12 * H);
    assert_eq!(view.running, Some(first));

    // No claim while the clock still runs.
    let refused = command(&mut other, Command::ClaimOnTime).await.unwrap_err();
    assert!(refused.contains("clock"), "{refused}");

    // The first side's whole bank passes: the server records the clock running out.
    time.advance(Duration::from_millis(2 * D));
    let expired = loop {
        if let ServerMessage::Event(e) = message(&mut other, WAIT).await {
            if let Event::ClockExpired(ClockExpired { side, .. }) = e.viewed.event {
                break side;
            }
        }
    };
    assert_eq!(expired, first);
    assert_eq!(clocks(&mut other).await.expired, Some(first));
    // The side out of time cannot play on; its opponent claims the game.
    assert!(command(&mut mover, Command::Done).await.is_err());
    let claimed = command(&mut other, Command::ClaimOnTime).await.unwrap();
    assert!(
        claimed
            .iter()
            .any(|e| matches!(e, Event::ClaimedOnTime(ClaimedOnTime { by, .. }) if *by == first.opponent())),
        "{claimed:?}"
    );
    server.stop().await;
}

#[tokio::test]
async fn the_clocks_survive_a_restart_with_the_downtime_charged_to_the_running_side() {
    let dir = tempfile::tempdir().unwrap();
    let time = TimeSource::manual(T0);
    let server = TestServer::start(dir.path(), config(&time)).await;
    let (game, tokens) = create(&server.url, timed("correspondence:1d/3d")).await;
    let (_, view) = join(&server.url, &game, &tokens.spectator).await;
    let first = view.running.unwrap();
    time.advance(Duration::from_millis(H));
    let addr = server.addr;
    server.stop().await;

    // Three hours down: they are the running side's as much as any others.
    time.advance(Duration::from_millis(3 * H));
    let server = TestServer::start_at(dir.path(), config(&time), addr).await;
    let (mut ws, view) = join(&server.url, &game, token(&tokens, first)).await;
    assert_eq!(view.running, Some(first));
    assert_eq!(view.bank[i(first)], 3 * D - 4 * H);
    assert_eq!(view.bank[i(first.opponent())], 3 * D);
    let events = hand_over(&mut ws, first).await;
    let charged = events.iter().find_map(|e| match e {
        Event::ClockHandedOver(ClockHandedOver { charged, .. }) => Some(charged.bank),
        _ => None,
    });
    assert_eq!(
        charged,
        Some(4 * H),
        "the hand-over charges the downtime too"
    );
    let view = clocks(&mut ws).await;
    assert_eq!(view.bank[i(first)], 3 * D, "3d - 4h + 1d, capped at 3d");
    server.stop().await;
}

#[tokio::test]
async fn a_live_hand_over_adds_the_increment() {
    let dir = tempfile::tempdir().unwrap();
    let time = TimeSource::manual(T0);
    let server = TestServer::start(dir.path(), config(&time)).await;
    let (game, tokens) = create(&server.url, timed("live:30m+30s")).await;
    let (_, view) = join(&server.url, &game, &tokens.spectator).await;
    let first = view.running.unwrap();
    assert_eq!(view.bank, [30 * M, 30 * M]);
    let (mut ws, _) = join(&server.url, &game, token(&tokens, first)).await;
    time.advance(Duration::from_millis(M));
    let events = hand_over(&mut ws, first).await;
    let charged = events
        .iter()
        .find_map(|e| match e {
            Event::ClockHandedOver(ClockHandedOver { charged, added, .. }) => {
                Some((charged.bank, *added))
            }
            _ => None,
        })
        .unwrap();
    assert_eq!(charged, (M, 30 * S));
    let view = clocks(&mut ws).await;
    assert_eq!(view.bank[i(first)], 30 * M - M + 30 * S);
    assert_eq!(view.running, Some(first.opponent()));
    server.stop().await;
}

#[tokio::test]
async fn an_away_seat_is_told_once_when_its_clock_runs_low() {
    let mut receiver = e2e::receiver::Receiver::start(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let time = TimeSource::manual(T0);
    let server = TestServer::start(dir.path(), config_with_notices(&time)).await;
    let (game, tokens) = create(&server.url, timed("correspondence:12h/2d")).await;
    let (_, view) = join(&server.url, &game, &tokens.spectator).await;
    let first = view.running.unwrap();
    let away = first.opponent();
    register_webhook(&server.url, &game, token(&tokens, away), &receiver.url()).await;
    let (mut mover, _) = join(&server.url, &game, token(&tokens, first)).await;
    hand_over(&mut mover, first).await;
    let turn = receiver.next(WAIT).await.expect("a turn notice");
    let turn: serde_json::Value = serde_json::from_slice(&turn.body).unwrap();
    assert_eq!(turn["reasons"], serde_json::json!(["your_turn"]));

    // 2 days in the bank; 23 hours left is below the 24-hour mark.
    time.advance(Duration::from_millis(25 * H));
    let low = receiver.next(WAIT).await.expect("a clock-low notice");
    let low: serde_json::Value = serde_json::from_slice(&low.body).unwrap();
    assert_eq!(low["reasons"], serde_json::json!(["clock_low"]));
    // Once per hand-over, however much more time passes, and across a restart (the game is
    // loaded again at the start and finds its clock low again).
    time.advance(Duration::from_millis(H));
    assert!(receiver.next(Duration::from_millis(500)).await.is_none());
    let addr = server.addr;
    drop(mover);
    server.stop().await;
    let server = TestServer::start_at(dir.path(), config_with_notices(&time), addr).await;
    assert!(receiver.next(Duration::from_millis(1000)).await.is_none());
    server.stop().await;
}

fn config_with_notices(time: &TimeSource) -> Config {
    Config {
        notify_allow_private: true,
        notify_quiet: Duration::ZERO,
        ..config(time)
    }
}

#[tokio::test]
async fn time_given_after_a_clock_ran_out_lets_its_side_play_on_and_vacation_spares_the_bank() {
    let dir = tempfile::tempdir().unwrap();
    let time = TimeSource::manual(T0);
    let server = TestServer::start(dir.path(), config(&time)).await;
    let (game, tokens) = create(&server.url, timed("correspondence:12h/1d,vacation=2d")).await;
    let (_, view) = join(&server.url, &game, &tokens.spectator).await;
    let first = view.running.unwrap();
    let (mut mover, _) = join(&server.url, &game, token(&tokens, first)).await;
    let (mut other, _) = join(&server.url, &game, token(&tokens, first.opponent())).await;

    // A day of vacation: the bank stands while the vacation days run.
    command(&mut mover, Command::StartVacation).await.unwrap();
    time.advance(Duration::from_millis(D));
    let view = clocks(&mut other).await;
    assert_eq!(view.bank[i(first)], D, "the bank is spared");
    assert_eq!(view.vacation_left[i(first)], D);
    command(&mut mover, Command::EndVacation).await.unwrap();

    // Back, the bank runs out; the opponent gives an hour instead of claiming.
    time.advance(Duration::from_millis(D));
    loop {
        if let ServerMessage::Event(e) = message(&mut other, WAIT).await {
            if matches!(e.viewed.event, Event::ClockExpired(_)) {
                break;
            }
        }
    }
    assert!(command(&mut mover, Command::Done).await.is_err());
    command(&mut other, Command::GiveTime { time: H })
        .await
        .unwrap();
    let view = clocks(&mut other).await;
    assert_eq!(view.expired, None);
    assert_eq!(view.bank[i(first)], H);
    assert_eq!(view.running, Some(first));
    command(&mut mover, Command::Done)
        .await
        .expect("the side given time plays on");
    server.stop().await;
}

/// Closes a connection and reads until the server has closed its side.
async fn leave(mut ws: Socket) {
    use futures_util::{SinkExt, StreamExt};
    ws.send(tokio_tungstenite::tungstenite::Message::Close(None))
        .await
        .unwrap();
    while let Some(Ok(_)) = ws.next().await {}
}

/// Nobody joins after the players leave, the game is idle far past its unload time, the server
/// restarts: still the running clock's timer tells the away seat its clock runs low, and
/// records the clock running out.
#[tokio::test]
async fn a_clock_keeps_running_with_nobody_joined_across_idleness_and_a_restart() {
    let mut receiver = e2e::receiver::Receiver::start(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let time = TimeSource::manual(T0);
    let config = || Config {
        notify_allow_private: true,
        notify_quiet: Duration::ZERO,
        game_unload_after_idle: Duration::from_millis(50),
        ..config(&time)
    };
    let server = TestServer::start(dir.path(), config()).await;
    let (game, tokens) = create(&server.url, timed("correspondence:12h/2d")).await;
    let (watcher, view) = join(&server.url, &game, &tokens.spectator).await;
    leave(watcher).await;
    let first = view.running.unwrap();
    let away = first.opponent();
    register_webhook(&server.url, &game, token(&tokens, away), &receiver.url()).await;
    let (mut mover, _) = join(&server.url, &game, token(&tokens, first)).await;
    hand_over(&mut mover, first).await;
    leave(mover).await;
    let turn = receiver.next(WAIT).await.expect("a turn notice");
    let turn: serde_json::Value = serde_json::from_slice(&turn.body).unwrap();
    assert_eq!(turn["reasons"], serde_json::json!(["your_turn"]));
    // Idle many times over its unload time.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let addr = server.addr;
    server.stop().await;

    let server = TestServer::start_at(dir.path(), config(), addr).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    time.advance(Duration::from_millis(25 * H));
    let low = receiver
        .next(WAIT)
        .await
        .expect("a clock-low notice, nobody joined");
    let low: serde_json::Value = serde_json::from_slice(&low.body).unwrap();
    assert_eq!(low["reasons"], serde_json::json!(["clock_low"]));

    // The clock runs out with nobody there; a spectator joining later finds it recorded at
    // the moment it ran out, not the moment of joining. The opponent, away and registered, is
    // told it may claim.
    let mut claimant = e2e::receiver::Receiver::start(&[]).await;
    register_webhook(&server.url, &game, token(&tokens, first), &claimant.url()).await;
    time.advance(Duration::from_millis(23 * H));
    let out = claimant
        .next(WAIT)
        .await
        .expect("a notice that the clock ran out");
    let out: serde_json::Value = serde_json::from_slice(&out.body).unwrap();
    assert_eq!(out["reasons"], serde_json::json!(["opponent_out_of_time"]));
    tokio::time::sleep(Duration::from_millis(500)).await;
    time.advance(Duration::from_millis(5 * H));
    let (mut spectator, view) = join(&server.url, &game, &tokens.spectator).await;
    assert_eq!(view.expired, Some(away));
    let events = match ask(&mut spectator, &ClientMessage::GetLog { from: 1 }, WAIT).await {
        ServerMessage::Log { events, .. } => events,
        other => panic!("expected the log, got {other:?}"),
    };
    let expired_at = events.iter().find_map(|e| match e.viewed.event {
        Event::ClockExpired(ClockExpired { side, at, .. }) if side == away => Some(at),
        _ => None,
    });
    assert_eq!(
        expired_at,
        Some(T0 + 2 * D),
        "recorded by the timer, not at the join"
    );
    server.stop().await;
}

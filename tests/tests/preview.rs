//! End to end: `preview` through the real server. A step is priced by the rules and nothing
//! changes (no event for anyone, the same state hash); a refusal is the command's own; a
//! preview into the hex a concealed enemy holds says what it says for an empty hex; a
//! spectator has nothing to preview; and previews spend the read budget, not the commands'.

use client::{Connection, Reply};
use e2e::TestServer;
use protocol::event::UnitMoved;
use protocol::wire::{self, ClientMessage, ErrorCode, PreviewOutcome, ServerMessage};
use protocol::{Command, Hex};
use server::operations::config::Config;
use std::time::Duration;

const SCENARIO: &str = include_str!("../../scenarios/b9-41-wall-advantage.toml");
const WAIT: Duration = Duration::from_secs(20);

/// A connection joined with `token`.
async fn joined(url: &str, game: &str, token: &str) -> Connection {
    let mut conn = Connection::connect(url).await.unwrap();
    conn.join(game, token, None).await.unwrap();
    conn
}

/// Sends `message` and returns its answer; any stream event before it fails the test, since
/// nothing here may make one.
async fn ask(conn: &mut Connection, message: &ClientMessage) -> ServerMessage {
    conn.send(message).await.unwrap();
    match tokio::time::timeout(WAIT, conn.recv())
        .await
        .expect("an answer in time")
        .unwrap()
    {
        ServerMessage::Event(e) => panic!("no event may follow a preview: {e:?}"),
        answer => answer,
    }
}

async fn new_game(server: &TestServer) -> client::NewGame {
    Connection::connect(&server.url)
        .await
        .unwrap()
        .create_game(SCENARIO, None)
        .await
        .unwrap()
}

fn step(unit: &str, to: &str) -> Command {
    Command::Move {
        units: vec![unit.into()],
        to: to.parse::<Hex>().unwrap(),
    }
}

async fn preview(ws: &mut Connection, id: u64, command: Command) -> (u64, PreviewOutcome) {
    match ask(ws, &ClientMessage::Preview { id, command }).await {
        ServerMessage::Previewed {
            id: got,
            version,
            outcome,
        } => {
            assert_eq!(got, id);
            (version, outcome)
        }
        other => panic!("expected previewed, got {other:?}"),
    }
}

async fn state_hash(ws: &mut Connection) -> (u64, protocol::StateHash) {
    match ask(ws, &ClientMessage::GetState).await {
        ServerMessage::State {
            version,
            state_hash,
            ..
        } => (version, state_hash),
        other => panic!("expected state, got {other:?}"),
    }
}

#[tokio::test]
async fn a_preview_prices_a_step_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path(), Config::default()).await;
    let created = new_game(&server).await;
    let (game, tokens) = (created.game, created.tokens);
    let mut german = Connection::connect(&server.url).await.unwrap();
    german.join(&game, &tokens.side_a, None).await.unwrap();
    let mut russian = Connection::connect(&server.url).await.unwrap();
    russian.join(&game, &tokens.side_b, None).await.unwrap();
    // To the German MPh: RPh (both ends of the RPh pass by themselves, no unit could claim
    // WA: B9.322), PFPh.
    for by_german in [true, true] {
        let side = if by_german { &mut german } else { &mut russian };
        match side.command(1, Command::Done, None).await.unwrap() {
            Reply::Accepted { .. } => {}
            Reply::Refused { violation, .. } => panic!("done refused: {violation}"),
        }
    }
    let mut previewer = joined(&server.url, &game, &tokens.side_a).await;
    let mut watcher = joined(&server.url, &game, &tokens.spectator).await;
    let before = state_hash(&mut previewer).await;
    let watched_before = state_hash(&mut watcher).await;

    // B9.4 EX: H7 → I8, over a wall and up a level: 1 + [2 × 1].
    let (version, outcome) = preview(&mut previewer, 7, step("447a", "55I8")).await;
    assert_eq!(version, before.0);
    let PreviewOutcome::Allowed(priced) = outcome else {
        panic!("expected allowed, got {outcome:?}")
    };
    assert!(priced.summary.starts_with("3 MF: "), "{}", priced.summary);
    assert!(priced.summary.contains("(B9.4)"), "{}", priced.summary);
    assert!(
        priced.summary.contains("447a left 1 of 4"),
        "{}",
        priced.summary
    );

    // Into the concealed 3-3-7's hex: priced like any step, nothing revealed.
    let (_, into_concealed) = preview(&mut previewer, 8, step("447a", "55I7")).await;
    let PreviewOutcome::Allowed(p) = &into_concealed else {
        panic!("expected allowed, got {into_concealed:?}")
    };
    assert!(!wire::to_json(p).contains("337a"), "{p:?}");

    // A refusal is what the command itself gets.
    let (_, refused) = preview(&mut previewer, 9, step("447a", "55J9")).await;
    let PreviewOutcome::Refused(violation) = refused else {
        panic!("expected a refusal, got {refused:?}")
    };
    match german.command(2, step("447a", "55J9"), None).await.unwrap() {
        Reply::Refused { violation: v, .. } => assert_eq!(v, violation),
        other => panic!("expected the same refusal, got {other:?}"),
    }
    // The Russian may not move in the German MPh: previewed as refused, like the command.
    let mut russian_page = joined(&server.url, &game, &tokens.side_b).await;
    let (_, wrong_side) = preview(&mut russian_page, 1, step("747a", "55G7")).await;
    assert!(
        matches!(&wrong_side, PreviewOutcome::Refused(v) if v.kind == protocol::ViolationKind::WrongSide),
        "{wrong_side:?}"
    );

    // Nothing changed for anyone; no event was sent (`ask` fails on one).
    assert_eq!(state_hash(&mut previewer).await, before);
    assert_eq!(state_hash(&mut watcher).await, watched_before);

    // A spectator has no commands to preview.
    match ask(
        &mut watcher,
        &ClientMessage::Preview {
            id: 1,
            command: step("447a", "55I8"),
        },
    )
    .await
    {
        ServerMessage::Error { code, .. } => assert_eq!(code, ErrorCode::ReadOnly),
        other => panic!("expected read_only, got {other:?}"),
    }

    // After the move the preview was asked about, the real command costs what it said.
    match german.command(3, step("447a", "55I8"), None).await.unwrap() {
        Reply::Accepted { events, .. } => assert!(events.iter().any(|e| matches!(
            &e.viewed.event,
            protocol::Event::UnitMoved(UnitMoved { cost, .. }) if Some(cost) == priced.cost.as_ref()
        ))),
        other => panic!("expected accepted, got {other:?}"),
    }
    server.stop().await;
}

/// Previews are reads: past the read budget they are served late, at the budget's pace, and
/// never use up the commands' budget.
#[tokio::test]
async fn previews_spend_the_read_budget() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        reads_per_second_max: 5,
        commands_per_second_max: 1,
        ..Config::default()
    };
    let server = TestServer::start(dir.path(), config).await;
    let created = new_game(&server).await;
    let mut page = joined(&server.url, &created.game, &created.tokens.side_a).await;
    const OVER_READS: &str = r#"asl_refusals_total{rule="reads_per_second_max"}"#;
    let over_before = e2e::metric(server.addr, OVER_READS).await;
    for id in 0..30 {
        let (_, outcome) = preview(&mut page, id, Command::Done).await;
        assert!(matches!(outcome, PreviewOutcome::Allowed(_)), "{outcome:?}");
    }
    // Past the budget they waited for it (counted as reads over budget), and all were served.
    assert!(e2e::metric(server.addr, OVER_READS).await > over_before);
    // The command budget is untouched: a command still goes through at once.
    match ask(
        &mut page,
        &ClientMessage::Command {
            id: 99,
            command: Command::Done,
            key: None,
        },
    )
    .await
    {
        ServerMessage::Accepted { id, .. } => assert_eq!(id, 99),
        other => panic!("expected accepted, got {other:?}"),
    }
    server.stop().await;
}

/// The German previews taking back his own move, the Russian's HIP unit acts (an adjudication
/// the German's stream never shows), and the German previews again: the same answer, in the
/// German's own numbers. Sent, the request is accepted, and the Russian's consent puts the
/// German's squad back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn previewing_an_undo_says_nothing_of_the_opponents_hidden_unit() {
    const HIDDEN: &str = include_str!("../../protocol/tests/hidden/scenario.toml");
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(
        dir.path(),
        Config {
            commands_per_second_max: 100_000,
            ..Config::default()
        },
    )
    .await;
    let created = Connection::connect(&server.url)
        .await
        .unwrap()
        .create_game(HIDDEN, None)
        .await
        .unwrap();
    let mut german = joined(&server.url, &created.game, &created.tokens.side_a).await;
    let mut russian = joined(&server.url, &created.game, &created.tokens.side_b).await;
    let mut id = 0;
    let mut next = || {
        id += 1;
        id
    };
    // To the German MPh: RPh, the ends of the RPh that do not pass by themselves, PFPh.
    loop {
        let state = german.get_state().await.unwrap().state;
        if state.clock.phase() == protocol::phase::Phase::Movement {
            break;
        }
        let acting = state.acting();
        let seat = match acting {
            protocol::Side::A => &mut german,
            protocol::Side::B => &mut russian,
        };
        let reply = seat.command(next(), Command::Done, None).await.unwrap();
        assert!(matches!(reply, Reply::Accepted { .. }), "{reply:?}");
    }
    let from = match german
        .command(next(), step("gs1", "20C4"), None)
        .await
        .unwrap()
    {
        Reply::Accepted { events, .. } => events[0].seq,
        other => panic!("{other:?}"),
    };
    let ask_undo = Command::RequestUndo { from };
    let before = preview_skipping_events(&mut german, next(), ask_undo.clone()).await;
    assert!(matches!(before.1, PreviewOutcome::Allowed(_)), "{before:?}");
    let hidden = Command::Adjudicate {
        unit: "rh".into(),
        outcome: protocol::Outcome::Break,
        note: String::new(),
    };
    let reply = russian.command(next(), hidden, None).await.unwrap();
    assert!(matches!(reply, Reply::Accepted { .. }), "{reply:?}");
    let after = preview_skipping_events(&mut german, next(), ask_undo.clone()).await;
    assert_eq!(
        after, before,
        "the German's preview moved with a unit he cannot see"
    );
    let reply = german.command(next(), ask_undo, None).await.unwrap();
    assert!(matches!(reply, Reply::Accepted { .. }), "{reply:?}");
    let reply = russian
        .command(next(), Command::ConsentToUndo, None)
        .await
        .unwrap();
    assert!(matches!(reply, Reply::Accepted { .. }), "{reply:?}");
    let state = german.get_state().await.unwrap().state;
    assert_eq!(state.units["gs1"].hex, "20C3".parse::<Hex>().unwrap());
    server.stop().await;
}

/// A preview's answer, passing over the stream's events that arrive before it.
async fn preview_skipping_events(
    ws: &mut Connection,
    id: u64,
    command: Command,
) -> (u64, PreviewOutcome) {
    ws.send(&ClientMessage::Preview { id, command })
        .await
        .unwrap();
    loop {
        match tokio::time::timeout(WAIT, ws.recv())
            .await
            .expect("an answer in time")
            .unwrap()
        {
            ServerMessage::Event(_) => continue,
            ServerMessage::Previewed {
                id: got,
                version,
                outcome,
            } => {
                assert_eq!(got, id);
                return (version, outcome);
            }
            other => panic!("expected previewed, got {other:?}"),
        }
    }
}

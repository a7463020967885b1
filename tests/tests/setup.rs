//! End to end: a game that begins with a set-up step (A12.12). Over the websocket the Russian
//! sets up first — placing, moving and taking back units — while the German and a spectator
//! receive nothing of it but that it is done; then the German sets up, and when set-up ends
//! each sees the other's units as the map shows them: under "?" by alias, HIP not at all.
//! A fresh join then gives each the same picture its stream built.

use client::{Connection, Follower, Reply};
use e2e::TestServer;
use protocol::game::Game;
use protocol::wire::Sequenced;
use protocol::{Command, Event, Hex};
use server::operations::config::Config;
use std::time::Duration;

const SCENARIO: &str = include_str!("../../protocol/tests/positions/scenarios/setup.toml");
const WAIT: Duration = Duration::from_secs(20);

struct Seat {
    conn: Connection,
    follower: Follower,
    ids: u64,
}

impl Seat {
    async fn join(url: &str, game: &str, token: &str) -> Seat {
        let mut conn = Connection::connect(url).await.unwrap();
        let joined = conn.join(game, token, None).await.unwrap();
        let follower =
            Follower::from_snapshot(joined.state.expect("a snapshot"), joined.state_hash).unwrap();
        Seat {
            conn,
            follower,
            ids: 0,
        }
    }

    async fn command(&mut self, command: Command) -> Reply {
        self.ids += 1;
        let reply = tokio::time::timeout(WAIT, self.conn.command(self.ids, command, None))
            .await
            .expect("reply in time")
            .unwrap();
        while let Some(e) = self.conn.pop_buffered() {
            self.follower.advance(&e).unwrap();
        }
        if let Reply::Accepted { events, .. } = &reply {
            for e in events {
                self.follower.advance(e).unwrap();
            }
        }
        reply
    }

    async fn accepted(&mut self, command: Command) -> Vec<Sequenced> {
        match self.command(command.clone()).await {
            Reply::Accepted { events, .. } => events,
            Reply::Refused { violation, .. } => panic!("{command:?} refused: {violation}"),
        }
    }

    /// The next event of this seat's stream, folded into its game.
    async fn next(&mut self) -> Event {
        let e = tokio::time::timeout(WAIT, self.conn.next_event())
            .await
            .expect("an event in time")
            .unwrap();
        self.follower.advance(&e).unwrap();
        std::sync::Arc::unwrap_or_clone(e.viewed).event
    }

    fn game(&self) -> &Game {
        self.follower.game()
    }
}

fn hex(name: &str) -> Hex {
    name.parse().unwrap()
}

fn setup(unit: &str, at: &str, concealed: bool, hidden: bool) -> Command {
    Command::SetUp {
        unit: unit.into(),
        hex: hex(at),
        concealed,
        hidden,
        weapons: vec![],
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_players_set_up_and_neither_sees_the_other_until_set_up_ends() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path(), Config::default()).await;
    let mut creator = Connection::connect(&server.url).await.unwrap();
    let game = creator.create_game(SCENARIO, None).await.unwrap();
    let id = game.game.clone();
    let mut german = Seat::join(&server.url, &id, &game.tokens.side_a).await;
    let mut russian = Seat::join(&server.url, &id, &game.tokens.side_b).await;
    let mut spectator = Seat::join(&server.url, &id, &game.tokens.spectator).await;
    let german_start = german.game().clone();

    // The Russian sets up first; the German may not.
    match german.command(setup("g1", "1I3", false, false)).await {
        Reply::Refused { violation, .. } => {
            assert_eq!(violation.rule, "A12.12");
            assert!(violation.detail.contains("the Russian is setting up"));
        }
        Reply::Accepted { .. } => panic!("the German set up out of turn"),
    }
    for (unit, at, concealed, hidden) in [
        ("r1", "1C3", true, false),
        ("r2", "1C3", false, false),
        ("r3", "1B2", false, false),
        ("r4", "1C4", false, true),
        ("rl", "1B3", false, false),
        ("rd", "1C4", true, false),
        ("r3", "1A2", false, false),
    ] {
        let events = russian.accepted(setup(unit, at, concealed, hidden)).await;
        assert!(matches!(&events[..], [e] if matches!(e.viewed.event, Event::UnitSetUp(_))));
    }
    russian
        .accepted(Command::LiftSetUp { unit: "rl".into() })
        .await;
    // The Russian's own picture holds its placements.
    assert_eq!(russian.game().units["r3"].hex, hex("1A2"));
    assert!(!russian.game().units.contains_key("rl"));
    russian.accepted(setup("rl", "1B3", false, false)).await;
    russian.accepted(Command::Done).await;

    // All the German and the spectator receive of it is that it is done: the first event
    // of their streams since joining is `SetupDone`, and their pictures are unchanged but
    // for whose set-up it is.
    for seat in [&mut german, &mut spectator] {
        let event = seat.next().await;
        assert!(
            matches!(event, Event::SetupDone(_)),
            "the first event after the Russian's set-up: {event:?}"
        );
        assert!(
            seat.game().units.keys().all(|u| u == "r0"),
            "{:?}",
            seat.game().units.keys().collect::<Vec<_>>()
        );
    }
    assert_eq!(
        german.game().setup.as_ref().map(|s| s.side),
        Some(protocol::Side::A)
    );
    assert_eq!(german.game().units, german_start.units);
    assert_eq!(german.game().weapons, german_start.weapons);

    // The German sets up; the Russian receives nothing of it until set-up ends.
    german.accepted(setup("g1", "1I3", false, false)).await;
    let events = german.accepted(Command::Done).await;
    assert!(matches!(
        events.last().map(|e| &e.viewed.event),
        Some(Event::SetupEnded(_))
    ));
    assert!(german.game().setup.is_none());
    let russian_saw = [russian.next().await, russian.next().await];
    assert!(
        matches!(russian_saw, [Event::SetupDone(_), Event::SetupEnded(_)]),
        "{russian_saw:?}"
    );
    assert_eq!(russian.game().units["g1"].hex, hex("1I3"));
    let _ = [spectator.next().await, spectator.next().await];

    // Now each sees the other's units as the map shows them.
    for seat in [&german, &spectator] {
        let units = &seat.game().units;
        assert_eq!(units["r2"].hex, hex("1C3"));
        assert_eq!(units["r3"].hex, hex("1A2"));
        assert!(!units.contains_key("r4"), "HIP stays hidden");
        assert!(!units.contains_key("r1") && !units.contains_key("rd"));
        let question_marks: Vec<&str> = units
            .values()
            .filter(|u| u.id.starts_with('?'))
            .map(|u| u.ratings.as_str())
            .collect();
        assert_eq!(question_marks, ["?", "?"]);
        assert!(!seat.game().weapons.contains_key("lmg1"));
    }
    assert!(russian.game().units.contains_key("r4"));

    // A fresh join gives each seat the picture its stream built.
    for (seat, token) in [
        (&german, &game.tokens.side_a),
        (&russian, &game.tokens.side_b),
        (&spectator, &game.tokens.spectator),
    ] {
        let again = Seat::join(&server.url, &id, token).await;
        assert_eq!(again.game().units, seat.game().units);
        assert_eq!(again.game().weapons, seat.game().weapons);
        assert_eq!(again.game().clock, seat.game().clock);
    }

    // And Turn 1 is played: the German is ATTACKER.
    german.accepted(Command::Done).await;
    server.stop().await;
}

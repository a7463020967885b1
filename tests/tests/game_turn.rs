//! End to end: a real server, two players and a spectator over websockets, a full Game Turn of
//! phases with moves, the Wall Advantage they lose and claim, a pause for the Russian's chance
//! to claim it and an adjudication, refusals citing their rule, and a restart on the same data
//! directory that comes back to the same state hash and plays on.

use client::{Connection, Follower, Reply};
use e2e::TestServer;
use protocol::event::{
    UnitMoved, WallAdvantageChanceOffered, WallAdvantageClaimed, WallAdvantageForfeited,
};
use protocol::event::{WaClaim, WaLoss};
use protocol::wire::Sequenced;
use protocol::{Command, Event, Hex, Outcome, Side};
use server::operations::config::Config;
use std::time::Duration;

const SCENARIO: &str = include_str!("../../scenarios/b9-41-wall-advantage.toml");
const WAIT: Duration = Duration::from_secs(10);

struct Seat {
    conn: Connection,
    follower: Follower,
}

impl Seat {
    async fn join(url: &str, game: &str, token: &str) -> Seat {
        let mut conn = Connection::connect(url).await.unwrap();
        let joined = conn.join(game, token, None).await.unwrap();
        let follower =
            Follower::from_snapshot(joined.state.expect("a snapshot"), joined.state_hash).unwrap();
        Seat { conn, follower }
    }

    /// Sends a command and folds its reply (and any events that arrived meanwhile) into the
    /// local game.
    async fn command(&mut self, id: u64, command: Command) -> Reply {
        let reply = tokio::time::timeout(WAIT, self.conn.command(id, command, None))
            .await
            .expect("reply in time")
            .unwrap();
        self.catch_up_buffered();
        if let Reply::Accepted { events, .. } = &reply {
            for e in events {
                self.follower.advance(e).unwrap();
            }
        }
        reply
    }

    fn catch_up_buffered(&mut self) {
        while let Some(e) = self.conn.pop_buffered() {
            self.follower.advance(&e).unwrap();
        }
    }

    /// Reads events until the local game reaches `version`.
    async fn follow_to(&mut self, version: u64) -> Vec<Sequenced> {
        let mut seen = vec![];
        self.catch_up_buffered();
        while self.follower.version() < version {
            let e = tokio::time::timeout(WAIT, self.conn.next_event())
                .await
                .expect("event in time")
                .unwrap();
            self.follower.advance(&e).unwrap();
            seen.push(e);
        }
        seen
    }
}

fn accepted(reply: &Reply) -> Vec<Sequenced> {
    match reply {
        Reply::Accepted { events, .. } => events.clone(),
        Reply::Refused { violation, .. } => panic!("refused: {violation}"),
    }
}

/// The events themselves, which every player may see here (no unit is hidden).
fn events_of(events: &[Sequenced]) -> Vec<&Event> {
    events.iter().map(|s| &s.viewed.event).collect()
}

fn refused_rule(reply: &Reply) -> String {
    match reply {
        Reply::Refused { violation, .. } => violation.rule.clone(),
        Reply::Accepted { .. } => panic!("accepted, but a refusal was expected"),
    }
}

/// Commands get ids from one counter per test, as a client would number them.
async fn play(seat: &mut Seat, ids: &mut u64, command: Command) -> Reply {
    *ids += 1;
    seat.command(*ids, command).await
}

/// The game's version after the events in `log` (which starts after `GameCreated`, version 1).
fn version(log: &[Sequenced]) -> u64 {
    log.len() as u64 + 1
}

fn hex(name: &str) -> Hex {
    name.parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_players_and_a_spectator_play_a_game_turn_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path(), Config::default()).await;

    let mut creator = Connection::connect(&server.url).await.unwrap();
    let game = creator.create_game(SCENARIO, None).await.unwrap();
    let id = game.game.clone();
    let mut german = Seat::join(&server.url, &id, &game.tokens.side_a).await;
    let mut russian = Seat::join(&server.url, &id, &game.tokens.side_b).await;
    let mut spectator = Seat::join(&server.url, &id, &game.tokens.spectator).await;

    // Every event the server accepted, in order, as the players saw them in their replies.
    let mut log: Vec<Sequenced> = vec![];
    let mut ids = 0u64;

    // Refusals first: a wrong side and an out-of-phase command change nothing.
    let wrong_side = play(&mut russian, &mut ids, Command::Done).await;
    assert_eq!(refused_rule(&wrong_side), "A3.1");
    let out_of_phase = play(
        &mut german,
        &mut ids,
        Command::Move {
            units: vec!["447a".into()],
            to: hex("55I8"),
        },
    )
    .await;
    assert_eq!(refused_rule(&out_of_phase), "A4");

    // Turn 1, German Player Turn: RPh, then 1.32B, where no unit of either side could claim
    // WA, so both of its steps pass by themselves (B9.322), PFPh, MPh with moves.
    let rph = accepted(&play(&mut german, &mut ids, Command::Done).await);
    let passed = |events: &[Sequenced]| {
        events
            .iter()
            .filter(|e| matches!(e.viewed.event, protocol::Event::StepPassed(_)))
            .count()
    };
    assert_eq!(passed(&rph), 2, "{rph:?}");
    log.extend(rph);
    log.extend(accepted(&play(&mut german, &mut ids, Command::Done).await)); // PFPh ends
    let climb = play(
        &mut german,
        &mut ids,
        Command::Move {
            units: vec!["447a".into()],
            to: hex("55I8"),
        },
    )
    .await;
    let events = accepted(&climb);
    // B9.41: the 4-4-7 loses its WA on starting to enter I8, before it moves; then the
    // concealed 3-3-7 across the H7-I7 wall, with no in-hex TEM, must take it (B9.323).
    match events_of(&events)[..] {
        [Event::WallAdvantageForfeited(WallAdvantageForfeited {
            units: lost,
            why: WaLoss::Moved,
        }), Event::UnitMoved(UnitMoved { cost, mf, .. }), Event::WallAdvantageClaimed(WallAdvantageClaimed {
            units: claimed,
            how: WaClaim::Mandatory,
        })] => {
            assert_eq!(lost, &["447a"]);
            // B9.4 EX: 55H7 → I8 costs 1 + [2 × 1] = 3 MF.
            assert_eq!(cost.total.halves(), 6);
            assert_eq!(mf[0].left.halves(), 2);
            // The Russian 3-3-7 is under "?": the German knows it by its alias.
            assert_eq!(claimed, &["?1"]);
        }
        ref other => panic!("expected WA lost, the move and the 3-3-7's claim, got {other:?}"),
    }
    log.extend(events);
    let too_far = play(
        &mut german,
        &mut ids,
        Command::Move {
            units: vec!["447a".into()],
            to: hex("55H7"),
        },
    )
    .await;
    assert_eq!(refused_rule(&too_far), "A4.1");

    // B9.41 EX: the 4-6-7 leaves H5, and with it the WA over the G6-H5 wall: the Russian 7-4-7
    // in the woods of G6 may claim WA now (B9.322), and nothing else is played until it answers.
    let events = accepted(
        &play(
            &mut german,
            &mut ids,
            Command::Move {
                units: vec!["467a".into()],
                to: hex("55H6"),
            },
        )
        .await,
    );
    match events_of(&events)[..] {
        [Event::WallAdvantageForfeited(WallAdvantageForfeited {
            units: lost,
            why: WaLoss::Moved,
        }), Event::UnitMoved(UnitMoved { units: moved, .. }), Event::WallAdvantageChanceOffered(WallAdvantageChanceOffered {
            side: Side::B,
            units: offered,
        })] => {
            assert_eq!(lost, &["467a"]);
            assert_eq!(moved, &["467a"]);
            assert_eq!(offered, &["747a"]);
        }
        ref other => panic!("expected WA lost, the move and the Russian's chance, got {other:?}"),
    }
    log.extend(events);
    let waiting = play(&mut german, &mut ids, Command::Done).await;
    assert_eq!(refused_rule(&waiting), "B9.322");
    russian.follow_to(version(&log)).await;
    let not_an_answer = play(&mut russian, &mut ids, Command::Done).await;
    assert_eq!(refused_rule(&not_an_answer), "B9.322");
    let claim = accepted(
        &play(
            &mut russian,
            &mut ids,
            Command::ClaimWallAdvantage {
                units: vec!["747a".into()],
            },
        )
        .await,
    );
    assert_eq!(
        events_of(&claim),
        [&Event::WallAdvantageClaimed(WallAdvantageClaimed {
            units: vec!["747a".into()],
            how: WaClaim::EnemyLostIt,
        })]
    );
    log.extend(claim);
    german.follow_to(version(&log)).await;
    let wa = |id: &str| german.follower.game().units[id].wall_advantage;
    assert!(wa("747a") && !wa("467a"), "the 7-4-7 holds the G6-H6 wall");
    log.extend(accepted(&play(&mut german, &mut ids, Command::Done).await)); // MPh ends

    // DFPh: the Russian fires; the engine records the outcome he enters.
    russian.follow_to(version(&log)).await;
    log.extend(accepted(
        &play(
            &mut russian,
            &mut ids,
            Command::Adjudicate {
                unit: "467a".into(),
                outcome: Outcome::Pin,
                note: "DFPh 7 FP vs H6, PTC failed".into(),
            },
        )
        .await,
    ));
    log.extend(accepted(&play(&mut russian, &mut ids, Command::Done).await));
    german.follow_to(version(&log)).await;
    // AFPh; the German's RtPh step passes by itself, no German unit being broken or under
    // "?" (A10.5); the Russian's is asked, for its "?"; then APh, CCPh.
    let afph = accepted(&play(&mut german, &mut ids, Command::Done).await);
    assert_eq!(passed(&afph), 1, "{afph:?}");
    log.extend(afph);
    russian.follow_to(version(&log)).await;
    log.extend(accepted(&play(&mut russian, &mut ids, Command::Done).await));
    german.follow_to(version(&log)).await;
    log.extend(accepted(&play(&mut german, &mut ids, Command::Done).await));
    log.extend(accepted(&play(&mut german, &mut ids, Command::Done).await)); // CCPh: Player Turn ends

    // Turn 1, Russian Player Turn: the Russian is ATTACKER now; pins came off (A7.8).
    russian.follow_to(version(&log)).await;
    assert_eq!(russian.follower.game().attacker(), Side::B);
    assert!(!russian.follower.game().units["467a"].pinned);
    // Each step ended by the side to act; an end-of-RPh step whose side could claim no WA
    // passes by itself (B9.322), as does a RtPh step whose side could rout nothing (A10.5).
    while russian.follower.game().clock.turn == 1 {
        let side = russian.follower.game().acting();
        let seat = if side == Side::A {
            &mut german
        } else {
            &mut russian
        };
        seat.follow_to(version(&log)).await;
        log.extend(accepted(&play(seat, &mut ids, Command::Done).await));
        russian.follow_to(version(&log)).await;
    }
    let version = version(&log);
    assert_eq!(
        version,
        1 + 22 + 3 + 3 + 1 + 1,
        "GameCreated, one Game Turn of 22 steps, two moves of three events each (WA lost, the \
         move, and a claim or a chance), the Russian's claim and a pin"
    );

    // The spectator saw every event, in order, each exactly once.
    let seen = spectator.follow_to(version).await;
    let seqs: Vec<u64> = seen.iter().map(|s| s.seq).collect();
    assert_eq!(seqs, (2..=version).collect::<Vec<_>>());
    assert_eq!(
        seen.iter()
            .map(|s| s.viewed.event.clone())
            .collect::<Vec<_>>(),
        log.iter()
            .map(|s| s.viewed.event.clone())
            .collect::<Vec<_>>()
    );
    assert_eq!(spectator.follower.game().clock.turn, 2);

    // Every local copy agrees with the server's projections.
    let mut hashes = vec![];
    for seat in [&mut german, &mut russian, &mut spectator] {
        seat.follow_to(version).await;
        let snapshot = seat.conn.get_state().await.unwrap();
        assert_eq!(snapshot.version, version);
        assert_eq!(snapshot.state_hash, seat.follower.game().state_hash());
        hashes.push(snapshot.state_hash);
    }

    // Stop the server, start it again on the same data directory.
    drop((german, russian, spectator, creator));
    server.stop().await;
    let server = TestServer::start(dir.path(), Config::default()).await;

    let mut german = Seat::join(&server.url, &id, &game.tokens.side_a).await;
    let mut russian = Seat::join(&server.url, &id, &game.tokens.side_b).await;
    let spectator = Seat::join(&server.url, &id, &game.tokens.spectator).await;
    for (seat, before) in [&german, &russian, &spectator].into_iter().zip(&hashes) {
        assert_eq!(seat.follower.version(), version);
        assert_eq!(
            &seat.follower.game().state_hash(),
            before,
            "same state after restart"
        );
    }

    // Play continues where it stopped: turn 2, the German's RPh.
    let wrong = play(&mut russian, &mut ids, Command::Done).await;
    assert_eq!(refused_rule(&wrong), "A3.1");
    let next = accepted(&play(&mut german, &mut ids, Command::Done).await);
    assert_eq!(next[0].seq, version + 1);
    server.stop().await;
}

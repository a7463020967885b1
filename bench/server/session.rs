//! What a game's session costs per command beside the rules themselves: a whole game of the
//! load generator's scenario (`scenarios/b9-41-wall-advantage.toml`, at the longest turn
//! count) played by its steps (`protocol::rules::moving_on`), each proposed, committed and
//! every frame it makes encoded once, as the game task does without its IO
//! (`server::games::session`).
//! Baseline in the same run: the same steps decided and applied on a bare `Game`.
//!
//! `cargo bench -p asl-server --bench session`; figures go in BENCHMARKS.md.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use protocol::chain::{Entry, Salt};
use protocol::event::GameCreated;
use protocol::rules::moving_on;
use protocol::ReadScenario;
use protocol::{apply, decide, Event, Game, Scenario, ScriptedDice};
use server::games::session::{Entropy, Session, Submitted};
use server::store::envelope;
use std::hint::black_box;

/// The randomness a command draws, fixed: the bench measures work, not the system's source.
struct Fixed;

impl Entropy for Fixed {
    fn seed(&mut self) -> protocol::fair_dice::Seed {
        [7; 32]
    }
    fn salt(&mut self) -> Salt {
        [9; 16]
    }
}

fn scenario() -> Scenario {
    let text =
        protocol::scenario::longest(include_str!("../../scenarios/b9-41-wall-advantage.toml"))
            .expect("the scenario has a turn count");
    Scenario::from_toml(&text).expect("the scenario reads")
}

/// A fresh session of `scenario`, as the server loads a new game's log, its players' streams
/// read once (a game its players joined keeps them in step; nobody watches it, so the
/// spectators' stream is not kept).
fn session(scenario: &Scenario) -> Session {
    let created = Entry::created(scenario.clone());
    let (bytes, _) = envelope::seal_entry(envelope::GENESIS, [0; 16], &created);
    let verified = envelope::verify(&[(1, bytes)]).expect("a sealed log verifies");
    let session = Session::from_log(verified, vec![[7; 32]]).expect("a session");
    session.streams();
    session
}

/// Plays the session to its end; returns the steps taken.
fn through_the_session(mut session: Session) -> u64 {
    let mut steps = 0;
    while !session.game().over {
        let (side, command) = moving_on(session.game());
        let submitted = Submitted {
            side,
            id: steps,
            command,
            key: None,
            now: None,
        };
        let proposal = session
            .propose(submitted, &mut Fixed)
            .unwrap_or_else(|_| panic!("step {steps} is legal"));
        let committed = session.commit(proposal);
        let frames = committed.broadcasts.iter().flatten();
        for frame in frames.chain(committed.accepted.iter()) {
            black_box(protocol::wire::to_bincode(frame));
        }
        steps += 1;
    }
    steps
}

/// The same steps on a bare game: decided and applied, nothing else.
fn rules_alone(mut game: Game) -> u64 {
    let mut steps = 0;
    while !game.over {
        let (side, command) = moving_on(&game);
        let events =
            decide(&game, side, &command, &mut ScriptedDice::default()).expect("the step is legal");
        for event in &events {
            apply(&mut game, event);
        }
        black_box(&events);
        steps += 1;
    }
    steps
}

fn whole_game(c: &mut Criterion) {
    let scenario = scenario();
    let game = Game::replay([&Event::GameCreated(GameCreated {
        scenario: scenario.clone(),
    })])
    .expect("a game");
    let steps = rules_alone(game.clone());
    assert_eq!(through_the_session(session(&scenario)), steps);
    let mut group = c.benchmark_group("session");
    group.throughput(Throughput::Elements(steps));
    group.bench_function("rules_alone", |b| b.iter(|| rules_alone(game.clone())));
    group.bench_function("propose_commit_encode", |b| {
        b.iter_batched(
            || session(&scenario),
            through_the_session,
            criterion::BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, whole_game);
criterion_main!(benches);

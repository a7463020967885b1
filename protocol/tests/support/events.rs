//! Samples of every command and event, for the tests that need one of each
//! (`event_encoding.rs`, `golden.rs`): those the position scripts give and make, and events of
//! the variants no script makes — the clocks, undo's older form, the dice scheme and a few
//! answers — built by hand.

use protocol::board::hex::Hex;
use protocol::board::scenario::Scenario;
use protocol::board::scenario::{Side, UnitId};
use protocol::event::*;
use protocol::game::phase::Clock;
use protocol::script::{self, Action, OfflineRun};
use protocol::{Command, Game, Outcome, ReadScenario as _};
use std::path::Path;

pub fn built_events(game: &Game) -> Vec<Event> {
    let charge = protocol::game::timing::Charge {
        side: Side::A,
        bank: 61_000,
        vacation: 0,
    };
    vec![
        Event::ClockStarted(ClockStarted {
            control: protocol::board::time_control::TimeControl::parse("live:30m+10s").unwrap(),
            at: 1_700_000_000_000,
        }),
        Event::ClockHandedOver(ClockHandedOver {
            at: 1_700_000_061_000,
            charged: charge,
            added: 86_400_000,
            to: Some(Side::B),
        }),
        Event::ClockExpired(ClockExpired {
            side: Side::A,
            at: 7,
            charged: charge,
        }),
        Event::ClaimedOnTime(ClaimedOnTime { by: Side::B, at: 8 }),
        Event::TimeGiven(TimeGiven {
            by: Side::B,
            to: Side::A,
            time: 3_600_000,
            at: 9,
            charged: Some(charge),
        }),
        Event::VacationStarted(VacationStarted {
            side: Side::A,
            at: 10,
            charged: None,
        }),
        Event::VacationEnded(VacationEnded {
            side: Side::A,
            at: 11,
            charged: Some(charge),
        }),
        Event::EventsUndone(EventsUndone {
            requested_by: Side::A,
            consented_by: Side::B,
            from: 3,
            to: 4,
            restored: Box::new(game.clone()),
        }),
        Event::EventsUndoneTo(EventsUndoneTo {
            requested_by: Side::A,
            consented_by: Side::B,
            from: 5,
            to: 6,
        }),
        Event::UndoRequested(UndoRequested {
            by: Side::A,
            from: 5,
            to: 6,
        }),
        Event::UndoDeclined(UndoDeclined { by: Side::B }),
        Event::OutcomeAdjudicated(OutcomeAdjudicated {
            by: Side::A,
            unit: UnitId::from("G1"),
            outcome: Outcome::Relocate(Hex::new(None, 2, 3)),
            note: "a note".into(),
        }),
        Event::AdjudicationAccepted(AdjudicationAccepted {
            by: Side::B,
            event: 12,
        }),
        Event::AdjudicationDisputed(AdjudicationDisputed {
            by: Side::B,
            event: 12,
            reason: "no LOS".into(),
        }),
        Event::Conceded(Conceded { side: Side::B }),
        Event::EndProposed(EndProposed { side: Side::A }),
        Event::EndAgreed(EndAgreed { side: Side::B }),
        Event::DiceCommitted(DiceCommitted {
            commitment: protocol::dice::Commitment::to(&[3; 32]),
        }),
        Event::EntropyContributed(EntropyContributed {
            side: Side::B,
            nonce: [4; 32],
        }),
        Event::SeedRevealAgreed(SeedRevealAgreed { side: Side::A }),
        Event::SeedRevealed(SeedRevealed { seed: [3; 32] }),
        Event::TunnelUseSeen(TunnelUseSeen {
            by: Side::A,
            unit: UnitId::from("G1"),
            entrance: Hex::new(None, 4, 5),
        }),
        Event::GameEnded(GameEnded { turns_played: 5 }),
        Event::StepPassed(StepPassed {
            ended: Clock::START,
            next: Clock::START,
        }),
    ]
}

/// The commands and events of every position script, in order, and the first script's game
/// as it starts.
pub fn position_samples() -> (Vec<Command>, Vec<Event>, Game) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/positions");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("positions directory")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "script"))
        .collect();
    paths.sort();
    let (mut commands, mut events) = (vec![], vec![]);
    let mut first_game = None;
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap();
        let scenario_path = path
            .parent()
            .unwrap()
            .join(script::scenario_directive(&text).expect("a scenario line"));
        let scenario =
            Scenario::from_toml(&std::fs::read_to_string(scenario_path).unwrap()).unwrap();
        events.push(Event::GameCreated(GameCreated {
            scenario: scenario.clone(),
        }));
        let lines = script::parse_script(&text, &scenario).unwrap();
        let mut run = OfflineRun::new(Game::new(scenario));
        first_game.get_or_insert_with(|| run.game.clone());
        for line in &lines {
            if let Action::Command(c) = &line.action {
                commands.push(c.clone());
            }
            if let Some(Ok(made)) = run.step(line).map(|r| r.result) {
                events.extend(made);
            }
        }
    }
    (commands, events, first_game.expect("a position"))
}

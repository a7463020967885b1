//! The clock's rules (`rules::timing`) played through a referee as a server plays them, against
//! a fake time: here, in the layer that holds the referee and the verifier.

use crate::chain::Entry;
use crate::referee::testing::{export, seeds, start};
use crate::referee::Referee;
use board::scenario::Side;
use board::time_control::Millis;
use board::time_control::TimeControl;
use game::command::Command;
use game::event::Event;
use game::event::{ClaimedOnTime, ClockExpired, ClockHandedOver};
use game::timing::{awaited, Timing};
use game::Game;
use proptest::prelude::*;
use rules::violation::RuleViolation;

const S: Millis = 1000;
const M: Millis = 60 * S;
const H: Millis = 60 * M;
const D: Millis = 24 * H;
/// The fake time source's start: 2026-01-01, milliseconds since the Unix epoch.
const T0: Millis = 1_767_225_600_000;

fn timed_game(control: &str) -> Referee {
    let mut r = start(7);
    r.push_entry(Entry::clock_started(
        TimeControl::parse(control).unwrap(),
        T0,
    ))
    .unwrap();
    r
}

fn at(
    r: &mut Referee,
    by: Side,
    command: Command,
    now: Millis,
) -> Result<Vec<Event>, RuleViolation> {
    let decision = r.decide_at(by, &command, &mut seeds(), Some(now))?;
    let events = decision.events.iter().map(|(e, _)| e.clone()).collect();
    r.record(decision);
    Ok(events)
}

/// `done` by whoever the game waits on, at `now`.
fn done_at(r: &mut Referee, now: Millis) -> Vec<Event> {
    let side = awaited(r.game()).unwrap();
    at(r, side, Command::Done, now).unwrap()
}

fn timing(r: &Referee) -> &Timing {
    r.game().timing.as_deref().unwrap()
}

fn hand_overs(events: &[Event]) -> Vec<&Event> {
    events
        .iter()
        .filter(|e| matches!(e, Event::ClockHandedOver(_)))
        .collect()
}

/// Replay of the log and a verifier's check reach the clocks live play reached, and a
/// replayed position prints them.
fn replays_equal(r: &Referee) {
    let replayed = Game::replay(r.entries().iter().map(|e| &e.event)).unwrap();
    assert_eq!(replayed.timing, r.game().timing);
    let printed = crate::export::render_position(&replayed);
    assert!(printed.contains("Clocks ("), "{printed}");
    assert_eq!(replayed.state_hash(), r.game().state_hash());
    crate::export::verify_backup(export(r).as_bytes(), &mut |_, _| {})
        .unwrap_or_else(|e| panic!("a timed game's export verifies: {e}"));
}

#[test]
fn a_live_hand_over_charges_the_time_used_and_adds_the_increment() {
    let mut r = timed_game("live:30m+30s");
    let first = awaited(r.game()).unwrap();
    assert_eq!(timing(&r).running, Some(first));
    // Done until the side the game waits on changes.
    let mut now = T0;
    let handed = loop {
        now += 10 * S;
        let events = done_at(&mut r, now);
        if let Some(Event::ClockHandedOver(_)) = hand_overs(&events).first() {
            break events;
        }
        assert_eq!(
            timing(&r).bank(first),
            30 * M,
            "no charge before a hand-over"
        );
    };
    let Event::ClockHandedOver(ClockHandedOver {
        charged,
        added,
        to,
        at,
    }) = hand_overs(&handed)[0]
    else {
        unreachable!()
    };
    assert_eq!(*at, now);
    assert_eq!(charged.side, first);
    assert_eq!(charged.bank, now - T0);
    assert_eq!(*added, 30 * S);
    assert_eq!(*to, Some(first.opponent()));
    assert_eq!(timing(&r).bank(first), 30 * M - (now - T0) + 30 * S);
    assert_eq!(timing(&r).bank(first.opponent()), 30 * M);
    assert_eq!(timing(&r).running, Some(first.opponent()));
    assert_eq!(timing(&r).bank_at(first.opponent(), now + M), 29 * M);
    // The hand-over is the server's, attributed to no side.
    let logged = r
        .entries()
        .iter()
        .rev()
        .find(|e| e.event.is_servers_clock())
        .unwrap();
    assert_eq!(logged.by, None);
    replays_equal(&r);
}

#[test]
fn a_correspondence_hand_over_fills_the_bank_up_to_its_cap() {
    let mut r = timed_game("correspondence:12h/5d");
    let first = awaited(r.game()).unwrap();
    assert_eq!(timing(&r).bank(first), 5 * D);
    let mut now = T0;
    // A quick side stays at the cap.
    while awaited(r.game()) == Some(first) {
        now += M;
        done_at(&mut r, now);
    }
    assert_eq!(timing(&r).bank(first), 5 * D);
    // A slow one loses what it used beyond what a hand-over gives back.
    let second = first.opponent();
    now += 2 * D;
    while awaited(r.game()) == Some(second) {
        done_at(&mut r, now);
    }
    assert_eq!(timing(&r).bank(second), 5 * D - 2 * D + 12 * H);
    replays_equal(&r);
}

#[test]
fn a_clock_that_ran_out_is_recorded_and_the_opponent_claims_the_game() {
    let mut r = timed_game("live:30m+0s");
    let slow = awaited(r.game()).unwrap();
    let other = slow.opponent();
    // Not yet out: the expiry and a claim are refused, saying what is left.
    let early = at(&mut r, other, Command::ExpireClock, T0 + 29 * M).unwrap_err();
    assert!(early.detail.contains("1m left"), "{early}");
    let claim = at(&mut r, other, Command::ClaimOnTime, T0 + 29 * M).unwrap_err();
    assert!(claim.detail.contains("has not run out"), "{claim}");
    assert_eq!(timing(&r).expired, None);
    // Out: the slow side's moves are refused, whether or not the server has recorded it.
    let late = at(&mut r, slow, Command::Done, T0 + 30 * M).unwrap_err();
    assert!(late.detail.contains("has run out"), "{late}");
    let events = at(&mut r, other, Command::ExpireClock, T0 + 31 * M).unwrap();
    assert!(matches!(events[..], [Event::ClockExpired(ClockExpired { side, .. })] if side == slow));
    assert_eq!(timing(&r).expired, Some(slow));
    assert_eq!(timing(&r).bank(slow), 0);
    assert!(!r.game().over, "nothing happens by itself");
    let again = at(&mut r, other, Command::ExpireClock, T0 + 32 * M).unwrap_err();
    assert!(again.detail.contains("recorded"), "{again}");
    let own = at(&mut r, slow, Command::ClaimOnTime, T0 + 32 * M).unwrap_err();
    assert!(own.detail.contains("own clock"), "{own}");
    let events = at(&mut r, other, Command::ClaimOnTime, T0 + 33 * M).unwrap();
    assert!(matches!(events[0], Event::ClaimedOnTime(ClaimedOnTime { by, .. }) if by == other));
    assert!(r.game().over);
    assert_eq!(timing(&r).running, None);
    let after = at(&mut r, other, Command::Done, T0 + 34 * M).unwrap_err();
    assert!(after.detail.contains("is over"), "{after}");
    replays_equal(&r);
}

/// Every clock command, refused once the game is over (A3), whoever sends it and however the
/// game ended; the game and its record are unchanged.
fn clock_commands_are_refused_after_the_end(r: &mut Referee, now: Millis) {
    let before = (r.game().state_hash(), r.entries().len());
    for side in [Side::A, Side::B] {
        for command in [
            Command::ClaimOnTime,
            Command::GiveTime { time: M },
            Command::StartVacation,
            Command::EndVacation,
            Command::ExpireClock,
            Command::Done,
            Command::Concede,
            Command::ProposeEnd,
            Command::AcceptEnd,
            Command::AgreeToRevealSeed,
            Command::RequestUndo { from: 2 },
        ] {
            let refused = at(r, side, command.clone(), now)
                .expect_err(&format!("{command:?} by {side:?} after the end"));
            assert_eq!(refused.rule, "A3", "{command:?}: {refused}");
            assert!(refused.detail.contains("is over"), "{refused}");
        }
    }
    assert_eq!((r.game().state_hash(), r.entries().len()), before);
}

#[test]
fn a_finished_game_stays_finished_whatever_its_clocks_say() {
    // The German's clock runs out, then the sides end the game by agreement: the Russian's
    // claim on time is refused, since the result is final.
    let mut r = timed_game("live:30m+0s");
    let slow = awaited(r.game()).unwrap();
    at(&mut r, slow.opponent(), Command::ExpireClock, T0 + 31 * M).unwrap();
    at(&mut r, slow, Command::ProposeEnd, T0 + 32 * M).unwrap();
    at(&mut r, slow.opponent(), Command::AcceptEnd, T0 + 33 * M).unwrap();
    assert!(r.game().over);
    clock_commands_are_refused_after_the_end(&mut r, T0 + 34 * M);
    replays_equal(&r);

    // After a concession, in a game with vacation days and a clock still to run.
    let mut r = timed_game("correspondence:12h/5d,vacation=3d");
    let side = awaited(r.game()).unwrap();
    at(&mut r, side, Command::StartVacation, T0 + H).unwrap();
    at(&mut r, side.opponent(), Command::Concede, T0 + 2 * H).unwrap();
    clock_commands_are_refused_after_the_end(&mut r, T0 + 10 * D);
    replays_equal(&r);
}

#[test]
fn a_verifier_refuses_a_claim_on_time_after_the_end() {
    let mut r = timed_game("live:30m+0s");
    let slow = awaited(r.game()).unwrap();
    at(&mut r, slow.opponent(), Command::ExpireClock, T0 + 31 * M).unwrap();
    at(&mut r, slow, Command::ProposeEnd, T0 + 32 * M).unwrap();
    at(&mut r, slow.opponent(), Command::AcceptEnd, T0 + 33 * M).unwrap();
    // A record forged past the end: the claim the server now refuses, written in anyway.
    let claim = Command::ClaimOnTime;
    r.push_entry(Entry {
        seq: 0,
        by: Some(slow.opponent()),
        first: r.game().version + 1,
        key: None,
        command: Some(crate::chain::Issued {
            by: slow.opponent(),
            command: claim,
        }),
        event: Event::ClaimedOnTime(ClaimedOnTime {
            by: slow.opponent(),
            at: T0 + 34 * M,
        }),
    })
    .unwrap();
    let refused = crate::export::verify_backup(export(&r).as_bytes(), &mut |_, _| {})
        .expect_err("a result rewritten after the end does not verify");
    assert!(refused.to_string().contains("A3"), "{refused}");
}

#[test]
fn a_claim_records_an_expiry_the_server_has_not_yet() {
    let mut r = timed_game("live:30m+0s");
    let slow = awaited(r.game()).unwrap();
    let events = at(&mut r, slow.opponent(), Command::ClaimOnTime, T0 + 40 * M).unwrap();
    assert!(matches!(
        events[..2],
        [Event::ClockExpired(_), Event::ClaimedOnTime(_)]
    ));
    assert!(r.game().over);
    replays_equal(&r);
}

#[test]
fn time_given_lets_a_clock_that_ran_out_run_again() {
    let mut r = timed_game("live:30m+0s");
    let slow = awaited(r.game()).unwrap();
    at(&mut r, slow, Command::ExpireClock, T0 + 30 * M).unwrap();
    let giver = slow.opponent();
    let refused = at(&mut r, giver, Command::GiveTime { time: 0 }, T0 + 31 * M).unwrap_err();
    assert!(refused.detail.contains("GIVE_TIME_MAX"), "{refused}");
    let refused = at(
        &mut r,
        giver,
        Command::GiveTime { time: 8 * D },
        T0 + 31 * M,
    )
    .unwrap_err();
    assert!(refused.detail.contains("GIVE_TIME_MAX"), "{refused}");
    at(
        &mut r,
        slow.opponent(),
        Command::GiveTime { time: 5 * M },
        T0 + 40 * M,
    )
    .unwrap();
    assert_eq!(timing(&r).expired, None);
    // The time after the expiry is not charged: the 5 minutes run from the gift.
    assert_eq!(timing(&r).bank_at(slow, T0 + 44 * M), M);
    at(&mut r, slow, Command::Done, T0 + 44 * M).unwrap();
    replays_equal(&r);
}

#[test]
fn the_side_out_of_time_may_only_end_the_game() {
    let mut r = timed_game("correspondence:12h/5d,vacation=3d");
    let slow = awaited(r.game()).unwrap();
    at(&mut r, slow.opponent(), Command::ExpireClock, T0 + 6 * D).unwrap();
    for command in [
        Command::GiveTime { time: H },
        Command::StartVacation,
        Command::Done,
    ] {
        let refused = at(&mut r, slow, command.clone(), T0 + 6 * D).unwrap_err();
        assert!(refused.detail.contains("run out"), "{command:?}: {refused}");
    }
    // Its opponent gives it time; then it plays, and may give time too.
    at(
        &mut r,
        slow.opponent(),
        Command::GiveTime { time: H },
        T0 + 6 * D,
    )
    .unwrap();
    at(&mut r, slow, Command::GiveTime { time: H }, T0 + 6 * D).unwrap();
    at(&mut r, slow, Command::Concede, T0 + 6 * D).unwrap();
    replays_equal(&r);
}

#[test]
fn vacation_pauses_a_clock_within_its_allowance_only() {
    let mut r = timed_game("correspondence:12h/5d,vacation=3d");
    let side = awaited(r.game()).unwrap();
    at(&mut r, side, Command::StartVacation, T0 + H).unwrap();
    assert_eq!(timing(&r).bank(side), 5 * D - H);
    let twice = at(&mut r, side, Command::StartVacation, T0 + 2 * H).unwrap_err();
    assert!(twice.detail.contains("already"), "{twice}");
    // Two days away cost the bank nothing.
    assert_eq!(timing(&r).bank_at(side, T0 + H + 2 * D), 5 * D - H);
    assert_eq!(timing(&r).vacation_left_at(side, T0 + H + 2 * D), D);
    // Past the allowance, the bank runs again.
    assert_eq!(timing(&r).bank_at(side, T0 + H + 4 * D), 4 * D - H);
    at(&mut r, side, Command::EndVacation, T0 + H + 4 * D).unwrap();
    assert_eq!(timing(&r).vacation_left(side), 0);
    assert_eq!(timing(&r).bank(side), 4 * D - H);
    let spent = at(&mut r, side, Command::StartVacation, T0 + 5 * D).unwrap_err();
    assert!(spent.detail.contains("used all its 3d"), "{spent}");
    let not = at(&mut r, side, Command::EndVacation, T0 + 5 * D).unwrap_err();
    assert!(not.detail.contains("not on vacation"), "{not}");
    replays_equal(&r);
    // A live clock has no vacation days.
    let mut live = timed_game("live:30m+30s");
    let refused = at(&mut live, side, Command::StartVacation, T0).unwrap_err();
    assert!(refused.detail.contains("no vacation"), "{refused}");
}

#[test]
fn an_untimed_game_refuses_clock_commands_and_never_sees_time() {
    let mut r = start(7);
    let side = r.game().acting();
    let before = r.game().state_hash();
    for command in [
        Command::ClaimOnTime,
        Command::GiveTime { time: M },
        Command::StartVacation,
        Command::EndVacation,
        Command::ExpireClock,
    ] {
        let refused = at(&mut r, side, command, T0).unwrap_err();
        assert!(refused.detail.contains("no clock"), "{refused}");
    }
    assert_eq!(r.game().state_hash(), before);
    let events = at(&mut r, side, Command::Done, T0 + D).unwrap();
    assert!(events.iter().all(|e| e.clock_at().is_none()));
}

#[test]
fn a_verifier_names_a_hand_over_that_was_left_out() {
    let mut r = timed_game("live:30m+30s");
    let mut now = T0;
    while hand_overs(&done_at(&mut r, {
        now += S;
        now
    }))
    .is_empty()
    {}
    let entries: Vec<Entry> = r
        .entries()
        .iter()
        .filter(|e| !matches!(e.event, Event::ClockHandedOver(_)))
        .cloned()
        .collect();
    let mut forged = start(7);
    for entry in entries.into_iter().skip(1) {
        forged.push_entry(entry).unwrap();
    }
    let err = crate::export::verify_backup(export(&forged).as_bytes(), &mut |_, _| {})
        .unwrap_err()
        .to_string();
    assert!(err.contains("ClockHandedOver"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Against a model that knows only the law (each side's bank is its start, less the
    /// time its clock ran, plus an increment per hand-over), over random delays: the banks
    /// agree, replay agrees, and a verifier accepts the log.
    #[test]
    fn banks_follow_the_law_and_replay_equal(delays in prop::collection::vec(0u64..90_000, 1..40)) {
        let mut r = timed_game("live:30m+30s");
        let mut model = [30 * M; 2];
        let mut running = awaited(r.game()).unwrap();
        let mut since = T0;
        let mut now = T0;
        for delay in delays {
            now += delay;
            if r.game().over { break; }
            let left = model[running as usize].saturating_sub(now - since);
            if left == 0 {
                at(&mut r, running, Command::ExpireClock, now).unwrap();
                model[running as usize] = 0;
                break;
            }
            done_at(&mut r, now);
            let next = awaited(r.game());
            if next != Some(running) {
                model[running as usize] = left + if next.is_some() { 30 * S } else { 0 };
                since = now;
                match next { Some(n) => running = n, None => break }
            }
        }
        prop_assert_eq!(timing(&r).bank, model);
        replays_equal(&r);
    }
}

/// A side gives at most `CLOCK_COMMANDS_PER_PLAYER_TURN_MAX` gifts of time and vacations a
/// Player Turn: a vacation begun and ended at one moment uses none of its days, and a second
/// given at a time is millions of gifts short of a full bank, so a side giving them in a loop
/// grew its game past what an export holds. The other side's are its own, the count starts
/// again with the next Player Turn, and the log verifies.
#[test]
fn gifts_of_time_and_vacations_in_a_loop_are_held_to_a_number_a_player_turn() {
    use crate::dispute::CLOCK_COMMANDS_PER_PLAYER_TURN_MAX;
    let mut r = timed_game("correspondence:12h/5d,vacation=3d");
    let side = awaited(r.game()).unwrap();
    for _ in 0..CLOCK_COMMANDS_PER_PLAYER_TURN_MAX / 2 {
        at(&mut r, side, Command::StartVacation, T0 + H).unwrap();
        at(&mut r, side, Command::EndVacation, T0 + H).unwrap();
        at(&mut r, side, Command::GiveTime { time: S }, T0 + H).unwrap();
    }
    assert_eq!(
        timing(&r).vacation_left(side),
        3 * D,
        "the loop cost no vacation"
    );
    let version = r.game().version;
    for command in [Command::StartVacation, Command::GiveTime { time: S }] {
        let refused = at(&mut r, side, command, T0 + H).unwrap_err();
        assert_eq!(refused.rule, rules::timing::RULE);
        assert!(
            refused
                .detail
                .contains("20 gifts of time and vacations this Player Turn"),
            "{refused}"
        );
    }
    assert_eq!(r.game().version, version, "a refused command logs nothing");
    at(
        &mut r,
        side.opponent(),
        Command::GiveTime { time: S },
        T0 + H,
    )
    .unwrap();
    let turn = r.game().clock.player_turn;
    while r.game().clock.player_turn == turn {
        done_at(&mut r, T0 + 2 * H);
    }
    at(&mut r, side, Command::GiveTime { time: S }, T0 + 2 * H).unwrap();
    replays_equal(&r);
}

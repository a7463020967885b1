//! The clock's rules (`docs/clock.md`): what the server's time does around every command of a
//! game with a time control ([`timed`]), and the clock's own commands (claim on time, give
//! time, vacation, the record of a clock that ran out). ASL leaves the clock to the players,
//! so refusals cite this project's rule, [`RULE`].
//!
//! Time arrives as data: the moment (`now`, milliseconds since the Unix epoch) the server
//! took the command. A game without a time control never sees it, and decides as before.

use crate::violation::{RuleViolation, ViolationKind};
use board::scenario::Side;
use board::time_control::{duration_text, Millis, CLOCK_DURATION_MAX};
use game::command::Command;
use game::event::Event;
use game::event::{
    ClaimedOnTime, ClockExpired, ClockHandedOver, TimeGiven, VacationEnded, VacationStarted,
};
use game::timing::{awaited, Timing};
use game::Game;

/// The rule clock refusals cite.
pub const RULE: &str = "docs/clock.md";

/// Most time one `give-time` may give: 7 days.
pub const GIVE_TIME_MAX: Millis = 7 * 24 * 60 * 60 * 1000;

fn refuse(kind: ViolationKind, detail: impl Into<String>) -> RuleViolation {
    RuleViolation::new(RULE, kind, detail)
}

/// Ending the game is open to either side whatever its clock says: no clock keeps a player
/// from leaving.
fn ends_game(command: &Command) -> bool {
    matches!(
        command,
        Command::Concede | Command::ProposeEnd | Command::AcceptEnd
    )
}

/// Decides `command` with the clocks: `decide` is the decision without them. In a game with
/// a time control, a side whose clock ran out may only end the game (its opponent claims or
/// gives time), and a decision that changes the side the game waits on is followed by the
/// hand-over of the clock ([`Event::ClockHandedOver`]) at `now`. The clock's own commands
/// are decided here. `now` is the server's time; `None` (a caller with no time, such as a
/// test) counts as the last moment the clock was charged, and a `now` before it as it.
pub fn timed(
    game: &Game,
    by: Side,
    command: &Command,
    now: Option<Millis>,
    decide: impl FnOnce() -> Result<crate::Decided, RuleViolation>,
) -> Result<crate::Decided, RuleViolation> {
    // A finished game's clocks stop with it: no claim, gift of time or vacation after the
    // end may add to a result that is final.
    crate::end::still_playing(game)?;
    let Some(timing) = game.timing.as_deref() else {
        if command.is_clock() {
            return Err(refuse(
                ViolationKind::NotModelled,
                "this game has no clock: it was created without a time control",
            ));
        }
        return decide();
    };
    let now = now.unwrap_or(timing.since).max(timing.since);
    if command.is_clock() {
        return decide_clock(game, timing, by, command, now).map(crate::Decided::events);
    }
    if !ends_game(command) {
        let out = timing.out_of_time(now).filter(|side| *side == by);
        if let Some(side) = out {
            return Err(refuse(
                ViolationKind::WrongSide,
                format!(
                    "the {}'s clock has run out; the {} may claim the game (`claim-on-time`) or give time (`give-time`), and the {} may only end the game meanwhile",
                    game.side_name(side),
                    game.side_name(side.opponent()),
                    game.side_name(side)
                ),
            ));
        }
    }
    let mut decided = decide()?;
    // The side awaited after the events, read off the decision's own look-ahead when it made
    // one (the hand-over, if any, is applied to it too).
    let to = awaited(decided.after_from(game));
    if let Some(charged) = timing.charge_at(now).filter(|_| timing.running != to) {
        let left = timing.bank(charged.side) - charged.bank;
        decided.push(Event::ClockHandedOver(ClockHandedOver {
            at: now,
            charged,
            added: to.map_or(0, |_| timing.control.added_at_hand_over(left)),
            to,
        }));
    }
    Ok(decided)
}

fn decide_clock(
    game: &Game,
    timing: &Timing,
    by: Side,
    command: &Command,
    now: Millis,
) -> Result<Vec<Event>, RuleViolation> {
    let name = |side: Side| game.side_name(side).to_string();
    let left = |side: Side| duration_text(timing.bank_at(side, now));
    let charged = timing.charge_at(now);
    match command {
        Command::ExpireClock => match timing.ran_out_at(now) {
            Some(side) => Ok(vec![Event::ClockExpired(ClockExpired {
                side,
                at: now,
                charged: charged.expect("a clock that ran out was running"),
            })]),
            None => Err(refuse(
                ViolationKind::WrongPhase,
                match (timing.expired, timing.running) {
                    (Some(side), _) => {
                        format!("the {}'s clock ran out already; it is recorded", name(side))
                    }
                    (None, Some(side)) => format!(
                        "no clock has run out: the {}'s runs, with {} left",
                        name(side),
                        left(side)
                    ),
                    (None, None) => "no clock runs".to_string(),
                },
            )),
        },
        Command::ClaimOnTime => {
            let opponent = by.opponent();
            if timing.expired == Some(opponent) {
                return Ok(vec![Event::ClaimedOnTime(ClaimedOnTime { by, at: now })]);
            }
            if timing.ran_out_at(now) == Some(opponent) {
                return Ok(vec![
                    Event::ClockExpired(ClockExpired {
                        side: opponent,
                        at: now,
                        charged: charged.expect("a clock that ran out was running"),
                    }),
                    Event::ClaimedOnTime(ClaimedOnTime { by, at: now }),
                ]);
            }
            if timing.out_of_time(now) == Some(by) {
                return Err(refuse(
                    ViolationKind::WrongSide,
                    format!(
                        "it is the {}'s own clock that ran out; only the {} may claim the game",
                        name(by),
                        name(opponent)
                    ),
                ));
            }
            Err(refuse(
                ViolationKind::WrongPhase,
                format!(
                    "the {}'s clock has not run out: it has {} left; a game is claimed on time only once it has",
                    name(opponent),
                    left(opponent)
                ),
            ))
        }
        Command::GiveTime { time } => {
            let to = by.opponent();
            if timing.out_of_time(now) == Some(by) {
                return Err(refuse(
                    ViolationKind::WrongSide,
                    format!(
                        "the {}'s clock has run out; it may only end the game, and time is given to it, not by it",
                        name(by)
                    ),
                ));
            }
            if *time == 0 || *time > GIVE_TIME_MAX {
                return Err(refuse(
                    ViolationKind::NotModelled,
                    format!(
                        "time is given in amounts of more than nothing, up to {} at once (GIVE_TIME_MAX); {} was asked",
                        duration_text(GIVE_TIME_MAX),
                        duration_text(*time)
                    ),
                ));
            }
            if timing.bank_at(to, now).saturating_add(*time) > CLOCK_DURATION_MAX {
                return Err(refuse(
                    ViolationKind::NotModelled,
                    format!(
                        "the {} would have more than {} in its bank (CLOCK_DURATION_MAX)",
                        name(to),
                        duration_text(CLOCK_DURATION_MAX)
                    ),
                ));
            }
            Ok(vec![Event::TimeGiven(TimeGiven {
                by,
                to,
                time: *time,
                at: now,
                charged,
            })])
        }
        Command::StartVacation => {
            if timing.control.vacation() == 0 {
                return Err(refuse(
                    ViolationKind::NotModelled,
                    format!(
                        "this game's time control ({}) gives no vacation days; only a correspondence clock with `vacation=` does",
                        timing.control
                    ),
                ));
            }
            if timing.on_vacation(by) {
                return Err(refuse(
                    ViolationKind::WrongPhase,
                    format!("the {} is on vacation already", name(by)),
                ));
            }
            if timing.expired == Some(by) {
                return Err(refuse(
                    ViolationKind::WrongSide,
                    format!(
                        "the {}'s clock has run out; vacation pauses a running clock, not an empty one",
                        name(by)
                    ),
                ));
            }
            if timing.vacation_left_at(by, now) == 0 {
                return Err(refuse(
                    ViolationKind::NotModelled,
                    format!(
                        "the {} has used all its {} of vacation",
                        name(by),
                        duration_text(timing.control.vacation())
                    ),
                ));
            }
            Ok(vec![Event::VacationStarted(VacationStarted {
                side: by,
                at: now,
                charged,
            })])
        }
        Command::EndVacation => {
            if !timing.on_vacation(by) {
                return Err(refuse(
                    ViolationKind::WrongPhase,
                    format!("the {} is not on vacation", name(by)),
                ));
            }
            Ok(vec![Event::VacationEnded(VacationEnded {
                side: by,
                at: now,
                charged,
            })])
        }
        other => unreachable!("{other:?} is no clock command"),
    }
}

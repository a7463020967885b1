//! Steps that pass by themselves (issue 55: in a correspondence game every hand-over can cost
//! a day). A step of the sequence of play (`game::phase::STEPS`) in which the side to act has,
//! as both sides may know it, nothing it may do asks that side for nothing but `Done`. Such a
//! step passes as an event of its own (`StepPassed`), decided here and only here, right after
//! the clock reaches it, so a replay passes it as live play did and the record says why.
//!
//! Which steps may pass, and when:
//! - the end-of-RPh Wall Advantage steps (ASOP 1.32B, B9.322): when no unit of the side to act
//!   could claim WA or repair a weapon (`end_of_rally`);
//! - the RtPh steps (A3.6, A10.5): when the side to act has no unit that could rout — none
//!   broken, and none under "?" ([`routers`]).
//!
//! Every other step is asked, each for a reason of its own: the RPh (A3.1) has rally, repair
//! and set-up of its own; in the PFPh, AFPh and DFPh a unit may fire at a concealed stack or
//! mark Opportunity Fire, and a hidden unit may be placed to fire, which no public fact can
//! rule out;
//! the MPh and APh (A3.3, A3.7) let every Good Order unit move or advance; the CCPh (A3.8) has
//! tunnel entrances destroyed at its end (B8.63), which only their owner may know of.
//!
//! What may decide it: only the spectator's projection (`Game::project`), which holds exactly
//! what is public — no hidden unit, and units under "?" masked — so that passing or asking
//! tells neither side anything its own projection does not show. A player who computes the
//! answer from its own projection gets the same one (`client-cli`'s follower does).

use crate::end_of_rally;
use crate::Ahead;
use board::scenario::{Morale, Side};
use game::event::Event;
use game::event::StepPassed;
use game::phase::{Clock, Phase};
use game::{view, Game, Unit, Viewer};

/// Whether the step at `clock` is one that may pass by itself: what lets [`passing`] skip
/// looking at the position for every other step.
pub(crate) fn may_pass(clock: Clock) -> bool {
    let step = clock.step();
    (step.phase == Phase::Rally && step.rule == "B9.322") || step.phase == Phase::Rout
}

/// The `StepPassed` events that follow the clock reaching `game.clock`: one for each step in a
/// row whose side to act could do nothing in it, each judged in the public position it begins
/// in. Empty when the clock's step is asked.
pub fn passing(game: &Game) -> Vec<Event> {
    if !may_pass(game.clock) {
        return vec![];
    }
    let mut ahead = Ahead::new(game, false);
    pass_on(&mut ahead);
    ahead.events
}

/// The one way steps pass ([`passing`]): each `StepPassed` appended to the decision's
/// look-ahead, and applied to it there, while the step its position has reached passes.
pub(crate) fn pass_on(ahead: &mut Ahead) {
    while passes_on_arrival(ahead.game()) {
        let after = ahead.game();
        let Some(next) = after.clock.next(after.scenario.turns) else {
            break;
        };
        let passed = Event::StepPassed(StepPassed {
            ended: after.clock,
            next,
        });
        ahead.push(passed);
    }
}

/// Whether the step the clock has just reached passes by itself (see the module docs). A
/// follower of the event stream asks this after a `StepEnded` or `StepPassed`: when it holds,
/// the same command's `StepPassed` is still to come, so the side the step names is not the one
/// play waits on. Only right on arrival: a side that has acted in its step (claimed WA for its
/// only claimant, routed its only broken unit) ends it by `Done` like any other.
pub fn passes_on_arrival(game: &Game) -> bool {
    if game.over || !may_pass(game.clock) {
        return false;
    }
    let side = game.acting();
    match game.clock.phase() {
        // Both of the RPh's questions are asked of one projection, built whole: they read the
        // public position's Locations, hexsides and weapons.
        Phase::Rally => !end_of_rally::could_act_in(&game.project(Viewer::Spectator), side),
        Phase::Rout => routers(game, side) == 0,
        _ => false,
    }
}

/// How many units of `side` could do anything in its RtPh step (A10.5), as both sides may know
/// it: its broken units on the map and its units under "?", as the spectator's projection shows
/// them. Only a broken unit routs, drops what it cannot carry for the rout, or fails to rout
/// (A10.5); everything else a side may do then it may do at any time. A unit under "?" counts
/// whatever it is: a concealed unit's morale is its owner's secret (A12), and the engine leaves
/// outcomes on concealed units to the players (`Adjudicate`), so one may be broken under its
/// "?". A hidden unit does not count: it cannot rout while hidden, and a public answer may not
/// depend on it. A count, not a yes or no, so that a test can tell each unit's answer is public.
///
/// Each unit is read as the spectator's projection holds it, through the two functions the
/// projection makes its units by (`Viewer::sees_unit` leaves out the hidden, `view::seen_as`
/// masks a "?"), without building the rest of the projection: this runs each time the clock
/// reaches an RtPh step (issue 55). [`routers_in`] on the whole projection gives the same count.
pub fn routers(game: &Game, side: Side) -> usize {
    game.units
        .values()
        .filter(|u| Viewer::Spectator.sees_unit(u))
        .map(|u| view::seen_as(Viewer::Spectator, u))
        .filter(|u| counts_as_router(u, side))
        .count()
}

/// Whether `unit`, as the spectator's projection holds it, is one of `side`'s that
/// [`routers`] counts.
fn counts_as_router(unit: &Unit, side: Side) -> bool {
    unit.side == side && !unit.eliminated && (unit.morale == Morale::Broken || unit.concealed)
}

/// Whether `side` has a unit [`routers`] counts.
#[cfg(test)]
fn could_rout(game: &Game, side: Side) -> bool {
    routers(game, side) > 0
}

/// [`routers`] in `public`, the spectator's projection.
#[cfg(test)]
fn routers_in(public: &Game, side: Side) -> usize {
    public
        .units
        .values()
        .filter(|u| counts_as_router(u, side))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wall_advantage::ReadScenario;
    use board::scenario::Scenario;
    use game::apply;
    use game::phase::STEPS;

    fn rout_scenario() -> Game {
        let text = include_str!("../../tests/positions/scenarios/a10-5-rout.toml");
        Game::new(Scenario::from_toml(text).unwrap())
    }

    /// The clock at the ATTACKER's RtPh step of the first Player Turn.
    fn rout_step(game: &Game) -> Clock {
        let step = STEPS
            .iter()
            .position(|s| s.phase == Phase::Rout)
            .expect("the RtPh has steps");
        Clock {
            step: step as u8,
            ..game.clock
        }
    }

    /// Only the end-of-RPh and RtPh steps may pass; every other step is asked whatever the
    /// position.
    #[test]
    fn only_the_wall_advantage_and_rout_steps_may_pass() {
        let passable: Vec<&str> = STEPS
            .iter()
            .enumerate()
            .filter(|(i, _)| {
                may_pass(Clock {
                    step: *i as u8,
                    ..Clock::START
                })
            })
            .map(|(_, s)| s.name)
            .collect();
        assert_eq!(
            passable,
            [
                "end of RPh (1.32B), ATTACKER",
                "end of RPh (1.32B), DEFENDER",
                "RtPh, ATTACKER",
                "RtPh, DEFENDER"
            ]
        );
    }

    /// A broken unit keeps its side's RtPh step asked; with none broken and none under "?",
    /// the step passes; a unit under "?" keeps it asked whatever its morale, and a hidden one
    /// does not, broken or not.
    #[test]
    fn a_side_with_a_broken_or_concealed_unit_is_asked_in_its_rout_step() {
        let mut game = rout_scenario();
        for unit in game.units.values_mut() {
            unit.morale = Morale::GoodOrder;
            unit.concealed = false;
            unit.hidden = false;
            unit.desperation = false;
        }
        let side = game.units.values().next().unwrap().side;
        let id = game
            .units
            .values()
            .find(|u| u.side == side)
            .unwrap()
            .id
            .clone();
        assert!(!could_rout(&game, side));
        game.units.get_mut(&id).unwrap().morale = Morale::Broken;
        assert_eq!(routers(&game, side), 1);
        assert!(!could_rout(&game, side.opponent()));
        game.units.get_mut(&id).unwrap().morale = Morale::GoodOrder;
        game.units.get_mut(&id).unwrap().concealed = true;
        assert!(could_rout(&game, side));
        let unit = game.units.get_mut(&id).unwrap();
        unit.concealed = false;
        unit.hidden = true;
        unit.morale = Morale::Broken;
        assert!(!could_rout(&game, side));
        let unit = game.units.get_mut(&id).unwrap();
        unit.eliminated = true;
        unit.hidden = false;
        assert!(!could_rout(&game, side));
    }

    /// Counting routers unit by unit, as the spectator's projection holds each, is counting
    /// them in the projection built whole: for every mix of broken, concealed, hidden and
    /// eliminated units, of either side.
    #[test]
    fn routers_counted_unit_by_unit_are_the_routers_of_the_whole_projection() {
        let mut game = rout_scenario();
        let mut seed: u32 = 55;
        let mut seen = [0usize; 2];
        for _ in 0..256 {
            for unit in game.units.values_mut() {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                let bits = seed >> 16;
                unit.morale = if bits & 1 == 1 {
                    Morale::Broken
                } else {
                    Morale::GoodOrder
                };
                unit.concealed = bits & 2 == 2;
                unit.hidden = bits & 12 == 12;
                unit.eliminated = bits & 48 == 48;
            }
            for side in [Side::A, Side::B] {
                let whole = routers_in(&game.project(Viewer::Spectator), side);
                assert_eq!(routers(&game, side), whole, "{side:?}");
                seen[usize::from(whole > 0)] += 1;
            }
        }
        assert!(seen.iter().all(|n| *n > 0), "both answers met: {seen:?}");
    }

    /// From the ATTACKER's RtPh step, each step whose side could not rout passes, and the
    /// first whose side could is asked: here the DEFENDER's, then none, and the APh begins.
    #[test]
    fn rout_steps_pass_until_a_side_could_rout() {
        let mut game = rout_scenario();
        for unit in game.units.values_mut() {
            unit.morale = Morale::GoodOrder;
            unit.concealed = false;
            unit.hidden = false;
            unit.desperation = false;
        }
        game.clock = rout_step(&game);
        let attacker = game.attacker();
        assert!(!could_rout(&game, attacker));
        let defender_unit = game
            .units
            .values()
            .find(|u| u.side != attacker)
            .unwrap()
            .id
            .clone();
        game.units.get_mut(&defender_unit).unwrap().morale = Morale::Broken;
        let passed = passing(&game);
        assert_eq!(passed.len(), 1, "{passed:?}");
        let mut after = game.clone();
        for e in &passed {
            apply(&mut after, e);
        }
        assert_eq!(after.clock.phase(), Phase::Rout);
        assert_eq!(after.acting(), attacker.opponent());
        game.units.get_mut(&defender_unit).unwrap().morale = Morale::GoodOrder;
        let passed = passing(&game);
        assert_eq!(passed.len(), 2, "{passed:?}");
        let mut after = game.clone();
        for e in &passed {
            apply(&mut after, e);
        }
        assert_eq!(after.clock.phase(), Phase::Advance);
    }
}

//! The end-of-RPh Wall Advantage steps (ASOP 1.32B, B9.322) that pass by themselves: each
//! Player Turn the ATTACKER, then the DEFENDER, may claim WA, and a step in which the side to
//! act has no unit that could claim is a hand-over that asks a player for nothing but `Done`.
//! Such a step passes as an event of its own (`StepPassed`), through the one mechanism every
//! step that passes by itself goes through (`passing`), which asks [`could_act`] here.
//!
//! What may decide it: only what both sides may know, so that passing or asking tells neither
//! side anything. The test is run on the spectator's projection (`Game::project`), which
//! holds exactly what is public: no hidden unit, and units under "?" masked (no morale, no
//! type). Every way that view could be wrong errs towards asking:
//! - a hidden (HIP) unit is not in it, and needs no end-of-RPh step: it claims WA only by
//!   being placed on board (B9.324), which is a moment to claim of its own (B9.322) that its
//!   owner may take at any time (`PlaceHidden`), so a step passing takes nothing from it;
//! - a unit under "?" reads as a Good Order unit of no known type, so it counts as one that
//!   could claim wherever a real Good Order infantry unit in its Location could;
//! - an enemy holder under "?" (not shown real, B9.324) does not keep a unit from claiming:
//!   a claim against it is a challenge, which may succeed;
//! - a hidden enemy unit in the Location does not bar a claim (B9.32 counts only units it
//!   knows), nor does a hidden holder, which the view lacks, so it bars nothing either.
//!
//!
//! A claim is not the only act the step's side could make there: the RPh is also when a
//! malfunctioned support weapon is repaired (A9.72), and the engine takes a repair in any step
//! of the RPh. The DEFENDER's end-of-RPh step is the only step of the RPh it is asked in, so a
//! step whose side possesses a malfunctioned weapon not yet tried this RPh is asked too. That
//! is judged on the same public view: a weapon under "?" is not in it (the engine repairs none
//! possessed by a "?" or a hidden unit, `support_weapon`, so none is missed), and a
//! weapon whose possessor is broken counts (the engine leaves that repair to the players, who
//! roll and adjudicate it in the step).
//!
//! So the answer is a function of the public position alone: a player who could compute it
//! from its own projection learns nothing from it, and a unit that could claim or repair is
//! always asked for.

use crate::wall_advantage;
use board::scenario::{Side, UnitKind};
use game::{Game, Unit, Viewer};

/// Whether `side` could act in its end-of-RPh step, as both sides may know it: a unit of it
/// could claim WA there (B9.322) or repair a malfunctioned weapon (A9.72).
pub fn could_act(game: &Game, side: Side) -> bool {
    could_act_in(&game.project(Viewer::Spectator), side)
}

/// [`could_act`], judged on `public`, the spectator's projection already made: one projection
/// for both questions.
pub(crate) fn could_act_in(public: &Game, side: Side) -> bool {
    claimants_in(public, side) > 0 || repairable_in(public, side) > 0
}

/// Whether `side` has a unit [`claimants`] counts.
#[cfg(test)]
fn could_claim(game: &Game, side: Side) -> bool {
    claimants(game, side) > 0
}

/// How many malfunctioned support weapons (A9.7) possessed by units of `side` could still be
/// repaired in this RPh (A9.72: one attempt an RPh; none by a unit that attempted an act of
/// another type there, A3.1, `rally_phase::check_one_act`), as both sides may know it: the weapons the spectator's
/// projection shows, which leaves out those under "?" and hidden units'.
pub fn repairable(game: &Game, side: Side) -> usize {
    repairable_in(&game.project(Viewer::Spectator), side)
}

/// [`repairable`] in `public`, the spectator's projection.
fn repairable_in(public: &Game, side: Side) -> usize {
    public
        .weapons
        .values()
        .filter(|w| w.malfunctioned && !w.repair_tried)
        .filter(|w| {
            w.held_by
                .as_ref()
                .and_then(|id| public.units.get(id))
                .is_some_and(|u| {
                    u.side == side
                        && !u.eliminated
                        && crate::rally_phase::check_one_act(
                            public,
                            &u.id,
                            game::RallyPhaseAct::Repair,
                        )
                        .is_ok()
                })
        })
        .count()
}

/// How many units of `side` could claim WA at the end of the RPh, as both sides may know it
/// (see the module docs): eligible (B9.32, B9.35), not pinned (B9.322), holding none yet, and
/// kept from it by no enemy holder Known to be real (B9.321, B9.324). A count, so that a test
/// can tell each unit's answer is public, not only the side's.
pub fn claimants(game: &Game, side: Side) -> usize {
    claimants_in(&game.project(Viewer::Spectator), side)
}

/// [`claimants`] in `public`, the spectator's projection.
fn claimants_in(public: &Game, side: Side) -> usize {
    public
        .units
        .values()
        .filter(|u| u.side == side && !u.eliminated && !u.wall_advantage && !u.pinned)
        .filter(|u| {
            wall_advantage::may_hold(public, u, &[])
                && !wall_advantage::deniers(public, u)
                    .iter()
                    .any(|d| known_real(public, d, u))
        })
        .count()
}

/// Whether holder `d` keeps `claimant` from WA outright: Known to be real (not under "?",
/// or shown for WA before, B9.324). A dummy keeps only a dummy from it.
fn known_real(game: &Game, d: &Unit, claimant: &Unit) -> bool {
    let real = d.kind != UnitKind::Dummy || claimant.kind == UnitKind::Dummy;
    real && (!d.concealed || game.wa_shown.contains(&d.id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passing::passing;
    use crate::wall_advantage::ReadScenario;
    use board::scenario::Scenario;
    use game::apply;
    use game::phase::Phase;

    /// The Wall Advantage positions with only the units `keep`: German squads across walls
    /// from a Russian dummy holding WA (O3, P3), a concealed German holder across a wall from
    /// a Russian dummy (O9, P9), a hidden Russian squad behind a wall (F6).
    fn with_only(keep: &[&str]) -> Game {
        let text = include_str!("../../tests/positions/scenarios/wa-positions.toml");
        let mut game = Game::new(Scenario::from_toml(text).unwrap());
        game.units.retain(|id, _| keep.contains(&&**id));
        game
    }

    /// A holder under "?" may be a dummy, and a claim against it is a challenge (B9.324): the
    /// unit it keeps from WA is asked. A holder Known to be real keeps it from WA outright
    /// (B9.321), so its step passes.
    #[test]
    fn only_a_holder_known_to_be_real_keeps_a_side_from_being_asked() {
        let mut game = with_only(&["g3", "rd"]);
        assert!(game.units["rd"].wall_advantage && game.units["rd"].concealed);
        assert!(could_claim(&game, Side::A));
        let rd = game.units.get_mut("rd").unwrap();
        rd.concealed = false;
        rd.kind = UnitKind::Squad;
        assert!(!could_claim(&game, Side::A));
        // Shown for WA before, a concealed holder is Known to be real too.
        game.units.get_mut("rd").unwrap().concealed = true;
        game.wa_shown.insert("rd".into());
        assert!(!could_claim(&game, Side::A));
    }

    /// A unit under "?" could be real: it counts as one that could claim whether it is a dummy
    /// (which could not take WA from the concealed German holder) or a squad (which could
    /// challenge it). Nobody but its owner can tell, so the step is asked either way.
    #[test]
    fn a_unit_under_cover_counts_as_real() {
        let mut game = with_only(&["g9", "rdd"]);
        assert_eq!(game.units["rdd"].kind, UnitKind::Dummy);
        assert!(could_claim(&game, Side::B));
        game.units.get_mut("rdd").unwrap().kind = UnitKind::Squad;
        assert!(could_claim(&game, Side::B));
    }

    /// A hidden unit claims WA only by being placed on board, a moment of its own at any
    /// time: it makes nobody ask for the end-of-RPh step, so the step tells nothing of it.
    /// Placed (under "?"), it is asked for like any unit.
    #[test]
    fn a_hidden_unit_is_not_asked_for_and_a_placed_one_is() {
        let mut game = with_only(&["r3"]);
        assert!(game.units["r3"].hidden);
        assert!(!could_claim(&game, Side::B));
        let r3 = game.units.get_mut("r3").unwrap();
        r3.hidden = false;
        r3.concealed = true;
        assert!(could_claim(&game, Side::B));
    }

    /// A malfunctioned weapon its side could still repair this RPh (A9.72) keeps that side's
    /// step asked; once tried, or under "?" where the public view does not show it, it does
    /// not. The German has no wall to claim WA at in this scenario.
    #[test]
    fn a_weapon_to_repair_keeps_its_sides_step_asked() {
        let text = include_str!("../../tests/positions/scenarios/a9-sw.toml");
        let mut game = Game::new(Scenario::from_toml(text).unwrap());
        assert!(!could_act(&game, Side::A));
        game.weapons.get_mut("glmg").unwrap().malfunctioned = true;
        assert_eq!(repairable(&game, Side::A), 1);
        assert_eq!(repairable(&game, Side::B), 0);
        assert!(could_act(&game, Side::A) && !could_act(&game, Side::B));
        game.weapons.get_mut("glmg").unwrap().repair_tried = true;
        assert!(!could_act(&game, Side::A));
        game.weapons.get_mut("glmg").unwrap().repair_tried = false;
        game.units.get_mut("g1").unwrap().concealed = true;
        assert!(!could_act(&game, Side::A));
    }

    /// From the RPh, each end-of-RPh step whose side could claim nothing passes, and the
    /// first whose side could claim is asked.
    #[test]
    fn steps_pass_until_a_side_could_claim() {
        let mut game = with_only(&["g3", "rd"]);
        let rph_end = game.clock.next(game.scenario.turns).unwrap();
        game.clock = rph_end;
        // The German (ATTACKER) could challenge the dummy: asked, nothing passes.
        assert!(passing(&game).is_empty());
        game.units.get_mut("rd").unwrap().concealed = false;
        game.units.get_mut("rd").unwrap().kind = UnitKind::Squad;
        // Known real: the German's step passes; the Russian holds WA already and has no
        // other unit, so its step passes too, and the PFPh begins.
        let passed = passing(&game);
        assert_eq!(passed.len(), 2, "{passed:?}");
        let mut after = game.clone();
        for e in &passed {
            apply(&mut after, e);
        }
        assert_eq!(after.clock.phase(), Phase::PrepFire);
    }
}

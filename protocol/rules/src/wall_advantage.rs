//! Wall Advantage (B9.32–B9.41, B9.5): who may hold it, when it may be claimed or given up,
//! who must hold it, and what happens to it when units move, break or are revealed.
//!
//! WA belongs to a unit but covers its whole hex: every eligible wall/hedge/bocage hexside
//! at once (B9.321). Two opposing units never hold it over a shared hexside; whoever holds it
//! denies the other WA over all of its hexsides.
//!
//! Three kinds of change are decided here:
//! - claims and forfeits a player asks for (`claim`, `forfeit`, `decline`), checked against
//!   the five moments of B9.322 and the eligibility of B9.32;
//! - what must follow any event (`settle`): a holder that no longer qualifies loses WA at once;
//!   a unit without in-hex TEM of +1 or more gains it the moment it can (B9.323); and when all
//!   enemy units sharing a unit's hexsides lost WA, its side is offered the chance to claim
//!   (B9.322), with play waiting for the answer;
//! - the setup check of a scenario's initial WA.

use super::own_unit;
use crate::violation::{log_text, pieces, Piece, RuleViolation, ViolationKind};
use board::hex::{Hex, Hexside};
use board::los::LosMap;
use board::scenario::{refuse, Morale, Scenario, ScenarioError, Side, UnitId, UnitKind};
use board::terrain::Terrain;
use game::event::{Event, WaClaim, WaLoss};
use game::event::{
    UnitsMomentarilyRevealed, WallAdvantageChallenged, WallAdvantageChanceDeclined,
    WallAdvantageChanceOffered, WallAdvantageClaimed, WallAdvantageDenied, WallAdvantageForfeited,
    WallAdvantageHipWindowOffered,
};
use game::phase::Phase;
use game::{apply, Game, Unit};
use std::collections::BTreeSet;
use std::ops::Bound;

/// The level a wall/hedge lies at: the lower of the two hexes' base levels (B9.35).
fn wall_level(game: &Game, side: Hexside) -> i8 {
    let level = |h: Hex| game.scenario.hexes.get(&h).map_or(0, |s| s.elevation);
    level(side.a).min(level(side.b))
}

/// Hexsides WA covers: a hex's six at most, kept inline, since [`wa_hexsides`] runs for many
/// units after every command. The type the map keeps a hex's walls at base in.
pub(crate) type WaHexsides = board::los::WallsAtBase;

/// The wall/hedge/bocage hexsides of `unit`'s hex that WA would cover: at the unit's own
/// level (B9.35), and in Bypass only the hexside it straddles and the two joining it (B9.32).
pub fn wa_hexsides(game: &Game, unit: &Unit) -> WaHexsides {
    let hex = unit.hex;
    let geometry = game.scenario.geometry();
    let straddled = unit
        .bypass
        .as_ref()
        .and_then(|b| b.along.last().copied())
        .and_then(|far| geometry.hexside(hex, far));
    let open =
        |s: &Hexside| straddled.is_none_or(|st| *s == st || geometry.contiguous_in(st, *s, hex));
    // The common case from the LOS map, worked out once per scenario: this runs for every
    // unit after every command, and the scenario's maps cost a search per hexside and hex.
    let walls = (!unit.placement.on_bridge)
        .then(|| LosMap::of(&game.scenario).walls_at_base(hex))
        .flatten();
    let Some(walls) = walls else {
        return from_scenario(game, unit, open);
    };
    let sides: WaHexsides = match straddled {
        // Copied whole: most units are not in Bypass.
        None => walls.clone(),
        Some(_) => walls.iter().copied().filter(open).collect(),
    };
    debug_assert_eq!(
        sides,
        from_scenario(game, unit, open),
        "WA hexsides of {unit:?}"
    );
    sides
}

/// [`wa_hexsides`] read off the scenario's maps: a unit on a bridge, which may hold WA over a
/// Roadblock only (B9.32 EXC), a hex on no board of the map, and in debug builds every answer
/// the grid gives.
fn from_scenario(game: &Game, unit: &Unit, open: impl Fn(&Hexside) -> bool) -> WaHexsides {
    let hex = unit.hex;
    let level = game.scenario.hexes.get(&hex).map_or(0, |s| s.elevation);
    let on_bridge = unit.placement.on_bridge;
    game.scenario
        .geometry()
        .hexsides(hex)
        .into_iter()
        .filter(|s| {
            if on_bridge {
                game.scenario.hexside_spec(*s).is_some_and(|h| h.roadblock)
            } else {
                game.scenario.hexside_feature(*s).is_some()
            }
        })
        .filter(|s| wall_level(game, *s) == level)
        .filter(|s| open(s))
        .collect()
}

/// Whether [`wa_hexsides`] must give `a` in `ga` what it gives `b` in `gb`, without computing
/// either: it reads only the scenario and the unit's hex, the last hexside it moved along in
/// Bypass and whether it is on a bridge. Most units stand still through most commands, so
/// `settle` checks this first.
fn same_wa_hexsides(ga: &Game, a: &Unit, gb: &Game, b: &Unit) -> bool {
    let straddled = |u: &Unit| u.bypass.as_ref().and_then(|by| by.along.last().copied());
    std::sync::Arc::ptr_eq(&ga.scenario, &gb.scenario)
        && a.hex == b.hex
        && straddled(a) == straddled(b)
        && a.placement.on_bridge == b.placement.on_bridge
}

/// The in-hex TEM a unit could claim instead of WA (B9.31, B9.323). A unit in Bypass is in the
/// open part of its hex (A4.33), so its hex's obstacle gives it none.
pub(crate) fn in_hex_tem(game: &Game, unit: &Unit) -> i8 {
    if unit.bypass.is_some() {
        return 0;
    }
    let from_scenario = || game.scenario.hexes.get(&unit.hex).map(|s| s.terrain);
    // Off the grid (built once per scenario) rather than a search of the scenario's hexes.
    let terrain = LosMap::of(&game.scenario)
        .terrain_at(unit.hex)
        .unwrap_or_else(from_scenario);
    debug_assert_eq!(terrain, from_scenario(), "terrain of {}", unit.hex);
    terrain.map_or(0, |t| t.row().tem.direct)
}

/// B9.323: a unit that cannot claim in-hex TEM of +1 or more must hold WA whenever it can.
pub(crate) fn is_mandatory(game: &Game, unit: &Unit) -> bool {
    in_hex_tem(game, unit) < 1
}

/// Why a unit may not hold WA, as (rule, reason); `Ok` when it may (B9.32, B9.324, B9.35).
/// `alongside` names units of its side in the same Location that claim together with it, for
/// broken units, which may hold WA only beside Good Order ones that do.
pub(crate) fn eligibility(
    game: &Game,
    unit: &Unit,
    alongside: &[UnitId],
) -> Result<(), (&'static str, Vec<Piece>)> {
    eligibility_over(game, unit, alongside, &wa_hexsides(game, unit))
}

/// [`eligibility`], given the unit's [`wa_hexsides`].
fn eligibility_over(
    game: &Game,
    unit: &Unit,
    alongside: &[UnitId],
    wa_sides: &[Hexside],
) -> Result<(), (&'static str, Vec<Piece>)> {
    if unit.eliminated {
        return Err(("B9.32", pieces!["it has been eliminated"]));
    }
    if unit.kind == UnitKind::Counter {
        return Err((
            "B9.32",
            pieces!["it is a counter the engine does not rule on"],
        ));
    }
    if unit.underground.is_some() {
        return Err(("B9.32", pieces!["it is below ground, not at ground level"]));
    }
    if game.upper_level(unit).is_some() {
        return Err((
            "B9.32",
            pieces!["it is on an upper level of its hex, not at ground level"],
        ));
    }
    if unit.hidden {
        return Err((
            "B9.324",
            pieces!["it is hidden; a HIP unit must be placed on board to claim WA"],
        ));
    }
    if let Some(why) = super::fortification::wa_exclusion(game, unit) {
        return Err(("B9.32", pieces![why]));
    }
    if unit.kind == UnitKind::Vehicle {
        let terrain = game.scenario.hexes.get(&unit.hex).map(|s| s.terrain);
        let exempt = matches!(terrain, Some(Terrain::CactusPatch | Terrain::OliveGrove));
        if in_hex_tem(game, unit) >= 1 && !exempt {
            return Err((
                "B9.32",
                pieces!["it is a vehicle that can claim in-hex TEM of +1 or more"],
            ));
        }
    }
    if let Some(enemy) = game
        .units_above(unit.hex)
        .find(|u| u.side != unit.side && !u.hidden && game.same_location(u, unit))
    {
        return Err((
            "B9.32",
            pieces![
                "an enemy unit (",
                Piece::unit(&enemy.id),
                ") is in its Location"
            ],
        ));
    }
    if unit.morale == Morale::Broken {
        let companion = game.units_above(unit.hex).any(|u| {
            u.side == unit.side
                && game.same_location(u, unit)
                && u.is_good_order()
                && (u.wall_advantage || alongside.contains(&u.id))
        });
        if !companion {
            return Err((
                "B9.32",
                pieces!["it is broken, and no Good Order unit of its Location holds WA with it"],
            ));
        }
    }
    if wa_sides.is_empty() {
        let any_wall = game
            .scenario
            .geometry()
            .hexsides(unit.hex)
            .into_iter()
            .any(|s| game.scenario.hexside_feature(s).is_some());
        if unit.placement.on_bridge {
            return Err((
                "B9.32",
                pieces!["it is on a bridge, where WA is held over a Roadblock only"],
            ));
        }
        return Err(if any_wall && unit.bypass.is_none() {
            (
                "B9.35",
                pieces!["its hex is above the base level of its walls/hedges"],
            )
        } else {
            (
                "B9.32",
                pieces!["no wall, hedge or bocage hexside of its Location is open to it"],
            )
        });
    }
    Ok(())
}

/// Whether `unit` may hold WA: [`eligibility`] without its reasons. Most units have no wall,
/// hedge or bocage hexside at their level at all, which is one of eligibility's conditions
/// (B9.32, B9.35) and the cheapest to check, so it is checked first; the rest (which looks
/// through every unit for an enemy in the Location, and words its refusals) only for the few
/// that have one. The answer is eligibility's: its conditions all hold or not, in any order.
pub(crate) fn may_hold(game: &Game, unit: &Unit, alongside: &[UnitId]) -> bool {
    let wa_sides = wa_hexsides(game, unit);
    !wa_sides.is_empty() && eligibility_over(game, unit, alongside, &wa_sides).is_ok()
}

/// Enemy units holding WA over a hexside `unit` would hold it over (B9.321).
pub fn deniers<'g>(game: &'g Game, unit: &Unit) -> Vec<&'g Unit> {
    Holders::of(game).deniers(unit)
}

/// The WA holders of one position, each with the hexsides it holds WA over, found once:
/// `settle` asks who keeps each unit of a side from WA, and a position has few holders.
/// Hexsides are compared by the map's names for them, so a holder counts wherever its hex
/// lies, a seam hex named by either board included.
/// Up to this many holders, who denies a unit is found by asking each of them: cheaper than
/// indexing their hexsides, which a small game's few holders do not repay.
const HOLDERS_SCANNED_MAX: usize = 8;

struct Holders<'g> {
    game: &'g Game,
    held: Vec<(&'g Unit, WaHexsides)>,
    /// The holders over each hexside, as places in `held`: who denies a unit is found from
    /// its own few hexsides, not by asking every holder (a real scenario has dozens). Empty
    /// for [`HOLDERS_SCANNED_MAX`] holders or fewer.
    over: std::collections::HashMap<Hexside, Vec<usize>>,
}

impl<'g> Holders<'g> {
    fn of(game: &'g Game) -> Holders<'g> {
        let held: Vec<(&'g Unit, WaHexsides)> = game
            .units
            .values()
            .filter(|u| u.wall_advantage && !u.eliminated)
            .map(|u| (u, wa_hexsides(game, u)))
            .collect();
        let mut over: std::collections::HashMap<Hexside, Vec<usize>> = Default::default();
        if held.len() > HOLDERS_SCANNED_MAX {
            for (i, (_, sides)) in held.iter().enumerate() {
                for side in sides.iter() {
                    over.entry(*side).or_default().push(i);
                }
            }
        }
        Holders { game, held, over }
    }

    /// [`deniers`]: the enemy holders over a hexside `unit` would hold WA over, in id order.
    fn deniers(&self, unit: &Unit) -> Vec<&'g Unit> {
        if !self.held.iter().any(|(e, _)| e.side != unit.side) {
            return vec![];
        }
        let mine = wa_hexsides(self.game, unit);
        if self.held.len() <= HOLDERS_SCANNED_MAX {
            return self
                .held
                .iter()
                .filter(|(e, theirs)| {
                    e.side != unit.side && theirs.iter().any(|s| mine.contains(s))
                })
                .map(|(e, _)| *e)
                .collect();
        }
        // Places in `held`, which is in id order: sorted, they give the deniers in id order.
        let mut found: Vec<usize> = mine
            .iter()
            .filter_map(|s| self.over.get(s))
            .flatten()
            .copied()
            .filter(|i| self.held[*i].0.side != unit.side)
            .collect();
        found.sort_unstable();
        found.dedup();
        found.into_iter().map(|i| self.held[i].0).collect()
    }

    /// The enemy holders that really keep `unit` from WA: a dummy holder does not keep a
    /// real unit from it (B9.324).
    fn blocking_deniers(&self, unit: &Unit) -> Vec<&'g Unit> {
        let mut deniers = self.deniers(unit);
        deniers.retain(|d| d.kind != UnitKind::Dummy || unit.kind == UnitKind::Dummy);
        deniers
    }

    /// Whether `unit` could take WA now: eligible and kept from it by no enemy holder.
    fn could_hold(&self, unit: &Unit) -> bool {
        !unit.wall_advantage
            && may_hold(self.game, unit, &[])
            && self.blocking_deniers(unit).is_empty()
    }
}

/// Whether `side` may claim WA voluntarily now, by the moments of B9.322 that depend on the
/// clock: the end-of-RPh steps (ATTACKER, then DEFENDER) and its own MPh/APh.
fn claim_moment(game: &Game, side: Side) -> Option<WaClaim> {
    if game.acting() != side {
        return None;
    }
    let step = game.clock.step();
    match step.phase {
        Phase::Rally if step.rule == "B9.322" => Some(WaClaim::EndOfRallyPhase),
        Phase::Movement | Phase::Advance => Some(WaClaim::OwnMovement),
        _ => None,
    }
}

/// B9.322's third moment lasts only until the unit's own MPh is completed: once another unit
/// has started moving (A4.2), a unit that moved before it may no longer claim in this MPh.
fn movement_completed(game: &Game, unit: &Unit) -> bool {
    game.clock.phase() == Phase::Movement && game.movement.finished.contains(&unit.id)
}

/// Whether `unit` may claim WA by command now without being offered a chance: its side's
/// clock moment (B9.322) applies to it.
fn may_claim_now(game: &Game, unit: &Unit) -> bool {
    claim_moment(game, unit.side).is_some() && !movement_completed(game, unit)
}

/// Refuses while an enemy attack is declared and unresolved, wherever its target: between an
/// enemy action's declaration and its completion no unit claims or forfeits WA (B9.322's last
/// sentence), not only in the target hex.
fn check_no_attack_pending(game: &Game, unit: &Unit, what: &str) -> Result<(), RuleViolation> {
    match &game.attack {
        Some(a) if a.by != unit.side => Err(RuleViolation::with(
            "B9.322",
            ViolationKind::WrongPhase,
            pieces![
                format!(
                    "enemy fire has been declared against {} and not yet resolved; ",
                    a.target
                ),
                Piece::unit(&unit.id),
                format!(" cannot {what} WA until it is")
            ],
        )),
        _ => Ok(()),
    }
}

/// `ClaimWallAdvantage`.
pub(super) fn claim(game: &Game, by: Side, ids: &[UnitId]) -> Result<Vec<Event>, RuleViolation> {
    if ids.is_empty() {
        return Err(RuleViolation::new(
            "B9.32",
            ViolationKind::UnknownUnit,
            "name at least one unit to claim WA",
        ));
    }
    let chance = game.wa_chance.as_ref().filter(|c| c.side == by);
    let how = match chance {
        Some(c) if ids.iter().all(|id| c.units.contains(id)) => WaClaim::EnemyLostIt,
        _ => claim_moment(game, by).ok_or_else(|| {
            RuleViolation::new(
                "B9.322",
                ViolationKind::WrongPhase,
                format!(
                    "a claim by command is made only at the end of an RPh (ATTACKER first), in the unit's own MPh until it is completed or its own APh, when offered after the enemy lost WA, or as a hidden unit is placed (`place UNIT claim-wa`); setup WA is written in the scenario; it is now the {} ({})",
                    game.clock.phase(),
                    game.clock
                ),
            )
        })?,
    };
    super::check_named_once(ids, "B9.322", " among the units claiming WA")?;
    let units = ids
        .iter()
        .map(|id| own_unit(game, by, id))
        .collect::<Result<Vec<&Unit>, _>>()?;
    check_claimable(game, &units, ids, how)?;
    // A claim refused now is refused before any HIP moment: a unit placed in it could only
    // take WA first, never make the claim good.
    let resolved = resolve_claim(game, &units, ids, how)?;
    if let Some(side) = hip_window_for(game, &units, how) {
        return Ok(vec![Event::WallAdvantageHipWindowOffered(
            WallAdvantageHipWindowOffered {
                side,
                claimants: ids.to_vec(),
                how,
            },
        )]);
    }
    Ok(resolved)
}

/// The side to offer B9.324's HIP moment before `units` claim WA at moment `how`, if any:
/// they are moving in their MPh (they "move adjacent and attempt to claim") and the enemy's
/// scenario gave it hidden units — placed hidden on the map, or allowed HIP at its set-up
/// step (A12.3), whether or not it took the allowance. Which hidden units, and where, is not
/// asked — asking only when one is adjacent would tell the mover it is there — and neither
/// is whether any are still hidden: asking only then would tell the mover when the last one
/// came out, or whether the enemy set any up hidden. What the window reveals is what a
/// scenario card's HIP allowance says anyway.
fn hip_window_for(game: &Game, units: &[&Unit], how: WaClaim) -> Option<Side> {
    let unit = units.first()?;
    let enemy = unit.side.opponent();
    let moving = game.clock.phase() == Phase::Movement
        && units.iter().all(|u| {
            game.movement.moving_stack.contains(&u.id) && !game.movement.finished.contains(&u.id)
        });
    let hip = game
        .scenario
        .units
        .values()
        .any(|u| u.side == enemy && u.hidden)
        || game.scenario.setup.as_ref().is_some_and(|setup| {
            setup
                .units
                .values()
                .any(|u| u.side == enemy && u.may_hide && u.enters.is_none())
        });
    (moving && hip && matches!(how, WaClaim::OwnMovement | WaClaim::Mandatory)).then_some(enemy)
}

/// The claim a HIP window held up, once its side answered (B9.324): a voluntary claim is
/// decided now against the position after the answer; a mandatory one is granted (or
/// challenged) by `settle` like any other.
pub(super) fn after_hip_window(after: &Game, window: &game::WaHipWindow) -> Vec<Event> {
    if window.how == WaClaim::Mandatory {
        return vec![];
    }
    let units: Vec<&Unit> = window
        .claimants
        .iter()
        .filter_map(|id| after.units.get(id))
        .filter(|u| !u.eliminated)
        .collect();
    if units.len() != window.claimants.len() {
        return vec![];
    }
    let decided = check_claimable(after, &units, &window.claimants, window.how)
        .and_then(|()| resolve_claim(after, &units, &window.claimants, window.how));
    match decided {
        Ok(events) => events,
        Err(_) => deniers(after, units[0])
            .first()
            .map(|d| {
                vec![Event::WallAdvantageDenied(WallAdvantageDenied {
                    units: window.claimants.clone(),
                    by: d.id.clone(),
                })]
            })
            .unwrap_or_default(),
    }
}

/// Unit-state and eligibility checks for a voluntary claim, in the documented precedence.
fn check_claimable(
    game: &Game,
    units: &[&Unit],
    ids: &[UnitId],
    how: WaClaim,
) -> Result<(), RuleViolation> {
    let hex = units[0].hex;
    for unit in units {
        let id = &unit.id;
        if unit.hex != hex {
            return Err(RuleViolation::new(
                "B9.321",
                ViolationKind::UnitState,
                "claim WA for the units of one Location at a time",
            ));
        }
        if unit.pinned {
            return Err(RuleViolation::with(
                "B9.322",
                ViolationKind::UnitState,
                pieces![
                    Piece::unit(id),
                    " is pinned and cannot claim WA voluntarily"
                ],
            ));
        }
        if unit.wall_advantage {
            return Err(RuleViolation::with(
                "B9.32",
                ViolationKind::UnitState,
                pieces![Piece::unit(id), " holds WA already"],
            ));
        }
        if how == WaClaim::OwnMovement && movement_completed(game, unit) {
            return Err(RuleViolation::with(
                "B9.322",
                ViolationKind::WrongPhase,
                pieces![Piece::unit(id), " has completed its MPh (another unit has moved since); it claims WA in this MPh no more"],
            ));
        }
        if unit.wa_blocked && how == WaClaim::OwnMovement && game.clock.phase() == Phase::Movement {
            return Err(RuleViolation::with(
                "B9.41",
                ViolationKind::UnitState,
                pieces![
                    Piece::unit(id),
                    " failed to leave its Location this MPh and may not re-claim WA until it ends"
                ],
            ));
        }
        check_no_attack_pending(game, unit, "claim")?;
        if let Err((rule, why)) = eligibility(game, unit, ids) {
            return Err(RuleViolation::with(
                rule,
                ViolationKind::Terrain,
                pieces![Piece::unit(id), " cannot claim WA: ", why],
            ));
        }
    }
    Ok(())
}

/// Decides a claim that passed its checks against the enemy units holding WA over shared
/// hexsides (B9.321, B9.324). A Known real holder refuses it outright. A concealed holder is
/// challenged: the claimant shows a real unit (if all of it is concealed), and the holder must
/// show one or forfeit; the exchange is logged even when the claim fails.
fn resolve_claim(
    game: &Game,
    units: &[&Unit],
    ids: &[UnitId],
    how: WaClaim,
) -> Result<Vec<Event>, RuleViolation> {
    let mut holders: Vec<&Unit> = vec![];
    for unit in units {
        for d in deniers(game, unit) {
            if !holders.iter().any(|h| h.id == d.id) {
                holders.push(d);
            }
        }
    }
    let claimed = vec![Event::WallAdvantageClaimed(WallAdvantageClaimed {
        units: ids.to_vec(),
        how,
    })];
    if holders.is_empty() {
        return Ok(claimed);
    }
    if let Some(known) = holders.iter().find(|h| known_real(game, h)) {
        return Err(RuleViolation::with(
            "B9.321",
            ViolationKind::Terrain,
            pieces![Piece::unit(&known.id), format!(" in {} holds WA over a wall/hedge hexside shared with {}; only one side holds it", known.hex, units[0].hex)],
        ));
    }
    let real_claimant = units.iter().find(|u| u.kind != UnitKind::Dummy);
    let Some(real_claimant) = real_claimant else {
        return Err(RuleViolation::new(
            "B9.324",
            ViolationKind::Terrain,
            "a dummy stack cannot take WA from an enemy that holds it",
        ));
    };
    let mut events = vec![];
    if !units.iter().any(|u| known_real(game, u)) {
        events.push(Event::UnitsMomentarilyRevealed(UnitsMomentarilyRevealed {
            units: vec![real_claimant.id.clone()],
        }));
    }
    events.push(Event::WallAdvantageChallenged(WallAdvantageChallenged {
        side: holders[0].side,
        holders: holders.iter().map(|h| h.id.clone()).collect(),
        claimants: ids.to_vec(),
        how,
    }));
    Ok(events)
}

/// Whether the enemy knows `unit` for a real unit: not a dummy, and either not concealed or
/// shown for WA before (B9.324).
fn known_real(game: &Game, unit: &Unit) -> bool {
    unit.kind != UnitKind::Dummy && (!unit.concealed || game.wa_shown.contains(&unit.id))
}

/// `ShowForWallAdvantage`: the challenged side shows a real holder; the claim fails (B9.324).
pub(super) fn show(game: &Game, by: Side, id: &UnitId) -> Result<Vec<Event>, RuleViolation> {
    let Some(challenge) = game.wa_challenge.as_ref().filter(|c| c.side == by) else {
        return Err(RuleViolation::new(
            "B9.324",
            ViolationKind::WrongPhase,
            "no challenge to this side's WA is waiting for an answer",
        ));
    };
    let unit = own_unit(game, by, id)?;
    if !challenge.holders.contains(id) {
        return Err(RuleViolation::with(
            "B9.324",
            ViolationKind::UnitState,
            pieces![
                Piece::unit(id),
                " is not one of the challenged holders (",
                Piece::units(&challenge.holders),
                ")"
            ],
        ));
    }
    if unit.kind == UnitKind::Dummy {
        return Err(RuleViolation::with(
            "B9.324",
            ViolationKind::UnitState,
            pieces![
                Piece::unit(id),
                " is a dummy and cannot be shown as a real unit; show another or forfeit"
            ],
        ));
    }
    Ok(vec![
        Event::UnitsMomentarilyRevealed(UnitsMomentarilyRevealed {
            units: vec![id.clone()],
        }),
        Event::WallAdvantageDenied(WallAdvantageDenied {
            units: challenge.claimants.clone(),
            by: id.clone(),
        }),
    ])
}

/// The other answer to a challenge: the holders forfeit, and the claim stands (B9.324).
fn forfeit_challenged(
    challenge: &game::WaChallenge,
    ids: &[UnitId],
) -> Result<Vec<Event>, RuleViolation> {
    let named: BTreeSet<&UnitId> = ids.iter().collect();
    let holders: BTreeSet<&UnitId> = challenge.holders.iter().collect();
    if named != holders {
        return Err(RuleViolation::with(
            "B9.324",
            ViolationKind::UnitState,
            pieces![
                "answering the challenge, forfeit for all the challenged holders at once: ",
                Piece::units(&challenge.holders)
            ],
        ));
    }
    Ok(vec![
        Event::WallAdvantageForfeited(WallAdvantageForfeited {
            units: challenge.holders.clone(),
            why: WaLoss::ChallengeForfeited,
        }),
        Event::WallAdvantageClaimed(WallAdvantageClaimed {
            units: challenge.claimants.clone(),
            how: challenge.how,
        }),
    ])
}

/// A claim made as a hidden unit is placed on board (B9.322's fourth moment); `game` already
/// has it placed.
pub(super) fn claim_on_placement(game: &Game, id: &UnitId) -> Result<Vec<Event>, RuleViolation> {
    let unit = &game.units[id];
    let ids = std::slice::from_ref(id);
    check_claimable(game, &[unit], ids, WaClaim::LosingHip)?;
    resolve_claim(game, &[unit], ids, WaClaim::LosingHip)
}

/// `ForfeitWallAdvantage`: at any time, by the owner — but not by a unit that must hold WA
/// (B9.323), not by a Pinned one, and not between the declaration and resolution of an attack
/// on it (B9.322).
pub(super) fn forfeit(game: &Game, by: Side, ids: &[UnitId]) -> Result<Vec<Event>, RuleViolation> {
    if ids.is_empty() {
        return Err(RuleViolation::new(
            "B9.322",
            ViolationKind::UnknownUnit,
            "name at least one unit to forfeit WA",
        ));
    }
    super::check_named_once(ids, "B9.322", " among the units forfeiting WA")?;
    if let Some(challenge) = game.wa_challenge.as_ref().filter(|c| c.side == by) {
        return forfeit_challenged(challenge, ids);
    }
    for id in ids {
        let unit = own_unit(game, by, id)?;
        if !unit.wall_advantage {
            return Err(RuleViolation::with(
                "B9.322",
                ViolationKind::UnitState,
                pieces![Piece::unit(id), " holds no WA to forfeit"],
            ));
        }
        if unit.pinned {
            return Err(RuleViolation::with(
                "B9.322",
                ViolationKind::UnitState,
                pieces![
                    Piece::unit(id),
                    " is pinned and cannot forfeit WA voluntarily"
                ],
            ));
        }
        check_no_attack_pending(game, unit, "forfeit")?;
        if is_mandatory(game, unit) {
            return Err(RuleViolation::with(
                "B9.323",
                ViolationKind::Terrain,
                pieces![
                    Piece::unit(id),
                    format!(
                        " has no in-hex TEM of +1 or more in {}, so it must keep WA",
                        unit.hex
                    )
                ],
            ));
        }
    }
    Ok(vec![Event::WallAdvantageForfeited(
        WallAdvantageForfeited {
            units: ids.to_vec(),
            why: WaLoss::Voluntary,
        },
    )])
}

/// `DeclineWallAdvantage`: the side offered a chance lets it pass.
pub(super) fn decline(game: &Game, by: Side) -> Result<Vec<Event>, RuleViolation> {
    if let Some(window) = game.wa_hip_window.as_ref().filter(|w| w.side == by) {
        let passed = Event::WallAdvantageChanceDeclined(WallAdvantageChanceDeclined { side: by });
        let mut after = game.clone();
        apply(&mut after, &passed);
        let mut events = vec![passed];
        events.extend(after_hip_window(&after, window));
        return Ok(events);
    }
    match &game.wa_chance {
        Some(c) if c.side == by => Ok(vec![Event::WallAdvantageChanceDeclined(
            WallAdvantageChanceDeclined { side: by },
        )]),
        _ => Err(RuleViolation::new(
            "B9.322",
            ViolationKind::WrongPhase,
            "there is no chance to claim WA waiting for an answer from this side",
        )),
    }
}

/// What follows a command's events, as events of its own (see the module docs). `before` is
/// the game before the command, `after` with its events applied; `movers` are the units that
/// left or tried to leave their Location in it, whose own mandatory WA waits until the enemy
/// has had its chance (B9.41 EX); `unhidden` are hidden units the command revealed (an enemy
/// tried to enter their Location, A12.15), for whom losing HIP is a moment to claim WA
/// (B9.322, B9.324). Each event is applied to `after` as it is decided, `along` told of it
/// first (`crate::Ahead`).
pub(super) fn settle(
    before: &Game,
    after: &mut Game,
    movers: &BTreeSet<UnitId>,
    unhidden: &BTreeSet<UnitId>,
    along: &mut crate::Along,
) -> Vec<Event> {
    // Nothing asked and nothing declared: what follows depends on the units alone then.
    let quiet = |g: &Game| {
        g.wa_chance.is_none()
            && g.attack.is_none()
            && g.wa_challenge.is_none()
            && g.wa_hip_window.is_none()
    };
    let (quiet_before, quiet_after) = (quiet(before), quiet(after));
    // A command that changed no unit, moved none and revealed none, between two positions
    // where nothing waits, on units already settled with nothing following: nobody became
    // ineligible, must claim, or was freed, so settling finds nothing. Checked in a few
    // comparisons, where settling asks of every unit (issue 55: a real scenario's size).
    let unchanged = movers.is_empty()
        && unhidden.is_empty()
        && quiet_before
        && quiet_after
        && before.units.shared_with(&after.units);
    if unchanged && after.units.settled() {
        return vec![];
    }
    let units = after.units.clone();
    let events = settle_all(before, after, movers, unhidden, along);
    if unchanged && events.is_empty() {
        units.mark_settled();
    }
    events
}

/// [`settle`], asking of every unit.
fn settle_all(
    before: &Game,
    game: &mut Game,
    movers: &BTreeSet<UnitId>,
    unhidden: &BTreeSet<UnitId>,
    along: &mut crate::Along,
) -> Vec<Event> {
    let mut events = vec![];
    let mut push = |game: &mut Game, event: Event| {
        along.step(game);
        apply(game, &event);
        events.push(event);
    };

    // A holder that no longer qualifies loses WA at once (B9.322).
    let ineligible: Vec<(UnitId, &'static str, String)> = game
        .units
        .values()
        .filter(|u| u.wall_advantage)
        .filter_map(|u| {
            eligibility(game, u, &[])
                .err()
                .map(|(r, w)| (u.id.clone(), r, log_text(&w)))
        })
        .collect();
    for (id, rule, why) in ineligible {
        push(
            game,
            Event::WallAdvantageForfeited(WallAdvantageForfeited {
                units: vec![id],
                why: WaLoss::Ineligible {
                    rule: rule.into(),
                    why,
                },
            }),
        );
    }
    // Two opposing units never hold WA over one hexside (B9.321): a holder whose hexsides
    // changed under it (continuing in Bypass onto a hexside the enemy holds) loses it.
    let overlapping: Vec<(UnitId, UnitId)> = game
        .units
        .values()
        .filter(|u| u.wall_advantage && !u.eliminated)
        .filter(|u| {
            before.units.get(&u.id).is_none_or(|b| {
                !same_wa_hexsides(before, b, game, u)
                    && wa_hexsides(before, b) != wa_hexsides(game, u)
            })
        })
        .filter_map(|u| {
            deniers(game, u)
                .first()
                .map(|d| (u.id.clone(), d.id.clone()))
        })
        .collect();
    for (id, holder) in overlapping {
        push(
            game,
            Event::WallAdvantageForfeited(WallAdvantageForfeited {
                units: vec![id],
                why: WaLoss::Ineligible {
                    rule: "B9.321".into(),
                    why: format!("its hexsides now include one over which `{holder}` holds WA"),
                },
            }),
        );
    }
    let waiting = game.wa_chance.is_some()
        || game.attack.is_some()
        || game.wa_challenge.is_some()
        || game.wa_hip_window.is_some();
    if waiting {
        return events;
    }
    // An attack just resolved: a holder it broke or eliminated lost WA while the attack was
    // pending, when no chance could be offered (B9.322); the enemy's chance comes now, judged
    // against the holders as they stood when the attack was declared.
    let reference = attack_reference(before);
    let before = &reference;

    // Units that must hold WA take it the moment they can (B9.323) — movers last.
    if grant_mandatory(game, &mut push, |id| !movers.contains(id)) {
        return events;
    }

    // Units whose every enemy WA holder is gone may claim now (B9.322); a side that could
    // not claim at this moment anyway is asked before play goes on.
    // Only a holder can have kept a unit from WA: where `before` has none, no unit was freed,
    // and no unit's deniers need looking for. The holders of each position are found once,
    // not for every unit asked about.
    let held_before = Holders::of(before);
    let anyone_held = !held_before.held.is_empty();
    let held_now = (anyone_held || !unhidden.is_empty()).then(|| Holders::of(game));
    let freed = |side: Side| -> Vec<UnitId> {
        let Some(held_now) = &held_now else {
            return vec![];
        };
        game.units
            .values()
            .filter(|u| u.side == side && !is_mandatory(game, u))
            .filter(|u| {
                unhidden.contains(&u.id)
                    || (anyone_held
                        && before
                            .units
                            .get(&u.id)
                            .is_some_and(|b| !held_before.blocking_deniers(b).is_empty()))
            })
            .filter(|u| held_now.could_hold(u))
            .map(|u| u.id.clone())
            .collect()
    };
    for side in [game.acting().opponent(), game.acting()] {
        let units: Vec<UnitId> = freed(side)
            .into_iter()
            .filter(|id| !may_claim_now(game, &game.units[id]))
            .collect();
        if !units.is_empty() {
            push(
                game,
                Event::WallAdvantageChanceOffered(WallAdvantageChanceOffered { side, units }),
            );
            return events;
        }
    }
    // Movers that must take WA attempt to claim it: the enemy's HIP moment comes first
    // (B9.324).
    let claimants: Vec<&Unit> = movers
        .iter()
        .filter_map(|id| game.units.get(id))
        .filter(|u| !u.wall_advantage && is_mandatory(game, u) && may_hold(game, u, &[]))
        .collect();
    if let Some(side) = hip_window_for(game, &claimants, WaClaim::Mandatory) {
        let claimants = claimants.iter().map(|u| u.id.clone()).collect();
        push(
            game,
            Event::WallAdvantageHipWindowOffered(WallAdvantageHipWindowOffered {
                side,
                claimants,
                how: WaClaim::Mandatory,
            }),
        );
        return events;
    }
    grant_mandatory(game, &mut push, |_| true);
    events
}

/// Set-up is B9.322's first moment: when the set-up step ends, every unit placed that must
/// hold WA takes it as soon as it can (B9.323) — the side that set up first before the other,
/// so a unit set up behind a wall first holds it over the hexside and denies the enemy's set
/// up across it (B9.321). A unit kept from it only by concealed holders challenges them
/// (B9.324), as in play. `game` is the position with the set-up's end applied.
pub(super) fn settle_after_set_up(mut game: Game, order: &[Side]) -> Vec<Event> {
    let mut events = vec![];
    let mut push = |game: &mut Game, event: Event| {
        apply(game, &event);
        events.push(event);
    };
    for side in order {
        let of_side: BTreeSet<UnitId> = game
            .units
            .values()
            .filter(|u| u.side == *side)
            .map(|u| u.id.clone())
            .collect();
        if grant_mandatory(&mut game, &mut push, |id| of_side.contains(id)) {
            break;
        }
    }
    events
}

/// The position a chance to claim is judged against (B9.322): `before` itself, or, when an
/// attack is pending in it, `before` with the WA holders of the attack's declaration restored.
fn attack_reference(before: &Game) -> std::borrow::Cow<'_, Game> {
    let Some(attack) = &before.attack else {
        return std::borrow::Cow::Borrowed(before);
    };
    let mut reference = before.clone();
    for id in &attack.wa_holders {
        if let Some(unit) = reference.units.get_mut(id) {
            unit.wall_advantage = true;
            unit.eliminated = false;
        }
    }
    std::borrow::Cow::Owned(reference)
}

/// Grants mandatory WA (B9.323) to every unit `include` admits that can take it, in id order,
/// one at a time, so an earlier grant denies a later conflicting one. A unit kept from it only
/// by enemy holders that are all concealed or dummies challenges them (B9.324) — the engine
/// never decides for their owner whether to show a unit — and the grants stop there until
/// the challenge is answered; `true` when that happened.
fn grant_mandatory(
    game: &mut Game,
    push: &mut impl FnMut(&mut Game, Event),
    include: impl Fn(&UnitId) -> bool,
) -> bool {
    // Mandatory WA is no voluntary claim, so pins do not stop it (B9.322, B9.323).
    let must = |game: &Game, unit: &Unit| {
        include(&unit.id)
            && !unit.wall_advantage
            && is_mandatory(game, unit)
            && may_hold(game, unit, &[])
    };
    // In id order, each unit judged on the position the grants before it left; the next one
    // is looked for after the last, so no list of every unit's id is made for each command.
    let mut after: Option<UnitId> = None;
    loop {
        let from = match &after {
            Some(last) => Bound::Excluded(last.as_str()),
            None => Bound::Unbounded,
        };
        let Some(unit) = game
            .units
            .range::<str, _>((from, Bound::Unbounded))
            .map(|(_, u)| u)
            .find(|u| must(game, u))
        else {
            return false;
        };
        let id = unit.id.clone();
        after = Some(id.clone());
        let holders = deniers(game, unit);
        if holders.is_empty() {
            push(
                game,
                Event::WallAdvantageClaimed(WallAdvantageClaimed {
                    units: vec![id],
                    how: WaClaim::Mandatory,
                }),
            );
            continue;
        }
        if unit.kind == UnitKind::Dummy || holders.iter().any(|h| known_real(game, h)) {
            continue;
        }
        let mut events = vec![];
        if !known_real(game, unit) {
            events.push(Event::UnitsMomentarilyRevealed(UnitsMomentarilyRevealed {
                units: vec![id.clone()],
            }));
        }
        events.push(Event::WallAdvantageChallenged(WallAdvantageChallenged {
            side: holders[0].side,
            holders: holders.iter().map(|h| h.id.clone()).collect(),
            claimants: vec![id],
            how: WaClaim::Mandatory,
        }));
        for event in events {
            push(game, event);
        }
        return true;
    }
}

/// Reading a scenario file as the rules read it. The board crate reads and checks what it can
/// (`Scenario::read_toml`); the Wall Advantage a scenario gives units at setup takes the
/// rules (B9.32–B9.35), so the whole reading lives here, above the board, and the board
/// never imports the rules. In scope through `protocol::ReadScenario`.
pub trait ReadScenario: Sized {
    /// Reads and checks a scenario file's text: everything the board checks, then that every
    /// Wall Advantage claimed at setup could be claimed.
    fn from_toml(text: &str) -> Result<Self, ScenarioError>;

    /// As [`ReadScenario::from_toml`], with the boards a `[map]` may name (`--boards DIR`).
    fn from_toml_on(
        text: &str,
        boards: Option<&board::vasl::library::Boards>,
    ) -> Result<Self, ScenarioError>;
}

impl ReadScenario for Scenario {
    fn from_toml(text: &str) -> Result<Scenario, ScenarioError> {
        Scenario::from_toml_on(text, None)
    }

    fn from_toml_on(
        text: &str,
        boards: Option<&board::vasl::library::Boards>,
    ) -> Result<Scenario, ScenarioError> {
        let mut scenario = Scenario::read_toml_on(text, boards)?;
        check_setup(&scenario).map_err(|e| e.located(text))?;
        settle_setup(&mut scenario).map_err(|e| e.located(text))?;
        Ok(scenario)
    }
}

/// Checks the WA a scenario gives units at setup (B9.322's first moment): each such unit must
/// be eligible, and no two opposing units may hold it over a shared hexside (B9.321).
pub(crate) fn check_setup(scenario: &Scenario) -> Result<(), ScenarioError> {
    let game = Game::new(scenario.clone());
    let holders = Holders::of(&game);
    for spec in scenario.units.values() {
        if !spec.wall_advantage {
            continue;
        }
        let unit = &game.units[&spec.id];
        let field = format!("units.{}.wall_advantage", spec.id);
        if let Err((rule, why)) = eligibility(&game, unit, &[]) {
            return Err(refuse(
                field,
                format!(
                    "`{}` cannot hold WA at setup: {} ({rule})",
                    spec.id,
                    log_text(&why)
                ),
            ));
        }
        if let Some(other) = holders.deniers(unit).first() {
            return Err(refuse(
                field,
                format!(
                    "`{}` and `{}` would both hold WA over a shared hexside (B9.321)",
                    spec.id, other.id
                ),
            ));
        }
    }
    Ok(())
}

/// Settles the starting position like any other (B9.322's first moment, B9.323): every unit
/// that must hold WA and can takes it at setup, so the first command meets a settled position.
/// Two opposing units that would both have to take it over a shared hexside are ambiguous —
/// which side set up first decides, and the file does not say — so the scenario must give one
/// of them `wall_advantage = true`.
pub(crate) fn settle_setup(scenario: &mut Scenario) -> Result<(), ScenarioError> {
    let mut game = Game::new(scenario.clone());
    let holders = Holders::of(&game);
    let takers: Vec<UnitId> = game
        .units
        .values()
        // A holder set up as a dummy keeps its WA here: only a challenge in play (B9.324)
        // could take it, so the unit beside it waits for one.
        .filter(|u| {
            is_mandatory(&game, u) && holders.could_hold(u) && holders.deniers(u).is_empty()
        })
        .map(|u| u.id.clone())
        .collect();
    for (i, a) in takers.iter().enumerate() {
        let mine: BTreeSet<Hexside> = wa_hexsides(&game, &game.units[a]).into_iter().collect();
        for b in &takers[i + 1..] {
            let other = &game.units[b];
            let shared = other.side != game.units[a].side
                && wa_hexsides(&game, other).iter().any(|s| mine.contains(s));
            if shared {
                return Err(refuse(
                    format!("units.{a}.wall_advantage"),
                    format!("`{a}` and `{b}` both must hold WA at setup (B9.323) over a shared hexside, and only one may (B9.321); give the one that claims it `wall_advantage = true`"),
                ));
            }
        }
    }
    for id in takers {
        if let Some(unit) = game.units.get_mut(&id) {
            unit.wall_advantage = true;
        }
        if let Some(spec) = scenario.units.get_mut(&id) {
            spec.wall_advantage = true;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::wall_advantage::ReadScenario;
    use board::scenario::Scenario;

    const TWO_SIDES: &str = r#"
name = "setup WA"
turns = 1
first = "german"
sides = [{ id = "german", name = "German" }, { id = "russian", name = "Russian" }]
[[area]]
from = "1A1"
to = "1D4"
terrain = "open_ground"
[[hexsides]]
hexside = "1B2-1C2"
feature = "wall"
[[units]]
id = "g"
side = "german"
kind = "squad"
ratings = "4-6-7"
hex = "1B2"
wall_advantage = true
[[units]]
id = "r"
side = "russian"
kind = "squad"
ratings = "4-4-7"
hex = "1C2"
"#;

    /// B9.322's first moment: WA at setup is checked like any claim.
    #[test]
    fn setup_wall_advantage_is_checked() {
        Scenario::from_toml(TWO_SIDES).unwrap();
        let both = format!("{TWO_SIDES}wall_advantage = true\n");
        let e = Scenario::from_toml(&both).unwrap_err();
        assert!(e.reason.contains("B9.321"), "{e}");
        let nowhere = TWO_SIDES.replacen("hex = \"1B2\"", "hex = \"1A4\"", 1);
        let e = Scenario::from_toml(&nowhere).unwrap_err();
        assert_eq!(e.field, "units.g.wall_advantage");
        assert!(e.reason.contains("B9.32"), "{e}");
    }

    /// B9.323 at setup: a unit that must hold WA holds it from the start; two opposing units
    /// that both must, over one hexside, are refused until the file says which holds it.
    #[test]
    fn setup_settles_mandatory_wall_advantage() {
        let unflagged = TWO_SIDES.replacen("wall_advantage = true\n", "", 1);
        let e = Scenario::from_toml(&unflagged).unwrap_err();
        assert!(
            e.reason.contains("B9.323") && e.reason.contains("`r`"),
            "{e}"
        );
        let one = Scenario::from_toml(TWO_SIDES).unwrap();
        assert!(one.units["g"].wall_advantage && !one.units["r"].wall_advantage);
        let woods = unflagged.replacen(
            "to = \"1D4\"\nterrain = \"open_ground\"",
            "to = \"1D4\"\nterrain = \"woods\"",
            1,
        );
        let none = Scenario::from_toml(&woods).unwrap();
        assert!(
            !none.units["g"].wall_advantage,
            "woods give +1: WA is a choice"
        );
    }

    /// B9.35 on the LOS grid: a wall counts for WA only at the base level of the unit's own
    /// hex, so the H7-I8 wall of the B9.41 scenario (H7 at level 0, I8 on the hill) is one of
    /// H7's WA hexsides and none of I8's. Every hex of the map, and one on a board the map
    /// lacks, gets from the grid what the scenario's maps give.
    #[test]
    fn wa_hexsides_off_the_grid_are_those_of_the_scenario() {
        use super::{from_scenario, wa_hexsides};
        use board::hex::Hex;
        use game::Game;
        let scenario =
            Scenario::from_toml(include_str!("../../../scenarios/b9-41-wall-advantage.toml"))
                .unwrap();
        let game = Game::new(scenario);
        let mut unit = game.units.values().next().unwrap().clone();
        let mut at = |hex: &str| {
            unit.hex = hex.parse::<Hex>().unwrap();
            let sides = wa_hexsides(&game, &unit);
            assert_eq!(sides, from_scenario(&game, &unit, |_| true), "{hex}");
            sides.iter().map(|s| s.to_string()).collect::<Vec<_>>()
        };
        assert_eq!(at("55H7"), ["55H7-55I7", "55H7-55I8"]);
        assert!(
            at("55I8").is_empty(),
            "the wall lies below the hill's level"
        );
        assert_eq!(at("55G6"), ["55G6-55H5", "55G6-55H6"]);
        assert!(at("7A1").is_empty(), "a board the map does not have");
        let hexes: Vec<Hex> = game.scenario.hexes.keys().copied().collect();
        for hex in hexes {
            at(&hex.to_string());
        }
    }

    /// `may_hold` checks eligibility's conditions in another order and skips its wording, and
    /// `in_hex_tem` reads the grid, not the scenario's hexes: their answers must still be the
    /// same, for every unit of every scenario the project has, on every hex of its map (among
    /// the scenario's other units there), Good Order and broken (B9.32, B9.323).
    #[test]
    fn shortcuts_answer_as_eligibility_and_the_scenario_do() {
        use super::{eligibility, in_hex_tem, may_hold};
        use board::scenario::Morale;
        use game::Game;
        // This crate is protocol/rules: the shipped scenarios and the positions' own.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let dirs = [
            root.join("../../scenarios"),
            root.join("../tests/positions/scenarios"),
        ];
        let mut checked = 0;
        for dir in dirs {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_none_or(|e| e != "toml") {
                    continue;
                }
                let scenario = Scenario::from_toml(&std::fs::read_to_string(&path).unwrap())
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let game = Game::new(scenario);
                let hexes: Vec<_> = game.scenario.hexes.keys().copied().collect();
                for id in game.units.keys() {
                    for &hex in &hexes {
                        for morale in [Morale::GoodOrder, Morale::Broken] {
                            let mut moved = game.clone();
                            let unit = moved.units.get_mut(id).unwrap();
                            unit.hex = hex;
                            unit.morale = morale;
                            let unit = &moved.units[id];
                            assert_eq!(
                                may_hold(&moved, unit, &[]),
                                eligibility(&moved, unit, &[]).is_ok(),
                                "{}: `{id}` in {hex}, {morale:?}",
                                path.display()
                            );
                            // The in-hex TEM read off the grid is the scenario's (B9.323).
                            let terrain = moved.scenario.hexes.get(&hex).map(|s| s.terrain);
                            assert_eq!(
                                in_hex_tem(&moved, unit),
                                terrain.map_or(0, |t| t.row().tem.direct),
                                "{}: {hex}",
                                path.display()
                            );
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert!(checked > 10_000, "only {checked} positions checked");
    }
}

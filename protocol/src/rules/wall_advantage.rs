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
use crate::board::hex::{Hex, Hexside};
use crate::board::scenario::{refuse, Morale, Scenario, ScenarioError, Side, UnitId, UnitKind};
use crate::board::terrain::Terrain;
use crate::game::event::{Event, WaClaim, WaLoss};
use crate::game::phase::Phase;
use crate::game::{apply, Game, Unit};
use crate::rules::violation::{RuleViolation, ViolationKind};
use std::collections::BTreeSet;

/// The level a wall/hedge lies at: the lower of the two hexes' base levels (B9.35).
fn wall_level(game: &Game, side: Hexside) -> i8 {
    let level = |h: Hex| game.scenario.hexes.get(&h).map_or(0, |s| s.elevation);
    level(side.a).min(level(side.b))
}

/// The wall/hedge/bocage hexsides of `unit`'s hex that WA would cover: at the unit's own
/// level (B9.35), and in Bypass only the hexside it straddles and the two joining it (B9.32).
pub fn wa_hexsides(game: &Game, unit: &Unit) -> Vec<Hexside> {
    let hex = unit.hex;
    let level = game.scenario.hexes.get(&hex).map_or(0, |s| s.elevation);
    let straddled = unit
        .bypass
        .as_ref()
        .and_then(|b| b.along.last().copied())
        .and_then(|far| hex.hexside(far));
    hex.hexsides()
        .into_iter()
        .filter(|s| game.scenario.hexside_feature(*s).is_some())
        .filter(|s| wall_level(game, *s) == level)
        .filter(|s| straddled.is_none_or(|st| *s == st || st.is_contiguous_in(*s, hex)))
        .collect()
}

/// The in-hex TEM a unit could claim instead of WA (B9.31, B9.323). A unit in Bypass is in the
/// open part of its hex (A4.33), so its hex's obstacle gives it none.
pub fn in_hex_tem(game: &Game, unit: &Unit) -> i8 {
    if unit.bypass.is_some() {
        return 0;
    }
    game.scenario
        .hexes
        .get(&unit.hex)
        .map_or(0, |s| s.terrain.row().tem.direct)
}

/// B9.323: a unit that cannot claim in-hex TEM of +1 or more must hold WA whenever it can.
pub fn is_mandatory(game: &Game, unit: &Unit) -> bool {
    in_hex_tem(game, unit) < 1
}

/// Why a unit may not hold WA, as (rule, reason); `Ok` when it may (B9.32, B9.324, B9.35).
/// `alongside` names units of its side in the same Location that claim together with it, for
/// broken units, which may hold WA only beside Good Order ones that do.
pub fn eligibility(
    game: &Game,
    unit: &Unit,
    alongside: &[UnitId],
) -> Result<(), (&'static str, String)> {
    if unit.eliminated {
        return Err(("B9.32", "it has been eliminated".into()));
    }
    if unit.underground.is_some() {
        return Err(("B9.32", "it is below ground, not at ground level".into()));
    }
    if unit.hidden {
        return Err((
            "B9.324",
            "it is hidden; a HIP unit must be placed on board to claim WA".into(),
        ));
    }
    if unit.kind == UnitKind::Vehicle {
        let terrain = game.scenario.hexes.get(&unit.hex).map(|s| s.terrain);
        let exempt = matches!(terrain, Some(Terrain::CactusPatch | Terrain::OliveGrove));
        if in_hex_tem(game, unit) >= 1 && !exempt {
            return Err((
                "B9.32",
                "it is a vehicle that can claim in-hex TEM of +1 or more".into(),
            ));
        }
    }
    if let Some(enemy) = game
        .units_above(unit.hex)
        .find(|u| u.side != unit.side && !u.hidden)
    {
        return Err((
            "B9.32",
            format!("an enemy unit (`{}`) is in its Location", enemy.id),
        ));
    }
    if unit.morale == Morale::Broken {
        let companion = game.units_above(unit.hex).any(|u| {
            u.side == unit.side
                && u.is_good_order()
                && (u.wall_advantage || alongside.contains(&u.id))
        });
        if !companion {
            return Err((
                "B9.32",
                "it is broken, and no Good Order unit of its Location holds WA with it".into(),
            ));
        }
    }
    if wa_hexsides(game, unit).is_empty() {
        let any_wall = unit
            .hex
            .hexsides()
            .into_iter()
            .any(|s| game.scenario.hexside_feature(s).is_some());
        return Err(if any_wall && unit.bypass.is_none() {
            (
                "B9.35",
                "its hex is above the base level of its walls/hedges".into(),
            )
        } else {
            (
                "B9.32",
                "no wall, hedge or bocage hexside of its Location is open to it".into(),
            )
        });
    }
    Ok(())
}

/// Enemy units holding WA over a hexside `unit` would hold it over (B9.321).
pub fn deniers<'g>(game: &'g Game, unit: &Unit) -> Vec<&'g Unit> {
    let mine: BTreeSet<Hexside> = wa_hexsides(game, unit).into_iter().collect();
    game.units
        .values()
        .filter(|e| e.side != unit.side && e.wall_advantage && !e.eliminated)
        .filter(|e| wa_hexsides(game, e).iter().any(|s| mine.contains(s)))
        .collect()
}

/// The enemy holders that really keep `unit` from WA: a dummy holder does not keep a real
/// unit from it (B9.324).
fn blocking_deniers<'g>(game: &'g Game, unit: &Unit) -> Vec<&'g Unit> {
    deniers(game, unit)
        .into_iter()
        .filter(|d| d.kind != UnitKind::Dummy || unit.kind == UnitKind::Dummy)
        .collect()
}

/// Whether `unit` could take WA now: eligible and kept from it by no enemy holder.
fn could_hold(game: &Game, unit: &Unit) -> bool {
    !unit.wall_advantage
        && eligibility(game, unit, &[]).is_ok()
        && blocking_deniers(game, unit).is_empty()
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

/// Refuses while a declared attack on the unit's hex is unresolved (B9.322).
fn check_no_attack_pending(game: &Game, unit: &Unit, what: &str) -> Result<(), RuleViolation> {
    match &game.attack {
        Some(a) if a.target == unit.hex && a.by != unit.side => Err(RuleViolation::new(
            "B9.322",
            ViolationKind::WrongPhase,
            format!(
                "fire has been declared against {} and not yet resolved; `{}` cannot {what} WA until it is",
                a.target, unit.id
            ),
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
                    "WA is claimed only at setup, at the end of an RPh, in one's own MPh/APh, on losing HIP, or when the enemy loses it; it is now the {} ({})",
                    game.clock.phase(),
                    game.clock
                ),
            )
        })?,
    };
    let units = ids
        .iter()
        .map(|id| own_unit(game, by, id))
        .collect::<Result<Vec<&Unit>, _>>()?;
    check_claimable(game, &units, ids, how)?;
    resolve_claim(game, &units, ids, how)
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
            return Err(RuleViolation::new(
                "B9.322",
                ViolationKind::UnitState,
                format!("`{id}` is pinned and cannot claim WA voluntarily"),
            ));
        }
        if unit.wall_advantage {
            return Err(RuleViolation::new(
                "B9.32",
                ViolationKind::UnitState,
                format!("`{id}` holds WA already"),
            ));
        }
        if unit.wa_blocked && how == WaClaim::OwnMovement && game.clock.phase() == Phase::Movement {
            return Err(RuleViolation::new(
                "B9.41",
                ViolationKind::UnitState,
                format!("`{id}` failed to leave its Location this MPh and may not re-claim WA until it ends"),
            ));
        }
        check_no_attack_pending(game, unit, "claim")?;
        if let Err((rule, why)) = eligibility(game, unit, ids) {
            return Err(RuleViolation::new(
                rule,
                ViolationKind::Terrain,
                format!("`{id}` cannot claim WA: {why}"),
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
    let claimed = vec![Event::WallAdvantageClaimed {
        units: ids.to_vec(),
        how,
    }];
    if holders.is_empty() {
        return Ok(claimed);
    }
    if let Some(known) = holders
        .iter()
        .find(|h| h.kind != UnitKind::Dummy && !h.concealed)
    {
        return Err(RuleViolation::new(
            "B9.321",
            ViolationKind::Terrain,
            format!(
                "`{}` in {} holds WA over a wall/hedge hexside shared with {}; only one side holds it",
                known.id, known.hex, units[0].hex
            ),
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
    if units.iter().all(|u| u.concealed) {
        events.push(Event::UnitsMomentarilyRevealed {
            units: vec![real_claimant.id.clone()],
        });
    }
    if let Some(real_holder) = holders.iter().find(|h| h.kind != UnitKind::Dummy) {
        events.push(Event::UnitsMomentarilyRevealed {
            units: vec![real_holder.id.clone()],
        });
        events.push(Event::WallAdvantageDenied {
            units: ids.to_vec(),
            by: real_holder.id.clone(),
        });
        return Ok(events);
    }
    events.push(Event::WallAdvantageForfeited {
        units: holders.iter().map(|h| h.id.clone()).collect(),
        why: WaLoss::DummyChallenged,
    });
    events.extend(claimed);
    Ok(events)
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
    for id in ids {
        let unit = own_unit(game, by, id)?;
        if !unit.wall_advantage {
            return Err(RuleViolation::new(
                "B9.322",
                ViolationKind::UnitState,
                format!("`{id}` holds no WA to forfeit"),
            ));
        }
        if unit.pinned {
            return Err(RuleViolation::new(
                "B9.322",
                ViolationKind::UnitState,
                format!("`{id}` is pinned and cannot forfeit WA voluntarily"),
            ));
        }
        check_no_attack_pending(game, unit, "forfeit")?;
        if is_mandatory(game, unit) {
            return Err(RuleViolation::new(
                "B9.323",
                ViolationKind::Terrain,
                format!(
                    "`{id}` has no in-hex TEM of +1 or more in {}, so it must keep WA",
                    unit.hex
                ),
            ));
        }
    }
    Ok(vec![Event::WallAdvantageForfeited {
        units: ids.to_vec(),
        why: WaLoss::Voluntary,
    }])
}

/// `DeclineWallAdvantage`: the side offered a chance lets it pass.
pub(super) fn decline(game: &Game, by: Side) -> Result<Vec<Event>, RuleViolation> {
    match &game.wa_chance {
        Some(c) if c.side == by => Ok(vec![Event::WallAdvantageChanceDeclined { side: by }]),
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
/// has had its chance (B9.41 EX).
pub(super) fn settle(before: &Game, after: &Game, movers: &BTreeSet<UnitId>) -> Vec<Event> {
    let mut game = after.clone();
    let mut events = vec![];
    let mut push = |game: &mut Game, event: Event| {
        apply(game, &event);
        events.push(event);
    };

    // A holder that no longer qualifies loses WA at once (B9.322).
    let ineligible: Vec<(UnitId, &'static str, String)> = game
        .units
        .values()
        .filter(|u| u.wall_advantage)
        .filter_map(|u| {
            eligibility(&game, u, &[])
                .err()
                .map(|(r, w)| (u.id.clone(), r, w))
        })
        .collect();
    for (id, rule, why) in ineligible {
        push(
            &mut game,
            Event::WallAdvantageForfeited {
                units: vec![id],
                why: WaLoss::Ineligible {
                    rule: rule.into(),
                    why,
                },
            },
        );
    }
    if game.wa_chance.is_some() || game.attack.is_some() {
        return events;
    }

    // Units that must hold WA take it the moment they can (B9.323) — movers last.
    grant_mandatory(&mut game, &mut push, |id| !movers.contains(id));

    // Units whose every enemy WA holder is gone may claim now (B9.322); a side that could
    // not claim at this moment anyway is asked before play goes on.
    let freed = |side: Side| -> Vec<UnitId> {
        game.units
            .values()
            .filter(|u| u.side == side && !is_mandatory(&game, u))
            .filter(|u| {
                before
                    .units
                    .get(&u.id)
                    .is_some_and(|b| !blocking_deniers(before, b).is_empty())
            })
            .filter(|u| could_hold(&game, u))
            .map(|u| u.id.clone())
            .collect()
    };
    for side in [game.acting().opponent(), game.acting()] {
        if claim_moment(&game, side).is_some() {
            continue;
        }
        let units = freed(side);
        if !units.is_empty() {
            push(&mut game, Event::WallAdvantageChanceOffered { side, units });
            return events;
        }
    }
    grant_mandatory(&mut game, &mut push, |_| true);
    events
}

/// Grants mandatory WA (B9.323) to every unit `include` admits that can take it, in id order,
/// one at a time, so an earlier grant denies a later conflicting one.
fn grant_mandatory(
    game: &mut Game,
    push: &mut impl FnMut(&mut Game, Event),
    include: impl Fn(&UnitId) -> bool,
) {
    let ids: Vec<UnitId> = game.units.keys().cloned().collect();
    for id in ids {
        let unit = &game.units[&id];
        // Mandatory WA is no voluntary claim, so pins do not stop it (B9.322, B9.323).
        let takes = include(&id) && is_mandatory(game, unit) && could_hold(game, unit);
        if takes {
            let dummies: Vec<UnitId> = deniers(game, unit).iter().map(|d| d.id.clone()).collect();
            if !dummies.is_empty() {
                push(
                    game,
                    Event::WallAdvantageForfeited {
                        units: dummies,
                        why: WaLoss::DummyChallenged,
                    },
                );
            }
            push(
                game,
                Event::WallAdvantageClaimed {
                    units: vec![id],
                    how: WaClaim::Mandatory,
                },
            );
        }
    }
}

impl Scenario {
    /// Reads and checks a scenario file's text: everything the board checks
    /// (`Scenario::read_toml`), then that every Wall Advantage claimed at setup could be
    /// claimed (B9.32–B9.35), which takes the rules. It lives here, above the board, so that
    /// the board never imports the rules.
    pub fn from_toml(text: &str) -> Result<Scenario, ScenarioError> {
        let scenario = Scenario::read_toml(text)?;
        check_setup(&scenario).map_err(|e| e.located(text))?;
        Ok(scenario)
    }
}

/// Checks the WA a scenario gives units at setup (B9.322's first moment): each such unit must
/// be eligible, and no two opposing units may hold it over a shared hexside (B9.321).
pub fn check_setup(scenario: &Scenario) -> Result<(), ScenarioError> {
    let game = Game::new(scenario.clone());
    for spec in scenario.units.values() {
        if !spec.wall_advantage {
            continue;
        }
        let unit = &game.units[&spec.id];
        let field = format!("units.{}.wall_advantage", spec.id);
        if let Err((rule, why)) = eligibility(&game, unit, &[]) {
            return Err(refuse(
                field,
                format!("`{}` cannot hold WA at setup: {why} ({rule})", spec.id),
            ));
        }
        if let Some(other) = deniers(&game, unit).first() {
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

#[cfg(test)]
mod tests {
    use crate::board::scenario::Scenario;

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
}

//! Infantry movement in the MPh (A4): who may move, what each step costs, and how many MF a
//! unit has. One file per command (`step`, `bypass`, `double_time`, `portage`); what they
//! share is here, so every command accounts MF the same way.
//!
//! Costs come from the terrain table (`board::terrain`); nothing here matches on terrain
//! except to ask the table.

mod advance;
mod bypass;
mod cover;
mod double_time;
mod entry;
mod portage;
pub(crate) mod rout;
mod step;

pub(super) use advance::decide as decide_advance;
pub(super) use advance::withdrawal;
pub(super) use bypass::decide as decide_bypass;
pub(super) use cover::decide as decide_shellhole_cover;
pub(super) use double_time::decide as decide_double_time;
pub(super) use double_time::decide_assault as decide_assault_movement;
pub(crate) use entry::{
    check_enterable, check_hex_modelled, check_leaving, enter_location, known_enemy, Act,
};
pub use portage::RECOVERY_MF;
pub(crate) use portage::{check_may_possess, check_not_bypassing};
pub(super) use portage::{decide_drop, decide_pick_up, decide_transfer};
pub(crate) use rout::check_router;
pub(super) use rout::{
    decide as decide_rout, decide_with_leader as decide_rout_with_leader, end_of_rout_step,
};
pub use rout::{must_rout, MustRout, INTERDICTION_RANGE_MAX, ROUT_MF};
pub(super) use step::decide as decide_move;
pub use step::entry_cost;
pub(crate) use step::lose_wall_advantage;

use super::{own_unit, require_acting, require_phase};
use crate::violation::{pieces, Piece, RuleViolation, ViolationKind};
use board::hex::Hex;
use board::scenario::{Morale, Side, UnitId, UnitKind};
use board::terrain::Mf;
use game::event::{Allotment, MfAccount, MoveCost};
use game::phase::Phase;
use game::{Game, Unit};

/// Most units one command may move: a full stack is far smaller (stacking limits, A5.1), this
/// only bounds the work one command can ask for.
pub(crate) const STACK_UNITS_MAX: usize = 12;

/// Inherent Portage Capacity (A4.42): three PP for an MMC, one for an SMC.
pub(crate) fn ipc(kind: UnitKind) -> u8 {
    if kind.is_smc() {
        1
    } else {
        3
    }
}

/// A unit's IPC now: one lower while it is CX (A4.51), none while it is wounded (A17.2).
pub(crate) fn unit_ipc(unit: &Unit) -> u8 {
    if unit.wounded {
        return 0;
    }
    ipc(unit.kind).saturating_sub(u8::from(unit.cx))
}

/// A wounded man's MF, in the MPh and the RtPh alike (A17.2).
pub(crate) const WOUNDED_MF: u16 = 3;

/// An SMC never portages more than two PP (A4.42).
pub(crate) const SMC_PP_MAX: u8 = 2;

/// A4.42: an SMC never portages more than [`SMC_PP_MAX`] — what it has carried this phase or
/// holds now, with `extra` PP it would take up. One check for every command that has an SMC
/// carry: a move, an advance, a recovery.
fn check_smc_load(game: &Game, unit: &Unit, extra: u8) -> Result<(), RuleViolation> {
    let carried = unit.portage_pp.max(held_pp(game, &unit.id)) + extra;
    if unit.kind.is_smc() && carried > SMC_PP_MAX {
        return Err(RuleViolation::with(
            "A4.42",
            ViolationKind::UnitState,
            pieces![
                Piece::unit(&unit.id),
                format!(" would carry {carried} PP; an SMC never portages more than {SMC_PP_MAX}")
            ],
        ));
    }
    Ok(())
}

/// PP of the weapons `unit` possesses now.
pub(crate) fn held_pp(game: &Game, unit: &UnitId) -> u8 {
    game.weapons
        .values()
        .filter(|w| w.held_by.as_ref() == Some(unit))
        .map(|w| w.pp)
        .sum()
}

/// The leader moving in `movers` with whom `unit` has moved since its first step, if any.
fn leading<'m>(game: &Game, unit: &Unit, movers: &'m [UnitId]) -> Option<&'m UnitId> {
    // A leader, not a hero: a hero lends no MF bonus (A4.12).
    let leader = movers.iter().find(|id| {
        game.units
            .get(*id)
            .is_some_and(|u| u.kind == UnitKind::Leader)
    })?;
    let led = if unit.mf_spent == Mf::default() {
        unit.kind.is_mmc()
    } else {
        unit.led_by.as_ref() == Some(leader)
    };
    led.then_some(leader)
}

/// The MF `unit` may spend this MPh if it now moves together with `movers`, with `extra_pp`
/// more to carry, on a road step or not (A4.1, A4.12, A4.132, A4.42, A4.5).
///
/// A leader (or, without one, a hero) who carries nothing lends his IPC to the first MMC in the
/// moving stack that moves with him (A4.42 lets one SMC add its IPC to one unit moving with
/// him); the command's order of units decides which, so the choice is the player's.
pub fn allotment(
    game: &Game,
    unit: &Unit,
    movers: &[UnitId],
    road_step: bool,
    extra_pp: u8,
) -> Allotment {
    let base = match unit.kind {
        _ if unit.wounded => Mf::whole(WOUNDED_MF),
        UnitKind::Leader | UnitKind::Hero => Mf::whole(6),
        _ if unit.inexperienced => Mf::whole(3),
        _ => Mf::whole(4),
    };
    let leader_id = leading(game, unit, movers);
    let leader = if leader_id.is_some() {
        Mf::whole(2)
    } else {
        Mf::default()
    };
    let double_time = if unit.double_time {
        Mf::whole(1)
    } else {
        Mf::default()
    };
    let road = if unit.road_only && road_step {
        Mf::whole(1)
    } else {
        Mf::default()
    };
    let lends =
        |l: &UnitId| held_pp(game, l) == 0 && game.units.get(l).is_some_and(|l| unit_ipc(l) > 0);
    let lent = match leader_id {
        Some(l) => {
            lends(l)
                && movers
                    .iter()
                    .filter_map(|id| game.units.get(id))
                    .find(|u| u.kind.is_mmc() && leading(game, u, movers) == Some(l))
                    .is_some_and(|first| first.id == unit.id)
        }
        // A hero gives no MF (A4.12) but, as an SMC, may add his IPC to one unit he moves
        // with (A4.42): the first MMC named with him, if they have moved together all along
        // (the same MF spent so far).
        None => movers
            .iter()
            .filter_map(|id| game.units.get(id))
            .find(|u| u.kind == UnitKind::Hero)
            .is_some_and(|hero| {
                lends(&hero.id)
                    && hero.mf_spent == unit.mf_spent
                    && movers
                        .iter()
                        .filter_map(|id| game.units.get(id))
                        .find(|u| u.kind.is_mmc())
                        .is_some_and(|first| first.id == unit.id)
            }),
    };
    let capacity = unit_ipc(unit) + u8::from(lent);
    let carried = unit.portage_pp.max(held_pp(game, &unit.id)) + extra_pp;
    let portage = Mf::whole(u16::from(carried.saturating_sub(capacity)));
    let total = (base + leader + double_time + road).saturating_sub(portage);
    Allotment {
        base,
        leader,
        double_time,
        road,
        portage,
        total,
    }
}

/// Whose MF an act of entering spends: the one thing in which a mover's MF accounting and a
/// router's differ, so both pay through [`pay`] with the same checks and the same words.
#[derive(Clone, Copy)]
pub(crate) enum Allowance<'a> {
    /// A mover's allotment in the MPh, with the stack it moves in (A4.1, A4.12, A4.42).
    Move(&'a [UnitId]),
    /// A router's six MF, leader or squad, whatever it portages within its IPC (A10.5).
    Rout,
}

impl Allowance<'_> {
    /// The unit's MF for this act, and the rule that grants them.
    fn of(self, game: &Game, unit: &Unit, road_step: bool) -> (Allotment, &'static str) {
        match self {
            Allowance::Move(ids) => (
                allotment(game, unit, ids, road_step, 0),
                if unit.wounded { "A17.2" } else { "A4.1" },
            ),
            Allowance::Rout if unit.wounded => (rout::allotment(unit), "A17.2"),
            Allowance::Rout => (rout::allotment(unit), "A10.5"),
        }
    }
}

/// Checks every unit can pay `cost` out of its `allowance` and returns each one's account after
/// paying: the one MF accounting of entering a Location, whichever command enters it.
fn pay(
    game: &Game,
    units: &[&Unit],
    allowance: Allowance,
    cost: &MoveCost,
    to: Hex,
) -> Result<Vec<MfAccount>, RuleViolation> {
    let mut accounts = Vec::with_capacity(units.len());
    for unit in units {
        let (allotment, rule) = allowance.of(game, unit, cost.road);
        let left = allotment.total.saturating_sub(unit.mf_spent);
        let spent = if cost.all_mf {
            if unit.mf_spent != Mf::default() {
                return Err(RuleViolation::with(
                    &cost.cot_rule,
                    ViolationKind::NotEnoughMf,
                    pieces![
                        format!("entering {to} takes "),
                        Piece::unit(&unit.id),
                        format!(
                            "'s whole MF allotment, and it has spent {} already",
                            unit.mf_spent
                        )
                    ],
                ));
            }
            allotment.total
        } else {
            if cost.total > left {
                return Err(RuleViolation::with(
                    rule,
                    ViolationKind::NotEnoughMf,
                    pieces![
                        format!(
                            "entering {to} needs {} MF ({}); ",
                            cost.total,
                            cost.describe()
                        ),
                        Piece::unit(&unit.id),
                        format!(" has {} left of {}", left, allotment.total)
                    ],
                ));
            }
            unit.mf_spent + cost.total
        };
        if unit.assault_moving && unit.hexes_entered > 0 && unit.hex != to {
            // A4.61: Assault Movement enters one Location. Going on round the hex a unit
            // Bypasses, or into its obstacle, is no other Location (A2.8): MF spent within it.
            return Err(RuleViolation::with(
                "A4.61",
                ViolationKind::NotEnoughMf,
                pieces![
                    Piece::unit(&unit.id),
                    format!(" is using Assault Movement and has entered its one Location this MPh; it may not enter {to}")
                ],
            ));
        }
        check_assault_keeps_one(unit, &allotment, spent, pieces![format!("entering {to}")])?;
        accounts.push(MfAccount {
            unit: unit.id.clone(),
            allotment,
            spent,
            left: allotment.total.saturating_sub(spent),
        });
    }
    Ok(accounts)
}

/// The one MF accounting of an act a unit pays for where it stands, entering nothing (A4.2,
/// A8.12): a Recovery (A4.44), the rest of the shellholes' cost (B2), a search for a tunnel
/// entrance (B8.63). The unit pays `mf` out of its allotment as it moves with `movers`,
/// carrying `extra_pp` more (a weapon it would recover, A4.4), and, using Assault Movement,
/// keeps at least one MF ([`check_assault_keeps_one`], A4.61), as [`pay`] asks of an entry.
/// Refusals cite the act's `rule` and name it by `doing`.
pub(crate) fn pay_in_place(
    game: &Game,
    unit: &Unit,
    movers: &[UnitId],
    extra_pp: u8,
    mf: Mf,
    rule: &str,
    doing: Vec<Piece>,
) -> Result<MfAccount, RuleViolation> {
    let allotment = allotment(game, unit, movers, false, extra_pp);
    let left = allotment.total.saturating_sub(unit.mf_spent);
    if left < mf {
        let carrying = if extra_pp > 0 {
            format!(" carrying {extra_pp} PP more,")
        } else {
            String::new()
        };
        return Err(RuleViolation::with(
            rule,
            ViolationKind::NotEnoughMf,
            pieces![
                doing,
                format!(" needs {mf} MF;{carrying} "),
                Piece::unit(&unit.id),
                format!(" has {left} left of {}", allotment.total)
            ],
        ));
    }
    let spent = unit.mf_spent + mf;
    check_assault_keeps_one(unit, &allotment, spent, doing)?;
    Ok(MfAccount {
        unit: unit.id.clone(),
        allotment,
        spent,
        left: allotment.total.saturating_sub(spent),
    })
}

/// A4.61: Assault Movement keeps at least one MF, whatever spends them — entering a Location
/// (`pay`) or an act paid for in place (`pay_in_place`): one check, one wording, `doing`
/// naming the act.
pub(crate) fn check_assault_keeps_one(
    unit: &Unit,
    allotment: &Allotment,
    spent: Mf,
    doing: Vec<Piece>,
) -> Result<(), RuleViolation> {
    if unit.assault_moving && allotment.total.saturating_sub(spent) == Mf::default() {
        return Err(RuleViolation::with(
            "A4.61",
            ViolationKind::NotEnoughMf,
            pieces![
                Piece::unit(&unit.id),
                " is using Assault Movement, which keeps at least one MF; ",
                doing,
                " would spend them all"
            ],
        ));
    }
    Ok(())
}

/// In the APh units change Location only by the one-Location advance (A4.7, `advance`):
/// `move` and Bypass there are refused with the command that does it. An unpossessed weapon
/// is Recovered in the RPh or the MPh, never in the APh (A4.44); dropping one is allowed
/// there (A4.43).
pub(crate) fn refuse_advance_phase(game: &Game, by: Side, act: &str) -> Result<(), RuleViolation> {
    if game.clock.phase() != Phase::Advance || game.acting() != by {
        return Ok(());
    }
    if act == RECOVERING {
        return Err(RuleViolation::new(
            "A4.44",
            ViolationKind::WrongPhase,
            "an unpossessed support weapon is recovered in the RPh or the MPh, not in the APh",
        ));
    }
    Err(RuleViolation::new(
        "A4.7",
        ViolationKind::WrongPhase,
        format!(
            "{act} is for the MPh; in the APh a unit advances one Location (`advance UNIT… HEX`)"
        ),
    ))
}

/// What `refuse_advance_phase` is told for a recovery.
pub(crate) const RECOVERING: &str = "recovering a support weapon";

/// Which act a stack is named for: its rules and the words its refusals use.
#[derive(Clone, Copy)]
pub(crate) enum StackAct {
    /// A4, A4.2: a stack moving in the MPh.
    Move,
    /// A4.7: a stack advancing in the APh.
    Advance,
    /// A stack going down a Manhole, moving in a sewer, into or out of a tunnel or coming up
    /// (B8.41, B8.42, B8.61, B8.62): the rule is the one its command acts by.
    Below(&'static str),
    /// A stack coming up from below ground in the APh (B8.42, B8.61): named and together as
    /// one below ground is, and free to go as an advancing unit is (`check_free`), since
    /// coming up is the units' advance of the APh (B8.41: a sewer unit uses the APh only to
    /// come up into the Manhole Location; B8.61: tunnel units advance out).
    Surface,
}

/// The units a command names as one stack, checked as every such command checks them: at
/// least one, at most [`STACK_UNITS_MAX`], each named once, each the side's own (which also
/// keeps an enemy's hidden unit unnamed). What the act then asks of each unit is its own.
pub(crate) fn named_stack<'g>(
    game: &'g Game,
    by: Side,
    ids: &[UnitId],
    act: StackAct,
) -> Result<Vec<&'g Unit>, RuleViolation> {
    let (named_rule, stack_rule, verb, adjective) = match act {
        StackAct::Move => ("A4", "A4.2", "move", "moving"),
        StackAct::Advance => ("A4.7", "A4.7", "advance", "advancing"),
        StackAct::Below(rule) => (rule, rule, "move", "moving"),
        StackAct::Surface => ("B8.42", "B8.42", "move", "moving"),
    };
    if ids.is_empty() {
        return Err(RuleViolation::new(
            named_rule,
            ViolationKind::UnknownUnit,
            "name at least one unit",
        ));
    }
    if ids.len() > STACK_UNITS_MAX {
        return Err(RuleViolation::new(
            stack_rule,
            ViolationKind::UnitState,
            format!("at most {STACK_UNITS_MAX} units {verb} as one stack"),
        ));
    }
    crate::check_named_once(ids, stack_rule, &format!(" in the {adjective} stack"))?;
    ids.iter().map(|id| own_unit(game, by, id)).collect()
}

/// The checks every movement command starts with, in the documented precedence: the acting
/// side, the MPh, then each unit (exists, is the side's own, may move), then A4.2's
/// one-stack-at-a-time. Returns the units, all in one Location.
pub(crate) fn movers<'g>(
    game: &'g Game,
    by: Side,
    ids: &[UnitId],
    what: &str,
) -> Result<Vec<&'g Unit>, RuleViolation> {
    require_acting(game, by, "only the ATTACKER moves in the MPh")?;
    require_phase(game, Phase::Movement, "A4", what)?;
    let units = named_stack(game, by, ids, StackAct::Move)?;
    for unit in &units {
        check_may_move(game, unit)?;
        check_smc_load(game, unit, 0)?;
    }
    check_together(game, &units, StackAct::Move)?;
    check_one_stack_at_a_time(game, ids)?;
    check_leader_stays(game, &units, ids)?;
    Ok(units)
}

/// A4.12: an MMC earns the leader's +2 MF only by ending the MPh with him; once it has spent
/// MF beyond its own allotment, the leader may not move on without it.
fn check_leader_stays(game: &Game, units: &[&Unit], ids: &[UnitId]) -> Result<(), RuleViolation> {
    for leader in units.iter().filter(|u| u.kind == UnitKind::Leader) {
        let left_behind = game.units.values().find(|m| {
            m.led_by.as_ref() == Some(&leader.id)
                && !m.eliminated
                && !ids.contains(&m.id)
                && m.hex == leader.hex
                && m.mf_spent > allotment(game, m, std::slice::from_ref(&m.id), false, 0).total
        });
        if let Some(m) = left_behind {
            return Err(RuleViolation::with(
                "A4.12",
                ViolationKind::UnitState,
                pieces![
                    Piece::unit(&m.id),
                    " has spent the +2 MF it has for moving with ",
                    Piece::unit(&leader.id),
                    ", so he must end the MPh with it"
                ],
            ));
        }
    }
    Ok(())
}

/// The one check that the units named as one stack are together (A4.2, A4.7, B8.41), for every
/// command that moves, advances, routs or goes below ground with a stack (a withdrawal from
/// Melee names units of the one CC Location, A11.2): one hex,
/// one level of it (A5.1: each level of a building is a Location), and one side of any Bypass
/// (A4.3: a unit in Bypass is along a hexside, not with the units in the hex's middle; only
/// the MPh has Bypass, so no other act meets it). What differs by act is `act`: below ground
/// (`StackAct::Below`) the units at a Manhole and those in the sewer beneath it make one
/// combined stack (B8.41), so being above or below ground does not part them there; each act
/// then asks of each unit whether it may be where it is. Refusals cite the act's rule.
pub(crate) fn check_together(
    game: &Game,
    units: &[&Unit],
    act: StackAct,
) -> Result<(), RuleViolation> {
    let (rule, why) = match act {
        StackAct::Move => ("A4.2", "only units together move as a stack"),
        StackAct::Advance => ("A4.7", "units advance together only from one Location"),
        StackAct::Below(rule) => (
            rule,
            "a stack goes below ground, moves there and comes up only from one Location",
        ),
        StackAct::Surface => (
            "B8.42",
            "a stack goes below ground, moves there and comes up only from one Location",
        ),
    };
    let below = matches!(act, StackAct::Below(_) | StackAct::Surface);
    let apart = |a: &Unit, b: &Unit| {
        a.hex != b.hex
            || a.bypass != b.bypass
            || game.upper_level(a) != game.upper_level(b)
            || (!below && a.underground.is_some() != b.underground.is_some())
    };
    let Some(first) = units.first() else {
        return Ok(());
    };
    match units.iter().find(|u| apart(u, first)) {
        Some(other) => Err(RuleViolation::with(
            rule,
            ViolationKind::UnitState,
            pieces![
                Piece::unit(&first.id),
                " and ",
                Piece::unit(&other.id),
                format!(
                    " are not together ({} and {}); {why}",
                    position(game, first),
                    position(game, other)
                )
            ],
        )),
        None => Ok(()),
    }
}

/// Where a unit is, in the words of [`check_together`]'s refusal.
fn position(game: &Game, unit: &Unit) -> String {
    let hex = unit.hex;
    match (&unit.bypass, game.upper_level(unit), &unit.underground) {
        (Some(b), _, _) => format!("{} in Bypass", b.hex),
        (_, Some(_), _) => format!("an upper level of {hex}"),
        (_, _, Some(_)) => format!("below ground in {hex}"),
        _ => hex.to_string(),
    }
}

/// A12.3: what a HIP unit does in the open reveals it, which the engine does not model; the
/// act (`by`: movement, advancing, dropping a weapon …) is refused rather than done by a unit
/// the opponent may not know of.
pub(crate) fn check_not_hidden(unit: &Unit, by: &str) -> Result<(), RuleViolation> {
    if unit.hidden {
        return Err(RuleViolation::with(
            "A12.3",
            ViolationKind::NotModelled,
            pieces![
                Piece::unit(&unit.id),
                format!(" is hidden; revealing HIP units by {by} is not modelled yet")
            ],
        ));
    }
    Ok(())
}

/// A Known enemy Infantry unit sharing the unit's Location: the two are in Melee (A11.7).
/// The one reading of "held in Melee" every act that leaves a Location asks: a move, an
/// advance, going below ground (`check_free`) and a rout (`rout`).
pub(crate) fn in_melee_with<'g>(game: &'g Game, unit: &Unit) -> Option<&'g Unit> {
    rout::known_enemies(game, unit.side)
        .find(|e| e.kind.is_infantry() && e.hex == unit.hex && game.same_location(e, unit))
}

/// What keeps a unit from moving in the MPh (A4.1), advancing in the APh (A4.7), going and
/// moving below ground (B8.4, B8.45, B8.61) or coming up from it in the APh (an advance, B8.41)
/// at all, in one order for every such act: hidden, below ground, broken, berserk, pinned, held
/// in Melee. Each act words its refusal and cites its own rule; what else an act asks of the
/// unit is its own. Below ground is where sewer movement is played and whence units come up,
/// so it bars only the acts above it.
pub(crate) fn check_free(game: &Game, unit: &Unit, act: StackAct) -> Result<(), RuleViolation> {
    let refuse = |rule: &str, kind, why: Vec<Piece>| Err(RuleViolation::with(rule, kind, why));
    let id = &unit.id;
    let below = matches!(act, StackAct::Below(_));
    let moving = matches!(act, StackAct::Move | StackAct::Below(_));
    let doing = match act {
        StackAct::Move => "movement",
        StackAct::Advance => "advancing",
        StackAct::Below(_) => "going or moving below ground",
        StackAct::Surface => "coming up",
    };
    check_not_hidden(unit, doing)?;
    if unit.underground.is_some() && matches!(act, StackAct::Move | StackAct::Advance) {
        let how = if moving {
            " is below ground; it moves by sewer movement or comes up in the APh"
        } else {
            " is below ground; in the APh it comes up with `surface`"
        };
        return refuse(
            "B8.41",
            ViolationKind::UnitState,
            pieces![Piece::unit(id), how],
        );
    }
    match unit.morale {
        // B8.45: a broken or berserk unit never goes below ground, by sewer or tunnel.
        Morale::Broken | Morale::Berserk if below => {
            return refuse(
                "B8.45",
                ViolationKind::UnitState,
                pieces![
                    Piece::unit(id),
                    " is broken or berserk and may never go below ground, by sewer or tunnel"
                ],
            )
        }
        Morale::Broken if moving => {
            return refuse(
                "A4.1",
                ViolationKind::UnitState,
                pieces![
                    Piece::unit(id),
                    " is broken; broken units do not move in the MPh (they rout in the RtPh)"
                ],
            )
        }
        Morale::Broken => {
            return refuse(
                "A4.7",
                ViolationKind::UnitState,
                pieces![Piece::unit(id), " is broken; broken units do not advance"],
            )
        }
        Morale::Berserk => {
            return refuse(
                "A15.4",
                ViolationKind::NotModelled,
                pieces![
                    Piece::unit(id),
                    " is berserk; berserk charges are not modelled"
                ],
            )
        }
        Morale::GoodOrder => {}
    }
    if unit.pinned {
        return if moving {
            refuse(
                "A7.8",
                ViolationKind::UnitState,
                pieces![
                    Piece::unit(id),
                    " is pinned and cannot move this Player Turn"
                ],
            )
        } else {
            refuse(
                "A4.7",
                ViolationKind::UnitState,
                pieces![Piece::unit(id), " is pinned; pinned units do not advance"],
            )
        };
    }
    // A4.1, A11.15: a unit held in Melee does not move in the MPh nor advance in the APh, by
    // any means; it leaves the Location only by withdrawing in the CCPh (A11.2). A unit under
    // "?" is not held in Melee by A11.15's exception ([LDR] alone says so), so its leaving is
    // the players' to adjudicate.
    // A unit that advanced into a Location this APh is in a new CC there, not held in Melee;
    // what its advance allows it is the advance's to say (once per APh).
    let advanced = game.movement.advanced.contains(&unit.id);
    if let Some(enemy) = in_melee_with(game, unit).filter(|_| !advanced) {
        if unit.concealed {
            return refuse(
                "A11.15",
                ViolationKind::NotModelled,
                pieces![
                    Piece::unit(id),
                    " is under \"?\" in the Location of the Known enemy ",
                    Piece::unit(&enemy.id),
                    ": whether a concealed unit is free to leave a Melee is not modelled; the players adjudicate it"
                ],
            );
        }
        return if moving {
            refuse(
                "A4.1",
                ViolationKind::UnitState,
                pieces![
                    Piece::unit(id),
                    " is held in Melee with the Known enemy ",
                    Piece::unit(&enemy.id),
                    " (A11.7) and does not move in the MPh; it may withdraw from the Melee in the CCPh (A11.2)"
                ],
            )
        } else {
            refuse(
                "A11.15",
                ViolationKind::UnitState,
                pieces![
                    Piece::unit(id),
                    " is held in Melee with the Known enemy ",
                    Piece::unit(&enemy.id),
                    " and does not advance out of it; it may withdraw from the Melee in the CCPh (A11.2)"
                ],
            )
        };
    }
    Ok(())
}

/// Unit-state checks (A4.1): only Good Order, unpinned Infantry of the ATTACKER move in the MPh.
fn check_may_move(game: &Game, unit: &Unit) -> Result<(), RuleViolation> {
    let refuse = |rule: &str, kind, why: Vec<Piece>| Err(RuleViolation::with(rule, kind, why));
    let id = &unit.id;
    check_free(game, unit, StackAct::Move)?;
    check_not_prep_fired(game, unit)?;
    if game.movement.finished.contains(id) {
        return refuse(
            "A4.2",
            ViolationKind::UnitState,
            pieces![Piece::unit(id), " moved, stopped, and another unit has moved since; it may move no farther this MPh"],
        );
    }
    if unit.mf_spent > Mf::default() && !game.movement.moving_stack.contains(id) {
        return refuse(
            "A4.2",
            ViolationKind::UnitState,
            pieces![Piece::unit(id), " has finished its move this MPh"],
        );
    }
    Ok(())
}

/// A4.1: a unit that fired in the PFPh does not move in the MPh that follows — by any means,
/// sewers and tunnels included; nor does one designated an Opportunity Firer there instead
/// (A7.25, A3.3).
pub(crate) fn check_not_prep_fired(game: &Game, unit: &Unit) -> Result<(), RuleViolation> {
    if game.prep_fired.contains(&unit.id) {
        return Err(RuleViolation::with(
            "A4.1",
            ViolationKind::UnitState,
            pieces![
                Piece::unit(&unit.id),
                " fired in the PFPh and does not move in this MPh"
            ],
        ));
    }
    if game.opportunity_fire.contains(&unit.id) {
        return Err(RuleViolation::with(
            "A7.25",
            ViolationKind::UnitState,
            pieces![
                Piece::unit(&unit.id),
                " was designated an Opportunity Firer in the PFPh: it holds its fire for the AFPh and does not move in this MPh"
            ],
        ));
    }
    Ok(())
}

/// A4.2: a moving stack finishes before another unit moves; a stack may split, but a unit that
/// was not in it cannot join it on the way.
fn check_one_stack_at_a_time(game: &Game, ids: &[UnitId]) -> Result<(), RuleViolation> {
    let stack = &game.movement.moving_stack;
    let inside = ids.iter().filter(|id| stack.contains(*id)).count();
    if inside == 0 || inside == ids.len() {
        return Ok(());
    }
    let outsider = ids
        .iter()
        .find(|id| !stack.contains(*id))
        .expect("some are outside");
    Err(RuleViolation::with(
        "A4.2",
        ViolationKind::UnitState,
        pieces![
            Piece::unit(outsider),
            " was not part of the stack that is moving (",
            Piece::units(stack.iter()),
            "); it cannot join it mid-move"
        ],
    ))
}

/// Vehicles have MP, not MF; the engine rules only on what the WA and bocage rules need of
/// them and refuses the rest rather than guess. Among vehicles only the fully tracked may
/// cross bocage (B9.54): that refusal is a ruling, the rest are "not modelled".
fn refuse_vehicles(
    game: &Game,
    units: &[&Unit],
    crossing_bocage: bool,
) -> Result<(), RuleViolation> {
    let Some(vehicle) = units.iter().find(|u| u.kind == UnitKind::Vehicle) else {
        return Ok(());
    };
    let fully_tracked = game
        .scenario
        .units
        .get(&vehicle.id)
        .is_some_and(|s| s.fully_tracked);
    if crossing_bocage && !fully_tracked {
        return Err(RuleViolation::with(
            "B9.54",
            ViolationKind::Terrain,
            pieces![
                Piece::unit(&vehicle.id),
                " is not fully tracked; among vehicles only fully-tracked ones cross bocage"
            ],
        ));
    }
    Err(RuleViolation::with(
        "D2",
        ViolationKind::NotModelled,
        pieces![
            Piece::unit(&vehicle.id),
            " is a vehicle; vehicle movement is not modelled by this engine"
        ],
    ))
}

/// Most hexsides a Bypass may still go on round one hex while looking for a way on; bounds the
/// search in [`way_on_from_bypass`] (a Bypass never goes round more than five, A4.31).
const WAY_ON_DEPTH_MAX: usize = 5;

/// Whether `unit`, in Bypass, could still go on this MPh: enter the obstacle, step into a hex
/// at its vertex, or go on round the hex and do so (A4.31, A4.32). A broken or pinned unit, one
/// that may not move any more, or one that cannot pay for any of it is stranded there (A4.32,
/// A4.33): that is not ending the MPh in Bypass by choice.
pub(crate) fn way_on_from_bypass(game: &Game, unit: &Unit) -> bool {
    way_on(game, unit, WAY_ON_DEPTH_MAX)
}

fn way_on(game: &Game, unit: &Unit, depth: usize) -> bool {
    let Some(bypass) = &unit.bypass else {
        return false;
    };
    if check_may_move(game, unit).is_err() {
        return false;
    }
    // The unit alone, and the whole moving stack it stands with (a leader's bonus may need it).
    let together: Vec<UnitId> = game
        .units
        .values()
        .filter(|u| {
            u.side == unit.side
                && u.bypass == unit.bypass
                && u.hex == unit.hex
                && !u.eliminated
                && check_may_move(game, u).is_ok()
        })
        .map(|u| u.id.clone())
        .collect();
    let groups = [vec![unit.id.clone()], together];
    let exits = bypass.exits(game.scenario.geometry());
    for ids in &groups {
        for to in [bypass.hex, exits[0], exits[1]] {
            // Whether the step is allowed is settled before any die (a Residual FP attack's
            // dice come after every check), so any faces do for the probe.
            let out = step::decide(game, unit.side, ids, to, &mut AnyDice).is_ok_and(|events| {
                events
                    .iter()
                    .any(|e| matches!(e, game::event::Event::UnitMoved(_)))
            });
            if out {
                return true;
            }
        }
        if depth > 0 {
            // Going on round the hex one more hexside, from the vertex where it stands.
            if let Ok(events) = bypass::continue_one(game, unit.side, ids, bypass, exits[1]) {
                let mut after = game.clone();
                for e in &events {
                    game::apply(&mut after, e);
                }
                if let Some(moved) = after.units.get(&unit.id) {
                    if way_on(&after, moved, depth - 1) {
                        return true;
                    }
                }
            }
        }
    }
    false
}

/// Dice for a probe of whether a step is allowed: every die a 1, nothing logged.
struct AnyDice;

impl game::dice::DiceSource for AnyDice {
    fn roll_die(&mut self) -> Option<u8> {
        Some(1)
    }
}

//! `PickUp` and `Drop`: possession of support weapons during the MPh (A4.4–A4.44), its
//! Recovery in the RPh too (A4.44), and dropping it in the APh too (A4.43).
//!
//! Dropping is free (A4.43). Recovering an unpossessed weapon in the unit's Location is a
//! Recovery dr through the dice, after 1 extra MF in the MPh (A4.44); a weapon recovered there
//! counts its PP against the unit's IPC for the rest of the MPh even if it is dropped again
//! (A4.4). No weapon is portaged twice in one phase (A4.4), and an
//! SMC never carries more than two PP (A4.42).

use super::movers;
use crate::violation::{pieces, Piece, RuleViolation, ViolationKind};
use crate::{own_unit, require_acting, require_phase};
use board::scenario::{Side, UnitId, UnitKind};
use game::dice::{DiceSource, Modifier, Roll, RollPurpose};
use game::event::{DiceRolled, Event, RecoveryAttempted};
use game::event::{WeaponDropped, WeaponPickedUp, WeaponTransferred};
use game::phase::Phase;
use game::{Game, RallyPhaseAct, Unit, Weapon};

pub use game::event::RECOVERY_MF;

/// Whether `unit` may possess a support weapon: only Infantry do (A4.43; a Dummy is no unit,
/// A12.11), and a vehicle's carrying one is not modelled (a vehicle has MP and a capacity of
/// its own, not an Infantry unit's IPC and MF, A4.4). The one answer for every act that
/// gives a unit a weapon — a side's set-up (`setup`), a Recovery (`decide_pick_up`), a Transfer
/// (`decide_transfer`) — and for a drop. Told to the unit's owner alone, as every refusal is:
/// the enemy learns nothing of what a "?" covers.
pub(crate) fn check_may_possess(unit: &UnitId, kind: UnitKind) -> Result<(), RuleViolation> {
    if kind == UnitKind::Vehicle {
        return Err(RuleViolation::with(
            "A4.4",
            ViolationKind::NotModelled,
            pieces![
                Piece::unit(unit),
                " is a vehicle; vehicles recovering, carrying or dropping support weapons is not modelled by this engine"
            ],
        ));
    }
    if !kind.is_infantry() {
        return Err(RuleViolation::with(
            "A4.43",
            ViolationKind::UnitState,
            pieces![
                Piece::unit(unit),
                " is no Infantry: only Infantry possess support weapons"
            ],
        ));
    }
    Ok(())
}

/// The weapon a pick-up or drop names, as `by` may know of it (`crate::known_weapon`): one a
/// unit hidden from him possesses is refused as a made-up id is (A12.3).
fn weapon<'g>(game: &'g Game, by: Side, id: &str) -> Result<&'g Weapon, RuleViolation> {
    crate::known_weapon(game, by, id).ok_or_else(|| {
        RuleViolation::with(
            "A4.43",
            ViolationKind::UnknownUnit,
            pieces![
                "there is no support weapon ",
                Piece::unit(id),
                " in this game"
            ],
        )
    })
}

/// A Recovery attempt (A4.44): in the MPh by a unit free to move, for one extra MF; at the
/// start of any RPh, by either side's unit, as its sole act there. Every check comes before
/// the Recovery dr, a Final dr below 6 recovering the weapon: CX adds one (A4.51), and no
/// leader's DRM applies (the rule marks the dr with the triangle of A.10). A success in the
/// MPh is `WeaponPickedUp`, as a Recovery always was; a failure there still spends the MF, and
/// either outcome in the RPh costs none (`RecoveryAttempted`). An SMC may recover a weapon its
/// friendly broken unit possesses, in its own RPh or MPh, at no MF (`from_broken_friend`).
pub(crate) fn decide_pick_up(
    game: &Game,
    by: Side,
    unit_id: &UnitId,
    weapon_id: &str,
    dice: &mut dyn DiceSource,
) -> Result<Vec<Event>, RuleViolation> {
    let ids = std::slice::from_ref(unit_id);
    super::refuse_advance_phase(game, by, super::RECOVERING)?;
    let rally_phase = game.clock.phase() == Phase::Rally;
    let unit = if rally_phase {
        rally_phase_recoverer(game, by, unit_id)?
    } else {
        movers(game, by, ids, "support weapons are recovered")?[0]
    };
    check_may_possess(&unit.id, unit.kind)?;
    let weapon = weapon(game, by, weapon_id)?;
    let from_broken = from_broken_friend(game, by, unit, weapon)?;
    if let (Some(holder), false) = (&weapon.held_by, from_broken) {
        return Err(RuleViolation::with(
            "A4.43",
            ViolationKind::UnitState,
            pieces![
                Piece::unit(weapon_id),
                " is possessed by ",
                Piece::unit(holder),
                "; only an unpossessed weapon is recovered (or, by an SMC, one its friendly broken unit possesses)"
            ],
        ));
    }
    // An unpossessed weapon lies in one Location of its hex (A5.1): the ground level, or the
    // upper level or place below ground it was dropped in (`Game::weapon_lies`, A4.43). A broken
    // friend's lies with its possessor.
    let in_its_location = weapon.hex == unit.hex
        && (from_broken || game.weapon_lies.get(weapon_id).copied() == game.lies_at(unit));
    check_not_bypassing(unit, "recovers no weapon")?;
    if !in_its_location {
        return Err(RuleViolation::with(
            "A4.44",
            ViolationKind::Geometry,
            pieces![
                Piece::unit(weapon_id),
                format!(" lies in another Location of {}, not in ", weapon.hex),
                Piece::unit(unit_id),
                "'s Location"
            ],
        ));
    }
    if weapon.portaged {
        return Err(RuleViolation::with(
            "A4.4",
            ViolationKind::UnitState,
            pieces![
                Piece::unit(weapon_id),
                " has been portaged this phase already; no item is portaged twice in a phase"
            ],
        ));
    }
    super::check_smc_load(game, unit, weapon.pp)?;
    check_no_known_enemy(game, by, unit, weapon_id)?;
    if !rally_phase && tried(game, unit_id, Some(weapon_id)) {
        return Err(RuleViolation::with(
            "A4.44",
            ViolationKind::UnitState,
            pieces![
                Piece::unit(unit_id),
                " has attempted to recover ",
                Piece::unit(weapon_id),
                " this MPh: one attempt per unit and weapon a MPh"
            ],
        ));
    }
    // An SMC's Recovery from its broken friend needs no MF (A4.44).
    let account = if rally_phase || from_broken {
        None
    } else {
        Some(super::pay_in_place(
            game,
            unit,
            ids,
            weapon.pp,
            RECOVERY_MF,
            "A4.44",
            pieces!["recovering ", Piece::unit(weapon_id)],
        )?)
    };
    let dr = dice.roll_die().ok_or_else(|| {
        RuleViolation::new(
            "docs/dice.md",
            ViolationKind::NoDice,
            "no dice: offline, add a `dice` line with one face for the Recovery dr before `pick-up`",
        )
    })?;
    let mut modifiers = vec![];
    if unit.cx {
        modifiers.push(Modifier {
            value: 1,
            reason: format!("`{unit_id}` is CX"),
            rule: "A4.51".into(),
        });
    }
    let final_dr = i16::from(dr) + modifiers.iter().map(|m| i16::from(m.value)).sum::<i16>();
    let recovered = final_dr < RECOVERY_BELOW;
    let roll = Event::DiceRolled(DiceRolled {
        roll: Roll {
            side: by,
            purpose: RollPurpose::Recovery,
            rule: "A4.44".into(),
            first_draw: game.dice_drawn,
            dice: vec![dr],
            modifiers,
            final_result: final_dr,
            outcome: format!(
                "`{unit_id}` recovers {weapon_id} on a Final dr below {RECOVERY_BELOW}: {}",
                if recovered {
                    "recovered"
                } else {
                    "not recovered"
                }
            ),
        },
    });
    let attempt = match account {
        Some(mf) if recovered => Event::WeaponPickedUp(WeaponPickedUp {
            unit: unit_id.clone(),
            weapon: weapon_id.to_string(),
            mf,
        }),
        account => Event::RecoveryAttempted(RecoveryAttempted {
            unit: unit_id.clone(),
            weapon: weapon_id.to_string(),
            recovered,
            mf: account.into_iter().collect(),
        }),
    };
    Ok(vec![roll, attempt])
}

/// A4.44: whether `unit` attempts the Recovery of a weapon its friendly broken unit possesses
/// in its Location — only an SMC does, in its own RPh or MPh, and without MF. `Ok(false)` for
/// every other weapon, possessed or not, which the one check of possession then rules on.
fn from_broken_friend(
    game: &Game,
    by: Side,
    unit: &Unit,
    weapon: &Weapon,
) -> Result<bool, RuleViolation> {
    let Some(holder) = weapon.held_by.as_ref().and_then(|h| game.units.get(h)) else {
        return Ok(false);
    };
    if !unit.kind.is_smc()
        || holder.side != by
        || holder.eliminated
        || holder.morale != board::scenario::Morale::Broken
        || !game.same_location(holder, unit)
    {
        return Ok(false);
    }
    if unit.concealed {
        // Only an SMC may do it: done under "?" it would tell the enemy what the "?" hides.
        return Err(RuleViolation::with(
            "A4.44",
            ViolationKind::NotModelled,
            pieces![
                Piece::unit(&unit.id),
                " is under \"?\": its Recovery of a weapon from a broken friend, which only an SMC makes, is not modelled by this engine"
            ],
        ));
    }
    if game.clock.phase() == Phase::Rally && game.attacker() != by {
        return Err(RuleViolation::with(
            "A4.44",
            ViolationKind::NotModelled,
            pieces![
                Piece::unit(&unit.id),
                " would recover ",
                Piece::unit(&weapon.id),
                " from the broken ",
                Piece::unit(&holder.id),
                " in the enemy's RPh: the rule gives it his own RPh and MPh, and whether the enemy's RPh is meant too the sources at hand do not settle, so it is not modelled by this engine"
            ],
        ));
    }
    Ok(true)
}

/// A Recovery's Final dr must be below this (A4.44).
pub const RECOVERY_BELOW: i16 = 6;

/// Whether `unit` attempted a Recovery in this phase: of `weapon`, or of any weapon with
/// `None` (`MovementRecord::recovery_attempts`, forgotten as each phase ends).
pub(crate) fn tried(game: &Game, unit: &UnitId, weapon: Option<&str>) -> bool {
    game.movement
        .recovery_attempts
        .iter()
        .any(|(w, units)| weapon.is_none_or(|x| x == w) && units.contains(unit))
}

/// A4.44: a Recovery is made by a unit that is not Bypassing: one going round its hex's
/// obstacle stands along a hexside, not in the hex's Location with what lies there (A4.3,
/// A4.33). The one check for every act made by the Recovery procedure: a `pick-up`, and the
/// search for a tunnel entrance (B8.63, `sewer::decide_discover`); `what` says what it does not.
pub(crate) fn check_not_bypassing(unit: &Unit, what: &str) -> Result<(), RuleViolation> {
    let Some(bypass) = &unit.bypass else {
        return Ok(());
    };
    Err(RuleViolation::with(
        "A4.44",
        ViolationKind::UnitState,
        pieces![
            Piece::unit(&unit.id),
            format!(
                " is in Bypass round {}: a Bypassing unit {what}, the Recovery procedure being made only by one in the Location itself",
                bypass.hex
            )
        ],
    ))
}

/// A4.44: the unit that may attempt a Recovery at the start of the RPh — either side's, in
/// the RPh's own step (not its end's WA steps), in the open (a hidden unit's act would reveal
/// it, A12.3), above ground, in Good Order and unpinned, having done nothing else in the RPh
/// (`rally_phase::check_one_act`: no rally attempt or rally led, no repair, no Transfer) and
/// attempted no other Recovery.
fn rally_phase_recoverer<'g>(
    game: &'g Game,
    by: Side,
    id: &UnitId,
) -> Result<&'g Unit, RuleViolation> {
    crate::require_rally_step(game, "A4.44", "a Recovery is attempted")?;
    let unit = own_unit(game, by, id)?;
    super::check_not_hidden(unit, "recovering a support weapon")?;
    let refuse = |kind, why: &str| {
        Err(RuleViolation::with(
            "A4.44",
            kind,
            pieces![Piece::unit(id), why.to_string()],
        ))
    };
    if unit.underground.is_some() {
        return refuse(
            ViolationKind::NotModelled,
            " is below ground: recovering a weapon there is not modelled by this engine",
        );
    }
    if !unit.is_good_order() {
        return refuse(
            ViolationKind::UnitState,
            " is not in Good Order: only a Good Order unit attempts a Recovery",
        );
    }
    if unit.pinned {
        return refuse(
            ViolationKind::UnitState,
            " is pinned: only an unpinned unit attempts a Recovery",
        );
    }
    crate::rally_phase::check_one_act(game, id, RallyPhaseAct::Recovery)?;
    if tried(game, id, None) {
        return refuse(
            ViolationKind::UnitState,
            " attempted a Recovery this RPh already: it is a unit's sole act there",
        );
    }
    Ok(unit)
}

/// A4.44: no Recovery in a Location holding an armed Known enemy unit — a unit its side
/// knows of (`rout::known_enemies`: Personnel or vehicles, broken or not, not under "?").
fn check_no_known_enemy(
    game: &Game,
    by: Side,
    unit: &Unit,
    weapon_id: &str,
) -> Result<(), RuleViolation> {
    let Some(enemy) = super::rout::known_enemies(game, by).find(|e| game.same_location(e, unit))
    else {
        return Ok(());
    };
    Err(RuleViolation::with(
        "A4.44",
        ViolationKind::UnitState,
        pieces![
            Piece::unit(&unit.id),
            " shares its Location with the armed Known enemy unit ",
            Piece::unit(&enemy.id),
            "; no weapon is recovered there, ",
            Piece::unit(weapon_id),
            " included"
        ],
    ))
}

/// `TransferWeapon` (A4.431): in any RPh, by either side, or at the start of the ATTACKER's
/// APh — before either unit advances, the reading of "start" the engine makes — a SW passes
/// from the unit possessing it to another of the side's units in its Location, both in Good
/// Order and unpinned, at no MF. In the RPh it is made in the phase's own step, as a Recovery
/// is, as each unit's one type of act there (A3.1, `rally_phase::check_one_act`): a unit that
/// attempted a Recovery (its sole act, A4.44; so a SW Recovered in the RPh is not transferred
/// in it), a rally, led one, or attempted a repair neither gives nor takes a SW, and one that
/// gave or took one attempts none of those after. One as a
/// sub-unit is created is not modelled; nor one by a unit under "?", whose weapons the enemy
/// does not see (the transfer would show or hide one), or a hidden one (A12.3).
pub(crate) fn decide_transfer(
    game: &Game,
    by: Side,
    weapon_id: &str,
    to: &UnitId,
) -> Result<Vec<Event>, RuleViolation> {
    let refuse = |kind, why: Vec<Piece>| Err(RuleViolation::with("A4.431", kind, why));
    let rally_phase = match game.clock.phase() {
        Phase::Advance => false,
        Phase::Rally => true,
        _ => {
            return refuse(
                ViolationKind::WrongPhase,
                pieces!["a SW is transferred in the RPh or at the start of the APh"],
            )
        }
    };
    if rally_phase {
        crate::require_rally_step(game, "A4.431", "a SW is transferred")?;
    } else {
        require_acting(
            game,
            by,
            "only the ATTACKER transfers weapons at the start of its APh",
        )?;
    }
    let (weapon, holder) = crate::own_weapon(
        game,
        by,
        weapon_id,
        "A4.431",
        "only a possessed weapon is transferred (an unpossessed one is Recovered, A4.44)",
    )?;
    let giver = own_unit(game, by, holder)?;
    let taker = own_unit(game, by, to)?;
    if giver.id == taker.id {
        return refuse(
            ViolationKind::UnitState,
            pieces![
                Piece::unit(to),
                " possesses ",
                Piece::unit(weapon_id),
                " already"
            ],
        );
    }
    for unit in [giver, taker] {
        check_may_possess(&unit.id, unit.kind)?;
        super::check_not_hidden(unit, "transferring a support weapon")?;
        crate::rally_phase::check_one_act(game, &unit.id, RallyPhaseAct::Transfer)?;
        let why = if unit.concealed {
            Some((
                ViolationKind::NotModelled,
                " is under \"?\": a Transfer would show the enemy a weapon it hides, or hide one it sees; not modelled by this engine",
            ))
        } else if unit.underground.is_some() {
            Some((
                ViolationKind::NotModelled,
                " is below ground: a Transfer there is not modelled by this engine",
            ))
        } else if !unit.is_good_order() || super::in_melee_with(game, unit).is_some() {
            Some((
                ViolationKind::UnitState,
                " is not in Good Order (broken, berserk or held in Melee): only Good Order units transfer a SW",
            ))
        } else if unit.pinned {
            Some((
                ViolationKind::UnitState,
                " is pinned: only unpinned units transfer a SW",
            ))
        } else if !rally_phase && game.movement.advanced.contains(&unit.id) {
            Some((
                ViolationKind::UnitState,
                " has advanced this APh: a Transfer is made at its start, before either unit advances",
            ))
        } else {
            None
        };
        if let Some((kind, why)) = why {
            return refuse(kind, pieces![Piece::unit(&unit.id), why.to_string()]);
        }
    }
    if !game.same_location(giver, taker) {
        return refuse(
            ViolationKind::Geometry,
            pieces![
                Piece::unit(to),
                " is not in the Location of ",
                Piece::unit(holder),
                ", which possesses ",
                Piece::unit(weapon_id)
            ],
        );
    }
    super::check_smc_load(game, taker, weapon.pp)?;
    Ok(vec![Event::WeaponTransferred(WeaponTransferred {
        weapon: weapon_id.to_string(),
        from: holder.clone(),
        to: to.clone(),
    })])
}

/// Dropping needs no MF and is not a move, so A4.2's one-stack-at-a-time does not stop a unit
/// that has finished moving from putting its weapon down.
pub(crate) fn decide_drop(
    game: &Game,
    by: Side,
    unit_id: &UnitId,
    weapon_id: &str,
) -> Result<Vec<Event>, RuleViolation> {
    // A4.43: a unit may also drop a weapon at the start of a CCPh to withdraw from Melee
    // (A11.21), whichever side it is on: `close_combat::check_drop_to_withdraw` says whether
    // this one may, once the checks of every drop have passed.
    let withdrawing = game.clock.phase() == Phase::CloseCombat;
    // A4.43: possession is dropped free in the unit's MPh or APh; a broken unit about to rout
    // drops in its RtPh what it cannot carry (A10.5).
    let routing = game.clock.phase() == Phase::Rout;
    if !withdrawing {
        require_acting(
            game,
            by,
            "only the ATTACKER drops weapons in its MPh or APh",
        )?;
        if game.clock.phase() != Phase::Advance && !routing {
            require_phase(
                game,
                Phase::Movement,
                "A4.43",
                "support weapons are dropped (or in the APh, or at the start of the CCPh to withdraw from Melee)",
            )?;
        }
    }
    let unit = own_unit(game, by, unit_id)?;
    check_may_possess(&unit.id, unit.kind)?;
    super::check_not_hidden(unit, "dropping a support weapon")?;
    let weapon = weapon(game, by, weapon_id)?;
    if weapon.held_by.as_ref() != Some(unit_id) {
        return Err(RuleViolation::with(
            "A4.43",
            ViolationKind::UnitState,
            pieces![
                Piece::unit(unit_id),
                " does not possess ",
                Piece::unit(weapon_id)
            ],
        ));
    }
    if routing {
        let held = super::held_pp(game, unit_id);
        if unit.morale != board::scenario::Morale::Broken || held <= super::unit_ipc(unit) {
            return Err(RuleViolation::with(
                "A10.5",
                ViolationKind::UnitState,
                pieces![
                    Piece::unit(unit_id),
                    format!(
                        " is not a broken unit holding more than its IPC ({held} PP, IPC {}); in the RtPh only such a unit drops a weapon, the one it cannot carry as it routs",
                        super::unit_ipc(unit)
                    )
                ],
            ));
        }
    } else if !unit.is_good_order() {
        return Err(RuleViolation::with(
            "A4.43",
            ViolationKind::UnitState,
            pieces![
                Piece::unit(unit_id),
                " is broken; only an unbroken unit drops possession"
            ],
        ));
    }
    if withdrawing {
        crate::close_combat::check_drop_to_withdraw(game, unit)?;
    }
    Ok(vec![Event::WeaponDropped(WeaponDropped {
        unit: unit_id.clone(),
        weapon: weapon_id.to_string(),
    })])
}

//! `DeclareAttack` / `ResolveAttack`: the engine does not compute fire, but the rules care
//! when it happens — no WA in the target hex may change between an attack's declaration and
//! its resolution (B9.322). An attack the engine resolves by the rules has its effects
//! applied by `rules::morale`; any other outcome is entered with `Adjudicate`.

use super::own_unit;
use crate::fire::ift::IftResult;
use crate::fire::resolution;
use crate::morale;
use crate::violation::{pieces, Piece, RuleViolation, ViolationKind};
use board::hex::Hex;
use board::scenario::{Side, UnitId, UnitKind};
use game::dice::DiceSource;
use game::event::Event;
use game::event::{
    AttackDeclared, AttackLeftToPlayers, AttackResolved, DiceRolled, FireEffectLeftToPlayers,
    IftAttackResolved, MultipleRofRetained, OpportunityFireMarked, ResidualFpLeft,
    WeaponMalfunctioned,
};
use game::phase::Phase;
use game::{Emergence, Game, Underground};

/// Which side fires in which phase: the ATTACKER in its PFPh and AFPh, the DEFENDER in the
/// MPh (Defensive First Fire) and DFPh.
fn fires_now(game: &Game, by: Side) -> bool {
    let attacker = game.attacker() == by;
    match game.clock.phase() {
        Phase::PrepFire | Phase::AdvancingFire => attacker,
        Phase::Movement | Phase::DefensiveFire => !attacker,
        _ => false,
    }
}

pub(super) fn declare(
    game: &Game,
    by: Side,
    firers: &[UnitId],
    target: Hex,
    into_sewer: bool,
) -> Result<Vec<Event>, RuleViolation> {
    if !fires_now(game, by) {
        return Err(RuleViolation::new(
            game.clock.phase().rule(),
            ViolationKind::WrongPhase,
            format!(
                "the {} does not fire in the {}",
                game.side_name(by),
                game.clock.phase()
            ),
        ));
    }
    check_no_attack_pending(game)?;
    if firers.is_empty() {
        return Err(RuleViolation::new(
            "A7",
            ViolationKind::UnknownUnit,
            "name the firing units",
        ));
    }
    super::check_named_once(firers, "A7", " among the firers")?;
    // A support weapon named among the firers fires in the hands of the unit possessing it
    // (A9.1, A9.11): that unit's LOS and line of fire are the weapon's.
    let (weapons, firers) = resolution::split_firers(game, by, firers);
    let mut shooters = firers.clone();
    for id in &weapons {
        let holder = check_weapon(game, by, id)?;
        if !into_sewer {
            if let Some(marked) = Marked::weapon(game, id, holder) {
                check_fire_counters(game, &marked, target)?;
            }
        }
        // A7.1: a SW fires in one fire phase of a Player Turn, as its possessor does; in the
        // AFPh a weapon whose possessor is marked Prep Fire fired in the PFPh, or has had its
        // one AFPh shot (A4.41) — but an Opportunity Firer's, which keeps its ROF (A7.25).
        if game.clock.phase() == Phase::AdvancingFire
            && game.prep_fired.contains(holder)
            && !game.opportunity_fire.contains(holder)
        {
            return Err(RuleViolation::with(
                "A7.1",
                ViolationKind::UnitState,
                pieces![
                    Piece::Given(id.clone()),
                    " is possessed by ",
                    Piece::unit(holder),
                    ", marked Prep Fire: it has fired in this Player Turn already, and a SW fires in only one fire phase of a Player Turn"
                ],
            ));
        }
        // A4.41: an MMG, HMG or mortar that changed Location in the MPh does not fire in the
        // ensuing AFPh; one that stayed where it lay and was Recovered there (A4.44) does.
        if game.clock.phase() == Phase::AdvancingFire && game.moved_weapons.contains(id) {
            let w = &game.weapons[id];
            if crate::fire::resolution::a4_41_restricted(&w.name) {
                return Err(RuleViolation::with(
                    "A4.41",
                    ViolationKind::UnitState,
                    pieces![
                        Piece::Given(id.clone()),
                        format!(
                            " ({}) changed Location in this Player Turn's MPh: an MMG, HMG or mortar that moved does not fire in the AFPh that follows",
                            w.name
                        )
                    ],
                ));
            }
        }
        if !shooters.contains(holder) {
            shooters.push(holder.clone());
        }
    }
    let firers = &firers[..];
    // How often a leader directs fire in a phase (A7.53, A9.12); one directing his MG again
    // on its ROF is not stopped by the Fire counter that direction put on him.
    let directs_again = crate::fire::direction::check(game, firers, &weapons)?;
    for id in &shooters {
        let unit = own_unit(game, by, id)?;
        // A12.3: a HIP unit that fires is revealed; that is not done unseen (`place` it first,
        // under "?", and A12.14 then takes its "?" as it fires).
        crate::movement::check_not_hidden(unit, "fire")?;
        if unit.kind == board::scenario::UnitKind::Dummy {
            // Told to its owner alone, as every refusal is: the enemy learns nothing of it.
            return Err(RuleViolation::with(
                "A12.11",
                ViolationKind::UnitState,
                pieces![
                    Piece::unit(id),
                    " is a Dummy: it has no FP and makes no attack"
                ],
            ));
        }
        if !unit.is_good_order() {
            return Err(RuleViolation::with(
                "A7",
                ViolationKind::UnitState,
                pieces![Piece::unit(id), " is broken and cannot fire"],
            ));
        }
        check_not_held(game, unit, target)?;
        if firers.contains(id) {
            // A9.11: a unit that forfeited its own FP by the SW it fired.
            crate::fire::usage::check_own_fp(game, id, target)?;
        }
        if game.clock.phase() == Phase::PrepFire && game.opportunity_fire.contains(id) {
            // A7.25: an Opportunity Firer holds its fire, and its SW's, until the AFPh.
            return Err(RuleViolation::with(
                "A7.25",
                ViolationKind::UnitState,
                pieces![
                    Piece::unit(id),
                    " is designated an Opportunity Firer: it holds its fire until the AFPh"
                ],
            ));
        }
        check_line_of_fire(game, unit, target, into_sewer)?;
        if !into_sewer && firers.contains(id) && !directs_again.contains(id) {
            check_fire_counters(game, &Marked::unit(unit), target)?;
        }
    }
    check_fire_group(game, &shooters)?;
    check_range(game, firers, &weapons, target)?;
    if !into_sewer {
        check_fpf_weapons(game, firers, &weapons)?;
    }
    // Who may fire the SW named, and what it costs them (A9.11, A9.12).
    let forfeits = crate::fire::usage::check(game, firers, &weapons)?;
    let targets = |u: &&game::Unit| {
        u.side != by
            && !u.hidden
            && match u.underground {
                Some(Underground::Sewer { .. }) => into_sewer,
                Some(Underground::Tunnel) => false, // never attacked (B8.6)
                None => !into_sewer,
            }
    };
    let seen = into_sewer || sees(game, &shooters, target, &targets);
    let first_fire = !into_sewer && game.clock.phase() == Phase::Movement;
    if first_fire && moving_above_ground(game, by) {
        // A8.1 names the reason before A7 does: a stack is moving, and not in this hex.
        check_moving_target(game, by, target)?;
    }
    if !game.units_in(target).any(|u| targets(&u)) {
        return Err(RuleViolation::new(
            if into_sewer { "B8.3" } else { "A7" },
            ViolationKind::Geometry,
            format!(
                "no enemy unit {} {target} to fire at",
                if into_sewer {
                    "in the sewer beneath"
                } else {
                    "in"
                }
            ),
        ));
    }
    if first_fire {
        check_moving_target(game, by, target)?;
        check_closest_known(game, by, firers, target)?;
        // A8.3, A9.2: no more attacks at a mover in its Location than the MF it spent there.
        crate::fire::mf_limit::check(game, by, firers, &weapons, target)?;
    }
    // A7.55: a Location's units and weapons fire at one target in a phase as one Fire Group.
    crate::fire::mandatory::check(game, by, firers, &weapons, target, into_sewer)?;
    let declared = Event::AttackDeclared(AttackDeclared {
        by,
        firers: firers.to_vec(),
        weapons,
        target,
        into_sewer,
    });
    let mut events = vec![declared];
    // A12.14: a "?" that fires in a Good Order enemy's LOS loses it as it fires, whatever the
    // attack then does (even one A6.11 ends at once: the unit has fired).
    events.extend(crate::concealment::lost_by_fire(game, by, &shooters));
    events.extend(forfeits);
    if !seen {
        // A6.11: the LOS check after the declaration shows no LOS. The attack is not made,
        // but the declaring units still count as having fired for everything (a unit that
        // did so in its PFPh does not move, A4.1): declared, and over at once.
        events.push(Event::AttackResolved(AttackResolved { by, target }));
    }
    Ok(events)
}

/// A7.212, A11.15: a unit whose Location holds a Known enemy Infantry unit — held in Melee by
/// the engine's one reading of it (`movement::in_melee_with`, which every act leaving a
/// Location asks) — fires at no other Location, itself or by the SW it possesses: it attacks
/// only there, and fire within its own Location is the A11.7 row's, left to the players when
/// resolved. A unit under "?" there is bound too: A7.212 speaks of the firer's Location holding
/// a Known enemy, whatever the firer's own concealment. The enemy named is one the firing side
/// knows.
fn check_not_held(game: &Game, unit: &game::Unit, target: Hex) -> Result<(), RuleViolation> {
    if unit.hex == target {
        return Ok(());
    }
    let Some(enemy) = crate::movement::in_melee_with(game, unit) else {
        return Ok(());
    };
    Err(RuleViolation::with(
        "A7.212",
        ViolationKind::UnitState,
        pieces![
            Piece::unit(&unit.id),
            " shares its Location with the Known enemy unit ",
            Piece::unit(&enemy.id),
            format!(": it attacks no unit outside it, so not {target} (a unit held in Melee attacks only in CC, A11.15)")
        ],
    ))
}

/// An attack declared and not yet resolved (`Game::attack`, during which no WA changes in its
/// target hex, B9.322) is resolved before another is declared or fire is held for later.
fn check_no_attack_pending(game: &Game) -> Result<(), RuleViolation> {
    match &game.attack {
        Some(a) => Err(RuleViolation::new(
            "B9.322",
            ViolationKind::WrongPhase,
            format!("the attack on {} must be resolved first", a.target),
        )),
        None => Ok(()),
    }
}

/// `opportunity UNIT…`: the ATTACKER designates Opportunity Firers in his PFPh (A7.25, A3.2)
/// — units that hold their fire instead of Prep Firing, to fire in the AFPh without Advancing
/// Fire's halving (A7.24). The Bounding Fire counter it places is seen by both sides; the unit
/// does not move in the MPh (A3.3, `movement::check_not_prep_fired`). Only Good Order units
/// that have not fired this phase may take it, and a unit under "?" or HIP is refused: what
/// designating one does to its concealment is not sourced.
pub(super) fn mark_opportunity_fire(
    game: &Game,
    by: Side,
    units: &[UnitId],
) -> Result<Vec<Event>, RuleViolation> {
    // Whose step and which phase, by the checks every command makes (the PFPh is the
    // ATTACKER's step alone).
    super::require_acting(game, by, "only the ATTACKER designates Opportunity Firers")?;
    super::require_phase(
        game,
        Phase::PrepFire,
        "A7.25",
        "Opportunity Firers are designated",
    )?;
    check_no_attack_pending(game)?;
    if units.is_empty() {
        return Err(RuleViolation::new(
            "A7.25",
            ViolationKind::UnknownUnit,
            "name the units to designate as Opportunity Firers",
        ));
    }
    super::check_named_once(units, "A7.25", "")?;
    for id in units {
        let unit = own_unit(game, by, id)?;
        // A12.3: a HIP unit is refused as it is when it would fire (`declare`), by the one
        // check; what designating a unit under "?" does is below.
        crate::movement::check_not_hidden(unit, "designating it an Opportunity Firer")?;
        let refuse = |why: &str| {
            Err(RuleViolation::with(
                "A7.25",
                ViolationKind::UnitState,
                pieces![Piece::unit(id), why.to_string()],
            ))
        };
        if !unit.is_good_order() {
            return refuse(" is not in Good Order: only a Good Order unit holds its fire as an Opportunity Firer");
        }
        if !unit.kind.is_infantry() {
            return refuse(" is not Infantry: only Infantry are designated Opportunity Firers here (vehicles and Guns are not modelled)");
        }
        if game.prep_fired.contains(id) {
            return refuse(" has fired in this PFPh: an Opportunity Firer holds its fire instead of Prep Firing");
        }
        if game.opportunity_fire.contains(id) {
            return refuse(" is already designated an Opportunity Firer");
        }
        if unit.concealed || unit.hidden {
            return refuse(" is concealed: what designating it an Opportunity Firer does to its concealment is not ruled by the engine; reveal it, or adjudicate");
        }
    }
    Ok(vec![Event::OpportunityFireMarked(OpportunityFireMarked {
        units: units.to_vec(),
    })])
}

/// The shape of a Fire Group (A7.5, A7.531): its firing units — the MMC named and the
/// possessors of the SW named — stand in one Location or in a chain of ADJACENT ones, each
/// joined to the rest through firers ADJACENT to it, so no unit fires along with a group it
/// does not touch. A leader named among them directs the group only if every firing unit shares
/// his Location: he adds no FP of his own, so naming him with a Fire Group spread over several
/// Locations, or with units outside his own, is refused rather than read as fire without him.
/// ADJACENT is read here as "within one hex": whether Locations on different levels are
/// ADJACENT is for the resolution to leave to the players (`fire::resolution`).
fn check_fire_group(game: &Game, shooters: &[UnitId]) -> Result<(), RuleViolation> {
    let units: Vec<&game::Unit> = shooters
        .iter()
        .filter_map(|id| game.units.get(id))
        .collect();
    // A leader fires no FP of his own (`fire::fires_own_fp`): he is no link of the chain.
    let (firing, leaders): (Vec<&game::Unit>, Vec<&game::Unit>) =
        units.iter().partition(|u| crate::fire::fires_own_fp(u));
    // A7.5: walk the chain from the first firer through firers ADJACENT to one reached.
    let geometry = game.scenario.geometry();
    let joined =
        |a: &game::Unit, b: &game::Unit| geometry.distance(a.hex, b.hex).is_some_and(|d| d <= 1);
    let mut reached = vec![false; firing.len()];
    if !firing.is_empty() {
        reached[0] = true;
        let mut grew = true;
        while grew {
            grew = false;
            for i in 0..firing.len() {
                if !reached[i]
                    && (0..firing.len()).any(|j| reached[j] && joined(firing[i], firing[j]))
                {
                    reached[i] = true;
                    grew = true;
                }
            }
        }
    }
    if let Some(apart) = reached.iter().position(|r| !r) {
        return Err(RuleViolation::with(
            "A7.5",
            ViolationKind::Geometry,
            pieces![
                Piece::unit(&firing[apart].id),
                format!(" in {} is not joined to ", firing[apart].hex),
                Piece::unit(&firing[0].id),
                format!(
                    " in {} by a chain of firers in ADJACENT Locations: a Fire Group of several Locations must be one unbroken chain",
                    firing[0].hex
                )
            ],
        ));
    }
    // A7.531: a leader directs only a Fire Group whose firing units all share his Location.
    for leader in &leaders {
        if let Some(away) = firing.iter().find(|u| !game.same_location(u, leader)) {
            return Err(RuleViolation::with(
                "A7.531",
                ViolationKind::Geometry,
                pieces![
                    Piece::unit(&away.id),
                    " is not in ",
                    Piece::unit(&leader.id),
                    "'s Location: a leader directs a Fire Group only when every unit firing in it shares his Location"
                ],
            ));
        }
    }
    Ok(())
}

/// Whether a support weapon named among the firers may fire (A9.1, A9.2, A9.7): possessed by
/// a unit of the firing side, given its FP, range and B# by the scenario, not malfunctioned,
/// and not fired yet this phase. Returns its possessor. A weapon held by a unit the side may
/// not know of reads as no weapon at all.
/// A8.31: a unit firing Final Protective Fire fires with it every usable MG it possesses — one
/// not malfunctioned — as many as it can fire (a squad two, another MMC one, A9.11), marked
/// First Fire before or not; each is then in Sustained Fire and marked Final Fire whatever
/// its ROF (A9.3). So an FPF by a unit's own FP that leaves out a MG it could fire with it is
/// refused at the declaration, naming the weapon: the FPF is declared with it (and such an
/// attack is the players' to resolve, `fire::resolution`). An SMC's FPF is not checked here (a
/// leader has no FP of his own to fire it with). Sources: [LDR] A8.31 (all usable MG/IFE up to
/// the unit's capabilities must fire), [FFC] (MG/IFE must be used in FPF, with Sustained Fire).
fn check_fpf_weapons(
    game: &Game,
    firers: &[UnitId],
    weapons: &[UnitId],
) -> Result<(), RuleViolation> {
    if game.clock.phase() != Phase::Movement {
        return Ok(());
    }
    for id in firers.iter().filter(|id| game.final_fired.contains(*id)) {
        let Some(unit) = game.units.get(id) else {
            continue;
        };
        if unit.kind.is_smc() {
            continue;
        }
        let can_fire = if unit.kind == UnitKind::Squad { 2 } else { 1 };
        let mgs: Vec<&game::Weapon> = game
            .weapons
            .values()
            .filter(|w| w.held_by.as_ref() == Some(id))
            .filter(|w| !w.malfunctioned && crate::fire::usage::is_mg(&w.name))
            .collect();
        let with_it = mgs.iter().filter(|w| weapons.contains(&w.id)).count();
        if with_it >= can_fire {
            continue;
        }
        if let Some(left) = mgs.iter().find(|w| !weapons.contains(&w.id)) {
            return Err(RuleViolation::with(
                "A8.31",
                ViolationKind::UnitState,
                pieces![
                    Piece::unit(id),
                    " fires Final Protective Fire: every usable MG it possesses fires with it, so ",
                    Piece::Given(left.id.clone()),
                    " must be named among the firers too"
                ],
            ));
        }
    }
    Ok(())
}

/// A7.22: no unit fires at a target beyond twice its normal range, nor a SW beyond twice its
/// own, counted from its possessor's hex (A9.1). Refused at the declaration, before anything
/// is marked or rolled, naming the firer: a Fire Group does not carry a member out of range.
/// A unit whose ratings give no range (a leader directing) is not a firer here.
fn check_range(
    game: &Game,
    firers: &[UnitId],
    weapons: &[UnitId],
    target: Hex,
) -> Result<(), RuleViolation> {
    let geometry = game.scenario.geometry();
    let unit_ranges = firers.iter().filter_map(|id| {
        let u = game.units.get(id)?;
        let normal = resolution::normal_range(u)?;
        Some((Piece::unit(id), u.hex, normal))
    });
    let weapon_ranges = weapons.iter().filter_map(|id| {
        let w = game.weapons.get(id)?;
        let normal = u32::from(w.ratings?.range);
        let holder = game.units.get(w.held_by.as_ref()?)?;
        Some((Piece::Given(id.clone()), holder.hex, normal))
    });
    for (who, hex, normal) in unit_ranges.chain(weapon_ranges) {
        let Some(range) = geometry.distance(hex, target) else {
            continue;
        };
        if range > 2 * normal {
            return Err(RuleViolation::with(
                "A7.22",
                ViolationKind::Geometry,
                pieces![
                    who,
                    format!(
                        " is {range} hexes from {target}, beyond twice its normal range of {normal}: no fire reaches past long range"
                    )
                ],
            ));
        }
    }
    Ok(())
}

fn check_weapon<'g>(game: &'g Game, by: Side, id: &str) -> Result<&'g UnitId, RuleViolation> {
    let given = || Piece::Given(id.to_string());
    let refuse = |rule: &str, kind: ViolationKind, why: Vec<Piece>| {
        Err(RuleViolation::with(rule, kind, why))
    };
    let (w, holder) = super::own_weapon(
        game,
        by,
        id,
        "A9.1",
        "a support weapon fires only in the hands of the unit possessing it",
    )?;
    if w.ratings.is_none() {
        return refuse(
            "A9.1",
            ViolationKind::UnitState,
            pieces![
                "the scenario gives ",
                given(),
                " no FP, normal range and Breakdown Number: its `[[weapons]]` entry needs `fp`, `range` and `breakdown` for the engine to fire it"
            ],
        );
    }
    if w.malfunctioned {
        return refuse(
            "A9.7",
            ViolationKind::UnitState,
            pieces![
                given(),
                " has malfunctioned and does not fire until it is repaired"
            ],
        );
    }
    if w.fired
        && game.clock.phase() == Phase::AdvancingFire
        && !game.opportunity_fire.contains(holder)
    {
        return refuse(
            "A4.41",
            ViolationKind::UnitState,
            pieces![
                given(),
                " has fired in this AFPh: a weapon fired in the AFPh has one shot whatever its ROF (unless its possessor is an Opportunity Firer)"
            ],
        );
    }
    // A8.1: in the MPh a weapon whose ROF is spent carries a Fire counter and may still fire
    // as Subsequent First Fire or FPF (`check_fire_counters`, its resolution the players').
    let marked = game.first_fired.contains(id) || game.final_fired.contains(id);
    if w.fired && !(marked && game.clock.phase() == Phase::Movement) {
        let why = match ratings_rof(w) {
            Some(rof) => format!(" has fired this phase and did not keep its Multiple ROF: it fires again only after an IFT DR whose coloured dr is {rof} or less"),
            None => " has fired this phase and has no Multiple ROF (the scenario gives it none): it fires once a phase".to_string(),
        };
        return refuse("A9.2", ViolationKind::UnitState, pieces![given(), why]);
    }
    Ok(holder)
}

/// The Multiple ROF the scenario gives a weapon (A9.2), if any.
fn ratings_rof(w: &game::Weapon) -> Option<u8> {
    w.ratings.and_then(|r| r.rof)
}

/// Who carries a Fire counter: a firing unit, or a support weapon, whose counter is its own
/// apart from its possessor's (A8.1) and which fires from its possessor's hex with its own
/// normal range (A9.1).
struct Marked<'a> {
    id: &'a str,
    name: Piece,
    from: Hex,
    normal: Option<u32>,
}

impl<'a> Marked<'a> {
    fn unit(firer: &'a game::Unit) -> Self {
        Marked {
            id: &firer.id,
            name: Piece::unit(&firer.id),
            from: firer.hex,
            normal: resolution::normal_range(firer),
        }
    }

    /// `None` when the weapon or its possessor is gone, which `check_weapon` refuses first.
    fn weapon(game: &Game, weapon: &'a str, holder: &UnitId) -> Option<Self> {
        Some(Marked {
            id: weapon,
            name: Piece::Given(weapon.to_string()),
            from: game.units.get(holder)?.hex,
            normal: game
                .weapons
                .get(weapon)?
                .ratings
                .map(|r| u32::from(r.range)),
        })
    }
}

/// What a Fire counter leaves a unit or a support weapon (`Marked`), the one check for both.
/// The ATTACKER's units that fired in the PFPh are marked Prep Fire and fire no more that
/// Player Turn — not again in the PFPh, nor in the AFPh (A7.1, A3.5); one that fired in the
/// AFPh is marked the same way (a weapon's Prep Fire is its possessor's, checked with it). In
/// the PFPh what counts is whether the unit's own FP fired (`usage::fired_own_fp`, from the
/// record of the phase's attacks): one whose SW alone fired fires its own FP in another attack.
/// The DEFENDER's (A8.1, A8.3, A8.31, A8.4): in the MPh what is marked First Fire fires again
/// only as Subsequent First Fire, at a target within its normal range; what is marked Final
/// Fire only as Final Protective Fire, at a target adjacent or in the hex it fires from. In
/// the DFPh what is marked First Fire fires only at adjacent units or those in the hex it
/// fires from, and what is marked Final Fire does not fire.
fn check_fire_counters(game: &Game, marked: &Marked, target: Hex) -> Result<(), RuleViolation> {
    let id = marked.id;
    let phase = game.clock.phase();
    let range = game.scenario.geometry().distance(marked.from, target);
    let refuse = |rule: &str, why: String| {
        Err(RuleViolation::with(
            rule,
            ViolationKind::UnitState,
            pieces![marked.name.clone(), why],
        ))
    };
    let first = game.first_fired.contains(id);
    let last = game.final_fired.contains(id);
    match phase {
        Phase::Movement if last => match range {
            Some(0 | 1) => Ok(()),
            _ => refuse(
                "A8.31",
                format!(" is marked Final Fire: it fires again this MPh only as Final Protective Fire, at a moving unit adjacent or in the hex it fires from, and {target} is farther"),
            ),
        },
        Phase::Movement if first => match (range, marked.normal) {
            (Some(r), Some(n)) if r > n => refuse(
                "A8.3",
                format!(" is marked First Fire: Subsequent First Fire reaches only its normal range of {n}, and {target} is {r} hexes away"),
            ),
            _ => Ok(()),
        },
        // In the PFPh a unit's own FP fires once; a unit marked Prep Fire by its SW's fire
        // alone still fires its own FP, in another attack (A9.11, A7.53).
        Phase::PrepFire if crate::fire::usage::fired_own_fp(game, id) => refuse(
            "A7.1",
            " is marked Prep Fire: its own FP has fired in this PFPh already, and a unit fires in only one fire phase of a Player Turn, once".to_string(),
        ),
        Phase::AdvancingFire if game.prep_fired.contains(id) => refuse(
            "A7.1",
            " is marked Prep Fire: it has fired in this Player Turn already, and a unit fires in only one fire phase of a Player Turn, once".to_string(),
        ),
        Phase::DefensiveFire if last => refuse(
            "A8.4",
            " is marked Final Fire and fires no more this Player Turn".to_string(),
        ),
        Phase::DefensiveFire if first => match range {
            Some(0 | 1) => Ok(()),
            _ => refuse(
                "A8.4",
                format!(" is marked First Fire: in the DFPh it fires only at units adjacent or in the hex it fires from, and {target} is farther"),
            ),
        },
        _ => Ok(()),
    }
}

/// The units of the stack moving now (A4.2) that are in `hex`: the only ones Defensive First
/// Fire may attack (A8.1). A stack that stopped, or that another unit's move has ended, is no
/// longer moving, nor is a pinned or broken unit its stack left behind (`Game::moving_now`).
/// Hidden units are not counted: the firer does not know them.
pub(crate) fn moving_in(game: &Game, by: Side, hex: Hex) -> Vec<&game::Unit> {
    game.units_above(hex)
        .filter(|u| u.side != by && !u.hidden && game.moving_now(u))
        .collect()
}

/// Whether an enemy stack the firer's side sees is moving above ground now (A4.2).
fn moving_above_ground(game: &Game, by: Side) -> bool {
    let record = &game.movement;
    record
        .moving_stack
        .iter()
        .filter(|id| !record.finished.contains(*id))
        .filter_map(|id| game.units.get(id))
        .any(|u| u.side != by && !u.hidden && !u.eliminated && u.underground.is_none())
}

/// A8.1: Defensive First Fire attacks only the stack that is moving, in the Location it is in
/// now; once it has moved on, or another unit has begun to move, that chance is gone. The
/// DEFENDER need not be asked at every hex: he may declare whenever the moving stack stands
/// where he wants to fire at it.
fn check_moving_target(game: &Game, by: Side, target: Hex) -> Result<(), RuleViolation> {
    if !moving_in(game, by, target).is_empty() {
        return Ok(());
    }
    let moving: Vec<&UnitId> = game
        .movement
        .moving_stack
        .iter()
        .filter(|id| {
            game.units
                .get(*id)
                .is_some_and(|u| !u.hidden && u.side != by && game.moving_now(u))
        })
        .collect();
    let why = if moving.is_empty() {
        pieces![format!(
            "no enemy stack is moving: Defensive First Fire attacks only the stack moving now, in the Location it is in, and none is in {target}"
        )]
    } else {
        let mut why = pieces!["Defensive First Fire attacks only the stack moving now ("];
        why.extend(Piece::units(moving));
        why.extend(pieces![format!(
            "), in the Location it is in, and it is not in {target}"
        )]);
        why
    };
    Err(RuleViolation::with("A8.1", ViolationKind::Geometry, why))
}

/// A8.3: Subsequent First Fire goes at no target farther than the closest Known enemy unit the
/// firer sees. Only unconcealed units count here; a concealed one closer is left to the
/// players when the attack is resolved (`resolution::assess`).
fn check_closest_known(
    game: &Game,
    by: Side,
    firers: &[UnitId],
    target: Hex,
) -> Result<(), RuleViolation> {
    let geometry = game.scenario.geometry();
    for id in firers {
        let Some(u) = game.units.get(id) else {
            continue;
        };
        if !game.first_fired.contains(id) || game.final_fired.contains(id) {
            continue;
        }
        let Some(range) = geometry.distance(u.hex, target) else {
            continue;
        };
        let closer = resolution::closer_enemies(game, by, u, range);
        if let Some(near) = closer.iter().find(|e| !e.concealed) {
            let at = geometry.distance(u.hex, near.hex).unwrap_or(0);
            return Err(RuleViolation::with(
                "A8.3",
                ViolationKind::Geometry,
                pieces![
                    Piece::unit(id),
                    format!(" is marked First Fire: Subsequent First Fire goes at no target farther than the closest Known enemy unit it sees, and one is {at} hexes away in {}, nearer than {target}", near.hex)
                ],
            ));
        }
    }
    Ok(())
}

/// Who may fire at what below ground (B8.2, B8.3, B8.43, B8.6): nobody in a tunnel fires or is
/// fired on; fire into a sewer comes only from units with a LOS to it — in the Manhole above a
/// discovered stack, or in an adjacent sewer Location — and never from a vehicle; a sewer
/// unit fires at the Manhole above it only in the AFPh after being discovered.
fn check_line_of_fire(
    game: &Game,
    firer: &game::Unit,
    target: Hex,
    into_sewer: bool,
) -> Result<(), RuleViolation> {
    let refuse =
        |rule: &str, why: Vec<Piece>| Err(RuleViolation::with(rule, ViolationKind::Geometry, why));
    let id = &firer.id;
    match (&firer.underground, into_sewer) {
        (Some(Underground::Tunnel), _) => refuse(
            "B8.6",
            pieces![Piece::unit(id), " is in a tunnel and sees no enemy unit"],
        ),
        (Some(Underground::Sewer { emergence, .. }), false) => {
            let allowed = firer.hex == target
                && game.clock.phase() == Phase::AdvancingFire
                && *emergence == Some(Emergence::Discovered);
            if allowed {
                Ok(())
            } else {
                refuse(
                    "B8.43",
                    pieces![Piece::unit(id), " in the sewer may attack only the Manhole Location above it, in the AFPh, after being discovered"],
                )
            }
        }
        (Some(Underground::Sewer { .. }), true) => {
            if game.scenario.geometry().is_adjacent(firer.hex, target) {
                Ok(())
            } else {
                refuse(
                    "B8.2",
                    pieces![Piece::unit(id), " sees only adjacent sewer Locations"],
                )
            }
        }
        (None, true) => {
            if firer.kind == board::scenario::UnitKind::Vehicle {
                return refuse(
                    "B8.3",
                    pieces![
                        Piece::unit(id),
                        " is a vehicle; vehicles never fire into a sewer"
                    ],
                );
            }
            let discovered = game.units_in(target).any(|u| {
                matches!(
                    u.underground,
                    Some(Underground::Sewer {
                        emergence: Some(Emergence::Discovered),
                        ..
                    })
                )
            });
            if firer.hex == target && discovered {
                Ok(())
            } else {
                refuse(
                    "B8.3",
                    pieces![Piece::unit(id), format!(" has no LOS into the sewer beneath {target}: only units in the Manhole above a discovered stack, or in an adjacent sewer Location, have one")],
                )
            }
        }
        (None, false) => Ok(()),
    }
}

/// A6.11: whether each firer has a LOS to an enemy unit it attacks in the target hex, traced
/// by the engine (`rules::los`). The LOS is checked only once the attack is declared; without
/// one the attack is not made, but the declaring units have still fired (`declare`).
fn sees(
    game: &Game,
    firers: &[UnitId],
    target: Hex,
    targets: &dyn Fn(&&game::Unit) -> bool,
) -> bool {
    use crate::los::{verdict_on, Spot};
    use board::los::{LosMap, Verdict};
    let enemies: Vec<&game::Unit> = game.units_in(target).filter(|u| targets(u)).collect();
    if enemies.is_empty() {
        return true; // refused for want of a target
    }
    let map = LosMap::of(&game.scenario);
    // Below ground, B8.2/B8.43 alone say who sees what (`check_line_of_fire`).
    firers
        .iter()
        .filter(|id| game.units.get(*id).is_some_and(|u| u.underground.is_none()))
        .all(|id| {
            let firer = Spot::Unit(id.clone());
            enemies.iter().any(|e| {
                verdict_on(game, map, &firer, &Spot::Unit(e.id.clone()))
                    .is_ok_and(|v| v != Verdict::Blocked)
            })
        })
}

/// Ends the side's declared attack. Where everything the attack needs is modelled, the engine
/// resolves it by the rules first (`fire::resolution`): the DR through the game's dice, logged
/// with its FP, column, DRMs and IFT result (A7.3). Otherwise it says why the outcome is the
/// players' to adjudicate (A7). Every check comes before the first die.
pub(super) fn resolve(
    game: &Game,
    by: Side,
    dice: &mut dyn DiceSource,
) -> Result<Vec<Event>, RuleViolation> {
    let Some(a) = game.attack.as_ref().filter(|a| a.by == by) else {
        return Err(RuleViolation::new(
            "A7",
            ViolationKind::WrongPhase,
            "this side has no declared attack to resolve",
        ));
    };
    let resolved = Event::AttackResolved(AttackResolved {
        by,
        target: a.target,
    });
    // A8.2: Defensive First Fire in the MPh leaves Residual FP where it struck, whoever
    // resolves it; the players determine how much when they resolve the attack.
    let first_fire = game.clock.phase() == Phase::Movement && !a.into_sewer;
    let named: Vec<UnitId> = a.firers.iter().chain(&a.weapons).cloned().collect();
    // A7.55: fire apart from an earlier attack at the same target, where whether the two could
    // have been one Fire Group is not the engine's to rule, is the players' — after what the
    // assessment leaves them (a "?" that fires, A12.14, says nothing of its units).
    let assessed = resolution::assess(game, by, &named, a.target, a.into_sewer).and_then(|a| {
        match crate::fire::mandatory::left_to_players(game) {
            Some(unruled) => Err(unruled),
            None => Ok(a),
        }
    });
    match assessed {
        Err(unruled) => {
            let mut events = vec![Event::AttackLeftToPlayers(AttackLeftToPlayers {
                by,
                target: a.target,
                rule: unruled.rule.to_string(),
                why: unruled.why,
            })];
            if first_fire {
                events.push(Event::ResidualFpLeft(ResidualFpLeft {
                    by,
                    hex: a.target,
                    fp: None,
                }));
            }
            events.push(resolved);
            Ok(events)
        }
        Ok(assessment) => {
            let fired = resolution::roll(game, by, &assessment, dice)
                .ok_or_else(|| no_dice("the attack"))?;
            let read = Event::IftAttackResolved(IftAttackResolved {
                by,
                target: a.target,
                fp: assessment.fp_words(),
                column: fired.column.fp(),
                cowered: fired.cowered,
                final_dr: fired.roll.final_result,
                result: fired.result.to_string(),
            });
            // A12.14: units under "?" that the result touches (a PTC or worse) lose it before
            // their checks, Dummies removed; on no effect they keep it, and the attack has told
            // the firer nothing of what the "?" hid.
            let revealed = (fired.result != IftResult::NoEffect)
                .then(|| crate::concealment::lost_to_attack(game, a.target, &assessment.fired_on))
                .flatten();
            let after_reveal = revealed.as_ref().map(|e| {
                let mut after = game.clone();
                game::apply(&mut after, e);
                after
            });
            let struck = after_reveal.as_ref().unwrap_or(game);
            let fired_on: Vec<UnitId> = assessment
                .fired_on
                .iter()
                .filter(|id| struck.units.get(*id).is_some_and(|u| !u.eliminated))
                .cloned()
                .collect();
            // The result's effects on the units fired on (`rules::morale`), their checks
            // rolled on after the IFT's dice.
            let first_draw = fired.roll.first_draw + fired.roll.dice.len() as u64;
            let effects = morale::fire_effects(
                struck,
                by,
                a.target,
                &fired_on,
                fired.result,
                first_draw,
                dice,
            )
            .map_err(|_| no_dice("the morale checks"))?;
            let original: u8 = fired.roll.dice.iter().sum();
            // A9.2: the coloured die is the DR's first (docs/dice.md).
            let coloured = fired.roll.dice[0];
            let ift_dice = [coloured, fired.roll.dice.get(1).copied().unwrap_or(0)];
            let (read_column, cowered) = (fired.column, fired.cowered);
            let fired_read = fired.clone();
            let mut events = vec![Event::DiceRolled(DiceRolled { roll: fired.roll }), read];
            events.extend(revealed);
            // A10.62: broken units attacked by fire that could inflict an NMC come under DM.
            events.extend(morale::desperation::attacked(
                game,
                by,
                a.target,
                &assessment,
            ));
            events.extend(effects);
            // A12.13: the "?" beside Known units is attacked apart, on its own column with the
            // same DR, once the Known units' effects are applied: its own reading, its "?" lost
            // to a PTC or worse (A12.14), its units' checks drawn after the Known units'.
            if let (Some(kind), Some((column, result))) = (
                assessment.concealed.as_ref(),
                resolution::read_concealed(&assessment, &fired_read),
            ) {
                events.push(Event::IftAttackResolved(IftAttackResolved {
                    by,
                    target: a.target,
                    fp: kind.fp_words(),
                    column: column.fp(),
                    cowered,
                    final_dr: fired_read.roll.final_result,
                    result: result.to_string(),
                }));
                let mut after = game.clone();
                for e in &events {
                    game::apply(&mut after, e);
                }
                let revealed = (result != IftResult::NoEffect)
                    .then(|| crate::concealment::lost_to_attack(&after, a.target, &kind.fired_on))
                    .flatten();
                if let Some(e) = &revealed {
                    game::apply(&mut after, e);
                }
                events.extend(revealed);
                let on: Vec<UnitId> = kind
                    .fired_on
                    .iter()
                    .filter(|id| after.units.get(*id).is_some_and(|u| !u.eliminated))
                    .cloned()
                    .collect();
                let known_effects = events.len();
                let effects = morale::fire_effects(
                    &after,
                    by,
                    a.target,
                    &on,
                    result,
                    next_draw(&events, first_draw),
                    dice,
                )
                .map_err(|_| no_dice("the morale checks"))?;
                // A10.2: a leader lost to one kind's attack owes the Leader Loss checks of the
                // other kind's units too, which the two attacks apart do not roll; said alike
                // whatever the "?" hides.
                let lost = |e: &Event| {
                    matches!(e, Event::FireEffectApplied(game::event::FireEffectApplied { unit, outcome: game::command::Outcome::Break | game::command::Outcome::Eliminate, .. })
                        if after.units.get(unit).or_else(|| game.units.get(unit)).is_some_and(|u| u.kind == board::scenario::UnitKind::Leader))
                };
                let leader_lost =
                    events[..known_effects].iter().any(lost) || effects.iter().any(lost);
                events.extend(effects);
                if leader_lost {
                    events.push(Event::FireEffectLeftToPlayers(FireEffectLeftToPlayers {
                        target: a.target,
                        unit: None,
                        rule: "A10.2".into(),
                        why: format!("a leader in {} was lost to the attack on the Known units or on the \"?\" (A12.13): the Leader Loss checks he owes the units of the other kind are the players' to roll", a.target),
                    }));
                }
            }
            // A9.7: an Original DR at or above a firing SW's B# malfunctions it once the
            // attack, which it still took part in, is resolved.
            for (weapon, holder, breakdown) in &assessment.breakdowns {
                if original >= *breakdown {
                    events.push(Event::WeaponMalfunctioned(WeaponMalfunctioned {
                        weapon: weapon.clone(),
                        holder: holder.clone(),
                        original_dr: original,
                        breakdown: *breakdown,
                    }));
                }
            }
            // A9.2: a weapon whose ROF the Original coloured dr does not exceed keeps its
            // Multiple ROF and may fire again this phase — unless it has just malfunctioned.
            let mut kept_rof = false;
            for (weapon, holder, rof) in &assessment.rofs {
                let broke = assessment
                    .breakdowns
                    .iter()
                    .any(|(w, _, b)| w == weapon && original >= *b);
                if coloured <= *rof && !broke {
                    kept_rof = true;
                    events.push(Event::MultipleRofRetained(MultipleRofRetained {
                        weapon: weapon.clone(),
                        holder: holder.clone(),
                        coloured_dr: coloured,
                        rof: *rof,
                    }));
                }
            }
            if assessment.kind == resolution::FireKind::FinalProtective {
                // A8.31: once the FPF has done its work on the moving units, its Original DR
                // is an NMC for each unit that fired it — the leader directing it and the
                // possessor of a MG in Sustained Fire too — taken in that order after their
                // checks, drawing no die (a wound's dr is drawn after the targets').
                let holders = a.weapons.iter().filter_map(|w| {
                    game.weapons
                        .get(w)
                        .and_then(|w| w.held_by.clone())
                        .filter(|h| !a.firers.contains(h))
                });
                let mut checkers: Vec<UnitId> = vec![];
                for id in a.firers.iter().cloned().chain(holders) {
                    if !checkers.contains(&id) {
                        checkers.push(id);
                    }
                }
                let drawn = next_draw(&events, first_draw);
                events.extend(
                    morale::final_protective_fire(game, by, &checkers, ift_dice, drawn, dice)
                        .map_err(|_| no_dice("the FPF's checks"))?,
                );
            }
            if first_fire {
                let fp = match resolution::residual_fp(&assessment, read_column, cowered, kept_rof)
                {
                    resolution::ResidualLeft::Fp(fp) => Some(Some(fp)),
                    resolution::ResidualLeft::Players => Some(None),
                    resolution::ResidualLeft::Nothing => None,
                };
                if let Some(fp) = fp {
                    events.push(Event::ResidualFpLeft(ResidualFpLeft {
                        by,
                        hex: a.target,
                        fp,
                    }));
                }
            }
            events.push(resolved);
            Ok(events)
        }
    }
}

/// The draw number of the next die after `events`: past the last die a `DiceRolled` among
/// them drew, or `first` when they drew none.
fn next_draw(events: &[Event], first: u64) -> u64 {
    events
        .iter()
        .filter_map(|e| match e {
            Event::DiceRolled(DiceRolled { roll }) => {
                Some(roll.first_draw + roll.dice.len() as u64)
            }
            _ => None,
        })
        .max()
        .unwrap_or(first)
}

/// Offline the dice are the script's: none left for what the resolution must roll.
fn no_dice(what: &str) -> RuleViolation {
    RuleViolation::new(
        "docs/dice.md",
        ViolationKind::NoDice,
        format!("no dice: offline, add a `dice` line with enough faces for {what} before resolving the attack"),
    )
}

/// A8.2: the attack of the enemy's Residual FP in `to` on the units `entering` it, once their
/// entry (`entry`, the events that put them there) is decided. It is an attack on the IFT like
/// any other: the column of the Residual FP (the highest column not above it, A7.3), the
/// entering units' in-hex TEM, or FFMO in Open Ground, and FFNAM unless every one Assault
/// Moves (A4.6, [RF]); a DR through the game's dice, read by the one reading of every attack on
/// the IFT (`resolution::read_ift`), rolled in the name of the side that entered (its command
/// rolls it); its effects by the same code as any attack's
/// (`morale::fire_effects`), on the entering units alone. It has no firer, so nothing of
/// a firer's applies: no Cowering (A7.9), no leader's direction, no LOS or Hindrance. What the
/// engine does not rule on here is asked of the players, as before: the Residual FP's own
/// amount when they determined it, a concealed mover, a fortification, a wall, hedge or bocage
/// hexside of the hex (its TEM depends on a direction of fire Residual FP does not have), an
/// upper level, terrain of no positive TEM that is not Open Ground, a stack only partly
/// Assault Moving. `None` of it where the enemy left no Residual FP in `to`.
pub(crate) fn residual_fp_attack(
    game: &Game,
    mover: Side,
    entering: &[UnitId],
    to: Hex,
    entry: &[Event],
    dice: &mut dyn DiceSource,
) -> Result<Vec<Event>, RuleViolation> {
    let Some(residual) = game.residual_fp.get(&to).filter(|r| r.by != mover) else {
        return Ok(vec![]);
    };
    let names = crate::listed(entering);
    let mut after = game.clone();
    for e in entry {
        game::apply(&mut after, e);
    }
    let targets: Vec<&game::Unit> = entering
        .iter()
        .filter_map(|id| after.units.get(id))
        .collect();
    let (fp, column, drms) = match residual_terms(&after, residual.fp, to, &targets) {
        Ok(terms) => terms,
        Err(NotRuled(why)) => {
            let fp = residual.fp.map_or_else(
                || "as the players determined it".to_string(),
                |fp| format!("of {fp}"),
            );
            return Ok(vec![Event::FireEffectLeftToPlayers(FireEffectLeftToPlayers {
                target: to,
                unit: None,
                rule: "A8.2".into(),
                why: format!(
                    "the Residual FP {fp} in {to} attacks {names} as they enter it; the engine does not resolve that attack: {why}"
                ),
            })]);
        }
    };
    let no_dice = || no_dice("the Residual FP's attack and its checks");
    // A8.2: read as any attack is (`resolution::read_ift`), with no firer and so no Cowering.
    let attack = resolution::IftAttack {
        rule: "A8.2",
        strength: format!("Residual FP {fp}"),
        against: format!("{names} entering {to}"),
        column,
        drms: &drms,
        cower_columns: None,
    };
    let resolution::Resolved {
        roll,
        column,
        result,
        ..
    } = resolution::read_ift(game, mover, &attack, dice).ok_or_else(no_dice)?;
    let final_dr = roll.final_result;
    let first_draw = roll.first_draw + roll.dice.len() as u64;
    let effects = morale::fire_effects(&after, mover, to, entering, result, first_draw, dice)
        .map_err(|_| no_dice())?;
    let mut events = vec![
        Event::DiceRolled(DiceRolled { roll }),
        Event::IftAttackResolved(IftAttackResolved {
            by: residual.by,
            target: to,
            fp: fp.to_string(),
            column: column.fp(),
            cowered: false,
            final_dr,
            result: result.to_string(),
        }),
    ];
    events.extend(effects);
    Ok(events)
}

/// Why the engine leaves a Residual FP attack to the players, in words.
struct NotRuled(String);

impl From<&str> for NotRuled {
    fn from(why: &str) -> NotRuled {
        NotRuled(why.to_string())
    }
}

impl From<String> for NotRuled {
    fn from(why: String) -> NotRuled {
        NotRuled(why)
    }
}

/// What a Residual FP attack on `targets`, now in `to`, is read with (A8.2): the FP, the IFT
/// column and the DRMs; or why the engine leaves it to the players.
fn residual_terms(
    game: &Game,
    fp: Option<u8>,
    to: Hex,
    targets: &[&game::Unit],
) -> Result<(u8, crate::fire::ift::IftColumn, Vec<game::dice::Modifier>), NotRuled> {
    use board::terrain::Terrain;
    use game::dice::Modifier;
    let fp = fp.ok_or("how much Residual FP it is was left to the players")?;
    let column = crate::fire::ift::IftColumn::for_fp(u32::from(fp))
        .ok_or("less than 1 FP is off the IFT")?;
    if targets.is_empty() || targets.iter().any(|t| t.concealed || t.hidden) {
        // Concealment does not halve Residual FP (A12.13's exception); its reveal and effects
        // on units entering under "?" are not built here (the A7.23 row).
        return Err("a concealed unit among them (Residual FP at a \"?\", not halved by A12.13's exception, is not ruled here)".into());
    }
    if targets
        .iter()
        .any(|t| game.upper_level(t).is_some() || t.bypass.is_some())
    {
        return Err("a unit on an upper level or in Bypass".into());
    }
    // A5.13: fire at an overstacked Location is the players', by a firer or by Residual FP.
    if targets.iter().any(|t| resolution::overstacked(game, t)) {
        return Err("the Location is overstacked (A5.13)".into());
    }
    let spec = game
        .scenario
        .hexes
        .get(&to)
        .ok_or("the hex is not on the map")?;
    if !spec.fortifications.is_empty() || spec.unmodelled.is_some() {
        return Err(
            "the hex holds a fortification or terrain the terrain table has no row for".into(),
        );
    }
    if game
        .scenario
        .hexsides
        .keys()
        .any(|side| side.a == to || side.b == to)
    {
        return Err(
            "a wall, hedge or bocage hexside of the hex, whose TEM depends on a direction of fire Residual FP does not have"
                .into(),
        );
    }
    let row = spec.terrain.row();
    // The in-hex TEM as any attack on the units reads it (`tem::in_hex_direct`, with no firer):
    // shellholes entered at Open Ground cost are Open Ground against the DEFENDER's fire in the
    // MPh (B2), Residual FP's as a firer's, and so take FFMO.
    let tems: Vec<i8> = targets
        .iter()
        .map(|t| crate::tem::in_hex_direct(game, &[], t, &mut vec![]))
        .collect();
    let tem = tems[0];
    if tems.iter().any(|t| *t != tem) {
        return Err("the entering units do not all have the same in-hex TEM".into());
    }
    let open =
        spec.terrain == Terrain::OpenGround || (spec.terrain == Terrain::Shellholes && tem <= 0);
    let mut drms = vec![];
    match tem {
        tem if tem > 0 => drms.push(Modifier {
            value: tem,
            reason: format!("TEM: in-hex TEM {tem} ({} {})", row.name, row.rule),
            rule: row.rule.to_string(),
        }),
        0 if open => drms.push(Modifier {
            value: -1,
            reason: format!("FFMO: entering the Open Ground of {to}"),
            rule: "A4.6".into(),
        }),
        0 if resolution::negates_ffmo(spec.terrain) => {}
        _ => {
            return Err(format!(
                "{} has no positive TEM and is not Open Ground: whether FFMO applies is not ruled by the engine",
                row.name
            )
            .into())
        }
    }
    drms.extend(
        crate::fire::resolution::ffnam(targets)
            .map_err(|_| "only some of the entering units use Assault Movement")?,
    );
    Ok((fp, column, drms))
}

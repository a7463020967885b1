//! Mandatory Fire Groups (A7.55): units and weapons of one Location that fire at the same
//! target in the same phase fire as one Fire Group. Checked when an attack is declared
//! (`attack::declare`), against the Player Turn's record of attacks (`Game::fire_record`,
//! written by `AttackDeclared` alone), and once more as it is resolved (`attack::resolve`) for
//! what the engine cannot tell.
//!
//! - The same target is the same Location (a sewer beneath a hex is another, B8.3) in the same
//!   phase; in the MPh it is also the same moving units at the same "simultaneous" MF
//!   expenditure (A8.1): the record keeps each struck mover with the MF it had spent in the
//!   MPh, which every expenditure raises, so a unit struck again at the same count is struck
//!   at the same expenditure. The MPh and the DFPh are two phases here.
//! - A member of an attack is a unit firing its own FP or a support weapon; a leader named
//!   only to direct is not one (A7.531: he adds no FP). A member that was not in an earlier
//!   attack at the same target in the phase, while a member of that attack stands in its
//!   Location, could have fired with it, and firing apart is refused, naming that attack.
//! - Excepted, as A7.55 itself says: a FT or DC fires apart; a weapon that fired earlier in
//!   the phase and kept its Multiple ROF (A9.2) fires its later shots apart; a unit or weapon
//!   firing again at the same target (Subsequent First Fire, FPF, Sustained Fire) is the
//!   A8.3 limit's concern, not this rule's. Fire Lanes (the rule's other exception) are not
//!   modelled.
//! - Left to the players (`AttackLeftToPlayers`, A7.55), where whether the two could have been
//!   one Fire Group turns on what the engine does not rule: a SW fired by an SMC (a leader's
//!   MG in a Fire Group with other units' fire is the A9.12 row's, the players'), and a SW
//!   that is neither a MG nor a FT or DC (ordnance fires apart, A7.51, and the engine does not
//!   tell ordnance from other SW).
//!
//! Nothing here reads what the firing side may not see: its own units and weapons, the target
//! hex, and in the MPh the moving units it watched spend their MF. The words given to the
//! enemy when an attack is left to the players name no unit.
//!
//! Sources: [LDR] (A7.55 whole: same Location, same unit, same MF expenditure, same phase;
//! Fire Lanes excepted; ordnance, FT, DC and a Multiple ROF weapon's later shots fire apart),
//! [MFG] (the paragraph's opening: Good Order units of one Location at the same target in the
//! same phase form one Fire Group; its change by errata), [LDF] (a Location's units fire at a
//! target once a phase, in the MPh once an MF expenditure), named in the A7.55 row of
//! `docs/rules-coverage.md`.

use super::resolution::Unruled;
use crate::violation::{pieces, Piece, RuleViolation, ViolationKind};
use board::hex::Hex;
use board::scenario::{Side, UnitId};
use board::terrain::Mf;
use game::{FiredAttack, Game, Unit};

/// One member of an attack: a unit firing its own FP, or a support weapon.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Member<'a> {
    Own(&'a UnitId),
    Weapon(&'a String),
}

/// What a member's fire is to A7.55.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Grouping {
    /// Joins a Fire Group as any fire does.
    Joins,
    /// A FT or DC: fires apart (A7.55's exception).
    Apart,
    /// Whether it joins a Fire Group the engine does not rule (an SMC's SW, A9.12; a SW that
    /// may be ordnance, A7.51).
    Unknown,
}

impl<'a> Member<'a> {
    /// The unit firing it: the unit itself, or the weapon's possessor.
    fn unit(self, game: &'a Game) -> Option<&'a Unit> {
        match self {
            Member::Own(id) => game.units.get(id),
            Member::Weapon(w) => game.units.get(game.weapons.get(w)?.held_by.as_ref()?),
        }
    }

    fn grouping(self, game: &Game) -> Grouping {
        let Member::Weapon(w) = self else {
            return Grouping::Joins;
        };
        let Some(weapon) = game.weapons.get(w) else {
            return Grouping::Unknown;
        };
        let name = weapon.name.trim().to_ascii_uppercase();
        if name == "FT" || name == "DC" {
            Grouping::Apart
        } else if !super::usage::is_mg(&name) || self.unit(game).is_some_and(|u| u.kind.is_smc()) {
            Grouping::Unknown
        } else {
            Grouping::Joins
        }
    }

    fn in_attack(self, attack: &FiredAttack) -> bool {
        match self {
            Member::Own(id) => attack.firers.contains(id),
            Member::Weapon(w) => attack.weapons.contains(w),
        }
    }

    fn piece(self) -> Piece {
        match self {
            Member::Own(id) => Piece::unit(id),
            Member::Weapon(w) => Piece::Given(w.clone()),
        }
    }
}

/// The members of an attack: the units named among its firers that fire their own FP (a
/// leader only directs, A7.531: `fire::fires_own_fp`), and its support weapons.
fn members<'a>(game: &'a Game, firers: &'a [UnitId], weapons: &'a [String]) -> Vec<Member<'a>> {
    super::own_fp_firers(game, firers)
        .map(Member::Own)
        .chain(weapons.iter().map(Member::Weapon))
        .collect()
}

/// An attack about to be made, as A7.55 compares it with those before it.
struct Attack<'a> {
    firers: &'a [UnitId],
    weapons: &'a [String],
    target: Hex,
    into_sewer: bool,
    movers: &'a [(UnitId, Mf)],
}

/// What A7.55 says of an attack.
enum Verdict<'a> {
    /// Its member could have fired in that earlier attack, and fires apart from it.
    Apart(Member<'a>, &'a FiredAttack),
    /// Whether it could have is not ruled by the engine.
    Unknown,
}

/// Whether `earlier` fired at the target `attack` fires at (A7.55): the same Location in the
/// same phase and, at a moving stack, a unit struck at the same MF expenditure (A8.1).
fn same_target(game: &Game, earlier: &FiredAttack, attack: &Attack<'_>) -> bool {
    earlier.phase == game.clock.phase()
        && earlier.target == attack.target
        && earlier.into_sewer == attack.into_sewer
        && (earlier.movers.is_empty() && attack.movers.is_empty()
            || earlier.movers.iter().any(|m| attack.movers.contains(m)))
}

/// What A7.55 says of `attack` against the `earlier` attacks of the Player Turn: the first of
/// its members that could have fired in an earlier attack at the same target and fires apart
/// from it; else whether some member's place in such an attack is not the engine's to rule.
fn judge<'a>(
    game: &'a Game,
    attack: &Attack<'a>,
    earlier: &'a [FiredAttack],
) -> Option<Verdict<'a>> {
    let phase = game.clock.phase();
    let now = members(game, attack.firers, attack.weapons);
    let mut unknown = false;
    for before in earlier.iter().filter(|e| same_target(game, e, attack)) {
        let then = members(game, &before.firers, &before.weapons);
        for &member in &now {
            if member.in_attack(before) {
                continue; // its own fire again: A8.3's count, not this rule's
            }
            if let Member::Weapon(w) = member {
                // A9.2: a weapon's later shots on its Multiple ROF fire apart; once it lost
                // the ROF, firing again (Sustained Fire) is no later shot of it.
                let fired_before = earlier
                    .iter()
                    .any(|e| e.phase == phase && e.weapons.contains(w));
                if fired_before && !game.first_fired.contains(w) && !game.final_fired.contains(w) {
                    continue;
                }
            }
            let grouping = member.grouping(game);
            if grouping == Grouping::Apart {
                continue;
            }
            let Some(unit) = member.unit(game) else {
                continue;
            };
            let beside: Vec<Grouping> = then
                .iter()
                .filter(|m| m.unit(game).is_some_and(|u| game.same_location(u, unit)))
                .map(|m| m.grouping(game))
                .filter(|g| *g != Grouping::Apart)
                .collect();
            if beside.is_empty() {
                continue;
            }
            if grouping == Grouping::Unknown || beside.contains(&Grouping::Unknown) {
                unknown = true;
                continue;
            }
            return Some(Verdict::Apart(member, before));
        }
    }
    unknown.then_some(Verdict::Unknown)
}

/// The check at the declaration: an attack whose unit or weapon could have fired in an
/// earlier attack at the same target in this phase, from the same Location, is refused,
/// naming that attack. What the engine cannot tell is accepted here and left to the players
/// when the attack is resolved (`left_to_players`).
pub(crate) fn check(
    game: &Game,
    by: Side,
    firers: &[UnitId],
    weapons: &[String],
    target: Hex,
    into_sewer: bool,
) -> Result<(), RuleViolation> {
    let movers = game.movers_struck(by, target, into_sewer);
    let attack = Attack {
        firers,
        weapons,
        target,
        into_sewer,
        movers: &movers,
    };
    let Some(Verdict::Apart(member, before)) = judge(game, &attack, &game.fire_record) else {
        return Ok(());
    };
    let mut earlier = pieces!["the attack by "];
    let named = before
        .firers
        .iter()
        .map(|id| Piece::unit(id))
        .chain(before.weapons.iter().map(|w| Piece::Given(w.clone())));
    for (i, piece) in named.enumerate() {
        if i > 0 {
            earlier.push(Piece::Text("+".into()));
        }
        earlier.push(piece);
    }
    let expenditure = if before.movers.is_empty() {
        ""
    } else {
        ", at the same MF expenditure of the moving units"
    };
    Err(RuleViolation::with(
        "A7.55",
        ViolationKind::UnitState,
        pieces![
            member.piece(),
            " shares a Location with a firer of ",
            earlier,
            format!(
                " at {target} earlier in this phase{expenditure}: units and weapons of one Location that fire at the same target in the same phase fire as one Fire Group (only a FT, a DC or a MG's later shots on its Multiple ROF fire apart)"
            )
        ],
    ))
}

/// The check as the attack declared is resolved: `Some` when whether its units or weapons
/// could have fired in an earlier attack at the same target is not ruled by the engine (an
/// SMC's SW, a SW that may be ordnance). The words name no unit: the enemy reads them.
pub(crate) fn left_to_players(game: &Game) -> Option<Unruled> {
    let (current, earlier) = game.fire_record.split_last()?;
    let attack = Attack {
        firers: &current.firers,
        weapons: &current.weapons,
        target: current.target,
        into_sewer: current.into_sewer,
        movers: &current.movers,
    };
    matches!(judge(game, &attack, earlier), Some(Verdict::Unknown)).then(|| Unruled {
        rule: "A7.55",
        why: "units or weapons of one Location fire at a target they fired at apart earlier in this phase; whether they could have been one Fire Group (a SW fired by a leader, a SW that may be ordnance) is not ruled by the engine".into(),
    })
}

/// The units of `firers` that are members of a Fire Group by their own FP.
#[cfg(test)]
pub(super) fn members_of<'a>(game: &'a Game, firers: &'a [UnitId]) -> Vec<&'a UnitId> {
    members(game, firers, &[])
        .into_iter()
        .filter_map(|m| match m {
            Member::Own(id) => Some(id),
            Member::Weapon(_) => None,
        })
        .collect()
}

//! Entering a Location: the one act that `move` (A4), Bypass into a hex (A4.3), `enter` from
//! off board (A2.51), `advance` in the APh (A4.7), a rout (A10.5) and a withdrawal from Melee
//! (A11.2) all are, so
//! all check the same things in the same order — terrain and fortifications the engine does
//! not model, Known enemy units (A4.14), vehicles, overstacking (A5.11), MF and their sources
//! (A4.1, A4.12, A4.42) and concealed or hidden enemy units that stop the entry (A12.15). Each command adds only what its own rule adds: `move` the step
//! from an adjacent hex, the leaving of Bypass and of fortifications; `enter` its edge and
//! Turn, and its cost from off board.

use super::step::lose_wall_advantage;
use super::{pay, refuse_vehicles, Allowance};
use crate::violation::{pieces, Piece, RuleViolation, ViolationKind};
use board::hex::Hex;
use board::scenario::{Side, Stack, UnitId, UnitKind};
use board::terrain::{HexsideFeature, Mf};
use game::event::UnitEntryBlocked;
use game::event::{Event, MfAccount, MoveCost, WaLoss};
use game::{Game, Unit};

/// What entering a Location comes to once every check has passed.
pub(crate) struct Entry {
    /// The cost, overstacking included.
    pub cost: MoveCost,
    /// Each mover's MF after paying it.
    pub mf: Vec<MfAccount>,
    /// Concealed or hidden enemy units in the Location: the real ones as they show once
    /// revealed, and the dummies removed (A12.15). Empty when nothing stops the entry.
    pub revealed: Vec<Unit>,
    pub dummies_removed: Vec<UnitId>,
    /// The enemy's Residual FP in the Location, which attacks the units entering it (A8.2): the
    /// commands that enter in the MPh (`move`, Bypass, `enter`) resolve its attack after their entry
    /// (`attack::residual_fp_attack`), so no entry into Residual FP is free. `false` where
    /// there is none.
    pub residual: bool,
}

impl Entry {
    /// Whether concealed or hidden enemy units stopped the movers (A12.15).
    pub fn stopped(&self) -> bool {
        !self.revealed.is_empty() || !self.dummies_removed.is_empty()
    }

    /// The events of an entry that concealed or hidden enemy units stopped (A12.15), whichever
    /// command it was: the real ones are revealed, dummies removed, and the movers stay where
    /// they were (`from`; off board, for an entry from there, `from` is `to`) with their MF
    /// spent. WA went when they started to leave (B9.41).
    pub fn blocked(self, units: &[&Unit], ids: &[UnitId], from: Hex, to: Hex) -> Vec<Event> {
        let mut events = lose_wall_advantage(units, from, to, WaLoss::ExitFailed);
        events.push(Event::UnitEntryBlocked(UnitEntryBlocked {
            units: ids.to_vec(),
            from,
            to,
            revealed: self.revealed,
            dummies_removed: self.dummies_removed,
            cost: self.cost,
            mf: self.mf,
        }));
        events
    }
}

/// Terrain of `to` the engine has no figures for: refused as not modelled by every command
/// that would put a unit there, rather than entered at a guessed cost.
pub(crate) fn check_hex_modelled(game: &Game, to: Hex) -> Result<(), RuleViolation> {
    let Some(spec) = game.scenario.hexes.get(&to) else {
        return Err(RuleViolation::new(
            "A4",
            ViolationKind::Geometry,
            format!("{to} is not on this scenario's map"),
        ));
    };
    if spec.rubble || spec.blaze {
        let (rule, what) = if spec.rubble {
            ("B24", "rubble")
        } else {
            ("B25", "a Blaze")
        };
        return Err(RuleViolation::new(
            rule,
            ViolationKind::NotModelled,
            format!("{to} holds {what}; putting a unit there (by movement or at set-up) is not modelled by this engine"),
        ));
    }
    if spec.water_obstacle {
        return Err(RuleViolation::new(
            "B21",
            ViolationKind::NotModelled,
            format!("{to} is a Water Obstacle; putting a unit there (by movement or at set-up) is not modelled by this engine"),
        ));
    }
    if let Some(name) = &spec.unmodelled {
        return Err(RuleViolation::new(
            "B1",
            ViolationKind::NotModelled,
            format!("{to}'s board shows VASL's `{name}`, a terrain the engine's terrain chart has no row for; putting a unit there is not modelled"),
        ));
    }
    Ok(())
}

/// What every command that takes units out of their Location checks of where they are
/// (`move`, Bypass, going down a Manhole, into a tunnel, routing through one): a place the
/// engine has no figures for leaving — a fortification (B27, B30, B26, B6), Column/Convoy
/// (E11), an upper level of a building (B23.42) — is refused as not modelled.
pub(crate) fn check_leaving(game: &Game, units: &[&Unit]) -> Result<(), RuleViolation> {
    crate::fortification::check_leave(game, units)?;
    check_level(game, units)
}

/// Units on an upper level of a building (A5.1: a Location of its own) leave it only by the
/// building's stairs and levels (B23.42), which the engine does not model: a step from there
/// into the next hex is refused as not modelled, never played as a step from ground level.
fn check_level(game: &Game, units: &[&Unit]) -> Result<(), RuleViolation> {
    if let Some(up) = units.iter().find(|u| game.upper_level(u).is_some()) {
        return Err(RuleViolation::with(
            "B23.42",
            ViolationKind::NotModelled,
            pieces![
                Piece::unit(&up.id),
                " is on an upper level of its building; moving between levels and out of one is not modelled by this engine"
            ],
        ));
    }
    Ok(())
}

/// What every command that puts a unit into `to` checks of the Location itself, whatever its
/// way in: terrain (`check_hex_modelled`) and fortifications (B26, B30, G9, B6) the engine has
/// no figures for are refused as not modelled. `move`, Bypass, `enter` and `advance` check it
/// within `enter_location`; coming up from below (`surface`, B8.42, B8.61), going into a
/// tunnel whose exit is there (B8.61), routing through one (B8.62) and set-up placement
/// (A12.12) check it alone, since their own rules replace the rest of the act.
pub(crate) fn check_enterable(game: &Game, to: Hex) -> Result<(), RuleViolation> {
    check_hex_modelled(game, to)?;
    crate::fortification::check_enter(game, to)
}

/// The phase's way of entering a Location: what differs between them is only the rules each
/// phase adds to the one act.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Act {
    /// Movement in the MPh, or entry from off board: MF are paid (A4.1), a Known enemy's
    /// Location is barred (A4.14), concealed enemies stop the entry (A12.15).
    Move,
    /// The one-Location advance of the APh (A4.7): no MF are paid (the command applies
    /// A4.72's Difficult Terrain test instead, to the cost with any overstacking, A5.11), and
    /// a Location holding enemy units may be
    /// entered — that is how Close Combat comes about (A4.14 bars only the MPh; A11.1).
    /// Concealed and hidden enemies stay as they are until the CCPh (A12.14).
    Advance,
    /// A withdrawal from Melee in the CCPh (A11.2): into an ADJACENT Location the units could
    /// advance into (so as `Advance`, A4.72's test included), but never one holding a Known
    /// enemy unit. A concealed enemy there is refused as not modelled, whatever is under its
    /// "?"; a hidden one is not looked for, since a refusal would tell where it is.
    Withdraw,
    /// A broken unit's rout in the RtPh (A10.5): six MF of its own (`Allowance::Rout`), a Known
    /// enemy's Location barred (the rout's own A10.51 refuses it first), concealed enemies stop
    /// the entry as they stop a mover.
    Rout,
    /// Bypass into a woods or building hex in the MPh (A4.3): MF are paid as for a move and
    /// the enemy's Residual FP there attacks the units (A8.2), as it attacks any entry. What
    /// Bypass changes is the command's own, ruled before: a Known enemy anywhere in the
    /// obstacle bars it (A4.3, in place of A4.14). The units stand along a hexside, not with
    /// those in the hex's middle (`check_together`), so they overstack nothing (A5.11), and
    /// concealed enemy units in the obstacle do not stop them: A4.33 has them lose "?" as the
    /// MPh ends (`UnitBypassed` records them, `concealment::lost_by_bypass` reveals them).
    Bypass,
}

/// The act of entering `to`: `units` (the stack `ids`, in the player's order) pay `cost`,
/// which the command worked out for its own way in. `units` are the game's own units; a
/// command whose units are not on the map yet (`enter`) passes a game they have been added to.
pub(crate) fn enter_location(
    game: &Game,
    by: Side,
    units: &[&Unit],
    ids: &[UnitId],
    to: Hex,
    cost: MoveCost,
    act: Act,
) -> Result<Entry, RuleViolation> {
    check_enterable(game, to)?;
    match act {
        Act::Advance | Act::Bypass => {}
        Act::Withdraw => check_withdrawal_into(game, by, to)?,
        Act::Move | Act::Rout => check_known_enemy(game, by, units, to)?,
    }
    refuse_vehicles(game, units, cost.hexside == Some(HexsideFeature::Bocage))?;
    // A5.11: every entry into a Location the side overstacks is charged the same, in whatever
    // phase — in the APh the extra MF count toward A4.72's Difficult Terrain (the A5.11 EX: a
    // squad advancing into a building overstacked by 1½ squads faces four MF and becomes CX).
    // Units in Bypass stand along a hexside and overstack nothing.
    let cost = if act == Act::Bypass {
        cost
    } else {
        with_overstacking(game, by, units, to, cost)
    };
    if matches!(act, Act::Advance | Act::Withdraw) {
        return Ok(Entry {
            cost,
            mf: vec![],
            revealed: vec![],
            dummies_removed: vec![],
            residual: false,
        });
    }
    let allowance = if act == Act::Rout {
        Allowance::Rout
    } else {
        Allowance::Move(ids)
    };
    let mf = pay(game, units, allowance, &cost, to)?;
    let residual = game.residual_fp.get(&to).is_some_and(|r| r.by != by);
    if act == Act::Bypass {
        return Ok(Entry {
            cost,
            mf,
            revealed: vec![],
            dummies_removed: vec![],
            residual,
        });
    }
    // Units in the sewer beneath are in a Location of their own (B8.2): they bar nothing; nor
    // do units on an upper level of a building (A5.1), since movers enter its ground level.
    let lurking: Vec<&Unit> = ground_level(game, to)
        .filter(|u| u.side != by && (u.concealed || u.hidden))
        .collect();
    let (dummies, real): (Vec<&Unit>, Vec<&Unit>) =
        lurking.into_iter().partition(|u| u.kind == UnitKind::Dummy);
    Ok(Entry {
        cost,
        mf,
        revealed: real
            .into_iter()
            .map(|u| {
                let mut shown = u.clone();
                shown.concealed = false;
                shown.hidden = false;
                shown
            })
            .collect(),
        dummies_removed: dummies.into_iter().map(|u| u.id.clone()).collect(),
        residual,
    })
}

/// The units in the ground-level Location of `to`: above ground, not on an upper level.
fn ground_level(game: &Game, to: Hex) -> impl Iterator<Item = &Unit> {
    game.units_above(to)
        .filter(move |u| !u.eliminated && game.upper_level(u).is_none())
}

/// Whether `unit` is a Known enemy unit of `by` (A4.14, A12.1): the other side's, neither
/// hidden nor under "?", and no Dummy. The one reading of "Known enemy" every act of entering
/// a Location asks — a move or an entry (A4.14), Bypass round an obstacle (A4.3), a withdrawal
/// from Melee (A11.2), a rout and being held in Melee (`rout::known_enemies`) — so none of
/// them counts a unit its side may not know of. What each act adds (armed, Infantry, where)
/// is its own.
pub(crate) fn known_enemy(unit: &Unit, by: Side) -> bool {
    unit.side != by && !unit.hidden && !unit.concealed && unit.kind != UnitKind::Dummy
}

/// A4.14: in the MPh no unit enters a Location holding a Known enemy unit. Infantry have no
/// way round it; a vehicle's would be Overrun (D7), which the engine does not model, and the
/// refusal says so. Concealed and hidden units are not Known: entering their Location is
/// A12.15's matter, ruled on after the MF are paid.
fn check_known_enemy(game: &Game, by: Side, units: &[&Unit], to: Hex) -> Result<(), RuleViolation> {
    let known: Vec<&Unit> = ground_level(game, to)
        .filter(|u| known_enemy(u, by))
        .collect();
    // Personnel bar the Location outright; enemy vehicles and counters the engine does not
    // rule on are refused as not modelled instead, whatever their own rules would allow.
    let Some(enemy) = known
        .iter()
        .find(|u| u.kind.is_infantry())
        .or_else(|| known.first())
    else {
        return Ok(());
    };
    if let Some(vehicle) = units.iter().find(|u| u.kind == UnitKind::Vehicle) {
        return Err(RuleViolation::with(
            "D7",
            ViolationKind::NotModelled,
            pieces![
                Piece::unit(&vehicle.id),
                format!(" would enter {to}, which holds a Known enemy unit ("),
                Piece::unit(&enemy.id),
                "); a vehicle does so only by Overrun, which is not modelled by this engine"
            ],
        ));
    }
    if !enemy.kind.is_infantry() {
        return Err(RuleViolation::with(
            "A4.14",
            ViolationKind::NotModelled,
            pieces![
                format!("{to} holds a Known enemy vehicle or counter ("),
                Piece::unit(&enemy.id),
                "); entering a Location held only by those is not modelled by this engine"
            ],
        ));
    }
    Err(RuleViolation::with(
        "A4.14",
        ViolationKind::UnitState,
        pieces![
            format!("{to} holds a Known enemy unit ("),
            Piece::unit(&enemy.id),
            "); no unit enters its Location in the MPh, and Infantry have no Overrun"
        ],
    ))
}

/// A11.21: a withdrawal from Melee (or an Infiltration, A11.22) is into a Location holding no
/// Known enemy unit. A "?" of
/// the enemy's there is refused as not modelled, the same whatever it covers (a Dummy or a
/// real unit), so the refusal tells nothing the "?" does not show.
fn check_withdrawal_into(game: &Game, by: Side, to: Hex) -> Result<(), RuleViolation> {
    let enemy = |u: &&Unit| u.side != by && !u.hidden;
    if let Some(known) = ground_level(game, to).find(|u| known_enemy(u, by)) {
        return Err(RuleViolation::with(
            "A11.21",
            ViolationKind::UnitState,
            pieces![
                format!("{to} holds a Known enemy unit ("),
                Piece::unit(&known.id),
                "); a withdrawal from Melee is into a Location holding none"
            ],
        ));
    }
    if ground_level(game, to).filter(enemy).any(|u| u.concealed) {
        return Err(RuleViolation::new(
            "A11.21",
            ViolationKind::NotModelled,
            format!("{to} holds a concealed enemy unit; a withdrawal into its Location is not ruled by the engine: the players adjudicate it"),
        ));
    }
    Ok(())
}

/// A5.11: entering a Location its side overstacks with Personnel — even only by the movers'
/// own entry — costs one MF more per squad equivalent (FRU) beyond the limit. The movers
/// enter its ground level; units of the side on an upper level stack there, not here (A5.1).
/// The extra MF is part of the hex's entry cost, and its rule says so, for every act of
/// entering but Bypass: a move, an entry from off board, a rout, and in the APh an advance or
/// a withdrawal from Melee, where they count toward Difficult Terrain (A4.72, the A5.11 EX).
/// Overstacking is forbidden only at set-up, on board or off it (A5.1); entering overstacked
/// from off board is a move into the Location, and charged as one.
fn with_overstacking(
    game: &Game,
    by: Side,
    movers: &[&Unit],
    to: Hex,
    mut cost: MoveCost,
) -> MoveCost {
    let mut stack = Stack::default();
    ground_level(game, to)
        .filter(|u| u.side == by && u.bypass.is_none())
        .filter(|u| !movers.iter().any(|m| m.id == u.id))
        .chain(movers.iter().copied())
        .for_each(|u| stack.add(u.kind));
    let over = stack.squads_over();
    if over > 0 && !cost.all_mf {
        let extra = Mf::whole(over);
        cost.cot += extra;
        cost.total += extra;
        cost.cot_rule = format!(
            "{}, +{over} MF into a Location overstacked by {over} squad equivalent(s) (A5.11)",
            cost.cot_rule
        );
    }
    cost
}

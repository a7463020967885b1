//! `RepairWeapon`: the repair of a malfunctioned support weapon in the RPh (A9.72). A dr at
//! or below the weapon's repair number repairs it; a 6 eliminates it; anything else leaves it
//! malfunctioned. The repair number is the scenario's (`[[weapons]] repair`): the sources at
//! hand do not agree on one number for every weapon (one prints one on each counter), so a
//! weapon given none is not repaired by the engine. Its malfunction (A9.7) is ruled where the
//! attack is resolved (`rules::attack`).

use super::own_unit;
use crate::violation::{pieces, Piece, RuleViolation, ViolationKind};
use board::scenario::Side;
use game::dice::{DiceSource, Roll, RollPurpose};
use game::event::{DiceRolled, WeaponRepairAttempted};
use game::event::{Event, RepairResult};
use game::phase::Phase;
use game::Game;

pub(super) fn decide_repair(
    game: &Game,
    by: Side,
    weapon: &str,
    dice: &mut dyn DiceSource,
) -> Result<Vec<Event>, RuleViolation> {
    let given = || Piece::Given(weapon.to_string());
    let refuse =
        |kind: ViolationKind, why: Vec<Piece>| Err(RuleViolation::with("A9.72", kind, why));
    let (w, holder_id) = super::own_weapon(
        game,
        by,
        weapon,
        "A9.72",
        "only the unit possessing a weapon repairs it",
    )?;
    let holder = own_unit(game, by, holder_id)?;
    super::require_phase(
        game,
        Phase::Rally,
        "A9.72",
        "a malfunctioned weapon is repaired",
    )?;
    // A12: what a hidden unit or a "?" possesses is its owner's secret, which a repair's dr and
    // result would show the enemy. A HIP unit's is refused as every act of one is (A12.3), one
    // under "?" as not modelled, as a Transfer under "?" is (A4.431).
    crate::movement::check_not_hidden(holder, "repairing a weapon")?;
    if holder.concealed {
        return refuse(
            ViolationKind::NotModelled,
            pieces![
                Piece::unit(holder_id),
                " is under \"?\": its weapons are hidden from the enemy, whom a repair would show one; not modelled by this engine"
            ],
        );
    }
    if !w.malfunctioned {
        return refuse(
            ViolationKind::UnitState,
            pieces![
                given(),
                " has not malfunctioned: there is nothing to repair"
            ],
        );
    }
    if !holder.is_good_order() {
        return refuse(
            ViolationKind::NotModelled,
            pieces![
                Piece::unit(holder_id),
                " is not in Good Order: whether it may repair ",
                given(),
                " is not ruled by the engine; roll and adjudicate it"
            ],
        );
    }
    // A3.1: the repair is the holder's one type of act of the RPh (A4.44: not after its
    // Recovery, its sole act there).
    crate::rally_phase::check_one_act(game, holder_id, game::RallyPhaseAct::Repair)?;
    if w.repair_tried {
        return refuse(
            ViolationKind::UnitState,
            pieces![given(), " has had its repair attempt this RPh"],
        );
    }
    let Some(repair) = w.ratings.and_then(|r| r.repair) else {
        return refuse(
            ViolationKind::NotModelled,
            pieces![
                "the scenario gives ",
                given(),
                " no repair number (`repair` in its `[[weapons]]` entry): its repair is the players' to roll and adjudicate"
            ],
        );
    };
    let dr = dice.roll_die().ok_or_else(|| {
        RuleViolation::new(
            "docs/dice.md",
            ViolationKind::NoDice,
            "no dice: offline, add a `dice` line with one face for the repair dr before `repair`",
        )
    })?;
    let result = if dr == 6 {
        RepairResult::Eliminated
    } else if dr <= repair {
        RepairResult::Repaired
    } else {
        RepairResult::Failed
    };
    let words = match result {
        RepairResult::Repaired => "repaired",
        RepairResult::Eliminated => "eliminated",
        RepairResult::Failed => "still malfunctioned",
    };
    Ok(vec![
        Event::DiceRolled(DiceRolled {
            roll: Roll {
                side: by,
                purpose: RollPurpose::Repair,
                rule: "A9.72".into(),
                first_draw: game.dice_drawn,
                dice: vec![dr],
                modifiers: vec![],
                final_result: i16::from(dr),
                outcome: format!(
                    "`{holder_id}` repairs {weapon} (repair number {repair}, 6 eliminates): dr {dr} → {words}"
                ),
            },
        }),
        Event::WeaponRepairAttempted(WeaponRepairAttempted {
            weapon: weapon.to_string(),
            holder: holder_id.clone(),
            dr,
            result,
        }),
    ])
}

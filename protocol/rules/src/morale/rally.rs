//! `Rally`: a broken unit's rally attempt in the Rally Phase (A10.6), its DR rolled through the
//! game's dice like a Morale Check's (`rules::morale`) and logged with its DRMs and their rules.
//! A unit that rallies does so by a `FireEffectApplied` with the Rally outcome: the same change
//! of state (`apply_outcome`) as a Rally the players adjudicate, so one path rallies a unit
//! whoever decided it. What the engine does not rule on is asked of the players where it
//! arises (`FireEffectLeftToPlayers`), and what it cannot rule on before the dice is refused
//! with the way to play it instead (`roll rally`, then `adjudicate`).
//!
//! Sources (the rows of `docs/rules-coverage.md` name them; each rule below rests on two):
//! - A10.6: broken units of both sides may try in each RPh, once each per Player Turn; a
//!   Good Order friendly leader in the unit's Location may try to rally it, his leadership
//!   DRM applying to the DR; the DR must not exceed the morale on the unit's broken side; a
//!   failed attempt costs nothing — the A10.6 text quoted in the Hakkaa Paalle errata, a
//!   "Did you know … the Rally Phase?" player's note (triplepbf), and a C# ASL referee's
//!   rally tests on GitHub (leader rally, one attempt, the leader in the Location).
//! - A10.61: −1 to a rally in woods or a building — the player's note and the C# tests; the
//!   rules summary of chapter B names A10.61 as the rally's terrain bonus.
//! - A10.62: +4 to a rally under Desperation Morale — the asl-players.net glossary, the
//!   player's note and the C# tests; when a unit is under DM is `morale::desperation`'s.
//! - A10.63: +1 to a self-rally; a broken leader may self-rally, without his own DRM — the
//!   Hakkaa Paalle text, the player's note, a "first fire" player's note and the C# tests.
//! - A18.11: the first MMC rally of a side's own RPh may be a self-rally whatever the unit's
//!   capability, with no Good Order leader in its Location, and its Original 2 rallies it and
//!   may create a leader — the eASLRB's A18 page and the "first fire" note.
//! - A10.64: an Original 12 on a rally is Fate, a Casualty Reduction, and never rallies — the
//!   Hakkaa Paalle text (Fate is the one penalty), the player's note and the C# tests.
//! - A15: an Original 2 on a leader's rally of another unit calls for Heat of Battle, not on a
//!   self-rally — the "first fire" note and the C# tests.

use crate::morale::morale_level;
use crate::violation::{text, Piece, RuleViolation, ViolationKind};
use board::scenario::{Morale, Side, UnitId, UnitKind};
use board::terrain::Terrain;
use game::command::Outcome;
use game::dice::{DiceSource, Modifier, Roll, RollPurpose};
use game::event::Event;
use game::event::{DiceRolled, FireEffectApplied, FireEffectLeftToPlayers, RallyAttempted};
use game::Game;

/// The highest morale a counter prints (a 10-2 leader's): a broken-side morale above it is a
/// typing slip.
pub const BROKEN_MORALE_MAX: u8 = 10;

/// The morale on a counter's broken side, which its ratings do not carry and its owner gives
/// for each check against it (A10.4): a rally (A10.6) and an Interdiction NMC (A10.53) read it
/// by this one check, 1 to [`BROKEN_MORALE_MAX`], `rule` naming the act.
pub(crate) fn check_broken_morale(morale: u8, rule: &str) -> Result<(), RuleViolation> {
    if (1..=BROKEN_MORALE_MAX).contains(&morale) {
        return Ok(());
    }
    Err(RuleViolation::new(
        rule,
        ViolationKind::UnitState,
        format!("a broken side's morale (A10.4) is 1 to {BROKEN_MORALE_MAX}, not {morale}"),
    ))
}

/// What the players play instead when the engine does not rule on a rally.
const BY_HAND: &str = "roll it (`roll rally`) and enter the result (`adjudicate UNIT rally`)";

/// The rally attempt of `id` by side `by`: led by `leader` (a Good Order leader of its
/// Location), or without one a broken leader's self-rally. `broken_morale` is the morale on
/// the unit's broken side, which its ratings do not carry. Desperation Morale (A10.62) is the
/// unit's own state (`morale::desperation`): `desperation`, the player's old `dm` word, is
/// refused, so nobody states it by hand. Every check comes before the first die.
pub(crate) fn decide(
    game: &Game,
    by: Side,
    id: &UnitId,
    broken_morale: u8,
    leader: Option<&UnitId>,
    desperation: bool,
    dice: &mut dyn DiceSource,
) -> Result<Vec<Event>, RuleViolation> {
    crate::require_rally_step(game, "A10.6", "a rally is attempted")?;
    // Which unit is named, and whose it is, is the one lookup every command makes
    // (`rules::own_unit`): an enemy's hidden unit reads as none, an enemy's or an eliminated
    // one is refused in the same words as for any other act (A1).
    let unit = crate::own_unit(game, by, id)?;
    let Some(_) = morale_level(unit.kind, &unit.ratings) else {
        return Err(RuleViolation::with(
            "A10.6",
            ViolationKind::UnitState,
            vec![
                Piece::unit(id),
                text(
                    " is not a squad, half-squad, crew or leader with a morale: it does not rally",
                ),
            ],
        ));
    };
    if unit.morale != Morale::Broken {
        return Err(RuleViolation::with(
            "A10.6",
            ViolationKind::UnitState,
            vec![
                Piece::unit(id),
                text(" is not broken: only a broken unit rallies"),
            ],
        ));
    }
    if game.movement.rallied.contains(id) {
        return Err(RuleViolation::with(
            "A10.6",
            ViolationKind::UnitState,
            vec![
                Piece::unit(id),
                text(" has attempted to rally this Player Turn already: one attempt per unit"),
            ],
        ));
    }
    // A3.1: the rally attempt is the unit's one type of act of the RPh.
    crate::rally_phase::check_one_act(game, id, game::RallyPhaseAct::Rally)?;
    if unit.hidden || unit.concealed || unit.underground.is_some() {
        return Err(RuleViolation::with(
            "A10.6",
            ViolationKind::NotModelled,
            vec![
                Piece::unit(id),
                text(format!(
                    " is hidden, concealed or underground: the engine does not rally it in the open; {BY_HAND}"
                )),
            ],
        ));
    }
    if desperation {
        return Err(RuleViolation::new(
            "A10.62",
            ViolationKind::UnitState,
            "the engine tracks Desperation Morale itself (the DM counter both sides see): drop `dm` from the rally; its +4 applies when the unit is under DM",
        ));
    }
    check_broken_morale(broken_morale, "A10.6")?;
    let mut modifiers = vec![];
    let led_by = match leader {
        Some(l) => {
            let helper = crate::own_unit(game, by, l)?;
            // A leader hidden or under "?" is his owner's secret: his DRM leads no check the
            // engine rolls (`location_helpers`, the one reading of the leaders a check counts),
            // since the roll would show the enemy a leader, and his leadership, where it knows
            // of no unit or of only a "?". A HIP one is refused as every act of his is (A12.3).
            crate::movement::check_not_hidden(helper, "leading a rally")?;
            if helper.concealed {
                return Err(RuleViolation::with(
                    "A10.6",
                    ViolationKind::NotModelled,
                    vec![
                        Piece::unit(l),
                        text(format!(
                            " is under \"?\": his leadership is his owner's secret while he keeps it, so the engine does not rule a rally he leads; {BY_HAND}"
                        )),
                    ],
                ));
            }
            let why = if helper.kind != UnitKind::Leader {
                Some(" is not a leader")
            } else if helper.id == unit.id {
                Some(" cannot lead his own rally: a broken leader self-rallies (`rally` without `with`)")
            } else if !helper.is_good_order() {
                Some(" is not in Good Order: only a Good Order leader rallies others")
            } else if !super::location_helpers(game, unit).any(|h| h.id == helper.id) {
                Some(" is not in the Location of the unit he would rally")
            } else {
                None
            };
            if let Some(why) = why {
                return Err(RuleViolation::with(
                    "A10.6",
                    ViolationKind::UnitState,
                    vec![Piece::unit(l), text(why)],
                ));
            }
            if unit.kind == UnitKind::Leader {
                return Err(RuleViolation::with(
                    "A10.6",
                    ViolationKind::NotModelled,
                    vec![
                        Piece::unit(id),
                        text(format!(
                            " is a leader: whether another leader's DRM applies to his rally is not sourced (he may self-rally: `rally` without `with`); {BY_HAND}"
                        )),
                    ],
                ));
            }
            // A3.1, A10.6, A10.7: leading a rally is the leader's act of the RPh.
            crate::rally_phase::check_one_act(game, l, game::RallyPhaseAct::Rally)?;
            if game.movement.rallied.contains(l) {
                return Err(RuleViolation::with(
                    "A10.6",
                    ViolationKind::NotModelled,
                    vec![
                        Piece::unit(l),
                        text(format!(
                            " attempted his own rally this Player Turn: whether he may then rally others is not sourced; {BY_HAND}"
                        )),
                    ],
                ));
            }
            let drm = super::leadership_of(helper).unwrap_or(0);
            if drm != 0 {
                modifiers.push(Modifier {
                    value: drm,
                    reason: format!(
                        "`{l}` leads{}",
                        if helper.wounded { " (wounded)" } else { "" }
                    ),
                    rule: "A10.6".into(),
                });
            }
            Some(helper)
        }
        None if unit.kind == UnitKind::Leader => {
            modifiers.push(Modifier {
                value: 1,
                reason: "self-rally".into(),
                rule: "A10.63".into(),
            });
            None
        }
        None => {
            field_promotion_self_rally(game, by, unit)?;
            modifiers.push(Modifier {
                value: 1,
                reason: "self-rally".into(),
                rule: "A10.63".into(),
            });
            None
        }
    };
    let Some(hex) = game.scenario.hexes.get(&unit.hex) else {
        return Err(RuleViolation::new(
            "A10.61",
            ViolationKind::NotModelled,
            format!("{} is not a hex of the map: {BY_HAND}", unit.hex),
        ));
    };
    match hex.terrain {
        _ if !hex.fortifications.is_empty() => {
            return Err(RuleViolation::with(
                "A10.61",
                ViolationKind::NotModelled,
                vec![
                    Piece::unit(id),
                    text(format!(
                        " is in a hex with a fortification: what it does to a rally is not sourced; {BY_HAND}"
                    )),
                ],
            ))
        }
        Terrain::Woods | Terrain::StoneBuilding | Terrain::WoodenBuilding => {
            modifiers.push(Modifier {
                value: -1,
                reason: if hex.terrain == Terrain::Woods {
                    "woods".into()
                } else {
                    "building".into()
                },
                rule: "A10.61".into(),
            })
        }
        Terrain::OpenGround => {}
        other => {
            return Err(RuleViolation::with(
                "A10.61",
                ViolationKind::NotModelled,
                vec![
                    Piece::unit(id),
                    text(format!(
                        " is in {other:?}: whether that terrain modifies a rally is not sourced (woods and buildings −1, open ground none); {BY_HAND}"
                    )),
                ],
            ))
        }
    }
    if unit.desperation {
        modifiers.push(Modifier {
            value: super::desperation::RALLY_DRM,
            reason: "Desperation Morale".into(),
            rule: "A10.62".into(),
        });
    }
    let no_dice = || {
        RuleViolation::new(
            "docs/dice.md",
            ViolationKind::NoDice,
            "no dice: offline, add a `dice` line with two faces for the rally DR before `rally`",
        )
    };
    let first = dice.roll_die().ok_or_else(no_dice)?;
    let second = dice.roll_die().ok_or_else(no_dice)?;
    let original = i16::from(first) + i16::from(second);
    let final_dr = original + modifiers.iter().map(|m| i16::from(m.value)).sum::<i16>();
    // A wounded man's Morale Level is one lower, his broken side's too (A17.3).
    let morale = i16::from(broken_morale) - i16::from(super::wounded_penalty(unit));
    let self_rally = led_by.is_none();
    // Fate first: an Original 12 never rallies (A10.64).
    let fate = original == 12;
    let rallied = !fate && final_dr <= morale;
    // An MMC's self-rally (A18.11) rallies on an Original 2 whatever the DRMs, and may create
    // a leader. A leader's self-rally's Original 2 that the DR alone would fail: whether it
    // rallies rests on one source, so it is asked.
    let field_promotion = self_rally && unit.kind != UnitKind::Leader && original == 2;
    let rallied = rallied || field_promotion;
    let snake_eyes_asked = self_rally && original == 2 && !rallied;
    let words = if fate {
        "Fate"
    } else if rallied {
        "rallied"
    } else if snake_eyes_asked {
        "asked"
    } else {
        "still broken"
    };
    let drms = game::dice::signed_drms(&modifiers);
    let how = match leader {
        Some(l) => format!("rally by `{l}`"),
        None => "self-rally".to_string(),
    };
    let line = format!(
        "{} `{id}` {how}: broken morale {morale}{}, DR {original}{drms} → {words}",
        unit.ratings,
        if unit.wounded { " (wounded)" } else { "" }
    );
    let mut events = vec![
        Event::RallyAttempted(RallyAttempted {
            unit: id.clone(),
            leader: leader.cloned(),
        }),
        Event::DiceRolled(DiceRolled {
            roll: Roll {
                side: unit.side,
                purpose: RollPurpose::Rally,
                rule: "A10.6".into(),
                first_draw: game.dice_drawn,
                dice: vec![first, second],
                modifiers,
                final_result: final_dr,
                outcome: line.clone(),
            },
        }),
    ];
    let left = |rule: &str, why: String| {
        Event::FireEffectLeftToPlayers(FireEffectLeftToPlayers {
            target: unit.hex,
            unit: Some(id.clone()),
            rule: rule.to_string(),
            why,
        })
    };
    if rallied {
        events.push(Event::FireEffectApplied(FireEffectApplied {
            unit: id.clone(),
            outcome: Outcome::Rally,
            rule: "A10.6".into(),
            why: line.clone(),
        }));
    }
    if fate {
        // Fate is a Casualty Reduction (A10.64), by the one function that reduces a unit.
        let mut draw = game.dice_drawn + 2;
        let mut draws = super::Draws {
            by: unit.side,
            draw: &mut draw,
            dice: &mut *dice,
        };
        let reduced = super::casualty_reduction(
            game,
            unit,
            "A10.64",
            &format!("{line}: Casualty Reduction"),
            &mut draws,
        )
        .map_err(|_| {
            RuleViolation::new(
                "docs/dice.md",
                ViolationKind::NoDice,
                "no dice: offline, add a `dice` line with a face for the Wound Severity dr (A17.11) after the rally's two",
            )
        })?;
        events.extend(reduced);
    }
    if snake_eyes_asked {
        events.push(left(
            "A10.63",
            format!("`{id}` rolled an Original 2 on its self-rally, Final DR {final_dr} above its broken morale {morale}: whether it rallies rests on one source, so it is the players' to rule"),
        ));
    }
    if field_promotion {
        events.push(left(
            "A18.11",
            format!("`{id}` rallied on an Original 2 on its self-rally, the first MMC rally of its side's own RPh: the ATTACKER may roll on the Leader Creation Table (A18.2), which the engine does not resolve; the players roll and adjudicate it"),
        ));
    }
    if !self_rally && original == 2 {
        events.push(left(
            "A15",
            format!("`{id}` rolled an Original 2 on its rally: Heat of Battle is the players' to resolve"),
        ));
    }
    Ok(events)
}

/// A18.11 (with A10.63): the first rally attempt of an MMC in its side's own RPh may be a
/// self-rally, whatever the unit's self-rally capability, when no Good Order leader is in its
/// Location. Any other MMC's self-rally turns on its broken side's boxed morale, which its
/// ratings do not give, so it is refused for the players to play by hand. Checked before the
/// dice, as every refusal is.
fn field_promotion_self_rally(
    game: &Game,
    by: Side,
    unit: &game::Unit,
) -> Result<(), RuleViolation> {
    let id = &unit.id;
    let by_hand = |why: String| {
        Err(RuleViolation::with(
            "A10.63",
            ViolationKind::NotModelled,
            vec![Piece::unit(id), text(why)],
        ))
    };
    if by != game.attacker() {
        return by_hand(format!(
            " has no leader named to rally it (`with LEADER`); an MMC self-rallies without its broken side's boxed morale only as its side's first MMC rally of its own RPh (A18.11), and a boxed morale is not tracked by the engine: {BY_HAND}"
        ));
    }
    let is_mmc = |u: &game::Unit| {
        matches!(
            u.kind,
            UnitKind::Squad | UnitKind::HalfSquad | UnitKind::Crew
        )
    };
    let earlier = game
        .movement
        .rallied
        .iter()
        .filter_map(|r| game.units.get(r))
        .any(|u| u.side == by && is_mmc(u));
    if earlier {
        return by_hand(format!(
            " has no leader named to rally it (`with LEADER`): its side has made an MMC rally attempt in this RPh already, so only a boxed morale lets it self-rally (A18.11), which the engine does not track: {BY_HAND}"
        ));
    }
    if let Some(leader) = game.units.values().find(|l| {
        l.side == by
            && l.kind == UnitKind::Leader
            && !l.eliminated
            && l.is_good_order()
            && game.same_location(l, unit)
    }) {
        return Err(RuleViolation::with(
            "A18.11",
            ViolationKind::UnitState,
            vec![
                Piece::unit(id),
                text(" shares its Location with the Good Order leader "),
                Piece::unit(&leader.id),
                text(": it self-rallies as its side's first MMC rally only without one there; rally it `with` him"),
            ],
        ));
    }
    Ok(())
}

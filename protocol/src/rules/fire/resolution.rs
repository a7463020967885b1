//! A declared attack in the PFPh resolved by the rules (A7): the FP of the firers and what range does to
//! it, the IFT column, the DRMs each with its rule, the DR through the game's dice, Cowering,
//! and the table's result. `attack::resolve` is the one caller: an attack is resolved here when
//! everything it needs is something the engine models, and otherwise left to the players, who
//! are told why (`Unruled`) — never resolved with a piece silently missing.
//!
//! What an attack's effect is on each unit (A7.301–A7.303, A10) is not applied here: the IFT
//! result is logged with the roll, and `rules::morale` takes it from there — the checks it
//! rolls and rules on, and what it asks of the players.
//!
//! Sources. Ratings as printed (`4-6-7` = FP, normal range, morale; `9-1` = morale and
//! leadership DRM): the rules README. The FP multipliers and fractions (A7.21 PBF ×2, A7.22
//! long range ×½, A7.2 fractions kept until the total), a leader's DRM for the fire he
//! directs (A7.53), and Cowering one column to the left on doubles (two with an Inexperienced
//! firer) but never for a leader-directed Fire Group (A7.9) rest on two published player aids each, named in their
//! rows of `docs/rules-coverage.md`.

use crate::board::hex::Hex;
use crate::board::los::{LosMap, Verdict};
use crate::board::scenario::{Side, UnitId, UnitKind};
use crate::game::dice::{DiceSource, Modifier, Roll, RollPurpose};
use crate::game::phase::Phase;
use crate::game::{Game, Unit};
use crate::rules::fire::ift::{self, IftColumn, IftResult};
use crate::rules::los::{verdict_on, Spot};
use crate::rules::tem::{self, Fire};

/// Why the engine leaves an attack's outcome to the players: the rule it does not model and
/// what in this attack needs it. The words name only the firers and the target hex, which both
/// sides see once an attack is declared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unruled {
    pub rule: &'static str,
    pub why: String,
}

fn unruled(rule: &'static str, why: impl Into<String>) -> Unruled {
    Unruled {
        rule,
        why: why.into(),
    }
}

/// One firer's share of the FP, in halves of a point (long range halves an odd FP, A7.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Share {
    pub unit: UnitId,
    pub range: u32,
    pub fp_halves: u32,
    /// What range did to its inherent FP, with the rule: "PBF ×2 (A7.21)"; empty if nothing.
    pub multiplier: &'static str,
}

/// Everything about an attack the dice do not decide.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assessment {
    pub target: Hex,
    pub shares: Vec<Share>,
    pub column: IftColumn,
    pub drms: Vec<Modifier>,
    /// A leader directs the fire, so it cannot cower (A7.9).
    pub directed: bool,
    /// How many columns the fire moves left if it cowers: two when an Inexperienced unit
    /// takes part (A7.9, A19.33), otherwise one.
    pub cower_columns: usize,
}

impl Share {
    /// "w1 8 at range 1, PBF ×2 (A7.21)": the unit, its FP (fractions kept, A7.2), the range
    /// and what range did to it.
    pub fn words(&self) -> String {
        let fp = if self.fp_halves % 2 == 0 {
            format!("{}", self.fp_halves / 2)
        } else {
            format!("{}½", self.fp_halves / 2)
        };
        if self.multiplier.is_empty() {
            format!("{} {fp} at range {}", self.unit, self.range)
        } else {
            format!(
                "{} {fp} at range {}, {}",
                self.unit, self.range, self.multiplier
            )
        }
    }
}

/// The DRMs as a fire log prints them after the FP: " +1 (TEM, B13) −1 (`lr` directs, A7.53)";
/// each reason cut at its first colon, so the line stays one line.
pub fn drm_words(drms: &[Modifier]) -> String {
    drms.iter()
        .map(|m| {
            let short = m.reason.split(':').next().unwrap_or_default().trim();
            let value = if m.value < 0 {
                format!("−{}", -m.value)
            } else {
                format!("+{}", m.value)
            };
            format!(" {value} ({short}, {})", m.rule)
        })
        .collect()
}

impl Assessment {
    /// The FP total, fractions kept (A7.2), in halves of a point.
    pub fn fp_halves(&self) -> u32 {
        self.shares.iter().map(|s| s.fp_halves).sum()
    }

    /// The FP total as the fire log prints it: `8`, `2½`.
    pub fn fp_words(&self) -> String {
        let h = self.fp_halves();
        if h % 2 == 0 {
            format!("{}", h / 2)
        } else {
            format!("{}½", h / 2)
        }
    }
}

/// An MMC's printed FP and normal range (`4-6-7`), or `None` if the ratings do not read so.
fn fp_and_range(unit: &Unit) -> Option<(u32, u32)> {
    let mut parts = unit.ratings.split('-');
    let fp = parts.next()?.parse().ok()?;
    let range = parts.next()?.parse().ok()?;
    let _morale: u32 = parts.next()?.parse().ok()?;
    parts.next().is_none().then_some((fp, range))
}

/// A leader's leadership DRM as printed after his morale (`9-1` → −1, `8+1` → +1, `8-0` → 0).
pub fn leadership(ratings: &str) -> Option<i8> {
    let s = ratings;
    let at = s.get(1..)?.find(['-', '+'])? + 1;
    let (morale, rest) = s.split_at(at);
    morale.parse::<u8>().ok()?;
    let value: i8 = rest[1..].parse().ok()?;
    Some(if rest.starts_with('-') { -value } else { value })
}

/// Works out an attack by `by`'s `firers` on the units in `target`, everything but the dice,
/// or says why the engine does not rule on it.
pub fn assess(
    game: &Game,
    by: Side,
    firers: &[UnitId],
    target: Hex,
    into_sewer: bool,
) -> Result<Assessment, Unruled> {
    // Only Prep Fire is resolved: Defensive First Fire (A8.1) brings FFMO/FFNAM and fire at
    // moving units, the DFPh brings Final Fire for units that First Fired (A8.4), which the
    // engine does not record, and the AFPh halves FP and allows Assault Fire — none of them
    // sourced or modelled here yet.
    let phase_rule = match game.clock.phase() {
        Phase::PrepFire => None,
        Phase::Movement => Some(("A8.1", "Defensive First Fire at moving units (FFMO, FFNAM)")),
        Phase::DefensiveFire => Some((
            "A8.4",
            "fire in the DFPh (Final Fire for units that First Fired)",
        )),
        Phase::AdvancingFire => Some((
            "A7.36",
            "Advancing Fire (its FP modification and Assault Fire)",
        )),
        _ => Some(("A7", "fire in this phase")),
    };
    if let Some((rule, what)) = phase_rule {
        return Err(unruled(
            rule,
            format!("{what} is not resolved by the engine"),
        ));
    }
    if into_sewer {
        return Err(unruled(
            "B8.3",
            "fire into a sewer is not resolved by the engine",
        ));
    }
    let geometry = game.scenario.geometry();
    let mut units = vec![];
    for id in firers {
        let Some(u) = game.units.get(id).filter(|u| !u.eliminated) else {
            return Err(unruled("A7", format!("`{id}` is no longer in play")));
        };
        if u.underground.is_some() {
            return Err(unruled("B8.43", format!("`{id}` fires from below ground")));
        }
        units.push(u);
    }
    // A7.53: a leader named among the firers directs the others; he must share their Location.
    let leaders: Vec<&&Unit> = units
        .iter()
        .filter(|u| u.kind == UnitKind::Leader)
        .collect();
    let mmc: Vec<&&Unit> = units
        .iter()
        .filter(|u| u.kind != UnitKind::Leader)
        .collect();
    if mmc.is_empty() {
        return Err(unruled(
            "A7.53",
            "a leader has no FP of his own: he directs the fire of units in his Location",
        ));
    }
    if leaders.len() > 1 {
        return Err(unruled(
            "A7.53",
            "only one leader directs an attack; name one",
        ));
    }
    let mut drms = vec![];
    let directed = if let Some(leader) = leaders.first() {
        if let Some(away) = mmc.iter().find(|u| !game.same_location(u, leader)) {
            return Err(unruled(
                "A7.53",
                format!(
                    "`{}` is not in `{}`'s Location: a leader directs only units with him",
                    away.id, leader.id
                ),
            ));
        }
        if leader.pinned || leader.cx {
            return Err(unruled(
                "A7.53",
                format!(
                    "`{}` is {}: whether he directs is not resolved by the engine",
                    leader.id,
                    if leader.pinned { "pinned" } else { "CX" }
                ),
            ));
        }
        let Some(drm) = leadership(&leader.ratings) else {
            return Err(unruled(
                "A7.53",
                format!(
                    "`{}`'s ratings `{}` give no leadership DRM",
                    leader.id, leader.ratings
                ),
            ));
        };
        if drm != 0 {
            drms.push(Modifier {
                value: drm,
                reason: format!("`{}` directs", leader.id),
                rule: "A7.53".into(),
            });
        }
        true
    } else {
        false
    };
    for u in &mmc {
        let why = match u.kind {
            UnitKind::Squad | UnitKind::HalfSquad | UnitKind::Crew => None,
            UnitKind::Hero => Some(("A15", "a hero's fire")),
            _ => Some(("A7", "fire by a unit that is not an MMC")),
        };
        if let Some((rule, what)) = why {
            return Err(unruled(
                rule,
                format!("{what} (`{}`) is not resolved by the engine", u.id),
            ));
        }
        if u.pinned {
            return Err(unruled(
                "A7.8",
                format!(
                    "`{}` is pinned: a pinned unit's fire is not resolved by the engine",
                    u.id
                ),
            ));
        }
        if u.morale == crate::board::scenario::Morale::Berserk {
            return Err(unruled(
                "A15",
                format!(
                    "`{}` is berserk: its fire is not resolved by the engine",
                    u.id
                ),
            ));
        }
        if u.cx {
            return Err(unruled(
                "A4.51",
                format!(
                    "`{}` is CX: the DRM to a CX unit's fire is not applied by the engine",
                    u.id
                ),
            ));
        }
    }
    // The units fired on: every enemy unit above ground in the target hex (A7).
    let targets: Vec<&Unit> = game
        .units_above(target)
        .filter(|u| u.side != by && !u.hidden)
        .collect();
    if targets.is_empty() {
        return Err(unruled("A7", format!("no enemy unit is left in {target}")));
    }
    if targets.iter().any(|t| !game.same_location(t, targets[0])) {
        return Err(unruled(
            "A7",
            format!("enemy units stand on more than one level of {target}: the declaration does not say which Location is fired on"),
        ));
    }
    for t in &targets {
        if t.concealed {
            return Err(unruled(
                "A7.23",
                format!("a concealed unit in {target}: Area Fire is not resolved by the engine"),
            ));
        }
        if !matches!(
            t.kind,
            UnitKind::Squad
                | UnitKind::HalfSquad
                | UnitKind::Crew
                | UnitKind::Leader
                | UnitKind::Hero
        ) {
            return Err(unruled(
                "A7",
                format!(
                    "fire at a unit in {target} that is not Infantry is not resolved by the engine"
                ),
            ));
        }
    }
    // A5.12, A5.13: an overstacked Location changes the fire from it or at it. Only units the
    // firer may see are counted: a HIP unit's part in it is its owner's to raise.
    let over = |side: Side, of: &Unit| {
        let mut stack = crate::board::scenario::Stack::default();
        game.units
            .values()
            .filter(|u| u.side == side && !u.eliminated && !u.hidden && game.same_location(u, of))
            .for_each(|u| stack.add(u.kind));
        stack.overstacked()
    };
    if let Some(u) = mmc.iter().find(|u| over(by, u)) {
        return Err(unruled(
            "A5.12",
            format!("`{}` fires from an overstacked Location", u.id),
        ));
    }
    if targets.iter().any(|t| over(t.side, t)) {
        return Err(unruled(
            "A5.13",
            format!("the target Location in {target} is overstacked"),
        ));
    }
    // Range and FP of each firer (A7.2, A7.21, A7.22).
    let mut shares = vec![];
    for u in &mmc {
        let Some((fp, normal)) = fp_and_range(u) else {
            return Err(unruled(
                "A7",
                format!(
                    "`{}`'s ratings `{}` do not read as FP-range-morale",
                    u.id, u.ratings
                ),
            ));
        };
        let Some(range) = geometry.distance(u.hex, target) else {
            return Err(unruled(
                "A7",
                format!("no range from `{}` to {target}", u.id),
            ));
        };
        let upper =
            game.upper_level(u).is_some() || targets.iter().any(|t| game.upper_level(t).is_some());
        let (fp_halves, multiplier) = match range {
            // TPBF (×3) is fire at units in the firer's own Location: in play that is fire at
            // units moving in, or out of a Melee, neither of which the engine rules on.
            0 => {
                return Err(unruled(
                    "A7.21",
                    format!("`{}` fires into its own hex: Triple Point Blank Fire is not resolved by the engine", u.id),
                ))
            }
            1 if !upper => (fp * 4, "PBF ×2 (A7.21)"),
            1 => {
                return Err(unruled(
                    "A7.21",
                    format!("`{}` or its target is on an upper level: whether it is Point Blank Fire is not ruled by the engine", u.id),
                ))
            }
            r if r <= normal => (fp * 2, ""),
            r if r <= normal * 2 => (fp, "long range ×½ (A7.22)"),
            _ => {
                return Err(unruled(
                    "A7.22",
                    format!(
                        "{target} is {range} hexes from `{}`, beyond twice its normal range of {normal}",
                        u.id
                    ),
                ))
            }
        };
        shares.push(Share {
            unit: u.id.clone(),
            range,
            fp_halves,
            multiplier,
        });
    }
    // A7.5: units fire together as a Fire Group. Which Locations besides one may join a Fire
    // Group is not sourced here, so one of several Locations is the players'.
    if let Some(apart) = mmc.iter().find(|u| !game.same_location(u, mmc[0])) {
        return Err(unruled(
            "A7.5",
            format!(
                "`{apart}` is not in `{}`'s Location: a Fire Group of several Locations is not resolved by the engine",
                mmc[0].id,
                apart = apart.id
            ),
        ));
    }
    let total_halves: u32 = shares.iter().map(|s| s.fp_halves).sum();
    let Some(column) = IftColumn::for_fp(total_halves / 2) else {
        return Err(unruled("A7.3", "less than 1 FP: the attack is off the IFT"));
    };
    // TEM (B9.3 and the terrain chart) against each target; one DR serves them all only while
    // they share one TEM.
    let ids: Vec<UnitId> = mmc.iter().map(|u| u.id.clone()).collect();
    let mut tem_seen: Option<(i8, String)> = None;
    for t in &targets {
        let report = tem::query(game, &ids, &t.id, Fire::Direct)
            .map_err(|e| unruled("B9.3", format!("the TEM in {target}: {e}")))?;
        if report.hull_down {
            return Err(unruled(
                "B9.36",
                "a Hull Down target is not resolved by the engine",
            ));
        }
        match &tem_seen {
            Some((tem, _)) if *tem != report.tem => {
                return Err(unruled(
                    "A7",
                    format!("the units in {target} have different TEM: resolving each is not done by the engine"),
                ))
            }
            Some(_) => {}
            None => tem_seen = Some((report.tem, report.reasons.join("; "))),
        }
    }
    if let Some((tem, why)) = tem_seen.filter(|(tem, _)| *tem != 0) {
        drms.push(Modifier {
            value: tem,
            rule: last_rule(&why).unwrap_or("B9.3").to_string(),
            reason: if why.is_empty() {
                "TEM".into()
            } else {
                format!("TEM: {why}")
            },
        });
    }
    // Hindrances along each firer's LOS (A6.7 ties them to the tracer); a Fire Group whose
    // members see through different Hindrances is left to the players.
    let map = LosMap::of(&game.scenario);
    let mut hindrance: Option<u8> = None;
    for u in &mmc {
        let worst = targets
            .iter()
            .filter_map(|t| {
                verdict_on(
                    game,
                    map,
                    &Spot::Unit(u.id.clone()),
                    &Spot::Unit(t.id.clone()),
                )
                .ok()
            })
            .map(|v| match v {
                Verdict::Hindered(n) => n,
                _ => 0,
            })
            .min()
            .unwrap_or(0);
        match hindrance {
            Some(h) if h != worst => {
                return Err(unruled(
                    "A6.7",
                    "the Fire Group's members see the target through different Hindrances",
                ))
            }
            _ => hindrance = Some(worst),
        }
    }
    if let Some(h) = hindrance.filter(|h| *h > 0) {
        drms.push(Modifier {
            value: i8::try_from(h).unwrap_or(i8::MAX),
            reason: "Hindrance along the LOS".into(),
            rule: "A6.7".into(),
        });
    }
    let cower_columns = if mmc.iter().any(|u| u.inexperienced) {
        2
    } else {
        1
    };
    Ok(Assessment {
        target,
        shares,
        column,
        drms,
        directed,
        cower_columns,
    })
}

/// The last rule a TEM reason cites (`in-hex TEM 1 (Woods B13)` → `B13`): the terrain's own
/// paragraph, for the DRM's entry in the log.
fn last_rule(why: &str) -> Option<&str> {
    why.rsplit(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == ';' || c == ',')
        .find(|w| {
            let mut c = w.chars();
            c.next().is_some_and(|a| a.is_ascii_uppercase())
                && c.next().is_some_and(|d| d.is_ascii_digit())
        })
}

/// An attack in words before its dice, for a preview: "8 FP (w1 4 ×2 PBF) on the 8 column,
/// DRM +1 (TEM B13)", what the log will show when it is resolved; or why the engine will leave
/// it to the players. It reads only what the firer's side may see (`assess`).
pub fn describe(game: &Game, by: Side, firers: &[UnitId], target: Hex, into_sewer: bool) -> String {
    match assess(game, by, firers, target, into_sewer) {
        Err(u) => format!(
            "the engine leaves this attack to the players: {} ({})",
            u.why, u.rule
        ),
        Ok(a) => {
            let shares: Vec<String> = a.shares.iter().map(Share::words).collect();
            let drms: Vec<String> = a
                .drms
                .iter()
                .map(|m| format!("{:+} {} ({})", m.value, m.reason, m.rule))
                .collect();
            format!(
                "{} FP ({}) on the {} column (A7.3); DRM {}; {}",
                a.fp_words(),
                shares.join(", "),
                a.column,
                if drms.is_empty() {
                    "none".to_string()
                } else {
                    drms.join(", ")
                },
                if a.directed {
                    "directed: no Cowering (A7.9)".to_string()
                } else {
                    format!("doubles cower {} column(s) left (A7.9)", a.cower_columns)
                }
            )
        }
    }
}

/// What an assessed attack came to: the roll as the log keeps it and the table's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    pub roll: Roll,
    pub column: IftColumn,
    pub cowered: bool,
    pub result: IftResult,
}

/// Rolls the DR for an assessed attack and reads the IFT (A7.3): doubles cower one column to
/// the left, two with an Inexperienced firer, unless a leader directs (A7.9; off the table's
/// left edge, no effect). `None` when
/// the dice source has no dice.
pub fn roll(game: &Game, by: Side, a: &Assessment, dice: &mut dyn DiceSource) -> Option<Resolved> {
    let first = dice.roll_die()?;
    let second = dice.roll_die()?;
    let raw = i16::from(first) + i16::from(second);
    let final_dr = raw + a.drms.iter().map(|m| i16::from(m.value)).sum::<i16>();
    let cowers = first == second && !a.directed;
    let column = if cowers {
        a.column.left(a.cower_columns)
    } else {
        Some(a.column)
    };
    let result = column.map_or(IftResult::NoEffect, |c| ift::result(c, final_dr));
    let cowered = match (cowers, column) {
        (false, _) => String::new(),
        (true, Some(c)) => format!(", cowered to the {c} column (A7.9)"),
        (true, None) => ", cowered off the table (A7.9)".into(),
    };
    // The fire log's line, "8 FP +1 (TEM, B13) vs 2H5 on the 8 column: DR 6, Final 7 → 1MC";
    // the roll's words print the dice and each DRM's reason before it.
    let outcome = format!(
        "{} FP{} vs {} on the {} column{cowered}: DR {raw}, Final {final_dr} → {result}",
        a.fp_words(),
        drm_words(&a.drms),
        a.target,
        a.column,
    );
    Some(Resolved {
        roll: Roll {
            side: by,
            purpose: RollPurpose::Ift,
            rule: "A7.3".into(),
            first_draw: game.dice_drawn,
            dice: vec![first, second],
            modifiers: a.drms.clone(),
            final_result: final_dr,
            outcome,
        },
        column: column.unwrap_or(a.column),
        cowered: cowers,
        result,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fire log prints each DRM after the FP with its reason cut short and its rule.
    #[test]
    fn drms_read_short_with_their_rules() {
        let m = |value, reason: &str, rule: &str| Modifier {
            value,
            reason: reason.into(),
            rule: rule.into(),
        };
        assert_eq!(
            drm_words(&[
                m(2, "TEM: wall TEM 2 over 2S4-2S5", "B9.3"),
                m(-1, "`lr` directs", "A7.53")
            ]),
            " +2 (TEM, B9.3) −1 (`lr` directs, A7.53)"
        );
        assert_eq!(drm_words(&[]), "");
    }

    #[test]
    fn a_tem_reason_gives_its_rule() {
        assert_eq!(last_rule("in-hex TEM 1 (Woods B13)"), Some("B13"));
        assert_eq!(
            last_rule("wall TEM 2 over 2S4-2S5; with WA no in-hex TEM (B9.31)"),
            Some("B9.31")
        );
        assert_eq!(last_rule("no rule here"), None);
    }

    #[test]
    fn leadership_reads_the_sign() {
        assert_eq!(leadership("9-1"), Some(-1));
        assert_eq!(leadership("10-2"), Some(-2));
        assert_eq!(leadership("8-0"), Some(0));
        assert_eq!(leadership("8+1"), Some(1));
        assert_eq!(leadership("4-6-7"), None);
        assert_eq!(leadership("9"), None);
    }
}

//! A declared attack resolved by the rules (A7) — Prep Fire, Defensive First Fire at the moving
//! stack with its later forms, and Final Fire in the DFPh (A8): the FP of the firers and what
//! range and Area Fire do to it, the IFT column, the DRMs each with its rule (FFMO and FFNAM
//! against a moving stack, A4.6), the DR through the game's dice, Cowering, and the table's
//! result. `attack::resolve` is the one caller: an attack is resolved here when
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
//! rows of `docs/rules-coverage.md`. So do the Fire counters' limits (A8.1–A8.4) and FFMO and
//! FFNAM (A4.6, A4.61).

use crate::fire::ift::{self, IftColumn, IftResult};
use crate::los::{verdict_on, Spot};
use crate::tem::{self, Fire};
use board::hex::Hex;
use board::los::{LosMap, Verdict};
use board::scenario::{Side, UnitId, UnitKind};
use game::dice::{DiceSource, Modifier, Roll, RollPurpose};
use game::phase::Phase;
use game::{Game, Unit};

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
    pub multiplier: String,
}

/// Everything about an attack the dice do not decide.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assessment {
    pub target: Hex,
    /// The units the attack strikes: every enemy unit of the target Location, or the moving
    /// stack alone for First Fire in the MPh (A8.1).
    pub fired_on: Vec<UnitId>,
    pub shares: Vec<Share>,
    pub column: IftColumn,
    pub drms: Vec<Modifier>,
    /// A leader directs the fire, so it cannot cower (A7.9).
    pub directed: bool,
    /// The fire is a leader's with a SW MG (A9.12): no leadership DRM, and the MG is exempt
    /// from Cowering.
    pub by_leader: bool,
    /// How many columns the fire moves left if it cowers: two when an Inexperienced unit
    /// takes part (A7.9, A19.33), otherwise one.
    pub cower_columns: usize,
    /// Which fire it is (A8): Final Protective Fire asks for the firers' NMC after the roll.
    pub kind: FireKind,
    /// The support weapons firing, each with its possessor and Breakdown Number: an Original
    /// DR at or above it malfunctions the weapon (A9.7).
    pub breakdowns: Vec<(String, UnitId, u8)>,
    /// The support weapons firing that have a Multiple ROF, each with its possessor and ROF:
    /// an Original coloured dr at or below it lets the weapon fire again this phase (A9.2).
    pub rofs: Vec<(String, UnitId, u8)>,
    /// The units under "?" of a Location fired on with Known units (A12.13): attacked apart,
    /// on a column of their own with the same DR. `fired_on`, `shares` and `column` above are
    /// then the Known units' attack. `None` when the target units are all of one kind.
    pub concealed: Option<ConcealedKind>,
}

/// The concealed units' share of an attack on a Location holding concealed and Known units
/// (A12.13): every firer's FP halved once more as Area Fire (A7.23), read on its own column
/// with the DR the Known units' attack rolled. `column` is `None` when that leaves less than
/// 1 FP: the attack then cannot affect them, and only the Known units are attacked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConcealedKind {
    pub fired_on: Vec<UnitId>,
    pub shares: Vec<Share>,
    pub column: Option<IftColumn>,
}

impl ConcealedKind {
    /// The FP total at the "?" as the fire log prints it: `2`, `1½`.
    pub fn fp_words(&self) -> String {
        fp_total_words(self.shares.iter().map(|s| s.fp_halves).sum())
    }
}

/// An FP total in halves of a point as the fire log prints it: `8`, `2½`.
fn fp_total_words(h: u32) -> String {
    if h % 2 == 0 {
        format!("{}", h / 2)
    } else {
        format!("{}½", h / 2)
    }
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
pub(crate) fn drm_words(drms: &[Modifier]) -> String {
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
    /// Whether Original doubles move the fire left on the IFT (A7.9): not when a leader
    /// directs it, nor when a leader fires the SW MG himself (A9.12).
    pub fn cowers(&self) -> bool {
        !self.directed && !self.by_leader
    }

    /// The FP total, fractions kept (A7.2), in halves of a point.
    pub(crate) fn fp_halves(&self) -> u32 {
        self.shares.iter().map(|s| s.fp_halves).sum()
    }

    /// The FP total as the fire log prints it: `8`, `2½`.
    pub fn fp_words(&self) -> String {
        fp_total_words(self.fp_halves())
    }
}

/// An MMC's printed FP and normal range (`4-6-7`), or `None` if the ratings do not read so.
pub(crate) fn fp_and_range(unit: &Unit) -> Option<(u32, u32)> {
    let mut parts = unit.ratings.split('-');
    let fp = parts.next()?.parse().ok()?;
    let range = parts.next()?.parse().ok()?;
    let _morale: u32 = parts.next()?.parse().ok()?;
    parts.next().is_none().then_some((fp, range))
}

/// A unit's printed normal range (`4-6-7` → 6), or `None` if its ratings do not read so.
pub(crate) fn normal_range(unit: &Unit) -> Option<u32> {
    fp_and_range(unit).map(|(_, range)| range)
}

/// Whether the Location of `of` is overstacked by its side (A5.12, A5.13), which changes any
/// fire from it or at it — a firer's or Residual FP's. Only units the enemy may see are
/// counted: a HIP unit's part in it is its owner's to raise.
pub(crate) fn overstacked(game: &Game, of: &Unit) -> bool {
    let mut stack = board::scenario::Stack::default();
    game.units
        .values()
        .filter(|u| u.side == of.side && !u.eliminated && !u.hidden && game.same_location(u, of))
        .for_each(|u| stack.add(u.kind));
    stack.overstacked()
}

/// The enemy units above ground, not hidden, that `firer` sees nearer than `range`: what limits
/// Subsequent First Fire to the closest Known enemy unit (A8.3).
pub(crate) fn closer_enemies<'g>(
    game: &'g Game,
    by: Side,
    firer: &Unit,
    range: u32,
) -> Vec<&'g Unit> {
    let geometry = game.scenario.geometry();
    let map = LosMap::of(&game.scenario);
    game.units
        .values()
        .filter(|e| e.side != by && !e.hidden && !e.eliminated && e.underground.is_none())
        .filter(|e| {
            geometry
                .distance(firer.hex, e.hex)
                .is_some_and(|d| d < range)
        })
        .filter(|e| {
            verdict_on(
                game,
                map,
                &Spot::Unit(firer.id.clone()),
                &Spot::Unit(e.id.clone()),
            )
            .is_ok_and(|v| v != Verdict::Blocked)
        })
        .collect()
}

/// Which fire an attack is, by its phase and the firers' Fire counters (A8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FireKind {
    /// The ATTACKER's Prep Fire (A7).
    Prep,
    /// Defensive First Fire at the moving stack by unmarked units (A8.1).
    DefensiveFirst,
    /// Fire by units marked First Fire at the moving stack (A8.3): Area Fire.
    SubsequentFirst,
    /// Fire by units marked Final Fire at a moving unit adjacent or in their hex (A8.31): Area
    /// Fire, and its DR is a Normal Morale Check for the firers.
    FinalProtective,
    /// Fire in the DFPh (A8.4): Area Fire for a unit marked First Fire.
    Final,
    /// The ATTACKER's Advancing Fire (A7.24): every firer's FP halved, whether it moved or
    /// not, with Assault Fire's bonus for squads whose FP is underlined (A7.36) — but for an
    /// Opportunity Firer's, which is neither (A7.25).
    Advancing,
}

impl FireKind {
    /// Whether the fire is First Fire at a moving stack, with FFMO and FFNAM (A4.6).
    pub(crate) fn at_moving(self) -> bool {
        matches!(
            self,
            FireKind::DefensiveFirst | FireKind::SubsequentFirst | FireKind::FinalProtective
        )
    }
}

/// The names `by`'s attack gives, split into the support weapons among them and the units
/// (A9.1, A9.11): a name is a weapon's when `by` may know of a weapon by it
/// (`crate::known_weapon`) and the game has no unit by it. Declaring an attack and resolving it
/// read the names by this one split; a weapon a unit hidden from `by` holds is read as the
/// made-up name it is to him, so it is refused where and as a made-up name is (A12.3).
pub(crate) fn split_firers(game: &Game, by: Side, named: &[UnitId]) -> (Vec<UnitId>, Vec<UnitId>) {
    named
        .iter()
        .cloned()
        .partition(|id| crate::known_weapon(game, by, id).is_some() && !game.units.contains_key(id))
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
    named: &[UnitId],
    target: Hex,
    into_sewer: bool,
) -> Result<Assessment, Unruled> {
    // The support weapons named fire in the hands of the units possessing them (A9.11).
    let (weapon_ids, firers) = split_firers(game, by, named);
    let firers = &firers[..];
    // A12.14: a firer, or a SW's possessor, still under "?" after the declaration (no Good
    // Order enemy sees it) is a "?" to the enemy. Whether the engine reads the attack, the FP it
    // reads it at and the reason it gives turn on what the "?" hides (a squad's FP or a
    // leader's Area Fire, an SMC's Sustained Fire, A9.3, A9.12) and would name weapons the
    // enemy's view leaves out: such an attack is the players', said alike whatever it hides.
    let under_question_mark = firers
        .iter()
        .chain(
            weapon_ids
                .iter()
                .filter_map(|w| game.weapons.get(w)?.held_by.as_ref()),
        )
        .filter_map(|id| game.units.get(id))
        .any(|u| u.concealed);
    if under_question_mark {
        return Err(unruled(
            "A12.14",
            "a unit under \"?\" fires and keeps its \"?\" (no Good Order enemy sees it): the engine does not resolve its attack, whose FP would show the enemy what the \"?\" hides",
        ));
    }
    // Prep Fire, Defensive First Fire with its later forms (A8.1, A8.3, A8.31), the DFPh's
    // Final Fire (A8.4) and Advancing Fire (A7.24, A7.36) are resolved.
    let kind = match game.clock.phase() {
        Phase::PrepFire => FireKind::Prep,
        // Support weapons fired alone fire as their own counters say (A8.1).
        Phase::Movement if firers.is_empty() => defensive_first_kind(game, &weapon_ids)?,
        Phase::Movement => defensive_first_kind(game, firers)?,
        Phase::DefensiveFire => FireKind::Final,
        Phase::AdvancingFire => FireKind::Advancing,
        _ => {
            return Err(unruled(
                "A7",
                "fire in this phase is not resolved by the engine",
            ))
        }
    };
    if into_sewer {
        return Err(unruled(
            "B8.3",
            "fire into a sewer is not resolved by the engine",
        ));
    }
    let geometry = game.scenario.geometry();
    let mut sw = vec![];
    for id in &weapon_ids {
        let w = &game.weapons[id];
        let Some(ratings) = w.ratings else {
            return Err(unruled(
                "A9.1",
                format!("the scenario gives `{id}` no FP, range and Breakdown Number"),
            ));
        };
        let Some(holder) = w
            .held_by
            .as_ref()
            .and_then(|h| game.units.get(h))
            .filter(|u| !u.eliminated && u.side == by)
        else {
            return Err(unruled(
                "A9.1",
                format!("`{id}` is possessed by no unit of the firing side"),
            ));
        };
        sw.push((w, holder, ratings));
    }
    // A8.1: a weapon carries a Fire counter of its own. One with none fires as its possessor
    // would (Defensive First Fire, Final Fire as in Prep Fire, A8.4); a MG marked First or
    // Final Fire fires again only as Sustained Fire (A9.3): fired alone, by a unit that is not
    // an SMC, the engine resolves it (`sustained`: FP halved, B# lowered by 2, no Multiple
    // ROF). A Fire Group mixing a SW with units firing again after First Fire, a marked SW
    // fired with any unit's own FP or a leader's direction, a marked SW that is not a MG,  and an
    // SMC's Sustained Fire (which one source alone rules out) are the players'.
    let mut sustained: Vec<String> = vec![];
    if !sw.is_empty() {
        let again = match kind {
            _ if firers.is_empty() => None,
            FireKind::SubsequentFirst => Some("A8.3"),
            FireKind::FinalProtective => Some("A8.31"),
            FireKind::Final if firers.iter().any(|id| game.first_fired.contains(id)) => {
                Some("A8.4")
            }
            _ => None,
        };
        if let Some(rule) = again {
            return Err(unruled(
                rule,
                "a support weapon fired with units firing again after First Fire is not resolved by the engine: Sustained Fire is not modelled",
            ));
        }
        for (w, holder, _) in &sw {
            let marked = if game.final_fired.contains(&w.id) {
                Some("Final Fire")
            } else if game.first_fired.contains(&w.id) {
                Some("First Fire")
            } else {
                None
            };
            let Some(counter) = marked else {
                continue;
            };
            let rule = if kind == FireKind::Final {
                "A8.4"
            } else {
                "A8.3"
            };
            if !firers.is_empty() {
                return Err(unruled(
                    rule,
                    format!("`{}` is marked {counter}: its Sustained Fire (A9.3) beside a unit's own FP or a leader's direction is not resolved by the engine", w.id),
                ));
            }
            if !crate::fire::usage::is_mg(&w.name) {
                return Err(unruled(
                    rule,
                    format!("`{}` is marked {counter} and is not a MG: what it may fire again after First Fire is not resolved by the engine", w.id),
                ));
            }
            if holder.kind.is_smc() {
                return Err(unruled(
                    "A9.3",
                    format!("`{}` is marked {counter} and is fired by an SMC: an SMC's Sustained Fire is not resolved by the engine", w.id),
                ));
            }
            sustained.push(w.id.clone());
        }
    }
    // Who fires each SW, and what it costs them, was checked at the declaration
    // (`fire::usage`): a squad fires one or two SW MG, a half-squad or crew one, a leader one
    // alone or with another SMC (A9.11, A9.12). A SW that is not an MG is left where A9.11
    // leaves it: fired by anyone but a squad keeping its own FP, it is the players'.
    let mut by_leader = None;
    for (w, holder, _) in &sw {
        let mg = crate::fire::usage::is_mg(&w.name);
        let two = sw.iter().filter(|(_, h, _)| h.id == holder.id).count() > 1;
        match holder.kind {
            UnitKind::Squad if mg || !two => {}
            UnitKind::Squad => {
                return Err(unruled(
                    "A9.11",
                    format!("`{}` fires two SW, not both MG: what that costs its own FP is not ruled by the engine", holder.id),
                ))
            }
            UnitKind::HalfSquad | UnitKind::Crew if mg => {}
            UnitKind::HalfSquad | UnitKind::Crew => {
                return Err(unruled(
                    "A9.11",
                    format!("`{}` fires `{}`, a SW that is not an MG: what that costs its own FP is not ruled by the engine", holder.id, w.id),
                ))
            }
            UnitKind::Leader if mg && sw.len() == 1 => by_leader = Some(*holder),
            UnitKind::Leader => {
                return Err(unruled(
                    "A9.12",
                    format!("a leader's fire with `{}` beside other SW, or with a SW that is not an MG, is not resolved by the engine", w.id),
                ))
            }
            _ => {
                return Err(unruled(
                    "A9.1",
                    format!("`{}`'s fire with `{}` is not resolved by the engine", holder.id, w.id),
                ))
            }
        }
    }
    let mut units = vec![];
    for id in firers {
        let Some(u) = game.units.get(id).filter(|u| !u.eliminated) else {
            return Err(unruled("A7", format!("`{id}` is no longer in play")));
        };
        // A7.353: a unit that forfeited its own FP keeps half of it as Subsequent First Fire;
        // with no First Fire counter (its SW fired alone, A8.1) the engine has no such fire.
        if kind == FireKind::DefensiveFirst && game.inherent_fp_forfeited.contains(id) {
            return Err(unruled(
                "A7.353",
                format!("`{id}` forfeited its own FP by the SW it fired (A9.11) and keeps half of it only as Subsequent First Fire, which the engine resolves only for a unit marked First Fire"),
            ));
        }
        if u.underground.is_some() {
            return Err(unruled("B8.43", format!("`{id}` fires from below ground")));
        }
        units.push(u);
    }
    // A7.53: a leader named among the firers directs the others; he must share their Location.
    // A leader firing a SW MG himself (A9.12) directs nothing: any other leader named is the
    // second SMC firing it with him.
    let leaders: Vec<&&Unit> = units
        .iter()
        .filter(|u| !super::fires_own_fp(u) && by_leader.is_none_or(|l| l.id != u.id))
        .collect();
    let mmc: Vec<&&Unit> = units.iter().filter(|u| super::fires_own_fp(u)).collect();
    // Every unit whose fire is in the attack: the MMC named, and the possessors of the SW.
    let holders: Vec<&Unit> = sw
        .iter()
        .map(|(_, h, _)| *h)
        .filter(|h| !mmc.iter().any(|u| u.id == h.id))
        .collect();
    let shooters: Vec<&&Unit> = mmc.iter().copied().chain(holders.iter()).collect();
    // A9.12: one leader fires the SW MG as Area Fire, or two SMC together at full FP.
    let partner = match by_leader {
        Some(leader) => {
            if shooters.len() > 1 {
                return Err(unruled(
                    "A9.12",
                    format!("`{}` fires a SW MG in a Fire Group with other units' fire, which is not resolved by the engine", leader.id),
                ));
            }
            if leaders.len() > 1 {
                return Err(unruled(
                    "A9.12",
                    "a SW MG is fired by one leader or by two SMC together",
                ));
            }
            leaders.first().copied()
        }
        None => None,
    };
    if shooters.is_empty() {
        return Err(unruled(
            "A7.53",
            "a leader has no FP of his own: he directs the fire of units in his Location",
        ));
    }
    if by_leader.is_none() && leaders.len() > 1 {
        return Err(unruled(
            "A7.53",
            "only one leader directs an attack; name one",
        ));
    }
    let mut drms = vec![];
    // Every firing unit shares a named leader's Location (A7.531, refused at the declaration
    // otherwise: `attack::check_fire_group`).
    let directed = if let Some(leader) = leaders.first().filter(|_| by_leader.is_none()) {
        if leader.pinned {
            return Err(unruled(
                "A7.53",
                format!(
                    "`{}` is pinned: whether he directs is not resolved by the engine",
                    leader.id
                ),
            ));
        }
        let Some(drm) = crate::morale::leadership_of(leader) else {
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
                reason: format!(
                    "`{}` directs{}",
                    leader.id,
                    if leader.wounded { " (wounded)" } else { "" }
                ),
                rule: "A7.53".into(),
            });
        }
        true
    } else {
        false
    };
    for u in &shooters {
        let why = match u.kind {
            UnitKind::Squad | UnitKind::HalfSquad | UnitKind::Crew => None,
            UnitKind::Leader if by_leader.is_some() => None,
            UnitKind::Hero => Some(("A15", "a hero's fire")),
            _ => Some(("A7", "fire by a unit that is not an MMC")),
        };
        if let Some((rule, what)) = why {
            return Err(unruled(
                rule,
                format!("{what} (`{}`) is not resolved by the engine", u.id),
            ));
        }
        if u.morale == board::scenario::Morale::Berserk {
            return Err(unruled(
                "A15",
                format!(
                    "`{}` is berserk: its fire is not resolved by the engine",
                    u.id
                ),
            ));
        }
    }
    // A4.51: an attack made or directed by a CX unit takes +1, once however many are CX.
    if let Some(cx) = shooters
        .iter()
        .copied()
        .chain(leaders.iter().copied())
        .find(|u| u.cx)
    {
        drms.push(Modifier {
            value: 1,
            reason: format!("`{}` is CX", cx.id),
            rule: "A4.51".into(),
        });
    }
    // The units fired on: every enemy unit above ground in the target hex (A7) — but First
    // Fire in the MPh, with SFF and FPF, affects the moving stack alone, whatever other units
    // share its Location (A8.1): their TEM, concealment and checks are not this attack's.
    let targets: Vec<&Unit> = if kind.at_moving() {
        let moving = crate::attack::moving_in(game, by, target);
        if moving.is_empty() {
            return Err(unruled(
                "A8.1",
                format!("no unit of the moving stack is in {target} any more"),
            ));
        }
        moving
    } else {
        game.units_above(target)
            .filter(|u| u.side != by && !u.hidden)
            .collect()
    };
    if targets.is_empty() {
        return Err(unruled("A7", format!("no enemy unit is left in {target}")));
    }
    if targets.iter().any(|t| !game.same_location(t, targets[0])) {
        return Err(unruled(
            "A7",
            format!("enemy units stand on more than one level of {target}: the declaration does not say which Location is fired on"),
        ));
    }
    // A8.31: FPF reaches moving units ADJACENT to the firer or in its hex. A building's upper
    // level and the next hex's ground level are a hex apart, but no advance changes both the
    // hex and the level (A4.7), so [LDR] makes them not ADJACENT (A.8), where the First Fire
    // flow chart ([FFC]) reads FPF by range alone: the sources differ, and such FPF is the
    // players'. The words name no unit: both sides read them.
    if kind == FireKind::FinalProtective
        && shooters.iter().any(|u| {
            targets
                .iter()
                .any(|t| t.hex != u.hex && game.upper_level(t) != game.upper_level(u))
        })
    {
        return Err(unruled(
            "A8.31",
            "FPF from a building's level at moving units in the next hex on another level: whether they are ADJACENT (A.8, A4.7), as FPF asks, the sources at hand do not agree",
        ));
    }
    // A7.23, A12.13: fire at concealed units is Area Fire, its FP halved (below). Concealed and
    // unconcealed units fired on together are attacked once for each kind, on two columns with
    // one DR (`ConcealedKind`). Nothing under a "?" is looked at before the IFT has read the
    // result (its kind, its ratings), so the attack reads the same whatever the "?" hides — a
    // squad, a leader or a Dummy — until `attack::resolve` reveals it (A12.14).
    let concealed = targets.iter().filter(|t| t.concealed).count();
    let mixed = concealed > 0 && concealed < targets.len();
    let at_concealed = concealed == targets.len();
    for t in targets.iter().filter(|t| !t.concealed) {
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
    // A5.12, A5.13: an overstacked Location changes the fire from it or at it.
    if let Some(u) = shooters.iter().find(|u| overstacked(game, u)) {
        return Err(unruled(
            "A5.12",
            format!("`{}` fires from an overstacked Location", u.id),
        ));
    }
    // Under "?" the stack is not looked at (above): a concealed unit that became overstacked
    // would have lost its "?" (A12.14), which the engine does not rule. Beside Known units the
    // Known alone are counted, so that the reading does not turn on what a "?" hides.
    let known_overstacked = || {
        let mut stack = board::scenario::Stack::default();
        game.units
            .values()
            .filter(|u| {
                u.side != by
                    && !u.eliminated
                    && !u.hidden
                    && !u.concealed
                    && game.same_location(u, targets[0])
            })
            .for_each(|u| stack.add(u.kind));
        stack.overstacked()
    };
    let overstacked_target = if mixed {
        known_overstacked()
    } else {
        targets.iter().any(|t| overstacked(game, t))
    };
    if !at_concealed && overstacked_target {
        return Err(unruled(
            "A5.13",
            format!("the target Location in {target} is overstacked"),
        ));
    }
    // A7.21: Triple Point Blank Fire (FP ×3) is fire at units in the firer's own Location.
    // Infantry of both sides come to share a Location here only by advancing into it (A4.14
    // bars it in the MPh, and A12.15 stops a mover outside a concealed enemy's), and after
    // the CC that follows they are in Melee (A11.7), as the Rout Phase reads them too: the
    // engine has no fire within a Location outside Melee, so none is tripled. Fire by a unit
    // in Melee, or into a Location where the firer's side is in Melee, is the players'.
    if let Some(u) = shooters
        .iter()
        .find(|u| targets.iter().any(|t| game.same_location(t, u)))
    {
        return Err(unruled(
            "A11.7",
            format!("`{}` shares its Location with the enemy units it fires at: units of both sides in one Location are in Melee, and fire by a unit in Melee is not resolved by the engine (Triple Point Blank Fire, FP ×3, A7.21, is fire within a Location outside Melee)", u.id),
        ));
    }
    // The words name no unit: the firing side's unit there may be one the other side does not
    // know, and the reason is sent to both.
    if game
        .units
        .values()
        .any(|u| u.side == by && !u.eliminated && targets.iter().any(|t| game.same_location(t, u)))
    {
        return Err(unruled(
            "A11.7",
            format!("units of the firing side share the target Location in {target} with the enemy: fire into a Location in Melee, which reaches the firer's own units there too, is not resolved by the engine"),
        ));
    }
    // Range and FP of each firer (A7.2, A7.21, A7.22).
    // A SW's FP and range are its own (A9.1), from its possessor's hex, and range does to
    // them what it does to an MMC's.
    // Each firer: its id (a unit's, or a SW's), the unit whose hex it fires from, its FP and
    // normal range, and whether it is a SW.
    let mut firing: Vec<(UnitId, &Unit, u32, u32, bool)> = vec![];
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
        firing.push((u.id.clone(), u, fp, normal, false));
    }
    for (w, holder, r) in &sw {
        firing.push((
            w.id.clone(),
            holder,
            u32::from(r.fp),
            u32::from(r.range),
            true,
        ));
    }
    let mut shares = vec![];
    let mut concealed_shares = vec![];
    for (id, u, fp, normal, weapon) in firing {
        let Some(range) = geometry.distance(u.hex, target) else {
            return Err(unruled("A7", format!("no range from `{id}` to {target}")));
        };
        let (fp_halves, multiplier) = match range {
            // Another Location of the firer's own hex (a building's other level): not TPBF,
            // which needs the same Location (above); whether the two levels are ADJACENT
            // (a stairwell between them) the engine does not know.
            0 => {
                return Err(unruled(
                    "A7.21",
                    format!("`{id}` fires at another Location of its own hex: whether fire between the levels of one hex is Point Blank Fire is not ruled by the engine"),
                ))
            }
            // A7.21: at range 1 the FP doubles when the firer is within one level of its
            // target or above it, whatever the levels come from (a hill, a building's storey);
            // a target two levels or more above the firer is fired on at normal FP.
            1 if point_blank(game, u, targets[0]) => (fp * 4, "PBF ×2 (A7.21)".to_string()),
            1 => (
                fp * 2,
                "no PBF: the target is more than one level above (A7.21)".to_string(),
            ),
            r if r <= normal => (fp * 2, String::new()),
            r if r <= normal * 2 => (fp, "long range ×½ (A7.22)".to_string()),
            _ => {
                return Err(unruled(
                    "A7.22",
                    format!(
                        "{target} is {range} hexes from `{id}`, beyond twice its normal range of {normal}"
                    ),
                ))
            }
        };
        // Area Fire halves the FP of a unit that fires again after First Fire (A8.3, A8.31,
        // A8.4), of one that keeps only half its forfeited FP (A7.353), and of a SW MG a
        // leader fires alone (A9.12); a quarter point is finer than the engine keeps.
        let area = if weapon && by_leader.is_some() && partner.is_none() {
            Some("A9.12")
        } else if sustained.contains(&id) {
            // A9.3: Sustained Fire halves the MG's FP, the one halving of fire after First Fire.
            Some("A9.3")
        } else {
            area_rule(game, kind, &id)
        };
        // A7.8: a pinned unit fires at half FP, and the MG it fires is halved the same way —
        // after any other halving, as halvings compound (A7.2): a pinned unit's Subsequent
        // First Fire, or its Advancing Fire below, is a quarter of its FP.
        // A7.23: fire at concealed units is Area Fire, halved once more (A12.13: cumulative
        // with Area Fire for any other cause) — at every target when all are under "?", and at
        // the "?" alone beside Known units (A12.13: each kind on its own column).
        let share = |at_question_mark: bool| -> Result<Share, Unruled> {
            let halvings = area
                .into_iter()
                .chain(at_question_mark.then_some("A7.23"))
                .chain(u.pinned.then_some("A7.8"));
            let mut fp_halves = fp_halves;
            let mut multiplier = multiplier.clone();
            for rule in halvings {
                if fp_halves % 2 != 0 {
                    return Err(unruled(
                        rule,
                        format!("`{id}`'s FP halved once more leaves a quarter point, which the engine does not keep"),
                    ));
                }
                fp_halves /= 2;
                multiplier = with_area(&multiplier, rule);
            }
            let (fp_halves, multiplier) = if kind == FireKind::Advancing {
                if game.opportunity_fire.contains(&u.id) {
                    // A7.25: an Opportunity Firer (and the SW it possesses) fires in the AFPh
                    // unhalved, and without Assault Fire's bonus (A7.36).
                    (fp_halves, opportunity(&multiplier))
                } else {
                    // Assault Fire is the squad's own FP's (A7.36), not its SW's.
                    advancing(&id, game.assault_fire(u) && !weapon, fp_halves, &multiplier)?
                }
            } else {
                (fp_halves, multiplier)
            };
            Ok(Share {
                unit: id.clone(),
                range,
                fp_halves,
                multiplier,
            })
        };
        shares.push(share(at_concealed)?);
        if mixed {
            concealed_shares.push(share(true)?);
        }
    }
    // A7.5: units fire together as a Fire Group, from one Location or a chain of ADJACENT ones
    // (the chain is checked at the declaration, `attack::check_fire_group`). Across levels or
    // below ground, which Locations are ADJACENT is not ruled by the engine.
    let several = shooters.iter().any(|u| !game.same_location(u, shooters[0]));
    if several {
        if let Some(off) = shooters
            .iter()
            .find(|u| game.upper_level(u).is_some() || u.underground.is_some())
        {
            return Err(unruled(
                "A7.5",
                format!(
                    "`{}` fires from an upper level or below ground in a Fire Group of several Locations: which Locations are ADJACENT across levels is not ruled by the engine",
                    off.id
                ),
            ));
        }
    }
    let total_halves: u32 = shares.iter().map(|s| s.fp_halves).sum();
    let Some(column) = IftColumn::for_fp(total_halves / 2) else {
        return Err(unruled("A7.3", "less than 1 FP: the attack is off the IFT"));
    };
    // A12.13: the "?" beside Known units, on a column of its own (none below 1 FP).
    let concealed_kind = mixed.then(|| {
        let halves: u32 = concealed_shares.iter().map(|s| s.fp_halves).sum();
        ConcealedKind {
            fired_on: targets
                .iter()
                .filter(|t| t.concealed)
                .map(|t| t.id.clone())
                .collect(),
            shares: concealed_shares,
            column: IftColumn::for_fp(halves / 2),
        }
    });
    // TEM (B9.3 and the terrain chart) against each target; one DR serves them all only while
    // they share one TEM.
    let ids: Vec<UnitId> = shooters.iter().map(|u| u.id.clone()).collect();
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
    if let Some((tem, why)) = tem_seen.clone().filter(|(tem, _)| *tem != 0) {
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
    for u in &shooters {
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
    if kind.at_moving() {
        let tem = tem_seen.as_ref().map_or(0, |(tem, _)| *tem);
        drms.extend(moving_drms(
            game,
            &shooters,
            &targets,
            tem,
            hindrance.unwrap_or(0),
        )?);
    }
    if kind == FireKind::SubsequentFirst {
        for u in &mmc {
            let range = geometry.distance(u.hex, target).unwrap_or(0);
            if closer_enemies(game, by, u, range)
                .iter()
                .any(|e| e.concealed)
            {
                return Err(unruled(
                    "A8.3",
                    format!("a concealed enemy unit `{}` sees is nearer than {target}: whether it is a Known enemy unit that Subsequent First Fire must go at first is not ruled by the engine", u.id),
                ));
            }
        }
    }
    let cower_columns = if shooters.iter().any(|u| u.inexperienced) {
        2
    } else {
        1
    };
    Ok(Assessment {
        target,
        // Beside Known units the "?" is attacked apart (`concealed`).
        fired_on: targets
            .iter()
            .filter(|t| !mixed || !t.concealed)
            .map(|t| t.id.clone())
            .collect(),
        concealed: concealed_kind,
        shares,
        column,
        drms,
        directed,
        by_leader: by_leader.is_some(),
        cower_columns,
        kind,
        // A9.3: Sustained Fire lowers the weapon's B# by 2.
        breakdowns: sw
            .iter()
            .map(|(w, h, r)| {
                let lowered = if sustained.contains(&w.id) { 2 } else { 0 };
                (
                    w.id.clone(),
                    h.id.clone(),
                    r.breakdown.saturating_sub(lowered),
                )
            })
            .collect(),
        // A4.41: a weapon fired in the AFPh has one shot whatever its ROF, but an Opportunity
        // Firer's (A7.25).
        rofs: sw
            .iter()
            .filter(|(w, h, _)| {
                // A7.8: a pinned unit's weapon keeps no Multiple ROF, nor one in Sustained
                // Fire (A9.3).
                !h.pinned
                    && !sustained.contains(&w.id)
                    && (kind != FireKind::Advancing || game.opportunity_fire.contains(&h.id))
            })
            .filter_map(|(w, h, r)| r.rof.map(|rof| (w.id.clone(), h.id.clone(), rof)))
            .collect(),
    })
}

/// Whether A4.41 keeps `name`'s weapon from the AFPh once it changed Location in the MPh: an
/// MMG, HMG or mortar (`MTR`) by the name on its counter. A name that does not say which MG it
/// is (`MG`) is read as one that may be. Checked when the attack is declared (`attack.rs`).
pub(crate) fn a4_41_restricted(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    name.contains("MMG")
        || name.contains("HMG")
        || name.contains("MTR")
        || name.contains("MORTAR")
        || name == "MG"
}

/// The kind of Defensive fire in the MPh, read off the firers' Fire counters (A8.1, A8.3,
/// A8.31). Which of them may fire together as one Fire Group is not sourced, so a mix is the
/// players'.
fn defensive_first_kind(game: &Game, firers: &[UnitId]) -> Result<FireKind, Unruled> {
    let kind_of = |id: &UnitId| {
        if game.final_fired.contains(id) {
            FireKind::FinalProtective
        } else if game.first_fired.contains(id) {
            FireKind::SubsequentFirst
        } else {
            FireKind::DefensiveFirst
        }
    };
    let mut kinds = firers.iter().map(kind_of);
    let first = kinds.next().unwrap_or(FireKind::DefensiveFirst);
    if kinds.any(|k| k != first) {
        return Err(unruled(
            "A8.3",
            "the firers carry different Fire counters: a Fire Group mixing First Fire, Subsequent First Fire and Final Protective Fire is not resolved by the engine",
        ));
    }
    Ok(first)
}

/// The rule by which `unit`'s FP is halved as Area Fire in this attack, if it is: Subsequent
/// First Fire (A8.3), Final Protective Fire (A8.31), Final Fire by a unit marked First Fire
/// (A8.4), or Final Fire by a unit that forfeited its inherent FP and keeps half of it at
/// adjacent units (A7.353, refused farther at the declaration: `fire::usage`).
fn area_rule(game: &Game, kind: FireKind, unit: &UnitId) -> Option<&'static str> {
    match kind {
        FireKind::SubsequentFirst => Some("A8.3"),
        FireKind::FinalProtective => Some("A8.31"),
        FireKind::Final if game.first_fired.contains(unit) => Some("A8.4"),
        FireKind::Final if game.inherent_fp_forfeited.contains(unit) => Some("A7.353"),
        _ => None,
    }
}

/// The height of a unit's Location in half levels: its building level if it is on an upper
/// one, else its hex's base elevation (B10, B23).
fn height_halves(game: &Game, unit: &Unit) -> i16 {
    game.upper_level(unit).unwrap_or_else(|| {
        game.scenario
            .hexes
            .get(&unit.hex)
            .map_or(0, |s| i16::from(s.elevation) * 2)
    })
}

/// Whether fire at range 1 is Point Blank Fire (A7.21): the firer is within one level of the
/// target's Location or higher than it. So a unit on a building's first level fires PBF at the
/// ground level of the next hex and back, and a unit two levels above fires PBF down but is
/// fired on from below without it.
fn point_blank(game: &Game, firer: &Unit, target: &Unit) -> bool {
    height_halves(game, target) - height_halves(game, firer) <= 2
}

/// A range multiplier's words with Area Fire's halving after them: "PBF ×2 (A7.21), Area Fire
/// ×½ (A8.3)"; a leader's SW MG says whose fire it is (A9.12).
fn with_area(multiplier: &str, rule: &str) -> String {
    let area = if rule == "A9.12" {
        "fired by a leader as Area Fire ×½ (A9.12)".to_string()
    } else if rule == "A7.8" {
        "pinned ×½ (A7.8)".to_string()
    } else if rule == "A9.3" {
        "Sustained Fire ×½ (A9.3)".to_string()
    } else if rule == "A7.23" {
        "at a \"?\": Area Fire ×½ (A7.23)".to_string()
    } else {
        format!("Area Fire ×½ ({rule})")
    };
    if multiplier.is_empty() {
        area
    } else {
        format!("{multiplier}, {area}")
    }
}

/// A range multiplier's words with Opportunity Fire's exemption from Advancing Fire after
/// them (A7.25).
fn opportunity(multiplier: &str) -> String {
    if multiplier.is_empty() {
        "Opportunity Fire, not halved (A7.25)".to_string()
    } else {
        format!("{multiplier}, Opportunity Fire, not halved (A7.25)")
    }
}

/// A firer's FP in the AFPh unless it is an Opportunity Firer (A7.25, `opportunity`):
/// halved (A7.24) whether or not it moved; then a squad whose FP is underlined adds one FP
/// and rounds a fraction up (Assault Fire, A7.36), except at long range. A quarter point
/// (long range, an odd FP, then the AFPh) is finer than the engine keeps (A7.2), so that
/// firer's attack is the players'.
fn advancing(
    id: &str,
    assault_fire: bool,
    fp_halves: u32,
    multiplier: &str,
) -> Result<(u32, String), Unruled> {
    if fp_halves % 2 != 0 {
        return Err(unruled(
            "A7.24",
            format!(
                "`{id}`'s FP halved for Advancing Fire leaves a quarter point, which the engine does not keep"
            ),
        ));
    }
    let halved = fp_halves / 2;
    let long = multiplier.starts_with("long range");
    let bonus = assault_fire && !long;
    let fp_halves = if bonus {
        // One FP more, then any half point rounded up (A7.36).
        (halved + 2).div_ceil(2) * 2
    } else {
        halved
    };
    let mut words = if multiplier.is_empty() {
        String::new()
    } else {
        format!("{multiplier}, ")
    };
    words.push_str("Advancing Fire ×½ (A7.24)");
    if bonus {
        words.push_str(", Assault Fire +1 (A7.36)");
    }
    Ok((fp_halves, words))
}

/// The DRMs of First Fire at a moving stack (A4.6): FFMO −1 when it moves in Open Ground
/// with no positive TEM, and FFNAM −1 when it did not declare Assault Movement (A4.61). What
/// the engine cannot tell — terrain of no TEM that is not Open Ground, a fortification, a
/// Hindrance or an upper level, a stack only partly Assault Moving — it leaves to the players
/// rather than guess.
fn moving_drms(
    game: &Game,
    firers: &[&&Unit],
    targets: &[&Unit],
    tem: i8,
    hindrance: u8,
) -> Result<Vec<Modifier>, Unruled> {
    let mut drms = vec![];
    let hex = targets[0].hex;
    let spec = &game.scenario.hexes[&hex];
    // FFMO (A4.6; the Terrain Chart's Open Ground row): a positive TEM means the stack is not
    // in the open; brush, orchard, grain and marsh, with no TEM, negate it too, and so does a
    // Hindrance along the LOS ([BSUM], [CALC]).
    use board::terrain::Terrain;
    if tem <= 0 && !negates_ffmo(spec.terrain) && hindrance == 0 {
        // Shellholes entered at Open Ground cost are Open Ground against Defensive First Fire
        // (B2, the terrain chart's row): the TEM query gave them no TEM, so FFMO applies.
        if !matches!(spec.terrain, Terrain::OpenGround | Terrain::Shellholes) {
            return Err(unruled(
                "A4.6",
                format!(
                    "the moving stack is in {} with no TEM: whether FFMO applies there is not ruled by the engine",
                    spec.terrain.row().name
                ),
            ));
        }
        if !spec.fortifications.is_empty() {
            return Err(unruled(
                "A4.6",
                format!("{hex} holds a fortification: whether FFMO applies there is not ruled by the engine"),
            ));
        }
        // A firer above the stack (a hill, a building's upper level) sees it in the open as
        // one level with it does ([BSUM]: a rooftop is Open Ground for FFMO from an equal or
        // higher LOS); one below it, where Height Advantage may or may not apply (B10.31),
        // and a stack on an upper level are the players'.
        let below = firers
            .iter()
            .any(|f| height_halves(game, f) < i16::from(spec.elevation) * 2);
        if below || targets.iter().any(|t| game.upper_level(t).is_some()) {
            return Err(unruled(
                "A4.6",
                "the firer is below the moving stack, or the stack on an upper level: Height Advantage, which cancels FFMO, is not ruled by the engine",
            ));
        }
        drms.push(Modifier {
            value: -1,
            reason: format!("FFMO: moving in the Open Ground of {hex}"),
            rule: "A4.6".into(),
        });
    }
    match ffnam(targets) {
        Ok(drm) => drms.extend(drm),
        Err(PartlyAssaultMoving) => {
            return Err(unruled(
                "A4.6",
                format!("only some of the moving units in {hex} use Assault Movement: FFNAM applies to some of them, and one DR for all is not resolved by the engine"),
            ))
        }
    }
    Ok(drms)
}

/// Terrain with no TEM in which a moving unit is not in the open: brush, orchard, grain and
/// marsh negate FFMO (A4.6) for Defensive First Fire and Residual FP alike ([BSUM]: each of
/// their entries; [CALC]: brush, grain and orchard negate FFMO).
pub(crate) fn negates_ffmo(terrain: board::terrain::Terrain) -> bool {
    use board::terrain::Terrain;
    matches!(
        terrain,
        Terrain::Brush | Terrain::Orchard | Terrain::Grain | Terrain::Marsh
    )
}

/// Only some units of a moving stack declared Assault Movement: FFNAM applies to some of them,
/// and one DR for all does not say how.
pub(crate) struct PartlyAssaultMoving;

/// FFNAM (A4.6) against a moving stack, for Defensive First Fire and Residual FP alike: −1
/// when none of its units declared Assault Movement before moving (A4.61), nothing when all
/// did.
pub(crate) fn ffnam(targets: &[&Unit]) -> Result<Option<Modifier>, PartlyAssaultMoving> {
    let assault = targets.iter().filter(|t| t.assault_moving).count();
    if assault == 0 {
        Ok(Some(Modifier {
            value: -1,
            reason: "FFNAM: Non-Assault Movement".into(),
            rule: "A4.6".into(),
        }))
    } else if assault == targets.len() {
        Ok(None)
    } else {
        Err(PartlyAssaultMoving)
    }
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
            // A12.13: the "?" beside Known units, on its own column with the same DR.
            let at_question_mark = match &a.concealed {
                Some(ConcealedKind {
                    column: Some(column),
                    ..
                }) => format!(
                    " and {} FP at the \"?\" on the {column} column (A12.13)",
                    a.concealed
                        .as_ref()
                        .map(ConcealedKind::fp_words)
                        .unwrap_or_default()
                ),
                Some(_) => {
                    " and less than 1 FP at the \"?\", which it cannot affect (A12.13)".into()
                }
                None => String::new(),
            };
            format!(
                "{} FP ({}) on the {} column (A7.3){at_question_mark}; DRM {}; {}",
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
                } else if a.by_leader {
                    "a leader's SW MG: no Cowering (A9.12)".to_string()
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

/// One attack on the IFT as its DR reads it, whoever makes it: an assessed attack by firers
/// (`roll`) or the Residual FP left in a Location attacking the units entering it
/// (`attack::residual_fp_attack`, A8.2). Both are read by the one function `read_ift`, so the
/// dice, the Final DR, Cowering and the table are the same for every attack.
pub(crate) struct IftAttack<'a> {
    /// The rule the roll is logged under: A7.3 for an attack by firers, A8.2 for Residual FP.
    pub rule: &'static str,
    /// The attack's strength as the log prints it first: "8 FP", "Residual FP 4".
    pub strength: String,
    /// What it attacks, as the log prints it after "vs": "2H5", "`a` entering 2H5".
    pub against: String,
    pub column: IftColumn,
    pub drms: &'a [Modifier],
    /// How many columns Original doubles move the fire left (A7.9); `None` where it cannot
    /// cower: a leader directs it or fires his SW MG (A9.12), or it has no firer at all
    /// (Residual FP).
    pub cower_columns: Option<usize>,
}

/// The column an attack is read on and the table's result for `final_dr` (A7.3): `column`
/// moved `cower` columns left when the attack cowers (A7.9), and no effect off the table's
/// left edge. The one reading of a column, for an attack's own roll (`read_ift`) and for the
/// "?" beside Known units read with that roll (`read_concealed`, A12.13).
fn read_column(
    column: IftColumn,
    cower: Option<usize>,
    final_dr: i16,
) -> (Option<IftColumn>, IftResult) {
    let column = match cower {
        Some(n) => column.left(n),
        None => Some(column),
    };
    let result = column.map_or(IftResult::NoEffect, |c| ift::result(c, final_dr));
    (column, result)
}

/// The attack on the "?" beside Known units (A12.13), read with the DR `fired` rolled for the
/// Known units: the same Final DR on the concealed units' own column, moved left as that roll
/// cowered (A7.9). The column read (its own when it cowered off the table) and the result;
/// `None` when the attack has no such part, or too little FP to affect the "?".
pub fn read_concealed(a: &Assessment, fired: &Resolved) -> Option<(IftColumn, IftResult)> {
    let column = a.concealed.as_ref()?.column?;
    let cower = fired.cowered.then_some(a.cower_columns);
    let (read, result) = read_column(column, cower, fired.roll.final_result);
    Some((read.unwrap_or(column), result))
}

/// Rolls the DR for an attack and reads the IFT (A7.3): doubles cower one column to the left,
/// two with an Inexperienced firer, where the attack can cower (A7.9; off the table's left
/// edge, no effect). The roll is in `side`'s name, whose command rolls it. `None` when the
/// dice source has no dice.
pub(crate) fn read_ift(
    game: &Game,
    side: Side,
    a: &IftAttack,
    dice: &mut dyn DiceSource,
) -> Option<Resolved> {
    let first = dice.roll_die()?;
    let second = dice.roll_die()?;
    let raw = i16::from(first) + i16::from(second);
    let final_dr = raw + a.drms.iter().map(|m| i16::from(m.value)).sum::<i16>();
    let cower_columns = a.cower_columns.filter(|_| first == second);
    let cowers = cower_columns.is_some();
    let (column, result) = read_column(a.column, cower_columns, final_dr);
    let cowered = match (cowers, column) {
        (false, _) => String::new(),
        (true, Some(c)) => format!(", cowered to the {c} column (A7.9)"),
        (true, None) => ", cowered off the table (A7.9)".into(),
    };
    // The fire log's line, "8 FP +1 (TEM, B13) vs 2H5 on the 8 column: DR 6, Final 7 → 1MC";
    // the roll's words print the dice and each DRM's reason before it.
    let outcome = format!(
        "{}{} vs {} on the {} column{cowered}: DR {raw}, Final {final_dr} → {result}",
        a.strength,
        drm_words(a.drms),
        a.against,
        a.column,
    );
    Some(Resolved {
        roll: Roll {
            side,
            purpose: RollPurpose::Ift,
            rule: a.rule.into(),
            first_draw: game.dice_drawn,
            dice: vec![first, second],
            modifiers: a.drms.to_vec(),
            final_result: final_dr,
            outcome,
        },
        column: column.unwrap_or(a.column),
        cowered: cowers,
        result,
    })
}

/// Rolls the DR for an assessed attack by `by`'s firers and reads the IFT (A7.3), through the
/// one reading of any attack (`read_ift`): it cowers unless a leader directs it (A7.9).
pub fn roll(game: &Game, by: Side, a: &Assessment, dice: &mut dyn DiceSource) -> Option<Resolved> {
    let attack = IftAttack {
        rule: "A7.3",
        strength: format!("{} FP", a.fp_words()),
        against: a.target.to_string(),
        column: a.column,
        drms: &a.drms,
        cower_columns: a.cowers().then_some(a.cower_columns),
    };
    read_ift(game, by, &attack, dice)
}

/// What a resolved First Fire attack leaves in its target Location (A8.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResidualLeft {
    /// Residual FP of this amount.
    Fp(u8),
    /// None at all: its Hindrances and hexside TEM reduced it off the table, or the attack
    /// kept a weapon's Multiple ROF (A9.2), which a Residual FP would have cost.
    Nothing,
    /// Some, how much for the players to determine: an attack read on the 1 column, or one
    /// that cowered off the table.
    Players,
}

/// The Residual FP a resolved First Fire attack leaves in its target Location (A8.2): half the
/// IFT column it was read on, after any Cowering (12 → 6, 2 → 1), then one column to the left
/// for each +1 of Hindrance along the LOF and of a wall, hedge or bocage hexside TEM the attack
/// took (B9.55 EX: a 4 FP attack through an orchard and across bocage leaves none; [RF]: a
/// 4 FP attack whose LOF crosses a bridge's side leaves 1, not 2). An attack that keeps a
/// weapon's Multiple ROF leaves none: keeping the ROF forgoes the Residual FP (B9.55 EX,
/// [SKN]); the engine keeps the ROF, the DEFENDER's usual choice. The players determine the
/// Residual FP of an attack read on the 1 column or cowered off the table.
pub fn residual_fp(a: &Assessment, read: IftColumn, cowered: bool, kept_rof: bool) -> ResidualLeft {
    if kept_rof {
        return ResidualLeft::Nothing;
    }
    if cowered && a.column.left(a.cower_columns).is_none() {
        return ResidualLeft::Players;
    }
    let column = read.fp();
    if column < 2 {
        return ResidualLeft::Players;
    }
    let half = column / 2;
    let shift: usize = a
        .drms
        .iter()
        .filter(|m| m.rule == "A6.7" || m.rule.starts_with("B9."))
        .map(|m| usize::try_from(m.value.max(0)).unwrap_or(0))
        .sum();
    if shift == 0 {
        return ResidualLeft::Fp(half);
    }
    match IftColumn::for_fp(u32::from(half)).and_then(|c| c.left(shift)) {
        Some(c) => ResidualLeft::Fp(c.fp()),
        None => ResidualLeft::Nothing,
    }
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

    /// The one reading of an attack on the IFT (A7.3): Original doubles cower an attack that
    /// can cower (A7.9), never one that cannot — Residual FP's, which has no firer (A8.2) —
    /// and the same dice read the same way otherwise.
    #[test]
    fn one_reading_cowers_only_an_attack_that_can() {
        use crate::wall_advantage::ReadScenario;
        use board::scenario::Scenario;
        let scenario = Scenario::from_toml(
            r#"
name = "IFT reading"
turns = 1
first = "german"
sides = [{ id = "german", name = "German" }, { id = "russian", name = "Russian" }]
[[area]]
from = "1A1"
to = "1C3"
terrain = "open_ground"
"#,
        )
        .unwrap();
        let game = Game::new(scenario);
        let ffnam = [Modifier {
            value: -1,
            reason: "FFNAM: Non-Assault Movement".into(),
            rule: "A4.6".into(),
        }];
        let read = |cower_columns, rule| {
            let attack = IftAttack {
                rule,
                strength: "Residual FP 4".into(),
                against: "`g` entering 1B2".into(),
                column: IftColumn::for_fp(4).unwrap(),
                drms: &ffnam,
                cower_columns,
            };
            let mut dice = game::dice::ScriptedDice::new([3, 3]).unwrap();
            read_ift(&game, Side::A, &attack, &mut dice).unwrap()
        };
        let residual = read(None, "A8.2");
        assert!(!residual.cowered);
        assert_eq!(residual.column.fp(), 4);
        assert_eq!(residual.roll.final_result, 5);
        assert_eq!(residual.roll.rule, "A8.2");
        assert_eq!(
            residual.roll.outcome,
            format!(
                "Residual FP 4 −1 (FFNAM, A4.6) vs `g` entering 1B2 on the 4 column: DR 6, Final 5 → {}",
                ift::result(IftColumn::for_fp(4).unwrap(), 5)
            )
        );
        let fired = read(Some(1), "A7.3");
        assert!(fired.cowered);
        assert_eq!(fired.column.fp(), 2);
        assert_eq!(fired.result, ift::result(IftColumn::for_fp(2).unwrap(), 5));
        let mut empty = game::dice::ScriptedDice::default();
        let attack = IftAttack {
            rule: "A8.2",
            strength: String::new(),
            against: String::new(),
            column: IftColumn::for_fp(4).unwrap(),
            drms: &[],
            cower_columns: None,
        };
        assert!(read_ift(&game, Side::A, &attack, &mut empty).is_none());
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

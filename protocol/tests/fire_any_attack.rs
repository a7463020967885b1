//! The IFT law on attacks the test builds at random (A7.3): a scenario is written for each case
//! — one to three German squads and half-squads of random FP and normal range in one hex or
//! in it and the hex ADJACENT to it (a Fire Group of two Locations, A7.5), a leader of random
//! leadership DRM in the first hex or none, an Inexperienced firer or none, a machine gun of
//! random FP, range, B# and ROF in the first firer's hands or none, at a random
//! distance from a lone Russian squad in Open Ground, woods, a wooden or a stone building —
//! and its attack is declared and resolved on random dice in the German PFPh, in the DFPh by
//! the Russian side with the roles turned round (Final Fire by units with no Fire counter,
//! A8.4), or in the AFPh (every firer's FP halved after range, A7.24, unless the firers were
//! designated Opportunity Firers in the PFPh, A7.25). A leader named with a group of two
//! Locations is refused at the declaration (A7.531).
//!
//! What the engine logs is checked against what this file works out on its own, never against
//! the engine's table: the FP of each firer after range (PBF ×2 at one hex, ×½ beyond the normal
//! range, A7.21, A7.22) with fractions kept to the total (A7.2); the column the total falls in
//! (A7.3), each firer at its own range; Cowering on doubles when no leader directs (A7.9); the
//! Final DR as the dice plus the TEM (the Terrain Chart's figures) and the leader's DRM
//! (A7.53); and the IFT's entry for that column and DR as [IFT-B] states the chart
//! (`source_b`, written out here apart from `rules/fire/ift.rs`), so a wrong cell in the
//! engine's table fails this test. A firer beyond twice its normal range is refused at the
//! declaration (A7.22); an attack the rules put off the table (less than 1 FP), or left with a
//! quarter point of FP by Advancing Fire, is left to the players with its rule. A half-squad holding the machine gun fires it alone, at
//! full FP, its own FP forfeited (A9.11); a leader holding it fires it alone as Area Fire (×½
//! after range), with no leadership DRM and no Cowering (A9.12); an
//! MMG that changed Location in the MPh is refused in the AFPh (A4.41), one that did not and an
//! LMG fire there; in the DFPh a machine gun with no Fire counter fires as in Prep Fire
//! (A8.1, A8.4). The machine gun malfunctions exactly when the Original DR
//! reaches its B# (A9.7), and otherwise keeps its Multiple ROF exactly when the coloured dr (the
//! first die) is at or below its ROF (A9.2) — never in the AFPh but for an Opportunity Firer's
//! (A4.41). A KIA eliminates the lone target and a K/# reduces it.

use proptest::prelude::*;
use protocol::command::Outcome;
use protocol::dice::RollPurpose;
use protocol::event::{
    AttackLeftToPlayers, DiceRolled, FireEffectApplied, IftAttackResolved, MultipleRofRetained,
    WeaponMalfunctioned,
};
use protocol::game::{apply, Game};
use protocol::ReadScenario;
use protocol::{decide, Command, Event, Hex, Scenario, ScriptedDice, Side};

/// The IFT's columns (A7.3), as [IFT-A] and [IFT-B] head them.
const COLUMNS: [u8; 11] = [1, 2, 4, 6, 8, 12, 16, 20, 24, 30, 36];

/// The target's hex: the middle of board 2, so firers stand on every side of it.
const TARGET: &str = "2P5";

/// Terrain for the target hex, with its TEM against Direct Fire (the Terrain Chart: B1, B13,
/// B23).
const TERRAIN: [(&str, i16); 4] = [
    ("open_ground", 0),
    ("woods", 1),
    ("wooden_building", 2),
    ("stone_building", 3),
];

/// A cell of the IFT as [IFT-B] states the chart: the 8 column's morale results by DR, a DR
/// shift per column, one DR per column giving its K/#, and one more KIA for each point of DR
/// below it. Written out apart from the engine's table so the two can disagree.
fn source_b(fp: u8, final_dr: i16) -> String {
    let (shift, k_dr, k_n): (i16, i16, u8) = match fp {
        1 => (4, 1, 1),
        2 => (3, 2, 1),
        4 => (2, 2, 2),
        6 => (1, 3, 2),
        8 => (0, 3, 2),
        12 => (-1, 3, 3),
        16 => (-2, 4, 3),
        20 => (-3, 4, 4),
        24 => (-4, 5, 4),
        30 => (-5, 6, 4),
        36 => (-6, 7, 4),
        _ => unreachable!("{fp} heads no column"),
    };
    let dr = final_dr.max(0);
    if dr == k_dr {
        return format!("K/{k_n}");
    }
    if dr < k_dr {
        return format!("{}KIA", k_dr - dr);
    }
    match dr + shift {
        2 => "4MC".into(),
        3 => "3MC".into(),
        4 | 5 => "2MC".into(),
        6 | 7 => "1MC".into(),
        8 => "NMC".into(),
        9 => "PTC".into(),
        _ => "NE".into(),
    }
}

/// One firing MMC: whether it is a half-squad, its FP and its normal range.
#[derive(Clone, Debug)]
struct Firer {
    half: bool,
    /// In the hex next to the group's first (A7.5): the group then spans two ADJACENT
    /// Locations, each firer at its own range.
    beside: bool,
    fp: u32,
    range: u32,
}

fn firer() -> impl Strategy<Value = Firer> {
    (
        any::<bool>(),
        prop::bool::weighted(0.25),
        1u32..=8,
        1u32..=8,
    )
        .prop_map(|(half, beside, fp, range)| Firer {
            half,
            beside,
            fp,
            range,
        })
}

/// A machine gun the first firer possesses and fires with the group (A9.1, A9.11): its FP,
/// normal range, Breakdown Number and Multiple ROF (A9.7, A9.2), made up at random.
#[derive(Clone, Debug)]
struct Mg {
    /// The name on its counter: an LMG, or an MMG, which A4.41 keeps from the AFPh once moved.
    name: &'static str,
    fp: u32,
    range: u32,
    breakdown: u8,
    rof: Option<u8>,
}

fn mg() -> impl Strategy<Value = Mg> {
    (
        prop::sample::select(vec!["LMG", "MMG"]),
        1u32..=8,
        2u32..=16,
        6u8..=12,
        prop::option::of(1u8..=3),
    )
        .prop_map(|(name, fp, range, breakdown, rof)| Mg {
            name,
            fp,
            range,
            breakdown,
            rof,
        })
}

/// A column of board 2 by its index from A.
fn column_letter(i: u8) -> char {
    char::from(b'A' + i)
}

/// The hexes ADJACENT to the target (P is a column whose centres sit at whole rows, so its
/// neighbours in O and Q are rows 5 and 6): a third of the cases fire from one of them, so
/// Point Blank Fire reaches the table's right-hand columns often.
const NEXT_TO_TARGET: [&str; 6] = ["2P4", "2P6", "2O5", "2O6", "2Q5", "2Q6"];

/// The hex next to `at` in its own column (row below, or above where the row below is the
/// target's or off the board): where a firer `beside` stands.
fn beside(at: &str) -> String {
    let (column, row) = at.split_at(2);
    let row: u8 = row.parse().unwrap();
    let below = format!("{column}{}", row + 1);
    if row < 10 && below != TARGET {
        below
    } else {
        format!("{column}{}", row - 1)
    }
}

/// The fire phases whose attacks the engine resolves with no unit marked or moving: the
/// ATTACKER's Prep Fire (A7), the DEFENDER's Final Fire in the DFPh by units with no Fire
/// counter (A8.4: as in Prep Fire), the ATTACKER's Advancing Fire (A7.24: every firer's FP
/// halved after range).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FirePhase {
    Prep,
    DefensiveFinal,
    Advancing,
}

impl FirePhase {
    /// The side whose units fire in it: the German ATTACKER, or the Russian DEFENDER.
    fn firing(self) -> (Side, &'static str, &'static str) {
        match self {
            FirePhase::DefensiveFinal => (Side::B, "russian", "german"),
            _ => (Side::A, "german", "russian"),
        }
    }
}

/// The firing side of one case: its MMC, the hex of the first and the hex next to it, its
/// leader's DRM, whether the first MMC is Inexperienced, the MG, and who holds it: the first
/// MMC, or the leader (A9.12).
struct Firing<'a> {
    firers: &'a [Firer],
    at: &'a str,
    beside: &'a str,
    leader: Option<i8>,
    inexperienced: bool,
    weapon: Option<&'a Mg>,
    leader_holds: bool,
}

/// The scenario of one case, as a scenario file writes it: the firing side's units and the
/// other side's lone target in `terrain`.
fn scenario(firing: &Firing, terrain: &str, phase: FirePhase) -> String {
    let Firing {
        firers,
        at,
        beside,
        leader,
        inexperienced,
        weapon,
        leader_holds,
    } = *firing;
    let (_, side, enemy) = phase.firing();
    let mut s = format!(
        "name = \"the IFT law\"\nturns = 1\nfirst = \"german\"\n\
         sides = [{{ id = \"german\", name = \"German\" }}, {{ id = \"russian\", name = \"Russian\" }}]\n\n\
         [[area]]\nfrom = \"2A1\"\nto = \"2GG10\"\nterrain = \"open_ground\"\n\n\
         [[hexes]]\nhex = \"{TARGET}\"\nterrain = \"{terrain}\"\n\n\
         [[units]]\nid = \"r1\"\nside = \"{enemy}\"\nkind = \"squad\"\nratings = \"4-4-7\"\nhex = \"{TARGET}\"\n"
    );
    for (i, f) in firers.iter().enumerate() {
        let kind = if f.half { "half_squad" } else { "squad" };
        s += &format!(
            "\n[[units]]\nid = \"g{i}\"\nside = \"{side}\"\nkind = \"{kind}\"\nratings = \"{}-{}-7\"\nhex = \"{at}\"\n",
            f.fp,
            f.range,
            at = if f.beside { beside } else { at }
        );
        if i == 0 && inexperienced {
            s += "inexperienced = true\n";
        }
    }
    if let Some(drm) = leader {
        let ratings = match drm {
            d if d < 0 => format!("9-{}", -d),
            0 => "8-0".to_string(),
            d => format!("8+{d}"),
        };
        s += &format!(
            "\n[[units]]\nid = \"ldr\"\nside = \"{side}\"\nkind = \"leader\"\nratings = \"{ratings}\"\nhex = \"{at}\"\n"
        );
    }
    if let Some(w) = weapon {
        s += &format!(
            "\n[[weapons]]\nid = \"mg\"\nname = \"{}\"\npp = 1\nheld_by = \"{}\"\nfp = {}\nrange = {}\nbreakdown = {}\n",
            w.name,
            if leader_holds { "ldr" } else { "g0" },
            w.fp,
            w.range,
            w.breakdown
        );
        if let Some(rof) = w.rof {
            s += &format!("rof = {rof}\n");
        }
    }
    s
}

/// `phase` of the German Player Turn of `scenario`, every step before it ended with `done`,
/// the units `opportunity` names designated Opportunity Firers in its PFPh (A7.25).
/// Steps from the start of a game to its AFPh, with room to spare.
const STEPS_TO_FIRE_PHASE_MAX: usize = 12;

fn fire_phase(scenario: Scenario, phase: FirePhase, opportunity: &[String]) -> Game {
    use protocol::phase::Phase;
    let mut game = Game::new(scenario);
    let want = match phase {
        FirePhase::Prep => Phase::PrepFire,
        FirePhase::DefensiveFinal => Phase::DefensiveFire,
        FirePhase::Advancing => Phase::AdvancingFire,
    };
    // Whoever's step it is ends it (B9.322's end-of-RPh steps pass by themselves when nobody
    // can claim WA), up to the phase wanted.
    for _ in 0..STEPS_TO_FIRE_PHASE_MAX {
        if game.clock.phase() == want {
            break;
        }
        let side = game.acting();
        if game.clock.phase() == Phase::PrepFire && !opportunity.is_empty() {
            let mark = Command::MarkOpportunityFire {
                units: opportunity.to_vec(),
            };
            for e in decide(&game, side, &mark, &mut ScriptedDice::default()).unwrap() {
                apply(&mut game, &e);
            }
        }
        for e in decide(&game, side, &Command::Done, &mut ScriptedDice::default()).unwrap() {
            apply(&mut game, &e);
        }
    }
    assert_eq!(game.clock.phase(), want);
    game
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_attack_reads_the_ift_entry_for_its_column_and_final_dr(
        firers in prop::collection::vec(firer(), 1..=3),
        column in 9u8..=21,
        row in 1u8..=10,
        next_to in prop::option::weighted(0.33, 0..NEXT_TO_TARGET.len()),
        leader in prop::option::of(-2i8..=1),
        weapon in prop::option::weighted(0.5, mg()),
        inexperienced in any::<bool>(),
        terrain in 0..TERRAIN.len(),
        dice in [1u8..=6, 1u8..=6, 1u8..=6, 1u8..=6],
        // Half the cases in the PFPh.
        phase in prop::sample::select(vec![FirePhase::Prep, FirePhase::Prep, FirePhase::DefensiveFinal, FirePhase::Advancing]),
        // In the AFPh, half the cases by Opportunity Firers (A7.25).
        opportune in any::<bool>(),
        // In the AFPh, half the others with a machine gun that changed Location in the MPh.
        moved in any::<bool>(),
        // Where there is a leader and a machine gun, half the time the leader holds it and
        // fires it alone (A9.12).
        leader_holds in any::<bool>(),
    ) {
        let leader_holds = leader_holds && leader.is_some() && weapon.is_some();
        let opportune = opportune && phase == FirePhase::Advancing;
        let moved = moved && !opportune && phase == FirePhase::Advancing;
        let (by, _, _) = phase.firing();
        let at = match next_to {
            Some(i) => NEXT_TO_TARGET[i].to_string(),
            None => format!("2{}{row}", column_letter(column)),
        };
        prop_assume!(at != TARGET);
        let beside = beside(&at);
        let (terrain, tem) = TERRAIN[terrain];
        let firing = Firing {
            firers: &firers,
            at: &at,
            beside: &beside,
            leader,
            inexperienced,
            weapon: weapon.as_ref(),
            leader_holds,
        };
        let text = scenario(&firing, terrain, phase);
        let scenario = Scenario::from_toml(&text).unwrap();
        let target: Hex = TARGET.parse().unwrap();
        let from: Hex = at.parse().unwrap();
        let next: Hex = beside.parse().unwrap();
        let geometry = scenario.geometry();
        prop_assert!(geometry.is_adjacent(from, next), "{} is next to {}", beside, at);
        let range = |f: &Firer| geometry.distance(if f.beside { next } else { from }, target).unwrap();
        prop_assert!(next_to.is_none() || geometry.distance(from, target) == Some(1), "{} is next to {}", at, TARGET);
        let ranges: Vec<u32> = firers.iter().map(range).collect();
        // The range from the group's first hex, where a leader stands.
        let first_range = geometry.distance(from, target).unwrap();
        let mut names: Vec<String> = (0..firers.len()).map(|i| format!("g{i}")).collect();
        if leader.is_some() {
            names.push("ldr".into());
        }
        let marked = if opportune { names.clone() } else { vec![] };
        let mut game = fire_phase(scenario, phase, &marked);
        if moved {
            // The record `apply` keeps of the MPh's moves (A4.41), set as a move would leave it.
            game.moved_weapons.insert("mg".into());
        }

        // A9.11: a half-squad holding the MG fires it without its own FP, which it forfeits;
        // A9.12: a leader holding it fires it alone.
        let own = !(weapon.is_some() && firers[0].half && !leader_holds);
        if !own {
            names.retain(|n| n != "g0");
        }
        if leader_holds {
            names.clear();
        }
        if weapon.is_some() {
            names.push("mg".into());
        }
        let declare = Command::DeclareAttack { firers: names, target, into_sewer: false };
        let declared = decide(&game, by, &declare, &mut ScriptedDice::default());
        // A4.41: an MMG that changed Location in the MPh does not fire in the AFPh; an LMG does.
        if moved && weapon.as_ref().is_some_and(|w| w.name == "MMG") {
            let refusal = declared.expect_err("a moved MMG does not fire in the AFPh");
            prop_assert_eq!(refusal.rule.as_str(), "A4.41");
            return Ok(());
        }
        // A7.531: the leader in the first hex directs no Fire Group with a firer beside it.
        if leader.is_some() && !leader_holds && firers.iter().any(|f| f.beside) {
            let refusal = declared.expect_err("a leader cannot direct a group of two Locations");
            prop_assert_eq!(refusal.rule.as_str(), "A7.531");
            return Ok(());
        }
        // A7.22: a firer beyond twice its normal range (an MMC firing its own FP, or the MG
        // from its possessor's hex) is refused at the declaration.
        let mg_from = if leader_holds { first_range } else { ranges[0] };
        let out_of_range = firers
            .iter()
            .zip(&ranges)
            .enumerate()
            .any(|(i, (f, r))| !leader_holds && (i != 0 || own) && *r > 2 * f.range)
            || weapon.as_ref().is_some_and(|w| mg_from > 2 * w.range);
        if out_of_range {
            let refusal = declared.expect_err("no fire beyond twice the normal range");
            prop_assert_eq!(refusal.rule.as_str(), "A7.22");
            return Ok(());
        }
        for e in declared.unwrap() {
            apply(&mut game, &e);
        }
        let [a, b, c, d] = dice;
        let mut script = ScriptedDice::new([a, b, c, d]).unwrap();
        let events = decide(&game, by, &Command::ResolveAttack, &mut script).unwrap();

        // Each firer's FP in halves after range (A7.21, A7.22), halved again in the AFPh
        // (A7.24), or the first rule, firer by firer, that puts the attack beyond the engine:
        // a quarter point left by a leader's Area Fire (A9.12) or by Advancing Fire (A7.24).
        let mut halves = 0;
        let mut beyond = None;
        // In the DFPh a weapon with no Fire counter fires as in Prep Fire (A8.1, A8.4). The MG
        // fires from its possessor's hex, at its own normal range (A9.1), after the MMC whose
        // own FP fires: none beside a leader's MG, and not a half-squad's with its MG (A9.11).
        let mmc: Vec<(u32, u32, u32)> = firers
            .iter()
            .zip(&ranges)
            .enumerate()
            .filter(|(i, _)| !leader_holds && (*i != 0 || own))
            .map(|(_, (f, r))| (f.fp, f.range, *r))
            .collect();
        // The leader stands in the group's first hex; the first MMC there or beside it.
        let shares = mmc.iter().map(|&(fp, n, r)| (fp, n, r, false)).chain(weapon.iter().map(|w| (w.fp, w.range, mg_from, true)));
        for (fp, normal, range, is_mg) in shares {
            let h = match range {
                1 => fp * 4,
                r if r <= normal => fp * 2,
                r => {
                    prop_assert!(r <= normal * 2, "refused at the declaration (A7.22)");
                    fp
                }
            };
            // A9.12: a leader's MG fired alone is Area Fire, ×½ after range; a quarter point
            // is finer than the engine keeps.
            let h = match (leader_holds && is_mg, h % 2) {
                (false, _) => h,
                (true, 0) => h / 2,
                (true, _) => {
                    beyond.get_or_insert("A9.12");
                    0
                }
            };
            halves += match phase {
                // A7.25: an Opportunity Firer's FP is not halved in the AFPh.
                FirePhase::Advancing if opportune => h,
                FirePhase::Advancing if h % 2 == 1 => {
                    beyond.get_or_insert("A7.24");
                    0
                }
                FirePhase::Advancing => h / 2,
                _ => h,
            };
        }
        let whole = halves / 2;
        let left = events.iter().find_map(|e| match e {
            Event::AttackLeftToPlayers(AttackLeftToPlayers { rule, .. }) => Some(rule.clone()),
            _ => None,
        });
        if let Some(rule) = beyond {
            prop_assert_eq!(left.as_deref(), Some(rule), "{:?}", events);
            return Ok(());
        }
        if whole == 0 {
            prop_assert_eq!(left.as_deref(), Some("A7.3"), "{:?}", events);
            return Ok(());
        }
        prop_assert_eq!(left, None, "the engine resolves this attack: {:?}", events);

        let roll = events.iter().find_map(|e| match e {
            Event::DiceRolled(DiceRolled { roll }) if roll.purpose == RollPurpose::Ift => Some(roll.clone()),
            _ => None,
        }).expect("the IFT's DR is rolled");
        prop_assert_eq!(&roll.dice, &vec![a, b]);
        let (fp, logged_column, cowered, final_dr, result) = events.iter().find_map(|e| match e {
            Event::IftAttackResolved(IftAttackResolved { fp, column, cowered, final_dr, result, .. }) =>
                Some((fp.clone(), *column, *cowered, *final_dr, result.clone())),
            _ => None,
        }).expect("an IFT reading follows the roll");

        // A7.2: the total keeps its half point until the column is chosen.
        let fp_words = if halves % 2 == 0 { format!("{whole}") } else { format!("{whole}½") };
        prop_assert_eq!(fp, fp_words);
        // A7.3: the highest column not above the whole FP.
        let base = COLUMNS.iter().rposition(|&c| u32::from(c) <= whole).unwrap();
        // A7.9: doubles cower one column left (two with an Inexperienced firer) unless a
        // leader directs, or fires the MG himself (A9.12); off the 1 column there is no effect.
        let directs = leader.is_some();
        prop_assert_eq!(cowered, a == b && !directs);
        let shift = if inexperienced && !leader_holds { 2 } else { 1 };
        let read = if cowered { base.checked_sub(shift) } else { Some(base) };
        // The Final DR: the dice, the TEM and a leader's DRM (A7.53), which a leader firing the
        // MG himself does not give (A9.12).
        let drm = if leader_holds { 0 } else { leader.unwrap_or(0) };
        let want_dr = i16::from(a) + i16::from(b) + tem + i16::from(drm);
        prop_assert_eq!(final_dr, want_dr);
        prop_assert_eq!(roll.final_result, want_dr);
        let want = match read {
            Some(i) => {
                prop_assert_eq!(logged_column, COLUMNS[i]);
                source_b(COLUMNS[i], want_dr)
            }
            None => "NE".to_string(),
        };
        prop_assert_eq!(&result, &want, "{} FP at ranges {:?} on {} in {:?} (Opportunity Fire: {})", whole, ranges, terrain, phase, opportune);

        // A9.7: the MG malfunctions when the Original DR reaches its B#; A9.2: otherwise it
        // keeps its Multiple ROF when the coloured dr, the first die, is at or below its ROF.
        let malfunctioned = events.iter().any(|e| matches!(e, Event::WeaponMalfunctioned(WeaponMalfunctioned { weapon, .. }) if weapon == "mg"));
        let kept = events.iter().any(|e| matches!(e, Event::MultipleRofRetained(MultipleRofRetained { weapon, .. }) if weapon == "mg"));
        let broke = weapon.as_ref().is_some_and(|w| a + b >= w.breakdown);
        prop_assert_eq!(malfunctioned, broke);
        // A4.41: in the AFPh one shot whatever the ROF, but for an Opportunity Firer's.
        let one_shot = phase == FirePhase::Advancing && !opportune;
        prop_assert_eq!(kept, !broke && !one_shot && weapon.as_ref().and_then(|w| w.rof).is_some_and(|rof| a <= rof));

        // The lone target takes the result: a KIA eliminates it (A7.301), a K/# reduces it
        // (A7.302), with no Random Selection roll; other results roll its check.
        let outcomes: Vec<Outcome> = events.iter().filter_map(|e| match e {
            Event::FireEffectApplied(FireEffectApplied { unit, outcome, .. }) if unit == "r1" => Some(*outcome),
            _ => None,
        }).collect();
        if want.ends_with("KIA") {
            prop_assert_eq!(outcomes, vec![Outcome::Eliminate]);
        } else if want.starts_with("K/") {
            prop_assert_eq!(outcomes, vec![Outcome::Reduce]);
        } else if want == "NE" {
            prop_assert!(outcomes.is_empty());
        } else {
            let check = events.iter().filter(|e| matches!(e,
                Event::DiceRolled(DiceRolled { roll }) if roll.purpose != RollPurpose::Ift)).count();
            prop_assert_eq!(check, 1, "one check for {}: {:?}", want, events);
        }
    }
}

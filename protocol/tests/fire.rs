//! The law of fire by the rules (A7.3): whatever attack is declared and whatever the dice, the
//! result the engine logs is the IFT's entry for the column it logged and the Final DR it
//! logged; that column is the one the FP total falls in, moved one to the left (two with an
//! Inexperienced firer) when the dice are doubles and no leader directs (A7.9); and the Final DR is the dice plus the DRMs logged
//! with them. Random attacks from the German stacks of the A7 position, random dice. And the
//! law of its effects (A10.1, A7.8): a PTC, NMC or nMC result is followed by the target's check,
//! its DR the next two dice plus the +n of an nMC; failed (above the 4-4-7's morale of 7), the
//! unit is broken, or pinned by a PTC; passed, it is neither, but an MC passed at exactly its
//! morale pins (A7.8) and an Original 12 on an MC reduces, then breaks (A10.31). A KIA eliminates the lone unit and
//! a K/# reduces it to a half-squad (A7.301, A7.302), with no Random Selection roll. Fire
//! Groups with support weapons keep the law, a weapon malfunctions exactly when the Original
//! DR reaches its Breakdown Number (A9.7), and keeps its Multiple ROF exactly when the coloured
//! dr is at or below its ROF and it did not malfunction (A9.2).

use proptest::prelude::*;
use protocol::dice::RollPurpose;
use protocol::event::{
    DiceRolled, FireEffectApplied, IftAttackResolved, MultipleRofRetained, WeaponMalfunctioned,
};
use protocol::game::{apply, Game};
use protocol::rules::fire::ift::{self, IftColumn, IftResult};
use protocol::ReadScenario;
use protocol::{decide, Command, Event, Hex, Scenario, ScriptedDice, Side};

fn scenario() -> Scenario {
    Scenario::from_toml(include_str!("positions/scenarios/a7-fire.toml")).unwrap()
}

/// The German Prep Fire Phase of the A7 position.
fn prep_fire() -> Game {
    let mut game = Game::new(scenario());
    // The end-of-RPh steps pass by themselves where nobody could claim WA (B9.322).
    while game.clock.phase() != protocol::phase::Phase::PrepFire {
        let events = decide(
            &game,
            game.acting(),
            &Command::Done,
            &mut ScriptedDice::default(),
        )
        .unwrap();
        for e in &events {
            apply(&mut game, e);
        }
    }
    assert_eq!(game.clock.phase(), protocol::phase::Phase::PrepFire);
    game
}

/// Fire Groups of the position that the engine resolves, with their target hex.
const GROUPS: &[(&[&str], &str)] = &[
    (&["h1"], "2E5"),
    (&["f1"], "2E5"),
    (&["h1", "f1", "h2"], "2E5"),
    (&["g1", "g2"], "2E5"),
    (&["d1"], "2E5"),
    (&["c1"], "2E5"),
    (&["b1"], "2E5"),
    (&["b1", "b2", "b3"], "2E5"),
    (&["a1", "a2", "a3"], "2E5"),
    (&["e1", "e2"], "2E5"),
    (&["l10", "s1", "s2", "s3"], "2E5"),
    (&["l10", "s1"], "2E5"),
    (&["j1", "l9"], "2E5"),
    (&["ix"], "2E5"),
    (&["w1"], "2W5"),
    (&["s4"], "2S5"),
    (&["p1"], "2P5"),
    (&["y1"], "2Y8"),
    // Support weapons fired with or without their possessors' own FP (A9.1, A9.11).
    (&["d1", "dlmg"], "2E5"),
    (&["dlmg"], "2E5"),
    (&["b1", "b2", "b3", "bmmg"], "2E5"),
];

/// The Breakdown Numbers of the position's support weapons (A9.7).
const BREAKDOWN: &[(&str, u8)] = &[("dlmg", 11), ("bmmg", 12)];

/// The Multiple ROF of the position's support weapons (A9.2).
const ROF: &[(&str, u8)] = &[("dlmg", 1), ("bmmg", 2)];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_attack_reads_the_tables_entry(
        group in 0..GROUPS.len(),
        a in 1u8..=6,
        b in 1u8..=6,
        c in 1u8..=6,
        d in 1u8..=6,
    ) {
        let mut game = prep_fire();
        let (firers, target) = GROUPS[group];
        let firers: Vec<String> = firers.iter().map(|s| s.to_string()).collect();
        let target: Hex = target.parse().unwrap();
        let declare = Command::DeclareAttack { firers: firers.clone(), target, into_sewer: false };
        for e in decide(&game, Side::A, &declare, &mut ScriptedDice::default()).unwrap() {
            apply(&mut game, &e);
        }
        let mut dice = ScriptedDice::new([a, b, c, d]).unwrap();
        let events = decide(&game, Side::A, &Command::ResolveAttack, &mut dice).unwrap();
        let roll = events.iter().find_map(|e| match e {
            Event::DiceRolled(DiceRolled { roll }) => Some(roll.clone()),
            _ => None,
        });
        let Some(roll) = roll else {
            panic!("the attack is one the engine resolves: {events:?}");
        };
        prop_assert_eq!(roll.purpose, RollPurpose::Ift);
        prop_assert_eq!(&roll.dice, &vec![a, b]);
        let (fp, column, cowered, final_dr, result) = events.iter().find_map(|e| match e {
            Event::IftAttackResolved(IftAttackResolved { fp, column, cowered, final_dr, result, .. }) =>
                Some((fp.clone(), *column, *cowered, *final_dr, result.clone())),
            _ => None,
        }).expect("an IFT reading follows the roll");
        let drm: i16 = roll.modifiers.iter().map(|m| i16::from(m.value)).sum();
        prop_assert_eq!(final_dr, i16::from(a) + i16::from(b) + drm);
        prop_assert_eq!(final_dr, roll.final_result);
        // The column the FP total falls in (whole FP; a ½ never reaches a column).
        let whole: u32 = fp.trim_end_matches('½').parse().unwrap();
        let base = IftColumn::for_fp(whole).unwrap();
        let directed = firers.iter().any(|f| f.starts_with('l'));
        prop_assert_eq!(cowered, a == b && !directed);
        // An Inexperienced firer (only `ix` here) cowers two columns.
        let shift = if firers.iter().any(|f| f == "ix") { 2 } else { 1 };
        let read = if cowered { base.left(shift) } else { Some(base) };
        match read {
            Some(c) => {
                prop_assert_eq!(column, c.fp());
                prop_assert_eq!(IftResult::parse(&result), Some(ift::result(c, final_dr)));
            }
            None => prop_assert_eq!(result.as_str(), "NE"),
        }
        // A9.7: each SW firing malfunctions exactly when the Original DR reaches its B#.
        let malfunctioned: Vec<String> = events.iter().filter_map(|e| match e {
            Event::WeaponMalfunctioned(WeaponMalfunctioned { weapon, original_dr, .. }) => {
                assert_eq!(*original_dr, a + b);
                Some(weapon.clone())
            }
            _ => None,
        }).collect();
        let want: Vec<String> = BREAKDOWN
            .iter()
            .filter(|(w, bn)| firers.iter().any(|f| f == w) && a + b >= *bn)
            .map(|(w, _)| w.to_string())
            .collect();
        prop_assert_eq!(&malfunctioned, &want);
        // A9.2: each SW firing keeps its Multiple ROF exactly when the Original coloured dr
        // (the first die) is at or below its ROF and it did not malfunction.
        let kept: Vec<String> = events.iter().filter_map(|e| match e {
            Event::MultipleRofRetained(MultipleRofRetained { weapon, coloured_dr, .. }) => {
                assert_eq!(*coloured_dr, a);
                Some(weapon.clone())
            }
            _ => None,
        }).collect();
        let want: Vec<String> = ROF
            .iter()
            .filter(|(w, rof)| {
                firers.iter().any(|f| f == w) && a <= *rof && !malfunctioned.iter().any(|m| m == w)
            })
            .map(|(w, _)| w.to_string())
            .collect();
        prop_assert_eq!(kept, want);
        // The check the result calls for, on the lone 4-4-7 of the target hex.
        let checks: Vec<_> = events.iter().filter_map(|e| match e {
            Event::DiceRolled(DiceRolled { roll }) if roll.purpose != RollPurpose::Ift => Some(roll.clone()),
            _ => None,
        }).collect();
        let effects: Vec<protocol::command::Outcome> = events.iter().filter_map(|e| match e {
            Event::FireEffectApplied(FireEffectApplied { outcome, .. }) => Some(*outcome),
            _ => None,
        }).collect();
        let check = match IftResult::parse(&result).unwrap() {
            IftResult::Ptc => Some((RollPurpose::PinTaskCheck, 0, protocol::command::Outcome::Pin)),
            IftResult::Nmc => Some((RollPurpose::NormalMoraleCheck, 0, protocol::command::Outcome::Break)),
            IftResult::Mc(n) => Some((RollPurpose::MoraleCheck, i16::from(n), protocol::command::Outcome::Break)),
            _ => None,
        };
        // A KIA or K/# on the lone unit picks it with no Random Selection roll (A.9): a KIA
        // eliminates it (A7.301); a K/# reduces the squad (A7.302), whose MC as a half-squad
        // waits for the ratings the players enter, so no check is rolled.
        let lone = match IftResult::parse(&result).unwrap() {
            IftResult::Kia(_) => vec![protocol::command::Outcome::Eliminate],
            IftResult::K(_) => vec![protocol::command::Outcome::Reduce],
            _ => vec![],
        };
        match check {
            None => {
                prop_assert!(checks.is_empty());
                prop_assert_eq!(effects, lone);
            }
            Some((purpose, n, outcome)) => {
                prop_assert_eq!(checks.len(), 1);
                let mc = &checks[0];
                prop_assert_eq!(mc.purpose, purpose);
                prop_assert_eq!(&mc.dice, &vec![c, d]);
                prop_assert_eq!(mc.final_result, i16::from(c) + i16::from(d) + n);
                use protocol::command::Outcome;
                let is_mc = purpose != RollPurpose::PinTaskCheck;
                // An Original 12 on an MC is a Casualty MC (A10.31): the squad is reduced, then
                // breaks. An MC passed at exactly the morale pins (A7.8).
                let want = if is_mc && c + d == 12 {
                    vec![Outcome::Reduce, Outcome::Break]
                } else if mc.final_result > 7 {
                    vec![outcome]
                } else if is_mc && mc.final_result == 7 {
                    vec![Outcome::Pin]
                } else {
                    vec![]
                };
                prop_assert_eq!(effects, want);
            }
        }
        // The attack ends with AttackResolved; only the Wall Advantage a broken unit loses
        // (B9.32) and the DM counter a unit that broke takes (A10.62) follow it, as
        // consequences of the new position.
        let end = events.iter().position(|e| matches!(e, Event::AttackResolved(_)));
        prop_assert!(end.is_some(), "the attack ends with AttackResolved");
        let after = &events[end.unwrap() + 1..];
        prop_assert!(
            after.iter().all(|e| e.name().starts_with("WallAdvantage")
                || e.name().starts_with("DesperationMorale")),
            "only WA and DM changes follow the attack: {after:?}"
        );
    }
}

/// The German MPh of the A8 position, with `ga` moved two hexes across Open Ground to 2E4: a
/// stack that is not Assault Moving (A4.61), in the open, for Defensive First Fire (A8.1).
fn first_fire() -> Game {
    let scenario =
        Scenario::from_toml(include_str!("positions/scenarios/a8-defensive-fire.toml")).unwrap();
    let mut game = Game::new(scenario);
    // To the MPh, through the end-of-RPh steps that do not pass by themselves (B9.322).
    while game.clock.phase() != protocol::phase::Phase::Movement {
        let events = decide(
            &game,
            game.acting(),
            &Command::Done,
            &mut ScriptedDice::default(),
        )
        .unwrap();
        for e in &events {
            apply(&mut game, e);
        }
    }
    let steps = [
        (
            Side::A,
            Command::Move {
                units: vec!["ga".into()],
                to: "2E3".parse().unwrap(),
            },
        ),
        (
            Side::A,
            Command::Move {
                units: vec!["ga".into()],
                to: "2E4".parse().unwrap(),
            },
        ),
    ];
    for (side, command) in steps {
        for e in decide(&game, side, &command, &mut ScriptedDice::default()).unwrap() {
            apply(&mut game, &e);
        }
    }
    assert_eq!(game.clock.phase(), protocol::phase::Phase::Movement);
    game
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// The same law for Defensive First Fire at the moving stack (A8.1): the logged result is
    /// the table's entry for the logged column and Final DR, and the DRMs logged with the dice
    /// include FFMO and FFNAM (A4.6), −1 each.
    #[test]
    fn first_fire_reads_the_tables_entry(
        firer in prop::sample::select(vec!["ra", "rc", "rd"]),
        a in 1u8..=6,
        b in 1u8..=6,
    ) {
        let mut game = first_fire();
        let declare = Command::DeclareAttack {
            firers: vec![firer.to_string()],
            target: "2E4".parse().unwrap(),
            into_sewer: false,
        };
        for e in decide(&game, Side::B, &declare, &mut ScriptedDice::default()).unwrap() {
            apply(&mut game, &e);
        }
        let mut dice = ScriptedDice::new([a, b, 6, 6]).unwrap();
        let events = decide(&game, Side::B, &Command::ResolveAttack, &mut dice).unwrap();
        let roll = events.iter().find_map(|e| match e {
            Event::DiceRolled(DiceRolled { roll }) if roll.purpose == RollPurpose::Ift => Some(roll.clone()),
            _ => None,
        }).expect("the engine resolves First Fire at a stack that moved two hexes in the open");
        prop_assert_eq!(&roll.dice, &vec![a, b]);
        let moving: Vec<&str> = roll.modifiers.iter()
            .filter(|m| m.rule == "A4.6")
            .map(|m| if m.reason.starts_with("FFMO") { "FFMO" } else { "FFNAM" })
            .collect();
        prop_assert_eq!(moving, vec!["FFMO", "FFNAM"]);
        prop_assert!(roll.modifiers.iter().filter(|m| m.rule == "A4.6").all(|m| m.value == -1));
        let drm: i16 = roll.modifiers.iter().map(|m| i16::from(m.value)).sum();
        let (fp, column, cowered, final_dr, result) = events.iter().find_map(|e| match e {
            Event::IftAttackResolved(IftAttackResolved { fp, column, cowered, final_dr, result, .. }) =>
                Some((fp.clone(), *column, *cowered, *final_dr, result.clone())),
            _ => None,
        }).expect("an IFT reading follows the roll");
        prop_assert_eq!(final_dr, i16::from(a) + i16::from(b) + drm);
        prop_assert_eq!(cowered, a == b);
        let whole: u32 = fp.trim_end_matches('½').parse().unwrap();
        let base = IftColumn::for_fp(whole).unwrap();
        match if cowered { base.left(1) } else { Some(base) } {
            Some(c) => {
                prop_assert_eq!(column, c.fp());
                prop_assert_eq!(IftResult::parse(&result), Some(ift::result(c, final_dr)));
            }
            None => prop_assert_eq!(result.as_str(), "NE"),
        }
    }
}

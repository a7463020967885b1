//! What a command would do, asked before sending it (`ClientMessage::Preview`): the same
//! decision a command gets — [`dispute::decide`](crate::record::dispute::decide), which hands
//! the rules' commands to [`rules::decide`](crate::rules::decide) — against the position and the
//! log, with nothing appended, applied or rolled.
//!
//! A preview is free and may be asked again and again, so it must say no more than sending the
//! command and having it refused would: the refusal itself (which a real refused command shows
//! too), or "allowed" with the cost of a step worked out from the terrain and the actor's own
//! units (`MoveCost`, the MF accounts). What the decision would reveal or set off — a concealed
//! unit barring the way (A12.15), a WA chance, a die roll — is never part of the answer: a move
//! into a hex a concealed enemy holds is previewed exactly like a move into an empty one.

use crate::board::scenario::Side;
use crate::game::command::Command;
use crate::game::dice::DiceSource;
use crate::game::event::{Event, MfAccount, MoveCost};
use crate::game::Game;
use crate::record::chain::Entry;
use crate::rules::violation::RuleViolation;
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// What an allowed command would cost, as far as the actor may know before sending it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Preview {
    /// In words: "3 MF: 1 COT (B1) + 2 wall (B9.4); 447a left 1 of 4", or "allowed" for a
    /// command whose cost is not counted in MF.
    pub summary: String,
    /// The step's cost, line by line, for a move or Bypass.
    pub cost: Option<MoveCost>,
    /// Each moving unit's MF after the command.
    pub mf: Vec<MfAccount>,
}

/// Dice for a preview: every die is a 1 and nothing is logged. A preview never shows what
/// follows a roll (no check that can refuse comes after the first die, so whether the command
/// is allowed is decided before any), and these faces never leave the server.
struct NoDice;

impl DiceSource for NoDice {
    fn roll_die(&mut self) -> Option<u8> {
        Some(1)
    }
}

/// Previews `command` for side `by` on `game`, whose log is `log` (`log[i]` is event `i + 1`).
/// Changes nothing; the refusal is the one the command itself would get.
pub fn preview(
    game: &Game,
    log: &[Entry],
    by: Side,
    command: &Command,
) -> Result<Preview, RuleViolation> {
    preview_at(game, log, by, command, None)
}

/// [`preview`] at the server's time `now`, as the command itself would be decided in a game
/// with a time control (`rules::timing`): a clock's own command, a side out of time.
pub fn preview_at(
    game: &Game,
    log: &[Entry],
    by: Side,
    command: &Command,
    now: Option<u64>,
) -> Result<Preview, RuleViolation> {
    let events = crate::rules::timing::timed(game, by, command, now, || {
        crate::record::dispute::decide(game, log, by, command, &mut NoDice)
    })?;
    // Only the commands that roll no dice and whose cost is the actor's own arithmetic are
    // priced; the first event that carries the step's cost is the step.
    let priced = matches!(
        command,
        Command::Move { .. }
            | Command::Bypass { .. }
            | Command::DoubleTime { .. }
            | Command::PickUp { .. }
            | Command::TakeShellholeCover { .. }
            | Command::Enter { .. }
    );
    let step = priced
        .then(|| {
            events.iter().find_map(|event| match event {
                Event::UnitMoved { cost, mf, .. }
                | Event::UnitBypassed { cost, mf, .. }
                | Event::UnitEntryBlocked { cost, mf, .. }
                | Event::UnitsEntered { cost, mf, .. } => Some((Some(cost.clone()), mf.clone())),
                Event::DoubleTimeDeclared { mf, .. } | Event::ShellholeCoverTaken { mf, .. } => {
                    Some((None, mf.clone()))
                }
                Event::WeaponPickedUp { mf, .. } => Some((None, vec![mf.clone()])),
                _ => None,
            })
        })
        .flatten();
    let Some((cost, mf)) = step else {
        return Ok(Preview {
            summary: fire_words(game, by, command).unwrap_or_else(|| "allowed".into()),
            cost: None,
            mf: vec![],
        });
    };
    Ok(Preview {
        summary: summary(cost.as_ref(), &mf),
        cost,
        mf,
    })
}

/// For an attack, what the engine will make of it before the dice (A7): FP, column and DRMs
/// with their rules, or why it will be the players'. The assessment reads the firer's own units
/// and the enemy units it may see, nothing a refusal would not show.
fn fire_words(game: &Game, by: Side, command: &Command) -> Option<String> {
    use crate::rules::fire::resolution::describe;
    match command {
        Command::DeclareAttack {
            firers,
            target,
            into_sewer,
        } => Some(describe(game, by, firers, *target, *into_sewer)),
        Command::ResolveAttack => game
            .attack
            .as_ref()
            .map(|a| describe(game, by, &a.firers, a.target, a.into_sewer)),
        _ => None,
    }
}

/// "2 MF: 1 COT (B1) + 1 hedge (B9.4); 467a left 2 of 4".
fn summary(cost: Option<&MoveCost>, mf: &[MfAccount]) -> String {
    let mut s = match cost {
        Some(cost) if cost.all_mf => crate::rules::movement::describe(cost),
        Some(cost) => format!(
            "{} MF: {}",
            cost.total,
            crate::rules::movement::describe(cost)
        ),
        None => "allowed".into(),
    };
    for (i, a) in mf.iter().enumerate() {
        let _ = write!(
            s,
            "{} {} left {} of {}",
            if i == 0 { ";" } else { "," },
            a.unit,
            a.left,
            a.allotment.total
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::hex::Hex;
    use crate::record::referee::testing::{self, start_with, to_german_mph};
    use crate::record::referee::Referee;
    use crate::rules::wall_advantage::ReadScenario;

    const WA: &str = include_str!("../../../scenarios/b9-41-wall-advantage.toml");

    #[test]
    fn an_attack_is_previewed_with_its_fp_column_and_drms() {
        let scenario = crate::board::scenario::Scenario::from_toml(include_str!(
            "../../tests/positions/scenarios/a7-fire.toml"
        ))
        .unwrap();
        let mut game = Game::new(scenario);
        for side in [Side::A, Side::A, Side::B] {
            let events = crate::rules::decide(
                &game,
                side,
                &Command::Done,
                &mut crate::game::dice::ScriptedDice::default(),
            )
            .unwrap();
            for e in &events {
                crate::game::apply(&mut game, e);
            }
        }
        let fire = |firers: &[&str], target: &str| Command::DeclareAttack {
            firers: firers.iter().map(|f| f.to_string()).collect(),
            target: target.parse().unwrap(),
            into_sewer: false,
        };
        let woods = preview(&game, &[], Side::A, &fire(&["w1"], "2W5")).unwrap();
        assert_eq!(
            woods.summary,
            "8 FP (w1 8 at range 1, PBF ×2 (A7.21)) on the 8 column (A7.3); DRM +1 TEM: in-hex TEM 1 (Woods B13) (B13); doubles cower 1 column(s) left (A7.9)"
        );
        let apart = preview(&game, &[], Side::A, &fire(&["n1", "n2"], "2M9")).unwrap();
        assert!(
            apart.summary.ends_with(
                "a Fire Group of several Locations is not resolved by the engine (A7.5)"
            ),
            "{}",
            apart.summary
        );
    }

    fn hex(name: &str) -> Hex {
        testing::hex(name)
    }

    fn mover(unit: &str, to: &str) -> Command {
        Command::Move {
            units: vec![unit.into()],
            to: hex(to),
        }
    }

    fn at_mph(toml: &str) -> Referee {
        let mut r = start_with(toml, 3);
        to_german_mph(&mut r);
        r
    }

    /// B9.4 EX: H7 → I8 across a wall and up a level costs 1 + [2 × 1]; the preview says so
    /// and changes nothing.
    #[test]
    fn a_step_is_priced_by_the_rules_and_nothing_changes() {
        let r = at_mph(WA);
        let before = r.game().state_hash();
        let p = preview(r.game(), r.entries(), Side::A, &mover("447a", "55I8")).unwrap();
        assert!(p.summary.starts_with("3 MF: "), "{}", p.summary);
        assert!(p.summary.contains("B9.4"), "{}", p.summary);
        assert!(p.summary.contains("447a left 1 of 4"), "{}", p.summary);
        assert_eq!(p.cost.as_ref().unwrap().total.to_string(), "3");
        assert_eq!(r.game().state_hash(), before);
        assert_eq!(r.entries().len() as u64, r.game().version);
        // The command itself is decided the same way.
        let decided = crate::rules::decide(
            r.game(),
            Side::A,
            &mover("447a", "55I8"),
            &mut crate::game::dice::ScriptedDice::default(),
        )
        .unwrap();
        assert!(decided
            .iter()
            .any(|e| matches!(e, Event::UnitMoved { cost, .. } if Some(cost) == p.cost.as_ref())));
    }

    /// A refused preview is the refusal the command gets: same rule, same words.
    #[test]
    fn a_refusal_is_the_commands_own() {
        let mut r = at_mph(WA);
        for (side, command) in [
            (Side::A, mover("447a", "55J9")),
            (Side::B, mover("747a", "55G7")),
            (Side::A, mover("nobody", "55H8")),
        ] {
            let previewed = preview(r.game(), r.entries(), side, &command).unwrap_err();
            let sent = r.play(side, &command, &mut testing::seeds()).unwrap_err();
            assert_eq!(previewed, sent, "{command:?}");
        }
    }

    /// A move into the hex the concealed 3-3-7 holds would be barred (A12.15), but the
    /// preview says exactly what it says with the hex empty: it reveals nothing.
    #[test]
    fn a_preview_reveals_no_concealed_unit() {
        let with = at_mph(WA);
        let without_text = WA.replace("hex = \"55I7\"\nconcealed = true", "hex = \"55J9\"");
        assert_ne!(without_text, WA);
        let without = at_mph(&without_text);
        let command = mover("447a", "55I7");
        let sent = crate::rules::decide(
            with.game(),
            Side::A,
            &command,
            &mut crate::game::dice::ScriptedDice::default(),
        )
        .unwrap();
        assert!(sent
            .iter()
            .any(|e| matches!(e, Event::UnitEntryBlocked { .. })));
        let a = preview(with.game(), with.entries(), Side::A, &command).unwrap();
        let b = preview(without.game(), without.entries(), Side::A, &command).unwrap();
        assert_eq!(a, b);
        assert!(!a.summary.contains("337a"), "{}", a.summary);
    }

    /// A sewer move rolls the lost dr when sent (B8.41); its preview rolls nothing and says
    /// only that it is allowed.
    #[test]
    fn a_command_that_rolls_is_allowed_without_its_dice() {
        let mut r = testing::start(5);
        to_german_mph(&mut r);
        let drawn = r.game().dice_drawn;
        let command = Command::SewerMove {
            units: vec!["g1".into(), "g2".into(), "gl".into()],
            to: hex("20E4"),
        };
        let p = preview(r.game(), r.entries(), Side::A, &command).unwrap();
        assert_eq!(p.summary, "allowed");
        assert!(p.cost.is_none() && p.mf.is_empty());
        assert_eq!(r.game().dice_drawn, drawn);
    }
}

//! What a command would do, asked before sending it (`ClientMessage::Preview`): the same
//! decision a command gets — [`dispute::decide`](crate::dispute::decide), which hands
//! the rules' commands to [`rules::decide`] — against the position and the
//! log, with nothing appended, applied or rolled.
//!
//! A preview is free and may be asked again and again, so it must say no more than sending the
//! command and having it refused would: the refusal itself (which a real refused command shows
//! too), or "allowed" with the cost of a step worked out from the terrain and the actor's own
//! units (`MoveCost`, the MF accounts). What the decision would reveal or set off — a concealed
//! unit barring the way (A12.15), a WA chance, a die roll — is never part of the answer: a move
//! into a hex a concealed enemy holds is previewed exactly like a move into an empty one.

use crate::chain::Entry;
use board::hex::Hex;
use board::los::Verdict;
use board::scenario::{Side, UnitId};
use game::command::Command;
use game::dice::{DiceSource, Modifier};
use game::event::{
    DoubleTimeDeclared, RecoveryAttempted, ShellholeCoverTaken, UnitBypassed, UnitEntryBlocked,
    UnitMoved, UnitsEntered, WeaponPickedUp,
};
use game::event::{Event, MfAccount, MoveCost};
use game::Game;
use rules::violation::RuleViolation;
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
    /// For an attack (declared, or open and about to be resolved), what the rules make of it
    /// before the dice, piece by piece, for the page's fire panel.
    pub attack: Option<FirePreview>,
}

/// An attack before its dice (A7): what `rules::fire::resolution::assess` says of it, and each
/// firer's LOS to the target hex. Built from the firer's own units and what its side sees: the
/// LOS is traced to the target hex's ground-level Location, not to any unit there, so a hidden
/// or concealed unit changes nothing in it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FirePreview {
    pub target: Hex,
    pub assessment: FireAssessment,
    pub los: Vec<FirerLos>,
}

/// Whether the engine resolves the attack, and if so with what.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FireAssessment {
    /// The engine rolls it on the IFT (A7.3).
    Resolved {
        /// The FP total, fractions kept (A7.2): "8", "2½".
        fp: String,
        /// Each firer's share: "w1 8 at range 1, PBF ×2 (A7.21)".
        shares: Vec<String>,
        /// The IFT column (A7.3).
        column: String,
        /// Each DRM with its reason and rule.
        drms: Vec<Modifier>,
        /// What doubles would do (A7.9).
        cowering: String,
    },
    /// The engine leaves the outcome to the players, for this reason.
    LeftToPlayers { rule: String, why: String },
}

/// One firer's LOS to the target hex (A6), with the tracer's reasons.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FirerLos {
    pub unit: UnitId,
    /// `None` when it cannot be traced (the reasons say why).
    pub verdict: Option<Verdict>,
    pub reasons: Vec<String>,
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
    let events = crate::dispute::decide_timed(game, log, by, command, now, &mut NoDice)?.events;
    // Only the commands whose cost is the actor's own arithmetic are priced — a Recovery's
    // extra MF is spent whatever its dr (A4.44) —; the first event that carries the step's
    // cost is the step.
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
                Event::UnitMoved(UnitMoved { cost, mf, .. })
                | Event::UnitBypassed(UnitBypassed { cost, mf, .. })
                | Event::UnitEntryBlocked(UnitEntryBlocked { cost, mf, .. })
                | Event::UnitsEntered(UnitsEntered { cost, mf, .. }) => {
                    Some((Some(cost.clone()), mf.clone()))
                }
                Event::DoubleTimeDeclared(DoubleTimeDeclared { mf, .. })
                | Event::ShellholeCoverTaken(ShellholeCoverTaken { mf, .. }) => {
                    Some((None, mf.clone()))
                }
                Event::WeaponPickedUp(WeaponPickedUp { mf, .. }) => Some((None, vec![mf.clone()])),
                Event::RecoveryAttempted(RecoveryAttempted { mf, .. }) if !mf.is_empty() => {
                    Some((None, mf.clone()))
                }
                _ => None,
            })
        })
        .flatten();
    let Some((cost, mf)) = step else {
        return Ok(Preview {
            summary: fire_words(game, by, command).unwrap_or_else(|| "allowed".into()),
            cost: None,
            mf: vec![],
            attack: fire_preview(game, by, command),
        });
    };
    Ok(Preview {
        summary: summary(cost.as_ref(), &mf),
        cost,
        mf,
        attack: None,
    })
}

/// The attack a command declares or resolves: its firers, target and whether into a sewer.
fn attack_of<'a>(game: &'a Game, command: &'a Command) -> Option<(&'a [UnitId], Hex, bool)> {
    match command {
        Command::DeclareAttack {
            firers,
            target,
            into_sewer,
        } => Some((firers, *target, *into_sewer)),
        Command::ResolveAttack => game
            .attack
            .as_ref()
            .map(|a| (a.firers.as_slice(), a.target, a.into_sewer)),
        _ => None,
    }
}

/// For an attack, the fire panel's pieces (`FirePreview`): the assessment the resolution
/// will make (A7) and each firer's LOS to the target hex (A6).
fn fire_preview(game: &Game, by: Side, command: &Command) -> Option<FirePreview> {
    use rules::fire::resolution::{assess, Share};
    let (firers, target, into_sewer) = attack_of(game, command)?;
    let assessment = match assess(game, by, firers, target, into_sewer) {
        Ok(a) => FireAssessment::Resolved {
            fp: a.fp_words(),
            shares: a.shares.iter().map(Share::words).collect(),
            column: a.column.to_string(),
            drms: a.drms.clone(),
            cowering: if a.directed {
                "directed by a leader: no Cowering (A7.9)".into()
            } else {
                format!("doubles cower {} column(s) left (A7.9)", a.cower_columns)
            },
        },
        Err(u) => FireAssessment::LeftToPlayers {
            rule: u.rule.into(),
            why: u.why,
        },
    };
    let map = board::los::LosMap::of(&game.scenario);
    let los = firers
        .iter()
        .filter(|id| game.units.get(*id).is_some_and(|u| u.side == by))
        .map(|id| {
            match rules::los::between_on(
                game,
                map,
                &rules::los::Spot::Unit(id.clone()),
                &rules::los::Spot::Hex(target),
            ) {
                Ok(r) => FirerLos {
                    unit: id.clone(),
                    verdict: Some(r.verdict),
                    reasons: r.reasons,
                },
                Err(e) => FirerLos {
                    unit: id.clone(),
                    verdict: None,
                    reasons: vec![e.to_string()],
                },
            }
        })
        .collect();
    Some(FirePreview {
        target,
        assessment,
        los,
    })
}

/// For an attack, what the engine will make of it before the dice (A7): FP, column and DRMs
/// with their rules, or why it will be the players'. The assessment reads the firer's own units
/// and the enemy units it may see, nothing a refusal would not show.
fn fire_words(game: &Game, by: Side, command: &Command) -> Option<String> {
    let (firers, target, into_sewer) = attack_of(game, command)?;
    Some(rules::fire::resolution::describe(
        game, by, firers, target, into_sewer,
    ))
}

/// "2 MF: 1 COT (B1) + 1 hedge (B9.4); 467a left 2 of 4".
fn summary(cost: Option<&MoveCost>, mf: &[MfAccount]) -> String {
    let mut s = match cost {
        Some(cost) if cost.all_mf => cost.describe(),
        Some(cost) => format!("{} MF: {}", cost.total, cost.describe()),
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
    use crate::referee::testing::{self, start_with, to_german_mph};
    use crate::referee::Referee;
    use board::hex::Hex;
    use game::event::UnitMoved;
    use rules::wall_advantage::ReadScenario;

    const WA: &str = include_str!("../../../scenarios/b9-41-wall-advantage.toml");

    #[test]
    fn an_opportunity_firers_attack_is_previewed_unhalved_in_the_afph() {
        let scenario = board::scenario::Scenario::from_toml(include_str!(
            "../../tests/positions/scenarios/a7-25-opportunity-fire.toml"
        ))
        .unwrap();
        let mut game = Game::new(scenario);
        let play = |game: &mut Game, command: &Command| {
            let events = rules::decide(
                game,
                game.acting(),
                command,
                &mut game::dice::ScriptedDice::default(),
            )
            .unwrap();
            for e in &events {
                game::apply(game, e);
            }
        };
        while game.clock.phase() != game::phase::Phase::AdvancingFire {
            if game.clock.phase() == game::phase::Phase::PrepFire
                && game.opportunity_fire.is_empty()
            {
                play(
                    &mut game,
                    &Command::MarkOpportunityFire {
                        units: vec!["go".into()],
                    },
                );
            }
            play(&mut game, &Command::Done);
        }
        let fire = Command::DeclareAttack {
            firers: vec!["go".into()],
            target: "2E5".parse().unwrap(),
            into_sewer: false,
        };
        let seen = preview(&game, &[], Side::A, &fire).unwrap();
        assert_eq!(
            seen.summary,
            "4 FP (go 4 at range 2, Opportunity Fire, not halved (A7.25)) on the 4 column (A7.3); DRM none; doubles cower 1 column(s) left (A7.9)"
        );
    }

    #[test]
    fn an_attack_is_previewed_with_its_fp_column_and_drms() {
        let scenario = board::scenario::Scenario::from_toml(include_str!(
            "../../tests/positions/scenarios/a7-fire.toml"
        ))
        .unwrap();
        let mut game = Game::new(scenario);
        // To the PFPh, through the end-of-RPh steps that do not pass by themselves (B9.322).
        while game.clock.phase() != game::phase::Phase::PrepFire {
            let events = rules::decide(
                &game,
                game.acting(),
                &Command::Done,
                &mut game::dice::ScriptedDice::default(),
            )
            .unwrap();
            for e in &events {
                game::apply(&mut game, e);
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
        // The fire panel's pieces: FP, column, each DRM with its rule, the LOS to the hex.
        let Some(FirePreview {
            assessment:
                FireAssessment::Resolved {
                    fp,
                    column,
                    drms,
                    shares,
                    ..
                },
            los,
            ..
        }) = &woods.attack
        else {
            panic!("{:?}", woods.attack)
        };
        assert_eq!((fp.as_str(), column.as_str()), ("8", "8"));
        assert_eq!(shares, &["w1 8 at range 1, PBF ×2 (A7.21)"]);
        assert_eq!(
            drms.iter()
                .map(|m| (m.value, m.rule.as_str()))
                .collect::<Vec<_>>(),
            [(1, "B13")]
        );
        assert_eq!(los.len(), 1);
        assert_eq!(los[0].unit, "w1");
        assert_ne!(los[0].verdict, Some(Verdict::Blocked), "{los:?}");
        // A Fire Group with a gap in its chain of Locations is refused, as sending it would be.
        let apart = preview(&game, &[], Side::A, &fire(&["n1", "n2"], "2M9")).unwrap_err();
        assert_eq!(apart.rule, "A7.5", "{apart:?}");
        // No unit fires beyond twice its normal range: refused, as sending it would be.
        let far = preview(&game, &[], Side::A, &fire(&["far"], "2E5")).unwrap_err();
        assert_eq!(far.rule, "A7.22", "{far:?}");
        assert!(
            far.detail.contains("beyond twice its normal range of 6"),
            "{far:?}"
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
        let decided = rules::decide(
            r.game(),
            Side::A,
            &mover("447a", "55I8"),
            &mut game::dice::ScriptedDice::default(),
        )
        .unwrap();
        assert!(decided
            .iter()
            .any(|e| matches!(e, Event::UnitMoved(UnitMoved { cost, .. }) if Some(cost) == p.cost.as_ref())));
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
        let sent = rules::decide(
            with.game(),
            Side::A,
            &command,
            &mut game::dice::ScriptedDice::default(),
        )
        .unwrap();
        assert!(sent.iter().any(|e| matches!(e, Event::UnitEntryBlocked(_))));
        let a = preview(with.game(), with.entries(), Side::A, &command).unwrap();
        let b = preview(without.game(), without.entries(), Side::A, &command).unwrap();
        assert_eq!(a, b);
        assert!(!a.summary.contains("337a"), "{}", a.summary);
    }

    /// An attack's fire panel is built from what the firer's side sees: a hidden unit in the
    /// target hex beside a Known one changes nothing in it, neither the FP, DRMs and LOS nor
    /// the words (A12.3; the LOS is traced to the hex, not to any unit in it).
    #[test]
    fn a_fire_preview_reveals_no_hidden_unit() {
        const VILLAGE: &str = include_str!("../../../scenarios/village-outskirts.toml");
        let r1 = "id = \"r1\"\nside = \"russian\"\nkind = \"squad\"\nratings = \"4-4-7\"\nhex = \"12E4\"";
        let r3 = "ratings = \"2-2-7\"\nhex = \"12E5\"";
        assert!(VILLAGE.contains(r1) && VILLAGE.contains(r3));
        // The Known 4-4-7 in the wooden building 12E5, the hidden 2-2-7 with it or far off.
        let with = VILLAGE.replace(r1, &r1.replace("12E4", "12E5"));
        let without = with.replace(r3, &r3.replace("12E5", "12H8"));
        let at_pfph = |toml: &str| {
            let mut r = start_with(toml, 3);
            // The end-of-RPh steps pass by themselves where nobody could claim WA (B9.322).
            while r.game().clock.phase() != game::phase::Phase::PrepFire {
                testing::done(&mut r);
            }
            r
        };
        let (with, without) = (at_pfph(&with), at_pfph(&without));
        let command = Command::DeclareAttack {
            firers: vec!["g3".into()],
            target: hex("12E5"),
            into_sewer: false,
        };
        let a = preview(with.game(), with.entries(), Side::A, &command).unwrap();
        let b = preview(without.game(), without.entries(), Side::A, &command).unwrap();
        assert_eq!(a, b);
        assert!(
            matches!(
                &a.attack,
                Some(FirePreview {
                    assessment: FireAssessment::Resolved { .. },
                    ..
                })
            ),
            "{:?}",
            a.attack
        );
        assert!(!format!("{a:?}").contains("r3"), "{a:?}");
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

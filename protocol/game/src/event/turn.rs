//! Events of the game's course: the steps, and how a game ends (by its last turn, a
//! concession, an agreement).

use super::Sides;
use super::{Event, Fact};
use board::scenario::UnitId;

use crate::view::Names;
use crate::{end_movement_phase, end_player_turn, Clock, Game, Phase, Underground, Unit};
use board::scenario::Scenario;
use board::scenario::Side;
use serde::{Deserialize, Serialize};

/// The game began from this scenario; always the first event of a log, so a log is
/// self-contained.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameCreated {
    pub scenario: Scenario,
}

/// The acting side finished a step; the clock moved on to `next`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepEnded {
    pub by: Side,
    pub ended: Clock,
    pub next: Clock,
}

/// A step no side could act in passed by itself, with no command: an end-of-RPh step
/// (1.32B) in which no unit of the side to act could claim Wall Advantage (B9.322) or
/// repair a weapon (A9.72), or a RtPh step in which the side to act had no unit that could
/// rout (A10.5), judged from what both sides may know (`rules::passing`). The clock moved
/// on to `next` as if the step had ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepPassed {
    pub ended: Clock,
    pub next: Clock,
}

/// The last step of the last Game Turn ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameEnded {
    pub turns_played: u16,
}

/// A side gave the game up: it is over (`rules::end`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conceded {
    pub side: Side,
}

/// A side offered to end the game where it stands; the end of the step withdraws the
/// offer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndProposed {
    pub side: Side,
}

/// A side accepted the opponent's offer: the game is over by agreement.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndAgreed {
    pub side: Side,
}

impl Fact for GameCreated {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        let GameCreated { scenario } = self;
        let viewer = game.viewer;
        *game = Game::new(scenario.clone());
        if viewer.is_some() {
            // A projection's scenario is projected already: its "?" carry their aliases.
            game.aliases.clear();
            game.next_alias = 0;
            game.setup_aliases.clear();
            game.viewer = viewer;
        }
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let v = names.viewer;
        let GameCreated { scenario } = self;
        Event::GameCreated(GameCreated {
            scenario: std::sync::Arc::unwrap_or_clone(crate::project_scenario(
                &scenario.into(),
                &names.after.setup_aliases,
                v,
            )),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let GameCreated { scenario } = self;
        format!("game created from scenario \"{}\"", scenario.name)
    }
}

impl Fact for StepEnded {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        step_over(game, &self.ended, &self.next);
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let StepEnded { by, ended, next } = self;
        format!(
            "{} ended {}; now turn {} {} ({}), {} to act",
            name(*by),
            ended.step().name,
            next.turn,
            next.step().name,
            next.step().rule,
            name(next.acting(sides.first))
        )
    }
}

impl Fact for StepPassed {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        step_over(game, &self.ended, &self.next);
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let StepPassed { ended, next } = self;
        format!(
            "{} passed: the {} had {}; now turn {} {} ({}), {} to act",
            ended.step().name,
            name(ended.acting(sides.first)),
            match ended.phase() {
                Phase::Rout => {
                    "no unit that could rout, none broken and none under \"?\" (A10.5)".into()
                }
                _ => format!(
                    "no unit that could claim WA or repair a weapon ({}, A9.72)",
                    ended.step().rule
                ),
            },
            next.turn,
            next.step().name,
            next.step().rule,
            name(next.acting(sides.first))
        )
    }
}

impl Fact for GameEnded {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        end_player_turn(game, game.clock);
        game.over = true;
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let GameEnded { turns_played } = self;
        format!("game over after {turns_played} Game Turns")
    }
}

impl Fact for Conceded {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        game.over = true;
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let Conceded { side } = self;
        format!(
            "{} conceded; the game is over, won by the {}",
            name(*side),
            name(side.opponent())
        )
    }
}

impl Fact for EndProposed {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        let EndProposed { side } = self;
        game.end_proposal = Some(*side);
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let EndProposed { side } = self;
        format!(
            "{} offered to end the game here (accept-end agrees; the step's end withdraws it)",
            name(*side)
        )
    }
}

impl Fact for EndAgreed {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        game.over = true;
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let EndAgreed { side } = self;
        format!(
            "{} accepted the {}'s offer; the game is over by agreement",
            name(*side),
            name(side.opponent())
        )
    }
}

/// What the end of a step changes, whether a side ended it or it passed by itself.
fn step_over(game: &mut Game, ended: &Clock, next: &Clock) {
    // An offer to end the game is about the step it was made in: the step's end withdraws it.
    // Nothing less public may: a hidden unit's activity withdrawing it would tell the side
    // that offered (or the one asked) that something happened unseen.
    game.end_proposal = None;

    game.clock = *next;
    // A weapon's fire, and the ROF it kept, last one phase (A9.2); weapons are
    // changed only if one needs it (`end_movement_phase`).
    if ended.phase() != next.phase() && game.weapons.values().any(|w| w.fired || w.repair_tried) {
        for w in game.weapons.values_mut() {
            w.fired = false;
            w.repair_tried = false;
        }
    }
    // A Recovery attempt counts within its phase: one a unit in the RPh, one a unit and
    // weapon in the MPh (A4.44), a unit that tried in the RPh trying again in the MPh.
    if ended.phase() != next.phase() && !game.movement.recovery_attempts.is_empty() {
        game.movement.recovery_attempts.clear();
    }
    // A unit's one type of act counts within its RPh (A3.1).
    if ended.phase() != next.phase() && !game.movement.rally_phase_acts.is_empty() {
        game.movement.rally_phase_acts.clear();
    }
    if ended.phase() == Phase::Movement && next.phase() != Phase::Movement {
        end_movement_phase(game);
        // Residual FP lasts only the MPh it was left in (A8.2).
        game.residual_fp.clear();
    }
    if ended.phase() == Phase::DefensiveFire && next.phase() != Phase::DefensiveFire {
        // The DEFENDER fires no more this Player Turn: its Fire counters come off.
        game.first_fired.clear();
        game.final_fired.clear();
    }
    if ended.phase() == Phase::Rout && next.phase() != Phase::Rout {
        // Who routed this RtPh (A10.5, B8.62), and the MF and portage of their
        // routs, are forgotten with it, as the MPh's are with the MPh.
        end_movement_phase(game);
    }
    if ended.player_turn != next.player_turn || ended.turn != next.turn {
        end_player_turn(game, *ended);
    }
    let emerged = |u: &Unit| {
        matches!(
            u.underground,
            Some(Underground::Sewer {
                emergence: Some(_),
                ..
            })
        )
    };
    // Units are changed only if one needs it (`end_movement_phase`).
    if ended.turn != next.turn && game.units.values().any(emerged) {
        // Emergence results last the Game Turn (B8.42).
        for unit in game.units.values_mut() {
            if let Some(Underground::Sewer { emergence, .. }) = &mut unit.underground {
                *emergence = None;
            }
        }
    }
}

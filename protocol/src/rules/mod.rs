//! The rules state machine's decision half: [`decide`] reads a game and a command and returns
//! the events the command produces, or the rule that refuses it. It never changes the game.
//!
//! One file per command, each running its checks in the precedence documented on
//! [`ViolationKind`](crate::rules::violation::ViolationKind).

mod adjudicate;
mod attack;
mod done;
pub mod movement;
mod place;
mod roll;
pub mod sewer;
pub mod tem;
pub mod violation;
pub mod wall_advantage;

use crate::board::scenario::{Side, UnitId};
use crate::game::command::Command;
use crate::game::dice::DiceSource;
use crate::game::event::Event;
use crate::game::phase::Phase;
use crate::game::{Game, Unit};
use crate::rules::violation::{RuleViolation, ViolationKind};

/// Decides what `command`, issued by side `by`, means in `game`. Pure: the same game, command
/// and dice always give the same answer, and `game` is never modified.
pub fn decide(
    game: &Game,
    by: Side,
    command: &Command,
    dice: &mut dyn DiceSource,
) -> Result<Vec<Event>, RuleViolation> {
    if game.over {
        return Err(RuleViolation::new(
            "A3",
            ViolationKind::GameOver,
            format!(
                "the game ended after Game Turn {}; nothing more can be played",
                game.scenario.turns
            ),
        ));
    }
    if let Some(d) = &game.sewer_designation {
        if !(d.defender == by && matches!(command, Command::DesignateSewer { .. })) {
            return Err(RuleViolation::new(
                "B8.41",
                ViolationKind::WrongSide,
                format!(
                    "the sewer stack beneath {} is lost; play goes on once the {} designates where it goes",
                    d.from,
                    game.side_name(d.defender)
                ),
            ));
        }
    }
    if let Some(chance) = &game.wa_chance {
        let answers = chance.side == by
            && matches!(
                command,
                Command::ClaimWallAdvantage { .. } | Command::DeclineWallAdvantage
            );
        if !answers {
            return Err(RuleViolation::new(
                "B9.322",
                ViolationKind::WrongSide,
                format!(
                    "the {} may claim Wall Advantage for {} now; play goes on once it claims or declines",
                    game.side_name(chance.side),
                    chance.units.join(", ")
                ),
            ));
        }
    }
    let events = match command {
        Command::Done => done::decide(game, by, dice),
        Command::Move { units, to } => movement::decide_move(game, by, units, *to),
        Command::Bypass { units, hex, along } => {
            movement::decide_bypass(game, by, units, *hex, along)
        }
        Command::DoubleTime { units } => movement::decide_double_time(game, by, units),
        Command::PickUp { unit, weapon } => movement::decide_pick_up(game, by, unit, weapon),
        Command::Drop { unit, weapon } => movement::decide_drop(game, by, unit, weapon),
        Command::ClaimWallAdvantage { units } => wall_advantage::claim(game, by, units),
        Command::ForfeitWallAdvantage { units } => wall_advantage::forfeit(game, by, units),
        Command::DeclineWallAdvantage => wall_advantage::decline(game, by),
        Command::DeclareAttack {
            firers,
            target,
            into_sewer,
        } => attack::declare(game, by, firers, *target, *into_sewer),
        Command::ResolveAttack => attack::resolve(game, by),
        Command::PlaceHidden {
            unit,
            claim_wall_advantage,
        } => place::decide(game, by, unit, *claim_wall_advantage),
        Command::SewerMove { units, to } => sewer::decide_move(game, by, units, *to, dice),
        Command::DesignateSewer { to } => sewer::decide_designate(game, by, *to),
        Command::Surface { units } => sewer::decide_surface(game, by, units),
        Command::EnterTunnel { units } => sewer::decide_enter_tunnel(game, by, units),
        Command::DestroyTunnel { entrance } => sewer::decide_destroy(game, by, *entrance),
        Command::DeclareManholeUnseen { hex } => sewer::decide_unseen(game, by, *hex),
        Command::Adjudicate {
            unit,
            outcome,
            note,
        } => adjudicate::decide(game, by, unit, *outcome, note),
        Command::Roll {
            dice: count,
            purpose,
            note,
        } => roll::decide(game, by, *count, *purpose, note, dice),
        Command::AdjudicateAfterRoll { .. }
        | Command::ContributeEntropy { .. }
        | Command::AgreeToRevealSeed
        | Command::AcceptAdjudication { .. }
        | Command::DisputeAdjudication { .. }
        | Command::RequestUndo { .. }
        | Command::ConsentToUndo
        | Command::DeclineUndo => Err(needs_the_log(command)),
    }?;
    Ok(with_consequences(game, events))
}

/// What the commands decided against the game's log cite (the dice scheme's contributions,
/// adjudication review and undo): the document that defines them. `record::dispute` decides
/// them; `decide` only refuses them, so the citation lives here, below both.
pub const LOG_RULE: &str = "docs/review.md";

/// The refusal `decide` gives the commands that need the log: it has only the position.
fn needs_the_log(command: &Command) -> RuleViolation {
    RuleViolation::new(
        LOG_RULE,
        ViolationKind::NotModelled,
        format!(
            "{command:?} is decided against the game's log, which the server holds (protocol::dispute::decide)"
        ),
    )
}

/// Appends what the rules make follow from `events` on their own — today the Wall Advantage
/// changes of B9.32–B9.41 (`wall_advantage::settle`) — so a log shows each with its reason.
fn with_consequences(game: &Game, mut events: Vec<Event>) -> Vec<Event> {
    let mut after = game.clone();
    let mut movers = std::collections::BTreeSet::new();
    for event in &events {
        if let Event::UnitMoved {
            units, from, to, ..
        }
        | Event::UnitEntryBlocked {
            units, from, to, ..
        }
        | Event::UnitBypassed {
            units,
            from,
            hex: to,
            ..
        } = event
        {
            if from != to {
                movers.extend(units.iter().cloned());
            }
        }
        crate::game::apply(&mut after, event);
    }
    events.extend(wall_advantage::settle(game, &after, &movers));
    events
}

/// Refuses unless `by` is the side the current step awaits.
fn require_acting(game: &Game, by: Side, what: &str) -> Result<(), RuleViolation> {
    let acting = game.acting();
    if by == acting {
        return Ok(());
    }
    let step = game.clock.step();
    Err(RuleViolation::new(
        step.rule,
        ViolationKind::WrongSide,
        format!(
            "{what}: it is the {} step of the {} Player Turn and the {} is to act, not the {}",
            step.name,
            game.side_name(game.attacker()),
            game.side_name(acting),
            game.side_name(by),
        ),
    ))
}

/// Refuses unless the game is in `phase`.
fn require_phase(game: &Game, phase: Phase, rule: &str, what: &str) -> Result<(), RuleViolation> {
    if game.clock.phase() == phase {
        return Ok(());
    }
    Err(RuleViolation::new(
        rule,
        ViolationKind::WrongPhase,
        format!(
            "{what} only in the {phase}; it is now the {} ({})",
            game.clock.phase(),
            game.clock
        ),
    ))
}

/// Looks up a unit of `by`'s that is still in play. A unit the side may not see (the
/// opponent's hidden one) is answered exactly like one that does not exist, so a refusal
/// never confirms a hidden unit.
fn own_unit<'g>(game: &'g Game, by: Side, id: &UnitId) -> Result<&'g Unit, RuleViolation> {
    let unknown = || {
        RuleViolation::new(
            "A1",
            ViolationKind::UnknownUnit,
            format!("there is no unit `{id}` in this game"),
        )
    };
    let unit = game.units.get(id).ok_or_else(unknown)?;
    if unit.side != by {
        if unit.hidden {
            return Err(unknown());
        }
        return Err(RuleViolation::new(
            "A1",
            ViolationKind::NotYourUnit,
            format!(
                "`{id}` is a {} unit; the {} acts only with its own units",
                game.side_name(unit.side),
                game.side_name(by)
            ),
        ));
    }
    if unit.eliminated {
        return Err(RuleViolation::new(
            "A1",
            ViolationKind::UnitState,
            format!("`{id}` has been eliminated"),
        ));
    }
    Ok(unit)
}

//! The rules state machine's decision half: [`decide`] reads a game and a command and returns
//! the events the command produces, or the rule that refuses it. It never changes the game.
//!
//! One file per command, each running its checks in the precedence documented on
//! [`ViolationKind`](crate::violation::ViolationKind).

mod adjudicate;
mod attack;
pub mod close_combat;
mod concealment;
mod done;
pub mod end;
pub mod end_of_rally;
pub mod fire;
pub mod fortification;
pub mod los;
pub mod morale;
pub mod movement;
pub mod passing;
mod place;
mod rally_phase;
mod roll;
pub mod setup;
pub mod sewer;
mod support_weapon;
pub mod tem;
pub mod timing;
pub mod violation;
pub mod wall_advantage;

use crate::violation::{pieces, Piece, RuleViolation, ViolationKind};
use board::scenario::{Side, UnitId};
use game::command::Command;
use game::dice::DiceSource;
use game::event::Event;
use game::event::{UnitAdvanced, UnitBypassed, UnitEntryBlocked, UnitMoved, UnitsEntered};
use game::phase::Phase;
use game::{Game, Unit};

/// The command that moves play on by one step and chooses nothing: the prompt the game waits
/// on is let pass (the HIP owner's moment declined, a challenged concealed holding forfeited:
/// B9.324; a chance to claim declined: B9.322), and otherwise the acting side ends its step.
/// The load generator and the benches play it for a long game of cheap commands.
pub fn moving_on(game: &Game) -> (Side, Command) {
    if let Some(window) = &game.wa_hip_window {
        return (window.side, Command::DeclineWallAdvantage);
    }
    if let Some(challenge) = &game.wa_challenge {
        let units = challenge.holders.clone();
        return (challenge.side, Command::ForfeitWallAdvantage { units });
    }
    // A CC stopped for Infiltration waits on the side it asks (A11.22): declining answers it.
    if let Some(chance) = &game.cc_infiltration {
        let command = Command::Infiltrate {
            hex: chance.hex,
            withdrawals: vec![],
        };
        return (chance.side, command);
    }
    // A CC designation waits for the DEFENDER's (A11.12): designating none answers it.
    if let Some(hex) = game.movement.cc_designated.keys().next() {
        let command = Command::CloseCombat {
            hex: *hex,
            attacks: vec![],
            withdrawals: vec![],
            no_ambush: false,
        };
        return (game.attacker().opponent(), command);
    }
    match &game.wa_chance {
        Some(chance) => (chance.side, Command::DeclineWallAdvantage),
        None => (game.acting(), Command::Done),
    }
}

/// Decides what `command`, issued by side `by`, means in `game`. Pure: the same game, command
/// and dice always give the same answer, and `game` is never modified.
pub fn decide(
    game: &Game,
    by: Side,
    command: &Command,
    dice: &mut dyn DiceSource,
) -> Result<Vec<Event>, RuleViolation> {
    decide_keeping(game, by, command, dice, false).map(|decided| decided.events)
}

/// A command's events, with the whole game after them when the decision looked ahead to it.
#[derive(Clone, Debug)]
pub struct Decided {
    pub events: Vec<Event>,
    /// `game` with every one of `events` applied in order, by `apply` and nothing else (undo
    /// trail included): what the decision's look-ahead (Wall Advantage settlement, Desperation
    /// Morale, a timed game's hand-over) already built. A server records the events by taking
    /// it rather than applying them a second time (`record::referee`). `None` when the
    /// decision looked at no position after its events.
    pub after: Option<Box<Game>>,
    /// With `after`, when the decision kept them ([`decide_ahead`] does): the position after
    /// each event but the last, in order, each the very game the look-ahead's `apply` built
    /// on the way to `after` (issue 55: a recorded event is applied once, by the decision, and
    /// the record and every viewer's stream take these positions). Empty otherwise, or when
    /// there is one event.
    pub along: Vec<Game>,
}

impl Decided {
    /// Events decided without a look-ahead.
    pub fn events(events: Vec<Event>) -> Decided {
        Decided {
            events,
            after: None,
            along: vec![],
        }
    }

    /// The position after the events: the look-ahead's, or `game` with the events applied
    /// (keeping the positions along the way, [`Decided::along`]).
    pub fn after_from(&mut self, game: &Game) -> &mut Game {
        if self.after.is_none() {
            let mut ahead = Ahead::new(game, true);
            for event in &self.events {
                ahead.advance(event);
            }
            self.along = ahead.along.positions;
            self.after = Some(ahead.game);
        }
        self.after.as_mut().expect("just built")
    }

    /// Appends `event`, applying it to the look-ahead when there is one.
    pub fn push(&mut self, event: Event) {
        self.follow(&event);
        self.events.push(event);
    }

    /// Moves the look-ahead, when there is one, past `event`, recorded right after the
    /// decision's events without being one of them (the server's dice events,
    /// `record::referee`): `after` becomes the position after it, and the position before it,
    /// the one after the events so far, joins [`Decided::along`].
    pub fn follow(&mut self, event: &Event) {
        if let Some(after) = &mut self.after {
            if !self.events.is_empty() {
                self.along.push((**after).clone());
            }
            game::apply(after, event);
        }
    }
}

/// The positions a look-ahead passes through, kept when asked for: the position after each
/// event but the last ([`Decided::along`]).
pub(crate) struct Along {
    keep: bool,
    started: bool,
    positions: Vec<Game>,
}

impl Along {
    /// Notes that an event is about to be applied to `game`: the position after the one
    /// before it, if any, is kept.
    pub(crate) fn step(&mut self, game: &Game) {
        if self.keep && self.started {
            self.positions.push(game.clone());
        }
        self.started = true;
    }
}

/// A decision's one look-ahead: the game the command's events are applied to, one by one and
/// once each, that the consequences (`with_consequences`) are then judged on and applied to,
/// and that the record takes as the position after them ([`Decided::after`]). What a step of
/// the decision needs of the position after the events before it (`passing`'s steps that pass
/// by themselves) it reads here, so nothing is applied to a copy of its own.
pub(crate) struct Ahead {
    game: Box<Game>,
    pub(crate) events: Vec<Event>,
    along: Along,
    /// Units that left or tried to leave their Location (`wall_advantage::settle`).
    movers: std::collections::BTreeSet<UnitId>,
    /// Hidden units an enemy's move revealed: losing HIP is a moment to claim WA (B9.322).
    unhidden: std::collections::BTreeSet<UnitId>,
}

impl Ahead {
    /// A look-ahead from `game`, keeping the positions along the way when `keep`.
    pub(crate) fn new(game: &Game, keep: bool) -> Ahead {
        Ahead {
            game: Box::new(game.clone()),
            events: vec![],
            along: Along {
                keep,
                started: false,
                positions: vec![],
            },
            movers: Default::default(),
            unhidden: Default::default(),
        }
    }

    /// `game` with `events` applied.
    fn with(game: &Game, keep: bool, events: Vec<Event>) -> Ahead {
        let mut ahead = Ahead::new(game, keep);
        for event in events {
            ahead.push(event);
        }
        ahead
    }

    /// The position after the events so far.
    pub(crate) fn game(&self) -> &Game {
        &self.game
    }

    /// Appends `event` and applies it.
    pub(crate) fn push(&mut self, event: Event) {
        self.advance(&event);
        self.events.push(event);
    }

    /// Notes what `event` means for the consequences, then applies it.
    fn advance(&mut self, event: &Event) {
        if let Event::UnitEntryBlocked(UnitEntryBlocked { revealed, .. }) = event {
            let game = &self.game;
            self.unhidden.extend(
                revealed
                    .iter()
                    .filter(|u| game.units.get(&u.id).is_some_and(|b| b.hidden))
                    .map(|u| u.id.clone()),
            );
        }
        if let Event::UnitsEntered(UnitsEntered { units, .. }) = event {
            // Entering from off board is a move into the hex (A2.51): its units take
            // mandatory WA as movers do, after the enemy's HIP moment (B9.324).
            self.movers.extend(units.iter().map(|u| u.id.clone()));
        }
        if let Event::UnitMoved(UnitMoved {
            units, from, to, ..
        })
        | Event::UnitEntryBlocked(UnitEntryBlocked {
            units, from, to, ..
        })
        | Event::UnitAdvanced(UnitAdvanced {
            units, from, to, ..
        })
        | Event::UnitBypassed(UnitBypassed {
            units,
            from,
            hex: to,
            ..
        }) = event
        {
            if from != to {
                self.movers.extend(units.iter().cloned());
            }
        }
        self.along.step(&self.game);
        game::apply(&mut self.game, event);
    }

    fn decided(self) -> Decided {
        Decided {
            events: self.events,
            after: Some(self.game),
            along: self.along.positions,
        }
    }
}

/// As [`decide`], keeping the position its look-ahead reached ([`Decided::after`]) and the
/// positions on the way to it ([`Decided::along`]).
pub fn decide_ahead(
    game: &Game,
    by: Side,
    command: &Command,
    dice: &mut dyn DiceSource,
) -> Result<Decided, RuleViolation> {
    decide_keeping(game, by, command, dice, true)
}

/// [`decide_ahead`], keeping the positions along the look-ahead only when `keep` (the rules
/// alone need none of them).
fn decide_keeping(
    game: &Game,
    by: Side,
    command: &Command,
    dice: &mut dyn DiceSource,
    keep: bool,
) -> Result<Decided, RuleViolation> {
    // On a map of real boards a seam hex has two names; the rules see the map's own.
    let renamed;
    let command = match map_names(game, command) {
        Some(c) => {
            renamed = c;
            &renamed
        }
        None => command,
    };
    end::still_playing(game)?;
    // Ending the game waits for nothing, not even a pending answer.
    match command {
        Command::Concede => return end::concede(game, by).map(Decided::events),
        Command::ProposeEnd => return end::propose(game, by).map(Decided::events),
        Command::AcceptEnd => return end::accept(game, by).map(Decided::events),
        _ => {}
    }
    // Before Turn 1, the set-up step (A12.12) takes only its own commands.
    if game.setup.is_some() {
        return setup::decide(game, by, command).map(Decided::events);
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
    if let Some(prompt) = wa_prompt(game) {
        if !(prompt.side == by && (prompt.answers)(command)) {
            return Err(RuleViolation::with(
                prompt.rule,
                ViolationKind::WrongSide,
                prompt.why,
            ));
        }
    }
    // A11.22: a CC stopped for Infiltration waits on the side it asks; its `done` declines.
    let declined;
    let command = match &game.cc_infiltration {
        Some(chance) if chance.side == by && *command == Command::Done => {
            declined = Command::Infiltrate {
                hex: chance.hex,
                withdrawals: vec![],
            };
            &declined
        }
        Some(chance) if !(chance.side == by && matches!(command, Command::Infiltrate { .. })) => {
            return Err(close_combat::refuse_while_infiltrating(game, chance));
        }
        _ => command,
    };
    let ahead = match command {
        Command::Done => done::decide(game, by, dice, keep)?,
        _ => Ahead::with(game, keep, decide_events(game, by, command, dice)?),
    };
    refuse_ending_in_bypass(game, ahead.game())?;
    Ok(with_consequences(game, ahead))
}

/// The events of every command but `Done` (whose look-ahead is its own, `done::decide`), as
/// [`decide_keeping`] dispatches them.
fn decide_events(
    game: &Game,
    by: Side,
    command: &Command,
    dice: &mut dyn DiceSource,
) -> Result<Vec<Event>, RuleViolation> {
    match command {
        Command::Done => unreachable!("decided with its look-ahead"),
        Command::Move { units, to } => movement::decide_move(game, by, units, *to, dice),
        Command::Advance { units, to } => movement::decide_advance(game, by, units, *to),
        Command::Melee { hex } => close_combat::decide_melee(game, by, *hex),
        Command::CloseCombat {
            hex,
            attacks,
            withdrawals,
            no_ambush,
        } => close_combat::decide_close_combat(
            game,
            by,
            *hex,
            attacks,
            withdrawals,
            *no_ambush,
            dice,
        ),
        Command::Infiltrate { hex, withdrawals } => {
            close_combat::decide_infiltrate(game, by, *hex, withdrawals, dice)
        }
        Command::Bypass { units, hex, along } => {
            movement::decide_bypass(game, by, units, *hex, along, dice)
        }
        Command::DoubleTime { units } => movement::decide_double_time(game, by, units),
        Command::AssaultMove { units } => movement::decide_assault_movement(game, by, units),
        Command::PickUp { unit, weapon } => {
            movement::decide_pick_up(game, by, unit, weapon, dice)
        }
        Command::Drop { unit, weapon } => movement::decide_drop(game, by, unit, weapon),
        Command::ClaimWallAdvantage { units } => wall_advantage::claim(game, by, units),
        Command::ForfeitWallAdvantage { units } => wall_advantage::forfeit(game, by, units),
        Command::DeclineWallAdvantage => wall_advantage::decline(game, by),
        Command::ShowForWallAdvantage { unit } => wall_advantage::show(game, by, unit),
        Command::TakeShellholeCover { units } => movement::decide_shellhole_cover(game, by, units),
        Command::DeclareAttack {
            firers,
            target,
            into_sewer,
        } => attack::declare(game, by, firers, *target, *into_sewer),
        Command::ResolveAttack => attack::resolve(game, by, dice),
        Command::MarkOpportunityFire { units } => attack::mark_opportunity_fire(game, by, units),
        Command::TransferWeapon { weapon, to } => movement::decide_transfer(game, by, weapon, to),
        Command::RepairWeapon { weapon } => support_weapon::decide_repair(game, by, weapon, dice),
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
        Command::RoutThroughTunnel { units } => sewer::decide_rout(game, by, units),
        Command::Rout { unit, to, morale } => {
            movement::decide_rout(game, by, unit, *to, *morale, dice)
        }
        Command::RoutWithLeader {
            unit,
            leader,
            to,
            morale,
        } => movement::decide_rout_with_leader(game, by, unit, leader, *to, *morale, dice),
        Command::ClaimTunnelSeen { unit, entrance } => {
            sewer::decide_tunnel_seen(game, by, unit, *entrance)
        }
        Command::DiscoverTunnel { unit } => sewer::decide_discover(game, by, unit),
        Command::Rally {
            unit,
            broken_morale,
            leader,
            desperation,
        } => morale::rally::decide(
            game,
            by,
            unit,
            *broken_morale,
            leader.as_ref(),
            *desperation,
            dice,
        ),
        Command::Roll {
            dice: count,
            purpose,
            note,
        } => roll::decide(game, by, *count, *purpose, note, dice),
        Command::SetUp { .. } | Command::LiftSetUp { .. } => Err(setup::not_setting_up()),
        Command::Enter { units, to } => setup::enter(game, by, units, *to, dice),
        Command::AdjudicateAfterRoll { .. }
        | Command::ContributeEntropy { .. }
        | Command::AgreeToRevealSeed
        | Command::AcceptAdjudication { .. }
        | Command::DisputeAdjudication { .. }
        | Command::RequestUndo { .. }
        | Command::ConsentToUndo
        | Command::DeclineUndo => Err(needs_the_log(command)),
        Command::ClaimOnTime
        | Command::GiveTime { .. }
        | Command::StartVacation
        | Command::EndVacation
        | Command::ExpireClock => Err(RuleViolation::new(
            timing::RULE,
            ViolationKind::NotModelled,
            "the clock's commands (claim-on-time, give-time, vacation, end-vacation) are decided by a server, with its time; a game played without one has no clock",
        )),
        Command::Concede | Command::ProposeEnd | Command::AcceptEnd => {
            unreachable!("decided before the pending answers")
        }
    }
}

/// `command` with every hex it names under the map's name for it (`board::geometry`), when
/// the scenario is on a map of real boards and some name differs; `None` otherwise.
fn map_names(game: &Game, command: &Command) -> Option<Command> {
    let geometry = game.scenario.geometry();
    if !geometry.has_map() {
        return None;
    }
    let c = |h: &board::hex::Hex| geometry.canonical(*h);
    // A withdrawal's destination by the map's own name: a CC designation's (A11.2) and an
    // Infiltration's (A11.22) alike.
    let withdrawals_to = |withdrawals: &[game::command::CcWithdrawal]| -> Vec<_> {
        withdrawals
            .iter()
            .map(|w| game::command::CcWithdrawal {
                units: w.units.clone(),
                to: c(&w.to),
            })
            .collect()
    };
    let renamed = match command {
        Command::Move { units, to } => Command::Move {
            units: units.clone(),
            to: c(to),
        },
        Command::Advance { units, to } => Command::Advance {
            units: units.clone(),
            to: c(to),
        },
        Command::Melee { hex } => Command::Melee { hex: c(hex) },
        Command::CloseCombat {
            hex,
            attacks,
            withdrawals,
            no_ambush,
        } => Command::CloseCombat {
            hex: c(hex),
            attacks: attacks.clone(),
            withdrawals: withdrawals_to(withdrawals),
            no_ambush: *no_ambush,
        },
        Command::Infiltrate { hex, withdrawals } => Command::Infiltrate {
            hex: c(hex),
            withdrawals: withdrawals_to(withdrawals),
        },
        Command::Bypass { units, hex, along } => Command::Bypass {
            units: units.clone(),
            hex: c(hex),
            along: along.iter().map(c).collect(),
        },
        Command::DeclareAttack {
            firers,
            target,
            into_sewer,
        } => Command::DeclareAttack {
            firers: firers.clone(),
            target: c(target),
            into_sewer: *into_sewer,
        },
        Command::SewerMove { units, to } => Command::SewerMove {
            units: units.clone(),
            to: c(to),
        },
        Command::DesignateSewer { to } => Command::DesignateSewer { to: c(to) },
        Command::DestroyTunnel { entrance } => Command::DestroyTunnel {
            entrance: c(entrance),
        },
        Command::DeclareManholeUnseen { hex } => Command::DeclareManholeUnseen { hex: c(hex) },
        Command::ClaimTunnelSeen { unit, entrance } => Command::ClaimTunnelSeen {
            unit: unit.clone(),
            entrance: c(entrance),
        },
        Command::Adjudicate {
            unit,
            outcome: game::command::Outcome::Relocate(to),
            note,
        } => Command::Adjudicate {
            unit: unit.clone(),
            outcome: game::command::Outcome::Relocate(c(to)),
            note: note.clone(),
        },
        _ => return None,
    };
    (renamed != *command).then_some(renamed)
}

/// A Wall Advantage question that holds play: the side it waits for, the commands of that side
/// that answer it, and the refusal (rule, reason) every other command gets.
struct Prompt {
    side: Side,
    answers: fn(&Command) -> bool,
    rule: &'static str,
    why: Vec<Piece>,
}

/// The WA prompt waiting, if any: a chance to claim (B9.322; a HIP unit may be placed then
/// too, B9.324), the HIP owner's moment before a mover's claim, or a challenge to concealed
/// holders (B9.324). At most one waits at a time: `settle` raises none while another waits.
fn wa_prompt(game: &Game) -> Option<Prompt> {
    if let Some(chance) = &game.wa_chance {
        return Some(Prompt {
            side: chance.side,
            answers: |c| {
                matches!(
                    c,
                    Command::ClaimWallAdvantage { .. }
                        | Command::DeclineWallAdvantage
                        | Command::PlaceHidden { .. }
                )
            },
            rule: "B9.322",
            why: pieces![
                format!(
                    "the {} may claim Wall Advantage for ",
                    game.side_name(chance.side)
                ),
                Piece::units(&chance.units),
                " now; play goes on once it claims or declines"
            ],
        });
    }
    if let Some(window) = &game.wa_hip_window {
        return Some(Prompt {
            side: window.side,
            answers: |c| matches!(c, Command::PlaceHidden { .. } | Command::DeclineWallAdvantage),
            rule: "B9.324",
            why: pieces![Piece::units(&window.claimants), format!(" attempt to claim WA; the {} may first place a hidden unit (`place UNIT claim-wa`) or let the moment pass (`decline-wa`), and play goes on once it answers", game.side_name(window.side))],
        });
    }
    let challenge = game.wa_challenge.as_ref()?;
    Some(Prompt {
        side: challenge.side,
        answers: |c| {
            matches!(
                c,
                Command::ShowForWallAdvantage { .. } | Command::ForfeitWallAdvantage { .. }
            )
        },
        rule: "B9.324",
        why: pieces![
            format!(
                "the {} must show a real unit among ",
                game.side_name(challenge.side)
            ),
            Piece::units(&challenge.holders),
            " or forfeit their WA; play goes on once it answers"
        ],
    })
}

/// A4.32 with A4.2: another unit's move ends the move of the stack before it, so it may not
/// start while a unit of that stack stands in Bypass and could still go on. `after` is `game`
/// with the command's events applied (the decision's look-ahead, before its consequences).
fn refuse_ending_in_bypass(game: &Game, after: &Game) -> Result<(), RuleViolation> {
    if game.clock.phase() != Phase::Movement || !game.units.values().any(|u| u.bypass.is_some()) {
        return Ok(());
    }
    let stranded = game.units.values().find(|u| {
        u.bypass.is_some()
            && !game.movement.finished.contains(&u.id)
            && after.movement.finished.contains(&u.id)
            && after.units.get(&u.id).is_some_and(|a| a.bypass.is_some())
            && movement::way_on_from_bypass(game, u)
    });
    match stranded {
        Some(u) => Err(RuleViolation::with(
            "A4.32",
            ViolationKind::UnitState,
            pieces![Piece::unit(&u.id), format!(" is in Bypass of {} and would move no farther (A4.2); it must enter the obstacle or move on first", u.bypass.as_ref().map(|b| b.hex).expect("in Bypass"))],
        )),
        None => Ok(()),
    }
}

/// The refusal `decide` gives the commands that need the log (the dice scheme's contributions,
/// adjudication review and undo): it has only the position. It cites the document
/// `record::dispute` cites when it decides them (`REVIEW_RULE`).
fn needs_the_log(command: &Command) -> RuleViolation {
    RuleViolation::new(
        game::event::REVIEW_RULE,
        ViolationKind::NotModelled,
        format!(
            "{command:?} is decided against the game's log, which the server holds (protocol::dispute::decide)"
        ),
    )
}

/// Appends what the rules make follow from the command's events on their own — today the Wall
/// Advantage changes of B9.32–B9.41 (`wall_advantage::settle`) and Desperation Morale — so a
/// log shows each with its reason. They are judged on the decision's look-ahead (`ahead`,
/// `game` with the command's events applied) and applied to it in turn, which is kept
/// ([`Decided::after`]): it is the position the events make.
fn with_consequences(game: &Game, mut ahead: Ahead) -> Decided {
    // Desperation Morale follows from the position the command left (A10.62).
    let desperation = morale::desperation::consequences(&ahead.game, &ahead.events);
    let settled = wall_advantage::settle(
        game,
        &mut ahead.game,
        &ahead.movers,
        &ahead.unhidden,
        &mut ahead.along,
    );
    ahead.events.extend(settled);
    for event in desperation {
        ahead.push(event);
    }
    ahead.decided()
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

/// Refuses unless the game is in the RPh's own step (A3.1), not its end's Wall Advantage steps
/// (B9.322): where a rally (A10.6), a Recovery in the RPh (A4.44) and a Transfer there
/// (A4.431) are made, by either side. One check for the three, `rule` the act's and `what`
/// its words; a repair (A9.72) is taken in any step of the RPh (`end_of_rally`).
pub(crate) fn require_rally_step(game: &Game, rule: &str, what: &str) -> Result<(), RuleViolation> {
    let step = game.clock.step();
    if step.phase == Phase::Rally && step.rule == "A3.1" {
        return Ok(());
    }
    Err(RuleViolation::new(
        rule,
        ViolationKind::WrongPhase,
        format!(
            "{what} in the RPh's own step, before its end; it is now the {}",
            step.name
        ),
    ))
}

/// Units as a refusal or a note to the players names them: each in backticks, comma-separated
/// (`` `g1`, `g2` ``), as the player wrote them.
pub(crate) fn listed<'a>(ids: impl IntoIterator<Item = &'a UnitId>) -> String {
    ids.into_iter()
        .map(|id| format!("`{id}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A list of units (or weapons) a command names, each named once: every command that names
/// several refuses a name given twice, before anything else is asked of them, with its own
/// rule and the same words, giving back the name as the player wrote it. `among` says which
/// list (" in the moving stack", " among the firers").
///
/// The names are kept sorted as they are read, so the check costs a lookup a name: a list is
/// bounded only by the frame (some 170,000 names), and looking each name up among all those
/// before it held the game's task for about a minute on one command, or one preview.
pub(crate) fn check_named_once(
    ids: &[UnitId],
    rule: &str,
    among: &str,
) -> Result<(), RuleViolation> {
    let mut named = std::collections::BTreeSet::new();
    let twice = ids.iter().find(|id| !named.insert(*id));
    match twice {
        Some(id) => Err(RuleViolation::with(
            rule,
            ViolationKind::UnitState,
            pieces![Piece::Given(id.clone()), format!(" is named twice{among}")],
        )),
        None => Ok(()),
    }
}

/// Looks up a unit of `by`'s that is still in play. A unit the side may not see (the
/// opponent's hidden one) is answered exactly like one that does not exist, so a refusal
/// never confirms a hidden unit.
fn own_unit<'g>(game: &'g Game, by: Side, id: &UnitId) -> Result<&'g Unit, RuleViolation> {
    let unknown = || crate::violation::no_such_unit(id, " in this game");
    let unit = game.units.get(id).ok_or_else(unknown)?;
    if unit.side != by {
        if unit.hidden {
            return Err(unknown());
        }
        return Err(RuleViolation::with(
            "A1",
            ViolationKind::NotYourUnit,
            pieces![
                Piece::unit(id),
                format!(
                    " is a {} unit; the {} acts only with its own units",
                    game.side_name(unit.side),
                    game.side_name(by)
                )
            ],
        ));
    }
    if unit.eliminated {
        return Err(RuleViolation::with(
            "A1",
            ViolationKind::UnitState,
            pieces![Piece::unit(id), " has been eliminated"],
        ));
    }
    if unit.kind == board::scenario::UnitKind::Counter {
        return Err(counter_not_modelled(id, &unit.ratings));
    }
    Ok(unit)
}

/// The support weapon `id` and its possessor, looked up as every act by a weapon's possessor
/// looks it up (firing it, A9.1; repairing it, A9.72): the weapon must exist and be possessed
/// by a unit of `by`. A weapon held by a unit the side may not know of (the enemy's hidden or
/// concealed one) reads as no weapon at all, so a refusal never confirms it; an unpossessed one
/// is refused saying why the act needs its possessor (`needs`), citing the act's `rule`.
pub(crate) fn own_weapon<'g>(
    game: &'g Game,
    by: Side,
    id: &str,
    rule: &str,
    needs: &str,
) -> Result<(&'g game::Weapon, &'g UnitId), RuleViolation> {
    let unknown = || crate::violation::no_such_unit(id, " in this game");
    let given = || Piece::Given(id.to_string());
    let w = known_weapon(game, by, id).ok_or_else(unknown)?;
    let Some(holder) = &w.held_by else {
        return Err(RuleViolation::with(
            rule,
            ViolationKind::UnitState,
            pieces![given(), format!(" lies unpossessed in {}: {needs}", w.hex)],
        ));
    };
    let unit = game.units.get(holder).ok_or_else(unknown)?;
    if unit.side != by {
        return Err(RuleViolation::with(
            rule,
            ViolationKind::NotYourUnit,
            pieces![given(), " is possessed by an enemy unit"],
        ));
    }
    Ok((w, holder))
}

/// The support weapon `id` as `by` may know of it: `None` when the game has no weapon by that
/// id, and when a unit `by` may not know of possesses it (the enemy's hidden unit, or one under
/// his "?", A12.3): such a weapon is in none of `by`'s projections, so every act naming a weapon
/// looks it up here and a refusal reads it as the made-up id it is to him, telling neither that
/// it exists nor that the "?" holding it is a real unit.
pub(crate) fn known_weapon<'g>(game: &'g Game, by: Side, id: &str) -> Option<&'g game::Weapon> {
    let w = game.weapons.get(id)?;
    match w.held_by.as_ref().map(|holder| game.units.get(holder)) {
        Some(None) => None,
        Some(Some(unit)) if unit.side != by && (unit.hidden || unit.concealed) => None,
        _ => Some(w),
    }
}

/// What every act of a counter the engine does not rule on is told: the players move, remove
/// or relabel it by an adjudication.
pub(crate) fn counter_not_modelled(id: &UnitId, name: &str) -> RuleViolation {
    RuleViolation::with(
        "A1",
        ViolationKind::NotModelled,
        pieces![Piece::unit(id), format!(" ({name}) is a counter the engine does not rule on; move, remove or relabel it by an adjudication the opponent may accept or dispute (`adjudicate UNIT relocate HEX`, `eliminate`, `relabel \"…\"`)")],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wall_advantage::ReadScenario;
    use board::scenario::{longest, Scenario};
    use game::apply;
    use game::event::GameCreated;

    /// A frame holds some 170,000 short names: a WA forfeit (taken in any phase) naming
    /// 60,000 distinct ones is answered with the first unknown one, and a repeat is named by
    /// its first repetition. Its cost (a sorted set, `check_named_once`; looking each name up
    /// among those before it took some 20 s of the game's task in a debug build) is the
    /// construction's, not timed here.
    #[test]
    fn a_long_list_of_names_is_checked_for_repeats_and_answered() {
        let text = include_str!("../../../scenarios/b9-41-wall-advantage.toml");
        let scenario = Scenario::from_toml(text).unwrap();
        let game = Game::replay([&Event::GameCreated(GameCreated { scenario })]).unwrap();
        let units: Vec<UnitId> = (0..60_000).map(|i| format!("{i:x}")).collect();
        let dice = &mut game::dice::ScriptedDice::default();
        let refused = decide(
            &game,
            Side::A,
            &Command::ForfeitWallAdvantage { units },
            dice,
        );
        assert_eq!(
            refused.unwrap_err().to_string(),
            "A1: there is no unit `0` in this game"
        );
        // The first name given again is the one named, as before.
        let units: Vec<UnitId> = ["b", "a", "c", "a", "b"].map(String::from).to_vec();
        let refused = decide(
            &game,
            Side::A,
            &Command::ForfeitWallAdvantage { units },
            dice,
        );
        assert_eq!(
            refused.unwrap_err().to_string(),
            "B9.322: `a` is named twice among the units forfeiting WA"
        );
    }

    /// The load generator's game (its scenario at the longest turn count) played by
    /// [`moving_on`] alone: every step is legal and the game reaches its end.
    #[test]
    fn moving_on_is_legal_to_the_end_of_a_game() {
        let text = longest(include_str!("../../../scenarios/b9-41-wall-advantage.toml")).unwrap();
        let scenario = Scenario::from_toml(&text).unwrap();
        let mut game = Game::replay([&Event::GameCreated(GameCreated { scenario })]).unwrap();
        let mut steps = 0;
        while !game.over {
            let (side, command) = moving_on(&game);
            let dice = &mut game::dice::ScriptedDice::default();
            let events = decide(&game, side, &command, dice)
                .unwrap_or_else(|v| panic!("step {steps}: {command:?} by {side:?}: {v}"));
            for event in &events {
                apply(&mut game, event);
            }
            steps += 1;
        }
        // Both end-of-RPh steps pass by themselves in it (no unit could claim WA there), and
        // the RtPh step of the side with no unit under "?" (nothing could rout, A10.5).
        let per_game_turn = 2 * (game::phase::STEPS.len() - 3);
        assert!(
            steps >= per_game_turn * usize::from(game.scenario.turns),
            "{steps} steps"
        );
    }
}

//! Dispute review: the commands that are about the log rather than the position — answers to
//! adjudications, undo, and the players' part in the dice (`docs/review.md`, `docs/dice.md`).
//!
//! They are decided by [`decide`], which reads the game's log (with who issued each command,
//! [`Entry`]) as well as its position, and hands every other command to
//! [`rules::decide`]. Like the rules, it never mutates and names the
//! rule behind a refusal — here the document that defines the procedure.
//!
//! Undo in an append-only log: an undo is an event, [`Event::EventsUndoneTo`], naming the
//! events it takes back. `apply` puts the position before them back, rebuilt from the game's
//! [`UndoTrail`](game::UndoTrail) — the position after the last event no undo reaches
//! across and the events since — so replay stays a fold of `apply` over the log and reaches
//! what live play reached, and an undo costs the log a few bytes, not a position. Logs written
//! before it carry [`Event::EventsUndone`] with the whole position, which a verifier checks
//! against a replay of the log up to it (`check_logged`). An undo reaches back over at most
//! [`UNDO_TRAIL_EVENTS_MAX`] events, and a side asks for at most
//! [`UNDO_REQUESTS_PER_PLAYER_TURN_MAX`] undos a Player Turn: named limits, so a loop of
//! move, undo, consent cannot grow a game without bound.

use crate::chain::Entry;
use crate::fair_dice::{self, Ledger, Nonce};
use crate::recheck::Fault;
use board::scenario::Side;
use game::command::Command;
use game::dice::DiceSource;
use game::event::Event;
use game::event::{
    AdjudicationAccepted, AdjudicationDisputed, DiceRolled, EntropyContributed, EventsUndone,
    EventsUndoneTo, ManholeDeclaredUnseen, OutcomeAdjudicated, SeedRevealAgreed, StepEnded,
    StepPassed, TunnelUseSeen, UndoDeclined, UndoRequested, WallAdvantageChallenged,
    WallAdvantageChanceOffered, WallAdvantageHipWindowOffered,
};
use game::event::{DICE_RULE, REVIEW_RULE};
use game::{Game, Viewer, UNDO_TRAIL_EVENTS_MAX};
use rules::violation::{text, Piece, RuleViolation, ViolationKind};
use rules::Decided;

/// Longest reason a dispute may give, in bytes: a sentence or two, like an adjudication's note.
pub(crate) const REASON_BYTES_MAX: usize = 200;

/// The most undos one side asks for in one Player Turn. Undo is for a slip of the hand; with
/// the Player Turns a scenario may have (`TURNS_MAX`), this bounds what asking can add to a
/// game's log.
pub const UNDO_REQUESTS_PER_PLAYER_TURN_MAX: usize = 20;

/// The most entries one side makes in one Player Turn of what the engine does not compute:
/// rolls through the referee (`roll`), outcomes (`adjudicate`, with or after a roll) and
/// Manholes declared out of enemy LOS (`manhole-unseen`, B8.42), which may be declared again
/// and again. Each
/// may be made at any moment and changes nothing play goes on from, or changes it back and
/// forth (a unit broken, then rallied): without a limit a side could grow a game past what an
/// export holds ([`crate::export::EXPORT_EVENTS_MAX`]), and so past what `asl verify` reads.
/// With the Player Turns a scenario may have (`TURNS_MAX`), both sides' entries stay far below
/// that.
pub const ENTRIES_PER_PLAYER_TURN_MAX: usize = 500;

/// The most set-up commands (`setup`, `lift`) one side gives in the set-up step: a placement
/// may be moved or taken back (A12.12), and this lets a side do so four times for each unit
/// a scenario may hold, where moving one unit to and fro grew the log without bound before
/// Turn 1. Past it a side still places the units not on the map, and ends its set-up.
pub const SETUP_COMMANDS_MAX: usize = 4 * board::scenario::UNITS_MAX;

/// The most claims of WA (`claim-wa`) one side makes in one Player Turn, but for those that
/// answer a chance the enemy's loss of WA offers. A unit may claim in its MPh until it is
/// completed and forfeit at any time (B9.322), neither costing MF, so a claim and a forfeit in
/// a loop grew the log without bound; a claim names all the units that claim together.
pub const WA_CLAIMS_PER_PLAYER_TURN_MAX: usize = 500;

/// The most Transfers of a SW (`transfer`) one side makes in one Player Turn. A Transfer costs
/// no MF and the rule sets no number to them (A4.431): one SW handed between two units of a
/// Location and back in the RPh (or at the start of the APh) grew the log without bound. A
/// side holds at most a few SW for each of its units, each passed on once or twice in a turn.
pub const TRANSFERS_PER_PLAYER_TURN_MAX: usize = 500;

/// The most gifts of time (`give-time`) and vacations begun (`vacation`) one side gives in one
/// Player Turn. Neither waits for play, and neither need cost the side time: a vacation begun
/// and ended at one moment, or while the other side's clock runs, uses none of its days, and
/// a second given at a time is 7 million gifts short of a full bank.
pub const CLOCK_COMMANDS_PER_PLAYER_TURN_MAX: usize = 20;

/// Decides `command` at the server's time `now` (`None`: the clock's last charge), as a
/// server, a preview and a verifier do: the clock's rules (`rules::timing::timed`) around
/// [`decide_ahead`], the clock's own commands held to their number in the log first, as
/// [`decide_ahead`] holds the others.
pub fn decide_timed(
    game: &Game,
    log: &[Entry],
    by: Side,
    command: &Command,
    now: Option<u64>,
    dice: &mut dyn DiceSource,
) -> Result<Decided, RuleViolation> {
    if command.is_clock() {
        check_logged_count(game, log, by, command)?;
    }
    rules::timing::timed(game, by, command, now, || {
        decide_ahead(game, log, by, command, dice)
    })
}

/// Decides `command`, issued by side `by`, against the position and the log that led to it
/// (`log[i]` is event `i + 1`; `log.len()` equals `game.version`).
pub fn decide(
    game: &Game,
    log: &[Entry],
    by: Side,
    command: &Command,
    dice: &mut dyn DiceSource,
) -> Result<Vec<Event>, RuleViolation> {
    decide_ahead(game, log, by, command, dice).map(|decided| decided.events)
}

/// As [`decide`], keeping the position the rules' look-ahead reached (`rules::Decided`): the
/// commands decided against the log make none; every other goes to the rules.
pub fn decide_ahead(
    game: &Game,
    log: &[Entry],
    by: Side,
    command: &Command,
    dice: &mut dyn DiceSource,
) -> Result<Decided, RuleViolation> {
    check_logged_count(game, log, by, command)?;
    let events = match command {
        Command::ContributeEntropy { nonce } => contribute(game, log, by, nonce),
        Command::AgreeToRevealSeed => agree_to_reveal(game, log, by),
        Command::AcceptAdjudication { event } => answer(game, log, by, *event, None),
        Command::DisputeAdjudication { event, reason } => {
            answer(game, log, by, *event, Some(reason))
        }
        Command::RequestUndo { from } => {
            check_undo(game, log, by, *from, game.version)?;
            let asked = requests_this_player_turn(log, by);
            if asked >= UNDO_REQUESTS_PER_PLAYER_TURN_MAX {
                return Err(refuse(
                    ViolationKind::NotUndoable,
                    format!(
                        "the {} has asked for {asked} undos this Player Turn, the most a side may ({UNDO_REQUESTS_PER_PLAYER_TURN_MAX}); play on",
                        game.side_name(by)
                    ),
                ));
            }
            Ok(vec![Event::UndoRequested(UndoRequested {
                by,
                from: *from,
                to: game.version,
            })])
        }
        Command::ConsentToUndo => consent(game, log, by),
        Command::DeclineUndo => {
            waiting_undo(game, log, by)?;
            Ok(vec![Event::UndoDeclined(UndoDeclined { by })])
        }
        Command::AdjudicateAfterRoll {
            unit,
            outcome,
            roll,
            note,
        } => {
            let logged = roll
                .checked_sub(1)
                .and_then(|i| log.get(usize::try_from(i).ok()?))
                .and_then(|e| match &e.event {
                    Event::DiceRolled(DiceRolled { roll }) => Some(roll),
                    _ => None,
                })
                .ok_or_else(|| {
                    refuse_naming(
                        ViolationKind::UnknownEvent,
                        vec![
                            text("there is no roll at "),
                            Piece::Event(*roll),
                            text(" for an adjudication to follow"),
                        ],
                    )
                })?;
            let cited = format!(
                "after #{roll} ({} {:?} = {}){}{note}",
                logged.purpose.describe(),
                logged.dice,
                logged.final_result,
                if note.is_empty() { "" } else { ": " }
            );
            rules::decide(
                game,
                by,
                &Command::Adjudicate {
                    unit: unit.clone(),
                    outcome: *outcome,
                    note: cited,
                },
                dice,
            )
        }
        other => return rules::decide_ahead(game, by, other, dice),
    };
    events.map(Decided::events)
}

use rules::end::still_playing as game_over;

fn refuse(kind: ViolationKind, detail: impl Into<String>) -> RuleViolation {
    RuleViolation::new(REVIEW_RULE, kind, detail)
}

/// A refusal naming events of the log: each reader is told its own numbers for them
/// (`RuleViolation::render`), never the log's.
fn refuse_naming(kind: ViolationKind, pieces: Vec<Piece>) -> RuleViolation {
    RuleViolation::with(REVIEW_RULE, kind, pieces)
}

fn ledger(log: &[Entry]) -> Ledger {
    let mut ledger = Ledger::default();
    for e in log {
        // A loaded log was verified; a broken dice event cannot be in it.
        let _ = ledger.observe(e.seq, &e.event);
    }
    ledger
}

fn index(side: Side) -> usize {
    match side {
        Side::A => 0,
        Side::B => 1,
    }
}

fn contribute(
    game: &Game,
    log: &[Entry],
    by: Side,
    nonce: &Nonce,
) -> Result<Vec<Event>, RuleViolation> {
    game_over(game)?;
    if let Some(epoch) = ledger(log).open() {
        if epoch.contributions[index(by)].is_some() {
            return Err(RuleViolation::with(
                DICE_RULE,
                ViolationKind::WrongPhase,
                vec![
                    text(format!(
                        "the {} has contributed to the dice under the commitment of ",
                        game.side_name(by)
                    )),
                    Piece::Event(epoch.committed_at),
                    text(" already; a side contributes once per seed"),
                ],
            ));
        }
    }
    Ok(vec![Event::EntropyContributed(EntropyContributed {
        side: by,
        nonce: *nonce,
    })])
}

fn agree_to_reveal(game: &Game, log: &[Entry], by: Side) -> Result<Vec<Event>, RuleViolation> {
    game_over(game)?;
    let ledger = ledger(log);
    let refuse = |why: String| RuleViolation::new(DICE_RULE, ViolationKind::WrongPhase, why);
    let Some(epoch) = ledger.open().filter(|e| !e.rolls.is_empty()) else {
        return Err(refuse(
            "no die has been rolled under the current seed; there is nothing to check yet".into(),
        ));
    };
    if epoch.agreed[index(by)] {
        return Err(refuse(format!(
            "the {} has agreed to reveal this seed already; it is revealed once the {} agrees too",
            game.side_name(by),
            game.side_name(by.opponent())
        )));
    }
    if ledger.epochs().len() >= fair_dice::EPOCHS_MAX {
        return Err(refuse(format!(
            "this game has had {} seeds, the most one game may; the last is revealed when the game ends",
            fair_dice::EPOCHS_MAX
        )));
    }
    Ok(vec![Event::SeedRevealAgreed(SeedRevealAgreed { side: by })])
}

/// Accept (`reason: None`) or dispute adjudication `seq`: an `OutcomeAdjudicated` or a
/// `ManholeDeclaredUnseen` or `TunnelUseSeen` the opponent entered, answered once.
fn answer(
    game: &Game,
    log: &[Entry],
    by: Side,
    seq: u64,
    reason: Option<&String>,
) -> Result<Vec<Event>, RuleViolation> {
    game_over(game)?;
    let unknown = || {
        refuse_naming(
            ViolationKind::UnknownEvent,
            vec![
                text("there is no adjudication at "),
                Piece::Event(seq),
                text(format!(" for the {} to answer", game.side_name(by))),
            ],
        )
    };
    let entry = seq
        .checked_sub(1)
        .and_then(|i| log.get(usize::try_from(i).ok()?))
        .ok_or_else(unknown)?;
    let entered_by = match &entry.event {
        Event::OutcomeAdjudicated(OutcomeAdjudicated {
            by: entered, unit, ..
        }) => {
            // An adjudication of a unit hidden from the answering side is answered like one
            // that does not exist, so that a refusal never confirms a hidden unit.
            if game
                .units
                .get(unit)
                .is_some_and(|u| !Viewer::Side(by).sees_unit(u))
            {
                return Err(unknown());
            }
            *entered
        }
        Event::ManholeDeclaredUnseen(ManholeDeclaredUnseen { by: entered, .. })
        | Event::TunnelUseSeen(TunnelUseSeen { by: entered, .. }) => *entered,
        _ => return Err(unknown()),
    };
    if entered_by == by {
        return Err(refuse_naming(
            ViolationKind::WrongSide,
            vec![
                text(format!("the {} entered ", game.side_name(by))),
                Piece::Event(seq),
                text("; the opponent of whoever entered an adjudication answers it"),
            ],
        ));
    }
    let answered = log[seq as usize..].iter().find(|e| {
        matches!(
            e.event,
            Event::AdjudicationAccepted(AdjudicationAccepted { event, .. }) | Event::AdjudicationDisputed(AdjudicationDisputed { event, .. })
                if event == seq
        )
    });
    if let Some(a) = answered {
        return Err(refuse_naming(
            ViolationKind::WrongPhase,
            vec![
                Piece::Event(seq),
                text(" was answered at "),
                Piece::Event(a.seq),
                text(" already"),
            ],
        ));
    }
    Ok(vec![match reason {
        None => Event::AdjudicationAccepted(AdjudicationAccepted { by, event: seq }),
        Some(reason) => {
            if reason.trim().is_empty() || reason.len() > REASON_BYTES_MAX {
                return Err(refuse(
                    ViolationKind::UnitState,
                    format!(
                        "a dispute says why, in at most {REASON_BYTES_MAX} bytes (this reason has {})",
                        reason.len()
                    ),
                ));
            }
            Event::AdjudicationDisputed(AdjudicationDisputed {
                by,
                event: seq,
                reason: reason.clone(),
            })
        }
    }])
}

/// Why an event stops an undo by `by`, or `None` if it may be taken back.
fn barrier(event: &Event, by: Side, first: Side) -> Option<&'static str> {
    Some(match event {
        Event::DiceRolled(_) => "is a die roll; dice once rolled stand",
        Event::ClockStarted(_)
        | Event::ClockHandedOver(_)
        | Event::ClockExpired(_)
        | Event::ClaimedOnTime(_)
        | Event::TimeGiven(_)
        | Event::VacationStarted(_)
        | Event::VacationEnded(_) => "is on the clock; time once spent or given stands",
        Event::SewerEntryFailed(_)
        | Event::SewerStackLost(_)
        | Event::SewerEmergenceRolled(_)
        | Event::RecoveryAttempted(_) => "follows from a die roll",
        | Event::FpfNmcTaken(_) => "follows from a die roll",
        Event::HiddenUnitPlaced(_) => "revealed a hidden unit (A12.3)",
        Event::UnitSetUp(_) | Event::UnitSetUpLifted(_) => {
            "is a set-up placement the opponent may not see; `lift` and `setup` change it (A12.12)"
        }
        Event::SetupDone(_) => "ended a side's set-up: the side to act changed (A12.12)",
        Event::SetupEnded(_) => "revealed the set-up to the other side (A12.12)",
        Event::UnitEntryBlocked(_) => "revealed concealed or hidden units (A12.15)",
        Event::ConcealmentLostByBypass(_) => {
            "revealed concealed units gone round in Bypass as the MPh ended (A4.33)"
        }
        Event::DummiesRemovedInCloseCombat(_) => {
            "removed Dummies in Close Combat, showing the opponent what was under their \"?\" (A11.19)"
        }
        Event::UnitsMomentarilyRevealed(_) | Event::WallAdvantageDenied(_) => {
            "revealed units to the opponent (B9.324)"
        }
        // A "?" lost by firing is lost as the attack is declared, before any roll: the enemy
        // has seen what it hid, and an undo would put the "?" back over it.
        Event::ConcealmentLostByFire(_)
        | Event::ConcealmentLostInCloseCombat(_)
        | Event::ConcealmentLostToAttack(_) => "revealed units to the opponent (A12.14)",
        Event::UnitsSurfaced(_) => "brought units up from below ground, in view (B8.42)",
        Event::UnitsEnteredTunnel(_) | Event::UnitsRoutedThroughTunnel(_) => {
            "revealed a tunnel (B8.61, B8.62)"
        }
        Event::WallAdvantageHipWindowOffered(WallAdvantageHipWindowOffered { side, .. })
            if *side != by =>
        {
            "gave the opponent the moment to place a hidden unit: the side to act changed (B9.324)"
        }
        Event::WallAdvantageChallenged(WallAdvantageChallenged { side, .. }) if *side != by => {
            "challenged the opponent's WA: the side to act changed (B9.324)"
        }
        Event::WallAdvantageChanceOffered(WallAdvantageChanceOffered { side, .. })
            if *side != by =>
        {
            "gave the opponent a chance to claim WA: the side to act changed (B9.322)"
        }
        Event::StepEnded(StepEnded { ended, next, .. })
        | Event::StepPassed(StepPassed { ended, next })
            if ended.acting(first) != next.acting(first) =>
        {
            "ended a step and changed the side to act"
        }
        Event::GameCreated(_) | Event::GameEnded(_) | Event::Conceded(_) | Event::EndAgreed(_) => {
            "is the start or end of the game"
        }
        Event::EndProposed(_) => "is an offer to end the game, withdrawn when the step ends",
        Event::DiceCommitted(_)
        | Event::EntropyContributed(_)
        | Event::SeedRevealAgreed(_)
        | Event::SeedRevealed(_) => "belongs to the dice scheme (docs/dice.md)",
        Event::AdjudicationAccepted(_)
        | Event::AdjudicationDisputed(_)
        | Event::EventsUndone(_)
        | Event::EventsUndoneTo(_) => "is an answer between the players",
        _ => return None,
    })
}

/// An earlier request to undo and its refusal change nothing and may lie inside a later undo:
/// a player may ask again after a "no", or ask once more after playing on.
fn asking(event: &Event) -> bool {
    matches!(event, Event::UndoRequested(_) | Event::UndoDeclined(_))
}

/// Whether events `from..=to` — the end of `log` — may be taken back by `by`: the side to act,
/// whole commands of its own, none of them a die roll, a reveal of hidden information or a
/// change of the side to act.
///
/// Judged on what `by` may know: events its stream never showed it (the opponent's hidden
/// units at work, A12.3) are passed over, so the answer — a preview's, a request's and the
/// refusal's words — is the same whatever the opponent did out of its sight. Whether those
/// events may be taken back too is the opponent's to judge when it answers ([`consent`]).
pub(crate) fn check_undo(
    game: &Game,
    log: &[Entry],
    by: Side,
    from: u64,
    to: u64,
) -> Result<(), RuleViolation> {
    game_over(game)?;
    let acting = game.acting();
    if acting != by {
        return Err(refuse(
            ViolationKind::WrongSide,
            format!(
                "only the side to act takes back its events; the {} is to act",
                game.side_name(acting)
            ),
        ));
    }
    if from < 2 || from > to || to as usize > log.len() {
        return Err(refuse_naming(
            ViolationKind::UnknownEvent,
            // No number of the log's, nor its length: they count what the asker was not shown.
            vec![text("there are no such events to take back")],
        ));
    }
    let first = &log[(from - 1) as usize];
    if first.first != from {
        return Err(refuse_naming(
            ViolationKind::NotUndoable,
            vec![
                Piece::Event(from),
                text(" is part of a command that began at "),
                Piece::Event(first.first),
                text("; commands are taken back whole"),
            ],
        ));
    }
    let range = &log[(from - 1) as usize..to as usize];
    let seen = |e: &&Entry| seen_by(game, by, e);
    // A die roll is named before any other barrier: it is the one players ask about.
    let barriers = range
        .iter()
        .filter(seen)
        .filter_map(|e| Some((e, barrier(&e.event, by, game.scenario.first)?)));
    let rolled = barriers
        .clone()
        .find(|(e, _)| matches!(e.event, Event::DiceRolled(_)));
    if let Some((entry, why)) = rolled.or_else(|| barriers.clone().next()) {
        return Err(refuse_naming(
            ViolationKind::NotUndoable,
            vec![
                Piece::Event(entry.seq),
                text(format!(" {} {why}", entry.event.name())),
            ],
        ));
    }
    for entry in range.iter().filter(seen).filter(|e| !asking(&e.event)) {
        let seq = entry.seq;
        if entry.by != Some(by) {
            let whose = match entry.by {
                Some(side) => format!("the {}'s", game.side_name(side)),
                None => "not attributed to a side".into(),
            };
            return Err(refuse_naming(
                ViolationKind::NotUndoable,
                vec![
                    Piece::Event(seq),
                    text(format!(
                        " is {whose}; a side takes back only its own events"
                    )),
                ],
            ));
        }
    }
    Ok(())
}

/// How many undos `side` asked for in the current Player Turn: its requests since the step
/// that began it (the log's start for the first).
fn requests_this_player_turn(log: &[Entry], side: Side) -> usize {
    log.iter()
        .rev()
        .take_while(
            |e| !matches!(&e.event, Event::StepEnded(StepEnded { next, .. }) if next.step == 0),
        )
        .filter(|e| matches!(e.event, Event::UndoRequested(UndoRequested { by, .. }) if by == side))
        .count()
}

/// The commands that may be given again and again without play moving on are held to a
/// number: the players' entries ([`ENTRIES_PER_PLAYER_TURN_MAX`] a Player Turn), claims of WA
/// ([`WA_CLAIMS_PER_PLAYER_TURN_MAX`]), Transfers of a SW ([`TRANSFERS_PER_PLAYER_TURN_MAX`]),
/// the clock's
/// gifts and vacations ([`CLOCK_COMMANDS_PER_PLAYER_TURN_MAX`]) and the set-up step's
/// ([`SETUP_COMMANDS_MAX`]). Counted over the commands the log records `by` issued,
/// and asked before any of their own checks, as a verifier asks it.
fn check_logged_count(
    game: &Game,
    log: &[Entry],
    by: Side,
    command: &Command,
) -> Result<(), RuleViolation> {
    let entry = |c: &Command| {
        matches!(
            c,
            Command::Roll { .. }
                | Command::Adjudicate { .. }
                | Command::AdjudicateAfterRoll { .. }
                | Command::DeclareManholeUnseen { .. }
        )
    };
    let setup = |c: &Command| matches!(c, Command::SetUp { .. } | Command::LiftSetUp { .. });
    let clock = |c: &Command| matches!(c, Command::GiveTime { .. } | Command::StartVacation);
    let claim = |c: &Command| matches!(c, Command::ClaimWallAdvantage { .. });
    let transfer = |c: &Command| matches!(c, Command::TransferWeapon { .. });
    // A claim answering the chance the enemy's loss of WA offers is always taken: the chance
    // waits for an answer, and one comes at most once for each loss.
    let answering = game.wa_chance.as_ref().is_some_and(|c| c.side == by);
    let (rule, max, which, what): (&str, usize, Picks, &str) = if claim(command) && !answering {
        (
            "B9.322",
            WA_CLAIMS_PER_PLAYER_TURN_MAX,
            &claim,
            "claims of WA this Player Turn",
        )
    } else if transfer(command) {
        (
            "A4.431",
            TRANSFERS_PER_PLAYER_TURN_MAX,
            &transfer,
            "Transfers this Player Turn",
        )
    } else if clock(command) {
        (
            rules::timing::RULE,
            CLOCK_COMMANDS_PER_PLAYER_TURN_MAX,
            &clock,
            "gifts of time and vacations this Player Turn",
        )
    } else if entry(command) {
        let rule = match command {
            Command::Roll { .. } => DICE_RULE,
            _ => REVIEW_RULE,
        };
        (
            rule,
            ENTRIES_PER_PLAYER_TURN_MAX,
            &entry,
            "rolls and adjudications this Player Turn",
        )
    } else if setup(command) && game.setup.is_some() && !places_anew(game, command) {
        (
            "A12.12",
            SETUP_COMMANDS_MAX,
            &setup,
            "set-up commands in this set-up step",
        )
    } else {
        return Ok(());
    };
    // A finished game is refused as such first, as every command is.
    game_over(game)?;
    let given = commands_this_player_turn(log, by, which);
    if given < max {
        return Ok(());
    }
    Err(RuleViolation::new(
        rule,
        ViolationKind::WrongPhase,
        format!(
            "the {} has given {given} {what}, the most a side may ({max}), so that the game's log stays one an export holds; play on",
            game.side_name(by)
        ),
    ))
}

/// Which commands a count takes.
type Picks<'a> = &'a dyn Fn(&Command) -> bool;

/// Whether `command` sets up a unit not on the map: always taken, however many set-up
/// commands came before, so that a side can still place every unit and end its set-up (no
/// dead end); only moving a placed unit and taking one back are counted out.
fn places_anew(game: &Game, command: &Command) -> bool {
    matches!(command, Command::SetUp { unit, .. } if !game.units.contains_key(unit))
}

/// The commands `side` issued since the current Player Turn began (since the game began,
/// before Turn 1) that `which` picks, as the log records them.
fn commands_this_player_turn(log: &[Entry], side: Side, which: impl Fn(&Command) -> bool) -> usize {
    log.iter()
        .rev()
        .take_while(
            |e| !matches!(&e.event, Event::StepEnded(StepEnded { next, .. }) if next.step == 0),
        )
        .filter(|e| {
            e.command
                .as_ref()
                .is_some_and(|i| i.by == side && which(&i.command))
        })
        .count()
}

/// Whether `side`'s stream showed `entry`: not if it names a unit hidden from the side now
/// (a unit hidden now was hidden throughout: HIP is lost, never regained) or is the other
/// side's sighting of a tunnel ([`Game::shows`]).
fn seen_by(game: &Game, side: Side, entry: &Entry) -> bool {
    game.shows(Viewer::Side(side), &entry.event)
}

/// The undo asked for by `by`'s opponent as the log's last event: `(asker, from, to)`.
fn waiting_undo(game: &Game, log: &[Entry], by: Side) -> Result<(Side, u64, u64), RuleViolation> {
    game_over(game)?;
    match log.last().map(|e| &e.event) {
        Some(Event::UndoRequested(UndoRequested {
            by: asker,
            from,
            to,
        })) => {
            if *asker == by {
                return Err(refuse(
                    ViolationKind::WrongSide,
                    format!(
                        "the {} asked for this undo; the {} answers it",
                        game.side_name(by),
                        game.side_name(by.opponent())
                    ),
                ));
            }
            Ok((*asker, *from, *to))
        }
        _ => Err(refuse(
            ViolationKind::WrongPhase,
            "no undo is waiting for an answer; one is answered right after it is asked for",
        )),
    }
}

fn consent(game: &Game, log: &[Entry], by: Side) -> Result<Vec<Event>, RuleViolation> {
    let (asker, from, to) = waiting_undo(game, log, by)?;
    check_undo(game, &log[..to as usize], asker, from, to)?;
    // The asker judged the events it was shown; the events out of its sight in the range are
    // the answering side's to judge, and it may take back none that no undo may (a die roll,
    // a reveal). The refusal goes to the answering side alone, who sees them all.
    let unseen = log[(from - 1) as usize..to as usize]
        .iter()
        .filter(|e| !seen_by(game, asker, e))
        .find_map(|e| Some((e, barrier(&e.event, asker, game.scenario.first)?)));
    if let Some((entry, why)) = unseen {
        return Err(refuse_naming(
            ViolationKind::NotUndoable,
            vec![
                Piece::Event(entry.seq),
                text(format!(
                    " {} {why}; decline the undo instead",
                    entry.event.name()
                )),
            ],
        ));
    }
    // Within the trail: the position before `from` can be rebuilt without the log.
    if game.undo_trail.position_at(game, from - 1).is_none() {
        return Err(refuse_naming(
            ViolationKind::NotUndoable,
            vec![
                Piece::Event(from),
                text(format!(
                    " lies further back than an undo reaches (the last {UNDO_TRAIL_EVENTS_MAX} events); decline the undo instead"
                )),
            ],
        ));
    }
    Ok(vec![Event::EventsUndoneTo(EventsUndoneTo {
        requested_by: asker,
        consented_by: by,
        from,
        to,
    })])
}

/// An undo in its older form, [`Event::EventsUndone`] with the whole position, checked as a
/// verifier reads it: the position it carries is the one replaying the log before `from` gives.
fn check_undone_position(log: &[Entry], from: u64, restored: &Game) -> Result<(), Fault> {
    let truth = Game::replay(log[..(from - 1) as usize].iter().map(|e| &e.event))
        .map_err(|e| format!("the log before #{from} cannot be replayed: {e}"))?;
    if truth != *restored {
        return Err(format!(
            "restores a position that is not the one before #{from} (state hash {} where replay gives {})",
            restored.state_hash(),
            truth.state_hash()
        ).into());
    }
    Ok(())
}

/// Re-checks a logged event of this module against the log before it, as a verifier reads a
/// log: the answers and undo were legal when they were logged, an undo restored exactly the
/// position before the events it took back, and the side an event names issued it.
/// `game` is the position before `entry`; `log` the entries before it.
pub(crate) fn check_logged(game: &Game, log: &[Entry], entry: &Entry) -> Result<(), Fault> {
    let issued_by = |side: Side| match entry.by {
        Some(by) if by != side => Err(format!(
            "names the {} but was issued by the {}",
            game.side_name(side),
            game.side_name(by)
        )
        .into()),
        _ => Ok(()),
    };
    let legal = |result: Result<Vec<Event>, RuleViolation>| {
        result
            .map(|_| ())
            .map_err(|v| Fault::from(format!("was not legal when logged: {v}")))
    };
    match &entry.event {
        Event::EntropyContributed(EntropyContributed { side, .. })
        | Event::SeedRevealAgreed(SeedRevealAgreed { side }) => issued_by(*side),
        Event::AdjudicationAccepted(AdjudicationAccepted { by, event }) => {
            issued_by(*by)?;
            legal(answer(game, log, *by, *event, None))
        }
        Event::AdjudicationDisputed(AdjudicationDisputed { by, event, reason }) => {
            issued_by(*by)?;
            legal(answer(game, log, *by, *event, Some(reason)))
        }
        Event::UndoRequested(UndoRequested { by, from, to }) => {
            issued_by(*by)?;
            if *to + 1 != entry.seq {
                return Err(format!(
                    "asks to take back up to #{to}, but the events before it end at #{}",
                    entry.seq - 1
                )
                .into());
            }
            legal(check_undo(game, log, *by, *from, *to).map(|()| vec![]))
        }
        Event::UndoDeclined(UndoDeclined { by }) => {
            issued_by(*by)?;
            legal(waiting_undo(game, log, *by).map(|_| vec![]))
        }
        Event::EventsUndone(EventsUndone {
            requested_by,
            consented_by,
            from,
            to,
            restored,
        }) => {
            issued_by(*consented_by)?;
            let (asker, f, t) = waiting_undo(game, log, *consented_by)
                .map_err(|v| format!("was not legal when logged: {v}"))?;
            if (asker, f, t) != (*requested_by, *from, *to) {
                return Err(format!(
                    "takes back #{from}–#{to} for the {}, but the request before it was #{f}–#{t} by the {}",
                    game.side_name(*requested_by),
                    game.side_name(asker)
                ).into());
            }
            legal(consent(game, log, *consented_by))?;
            check_undone_position(log, *from, restored)
        }
        Event::EventsUndoneTo(EventsUndoneTo {
            requested_by,
            consented_by,
            from,
            to,
        }) => {
            issued_by(*consented_by)?;
            let decided = consent(game, log, *consented_by)
                .map_err(|v| format!("was not legal when logged: {v}"))?;
            if decided != [entry.event.clone()] {
                let (asker, f, t) = waiting_undo(game, log, *consented_by)
                    .map_err(|v| format!("was not legal when logged: {v}"))?;
                return Err(format!(
                    "takes back #{from}–#{to} for the {}, but the request before it was #{f}–#{t} by the {}",
                    game.side_name(*requested_by),
                    game.side_name(asker)
                ).into());
            }
            Ok(())
        }
        _ => Ok(()),
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::referee::testing::*;
    use crate::referee::Referee;
    use game::command::Outcome;
    use game::event::EventsUndoneTo;

    fn g3_to(hex_name: &str) -> Command {
        Command::Move {
            units: vec!["g3".into()],
            to: hex(hex_name),
        }
    }

    fn sewer_move() -> Command {
        Command::SewerMove {
            units: vec!["g1".into(), "g2".into(), "gl".into()],
            to: hex("20E4"),
        }
    }

    fn pin_g3() -> Command {
        Command::Adjudicate {
            unit: "g3".into(),
            outcome: Outcome::Pin,
            note: String::new(),
        }
    }

    /// Where an undo asks to start, relative to the commands played before it.
    #[derive(Clone, Copy)]
    enum From {
        /// The first event of the n-th command played in the case (0-based).
        Command(usize),
        /// An absolute event number.
        Seq(u64),
        /// One past the command's first event.
        Inside(usize),
    }

    /// The undo rule as a table: commands played in the German MPh, then an undo asked by a
    /// side from a point, and the refusal expected (`None`: allowed), ordered as the rule reads:
    /// the side to act → its own events → whole commands → no die roll, reveal or change of
    /// the side to act.
    #[test]
    fn the_undo_rule_case_by_case() {
        use ViolationKind::*;
        #[allow(clippy::type_complexity)]
        let cases: Vec<(
            &str,
            Vec<(Side, Command)>,
            Side,
            From,
            Option<(ViolationKind, &str)>,
        )> = vec![
            (
                "a move",
                vec![(Side::A, g3_to("20A3"))],
                Side::A,
                From::Command(0),
                None,
            ),
            (
                "two moves, back to the first",
                vec![(Side::A, g3_to("20A3")), (Side::A, g3_to("20A4"))],
                Side::A,
                From::Command(0),
                None,
            ),
            (
                "two moves, the last only",
                vec![(Side::A, g3_to("20A3")), (Side::A, g3_to("20A4"))],
                Side::A,
                From::Command(1),
                None,
            ),
            (
                "the side not acting",
                vec![(Side::A, g3_to("20A3"))],
                Side::B,
                From::Command(0),
                Some((WrongSide, "German is to act")),
            ),
            (
                "nothing there",
                vec![(Side::A, g3_to("20A3"))],
                Side::A,
                From::Seq(99),
                Some((UnknownEvent, "no such events")),
            ),
            (
                "the scenario itself",
                vec![],
                Side::A,
                From::Seq(1),
                Some((UnknownEvent, "no such events")),
            ),
            (
                "the opponent's adjudication in between",
                vec![(Side::A, g3_to("20A3")), (Side::B, pin_g3())],
                Side::A,
                From::Command(0),
                Some((NotUndoable, "the Russian's")),
            ),
            (
                "a die roll",
                vec![(Side::A, sewer_move())],
                Side::A,
                From::Command(0),
                Some((NotUndoable, "die roll")),
            ),
            (
                "half a command",
                vec![(Side::A, g3_to("20A3")), (Side::A, sewer_move())],
                Side::A,
                From::Inside(1),
                Some((NotUndoable, "commands are taken back whole")),
            ),
            (
                "past the end of the MPh",
                vec![(Side::A, g3_to("20A3")), (Side::A, Command::Done)],
                Side::A,
                From::Command(0),
                Some((WrongSide, "Russian is to act")),
            ),
            (
                "a dice contribution",
                vec![(Side::A, Command::ContributeEntropy { nonce: [5; 32] })],
                Side::A,
                From::Command(0),
                Some((NotUndoable, "dice scheme")),
            ),
        ];
        for (name, played, asker, from, expect) in cases {
            let mut r = start(3);
            to_german_mph(&mut r);
            let mut firsts = vec![];
            for (side, command) in played {
                firsts.push(r.game().version + 1);
                play(&mut r, side, command);
            }
            let from = match from {
                From::Command(i) => firsts[i],
                From::Inside(i) => firsts[i] + 1,
                From::Seq(s) => s,
            };
            let result = r.play(asker, &Command::RequestUndo { from }, &mut seeds());
            match (expect, result) {
                (None, Ok(events)) => {
                    assert!(matches!(events[0], Event::UndoRequested(_)), "{name}")
                }
                (Some((kind, words)), Err(v)) => {
                    assert_eq!(v.kind, kind, "{name}: {v}");
                    assert!(v.detail.contains(words), "{name}: {v}");
                    assert_eq!(v.rule, REVIEW_RULE, "{name}");
                }
                (expect, got) => panic!("{name}: expected {expect:?}, got {got:?}"),
            }
        }
    }

    /// The German asks to take back its move. Whether the Russian's HIP unit did something
    /// meanwhile (an adjudication the German's stream never showed, A12.3) changes neither the
    /// preview's answer nor the request's: both are judged on what the German may know. The
    /// Russian, who sees it all, answers, and a consent takes back its hidden event with the
    /// rest.
    #[test]
    fn an_undo_is_judged_on_what_the_asker_was_shown() {
        const HIDDEN: &str = include_str!("../../tests/hidden/scenario.toml");
        let mut quiet = start_with(HIDDEN, 3);
        to_german_mph(&mut quiet);
        let before = quiet.game().clone();
        play(
            &mut quiet,
            Side::A,
            Command::Move {
                units: vec!["gs1".into()],
                to: hex("20C4"),
            },
        );
        let from = before.version + 1;
        let mut busy = quiet.clone();
        play(
            &mut busy,
            Side::B,
            Command::Adjudicate {
                unit: "rh".into(),
                outcome: Outcome::Break,
                note: "`rh` broke".into(),
            },
        );
        assert!(
            !busy
                .game()
                .shows(Viewer::Side(Side::A), &busy.entries().last().unwrap().event),
            "the German never saw the HIP unit's adjudication"
        );
        let ask = Command::RequestUndo { from };
        let previewed = |r: &Referee| {
            crate::preview::preview(r.game(), r.entries(), Side::A, &ask)
                .map(|p| p.summary)
                .map_err(|v| v.to_string())
        };
        assert_eq!(previewed(&quiet), Ok("allowed".into()));
        assert_eq!(previewed(&busy), previewed(&quiet));
        for r in [&mut quiet, &mut busy] {
            play(r, Side::A, ask.clone());
            play(r, Side::B, Command::ConsentToUndo);
            assert_eq!(r.game().units["gs1"].hex, before.units["gs1"].hex);
            assert_eq!(r.game().units["rh"], before.units["rh"], "taken back too");
            let replayed = Game::replay(r.entries().iter().map(|e| &e.event)).unwrap();
            assert_eq!(&replayed, r.game());
        }
        // A verifier reading either log finds every request and answer legal.
        assert_eq!(check_logged_all(&quiet), Ok(()));
        assert_eq!(check_logged_all(&busy), Ok(()));
    }

    /// Move, ask to undo, consent — in a loop, as a player filling the log would. Each undo is
    /// logged as the version it returns to, a few bytes, not a position; the side's requests
    /// stop at the named limit for the Player Turn; replaying the log gives the live game; and
    /// the export verifies (every request and consent legal, re-decided).
    #[test]
    fn undo_in_a_loop_keeps_the_log_small_and_verifiable() {
        let mut r = start(3);
        to_german_mph(&mut r);
        let position =
            bincode::serde::encode_to_vec(r.game(), bincode::config::standard()).unwrap();
        let mut cycles = 0;
        let refused = loop {
            play(&mut r, Side::A, g3_to("20A3"));
            let from = r.game().version;
            match r.play(Side::A, &Command::RequestUndo { from }, &mut seeds()) {
                Ok(_) => {}
                Err(v) => break v,
            }
            play(&mut r, Side::B, Command::ConsentToUndo);
            assert_eq!(r.game().units["g3"].hex, hex("20A2"), "cycle {cycles}");
            cycles += 1;
        };
        assert_eq!(cycles, UNDO_REQUESTS_PER_PLAYER_TURN_MAX);
        assert_eq!(refused.kind, ViolationKind::NotUndoable, "{refused}");
        assert!(
            refused.detail.contains("undos this Player Turn"),
            "{refused}"
        );
        for e in r.entries() {
            let bytes = bincode::serde::encode_to_vec(&e.event, bincode::config::standard())
                .unwrap()
                .len();
            if matches!(e.event, Event::EventsUndoneTo(_)) {
                assert!(
                    bytes < 64 && bytes * 20 < position.len(),
                    "an undo logged in {bytes} bytes (a position is {})",
                    position.len()
                );
            }
        }
        let replayed = Game::replay(r.entries().iter().map(|e| &e.event)).unwrap();
        assert_eq!(&replayed, r.game(), "replay = live");
        assert_eq!(replayed.state_hash(), r.game().state_hash());
        assert_eq!(check_logged_all(&r), Ok(()));
        // The count starts again with the next Player Turn.
        while r.game().clock.player_turn == 1 {
            done(&mut r);
        }
        assert_eq!(requests_this_player_turn(r.entries(), Side::A), 0);
        // Played to the end, the game's export verifies to the live state.
        while !r.game().over {
            done(&mut r);
        }
        let verified = crate::export::verify(export(&r).as_bytes(), &mut |_, _| {})
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(verified.game.state_hash(), r.game().state_hash());
    }

    /// A side makes at most `ENTRIES_PER_PLAYER_TURN_MAX` rolls and adjudications a Player
    /// Turn: they may be made at any moment and change nothing play goes on from (a roll), or
    /// change it back and forth (a unit broken, then rallied), so a side entering them in a
    /// loop grew its game past what an export holds. The other side's entries are its own,
    /// the count starts again with the next Player Turn, and the game's export verifies.
    #[test]
    fn rolls_and_adjudications_in_a_loop_are_held_to_a_number_a_player_turn() {
        let mut r = start(3);
        to_german_mph(&mut r);
        let roll = Command::Roll {
            dice: game::command::DiceCount::Two,
            purpose: game::dice::RollPurpose::Ift,
            note: String::new(),
        };
        for (side, unit) in [(Side::A, "g1"), (Side::B, "r1")] {
            let adjudicate = |outcome| Command::Adjudicate {
                unit: unit.into(),
                outcome,
                note: String::new(),
            };
            for i in 0..ENTRIES_PER_PLAYER_TURN_MAX {
                let command = match i % 3 {
                    0 => adjudicate(game::command::Outcome::Break),
                    1 => adjudicate(game::command::Outcome::Rally),
                    _ => roll.clone(),
                };
                play(&mut r, side, command);
            }
            let version = r.game().version;
            let unseen = Command::DeclareManholeUnseen {
                hex: "20E4".parse().unwrap(),
            };
            let mut refusals = vec![
                (roll.clone(), DICE_RULE),
                (adjudicate(game::command::Outcome::Pin), REVIEW_RULE),
            ];
            // The German moves now: a Manhole he declares out of enemy LOS is one more entry.
            if side == Side::A {
                refusals.push((unseen, REVIEW_RULE));
            }
            for (command, rule) in refusals {
                let refused = r.play(side, &command, &mut seeds()).unwrap_err();
                assert_eq!(
                    (refused.rule.as_str(), refused.kind),
                    (rule, ViolationKind::WrongPhase)
                );
                assert!(
                    refused
                        .detail
                        .contains("500 rolls and adjudications this Player Turn"),
                    "{refused}"
                );
            }
            assert_eq!(r.game().version, version, "a refused entry logs nothing");
        }
        while r.game().clock.player_turn == 1 {
            done(&mut r);
        }
        play(&mut r, Side::A, roll);
        while !r.game().over {
            done(&mut r);
        }
        let verified = crate::export::verify(export(&r).as_bytes(), &mut |_, _| {})
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(verified.game.state_hash(), r.game().state_hash());
    }

    /// A side makes at most `WA_CLAIMS_PER_PLAYER_TURN_MAX` claims of WA a Player Turn: in its
    /// MPh a unit may claim and forfeit WA again and again, neither costing MF (B9.322).
    #[test]
    fn claims_of_wa_in_a_loop_are_held_to_a_number_a_player_turn() {
        let mut r = start_with(
            include_str!("../../tests/positions/scenarios/wa-moments.toml"),
            3,
        );
        for unit in ["rh", "rw", "rw2"] {
            let place = Command::PlaceHidden {
                unit: unit.into(),
                claim_wall_advantage: false,
            };
            play(&mut r, Side::B, place);
        }
        to_german_mph(&mut r);
        let g1 = || vec!["g1".to_string()];
        play(
            &mut r,
            Side::A,
            Command::Move {
                units: g1(),
                to: "20F8".parse().unwrap(),
            },
        );
        for _ in 0..WA_CLAIMS_PER_PLAYER_TURN_MAX {
            play(&mut r, Side::A, Command::ClaimWallAdvantage { units: g1() });
            play(&mut r, Side::B, Command::DeclineWallAdvantage);
            play(
                &mut r,
                Side::A,
                Command::ForfeitWallAdvantage { units: g1() },
            );
        }
        let claim = Command::ClaimWallAdvantage { units: g1() };
        let refused = r.play(Side::A, &claim, &mut seeds()).unwrap_err();
        assert_eq!(refused.rule, "B9.322");
        assert!(
            refused.detail.contains("500 claims of WA this Player Turn"),
            "{refused}"
        );
    }

    /// A side gives at most `TRANSFERS_PER_PLAYER_TURN_MAX` Transfers a Player Turn: one SW
    /// handed between two units of a Location and back, again and again, costs neither MF nor
    /// anything else in the RPh (A4.431), and grew the log without bound before, past what an
    /// export holds. The count starts again with the next Player Turn.
    #[test]
    fn transfers_in_a_loop_are_held_to_a_number_a_player_turn() {
        let mut r = start_with(
            include_str!("../../tests/positions/scenarios/a4-431-transfer.toml"),
            3,
        );
        let to = |unit: &str| Command::TransferWeapon {
            weapon: "tlmg".into(),
            to: unit.into(),
        };
        for i in 0..TRANSFERS_PER_PLAYER_TURN_MAX {
            play(&mut r, Side::A, to(if i % 2 == 0 { "t2" } else { "t1" }));
        }
        let refused = r.play(Side::A, &to("t2"), &mut seeds()).unwrap_err();
        assert_eq!(refused.rule, "A4.431");
        assert!(
            refused.detail.contains("500 Transfers this Player Turn"),
            "{refused}"
        );
        // The Russian's count is his own.
        let russian = Command::TransferWeapon {
            weapon: "rlmg".into(),
            to: "r2".into(),
        };
        play(&mut r, Side::B, russian);
    }

    /// A side gives at most `SETUP_COMMANDS_MAX` set-up commands: moving one unit to and fro
    /// in its set-up area grew the log without bound before Turn 1.
    #[test]
    fn set_up_commands_in_a_loop_are_held_to_a_number() {
        let mut r = start_with(
            include_str!("../../tests/positions/scenarios/setup.toml"),
            3,
        );
        let to = |hex: &str| Command::SetUp {
            unit: "rl".into(),
            hex: hex.parse().unwrap(),
            concealed: false,
            hidden: false,
            weapons: vec![],
        };
        for i in 0..SETUP_COMMANDS_MAX {
            match i % 3 {
                0 => play(&mut r, Side::B, to("1B2")),
                1 => play(&mut r, Side::B, to("1B3")),
                _ => play(&mut r, Side::B, Command::LiftSetUp { unit: "rl".into() }),
            };
        }
        let refused = r.play(Side::B, &to("1B2"), &mut seeds()).unwrap_err();
        assert_eq!(refused.rule, "A12.12");
        assert!(
            refused
                .detail
                .contains("2000 set-up commands in this set-up step"),
            "{refused}"
        );
        let lift = Command::LiftSetUp { unit: "rl".into() };
        assert_eq!(
            r.play(Side::B, &lift, &mut seeds()).unwrap_err().rule,
            "A12.12"
        );
        // No dead end: the units not on the map are still placed, and the set-up ends.
        for (unit, hex, concealed, hidden) in [
            ("r1", "1C3", true, false),
            ("rd", "1C3", true, false),
            ("r4", "1C4", false, true),
            ("r2", "1C3", false, false),
            ("r3", "1C3", false, false),
        ] {
            let place = Command::SetUp {
                unit: unit.into(),
                hex: hex.parse().unwrap(),
                concealed,
                hidden,
                weapons: vec![],
            };
            play(&mut r, Side::B, place);
        }
        play(&mut r, Side::B, Command::Done);
        assert_eq!(r.game().acting(), Side::A, "the German sets up");
    }

    /// Every logged answer and undo re-checked as a verifier reads the log.
    fn check_logged_all(r: &Referee) -> Result<(), Fault> {
        let entries = r.entries();
        let mut game = Game::replay([&entries[0].event]).unwrap();
        for (i, entry) in entries.iter().enumerate().skip(1) {
            check_logged(&game, &entries[..i], entry)?;
            game::apply(&mut game, &entry.event);
        }
        Ok(())
    }

    #[test]
    fn an_undo_needs_consent_and_restores_the_position_before() {
        let mut r = start(3);
        to_german_mph(&mut r);
        let before = r.game().clone();
        play(&mut r, Side::A, g3_to("20A3"));
        play(&mut r, Side::A, g3_to("20A4"));
        let from = before.version + 1;

        let ask = |r: &mut Referee| play(r, Side::A, Command::RequestUndo { from });
        ask(&mut r);
        let own = r
            .play(Side::A, &Command::ConsentToUndo, &mut seeds())
            .unwrap_err();
        assert_eq!(own.kind, ViolationKind::WrongSide, "{own}");
        play(&mut r, Side::B, Command::DeclineUndo);
        assert_eq!(
            r.game().units["g3"].hex,
            hex("20A4"),
            "declined: nothing moved"
        );
        let late = r
            .play(Side::B, &Command::ConsentToUndo, &mut seeds())
            .unwrap_err();
        assert_eq!(late.kind, ViolationKind::WrongPhase, "{late}");

        ask(&mut r);
        let events = play(&mut r, Side::B, Command::ConsentToUndo);
        assert!(matches!(
            &events[0],
            Event::EventsUndoneTo(EventsUndoneTo { from: f, requested_by: Side::A, consented_by: Side::B, .. }) if *f == from
        ));
        let mut expected = before.clone();
        expected.version = r.game().version;
        assert_eq!(r.game(), &expected, "the position before the moves");
        // The unit has its MF again, and replay of the log reaches the same state.
        play(&mut r, Side::A, g3_to("20A1"));
        let replayed = Game::replay(r.entries().iter().map(|e| &e.event)).unwrap();
        assert_eq!(&replayed, r.game());
        // An undo is an answer between the players: it cannot be taken back itself.
        let undo_seq = r
            .entries()
            .iter()
            .find(|e| matches!(e.event, Event::EventsUndoneTo(_)))
            .unwrap()
            .seq;
        let refused = r
            .play(
                Side::A,
                &Command::RequestUndo { from: undo_seq },
                &mut seeds(),
            )
            .unwrap_err();
        assert_eq!(refused.kind, ViolationKind::NotUndoable, "{refused}");
    }

    #[test]
    fn adjudications_are_answered_once_by_the_opponent() {
        use ViolationKind::*;
        let mut r = start(3);
        to_german_mph(&mut r);
        play(&mut r, Side::B, pin_g3());
        let pin = r.game().version;
        let try_it = |r: &mut Referee, by: Side, command: Command| {
            r.play(by, &command, &mut seeds())
                .map_err(|v| (v.kind, v.detail))
        };
        let dispute = |event: u64, reason: &str| Command::DisputeAdjudication {
            event,
            reason: reason.into(),
        };
        for (by, command, kind, words) in [
            (
                Side::B,
                Command::AcceptAdjudication { event: pin },
                WrongSide,
                "Russian entered",
            ),
            (
                Side::A,
                Command::AcceptAdjudication { event: 1 },
                UnknownEvent,
                "no adjudication at #1",
            ),
            (
                Side::A,
                Command::AcceptAdjudication { event: 99 },
                UnknownEvent,
                "no adjudication at #99",
            ),
            (Side::A, dispute(pin, " "), UnitState, "says why"),
            (
                Side::A,
                dispute(pin, &"x".repeat(REASON_BYTES_MAX + 1)),
                UnitState,
                "at most",
            ),
        ] {
            let (got, detail) = try_it(&mut r, by, command).unwrap_err();
            assert_eq!(got, kind, "{detail}");
            assert!(detail.contains(words), "{detail}");
        }
        try_it(&mut r, Side::A, dispute(pin, "no LOS to A2")).unwrap();
        let (kind, detail) =
            try_it(&mut r, Side::A, Command::AcceptAdjudication { event: pin }).unwrap_err();
        assert_eq!(kind, WrongPhase);
        assert!(detail.contains("answered at"), "{detail}");
        assert!(
            r.game().units["g3"].pinned,
            "a dispute records; it changes nothing"
        );
        let record = crate::words::describe_event(r.game(), &r.entries().last().unwrap().event);
        assert_eq!(
            record,
            format!("German disputed adjudication #{pin}: no LOS to A2 (docs/review.md)")
        );
    }

    #[test]
    fn the_position_alone_cannot_decide_these() {
        let game = start(3).game().clone();
        let v = rules::decide(
            &game,
            Side::A,
            &Command::ConsentToUndo,
            &mut game::dice::ScriptedDice::default(),
        )
        .unwrap_err();
        assert_eq!(v.kind, ViolationKind::NotModelled);
    }
}

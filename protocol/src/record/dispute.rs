//! Dispute review: the commands that are about the log rather than the position — answers to
//! adjudications, undo, and the players' part in the dice (`docs/review.md`, `docs/dice.md`).
//!
//! They are decided by [`decide`], which reads the game's log (with who issued each command,
//! [`Entry`]) as well as its position, and hands every other command to
//! [`rules::decide`](crate::rules::decide). Like the rules, it never mutates and names the
//! rule behind a refusal — here the document that defines the procedure.
//!
//! Undo in an append-only log: an undo is an event, [`Event::EventsUndone`], carrying the
//! position from before the events it takes back, rebuilt by replaying the log up to them when
//! the undo is decided. `apply` puts that position back, so replay stays a fold of `apply`
//! over the log and reaches what live play reached; a verifier replays the same prefix and
//! checks the carried position against it ([`check_logged`]).

use crate::board::scenario::Side;
use crate::game::command::Command;
use crate::game::dice::DiceSource;
use crate::game::event::Event;
use crate::game::{Game, Viewer};
use crate::record::chain::Entry;
use crate::record::fair_dice::{self, Ledger, Nonce};
use crate::rules::violation::{RuleViolation, ViolationKind};
use data_encoding::HEXLOWER;

/// What a refusal about answers and undo cites: the document that defines them.
pub const RULE: &str = crate::rules::LOG_RULE;

/// Longest reason a dispute may give, in bytes: a sentence or two, like an adjudication's note.
pub const REASON_BYTES_MAX: usize = 200;

/// Decides `command`, issued by side `by`, against the position and the log that led to it
/// (`log[i]` is event `i + 1`; `log.len()` equals `game.version`).
pub fn decide(
    game: &Game,
    log: &[Entry],
    by: Side,
    command: &Command,
    dice: &mut dyn DiceSource,
) -> Result<Vec<Event>, RuleViolation> {
    match command {
        Command::ContributeEntropy { nonce } => contribute(game, log, by, nonce),
        Command::AgreeToRevealSeed => agree_to_reveal(game, log, by),
        Command::AcceptAdjudication { event } => answer(game, log, by, *event, None),
        Command::DisputeAdjudication { event, reason } => {
            answer(game, log, by, *event, Some(reason))
        }
        Command::RequestUndo { from } => {
            check_undo(game, log, by, *from, game.version)?;
            Ok(vec![Event::UndoRequested {
                by,
                from: *from,
                to: game.version,
            }])
        }
        Command::ConsentToUndo => consent(game, log, by),
        Command::DeclineUndo => {
            waiting_undo(game, log, by)?;
            Ok(vec![Event::UndoDeclined { by }])
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
                    Event::DiceRolled { roll } => Some(roll),
                    _ => None,
                })
                .ok_or_else(|| {
                    refuse(
                        ViolationKind::UnknownEvent,
                        format!("there is no roll #{roll} for an adjudication to follow"),
                    )
                })?;
            let cited = format!(
                "after #{roll} ({} {:?} = {}){}{note}",
                logged.purpose.describe(),
                logged.dice,
                logged.final_result,
                if note.is_empty() { "" } else { ": " }
            );
            crate::rules::decide(
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
        other => crate::rules::decide(game, by, other, dice),
    }
}

fn game_over(game: &Game) -> Result<(), RuleViolation> {
    if game.over {
        return Err(RuleViolation::new(
            "A3",
            ViolationKind::GameOver,
            "the game is over; its log is final",
        ));
    }
    Ok(())
}

fn refuse(kind: ViolationKind, detail: impl Into<String>) -> RuleViolation {
    RuleViolation::new(RULE, kind, detail)
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
            return Err(RuleViolation::new(
                fair_dice::RULE,
                ViolationKind::WrongPhase,
                format!(
                    "the {} has contributed to the dice under the commitment of #{} already; a side contributes once per seed",
                    game.side_name(by),
                    epoch.committed_at
                ),
            ));
        }
    }
    Ok(vec![Event::EntropyContributed {
        side: by,
        nonce: *nonce,
    }])
}

fn agree_to_reveal(game: &Game, log: &[Entry], by: Side) -> Result<Vec<Event>, RuleViolation> {
    game_over(game)?;
    let ledger = ledger(log);
    let refuse = |why: String| RuleViolation::new(fair_dice::RULE, ViolationKind::WrongPhase, why);
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
    Ok(vec![Event::SeedRevealAgreed { side: by }])
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
        refuse(
            ViolationKind::UnknownEvent,
            format!(
                "there is no adjudication #{seq} for the {} to answer",
                game.side_name(by)
            ),
        )
    };
    let entry = seq
        .checked_sub(1)
        .and_then(|i| log.get(usize::try_from(i).ok()?))
        .ok_or_else(unknown)?;
    let entered_by = match &entry.event {
        Event::OutcomeAdjudicated {
            by: entered, unit, ..
        } => {
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
        Event::ManholeDeclaredUnseen { by: entered, .. }
        | Event::TunnelUseSeen { by: entered, .. } => *entered,
        _ => return Err(unknown()),
    };
    if entered_by == by {
        return Err(refuse(
            ViolationKind::WrongSide,
            format!(
                "the {} entered #{seq}; the opponent of whoever entered an adjudication answers it",
                game.side_name(by)
            ),
        ));
    }
    let answered = log[seq as usize..].iter().find(|e| {
        matches!(
            e.event,
            Event::AdjudicationAccepted { event, .. } | Event::AdjudicationDisputed { event, .. }
                if event == seq
        )
    });
    if let Some(a) = answered {
        return Err(refuse(
            ViolationKind::WrongPhase,
            format!("#{seq} was answered at #{} already", a.seq),
        ));
    }
    Ok(vec![match reason {
        None => Event::AdjudicationAccepted { by, event: seq },
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
            Event::AdjudicationDisputed {
                by,
                event: seq,
                reason: reason.clone(),
            }
        }
    }])
}

/// Why an event stops an undo by `by`, or `None` if it may be taken back.
fn barrier(event: &Event, by: Side, first: Side) -> Option<&'static str> {
    Some(match event {
        Event::DiceRolled { .. } => "is a die roll; dice once rolled stand",
        Event::ClockStarted { .. }
        | Event::ClockHandedOver { .. }
        | Event::ClockExpired { .. }
        | Event::ClaimedOnTime { .. }
        | Event::TimeGiven { .. }
        | Event::VacationStarted { .. }
        | Event::VacationEnded { .. } => "is on the clock; time once spent or given stands",
        Event::SewerEntryFailed { .. }
        | Event::SewerStackLost { .. }
        | Event::SewerEmergenceRolled { .. } => "follows from a die roll",
        Event::HiddenUnitPlaced { .. } => "revealed a hidden unit (A12.3)",
        Event::UnitEntryBlocked { .. } => "revealed concealed or hidden units (A12.15)",
        Event::UnitsMomentarilyRevealed { .. } | Event::WallAdvantageDenied { .. } => {
            "revealed units to the opponent (B9.324)"
        }
        Event::UnitsSurfaced { .. } => "brought units up from below ground, in view (B8.42)",
        Event::UnitsEnteredTunnel { .. } | Event::UnitsRoutedThroughTunnel { .. } => {
            "revealed a tunnel (B8.61, B8.62)"
        }
        Event::WallAdvantageHipWindowOffered { side, .. } if *side != by => {
            "gave the opponent the moment to place a hidden unit: the side to act changed (B9.324)"
        }
        Event::WallAdvantageChallenged { side, .. } if *side != by => {
            "challenged the opponent's WA: the side to act changed (B9.324)"
        }
        Event::WallAdvantageChanceOffered { side, .. } if *side != by => {
            "gave the opponent a chance to claim WA: the side to act changed (B9.322)"
        }
        Event::StepEnded { ended, next, .. } if ended.acting(first) != next.acting(first) => {
            "ended a step and changed the side to act"
        }
        Event::GameCreated { .. }
        | Event::GameEnded { .. }
        | Event::Conceded { .. }
        | Event::EndAgreed { .. } => "is the start or end of the game",
        Event::EndProposed { .. } => "is an offer to end the game, withdrawn when the step ends",
        Event::DiceCommitted { .. }
        | Event::EntropyContributed { .. }
        | Event::SeedRevealAgreed { .. }
        | Event::SeedRevealed { .. } => "belongs to the dice scheme (docs/dice.md)",
        Event::AdjudicationAccepted { .. }
        | Event::AdjudicationDisputed { .. }
        | Event::EventsUndone { .. } => "is an answer between the players",
        _ => return None,
    })
}

/// An earlier request to undo and its refusal change nothing and may lie inside a later undo:
/// a player may ask again after a "no", or ask once more after playing on.
fn asking(event: &Event) -> bool {
    matches!(
        event,
        Event::UndoRequested { .. } | Event::UndoDeclined { .. }
    )
}

/// Whether events `from..=to` — the end of `log` — may be taken back by `by`: the side to act,
/// whole commands of its own, none of them a die roll, a reveal of hidden information or a
/// change of the side to act.
pub fn check_undo(
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
        return Err(refuse(
            ViolationKind::UnknownEvent,
            format!("there are no events #{from}–#{to} to take back (the log ends at #{to})"),
        ));
    }
    let first = &log[(from - 1) as usize];
    if first.first != from {
        return Err(refuse(
            ViolationKind::NotUndoable,
            format!(
                "#{from} is part of a command that began at #{}; commands are taken back whole",
                first.first
            ),
        ));
    }
    let range = &log[(from - 1) as usize..to as usize];
    // A die roll is named before any other barrier: it is the one players ask about.
    let barriers = range
        .iter()
        .filter_map(|e| Some((e, barrier(&e.event, by, game.scenario.first)?)));
    let rolled = barriers
        .clone()
        .find(|(e, _)| matches!(e.event, Event::DiceRolled { .. }));
    if let Some((entry, why)) = rolled.or_else(|| barriers.clone().next()) {
        return Err(refuse(
            ViolationKind::NotUndoable,
            format!("#{} {} {why}", entry.seq, entry.event.name()),
        ));
    }
    for entry in range.iter().filter(|e| !asking(&e.event)) {
        let seq = entry.seq;
        if entry.by != Some(by) {
            let whose = match entry.by {
                Some(side) => format!("the {}'s", game.side_name(side)),
                None => "not attributed to a side".into(),
            };
            return Err(refuse(
                ViolationKind::NotUndoable,
                format!("#{seq} is {whose}; a side takes back only its own events"),
            ));
        }
    }
    Ok(())
}

/// The undo asked for by `by`'s opponent as the log's last event: `(asker, from, to)`.
fn waiting_undo(game: &Game, log: &[Entry], by: Side) -> Result<(Side, u64, u64), RuleViolation> {
    game_over(game)?;
    match log.last().map(|e| &e.event) {
        Some(Event::UndoRequested {
            by: asker,
            from,
            to,
        }) => {
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
    let mut restored =
        Game::replay(log[..(from - 1) as usize].iter().map(|e| &e.event)).map_err(|e| {
            refuse(
                ViolationKind::UnknownEvent,
                format!("the log before #{from} cannot be replayed: {e}"),
            )
        })?;
    // The clocks are not taken back (`apply` keeps them), and a logged position has none.
    restored.timing = None;
    Ok(vec![Event::EventsUndone {
        requested_by: asker,
        consented_by: by,
        from,
        to,
        restored: Box::new(restored),
    }])
}

/// Re-checks a logged event of this module against the log before it, as a verifier reads a
/// log: the answers and undo were legal when they were logged, an undo restored exactly the
/// position before the events it took back, and the side an event names issued it.
/// `game` is the position before `entry`; `log` the entries before it.
pub fn check_logged(game: &Game, log: &[Entry], entry: &Entry) -> Result<(), String> {
    let issued_by = |side: Side| match entry.by {
        Some(by) if by != side => Err(format!(
            "names the {} but was issued by the {}",
            game.side_name(side),
            game.side_name(by)
        )),
        _ => Ok(()),
    };
    let legal = |result: Result<Vec<Event>, RuleViolation>| {
        result
            .map(|_| ())
            .map_err(|v| format!("was not legal when logged: {v}"))
    };
    match &entry.event {
        Event::EntropyContributed { side, .. } | Event::SeedRevealAgreed { side } => {
            issued_by(*side)
        }
        Event::AdjudicationAccepted { by, event } => {
            issued_by(*by)?;
            legal(answer(game, log, *by, *event, None))
        }
        Event::AdjudicationDisputed { by, event, reason } => {
            issued_by(*by)?;
            legal(answer(game, log, *by, *event, Some(reason)))
        }
        Event::UndoRequested { by, from, to } => {
            issued_by(*by)?;
            if *to + 1 != entry.seq {
                return Err(format!(
                    "asks to take back up to #{to}, but the events before it end at #{}",
                    entry.seq - 1
                ));
            }
            legal(check_undo(game, log, *by, *from, *to).map(|()| vec![]))
        }
        Event::UndoDeclined { by } => {
            issued_by(*by)?;
            legal(waiting_undo(game, log, *by).map(|_| vec![]))
        }
        Event::EventsUndone {
            requested_by,
            consented_by,
            from,
            to,
            restored,
        } => {
            issued_by(*consented_by)?;
            let (asker, f, t) = waiting_undo(game, log, *consented_by)
                .map_err(|v| format!("was not legal when logged: {v}"))?;
            if (asker, f, t) != (*requested_by, *from, *to) {
                return Err(format!(
                    "takes back #{from}–#{to} for the {}, but the request before it was #{f}–#{t} by the {}",
                    game.side_name(*requested_by),
                    game.side_name(asker)
                ));
            }
            let Ok(Event::EventsUndone {
                restored: truth, ..
            }) = consent(game, log, *consented_by).map(|mut e| e.remove(0))
            else {
                return Err("was not legal when logged".into());
            };
            if truth != *restored {
                return Err(format!(
                    "restores a position that is not the one before #{from} (state hash {} where replay gives {})",
                    restored.state_hash(),
                    truth.state_hash()
                ));
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The readable account of this module's events, with the document behind each.
pub fn describe(sides: &[crate::board::scenario::SideSpec; 2], event: &Event) -> String {
    let name = |s: Side| sides[s as usize].name.clone();
    let short = |bytes: &[u8]| HEXLOWER.encode(&bytes[..8]);
    match event {
        Event::DiceCommitted { commitment } => format!(
            "the server committed to its secret dice seed: blake3 {commitment} ({})",
            fair_dice::RULE
        ),
        Event::EntropyContributed { side, nonce } => format!(
            "{} added its nonce {}… to the dice key ({})",
            name(*side),
            short(nonce),
            fair_dice::RULE
        ),
        Event::SeedRevealAgreed { side } => format!(
            "{} agreed to reveal the dice seed now ({})",
            name(*side),
            fair_dice::RULE
        ),
        Event::SeedRevealed { seed } => format!(
            "the server revealed its dice seed {}: every roll made under it can now be checked ({})",
            HEXLOWER.encode(seed),
            fair_dice::RULE
        ),
        Event::AdjudicationAccepted { by, event } => {
            format!("{} accepted adjudication #{event} ({RULE})", name(*by))
        }
        Event::AdjudicationDisputed { by, event, reason } => format!(
            "{} disputed adjudication #{event}: {reason} ({RULE})",
            name(*by)
        ),
        Event::UndoRequested { by, from, to } => format!(
            "{} asked to take back #{from}–#{to}, its own last events ({RULE})",
            name(*by)
        ),
        Event::UndoDeclined { by } => {
            format!("{} declined to let them be taken back ({RULE})", name(*by))
        }
        Event::EventsUndone {
            requested_by,
            consented_by,
            from,
            to,
            ..
        } => format!(
            "#{from}–#{to} taken back at the {}'s request with the {}'s consent: the position is as it was before #{from} ({RULE})",
            name(*requested_by),
            name(*consented_by)
        ),
        other => other.name().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::command::Outcome;
    use crate::record::referee::testing::*;
    use crate::record::referee::Referee;

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
                Some((UnknownEvent, "no events #99")),
            ),
            (
                "the scenario itself",
                vec![],
                Side::A,
                From::Seq(1),
                Some((UnknownEvent, "no events #1")),
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
                    assert!(matches!(events[0], Event::UndoRequested { .. }), "{name}")
                }
                (Some((kind, words)), Err(v)) => {
                    assert_eq!(v.kind, kind, "{name}: {v}");
                    assert!(v.detail.contains(words), "{name}: {v}");
                    assert_eq!(v.rule, RULE, "{name}");
                }
                (expect, got) => panic!("{name}: expected {expect:?}, got {got:?}"),
            }
        }
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
            Event::EventsUndone { from: f, requested_by: Side::A, consented_by: Side::B, .. } if *f == from
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
            .find(|e| matches!(e.event, Event::EventsUndone { .. }))
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
                "no adjudication #1",
            ),
            (
                Side::A,
                Command::AcceptAdjudication { event: 99 },
                UnknownEvent,
                "no adjudication #99",
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
        let record = describe(&r.game().scenario.sides, &r.entries().last().unwrap().event);
        assert_eq!(
            record,
            format!("German disputed adjudication #{pin}: no LOS to A2 (docs/review.md)")
        );
    }

    #[test]
    fn the_position_alone_cannot_decide_these() {
        let game = start(3).game().clone();
        let v = crate::rules::decide(
            &game,
            Side::A,
            &Command::ConsentToUndo,
            &mut crate::game::dice::ScriptedDice::default(),
        )
        .unwrap_err();
        assert_eq!(v.kind, ViolationKind::NotModelled);
    }
}

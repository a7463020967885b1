//! Every event in words, for the player's terminal, the game record and the export file.
//!
//! One sentence per event, naming the side, the units and the rule behind the change, so a log
//! read top to bottom is a readable account of the game. The server sends these words with each
//! event (`wire`'s `EventInfo`), the CLI prints them, and `asl export` writes them beside the
//! envelopes.

use board::scenario::Side;
use board::terrain::Mf;
use game::event::Event;
use game::event::{
    AllMfSpent, AmbushChecked, AssaultMovementDeclared, AttackDeclared, AttackLeftToPlayers,
    AttackResolved, ClaimedOnTime, ClockExpired, ClockHandedOver, ClockStarted,
    CloseCombatDesignated, Conceded, DesperationMoraleMarked, DesperationMoraleRemoved, DiceRolled,
    DoubleTimeDeclared, EndAgreed, EndProposed, FireEffectApplied, FireEffectLeftToPlayers,
    GameCreated, GameEnded, HiddenUnitPlaced, IftAttackResolved, ManholeDeclaredUnseen,
    MeleeRecorded, MultipleRofRetained, OpportunityFireMarked, OutcomeAdjudicated, RallyAttempted,
    ResidualFpLeft, RoutLeftToPlayers, SetupDone, SetupEnded, SewerEmergenceRolled,
    SewerEntryFailed, SewerStackLost, SewerStackMoved, ShellholeCoverTaken, StepEnded, StepPassed,
    TimeGiven, TunnelDestroyed, TunnelEntranceDiscovered, TunnelUseSeen, TunnelUseSighted,
    UnitAdvanced, UnitBypassed, UnitEntryBlocked, UnitFailedToRout, UnitMoved, UnitRouted,
    UnitSetUp, UnitSetUpLifted, UnitsEntered, UnitsEnteredSewer, UnitsEnteredTunnel,
    UnitsMomentarilyRevealed, UnitsRoutedThroughTunnel, UnitsSurfaced, UnitsWithdrew,
    VacationEnded, VacationStarted, WallAdvantageChallenged, WallAdvantageChanceDeclined,
    WallAdvantageChanceOffered, WallAdvantageClaimed, WallAdvantageDenied, WallAdvantageForfeited,
    WallAdvantageHipWindowOffered, WeaponDropped, WeaponMalfunctioned, WeaponPickedUp,
    WeaponRepairAttempted,
};
use game::Game;
use rules::movement;
use std::fmt::Write as _;

/// A readable account of one event for the player's terminal and the game record.
pub fn describe_event(game: &Game, event: &Event) -> String {
    describe(&Sides::of(&game.scenario), event)
}

/// All a description reads besides the event: the sides' names and which side goes first,
/// which every viewer's projection shows alike. Words built from this and a projected event
/// can say nothing the viewer's projection does not, whatever game they were built beside.
#[derive(Clone, Copy)]
pub struct Sides<'a> {
    pub sides: &'a [board::scenario::SideSpec; 2],
    pub first: Side,
}

impl<'a> Sides<'a> {
    pub fn of(scenario: &'a board::scenario::Scenario) -> Sides<'a> {
        Sides {
            sides: &scenario.sides,
            first: scenario.first,
        }
    }

    pub fn name(&self, side: Side) -> &'a str {
        &self.sides[side as usize].name
    }
}

/// [`describe_event`] from the side names alone.
pub fn describe(game: &Sides<'_>, event: &Event) -> String {
    let name = |s: Side| game.name(s).to_string();
    match event {
        Event::GameCreated(GameCreated { scenario }) => {
            format!("game created from scenario \"{}\"", scenario.name)
        }
        Event::ClockStarted(ClockStarted { control, .. }) => format!("the clocks started: {control}"),
        Event::ClockHandedOver(ClockHandedOver {
            charged, added, to, ..
        }) => {
            let used = board::time_control::duration_text(charged.bank + charged.vacation);
            let plus = if *added > 0 {
                format!(", +{} added", board::time_control::duration_text(*added))
            } else {
                String::new()
            };
            match to {
                Some(to) => format!(
                    "{} handed over after {used}{plus}; the {}'s clock runs",
                    name(charged.side),
                    name(*to)
                ),
                None => format!("the clocks stopped; {} used {used}", name(charged.side)),
            }
        }
        Event::ClockExpired(ClockExpired { side, .. }) => format!(
            "the {}'s clock ran out; the {} may claim the game or give time",
            name(*side),
            name(side.opponent())
        ),
        Event::ClaimedOnTime(ClaimedOnTime { by, .. }) => format!(
            "{} claimed the game on time; the game is over, won by the {}",
            name(*by),
            name(*by)
        ),
        Event::TimeGiven(TimeGiven { by, to, time, .. }) => format!(
            "{} gave the {} {}",
            name(*by),
            name(*to),
            board::time_control::duration_text(*time)
        ),
        Event::VacationStarted(VacationStarted { side, .. }) => format!("{} went on vacation", name(*side)),
        Event::VacationEnded(VacationEnded { side, .. }) => format!("{} came back from vacation", name(*side)),
        Event::Conceded(Conceded { side }) => format!(
            "{} conceded; the game is over, won by the {}",
            name(*side),
            name(side.opponent())
        ),
        Event::EndProposed(EndProposed { side }) => format!(
            "{} offered to end the game here (accept-end agrees; the step's end withdraws it)",
            name(*side)
        ),
        Event::EndAgreed(EndAgreed { side }) => format!(
            "{} accepted the {}'s offer; the game is over by agreement",
            name(*side),
            name(side.opponent())
        ),
        Event::StepEnded(StepEnded { by, ended, next }) => format!(
            "{} ended {}; now turn {} {} ({}), {} to act",
            name(*by),
            ended.step().name,
            next.turn,
            next.step().name,
            next.step().rule,
            name(next.acting(game.first))
        ),
        Event::StepPassed(StepPassed { ended, next }) => format!(
            "{} passed: the {} had no unit that could claim WA ({}); now turn {} {} ({}), {} to act",
            ended.step().name,
            name(ended.acting(game.first)),
            ended.step().rule,
            next.turn,
            next.step().name,
            next.step().rule,
            name(next.acting(game.first))
        ),
        Event::GameEnded(GameEnded { turns_played }) => format!("game over after {turns_played} Game Turns"),
        Event::UnitMoved(UnitMoved {
            units,
            from,
            to,
            cost,
            mf,
        }) => {
            let mut s = format!(
                "{} {from} → {to}: {}",
                units.join("+"),
                paid(cost)
            );
            write_accounts(&mut s, mf);
            s
        }
        Event::CloseCombatDesignated(CloseCombatDesignated {
            by,
            hex,
            attacks,
            withdrawals,
            no_ambush,
        }) => {
            let list = |ids: &[board::scenario::UnitId]| ids.join("+");
            let attacks: Vec<String> = attacks
                .iter()
                .map(|a| format!("{} vs {}", list(&a.attackers), list(&a.defenders)))
                .collect();
            let withdrawals: String = withdrawals
                .iter()
                .map(|w| {
                    format!(
                        "; {} attempt to withdraw to {} (A11.2)",
                        list(&w.units),
                        w.to
                    )
                })
                .collect();
            format!(
                "{} designated its CC attacks in {hex} (A11.12): {}{withdrawals}{}",
                name(*by),
                if attacks.is_empty() {
                    "none".to_string()
                } else {
                    attacks.join("; ")
                },
                if *no_ambush {
                    "; no Ambush, by the players' check (A11.4)"
                } else {
                    ""
                }
            )
        }
        Event::AmbushChecked(AmbushChecked { hex, ambusher }) => match ambusher {
            Some(side) => format!(
                "Ambush in {hex} (A11.4): the {} ambushed; its CC attacks there come first, at -1, and the other side's after, at +1",
                name(*side)
            ),
            None => format!("no Ambush in {hex} (A11.4): its Close Combat is simultaneous"),
        },
        Event::UnitsWithdrew(UnitsWithdrew {
            units,
            from,
            to,
            cx,
        }) => {
            let mut s = format!(
                "{} withdrew from the Melee in {from} to {to} (A11.2)",
                units.join("+")
            );
            if !cx.is_empty() {
                s.push_str(&format!(
                    "; {} CX: Difficult Terrain (A4.72)",
                    cx.join("+")
                ));
            }
            s
        }
        Event::MeleeRecorded(MeleeRecorded { hex }) => format!(
            "Close Combat in {hex} over with both sides still there: Melee (A11.7)"
        ),
        Event::UnitAdvanced(UnitAdvanced {
            units,
            from,
            to,
            cost,
            cx,
        }) => {
            let mut s = format!(
                "{} advanced {from} → {to} (A4.7; entering costs {} in the MPh)",
                units.join("+"),
                paid(cost)
            );
            if !cx.is_empty() {
                s.push_str(&format!(
                    "; {} CX: Difficult Terrain (A4.72)",
                    cx.join("+")
                ));
            }
            s
        }
        Event::UnitBypassed(UnitBypassed {
            units,
            hex,
            along,
            cost,
            mf,
            ..
        }) => {
            let sides: Vec<String> = along.iter().map(|h| format!("{hex}-{h}")).collect();
            let mut s = format!(
                "{} Bypass {hex} along {}: {} MF = {}",
                units.join("+"),
                sides.join(", "),
                cost.total,
                movement::describe(cost)
            );
            write_accounts(&mut s, mf);
            s
        }
        Event::AssaultMovementDeclared(AssaultMovementDeclared { units }) => format!(
            "{} declared Assault Movement (A4.61): one Location, an MF kept, no FFNAM",
            units.join("+")
        ),
        Event::DoubleTimeDeclared(DoubleTimeDeclared { units, mf }) => {
            let mut s = format!("{} declared Double Time (A4.5), now CX", units.join("+"));
            write_accounts(&mut s, mf);
            s
        }
        Event::WeaponPickedUp(WeaponPickedUp { unit, weapon, mf }) => {
            let mut s = format!(
                "{unit} recovered {weapon}: {} MF (A4.44)",
                rules::movement::RECOVERY_MF
            );
            write_accounts(&mut s, std::slice::from_ref(mf));
            s
        }
        Event::WeaponDropped(WeaponDropped { unit, weapon }) => format!("{unit} dropped {weapon} (A4.43)"),
        Event::WallAdvantageClaimed(WallAdvantageClaimed { units, how }) => format!(
            "{} claimed Wall Advantage {} ({})",
            units.join("+"),
            how.describe(),
            how.rule()
        ),
        Event::WallAdvantageForfeited(WallAdvantageForfeited { units, why }) => {
            format!("{} Wall Advantage {}", units.join("+"), why.describe())
        }
        Event::WallAdvantageDenied(WallAdvantageDenied { units, by }) => format!(
            "{} denied Wall Advantage: {by} holds it over a shared hexside (B9.321)",
            units.join("+")
        ),
        Event::UnitsMomentarilyRevealed(UnitsMomentarilyRevealed { units }) => format!(
            "{} momentarily revealed as real to claim or keep WA (B9.324)",
            units.join("+")
        ),
        Event::WallAdvantageChanceOffered(WallAdvantageChanceOffered { side, units }) => format!(
            "{} may claim Wall Advantage for {} now that the enemy has lost it (B9.322); waiting for its answer",
            name(*side),
            units.join("+")
        ),
        Event::WallAdvantageChallenged(WallAdvantageChallenged {
            side,
            holders,
            claimants,
            how,
        }) => format!(
            "{} challenged for {} claiming Wall Advantage {}: show a real unit among {} or forfeit (B9.324); waiting for its answer",
            name(*side),
            claimants.join("+"),
            how.describe(),
            holders.join("+")
        ),
        Event::WallAdvantageHipWindowOffered(WallAdvantageHipWindowOffered {
            side,
            claimants,
            how,
        }) => format!(
            "{} attempt to claim Wall Advantage {}; the {} may first place a hidden unit and claim it (B9.324); waiting for its answer",
            claimants.join("+"),
            how.describe(),
            name(*side)
        ),
        Event::ShellholeCoverTaken(ShellholeCoverTaken { units, mf }) => format!(
            "{} paid the rest of the shellholes' cost for their +1 TEM (B2){}",
            units.join("+"),
            mf.first()
                .map(|a| format!(", {} MF spent", a.spent))
                .unwrap_or_default()
        ),
        Event::WallAdvantageChanceDeclined(WallAdvantageChanceDeclined { side }) => {
            format!("{} let the chance to claim Wall Advantage pass", name(*side))
        }
        Event::AttackDeclared(AttackDeclared {
            by,
            firers,
            weapons,
            target,
            into_sewer,
        }) => format!(
            "{} declared fire by {} at {target}{}",
            name(*by),
            firers
                .iter()
                .chain(weapons)
                .cloned()
                .collect::<Vec<_>>()
                .join("+"),
            if *into_sewer {
                ", into the sewer: PBF with −2 (B8.3)"
            } else {
                ""
            }
        ),
        Event::WeaponMalfunctioned(WeaponMalfunctioned {
            weapon,
            holder,
            original_dr,
            breakdown,
        }) => format!(
            "`{holder}`'s {weapon} malfunctioned: Original DR {original_dr} reached its B# {breakdown} (A9.7)"
        ),
        Event::MultipleRofRetained(MultipleRofRetained {
            weapon,
            holder,
            coloured_dr,
            rof,
        }) => format!(
            "`{holder}`'s {weapon} kept its Multiple ROF: coloured dr {coloured_dr}, at or below its ROF {rof} (A9.2); it may fire again this phase"
        ),
        Event::WeaponRepairAttempted(WeaponRepairAttempted {
            weapon,
            holder,
            dr,
            result,
        }) => format!(
            "`{holder}` tried to repair its {weapon}: dr {dr}, {} (A9.72)",
            match result {
                game::event::RepairResult::Repaired => "repaired",
                game::event::RepairResult::Eliminated => "eliminated",
                game::event::RepairResult::Failed => "still malfunctioned",
            }
        ),
        Event::AttackResolved(AttackResolved { by, target }) => {
            format!("{} resolved its attack on {target}", name(*by))
        }
        Event::AttackLeftToPlayers(AttackLeftToPlayers { target, rule, why, .. }) => format!(
            "the attack on {target} is the players' to adjudicate: {why} ({rule})"
        ),
        Event::ResidualFpLeft(ResidualFpLeft { hex, fp, .. }) => match fp {
            Some(fp) => format!("Residual FP {fp} stays in {hex} for the rest of the MPh (A8.2)"),
            None => format!(
                "Residual FP stays in {hex} for the rest of the MPh, how much for the players to determine (A8.2)"
            ),
        },
        Event::IftAttackResolved(IftAttackResolved {
            target,
            fp,
            column,
            cowered,
            final_dr,
            result,
            ..
        }) => format!(
            "IFT: {fp} FP vs {target} on the {column} column{}: Final DR {final_dr} → {result} (A7.3)",
            if *cowered { " (cowered, A7.9)" } else { "" }
        ),
        // The check's line as the roll gave it: "4-4-7 `r2` 1MC: morale 7, DR 7 +1 → broken".
        Event::FireEffectApplied(FireEffectApplied { rule, why, .. }) => format!("{why} ({rule})"),
        Event::FireEffectLeftToPlayers(FireEffectLeftToPlayers { why, rule, .. }) => {
            format!("for the players to adjudicate: {why} ({rule})")
        }
        Event::OpportunityFireMarked(OpportunityFireMarked { units }) => format!(
            "{} designated Opportunity Fire{}: holding fire for the AFPh, not moving this MPh (A7.25)",
            units.join(", "),
            if units.len() == 1 { "r" } else { "rs" }
        ),
        Event::DesperationMoraleMarked(DesperationMoraleMarked { units, why }) => {
            format!("{} under Desperation Morale: {why} (A10.62)", units.join(", "))
        }
        Event::DesperationMoraleRemoved(DesperationMoraleRemoved { units, why }) => {
            format!("{} no longer under Desperation Morale: {why} (A10.62)", units.join(", "))
        }
        Event::RallyAttempted(RallyAttempted {
            unit,
            leader: Some(leader),
        }) => format!("{leader} attempted to rally {unit} (A10.6)"),
        Event::RallyAttempted(RallyAttempted { unit, leader: None }) => {
            format!("{unit} attempted to self-rally (A10.63)")
        }
        Event::UnitSetUp(UnitSetUp { unit, hip, .. }) => format!(
            "{} set up {} in {}{}{} (A12.12)",
            name(unit.side),
            unit.id,
            unit.hex,
            if unit.concealed { ", concealed" } else { "" },
            if *hip { ", hidden (HIP)" } else { "" }
        ),
        Event::UnitSetUpLifted(UnitSetUpLifted { unit }) => format!("{unit} was taken back off the map to set up again"),
        Event::SetupDone(SetupDone { side }) => format!("{} has set up (A12.12)", name(*side)),
        Event::SetupEnded(SetupEnded { units }) => format!(
            "set-up ended: {} unit(s) show on the map; Turn 1 begins",
            units.len()
        ),
        Event::UnitsEntered(UnitsEntered {
            units, hex, cost, ..
        }) => format!(
            "{} entered from off board into {hex} ({}) (A2.51)",
            units
                .iter()
                .map(|u| u.id.as_str())
                .collect::<Vec<_>>()
                .join("+"),
            paid(cost)
        ),
        Event::HiddenUnitPlaced(HiddenUnitPlaced { unit, .. }) => format!(
            "{} placed a hidden unit on board in {}, concealed (A12.3)",
            name(unit.side),
            unit.hex
        ),
        Event::UnitEntryBlocked(UnitEntryBlocked {
            units,
            from,
            to,
            revealed,
            dummies_removed,
            cost,
            mf,
        }) => {
            // An entry from off board that was stopped names the hex twice: the units stay
            // off board (A2.51, A12.15).
            let mut s = if from == to {
                format!(
                    "{} tried to enter {to} from off board ({}) and stayed off board (A12.15)",
                    units.join("+"),
                    paid(cost)
                )
            } else {
                format!(
                    "{} tried {from} → {to} ({}) and was stopped in {from} (A12.15)",
                    units.join("+"),
                    paid(cost)
                )
            };
            if !revealed.is_empty() {
                let shown: Vec<String> = revealed
                    .iter()
                    .map(|u| format!("{} {}", u.id, u.ratings))
                    .collect();
                let _ = write!(s, ": revealed {}", shown.join(", "));
            }
            if !dummies_removed.is_empty() {
                let _ = write!(s, "; dummies removed: {}", dummies_removed.join(", "));
            }
            write_accounts(&mut s, mf);
            s
        }
        Event::DiceRolled(DiceRolled { roll }) => {
            let dice: Vec<String> = roll.dice.iter().map(|d| d.to_string()).collect();
            let mut s = format!(
                "{} rolled {} for {:?} ({}): {}",
                name(roll.side),
                if roll.dice.len() == 1 { "dr" } else { "DR" },
                roll.purpose,
                roll.rule,
                dice.join("+")
            );
            for m in &roll.modifiers {
                let _ = write!(s, " {:+} {} ({})", m.value, m.reason, m.rule);
            }
            let _ = write!(s, " = Final {} → {}", roll.final_result, roll.outcome);
            s
        }
        Event::SewerEntryFailed(SewerEntryFailed { units }) => format!(
            "{} cannot enter the sewer this MPh: the leader's 4TC failed (B8.4)",
            units.join("+")
        ),
        Event::UnitsEnteredSewer(UnitsEnteredSewer { units, hex }) => format!(
            "{} went down the Manhole in {hex} beneath \"Sewer?\", for all MF (B8.4)",
            units.join("+")
        ),
        Event::SewerStackMoved(SewerStackMoved {
            units,
            from,
            to,
            designated_by,
        }) => match designated_by {
            Some(d) => format!(
                "lost sewer stack {} moved from beneath {from} to beneath {to}, designated by the {} (B8.41)",
                units.join("+"),
                name(*d)
            ),
            None => format!(
                "sewer stack {} moved from beneath {from} to beneath {to} (B8.41)",
                units.join("+")
            ),
        },
        Event::SewerStackLost(SewerStackLost {
            units,
            at,
            defender,
            options,
        }) => format!(
            "sewer stack {} beneath {at} is lost: the {} designates where it goes, among {} (B8.41)",
            units.join("+"),
            name(*defender),
            options
                .iter()
                .map(|h| h.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Event::SewerEmergenceRolled(SewerEmergenceRolled { units, hex, result }) => format!(
            "sewer stack {} beneath {hex}: {} (B8.42)",
            units.join("+"),
            result.describe()
        ),
        Event::UnitsSurfaced(UnitsSurfaced { units, hex }) => {
            format!("{} came up into {hex}, concealed", units.join("+"))
        }
        Event::UnitsEnteredTunnel(UnitsEnteredTunnel {
            units, from, exit, ..
        }) => format!(
            "{} entered the tunnel at {from} for all MF and wait beneath \"Sewer?\" at {exit} (B8.61)",
            units.join("+")
        ),
        Event::TunnelDestroyed(TunnelDestroyed { entrance }) => {
            format!("the tunnel entrance at {entrance} was destroyed (B8.63)")
        }
        Event::ManholeDeclaredUnseen(ManholeDeclaredUnseen { by, hex }) => format!(
            "{} declared the road Manhole {hex} out of Known enemy LOS (B8.42 drm)",
            name(*by)
        ),
        Event::OutcomeAdjudicated(OutcomeAdjudicated {
            by,
            unit,
            outcome,
            note,
        }) => {
            let mut s = format!("{} adjudicated: {unit} {}", name(*by), outcome.describe());
            if !note.is_empty() {
                let _ = write!(s, " ({note})");
            }
            s
        }
        Event::DiceCommitted(_)
        | Event::EntropyContributed(_)
        | Event::SeedRevealAgreed(_)
        | Event::SeedRevealed(_)
        | Event::AdjudicationAccepted(_)
        | Event::AdjudicationDisputed(_)
        | Event::UndoRequested(_)
        | Event::UndoDeclined(_)
        | Event::EventsUndone(_)
        | Event::EventsUndoneTo(_) => crate::dispute::describe(game.sides, event),
        Event::AllMfSpent(AllMfSpent { units, rule, mf }) => {
            let mut s = format!("{} spent all MF ({rule})", units.join("+"));
            write_accounts(&mut s, mf);
            s
        }
        Event::UnitRouted(UnitRouted {
            unit,
            from,
            to,
            cost,
            mf,
            interdiction_by,
        }) => {
            let mut s = format!("{unit} routed {from} → {to} (A10.5): {}", paid(cost));
            write_accounts(&mut s, std::slice::from_ref(mf));
            if !interdiction_by.is_empty() {
                let _ = write!(
                    s,
                    "; in Open Ground in the LOS and normal range of {}, who may Interdict it (A10.53): left to the players (`roll`, `adjudicate`)",
                    interdiction_by.join(", ")
                );
            }
            s
        }
        Event::RoutLeftToPlayers(RoutLeftToPlayers { unit, rule, why }) => format!(
            "for the players to adjudicate: {unit} had to rout (A10.5) and could not by the rules the engine plays; one way was not modelled: {why} ({rule})"
        ),
        Event::UnitFailedToRout(UnitFailedToRout { unit, next_to }) => match next_to {
            Some(e) => format!(
                "{unit} had to rout and could not: eliminated for Failure to Rout (A10.5); being ADJACENT to {e}, it may be a Surrender instead (A20.21), which is left to the players"
            ),
            None => format!(
                "{unit} had to rout and could not: eliminated for Failure to Rout (A10.5)"
            ),
        },
        Event::UnitsRoutedThroughTunnel(UnitsRoutedThroughTunnel {
            units, from, to, ..
        }) => format!(
            "{} routed through the tunnel from {from} to {to}, not concealed (B8.62)",
            units.join("+")
        ),
        Event::TunnelUseSeen(TunnelUseSeen { by, unit, entrance }) => format!(
            "the {} claims the tunnel entrance at {entrance} was used in {unit}'s LOS (B8.63; the opponent may dispute it)",
            game.name(*by)
        ),
        Event::TunnelUseSighted(TunnelUseSighted {
            entrance, units, ..
        }) => format!(
            "the tunnel entrance at {entrance} was used in the LOS of {} (B8.63)",
            units.join("+")
        ),
        Event::TunnelEntranceDiscovered(TunnelEntranceDiscovered {
            unit, entrance, mf, ..
        }) => {
            let mut s = format!(
                "{unit} searched {entrance} and discovered the tunnel entrance there (B8.63, A4.44)"
            );
            write_accounts(&mut s, std::slice::from_ref(mf));
            s
        }
    }
}

/// What a step cost: "3 MF = 1 COT (B1) + …", or for an entry that takes the whole allotment
/// (Marsh, B16) "all MF (B16)" — never "0 MF".
fn paid(cost: &game::event::MoveCost) -> String {
    if cost.all_mf {
        movement::describe(cost)
    } else {
        format!("{} MF = {}", cost.total, movement::describe(cost))
    }
}

/// "; 467a spent 3 of 6 (4 +2 leader), left 3" for each unit.
fn write_accounts(s: &mut String, accounts: &[game::event::MfAccount]) {
    for a in accounts {
        let _ = write!(
            s,
            "; {} spent {} of {}{}, left {}",
            a.unit,
            a.spent,
            a.allotment.total,
            allotment_reasons(&a.allotment),
            a.left
        );
    }
}

fn allotment_reasons(a: &game::event::Allotment) -> String {
    let zero = Mf::default();
    let mut parts = vec![];
    if a.leader > zero {
        parts.push(format!("+{} leader", a.leader));
    }
    if a.double_time > zero {
        parts.push(format!("+{} Double Time", a.double_time));
    }
    if a.road > zero {
        parts.push(format!("+{} road", a.road));
    }
    if a.portage > zero {
        parts.push(format!("−{} portage", a.portage));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({} {})", a.base, parts.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use board::scenario::Scenario;
    use game::command::Command;
    use game::dice::ScriptedDice;
    use rules::wall_advantage::ReadScenario;

    /// Entering marsh takes the whole allotment (B16): the words say so, never "0 MF".
    #[test]
    fn marsh_entry_says_all_mf() {
        let text = include_str!("../../tests/positions/scenarios/terrain-sampler.toml");
        let mut game = Game::new(Scenario::from_toml(text).unwrap());
        let play = |game: &mut Game, by: Side, command: Command| {
            let events =
                rules::decide(game, by, &command, &mut ScriptedDice::default()).expect("accepted");
            for e in &events {
                game::apply(game, e);
            }
            events
        };
        while game.clock.phase() != game::phase::Phase::Movement {
            let by = game.acting();
            play(&mut game, by, Command::Done);
        }
        let before = game.clone();
        let events = play(
            &mut game,
            Side::A,
            Command::Move {
                units: vec!["s12".into()],
                to: "1C24".parse().unwrap(),
            },
        );
        let moved = events
            .iter()
            .find(|e| matches!(e, Event::UnitMoved(_)))
            .expect("moved");
        let words = describe_event(&before, moved);
        assert!(words.contains("all MF (B16)"), "{words}");
        assert!(!words.contains("0 MF"), "{words}");
    }
}

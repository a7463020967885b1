//! Every event encodes as it did before each variant wrapped a struct of its own (the event
//! families, `game::event`): stored logs are bincode by variant index and the wire's JSON is
//! externally tagged, so a log written by the old enum must read back as the same events.
//! The events are those every position script makes, and a few built here for the variants no
//! script reaches.

use protocol::board::hex::Hex;
use protocol::board::scenario::{Scenario, Side, UnitId};
use protocol::event::*;
use protocol::game::phase::Clock;
use protocol::{Game, Outcome, ReadScenario};
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::Path;

#[path = "support/events.rs"]
mod events;
use events::{built_events, position_samples};

// The enum as it stood before its variants wrapped one struct each, kept to check that
// every event still encodes to the same bytes (bincode, by variant index) and the same JSON.
#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum OldEvent {
    GameCreated {
        scenario: Scenario,
    },
    StepEnded {
        by: Side,
        ended: Clock,
        next: Clock,
    },
    StepPassed {
        ended: Clock,
        next: Clock,
    },
    GameEnded {
        turns_played: u16,
    },
    Conceded {
        side: Side,
    },
    EndProposed {
        side: Side,
    },
    EndAgreed {
        side: Side,
    },
    UnitMoved {
        units: Vec<UnitId>,
        from: Hex,
        to: Hex,
        cost: MoveCost,
        mf: Vec<MfAccount>,
    },
    UnitAdvanced {
        units: Vec<UnitId>,
        from: Hex,
        to: Hex,
        cost: MoveCost,
        cx: Vec<UnitId>,
    },
    CloseCombatDesignated {
        by: Side,
        hex: Hex,
        attacks: Vec<protocol::game::command::CcAttack>,
        #[serde(default)]
        withdrawals: Vec<protocol::game::command::CcWithdrawal>,
        no_ambush: bool,
    },
    AmbushChecked {
        hex: Hex,
        ambusher: Option<Side>,
    },
    MeleeRecorded {
        hex: Hex,
    },
    UnitBypassed {
        units: Vec<UnitId>,
        hex: Hex,
        from: Hex,
        along: Vec<Hex>,
        cost: MoveCost,
        mf: Vec<MfAccount>,
    },
    DoubleTimeDeclared {
        units: Vec<UnitId>,
        mf: Vec<MfAccount>,
    },
    AssaultMovementDeclared {
        units: Vec<UnitId>,
    },
    WeaponPickedUp {
        unit: UnitId,
        weapon: String,
        mf: MfAccount,
    },
    WeaponDropped {
        unit: UnitId,
        weapon: String,
    },
    WallAdvantageClaimed {
        units: Vec<UnitId>,
        how: WaClaim,
    },
    WallAdvantageForfeited {
        units: Vec<UnitId>,
        why: WaLoss,
    },
    WallAdvantageDenied {
        units: Vec<UnitId>,
        by: UnitId,
    },
    UnitsMomentarilyRevealed {
        units: Vec<UnitId>,
    },
    WallAdvantageChanceOffered {
        side: Side,
        units: Vec<UnitId>,
    },
    WallAdvantageChanceDeclined {
        side: Side,
    },
    AttackDeclared {
        by: Side,
        firers: Vec<UnitId>,
        #[serde(default)]
        weapons: Vec<String>,
        target: Hex,
        into_sewer: bool,
    },
    WeaponMalfunctioned {
        weapon: String,
        holder: UnitId,
        original_dr: u8,
        breakdown: u8,
    },
    MultipleRofRetained {
        weapon: String,
        holder: UnitId,
        coloured_dr: u8,
        rof: u8,
    },
    WeaponRepairAttempted {
        weapon: String,
        holder: UnitId,
        dr: u8,
        result: RepairResult,
    },
    AttackResolved {
        by: Side,
        target: Hex,
    },
    HiddenUnitPlaced {
        unit: Box<protocol::game::Unit>,
        weapons: Vec<protocol::game::Weapon>,
    },
    UnitEntryBlocked {
        units: Vec<UnitId>,
        from: Hex,
        to: Hex,
        revealed: Vec<protocol::game::Unit>,
        dummies_removed: Vec<UnitId>,
        cost: MoveCost,
        mf: Vec<MfAccount>,
    },
    DiceRolled {
        roll: protocol::game::dice::Roll,
    },
    SewerEntryFailed {
        units: Vec<UnitId>,
    },
    UnitsEnteredSewer {
        units: Vec<UnitId>,
        hex: Hex,
    },
    SewerStackMoved {
        units: Vec<UnitId>,
        from: Hex,
        to: Hex,
        designated_by: Option<Side>,
    },
    SewerStackLost {
        units: Vec<UnitId>,
        at: Hex,
        defender: Side,
        options: Vec<Hex>,
    },
    SewerEmergenceRolled {
        units: Vec<UnitId>,
        hex: Hex,
        result: protocol::game::Emergence,
    },
    UnitsSurfaced {
        units: Vec<UnitId>,
        hex: Hex,
    },
    UnitsEnteredTunnel {
        units: Vec<UnitId>,
        side: Side,
        from: Hex,
        exit: Hex,
    },
    TunnelDestroyed {
        entrance: Hex,
    },
    ManholeDeclaredUnseen {
        by: Side,
        hex: Hex,
    },
    OutcomeAdjudicated {
        by: Side,
        unit: UnitId,
        outcome: Outcome,
        note: String,
    },
    DiceCommitted {
        commitment: protocol::game::dice::Commitment,
    },
    EntropyContributed {
        side: Side,
        nonce: protocol::game::dice::Nonce,
    },
    SeedRevealAgreed {
        side: Side,
    },
    SeedRevealed {
        seed: protocol::game::dice::Seed,
    },
    AdjudicationAccepted {
        by: Side,
        event: u64,
    },
    AdjudicationDisputed {
        by: Side,
        event: u64,
        reason: String,
    },
    UndoRequested {
        by: Side,
        from: u64,
        to: u64,
    },
    UndoDeclined {
        by: Side,
    },
    EventsUndone {
        requested_by: Side,
        consented_by: Side,
        from: u64,
        to: u64,
        restored: Box<protocol::game::Game>,
    },
    WallAdvantageChallenged {
        side: Side,
        holders: Vec<UnitId>,
        claimants: Vec<UnitId>,
        how: WaClaim,
    },
    WallAdvantageHipWindowOffered {
        side: Side,
        claimants: Vec<UnitId>,
        how: WaClaim,
    },
    ShellholeCoverTaken {
        units: Vec<UnitId>,
        mf: Vec<MfAccount>,
    },
    AllMfSpent {
        units: Vec<UnitId>,
        rule: String,
        mf: Vec<MfAccount>,
    },
    UnitsRoutedThroughTunnel {
        units: Vec<UnitId>,
        side: Side,
        from: Hex,
        to: Hex,
    },
    UnitRouted {
        unit: UnitId,
        from: Hex,
        to: Hex,
        cost: MoveCost,
        mf: MfAccount,
        interdiction_by: Vec<UnitId>,
    },
    UnitFailedToRout {
        unit: UnitId,
        next_to: Option<UnitId>,
    },
    RoutLeftToPlayers {
        unit: UnitId,
        rule: String,
        why: String,
    },
    TunnelUseSeen {
        by: Side,
        unit: UnitId,
        entrance: Hex,
    },
    TunnelEntranceDiscovered {
        by: Side,
        unit: UnitId,
        entrance: Hex,
        mf: MfAccount,
    },
    TunnelUseSighted {
        by: Side,
        entrance: Hex,
        units: Vec<UnitId>,
    },
    EventsUndoneTo {
        requested_by: Side,
        consented_by: Side,
        from: u64,
        to: u64,
    },
    UnitSetUp {
        unit: Box<protocol::game::Unit>,
        weapons: Vec<protocol::game::Weapon>,
        hip: bool,
    },
    UnitSetUpLifted {
        unit: UnitId,
    },
    SetupDone {
        side: Side,
    },
    SetupEnded {
        units: Vec<protocol::game::Unit>,
    },
    UnitsEntered {
        units: Vec<protocol::game::Unit>,
        weapons: Vec<protocol::game::Weapon>,
        hex: Hex,
        cost: MoveCost,
        mf: Vec<MfAccount>,
    },
    ClockStarted {
        control: protocol::board::time_control::TimeControl,
        at: u64,
    },
    ClockHandedOver {
        at: u64,
        charged: protocol::game::timing::Charge,
        added: u64,
        to: Option<Side>,
    },
    ClockExpired {
        side: Side,
        at: u64,
        charged: protocol::game::timing::Charge,
    },
    ClaimedOnTime {
        by: Side,
        at: u64,
    },
    TimeGiven {
        by: Side,
        to: Side,
        time: u64,
        at: u64,
        charged: Option<protocol::game::timing::Charge>,
    },
    VacationStarted {
        side: Side,
        at: u64,
        charged: Option<protocol::game::timing::Charge>,
    },
    VacationEnded {
        side: Side,
        at: u64,
        charged: Option<protocol::game::timing::Charge>,
    },
    AttackLeftToPlayers {
        by: Side,
        target: Hex,
        rule: String,
        why: String,
    },
    ResidualFpLeft {
        by: Side,
        hex: Hex,
        fp: Option<u8>,
    },
    IftAttackResolved {
        by: Side,
        target: Hex,
        fp: String,
        column: u8,
        cowered: bool,
        final_dr: i16,
        result: String,
    },
    FireEffectApplied {
        unit: UnitId,
        outcome: Outcome,
        rule: String,
        why: String,
    },
    FireEffectLeftToPlayers {
        target: Hex,
        unit: Option<UnitId>,
        rule: String,
        why: String,
    },
    DesperationMoraleMarked {
        units: Vec<UnitId>,
        why: String,
    },
    DesperationMoraleRemoved {
        units: Vec<UnitId>,
        why: String,
    },
    RallyAttempted {
        unit: UnitId,
        leader: Option<UnitId>,
    },
    UnitsWithdrew {
        units: Vec<UnitId>,
        from: Hex,
        to: Hex,
        cx: Vec<UnitId>,
    },
    OpportunityFireMarked {
        units: Vec<UnitId>,
    },
    SquadReduced {
        unit: UnitId,
        half_squad: String,
        rule: String,
        why: String,
    },
    InherentFpForfeited {
        unit: UnitId,
        weapons: Vec<String>,
    },
    ConcealmentLostInCloseCombat {
        hex: Hex,
        revealed: Vec<protocol::game::Unit>,
    },
    ConcealmentLostByFire {
        revealed: Vec<protocol::game::Unit>,
    },
    ConcealmentLostByBypass {
        revealed: Vec<protocol::game::Unit>,
        dummies_removed: Vec<UnitId>,
    },
    ConcealmentLostToAttack {
        target: Hex,
        revealed: Vec<protocol::game::Unit>,
        dummies_removed: Vec<UnitId>,
    },
    DummiesRemovedInCloseCombat {
        hex: Hex,
        dummies_removed: Vec<UnitId>,
    },
    RecoveryAttempted {
        unit: UnitId,
        weapon: String,
        recovered: bool,
        mf: Vec<MfAccount>,
    },
    WeaponTransferred {
        weapon: String,
        from: UnitId,
        to: UnitId,
    },
    FpfNmcTaken {
        by: Side,
        unit: UnitId,
        dice: Vec<u8>,
        modifiers: Vec<protocol::game::dice::Modifier>,
        final_dr: i16,
        rule: String,
        outcome: String,
    },
    LeaderRouted {
        leader: UnitId,
        unit: UnitId,
        from: Hex,
        to: Hex,
        mf: MfAccount,
    },
    InfiltrationOffered {
        chance: protocol::game::CcInfiltration,
    },
    InfiltrationChosen {
        by: Side,
        hex: Hex,
        withdrawals: Vec<protocol::game::command::CcWithdrawal>,
    },
}

/// The same event in the old enum's shape.
fn old(event: Event) -> OldEvent {
    match event {
        Event::GameCreated(GameCreated { scenario }) => OldEvent::GameCreated { scenario },
        Event::StepEnded(StepEnded { by, ended, next }) => OldEvent::StepEnded { by, ended, next },
        Event::StepPassed(StepPassed { ended, next }) => OldEvent::StepPassed { ended, next },
        Event::GameEnded(GameEnded { turns_played }) => OldEvent::GameEnded { turns_played },
        Event::Conceded(Conceded { side }) => OldEvent::Conceded { side },
        Event::EndProposed(EndProposed { side }) => OldEvent::EndProposed { side },
        Event::EndAgreed(EndAgreed { side }) => OldEvent::EndAgreed { side },
        Event::UnitMoved(UnitMoved {
            units,
            from,
            to,
            cost,
            mf,
        }) => OldEvent::UnitMoved {
            units,
            from,
            to,
            cost,
            mf,
        },
        Event::UnitAdvanced(UnitAdvanced {
            units,
            from,
            to,
            cost,
            cx,
        }) => OldEvent::UnitAdvanced {
            units,
            from,
            to,
            cost,
            cx,
        },
        Event::CloseCombatDesignated(CloseCombatDesignated {
            by,
            hex,
            attacks,
            withdrawals,
            no_ambush,
        }) => OldEvent::CloseCombatDesignated {
            by,
            hex,
            attacks,
            withdrawals,
            no_ambush,
        },
        Event::AmbushChecked(AmbushChecked { hex, ambusher }) => {
            OldEvent::AmbushChecked { hex, ambusher }
        }
        Event::MeleeRecorded(MeleeRecorded { hex }) => OldEvent::MeleeRecorded { hex },
        Event::UnitBypassed(UnitBypassed {
            units,
            hex,
            from,
            along,
            cost,
            mf,
        }) => OldEvent::UnitBypassed {
            units,
            hex,
            from,
            along,
            cost,
            mf,
        },
        Event::DoubleTimeDeclared(DoubleTimeDeclared { units, mf }) => {
            OldEvent::DoubleTimeDeclared { units, mf }
        }
        Event::AssaultMovementDeclared(AssaultMovementDeclared { units }) => {
            OldEvent::AssaultMovementDeclared { units }
        }
        Event::WeaponPickedUp(WeaponPickedUp { unit, weapon, mf }) => {
            OldEvent::WeaponPickedUp { unit, weapon, mf }
        }
        Event::WeaponDropped(WeaponDropped { unit, weapon }) => {
            OldEvent::WeaponDropped { unit, weapon }
        }
        Event::WallAdvantageClaimed(WallAdvantageClaimed { units, how }) => {
            OldEvent::WallAdvantageClaimed { units, how }
        }
        Event::WallAdvantageForfeited(WallAdvantageForfeited { units, why }) => {
            OldEvent::WallAdvantageForfeited { units, why }
        }
        Event::WallAdvantageDenied(WallAdvantageDenied { units, by }) => {
            OldEvent::WallAdvantageDenied { units, by }
        }
        Event::UnitsMomentarilyRevealed(UnitsMomentarilyRevealed { units }) => {
            OldEvent::UnitsMomentarilyRevealed { units }
        }
        Event::WallAdvantageChanceOffered(WallAdvantageChanceOffered { side, units }) => {
            OldEvent::WallAdvantageChanceOffered { side, units }
        }
        Event::WallAdvantageChanceDeclined(WallAdvantageChanceDeclined { side }) => {
            OldEvent::WallAdvantageChanceDeclined { side }
        }
        Event::AttackDeclared(AttackDeclared {
            by,
            firers,
            weapons,
            target,
            into_sewer,
        }) => OldEvent::AttackDeclared {
            by,
            firers,
            weapons,
            target,
            into_sewer,
        },
        Event::WeaponMalfunctioned(WeaponMalfunctioned {
            weapon,
            holder,
            original_dr,
            breakdown,
        }) => OldEvent::WeaponMalfunctioned {
            weapon,
            holder,
            original_dr,
            breakdown,
        },
        Event::MultipleRofRetained(MultipleRofRetained {
            weapon,
            holder,
            coloured_dr,
            rof,
        }) => OldEvent::MultipleRofRetained {
            weapon,
            holder,
            coloured_dr,
            rof,
        },
        Event::WeaponRepairAttempted(WeaponRepairAttempted {
            weapon,
            holder,
            dr,
            result,
        }) => OldEvent::WeaponRepairAttempted {
            weapon,
            holder,
            dr,
            result,
        },
        Event::AttackResolved(AttackResolved { by, target }) => {
            OldEvent::AttackResolved { by, target }
        }
        Event::HiddenUnitPlaced(HiddenUnitPlaced { unit, weapons }) => {
            OldEvent::HiddenUnitPlaced { unit, weapons }
        }
        Event::UnitEntryBlocked(UnitEntryBlocked {
            units,
            from,
            to,
            revealed,
            dummies_removed,
            cost,
            mf,
        }) => OldEvent::UnitEntryBlocked {
            units,
            from,
            to,
            revealed,
            dummies_removed,
            cost,
            mf,
        },
        Event::DiceRolled(DiceRolled { roll }) => OldEvent::DiceRolled { roll },
        Event::SewerEntryFailed(SewerEntryFailed { units }) => OldEvent::SewerEntryFailed { units },
        Event::UnitsEnteredSewer(UnitsEnteredSewer { units, hex }) => {
            OldEvent::UnitsEnteredSewer { units, hex }
        }
        Event::SewerStackMoved(SewerStackMoved {
            units,
            from,
            to,
            designated_by,
        }) => OldEvent::SewerStackMoved {
            units,
            from,
            to,
            designated_by,
        },
        Event::SewerStackLost(SewerStackLost {
            units,
            at,
            defender,
            options,
        }) => OldEvent::SewerStackLost {
            units,
            at,
            defender,
            options,
        },
        Event::SewerEmergenceRolled(SewerEmergenceRolled { units, hex, result }) => {
            OldEvent::SewerEmergenceRolled { units, hex, result }
        }
        Event::UnitsSurfaced(UnitsSurfaced { units, hex }) => {
            OldEvent::UnitsSurfaced { units, hex }
        }
        Event::UnitsEnteredTunnel(UnitsEnteredTunnel {
            units,
            side,
            from,
            exit,
        }) => OldEvent::UnitsEnteredTunnel {
            units,
            side,
            from,
            exit,
        },
        Event::TunnelDestroyed(TunnelDestroyed { entrance }) => {
            OldEvent::TunnelDestroyed { entrance }
        }
        Event::ManholeDeclaredUnseen(ManholeDeclaredUnseen { by, hex }) => {
            OldEvent::ManholeDeclaredUnseen { by, hex }
        }
        Event::OutcomeAdjudicated(OutcomeAdjudicated {
            by,
            unit,
            outcome,
            note,
        }) => OldEvent::OutcomeAdjudicated {
            by,
            unit,
            outcome,
            note,
        },
        Event::DiceCommitted(DiceCommitted { commitment }) => {
            OldEvent::DiceCommitted { commitment }
        }
        Event::EntropyContributed(EntropyContributed { side, nonce }) => {
            OldEvent::EntropyContributed { side, nonce }
        }
        Event::SeedRevealAgreed(SeedRevealAgreed { side }) => OldEvent::SeedRevealAgreed { side },
        Event::SeedRevealed(SeedRevealed { seed }) => OldEvent::SeedRevealed { seed },
        Event::AdjudicationAccepted(AdjudicationAccepted { by, event }) => {
            OldEvent::AdjudicationAccepted { by, event }
        }
        Event::AdjudicationDisputed(AdjudicationDisputed { by, event, reason }) => {
            OldEvent::AdjudicationDisputed { by, event, reason }
        }
        Event::UndoRequested(UndoRequested { by, from, to }) => {
            OldEvent::UndoRequested { by, from, to }
        }
        Event::UndoDeclined(UndoDeclined { by }) => OldEvent::UndoDeclined { by },
        Event::EventsUndone(EventsUndone {
            requested_by,
            consented_by,
            from,
            to,
            restored,
        }) => OldEvent::EventsUndone {
            requested_by,
            consented_by,
            from,
            to,
            restored,
        },
        Event::WallAdvantageChallenged(WallAdvantageChallenged {
            side,
            holders,
            claimants,
            how,
        }) => OldEvent::WallAdvantageChallenged {
            side,
            holders,
            claimants,
            how,
        },
        Event::WallAdvantageHipWindowOffered(WallAdvantageHipWindowOffered {
            side,
            claimants,
            how,
        }) => OldEvent::WallAdvantageHipWindowOffered {
            side,
            claimants,
            how,
        },
        Event::ShellholeCoverTaken(ShellholeCoverTaken { units, mf }) => {
            OldEvent::ShellholeCoverTaken { units, mf }
        }
        Event::AllMfSpent(AllMfSpent { units, rule, mf }) => {
            OldEvent::AllMfSpent { units, rule, mf }
        }
        Event::UnitsRoutedThroughTunnel(UnitsRoutedThroughTunnel {
            units,
            side,
            from,
            to,
        }) => OldEvent::UnitsRoutedThroughTunnel {
            units,
            side,
            from,
            to,
        },
        Event::UnitRouted(UnitRouted {
            unit,
            from,
            to,
            cost,
            mf,
            interdiction_by,
        }) => OldEvent::UnitRouted {
            unit,
            from,
            to,
            cost,
            mf,
            interdiction_by,
        },
        Event::UnitFailedToRout(UnitFailedToRout { unit, next_to }) => {
            OldEvent::UnitFailedToRout { unit, next_to }
        }
        Event::RoutLeftToPlayers(RoutLeftToPlayers { unit, rule, why }) => {
            OldEvent::RoutLeftToPlayers { unit, rule, why }
        }
        Event::TunnelUseSeen(TunnelUseSeen { by, unit, entrance }) => {
            OldEvent::TunnelUseSeen { by, unit, entrance }
        }
        Event::TunnelEntranceDiscovered(TunnelEntranceDiscovered {
            by,
            unit,
            entrance,
            mf,
        }) => OldEvent::TunnelEntranceDiscovered {
            by,
            unit,
            entrance,
            mf,
        },
        Event::TunnelUseSighted(TunnelUseSighted {
            by,
            entrance,
            units,
        }) => OldEvent::TunnelUseSighted {
            by,
            entrance,
            units,
        },
        Event::EventsUndoneTo(EventsUndoneTo {
            requested_by,
            consented_by,
            from,
            to,
        }) => OldEvent::EventsUndoneTo {
            requested_by,
            consented_by,
            from,
            to,
        },
        Event::UnitSetUp(UnitSetUp { unit, weapons, hip }) => {
            OldEvent::UnitSetUp { unit, weapons, hip }
        }
        Event::UnitSetUpLifted(UnitSetUpLifted { unit }) => OldEvent::UnitSetUpLifted { unit },
        Event::SetupDone(SetupDone { side }) => OldEvent::SetupDone { side },
        Event::SetupEnded(SetupEnded { units }) => OldEvent::SetupEnded { units },
        Event::UnitsEntered(UnitsEntered {
            units,
            weapons,
            hex,
            cost,
            mf,
        }) => OldEvent::UnitsEntered {
            units,
            weapons,
            hex,
            cost,
            mf,
        },
        Event::ClockStarted(ClockStarted { control, at }) => OldEvent::ClockStarted { control, at },
        Event::ClockHandedOver(ClockHandedOver {
            at,
            charged,
            added,
            to,
        }) => OldEvent::ClockHandedOver {
            at,
            charged,
            added,
            to,
        },
        Event::ClockExpired(ClockExpired { side, at, charged }) => {
            OldEvent::ClockExpired { side, at, charged }
        }
        Event::ClaimedOnTime(ClaimedOnTime { by, at }) => OldEvent::ClaimedOnTime { by, at },
        Event::TimeGiven(TimeGiven {
            by,
            to,
            time,
            at,
            charged,
        }) => OldEvent::TimeGiven {
            by,
            to,
            time,
            at,
            charged,
        },
        Event::VacationStarted(VacationStarted { side, at, charged }) => {
            OldEvent::VacationStarted { side, at, charged }
        }
        Event::VacationEnded(VacationEnded { side, at, charged }) => {
            OldEvent::VacationEnded { side, at, charged }
        }
        Event::AttackLeftToPlayers(AttackLeftToPlayers {
            by,
            target,
            rule,
            why,
        }) => OldEvent::AttackLeftToPlayers {
            by,
            target,
            rule,
            why,
        },
        Event::ResidualFpLeft(ResidualFpLeft { by, hex, fp }) => {
            OldEvent::ResidualFpLeft { by, hex, fp }
        }
        Event::IftAttackResolved(IftAttackResolved {
            by,
            target,
            fp,
            column,
            cowered,
            final_dr,
            result,
        }) => OldEvent::IftAttackResolved {
            by,
            target,
            fp,
            column,
            cowered,
            final_dr,
            result,
        },
        Event::FireEffectApplied(FireEffectApplied {
            unit,
            outcome,
            rule,
            why,
        }) => OldEvent::FireEffectApplied {
            unit,
            outcome,
            rule,
            why,
        },
        Event::FireEffectLeftToPlayers(FireEffectLeftToPlayers {
            target,
            unit,
            rule,
            why,
        }) => OldEvent::FireEffectLeftToPlayers {
            target,
            unit,
            rule,
            why,
        },
        Event::DesperationMoraleMarked(DesperationMoraleMarked { units, why }) => {
            OldEvent::DesperationMoraleMarked { units, why }
        }
        Event::DesperationMoraleRemoved(DesperationMoraleRemoved { units, why }) => {
            OldEvent::DesperationMoraleRemoved { units, why }
        }
        Event::RallyAttempted(RallyAttempted { unit, leader }) => {
            OldEvent::RallyAttempted { unit, leader }
        }
        Event::UnitsWithdrew(UnitsWithdrew {
            units,
            from,
            to,
            cx,
        }) => OldEvent::UnitsWithdrew {
            units,
            from,
            to,
            cx,
        },
        Event::OpportunityFireMarked(OpportunityFireMarked { units }) => {
            OldEvent::OpportunityFireMarked { units }
        }
        Event::SquadReduced(SquadReduced {
            unit,
            half_squad,
            rule,
            why,
        }) => OldEvent::SquadReduced {
            unit,
            half_squad,
            rule,
            why,
        },
        Event::InherentFpForfeited(InherentFpForfeited { unit, weapons }) => {
            OldEvent::InherentFpForfeited { unit, weapons }
        }
        Event::ConcealmentLostInCloseCombat(ConcealmentLostInCloseCombat { hex, revealed }) => {
            OldEvent::ConcealmentLostInCloseCombat { hex, revealed }
        }
        Event::ConcealmentLostByFire(ConcealmentLostByFire { revealed }) => {
            OldEvent::ConcealmentLostByFire { revealed }
        }
        Event::ConcealmentLostByBypass(ConcealmentLostByBypass {
            revealed,
            dummies_removed,
        }) => OldEvent::ConcealmentLostByBypass {
            revealed,
            dummies_removed,
        },
        Event::ConcealmentLostToAttack(ConcealmentLostToAttack {
            target,
            revealed,
            dummies_removed,
        }) => OldEvent::ConcealmentLostToAttack {
            target,
            revealed,
            dummies_removed,
        },
        Event::DummiesRemovedInCloseCombat(DummiesRemovedInCloseCombat {
            hex,
            dummies_removed,
        }) => OldEvent::DummiesRemovedInCloseCombat {
            hex,
            dummies_removed,
        },
        Event::RecoveryAttempted(RecoveryAttempted {
            unit,
            weapon,
            recovered,
            mf,
        }) => OldEvent::RecoveryAttempted {
            unit,
            weapon,
            recovered,
            mf,
        },
        Event::WeaponTransferred(WeaponTransferred { weapon, from, to }) => {
            OldEvent::WeaponTransferred { weapon, from, to }
        }
        Event::FpfNmcTaken(FpfNmcTaken {
            by,
            unit,
            dice,
            modifiers,
            final_dr,
            rule,
            outcome,
        }) => OldEvent::FpfNmcTaken {
            by,
            unit,
            dice,
            modifiers,
            final_dr,
            rule,
            outcome,
        },
        Event::LeaderRouted(LeaderRouted {
            leader,
            unit,
            from,
            to,
            mf,
        }) => OldEvent::LeaderRouted {
            leader,
            unit,
            from,
            to,
            mf,
        },
        Event::InfiltrationOffered(InfiltrationOffered { chance }) => {
            OldEvent::InfiltrationOffered { chance }
        }
        Event::InfiltrationChosen(InfiltrationChosen {
            by,
            hex,
            withdrawals,
        }) => OldEvent::InfiltrationChosen {
            by,
            hex,
            withdrawals,
        },
    }
}

/// Every variant, by its tag, in the enum's order.
const TAGS: &[&str] = &[
    "GameCreated",
    "StepEnded",
    "StepPassed",
    "GameEnded",
    "Conceded",
    "EndProposed",
    "EndAgreed",
    "UnitMoved",
    "UnitAdvanced",
    "CloseCombatDesignated",
    "AmbushChecked",
    "MeleeRecorded",
    "UnitBypassed",
    "DoubleTimeDeclared",
    "AssaultMovementDeclared",
    "WeaponPickedUp",
    "WeaponDropped",
    "WallAdvantageClaimed",
    "WallAdvantageForfeited",
    "WallAdvantageDenied",
    "UnitsMomentarilyRevealed",
    "WallAdvantageChanceOffered",
    "WallAdvantageChanceDeclined",
    "AttackDeclared",
    "WeaponMalfunctioned",
    "MultipleRofRetained",
    "WeaponRepairAttempted",
    "AttackResolved",
    "HiddenUnitPlaced",
    "UnitEntryBlocked",
    "DiceRolled",
    "SewerEntryFailed",
    "UnitsEnteredSewer",
    "SewerStackMoved",
    "SewerStackLost",
    "SewerEmergenceRolled",
    "UnitsSurfaced",
    "UnitsEnteredTunnel",
    "TunnelDestroyed",
    "ManholeDeclaredUnseen",
    "OutcomeAdjudicated",
    "DiceCommitted",
    "EntropyContributed",
    "SeedRevealAgreed",
    "SeedRevealed",
    "AdjudicationAccepted",
    "AdjudicationDisputed",
    "UndoRequested",
    "UndoDeclined",
    "EventsUndone",
    "WallAdvantageChallenged",
    "WallAdvantageHipWindowOffered",
    "ShellholeCoverTaken",
    "AllMfSpent",
    "UnitsRoutedThroughTunnel",
    "UnitRouted",
    "UnitFailedToRout",
    "RoutLeftToPlayers",
    "TunnelUseSeen",
    "TunnelEntranceDiscovered",
    "TunnelUseSighted",
    "EventsUndoneTo",
    "UnitSetUp",
    "UnitSetUpLifted",
    "SetupDone",
    "SetupEnded",
    "UnitsEntered",
    "ClockStarted",
    "ClockHandedOver",
    "ClockExpired",
    "ClaimedOnTime",
    "TimeGiven",
    "VacationStarted",
    "VacationEnded",
    "AttackLeftToPlayers",
    "ResidualFpLeft",
    "IftAttackResolved",
    "FireEffectApplied",
    "FireEffectLeftToPlayers",
    "DesperationMoraleMarked",
    "DesperationMoraleRemoved",
    "RallyAttempted",
    "UnitsWithdrew",
    "OpportunityFireMarked",
    "SquadReduced",
    "InherentFpForfeited",
    "ConcealmentLostInCloseCombat",
    "ConcealmentLostByFire",
    "ConcealmentLostByBypass",
    "ConcealmentLostToAttack",
    "DummiesRemovedInCloseCombat",
    "RecoveryAttempted",
    "WeaponTransferred",
    "FpfNmcTaken",
    "LeaderRouted",
    "InfiltrationOffered",
    "InfiltrationChosen",
];

fn tag(event: &Event) -> String {
    match serde_json::to_value(event).expect("events encode") {
        serde_json::Value::Object(map) => map.keys().next().cloned().expect("one key"),
        other => panic!("an event encodes as an object, not {other}"),
    }
}

/// Encoded by the old enum, both encodings read back as `event`, and the new enum writes the
/// same bytes and the same text.
fn same_encoding(event: &Event) {
    let config = bincode::config::standard();
    let old_bytes = bincode::serde::encode_to_vec(old(event.clone()), config).unwrap();
    let (read, used): (Event, usize) =
        bincode::serde::decode_from_slice(&old_bytes, config).unwrap();
    assert_eq!(used, old_bytes.len(), "{}: bytes left over", tag(event));
    assert_eq!(&read, event, "{}: bincode read back differs", tag(event));
    assert_eq!(
        bincode::serde::encode_to_vec(event, config).unwrap(),
        old_bytes,
        "{}: bincode differs",
        tag(event)
    );
    let old_json = serde_json::to_string(&old(event.clone())).unwrap();
    let read: Event = serde_json::from_str(&old_json).unwrap();
    assert_eq!(&read, event, "{}: JSON read back differs", tag(event));
    assert_eq!(serde_json::to_string(event).unwrap(), old_json);
}

#[test]
fn every_event_reads_as_the_old_enum_wrote_it() {
    let (_, events, _) = position_samples();
    let game = Game::new(match &events[0] {
        Event::GameCreated(GameCreated { scenario }) => scenario.clone(),
        _ => unreachable!("the first event made is GameCreated"),
    });
    let mut seen = BTreeSet::new();
    for event in events.iter().chain(&built_events(&game)) {
        same_encoding(event);
        seen.insert(tag(event));
    }
    let missing: Vec<&str> = TAGS
        .iter()
        .copied()
        .filter(|t| !seen.contains(&snake(t)))
        .collect();
    assert!(
        missing.is_empty(),
        "no event of these variants was checked: {missing:?}"
    );
}

/// The old enum's tag of a variant: its name in snake case.
fn snake(name: &str) -> String {
    let mut s = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            s.push('_');
        }
        s.push(c.to_ascii_lowercase());
    }
    s
}

/// The old enum's variant order is the new one's: the same index encodes the same variant.
#[test]
fn variants_keep_their_order() {
    let mut order = vec![];
    for event in built_events(&Game::new(
        Scenario::from_toml(
            &std::fs::read_to_string(
                Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/village-outskirts.toml"),
            )
            .unwrap(),
        )
        .unwrap(),
    )) {
        let bytes = bincode::serde::encode_to_vec(&event, bincode::config::standard()).unwrap();
        order.push((bytes[0], tag(&event)));
    }
    for (index, tag) in order {
        assert_eq!(snake(TAGS[index as usize]), tag);
    }
}

//! Events: facts, in the past tense. Every change to a game is one of these, appended to the
//! log and applied by `apply` — the same way live and in replay.

use crate::view::Names;
use crate::Game;
use board::scenario::Side;
use board::scenario::UnitId;
use board::terrain::{HexsideFeature, Mf};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

mod clock;
mod close_combat;
mod dice;
mod fire;
mod morale;
mod movement;
mod review;
mod setup;
mod turn;
mod underground;
mod wall_advantage;

pub use clock::*;
pub use close_combat::*;
pub use dice::*;
pub use fire::*;
pub use morale::*;
pub use movement::*;
pub use review::*;
pub use setup::*;
pub use turn::*;
pub use underground::*;
pub use wall_advantage::*;

/// What every event's family module says of it, beside its fields: the change it makes, how
/// each viewer receives it, and its words. Each variant's struct implements it in the module of its family,
/// so what an event means is written in one place, and an event missing one does not
/// compile; `apply`, `view::project_event` and `record::words` only dispatch to it
/// ([`each_event!`]).
pub(crate) trait Fact: Into<Event> {
    /// Its change to `game` (the whole game or a viewer's projection), by `apply`: it cannot
    /// fail and decides nothing, the event having been decided already.
    fn apply(&self, game: &mut Game);

    /// The event as the viewer of `names` receives it (`view::project_event`): naming units
    /// under "?" by their aliases and leaving out what the viewer may not know.
    fn viewed(self, names: &Names<'_>) -> Event;

    /// The event in words, for the player's terminal, the game record and the export: one
    /// sentence naming the side, the units and the rule behind the change. Read from the event
    /// as a viewer received it and the sides' names alone (`record::words`).
    fn words(&self, sides: &Sides<'_>) -> String;

    /// The units whose sight the event needs: a viewer who cannot see one of them is not sent
    /// it at all (`Game::sees`). Every event says, so that a new one cannot reach a viewer
    /// by having been forgotten here; one that names no unit, or names its units only as its
    /// `viewed` masks them, returns none.
    fn units(&self) -> Vec<&UnitId>;

    /// The MF accounts it carries (moves, Bypass, Double Time, recovery, a rout's MF).
    fn accounts(&self) -> &[MfAccount] {
        &[]
    }

    /// The server's time it carries, if it is a clock's event.
    fn clock_at(&self) -> Option<u64> {
        None
    }
}

/// `$body` run on the struct `$e` that `$event` wraps, whichever variant it is: the one match
/// over every variant that dispatching to the families needs.
macro_rules! each_event {
    ($event:expr, $e:ident => $body:expr) => {
        match $event {
            Event::GameCreated($e) => $body,
            Event::StepEnded($e) => $body,
            Event::StepPassed($e) => $body,
            Event::GameEnded($e) => $body,
            Event::Conceded($e) => $body,
            Event::EndProposed($e) => $body,
            Event::EndAgreed($e) => $body,
            Event::UnitMoved($e) => $body,
            Event::UnitAdvanced($e) => $body,
            Event::CloseCombatDesignated($e) => $body,
            Event::AmbushChecked($e) => $body,
            Event::MeleeRecorded($e) => $body,
            Event::UnitBypassed($e) => $body,
            Event::DoubleTimeDeclared($e) => $body,
            Event::AssaultMovementDeclared($e) => $body,
            Event::WeaponPickedUp($e) => $body,
            Event::WeaponDropped($e) => $body,
            Event::WallAdvantageClaimed($e) => $body,
            Event::WallAdvantageForfeited($e) => $body,
            Event::WallAdvantageDenied($e) => $body,
            Event::UnitsMomentarilyRevealed($e) => $body,
            Event::WallAdvantageChanceOffered($e) => $body,
            Event::WallAdvantageChanceDeclined($e) => $body,
            Event::AttackDeclared($e) => $body,
            Event::WeaponMalfunctioned($e) => $body,
            Event::MultipleRofRetained($e) => $body,
            Event::WeaponRepairAttempted($e) => $body,
            Event::AttackResolved($e) => $body,
            Event::HiddenUnitPlaced($e) => $body,
            Event::UnitEntryBlocked($e) => $body,
            Event::DiceRolled($e) => $body,
            Event::SewerEntryFailed($e) => $body,
            Event::UnitsEnteredSewer($e) => $body,
            Event::SewerStackMoved($e) => $body,
            Event::SewerStackLost($e) => $body,
            Event::SewerEmergenceRolled($e) => $body,
            Event::UnitsSurfaced($e) => $body,
            Event::UnitsEnteredTunnel($e) => $body,
            Event::TunnelDestroyed($e) => $body,
            Event::ManholeDeclaredUnseen($e) => $body,
            Event::OutcomeAdjudicated($e) => $body,
            Event::DiceCommitted($e) => $body,
            Event::EntropyContributed($e) => $body,
            Event::SeedRevealAgreed($e) => $body,
            Event::SeedRevealed($e) => $body,
            Event::AdjudicationAccepted($e) => $body,
            Event::AdjudicationDisputed($e) => $body,
            Event::UndoRequested($e) => $body,
            Event::UndoDeclined($e) => $body,
            Event::EventsUndone($e) => $body,
            Event::WallAdvantageChallenged($e) => $body,
            Event::WallAdvantageHipWindowOffered($e) => $body,
            Event::ShellholeCoverTaken($e) => $body,
            Event::AllMfSpent($e) => $body,
            Event::UnitsRoutedThroughTunnel($e) => $body,
            Event::UnitRouted($e) => $body,
            Event::UnitFailedToRout($e) => $body,
            Event::RoutLeftToPlayers($e) => $body,
            Event::TunnelUseSeen($e) => $body,
            Event::TunnelEntranceDiscovered($e) => $body,
            Event::TunnelUseSighted($e) => $body,
            Event::EventsUndoneTo($e) => $body,
            Event::UnitSetUp($e) => $body,
            Event::UnitSetUpLifted($e) => $body,
            Event::SetupDone($e) => $body,
            Event::SetupEnded($e) => $body,
            Event::UnitsEntered($e) => $body,
            Event::ClockStarted($e) => $body,
            Event::ClockHandedOver($e) => $body,
            Event::ClockExpired($e) => $body,
            Event::ClaimedOnTime($e) => $body,
            Event::TimeGiven($e) => $body,
            Event::VacationStarted($e) => $body,
            Event::VacationEnded($e) => $body,
            Event::AttackLeftToPlayers($e) => $body,
            Event::ResidualFpLeft($e) => $body,
            Event::IftAttackResolved($e) => $body,
            Event::FireEffectApplied($e) => $body,
            Event::FireEffectLeftToPlayers($e) => $body,
            Event::DesperationMoraleMarked($e) => $body,
            Event::DesperationMoraleRemoved($e) => $body,
            Event::RallyAttempted($e) => $body,
            Event::UnitsWithdrew($e) => $body,
            Event::OpportunityFireMarked($e) => $body,
            Event::SquadReduced($e) => $body,
            Event::InherentFpForfeited($e) => $body,
            Event::ConcealmentLostInCloseCombat($e) => $body,
            Event::ConcealmentLostByFire($e) => $body,
            Event::ConcealmentLostByBypass($e) => $body,
            Event::ConcealmentLostToAttack($e) => $body,
            Event::DummiesRemovedInCloseCombat($e) => $body,
            Event::RecoveryAttempted($e) => $body,
            Event::WeaponTransferred($e) => $body,
            Event::FpfNmcTaken($e) => $body,
            Event::LeaderRouted($e) => $body,
            Event::InfiltrationOffered($e) => $body,
            Event::InfiltrationChosen($e) => $body,
        }
    };
}
pub(crate) use each_event;

/// Each struct into its own variant, and each variant's short name: the struct's, or the
/// label written after it (`as "…"`).
macro_rules! into_event {
    ($($name:ident $(as $label:literal)?,)*) => {
        $(impl From<$name> for Event {
            fn from(fact: $name) -> Event {
                Event::$name(fact)
            }
        })*

        impl Event {
            /// The short name used in logs and the readable game record.
            pub fn name(&self) -> &'static str {
                match self {
                    $(Event::$name(_) => into_event!(@name $name $(, $label)?),)*
                }
            }
        }
    };
    (@name $name:ident) => {
        stringify!($name)
    };
    (@name $name:ident, $label:literal) => {
        $label
    };
}
into_event!(
    GameCreated,
    StepEnded,
    StepPassed,
    GameEnded,
    Conceded,
    EndProposed,
    EndAgreed,
    UnitMoved,
    UnitAdvanced,
    CloseCombatDesignated,
    AmbushChecked,
    MeleeRecorded,
    UnitBypassed,
    DoubleTimeDeclared,
    AssaultMovementDeclared,
    WeaponPickedUp,
    WeaponDropped,
    WallAdvantageClaimed,
    WallAdvantageForfeited,
    WallAdvantageDenied,
    UnitsMomentarilyRevealed,
    WallAdvantageChanceOffered,
    WallAdvantageChanceDeclined,
    AttackDeclared,
    WeaponMalfunctioned,
    MultipleRofRetained,
    WeaponRepairAttempted,
    AttackResolved,
    HiddenUnitPlaced,
    UnitEntryBlocked,
    DiceRolled,
    SewerEntryFailed,
    UnitsEnteredSewer,
    SewerStackMoved,
    SewerStackLost,
    SewerEmergenceRolled,
    UnitsSurfaced,
    UnitsEnteredTunnel,
    TunnelDestroyed,
    ManholeDeclaredUnseen,
    OutcomeAdjudicated,
    DiceCommitted,
    EntropyContributed,
    SeedRevealAgreed,
    SeedRevealed,
    AdjudicationAccepted,
    AdjudicationDisputed,
    UndoRequested,
    UndoDeclined,
    EventsUndone,
    WallAdvantageChallenged,
    WallAdvantageHipWindowOffered,
    ShellholeCoverTaken,
    AllMfSpent,
    UnitsRoutedThroughTunnel,
    UnitRouted,
    UnitFailedToRout,
    RoutLeftToPlayers,
    TunnelUseSeen,
    TunnelEntranceDiscovered,
    TunnelUseSighted,
    // Undoing to a point is told as any undo is.
    EventsUndoneTo as "EventsUndone",
    UnitSetUp,
    UnitSetUpLifted,
    SetupDone,
    SetupEnded,
    UnitsEntered,
    ClockStarted,
    ClockHandedOver,
    ClockExpired,
    ClaimedOnTime,
    TimeGiven,
    VacationStarted,
    VacationEnded,
    AttackLeftToPlayers,
    ResidualFpLeft,
    IftAttackResolved,
    FireEffectApplied,
    FireEffectLeftToPlayers,
    DesperationMoraleMarked,
    DesperationMoraleRemoved,
    RallyAttempted,
    UnitsWithdrew,
    OpportunityFireMarked,
    SquadReduced,
    InherentFpForfeited,
    ConcealmentLostInCloseCombat,
    ConcealmentLostByFire,
    ConcealmentLostByBypass,
    ConcealmentLostToAttack,
    DummiesRemovedInCloseCombat,
    RecoveryAttempted,
    WeaponTransferred,
    FpfNmcTaken,
    LeaderRouted,
    InfiltrationOffered,
    InfiltrationChosen,
);

/// Units an event reveals (`revealed`, each whole as both sides see it now) are taken from the
/// event, in every game alike: the whole game and its owner's projection hold it already, and
/// an enemy's projection, where it stood masked under its alias until this event renames it
/// (`view::apply_viewed`), gets it as its stream must reach. Every event that reveals units
/// (an entry blocked, a CC attack, fire) applies them here.
fn reveal(game: &mut Game, revealed: &[crate::Unit]) {
    for unit in revealed {
        game.units.insert(unit.id.clone(), unit.clone());
    }
}

/// Concealment lost where it is found (an entry blocked, A12.15; fire, A12.14; a Bypass,
/// A4.33): the real units [`reveal`]ed, the Dummies removed, as a Dummy goes with its "?".
fn lose_concealment(game: &mut Game, revealed: &[crate::Unit], dummies_removed: &[UnitId]) {
    reveal(game, revealed);
    for id in dummies_removed {
        if let Some(unit) = game.units.get_mut(id) {
            unit.eliminated = true;
        }
    }
}

/// One fact of a game. Each variant wraps the struct of the same name that holds its fields,
/// in its family's module (`turn`, `setup`, `movement`, `wall_advantage`, `underground`,
/// `fire`, `morale`, `close_combat`, `dice`, `clock`, `review`), beside its `Fact` impl: its
/// change to the game, how each viewer receives it, and its words.
///
/// To add an event: write its struct in its family's module (fields as the fact's own terms,
/// rule numbers in its doc) and implement `Fact` for it there; add the variant LAST below
/// (stored logs are bincode, by variant index: never reorder or remove one), to
/// `each_event` and to `into_event!` (which also names it, [`Event::name`]). The compiler lists each
/// place left to do; `protocol/tests/event_encoding.rs` keeps the encodings fixed, and
/// `protocol/tests/golden.rs` pins each variant's stored bytes: append the new one's sample
/// (`ASL_GOLDEN=append`). Never add, remove or reorder a field of an event already stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Event {
    GameCreated(GameCreated),
    StepEnded(StepEnded),
    StepPassed(StepPassed),
    GameEnded(GameEnded),
    Conceded(Conceded),
    EndProposed(EndProposed),
    EndAgreed(EndAgreed),
    UnitMoved(UnitMoved),
    UnitAdvanced(UnitAdvanced),
    CloseCombatDesignated(CloseCombatDesignated),
    AmbushChecked(AmbushChecked),
    MeleeRecorded(MeleeRecorded),
    UnitBypassed(UnitBypassed),
    DoubleTimeDeclared(DoubleTimeDeclared),
    AssaultMovementDeclared(AssaultMovementDeclared),
    WeaponPickedUp(WeaponPickedUp),
    WeaponDropped(WeaponDropped),
    WallAdvantageClaimed(WallAdvantageClaimed),
    WallAdvantageForfeited(WallAdvantageForfeited),
    WallAdvantageDenied(WallAdvantageDenied),
    UnitsMomentarilyRevealed(UnitsMomentarilyRevealed),
    WallAdvantageChanceOffered(WallAdvantageChanceOffered),
    WallAdvantageChanceDeclined(WallAdvantageChanceDeclined),
    AttackDeclared(AttackDeclared),
    WeaponMalfunctioned(WeaponMalfunctioned),
    MultipleRofRetained(MultipleRofRetained),
    WeaponRepairAttempted(WeaponRepairAttempted),
    AttackResolved(AttackResolved),
    HiddenUnitPlaced(HiddenUnitPlaced),
    UnitEntryBlocked(UnitEntryBlocked),
    DiceRolled(DiceRolled),
    SewerEntryFailed(SewerEntryFailed),
    UnitsEnteredSewer(UnitsEnteredSewer),
    SewerStackMoved(SewerStackMoved),
    SewerStackLost(SewerStackLost),
    SewerEmergenceRolled(SewerEmergenceRolled),
    UnitsSurfaced(UnitsSurfaced),
    UnitsEnteredTunnel(UnitsEnteredTunnel),
    TunnelDestroyed(TunnelDestroyed),
    ManholeDeclaredUnseen(ManholeDeclaredUnseen),
    OutcomeAdjudicated(OutcomeAdjudicated),
    DiceCommitted(DiceCommitted),
    EntropyContributed(EntropyContributed),
    SeedRevealAgreed(SeedRevealAgreed),
    SeedRevealed(SeedRevealed),
    AdjudicationAccepted(AdjudicationAccepted),
    AdjudicationDisputed(AdjudicationDisputed),
    UndoRequested(UndoRequested),
    UndoDeclined(UndoDeclined),
    EventsUndone(EventsUndone),
    WallAdvantageChallenged(WallAdvantageChallenged),
    WallAdvantageHipWindowOffered(WallAdvantageHipWindowOffered),
    ShellholeCoverTaken(ShellholeCoverTaken),
    AllMfSpent(AllMfSpent),
    UnitsRoutedThroughTunnel(UnitsRoutedThroughTunnel),
    UnitRouted(UnitRouted),
    UnitFailedToRout(UnitFailedToRout),
    RoutLeftToPlayers(RoutLeftToPlayers),
    TunnelUseSeen(TunnelUseSeen),
    TunnelEntranceDiscovered(TunnelEntranceDiscovered),
    TunnelUseSighted(TunnelUseSighted),
    EventsUndoneTo(EventsUndoneTo),
    UnitSetUp(UnitSetUp),
    UnitSetUpLifted(UnitSetUpLifted),
    SetupDone(SetupDone),
    SetupEnded(SetupEnded),
    UnitsEntered(UnitsEntered),
    ClockStarted(ClockStarted),
    ClockHandedOver(ClockHandedOver),
    ClockExpired(ClockExpired),
    ClaimedOnTime(ClaimedOnTime),
    TimeGiven(TimeGiven),
    VacationStarted(VacationStarted),
    VacationEnded(VacationEnded),
    AttackLeftToPlayers(AttackLeftToPlayers),
    ResidualFpLeft(ResidualFpLeft),
    IftAttackResolved(IftAttackResolved),
    FireEffectApplied(FireEffectApplied),
    FireEffectLeftToPlayers(FireEffectLeftToPlayers),
    DesperationMoraleMarked(DesperationMoraleMarked),
    DesperationMoraleRemoved(DesperationMoraleRemoved),
    RallyAttempted(RallyAttempted),
    // New variants go last: logs are encoded by variant index.
    UnitsWithdrew(UnitsWithdrew),
    OpportunityFireMarked(OpportunityFireMarked),
    SquadReduced(SquadReduced),
    InherentFpForfeited(InherentFpForfeited),
    ConcealmentLostInCloseCombat(ConcealmentLostInCloseCombat),
    ConcealmentLostByFire(ConcealmentLostByFire),
    ConcealmentLostByBypass(ConcealmentLostByBypass),
    ConcealmentLostToAttack(ConcealmentLostToAttack),
    DummiesRemovedInCloseCombat(DummiesRemovedInCloseCombat),
    RecoveryAttempted(RecoveryAttempted),
    WeaponTransferred(WeaponTransferred),
    FpfNmcTaken(FpfNmcTaken),
    LeaderRouted(LeaderRouted),
    InfiltrationOffered(InfiltrationOffered),
    InfiltrationChosen(InfiltrationChosen),
}

/// At which of the moments of B9.322 (or by which rule) a unit took WA.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaClaim {
    /// At the end of the RPh, ATTACKER first (B9.322, step 1.32B).
    EndOfRallyPhase,
    /// During its own MPh or APh (B9.322).
    OwnMovement,
    /// On being placed on board from HIP (B9.322).
    LosingHip,
    /// All enemy units sharing its hexsides lost WA (B9.322).
    EnemyLostIt,
    /// It has no in-hex TEM of +1 or more, so it must hold WA whenever it can (B9.323).
    Mandatory,
}

impl WaClaim {
    pub fn rule(self) -> &'static str {
        match self {
            WaClaim::Mandatory => "B9.323",
            _ => "B9.322",
        }
    }
    pub fn describe(self) -> &'static str {
        match self {
            WaClaim::EndOfRallyPhase => "at the end of the RPh",
            WaClaim::OwnMovement => "during its MPh/APh",
            WaClaim::LosingHip => "on losing HIP",
            WaClaim::EnemyLostIt => "as the enemy lost it",
            WaClaim::Mandatory => "mandatory: no in-hex TEM of +1 or more",
        }
    }
}

/// Why units no longer hold WA.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaLoss {
    /// Its owner gave it up (B9.322).
    Voluntary,
    /// It started entering a new Location (B9.41).
    Moved,
    /// Its attempt to leave failed, and WA was lost all the same (B9.41).
    ExitFailed,
    /// It no longer qualifies: the rule and the reason (B9.32, B9.35 …).
    Ineligible { rule: String, why: String },
    /// A dummy stack cannot keep WA from a real enemy unit (B9.324).
    DummyChallenged,
    /// Challenged, its owner chose to forfeit rather than show a real unit (B9.324).
    ChallengeForfeited,
}

impl WaLoss {
    pub fn describe(&self) -> String {
        match self {
            WaLoss::Voluntary => "forfeited (B9.322)".into(),
            WaLoss::Moved => "lost on starting to enter a new Location (B9.41)".into(),
            WaLoss::ExitFailed => "lost in a failed attempt to leave (B9.41)".into(),
            WaLoss::Ineligible { rule, why } => format!("lost: {why} ({rule})"),
            WaLoss::ChallengeForfeited => {
                "forfeited when challenged rather than showing a real unit (B9.324)".into()
            }
            WaLoss::DummyChallenged => {
                "lost: a dummy stack cannot keep WA from a real unit (B9.324)".into()
            }
        }
    }
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

/// What one step of movement cost and why, line by line, so a replay shows why it was legal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveCost {
    /// Cost Of Terrain of the hex entered (for Bypass: of the other terrain in it), and the
    /// rule it comes from.
    pub cot: Mf,
    pub cot_rule: String,
    /// Entered along a road at the road rate (B3, A4.132).
    pub road: bool,
    /// Extra MF because a Bypass ran past two contiguous hexsides of one hex (A4.31).
    pub bypass_doubling: Mf,
    /// Added when climbing: the COT is doubled for a higher level (B10.4 via B9.4).
    pub elevation: Mf,
    /// Wall, hedge or bocage crossed (B9.4, B9.54); never doubled for elevation.
    pub hexside: Option<HexsideFeature>,
    pub hexside_mf: Mf,
    /// The entry takes the unit's whole allotment (Marsh, B16).
    pub all_mf: bool,
    pub total: Mf,
}

impl MoveCost {
    /// "1½ COT (B15) + 1 uphill (B10) + 1 wall (B9.4)" — the breakdown shown in refusals and traces.
    pub fn describe(&self) -> String {
        if self.all_mf {
            return format!("all MF ({})", self.cot_rule);
        }
        let mut parts = vec![];
        if self.cot > Mf::default() || self.total == Mf::default() {
            parts.push(format!(
                "{} {} ({})",
                self.cot,
                if self.road { "road" } else { "COT" },
                self.cot_rule
            ));
        }
        if self.elevation > Mf::default() {
            parts.push(format!("{} uphill (B10)", self.elevation));
        }
        if let Some(feature) = self.hexside {
            parts.push(format!(
                "{} {} ({})",
                self.hexside_mf,
                feature.name(),
                feature.row().rule
            ));
        }
        if self.bypass_doubling > Mf::default() {
            parts.push(format!(
                "{} for Bypass past two hexsides (A4.31)",
                self.bypass_doubling
            ));
        }
        parts.join(" + ")
    }
}

/// One unit's MF after a step: its allotment and where it came from, spent and left.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MfAccount {
    pub unit: UnitId,
    pub allotment: Allotment,
    pub spent: Mf,
    pub left: Mf,
}

/// A unit's MF allotment for the MPh, broken down the way a player checks it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Allotment {
    /// 4 for MMC (3 Inexperienced), 6 for SMC (A4.1).
    pub base: Mf,
    /// +2 for an MMC moving with a leader since its first step (A4.12).
    pub leader: Mf,
    /// +1 for Double Time (A4.5).
    pub double_time: Mf,
    /// +1 while every MF is spent along a road (A4.132).
    pub road: Mf,
    /// −1 per PP portaged beyond the unit's IPC (A4.42); subtracted.
    pub portage: Mf,
    pub total: Mf,
}

impl Event {
    /// The event in words (`Fact::words`): `record::words::describe`.
    pub fn words(&self, sides: &Sides<'_>) -> String {
        each_event!(self, e => e.words(sides))
    }

    /// Whether the game is over after this event: its last step ended, a side conceded, or
    /// both agreed to end it.
    pub fn ends_game(&self) -> bool {
        matches!(
            self,
            Event::GameEnded(_)
                | Event::Conceded(_)
                | Event::EndAgreed(_)
                | Event::ClaimedOnTime(_)
        )
    }

    /// The server's time a clock event carries; `None` for every other event.
    pub fn clock_at(&self) -> Option<u64> {
        each_event!(self, e => e.clock_at())
    }

    /// Whether the server records this event in its own name, not the commanding side's:
    /// the clock's hand-overs and expiry follow from time, not from a side's choice.
    pub fn is_servers_clock(&self) -> bool {
        matches!(self, Event::ClockHandedOver(_) | Event::ClockExpired(_))
    }

    /// The MF accounts this event carries (`Fact::accounts`).
    pub fn accounts(&self) -> &[MfAccount] {
        each_event!(self, e => e.accounts())
    }

    /// Units this event tells about; a viewer who may not see one of them may not see the
    /// event (`Fact::units`).
    pub fn units(&self) -> Vec<&UnitId> {
        each_event!(self, e => e.units())
    }
}

/// What a repair dr did to a malfunctioned support weapon (A9.72).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RepairResult {
    /// At or below its repair number: it fires again.
    Repaired,
    /// A 6: the weapon is removed from play.
    Eliminated,
    /// Neither: it stays malfunctioned.
    Failed,
}

/// What a step cost: "3 MF = 1 COT (B1) + …", or for an entry that takes the whole allotment
/// (Marsh, B16) "all MF (B16)" — never "0 MF".
pub(crate) fn paid(cost: &MoveCost) -> String {
    if cost.all_mf {
        cost.describe()
    } else {
        format!("{} MF = {}", cost.total, cost.describe())
    }
}

/// "; 467a spent 3 of 6 (4 +2 leader), left 3" for each unit.
pub(crate) fn write_accounts(s: &mut String, accounts: &[MfAccount]) {
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

pub(crate) fn allotment_reasons(a: &Allotment) -> String {
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

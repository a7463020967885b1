//! Events: facts, in the past tense. Every change to a game is one of these, appended to the
//! log and applied by `apply` — the same way live and in replay.

use crate::command::Outcome;
use crate::phase::Clock;
use board::hex::Hex;
use board::scenario::{Scenario, Side, UnitId};
use board::terrain::{HexsideFeature, Mf};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Event {
    /// The game began from this scenario; always the first event of a log, so a log is
    /// self-contained.
    GameCreated {
        scenario: Scenario,
    },
    /// The acting side finished a step; the clock moved on to `next`.
    StepEnded {
        by: Side,
        ended: Clock,
        next: Clock,
    },
    /// A step no side could act in passed by itself, with no command: an end-of-RPh step
    /// (1.32B) in which no unit of the side to act could claim Wall Advantage (B9.322) or
    /// repair a weapon (A9.72), or a RtPh step in which the side to act had no unit that could
    /// rout (A10.5), judged from what both sides may know (`rules::passing`). The clock moved
    /// on to `next` as if the step had ended.
    StepPassed {
        ended: Clock,
        next: Clock,
    },
    /// The last step of the last Game Turn ended.
    GameEnded {
        turns_played: u16,
    },
    /// A side gave the game up: it is over (`rules::end`).
    Conceded {
        side: Side,
    },
    /// A side offered to end the game where it stands; the end of the step withdraws the
    /// offer.
    EndProposed {
        side: Side,
    },
    /// A side accepted the opponent's offer: the game is over by agreement.
    EndAgreed {
        side: Side,
    },
    /// A unit (or a stack moving together) entered an adjacent hex, paying `cost` (A4).
    UnitMoved {
        units: Vec<UnitId>,
        from: Hex,
        to: Hex,
        cost: MoveCost,
        /// MF spent this MPh and MF left, per unit, after this step.
        mf: Vec<MfAccount>,
    },
    /// A unit (or a stack together) advanced into the adjacent hex `to` in the APh (A4.7);
    /// `cost` is what entering it costs in the MPh, the measure of Difficult Terrain, and
    /// `cx` the units that became CX doing so (A4.72).
    UnitAdvanced {
        units: Vec<UnitId>,
        from: Hex,
        to: Hex,
        cost: MoveCost,
        cx: Vec<UnitId>,
    },
    /// `by` designated all its CC attacks in the Location of `hex` (A11.12). The ATTACKER's
    /// waits for the DEFENDER's; the DEFENDER's is followed by every attack's roll and result
    /// (`DiceRolled`, `FireEffectApplied`, `FireEffectLeftToPlayers`) and, with both sides
    /// still there, the Melee (A11.7). `no_ambush` is the ATTACKER's word that the players'
    /// Ambush check found none (A11.4).
    CloseCombatDesignated {
        by: Side,
        hex: Hex,
        attacks: Vec<crate::command::CcAttack>,
        /// The side's withdrawals from the Melee, declared with its attacks (A11.2).
        #[serde(default)]
        withdrawals: Vec<crate::command::CcWithdrawal>,
        no_ambush: bool,
    },
    /// As the APh ended, the engine checked for Ambush in the CC Location of `hex` (A11.4):
    /// each side's dr went before this (`DiceRolled`); `ambusher` is the side whose Final dr
    /// was at least three less than the other's, if one was. Its CC attacks there come first,
    /// and the other side's after, with what is left of it (`rules::close_combat`).
    AmbushChecked {
        hex: Hex,
        ambusher: Option<Side>,
    },
    /// The Close Combat in `hex` ended with units of both sides still there: Melee (A11.7).
    MeleeRecorded {
        hex: Hex,
    },
    /// A unit (or stack) moved in Bypass around the obstacle of `hex` along these hexsides
    /// (A4.3), entering the hex or continuing around it.
    UnitBypassed {
        units: Vec<UnitId>,
        hex: Hex,
        /// The hex the units came from, or `hex` itself when continuing around it.
        from: Hex,
        along: Vec<Hex>,
        cost: MoveCost,
        mf: Vec<MfAccount>,
    },
    /// Units declared Double Time: +1 MF this MPh, and they are CX (A4.5).
    DoubleTimeDeclared {
        units: Vec<UnitId>,
        mf: Vec<MfAccount>,
    },
    /// Units declared Assault Movement before moving (A4.61).
    AssaultMovementDeclared {
        units: Vec<UnitId>,
    },
    /// A unit recovered an unpossessed support weapon in its Location (A4.43, A4.44).
    WeaponPickedUp {
        unit: UnitId,
        weapon: String,
        mf: MfAccount,
    },
    /// A unit dropped possession of a support weapon, at no MF cost (A4.43).
    WeaponDropped {
        unit: UnitId,
        weapon: String,
    },
    /// Units put a "Wall Advan" counter on: they hold WA over every eligible wall/hedge
    /// hexside of their hex (B9.32, B9.321). `how` says at which moment and why.
    WallAdvantageClaimed {
        units: Vec<UnitId>,
        how: WaClaim,
    },
    /// Units lost or gave up WA, and why.
    WallAdvantageForfeited {
        units: Vec<UnitId>,
        why: WaLoss,
    },
    /// A claim met a concealed enemy holding WA over a shared hexside; both sides revealed
    /// a real unit, and the claim failed (B9.324, B9.321).
    WallAdvantageDenied {
        units: Vec<UnitId>,
        by: UnitId,
    },
    /// Units shown to the opponent for a moment to prove they are real (B9.324); they stay
    /// concealed.
    UnitsMomentarilyRevealed {
        units: Vec<UnitId>,
    },
    /// All enemy units sharing these units' wall/hedge hexsides lost WA: their side may claim
    /// it now, out of the usual moments (B9.322), and play waits for its answer.
    WallAdvantageChanceOffered {
        side: Side,
        units: Vec<UnitId>,
    },
    /// The side offered the chance let it pass.
    WallAdvantageChanceDeclined {
        side: Side,
    },
    /// Fire declared against a hex; until it is resolved no WA there may change (B9.322).
    AttackDeclared {
        by: Side,
        firers: Vec<UnitId>,
        /// The support weapons that fire in it, each by the unit possessing it (A9.11).
        #[serde(default)]
        weapons: Vec<String>,
        target: Hex,
        /// Into the sewer beneath `target`: Point Blank Fire with a −2 DRM (B8.3).
        into_sewer: bool,
    },
    /// A support weapon's Original IFT DR reached its Breakdown Number: it malfunctioned
    /// (A9.7) and fires no more until repaired. The attack it took part in is resolved all the
    /// same.
    WeaponMalfunctioned {
        weapon: String,
        /// The unit possessing it, whose fire it was.
        holder: UnitId,
        original_dr: u8,
        breakdown: u8,
    },
    /// A support weapon kept its Multiple ROF (A9.2): the Original coloured dr of the IFT DR it
    /// fired with was at or below its ROF, so it may fire again this phase.
    MultipleRofRetained {
        weapon: String,
        /// The unit possessing it, whose fire it was.
        holder: UnitId,
        coloured_dr: u8,
        rof: u8,
    },
    /// The unit possessing a malfunctioned weapon tried to repair it in the RPh (A9.72): its
    /// dr (logged by the `DiceRolled` before it) repaired it, eliminated it, or left it as it
    /// was.
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
    /// A hidden unit was placed on board, concealed (A12.3); its owner's opponent learns it
    /// from this event, which therefore carries the unit and what it possesses.
    HiddenUnitPlaced {
        unit: Box<crate::Unit>,
        weapons: Vec<crate::Weapon>,
    },
    /// Units tried to enter a hex held by concealed or hidden enemy units: those are revealed
    /// (dummies removed), and the movers stay where they were, their MF spent (A12.15) and
    /// their WA lost (B9.41). `from == to` when they tried to enter from off board (A2.51):
    /// they stay off board.
    UnitEntryBlocked {
        units: Vec<UnitId>,
        from: Hex,
        to: Hex,
        revealed: Vec<crate::Unit>,
        dummies_removed: Vec<UnitId>,
        cost: MoveCost,
        mf: Vec<MfAccount>,
    },
    /// The server rolled dice: purpose, rule, raw dice, modifiers and Final result. Replay reads
    /// the dice from here and never rolls again.
    DiceRolled {
        roll: crate::dice::Roll,
    },
    /// The leader's 4TC failed: these units cannot enter the sewer this MPh (B8.4).
    SewerEntryFailed {
        units: Vec<UnitId>,
    },
    /// Units went down a Manhole into the sewer beneath it, for all their MF (B8.4).
    UnitsEnteredSewer {
        units: Vec<UnitId>,
        hex: Hex,
    },
    /// A sewer stack moved beneath another Manhole (B8.41); `designated_by` is the DEFENDER
    /// when the stack was lost.
    SewerStackMoved {
        units: Vec<UnitId>,
        from: Hex,
        to: Hex,
        designated_by: Option<Side>,
    },
    /// The stack is lost: the DEFENDER must say where it goes (B8.41).
    SewerStackLost {
        units: Vec<UnitId>,
        at: Hex,
        defender: Side,
        options: Vec<Hex>,
    },
    /// The Sewer Emergence Chart's result for a stack (B8.42).
    SewerEmergenceRolled {
        units: Vec<UnitId>,
        hex: Hex,
        result: crate::Emergence,
    },
    /// Sewer or tunnel units came up into their hex, concealed (B8.42, B8.61).
    UnitsSurfaced {
        units: Vec<UnitId>,
        hex: Hex,
    },
    /// Units entered a tunnel for all their MF and wait beneath "Sewer?" at its other end
    /// (B8.61); using it reveals the tunnel to the opponent.
    UnitsEnteredTunnel {
        units: Vec<UnitId>,
        side: Side,
        from: Hex,
        exit: Hex,
    },
    /// A tunnel entrance was destroyed (B8.63): the tunnel is gone.
    TunnelDestroyed {
        entrance: Hex,
    },
    /// The ATTACKER declared a road Manhole out of Known enemy LOS (or all of it Hindered
    /// ≥ +2), for the Sewer Emergence drm (B8.42); the opponent may dispute it.
    ManholeDeclaredUnseen {
        by: Side,
        hex: Hex,
    },
    /// A player entered an outcome the engine does not compute.
    OutcomeAdjudicated {
        by: Side,
        unit: UnitId,
        outcome: Outcome,
        note: String,
    },
    // Dispute review: the dice scheme (`docs/dice.md`), answers to adjudications and undo
    // (`docs/review.md`). None of them changes the position but `EventsUndone`; they are
    // decided by `record::dispute::decide`, which reads the log as well as the position.
    /// The server committed to its secret dice seed by publishing its hash. Logged with the
    /// first event that needs it (a contribution or a roll); shown to players from the start.
    DiceCommitted {
        commitment: crate::dice::Commitment,
    },
    /// A side added its random nonce to the dice key from now on.
    EntropyContributed {
        side: Side,
        nonce: crate::dice::Nonce,
    },
    /// A side agreed that the server reveal its current seed now.
    SeedRevealAgreed {
        side: Side,
    },
    /// The server revealed the seed of the current commitment (at the end of the game, or
    /// once both sides agreed): from here on anyone can re-derive every roll made under it.
    SeedRevealed {
        seed: crate::dice::Seed,
    },
    /// The opponent of whoever entered adjudication `event` accepted it.
    AdjudicationAccepted {
        by: Side,
        event: u64,
    },
    /// The opponent of whoever entered adjudication `event` disputed it, saying why.
    AdjudicationDisputed {
        by: Side,
        event: u64,
        reason: String,
    },
    /// The side to act asked to take back its own events `from..=to` (its last ones).
    UndoRequested {
        by: Side,
        from: u64,
        to: u64,
    },
    /// The opponent refused the undo asked for just before.
    UndoDeclined {
        by: Side,
    },
    /// Events `from..=to` were taken back with the opponent's consent. `restored` is the
    /// position before `from`, rebuilt by replaying the log up to it when the undo was decided:
    /// `apply` puts it back, so a replay of the log reaches the same state as live play did,
    /// and a verifier checks it by replaying the same prefix.
    EventsUndone {
        requested_by: Side,
        consented_by: Side,
        from: u64,
        to: u64,
        restored: Box<crate::Game>,
    },
    /// A claim (or a unit that must hold WA) met enemy holders that are all concealed or
    /// dummies: their side must show a real unit among `holders` or forfeit (B9.324), and play
    /// waits for its answer. `how` is the moment of the claim, which stands if they forfeit.
    WallAdvantageChallenged {
        side: Side,
        holders: Vec<UnitId>,
        claimants: Vec<UnitId>,
        how: WaClaim,
    },
    /// Enemy units moved adjacent and attempt to claim WA while `side` still has hidden
    /// units: before their claim is settled, `side` may place a hidden unit on board and claim
    /// WA first (B9.324), or let the moment pass; play waits for its answer.
    WallAdvantageHipWindowOffered {
        side: Side,
        claimants: Vec<UnitId>,
        how: WaClaim,
    },
    /// Units paid the rest of the shellholes' cost in their hex: they have the +1 TEM even
    /// against Defensive First Fire (B2).
    ShellholeCoverTaken {
        units: Vec<UnitId>,
        mf: Vec<MfAccount>,
    },
    /// Units spent their whole MF allotment at once: going down a Manhole (B8.4) or into a
    /// tunnel (B8.61). Logged before the entry itself, so the state shows every MF gone.
    AllMfSpent {
        units: Vec<UnitId>,
        rule: String,
        mf: Vec<MfAccount>,
    },
    /// Broken units routed through their side's tunnel in the RtPh: in at `from`, out at `to`,
    /// not concealed (B8.62).
    UnitsRoutedThroughTunnel {
        units: Vec<UnitId>,
        side: Side,
        from: Hex,
        to: Hex,
    },
    /// A broken unit routed into the adjacent `to` in the RtPh, paying `cost` out of its six
    /// rout MF (A10.5). `interdiction_by`: the Known Good Order enemies that have it in Open
    /// Ground in their LOS and normal range there, who may Interdict it (A10.53); whether they
    /// do, and the check that follows, are the players' to settle.
    UnitRouted {
        unit: UnitId,
        from: Hex,
        to: Hex,
        cost: MoveCost,
        mf: MfAccount,
        interdiction_by: Vec<UnitId>,
    },
    /// A broken unit that had to rout and could not rout a hex, eliminated for Failure to Rout
    /// as its side's RtPh step ended (A10.5). `next_to`: the Known unbroken enemy it was
    /// ADJACENT to, for whom A20.21 may have it surrender instead (left to the players).
    UnitFailedToRout {
        unit: UnitId,
        next_to: Option<UnitId>,
    },
    /// A broken unit that had to rout could not rout a hex as its side's RtPh step ended, and
    /// one of its ways was refused as not modelled (`rule`, `why`): whether it fails to rout
    /// is the players' to adjudicate (A10.5).
    RoutLeftToPlayers {
        unit: UnitId,
        rule: String,
        why: String,
    },
    /// A side claims the use of the tunnel entrance at `entrance` happened in `unit`'s LOS
    /// (B8.63); the engine traces no LOS, so the opponent may dispute it like an adjudication.
    TunnelUseSeen {
        by: Side,
        unit: UnitId,
        entrance: Hex,
    },
    /// A unit searched its Location by the recovery procedure of A4.44 and discovered the tunnel
    /// entrance there (B8.63).
    TunnelEntranceDiscovered {
        by: Side,
        unit: UnitId,
        entrance: Hex,
        mf: MfAccount,
    },
    /// The enemy tunnel entrance at `entrance` was used in the LOS of these units of `by`, as
    /// the engine traced it from each to the entrance Location (B8.63). Only `by` receives it:
    /// it says which of its own units see that hex, nothing more.
    TunnelUseSighted {
        by: Side,
        entrance: Hex,
        units: Vec<UnitId>,
    },
    /// Events `from..=to` were taken back with the opponent's consent: the position is the one
    /// before `from` again. The event names the version to return to and carries no position
    /// (as [`Event::EventsUndone`], its older form, did: a whole position per undo): `apply`
    /// rebuilds it from the position after the last event no undo reaches back across and the
    /// events since ([`crate::UndoTrail`]), live and in replay alike. A viewer receives it
    /// as an `EventsUndone` carrying its own projection of that position.
    EventsUndoneTo {
        requested_by: Side,
        consented_by: Side,
        from: u64,
        to: u64,
    },
    /// A unit of the side setting up was placed in a hex of its set-up area, with what it
    /// possesses (A12.12). Until set-up ends it is out of the other side's sight, so only its
    /// own side receives this; placing a unit again moves it.
    UnitSetUp {
        unit: Box<crate::Unit>,
        weapons: Vec<crate::Weapon>,
        /// It will stay hidden (HIP, A12.3) when set-up ends.
        hip: bool,
    },
    /// A unit placed in set-up was taken back off the map, with what it possesses, to be set
    /// up again; only its own side receives this.
    UnitSetUpLifted {
        unit: UnitId,
    },
    /// A side declared its set-up done; the next side in the scenario's order sets up, if any.
    SetupDone {
        side: Side,
    },
    /// Both sides have set up: every unit set up is revealed to the other side as the map
    /// shows it — under its "?" if concealed, not at all if HIP — and Turn 1 begins. As a
    /// viewer receives it, it holds only the units that viewer now sees, in map order.
    SetupEnded {
        units: Vec<crate::Unit>,
    },
    /// Units entered the map from off board along their scenario edge into `hex`, paying its
    /// entry cost from an off-board Open Ground hex (A2.51), with what they possess.
    UnitsEntered {
        units: Vec<crate::Unit>,
        weapons: Vec<crate::Weapon>,
        hex: Hex,
        cost: MoveCost,
        mf: Vec<MfAccount>,
    },
    // The players' clocks (`crate::timing`, `docs/clock.md`). Each carries the server's
    // time `at` (milliseconds since the Unix epoch) and what it charged the running clock.
    /// The game is played under a time control: the server's own event, right after
    /// `GameCreated`. The side to act's clock starts running at `at`.
    ClockStarted {
        control: board::time_control::TimeControl,
        at: u64,
    },
    /// The side the game waits on changed: `charged` is what the handing side's clock used,
    /// `added` what the time control gives it for handing over, and `to` the side whose
    /// clock runs now (`None`: the game is over and the clocks stop). The server's own event,
    /// in the batch of the command that handed over.
    ClockHandedOver {
        at: u64,
        charged: crate::timing::Charge,
        added: u64,
        to: Option<Side>,
    },
    /// `side`'s clock ran out: its bank is empty. Nothing happens by itself: the opponent may
    /// claim the game or give time. The server's own event.
    ClockExpired {
        side: Side,
        at: u64,
        charged: crate::timing::Charge,
    },
    /// `by` claimed the game on time: the opponent's clock had run out. The game is over.
    ClaimedOnTime {
        by: Side,
        at: u64,
    },
    /// `by` gave its opponent `to` this much time; a clock that had run out runs again.
    TimeGiven {
        by: Side,
        to: Side,
        time: u64,
        at: u64,
        charged: Option<crate::timing::Charge>,
    },
    /// `side` paused its clock with its vacation: while on vacation its clock takes from the
    /// vacation left before its bank.
    VacationStarted {
        side: Side,
        at: u64,
        charged: Option<crate::timing::Charge>,
    },
    /// `side` came back from vacation: its clock takes from its bank again.
    VacationEnded {
        side: Side,
        at: u64,
        charged: Option<crate::timing::Charge>,
    },
    /// The engine does not resolve `by`'s attack on `target` by the rules (A7): `why` names
    /// what in it the engine does not model, under `rule`. The players enter its outcome with
    /// `adjudicate`, as for every attack before the engine read the IFT.
    AttackLeftToPlayers {
        by: Side,
        target: Hex,
        rule: String,
        why: String,
    },
    /// `by`'s Defensive First Fire (A8.1, A8.3, A8.31) on the moving stack in `hex` left
    /// Residual FP there for the rest of the MPh (A8.2): half the IFT column the attack was
    /// read on, after any Cowering. `None` when the engine does not rule how much (an attack
    /// it left to the players, one read on the 1 column, or one through a Hindrance): the
    /// players determine it. Only one stays in a Location, the stronger; both sides see it.
    ResidualFpLeft {
        by: Side,
        hex: Hex,
        fp: Option<u8>,
    },
    /// `by`'s attack on `target` read on the IFT (A7.3), after the `DiceRolled` that holds its
    /// dice and DRMs: the FP total as printed (fractions kept, A7.2), the column read (moved
    /// left when the fire cowered, A7.9), the Final DR and the chart's result as printed
    /// (`1KIA`, `K/2`, `3MC`, `NMC`, `PTC`, `NE`). Its effects follow from `rules::morale` (`FireEffectApplied`, `FireEffectLeftToPlayers`).
    IftAttackResolved {
        by: Side,
        target: Hex,
        fp: String,
        column: u8,
        cowered: bool,
        final_dr: i16,
        result: String,
    },
    /// An effect on one unit the rules applied from a roll of their own (`rules::morale`):
    /// broken by a failed MC (A10.1), pinned by a failed PTC (A7.8), rallied (A10.6). `why`
    /// gives the check's figures; its roll is the `DiceRolled` before it.
    FireEffectApplied {
        unit: UnitId,
        outcome: Outcome,
        rule: String,
        why: String,
    },
    /// Part of an engine-read IFT result's or rally's effects the engine does not rule on,
    /// asked of the players at the point it arises (Random Selection, Casualty Reduction,
    /// Heat of Battle, ELR, Leader Loss, Fate …): for `unit`, or for the attack's units as a
    /// whole.
    FireEffectLeftToPlayers {
        target: Hex,
        unit: Option<UnitId>,
        rule: String,
        why: String,
    },
    /// Broken units came under Desperation Morale (A10.62): the DM counter both sides see,
    /// which adds +4 to their rally DR and lets them rout. `why` says which of A10.62's
    /// occasions it was (broke, attacked while broken, a Known armed enemy ADJACENT, the RtPh
    /// begun in Open Ground).
    DesperationMoraleMarked {
        units: Vec<UnitId>,
        why: String,
    },
    /// Units left Desperation Morale (A10.62): at the end of the RPh where no Known armed
    /// enemy is ADJACENT, or because they are no longer broken.
    DesperationMoraleRemoved {
        units: Vec<UnitId>,
        why: String,
    },
    /// A broken unit attempted to rally (A10.6), led by `leader` or self-rallying (A10.63):
    /// its one attempt of the Player Turn. The `DiceRolled` after it holds the DR and DRMs;
    /// a success follows as a `FireEffectApplied` (Rally).
    RallyAttempted {
        unit: UnitId,
        leader: Option<UnitId>,
    },
    // New variants go last: logs are encoded by variant index.
    /// Units held in Melee in `from` that attempted to withdraw (A11.2) came out of the CC
    /// whole and entered the ADJACENT Location of `to`: they are in Melee no longer. `cx`
    /// are those the entry made CX, as an advance there would (A4.72).
    UnitsWithdrew {
        units: Vec<UnitId>,
        from: Hex,
        to: Hex,
        cx: Vec<UnitId>,
    },
    /// The ATTACKER designated these units Opportunity Firers in his PFPh (A7.25, A3.2): the
    /// Bounding Fire counter both sides see. They do not move in the MPh (A3.3) and fire in
    /// the AFPh without Advancing Fire's halving (A7.24) or Assault Fire's bonus (A7.36).
    OpportunityFireMarked {
        units: Vec<UnitId>,
    },
    /// The engine's Casualty Reduction of a squad whose counter names its half-squad (A7.302,
    /// `Game::half_squad`): it is that half-squad now, `half_squad` its ratings, so what
    /// follows (the K/#'s #MC) is ruled on them. A squad whose half-squad is not known is
    /// reduced by `FireEffectApplied` instead, and the players enter the ratings.
    SquadReduced {
        unit: UnitId,
        half_squad: String,
        rule: String,
        why: String,
    },
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
    /// Whether the game is over after this event: its last step ended, a side conceded, or
    /// both agreed to end it.
    pub fn ends_game(&self) -> bool {
        matches!(
            self,
            Event::GameEnded { .. }
                | Event::Conceded { .. }
                | Event::EndAgreed { .. }
                | Event::ClaimedOnTime { .. }
        )
    }

    /// The short name used in logs and the readable game record.
    pub fn name(&self) -> &'static str {
        match self {
            Event::GameCreated { .. } => "GameCreated",
            Event::StepEnded { .. } => "StepEnded",
            Event::StepPassed { .. } => "StepPassed",
            Event::GameEnded { .. } => "GameEnded",
            Event::Conceded { .. } => "Conceded",
            Event::EndProposed { .. } => "EndProposed",
            Event::EndAgreed { .. } => "EndAgreed",
            Event::UnitMoved { .. } => "UnitMoved",
            Event::UnitAdvanced { .. } => "UnitAdvanced",
            Event::MeleeRecorded { .. } => "MeleeRecorded",
            Event::AmbushChecked { .. } => "AmbushChecked",
            Event::CloseCombatDesignated { .. } => "CloseCombatDesignated",
            Event::UnitsWithdrew { .. } => "UnitsWithdrew",
            Event::UnitBypassed { .. } => "UnitBypassed",
            Event::DoubleTimeDeclared { .. } => "DoubleTimeDeclared",
            Event::AssaultMovementDeclared { .. } => "AssaultMovementDeclared",
            Event::WeaponPickedUp { .. } => "WeaponPickedUp",
            Event::WeaponDropped { .. } => "WeaponDropped",
            Event::WallAdvantageClaimed { .. } => "WallAdvantageClaimed",
            Event::WallAdvantageForfeited { .. } => "WallAdvantageForfeited",
            Event::WallAdvantageDenied { .. } => "WallAdvantageDenied",
            Event::UnitsMomentarilyRevealed { .. } => "UnitsMomentarilyRevealed",
            Event::WallAdvantageChanceOffered { .. } => "WallAdvantageChanceOffered",
            Event::WallAdvantageChanceDeclined { .. } => "WallAdvantageChanceDeclined",
            Event::AttackDeclared { .. } => "AttackDeclared",
            Event::WeaponMalfunctioned { .. } => "WeaponMalfunctioned",
            Event::MultipleRofRetained { .. } => "MultipleRofRetained",
            Event::WeaponRepairAttempted { .. } => "WeaponRepairAttempted",
            Event::AttackResolved { .. } => "AttackResolved",
            Event::AttackLeftToPlayers { .. } => "AttackLeftToPlayers",
            Event::ResidualFpLeft { .. } => "ResidualFpLeft",
            Event::IftAttackResolved { .. } => "IftAttackResolved",
            Event::FireEffectApplied { .. } => "FireEffectApplied",
            Event::SquadReduced { .. } => "SquadReduced",
            Event::OpportunityFireMarked { .. } => "OpportunityFireMarked",
            Event::DesperationMoraleMarked { .. } => "DesperationMoraleMarked",
            Event::DesperationMoraleRemoved { .. } => "DesperationMoraleRemoved",
            Event::FireEffectLeftToPlayers { .. } => "FireEffectLeftToPlayers",
            Event::RallyAttempted { .. } => "RallyAttempted",
            Event::HiddenUnitPlaced { .. } => "HiddenUnitPlaced",
            Event::UnitEntryBlocked { .. } => "UnitEntryBlocked",
            Event::DiceRolled { .. } => "DiceRolled",
            Event::UnitsEnteredSewer { .. } => "UnitsEnteredSewer",
            Event::SewerEntryFailed { .. } => "SewerEntryFailed",
            Event::SewerStackMoved { .. } => "SewerStackMoved",
            Event::SewerStackLost { .. } => "SewerStackLost",
            Event::SewerEmergenceRolled { .. } => "SewerEmergenceRolled",
            Event::UnitsSurfaced { .. } => "UnitsSurfaced",
            Event::UnitsEnteredTunnel { .. } => "UnitsEnteredTunnel",
            Event::TunnelDestroyed { .. } => "TunnelDestroyed",
            Event::ManholeDeclaredUnseen { .. } => "ManholeDeclaredUnseen",
            Event::OutcomeAdjudicated { .. } => "OutcomeAdjudicated",
            Event::DiceCommitted { .. } => "DiceCommitted",
            Event::EntropyContributed { .. } => "EntropyContributed",
            Event::SeedRevealAgreed { .. } => "SeedRevealAgreed",
            Event::SeedRevealed { .. } => "SeedRevealed",
            Event::AdjudicationAccepted { .. } => "AdjudicationAccepted",
            Event::AdjudicationDisputed { .. } => "AdjudicationDisputed",
            Event::UndoRequested { .. } => "UndoRequested",
            Event::UndoDeclined { .. } => "UndoDeclined",
            Event::EventsUndone { .. } => "EventsUndone",
            Event::WallAdvantageChallenged { .. } => "WallAdvantageChallenged",
            Event::WallAdvantageHipWindowOffered { .. } => "WallAdvantageHipWindowOffered",
            Event::ShellholeCoverTaken { .. } => "ShellholeCoverTaken",
            Event::AllMfSpent { .. } => "AllMfSpent",
            Event::UnitsRoutedThroughTunnel { .. } => "UnitsRoutedThroughTunnel",
            Event::UnitRouted { .. } => "UnitRouted",
            Event::UnitFailedToRout { .. } => "UnitFailedToRout",
            Event::RoutLeftToPlayers { .. } => "RoutLeftToPlayers",
            Event::TunnelUseSeen { .. } => "TunnelUseSeen",
            Event::TunnelEntranceDiscovered { .. } => "TunnelEntranceDiscovered",
            Event::TunnelUseSighted { .. } => "TunnelUseSighted",
            Event::EventsUndoneTo { .. } => "EventsUndone",
            Event::UnitSetUp { .. } => "UnitSetUp",
            Event::UnitSetUpLifted { .. } => "UnitSetUpLifted",
            Event::SetupDone { .. } => "SetupDone",
            Event::SetupEnded { .. } => "SetupEnded",
            Event::UnitsEntered { .. } => "UnitsEntered",
            Event::ClockStarted { .. } => "ClockStarted",
            Event::ClockHandedOver { .. } => "ClockHandedOver",
            Event::ClockExpired { .. } => "ClockExpired",
            Event::ClaimedOnTime { .. } => "ClaimedOnTime",
            Event::TimeGiven { .. } => "TimeGiven",
            Event::VacationStarted { .. } => "VacationStarted",
            Event::VacationEnded { .. } => "VacationEnded",
        }
    }

    /// The server's time a clock event carries; `None` for every other event.
    pub fn clock_at(&self) -> Option<u64> {
        match self {
            Event::ClockStarted { at, .. }
            | Event::ClockHandedOver { at, .. }
            | Event::ClockExpired { at, .. }
            | Event::ClaimedOnTime { at, .. }
            | Event::TimeGiven { at, .. }
            | Event::VacationStarted { at, .. }
            | Event::VacationEnded { at, .. } => Some(*at),
            _ => None,
        }
    }

    /// Whether the server records this event in its own name, not the commanding side's:
    /// the clock's hand-overs and expiry follow from time, not from a side's choice.
    pub fn is_servers_clock(&self) -> bool {
        matches!(
            self,
            Event::ClockHandedOver { .. } | Event::ClockExpired { .. }
        )
    }

    /// The MF accounts this event carries (moves, Bypass, Double Time, recovery).
    pub fn accounts(&self) -> &[MfAccount] {
        match self {
            Event::UnitMoved { mf, .. }
            | Event::UnitBypassed { mf, .. }
            | Event::UnitEntryBlocked { mf, .. }
            | Event::DoubleTimeDeclared { mf, .. }
            | Event::ShellholeCoverTaken { mf, .. }
            | Event::UnitsEntered { mf, .. }
            | Event::AllMfSpent { mf, .. } => mf,
            Event::WeaponPickedUp { mf, .. }
            | Event::TunnelEntranceDiscovered { mf, .. }
            | Event::UnitRouted { mf, .. } => std::slice::from_ref(mf),
            _ => &[],
        }
    }

    /// Units this event tells about; a viewer who may not see one of them may not see the event.
    pub fn units(&self) -> Vec<&UnitId> {
        match self {
            Event::UnitMoved { units, .. }
            | Event::UnitAdvanced { units, .. }
            | Event::UnitsWithdrew { units, .. }
            | Event::UnitBypassed { units, .. }
            | Event::UnitEntryBlocked { units, .. }
            | Event::WallAdvantageClaimed { units, .. }
            | Event::WallAdvantageForfeited { units, .. }
            | Event::WallAdvantageDenied { units, .. }
            | Event::UnitsMomentarilyRevealed { units }
            | Event::WallAdvantageChanceOffered { units, .. }
            | Event::WallAdvantageHipWindowOffered {
                claimants: units, ..
            }
            | Event::DoubleTimeDeclared { units, .. }
            | Event::AssaultMovementDeclared { units }
            | Event::ShellholeCoverTaken { units, .. }
            | Event::AllMfSpent { units, .. }
            | Event::UnitsRoutedThroughTunnel { units, .. }
            | Event::DesperationMoraleMarked { units, .. }
            | Event::DesperationMoraleRemoved { units, .. }
            | Event::OpportunityFireMarked { units }
            | Event::TunnelUseSighted { units, .. } => units.iter().collect(),
            Event::AttackDeclared { firers, .. } => firers.iter().collect(),
            Event::WeaponMalfunctioned { holder, .. }
            | Event::MultipleRofRetained { holder, .. }
            | Event::WeaponRepairAttempted { holder, .. } => vec![holder],
            Event::CloseCombatDesignated {
                attacks,
                withdrawals,
                ..
            } => attacks
                .iter()
                .flat_map(|a| a.attackers.iter().chain(&a.defenders))
                .chain(withdrawals.iter().flat_map(|w| &w.units))
                .collect(),
            Event::WallAdvantageChallenged {
                holders, claimants, ..
            } => holders.iter().chain(claimants).collect(),
            Event::OutcomeAdjudicated { unit, .. }
            | Event::FireEffectApplied { unit, .. }
            | Event::SquadReduced { unit, .. }
            | Event::TunnelUseSeen { unit, .. }
            | Event::TunnelEntranceDiscovered { unit, .. }
            | Event::WeaponPickedUp { unit, .. }
            | Event::WeaponDropped { unit, .. }
            | Event::UnitSetUpLifted { unit }
            | Event::RoutLeftToPlayers { unit, .. } => vec![unit],
            Event::UnitSetUp { unit, .. } => vec![&unit.id],
            Event::UnitRouted {
                unit,
                interdiction_by,
                ..
            } => std::iter::once(unit).chain(interdiction_by).collect(),
            Event::UnitFailedToRout { unit, next_to } => {
                std::iter::once(unit).chain(next_to).collect()
            }
            Event::FireEffectLeftToPlayers {
                unit: Some(unit), ..
            } => vec![unit],
            Event::RallyAttempted { unit, leader } => std::iter::once(unit).chain(leader).collect(),
            _ => vec![],
        }
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

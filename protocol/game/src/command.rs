//! Commands: what a player asks for, in the imperative. A command is only a request; `decide`
//! turns it into events or refuses it with the rule that forbids it.

use board::hex::Hex;
use board::scenario::UnitId;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Command {
    /// The acting side is finished with the current step of the sequence of play.
    Done,
    /// Move a unit, or a stack moving together, one hex (A4). Each step is its own command so
    /// that every MF expenditure is a separate, reviewable event.
    Move { units: Vec<UnitId>, to: Hex },
    /// Advance a unit, or a stack together, one Location into an adjacent hex in the APh
    /// (A4.7); a Location holding enemy units may be entered.
    Advance { units: Vec<UnitId>, to: Hex },
    /// The CC in `hex` is over and units of both sides remain there: they are in Melee
    /// (A11.7). The ATTACKER records it; the CCPh does not end while a Location holding both
    /// sides has neither been cleared of one side nor had its Melee recorded.
    Melee { hex: Hex },
    /// Designate all of this side's CC attacks in the Location of `hex` (A11.12): the
    /// ATTACKER first, then the DEFENDER, whose designation resolves the CC by the rules
    /// (A11.11). `withdrawals`: the side's units held in Melee there that attempt to
    /// withdraw instead of attacking (A11.2), declared with its attacks. `no_ambush`: the
    /// ATTACKER's word that the players' Ambush check (A11.4) in a Location units advanced
    /// into found none.
    CloseCombat {
        hex: Hex,
        attacks: Vec<CcAttack>,
        #[serde(default)]
        withdrawals: Vec<CcWithdrawal>,
        #[serde(default)]
        no_ambush: bool,
    },
    /// Move in Bypass (A4.3): enter `hex` (or go on around it) along the hexsides named by the
    /// hexes across them, in order, without entering its woods/building obstacle.
    Bypass {
        units: Vec<UnitId>,
        hex: Hex,
        along: Vec<Hex>,
    },
    /// Declare Double Time: +1 MF for the rest of the MPh, and the units become CX (A4.5).
    DoubleTime { units: Vec<UnitId> },
    /// Declare Assault Movement before the units spend any MF: each enters one Location this
    /// MPh and keeps at least one MF, and First Fire at them takes no FFNAM (A4.61, A4.6).
    AssaultMove { units: Vec<UnitId> },
    /// Recover an unpossessed support weapon in the unit's Location (A4.44).
    PickUp { unit: UnitId, weapon: String },
    /// Drop possession of a support weapon (A4.43).
    Drop { unit: UnitId, weapon: String },
    /// Claim Wall Advantage for these units of one Location (B9.32, B9.322).
    ClaimWallAdvantage { units: Vec<UnitId> },
    /// Give up Wall Advantage (B9.322); not for units that must hold it (B9.323).
    ForfeitWallAdvantage { units: Vec<UnitId> },
    /// Let a chance to claim WA pass (answering `WallAdvantageChanceOffered`).
    DeclineWallAdvantage,
    /// Declare fire against a hex. Until it is resolved, no WA in the target hex changes
    /// (B9.322); the outcome is entered with `Adjudicate`.
    DeclareAttack {
        firers: Vec<UnitId>,
        target: Hex,
        /// At the units in the sewer beneath `target` rather than those in it (B8.3).
        into_sewer: bool,
    },
    /// The declared attack is over.
    ResolveAttack,
    /// Place a hidden unit on board, concealed (A12.3), claiming WA at that moment if asked
    /// (B9.322).
    PlaceHidden {
        unit: UnitId,
        claim_wall_advantage: bool,
    },
    /// Sewer movement (B8.41): from a Manhole Location (entering, B8.4) or from a sewer
    /// Location, to the sewer beneath the Manhole `to` — unless the stack gets lost, when the
    /// DEFENDER designates where it goes.
    SewerMove { units: Vec<UnitId>, to: Hex },
    /// The DEFENDER's choice of where a lost sewer stack goes (B8.41).
    DesignateSewer { to: Hex },
    /// Come up from a sewer (after an Emergence dr ≤ 4) or out of a tunnel in the APh,
    /// concealed (B8.42, B8.61).
    Surface { units: Vec<UnitId> },
    /// Enter one's own tunnel at this entrance for all MF, to come out at the other (B8.61).
    EnterTunnel { units: Vec<UnitId> },
    /// Destroy a known tunnel entrance at the end of the CCPh (B8.63).
    DestroyTunnel { entrance: Hex },
    /// Declare a road Manhole out of Known enemy LOS for the Sewer Emergence drm (B8.42).
    DeclareManholeUnseen { hex: Hex },
    /// Enter an outcome the engine does not compute (an attack broke or eliminated a unit).
    /// Logged with who entered it, for the opponent to see and dispute.
    Adjudicate {
        unit: UnitId,
        outcome: Outcome,
        note: String,
    },
    // Dispute review (`docs/dice.md`, `docs/review.md`): decided by `record::dispute::decide`,
    // which reads the game's log as well as its position.
    /// Add this side's random nonce to the dice key (once per seed); either side, any time.
    ContributeEntropy { nonce: crate::dice::Nonce },
    /// Agree that the server reveal its dice seed now; once both sides have, it does, and
    /// commits to a fresh one for the rest of the game.
    AgreeToRevealSeed,
    /// Accept the opponent's adjudication, logged as event `event`.
    AcceptAdjudication { event: u64 },
    /// Dispute the opponent's adjudication `event`, saying why.
    DisputeAdjudication { event: u64, reason: String },
    /// Ask to take back this side's last events, from event `from` on (the first event of one
    /// of its commands): only the side to act, not past a die roll, a reveal of hidden
    /// information or a change of the side to act, and only if the opponent consents.
    RequestUndo { from: u64 },
    /// Consent to the undo the opponent has just asked for.
    ConsentToUndo,
    /// Refuse the undo the opponent has just asked for.
    DeclineUndo,
    // Ending the game before its last turn (`rules::end`).
    /// Give the game up: it ends now, lost for this side.
    Concede,
    /// Offer to end the game where it stands; the opponent's `AcceptEnd` ends it.
    ProposeEnd,
    /// Accept the opponent's standing offer to end the game.
    AcceptEnd,
    /// Answer a challenge to a concealed stack's WA (B9.324) by showing this unit, a real one,
    /// for a moment; the other answer is to forfeit (`ForfeitWallAdvantage`).
    ShowForWallAdvantage { unit: UnitId },
    /// Pay the rest of the shellholes' cost for units that entered them at Open Ground cost
    /// this MPh, so that they have their +1 TEM even against Defensive First Fire (B2).
    TakeShellholeCover { units: Vec<UnitId> },
    /// Rout broken units through their side's tunnel in the RtPh: in at the entrance they hold,
    /// out at the other (B8.62). Other routs are adjudicated.
    RoutThroughTunnel { units: Vec<UnitId> },
    /// Rout one broken unit one hex in the RtPh, into the adjacent `to` (A10.5, A10.51): six
    /// MF, never toward a Known enemy unit, one unit at a time. `morale`: the morale on the
    /// counter's broken side, which its ratings do not carry and a broken unit checks against
    /// (A10.4); needed only where the step is Interdicted (A10.53), whose NMC the engine rolls.
    Rout {
        unit: UnitId,
        to: Hex,
        #[serde(default)]
        morale: Option<u8>,
    },
    /// Claim that the use of the tunnel entrance `entrance` happened in `unit`'s LOS (B8.63); a
    /// declaration the opponent may dispute, since the engine traces no LOS.
    ClaimTunnelSeen { unit: UnitId, entrance: Hex },
    /// Search the unit's Location for the tunnel entrance there by the recovery procedure of
    /// A4.44, in the MPh (B8.63).
    DiscoverTunnel { unit: UnitId },
    /// Attempt to rally a broken unit in the RPh (A10.6): led by `leader`, a Good Order
    /// leader of its Location, or without one a broken leader's self-rally (A10.63). The
    /// counter's broken side carries a morale its ratings do not, so the player gives it
    /// (`broken_morale`); `desperation` says the unit is under Desperation Morale (A10.62),
    /// which the engine does not track.
    Rally {
        unit: UnitId,
        broken_morale: u8,
        leader: Option<UnitId>,
        desperation: bool,
    },
    /// Try to repair a malfunctioned support weapon in the RPh (A9.72): a dr through the dice
    /// by the unit possessing it.
    RepairWeapon { weapon: String },
    /// Roll a dr or DR through the referee, under the dice commitment, for a purpose the
    /// engine does not roll for itself (fire, morale, Close Combat…); `other` needs a note.
    Roll {
        dice: DiceCount,
        purpose: crate::dice::RollPurpose,
        note: String,
    },
    /// `Adjudicate`, citing the roll it follows (`DiceRolled` event `roll`): checked against
    /// the log, and named in the adjudication's note.
    AdjudicateAfterRoll {
        unit: UnitId,
        outcome: Outcome,
        roll: u64,
        note: String,
    },
    /// In the set-up step, place a unit of one's own order of battle in a hex of one's set-up
    /// area, concealed (an OB "?", A12.12) and/or hidden (HIP by SSR, A12.3) where the scenario
    /// allows it; a unit placed already is moved. `Done` ends one's set-up.
    SetUp {
        unit: UnitId,
        hex: Hex,
        concealed: bool,
        hidden: bool,
        /// Support weapons of the side's order of battle that no unit possesses yet, given to
        /// this unit as it sets up (A4.43). Given to another unit before, they change hands;
        /// a unit set up again keeps only those named again.
        #[serde(default)]
        weapons: Vec<String>,
    },
    /// In the set-up step, take a unit one placed back off the map.
    LiftSetUp { unit: UnitId },
    /// Bring units waiting off board onto the map in their side's MPh, from their scenario
    /// edge into `to`, paying its entry cost (A2.51).
    Enter { units: Vec<UnitId>, to: Hex },
    // The players' clocks (`rules::timing`, `docs/clock.md`).
    /// Claim the game: the opponent's clock has run out.
    ClaimOnTime,
    /// Give the opponent this much time (milliseconds); a clock that ran out runs again.
    GiveTime { time: u64 },
    /// Pause this side's clock with its vacation days (correspondence play).
    StartVacation,
    /// Come back from vacation: this side's clock takes from its bank again.
    EndVacation,
    /// Record that the running clock has run out. The server sends it when its timer for
    /// the running clock fires; from anyone else it is decided the same way, so it is
    /// refused unless a clock has really run out.
    ExpireClock,
    /// Designate the ATTACKER's units as Opportunity Firers in the PFPh (A7.25, A3.2): they
    /// hold their fire instead of Prep Firing, do not move in the MPh (A3.3), and fire in the
    /// AFPh without Advancing Fire's halving (A7.24).
    MarkOpportunityFire { units: Vec<UnitId> },
    /// Transfer a support weapon from the unit possessing it to another unit of the side in its
    /// Location, in a RPh or at the start of the ATTACKER's APh (A4.431).
    TransferWeapon { weapon: String, to: UnitId },
    /// Rout one broken unit one hex in the RtPh, as `Rout` does, with a Good Order `leader` of
    /// its Location routing along (Voluntary Rout, A10.711): he joins it before its first
    /// step and goes with it every step after. Last among the variants: commands are stored
    /// by variant index and their fields in order, which `protocol/tests/golden.rs` pins; a
    /// new command goes after it, and a stored one's fields never change.
    RoutWithLeader {
        unit: UnitId,
        leader: UnitId,
        to: Hex,
        morale: Option<u8>,
    },
    /// Answer the chance of Infiltration in the CC Location of `hex` (A11.22): the units of
    /// `withdrawals` infiltrate out of the Close Combat to the Locations named, or none do
    /// (empty: declined), and its resolution goes on. Last among the variants, as above.
    Infiltrate {
        hex: Hex,
        withdrawals: Vec<CcWithdrawal>,
    },
}

impl Command {
    /// The command with every unit it names passed through `f`, in order: the one walk over
    /// the names a command gives, so a command added tomorrow is named here or does not
    /// compile (no `..` below).
    pub fn map_units(self, mut f: impl FnMut(UnitId) -> UnitId) -> Command {
        let mut all = |units: Vec<UnitId>| units.into_iter().map(&mut f).collect::<Vec<_>>();
        match self {
            Command::Move { units, to } => Command::Move {
                units: all(units),
                to,
            },
            Command::Advance { units, to } => Command::Advance {
                units: all(units),
                to,
            },
            Command::CloseCombat {
                hex,
                attacks,
                withdrawals,
                no_ambush,
            } => Command::CloseCombat {
                hex,
                attacks: attacks
                    .into_iter()
                    .map(
                        |CcAttack {
                             attackers,
                             defenders,
                         }| CcAttack {
                            attackers: all(attackers),
                            defenders: all(defenders),
                        },
                    )
                    .collect(),
                withdrawals: withdrawals_mapped(withdrawals, &mut all),
                no_ambush,
            },
            Command::Infiltrate { hex, withdrawals } => Command::Infiltrate {
                hex,
                withdrawals: withdrawals_mapped(withdrawals, &mut all),
            },
            Command::Bypass { units, hex, along } => Command::Bypass {
                units: all(units),
                hex,
                along,
            },
            Command::DoubleTime { units } => Command::DoubleTime { units: all(units) },
            Command::AssaultMove { units } => Command::AssaultMove { units: all(units) },
            Command::PickUp { unit, weapon } => Command::PickUp {
                unit: f(unit),
                weapon,
            },
            Command::Drop { unit, weapon } => Command::Drop {
                unit: f(unit),
                weapon,
            },
            Command::ClaimWallAdvantage { units } => {
                Command::ClaimWallAdvantage { units: all(units) }
            }
            Command::ForfeitWallAdvantage { units } => {
                Command::ForfeitWallAdvantage { units: all(units) }
            }
            Command::DeclareAttack {
                firers,
                target,
                into_sewer,
            } => Command::DeclareAttack {
                firers: all(firers),
                target,
                into_sewer,
            },
            Command::PlaceHidden {
                unit,
                claim_wall_advantage,
            } => Command::PlaceHidden {
                unit: f(unit),
                claim_wall_advantage,
            },
            Command::SewerMove { units, to } => Command::SewerMove {
                units: all(units),
                to,
            },
            Command::Surface { units } => Command::Surface { units: all(units) },
            Command::EnterTunnel { units } => Command::EnterTunnel { units: all(units) },
            Command::Adjudicate {
                unit,
                outcome,
                note,
            } => Command::Adjudicate {
                unit: f(unit),
                outcome,
                note,
            },
            Command::ShowForWallAdvantage { unit } => {
                Command::ShowForWallAdvantage { unit: f(unit) }
            }
            Command::TakeShellholeCover { units } => {
                Command::TakeShellholeCover { units: all(units) }
            }
            Command::RoutThroughTunnel { units } => {
                Command::RoutThroughTunnel { units: all(units) }
            }
            Command::Rout { unit, to, morale } => Command::Rout {
                unit: f(unit),
                to,
                morale,
            },
            Command::ClaimTunnelSeen { unit, entrance } => Command::ClaimTunnelSeen {
                unit: f(unit),
                entrance,
            },
            Command::DiscoverTunnel { unit } => Command::DiscoverTunnel { unit: f(unit) },
            Command::Rally {
                unit,
                broken_morale,
                leader,
                desperation,
            } => Command::Rally {
                unit: f(unit),
                broken_morale,
                leader: leader.map(&mut f),
                desperation,
            },
            Command::AdjudicateAfterRoll {
                unit,
                outcome,
                roll,
                note,
            } => Command::AdjudicateAfterRoll {
                unit: f(unit),
                outcome,
                roll,
                note,
            },
            Command::SetUp {
                unit,
                hex,
                concealed,
                hidden,
                weapons,
            } => Command::SetUp {
                unit: f(unit),
                hex,
                concealed,
                hidden,
                weapons,
            },
            Command::LiftSetUp { unit } => Command::LiftSetUp { unit: f(unit) },
            Command::Enter { units, to } => Command::Enter {
                units: all(units),
                to,
            },
            Command::MarkOpportunityFire { units } => {
                Command::MarkOpportunityFire { units: all(units) }
            }
            Command::TransferWeapon { weapon, to } => Command::TransferWeapon { weapon, to: f(to) },
            Command::RoutWithLeader {
                unit,
                leader,
                to,
                morale,
            } => Command::RoutWithLeader {
                unit: f(unit),
                leader: f(leader),
                to,
                morale,
            },
            // Commands naming no unit.
            other @ (Command::Done
            | Command::Melee { .. }
            | Command::DeclineWallAdvantage
            | Command::ResolveAttack
            | Command::DesignateSewer { .. }
            | Command::DestroyTunnel { .. }
            | Command::DeclareManholeUnseen { .. }
            | Command::ContributeEntropy { .. }
            | Command::AgreeToRevealSeed
            | Command::AcceptAdjudication { .. }
            | Command::DisputeAdjudication { .. }
            | Command::RequestUndo { .. }
            | Command::ConsentToUndo
            | Command::DeclineUndo
            | Command::Concede
            | Command::ProposeEnd
            | Command::AcceptEnd
            | Command::RepairWeapon { .. }
            | Command::Roll { .. }
            | Command::ClaimOnTime
            | Command::GiveTime { .. }
            | Command::StartVacation
            | Command::EndVacation
            | Command::ExpireClock) => other,
        }
    }

    /// Whether this is one of the clock's own commands, decided by `rules::timing`.
    pub fn is_clock(&self) -> bool {
        matches!(
            self,
            Command::ClaimOnTime
                | Command::GiveTime { .. }
                | Command::StartVacation
                | Command::EndVacation
                | Command::ExpireClock
        )
    }
}

/// One CC attack of a designation (A11.12): these units of the designating side attack those
/// enemy units of the Location, their FP against the defenders' (A11.11).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CcAttack {
    pub attackers: Vec<UnitId>,
    pub defenders: Vec<UnitId>,
}

/// A withdrawal from Melee declared with a CC designation (A11.2): these units of the
/// designating side leave the Melee for the ADJACENT Location of `to` if the enemy's CC
/// attacks leave them whole.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CcWithdrawal {
    pub units: Vec<UnitId>,
    pub to: Hex,
}

/// One die (dr) or two (DR).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiceCount {
    Dr,
    #[serde(rename = "DR")]
    Two,
}

impl DiceCount {
    pub fn dice(self) -> usize {
        match self {
            DiceCount::Dr => 1,
            DiceCount::Two => 2,
        }
    }
}

/// Results of play that the engine records but does not compute (fire, morale).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The unit failed a Morale Check and broke.
    Break,
    /// A broken unit rallied back to Good Order.
    Rally,
    /// The unit is pinned until the end of the Player Turn.
    Pin,
    /// The unit is removed from play.
    Eliminate,
    /// A squad suffers Casualty Reduction and becomes a half-squad (A7.302); the note, when
    /// given, is the half-squad's ratings. Only a squad is reduced so: a half-squad or crew
    /// is eliminated instead, an SMC wounded (`Wound`, A17).
    Reduce,
    /// A counter the engine does not rule on (`UnitKind::Counter`: a vehicle, a Gun …) now
    /// stands in this hex: it moved, or was pushed, as the players rule.
    Relocate(Hex),
    /// A counter the engine does not rule on now reads as the note says (`PzKw IVH wreck`,
    /// `T-34 M43 immobilized`): what a counter flipped or marked shows.
    Relabel,
    /// An SMC survived a wound (its Wound Severity dr was minor, A17.11): it is marked
    /// wounded, with what that does (A17.2, A17.3). A mortal wound is `Eliminate`.
    Wound,
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Break => "break",
            Outcome::Rally => "rally",
            Outcome::Pin => "pin",
            Outcome::Eliminate => "eliminate",
            Outcome::Reduce => "reduce",
            Outcome::Relocate(_) => "relocate",
            Outcome::Relabel => "relabel",
            Outcome::Wound => "wound",
        }
    }

    /// The outcome in words, with its hex: `relocate to 3B4`.
    pub fn describe(self) -> String {
        match self {
            Outcome::Relocate(to) => format!("relocate to {to}"),
            other => other.name().to_string(),
        }
    }

    /// Whether it is for a counter the engine does not rule on only.
    pub fn for_counters_only(self) -> bool {
        matches!(self, Outcome::Relocate(_) | Outcome::Relabel)
    }

    pub fn parse(word: &str) -> Option<Outcome> {
        [
            Outcome::Break,
            Outcome::Rally,
            Outcome::Pin,
            Outcome::Eliminate,
            Outcome::Reduce,
            Outcome::Relabel,
            Outcome::Wound,
        ]
        .into_iter()
        .find(|o| o.name() == word)
    }
}

/// `withdrawals` with every unit renamed by `all`: one mapping for a CC designation's
/// withdrawals (A11.2) and an Infiltration's (A11.22).
fn withdrawals_mapped(
    withdrawals: Vec<CcWithdrawal>,
    all: &mut impl FnMut(Vec<UnitId>) -> Vec<UnitId>,
) -> Vec<CcWithdrawal> {
    withdrawals
        .into_iter()
        .map(|CcWithdrawal { units, to }| CcWithdrawal {
            units: all(units),
            to,
        })
        .collect()
}

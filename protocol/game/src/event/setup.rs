//! Set-up (A12.12) and hidden units placed on board (A12.3): units coming onto the map
//! out of the opponent's sight, and the moment set-up ends and shows them.

use board::scenario::Side;
use board::scenario::UnitId;
use serde::{Deserialize, Serialize};

/// A unit of the side setting up was placed in a hex of its set-up area, with what it
/// possesses (A12.12). Until set-up ends it is out of the other side's sight, so only its
/// own side receives this; placing a unit again moves it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitSetUp {
    pub unit: Box<crate::Unit>,
    pub weapons: Vec<crate::Weapon>,
    /// It will stay hidden (HIP, A12.3) when set-up ends.
    pub hip: bool,
}

/// A unit placed in set-up was taken back off the map, with what it possesses, to be set
/// up again; only its own side receives this.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitSetUpLifted {
    pub unit: UnitId,
}

/// A side declared its set-up done; the next side in the scenario's order sets up, if any.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetupDone {
    pub side: Side,
}

/// Both sides have set up: every unit set up is revealed to the other side as the map
/// shows it — under its "?" if concealed, not at all if HIP — and Turn 1 begins. As a
/// viewer receives it, it holds only the units that viewer now sees, in map order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetupEnded {
    pub units: Vec<crate::Unit>,
}

/// A hidden unit was placed on board, concealed (A12.3); its owner's opponent learns it
/// from this event, which therefore carries the unit and what it possesses.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HiddenUnitPlaced {
    pub unit: Box<crate::Unit>,
    pub weapons: Vec<crate::Weapon>,
}

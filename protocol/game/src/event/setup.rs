//! Set-up (A12.12) and hidden units placed on board (A12.3): units coming onto the map
//! out of the opponent's sight, and the moment set-up ends and shows them.

use super::Sides;
use super::{Event, Fact};

use crate::view::Names;
use crate::{Game, Unit, Viewer};
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

impl Fact for HiddenUnitPlaced {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        let HiddenUnitPlaced { unit, weapons } = self;
        // Placing a hidden unit answers a HIP window of its side (B9.324).
        if game
            .wa_hip_window
            .as_ref()
            .is_some_and(|w| w.side == unit.side)
        {
            game.wa_hip_window = None;
        }
        game.units.insert(unit.id.clone(), (**unit).clone());
        for w in weapons {
            game.weapons.insert(w.id.clone(), w.clone());
        }
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        // Its owner sees it as it is.
        if names.viewer == Viewer::Side(self.unit.side) {
            return self.into();
        }
        let HiddenUnitPlaced { unit, .. } = self;

        let mut shown = (*unit).clone();
        crate::mask_unit(&mut shown);
        shown.id = names.name(&unit.id);
        Event::HiddenUnitPlaced(HiddenUnitPlaced {
            unit: Box::new(shown),
            weapons: vec![],
        })
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let HiddenUnitPlaced { unit, .. } = self;
        format!(
            "{} placed a hidden unit on board in {}, concealed (A12.3)",
            name(unit.side),
            unit.hex
        )
    }
}

impl Fact for UnitSetUp {
    fn units(&self) -> Vec<&UnitId> {
        vec![&self.unit.id]
    }

    fn apply(&self, game: &mut Game) {
        let UnitSetUp { unit, weapons, hip } = self;
        game.weapons
            .retain(|_, w| w.held_by.as_ref() != Some(&unit.id));
        game.units.insert(unit.id.clone(), (**unit).clone());
        for w in weapons {
            game.weapons.insert(w.id.clone(), w.clone());
        }
        if let Some(turn) = &mut game.setup {
            if *hip {
                turn.hip.insert(unit.id.clone());
            } else {
                turn.hip.remove(&unit.id);
            }
        }
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let UnitSetUp { unit, hip, .. } = self;
        format!(
            "{} set up {} in {}{}{} (A12.12)",
            name(unit.side),
            unit.id,
            unit.hex,
            if unit.concealed { ", concealed" } else { "" },
            if *hip { ", hidden (HIP)" } else { "" }
        )
    }
}

impl Fact for UnitSetUpLifted {
    fn units(&self) -> Vec<&UnitId> {
        vec![&self.unit]
    }

    fn apply(&self, game: &mut Game) {
        let UnitSetUpLifted { unit } = self;
        game.units.remove(unit);
        game.weapons.retain(|_, w| w.held_by.as_ref() != Some(unit));
        if let Some(turn) = &mut game.setup {
            turn.hip.remove(unit);
        }
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let UnitSetUpLifted { unit } = self;
        format!("{unit} was taken back off the map to set up again")
    }
}

impl Fact for SetupDone {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        let SetupDone { side } = self;
        let order = game
            .scenario
            .setup
            .as_ref()
            .map(|s| s.setting_up())
            .unwrap_or_default();
        let next = order
            .iter()
            .position(|s| s == side)
            .and_then(|i| order.get(i + 1));
        if let (Some(turn), Some(next)) = (&mut game.setup, next) {
            turn.side = *next;
        }
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let SetupDone { side } = self;
        format!("{} has set up (A12.12)", name(*side))
    }
}

impl Fact for SetupEnded {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        let SetupEnded { units } = self;
        for unit in units {
            game.units.insert(unit.id.clone(), unit.clone());
        }
        game.setup = None;
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        // Set-up ends: each viewer receives the units it now sees, as the map shows them
        // (under "?" by their aliases; HIP ones not at all), in map order, so nothing in
        // the list's order says which unit is which.
        let v = names.viewer;
        let SetupEnded { units } = self;
        let mut shown: Vec<Unit> = units
            .iter()
            .filter(|u| names.after.units.get(&u.id).is_some_and(|a| v.sees_unit(a)))
            .map(|u| {
                let mut u = u.clone();
                if crate::view::masked(v, &u) {
                    u.id = names.name(&u.id);
                    crate::mask_unit(&mut u);
                }
                u
            })
            .collect();
        shown.sort_by(|a, b| (a.hex, &a.id).cmp(&(b.hex, &b.id)));
        Event::SetupEnded(SetupEnded { units: shown })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let SetupEnded { units } = self;
        format!(
            "set-up ended: {} unit(s) show on the map; Turn 1 begins",
            units.len()
        )
    }
}

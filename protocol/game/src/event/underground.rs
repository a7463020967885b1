//! Sewers (B8.4) and tunnels (B8.6): going down, moving and getting lost beneath the
//! board, coming up, and tunnels used, seen and found.

use super::MfAccount;
use super::{write_accounts, Sides};
use super::{Event, Fact};

use crate::view::Names;
use crate::{
    carry_weapons, keep_own_sightings, record_moved_weapons, reveal_tunnel, spend, Game,
    SewerDesignation, Underground,
};
use board::hex::Hex;
use board::scenario::Side;
use board::scenario::UnitId;
use serde::{Deserialize, Serialize};

/// The leader's 4TC failed: these units cannot enter the sewer this MPh (B8.4).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SewerEntryFailed {
    pub units: Vec<UnitId>,
}

/// Units went down a Manhole into the sewer beneath it, for all their MF (B8.4).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitsEnteredSewer {
    pub units: Vec<UnitId>,
    pub hex: Hex,
}

/// A sewer stack moved beneath another Manhole (B8.41); `designated_by` is the DEFENDER
/// when the stack was lost.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SewerStackMoved {
    pub units: Vec<UnitId>,
    pub from: Hex,
    pub to: Hex,
    pub designated_by: Option<Side>,
}

/// The stack is lost: the DEFENDER must say where it goes (B8.41).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SewerStackLost {
    pub units: Vec<UnitId>,
    pub at: Hex,
    pub defender: Side,
    pub options: Vec<Hex>,
}

/// The Sewer Emergence Chart's result for a stack (B8.42).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SewerEmergenceRolled {
    pub units: Vec<UnitId>,
    pub hex: Hex,
    pub result: crate::Emergence,
}

/// Sewer or tunnel units came up into their hex, concealed (B8.42, B8.61).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitsSurfaced {
    pub units: Vec<UnitId>,
    pub hex: Hex,
}

/// Units entered a tunnel for all their MF and wait beneath "Sewer?" at its other end
/// (B8.61); using it reveals the tunnel to the opponent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitsEnteredTunnel {
    pub units: Vec<UnitId>,
    pub side: Side,
    pub from: Hex,
    pub exit: Hex,
}

/// A tunnel entrance was destroyed (B8.63): the tunnel is gone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TunnelDestroyed {
    pub entrance: Hex,
}

/// The ATTACKER declared a road Manhole out of Known enemy LOS (or all of it Hindered
/// ≥ +2), for the Sewer Emergence drm (B8.42); the opponent may dispute it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManholeDeclaredUnseen {
    pub by: Side,
    pub hex: Hex,
}

/// Broken units routed through their side's tunnel in the RtPh: in at `from`, out at `to`,
/// not concealed (B8.62).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitsRoutedThroughTunnel {
    pub units: Vec<UnitId>,
    pub side: Side,
    pub from: Hex,
    pub to: Hex,
}

/// A side claims the use of the tunnel entrance at `entrance` happened in `unit`'s LOS
/// (B8.63); the engine traces no LOS, so the opponent may dispute it like an adjudication.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TunnelUseSeen {
    pub by: Side,
    pub unit: UnitId,
    pub entrance: Hex,
}

/// A unit searched its Location by the recovery procedure of A4.44 and discovered the tunnel
/// entrance there (B8.63).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TunnelEntranceDiscovered {
    pub by: Side,
    pub unit: UnitId,
    pub entrance: Hex,
    pub mf: MfAccount,
}

/// The enemy tunnel entrance at `entrance` was used in the LOS of these units of `by`, as
/// the engine traced it from each to the entrance Location (B8.63). Only `by` receives it:
/// it says which of its own units see that hex, nothing more.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TunnelUseSighted {
    pub by: Side,
    pub entrance: Hex,
    pub units: Vec<UnitId>,
}

impl Fact for SewerEntryFailed {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        let SewerEntryFailed { units } = self;
        game.movement
            .sewer_check_failed
            .extend(units.iter().cloned());
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let SewerEntryFailed { units } = self;
        Event::SewerEntryFailed(SewerEntryFailed {
            units: names.names(&units),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let SewerEntryFailed { units } = self;
        format!(
            "{} cannot enter the sewer this MPh: the leader's 4TC failed (B8.4)",
            units.join("+")
        )
    }
}

impl Fact for UnitsEnteredSewer {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        let UnitsEnteredSewer { units, hex } = self;
        game.movement.sewer_entries.insert(*hex);
        for id in units {
            if let Some(unit) = game.units.get_mut(id) {
                unit.underground = Some(Underground::Sewer {
                    lost: false,
                    moved: false,
                    emergence: None,
                });
                unit.concealed = true;
                unit.bypass = None;
            }
        }
        game.movement.finished.extend(units.iter().cloned());
        record_moved_weapons(game, units);
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let UnitsEnteredSewer { units, hex } = self;
        Event::UnitsEnteredSewer(UnitsEnteredSewer {
            units: names.names(&units),
            hex,
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let UnitsEnteredSewer { units, hex } = self;
        format!(
            "{} went down the Manhole in {hex} beneath \"Sewer?\", for all MF (B8.4)",
            units.join("+")
        )
    }
}

impl Fact for SewerStackMoved {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        let SewerStackMoved {
            units,
            to,
            designated_by,
            ..
        } = self;
        for id in units {
            if let Some(unit) = game.units.get_mut(id) {
                unit.hex = *to;
                if let Some(Underground::Sewer { moved, lost, .. }) = &mut unit.underground {
                    *moved = true;
                    // Moved by its owner, the stack is found again (B8.41).
                    *lost = designated_by.is_some();
                }
            }
        }
        carry_weapons(game, units, *to);
        game.sewer_designation = None;
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let SewerStackMoved {
            units,
            from,
            to,
            designated_by,
        } = self;
        Event::SewerStackMoved(SewerStackMoved {
            units: names.names(&units),
            from,
            to,
            designated_by,
        })
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let SewerStackMoved {
            units,
            from,
            to,
            designated_by,
        } = self;
        match designated_by {
            Some(d) => format!(
                "lost sewer stack {} moved from beneath {from} to beneath {to}, designated by the {} (B8.41)",
                units.join("+"),
                name(*d)
            ),
            None => format!(
                "sewer stack {} moved from beneath {from} to beneath {to} (B8.41)",
                units.join("+")
            ),
        }
    }
}

impl Fact for SewerStackLost {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        let SewerStackLost {
            units,
            at,
            defender,
            options,
        } = self;
        for id in units {
            if let Some(Underground::Sewer { lost, .. }) =
                game.units.get_mut(id).and_then(|u| u.underground.as_mut())
            {
                *lost = true;
            }
        }
        game.sewer_designation = Some(SewerDesignation {
            defender: *defender,
            units: units.clone(),
            from: *at,
            options: options.clone(),
        });
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let SewerStackLost {
            units,
            at,
            defender,
            options,
        } = self;
        Event::SewerStackLost(SewerStackLost {
            units: names.names(&units),
            at,
            defender,
            options,
        })
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let SewerStackLost {
            units,
            at,
            defender,
            options,
        } = self;
        format!(
            "sewer stack {} beneath {at} is lost: the {} designates where it goes, among {} (B8.41)",
            units.join("+"),
            name(*defender),
            options
                .iter()
                .map(|h| h.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

impl Fact for SewerEmergenceRolled {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        let SewerEmergenceRolled { units, result, .. } = self;
        for id in units {
            if let Some(Underground::Sewer { emergence, .. }) =
                game.units.get_mut(id).and_then(|u| u.underground.as_mut())
            {
                *emergence = Some(*result);
            }
        }
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let SewerEmergenceRolled { units, hex, result } = self;
        Event::SewerEmergenceRolled(SewerEmergenceRolled {
            units: names.names(&units),
            hex,
            result,
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let SewerEmergenceRolled { units, hex, result } = self;
        format!(
            "sewer stack {} beneath {hex}: {} (B8.42)",
            units.join("+"),
            result.describe()
        )
    }
}

impl Fact for UnitsSurfaced {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        let UnitsSurfaced { units, .. } = self;
        for id in units {
            if let Some(unit) = game.units.get_mut(id) {
                unit.underground = None;
                unit.concealed = true;
            }
            // Coming up is the units' advance of this APh (B8.41: a sewer unit uses the APh
            // only to come up; B8.61: tunnel units advance out), its one Location (A4.7).
            game.movement.advanced.insert(id.clone());
        }
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let UnitsSurfaced { units, hex } = self;
        Event::UnitsSurfaced(UnitsSurfaced {
            units: names.names(&units),
            hex,
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let UnitsSurfaced { units, hex } = self;
        format!("{} came up into {hex}, concealed", units.join("+"))
    }
}

impl Fact for UnitsEnteredTunnel {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        let UnitsEnteredTunnel {
            units,
            side,
            from,
            exit,
        } = self;
        for id in units {
            if let Some(unit) = game.units.get_mut(id) {
                unit.hex = *exit;
                unit.underground = Some(Underground::Tunnel);
                unit.concealed = true;
            }
        }
        carry_weapons(game, units, *exit);
        game.movement.finished.extend(units.iter().cloned());
        reveal_tunnel(game, *side, *from, *exit);
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let UnitsEnteredTunnel {
            units,
            side,
            from,
            exit,
        } = self;
        Event::UnitsEnteredTunnel(UnitsEnteredTunnel {
            units: names.names(&units),
            side,
            from,
            exit,
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let UnitsEnteredTunnel {
            units, from, exit, ..
        } = self;
        format!(
            "{} entered the tunnel at {from} for all MF and wait beneath \"Sewer?\" at {exit} (B8.61)",
            units.join("+")
        )
    }
}

impl Fact for TunnelDestroyed {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        let TunnelDestroyed { entrance } = self;
        for t in game
            .tunnels
            .iter_mut()
            .filter(|t| t.entrances.contains(entrance))
        {
            t.destroyed = true;
        }
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let TunnelDestroyed { entrance } = self;
        format!("the tunnel entrance at {entrance} was destroyed (B8.63)")
    }
}

impl Fact for ManholeDeclaredUnseen {
    fn units(&self) -> Vec<&UnitId> {
        Vec::new()
    }

    fn apply(&self, game: &mut Game) {
        let ManholeDeclaredUnseen { hex, .. } = self;
        game.unseen_manholes.insert(*hex);
    }

    fn viewed(self, _names: &Names<'_>) -> Event {
        // Names no unit: every viewer receives it as it is.
        self.into()
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let name = |s: Side| sides.name(s).to_string();
        let ManholeDeclaredUnseen { by, hex } = self;
        format!(
            "{} declared the road Manhole {hex} out of Known enemy LOS (B8.42 drm)",
            name(*by)
        )
    }
}

impl Fact for UnitsRoutedThroughTunnel {
    fn units(&self) -> Vec<&UnitId> {
        self.units.iter().collect()
    }

    fn apply(&self, game: &mut Game) {
        let UnitsRoutedThroughTunnel {
            units,
            side,
            from,
            to,
        } = self;
        for id in units {
            if let Some(unit) = game.units.get_mut(id) {
                unit.hex = *to;
                unit.concealed = false;
                unit.wall_advantage = false;
            }
        }
        carry_weapons(game, units, *to);
        game.movement.finished.extend(units.iter().cloned());
        reveal_tunnel(game, *side, *from, *to);
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let UnitsRoutedThroughTunnel {
            units,
            side,
            from,
            to,
        } = self;
        Event::UnitsRoutedThroughTunnel(UnitsRoutedThroughTunnel {
            units: names.names(&units),
            side,
            from,
            to,
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let UnitsRoutedThroughTunnel {
            units, from, to, ..
        } = self;
        format!(
            "{} routed through the tunnel from {from} to {to}, not concealed (B8.62)",
            units.join("+")
        )
    }
}

impl Fact for TunnelUseSeen {
    fn units(&self) -> Vec<&UnitId> {
        vec![&self.unit]
    }

    fn apply(&self, game: &mut Game) {
        let TunnelUseSeen { unit, entrance, .. } = self;
        game.tunnel_sightings.insert((*entrance, unit.clone()));
        if let Some(viewer) = game.viewer {
            keep_own_sightings(game, viewer);
        }
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let TunnelUseSeen { by, unit, entrance } = self;
        Event::TunnelUseSeen(TunnelUseSeen {
            by,
            unit: names.name(&unit),
            entrance,
        })
    }

    fn words(&self, sides: &Sides<'_>) -> String {
        let TunnelUseSeen { by, unit, entrance } = self;
        format!(
            "the {} claims the tunnel entrance at {entrance} was used in {unit}'s LOS (B8.63; the opponent may dispute it)",
            sides.name(*by)
        )
    }
}

impl Fact for TunnelEntranceDiscovered {
    fn accounts(&self) -> &[MfAccount] {
        std::slice::from_ref(&self.mf)
    }

    fn units(&self) -> Vec<&UnitId> {
        vec![&self.unit]
    }

    fn apply(&self, game: &mut Game) {
        let TunnelEntranceDiscovered {
            by,
            unit,
            entrance,
            mf,
        } = self;
        spend(
            game,
            std::slice::from_ref(unit),
            std::slice::from_ref(mf),
            None,
        );
        game.tunnel_discoveries.insert((*by, *entrance));
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        let TunnelEntranceDiscovered {
            by,
            unit,
            entrance,
            mf,
        } = self;
        Event::TunnelEntranceDiscovered(TunnelEntranceDiscovered {
            by,
            unit: names.name(&unit),
            entrance,
            mf: names.account(&mf),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let TunnelEntranceDiscovered {
            unit, entrance, mf, ..
        } = self;
        let mut s = format!(
            "{unit} searched {entrance} and discovered the tunnel entrance there (B8.63, A4.44)"
        );
        write_accounts(&mut s, std::slice::from_ref(mf));
        s
    }
}

impl Fact for TunnelUseSighted {
    fn units(&self) -> Vec<&UnitId> {
        self.units.iter().collect()
    }

    fn apply(&self, game: &mut Game) {
        let TunnelUseSighted {
            entrance, units, ..
        } = self;
        for unit in units {
            game.tunnel_sightings.insert((*entrance, unit.clone()));
        }
    }

    fn viewed(self, names: &Names<'_>) -> Event {
        // Only its own side receives it (`Game::shows`); named as that side knows them.
        let TunnelUseSighted {
            by,
            entrance,
            units,
        } = self;
        Event::TunnelUseSighted(TunnelUseSighted {
            by,
            entrance,
            units: names.names(&units),
        })
    }

    fn words(&self, _sides: &Sides<'_>) -> String {
        let TunnelUseSighted {
            entrance, units, ..
        } = self;
        format!(
            "the tunnel entrance at {entrance} was used in the LOS of {} (B8.63)",
            units.join("+")
        )
    }
}

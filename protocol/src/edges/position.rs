//! The position a client is sent (`ServerMessage::Joined` and `State`): a type of the wire's
//! own, not [`Game`]. `Game` is the rules' working state and keeps bookkeeping of its own (the
//! undo trail, the units' index, the clocks' deadlines, the counter aliases are drawn from);
//! what a client receives is decided here, field by field, so `Game` can change inside without
//! changing what clients read.
//!
//! A position is built from what its viewer may know: the server hands [`Position::from`] a
//! projection (`Game::project`), or the whole game when a finished game is reviewed. It carries
//! its format number, [`POSITION_FORMAT`]; a client turns it back into a `Game` to apply the
//! events that follow ([`Position::into_game`]), and that game hashes as the server's did.

use board::hex::Hex;
use board::scenario::{Scenario, Side, UnitId};
use game::phase::Clock;
use game::{
    CcInfiltration, CopyOnWrite, DeclaredAttack, FiredAttack, Game, Lies, LocationMf,
    MovementRecord, Residual, SetupTurn, SewerDesignation, TunnelState, UndoTrail, Unit, Units,
    Viewer, WaChallenge, WaChance, WaHipWindow, Weapon,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// The format of [`Position`] this version writes and reads. A change to what a position
/// carries, or to the order of its fields (bincode reads by order), takes a new number, so a
/// client of another version says so instead of misreading the state.
pub const POSITION_FORMAT: u32 = 11;

/// A game as one viewer is shown it. The fields past `format` are the rules' state the viewer
/// may know, in the rules' own terms (units, weapons, the clock, the records and prompts of
/// play, the Fire counters and Residual FP); `docs/protocol.md` describes them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Position {
    /// [`POSITION_FORMAT`] when written by this version.
    pub format: u32,
    /// Whose view this is; `None` for the whole game (a finished game under review).
    pub viewer: Option<Viewer>,
    /// The events the viewer has received: its stream's length.
    pub version: u64,
    pub scenario: Arc<Scenario>,
    pub clock: Clock,
    /// Each unit's state; its Wound counter (`wounded`, A17) added in format 4.
    pub units: BTreeMap<UnitId, Unit>,
    pub weapons: BTreeMap<String, Weapon>,
    /// The records of play; in format 11 its `rally_phase_acts` (A3.1) took the place of its
    /// `transferred` (A4.431, format 9).
    pub movement: MovementRecord,
    pub wa_chance: Option<WaChance>,
    pub attack: Option<DeclaredAttack>,
    pub sewer_designation: Option<SewerDesignation>,
    pub wa_hip_window: Option<WaHipWindow>,
    pub wa_challenge: Option<WaChallenge>,
    pub wa_shown: BTreeSet<UnitId>,
    pub tunnels: Vec<TunnelState>,
    pub unseen_manholes: BTreeSet<Hex>,
    /// The first draw number of the next roll (`dice::SeededDice`): every roll's is in the
    /// event that records it, so every viewer knows it.
    pub dice_drawn: u64,
    pub over: bool,
    pub end_proposal: Option<Side>,
    pub prep_fired: BTreeSet<UnitId>,
    pub first_fired: BTreeSet<UnitId>,
    pub final_fired: BTreeSet<UnitId>,
    pub residual_fp: BTreeMap<Hex, Residual>,
    pub tunnel_sightings: BTreeSet<(Hex, UnitId)>,
    pub tunnel_discoveries: BTreeSet<(Side, Hex)>,
    pub setup: Option<SetupTurn>,
    /// Units carrying the Bounding Fire counter of an Opportunity Firer (A7.25); added in
    /// format 2.
    pub opportunity_fire: BTreeSet<UnitId>,
    /// The support weapons that changed Location in this MPh (A4.41): in the ATTACKER's own
    /// position and the whole game's only (`game::view::keep_attackers_record`); added in
    /// format 3.
    pub moved_weapons: BTreeSet<String>,
    /// Units that forfeited their inherent FP for the rest of the Player Turn by the SW they
    /// fired (A9.11); added in format 5.
    pub inherent_fp_forfeited: BTreeSet<UnitId>,
    /// The attacks declared in this Player Turn (A9.11, A7.53): in the whole game's position
    /// only (a projection holds none, `Game::fire_record`); added in format 6, each attack's
    /// target and, in the MPh, the movers it struck with their MF (A7.55) in format 8.
    pub fire_record: Vec<FiredAttack>,
    /// The MF each unit spent in its Location in this MPh and the Defensive First Fire at it
    /// there (A8.3, A9.2): in the whole game's position only (a projection holds none,
    /// `Game::location_mf`); added in format 7.
    pub location_mf: BTreeMap<UnitId, LocationMf>,
    /// Where each unpossessed weapon off its hex's ground level lies (`Game::weapon_lies`,
    /// A4.43, A4.44); added in format 9.
    pub weapon_lies: BTreeMap<String, Lies>,
    /// A Close Combat stopped half-resolved for a side's Infiltration (`Game::cc_infiltration`,
    /// A11.22); added in format 10.
    pub cc_infiltration: Option<CcInfiltration>,
    /// The names units under "?" go by, which only the whole game holds (a projection has
    /// none, so a viewer's position never carries this): `None` when there are none.
    pub names: Option<Names>,
}

/// Which unit each alias of a unit under "?" stands for (`Game::aliases`), how many aliases
/// were handed out, and the aliases that name units in the scenario. Sent only with the whole
/// game, once it is over (review): the state hash covers them, so a reviewer's copy hashes as
/// the server's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Names {
    pub aliases: BTreeMap<UnitId, UnitId>,
    pub next_alias: u32,
    pub setup_aliases: BTreeMap<UnitId, UnitId>,
}

/// A position this version cannot turn into a game.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    #[error(
        "the position is in format {0}, and this version reads format {POSITION_FORMAT}: \
         use a client of the server's version"
    )]
    Format(u32),
    /// A unit listed under another id than its own: the game reads a unit's id from either,
    /// so such a position would not be one game (a server is hostile input to the client).
    #[error(
        "the position lists unit `{id}` under the id `{key}`: a unit is listed under its own id"
    )]
    UnitListedElsewhere { key: UnitId, id: UnitId },
}

impl From<Game> for Position {
    /// The position of `game` as it stands: a projection for its viewer, or the whole game.
    ///
    /// Every field of `Game` is named (no `..`): a field added to `Game` does not compile here
    /// until someone decides whether clients are sent it, and in which format.
    fn from(game: Game) -> Position {
        let Game {
            scenario,
            clock,
            units,
            weapons,
            movement,
            wa_chance,
            attack,
            sewer_designation,
            wa_hip_window,
            wa_challenge,
            wa_shown,
            tunnels,
            unseen_manholes,
            dice_drawn,
            over,
            end_proposal,
            viewer,
            version,
            prep_fired,
            first_fired,
            final_fired,
            residual_fp,
            tunnel_sightings,
            tunnel_discoveries,
            aliases,
            next_alias,
            setup_aliases,
            // Clocks reach clients as `timing::ClockView`, in the message beside the position.
            timing: _,
            // The whole game's means to undo: nobody's position.
            undo_trail: _,
            setup,
            opportunity_fire,
            moved_weapons,
            inherent_fp_forfeited,
            fire_record,
            location_mf,
            weapon_lies,
            cc_infiltration,
            // The scenario's projections kept for reuse: derived, nobody's position.
            scenario_views: _,
        } = game;
        let setup_aliases = setup_aliases.into_inner();
        let named = !aliases.is_empty() || next_alias != 0 || !setup_aliases.is_empty();
        let names = named.then_some(Names {
            aliases,
            next_alias,
            setup_aliases,
        });
        Position {
            format: POSITION_FORMAT,
            viewer,
            version,
            scenario,
            clock,
            units: units.into_inner().into(),
            weapons: weapons.into_inner(),
            movement: movement.into_inner(),
            wa_chance,
            attack,
            sewer_designation,
            wa_hip_window,
            wa_challenge,
            wa_shown,
            tunnels,
            unseen_manholes,
            dice_drawn,
            over,
            end_proposal,
            prep_fired,
            first_fired,
            final_fired,
            residual_fp,
            tunnel_sightings,
            tunnel_discoveries,
            setup,
            opportunity_fire,
            moved_weapons,
            inherent_fp_forfeited,
            fire_record,
            location_mf,
            weapon_lies,
            cc_infiltration,
            names,
        }
    }
}

impl Position {
    /// The game this position shows, to apply the events that follow it: equal to the game it
    /// was made from but for the clocks and the undo trail, which no position carries, and so
    /// with the same state hash when that game had no clocks (a projection has none).
    pub fn into_game(self) -> Result<Game, PositionError> {
        let Position {
            format,
            viewer,
            version,
            scenario,
            clock,
            units,
            weapons,
            movement,
            wa_chance,
            attack,
            sewer_designation,
            wa_hip_window,
            wa_challenge,
            wa_shown,
            tunnels,
            unseen_manholes,
            dice_drawn,
            over,
            end_proposal,
            prep_fired,
            first_fired,
            final_fired,
            residual_fp,
            tunnel_sightings,
            tunnel_discoveries,
            setup,
            opportunity_fire,
            moved_weapons,
            inherent_fp_forfeited,
            fire_record,
            location_mf,
            weapon_lies,
            cc_infiltration,
            names,
        } = self;
        if format != POSITION_FORMAT {
            return Err(PositionError::Format(format));
        }
        if let Some((key, unit)) = units.iter().find(|(key, unit)| **key != unit.id) {
            return Err(PositionError::UnitListedElsewhere {
                key: key.clone(),
                id: unit.id.clone(),
            });
        }
        let Names {
            aliases,
            next_alias,
            setup_aliases,
        } = names.unwrap_or(Names {
            aliases: BTreeMap::new(),
            next_alias: 0,
            setup_aliases: BTreeMap::new(),
        });
        Ok(Game {
            scenario,
            clock,
            units: CopyOnWrite::from(Units::from(units)),
            weapons: CopyOnWrite::from(weapons),
            movement: CopyOnWrite::from(movement),
            wa_chance,
            attack,
            sewer_designation,
            wa_hip_window,
            wa_challenge,
            wa_shown,
            tunnels,
            unseen_manholes,
            dice_drawn,
            over,
            end_proposal,
            viewer,
            version,
            prep_fired,
            first_fired,
            final_fired,
            residual_fp,
            tunnel_sightings,
            tunnel_discoveries,
            aliases,
            next_alias,
            setup_aliases: CopyOnWrite::from(setup_aliases),
            timing: None,
            undo_trail: UndoTrail::default(),
            setup,
            opportunity_fire,
            moved_weapons,
            inherent_fp_forfeited,
            fire_record,
            location_mf,
            weapon_lies,
            cc_infiltration,
            scenario_views: Default::default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edges::wire::{from_bincode, from_json, to_bincode, to_json};
    use game::apply;
    use game::event::Event;
    use game::event::{GameCreated, StepEnded};

    /// Games to send: each scenario with units under "?" or hidden, as created and after its
    /// first step ended.
    fn games() -> Vec<Game> {
        let texts = [
            include_str!("../../../scenarios/b9-41-wall-advantage.toml"),
            include_str!("../../../scenarios/village-outskirts.toml"),
            include_str!("../../../scenarios/wall-and-sewer.toml"),
        ];
        let mut games = vec![];
        for text in texts {
            let scenario = Scenario::read_toml_on(text, None).unwrap();
            let mut game = Game::replay([&Event::GameCreated(GameCreated { scenario })]).unwrap();
            games.push(game.clone());
            let next = game
                .clock
                .next(game.scenario.turns)
                .expect("a step follows");
            let ended = Event::StepEnded(StepEnded {
                by: game.acting(),
                ended: game.clock,
                next,
            });
            apply(&mut game, &ended);
            games.push(game);
        }
        games
    }

    fn viewers() -> [Viewer; 3] {
        [
            Viewer::Side(Side::A),
            Viewer::Side(Side::B),
            Viewer::Spectator,
        ]
    }

    /// Round-trip law: a position encodes and decodes to itself in both codecs, and the game
    /// it rebuilds is the projection it was made from, with the same state hash, for every
    /// viewer and for the whole game.
    #[test]
    fn positions_round_trip_to_the_game_they_show() {
        for game in games() {
            let mut shown: Vec<Game> = viewers().iter().map(|v| game.project(*v)).collect();
            shown.push(game.clone());
            for view in shown {
                let position = Position::from(view.clone());
                assert_eq!(
                    from_json::<Position>(&to_json(&position)).unwrap(),
                    position
                );
                assert_eq!(
                    from_bincode::<Position>(&to_bincode(&position)).unwrap(),
                    position
                );
                let rebuilt = from_json::<Position>(&to_json(&position))
                    .unwrap()
                    .into_game()
                    .unwrap();
                assert_eq!(rebuilt, view);
                assert_eq!(rebuilt.state_hash(), view.state_hash());
            }
        }
    }

    /// A viewer's position carries no names of units under "?" (its projection has none), and
    /// no position carries the game's bookkeeping; the whole game's carries its names, which
    /// its hash covers.
    #[test]
    fn only_the_whole_game_carries_names_and_nobody_bookkeeping() {
        let mut named = false;
        for game in games() {
            for viewer in viewers() {
                let position = Position::from(game.project(viewer));
                assert_eq!(position.names, None);
                let json = to_json(&position);
                for field in ["aliases", "undo_trail", "timing", "next_alias"] {
                    assert!(!json.contains(&format!("\"{field}\"")), "{field} in {json}");
                }
            }
            named |= Position::from(game).names.is_some();
        }
        assert!(named, "a game has units under \"?\"");
    }

    /// A position of another format is refused with the format named, not misread.
    #[test]
    fn another_format_is_refused() {
        let mut position = Position::from(games().remove(0));
        position.format = POSITION_FORMAT + 1;
        assert_eq!(
            position.into_game().unwrap_err(),
            PositionError::Format(POSITION_FORMAT + 1)
        );
    }

    /// A unit listed under an id that is not its own is refused, naming both: the game reads
    /// a unit's id from either place, so a server sending one would make the client read two
    /// games at once (the client treats a server as hostile).
    #[test]
    fn a_unit_listed_under_another_id_is_refused() {
        let mut position = Position::from(games().remove(0));
        let (id, unit) = position.units.pop_first().expect("a unit");
        let key = UnitId::from(format!("{id}-elsewhere").as_str());
        position.units.insert(key.clone(), unit);
        assert_eq!(
            position.into_game().unwrap_err(),
            PositionError::UnitListedElsewhere { key, id }
        );
    }
}

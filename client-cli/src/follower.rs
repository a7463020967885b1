//! A local copy of the game, kept in step with a viewer's stream of events.
//!
//! It starts from the viewer's projection (the `Joined` snapshot, or a fresh game for a log
//! replay) and applies each event with the same `protocol::apply` the server uses, so it stays
//! equal to the server's projection; the state hashes the server reports are checked to prove
//! it. Whoever reads its game can then describe events, check expectations and tell whose turn
//! it is without asking the server.

use protocol::game::view::apply_viewed;
use protocol::record::words::describe_event;
use protocol::rules::passing;
use protocol::wire::Sequenced;
use protocol::{Event, Game, StateHash};
use std::fmt;

#[derive(Clone, Debug)]
pub struct Follower {
    game: Game,
    /// A version the local game has not reached yet and the hash the server reported for it.
    checkpoint: Option<(u64, StateHash)>,
    /// The last event applied began a step that passes by itself (B9.322): the command's
    /// `StepPassed` is still to come.
    passing_due: bool,
}

/// What one event of the stream did to the local game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Advance {
    /// The event was applied already (a resumed stream repeats what it may have sent).
    Duplicate,
    /// Applied. The description was written against the position before the event, which is
    /// the position it happened in.
    Applied(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FollowError {
    /// An event arrived with versions missing before it; applying it would skip facts.
    Gap { version: u64, seq: u64 },
    /// The local game and the server's projection differ at `version`.
    Diverged {
        version: u64,
        local: StateHash,
        server: StateHash,
    },
    /// The stream's `GameCreated` holds a scenario whose names no scenario file may hold (a
    /// terminal escape in a side's name), or an undo's position holds text with a control or
    /// bidi character: the words the client would print are refused.
    Words { seq: u64, why: String },
}

impl fmt::Display for FollowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FollowError::Gap { version, seq } => write!(
                f,
                "the server skipped events: the local game is at version {version} and the next \
                 event it sent is #{seq}"
            ),
            FollowError::Diverged {
                version,
                local,
                server,
            } => write!(
                f,
                "the local game no longer matches the server's at version {version} (state hash \
                 {local} here, {server} on the server)"
            ),
            FollowError::Words { seq, why } => write!(
                f,
                "event #{seq} hands the client a game it will not print: {}",
                crate::printable(why)
            ),
        }
    }
}

impl std::error::Error for FollowError {}

impl Follower {
    /// Follows from `game` as it stands, trusting it (a fresh game built from `GameCreated`).
    pub fn new(game: Game) -> Follower {
        Follower {
            game,
            checkpoint: None,
            passing_due: false,
        }
    }

    /// Follows from a server snapshot, checking it against the hash the server sent with it.
    pub fn from_snapshot(game: Game, state_hash: StateHash) -> Result<Follower, FollowError> {
        let mut follower = Follower::new(game);
        follower.expect_hash(follower.version(), state_hash)?;
        Ok(follower)
    }

    pub fn game(&self) -> &Game {
        &self.game
    }

    pub fn version(&self) -> u64 {
        self.game.version
    }

    /// Whether the local game stands where a command's events stop: not between a step begun
    /// and its passing by itself (a step its side could do nothing in, `rules::passing`), whose
    /// `StepPassed` comes in the same command's events. Whose turn it is is read only here:
    /// in between, the step's side would look to be asked for a step nobody is asked in.
    pub fn settled(&self) -> bool {
        !self.passing_due
    }

    /// Records the hash the server reported for `version` (from `Joined` or `State`). It is
    /// checked now if the local game is at that version, or when it gets there; a version
    /// already passed cannot be checked and is ignored.
    pub fn expect_hash(&mut self, version: u64, hash: StateHash) -> Result<(), FollowError> {
        if version > self.version() {
            self.checkpoint = Some((version, hash));
            return Ok(());
        }
        if version == self.version() {
            self.check(hash)?;
        }
        Ok(())
    }

    /// Applies one event of the stream, if it is the next one.
    pub fn advance(&mut self, sequenced: &Sequenced) -> Result<Advance, FollowError> {
        let version = self.version();
        if sequenced.seq <= version {
            return Ok(Advance::Duplicate);
        }
        if sequenced.seq != version + 1 {
            return Err(FollowError::Gap {
                version,
                seq: sequenced.seq,
            });
        }
        // The scenario's names are printed in many places: a stream (a server's, an export's)
        // creating a game is held to the words a scenario file may hold, and so is an undo,
        // which hands the follower a whole position in place of its own: held, as a position
        // the server sends is (`connection::game_of`), to text with no control or bidi
        // character anywhere in it. Before, an undo's position was taken as it came.
        let words = |scenario: &protocol::Scenario| {
            scenario.check_words().map_err(|e| FollowError::Words {
                seq: sequenced.seq,
                why: e.to_string(),
            })
        };
        match &sequenced.viewed.event {
            Event::GameCreated(created) => words(&created.scenario)?,
            Event::EventsUndone(undone) => {
                let value = serde_json::to_value(&*undone.restored).unwrap_or_default();
                if let Some(word) = crate::unprintable_word(&value) {
                    return Err(FollowError::Words {
                        seq: sequenced.seq,
                        why: format!(
                            "its position holds text with control or bidi characters: {word}"
                        ),
                    });
                }
                words(&undone.restored.scenario)?;
            }
            _ => {}
        }
        // The stream is the viewer's own: every number is an event it may know, so the local
        // version is its count of events received, as the server's projection says.
        let description = describe_event(&self.game, &sequenced.viewed.event);
        apply_viewed(&mut self.game, &sequenced.viewed);
        self.passing_due = matches!(
            sequenced.viewed.event,
            Event::StepEnded(_) | Event::StepPassed(_)
        ) && passing::passes_on_arrival(&self.game);
        let advance = Advance::Applied(description);
        if let Some((at, hash)) = self.checkpoint {
            if at == sequenced.seq {
                self.checkpoint = None;
                self.check(hash)?;
            }
        }
        Ok(advance)
    }

    fn check(&self, server: StateHash) -> Result<(), FollowError> {
        let local = self.game.state_hash();
        if local == server {
            return Ok(());
        }
        Err(FollowError::Diverged {
            version: self.version(),
            local,
            server,
        })
    }
}

/// An event of a stream as a test builds it: nothing renamed, no weapons, no hash.
#[cfg(test)]
pub(crate) fn sequenced(seq: u64, event: protocol::Event) -> Sequenced {
    Sequenced {
        seq,
        viewed: protocol::game::view::Viewed {
            event,
            renamed: vec![],
            weapons: vec![],
        }
        .into(),
        hash: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::event::{GameCreated, GameEnded};
    use protocol::rules::decide;
    use protocol::ReadScenario;
    use protocol::{apply, Command, Event, Scenario, ScriptedDice, Side};

    const SCENARIO: &str = include_str!("../../scenarios/b9-41-wall-advantage.toml");

    fn start() -> Game {
        Game::new(Scenario::from_toml(SCENARIO).unwrap())
    }

    /// The events a command makes on `game`, applied there too, numbered as a server would.
    fn play(game: &mut Game, side: Side, command: Command) -> Vec<Sequenced> {
        let events = decide(game, side, &command, &mut ScriptedDice::default()).unwrap();
        events
            .into_iter()
            .map(|e| {
                apply(game, &e);
                Sequenced {
                    seq: game.version,
                    viewed: viewed(e),
                    hash: Default::default(),
                }
            })
            .collect()
    }

    /// A stream (a hostile server's, a forged export's) creating a game whose side is named
    /// with a terminal escape: the scenario's names are printed in many places (`asl state`,
    /// `watch`, `play`, `replay`), so the game is refused before any of them.
    #[test]
    fn a_game_created_with_names_no_scenario_holds_is_refused() {
        let mut scenario = Scenario::from_toml(SCENARIO).unwrap();
        scenario.sides[1].name = "Russian\u{1b}]0;owned\u{7}".into();
        let mut follower = Follower::new(Game::new(scenario.clone()));
        let created = sequenced(1, Event::GameCreated(GameCreated { scenario }));
        let e = follower.advance(&created).unwrap_err();
        assert!(matches!(e, FollowError::Words { seq: 1, .. }), "{e:?}");
        let text = e.to_string();
        assert!(text.contains("sides[1].name"), "{text}");
        assert!(!text.contains('\u{1b}'), "{text:?}");
        assert_eq!(follower.version(), 0, "nothing applied");
        // The scenario as its file has it is followed.
        let scenario = Scenario::from_toml(SCENARIO).unwrap();
        let mut follower = Follower::new(Game::new(scenario.clone()));
        let created = sequenced(1, Event::GameCreated(GameCreated { scenario }));
        follower.advance(&created).unwrap();
    }

    /// An undo hands the follower a whole position in place of its own: a hostile server's,
    /// naming a side or a unit with a terminal escape, is refused as such a position sent on
    /// its own is. Before, it was applied, and `asl play` printed its names.
    #[test]
    fn an_undos_position_with_words_no_position_holds_is_refused() {
        use protocol::event::EventsUndone;
        let undone = |restored: Game| {
            sequenced(
                1,
                Event::EventsUndone(EventsUndone {
                    requested_by: Side::A,
                    consented_by: Side::B,
                    from: 2,
                    to: 2,
                    restored: Box::new(restored),
                }),
            )
        };
        let mut named = start();
        named.scenario = std::sync::Arc::new({
            let mut s = protocol::Scenario::clone(&named.scenario);
            s.sides[0].name = "German\u{1b}]0;owned\u{7}".into();
            s
        });
        let mut renamed = start();
        let mut unit = renamed.units["447a"].clone();
        unit.id = "447a\u{1b}[2J".into();
        renamed.units.insert(unit.id.clone(), unit);
        for hostile in [named, renamed] {
            let mut follower = Follower::new(start());
            let e = follower.advance(&undone(hostile)).unwrap_err();
            assert!(matches!(e, FollowError::Words { seq: 1, .. }), "{e:?}");
            assert!(crate::plain(&e.to_string()), "{e}");
            assert_eq!(follower.version(), 0, "nothing applied");
        }
        let mut follower = Follower::new(start());
        follower.advance(&undone(start())).unwrap();
        assert_eq!(follower.version(), 1);
    }

    #[test]
    fn applies_in_order_and_ignores_duplicates() {
        let mut server = start();
        let mut follower = Follower::from_snapshot(server.clone(), server.state_hash()).unwrap();
        let first = play(&mut server, Side::A, Command::Done);
        let second = play(&mut server, Side::A, Command::Done);
        for s in first.iter().chain(&first).chain(&second) {
            follower.advance(s).unwrap();
        }
        assert_eq!(follower.game(), &server);
        assert_eq!(follower.advance(&first[0]).unwrap(), Advance::Duplicate);
    }

    #[test]
    fn describes_before_applying() {
        let mut server = start();
        let mut follower = Follower::new(server.clone());
        let step = play(&mut server, Side::A, Command::Done);
        let Advance::Applied(text) = follower.advance(&step[0]).unwrap() else {
            panic!("a visible event is applied");
        };
        // Written against the RPh it ended, not the step after it.
        assert!(text.starts_with("German ended RPh;"), "{text}");
    }

    fn viewed(event: Event) -> std::sync::Arc<protocol::game::view::Viewed> {
        std::sync::Arc::new(protocol::game::view::Viewed {
            event,
            renamed: vec![],
            weapons: vec![],
        })
    }

    #[test]
    fn a_gap_is_refused_and_changes_nothing() {
        let mut follower = Follower::new(start());
        let err = follower
            .advance(&Sequenced {
                seq: 3,
                viewed: viewed(Event::GameEnded(GameEnded { turns_played: 1 })),
                hash: Default::default(),
            })
            .unwrap_err();
        assert_eq!(err, FollowError::Gap { version: 0, seq: 3 });
        assert_eq!(follower.version(), 0);
    }

    #[test]
    fn a_snapshot_must_match_its_hash() {
        let game = start();
        let mut other = game.clone();
        other.version = 7;
        let err = Follower::from_snapshot(game, other.state_hash()).unwrap_err();
        assert!(matches!(err, FollowError::Diverged { version: 0, .. }));
    }

    /// The RPh's end here: both end-of-RPh steps pass by themselves (B9.322), so the follower
    /// is unsettled until the last `StepPassed`: in between, the steps' sides look to act.
    #[test]
    fn between_a_step_begun_and_its_passing_the_game_is_unsettled() {
        let mut server = start();
        let mut follower = Follower::new(server.clone());
        assert!(follower.settled());
        let events = play(&mut server, Side::A, Command::Done);
        assert_eq!(events.len(), 3, "{events:?}");
        let mut settled = vec![];
        for e in &events {
            follower.advance(e).unwrap();
            settled.push(follower.settled());
        }
        assert_eq!(settled, [false, false, true]);
        assert_eq!(follower.game().acting(), Side::A, "the German's PFPh");
        // A step that is asked is settled on arrival: the PFPh's end, into the MPh.
        let events = play(&mut server, Side::A, Command::Done);
        follower.advance(&events[0]).unwrap();
        assert!(follower.settled());
    }

    /// Resuming: the server reports its version and hash, and the missed events follow.
    #[test]
    fn a_future_checkpoint_is_checked_on_arrival() {
        let mut server = start();
        let mut follower = Follower::new(server.clone());
        // The RPh's end, with the end-of-RPh steps that passed by themselves (B9.322).
        let events = play(&mut server, Side::A, Command::Done);
        let last = events.len() as u64;
        follower.expect_hash(last, server.state_hash()).unwrap();
        for e in &events {
            follower.advance(e).unwrap();
        }

        let mut wrong = Follower::new(start());
        wrong.expect_hash(last, start().state_hash()).unwrap();
        let (final_event, before) = events.split_last().unwrap();
        for e in before {
            wrong.advance(e).unwrap();
        }
        assert!(matches!(
            wrong.advance(final_event),
            Err(FollowError::Diverged { version, .. }) if version == last
        ));
    }

    /// A log replay starts from `Game::new` at version 0 and applies `GameCreated` as #1.
    #[test]
    fn replays_a_log_from_game_created() {
        let scenario = Scenario::from_toml(SCENARIO).unwrap();
        let mut follower = Follower::new(Game::new(scenario.clone()));
        let created = Sequenced {
            seq: 1,
            viewed: viewed(Event::GameCreated(GameCreated { scenario })),
            hash: Default::default(),
        };
        assert!(
            matches!(follower.advance(&created).unwrap(), Advance::Applied(t) if t.contains("game created"))
        );
        assert_eq!(follower.version(), 1);
    }
}

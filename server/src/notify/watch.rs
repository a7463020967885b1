//! A game task's eye for hand-overs: after each accepted command, for each registered seat
//! whose player is not connected, whether the game now waits on that seat, read from the
//! seat's own projection and the events of its own stream — so a hidden unit's move, which
//! neither changes what the other side sees nor reaches its stream, owes it nothing.

use super::{Notice, Notifier, Owed, OwedBy, Reason};
use crate::store::{GameKey, NotifyWrites};
use protocol::event::{ClockExpired, EndProposed, OutcomeAdjudicated, UndoRequested};
use protocol::{Event, Game, Side, Viewer};
use std::sync::Arc;
use std::time::Duration;

/// Whether `game` (a side's projection) waits on `side`: a prompt waiting on it (a lost sewer
/// stack to designate, a WA chance, a HIP moment, a WA challenge: B8.41, B9.322, B9.324; the
/// DEFENDER's CC designation: A11.12; a chance of Infiltration: A11.22), or,
/// with no prompt, its turn to act in the current step. Never once the game is over. The same
/// side whose clock runs (`protocol::game::timing::awaited`).
pub fn awaits(game: &Game, side: Side) -> bool {
    protocol::game::timing::awaited(game) == Some(side)
}

/// The side a prompt waits on, if one does (the order `protocol::game::timing::awaited`
/// takes them in).
fn prompt_side(game: &Game) -> Option<Side> {
    game.sewer_designation
        .as_ref()
        .map(|d| d.defender)
        .or_else(|| game.wa_chance.as_ref().map(|c| c.side))
        .or_else(|| game.wa_hip_window.as_ref().map(|w| w.side))
        .or_else(|| game.wa_challenge.as_ref().map(|c| c.side))
        .or_else(|| game.cc_infiltration.as_ref().map(|c| c.side))
        .or_else(|| (!game.movement.cc_designated.is_empty()).then(|| game.attacker().opponent()))
}

/// Why `side` is owed a notice after a command: from the events of its own stream (`events`)
/// and its projection after them, given whether the game waited on it before.
pub fn reasons_for(
    side: Side,
    waited_before: bool,
    after: &Game,
    events: &[&Event],
) -> Vec<Reason> {
    let mut reasons = vec![];
    let mut push = |reason: Reason| {
        if !reasons.contains(&reason) {
            reasons.push(reason);
        }
    };
    for event in events {
        match event {
            Event::UndoRequested(UndoRequested { by, .. }) if *by != side => {
                push(Reason::UndoRequested)
            }
            Event::EndProposed(EndProposed { side: by }) if *by != side => {
                push(Reason::EndProposed)
            }
            Event::OutcomeAdjudicated(OutcomeAdjudicated { by, .. }) if *by != side => {
                push(Reason::AdjudicationToAnswer)
            }
            Event::ClockExpired(ClockExpired { side: out, .. }) if *out != side => {
                push(Reason::OpponentOutOfTime)
            }
            e if e.ends_game() => push(Reason::GameOver),
            _ => {}
        }
    }
    if !waited_before && awaits(after, side) {
        push(match prompt_side(after) {
            Some(_) => Reason::Prompt,
            None => Reason::YourTurn,
        });
    }
    reasons
}

/// The notice for `side`, built by allow-list from its own projection.
fn notice(
    key: &GameKey,
    side: Side,
    projection: &Game,
    reasons: Vec<Reason>,
    handover: u64,
) -> Notice {
    let game = crate::store::envelope::game_id(key);
    let side_name = projection.side_name(side).to_string();
    let to_act = (!projection.over).then(|| {
        let acting = prompt_side(projection).unwrap_or_else(|| projection.acting());
        projection.side_name(acting).to_string()
    });
    let mut notice = Notice {
        kind: "asl.notice".into(),
        format: 1,
        idempotency_key: format!("{game}:{side:?}:{handover}"),
        game,
        side,
        side_name,
        scenario: projection.scenario.name.clone(),
        reasons,
        turn: projection.clock.turn,
        player_turn: projection.clock.player_turn,
        phase: projection.clock.phase().to_string(),
        to_act,
        handover,
        text: String::new(),
    };
    notice.text = notice.summary();
    notice
}

/// The turn notices one command owes, worked out before its events are stored
/// ([`Watch::foresee`]) so that they are stored with them ([`Owing::writes`]), then handed
/// to the watch ([`Watch::stored`]).
pub struct Owing {
    by: OwedBy,
    /// What the game will wait on for each side, as `Watch::waited` will hold it.
    waited: [Option<bool>; 2],
    /// Each notice owed: its outbox key and record.
    notices: Vec<(Vec<u8>, Owed)>,
}

impl Owing {
    /// The outbox records to store with the command's events: none if no notice is owed.
    pub fn writes(&self) -> NotifyWrites {
        self.notices
            .iter()
            .map(|(key, owed)| {
                let bytes = serde_json::to_vec(owed).expect("a notice encodes");
                (key.clone(), Some(bytes))
            })
            .collect()
    }
}

/// One game's watch, held by its task.
pub struct Watch {
    notifier: Arc<Notifier>,
    key: GameKey,
    /// Whether the game waited on each side (A, B) as its projection last showed, when known:
    /// forgotten while the seat is unregistered or its player connected, and read again
    /// before the next command.
    waited: [Option<bool>; 2],
    /// The hand-over at which each side was last told its clock runs low.
    clock_low_told: [Option<u64>; 2],
}

fn index(side: Side) -> usize {
    match side {
        Side::A => 0,
        Side::B => 1,
    }
}

impl Watch {
    pub fn new(notifier: Arc<Notifier>, key: GameKey) -> Watch {
        Watch {
            notifier,
            key,
            waited: [None; 2],
            clock_low_told: [None; 2],
        }
    }

    /// Before a command is applied: notes whether the game waits on each registered seat whose
    /// player is away and for which this is not known yet. Costs nothing for a game nobody
    /// registered for.
    pub fn before(&mut self, game: &Game, connected: impl Fn(Side) -> bool) {
        for side in [Side::A, Side::B] {
            let i = index(side);
            if !self.notifier.registered(&self.key, side) || connected(side) {
                self.waited[i] = None;
            } else if self.waited[i].is_none() {
                self.waited[i] = Some(awaits(&game.project(Viewer::Side(side)), side));
            }
        }
    }

    /// Whether `before` noted what the game waits on for `side`: only then is there anything
    /// for `foresee` to do for it.
    pub fn watching(&self, side: Side) -> bool {
        self.waited[index(side)].is_some()
    }

    /// The notices a command owes, before its events are stored: nothing yet, owed by the
    /// command's last record, `by`. Fill it with [`Watch::foresee`] for each side watched.
    pub fn owing(&self, by: OwedBy) -> Owing {
        Owing {
            by,
            waited: self.waited,
            notices: vec![],
        }
    }

    /// Before a command's events are stored, with the game as they will leave it (`game`):
    /// `events` are those `side`'s own stream will get, which will then be `handover` long.
    /// Owes the seat a notice in `owing` when there is a reason and its player is away. Changes
    /// nothing here: [`Watch::stored`] takes `owing` once the events (and the notices with
    /// them, [`Owing::writes`]) are stored, and a command whose append failed leaves the watch
    /// as it was.
    pub fn foresee(
        &self,
        owing: &mut Owing,
        game: &Game,
        side: Side,
        events: &[&Event],
        handover: u64,
        connected: bool,
    ) {
        let i = index(side);
        let Some(waited) = owing.waited[i].take() else {
            return;
        };
        if connected || !self.notifier.registered(&self.key, side) {
            return;
        }
        let projection = game.project(Viewer::Side(side));
        owing.waited[i] = Some(awaits(&projection, side));
        let reasons = reasons_for(side, waited, &projection, events);
        if !reasons.is_empty() {
            let notice = notice(&self.key, side, &projection, reasons, handover);
            owing
                .notices
                .push(self.notifier.owing(&self.key, notice, owing.by.clone()));
        }
    }

    /// The command's events are stored, and with them the notices `owing` holds: the worker
    /// is told of them, and the watch learns what the game now waits on.
    pub fn stored(&mut self, owing: Owing) {
        self.waited = owing.waited;
        for (key, owed) in owing.notices {
            self.notifier.owed(key, owed, None);
        }
    }

    /// The seat's player joined: nothing it was owed is sent, and what the game waits on is
    /// read afresh once it leaves.
    pub fn joined(&mut self, side: Side) {
        self.waited[index(side)] = None;
        self.notifier.seen(&self.key, side);
    }

    /// **The clock-low hook** (issue 41): the game clocks call it for `side` whenever they
    /// work out its time left (`remaining`), with the side's own stream length (`handover`,
    /// `GameTask::version(Viewer::Side(side))`) and whether its player is connected. When the
    /// time left is below the operator's threshold (`notify_clock_low_below`), the seat is
    /// registered and away, it is owed a `clock_low` notice — at most once per hand-over,
    /// however often this is called. Returns whether a notice was owed.
    pub fn clock_low(
        &mut self,
        game: &Game,
        side: Side,
        remaining: Duration,
        handover: u64,
        connected: bool,
    ) -> bool {
        let i = index(side);
        if remaining >= self.notifier.config.notify_clock_low_below
            || connected
            || game.over
            || self.clock_low_told[i] == Some(handover)
            || !self.notifier.registered(&self.key, side)
        {
            return false;
        }
        self.clock_low_told[i] = Some(handover);
        let projection = game.project(Viewer::Side(side));
        let mut notice = notice(
            &self.key,
            side,
            &projection,
            vec![Reason::ClockLow],
            handover,
        );
        // Not the turn notice of the same hand-over: a receiver keeps both.
        notice.idempotency_key.push_str(":clock_low");
        self.notifier.owe_clock_low(&self.key, notice);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operations::config::Config;
    use crate::store::{EventStore, MemoryStore};
    use protocol::event::{Conceded, EndProposed, UndoRequested};
    use protocol::wire::NotifyTarget;
    use protocol::ReadScenario;

    const SCENARIO: &str = include_str!("../../../scenarios/village-outskirts.toml");

    fn game() -> Game {
        let scenario = protocol::Scenario::from_toml(SCENARIO).expect("the scenario reads");
        Game::new(scenario)
    }

    #[test]
    fn the_side_to_act_is_awaited_and_nobody_once_over() {
        let mut game = game();
        let acting = game.acting();
        assert!(awaits(&game, acting));
        assert!(!awaits(&game, acting.opponent()));
        game.over = true;
        assert!(!awaits(&game, acting));
        assert!(!awaits(&game, acting.opponent()));
    }

    #[test]
    fn reasons_come_from_the_sides_own_events_and_position() {
        let game = game();
        let acting = game.acting();
        let other = acting.opponent();
        // The turn comes to the acting side: its turn, once (not again while it waited).
        assert_eq!(
            reasons_for(acting, false, &game, &[]),
            vec![Reason::YourTurn]
        );
        assert!(reasons_for(acting, true, &game, &[]).is_empty());
        assert!(reasons_for(other, false, &game, &[]).is_empty());
        // The opponent's requests; one's own are no reason.
        let undo = Event::UndoRequested(UndoRequested {
            by: acting,
            from: 3,
            to: 4,
        });
        let end = Event::EndProposed(EndProposed { side: acting });
        assert_eq!(
            reasons_for(other, false, &game, &[&undo, &end]),
            vec![Reason::UndoRequested, Reason::EndProposed]
        );
        assert!(reasons_for(acting, true, &game, &[&undo, &end]).is_empty());
        let over = Event::Conceded(Conceded { side: acting });
        let mut ended = game.clone();
        ended.over = true;
        assert_eq!(
            reasons_for(other, false, &ended, &[&over]),
            vec![Reason::GameOver]
        );
    }

    /// A prompt waiting on the side not to act (a WA chance, B9.322) is that side's to answer,
    /// and the acting side waits meanwhile; the notice names the prompted side as the one to act.
    #[test]
    fn a_prompt_waits_on_its_side_not_the_acting_one() {
        let mut game = game();
        let acting = game.acting();
        let prompted = acting.opponent();
        game.wa_chance = Some(protocol::game::WaChance {
            side: prompted,
            units: vec![],
        });
        assert!(awaits(&game, prompted));
        assert!(!awaits(&game, acting));
        assert_eq!(
            reasons_for(prompted, false, &game, &[]),
            vec![Reason::Prompt]
        );
        assert!(reasons_for(acting, false, &game, &[]).is_empty());
        let told = notice(&[1; 16], prompted, &game, vec![Reason::Prompt], 3);
        assert_eq!(told.to_act.as_deref(), Some(game.side_name(prompted)));
    }

    #[test]
    fn a_notice_carries_only_what_its_allow_list_names() {
        let game = game();
        let side = game.acting();
        let notice = notice(
            &[3; 16],
            side,
            &game.project(Viewer::Side(side)),
            vec![Reason::YourTurn],
            7,
        );
        let json = serde_json::to_value(&notice).unwrap();
        let mut keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        keys.sort();
        assert_eq!(
            keys,
            vec![
                "format",
                "game",
                "handover",
                "idempotency_key",
                "kind",
                "phase",
                "player_turn",
                "reasons",
                "scenario",
                "side",
                "side_name",
                "text",
                "to_act",
                "turn"
            ]
        );
        assert_eq!(
            notice.idempotency_key,
            format!("{}:{side:?}:7", crate::store::envelope::game_id(&[3; 16]))
        );
    }

    /// The clock-low hook, called directly as the clocks will: owed once per hand-over, below
    /// the threshold only, never to a connected player or an unregistered seat.
    #[tokio::test]
    async fn the_clock_low_hook_owes_one_notice_per_hand_over() {
        let store = Arc::new(MemoryStore::new());
        let config = Arc::new(Config {
            notify_allow_private: true,
            // Nothing is sent during the test: the notice waits in the outbox.
            notify_quiet: Duration::from_secs(3600),
            notify_clock_low_below: Duration::from_secs(600),
            ..Config::default()
        });
        let notifier = Notifier::start(store.clone(), config, None).unwrap();
        let key = [5u8; 16];
        let game = game();
        let mut watch = Watch::new(notifier.clone(), key);
        let low = Duration::from_secs(599);
        assert!(
            !watch.clock_low(&game, Side::A, low, 4, false),
            "an unregistered seat is owed nothing"
        );
        notifier
            .register(
                &key,
                Side::A,
                NotifyTarget::Webhook {
                    url: "http://127.0.0.1:9/hook".into(),
                },
            )
            .await
            .unwrap();
        assert!(!watch.clock_low(&game, Side::A, Duration::from_secs(600), 4, false));
        assert!(!watch.clock_low(&game, Side::A, low, 4, true), "connected");
        assert!(watch.clock_low(&game, Side::A, low, 4, false));
        assert!(!watch.clock_low(&game, Side::A, Duration::from_secs(10), 4, false));
        assert!(
            watch.clock_low(&game, Side::A, low, 9, false),
            "a new hand-over"
        );
        notifier.stop().await;
        let owed: Vec<super::super::Owed> = store
            .notify_records()
            .unwrap()
            .into_iter()
            .filter(|(k, _)| k[0] == b'o')
            .map(|(_, v)| serde_json::from_slice(&v).unwrap())
            .collect();
        let handovers: Vec<u64> = owed.iter().map(|o| o.notice.handover).collect();
        assert!(handovers.contains(&9), "{handovers:?}");
        assert!(owed
            .iter()
            .all(|o| o.notice.reasons.contains(&Reason::ClockLow)));
    }
}

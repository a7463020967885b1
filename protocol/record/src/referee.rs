//! What a server does around [`dispute::decide`](crate::dispute::decide), kept pure so that
//! the server, offline tools and tests make the same logs: the dice key for each command, the
//! dice commitment logged before the first event that needs it, and the seed revealed when the
//! game ends or once both sides agree (`docs/dice.md`).
//!
//! The randomness (the seeds) comes from the caller, like everything else from outside. The
//! caller owns the storage: it takes a [`Decision`], stores its events (and a new seed, before
//! them), and only then [`Referee::push`]es them.

use crate::chain::{Entry, Issued};
use crate::fair_dice::{Commitment, Ledger, Seed};
use board::scenario::Side;
use game::command::Command;
use game::dice::{DiceSource, SeededDice};
use game::event::Event;
use game::event::{DiceCommitted, GameCreated, SeedRevealAgreed, SeedRevealed};
use game::{apply, Game};
use rules::violation::RuleViolation;

/// A game, its log with who issued what, its dice ledger and its secret seeds.
#[derive(Clone, Debug)]
pub struct Referee {
    game: Game,
    entries: Vec<Entry>,
    ledger: Ledger,
    /// Every seed the game has had, oldest first; the last is the one in use or next to be.
    seeds: Vec<Seed>,
}

/// The events a command produced, each with the side that issued it (`None` for the server's
/// own: commitment and reveal), and a seed for the next epoch when the command ended one.
#[derive(Clone, Debug)]
pub struct Decision {
    pub events: Vec<(Event, Option<Side>)>,
    /// Store it before the events: they commit to it.
    pub new_seed: Option<Seed>,
    /// The command decided, with its issuer: recorded beside the first event.
    pub issued: Issued,
    /// The client's exactly-once key for the command, if it gave one: recorded beside the
    /// first event too, so a server reading the log back still knows it.
    pub key: Option<u64>,
    /// The game this decision was made on with every one of `events` applied by `apply`, when
    /// the decision's look-ahead built it (`rules::Decided::after`): recording the decision
    /// takes it as the position after its last event instead of applying that event again.
    /// Not part of what was decided (equality ignores it): a position, not an event.
    pub after: Option<Box<Game>>,
    /// With `after`: the position after each event but the last, each built by the
    /// look-ahead's `apply` (`rules::Decided::along`), which recording takes in turn, so that
    /// no event of the decision is applied again. Empty when the look-ahead kept none.
    pub along: Vec<Game>,
}

impl PartialEq for Decision {
    fn eq(&self, other: &Decision) -> bool {
        self.events == other.events
            && self.new_seed == other.new_seed
            && self.issued == other.issued
            && self.key == other.key
    }
}

impl Eq for Decision {}

impl Decision {
    /// The decision's events as the log keeps them from sequence `first` on: the command
    /// recorded on the first.
    pub fn entries(&self, first: u64) -> Vec<Entry> {
        self.events
            .iter()
            .enumerate()
            .map(|(i, (event, by))| Entry {
                seq: first + i as u64,
                by: *by,
                first,
                key: if i == 0 { self.key } else { None },
                command: (i == 0).then(|| self.issued.clone()),
                event: event.clone(),
            })
            .collect()
    }
}

/// Why a log cannot be refereed: it does not start as a game does, or its dice break the
/// scheme, or the server lacks the seed they need.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RefereeError {
    #[error("the log is empty")]
    Empty,
    #[error("event 1 is {0}, not GameCreated")]
    NotCreatedFirst(&'static str),
    #[error("the log starts at {0}, not 1")]
    StartsAt(u64),
    #[error("the game has no dice seed")]
    NoSeed,
    #[error("the server kept no seed for the dice commitment of event {0}")]
    SeedMissing(u64),
    /// An event breaks the dice scheme (`fair_dice::Ledger`).
    #[error("{0}")]
    Dice(#[from] crate::fair_dice::LedgerError),
}

impl Referee {
    /// Starts from the log's first entry, `GameCreated`, with the seeds the server keeps.
    pub fn new(created: Entry, seeds: Vec<Seed>) -> Result<Referee, RefereeError> {
        let Event::GameCreated(GameCreated { scenario }) = &created.event else {
            return Err(RefereeError::NotCreatedFirst(created.event.name()));
        };
        if created.seq != 1 {
            return Err(RefereeError::StartsAt(created.seq));
        }
        if seeds.is_empty() {
            return Err(RefereeError::NoSeed);
        }
        let mut game = Game::new(scenario.clone());
        game.version = 1;
        Ok(Referee {
            game,
            entries: vec![created],
            ledger: Ledger::default(),
            seeds,
        })
    }

    /// Rebuilds a game from a whole log (checked by [`crate::chain`]) and its seeds.
    pub fn load(entries: Vec<Entry>, seeds: Vec<Seed>) -> Result<Referee, RefereeError> {
        let mut entries = entries.into_iter();
        let first = entries.next().ok_or(RefereeError::Empty)?;
        let mut referee = Referee::new(first, seeds)?;
        referee.reserve(entries.len());
        for entry in entries {
            referee.push_entry(entry)?;
        }
        referee.current_seed()?;
        Ok(referee)
    }

    pub fn game(&self) -> &Game {
        &self.game
    }

    /// Makes room for `additional` more entries at once (a log about to be pushed whole).
    pub fn reserve(&mut self, additional: usize) {
        self.entries.reserve_exact(additional);
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    pub fn seeds(&self) -> &[Seed] {
        &self.seeds
    }

    /// The seed rolls are derived from now: the one committed to and still secret, or, before
    /// any commitment is logged, the one the next commitment will publish.
    fn current_seed(&self) -> Result<&Seed, RefereeError> {
        match self.ledger.open() {
            Some(epoch) => self
                .seeds
                .iter()
                .find(|s| Commitment::to(s) == epoch.commitment)
                .ok_or(RefereeError::SeedMissing(epoch.committed_at)),
            None => Ok(self.seeds.last().expect("a referee has a seed")),
        }
    }

    /// Whether the seeds hold the one the log's open commitment needs: a game without it
    /// cannot roll, and cannot be served.
    pub fn check_seed(&self) -> Result<(), RefereeError> {
        self.current_seed().map(|_| ())
    }

    fn seed(&self) -> &Seed {
        self.current_seed()
            .expect("a loaded game has the seed of its open commitment")
    }

    /// The commitment players are shown: to the seed in use or next to be.
    pub fn commitment(&self) -> Commitment {
        Commitment::to(self.seed())
    }

    /// Decides `command` for side `by` with dice keyed from the current seed and the
    /// contributions logged so far, and adds what the dice scheme makes follow. Never changes
    /// anything; `fresh_seed` is asked for a seed only when the command opens a new epoch.
    pub fn decide(
        &self,
        by: Side,
        command: &Command,
        fresh_seed: &mut dyn FnMut() -> Seed,
    ) -> Result<Decision, RuleViolation> {
        self.decide_at(by, command, fresh_seed, None)
    }

    /// As [`Referee::decide`], at the server's time `now` (milliseconds since the Unix
    /// epoch), which a game with a time control charges its clocks by (`rules::timing`).
    pub fn decide_at(
        &self,
        by: Side,
        command: &Command,
        fresh_seed: &mut dyn FnMut() -> Seed,
        now: Option<u64>,
    ) -> Result<Decision, RuleViolation> {
        let seed = self.seed();
        let mut dice = KeyedOnFirstDraw {
            ledger: &self.ledger,
            seed,
            drawn: self.game.dice_drawn,
            dice: None,
        };
        decision(
            &self.game,
            &self.entries,
            &self.ledger,
            Issued {
                by,
                command: command.clone(),
            },
            &mut dice,
            None,
            seed,
            fresh_seed,
            now,
        )
    }

    /// Records a seed the caller has stored (a [`Decision`]'s `new_seed`).
    pub(crate) fn adopt_seed(&mut self, seed: Seed) {
        self.seeds.push(seed);
    }

    /// Appends one stored event, with no command recorded beside it, and applies it. An event
    /// that breaks the dice scheme is refused (a log read back that does so is damaged).
    pub fn push(&mut self, event: Event, by: Option<Side>, first: u64) -> Result<(), RefereeError> {
        self.push_entry(Entry {
            seq: self.game.version + 1,
            by,
            first,
            key: None,
            command: None,
            event,
        })
    }

    /// Appends one stored entry (its sequence is the next) and applies its event.
    pub fn push_entry(&mut self, mut entry: Entry) -> Result<(), RefereeError> {
        entry.seq = self.game.version + 1;
        self.ledger.observe(entry.seq, &entry.event)?;
        apply(&mut self.game, &entry.event);
        self.entries.push(entry);
        Ok(())
    }

    /// Records a whole decision, as a server does once it is stored; returns the sequences.
    pub fn record(&mut self, decision: Decision) -> std::ops::RangeInclusive<u64> {
        self.record_with(decision, |_, _, _| {})
    }

    /// Records a whole decision as [`Referee::record`] does, calling `each` with the game
    /// before and after each event and the entry it came from: what a server keeps in step
    /// with the game (its viewers' streams, its checkpoints) sees every position once, applied
    /// once, and needs no copy of its own of the position before.
    pub fn record_with(
        &mut self,
        decision: Decision,
        mut each: impl FnMut(&Game, &Game, &Entry),
    ) -> std::ops::RangeInclusive<u64> {
        let first = self.game.version + 1;
        let entries = decision.entries(first);
        if let Some(seed) = decision.new_seed {
            self.adopt_seed(seed);
        }
        // The look-ahead is the position after the last event only if it was made on this very
        // game: a decision recorded on another (a test's, an offline tool's) is applied. The
        // positions along it, when it kept them all, are those after the events before.
        let last = first + entries.len() as u64 - 1;
        let mut ahead = decision
            .after
            .filter(|after| after.version == last && !entries.is_empty());
        let along = if ahead.is_some()
            && decision.along.len() + 1 == entries.len()
            && decision.along.first().is_none_or(|g| g.version == first)
        {
            decision.along
        } else {
            vec![]
        };
        let mut along = along.into_iter();
        for entry in entries {
            let taken = if entry.seq == last {
                ahead.take().map(|a| *a)
            } else {
                along.next()
            };
            let before = match taken {
                Some(after) => self.take_entry(entry, after),
                None => {
                    let before = self.game.clone();
                    self.push_entry(entry).map(|()| before)
                }
            }
            .expect("a decision keeps the dice scheme");
            let entry = self.entries.last().expect("just pushed");
            each(&before, &self.game, entry);
        }
        first..=self.game.version
    }

    /// Appends one entry of a decision, its event already applied to `after` by the
    /// decision's look-ahead: the game becomes `after` (one writer per game, so nothing else
    /// moved the game between the decision and now), and the game before is returned. Debug
    /// builds apply the event as well and check the two positions agree, state and undo trail
    /// alike: replay is live.
    fn take_entry(&mut self, mut entry: Entry, after: Game) -> Result<Game, RefereeError> {
        entry.seq = self.game.version + 1;
        self.ledger.observe(entry.seq, &entry.event)?;
        #[cfg(debug_assertions)]
        {
            let mut applied = self.game.clone();
            apply(&mut applied, &entry.event);
            assert!(
                applied == after && applied.undo_trail.same_as(&after.undo_trail),
                "the look-ahead of event {} is the position applying it gives",
                entry.seq
            );
        }
        self.entries.push(entry);
        Ok(std::mem::replace(&mut self.game, after))
    }

    /// Decides and records a command, for tests and offline tools that store nothing.
    pub fn play(
        &mut self,
        by: Side,
        command: &Command,
        fresh_seed: &mut dyn FnMut() -> Seed,
    ) -> Result<Vec<Event>, RuleViolation> {
        let decision = self.decide(by, command, fresh_seed)?;
        let events = decision.events.iter().map(|(e, _)| e.clone()).collect();
        self.record(decision);
        Ok(events)
    }
}

/// The dice of one command, keyed from the seed in use and the contributions logged so far
/// (`Ledger::key`): the key is derived when the command draws its first die, so a command
/// that rolls nothing (most of them: a `done`, a move) derives none. The same faces as
/// `SeededDice` keyed at once: the ledger cannot change while a command is decided.
struct KeyedOnFirstDraw<'a> {
    ledger: &'a Ledger,
    seed: &'a Seed,
    /// The dice the game had drawn before the command (`Game::dice_drawn`).
    drawn: u64,
    dice: Option<SeededDice>,
}

impl DiceSource for KeyedOnFirstDraw<'_> {
    fn roll_die(&mut self) -> Option<u8> {
        let (ledger, seed, drawn) = (self.ledger, self.seed, self.drawn);
        self.dice
            .get_or_insert_with(|| SeededDice::new(ledger.key(seed), drawn))
            .roll_die()
    }
}

/// What a command decides, with the server's own events around it — the commitment before the
/// first event that relies on it, the seed's reveal when the game ends or both sides agreed,
/// and the commitment to a fresh seed after a reveal by agreement. The server decides with the
/// seed in use; a verifier decides again with the seed the log reveals (or, for a seed never
/// revealed, with the logged dice and a stand-in `seed`, whose reveal then cannot match).
/// `commitment` is the one logged when a verifier decides with a stand-in `seed`; `None` is
/// the commitment to `seed`, hashed only for a decision that logs it.
#[allow(clippy::too_many_arguments)]
pub fn decision(
    game: &Game,
    entries: &[Entry],
    ledger: &Ledger,
    issued: Issued,
    dice: &mut dyn DiceSource,
    commitment: Option<Commitment>,
    seed: &Seed,
    fresh_seed: &mut dyn FnMut() -> Seed,
    now: Option<u64>,
) -> Result<Decision, RuleViolation> {
    let by = issued.by;
    let mut decided = crate::dispute::decide_timed(game, entries, by, &issued.command, now, dice)?;
    let mut events = Vec::with_capacity(decided.events.len() + 2);
    // The commitment goes into the log before the first event that relies on it.
    let needs_commitment = decided
        .events
        .iter()
        .any(|e| matches!(e, Event::DiceRolled(_) | Event::EntropyContributed(_)));
    if ledger.open().is_none() && needs_commitment {
        let commitment = commitment.unwrap_or_else(|| Commitment::to(seed));
        events.push((Event::DiceCommitted(DiceCommitted { commitment }), None));
        // The look-ahead began after a position without it: not this decision's.
        decided.after = None;
        decided.along.clear();
    }
    // Whether a seed is committed to and secret once these events are in, and who will
    // then have agreed to reveal it.
    let open = ledger.open();
    let mut agreed = open.map_or([false, false], |e| e.agreed);
    for event in &decided.events {
        if let Event::SeedRevealAgreed(SeedRevealAgreed { side }) = event {
            agreed[match side {
                Side::A => 0,
                Side::B => 1,
            }] = true;
        }
    }
    // The server's events after the command's, the look-ahead moved past each as well.
    let mut servers = vec![];
    let mut new_seed = None;
    if open.is_some() || needs_commitment {
        let ends = decided.events.iter().any(|e| e.ends_game());
        if ends || agreed == [true, true] {
            servers.push(Event::SeedRevealed(SeedRevealed { seed: *seed }));
        }
        if !ends && agreed == [true, true] {
            let next = fresh_seed();
            servers.push(Event::DiceCommitted(DiceCommitted {
                commitment: Commitment::to(&next),
            }));
            new_seed = Some(next);
        }
        for event in &servers {
            decided.follow(event);
        }
    }
    let rules::Decided {
        events: ruled,
        after,
        along,
    } = decided;
    // The clock's hand-overs and expiry are the server's: they follow from time.
    events.extend(ruled.into_iter().map(|e| {
        let who = (!e.is_servers_clock()).then_some(by);
        (e, who)
    }));
    events.extend(servers.into_iter().map(|e| (e, None)));
    Ok(Decision {
        events,
        new_seed,
        issued,
        key: None,
        after,
        along,
    })
}

#[cfg(test)]
pub(crate) mod testing {
    //! Games played through a [`Referee`] as a server would, for the tests of this crate.
    use super::*;
    use crate::chain::{seal_entry, LogHash, GENESIS};
    use crate::export::{render, Header};
    use board::hex::Hex;
    use board::scenario::Scenario;
    use data_encoding::HEXLOWER;
    use rules::wall_advantage::ReadScenario;

    pub(crate) const SEWERS: &str = include_str!("../../../scenarios/sewer-infiltration.toml");

    pub fn hex(name: &str) -> Hex {
        name.parse().unwrap()
    }

    /// A fresh game of the sewer scenario with seed `[seed; 32]`.
    pub fn start(seed: u8) -> Referee {
        start_with(SEWERS, seed)
    }

    /// A fresh game of the scenario `toml` with seed `[seed; 32]`.
    pub fn start_with(toml: &str, seed: u8) -> Referee {
        let scenario = Scenario::from_toml(toml).unwrap();
        Referee::new(Entry::created(scenario), vec![[seed; 32]]).unwrap()
    }

    /// Seeds for new epochs: 100, 101, … as bytes.
    pub fn seeds() -> impl FnMut() -> Seed {
        let mut next = 100u8;
        move || {
            next += 1;
            [next; 32]
        }
    }

    pub fn play(referee: &mut Referee, by: Side, command: Command) -> Vec<Event> {
        referee
            .play(by, &command, &mut seeds())
            .unwrap_or_else(|v| panic!("{command:?} by {by:?} refused: {v}"))
    }

    /// `Done` by whoever must act, answering a lost sewer stack's designation with its first
    /// choice.
    pub fn done(referee: &mut Referee) -> Vec<Event> {
        if let Some(d) = referee.game().sewer_designation.clone() {
            return play(
                referee,
                d.defender,
                Command::DesignateSewer { to: d.options[0] },
            );
        }
        let side = referee.game().acting();
        play(referee, side, Command::Done)
    }

    /// Plays until the German MPh of turn 1 (RPh, the ends of the RPh that do not pass by
    /// themselves, PFPh).
    pub fn to_german_mph(referee: &mut Referee) {
        while referee.game().clock.phase() != game::phase::Phase::Movement {
            done(referee);
        }
        assert_eq!(referee.game().clock.phase(), game::phase::Phase::Movement);
    }

    /// The export a server would write of this game (salts made from the sequence).
    pub fn export(referee: &Referee) -> String {
        let mut prev = GENESIS;
        let mut lines = vec![];
        for e in referee.entries() {
            let (bytes, hash) = seal_entry(prev, [e.seq as u8; 16], e);
            lines.push(HEXLOWER.encode(&bytes));
            prev = hash;
        }
        let header = Header {
            game: "ab".repeat(16),
            events: referee.entries().len() as u64,
            head: prev,
            state_hash: referee.game().state_hash(),
            signed: None,
        };
        let _: LogHash = header.head;
        render(&header, &lines)
    }

    /// A whole game: both sides contribute, the German assault group goes down the sewer and
    /// moves (a lost dr, and a Sewer Emergence dr at the end of the MPh), a Russian
    /// adjudication accepted and one disputed, an undo, and every step to the end of the game.
    pub(crate) fn full_game() -> Referee {
        let mut r = start(7);
        play(
            &mut r,
            Side::A,
            Command::ContributeEntropy { nonce: [1; 32] },
        );
        play(
            &mut r,
            Side::B,
            Command::ContributeEntropy { nonce: [2; 32] },
        );
        to_german_mph(&mut r);
        let moved = play(
            &mut r,
            Side::A,
            Command::Move {
                units: vec!["g3".into()],
                to: hex("20A3"),
            },
        );
        assert!(matches!(moved[0], Event::UnitMoved(_)));
        let from = r.game().version;
        play(&mut r, Side::A, Command::RequestUndo { from });
        play(&mut r, Side::B, Command::ConsentToUndo);
        play(
            &mut r,
            Side::A,
            Command::SewerMove {
                units: vec!["g1".into(), "g2".into(), "gl".into()],
                to: hex("20E4"),
            },
        );
        if let Some(d) = r.game().sewer_designation.clone() {
            play(
                &mut r,
                Side::B,
                Command::DesignateSewer { to: d.options[0] },
            );
        }
        done(&mut r); // MPh ends: Sewer Emergence
        let pin = play(
            &mut r,
            Side::B,
            Command::Adjudicate {
                unit: "g3".into(),
                outcome: game::command::Outcome::Pin,
                note: "DFPh 4 FP, PTC failed".into(),
            },
        );
        assert_eq!(pin.len(), 1);
        let pinned = r.game().version;
        play(
            &mut r,
            Side::A,
            Command::AcceptAdjudication { event: pinned },
        );
        play(
            &mut r,
            Side::B,
            Command::DeclareAttack {
                firers: vec!["r1".into()],
                target: hex("20A2"),
                into_sewer: false,
            },
        );
        play(&mut r, Side::B, Command::ResolveAttack);
        let eliminated = play(
            &mut r,
            Side::B,
            Command::Adjudicate {
                unit: "g3".into(),
                outcome: game::command::Outcome::Eliminate,
                note: "Casualty Reduction of a half-squad".into(),
            },
        );
        // The adjudication is the command's first event; what follows from it by rule (a DM
        // counter lifted, A10.62) comes after.
        assert!(matches!(eliminated[0], Event::OutcomeAdjudicated(_)));
        let broke = r.game().version + 1 - eliminated.len() as u64;
        play(
            &mut r,
            Side::A,
            Command::DisputeAdjudication {
                event: broke,
                reason: "A2 is out of r1's range".into(),
            },
        );
        while !r.game().over {
            done(&mut r);
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;
    use crate::fair_dice::roll_key;
    use game::dice::derive_die;
    use game::event::{DiceCommitted, DiceRolled, SeedRevealed};

    fn rolls(events: &[Event]) -> Vec<&game::dice::Roll> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::DiceRolled(DiceRolled { roll }) => Some(roll),
                _ => None,
            })
            .collect()
    }

    const TOY: &str = include_str!("../../../scenarios/b9-41-wall-advantage.toml");

    /// The whole game replayed from the referee's log.
    fn replayed(r: &Referee) -> Game {
        Game::replay(r.entries().iter().map(|e| &e.event)).unwrap()
    }

    /// Recording a decision takes the positions its look-ahead built instead of applying any of
    /// its events again (issue 55): the one after its last event, and the one after each event
    /// before it (`Decision::along`), multi-event decisions included (a step's end and the
    /// steps that pass after it, the seed's reveal after the game's end). Each is the position
    /// applying the log's events gives, the undo trail too (`take_entry` also checks each
    /// against applying its event, in every debug build), and the whole game is the replay's.
    #[test]
    fn a_decision_is_recorded_as_its_look_ahead_left_the_game() {
        let mut r = start_with(TOY, 1);
        let (mut decided, mut taken, mut several) = (0, 0, 0);
        while !r.game().over {
            decided += 1;
            let (side, command) = rules::moving_on(r.game());
            let decision = r.decide(side, &command, &mut seeds()).unwrap();
            let last = r.game().version + decision.events.len() as u64;
            let after = decision.after.clone();
            let along = decision.along.clone();
            // What applying each event in turn gives, from the game the decision was made on.
            let mut applied = vec![];
            let mut game = r.game().clone();
            for (event, _) in &decision.events {
                apply(&mut game, event);
                applied.push(game.clone());
            }
            if after.is_none() {
                // Only a commitment put before the rules' events leaves the look-ahead out.
                assert!(matches!(decision.events[0].0, Event::DiceCommitted(_)));
                assert!(along.is_empty());
                decided -= 1;
            }
            r.record(decision);
            if let Some(after) = after {
                assert_eq!(after.version, last);
                assert_eq!(*r.game(), *after);
                assert_eq!(
                    along.len() + 1,
                    applied.len(),
                    "a position after each event"
                );
                for (kept, applied) in along.iter().zip(&applied) {
                    assert_eq!(kept, applied, "at {}", applied.version);
                    assert!(kept.undo_trail.same_as(&applied.undo_trail));
                    assert_eq!(kept.state_hash(), applied.state_hash());
                }
                several += usize::from(!along.is_empty());
                taken += 1;
            }
            assert_eq!(r.game().state_hash(), replayed(&r).state_hash());
        }
        assert!(taken > 0);
        assert!(several > 0, "some decisions have several events");
        assert_eq!(
            taken, decided,
            "every decision but a commitment's recorded by its look-ahead"
        );
    }

    /// A decision recorded on a position other than the one it was made on (which a server,
    /// one writer per game, never does) is applied: its look-ahead is of another game.
    #[test]
    fn a_decision_recorded_on_another_position_is_applied() {
        let mut r = start_with(TOY, 1);
        let (side, command) = rules::moving_on(r.game());
        let stale = r.decide(side, &command, &mut seeds()).unwrap();
        assert!(stale.after.is_some());
        let fresh = r.decide(side, &command, &mut seeds()).unwrap();
        r.record(fresh);
        r.record(stale);
        assert_eq!(r.game().state_hash(), replayed(&r).state_hash());
    }

    #[test]
    fn the_first_roll_brings_the_commitment_and_dice_come_from_seed_and_contributions() {
        let mut r = start(7);
        let shown = r.commitment();
        assert_eq!(shown, Commitment::to(&[7; 32]));
        to_german_mph(&mut r);
        assert!(
            r.ledger().open().is_none(),
            "nothing needed the commitment yet"
        );
        let version = r.game().version;
        let events = play(
            &mut r,
            Side::A,
            Command::SewerMove {
                units: vec!["g1".into(), "g2".into(), "gl".into()],
                to: hex("20E4"),
            },
        );
        assert_eq!(
            events[0],
            Event::DiceCommitted(DiceCommitted { commitment: shown }),
            "the commitment shown before is logged first"
        );
        assert_eq!(
            r.entries()[version as usize].by,
            None,
            "the server's own event"
        );
        assert_eq!(r.entries()[version as usize + 1].by, Some(Side::A));
        assert!(r
            .entries()
            .iter()
            .skip(version as usize)
            .all(|e| e.first == version + 1));
        let roll = rolls(&events)[0];
        assert_eq!(
            roll.dice[0],
            derive_die(&roll_key(&[7; 32], &[None, None]), roll.first_draw)
        );

        // A contribution changes the key of every later roll.
        let mut other = start(7);
        play(
            &mut other,
            Side::B,
            Command::ContributeEntropy { nonce: [9; 32] },
        );
        assert!(matches!(other.entries()[1].event, Event::DiceCommitted(_)));
        to_german_mph(&mut other);
        let key = other.ledger().key(&[7; 32]);
        assert_eq!(key, roll_key(&[7; 32], &[None, Some([9; 32])]));
    }

    #[test]
    fn the_seed_is_revealed_when_the_game_ends_and_checks_every_roll() {
        let r = full_game();
        let last = &r.entries().last().unwrap().event;
        assert_eq!(last, &Event::SeedRevealed(SeedRevealed { seed: [7; 32] }));
        let (verified, pending) = r.ledger().rolls();
        assert!(verified >= 2, "the lost dr and the Emergence dr");
        assert_eq!(pending, 0);
    }

    /// A game ended early reveals its seed as one that ran its course does: by a
    /// concession, and by agreement.
    #[test]
    fn the_seed_is_revealed_when_the_game_ends_early() {
        for ending in [
            vec![(Side::A, Command::Concede)],
            vec![
                (Side::B, Command::ProposeEnd),
                (Side::A, Command::AcceptEnd),
            ],
        ] {
            let mut r = start(7);
            play(
                &mut r,
                Side::B,
                Command::ContributeEntropy { nonce: [9; 32] },
            );
            for (side, command) in ending {
                play(&mut r, side, command);
            }
            assert!(r.game().over);
            let last = &r.entries().last().unwrap().event;
            assert_eq!(last, &Event::SeedRevealed(SeedRevealed { seed: [7; 32] }));
        }
    }

    #[test]
    fn a_dice_free_game_logs_no_commitment_and_reveals_nothing() {
        let mut r = start(1);
        while !r.game().over {
            done(&mut r);
        }
        assert!(r
            .entries()
            .iter()
            .all(|e| !matches!(e.event, Event::DiceCommitted(_) | Event::SeedRevealed(_))));
    }

    #[test]
    fn agreeing_to_reveal_opens_a_new_seed_and_contributions_start_again() {
        let mut r = start(7);
        play(
            &mut r,
            Side::A,
            Command::ContributeEntropy { nonce: [1; 32] },
        );
        to_german_mph(&mut r);
        let refused = r
            .play(Side::A, &Command::AgreeToRevealSeed, &mut seeds())
            .unwrap_err();
        assert!(
            refused.detail.contains("no die has been rolled"),
            "{refused}"
        );
        play(
            &mut r,
            Side::A,
            Command::SewerMove {
                units: vec!["g1".into(), "g2".into(), "gl".into()],
                to: hex("20E4"),
            },
        );
        play(&mut r, Side::A, Command::AgreeToRevealSeed);
        assert!(r.ledger().open().unwrap().rolls.len() == 1);
        let events = play(&mut r, Side::B, Command::AgreeToRevealSeed);
        assert_eq!(
            events[1],
            Event::SeedRevealed(SeedRevealed { seed: [7; 32] })
        );
        assert_eq!(
            events[2],
            Event::DiceCommitted(DiceCommitted {
                commitment: Commitment::to(&[101; 32])
            })
        );
        assert_eq!(r.commitment(), Commitment::to(&[101; 32]));
        assert_eq!(r.ledger().contributions(), [None, None]);
        assert_eq!(r.seeds().len(), 2);
        // A side may contribute again under the new seed.
        play(
            &mut r,
            Side::A,
            Command::ContributeEntropy { nonce: [3; 32] },
        );
        // The log reloads to the same referee.
        let again = Referee::load(r.entries().to_vec(), r.seeds().to_vec()).unwrap();
        assert_eq!(again.game(), r.game());
        assert_eq!(again.commitment(), r.commitment());
        // Without the seed of the open commitment, the game cannot be served.
        let err = Referee::load(r.entries().to_vec(), vec![[7; 32]]).unwrap_err();
        assert!(matches!(err, RefereeError::SeedMissing(_)), "{err}");
    }
}

//! One game's session: its referee, its viewers' streams, its checkpoints and its exactly-once
//! command keys, with no IO in it. No tokio, no store, no clock, no OS randomness: what comes
//! from outside (the randomness a command draws, and later the time) arrives as arguments, and
//! what goes out (records to store, frames to send) leaves as data. The game's task
//! (`crate::games::task`) does the IO around it: inboxes, the store's append, signing, delivery.
//!
//! A command goes through it in two steps, so nothing changes until the store says so:
//! - [`Session::propose`]: the viewer's ids turned into the log's, the command decided, its
//!   envelopes sealed and its frames' sizes checked. Nothing changes; a proposal that is never
//!   committed (refused, or its append failed) leaves no trace.
//! - [`Session::commit`]: once the proposal's records are stored, each event is recorded once
//!   (`Referee::record_with`), kept in every viewer's stream, and each viewer's new frames are
//!   returned in log order.
//!
//! [`Session::read`] answers everything that only reads: states, log and record pages, past
//! positions, previews, LOS.

use crate::games::command_keys::{self, CommandDigest, Made, Remembered};
use crate::games::frames::{self, within_page};
use crate::store::envelope::{self, VerifiedLog};
use protocol::chain::{Entry, LogHash, Salt};
use protocol::game::{view, Game, Viewer};
use protocol::record::referee::Decision;
use protocol::record::stream::{self, Following, StreamHash, Streams, VIEWERS};
use protocol::referee::Referee;
use protocol::wire::{
    ErrorCode, Position, PreviewOutcome, RecordEntry, Sequenced, ServerMessage, LOG_PAGE_EVENTS_MAX,
};
use protocol::{Command, RuleViolation, Side};
use std::sync::OnceLock;

/// The randomness a command draws, from outside the session: the task draws it from the
/// operating system, a test from a script.
pub trait Entropy {
    /// A dice seed for a new epoch (`docs/dice.md`).
    fn seed(&mut self) -> protocol::fair_dice::Seed;
    /// The salt of one stored envelope.
    fn salt(&mut self) -> Salt;
}

/// A command as a side submitted it.
#[derive(Clone, Debug)]
pub struct Submitted {
    pub side: Side,
    /// The client's id for the command, echoed in the answer.
    pub id: u64,
    /// In the side's own terms: its stream's event numbers, the aliases it knows.
    pub command: Command,
    /// The client's exactly-once key, if it gave one (`crate::games::command_keys`).
    pub key: Option<u64>,
    /// The server's time at submission (milliseconds since the Unix epoch), which a game
    /// with a time control charges its clocks by: the session never reads a clock of its own.
    pub now: Option<u64>,
}

/// A command decided and sealed, not yet stored: the task appends [`Proposal::records`] and
/// only then hands the proposal to [`Session::commit`].
#[derive(Debug)]
pub struct Proposal {
    /// The log sequence of the first record.
    pub first: u64,
    /// The sealed envelopes to append, in order.
    pub records: Vec<Vec<u8>>,
    hashes: Vec<LogHash>,
    decision: Decision,
    id: u64,
    sent: Option<CommandDigest>,
    /// The game's units and weapons in bytes after it, when the frame check measured them
    /// (`frames::check_command`): kept with the log's head once committed.
    maps: Option<frames::Measured>,
}

impl Proposal {
    /// A dice seed for the epoch the command opens: stored (with the game's metadata) before
    /// the records, which commit to it.
    pub fn new_seed(&self) -> Option<protocol::fair_dice::Seed> {
        self.decision.new_seed
    }

    pub fn side(&self) -> Side {
        self.decision.issued.by
    }
}

/// What a proposal will make of the game, worked out before it is stored: the position after
/// it, and each side's new events as its own stream will hold them, with that stream's length
/// then. The turn notices a command owes come from this, so that they are stored with its
/// records (`crate::notify::Watch::foresee`).
#[derive(Debug)]
pub struct Foreseen {
    pub after: Game,
    /// The German's (A) and the Russian's (B) new events, each as its side is shown them.
    pub heard: [Vec<protocol::Event>; 2],
    /// Each side's stream length (its version) once the proposal is committed.
    pub versions: [u64; 2],
}

/// Why a command has nothing to store: the answer for its sender instead.
#[derive(Debug)]
pub enum Unproposed {
    /// Sent again under a key the session remembers: the `Accepted` it was first answered
    /// with, as the sender's stream holds it now (its receipt, `signed`, still to sign).
    Again(Box<ServerMessage>),
    /// Refused: by the rules (`Refused`, in the sender's words), or an `Error` (a key used by
    /// another command, a frame too large). `limit` names the limit that refused it, if one did.
    Refused {
        message: Box<ServerMessage>,
        limit: Option<&'static str>,
    },
}

/// What a committed command sends: the sender's `Accepted` (its receipt, `signed`, still to
/// sign) and every viewer's new `Event` frames, in log order. Nothing at all in a game whose
/// streams nobody has read (see [`Session::commit`]).
#[derive(Debug)]
pub struct Committed {
    pub side: Side,
    /// `None` when no viewer's stream is followed: nobody joined, so nobody waits for it.
    pub accepted: Option<ServerMessage>,
    /// Per viewer in [`VIEWERS`]' order: the events of the command that viewer may know, as
    /// its stream numbers them. A viewer who may know none is sent nothing.
    pub broadcasts: [Vec<ServerMessage>; 3],
}

impl Committed {
    /// The frames for `viewer`.
    pub fn for_viewer(&self, viewer: Viewer) -> &[ServerMessage] {
        &self.broadcasts[stream::index(viewer)]
    }
}

/// A request that only reads the game.
#[derive(Clone, Debug)]
pub enum Read {
    /// The position now, with the clocks as they stand at the server's time `now`.
    State {
        viewer: Viewer,
        now: u64,
    },
    Log {
        viewer: Viewer,
        from: u64,
    },
    StateAt {
        viewer: Viewer,
        version: u64,
    },
    Record {
        viewer: Viewer,
        from: u64,
    },
    /// What a side's command would do, decided and not done.
    Preview {
        side: Side,
        id: u64,
        command: Command,
        /// The server's time, as the command itself would be decided at.
        now: Option<u64>,
    },
    Los {
        from: protocol::Hex,
        to: protocol::Hex,
    },
}

/// One game, everything about it that is not IO.
pub struct Session {
    /// The game, its log with who issued each event, and its dice (`protocol::referee`).
    referee: Referee,
    /// The hash of each event's envelope, in the referee's order: the log's head at each of
    /// its versions (for exports; never sent to a viewer).
    log: Vec<LogHash>,
    /// The viewers' own streams: the events each may know, projected once, numbered and
    /// hashed per viewer (`protocol::record::stream`). The two sides' are built from the log
    /// when something first reads them, then kept in step with every event committed: a game
    /// loaded and never joined (a restore's check, a replay, a game kept loaded because its
    /// clock runs) projects nothing, and its commands (the timer's `ExpireClock`) build
    /// nothing. A seat registered for turn notices and away does read its stream's length
    /// ([`Session::foresee`]), so a watched game builds its streams at its next command.
    /// The spectators' stream is built only when one joins or reads ([`Session::follow`]):
    /// until then no event is projected or hashed for it (issue 55: no viewer stream while
    /// nobody watches). Boxed, so that a game nobody has read holds a pointer's room for them,
    /// not a `Following`'s.
    streams: OnceLock<Box<Following>>,
    checkpoints: Checkpoints,
    /// The keys of the accepted commands, per seat, and what each made.
    remembered: Remembered,
    /// What the scenario lets a command's frames hold (`crate::games::frames`), measured when the
    /// first command asks.
    frame_bounds: OnceLock<frames::Bounds>,
    /// The game's units and weapons in bytes as the last exact frame check measured them, with
    /// the log's head they are of: the next check on that game starts from them.
    frame_maps: Option<(LogHash, frames::Measured)>,
    /// The node serving the game, named in `state` answers as its owner.
    owner: Option<String>,
}

/// Why a stored log does not make a game: each says what is wrong with the log.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    #[error("the log has a different number of hashes than of events")]
    Hashes,
    #[error("the log is empty")]
    Empty,
    #[error("the log does not start with GameCreated")]
    NotCreatedFirst,
    #[error("{0}")]
    Referee(#[from] protocol::referee::RefereeError),
    #[error("the dice in its log are damaged at {0}")]
    Dice(protocol::referee::RefereeError),
}

impl Session {
    /// A game rebuilt from its verified log: every event applied in order, as it was live,
    /// with the dice seeds from its metadata.
    pub fn from_log(
        verified: VerifiedLog,
        seeds: Vec<protocol::fair_dice::Seed>,
    ) -> Result<Session, LoadError> {
        // The envelopes' hashes are the log's heads as they are, one per event.
        let VerifiedLog {
            entries,
            hashes: log,
        } = verified;
        if log.len() != entries.len() {
            return Err(LoadError::Hashes);
        }
        let mut entries = entries.into_iter();
        let first = entries.next().ok_or(LoadError::Empty)?;
        if !matches!(first.event, protocol::Event::GameCreated(_)) {
            return Err(LoadError::NotCreatedFirst);
        }
        let mut referee = Referee::new(first, seeds)?;
        referee.reserve(entries.len());
        let mut checkpoints = Checkpoints::default();
        for entry in entries {
            referee.push_entry(entry).map_err(LoadError::Dice)?;
            checkpoints.keep(referee.game());
        }
        referee.check_seed()?;
        let remembered = Remembered::from_log(referee.entries());
        Ok(Session {
            referee,
            log,
            streams: OnceLock::new(),
            checkpoints,
            remembered,
            frame_bounds: OnceLock::new(),
            frame_maps: None,
            owner: None,
        })
    }

    /// Names `owner` as the node serving the game in `state` answers.
    pub fn owned_by(mut self, owner: Option<String>) -> Session {
        self.owner = owner;
        self
    }

    pub fn game(&self) -> &Game {
        self.referee.game()
    }

    pub fn referee(&self) -> &Referee {
        &self.referee
    }

    /// The log's head: the hash of its last envelope (for exports only).
    pub fn head(&self) -> LogHash {
        *self.log.last().expect("a log starts with GameCreated")
    }

    /// The followed viewers' streams, the sides' built from the whole log the first time they
    /// are asked for: the same streams as pushing each event as it was committed
    /// (`Streams::of_log`). The spectators' is there once [`Session::follow`] built it.
    pub fn streams(&self) -> &Streams {
        self.following().streams()
    }

    fn following(&self) -> &Following {
        self.streams
            .get_or_init(|| self.built_for(VIEWERS.map(|v| v != Viewer::Spectator)))
    }

    /// The streams of the viewers `followed` marks, built from the whole log in one replay.
    fn built_for(&self, followed: [bool; 3]) -> Box<Following> {
        Box::new(
            Following::of_log_for(self.events(), followed)
                .expect("a loaded log starts with GameCreated"),
        )
    }

    /// The whole log's events, in order.
    fn events(&self) -> impl Iterator<Item = &protocol::Event> {
        self.referee.entries().iter().map(|e| &e.event)
    }

    /// Keeps `viewer`'s stream from now on, built from the log if it was not kept: what a
    /// join or a read does before it reads the viewer's stream. The stream is the one it would
    /// be had the viewer been followed from the start.
    /// A game nobody has read yet builds the sides' streams and this one in the same replay.
    pub fn follow(&mut self, viewer: Viewer) {
        let Some(following) = self.streams.get() else {
            let built = self.built_for(VIEWERS.map(|v| v != Viewer::Spectator || v == viewer));
            let _ = self.streams.set(built);
            return;
        };
        if following.streams().follows(viewer) {
            return;
        }
        let events = self.referee.entries().iter().map(|e| &e.event);
        self.streams
            .get_mut()
            .expect("built above")
            .follow(viewer, events);
    }

    /// How many events `viewer` has received: its stream's length, the only version it is told.
    pub fn version(&self, viewer: Viewer) -> u64 {
        self.streams().len(viewer)
    }

    /// The running hash of `viewer`'s stream now.
    pub fn stream_head(&self, viewer: Viewer) -> StreamHash {
        self.streams().hash(viewer, self.version(viewer))
    }

    /// The viewer's projection now, carrying its own version.
    pub fn projection(&self, viewer: Viewer) -> Game {
        let mut state = self.game().project(viewer);
        state.version = self.version(viewer);
        state
    }

    /// Event `seq` of the viewer's stream.
    pub fn sequenced(&self, viewer: Viewer, seq: u64) -> Sequenced {
        let entry = &self.streams().of(viewer)[(seq - 1) as usize];
        Sequenced {
            seq,
            viewed: entry.viewed.clone(),
            hash: entry.hash,
        }
    }

    /// The viewer's events after `since`, as `Event` frames: a resume's catch-up.
    pub fn events_since(&self, viewer: Viewer, since: u64) -> Vec<ServerMessage> {
        (since + 1..=self.version(viewer))
            .map(|seq| ServerMessage::Event(self.sequenced(viewer, seq)))
            .collect()
    }

    /// What the scenario lets a command's frames hold, measured once (it encodes the whole
    /// scenario).
    fn frame_bounds(&self) -> frames::Bounds {
        *self
            .frame_bounds
            .get_or_init(|| frames::Bounds::of(self.game()))
    }

    /// Decides `submitted` and seals its envelopes, changing nothing: the proposal to store,
    /// or the answer its sender gets instead.
    pub fn propose(
        &self,
        submitted: Submitted,
        entropy: &mut dyn Entropy,
    ) -> Result<Proposal, Unproposed> {
        let Submitted {
            side,
            id,
            command,
            key,
            now,
        } = submitted;
        let viewer = Viewer::Side(side);
        // Sent again: answered with what it made the first time, and nothing is decided.
        if let Some(made) = key.and_then(|k| self.remembered.recall(side, k)) {
            // The events as the actor's own stream holds them, numbered as it numbers them:
            // the log's numbers would count the events hidden from it.
            let streams = self.streams();
            let first = streams.seq_at_or_before(viewer, made.first - 1) + 1;
            let last = streams.seq_at_or_before(viewer, made.last);
            if !self.same_command(side, &made, &command) {
                // Another command under a used key: answering with the old events would tell
                // the client its new command ran when it never did.
                return Err(Unproposed::Refused {
                    message: Box::new(ServerMessage::Error {
                        code: ErrorCode::KeyReused,
                        message: format!(
                            "command {id} not taken: its key was already used by another command of yours, accepted as events {first}..={last} of your record; give a new command a new key"
                        ),
                    }),
                    limit: None,
                });
            }
            return Err(Unproposed::Again(Box::new(ServerMessage::Accepted {
                id,
                version: self.version(viewer),
                events: (first..=last)
                    .map(|seq| self.sequenced(viewer, seq))
                    .collect(),
                head: self.stream_head(viewer),
                signed: None,
            })));
        }
        let sent = key.map(|_| command_keys::digest(&command));
        // Event numbers a player gives are its own stream's; the log has its own (and a
        // refusal speaks the player's again). Dice from the committed seed and the players'
        // contributions so far (`protocol::referee`, `docs/dice.md`).
        let decided = self.command_for_rules(side, command).and_then(|command| {
            self.referee
                .decide_at(side, &command, &mut || entropy.seed(), now)
        });
        let mut decision = match decided {
            Ok(decision) => decision,
            Err(violation) => {
                return Err(Unproposed::Refused {
                    message: Box::new(ServerMessage::Refused {
                        id,
                        version: self.version(viewer),
                        violation: self.refusal_for(viewer, violation),
                    }),
                    limit: None,
                })
            }
        };
        // The key goes with the command's first envelope, so a restart still knows it.
        decision.key = key;
        let first = self.game().version + 1;
        let entries = decision.entries(first);
        // Told as the sender may know it: another viewer's frame is not sized for him.
        let too_large = |why: frames::FrameError| Unproposed::Refused {
            message: Box::new(ServerMessage::Error {
                code: ErrorCode::TooLarge,
                message: format!(
                    "command {id} not taken: {}; nothing changed",
                    why.told_to(viewer)
                ),
            }),
            limit: Some("frame_bytes_max"),
        };
        let measured = self
            .frame_maps
            .filter(|(head, _)| *head == self.head())
            .map(|(_, maps)| maps);
        let maps = frames::check_command(
            self.game(),
            entries.iter().map(|e| &e.event),
            decision.after.as_deref().map(|after| frames::Path {
                along: &decision.along,
                after,
            }),
            self.frame_bounds(),
            measured,
            viewer,
        )
        .map_err(too_large)?;
        let mut prev = self.head();
        let mut records = Vec::with_capacity(entries.len());
        let mut hashes = Vec::with_capacity(entries.len());
        for entry in &entries {
            let (bytes, hash) = envelope::seal_entry(prev, entropy.salt(), entry);
            records.push(bytes);
            hashes.push(hash);
            prev = hash;
        }
        frames::check_envelopes(&records).map_err(too_large)?;
        Ok(Proposal {
            first,
            records,
            hashes,
            decision,
            id,
            sent,
            maps,
        })
    }

    /// What `proposal` will make of the game once committed, for each side (see
    /// [`Foreseen`]). Changes nothing; reads the positions the decision's look-ahead built
    /// (`rules::Decided::along`), and applies the events to a copy of the game only for a
    /// decision that kept none. The task asks only when a seat is watched for turn notices.
    pub fn foresee(&self, proposal: &Proposal) -> Foreseen {
        const SIDES: [Side; 2] = [Side::A, Side::B];
        let decision = &proposal.decision;
        let count = decision.events.len();
        let last = self.game().version + count as u64;
        let kept = decision
            .after
            .as_deref()
            .filter(|after| after.version == last && decision.along.len() + 1 == count);
        let mut at = std::borrow::Cow::Borrowed(self.game());
        let mut heard: [Vec<protocol::Event>; 2] = Default::default();
        for (i, (event, _)) in decision.events.iter().enumerate() {
            let position = kept.map(|after| decision.along.get(i).unwrap_or(after));
            let next = match position {
                Some(position) => std::borrow::Cow::Borrowed(position),
                None => {
                    let mut next = at.clone().into_owned();
                    protocol::apply(&mut next, event);
                    std::borrow::Cow::Owned(next)
                }
            };
            for (heard, side) in heard.iter_mut().zip(SIDES) {
                if let Some(viewed) = view::project_event(&at, &next, Viewer::Side(side), event) {
                    heard.push(viewed.event);
                }
            }
            at = next;
        }
        let after = at.into_owned();
        let versions = [0, 1].map(|i| self.version(Viewer::Side(SIDES[i])) + heard[i].len() as u64);
        Foreseen {
            after,
            heard,
            versions,
        }
    }

    /// Records a stored proposal: each event applied once, kept in every viewer's stream and
    /// in the checkpoints, its key remembered; returns what each viewer is sent.
    ///
    /// A game nobody has joined since it was loaded (one kept loaded only because its clock
    /// runs, whose timer records `ExpireClock`) has no streams, and commit builds none: there
    /// is nobody to send a frame to, and every viewer who joins later gets its stream built
    /// from the log, these events included, as it would have been kept in step.
    ///
    /// The proposal must be the latest made on this session, stored as it was sealed.
    pub fn commit(&mut self, proposal: Proposal) -> Committed {
        let Proposal {
            first,
            records: _,
            hashes,
            decision,
            id,
            sent,
            maps,
        } = proposal;
        assert_eq!(
            first,
            self.game().version + 1,
            "a proposal is committed on the position it was made on"
        );
        let side = decision.issued.by;
        let key = decision.key;
        // Only a command sent under a key is remembered, with its digest in the log's form.
        let logged = key.map(|_| command_keys::digest(&decision.issued.command));
        // A viewer not followed is sent nothing (nobody reads its stream): `None` for it.
        let heard_before = self.streams.get().map(|f| {
            let streams = f.streams();
            VIEWERS.map(|viewer| streams.follows(viewer).then(|| streams.len(viewer)))
        });
        self.log.extend(hashes);
        if let Some(maps) = maps {
            self.frame_maps = Some((self.head(), maps));
        }
        let checkpoints = &mut self.checkpoints;
        // Streams not built yet are built from the log, these events included, when read.
        let mut following = self.streams.get_mut();
        let last = *self
            .referee
            .record_with(decision, |before, game, entry| {
                checkpoints.keep(game);
                if let Some(following) = following.as_deref_mut() {
                    following.push(before, game, &entry.event);
                }
            })
            .end();
        if let Some(key) = key {
            let made = Made {
                first,
                last,
                logged,
                sent,
            };
            self.remembered.remember(side, key, made);
        }
        let Some(heard_before) = heard_before else {
            return Committed {
                side,
                accepted: None,
                broadcasts: Default::default(),
            };
        };
        // Each viewer's new events, in log order; a viewer who may know none is sent nothing.
        let new_for = |viewer: Viewer| {
            heard_before[stream::index(viewer)]
                .map(|before| before + 1..=self.version(viewer))
                .into_iter()
                .flatten()
        };
        let broadcasts = VIEWERS.map(|viewer| {
            new_for(viewer)
                .map(|seq| ServerMessage::Event(self.sequenced(viewer, seq)))
                .collect()
        });
        let actor = Viewer::Side(side);
        let accepted = Some(ServerMessage::Accepted {
            id,
            version: self.version(actor),
            events: new_for(actor)
                .map(|seq| self.sequenced(actor, seq))
                .collect(),
            head: self.stream_head(actor),
            signed: None,
        });
        Committed {
            side,
            accepted,
            broadcasts,
        }
    }

    /// Answers a request that only reads.
    /// A viewer's read follows its stream first (a spectator's builds it from the log).
    pub fn read(&mut self, read: Read) -> ServerMessage {
        match &read {
            Read::State { viewer, .. }
            | Read::Log { viewer, .. }
            | Read::StateAt { viewer, .. }
            | Read::Record { viewer, .. } => self.follow(*viewer),
            Read::Preview { .. } | Read::Los { .. } => {}
        }
        match read {
            Read::State { viewer, now } => self.state_message(viewer, now),
            Read::Log { viewer, from } => ServerMessage::Log {
                version: self.version(viewer),
                events: within_page(
                    self.page(viewer, from)
                        .map(|seq| self.sequenced(viewer, seq)),
                ),
            },
            Read::StateAt { viewer, version } => self.state_at(viewer, version),
            Read::Record { viewer, from } => self.record_page(viewer, from),
            Read::Preview {
                side,
                id,
                command,
                now,
            } => self.preview(side, id, command, now),
            Read::Los { from, to } => protocol::wire::los_answer(self.game(), from, to),
        }
    }

    fn state_message(&self, viewer: Viewer, now: u64) -> ServerMessage {
        let state = self.projection(viewer);
        ServerMessage::State {
            version: state.version,
            state_hash: state.state_hash(),
            head: self.streams().hash(viewer, state.version),
            state: Box::new(Position::from(state)),
            owner: self.owner.clone(),
            clocks: crate::operations::clock::view(self.game(), now),
        }
    }

    /// The numbers of the viewer's stream a page of the log or the record starting at `from`
    /// holds.
    fn page(&self, viewer: Viewer, from: u64) -> std::ops::RangeInclusive<u64> {
        let from = from.max(1);
        from..=self
            .version(viewer)
            .min(from.saturating_add(LOG_PAGE_EVENTS_MAX - 1))
    }

    fn record_page(&self, viewer: Viewer, from: u64) -> ServerMessage {
        let stream = self.streams().of(viewer);
        let sides = protocol::record::words::Sides::of(&self.game().scenario);
        let entries = within_page(self.page(viewer, from).map(|seq| {
            let entry = &stream[(seq - 1) as usize];
            RecordEntry {
                seq,
                event: entry.viewed.event.clone(),
                text: entry.text(&sides),
                when: entry.when(&sides),
            }
        }));
        ServerMessage::Record {
            version: self.version(viewer),
            entries,
        }
    }

    /// The position after the viewer's event `version` (kept within 1 and its last), rebuilt
    /// by replaying the log up to that event through `apply` as any replay does, then
    /// projected for `viewer` as it was then.
    fn state_at(&self, viewer: Viewer, version: u64) -> ServerMessage {
        let version = version.clamp(1, self.version(viewer));
        let at = self
            .streams()
            .at(viewer, version)
            .expect("every viewer's stream starts with GameCreated");
        let game = self.checkpoints.replay(self.referee.entries(), at);
        let mut state = game.project(viewer);
        state.version = version;
        ServerMessage::State {
            version,
            state_hash: state.state_hash(),
            state: Box::new(Position::from(state)),
            head: self.streams().hash(viewer, version),
            owner: self.owner.clone(),
            // A past position is shown without clocks: they are the game's now.
            clocks: None,
        }
    }

    /// What `command` would do for `side`: decided as a command is, with nothing appended,
    /// applied or rolled (`protocol::preview`); a refusal in the same words a command's.
    fn preview(&self, side: Side, id: u64, command: Command, now: Option<u64>) -> ServerMessage {
        let viewer = Viewer::Side(side);
        let outcome = match self.command_for_rules(side, command).and_then(|command| {
            protocol::preview::preview_at(self.game(), self.referee.entries(), side, &command, now)
        }) {
            Ok(preview) => PreviewOutcome::Allowed(preview),
            Err(violation) => PreviewOutcome::Refused(self.refusal_for(viewer, violation)),
        };
        ServerMessage::Previewed {
            id,
            version: self.version(viewer),
            outcome,
        }
    }

    /// Whether `command`, sent again under a remembered key, is the command that key was
    /// accepted with: the same as sent, or (after a reload, when only the log's form is
    /// known) the same once put in the log's ids. A key from before commands were logged
    /// cannot be told, and is taken as the same.
    fn same_command(&self, side: Side, made: &Made, command: &Command) -> bool {
        if made.sent == Some(command_keys::digest(command)) {
            return true;
        }
        match made.logged {
            None => made.sent.is_none(),
            Some(logged) => self
                .command_for_rules(side, command.clone())
                .is_ok_and(|in_log| command_keys::digest(&in_log) == logged),
        }
    }

    /// A side's command as the rules read it: event numbers from its own stream to the log's,
    /// aliases to the units' ids.
    /// The side's stream is read only for a command that names one of its events, so the
    /// clock's own `ExpireClock` in a game nobody watches builds no stream.
    fn command_for_rules(&self, side: Side, command: Command) -> Result<Command, RuleViolation> {
        stream::command_in_log(command, |n| self.streams().at(Viewer::Side(side), n))
            .map(|command| view::command_in_ids(self.game(), side, command))
    }

    /// A refusal in the viewer's words. Its typed pieces are rendered for the viewer: a unit
    /// by the name the viewer knows it by (unnamed if it may not know it), an event by the
    /// viewer's own number for that very event (unnamed if it was not shown it). A refusal
    /// without pieces names no unit and no event (every one that does is built from pieces,
    /// `hidden.rs: no_refusal_names_a_unit_in_prose`), so it is sent as it is: no prose is
    /// scanned for ids.
    pub fn refusal_for(&self, viewer: Viewer, mut violation: RuleViolation) -> RuleViolation {
        if !violation.pieces.is_empty() {
            violation.detail = violation.render(
                |id| view::name_for(self.game(), viewer, id),
                |at| self.streams().seq_of(viewer, at),
            );
        }
        violation
    }
}

/// Positions kept along the log so that `get_state_at` replays a bounded stretch of it, not the
/// whole game: an audience asking for past positions costs the game task little, however long
/// the game. At most [`CHECKPOINTS_MAX`] are kept; when more would be, every other is dropped
/// and the spacing doubles, so memory stays bounded and a replay at most a few hundred events
/// for any game a player could play.
struct Checkpoints {
    every: u64,
    games: Vec<Game>,
}

/// Positions kept per game for `get_state_at`.
pub const CHECKPOINTS_MAX: usize = 32;

/// The first spacing of checkpoints, in versions.
const CHECKPOINT_EVERY: u64 = 64;

impl Default for Checkpoints {
    fn default() -> Checkpoints {
        Checkpoints {
            every: CHECKPOINT_EVERY,
            games: vec![],
        }
    }
}

impl Checkpoints {
    /// Keeps `game` if its version is on the spacing.
    fn keep(&mut self, game: &Game) {
        if !game.version.is_multiple_of(self.every) {
            return;
        }
        self.games.push(game.clone());
        if self.games.len() > CHECKPOINTS_MAX {
            self.every *= 2;
            let every = self.every;
            self.games.retain(|g| g.version.is_multiple_of(every));
        }
    }

    /// The position at `version`, from the nearest checkpoint at or before it.
    fn replay(&self, entries: &[Entry], version: u64) -> Game {
        let base = self.games.iter().rev().find(|g| g.version <= version);
        match base {
            Some(base) => {
                let mut game = base.clone();
                for entry in &entries[base.version as usize..version as usize] {
                    protocol::apply(&mut game, &entry.event);
                }
                game
            }
            None => Game::replay(entries[..version as usize].iter().map(|e| &e.event))
                .expect("a loaded log starts with GameCreated"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::event::GameCreated;
    use protocol::Event;
    use protocol::ReadScenario;

    /// A position rebuilt from a checkpoint is the position replayed from the start, at every
    /// version, while the checkpoints thin out as the game grows.
    #[test]
    fn positions_from_checkpoints_are_the_replayed_positions() {
        let text = include_str!("../../../scenarios/b9-41-wall-advantage.toml");
        let scenario =
            protocol::Scenario::from_toml(&text.replace("turns = 2\n", "turns = 30\n")).unwrap();
        let mut entries = vec![protocol::chain::Entry::created(scenario)];
        let mut game = Game::replay(entries.iter().map(|e| &e.event)).unwrap();
        let mut checkpoints = Checkpoints::default();
        let mut dice = protocol::ScriptedDice::default();
        while !game.over && game.version < 3_000 {
            let side = game.acting();
            let command = match &game.wa_chance {
                Some(chance) => (chance.side, protocol::Command::DeclineWallAdvantage),
                None => (side, protocol::Command::Done),
            };
            for event in protocol::decide(&game, command.0, &command.1, &mut dice).unwrap() {
                protocol::apply(&mut game, &event);
                entries.push(protocol::chain::Entry {
                    seq: game.version,
                    by: Some(command.0),
                    first: game.version,
                    key: None,
                    command: None,
                    event,
                });
                checkpoints.keep(&game);
            }
        }
        assert!(game.version > CHECKPOINT_EVERY * 4, "{}", game.version);
        assert!(checkpoints.games.len() <= CHECKPOINTS_MAX);
        for version in (1..=game.version).step_by(7).chain([game.version]) {
            let replayed =
                Game::replay(entries[..version as usize].iter().map(|e| &e.event)).unwrap();
            let from_checkpoint = checkpoints.replay(&entries, version);
            assert_eq!(
                from_checkpoint.state_hash(),
                replayed.state_hash(),
                "at {version}"
            );
        }
    }

    /// A game of the sewer scenario played through a referee as a server plays it: a move
    /// taken back, the German assault group in the sewers (hidden from the Russian), an
    /// adjudication answered, and every step to the end.
    fn played() -> Referee {
        let text = include_str!("../../../scenarios/sewer-infiltration.toml");
        let scenario = protocol::Scenario::from_toml(text).unwrap();
        let created = protocol::chain::Entry::created(scenario);
        let mut referee = Referee::new(created, vec![[7; 32]]).unwrap();
        fn play(referee: &mut Referee, side: Side, command: Command) {
            // A new epoch's seed, different for every epoch.
            let mut fresh = || [100 + referee.seeds().len() as u8; 32];
            let decision = referee.decide(side, &command, &mut fresh);
            let decision = decision.unwrap_or_else(|v| panic!("{command:?} refused: {v}"));
            referee.record(decision);
        }
        fn done(referee: &mut Referee) {
            match referee.game().sewer_designation.clone() {
                Some(d) => play(
                    referee,
                    d.defender,
                    Command::DesignateSewer { to: d.options[0] },
                ),
                None => play(referee, referee.game().acting(), Command::Done),
            }
        }
        let hex = |name: &str| name.parse::<protocol::Hex>().unwrap();
        while referee.game().clock.phase() != protocol::phase::Phase::Movement {
            done(&mut referee);
        }
        let moved = Command::Move {
            units: vec!["g3".into()],
            to: hex("20A3"),
        };
        play(&mut referee, Side::A, moved);
        let from = referee.game().version;
        play(&mut referee, Side::A, Command::RequestUndo { from });
        play(&mut referee, Side::B, Command::ConsentToUndo);
        let sewer = Command::SewerMove {
            units: vec!["g1".into(), "g2".into(), "gl".into()],
            to: hex("20E4"),
        };
        play(&mut referee, Side::A, sewer);
        done(&mut referee);
        let pin = Command::Adjudicate {
            unit: "g3".into(),
            outcome: protocol::Outcome::Pin,
            note: "DFPh 4 FP, PTC failed".into(),
        };
        play(&mut referee, Side::B, pin);
        let event = referee.game().version;
        play(&mut referee, Side::A, Command::AcceptAdjudication { event });
        while !referee.game().over {
            done(&mut referee);
        }
        referee
    }

    /// The streams a game loaded from its log builds when first read are the ones pushing
    /// each event as it was appended made: the same entries, numbers and hashes per viewer.
    #[test]
    fn streams_built_when_first_read_are_the_streams_pushed_event_by_event() {
        let referee = played();
        let mut eager = Streams::new();
        let mut before = Game::new(match &referee.entries()[0].event {
            Event::GameCreated(GameCreated { scenario }) => scenario.clone(),
            _ => unreachable!(),
        });
        for entry in referee.entries() {
            let mut after = before.clone();
            protocol::apply(&mut after, &entry.event);
            eager.push(&before, &after, &entry.event);
            before = after;
        }
        let mut prev = envelope::GENESIS;
        let records: Vec<(u64, Vec<u8>)> = referee
            .entries()
            .iter()
            .map(|entry| {
                let (bytes, hash) = envelope::seal_entry(prev, [entry.seq as u8; 16], entry);
                prev = hash;
                (entry.seq, bytes)
            })
            .collect();
        let mut session = Session::from_log(
            envelope::verify(&records).unwrap(),
            referee.seeds().to_vec(),
        )
        .unwrap();
        assert_eq!(session.game().state_hash(), referee.game().state_hash());
        assert_eq!(session.head(), prev);
        assert!(session.streams.get().is_none(), "nothing read them yet");
        for viewer in VIEWERS {
            session.follow(viewer);
        }
        assert_eq!(*session.streams(), eager);
        // The viewers' streams differ (the Russian sees the group in the sewers by alias),
        // and the taken-back move and the answered adjudication are in them.
        let viewed = |viewer| {
            eager
                .of(viewer)
                .iter()
                .map(|e| &*e.viewed)
                .collect::<Vec<_>>()
        };
        assert_ne!(viewed(Viewer::Side(Side::A)), viewed(Viewer::Side(Side::B)));
        let events = |viewer| {
            eager
                .of(viewer)
                .iter()
                .map(|e| e.viewed.event.name())
                .collect::<Vec<_>>()
        };
        for viewer in VIEWERS {
            assert!(events(viewer).contains(&"EventsUndone"), "{viewer:?}");
            assert!(
                events(viewer).contains(&"AdjudicationAccepted"),
                "{viewer:?}"
            );
        }
    }

    /// A timed game loaded from its stored log (`GameCreated`, `ClockStarted`).
    fn timed_session(toml: &str, control: &str, started: u64) -> Session {
        let scenario = protocol::Scenario::from_toml(toml).unwrap();
        let control = protocol::board::time_control::TimeControl::parse(control).unwrap();
        let entries = [
            Entry::created(scenario),
            Entry::clock_started(control, started),
        ];
        let mut prev = envelope::GENESIS;
        let records: Vec<(u64, Vec<u8>)> = entries
            .iter()
            .map(|entry| {
                let (bytes, hash) = envelope::seal_entry(prev, [entry.seq as u8; 16], entry);
                prev = hash;
                (entry.seq, bytes)
            })
            .collect();
        Session::from_log(envelope::verify(&records).unwrap(), vec![[7; 32]]).unwrap()
    }

    /// A game kept loaded only because its clock runs holds no viewer's stream: its commands,
    /// the clock's own `ExpireClock` among them, build none and make no frame. The first
    /// join builds every stream from the log, the same streams (entries, numbers, hashes) a
    /// game joined from the start kept in step event by event.
    #[test]
    fn a_game_nobody_watches_holds_no_streams_and_a_join_builds_the_followed_ones() {
        let started = 1_000_000;
        let unwatched = &mut timed_session(VILLAGE, "live:1m", started);
        let watched = &mut timed_session(VILLAGE, "live:1m", started);
        // The watched game is joined from the start, by both players and a spectator.
        for viewer in VIEWERS {
            watched.follow(viewer);
        }
        assert!(unwatched.streams.get().is_none(), "loaded, never read");
        let at = |ms: u64| Some(started + ms);
        let commands = [
            // The RPh, whose German end step passes by itself (B9.322), and the Russian's.
            (Side::A, Command::Done, at(1_000)),
            (Side::B, Command::Done, at(2_000)),
            // The German's clock runs out: the timer's command, in the German's name.
            (Side::A, Command::ExpireClock, at(120_000)),
        ];
        for (side, command, now) in commands {
            let submit = || Submitted {
                side,
                id: 0,
                command: command.clone(),
                key: None,
                now,
            };
            let proposal = unwatched.propose(submit(), &mut Counting(0)).unwrap();
            let committed = unwatched.commit(proposal);
            assert!(
                committed.accepted.is_none(),
                "{command:?}: nobody to answer"
            );
            assert!(committed.broadcasts.iter().all(|b| b.is_empty()));
            assert!(
                unwatched.streams.get().is_none(),
                "{command:?} built a stream"
            );
            let proposal = watched.propose(submit(), &mut Counting(0)).unwrap();
            let committed = watched.commit(proposal);
            assert!(committed.accepted.is_some(), "{command:?}");
        }
        assert!(
            matches!(
                unwatched.referee().entries().last().map(|e| &e.event),
                Some(Event::ClockExpired(_))
            ),
            "the clock's expiry is in the log"
        );
        assert_eq!(unwatched.game().state_hash(), watched.game().state_hash());
        assert!(unwatched.streams.get().is_none());
        // Viewers join: each one's stream is built from the log.
        for viewer in VIEWERS {
            unwatched.follow(viewer);
            assert_eq!(unwatched.version(viewer), watched.version(viewer));
            assert_eq!(unwatched.stream_head(viewer), watched.stream_head(viewer));
        }
        assert_eq!(unwatched.streams(), watched.streams());
        // From then on it is kept in step like any joined game's.
        let refused = unwatched.propose(
            submitted(Side::B, Command::ExpireClock, None),
            &mut Counting(0),
        );
        assert!(matches!(refusal(refused), ServerMessage::Refused { .. }));
    }

    /// A game its players follow and no spectator watches keeps no spectators' stream: its
    /// commands project and hash nothing for one, and send no spectator a frame. A spectator's
    /// first join (or read) builds that stream from the log, the same entries, numbers and
    /// hashes as a game watched from the start, and commits keep it in step from then on.
    #[test]
    fn a_spectators_stream_is_kept_only_once_one_watches_and_is_then_the_stream_watched_throughout()
    {
        let mut players_only = session(VILLAGE);
        let mut watched = session(VILLAGE);
        players_only.streams = OnceLock::new();
        for side in [GERMAN, RUSSIAN] {
            players_only.follow(side);
        }
        assert!(!players_only.streams().follows(Viewer::Spectator));
        let spectator = stream::index(Viewer::Spectator);
        let mut moves = 0;
        while moves < 12 {
            let side = players_only.game().acting();
            let alone = play(&mut players_only, side, Command::Done, None);
            let beside = play(&mut watched, side, Command::Done, None);
            assert!(alone.broadcasts[spectator].is_empty(), "nobody watches");
            assert!(
                !beside.broadcasts[spectator].is_empty(),
                "a spectator watches"
            );
            assert_eq!(alone.accepted, beside.accepted);
            assert!(!players_only.streams().follows(Viewer::Spectator));
            moves += 1;
        }
        // Read without a join: the read follows the stream first, as a join does.
        let state = |s: &mut Session| {
            s.read(Read::State {
                viewer: Viewer::Spectator,
                now: 0,
            })
        };
        assert_eq!(state(&mut players_only), state(&mut watched));
        assert_eq!(players_only.streams(), watched.streams());
        let side = players_only.game().acting();
        let alone = play(&mut players_only, side, Command::Done, None);
        let beside = play(&mut watched, side, Command::Done, None);
        assert_eq!(alone.broadcasts, beside.broadcasts);
        assert_eq!(players_only.streams(), watched.streams());
    }

    /// Randomness from a counter: every salt and seed differs, and a run repeats exactly.
    struct Counting(u8);

    impl Entropy for Counting {
        fn seed(&mut self) -> protocol::fair_dice::Seed {
            self.0 = self.0.wrapping_add(1);
            [self.0; 32]
        }

        fn salt(&mut self) -> Salt {
            self.0 = self.0.wrapping_add(1);
            [self.0; 16]
        }
    }

    const VILLAGE: &str = include_str!("../../../scenarios/village-outskirts.toml");
    const GERMAN: Viewer = Viewer::Side(Side::A);
    const RUSSIAN: Viewer = Viewer::Side(Side::B);

    /// A fresh game of `toml` as a server loads it from its stored log.
    fn session(toml: &str) -> Session {
        let scenario = protocol::Scenario::from_toml(toml).unwrap();
        let created = Entry::created(scenario);
        let (bytes, _) = envelope::seal_entry(envelope::GENESIS, [0; 16], &created);
        let session = Session::from_log(envelope::verify(&[(1, bytes)]).unwrap(), vec![[7; 32]]);
        let mut session = session.unwrap();
        // Every viewer followed, so commits keep the streams in step as a joined game's do.
        for viewer in VIEWERS {
            session.follow(viewer);
        }
        session
    }

    fn submitted(side: Side, command: Command, key: Option<u64>) -> Submitted {
        Submitted {
            side,
            id: 1,
            command,
            key,
            now: None,
        }
    }

    /// Proposes and commits, as the task does when the store takes the records.
    fn play(session: &mut Session, side: Side, command: Command, key: Option<u64>) -> Committed {
        let proposal = session
            .propose(submitted(side, command, key), &mut Counting(0))
            .unwrap_or_else(|answer| panic!("not proposed: {answer:?}"));
        session.commit(proposal)
    }

    fn refusal(answer: Result<Proposal, Unproposed>) -> ServerMessage {
        match answer {
            Err(Unproposed::Refused { message, .. }) => *message,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    /// Everything a viewer could be told, and the whole game's hash: what must not change.
    fn everything(session: &Session) -> (protocol::StateHash, LogHash, Streams, usize) {
        (
            session.game().state_hash(),
            session.head(),
            session.streams().clone(),
            session.referee().seeds().len(),
        )
    }

    fn adjudicate(unit: &str, outcome: protocol::Outcome) -> Command {
        Command::Adjudicate {
            unit: unit.into(),
            outcome,
            note: String::new(),
        }
    }

    /// The village game in the German's PFPh, where either side may adjudicate: the RPh ends,
    /// the German's end-of-RPh step passes by itself (B9.322), and the Russian ends its own.
    fn in_prep_fire() -> Session {
        let mut session = session(VILLAGE);
        play(&mut session, Side::A, Command::Done, None);
        play(&mut session, Side::B, Command::Done, None);
        session
    }

    #[test]
    fn a_command_sent_again_under_its_key_is_answered_with_its_events_and_not_decided_again() {
        let mut session = in_prep_fire();
        let pin = adjudicate("g1", protocol::Outcome::Pin);
        let committed = play(&mut session, Side::B, pin.clone(), Some(7));
        let before = everything(&session);
        let again = session.propose(submitted(Side::B, pin, Some(7)), &mut Counting(50));
        let Err(Unproposed::Again(again)) = again else {
            panic!("expected the first answer again, got {again:?}");
        };
        assert_eq!(
            Some(*again),
            committed.accepted,
            "the same events, numbers and head"
        );
        assert_eq!(everything(&session), before, "nothing decided or applied");
        // The same key on another command: refused, not answered as if it had run.
        let other = session.propose(
            submitted(Side::B, adjudicate("g2", protocol::Outcome::Pin), Some(7)),
            &mut Counting(50),
        );
        let ServerMessage::Error { code, message } = refusal(other) else {
            panic!("expected an error")
        };
        assert_eq!(code, ErrorCode::KeyReused, "{message}");
        assert_eq!(everything(&session), before);
        // Keys are per seat: the German's 7 is a new key.
        let german = session.propose(
            submitted(Side::A, adjudicate("g2", protocol::Outcome::Pin), Some(7)),
            &mut Counting(50),
        );
        assert!(german.is_ok(), "{german:?}");
    }

    /// A key sent again with another command is refused naming the events the key was
    /// accepted as, in the sender's own numbers: the log's would tell it how many events were
    /// hidden from it before them (the opponent's HIP unit at work).
    #[test]
    fn a_reused_key_is_refused_in_the_senders_own_numbers() {
        let mut session = in_prep_fire();
        // The Russian's HIP half-squad is adjudicated: an event the German is not shown.
        play(
            &mut session,
            Side::B,
            adjudicate("r3", protocol::Outcome::Pin),
            None,
        );
        let pin = adjudicate("r1", protocol::Outcome::Pin);
        let committed = play(&mut session, Side::A, pin, Some(7));
        let Some(ServerMessage::Accepted { events, .. }) = committed.accepted else {
            panic!("accepted")
        };
        let own = events[0].seq;
        let logged = session.game().version;
        assert_ne!(own, logged, "the German's numbers are not the log's here");
        let other = session.propose(
            submitted(Side::A, adjudicate("r1", protocol::Outcome::Break), Some(7)),
            &mut Counting(50),
        );
        let ServerMessage::Error { code, message } = refusal(other) else {
            panic!("expected an error")
        };
        assert_eq!(code, ErrorCode::KeyReused, "{message}");
        assert!(
            message.contains(&format!("events {own}..={own} ")),
            "{message}"
        );
        assert!(!message.contains(&format!("{logged}..=")), "{message}");
        assert!(!message.contains(&format!("..={logged}")), "{message}");
    }

    #[test]
    fn a_proposal_never_committed_leaves_the_session_as_it_was() {
        let mut session = in_prep_fire();
        let before = everything(&session);
        // A proposal whose append failed is dropped: nothing of it stays, its key included.
        let pin = adjudicate("g1", protocol::Outcome::Pin);
        let proposal = session.propose(submitted(Side::B, pin.clone(), Some(9)), &mut Counting(0));
        let proposal = proposal.unwrap();
        assert!(!proposal.records.is_empty());
        drop(proposal);
        assert_eq!(everything(&session), before);
        // Proposed again, it is decided again (the key was not remembered), identically.
        let again = session.propose(submitted(Side::B, pin, Some(9)), &mut Counting(0));
        let again = again.unwrap();
        assert_eq!(again.first, session.game().version + 1);
        // A refused command changes nothing either.
        let refused = session.propose(
            submitted(Side::B, adjudicate("g1", protocol::Outcome::Rally), None),
            &mut Counting(0),
        );
        assert!(matches!(refusal(refused), ServerMessage::Refused { .. }));
        assert_eq!(everything(&session), before);
        // Committed at last, it is applied once: one version per event.
        let version = session.game().version;
        let committed = session.commit(again);
        let Some(ServerMessage::Accepted { events, .. }) = &committed.accepted else {
            panic!()
        };
        assert_eq!(session.game().version, version + events.len() as u64);
        assert_eq!(session.head(), *session.log.last().unwrap());
        assert_eq!(session.log.len() as u64, session.game().version);
    }

    /// What a proposal is foreseen to make of the game is what committing it makes: the
    /// position, each side's new events and its version after them.
    #[test]
    fn a_proposal_foreseen_is_the_proposal_committed() {
        let mut session = session(VILLAGE);
        let commands = [
            // The German's end-of-RPh step passes by itself (B9.322).
            (Side::A, Command::Done),
            (Side::B, Command::Done),
            (Side::B, adjudicate("g1", protocol::Outcome::Pin)),
            (Side::B, adjudicate("r3", protocol::Outcome::Pin)),
            (Side::A, Command::Done),
        ];
        let mut several = 0;
        for (side, command) in commands {
            let proposal = session
                .propose(submitted(side, command, None), &mut Counting(0))
                .unwrap();
            // A decision of several events is foreseen from the positions its look-ahead kept.
            several += usize::from(!proposal.decision.along.is_empty());
            let foreseen = session.foresee(&proposal);
            let committed = session.commit(proposal);
            assert_eq!(foreseen.after.state_hash(), session.game().state_hash());
            for (i, viewer) in [GERMAN, RUSSIAN].into_iter().enumerate() {
                assert_eq!(foreseen.versions[i], session.version(viewer));
                let sent: Vec<protocol::Event> = committed.broadcasts[stream::index(viewer)]
                    .iter()
                    .map(|m| match m {
                        ServerMessage::Event(e) => e.viewed.event.clone(),
                        other => panic!("{other:?}"),
                    })
                    .collect();
                let kinds = |events: &[protocol::Event]| {
                    events
                        .iter()
                        .map(std::mem::discriminant)
                        .collect::<Vec<_>>()
                };
                assert_eq!(kinds(&foreseen.heard[i]), kinds(&sent));
            }
        }
        assert!(several > 0, "a decision of several events was foreseen");
    }

    #[test]
    fn a_refusal_names_a_unit_under_cover_by_the_alias_its_reader_knows() {
        let mut session = in_prep_fire();
        // The Russian squad `r2` is concealed: the German knows it only as an alias. It is
        // pinned (a counter the "?" leaves in sight, A12), so pinning it again is refused,
        // whoever asks; what the "?" hides (its morale) is no reason to refuse (`rules::
        // adjudicate`).
        play(
            &mut session,
            Side::B,
            adjudicate("r2", protocol::Outcome::Pin),
            None,
        );
        let alias = session
            .game()
            .aliases
            .get("r2")
            .cloned()
            .expect("r2 has an alias");
        let pin = |unit: &str| adjudicate(unit, protocol::Outcome::Pin);
        let german = session.propose(submitted(Side::A, pin(&alias), None), &mut Counting(0));
        let ServerMessage::Refused { violation, .. } = refusal(german) else {
            panic!()
        };
        assert!(
            violation.detail.contains(&format!("`{alias}`")),
            "{violation}"
        );
        assert!(!violation.detail.contains("r2"), "{violation}");
        // Its owner reads its id.
        let russian = session.propose(submitted(Side::B, pin("r2"), None), &mut Counting(0));
        let ServerMessage::Refused { violation, .. } = refusal(russian) else {
            panic!()
        };
        assert!(violation.detail.contains("`r2`"), "{violation}");
        // A preview is refused in the same words.
        let preview = session.read(Read::Preview {
            side: Side::A,
            id: 1,
            command: pin(&alias),
            now: None,
        });
        let ServerMessage::Previewed {
            outcome: PreviewOutcome::Refused(previewed),
            ..
        } = preview
        else {
            panic!("{preview:?}")
        };
        assert_eq!(
            previewed.detail,
            violation.detail.replace("`r2`", &format!("`{alias}`"))
        );
    }

    /// The numbers of the `Event` frames a viewer is sent.
    fn numbers(frames: &[ServerMessage]) -> Vec<u64> {
        frames
            .iter()
            .map(|m| match m {
                ServerMessage::Event(e) => e.seq,
                other => panic!("expected an event, got {other:?}"),
            })
            .collect()
    }

    #[test]
    fn each_viewer_is_sent_its_own_events_in_order_and_nothing_hidden_from_it() {
        let mut session = in_prep_fire();
        let heard = VIEWERS.map(|v| session.version(v));
        // The Russian's hidden half-squad (HIP) is adjudicated: only the Russian hears of it.
        let hidden = play(
            &mut session,
            Side::B,
            adjudicate("r3", protocol::Outcome::Pin),
            None,
        );
        assert!(hidden.for_viewer(GERMAN).is_empty());
        assert!(hidden.for_viewer(Viewer::Spectator).is_empty());
        let russian = numbers(hidden.for_viewer(RUSSIAN));
        assert_eq!(russian, vec![heard[1] + 1]);
        let Some(ServerMessage::Accepted {
            events,
            version,
            head,
            ..
        }) = &hidden.accepted
        else {
            panic!()
        };
        assert_eq!(events.iter().map(|e| e.seq).collect::<Vec<_>>(), russian);
        assert_eq!(
            (*version, *head),
            (session.version(RUSSIAN), session.stream_head(RUSSIAN))
        );
        // Every viewer's numbers run on without a gap, whatever the others heard.
        play(&mut session, Side::A, Command::Done, None);
        let moved = play(
            &mut session,
            Side::A,
            Command::Move {
                units: vec!["g1".into(), "g2".into(), "g-ldr".into()],
                to: "12C4".parse().unwrap(),
            },
            None,
        );
        for viewer in VIEWERS {
            let frames = numbers(moved.for_viewer(viewer));
            assert!(!frames.is_empty(), "{viewer:?}");
            let end = session.version(viewer);
            let start = end + 1 - frames.len() as u64;
            assert_eq!(frames, (start..=end).collect::<Vec<_>>(), "{viewer:?}");
            // The frames are the viewer's stream, as a reader of its log is sent it.
            for m in moved.for_viewer(viewer) {
                let ServerMessage::Event(e) = m else { panic!() };
                assert_eq!(*e, session.sequenced(viewer, e.seq));
            }
        }
        assert_eq!(
            session.version(GERMAN) + 1,
            session.version(RUSSIAN),
            "the Russian alone heard the hidden adjudication"
        );
    }

    #[test]
    fn a_unit_a_refusal_names_is_the_readers_name_for_it_however_the_prose_quotes_it() {
        use protocol::violation::{text, Piece};
        let session = in_prep_fire();
        let alias = session.game().aliases.get("r2").cloned().unwrap();
        // The concealed `r2` and the hidden `r3`, named as typed pieces, with no backquotes
        // for a text scan to find.
        let violation = RuleViolation::with(
            "A12",
            protocol::ViolationKind::UnitState,
            vec![
                Piece::Unit("r2".into()),
                text(" and "),
                Piece::Unit("r3".into()),
                text(" are Russian"),
            ],
        );
        let german = session.refusal_for(GERMAN, violation.clone()).detail;
        assert_eq!(german, format!("`{alias}` and a unit are Russian"));
        let spectator = session
            .refusal_for(Viewer::Spectator, violation.clone())
            .detail;
        assert!(
            !spectator.contains("r2") && !spectator.contains("r3"),
            "{spectator}"
        );
        let russian = session.refusal_for(RUSSIAN, violation).detail;
        assert_eq!(russian, "`r2` and `r3` are Russian");
    }

    /// An adjudication of the opponent's HIP unit is refused in the very words a made-up id
    /// is: the refusal gives the issuer's own word back, and says nothing of what exists.
    #[test]
    fn a_hidden_units_id_is_refused_as_a_made_up_one_is() {
        let session = in_prep_fire();
        let refusal = |unit: &str| {
            let command = adjudicate(unit, protocol::Outcome::Pin);
            let violation = protocol::decide(
                session.game(),
                Side::A,
                &command,
                &mut protocol::ScriptedDice::default(),
            )
            .unwrap_err();
            session.refusal_for(GERMAN, violation).detail
        };
        assert!(session.game().units["r3"].hidden);
        assert_eq!(refusal("r3"), "there is no unit `r3` in this game");
        assert_eq!(refusal("nosuch"), "there is no unit `nosuch` in this game");
    }

    #[test]
    fn units_a_refusal_names_are_pieces_each_reader_reads_in_its_own_names() {
        use protocol::violation::{text, Piece};
        let session = in_prep_fire();
        let alias = session.game().aliases.get("r2").cloned().unwrap();
        // The concealed `r2`, the HIP `r3`, as typed pieces.
        let violation = RuleViolation::with(
            "A12",
            protocol::ViolationKind::UnitState,
            vec![
                Piece::unit("r2"),
                text(" and "),
                Piece::unit("r3"),
                text(" are Russian"),
            ],
        );
        let german = session.refusal_for(GERMAN, violation.clone()).detail;
        assert_eq!(german, format!("`{alias}` and a unit are Russian"));
        let spectator = session
            .refusal_for(Viewer::Spectator, violation.clone())
            .detail;
        assert!(
            !spectator.contains("r2") && !spectator.contains("r3"),
            "{spectator}"
        );
        let russian = session.refusal_for(RUSSIAN, violation).detail;
        assert_eq!(russian, "`r2` and `r3` are Russian");
        // A refusal without pieces is sent as it is: its prose is never scanned.
        let prose = RuleViolation::new(
            "A4.1",
            protocol::ViolationKind::NotEnoughMf,
            "needs 3 MF, 2 left",
        );
        assert_eq!(
            session.refusal_for(GERMAN, prose).detail,
            "needs 3 MF, 2 left"
        );
    }

    #[test]
    fn an_event_a_refusal_names_is_the_readers_own_number_for_it_or_none() {
        use protocol::violation::{text, Piece};
        let mut session = in_prep_fire();
        // A hidden event before the German's move, so its numbers are not the log's.
        let pin = adjudicate("r3", protocol::Outcome::Pin);
        play(&mut session, Side::B, pin, None);
        play(&mut session, Side::A, Command::Done, None);
        let moved = play(
            &mut session,
            Side::A,
            Command::Move {
                units: vec!["g1".into(), "g2".into(), "g-ldr".into()],
                to: "12C4".parse().unwrap(),
            },
            None,
        );
        let own = numbers(moved.for_viewer(GERMAN))[0];
        let moved_at = session.streams().at(GERMAN, own).unwrap();
        // The Russian lets the WA moment pass (B9.324), then its hidden half-squad is
        // adjudicated: the German is not shown that.
        play(&mut session, Side::B, Command::DeclineWallAdvantage, None);
        play(
            &mut session,
            Side::B,
            adjudicate("r3", protocol::Outcome::Break),
            None,
        );
        let hidden_at = session.game().version;
        assert_eq!(session.streams().seq_of(GERMAN, hidden_at), None);
        let violation = |at| {
            RuleViolation::with(
                "A1",
                protocol::ViolationKind::NotUndoable,
                vec![Piece::Event(at), text(" is the Russian's")],
            )
        };
        // Never renumbered onto the German's own event before it.
        let german = session.refusal_for(GERMAN, violation(hidden_at)).detail;
        assert_eq!(german, "an event is the Russian's");
        let russian = session.refusal_for(RUSSIAN, violation(hidden_at)).detail;
        assert_eq!(
            russian,
            format!("#{} is the Russian's", session.version(RUSSIAN))
        );
        // An event the German was shown is its own number for it, not the log's.
        let german = session.refusal_for(GERMAN, violation(moved_at)).detail;
        assert_eq!(german, format!("#{own} is the Russian's"));
        assert_ne!(own, moved_at, "the German's numbers are not the log's here");
        // Through the rules: an undo the German asks for, from its own move, over the
        // Russian's hidden event, names no number of the German's own events.
        let undo = session.propose(
            submitted(Side::A, Command::RequestUndo { from: own }, None),
            &mut Counting(0),
        );
        if let Err(Unproposed::Refused { message, .. }) = undo {
            let ServerMessage::Refused { violation, .. } = *message else {
                panic!()
            };
            assert!(
                !violation.detail.contains(&format!("#{own} ")),
                "{violation}"
            );
            assert!(!violation.detail.contains("r3"), "{violation}");
        }
    }
}

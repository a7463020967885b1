//! The export file — a game's whole log, self-contained and verifiable offline — and what
//! reads it: [`verify`], which checks it end to end, and [`replay_to`], which rebuilds the
//! position at any moment. The format is documented in `docs/review.md`:
//!
//! ```text
//! asl-game-log 1
//! game 3f2a…            the game's id on the server that wrote it
//! events 812            how many envelopes follow
//! head 9ab1…            the hash of the last envelope (the head players were shown)
//! state 77c0…           the server's state hash of the whole game after the last event
//! 0200…                 one line per event: the stored envelope, in lowercase hex
//! …
//! checksum 5d1e…        blake3 of every byte before this line
//! ```
//!
//! The envelopes are the bytes the server stored, so the chain in the file ends at the head the
//! server showed its players, and the scenario (in `GameCreated`), the dice commitments and the
//! revealed seeds are all inside the chain.

use crate::chain::{ChainReader, Entry, LogHash};
use crate::dispute;
use crate::fair_dice::{DiceStats, Ledger};
use crate::recheck::{Fault, Recheck};
use crate::signed::{ServerKey, SignedHead, Stream};
use board::scenario::{Scenario, Side};
use board::vasl::library::Boards;
use data_encoding::HEXLOWER;
use game::event::Event;
use game::event::{DiceRolled, GameCreated, StepEnded, StepPassed};
use game::phase::Phase;
use game::{apply, Game, StateHash, Underground, Viewer};
use std::fmt::{self, Write as _};

/// The file's first word and the version of its layout. A reader refuses versions it does not
/// know.
pub const MAGIC: &str = "asl-game-log";
/// Format 1: no signature. Format 2 (written when the server signs, as it always does now):
/// `signer` and `signature` lines after `state`, the server's signed head of the full log.
pub(crate) const FORMAT: u32 = 1;
pub(crate) const FORMAT_SIGNED: u32 = 2;

/// Largest export file [`verify`] reads, in bytes. A long tournament game is a few thousand
/// events of a few hundred bytes (twice that in hex), a few MB; 64 MiB is an order of magnitude
/// more, and what a verifier holds in memory at most. [`read`] stops there.
pub const EXPORT_BYTES_MAX: usize = 64 * 1024 * 1024;

/// Longest header or checksum line [`read`] takes, in bytes: the longest is a signature line
/// (a word and 128 hex digits). A file that is not an export (`/dev/zero`) is refused after
/// this many bytes.
pub(crate) const HEADER_LINE_BYTES_MAX: usize = 256;

/// Most events an export may hold: far more than a game produces, and it bounds the replay a
/// forged header can ask for.
pub const EXPORT_EVENTS_MAX: u64 = 1_000_000;

/// What the file's header says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub game: String,
    pub events: u64,
    pub head: LogHash,
    pub state_hash: StateHash,
    /// The server's signature over the game, the event count and the head (format 2).
    pub signed: Option<SignedHead>,
}

/// Writes an export: the header, one hex line per envelope, and the checksum line.
pub fn render(header: &Header, envelopes_hex: &[String]) -> String {
    let format = if header.signed.is_some() {
        FORMAT_SIGNED
    } else {
        FORMAT
    };
    let mut text = format!(
        "{MAGIC} {format}\ngame {}\nevents {}\nhead {}\nstate {}\n",
        header.game, header.events, header.head, header.state_hash
    );
    if let Some(signed) = &header.signed {
        let _ = write!(
            text,
            "signer {}\nsignature {}\n",
            signed.signer,
            HEXLOWER.encode(&signed.signature)
        );
    }
    for line in envelopes_hex {
        text.push_str(line);
        text.push('\n');
    }
    let checksum = blake3::hash(text.as_bytes());
    let _ = writeln!(text, "checksum {}", HEXLOWER.encode(checksum.as_bytes()));
    text
}

/// Where a file went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Where {
    /// The file as a whole (size, shape, the checksum line).
    File,
    /// A header line, by its key.
    Header(&'static str),
    /// An event, by its sequence: the first bad one.
    Event(u64),
}

/// Why an export is not valid, naming the first bad event when an event is to blame.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct VerifyError {
    pub at: Where,
    pub why: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.at {
            Where::File => write!(f, "the file: {}", self.why),
            Where::Header(key) => write!(f, "the header's `{key}` line: {}", self.why),
            Where::Event(seq) => write!(f, "event {seq}: {}", self.why),
        }
    }
}

fn at(at: Where, why: impl Into<String>) -> VerifyError {
    VerifyError {
        at,
        why: why.into(),
    }
}

/// What a valid log holds, in numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    pub events: u64,
    /// The Game Turn the log ends in.
    pub turn: u16,
    /// Phases entered, counting each Player Turn's phases apart.
    pub phases: u32,
    pub rolls: u32,
    /// Rolls re-derived from a revealed seed, and rolls whose seed is still secret.
    pub rolls_verified: usize,
    pub rolls_unverified: usize,
    pub adjudications: u32,
    pub accepted: u32,
    pub disputed: u32,
    pub undone: u32,
    pub over: bool,
}

/// A log read and checked end to end.
#[derive(Clone, Debug)]
pub struct Verified {
    pub header: Header,
    pub entries: Vec<Entry>,
    /// The hash of each entry's envelope: the head at its version, as players were shown it.
    pub hashes: Vec<LogHash>,
    /// The whole game after the last event.
    pub game: Game,
    pub ledger: Ledger,
    pub summary: Summary,
}

impl Verified {
    /// Checks the server's signature on the file's head under `trusted`, the key of the server
    /// the verifier trusts: a file without one, or signed by another key, or whose game, count
    /// or head changed after signing, is refused.
    pub fn check_signature(&self, trusted: &ServerKey) -> Result<(), VerifyError> {
        let signed = self.header.signed.as_ref().ok_or_else(|| {
            at(
                Where::Header("signature"),
                "the file carries no signed head: nothing says the server vouched for it",
            )
        })?;
        signed
            .check(trusted)
            .map_err(|why| at(Where::Header("signature"), why.to_string()))
    }

    /// Checks `receipts` (signed heads of viewers' own streams a client kept during play)
    /// against this log, as `asl verify --receipts` and the page's review both do: each must be
    /// signed with `trusted`, be this game's, and meet its viewer's stream, rebuilt from the
    /// whole log, at its event with the same head (`receipt::check`). Each receipt's viewer and
    /// event in order, or the index of the first that does not hold and why.
    pub fn check_receipts<'a>(
        &self,
        trusted: &ServerKey,
        receipts: impl IntoIterator<Item = &'a SignedHead>,
    ) -> Result<Vec<(Viewer, u64)>, (usize, crate::receipt::Mismatch)> {
        let streams = crate::stream::Streams::of_log(self.entries.iter().map(|e| &e.event));
        receipts
            .into_iter()
            .enumerate()
            .map(|(i, receipt)| {
                crate::receipt::check(receipt, trusted, &self.header.game, None, &streams)
                    .map_err(|mismatch| (i, mismatch))
            })
            .collect()
    }

    /// Whose a viewer's stream is, in words: "the German player's" or "the spectators'".
    pub fn stream_name(&self, viewer: Viewer) -> String {
        match viewer {
            Viewer::Side(side) => format!("the {} player's", self.game.side_name(side)),
            Viewer::Spectator => "the spectators'".into(),
        }
    }

    /// A receipt that held, in the words `asl verify` and the page's review both give it:
    /// `receipt` names it as its reader knows it (a file's path, a number).
    pub fn receipt_held(
        &self,
        receipt: impl std::fmt::Display,
        viewer: Viewer,
        seq: u64,
    ) -> String {
        format!(
            "receipt {receipt}: {} stream reaches its event {seq} with the head the server signed",
            self.stream_name(viewer)
        )
    }

    /// What the file proves without a key: said plainly in every report.
    pub fn trust(&self, trusted: Option<&ServerKey>) -> String {
        match (&self.header.signed, trusted) {
            (Some(_), Some(key)) => format!(
                "signed by the server's key {key}: the server vouched for this log up to its head"
            ),
            (Some(signed), None) => format!(
                "signed by key {}, not checked: without the server's key (--server-key) this file proves only its internal consistency",
                signed.signer
            ),
            (None, _) => "unsigned: this file proves only its internal consistency".into(),
        }
    }

    pub fn stats(&self) -> DiceStats {
        DiceStats::of(self.entries.iter().map(|e| &e.event))
    }

    /// The summary `asl verify` prints.
    pub fn report(&self) -> String {
        let s = &self.summary;
        let mut text = format!(
            "valid: game {} from scenario \"{}\"\n",
            self.header.game, self.game.scenario.name
        );
        let _ = writeln!(
            text,
            "events: {}; Game Turns: {}{}; phases: {}",
            s.events,
            s.turn,
            if s.over { " (game over)" } else { "" },
            s.phases
        );
        let _ = writeln!(
            text,
            "rolls: {}, {} checked against the revealed seed{}",
            s.rolls,
            s.rolls_verified,
            if s.rolls_unverified > 0 {
                format!(", {} under a seed still secret", s.rolls_unverified)
            } else {
                String::new()
            }
        );
        let _ = writeln!(
            text,
            "adjudications: {} ({} accepted, {} disputed); undos: {}",
            s.adjudications, s.accepted, s.disputed, s.undone
        );
        let _ = writeln!(text, "head {}", self.header.head);
        let _ = writeln!(text, "state {}", self.game.state_hash());
        let names = [self.game.side_name(Side::A), self.game.side_name(Side::B)];
        text.push_str(&self.stats().render(names));
        text
    }
}

struct Lines<'a> {
    text: &'a [u8],
}

impl<'a> Iterator for Lines<'a> {
    type Item = &'a [u8];
    fn next(&mut self) -> Option<&'a [u8]> {
        if self.text.is_empty() {
            return None;
        }
        let end = self.text.iter().position(|b| *b == b'\n');
        let (line, rest) = match end {
            Some(i) => (&self.text[..i], &self.text[i + 1..]),
            None => (self.text, &self.text[self.text.len()..]),
        };
        self.text = rest;
        Some(line)
    }
}

fn header_line<'a>(line: Option<&'a [u8]>, key: &'static str) -> Result<&'a str, VerifyError> {
    let line = line.ok_or_else(|| at(Where::Header(key), "missing"))?;
    let text = std::str::from_utf8(line).map_err(|_| at(Where::Header(key), "not text"))?;
    text.strip_prefix(key)
        .and_then(|rest| rest.strip_prefix(' '))
        .ok_or_else(|| {
            at(
                Where::Header(key),
                format!("expected `{key} …`, found `{}`", quoted(text)),
            )
        })
}

/// Most characters of a file's own text an error quotes.
const QUOTED_CHARS_MAX: usize = 64;

/// A file's own text as an error quotes it: an export is a file from others, and its errors
/// are printed in terminals (`asl verify`, `asl replay`) and sent to the page (`review`), so
/// control characters and bidi controls are written as escapes, and the quote is cut at
/// [`QUOTED_CHARS_MAX`] characters.
fn quoted(text: &str) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == QUOTED_CHARS_MAX {
            out.push('…');
            break;
        }
        if c.is_control() || board::scenario::is_bidi(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

fn parse_header(lines: &mut Lines<'_>) -> Result<Header, VerifyError> {
    let format = header_line(lines.next(), MAGIC).map_err(|_| {
        at(
            Where::File,
            format!("not an ASL game log (it does not start with `{MAGIC}`)"),
        )
    })?;
    let signed = if format == FORMAT_SIGNED.to_string() {
        true
    } else if format == FORMAT.to_string() {
        false
    } else {
        return Err(at(
            Where::Header(MAGIC),
            format!(
                "format {} is not one this version reads ({FORMAT} or {FORMAT_SIGNED})",
                quoted(format)
            ),
        ));
    };
    let game = header_line(lines.next(), "game")?;
    if game.is_empty() || !game.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(at(Where::Header("game"), "not a game id"));
    }
    let events = header_line(lines.next(), "events")?
        .parse::<u64>()
        .map_err(|_| at(Where::Header("events"), "not a number"))?;
    if events > EXPORT_EVENTS_MAX {
        return Err(at(
            Where::Header("events"),
            format!("{events} events is over the {EXPORT_EVENTS_MAX} this version reads"),
        ));
    }
    let head = LogHash::from_hex(header_line(lines.next(), "head")?)
        .ok_or_else(|| at(Where::Header("head"), "not 64 hex digits"))?;
    let state = HEXLOWER
        .decode(header_line(lines.next(), "state")?.as_bytes())
        .ok()
        .and_then(|b| <[u8; 32]>::try_from(b).ok())
        .ok_or_else(|| at(Where::Header("state"), "not 64 hex digits"))?;
    let signed = match signed {
        false => None,
        true => {
            let signer = ServerKey::from_hex(header_line(lines.next(), "signer")?)
                .ok_or_else(|| at(Where::Header("signer"), "not 64 hex digits"))?;
            let signature = HEXLOWER
                .decode(header_line(lines.next(), "signature")?.as_bytes())
                .ok()
                .filter(|s| s.len() == 64)
                .ok_or_else(|| at(Where::Header("signature"), "not 128 hex digits"))?;
            Some(SignedHead {
                game: game.to_string(),
                stream: Stream::FullLog,
                version: events,
                head,
                signer,
                signature,
                batch: None,
            })
        }
    };
    Ok(Header {
        game: game.to_string(),
        events,
        head,
        state_hash: StateHash(state),
        signed,
    })
}

/// Checks the signed head in an export's header under `trusted`, reading the header alone:
/// a few lines and one signature check, where [`verify`] reads the chain and replays every
/// event. A server reviewing files for anyone calls this first, so a file signed by another
/// key (or unsigned) costs it almost nothing. The head signed is the header's, which
/// [`verify`] then holds the chain to.
pub fn check_header_signature(bytes: &[u8], trusted: &ServerKey) -> Result<Header, VerifyError> {
    if bytes.len() > EXPORT_BYTES_MAX {
        return Err(at(
            Where::File,
            format!("it is over the {EXPORT_BYTES_MAX}-byte limit (EXPORT_BYTES_MAX)"),
        ));
    }
    let header = parse_header(&mut Lines { text: bytes })?;
    let signed = header.signed.as_ref().ok_or_else(|| {
        at(
            Where::Header("signature"),
            "the file carries no signed head: nothing says the server vouched for it",
        )
    })?;
    signed
        .check(trusted)
        .map_err(|why| at(Where::Header("signature"), why.to_string()))?;
    Ok(header)
}

/// Reads an export from `input`, stopping as soon as it cannot be one: a first line that is
/// not the export's (after `HEADER_LINE_BYTES_MAX` bytes at most), a line longer than an
/// envelope's hex, or more than [`EXPORT_BYTES_MAX`] bytes in all. Memory stays within the
/// limit whatever the input is.
pub fn read(input: &mut dyn std::io::Read) -> Result<Vec<u8>, VerifyError> {
    use std::io::{BufRead, BufReader, Read};
    let mut input = BufReader::new(input);
    let mut bytes = Vec::new();
    let line_max = 2 * crate::chain::ENVELOPE_BYTES_MAX + 1;
    let mut lines = 0u64;
    loop {
        let limit = if lines < 5 {
            HEADER_LINE_BYTES_MAX
        } else {
            line_max
        };
        let start = bytes.len();
        let read = (&mut input)
            .take(limit as u64 + 1)
            .read_until(b'\n', &mut bytes)
            .map_err(|e| at(Where::File, format!("cannot be read ({e})")))?;
        if read == 0 {
            return Ok(bytes);
        }
        if lines == 0 && !bytes.starts_with(format!("{MAGIC} ").as_bytes()) {
            return Err(at(
                Where::File,
                format!("not an ASL game log (it does not start with `{MAGIC}`)"),
            ));
        }
        if bytes.len() - start > limit {
            return Err(at(
                Where::File,
                format!(
                    "line {} is longer than any line of an export ({limit} bytes): this is not one",
                    lines + 1
                ),
            ));
        }
        if bytes.len() > EXPORT_BYTES_MAX {
            return Err(at(
                Where::File,
                format!("it is over the {EXPORT_BYTES_MAX}-byte limit (EXPORT_BYTES_MAX); reading stopped there"),
            ));
        }
        lines += 1;
    }
}

/// The sequence of play moves one step at a time (A3): a step ends where the clock stands and
/// the next is the one after it; the game ends after the last step of the last turn.
fn check_clock(game: &Game, event: &Event) -> Result<(), Fault> {
    let turns = game.scenario.turns;
    match event {
        Event::StepEnded(StepEnded { ended, next, .. })
        | Event::StepPassed(StepPassed { ended, next }) => {
            if *ended != game.clock {
                return Err(format!(
                    "ends a step at {ended:?}, but the game stood at {}",
                    game.clock
                )
                .into());
            }
            if Some(*next) != game.clock.next(turns) {
                return Err(format!(
                    "moves the clock to {next:?}, not to the step after {}",
                    game.clock
                )
                .into());
            }
            Ok(())
        }
        Event::GameEnded(_) if game.clock.next(turns).is_some() => Err(format!(
            "ends the game at {}, before the last step of the last turn",
            game.clock
        )
        .into()),
        _ => Ok(()),
    }
}

/// Checks a roll's own arithmetic and its place in the game's stream of draws.
fn check_roll(game: &Game, entry: &Entry, roll: &game::dice::Roll) -> Result<(), Fault> {
    if roll.first_draw != game.dice_drawn {
        return Err(format!(
            "the roll claims draws from {}, but the game had drawn {} dice",
            roll.first_draw, game.dice_drawn
        )
        .into());
    }
    if roll.dice.is_empty() || roll.dice.len() > 2 || roll.dice.iter().any(|d| !(1..=6).contains(d))
    {
        return Err(format!("{:?} are not the faces of a dr or DR", roll.dice).into());
    }
    let modified = roll.raw()
        + roll
            .modifiers
            .iter()
            .map(|m| i16::from(m.value))
            .sum::<i16>();
    if modified != roll.final_result {
        return Err(format!(
            "the Final result {} is not the dice {} with the modifiers ({modified})",
            roll.final_result,
            roll.raw()
        )
        .into());
    }
    if entry.by.is_some_and(|by| by != roll.side) {
        return Err("the roll names a side other than the one whose command made it".into());
    }
    Ok(())
}

/// Reads an export and checks everything in it: the file's shape and checksum, the hash chain
/// (every envelope follows the one before and the last is the header's head), every event
/// replayed through `apply` from the scenario, every roll re-derived from its revealed seed
/// with the contributions of its moment, every answer and undo re-checked against the log
/// before it, and the final state against the header's state hash. The first problem found is
/// returned, naming the event when an event is to blame. `progress(done, total)` is called as
/// events are checked.
///
/// The log must reach the game's end: a server exports only finished games, whose every roll
/// can be checked. A backup, which copies games still in play, is read by [`verify_backup`].
pub fn verify(bytes: &[u8], progress: &mut dyn FnMut(u64, u64)) -> Result<Verified, VerifyError> {
    verify_log(bytes, None, progress, true)
}

/// [`verify`] of a game on real boards: `boards`, read by the caller, are handed to the
/// log's scenario (`Boards::attach`) so the legality of each command is re-checked over the
/// boards' own terrain. Without them a command that needs LOS on real boards is not
/// re-checkable, as the log's scenario names its boards only by digest.
pub fn verify_on(
    bytes: &[u8],
    boards: Option<&Boards>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Verified, VerifyError> {
    verify_log(bytes, boards, progress, true)
}

/// [`verify`] for a backup's copy of a game (`asl-server backup`/`restore`): everything is
/// checked the same way, but the game may still be in play, so the rolls under its secret seed
/// stay unchecked (counted as such in the summary). Never shown to players as a proof: it is the
/// operator's own copy of the store.
pub fn verify_backup(
    bytes: &[u8],
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Verified, VerifyError> {
    verify_log(bytes, None, progress, false)
}

fn verify_log(
    bytes: &[u8],
    boards: Option<&Boards>,
    progress: &mut dyn FnMut(u64, u64),
    must_end: bool,
) -> Result<Verified, VerifyError> {
    if bytes.len() > EXPORT_BYTES_MAX {
        return Err(at(
            Where::File,
            format!("it is over the {EXPORT_BYTES_MAX}-byte limit (EXPORT_BYTES_MAX)"),
        ));
    }
    if !bytes.ends_with(b"\n") {
        return Err(at(
            Where::File,
            "it does not end with a newline: the file is truncated",
        ));
    }
    let body = &bytes[..bytes.len() - 1];
    let split = body.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let (signed, last) = body.split_at(split);
    let checksum = std::str::from_utf8(last)
        .ok()
        .and_then(|l| l.strip_prefix("checksum "))
        .and_then(|t| HEXLOWER.decode(t.as_bytes()).ok())
        .filter(|c| c.len() == 32)
        .ok_or_else(|| {
            at(
                Where::File,
                "it does not end with its `checksum` line: the file is truncated or damaged",
            )
        })?;
    let mut lines = Lines { text: signed };
    let header = parse_header(&mut lines)?;

    // First the chain, whole: any changed, dropped or reordered envelope is caught here, and
    // nothing damaged by accident reaches the replay.
    let mut chain = ChainReader::default();
    let mut read: Vec<Entry> = Vec::new();
    let mut hashes: Vec<LogHash> = Vec::new();
    for (i, line) in lines.enumerate() {
        let seq = i as u64 + 1;
        let bad = |why: String| at(Where::Event(seq), why);
        if seq > header.events {
            return Err(bad(format!(
                "is one more than the {} events the header counts",
                header.events
            )));
        }
        let text = std::str::from_utf8(line).map_err(|_| bad("is not text".into()))?;
        let envelope = HEXLOWER
            .decode(text.as_bytes())
            .map_err(|_| bad("is not lowercase hex".into()))?;
        let entry = chain
            .read(seq, &envelope)
            .map_err(|e| at(Where::Event(e.seq), e.why))?;
        read.push(entry);
        hashes.push(chain.head());
    }
    let count = read.len() as u64;
    if count != header.events {
        return Err(at(
            Where::Header("events"),
            format!(
                "counts {} events, the file holds {count}: events were dropped from the end",
                header.events
            ),
        ));
    }
    if chain.head() != header.head {
        return Err(at(
            Where::Event(count),
            "its hash is not the head the header records: the last event or the header was changed",
        ));
    }

    if let (
        Some(boards),
        Some(Entry {
            event: Event::GameCreated(GameCreated { scenario }),
            ..
        }),
    ) = (boards, read.first_mut())
    {
        boards.attach(scenario);
    }

    // Then the replay, checking every event against the position before it.
    let mut entries: Vec<Entry> = Vec::with_capacity(read.len());
    let mut ledger = Ledger::default();
    let mut game: Option<Game> = None;
    let mut summary = Summary {
        events: 0,
        turn: 1,
        phases: 1,
        rolls: 0,
        rolls_verified: 0,
        rolls_unverified: 0,
        adjudications: 0,
        accepted: 0,
        disputed: 0,
        undone: 0,
        over: false,
    };
    let mut recheck = Recheck::new(&read);
    for index in 0..read.len() {
        let entry = read[index].clone();
        let seq = entry.seq;
        let bad = |why: String| at(Where::Event(seq), why);
        let Some(game) = game.as_mut() else {
            let Event::GameCreated(GameCreated { scenario }) = &entry.event else {
                return Err(bad(format!("is {}, not GameCreated", entry.event.name())));
            };
            let mut created = Game::new(scenario.clone());
            created.version = 1;
            game = Some(created);
            entries.push(entry);
            summary.events = 1;
            progress(seq, header.events);
            continue;
        };
        match &entry.event {
            Event::GameCreated(_) => {
                return Err(bad("a second GameCreated: a log holds one game".into()))
            }
            Event::DiceRolled(DiceRolled { roll }) => {
                check_roll(game, &entry, roll).map_err(|f| bad(f.to_string()))?;
                summary.rolls += 1;
            }
            Event::OutcomeAdjudicated(_) | Event::ManholeDeclaredUnseen(_) => {
                summary.adjudications += 1
            }
            Event::AdjudicationAccepted(_) => summary.accepted += 1,
            Event::AdjudicationDisputed(_) => summary.disputed += 1,
            Event::EventsUndone(_) | Event::EventsUndoneTo(_) => summary.undone += 1,
            _ => {}
        }
        check_clock(game, &entry.event).map_err(|f| bad(f.to_string()))?;
        // No die is left unchecked in a finished game: its end is followed at once by the
        // reveal of the seed still secret.
        if matches!(entry.event, Event::GameEnded(_))
            && ledger.open().is_some()
            && !matches!(
                read.get(index + 1).map(|e| &e.event),
                Some(Event::SeedRevealed(_))
            )
        {
            return Err(bad(
                "ends the game, but the dice seed still secret is not revealed right after it: the rolls made under it cannot be checked".into(),
            ));
        }
        let before_ledger = ledger.clone();
        ledger
            .observe(seq, &entry.event)
            .map_err(|e| at(Where::Event(e.seq), e.why))?;
        let before = (game.clock.turn, game.clock.player_turn, game.clock.phase());
        // `apply` trusts its events, as it may: the server decided them. A forged log may hold
        // one no server would have made; if applying it fails, that event is named.
        let applied = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            dispute::check_logged(game, &entries, &entry)?;
            recheck.check(game, &entries, &before_ledger, &read, index)?;
            apply(game, &entry.event);
            Ok::<(), Fault>(())
        }));
        match applied {
            Ok(Ok(())) => {}
            Ok(Err(why)) => return Err(bad(why.to_string())),
            Err(_) => {
                return Err(bad(
                    "cannot be applied: no server could have logged it".into()
                ))
            }
        }
        if (game.clock.turn, game.clock.player_turn, game.clock.phase()) != before {
            summary.phases += 1;
        }
        entries.push(entry);
        summary.events = seq;
        progress(seq, header.events);
    }
    let game = game.ok_or_else(|| at(Where::File, "it holds no events"))?;
    if let Some(why) = recheck.unfinished() {
        return Err(at(Where::Event(count), why));
    }
    if must_end && !game.over {
        return Err(at(
            Where::Event(count),
            "the log ends before the game does: a server exports only finished games, whose every roll can be checked",
        ));
    }
    if game.over {
        if let Some(roll) = ledger.open().and_then(|e| e.rolls.first()) {
            return Err(at(
                Where::Event(roll.seq),
                "a roll of a finished game whose seed is never revealed: nobody can check it",
            ));
        }
    }
    if game.state_hash() != header.state_hash {
        return Err(at(
            Where::Header("state"),
            "the replay does not end at the state the header records: the header or the events were changed",
        ));
    }
    if blake3::hash(signed).as_bytes()[..] != checksum[..] {
        return Err(at(
            Where::File,
            "the checksum does not match: the file was changed after it was written",
        ));
    }
    let (verified, unverified) = ledger.rolls();
    summary.rolls_verified = verified;
    summary.rolls_unverified = unverified;
    summary.turn = game.clock.turn;
    summary.over = game.over;
    Ok(Verified {
        header,
        entries,
        hashes,
        game,
        ledger,
        summary,
    })
}

/// A moment of a game to replay to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Moment {
    /// Just after event N (`812`).
    Version(u64),
    /// The moment a phase began (`turn 3 German MPh`): the Player Turn is named by its
    /// ATTACKER.
    Phase { turn: u16, side: Side, phase: Phase },
    /// After the last event (`end`).
    End,
}

const PHASES: [Phase; 8] = [
    Phase::Rally,
    Phase::PrepFire,
    Phase::Movement,
    Phase::DefensiveFire,
    Phase::AdvancingFire,
    Phase::Rout,
    Phase::Advance,
    Phase::CloseCombat,
];

/// Why a moment of a game cannot be read or reached.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MomentError {
    #[error("`{0}` is not an event number (1 or more), `end` or `turn T SIDE PHASE`")]
    NotEvent(String),
    #[error("`{0}` is not a Game Turn")]
    NotTurn(String),
    #[error("`{0}` is not a side of this scenario")]
    NotSide(String),
    #[error("`{0}` is not a phase (RPh, PFPh, MPh, DFPh, AFPh, RtPh, APh, CCPh)")]
    NotPhase(String),
    #[error("`{0}` is not a moment: write an event number, `end`, or `turn 3 German MPh`")]
    NotMoment(String),
    #[error("{0}")]
    Replay(#[from] game::ReplayError),
    #[error("the log ends at event {last}; there is no event {asked}")]
    NoEvent { last: u64, asked: u64 },
    /// Named by the moment the log ends in.
    #[error("the log never reaches that phase; it ends in {0}")]
    NeverReached(String),
}

impl Moment {
    /// Reads `812`, `end`, or `turn 3 German MPh` (side by name or id, phase by its
    /// abbreviation, any case).
    pub fn parse(text: &str, scenario: &Scenario) -> Result<Moment, MomentError> {
        let words: Vec<&str> = text.split_whitespace().collect();
        match words.as_slice() {
            ["end"] => Ok(Moment::End),
            [n] => n
                .parse::<u64>()
                .ok()
                .filter(|n| *n >= 1)
                .map(Moment::Version)
                .ok_or_else(|| MomentError::NotEvent(n.to_string())),
            ["turn", turn, side, phase] => {
                let turn = turn
                    .parse::<u16>()
                    .ok()
                    .filter(|t| *t >= 1)
                    .ok_or_else(|| MomentError::NotTurn(turn.to_string()))?;
                let side = scenario
                    .side_named(side)
                    .ok_or_else(|| MomentError::NotSide(side.to_string()))?;
                let phase = PHASES
                    .into_iter()
                    .find(|p| p.abbreviation().eq_ignore_ascii_case(phase))
                    .ok_or_else(|| MomentError::NotPhase(phase.to_string()))?;
                Ok(Moment::Phase { turn, side, phase })
            }
            _ => Err(MomentError::NotMoment(text.to_string())),
        }
    }

    /// Whether `game` stands at (or, for a version, past) this moment.
    pub fn reached(&self, game: &Game) -> bool {
        match self {
            Moment::Version(v) => game.version >= *v,
            Moment::Phase { turn, side, phase } => {
                game.clock.turn == *turn && game.attacker() == *side && game.clock.phase() == *phase
            }
            Moment::End => false,
        }
    }
}

/// The whole game at `moment`, replayed from the log's first event.
pub fn replay_to(entries: &[Entry], moment: &Moment) -> Result<Game, MomentError> {
    let mut events = entries.iter().map(|e| &e.event);
    let mut game = Game::replay(events.next())?;
    if let Moment::Version(v) = moment {
        if *v > entries.len() as u64 {
            return Err(MomentError::NoEvent {
                last: entries.len() as u64,
                asked: *v,
            });
        }
    }
    for event in events {
        if moment.reached(&game) {
            return Ok(game);
        }
        apply(&mut game, event);
    }
    match moment {
        Moment::Phase { .. } if !moment.reached(&game) => {
            Err(MomentError::NeverReached(crate::export::when(&game)))
        }
        _ => Ok(game),
    }
}

/// "Turn 1, German Player Turn: MPh" for where `game` stands.
pub fn when(game: &Game) -> String {
    when_at(&crate::words::Sides::of(&game.scenario), game.clock)
}

/// [`when`] from the sides' names and a clock.
pub(crate) fn when_at(sides: &crate::words::Sides<'_>, clock: game::phase::Clock) -> String {
    format!(
        "Turn {}, {} Player Turn: {}",
        clock.turn,
        sides.name(clock.attacker(sides.first)),
        clock.phase()
    )
}

/// The position as `asl replay` prints it: where the game stands, then each side's units with
/// their hex, state, MF used this MPh and Wall Advantage; sewer stacks; weapons; what play is
/// waiting for.
pub fn render_position(game: &Game) -> String {
    let mut s = format!(
        "{} ({}), {} to act; version {}{}\n",
        when(game),
        game.clock.step().rule,
        game.side_name(game.acting()),
        game.version,
        if game.over { "; the game is over" } else { "" }
    );
    // The clocks as the log last charged them (docs/clock.md): a replay reaches the clocks
    // live play reached, and says so.
    if let Some(timing) = game.timing.as_deref() {
        use board::time_control::duration_text;
        let view = timing.view(timing.since);
        let sides: Vec<String> = Side::BOTH
            .iter()
            .map(|side| {
                let i = *side as usize;
                let mut text = format!("{} {}", game.side_name(*side), duration_text(view.bank[i]));
                if view.running == Some(*side) {
                    text += " (running)";
                }
                if view.on_vacation[i] {
                    text += " (on vacation)";
                }
                if view.expired == Some(*side) {
                    text += " (out of time)";
                }
                text
            })
            .collect();
        let _ = writeln!(
            s,
            "Clocks ({}), as charged at the last clock event: {}",
            view.control,
            sides.join(", ")
        );
    }
    for side in Side::BOTH {
        let _ = writeln!(s, "{}:", game.side_name(side));
        for u in game.units.values().filter(|u| u.side == side) {
            let mut notes = vec![];
            if u.eliminated {
                notes.push("eliminated".to_string());
            }
            if u.morale != board::scenario::Morale::GoodOrder {
                notes.push(format!("{:?}", u.morale).to_lowercase());
            }
            for (flag, word) in [
                (u.pinned, "pinned"),
                (u.cx, "CX"),
                (u.concealed, "concealed"),
                (u.hidden, "hidden"),
                (u.wall_advantage, "WA"),
            ] {
                if flag {
                    notes.push(word.into());
                }
            }
            if u.mf_spent > board::terrain::Mf::default() {
                notes.push(format!("{} MF spent", u.mf_spent));
            }
            match &u.underground {
                Some(Underground::Sewer { lost, .. }) => {
                    notes.push(format!("in the sewer{}", if *lost { ", lost" } else { "" }))
                }
                Some(Underground::Tunnel) => notes.push("in a tunnel".into()),
                None => {}
            }
            let line = format!(
                "  {:<6} {:<7} {:<10} {:<6} {}",
                u.id,
                u.ratings,
                u.kind.name(),
                u.hex.to_string(),
                notes.join(", ")
            );
            let _ = writeln!(s, "{}", line.trim_end());
        }
    }
    let holders: Vec<String> = game
        .units
        .values()
        .filter(|u| u.wall_advantage && !u.eliminated)
        .map(|u| format!("{} ({})", u.id, u.hex))
        .collect();
    if !holders.is_empty() {
        let _ = writeln!(s, "Wall Advantage: {}", holders.join(", "));
    }
    let mut stacks: std::collections::BTreeMap<(String, board::hex::Hex), Vec<String>> =
        Default::default();
    for u in game.units.values().filter(|u| !u.eliminated) {
        if let Some(Underground::Sewer {
            lost,
            moved,
            emergence,
        }) = &u.underground
        {
            let mut what = game.side_name(u.side).to_string();
            if *lost {
                what.push_str(", lost");
            }
            if *moved {
                what.push_str(", moved this MPh");
            }
            if let Some(e) = emergence {
                let _ = write!(what, ", {}", e.describe());
            }
            stacks.entry((what, u.hex)).or_default().push(u.id.clone());
        }
    }
    for ((what, hex), ids) in stacks {
        let _ = writeln!(s, "Sewer stack beneath {hex}: {} ({what})", ids.join("+"));
    }
    for w in game.weapons.values() {
        let _ = writeln!(
            s,
            "Weapon {} {} ({} PP) in {}{}",
            w.id,
            w.name,
            w.pp,
            w.hex,
            w.held_by
                .as_ref()
                .map_or(", unpossessed".to_string(), |h| format!(", held by {h}"))
        );
    }
    if let Some(d) = &game.sewer_designation {
        let _ = writeln!(
            s,
            "Waiting: the {} designates where the lost stack beneath {} goes (B8.41)",
            game.side_name(d.defender),
            d.from
        );
    }
    if let Some(c) = &game.wa_chance {
        let _ = writeln!(
            s,
            "Waiting: the {} may claim Wall Advantage (B9.322)",
            game.side_name(c.side)
        );
    }
    if let Some(a) = &game.attack {
        let _ = writeln!(
            s,
            "Waiting: the {}'s attack on {} is to be resolved",
            game.side_name(a.by),
            a.target
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::{seal_entry, GENESIS};
    use crate::referee::testing::*;
    use game::command::Command;
    use game::event::{
        AdjudicationAccepted, DiceRolled, EventsUndone, EventsUndoneTo, OutcomeAdjudicated,
        UndoRequested, UnitMoved,
    };
    use std::io::Read as _;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    /// Re-seals `entries` into a consistent export (a new chain, header and checksum): what
    /// someone who rewrites a log can make, short of the head players were shown.
    fn reseal(entries: &[Entry], state_hash: StateHash) -> String {
        let mut prev = GENESIS;
        let mut out = vec![];
        for e in entries {
            let (bytes, hash) = seal_entry(prev, [0; 16], e);
            out.push(HEXLOWER.encode(&bytes));
            prev = hash;
        }
        let header = Header {
            game: "cd".repeat(16),
            events: entries.len() as u64,
            head: prev,
            state_hash,
            signed: None,
        };
        render(&header, &out)
    }

    /// Changes the first die of the first roll, keeping the roll's own arithmetic right;
    /// returns the roll's index.
    fn forge_first_die(entries: &mut [Entry]) -> usize {
        let roll_at = entries
            .iter()
            .position(|e| matches!(e.event, Event::DiceRolled(_)))
            .unwrap();
        if let Event::DiceRolled(DiceRolled { roll }) = &mut entries[roll_at].event {
            roll.dice[0] = roll.dice[0] % 6 + 1;
            roll.final_result = roll.raw()
                + roll
                    .modifiers
                    .iter()
                    .map(|m| i16::from(m.value))
                    .sum::<i16>();
        }
        roll_at
    }

    fn verify_text(text: &str) -> Result<Verified, VerifyError> {
        verify(text.as_bytes(), &mut |_, _| {})
    }

    /// An export is a file from others: a header line holding a terminal escape, a bidi
    /// override or a whole screen of text is quoted by its error escaped and cut short, so
    /// `asl verify` and `asl replay` print no control character of it.
    #[test]
    fn a_header_lines_own_text_is_quoted_escaped() {
        let text = export(&full_game());
        let hostile = format!("\u{1b}]0;owned\u{7}\u{202e}{}", "x".repeat(10_000));
        for (from, to) in [
            ("game ", format!("{hostile} ")),
            (&format!("{MAGIC} "), format!("{MAGIC} {hostile}")),
        ] {
            let forged = text.replacen(from, &to, 1);
            let e = verify_text(&forged).unwrap_err().to_string();
            assert!(
                !e.chars().any(|c| c.is_control() || c == '\u{202e}'),
                "{e:?}"
            );
            assert!(e.contains("\\u{1b}]0;owned"), "{e}");
            assert!(e.len() < 300, "{} bytes", e.len());
        }
    }

    #[test]
    fn a_whole_game_verifies_to_the_servers_state() {
        let r = full_game();
        let text = export(&r);
        let mut seen = vec![];
        let v = verify(text.as_bytes(), &mut |done, total| seen.push((done, total))).unwrap();
        assert_eq!(v.game.state_hash(), r.game().state_hash());
        assert_eq!(v.header.state_hash, r.game().state_hash());
        assert_eq!(v.entries, r.entries());
        let s = &v.summary;
        assert_eq!(s.events, r.entries().len() as u64);
        assert!(s.over);
        assert_eq!(s.turn, 1);
        assert_eq!(s.phases, 16, "8 phases in each Player Turn");
        assert!(s.rolls >= 2);
        assert_eq!(s.rolls_verified, s.rolls as usize);
        assert_eq!(
            (s.adjudications, s.accepted, s.disputed, s.undone),
            (2, 1, 1, 1)
        );
        assert_eq!(seen.last(), Some(&(s.events, s.events)));
        let report = v.report();
        assert!(report.starts_with("valid: game "), "{report}");
        assert!(report.contains("German: "), "{report}");
    }

    #[test]
    fn any_changed_byte_is_caught() {
        let text = export(&full_game());
        let bytes = text.as_bytes();
        let events_start = text.find("\n0").unwrap();
        for i in 0..bytes.len() {
            // Every byte of the header, checksum and the first events; a sample of the rest
            // (the whole file takes long in a debug build).
            if i > events_start + 2_000 && i < bytes.len() - 200 && i % 89 != 0 {
                continue;
            }
            for flip in [0x01u8, 0x80] {
                let mut bad = bytes.to_vec();
                bad[i] ^= flip;
                assert!(
                    verify(&bad, &mut |_, _| {}).is_err(),
                    "byte {i} ^ {flip:#x} went unnoticed"
                );
            }
        }
    }

    #[test]
    fn a_dropped_swapped_or_cut_event_is_named() {
        let text = export(&full_game());
        let all = lines(&text);
        let event_line = |seq: usize| 4 + seq; // five header lines, events from 1
        let join = |ls: &[String]| ls.join("\n") + "\n";

        let mut dropped = all.clone();
        dropped.remove(event_line(7));
        let err = verify_text(&join(&dropped)).unwrap_err();
        assert_eq!(err.at, Where::Event(7), "{err}");
        assert!(
            err.why.contains("missing") || err.why.contains("says it is 8"),
            "{err}"
        );

        let mut swapped = all.clone();
        swapped.swap(event_line(9), event_line(10));
        let err = verify_text(&join(&swapped)).unwrap_err();
        assert_eq!(err.at, Where::Event(9), "{err}");

        // The last event cut off, the checksum line kept: the header still counts it.
        let mut cut = all.clone();
        cut.remove(cut.len() - 2);
        let err = verify_text(&join(&cut)).unwrap_err();
        assert_eq!(err.at, Where::Header("events"), "{err}");

        let truncated = &text[..text.len() - 30];
        let err = verify_text(truncated).unwrap_err();
        assert_eq!(err.at, Where::File, "{err}");

        let err = verify_text("hello\n").unwrap_err();
        assert!(err.to_string().contains("checksum"), "{err}");
    }

    /// A log written before undo named the version to return to carries the whole position in
    /// `EventsUndone`: it still verifies, to the same state, when that position is the true one.
    #[test]
    fn an_undo_of_the_older_form_still_verifies() {
        let r = full_game();
        let mut entries = r.entries().to_vec();
        let undo_at = entries
            .iter()
            .position(|e| matches!(e.event, Event::EventsUndoneTo(_)))
            .unwrap();
        let Event::EventsUndoneTo(EventsUndoneTo {
            requested_by,
            consented_by,
            from,
            to,
        }) = entries[undo_at].event.clone()
        else {
            unreachable!()
        };
        let restored =
            Game::replay(entries[..(from - 1) as usize].iter().map(|e| &e.event)).unwrap();
        entries[undo_at].event = Event::EventsUndone(EventsUndone {
            requested_by,
            consented_by,
            from,
            to,
            restored: Box::new(restored),
        });
        let verified =
            verify_text(&reseal(&entries, r.game().state_hash())).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(verified.game.state_hash(), r.game().state_hash());
    }

    /// A rewritten log that is consistent in itself — chain, header and checksum all made
    /// anew — still fails where the dice or an undo were forged.
    #[test]
    fn a_consistent_rewrite_is_caught_by_the_dice_and_the_replay() {
        let r = full_game();
        let mut entries = r.entries().to_vec();
        let roll_at = forge_first_die(&mut entries);
        let err = verify_text(&reseal(&entries, r.game().state_hash())).unwrap_err();
        assert_eq!(err.at, Where::Event(roll_at as u64 + 1), "{err}");
        assert!(err.why.contains("revealed seed gives"), "{err}");

        let mut entries = r.entries().to_vec();
        let undo_at = entries
            .iter()
            .position(|e| matches!(e.event, Event::EventsUndoneTo(_)))
            .unwrap();
        // An undo in the older form, carrying a whole position: the position is checked
        // against a replay of the log before it, and this one is not that.
        if let Event::EventsUndoneTo(EventsUndoneTo {
            requested_by,
            consented_by,
            from,
            to,
        }) = entries[undo_at].event.clone()
        {
            let mut restored =
                Game::replay(entries[..(from - 1) as usize].iter().map(|e| &e.event)).unwrap();
            restored.units.get_mut("g1").unwrap().morale = board::scenario::Morale::Broken;
            entries[undo_at].event = Event::EventsUndone(EventsUndone {
                requested_by,
                consented_by,
                from,
                to,
                restored: Box::new(restored),
            });
        }
        let err = verify_text(&reseal(&entries, r.game().state_hash())).unwrap_err();
        assert_eq!(err.at, Where::Event(undo_at as u64 + 1), "{err}");
        assert!(err.why.contains("not the one before"), "{err}");

        // An answer to an adjudication the player could not give.
        let mut entries = r.entries().to_vec();
        let at = entries
            .iter()
            .position(|e| matches!(e.event, Event::AdjudicationAccepted(_)))
            .unwrap();
        if let Event::AdjudicationAccepted(AdjudicationAccepted { by, .. }) = &mut entries[at].event
        {
            *by = Side::B;
        }
        entries[at].by = Some(Side::B);
        let err = verify_text(&reseal(&entries, r.game().state_hash())).unwrap_err();
        assert_eq!(err.at, Where::Event(at as u64 + 1), "{err}");
    }

    #[test]
    fn replay_to_a_phase_is_the_position_live_play_had_then() {
        let mut r = start(7);
        to_german_mph(&mut r);
        let at_mph = r.game().clone();
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
        done(&mut r);
        let at_dfph = r.game().clone();
        while !r.game().over {
            done(&mut r);
        }
        let v = verify_text(&export(&r)).unwrap();
        let scenario = &v.game.scenario;
        let mph = Moment::parse("turn 1 german mph", scenario).unwrap();
        assert_eq!(replay_to(&v.entries, &mph).unwrap(), at_mph);
        let dfph = Moment::parse("turn 1 German DFPh", scenario).unwrap();
        assert_eq!(replay_to(&v.entries, &dfph).unwrap(), at_dfph);
        let by_number = Moment::parse(&at_dfph.version.to_string(), scenario).unwrap();
        assert_eq!(replay_to(&v.entries, &by_number).unwrap(), at_dfph);
        assert_eq!(replay_to(&v.entries, &Moment::End).unwrap(), v.game);
        let position = render_position(&at_dfph);
        assert!(
            position.starts_with("Turn 1, German Player Turn: DFPh"),
            "{position}"
        );
        assert!(position.contains("Sewer stack beneath 20"), "{position}");

        let never = Moment::parse("turn 2 German MPh", scenario).unwrap();
        assert!(matches!(
            replay_to(&v.entries, &never),
            Err(MomentError::NeverReached(_))
        ));
        assert!(replay_to(&v.entries, &Moment::Version(10_000)).is_err());
        for bad in [
            "turn x German MPh",
            "turn 1 Martian MPh",
            "turn 1 German Lunch",
            "0",
            "soon",
        ] {
            assert!(Moment::parse(bad, scenario).is_err(), "{bad}");
        }
    }

    /// The line of event `seq` in an export (five header lines before event 1).
    fn event_line(seq: u64) -> usize {
        4 + seq as usize
    }

    fn with_line(text: &str, seq: u64, change: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut all = lines(text);
        let mut bytes = HEXLOWER.decode(all[event_line(seq)].as_bytes()).unwrap();
        change(&mut bytes);
        all[event_line(seq)] = HEXLOWER.encode(&bytes);
        all.join("\n") + "\n"
    }

    #[test]
    fn an_edit_to_an_events_salt_or_body_is_named_at_that_event() {
        let r = full_game();
        let text = export(&r);
        for seq in [2, 9, 17] {
            // Format (1 byte), seq (1 byte), prev (32 bytes), then the salt.
            let salt = with_line(&text, seq, |b| b[2 + 32 + 3] ^= 0x40);
            let err = verify_text(&salt).unwrap_err();
            assert_eq!(err.at, Where::Event(seq), "salt of {seq}: {err}");
            let body = with_line(&text, seq, |b| {
                let last = b.len() - 1;
                b[last] ^= 0x01
            });
            let err = verify_text(&body).unwrap_err();
            assert_eq!(err.at, Where::Event(seq), "body of {seq}: {err}");
        }
    }

    /// A game ended early — conceded, or ended by agreement — reveals its seed as one that ran
    /// its course does, and verifies; without that reveal it does not, nor with the ending
    /// rewritten.
    #[test]
    fn games_ended_by_concession_or_agreement_are_rechecked() {
        for ending in [
            vec![(Side::B, Command::Concede)],
            vec![
                (Side::A, Command::ProposeEnd),
                (Side::B, Command::AcceptEnd),
            ],
        ] {
            let mut r = start(7);
            play(
                &mut r,
                Side::A,
                Command::ContributeEntropy { nonce: [3; 32] },
            );
            for (side, command) in &ending {
                play(&mut r, *side, command.clone());
            }
            let v = verify_text(&export(&r)).unwrap();
            assert!(v.summary.over);
            assert_eq!(v.summary.rolls_verified, v.summary.rolls as usize);

            let mut entries = r.entries().to_vec();
            let revealed = entries.pop().unwrap();
            assert!(matches!(revealed.event, Event::SeedRevealed(_)));
            let err = verify_text(&reseal(&entries, r.game().state_hash())).unwrap_err();
            assert!(err.why.contains("reveal"), "{err}");

            // The ending recorded as the other side's: its command decides otherwise.
            let mut entries = r.entries().to_vec();
            let last = entries.len() - 2;
            let first = entries[last].first as usize - 1;
            let issued = entries[first].command.as_mut().unwrap();
            issued.by = issued.by.opponent();
            let err = verify_text(&reseal(&entries, r.game().state_hash())).unwrap_err();
            assert_eq!(err.at, Where::Event(entries[first].seq), "{err}");
        }
    }

    #[test]
    fn a_forged_die_with_its_reveal_dropped_is_refused() {
        let r = full_game();
        let mut entries = r.entries().to_vec();
        forge_first_die(&mut entries);
        let revealed = entries.pop().unwrap();
        assert!(matches!(revealed.event, Event::SeedRevealed(_)));
        let end = entries.len() as u64;
        let err = verify_text(&reseal(&entries, r.game().state_hash())).unwrap_err();
        assert_eq!(err.at, Where::Event(end), "{err}");
        assert!(err.why.contains("not revealed"), "{err}");
        assert!(!err.to_string().contains(&r.game().state_hash().to_string()));

        // Dropping the end as well leaves a game no server exports.
        while !matches!(entries.last().unwrap().event, Event::StepEnded(_)) {
            entries.pop();
        }
        entries.pop();
        let err = verify_text(&reseal(&entries, r.game().state_hash())).unwrap_err();
        assert!(err.why.contains("before the game does"), "{err}");
    }

    #[test]
    fn an_illegal_move_resealed_is_refused_naming_its_command() {
        let r = full_game();
        let moved_at = r
            .entries()
            .iter()
            .position(|e| matches!(e.event, Event::UnitMoved(_)))
            .unwrap();
        // The event rewritten, the command kept: the event is not what the rules make.
        let mut entries = r.entries().to_vec();
        if let Event::UnitMoved(UnitMoved { to, .. }) = &mut entries[moved_at].event {
            *to = hex("20A4");
        }
        let err = verify_text(&reseal(&entries, r.game().state_hash())).unwrap_err();
        assert_eq!(err.at, Where::Event(moved_at as u64 + 1), "{err}");
        assert!(
            err.why.contains("not the UnitMoved the rules make"),
            "{err}"
        );

        // Command and event rewritten alike, two hexes on and onto the enemy: not legal.
        let mut entries = r.entries().to_vec();
        if let Event::UnitMoved(UnitMoved { to, .. }) = &mut entries[moved_at].event {
            *to = hex("20H5");
        }
        if let Some(issued) = &mut entries[moved_at].command {
            issued.command = Command::Move {
                units: vec!["g3".into()],
                to: hex("20H5"),
            };
        }
        let err = verify_text(&reseal(&entries, r.game().state_hash())).unwrap_err();
        assert_eq!(err.at, Where::Event(moved_at as u64 + 1), "{err}");
        assert!(err.why.contains("was not legal here"), "{err}");

        // An event with no command, or a side's event the server claims as its own.
        let mut entries = r.entries().to_vec();
        entries[moved_at].command = None;
        let err = verify_text(&reseal(&entries, r.game().state_hash())).unwrap_err();
        assert_eq!(err.at, Where::Event(moved_at as u64 + 1), "{err}");
        assert!(err.why.contains("records no command"), "{err}");
        let mut entries = r.entries().to_vec();
        entries[moved_at].by = None;
        let err = verify_text(&reseal(&entries, r.game().state_hash())).unwrap_err();
        assert_eq!(err.at, Where::Event(moved_at as u64 + 1), "{err}");
    }

    /// A game stored in format 3 by a build before `Rout` carried `morale` — its rout
    /// command in that shape — verifies: its envelopes read, its commands are decided again
    /// and its replay reaches the state the game reached.
    #[test]
    fn a_format_three_log_with_a_rout_before_its_morale_verifies() {
        let mut r = start_with(
            include_str!("../../tests/positions/scenarios/a10-5-rout.toml"),
            7,
        );
        let german = r.game().acting();
        let russian = german.opponent();
        while r.game().clock.phase() != game::phase::Phase::DefensiveFire {
            done(&mut r);
        }
        play(
            &mut r,
            russian,
            Command::Adjudicate {
                unit: "gd".into(),
                outcome: game::command::Outcome::Break,
                note: "DFPh, 1MC failed".into(),
            },
        );
        while r.game().clock.phase() != game::phase::Phase::Rout {
            done(&mut r);
        }
        play(
            &mut r,
            german,
            Command::Drop {
                unit: "gd".into(),
                weapon: "hmg".into(),
            },
        );
        play(
            &mut r,
            german,
            Command::Rout {
                unit: "gd".into(),
                to: hex("3M10"),
                morale: None,
            },
        );
        // A server exports finished games.
        play(&mut r, german, Command::Concede);
        let is_rout = |e: &Entry| {
            matches!(
                e.command,
                Some(crate::chain::Issued {
                    command: Command::Rout { .. },
                    ..
                })
            )
        };
        assert!(r.entries().iter().any(is_rout));
        let mut prev = GENESIS;
        let mut out = vec![];
        for e in r.entries() {
            let (bytes, hash) = crate::chain::seal_entry_v3(prev, [e.seq as u8; 16], e, is_rout(e));
            out.push(HEXLOWER.encode(&bytes));
            prev = hash;
        }
        let header = Header {
            game: "cd".repeat(16),
            events: out.len() as u64,
            head: prev,
            state_hash: r.game().state_hash(),
            signed: None,
        };
        let verified = verify_text(&render(&header, &out)).unwrap();
        assert_eq!(verified.entries, r.entries());
        assert_eq!(verified.game.state_hash(), r.game().state_hash());
    }

    #[test]
    fn logs_that_record_no_commands_cannot_be_rechecked() {
        let r = full_game();
        let mut prev = GENESIS;
        let mut out = vec![];
        for e in r.entries() {
            let (bytes, hash) =
                crate::chain::seal_v2(e.seq, prev, [1; 16], e.by, e.first, &e.event);
            out.push(HEXLOWER.encode(&bytes));
            prev = hash;
        }
        let header = Header {
            game: "cd".repeat(16),
            events: out.len() as u64,
            head: prev,
            state_hash: r.game().state_hash(),
            signed: None,
        };
        let err = verify_text(&render(&header, &out)).unwrap_err();
        assert_eq!(err.at, Where::Event(2), "{err}");
        assert!(err.why.contains("format 3"), "{err}");
    }

    #[test]
    fn reading_stops_at_the_limits() {
        let mut zeros = std::io::repeat(0).take(300 * 1024 * 1024);
        let err = read(&mut zeros).unwrap_err();
        assert_eq!(err.at, Where::File, "{err}");
        // A stream that looks like an export but goes on and on is cut at the limit.
        let line = "ab".repeat(1000) + "\n";
        let header = format!("{MAGIC} {FORMAT}\ngame ab\nevents 9\nhead 00\nstate 00\n");
        let mut endless = std::io::Cursor::new(header).chain(Lines2(line.into_bytes(), 0));
        let err = read(&mut endless).unwrap_err();
        assert!(err.why.contains("EXPORT_BYTES_MAX"), "{err}");
        let honest = export(&full_game());
        assert_eq!(read(&mut honest.as_bytes()).unwrap(), honest.as_bytes());
        let long = format!(
            "{MAGIC} {FORMAT}\ngame {}\n",
            "a".repeat(HEADER_LINE_BYTES_MAX)
        );
        assert!(read(&mut long.as_bytes()).is_err());
    }

    /// The same line over and over, without end.
    struct Lines2(Vec<u8>, usize);

    impl std::io::Read for Lines2 {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let mut n = 0;
            while n < buf.len() {
                buf[n] = self.0[self.1];
                self.1 = (self.1 + 1) % self.0.len();
                n += 1;
            }
            Ok(n)
        }
    }

    /// An honest game of every scenario — every step ended in turn, to the end — verifies.
    #[test]
    fn an_honest_game_of_every_scenario_verifies() {
        for toml in [
            include_str!("../../../scenarios/sewer-infiltration.toml"),
            include_str!("../../../scenarios/village-outskirts.toml"),
            include_str!("../../../scenarios/b9-41-wall-advantage.toml"),
        ] {
            let mut r = start_with(toml, 4);
            let name = r.game().scenario.name.clone();
            play(
                &mut r,
                Side::B,
                Command::ContributeEntropy { nonce: [8; 32] },
            );
            let mut steps = 0;
            while !r.game().over && steps < 10_000 {
                if let Some(c) = r.game().wa_chance.clone() {
                    play(&mut r, c.side, Command::DeclineWallAdvantage);
                } else {
                    done(&mut r);
                }
                steps += 1;
            }
            let v = verify_text(&export(&r)).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(v.game.state_hash(), r.game().state_hash(), "{name}");
        }
    }

    /// Plays a random game of the sewer scenario through the referee: each choice picks a
    /// command (moves to a neighbour, sewer movement, contributions, agreeing to reveal,
    /// adjudications and answers, undo); refused ones are skipped; then every step is ended.
    fn random_game(choices: &[(u8, u8)]) -> crate::referee::Referee {
        use game::command::Outcome;
        let mut r = start(11);
        for (kind, pick) in choices {
            let side = if pick % 2 == 0 { Side::A } else { Side::B };
            let acting = r.game().acting();
            let units: Vec<(String, board::hex::Hex)> = r
                .game()
                .units
                .values()
                .filter(|u| u.side == acting && !u.eliminated)
                .map(|u| (u.id.clone(), u.hex))
                .collect();
            let (id, at) = units[usize::from(*pick) % units.len()].clone();
            let command = match kind % 9 {
                0 | 1 => {
                    if let Some(d) = r.game().sewer_designation.clone() {
                        let _ = r.play(
                            d.defender,
                            &Command::DesignateSewer { to: d.options[0] },
                            &mut seeds(),
                        );
                        continue;
                    }
                    if let Some(c) = r.game().wa_chance.clone() {
                        let _ = r.play(c.side, &Command::DeclineWallAdvantage, &mut seeds());
                        continue;
                    }
                    (acting, Command::Done)
                }
                2 | 3 => {
                    let next = r.game().scenario.geometry().neighbours(at);
                    let to = next[usize::from(*pick) % next.len()];
                    (
                        acting,
                        Command::Move {
                            units: vec![id],
                            to,
                        },
                    )
                }
                4 => (
                    Side::A,
                    Command::SewerMove {
                        units: vec!["g1".into(), "g2".into(), "gl".into()],
                        to: hex(["20E4", "20F6", "20H5"][usize::from(*pick) % 3]),
                    },
                ),
                5 => (side, Command::ContributeEntropy { nonce: [*pick; 32] }),
                6 => (side, Command::AgreeToRevealSeed),
                7 => (
                    side,
                    Command::Adjudicate {
                        unit: id,
                        outcome: Outcome::Pin,
                        note: "random".into(),
                    },
                ),
                _ => {
                    let last = r.game().version;
                    match pick % 3 {
                        0 => (side, Command::AcceptAdjudication { event: last }),
                        1 => (
                            acting,
                            Command::RequestUndo {
                                from: r.entries().last().unwrap().first,
                            },
                        ),
                        _ => (side, Command::ConsentToUndo),
                    }
                }
            };
            let _ = r.play(command.0, &command.1, &mut seeds());
        }
        let mut steps = 0;
        while !r.game().over && steps < 1_000 {
            if let Some(c) = r.game().wa_chance.clone() {
                play(&mut r, c.side, Command::DeclineWallAdvantage);
            } else if let Some(Event::UndoRequested(UndoRequested { by, .. })) =
                r.entries().last().map(|e| e.event.clone())
            {
                play(&mut r, by.opponent(), Command::DeclineUndo);
            } else {
                done(&mut r);
            }
            steps += 1;
        }
        assert!(r.game().over);
        r
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

        /// Export → verify is valid for any legal game, and any single event changed (and the
        /// whole file re-sealed around it, as a forger would) makes it invalid.
        #[test]
        fn random_legal_games_verify_and_any_changed_event_does_not(
            choices in proptest::collection::vec((0u8..=255, 0u8..=255), 0..60),
            which in 0usize..10_000,
            byte in 0usize..10_000,
            flip in 1u8..=255,
        ) {
            let r = random_game(&choices);
            let v = verify_text(&export(&r)).unwrap();
            proptest::prop_assert_eq!(v.game.state_hash(), r.game().state_hash());

            let entries = r.entries().to_vec();
            let k = 1 + which % (entries.len() - 1);
            // Decoded within the envelope limit, as the log is: a changed length byte must not
            // ask for a huge allocation.
            let config = bincode::config::standard()
                .with_limit::<{ crate::chain::ENVELOPE_BYTES_MAX }>();
            let encoded = bincode::serde::encode_to_vec(&entries[k].event, config).unwrap();
            // The first change of the event's encoding, from `byte` on, that still decodes to
            // another event.
            let changed = (0..encoded.len()).find_map(|i| {
                let mut bytes = encoded.clone();
                bytes[(byte + i) % encoded.len()] ^= flip;
                let (event, read): (Event, usize) =
                    bincode::serde::decode_from_slice(&bytes, config).ok()?;
                (read == bytes.len() && event != entries[k].event).then_some(event)
            });
            if let Some(event) = changed {
                let mut forged = entries.clone();
                forged[k].event = event;
                let result = verify_text(&reseal(&forged, r.game().state_hash()));
                proptest::prop_assert!(result.is_err(), "event {} changed went unnoticed", k + 1);
            }
        }
    }

    /// Every roll through the referee: `roll` draws from the committed seed, is logged with
    /// its purpose and rule, counted per side and purpose, checked by verify like any other;
    /// an adjudication may cite the roll it follows, and only a roll.
    /// A Close Combat the engine resolves verifies: the Ambush drs the ATTACKER's `done` rolls
    /// for both sides (A11.4) and the CC attacks the DEFENDER's designation rolls for both
    /// sides (A11.11) each name the side whose command made them.
    #[test]
    fn a_close_combat_with_its_ambush_check_verifies() {
        use game::command::CcAttack;
        use game::phase::Phase;
        let mut r = start_with(
            include_str!("../../tests/positions/scenarios/a11-4-ambush.toml"),
            9,
        );
        while r.game().clock.phase() != Phase::Advance {
            done(&mut r);
        }
        for (unit, to) in [("g1", "3C3"), ("g2", "3E3")] {
            play(
                &mut r,
                Side::A,
                Command::Advance {
                    units: vec![unit.into()],
                    to: hex(to),
                },
            );
        }
        let events = done(&mut r);
        let checks = events
            .iter()
            .filter(|e| matches!(e, Event::AmbushChecked(_)))
            .count();
        assert_eq!(checks, 2, "{events:?}");
        assert_eq!(r.game().clock.phase(), Phase::CloseCombat);
        let cc = |hex_name: &str, a: &str, d: &str| Command::CloseCombat {
            hex: hex(hex_name),
            attacks: vec![CcAttack {
                attackers: vec![a.into()],
                defenders: vec![d.into()],
            }],
            withdrawals: vec![],
            no_ambush: false,
        };
        play(&mut r, Side::A, cc("3C3", "g1", "r1"));
        let resolved = play(&mut r, Side::B, cc("3C3", "r1", "g1"));
        assert!(resolved.iter().any(|e| matches!(e, Event::DiceRolled(_))));
        play(&mut r, Side::B, Command::Concede);
        let v = verify_text(&export(&r)).unwrap();
        assert_eq!(v.game.state_hash(), r.game().state_hash());
        assert_eq!(v.summary.rolls_verified, v.summary.rolls as usize);
        assert!(v.summary.rolls >= 5, "{}", v.summary.rolls);
    }

    #[test]
    fn rolls_on_request_are_committed_logged_cited_and_verified() {
        use game::command::{DiceCount, Outcome};
        use game::dice::RollPurpose;
        let mut r = start(5);
        to_german_mph(&mut r);
        let roll = |dice, purpose, note: &str| Command::Roll {
            dice,
            purpose,
            note: note.into(),
        };
        let refused = r
            .play(
                Side::B,
                &roll(DiceCount::Two, RollPurpose::Other, " "),
                &mut seeds(),
            )
            .unwrap_err();
        assert!(refused.detail.contains("note"), "{refused}");
        let refused = r
            .play(
                Side::B,
                &roll(DiceCount::Dr, RollPurpose::SewerLost, ""),
                &mut seeds(),
            )
            .unwrap_err();
        assert_eq!(refused.kind, rules::violation::ViolationKind::NotModelled);
        let drawn = r.game().dice_drawn;
        let events = play(
            &mut r,
            Side::B,
            roll(DiceCount::Two, RollPurpose::Ift, "8 FP vs 20A2"),
        );
        assert!(matches!(events[0], Event::DiceCommitted(_)), "{events:?}");
        let Event::DiceRolled(DiceRolled { roll: logged }) = &events[1] else {
            panic!("{events:?}")
        };
        assert_eq!((logged.dice.len(), logged.first_draw), (2, drawn));
        assert_eq!((logged.rule.as_str(), logged.side), ("A7", Side::B));
        let roll_seq = r.game().version;
        play(
            &mut r,
            Side::A,
            roll(DiceCount::Dr, RollPurpose::RandomSelection, ""),
        );
        let not_a_roll = r
            .play(
                Side::B,
                &Command::AdjudicateAfterRoll {
                    unit: "g3".into(),
                    outcome: Outcome::Pin,
                    roll: 2,
                    note: String::new(),
                },
                &mut seeds(),
            )
            .unwrap_err();
        assert_eq!(
            not_a_roll.kind,
            rules::violation::ViolationKind::UnknownEvent
        );
        let cited = play(
            &mut r,
            Side::B,
            Command::AdjudicateAfterRoll {
                unit: "g3".into(),
                outcome: Outcome::Pin,
                roll: roll_seq,
                note: "PTC".into(),
            },
        );
        let Event::OutcomeAdjudicated(OutcomeAdjudicated { note, .. }) = &cited[0] else {
            panic!("{cited:?}")
        };
        assert!(
            note.starts_with(&format!("after #{roll_seq} (IFT (A7)")),
            "{note}"
        );
        while !r.game().over {
            done(&mut r);
        }
        let v = verify_text(&export(&r)).unwrap();
        assert_eq!(v.summary.rolls_verified, v.summary.rolls as usize);
        let stats = v.stats();
        assert_eq!(stats.sides[1].purposes[&RollPurpose::Ift].rolls, 1);
        assert_eq!(
            stats.sides[0].purposes[&RollPurpose::RandomSelection].rolls,
            1
        );
        assert!(v.report().contains("IFT (A7): 1 rolls"), "{}", v.report());
    }

    #[test]
    fn limits_are_enforced_before_reading() {
        let big = vec![b'a'; EXPORT_BYTES_MAX + 1];
        let err = verify(&big, &mut |_, _| {}).unwrap_err();
        assert!(!err.why.contains(&big.len().to_string()), "{err}");
        assert!(err.why.contains("EXPORT_BYTES_MAX"), "{err}");
        let text = export(&full_game()).replacen(
            &format!("events {}", full_game().entries().len()),
            &format!("events {}", EXPORT_EVENTS_MAX + 1),
            1,
        );
        let err = verify_text(&text).unwrap_err();
        assert_eq!(err.at, Where::Header("events"), "{err}");
    }
}

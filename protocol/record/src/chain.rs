//! The hash chain a game's log is kept in, shared by the server's store and every offline
//! verifier: each event in a versioned envelope that carries its sequence, the hash of the
//! envelope before it, who issued the command it came from and where that command's events
//! begin. Any edit, drop, reorder or truncation in the middle of a chain is caught when it is
//! read back; the last envelope is vouched for by the head hash, which clients are shown.
//!
//! The bytes hashed are the stored bytes, so an export made of them ends at the same head the
//! server showed its players.

use bincode::BorrowDecode;
use board::scenario::Side;
use data_encoding::HEXLOWER;
use game::command::Command;
use game::event::Event;
use game::event::{ClockStarted, GameCreated};
use serde::{Deserialize, Serialize};

/// Version of the envelope layout written now. A reader refuses formats it does not know
/// instead of misreading them.
///
/// - 1: `format, seq, prev, event`.
/// - 2: adds `salt` (so that a head hash says nothing about events a viewer may not see),
///   `by` (the side whose command produced the event; `None` for the server's own events) and
///   `first` (the sequence of the first event of that command, so commands can be taken back
///   whole).
/// - 3: adds `key`, the client's key for the command whose first event this is (`None` for
///   every other event, and for commands sent without one), so a server restarted from the
///   log still recognises a command sent again (exactly-once commands, `docs/protocol.md`);
///   and `command`: the command a side issued, with its issuer, in the envelope of the first
///   event it produced, so a verifier can decide it again against the replayed position and
///   require the logged events to be exactly the decision (`docs/review.md`). The command and
///   event are in the shapes of the build that wrote them, which nothing froze: this version
///   reads today's shapes and a `Rout` without its `morale` ([`RoutWithoutMorale`]), and names
///   an envelope it could read both ways undecodable rather than guess.
/// - 4: format 3's fields. What changes is the promise: its command and event are in the
///   shapes `protocol/tests/golden.rs` freezes, which no later build changes (a new
///   variant goes last; a changed shape takes a new format, the old one read by a frozen copy).
pub const ENVELOPE_FORMAT: u16 = 4;

/// The third envelope layout, still read: envelopes written before the shapes of commands and
/// events were frozen (format 4), whose `Rout` may lack its `morale`.
pub(crate) const ENVELOPE_FORMAT_V3: u16 = 3;

/// The second envelope layout, still read: events stored before keys and commands were
/// recorded.
pub(crate) const ENVELOPE_FORMAT_V2: u16 = 2;

/// The first envelope layout, still read: games stored before format 2 keep being served.
pub(crate) const ENVELOPE_FORMAT_V1: u16 = 1;

/// Largest envelope read from outside the server (an export file), in bytes: 2 MiB. The largest
/// event is an undo carrying a whole position, which a `joined` frame (at most 1 MiB of JSON,
/// several times larger than bincode) must also carry; twice that bounds what a forged file can
/// make a verifier allocate. The wire, a layer above, asserts at compile time that this stays
/// twice its `FRAME_BYTES_MAX`.
pub const ENVELOPE_BYTES_MAX: usize = 2 * 1024 * 1024;

/// Random bytes in every envelope. A viewer who knows the head hash could otherwise hash
/// guesses at an event hidden from them (which hex did the HIP unit enter?) until one matched;
/// 128 unknown bits make that hopeless.
pub type Salt = [u8; 16];

/// The blake3 hash of one stored envelope: a link of the chain. The hash of the last envelope
/// is the log's head.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct LogHash(pub [u8; 32]);

/// The `prev` of a game's first event.
pub const GENESIS: LogHash = LogHash([0; 32]);

impl LogHash {
    pub fn of(bytes: &[u8]) -> LogHash {
        LogHash(*blake3::hash(bytes).as_bytes())
    }

    /// Reads 64 hex digits.
    pub fn from_hex(text: &str) -> Option<LogHash> {
        let bytes = HEXLOWER.decode(text.as_bytes()).ok()?;
        Some(LogHash(bytes.try_into().ok()?))
    }
}

game::digest_text!(LogHash);

/// A command as the log records it: who issued it and what it said.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Issued {
    pub by: Side,
    pub command: Command,
}

/// One event of a log with what its envelope says about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub seq: u64,
    /// The side whose command produced it; `None` for the server's own events (`GameCreated`,
    /// the dice commitment and seed) and for events stored in format 1, which did not say.
    pub by: Option<Side>,
    /// The sequence of the first event of the same command (for format 1: `seq` itself).
    pub first: u64,
    /// The client's key for the command this event opens (format 3), if it gave one.
    pub key: Option<u64>,
    /// The command this event's command began with, on the first event of a command a side
    /// issued (format 3 on); `None` on the other events of a command, on the server's own
    /// `GameCreated`, and on events stored before format 3.
    pub command: Option<Issued>,
    pub event: Event,
}

impl Entry {
    /// A log's first entry: the server's `GameCreated` for `scenario`.
    pub fn created(scenario: board::scenario::Scenario) -> Entry {
        Entry {
            seq: 1,
            by: None,
            first: 1,
            key: None,
            command: None,
            event: Event::GameCreated(GameCreated { scenario }),
        }
    }

    /// A timed game's second entry: the server's `ClockStarted` with the time control chosen
    /// at creation and the moment (milliseconds since the Unix epoch) the clock starts.
    pub fn clock_started(control: board::time_control::TimeControl, at: u64) -> Entry {
        Entry {
            seq: 2,
            by: None,
            first: 2,
            key: None,
            command: None,
            event: Event::ClockStarted(ClockStarted { control, at }),
        }
    }
}

#[derive(Serialize)]
struct EnvelopeRef<'a> {
    format: u16,
    seq: u64,
    prev: [u8; 32],
    salt: Salt,
    by: Option<Side>,
    first: u64,
    key: Option<u64>,
    command: Option<&'a Issued>,
    event: &'a Event,
}

/// What a reader keeps of an [`EnvelopeRef`] (`BorrowDecode` below): the format was read
/// before, and the salt only makes the hash unguessable.
struct Envelope {
    seq: u64,
    prev: [u8; 32],
    by: Option<Side>,
    first: u64,
    key: Option<u64>,
    command: Option<Issued>,
    event: Event,
}

/// Reads the bytes [`EnvelopeRef`]'s `Serialize` writes, field by field as serde would, but
/// with bincode's own decoders for the fixed fields: `prev` and `salt` are read as one run of
/// bytes each rather than 48 one-byte elements, which was most of a replay's decoding. The
/// command and event go through serde as they were written.
impl<'de, Context> BorrowDecode<'de, Context> for Envelope {
    fn borrow_decode<D: bincode::de::BorrowDecoder<'de, Context = Context>>(
        decoder: &mut D,
    ) -> Result<Envelope, bincode::error::DecodeError> {
        use bincode::serde::BorrowCompat;
        let _format = u16::borrow_decode(decoder)?;
        let seq = u64::borrow_decode(decoder)?;
        let prev = fixed_bytes(decoder)?;
        let _salt: Salt = fixed_bytes(decoder)?;
        Ok(Envelope {
            seq,
            prev,
            by: BorrowCompat::<Option<Side>>::borrow_decode(decoder)?.0,
            first: u64::borrow_decode(decoder)?,
            key: BorrowCompat::<Option<u64>>::borrow_decode(decoder)?.0,
            command: BorrowCompat::<Option<Issued>>::borrow_decode(decoder)?.0,
            event: BorrowCompat::<Event>::borrow_decode(decoder)?.0,
        })
    }
}

/// `N` bytes as serde reads a `[u8; N]` (they are written one after another): taken at once
/// when there are that many, and otherwise read as serde reads them, for the same error.
fn fixed_bytes<'de, const N: usize, D: bincode::de::BorrowDecoder<'de>>(
    decoder: &mut D,
) -> Result<[u8; N], bincode::error::DecodeError>
where
    [u8; N]: Deserialize<'de>,
{
    use bincode::de::read::Reader;
    let Some(bytes) = decoder.reader().peek_read(N) else {
        return Ok(bincode::serde::BorrowCompat::<[u8; N]>::borrow_decode(decoder)?.0);
    };
    let bytes: [u8; N] = bytes.try_into().expect("N bytes were peeked");
    decoder.claim_bytes_read(N)?;
    decoder.reader().consume(N);
    Ok(bytes)
}

/// `Command::Rout` as builds wrote it before it carried the broken side's `morale` (A10.53's
/// Interdiction, 2026-11-30): a frozen copy, read from format-3 envelopes only. Nothing else of
/// a command or event changed its shape among the builds whose logs this version can read at
/// all; those before 2026-11-29 22:08 wrote a `GameCreated` whose scenario lacks the sides'
/// `nationality` and the units' `half_squad`, and stop at their first event (`docs/review.md`).
#[derive(Deserialize)]
struct RoutWithoutMorale {
    unit: board::scenario::UnitId,
    to: board::hex::Hex,
}

/// `Command::Rout`'s variant index, then and now: only its field was added
/// (`rout_keeps_its_variant_index`).
const ROUT_INDEX: u32 = 36;

/// A format-3 envelope whose command is a `Rout` in its shape before `morale`, read as a
/// `Rout` whose morale is not given (`None`, as a command without one is read today). Any
/// other envelope is refused here: today's shapes read it the same.
struct EnvelopeRoutWithoutMorale(Envelope);

impl<'de, Context> BorrowDecode<'de, Context> for EnvelopeRoutWithoutMorale {
    fn borrow_decode<D: bincode::de::BorrowDecoder<'de, Context = Context>>(
        decoder: &mut D,
    ) -> Result<EnvelopeRoutWithoutMorale, bincode::error::DecodeError> {
        use bincode::error::DecodeError;
        use bincode::serde::BorrowCompat;
        let _format = u16::borrow_decode(decoder)?;
        let seq = u64::borrow_decode(decoder)?;
        let prev = fixed_bytes(decoder)?;
        let _salt: Salt = fixed_bytes(decoder)?;
        let by = BorrowCompat::<Option<Side>>::borrow_decode(decoder)?.0;
        let first = u64::borrow_decode(decoder)?;
        let key = BorrowCompat::<Option<u64>>::borrow_decode(decoder)?.0;
        // `Some(Issued { by, command })`, as serde writes an option and a struct.
        if u8::borrow_decode(decoder)? != 1 {
            return Err(DecodeError::Other("no command recorded"));
        }
        let issuer = BorrowCompat::<Side>::borrow_decode(decoder)?.0;
        if u32::borrow_decode(decoder)? != ROUT_INDEX {
            return Err(DecodeError::Other("not a rout"));
        }
        let RoutWithoutMorale { unit, to } =
            BorrowCompat::<RoutWithoutMorale>::borrow_decode(decoder)?.0;
        Ok(EnvelopeRoutWithoutMorale(Envelope {
            seq,
            prev,
            by,
            first,
            key,
            command: Some(Issued {
                by: issuer,
                command: Command::Rout {
                    unit,
                    to,
                    morale: None,
                },
            }),
            event: BorrowCompat::<Event>::borrow_decode(decoder)?.0,
        }))
    }
}

/// Why a format-3 envelope was not read ([`decode_v3`]).
enum V3Error {
    /// Neither shape reads it; today's error.
    Decode(bincode::error::DecodeError),
    /// Today's shapes read it whole, and so does the `Rout` before `morale`, differently.
    Ambiguous,
}

/// A format-3 envelope read whole in the one shape that reads it: today's, or a `Rout` before
/// `morale`. Whichever build wrote it, its own shape reads it whole; if the other does too
/// and says something else, nothing certain tells which was written, and it is refused
/// rather than guessed. What today's shapes read with bytes left over is returned as today's
/// reading, for the caller to refuse as it refuses such bytes in any format.
fn decode_v3<C: bincode::config::Config>(
    bytes: &[u8],
    config: C,
) -> Result<(Envelope, usize), V3Error> {
    let today = bincode::borrow_decode_from_slice::<Envelope, _>(bytes, config);
    let before = bincode::borrow_decode_from_slice::<EnvelopeRoutWithoutMorale, _>(bytes, config)
        .ok()
        .filter(|(_, read)| *read == bytes.len());
    match (today, before) {
        (Ok((_, read)), Some(_)) if read == bytes.len() => Err(V3Error::Ambiguous),
        (_, Some((EnvelopeRoutWithoutMorale(envelope), read))) => Ok((envelope, read)),
        (Ok(today), None) => Ok(today),
        (Err(e), None) => Err(V3Error::Decode(e)),
    }
}

/// Format 2, read for logs stored before keys and commands were recorded.
#[derive(Serialize, Deserialize)]
struct EnvelopeV2 {
    format: u16,
    seq: u64,
    prev: [u8; 32],
    salt: Salt,
    by: Option<Side>,
    first: u64,
    event: Event,
}

#[derive(Serialize, Deserialize)]
struct EnvelopeV1 {
    format: u16,
    seq: u64,
    prev: [u8; 32],
    event: Event,
}

/// Encodes one event in the current format with no client key and no command recorded beside
/// it; returns the bytes and their hash (the next event's `prev`).
pub fn seal(
    seq: u64,
    prev: LogHash,
    salt: Salt,
    by: Option<Side>,
    first: u64,
    event: &Event,
) -> (Vec<u8>, LogHash) {
    seal_entry(
        prev,
        salt,
        &Entry {
            seq,
            by,
            first,
            key: None,
            command: None,
            event: event.clone(),
        },
    )
}

/// Encodes one entry — with the client's key and the command it records, on a command's first
/// event — in the current format; returns the bytes and their hash.
pub fn seal_entry(prev: LogHash, salt: Salt, entry: &Entry) -> (Vec<u8>, LogHash) {
    let bytes = bincode::serde::encode_to_vec(
        EnvelopeRef {
            format: ENVELOPE_FORMAT,
            seq: entry.seq,
            prev: prev.0,
            salt,
            by: entry.by,
            first: entry.first,
            key: entry.key,
            command: entry.command.as_ref(),
            event: &entry.event,
        },
        bincode::config::standard(),
    )
    .expect("events always encode");
    let hash = LogHash::of(&bytes);
    (bytes, hash)
}

/// Encodes one entry in format 3, as servers before format 4 stored it, its command and event
/// in today's shapes, or, with `rout_without_morale`, a `Rout` command in its shape before
/// `morale` ([`RoutWithoutMorale`]; its morale must be `None`). For tests of old logs.
pub fn seal_entry_v3(
    prev: LogHash,
    salt: Salt,
    entry: &Entry,
    rout_without_morale: bool,
) -> (Vec<u8>, LogHash) {
    /// The frozen shape, written.
    struct OldRout<'a>(&'a Command);
    impl Serialize for OldRout<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeStructVariant;
            let Command::Rout {
                unit,
                to,
                morale: None,
            } = self.0
            else {
                return Err(serde::ser::Error::custom("not a rout without morale"));
            };
            let mut v = s.serialize_struct_variant("Command", ROUT_INDEX, "rout", 2)?;
            v.serialize_field("unit", unit)?;
            v.serialize_field("to", to)?;
            v.end()
        }
    }
    #[derive(Serialize)]
    struct OldIssued<'a> {
        by: Side,
        command: OldRout<'a>,
    }
    let config = bincode::config::standard();
    let mut bytes = bincode::serde::encode_to_vec(
        (
            ENVELOPE_FORMAT_V3,
            entry.seq,
            prev.0,
            salt,
            entry.by,
            entry.first,
            entry.key,
        ),
        config,
    )
    .expect("envelopes always encode");
    let tail = match (&entry.command, rout_without_morale) {
        (Some(issued), true) => bincode::serde::encode_to_vec(
            (
                Some(OldIssued {
                    by: issued.by,
                    command: OldRout(&issued.command),
                }),
                &entry.event,
            ),
            config,
        ),
        _ => bincode::serde::encode_to_vec((entry.command.as_ref(), &entry.event), config),
    };
    bytes.extend(tail.expect("a rout without morale"));
    let hash = LogHash::of(&bytes);
    (bytes, hash)
}

/// Encodes one event in format 2, as servers before format 3 stored it (for tests of old logs).
pub fn seal_v2(
    seq: u64,
    prev: LogHash,
    salt: Salt,
    by: Option<Side>,
    first: u64,
    event: &Event,
) -> (Vec<u8>, LogHash) {
    let bytes = bincode::serde::encode_to_vec(
        EnvelopeV2 {
            format: ENVELOPE_FORMAT_V2,
            seq,
            prev: prev.0,
            salt,
            by,
            first,
            event: event.clone(),
        },
        bincode::config::standard(),
    )
    .expect("events always encode");
    let hash = LogHash::of(&bytes);
    (bytes, hash)
}

/// Encodes one event in format 1, as servers before format 2 stored it (for tests of old logs).
pub fn seal_v1(seq: u64, prev: LogHash, event: &Event) -> (Vec<u8>, LogHash) {
    let bytes = bincode::serde::encode_to_vec(
        EnvelopeV1 {
            format: ENVELOPE_FORMAT_V1,
            seq,
            prev: prev.0,
            event: event.clone(),
        },
        bincode::config::standard(),
    )
    .expect("events always encode");
    let hash = LogHash::of(&bytes);
    (bytes, hash)
}

/// Why a chain cannot be trusted, naming the first bad event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("event {seq}: {why}")]
pub struct ChainError {
    pub seq: u64,
    pub why: String,
    pub fault: Fault,
    /// An undecodable envelope's format is none this version knows.
    unknown_format: bool,
}

/// Whose fault a [`ChainError`] is: the data's, or the reader's. Damage is what the hash
/// chain (and the store's checksums under it) say; a log this version cannot decode although
/// the chain vouches for its bytes is not damaged, and is never reported as if it were.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The log is not what was written: an envelope is missing, changed, out of place.
    Damaged,
    /// An envelope did not decode; which of the two below it is, the envelopes around it say
    /// (`vouch`). What [`ChainReader::read`] returns alone, seeing one envelope.
    Undecodable,
    /// An envelope in its place in the chain, whose bytes the chain vouches for, that this
    /// version cannot decode (a format it does not know, or a value it cannot read back):
    /// the reader's fault. The log is kept as it is, for a version that reads it.
    Unreadable,
}

impl ChainError {
    fn damaged(seq: u64, why: String) -> ChainError {
        ChainError {
            seq,
            why,
            fault: Fault::Damaged,
            unknown_format: false,
        }
    }

    /// Whether the log itself is damaged (rather than unreadable by this version).
    pub fn is_damage(&self) -> bool {
        self.fault != Fault::Unreadable
    }
}

/// The fields every envelope format opens with: format, sequence, the hash it follows.
fn header(bytes: &[u8]) -> Option<(u64, LogHash)> {
    let config = bincode::config::standard().with_limit::<ENVELOPE_BYTES_MAX>();
    let ((_format, seq, prev), _): ((u16, u64, [u8; 32]), usize) =
        bincode::serde::decode_from_slice(bytes, config).ok()?;
    Some((seq, LogHash(prev)))
}

/// Settles an [`Fault::Undecodable`] error at `records[index]`, read after a chain whose head
/// was `head`: [`Fault::Unreadable`] when the chain vouches for the envelope's bytes — it
/// opens with its own place in the chain and the next envelope follows exactly these bytes —
/// and [`Fault::Damaged`] otherwise. The last envelope has no successor to vouch for it, so
/// it is named unreadable only when it is whole but of a format this version does not know
/// (a newer server wrote it); a last envelope of a known format that does not decode is
/// named damaged, since nothing but its own bytes speaks for it. Any other error is
/// returned as it is.
pub(crate) fn vouch(
    mut error: ChainError,
    records: &[(u64, Vec<u8>)],
    index: usize,
    head: LogHash,
) -> ChainError {
    if error.fault != Fault::Undecodable {
        return error;
    }
    let Some((_, bytes)) = records.get(index) else {
        error.fault = Fault::Damaged;
        return error;
    };
    let vouched = match records.get(index + 1) {
        Some((_, next)) => {
            header(next)
                .is_some_and(|(seq, prev)| seq == error.seq + 1 && prev == LogHash::of(bytes))
                && header(bytes).is_some_and(|(seq, prev)| seq == error.seq && prev == head)
        }
        None => {
            error.unknown_format
                && header(bytes).is_some_and(|(seq, prev)| seq == error.seq && prev == head)
        }
    };
    if vouched {
        error.fault = Fault::Unreadable;
        error.why = format!(
            "this version cannot read it ({}), though the hash chain vouches for its bytes: the log is not damaged",
            error.why
        );
    } else {
        error.fault = Fault::Damaged;
    }
    error
}

/// Reads a chain one envelope at a time, checking each against the one before: contiguous
/// sequences from 1, a known format, `prev` equal to the hash of the envelope before, `first`
/// pointing into the same command, and every event decodable within [`ENVELOPE_BYTES_MAX`].
#[derive(Clone, Debug)]
pub struct ChainReader {
    head: LogHash,
    next: u64,
    /// The `first` of the envelope before, to check that commands are contiguous.
    command: u64,
}

impl Default for ChainReader {
    fn default() -> ChainReader {
        ChainReader {
            head: GENESIS,
            next: 1,
            command: 0,
        }
    }
}

impl ChainReader {
    /// The hash of the last envelope read: the head, once all are read.
    pub fn head(&self) -> LogHash {
        self.head
    }

    /// How many envelopes have been read.
    pub fn len(&self) -> u64 {
        self.next - 1
    }

    pub fn is_empty(&self) -> bool {
        self.next == 1
    }

    /// Reads the next envelope, stored under `stored_seq` (the store's key, or the line's place
    /// in a file).
    pub fn read(&mut self, stored_seq: u64, bytes: &[u8]) -> Result<Entry, ChainError> {
        let expected = self.next;
        if stored_seq != expected {
            return Err(ChainError::damaged(
                expected,
                format!("missing; the log jumps to {stored_seq}"),
            ));
        }
        let err = |why: String| ChainError::damaged(expected, why);
        let undecodable = |why: String, unknown_format| ChainError {
            seq: expected,
            why,
            fault: Fault::Undecodable,
            unknown_format,
        };
        if bytes.len() > ENVELOPE_BYTES_MAX {
            return Err(err(format!(
                "is {} bytes, over the {ENVELOPE_BYTES_MAX}-byte limit",
                bytes.len()
            )));
        }
        let config = bincode::config::standard().with_limit::<ENVELOPE_BYTES_MAX>();
        let (format, _): (u16, usize) = bincode::serde::decode_from_slice(bytes, config)
            .map_err(|e| err(format!("cannot be decoded ({e})")))?;
        let fields = |(e, read): (Envelope, usize)| {
            (
                (e.seq, e.prev, e.by, e.first, e.key, e.command, e.event),
                read,
            )
        };
        let decoded = match format {
            ENVELOPE_FORMAT => {
                bincode::borrow_decode_from_slice::<Envelope, _>(bytes, config).map(fields)
            }
            ENVELOPE_FORMAT_V3 => match decode_v3(bytes, config) {
                Ok(read) => Ok(fields(read)),
                Err(V3Error::Decode(e)) => Err(e),
                Err(V3Error::Ambiguous) => return Err(undecodable(
                    "in format 3, reads both as a rout without its morale and as today's shapes, and nothing certain says which was written".into(),
                    false,
                )),
            },
            ENVELOPE_FORMAT_V2 => bincode::serde::decode_from_slice::<EnvelopeV2, _>(bytes, config)
                .map(|(e, read)| ((e.seq, e.prev, e.by, e.first, None, None, e.event), read)),
            ENVELOPE_FORMAT_V1 => bincode::serde::decode_from_slice::<EnvelopeV1, _>(bytes, config)
                .map(|(e, read)| ((e.seq, e.prev, None, e.seq, None, None, e.event), read)),
            other => {
                return Err(undecodable(format!(
                    "envelope format {other} is not one this version reads ({ENVELOPE_FORMAT_V1} to {ENVELOPE_FORMAT})"
                ), true))
            }
        };
        let ((seq, prev, by, first, key, command, event), read) =
            decoded.map_err(|e| undecodable(format!("cannot be decoded ({e})"), false))?;
        if key.is_some() && first != seq {
            return Err(err(
                "carries a client key but does not open its command".into()
            ));
        }
        if read != bytes.len() {
            return Err(err("has trailing bytes".into()));
        }
        if seq != expected {
            return Err(err(format!("is stored as {expected} but says it is {seq}")));
        }
        if prev != self.head.0 {
            // The link is checked when the next envelope is read, but what it catches is most
            // often an edit of the envelope before (its event, its salt): that one is named,
            // and the message says the link itself may be what changed.
            return Err(match expected {
                1 => err("does not start the chain (its link to the start was changed)".into()),
                _ => ChainError {
                    seq: expected - 1,
                    fault: Fault::Damaged,
                    unknown_format: false,
                    why: format!(
                        "is not the event that event {expected} follows (hash chain broken): it was changed, or event {expected}'s link to it was"
                    ),
                },
            });
        }
        // A command's events are contiguous: an event either opens a command or belongs to
        // the one the event before it belongs to.
        if first != seq && first != self.command {
            return Err(err(format!(
                "claims to belong to the command starting at {first}, which is not the one before it"
            )));
        }
        if command.is_some() && first != seq {
            return Err(err(format!(
                "records a command, but belongs to the command starting at {first}: a command is recorded on its first event"
            )));
        }
        self.head = LogHash::of(bytes);
        self.next += 1;
        self.command = first;
        Ok(Entry {
            seq,
            by,
            first,
            key,
            command,
            event,
        })
    }
}

/// A chain read back whole and checked.
#[derive(Debug)]
pub struct VerifiedChain {
    pub entries: Vec<Entry>,
    pub head: LogHash,
}

/// Reads and checks a whole stored chain.
pub fn verify(records: &[(u64, Vec<u8>)]) -> Result<VerifiedChain, ChainError> {
    let mut head = GENESIS;
    let entries = read_all(records, |after| head = after)?;
    Ok(VerifiedChain { entries, head })
}

/// Reads and checks a whole stored chain, telling `each_head` the head after each envelope;
/// an envelope that does not decode is settled by the chain around it (`vouch`).
pub fn read_all(
    records: &[(u64, Vec<u8>)],
    mut each_head: impl FnMut(LogHash),
) -> Result<Vec<Entry>, ChainError> {
    let mut reader = ChainReader::default();
    let mut entries = Vec::with_capacity(records.len());
    for (index, (seq, bytes)) in records.iter().enumerate() {
        let head = reader.head();
        entries.push(
            reader
                .read(*seq, bytes)
                .map_err(|e| vouch(e, records, index, head))?,
        );
        each_head(reader.head());
    }
    Ok(entries)
}

/// An envelope found at the start of some bytes ([`envelope_at`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Found {
    /// How many bytes it takes.
    pub len: usize,
    /// The sequence it says it has.
    pub seq: u64,
    /// The hash of the envelope it says it follows.
    pub prev: LogHash,
}

/// The envelope of a known format that decodes at the start of `bytes`, whatever follows it:
/// how a salvage of a damaged store finds envelopes among other bytes. Nothing of the chain is
/// checked here; [`ChainReader::read`] of exactly those bytes does that.
pub fn envelope_at(bytes: &[u8]) -> Option<Found> {
    let bytes = &bytes[..bytes.len().min(ENVELOPE_BYTES_MAX)];
    let config = bincode::config::standard().with_limit::<ENVELOPE_BYTES_MAX>();
    let (format, _): (u16, usize) = bincode::serde::decode_from_slice(bytes, config).ok()?;
    let (seq, prev, len) = match format {
        ENVELOPE_FORMAT => bincode::borrow_decode_from_slice::<Envelope, _>(bytes, config)
            .ok()
            .map(|(e, len)| (e.seq, e.prev, len))?,
        // Today's shapes, or a `Rout` before `morale`: the reading that takes all of `bytes`
        // if one does, else the first that reads. Both can read one envelope only where the
        // byte after the rout's hex is 0 or 1: as an old rout's first event, `GameCreated` or
        // `StepEnded`, which no rout makes; as a new rout's morale, `None` (its event then read
        // as a `GameCreated`'s scenario) or `Some` (its morale, 2 or more, then read as a
        // side). The chain read of exactly the bytes found settles it (`decode_v3`).
        ENVELOPE_FORMAT_V3 => {
            let today = bincode::borrow_decode_from_slice::<Envelope, _>(bytes, config).ok();
            let before =
                bincode::borrow_decode_from_slice::<EnvelopeRoutWithoutMorale, _>(bytes, config)
                    .ok()
                    .map(|(EnvelopeRoutWithoutMorale(e), len)| (e, len));
            let whole = |read: &Option<(Envelope, usize)>| {
                read.as_ref().is_some_and(|(_, len)| *len == bytes.len())
            };
            match (whole(&today), whole(&before)) {
                (false, true) => before,
                _ => today.or(before),
            }
            .map(|(e, len)| (e.seq, e.prev, len))?
        }
        ENVELOPE_FORMAT_V2 => bincode::serde::decode_from_slice::<EnvelopeV2, _>(bytes, config)
            .ok()
            .map(|(e, len)| (e.seq, e.prev, len))?,
        ENVELOPE_FORMAT_V1 => bincode::serde::decode_from_slice::<EnvelopeV1, _>(bytes, config)
            .ok()
            .map(|(e, len)| (e.seq, e.prev, len))?,
        _ => return None,
    };
    Some(Found {
        len,
        seq,
        prev: LogHash(prev),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use game::event::{GameEnded, StepEnded, WeaponDropped};
    use game::phase::Clock;

    /// Events 1–3 as a server stores them, with event 2's bytes replaced by `two` (the next
    /// envelope following `two` itself when `relinked`, else the original event 2).
    fn log_with_second(two: impl Fn(&[u8]) -> Vec<u8>, relinked: bool) -> Vec<(u64, Vec<u8>)> {
        let (first, h1) = seal(1, GENESIS, [1; 16], None, 1, &event(1));
        let (second, h2) = seal(2, h1, [2; 16], Some(Side::A), 2, &event(2));
        let changed = two(&second);
        let prev = if relinked { LogHash::of(&changed) } else { h2 };
        let (third, _) = seal(3, prev, [3; 16], Some(Side::B), 3, &event(3));
        vec![(1, first), (2, changed), (3, third)]
    }

    /// An envelope of a format this version does not know, in its place after `prev`.
    fn newer_format(seq: u64, prev: LogHash) -> Vec<u8> {
        bincode::serde::encode_to_vec(
            (ENVELOPE_FORMAT + 1, seq, prev.0, vec![7u8; 40]),
            bincode::config::standard(),
        )
        .unwrap()
    }

    #[test]
    fn an_envelope_the_chain_vouches_for_but_this_version_cannot_read_is_not_damage() {
        // The server wrote bytes it cannot decode and chained the next event to them: the
        // log is what was written, and the reader is at fault.
        let cut = |b: &[u8]| b[..b.len() - 3].to_vec();
        let e = verify(&log_with_second(cut, true)).unwrap_err();
        assert_eq!((e.seq, e.fault), (2, Fault::Unreadable), "{e}");
        assert!(!e.is_damage());
        assert!(e.to_string().contains("not damaged"), "{e}");
        // A format from a newer version, followed by the chain.
        let (first, h1) = seal(1, GENESIS, [1; 16], None, 1, &event(1));
        let newer = newer_format(2, h1);
        let (third, _) = seal(3, LogHash::of(&newer), [3; 16], None, 3, &event(3));
        let e = verify(&[(1, first.clone()), (2, newer.clone()), (3, third)]).unwrap_err();
        assert_eq!((e.seq, e.fault), (2, Fault::Unreadable), "{e}");
        // The same as the last event: whole, in its place, of a format still to come.
        let e = verify(&[(1, first), (2, newer)]).unwrap_err();
        assert_eq!((e.seq, e.fault), (2, Fault::Unreadable), "{e}");
    }

    #[test]
    fn an_envelope_changed_after_it_was_chained_is_damage() {
        // The same cut bytes, but the next event follows the bytes first written.
        let cut = |b: &[u8]| b[..b.len() - 3].to_vec();
        let e = verify(&log_with_second(cut, false)).unwrap_err();
        assert_eq!((e.seq, e.fault), (2, Fault::Damaged), "{e}");
        assert!(e.is_damage());
        // A flipped bit in the middle, whether or not the event still decodes.
        for at in [10, 60] {
            let flip = move |b: &[u8]| {
                let mut b = b.to_vec();
                let i = at.min(b.len() - 1);
                b[i] ^= 0x10;
                b
            };
            let e = verify(&log_with_second(flip, false)).unwrap_err();
            assert!(e.is_damage(), "{e}");
        }
        // A last event of a known format that does not decode: nothing vouches for it.
        let log = log_with_second(cut, true);
        let e = verify(&log[..2]).unwrap_err();
        assert_eq!((e.seq, e.fault), (2, Fault::Damaged), "{e}");
        // A newer format out of its place is damage too.
        let (first, _) = seal(1, GENESIS, [1; 16], None, 1, &event(1));
        let e = verify(&[(1, first), (2, newer_format(2, LogHash([9; 32])))]).unwrap_err();
        assert_eq!(e.fault, Fault::Damaged, "{e}");
    }

    #[test]
    fn an_envelope_is_found_among_other_bytes() {
        let (first, hash) = seal(1, GENESIS, [3; 16], None, 1, &event(1));
        let (second, _) = seal(2, hash, [4; 16], Some(Side::A), 2, &event(2));
        let mut bytes = vec![0xee; 5];
        bytes.extend(&second);
        bytes.extend([0xff; 9]);
        assert_eq!(envelope_at(&bytes), None);
        let found = envelope_at(&bytes[5..]).unwrap();
        assert_eq!((found.len, found.seq, found.prev), (second.len(), 2, hash));
        let mut reader = ChainReader::default();
        reader.read(1, &first).unwrap();
        reader.read(2, &bytes[5..5 + found.len]).unwrap();
        assert_eq!(envelope_at(&first[..first.len() - 1]), None);
    }

    fn event(seq: u64) -> Event {
        if seq.is_multiple_of(2) {
            Event::StepEnded(StepEnded {
                by: Side::A,
                ended: Clock::START,
                next: Clock::START,
            })
        } else {
            Event::GameEnded(GameEnded {
                turns_played: seq as u16,
            })
        }
    }

    /// `n` events; events 2 and 3 form one command.
    fn sample(n: u64) -> Vec<(u64, Vec<u8>)> {
        let mut prev = GENESIS;
        (1..=n)
            .map(|seq| {
                let first = if seq == 3 { 2 } else { seq };
                let (bytes, hash) = seal(
                    seq,
                    prev,
                    [seq as u8; 16],
                    Some(Side::B),
                    first,
                    &event(seq),
                );
                prev = hash;
                (seq, bytes)
            })
            .collect()
    }

    #[test]
    fn a_clean_chain_verifies_with_its_attributions() {
        let log = sample(5);
        let verified = verify(&log).unwrap();
        assert_eq!(verified.entries.len(), 5);
        assert_eq!(verified.head, LogHash::of(&log[4].1));
        assert_eq!(verified.entries[2].first, 2);
        assert_eq!(verified.entries[2].by, Some(Side::B));
        assert_eq!(verified.entries[2].event, event(3));
    }

    #[test]
    fn every_flipped_byte_is_caught_by_the_chain_or_the_head() {
        let log = sample(3);
        let head = verify(&log).unwrap().head;
        for i in 0..log.len() {
            for at in 0..log[i].1.len() {
                let mut bad = log.clone();
                bad[i].1[at] ^= 0x01;
                // The last envelope has no successor to vouch for it: the head does.
                match verify(&bad) {
                    Err(e) => assert!(e.seq <= i as u64 + 2, "{e}"),
                    Ok(v) => assert!(i + 1 == log.len() && v.head != head, "flip {i}/{at}"),
                }
            }
        }
    }

    #[test]
    fn dropped_swapped_and_regrouped_events_are_named() {
        let log = sample(4);
        let mut dropped = log.clone();
        dropped.remove(1);
        assert_eq!(verify(&dropped).unwrap_err().seq, 2);

        let mut swapped = log.clone();
        let (a, b) = (swapped[1].1.clone(), swapped[2].1.clone());
        swapped[1].1 = b;
        swapped[2].1 = a;
        assert_eq!(verify(&swapped).unwrap_err().seq, 2);

        // Event 4 claiming to belong to the command that began at 2 (which 3 ended) is refused.
        let mut prev = GENESIS;
        let forged: Vec<(u64, Vec<u8>)> = (1..=4)
            .map(|seq| {
                let first = match seq {
                    3 => 2,
                    4 => 1,
                    _ => seq,
                };
                let (bytes, hash) = seal(seq, prev, [0; 16], None, first, &event(seq));
                prev = hash;
                (seq, bytes)
            })
            .collect();
        let err = verify(&forged).unwrap_err();
        assert_eq!(err.seq, 4, "{err}");
    }

    #[test]
    fn format_one_envelopes_are_still_read_and_may_be_continued() {
        let (one, h1) = seal_v1(1, GENESIS, &event(1));
        let (two, _) = seal(2, h1, [9; 16], Some(Side::A), 2, &event(2));
        let verified = verify(&[(1, one), (2, two)]).unwrap();
        assert_eq!(verified.entries[0].by, None);
        assert_eq!(verified.entries[0].first, 1);
        assert_eq!(verified.entries[1].by, Some(Side::A));
    }

    /// Seals an event of `by`'s command starting at `first`, with a client key and, when it
    /// opens the command, the command recorded beside it.
    fn seal_keyed(
        seq: u64,
        prev: LogHash,
        salt: Salt,
        by: Option<Side>,
        first: u64,
        key: Option<u64>,
        event: &Event,
    ) -> (Vec<u8>, LogHash) {
        let command = by.filter(|_| first == seq).map(|by| Issued {
            by,
            command: Command::Done,
        });
        seal_entry(
            prev,
            salt,
            &Entry {
                seq,
                by,
                first,
                key,
                command,
                event: event.clone(),
            },
        )
    }

    /// Format 2 (no keys) is read on, and a format-3 chain continues it; a key is read back
    /// on the envelope that opens its command, beside the command, and refused on any other.
    #[test]
    fn keys_are_kept_on_the_first_event_of_their_command() {
        let (one, h1) = seal_v2(1, GENESIS, [1; 16], None, 1, &event(1));
        let (two, h2) = seal_keyed(2, h1, [2; 16], Some(Side::B), 2, Some(77), &event(2));
        let (three, _) = seal(3, h2, [3; 16], Some(Side::B), 2, &event(3));
        let verified = verify(&[(1, one.clone()), (2, two), (3, three)]).unwrap();
        let keys: Vec<_> = verified.entries.iter().map(|e| e.key).collect();
        assert_eq!(keys, [None, Some(77), None]);
        let commands: Vec<_> = verified
            .entries
            .iter()
            .map(|e| e.command.is_some())
            .collect();
        assert_eq!(commands, [false, true, false]);
        let (stray, _) = seal_keyed(2, h1, [2; 16], Some(Side::B), 1, Some(5), &event(2));
        let err = verify(&[(1, one), (2, stray)]).unwrap_err();
        assert!(err.why.contains("does not open its command"), "{err}");
    }

    /// The envelope as serde reads it, field by field: what the hand-written reader must agree
    /// with.
    #[derive(Deserialize, Debug, PartialEq)]
    struct SerdeEnvelope {
        _format: u16,
        seq: u64,
        prev: [u8; 32],
        _salt: Salt,
        by: Option<Side>,
        first: u64,
        key: Option<u64>,
        command: Option<Issued>,
        event: Event,
    }

    /// Every envelope of a whole game, and every cut and one-byte change of some of them,
    /// reads the same through the hand-written reader as through serde: the same fields, the
    /// same bytes read, the same error.
    #[test]
    fn envelopes_read_as_serde_reads_them() {
        let referee = crate::referee::testing::full_game();
        let config = bincode::config::standard().with_limit::<ENVELOPE_BYTES_MAX>();
        let mut prev = GENESIS;
        for (i, entry) in referee.entries().iter().enumerate() {
            let key = (i % 3 == 0).then_some(i as u64);
            let keyed = Entry {
                key: key.filter(|_| entry.first == entry.seq),
                ..entry.clone()
            };
            let (bytes, hash) = seal_entry(prev, [i as u8; 16], &keyed);
            prev = hash;
            let mut variants = vec![bytes.clone()];
            if i % 7 == 0 {
                variants.extend((0..bytes.len()).map(|cut| bytes[..cut].to_vec()));
                variants.extend((0..bytes.len()).map(|at| {
                    let mut changed = bytes.clone();
                    changed[at] ^= 0xa5;
                    changed
                }));
            }
            for bytes in variants {
                let ours = bincode::borrow_decode_from_slice::<Envelope, _>(&bytes, config)
                    .map(|(e, read)| {
                        (
                            e.seq, e.prev, e.by, e.first, e.key, e.command, e.event, read,
                        )
                    })
                    .map_err(|e| e.to_string());
                let serde = bincode::serde::decode_from_slice::<SerdeEnvelope, _>(&bytes, config)
                    .map(|(e, read)| {
                        (
                            e.seq, e.prev, e.by, e.first, e.key, e.command, e.event, read,
                        )
                    })
                    .map_err(|e| e.to_string());
                assert_eq!(ours, serde, "event {}", i + 1);
            }
        }
        // A length far past the envelope limit is refused before anything is allocated for it.
        let dropped = Event::WeaponDropped(WeaponDropped {
            unit: "g1".into(),
            weapon: String::new(),
        });
        let (mut bytes, _) = seal(1, GENESIS, [0; 16], None, 1, &dropped);
        // The weapon's length, last, from 0 to 2^60 bytes.
        assert_eq!(bytes.pop(), Some(0));
        bytes.extend_from_slice(&[0xfd, 0, 0, 0, 0, 0, 0, 0, 0x10]);
        let err = ChainReader::default().read(1, &bytes).unwrap_err();
        assert!(err.why.contains("cannot be decoded"), "{err}");
    }

    #[test]
    fn rout_keeps_its_variant_index() {
        let rout = Command::Rout {
            unit: "ga".into(),
            to: "D6".parse().unwrap(),
            morale: None,
        };
        let bytes = bincode::serde::encode_to_vec(&rout, bincode::config::standard()).unwrap();
        assert_eq!(u32::from(bytes[0]), ROUT_INDEX);
    }

    fn routed(morale: Option<u8>, event: Event) -> Entry {
        Entry {
            seq: 1,
            by: Some(Side::A),
            first: 1,
            key: Some(3),
            command: Some(Issued {
                by: Side::A,
                command: Command::Rout {
                    unit: "ga".into(),
                    to: "D6".parse().unwrap(),
                    morale,
                },
            }),
            event,
        }
    }

    /// A format-3 envelope whose `Rout` was written before it carried `morale` reads as a
    /// rout whose morale is not given; one written after reads with it; format 4 holds
    /// today's shapes alone.
    #[test]
    fn format_three_reads_a_rout_written_before_its_morale() {
        let old = routed(None, event(3));
        let (bytes, head) = seal_entry_v3(GENESIS, [5; 16], &old, true);
        assert_eq!(bytes[0], 3);
        let read = verify(&[(1, bytes.clone())]).unwrap();
        assert_eq!((read.entries, read.head), (vec![old.clone()], head));
        // In today's shapes it reads otherwise, or not at all: the old shape is what reads it.
        let today =
            bincode::borrow_decode_from_slice::<Envelope, _>(&bytes, bincode::config::standard());
        assert!(today.map_or(true, |(e, n)| n != bytes.len() || e.command != old.command));
        let found = envelope_at(&[&bytes[..], &[0xee; 7]].concat()).unwrap();
        assert_eq!(found.len, bytes.len());

        let new = routed(Some(8), event(3));
        let (bytes, _) = seal_entry_v3(GENESIS, [5; 16], &new, false);
        assert_eq!(
            verify(&[(1, bytes.clone())]).unwrap().entries,
            vec![new.clone()]
        );
        assert_eq!(envelope_at(&bytes).unwrap().len, bytes.len());
        let (bytes, _) = seal_entry(GENESIS, [5; 16], &new);
        assert_eq!(bytes[0], 4);
        assert_eq!(verify(&[(1, bytes)]).unwrap().entries, vec![new]);

        // The old shape under format 4: not read (named damaged, last and of a known format).
        let (mut bytes, _) = seal_entry_v3(GENESIS, [5; 16], &old, true);
        bytes[0] = 4;
        assert!(verify(&[(1, bytes)]).is_err());
    }

    /// A format-3 envelope that reads whole both as an old `Rout` and in today's shapes, each
    /// saying something else, is not guessed at: it is undecodable, and unreadable (not
    /// damaged) where the chain vouches for its bytes.
    #[test]
    fn a_format_three_envelope_read_two_ways_is_refused() {
        // Old: the rout, then `StepEnded { by: A, ended: 71/1/0, next: 5/9/0 }`. Today: the
        // rout with morale 0, then `TimeGiven { by: B, to: A, time: 5, at: 9 }`.
        let step = Event::StepEnded(StepEnded {
            by: Side::A,
            ended: Clock {
                turn: 71,
                player_turn: 1,
                step: 0,
            },
            next: Clock {
                turn: 5,
                player_turn: 9,
                step: 0,
            },
        });
        let (bytes, hash) = seal_entry_v3(GENESIS, [5; 16], &routed(None, step), true);
        let config = bincode::config::standard();
        let (today, n) = bincode::borrow_decode_from_slice::<Envelope, _>(&bytes, config).unwrap();
        assert_eq!(n, bytes.len());
        assert!(
            matches!(today.event, Event::TimeGiven(_)),
            "{:?}",
            today.event
        );
        let e = ChainReader::default().read(1, &bytes).unwrap_err();
        assert_eq!(e.fault, Fault::Undecodable);
        assert!(e.why.contains("nothing certain"), "{e}");
        let (next, _) = seal(2, hash, [6; 16], None, 2, &event(2));
        let e = verify(&[(1, bytes), (2, next)]).unwrap_err();
        assert_eq!((e.seq, e.fault), (1, Fault::Unreadable), "{e}");
    }

    #[test]
    fn unknown_formats_and_junk_are_refused() {
        let mut bytes = bincode::serde::encode_to_vec(7u16, bincode::config::standard()).unwrap();
        bytes.extend_from_slice(&[0; 40]);
        let err = verify(&[(1, bytes)]).unwrap_err();
        assert!(err.why.contains("format 7"), "{err}");
        assert!(verify(&[(1, vec![0xff; 3])]).is_err());
    }

    #[test]
    fn hex_has_one_reading() {
        // The codec every hex text in the record goes through: lowercase out, and only
        // lowercase in, so that one text has exactly one reading.
        assert_eq!(HEXLOWER.encode(&[0, 0xab, 0x10]), "00ab10");
        assert_eq!(HEXLOWER.decode(b"00ab10").ok(), Some(vec![0, 0xab, 0x10]));
        assert!(HEXLOWER.decode(b"00AB10").is_err());
        assert!(HEXLOWER.decode(b"0").is_err());
        assert!(HEXLOWER.decode(b"zz").is_err());
        assert!(HEXLOWER.decode(b"00 ab").is_err());
        assert_eq!(LogHash::from_hex(&"A".repeat(64)), None);
        let h = LogHash([7; 32]);
        assert_eq!(h.to_string(), "07".repeat(32));
        assert_eq!(format!("{h:?}"), format!("LogHash({})", "07".repeat(32)));
        assert_eq!(LogHash::from_hex(&h.to_string()), Some(h));
        assert_eq!(LogHash::from_hex("07"), None);
    }
}

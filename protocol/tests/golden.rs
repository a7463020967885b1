//! Stored logs stay readable: every `Command` and `Event` variant, and every variant of the
//! enums within them (`parts!`), encodes as the log stores it (bincode, by variant index,
//! inside an envelope of `record::chain`) to the bytes committed in `tests/golden/format-4.txt`,
//! and those bytes read back as the same value. A game's log is never rewritten, so a change
//! of a stored shape — a field added, removed, reordered or retyped, a variant inserted before
//! others — would leave every log holding the old shape unreadable, or worse, misread. This
//! test fails on any such change.
//!
//! What to do when it fails: a new variant goes LAST in its enum, and its sample is appended
//! to the fixture (below). Don't change the fields of an existing variant: add a variant at
//! the end (or a new event carrying the extra data). If a shape must change all the same,
//! bump `chain::ENVELOPE_FORMAT`, read the old format through a frozen copy of the old shape
//! converted to today's (as format 3's `Rout` without `morale` is read, `chain.rs`), and point
//! [`FIXTURE`] at a new file for the new format, made by an append; never edit a line of an
//! old one.
//!
//! The fixture holds one line per variant, `KIND INDEX NAME HEX JSON`: its enum (`command`,
//! `event`, or one of `parts!`), the variant's index (its first encoded number), its name, its
//! bincode in hex, and the sample itself in JSON, from which the test builds it. Appending
//! samples for the variants it lacks, and nothing else (existing lines are never touched):
//!
//! ```text
//! ASL_GOLDEN=append cargo test -p asl-protocol --test golden
//! ```
//!
//! A missing command's or event's sample is taken from the position scripts
//! (`tests/positions`), or from `built_commands`/`built_events` below for a variant no script
//! reaches; an enum's unit variant is made from its name, and its others are in `parts!`.
//! The test says which it found none of.

use data_encoding::HEXLOWER;
use protocol::board::hex::Hex;
use protocol::board::scenario::{Side, UnitId};
use protocol::chain::{self, Entry, Issued, GENESIS};
use protocol::command::{CcAttack, CcWithdrawal, DiceCount};
use protocol::event::*;
use protocol::{Command, Outcome};
use serde::de::{DeserializeOwned, Visitor};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[path = "support/events.rs"]
mod events;
use events::{built_events, position_samples};

const FIXTURE: &str = "tests/golden/format-4.txt";

/// Samples longer than this in JSON are taken only when no shorter one is found: the richest
/// sample under it is taken, so that its fields and the types within them are exercised.
const SAMPLE_JSON_CHARS: usize = 3000;

/// Variants whose index alone is pinned: `events_undone` carries a whole `Game`, whose layout
/// moves with the state (the state hash, not the log, pins what a game means). No build has
/// written it since `EventsUndoneTo` took its place (2026-11-26), and no log this version reads
/// holds it: those logs' scenarios are older than the ones it reads (`chain::RoutWithoutMorale`).
const INDEX_ONLY: &[&str] = &["events_undone"];

fn config() -> impl bincode::config::Config {
    bincode::config::standard()
}

/// Reads the variant names of an enum, in declaration order (that is, by variant index), as
/// its `Deserialize` hands them to a deserializer: the list the compiler keeps, so a variant
/// added tomorrow is in it without anyone writing it here.
struct VariantNames<'a>(&'a mut &'static [&'static str]);

impl<'de> serde::Deserializer<'de> for VariantNames<'_> {
    type Error = serde::de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(serde::de::Error::custom("only an enum's names are read"))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = variants;
        Err(serde::de::Error::custom("names read"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct identifier
        ignored_any
    }
}

fn variants<T: DeserializeOwned>() -> &'static [&'static str] {
    let mut names: &'static [&'static str] = &[];
    let _ = T::deserialize(VariantNames(&mut names));
    assert!(!names.is_empty(), "not an enum");
    names
}

/// A stored enum: its kind in the fixture, its samples' name and index.
trait Stored: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug + Clone {
    const KIND: &'static str;

    /// Samples of the variants that carry data, for an append.
    fn built() -> Vec<Self> {
        vec![]
    }

    /// The variant's name as serde writes it (the JSON's tag).
    fn name(&self) -> String {
        match serde_json::to_value(self).expect("it encodes") {
            serde_json::Value::String(name) => name,
            serde_json::Value::Object(map) => map.keys().next().cloned().expect("one key"),
            other => panic!(
                "{}: a variant encodes as a name or an object, not {other}",
                Self::KIND
            ),
        }
    }
}

impl Stored for Command {
    const KIND: &'static str = "command";
}

impl Stored for Event {
    const KIND: &'static str = "event";
}

/// The enums within commands and events, each variant pinned as a value of its own: a sample
/// of a command or event holds one variant of each at most, and a variant inserted before
/// another (as `Outcome::Reduce` once was, before `Relocate`) changes the index of those after
/// it. Samples of their unit variants are made from their names; the others are in
/// [`Stored::built`].
macro_rules! parts {
    ($($t:ty => $kind:literal $(, built $built:expr)?;)*) => {
        $(impl Stored for $t {
            const KIND: &'static str = $kind;
            $(fn built() -> Vec<$t> {
                $built
            })?
        })*

        /// Checks every kind of the fixture; the missing variants of each, with its kind's
        /// samples for an append.
        fn check_parts(lines: &[Line], failures: &mut Vec<String>) -> Vec<String> {
            let mut out = vec![];
            $({
                let missing = check::<$t>(lines, failures);
                let candidates: Vec<$t> = <$t>::built()
                    .into_iter()
                    .chain(missing.iter().filter_map(|n| {
                        serde_json::from_value(serde_json::Value::String(n.to_string())).ok()
                    }))
                    .collect();
                let mut none = vec![];
                append(&missing, &candidates, &mut out, &mut none);
                assert!(none.is_empty(), "no sample of {none:?}: write one in parts!");
            })*
            out
        }

        const PART_KINDS: &[&str] = &[$($kind),*];
    };
}

parts! {
    Side => "side";
    protocol::scenario::UnitKind => "unit_kind";
    protocol::scenario::Morale => "morale";
    protocol::board::model::Road => "road";
    protocol::terrain::Terrain => "terrain";
    protocol::terrain::HexsideFeature => "hexside_feature";
    protocol::terrain::Fortification => "fortification";
    protocol::setup::Edge => "edge";
    protocol::board::time_control::TimeControl => "time_control", built vec![
        protocol::board::time_control::TimeControl::parse("live:30m+10s").unwrap(),
        protocol::board::time_control::TimeControl::parse("correspondence:12h/5d,vacation=10d").unwrap(),
    ];
    DiceCount => "dice_count";
    Outcome => "outcome", built vec![Outcome::Relocate(Hex::new(None, 2, 3))];
    protocol::dice::RollPurpose => "roll_purpose";
    protocol::game::Underground => "underground", built vec![protocol::game::Underground::Sewer {
        lost: true,
        moved: false,
        emergence: Some(protocol::game::Emergence::Discovered),
    }];
    protocol::game::Emergence => "emergence";
    protocol::phase::Phase => "phase";
    protocol::phase::Role => "role";
    WaClaim => "wa_claim";
    WaLoss => "wa_loss", built vec![WaLoss::Ineligible {
        rule: "B9.32".into(),
        why: "a reason".into(),
    }];
    RepairResult => "repair_result";
}

/// One line of the fixture.
struct Line {
    kind: String,
    index: u32,
    name: String,
    bytes: Vec<u8>,
    json: String,
}

fn fixture_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE)
}

fn read_fixture() -> Vec<Line> {
    let text = std::fs::read_to_string(fixture_path()).unwrap_or_default();
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .enumerate()
        .map(|(n, l)| {
            let mut parts = l.splitn(5, ' ');
            let mut next = || {
                parts
                    .next()
                    .unwrap_or_else(|| panic!("{FIXTURE}: line {} is short", n + 1))
            };
            Line {
                kind: next().to_string(),
                index: next().parse().expect("an index"),
                name: next().to_string(),
                bytes: HEXLOWER.decode(next().as_bytes()).expect("hex"),
                json: next().to_string(),
            }
        })
        .collect()
}

/// The variant index bincode writes first: a varint, one byte below 251.
fn index_of(bytes: &[u8]) -> u32 {
    let (index, _): (u32, usize) =
        bincode::decode_from_slice(bytes, config()).expect("a variant index");
    index
}

/// Checks every line of `T`'s kind against the build, both ways, and returns the names of
/// `T`'s variants the fixture has no line for.
fn check<T: Stored>(lines: &[Line], failures: &mut Vec<String>) -> Vec<&'static str> {
    let names = variants::<T>();
    let mut seen = BTreeMap::new();
    for line in lines.iter().filter(|l| l.kind == T::KIND) {
        let at = format!("{} {} ({} {})", T::KIND, line.name, FIXTURE, line.index);
        if seen.insert(line.name.clone(), ()).is_some() {
            failures.push(format!("{at}: a second line of the same variant"));
            continue;
        }
        match names.iter().position(|n| *n == line.name) {
            Some(i) if i as u32 == line.index => {}
            Some(i) => failures.push(format!(
                "{at}: this variant is now number {i}, not {}: a variant was inserted or removed before it. Put new variants LAST; never remove or reorder one",
                line.index
            )),
            None => failures.push(format!(
                "{at}: no such variant now: it was renamed or removed. Logs hold it; restore it"
            )),
        }
        if INDEX_ONLY.contains(&line.name.as_str()) {
            if line.bytes.len() != 1 || index_of(&line.bytes) != line.index {
                failures.push(format!("{at}: its bytes are its index alone"));
            }
            continue;
        }
        let sample: T = match serde_json::from_str(&line.json) {
            Ok(sample) => sample,
            Err(e) => {
                failures.push(format!(
                    "{at}: its sample no longer reads ({e}): a field was renamed, removed or retyped. Add a new variant at the end instead, or bump the envelope format with a frozen copy of the old shape"
                ));
                continue;
            }
        };
        let encoded = bincode::serde::encode_to_vec(&sample, config()).expect("it encodes");
        if encoded != line.bytes {
            failures.push(format!(
                "{at}: encodes as {} where logs hold {}: its fields (or a type within them) changed. Add a new variant at the end instead, or bump the envelope format with a frozen copy of the old shape",
                HEXLOWER.encode(&encoded),
                HEXLOWER.encode(&line.bytes)
            ));
        }
        if index_of(&line.bytes) != line.index {
            failures.push(format!("{at}: its bytes open with another index"));
        }
        match bincode::serde::decode_from_slice::<T, _>(&line.bytes, config()) {
            Ok((read, used)) if used == line.bytes.len() && read == sample => {}
            Ok((read, used)) => failures.push(format!(
                "{at}: the stored bytes read back as {read:?} ({used} of {} bytes), not the sample",
                line.bytes.len()
            )),
            Err(e) => failures.push(format!("{at}: the stored bytes no longer read ({e})")),
        }
    }
    names
        .iter()
        .copied()
        .filter(|n| !seen.contains_key(*n))
        .collect()
}

/// A line for `sample`, as the fixture holds it.
fn line_of<T: Stored>(sample: &T) -> String {
    let bytes = bincode::serde::encode_to_vec(sample, config()).expect("it encodes");
    if INDEX_ONLY.contains(&sample.name().as_str()) {
        return format!(
            "{} {} {} {} -",
            T::KIND,
            index_of(&bytes),
            sample.name(),
            HEXLOWER.encode(&bytes[..1])
        );
    }
    format!(
        "{} {} {} {} {}",
        T::KIND,
        index_of(&bytes),
        sample.name(),
        HEXLOWER.encode(&bytes),
        serde_json::to_string(sample).expect("it encodes")
    )
}

/// The richest sample of `name` among `candidates`: the longest JSON under
/// [`SAMPLE_JSON_CHARS`], else the shortest; the first of equals.
fn pick<'a, T: Stored>(name: &str, candidates: &'a [T]) -> Option<&'a T> {
    let of_name: Vec<(usize, &T)> = candidates
        .iter()
        .filter(|c| c.name() == name)
        .map(|c| (serde_json::to_string(c).unwrap().len(), c))
        .collect();
    let under = of_name
        .iter()
        .filter(|(len, _)| *len <= SAMPLE_JSON_CHARS)
        .fold(None::<(usize, &T)>, |best, &(len, c)| match best {
            Some((b, _)) if b >= len => best,
            _ => Some((len, c)),
        });
    under
        .or_else(|| {
            of_name
                .iter()
                .fold(None, |best: Option<(usize, &T)>, &(len, c)| match best {
                    Some((b, _)) if b <= len => best,
                    _ => Some((len, c)),
                })
        })
        .map(|(_, c)| c)
}

/// Commands no position script issues.
fn built_commands() -> Vec<Command> {
    vec![
        Command::ClaimOnTime,
        Command::GiveTime { time: 3_600_000 },
        Command::StartVacation,
        Command::EndVacation,
        Command::ExpireClock,
        Command::Concede,
        Command::ProposeEnd,
        Command::AcceptEnd,
        Command::ContributeEntropy { nonce: [4; 32] },
        Command::AgreeToRevealSeed,
        Command::AcceptAdjudication { event: 12 },
        Command::DisputeAdjudication {
            event: 12,
            reason: "no LOS".into(),
        },
        Command::RequestUndo { from: 5 },
        Command::ConsentToUndo,
        Command::DeclineUndo,
        Command::CloseCombat {
            hex: Hex::new(None, 3, 4),
            attacks: vec![CcAttack {
                attackers: vec![UnitId::from("G1")],
                defenders: vec![UnitId::from("R1")],
            }],
            withdrawals: vec![CcWithdrawal {
                units: vec![UnitId::from("G2")],
                to: Hex::new(None, 3, 5),
            }],
            no_ambush: true,
        },
        Command::Roll {
            dice: DiceCount::Two,
            purpose: protocol::dice::RollPurpose::Interdiction,
            note: "a note".into(),
        },
        Command::Adjudicate {
            unit: UnitId::from("G1"),
            outcome: Outcome::Relocate(Hex::new(None, 2, 3)),
            note: "a note".into(),
        },
        Command::AdjudicateAfterRoll {
            unit: UnitId::from("G1"),
            outcome: Outcome::Wound,
            roll: 9,
            note: "a note".into(),
        },
    ]
}

/// Appends a line for each of `missing`, from the positions' samples or the built ones.
fn append<T: Stored>(missing: &[&str], from: &[T], out: &mut Vec<String>, none: &mut Vec<String>) {
    for name in missing {
        match pick(name, from) {
            Some(sample) => out.push(line_of(sample)),
            None => none.push(format!("{} {name}", T::KIND)),
        }
    }
}

#[test]
fn stored_commands_and_events_keep_their_encoding() {
    let lines = read_fixture();
    let mut failures = vec![];
    let missing_commands = check::<Command>(&lines, &mut failures);
    let missing_events = check::<Event>(&lines, &mut failures);
    let mut out = check_parts(&lines, &mut failures);
    for line in &lines {
        let known = [Command::KIND, Event::KIND, "envelope"];
        if !known.contains(&line.kind.as_str()) && !PART_KINDS.contains(&line.kind.as_str()) {
            failures.push(format!("{FIXTURE}: a line of unknown kind {}", line.kind));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    if missing_commands.is_empty() && missing_events.is_empty() && out.is_empty() {
        return;
    }
    if std::env::var("ASL_GOLDEN").as_deref() != Ok("append") {
        let parts: Vec<String> = out
            .iter()
            .map(|l| l.split(' ').take(3).collect::<Vec<_>>().join(" "))
            .collect();
        panic!(
            "no sample in {FIXTURE} of commands {missing_commands:?}, events {missing_events:?} or {parts:?}: a variant was added. It must be LAST in its enum; append its sample with\n  ASL_GOLDEN=append cargo test -p asl-protocol --test golden"
        );
    }
    let mut none = vec![];
    if !(missing_commands.is_empty() && missing_events.is_empty()) {
        let (mut commands, mut events, game) = position_samples();
        commands.extend(built_commands());
        events.extend(built_events(&game));
        append(&missing_commands, &commands, &mut out, &mut none);
        append(&missing_events, &events, &mut out, &mut none);
    }
    assert!(
        none.is_empty(),
        "no position makes a sample of {none:?}: write one in built_commands or built_events"
    );
    let mut text = std::fs::read_to_string(fixture_path()).unwrap_or_default();
    for line in out {
        text.push_str(&line);
        text.push('\n');
    }
    std::fs::create_dir_all(fixture_path().parent().unwrap()).unwrap();
    std::fs::write(fixture_path(), text).unwrap();
    // The lines just written are checked as any other.
    let mut failures = vec![];
    let lines = read_fixture();
    assert!(check::<Command>(&lines, &mut failures).is_empty());
    assert!(check::<Event>(&lines, &mut failures).is_empty());
    assert!(check_parts(&lines, &mut failures).is_empty());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The envelope itself: one whole envelope of the current format, every field set, is the
/// fixture's `envelope` line, and reads back as the entry it was made of.
#[test]
fn the_envelope_keeps_its_encoding() {
    let entry = Entry {
        seq: 1,
        by: Some(Side::B),
        first: 1,
        key: Some(5),
        command: Some(Issued {
            by: Side::B,
            command: Command::Rout {
                unit: UnitId::from("R1"),
                to: Hex::new(None, 3, 4),
                morale: Some(7),
            },
        }),
        event: Event::GameEnded(GameEnded { turns_played: 3 }),
    };
    let (bytes, _) = chain::seal_entry(GENESIS, [9; 16], &entry);
    let text = std::fs::read_to_string(fixture_path()).unwrap_or_default();
    let stored = text
        .lines()
        .find_map(|l| l.strip_prefix(&format!("envelope {0} format-{0} ", chain::ENVELOPE_FORMAT)))
        .map(|hex| {
            HEXLOWER
                .decode(hex.split(' ').next().unwrap().as_bytes())
                .unwrap()
        });
    let Some(stored) = stored else {
        if std::env::var("ASL_GOLDEN").as_deref() == Ok("append") {
            let mut text = text;
            text.push_str(&format!(
                "envelope {0} format-{0} {1} -\n",
                chain::ENVELOPE_FORMAT,
                HEXLOWER.encode(&bytes)
            ));
            std::fs::write(fixture_path(), text).unwrap();
            return;
        }
        panic!(
            "{FIXTURE} holds no envelope of format {}: a new format starts a fixture of its own (see this test's top)",
            chain::ENVELOPE_FORMAT
        );
    };
    assert_eq!(
        HEXLOWER.encode(&bytes),
        HEXLOWER.encode(&stored),
        "the envelope's layout changed: a new layout takes a new ENVELOPE_FORMAT, and the old one stays read"
    );
    let read = chain::verify(&[(1, stored)]).expect("the stored envelope reads");
    assert_eq!(read.entries, vec![entry]);
}

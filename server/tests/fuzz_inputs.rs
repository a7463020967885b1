//! Fuzzed inputs to everything that reads what a client or a player typed: the two frame
//! decoders the server runs on every websocket frame, and the script parser behind `asl check`
//! and `asl run`. Whatever the bytes, no panic, and every failure is a typed error.
//! (Random command sequences through `decide` — no panic, a refusal leaves the state hash
//! unchanged — are the laws in `protocol/tests/laws.rs`.)

use proptest::prelude::*;
use protocol::script::{parse_script, ScriptError};
use protocol::wire::{self, ClientMessage, WireError, FRAME_BYTES_MAX};
use protocol::ReadScenario;
use protocol::{Command, Scenario};

const SCENARIO: &str = include_str!("../../scenarios/b9-41-wall-advantage.toml");

/// Valid frames to mutate: mutations of real messages reach deeper into the decoders than
/// uniform noise, which fails on the first byte.
fn seeds() -> Vec<ClientMessage> {
    vec![
        ClientMessage::Join {
            game: "0123456789abcdef0123456789abcdef".into(),
            token: "t".repeat(64),
            since: Some(7),
        },
        ClientMessage::Command {
            id: 3,
            command: Command::Done,
            key: None,
        },
        ClientMessage::CreateGame {
            scenario: SCENARIO.into(),
            admin_token: None,
        },
        ClientMessage::GetLog { from: 1 },
        ClientMessage::Ping { nonce: u64::MAX },
    ]
}

/// A decoder's answer is a message or one of the wire's typed errors.
fn typed<T>(result: Result<T, WireError>) {
    match result {
        Ok(_) | Err(WireError::Malformed(_)) | Err(WireError::TooLarge(_)) => {}
    }
}

/// Applies `edits` (position, byte, kind) to `bytes`: overwrite, insert, or truncate there.
fn mutate(mut bytes: Vec<u8>, edits: &[(usize, u8, u8)]) -> Vec<u8> {
    for &(at, byte, kind) in edits {
        if bytes.is_empty() {
            bytes.push(byte);
            continue;
        }
        let at = at % bytes.len();
        match kind % 3 {
            0 => bytes[at] = byte,
            1 => bytes.insert(at, byte),
            _ => bytes.truncate(at),
        }
    }
    bytes
}

const SCRIPT: &str = "\
german done => ok phase=RPh
german move 467a H6 => ok mf_spent=467a:1
russian move 747a G5 => refused A3.3
german adjudicate 447a break \"IFT 4 +2, DR 9\"
dice 3 4
german done => ok acting=german turn=1 over=false
";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn bincode_frames_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        typed(wire::from_bincode::<ClientMessage>(&bytes));
    }

    #[test]
    fn mutated_bincode_frames_never_panic(
        seed in 0usize..5,
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..8),
    ) {
        let frame = wire::to_bincode(&seeds()[seed]);
        typed(wire::from_bincode::<ClientMessage>(&mutate(frame, &edits)));
    }

    #[test]
    fn json_frames_never_panic(text in "\\PC{0,300}") {
        typed(wire::from_json::<ClientMessage>(&text));
    }

    #[test]
    fn mutated_json_frames_never_panic(
        seed in 0usize..5,
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..8),
    ) {
        let frame = wire::to_json(&seeds()[seed]).into_bytes();
        // A frame is text, so only mutations that stay UTF-8 reach the decoder.
        if let Ok(text) = String::from_utf8(mutate(frame, &edits)) {
            typed(wire::from_json::<ClientMessage>(&text));
        }
    }

    #[test]
    fn scripts_never_panic(text in "(\\PC{0,60}\n){0,12}") {
        let scenario = Scenario::from_toml(SCENARIO).unwrap();
        let _: Result<_, ScriptError> = parse_script(&text, &scenario);
    }

    #[test]
    fn mutated_scripts_never_panic(
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..12),
    ) {
        let scenario = Scenario::from_toml(SCENARIO).unwrap();
        if let Ok(text) = String::from_utf8(mutate(SCRIPT.as_bytes().to_vec(), &edits)) {
            if let Err(e) = parse_script(&text, &scenario) {
                // A refusal names a line of the script.
                prop_assert!(e.line >= 1 && e.line <= text.lines().count().max(1), "{e}");
            }
        }
    }
}

/// The limits the fuzzers stay under, checked at and past: the largest legal frame size is
/// refused as too large one byte past it, never decoded.
#[test]
fn frames_past_the_limit_are_refused_unread() {
    let past = vec![0u8; FRAME_BYTES_MAX + 1];
    assert!(matches!(
        wire::from_bincode::<ClientMessage>(&past),
        Err(WireError::TooLarge(_))
    ));
}

//! Receipts: the signed head of a viewer's own stream (`record::signed`, `Stream::Viewer`)
//! that a player keeps after every `joined` and `accepted`, checked against a game's streams —
//! the server's live ones when the player joins again (a log that is behind the receipt, or
//! differs from it at its sequence, was rolled back), or the streams rebuilt from an export
//! (`asl verify --receipts`: the file must be the game the player was shown).
//!
//! A receipt names only what its viewer was shown — its own sequence and running hash — so
//! checking one never needs, and never reveals, anything hidden from that viewer.

use crate::signed::{ServerKey, SignedHead};
use crate::stream::Streams;
use game::Viewer;
use std::fmt;

/// Why a receipt does not hold for a game's streams.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mismatch {
    /// Its signature does not hold under the key the checker trusts (the reason says why).
    Signature(crate::signed::SignatureError),
    /// It is a head of the whole log, not of a viewer's own stream.
    NotAViewerStream,
    /// It is another game's.
    OtherGame { receipt: String, game: String },
    /// It is another viewer's stream than the one it was checked for.
    OtherViewer { receipt: Viewer, expected: Viewer },
    /// The viewer's stream holds fewer events than the receipt says it was sent.
    Behind { held: u64, has: u64 },
    /// The viewer's stream reaches the receipt's sequence with another hash: events up to it
    /// are not the ones the viewer was sent.
    Differs { seq: u64 },
}

impl Mismatch {
    /// Whether the mismatch says the game's log is not what the server signed for this viewer
    /// (rather than the receipt being the wrong one to show).
    pub fn is_rollback(&self) -> bool {
        matches!(self, Mismatch::Behind { .. } | Mismatch::Differs { .. })
    }
}

fn viewer_name(viewer: Viewer) -> String {
    match viewer {
        Viewer::Side(side) => format!("side {side:?}'s"),
        Viewer::Spectator => "the spectators'".into(),
    }
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mismatch::Signature(why) => write!(f, "the receipt's signature does not hold: {why}"),
            Mismatch::NotAViewerStream => write!(
                f,
                "the receipt is a head of the whole log, not of a viewer's own stream"
            ),
            Mismatch::OtherGame { receipt, game } => {
                write!(f, "the receipt is for game `{receipt}`, not `{game}`")
            }
            Mismatch::OtherViewer { receipt, expected } => write!(
                f,
                "the receipt is of {} stream, not {} stream",
                viewer_name(*receipt),
                viewer_name(*expected)
            ),
            Mismatch::Behind { held, has } => write!(
                f,
                "the receipt says event {held} of this stream was sent, but the stream holds only {has}: events {}..={held} are missing",
                has + 1
            ),
            Mismatch::Differs { seq } => write!(
                f,
                "the stream reaches event {seq} with another hash than the receipt's: events up to {seq} are not the ones that were sent"
            ),
        }
    }
}

/// Checks `receipt` under `trusted` (the server's key) as a receipt for game `game` (and, when
/// given, for `viewer`), then against `streams`: the viewer's stream must reach the receipt's
/// sequence with the receipt's hash. Returns the viewer and sequence it holds for.
pub fn check(
    receipt: &SignedHead,
    trusted: &ServerKey,
    game: &str,
    viewer: Option<Viewer>,
    streams: &Streams,
) -> Result<(Viewer, u64), Mismatch> {
    receipt.check(trusted).map_err(Mismatch::Signature)?;
    let (held_by, head) = receipt.viewer_head().ok_or(Mismatch::NotAViewerStream)?;
    if receipt.game != game {
        return Err(Mismatch::OtherGame {
            receipt: receipt.game.clone(),
            game: game.to_string(),
        });
    }
    if let Some(expected) = viewer.filter(|v| *v != held_by) {
        return Err(Mismatch::OtherViewer {
            receipt: held_by,
            expected,
        });
    }
    let has = streams.len(held_by);
    if receipt.version > has {
        return Err(Mismatch::Behind {
            held: receipt.version,
            has,
        });
    }
    if streams.hash(held_by, receipt.version) != head {
        return Err(Mismatch::Differs {
            seq: receipt.version,
        });
    }
    Ok((held_by, receipt.version))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signed::ServerSigningKey;
    use board::scenario::{Scenario, Side};
    use game::command::Command;
    use game::dice::ScriptedDice;
    use game::event::Event;
    use game::event::GameCreated;
    use game::{apply, Game};
    use rules::wall_advantage::ReadScenario;

    /// The streams of a short game: created, then each side ends steps.
    fn streams(steps: usize) -> Streams {
        let scenario =
            Scenario::from_toml(include_str!("../../../scenarios/b9-41-wall-advantage.toml"))
                .unwrap();
        let created = Event::GameCreated(GameCreated { scenario });
        let mut events = vec![created.clone()];
        let mut game = Game::replay([&created]).unwrap();
        for _ in 0..steps {
            let side = game.acting();
            for event in
                rules::decide(&game, side, &Command::Done, &mut ScriptedDice::default()).unwrap()
            {
                apply(&mut game, &event);
                events.push(event);
            }
        }
        Streams::of_log(&events)
    }

    #[test]
    fn a_receipt_holds_for_the_stream_that_reaches_it_and_names_what_does_not() {
        let key = ServerSigningKey::from_bytes(&[5; 32]);
        let trusted = ServerKey::of(&key);
        let full = streams(4);
        let german = Viewer::Side(Side::A);
        let seq = full.len(german);
        let receipt = SignedHead::of_stream(&key, "g", german, seq, full.hash(german, seq));
        assert_eq!(
            check(&receipt, &trusted, "g", Some(german), &full),
            Ok((german, seq))
        );
        // A log rolled back to an earlier point: the stream is behind the receipt.
        let short = streams(2);
        let has = short.len(german);
        assert_eq!(
            check(&receipt, &trusted, "g", None, &short),
            Err(Mismatch::Behind { held: seq, has })
        );
        // Same length, other events: a receipt at an earlier point of another game's stream.
        let other = SignedHead::of_stream(&key, "g", german, 2, crate::stream::StreamHash([3; 32]));
        let err = check(&other, &trusted, "g", None, &full).unwrap_err();
        assert_eq!(err, Mismatch::Differs { seq: 2 });
        assert!(err.is_rollback());
        assert!(err.to_string().contains("another hash"), "{err}");
        // The wrong receipt to show is named as such, not as a rollback.
        let wrong = [
            check(&receipt, &trusted, "h", None, &full).unwrap_err(),
            check(&receipt, &trusted, "g", Some(Viewer::Spectator), &full).unwrap_err(),
            check(
                &receipt,
                &ServerKey::of(&ServerSigningKey::from_bytes(&[6; 32])),
                "g",
                None,
                &full,
            )
            .unwrap_err(),
        ];
        assert!(matches!(wrong[0], Mismatch::OtherGame { .. }));
        assert!(matches!(wrong[1], Mismatch::OtherViewer { .. }));
        assert!(matches!(wrong[2], Mismatch::Signature(_)));
        assert!(wrong.iter().all(|m| !m.is_rollback()));
    }
}

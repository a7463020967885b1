//! An export file opened for review on one connection (`ClientMessage::Review`), for the
//! spectator page's dispute review: verified end to end by `protocol::export::verify`, then read
//! like a game — positions at any version, the record in words, the log — without joining one.
//!
//! An export is written only once a game is over, and it holds the whole game, so a review
//! shows everything in it: there is no one to hide anything from any more. It lives as long as
//! its connection; nothing of it is stored.

use crate::games::frames::within_page;
use protocol::apply;
use protocol::chain::LogHash;
use protocol::export::{self, Verified};
use protocol::game::view::Viewed;
use protocol::game::Game;
use protocol::record::signed::ServerKey;
use protocol::record::stream::StreamHash;
use protocol::record::words::describe_event;
use protocol::wire::{
    ClientMessage, ErrorCode, Position, RecordEntry, Sequenced, ServerMessage, LOG_PAGE_EVENTS_MAX,
};
use protocol::Event;
use std::sync::Arc;

/// What a review keeps while its connection lives: about the export's own size. The events
/// once (decoded), each envelope's hash, each event's words; not the file's text, not a second
/// copy of the events in the record, not the final position (a whole scenario again): the
/// record is put together from these when asked for, and positions are replayed.
pub struct Review {
    /// What the client was told on opening (`Reviewing`), the verifier's report in it.
    opened: ServerMessage,
    /// The events: entry `i` is event `i + 1`.
    events: Vec<Event>,
    /// The hash of each envelope: the head at each version, for `State` and `Log`.
    heads: Vec<LogHash>,
    /// Each event in words, written once from the position it happened in, with its moment
    /// (one moment shared by the events of the same phase).
    words: Vec<(String, Arc<str>)>,
}

/// Why an export is not opened for review: the verifier's words, naming the first bad event
/// when an event is to blame.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReviewError {
    #[error("{0}")]
    Verify(#[from] export::VerifyError),
    #[error("{envelopes} envelopes for {events} events")]
    Counts { envelopes: usize, events: usize },
    #[error("{0}")]
    Replay(#[from] protocol::game::ReplayError),
    #[error("the receipt {n} of those sent: {mismatch}")]
    Receipt {
        n: usize,
        mismatch: protocol::record::receipt::Mismatch,
    },
}

/// What the client asked checked beside the file itself, as `asl verify` takes them: the
/// server key it trusts (`--server-key`) and the receipts it kept (`--receipts`), which are
/// checked only under that key.
#[derive(Clone, Debug, Default)]
pub struct Checks {
    pub trusted: Option<ServerKey>,
    pub receipts: Vec<protocol::record::signed::SignedHead>,
}

impl Review {
    /// Verifies `export` and prepares its record. The error is the verifier's, naming the first
    /// bad event when an event is to blame.
    /// An export is reviewed only if this server signed it (`key`): a file re-signed by anyone
    /// else, or unsigned, proves only its own consistency.
    ///
    /// The signature is checked first, from the header alone: replaying a large file costs
    /// a hundred milliseconds of CPU, and an anonymous client must not be able to buy that
    /// with a file this server never signed.
    /// A game on real boards is re-checked over `boards`, the operator's.
    ///
    /// `checks` are `asl verify`'s own, through the same functions: the signature under the
    /// key the client trusts, then each receipt it kept against the file; the report says what
    /// held, as `asl verify` prints it, and a receipt that does not hold refuses the file.
    pub fn open(
        export: &str,
        key: &ServerKey,
        boards: Option<&protocol::board::vasl::library::Boards>,
        checks: &Checks,
    ) -> Result<Review, ReviewError> {
        export::check_header_signature(export.as_bytes(), key)?;
        let verified = export::verify_on(export.as_bytes(), boards, &mut |_, _| {})?;
        verified.check_signature(key)?;
        let mut report = String::new();
        if let Some(trusted) = &checks.trusted {
            verified.check_signature(trusted)?;
            let held = verified
                .check_receipts(trusted, &checks.receipts)
                .map_err(|(i, mismatch)| ReviewError::Receipt { n: i + 1, mismatch })?;
            for (n, (viewer, seq)) in (1..).zip(held) {
                report.push_str(&verified.receipt_held(n, viewer, seq));
                report.push('\n');
            }
        }
        report.push_str(&verified.report());
        if let Some(trusted) = &checks.trusted {
            report.push_str(&verified.trust(Some(trusted)));
            report.push('\n');
        }
        let opened = ServerMessage::Reviewing {
            game: verified.header.game.clone(),
            version: verified.entries.len() as u64,
            head: verified.header.head,
            report,
        };
        let Verified {
            entries, hashes, ..
        } = verified;
        if hashes.len() != entries.len() {
            return Err(ReviewError::Counts {
                envelopes: hashes.len(),
                events: entries.len(),
            });
        }
        let mut events: Vec<Event> = entries.into_iter().map(|e| e.event).collect();
        events.shrink_to_fit();
        let mut game = Game::replay(events.iter().take(1))?;
        let mut words = Vec::with_capacity(events.len());
        let mut moment: Arc<str> = Arc::from("");
        for (event, seq) in events.iter().zip(1..) {
            let when = export::when(&game);
            if *moment != *when {
                moment = Arc::from(when);
            }
            words.push((describe_event(&game, event), moment.clone()));
            if seq > 1 {
                apply(&mut game, event);
            }
        }
        Ok(Review {
            opened,
            events,
            heads: hashes,
            words,
        })
    }

    /// What a client is told once its export is open.
    pub fn opened(&self) -> ServerMessage {
        self.opened.clone()
    }

    fn version(&self) -> u64 {
        self.events.len() as u64
    }

    /// The answer to `message` while reviewing, or `None` for messages answered as usual (a
    /// ping, creating a game). Reads come from the export; joining and commands are refused.
    pub fn answer(&self, message: &ClientMessage) -> Option<ServerMessage> {
        let refuse = |code, message: &str| ServerMessage::Error {
            code,
            message: message.into(),
        };
        Some(match message {
            ClientMessage::GetState => self.state_at(self.version()),
            ClientMessage::GetStateAt { version } => self.state_at(*version),
            ClientMessage::GetRecord { from } => ServerMessage::Record {
                version: self.version(),
                entries: within_page(self.page(*from).map(|(seq, event)| {
                    let (text, when) = &self.words[(seq - 1) as usize];
                    RecordEntry {
                        seq,
                        event: event.clone(),
                        text: text.clone(),
                        when: when.to_string(),
                    }
                })),
            },
            ClientMessage::GetLog { from } => ServerMessage::Log {
                version: self.version(),
                events: within_page(self.page(*from).map(|(seq, event)| Sequenced {
                    seq,
                    viewed: Arc::new(Viewed {
                        event: event.clone(),
                        renamed: vec![],
                        weapons: vec![],
                    }),
                    hash: StreamHash(self.heads[(seq - 1) as usize].0),
                })),
            },
            ClientMessage::Join { .. }
            | ClientMessage::JoinWithReceipt { .. }
            | ClientMessage::Review { .. } => refuse(
                ErrorCode::AlreadyJoined,
                "this connection is reviewing an export; open another to join a game",
            ),
            ClientMessage::Command { .. }
            | ClientMessage::GetExport { .. }
            | ClientMessage::Preview { .. } => refuse(
                ErrorCode::ReadOnly,
                "an export under review can only be read",
            ),
            ClientMessage::Los { from, to } => {
                let game = Game::replay(self.events.iter())
                    .expect("a verified log starts with GameCreated");
                protocol::wire::los_answer(&game, *from, *to)
            }
            ClientMessage::Ping { .. }
            | ClientMessage::CreateGame { .. }
            | ClientMessage::Notify { .. }
            | ClientMessage::ImportSave { .. } => return None,
        })
    }

    /// Entries `from..`, at most a log page of them (and of those, as many as fit a page's
    /// bytes: `frames::within_page`).
    fn page(&self, from: u64) -> impl Iterator<Item = (u64, &Event)> {
        let start = (from.max(1) - 1).min(self.version()) as usize;
        let end = (start + LOG_PAGE_EVENTS_MAX as usize).min(self.events.len());
        (start as u64 + 1..).zip(&self.events[start..end])
    }

    /// The whole game after event `version` (kept within 1 and the last).
    fn state_at(&self, version: u64) -> ServerMessage {
        let version = version.clamp(1, self.version()) as usize;
        let events = self.events[..version].iter();
        let mut state = Game::replay(events).expect("a verified log starts with GameCreated");
        // A position as a message carries it: the clocks are not part of its encoding, so its
        // hash leaves them out too, and the reader can check it against the position.
        state.timing = None;
        ServerMessage::State {
            version: state.version,
            state_hash: state.state_hash(),
            // An export's stream is the whole log: its heads are the envelopes' hashes.
            head: StreamHash(self.heads[version - 1].0),
            state: Box::new(Position::from(state)),
            owner: None,
            clocks: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::envelope;
    use protocol::event::GameCreated;
    use protocol::ReadScenario;
    use protocol::Scenario;

    /// Issue 36: the signature is checked before the file is read any further. A file signed
    /// by another key is refused for its signature even when its events are damaged too (had
    /// it been replayed first, the damage would be what was named); with this server's key,
    /// the same damage is found by the verifier.
    #[test]
    fn the_signature_is_checked_before_anything_is_replayed() {
        let scenario =
            Scenario::from_toml(include_str!("../../../scenarios/b9-41-wall-advantage.toml"))
                .unwrap();
        let (record, _) = envelope::seal(
            1,
            envelope::GENESIS,
            [4; 16],
            None,
            1,
            &Event::GameCreated(GameCreated { scenario }),
        );
        let key = [7; 16];
        let ours = crate::signing::key::fresh();
        let damaged = |signer: &protocol::record::signed::ServerSigningKey| {
            let text =
                crate::store::backup::export_text(&key, &[(1, record.clone())], signer).unwrap();
            let at = text.find("\n0").unwrap() + 10;
            let flipped = if &text[at..at + 1] == "0" { "1" } else { "0" };
            let mut text = text;
            text.replace_range(at..at + 1, flipped);
            text
        };
        let other = crate::signing::key::fresh();
        let theirs = Review::open(
            &damaged(&other),
            &ServerKey::of(&ours),
            None,
            &Checks::default(),
        )
        .err()
        .expect("refused");
        assert!(theirs.to_string().contains("signature"), "{theirs}");
        let mine = Review::open(
            &damaged(&ours),
            &ServerKey::of(&ours),
            None,
            &Checks::default(),
        )
        .err()
        .expect("refused");
        assert!(!mine.to_string().contains("signature"), "{mine}");
    }
}

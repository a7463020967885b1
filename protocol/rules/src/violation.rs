//! Refusals. A refused command changes nothing; the refusal names the rule and says why in
//! plain words, so the player can fix the command and a reviewer can check the ruling.
//!
//! Checks run in a fixed precedence, cheapest and most general first, so that when several
//! things are wrong the answer is always the same one:
//!
//! 1. `GameOver` — nothing is accepted after the last turn.
//! 2. `WrongSide` — the step awaits the other side.
//! 3. `WrongPhase` — the command has no place in this phase/step.
//! 4. `UnknownUnit` / `NotYourUnit` — the unit doesn't exist, or belongs to the opponent.
//! 5. `UnitState` — broken, pinned, already moved, eliminated …
//! 6. `Terrain` / `Geometry` — where it wants to go can't be entered that way.
//! 7. `NotEnoughMf` — the move is legal but unaffordable.
//! 8. `NotModelled` — legal in ASL, but the engine does not rule on it; refused rather than guessed.
//!
//! Answers to adjudications and undo (`record::dispute`) check game over, side and moment the
//! same way, then `UnknownEvent` (no such event, or one the player may not see) before
//! `NotUndoable` (events that may not be taken back, and why).

use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ViolationKind {
    GameOver,
    WrongSide,
    WrongPhase,
    UnknownUnit,
    NotYourUnit,
    UnitState,
    Geometry,
    Terrain,
    NotEnoughMf,
    NotModelled,
    /// A roll was needed and the dice source had none (offline: add a `dice` line).
    NoDice,
    /// The command names an event the game has not logged, or one the player may not see.
    UnknownEvent,
    /// The events asked to be taken back may not be: a die was rolled, hidden information
    /// was revealed, the side to act changed, or they are not all the asker's own.
    NotUndoable,
}

#[derive(Clone, Debug, Serialize, Deserialize, thiserror::Error)]
pub struct RuleViolation {
    /// The rule that forbids the command, as printed (`B9.322`, `A4.2`).
    pub rule: String,
    pub kind: ViolationKind,
    /// Why, in plain words, with the figures ("needs 3 MF, 2 left"). For a refusal built from
    /// [`Piece`]s, their rendering in the log's own names and numbers; a server sends each
    /// viewer its own rendering instead ([`RuleViolation::render`]).
    pub detail: String,
    /// The detail as typed pieces, when it names units or events: what lets each viewer be
    /// told it in its own names and numbers, rather than prose rewritten after the fact. Never
    /// on the wire: a viewer receives only the `detail` rendered for it.
    #[serde(skip)]
    pub pieces: Vec<Piece>,
}

/// Two refusals are the same when they say the same: rule, kind and words. The pieces are how
/// the words were made, and never travel; a refusal read off the wire has none.
impl PartialEq for RuleViolation {
    fn eq(&self, other: &RuleViolation) -> bool {
        self.rule == other.rule && self.kind == other.kind && self.detail == other.detail
    }
}

impl Eq for RuleViolation {}

/// A piece of a refusal's detail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    Text(String),
    /// A unit, by its id: a viewer reads the name it knows the unit by.
    Unit(String),
    /// An event, by its place in the whole log: a viewer reads its own stream's number for
    /// that very event, and no number at all for one it was not shown.
    Event(u64),
    /// A word of the reader's own — the unit id its command gave — given back as it is,
    /// never renamed: a refusal of an id that names a unit the reader may not know reads
    /// exactly as one of an id that names none.
    Given(String),
}

/// The refusal of a unit id that names no unit the issuer may know of: the same words whether
/// the id names none or a unit hidden from it (A12.3), built from typed pieces so no later
/// rewriting of prose can tell the two apart.
pub(crate) fn no_such_unit(id: &str, rest: &str) -> RuleViolation {
    RuleViolation::with(
        "A1",
        ViolationKind::UnknownUnit,
        vec![
            text("there is no unit "),
            Piece::Given(id.to_string()),
            text(rest.to_string()),
        ],
    )
}

/// Text, for [`RuleViolation::with`].
pub fn text(text: impl Into<String>) -> Piece {
    Piece::Text(text.into())
}

impl Piece {
    /// A unit, for [`RuleViolation::with`]: each reader reads the name it knows it by.
    pub fn unit(id: &str) -> Piece {
        Piece::Unit(id.to_string())
    }

    /// Units as a list, `` `a`, `b` ``: each a [`Piece::Unit`], separated by text.
    pub fn units<I>(ids: I) -> Vec<Piece>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        let mut out = Vec::new();
        for (i, id) in ids.into_iter().enumerate() {
            if i > 0 {
                out.push(text(", "));
            }
            out.push(Piece::unit(id.as_ref()));
        }
        out
    }
}

/// What a refusal's words are made of: text, a [`Piece`], or pieces already made (a list of
/// [`Piece::units`]). [`pieces!`] joins them.
pub trait Words {
    fn push_to(self, out: &mut Vec<Piece>);
}

impl Words for &str {
    fn push_to(self, out: &mut Vec<Piece>) {
        out.push(text(self));
    }
}

impl Words for String {
    fn push_to(self, out: &mut Vec<Piece>) {
        out.push(text(self));
    }
}

impl Words for Piece {
    fn push_to(self, out: &mut Vec<Piece>) {
        out.push(self);
    }
}

impl Words for Vec<Piece> {
    fn push_to(self, out: &mut Vec<Piece>) {
        out.extend(self);
    }
}

/// The pieces of a refusal's words, in order: `pieces![Piece::unit(id), " is pinned in ", hex.to_string()]`.
macro_rules! pieces {
    ($($words:expr),* $(,)?) => {{
        #[allow(unused_mut)]
        let mut out: Vec<$crate::violation::Piece> = Vec::new();
        $($crate::violation::Words::push_to($words, &mut out);)*
        out
    }};
}
pub(crate) use pieces;

/// Pieces rendered in the log's own names (`` `id` ``) and numbers (`#N`): a refusal's
/// `detail`, or text kept in the log itself (an event's reason), which is for the log's reader.
pub(crate) fn log_text(pieces: &[Piece]) -> String {
    render(pieces, |id| Some(id.to_string()), Some)
}

/// Words as pieces: what a module's `refuse` takes, so plain text and typed pieces go the same way.
pub fn words(words: impl Words) -> Vec<Piece> {
    let mut out = Vec::new();
    words.push_to(&mut out);
    out
}

impl RuleViolation {
    pub fn new(rule: &str, kind: ViolationKind, detail: impl Into<String>) -> RuleViolation {
        RuleViolation {
            rule: rule.to_string(),
            kind,
            detail: detail.into(),
            pieces: vec![],
        }
    }

    /// A refusal whose detail names units or events as typed [`Piece`]s; its `detail` is their
    /// rendering in the log's names (`` `id` ``) and numbers (`#N`).
    pub fn with(rule: &str, kind: ViolationKind, pieces: impl Words) -> RuleViolation {
        let mut violation = RuleViolation::new(rule, kind, "");
        violation.pieces = words(pieces);
        violation.detail = log_text(&violation.pieces);
        violation
    }

    /// The detail as one reader may be told it: `unit` gives the name it knows a unit by
    /// (`None`: it may not know the unit), `event` its own number for an event of the log
    /// (`None`: it was not shown that event). What it may not know is left unnamed.
    pub fn render(
        &self,
        unit: impl Fn(&str) -> Option<String>,
        event: impl Fn(u64) -> Option<u64>,
    ) -> String {
        render(&self.pieces, unit, event)
    }
}

/// Pieces as one reader is told them: see [`RuleViolation::render`].
fn render(
    pieces: &[Piece],
    unit: impl Fn(&str) -> Option<String>,
    event: impl Fn(u64) -> Option<u64>,
) -> String {
    let mut out = String::new();
    for piece in pieces {
        match piece {
            Piece::Text(text) => out.push_str(text),
            Piece::Unit(id) => match unit(id) {
                Some(name) => {
                    out.push('`');
                    out.push_str(&name);
                    out.push('`');
                }
                None => out.push_str("a unit"),
            },
            Piece::Given(word) => {
                out.push('`');
                // As the side wrote it, whatever `command_in_ids` marked on it.
                out.push_str(game::view::given_word(word));
                out.push('`');
            }
            Piece::Event(at) => match event(*at) {
                Some(n) => {
                    out.push('#');
                    out.push_str(&n.to_string());
                }
                None => out.push_str("an event"),
            },
        }
    }
    out
}

impl fmt::Display for RuleViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.rule, self.detail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_render_in_the_log_s_names_or_each_reader_s_own() {
        let v = RuleViolation::with(
            "A1",
            ViolationKind::NotUndoable,
            vec![Piece::Event(6), text(" moved "), Piece::Unit("r3".into())],
        );
        assert_eq!(v.detail, "#6 moved `r3`");
        assert_eq!(
            v.render(|_| Some("?1".into()), |at| Some(at - 2)),
            "#4 moved `?1`"
        );
        assert_eq!(v.render(|_| None, |_| None), "an event moved a unit");
        // The pieces never go on the wire.
        let json = serde_json::to_string(&v).unwrap();
        assert_eq!(
            json,
            r##"{"rule":"A1","kind":"not_undoable","detail":"#6 moved `r3`"}"##
        );
    }
}

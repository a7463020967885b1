//! The `asl` command as a library: a websocket [`Connection`] to a game server, a [`Follower`]
//! that keeps a local copy of the game in step with the server's stream, and one module per
//! subcommand under [`commands`].
//!
//! The binary only parses flags and calls in here, so the end-to-end tests drive exactly what a
//! player runs. Every subcommand writes its report to the `out` it is given and returns a
//! [`Status`] or a [`Failure`]; the binary turns those into the process exit code.

pub mod commands;
pub mod connection;
pub mod dice;
pub mod follower;
pub mod receipts;
mod record;
mod report;
pub mod saved;

pub use connection::{Connection, ConnectionError, Joined, LogPage, NewGame, Reply, Snapshot};
pub use follower::{Advance, FollowError, Follower};

use std::fmt;
use std::path::Path;

/// The server `--server` points at when neither the flag nor `ASL_SERVER` says otherwise: the
/// address `asl-server` listens on by default.
pub const DEFAULT_SERVER: &str = "ws://127.0.0.1:7878";

/// How a subcommand that ran to the end came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Success,
    /// A script line's `=>` expectation did not hold.
    ExpectationsFailed,
    /// The server refused a command that the script did not expect to be refused.
    Refused,
    /// `asl verify` found the log invalid (the report names the first bad event).
    Invalid,
    /// `asl games`: a game's server could not be reached or did not answer (its line says
    /// why); the others were listed.
    Unanswered,
}

impl Status {
    pub fn exit_code(self) -> u8 {
        match self {
            Status::Success => 0,
            Status::ExpectationsFailed | Status::Refused | Status::Invalid => 1,
            Status::Unanswered => 3,
        }
    }
}

/// Why a subcommand stopped early. The message is a plain sentence for stderr.
#[derive(Debug, PartialEq, Eq)]
pub enum Failure {
    /// Something the user gave us is wrong: a file, a script line, a token for the wrong side.
    Input(String),
    /// The server could not be reached, refused the request, or said something this client
    /// cannot follow.
    Server(String),
    /// The report could not be written (stdout closed under us).
    Output(std::io::ErrorKind),
}

impl Failure {
    /// 2 for bad input, 3 for everything outside the user's files: scripts that test for exit
    /// codes can tell "fix your script" from "try again later".
    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::Input(_) => 2,
            Failure::Server(_) | Failure::Output(_) => 3,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Input(m) | Failure::Server(m) => f.write_str(m),
            Failure::Output(kind) => write!(f, "could not write the report: {kind}"),
        }
    }
}

impl std::error::Error for Failure {}

impl From<ConnectionError> for Failure {
    fn from(e: ConnectionError) -> Failure {
        Failure::Server(e.to_string())
    }
}

impl From<FollowError> for Failure {
    fn from(e: FollowError) -> Failure {
        Failure::Server(e.to_string())
    }
}

/// Only writing the report produces `io::Error`s that reach `?`: files are read through
/// `read_input`, which reports them as bad input instead.
impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Failure {
        Failure::Output(e.kind())
    }
}

/// `text` from someone else (an opponent's note or reason, a scenario's names, a server's
/// message) made safe for a terminal: control characters (ESC, CR, newline, DEL, the C1 set)
/// and the bidirectional overrides are written as `\u{..}` escapes, so no text the client
/// prints can clear the screen, set the window title, overwrite a line or start a fake one.
pub fn printable(text: &str) -> String {
    if plain(text) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if escaped(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// JSON the client prints (`--json`), made safe for a terminal as [`printable`] makes text:
/// each character it would escape, inside a string (the only place JSON holds one), is
/// written as a JSON `\uXXXX` escape, so the value reads back the same. serde escapes the C0
/// controls only; a note's bidi override or C1 control went to the terminal raw. The line
/// breaks of pretty-printed JSON stay.
pub fn printable_json(json: &str) -> String {
    if json.chars().all(|c| c == '\n' || !escaped(c)) {
        return json.to_string();
    }
    let mut out = String::with_capacity(json.len() + 12);
    for c in json.chars() {
        if c != '\n' && escaped(c) {
            // Every control and bidi character is in the Basic Multilingual Plane: one escape.
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// [`printable`] line by line, keeping the line breaks: for the client's own messages, some
/// of several lines, that may quote others' words (a failure quoting a scenario file from
/// others). Text already made printable stays as it is.
pub fn printable_lines(text: &str) -> String {
    text.split('\n')
        .map(printable)
        .collect::<Vec<_>>()
        .join("\n")
}

/// What [`printable`] escapes: control characters and the bidirectional controls.
fn escaped(c: char) -> bool {
    c.is_control() || protocol::board::scenario::is_bidi(c)
}

/// Whether `text` prints as it is: no character [`printable`] would escape.
pub fn plain(text: &str) -> bool {
    !text.chars().any(escaped)
}

/// The first string (or object key) of `value` holding a control or bidi character.
pub(crate) fn unprintable_word(value: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    match value {
        Value::String(text) => (!crate::plain(text)).then(|| text.clone()),
        Value::Array(items) => items.iter().find_map(unprintable_word),
        Value::Object(fields) => fields.iter().find_map(|(key, value)| {
            if crate::plain(key) {
                unprintable_word(value)
            } else {
                Some(key.clone())
            }
        }),
        Value::Null | Value::Bool(_) | Value::Number(_) => None,
    }
}

/// Says `text` on stderr as a warning (`asl: warning: …`), escaped as [`printable_lines`]
/// escapes it: a warning may quote a server's words (a refusal's message), and a server is
/// hostile. Every warning the client gives while it goes on goes through here.
pub(crate) fn warn(text: &str) {
    eprintln!("asl: warning: {}", printable_lines(text));
}

/// Reads a file the user named, failing as bad input with the path in the message.
pub(crate) fn read_input(path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path)
        .map_err(|e| Failure::Input(format!("cannot read {}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The client's own line breaks stay; every other control character is escaped, and
    /// text escaped once is not escaped again.
    #[test]
    fn printable_lines_keeps_line_breaks_only() {
        let text = "refused:\n  `\u{1b}[2J\r\u{202e}` is not a side";
        let shown = printable_lines(text);
        assert_eq!(
            shown,
            "refused:\n  `\\u{1b}[2J\\u{d}\\u{202e}` is not a side"
        );
        assert_eq!(printable_lines(&shown), shown);
    }

    #[test]
    fn exit_codes_tell_input_from_server_trouble() {
        assert_eq!(Status::Success.exit_code(), 0);
        assert_eq!(Status::ExpectationsFailed.exit_code(), 1);
        assert_eq!(Failure::Input("x".into()).exit_code(), 2);
        assert_eq!(Failure::Server("x".into()).exit_code(), 3);
        assert_eq!(
            Failure::from(ConnectionError::Closed).exit_code(),
            3,
            "a dropped connection is not the user's fault"
        );
    }

    /// Issue 36: what an opponent writes cannot drive the terminal.
    #[test]
    fn others_text_is_printed_with_control_characters_escaped() {
        assert_eq!(printable("Rallied; 55H6 (A10.6)"), "Rallied; 55H6 (A10.6)");
        let hostile = "\u{1b}[2J\u{1b}]0;title\u{7}\rGerman conceded\nx\u{9b}\u{202e}y";
        let shown = printable(hostile);
        assert!(!shown.chars().any(|c| c.is_control()), "{shown:?}");
        assert!(!shown.contains('\u{202e}'), "{shown:?}");
        assert_eq!(
            shown,
            "\\u{1b}[2J\\u{1b}]0;title\\u{7}\\u{d}German conceded\\u{a}x\\u{9b}\\u{202e}y"
        );
    }

    #[test]
    fn unreadable_files_are_bad_input_naming_the_path() {
        let f = read_input(Path::new("/no/such/scenario.toml")).unwrap_err();
        assert_eq!(f.exit_code(), 2);
        assert!(f.to_string().contains("/no/such/scenario.toml"), "{f}");
    }
}

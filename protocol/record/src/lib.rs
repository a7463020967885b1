//! The game record: what makes a log of events something two players and a reviewer can
//! trust. The hash-chained envelope every event is stored in ([`chain`]), the dice scheme both
//! sides can verify ([`fair_dice`]), the referee that decides and logs ([`referee`]), the
//! answers that need the log rather than the position — adjudication review and undo
//! ([`dispute`]), the export file and its verification ([`export`]), every event in words
//! ([`words`]), each viewer's own stream of a game ([`stream`]), the server's signature on
//! heads ([`signed`]) and the receipts players keep of their own streams ([`receipt`]).
//!
//! Imports from the rules, the game and the board; never from the edges.

pub mod chain;
pub mod dispute;
pub mod export;
pub mod fair_dice;
pub mod preview;
pub mod receipt;
pub mod recheck;
pub mod referee;
pub mod signed;
pub mod stream;
#[cfg(test)]
mod timing_tests;
pub mod words;

//! The word rules of what players are shown from a file they did not write: no control
//! character (an escape sequence, a carriage return) and no bidi control (which reorders what
//! is printed around it). The scenario holds its names to them (`scenario`), and a board
//! archive or terrain codes file (`vasl`) its words, before any reaches a player. Imports
//! nothing of the crate: the lowest of its modules.

/// Longest word a board archive or a terrain codes file may give that players are shown (a
/// board's version, an unmodelled terrain's name): VASL's longest are under 40 bytes.
pub const BOARD_WORD_BYTES_MAX: usize = 64;

/// What is wrong with `text`, a word from a board archive or a terrain codes file (hostile
/// files like a scenario's) that reaches a player's terminal or page, held to the scenario's
/// word rules (`scenario::check_shown_words`): `None` when it may be shown. Never repeats the text.
pub fn board_word_fault(text: &str) -> Option<String> {
    if text.len() > BOARD_WORD_BYTES_MAX {
        return Some(format!(
            "is {} bytes, over the {BOARD_WORD_BYTES_MAX} bytes a board's word may have",
            text.len()
        ));
    }
    text.chars()
        .any(|c| c.is_control() || is_bidi(c))
        .then(|| "holds a control or bidi character, and players are shown it".to_string())
}

/// Unicode's bidirectional controls: they reorder the text around them on a screen.
pub fn is_bidi(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

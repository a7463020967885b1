//! What reading a hostile save costs in memory, measured by the allocator itself (issue 50):
//! VASSAL nests commands in commands, each level's ESCs escaped once more, and each level is
//! unescaped into a copy of its text. A small zip of a deeply nested, highly compressible
//! `savedGame` once drove `asl import` past a gigabyte. Reading it now holds at most the
//! file, its `savedGame` as read and as decoded (the same text twice, for a plain one) and
//! `UNESCAPED_BYTES_MAX`.
//!
//! One test in this binary: the allocator counts every thread's allocations.

#[path = "../../tests/support/counting.rs"]
mod counting;

use counting::{Counting, HELD, PEAK};
use std::sync::atomic::Ordering;

use vasl_save::save::{read, writer, Encoding, SaveError, UNESCAPED_BYTES_MAX};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// `savedGame`'s text: one command holding `payload` bytes, nested `depth` levels deep as
/// VASSAL nests compound commands (each level a short command, then the rest escaped once
/// more), inside the save's own `begin_save`/`end_save`.
fn deeply_nested(payload: usize, depth: usize) -> String {
    let mut command = format!("x{}", "a".repeat(payload));
    for _ in 0..depth {
        command = writer::join_escaped(&["y", &command], '\u{1b}');
    }
    writer::saved_game_text(&[command])
}

#[test]
fn a_deeply_nested_save_is_refused_within_the_unescaping_budget() {
    let text = deeply_nested(16 << 20, 28);
    let file = writer::vsav(&writer::encode(&text, Encoding::Plain), Some("VASL"));
    let bound = file.len() + 2 * text.len() + UNESCAPED_BYTES_MAX + (1 << 20);

    let before = HELD.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let result = read(&file);
    let peak = PEAK.load(Ordering::Relaxed) - before;

    assert!(
        matches!(result, Err(SaveError::UnescapedTooLarge { .. })),
        "{:?}",
        result.map(|g| g.pieces.len())
    );
    assert!(
        peak <= bound,
        "reading the save held {peak} bytes at once, over {bound}"
    );
}

//! What reading a hostile save costs in memory, measured by the allocator itself (issue 50):
//! VASSAL nests commands in commands, each level's ESCs escaped once more, and each level is
//! unescaped into a copy of its text. A small zip of a deeply nested, highly compressible
//! `savedGame` once drove `asl import` past a gigabyte. Reading it now holds at most the
//! file, its `savedGame` as read and as decoded (the same text twice, for a plain one) and
//! `UNESCAPED_BYTES_MAX`.
//!
//! One test in this binary: the allocator counts every thread's allocations.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use protocol::board::vasl::save::{read, writer, Encoding, SaveError, UNESCAPED_BYTES_MAX};

/// The system allocator, counting the bytes held now and the most held since the last reset.
struct Counting;

static HELD: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = HELD.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) };
        HELD.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, layout, new_size) };
        if !q.is_null() {
            if new_size > layout.size() {
                let grown = new_size - layout.size();
                let now = HELD.fetch_add(grown, Ordering::Relaxed) + grown;
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                HELD.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        q
    }
}

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

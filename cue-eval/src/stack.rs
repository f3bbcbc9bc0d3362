//! Stack guarding for the recursive walks over syntax trees and values.
//!
//! The lexer bounds nesting (see [`crate::lexer::MAX_DEPTH`]), but a bounded depth can still be
//! deeper than a small thread stack allows, notably in debug builds and on the 2 MiB threads of
//! the test harness. Recursive functions call [`guard`] at each level: when less than
//! [`RED_ZONE`] bytes of stack are left, the closure runs on a fresh heap-allocated segment.

/// Remaining stack below which a new segment is allocated.
pub const RED_ZONE: usize = 128 * 1024;
/// Size of each new segment.
pub const SEGMENT: usize = 4 * 1024 * 1024;

/// Runs `f`, on a new stack segment if the current one is nearly exhausted.
#[inline]
pub fn guard<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}

//! Which request thread ("lane", see `engine::lanes`) this is. Connection pools keep one idle
//! list per lane, so a request and its connection's I/O run on the same thread instead of
//! crossing to the runtime that opened the connection.

use std::cell::Cell;

/// Idle lists a pool keeps; lanes beyond this share lists (still correct, only slower).
pub(crate) const SLOTS: usize = 16;

thread_local! {
    static LANE: Cell<usize> = const { Cell::new(0) };
}

/// Marks the calling thread as lane `i` (threads that never call this are lane 0).
pub fn set(i: usize) {
    LANE.with(|l| l.set(i));
}

pub fn get() -> usize {
    LANE.with(|l| l.get())
}

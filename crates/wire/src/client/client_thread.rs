//! Which client thread (see `engine::client_threads`) this is. Connection pools keep one idle
//! list per client thread, so a request and its connection's I/O run on the same thread
//! instead of crossing to the runtime that opened the connection.

use std::cell::Cell;

/// Idle lists a pool keeps; client threads beyond this share lists (still correct, only
/// slower).
pub(crate) const SLOTS: usize = 16;

thread_local! {
    static INDEX: Cell<usize> = const { Cell::new(0) };
}

/// Marks the calling thread as client thread `i` (threads that never call this are 0).
pub fn set(i: usize) {
    INDEX.with(|l| l.set(i));
}

pub fn current() -> usize {
    INDEX.with(Cell::get)
}

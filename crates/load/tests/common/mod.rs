//! Turns on the machine for the tests of one binary: a timed test holds it alone. The
//! root's integration tests take their turns by this same code (tests/it/common/mod.rs).
#![allow(dead_code)]

use std::cell::Cell;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Timed known-answer tests run alone: two cores shared with other tests' load would
/// measure that load. Every run and every reference endpoint holds a shared turn
/// (`Load`); a timed test holds the whole machine (`timed`).
static MACHINE: RwLock<()> = RwLock::new(());

thread_local! {
    /// Whether this test thread holds the machine: its own runs take no shared turn.
    static ALONE: Cell<bool> = const { Cell::new(false) };
    /// Shared turns this test thread holds: only the first locks (a second read lock could
    /// wait behind a timed test that waits for the first).
    static TURNS: Cell<u32> = const { Cell::new(0) };
}

/// The machine to this test alone, until the guard is dropped.
pub struct Timed(#[allow(dead_code)] RwLockWriteGuard<'static, ()>);

impl Drop for Timed {
    fn drop(&mut self) {
        ALONE.with(|a| a.set(false));
    }
}

pub fn timed() -> Timed {
    let guard = MACHINE
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    ALONE.with(|a| a.set(true));
    Timed(guard)
}

/// A shared turn on the machine: none while a timed test runs (unless this is it).
pub struct Load(#[allow(dead_code)] Option<RwLockReadGuard<'static, ()>>);

impl Drop for Load {
    fn drop(&mut self) {
        TURNS.with(|t| t.set(t.get() - 1));
    }
}

pub fn load() -> Load {
    let first = TURNS.with(|t| {
        t.set(t.get() + 1);
        t.get() == 1
    });
    if !first || ALONE.with(Cell::get) {
        return Load(None);
    }
    Load(Some(
        MACHINE
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    ))
}

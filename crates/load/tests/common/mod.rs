//! Turns on the machine for the tests of every binary: a timed test holds it alone. The
//! root's integration tests take their turns by this same code (tests/it/common/mod.rs).
#![allow(dead_code)]

use std::cell::Cell;
use std::path::PathBuf;

/// Tests whose effect is smaller than what a loaded machine would add (known answers, rates
/// against a server's capacity, a 15 % difference) run alone: they hold the whole machine
/// (`timed`); every other run and every reference endpoint holds a shared turn (`Load`).
/// The turns are file locks, not a lock in memory, so they hold across the processes of a
/// test runner that starts one per test (nextest) as well as across `cargo test`'s threads.
/// A timed test first takes the gate alone, so that shared turns asked after it wait behind
/// it instead of keeping the machine busy forever.
pub fn lock_file(name: &str) -> std::fs::File {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("open the test lock {}: {e}", path.display()))
}

thread_local! {
    /// Whether this test thread holds the machine: its own runs take no shared turn.
    static ALONE: Cell<bool> = const { Cell::new(false) };
    /// Shared turns this test thread holds: only the first locks (a second could wait
    /// behind a timed test that waits for the first).
    static TURNS: Cell<u32> = const { Cell::new(0) };
}

/// The machine to this test alone, until the guard is dropped (the lock goes with the file).
pub struct Timed(#[allow(dead_code)] std::fs::File);

impl Drop for Timed {
    fn drop(&mut self) {
        ALONE.with(|a| a.set(false));
    }
}

pub fn timed() -> Timed {
    let gate = lock_file("gate.lock");
    gate.lock().expect("lock the gate");
    let machine = lock_file("machine.lock");
    machine.lock().expect("lock the machine");
    drop(gate);
    ALONE.with(|a| a.set(true));
    Timed(machine)
}

/// A shared turn on the machine: none while a timed test runs (unless this is it).
pub struct Load(#[allow(dead_code)] Option<std::fs::File>);

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
    let gate = lock_file("gate.lock");
    gate.lock_shared().expect("pass the gate");
    let machine = lock_file("machine.lock");
    machine.lock_shared().expect("share the machine");
    drop(gate);
    Load(Some(machine))
}

//! Turns on the machine for the tests of every binary: a timed test holds it alone. The
//! root's integration tests take their turns by this same code (tests/it/common/mod.rs).
#![allow(dead_code)]

use std::cell::Cell;
use std::path::PathBuf;

/// Tests whose effect is smaller than what a loaded machine would add (known answers, rates
/// against a server's capacity, a 15 % difference) hold the machine: alone (`timed`), or
/// beside one other such test at most (`paired`: those that use little CPU, whose margins
/// hold with a neighbour that uses as little); every other run and every reference endpoint
/// holds a shared turn (`Load`). The turns are file locks, not a lock in memory, so they
/// hold across the processes of a test runner that starts one per test (nextest) as well as
/// across `cargo test`'s threads. Entering is done under the gate: shared turns pass it
/// together, a timed or paired test takes it alone, so that turns asked after it wait behind
/// it instead of keeping the machine busy forever, and no two entries cross.
///
/// The locks: `machine.lock`, held shared by each `Load` and exclusively by a `timed` test;
/// `paired.lock`, held shared by each `paired` test and exclusively by a `timed` one; and
/// two slots, one per `paired` test. A `Load` waits out the paired tests by taking
/// `paired.lock` alone for a moment on entry, a paired test waits out the loads by taking
/// `machine.lock` alone for a moment.
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

impl Drop for Timed {
    fn drop(&mut self) {
        ALONE.with(|a| a.set(false));
    }
}

/// The machine to this test alone, until the guard is dropped (the locks go with the files).
pub struct Timed(#[allow(dead_code)] Vec<std::fs::File>);

pub fn timed() -> Timed {
    let gate = lock_file("gate.lock");
    gate.lock().expect("lock the gate");
    let machine = lock_file("machine.lock");
    machine.lock().expect("lock the machine");
    let paired = lock_file("paired.lock");
    paired.lock().expect("wait out the paired tests");
    drop(gate);
    ALONE.with(|a| a.set(true));
    Timed(vec![machine, paired])
}

/// The machine to this test and at most one other paired test, until the guard is dropped.
pub fn paired() -> Timed {
    let gate = lock_file("gate.lock");
    gate.lock().expect("lock the gate");
    // Wait out every shared turn (and a timed test), then let them be.
    let machine = lock_file("machine.lock");
    machine.lock().expect("wait out the shared turns");
    drop(machine);
    let mut slots = vec![lock_file("pair-0.lock"), lock_file("pair-1.lock")];
    let slot = match slots.iter().position(|f| f.try_lock().is_ok()) {
        Some(free) => slots.swap_remove(free),
        None => {
            slots[0].lock().expect("wait for a paired slot");
            slots.swap_remove(0)
        }
    };
    let paired = lock_file("paired.lock");
    paired
        .lock_shared()
        .expect("share the machine with one other");
    drop(gate);
    ALONE.with(|a| a.set(true));
    Timed(vec![slot, paired])
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
    // Wait out the paired tests (and a timed one), then let them be.
    let paired = lock_file("paired.lock");
    paired.lock().expect("wait out the paired tests");
    drop(paired);
    let machine = lock_file("machine.lock");
    machine.lock_shared().expect("share the machine");
    drop(gate);
    Load(Some(machine))
}

//! What the dispatch loop waits on, and what wakes it first: a command, the phase's end, or
//! the thing it waited for.

use super::command::Command;
use std::future::Future;
use std::pin::Pin;
use std::time::Instant;
use tokio::sync::mpsc::UnboundedReceiver;

pub(super) enum Woke<T> {
    Ready(T),
    Command(Option<Command>),
    Deadline,
}

/// The phase's end (or a stop's grace) as one timer, moved only when the end moves. A fresh
/// timer at every dispatch cost a timer-wheel insert and removal per request, about 3 % of a
/// closed loop's throughput.
pub(super) struct Deadline {
    pub(super) at: Option<Instant>,
    timer: Pin<Box<tokio::time::Sleep>>,
}

impl Deadline {
    pub(super) fn new() -> Deadline {
        Deadline {
            at: None,
            timer: Box::pin(tokio::time::sleep_until(tokio::time::Instant::now())),
        }
    }

    pub(super) fn set(&mut self, at: Option<Instant>) {
        if at != self.at {
            self.at = at;
            if let Some(t) = at {
                self.timer.as_mut().reset(t.into());
            }
        }
    }
}

/// Waits for `fut` while staying responsive to commands and to the phase's end.
pub(super) async fn wait<F: Future>(
    fut: F,
    cmds: &mut UnboundedReceiver<Command>,
    deadline: &mut Deadline,
) -> Woke<F::Output> {
    let armed = deadline.at.is_some();
    tokio::select! {
        biased;
        c = cmds.recv() => Woke::Command(c),
        () = deadline.timer.as_mut(), if armed => Woke::Deadline,
        v = fut => Woke::Ready(v),
    }
}

//! The concurrency cap, resizable while the run goes on.
//!
//! tokio's Semaphore cannot shrink without waiting for permits to come back; here the cap is
//! just a number compared with the in-flight count, so lowering it takes effect at the next
//! request. Closed-loop slots on several threads acquire at once, so taking a slot is one
//! compare-and-swap; the common case (a slot free) touches no lock.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::Notify;

#[derive(Debug)]
pub struct Limiter {
    in_flight: AtomicUsize,
    cap: AtomicUsize,
    freed: Notify,
}

pub struct Permit(Arc<Limiter>);

impl Drop for Permit {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
        self.0.freed.notify_one();
    }
}

impl Limiter {
    pub fn new(cap: usize) -> Arc<Limiter> {
        Arc::new(Limiter {
            in_flight: AtomicUsize::new(0),
            cap: AtomicUsize::new(cap.max(1)),
            freed: Notify::new(),
        })
    }

    pub fn set_cap(&self, cap: usize) {
        self.cap.store(cap.max(1), Ordering::Release);
        self.wake_all();
    }

    /// Wakes every waiter to look again (the cap changed, or slots were told to stop).
    pub fn wake_all(&self) {
        self.freed.notify_waiters();
    }

    pub fn cap(&self) -> usize {
        self.cap.load(Ordering::Acquire)
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }

    /// A free slot now, or `None` when the cap is reached.
    pub fn try_acquire(self: &Arc<Self>) -> Option<Permit> {
        let cap = self.cap();
        self.in_flight
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < cap).then_some(n + 1)
            })
            .ok()
            .map(|_| Permit(self.clone()))
    }

    /// Waits for a free slot. Cancel-safe: dropping the future takes nothing.
    pub async fn acquire(self: &Arc<Self>) -> Permit {
        self.acquire_unless(|| false).await.expect("never given up")
    }

    /// Waits for a free slot, giving up (`None`) once `give_up` says so; a waiter that gives
    /// up passes its wake-up on, so no freed slot goes unnoticed.
    pub async fn acquire_unless(self: &Arc<Self>, give_up: impl Fn() -> bool) -> Option<Permit> {
        loop {
            if give_up() {
                return None;
            }
            if let Some(p) = self.try_acquire() {
                return Some(p);
            }
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            if give_up() {
                self.freed.notify_one();
                return None;
            }
            if let Some(p) = self.try_acquire() {
                return Some(p);
            }
            freed.await;
        }
    }

    /// Waits until nothing is in flight.
    pub async fn idle(&self) {
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            if self.in_flight() == 0 {
                return;
            }
            freed.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn cap_holds_and_can_change_live() {
        let l = Limiter::new(2);
        let a = l.acquire().await;
        let _b = l.acquire().await;
        assert!(
            tokio::time::timeout(Duration::from_millis(20), l.acquire())
                .await
                .is_err()
        );
        drop(a);
        let _c = tokio::time::timeout(Duration::from_millis(20), l.acquire())
            .await
            .expect("slot freed");
        l.set_cap(3);
        let _d = tokio::time::timeout(Duration::from_millis(20), l.acquire())
            .await
            .expect("cap raised");
        l.set_cap(1);
        assert!(
            tokio::time::timeout(Duration::from_millis(20), l.acquire())
                .await
                .is_err()
        );
        assert_eq!(l.in_flight(), 3);
    }
}

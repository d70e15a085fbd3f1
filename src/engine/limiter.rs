//! The concurrency cap, resizable while the run goes on.
//!
//! tokio's Semaphore cannot shrink without waiting for permits to come back; here the cap is
//! just a number compared with the in-flight count, so lowering it takes effect at the next
//! dispatch. Only the dispatcher acquires, so a plain check-then-increment is race-free.

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
        self.freed.notify_one();
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }

    /// Waits for a free slot. Cancel-safe: dropping the future takes nothing.
    pub async fn acquire(self: &Arc<Self>) -> Permit {
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            if self.in_flight() < self.cap.load(Ordering::Acquire) {
                self.in_flight.fetch_add(1, Ordering::AcqRel);
                return Permit(self.clone());
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

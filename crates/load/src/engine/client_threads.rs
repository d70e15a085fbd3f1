//! Request execution spread over the client threads (`--client-threads`): one
//! single-threaded runtime per core by default.
//!
//! The dispatcher stays one task on the engine's thread, so the schedule, the concurrency
//! cap and the request count stay exact. Only the request itself (send, wait, read, record)
//! runs on a client thread. On one thread a fast endpoint found the client at a full core
//! while the second core sat partly idle: at concurrency 16 on loopback that made the client
//! slower than oha, which spreads over every core.
//!
//! Each client thread keeps its own connections (see `encbench_wire::client::client_thread`), so a
//! request and its connection's I/O run on the same thread; only the hand-off from the
//! dispatcher and the freed concurrency slot cross threads. At concurrency 1 every request
//! would cross twice for nothing, so a cap of 1 keeps everything on the engine's thread.
//!
//! The extra client threads live for the whole process: targets (and their connection
//! pools) outlive one engine in `compare`, and a connection whose runtime has gone fails its
//! next request.

use std::future::Future;
use std::sync::Mutex;
use tokio::runtime::Handle;

/// Client threads started so far (index i is thread i + 1; thread 0 is each engine's own).
static EXTRA: Mutex<Vec<Handle>> = Mutex::new(Vec::new());

/// The default number of client threads: one per core the process may use.
pub fn default_count() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

pub(crate) struct ClientThreads {
    /// Thread 0 first: the engine's own runtime.
    handles: Vec<Handle>,
}

impl ClientThreads {
    /// `count` client threads: the current runtime plus `count - 1` process-wide threads.
    pub fn start(count: usize) -> ClientThreads {
        let mut handles = vec![Handle::current()];
        handles.extend(extra(count.saturating_sub(1)));
        ClientThreads { handles }
    }

    /// Runs request number `idx` on a client thread: round robin over at most `concurrency`
    /// of them.
    pub fn spawn<F>(&self, idx: u64, concurrency: usize, fut: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let used = self.handles.len().min(concurrency.max(1));
        let thread = (idx % used as u64) as usize;
        // The JoinHandle is not needed: the request records its own result.
        drop(self.handles[thread].spawn(fut));
    }
}

fn extra(n: usize) -> Vec<Handle> {
    let mut extra = EXTRA
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    while extra.len() < n {
        let index = extra.len() + 1;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name(format!("encbench-client-{index}"))
            .spawn(move || {
                encbench_wire::timing::tighten_timer_slack();
                encbench_wire::client::client_thread::set(index);
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a current-thread runtime with static settings");
                let _ = tx.send(runtime.handle().clone());
                // Spawned tasks run while this waits forever.
                runtime.block_on(std::future::pending::<()>());
            })
            .expect("a client thread");
        extra.push(rx.recv().expect("a started client thread sends its handle"));
    }
    extra[..n].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test(flavor = "current_thread")]
    async fn requests_go_round_robin_over_at_most_concurrency_threads() {
        let threads = ClientThreads::start(3);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let done = Arc::new(AtomicUsize::new(0));
        let run = |idx: u64, concurrency: usize| {
            let (seen, done) = (seen.clone(), done.clone());
            threads.spawn(idx, concurrency, async move {
                let name = std::thread::current().name().map(str::to_string);
                seen.lock().unwrap().push((
                    idx,
                    concurrency,
                    name,
                    encbench_wire::client::client_thread::current(),
                ));
                done.fetch_add(1, Ordering::SeqCst);
            });
        };
        for idx in 0..6 {
            run(idx, 16);
        }
        for idx in 0..3 {
            run(idx, 1);
        }
        while done.load(Ordering::SeqCst) < 9 {
            tokio::task::yield_now().await;
        }
        let mut seen = seen.lock().unwrap().clone();
        seen.sort();
        for (idx, concurrency, name, thread) in seen {
            let want = if concurrency == 1 {
                0
            } else {
                (idx % 3) as usize
            };
            assert_eq!(thread, want, "request {idx} at concurrency {concurrency}");
            if want > 0 {
                assert_eq!(name.unwrap(), format!("encbench-client-{want}"));
            }
        }
    }
}

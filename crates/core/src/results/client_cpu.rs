//! What a phase cost the client: the process's CPU time (user and system) over the phase,
//! per request sent in it. The load generator is one process whose threads all serve the
//! phase (dispatch, client threads, tokenizer workers, the screen), so the process's time is
//! the honest figure; `compare` runs one target at a time, so a compared phase's CPU is its
//! target's alone.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Milliseconds of CPU per request, and the requests they were spread over (every request
/// sent in the phase, warmup included: its requests cost the client alike).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ClientCpu {
    pub user: f64,
    pub system: f64,
    pub requests: u64,
}

fn round4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

impl ClientCpu {
    /// `None` for a phase that sent nothing.
    pub fn of(user: Duration, system: Duration, requests: u64) -> Option<ClientCpu> {
        let per = |d: Duration| round4(d.as_secs_f64() * 1e3 / requests as f64);
        (requests > 0).then(|| ClientCpu {
            user: per(user),
            system: per(system),
            requests,
        })
    }

    /// User and system together.
    pub fn total(&self) -> f64 {
        round4(self.user + self.system)
    }

    /// Several phases' CPU as one (repetitions, or hosts of one run): weighted by requests,
    /// so the result is the CPU of all their requests over all of them.
    pub fn pooled<'a>(parts: impl IntoIterator<Item = &'a ClientCpu>) -> Option<ClientCpu> {
        let (mut user, mut system, mut requests) = (0.0, 0.0, 0u64);
        for c in parts {
            user += c.user * c.requests as f64;
            system += c.system * c.requests as f64;
            requests += c.requests;
        }
        (requests > 0).then(|| ClientCpu {
            user: round4(user / requests as f64),
            system: round4(system / requests as f64),
            requests,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_is_per_request_and_pools_by_requests() {
        let a = ClientCpu::of(Duration::from_millis(30), Duration::from_millis(10), 100).unwrap();
        assert_eq!((a.user, a.system, a.total()), (0.3, 0.1, 0.4));
        assert_eq!(
            ClientCpu::of(Duration::from_secs(1), Duration::ZERO, 0),
            None
        );
        let b = ClientCpu::of(Duration::from_millis(60), Duration::ZERO, 300).unwrap();
        let p = ClientCpu::pooled([&a, &b]).unwrap();
        // (30 + 60) ms of user time over 400 requests.
        assert_eq!((p.user, p.system, p.requests), (0.225, 0.025, 400));
        assert_eq!(ClientCpu::pooled([]), None);
    }
}

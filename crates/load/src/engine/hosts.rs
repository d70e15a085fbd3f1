//! How this host takes part in a run over several hosts (`--shard`, `--start-at`): its part
//! of each phase planned for all of them, and the pace it offers.

use encbench_core::arrival::Pace;
use encbench_core::plan::{PhaseSpec, StopAt};
use encbench_core::shard::Shard;
use std::time::{Duration, SystemTime};

/// How this host takes part in a run over several hosts. The default is a run of its own.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Hosts {
    pub shard: Option<Shard>,
    /// The common start: the first phase's measured schedule begins here on every host.
    pub start_at: Option<SystemTime>,
}

/// A host that reaches the common start later than this (its warmup ran long) starts at
/// once instead, unaligned, and says so: catching up would send the missed part of the
/// schedule as one burst. Within it, the small backlog is sent at once and the hosts stay
/// aligned (it shows as schedule lag).
pub const LATE_LIMIT: Duration = Duration::from_secs(1);

impl Hosts {
    /// This host's part of a phase planned for all of them: its share of the concurrency and
    /// of a fixed count (see `Shard::share`). The warmup is every host's own.
    pub fn part(&self, spec: &PhaseSpec) -> PhaseSpec {
        let Some(s) = self.shard else { return *spec };
        PhaseSpec {
            concurrency: (s.share(spec.concurrency as u64) as usize).max(1),
            stop: match spec.stop {
                StopAt::Count(n) => StopAt::Count(s.share(n)),
                other => other,
            },
            ..*spec
        }
    }

    /// The pace this host offers: its share of the rate, as its phase results record it (so
    /// that `report --merge` adds the hosts' rates back up to the whole).
    pub fn pace(&self, pace: Pace) -> Pace {
        match self.shard {
            Some(s) => Pace {
                rate_per_s: pace.rate_per_s.map(|r| r / f64::from(s.count)),
                ..pace
            },
            None => pace,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use encbench_core::plan::PhaseKind;

    #[test]
    fn a_host_runs_its_share_of_count_and_concurrency_and_its_own_warmup() {
        let spec = PhaseSpec {
            kind: PhaseKind::Batch,
            batch_size: 1,
            concurrency: 10,
            warmup: 3,
            stop: StopAt::Count(1001),
            repetition: None,
        };
        let parts: Vec<PhaseSpec> = (0..4)
            .map(|i| {
                Hosts {
                    shard: Some(Shard { index: i, count: 4 }),
                    start_at: None,
                }
                .part(&spec)
            })
            .collect();
        let c: Vec<usize> = parts.iter().map(|p| p.concurrency).collect();
        assert_eq!(c, [3, 3, 2, 2]);
        let n: Vec<StopAt> = parts.iter().map(|p| p.stop).collect();
        assert_eq!(
            n,
            [
                StopAt::Count(251),
                StopAt::Count(250),
                StopAt::Count(250),
                StopAt::Count(250)
            ]
        );
        assert!(parts.iter().all(|p| p.warmup == 3));
        assert_eq!(Hosts::default().part(&spec), spec);
        let pace = Pace {
            rate_per_s: Some(400.0),
            burstiness: 0.25,
        };
        assert_eq!(
            Hosts {
                shard: Some(Shard { index: 1, count: 4 }),
                start_at: None
            }
            .pace(pace)
            .rate_per_s,
            Some(100.0)
        );
    }
}

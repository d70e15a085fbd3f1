//! A run over several hosts from its flags: the shard this host is and the common start,
//! checked before anything is sent, and recorded in the export's config.

use super::{AppError, usage};
use crate::cli::RunArgs;
use crate::cli::hosts::INDEX_VAR;
use encbench_core::export::rfc3339;
use encbench_load::engine::Hosts;
use encbench_load::engine::hosts::LATE_LIMIT;
use std::time::{Duration, SystemTime};

/// The furthest ahead a common start may be: further is a mistyped date, not a plan.
const MAX_AHEAD: Duration = Duration::from_hours(24);

pub(super) fn hosts(a: &RunArgs) -> Result<Hosts, AppError> {
    let index = std::env::var(INDEX_VAR).ok();
    let shard = (a.hosts)
        .shard(index.as_deref())
        .map_err(|(flag, e)| usage(flag, e))?;
    if let Some(s) = shard {
        let flag = if a.hosts.shards.is_some() {
            "--shards"
        } else {
            "--shard"
        };
        let hosts = u64::from(s.count);
        if a.seed.is_none() {
            return Err(usage(
                flag,
                "needs --seed, the same on every host: the hosts draw one schedule from it",
            ));
        }
        if a.find_capacity || a.until_stable {
            return Err(usage(
                flag,
                "a capacity search (or --until-stable) decides on what one host measured: run it from one host",
            ));
        }
        let cap = [a.concurrency_cap()];
        let (caps, cap_flag) = if a.sweep_concurrency {
            (&a.concurrency_levels[..], "--concurrency-levels")
        } else {
            (&cap[..], "--concurrency")
        };
        if let Some(c) = caps.iter().find(|&&c| (c as u64) < hosts) {
            return Err(usage(
                cap_flag,
                format!(
                    "{c} is fewer than the {hosts} hosts: each host needs a slot of its own (the cap is the whole run's, shared out)"
                ),
            ));
        }
        if a.duration.is_none() && a.n < hosts {
            return Err(usage(
                "--requests",
                format!(
                    "{} is fewer than the {hosts} hosts: -n is the whole run's count, shared out",
                    a.n
                ),
            ));
        }
    }
    let start_at = match (a.hosts.start_at, a.hosts.start_in) {
        (Some(at), _) => {
            let now = SystemTime::now();
            if let Err(e) = at.duration_since(now)
                && e.duration() > LATE_LIMIT
            {
                return Err(usage(
                    "--start-at",
                    format!(
                        "{} is {:.0} s in the past (this host's clock)",
                        rfc3339(at),
                        e.duration().as_secs_f64()
                    ),
                ));
            }
            if at.duration_since(now).is_ok_and(|d| d > MAX_AHEAD) {
                return Err(usage(
                    "--start-at",
                    format!("{} is more than 24 hours away", rfc3339(at)),
                ));
            }
            Some(at)
        }
        (None, Some(secs)) => Some(SystemTime::now() + Duration::from_secs_f64(secs)),
        (None, None) => None,
    };
    Ok(Hosts { shard, start_at })
}

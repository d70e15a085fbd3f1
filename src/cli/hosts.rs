//! The flags of a run over several hosts: which part this host sends, and when all start.
// Doc comments here are `--help` text, read in a terminal: no Markdown in them.
#![allow(clippy::doc_markdown)]

use super::values::positive_secs;
use clap::Args;
use encbench_core::shard::{MAX_SHARDS, Shard};
use std::time::SystemTime;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// The variable a Kubernetes Indexed Job sets to each pod's index.
pub const INDEX_VAR: &str = "JOB_COMPLETION_INDEX";

#[derive(Args, Debug, Clone, Default)]
pub struct HostsArgs {
    /// This host's part of a run over several hosts, I/N (0-based): it sends arrivals I,
    /// I+N, I+2N, ... of the one schedule drawn at the whole --request-rate from --seed, and
    /// its share of --concurrency and -n. Every host is given the same options and --seed;
    /// each runs headless.
    #[arg(long, value_name = "I/N", value_parser = Shard::parse, conflicts_with = "shards", help_heading = "Several hosts")]
    pub shard: Option<Shard>,
    /// --shard I/N with I read from JOB_COMPLETION_INDEX, as a Kubernetes Indexed Job sets
    /// it.
    #[arg(long, value_name = "N", value_parser = shard_count, help_heading = "Several hosts")]
    pub shards: Option<u32>,
    /// Every host measures from this instant (RFC 3339, such as 2026-12-01T12:00:00Z); each
    /// warms up before it. The hosts' clocks are taken to agree (NTP keeps them within
    /// milliseconds).
    #[arg(long, value_name = "RFC3339", value_parser = start_at, conflicts_with = "start_in", help_heading = "Several hosts")]
    pub start_at: Option<SystemTime>,
    /// --start-at this long after this process started (10s, 2m; a bare number is
    /// seconds). Each host counts from its own start, so hosts line up only as well as they
    /// were started: give several hosts one --start-at.
    #[arg(long, value_name = "SECS", value_parser = positive_secs, allow_hyphen_values = true, help_heading = "Several hosts")]
    pub start_in: Option<f64>,
}

impl HostsArgs {
    /// The shard this host is, `index_var` being JOB_COMPLETION_INDEX's value; the error
    /// names the flag.
    pub fn shard(&self, index_var: Option<&str>) -> Result<Option<Shard>, (&'static str, String)> {
        let Some(count) = self.shards else {
            return Ok(self.shard);
        };
        let Some(raw) = index_var.map(str::trim).filter(|v| !v.is_empty()) else {
            return Err((
                "--shards",
                format!(
                    "{INDEX_VAR} is not set (a Kubernetes Indexed Job sets it); elsewhere give --shard I/{count}"
                ),
            ));
        };
        let index = raw
            .parse::<u32>()
            .map_err(|_| ("--shards", format!("{INDEX_VAR}={raw} is not a pod index")))?;
        Shard::new(index, count)
            .map(Some)
            .map_err(|e| ("--shards", format!("{INDEX_VAR}={raw}: {e}")))
    }
}

fn shard_count(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(n) if (1..=MAX_SHARDS).contains(&n) => Ok(n),
        _ => Err(format!("must be a number of hosts from 1 to {MAX_SHARDS}")),
    }
}

fn start_at(s: &str) -> Result<SystemTime, String> {
    OffsetDateTime::parse(s.trim(), &Rfc3339)
        .map(SystemTime::from)
        .map_err(|_| "must be an RFC 3339 instant such as 2026-12-01T12:00:00Z".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_takes_the_index_from_the_job() {
        let a = HostsArgs {
            shards: Some(4),
            ..HostsArgs::default()
        };
        assert_eq!(a.shard(Some("2")), Ok(Some(Shard { index: 2, count: 4 })));
        assert_eq!(a.shard(None).unwrap_err().0, "--shards");
        assert!(a.shard(Some("4")).unwrap_err().1.contains("0 to 3"));
        assert!(a.shard(Some("x")).is_err());
        assert_eq!(HostsArgs::default().shard(Some("3")), Ok(None));
    }

    #[test]
    fn start_at_takes_rfc3339_only() {
        assert!(start_at("2026-12-01T12:00:00Z").is_ok());
        assert!(start_at("2026-12-01T12:00:00.250+01:00").is_ok());
        for bad in ["2026-12-01 12:00", "tomorrow", "", "2026-13-01T00:00:00Z"] {
            assert!(start_at(bad).is_err(), "{bad}");
        }
    }
}

//! One run split over several hosts: host `index` of `count` sends arrivals `index`,
//! `index + count`, … of the one schedule every host draws at the total rate from one seed,
//! and its share of the concurrency and of a fixed count. The union of the hosts' sends is
//! then exactly the requested arrival process, not a superposition of independent ones
//! (which drifts toward Poisson as hosts are added).

use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Shard {
    /// 0-based, as a Kubernetes Indexed Job numbers its pods.
    pub index: u32,
    pub count: u32,
}

/// More hosts than this is a typo, not a deployment (and keeps `count` gaps per send cheap).
pub const MAX_SHARDS: u32 = 10_000;

impl Shard {
    pub fn new(index: u32, count: u32) -> Result<Shard, String> {
        if count == 0 || count > MAX_SHARDS {
            return Err(format!(
                "the shard count must be between 1 and {MAX_SHARDS}, not {count}"
            ));
        }
        if index >= count {
            return Err(format!(
                "shard {index} of {count} does not exist: shards are numbered 0 to {}",
                count - 1
            ));
        }
        Ok(Shard { index, count })
    }

    /// `I/N`, as `--shard` takes it.
    pub fn parse(s: &str) -> Result<Shard, String> {
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| format!("'{s}' is not I/N (this host's 0-based index / hosts)"))?;
        let num = |t: &str, what: &str| {
            t.trim()
                .parse::<u32>()
                .map_err(|_| format!("'{s}': the {what} is not a whole number"))
        };
        Shard::new(num(i, "index")?, num(n, "count")?)
    }

    /// This host's part of `total` things dealt round-robin from shard 0: arrivals of a
    /// fixed count, or units of concurrency (the remainder goes to the first hosts).
    pub fn share(self, total: u64) -> u64 {
        let n = u64::from(self.count);
        total / n + u64::from(u64::from(self.index) < total % n)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up_to_the_total_and_differ_by_at_most_one() {
        for count in [1u32, 2, 3, 4, 7] {
            for total in [0u64, 1, 3, 4, 10, 101, 400] {
                let shares: Vec<u64> = (0..count)
                    .map(|i| Shard::new(i, count).unwrap().share(total))
                    .collect();
                assert_eq!(shares.iter().sum::<u64>(), total, "{total} over {count}");
                let (lo, hi) = (shares.iter().min().unwrap(), shares.iter().max().unwrap());
                assert!(hi - lo <= 1, "{shares:?}");
                // Round-robin from shard 0: arrival k goes to host k mod count.
                for (i, s) in shares.iter().enumerate() {
                    let dealt = (0..total)
                        .filter(|k| k % u64::from(count) == i as u64)
                        .count();
                    assert_eq!(*s, dealt as u64);
                }
            }
        }
    }

    #[test]
    fn parse_takes_i_of_n_and_refuses_what_does_not_exist() {
        assert_eq!(Shard::parse("2/4"), Ok(Shard { index: 2, count: 4 }));
        assert_eq!(Shard::parse("0/1").unwrap().to_string(), "0/1");
        for bad in [
            "4/4", "0/0", "1", "-1/4", "a/4", "1/b", "1/4/2", "", "0/10001",
        ] {
            let e = Shard::parse(bad).unwrap_err();
            assert!(!e.is_empty(), "{bad}");
        }
        assert!(Shard::parse("4/4").unwrap_err().contains("0 to 3"));
    }
}

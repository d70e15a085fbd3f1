//! `report --merge` of a sharded run: the exports must be every shard of one run, each once,
//! from one seed and one common start, or the sum is not the run's traffic.

use encbench_core::export::Export;
use encbench_core::shard::Shard;
use std::collections::BTreeMap;

/// The shard an export's run was, from its config (`null` or absent: a run of its own).
pub fn of(e: &Export) -> Result<Option<Shard>, String> {
    match &e.config["shard"] {
        serde_json::Value::Null => Ok(None),
        v => serde_json::from_value(v.clone())
            .map(Some)
            .map_err(|_| format!("config.shard is {v}, not {{index, count}}")),
    }
}

/// The number of shards when `sources` are the shards of one run, `None` when none is a
/// shard; otherwise why they cannot be merged, naming the missing or repeated shard.
pub fn check(sources: &[(String, Export)]) -> Result<Option<u32>, String> {
    let mut shards = Vec::new();
    for (src, e) in sources {
        shards.push((src, e, of(e).map_err(|why| format!("{src}: {why}"))?));
    }
    let Some((first_src, first, Some(first_shard))) =
        shards.iter().find(|(_, _, s)| s.is_some()).copied()
    else {
        return Ok(None);
    };
    let count = first_shard.count;
    let mut seen: BTreeMap<u32, &String> = BTreeMap::new();
    for (src, e, shard) in &shards {
        let Some(s) = shard else {
            return Err(format!(
                "{src} is a run of its own but {first_src} is shard {first_shard}: merge the shards of one run, or unsharded runs"
            ));
        };
        if s.count != count {
            return Err(format!(
                "{src} is shard {s} but {first_src} is shard {first_shard}: merge the shards of one run"
            ));
        }
        for (key, why) in [
            (
                "seed",
                "the shards of one run draw one schedule from one seed",
            ),
            ("start_at", "the shards of one run start together"),
        ] {
            if e.config[key] != first.config[key] {
                return Err(format!(
                    "{src} (shard {s}) has {key} {} but {first_src} has {}: {why}",
                    e.config[key], first.config[key]
                ));
            }
        }
        if let Some(other) = seen.insert(s.index, *src) {
            return Err(format!(
                "shard {s} is there twice ({other} and {src}): merge each shard once"
            ));
        }
    }
    let missing: Vec<String> = (0..count)
        .filter(|i| !seen.contains_key(i))
        .map(|i| format!("{i}/{count}"))
        .collect();
    if !missing.is_empty() {
        let word = if missing.len() == 1 { "is" } else { "are" };
        return Err(format!(
            "shard {} {word} missing ({} of {count} given): a sharded run's traffic is the sum of all its shards",
            missing.join(", "),
            seen.len()
        ));
    }
    Ok(Some(count))
}

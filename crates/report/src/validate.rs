//! What `report` checks before it shows or adds up an export: one that breaks the schema or
//! its own invariants shows (or, merged, adds up to) figures nobody measured (a count that
//! wraps, a rate JSON cannot hold, more requests than it has answers for), and one export
//! given twice to `--merge` counts its requests twice. Each refusal names the file and what
//! is wrong with it.

use encbench_core::export::{Export, SCHEMA_VERSION};
use encbench_core::results::{PhaseResult, decode_histogram};
use serde_json::Value;
use std::sync::LazyLock;

/// The shipped schema, compiled once. It is part of the binary and checked by the tests, so
/// failing to compile it is a bug of this build, not of any input.
static SCHEMA: LazyLock<jsonschema::Validator> = LazyLock::new(|| {
    let schema: Value = serde_json::from_str(encbench_core::assets::EXPORT_SCHEMA)
        .expect("the shipped schema is JSON");
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the shipped schema compiles")
});

/// The first place `json` breaks the export schema, as "path: what".
pub fn schema_violation(json: &Value) -> Option<String> {
    let e = SCHEMA.iter_errors(json).next()?;
    // The message quotes the offending value, which may be a whole phase.
    let line = format!("{}: {e}", e.instance_path());
    Some(encbench_core::text::truncate(&line, 200))
}

/// A rounded duration is within half a millisecond of the interval it was rounded from.
const DURATION_ROUNDING_S: f64 = 0.0005;

fn check_phase(p: &PhaseResult, merged: bool) -> Result<(), String> {
    let errors = p.errors.values().try_fold(0u64, |a, &b| a.checked_add(b));
    if errors.and_then(|e| e.checked_add(p.ok)) != Some(p.n) {
        let errors = errors.map_or("past 2^64".into(), |e| e.to_string());
        return Err(format!(
            "ok {} + errors {errors} is not n {}: requests are missing or counted twice",
            p.ok, p.n
        ));
    }
    let hists = [
        ("histogram_hdr_b64", Some(&p.histogram_hdr_b64)),
        ("service_hdr_b64", p.service_hdr_b64.as_ref()),
        ("dispatch_delay_hdr_b64", p.dispatch_delay_hdr_b64.as_ref()),
    ];
    for (field, b64) in hists {
        let Some(b64) = b64 else { continue };
        let h = decode_histogram(b64).map_err(|e| format!("{field}: {e}"))?;
        if h.len() != p.ok {
            return Err(format!(
                "{field} holds {} but ok is {}",
                encbench_core::text::count(h.len(), "sample"),
                p.ok
            ));
        }
    }
    // A run's rate counts its ok requests, and warmup requests that ended inside the measured
    // interval, over that interval; duration_s is the interval rounded to the millisecond.
    // Merged rates are sums over hosts that ran for different times: no such bound.
    if !merged && p.duration_s > DURATION_ROUNDING_S {
        let most = p.ok.saturating_add(p.warmup) as f64 / (p.duration_s - DURATION_ROUNDING_S);
        if p.req_per_s > most * (1.0 + 1e-9) {
            return Err(format!(
                "req_per_s {} is more than ok + warmup over duration_s {} allow ({most:.3})",
                // As the export writes it: 1e308, not 309 digits.
                Value::from(p.req_per_s),
                p.duration_s
            ));
        }
    }
    Ok(())
}

/// One export's JSON checked against the schema and its invariants, then read.
pub fn check(json: Value) -> Result<Export, String> {
    // Before the schema, which would only say the number is not the one it allows.
    let version = &json["schema_version"];
    if version.as_u64() != Some(u64::from(SCHEMA_VERSION)) {
        return Err(format!(
            "schema_version {version} (this version reads {SCHEMA_VERSION})"
        ));
    }
    if let Some(why) = schema_violation(&json) {
        return Err(format!("does not match the export schema: {why}"));
    }
    let merged = json["config"].get("merged_from").is_some();
    let e = super::parse(json)?;
    for (i, p) in e.phases.iter().enumerate() {
        check_phase(p, merged).map_err(|why| format!("phase {}: {why}", i + 1))?;
    }
    Ok(e)
}

/// The exports `report --merge` was given, each checked, or the first that is wrong and why.
pub fn inputs(sources: Vec<(String, Value)>) -> Result<Vec<(String, Export)>, String> {
    for (i, (src, json)) in sources.iter().enumerate() {
        if let Some((first, _)) = sources[..i].iter().find(|(_, other)| other == json) {
            return Err(format!(
                "{src} holds the same export as {first}; give each host's export once"
            ));
        }
    }
    sources
        .into_iter()
        .map(|(src, json)| match check(json) {
            Ok(e) => Ok((src, e)),
            Err(why) => Err(format!("{src}: {why}")),
        })
        .collect()
}

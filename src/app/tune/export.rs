//! A tune's export, from its view: every configuration's phases and capacity answers (each
//! naming its configuration), and the `tune` section with each one's record. The same
//! function writes it when the tune ends and when a second interrupt cannot wait.

use super::Plan;
use crate::cli::RunArgs;
use encbench_core::choice::Choice;
use encbench_core::export::tune::{TuneConfiguration, TuneParam, TuneSection, TuneStatus};
use encbench_core::export::{Export, SCHEMA_VERSION, rfc3339};
use encbench_core::results::RunReport;
use encbench_core::tune::Assignment;
use encbench_load::tune::{ConfigurationState, TuneView};
use serde_json::{Value, json};
use std::time::SystemTime;

/// A configuration's record before anything is known of it but its values.
pub(super) fn record(values: &Assignment, status: TuneStatus) -> TuneConfiguration {
    TuneConfiguration {
        label: values.to_string(),
        values: values.0.iter().cloned().collect(),
        status,
        reason: None,
        url: None,
        instance_type: None,
        price_per_hour_usd: None,
        capacity: None,
        ready_after_s: None,
        server_exit: None,
        log: None,
        log_tail: vec![],
        config: None,
        accuracy: None,
        resumed: false,
    }
}

/// What every configuration's run shares, as a run's export names it: the first
/// configuration's settings (each configuration's own are in its record's `config`), the
/// target the tune's `--url` with the family its servers were found to speak.
pub(super) fn workload(a: &RunArgs) -> serde_json::Map<String, Value> {
    let strings = |v: &[String]| json!(v);
    let slo: Vec<String> = a.slo.objectives.iter().map(ToString::to_string).collect();
    let fail_on: Vec<String> = a
        .fail_on
        .thresholds
        .iter()
        .map(ToString::to_string)
        .collect();
    let v = json!({
        "n": a.n,
        "warmup": a.warmup,
        "duration_s": a.duration,
        "batch_size": a.batch_size,
        "sweep_batch": a.sweep_batch,
        "batch_sizes": a.batch_sizes,
        "concurrency": a.concurrency_cap(),
        "sweep_concurrency": a.sweep_concurrency,
        "concurrency_levels": a.concurrency_levels,
        "request_rate": a.request_rate.0,
        "burstiness": a.burstiness.is_finite().then_some(a.burstiness),
        "pad_to_max": a.pad_to_max,
        "max_len": a.max_len,
        "slo": strings(&slo),
        "find_capacity": a.find_capacity,
        "capacity_precision": a.slo.capacity_precision,
        "min_probe_requests": a.slo.min_probe_requests,
        "stability": a.slo.stability,
        "max_probe_secs": a.slo.max_probe_secs,
        "until_stable": a.until_stable,
        "repeat": a.repeat,
        "fail_on": strings(&fail_on),
    });
    match v {
        Value::Object(m) => m,
        _ => unreachable!("an object"),
    }
}

/// The export's `config`: the shared workload, the seed, and the target.
pub(super) fn config(a: &RunArgs, url: &str, seed: u64, labels: &[String]) -> Value {
    let mut m = workload(a);
    m.insert(
        "target".into(),
        json!({
            "url": encbench_core::scrub::url(url),
            "engine": a.engine.map(encbench_wire::payload::PayloadFormat::name),
            "tune": labels,
        }),
    );
    m.insert("seed".into(), json!(seed));
    m.insert("closed_loop".into(), json!(a.request_rate.0.is_none()));
    m.insert("timeout_s".into(), json!(a.timeout));
    Value::Object(m)
}

/// The export of the tune as `view` holds it; `interim`: what the configuration under way
/// measured so far, when it cannot be waited for.
pub(super) fn build(
    plan: &Plan,
    view: &TuneView,
    error: Option<String>,
    interim: Option<&RunReport>,
) -> Export {
    let mut configurations = Vec::new();
    let (mut phases, mut capacity, mut notices) = (vec![], vec![], vec![]);
    for (i, row) in view.rows.iter().enumerate() {
        let mut r = row.record.clone().unwrap_or_else(|| {
            let status = if row.state == ConfigurationState::Waiting {
                TuneStatus::NotRun
            } else {
                TuneStatus::Incomplete
            };
            let mut r = record(&plan.grid[i], status);
            if status == TuneStatus::Incomplete {
                r.reason = Some("interrupted twice: what it measured was not waited for".into());
            }
            r
        });
        phases.extend(row.phases.iter().cloned());
        capacity.extend(row.capacity.iter().cloned());
        notices.extend(row.notices.iter().cloned());
        if view.current == Some(i)
            && row.record.is_none()
            && let Some(report) = interim
        {
            for mut p in report.phases.clone() {
                p.target = Some(r.label.clone());
                phases.push(p);
            }
            for mut c in report.capacity.clone() {
                c.target = Some(r.label.clone());
                capacity.push(c);
            }
            r.capacity = encbench_core::export::tune::summary(&capacity, &r.label);
        }
        configurations.push(r);
    }
    let mut config = plan.config.clone();
    if config["target"]["engine"].is_null()
        && let Some(engine) = configurations.iter().find_map(|c| {
            c.config.as_ref()?["target"]["engine"]
                .as_str()
                .map(String::from)
        })
    {
        config["target"]["engine"] = json!(engine);
    }
    let stopped = configurations
        .iter()
        .any(|c| matches!(c.status, TuneStatus::Incomplete | TuneStatus::NotRun));
    Export {
        schema_version: SCHEMA_VERSION,
        tool: "encbench-tui".into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        started_at: rfc3339(view.started_at),
        ended_at: rfc3339(SystemTime::now()),
        config,
        phases,
        capacity,
        accuracy: None,
        timeline: vec![],
        stopped_early: stopped,
        error,
        notices,
        fail_on: vec![],
        compare: None,
        tune: Some(TuneSection {
            serve: encbench_core::scrub::text(&plan.args.serve),
            url: encbench_core::scrub::url(&plan.url),
            params: plan
                .args
                .params
                .iter()
                .map(|p| TuneParam {
                    name: p.name.clone(),
                    values: p.values.clone(),
                })
                .collect(),
            zip: plan.args.zip,
            stop_grace_s: plan.args.stop_grace,
            configurations,
        }),
    }
}

//! `--resume FILE`: the configurations an earlier tune measured are taken from its export,
//! not started again: the same values, run with the same workload and price, ended
//! measured. One measured otherwise is refused, naming what differs: a table must not set
//! side by side figures of two workloads.

use super::export::workload;
use crate::app::{AppError, usage};
use crate::cli::TuneArgs;
use encbench_core::export::Export;
use encbench_core::export::tune::{TuneConfiguration, TuneStatus};
use encbench_core::tune::Assignment;
use encbench_load::tune::{ConfigurationState, Row};
use std::path::Path;

/// Settings that change a measurement but not the workload's name.
const NOT_WORKLOAD: [&str; 2] = ["batch_size", "fail_on"];

/// For each configuration of `grid`, its row from the export at `path` where that measured
/// it.
pub(super) fn rows(
    path: &Path,
    args: &TuneArgs,
    grid: &[Assignment],
) -> Result<Vec<Option<Row>>, AppError> {
    let shown = path.display();
    let e = match encbench_report::load_any(path) {
        Ok(encbench_report::Loaded::Run(e)) => e,
        Ok(encbench_report::Loaded::ColdStart(_)) => {
            return Err(usage(
                "--resume",
                format!("{shown}: a cold-start export, not a tune's"),
            ));
        }
        Err(why) => return Err(usage("--resume", format!("{shown}: {why}"))),
    };
    let Some(t) = &e.tune else {
        return Err(usage("--resume", format!("{shown}: not a tune's export")));
    };
    grid.iter()
        .map(|values| {
            let label = values.to_string();
            let Some(c) = t
                .configurations
                .iter()
                .find(|c| c.label == label && c.status == TuneStatus::Measured)
            else {
                return Ok(None);
            };
            same_workload(args, values, c).map_err(|why| {
                usage(
                    "--resume",
                    format!("{shown}: {label} was measured {why}; resume only the same workload"),
                )
            })?;
            Ok(Some(row(&e, c)))
        })
        .collect()
}

/// Why `c` was not measured as this tune would measure `values`, if it was not.
fn same_workload(
    args: &TuneArgs,
    values: &Assignment,
    c: &TuneConfiguration,
) -> Result<(), String> {
    let now = args
        .configuration(values, Some(1))
        .map_err(|e| format!("but cannot be now ({e})"))?;
    let then = c.config.as_ref().ok_or("with no settings recorded")?;
    for (k, v) in workload(&now.run) {
        if NOT_WORKLOAD.contains(&k.as_str()) || then.get(&k).is_none() {
            continue;
        }
        if then[&k] != v {
            return Err(format!(
                "with config.{k} {}, this tune gives it {v}",
                then[&k]
            ));
        }
    }
    let price = super::drive::price(&now.run);
    if c.price_per_hour_usd != price {
        return Err(format!(
            "at ${}/h, this tune prices it at {}",
            c.price_per_hour_usd.map_or("-".into(), |p| p.to_string()),
            price.map_or("nothing".into(), |p| format!("${p}/h"))
        ));
    }
    Ok(())
}

fn row(e: &Export, c: &TuneConfiguration) -> Row {
    let mine = |t: &Option<String>| t.as_deref() == Some(c.label.as_str());
    Row {
        label: c.label.clone(),
        state: ConfigurationState::Done(TuneStatus::Measured),
        snapshot: None,
        record: Some(TuneConfiguration {
            resumed: true,
            ..c.clone()
        }),
        phases: e
            .phases
            .iter()
            .filter(|p| mine(&p.target))
            .cloned()
            .collect(),
        capacity: e
            .capacity
            .iter()
            .filter(|x| mine(&x.target))
            .cloned()
            .collect(),
        notices: vec![],
    }
}

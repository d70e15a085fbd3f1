//! Reading a finished sweep: where batching stops paying (the knee), where more concurrency
//! stops buying throughput (saturation), and the one line of advice that follows.

use super::PhaseResult;
use crate::plan::PhaseKind;

/// The latest sweep of `kind`: the last run of consecutive phases of that kind.
pub fn latest_sweep(phases: &[PhaseResult], kind: PhaseKind) -> Vec<&PhaseResult> {
    let mut groups: Vec<Vec<&PhaseResult>> = Vec::new();
    let mut previous: Option<PhaseKind> = None;
    for p in phases {
        if p.kind == kind {
            if previous != Some(kind) {
                groups.push(Vec::new());
            }
            groups.last_mut().expect("pushed above").push(p);
        }
        previous = Some(p.kind);
    }
    groups.pop().unwrap_or_default()
}

/// Index of the first batch size whose efficiency falls under `knee`.
pub fn knee(rows: &[&PhaseResult], knee: f64) -> Option<usize> {
    rows.iter()
        .position(|p| p.batch_efficiency.is_some_and(|e| e < knee))
}

/// Growth in req/s under which another step of concurrency counts as buying nothing.
const SATURATION_GROWTH: f64 = 0.05;

/// Index of the first concurrency level whose req/s grew under 5 % over the previous level
/// while its p99 grew.
pub fn saturation(rows: &[&PhaseResult]) -> Option<usize> {
    (1..rows.len()).find(|&i| {
        let (a, b) = (rows[i - 1], rows[i]);
        a.req_per_s > 0.0
            && b.req_per_s < a.req_per_s * (1.0 + SATURATION_GROWTH)
            && b.latency_ms.p99 > a.latency_ms.p99
    })
}

/// "batch cap 8: efficiency 0.93 → 0.73 at 32".
pub fn batch_advice(rows: &[&PhaseResult], knee_at: f64) -> Option<String> {
    let eff = |p: &PhaseResult| {
        p.batch_efficiency
            .map_or("-".to_string(), |e| format!("{e:.2}"))
    };
    match knee(rows, knee_at) {
        Some(0) => Some(format!(
            "batching does not pay: efficiency {} at batch {}",
            eff(rows[0]),
            rows[0].batch_size
        )),
        Some(k) => Some(format!(
            "batch cap {}: efficiency {} → {} at {}",
            rows[k - 1].batch_size,
            eff(rows[k - 1]),
            eff(rows[k]),
            rows[k].batch_size
        )),
        None => {
            let last = rows.iter().rev().find(|p| p.batch_efficiency.is_some())?;
            Some(format!(
                "no knee up to batch {}: efficiency {} (≥ {knee_at})",
                last.batch_size,
                eff(last)
            ))
        }
    }
}

/// "concurrency cap 4: at 8 req/s +2%, p99 ×1.9".
pub fn concurrency_advice(rows: &[&PhaseResult]) -> Option<String> {
    match saturation(rows) {
        Some(s) => {
            let (a, b) = (rows[s - 1], rows[s]);
            Some(format!(
                "concurrency cap {}: at {} req/s {:+.0}%, p99 ×{:.1}",
                a.concurrency,
                b.concurrency,
                (b.req_per_s / a.req_per_s - 1.0) * 100.0,
                b.latency_ms.p99 / a.latency_ms.p99.max(f64::MIN_POSITIVE)
            ))
        }
        None if rows.len() > 1 => {
            let last = rows.last()?;
            Some(format!(
                "no saturation up to concurrency {}: {:.1} req/s",
                last.concurrency, last.req_per_s
            ))
        }
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::phase_row as row;

    #[test]
    fn measured_gpu_batch_scaling_gives_the_knee_at_32() {
        // b=1 55.2/s, b=8 408.6/s (0.93), b=32 1280.8/s (0.73).
        let phases = vec![
            row(PhaseKind::Batch, 1, 1, 55.2, 18.0, 20.0, Some(1.0)),
            row(PhaseKind::Batch, 8, 1, 408.6 / 8.0, 19.0, 21.0, Some(0.93)),
            row(
                PhaseKind::Batch,
                32,
                1,
                1280.8 / 32.0,
                25.0,
                27.0,
                Some(0.73),
            ),
        ];
        let rows = latest_sweep(&phases, PhaseKind::Batch);
        assert_eq!(knee(&rows, 0.8), Some(2));
        assert_eq!(
            batch_advice(&rows, 0.8).unwrap(),
            "batch cap 8: efficiency 0.93 → 0.73 at 32"
        );
        assert_eq!(
            batch_advice(&rows, 0.7).unwrap(),
            "no knee up to batch 32: efficiency 0.73 (≥ 0.7)"
        );
    }

    #[test]
    fn saturation_is_flat_throughput_with_growing_tail() {
        let phases = vec![
            row(PhaseKind::Concurrency, 1, 1, 60.0, 16.0, 18.0, None),
            row(PhaseKind::Concurrency, 1, 2, 118.0, 16.5, 19.0, None),
            row(PhaseKind::Concurrency, 1, 4, 180.0, 21.0, 26.0, None),
            row(PhaseKind::Concurrency, 1, 8, 183.0, 42.0, 50.0, None),
        ];
        let rows = latest_sweep(&phases, PhaseKind::Concurrency);
        assert_eq!(saturation(&rows), Some(3));
        assert_eq!(
            concurrency_advice(&rows).unwrap(),
            "concurrency cap 4: at 8 req/s +2%, p99 ×1.9"
        );
    }

    #[test]
    fn only_the_latest_sweep_counts() {
        let phases = vec![
            row(PhaseKind::Batch, 1, 1, 50.0, 1.0, 1.0, Some(1.0)),
            row(PhaseKind::Live, 1, 1, 50.0, 1.0, 1.0, None),
            row(PhaseKind::Batch, 1, 2, 70.0, 1.0, 1.0, Some(1.0)),
            row(PhaseKind::Batch, 4, 2, 30.0, 1.0, 1.0, Some(0.4)),
        ];
        let rows = latest_sweep(&phases, PhaseKind::Batch);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].concurrency, 2);
        assert!(latest_sweep(&phases, PhaseKind::Concurrency).is_empty());
    }
}

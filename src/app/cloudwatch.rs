//! After a run on a SageMaker endpoint (`--cloudwatch-wait`): the wait for CloudWatch to
//! publish, as a countdown on stderr (a signal cuts it short: the figures are read at once,
//! never lost), then each phase's figures read for its window. A refusal (no
//! `cloudwatch:GetMetricData`) is one note, under the tables' heading and in the export;
//! the figures are absent and the run is kept.

use encbench_core::results::RunReport;
use encbench_wire::client::cloudwatch::CloudWatch;
use encbench_wire::client::sagemaker::SageMakerSettings;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

async fn countdown(wait: Duration) {
    if wait.is_zero() {
        return;
    }
    let tty = std::io::stderr().is_terminal();
    let end = Instant::now() + wait;
    let said = |left: Duration| {
        let line = format!(
            "CloudWatch: reading SageMaker's metrics in {} s (1-minute periods, published late; Ctrl-C reads now)",
            left.as_secs_f64().ceil()
        );
        if tty {
            crate::stderr::say_raw(format_args!("\r{line}\x1b[K"));
        } else {
            crate::stderr::say(format_args!("{line}"));
        }
    };
    // A log gets a line every 30 s, a terminal the countdown each second.
    let step = Duration::from_secs(if tty { 1 } else { 30 });
    let counting = async {
        loop {
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            said(left);
            tokio::time::sleep(left.min(step)).await;
        }
    };
    tokio::select! {
        () = counting => {}
        () = crate::signals::wait_for_signal() => {}
    }
    if tty {
        crate::stderr::say_raw(format_args!("\r\x1b[K"));
    }
}

/// `cold-start`: waits `wait_s`, then reads the figures from `start` to now; a failure is
/// one note on stderr.
pub(super) async fn read_after(
    cfg: &SageMakerSettings,
    wait_s: f64,
    start: std::time::SystemTime,
) -> Option<encbench_core::server_metrics::cloudwatch::CloudWatchFigures> {
    let end = std::time::SystemTime::now();
    countdown(Duration::from_secs_f64(wait_s)).await;
    match CloudWatch::new(cfg).await.read(start, end).await {
        Ok(f) => Some(f),
        Err(why) => {
            crate::stderr::say(format_args!(
                "note: CloudWatch: GetMetricData failed ({why}): SageMaker's figures are absent; reading them needs cloudwatch:GetMetricData"
            ));
            None
        }
    }
}

/// Waits `wait_s`, then adds each phase's CloudWatch figures to `report`.
pub(super) async fn attach(report: &mut RunReport, cfg: &SageMakerSettings, wait_s: f64) {
    if report.phases.iter().all(|p| p.wall.is_none()) {
        return;
    }
    countdown(Duration::from_secs_f64(wait_s)).await;
    let cw = CloudWatch::new(cfg).await;
    for p in &mut report.phases {
        let Some((start, end)) = p.wall else {
            continue;
        };
        match cw.read(start, end).await {
            Ok(f) => p.cloudwatch = Some(f),
            Err(why) => {
                let note = format!(
                    "CloudWatch: GetMetricData failed ({why}): SageMaker's figures are absent; reading them needs cloudwatch:GetMetricData"
                );
                report.notices.push(note);
                return;
            }
        }
    }
}

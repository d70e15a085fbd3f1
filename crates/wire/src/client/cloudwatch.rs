//! Reads `AWS/SageMaker`'s metrics for an endpoint over a phase through CloudWatch's
//! `GetMetricData`, as the runtime client's identity, in its region (the figures are
//! `server_metrics::cloudwatch`).

use crate::client::sagemaker::SageMakerSettings;
use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;
use aws_sdk_cloudwatch::Client;
use aws_sdk_cloudwatch::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_cloudwatch::operation::get_metric_data::GetMetricDataError;
use aws_sdk_cloudwatch::types::{Dimension, Metric, MetricDataQuery, MetricStat};
use aws_smithy_types::DateTime;
use encbench_core::export::rfc3339;
use encbench_core::server_metrics::cloudwatch::{
    CloudWatchFigures, CloudWatchMetric, NAMESPACE, PERIOD_S, whole_periods,
};
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

/// The metrics read, and whether CloudWatch publishes them in microseconds (shown in ms).
const METRICS: [(&str, bool); 6] = [
    ("ModelLatency", true),
    ("OverheadLatency", true),
    ("Invocations", false),
    ("Invocation4XXErrors", false),
    ("Invocation5XXErrors", false),
    ("ModelSetupTime", true),
];

/// Statistics asked for each metric: the average is their quotient, exact over minutes.
const STATS: [&str; 3] = ["Sum", "SampleCount", "Maximum"];

/// A CloudWatch client for one endpoint's metrics.
pub struct CloudWatch {
    client: Client,
    dimensions: BTreeMap<String, String>,
}

impl CloudWatch {
    /// The endpoint's variant (`AllTraffic`, SageMaker's default name, when the run named
    /// none), or its inference component's own metrics.
    pub async fn new(cfg: &SageMakerSettings) -> CloudWatch {
        let timeouts = TimeoutConfig::builder()
            .operation_timeout(Duration::from_secs(20))
            .build();
        // CloudWatch's own endpoint variable wins over --endpoint-url, which is the runtime's.
        let own_url = std::env::var_os("AWS_ENDPOINT_URL_CLOUDWATCH").is_some();
        let loaded =
            crate::client::aws::load(cfg, 1, RetryConfig::standard(), timeouts, !own_url).await;
        let mut config = aws_sdk_cloudwatch::config::Builder::from(&loaded.sdk);
        config.set_credentials_provider(loaded.credentials);
        let mut dimensions = BTreeMap::new();
        if let Some(ic) = &cfg.inference_component {
            dimensions.insert("InferenceComponentName".into(), ic.clone());
        } else {
            dimensions.insert("EndpointName".into(), cfg.endpoint.clone());
            let variant = cfg.target_variant.as_deref().unwrap_or("AllTraffic");
            dimensions.insert("VariantName".into(), variant.into());
        }
        CloudWatch {
            client: Client::from_conf(config.build()),
            dimensions,
        }
    }

    /// The figures over `[start, end]` widened to whole periods; `Err` says why, in a few
    /// scrubbed words (a missing `cloudwatch:GetMetricData` permission among them).
    pub async fn read(
        &self,
        start: SystemTime,
        end: SystemTime,
    ) -> Result<CloudWatchFigures, String> {
        let (from, to) = whole_periods(start, end);
        let dims: Vec<Dimension> = self
            .dimensions
            .iter()
            .map(|(k, v)| Dimension::builder().name(k).value(v).build())
            .collect();
        let mut queries = Vec::new();
        for (i, (name, _)) in METRICS.iter().enumerate() {
            let metric = Metric::builder()
                .namespace(NAMESPACE)
                .metric_name(*name)
                .set_dimensions(Some(dims.clone()))
                .build();
            for (j, stat) in STATS.iter().enumerate() {
                let stat = MetricStat::builder()
                    .metric(metric.clone())
                    .period(PERIOD_S as i32)
                    .stat(*stat)
                    .build();
                queries.push(
                    MetricDataQuery::builder()
                        .id(format!("m{i}s{j}"))
                        .metric_stat(stat)
                        .return_data(true)
                        .build(),
                );
            }
        }
        // Per metric, per statistic: the values of every period.
        let mut values: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        let mut next: Option<String> = None;
        loop {
            let out = self
                .client
                .get_metric_data()
                .set_metric_data_queries(Some(queries.clone()))
                .start_time(DateTime::from(from))
                .end_time(DateTime::from(to))
                .set_next_token(next.take())
                .send()
                .await
                .map_err(|e| encbench_core::scrub::text(&why(&e)))?;
            for r in out.metric_data_results() {
                if let Some(id) = r.id() {
                    values.entry(id.to_string()).or_default().extend(r.values());
                }
            }
            match out.next_token() {
                Some(t) if !t.is_empty() => next = Some(t.to_string()),
                _ => break,
            }
        }
        let mut metrics = BTreeMap::new();
        for (i, (name, micros)) in METRICS.iter().enumerate() {
            let of = |j: usize| {
                values
                    .get(&format!("m{i}s{j}"))
                    .cloned()
                    .unwrap_or_default()
            };
            let (sums, counts, maxes) = (of(0), of(1), of(2));
            if counts.is_empty() && sums.is_empty() {
                continue;
            }
            let scale = if *micros { 1e-3 } else { 1.0 };
            let sum: f64 = sums.iter().sum();
            let sample_count: f64 = counts.iter().sum();
            let round = |v: f64| (v * 1e4).round() / 1e4;
            metrics.insert(
                (*name).to_string(),
                CloudWatchMetric {
                    unit: if *micros { "ms" } else { "count" }.into(),
                    average: (sample_count > 0.0).then(|| round(sum / sample_count * scale)),
                    max: maxes
                        .iter()
                        .copied()
                        .reduce(f64::max)
                        .map(|m| round(m * scale)),
                    sample_count,
                    sum: round(sum * scale),
                    periods: counts.len().max(sums.len()),
                },
            );
        }
        Ok(CloudWatchFigures {
            namespace: NAMESPACE.into(),
            dimensions: self.dimensions.clone(),
            period_s: PERIOD_S,
            window_start: rfc3339(from),
            window_end: rfc3339(to),
            metrics,
        })
    }
}

/// An error in a few words: the service's code and message (read from the XML body when
/// the SDK found none, as with moto's refusals), or the innermost cause.
fn why(e: &SdkError<GetMetricDataError>) -> String {
    if let Some(code) = e.code() {
        return format!("{code} {}", e.message().unwrap_or(""))
            .trim()
            .to_string();
    }
    if let SdkError::ServiceError(se) = e {
        let raw = se.raw();
        let body = raw
            .body()
            .bytes()
            .map(String::from_utf8_lossy)
            .unwrap_or_default();
        let tag = |t: &str| {
            let open = format!("<{t}>");
            let start = body.find(&open)? + open.len();
            let end = start + body[start..].find(&format!("</{t}>"))?;
            Some(body[start..end].to_string())
        };
        return match (tag("Code"), tag("Message")) {
            (Some(c), Some(m)) => format!("{c}: {m}"),
            (Some(c), None) => c,
            _ => format!("HTTP {}", raw.status().as_u16()),
        };
    }
    let mut source: &dyn std::error::Error = e;
    while let Some(next) = source.source() {
        source = next;
    }
    source.to_string()
}

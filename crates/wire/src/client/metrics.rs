//! Reads a server's Prometheus metrics endpoint (`--metrics-url`) around each phase, its text
//! read by `prometheus`; what the readings amount to is `server_metrics`.

use encbench_core::server_metrics::Reading;
use std::time::{Duration, Instant};

/// Reads a Prometheus text endpoint. Answers are capped in size and time: a metrics
/// endpoint that hangs or floods must not hold up a phase.
pub struct Scraper {
    url: String,
    model: Option<String>,
    client: reqwest::Client,
    /// `--metric` names.
    pub names: Vec<String>,
}

/// The largest scrape read (vLLM's metrics with every histogram run to a few hundred KiB).
const MAX_SCRAPE_BYTES: usize = 16 * 1024 * 1024;
const SCRAPE_TIMEOUT: Duration = Duration::from_secs(3);

impl Scraper {
    pub fn new(url: &str, model: Option<&str>, names: Vec<String>) -> Result<Scraper, String> {
        let client = crate::client::tls::reqwest_builder()
            .timeout(SCRAPE_TIMEOUT)
            .build()
            .map_err(|e| encbench_core::scrub::text(&e.to_string()))?;
        Ok(Scraper {
            url: url.to_string(),
            model: model.map(str::to_string),
            client,
            names,
        })
    }

    /// The same endpoint on a client of its own, for another runtime: a connection pool
    /// belongs to the runtime that opened its connections.
    pub fn fresh(&self) -> Result<Scraper, String> {
        Scraper::new(&self.url, self.model.as_deref(), self.names.clone())
    }

    /// One scrape; `Err` says why, scrubbed, in a few words.
    pub async fn scrape(&self) -> Result<Reading, String> {
        let resp = self.client.get(&self.url).send().await.map_err(|e| {
            let why = if e.is_timeout() {
                "timed out".to_string()
            } else if e.is_connect() {
                "cannot connect".to_string()
            } else {
                e.to_string()
            };
            encbench_core::scrub::text(&why)
        })?;
        let status = resp.status();
        if !status.is_success() {
            return Err(format!("HTTP {}", status.as_u16()));
        }
        let (body, _cut) = crate::client::body::read_reqwest(resp, MAX_SCRAPE_BYTES)
            .await
            .map_err(|e| encbench_core::scrub::text(&e.to_string()))?;
        let at = Instant::now();
        let text = String::from_utf8_lossy(&body);
        Ok(Reading {
            at,
            exposition: super::prometheus::parse(&text, self.model.as_deref()),
        })
    }
}

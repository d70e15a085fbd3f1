//! Server-side counters where a server offers them: Triton's KServe v2 statistics
//! (`GET /v2/models/{m}/stats`), read before and after a phase and diffed.

use serde_json::Value;

/// Server-side counters of `GET /v2/models/{m}/stats`, summed over the model's versions.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ServerStats {
    pub inference_count: u64,
    pub execution_count: u64,
    pub success_count: u64,
    pub queue_ns: u64,
    pub compute_input_ns: u64,
    pub compute_infer_ns: u64,
    pub compute_output_ns: u64,
}

impl ServerStats {
    pub fn parse(v: &Value) -> Option<ServerStats> {
        let models = v["model_stats"].as_array()?;
        let n = |x: &Value| {
            x.as_u64()
                .or_else(|| x.as_str().and_then(|s| s.parse().ok()))
                .unwrap_or(0)
        };
        let mut s = ServerStats::default();
        for m in models {
            let i = &m["inference_stats"];
            s.inference_count += n(&m["inference_count"]);
            s.execution_count += n(&m["execution_count"]);
            s.success_count += n(&i["success"]["count"]);
            s.queue_ns += n(&i["queue"]["ns"]);
            s.compute_input_ns += n(&i["compute_input"]["ns"]);
            s.compute_infer_ns += n(&i["compute_infer"]["ns"]);
            s.compute_output_ns += n(&i["compute_output"]["ns"]);
        }
        Some(s)
    }

    #[must_use]
    pub fn since(&self, before: &ServerStats) -> ServerStats {
        ServerStats {
            inference_count: self.inference_count.saturating_sub(before.inference_count),
            execution_count: self.execution_count.saturating_sub(before.execution_count),
            success_count: self.success_count.saturating_sub(before.success_count),
            queue_ns: self.queue_ns.saturating_sub(before.queue_ns),
            compute_input_ns: self
                .compute_input_ns
                .saturating_sub(before.compute_input_ns),
            compute_infer_ns: self
                .compute_infer_ns
                .saturating_sub(before.compute_infer_ns),
            compute_output_ns: self
                .compute_output_ns
                .saturating_sub(before.compute_output_ns),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stats_are_summed_over_versions_and_diffed() {
        let before = json!({"model_stats":[{"inference_count": 10, "execution_count": 5, "inference_stats": {"success": {"count": 5, "ns": 1}, "queue": {"count": 5, "ns": 1000}, "compute_input": {"ns": 10}, "compute_infer": {"ns": 100}, "compute_output": {"ns": 10}}}]});
        let after = json!({"model_stats":[{"inference_count": "26", "execution_count": 9, "inference_stats": {"success": {"count": 13, "ns": 1}, "queue": {"count": 13, "ns": 5000}, "compute_input": {"ns": 30}, "compute_infer": {"ns": 900}, "compute_output": {"ns": 20}}}]});
        let d = ServerStats::parse(&after)
            .unwrap()
            .since(&ServerStats::parse(&before).unwrap());
        assert_eq!(
            (d.inference_count, d.execution_count, d.queue_ns),
            (16, 4, 4000)
        );
    }
}

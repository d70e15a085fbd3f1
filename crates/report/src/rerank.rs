//! A reranker's figures in its own words: its batch is the documents of a query (D), its
//! samples are documents, its cost is per million documents. Every table and chart is built
//! as for a batch sweep, then said in these words.

use super::table::Table;
use encbench_core::export::Export;

/// Whether the export measured a reranker (`config.task` rerank).
pub fn is_rerank(e: &Export) -> bool {
    e.config["task"] == "rerank"
}

/// A reranker's line under the heading: what a request and a sample are, at which D.
pub fn heading(e: &Export) -> Option<String> {
    if !is_rerank(e) {
        return None;
    }
    let c = &e.config;
    let d = if c["sweep_batch"] == true {
        c["batch_sizes"].as_array().map_or(String::new(), |b| {
            b.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        })
    } else {
        c["batch_size"].to_string()
    };
    Some(format!(
        "a reranker: each request one query with D documents (D = {d}), throughput in documents per second, cost per million documents"
    ))
}

/// A header or title in a reranker's words.
pub fn words(text: &str) -> String {
    let mut s = text.to_string();
    for (from, to) in [
        ("Batch sweep", "Documents-per-query sweep"),
        ("Batch (", "Documents per query (D; "),
        ("samples/s", "docs/s"),
        ("samples (inputs) per second", "documents per second"),
        ("Samples (inputs) per second", "Documents per second"),
        ("samples per second", "documents per second"),
        ("Samples per second", "Documents per second"),
        ("million samples", "million documents"),
        ("1M samples", "1M documents"),
        ("per input", "per document"),
        ("batch size (inputs per request)", "documents per query (D)"),
        ("batch size", "D"),
        ("at the largest batch", "at the largest D"),
        ("×b=1", "×D=1"),
        (" b=", " D="),
        ("at batch ", "at D="),
        ("(batch ", "(D="),
        ("batch 1's", "D=1's"),
    ] {
        s = s.replace(from, to);
    }
    match s.as_str() {
        "batch" | "b" => "D".into(),
        "$/1M" => "$/1M docs".into(),
        _ => s,
    }
}

/// A capacity answer says its rate in samples (`425 samples/s`): a reranker's are documents.
pub fn answer_in_documents(answer: &str) -> String {
    answer.replace(" samples/s)", " docs/s)")
}

/// Tables in a reranker's words.
pub fn tables(tables: &mut [Table]) {
    for t in tables {
        t.title = words(&t.title);
        for h in &mut t.headers {
            *h = words(h);
        }
        for n in &mut t.notes {
            *n = words(&n.replace("batch cap ", "documents per query at most "))
                .replace("advice: batch ", "advice: D=")
                .replace("per 1M samples", "per 1M documents");
        }
        for row in &mut t.rows {
            for cell in row {
                if let super::table::Cell::Text(s) = cell {
                    *s = answer_in_documents(s);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rerankers_words() {
        assert_eq!(words("batch"), "D");
        assert_eq!(words("samples/s"), "docs/s");
        assert_eq!(words("$/1M"), "$/1M docs");
        assert_eq!(words("req/s b=8"), "req/s D=8");
        assert_eq!(
            words("Cost per million samples at batch 8 (cheapest first)"),
            "Cost per million documents at D=8 (cheapest first)"
        );
        assert_eq!(words("conc"), "conc");
    }
}

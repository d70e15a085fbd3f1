//! The rerank shape of Jina and Cohere (`{"model", "query", "documents", "top_n"}` →
//! `{"results": [{"index", "relevance_score"}]}`, best first), which vLLM's `/rerank`,
//! `/v1/rerank` and `/v2/rerank` and Infinity's `/rerank` answer too, each with its own
//! extra fields and error words.

use super::{Dialect, Item, body, now_s, serve, strings};
use crate::Server;
use axum::body::Bytes;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Instant;

/// The documents' scores against the query, best first, cut to `top_n` when it is set.
pub(crate) fn ranked(
    s: &Server,
    query: &str,
    documents: &[String],
    top_n: Option<usize>,
) -> Vec<(usize, f32)> {
    let mut scores: Vec<(usize, f32)> = documents
        .iter()
        .enumerate()
        .map(|(i, d)| (i, s.relevance(query, d)))
        .collect();
    scores.sort_by(|a, b| b.1.total_cmp(&a.1));
    if let Some(n) = top_n.filter(|n| *n > 0) {
        scores.truncate(n);
    }
    scores
}

pub async fn rerank(s: Arc<Server>, bytes: Bytes, dialect: Dialect) -> Response {
    let arrived = Instant::now();
    let v = match body(&bytes) {
        Ok(v) => v,
        Err(r) => return dialect.refuse(r),
    };
    let query = v["query"].as_str().unwrap_or_default().to_string();
    let documents = strings(&v, "documents").and_then(|d| {
        if query.is_empty() {
            Err(super::bad("\"query\" must be a non-empty string"))
        } else {
            Ok(d)
        }
    });
    let items = documents
        .as_ref()
        .map(|d| d.iter().cloned().map(Item::Text).collect())
        .map_err(|r| super::bad(r.message.clone()));
    let done = match serve(&s, arrived, items, Some(&query)).await {
        Ok((_, done)) => done,
        Err(e) => return dialect.failed(e),
    };
    let documents = documents.unwrap_or_default();
    let top_n = v["top_n"].as_u64().map(|n| n as usize);
    // Jina's documents default to returned, Cohere's and Infinity's not; vLLM always sends them.
    let with_text = v["return_documents"].as_bool().unwrap_or(false);
    let results: Vec<Value> = ranked(&s, &query, &documents, top_n)
        .into_iter()
        .map(|(i, score)| match dialect {
            // Infinity keeps the key, null unless return_documents.
            Dialect::Infinity => {
                let document = with_text.then(|| documents[i].clone());
                json!({ "relevance_score": score, "index": i, "document": document })
            }
            Dialect::Vllm => json!({ "index": i, "document": { "text": documents[i] }, "relevance_score": score }),
            _ if with_text => {
                json!({ "index": i, "relevance_score": score, "document": { "text": documents[i] } })
            }
            _ => json!({ "index": i, "relevance_score": score }),
        })
        .collect();
    let model = v["model"]
        .as_str()
        .map_or_else(|| s.cfg.served_model.clone(), str::to_owned);
    let usage = json!({ "prompt_tokens": done.tokens, "total_tokens": done.tokens });
    let reply = match dialect {
        Dialect::Infinity => json!({
            "object": "rerank", "results": results, "model": model, "usage": usage,
            "id": "infinity-encbench", "created": now_s(),
        }),
        Dialect::Vllm => {
            json!({ "id": "rerank-encbench", "model": model, "usage": usage, "results": results })
        }
        _ => json!({
            "id": "encbench-reference", "results": results,
            "meta": { "billed_units": { "search_units": 1 } },
        }),
    };
    axum::Json(reply).into_response()
}

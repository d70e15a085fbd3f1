//! A replay file's records: which format it is in (from its first record), each line's time
//! and body, and a line that is neither refused by its number.

use super::{Body, Captured, MAX_REPLAY_FILE_BYTES, ReplayError, TraceFormat};
use crate::input::{Input, read_capped_text};
use base64::Engine as _;
use serde_json::Value;
use std::path::Path;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// A replay file read.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    pub format: TraceFormat,
    /// In file order.
    pub records: Vec<Record>,
    /// Every time is a whole second, as in AWS's documented Data Capture examples: a
    /// second's requests are then spread within it (see `plan`).
    pub whole_seconds: bool,
}

impl Trace {
    /// The line of the first `{"tokens", "batch_size"}` record, which needs the
    /// `--input-tokens` text builder.
    pub fn first_tokens_line(&self) -> Option<usize> {
        (self.records.iter())
            .find(|r| matches!(r.body, Body::Tokens { .. }))
            .map(|r| r.line)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Nanoseconds since an origin of the file's (the Unix epoch for Data Capture).
    pub at_ns: i128,
    /// 1-based, for messages.
    pub line: usize,
    pub body: Body,
}

/// Reads `path`, at most `MAX_REPLAY_FILE_BYTES` of it.
pub fn load(path: &Path) -> Result<Trace, ReplayError> {
    let shown = path.display().to_string();
    let text = read_capped_text(path, MAX_REPLAY_FILE_BYTES).map_err(|reason| {
        ReplayError::Unreadable {
            path: shown.clone(),
            reason,
        }
    })?;
    parse(&text, &shown)
}

/// One JSON object a line; blank lines are skipped.
pub fn parse(source: &str, path: &str) -> Result<Trace, ReplayError> {
    let mut format = None;
    let mut records = Vec::new();
    for (i, line) in source.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let bad = |reason: String| ReplayError::BadLine {
            path: path.into(),
            line: i + 1,
            reason,
        };
        let v: Value = serde_json::from_str(line).map_err(|e| bad(format!("not JSON ({e})")))?;
        let this = if v.get("captureData").is_some() {
            TraceFormat::DataCapture
        } else if v.get("timestamp_ms").is_some() {
            TraceFormat::Trace
        } else {
            return Err(bad(
                "no timestamp: neither a trace record ({\"timestamp_ms\", \"texts\"}) nor a Data Capture record (captureData, eventMetadata.inferenceTime)".into(),
            ));
        };
        match format {
            None => format = Some(this),
            Some(f) if f != this => {
                return Err(bad(format!(
                    "a {} record in a {} file: one format a file",
                    this.name(),
                    f.name()
                )));
            }
            Some(_) => {}
        }
        let (at_ns, body) = match this {
            TraceFormat::Trace => trace_record(&v),
            TraceFormat::DataCapture => capture_record(&v),
        }
        .map_err(bad)?;
        records.push(Record {
            at_ns,
            line: i + 1,
            body,
        });
    }
    let Some(format) = format else {
        return Err(ReplayError::Empty { path: path.into() });
    };
    let whole_seconds = format == TraceFormat::DataCapture
        && records
            .iter()
            .all(|r| r.at_ns.rem_euclid(1_000_000_000) == 0);
    Ok(Trace {
        format,
        records,
        whole_seconds,
    })
}

/// `{"timestamp_ms", "texts": [...]}` or `{"timestamp_ms", "tokens", "batch_size"}`.
fn trace_record(v: &Value) -> Result<(i128, Body), String> {
    let ms = v["timestamp_ms"]
        .as_f64()
        .filter(|m| m.is_finite() && *m >= 0.0)
        .ok_or("timestamp_ms must be a number of milliseconds, 0 or more")?;
    let at_ns = (ms * 1e6).round() as i128;
    if let Some(texts) = v.get("texts") {
        let items = texts
            .as_array()
            .filter(|a| !a.is_empty())
            .ok_or("texts must be a non-empty array of strings or {premise, hypothesis} pairs")?;
        let inputs = items
            .iter()
            .map(|t| serde_json::from_value::<Input>(t.clone()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| "texts must hold strings or {premise, hypothesis} pairs")?;
        return Ok((at_ns, Body::Texts(inputs)));
    }
    let count = |key: &str| {
        v[key]
            .as_u64()
            .filter(|&n| n > 0)
            .and_then(|n| usize::try_from(n).ok())
    };
    match (v.get("tokens"), count("tokens")) {
        (None, _) => Err("no texts: a trace record needs \"texts\" or \"tokens\"".into()),
        (Some(_), None) => Err("tokens must be a whole number above 0".into()),
        (Some(_), Some(tokens)) => {
            let batch_size = match v.get("batch_size") {
                None => 1,
                Some(_) => {
                    count("batch_size").ok_or("batch_size must be a whole number above 0")?
                }
            };
            Ok((at_ns, Body::Tokens { tokens, batch_size }))
        }
    }
}

/// A record as SageMaker Data Capture writes it: the request in `captureData.endpointInput`,
/// its time in `eventMetadata.inferenceTime` (RFC 3339).
fn capture_record(v: &Value) -> Result<(i128, Body), String> {
    let input = &v["captureData"]["endpointInput"];
    if !input.is_object() {
        return Err(
            "captureData has no endpointInput (a capture of outputs alone cannot be replayed)"
                .into(),
        );
    }
    let text = |key: &str| {
        input[key]
            .as_str()
            .ok_or(format!("captureData.endpointInput.{key} must be a string"))
    };
    let data = text("data")?;
    let content_type = text("observedContentType")?;
    if content_type.is_empty() || !content_type.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return Err("observedContentType must be a printable ASCII media type".into());
    }
    let bytes: Vec<u8> = match text("encoding")? {
        "JSON" | "CSV" => data.as_bytes().to_vec(),
        "BASE64" => base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| format!("data is not BASE64 ({e})"))?,
        other => {
            return Err(format!(
                "encoding {:?} is none of JSON, CSV, BASE64",
                crate::scrub::controls(other)
            ));
        }
    };
    let when = v["eventMetadata"]["inferenceTime"]
        .as_str()
        .ok_or("no timestamp: eventMetadata.inferenceTime is missing")?;
    let at = OffsetDateTime::parse(when, &Rfc3339).map_err(|e| {
        format!(
            "eventMetadata.inferenceTime {:?} is not RFC 3339 ({e})",
            crate::scrub::controls(when)
        )
    })?;
    let inputs = if content_type.contains("json") {
        inputs_in(&bytes)
    } else {
        1
    };
    Ok((
        at.unix_timestamp_nanos(),
        Body::Captured(Captured {
            data: bytes.into(),
            content_type: content_type.to_string(),
            inputs,
        }),
    ))
}

/// Inputs a JSON body carries: the length of its batch array (Hugging Face's `inputs`,
/// TF Serving's `instances`, the JSON APIs' `input` or `texts`), KServe v2's first
/// dimension; 1 where it says none.
fn inputs_in(body: &[u8]) -> usize {
    let Ok(v) = serde_json::from_slice::<Value>(body) else {
        return 1;
    };
    for key in ["inputs", "instances", "texts", "input"] {
        if let Some(items) = v[key].as_array() {
            let first_dim = items.first().and_then(|t| t["shape"][0].as_u64());
            return match first_dim {
                Some(b) => usize::try_from(b).unwrap_or(1).max(1),
                None => items.len().max(1),
            };
        }
    }
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture(data: &str, encoding: &str, when: &str) -> String {
        serde_json::json!({
            "captureData": {"endpointInput": {
                "observedContentType": "application/json", "mode": "INPUT",
                "data": data, "encoding": encoding}},
            "eventMetadata": {"eventId": "e", "inferenceTime": when},
            "eventVersion": "0"
        })
        .to_string()
    }

    #[test]
    fn data_capture_bodies_are_decoded_and_times_read() {
        let b64 = base64::engine::general_purpose::STANDARD.encode(br#"{"inputs": ["a", "b"]}"#);
        let file = [
            capture(r#"{"inputs": "one"}"#, "JSON", "2026-12-01T10:00:00Z"),
            capture(&b64, "BASE64", "2026-12-01T10:00:01Z"),
        ]
        .join("\n");
        let t = parse(&file, "cap.jsonl").unwrap();
        assert_eq!(
            (t.format, t.whole_seconds),
            (TraceFormat::DataCapture, true)
        );
        assert_eq!(t.records[1].at_ns - t.records[0].at_ns, 1_000_000_000);
        let Body::Captured(c) = &t.records[1].body else {
            panic!("captured")
        };
        assert_eq!(&*c.data, br#"{"inputs": ["a", "b"]}"#);
        assert_eq!((c.inputs, c.content_type.as_str()), (2, "application/json"));
        assert_eq!(t.records[0].body.inputs(), 1);
        // Milliseconds in a time: the times are used as they are.
        let ms = capture("{}", "JSON", "2026-12-01T10:00:00.250Z");
        assert!(!parse(&ms, "c").unwrap().whole_seconds);
    }

    #[test]
    fn trace_records_hold_texts_or_lengths() {
        let t = parse(
            "{\"timestamp_ms\": 5, \"texts\": [\"a\", {\"premise\": \"p\", \"hypothesis\": \"h\"}]}\n\n{\"timestamp_ms\": 7.5, \"tokens\": 128, \"batch_size\": 4}\n",
            "t",
        )
        .unwrap();
        assert_eq!((t.format, t.whole_seconds), (TraceFormat::Trace, false));
        assert_eq!(t.records[0].body.inputs(), 2);
        assert_eq!(t.records[1].at_ns, 7_500_000);
        assert_eq!(t.records[1].line, 3);
        assert_eq!(
            t.records[1].body,
            Body::Tokens {
                tokens: 128,
                batch_size: 4
            }
        );
    }

    #[test]
    fn a_bad_line_is_named_by_its_number() {
        let said = |src: &str| parse(src, "f.jsonl").unwrap_err().to_string();
        let ok = "{\"timestamp_ms\": 1, \"texts\": [\"a\"]}";
        assert!(
            said(&format!("{ok}\n{{\"timestamp_ms\": 2, \"texts\": [\"b\""))
                .starts_with("f.jsonl line 2: not JSON")
        );
        assert!(said(&format!("{ok}\n{{\"texts\": [\"b\"]}}")).contains("line 2: no timestamp"));
        assert!(
            said(&format!(
                "{ok}\n{{\"timestamp_ms\": -1, \"texts\": [\"b\"]}}"
            ))
            .contains("line 2: timestamp_ms")
        );
        assert!(
            said(&format!("{ok}\n{{\"timestamp_ms\": 3, \"texts\": []}}"))
                .contains("line 2: texts")
        );
        assert!(
            said(&format!(
                "{ok}\n{}",
                capture("x", "JSON", "2026-12-01T10:00:00Z")
            ))
            .contains("line 2: a data-capture record in a trace file")
        );
        assert!(
            said(&capture("x", "GZIP", "2026-12-01T10:00:00Z"))
                .contains("line 1: encoding \"GZIP\"")
        );
        assert!(said(&capture("%%", "BASE64", "2026-12-01T10:00:00Z")).contains("not BASE64"));
        assert!(said(&capture("x", "JSON", "yesterday")).contains("not RFC 3339"));
        assert_eq!(said("\n\n"), "f.jsonl: no records (one JSON object a line)");
    }
}

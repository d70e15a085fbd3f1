//! Input lengths through the real binary: `--input-tokens` draws a length mix that is sent
//! exactly (the reference endpoint counts the same tokens), and every phase reports the
//! lengths it sent, whatever the inputs came from.

use crate::common::{
    Serve, counters, f, run, run_env, run_export, schema_violations, stdout, tmp_path,
};
use encbench_core::input::shipped_samples;
use encbench_core::lengths::{BatchTokens, InputTokens, LengthMix, LengthRecorder};
use encbench_wire::exact_text::DRAWN_INPUTS;
use encbench_wire::tokenize::TokenCounter;
use serde_json::Value;
use std::sync::Arc;

/// What a phase that sent each of `counts` once, `batch` a request, must report.
fn expected(counts: &[u32], batch: usize) -> InputTokens {
    let shared: Arc<[u32]> = counts.into();
    let mut r = LengthRecorder::default();
    for k in 0..counts.len() / batch {
        r.record(&BatchTokens {
            counts: shared.clone(),
            first: k * batch,
            len: batch,
        });
    }
    r.summary().unwrap()
}

fn reported(p: &Value) -> InputTokens {
    serde_json::from_value(p["input_tokens"].clone()).expect("phases[].input_tokens")
}

#[test]
fn a_drawn_mix_is_sent_to_the_token_and_every_phase_reports_its_lengths() {
    let s = Serve::one_ms(&[]);
    let mix = LengthMix::parse("128:32").unwrap();
    // The run's seed draws the lengths: 1024 pairs, 256 requests of 4 send each once.
    let drawn: Vec<u32> = mix
        .draw(7, DRAWN_INPUTS, 5, 512)
        .into_iter()
        .map(|n| n as u32)
        .collect();
    let want = expected(&drawn, 4);
    let common = [
        "--input-tokens",
        "128:32",
        "--seed",
        "7",
        "-n",
        "256",
        "--batch-size",
        "4",
        "--warmup",
        "0",
        "--no-accuracy",
    ];
    // The server tokenizes (hf): its own count of what arrived is the client's.
    let (out, e) = run_export(&s.url, &common);
    let p = &e["phases"][0];
    assert_eq!(p["ok"], 256, "{p}");
    let got = reported(p);
    assert_eq!(got, want, "the phase's lengths are the drawn ones");
    assert!((got.mean / 128.0 - 1.0).abs() < 0.02, "{got:?}");
    assert!((got.mean_per_request / (4.0 * got.mean) - 1.0).abs() < 1e-3);
    assert!(
        (96..=160).contains(&got.p50) && got.p90 > got.p50,
        "{got:?}"
    );
    let seen = &counters(&s)["input_tokens"];
    assert_eq!(seen["inputs"], 1024, "{seen}");
    assert_eq!(
        seen["tokens"],
        drawn.iter().map(|&n| u64::from(n)).sum::<u64>(),
        "the endpoint counted the same tokens"
    );
    assert!((f(&seen["tokens"]) / 1024.0 - got.mean).abs() < 0.05);
    assert_eq!(e["config"]["input_tokens"]["stddev"], 32.0);
    assert_eq!(schema_violations(&e), Vec::<String>::new());
    let text = stdout(&out);
    assert!(
        text.contains("input lengths drawn from normal 128 ± 32 tokens (--input-tokens)"),
        "{text}"
    );
    assert!(text.contains("Input lengths ("), "{text}");
    assert!(
        text.contains(&format!(
            "sent p50 {} p90 {} max {}",
            want.p50, want.p90, want.max
        )),
        "{text}"
    );

    // A second host with its own seed: `report --merge` adds the two mixes exactly.
    let mut other = common.to_vec();
    other[3] = "8";
    let (_, b) = run_export(&s.url, &other);
    let dir = tmp_path("lengths-merge");
    std::fs::create_dir_all(&dir).unwrap();
    let (pa, pb, pm) = (dir.join("a.json"), dir.join("b.json"), dir.join("m.json"));
    std::fs::write(&pa, e.to_string()).unwrap();
    std::fs::write(&pb, b.to_string()).unwrap();
    let paths = [&pa, &pb, &pm].map(|p| p.to_str().unwrap().to_string());
    let out = run(&["report", "--merge", &paths[0], &paths[1], "-o", &paths[2]]);
    assert!(out.status.success(), "{}", out.stderr);
    let m: Value = serde_json::from_str(&std::fs::read_to_string(&pm).unwrap()).unwrap();
    let both = InputTokens::pooled([&Some(want.clone()), &Some(reported(&b["phases"][0]))]);
    assert_eq!(Some(reported(&m["phases"][0])), both);
    assert_eq!(schema_violations(&m), Vec::<String>::new());

    // The client tokenizes (triton's token ids), twice over (--repeat): the same inputs,
    // pooled.
    let mut triton = common.to_vec();
    triton.extend(["--engine", "triton", "--model", "encoder", "--repeat", "2"]);
    let (_, e) = run_export(&s.url, &triton);
    let p = &e["phases"][0];
    let pooled = reported(p);
    assert_eq!(
        (
            pooled.p50,
            pooled.p90,
            pooled.max,
            pooled.mean,
            pooled.mean_per_request
        ),
        (
            want.p50,
            want.p90,
            want.max,
            want.mean,
            want.mean_per_request
        ),
        "{p}"
    );
    for r in p["repetitions"].as_array().unwrap() {
        assert_eq!(reported(r), want);
    }

    // The shipped samples, at their natural length: each sent twice, one a request.
    let (_, e) = run_export(&s.url, &["-n", "8", "--warmup", "0", "--no-accuracy"]);
    let tok = TokenCounter::shipped();
    let natural: Vec<u32> = shipped_samples()
        .iter()
        .map(|x| tok.count(&x.input()) as u32)
        .collect();
    assert_eq!(reported(&e["phases"][0]), {
        let twice: Vec<u32> = natural.iter().chain(&natural).copied().collect();
        expected(&twice, 1)
    });
}

#[test]
fn bad_length_mixes_are_refused_naming_the_flag() {
    // Read by clap: its line first, then where to look.
    for bad in ["0", "abc", "128:-1", "64:8:cauchy"] {
        let out = run_env(
            &[
                "--headless",
                "--url",
                "http://127.0.0.1:9",
                "--input-tokens",
                bad,
            ],
            &[],
        );
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", out.stderr);
        let first = out.stderr.lines().next().unwrap_or_default().to_string();
        assert!(
            first.contains("--input-tokens") && first.contains("must be MEAN[:STDDEV]"),
            "{bad}: {}",
            out.stderr
        );
    }
    for (with, other) in [
        (&["--texts", "t.jsonl"][..], "--texts"),
        (&["--pad-to-max"][..], "--pad-to-max"),
    ] {
        let mut args = vec![
            "--headless",
            "--url",
            "http://127.0.0.1:9",
            "--input-tokens",
            "128",
        ];
        args.extend_from_slice(with);
        let out = run_env(&args, &[]);
        assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
        assert!(
            out.stderr.contains("--input-tokens") && out.stderr.contains(other),
            "{}",
            out.stderr
        );
    }
    // Against the other flags' values: one line, before anything is sent.
    for (args, says) in [
        (
            &["--input-tokens", "200", "--max-len", "128"][..],
            "--input-tokens: a mean of 200 tokens is beyond --max-len 128",
        ),
        (
            &["--input-tokens", "3"][..],
            "--input-tokens: a mean of 3 tokens is below the shortest pair, 5 tokens",
        ),
    ] {
        let mut all = vec!["--headless", "--url", "http://127.0.0.1:9"];
        all.extend_from_slice(args);
        let out = run_env(&all, &[]);
        let err = out.stderr.trim_end();
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(says), "{err}");
    }
}

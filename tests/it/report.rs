//! `report`: fixed exports rendered as Markdown, CSV and terminal tables match golden files
//! (set `UPDATE_GOLDEN=1` to rewrite them after an intended change, then read the diff), and
//! `--merge` adds exports of one workload exactly.

use crate::common::*;
use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::Deserializer;
use serde_json::Value;
use std::path::Path;

fn check_golden(args: &[&str], golden: &str) {
    let out = run(args);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    let got = stdout(&out);
    let path = Path::new("tests/golden").join(golden);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &got).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        got == want,
        "{args:?} differs from {}:\n--- got\n{got}\n--- want\n{want}",
        path.display()
    );
}

#[test]
fn markdown_of_a_run_and_a_comparison_match_golden_files() {
    check_golden(
        &["report", "tests/fixtures/run.json", "--format", "markdown"],
        "run.md",
    );
    check_golden(
        &[
            "report",
            "tests/fixtures/compare.json",
            "--format",
            "markdown",
        ],
        "compare.md",
    );
}

#[test]
fn csv_of_several_exports_matches_its_golden_file() {
    check_golden(
        &[
            "report",
            "tests/fixtures/run.json",
            "tests/fixtures/compare.json",
            "--format",
            "csv",
        ],
        "phases.csv",
    );
}

#[test]
fn terminal_tables_match_golden_files() {
    check_golden(&["report", "tests/fixtures/run.json"], "run.txt");
    check_golden(&["report", "tests/fixtures/compare.json"], "compare.txt");
}

#[test]
fn csv_is_one_row_per_phase_with_the_export_figures() {
    let out = run(&["report", "tests/fixtures/compare.json", "--format", "csv"]);
    let e: Value =
        serde_json::from_str(&std::fs::read_to_string("tests/fixtures/compare.json").unwrap())
            .unwrap();
    let text = stdout(&out);
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), e["phases"].as_array().unwrap().len());
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    for (row, p) in rows.iter().zip(e["phases"].as_array().unwrap()) {
        assert_eq!(row[col("target")], p["target"].as_str().unwrap());
        assert_eq!(
            row[col("p99_ms")].parse::<f64>().unwrap(),
            f(&p["latency_ms"]["p99"])
        );
        assert_eq!(row[col("n")], p["n"].to_string());
    }
}

fn decode(b64: &Value) -> Histogram<u64> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64.as_str().unwrap())
        .unwrap();
    Deserializer::new()
        .deserialize(&mut std::io::Cursor::new(bytes))
        .unwrap()
}

/// Every recorded value (at its bucket's highest equivalent value), sorted: the samples as
/// the histograms hold them, combined without `Histogram::add`.
fn samples(hists: &[Histogram<u64>]) -> Vec<u64> {
    let mut all = vec![];
    for h in hists {
        for v in h.iter_recorded() {
            all.extend(std::iter::repeat_n(
                h.highest_equivalent(v.value_iterated_to()),
                v.count_at_value() as usize,
            ));
        }
    }
    all.sort_unstable();
    all
}

fn nearest_rank_ms(sorted: &[u64], q: f64) -> f64 {
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1] as f64 / 1000.0
}

#[test]
fn merging_two_hosts_adds_counts_and_gives_the_combined_percentiles() {
    let s = Serve::start(&[
        "--base-ms",
        "2",
        "--per-token-ms",
        "0.01",
        "--workers",
        "2",
        "--error-rate",
        "0.05",
    ]);
    let workload = [
        "--sweep-batch",
        "--batch-sizes",
        "1",
        "4",
        "--concurrency",
        "2",
        "-n",
        "150",
        "--no-accuracy",
    ];
    // Two hosts: the same workload, each with its own seed.
    let mut a_args = workload.to_vec();
    a_args.extend(["--seed", "1"]);
    let mut b_args = workload.to_vec();
    b_args.extend(["--seed", "2"]);
    let (_, a) = run_export(&s.url, &a_args);
    let (_, b) = run_export(&s.url, &b_args);
    let dir = tmp_path("merge");
    std::fs::create_dir_all(&dir).unwrap();
    let (pa, pb, pm) = (
        dir.join("host-0.json"),
        dir.join("host-1.json"),
        dir.join("merged.json"),
    );
    std::fs::write(&pa, a.to_string()).unwrap();
    std::fs::write(&pb, b.to_string()).unwrap();
    let out = run(&[
        "report",
        "--merge",
        pa.to_str().unwrap(),
        pb.to_str().unwrap(),
        "-o",
        pm.to_str().unwrap(),
        "--format",
        "csv",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let m: Value = serde_json::from_str(&std::fs::read_to_string(&pm).unwrap()).unwrap();
    assert!(
        schema_violations(&m).is_empty(),
        "{:?}",
        schema_violations(&m)
    );
    assert_eq!(m["config"]["merged_from"].as_array().unwrap().len(), 2);
    // The CSV on stdout is the merged export's.
    assert_eq!(stdout(&out).lines().count(), 1 + 2);

    for i in 0..2 {
        let (pa, pb, pm) = (&a["phases"][i], &b["phases"][i], &m["phases"][i]);
        for k in ["n", "ok", "sent"] {
            assert_eq!(
                pm[k].as_u64().unwrap(),
                pa[k].as_u64().unwrap() + pb[k].as_u64().unwrap(),
                "{k}"
            );
        }
        let errs = |p: &Value| {
            p["errors"]
                .as_object()
                .unwrap()
                .values()
                .map(|v| v.as_u64().unwrap())
                .sum::<u64>()
        };
        assert_eq!(errs(pm), errs(pa) + errs(pb));
        assert_eq!(
            pm["n"].as_u64().unwrap(),
            pm["ok"].as_u64().unwrap() + errs(pm)
        );
        let rps = f(&pa["req_per_s"]) + f(&pb["req_per_s"]);
        assert!(
            (f(&pm["req_per_s"]) - rps).abs() < 0.01,
            "rates add: {} vs {rps}",
            pm["req_per_s"]
        );

        for (field, summary) in [
            ("histogram_hdr_b64", "latency_ms"),
            ("service_hdr_b64", "service_ms"),
            ("dispatch_delay_hdr_b64", "dispatch_delay_ms"),
        ] {
            let all = samples(&[decode(&pa[field]), decode(&pb[field])]);
            assert_eq!(decode(&pm[field]).len(), all.len() as u64, "{field}");
            for (q, key) in [(0.5, "p50"), (0.9, "p90"), (0.99, "p99"), (1.0, "max")] {
                let want = nearest_rank_ms(&all, q);
                let got = f(&pm[summary][key]);
                // HdrHistogram keeps 3 significant digits.
                assert!(
                    (got - want).abs() <= want * 2e-3 + 0.002,
                    "{summary}.{key}: {got} vs {want}"
                );
            }
        }
        assert_eq!(
            decode(&pm["histogram_hdr_b64"]).len(),
            pm["ok"].as_u64().unwrap()
        );
        // The merged intervals are the combined samples' order statistics at the binomial
        // ranks of all of them, not either host's.
        let all = samples(&[
            decode(&pa["histogram_hdr_b64"]),
            decode(&pb["histogram_hdr_b64"]),
        ]);
        for (q, key) in [(0.5, "p50"), (0.99, "p99")] {
            let (lo, hi) = encbench_core::interval::ranks(all.len() as u64, q);
            let at = |rank: u64| all[rank as usize - 1] as f64 / 1000.0;
            let ci = &pm["latency_ms"]["ci95"][key];
            let near = |got: f64, want: f64| (got - want).abs() <= want * 2e-3 + 0.002;
            assert!(near(f(&ci[0]), at(lo)), "{key} {ci} vs rank {lo}");
            match hi {
                Some(u) => assert!(near(f(&ci[1]), at(u)), "{key} {ci} vs rank {u}"),
                None => assert!(ci[1].is_null(), "{key} {ci}"),
            }
        }
    }
}

#[test]
fn merging_different_workloads_is_refused() {
    let s = Serve::one_ms(&[]);
    let (_, a) = run_export(&s.url, &["-n", "5", "--no-accuracy"]);
    let (_, b) = run_export(&s.url, &["-n", "5", "--no-accuracy", "--batch-size", "8"]);
    let dir = tmp_path("refuse");
    std::fs::create_dir_all(&dir).unwrap();
    let (pa, pb) = (dir.join("a.json"), dir.join("b.json"));
    std::fs::write(&pa, a.to_string()).unwrap();
    std::fs::write(&pb, b.to_string()).unwrap();
    let merged = dir.join("m.json");
    for (files, want) in [
        (
            vec![&pa, &pb],
            "b.json is not the workload of a.json: config.batch_size is 8 here but 1 there",
        ),
        (
            vec![&pa, &Path::new("tests/fixtures/compare.json").to_path_buf()],
            "compare.json is a compare export",
        ),
    ] {
        let mut args = vec!["report", "--merge"];
        args.extend(files.iter().map(|p| p.to_str().unwrap()));
        args.extend(["-o", merged.to_str().unwrap()]);
        let out = run(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(want), "want {want:?} in {err}");
        assert!(!merged.exists(), "nothing is written for a refused merge");
    }
    let out = run(&["report", "--merge", pa.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "--merge needs -o");
    // A merge of one export adds nothing up: refused, nothing written.
    let out = run(&[
        "report",
        "--merge",
        pa.to_str().unwrap(),
        "-o",
        merged.to_str().unwrap(),
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--merge: one export given"), "{err}");
    assert!(!merged.exists());
    let out = run(&["report", dir.join("missing.json").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("missing.json: cannot read"),
        "{}",
        stderr(&out)
    );
}

/// What a run prints when it ends is `report` of its export, to the byte: one renderer.
#[test]
fn a_run_and_a_comparison_print_what_report_prints_of_their_exports() {
    let s = Serve::fixed(2, 2, &["--error-rate", "0.1", "--seed", "3"]);
    let path = tmp_path("run.json");
    let load = args()
        .opt("--url", &s.url)
        .arg("--headless")
        .arg("--sweep-batch")
        .opt("--batch-sizes", 1)
        .arg(4)
        .arg("--sweep-concurrency")
        .opt("--concurrency-levels", 1)
        .arg(2)
        .n(30)
        .opt("--instance-type", "ml.g5.xlarge")
        .opt("-o", path.display());
    let ran = run(&load.strs());
    assert!(ran.status.success(), "{}", ran.stderr);
    let reported = run(&["report", path.to_str().unwrap()]);
    assert_eq!(ran.stdout, reported.stdout);
    for part in [
        "Batch (",
        "advice: ",
        "Concurrency (batch 1)",
        "Latency breakdown",
    ] {
        assert!(ran.stdout.contains(part), "{part} in\n{}", ran.stdout);
    }
    // Each percentile says how sure it is: 30 requests bound the median on both sides and
    // p99 only from below.
    let rows: Vec<&str> = ran
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("Batch ("))
        .skip(2)
        .take(2)
        .collect();
    for row in &rows {
        assert!(
            row.contains(" [") && row.contains("] ") && row.contains("≥ "),
            "{row}"
        );
    }
    // In CSV the figure and its interval's ends are numbers of their own, an open end empty.
    let csv = stdout(&run(&["report", path.to_str().unwrap(), "--format", "csv"]));
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    for line in lines {
        let cells: Vec<&str> = line.split(',').collect();
        let x = |name: &str| cells[col(name)].parse::<f64>().unwrap();
        assert!(
            x("p50_lo_ms") <= x("p50_ms") && x("p50_ms") <= x("p50_hi_ms"),
            "{line}"
        );
        assert!(x("p99_lo_ms") <= x("p99_ms"), "{line}");
        assert_eq!(cells[col("p99_hi_ms")], "", "{line}");
    }

    let other = Serve::fixed(4, 1, &[]);
    let path = tmp_path("compare.json");
    let ran = run(&[
        "compare",
        "--headless",
        "--target",
        &format!("name=a,url={}", s.url),
        "--target",
        &format!("name=b,url={}", other.url),
        "-n",
        "10",
        "-o",
        path.to_str().unwrap(),
    ]);
    assert!(ran.status.success(), "{}", ran.stderr);
    let reported = run(&["report", path.to_str().unwrap()]);
    assert_eq!(ran.stdout, reported.stdout);
    assert!(ran.stdout.contains("2 targets compared"), "{}", ran.stdout);
}

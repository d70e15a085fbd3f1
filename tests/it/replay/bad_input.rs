//! Bad replay input: one line naming what is wrong, exit 2, before anything is sent.

use crate::common::{run, stderr, tmp_path};

#[test]
fn bad_replay_input_is_one_line_and_exit_2() {
    let dir = tmp_path("replay-bad");
    std::fs::create_dir_all(&dir).unwrap();
    let file = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let ok = file("ok.jsonl", "{\"timestamp_ms\": 0, \"texts\": [\"a\"]}\n");
    let missing = dir.join("nowhere.jsonl").to_str().unwrap().to_string();
    let cut = file(
        "cut.jsonl",
        "{\"timestamp_ms\": 0, \"texts\": [\"a\"]}\n{\"timestamp_ms\": 5, \"texts\": [\"b\"\n",
    );
    let untimed = file("untimed.jsonl", "{\"texts\": [\"a\"]}\n");
    let target = ["--headless", "--url", "http://127.0.0.1:9", "--no-accuracy"];
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (
            vec!["--replay", &missing],
            vec!["--replay: cannot read", "nowhere.jsonl"],
        ),
        (vec!["--replay", &cut], vec!["cut.jsonl line 2: not JSON"]),
        (
            vec!["--replay", &untimed],
            vec!["untimed.jsonl line 1: no timestamp"],
        ),
        (
            vec!["--replay", &ok, "--replay-speed", "0"],
            vec!["--replay-speed"],
        ),
        (
            vec!["--replay", &ok, "--replay-speed=-2"],
            vec!["--replay-speed"],
        ),
        (
            vec!["--replay", &ok, "--replay-scale", "0"],
            vec!["--replay-scale"],
        ),
        (vec!["--replay-speed", "2"], vec!["--replay"]),
        (
            vec!["--replay", &ok, "--request-rate", "50"],
            vec!["--replay", "--request-rate"],
        ),
        (
            vec!["--replay", &ok, "--sweep-batch"],
            vec!["--replay", "--sweep-batch"],
        ),
        (
            vec!["--replay", &ok, "--find-capacity", "--slo", "p99=100ms"],
            vec!["--replay", "--find-capacity"],
        ),
    ];
    for (args, want) in cases {
        let all: Vec<&str> = target.iter().copied().chain(args.iter().copied()).collect();
        let out = run(&all);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        for w in want {
            assert!(err.contains(w), "{args:?}: want {w:?} in {err}");
        }
        // Ours are one line; clap's reports of flags that conflict add its usage line.
        let clap = err.contains("cannot be used with") || err.contains("required");
        assert!(clap || err.trim().lines().count() == 1, "{args:?}: {err}");
    }
}

//! The server's own words when it refuses: the first reply body of each error kind, kept in
//! one line and scrubbed, in the progress lines, the tables, the export and the live screen's
//! errors panel; the accuracy check says its requests failed rather than blaming the labels;
//! a run in which nothing succeeded exits 4.

use crate::common::hostile::{Hostile, Reply};
use crate::common::tmux::Tmux;
use crate::common::{BIN, run_env, schema_violations, tmp_path};

const KEY: &str = "sk-words-test-4711";
const REASON: &str = "Input should be a valid string";

/// The 422 of `FastAPI`, indented as it sends it (Infinity's answer to token ids where it takes
/// strings), echoing the API key as a careless server might.
fn refusing() -> Hostile {
    Hostile::start(|r| {
        if r.method == "GET" {
            return Reply::json(200, r#"{"status": "ok"}"#);
        }
        let body = format!(
            "{{\n  \"detail\": [\n    {{\n      \"type\": \"string_type\",\n      \"msg\": \"{REASON}\",\n      \"key\": \"{}\"\n    }}\n  ]\n}}",
            r.header("x-api-key")
        );
        Reply::json(422, &body)
    })
}

#[test]
fn a_refusal_is_shown_in_the_servers_words() {
    let s = refusing();
    let export = tmp_path("words.json");
    let header = format!("X-Api-Key: {KEY}");
    let out = run_env(
        &[
            "--headless",
            "--url",
            &s.url,
            "-n",
            "5",
            "--header",
            &header,
            "-o",
            export.to_str().unwrap(),
        ],
        &[],
    );
    let written = std::fs::read_to_string(&export).expect("the export is written");
    let all = format!("{}{}{written}", out.stdout, out.stderr);
    assert_eq!(out.status.code(), Some(4), "{}", out.stderr);
    assert!(!all.contains(KEY), "{all}");
    let note = out
        .stderr
        .lines()
        .find(|l| l.starts_with("note: HTTP 422: the server said {"))
        .unwrap_or_else(|| panic!("no note of the server's words: {}", out.stderr));
    assert!(note.contains(REASON) && note.contains("***"), "{note}");
    assert!(
        out.stdout.contains("HTTP 422: the server said {") && out.stdout.contains(REASON),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("no verdict was read"), "{}", out.stdout);
    assert!(!out.stdout.contains("label mapping"), "{}", out.stdout);
    assert!(
        out.stderr
            .trim_end()
            .ends_with("error: all 5 measured requests failed (HTTP 422 5): the figures above describe failures, not the model"),
        "{}",
        out.stderr
    );

    let e: serde_json::Value = serde_json::from_str(&written).unwrap();
    assert_eq!(schema_violations(&e), Vec::<String>::new());
    let words = e["phases"][0]["error_bodies"]["HTTP 422"].as_str().unwrap();
    assert!(words.starts_with("{\"detail\":[{"), "compact JSON: {words}");
    assert!(words.contains(REASON) && !words.contains('\n'), "{words}");
    let sample = &e["accuracy"]["samples"][0];
    assert!(
        sample["error"].as_str().unwrap().contains(REASON),
        "{sample}"
    );

    // The live screen: the words under the kind in the errors panel.
    let command = format!(
        "{BIN} --url {} --request-rate 20 -n 400 --no-accuracy --header '{header}'",
        s.url
    );
    let tmux = Tmux::start("words", 120, 40, &command);
    let screen = tmux.wait_for("the server's words", 20, |s| s.contains("valid string"));
    assert!(screen.contains("HTTP 422"), "{screen}");
    assert!(!screen.contains(KEY), "{screen}");
    tmux.keys("q");
    assert_eq!(tmux.wait_exit(20), 4);
}

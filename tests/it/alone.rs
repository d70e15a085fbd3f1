//! `alone.txt` lists the tests that hold the machine alone, `paired.txt` those that hold it
//! beside one other, for scripts/test.sh to run them one or two at a time after the rest. A
//! test that takes `timed()` or `paired()` but is missing from its list would run beside the
//! others and wait for the machine to empty; a name on a list that no longer takes its turn
//! would run apart for nothing. So the lists are held to the code: this binary's tests, and
//! the layers' (`crates/*/tests/*.rs`, each file a binary of its own, whose tests the
//! harness names by their function alone).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `capacity::mm4…` for a function in tests/it/capacity.rs, `replay::stalls::…` for one in
/// tests/it/replay/stalls.rs: the test's name as the harness prints it.
fn module_path(root: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(root).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts.join("::")
}

/// Each function whose body calls `turn` (`timed()`, `paired()`), by the name of the last
/// `fn` before the call.
fn calling(root: &Path, turn: &str) -> BTreeSet<String> {
    let mut files = Vec::new();
    sources(root, &mut files);
    let mut found = BTreeSet::new();
    for file in files {
        // The helpers define it; this file looks for it.
        if file.starts_with(root.join("common")) || file.ends_with("alone.rs") {
            continue;
        }
        let module = module_path(root, &file);
        found.extend(
            calls_in(&file, turn)
                .into_iter()
                .map(|f| format!("{module}::{f}")),
        );
    }
    found
}

/// The same in the layers' own test binaries: each file straight under `crates/*/tests`
/// (their helpers are in folders there).
fn calling_in_layers(crates: &Path, turn: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for krate in std::fs::read_dir(crates).unwrap() {
        let Ok(tests) = std::fs::read_dir(krate.unwrap().path().join("tests")) else {
            continue;
        };
        for file in tests {
            let file = file.unwrap().path();
            if file.extension().is_some_and(|e| e == "rs") {
                found.extend(calls_in(&file, turn));
            }
        }
    }
    found
}

/// The functions of `file` whose bodies call `turn`.
fn calls_in(file: &Path, turn: &str) -> Vec<String> {
    let mut found = Vec::new();
    let text = std::fs::read_to_string(file).unwrap();
    let mut function = None;
    for line in text.lines() {
        let code = line.trim_start();
        if let Some(rest) = ["fn ", "async fn ", "pub fn ", "pub(crate) fn "]
            .iter()
            .find_map(|p| code.strip_prefix(p))
        {
            function = rest.split('(').next().map(str::to_string);
        }
        if code.contains(turn) && !code.starts_with("//") {
            found.push(function.clone().expect("a turn taken inside a function"));
        }
    }
    found
}

#[test]
fn the_lists_are_the_code() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it");
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates");
    for (list, turn) in [("alone.txt", "timed()"), ("paired.txt", "paired()")] {
        let listed: BTreeSet<String> = std::fs::read_to_string(root.join(list))
            .unwrap()
            .lines()
            .map(|l| l.split('#').next().unwrap().trim().to_string())
            .filter(|l| !l.is_empty())
            .collect();
        let mut code = calling(&root, turn);
        code.extend(calling_in_layers(&crates, turn));
        let unlisted: Vec<_> = code.difference(&listed).collect();
        let stale: Vec<_> = listed.difference(&code).collect();
        assert!(
            unlisted.is_empty() && stale.is_empty(),
            "tests/it/{list}: add {unlisted:?}, remove {stale:?}"
        );
    }
}

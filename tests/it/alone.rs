//! `alone.txt` lists the tests that hold the machine alone, for scripts/test.sh to run them
//! one at a time after the rest. A test that takes `timed()` but is missing from the list
//! would run beside the others and wait for the machine to empty; a name on the list that no
//! longer takes it would run alone for nothing. So the list is held to the code: this
//! binary's tests, and the layers' (`crates/*/tests/*.rs`, each file a binary of its own,
//! whose tests the harness names by their function alone).

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

/// Each function whose body calls `timed()`, by the name of the last `fn` before the call.
fn calling_timed(root: &Path) -> BTreeSet<String> {
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
            timed_in(&file)
                .into_iter()
                .map(|f| format!("{module}::{f}")),
        );
    }
    found
}

/// The same in the layers' own test binaries: each file straight under `crates/*/tests`
/// (their helpers are in folders there).
fn calling_timed_in_layers(crates: &Path) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for krate in std::fs::read_dir(crates).unwrap() {
        let Ok(tests) = std::fs::read_dir(krate.unwrap().path().join("tests")) else {
            continue;
        };
        for file in tests {
            let file = file.unwrap().path();
            if file.extension().is_some_and(|e| e == "rs") {
                found.extend(timed_in(&file));
            }
        }
    }
    found
}

/// The functions of `file` whose bodies call `timed()`.
fn timed_in(file: &Path) -> Vec<String> {
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
        if code.contains("timed()") && !code.starts_with("//") {
            found.push(function.clone().expect("timed() inside a function"));
        }
    }
    found
}

#[test]
fn the_list_is_the_code() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it");
    let listed: BTreeSet<String> = std::fs::read_to_string(root.join("alone.txt"))
        .unwrap()
        .lines()
        .map(|l| l.split('#').next().unwrap().trim().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    let mut code = calling_timed(&root);
    code.extend(calling_timed_in_layers(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("crates"),
    ));
    let unlisted: Vec<_> = code.difference(&listed).collect();
    let stale: Vec<_> = listed.difference(&code).collect();
    assert!(
        unlisted.is_empty() && stale.is_empty(),
        "tests/it/alone.txt: add {unlisted:?}, remove {stale:?}"
    );
}

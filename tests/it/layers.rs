//! The layer order written in `src/lib.rs` is the one the code keeps: no module names a
//! module of a layer above its own (test modules aside: they may build from anything).

use std::collections::HashMap;
use std::path::Path;

/// Module name → layer, 0 at the bottom, from the diagram in `src/lib.rs`.
fn layers() -> HashMap<String, usize> {
    let lib = std::fs::read_to_string("src/lib.rs").unwrap();
    let diagram = lib
        .split("```text")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("src/lib.rs has its layer diagram in a ```text block");
    let rows: Vec<Vec<String>> = diagram
        .lines()
        .map(|l| l.trim_start_matches("//!").trim_start())
        .filter(|l| !l.is_empty())
        // "tui, headless     front-ends: …": the names, then two spaces or more.
        .map(|l| {
            let names = l.split("  ").next().unwrap_or("");
            names
                .split(',')
                .map(|n| n.trim().to_string())
                .filter(|n| !n.is_empty())
                .collect()
        })
        .collect();
    let bottom_up = rows.iter().rev().enumerate();
    bottom_up
        .flat_map(|(i, names)| names.iter().map(move |n| (n.clone(), i)))
        .collect()
}

/// The top-level modules a source file names through `crate::`, outside its test module.
fn names_used(source: &str) -> Vec<String> {
    let code = source.split("#[cfg(test)]").next().unwrap_or(source);
    let mut used = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // `use crate::{a::{X, Y}, b};`: the first name of each item at depth 0.
            let (mut depth, mut item_start) = (0, true);
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && (c.is_alphanumeric() || c == '_') => {
                        let name: String = group[i..]
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        used.push(name);
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            used.push(name);
        }
    }
    used
}

fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_module_uses_one_above_it() {
    let rank = layers();
    assert!(
        rank.len() > 20,
        "the diagram names too few modules: {rank:?}"
    );
    let mut files = Vec::new();
    sources(Path::new("src"), &mut files);
    let mut upward = Vec::new();
    for file in &files {
        let rel = file.strip_prefix("src").unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs");
        if matches!(module, "lib" | "main" | "fixtures") {
            continue;
        }
        let own = *rank
            .get(module)
            .unwrap_or_else(|| panic!("module {module} is missing from the diagram in src/lib.rs"));
        let source = std::fs::read_to_string(file).unwrap();
        for used in names_used(&source) {
            if rank.get(&used).is_some_and(|&r| r > own) {
                upward.push(format!("{} uses {used}", file.display()));
            }
        }
    }
    upward.sort();
    upward.dedup();
    assert!(
        upward.is_empty(),
        "modules that use a layer above their own: {upward:#?}"
    );
}

#[test]
fn the_check_sees_an_upward_use() {
    let rank = layers();
    let used = names_used(
        "use crate::{engine::{Snapshot, RunState}, fmt};\nlet a = crate::tui::state::App::new();",
    );
    assert_eq!(used, ["engine", "fmt", "tui"]);
    assert!(rank["tui"] > rank["engine"] && rank["engine"] > rank["fmt"]);
}

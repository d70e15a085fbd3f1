//! Every command README.md and docs/*.md show parses with the real command line. In each
//! fenced code block, a line (its `\`-continuations joined, a leading `$ ` prompt and
//! `VAR=value` assignments stripped) that runs `encbench-tui` is split into words as a shell
//! would (quotes honoured, a `# comment` dropped, cut at a pipe, a redirection or `&&`) and
//! parsed by `cli::parse`, as `main` parses its arguments; help printed (exit 0) counts as
//! parsed. Blocks fenced as `text` hold output (a screen, tables), not commands; other
//! programs' lines (`cargo`, `scripts/…`, `bash`, `docker`) are not checked.

use encbench::cli;
use std::path::{Path, PathBuf};

/// The fewest commands each page shows today, so that the test cannot pass by finding none.
/// A page not named here passes with any number.
const AT_LEAST: &[(&str, usize)] = &[
    ("README.md", 5),
    ("docs/command-line.md", 7),
    ("docs/compare-and-reports.md", 5),
    ("docs/live-screen.md", 1),
    ("docs/measurement.md", 2),
    ("docs/reference-endpoint.md", 2),
    ("docs/sagemaker.md", 6),
    ("docs/sharding.md", 3),
    ("docs/slo-and-capacity.md", 3),
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every page under docs/, relative to the repository, sorted.
fn pages() -> Vec<String> {
    let mut pages = vec!["README.md".to_string()];
    let docs = root().join("docs");
    let mut under: Vec<PathBuf> = std::fs::read_dir(&docs)
        .unwrap_or_else(|e| panic!("{}: {e}", docs.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    under.sort();
    pages.extend(
        under
            .iter()
            .map(|p| format!("docs/{}", p.file_name().unwrap().to_string_lossy())),
    );
    pages
}

/// The lines of `text`'s fenced code blocks, outside `text` blocks, with `\`-continuations
/// joined: (line number where it starts, the joined line).
fn code_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fence: Option<String> = None;
    let mut pending: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        if let Some(info) = line.trim_start().strip_prefix("```") {
            fence = match fence {
                None => Some(info.trim().to_string()),
                Some(_) => None,
            };
            if let Some(p) = pending.take() {
                out.push(p);
            }
            continue;
        }
        if fence.as_deref().is_none_or(|info| info == "text") {
            continue;
        }
        let (start, mut joined) = pending.take().unwrap_or((i + 1, String::new()));
        if let Some(head) = line.strip_suffix('\\') {
            joined.push_str(head);
            joined.push(' ');
            pending = Some((start, joined));
        } else {
            joined.push_str(line);
            out.push((start, joined));
        }
    }
    out
}

/// The argv of an `encbench-tui` command line, or None for anything else.
fn argv(line: &str) -> Option<Vec<String>> {
    let words = shlex::split(line)?;
    let mut words = words.into_iter().peekable();
    if words.peek().is_some_and(|w| w == "$") {
        words.next();
    }
    while words.peek().is_some_and(|w| is_assignment(w)) {
        words.next();
    }
    if words.peek().is_none_or(|w| w != "encbench-tui") {
        return None;
    }
    Some(words.take_while(|w| !ends_the_command(w)).collect())
}

/// `NAME=value`, as a shell reads an environment assignment before a command.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// A pipe, a list operator or a redirection: what follows is not this command's argument.
fn ends_the_command(word: &str) -> bool {
    matches!(word, "|" | "||" | "&&" | ";" | "&")
        || word
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .starts_with(['>', '<'])
}

#[test]
fn every_command_the_readme_and_the_docs_show_parses() {
    let mut failures = Vec::new();
    let mut counts = Vec::new();
    for page in pages() {
        let path = root().join(&page);
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut parsed = 0;
        for (line_no, line) in code_lines(&text) {
            let Some(argv) = argv(&line) else {
                assert!(
                    shlex::split(&line).is_some() || !line.contains("encbench-tui"),
                    "{page}:{line_no}: unbalanced quotes: {line}"
                );
                continue;
            };
            match cli::parse(&argv) {
                Ok(_) | Err((0, _)) => parsed += 1,
                Err((code, e)) => failures.push(format!(
                    "{page}:{line_no}: {}\n  exit {code}: {}",
                    line.trim(),
                    e.trim_end()
                )),
            }
        }
        counts.push((page, parsed));
    }
    assert!(
        failures.is_empty(),
        "commands shown in the docs that the command line refuses:\n{}",
        failures.join("\n")
    );
    for (page, least) in AT_LEAST {
        let found = counts.iter().find(|(p, _)| p == page).map(|&(_, n)| n);
        assert!(
            found.is_some_and(|n| n >= *least),
            "{page}: {found:?} commands found, at least {least} expected (a page moved, or the \
             commands are no longer in fenced code blocks?)"
        );
    }
}

#[test]
fn the_command_finder_reads_lines_as_a_shell_would() {
    let text = "\
```sh
$ FOO=1 BAR='a b' encbench-tui --url http://h:1 --fail-on 'errors>1%' \\
    -n 5   # a comment
encbench-tui report --merge a.json -o - | jq .
cargo run --release -- --demo
```

```text
encbench-tui 0.1.0 — output, not a command
```
";
    let commands: Vec<(usize, Vec<String>)> = code_lines(text)
        .into_iter()
        .filter_map(|(n, l)| argv(&l).map(|a| (n, a)))
        .collect();
    let words = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
    assert_eq!(
        commands,
        [
            (
                2,
                words("encbench-tui --url http://h:1 --fail-on errors>1% -n 5")
            ),
            (4, words("encbench-tui report --merge a.json -o -")),
        ]
    );
}

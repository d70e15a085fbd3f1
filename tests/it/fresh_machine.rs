//! README's test command on a machine that lacks a tool the tests need: one line saying what
//! to install, exit code 2, and no test run (so no test fails for a missing tool).

use crate::common::tmp_path;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A folder of links to everything on this PATH but `without`: the machine as it would be
/// had that tool never been installed.
fn path_without(without: &str) -> PathBuf {
    let dir = tmp_path(&format!("path-without-{without}"));
    std::fs::create_dir_all(&dir).unwrap();
    let path = std::env::var_os("PATH").unwrap_or_default();
    for folder in std::env::split_paths(&path) {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let link = dir.join(&name);
            if name != without && !link.exists() {
                let _ = std::os::unix::fs::symlink(e.path(), link);
            }
        }
    }
    dir
}

#[test]
fn the_test_command_names_a_missing_tool_in_one_line_and_runs_no_test() {
    let _turn = crate::common::load();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = path_without("tmux");
    assert!(!path.join("tmux").exists() && path.join("bash").exists());
    let out = Command::new(path.join("bash"))
        .arg(repo.join("scripts/test.sh"))
        // A machine where nothing may be installed: the instruction, not apt-get.
        .arg("--no-apt")
        .env("PATH", &path)
        .current_dir(repo)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].contains("missing tmux") && lines[0].contains("apt-get install tmux"),
        "{stderr}"
    );
    assert!(stdout.is_empty(), "nothing was built or run: {stdout}");
}

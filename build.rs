//! `--version` names the commit it was built from: `0.1.0 (248067c 2026-12-01)`. Without git
//! or a repository (a crate tarball) it is the bare version.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    // A checkout owned by another user (a CI container's) is still read: git would refuse
    // it as "dubious ownership" and the version lose its commit.
    let out = Command::new("git")
        .args(["-c", "safe.directory=*"])
        .args(args)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // A new commit moves HEAD or the branch it names (a loose ref, or packed-refs after a
    // gc); in a worktree those files live outside ./.git, so git says where.
    let head_ref = git(&["symbolic-ref", "-q", "HEAD"]);
    let watched = ["HEAD", "packed-refs"]
        .into_iter()
        .map(String::from)
        .chain(head_ref);
    for name in watched {
        if let Some(path) = git(&["rev-parse", "--git-path", &name])
            && std::path::Path::new(&path).exists()
        {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    let commit =
        git(&["log", "-1", "--format=%h %cs"]).map_or_else(String::new, |c| format!(" ({c})"));
    println!("cargo:rustc-env=ENCBENCH_BUILD_COMMIT={commit}");
}

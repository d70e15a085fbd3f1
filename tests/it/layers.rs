//! The layers are the workspace's crates, and the compiler refuses a use that no
//! `Cargo.toml` allows. What it cannot refuse is a new dependency that makes no cycle: the
//! report crate taking the engine, say, or the engine the reference endpoint. The layer
//! table at the top of `Cargo.toml` numbers the layers; this test holds every crate's
//! dependencies, as `cargo metadata` reads them, to it (each only on crates of lower
//! layers), every member to a row of it, and the diagram in `src/lib.rs` to its order.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

fn read(path: impl AsRef<Path>) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Crate → layer, from the table's rows (`#   2      encbench-load    …`): a comment, which
/// no tool reads but this test.
fn layer_table(root_manifest: &str) -> BTreeMap<String, u32> {
    root_manifest
        .lines()
        .take_while(|l| l.starts_with('#'))
        .filter_map(|l| {
            let mut words = l.trim_start_matches('#').split_whitespace();
            let layer = words.next()?.parse().ok()?;
            let name = words.next().filter(|n| n.starts_with("encbench-"))?;
            Some((name.to_string(), layer))
        })
        .collect()
}

/// Every workspace member and the workspace crates it depends on (normal, build and dev
/// dependencies alike), from `cargo metadata`.
fn packages() -> Vec<(String, Vec<String>)> {
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata's JSON");
    meta["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|p| {
            let uses = p["dependencies"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|d| d["path"].is_string())
                .filter_map(|d| d["name"].as_str().map(String::from))
                .collect();
            (p["name"].as_str().expect("a name").to_string(), uses)
        })
        .collect()
}

/// Every dependency of `name` is on a lower layer: the broken rules, one line each.
fn breaches(name: &str, uses: &[String], layers: &BTreeMap<String, u32>) -> Vec<String> {
    let Some(&own) = layers.get(name) else {
        return vec![format!("{name} has no row in the layer table")];
    };
    uses.iter()
        .filter(|u| layers.get(*u).is_none_or(|&l| l >= own))
        .map(|u| format!("{name} (layer {own}) uses {u} (layer {:?})", layers.get(u)))
        .collect()
}

#[test]
fn each_crate_uses_only_lower_layers_and_the_diagrams_agree() {
    let layers = layer_table(&read("Cargo.toml"));
    assert!(layers.len() >= 6, "a row per crate: {layers:?}");
    let packages = packages();
    assert_eq!(packages.len(), layers.len(), "{layers:?} {packages:?}");
    let broken: Vec<String> = packages
        .iter()
        .flat_map(|(name, uses)| breaches(name, uses, &layers))
        .collect();
    assert!(broken.is_empty(), "{broken:#?}");

    // src/lib.rs draws the same layers top down.
    let lib = read("src/lib.rs");
    let diagram = lib.split("```text").nth(1).expect("src/lib.rs's diagram");
    let mut drawn: Vec<(usize, u32)> = layers
        .iter()
        .filter_map(|(name, &l)| diagram.find(&format!("{name} ")).map(|at| (at, l)))
        .collect();
    drawn.sort_unstable();
    assert_eq!(drawn.len() + 1, layers.len(), "every member in src/lib.rs");
    assert!(
        drawn.windows(2).all(|w| w[0].1 >= w[1].1),
        "src/lib.rs lists the layers top down: {drawn:?}"
    );
}

#[test]
fn a_use_of_a_layer_beside_or_above_is_a_breach() {
    let layers = layer_table(
        "#   2      encbench-load    x\n#   1      encbench-report  y\n#   1      encbench-wire    z\n#   0      encbench-core    w\n[workspace]",
    );
    let uses = ["encbench-core", "encbench-load", "encbench-wire"].map(String::from);
    assert_eq!(breaches("encbench-report", &uses, &layers).len(), 2);
    assert!(breaches("encbench-report", &uses[..1], &layers).is_empty());
    assert_eq!(breaches("encbench-nothing", &uses, &layers).len(), 1);
}

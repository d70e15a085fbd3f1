//! The layers are the workspace's crates, and the compiler refuses a use that no
//! `Cargo.toml` allows. What it cannot refuse is a new dependency that makes no cycle: the
//! report crate taking the engine, say, or the engine the reference endpoint. The layer
//! table at the top of `Cargo.toml` numbers the layers; this test holds every crate's
//! dependencies to it (each only on crates of lower layers), every member to a row of it,
//! and the diagram in `src/lib.rs` to its order.

use std::collections::BTreeMap;
use std::path::Path;

fn read(path: impl AsRef<Path>) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Crate → layer, from the table's rows (`#   2      encbench-load    …`).
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

/// `[workspace] members`: the crates' folders.
fn members(root_manifest: &str) -> Vec<String> {
    let list = root_manifest
        .split("members = [")
        .nth(1)
        .and_then(|r| r.split(']').next())
        .expect("[workspace] members");
    list.split('"')
        .skip(1)
        .step_by(2)
        .map(String::from)
        .collect()
}

/// The package's name and the workspace crates it depends on, dev-dependencies included.
fn package(manifest: &str) -> (String, Vec<String>) {
    let name = manifest
        .split("[package]")
        .nth(1)
        .and_then(|p| p.lines().find_map(|l| l.strip_prefix("name = ")))
        .expect("the package's name")
        .trim_matches('"')
        .to_string();
    let mut uses = Vec::new();
    let mut in_deps = false;
    for line in manifest.lines() {
        if line.starts_with('[') {
            in_deps = line.ends_with("dependencies]") && !line.starts_with("[workspace");
            continue;
        }
        let key = line.split(['.', ' ', '=']).next().unwrap_or("");
        if in_deps && key.starts_with("encbench-") {
            uses.push(key.to_string());
        }
    }
    (name, uses)
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
    let root = read("Cargo.toml");
    let layers = layer_table(&root);
    assert!(layers.len() >= 6, "a row per crate: {layers:?}");
    let mut packages = vec![package(&root)];
    for dir in members(&root) {
        packages.push(package(&read(Path::new(&dir).join("Cargo.toml"))));
    }
    assert_eq!(packages.len(), layers.len(), "{layers:?}");
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
    let (name, uses) = package(
        "[package]\nname = \"encbench-report\"\n\n[dependencies]\nencbench-core.workspace = true\nencbench-load = { path = \"../load\" }\n\n[dev-dependencies]\nencbench-wire.workspace = true\n",
    );
    let layers = layer_table(
        "#   2      encbench-load    x\n#   1      encbench-report  y\n#   1      encbench-wire    z\n#   0      encbench-core    w\n[workspace]",
    );
    assert_eq!(uses, ["encbench-core", "encbench-load", "encbench-wire"]);
    assert_eq!(breaches(&name, &uses, &layers).len(), 2);
    assert!(breaches(&name, &uses[..1], &layers).is_empty());
}

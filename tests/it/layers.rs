//! The layers are the workspace's crates, and the compiler refuses a use that no
//! `Cargo.toml` allows. What it cannot refuse is a new dependency that makes no cycle: the
//! report crate taking the engine, say, or the engine the reference endpoint. The layer
//! table at the top of `Cargo.toml` numbers the layers; this test holds every crate's
//! dependencies, as `cargo metadata` reads them, to it, every member to a row of it, and the
//! diagram in `src/lib.rs` to its order. The rule:
//!
//! - a dependency, normal or build, is on a crate of a lower layer;
//! - a dev-dependency (what a crate's own tests, in its `tests/`, use) is on a crate of a
//!   lower layer too, or is `encbench-serve`, the reference endpoint a test loads, taken by
//!   a crate of its layer or above. Not below it: `encbench-serve` is built on `wire` and
//!   `core`, and their tests would build a second copy of them whose types do not match.

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

/// A workspace crate a member depends on, and whether only its tests do.
#[derive(Debug)]
struct Use {
    name: String,
    dev: bool,
}

/// Every workspace member and the workspace crates it depends on, from `cargo metadata`.
fn packages() -> Vec<(String, Vec<Use>)> {
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
                .filter_map(|d| {
                    Some(Use {
                        name: d["name"].as_str()?.to_string(),
                        dev: d["kind"] == "dev",
                    })
                })
                .collect();
            (p["name"].as_str().expect("a name").to_string(), uses)
        })
        .collect()
}

/// The reference endpoint, which the tests of the crates beside and above it may load.
const REFERENCE_ENDPOINT: &str = "encbench-serve";

/// Every dependency of `name` keeps the rule above: the broken ones, one line each.
fn breaches(name: &str, uses: &[Use], layers: &BTreeMap<String, u32>) -> Vec<String> {
    let Some(&own) = layers.get(name) else {
        return vec![format!("{name} has no row in the layer table")];
    };
    let allowed = |u: &Use| {
        let lower = layers.get(&u.name).is_some_and(|&l| l < own);
        let endpoint = u.dev
            && u.name == REFERENCE_ENDPOINT
            && name != REFERENCE_ENDPOINT
            && layers.get(REFERENCE_ENDPOINT).is_some_and(|&l| l <= own);
        lower || endpoint
    };
    uses.iter()
        .filter(|u| !allowed(u))
        .map(|u| {
            let kind = if u.dev { "dev-" } else { "" };
            format!(
                "{name} (layer {own}) {kind}uses {} (layer {:?})",
                u.name,
                layers.get(&u.name)
            )
        })
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
        "#   2      encbench-load    x\n#   2      encbench-serve   v\n#   1      encbench-report  y\n#   1      encbench-wire    z\n#   0      encbench-core    w\n[workspace]",
    );
    let normal = |n: &str| Use {
        name: n.into(),
        dev: false,
    };
    let dev = |n: &str| Use {
        name: n.into(),
        dev: true,
    };
    let uses = ["encbench-core", "encbench-load", "encbench-wire"].map(normal);
    assert_eq!(breaches("encbench-report", &uses, &layers).len(), 2);
    assert!(breaches("encbench-report", &uses[..1], &layers).is_empty());
    assert_eq!(breaches("encbench-nothing", &uses, &layers).len(), 1);

    // A test's dependencies: lower layers, and the reference endpoint from its layer up.
    assert!(
        breaches(
            "encbench-load",
            &[dev("encbench-serve"), dev("encbench-core")],
            &layers
        )
        .is_empty()
    );
    assert_eq!(
        breaches("encbench-load", &[normal("encbench-serve")], &layers).len(),
        1
    );
    assert_eq!(
        breaches("encbench-wire", &[dev("encbench-serve")], &layers).len(),
        1
    );
    assert_eq!(
        breaches("encbench-serve", &[dev("encbench-load")], &layers).len(),
        1
    );
    assert_eq!(
        breaches("encbench-report", &[dev("encbench-wire")], &layers).len(),
        1
    );
}

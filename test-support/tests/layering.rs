//! The workspace's crates depend only downwards (ARCHITECTURE.md, "Layers"):
//!
//! ```text
//! hlo  <-  interp, generators  <-  engine  <-  judge  <-  findings  <-  tools  <-  hlo-diff
//! ```
//!
//! Read from `cargo metadata`: every normal or build dependency of a workspace crate on another
//! workspace crate must sit on a lower layer, `interp` and `generators` depend on `hlo` alone,
//! and `test-support` is only ever a dev-dependency. A crate missing from the table fails the
//! test, so a new crate gets a layer when it is added.

use std::collections::BTreeMap;
use std::process::Command;

/// Each workspace crate's layer.
const LAYERS: &[(&str, u32)] = &[
    ("hlo", 0),
    ("interp", 1),
    ("generators", 1),
    ("engine", 2),
    ("judge", 3),
    ("findings", 4),
    ("tools", 5),
    ("hlo-diff", 6),
    ("test-support", 0),
];

/// `(crate, workspace dependency, kind)` for every workspace crate.
fn workspace_edges() -> (Vec<String>, Vec<(String, String, String)>) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(test_support::repo_root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata is JSON");
    let packages = meta["packages"].as_array().expect("packages");
    let names: Vec<String> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    let mut edges = Vec::new();
    for p in packages {
        let from = p["name"].as_str().unwrap();
        for d in p["dependencies"].as_array().unwrap() {
            let to = d["name"].as_str().unwrap();
            if names.iter().any(|n| n == to) {
                let kind = d["kind"].as_str().unwrap_or("normal").to_string();
                edges.push((from.to_string(), to.to_string(), kind));
            }
        }
    }
    (names, edges)
}

#[test]
fn workspace_crates_depend_only_on_lower_layers() {
    let layer: BTreeMap<&str, u32> = LAYERS.iter().copied().collect();
    let (names, edges) = workspace_edges();
    for n in &names {
        assert!(
            layer.contains_key(n.as_str()),
            "crate `{n}` has no layer: add it to LAYERS and to ARCHITECTURE.md"
        );
    }
    let mut violations = Vec::new();
    for (from, to, kind) in &edges {
        if kind == "dev" {
            continue;
        }
        if to == "test-support" {
            violations.push(format!(
                "{from} -> test-support as a {kind} dependency (dev only)"
            ));
            continue;
        }
        if layer[to.as_str()] >= layer[from.as_str()] {
            violations.push(format!(
                "{from} (layer {}) -> {to} (layer {})",
                layer[from.as_str()],
                layer[to.as_str()]
            ));
        }
        if matches!(from.as_str(), "interp" | "generators") && to != "hlo" {
            violations.push(format!("{from} -> {to}: {from} depends on hlo alone"));
        }
    }
    assert!(
        violations.is_empty(),
        "upward or sideways dependencies:\n  {}",
        violations.join("\n  ")
    );
}

#[test]
fn the_layer_table_knows_every_harness_crate() {
    // The check above is only as good as its table: the harness's five crates are all in it.
    let (names, _) = workspace_edges();
    for c in ["engine", "judge", "findings", "tools", "hlo-diff"] {
        assert!(names.iter().any(|n| n == c), "workspace has no crate `{c}`");
    }
}

//! `hlo-diff merge`: the two shards of one seed space, merged, equal the unsharded campaign:
//! the same finding directories with the same occurrences and counts, the same buckets with the
//! same counts. Needs real XLA (`test_support::need_xla`); the divergence is injected
//! (`xla_cpu_enable_fast_min_max=true`), so every XLA produces findings.

#[path = "../../tools/tests/common/mod.rs"]
mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

fn hlo_diff(args: &[&str]) -> (i32, String) {
    let st = Command::new(env!("CARGO_BIN_EXE_hlo-diff"))
        .args(args)
        .output()
        .unwrap();
    let code = st.status.code().expect("exited");
    assert!(
        code <= 1,
        "{args:?}: {}",
        String::from_utf8_lossy(&st.stderr)
    );
    (code, String::from_utf8_lossy(&st.stdout).into_owned())
}

fn findings(dir: &Path) -> BTreeMap<String, (u64, BTreeSet<String>)> {
    findings::store::Store::open(dir)
        .unwrap()
        .findings()
        .unwrap()
        .into_iter()
        .map(|(d, f)| {
            (
                d.file_name().unwrap().to_string_lossy().into_owned(),
                (f.count, f.occurrences),
            )
        })
        .collect()
}

fn buckets(dir: &Path) -> BTreeMap<String, (u64, usize)> {
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    r["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["id"].as_str().unwrap().to_string(),
                (
                    b["count"].as_u64().unwrap(),
                    b["findings"].as_array().unwrap().len(),
                ),
            )
        })
        .collect()
}

#[test]
fn two_merged_shards_equal_the_unsharded_campaign() {
    if !test_support::need_xla() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let gen_path = common::write_fast_min_max_gen_config(tmp.path());
    let fuzz = |out: &Path, iterations: &str, shard: &str| {
        hlo_diff(&[
            "fuzz",
            "--iterations",
            iterations,
            "--shard",
            shard,
            "--pack",
            "2",
            "--jobs",
            "2",
            "--seed",
            "11",
            "--quiet",
            "--no-voter",
            "--xla-option",
            "xla_cpu_enable_fast_min_max=true",
            // A fixed configuration: these findings must be certain.
            "--no-swarm",
            "--gen-config",
            gen_path.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
    };
    let whole = tmp.path().join("whole");
    let (s0, s1, merged) = (
        tmp.path().join("s0"),
        tmp.path().join("s1"),
        tmp.path().join("merged"),
    );
    fuzz(&whole, "8", "0/1");
    fuzz(&s0, "4", "0/2");
    fuzz(&s1, "4", "1/2");
    let (code, stdout) = hlo_diff(&[
        "merge",
        "--json",
        s0.to_str().unwrap(),
        s1.to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(!findings(&whole).is_empty(), "fast min/max gives findings");
    assert_eq!(
        findings(&merged),
        findings(&whole),
        "same findings, occurrences, counts"
    );
    assert_eq!(buckets(&merged), buckets(&whole), "same buckets and counts");
    assert_eq!(v["totals"]["modules"], 8, "{v}");
    let new = v["new_buckets"].as_u64().unwrap();
    assert_eq!(
        code,
        i32::from(new > 0),
        "exit 1 exactly when a bucket is NEW: {v}"
    );
    // Merging again changes nothing: occurrences are united, never doubled.
    hlo_diff(&[
        "merge",
        s0.to_str().unwrap(),
        s1.to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    assert_eq!(findings(&merged), findings(&whole));
}

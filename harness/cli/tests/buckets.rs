//! Findings become bugs: a campaign minimizes and buckets its findings, exits 1 only for a NEW
//! bucket, and 0 when the known-bug registry knows every bucket. The divergence is injected
//! (`xla_cpu_enable_fast_min_max=true` makes maximum/minimum drop NaNs), so every XLA produces
//! it. Needs real XLA (`test_support::need_xla`).

#[path = "../../tools/tests/common/mod.rs"]
mod common;

use std::path::Path;
use std::process::Command;

fn campaign(out: &Path, gen: &Path, extra: &[&str]) -> (i32, serde_json::Value) {
    let st = Command::new(env!("CARGO_BIN_EXE_hlo-diff"))
        .args([
            "fuzz",
            "--iterations",
            "6",
            "--pack",
            "2",
            "--jobs",
            "2",
            "--seed",
            "7",
            "--quiet",
            "--no-voter",
            "--xla-option",
            "xla_cpu_enable_fast_min_max=true",
            // A fixed configuration: these findings must be certain.
            "--no-swarm",
            "--gen-config",
        ])
        .arg(gen)
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    let code = st.status.code().expect("exited");
    assert!(code <= 1, "{}", String::from_utf8_lossy(&st.stderr));
    let report = serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    (code, report)
}

#[test]
fn a_new_bucket_fails_the_campaign_and_a_known_one_does_not() {
    if !test_support::need_xla() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let gen_path = common::write_fast_min_max_gen_config(tmp.path());

    // With the project's registry, nothing claims fast min/max: NEW, exit 1.
    let (code, r) = campaign(&tmp.path().join("a"), &gen_path, &[]);
    assert_eq!(code, 1, "{r}");
    let buckets = r["buckets"].as_array().unwrap();
    let new: Vec<&serde_json::Value> = buckets.iter().filter(|b| b["new"] == true).collect();
    assert!(!new.is_empty(), "{r}");
    let max_min = |b: &serde_json::Value| {
        b["signature"]["ops"].as_array().unwrap().iter().any(|o| {
            o.as_str()
                .is_some_and(|o| o.starts_with("maximum:") || o.starts_with("minimum:"))
        })
    };
    assert!(
        new.iter().any(|b| max_min(b)),
        "a NEW bucket's repro is a min or max: {r}"
    );
    for b in &new {
        assert!(b["repro"].is_string(), "every NEW bucket has a repro: {b}");
        assert!(b["instructions"].as_u64().unwrap() <= 6, "minimized: {b}");
    }
    assert_eq!(r["unbucketed"].as_array().unwrap().len(), 0, "{r}");

    // A registry that knows max/min with NaNs dropped: every bucket known, exit 0 ...
    let reg = tmp.path().join("registry");
    std::fs::create_dir_all(&reg).unwrap();
    for (i, op) in ["maximum", "minimum", "clamp"].iter().enumerate() {
        std::fs::write(
            reg.join(format!("{i}.toml")),
            format!(
                "id = \"fast-{op}\"\ntitle = \"{op} drops NaNs under fast min/max\"\nstatus = \"intended\"\ntext = \"a cited text\"\n\n[match]\nkind = \"mismatch\"\nops_include = [\"{op}\"]\n"
            ),
        )
        .unwrap();
    }
    let (code, r) = campaign(
        &tmp.path().join("b"),
        &gen_path,
        &["--registry", reg.to_str().unwrap()],
    );
    let new = r["new_buckets"].as_u64().unwrap();
    assert_eq!((code, new), (0, 0), "{r}");
    assert!(r["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .all(|b| b["known"]["id"].is_string()));
    // ... unless any finding is to fail it.
    let (code, _) = campaign(
        &tmp.path().join("b"),
        &gen_path,
        &["--registry", reg.to_str().unwrap(), "--fail-on-any-finding"],
    );
    assert_eq!(code, 1);
}

#[test]
fn a_bucket_seen_by_an_earlier_night_is_not_new() {
    if !test_support::need_xla() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let gen_path = common::write_fast_min_max_gen_config(tmp.path());
    let history = tmp.path().join("history.json");
    let h = ["--history", history.to_str().unwrap()];
    let (code, r) = campaign(&tmp.path().join("night1"), &gen_path, &h);
    assert_eq!(code, 1, "{r}");
    let ids: Vec<String> = r["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["new"] == true)
        .map(|b| b["id"].as_str().unwrap().to_string())
        .collect();
    assert!(!ids.is_empty());
    // The same seeds tomorrow: the same bucket ids, now "seen before".
    let (code, r) = campaign(&tmp.path().join("night2"), &gen_path, &h);
    assert_eq!(code, 0, "{r}");
    for b in r["buckets"].as_array().unwrap() {
        if ids.iter().any(|i| b["id"] == i.as_str()) {
            assert!(b["seen_before"].is_string(), "{b}");
        }
    }
}

/// `hlo-diff bucket --json` of a regression module (with its `.lit` inputs when there are).
fn bucket_regression(name: &str) -> serde_json::Value {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora/regressions");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hlo-diff"));
    cmd.args(["bucket", "--json"])
        .arg(dir.join(format!("{name}.hlo")));
    let lit = dir.join(format!("{name}.lit"));
    if lit.is_file() {
        cmd.arg("--inputs").arg(lit);
    }
    let out = cmd.output().unwrap();
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
}

/// A compile crash is bucketed with where XLA was when it died: the stage and the pass the
/// per-pass dump shows it in (`compile: algsimp`), and the failed CHECK's place in XLA's
/// sources; the registry still knows the bucket (its regression module, jaxlib 0.10.2).
#[test]
fn a_compile_crash_is_bucketed_with_its_pass_and_failed_check() {
    if !test_support::need_xla() {
        return;
    }
    let v = bucket_regression("xla_bucket_algsimp_conv_window_check");
    assert_eq!(v["signature"]["kind"], "crash", "{v:#}");
    assert_eq!(v["signature"]["culprit"], "compile: algsimp", "{v:#}");
    let bisect = v["bisect"].as_str().unwrap_or("");
    assert!(
        bisect.contains("XLA failed inside pass `algsimp`")
            && bisect.contains("XLA's failed check is at algebraic_simplifier.cc:"),
        "{bisect}"
    );
    assert_eq!(v["known"]["id"], "xla-algsimp-conv-window-check", "{v:#}");
}

/// A compile crash before any HLO pass (no before_optimizations written: the StableHLO -> HLO
/// conversion inside the compile) is bucketed as such, with its failed check
/// (openxla/xla#47343, reproduced on jaxlib 0.10.2 and minimized to one parameter).
#[test]
fn a_crash_in_the_conversion_to_hlo_is_bucketed_as_that_stage() {
    if !test_support::need_xla() {
        return;
    }
    let v = bucket_regression("xla_bug_sdy_sharding_unknown_mesh_abort");
    assert_eq!(v["signature"]["kind"], "crash", "{v:#}");
    assert_eq!(
        v["signature"]["culprit"], "compile: stablehlo-to-hlo",
        "{v:#}"
    );
    let bisect = v["bisect"].as_str().unwrap_or("");
    assert!(
        bisect.contains("before its HLO passes started")
            && bisect.contains("XLA's failed check is at attribute_exporter.cc:86"),
        "{bisect}"
    );
    assert_eq!(
        v["known"]["id"], "xla-sdy-sharding-unknown-mesh-abort",
        "{v:#}"
    );
}

//! `ci/gpu_campaign.sh --dry-run`: the GPU campaign's steps on XLA CPU, as CI runs them (the
//! device run uses the same script with `--backend xla-gpu`).

use std::process::Command;

#[test]
fn the_gpu_campaign_script_runs_its_steps_on_cpu_and_archives_the_results() {
    if !test_support::need_xla() {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let root = test_support::repo_root();
    let status = Command::new(root.join("ci/gpu_campaign.sh"))
        .args([
            "--dry-run",
            // The campaign's clock includes its workers' start (jax imports): 15 s left no
            // time to fuzz on a 2-core CI host busy with other builds.
            "--campaign-time",
            "30s",
            "--agreement-time",
            "10",
        ])
        .arg("--hlo-diff")
        .arg(env!("CARGO_BIN_EXE_hlo-diff"))
        .arg("--out")
        .arg(out.path())
        .status()
        .unwrap();
    assert!(status.success(), "{status}");
    let archive = out.path().join("gpu_campaign.tar.gz");
    let size = std::fs::metadata(&archive).unwrap().len();
    assert!(size < 16 << 20, "{size} bytes");
    let list = Command::new("tar")
        .arg("tzf")
        .arg(&archive)
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    for f in [
        "report.json",
        "report.md",
        "agreement.json",
        "gpu_campaign.log",
    ] {
        assert!(list.contains(f), "{f} not in the archive:\n{list}");
    }
    // Oracle agreement: the corpus modules it reached in its budget, none of them a finding
    // blamed on the oracle.
    let a: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.path().join("work/agreement.json")).unwrap())
            .unwrap();
    assert!(a["checked"].as_u64().unwrap() >= 1, "{a}");
    let tally = a["tally"].as_object().unwrap();
    assert!(
        tally.keys().all(|k| !k.contains("oracle") && k != "error"),
        "{a}"
    );
    let r: serde_json::Value = serde_json::from_slice(
        &std::fs::read(out.path().join("work/campaign/report.json")).unwrap(),
    )
    .unwrap();
    assert!(r["totals"]["modules"].as_u64().unwrap() >= 1, "{r}");
}

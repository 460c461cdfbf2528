//! `hlo-diff fuzz --finish`: a campaign that left findings unminimized says so on its first
//! line with the command that finishes them (exit 1: they may be NEW); that command buckets
//! them without testing another module. Needs real XLA (`test_support::need_xla`).

#[path = "../../tools/tests/common/mod.rs"]
mod common;

use std::path::Path;
use std::process::Command;

fn unminimized(dir: &Path) -> usize {
    std::fs::read_dir(dir.join("findings"))
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().join("finding.json").is_file())
                .filter(|e| !e.path().join("minimized.json").is_file())
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn a_campaign_that_left_findings_says_so_and_finish_buckets_them() {
    if !test_support::need_xla() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let gen_path = common::write_fast_min_max_gen_config(tmp.path());
    let out = tmp.path().join("c");
    let exe = env!("CARGO_BIN_EXE_hlo-diff");
    let st = Command::new(exe)
        // The buckets test's campaign (tests/buckets.rs), whose findings are certain.
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
        ])
        .args(["--quiet", "--no-voter", "--no-swarm", "--no-minimize"])
        .args([
            "--xla-option",
            "xla_cpu_enable_fast_min_max=true",
            "--gen-config",
        ])
        .arg(&gen_path)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&st.stdout).into_owned();
    assert_eq!(
        st.status.code(),
        Some(1),
        "{stdout}\n{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let left = unminimized(&out);
    assert!(left > 0, "fast min/max with NaN inputs must give findings");
    let first = stdout.lines().next().unwrap_or("");
    assert!(
        first.contains("not minimized yet") && first.contains(" --finish"),
        "{stdout}"
    );
    let command = format!("hlo-diff fuzz --out {} --finish", out.display());
    assert!(first.contains(&command), "{first}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["unbucketed"].as_array().unwrap().len(), left);
    assert_eq!(report["finish_command"], command.as_str());
    let before = tools::campaign::load_state(&out).unwrap().unwrap();

    // The command it printed (this binary for `hlo-diff`).
    let st = Command::new(exe)
        .args(["fuzz", "--out"])
        .arg(&out)
        .args(["--finish", "--quiet", "--no-voter"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&st.stdout).into_owned();
    assert!(
        matches!(st.status.code(), Some(0 | 1)),
        "{stdout}\n{}",
        String::from_utf8_lossy(&st.stderr)
    );
    assert_eq!(unminimized(&out), 0, "{stdout}");
    assert!(!stdout.contains("not minimized yet"), "{stdout}");
    assert!(stdout.contains("no modules tested"), "{stdout}");
    let after = tools::campaign::load_state(&out).unwrap().unwrap();
    assert_eq!(after.next_index, before.next_index);
    assert_eq!(after.stats.modules, before.stats.modules);
}

//! Miscompiles of the pinned XLA (jaxlib 0.10.2, CPU) that hlo-diff's campaigns found, kept in
//! `corpora/regressions/xla_miscompile_*.hlo` (with `<name>.lit` inputs where the bug needs
//! particular values). Each must still be reported as a `mismatch` labelled `xla` (the oracle
//! and the StableHLO reference interpreter agree, XLA differs), or as `nondeterministic`. When a jaxlib upgrade fixes one,
//! this test fails and the file moves to the fixed list in corpora/regressions/README.md.

#[path = "../../tools/tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// `corpora/regressions/PREFIX*.hlo`, sorted.
fn regressions(prefix: &str) -> Vec<PathBuf> {
    let dir = test_support::corpora("regressions");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with(prefix) && n.ends_with(".hlo")
        })
        .collect();
    files.sort();
    files
}

/// `hlo-diff run --json --backends BACKENDS F` (with `F.lit` as inputs when it exists): the
/// JSON verdict, stdout and the exit code.
fn run_json(f: &Path, backends: &str) -> (serde_json::Value, String, Option<i32>) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hlo-diff"));
    cmd.args(["run", "--json", "--backends", backends]).arg(f);
    let lit = f.with_extension("lit");
    if lit.exists() {
        cmd.arg("--inputs").arg(&lit);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let v = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "{}: no JSON ({e}): {stdout}{}",
            f.display(),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (v, stdout, out.status.code())
}

#[test]
fn known_xla_cpu_miscompiles_are_still_found_and_blamed_on_xla() {
    if !common::need_xla() {
        return;
    }
    let files = regressions("xla_miscompile_");
    assert!(files.len() >= 3, "{files:?}");
    for f in files {
        let (v, stdout, code) = run_json(&f, "interp,xla-cpu,stablehlo-ref");
        // A bug that reads memory it should not (the grouped convolution) may also show as
        // a re-run disagreeing with itself.
        match v["verdict"].as_str() {
            Some("mismatch") => assert_eq!(v["label"], "xla", "{}: {stdout}", f.display()),
            Some("nondeterministic") => {}
            _ => panic!("{}: {stdout}", f.display()),
        }
        assert_eq!(code, Some(1), "{}", f.display());
    }
}

/// XLA CPU failures on valid modules (`corpora/regressions/xla_bug_*.hlo`: crashes in the
/// compiler, verifier rejections after a pass, a parser that reads `-0` as `+0`) are still
/// findings blamed on XLA. When a jaxlib upgrade fixes one, this test fails and the
/// README's table gets updated.
#[test]
fn known_xla_cpu_failures_are_still_findings_blamed_on_xla() {
    if !common::need_xla() {
        return;
    }
    let files = regressions("xla_bug_");
    assert!(files.len() >= 6, "{files:?}");
    for f in files {
        let (v, stdout, code) = run_json(&f, "interp,xla-cpu");
        assert!(
            matches!(
                v["verdict"].as_str(),
                Some("crash" | "rejected" | "mismatch")
            ),
            "{}: {stdout}",
            f.display()
        );
        assert_eq!(v["label"], "xla", "{}: {stdout}", f.display());
        assert_eq!(code, Some(1), "{}", f.display());
    }
}

//! `tools::campaign::fuzz_one`, the body of `cargo fuzz run hlo_diff`, against real XLA (the
//! project's venv; without it the test fails, unless `HLO_DIFF_SKIP_XLA=1` says to skip it).
//!
//! `fuzz_one` reads `HLO_DIFF_FUZZ_OUT` once, at its first call (a `OnceLock` holds the engines
//! and the store for the life of the process), so this file has one test: it sets the variable
//! to a fresh directory before the first call and makes every call itself.

use generators::Config;
use judge::classify::{Label, VerdictKind};
use std::path::{Path, PathBuf};
use tools::campaign::{fuzz_one, Finding};

/// Bytes that generate a module whose f32 output is `atan2(x, x)` with `x` an iota whose first
/// column is 0: XLA CPU gives NaN for atan2(0, 0), the oracle 0 (known bug
/// `xla-atan2-at-zero-and-subnormals`). Found by `ci/fuzz_smoke.sh` (libFuzzer `-seed=1`, a
/// mutation of `fuzz/seeds/hlo_diff`). They depend on the generators: if these change what the
/// bytes generate, replace the file with a crashing input of `cargo fuzz run --sanitizer none
/// hlo_diff` (written under `fuzz/artifacts/hlo_diff/`).
const FINDING_BYTES: &str = "tests/data/fuzz_one_atan2_zero_zero.bin";

/// A finding `fuzz_one` returned: stored, in its own directory under the store at `out`.
fn check_stored(f: &Finding, out: &Path, what: &str) -> PathBuf {
    assert!(f.verdict.is_bug(), "{what}: not a bug: {:?}", f.verdict);
    let dir = f
        .dir
        .clone()
        .unwrap_or_else(|| panic!("{what}: the finding was not stored: {:?}", f.verdict));
    assert!(
        dir.starts_with(out),
        "{what}: stored in {}, outside HLO_DIFF_FUZZ_OUT {}",
        dir.display(),
        out.display()
    );
    assert!(dir.is_dir(), "{what}: {} is not a directory", dir.display());
    for file in ["finding.json", "module.hlo", "inputs.lit"] {
        assert!(
            dir.join(file).is_file(),
            "{what}: no {file} in {}",
            dir.display()
        );
    }
    dir
}

/// Whether the bytes give a module under `fuzz_one`'s generator configuration (the default).
fn gives_a_module(bytes: &[u8]) -> bool {
    generators::generate(&mut arbitrary::Unstructured::new(bytes), &Config::default()).is_ok()
}

#[test]
fn fuzz_one_returns_nothing_or_a_finding_stored_under_hlo_diff_fuzz_out() {
    if !test_support::need_xla() {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    // Before the first call: fuzz_one reads it once.
    std::env::set_var("HLO_DIFF_FUZZ_OUT", out.path());

    // The smoke run's seeds (ci/fuzz_smoke.sh): each gives a module; whatever XLA does with
    // it, the answer is nothing or a stored finding.
    let seeds_dir = test_support::repo_root().join("fuzz/seeds/hlo_diff");
    let mut seeds: Vec<PathBuf> = std::fs::read_dir(&seeds_dir)
        .unwrap_or_else(|e| panic!("{}: {e}", seeds_dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    seeds.sort();
    assert!(!seeds.is_empty(), "no seeds in {}", seeds_dir.display());
    for seed in &seeds {
        let bytes = std::fs::read(seed).unwrap();
        let what = seed.display().to_string();
        assert!(gives_a_module(&bytes), "{what}: no module");
        if let Some(f) = fuzz_one(&bytes) {
            check_stored(&f, out.path(), &what);
        }
    }

    // Bytes that make a finding certain: an XLA mismatch, blamed on XLA by the voter.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(FINDING_BYTES);
    let bytes = std::fs::read(&path).unwrap();
    assert!(gives_a_module(&bytes), "{FINDING_BYTES}: no module");
    let f = fuzz_one(&bytes).unwrap_or_else(|| {
        panic!("{FINDING_BYTES}: no finding (see FINDING_BYTES on refreshing these bytes)")
    });
    let dir = check_stored(&f, out.path(), FINDING_BYTES);
    assert_eq!(f.verdict.kind, VerdictKind::Mismatch, "{:?}", f.verdict);
    assert_eq!(f.verdict.backend.as_deref(), Some("xla-cpu"));
    assert_eq!(f.verdict.label, Some(Label::Xla), "{:?}", f.verdict);
    let module = std::fs::read_to_string(dir.join("module.hlo")).unwrap();
    assert!(module.contains("atan2("), "{module}");
    // A known bug: minimized and bucketed (the first of its provisional signature), the
    // registry claims it, so the fuzzer goes on.
    let known = f.known.clone().unwrap_or_else(|| {
        panic!(
            "{FINDING_BYTES}: taken as NEW, bucket {:?}",
            std::fs::read_to_string(dir.join("minimized.json"))
        )
    });
    assert!(known.contains("xla-atan2"), "{known}");

    // The same bytes again: the same finding, folded into the same directory, known without
    // minimizing it again.
    let again = fuzz_one(&bytes).expect("the same bytes, the same finding");
    assert_eq!(check_stored(&again, out.path(), FINDING_BYTES), dir);
    assert!(again.known.is_some_and(|k| k.contains("xla-atan2")));
}

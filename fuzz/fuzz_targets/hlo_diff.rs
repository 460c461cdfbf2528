//! Differential fuzzing: bytes -> generated module and inputs -> interp vs xla-cpu -> verdict.
//! A finding is written to the store (`HLO_DIFF_FUZZ_OUT`, default `fuzz/findings`) and then
//! aborts the run so libFuzzer keeps the input as an artifact.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(f) = tools::campaign::fuzz_one(data) {
        panic!(
            "hlo_diff: {} (stored in {})",
            f.verdict.short(),
            f.dir.map(|d| d.display().to_string()).unwrap_or_else(|| "nowhere: the store failed".into())
        );
    }
});

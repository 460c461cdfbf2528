//! Differential fuzzing: bytes -> generated module and inputs -> interp vs xla-cpu -> verdict.
//! Every finding is written to the store (`HLO_DIFF_FUZZ_OUT`, default `fuzz/findings`); one
//! the registry or the store already knows is counted and the run goes on, a NEW one aborts
//! the run so libFuzzer keeps the input. What XLA made of each module (the categories of its
//! optimized module) goes to libFuzzer as extra counters, so the corpus grows toward new XLA
//! behaviour, not only new branches of the harness.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::atomic::{AtomicU8, Ordering};

/// One counter per XLA feature (by `tools::campaign::feature_index`): libFuzzer reads the
/// section `__libfuzzer_extra_counters` after every input, as it reads its own coverage.
const COUNTERS: usize = 4096;

#[used]
#[link_section = "__libfuzzer_extra_counters"]
static XLA_FEATURES: [AtomicU8; COUNTERS] = [const { AtomicU8::new(0) }; COUNTERS];

fuzz_target!(|data: &[u8]| {
    let r = tools::campaign::fuzz_one_with_feedback(data);
    for c in &r.xla_features {
        XLA_FEATURES[tools::campaign::feature_index(c, COUNTERS)].store(1, Ordering::Relaxed);
    }
    if let Some(f) = r.finding.filter(|f| f.known.is_none()) {
        panic!(
            "hlo_diff: NEW {} (stored in {})",
            f.verdict.short(),
            f.dir
                .map(|d| d.display().to_string())
                .unwrap_or_else(|| "nowhere: the store failed".into())
        );
    }
});

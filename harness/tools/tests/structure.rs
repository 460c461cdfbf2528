//! Structural HLO (issue #27 item 2) on real XLA against the oracle: modules generated with
//! each structural knob forced on (`generators::structure::forced_configs`: input/output
//! aliasing with the in-place update, composite calls, non-default layouts, one-device
//! shardings, data-dependent and nested control flow) compile and run on XLA CPU through
//! jaxlib (`xla-cpu`) and, for aliasing and layouts, which the jaxlib route's MLIR conversion
//! drops or rewrites, through the PJRT plugin (`pjrt`, the module as an `HloModuleProto`); the
//! judge finds every result in agreement with the oracle. A module whose difference is a bug
//! the registry knows (minimized and bucketed as a campaign does) is named, not failed.
//!
//! Needs the project's Python and the plugin `scripts/setup` installs; fails without them
//! unless `HLO_DIFF_SKIP_XLA=1`.

mod common;

use engine::backend::{Backend, RunOptions};
use engine::worker::{default_pjrt_plugin, Platform, WorkerBackend, WorkerConfig};
use hlo::{Literal, Module};
use judge::classify::VerdictKind;
use std::sync::Arc;

/// Seeds per knob and backend.
const SEEDS: u64 = 16;

fn verdict(
    backend: &str,
    m: &Module,
    inputs: &[Literal],
    b: &WorkerBackend,
) -> (VerdictKind, String) {
    let text = hlo::print::module_to_string(m);
    let outcome = b.run(&text, inputs, &RunOptions::default());
    let v = common::judge_against_oracle(backend, m, Some(&text), inputs, outcome);
    (v.kind, v.message)
}

#[test]
fn structural_modules_run_on_xla_and_agree_with_the_oracle() {
    if !test_support::need_xla() {
        return;
    }
    let plugin = default_pjrt_plugin();
    assert!(
        plugin.is_file(),
        "no PJRT plugin at {}: run scripts/setup or set HLO_DIFF_PJRT_PLUGIN",
        plugin.display()
    );
    let registry =
        findings::registry::Registry::load(&test_support::repo_root().join("corpora/known-bugs"))
            .unwrap();
    let backends: Vec<(&str, Arc<WorkerBackend>)> = vec![
        (
            "xla-cpu",
            Arc::new(WorkerBackend::xla_cpu(
                WorkerConfig::new(Platform::Cpu).with_workers(2),
            )),
        ),
        (
            "pjrt",
            Arc::new(WorkerBackend::pjrt(
                WorkerConfig::new(Platform::Cpu).with_workers(1),
            )),
        ),
    ];
    let (mut failures, mut known, mut checked) = (Vec::new(), Vec::new(), 0);
    let mut agreed = std::collections::BTreeMap::<String, usize>::new();
    for (name, cfg, wanted) in generators::structure::forced_configs() {
        for (bname, b) in &backends {
            // The direct route only where the jaxlib route loses what the knob writes.
            if *bname == "pjrt" && !matches!(name, "alias" | "layout") {
                continue;
            }
            for seed in 0..SEEDS {
                let m = generators::generate_from_seed(700_000 + seed, &cfg);
                let features = generators::structure::features(&m);
                let inputs = generators::generate_inputs_from_seed(&m, seed, &cfg);
                let (kind, message) = verdict(bname, &m, &inputs, b);
                checked += 1;
                if kind.agrees() {
                    for w in wanted.iter().filter(|w| features.contains(*w)) {
                        *agreed.entry(format!("{bname} {w}")).or_default() += 1;
                    }
                    continue;
                }
                let line = format!(
                    "{bname} {name} seed {}: {kind:?}: {message}",
                    700_000 + seed
                );
                let rec = tools::campaign::bucket_case(
                    tools::minimize::Case {
                        module: m.clone(),
                        inputs: inputs.clone(),
                    },
                    None,
                    b,
                    Vec::new(),
                    &tools::campaign::MinimizeConfig::default(),
                    std::time::Duration::from_secs(60),
                    None,
                );
                match registry.lookup(&rec.bucket) {
                    Some(e) => known.push(format!("{line} (known: {})", e.id)),
                    None => failures.push(format!(
                        "{line} (bucket {}: {})\n{}",
                        rec.bucket_id,
                        rec.title,
                        hlo::print::module_to_string(&m)
                    )),
                }
            }
        }
    }
    eprintln!(
        "{checked} runs; registered bugs: {}\n  {}",
        known.len(),
        known.join("\n  ")
    );
    eprintln!("agreeing runs per feature: {agreed:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // The runs that agreed did carry the features (the knobs are not idle).
    for (name, _, wanted) in generators::structure::forced_configs() {
        for w in wanted.iter() {
            let n = agreed.get(&format!("xla-cpu {w}")).copied().unwrap_or(0);
            assert!(n >= 2, "{name}: only {n} agreeing xla-cpu runs have `{w}`");
        }
    }
    for w in ["aliased output", "non-default layout"] {
        let n = agreed.get(&format!("pjrt {w}")).copied().unwrap_or(0);
        assert!(n >= 2, "only {n} agreeing pjrt runs have `{w}`");
    }
}

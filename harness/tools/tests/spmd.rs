//! SPMD programs on XLA CPU's host devices: a module whose header says `num_partitions=N`
//! is compiled with SPMD partitioning for N devices, its global inputs are split the way the
//! compiled program takes them, its outputs put back together, and the judge compares the
//! global result with the oracle's (shardings do not change values).
//!
//! The modules are `corpora/jax-sharded/` (real jax programs jitted with shardings over 2 and
//! 4 host devices, written by `corpora/gen_sharded.py`). Both workers run them: the jaxlib
//! worker (`xla-cpu`, jax splits the inputs) and the PJRT worker (`pjrt`, the XLA CPU plugin
//! with host devices; `hlo::sharding` splits them).

mod common;

use engine::backend::{Backend, Outcome, RunOptions};
use engine::worker::{Platform, WorkerBackend, WorkerConfig};
use hlo::{Literal, Module};
use judge::classify::VerdictKind;
use std::sync::OnceLock;

fn xla_cpu() -> &'static WorkerBackend {
    static B: OnceLock<WorkerBackend> = OnceLock::new();
    B.get_or_init(|| WorkerBackend::xla_cpu(WorkerConfig::new(Platform::Cpu).with_workers(1)))
}

fn pjrt() -> &'static WorkerBackend {
    static B: OnceLock<WorkerBackend> = OnceLock::new();
    B.get_or_init(|| WorkerBackend::pjrt(WorkerConfig::new(Platform::Cpu).with_workers(1)))
}

/// Both workers, when the tests may run XLA (the PJRT plugin then must be there).
fn backends() -> Vec<&'static WorkerBackend> {
    if !common::need_pjrt() {
        return Vec::new();
    }
    vec![xla_cpu(), pjrt()]
}

fn judge(
    b: &WorkerBackend,
    m: &Module,
    inputs: &[Literal],
    outcome: Outcome,
) -> (VerdictKind, String) {
    let v = common::judge_against_oracle(b.name(), m, None, inputs, outcome);
    (v.kind, v.message)
}

/// The sharded corpus: `(file name, text, module)`.
fn sharded_modules() -> Vec<(String, String, Module)> {
    common::before_optimizations_files(&test_support::corpora("jax-sharded"))
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            let m = hlo::parse::parse_module(&text).unwrap();
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            (name, text, m)
        })
        .collect()
}

/// Every sharded corpus program, on 2 and on 4 devices as its header says, on both workers:
/// XLA partitions it (the optimized module is per device: its entry takes other shapes than
/// the global program), and the judge finds no bug against the oracle's global result.
#[test]
fn sharded_programs_run_partitioned_and_agree_with_the_oracle() {
    for b in backends() {
        sharded_programs_agree_on(b);
    }
}

fn sharded_programs_agree_on(b: &WorkerBackend) {
    let who = b.name();
    let modules = sharded_modules();
    assert!(modules.len() >= 12, "{} sharded modules", modules.len());
    let opts = RunOptions {
        return_optimized_hlo: true,
        ..RunOptions::default()
    };
    let mut ways = std::collections::BTreeSet::new();
    let mut failures = Vec::new();
    for (name, text, m) in &modules {
        let n = engine::backend::module_partitions(text);
        assert!(n > 1, "{name}: num_partitions {n}");
        ways.insert(n);
        let inputs = generators::inputs::generate_inputs_from_seed(
            m,
            5,
            &generators::Config {
                special_value_percent: 0,
                ..generators::Config::default()
            },
        );
        let outcome = b.run(text, &inputs, &opts);
        let Outcome::Ok(r) = &outcome else {
            failures.push(format!("{who}: {name}: {outcome}"));
            continue;
        };
        let optimized = r.optimized_hlo.as_deref().unwrap_or("");
        let header = optimized.lines().next().unwrap_or("");
        let global_layout = text.lines().next().unwrap_or("");
        let layout = |h: &str| {
            h.split("entry_computation_layout=")
                .nth(1)
                .and_then(|s| s.split("->").next())
                .map(|s| {
                    s.replace("{1,0}", "")
                        .replace("{0}", "")
                        .replace("{2,1,0}", "")
                })
        };
        if !header.contains(&format!("num_partitions={n}"))
            || layout(header) == layout(global_layout)
        {
            failures.push(format!(
                "{who}: {name}: not partitioned {n} ways:\n  global    {}\n  optimized {header}",
                global_layout.chars().take(200).collect::<String>()
            ));
            continue;
        }
        let (kind, message) = judge(b, m, &inputs, outcome);
        if kind.is_finding() {
            failures.push(format!("{who}: {name}: {kind:?}: {message}"));
        }
    }
    assert!(
        ways.contains(&2) && ways.contains(&4),
        "partition counts {ways:?}"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A wrong value in one shard is found, and bucketed as an SPMD bug: `max` over rows sharded
/// 2 ways, with a NaN only in the rows of the second device. Each device reduces its rows and
/// an all-reduce combines the partial results; `maximum` propagates NaN (StableHLO spec
/// §maximum), so the NaN must reach the result. XLA CPU's all-reduce drops it
/// (`xla-cpu-all-reduce-max-drops-nan`): the judge says mismatch at that element and nowhere
/// else. The controls: the same inputs without the NaN match, and so does the same program
/// with the NaN on one device (its header without `num_partitions`). On both workers: the
/// plugin's XLA (0.11.2) drops it too.
#[test]
fn a_nan_lost_between_shards_is_a_finding_of_the_partitioned_program() {
    for b in backends() {
        a_nan_lost_between_shards_is_found_on(b);
    }
}

fn a_nan_lost_between_shards_is_found_on(b: &WorkerBackend) {
    let who = b.name();
    let (name, text, m) = sharded_modules()
        .into_iter()
        .find(|(n, _, _)| n.contains("sharded_reduce_max"))
        .expect("the sharded max program");
    assert_eq!(engine::backend::module_partitions(&text), 2, "{name}");
    // f32[8,3], rows 0-3 on device 0, rows 4-7 on device 1.
    let rows = |nan: bool| {
        let mut values: Vec<f32> = (0..24).map(|i| i as f32 * 0.5 - 3.0).collect();
        if nan {
            values[6 * 3 + 1] = f32::NAN;
        }
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        vec![Literal::Array(
            hlo::ArrayLiteral::from_bytes(hlo::PrimitiveType::F32, vec![8, 3], bytes).unwrap(),
        )]
    };
    let opts = RunOptions::default();
    let plain = rows(false);
    let (kind, message) = judge(b, &m, &plain, b.run(&text, &plain, &opts));
    assert_eq!(kind, VerdictKind::Match, "{who}: {message}");
    let with_nan = rows(true);
    let one_device = text.replacen("num_partitions=2", "num_partitions=1", 1);
    assert_eq!(engine::backend::module_partitions(&one_device), 1);
    let (kind, message) = judge(b, &m, &with_nan, b.run(&one_device, &with_nan, &opts));
    assert_eq!(kind, VerdictKind::Match, "{who}, one device: {message}");
    let (kind, message) = judge(b, &m, &with_nan, b.run(&text, &with_nan, &opts));
    assert_eq!(kind, VerdictKind::Mismatch, "{who}: {message}");
    assert!(
        message.contains(&format!("element 1: {who} gives 2.0, legitimate: NaN")),
        "{message}"
    );
}

/// Generated SPMD programs (`Config::spmd_percent`): every module is partitioned over 2 or 4
/// devices, with tiled shardings among its annotations (uneven splits included), and the engine
/// runs each as XLA compiles it: no module fails in the engine's own splitting or gathering
/// (a harness error, an unsupported case, a rejection at execute), most agree with the oracle,
/// and what XLA does wrong (a crash in its partitioner, a wrong value) is printed as a finding.
#[test]
fn generated_spmd_programs_run_partitioned() {
    for b in backends() {
        generated_spmd_programs_run_on(b);
    }
}

fn generated_spmd_programs_run_on(b: &WorkerBackend) {
    let who = b.name();
    let cfg = generators::Config {
        sharding_percent: 40,
        spmd_percent: 100,
        special_value_percent: 0,
        ..generators::Config::default()
    };
    let (mut agreed, mut tiled, mut findings, mut engine_errors) = (0, 0, Vec::new(), Vec::new());
    let seeds = 24;
    for seed in 0..seeds {
        let m = generators::generate_from_seed(1_000 + seed, &cfg);
        let n = m.num_partitions();
        assert!(n == 2 || n == 4, "seed {seed}: num_partitions {n}");
        let text = hlo::print::module_to_string(&m);
        if text.contains("sharding={devices=") {
            tiled += 1;
        }
        let inputs = generators::inputs::generate_inputs_from_seed(&m, seed, &cfg);
        let outcome = b.run(&text, &inputs, &RunOptions::default());
        match &outcome {
            Outcome::Unsupported { .. }
            | Outcome::HarnessError { .. }
            | Outcome::Unavailable { .. }
            | Outcome::Rejected {
                stage: engine::backend::Stage::Execute,
                ..
            } => {
                engine_errors.push(format!("seed {seed}: {outcome}"));
                continue;
            }
            _ => {}
        }
        let (kind, message) = judge(b, &m, &inputs, outcome);
        if kind.is_finding() {
            findings.push(format!("seed {seed}: {kind:?}: {message}"));
        } else {
            agreed += 1;
        }
    }
    eprintln!(
        "{who}: {agreed} of {seeds} generated SPMD programs agree with the oracle; {tiled} have \
         tiled shardings; findings:\n{}",
        findings.join("\n")
    );
    assert!(
        engine_errors.is_empty(),
        "{who}: {}",
        engine_errors.join("\n")
    );
    assert!(tiled >= seeds / 2, "{tiled} modules with tiled shardings");
    assert!(
        agreed >= seeds / 2,
        "{agreed} agree:\n{}",
        findings.join("\n")
    );
}

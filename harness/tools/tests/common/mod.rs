//! Helpers shared by the integration tests of `tools` and `hlo-diff` (the CLI includes this file
//! by path) that run real XLA. Whether they run at all is `test_support`'s policy.
#![allow(dead_code)]

use engine::backend::{Backend, Outcome};
use engine::worker::{Platform, WorkerBackend, WorkerConfig};
use hlo::{ArrayLiteral, Literal, PrimitiveType};

pub use test_support::need_xla;

/// A one-worker `xla-cpu`, or `None` when [`need_xla`] says to skip.
pub fn xla_cpu() -> Option<WorkerBackend> {
    need_xla().then(|| WorkerBackend::xla_cpu(WorkerConfig::new(Platform::Cpu).with_workers(1)))
}

/// The judge's verdict on `backend`'s `outcome` for `m` (its text, when the backend ran a
/// text of its own) against the oracle's run of the same inputs, offline (allowed
/// implementation choices only, no voter).
pub fn judge_against_oracle(
    backend: &str,
    m: &hlo::Module,
    text: Option<&str>,
    inputs: &[Literal],
    outcome: Outcome,
) -> judge::Verdict {
    let outcomes = vec![
        (
            engine::ORACLE.to_string(),
            engine::interp_backend::InterpBackend::new().run_module(m, inputs),
        ),
        (backend.to_string(), outcome),
    ];
    judge::Judge::offline()
        .judge(&judge::Trial {
            module: m,
            text,
            inputs,
            outcomes: &outcomes,
            reruns: &[],
            tolerance: &judge::compare::Tolerance::for_module(m),
        })
        .verdict
}

/// The `before_optimizations` texts of a dump directory, sorted by file name.
pub fn before_optimizations_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".before_optimizations.txt"))
        .collect();
    files.sort();
    files
}

pub fn f32_scalar(v: f32) -> Literal {
    Literal::Array(
        ArrayLiteral::from_bytes(PrimitiveType::F32, vec![], v.to_le_bytes().to_vec()).unwrap(),
    )
}

/// `log(exp(x))`: algsimp rewrites it to `x`, so x = 100 gives 100 on XLA where IEEE
/// evaluation gives inf: an intended rewrite that changes the result.
pub const LOG_EXP: &str = r#"HloModule log_exp

ENTRY main {
  x = f32[] parameter(0)
  e = f32[] exponential(x)
  ROOT l = f32[] log(e)
}
"#;

/// Checks that the XLA at hand rewrites log(exp(x)) to x (jaxlib 0.10.2's algsimp does; the
/// XLA of jaxlib 0.11.2, seen on a GPU box, does not). Tests built on that rewrite fail loudly
/// without it rather than pass without testing.
pub fn assert_xla_rewrites_log_exp() {
    let b = WorkerBackend::xla_cpu(WorkerConfig::new(Platform::Cpu).with_workers(1));
    match b.run(LOG_EXP, &[f32_scalar(100.0)], &Default::default()) {
        Outcome::Ok(r) => {
            let v = r.outputs[0].as_array().unwrap().get(0).to_f64();
            assert!(
                v.is_finite(),
                "this XLA keeps log(exp(x)) (gives {v} for x = 100): the test relies on \
                 algsimp rewriting it to x, as the pinned jaxlib 0.10.2 does"
            );
        }
        o => panic!("xla-cpu cannot run log(exp(x)): {o}"),
    }
}

/// The jaxlib releases the project pins (`scripts/setup`: 0.10.2), on which every regression
/// module these tests are built on shows its bug.
pub const PINNED_JAXLIB_SERIES: &str = "0.10.";

/// The jaxlib release of the project's Python (the one the tests' XLA runs).
pub fn jaxlib_version() -> String {
    let o = std::process::Command::new(test_support::python())
        .args([
            "-c",
            "import importlib.metadata as m; print(m.version('jaxlib'))",
        ])
        .output()
        .expect("the project's Python runs");
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// For a test's "a fixed XLA" branch, taken when XLA no longer shows the bug the test is built
/// on: on the pinned jaxlib, where the bug shows, it fails the test (a lost crash or mismatch
/// must not pass without testing); on another release it says which branch is taken.
pub fn assert_fixed_xla_is_not_the_pinned_one(what: &str) {
    let v = jaxlib_version();
    assert!(
        !v.starts_with(PINNED_JAXLIB_SERIES),
        "jaxlib {v} (the pinned release) shows {what}, but this run did not: the bug this test \
         is built on was lost"
    );
    eprintln!("jaxlib {v}: {what} not shown (a fixed XLA); checking what a fixed XLA gives");
}

/// Writes, in `dir`, the generator configuration of the campaigns that run with
/// `xla_cpu_enable_fast_min_max=true`: binary elementwise ops on f32 with many special values,
/// so maximum/minimum meet NaNs and findings are certain. Returns the file (`--gen-config`).
pub fn write_fast_min_max_gen_config(dir: &std::path::Path) -> std::path::PathBuf {
    let gen = generators::Config {
        op_weights: [(generators::OpFamily::Binary, 10)].into_iter().collect(),
        element_types: vec![PrimitiveType::F32],
        control_flow: false,
        max_instructions: 6,
        special_value_percent: 40,
        ..generators::Config::default()
    };
    let path = dir.join("gen.json");
    std::fs::write(&path, serde_json::to_string(&gen).unwrap()).unwrap();
    path
}

/// Whether the tests may run XLA and the `pjrt` backend (`test_support::need_pjrt_plugin`).
pub fn need_pjrt() -> bool {
    test_support::need_pjrt_plugin(&engine::worker::default_pjrt_plugin())
}

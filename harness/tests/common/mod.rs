//! Helpers shared by the harness's integration tests that run real XLA.
#![allow(dead_code)]

use harness::backend::{Backend, Outcome};
use harness::worker::{default_python, Platform, WorkerBackend, WorkerConfig};
use hlo::{ArrayLiteral, Literal, PrimitiveType};

/// True when the XLA tests should run. False only with `HLO_DIFF_SKIP_XLA=1`; without the
/// project's Python (or `HLO_DIFF_PYTHON`) and without that variable, the test fails.
pub fn need_xla() -> bool {
    if std::env::var("HLO_DIFF_SKIP_XLA").as_deref() == Ok("1") {
        eprintln!("HLO_DIFF_SKIP_XLA=1: skipping a test that needs XLA");
        return false;
    }
    let py = default_python();
    assert!(
        py.exists(),
        "{} is missing: run scripts/setup (harness/worker/requirements.txt) or set HLO_DIFF_SKIP_XLA=1",
        py.display()
    );
    true
}

/// A one-worker `xla-cpu`, or `None` when [`need_xla`] says to skip.
pub fn xla_cpu() -> Option<WorkerBackend> {
    need_xla().then(|| WorkerBackend::xla_cpu(WorkerConfig::new(Platform::Cpu).with_workers(1)))
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

/// Whether the XLA at hand rewrites log(exp(x)) to x (jaxlib 0.10.2's algsimp does; the XLA of
/// jaxlib 0.11.2, seen on a GPU box, does not). Tests built on that rewrite stop when not.
pub fn xla_rewrites_log_exp() -> bool {
    let b = WorkerBackend::xla_cpu(WorkerConfig::new(Platform::Cpu).with_workers(1));
    match b.run(LOG_EXP, &[f32_scalar(100.0)], &Default::default()) {
        Outcome::Ok(r) => {
            let v = r.outputs[0].as_array().unwrap().get(0).to_f64();
            if !v.is_finite() {
                eprintln!("this XLA keeps log(exp(x)) (gives {v}): no mismatch to work on");
            }
            v.is_finite()
        }
        o => panic!("xla-cpu cannot run log(exp(x)): {o}"),
    }
}

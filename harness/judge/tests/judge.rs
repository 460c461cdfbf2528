//! The judge's decisions that other tools rely on.

use engine::backend::{Backend, Outcome, RunOptions, RunResult};
use engine::interp_backend::InterpBackend;
use engine::worker::{Platform, WorkerBackend, WorkerConfig};
use hlo::{ArrayLiteral, Literal, PrimitiveType};
use judge::compare::Tolerance;
use judge::{Judge, Trial, VerdictKind};

/// `1e19 * (1 + tanh(x))` in f64: for x = -40 tanh is exactly -1 (the true value rounds to
/// it, and every implementation returns it), so the result is exactly 0.
const SATURATED: &str = r#"HloModule saturated

ENTRY main {
  x = f64[] parameter(0)
  t = f64[] tanh(x)
  one = f64[] constant(1)
  s = f64[] add(one, t)
  big = f64[] constant(1e+19)
  ROOT r = f64[] multiply(s, big)
}
"#;

fn f64_scalar(v: f64) -> Literal {
    Literal::Array(
        ArrayLiteral::from_bytes(PrimitiveType::F64, vec![], v.to_le_bytes().to_vec()).unwrap(),
    )
}

fn judge_outcome(module: &hlo::Module, inputs: &[Literal], xla: Outcome) -> judge::Verdict {
    let oracle = InterpBackend::new().run_module(module, inputs);
    let outcomes = vec![("interp".to_string(), oracle), ("xla-cpu".to_string(), xla)];
    Judge::offline()
        .judge(&Trial {
            module,
            text: None,
            inputs,
            outcomes: &outcomes,
            reruns: &[],
            tolerance: &Tolerance::for_module(module),
        })
        .verdict
}

/// An XLA result one ulp off a saturated tanh, scaled up to about 1110, is a mismatch: "an
/// approximated function a few ulps off" does not excuse a result the function never misses.
#[test]
fn one_ulp_off_a_saturated_result_is_a_mismatch() {
    let m = hlo::parse::parse_module(SATURATED).unwrap();
    let inputs = [f64_scalar(-40.0)];
    let off = (1.0 + (-1.0 + f64::EPSILON / 2.0)) * 1e19;
    assert!(off > 1000.0, "{off}");
    let fake = Outcome::Ok(RunResult {
        outputs: vec![f64_scalar(off)],
        result_shape: None,
        timings: Default::default(),
        optimized_hlo: None,
        before_optimizations_hlo: None,
        dump_dir: None,
    });
    let v = judge_outcome(&m, &inputs, fake);
    assert_eq!(v.kind, VerdictKind::Mismatch, "{v:?}");
    assert!(v.explained.is_none(), "{v:?}");
}

/// The same module's real XLA CPU outcome is a match.
#[test]
fn the_real_xla_cpu_outcome_of_the_saturated_module_is_a_match() {
    if !test_support::need_xla() {
        return;
    }
    let m = hlo::parse::parse_module(SATURATED).unwrap();
    let inputs = [f64_scalar(-40.0)];
    let xla = WorkerBackend::xla_cpu(WorkerConfig::new(Platform::Cpu).with_workers(1));
    let o = xla.run(SATURATED, &inputs, &RunOptions::default());
    assert!(o.is_ok(), "{o}");
    let v = judge_outcome(&m, &inputs, o);
    assert_eq!(v.kind, VerdictKind::Match, "{v:?}");
}

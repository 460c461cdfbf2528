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

/// A campaign finding (labelled `oracle`): the product reduction of `complex(p, p)` values
/// compared with itself. XLA CPU multiplies c64 in single precision and, every partial product
/// being used twice, fuses none of them into multiply-adds: the product is (NaN, -inf) and
/// `compare EQ` false. The oracle's default (fused) form gives (inf, -inf) and true; the other
/// contraction of complex products (`ComplexMul::Unfused`) explains XLA's result.
const C64_PRODUCT: &str = r#"HloModule cprod

%mul (a: c64[], b: c64[]) -> c64[] {
  %a = c64[] parameter(0)
  %b = c64[] parameter(1)
  ROOT %m = c64[] multiply(%a, %b)
}

ENTRY %main (p: f32[6]) -> pred[] {
  %p = f32[6] parameter(0)
  %c = c64[6] complex(%p, %p)
  %z = c64[] constant((1, 0))
  %r = c64[] reduce(%c, %z), dimensions={0}, to_apply=%mul
  ROOT %e = pred[] compare(%r, %r), direction=EQ
}
"#;

fn c64_product_inputs() -> Vec<Literal> {
    let p: [f32; 6] = [
        -0.800665,
        -28.883596,
        0.24731578,
        -29.020575,
        8.138762,
        -3.4028235e38,
    ];
    let bytes = p.iter().flat_map(|v| v.to_le_bytes()).collect();
    vec![Literal::Array(
        ArrayLiteral::from_bytes(PrimitiveType::F32, vec![6], bytes).unwrap(),
    )]
}

fn pred_scalar(v: bool) -> Literal {
    Literal::Array(ArrayLiteral::from_bytes(PrimitiveType::Pred, vec![], vec![v as u8]).unwrap())
}

/// XLA CPU's outcome (`false`), as measured, is a match explained by an implementation choice.
#[test]
fn a_c64_product_with_unfused_partial_products_is_an_explained_match() {
    let m = hlo::parse::parse_module(C64_PRODUCT).unwrap();
    let inputs = c64_product_inputs();
    let xla = Outcome::Ok(RunResult {
        outputs: vec![pred_scalar(false)],
        result_shape: None,
        timings: Default::default(),
        optimized_hlo: None,
        before_optimizations_hlo: None,
        dump_dir: None,
    });
    let v = judge_outcome(&m, &inputs, xla);
    assert_eq!(v.kind, VerdictKind::Match, "{v:?}");
    assert!(v.explained.is_some(), "{v:?}");
}

/// The same module's real XLA CPU outcome is a match.
#[test]
fn the_real_xla_cpu_outcome_of_the_c64_product_is_a_match() {
    if !test_support::need_xla() {
        return;
    }
    let m = hlo::parse::parse_module(C64_PRODUCT).unwrap();
    let inputs = c64_product_inputs();
    let xla = WorkerBackend::xla_cpu(WorkerConfig::new(Platform::Cpu).with_workers(1));
    let o = xla.run(C64_PRODUCT, &inputs, &RunOptions::default());
    assert!(o.is_ok(), "{o}");
    let v = judge_outcome(&m, &inputs, o);
    assert_eq!(v.kind, VerdictKind::Match, "{v:?}");
}

fn c64_scalar(re: f32, im: f32) -> Literal {
    let mut bytes = re.to_le_bytes().to_vec();
    bytes.extend(im.to_le_bytes());
    Literal::Array(ArrayLiteral::from_bytes(PrimitiveType::C64, vec![], bytes).unwrap())
}

fn xla_result(l: Literal) -> Outcome {
    Outcome::Ok(RunResult {
        outputs: vec![l],
        result_shape: None,
        timings: Default::default(),
        optimized_hlo: None,
        before_optimizations_hlo: None,
        dump_dir: None,
    })
}

/// c64 tanh next to its pole at i*pi/2 (seen on XLA CPU in a nightly): XLA's result is 2.4e-5
/// away relatively, more than a c64 function's allowance, but within what the oracle gives
/// for inputs 1-2 ulps away: explained by the rounding of the inputs. A value outside that
/// range stays a mismatch.
#[test]
fn an_ill_conditioned_result_is_explained_by_input_rounding_and_a_wrong_one_is_not() {
    let m = hlo::parse::parse_module(
        "HloModule t\n\nENTRY main {\n  z = c64[] parameter(0)\n  ROOT t = c64[] tanh(z)\n}\n",
    )
    .unwrap();
    let inputs = [c64_scalar(-0.0015396357, 1.5697116)];
    let v = judge_outcome(
        &m,
        &inputs,
        xla_result(c64_scalar(-434.0345153808594, 305.80126953125)),
    );
    assert_eq!(v.kind, VerdictKind::Match, "{v:?}");
    assert_eq!(v.vote.as_deref(), Some("input-rounding"), "{v:?}");
    let wrong = judge_outcome(&m, &inputs, xla_result(c64_scalar(-400.0, 300.0)));
    assert_eq!(wrong.kind, VerdictKind::Mismatch, "{wrong:?}");
}

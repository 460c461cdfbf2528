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
    judge_with(judge::Policy::VERDICT, module, inputs, xla)
}

/// [`judge_outcome`] with the explaining choice searched for (`hlo-diff run --explain`).
fn judge_explained(module: &hlo::Module, inputs: &[Literal], xla: Outcome) -> judge::Verdict {
    judge_with(judge::Policy::VERDICT.explaining(), module, inputs, xla)
}

fn judge_with(
    policy: judge::Policy,
    module: &hlo::Module,
    inputs: &[Literal],
    xla: Outcome,
) -> judge::Verdict {
    let oracle = InterpBackend::new().run_module(module, inputs);
    let outcomes = vec![("interp".to_string(), oracle), ("xla-cpu".to_string(), xla)];
    Judge::offline()
        .with_policy(policy)
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

/// The set decides under every policy: a difference inside the legitimate results is no
/// finding whether or not the explaining choice is searched for (`Policy::explaining`, `hlo-diff
/// run --explain`), which only adds the explanation; a result outside them stays a mismatch
/// under either.
#[test]
fn the_set_decides_and_the_explanation_only_explains() {
    let judged = |text: &str, inputs: &[Literal], xla: Literal, policy: judge::Policy| {
        let m = hlo::parse::parse_module(text).unwrap();
        let outcomes = vec![
            (
                "interp".to_string(),
                InterpBackend::new().run_module(&m, inputs),
            ),
            ("xla-cpu".to_string(), xla_result(xla)),
        ];
        Judge::offline()
            .with_policy(policy)
            .judge(&Trial {
                module: &m,
                text: None,
                inputs,
                outcomes: &outcomes,
                reruns: &[],
                tolerance: &Tolerance::for_module(&m),
            })
            .verdict
    };
    let inputs = c64_product_inputs();
    let plain = judged(
        C64_PRODUCT,
        &inputs,
        pred_scalar(false),
        judge::Policy::VERDICT,
    );
    assert!(!plain.kind.is_finding(), "{plain:?}");
    assert!(plain.explained.is_none(), "{plain:?}");
    assert!(
        plain.proof.as_ref().is_some_and(|p| !p.proves()),
        "{plain:?}"
    );
    let explained = judged(
        C64_PRODUCT,
        &inputs,
        pred_scalar(false),
        judge::Policy::VERDICT.explaining(),
    );
    assert_eq!(explained.kind, plain.kind, "{explained:?}");
    assert!(explained.explained.is_some(), "{explained:?}");
    let off = (1.0 + (-1.0 + f64::EPSILON / 2.0)) * 1e19;
    for policy in [judge::Policy::VERDICT, judge::Policy::VERDICT.explaining()] {
        let v = judged(SATURATED, &[f64_scalar(-40.0)], f64_scalar(off), policy);
        assert_eq!(v.kind, VerdictKind::Mismatch, "{policy:?}: {v:?}");
    }
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

/// XLA CPU's outcome (`false`), as measured, is no finding: an order-free complex product
/// has no bound in the enclosure (unproven), and `--explain` finds the implementation choice
/// (unfused partial products) that gives it.
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
    let v = judge_explained(&m, &inputs, xla);
    assert!(!v.is_bug(), "{v:?}");
    assert!(v.explained.is_some(), "{v:?}");
}

/// The same module's real XLA CPU outcome is no finding.
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
    assert!(!v.is_bug(), "{v:?}");
}

fn c64_scalar(re: f32, im: f32) -> Literal {
    let mut bytes = re.to_le_bytes().to_vec();
    bytes.extend(im.to_le_bytes());
    Literal::Array(ArrayLiteral::from_bytes(PrimitiveType::C64, vec![], bytes).unwrap())
}

fn c128_scalar(re: f64, im: f64) -> Literal {
    let mut bytes = re.to_le_bytes().to_vec();
    bytes.extend(im.to_le_bytes());
    Literal::Array(ArrayLiteral::from_bytes(PrimitiveType::C128, vec![], bytes).unwrap())
}

fn c64_array(v: &[(f32, f32)]) -> Literal {
    let bytes = v
        .iter()
        .flat_map(|(r, i)| r.to_le_bytes().into_iter().chain(i.to_le_bytes()))
        .collect();
    Literal::Array(
        ArrayLiteral::from_bytes(PrimitiveType::C64, vec![v.len() as i64], bytes).unwrap(),
    )
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
    let v = judge_explained(
        &m,
        &inputs,
        xla_result(c64_scalar(-434.0345153808594, 305.80126953125)),
    );
    assert_eq!(v.kind, VerdictKind::Match, "{v:?}");
    assert_eq!(v.vote.as_deref(), Some("input-rounding"), "{v:?}");
    let wrong = judge_outcome(&m, &inputs, xla_result(c64_scalar(-400.0, 300.0)));
    assert_eq!(wrong.kind, VerdictKind::Mismatch, "{wrong:?}");
}

/// A product reduction of f32 values where two factors overflow (seen in a nightly): 0 when
/// visited in row-major order (a zero comes before the overflow), NaN when XLA CPU multiplies
/// -4.3 by -3.4e38 first (inf) and a zero after. XLA may combine a reduction's elements in any
/// order, so NaN is allowed; a finite non-zero value is not.
const PRODUCT_REDUCE: &str = r#"HloModule product

mul {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] multiply(a, b)
}

ENTRY main {
  p = f32[1,4,1,5] parameter(0)
  one = f32[] constant(1)
  ROOT r = f32[1] reduce(p, one), dimensions={0,1,3}, to_apply=mul
}
"#;

/// A literal of `ty` and `dims` from its little-endian bytes.
fn bytes_array(ty: PrimitiveType, dims: Vec<i64>, bytes: Vec<u8>) -> Literal {
    Literal::Array(ArrayLiteral::from_bytes(ty, dims, bytes).unwrap())
}

fn f32_array(dims: Vec<i64>, v: &[f32]) -> Literal {
    let bytes = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    Literal::Array(ArrayLiteral::from_bytes(PrimitiveType::F32, dims, bytes).unwrap())
}

fn product_inputs() -> Vec<Literal> {
    let mut v = vec![0f32; 20];
    v[..5].copy_from_slice(&[-0.2598337, -0.53760487, -4.306367, -3.4028235e38, 0.8889254]);
    v[10..15].copy_from_slice(&[0.7098584, -0.5825711, 50.855545, -0.12720077, 2.362079]);
    vec![f32_array(vec![1, 4, 1, 5], &v)]
}

#[test]
fn a_reduction_whose_order_decides_an_overflow_allows_either_result_and_no_other() {
    let m = hlo::parse::parse_module(PRODUCT_REDUCE).unwrap();
    let inputs = product_inputs();
    let nan = judge_explained(&m, &inputs, xla_result(f32_array(vec![1], &[f32::NAN])));
    assert_eq!(nan.kind, VerdictKind::Match, "{nan:?}");
    assert!(
        nan.explained
            .as_ref()
            .is_some_and(|e| e.what.contains("order reductions")),
        "{nan:?}"
    );
    let zero = judge_outcome(&m, &inputs, xla_result(f32_array(vec![1], &[0.0])));
    assert_eq!(zero.kind, VerdictKind::Match, "{zero:?}");
    let wrong = judge_outcome(&m, &inputs, xla_result(f32_array(vec![1], &[7.0])));
    assert_eq!(wrong.kind, VerdictKind::Mismatch, "{wrong:?}");
    // No zero among the factors: the product is -98 in order, and NaN when one partial
    // product overflows and another (FLT_MIN * -0.3) underflows to zero in XLA CPU's
    // flush-to-zero mode: reduction order and flushing together.
    let mut v = vec![0f32; 20];
    v.copy_from_slice(&[
        -0.2598337,
        -0.53760487,
        -4.306367,
        -3.4028235e38,
        0.8889254,
        0.3418197,
        1.1754944e-38,
        -0.30900016,
        11.1730585,
        0.91590047,
        0.7098584,
        -0.5825711,
        50.855545,
        -0.12720077,
        2.362079,
        -3.6323025,
        -3.615164,
        0.8703611,
        -0.5874444,
        -1.0,
    ]);
    let tiny = [f32_array(vec![1, 4, 1, 5], &v)];
    let nan = judge_outcome(&m, &tiny, xla_result(f32_array(vec![1], &[f32::NAN])));
    assert_eq!(nan.kind, VerdictKind::Match, "{nan:?}");
    if !test_support::need_xla() {
        return;
    }
    let xla = WorkerBackend::xla_cpu(WorkerConfig::new(Platform::Cpu).with_workers(1));
    let o = xla.run(PRODUCT_REDUCE, &inputs, &RunOptions::default());
    assert!(o.is_ok(), "{o}");
    let real = judge_outcome(&m, &inputs, o);
    assert_eq!(real.kind, VerdictKind::Match, "{real:?}");
}

/// clamp(x, x, +NaN) is -NaN on XLA CPU (x86's default NaN) and +NaN in the oracle; a
/// TOTALORDER comparison sees the sign. The sign of a NaN an op produces is free.
#[test]
fn a_totalorder_compare_of_a_clamped_nan_allows_either_nan_sign() {
    let text = "HloModule c\n\nENTRY main {\n  x = bf16[1] parameter(0)\n  h = bf16[] parameter(1)\n  c = bf16[1] clamp(x, x, h)\n  ROOT r = pred[1] compare(x, c), direction=LE, type=TOTALORDER\n}\n";
    let m = hlo::parse::parse_module(text).unwrap();
    let bf16 = |dims: Vec<i64>, v: f32| {
        let b = ((v.to_bits() >> 16) as u16).to_le_bytes().to_vec();
        Literal::Array(ArrayLiteral::from_bytes(PrimitiveType::Bf16, dims, b).unwrap())
    };
    let inputs = [bf16(vec![1], -32.75), bf16(vec![], f32::NAN)];
    let pred = |v: bool| {
        Literal::Array(
            ArrayLiteral::from_bytes(PrimitiveType::Pred, vec![1], vec![v as u8]).unwrap(),
        )
    };
    let v = judge_outcome(&m, &inputs, xla_result(pred(false)));
    assert_eq!(v.kind, VerdictKind::Match, "{v:?}");
    let e = judge_explained(&m, &inputs, xla_result(pred(false)));
    assert_eq!(e.vote.as_deref(), Some("implementation-choice"), "{e:?}");
}

/// z / z in c128: Smith's division leaves an imaginary part of rounding noise, 0 in the oracle
/// and 5.8e-19 in XLA CPU's code; relative to the modulus (1) that is far below an ulp, so it
/// is no finding even when only that part is looked at. 1e-3 is.
#[test]
fn the_rounding_noise_of_a_complex_quotient_is_relative_to_its_modulus() {
    let text = "HloModule d\n\nENTRY main {\n  z = c128[] parameter(0)\n  q = c128[] divide(z, z)\n  ROOT i = f64[] imag(q)\n}\n";
    let m = hlo::parse::parse_module(text).unwrap();
    let mut b = (-78.59711248072914f64).to_le_bytes().to_vec();
    b.extend(0.7769051492993839f64.to_le_bytes());
    let inputs = [Literal::Array(
        ArrayLiteral::from_bytes(PrimitiveType::C128, vec![], b).unwrap(),
    )];
    let noise = judge_outcome(&m, &inputs, xla_result(f64_scalar(5.820902023784392e-19)));
    assert_eq!(noise.kind, VerdictKind::Match, "{noise:?}");
    let wrong = judge_outcome(&m, &inputs, xla_result(f64_scalar(1e-3)));
    assert_eq!(wrong.kind, VerdictKind::Mismatch, "{wrong:?}");
}

/// `convert` to `pred` is `x != 0`; XLA CPU compares f32 and f64 as floats, which reads a
/// subnormal as zero under denormals-are-zero (measured on jaxlib 0.10.2: f32 1e-45 converts to
/// false), while f16 converts exactly (6e-8 is true). Reading the smallest normal, or an f16
/// subnormal, as zero stays a mismatch.
#[test]
fn a_subnormal_converted_to_pred_may_read_as_zero_and_only_a_subnormal() {
    let module = |ty: &str| {
        let text = format!(
            "HloModule c\n\nENTRY main {{\n  x = {ty}[3] parameter(0)\n  ROOT r = pred[3] convert(x)\n}}\n"
        );
        hlo::parse::parse_module(&text).unwrap()
    };
    let preds = |v: [bool; 3]| {
        Literal::Array(
            ArrayLiteral::from_bytes(PrimitiveType::Pred, vec![3], v.map(u8::from).to_vec())
                .unwrap(),
        )
    };
    let f32s = [f32_array(vec![3], &[1e-45, f32::MIN_POSITIVE, 1.0])];
    let legit = judge_outcome(
        &module("f32"),
        &f32s,
        xla_result(preds([false, true, true])),
    );
    assert_eq!(legit.kind, VerdictKind::Match, "{legit:?}");
    let normal_flushed = judge_outcome(
        &module("f32"),
        &f32s,
        xla_result(preds([false, false, true])),
    );
    assert_eq!(
        normal_flushed.kind,
        VerdictKind::Mismatch,
        "{normal_flushed:?}"
    );
    let f16s = [Literal::Array(
        ArrayLiteral::from_bytes(
            PrimitiveType::F16,
            vec![3],
            // f16 bits: the smallest subnormal (6e-8), then 1.0 twice.
            [0x0001u16, 0x3c00, 0x3c00]
                .iter()
                .flat_map(|h| h.to_le_bytes())
                .collect(),
        )
        .unwrap(),
    )];
    let f16_flushed = judge_outcome(
        &module("f16"),
        &f16s,
        xla_result(preds([false, true, true])),
    );
    assert_eq!(f16_flushed.kind, VerdictKind::Mismatch, "{f16_flushed:?}");
}

/// A bf16 subnormal converted to pred is a compare with zero in f32, which reads it as zero
/// under denormals-are-zero when the convert is fused with its user (measured on jaxlib 0.10.2:
/// `select(convert(x), x, 1)` of 9.2e-41 gives 1). The smallest normal bf16 read as zero stays a
/// mismatch.
#[test]
fn a_bf16_subnormal_converted_to_pred_may_read_as_zero_and_only_a_subnormal() {
    let module = hlo::parse::parse_module(
        "HloModule c\n\nENTRY main {\n  x = bf16[2] parameter(0)\n  ROOT r = pred[2] convert(x)\n}\n",
    )
    .unwrap();
    let preds = |v: [bool; 2]| {
        Literal::Array(
            ArrayLiteral::from_bytes(PrimitiveType::Pred, vec![2], v.map(u8::from).to_vec())
                .unwrap(),
        )
    };
    let bf16s = |bits: [u16; 2]| {
        [Literal::Array(
            ArrayLiteral::from_bytes(
                PrimitiveType::Bf16,
                vec![2],
                bits.iter().flat_map(|h| h.to_le_bytes()).collect(),
            )
            .unwrap(),
        )]
    };
    // 0x0001: the smallest bf16 subnormal; 0x0080: the smallest normal; 0x3f80: 1.
    let legit = judge_outcome(
        &module,
        &bf16s([0x0001, 0x3f80]),
        xla_result(preds([false, true])),
    );
    assert_eq!(legit.kind, VerdictKind::Match, "{legit:?}");
    let normal = judge_outcome(
        &module,
        &bf16s([0x0080, 0x3f80]),
        xla_result(preds([false, true])),
    );
    assert_eq!(normal.kind, VerdictKind::Mismatch, "{normal:?}");
}

/// A widening to c128 reads bf16/f32 subnormals, real or c64 parts, as zero as a widening to
/// f64 does (cvtss2sd under denormals-are-zero; measured on jaxlib 0.10.2: f32 1e-45 and
/// c64 (1e-45, 1e-45) convert to c128 zeros). A normal f32 read as zero stays a mismatch.
#[test]
fn a_widening_to_c128_may_read_subnormal_parts_as_zero_and_only_those() {
    let module = hlo::parse::parse_module(
        "HloModule c\n\nENTRY main {\n  x = f32[1] parameter(0)\n  ROOT r = c128[1] convert(x)\n}\n",
    )
    .unwrap();
    let c128s = |v: [f64; 1]| {
        Literal::Array(
            ArrayLiteral::from_bytes(
                PrimitiveType::C128,
                vec![1],
                v.iter()
                    .flat_map(|&re| [re, 0.0])
                    .flat_map(|x| x.to_le_bytes())
                    .collect(),
            )
            .unwrap(),
        )
    };
    let legit = judge_outcome(
        &module,
        &[f32_array(vec![1], &[1e-45])],
        xla_result(c128s([0.0])),
    );
    assert_eq!(legit.kind, VerdictKind::Match, "{legit:?}");
    let normal = judge_outcome(
        &module,
        &[f32_array(vec![1], &[f32::MIN_POSITIVE])],
        xla_result(c128s([0.0])),
    );
    assert_eq!(normal.kind, VerdictKind::Mismatch, "{normal:?}");
}

/// c64 division by a formula under denormals-are-zero: XLA CPU reads (1e-45, 1e-45) / itself
/// as 0 / 0 and gives (nan, nan) (measured on jaxlib 0.10.2). The same NaN for operands of
/// normal parts stays a mismatch.
#[test]
fn a_complex_quotient_of_subnormal_parts_may_be_zero_over_zero() {
    let text =
        "HloModule d\n\nENTRY main {\n  z = c64[] parameter(0)\n  ROOT r = c64[] divide(z, z)\n}\n";
    let m = hlo::parse::parse_module(text).unwrap();
    let nan = xla_result(c64_scalar(f32::NAN, f32::NAN));
    let sub = judge_outcome(&m, &[c64_scalar(1e-45, 1e-45)], nan.clone());
    assert_eq!(sub.kind, VerdictKind::Match, "{sub:?}");
    let normal = judge_outcome(&m, &[c64_scalar(f32::MIN_POSITIVE, 1e-45)], nan);
    assert_eq!(normal.kind, VerdictKind::Mismatch, "{normal:?}");
}

/// An f32[n] select-and-scatter with one window over all n elements, selecting by the float
/// compare `direction` and scattering by `add` (source f32[1], init 0).
fn select_and_scatter_one_window(direction: &str, n: usize) -> hlo::Module {
    let text = format!(
        "HloModule s\n\nsel {{\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  \
         ROOT c = pred[] compare(a, b), direction={direction}\n}}\n\nadd {{\n  a = f32[] \
         parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}}\n\nENTRY \
         main {{\n  x = f32[{n}] parameter(0)\n  s = f32[1] parameter(1)\n  z = f32[] \
         constant(0)\n  ROOT r = f32[{n}] select-and-scatter(x, s, z), window={{size={n} \
         stride={n}}}, select=sel, scatter=add\n}}\n"
    );
    hlo::parse::parse_module(&text).unwrap()
}

/// select-and-scatter's select is a float compare, which reads a subnormal as zero under DAZ
/// (XLA CPU's mode): with operand (0, 1e-45) and `GE`, the window may keep its first element
/// (a tie) or take the second. With the smallest normal instead of the subnormal only the
/// second is legitimate: keeping the first stays a mismatch.
#[test]
fn select_and_scatter_may_read_a_subnormal_as_a_tie_and_only_a_subnormal() {
    let m = select_and_scatter_one_window("GE", 2);
    let inputs = |second: f32| {
        [
            f32_array(vec![2], &[0.0, second]),
            f32_array(vec![1], &[1.0]),
        ]
    };
    let first_kept = || xla_result(f32_array(vec![2], &[1.0, 0.0]));
    let tie = judge_outcome(&m, &inputs(1e-45), first_kept());
    assert!(!tie.is_bug(), "{tie:?}");
    let normal = judge_outcome(&m, &inputs(f32::MIN_POSITIVE), first_kept());
    assert_eq!(normal.kind, VerdictKind::Mismatch, "{normal:?}");
}

/// select-and-scatter selects by folding its select over the window, and StableHLO leaves the
/// order of that fold to the implementation (select_and_scatter is defined through
/// reduce_window, whose schedule is implementation-defined). With a NaN in the window an IEEE
/// `LE` is no order: whichever element the fold meets right after the NaN wins unless a later
/// one beats it, so any position may be selected. Window (0, NaN, -92.5, 0): the last 0 may
/// get the source. Without the NaN only -92.5 may, and a NaN does not excuse a wrong sum.
#[test]
fn select_and_scatter_over_a_nan_may_select_any_position_and_only_with_a_nan() {
    let m = select_and_scatter_one_window("LE", 4);
    let inputs = |second: f32| {
        [
            f32_array(vec![4], &[0.0, second, -92.5, 0.0]),
            f32_array(vec![1], &[1.5]),
        ]
    };
    let last = |v: f32| xla_result(f32_array(vec![4], &[0.0, 0.0, 0.0, v]));
    let nan = judge_outcome(&m, &inputs(f32::NAN), last(1.5));
    assert!(!nan.is_bug(), "{nan:?}");
    let ordered = judge_outcome(&m, &inputs(5.0), last(1.5));
    assert_eq!(ordered.kind, VerdictKind::Mismatch, "{ordered:?}");
    let doubled = judge_outcome(&m, &inputs(f32::NAN), last(3.0));
    assert_eq!(doubled.kind, VerdictKind::Mismatch, "{doubled:?}");
}

/// A dot's zero may be -0 (a lone product -0, as XLA's algebraic simplifier computes a dot
/// without contracting dimensions as a multiply) or +0 (an accumulator started at zero): a
/// TOTALORDER sort by such keys may put either first (measured: XLA CPU sorts the -0 below the
/// +0, the oracle's +0 ties). Keys that are certainly -0 and +0 (a multiply) have one order.
#[test]
fn a_total_order_sort_separates_negative_zero_only_where_the_key_is_certain() {
    let module = |op: &str| {
        let text = format!(
            "HloModule s\n\ngt {{\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  c = \
             f32[] parameter(2)\n  d = f32[] parameter(3)\n  ROOT r = pred[] compare(a, b), \
             direction=GT, type=TOTALORDER\n}}\n\nENTRY main {{\n  z = f32[] constant(0)\n  zb \
             = f32[2] broadcast(z), dimensions={{}}\n  p = f32[2] parameter(0)\n  {op}\n  c = \
             f32[2] constant({{-1, -5.5}})\n  s = (f32[2], f32[2]) sort(k, c), dimensions={{0}}, \
             is_stable=true, to_apply=gt\n  ROOT g = f32[2] get-tuple-element(s), index=1\n}}\n"
        );
        hlo::parse::parse_module(&text).unwrap()
    };
    let dot = module("k = f32[2] dot(zb, p), lhs_batch_dims={0}, rhs_batch_dims={0}");
    let multiply = module("k = f32[2] multiply(zb, p)");
    let inputs = [f32_array(vec![2], &[-0.5, 0.0])];
    let swapped = || xla_result(f32_array(vec![2], &[-5.5, -1.0]));
    let kept = || xla_result(f32_array(vec![2], &[-1.0, -5.5]));
    let dot_swapped = judge_outcome(&dot, &inputs, swapped());
    assert!(!dot_swapped.is_bug(), "{dot_swapped:?}");
    let dot_kept = judge_outcome(&dot, &inputs, kept());
    assert!(!dot_kept.is_bug(), "{dot_kept:?}");
    let multiply_kept = judge_outcome(&multiply, &inputs, kept());
    assert_eq!(
        multiply_kept.kind,
        VerdictKind::Mismatch,
        "{multiply_kept:?}"
    );
}

/// A c64 dot whose imaginary partial product overflows: the result is a complex infinity,
/// whose other part is unspecified (seen on XLA CPU in the nightly at seed 8852417: (nan, inf)
/// where the real part is finite in exact arithmetic). A NaN real part beside a finite
/// imaginary part, or where no part may overflow, stays a mismatch.
#[test]
fn a_complex_infinity_may_have_any_other_part_and_only_an_infinity() {
    let text = "HloModule d\n\nENTRY main {\n  a = c64[2] parameter(0)\n  b = c64[2] \
                parameter(1)\n  ROOT r = c64[] dot(a, b), lhs_contracting_dims={0}, \
                rhs_contracting_dims={0}\n}\n";
    let m = hlo::parse::parse_module(text).unwrap();
    let big = [
        c64_array(&[(3.4028235e38, 0.0), (1.1754944e-38, 3.4028235e38)]),
        c64_array(&[(0.9562441, -0.4127259), (1.3097882, -0.012675227)]),
    ];
    let nan_inf = || xla_result(c64_scalar(f32::NAN, f32::INFINITY));
    let infinity = judge_outcome(&m, &big, nan_inf());
    assert!(!infinity.is_bug(), "{infinity:?}");
    let finite_im = judge_outcome(&m, &big, xla_result(c64_scalar(f32::NAN, 1.0)));
    assert_eq!(finite_im.kind, VerdictKind::Mismatch, "{finite_im:?}");
    let small = [
        c64_array(&[(3.0, 0.0), (1.0, 2.0)]),
        c64_array(&[(0.9562441, -0.4127259), (1.3097882, -0.012675227)]),
    ];
    let no_overflow = judge_outcome(&m, &small, nan_inf());
    assert_eq!(no_overflow.kind, VerdictKind::Mismatch, "{no_overflow:?}");
}

/// A complex product whose plain formula is NaN in both parts while a partial product
/// overflows: C's complex multiplication (Annex G.5.1) recovers an infinity, counting the NaN
/// operand part as 0, and XLA CPU's complex dot does so (nightly at seed 6931471: the imaginary
/// part of (NaN, -3.4e38) * (-3.4e38, -0.54) is inf, where the oracle's is NaN). Without an
/// overflow nothing is recovered: an infinite imaginary part of (NaN, 2) * (3, 0.5) is a
/// mismatch, in a dot and in an elementwise multiply.
#[test]
fn a_nan_complex_product_may_be_recovered_as_an_infinity_only_past_an_overflow() {
    let module = |root: &str| {
        hlo::parse::parse_module(&format!(
            "HloModule d\n\nENTRY main {{\n  a = c64[1] parameter(0)\n  b = c64[1] \
             parameter(1)\n  {root}\n  ROOT r = f32[1] imag(k)\n}}\n"
        ))
        .unwrap()
    };
    let dot = module("k = c64[1] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}");
    let multiply = module("k = c64[1] multiply(a, b)");
    let overflowing = [
        c64_array(&[(f32::NAN, -3.4028235e38)]),
        c64_array(&[(-3.4028235e38, -0.54283106)]),
    ];
    let small = [c64_array(&[(f32::NAN, 2.0)]), c64_array(&[(3.0, 0.5)])];
    let inf = || xla_result(f32_array(vec![1], &[f32::INFINITY]));
    for m in [&dot, &multiply] {
        let recovered = judge_outcome(m, &overflowing, inf());
        assert!(!recovered.is_bug(), "{recovered:?}");
        let finite = judge_outcome(m, &overflowing, xla_result(f32_array(vec![1], &[1.0])));
        assert_eq!(finite.kind, VerdictKind::Mismatch, "{finite:?}");
        let not_recovered = judge_outcome(m, &small, inf());
        assert_eq!(
            not_recovered.kind,
            VerdictKind::Mismatch,
            "{not_recovered:?}"
        );
    }
}

/// A sort by an f32 key, then by an f32 value, whose compares are IEEE: XLA CPU reads the key
/// -1e-40 as zero (denormals-are-zero; measured on jaxlib 0.10.2 and the 0.11.2 plugin), so it
/// ties with the -0 keys and the value orders it (-5.5 before -7.75), where the oracle puts it
/// last. That order is legitimate; another (2.5 before 3.75) is not, and under TOTALORDER,
/// which XLA CPU keeps for f32 subnormal keys, the tie is a mismatch.
#[test]
fn ieee_sort_compares_may_read_a_subnormal_key_as_zero() {
    let module = |ty: &str| {
        hlo::parse::parse_module(&format!(
            "HloModule s\n\n%cmp (a: f32[], b: f32[], c: f32[], d: f32[]) -> pred[] {{\n  %a = \
             f32[] parameter(0)\n  %b = f32[] parameter(1)\n  %c = f32[] parameter(2)\n  %d = \
             f32[] parameter(3)\n  %gt = pred[] compare(%a, %b), direction=GT{ty}\n  %eq = pred[] \
             compare(%a, %b), direction=EQ{ty}\n  %gt2 = pred[] compare(%c, %d), direction=GT{ty}\n  \
             %and = pred[] and(%eq, %gt2)\n  ROOT %or = pred[] or(%gt, %and)\n}}\n\nENTRY %main \
             (k: f32[4], v: f32[4]) -> f32[4] {{\n  %k = f32[4] parameter(0)\n  %v = f32[4] \
             parameter(1)\n  %s = (f32[4], f32[4]) sort(%k, %v), dimensions={{0}}, \
             is_stable=true, to_apply=%cmp\n  ROOT %g = f32[4] get-tuple-element(%s), index=1\n}}\n"
        ))
        .unwrap()
    };
    let inputs = [
        f32_array(vec![4], &[-1e-40, -0.0, -0.0, -0.0]),
        f32_array(vec![4], &[-5.5, 3.75, 2.5, -7.75]),
    ];
    let tie = || xla_result(f32_array(vec![4], &[3.75, 2.5, -5.5, -7.75]));
    let ieee = module("");
    let read_as_zero = judge_outcome(&ieee, &inputs, tie());
    assert!(!read_as_zero.is_bug(), "{read_as_zero:?}");
    let wrong = judge_outcome(
        &ieee,
        &inputs,
        xla_result(f32_array(vec![4], &[2.5, 3.75, -5.5, -7.75])),
    );
    assert_eq!(wrong.kind, VerdictKind::Mismatch, "{wrong:?}");
    let total = judge_outcome(&module(", type=TOTALORDER"), &inputs, tie());
    assert_eq!(total.kind, VerdictKind::Mismatch, "{total:?}");
}

/// c64 logistic next to its pole at z = i*pi (seen on XLA CPU in the nightly at seed 9163523):
/// XLA expands it to 1 / (1 + exp(-z)), and one ulp of the exp's real part moves the result by
/// 0.04 of 578. The set follows the expansion op by op, so XLA's value is legitimate; a value
/// 2 away in the real part is not.
#[test]
fn complex_logistic_near_its_pole_carries_the_exps_rounding_and_no_more() {
    let m = hlo::parse::parse_module(
        "HloModule t\n\nENTRY main {\n  z = c64[] parameter(0)\n  ROOT t = c64[] logistic(z)\n}\n",
    )
    .unwrap();
    let inputs = [c64_scalar(-3.427182e-05, 3.1398644)];
    let xla = judge_outcome(
        &m,
        &inputs,
        xla_result(c64_scalar(-10.931601524353027, 578.4076538085938)),
    );
    assert!(!xla.is_bug(), "{xla:?}");
    let wrong = judge_outcome(&m, &inputs, xla_result(c64_scalar(-12.931601, 578.4076538)));
    assert_eq!(wrong.kind, VerdictKind::Mismatch, "{wrong:?}");
    // Away from the pole the expansion is well conditioned: 1e-3 off is a mismatch.
    let far = [c64_scalar(0.5, 0.25)];
    let oracle = InterpBackend::new().run_module(&m, &far);
    let z = oracle.as_ok().unwrap().outputs[0]
        .as_array()
        .unwrap()
        .get(0);
    let (re, im) = match z {
        hlo::Scalar::C(re, im) => (re as f32, im as f32),
        other => panic!("{other:?}"),
    };
    let off = judge_outcome(&m, &far, xla_result(c64_scalar(re + 1e-3, im)));
    assert_eq!(off.kind, VerdictKind::Mismatch, "{off:?}");
    if !test_support::need_xla() {
        return;
    }
    let real = WorkerBackend::xla_cpu(WorkerConfig::new(Platform::Cpu).with_workers(1));
    let text = hlo::print::module_to_string(&m);
    let o = real.run(&text, &inputs, &RunOptions::default());
    assert!(o.is_ok(), "{o}");
    let v = judge_outcome(&m, &inputs, o);
    assert!(!v.is_bug(), "{v:?}");
}

/// f16 `(x + x) * 0.25` at x = 60000: the f16 sum overflows (the oracle: inf), while XLA,
/// free to keep f32 intermediates (xla_allow_excess_precision, default true), returns 30000.
/// That value is legitimate; 10000, below anything the sum can be once it overflowed f16
/// (the set keeps the sum above f16's largest value, so a quarter of it above 16376), is a
/// mismatch even though the oracle overflowed.
#[test]
fn a_narrow_overflow_avoided_by_excess_precision_passes_and_a_wrong_finite_value_does_not() {
    let m = hlo::parse::parse_module(
        "HloModule t\n\nENTRY main {\n  x = f16[1] parameter(0)\n  s = f16[1] add(x, x)\n  \
         q = f16[] constant(0.25)\n  qb = f16[1] broadcast(q), dimensions={}\n  ROOT r = f16[1] \
         multiply(s, qb)\n}\n",
    )
    .unwrap();
    // f16 bits: 60000 0x7b53, 30000 0x7753, 10000 0x70e2.
    let f16s = |bits: u16| {
        Literal::Array(
            ArrayLiteral::from_bytes(PrimitiveType::F16, vec![1], bits.to_le_bytes().to_vec())
                .unwrap(),
        )
    };
    let x = [f16s(0x7b53)];
    let wide = judge_outcome(&m, &x, xla_result(f16s(0x7753)));
    assert!(!wide.is_bug(), "{wide:?}");
    let wrong = judge_outcome(&m, &x, xla_result(f16s(0x70e2)));
    assert_eq!(wrong.kind, VerdictKind::Mismatch, "{wrong:?}");
}

/// 1 / 0 in f8e4m3fn (no infinities) is NaN, but XLA computes f8 ops in f16 and drops the round
/// trip back under xla_allow_excess_precision (default true): convert(1 / 0) to f16 gives inf
/// (the nightly at seed 4418871; NaN with the flag false). The wider type's infinity is
/// legitimate; the other one, or a finite value, is not.
#[test]
fn an_f8_overflow_may_keep_the_wider_types_value_and_no_other() {
    let m = hlo::parse::parse_module(
        "HloModule t\n\nENTRY main {\n  x = f8e4m3fn[] parameter(0)\n  one = f8e4m3fn[] \
         constant(1)\n  d = f8e4m3fn[] divide(one, x)\n  ROOT c = f16[] convert(d)\n}\n",
    )
    .unwrap();
    let f8 = |bits: u8| {
        Literal::Array(
            ArrayLiteral::from_bytes(PrimitiveType::F8E4M3FN, vec![], vec![bits]).unwrap(),
        )
    };
    // f16 bits: inf 0x7c00, -inf 0xfc00, NaN 0x7e00, 200 0x5a40.
    let f16 = |bits: u16| {
        let b = bits.to_le_bytes().to_vec();
        xla_result(Literal::Array(
            ArrayLiteral::from_bytes(PrimitiveType::F16, vec![], b).unwrap(),
        ))
    };
    let zero = [f8(0)];
    let inf = judge_outcome(&m, &zero, f16(0x7c00));
    assert!(!inf.is_bug(), "{inf:?}");
    let nan = judge_outcome(&m, &zero, f16(0x7e00));
    assert!(!nan.is_bug(), "{nan:?}");
    // A finite value where the oracle overflowed is judged by the set, not excused by the
    // tolerance: 1 / 0 is infinite in every wider type.
    for wrong in [0xfc00, 0x5a40] {
        let v = judge_outcome(&m, &zero, f16(wrong));
        assert_eq!(v.kind, VerdictKind::Mismatch, "{wrong:#x}: {v:?}");
    }
    // 1 / 0.015625 = 64 in range: exact in both types, 200 is wrong (the tolerance of an f8 result is wide).
    let small = [f8(0x08)];
    let v = judge_outcome(&m, &small, f16(0x5a40));
    assert_eq!(v.kind, VerdictKind::Mismatch, "{v:?}");
    if !test_support::need_xla() {
        return;
    }
    let real = WorkerBackend::xla_cpu(WorkerConfig::new(Platform::Cpu).with_workers(1));
    let o = real.run(
        &hlo::print::module_to_string(&m),
        &zero,
        &RunOptions::default(),
    );
    assert!(o.is_ok(), "{o}");
    let v = judge_outcome(&m, &zero, o);
    assert!(!v.is_bug(), "{v:?}");
}

/// A c64 compare NE of (1e-45, 0) with (0, 0) is false on XLA CPU (the nightly at seed
/// 3907715): its parts are compared as floats are, reading subnormals as zero. A normal part
/// that differs is still not equal.
#[test]
fn a_complex_compare_reads_subnormal_parts_as_zero_and_only_those() {
    let m = hlo::parse::parse_module(
        "HloModule t\n\nENTRY main {\n  z = c64[] parameter(0)\n  c = c64[] constant((0, 0))\n  \
         ROOT r = pred[] compare(c, z), direction=NE\n}\n",
    )
    .unwrap();
    let tiny = [c64_scalar(1e-45, 0.0)];
    let equal = judge_outcome(&m, &tiny, xla_result(pred_scalar(false)));
    assert!(!equal.is_bug(), "{equal:?}");
    let normal = [c64_scalar(1e-30, 0.0)];
    let wrong = judge_outcome(&m, &normal, xla_result(pred_scalar(false)));
    assert_eq!(wrong.kind, VerdictKind::Mismatch, "{wrong:?}");
}

/// `power(power(d, d), d)` after an f32 dot whose summation orders give values on both sides
/// of the odd integer -4941 (the row of a 2,000-module campaign at seed 2718281): summed in
/// order the dot is exactly -4941, `pow(-4941, -4941)` underflows to -0 and `pow(-0, -4941)`
/// is -inf, XLA CPU's result; the oracle's dot is -4940.9995 and its result NaN. Both are
/// legitimate; 0, which no base in {-0, +0, NaN} to a negative power gives, is a mismatch.
#[test]
fn a_power_of_negative_zero_to_an_odd_power_may_be_negative_infinity_and_zero_is_not() {
    let m = hlo::parse::parse_module(
        "HloModule t\n\nENTRY main {\n  a = f32[16] parameter(0)\n  b = f32[16] parameter(1)\n  \
         d = f32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n  \
         p = f32[] power(d, d)\n  ROOT q = f32[] power(p, d)\n}\n",
    )
    .unwrap();
    let a: [f32; 16] = [
        -0.06678907573223114,
        -0.5991430878639221,
        -24.67955207824707,
        -59.54043197631836,
        75.62151336669922,
        -0.8051263093948364,
        -0.5549594759941101,
        0.3211396038532257,
        -2.8352932929992676,
        -88.39765930175781,
        0.773807168006897,
        -0.5012587904930115,
        3.349186420440674,
        -0.2543397843837738,
        -0.20468665659427643,
        -1.934499979019165,
    ];
    let b: [f32; 16] = [
        -98.7733383178711,
        -18.39878273010254,
        34.74214172363281,
        76.41744995117188,
        0.28973278403282166,
        0.21519392728805542,
        0.2609778940677643,
        -0.608053982257843,
        0.9485499858856201,
        -0.41123509407043457,
        2.200937509536743,
        -81.87383270263672,
        96.84303283691406,
        -3.559642791748047,
        -0.3919072449207306,
        -13.2308931350708,
    ];
    let sequential: f32 = a.iter().zip(&b).fold(0.0, |s, (x, y)| s + x * y);
    assert_eq!(
        sequential, -4941.0,
        "summed in order the dot is the odd integer"
    );
    let inputs = [f32_array(vec![16], &a), f32_array(vec![16], &b)];
    let scalar = |v: f32| {
        Literal::Array(
            ArrayLiteral::from_bytes(PrimitiveType::F32, vec![], v.to_le_bytes().to_vec()).unwrap(),
        )
    };
    let xla = judge_outcome(&m, &inputs, xla_result(scalar(f32::NEG_INFINITY)));
    assert!(!xla.is_bug(), "{xla:?}");
    let wrong = judge_outcome(&m, &inputs, xla_result(scalar(0.0)));
    assert_eq!(wrong.kind, VerdictKind::Mismatch, "{wrong:?}");
}

/// A complex dot whose real part overflows to inf - inf: XLA CPU's matrix products scale the
/// sum by alpha = 1+0i as a GEMM does, and `0 * NaN` makes the finite imaginary part NaN too
/// (measured: (3e38, 0) * 10 + (-3e38, 0) * 10 is (NaN, NaN) in a c64[m,2] x c64[3,2] product,
/// (NaN, 0) as a vector product). Both pass; a wrong finite imaginary part beside the NaN, or
/// (NaN, NaN) where nothing overflows, is a mismatch.
#[test]
fn a_complex_matrix_product_scaled_by_one_may_make_a_part_nan_only_beside_a_non_finite_one() {
    let m = hlo::parse::parse_module(
        "HloModule d\n\nENTRY main {\n  a = c64[2] parameter(0)\n  b = c64[2] parameter(1)\n  \
         ROOT r = c64[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}\n",
    )
    .unwrap();
    let big = [
        c64_array(&[(3e38, 0.0), (-3e38, 0.0)]),
        c64_array(&[(10.0, 0.0), (10.0, 0.0)]),
    ];
    for (re, im) in [(f32::NAN, f32::NAN), (f32::NAN, 0.0)] {
        let v = judge_outcome(&m, &big, xla_result(c64_scalar(re, im)));
        assert!(!v.is_bug(), "({re}, {im}): {v:?}");
    }
    let wrong_im = judge_outcome(&m, &big, xla_result(c64_scalar(f32::NAN, 5.0)));
    assert_eq!(wrong_im.kind, VerdictKind::Mismatch, "{wrong_im:?}");
    let small = [
        c64_array(&[(3.0, 0.0), (-3.0, 0.0)]),
        c64_array(&[(10.0, 0.0), (10.0, 0.0)]),
    ];
    let no_overflow = judge_outcome(&m, &small, xla_result(c64_scalar(f32::NAN, f32::NAN)));
    assert_eq!(no_overflow.kind, VerdictKind::Mismatch, "{no_overflow:?}");
}

/// c128 `power(z, w)` where |z| overflows f64 (z = (1.3e308, 1.3e308); from a 2,000-module
/// campaign at seed 2718281, w = -1 + 62.6i): XLA takes ln|z| from |z| in f64, inf, so both
/// parts are NaN, where the exact power is about 1e-245. That passes; a wrong finite value does
/// not, nor (NaN, NaN) for z = (1.2e308, 1.2e308), whose modulus f64 holds (XLA gives a finite
/// power there, measured).
#[test]
fn a_complex_power_of_a_base_whose_modulus_overflows_may_be_nan_and_only_then() {
    let m = hlo::parse::parse_module(
        "HloModule p\n\nENTRY main {\n  z = c128[] parameter(0)\n  w = c128[] parameter(1)\n  \
         ROOT r = c128[] power(z, w)\n}\n",
    )
    .unwrap();
    let c128 = |re: f64, im: f64| {
        Literal::Array(
            ArrayLiteral::from_bytes(
                PrimitiveType::C128,
                vec![],
                re.to_le_bytes()
                    .into_iter()
                    .chain(im.to_le_bytes())
                    .collect(),
            )
            .unwrap(),
        )
    };
    let w = c128(-1.0, 62.59709347969411);
    let over = [c128(1.3e308, 1.3e308), w.clone()];
    let nan = judge_outcome(&m, &over, xla_result(c128(f64::NAN, f64::NAN)));
    assert!(!nan.is_bug(), "{nan:?}");
    let wrong = judge_outcome(&m, &over, xla_result(c128(1.0, 0.0)));
    assert_eq!(wrong.kind, VerdictKind::Mismatch, "{wrong:?}");
    let held = [c128(1.2e308, 1.2e308), w];
    let nan_held = judge_outcome(&m, &held, xla_result(c128(f64::NAN, f64::NAN)));
    assert_eq!(nan_held.kind, VerdictKind::Mismatch, "{nan_held:?}");
}

/// The output that makes a difference a bug is the one the proof shows outside the legitimate
/// results, not the first that differs (seen in a 1,458-module campaign at seed 20261201): f64
/// `multiply(5e-324, inf)` is NaN on XLA CPU, a flushed subnormal times inf, which the set
/// allows, while a `power(2, 3)` of 9 is wrong. Both outputs differ; the bug is output 1, so a
/// minimization keeps the power, not the multiply.
#[test]
fn the_bug_output_is_the_first_with_an_element_outside_its_set() {
    let m = hlo::parse::parse_module(
        "HloModule t\n\nENTRY main {\n  x = f64[1] parameter(0)\n  y = f64[1] parameter(1)\n  \
         m = f64[1] multiply(x, y)\n  w = f64[1] parameter(2)\n  z = f64[1] parameter(3)\n  \
         p = f64[1] power(z, w)\n  ROOT t = (f64[1], f64[1]) tuple(m, p)\n}\n",
    )
    .unwrap();
    let f64s = |v: f64| {
        Literal::Array(
            ArrayLiteral::from_bytes(PrimitiveType::F64, vec![1], v.to_le_bytes().to_vec())
                .unwrap(),
        )
    };
    let inputs = [f64s(5e-324), f64s(f64::INFINITY), f64s(3.0), f64s(2.0)];
    let xla = Outcome::Ok(RunResult {
        outputs: vec![f64s(f64::NAN), f64s(9.0)],
        result_shape: None,
        timings: Default::default(),
        optimized_hlo: None,
        before_optimizations_hlo: None,
        dump_dir: None,
    });
    let v = judge_outcome(&m, &inputs, xla);
    assert_eq!(v.kind, VerdictKind::Mismatch, "{v:?}");
    assert_eq!(v.mismatched_outputs, vec![0, 1], "{v:?}");
    assert_eq!(v.bug_output(), Some(1), "{v:?}");
}

/// The proof encloses only the outputs that differ (the module reduced to their cone) and
/// proves the same as over the whole module: output 0 (an exp of a 4096-element array) agrees,
/// output 1 is one ulp off a product that is exact.
#[test]
fn the_proof_over_the_differing_outputs_is_the_proof_over_the_module() {
    let m = hlo::parse::parse_module(
        "HloModule t\n\nENTRY main {\n  x = f32[4096] parameter(0)\n  e = f32[4096] \
         exponential(x)\n  y = f32[2] parameter(1)\n  p = f32[2] multiply(y, y)\n  \
         ROOT t = (f32[4096], f32[2]) tuple(e, p)\n}\n",
    )
    .unwrap();
    let xs: Vec<f32> = (0..4096).map(|i| i as f32 / 1024.0).collect();
    let inputs = [f32_array(vec![4096], &xs), f32_array(vec![2], &[3.0, 0.5])];
    let oracle = InterpBackend::new().run_module(&m, &inputs);
    let oracle_r = oracle.as_ok().unwrap().clone();
    let wrong = f32::from_bits(9.0f32.to_bits() + 1);
    let xla = Outcome::Ok(RunResult {
        outputs: vec![
            oracle_r.outputs[0].clone(),
            f32_array(vec![2], &[wrong, 0.25]),
        ],
        ..oracle_r.clone()
    });
    let outcomes = vec![("interp".to_string(), oracle), ("xla-cpu".to_string(), xla)];
    let tol = Tolerance {
        scale: 1e-9,
        ..Tolerance::for_module(&m)
    };
    let reduced = judge::proof::prove(&m, &inputs, &oracle_r, &outcomes, &tol);
    let enc = interp::enclose::enclose(&m, &inputs, &Default::default()).unwrap();
    let whole = judge::proof::check(&enc, &oracle_r, &outcomes, &tol);
    assert!(reduced.proves(), "{reduced:?}");
    assert_eq!(reduced.outside, whole.outside);
    assert_eq!(
        (
            reduced.outside_count,
            reduced.inside_count,
            reduced.inconsistent_count
        ),
        (
            whole.outside_count,
            whole.inside_count,
            whole.inconsistent_count
        )
    );
    assert_eq!(reduced.outside[0].output, 1);
}

/// rsqrt of a set that holds both zeros: -inf at -0, +inf at +0, and (0, inf] between +0 and
/// the top. The imaginary parts of the RFFT of a constant are zeros in exact arithmetic; XLA
/// CPU returns +-0 there, so rsqrt gives +-inf (the NEW bucket 6f82878c of the nightly at seed
/// 1414213, where the set [-inf, 0] judged +inf a mismatch). A negative finite value, which
/// rsqrt never returns, stays a mismatch.
#[test]
fn rsqrt_of_a_set_holding_both_zeros_allows_both_infinities_and_no_negative_number() {
    let text = "HloModule f\n\nENTRY main {\n  c = f32[] constant(1)\n  b = f32[1,16] broadcast(c), dimensions={}\n  f = c64[1,9] fft(b), fft_type=RFFT, fft_length={16}\n  i = f32[1,9] imag(f)\n  ROOT r = f32[1,9] rsqrt(i)\n}\n";
    let m = hlo::parse::parse_module(text).unwrap();
    let (inf, ninf) = (f32::INFINITY, f32::NEG_INFINITY);
    let xla = [inf, inf, ninf, inf, inf, inf, inf, inf, ninf];
    let v = judge_outcome(&m, &[], xla_result(f32_array(vec![1, 9], &xla)));
    assert!(!v.is_bug(), "{v:?}");
    let mut wrong = xla;
    wrong[3] = -3.0;
    let v = judge_outcome(&m, &[], xla_result(f32_array(vec![1, 9], &wrong)));
    assert_eq!(v.kind, VerdictKind::Mismatch, "{v:?}");
    assert!(
        v.proof
            .as_ref()
            .is_some_and(|p| p.outside.iter().any(|o| o.flat == 3)),
        "{v:?}"
    );
}

/// The voter labels a mismatch; the proof stays its evidence (the vote's classification used to
/// replace the verdict, proof and all, so findings were stored without it). The oracle itself
/// votes here.
#[test]
fn a_voted_mismatch_keeps_its_proof() {
    let m = hlo::parse::parse_module(SATURATED).unwrap();
    let inputs = [f64_scalar(-40.0)];
    let oracle = InterpBackend::new();
    let outcomes = vec![
        ("interp".to_string(), oracle.run_module(&m, &inputs)),
        ("xla-cpu".to_string(), xla_result(f64_scalar(1234.5))),
    ];
    let judge = Judge {
        voter: Some(&oracle),
        policy: judge::Policy {
            vote: true,
            ..judge::Policy::VERDICT.explaining()
        },
        ..Judge::offline()
    };
    let v = judge
        .judge(&Trial {
            module: &m,
            text: None,
            inputs: &inputs,
            outcomes: &outcomes,
            reruns: &[],
            tolerance: &Tolerance::for_module(&m),
        })
        .verdict;
    assert_eq!(v.kind, VerdictKind::Mismatch, "{v:?}");
    assert!(v.vote.is_some_and(|s| s != "not asked"));
    assert!(
        v.proof.as_ref().is_some_and(|p| p.proves()),
        "{:?}",
        v.proof
    );
    assert!(v.message.contains("outside the results"), "{}", v.message);
}

/// A dot's products that are subnormal may be flushed to zero (XLA CPU's flush-to-zero): f32
/// 1.2e-38 times -0.14 and -0.99 is -0 on XLA CPU (both products flush; the NEW bucket
/// f9a59895 of the nightly at seed 6180339), and a c64 product whose partial product
/// 1.2e-38 * -0.25 flushes moves the real part by that product (bucket c34d52e7 there). A
/// value beyond what the flushed products can move stays a mismatch.
#[test]
fn a_dot_may_flush_its_subnormal_products_and_move_by_no_more() {
    let m = hlo::parse::parse_module(
        "HloModule d\n\nENTRY main {\n  a = f32[2,2] parameter(0)\n  b = f32[2,1] parameter(1)\n  ROOT d = f32[2,1] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}\n",
    )
    .unwrap();
    let tiny = f32::MIN_POSITIVE;
    let inputs = [
        f32_array(vec![2, 2], &[0.0, -0.14387098, 0.0, -0.99277633]),
        f32_array(vec![2, 1], &[tiny, tiny]),
    ];
    let v = judge_outcome(&m, &inputs, xla_result(f32_array(vec![2, 1], &[0.0, -0.0])));
    assert!(!v.is_bug(), "{v:?}");
    let v = judge_outcome(
        &m,
        &inputs,
        xla_result(f32_array(vec![2, 1], &[0.0, -1e-37])),
    );
    assert_eq!(v.kind, VerdictKind::Mismatch, "{v:?}");

    let m = hlo::parse::parse_module(
        "HloModule c\n\nENTRY main {\n  a = c64[1,1] parameter(0)\n  c = c64[1] constant({(-8, -0.25)})\n  ROOT d = c64[1] dot(a, c), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
    )
    .unwrap();
    let c64 = |dims: Vec<i64>, re: f32, im: f32| {
        bytes_array(
            PrimitiveType::C64,
            dims,
            [re.to_le_bytes(), im.to_le_bytes()].concat(),
        )
    };
    let inputs = [c64(vec![1, 1], tiny, tiny)];
    let flushed = c64(vec![1], -9.403955e-38, -9.697828e-38);
    let v = judge_outcome(&m, &inputs, xla_result(flushed));
    assert!(!v.is_bug(), "{v:?}");
    let wrong = c64(vec![1], -2e-37, -9.697828e-38);
    let v = judge_outcome(&m, &inputs, xla_result(wrong));
    assert_eq!(v.kind, VerdictKind::Mismatch, "{v:?}");
}

/// power of an f8e4m3fn value that overflows the type (64^64) converted to f16: NaN in the type,
/// or inf where XLA computed the power in f16 and dropped the round trip (excess precision, as
/// for f8 arithmetic: the NEW bucket 46743168 of the nightly at seed 3819421). A finite value
/// the function never gives there stays a mismatch.
#[test]
fn an_f8_power_that_overflows_may_be_the_f16_infinity_and_no_small_number() {
    let m = hlo::parse::parse_module(
        "HloModule p\n\nENTRY main {\n  x = f8e4m3fn[1] parameter(0)\n  p = f8e4m3fn[1] power(x, x)\n  ROOT c = f16[1] convert(p)\n}\n",
    )
    .unwrap();
    let f8 = |v: u8| bytes_array(PrimitiveType::F8E4M3FN, vec![1], vec![v]);
    let f16 = |bits: u16| bytes_array(PrimitiveType::F16, vec![1], bits.to_le_bytes().to_vec());
    // 64 in f8e4m3fn: exponent 6 + bias 7 = 13, mantissa 0.
    let inputs = [f8(13 << 3)];
    let v = judge_outcome(&m, &inputs, xla_result(f16(0x7c00)));
    assert!(!v.is_bug(), "{v:?}");
    // 100.0 in f16.
    let v = judge_outcome(&m, &inputs, xla_result(f16(0x5640)));
    assert_eq!(v.kind, VerdictKind::Mismatch, "{v:?}");
}

/// A select-and-scatter whose only source is the smallest f64 subnormal, scattered onto +0 and
/// then sorted (descending, total order, stable) with an iota payload. XLA CPU flushes the sum
/// (its select-and-scatter output is all +0, measured), so every key ties and the stable sort
/// keeps the payload in order: `{0, 1, 2, 3}`; the oracle's exact sum orders element 1 first,
/// `{1, 0, 2, 3}`. A key that may be flushed to the +0 of its neighbour may tie with it, so
/// either order is legitimate; a payload no order of those keys gives is still a mismatch.
/// (Met in a nightly at seed 8314159, bucket d8b593c43ff7d5aa.)
const SCATTERED_SUBNORMAL_SORT: &str = r#"HloModule m

%ge (a: f64[], b: f64[]) -> pred[] {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  ROOT %c = pred[] compare(%a, %b), direction=GE, type=TOTALORDER
}

%add (x: f64[], y: f64[]) -> f64[] {
  %x = f64[] parameter(0)
  %y = f64[] parameter(1)
  ROOT %s = f64[] add(%x, %y)
}

%gt (p: f64[], q: f64[], r: s32[], t: s32[]) -> pred[] {
  %p = f64[] parameter(0)
  %q = f64[] parameter(1)
  %r = s32[] parameter(2)
  %t = s32[] parameter(3)
  ROOT %c = pred[] compare(%p, %q), direction=GT, type=TOTALORDER
}

ENTRY %main (op: f64[4], src: f64[2]) -> s32[4] {
  %op = f64[4] parameter(0)
  %src = f64[2] parameter(1)
  %z = f64[] constant(0)
  %sas = f64[4] select-and-scatter(%op, %src, %z), window={size=2 stride=2}, select=%ge, scatter=%add
  %pay = s32[4] iota(), iota_dimension=0
  %sort = (f64[4], s32[4]) sort(%sas, %pay), dimensions={0}, is_stable=true, to_apply=%gt
  ROOT %g = s32[4] get-tuple-element(%sort), index=1
}
"#;

#[test]
fn a_sort_key_that_may_flush_to_a_tied_zero_allows_the_stable_order_and_no_other() {
    let m = hlo::parse::parse_module(SCATTERED_SUBNORMAL_SORT).unwrap();
    let f64s = |v: &[f64]| {
        bytes_array(
            PrimitiveType::F64,
            vec![v.len() as i64],
            v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        )
    };
    let s32s = |v: &[i32]| {
        bytes_array(
            PrimitiveType::S32,
            vec![v.len() as i64],
            v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        )
    };
    let inputs = [f64s(&[1.0, 2.0, 3.0, 4.0]), f64s(&[5e-324, 0.0])];
    let v = judge_outcome(&m, &inputs, xla_result(s32s(&[0, 1, 2, 3])));
    assert!(v.kind.agrees(), "{v:?}");
    let v = judge_outcome(&m, &inputs, xla_result(s32s(&[0, 2, 1, 3])));
    assert_eq!(v.kind, VerdictKind::Mismatch, "{v:?}");
}

/// remainder(select(p > 0, p, 1) + 1.5, 1.5) for a subnormal p: XLA CPU's compare reads p as
/// zero (denormals are zero), selects 1, and 2.5 rem 1.5 is 1; the oracle's is (p + 1.5) rem
/// 1.5 = 0. The remainder of a set of dividends is between 0 and the dividends' far end (the
/// set was clipped at their near end, 1.5, and held neither 0 nor 1: nightly at seed 1732050,
/// bucket 2031546838ffcf16); a value no dividend gives (2) stays a mismatch.
#[test]
fn the_remainder_of_a_set_of_dividends_reaches_down_to_zero_and_no_further_than_the_divisor() {
    const M: &str = "HloModule m\n\nENTRY %main (p: f32[2]) -> f32[2] {\n  %p = f32[2] parameter(0)\n  %z = f32[] constant(0)\n  %zb = f32[2] broadcast(%z), dimensions={}\n  %gt = pred[2] compare(%p, %zb), direction=GT\n  %one = f32[] constant(1)\n  %ob = f32[2] broadcast(%one), dimensions={}\n  %s = f32[2] select(%gt, %p, %ob)\n  %k = f32[] constant(1.5)\n  %kb = f32[2] broadcast(%k), dimensions={}\n  %a = f32[2] add(%s, %kb)\n  ROOT %r = f32[2] remainder(%a, %kb)\n}\n";
    let m = hlo::parse::parse_module(M).unwrap();
    let inputs = [f32_array(vec![2], &[f32::from_bits(1), 0.0])];
    let v = judge_outcome(&m, &inputs, xla_result(f32_array(vec![2], &[1.0, 1.0])));
    assert!(v.kind.agrees(), "{v:?}");
    let v = judge_outcome(&m, &inputs, xla_result(f32_array(vec![2], &[2.0, 1.0])));
    assert_eq!(v.kind, VerdictKind::Mismatch, "{v:?}");
}

/// An f8e4m3fn iota converted to f16: 465 is past f8e4m3fn's largest finite value (448), so NaN
/// in the type; XLA CPU evaluates the iota in a wider type under its default excess precision
/// and keeps 465 (measured; NaN with `xla_allow_excess_precision=false`). The iota's set holds
/// both, as an overflowing f8 result's does; 4000 at that index stays a mismatch, and so does
/// -500 at index 17 (beyond the f8 tolerance around the set [16, 18]).
#[test]
fn an_f8_iota_past_its_largest_value_may_keep_the_wider_value() {
    let m = hlo::parse::parse_module(
        "HloModule m\n\nENTRY %main () -> f16[466] {\n  %i = f8e4m3fn[466] iota(), iota_dimension=0\n  ROOT %c = f16[466] convert(%i)\n}\n",
    )
    .unwrap();
    let f16s = |v: &[f32]| {
        let s: Vec<hlo::Scalar> = v.iter().map(|&x| hlo::Scalar::F(x as f64)).collect();
        Literal::Array(
            ArrayLiteral::from_scalars(PrimitiveType::F16, vec![v.len() as i64], &s).unwrap(),
        )
    };
    let wide: Vec<f32> = (0..466).map(|k| k as f32).collect();
    let v = judge_outcome(&m, &[], xla_result(f16s(&wide)));
    assert!(v.kind.agrees(), "{v:?}");
    let mut wrong = wide.clone();
    wrong[465] = 4000.0;
    let v = judge_outcome(&m, &[], xla_result(f16s(&wrong)));
    assert_eq!(v.kind, VerdictKind::Mismatch, "{v:?}");
    let mut wrong = wide;
    wrong[17] = -500.0;
    let v = judge_outcome(&m, &[], xla_result(f16s(&wrong)));
    assert_eq!(v.kind, VerdictKind::Mismatch, "{v:?}");
}

/// A backend may refuse a dot `algorithm` it does not implement (the semantics table's dot row,
/// after the StableHLO spec): that refusal is `unsupported`, never a finding; the same refusal
/// of a module without an algorithm stays a rejection of a valid module.
#[test]
fn refusing_an_unimplemented_dot_algorithm_is_allowed_and_other_refusals_are_not() {
    let with = "HloModule d\n\nENTRY main {\n  a = f32[2] parameter(0)\n  b = f32[2] parameter(1)\n  ROOT d = f32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}, algorithm=dot_bf16_bf16_f32_x6\n}\n";
    let without = with.replace(", algorithm=dot_bf16_bf16_f32_x6", "");
    let inputs = [
        f32_array(vec![2], &[1.0, 2.0]),
        f32_array(vec![2], &[3.0, 4.0]),
    ];
    let refused = || Outcome::Rejected {
        stage: engine::backend::Stage::Compile,
        message: "INVALID_ARGUMENT: Algorithm not supported by the ElementalIrEmitter: \
                  ALG_DOT_BF16_BF16_F32_X6"
            .into(),
    };
    let m = hlo::parse::parse_module(with).unwrap();
    let v = judge_outcome(&m, &inputs, refused());
    assert_eq!(v.kind, VerdictKind::Unsupported, "{v:?}");
    assert!(!v.is_bug());
    let m = hlo::parse::parse_module(&without).unwrap();
    let v = judge_outcome(&m, &inputs, refused());
    assert_eq!(v.kind, VerdictKind::Rejected, "{v:?}");
}

fn int_result(ty: PrimitiveType, dims: Vec<i64>, v: &[i64]) -> Outcome {
    let bytes: Vec<u8> = v
        .iter()
        .flat_map(|&x| match ty.bit_width() {
            8 => vec![x as u8],
            _ => (x as i32).to_le_bytes().to_vec(),
        })
        .collect();
    xla_result(bytes_array(ty, dims, bytes))
}

/// An s4 dot whose sum (75) overflows s4, read through a convert to s8: the StableHLO spec
/// leaves the behaviour of an integer overflow to the implementation, and XLA CPU computes s4
/// in a wider type and never wraps it (75, where the wrapped sum is -5). Both are legitimate.
/// The same dot on s8, where the sum fits, has exactly one result.
#[test]
fn an_overflowing_narrow_integer_dot_is_undefined_and_a_fitting_one_is_exact() {
    let dot = |t: &str| {
        hlo::parse::parse_module(&format!(
            "HloModule d\n\nENTRY main {{\n  c = {t}[] constant(5)\n  b = {t}[3] broadcast(c), dimensions={{}}\n  d = {t}[] dot(b, b), lhs_contracting_dims={{0}}, rhs_contracting_dims={{0}}\n  ROOT r = s8[] convert(d)\n}}\n"
        ))
        .unwrap()
    };
    let s4 = dot("s4");
    for v in [75, -5] {
        let verdict = judge_outcome(&s4, &[], int_result(PrimitiveType::S8, vec![], &[v]));
        assert_eq!(verdict.kind, VerdictKind::Match, "{v}: {verdict:?}");
    }
    let s8 = dot("s8");
    let right = judge_outcome(&s8, &[], int_result(PrimitiveType::S8, vec![], &[75]));
    assert_eq!(right.kind, VerdictKind::Match, "{right:?}");
    let wrong = judge_outcome(&s8, &[], int_result(PrimitiveType::S8, vec![], &[74]));
    assert_eq!(wrong.kind, VerdictKind::Mismatch, "{wrong:?}");
}

/// A u4 iota past 15 overflows (implementation-defined behaviour): XLA CPU's unwrapped 16..25,
/// read through a convert to u8, passes; an iota that fits u4 is exact, and a wrong element of
/// it is a mismatch.
#[test]
fn an_overflowing_narrow_iota_is_undefined_past_its_range_only() {
    let iota = |n: usize| {
        hlo::parse::parse_module(&format!(
            "HloModule i\n\nENTRY main {{\n  i = u4[{n}] iota(), iota_dimension=0\n  ROOT r = u8[{n}] convert(i)\n}}\n"
        ))
        .unwrap()
    };
    let unwrapped: Vec<i64> = (0..20).collect();
    let v = judge_outcome(
        &iota(20),
        &[],
        int_result(PrimitiveType::U8, vec![20], &unwrapped),
    );
    assert_eq!(v.kind, VerdictKind::Match, "{v:?}");
    let mut wrong: Vec<i64> = (0..20).collect();
    wrong[3] = 4;
    let v = judge_outcome(
        &iota(20),
        &[],
        int_result(PrimitiveType::U8, vec![20], &wrong),
    );
    assert_eq!(v.kind, VerdictKind::Mismatch, "{v:?}");
}

/// C99 gives cpow no special values (G.6.4.1): a zero base may give (0, -0) (XLA's constant
/// folding) or NaN parts (its compiled code). A nonzero base has one result within the
/// normwise bound: a wrong sign there is a mismatch.
#[test]
fn a_complex_power_of_zero_is_implementation_defined_and_of_one_is_not() {
    let m = |base: &str| {
        hlo::parse::parse_module(&format!(
            "HloModule p\n\nENTRY main {{\n  e = c64[] constant((8, 7))\n  b = c64[] constant({base})\n  ROOT p = c64[] power(b, e)\n}}\n"
        ))
        .unwrap()
    };
    for v in [(0.0, -0.0), (f32::NAN, f32::NAN)] {
        let verdict = judge_outcome(&m("(0, 0)"), &[], xla_result(c64_scalar(v.0, v.1)));
        assert_eq!(verdict.kind, VerdictKind::Match, "{v:?}: {verdict:?}");
    }
    // 1^(8+7i) = 1.
    let right = judge_outcome(&m("(1, 0)"), &[], xla_result(c64_scalar(1.0, 0.0)));
    assert_eq!(right.kind, VerdictKind::Match, "{right:?}");
    let wrong = judge_outcome(&m("(1, 0)"), &[], xla_result(c64_scalar(-1.0, 0.0)));
    assert_eq!(wrong.kind, VerdictKind::Mismatch, "{wrong:?}");
}

fn f32_scalar(v: f32) -> Literal {
    f32_array(vec![], &[v])
}

/// An f32 add is correctly rounded (IEEE 754 round-to-nearest): 3.6937149 + 0.72728997 is
/// exactly 4.42100483..., whose nearest f32 is 4.4210048 (the other neighbour, 4.4210052, is
/// seven times further). The nearest passes; its neighbour one ulp up is a mismatch.
#[test]
fn a_correctly_rounded_add_one_ulp_off_is_a_mismatch() {
    let m = hlo::parse::parse_module(
        "HloModule a\n\nENTRY main {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(y, x)\n}\n",
    )
    .unwrap();
    let inputs = [f32_scalar(3.693_714_9), f32_scalar(0.727_289_97)];
    let nearest = 3.693_714_9f32 + 0.727_289_97f32;
    let right = judge_outcome(&m, &inputs, xla_result(f32_scalar(nearest)));
    assert_eq!(right.kind, VerdictKind::Match, "{right:?}");
    let up = f32::from_bits(nearest.to_bits() + 1);
    let wrong = judge_outcome(&m, &inputs, xla_result(f32_scalar(up)));
    assert_eq!(wrong.kind, VerdictKind::Mismatch, "{wrong:?}");
}

fn bf16_scalar(v: f32) -> Literal {
    // Round to nearest even into bf16's 16 bits.
    let x = v.to_bits();
    let b = (((x + 0x7fff + ((x >> 16) & 1)) >> 16) as u16)
        .to_le_bytes()
        .to_vec();
    bytes_array(PrimitiveType::Bf16, vec![], b)
}

/// An approximated function of a subnormal operand is implementation-defined (the semantics
/// table's SubnormalOperand case: XLA CPU's flush-denormal scope, bounds measured on normal
/// operands only): XLA's -5.6e-16 for cbrt of the bf16 subnormal 9.18e-41 passes. Of a normal
/// operand the measured bound holds: a negative cube root of 8 is a mismatch.
#[test]
fn an_approximated_function_of_a_subnormal_is_implementation_defined_and_of_a_normal_is_not() {
    let m = hlo::parse::parse_module(
        "HloModule c\n\nENTRY main {\n  x = bf16[] parameter(0)\n  ROOT r = bf16[] cbrt(x)\n}\n",
    )
    .unwrap();
    let sub = [bf16_scalar(9.1835e-41)];
    let v = judge_outcome(&m, &sub, xla_result(bf16_scalar(-5.585_81e-16)));
    assert_eq!(v.kind, VerdictKind::Match, "{v:?}");
    let normal = [bf16_scalar(8.0)];
    let v = judge_outcome(&m, &normal, xla_result(bf16_scalar(2.0)));
    assert_eq!(v.kind, VerdictKind::Match, "{v:?}");
    let v = judge_outcome(&m, &normal, xla_result(bf16_scalar(-2.0)));
    assert_eq!(v.kind, VerdictKind::Mismatch, "{v:?}");
}

/// The value of atan2 of subnormal operands is the implementation's (SubnormalOperand), its
/// range is not: any value in [-pi, pi] passes (0, as of operands read as zero, or pi/4), NaN
/// is a mismatch (C 7.12.4.4: atan2 of finite operands is in [-pi, pi]; Annex F.9.1.4 has no
/// domain error).
#[test]
fn atan2_of_subnormals_may_take_any_value_of_its_range_but_not_nan() {
    let m = hlo::parse::parse_module(
        "HloModule a\n\nENTRY main {\n  y = f32[] parameter(0)\n  x = f32[] parameter(1)\n  ROOT r = f32[] atan2(y, x)\n}\n",
    )
    .unwrap();
    let sub = [f32_scalar(1e-40), f32_scalar(1e-40)];
    for legit in [0.0, std::f32::consts::FRAC_PI_4, -std::f32::consts::PI] {
        let v = judge_outcome(&m, &sub, xla_result(f32_scalar(legit)));
        assert_eq!(v.kind, VerdictKind::Match, "{legit}: {v:?}");
    }
    let v = judge_outcome(&m, &sub, xla_result(f32_scalar(f32::NAN)));
    assert_eq!(v.kind, VerdictKind::Mismatch, "{v:?}");
    let v = judge_outcome(&m, &sub, xla_result(f32_scalar(4.0)));
    assert_eq!(v.kind, VerdictKind::Mismatch, "{v:?}");
}

/// z^z at z = (0.030219904277059673, -60.88284759993845) in c128 (structural seed 700005):
/// the angle of the result is about -250, so the parts are ill-conditioned. XLA CPU's
/// (1.5026904461761566e-42, 3.0675120947753994e-42) is the value Python's complex power gives
/// and within 1.3e-15 of exp(z log z): it passes. The conjugate, and a real part 1e-9 off, fail.
#[test]
fn an_ill_conditioned_complex_power_holds_the_exact_value_and_not_its_conjugate() {
    let m = hlo::parse::parse_module(
        "HloModule p\n\nENTRY main {\n  x = c128[] parameter(0)\n  ROOT r = c128[] power(x, x)\n}\n",
    )
    .unwrap();
    let z = [c128_scalar(0.030219904277059673, -60.88284759993845)];
    let (re, im) = (1.5026904461761566e-42, 3.0675120947753994e-42);
    let v = judge_outcome(&m, &z, xla_result(c128_scalar(re, im)));
    assert!(!v.is_bug(), "{v:?}");
    let v = judge_outcome(&m, &z, xla_result(c128_scalar(re, -im)));
    assert_eq!(v.kind, VerdictKind::Mismatch, "{v:?}");
    let v = judge_outcome(&m, &z, xla_result(c128_scalar(re * (1.0 + 1e-9), im)));
    assert_eq!(v.kind, VerdictKind::Mismatch, "{v:?}");
}

/// Complex cos of (0.5, 89.2) is finite (about 3.4e38 * (0.88, -0.48) / 1.3) but XLA CPU's
/// cosh(89.2) overflows f32 on the way: infinities of the parts' signs pass. At (0.5, 10),
/// where nothing overflows, an infinity is a mismatch.
#[test]
fn a_complex_cos_may_overflow_where_its_hyperbolic_factor_does_and_nowhere_else() {
    let m = hlo::parse::parse_module(
        "HloModule c\n\nENTRY main {\n  x = c64[] parameter(0)\n  ROOT r = c64[] cosine(x)\n}\n",
    )
    .unwrap();
    let big = [c64_scalar(0.5, 89.2)];
    let v = judge_outcome(
        &m,
        &big,
        xla_result(c64_scalar(f32::INFINITY, f32::NEG_INFINITY)),
    );
    assert_eq!(v.kind, VerdictKind::Match, "{v:?}");
    let small = [c64_scalar(0.5, 10.0)];
    let v = judge_outcome(
        &m,
        &small,
        xla_result(c64_scalar(f32::INFINITY, f32::NEG_INFINITY)),
    );
    assert_eq!(v.kind, VerdictKind::Mismatch, "{v:?}");
}

/// atan2((0, 0), (-6, 4.25)) lands on log's branch cut (the quotient is -1): +pi and -pi are
/// both legitimate real parts. With a nonzero y, (1, 0), nothing is on the cut: the real part
/// negated is a mismatch.
#[test]
fn a_complex_atan2_on_the_branch_cut_takes_either_side_and_off_it_one() {
    let m = |y: &str| {
        hlo::parse::parse_module(&format!(
            "HloModule a\n\nENTRY main {{\n  y = c64[] constant({y})\n  x = c64[] constant((-6, 4.25))\n  ROOT r = c64[] atan2(y, x)\n}}\n"
        ))
        .unwrap()
    };
    let pi = std::f32::consts::PI;
    for re in [pi, -pi] {
        let v = judge_outcome(&m("(0, 0)"), &[], xla_result(c64_scalar(re, 0.0)));
        assert_eq!(v.kind, VerdictKind::Match, "{re}: {v:?}");
    }
    let off = m("(1, 0)");
    let oracle = InterpBackend::new().run_module(&off, &[]);
    let Outcome::Ok(r) = &oracle else {
        panic!("{oracle:?}")
    };
    let z = r.outputs[0].leaves()[0].get(0);
    let hlo::Scalar::C(re, im) = z else {
        panic!("{z:?}")
    };
    let v = judge_outcome(&off, &[], xla_result(c64_scalar(-(re as f32), im as f32)));
    assert_eq!(v.kind, VerdictKind::Mismatch, "{v:?}");
}

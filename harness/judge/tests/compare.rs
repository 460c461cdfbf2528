//! The comparator's rules (judge::compare): which elements differ (every element that is not the
//! same value: bits, or NaN against NaN), and the error figures it reports about them (default
//! float bounds widened by XLA's freedoms: reductions, excess precision, transcendentals, narrow
//! types), which decide nothing: the set of legitimate results does (`tests/judge.rs`).

use hlo::{ArrayLiteral, Literal, Opcode, PrimitiveType, Scalar};
use judge::compare::{compare, hints_for, output_opcodes, Tolerance, ToleranceHint};
use PrimitiveType::*;

fn arr(ty: PrimitiveType, vals: &[Scalar]) -> Literal {
    Literal::Array(ArrayLiteral::from_scalars(ty, vec![vals.len() as i64], vals).unwrap())
}
fn f(ty: PrimitiveType, vals: &[f64]) -> Literal {
    arr(ty, &vals.iter().map(|v| Scalar::F(*v)).collect::<Vec<_>>())
}
fn with_hint(h: ToleranceHint) -> Tolerance {
    Tolerance {
        hints: vec![h],
        ..Tolerance::default()
    }
}
/// Whether every element of `a` is within the tolerance figure of `e` (an error figure: the
/// elements may still differ, and the set decides them).
fn within(e: &Literal, a: &Literal, t: &Tolerance) -> bool {
    let c = compare(e, a, t);
    c.structure.is_none()
        && c.outputs
            .iter()
            .all(|o| o.structure.is_none() && o.beyond_tolerance == 0)
}

/// Only the same value is the same: one ulp, a signed zero, a flushed subnormal and a complex
/// infinity's other part all differ, so that the set decides each of them.
#[test]
fn every_difference_goes_to_the_set() {
    let t = Tolerance::default();
    let tiny = f32::from_bits(1) as f64;
    for (e, a) in [
        (f(F32, &[1.0]), f(F32, &[1.0000001192092896])),
        (f(F32, &[0.0]), f(F32, &[-0.0])),
        (f(F32, &[tiny]), f(F32, &[0.0])),
        (
            arr(C64, &[Scalar::C(f64::INFINITY, f64::INFINITY)]),
            arr(C64, &[Scalar::C(f64::INFINITY, f64::NAN)]),
        ),
    ] {
        let c = compare(&e, &a, &t);
        assert!(!c.is_match(), "{e:?} {a:?}");
        assert_eq!(c.outputs[0].mismatched_elements, 1);
    }
}

#[test]
fn integers_and_pred_must_be_equal() {
    let t = Tolerance::default();
    let e = arr(S32, &[Scalar::S(1), Scalar::S(2), Scalar::S(3)]);
    assert!(compare(&e, &e.clone(), &t).is_match());
    let a = arr(S32, &[Scalar::S(1), Scalar::S(2), Scalar::S(4)]);
    let c = compare(&e, &a, &t);
    assert!(!c.is_match());
    assert_eq!(c.mismatched_outputs(), vec![0]);
    assert_eq!(c.outputs[0].mismatched_elements, 1);
    assert_eq!(c.outputs[0].worst[0].index, vec![2]);
    assert_eq!(c.outputs[0].worst[0].expected, "3");
    assert_eq!(c.outputs[0].worst[0].actual, "4");
    // Off by one in a huge u64 is still a mismatch (no float rounding on the way).
    let big = arr(U64, &[Scalar::U(u64::MAX)]);
    let big1 = arr(U64, &[Scalar::U(u64::MAX - 1)]);
    assert!(!compare(&big, &big1, &t).is_match());
    let p = arr(Pred, &[Scalar::Pred(true)]);
    let q = arr(Pred, &[Scalar::Pred(false)]);
    assert!(!compare(&p, &q, &t).is_match());
}

#[test]
fn any_nan_equals_any_nan_but_not_a_number() {
    let t = Tolerance::default();
    // Different NaN payloads and signs.
    let e = Literal::Array(
        ArrayLiteral::from_bytes(
            F32,
            vec![2],
            [0x7fc00000u32.to_le_bytes(), 0xffc00001u32.to_le_bytes()].concat(),
        )
        .unwrap(),
    );
    let a = Literal::Array(
        ArrayLiteral::from_bytes(
            F32,
            vec![2],
            [0x7f800001u32.to_le_bytes(), 0x7fc00000u32.to_le_bytes()].concat(),
        )
        .unwrap(),
    );
    assert!(compare(&e, &a, &t).is_match());
    let c = compare(&f(F32, &[f64::NAN]), &f(F32, &[1.0]), &t);
    assert!(!c.is_match());
    assert_eq!(c.outputs[0].worst[0].expected, "nan");
    assert!(!compare(&f(F32, &[0.0]), &f(F32, &[f64::NAN]), &t).is_match());
}

#[test]
fn infinities_equal_only_with_the_same_sign() {
    let t = Tolerance::default();
    assert!(within(
        &f(F32, &[f64::INFINITY]),
        &f(F32, &[f64::INFINITY]),
        &t
    ));
    assert!(!within(
        &f(F32, &[f64::INFINITY]),
        &f(F32, &[f64::NEG_INFINITY]),
        &t
    ));
    assert!(!within(
        &f(F32, &[f64::INFINITY]),
        &f(F32, &[f32::MAX as f64]),
        &t
    ));
    // An approximate transcendental may overflow at the edge of the range.
    let h = with_hint(ToleranceHint {
        approximate_transcendentals: true,
        ..Default::default()
    });
    assert!(within(
        &f(F32, &[f64::INFINITY]),
        &f(F32, &[f32::MAX as f64]),
        &h
    ));
    assert!(!within(&f(F32, &[f64::INFINITY]), &f(F32, &[1e30]), &h));
    // Signed zeros are within the tolerance (and differ: the set decides).
    assert!(within(&f(F32, &[0.0]), &f(F32, &[-0.0]), &t));
}

#[test]
fn f32_relative_bound_and_report() {
    let t = Tolerance::default();
    assert!(within(&f(F32, &[1.0]), &f(F32, &[1.000001]), &t));
    let c = compare(&f(F32, &[1.0, 2.0]), &f(F32, &[1.0, 2.002]), &t);
    assert!(!c.is_match());
    let w = &c.outputs[0].worst[0];
    assert_eq!(w.index, vec![1]);
    assert!((w.rel_err - 0.001).abs() < 1e-6, "{w:?}");
    assert!(w.ulps.unwrap() > 1000);
    assert!(w.bound.rel > 0.0 && w.bound.rel < 1e-4);
    assert!(c.summary().contains("expected 2.0"));
}

#[test]
fn f64_is_tight() {
    let t = Tolerance::default();
    assert!(within(
        &f(F64, &[1.0]),
        &f(F64, &[1.0 + 4.0 * f64::EPSILON]),
        &t
    ));
    assert!(!within(&f(F64, &[1.0]), &f(F64, &[1.0 + 1e-9]), &t));
}

#[test]
fn reductions_scale_the_bound_with_their_length() {
    let e = f(F32, &[1000.0]);
    let a = f(F32, &[1000.5]);
    assert!(!within(&e, &a, &Tolerance::default()));
    let short = with_hint(ToleranceHint {
        reduction_length: 10,
        ..Default::default()
    });
    assert!(!within(&e, &a, &short));
    let long = with_hint(ToleranceHint {
        reduction_length: 10_000,
        ..Default::default()
    });
    assert!(within(&e, &a, &long));
    // Cancellation: a small result of a long reduction over large values is judged against the
    // output's magnitude.
    let e2 = f(F32, &[1e-3, 1000.0]);
    let a2 = f(F32, &[2e-3, 1000.0]);
    assert!(!within(&e2, &a2, &Tolerance::default()));
    assert!(within(&e2, &a2, &long));
}

#[test]
fn narrow_types_get_looser_bounds_and_excess_precision() {
    let t = Tolerance::default();
    // One ulp of bf16 at 1.0 is 2^-7.
    assert!(within(&f(Bf16, &[1.0]), &f(Bf16, &[1.0078125]), &t));
    assert!(!within(&f(Bf16, &[1.0]), &f(Bf16, &[1.0625]), &t));
    let ex = with_hint(ToleranceHint {
        excess_precision_possible: true,
        narrow_type: Some(Bf16),
        ..Default::default()
    });
    assert!(within(&f(Bf16, &[1.0]), &f(Bf16, &[1.0625]), &ex));
    assert!(!within(&f(Bf16, &[1.0]), &f(Bf16, &[1.25]), &ex));
    // An f32 output fed by bf16 arithmetic: a skipped bf16 rounding is allowed.
    assert!(!within(&f(F32, &[1.0]), &f(F32, &[1.00390625]), &t));
    assert!(within(&f(F32, &[1.0]), &f(F32, &[1.00390625]), &ex));
    // f16: 1 ulp = 2^-10.
    assert!(within(&f(F16, &[1.0]), &f(F16, &[1.0 + 1.0 / 1024.0]), &t));
    assert!(!within(
        &f(F16, &[1.0]),
        &f(F16, &[1.0 + 16.0 / 1024.0]),
        &t
    ));
    // f8e4m3fn: 1 ulp ok, 3 ulps not.
    assert!(within(&f(F8E4M3FN, &[1.0]), &f(F8E4M3FN, &[1.125]), &t));
    assert!(!within(&f(F8E4M3FN, &[1.0]), &f(F8E4M3FN, &[1.375]), &t));
}

#[test]
fn subnormals_flushed_to_zero_are_equal() {
    let t = Tolerance::default();
    let tiny = f32::from_bits(1) as f64;
    assert!(within(&f(F32, &[tiny]), &f(F32, &[0.0]), &t));
    // But not a normal value against zero in an output of small values.
    assert!(!within(&f(F32, &[1e-30]), &f(F32, &[0.0]), &t));
}

#[test]
fn transcendentals_allow_a_few_f32_ulps() {
    let x = 0.123456789f32;
    let y = f32::from_bits(x.to_bits() + 40);
    let z = f32::from_bits(x.to_bits() + 400);
    let t = Tolerance {
        scale: 1.0,
        abs: Some(0.0),
        ..Tolerance::default()
    };
    let tr = Tolerance {
        hints: vec![ToleranceHint {
            approximate_transcendentals: true,
            ..Default::default()
        }],
        ..t.clone()
    };
    let (e, a, b) = (
        f(F32, &[x as f64]),
        f(F32, &[y as f64]),
        f(F32, &[z as f64]),
    );
    assert!(within(&e, &a, &tr));
    assert!(!within(&e, &b, &tr));
}

#[test]
fn complex_parts_are_compared_separately() {
    let t = Tolerance::default();
    let e = arr(C64, &[Scalar::C(1.0, 2.0)]);
    assert!(within(&e, &arr(C64, &[Scalar::C(1.0, 2.0000001)]), &t));
    let c = compare(&e, &arr(C64, &[Scalar::C(1.0, 3.0)]), &t);
    assert!(!c.is_match());
    assert_eq!(c.outputs[0].worst[0].actual, "(1.0, 3.0)");
    assert!(compare(
        &arr(C64, &[Scalar::C(f64::NAN, 0.0)]),
        &arr(C64, &[Scalar::C(f64::NAN, 0.0)]),
        &t
    )
    .is_match());
}

#[test]
fn structure_differences_are_mismatches() {
    let t = Tolerance::default();
    let e = f(F32, &[1.0, 2.0]);
    let c = compare(&e, &f(F64, &[1.0, 2.0]), &t);
    assert!(!c.is_match());
    assert!(c.outputs[0].structure.as_ref().unwrap().contains("f64[2]"));
    let c = compare(&e, &f(F32, &[1.0]), &t);
    assert!(!c.is_match());
    let two = Literal::Tuple(vec![e.clone(), e.clone()]);
    let c = compare(&two, &Literal::Tuple(vec![e.clone()]), &t);
    assert!(!c.is_match());
    assert!(c.structure.unwrap().contains("2 output arrays, got 1"));
    // Tuples compare leaf by leaf, however nested.
    let nested = Literal::Tuple(vec![Literal::Tuple(vec![e.clone()]), e.clone()]);
    assert!(compare(&two, &nested, &t).is_match());
}

#[test]
fn worst_elements_come_first_and_are_capped() {
    let t = Tolerance {
        max_reported: 2,
        ..Tolerance::default()
    };
    let e = f(F32, &[1.0, 1.0, 1.0, 1.0]);
    let a = f(F32, &[1.1, 3.0, 1.0, 2.0]);
    let c = compare(&e, &a, &t);
    assert_eq!(c.outputs[0].mismatched_elements, 3);
    let idx: Vec<usize> = c.outputs[0].worst.iter().map(|w| w.flat).collect();
    assert_eq!(idx, vec![1, 3]);
}

const MODULE: &str = r#"HloModule m

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (p0: f32[4,100], p1: bf16[8], p2: f32[8]) -> (f32[4], bf16[8], f32[8], (f32[8], f32[8])) {
  %p0 = f32[4,100] parameter(0)
  %zero = f32[] constant(0)
  %r = f32[4] reduce(%p0, %zero), dimensions={1}, to_apply=%add
  %p1 = bf16[8] parameter(1)
  %m = bf16[8] multiply(%p1, %p1)
  %p2 = f32[8] parameter(2)
  %e = f32[8] exponential(%p2)
  %t = (f32[8], f32[8]) tuple(%p2, %e)
  ROOT %out = (f32[4], bf16[8], f32[8], (f32[8], f32[8])) tuple(%r, %m, %e, %t)
}
"#;

#[test]
fn hints_follow_the_ops_feeding_each_output() {
    let m = hlo::parse::parse_module(MODULE).unwrap();
    let h = hints_for(&m);
    assert_eq!(h.len(), 5, "one hint per leaf: {h:?}");
    assert_eq!(h[0].reduction_length, 100);
    assert!(!h[0].approximate_transcendentals && !h[0].excess_precision_possible);
    assert!(h[1].excess_precision_possible);
    assert_eq!(h[1].narrow_type, Some(Bf16));
    assert_eq!(h[1].reduction_length, 0);
    assert!(h[2].approximate_transcendentals && !h[2].excess_precision_possible);
    assert!(h[3].approximate_transcendentals && h[4].approximate_transcendentals);
    let ops = output_opcodes(&m, 0);
    assert!(
        ops.contains(&Opcode::Reduce) && ops.contains(&Opcode::Add),
        "{ops:?}"
    );
    assert!(!ops.contains(&Opcode::Exp));
}

#[test]
fn subnormal_inputs_are_flushed_for_the_ftz_explanation() {
    use judge::compare::flush_subnormals;
    let tiny = f32::from_bits(3) as f64;
    let ins = vec![f(F32, &[1.0, -tiny, tiny]), arr(S32, &[Scalar::S(1)])];
    let out = flush_subnormals(&ins).expect("there are subnormals");
    let a = out[0].as_array().unwrap();
    assert_eq!(a.get(0), Scalar::F(1.0));
    assert_eq!(a.bits(1), 0x8000_0000, "sign kept");
    assert_eq!(a.bits(2), 0);
    assert_eq!(out[1], ins[1]);
    assert!(flush_subnormals(&[f(F32, &[1.0, 0.0])]).is_none());
    // f64 subnormals too.
    assert!(flush_subnormals(&[f(F64, &[f64::from_bits(1)])]).is_some());
}

/// Where the oracle overflowed a narrow type and XLA's wider intermediate did not, the error
/// figure is no excuse either (the set of legitimate results decides: `tests/judge.rs`).
#[test]
fn a_narrow_overflow_avoided_is_left_to_the_set() {
    let ex = with_hint(ToleranceHint {
        excess_precision_possible: true,
        narrow_type: Some(F8E4M3FN),
        ..Default::default()
    });
    assert!(!within(
        &f(F8E4M3FN, &[f64::NAN]),
        &f(F8E4M3FN, &[400.0]),
        &ex
    ));
    let exb = with_hint(ToleranceHint {
        excess_precision_possible: true,
        narrow_type: Some(Bf16),
        ..Default::default()
    });
    assert!(!within(&f(Bf16, &[f64::INFINITY]), &f(Bf16, &[1.0]), &exb));
    assert!(!within(&f(Bf16, &[1.0]), &f(Bf16, &[f64::INFINITY]), &exb));
}

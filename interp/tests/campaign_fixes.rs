//! Oracle fixes for findings of `hlo-diff fuzz` campaigns labelled `oracle` (the StableHLO
//! reference interpreter sided with XLA CPU against ours). Each case runs a small module on the
//! interpreter and on XLA CPU with the same inputs; results must agree within a tight tolerance
//! (NaN equals NaN, infinities exactly). Complex cases are evaluated under the variant of XLA
//! CPU's own formulas (c64 in single precision): an implementation choice these tests witness;
//! the oracle's reference follows C99 Annex G (`tests/annex_g.rs`).

mod common;
use common::*;
use hlo::{Literal, PrimitiveType, Scalar};
use interp::variant::{ComplexMul, Variant};

const INF: f64 = f64::INFINITY;
const NAN: f64 = f64::NAN;

fn cplx(ty: PrimitiveType, v: &[(f64, f64)]) -> Literal {
    let s: Vec<Scalar> = v.iter().map(|&(r, i)| Scalar::C(r, i)).collect();
    lit(ty, &[v.len() as i64], &s)
}

fn unary_module(op: &str, ty: &str, n: usize) -> String {
    format!("HloModule m\n\nENTRY %main (a: {ty}[{n}]) -> {ty}[{n}] {{\n  %a = {ty}[{n}] parameter(0)\n  ROOT %r = {ty}[{n}] {op}(%a)\n}}\n")
}

fn binary_module(op: &str, ty: &str, n: usize) -> String {
    format!("HloModule m\n\nENTRY %main (a: {ty}[{n}], b: {ty}[{n}]) -> {ty}[{n}] {{\n  %a = {ty}[{n}] parameter(0)\n  %b = {ty}[{n}] parameter(1)\n  ROOT %r = {ty}[{n}] {op}(%a, %b)\n}}\n")
}

/// Runs every case on the interpreter (which must succeed) and, unless XLA is skipped, on XLA
/// CPU, and asserts agreement within `rtol` (plus an absolute 1e-30 for values XLA flushes).
fn check(cases: Vec<(String, String, Vec<Literal>, f64)>) {
    check_with(cases, 1e-30, compare)
}

type Compare = fn(&hlo::ArrayLiteral, &hlo::ArrayLiteral, f64, f64) -> Result<f64, String>;

/// [`check`] with an absolute tolerance `abs` (for results that are rounding noise around 0)
/// and a comparison of leaves.
fn check_with(cases: Vec<(String, String, Vec<Literal>, f64)>, abs: f64, compare: Compare) {
    // XLA's complex formulas in single precision for c64 (its fused multiply, atan2 and power)
    // are an implementation choice the oracle evaluates under a variant; the reference (the
    // default) computes c64 in double precision by C99 Annex G (`tests/annex_g.rs`).
    let xla_forms = Variant {
        complex_mul: ComplexMul::Fused,
        narrow_complex: true,
        ..Variant::default()
    };
    let ours: Vec<Literal> = cases
        .iter()
        .map(|(what, text, args, _)| {
            eval_with_variant(text, args, &xla_forms).unwrap_or_else(|e| panic!("{what}: {e}"))
        })
        .collect();
    if skip_xla() {
        return;
    }
    let jobs: Vec<(String, Vec<Literal>)> = cases
        .iter()
        .map(|(_, t, a, _)| (t.clone(), a.clone()))
        .collect();
    let what: Vec<String> = cases.iter().map(|c| c.0.clone()).collect();
    assert_leaves_agree_with_xla(&what, &jobs, &ours, |k, a, b| {
        compare(a, b, abs, cases[k].3).map(|_| ())
    });
}

#[test]
fn complex_tanh_of_large_real_part_is_plus_minus_one() {
    let t = unary_module("tanh", "c128", 3);
    let out = eval(
        &t,
        &[cplx(
            PrimitiveType::C128,
            &[(400.0, 3.0), (-INF, 1.0), (1.0, INF)],
        )],
    )
    .unwrap();
    let a = out.as_array().unwrap();
    assert_eq!(a.get(0), Scalar::C(1.0, -0.0));
    assert_eq!(a.get(1), Scalar::C(-1.0, 0.0));
    match a.get(2) {
        Scalar::C(r, i) => assert!(r.is_nan() && i.is_nan(), "tanh(1 + inf i) is NaN in XLA"),
        s => panic!("{s:?}"),
    }
}

#[test]
fn complex_atan2_and_divide_agree_with_xla_cpu() {
    let y = vec![
        (1.0, 1.0),
        (1.0, 0.0),
        (0.0, 0.0),
        (0.0, 1.0),
        (INF, 0.0),
        (1.0, 2.0),
        (-1.0, 0.5),
        (0.0, -0.0),
        (NAN, 0.0),
        (-0.3, 0.7),
    ];
    let x = vec![
        (1.0, 0.0),
        (0.0, 0.0),
        (1.0, 0.0),
        (1.0, 1.0),
        (1.0, 0.0),
        (0.0, 1.0),
        (-2.0, -1.0),
        (-1.0, 0.0),
        (1.0, 0.0),
        (0.2, -0.1),
    ];
    let dy = vec![
        (1.0, 1.0),
        (1.0, 0.0),
        (INF, 1.0),
        (1.0, INF),
        (INF, INF),
        (1.0, 0.0),
        (0.0, 0.0),
        (1e300, 1e300),
        (NAN, 1.0),
        (1.0, 0.0),
        (0.0, 0.0),
    ];
    let dx = vec![
        (INF, -INF),
        (INF, 0.0),
        (2.0, 1.0),
        (1.0, 1.0),
        (1.0, 1.0),
        (0.0, 0.0),
        (0.0, 0.0),
        (1e300, 1e300),
        (1.0, 0.0),
        (0.0, -0.0),
        (0.0, -0.0),
    ];
    let mut cases = Vec::new();
    for (ty, pt, rtol) in [
        ("c64", PrimitiveType::C64, 1e-5),
        ("c128", PrimitiveType::C128, 1e-12),
    ] {
        // 1e200 and 1e300 overflow c64's parts to inf; that is still a valid case.
        cases.push((
            format!("atan2 on {ty}"),
            binary_module("atan2", ty, y.len()),
            vec![cplx(pt, &y), cplx(pt, &x)],
            rtol,
        ));
        cases.push((
            format!("divide on {ty}"),
            binary_module("divide", ty, dy.len()),
            vec![cplx(pt, &dy), cplx(pt, &dx)],
            rtol,
        ));
    }
    check(cases);
}

/// Campaign finding (c64 sign): XLA computes c64 in f32; parts near 1e20..1e30 must not lose
/// precision or overflow differently.
/// Campaign finding (c128 sqrt): parts near the largest f64 make |z| overflow; XLA's result is
/// finite (sqrt(z) = 2 sqrt(z/4)).
#[test]
fn complex_overflow_in_component_precision_agrees_with_xla_cpu() {
    let y = vec![(1e20, 1e20), (-3e19, 2.0), (1.0, 1.0), (2e30, -1e30)];
    let big = vec![
        (1e308, 1e308),
        (-1.5e308, 1e308),
        (1.7e308, -1.7e308),
        (3.0, -1e308),
    ];
    let big32 = vec![(3e38, 3e38), (-3e38, 1e38), (3.4e38, -3.4e38), (3.0, -3e38)];
    check(vec![
        (
            "sign on c64 with large parts".into(),
            unary_module("sign", "c64", y.len()),
            vec![cplx(PrimitiveType::C64, &y)],
            1e-5,
        ),
        (
            "sqrt on c128 near the largest f64".into(),
            unary_module("sqrt", "c128", big.len()),
            vec![cplx(PrimitiveType::C128, &big)],
            1e-12,
        ),
        (
            "sqrt on c64 near the largest f32".into(),
            unary_module("sqrt", "c64", big32.len()),
            vec![cplx(PrimitiveType::C64, &big32)],
            1e-5,
        ),
    ]);
}

/// Campaign finding (f8/f16 convolution, labelled oracle): the lhs padding is zeros that take
/// part in the products (StableHLO: pad, then take the dot), so a NaN kernel value over a padding
/// position makes the output NaN, on XLA CPU and on the StableHLO reference interpreter; the
/// oracle used to skip padding positions. Minimized from the finding's
/// `window={size=1 pad=2_-1}, dim_labels=bf0_oi0->b0f` (XLA lowers a size-1 window to pad + dot).
#[test]
fn convolution_multiplies_padding_zeros() {
    let text = "HloModule m\n\nENTRY %main (k: f32[2,3,1]) -> f32[2,4,2] {\n  %a = f32[2,3,3] iota(), iota_dimension=2\n  %k = f32[2,3,1] parameter(0)\n  ROOT %c = f32[2,4,2] convolution(%a, %k), window={size=1 pad=2_-1}, dim_labels=bf0_oi0->b0f\n}\n";
    let k = f32s(&[2, 3, 1], &[-0.75, f32::NAN, 3.5, -2.75, 1.5, 0.5]);
    let out = eval(text, &[k.clone()]).unwrap();
    let v = vals(&out);
    // Output positions 0 and 1 read the two low padding zeros; feature 0's kernel holds NaN.
    assert!(v[0].is_nan() && v[2].is_nan() && !v[1].is_nan(), "{v:?}");
    check(vec![("conv padding".into(), text.into(), vec![k], 1e-6)]);
}

/// The same rule with lhs dilation and a size-2 window: by StableHLO's definition (and its
/// reference interpreter) every padding and dilation zero is multiplied, so NaN and inf kernel
/// values give NaN there. XLA CPU's general convolution kernel skips padding instead (0 here),
/// so this case is checked on the interpreter only; campaigns label it `xla`.
#[test]
fn convolution_dilation_holes_and_padding_take_part() {
    let text = "HloModule m\n\nENTRY %main (a: f32[1,1,3], k: f32[2,1,2]) -> f32[1,8,2] {\n  %a = f32[1,1,3] parameter(0)\n  %k = f32[2,1,2] parameter(1)\n  ROOT %c = f32[1,8,2] convolution(%a, %k), window={size=2 pad=2_2 lhs_dilate=2}, dim_labels=bf0_oi0->b0f\n}\n";
    let a = f32s(&[1, 1, 3], &[1.0, 2.0, 3.0]);
    let k = f32s(&[2, 1, 2], &[f32::NAN, 1.0, 2.0, f32::INFINITY]);
    let v = vals(&eval(text, &[a, k]).unwrap());
    // StableHLO reference interpreter's output, element by element (NaN written as NaN).
    let want = [
        f64::NAN,
        f64::NAN,
        f64::NAN,
        f64::INFINITY,
        f64::NAN,
        f64::NAN,
        f64::NAN,
        f64::INFINITY,
        f64::NAN,
        f64::NAN,
        f64::NAN,
        f64::INFINITY,
        f64::NAN,
        f64::NAN,
        f64::NAN,
        f64::NAN,
    ];
    assert_eq!(v.len(), want.len());
    for (i, (x, w)) in v.iter().zip(want).enumerate() {
        assert!(
            x.is_nan() && w.is_nan() || *x == w,
            "element {i}: {x} vs {w}; {v:?}"
        );
    }
}

/// Campaign finding (f16 reduce-precision of a NaN constant, exponent_bits=4, mantissa_bits=0):
/// with no mantissa bits no NaN is representable and the result is +inf, as the StableHLO
/// reference interpreter and XLA's constant folder (HloEvaluator) give; with mantissa bits NaN
/// stays NaN. (XLA CPU's compiled kernel keeps NaN even with 0 mantissa bits; campaigns label
/// that `xla`.) Compared with XLA on constants, which XLA folds.
#[test]
fn reduce_precision_without_mantissa_bits_turns_nan_into_inf() {
    let text = "HloModule m\n\nENTRY %main () -> (f16[2], f32[2], f64[2], bf16[2], f32[2]) {\n  %a = f16[2] constant({nan, 1.5})\n  %b = f32[2] constant({nan, 1.5})\n  %c = f64[2] constant({nan, 1.5})\n  %d = bf16[2] constant({nan, 1.5})\n  %ra = f16[2] reduce-precision(%a), exponent_bits=4, mantissa_bits=0\n  %rb = f32[2] reduce-precision(%b), exponent_bits=5, mantissa_bits=0\n  %rc = f64[2] reduce-precision(%c), exponent_bits=8, mantissa_bits=0\n  %rd = bf16[2] reduce-precision(%d), exponent_bits=3, mantissa_bits=0\n  %rk = f32[2] reduce-precision(%b), exponent_bits=5, mantissa_bits=1\n  ROOT %t = (f16[2], f32[2], f64[2], bf16[2], f32[2]) tuple(%ra, %rb, %rc, %rd, %rk)\n}\n";
    let out = eval(text, &[]).unwrap();
    let leaves = out.leaves();
    for k in 0..4 {
        let v = vals(&Literal::Array(leaves[k].clone()));
        assert_eq!(v[0], f64::INFINITY, "leaf {k}: {v:?}");
    }
    assert!(vals(&Literal::Array(leaves[4].clone()))[0].is_nan());
    check(vec![(
        "reduce-precision NaN".into(),
        text.into(),
        vec![],
        0.0,
    )]);
}

/// Campaign finding (c128 power, undecided): 0^(c + di) with d != 0 is NaN on XLA (its formula
/// takes ln 0), the oracle gave 0; 0^(c + 0i) is 0 for c > 0 and 1 for c = 0 on both.
#[test]
fn complex_power_agrees_with_xla_cpu() {
    let x = vec![
        (0.0, 0.0),
        (0.0, 0.0),
        (0.0, 0.0),
        (1.5, -0.5),
        (-2.0, 0.0),
        (0.0, 0.0),
        (3.0, 4.0),
    ];
    let y = vec![
        (2.0, 1.0),
        (2.0, 0.0),
        (0.0, 0.0),
        (0.5, 0.25),
        (0.5, 0.0),
        (-1.0, 0.0),
        (0.0, 0.0),
    ];
    let mut cases = Vec::new();
    for (ty, pt, rtol) in [
        ("c64", PrimitiveType::C64, 1e-5),
        ("c128", PrimitiveType::C128, 1e-12),
    ] {
        cases.push((
            format!("power on {ty}"),
            binary_module("power", ty, x.len()),
            vec![cplx(pt, &x), cplx(pt, &y)],
            rtol,
        ));
    }
    check(cases);
}

/// A campaign finding labelled `oracle` had a u64 start index of 2^64-1 where XLA's constant
/// folder (and the StableHLO reference) read it as s64 -1 and clamped to 0. XLA CPU's compiled
/// code, with the index as a runtime value, reads it as unsigned and clamps to the top, as the
/// oracle does: this pins the oracle to the runtime behaviour.
#[test]
fn huge_unsigned_start_indices_clamp_to_the_top_as_xla_cpu_runs_them() {
    let text = "HloModule m\n\nENTRY %main (a: f32[4], u: f32[2], i: u64[], j: u64[]) -> (f32[4], f32[2]) {\n  %a = f32[4] parameter(0)\n  %u = f32[2] parameter(1)\n  %i = u64[] parameter(2)\n  %j = u64[] parameter(3)\n  %d = f32[4] dynamic-update-slice(%a, %u, %i)\n  %s = f32[2] dynamic-slice(%a, %j), dynamic_slice_sizes={2}\n  ROOT %t = (f32[4], f32[2]) tuple(%d, %s)\n}\n";
    let mut cases = Vec::new();
    for (i, j) in [
        (u64::MAX, u64::MAX),
        (u64::MAX - 1, 1),
        (3, u64::MAX / 2 + 1),
    ] {
        let args = vec![
            f32s(&[4], &[1.0, 2.0, 3.0, 4.0]),
            f32s(&[2], &[-1.0, -2.0]),
            lit(PrimitiveType::U64, &[], &[Scalar::U(i)]),
            lit(PrimitiveType::U64, &[], &[Scalar::U(j)]),
        ];
        cases.push((
            format!("start indices {i}, {j}"),
            text.to_string(),
            args,
            0.0,
        ));
    }
    check(cases);
}

/// Campaign findings (c64/c128 atan2, labelled `oracle`): atan2(z, z) where z^2 has a zero
/// imaginary part of negative sign (z = (-0, b), (tiny, -b), (0, -b)). Inside XLA's complex
/// atan2 the square root takes that zero's sign (copysign), unlike XLA's sqrt op, which puts a
/// negative zero on the upper side; the answer flips between pi/4 and -3pi/4.
#[test]
fn complex_atan2_takes_the_sign_of_a_zero_imaginary_part() {
    let z = vec![
        (-0.0, 0.6346079),
        (5e-324, -0.018762746672594588),
        (0.0, -0.25),
        (-6.5, -2.75),
        (0.0, 0.25),
        (-0.0, -0.5),
        // |z|^2 near the largest f32: the root must come from |z|^(1/2), not exp(log(.) / 2),
        // or c64's rounding shows as 1e-6 in the imaginary part.
        (1.1710014e19, 0.0),
        (1.4678419e19, 0.0),
    ];
    let mut cases = Vec::new();
    for (ty, pt, rtol) in [
        ("c64", PrimitiveType::C64, 1e-5),
        ("c128", PrimitiveType::C128, 1e-12),
    ] {
        cases.push((
            format!("atan2(z, z) on {ty}"),
            binary_module("atan2", ty, z.len()),
            vec![cplx(pt, &z), cplx(pt, &z)],
            rtol,
        ));
    }
    // The imaginary parts are rounding noise around 0 (1e-7 in c64, 1e-16 in c128); where
    // x^2 + y^2 overflows c64, both results have a non-finite part (equal for the comparator).
    check_with(cases, 1e-6, compare_nonfinite_complex_equal);
}

/// Campaign findings (complex power, labelled `oracle`): z^w where |z|^2 underflows (the
/// smallest normal f32 in both parts) or overflows (a part near the largest f64) while |z| does
/// not. XLA computes exp(w log z) with a log that avoids |z|^2; the oracle took ln(|z|^2) and
/// gave NaN. Also 1^w and z^0 are 1 whatever the other operand (a c64 campaign finding had
/// (1, 0)^(NaN, NaN)).
#[test]
fn complex_power_of_tiny_and_huge_bases_agrees_with_xla_cpu() {
    let tiny32 = f32::MIN_POSITIVE as f64;
    let mut cases = Vec::new();
    let x32 = vec![(tiny32, tiny32), (1e30, 1e30), (2.0, 3.0)];
    let y32 = vec![(tiny32, tiny32), (0.0, 0.0), (0.5, 0.25)];
    cases.push((
        "power on c64".to_string(),
        binary_module("power", "c64", x32.len()),
        vec![
            cplx(PrimitiveType::C64, &x32),
            cplx(PrimitiveType::C64, &y32),
        ],
        1e-5,
    ));
    let x64 = vec![
        (1.7976931348623157e308, 0.7909391499294314),
        (1e-200, 1e-200),
        (1.0, 0.0),
        (1.0, 0.0),
        (1.0, 0.0),
        (1.0, 0.0),
        (1.0, -0.0),
        (NAN, NAN),
        (2.0, 0.0),
        // A positive real base to a real power: no 0 * ln(inf) in the angle (campaign finding:
        // ((-1.8e308 + 5e-324i)^2)^(-1.8e308 + 5e-324i), the subnormal read as 0 by XLA CPU).
        // With a nonzero imaginary part anywhere, NaN as before.
        (INF, -0.0),
        (INF, 0.0),
        (INF, 0.0),
        (INF, 0.0),
        (2.0, 0.0),
        (0.5, 0.0),
        (-INF, 0.0),
        (INF, 1.0),
        (INF, 0.0),
    ];
    let y64 = vec![
        (0.0, 0.0),
        (0.5, 0.0),
        (NAN, NAN),
        (INF, 0.0),
        (2.0, INF),
        (NAN, 0.0),
        (NAN, 1.0),
        (0.0, 0.0),
        (NAN, NAN),
        (-1.7976931348623157e308, 0.0),
        (-1.0, 0.0),
        (-1.0, -0.0),
        (0.5, 0.0),
        (INF, 0.0),
        (INF, 0.0),
        (2.0, 0.0),
        (-1.0, 0.0),
        (-1.0, 1e-300),
    ];
    // Infinite powers of a positive real base (campaign finding: tanh((-z)^z) for
    // z = -inf + 1e-45i, the subnormal read as 0 by XLA CPU): inf^-inf is 0 + 0i and inf^inf
    // is inf + 0i on XLA, a finite base to an infinite power NaN.
    let xi = vec![
        (INF, -0.0),
        (INF, 0.0),
        (2.0, 0.0),
        (2.0, 0.0),
        (0.5, 0.0),
        (0.5, 0.0),
        (INF, 0.0),
        (3.0, -0.0),
    ];
    let yi = vec![
        (-INF, 0.0),
        (-INF, 0.0),
        (INF, 0.0),
        (-INF, 0.0),
        (INF, 0.0),
        (-INF, 0.0),
        (INF, 0.0),
        (INF, 0.0),
    ];
    for (ty, pt) in [("c64", PrimitiveType::C64), ("c128", PrimitiveType::C128)] {
        cases.push((
            format!("infinite powers on {ty}"),
            binary_module("power", ty, xi.len()),
            vec![cplx(pt, &xi), cplx(pt, &yi)],
            0.0,
        ));
    }
    cases.push((
        "power on c128".to_string(),
        binary_module("power", "c128", x64.len()),
        vec![
            cplx(PrimitiveType::C128, &x64),
            cplx(PrimitiveType::C128, &y64),
        ],
        1e-12,
    ));
    check(cases);
}

/// Campaign findings (c64/c128 atan2 of parts near the largest float, labelled `oracle`): XLA
/// takes the square root in atan2 as the complex power 1/2, which is NaN once x^2 + y^2 is
/// infinite; the sqrt op's formula gave a finite angle. Every pair of special and extreme
/// parts, against x = 0 and x = 1 - 0.5i.
#[test]
fn complex_atan2_of_special_and_extreme_parts_agrees_with_xla_cpu() {
    let sp = [
        NAN, INF, -INF, -0.0, 0.0, 65504.0, -1.0, 2.5, 3.4e38, -3.4e38,
    ];
    let mut y = Vec::new();
    for a in sp {
        for b in sp {
            y.push((a, b));
        }
    }
    let mut cases = Vec::new();
    for x in [
        (0.0, 0.0),
        (1.0, -0.5),
        (3.4028235e38, -34.54925),
        (1.4678419e19, 0.0),
    ] {
        let xs = vec![x; y.len()];
        for (ty, pt, rtol) in [
            ("c64", PrimitiveType::C64, 1e-5),
            ("c128", PrimitiveType::C128, 1e-12),
        ] {
            cases.push((
                format!("atan2(specials, {x:?}) on {ty}"),
                binary_module("atan2", ty, y.len()),
                vec![cplx(pt, &y), cplx(pt, &xs)],
                rtol,
            ));
        }
    }
    // Parts that are rounding noise around 0 (1e-7 in c64); results with a non-finite part
    // are implementation-defined in C and equal for the campaign comparator.
    check_with(cases, 1e-6, compare_nonfinite_complex_equal);
}

/// Campaign finding (f8e4m3fn reduce-precision, labelled `oracle`): `exponent_bits=4,
/// mantissa_bits=0` of 256 is NaN on XLA: the reduction is IEEE's (largest 2^7 with no mantissa
/// bits), 256 overflows to inf, and inf is NaN in f8e4m3fn. The oracle took exponent_bits equal
/// to the type's as "keep the exponent". Also f8e5m2 and f8e4m3fnuz values around their limits.
#[test]
fn reduce_precision_of_f8_types_uses_ieee_exponent_ranges() {
    let mut cases = Vec::new();
    for (ty, pt, vals, e, m) in [
        (
            "f8e4m3fn",
            PrimitiveType::F8E4M3FN,
            vec![256.0, 128.0, 3.0, -448.0, 0.015625, 0.001953125],
            4,
            0,
        ),
        (
            "f8e4m3fn",
            PrimitiveType::F8E4M3FN,
            vec![256.0, 240.0, 3.5, -448.0, 0.015625, 0.001953125],
            4,
            3,
        ),
        (
            "f8e5m2",
            PrimitiveType::F8E5M2,
            vec![57344.0, 3.0, -1.5, 1.52587890625e-05, 6.103515625e-05],
            5,
            2,
        ),
        (
            "f8e4m3fnuz",
            PrimitiveType::F8E4M3FNUZ,
            vec![240.0, 128.0, 3.0, 0.0078125],
            4,
            3,
        ),
    ] {
        let n = vals.len();
        let text = format!("HloModule m\n\nENTRY %main (a: {ty}[{n}]) -> {ty}[{n}] {{\n  %a = {ty}[{n}] parameter(0)\n  ROOT %r = {ty}[{n}] reduce-precision(%a), exponent_bits={e}, mantissa_bits={m}\n}}\n");
        let s: Vec<Scalar> = vals.iter().map(|&v| Scalar::F(v)).collect();
        cases.push((
            format!("reduce-precision e{e}m{m} on {ty}"),
            text,
            vec![lit(pt, &[n as i64], &s)],
            0.0,
        ));
    }
    check(cases);
}

/// Campaign finding (f8e5m2 `compare` GE under TOTALORDER, labelled `oracle`): two NaNs with
/// different payloads (0x7d, 0x7e) are ordered by their bits, as on XLA; the oracle compared
/// after converting to f64, which drops f8 payloads. Also -0 < +0 and NaN signs, in f8e4m3fn
/// and bf16.
#[test]
fn totalorder_compare_orders_the_element_types_own_bits() {
    let mut cases = Vec::new();
    for (ty, pt, x, y) in [
        (
            "f8e5m2",
            PrimitiveType::F8E5M2,
            vec![0x7du8, 0x7e, 0x80, 0xfe, 0x3c, 0x7c],
            vec![0x7eu8, 0x7d, 0x00, 0x7e, 0x3c, 0x7d],
        ),
        (
            "f8e4m3fn",
            PrimitiveType::F8E4M3FN,
            vec![0x7fu8, 0xff, 0x80, 0x7f, 0x01, 0x38],
            vec![0xffu8, 0x7f, 0x00, 0x7e, 0x81, 0x38],
        ),
    ] {
        let n = x.len();
        let lit_of = |v: &[u8]| {
            Literal::Array(hlo::ArrayLiteral::from_bytes(pt, vec![n as i64], v.to_vec()).unwrap())
        };
        for dir in ["GE", "LT", "EQ"] {
            let text = format!("HloModule m\n\nENTRY %main (a: {ty}[{n}], b: {ty}[{n}]) -> pred[{n}] {{\n  %a = {ty}[{n}] parameter(0)\n  %b = {ty}[{n}] parameter(1)\n  ROOT %r = pred[{n}] compare(%a, %b), direction={dir}, type=TOTALORDER\n}}\n");
            cases.push((
                format!("compare {dir} TOTALORDER on {ty}"),
                text,
                vec![lit_of(&x), lit_of(&y)],
                0.0,
            ));
        }
    }
    check(cases);
}

/// Campaign finding (c64 exponential, labelled oracle): XLA computes the parts of e^z without
/// forming e^re alone, so e^(88.8 - 1.7i) has a finite real part in c64 although e^88.8
/// overflows f32; the oracle had multiplied an infinite e^re by cos(im).
#[test]
fn complex_exponential_parts_do_not_overflow_early() {
    let mut cases = Vec::new();
    for (ty, re, ptype) in [
        (
            "c64",
            [88.7, 88.7234, 88.8, 89.5, 90.5, 176.0],
            PrimitiveType::C64,
        ),
        (
            "c128",
            [709.0, 709.9, 710.5, 711.0, 712.0, 1418.0],
            PrimitiveType::C128,
        ),
    ] {
        let z: Vec<Scalar> = re.iter().map(|&r| Scalar::C(r, -1.7353008)).collect();
        let arg = Literal::Array(hlo::ArrayLiteral::from_scalars(ptype, vec![6], &z).unwrap());
        let text = format!("HloModule m\n\nENTRY %main (z: {ty}[6]) -> {ty}[6] {{\n  %z = {ty}[6] parameter(0)\n  ROOT %e = {ty}[6] exponential(%z)\n}}\n");
        cases.push((
            format!("exponential on {ty} near overflow"),
            text,
            vec![arg],
            1e-5,
        ));
    }
    check(cases);
}

/// Campaign finding (`sign` of an f8e5m2 NaN seen through a bitcast, labelled oracle): XLA CPU
/// computes f8e5m2 in f16 and truncates back, so every NaN an f8e5m2 op or an f16 -> f8e5m2
/// conversion produces is 0x7f; `maximum` of f8e4m3fn, f8e4m3 and f8e3m4 gives the positive
/// quiet NaN; other ops of those types keep the NaN's sign. Inputs are parameters, so nothing
/// is folded at compile time.
#[test]
fn f8_nan_bits_follow_xla_cpu() {
    let h = Literal::Array(
        hlo::ArrayLiteral::from_bytes(
            PrimitiveType::F16,
            vec![4],
            [0x7e00u16, 0xfe00, 0x7d00, 0x3c00]
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect(),
        )
        .unwrap(),
    );
    let y = Literal::Array(
        hlo::ArrayLiteral::from_scalars(
            PrimitiveType::F16,
            vec![4],
            &[
                Scalar::F(-1.0),
                Scalar::F(-4.0),
                Scalar::F(2.0),
                Scalar::F(3.0),
            ],
        )
        .unwrap(),
    );
    let mut cases = Vec::new();
    for ty in ["f8e5m2", "f8e4m3fn", "f8e4m3", "f8e3m4", "f8e5m2fnuz"] {
        let text = format!("HloModule m\n\nENTRY %main (h: f16[4], g: f16[4]) -> (u8[4], u8[4], u8[4], u8[4], u8[4]) {{\n  %h = f16[4] parameter(0)\n  %g = f16[4] parameter(1)\n  %x = {ty}[4] convert(%h)\n  %y = {ty}[4] convert(%g)\n  %s = {ty}[4] sqrt(%y)\n  %n = {ty}[4] negate(%x)\n  %m = {ty}[4] maximum(%x, %y)\n  %z = {ty}[4] sign(%x)\n  %b1 = u8[4] bitcast-convert(%x)\n  %b2 = u8[4] bitcast-convert(%s)\n  %b3 = u8[4] bitcast-convert(%n)\n  %b4 = u8[4] bitcast-convert(%m)\n  %b5 = u8[4] bitcast-convert(%z)\n  ROOT %t = (u8[4], u8[4], u8[4], u8[4], u8[4]) tuple(%b1, %b2, %b3, %b4, %b5)\n}}\n");
        cases.push((
            format!("{ty} NaN bits"),
            text,
            vec![h.clone(), y.clone()],
            0.0,
        ));
    }
    check(cases);
}

/// Sort and TopK order f8 NaNs as XLA CPU does: by sign only. XLA sorts f8 keys in a wider
/// float type, so NaNs of one sign tie whatever their payloads (a stable sort keeps them in
/// index order), while -NaN < -inf and +inf < +NaN as TOTALORDER says. The test compares the
/// permutations (sort's iota operand, TopK's indices): XLA also rewrites the NaN bits it moves.
#[test]
fn sort_and_topk_tie_f8_nans_of_one_sign() {
    // f8e5m2: NaN payloads 0x7d..0x7f and 0xfd..0xff, infinities, zeros of both signs.
    let bits = vec![
        0x7eu8, 0x3c, 0xfd, 0x7d, 0x80, 0xff, 0x7c, 0x00, 0xfe, 0x7f, 0xfc, 0xbc,
    ];
    let n = bits.len();
    let arg = Literal::Array(
        hlo::ArrayLiteral::from_bytes(PrimitiveType::F8E5M2, vec![n as i64], bits).unwrap(),
    );
    let k = 5;
    let mut cases = Vec::new();
    for (dir, largest) in [("LT", false), ("GT", true)] {
        let text = format!("HloModule m\n\n%cmp (p0: f8e5m2[], p1: f8e5m2[], i0: s32[], i1: s32[]) -> pred[] {{\n  %p0 = f8e5m2[] parameter(0)\n  %p1 = f8e5m2[] parameter(1)\n  %i0 = s32[] parameter(2)\n  %i1 = s32[] parameter(3)\n  ROOT %c = pred[] compare(%p0, %p1), direction={dir}, type=TOTALORDER\n}}\n\nENTRY %main (a: f8e5m2[{n}]) -> (s32[{n}], s32[{k}]) {{\n  %a = f8e5m2[{n}] parameter(0)\n  %io = s32[{n}] iota(), iota_dimension=0\n  %s = (f8e5m2[{n}], s32[{n}]) sort(%a, %io), dimensions={{0}}, to_apply=%cmp\n  %p = s32[{n}] get-tuple-element(%s), index=1\n  %t = (f8e5m2[{k}], s32[{k}]) topk(%a), k={k}, largest={largest}\n  %i = s32[{k}] get-tuple-element(%t), index=1\n  ROOT %r = (s32[{n}], s32[{k}]) tuple(%p, %i)\n}}\n");
        cases.push((
            format!("sort {dir} TOTALORDER and topk largest={largest} on f8e5m2 NaNs"),
            text,
            vec![arg.clone()],
            0.0,
        ));
    }
    check(cases);
}

/// Campaign finding (a c64 product reduction, labelled oracle): XLA multiplies c64 in f32 parts
/// with fused multiply-adds, so a partial product that overflows makes a part inf or NaN even
/// when the exact product is finite; the oracle multiplied in f64 and rounded once. c128 is
/// computed the same way in f64.
#[test]
fn complex_multiply_overflows_in_component_precision() {
    // Each pair makes one partial product overflow alone, or two cancel.
    let pairs = |s: f64| {
        let x = vec![
            (2.0 * s, 2.0 * s),
            (2.0 * s, 2.0 * s),
            (2.0 * s, 1.0 * s),
            (1.0 * s, 2.0 * s),
            (3.0 * s, 2.0 * s),
            (2.0 * s, 3.0 * s),
            (1.5, -2.5),
        ];
        let y = vec![
            (2.0, 1.0),
            (2.0, 2.0),
            (-1.0, 2.0),
            (2.0, -1.0),
            (1.0, 2.0),
            (2.0, 1.0),
            (3.0, 4.0),
        ];
        (x, y)
    };
    let mut cases = Vec::new();
    for (ty, pt, s, tol) in [
        ("c64", PrimitiveType::C64, 1e38, 1e-6),
        ("c128", PrimitiveType::C128, 1e308, 1e-14),
    ] {
        let (x, y) = pairs(s);
        cases.push((
            format!("multiply on {ty} with overflowing partial products"),
            binary_module("multiply", ty, x.len()),
            vec![cplx(pt, &x), cplx(pt, &y)],
            tol,
        ));
    }
    check(cases);
}

/// Campaign finding (f16 power through bitcast-convert, labelled oracle): a NaN operand's payload
/// passes through the operation (quieted), as through the CPU's conversions; the oracle made
/// every f16 and bf16 NaN result the canonical one.
#[test]
fn nan_payloads_pass_through_f16_and_bf16_operations() {
    let mut cases = Vec::new();
    for (ty, bits) in [
        ("f16", vec![0xffffu16, 0x7e01, 0xfc01, 0x3c00]),
        ("bf16", vec![0xffffu16, 0x7fc1, 0xff81, 0x3f80]),
    ] {
        let n = bits.len();
        let pt = PrimitiveType::from_name(ty).unwrap();
        let bytes: Vec<u8> = bits.iter().flat_map(|b| b.to_le_bytes()).collect();
        let arg = Literal::Array(hlo::ArrayLiteral::from_bytes(pt, vec![n as i64], bytes).unwrap());
        for op in ["power", "add", "maximum"] {
            let text = format!("HloModule m\n\nENTRY %main (a: {ty}[{n}]) -> u16[{n}] {{\n  %a = {ty}[{n}] parameter(0)\n  %r = {ty}[{n}] {op}(%a, %a)\n  ROOT %b = u16[{n}] bitcast-convert(%r)\n}}\n");
            cases.push((
                format!("{op} on {ty} NaNs, as bits"),
                text,
                vec![arg.clone()],
                0.0,
            ));
        }
    }
    check(cases);
}

/// Campaign finding (f8e5m2 `remainder(x, reduce-precision(x))`, labelled `oracle`): with
/// `exponent_bits=5, mantissa_bits=0`, the f8e5m2 subnormal 0.75 * 2^-14 becomes 2^-14 on XLA
/// CPU and the StableHLO reference, which reduce in f16 (where it is subnormal too); the oracle
/// rounded the normalized f64 value 1.5 * 2^-15 to 2^-15 and flushed it. Every f8e5m2 and
/// f8e5m2fnuz value of the low byte range, both signs, at exponent_bits 5 and 4.
#[test]
fn reduce_precision_of_five_exponent_bit_f8_subnormals_rounds_in_f16() {
    let mut cases = Vec::new();
    let bytes: Vec<u8> = (0u8..32).chain(128..160).collect();
    for ty in ["f8e5m2", "f8e5m2fnuz"] {
        for e in [5, 4] {
            let n = bytes.len();
            let text = format!("HloModule m\n\nENTRY %main (a: u8[{n}]) -> u8[{n}] {{\n  %a = u8[{n}] parameter(0)\n  %x = {ty}[{n}] bitcast-convert(%a)\n  %r = {ty}[{n}] reduce-precision(%x), exponent_bits={e}, mantissa_bits=0\n  ROOT %o = u8[{n}] bitcast-convert(%r)\n}}\n");
            let arg = Literal::Array(
                hlo::ArrayLiteral::from_bytes(PrimitiveType::U8, vec![n as i64], bytes.clone())
                    .unwrap(),
            );
            cases.push((
                format!("reduce-precision e{e}m0 on {ty} bits"),
                text,
                vec![arg],
                0.0,
            ));
        }
    }
    check(cases);
}

/// The product reduction of the campaign finding (labelled oracle): the oracle's typed fold of a
/// `multiply` reducer multiplied c64 in f64 and rounded once, while XLA CPU (and the StableHLO
/// reference) multiply c64 in single precision, so the product was (0, -inf) here and
/// (NaN, -inf) there, and `compare(r, r), direction=EQ` true here and false there.
const C64_PRODUCT: &str = "HloModule cprod\n\n%mul (a: c64[], b: c64[]) -> c64[] {\n  %a = c64[] parameter(0)\n  %b = c64[] parameter(1)\n  ROOT %m = c64[] multiply(%a, %b)\n}\n\nENTRY %main (p: f32[6]) -> (c64[], pred[]) {\n  %p = f32[6] parameter(0)\n  %c = c64[6] complex(%p, %p)\n  %z = c64[] constant((1, 0))\n  %r = c64[] reduce(%c, %z), dimensions={0}, to_apply=%mul\n  %e = pred[] compare(%r, %r), direction=EQ\n  ROOT %t = (c64[], pred[]) tuple(%r, %e)\n}\n";

/// Pseudo-random complex values whose partial products (of two of them) come near f32's
/// overflow: parts of magnitude 10^17.5 .. 10^20.5, and every fourth pair a part near 1e38
/// times parts near 1.
fn overflowing_c64_pairs(n: usize) -> (Vec<(f64, f64)>, Vec<(f64, f64)>) {
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut u = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    let sign = |u: &mut dyn FnMut() -> f64| if u() < 0.5 { -1.0 } else { 1.0 };
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for k in 0..n {
        let mut part = |lo: f64, hi: f64, log: bool| {
            let m = lo + (hi - lo) * u();
            let v = if log { 10f64.powf(m) } else { m };
            (sign(&mut u) * v) as f32 as f64
        };
        if k % 4 == 0 {
            x.push((part(0.5e38, 3.4e38, false), part(0.5e38, 3.4e38, false)));
            y.push((part(0.3, 3.0, false), part(0.3, 3.0, false)));
        } else {
            x.push((part(17.5, 20.5, true), part(17.5, 20.5, true)));
            y.push((part(17.5, 20.5, true), part(17.5, 20.5, true)));
        }
    }
    (x, y)
}

/// Runs every case on the oracle under each of `variants` and on XLA CPU: every element XLA
/// returns must be the oracle's, bit for bit (NaN equals NaN), under one of them.
fn check_forms(cases: Vec<(String, String, Vec<Literal>)>, variants: &[Variant]) {
    let ours: Vec<Vec<Literal>> = cases
        .iter()
        .map(|(what, text, args)| {
            variants
                .iter()
                .map(|&variant| {
                    let opts = interp::EvalOptions {
                        variant,
                        ..interp::EvalOptions::default()
                    };
                    interp::evaluate_with(&parse(text), args, &opts)
                        .unwrap_or_else(|e| panic!("{what}: {e}"))
                })
                .collect()
        })
        .collect();
    if skip_xla() {
        return;
    }
    let jobs: Vec<(String, Vec<Literal>)> = cases
        .iter()
        .map(|(_, t, a)| (t.clone(), a.clone()))
        .collect();
    let same = |a: Scalar, b: Scalar| match (a, b) {
        (Scalar::C(ar, ai), Scalar::C(br, bi)) => {
            let eq = |x: f64, y: f64| x == y || x.is_nan() && y.is_nan();
            eq(ar, br) && eq(ai, bi)
        }
        (a, b) => a == b,
    };
    let mut failures = Vec::new();
    for (((what, _, _), o), x) in cases.iter().zip(&ours).zip(&run_xla(&jobs)) {
        let x = x
            .as_ref()
            .unwrap_or_else(|e| panic!("{what}: XLA failed: {e}"));
        for (k, xl) in x.iter().enumerate() {
            for i in 0..xl.len() {
                let theirs = xl.get(i);
                let mine: Vec<Scalar> = o.iter().map(|l| l.leaves()[k].get(i)).collect();
                if !mine.iter().any(|&m| same(m, theirs)) {
                    failures.push(format!(
                        "{what}, leaf {k}, element {i}: XLA {theirs:?}, the oracle {mine:?} under {variants:?}"
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn form(complex_mul: ComplexMul) -> Variant {
    Variant {
        complex_mul,
        ..Variant::default()
    }
}

fn reducer(body: &str) -> String {
    format!("%f (a: c64[], b: c64[]) -> c64[] {{\n  %a = c64[] parameter(0)\n  %b = c64[] parameter(1)\n  {body}\n}}\n\n")
}

/// c64 multiply in single precision wherever a reducer, a combiner or a mapped computation
/// multiplies, in a fused form (`ComplexMul`), measured on XLA CPU bit for bit: reduce and
/// reduce-window through the oracle's typed fold, a reducer that is not a single op (evaluated
/// per element), `map` and the elementwise op agree with the default form. Where XLA CPU's
/// choice of the imaginary part's fused product depends on the code around the multiply
/// (`multiply(b, a)` reducers: the operand order on rows built inside the module, the other
/// product on a parameter; scatter: the other product for a `multiply(a, b)` combiner), each
/// element is the oracle's under the `Fused` form or `FusedOtherIm` (implementation choices:
/// the reference computes in double precision with Annex G's recovery). (Rows of up to 17
/// elements are folded in order on XLA CPU; longer ones are not.)
#[test]
fn c64_multiply_in_reducers_overflows_in_single_precision() {
    let n = 200;
    let (x, y) = overflowing_c64_pairs(n);
    let rows: Vec<Scalar> = x
        .iter()
        .zip(&y)
        .flat_map(|(&a, &b)| [Scalar::C(a.0, a.1), Scalar::C(b.0, b.1)])
        .collect();
    // Rows [x_k, y_k]: each row's product is 1 * x_k * y_k.
    let rows_lit = lit(PrimitiveType::C64, &[n as i64, 2], &rows);
    let (xl, yl) = (cplx(PrimitiveType::C64, &x), cplx(PrimitiveType::C64, &y));
    let mul_ab = reducer("ROOT %m = c64[] multiply(%a, %b)");
    let mul_ba = reducer("ROOT %m = c64[] multiply(%b, %a)");
    // Not a single op: the reducer is evaluated per element.
    let mul_neg = reducer(
        "%m = c64[] multiply(%a, %b)\n  %n = c64[] negate(%m)\n  ROOT %r = c64[] negate(%n)",
    );
    let reduce = |comp: &str| {
        format!("HloModule m\n\n{comp}ENTRY %main (p: c64[{n},2]) -> c64[{n}] {{\n  %p = c64[{n},2] parameter(0)\n  %one = c64[] constant((1, 0))\n  ROOT %r = c64[{n}] reduce(%p, %one), dimensions={{1}}, to_apply=%f\n}}\n")
    };
    let window = |comp: &str| {
        format!("HloModule m\n\n{comp}ENTRY %main (p: c64[{n},2]) -> c64[{n},1] {{\n  %p = c64[{n},2] parameter(0)\n  %one = c64[] constant((1, 0))\n  ROOT %r = c64[{n},1] reduce-window(%p, %one), window={{size=1x2}}, to_apply=%f\n}}\n")
    };
    let map = |comp: &str| {
        format!("HloModule m\n\n{comp}ENTRY %main (a: c64[{n}], b: c64[{n}]) -> c64[{n}] {{\n  %a = c64[{n}] parameter(0)\n  %b = c64[{n}] parameter(1)\n  ROOT %r = c64[{n}] map(%a, %b), dimensions={{0}}, to_apply=%f\n}}\n")
    };
    let scatter = |comp: &str| {
        format!("HloModule m\n\n{comp}ENTRY %main (a: c64[{n}], b: c64[{n}]) -> c64[{n}] {{\n  %a = c64[{n}] parameter(0)\n  %b = c64[{n}] parameter(1)\n  %u = c64[{n},1] reshape(%b)\n  %i = s32[{n},1] iota(), iota_dimension=0\n  ROOT %r = c64[{n}] scatter(%a, %i, %u), update_window_dims={{1}}, inserted_window_dims={{}}, scatter_dims_to_operand_dims={{0}}, index_vector_dim=1, to_apply=%f\n}}\n")
    };
    let xy = vec![xl.clone(), yl.clone()];
    let cases = vec![
        (
            "reduce, multiply(a, b)".to_string(),
            reduce(&mul_ab),
            vec![rows_lit.clone()],
        ),
        (
            "reduce, negate(negate(multiply(a, b)))".into(),
            reduce(&mul_neg),
            vec![rows_lit.clone()],
        ),
        (
            "reduce-window, multiply(a, b)".into(),
            window(&mul_ab),
            vec![rows_lit.clone()],
        ),
        ("map, multiply(a, b)".into(), map(&mul_ab), xy.clone()),
        ("map, multiply(b, a)".into(), map(&mul_ba), xy.clone()),
        (
            "elementwise x * y".into(),
            binary_module("multiply", "c64", n),
            xy.clone(),
        ),
        (
            "elementwise y * x".into(),
            binary_module("multiply", "c64", n),
            vec![yl.clone(), xl.clone()],
        ),
        (
            "scatter, multiply(b, a)".into(),
            scatter(&mul_ba),
            xy.clone(),
        ),
    ];
    check_forms(cases, &[form(ComplexMul::Fused)]);
    let cases = vec![
        (
            "reduce, multiply(b, a)".to_string(),
            reduce(&mul_ba),
            vec![rows_lit.clone()],
        ),
        (
            "reduce-window, multiply(b, a)".into(),
            window(&mul_ba),
            vec![rows_lit],
        ),
        ("scatter, multiply(a, b)".into(), scatter(&mul_ab), xy),
    ];
    check_forms(
        cases,
        &[form(ComplexMul::Fused), form(ComplexMul::FusedOtherIm)],
    );
}

/// The campaign finding: a product reduction of `complex(p, p)` values. Every partial product is
/// then used twice (a.re b.re is a.im b.re), so XLA CPU fuses none of them: its product is
/// (NaN, -inf), as the StableHLO reference's, where the fused form gives (inf, -inf) and the
/// f64 product the oracle computed before, (0, -inf); `compare(r, r), direction=EQ` is false
/// on XLA. The oracle agrees under `ComplexMul::Unfused`, as it does on a squared value
/// (`multiply(z, z)`: the imaginary part's two products are one) under `UnfusedIm`.
#[test]
fn c64_product_with_shared_partial_products_is_unfused() {
    let p = [
        -0.800665f32,
        -28.883596,
        0.24731578,
        -29.020575,
        8.138762,
        -3.4028235e38,
    ];
    let input = vec![f32s(&[6], &p)];
    let at = |v: Variant| {
        let opts = interp::EvalOptions {
            variant: v,
            ..interp::EvalOptions::default()
        };
        let out = interp::evaluate_with(&parse(C64_PRODUCT), &input, &opts).unwrap();
        let leaves = out.leaves();
        match (leaves[0].get(0), leaves[1].get(0)) {
            (Scalar::C(re, im), Scalar::Pred(eq)) => (re, im, eq),
            v => panic!("{v:?}"),
        }
    };
    let (re, im, eq) = at(Variant::default());
    assert!(re == INF && im == -INF && eq, "default: ({re}, {im}) {eq}");
    let (re, im, eq) = at(form(ComplexMul::Unfused));
    assert!(
        re.is_nan() && im == -INF && !eq,
        "unfused: ({re}, {im}) {eq}"
    );
    check_forms(
        vec![(
            "the campaign's product reduction of complex(p, p)".into(),
            C64_PRODUCT.to_string(),
            input,
        )],
        &[form(ComplexMul::Unfused)],
    );
    let n = 200;
    let (x, _) = overflowing_c64_pairs(n);
    check_forms(
        vec![(
            "c64 multiply(x, x)".into(),
            format!("HloModule m\n\nENTRY %main (a: c64[{n}]) -> c64[{n}] {{\n  %a = c64[{n}] parameter(0)\n  ROOT %r = c64[{n}] multiply(%a, %a)\n}}\n"),
            vec![cplx(PrimitiveType::C64, &x)],
        )],
        &[form(ComplexMul::UnfusedIm)],
    );
}

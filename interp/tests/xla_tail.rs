//! Ops the StableHLO reference interpreter's test suite (converted to HLO) used to find the
//! oracle refusing, each run on the interpreter and on XLA CPU (jaxlib 0.10.2) with the same
//! inputs: complex `maximum`/`minimum`, c64/c128 `triangular-solve`, `bitcast-convert` to and
//! from `pred`, and `scan`.

mod common;
use common::*;
use hlo::{ArrayLiteral, Literal, PrimitiveType, Scalar};

fn complex(ty: PrimitiveType, dims: &[i64], v: &[(f64, f64)]) -> Literal {
    let s: Vec<Scalar> = v.iter().map(|&(r, i)| Scalar::C(r, i)).collect();
    lit(ty, dims, &s)
}

/// Runs each (name, oracle text, XLA text, inputs) on both; the oracle's leaves must equal
/// XLA's as `same` says. The XLA text differs from the oracle's only where jaxlib's route to XLA
/// needs another spelling of the same module (see `bitcast_convert_sizes_pred_as_a_byte`).
fn check(
    cases: &[(String, String, String, Vec<Literal>)],
    opts: &interp::EvalOptions,
    same: impl Fn(&ArrayLiteral, &ArrayLiteral) -> Result<(), String>,
) {
    let ours: Vec<Literal> = cases
        .iter()
        .map(|(what, text, _, args)| {
            interp::evaluate_with(&parse(text), args, opts)
                .unwrap_or_else(|e| panic!("{what}: {e}"))
        })
        .collect();
    if skip_xla() {
        return;
    }
    let jobs: Vec<(String, Vec<Literal>)> = cases
        .iter()
        .map(|(_, _, x, a)| (x.clone(), a.clone()))
        .collect();
    let what: Vec<String> = cases.iter().map(|c| c.0.clone()).collect();
    assert_leaves_agree_with_xla(&what, &jobs, &ours, |_, a, b| same(a, b));
}

fn bitwise(a: &ArrayLiteral, b: &ArrayLiteral) -> Result<(), String> {
    if a.ty != b.ty || a.dims != b.dims {
        return Err(format!("{}{:?} vs XLA {}{:?}", a.ty, a.dims, b.ty, b.dims));
    }
    match (0..a.len()).find(|&i| {
        let w = a.ty.byte_size();
        a.data[i * w..(i + 1) * w] != b.data[i * w..(i + 1) * w]
    }) {
        Some(i) => Err(format!("element {i}: {:?} vs XLA {:?}", a.get(i), b.get(i))),
        None => Ok(()),
    }
}

/// XLA CPU selects `a` where `a.re >= b.re` (`<=` for minimum) and `b` otherwise, the
/// imaginary parts unread; NaN real parts give `b`, -0 equals +0; the operand keeps its bits.
/// Its compare reads a subnormal real part as zero (the CPU's denormals-are-zero mode), as the
/// oracle does under the flush-to-zero variant, which these run under (the last two pairs).
/// `maximum(b, a)` is a module of its own: in one module with `maximum(a, b)` XLA's CSE takes
/// the two for one (it treats maximum as commutative) and both give the first one's result.
#[test]
fn complex_maximum_minimum_select_by_the_real_part() {
    let nan = f64::NAN;
    let tiny = f32::from_bits(1) as f64;
    let a = [
        (1.0, 1.0),
        (1.0, 2.0),
        (nan, 1.0),
        (2.0, 0.0),
        (1.0, nan),
        (-0.0, 1.0),
        (0.0, 7.0),
        (-nan, 3.0),
        (f64::INFINITY, -1.0),
        (3.0, 3.0),
        (0.0, 1.0),
        (-tiny, 3.0),
    ];
    let b = [
        (1.0, 2.0),
        (1.0, 1.0),
        (1.0, 0.0),
        (nan, 0.0),
        (1.0, 0.0),
        (0.0, 0.0),
        (-0.0, -5.0),
        (nan, -2.0),
        (f64::INFINITY, 4.0),
        (3.0, nan),
        (tiny, 5.0),
        (0.0, 2.0),
    ];
    let n = a.len() as i64;
    let mut cases = Vec::new();
    for ty in [PrimitiveType::C64, PrimitiveType::C128] {
        let t = ty.name();
        for (x, y) in [("a", "b"), ("b", "a")] {
            let text = format!(
                "HloModule m\n\nENTRY %main (a: {t}[{n}], b: {t}[{n}]) -> ({t}[{n}], {t}[{n}]) {{\n  %a = {t}[{n}] parameter(0)\n  %b = {t}[{n}] parameter(1)\n  %mx = {t}[{n}] maximum(%{x}, %{y})\n  %mn = {t}[{n}] minimum(%{x}, %{y})\n  ROOT %t = ({t}[{n}], {t}[{n}]) tuple(%mx, %mn)\n}}\n"
            );
            let args = vec![complex(ty, &[n], &a), complex(ty, &[n], &b)];
            cases.push((
                format!("{t} maximum/minimum({x}, {y})"),
                text.clone(),
                text,
                args,
            ));
        }
        // As a reducer: the sequential fold (init, then the elements in order) breaks the tie
        // between (3, 0) and (3, 5) as XLA CPU does.
        let reduce = format!(
            "HloModule m\n\n%mx (x: {t}[], y: {t}[]) -> {t}[] {{\n  %x = {t}[] parameter(0)\n  %y = {t}[] parameter(1)\n  ROOT %m = {t}[] maximum(%x, %y)\n}}\n\nENTRY %main (a: {t}[6], i: {t}[]) -> {t}[] {{\n  %a = {t}[6] parameter(0)\n  %i = {t}[] parameter(1)\n  ROOT %r = {t}[] reduce(%a, %i), dimensions={{0}}, to_apply=%mx\n}}\n"
        );
        let args = vec![
            complex(
                ty,
                &[6],
                &[
                    (1.0, 1.0),
                    (3.0, 0.0),
                    (3.0, 5.0),
                    (2.0, 0.0),
                    (1.0, 0.0),
                    (0.0, 0.0),
                ],
            ),
            complex(ty, &[], &[(-5.0, 0.0)]),
        ];
        cases.push((format!("{t} maximum reducer"), reduce.clone(), reduce, args));
    }
    let flush = interp::EvalOptions {
        variant: interp::variant::Variant {
            flush_denormals: true,
            ..Default::default()
        },
        ..Default::default()
    };
    check(&cases, &flush, bitwise);
}

/// c64/c128 triangular-solve under every attribute combination, on well-conditioned random
/// inputs, within a tolerance of the type's rounding (XLA CPU solves in blocks of its own).
#[test]
fn complex_triangular_solve_agrees_with_xla_cpu() {
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut unit = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut cases = Vec::new();
    for ty in [PrimitiveType::C64, PrimitiveType::C128] {
        let t = ty.name();
        for left in [true, false] {
            for lower in [true, false] {
                for unit_diag in [true, false] {
                    for tr in ["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"] {
                        // Batch of 2, A 4x4, B 4x3 (left) or 3x4 (right).
                        let (k, bm, bn) = if left { (4, 4, 3) } else { (4, 3, 4) };
                        let mut av = Vec::new();
                        for _ in 0..2 {
                            for r in 0..k {
                                for c in 0..k {
                                    let (mut re, mut im) = (unit() - 0.5, unit() - 0.5);
                                    if r == c {
                                        re += if unit() < 0.5 { 2.0 } else { -2.0 };
                                        im += 0.5;
                                    }
                                    av.push((re, im));
                                }
                            }
                        }
                        let bv: Vec<(f64, f64)> = (0..2 * bm * bn)
                            .map(|_| (4.0 * unit() - 2.0, 4.0 * unit() - 2.0))
                            .collect();
                        let text = format!(
                            "HloModule m\n\nENTRY %main (a: {t}[2,{k},{k}], b: {t}[2,{bm},{bn}]) -> {t}[2,{bm},{bn}] {{\n  %a = {t}[2,{k},{k}] parameter(0)\n  %b = {t}[2,{bm},{bn}] parameter(1)\n  ROOT %x = {t}[2,{bm},{bn}] triangular-solve(%a, %b), left_side={left}, lower={lower}, unit_diagonal={unit_diag}, transpose_a={tr}\n}}\n"
                        );
                        let args =
                            vec![complex(ty, &[2, k, k], &av), complex(ty, &[2, bm, bn], &bv)];
                        cases.push((
                            format!(
                                "{t} left_side={left} lower={lower} unit_diagonal={unit_diag} {tr}"
                            ),
                            text.clone(),
                            text,
                            args,
                        ));
                    }
                }
            }
        }
    }
    check(&cases, &interp::EvalOptions::default(), |a, b| {
        let tol = if a.ty == PrimitiveType::C64 {
            2e-5
        } else {
            1e-12
        };
        compare(a, b, tol, tol).map(|_| ())
    });
}

/// XLA sizes a `pred` as a byte in `bitcast-convert` (f64 -> pred[8], s8 -> pred, pred -> s4[2]).
/// jaxlib 0.10.2's route to XLA (HLO text -> StableHLO -> HLO) reads the module in StableHLO's
/// terms first, where an i1 is one bit, and then infers XLA's shape again: it refuses the
/// byte-sized spelling and compiles the bit-sized one (f64[3] -> pred[3,64]) as the byte-sized
/// one (its result is pred[3,8]). So XLA gets the bit-sized text, the oracle the byte-sized one
/// (what XLA's HLO verifier and XLA's own tests accept), and the results must agree, shapes
/// included. XLA keeps a byte it makes into a `pred` as it is (0xef reads as true); the oracle
/// keeps the truth value, which is what a `pred` result compares by.
#[test]
fn bitcast_convert_sizes_pred_as_a_byte() {
    let module = |from: &str, to: &str| {
        format!(
            "HloModule m\n\nENTRY %main (a: {from}) -> {to} {{\n  %a = {from} parameter(0)\n  ROOT %b = {to} bitcast-convert(%a)\n}}\n"
        )
    };
    let u8s = |dims: &[i64], v: &[u64]| {
        lit(
            PrimitiveType::U8,
            dims,
            &v.iter().map(|&x| Scalar::U(x)).collect::<Vec<_>>(),
        )
    };
    let preds = |dims: &[i64], v: &[bool]| {
        lit(
            PrimitiveType::Pred,
            dims,
            &v.iter().map(|&x| Scalar::Pred(x)).collect::<Vec<_>>(),
        )
    };
    let cases: Vec<(String, String, String, Vec<Literal>)> = vec![
        (
            "f64 -> pred[8]".into(),
            module("f64[3]", "pred[3,8]"),
            module("f64[3]", "pred[3,64]"),
            vec![f64s(
                &[3],
                &[
                    f64::from_bits(0x0123_4567_89ab_cdef),
                    -0.0,
                    2.0f64.powi(-1074),
                ],
            )],
        ),
        (
            "f32 -> pred[4]".into(),
            module("f32[3]", "pred[3,4]"),
            module("f32[3]", "pred[3,32]"),
            vec![f32s(&[3], &[1.5, 0.0, f32::from_bits(0x0100_0000)])],
        ),
        (
            "u8 -> pred".into(),
            module("u8[4]", "pred[4]"),
            module("u8[4]", "pred[4,8]"),
            vec![u8s(&[4], &[0x81, 0, 2, 0x80])],
        ),
        (
            "s4[2] -> pred".into(),
            module("s4[3,2]", "pred[3]"),
            module("s4[3,2]", "pred[3,2,4]"),
            vec![lit(
                PrimitiveType::S4,
                &[3, 2],
                &[-7, 2, 0, 0, 0, -8].map(Scalar::S),
            )],
        ),
        (
            "pred -> u8".into(),
            module("pred[2,3,8]", "u8[2,3,8]"),
            module("pred[2,3,8]", "u8[2,3]"),
            vec![preds(
                &[2, 3, 8],
                &[true, false, true, true, false, false].repeat(8),
            )],
        ),
        (
            "pred -> s4[2]".into(),
            module("pred[3,4]", "s4[3,4,2]"),
            module("pred[3,4]", "s4[3]"),
            vec![preds(&[3, 4], &[true, false, false].repeat(4))],
        ),
    ];
    // The bit-sized spellings are no valid HLO: XLA's verifier (and ours) size a pred as a byte.
    for (what, _, xla_text, _) in &cases {
        let m = parse(xla_text);
        assert!(
            hlo::verify::verify_module(&m).is_err(),
            "{what}: the bit-sized spelling verified"
        );
    }
    check(&cases, &interp::EvalOptions::default(), |a, b| {
        compare(a, b, 0.0, 0.0).map(|_| ())
    });
}

/// `scan` (jaxlib 0.10.2 parses it and expands it into a while loop): the StableHLO suite's
/// four cases (cumulative sum on dimension 0 and 1, cumulative max with argmax, reverse), and
/// float sums, several outputs and carries, a carry-only and an output-only scan, a tuple
/// result of one.
#[test]
fn scan_agrees_with_xla_cpu() {
    let add_body = |t: &str| {
        format!(
            "%body (x: {t}, c: {t}) -> ({t}, {t}) {{\n  %x = {t} parameter(0)\n  %c = {t} parameter(1)\n  %s = {t} add(%x, %c)\n  ROOT %t = ({t}, {t}) tuple(%s, %s)\n}}\n"
        )
    };
    let cummax = "%body (v: s32[], i: s32[], rv: s32[], ri: s32[]) -> (s32[], s32[], s32[], s32[]) {\n  %v = s32[] parameter(0)\n  %i = s32[] parameter(1)\n  %rv = s32[] parameter(2)\n  %ri = s32[] parameter(3)\n  %nv = s32[] maximum(%rv, %v)\n  %gt = pred[] compare(%rv, %v), direction=GT\n  %eq = pred[] compare(%rv, %v), direction=EQ\n  %mi = s32[] maximum(%ri, %i)\n  %te = s32[] select(%eq, %mi, %i)\n  %ni = s32[] select(%gt, %ri, %te)\n  ROOT %t = (s32[], s32[], s32[], s32[]) tuple(%nv, %ni, %nv, %ni)\n}\n";
    let cases: Vec<(&str, String, Vec<Literal>)> = vec![
        (
            "cumulative sum",
            format!("HloModule m\n\n{}\nENTRY %main (a: s32[4], i: s32[]) -> (s32[4], s32[]) {{\n  %a = s32[4] parameter(0)\n  %i = s32[] parameter(1)\n  ROOT %r = (s32[4], s32[]) scan(%a, %i), dimensions={{0}}, num_carries=1, to_apply=%body\n}}\n", add_body("s32[]")),
            vec![s32s(&[4], &[1, 2, 3, 4]), s32s(&[], &[0])],
        ),
        (
            "cumulative sum along dimension 1",
            format!("HloModule m\n\n{}\nENTRY %main (a: s32[2,3], i: s32[2]) -> (s32[2,3], s32[2]) {{\n  %a = s32[2,3] parameter(0)\n  %i = s32[2] parameter(1)\n  ROOT %r = (s32[2,3], s32[2]) scan(%a, %i), dimensions={{1}}, num_carries=1, to_apply=%body\n}}\n", add_body("s32[2]")),
            vec![s32s(&[2, 3], &[1, 2, 3, 4, 5, 6]), s32s(&[2], &[0, 0])],
        ),
        (
            "cumulative max with argmax",
            format!("HloModule m\n\n{cummax}\nENTRY %main (a: s32[5], b: s32[5], c: s32[], d: s32[]) -> (s32[5], s32[5], s32[], s32[]) {{\n  %a = s32[5] parameter(0)\n  %b = s32[5] parameter(1)\n  %c = s32[] parameter(2)\n  %d = s32[] parameter(3)\n  ROOT %r = (s32[5], s32[5], s32[], s32[]) scan(%a, %b, %c, %d), dimensions={{0}}, num_carries=2, to_apply=%body\n}}\n"),
            vec![s32s(&[5], &[3, 1, 4, 1, 5]), s32s(&[5], &[0, 1, 2, 3, 4]), s32s(&[], &[i32::MIN as i64]), s32s(&[], &[0])],
        ),
        (
            "reverse cumulative sum",
            format!("HloModule m\n\n{}\nENTRY %main (a: s32[4], i: s32[]) -> (s32[4], s32[]) {{\n  %a = s32[4] parameter(0)\n  %i = s32[] parameter(1)\n  ROOT %r = (s32[4], s32[]) scan(%a, %i), dimensions={{0}}, num_carries=1, is_reverse=true, to_apply=%body\n}}\n", add_body("s32[]")),
            vec![s32s(&[4], &[1, 2, 3, 4]), s32s(&[], &[0])],
        ),
        (
            "float sum in order, reverse, on dimension 0 of a matrix",
            format!("HloModule m\n\n{}\nENTRY %main (a: f32[5,2], i: f32[2]) -> (f32[5,2], f32[2]) {{\n  %a = f32[5,2] parameter(0)\n  %i = f32[2] parameter(1)\n  ROOT %r = (f32[5,2], f32[2]) scan(%a, %i), dimensions={{0}}, num_carries=1, is_reverse=true, is_associative=false, to_apply=%body\n}}\n", add_body("f32[2]")),
            vec![f32s(&[5, 2], &[1e8, 1.0, 1.0, -1e8, -1e8, 3.5, 0.25, 1e-3, 7.0, 1e7]), f32s(&[2], &[0.5, -0.0])],
        ),
        (
            "carry only (no outputs), not a tuple",
            "HloModule m\n\n%body (x: f64[], c: f64[]) -> f64[] {\n  %x = f64[] parameter(0)\n  %c = f64[] parameter(1)\n  %m = f64[] multiply(%c, %x)\n  ROOT %s = f64[] add(%m, %x)\n}\n\nENTRY %main (a: f64[4], i: f64[]) -> f64[] {\n  %a = f64[4] parameter(0)\n  %i = f64[] parameter(1)\n  ROOT %r = f64[] scan(%a, %i), dimensions={0}, num_carries=1, to_apply=%body\n}\n".into(),
            vec![f64s(&[4], &[0.5, -3.0, 0.1, 2.0]), f64s(&[], &[1.5])],
        ),
        (
            "output only (no carries), not a tuple",
            "HloModule m\n\n%body (x: s32[3], y: s32[3]) -> s32[3] {\n  %x = s32[3] parameter(0)\n  %y = s32[3] parameter(1)\n  ROOT %m = s32[3] multiply(%x, %y)\n}\n\nENTRY %main (a: s32[3,4], b: s32[3,4]) -> s32[3,4] {\n  %a = s32[3,4] parameter(0)\n  %b = s32[3,4] parameter(1)\n  ROOT %r = s32[3,4] scan(%a, %b), dimensions={1}, num_carries=0, to_apply=%body\n}\n".into(),
            vec![s32s(&[3, 4], &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]), s32s(&[3, 4], &[2, 0, -1, 3, 1, 1, 1, 1, -2, 5, 0, 7])],
        ),
        (
            "a tuple result of one output",
            "HloModule m\n\n%body (x: s32[]) -> (s32[]) {\n  %x = s32[] parameter(0)\n  %n = s32[] negate(%x)\n  ROOT %t = (s32[]) tuple(%n)\n}\n\nENTRY %main (a: s32[3]) -> (s32[3]) {\n  %a = s32[3] parameter(0)\n  ROOT %r = (s32[3]) scan(%a), dimensions={0}, num_carries=0, to_apply=%body\n}\n".into(),
            vec![s32s(&[3], &[5, -6, 7])],
        ),
    ];
    let cases: Vec<(String, String, String, Vec<Literal>)> = cases
        .into_iter()
        .map(|(w, t, a)| (w.to_string(), t.clone(), t, a))
        .collect();
    for (what, text, _, _) in &cases {
        if let Err(e) = hlo::verify::verify_module(&parse(text)) {
            panic!("{what}: {e}");
        }
    }
    check(&cases, &interp::EvalOptions::default(), |a, b| {
        compare(a, b, 0.0, 0.0).map(|_| ())
    });
}

/// A scan over an empty dimension: the oracle makes empty outputs and carries the init through;
/// XLA CPU (jaxlib 0.10.2) refuses to compile it: its ScanExpander slices one element of the
/// empty dimension, which its own verifier rejects.
#[test]
fn scan_over_an_empty_dimension() {
    let text = format!(
        "HloModule m\n\n%body (x: s32[2], c: s32[2]) -> (s32[2], s32[2]) {{\n  %x = s32[2] parameter(0)\n  %c = s32[2] parameter(1)\n  %s = s32[2] add(%x, %c)\n  ROOT %t = (s32[2], s32[2]) tuple(%s, %s)\n}}\n\nENTRY %main (a: s32[0,2], i: s32[2]) -> (s32[0,2], s32[2]) {{\n  %a = s32[0,2] parameter(0)\n  %i = s32[2] parameter(1)\n  ROOT %r = (s32[0,2], s32[2]) scan(%a, %i), dimensions={{0}}, num_carries=1, to_apply=%body\n}}\n"
    );
    let args = vec![s32s(&[0, 2], &[]), s32s(&[2], &[4, -9])];
    let r = eval(&text, &args).unwrap();
    let leaves = r.leaves();
    assert_eq!((leaves[0].dims.clone(), leaves[0].len()), (vec![0, 2], 0));
    assert_eq!(ints(&Literal::Array(leaves[1].clone())), vec![4, -9]);
    if skip_xla() {
        return;
    }
    let xla = run_xla(&[(text, args)]);
    let e = xla[0]
        .as_ref()
        .expect_err("XLA compiled a scan over an empty dimension");
    assert!(e.contains("dynamic slice"), "{e}");
}

//! The oracle's complex functions follow C99 Annex G (the semantics table's source for complex
//! special values), checked against an independent C99 implementation: NumPy's complex
//! functions (`npymath`), on special and extreme values in c128 and c64 (c64 values computed
//! in c128 and rounded: the reference the oracle's c64 results are). No XLA runs here: the
//! oracle is never calibrated to XLA's output.
//!
//! Equal means: both parts NaN or equal (signed zeros by sign), or both results complex
//! infinities (Annex G leaves the other part of an infinity, and some signs, unspecified);
//! finite parts within a relative 1e-10 (c128) or 2e-6 (c64) of the larger part's magnitude.

mod common;
use common::*;
use hlo::{PrimitiveType, Scalar};
use std::process::Command;

const INF: f64 = f64::INFINITY;
const NAN: f64 = f64::NAN;

fn grid() -> Vec<(f64, f64)> {
    let parts = [
        NAN, INF, -INF, 0.0, -0.0, 1.0, -2.5, 0.5, 20.0, -400.0, 1e30, -3.4e38,
    ];
    let mut v = Vec::new();
    for &a in &parts {
        for &b in &parts {
            v.push((a, b));
        }
    }
    v
}

/// (HLO opcode, NumPy expression of `z`): the functions C99 has (`rsqrt`, `expm1` are built
/// from them by their definitions, and NumPy's complex division and `expm1` do not recover
/// Annex G's infinities, so they are no reference for those).
const OPS: &[(&str, &str)] = &[
    ("sqrt", "np.sqrt(z)"),
    ("exponential", "np.exp(z)"),
    ("log", "np.log(z)"),
    ("log-plus-one", "np.log1p(z)"),
    ("tanh", "np.tanh(z)"),
    ("tan", "np.tan(z)"),
    ("sine", "np.sin(z)"),
    ("cosine", "np.cos(z)"),
    ("abs", "np.abs(z)"),
];

fn numpy(expr: &str, dtype: &str, v: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let values: Vec<String> = v
        .iter()
        .map(|(a, b)| format!("complex(float('{a}'), float('{b}'))"))
        .collect();
    let code = format!(
        "import numpy as np, warnings\nwarnings.simplefilter('ignore')\n\
         z = np.array([{}], dtype=np.{dtype}).astype(np.complex128)\n\
         r = np.asarray({expr}).astype(np.{dtype})\n\
         for x in r.ravel():\n    x = complex(x)\n    print(repr(x.real), repr(x.imag))\n",
        values.join(", ")
    );
    let out = Command::new(test_support::python())
        .args(["-c", &code])
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let mut it = l.split_whitespace().map(|x| x.parse::<f64>().unwrap());
            (it.next().unwrap(), it.next().unwrap())
        })
        .collect()
}

fn same(x: (f64, f64), y: (f64, f64), rtol: f64) -> bool {
    let infinite = |z: (f64, f64)| z.0.is_infinite() || z.1.is_infinite();
    if infinite(x) && infinite(y) {
        return true;
    }
    let scale = x.0.abs().max(x.1.abs()).max(y.0.abs()).max(y.1.abs());
    let part = |a: f64, b: f64| {
        if a.is_nan() || b.is_nan() {
            return a.is_nan() && b.is_nan();
        }
        if !a.is_finite() || !b.is_finite() {
            return a == b;
        }
        if a == 0.0 && b == 0.0 {
            return a.is_sign_negative() == b.is_sign_negative();
        }
        (a - b).abs() <= rtol * scale.max(f64::MIN_POSITIVE)
    };
    part(x.0, y.0) && part(x.1, y.1)
}

#[test]
fn complex_special_values_follow_c99_as_numpy_computes_them() {
    if !test_support::need_xla() {
        return;
    }
    let v = grid();
    let mut failures = Vec::new();
    for (ty, pt, dtype, rtol) in [
        ("c128", PrimitiveType::C128, "complex128", 1e-10),
        ("c64", PrimitiveType::C64, "complex64", 2e-6),
    ] {
        let input = lit(
            pt,
            &[v.len() as i64],
            &v.iter().map(|&(a, b)| Scalar::C(a, b)).collect::<Vec<_>>(),
        );
        for &(op, expr) in OPS {
            let out_ty = if op == "abs" {
                if ty == "c64" {
                    "f32"
                } else {
                    "f64"
                }
            } else {
                ty
            };
            let text = format!(
                "HloModule m\n\nENTRY %main (a: {ty}[{n}]) -> {out_ty}[{n}] {{\n  %a = {ty}[{n}] parameter(0)\n  ROOT %r = {out_ty}[{n}] {op}(%a)\n}}\n",
                n = v.len()
            );
            let ours = eval(&text, &[input.clone()]).unwrap();
            let ours = ours.as_array().unwrap();
            let theirs = numpy(expr, dtype, &v);
            for (k, &want) in theirs.iter().enumerate() {
                let got = match ours.get(k) {
                    Scalar::C(a, b) => (a, b),
                    s => (s.to_f64(), 0.0),
                };
                let want = if op == "abs" { (want.0, 0.0) } else { want };
                if !same(got, want, rtol) {
                    failures.push(format!(
                        "{op} on {ty} of {:?}: the oracle {got:?}, C99 (NumPy) {want:?}",
                        v[k]
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

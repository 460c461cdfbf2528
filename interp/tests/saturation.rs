//! Exact results of approximated functions (`interp::variant::exact_result`): the bounds a
//! function saturates to and its values at exact points, which XLA CPU returns exactly and the
//! `nudge_ulps` variant therefore leaves alone (KNOWN_DIFFERENCES.md, "Exact results of
//! approximated functions").
//!
//! - `nudges_leave_saturated_results_exact` (no XLA): `1e19 * (1 + tanh(x))` in f64 stays 0 for
//!   x = -40 under nudges, while tanh(0.5) still moves.
//! - `saturation_bounds_are_exact_on_xla_cpu`: a table of inputs deep in saturation and at exact
//!   points, per opcode and type (f16, bf16, f32, f64): XLA CPU returns exactly the bound, also
//!   where its subtraction is fused with the function.
//! - `exact_results_hold_on_xla_cpu_over_sweeps`: dense sweeps of the approach to every bound;
//!   wherever the oracle's result is exact by the rule, XLA CPU's is the same value, bit for bit.

mod common;
use common::*;
use hlo::{Literal, PrimitiveType as P, Scalar};
use interp::variant::{exact_result, Variant};
use std::f64::consts::{FRAC_PI_2, PI};

const TYPES: [P; 4] = [P::F16, P::Bf16, P::F32, P::F64];
const INF: f64 = f64::INFINITY;

/// `(tanh(x), 1e19 * (1 + tanh(x)))` in f64 under a nudge of `nudge_ulps` (of tanh alone with
/// `only`).
fn run_variant(x: f64, nudge_ulps: i32, only: Option<hlo::Opcode>) -> (f64, f64) {
    let text = "HloModule m\n\nENTRY %main (x: f64[]) -> (f64[], f64[]) {\n  %x = f64[] parameter(0)\n  %t = f64[] tanh(%x)\n  %one = f64[] constant(1)\n  %s = f64[] add(%one, %t)\n  %big = f64[] constant(1e19)\n  %r = f64[] multiply(%s, %big)\n  ROOT %o = (f64[], f64[]) tuple(%t, %r)\n}\n";
    let opts = interp::EvalOptions {
        variant: Variant {
            nudge_ulps,
            nudge_only: only,
            ..Variant::default()
        },
        ..Default::default()
    };
    let out = interp::evaluate_with(&parse(text), &[f64s(&[], &[x])], &opts).unwrap();
    let v: Vec<f64> = out.leaves().iter().map(|l| l.get(0).to_f64()).collect();
    (v[0], v[1])
}

/// f64 tanh(-40) is exactly -1 (the true value rounds to it, and XLA CPU returns it): a nudge
/// that made it -1 + 2^-53 would turn `1e19 * (1 + tanh(x))` into ~1110 and "explain" any XLA
/// result near there. Non-saturated results (tanh(0.5)) and f64 results of +-1 below |x| = 20
/// (where XLA CPU returns 1 - 7 * 2^-53) still move.
#[test]
fn nudges_leave_saturated_results_exact() {
    for n in [1, -1, 2, -2, 4, -4] {
        for only in [None, Some(hlo::Opcode::Tanh)] {
            for x in [-40.0, -1e300, -20.0] {
                let (t, r) = run_variant(x, n, only);
                assert_eq!(t, -1.0, "x = {x}, nudge {n} ({only:?})");
                assert_eq!(r.to_bits(), 0, "x = {x}, nudge {n} ({only:?}): {r}");
            }
            assert_eq!(run_variant(40.0, n, only).0, 1.0);
            // Not saturated: tanh moves by n ulps.
            let (t, _) = run_variant(0.5, n, only);
            let moved = f64::from_bits((0.5f64.tanh().to_bits() as i64 + n as i64) as u64);
            assert_eq!(t, moved, "x = 0.5, nudge {n} ({only:?})");
        }
    }
    assert_eq!(run_variant(0.5, 0, None).0, 0.5f64.tanh());
    // 4 ulps of tanh(0.5) (2^-52) reach the product.
    assert_ne!(run_variant(0.5, 4, None).1, run_variant(0.5, 0, None).1);
    // +-1 in f64 rounding but not on XLA CPU (|x| < 20): still nudged.
    assert_eq!(run_variant(-19.5, 0, None), (-1.0, 0.0));
    let (t, r) = run_variant(-19.5, 1, None);
    assert_eq!(t, -1.0 + f64::EPSILON / 2.0);
    assert!(r > 1000.0, "{r}");
}

/// (HLO opcode, interp opcode, [(operands, bound)]). Unary ops have one operand.
type Case = (&'static str, hlo::Opcode, Vec<(Vec<f64>, f64)>);

fn table(ty: P) -> Vec<Case> {
    use hlo::Opcode as O;
    let u = |x: f64, b: f64| (vec![x], b);
    let b = |y: f64, x: f64, r: f64| (vec![y, x], r);
    let mut atan2 = vec![
        b(0.0, 1.0, 0.0),
        b(-0.0, 1.0, -0.0),
        b(0.0, -1.0, PI),
        b(-0.0, -1.0, -PI),
        b(0.0, -0.0, PI),
        b(1.0, -INF, PI),
        b(-1.0, -INF, -PI),
    ];
    if ty != P::F32 {
        atan2.extend([b(1.0, 0.0, FRAC_PI_2), b(-INF, 1.0, -FRAC_PI_2)]);
    }
    vec![
        (
            "tanh",
            O::Tanh,
            vec![
                u(40.0, 1.0),
                u(-40.0, -1.0),
                u(1e300, 1.0),
                u(-1e300, -1.0),
                u(20.0, 1.0),
                u(0.0, 0.0),
                u(-0.0, -0.0),
            ],
        ),
        (
            "erf",
            O::Erf,
            vec![u(10.0, 1.0), u(-10.0, -1.0), u(1e300, 1.0), u(0.0, 0.0)],
        ),
        (
            "logistic",
            O::Logistic,
            vec![u(800.0, 1.0), u(-800.0, 0.0), u(40.0, 1.0), u(-750.0, 0.0)],
        ),
        (
            "exponential",
            O::Exp,
            vec![u(-1000.0, 0.0), u(-800.0, 0.0), u(0.0, 1.0), u(-0.0, 1.0)],
        ),
        (
            "exponential-minus-one",
            O::Expm1,
            vec![u(-800.0, -1.0), u(-40.0, -1.0), u(0.0, 0.0), u(-0.0, -0.0)],
        ),
        ("log", O::Log, vec![u(1.0, 0.0)]),
        ("log-plus-one", O::Log1p, vec![u(0.0, 0.0), u(-0.0, -0.0)]),
        ("sine", O::Sin, vec![u(0.0, 0.0), u(-0.0, -0.0)]),
        ("cosine", O::Cos, vec![u(0.0, 1.0), u(-0.0, 1.0)]),
        ("tan", O::Tan, vec![u(0.0, 0.0), u(-0.0, -0.0)]),
        ("cbrt", O::Cbrt, vec![u(0.0, 0.0), u(-0.0, -0.0)]),
        ("rsqrt", O::Rsqrt, vec![u(INF, 0.0)]),
        ("atan2", O::Atan2, atan2),
        (
            "power",
            O::Power,
            vec![
                b(3.0, 0.0, 1.0),
                b(0.5, -0.0, 1.0),
                b(1.0, 7.5, 1.0),
                b(0.0, 2.0, 0.0),
                b(0.5, 2000.0, 0.0),
            ],
        ),
    ]
}

/// `op` of `arity` operands of type `ty`, each `[n]`; with `with_bound`, a last operand `b` and
/// a second output `r - b`, which XLA fuses with the function.
fn module(op: &str, arity: usize, ty: P, n: usize, with_bound: bool) -> String {
    let t = format!("{}[{n}]", ty.name());
    let names = ["a", "c"];
    let mut params: Vec<String> = (0..arity).map(|k| format!("{}: {t}", names[k])).collect();
    let mut body: Vec<String> = (0..arity)
        .map(|k| format!("  %{} = {t} parameter({k})", names[k]))
        .collect();
    let ops = (0..arity)
        .map(|k| format!("%{}", names[k]))
        .collect::<Vec<_>>()
        .join(", ");
    if with_bound {
        params.push(format!("b: {t}"));
        body.push(format!("  %b = {t} parameter({arity})"));
        body.push(format!("  %r = {t} {op}({ops})"));
        body.push(format!("  %d = {t} subtract(%r, %b)"));
        body.push(format!("  ROOT %t = ({t}, {t}) tuple(%r, %d)"));
        format!(
            "HloModule m\n\nENTRY %main ({}) -> ({t}, {t}) {{\n{}\n}}\n",
            params.join(", "),
            body.join("\n")
        )
    } else {
        body.push(format!("  ROOT %r = {t} {op}({ops})"));
        format!(
            "HloModule m\n\nENTRY %main ({}) -> {t} {{\n{}\n}}\n",
            params.join(", "),
            body.join("\n")
        )
    }
}

fn array(ty: P, v: &[f64]) -> Literal {
    lit(
        ty,
        &[v.len() as i64],
        &v.iter().map(|&x| Scalar::F(x)).collect::<Vec<_>>(),
    )
}

/// The bits of each element of a literal.
fn bits(l: &hlo::ArrayLiteral) -> Vec<u128> {
    (0..l.len()).map(|i| l.bits(i)).collect()
}

#[test]
fn saturation_bounds_are_exact_on_xla_cpu() {
    let mut jobs = Vec::new();
    let mut what = Vec::new();
    for ty in TYPES {
        for (name, op, cases) in table(ty) {
            let arity = cases[0].0.len();
            let mut args: Vec<Literal> = (0..arity)
                .map(|k| array(ty, &cases.iter().map(|c| c.0[k]).collect::<Vec<_>>()))
                .collect();
            // The bound as the type rounds it (pi, pi/2).
            let bound = array(ty, &cases.iter().map(|c| c.1).collect::<Vec<_>>());
            args.push(bound.clone());
            let text = module(name, arity, ty, cases.len(), true);
            // The oracle gives the bound, and the rule calls it exact.
            let ours = eval(&text, &args).unwrap();
            let (r, d) = (ours.leaves()[0].clone(), ours.leaves()[1].clone());
            let b = bound.as_array().unwrap();
            let ins: Vec<Vec<f64>> = args[..arity].iter().map(vals).collect();
            for (i, case) in cases.iter().enumerate() {
                assert_eq!(r.bits(i), b.bits(i), "oracle: {name} {ty} {:?}", case.0);
                assert_eq!(vals(&Literal::Array(d.clone()))[i], 0.0);
                let at: Vec<f64> = ins.iter().map(|v| v[i]).collect();
                assert!(
                    exact_result(op, ty, &at, b.get(i).to_f64()),
                    "rule: {name} {ty} {:?}",
                    case.0
                );
            }
            what.push((name, ty, cases, bound));
            jobs.push((text, args));
        }
    }
    if skip_xla() {
        return;
    }
    let xla = run_xla(&jobs);
    let mut failures = Vec::new();
    for ((name, ty, cases, bound), x) in what.iter().zip(&xla) {
        let x = x
            .as_ref()
            .unwrap_or_else(|e| panic!("{name} {ty}: XLA failed: {e}"));
        let (r, d) = (&x[0], &x[1]);
        let b = bound.as_array().unwrap();
        for (i, case) in cases.iter().enumerate() {
            if r.bits(i) != b.bits(i) || d.get(i).to_f64() != 0.0 {
                failures.push(format!(
                    "{name} {ty} {:?}: XLA {:?} (fused difference {:?}), bound {:?}",
                    case.0,
                    r.get(i),
                    d.get(i),
                    b.get(i)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn lin(a: f64, b: f64, n: usize) -> Vec<f64> {
    (0..=n).map(|k| a + (b - a) * k as f64 / n as f64).collect()
}

/// Machine epsilon of `ty`.
fn eps(ty: P) -> f64 {
    match ty {
        P::F16 => 2f64.powi(-10),
        P::Bf16 => 2f64.powi(-7),
        P::F32 => 2f64.powi(-23),
        _ => f64::EPSILON,
    }
}

/// Zeros, powers of two and values around them, and arguments deep in saturation.
fn common_inputs() -> Vec<f64> {
    let mut v = vec![0.0, -0.0, 6e-8, -6e-8, 1e-7];
    for k in 1..70 {
        let t = 2f64.powi(-k);
        v.extend([t, -t, 1.5 * t, -1.5 * t]);
    }
    v.extend([40.0, -40.0, 1e300, -1e300, 1e30, -1e30, 800.0, -800.0]);
    v.extend([1000.0, -1000.0, INF, -INF, 60000.0, -60000.0]);
    v
}

fn unary_sweep(op: hlo::Opcode, ty: P) -> Vec<f64> {
    use hlo::Opcode as O;
    let mut v = common_inputs();
    let e = eps(ty);
    match op {
        O::Tanh => v.extend(lin(-25.0, 25.0, 8000)),
        O::Erf => v.extend(lin(-8.0, 8.0, 6000)),
        O::Logistic => {
            v.extend(lin(-800.0, -60.0, 4000));
            v.extend(lin(-5.0, 5.0, 200));
            v.extend(lin(8.0, 45.0, 4000));
        }
        O::Exp => {
            v.extend(lin(-760.0, -60.0, 4000));
            v.extend(lin(-2.0 * e, 2.0 * e, 2000));
            v.extend(lin(-1e-3, 1e-3, 1000));
        }
        O::Expm1 => v.extend(lin(-45.0, -8.0, 4000)),
        O::Log => {
            v.extend((-40..=40).map(|k| 1.0 + k as f64 * e / 2.0));
            v.extend(lin(0.5, 2.0, 500));
        }
        O::Cos => {
            v.extend(lin(-3.0 * e.sqrt(), 3.0 * e.sqrt(), 4000));
            v.extend(lin(-1e-2, 1e-2, 1000));
        }
        O::Rsqrt => v.extend([1.0, 4.0, 0.25, 1e38, 3e38, 65504.0, 1e308, f64::MAX]),
        _ => v.extend(lin(-1.0, 1.0, 500)),
    }
    v
}

fn binary_sweep(op: hlo::Opcode, ty: P) -> Vec<(f64, f64)> {
    let specials = [
        0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, 3.0, 1e-30, -1e-30, 1e30, -1e30, 1e300, -1e300, INF,
        -INF,
    ];
    let mut v: Vec<(f64, f64)> = specials
        .iter()
        .flat_map(|&a| specials.iter().map(move |&b| (a, b)))
        .collect();
    if op == hlo::Opcode::Atan2 {
        for k in 0..80 {
            let t = 2f64.powi(-k);
            for s in [1.0, -1.0] {
                v.extend([(s * t, -1.0), (s * t, 1.0), (s, t), (s, -t)]);
                v.extend([(s * t * 3.0, -7.0), (s / t, 1.0), (s / t, -1.0)]);
            }
        }
        for k in 0..2000 {
            let (y, z) = (1e-12 * k as f64, 1e-5 * k as f64);
            v.extend([(y, -1.0), (-y, -1.0), (1.0, y), (z, -1.0), (1.0, -z)]);
        }
    } else {
        for k in 0..200 {
            let x = 0.1 * k as f64;
            v.extend([(x, 0.0), (-x, 0.0), (1.0, x), (1.0, -x), (0.0, x)]);
            v.extend([(0.5, 20.0 * x), (0.5, 100.0 * x), (1e-3, 10.0 * x)]);
        }
        let e = eps(ty);
        for k in -60..=60 {
            for y in [
                1e-3, 0.1, 0.3, 0.49, 0.5, 0.51, 0.9, 1.5, 2.0, -0.3, -0.5, -1.0, 10.0,
            ] {
                v.push((1.0 + k as f64 * e / 4.0, y));
            }
        }
        for k in 1..80 {
            for x in [0.5, 0.9, 1.1, 2.0, 10.0, 1e10, 1e-10] {
                v.extend([(x, 2f64.powi(-k)), (x, -(2f64.powi(-k)))]);
            }
        }
    }
    v
}

/// Subnormal values read as zero on XLA CPU (denormals-are-zero): the `flush_denormals`
/// variant's business, not this rule's.
fn subnormal(ty: P, x: f64) -> bool {
    let min_normal = match ty {
        P::F16 => 2f64.powi(-14),
        P::Bf16 | P::F32 => 2f64.powi(-126),
        _ => f64::MIN_POSITIVE,
    };
    x != 0.0 && x.abs() < min_normal
}

#[test]
fn exact_results_hold_on_xla_cpu_over_sweeps() {
    use hlo::Opcode as O;
    let unary = [
        ("tanh", O::Tanh),
        ("erf", O::Erf),
        ("logistic", O::Logistic),
        ("exponential", O::Exp),
        ("exponential-minus-one", O::Expm1),
        ("log", O::Log),
        ("log-plus-one", O::Log1p),
        ("sine", O::Sin),
        ("cosine", O::Cos),
        ("tan", O::Tan),
        ("cbrt", O::Cbrt),
        ("rsqrt", O::Rsqrt),
    ];
    let mut jobs = Vec::new();
    let mut what = Vec::new();
    for ty in TYPES {
        for (name, op) in unary {
            let xs = unary_sweep(op, ty);
            what.push((name, op, ty));
            jobs.push((module(name, 1, ty, xs.len(), false), vec![array(ty, &xs)]));
        }
        for (name, op) in [("atan2", O::Atan2), ("power", O::Power)] {
            let ps = binary_sweep(op, ty);
            let a: Vec<f64> = ps.iter().map(|p| p.0).collect();
            let c: Vec<f64> = ps.iter().map(|p| p.1).collect();
            what.push((name, op, ty));
            jobs.push((
                module(name, 2, ty, ps.len(), false),
                vec![array(ty, &a), array(ty, &c)],
            ));
        }
    }
    let ours: Vec<Literal> = jobs.iter().map(|(t, a)| eval(t, a).unwrap()).collect();
    if skip_xla() {
        return;
    }
    let xla = run_xla(&jobs);
    let mut failures = Vec::new();
    let mut summary = Vec::new();
    for (((name, op, ty), (_, args)), (o, x)) in what.iter().zip(&jobs).zip(ours.iter().zip(&xla)) {
        let x = &x
            .as_ref()
            .unwrap_or_else(|e| panic!("{name} {ty}: XLA failed: {e}"))[0];
        let o = o.as_array().unwrap();
        let ins: Vec<Vec<f64>> = args.iter().map(vals).collect();
        let (ob, xb) = (bits(o), bits(x));
        let mut checked = 0;
        for i in 0..o.len() {
            let at: Vec<f64> = ins.iter().map(|v| v[i]).collect();
            let r = o.get(i).to_f64();
            if at.iter().any(|&v| subnormal(*ty, v))
                || !r.is_finite()
                || !exact_result(*op, *ty, &at, r)
            {
                continue;
            }
            checked += 1;
            if ob[i] != xb[i] {
                failures.push(format!(
                    "{name} {ty} {at:?}: oracle {r:e} (exact by the rule), XLA {:e}",
                    x.get(i).to_f64()
                ));
            }
        }
        assert!(checked > 0, "{name} {ty}: no exact result in the sweep");
        summary.push(format!("{name} {ty}: {checked} exact of {}", o.len()));
    }
    eprintln!("{}", summary.join("\n"));
    failures.truncate(40);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

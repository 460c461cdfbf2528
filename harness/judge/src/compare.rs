//! The comparator: which elements of a backend's result are not the oracle's, and by how much.
//!
//! # What differs
//! - Results are compared leaf by leaf (tuples flattened depth-first, as XLA returns them). A
//!   different number of leaves, a different element type or different dimensions is a
//!   structural difference.
//! - An element differs unless it is the same value ([`same_value`]): the same bits, or a NaN in
//!   both (any sign and payload; complex values part by part). `-0` and `+0` differ, a
//!   subnormal and zero differ, one ulp differs. Whether a difference is a bug is never decided
//!   here: every differing element goes to the set of results a legitimate implementation may
//!   return (`proof.rs`, over `interp::enclose`, whose rules are `hlo::semantics`).
//!
//! # Error figures (reported, never deciding)
//! For each differing element the absolute, relative and ulp errors are measured against a
//! documented tolerance ([`Bound`]), so that a report can say how large a difference is and how
//! many elements a fixed-tolerance tool (`run_hlo_module`: abs and rel 1e-3) would have flagged
//! (`OutputComparison::beyond_tolerance`):
//!
//! | type | rel | ulps | abs (times the leaf's largest finite \|expected\|) |
//! |---|---|---|---|
//! | f64 | 1e-12 | 16 | 1e-13 |
//! | f32 | 1e-5 | 16 | 1e-6 |
//! | f16 | 4 eps = 3.9e-3 | 2 | 2e-3 |
//! | bf16 | 4 eps = 3.1e-2 | 2 | 1.6e-2 |
//! | f8 / f4 | 2 eps | 1 | 2 eps |
//!
//! widened by the cone's [`ToleranceHint`] (reduction length, excess precision, approximated
//! functions). The same figures order the worst elements a mismatch report shows, and
//! [`ClosestMerge`] uses them when the explanation search (`choices.rs`, `hlo-diff run
//! --explain`) looks for the single implementation choice closest to XLA's result.

use hlo::{ArrayLiteral, CompId, InstrId, Literal, Module, Opcode, PrimitiveType, Scalar};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// What XLA may legitimately do to one output, derived from the ops feeding it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToleranceHint {
    /// Total length of the reductions (reduce, dot, convolution, reduce-window, ...) feeding the
    /// output, summed over the cone; 0 when there are none.
    pub reduction_length: u64,
    /// Some float arithmetic in the cone is done in a type narrower than f32 (f16, bf16, f8, f4).
    pub excess_precision_possible: bool,
    /// The narrowest float type in the cone (for the excess-precision allowance).
    pub narrow_type: Option<PrimitiveType>,
    /// exp, log, tanh, logistic, erf, trigonometric functions, pow, ... feed the output.
    pub approximate_transcendentals: bool,
    /// The output depends on `rng`: its values are implementation-defined.
    pub unspecified_values: bool,
    /// The lowest-precision float type (complex: its component) computed in the cone: an f64
    /// or c128 output whose value went through f32 or c64 carries f32 rounding.
    #[serde(default)]
    pub computed_in: Option<PrimitiveType>,
    /// `power` feeds the output: the error of exp(w ln z) grows with |w ln z| (the rounding of
    /// the logarithm is multiplied by the exponent).
    #[serde(default)]
    pub power: bool,
}

/// How strictly to compare.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tolerance {
    /// Multiplies every default bound (1.0 = the documented defaults).
    pub scale: f64,
    /// Replaces the absolute bound (an absolute value, not scaled by magnitudes).
    pub abs: Option<f64>,
    /// Replaces the relative bound.
    pub rel: Option<f64>,
    /// One hint per output leaf (index = leaf index); missing entries mean no freedom.
    pub hints: Vec<ToleranceHint>,
    /// How many of the worst elements each mismatching output reports.
    pub max_reported: usize,
}

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance {
            scale: 1.0,
            abs: None,
            rel: None,
            hints: Vec::new(),
            max_reported: 5,
        }
    }
}

impl Tolerance {
    /// The default rules with hints computed from `module`.
    pub fn for_module(module: &Module) -> Tolerance {
        Tolerance {
            hints: hints_for(module),
            ..Tolerance::default()
        }
    }

    /// Bitwise-ish equality: no freedom at all (used to check a backend against itself; NaNs
    /// still compare equal to NaNs).
    pub fn exact() -> Tolerance {
        Tolerance {
            scale: 0.0,
            abs: Some(0.0),
            rel: Some(0.0),
            hints: Vec::new(),
            max_reported: 5,
        }
    }
}

/// The bounds one element is judged by. An element mismatches when its error exceeds all three.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bound {
    #[serde(with = "f64_text")]
    pub abs: f64,
    #[serde(with = "f64_text")]
    pub rel: f64,
    pub ulps: u64,
}

/// One element that differs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ElementMismatch {
    /// Row-major flat index.
    pub flat: usize,
    /// Multi-dimensional index.
    pub index: Vec<i64>,
    pub expected: String,
    pub actual: String,
    #[serde(with = "f64_text")]
    pub abs_err: f64,
    #[serde(with = "f64_text")]
    pub rel_err: f64,
    /// Distance in ulps of the element type (floats only; saturated for NaN/inf cases).
    pub ulps: Option<u64>,
    pub bound: Bound,
}

/// The comparison of one output leaf.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutputComparison {
    pub output: usize,
    pub ty: PrimitiveType,
    pub dims: Vec<i64>,
    pub elements: usize,
    /// Elements that are not the same value ([`same_value`]): what the set decides.
    pub mismatched_elements: usize,
    /// Of those, the elements whose error exceeds the documented tolerance (an error figure,
    /// for comparison with fixed-tolerance tools; it decides nothing).
    #[serde(default)]
    pub beyond_tolerance: usize,
    /// Largest errors over all elements compared numerically (matches included): the error
    /// distribution a campaign charts.
    #[serde(with = "f64_text")]
    pub max_abs_err: f64,
    #[serde(with = "f64_text")]
    pub max_rel_err: f64,
    pub max_ulps: u64,
    /// The worst mismatching elements, worst first.
    pub worst: Vec<ElementMismatch>,
    /// Set when the structure differs (type or dims); no elements were compared.
    pub structure: Option<String>,
    /// The hint the bounds were computed with.
    pub hint: ToleranceHint,
}

impl OutputComparison {
    pub fn is_match(&self) -> bool {
        self.structure.is_none() && self.mismatched_elements == 0
    }
}

/// The result of [`compare`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Set when the number of leaves differs.
    pub structure: Option<String>,
    pub outputs: Vec<OutputComparison>,
}

impl Comparison {
    pub fn is_match(&self) -> bool {
        self.structure.is_none() && self.outputs.iter().all(OutputComparison::is_match)
    }

    /// Indices of the output leaves that differ.
    pub fn mismatched_outputs(&self) -> Vec<usize> {
        self.outputs
            .iter()
            .filter(|o| !o.is_match())
            .map(|o| o.output)
            .collect()
    }

    /// Largest ulp distance over all float outputs.
    pub fn max_ulps(&self) -> u64 {
        self.outputs.iter().map(|o| o.max_ulps).max().unwrap_or(0)
    }

    pub fn max_rel_err(&self) -> f64 {
        self.outputs
            .iter()
            .map(|o| o.max_rel_err)
            .fold(0.0, f64::max)
    }

    /// A few lines for humans.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        if let Some(m) = &self.structure {
            s.push_str(m);
            s.push('\n');
        }
        for o in self.outputs.iter().filter(|o| !o.is_match()) {
            let dims = o
                .dims
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(",");
            if let Some(m) = &o.structure {
                s.push_str(&format!("output {}: {m}\n", o.output));
                continue;
            }
            s.push_str(&format!(
                "output {} {}[{}]: {} of {} elements differ\n",
                o.output, o.ty, dims, o.mismatched_elements, o.elements
            ));
            for e in &o.worst {
                s.push_str(&format!(
                    "  at {:?}: expected {} actual {} (abs {:.3e}, rel {:.3e}, ulps {}; bound abs {:.3e} rel {:.3e} ulps {})\n",
                    e.index,
                    e.expected,
                    e.actual,
                    e.abs_err,
                    e.rel_err,
                    e.ulps.map(|u| u.to_string()).unwrap_or_else(|| "-".into()),
                    e.bound.abs,
                    e.bound.rel,
                    e.bound.ulps
                ));
            }
        }
        s
    }
}

/// Compares `actual` against `expected` (the oracle's result).
pub fn compare(expected: &Literal, actual: &Literal, tol: &Tolerance) -> Comparison {
    let e = expected.leaves();
    let a = actual.leaves();
    compare_leaves(&e, &a, tol)
}

/// [`compare`] over already flattened leaves.
pub fn compare_leaves(
    expected: &[&ArrayLiteral],
    actual: &[&ArrayLiteral],
    tol: &Tolerance,
) -> Comparison {
    let structure = (expected.len() != actual.len()).then(|| {
        format!(
            "expected {} output arrays, got {}",
            expected.len(),
            actual.len()
        )
    });
    let outputs = expected
        .iter()
        .zip(actual.iter())
        .enumerate()
        .map(|(i, (e, a))| {
            let hint = tol.hints.get(i).cloned().unwrap_or_default();
            compare_array(i, e, a, &hint, tol, &mut None)
        })
        .collect();
    Comparison { structure, outputs }
}

/// The flat indices of the elements of output `leaf` that differ from the oracle's beyond the
/// tolerance; `None` when they cannot be told apart one by one (the shapes differ, or the
/// output is compared as the float a `bitcast-convert` of it holds).
pub fn failing_elements(
    leaf: usize,
    expected: &ArrayLiteral,
    actual: &ArrayLiteral,
    tol: &Tolerance,
) -> Option<Vec<usize>> {
    let hint = tol.hints.get(leaf).cloned().unwrap_or_default();
    let mut failing = Some(Vec::new());
    let oc = compare_array(leaf, expected, actual, &hint, tol, &mut failing);
    if oc.structure.is_some() {
        return None;
    }
    failing
}

fn dims_text(d: &[i64]) -> String {
    d.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Machine epsilon (2^-mantissa bits) of a float type.
pub fn epsilon(ty: PrimitiveType) -> f64 {
    match ty.float_bits() {
        Some((_, m)) => 2f64.powi(-(m as i32)),
        None => match ty.complex_component() {
            Some(c) => epsilon(c),
            None => 0.0,
        },
    }
}

/// Largest finite value of a float type.
fn max_finite(ty: PrimitiveType) -> f64 {
    use PrimitiveType::*;
    match ty {
        F64 => f64::MAX,
        F32 => f32::MAX as f64,
        F16 => 65504.0,
        Bf16 => 3.3895313892515355e38,
        F8E5M2 => 57344.0,
        F8E5M2FNUZ => 57344.0,
        F8E4M3 => 240.0,
        F8E4M3FN => 448.0,
        F8E4M3FNUZ => 240.0,
        F8E4M3B11FNUZ => 30.0,
        F8E3M4 => 15.5,
        F8E8M0FNU => 1.7014118346046923e38,
        F4E2M1FN => 6.0,
        _ => f64::MAX,
    }
}

/// Smallest positive normal value of a float type.
pub fn min_normal(ty: PrimitiveType) -> f64 {
    match ty.float_bits() {
        Some((e, _)) if e > 0 => {
            let bias = (1i32 << (e - 1)) - 1;
            let bias = match ty {
                PrimitiveType::F8E4M3B11FNUZ => 11,
                PrimitiveType::F8E5M2FNUZ | PrimitiveType::F8E4M3FNUZ => bias + 1,
                _ => bias,
            };
            2f64.powi(1 - bias)
        }
        _ => 0.0,
    }
}

/// The default bounds of a type: (rel, ulps, abs factor).
fn defaults(ty: PrimitiveType) -> (f64, u64, f64) {
    use PrimitiveType::*;
    match ty {
        F64 => (1e-12, 16, 1e-13),
        F32 => (1e-5, 16, 1e-6),
        F16 => (4.0 * epsilon(F16), 2, 2e-3),
        Bf16 => (4.0 * epsilon(Bf16), 2, 1.6e-2),
        _ => (2.0 * epsilon(ty), 1, 2.0 * epsilon(ty)),
    }
}

/// The bound for elements of type `ty` (a real float type) in an output whose largest finite
/// expected magnitude is `scale`.
pub fn bound_for(ty: PrimitiveType, hint: &ToleranceHint, scale: f64, tol: &Tolerance) -> Bound {
    // A value computed in a narrower type than the output's carries that type's rounding.
    let ty = match hint.computed_in {
        Some(t) if epsilon(t) > epsilon(ty) => t,
        _ => ty,
    };
    let (mut rel, mut ulps, abs_factor) = defaults(ty);
    let mut abs = abs_factor * scale;
    let eps = epsilon(ty);
    let narrow_eps = if hint.excess_precision_possible {
        hint.narrow_type.map(epsilon).unwrap_or(0.0)
    } else {
        0.0
    };
    if hint.excess_precision_possible {
        rel += 4.0 * narrow_eps.max(eps);
        ulps += 4;
    }
    if hint.approximate_transcendentals {
        let base = if ty == PrimitiveType::F64 {
            epsilon(PrimitiveType::F64)
        } else {
            epsilon(PrimitiveType::F32)
        };
        rel += 8.0 * base;
        ulps += 2;
        if hint.power {
            // Generated exponents and logarithms reach tens: |w ln z| up to ~64 ulps of error.
            rel += 64.0 * base;
        }
        // The error of an approximated function is relative to O(1) quantities (an angle, a
        // ratio), so a result that cancels to ~0 (the imaginary part of atan2(z, z)) may carry
        // that much absolute noise: 8 ulps at 1.0.
        abs = abs.max(8.0 * base);
    }
    if hint.reduction_length > 1 {
        let n = hint.reduction_length as f64;
        let acc_eps = eps.max(narrow_eps);
        rel += n * acc_eps;
        abs += n * acc_eps * scale;
    }
    rel *= tol.scale;
    abs *= tol.scale;
    ulps = (ulps as f64 * tol.scale).round() as u64;
    Bound {
        abs: tol.abs.unwrap_or(abs),
        rel: tol.rel.unwrap_or(rel),
        ulps,
    }
}

/// Sign-magnitude bits mapped to a line where adjacent floats differ by one.
fn ordered(ty: PrimitiveType, bits: u128) -> i128 {
    let w = match ty {
        PrimitiveType::F8E8M0FNU => return bits as i128,
        _ => ty.bit_width(),
    };
    let mask: u128 = (1u128 << (w - 1)) - 1;
    let mag = (bits & mask) as i128;
    if bits >> (w - 1) & 1 == 1 {
        -mag
    } else {
        mag
    }
}

fn ulp_distance(ty: PrimitiveType, e: u128, a: u128) -> u64 {
    let d = (ordered(ty, e) - ordered(ty, a)).unsigned_abs();
    d.min(u64::MAX as u128) as u64
}

fn fmt_f(v: f64) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        if v > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        }
    } else {
        format!("{v:?}")
    }
}

fn unravel(mut flat: usize, dims: &[i64]) -> Vec<i64> {
    let mut idx = vec![0i64; dims.len()];
    for k in (0..dims.len()).rev() {
        let d = dims[k].max(1) as usize;
        idx[k] = (flat % d) as i64;
        flat /= d;
    }
    idx
}

struct Judged {
    ok: bool,
    abs: f64,
    rel: f64,
    ulps: Option<u64>,
}

/// Judges one real float pair: values `e`, `a` with bit patterns `eb`, `ab` of type `ty`.
fn judge_float(
    ty: PrimitiveType,
    e: f64,
    a: f64,
    eb: u128,
    ab: u128,
    b: &Bound,
    hint: &ToleranceHint,
) -> Judged {
    // An overflow the oracle met and XLA may have avoided (a wider intermediate under excess
    // precision), or met differently (partial sums overflowing both ways: NaN), is no match
    // here: the set of legitimate results decides it (`proof.rs`), so that a finite value the
    // wider type never gives still fails.
    if e.is_nan() || a.is_nan() {
        let ok = e.is_nan() && a.is_nan();
        return Judged {
            ok,
            abs: if ok { 0.0 } else { f64::INFINITY },
            rel: if ok { 0.0 } else { f64::INFINITY },
            ulps: if ok { Some(0) } else { None },
        };
    }
    if e.is_infinite() || a.is_infinite() {
        if e == a {
            return Judged {
                ok: true,
                abs: 0.0,
                rel: 0.0,
                ulps: Some(0),
            };
        }
        // An approximation may overflow a little early or late.
        let finite = if e.is_infinite() { a } else { e };
        let inf = if e.is_infinite() { e } else { a };
        let near_edge = finite.is_finite()
            && finite.signum() == inf.signum()
            && finite.abs() >= max_finite(ty) * (1.0 - b.rel);
        let ok = near_edge
            && (hint.approximate_transcendentals
                || hint.reduction_length > 1
                || hint.excess_precision_possible);
        return Judged {
            ok,
            abs: f64::INFINITY,
            rel: f64::INFINITY,
            ulps: Some(ulp_distance(ty, eb, ab)),
        };
    }
    let abs = (e - a).abs();
    // Flush to zero: XLA CPU runs with denormals flushed, so a subnormal result may be zero
    // (or the other way round, when XLA kept a wider intermediate).
    if e.abs() < min_normal(ty) && a.abs() < min_normal(ty) && e.abs() + a.abs() > 0.0 {
        let ulps = ulp_distance(ty, eb, ab);
        return Judged {
            ok: true,
            abs,
            rel: 0.0,
            ulps: Some(ulps.min(1)),
        };
    }
    let rel = if e == 0.0 {
        if abs == 0.0 {
            0.0
        } else {
            f64::INFINITY
        }
    } else {
        abs / e.abs()
    };
    let ulps = if e == 0.0 && a == 0.0 {
        0
    } else {
        ulp_distance(ty, eb, ab)
    };
    let ok = abs <= b.abs || rel <= b.rel || ulps <= b.ulps;
    Judged {
        ok,
        abs,
        rel,
        ulps: Some(ulps),
    }
}

/// Whether element `i` of `e` and `a` is the same value: the same bits, or a NaN in both (any
/// sign, any payload; for complex values, part by part). Every other difference is decided by
/// the set of legitimate results (`proof.rs`), never by a tolerance.
pub fn same_value(e: &ArrayLiteral, a: &ArrayLiteral, i: usize) -> bool {
    if e.bytes_at(i) == a.bytes_at(i) {
        return true;
    }
    let part = |x: f64, y: f64, xb: u128, yb: u128| xb == yb || (x.is_nan() && y.is_nan());
    match (e.get(i), a.get(i)) {
        (Scalar::F(x), Scalar::F(y)) => x.is_nan() && y.is_nan(),
        (Scalar::C(xr, xi), Scalar::C(yr, yi)) => {
            let half = e.ty.complex_component().map_or(0, |c| c.byte_size()) * 8;
            let m = (1u128 << half) - 1;
            let (eb, ab) = (e.bits(i), a.bits(i));
            part(xr, yr, eb & m, ab & m) && part(xi, yi, eb >> half, ab >> half)
        }
        _ => false,
    }
}

/// `failing`, when given, receives the flat index of every element that is not the same value
/// ([`same_value`]); the tolerance only measures the differences (error figures and the worst
/// elements reported), it never decides which elements differ.
fn compare_array(
    output: usize,
    e: &ArrayLiteral,
    a: &ArrayLiteral,
    hint: &ToleranceHint,
    tol: &Tolerance,
    failing: &mut Option<Vec<usize>>,
) -> OutputComparison {
    let mut oc = OutputComparison {
        output,
        ty: e.ty,
        dims: e.dims.clone(),
        elements: e.len(),
        mismatched_elements: 0,
        beyond_tolerance: 0,
        max_abs_err: 0.0,
        max_rel_err: 0.0,
        max_ulps: 0,
        worst: Vec::new(),
        structure: None,
        hint: hint.clone(),
    };
    if e.ty != a.ty || e.dims != a.dims {
        oc.structure = Some(format!(
            "expected {}[{}], got {}[{}]",
            e.ty,
            dims_text(&e.dims),
            a.ty,
            dims_text(&a.dims)
        ));
        return oc;
    }
    if e.len() != a.len() {
        oc.structure = Some(format!("expected {} elements, got {}", e.len(), a.len()));
        return oc;
    }
    // Identical bits are the same value (and add nothing to the error figures): a whole output
    // that agrees bit for bit, the common case, is not decoded at all.
    if hint.unspecified_values || e.data == a.data {
        return oc;
    }
    let n = e.len();
    let differing: Vec<usize> = (0..n).filter(|&i| !same_value(e, a, i)).collect();
    oc.mismatched_elements = differing.len();
    if let Some(f) = failing.as_mut() {
        f.clone_from(&differing);
    }
    // (badness, element) of every differing element; only the worst few are kept.
    let mut bad: Vec<(f64, ElementMismatch)> = Vec::new();
    let ty = e.ty;
    if ty.is_float() || ty.is_complex() {
        let comp_ty = ty.complex_component().unwrap_or(ty);
        // Scale: the largest finite expected magnitude in this output.
        let mut scale = 0f64;
        for i in 0..n {
            match e.get(i) {
                Scalar::F(v) if v.is_finite() => scale = scale.max(v.abs()),
                Scalar::C(r, im) => {
                    if r.is_finite() {
                        scale = scale.max(r.abs())
                    }
                    if im.is_finite() {
                        scale = scale.max(im.abs())
                    }
                }
                _ => {}
            }
        }
        let bound = bound_for(comp_ty, hint, scale, tol);
        let half = comp_ty.byte_size();
        for &i in &differing {
            let parts: Vec<(f64, f64, u128, u128)> = match (e.get(i), a.get(i)) {
                (Scalar::F(x), Scalar::F(y)) => vec![(x, y, e.bits(i), a.bits(i))],
                (Scalar::C(xr, xi), Scalar::C(yr, yi)) => {
                    let eb = e.bits(i);
                    let ab = a.bits(i);
                    let m = (1u128 << (half * 8)) - 1;
                    vec![
                        (xr, yr, eb & m, ab & m),
                        (xi, yi, eb >> (half * 8), ab >> (half * 8)),
                    ]
                }
                _ => vec![],
            };
            let mut worst_j: Option<Judged> = None;
            let mut all_ok = true;
            for (x, y, xb, yb) in parts {
                let j = judge_float(comp_ty, x, y, xb, yb, &bound, hint);
                if j.abs.is_finite() {
                    oc.max_abs_err = oc.max_abs_err.max(j.abs);
                }
                if j.rel.is_finite() {
                    oc.max_rel_err = oc.max_rel_err.max(j.rel);
                }
                if let Some(u) = j.ulps {
                    oc.max_ulps = oc.max_ulps.max(u);
                }
                all_ok &= j.ok;
                if worst_j
                    .as_ref()
                    .map(|w| j.ulps.unwrap_or(u64::MAX) > w.ulps.unwrap_or(u64::MAX))
                    .unwrap_or(true)
                {
                    worst_j = Some(j);
                }
            }
            if !all_ok {
                oc.beyond_tolerance += 1;
            }
            let Some(j) = worst_j else { continue };
            let badness = if j.rel.is_finite() { j.rel } else { f64::MAX };
            push_worst(&mut bad, tol.max_reported, badness, || ElementMismatch {
                flat: i,
                index: unravel(i, &e.dims),
                expected: scalar_text(e.get(i)),
                actual: scalar_text(a.get(i)),
                abs_err: j.abs,
                rel_err: j.rel,
                ulps: j.ulps,
                bound,
            });
        }
    } else {
        let bound = Bound {
            abs: 0.0,
            rel: 0.0,
            ulps: 0,
        };
        for &i in &differing {
            let (x, y) = (e.get(i), a.get(i));
            oc.beyond_tolerance += 1;
            let abs = int_diff(x, y);
            oc.max_abs_err = oc.max_abs_err.max(abs);
            push_worst(&mut bad, tol.max_reported, abs, || ElementMismatch {
                flat: i,
                index: unravel(i, &e.dims),
                expected: scalar_text(x),
                actual: scalar_text(y),
                abs_err: abs,
                rel_err: 0.0,
                ulps: None,
                bound,
            });
        }
    }
    bad.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.flat.cmp(&y.1.flat)));
    oc.worst = bad.into_iter().map(|(_, m)| m).collect();
    oc
}

fn push_worst(
    bad: &mut Vec<(f64, ElementMismatch)>,
    keep: usize,
    badness: f64,
    make: impl FnOnce() -> ElementMismatch,
) {
    if keep == 0 {
        return;
    }
    if bad.len() < keep {
        bad.push((badness, make()));
        return;
    }
    // Replace the least bad one if this is worse.
    let (k, least) = bad
        .iter()
        .enumerate()
        .min_by(|x, y| x.1 .0.total_cmp(&y.1 .0))
        .map(|(k, v)| (k, v.0))
        .expect("non-empty");
    if badness > least {
        bad[k] = (badness, make());
    }
}

fn int_diff(x: Scalar, y: Scalar) -> f64 {
    match (x, y) {
        (Scalar::S(a), Scalar::S(b)) => (a as i128 - b as i128).unsigned_abs() as f64,
        (Scalar::U(a), Scalar::U(b)) => a.abs_diff(b) as f64,
        (Scalar::Pred(a), Scalar::Pred(b)) => (a != b) as u8 as f64,
        _ => f64::INFINITY,
    }
}

/// An element as text (floats round-trip; NaN/inf spelled out).
pub fn scalar_text(s: Scalar) -> String {
    match s {
        Scalar::Pred(b) => b.to_string(),
        Scalar::S(v) => v.to_string(),
        Scalar::U(v) => v.to_string(),
        Scalar::F(v) => fmt_f(v),
        Scalar::C(r, i) => format!("({}, {})", fmt_f(r), fmt_f(i)),
    }
}

/// Whether two results are bitwise identical (NaN payloads included): the test for a backend
/// agreeing with itself.
pub fn bitwise_equal(x: &Literal, y: &Literal) -> bool {
    let (a, b) = (x.leaves(), y.leaves());
    a.len() == b.len() && a.iter().zip(b.iter()).all(|(p, q)| p == q)
}

// ---------------------------------------------------------------------------------------------
// Hints from the module.

/// Functions XLA approximates (the oracle's list, shared with its variants).
const TRANSCENDENTAL: &[Opcode] = interp::variant::APPROXIMATED;

fn is_narrow_float(ty: PrimitiveType) -> bool {
    ty.is_float() && ty.bit_width() < 32
}

/// The computations called (transitively) by an instruction.
fn called_closure(module: &Module, roots: &[CompId], out: &mut BTreeSet<CompId>) {
    for &c in roots {
        if c >= module.computations.len() || !out.insert(c) {
            continue;
        }
        let inner: Vec<CompId> = module.computations[c]
            .instructions
            .iter()
            .flat_map(|i| i.called_computations())
            .collect();
        called_closure(module, &inner, out);
    }
}

fn product(v: impl IntoIterator<Item = i64>) -> u64 {
    v.into_iter()
        .fold(1u64, |acc, d| acc.saturating_mul(d.max(0) as u64))
}

/// The length of the reduction one instruction performs (0 when it is not a reduction).
fn reduction_length(module: &Module, comp: &hlo::Computation, ins: &hlo::Instruction) -> u64 {
    let operand_dims = |k: usize| -> Vec<i64> {
        ins.operands
            .get(k)
            .map(|&o| comp.instructions[o].shape.dims().to_vec())
            .unwrap_or_default()
    };
    match ins.opcode {
        Opcode::Reduce => {
            let d = operand_dims(0);
            product(
                ins.dimensions()
                    .unwrap_or(&[])
                    .iter()
                    .filter_map(|&k| d.get(k as usize).copied()),
            )
        }
        Opcode::ReduceWindow | Opcode::SelectAndScatter => ins
            .window()
            .map(|w| product(w.dims.iter().map(|d| d.size)))
            .unwrap_or(1),
        Opcode::Dot | Opcode::RaggedDot | Opcode::ScaledDot => {
            let d = operand_dims(0);
            product(
                ins.ints("lhs_contracting_dims")
                    .unwrap_or(&[])
                    .iter()
                    .filter_map(|&k| d.get(k as usize).copied()),
            )
        }
        Opcode::Convolution => {
            let k = operand_dims(1);
            let out_f = ins
                .conv_dims()
                .map(|c| c.kernel_output_feature)
                .unwrap_or(-1);
            product(
                k.iter()
                    .enumerate()
                    .filter(|(i, _)| *i as i64 != out_f)
                    .map(|(_, d)| *d),
            )
        }
        Opcode::Scatter => product(operand_dims(ins.operands.len().saturating_sub(1))),
        Opcode::Cholesky | Opcode::TriangularSolve => {
            operand_dims(0).last().copied().unwrap_or(1).max(1) as u64
        }
        Opcode::Fft => product(ins.ints("fft_length").unwrap_or(&[]).iter().copied()),
        Opcode::BatchNormTraining | Opcode::BatchNormInference | Opcode::BatchNormGrad => {
            product(operand_dims(0))
        }
        Opcode::AllReduce | Opcode::ReduceScatter => 1,
        // XLA CPU's library calls (oneDNN matmul, convolution, softmax) reduce like the ops
        // they replaced.
        Opcode::CustomCall => {
            let dims: Vec<Vec<i64>> = (0..ins.operands.len()).map(operand_dims).collect();
            interp::onednn::call_profile(ins, &dims).map_or(0, |p| p.reduction_length)
        }
        _ => {
            let _ = module;
            0
        }
    }
}

fn leaf_count(shape: &hlo::Shape) -> usize {
    shape.leaves().len()
}

/// The hint of the cone of values feeding `start` in `comp` (instructions of called
/// computations included).
fn cone_hint(module: &Module, comp_id: CompId, start: InstrId) -> ToleranceHint {
    let comp = &module.computations[comp_id];
    let mut seen = vec![false; comp.instructions.len()];
    let mut stack = vec![start];
    let mut called = Vec::new();
    let mut hint = ToleranceHint::default();
    let visit = |comp: &hlo::Computation, ins: &hlo::Instruction, hint: &mut ToleranceHint| {
        hint.reduction_length = hint
            .reduction_length
            .saturating_add(reduction_length(module, comp, ins));
        if TRANSCENDENTAL.contains(&ins.opcode) {
            hint.approximate_transcendentals = true;
        }
        if ins.opcode == Opcode::CustomCall {
            let dims: Vec<Vec<i64>> = ins
                .operands
                .iter()
                .map(|&o| comp.instructions[o].shape.dims().to_vec())
                .collect();
            if interp::onednn::call_profile(ins, &dims).is_some_and(|p| p.approximated) {
                hint.approximate_transcendentals = true;
            }
        }
        if ins.opcode == Opcode::Power {
            hint.power = true;
        }
        if matches!(ins.opcode, Opcode::Rng) {
            hint.unspecified_values = true;
        }
        if !matches!(
            ins.opcode,
            Opcode::Parameter | Opcode::Constant | Opcode::Tuple | Opcode::GetTupleElement
        ) {
            for leaf in ins.shape.leaves() {
                let comp = leaf.ty.complex_component().unwrap_or(leaf.ty);
                if comp.is_float() && hint.computed_in.is_none_or(|t| epsilon(comp) > epsilon(t)) {
                    hint.computed_in = Some(comp);
                }
                if is_narrow_float(leaf.ty)
                    || leaf.ty.complex_component().is_some_and(is_narrow_float)
                {
                    hint.excess_precision_possible = true;
                    hint.narrow_type = Some(match hint.narrow_type {
                        Some(t) if epsilon(t) >= epsilon(leaf.ty) => t,
                        _ => leaf.ty,
                    });
                }
            }
        }
    };
    while let Some(id) = stack.pop() {
        if id >= seen.len() || seen[id] {
            continue;
        }
        seen[id] = true;
        let ins = &comp.instructions[id];
        visit(comp, ins, &mut hint);
        called.extend(ins.called_computations());
        stack.extend(ins.operands.iter().copied());
    }
    let mut closure = BTreeSet::new();
    called_closure(module, &called, &mut closure);
    for c in closure {
        let cc = &module.computations[c];
        for ins in &cc.instructions {
            visit(cc, ins, &mut hint);
        }
    }
    hint
}

/// One [`ToleranceHint`] per output leaf of the entry computation: when the root is a `tuple`
/// each operand's cone gives the hints of its leaves; otherwise the whole root's cone is used
/// for every leaf.
pub fn hints_for(module: &Module) -> Vec<ToleranceHint> {
    if module.computations.is_empty() || module.entry >= module.computations.len() {
        return Vec::new();
    }
    let comp = module.entry_computation();
    if comp.instructions.is_empty() || comp.root >= comp.instructions.len() {
        return Vec::new();
    }
    let root = comp.root_instruction();
    let mut out = Vec::new();
    if root.opcode == Opcode::Tuple {
        for &op in &root.operands {
            let h = cone_hint(module, module.entry, op);
            let n = comp
                .instructions
                .get(op)
                .map(|i| leaf_count(&i.shape))
                .unwrap_or(1);
            out.extend(std::iter::repeat_n(h, n));
        }
    } else {
        let h = cone_hint(module, module.entry, comp.root);
        out.extend(std::iter::repeat_n(h, leaf_count(&root.shape)));
    }
    out
}

/// The opcodes feeding output leaf `leaf` (its cone, called computations included), sorted and
/// deduplicated: the "op pattern" of a mismatch signature.
pub fn output_opcodes(module: &Module, leaf: usize) -> Vec<Opcode> {
    let mut ops = BTreeSet::new();
    if module.computations.is_empty() {
        return Vec::new();
    }
    let comp = module.entry_computation();
    if comp.root >= comp.instructions.len() {
        return Vec::new();
    }
    let root = comp.root_instruction();
    let start = if root.opcode == Opcode::Tuple {
        let mut k = 0;
        let mut found = None;
        for &op in &root.operands {
            let n = leaf_count(&comp.instructions[op].shape);
            if leaf < k + n {
                found = Some(op);
                break;
            }
            k += n;
        }
        match found {
            Some(f) => f,
            None => return Vec::new(),
        }
    } else {
        comp.root
    };
    let mut seen = vec![false; comp.instructions.len()];
    let mut stack = vec![start];
    let mut called = Vec::new();
    while let Some(id) = stack.pop() {
        if id >= seen.len() || seen[id] {
            continue;
        }
        seen[id] = true;
        let ins = &comp.instructions[id];
        ops.insert(ins.opcode);
        called.extend(ins.called_computations());
        stack.extend(ins.operands.iter().copied());
    }
    let mut closure = BTreeSet::new();
    called_closure(module, &called, &mut closure);
    for c in closure {
        for ins in &module.computations[c].instructions {
            ops.insert(ins.opcode);
        }
    }
    ops.into_iter().collect()
}

/// f64 fields that may be infinite or NaN: JSON numbers when finite, else `"inf"`, `"-inf"`,
/// `"nan"` (JSON has no such numbers; serde_json would write `null` and fail to read it back).
mod f64_text {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            s.serialize_f64(*v)
        } else if v.is_nan() {
            s.serialize_str("nan")
        } else if *v > 0.0 {
            s.serialize_str("inf")
        } else {
            s.serialize_str("-inf")
        }
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum NumOrText {
        Num(f64),
        Text(String),
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(match NumOrText::deserialize(d)? {
            NumOrText::Num(v) => v,
            NumOrText::Text(t) => match t.as_str() {
                "inf" => f64::INFINITY,
                "-inf" => f64::NEG_INFINITY,
                _ => f64::NAN,
            },
        })
    }
}

/// The inputs with every subnormal float (and complex part) replaced by a zero of the same sign,
/// or `None` when there is none. XLA CPU runs with denormals flushed to zero (inputs included),
/// so a mismatch that disappears when the oracle gets these inputs is explained by that.
pub fn flush_subnormals(inputs: &[Literal]) -> Option<Vec<Literal>> {
    fn flush(v: f64, ty: PrimitiveType) -> f64 {
        if v != 0.0 && v.abs() < min_normal(ty) {
            0.0f64.copysign(v)
        } else {
            v
        }
    }
    fn walk(l: &Literal, changed: &mut bool) -> Literal {
        match l {
            Literal::Array(a) if a.ty.is_float() || a.ty.is_complex() => {
                let comp = a.ty.complex_component().unwrap_or(a.ty);
                let mut b = a.clone();
                for i in 0..a.len() {
                    let v = a.get(i);
                    let w = match v {
                        Scalar::F(x) => Scalar::F(flush(x, comp)),
                        Scalar::C(r, im) => Scalar::C(flush(r, comp), flush(im, comp)),
                        other => other,
                    };
                    if w != v {
                        *changed = true;
                        b.set(i, w);
                    }
                }
                Literal::Array(b)
            }
            Literal::Tuple(t) => Literal::Tuple(t.iter().map(|e| walk(e, changed)).collect()),
            other => other.clone(),
        }
    }
    let mut changed = false;
    let out: Vec<Literal> = inputs.iter().map(|l| walk(l, &mut changed)).collect();
    changed.then_some(out)
}

#[cfg(test)]
mod overflow_in_reductions {
    use super::*;

    fn f32s(v: &[f64]) -> Literal {
        let s: Vec<Scalar> = v.iter().map(|&x| Scalar::F(x)).collect();
        Literal::Array(
            ArrayLiteral::from_scalars(PrimitiveType::F32, vec![v.len() as i64], &s).unwrap(),
        )
    }

    /// A campaign finding (f32 convolution): the oracle's f64 sum rounded to +inf, XLA's f32
    /// partial sums overflowed both ways and gave NaN. The tolerance does not decide that, under
    /// a reduction or not: the set of legitimate results does.
    #[test]
    fn nan_for_an_overflowing_sum_is_left_to_the_set() {
        let e = f32s(&[f64::INFINITY, 1.0]);
        let a = f32s(&[f64::NAN, 1.0]);
        let with = Tolerance {
            hints: vec![ToleranceHint {
                reduction_length: 3,
                ..ToleranceHint::default()
            }],
            ..Tolerance::default()
        };
        assert!(!compare(&e, &a, &with).is_match());
        assert!(!compare(&e, &a, &Tolerance::default()).is_match());
    }

    /// A campaign finding (imag of c128 atan2(z, z)): the oracle's exact 0 against XLA's
    /// 8.3e-18 of rounding noise. Every such element differs (the set decides it); as an error
    /// figure it is within the tolerance under approximate transcendentals only, and only up to
    /// 8 ulps at 1.0.
    #[test]
    fn transcendental_results_near_zero_get_an_absolute_floor() {
        let f64s = |v: &[f64]| {
            let s: Vec<Scalar> = v.iter().map(|&x| Scalar::F(x)).collect();
            Literal::Array(
                ArrayLiteral::from_scalars(PrimitiveType::F64, vec![v.len() as i64], &s).unwrap(),
            )
        };
        let with = Tolerance {
            hints: vec![ToleranceHint {
                approximate_transcendentals: true,
                ..ToleranceHint::default()
            }],
            ..Tolerance::default()
        };
        let e = f64s(&[0.0, -0.0]);
        let noise = compare(&e, &f64s(&[8.3e-18, -3.9e-18]), &with);
        assert!(!noise.is_match(), "every difference goes to the set");
        assert_eq!(noise.outputs[0].mismatched_elements, 2);
        assert_eq!(noise.outputs[0].beyond_tolerance, 0);
        let plain = compare(&e, &f64s(&[8.3e-18, -3.9e-18]), &Tolerance::default());
        assert_eq!(plain.outputs[0].beyond_tolerance, 2);
        let far = compare(&e, &f64s(&[1e-14, 0.0]), &with);
        assert_eq!(far.outputs[0].beyond_tolerance, 1);
    }
}

/// How far a candidate's element `x` is from XLA's `y`, for [`merge_closest`]: 0 when equal
/// (NaN equals NaN; complex values with a non-finite part equal each other), else the distance
/// (for integers at least the smallest positive double, so that unequal is never 0).
fn closeness(x: Scalar, y: Scalar) -> f64 {
    fn d(a: f64, b: f64) -> f64 {
        if a.is_nan() && b.is_nan() || a == b {
            0.0
        } else if a.is_nan() || b.is_nan() {
            f64::INFINITY
        } else {
            (a - b).abs()
        }
    }
    let nonfinite = |r: f64, i: f64| !r.is_finite() || !i.is_finite();
    match (x, y) {
        (Scalar::F(a), Scalar::F(b)) => d(a, b),
        // As the comparison has it: complex values with a non-finite part are all equal.
        (Scalar::C(ar, ai), Scalar::C(br, bi)) if nonfinite(ar, ai) && nonfinite(br, bi) => 0.0,
        (Scalar::C(ar, ai), Scalar::C(br, bi)) => d(ar, br) + d(ai, bi),
        (x, y) if x == y => 0.0,
        (x, y) => int_diff(x, y).max(f64::MIN_POSITIVE),
    }
}

fn same_shape(a: &ArrayLiteral, b: &ArrayLiteral) -> bool {
    a.ty == b.ty && a.dims == b.dims && a.data.len() == b.data.len()
}

/// [`merge_closest`] as the candidates arrive: the merge so far, and the elements where it is
/// not yet bitwise XLA's (the only ones a later candidate can improve), each with its distance.
/// Adding a candidate costs a pass over those elements, not over the array.
#[derive(Clone, Debug)]
pub struct ClosestMerge<'a> {
    actual: &'a ArrayLiteral,
    merged: ArrayLiteral,
    open: Vec<(usize, f64)>,
}

impl<'a> ClosestMerge<'a> {
    /// The merge of the one candidate `first`; `None` when its shape is not `actual`'s.
    pub fn new(first: &ArrayLiteral, actual: &'a ArrayLiteral) -> Option<ClosestMerge<'a>> {
        if !same_shape(first, actual) {
            return None;
        }
        let open = (0..actual.len())
            .filter(|&i| first.bytes_at(i) != actual.bytes_at(i))
            .map(|i| (i, closeness(first.get(i), actual.get(i))))
            .collect();
        Some(ClosestMerge {
            actual,
            merged: first.clone(),
            open,
        })
    }

    /// Takes each element of `c` that is bitwise XLA's or strictly nearer than the merge's
    /// (earlier candidates win ties); whether any was taken. A candidate of another shape
    /// takes nothing.
    pub fn add(&mut self, c: &ArrayLiteral) -> bool {
        if !same_shape(c, self.actual) {
            return false;
        }
        let w = self.actual.ty.byte_size();
        let mut changed = false;
        let (actual, merged) = (self.actual, &mut self.merged);
        self.open.retain_mut(|(i, best)| {
            let i = *i;
            let exact = c.bytes_at(i) == actual.bytes_at(i);
            let d = if exact {
                0.0
            } else {
                closeness(c.get(i), actual.get(i))
            };
            if exact || d < *best {
                merged.data[i * w..(i + 1) * w].copy_from_slice(c.bytes_at(i));
                *best = d;
                changed = true;
            }
            !exact
        });
        changed
    }

    /// The merge so far.
    pub fn merged(&self) -> &ArrayLiteral {
        &self.merged
    }

    pub fn into_merged(self) -> ArrayLiteral {
        self.merged
    }
}

/// Element by element, the candidate value closest to `actual`: bitwise equal first, then equal
/// (NaN equals NaN; complex values with a non-finite part equal each other), then nearest;
/// the earlier candidate on ties. Candidates are outputs of the same program under different
/// allowed implementation choices (see `interp::variant`); comparing `actual` with the merge asks
/// whether each of its elements is one of the allowed results. `None` when shapes differ.
pub fn merge_closest(candidates: &[&ArrayLiteral], actual: &ArrayLiteral) -> Option<ArrayLiteral> {
    let (first, rest) = candidates.split_first()?;
    if rest.iter().any(|c| !same_shape(c, actual)) {
        return None;
    }
    let mut m = ClosestMerge::new(first, actual)?;
    for c in rest {
        m.add(c);
    }
    Some(m.into_merged())
}

/// As [`merge_closest`], except that an element of `actual` lying between the candidates (each
/// part of a float or complex value within the smallest and largest of the candidates' parts,
/// NaNs left out) is taken as it is. For candidates that are one result under growing
/// perturbations of an input, a continuous function takes every value between them (the
/// intermediate value theorem); parts are bounded separately, which is looser for complex
/// values.
pub fn merge_within_hull(
    candidates: &[&ArrayLiteral],
    actual: &ArrayLiteral,
) -> Option<ArrayLiteral> {
    let mut out = merge_closest(candidates, actual)?;
    let parts = |s: Scalar| -> Option<[f64; 2]> {
        match s {
            Scalar::F(x) => Some([x, x]),
            Scalar::C(r, i) => Some([r, i]),
            _ => None,
        }
    };
    let w = actual.ty.byte_size();
    for i in 0..actual.len() {
        let Some(a) = parts(actual.get(i)) else {
            continue;
        };
        let mut lo = [f64::INFINITY; 2];
        let mut hi = [f64::NEG_INFINITY; 2];
        for c in candidates {
            let Some(p) = parts(c.get(i)) else {
                continue;
            };
            for k in 0..2 {
                if !p[k].is_nan() {
                    lo[k] = lo[k].min(p[k]);
                    hi[k] = hi[k].max(p[k]);
                }
            }
        }
        if (0..2).all(|k| lo[k] <= a[k] && a[k] <= hi[k]) {
            out.data[i * w..(i + 1) * w].copy_from_slice(&actual.data[i * w..(i + 1) * w]);
        }
    }
    Some(out)
}

#[cfg(test)]
mod merging_candidates {
    use super::*;

    fn arr(ty: PrimitiveType, v: &[Scalar]) -> ArrayLiteral {
        ArrayLiteral::from_scalars(ty, vec![v.len() as i64], v).unwrap()
    }

    /// Each element comes from the candidate closest to the actual value: bitwise equal first
    /// (a NaN of the same sign), then nearest; the first candidate wins ties.
    #[test]
    fn an_incremental_merge_takes_only_what_brings_an_element_nearer() {
        let f = |v: &[f64]| {
            arr(
                PrimitiveType::F64,
                &v.iter().map(|&x| Scalar::F(x)).collect::<Vec<_>>(),
            )
        };
        let a = f(&[1.0, 2.0, 3.0]);
        let mut m = ClosestMerge::new(&f(&[1.0, 2.5, 4.0]), &a).unwrap();
        assert!(
            !m.add(&f(&[0.0, 2.5, 5.0])),
            "nothing nearer, nothing taken"
        );
        assert!(
            !m.add(&f(&[1.0, 1.5, 4.0])),
            "as near is no nearer: the earlier stays"
        );
        assert_eq!(m.merged().get(1), Scalar::F(2.5));
        assert!(m.add(&f(&[9.0, 2.0, 3.5])));
        assert_eq!(m.merged().data, f(&[1.0, 2.0, 3.5]).data);
        assert!(
            !m.add(&f(&[1.0, 2.0, 9.0])),
            "an element already XLA's is never taken again"
        );
        assert!(!m.add(&f(&[1.0, 2.0])), "another shape takes nothing");
        assert!(m.add(&f(&[7.0, 7.0, 3.0])));
        assert_eq!(m.into_merged().data, a.data);
    }

    #[test]
    fn merge_takes_each_element_from_the_closest_candidate() {
        let neg_nan = f64::from_bits(0xfff8_0000_0000_0000);
        let a = arr(
            PrimitiveType::F64,
            &[Scalar::F(neg_nan), Scalar::F(1.0), Scalar::F(5.0)],
        );
        let c0 = arr(
            PrimitiveType::F64,
            &[Scalar::F(f64::NAN), Scalar::F(1.5), Scalar::F(5.0)],
        );
        let c1 = arr(
            PrimitiveType::F64,
            &[Scalar::F(neg_nan), Scalar::F(1.25), Scalar::F(7.0)],
        );
        let m = merge_closest(&[&c0, &c1], &a).unwrap();
        assert_eq!(m.bits(0), a.bits(0), "the NaN of the same sign");
        assert_eq!(m.get(1), Scalar::F(1.25), "the nearer value");
        assert_eq!(m.get(2), Scalar::F(5.0));
        let ints = arr(PrimitiveType::S32, &[Scalar::S(3), Scalar::S(9)]);
        let i0 = arr(PrimitiveType::S32, &[Scalar::S(3), Scalar::S(1)]);
        let i1 = arr(PrimitiveType::S32, &[Scalar::S(4), Scalar::S(9)]);
        let m = merge_closest(&[&i0, &i1], &ints).unwrap();
        assert_eq!((m.get(0), m.get(1)), (Scalar::S(3), Scalar::S(9)));
        // A complex result with an infinite part is closest to a candidate with a non-finite
        // part (a c64 dot whose single-precision products overflowed), not to a finite one.
        let inf = f64::INFINITY;
        let xc = arr(PrimitiveType::C64, &[Scalar::C(-inf, -inf)]);
        let finite = arr(PrimitiveType::C64, &[Scalar::C(-316.0, 111.9)]);
        let overflowed = arr(PrimitiveType::C64, &[Scalar::C(f64::NAN, f64::NAN)]);
        let m = merge_closest(&[&finite, &overflowed], &xc).unwrap();
        assert!(
            m.get(0) != Scalar::C(-316.0, 111.9),
            "the overflowed candidate"
        );
        let other = arr(PrimitiveType::S32, &[Scalar::S(3)]);
        assert!(merge_closest(&[&other], &ints).is_none(), "shapes differ");
    }

    /// Values between the candidates are kept as they are (each complex part bounded on its
    /// own, NaN candidates ignored); others come from the closest candidate.
    #[test]
    fn hull_merge_keeps_values_between_the_candidates() {
        let a = arr(
            PrimitiveType::F32,
            &[Scalar::F(-36.96), Scalar::F(2.0), Scalar::F(0.5)],
        );
        let c0 = arr(
            PrimitiveType::F32,
            &[Scalar::F(-36.74), Scalar::F(1.0), Scalar::F(f64::NAN)],
        );
        let c1 = arr(
            PrimitiveType::F32,
            &[Scalar::F(f64::NEG_INFINITY), Scalar::F(1.5), Scalar::F(0.0)],
        );
        let m = merge_within_hull(&[&c0, &c1], &a).unwrap();
        assert_eq!(m.get(0), a.get(0), "between -inf and -36.74");
        assert_eq!(m.get(1), c1.get(1), "above both: the closest");
        assert_eq!(m.get(2), c1.get(2), "a NaN candidate bounds nothing");
        let z = arr(PrimitiveType::C64, &[Scalar::C(3.5e-8, -1.5)]);
        let z0 = arr(PrimitiveType::C64, &[Scalar::C(4.5e-9, 1.5)]);
        let z1 = arr(PrimitiveType::C64, &[Scalar::C(6.5e-8, -1.5)]);
        let m = merge_within_hull(&[&z0, &z1], &z).unwrap();
        assert_eq!(m.get(0), z.get(0));
    }
}

//! Approximated functions on sets: the exact function's range over the operand's set, widened by
//! the ulps XLA CPU's approximation is measured to be off ([`super::ulps`]), clamped to what the
//! function returns exactly (a saturated `tanh` is exactly 1, `exp` is never negative: see
//! [`crate::variant::exact_result`]).

use super::arith::{operand, result, Ex, F64Ext, Out, Subnormals};
use super::format::Format;
use super::set::{le, tmax, tmin, FSet, Why};
use hlo::{Opcode, PrimitiveType};
use std::f64::consts::{FRAC_PI_2, PI};

/// How a unary function behaves: the f64 function (monotone on its domain), its domain, the
/// range it stays in.
struct Shape {
    f: fn(f64) -> f64,
    /// Inputs outside `[lo, hi]` give NaN.
    domain: (f64, f64),
    /// The function's image (its results are clamped to it).
    image: (f64, f64),
}

fn shape(op: Opcode) -> Option<Shape> {
    use Opcode as O;
    let inf = f64::INFINITY;
    let all = (-inf, inf);
    let s = |f, domain, _rising: bool, image| Shape { f, domain, image };
    Some(match op {
        O::Exp => s(f64::exp, all, true, (0.0, inf)),
        O::Expm1 => s(f64::exp_m1, all, true, (-1.0, inf)),
        O::Log => s(f64::ln, (-0.0, inf), true, all),
        O::Log1p => s(f64::ln_1p, (-1.0, inf), true, all),
        O::Logistic => s(crate::elementwise::logistic, all, true, (0.0, 1.0)),
        O::Tanh => s(f64::tanh, all, true, (-1.0, 1.0)),
        O::Erf => s(libm::erf, all, true, (-1.0, 1.0)),
        O::Cbrt => s(f64::cbrt, all, true, all),
        O::Atan => s(f64::atan, all, true, (-FRAC_PI_2, FRAC_PI_2)),
        O::Asinh => s(f64::asinh, all, true, all),
        O::Sinh => s(f64::sinh, all, true, all),
        O::Asin => s(f64::asin, (-1.0, 1.0), true, (-FRAC_PI_2, FRAC_PI_2)),
        O::Atanh => s(f64::atanh, (-1.0, 1.0), true, all),
        O::Acos => s(f64::acos, (-1.0, 1.0), false, (0.0, PI)),
        O::Acosh => s(f64::acosh, (1.0, inf), true, (0.0, inf)),
        O::Rsqrt => s(|x| 1.0 / x.sqrt(), (-0.0, inf), false, (0.0, inf)),
        _ => return None,
    })
}

/// `x` widened outward by `n` values of the type on the side `up` (never into infinity), then
/// clamped to `[lo, hi]`.
fn widen(fmt: &Format, x: f64, n: u32, up: bool, (lo, hi): (f64, f64)) -> f64 {
    let r = if up {
        fmt.up(x.next_up_f64())
    } else {
        fmt.down(x.next_down_f64())
    };
    let v = if r.v.is_finite() {
        fmt.step(r.v, if up { n as i32 } else { -(n as i32) })
    } else {
        r.v
    };
    // Clamped to the image (a bound the type cannot hold, such as a negative one of an
    // unsigned type, clamps nothing).
    let bound = if up { fmt.up(hi).v } else { fmt.down(lo).v };
    match (bound.is_nan(), up) {
        (true, _) => v,
        (false, true) => tmin(v, bound),
        (false, false) => tmax(v, bound),
    }
}

/// `f` at one input `x` (the function's own value at an infinity or where XLA returns it
/// exactly), widened by `ulps` and clamped to the image, as a set of the type. An overflow of a
/// type without infinities (f8, f4) may also be the value of the f16 XLA computed the function
/// in and never narrowed (excess precision, as for arithmetic: see `arith::Out::range`).
fn at(fmt: &Format, op: Opcode, sh: &Shape, x: f64, ulps: u32) -> FSet {
    let s = at_in(fmt, op, sh, x, ulps);
    let r = (sh.f)(x);
    if fmt.has_inf || !(r.is_infinite() || r.abs() > fmt.max) {
        return s;
    }
    let wide = super::format::format(PrimitiveType::F16).expect("f16");
    s.hull(at_in(wide, op, sh, x, ulps).because(Why::ROUNDING))
}

/// [`at`] in the type itself.
fn at_in(fmt: &Format, op: Opcode, sh: &Shape, x: f64, ulps: u32) -> FSet {
    let r = (sh.f)(x);
    if r.is_nan() {
        return FSet::NAN;
    }
    if r.is_infinite() && !fmt.has_inf {
        // A pole in a type without infinities: NaN there, the largest values next to it.
        return FSet::point(fmt.max.copysign(r)).with_nan(true);
    }
    if x.is_infinite() || (r.is_infinite() && fmt.holds(r)) {
        return FSet::point(r);
    }
    if fmt.holds(r) && crate::variant::exact_result(op, fmt.ty, &[x], r) {
        return FSet::point(r);
    }
    // Beyond the largest finite value by more than the allowed ulps: every approximation
    // within them overflows (exp(100) in f32 is inf, not a large finite value).
    let last_ulp = fmt.max - fmt.step(fmt.max, -1);
    if fmt.has_inf && r.is_finite() && r.abs() > fmt.max + (ulps as f64 + 1.0) * last_ulp {
        return FSet::point(f64::INFINITY.copysign(r)).because(Why::ULPS);
    }
    let lo = widen(fmt, r, ulps, false, sh.image);
    let hi = widen(fmt, r, ulps, true, sh.image);
    let mut s = FSet::range(tmin(lo, hi), tmax(lo, hi)).because(Why::ULPS);
    // An approximation may overflow a little early or late.
    let over = if fmt.has_inf {
        |s: FSet, x: f64| s.hull(FSet::point(x))
    } else {
        |s: FSet, _: f64| s.with_nan(true)
    };
    if s.num && s.hi >= fmt.max && sh.image.1 == f64::INFINITY {
        s = over(s, f64::INFINITY);
    }
    if s.num && s.lo <= -fmt.max && sh.image.0 == f64::NEG_INFINITY {
        s = over(s, f64::NEG_INFINITY);
    }
    s
}

/// A unary approximated function of a float set (`None`: the op is not one).
pub(crate) fn unary(fmt: &Format, op: Opcode, a: FSet, sub: Subnormals, ulps: u32) -> Option<FSet> {
    let a = operand(fmt, a, sub);
    let out = match op {
        Opcode::Sin | Opcode::Cos => periodic(fmt, op, a, ulps),
        Opcode::Tan => tan(fmt, a, ulps),
        Opcode::Cosh => {
            // Even: cosh of |x|, rising.
            let m = super::arith::abs(a);
            monotone(fmt, op, &cosh_shape(), m, ulps)
        }
        _ => monotone(fmt, op, &shape(op)?, a, ulps),
    };
    Some(result(fmt, out.because(a.why), sub))
}

fn cosh_shape() -> Shape {
    Shape {
        f: f64::cosh,
        domain: (-0.0, f64::INFINITY),
        image: (1.0, f64::INFINITY),
    }
}

fn monotone(fmt: &Format, op: Opcode, sh: &Shape, a: FSet, ulps: u32) -> FSet {
    let mut out = FSet::EMPTY.with_nan(a.nan);
    let (dl, dh) = sh.domain;
    for (plo, phi) in a.pieces() {
        // Outside the domain is NaN (a domain starting at -0 excludes negatives only).
        let below = plo < dl || (dl == 0.0 && plo < 0.0);
        if below || phi > dh {
            out = out.with_nan(true);
        }
        let mut lo = tmax(plo, dl);
        let hi = tmin(phi, dh);
        if !le(lo, hi) {
            continue;
        }
        // -0 and +0 are neighbours in the order, not for every function: rsqrt(-0) is -inf and
        // rsqrt(+0) +inf, so -0 is a point of its own and the piece goes on from +0.
        if lo == 0.0 && lo.is_sign_negative() && hi.to_bits() != lo.to_bits() {
            out = out.hull(at(fmt, op, sh, lo, ulps));
            lo = 0.0;
        }
        let (fx, fy) = (at(fmt, op, sh, lo, ulps), at(fmt, op, sh, hi, ulps));
        out = out.hull(fx).hull(fy);
        // Between the ends the function takes every value from one end's to the other's (a
        // lone zero or infinity at an end does not stand for the values next to it).
        if lo.to_bits() != hi.to_bits() {
            if let (Some(a), Some(b)) = (fx.extent(), fy.extent()) {
                out =
                    out.hull(FSet::range(tmin(a.0, b.0), tmax(a.1, b.1)).because(fx.why | fy.why));
            }
        }
    }
    out
}

/// sin or cos: the values at the ends of each piece, and +-1 where an extremum lies between
/// them; any value in [-1, 1] over a period or more. An infinity is NaN.
fn periodic(fmt: &Format, op: Opcode, a: FSet, ulps: u32) -> FSet {
    let mut out = FSet::EMPTY.with_nan(a.nan || a.pinf || a.ninf);
    let f: fn(f64) -> f64 = if op == Opcode::Sin {
        f64::sin
    } else {
        f64::cos
    };
    // Beyond this XLA's argument reduction is not measured to be accurate.
    let limit = hlo::semantics::periodic_limit(fmt.ty);
    let sh = Shape {
        f,
        domain: (f64::NEG_INFINITY, f64::INFINITY),
        image: (-1.0, 1.0),
    };
    for (lo, hi) in a.reals() {
        if hi - lo >= 2.0 * PI || lo.abs() > limit || hi.abs() > limit {
            out = out.hull(FSet::range(-1.0, 1.0).because(Why::ULPS));
            continue;
        }
        let (fx, fy) = (at(fmt, op, &sh, lo, ulps), at(fmt, op, &sh, hi, ulps));
        out = out.hull(fx).hull(fy);
        if lo.to_bits() != hi.to_bits() {
            if let (Some(a), Some(b)) = (fx.extent(), fy.extent()) {
                out =
                    out.hull(FSet::range(tmin(a.0, b.0), tmax(a.1, b.1)).because(fx.why | fy.why));
            }
        }
        // Maxima of sin at pi/2 + 2k pi, minima at -pi/2 + 2k pi; cos: 2k pi and pi + 2k pi.
        let (max_at, min_at) = if op == Opcode::Sin {
            (FRAC_PI_2, -FRAC_PI_2)
        } else {
            (0.0, PI)
        };
        let crosses = |c: f64| {
            // Is some c + 2k pi within [lo, hi] (with slack for the rounding of k pi)?
            let k = ((lo - c) / (2.0 * PI)).ceil();
            let x = c + k * 2.0 * PI;
            x <= hi + 1e-9 * (1.0 + hi.abs())
        };
        if crosses(max_at) {
            out = out.hull(FSet::point(1.0));
        }
        if crosses(min_at) {
            out = out.hull(FSet::point(-1.0));
        }
    }
    out
}

/// tan: rising between poles; any value where a pole (pi/2 + k pi) may lie in a piece.
fn tan(fmt: &Format, a: FSet, ulps: u32) -> FSet {
    let mut out = FSet::EMPTY.with_nan(a.nan || a.pinf || a.ninf);
    let limit = hlo::semantics::periodic_limit(fmt.ty);
    let sh = Shape {
        f: f64::tan,
        domain: (f64::NEG_INFINITY, f64::INFINITY),
        image: (f64::NEG_INFINITY, f64::INFINITY),
    };
    for (lo, hi) in a.reals() {
        let k = ((lo - FRAC_PI_2) / PI).ceil();
        let pole = FRAC_PI_2 + k * PI;
        if hi - lo >= PI
            || lo.abs() > limit
            || hi.abs() > limit
            || pole <= hi + 1e-9 * (1.0 + hi.abs())
        {
            out = out.hull(FSet::range(f64::NEG_INFINITY, f64::INFINITY).because(Why::ULPS));
            continue;
        }
        out = out.hull(monotone(fmt, Opcode::Tan, &sh, FSet::range(lo, hi), ulps));
    }
    out
}

/// `atan2(y, x)`: at points the function's value widened by ulps; over sets the values at the
/// box's corners, or any angle where the box may hold the origin or reach across the negative
/// x axis (the branch cut).
pub(crate) fn atan2(fmt: &Format, y: FSet, x: FSet, sub: Subnormals, ulps: u32) -> FSet {
    let (y, x) = (operand(fmt, y, sub), operand(fmt, x, sub));
    let why = y.why | x.why;
    let mut out = FSet::EMPTY.with_nan(y.nan || x.nan);
    let sh = Shape {
        f: |v| v,
        domain: (f64::NEG_INFINITY, f64::INFINITY),
        image: (-PI, PI),
    };
    let one = |yy: f64, xx: f64| -> FSet {
        let r = yy.atan2(xx);
        if fmt.holds(r) && crate::variant::exact_result(Opcode::Atan2, fmt.ty, &[yy, xx], r) {
            return FSet::point(r);
        }
        let mut s = at(fmt, Opcode::Atan2, &sh, r, ulps);
        // `at` applied the identity: the result itself, widened.
        s.why |= Why::ULPS;
        s
    };
    for (yl, yh) in y.pieces() {
        for (xl, xh) in x.pieces() {
            let ypt = yl.to_bits() == yh.to_bits();
            let xpt = xl.to_bits() == xh.to_bits();
            let crosses_cut = le(yl, 0.0) && le(-0.0, yh) && xl < 0.0 && !ypt;
            let holds_origin = le(yl, 0.0) && le(-0.0, yh) && le(xl, 0.0) && le(-0.0, xh);
            if crosses_cut || (holds_origin && !(ypt && xpt)) {
                let pi = fmt.up(PI).v;
                out = out.hull(FSet::range(-pi, pi).because(Why::BRANCH | Why::ULPS));
                continue;
            }
            let mut corners = FSet::EMPTY;
            for yy in [yl, yh] {
                for xx in [xl, xh] {
                    corners = corners.hull(one(yy, xx));
                }
            }
            out = out.hull(if ypt && xpt { corners } else { filled(corners) });
        }
    }
    result(fmt, out.because(why), sub)
}

/// `pow(x, y)`: at points C's `pow` (its special cases: `pow(x, 0) = 1`, `pow(1, y) = 1`,
/// negative bases to integer powers only) widened by ulps; over sets the values at the box's
/// corners and where it crosses x = 1 or y = 0, both signs for negative bases.
pub(crate) fn power(fmt: &Format, x: FSet, y: FSet, sub: Subnormals, ulps: u32) -> FSet {
    let (x, y) = (operand(fmt, x, sub), operand(fmt, y, sub));
    let why = x.why | y.why;
    let sh = Shape {
        f: |v| v,
        domain: (f64::NEG_INFINITY, f64::INFINITY),
        image: (f64::NEG_INFINITY, f64::INFINITY),
    };
    let one = |xx: f64, yy: f64| -> FSet {
        let r = xx.powf(yy);
        if r.is_nan() {
            return FSet::NAN;
        }
        if fmt.holds(r) && crate::variant::exact_result(Opcode::Power, fmt.ty, &[xx, yy], r) {
            return FSet::point(r);
        }
        if r.is_infinite() || r == 0.0 && (xx == 0.0 || xx.is_infinite() || yy.is_infinite()) {
            // Exact special values of C's pow.
            return FSet::point(r);
        }
        at(fmt, Opcode::Power, &sh, r, ulps)
    };
    let mut out = FSet::EMPTY;
    if x.is_point() && y.is_point() {
        return result(fmt, one(x.lo, y.lo).because(why), sub);
    }
    // Per box of a piece of x and a piece of y: its corners, 1 and 0 where a piece crosses
    // them, every value between (pow is continuous on a box off its special points); NaN as
    // a value of its own (C's pow gives pow(NaN, 0) = pow(1, NaN) = 1).
    let cands = |lo: f64, hi: f64, special: f64| -> Vec<f64> {
        let mut v = vec![lo, hi];
        if lo < special && special < hi {
            v.push(special);
        }
        if le(lo, 0.0) && le(-0.0, hi) {
            v.push(0.0);
            v.push(-0.0);
        }
        v
    };
    let negative_base = x.meets(f64::NEG_INFINITY, -5e-324);
    let integer_y = y.is_point() && y.lo.fract() == 0.0;
    if negative_base && !integer_y {
        out.nan = true;
    }
    // A base of -0 keeps its sign under an odd integer power as a negative base does
    // (pow(-0, -3) = -inf, pow(-0, 3) = -0), and an exponent between the box's corners may be
    // one; a non-integer power of it is not NaN (pow(-0, -2.5) = +inf).
    let signed_base = negative_base || x.nzero;
    let mut xp = x.pieces();
    let mut yp = y.pieces();
    if x.nan {
        xp.push((f64::NAN, f64::NAN));
    }
    if y.nan {
        yp.push((f64::NAN, f64::NAN));
    }
    for &(xl, xh) in &xp {
        for &(yl, yh) in &yp {
            let point = xl.to_bits() == xh.to_bits() && yl.to_bits() == yh.to_bits();
            let fill = |s: FSet| if point { s } else { filled(s) };
            let (mut bx, mut magnitude) = (FSet::EMPTY, FSet::EMPTY);
            for &xx in &cands(xl, xh, 1.0) {
                for &yy in &cands(yl, yh, 0.0) {
                    bx = bx.hull(one(xx, yy));
                    if signed_base {
                        magnitude = magnitude.hull(one(xx.abs(), yy));
                    }
                }
            }
            if signed_base {
                // A negative base may take either sign (odd and even integer exponents): the
                // values between the magnitudes at the corners, with either sign (and not the
                // values between a negative result and a positive one).
                let m = fill(magnitude);
                let signed = m.hull(super::arith::negate(m));
                out = out.hull(signed.with_nan(bx.nan));
                continue;
            }
            out = out.hull(fill(bx));
        }
    }
    result(fmt, out.because(why | Why::BRANCH), sub)
}

/// `s` with every value between its least and greatest (a continuous function over a box takes
/// them all; lone zeros and infinities at the corners do not stand for their neighbours).
fn filled(s: FSet) -> FSet {
    match s.extent() {
        Some((lo, hi)) if lo.to_bits() != hi.to_bits() => {
            s.hull(FSet::range(lo, hi).because(s.why))
        }
        _ => s,
    }
}

/// The element type's format for a complex type's parts.
pub(crate) fn part_type(ty: PrimitiveType) -> PrimitiveType {
    ty.complex_component().unwrap_or(ty)
}

/// A point's value `r` (the f64 function at it) widened by `ulps` values of the type, as an
/// exact range when the function is exact there.
pub(crate) fn around(fmt: &Format, r: f64, ulps: u32) -> FSet {
    if r.is_nan() {
        return FSet::NAN;
    }
    let mut o = Out::new(fmt);
    o.range(Ex::inexact(r), Ex::inexact(r));
    let s = o.set;
    if ulps == 0 || !s.num {
        return s;
    }
    FSet::range(fmt.step(s.lo, -(ulps as i32)), fmt.step(s.hi, ulps as i32))
        .because(Why::ULPS | s.why)
}

#[cfg(test)]
mod tests {
    use super::super::format::format;
    use super::*;
    use hlo::PrimitiveType as T;

    const NONE: Subnormals = Subnormals {
        daz: false,
        ftz: false,
    };

    #[test]
    fn monotone_functions_enclose_their_range() {
        let f = format(T::F32).unwrap();
        let s = unary(f, Opcode::Exp, FSet::range(0.5, 1.0), NONE, 2).unwrap();
        assert!(s.contains((0.5f32).exp() as f64) && s.contains(std::f32::consts::E as f64));
        assert!(!s.contains(3.0) && !s.nan);
        // exp(0) is exactly 1 on XLA CPU.
        let s = unary(f, Opcode::Exp, FSet::point(0.0), NONE, 2).unwrap();
        assert!(s.is_point() && s.lo == 1.0);
        // tanh saturates at exactly 1.
        let s = unary(f, Opcode::Tanh, FSet::point(40.0), NONE, 2).unwrap();
        assert!(s.is_point() && s.lo == 1.0, "{s:?}");
        let s = unary(f, Opcode::Log, FSet::range(-1.0, 1.0), NONE, 2).unwrap();
        assert!(s.nan && s.contains(f64::NEG_INFINITY) && s.contains(0.0));
        let s = unary(f, Opcode::Log, FSet::point(-0.0), NONE, 2).unwrap();
        assert!(!s.nan && s.contains(f64::NEG_INFINITY));
        let s = unary(f, Opcode::Rsqrt, FSet::range(4.0, 16.0), NONE, 1).unwrap();
        assert!(s.contains(0.25) && s.contains(0.5) && !s.contains(0.6));
    }

    #[test]
    fn periodic_functions_find_their_extrema() {
        let f = format(T::F32).unwrap();
        let s = unary(f, Opcode::Sin, FSet::range(1.0, 2.0), NONE, 1).unwrap();
        assert!(s.contains(1.0) && s.contains((1.0f64).sin() as f32 as f64));
        assert!(!s.contains(0.5));
        let s = unary(f, Opcode::Cos, FSet::range(-0.1, 0.1), NONE, 1).unwrap();
        assert!(s.contains(1.0));
        let s = unary(f, Opcode::Tan, FSet::range(1.0, 2.0), NONE, 1).unwrap();
        assert!(s.contains(f64::INFINITY) && s.contains(-1e10));
        let s = unary(f, Opcode::Sin, FSet::point(f64::INFINITY), NONE, 1).unwrap();
        assert!(s.only_nan());
    }

    #[test]
    fn power_and_atan2() {
        let f = format(T::F32).unwrap();
        let p = |x| FSet::point(x);
        let s = power(f, p(2.0), p(10.0), NONE, 2);
        assert!(s.contains(1024.0));
        let s = power(f, p(f64::NAN), p(0.0), NONE, 2);
        assert!(s.is_point() && s.lo == 1.0);
        let s = power(f, p(-2.0), p(0.5), NONE, 2);
        assert!(s.only_nan());
        let s = power(f, FSet::range(-2.0, -1.0), p(3.0), NONE, 2);
        assert!(s.contains(-8.0) && s.contains(-1.0));
        let s = atan2(f, p(1.0), p(1.0), NONE, 2);
        assert!(s.contains(std::f32::consts::FRAC_PI_4 as f64) && !s.contains(1.0));
        let s = atan2(f, FSet::range(-1.0, 1.0), p(-1.0), NONE, 2);
        assert!(s.contains(PI as f32 as f64) && s.contains(-(PI as f32) as f64));
    }
}

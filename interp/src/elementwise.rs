//! Elementwise ops: unary and binary arithmetic, compare, select, clamp.
//!
//! Floats are computed in f64 and rounded once to the element type (exact for + - * / sqrt and
//! fmod, within an ulp of correctly rounded for transcendentals). Integers are computed on values
//! widened to i64 and wrapped back to the element's bit width.

use crate::value::{wrap_int, Array, Buffer, ComplexElem, FloatElem, IntElem};
use crate::{invalid, unsupported, Result};
use hlo::{Opcode, PrimitiveType, TypeClass};
use num_complex::{Complex, Complex32, Complex64};
use rayon::prelude::*;

/// Arrays at least this long are processed in parallel.
pub const PAR_THRESHOLD: usize = 1 << 16;

fn map1<T: Copy + Send + Sync, U: Send>(a: &[T], f: impl Fn(T) -> U + Sync + Send) -> Vec<U> {
    if a.len() >= PAR_THRESHOLD {
        a.par_iter().map(|&x| f(x)).collect()
    } else {
        a.iter().map(|&x| f(x)).collect()
    }
}

fn map2<T: Copy + Send + Sync, U: Send>(
    a: &[T],
    b: &[T],
    f: impl Fn(T, T) -> U + Sync + Send,
) -> Vec<U> {
    if a.len() >= PAR_THRESHOLD {
        a.par_iter()
            .zip(b.par_iter())
            .map(|(&x, &y)| f(x, y))
            .collect()
    } else {
        a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect()
    }
}

fn float_un<T: FloatElem>(a: &[T], f: impl Fn(f64) -> f64 + Sync + Send) -> Vec<T> {
    map1(a, |x| T::from_f64(f(x.to_f64())))
}
fn float_bin<T: FloatElem>(a: &[T], b: &[T], f: impl Fn(f64, f64) -> f64 + Sync + Send) -> Vec<T> {
    map2(a, b, |x, y| T::from_f64(f(x.to_f64(), y.to_f64())))
}
/// Elementwise `f` where `f` returns one of its arguments: that operand's element itself.
fn float_pick<T: FloatElem>(a: &[T], b: &[T], f: impl Fn(f64, f64) -> f64 + Sync + Send) -> Vec<T> {
    map2(a, b, |x, y| {
        let (p, q) = (x.to_f64(), y.to_f64());
        if f(p, q).to_bits() == p.to_bits() {
            x
        } else {
            y
        }
    })
}
fn int_un<T: IntElem>(a: &[T], f: impl Fn(i64) -> i64 + Sync + Send) -> Vec<T> {
    map1(a, |x| T::from_i64(f(x.to_i64())))
}
fn int_bin<T: IntElem>(a: &[T], b: &[T], f: impl Fn(i64, i64) -> i64 + Sync + Send) -> Vec<T> {
    map2(a, b, |x, y| T::from_i64(f(x.to_i64(), y.to_i64())))
}
fn cplx_un<T: ComplexElem>(a: &[T], f: impl Fn(Complex64) -> Complex64 + Sync + Send) -> Vec<T> {
    map1(a, |x| T::from_c(f(x.to_c())))
}
fn cplx_bin<T: ComplexElem>(
    a: &[T],
    b: &[T],
    f: impl Fn(Complex64, Complex64) -> Complex64 + Sync + Send,
) -> Vec<T> {
    map2(a, b, |x, y| T::from_c(f(x.to_c(), y.to_c())))
}

/// Rounds half away from zero (C `round`).
fn round_afz(x: f64) -> f64 {
    x.round()
}

fn float_sign(x: f64) -> f64 {
    if x.is_nan() || x == 0.0 {
        x
    } else if x > 0.0 {
        1.0
    } else {
        -1.0
    }
}

pub(crate) fn logistic(x: f64) -> f64 {
    // 1 / (1 + e^-x), written so that neither branch overflows.
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

pub(crate) fn unary_float_fn(op: Opcode) -> Option<fn(f64) -> f64> {
    use Opcode as O;
    Some(match op {
        O::Abs => f64::abs,
        O::Negate => |x: f64| -x,
        O::Exp => f64::exp,
        O::Expm1 => f64::exp_m1,
        O::Log => f64::ln,
        O::Log1p => f64::ln_1p,
        O::Logistic => logistic,
        O::Sqrt => f64::sqrt,
        O::Rsqrt => |x: f64| 1.0 / x.sqrt(),
        O::Cbrt => f64::cbrt,
        O::Sin => f64::sin,
        O::Cos => f64::cos,
        O::Tan => f64::tan,
        O::Tanh => f64::tanh,
        O::Sinh => f64::sinh,
        O::Cosh => f64::cosh,
        O::Asin => f64::asin,
        O::Acos => f64::acos,
        O::Atan => f64::atan,
        O::Asinh => f64::asinh,
        O::Acosh => f64::acosh,
        O::Atanh => f64::atanh,
        O::Erf => libm::erf,
        O::Floor => f64::floor,
        O::Ceil => f64::ceil,
        O::RoundNearestAfz => round_afz,
        O::RoundNearestEven => f64::round_ties_even,
        O::Sign => float_sign,
        O::Real => |x: f64| x,
        O::Imag => |_x: f64| 0.0,
        _ => return None,
    })
}

/// Complex functions with XLA CPU's formulas and special cases (its elemental IR emitter),
/// computed in the component type (f32 for c64, f64 for c128) so that overflow happens where
/// XLA's does: where a textbook formula overflows to inf/inf = NaN, XLA's gives the limit, and
/// where XLA's own formula yields NaN (e.g. `tanh(x + inf i)`), so does this one.
macro_rules! xla_complex_fns {
    ($m:ident, $f:ty) => {
        // XLA's formulas are implementation choices the explanation search tries (the c64
        // instance) and the c128 forms of multiply, atan2 and power; the reference is
        // `crate::annex_g`, so not every formula is used in both instances.
        #[allow(dead_code)]
        pub(crate) mod $m {
            type F = $f;
            type C = num_complex::Complex<F>;

            fn c(re: F, im: F) -> C {
                C::new(re, im)
            }

            /// (min, max, 1 + (min/max)^2) of |re|, |im|, NaN-propagating like XLA's max/min;
            /// `1 + d^2` is one fused multiply-add, as XLA CPU computes it (measured bit for bit
            /// on 20,000 c64 and c128 values of jaxlib 0.10.2; unfused, about 1.3% differ by an
            /// ulp, which reorders a sort keyed on them).
            fn abs_parts(z: C) -> (F, F, F) {
                let (x, y) = (z.re.abs(), z.im.abs());
                let (mx, mn) = if x.is_nan() || y.is_nan() {
                    (F::NAN, F::NAN)
                } else {
                    (x.max(y), x.min(y))
                };
                let d = mn / mx;
                (mn, mx, d.mul_add(d, 1.0))
            }

            /// |z| = max * sqrt(1 + (min/max)^2); where that is NaN ((0,0), (inf,inf), NaN parts), min.
            pub fn abs(z: C) -> F {
                let (mn, mx, s) = abs_parts(z);
                let r = mx * s.sqrt();
                if r.is_nan() {
                    mn
                } else {
                    r
                }
            }

            /// The product as XLA CPU's code computes it: each part contracted into one fused
            /// multiply-add, `fma(a.re, b.re, -(a.im * b.im))` and `fma(a.im, b.re, a.re * b.im)`
            /// (measured on XLA CPU with partial products that overflow alone), so a part can be
            /// inf or NaN where the exact product is finite, and finite where one partial product
            /// alone overflows.
            pub fn mul(a: C, b: C) -> C {
                c(
                    a.re.mul_add(b.re, -(a.im * b.im)),
                    a.im.mul_add(b.re, a.re * b.im),
                )
            }

            /// [`mul`] with the imaginary part fusing the other partial product,
            /// `fma(a.re, b.im, a.im * b.re)` (XLA CPU's scatter with a `multiply(a, b)`
            /// combiner).
            pub fn mul_fused_other_im(a: C, b: C) -> C {
                c(
                    a.re.mul_add(b.re, -(a.im * b.im)),
                    a.re.mul_add(b.im, a.im * b.re),
                )
            }

            /// [`mul`] with an unfused imaginary part, `a.im * b.re + a.re * b.im` (its two
            /// products are one when squaring, and a product used twice is not fused).
            pub fn mul_unfused_im(a: C, b: C) -> C {
                c(
                    a.re.mul_add(b.re, -(a.im * b.im)),
                    a.im * b.re + a.re * b.im,
                )
            }

            /// The product with every partial product rounded and nothing fused (every product
            /// is used twice when both parts of an operand are one value, as `complex(p, p)`;
            /// the StableHLO reference interpreter always).
            pub fn mul_unfused(a: C, b: C) -> C {
                c(a.re * b.re - a.im * b.im, a.im * b.re + a.re * b.im)
            }

            /// The product in the contraction `form` (see [`crate::variant::ComplexMul`]; the
            /// Annex G reference is computed in double precision elsewhere, so here it is the
            /// fused form).
            pub fn mul_in(form: crate::variant::ComplexMul) -> fn(C, C) -> C {
                use crate::variant::ComplexMul as M;
                match form {
                    M::AnnexG | M::Fused => mul,
                    M::FusedOtherIm => mul_fused_other_im,
                    M::UnfusedIm => mul_unfused_im,
                    M::Unfused => mul_unfused,
                }
            }

            /// Smith's division with XLA's fix-ups when the quotient is (NaN, NaN): zero denominator,
            /// infinite numerator over a finite denominator, finite numerator over an infinite one.
            pub fn div(a: C, b: C) -> C {
                let (ar, ai, br, bi) = (a.re, a.im, b.re, b.im);
                let rb = br / bi;
                let db = bi + rb * br;
                let ib = bi / br;
                let dr = br + ib * bi;
                let (cr, ci) = if br.abs() < bi.abs() {
                    ((rb * ar + ai) / db, (rb * ai - ar) / db)
                } else {
                    ((ib * ai + ar) / dr, (ai - ib * ar) / dr)
                };
                if !(cr.is_nan() && ci.is_nan()) {
                    return c(cr, ci);
                }
                let inf = F::INFINITY;
                if br == 0.0 && bi == 0.0 && (!ar.is_nan() || !ai.is_nan()) {
                    let s = inf.copysign(br);
                    return c(s * ar, s * ai);
                }
                let a_fin = ar.abs() != inf && ai.abs() != inf && !ar.is_nan() && !ai.is_nan();
                let b_fin = br.abs() != inf && bi.abs() != inf && !br.is_nan() && !bi.is_nan();
                if (ar.abs() == inf || ai.abs() == inf) && b_fin {
                    let sr = (if ar.abs() == inf { (1.0 as F) } else { 0.0 }).copysign(ar);
                    let si = (if ai.abs() == inf { (1.0 as F) } else { 0.0 }).copysign(ai);
                    return c(inf * (sr * br + si * bi), inf * (si * br - sr * bi));
                }
                if (br.abs() == inf || bi.abs() == inf) && a_fin {
                    let sr = (if br.abs() == inf { (1.0 as F) } else { 0.0 }).copysign(br);
                    let si = (if bi.abs() == inf { (1.0 as F) } else { 0.0 }).copysign(bi);
                    return c(0.0 * (ar * sr + ai * si), 0.0 * (ai * sr - ar * si));
                }
                c(cr, ci)
            }

            /// log z = ln|z| + i atan2(im, re), with ln|z| = ln(max) + ln(1 + (min/max)^2) / 2 so
            /// that it does not overflow for parts near the largest float (as XLA's result).
            pub fn log(z: C) -> C {
                let (_, mx, s) = abs_parts(z);
                let re = if s.is_nan() {
                    abs(z).ln()
                } else {
                    mx.ln() + 0.5 * s.ln()
                };
                c(re, z.im.atan2(z.re))
            }

            /// log(1 + z), accurate for small z: ln|1 + z| = log1p(a (a + 2) + b^2) / 2 there.
            pub fn log1p(z: C) -> C {
                let (a, b) = (z.re, z.im);
                if a.abs() < 0.5 && b.abs() < 0.5 {
                    let re = 0.5 * (a * (a + 2.0) + b * b).ln_1p();
                    return c(re, b.atan2(a + 1.0));
                }
                log(c(a + 1.0, b))
            }

            /// sqrt z with XLA's zero/inf/NaN cases; finite values by the half-angle formulas
            /// (t = sqrt((|a| + |z|) / 2); the other part |b| / 2t), which give an exact zero real part
            /// on the negative real axis as XLA does.
            pub fn sqrt(z: C) -> C {
                sqrt_with(z, false)
            }

            /// [`sqrt`]; with `signed_zero`, a zero imaginary part's sign picks the side of the
            /// branch cut (copysign), as in the square root inside XLA's complex atan2.
            fn sqrt_with(z: C, signed_zero: bool) -> C {
                let (a, b) = (z.re, z.im);
                let r = abs(z);
                if r == 0.0 {
                    return c(0.0, 0.0);
                }
                let inf = F::INFINITY;
                if a.is_nan() || b.is_nan() {
                    return c(F::NAN, F::NAN);
                }
                if b.abs() == inf {
                    return c(inf, b);
                }
                if a == inf {
                    return c(
                        inf,
                        if b.is_nan() {
                            F::NAN
                        } else {
                            (0.0 as F).copysign(b)
                        },
                    );
                }
                if a == -inf {
                    return c(if b.is_nan() { F::NAN } else { 0.0 }, inf.copysign(b));
                }
                if r.is_nan() || a.is_nan() || b.is_nan() {
                    return c(F::NAN, F::NAN);
                }
                if r == F::INFINITY {
                    // |z| overflows although both parts are finite: sqrt(z) = 2 sqrt(z / 4).
                    let h = sqrt_with(c(a * 0.25, b * 0.25), signed_zero);
                    return c(h.re * 2.0, h.im * 2.0);
                }
                let t = (0.5 * a.abs() + 0.5 * r).sqrt();
                let o = b.abs() / (2.0 * t);
                if a >= 0.0 {
                    c(t, b / (2.0 * t))
                } else {
                    // XLA's sqrt op: a zero imaginary part counts as non-negative whatever its
                    // sign; inside its atan2 the sign of zero counts.
                    if signed_zero {
                        c(o, t.copysign(b))
                    } else {
                        c(o, if b >= 0.0 { t } else { -t })
                    }
                }
            }

            /// rsqrt z = |z|^-1/2 (cos(-t/2) + i sin(-t/2)), with XLA's zero/inf/NaN cases.
            pub fn rsqrt(z: C) -> C {
                rsqrt_at(z, z.im.atan2(z.re) * -0.5)
            }

            fn rsqrt_at(z: C, t: F) -> C {
                let (a, b) = (z.re, z.im);
                let (mn, mx, s) = abs_parts(z);
                let r0 = (1.0 / mx.sqrt()) * (1.0 / s.sqrt().sqrt());
                let r = if r0.is_nan() { 1.0 / mn.sqrt() } else { r0 };
                let (sin, cos) = t.sin_cos();
                let inf = F::INFINITY;
                if a == 0.0 && b == 0.0 {
                    return c(inf, F::NAN);
                }
                if (b.abs() == inf && a.is_nan()) || a.abs() == inf {
                    return c((0.0 as F).copysign(a), -((0.0 as F).copysign(b)));
                }
                c(r * cos, r * sin)
            }

            /// tanh with the limit +-1 once the hyperbolic functions overflow and XLA's NaN /
            /// signed-zero cases.
            pub fn tanh(z: C) -> C {
                let (a, b) = (z.re, z.im);
                // tanh(a + bi) = (sinh a cosh a + i sin b cos b) / (sinh^2 a + cos^2 b): no
                // cancellation for small a; the limit +-1 once sinh^2 a overflows.
                let (sh, ch) = (a.sinh(), a.cosh());
                let (sin_b, cos_b) = b.sin_cos();
                let imag_num = cos_b * sin_b;
                let sum = sh * sh;
                let re_num = sh * ch;
                let denom = sum + cos_b * cos_b;
                let mut re = if sum == F::INFINITY || re_num.abs() == F::INFINITY {
                    (1.0 as F).copysign(a)
                } else {
                    re_num / denom
                };
                let mut im = imag_num / denom;
                let a_inf = a.abs() == F::INFINITY;
                if imag_num.is_nan() && !a_inf {
                    re = F::NAN;
                }
                if b == 0.0 || (a_inf && imag_num.is_nan()) {
                    im = 0.0;
                }
                c(re, im)
            }

            /// tan z = -i tanh(i z).
            pub fn tan(z: C) -> C {
                let t = tanh(c(-z.im, z.re));
                c(t.im, -t.re)
            }

            /// e^z = e^re (cos im + i sin im); a zero imaginary part stays as it is (so
            /// e^(inf + 0i) = inf + 0i, not inf * sin 0 = NaN), as on XLA. Like XLA, the parts
            /// are (e^(re/2) cos im) e^(re/2) and (e^(re/2) sin im) e^(re/2), so a part stays
            /// finite where e^re alone overflows but the product does not.
            pub fn exp(z: C) -> C {
                if z.im == 0.0 {
                    return c(z.re.exp(), z.im);
                }
                let h = (z.re * 0.5).exp();
                let (s, co) = z.im.sin_cos();
                c((h * co) * h, (h * s) * h)
            }

            /// e^z - 1 = expm1(re) cos(im) - 2 sin^2(im / 2) + i (expm1(re) + 1) sin(im) (XLA's form);
            /// a zero imaginary part stays as it is.
            pub fn expm1(z: C) -> C {
                let (a, b) = (z.re, z.im);
                let (s, co) = b.sin_cos();
                let h = (b * 0.5).sin();
                let m = a.exp_m1();
                let re = m * co - 2.0 * h * h;
                let im = if b == 0.0 { b } else { (m + 1.0) * s };
                c(re, im)
            }

            /// logistic z = 1 / (1 + e^-z), the quotient with XLA's division.
            pub fn logistic(z: C) -> C {
                let e = exp(-z);
                div(c(1.0, 0.0), c(1.0 + e.re, e.im))
            }

            /// sign z = z / |z| (z itself when |z| is zero).
            pub fn sign(z: C) -> C {
                let n = abs(z);
                if n == 0.0 {
                    z
                } else {
                    c(z.re / n, z.im / n)
                }
            }

            /// (a + bi)^(c + di) = |z|^c e^(-d t) (cos q + i sin q), q = c t + d ln|z|,
            /// t = atan2(b, a), as XLA computes it, with |z| and ln|z| taken without forming
            /// a^2 + b^2 (which underflows or overflows where |z| does not); 0^(c + 0i) is 0 for
            /// c > 0 and 1 for c = 0, and otherwise the formula's value (NaN for an imaginary
            /// exponent); 1^w and z^0 are 1. A positive real base to a real power has no
            /// d ln|z| term (so an infinite base gives inf + 0i or 0, not 0 * inf = NaN) and a
            /// zero sine keeps the imaginary part zero, as on XLA CPU (measured).
            pub fn pow(x: C, y: C) -> C {
                let (a, b, cc, d) = (x.re, x.im, y.re, y.im);
                if a == 0.0 && b == 0.0 && d == 0.0 && cc >= 0.0 {
                    return c(if cc == 0.0 { 1.0 } else { 0.0 }, 0.0);
                }
                // 1^w = 1 for every w and z^0 = 1 for every z, NaN and infinities included (as
                // the real pow).
                if (a == 1.0 && b == 0.0) || (cc == 0.0 && d == 0.0) {
                    return c(1.0, 0.0);
                }
                if b == 0.0 && d == 0.0 && a > 0.0 {
                    let coeff = a.powf(cc);
                    let q = cc * b.atan2(a);
                    // The angle of an infinite power is inf * 0 = NaN. For an infinite base
                    // XLA CPU gives inf + 0i or 0 + 0i all the same (measured), for a finite
                    // base NaN.
                    if q.is_nan() && a.is_infinite() && cc.is_infinite() {
                        return c(coeff, 0.0);
                    }
                    let (s, co) = q.sin_cos();
                    return c(coeff * co, if s == 0.0 { s } else { coeff * s });
                }
                let lx = log(x);
                let (l, t) = (lx.re, lx.im);
                let coeff = abs(x).powf(cc) * (-d * t).exp();
                let q = cc * t + d * l;
                let (s, co) = q.sin_cos();
                c(coeff * co, coeff * s)
            }

            /// atan2(y, x) = -i log((x + i y) / sqrt(x^2 + y^2)), each step a complex operation
            /// with XLA's formulas: the products by i and -i are full complex multiplies (so
            /// 0 * inf makes a NaN part, as on XLA), and the square root takes the sign of a zero
            /// imaginary part (copysign) to pick the side of the branch cut.
            pub fn atan2(y: C, x: C) -> C {
                let s = sqrt_with(mul(x, x) + mul(y, y), true);
                let num = x + mul(c(0.0, 1.0), y);
                let l = log(div(num, s));
                mul(c(0.0, -1.0), l)
            }
        }
    };
}
xla_complex_fns!(xla_complex, f64);
xla_complex_fns!(xla_complex32, f32);

/// The c64 variant of the unary ops with XLA's formulas, computed in f32.
fn c64_fn(op: Opcode) -> Option<fn(Complex32) -> Complex32> {
    use xla_complex32 as X;
    use Opcode as O;
    Some(match op {
        O::Exp => X::exp,
        O::Expm1 => X::expm1,
        O::Log => X::log,
        O::Log1p => X::log1p,
        O::Sqrt => X::sqrt,
        O::Rsqrt => X::rsqrt,
        O::Tan => X::tan,
        O::Tanh => X::tanh,
        O::Logistic => X::logistic,
        O::Sign => X::sign,
        _ => return None,
    })
}

/// The c64 function of a complex binary op, computed in single precision as XLA CPU does (add and
/// subtract round once either way; multiply, divide, atan2 and power follow XLA's formulas in
/// f32, so partial products overflow where XLA's do).
/// `mul` is the contraction of multiply's partial products into fused multiply-adds.
pub fn c64_binop_single(
    op: Opcode,
    mul: crate::variant::ComplexMul,
) -> Option<fn(Complex32, Complex32) -> Complex32> {
    use Opcode as O;
    match op {
        O::Add => Some(|x, y| x + y),
        O::Subtract => Some(|x, y| x - y),
        O::Multiply => Some(xla_complex32::mul_in(mul)),
        O::Maximum => Some(complex_max),
        O::Minimum => Some(complex_min),
        _ => c64_binop(op),
    }
}

/// The c64 variant of the binary ops with XLA's formulas, computed in f32.
fn c64_binop(op: Opcode) -> Option<fn(Complex32, Complex32) -> Complex32> {
    use xla_complex32 as X;
    use Opcode as O;
    Some(match op {
        O::Multiply => X::mul,
        O::Divide => X::div,
        O::Atan2 => X::atan2,
        O::Power => X::pow,
        _ => return None,
    })
}

/// The complex variant of each unary op (computed on Complex64, rounded once to the element type).
/// The special values are C99 Annex G's ([`crate::annex_g`]).
pub(crate) fn unary_complex_fn(op: Opcode) -> Option<fn(Complex64) -> Complex64> {
    use crate::annex_g as G;
    use Opcode as O;
    Some(match op {
        O::Negate => |z: Complex64| -z,
        O::Exp => G::exp,
        O::Expm1 => G::expm1,
        O::Log => G::log,
        O::Log1p => G::log1p,
        O::Sqrt => G::sqrt,
        O::Rsqrt => G::rsqrt,
        O::Cbrt => Complex64::cbrt,
        O::Sin => G::sin,
        O::Cos => G::cos,
        O::Tan => G::tan,
        O::Tanh => G::tanh,
        O::Sinh => G::sinh,
        O::Cosh => G::cosh,
        O::Asin => G::asin,
        O::Acos => G::acos,
        O::Atan => G::atan,
        O::Asinh => G::asinh,
        O::Acosh => G::acosh,
        O::Atanh => G::atanh,
        O::Logistic => G::logistic,
        O::Sign => G::sign,
        _ => return None,
    })
}

/// XLA CPU's formulas of the approximated c64 functions, computed in single precision: an
/// implementation choice the explanation search tries (`Variant::narrow_complex`), never the
/// reference.
pub fn unary_c64_narrow(op: Opcode, a: &Array) -> Option<Array> {
    let g = c64_fn(op)?;
    match &a.buf {
        Buffer::C64(v) => Some(Array::new(a.ty, a.dims.clone(), Buffer::C64(map1(v, g)))),
        _ => None,
    }
}

fn same_len(a: &Array, b: &Array) -> Result<()> {
    if a.dims != b.dims {
        return Err(invalid(format!(
            "operand dimensions differ: {:?} vs {:?}",
            a.dims, b.dims
        )));
    }
    Ok(())
}

fn type_err(op: Opcode, ty: PrimitiveType) -> crate::EvalError {
    unsupported(format!("{} on {ty}", op.name()))
}

/// A unary elementwise op. `out_ty` is the instruction's element type (differs from the operand's
/// for abs/real/imag of complex, is-finite).
pub fn unary(op: Opcode, a: &Array, out_ty: PrimitiveType) -> Result<Array> {
    use Opcode as O;
    let ty = a.ty;
    let dims = a.dims.clone();
    let mk = |ty: PrimitiveType, buf: Buffer| Ok(Array::new(ty, dims.clone(), buf));
    match (op, ty.class()) {
        (O::IsFinite, TypeClass::Float) => {
            let mut out = Vec::new();
            let _ = crate::map_float_buf!(&a.buf, v => { out = map1(v, |x| x.to_f64().is_finite()); Vec::new() }, Buffer::Pred(vec![]));
            mk(PrimitiveType::Pred, Buffer::Pred(out))
        }
        (_, TypeClass::Float) => {
            let f = unary_float_fn(op).ok_or_else(|| type_err(op, ty))?;
            if matches!(op, O::Real | O::Imag) && out_ty != ty {
                return Err(invalid("real/imag of a float keeps the element type"));
            }
            let buf = crate::map_float_buf!(&a.buf, v => float_un(v, f), unreachable!());
            mk(ty, buf)
        }
        (O::Abs | O::Real | O::Imag, TypeClass::Complex) => {
            let comp = ty.complex_component().ok_or_else(|| type_err(op, ty))?;
            let f: fn(Complex64) -> f64 = match op {
                O::Abs => crate::annex_g::abs,
                O::Real => |z| z.re,
                _ => |z| z.im,
            };
            let buf = match &a.buf {
                Buffer::C64(v) => Buffer::F32(map1(v, |z: Complex32| f(z.to_c()) as f32)),
                Buffer::C128(v) => Buffer::F64(map1(v, |z: Complex64| f(z))),
                _ => return Err(type_err(op, ty)),
            };
            mk(comp, buf)
        }
        (_, TypeClass::Complex) => {
            let f = unary_complex_fn(op).ok_or_else(|| type_err(op, ty))?;
            let buf = match &a.buf {
                Buffer::C64(v) => Buffer::C64(cplx_un(v, f)),
                Buffer::C128(v) => Buffer::C128(cplx_un(v, f)),
                _ => return Err(type_err(op, ty)),
            };
            mk(ty, buf)
        }
        (_, TypeClass::Signed | TypeClass::Unsigned) => {
            let bits = ty.bit_width();
            let signed = ty.is_signed_integer();
            let w = move |v: i64| wrap_int(v, bits, signed);
            let ubits = move |v: i64| {
                if bits >= 64 {
                    v as u64
                } else {
                    (v as u64) & ((1u64 << bits) - 1)
                }
            };
            let f: Box<dyn Fn(i64) -> i64 + Sync + Send> = match op {
                O::Negate => Box::new(move |x| w(x.wrapping_neg())),
                O::Abs => Box::new(move |x| w(if signed { x.wrapping_abs() } else { x })),
                O::Sign => Box::new(move |x| x.signum()),
                O::Not => Box::new(move |x| w(!x)),
                O::PopulationCount => Box::new(move |x| ubits(x).count_ones() as i64),
                O::Clz => {
                    Box::new(move |x| (ubits(x).leading_zeros() - (64 - bits.min(64))) as i64)
                }
                O::Real => Box::new(|x| x),
                O::Imag => Box::new(|_| 0),
                _ => return Err(type_err(op, ty)),
            };
            let buf = crate::map_int_buf!(&a.buf, v => int_un(v, &f), return Err(type_err(op, ty)));
            mk(ty, buf)
        }
        (O::Not, TypeClass::Pred) => match &a.buf {
            Buffer::Pred(v) => mk(ty, Buffer::Pred(map1(v, |x| !x))),
            _ => Err(type_err(op, ty)),
        },
        (O::Real | O::Abs, TypeClass::Pred) => mk(ty, a.buf.clone()),
        _ => Err(type_err(op, ty)),
    }
}

/// max with NaN propagation: the NaN operand itself (its sign and payload), the first if both.
fn fmax_nan(x: f64, y: f64) -> f64 {
    if x.is_nan() {
        x
    } else if y.is_nan() {
        y
    } else if x > y {
        x
    } else if y > x {
        y
    } else if x == 0.0 && y == 0.0 {
        // max(-0, +0) = +0.
        if x.is_sign_positive() {
            x
        } else {
            y
        }
    } else {
        x
    }
}
fn fmin_nan(x: f64, y: f64) -> f64 {
    if x.is_nan() {
        x
    } else if y.is_nan() {
        y
    } else if x < y {
        x
    } else if y < x {
        y
    } else if x == 0.0 && y == 0.0 {
        if x.is_sign_negative() {
            x
        } else {
            y
        }
    } else {
        x
    }
}

/// Integer power as XLA's evaluator defines it: x^0 = 1, 1^y = 1, negative exponents give 0
/// except for bases 1 and -1; otherwise repeated squaring with wrap-around.
fn int_pow(base: i64, exp: i64, signed: bool, bits: u32) -> i64 {
    if exp == 0 || base == 1 {
        return 1;
    }
    if signed && exp < 0 {
        return if base == -1 {
            if exp & 1 == 1 {
                -1
            } else {
                1
            }
        } else {
            0
        };
    }
    let mut result: i64 = 1;
    let mut b = base;
    let mut e = if signed {
        exp as u64
    } else if bits >= 64 {
        exp as u64
    } else {
        (exp as u64) & ((1u64 << bits) - 1)
    };
    while e > 0 {
        if e & 1 == 1 {
            result = wrap_int(result.wrapping_mul(b), bits, signed);
        }
        b = wrap_int(b.wrapping_mul(b), bits, signed);
        e >>= 1;
    }
    result
}

pub fn int_binary_fn(
    op: Opcode,
    bits: u32,
    signed: bool,
) -> Option<Box<dyn Fn(i64, i64) -> i64 + Sync + Send>> {
    use Opcode as O;
    let w = move |v: i64| wrap_int(v, bits, signed);
    // The unsigned value of an element (bit pattern in the low `bits`).
    let u = move |v: i64| {
        if bits >= 64 {
            v as u64
        } else {
            (v as u64) & ((1u64 << bits) - 1)
        }
    };
    let min = if signed && bits < 64 {
        -(1i64 << (bits - 1))
    } else {
        i64::MIN
    };
    Some(match op {
        O::Add => Box::new(move |x, y| w(x.wrapping_add(y))),
        O::Subtract => Box::new(move |x, y| w(x.wrapping_sub(y))),
        O::Multiply => Box::new(move |x, y| w(x.wrapping_mul(y))),
        O::Divide => {
            if signed {
                Box::new(move |x, y| {
                    if y == 0 {
                        -1
                    } else if x == min && y == -1 {
                        min
                    } else {
                        w(x.wrapping_div(y))
                    }
                })
            } else {
                Box::new(move |x, y| {
                    if u(y) == 0 {
                        w(-1)
                    } else {
                        w((u(x) / u(y)) as i64)
                    }
                })
            }
        }
        O::Remainder => {
            if signed {
                Box::new(move |x, y| {
                    if y == 0 {
                        x
                    } else if x == min && y == -1 {
                        0
                    } else {
                        w(x.wrapping_rem(y))
                    }
                })
            } else {
                Box::new(move |x, y| {
                    if u(y) == 0 {
                        x
                    } else {
                        w((u(x) % u(y)) as i64)
                    }
                })
            }
        }
        O::Maximum => {
            if signed {
                Box::new(|x: i64, y: i64| x.max(y))
            } else {
                Box::new(move |x, y| if u(x) >= u(y) { x } else { y })
            }
        }
        O::Minimum => {
            if signed {
                Box::new(|x: i64, y: i64| x.min(y))
            } else {
                Box::new(move |x, y| if u(x) <= u(y) { x } else { y })
            }
        }
        O::And => Box::new(|x, y| x & y),
        O::Or => Box::new(|x, y| x | y),
        O::Xor => Box::new(|x, y| x ^ y),
        O::ShiftLeft => Box::new(move |x, y| if u(y) >= bits as u64 { 0 } else { w(x << u(y)) }),
        O::ShiftRightLogical => Box::new(move |x, y| {
            if u(y) >= bits as u64 {
                0
            } else {
                w((u(x) >> u(y)) as i64)
            }
        }),
        O::ShiftRightArithmetic => Box::new(move |x, y| {
            // Sign-extended view of x at its width.
            let sx = wrap_int(x, bits, true);
            let r = if u(y) >= bits as u64 {
                if sx < 0 {
                    -1
                } else {
                    0
                }
            } else {
                sx >> u(y)
            };
            w(r)
        }),
        O::Power => Box::new(move |x, y| int_pow(x, y, signed, bits)),
        O::Mulhi => Box::new(move |x, y| {
            let p = if signed {
                (x as i128) * (y as i128)
            } else {
                (u(x) as i128) * (u(y) as i128)
            };
            w((p >> bits) as i64)
        }),
        _ => return None,
    })
}

/// The f64 function of a float binary op.
pub fn float_binop(op: Opcode) -> Option<fn(f64, f64) -> f64> {
    use Opcode as O;
    Some(match op {
        O::Add => |x, y| x + y,
        O::Subtract => |x, y| x - y,
        O::Multiply => |x, y| x * y,
        O::Divide => |x, y| x / y,
        O::Remainder => |x, y| x % y,
        O::Maximum => fmax_nan,
        O::Minimum => fmin_nan,
        O::Power => f64::powf,
        O::Atan2 => f64::atan2,
        _ => return None,
    })
}

/// The function of a complex binary op on Complex64 (c128; c64 is computed in single precision,
/// [`c64_binop_single`]); `mul` is the contraction of multiply's partial products.
pub fn complex_binop(
    op: Opcode,
    mul: crate::variant::ComplexMul,
) -> Option<fn(Complex64, Complex64) -> Complex64> {
    use Opcode as O;
    Some(match op {
        O::Add => |x, y| x + y,
        O::Subtract => |x, y| x - y,
        O::Multiply if mul == crate::variant::ComplexMul::AnnexG => crate::annex_g::mul,
        O::Multiply => xla_complex::mul_in(mul),
        O::Divide => crate::annex_g::div,
        O::Atan2 => xla_complex::atan2,
        O::Power => xla_complex::pow,
        O::Maximum => complex_max,
        O::Minimum => complex_min,
        _ => return None,
    })
}

/// Complex `maximum` as XLA CPU computes it (jaxlib 0.10.2): one of the operands, bit for bit,
/// `a` when `a.re >= b.re` and `b` otherwise. XLA lowers it through MHLO's scalar mapping, which
/// means to order (re, im) pairs lexicographically but writes the condition as
/// `(a.re == b.re && a.im >= b.im) || a.re >= b.re`: the second term holds whenever the first
/// does, so the imaginary parts never matter (max((1, 1), (1, 2)) is (1, 1), and so is min).
/// The compares are ordered (a NaN real part in either operand gives `b`) and -0 equals +0
/// (`a`). They are made in the part type, so that under the flush-to-zero variant's CPU mode a
/// subnormal real part reads as zero, as in XLA CPU's compare, while the operand picked keeps
/// its bits (measured: max((0, 1), (1e-45, 5)) is (0, 1); max((-1e-45, 3), (0, 2)) is
/// (-1e-45, 3)). XLA's CSE takes the op for commutative, so where the real parts tie or one is
/// NaN, `maximum(b, a)` next to `maximum(a, b)` gives the latter's result: the oracle keeps the
/// module's operand order, and the enclosure allows either operand there.
pub fn complex_max<T: PartialOrd + Copy>(a: Complex<T>, b: Complex<T>) -> Complex<T> {
    if a.re >= b.re {
        a
    } else {
        b
    }
}

/// Complex `minimum` as XLA CPU computes it: [`complex_max`] with `<=`.
pub fn complex_min<T: PartialOrd + Copy>(a: Complex<T>, b: Complex<T>) -> Complex<T> {
    if a.re <= b.re {
        a
    } else {
        b
    }
}

/// The function of a pred binary op.
pub fn pred_binop(op: Opcode) -> Option<fn(bool, bool) -> bool> {
    use Opcode as O;
    Some(match op {
        O::And | O::Minimum | O::Multiply => |x, y| x & y,
        O::Or | O::Maximum | O::Add => |x, y| x | y,
        O::Xor | O::Subtract => |x, y| x ^ y,
        _ => return None,
    })
}

/// A binary elementwise op.
pub fn binary(op: Opcode, a: &Array, b: &Array, out_ty: PrimitiveType) -> Result<Array> {
    binary_with(op, a, b, out_ty, crate::variant::ComplexMul::Fused)
}

/// [`binary`], with complex multiply's partial products contracted as `mul` says.
pub fn binary_with(
    op: Opcode,
    a: &Array,
    b: &Array,
    out_ty: PrimitiveType,
    mul: crate::variant::ComplexMul,
) -> Result<Array> {
    use Opcode as O;
    same_len(a, b)?;
    if a.ty != b.ty {
        return Err(invalid(format!(
            "operand types differ: {} vs {}",
            a.ty, b.ty
        )));
    }
    let ty = a.ty;
    let dims = a.dims.clone();
    let buf = match ty.class() {
        TypeClass::Float if op == O::Complex => {
            let re: Vec<f64> = to_f64s(&a.buf);
            let im: Vec<f64> = to_f64s(&b.buf);
            match out_ty {
                PrimitiveType::C64 => Buffer::C64(
                    re.iter()
                        .zip(&im)
                        .map(|(&r, &i)| Complex32::new(r as f32, i as f32))
                        .collect(),
                ),
                PrimitiveType::C128 => Buffer::C128(
                    re.iter()
                        .zip(&im)
                        .map(|(&r, &i)| Complex64::new(r, i))
                        .collect(),
                ),
                _ => return Err(invalid("complex must produce c64 or c128")),
            }
        }
        TypeClass::Float => {
            let f = float_binop(op).ok_or_else(|| type_err(op, ty))?;
            // f32 fast path for the IEEE-exact operations: native f32 arithmetic is identical to
            // computing in f64 and rounding once.
            if let (Buffer::F32(x), Buffer::F32(y)) = (&a.buf, &b.buf) {
                match op {
                    O::Add => {
                        return Ok(Array::new(ty, dims, Buffer::F32(map2(x, y, |p, q| p + q))))
                    }
                    O::Subtract => {
                        return Ok(Array::new(ty, dims, Buffer::F32(map2(x, y, |p, q| p - q))))
                    }
                    O::Multiply => {
                        return Ok(Array::new(ty, dims, Buffer::F32(map2(x, y, |p, q| p * q))))
                    }
                    O::Divide => {
                        return Ok(Array::new(ty, dims, Buffer::F32(map2(x, y, |p, q| p / q))))
                    }
                    _ => {}
                }
            }
            if matches!(op, O::Maximum | O::Minimum) {
                // The result is one of the operands, bit for bit (a NaN's payload included):
                // XLA selects, it does not compute.
                return Ok(Array::new(
                    ty,
                    dims,
                    crate::map_float_buf2!(&a.buf, &b.buf, x, y => float_pick(x, y, f), return Err(type_err(op, ty))),
                ));
            }
            crate::map_float_buf2!(&a.buf, &b.buf, x, y => float_bin(x, y, f), return Err(type_err(op, ty)))
        }
        TypeClass::Complex => {
            let f = complex_binop(op, mul).ok_or_else(|| type_err(op, ty))?;
            match (&a.buf, &b.buf) {
                // The reference computes c64 in double precision and rounds once; XLA's
                // single-precision forms are variants (a multiply contraction, `narrow_complex`).
                (Buffer::C64(x), Buffer::C64(y)) => match c64_binop_single(op, mul) {
                    Some(g)
                        if mul != crate::variant::ComplexMul::AnnexG
                            || matches!(op, O::Add | O::Subtract | O::Maximum | O::Minimum) =>
                    {
                        Buffer::C64(map2(x, y, g))
                    }
                    _ => Buffer::C64(cplx_bin(x, y, f)),
                },
                (Buffer::C128(x), Buffer::C128(y)) => Buffer::C128(cplx_bin(x, y, f)),
                _ => return Err(type_err(op, ty)),
            }
        }
        TypeClass::Signed | TypeClass::Unsigned => {
            let f = int_binary_fn(op, ty.bit_width(), ty.is_signed_integer())
                .ok_or_else(|| type_err(op, ty))?;
            crate::map_int_buf2!(&a.buf, &b.buf, x, y => int_bin(x, y, &f), return Err(type_err(op, ty)))
        }
        TypeClass::Pred => {
            let f = pred_binop(op).ok_or_else(|| type_err(op, ty))?;
            match (&a.buf, &b.buf) {
                (Buffer::Pred(x), Buffer::Pred(y)) => Buffer::Pred(map2(x, y, f)),
                _ => return Err(type_err(op, ty)),
            }
        }
        TypeClass::Other => return Err(type_err(op, ty)),
    };
    Ok(Array::new(out_ty, dims, buf))
}

/// Every element as f64 (floats; integers and pred converted; complex: real part).
pub fn to_f64s(b: &Buffer) -> Vec<f64> {
    match b {
        Buffer::Pred(v) => v.iter().map(|&x| x as u8 as f64).collect(),
        Buffer::S8(v) => v.iter().map(|&x| x as f64).collect(),
        Buffer::S16(v) => v.iter().map(|&x| x as f64).collect(),
        Buffer::S32(v) => v.iter().map(|&x| x as f64).collect(),
        Buffer::S64(v) => v.iter().map(|&x| x as f64).collect(),
        Buffer::U8(v) => v.iter().map(|&x| x as f64).collect(),
        Buffer::U16(v) => v.iter().map(|&x| x as f64).collect(),
        Buffer::U32(v) => v.iter().map(|&x| x as f64).collect(),
        Buffer::U64(v) => v.iter().map(|&x| x as f64).collect(),
        Buffer::C64(v) => v.iter().map(|x| x.re as f64).collect(),
        Buffer::C128(v) => v.iter().map(|x| x.re).collect(),
        b => {
            let mut out = Vec::new();
            let _ = crate::map_float_buf!(b, v => { out = v.iter().map(|x| x.to_f64()).collect(); Vec::new() }, Buffer::Pred(vec![]));
            out
        }
    }
}

/// Every element as i64 (integers sign/zero-extended; pred 0/1).
pub fn to_i64s(b: &Buffer) -> Option<Vec<i64>> {
    Some(match b {
        Buffer::Pred(v) => v.iter().map(|&x| x as i64).collect(),
        Buffer::S8(v) => v.iter().map(|&x| x as i64).collect(),
        Buffer::S16(v) => v.iter().map(|&x| x as i64).collect(),
        Buffer::S32(v) => v.iter().map(|&x| x as i64).collect(),
        Buffer::S64(v) => v.clone(),
        Buffer::U8(v) => v.iter().map(|&x| x as i64).collect(),
        Buffer::U16(v) => v.iter().map(|&x| x as i64).collect(),
        Buffer::U32(v) => v.iter().map(|&x| x as i64).collect(),
        Buffer::U64(v) => v.iter().map(|&x| x as i64).collect(),
        _ => return None,
    })
}

/// Every element as Complex64.
pub fn to_c64s(b: &Buffer) -> Vec<Complex64> {
    match b {
        Buffer::C64(v) => v.iter().map(|x| x.to_c()).collect(),
        Buffer::C128(v) => v.clone(),
        b => to_f64s(b)
            .into_iter()
            .map(|x| Complex64::new(x, 0.0))
            .collect(),
    }
}

/// The comparison of elements `i` and `j` (possibly of different arrays) as an ordering key:
/// a closure-friendly total preorder for each class.
fn cmp_result(dir: &str, ord: Option<std::cmp::Ordering>) -> Result<bool> {
    use std::cmp::Ordering::*;
    Ok(match dir {
        "EQ" => ord == Some(Equal),
        "NE" => ord != Some(Equal),
        "LT" => ord == Some(Less),
        "LE" => matches!(ord, Some(Less | Equal)),
        "GT" => ord == Some(Greater),
        "GE" => matches!(ord, Some(Greater | Equal)),
        d => return Err(invalid(format!("unknown comparison direction {d}"))),
    })
}

/// `compare(a, b), direction=..., type=...`.
pub fn compare(a: &Array, b: &Array, dir: &str, cmp_type: Option<&str>) -> Result<Array> {
    same_len(a, b)?;
    if a.ty != b.ty {
        return Err(invalid(format!(
            "operand types differ: {} vs {}",
            a.ty, b.ty
        )));
    }
    cmp_result(dir, None)?; // validates the direction
    let total = cmp_type == Some("TOTALORDER");
    let d = dir.to_string();
    let out: Vec<bool> = match a.ty.class() {
        TypeClass::Float if total => {
            // IEEE totalOrder on the element type's own bits, so that NaN signs and payloads of
            // every type count (a conversion to f64 would drop f8 payloads).
            let key = total_order_keys(a.ty);
            let x: Vec<i128> = crate::value::to_bits(&a.buf)
                .into_iter()
                .map(&key)
                .collect();
            let y: Vec<i128> = crate::value::to_bits(&b.buf)
                .into_iter()
                .map(&key)
                .collect();
            map2(&x, &y, |p, q| {
                cmp_result(&d, Some(p.cmp(&q))).unwrap_or(false)
            })
        }
        TypeClass::Float => {
            let x = to_f64s(&a.buf);
            let y = to_f64s(&b.buf);
            map2(&x, &y, |p, q| {
                cmp_result(&d, p.partial_cmp(&q)).unwrap_or(false)
            })
        }
        TypeClass::Signed | TypeClass::Pred => {
            let x = to_i64s(&a.buf).ok_or_else(|| invalid("bad buffer"))?;
            let y = to_i64s(&b.buf).ok_or_else(|| invalid("bad buffer"))?;
            map2(&x, &y, |p, q| {
                cmp_result(&d, Some(p.cmp(&q))).unwrap_or(false)
            })
        }
        TypeClass::Unsigned => {
            let x = to_i64s(&a.buf).ok_or_else(|| invalid("bad buffer"))?;
            let y = to_i64s(&b.buf).ok_or_else(|| invalid("bad buffer"))?;
            map2(&x, &y, |p, q| {
                cmp_result(&d, Some((p as u64).cmp(&(q as u64)))).unwrap_or(false)
            })
        }
        TypeClass::Complex => {
            let x = to_c64s(&a.buf);
            let y = to_c64s(&b.buf);
            match dir {
                "EQ" => map2(&x, &y, |p, q| p == q),
                "NE" => map2(&x, &y, |p, q| p != q),
                _ => {
                    // Lexicographic on (re, im), as XLA's evaluator orders complex numbers.
                    map2(&x, &y, |p, q| {
                        let o = match p.re.partial_cmp(&q.re) {
                            Some(std::cmp::Ordering::Equal) => p.im.partial_cmp(&q.im),
                            o => o,
                        };
                        cmp_result(&d, o).unwrap_or(false)
                    })
                }
            }
        }
        TypeClass::Other => return Err(unsupported(format!("compare on {}", a.ty))),
    };
    Ok(Array::new(
        PrimitiveType::Pred,
        a.dims.clone(),
        Buffer::Pred(out),
    ))
}

/// Raw bits of a float type -> an integer in IEEE totalOrder: sign-magnitude folded so that
/// -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN, payloads ordered by magnitude.
fn total_order_keys(ty: PrimitiveType) -> impl Fn(u128) -> i128 {
    let w = ty.bit_width() as u32;
    let signed = ty != PrimitiveType::F8E8M0FNU;
    move |b: u128| {
        let sign = 1u128 << (w - 1);
        if signed && b & sign != 0 {
            -((b & (sign - 1)) as i128) - 1
        } else {
            b as i128
        }
    }
}

/// Broadcasts a one-element array to `n` elements (scalar operands of select/clamp).
fn expand(a: &Array, dims: &[usize]) -> Result<Buffer> {
    if a.dims == dims {
        Ok(a.buf.clone())
    } else if a.dims.is_empty() && a.len() == 1 {
        Ok(a.buf.splat(0, dims.iter().product()))
    } else {
        Err(invalid(format!(
            "operand dimensions {:?} do not match {:?}",
            a.dims, dims
        )))
    }
}

/// `select(pred, on_true, on_false)`; a scalar pred selects whole arrays.
pub fn select(p: &Array, t: &Array, f: &Array) -> Result<Array> {
    if t.ty != f.ty || t.dims != f.dims {
        return Err(invalid("select branches differ in shape"));
    }
    let pv = match &p.buf {
        Buffer::Pred(v) => v,
        _ => return Err(invalid("select predicate is not pred")),
    };
    if p.dims.is_empty() && !t.dims.is_empty() {
        return Ok(if pv[0] { t.clone() } else { f.clone() });
    }
    if p.dims != t.dims {
        return Err(invalid("select predicate shape differs"));
    }
    let buf = crate::map_buf2!(&t.buf, &f.buf, x, y => {
        if x.len() >= PAR_THRESHOLD {
            pv.par_iter().zip(x.par_iter().zip(y.par_iter())).map(|(&c, (&a, &b))| if c { a } else { b }).collect()
        } else {
            pv.iter().zip(x.iter().zip(y)).map(|(&c, (&a, &b))| if c { a } else { b }).collect()
        }
    }, unreachable!());
    Ok(Array::new(t.ty, t.dims.clone(), buf))
}

/// `clamp(min, x, max)` = min(max(x, lo), hi) with NaN propagation; lo/hi may be scalars.
pub fn clamp(lo: &Array, x: &Array, hi: &Array) -> Result<Array> {
    if lo.ty != x.ty || hi.ty != x.ty {
        return Err(invalid("clamp operand types differ"));
    }
    let lo = Array::new(x.ty, x.dims.clone(), expand(lo, &x.dims)?);
    let hi = Array::new(x.ty, x.dims.clone(), expand(hi, &x.dims)?);
    let m = binary(Opcode::Maximum, x, &lo, x.ty)?;
    binary(Opcode::Minimum, &m, &hi, x.ty)
}

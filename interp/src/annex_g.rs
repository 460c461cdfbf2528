//! Complex functions with the special values of C99 Annex G: the oracle's complex functions.
//!
//! The StableHLO spec names each complex op ("complex exponential", "complex modulus", ...)
//! without its special values; the semantics table (`hlo::semantics`) takes them from C99
//! Annex G, as IEEE 754 and C do: `cabs(inf + i NaN) = +inf` (G.6p6, F.9.4.3), `csqrt(-2 - 0i) =
//! -i sqrt(2)` (the sign of a zero part picks the side of a branch cut, G.6p3), `cexp(-inf +
//! i y) = +0 cis(y)` (G.6.3.1), ... The C library's complex functions implement Annex G (glibc,
//! musl: `__STDC_IEC_559_COMPLEX__`), so the functions C has are its, called on c128
//! (`double _Complex`, which the C ABI passes as a pair of doubles, as `num_complex::Complex64`
//! is laid out); the ops C lacks are built from them by the spec's own formulas (`log1p`,
//! `logistic`, `sign`) or from their definitions (`expm1`, `rsqrt`). Multiplication and
//! division recover the infinities of Annex G.5.1: an infinite operand times a nonzero one is an
//! infinity even where the textbook formula makes NaN of both parts.
//!
//! c64 values are computed here in double precision and rounded once: the reference a c64
//! result is held to (`hlo::semantics` allows XLA the measured ulps around it).

use num_complex::Complex64;

type C = Complex64;

#[link(name = "m")]
extern "C" {
    fn csqrt(z: C) -> C;
    fn cexp(z: C) -> C;
    fn clog(z: C) -> C;
    fn csin(z: C) -> C;
    fn ccos(z: C) -> C;
    fn ctan(z: C) -> C;
    fn csinh(z: C) -> C;
    fn ccosh(z: C) -> C;
    fn ctanh(z: C) -> C;
    fn casin(z: C) -> C;
    fn cacos(z: C) -> C;
    fn catan(z: C) -> C;
    fn casinh(z: C) -> C;
    fn cacosh(z: C) -> C;
    fn catanh(z: C) -> C;
}

macro_rules! from_libm {
    ($($name:ident => $c:ident),* $(,)?) => {
        $(
            #[doc = concat!("C's `", stringify!($c), "` (Annex G special values).")]
            pub fn $name(z: C) -> C {
                // SAFETY: a pure libm function of one `double _Complex`, passed and returned as a
                // pair of doubles (`Complex64` is `#[repr(C)]` with `re` first).
                unsafe { $c(z) }
            }
        )*
    };
}

from_libm!(
    sqrt => csqrt,
    exp => cexp,
    log => clog,
    sin => csin,
    cos => ccos,
    tan => ctan,
    sinh => csinh,
    cosh => ccosh,
    tanh => ctanh,
    asin => casin,
    acos => cacos,
    atan => catan,
    asinh => casinh,
    acosh => cacosh,
    atanh => catanh,
);

/// `|z|`: `hypot(re, im)`, an infinite part giving `+inf` even beside a NaN (G.6p6, F.9.4.3).
pub fn abs(z: C) -> f64 {
    z.re.hypot(z.im)
}

/// `log(1 + z)`, the spec's formula (`log_plus_one`): `log(hypot(re + 1, im)) + i atan2(im, re
/// + 1)`, with `log |1 + z|` computed as `log1p(re (re + 2) + im^2) / 2` where that is accurate
/// (small z).
pub fn log1p(z: C) -> C {
    let (a, b) = (z.re, z.im);
    if a.is_finite() && b.is_finite() && a.abs() < 0.5 && b.abs() < 0.5 {
        return C::new(0.5 * (a * (a + 2.0) + b * b).ln_1p(), b.atan2(a + 1.0));
    }
    C::new((a + 1.0).hypot(b).ln(), b.atan2(a + 1.0))
}

/// `e^z - 1`: `expm1(re) cos(im) - 2 sin^2(im / 2) + i e^re sin(im)` for finite z (accurate
/// near zero); `cexp(z) - 1` otherwise, which keeps Annex G's special values; a zero imaginary
/// part stays as it is (as `cexp`'s does).
pub fn expm1(z: C) -> C {
    let (a, b) = (z.re, z.im);
    if !(a.is_finite() && b.is_finite()) {
        let e = exp(z);
        return C::new(e.re - 1.0, e.im);
    }
    let h = (b * 0.5).sin();
    let re = a.exp_m1() * b.cos() - 2.0 * h * h;
    let im = if b == 0.0 { b } else { a.exp() * b.sin() };
    C::new(re, im)
}

/// `1 / sqrt(z)`, the quotient with Annex G's division (`1 / 0` is an infinity).
pub fn rsqrt(z: C) -> C {
    div(C::new(1.0, 0.0), sqrt(z))
}

/// The spec's `logistic`: `1 / (1 + exp(-z))`, with Annex G's exponential and division.
pub fn logistic(z: C) -> C {
    let e = exp(-z);
    div(C::new(1.0, 0.0), C::new(1.0 + e.re, e.im))
}

/// The spec's `sign`: (NaN, NaN) when a part is NaN, z itself when it is zero, else `z / |z|`.
pub fn sign(z: C) -> C {
    if z.re.is_nan() || z.im.is_nan() {
        return C::new(f64::NAN, f64::NAN);
    }
    if z.re == 0.0 && z.im == 0.0 {
        return z;
    }
    let n = abs(z);
    C::new(z.re / n, z.im / n)
}

fn is_inf(z: C) -> bool {
    z.re.is_infinite() || z.im.is_infinite()
}

/// `x` with its NaN parts made 0 (in the sign of the NaN), as G.5.1's recovery reads an
/// operand, and an infinite operand's parts boxed to `copysign(1 or 0, part)`.
fn boxed(z: C) -> C {
    let b = |x: f64| {
        let v: f64 = if x.is_infinite() { 1.0 } else { 0.0 };
        v.copysign(x)
    };
    C::new(b(z.re), b(z.im))
}

fn nan_to_zero(z: C) -> C {
    let n = |x: f64| if x.is_nan() { 0.0f64.copysign(x) } else { x };
    C::new(n(z.re), n(z.im))
}

/// `a * b` by the textbook formula, with the infinities of Annex G.5.1 recovered where it makes
/// NaN of both parts: an infinite operand times a nonzero (possibly infinite or NaN-part) one
/// is an infinity, and partial products that overflow make an infinity, not NaN.
pub fn mul(a: C, b: C) -> C {
    let (ac, bd, ad, bc) = (a.re * b.re, a.im * b.im, a.re * b.im, a.im * b.re);
    let (x, y) = (ac - bd, ad + bc);
    if !(x.is_nan() && y.is_nan()) {
        return C::new(x, y);
    }
    let (mut a, mut b) = (a, b);
    let mut recover = false;
    if is_inf(a) {
        a = boxed(a);
        b = nan_to_zero(b);
        recover = true;
    }
    if is_inf(b) {
        b = boxed(b);
        a = nan_to_zero(a);
        recover = true;
    }
    if !recover && (ac.is_infinite() || bd.is_infinite() || ad.is_infinite() || bc.is_infinite()) {
        // A partial product overflowed: the NaNs came from inf - inf.
        a = nan_to_zero(a);
        b = nan_to_zero(b);
        recover = true;
    }
    if !recover {
        return C::new(x, y);
    }
    let inf = f64::INFINITY;
    C::new(
        inf * (a.re * b.re - a.im * b.im),
        inf * (a.re * b.im + a.im * b.re),
    )
}

/// `a / b` by Smith's algorithm, with the infinities and zeros of Annex G.5.1 recovered where it
/// makes NaN of both parts: a nonzero over zero is an infinity, an infinity over a finite value
/// an infinity, a finite value over an infinity a zero.
pub fn div(a: C, b: C) -> C {
    let (ar, ai, br, bi) = (a.re, a.im, b.re, b.im);
    let (cr, ci) = if br.abs() < bi.abs() {
        let r = br / bi;
        let d = bi + r * br;
        ((r * ar + ai) / d, (r * ai - ar) / d)
    } else {
        let r = bi / br;
        let d = br + r * bi;
        ((r * ai + ar) / d, (ai - r * ar) / d)
    };
    if !(cr.is_nan() && ci.is_nan()) {
        return C::new(cr, ci);
    }
    let inf = f64::INFINITY;
    let finite = |z: C| z.re.is_finite() && z.im.is_finite();
    if br == 0.0 && bi == 0.0 && !(ar.is_nan() && ai.is_nan()) {
        let s = inf.copysign(br);
        return C::new(s * ar, s * ai);
    }
    if is_inf(a) && finite(b) {
        let x = boxed(a);
        return C::new(inf * (x.re * br + x.im * bi), inf * (x.im * br - x.re * bi));
    }
    if is_inf(b) && finite(a) {
        let y = boxed(b);
        return C::new(0.0 * (ar * y.re + ai * y.im), 0.0 * (ai * y.re - ar * y.im));
    }
    C::new(cr, ci)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(re: f64, im: f64) -> C {
        C::new(re, im)
    }

    /// Annex G's special values that XLA CPU (jaxlib 0.10.2) and the oracle once shared wrong.
    #[test]
    fn special_values_follow_annex_g() {
        let (inf, nan) = (f64::INFINITY, f64::NAN);
        assert_eq!(abs(c(inf, nan)), inf, "G.6p6: cabs is hypot");
        assert_eq!(abs(c(nan, -inf)), inf);
        assert!(abs(c(nan, 1.0)).is_nan());
        // The branch cut of sqrt: the sign of a zero imaginary part picks the side.
        let s = sqrt(c(-2.0, -0.0));
        assert_eq!((s.re, s.im), (0.0, -2f64.sqrt()));
        let s = sqrt(c(-2.0, 0.0));
        assert_eq!((s.re, s.im), (0.0, 2f64.sqrt()));
        // csqrt(x + i inf) = +inf + i inf for every x, NaN included.
        let s = sqrt(c(nan, inf));
        assert_eq!((s.re, s.im), (inf, inf));
        // cexp(-inf + i y) = +0 cis(y).
        let e = exp(c(-inf, 2.0));
        assert_eq!(e.re, 0.0 * 2f64.cos());
        // clog(-0 + i0) = -inf + i pi.
        let l = log(c(-0.0, 0.0));
        assert_eq!((l.re, l.im), (-inf, std::f64::consts::PI));
    }

    /// G.5.1: an infinite operand times a nonzero one is an infinity, where the textbook formula
    /// makes NaN of both parts.
    #[test]
    fn products_and_quotients_recover_infinities() {
        let inf = f64::INFINITY;
        let p = mul(c(inf, inf), c(1.0, 0.0));
        assert!(p.re.is_infinite() || p.im.is_infinite(), "{p}");
        let textbook = c(inf * 1.0 - inf * 0.0, inf * 0.0 + inf * 1.0);
        assert!(textbook.re.is_nan() && textbook.im.is_nan());
        assert_eq!(mul(c(2.0, 3.0), c(4.0, -1.0)), c(11.0, 10.0));
        let q = div(c(1.0, 1.0), c(0.0, 0.0));
        assert!(q.re.is_infinite() && q.im.is_infinite(), "{q}");
        let z = div(c(1.0, 1.0), c(inf, 0.0));
        assert_eq!((z.re, z.im), (0.0, 0.0));
    }
}

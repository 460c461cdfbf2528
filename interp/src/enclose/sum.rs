//! Reductions in any order: the set of results of summing, multiplying or taking the maximum of
//! terms in any order, blocking and tree shape, with partial results rounded to the accumulation
//! type or kept wider, products contracted into fused multiply-adds or not (XLA: "the
//! evaluation order of the reduction function is arbitrary and may be non-deterministic";
//! tree_reduction_rewriter splits long reductions into blocks, code generation vectorizes and
//! contracts).
//!
//! A sum's error in any order is at most `gamma(n) * sum |x_i|` (`gamma(n) = n u / (1 - n u)`,
//! `u` the accumulation type's unit roundoff): the classical bound for recursive summation
//! holds for every tree, since each of the `n - 1` additions rounds a partial sum no larger than
//! the sum of the magnitudes. A partial sum may overflow when the positive (or negative) terms
//! alone exceed the largest finite value: then an infinity of that sign is possible, and NaN
//! when both are.

use super::arith::{parts, F64Ext, Out};
use super::format::{format, Format};
use super::set::{FSet, Why};
use hlo::PrimitiveType;

/// `n u / (1 - n u)`, or infinity when `n u >= 1`.
pub(crate) fn gamma(n: f64, u: f64) -> f64 {
    let nu = n * u;
    if nu >= 1.0 {
        f64::INFINITY
    } else {
        nu / (1.0 - nu)
    }
}

/// The f64 additions [`SumAcc::folded`] makes after the compensated sums (each of its bounds
/// takes at most three), counted in the error term.
const FOLD_ADDITIONS: f64 = 3.0;

/// Neumaier's compensated running sum (the enclosure's own f64 sums of bounds).
#[derive(Clone, Copy, Debug, Default)]
struct Kahan {
    s: f64,
    c: f64,
}

impl Kahan {
    fn add(&mut self, x: f64) {
        let t = self.s + x;
        if t.is_finite() {
            if self.s.abs() >= x.abs() {
                self.c += (self.s - t) + x;
            } else {
                self.c += (x - t) + self.s;
            }
        }
        self.s = t;
    }
    fn value(&self) -> f64 {
        let v = self.s + self.c;
        if v.is_nan() {
            self.s
        } else {
            v
        }
    }
}

/// The running state of an order-free sum.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SumAcc {
    /// Terms with finite numbers.
    n: f64,
    lo: Kahan,
    hi: Kahan,
    /// Sum of the largest magnitudes (the error bound's base).
    mag: Kahan,
    /// Sum of the positive parts (the largest partial sum possible) and of the negative parts.
    pos: Kahan,
    neg: Kahan,
    /// The exactly known terms ([`SumAcc::add_exact`]), positive and negative apart: each such
    /// term is one compensated addition here, folded into the bounds above by
    /// [`SumAcc::folded`].
    exact_pos: Kahan,
    exact_neg: Kahan,
    nan: bool,
    pinf: bool,
    ninf: bool,
    /// A term that is certainly +inf / -inf.
    pinf_sure: bool,
    ninf_sure: bool,
    /// Some term is only NaN.
    nan_sure: bool,
    /// Every term so far is a zero (of some sign), and whether each may be -0 / some may be +0.
    zeros_only: bool,
    all_neg_zero: bool,
    any_pos_zero: bool,
    terms: u64,
    /// The sum may start from +0 (an accumulator set to zero before the first term, as a dot's
    /// or a convolution's loop does): then +0 + -0 makes a zero sum +0.
    pub from_zero: bool,
    why: Why,
}

impl SumAcc {
    pub fn new() -> SumAcc {
        SumAcc {
            zeros_only: true,
            all_neg_zero: true,
            ..SumAcc::default()
        }
    }

    /// A sum whose accumulator starts at +0 (a dot's, a convolution's).
    pub fn from_zero() -> SumAcc {
        SumAcc {
            from_zero: true,
            ..SumAcc::new()
        }
    }

    /// Adds a term (its numbers as exact reals).
    pub fn add(&mut self, t: FSet) {
        self.terms += 1;
        self.why |= t.why;
        self.nan |= t.nan;
        if t.only_nan() {
            self.nan_sure = true;
        }
        if !t.has_number() {
            self.zeros_only = false;
            self.all_neg_zero = false;
            return;
        }
        let p = parts(&t);
        self.pinf |= p.pinf;
        self.ninf |= p.ninf;
        if p.fin.is_none() {
            self.pinf_sure |= p.pinf && !t.nan;
            self.ninf_sure |= p.ninf && !t.nan;
        }
        // Only zeros: no infinity, and the finite extent is [-0, +0] at most.
        let is_zero = !p.pinf && !p.ninf && p.fin.is_some_and(|(l, h)| l == 0.0 && h == 0.0);
        if !is_zero {
            self.zeros_only = false;
        }
        if !t.contains(-0.0) {
            self.all_neg_zero = false;
        }
        if t.contains(0.0) {
            self.any_pos_zero = true;
        }
        if let Some((l, h)) = p.fin {
            self.n += 1.0;
            self.lo.add(l);
            self.hi.add(h);
            self.mag.add(l.abs().max(h.abs()));
            self.pos.add(h.max(0.0));
            self.neg.add(l.min(0.0));
        }
    }

    /// Adds a term that is one finite value (the same as `add(FSet::point(x))`, without the
    /// set: a dot's exact products).
    pub fn add_exact(&mut self, x: f64, why: Why) {
        debug_assert!(x.is_finite());
        self.terms += 1;
        self.why |= why;
        self.n += 1.0;
        let neg_zero = x == 0.0 && x.is_sign_negative();
        self.zeros_only &= x == 0.0;
        self.all_neg_zero &= neg_zero;
        self.any_pos_zero |= x == 0.0 && !neg_zero;
        self.exact_pos.add(x.max(0.0));
        self.exact_neg.add(x.min(0.0));
    }

    /// The bounds' sums with the exactly known terms folded in: (lo, hi, mag, pos, neg). The
    /// few f64 additions of the fold round once each; [`SumAcc::finish`]'s error term counts
    /// them ([`FOLD_ADDITIONS`]).
    fn folded(&self) -> (f64, f64, f64, f64, f64) {
        let (p, n) = (self.exact_pos.value(), self.exact_neg.value());
        let ex = p + n;
        (
            self.lo.value() + ex,
            self.hi.value() + ex,
            self.mag.value() + (p - n),
            self.pos.value() + p,
            self.neg.value() + n,
        )
    }

    /// A term that may be absent (a window or scatter that may not select it): its set and a
    /// zero.
    pub fn add_optional(&mut self, t: FSet) {
        self.add(t.hull(FSet::point(0.0)).hull(FSet::point(-0.0)));
    }

    /// The set of results, accumulated in `acc` (the unit roundoff and overflow threshold of the
    /// narrowest accumulation XLA may use) and rounded to `out`. `wider`: XLA may also
    /// accumulate in a wider type (excess precision), where partial sums do not overflow.
    pub fn finish(&self, acc: &Format, out: &Format) -> FSet {
        let mut o = Out::outward(out);
        let mut why = self.why;
        if self.terms == 0 {
            return FSet::point(0.0);
        }
        if self.nan || (self.pinf && self.ninf) || self.nan_sure {
            o.nan();
        }
        let (lo, hi, mag, pos, neg) = self.folded();
        // A partial sum of the positive terms alone may reach past the largest finite value of
        // the accumulation type.
        let max = acc.max;
        let p_over = pos >= max;
        let n_over = neg <= -max;
        if p_over && n_over {
            o.nan();
        }
        if p_over || n_over {
            why |= Why::OVERFLOW;
        }
        // An infinite term meets the other infinity for sure only when that one is certain
        // too: a term that may round to -inf may also stay a finite real (a product fused into
        // a multiply-add, a sum kept wider) that the +inf absorbs.
        let sure_nan = self.nan_sure || (self.pinf_sure && self.ninf_sure);
        if sure_nan {
            return o.done(why);
        }
        if self.pinf || p_over {
            o.value(f64::INFINITY);
        }
        if self.ninf || n_over {
            o.value(f64::NEG_INFINITY);
        }
        if self.pinf_sure || self.ninf_sure {
            // An infinite term: the sum is that infinity, or NaN where the other may meet it.
            if (self.pinf_sure && (self.ninf || n_over))
                || (self.ninf_sure && (self.pinf || p_over))
            {
                o.nan();
            }
            let mut s = o.done(why);
            // The other infinity is no result once one is certain.
            if self.pinf_sure {
                s.ninf = false;
            } else {
                s.pinf = false;
            }
            return s;
        }
        if self.n > 0.0 {
            if self.zeros_only {
                if self.all_neg_zero {
                    o.value(-0.0);
                }
                if self.any_pos_zero || !self.all_neg_zero || self.from_zero {
                    o.value(0.0);
                }
            } else {
                let steps = (self.n - 1.0).max(0.0);
                let e = (gamma(steps, acc.unit_roundoff())
                    + gamma(self.n + 1.0 + FOLD_ADDITIONS, f64::EPSILON / 2.0))
                    * mag;
                if e > 0.0 {
                    why |= Why::ORDER;
                }
                let (l, h) = if e == 0.0 {
                    (lo, hi)
                } else {
                    ((lo - e).next_down_f64(), (hi + e).next_up_f64())
                };
                o.range(
                    super::arith::Ex::exact(if l.is_nan() { f64::NEG_INFINITY } else { l }),
                    super::arith::Ex::exact(if h.is_nan() { f64::INFINITY } else { h }),
                );
            }
        }
        o.done(why)
    }
}

/// The running state of an order-free product, on magnitudes in log2 and signs.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ProdAcc {
    n: f64,
    /// Sums of log2 of the smallest and largest magnitudes (-inf: a term may be 0; +inf: a term
    /// may be infinite).
    log_lo: f64,
    log_hi: f64,
    /// Sums of log2 of the largest magnitudes above 1 (the largest partial product) and of the
    /// smallest below 1 (the smallest).
    log_big: f64,
    log_small: f64,
    neg_sure: u64,
    sign_free: bool,
    nan: bool,
    nan_sure: bool,
    zero_possible: bool,
    zero_sure: bool,
    inf_possible: bool,
    inf_sure: bool,
    /// Partial products below the smallest normal may be flushed to zero (XLA CPU's
    /// flush-to-zero mode).
    pub flush: bool,
    why: Why,
}

impl ProdAcc {
    pub fn add(&mut self, t: FSet) {
        self.why |= t.why;
        self.nan |= t.nan;
        if !t.has_number() {
            self.nan_sure |= t.only_nan();
            return;
        }
        self.n += 1.0;
        let (lo, hi) = (t.min_abs(), t.max_abs());
        let l2 = |x: f64| {
            if x == 0.0 {
                f64::NEG_INFINITY
            } else {
                x.log2()
            }
        };
        self.log_lo += l2(lo);
        self.log_hi += l2(hi);
        if hi > 1.0 {
            self.log_big += l2(hi);
        }
        if lo < 1.0 {
            self.log_small += l2(lo);
        }
        let neg = t.ninf || t.meets(f64::NEG_INFINITY, -0.0);
        let pos = t.pinf || t.meets(0.0, f64::INFINITY);
        if neg && pos {
            self.sign_free = true;
        } else if neg {
            self.neg_sure += 1;
        }
        if t.may_be_zero() {
            self.zero_possible = true;
            self.zero_sure |= t.max_abs() == 0.0 && !t.nan;
        }
        if t.max_abs() == f64::INFINITY {
            self.inf_possible = true;
            self.inf_sure |= t.min_abs() == f64::INFINITY && !t.nan;
        }
    }

    pub fn finish(&self, acc: &Format, out: &Format) -> FSet {
        let mut why = self.why;
        let mut o = Out::outward(out);
        if self.n == 0.0 {
            return if self.nan {
                FSet::NAN
            } else {
                FSet::point(1.0)
            }
            .because(why);
        }
        if self.nan || self.nan_sure {
            o.nan();
        }
        if self.nan_sure || (self.zero_sure && self.inf_sure) {
            return o.done(why);
        }
        let log_max = acc.max.log2();
        let log_min = if self.flush {
            acc.min_normal.log2()
        } else {
            acc.smallest_positive().log2() - 1.0
        };
        let over = self.log_big >= log_max || self.inf_possible;
        let under = self.log_small <= log_min || self.zero_possible;
        if over && under {
            // An overflowed partial product meets an underflowed (or zero) one.
            o.nan();
        }
        if self.log_big >= log_max || self.log_small <= log_min {
            why |= Why::OVERFLOW;
        }
        let signs: &[f64] = if self.sign_free {
            &[1.0, -1.0]
        } else if self.neg_sure % 2 == 1 {
            &[-1.0]
        } else {
            &[1.0]
        };
        let rel = gamma(self.n, acc.unit_roundoff()) + gamma(2.0 * self.n, f64::EPSILON);
        let mag = |l: f64, up: bool| -> f64 {
            if l == f64::NEG_INFINITY {
                return 0.0;
            }
            if l >= 1100.0 {
                return f64::INFINITY;
            }
            if l <= -1100.0 {
                return 0.0;
            }
            let v = l.exp2();
            if up {
                (v * (1.0 + rel) * (1.0 + 1e-12)).next_up_f64()
            } else {
                (v * (1.0 - rel) * (1.0 - 1e-12)).next_down_f64().max(0.0)
            }
        };
        let (lo, hi) = (mag(self.log_lo, false), mag(self.log_hi, true));
        if lo.is_finite() || hi.is_finite() {
            why |= Why::ORDER;
        }
        for &s in signs {
            let (a, b) = if s > 0.0 { (lo, hi) } else { (-hi, -lo) };
            let zero_lo = if s > 0.0 { 0.0 } else { -0.0 };
            let (a, b) = (
                if a == 0.0 { zero_lo } else { a },
                if b == 0.0 { zero_lo } else { b },
            );
            o.range(super::arith::Ex::exact(a), super::arith::Ex::exact(b));
            if over {
                o.value(f64::INFINITY * s);
            }
            if under {
                o.value(zero_lo);
            }
        }
        o.done(why)
    }
}

/// The running state of an order-free `maximum` or `minimum` (NaN-propagating): exact in any
/// order, but a zero of either sign may win over the other.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MaxAcc {
    pub max: bool,
    set: FSet,
    nan_sure: bool,
    any: bool,
    why: Why,
}

impl MaxAcc {
    pub fn new(max: bool) -> MaxAcc {
        MaxAcc {
            max,
            set: FSet::EMPTY,
            nan_sure: false,
            any: false,
            why: Why::NONE,
        }
    }

    pub fn add(&mut self, t: FSet) {
        self.why |= t.why;
        self.nan_sure |= t.only_nan();
        if !self.any {
            self.set = t;
            self.any = true;
            return;
        }
        self.set = super::arith::max_min(self.set, t, self.max);
    }

    pub fn finish(&self) -> FSet {
        if self.nan_sure {
            return FSet::NAN.because(self.why);
        }
        self.set.because(self.why)
    }
}

/// The accumulation format of a reduction of `ty`: the element type's own (its partial results
/// may be rounded to it, the narrowest XLA uses).
pub(crate) fn accumulation(ty: PrimitiveType) -> &'static Format {
    format(ty).unwrap_or_else(|| format(PrimitiveType::F64).expect("f64"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hlo::PrimitiveType as T;

    fn sum(terms: &[FSet], ty: T) -> FSet {
        let mut a = SumAcc::new();
        for &t in terms {
            a.add(t);
        }
        a.finish(accumulation(ty), accumulation(ty))
    }

    /// `add_exact` is `add` of the point for every kind of finite term: the same flags (zero
    /// signs, infinities, NaN) and the same bounds to within the few roundings of folding the
    /// exact terms in ([`FOLD_ADDITIONS`]); both hold the sum itself where the sum is exact.
    #[test]
    fn an_exact_term_sums_as_its_point() {
        let values = [
            0.0, -0.0, 1.0, -2.5, 3e38, -3e38, 1e-40, -1e-45, 1e300, -7.25, 65504.0, 5e-324,
        ];
        let mut state = 0x9e3779b97f4a7c15u64;
        for round in 0..400 {
            let mut by_set = SumAcc::from_zero();
            let mut by_value = SumAcc::from_zero();
            let mut terms = Vec::new();
            for _ in 0..(round % 13) {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let x = values[(state >> 33) as usize % values.len()];
                by_set.add(FSet::point(x));
                by_value.add_exact(x, Why::NONE);
                terms.push(x);
            }
            for ty in [T::F32, T::Bf16, T::F64] {
                let (a, f) = (accumulation(ty), accumulation(ty));
                let (s, v) = (by_set.finish(a, f), by_value.finish(a, f));
                let flags = |x: &FSet| (x.num, x.nzero, x.pzero, x.ninf, x.pinf, x.nan, x.why);
                assert_eq!(flags(&s), flags(&v), "round {round} {ty:?}: {s:?} vs {v:?}");
                let near = |x: f64, y: f64| {
                    x == y || (x - y).abs() <= 16.0 * f64::EPSILON * x.abs().max(y.abs())
                };
                assert!(
                    near(s.lo, v.lo) && near(s.hi, v.hi),
                    "round {round} {ty:?}: {s:?} vs {v:?}"
                );
                // Small enough to be summed exactly in f64 in any order.
                if terms
                    .iter()
                    .all(|x| x.abs() <= 1e3 && x.fract() * 4.0 == (x.fract() * 4.0).trunc())
                {
                    let exact = terms.iter().fold(0.0, |a, b| a + b);
                    assert!(
                        s.contains(exact) && v.contains(exact),
                        "round {round}: {exact}"
                    );
                }
            }
        }
    }

    #[test]
    fn sums_cover_every_order() {
        let p = FSet::point;
        // 1e8 + 1 - 1e8 in f32: 0 or 1 (or close) depending on the order.
        let s = sum(&[p(1e8), p(1.0), p(-1e8)], T::F32);
        assert!(s.contains(0.0) && s.contains(1.0), "{s:?}");
        // Exact small integers stay tight.
        let s = sum(&[p(1.0), p(2.0), p(3.0)], T::F32);
        assert!(s.contains(6.0) && !s.contains(6.01) && !s.contains(5.99));
        // Zeros keep their sign only when every term is -0.
        let s = sum(&[p(-0.0), p(-0.0)], T::F32);
        assert!(s.contains(-0.0) && !s.contains(0.0));
        let s = sum(&[p(-0.0), p(0.0)], T::F32);
        assert!(s.contains(0.0) && !s.contains(-0.0));
        // NaN is certain when a term is NaN.
        let s = sum(&[p(1.0), FSet::NAN], T::F32);
        assert!(s.only_nan());
        // Overflow of both signs: NaN possible, infinities possible, the finite value too.
        let s = sum(&[p(3e38), p(3e38), p(-3e38), p(-3e38)], T::F32);
        assert!(s.nan && s.contains(f64::INFINITY) && s.contains(f64::NEG_INFINITY));
        assert!(s.contains(0.0));
        // +inf and no -inf: +inf is certain.
        let s = sum(&[p(f64::INFINITY), p(-5.0)], T::F32);
        assert!(!s.nan && s.is_point() && s.lo == f64::INFINITY);
    }

    #[test]
    fn products_cover_overflow_meeting_zero() {
        let p = FSet::point;
        let mut a = ProdAcc::default();
        for t in [p(-4.3), p(-3.4e38), p(0.0), p(2.0)] {
            a.add(t);
        }
        let s = a.finish(accumulation(T::F32), accumulation(T::F32));
        assert!(s.nan && s.contains(0.0), "{s:?}");
        let mut a = ProdAcc::default();
        for t in [p(2.0), p(3.0), p(-0.5)] {
            a.add(t);
        }
        let s = a.finish(accumulation(T::F32), accumulation(T::F32));
        assert!(s.contains(-3.0) && !s.contains(3.0) && !s.nan, "{s:?}");
    }

    #[test]
    fn max_is_exact_and_propagates_nan() {
        let mut m = MaxAcc::new(true);
        for t in [FSet::point(1.0), FSet::point(5.0), FSet::range(2.0, 3.0)] {
            m.add(t);
        }
        let s = m.finish();
        assert!(s.is_point() && s.lo == 5.0);
        m.add(FSet::NAN);
        assert!(m.finish().only_nan());
    }
}

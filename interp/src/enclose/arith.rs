//! Float arithmetic on sets: IEEE add, subtract, multiply, divide, square root, remainder,
//! maximum, minimum and compare, each enclosing every result a legitimate implementation gives
//! for any operands in the sets.
//!
//! A set's numbers are the reals of `[lo, hi]`; an infinite bound means both the unbounded reals
//! on that side and the infinity itself (a type computed with excess precision holds reals
//! beyond its largest value). An op works on each operand's parts (-inf, the finite reals,
//! +inf), computes the exact real bounds of the finite part (TwoSum and FMA give the exact error
//! of each f64 bound) and rounds them to the element type: to nearest, as IEEE 754 rounds a
//! correctly rounded op; outward for a product (which XLA may contract with the add after it
//! into a fused multiply-add) and for types narrower than f32 (computed wider and maybe rounded
//! later), whose results lie between the outward bounds.

use super::format::Format;
use super::set::{le, tmax, tmin, FSet, ISet, Why};

/// An exact real value `r + e`: `e` is the error of `r` (only its sign is used: see
/// [`Format::down2`]); NaN for "either way", and `r = +-f64::MAX` with `e = +-1` for a finite
/// real beyond f64.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Ex {
    pub r: f64,
    pub e: f64,
}

impl Ex {
    pub fn exact(r: f64) -> Ex {
        Ex { r, e: 0.0 }
    }

    /// `r` computed with an error of either sign (a libm result, an underflowed product).
    pub fn inexact(r: f64) -> Ex {
        Ex { r, e: f64::NAN }
    }

    /// A finite real beyond f64 of the sign of `positive`.
    fn beyond(positive: bool) -> Ex {
        if positive {
            Ex {
                r: f64::MAX,
                e: 1.0,
            }
        } else {
            Ex {
                r: -f64::MAX,
                e: -1.0,
            }
        }
    }

    /// Total order of exact values (by `r`, then by the error's sign).
    fn le(self, o: Ex) -> bool {
        if self.r != o.r || (self.r == 0.0 && self.r.to_bits() != o.r.to_bits()) {
            return le(self.r, o.r);
        }
        let s = |e: f64| if e.is_nan() { 0.0 } else { e };
        s(self.e) <= s(o.e)
    }
}

/// `a + b` exactly (finite operands; unbounded ones give an unbounded result).
pub(crate) fn add_ex(a: f64, b: f64) -> Ex {
    let s = a + b;
    if s.is_infinite() && a.is_finite() && b.is_finite() {
        return Ex::beyond(s > 0.0);
    }
    if !s.is_finite() {
        return Ex::exact(s);
    }
    // TwoSum (Knuth).
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    Ex { r: s, e }
}

/// `a * b` exactly; `0 * unbounded` is a zero (a finite real times zero).
pub(crate) fn mul_ex(a: f64, b: f64) -> Ex {
    if (a == 0.0 && b.is_infinite()) || (b == 0.0 && a.is_infinite()) {
        let neg = a.is_sign_negative() != b.is_sign_negative();
        return Ex::exact(if neg { -0.0 } else { 0.0 });
    }
    let p = a * b;
    if p.is_infinite() && a.is_finite() && b.is_finite() {
        return Ex::beyond(p > 0.0);
    }
    if !p.is_finite() {
        return Ex::exact(p);
    }
    let e = a.mul_add(b, -p);
    if p.abs() < f64::MIN_POSITIVE && a != 0.0 && b != 0.0 {
        // The error of a product in f64's subnormal range is not exact.
        return Ex::inexact(p);
    }
    Ex { r: p, e }
}

/// `a / b` exactly (`b` a nonzero finite real, or unbounded); the remainder's sign tells the
/// error's.
pub(crate) fn div_ex(a: f64, b: f64) -> Ex {
    if b.is_infinite() {
        let neg = a.is_sign_negative() != b.is_sign_negative();
        if a.is_infinite() {
            // Unbounded over unbounded: any real of that sign.
            return Ex::exact(if neg {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            });
        }
        return Ex::exact(if neg { -0.0 } else { 0.0 });
    }
    let q = a / b;
    if q.is_infinite() && a.is_finite() {
        return Ex::beyond(q > 0.0);
    }
    if !q.is_finite() || q == 0.0 && a != 0.0 {
        return Ex::inexact(q);
    }
    let r = (-q).mul_add(b, a);
    if q.abs() < f64::MIN_POSITIVE {
        return Ex::inexact(q);
    }
    Ex {
        r: q,
        e: r * b.signum(),
    }
}

/// `sqrt(x)` exactly for `x >= 0`.
pub(crate) fn sqrt_ex(x: f64) -> Ex {
    let s = x.sqrt();
    if !s.is_finite() || s == 0.0 {
        return Ex::exact(s);
    }
    Ex {
        r: s,
        e: (-s).mul_add(s, x),
    }
}

/// The parts of a set: its negative infinity, the extent of its real pieces (bounds possibly
/// unbounded) and its positive infinity.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Parts {
    pub ninf: bool,
    pub fin: Option<(f64, f64)>,
    pub pinf: bool,
}

pub(crate) fn parts(s: &FSet) -> Parts {
    // An interval that holds its lone zeros is its own extent (the common case: no pieces to
    // build).
    let holds = |flag: bool, z: f64| !flag || (le(s.lo, z) && le(z, s.hi));
    if s.num && holds(s.nzero, -0.0) && holds(s.pzero, 0.0) {
        return Parts {
            ninf: s.ninf,
            fin: Some((s.lo, s.hi)),
            pinf: s.pinf,
        };
    }
    let r = s.reals();
    let fin = r
        .iter()
        .map(|x| x.0)
        .reduce(tmin)
        .zip(r.iter().map(|x| x.1).reduce(tmax));
    Parts {
        ninf: s.ninf,
        fin,
        pinf: s.pinf,
    }
}

fn is_inf(p: (f64, f64)) -> bool {
    p.0 == p.1 && p.0.is_infinite()
}

/// A result being built: the hull of the values added to it.
pub(crate) struct Out<'f> {
    pub fmt: &'f Format,
    pub set: FSet,
    /// Bounds rounded to nearest (`Format::nearest2`) instead of outward.
    nearest: bool,
}

impl<'f> Out<'f> {
    /// A result rounded to nearest, as IEEE 754 rounds every correctly rounded op: the nearest
    /// values of its real bounds. Types narrower than f32 round outward: XLA CPU computes them
    /// in f32 and may keep that value unrounded into the next op (excess precision), which
    /// only the outward bounds enclose.
    pub fn new(fmt: &'f Format) -> Out<'f> {
        Out {
            fmt,
            set: FSet::EMPTY,
            nearest: fmt.ty.bit_width() >= 32,
        }
    }

    /// A result rounded outward, which also encloses its unrounded real value: a product XLA
    /// may contract with the add after it into a fused multiply-add, a sum whose order and
    /// accumulation type are free.
    pub fn outward(fmt: &'f Format) -> Out<'f> {
        Out {
            fmt,
            set: FSet::EMPTY,
            nearest: false,
        }
    }

    /// An exact value, as the type holds it (a zero or an infinity the type lacks is NaN, a
    /// value between its neighbours either of them).
    pub fn value(&mut self, x: f64) {
        if x.is_nan() {
            return self.nan();
        }
        if x.is_infinite() && !self.fmt.has_inf {
            // NaN in the type, or the infinity of the wider type XLA kept it in.
            self.nan();
            self.set = self.set.hull(FSet::point(x).because(Why::ROUNDING));
            return;
        }
        if x.is_infinite() || self.fmt.holds(x) {
            self.set = self.set.hull(FSet::point(x));
        } else {
            self.range(Ex::exact(x), Ex::exact(x));
        }
    }

    pub fn nan(&mut self) {
        self.set = self.set.with_nan(true);
    }

    /// The reals between two exact values, rounded outward to the type.
    pub fn range(&mut self, lo: Ex, hi: Ex) {
        let (d, u) = if self.nearest {
            (
                self.fmt.nearest2(lo.r, lo.e, false),
                self.fmt.nearest2(hi.r, hi.e, true),
            )
        } else {
            (self.fmt.down2(lo.r, lo.e), self.fmt.up2(hi.r, hi.e))
        };
        if d.nan || u.nan {
            self.nan();
        }
        let (mut a, mut b) = (d.v, u.v);
        if a.is_nan() || b.is_nan() {
            return;
        }
        if !self.fmt.has_inf {
            // An overflow of a type without infinities is NaN, or a value of the wider type
            // (f16) XLA computed the op in and never narrowed (excess precision).
            let wide = super::format::format(hlo::PrimitiveType::F16).expect("f16");
            if u.nan && hi.r > self.fmt.max {
                b = b.max(wide.up2(hi.r, hi.e).v);
            }
            if d.nan && lo.r < -self.fmt.max {
                a = a.min(wide.down2(lo.r, lo.e).v);
            }
        }
        let r = FSet::range(a, b);
        let widened = lo.e != 0.0 || hi.e != 0.0 || lo.r != a || hi.r != b;
        self.set = self
            .set
            .hull(if widened { r.because(Why::ROUNDING) } else { r });
    }

    /// The range whose bounds are the least and greatest of `corners`.
    pub fn corners(&mut self, corners: &[Ex]) {
        let mut lo = corners[0];
        let mut hi = corners[0];
        for &c in &corners[1..] {
            if c.le(lo) {
                lo = c;
            }
            if hi.le(c) {
                hi = c;
            }
        }
        self.range(lo, hi);
    }

    pub fn done(self, why: Why) -> FSet {
        self.set.because(why)
    }
}

/// What an op may do with subnormals: read them as zero (`daz`: XLA CPU's denormals-are-zero
/// mode for bf16, f32 and f64 operands), flush subnormal results to zero (`ftz`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Subnormals {
    pub daz: bool,
    pub ftz: bool,
}

/// `s` with the zero of the same sign added wherever it holds subnormal numbers of `fmt`.
pub(crate) fn flush(fmt: &Format, s: FSet) -> FSet {
    if !s.num {
        return s;
    }
    // The largest f64 below the type's smallest normal magnitude.
    let below = fmt.min_normal.next_down_f64();
    let mut out = s;
    // Positive subnormals in the set: +0 joins it; negative ones: -0.
    if s.meets(5e-324, below) {
        out = out.hull(FSet::point(0.0));
    }
    if s.meets(-below, -5e-324) {
        out = out.hull(FSet::point(-0.0));
    }
    if out != s {
        out.why |= Why::FLUSH;
    }
    out
}

/// f64 helpers the standard library stabilized late.
pub(crate) trait F64Ext {
    fn next_down_f64(self) -> f64;
    fn next_up_f64(self) -> f64;
}

impl F64Ext for f64 {
    fn next_down_f64(self) -> f64 {
        if self.is_nan() || self == f64::NEG_INFINITY {
            return self;
        }
        if self == 0.0 {
            return -5e-324;
        }
        let b = self.to_bits();
        f64::from_bits(if self > 0.0 { b - 1 } else { b + 1 })
    }
    fn next_up_f64(self) -> f64 {
        -(-self).next_down_f64()
    }
}

/// The operand as an op that reads subnormals as zero sees it.
pub(crate) fn operand(fmt: &Format, s: FSet, sub: Subnormals) -> FSet {
    if sub.daz {
        flush(fmt, s)
    } else {
        s
    }
}

/// A result as the op leaves it: flushed where subnormal results may be.
pub(crate) fn result(fmt: &Format, s: FSet, sub: Subnormals) -> FSet {
    if sub.ftz {
        flush(fmt, s)
    } else {
        s
    }
}

/// The one finite value (a zero included) of a set that holds nothing else.
fn finite_point(s: &FSet) -> Option<f64> {
    (s.is_point() && s.lo.is_finite()).then_some(s.lo)
}

fn why2(a: &FSet, b: &FSet) -> Why {
    a.why | b.why
}

/// IEEE `a + b`, piece by piece.
pub(crate) fn add(fmt: &Format, a: FSet, b: FSet, sub: Subnormals) -> FSet {
    let (a, b) = (operand(fmt, a, sub), operand(fmt, b, sub));
    let mut out = Out::new(fmt);
    if a.nan || b.nan {
        out.nan();
    }
    for pa in a.pieces() {
        for pb in b.pieces() {
            match (is_inf(pa), is_inf(pb)) {
                (true, true) if pa.0 != pb.0 => out.nan(),
                (true, _) => out.value(pa.0),
                (_, true) => out.value(pb.0),
                _ => {
                    let (al, ah) = pa;
                    let (bl, bh) = pb;
                    let mut lo = add_ex(al, bl);
                    let mut hi = add_ex(ah, bh);
                    // An exact zero sum is -0 only when both addends are -0.
                    let neg0 = |x: f64| x.to_bits() == (-0.0f64).to_bits();
                    if lo.r == 0.0 && lo.e == 0.0 {
                        lo.r = if neg0(al) && neg0(bl) { -0.0 } else { 0.0 };
                    }
                    if hi.r == 0.0 && hi.e == 0.0 {
                        hi.r = if neg0(ah) && neg0(bh) { -0.0 } else { 0.0 };
                    }
                    out.range(lo, hi);
                }
            }
        }
    }
    result(fmt, out.done(why2(&a, &b)), sub)
}

/// `-s`: negate flips the sign bit, a NaN's included.
pub(crate) fn negate(s: FSet) -> FSet {
    FSet {
        lo: -s.hi,
        hi: -s.lo,
        nzero: s.pzero,
        pzero: s.nzero,
        ninf: s.pinf,
        pinf: s.ninf,
        nan_sign: s.nan_sign.map(|n| !n),
        ..s
    }
}

/// `|s|`: abs clears the sign bit, a NaN's included.
pub(crate) fn abs(s: FSet) -> FSet {
    let mut out = FSet::EMPTY;
    for (lo, hi) in s.pieces() {
        let p = if le(0.0, lo) {
            FSet::range(lo, hi)
        } else if le(hi, -0.0) {
            FSet::range(-hi, -lo)
        } else {
            FSet::range(0.0, hi.max(-lo))
        };
        out = out.hull(p);
    }
    FSet {
        nan: s.nan,
        nan_sign: s.nan.then_some(false),
        why: s.why,
        ..out
    }
}

/// IEEE `a - b`.
pub(crate) fn subtract(fmt: &Format, a: FSet, b: FSet, sub: Subnormals) -> FSet {
    add(fmt, a, negate(b), sub)
}

/// IEEE `a * b`, piece by piece.
pub(crate) fn multiply(fmt: &Format, a: FSet, b: FSet, sub: Subnormals) -> FSet {
    let (a, b) = (operand(fmt, a, sub), operand(fmt, b, sub));
    if let (Some(x), Some(y)) = (finite_point(&a), finite_point(&b)) {
        // One piece each, its four corners the same product (a dot's terms, mostly).
        let mut out = Out::outward(fmt);
        let c = mul_ex(x, y);
        out.range(c, c);
        return result(fmt, out.done(why2(&a, &b)), sub);
    }
    multiply_pieces(fmt, a, b, sub)
}

/// [`multiply`] of operands already read (`operand`), piece by piece.
fn multiply_pieces(fmt: &Format, a: FSet, b: FSet, sub: Subnormals) -> FSet {
    let mut out = Out::outward(fmt);
    if a.nan || b.nan {
        out.nan();
    }
    // inf * 0 is NaN; inf * x is an infinity of the sign of the product.
    let infinite = |out: &mut Out, inf: f64, p: (f64, f64)| {
        let (lo, hi) = p;
        if le(lo, 0.0) && le(-0.0, hi) {
            out.nan();
        }
        if lo < 0.0 {
            out.value(-inf);
        }
        if hi > 0.0 {
            out.value(inf);
        }
    };
    for pa in a.pieces() {
        for pb in b.pieces() {
            match (is_inf(pa), is_inf(pb)) {
                (true, true) => out.value(pa.0 * pb.0),
                (true, false) => infinite(&mut out, pa.0, pb),
                (false, true) => infinite(&mut out, pb.0, pa),
                _ => {
                    let (al, ah) = pa;
                    let (bl, bh) = pb;
                    let c = [
                        mul_ex(al, bl),
                        mul_ex(al, bh),
                        mul_ex(ah, bl),
                        mul_ex(ah, bh),
                    ];
                    out.corners(&c);
                }
            }
        }
    }
    result(fmt, out.done(why2(&a, &b)), sub)
}

/// IEEE `a / b`, piece by piece.
pub(crate) fn divide(fmt: &Format, a: FSet, b: FSet, sub: Subnormals) -> FSet {
    let (a, b) = (operand(fmt, a, sub), operand(fmt, b, sub));
    let mut out = Out::new(fmt);
    if a.nan || b.nan {
        out.nan();
    }
    let sign = |x: f64| x.is_sign_negative();
    for pa in a.pieces() {
        for pb in b.pieces() {
            let (al, ah) = pa;
            let (bl, bh) = pb;
            match (is_inf(pa), is_inf(pb)) {
                (true, true) => out.nan(),
                (true, false) => {
                    // inf / x: an infinity of the quotient's sign, the divisor's zeros included.
                    if le(bl, -0.0) {
                        out.value(-al);
                    }
                    if le(0.0, bh) {
                        out.value(al);
                    }
                }
                (false, true) => {
                    // x / inf: a zero of the quotient's sign.
                    if le(al, -0.0) {
                        out.value(if sign(bl) { 0.0 } else { -0.0 });
                    }
                    if le(0.0, ah) {
                        out.value(if sign(bl) { -0.0 } else { 0.0 });
                    }
                }
                _ => {
                    let num_zero = le(al, 0.0) && le(-0.0, ah);
                    let den_zero = le(bl, 0.0) && le(-0.0, bh);
                    if num_zero && den_zero {
                        out.nan();
                    }
                    if bl < 0.0 && bh > 0.0 {
                        // A divisor of both signs near zero: quotients of every size and sign.
                        out.value(f64::NEG_INFINITY);
                        out.value(f64::INFINITY);
                        out.range(Ex::exact(f64::NEG_INFINITY), Ex::exact(f64::INFINITY));
                        continue;
                    }
                    // 0 / 0 is NaN (flagged above): that corner bounds no number; x / +-0 is an
                    // infinity, which also bounds the quotients of a divisor ending at that zero.
                    let corner = |x: f64, y: f64| -> Option<Ex> {
                        if y == 0.0 {
                            if x == 0.0 {
                                return None;
                            }
                            let neg = sign(x) != sign(y);
                            return Some(Ex::exact(if neg {
                                f64::NEG_INFINITY
                            } else {
                                f64::INFINITY
                            }));
                        }
                        Some(div_ex(x, y))
                    };
                    let c: Vec<Ex> = [(al, bl), (al, bh), (ah, bl), (ah, bh)]
                        .into_iter()
                        .filter_map(|(x, y)| corner(x, y))
                        .collect();
                    if c.is_empty() {
                        continue;
                    }
                    // A quotient by a lone zero is an infinity alone, not the reals up to it.
                    if bl == 0.0 && bh == 0.0 && bl.to_bits() == bh.to_bits() {
                        for e in &c {
                            out.value(e.r);
                        }
                        continue;
                    }
                    out.corners(&c);
                }
            }
        }
    }
    result(fmt, out.done(why2(&a, &b)), sub)
}

/// IEEE `sqrt(x)` (correctly rounded; -0 stays -0; negatives are NaN), piece by piece.
pub(crate) fn sqrt(fmt: &Format, a: FSet, sub: Subnormals) -> FSet {
    let a = operand(fmt, a, sub);
    let mut out = Out::new(fmt);
    if a.nan {
        out.nan();
    }
    for (lo, hi) in a.pieces() {
        if lo < 0.0 {
            out.nan();
        }
        if !le(-0.0, hi) {
            continue;
        }
        let lo = tmax(lo, -0.0);
        let l = if lo == 0.0 {
            Ex::exact(lo)
        } else {
            sqrt_ex(lo)
        };
        out.range(l, sqrt_ex(hi));
    }
    result(fmt, out.done(a.why), sub)
}

/// IEEE `maximum`/`minimum` propagating NaN, piece by piece. Where a zero of each sign is
/// possible, either may be the result (the two compare equal).
pub(crate) fn max_min(a: FSet, b: FSet, max: bool) -> FSet {
    let why = a.why | b.why;
    let mut s = FSet::EMPTY.with_nan(a.nan || b.nan);
    for (al, ah) in a.pieces() {
        for (bl, bh) in b.pieces() {
            // Monotone in each operand, and the result is one of them: the extremes pair up.
            let (lo, hi) = if max {
                (tmax(al, bl), tmax(ah, bh))
            } else {
                (tmin(al, bl), tmin(ah, bh))
            };
            s = s.hull(FSet::range(lo, hi));
        }
    }
    let zeros = |x: &FSet| (x.contains(-0.0), x.contains(0.0));
    let (an, ap) = zeros(&a);
    let (bn, bp) = zeros(&b);
    if s.may_be_zero() && (an || bn) && (ap || bp) {
        s = s.hull(FSet::point(-0.0)).hull(FSet::point(0.0));
    }
    s.because(why)
}

/// The comparison directions of `compare`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dir {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Dir {
    pub fn parse(s: &str) -> Option<Dir> {
        Some(match s {
            "EQ" => Dir::Eq,
            "NE" => Dir::Ne,
            "LT" => Dir::Lt,
            "LE" => Dir::Le,
            "GT" => Dir::Gt,
            "GE" => Dir::Ge,
            _ => return None,
        })
    }

    /// The direction with the operands swapped.
    pub fn swapped(self) -> Dir {
        match self {
            Dir::Lt => Dir::Gt,
            Dir::Gt => Dir::Lt,
            Dir::Le => Dir::Ge,
            Dir::Ge => Dir::Le,
            d => d,
        }
    }
}

/// The outcomes (false, true) `compare(a, b)` may have over ordered values given as
/// `[alo, ahi]` and `[blo, bhi]` (`lt(x, y)`: x below y; `eq`: x equal y).
fn outcomes<T: Copy>(
    (alo, ahi): (T, T),
    (blo, bhi): (T, T),
    dir: Dir,
    lt: impl Fn(T, T) -> bool,
) -> (bool, bool) {
    let le = |x: T, y: T| !lt(y, x);
    // Some a below some b / some a above some b / some a equal to some b / not all equal.
    let can_lt = lt(alo, bhi);
    let can_gt = lt(blo, ahi);
    let can_eq = le(alo, bhi) && le(blo, ahi);
    let all_eq = !lt(alo, ahi) && !lt(blo, bhi) && !lt(alo, blo) && !lt(blo, alo);
    match dir {
        Dir::Eq => (!all_eq, can_eq),
        Dir::Ne => (can_eq, !all_eq),
        Dir::Lt => (can_gt || can_eq, can_lt),
        Dir::Le => (can_gt, can_lt || can_eq),
        Dir::Gt => (can_lt || can_eq, can_gt),
        Dir::Ge => (can_lt, can_gt || can_eq),
    }
}

/// The `pred` set of `compare(a, b)` on float sets: IEEE (zeros equal, NaN unordered), or
/// `TOTALORDER` (-0 below +0; a NaN's sign is free, so it may sort below or above anything).
pub(crate) fn compare(a: FSet, b: FSet, dir: Dir, total: bool) -> ISet {
    let why = a.why | b.why;
    let (mut f, mut t) = (false, false);
    let mut note = |(x, y): (bool, bool)| {
        f |= x;
        t |= y;
    };
    // Zeros compare equal under IEEE: a zero bound is 0.
    let z = |v: f64| if !total && v == 0.0 { 0.0 } else { v };
    let lt = |p: f64, q: f64| {
        if total {
            p.total_cmp(&q) == std::cmp::Ordering::Less
        } else {
            p < q
        }
    };
    // Under the total order -NaN sorts below everything and +NaN above; a NaN of unknown sign
    // may be either. (Other orders treat NaN as unordered, below.)
    let with_nans = |x: &FSet| -> super::set::Pieces {
        let mut v = x.pieces();
        if total && x.nan {
            if x.nan_sign != Some(false) {
                v.push((-f64::NAN, -f64::NAN));
            }
            if x.nan_sign != Some(true) {
                v.push((f64::NAN, f64::NAN));
            }
        }
        v
    };
    for (al, ah) in with_nans(&a) {
        for (bl, bh) in with_nans(&b) {
            note(outcomes((z(al), z(ah)), (z(bl), z(bh)), dir, lt));
        }
    }
    if !total && (a.nan || b.nan) {
        // Unordered: every direction but NE is false.
        if dir == Dir::Ne {
            t = true;
        } else {
            f = true;
        }
    }
    let s = ISet::range(if f { 0 } else { 1 }, if t { 1 } else { 0 });
    if f && t {
        s.because(why | Why::BRANCH)
    } else {
        s.because(why)
    }
}

/// The `pred` set of `compare(a, b)` on integer sets.
pub(crate) fn compare_int(a: ISet, b: ISet, dir: Dir) -> ISet {
    let (f, t) = outcomes((a.lo, a.hi), (b.lo, b.hi), dir, |p: i128, q: i128| p < q);
    let s = ISet::range(if f { 0 } else { 1 }, if t { 1 } else { 0 });
    let why = a.why | b.why;
    if f && t {
        s.because(why | Why::BRANCH)
    } else {
        s.because(why)
    }
}

/// IEEE `fmod(a, b)` (XLA's float `remainder`): exact where both are points; otherwise a bound
/// by the sign of `a` and the largest magnitude of `b`.
pub(crate) fn remainder(fmt: &Format, a: FSet, b: FSet, sub: Subnormals) -> FSet {
    let (a, b) = (operand(fmt, a, sub), operand(fmt, b, sub));
    let why = a.why | b.why;
    let mut out = Out::new(fmt);
    let pa = parts(&a);
    if a.nan || b.nan || pa.ninf || pa.pinf || b.may_be_zero() {
        out.nan();
    }
    if a.is_point() && b.is_point() {
        let r = a.lo % b.lo;
        if r.is_nan() {
            out.nan();
        } else {
            out.value(r);
        }
        return result(fmt, out.done(why), sub);
    }
    if let Some((al, ah)) = pa.fin {
        let bmax = b.max_abs();
        let bmin = b.min_abs();
        if bmin > 0.0 && al.abs().max(ah.abs()) < bmin {
            // |a| < |b|: fmod(a, b) is a itself.
            out.range(Ex::exact(al), Ex::exact(ah));
        } else {
            // The result has a's sign and is smaller than |a| and |b|: between 0 and a's far
            // end on each side of zero (never a's near end: fmod(2.5, 1.5) is 1).
            let lo = if le(al, -0.0) { tmax(-bmax, al) } else { 0.0 };
            let hi = if le(0.0, ah) { tmin(bmax, ah) } else { -0.0 };
            out.range(Ex::exact(lo), Ex::exact(hi));
            if le(al, -0.0) {
                out.value(-0.0);
            }
            if le(0.0, ah) {
                out.value(0.0);
            }
        }
    }
    result(fmt, out.done(why), sub)
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
    const FTZ: Subnormals = Subnormals {
        daz: true,
        ftz: true,
    };

    fn p(x: f64) -> FSet {
        FSet::point(x)
    }

    #[test]
    fn exact_points_stay_points() {
        let f = format(T::F32).unwrap();
        let s = add(f, p(1.0), p(2.0), NONE);
        assert!(s.is_point() && s.lo == 3.0, "{s:?}");
        let s = multiply(f, p(3.0), p(-0.5), NONE);
        assert!(s.is_point() && s.lo == -1.5);
        let s = divide(f, p(1.0), p(4.0), NONE);
        assert!(s.is_point() && s.lo == 0.25);
        // An inexact result of a correctly rounded op is the nearest value of a type of 32 bits
        // or more (IEEE 754 §4.3.1 roundTiesToEven)...
        let s = divide(f, p(1.0), p(3.0), NONE);
        assert!(s.is_point() && s.lo == (1.0f32 / 3.0) as f64, "{s:?}");
        // ...and either neighbour in a narrower type, which XLA may compute in f32 and round
        // twice (excess precision).
        let b = format(T::Bf16).unwrap();
        let s = divide(b, p(1.0), p(3.0), NONE);
        assert!(
            !s.is_point() && s.lo < 1.0 / 3.0 && 1.0 / 3.0 < s.hi,
            "{s:?}"
        );
        assert_eq!(b.next(s.lo), s.hi);
    }

    #[test]
    fn signs_of_zero_follow_ieee() {
        let f = format(T::F32).unwrap();
        let s = add(f, p(-0.0), p(-0.0), NONE);
        assert!(s.contains(-0.0) && !s.contains(0.0));
        let s = add(f, p(-0.0), p(0.0), NONE);
        assert!(s.contains(0.0) && !s.contains(-0.0));
        let s = add(f, p(5.0), p(-5.0), NONE);
        assert!(s.contains(0.0) && !s.contains(-0.0));
        let s = multiply(f, p(0.0), p(-3.0), NONE);
        assert!(s.contains(-0.0) && !s.contains(0.0));
        let s = divide(f, p(1.0), p(-0.0), NONE);
        assert!(s.contains(f64::NEG_INFINITY) && !s.nan && s.is_point());
    }

    #[test]
    fn infinities_and_nan() {
        let f = format(T::F32).unwrap();
        let inf = p(f64::INFINITY);
        let s = add(f, inf, p(f64::NEG_INFINITY), NONE);
        assert!(s.only_nan());
        let s = multiply(f, inf, FSet::range(-1.0, 1.0), NONE);
        assert!(s.nan && s.contains(f64::INFINITY) && s.contains(f64::NEG_INFINITY));
        let s = multiply(f, inf, p(2.0), NONE);
        assert!(!s.nan && s.is_point() && s.lo == f64::INFINITY);
        let s = divide(f, p(0.0), p(0.0), NONE);
        assert!(s.nan && !s.num);
        // Overflow: both the largest value and infinity (rounded up).
        let s = multiply(f, p(3e38), p(2.0), NONE);
        assert!(s.contains(f64::INFINITY) && s.contains(f32::MAX as f64) && !s.nan);
        // f16 computed in f32 (excess precision): 70000 is a real of the set.
        let h = format(T::F16).unwrap();
        let big = multiply(h, p(35000.0), p(2.0), NONE);
        let back = multiply(h, big, p(0.5), NONE);
        assert!(back.contains(35000.0), "{back:?}");
    }

    #[test]
    fn subnormals_flush_to_signed_zeros() {
        let f = format(T::F32).unwrap();
        let tiny = f32::from_bits(1) as f64;
        let s = multiply(f, p(tiny), p(0.5), FTZ);
        assert!(s.contains(0.0) && s.contains(tiny));
        let s = multiply(f, p(-tiny), p(3.0), FTZ);
        assert!(s.contains(-0.0) && !s.contains(0.0));
        // Without a subnormal, nothing changes.
        let s = multiply(f, p(1.0), p(2.0), FTZ);
        assert!(s.is_point());
        // A subnormal divisor read as zero.
        let s = divide(f, p(1.0), p(tiny), FTZ);
        assert!(s.contains(f64::INFINITY), "{s:?}");
    }

    #[test]
    fn compares_may_go_either_way() {
        let r = |lo, hi| FSet::range(lo, hi);
        let c = compare(r(0.0, 1.0), r(2.0, 3.0), Dir::Lt, false);
        assert_eq!((c.lo, c.hi), (1, 1));
        let c = compare(r(0.0, 2.5), r(2.0, 3.0), Dir::Lt, false);
        assert_eq!((c.lo, c.hi), (0, 1));
        assert!(c.why.has(Why::BRANCH));
        let c = compare(p(-0.0), p(0.0), Dir::Eq, false);
        assert_eq!((c.lo, c.hi), (1, 1));
        let c = compare(p(-0.0), p(0.0), Dir::Lt, true);
        assert_eq!((c.lo, c.hi), (1, 1));
        let c = compare(FSet::NAN, p(0.0), Dir::Ne, false);
        assert_eq!((c.lo, c.hi), (1, 1));
        let c = compare(FSet::NAN, p(0.0), Dir::Lt, true);
        assert_eq!((c.lo, c.hi), (0, 1));
        let c = compare_int(ISet::range(0, 5), ISet::point(5), Dir::Le);
        assert_eq!((c.lo, c.hi), (1, 1));
    }

    #[test]
    fn max_min_and_remainder() {
        let s = max_min(FSet::range(-1.0, 1.0), p(0.5), true);
        assert_eq!((s.lo, s.hi), (0.5, 1.0));
        let s = max_min(p(-0.0), p(0.0), true);
        assert!(s.contains(-0.0) && s.contains(0.0));
        let s = max_min(FSet::NAN, p(1.0), false);
        assert!(s.nan && !s.num);
        let f = format(T::F32).unwrap();
        let s = remainder(f, p(7.0), p(3.0), NONE);
        assert!(s.is_point() && s.lo == 1.0);
        let s = remainder(f, FSet::range(0.5, 1.5), p(3.0), NONE);
        assert_eq!((s.lo, s.hi), (0.5, 1.5));
        let s = sqrt(f, FSet::range(-1.0, 4.0), NONE);
        assert!(s.nan && s.contains(2.0) && s.contains(0.0));
    }

    #[test]
    fn a_product_of_two_points_is_the_product_piece_by_piece() {
        // The one-corner path of `multiply` against the general one, on values where products
        // are exact, round, overflow, underflow into subnormals or meet zeros.
        let mut xs = vec![
            0.0,
            1.0,
            1.5,
            3.0000001,
            0.1,
            std::f64::consts::PI,
            1e-300,
            1e300,
        ];
        for t in [T::F16, T::Bf16, T::F32, T::F64] {
            let f = format(t).unwrap();
            xs.extend([f.max, f.min_normal, f.smallest_positive(), f.max.sqrt()]);
        }
        let xs: Vec<f64> = xs.iter().flat_map(|&x| [x, -x]).collect();
        let mut checked = 0;
        for t in [T::F16, T::Bf16, T::F32, T::F64] {
            let f = format(t).unwrap();
            for sub in [NONE, FTZ] {
                for &x in &xs {
                    for &y in &xs {
                        let (a, b) = (p(x).because(Why::ORDER), p(y));
                        let fast = multiply(f, a, b, sub);
                        let general =
                            multiply_pieces(f, operand(f, a, sub), operand(f, b, sub), sub);
                        assert_eq!(fast, general, "{t:?} {x:e} * {y:e}, daz/ftz {}", sub.daz);
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 5000);
    }
}

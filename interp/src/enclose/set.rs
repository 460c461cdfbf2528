//! The sets an element may take: floats ([`FSet`]), integers and `pred` ([`ISet`]), complex
//! values ([`CSet`]), each with the freedoms that made it as wide as it is ([`Why`]).

use hlo::semantics::{Freedom, FreedomSet};
use std::cmp::Ordering;

/// A set's pieces (at most five, and the NaNs some callers add): kept inline, as sets are
/// split into pieces in every op of an enclosure.
pub type Pieces = smallvec::SmallVec<[(f64, f64); 8]>;

/// The freedoms that widened a set (bits of [`hlo::semantics::Freedom`]): what a report names as
/// "the freedom that bounds it", in the semantics table's one vocabulary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Why(pub u32);

impl Why {
    pub const NONE: Why = Why(0);
    /// Rounding to the element type at each op (or not, where XLA keeps excess precision).
    pub const ROUNDING: Why = Why::of(Freedom::Rounding);
    /// A narrow float computed wide and not rounded back.
    pub const EXCESS: Why = Why::of(Freedom::ExcessPrecision);
    /// A multiply and an add contracted into one FMA.
    pub const FMA: Why = Why::of(Freedom::FmaContraction);
    /// The order, blocking and tree shape a reduction, dot or convolution sums in.
    pub const ORDER: Why = Why::of(Freedom::SummationOrder);
    /// A reduction's init value inserted any number of times (XLA assumes it is an identity).
    pub const INIT: Why = Why::of(Freedom::InitMultiplicity);
    /// Subnormal inputs and results flushed to zero.
    pub const FLUSH: Why = Why::of(Freedom::FlushToZero);
    /// The ulps an approximated function may be off.
    pub const ULPS: Why = Why::of(Freedom::ApproximationUlps);
    /// A data-dependent op (compare, select, clamp, sort, ...) that may go either way.
    pub const BRANCH: Why = Why::of(Freedom::EitherOutcome);
    /// A partial result that may overflow (then meet an infinity or a zero).
    pub const OVERFLOW: Why = Why::of(Freedom::Overflow);
    /// The sign and payload of a NaN.
    pub const NAN_BITS: Why = Why::of(Freedom::NanBits);
    /// A complex infinity whose other part is unspecified.
    pub const COMPLEX_INF: Why = Why::of(Freedom::ComplexInfinity);
    /// An op the enclosure does not model: anything of the type.
    pub const UNMODELLED: Why = Why::of(Freedom::Unmodelled);
    /// An index (gather, dynamic-slice, scatter) that may take several values.
    pub const INDEX: Why = Why::of(Freedom::UncertainIndex);
    /// Results the texts leave implementation-defined (integer overflow, division by zero, a
    /// reducer that is not a monoid, ...).
    pub const UNDEFINED: Why = Why::of(Freedom::ImplementationDefined);
    /// Where a complex function's parts are accurate only relative to its modulus.
    pub const NORMWISE: Why = Why::of(Freedom::Normwise);
    /// The order scatter and select-and-scatter combine in, and ties of a selection.
    pub const COMBINATION: Why = Why::of(Freedom::CombinationOrder);
    /// A bound on a whole computation (fft, a decomposition).
    pub const ERROR_BOUND: Why = Why::of(Freedom::ErrorBound);

    pub const fn of(f: Freedom) -> Why {
        Why(f.bit())
    }

    /// The freedoms' names, in the semantics table's order.
    pub fn names(self) -> Vec<&'static str> {
        FreedomSet(self.0).names()
    }

    pub fn has(self, w: Why) -> bool {
        self.0 & w.0 != 0
    }
}

impl std::ops::BitOr for Why {
    type Output = Why;
    fn bitor(self, o: Why) -> Why {
        Why(self.0 | o.0)
    }
}

impl std::ops::BitOrAssign for Why {
    fn bitor_assign(&mut self, o: Why) {
        self.0 |= o.0;
    }
}

/// `a <= b` in IEEE's total order of non-NaN values (-0 below +0).
pub(crate) fn le(a: f64, b: f64) -> bool {
    a.total_cmp(&b) != Ordering::Greater
}

/// The lesser of two non-NaN values in total order.
pub(crate) fn tmin(a: f64, b: f64) -> f64 {
    if le(a, b) {
        a
    } else {
        b
    }
}

/// The greater of two non-NaN values in total order.
pub(crate) fn tmax(a: f64, b: f64) -> f64 {
    if le(a, b) {
        b
    } else {
        a
    }
}

/// The values a float element may take, as pieces: the reals of one interval `[lo, hi]` when
/// `num` (total order, so it can hold +0 without -0; an infinite bound means the reals are
/// unbounded on that side, as where XLA keeps a value wider than its type), the zeros `nzero`
/// and `pzero` and the infinities `ninf` and `pinf` as values of their own (so that a
/// subnormal flushed to zero, or a function's pole, does not fill the gap between them and the
/// interval), and NaN when `nan` (of the sign `nan_sign` when that is known).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FSet {
    pub lo: f64,
    pub hi: f64,
    pub num: bool,
    pub nzero: bool,
    pub pzero: bool,
    pub ninf: bool,
    pub pinf: bool,
    pub nan: bool,
    /// The sign a NaN of the set has when it is known (a NaN of the inputs, moved or negated);
    /// `None`: either (a NaN an operation makes has no specified sign).
    pub nan_sign: Option<bool>,
    pub why: Why,
}

impl FSet {
    /// Nothing (no value at all: the identity of [`FSet::hull`]).
    pub const EMPTY: FSet = FSet {
        lo: 0.0,
        hi: 0.0,
        num: false,
        nzero: false,
        pzero: false,
        ninf: false,
        pinf: false,
        nan: false,
        nan_sign: None,
        why: Why::NONE,
    };

    /// Only NaN (of either sign).
    pub const NAN: FSet = FSet {
        nan: true,
        ..FSet::EMPTY
    };

    /// Exactly `x` (a NaN with its sign; a zero or an infinity as a lone value).
    pub fn point(x: f64) -> FSet {
        if x.is_nan() {
            return FSet {
                nan_sign: Some(x.is_sign_negative()),
                ..FSet::NAN
            };
        }
        let lone = FSet {
            lo: x,
            hi: x,
            ..FSet::EMPTY
        };
        if x == 0.0 {
            return FSet {
                nzero: x.is_sign_negative(),
                pzero: !x.is_sign_negative(),
                ..lone
            };
        }
        if x.is_infinite() {
            return FSet {
                pinf: x > 0.0,
                ninf: x < 0.0,
                ..lone
            };
        }
        FSet { num: true, ..lone }
    }

    /// Any value, NaN included.
    pub fn top(why: Why) -> FSet {
        FSet {
            nan: true,
            why,
            ..FSet::range(f64::NEG_INFINITY, f64::INFINITY)
        }
    }

    /// The reals in `[lo, hi]` (no NaN); an infinite bound also holds that infinity; a range of
    /// one zero or one infinity is that lone value.
    pub fn range(lo: f64, hi: f64) -> FSet {
        if lo.is_nan() || hi.is_nan() {
            // A bound a rounding made NaN (a type without infinities or zeros): NaN.
            return FSet::NAN;
        }
        if lo.to_bits() == hi.to_bits() && (lo == 0.0 || lo.is_infinite()) {
            return FSet::point(lo);
        }
        FSet {
            lo,
            hi,
            num: true,
            ninf: lo == f64::NEG_INFINITY,
            pinf: hi == f64::INFINITY,
            ..FSet::EMPTY
        }
    }

    /// The set with a NaN an operation makes (of either sign) when `nan`.
    pub fn with_nan(mut self, nan: bool) -> FSet {
        if nan {
            self.nan = true;
            self.nan_sign = None;
        }
        self
    }

    pub fn because(mut self, w: Why) -> FSet {
        self.why |= w;
        self
    }

    fn lone_count(&self) -> u32 {
        self.nzero as u32 + self.pzero as u32 + self.ninf as u32 + self.pinf as u32
    }

    /// One exactly known value (a number, a zero or an infinity, not NaN): then `lo` is it.
    pub fn is_point(&self) -> bool {
        if self.nan {
            return false;
        }
        if self.num {
            self.lone_count() == 0 && self.lo.to_bits() == self.hi.to_bits()
        } else {
            self.lone_count() == 1
        }
    }

    /// The non-NaN values as closed pieces (total order): the interval (its infinite bounds
    /// are unbounded reals), each lone zero outside it, and each infinity (always a piece of its
    /// own, the value itself).
    pub fn pieces(&self) -> Pieces {
        let mut v = Pieces::new();
        if self.num {
            v.push((self.lo, self.hi));
        }
        for (flag, x) in [(self.nzero, -0.0), (self.pzero, 0.0)] {
            if flag && !(self.num && le(self.lo, x) && le(x, self.hi)) {
                v.push((x, x));
            }
        }
        if self.ninf {
            v.push((f64::NEG_INFINITY, f64::NEG_INFINITY));
        }
        if self.pinf {
            v.push((f64::INFINITY, f64::INFINITY));
        }
        v
    }

    /// The real pieces only (the interval and lone zeros), without the infinities.
    pub fn reals(&self) -> Pieces {
        let mut p = self.pieces();
        p.retain(|&mut (lo, hi)| !(lo == hi && lo.is_infinite()));
        p
    }

    /// The smallest set holding both.
    pub fn hull(self, o: FSet) -> FSet {
        let (lo, hi, num) = match (self.num, o.num) {
            (true, true) => (tmin(self.lo, o.lo), tmax(self.hi, o.hi), true),
            (true, false) => (self.lo, self.hi, true),
            (false, true) => (o.lo, o.hi, true),
            (false, false) => {
                // Lone values only: keep one's value in the bounds (see `is_point`).
                let v = if self.lone_count() > 0 { self.lo } else { o.lo };
                (v, v, false)
            }
        };
        let nan_sign = match (self.nan, o.nan) {
            (true, true) if self.nan_sign == o.nan_sign => self.nan_sign,
            (true, false) => self.nan_sign,
            (false, true) => o.nan_sign,
            _ => None,
        };
        FSet {
            lo,
            hi,
            num,
            nzero: self.nzero || o.nzero,
            pzero: self.pzero || o.pzero,
            ninf: self.ninf || o.ninf,
            pinf: self.pinf || o.pinf,
            nan: self.nan || o.nan,
            nan_sign,
            why: self.why | o.why,
        }
    }

    /// Whether `x` is one of the values (NaN: when NaN of its sign is).
    pub fn contains(&self, x: f64) -> bool {
        if x.is_nan() {
            return self.nan && self.nan_sign.is_none_or(|neg| neg == x.is_sign_negative());
        }
        let lone = match x {
            f64::INFINITY => self.pinf,
            f64::NEG_INFINITY => self.ninf,
            _ if x == 0.0 && x.is_sign_negative() => self.nzero,
            _ if x == 0.0 => self.pzero,
            _ => false,
        };
        lone || (self.num && le(self.lo, x) && le(x, self.hi))
    }

    /// Whether a value in `[a, b]` (total order, infinities included) may be one.
    pub fn meets(&self, a: f64, b: f64) -> bool {
        // The pieces without building them: a lone zero inside the interval meets `[a, b]` only
        // where the interval does.
        let hit = |lo: f64, hi: f64| le(lo, b) && le(a, hi);
        (self.num && hit(self.lo, self.hi))
            || (self.nzero && hit(-0.0, -0.0))
            || (self.pzero && hit(0.0, 0.0))
            || (self.ninf && hit(f64::NEG_INFINITY, f64::NEG_INFINITY))
            || (self.pinf && hit(f64::INFINITY, f64::INFINITY))
    }

    pub fn may_be_pos_inf(&self) -> bool {
        self.pinf
    }

    pub fn may_be_neg_inf(&self) -> bool {
        self.ninf
    }

    /// Whether a zero (of either sign) may be a value.
    pub fn may_be_zero(&self) -> bool {
        self.meets(-0.0, 0.0)
    }

    /// Whether every value is NaN (and there is one).
    pub fn only_nan(&self) -> bool {
        self.nan && !self.has_number()
    }

    /// Whether it holds a value that is not NaN.
    pub fn has_number(&self) -> bool {
        self.num || self.lone_count() > 0
    }

    /// The least and greatest non-NaN values in total order.
    pub fn extent(&self) -> Option<(f64, f64)> {
        let p = self.pieces();
        let lo = p.iter().map(|x| x.0).reduce(tmin)?;
        let hi = p.iter().map(|x| x.1).reduce(tmax)?;
        Some((lo, hi))
    }

    /// The largest magnitude of its values (0 when it has none).
    pub fn max_abs(&self) -> f64 {
        if self.ninf || self.pinf {
            return f64::INFINITY;
        }
        if self.num {
            self.lo.abs().max(self.hi.abs())
        } else {
            0.0
        }
    }

    /// The smallest magnitude of its values (0 when it may be a zero).
    pub fn min_abs(&self) -> f64 {
        if self.may_be_zero() {
            return 0.0;
        }
        self.pieces()
            .iter()
            .map(|&(lo, hi)| lo.abs().min(hi.abs()))
            .fold(f64::INFINITY, f64::min)
    }

    /// Every value between its least and greatest (the gaps between its pieces filled).
    pub fn convex(&self) -> FSet {
        let Some((lo, hi)) = self.extent() else {
            return *self;
        };
        FSet {
            nan: self.nan,
            nan_sign: self.nan_sign,
            why: self.why,
            ..FSet::range(lo, hi)
        }
    }

    /// Whether it holds no value at all.
    pub fn is_empty(&self) -> bool {
        !self.nan && !self.has_number()
    }
}

/// The values an integer or `pred` element may take: `lo..=hi` (`pred`: 0 and 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ISet {
    pub lo: i128,
    pub hi: i128,
    pub why: Why,
}

impl ISet {
    pub fn point(v: i128) -> ISet {
        ISet {
            lo: v,
            hi: v,
            why: Why::NONE,
        }
    }

    pub fn range(lo: i128, hi: i128) -> ISet {
        ISet {
            lo,
            hi,
            why: Why::NONE,
        }
    }

    pub fn because(mut self, w: Why) -> ISet {
        self.why |= w;
        self
    }

    /// An element whose behaviour the texts leave to the implementation (an integer overflow,
    /// a division by zero, a conversion out of range): any integer, not only a value of the
    /// type. The StableHLO spec makes the *behaviour* of such an op implementation-defined, and
    /// XLA shows it: it may compute a narrow integer in a wider type and never wrap it (s4/u4
    /// through float normalization's excess precision), so what reads the element later (a
    /// convert, a compare) sees a value past the type's range. `pred` keeps its two values.
    pub fn undefined(ty: hlo::PrimitiveType, why: Why) -> ISet {
        const ANY: i128 = 1 << 66;
        let (lo, hi) = match ty {
            hlo::PrimitiveType::Pred => (0, 1),
            _ => (-ANY, ANY),
        };
        ISet::range(lo, hi).because(why | Why::UNDEFINED)
    }

    pub fn is_point(&self) -> bool {
        self.lo == self.hi
    }

    pub fn hull(self, o: ISet) -> ISet {
        ISet {
            lo: self.lo.min(o.lo),
            hi: self.hi.max(o.hi),
            why: self.why | o.why,
        }
    }

    pub fn contains(&self, v: i128) -> bool {
        self.lo <= v && v <= self.hi
    }

    /// How many values it holds (saturating).
    pub fn count(&self) -> u128 {
        (self.hi - self.lo).max(0) as u128 + 1
    }
}

/// The values a complex element may take: each part in its set, and, when `inf`, any complex
/// infinity (a value with an infinite part, whatever its other part, NaN included: C leaves the
/// other part of an infinite result unspecified).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CSet {
    pub re: FSet,
    pub im: FSet,
    pub inf: bool,
}

impl CSet {
    pub fn point(re: f64, im: f64) -> CSet {
        CSet {
            re: FSet::point(re),
            im: FSet::point(im),
            inf: false,
        }
    }

    pub fn top(why: Why) -> CSet {
        CSet {
            re: FSet::top(why),
            im: FSet::top(why),
            inf: true,
        }
    }

    pub fn why(&self) -> Why {
        self.re.why | self.im.why
    }

    pub fn hull(self, o: CSet) -> CSet {
        CSet {
            re: self.re.hull(o.re),
            im: self.im.hull(o.im),
            inf: self.inf || o.inf,
        }
    }

    /// The set with `o`'s values too, when there is `o`.
    pub fn hull_opt(self, o: Option<CSet>) -> CSet {
        match o {
            Some(o) => self.hull(o),
            None => self,
        }
    }

    /// Whether `(re, im)` is a value of the set. A value with an infinite part is a complex
    /// infinity whose other part is unspecified (C99 Annex G; the judge's comparison treats such
    /// values as equal too): it is held when the set allows that part's infinity.
    pub fn contains(&self, re: f64, im: f64) -> bool {
        let infinity = (re.is_infinite() && self.re.contains(re))
            || (im.is_infinite() && self.im.contains(im));
        (self.inf && (re.is_infinite() || im.is_infinite()))
            || infinity
            || (self.re.contains(re) && self.im.contains(im))
    }

    pub fn is_point(&self) -> bool {
        !self.inf && self.re.is_point() && self.im.is_point()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sets of every shape: intervals with and without their zeros and infinities, lone zeros
    /// and infinities, NaN.
    fn shapes() -> Vec<FSet> {
        let base = [
            FSet::EMPTY,
            FSet::NAN,
            FSet::point(0.0),
            FSet::point(-0.0),
            FSet::point(2.5),
            FSet::point(-1e-310),
            FSet::point(f64::INFINITY),
            FSet::point(f64::NEG_INFINITY),
            FSet::range(1.0, 2.0),
            FSet::range(-3.0, -0.5),
            FSet::range(-1.0, 4.0),
            FSet::range(f64::NEG_INFINITY, -2.0),
            FSet::range(0.5, f64::INFINITY),
        ];
        let mut v = Vec::new();
        for a in base {
            for b in base {
                v.push(a.hull(b));
            }
        }
        v
    }

    /// `meets` and `max_abs` read the flags and bounds directly; they agree with the pieces.
    #[test]
    fn meets_and_max_abs_agree_with_the_pieces() {
        let probes = [
            (f64::NEG_INFINITY, f64::NEG_INFINITY),
            (-5.0, -2.5),
            (-0.0, -0.0),
            (-0.0, 0.0),
            (0.0, 0.0),
            (5e-324, 1e-300),
            (0.75, 1.5),
            (3.0, f64::INFINITY),
            (f64::INFINITY, f64::INFINITY),
        ];
        for s in shapes() {
            let pieces = s.pieces();
            for (a, b) in probes {
                let by_pieces = pieces.iter().any(|&(lo, hi)| le(lo, b) && le(a, hi));
                assert_eq!(s.meets(a, b), by_pieces, "{s:?} meets [{a}, {b}]");
            }
            let by_pieces = pieces
                .iter()
                .map(|&(lo, hi)| lo.abs().max(hi.abs()))
                .fold(0.0, f64::max);
            assert_eq!(s.max_abs(), by_pieces, "{s:?}");
        }
    }

    #[test]
    fn sets_tell_signed_zeros_and_nan_apart() {
        let z = FSet::point(0.0);
        assert!(z.contains(0.0) && !z.contains(-0.0) && !z.contains(f64::NAN));
        let both = FSet::point(-0.0).hull(z);
        assert!(both.contains(-0.0) && both.contains(0.0) && !both.contains(1e-300));
        // A lone zero and an interval keep the gap between them.
        let gap = FSet::point(0.0).hull(FSet::range(1.0, 2.0));
        assert!(gap.contains(0.0) && gap.contains(1.5) && !gap.contains(0.5));
        assert_eq!(gap.extent(), Some((0.0, 2.0)));
        let n = FSet::NAN.hull(FSet::point(2.0));
        assert!(n.contains(f64::NAN) && n.contains(2.0) && !n.contains(1.0));
        assert!(FSet::range(-1.0, 1.0).may_be_zero());
        assert!(!FSet::range(1.0, 2.0).may_be_zero());
        let c = CSet {
            inf: true,
            ..CSet::point(1.0, 2.0)
        };
        assert!(c.contains(f64::INFINITY, f64::NAN) && c.contains(1.0, 2.0));
        assert!(!c.contains(1.0, f64::NAN));
        assert_eq!(
            Why(Why::ORDER.0 | Why::ULPS.0).names(),
            vec!["summation order", "ulps of approximated functions"]
        );
    }
}

//! Float formats as sets of real numbers: rounding a real value down or up to the nearest value
//! of an element type, the type's largest finite value and smallest normal magnitude.
//!
//! Every value of every float type is exactly an f64, so a set bound is an f64. A real number that
//! is not an f64 is given as `r + e` (an f64 and the exact error of computing it, as TwoSum and
//! FMA give): [`Format::down2`] and [`Format::up2`] round that exact value.

use hlo::PrimitiveType;
use std::sync::OnceLock;

/// One float element type, as the enclosure rounds to it.
#[derive(Debug)]
pub(crate) struct Format {
    pub ty: PrimitiveType,
    /// Precision in bits, the implicit bit included (IEEE-like types).
    p: i32,
    /// The exponent of the smallest normal magnitude.
    emin: i32,
    /// The largest finite value.
    pub max: f64,
    /// The smallest positive normal value.
    pub min_normal: f64,
    /// The type has infinities (an overflow that has none is NaN).
    pub has_inf: bool,
    /// Every finite value, ascending (-0 before +0 where the type has -0): the f8 and f4 types,
    /// rounded by search instead of by exponent arithmetic.
    table: Option<Vec<f64>>,
    /// f32 and f64, which the hardware rounds to: rounding and neighbours by conversion and
    /// bit arithmetic (the results the exponent arithmetic gives, faster).
    native: Native,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Native {
    F32,
    F64,
    No,
}

/// `$name(x)`: the next `$t` above `x` (-0 and +0: the smallest positive; +inf and NaN stay).
macro_rules! next_up {
    ($name:ident, $t:ty) => {
        fn $name(x: $t) -> $t {
            if x.is_nan() || x == <$t>::INFINITY {
                return x;
            }
            if x == 0.0 {
                return <$t>::from_bits(1);
            }
            let b = x.to_bits();
            <$t>::from_bits(if x > 0.0 { b + 1 } else { b - 1 })
        }
    };
}
next_up!(f64_next_up, f64);
next_up!(f32_next_up, f32);

/// The format of float type `ty` (`None`: not a float type).
pub(crate) fn format(ty: PrimitiveType) -> Option<&'static Format> {
    use PrimitiveType as T;
    static F: OnceLock<Vec<Format>> = OnceLock::new();
    let all = F.get_or_init(|| {
        let mut v = vec![
            ieee(T::F64, 53, -1022, f64::MAX),
            ieee(T::F32, 24, -126, f32::MAX as f64),
            ieee(T::F16, 11, -14, 65504.0),
            ieee(T::Bf16, 8, -126, half::bf16::MAX.to_f64()),
        ];
        for ty in [
            T::F8E5M2,
            T::F8E4M3,
            T::F8E4M3FN,
            T::F8E4M3B11FNUZ,
            T::F8E3M4,
            T::F8E5M2FNUZ,
            T::F8E4M3FNUZ,
            T::F8E8M0FNU,
            T::F4E2M1FN,
        ] {
            v.push(micro(ty));
        }
        v
    });
    all.iter().find(|f| f.ty == ty)
}

fn ieee(ty: PrimitiveType, p: i32, emin: i32, max: f64) -> Format {
    Format {
        ty,
        p,
        emin,
        max,
        min_normal: 2f64.powi(emin),
        has_inf: true,
        table: None,
        native: match ty {
            PrimitiveType::F32 => Native::F32,
            PrimitiveType::F64 => Native::F64,
            _ => Native::No,
        },
    }
}

/// An f8/f4 type from its every bit pattern.
fn micro(ty: PrimitiveType) -> Format {
    let n = 1u32 << ty.bit_width();
    let mut vals: Vec<f64> = (0..n)
        .map(|b| hlo::literal::micro_to_f32(ty, b as u8) as f64)
        .filter(|v| v.is_finite())
        .collect();
    let has_inf = (0..n).any(|b| hlo::literal::micro_to_f32(ty, b as u8).is_infinite());
    vals.sort_by(f64::total_cmp);
    vals.dedup_by(|a, b| a.to_bits() == b.to_bits());
    let max = vals.last().copied().unwrap_or(0.0);
    let min_normal = vals
        .iter()
        .copied()
        .filter(|v| *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    Format {
        ty,
        p: 0,
        emin: 0,
        max,
        // XLA computes these types in f32, converting in software: only values that are f32
        // subnormals (f8e8m0fnu's 2^-127) can be read as zero by f32 arithmetic.
        min_normal: min_normal.max(f32::MIN_POSITIVE as f64),
        has_inf,
        table: Some(vals),
        native: Native::No,
    }
}

/// The exponent of `a > 0` (floor(log2 a)), subnormal f64 values included.
fn exponent_of(a: f64) -> i32 {
    let bits = a.to_bits();
    let be = ((bits >> 52) & 0x7ff) as i32;
    if be == 0 {
        let m = bits & ((1u64 << 52) - 1);
        -1074 + (63 - m.leading_zeros() as i32)
    } else {
        be - 1023
    }
}

/// `2^k` as an f64 (k within f64's range, subnormals included).
fn pow2(k: i32) -> f64 {
    if k >= -1022 {
        f64::from_bits(((k + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (k + 1074))
    }
}

/// What rounding a real value to a type gave: the value, and whether the type, lacking
/// infinities, overflowed to NaN instead.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Rounded {
    pub v: f64,
    pub nan: bool,
}

impl Format {
    /// The quantum (ulp) of values of this IEEE-like type in the binade of `a > 0`.
    fn quantum(&self, a: f64) -> f64 {
        pow2(exponent_of(a).max(self.emin) - (self.p - 1))
    }

    /// Whether `x` (finite or infinite) is a value of this type.
    pub fn holds(&self, x: f64) -> bool {
        if x.is_nan() {
            return false;
        }
        if x.is_infinite() {
            return self.has_inf;
        }
        self.down(x).v.to_bits() == x.to_bits()
    }

    /// The largest value of the type that is `<= x` (`x` an exact real value; zeros keep their
    /// sign). Below the most negative finite value: -inf, or NaN for a type without
    /// infinities.
    pub fn down(&self, x: f64) -> Rounded {
        self.round(x, false)
    }

    /// The smallest value of the type that is `>= x`.
    pub fn up(&self, x: f64) -> Rounded {
        self.round(x, true)
    }

    fn round(&self, x: f64, up: bool) -> Rounded {
        let ok = |v: f64| Rounded { v, nan: false };
        if x.is_nan() {
            return Rounded { v: x, nan: true };
        }
        if let Some(t) = &self.table {
            if t.first().is_some_and(|&v| v > 0.0) && x <= 0.0 {
                // A type of positive values only (f8e8m0fnu): zero and negatives are NaN.
                return Rounded {
                    v: f64::NAN,
                    nan: true,
                };
            }
            if x == 0.0 {
                // A type without -0 (the fnuz types) has one zero.
                let neg = t.iter().any(|v| v.to_bits() == (-0.0f64).to_bits());
                return ok(if neg { x } else { 0.0 });
            }
        }
        if x == 0.0 {
            return ok(x);
        }
        let over = |neg: bool| {
            if self.has_inf {
                ok(if neg {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                })
            } else {
                Rounded {
                    v: if neg { -self.max } else { self.max },
                    nan: true,
                }
            }
        };
        if x.is_infinite() {
            return if self.has_inf {
                ok(x)
            } else if (x > 0.0) == up {
                over(x < 0.0)
            } else {
                ok(if x > 0.0 { self.max } else { -self.max })
            };
        }
        if let Some(t) = &self.table {
            return match (up, t.binary_search_by(|v| v.total_cmp(&x))) {
                (_, Ok(k)) => ok(t[k]),
                (false, Err(0)) => over(true),
                (false, Err(k)) => ok(t[k - 1]),
                (true, Err(k)) if k == t.len() => over(false),
                (true, Err(k)) => ok(t[k]),
            };
        }
        match self.native {
            // Every finite f64 is a value.
            Native::F64 => return ok(x),
            Native::F32 => {
                // To nearest, then one step when that went the wrong way (an overflow to
                // infinity steps back to the largest value).
                let f = x as f32;
                let v = f as f64;
                return ok(if v == x || (v > x) == up {
                    v
                } else if up {
                    f32_next_up(f) as f64
                } else {
                    -f32_next_up(-f) as f64
                });
            }
            Native::No => {}
        }
        let a = x.abs();
        // Toward zero for a positive x rounded down or a negative x rounded up.
        let toward_zero = (x > 0.0) != up;
        if a > self.max {
            return if toward_zero {
                ok(self.max.copysign(x))
            } else {
                over(x < 0.0)
            };
        }
        let q = self.quantum(a);
        let m = a / q;
        let r = if toward_zero { m.floor() } else { m.ceil() } * q;
        if r > self.max {
            return over(x < 0.0);
        }
        ok(r.copysign(x))
    }

    /// `down` of the exact real value `r + e` (`e` the exact error of `r`, `|e|` at most half an
    /// ulp of `r` in f64).
    pub fn down2(&self, r: f64, e: f64) -> Rounded {
        let d = self.down(r);
        if e < 0.0 && d.v == r && !d.nan && r.is_finite() {
            return self.down(self.prev(r));
        }
        d
    }

    /// `up` of the exact real value `r + e`.
    pub fn up2(&self, r: f64, e: f64) -> Rounded {
        let u = self.up(r);
        if e > 0.0 && u.v == r && !u.nan && r.is_finite() {
            return self.up(self.next(r));
        }
        u
    }

    /// A bound of round-to-nearest of the exact real value `r + e`, where `r` is that value
    /// rounded to nearest in f64 and only the sign of `e` is read (as every producer of an
    /// `arith::Ex` makes it: TwoSum, FMA residues, a division's or square root's remainder).
    /// The nearer of the value's two neighbours in the type; at a tie the lower one for a lower
    /// bound (`upper` false) and the upper one for an upper bound. Round-to-nearest is
    /// monotone, so the nearest values of a range's ends bound the nearest value of every real
    /// in it, and every value of the type in it. Near an overflow (a neighbour infinite or
    /// NaN), or with `e` unknown (NaN), it is the outward neighbour.
    pub fn nearest2(&self, r: f64, e: f64, upper: bool) -> Rounded {
        let (d, u) = (self.down2(r, e), self.up2(r, e));
        let outward = if upper { u } else { d };
        if d.v.to_bits() == u.v.to_bits()
            || d.nan
            || u.nan
            || !d.v.is_finite()
            || !u.v.is_finite()
            || !r.is_finite()
            || e.is_nan()
        {
            return outward;
        }
        // `r` is a value of the type: the exact value lies within half an f64 ulp of it, far
        // nearer than the other neighbour (an f64 tie is already decided in `r`).
        if r == d.v {
            return d;
        }
        if r == u.v {
            return u;
        }
        let (below, above) = (r - d.v, u.v - r);
        if !(below > 0.0 && above > 0.0) {
            return outward;
        }
        if below < above || (below == above && e < 0.0) {
            d
        } else if above < below || (below == above && e > 0.0) {
            u
        } else {
            outward
        }
    }

    /// The next value of the type above the value `x` (as a real number: above -0 and +0 is the
    /// smallest positive value).
    pub fn next(&self, x: f64) -> f64 {
        if x.is_nan() || x == f64::INFINITY {
            return x;
        }
        if let Some(t) = &self.table {
            return t
                .iter()
                .copied()
                .find(|&v| v > x)
                .unwrap_or(if self.has_inf {
                    f64::INFINITY
                } else {
                    f64::NAN
                });
        }
        if x == f64::NEG_INFINITY {
            return -self.max;
        }
        match self.native {
            Native::F64 => return f64_next_up(x),
            Native::F32 if (x as f32) as f64 == x => return f32_next_up(x as f32) as f64,
            _ => {}
        }
        if x >= 0.0 {
            let n = x + self.quantum(if x == 0.0 { self.min_normal } else { x });
            return if n > self.max { f64::INFINITY } else { n };
        }
        -self.prev(-x)
    }

    /// The next value of the type below the value `x`.
    pub fn prev(&self, x: f64) -> f64 {
        if x.is_nan() || x == f64::NEG_INFINITY {
            return x;
        }
        if let Some(t) = &self.table {
            return t
                .iter()
                .rev()
                .copied()
                .find(|&v| v < x)
                .unwrap_or(if self.has_inf {
                    f64::NEG_INFINITY
                } else {
                    f64::NAN
                });
        }
        if x == f64::INFINITY {
            return self.max;
        }
        match self.native {
            Native::F64 => return -f64_next_up(-x),
            Native::F32 if (x as f32) as f64 == x => return -f32_next_up(-(x as f32)) as f64,
            _ => {}
        }
        if x <= 0.0 {
            return -self.next(-x);
        }
        // Just below a power of two the quantum halves (above the subnormal range).
        let q = self.quantum(x);
        let below = self.quantum(x - q / 2.0);
        x - q.min(below)
    }

    /// `x` moved `n` values of the type up (negative: down); infinities and NaN stay.
    pub fn step(&self, mut x: f64, n: i32) -> f64 {
        if !x.is_finite() {
            return x;
        }
        for _ in 0..n.unsigned_abs() {
            let y = if n > 0 { self.next(x) } else { self.prev(x) };
            if !y.is_finite() {
                // Never step into infinity: the largest finite value is the last.
                return if y.is_nan() {
                    x
                } else {
                    y.clamp(-self.max, self.max)
                };
            }
            x = y;
        }
        x
    }

    /// The unit roundoff (half the distance from 1 to the next value): the relative error of
    /// one rounding to nearest of a normal value.
    pub fn unit_roundoff(&self) -> f64 {
        if let Some(t) = &self.table {
            // The largest relative gap between neighbours among normal values, halved.
            let mut u: f64 = 0.0;
            for w in t.windows(2) {
                if w[0] >= self.min_normal {
                    u = u.max((w[1] - w[0]) / w[0] / 2.0);
                }
            }
            return u.max(f64::EPSILON);
        }
        pow2(-self.p)
    }

    /// Whether subnormal values of the type exist (f8 types with a table may have them too).
    pub fn smallest_positive(&self) -> f64 {
        match &self.table {
            Some(t) => t
                .iter()
                .copied()
                .find(|&v| v > 0.0)
                .unwrap_or(f64::MIN_POSITIVE),
            None => pow2(self.emin - (self.p - 1)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use PrimitiveType as T;

    #[test]
    fn rounds_to_the_neighbours_of_each_type() {
        let f = format(T::F32).unwrap();
        let x = 0.1f64;
        let (d, u) = (f.down(x).v, f.up(x).v);
        assert!(d < x && x < u);
        assert_eq!(d as f32 as f64, d);
        assert_eq!(f.next(d), u);
        assert_eq!(f.prev(u), d);
        assert_eq!(f.down(1.0).v, 1.0);
        assert_eq!(f.prev(1.0), 1.0 - f32::EPSILON as f64 / 2.0);
        assert_eq!(f.next(1.0), 1.0 + f32::EPSILON as f64);
        assert_eq!(f.up(1e39).v, f64::INFINITY);
        assert_eq!(f.down(1e39).v, f32::MAX as f64);
        assert_eq!(f.down(-1e39).v, f64::NEG_INFINITY);
        // Subnormals.
        let tiny = f32::from_bits(1) as f64;
        assert_eq!(f.up(tiny / 3.0).v, tiny);
        assert_eq!(f.down(tiny / 3.0).v, 0.0);
        assert_eq!(f.next(0.0), tiny);
        assert_eq!(f.prev(0.0), -tiny);
        // Exact values and their error terms.
        assert_eq!(f.down2(1.0, -1e-30).v, f.prev(1.0));
        assert_eq!(f.up2(1.0, 1e-30).v, f.next(1.0));
        assert_eq!(f.down2(1.0, 1e-30).v, 1.0);
        let g = format(T::F64).unwrap();
        assert_eq!(g.down2(1.0, -1e-30).v, 1.0 - f64::EPSILON / 2.0);
        assert_eq!(g.up(0.1).v, 0.1);
    }

    #[test]
    fn half_and_micro_types_round_by_their_own_grid() {
        let h = format(T::F16).unwrap();
        assert_eq!(h.down(65519.0).v, 65504.0);
        assert_eq!(h.up(65505.0).v, f64::INFINITY);
        assert_eq!(h.next(1.0), 1.0 + 2f64.powi(-10));
        let b = format(T::Bf16).unwrap();
        assert_eq!(b.next(1.0), 1.0 + 2f64.powi(-7));
        let e4 = format(T::F8E4M3FN).unwrap();
        assert_eq!(e4.max, 448.0);
        assert!(!e4.has_inf);
        let r = e4.up(500.0);
        assert!(r.nan, "an overflow of a type without infinities is NaN");
        assert_eq!(e4.down(500.0).v, 448.0);
        assert_eq!(e4.up(0.3).v, 0.3125);
        assert_eq!(e4.down(0.3).v, 0.28125);
        let e5 = format(T::F8E5M2).unwrap();
        assert!(e5.has_inf);
        assert_eq!(e5.up(60000.0).v, f64::INFINITY);
        for t in [T::F16, T::Bf16, T::F32] {
            let f = format(t).unwrap();
            assert!(f.holds(f.max) && f.holds(-f.min_normal) && !f.holds(0.1));
        }
    }

    /// f32 and f64 round and step by conversion and bits; the exponent arithmetic every other
    /// IEEE-like type uses gives the same values, for values of every size (subnormal, near
    /// the largest, past it) and both signs.
    #[test]
    fn native_rounding_agrees_with_the_exponent_arithmetic() {
        for t in [T::F32, T::F64] {
            let native = format(t).unwrap();
            let generic = Format {
                native: Native::No,
                table: None,
                ..*native
            };
            let mut state = 0x9e37_79b9_7f4a_7c15u64;
            let mut xs = vec![0.1, 1.0, 3.0, native.max, native.min_normal, 1e-45, 1e-320];
            for _ in 0..20_000 {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let x = f64::from_bits(state >> 1);
                if x.is_finite() {
                    // Spread over f32's range too, not only f64's.
                    xs.push(x);
                    xs.push(x * 2f64.powi(-((state % 1100) as i32)));
                    xs.push((x as f32) as f64);
                }
            }
            xs.push(native.max * 1.0000001);
            for x in xs {
                for x in [x, -x] {
                    for up in [false, true] {
                        let (a, b) = (native.round(x, up), generic.round(x, up));
                        assert_eq!(
                            (a.v.to_bits(), a.nan),
                            (b.v.to_bits(), b.nan),
                            "{t:?} round({x:e}, up={up})"
                        );
                    }
                    let v = native.down(x).v;
                    if v.is_finite() {
                        assert_eq!(
                            native.next(v).to_bits(),
                            generic.next(v).to_bits(),
                            "{t:?} next({v:e})"
                        );
                        assert_eq!(
                            native.prev(v).to_bits(),
                            generic.prev(v).to_bits(),
                            "{t:?} prev({v:e})"
                        );
                    }
                }
            }
        }
    }
}

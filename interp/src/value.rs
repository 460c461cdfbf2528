//! Runtime values: typed buffers (one `Vec` per element type), arrays, tuples and tokens, and their
//! conversion to and from [`hlo::Literal`].

use crate::EvalError;
use half::{bf16, f16};
use hlo::{ArrayLiteral, Literal, PrimitiveType};
use microfloat::{
    f4e2m1fn, f8e3m4, f8e4m3, f8e4m3b11fnuz, f8e4m3fn, f8e4m3fnuz, f8e5m2, f8e5m2fnuz, f8e8m0fnu,
};
use num_complex::{Complex32, Complex64};
use std::sync::Arc;

/// Calls macro `$m` with every [`Buffer`] variant name, so per-variant dispatch is written once.
macro_rules! with_all_variants {
    ($m:ident) => {
        $m!(
            Pred,
            S8,
            S16,
            S32,
            S64,
            U8,
            U16,
            U32,
            U64,
            F16,
            Bf16,
            F32,
            F64,
            F8E5M2,
            F8E4M3,
            F8E4M3FN,
            F8E4M3B11FNUZ,
            F8E3M4,
            F8E5M2FNUZ,
            F8E4M3FNUZ,
            F8E8M0FNU,
            F4E2M1FN,
            C64,
            C128
        )
    };
}

/// Elements of one array, one `Vec` per storage type. Sub-byte integers are stored widened
/// (s1/s2/s4 in `i8`, u1/u2/u4 in `u8`), always normalized (sign-extended or masked).
#[derive(Clone, Debug, PartialEq)]
pub enum Buffer {
    Pred(Vec<bool>),
    S8(Vec<i8>),
    S16(Vec<i16>),
    S32(Vec<i32>),
    S64(Vec<i64>),
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    F16(Vec<f16>),
    Bf16(Vec<bf16>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    F8E5M2(Vec<f8e5m2>),
    F8E4M3(Vec<f8e4m3>),
    F8E4M3FN(Vec<f8e4m3fn>),
    F8E4M3B11FNUZ(Vec<f8e4m3b11fnuz>),
    F8E3M4(Vec<f8e3m4>),
    F8E5M2FNUZ(Vec<f8e5m2fnuz>),
    F8E4M3FNUZ(Vec<f8e4m3fnuz>),
    F8E8M0FNU(Vec<f8e8m0fnu>),
    F4E2M1FN(Vec<f4e2m1fn>),
    C64(Vec<Complex32>),
    C128(Vec<Complex64>),
}

/// Applies `$e` (generic over the element type, with `$v` bound to the `Vec`) to any buffer,
/// rebuilding the same variant.
#[macro_export]
macro_rules! map_buf {
    ($buf:expr, $v:ident => $e:expr) => {{
        use $crate::value::Buffer as B;
        match $buf {
            B::Pred($v) => B::Pred($e),
            B::S8($v) => B::S8($e),
            B::S16($v) => B::S16($e),
            B::S32($v) => B::S32($e),
            B::S64($v) => B::S64($e),
            B::U8($v) => B::U8($e),
            B::U16($v) => B::U16($e),
            B::U32($v) => B::U32($e),
            B::U64($v) => B::U64($e),
            B::F16($v) => B::F16($e),
            B::Bf16($v) => B::Bf16($e),
            B::F32($v) => B::F32($e),
            B::F64($v) => B::F64($e),
            B::F8E5M2($v) => B::F8E5M2($e),
            B::F8E4M3($v) => B::F8E4M3($e),
            B::F8E4M3FN($v) => B::F8E4M3FN($e),
            B::F8E4M3B11FNUZ($v) => B::F8E4M3B11FNUZ($e),
            B::F8E3M4($v) => B::F8E3M4($e),
            B::F8E5M2FNUZ($v) => B::F8E5M2FNUZ($e),
            B::F8E4M3FNUZ($v) => B::F8E4M3FNUZ($e),
            B::F8E8M0FNU($v) => B::F8E8M0FNU($e),
            B::F4E2M1FN($v) => B::F4E2M1FN($e),
            B::C64($v) => B::C64($e),
            B::C128($v) => B::C128($e),
        }
    }};
}

/// Like [`map_buf!`] over two buffers of the same variant; `$else` when the variants differ.
#[macro_export]
macro_rules! map_buf2 {
    ($a:expr, $b:expr, $x:ident, $y:ident => $e:expr, $else:expr) => {{
        use $crate::value::Buffer as B;
        match ($a, $b) {
            (B::Pred($x), B::Pred($y)) => B::Pred($e),
            (B::S8($x), B::S8($y)) => B::S8($e),
            (B::S16($x), B::S16($y)) => B::S16($e),
            (B::S32($x), B::S32($y)) => B::S32($e),
            (B::S64($x), B::S64($y)) => B::S64($e),
            (B::U8($x), B::U8($y)) => B::U8($e),
            (B::U16($x), B::U16($y)) => B::U16($e),
            (B::U32($x), B::U32($y)) => B::U32($e),
            (B::U64($x), B::U64($y)) => B::U64($e),
            (B::F16($x), B::F16($y)) => B::F16($e),
            (B::Bf16($x), B::Bf16($y)) => B::Bf16($e),
            (B::F32($x), B::F32($y)) => B::F32($e),
            (B::F64($x), B::F64($y)) => B::F64($e),
            (B::F8E5M2($x), B::F8E5M2($y)) => B::F8E5M2($e),
            (B::F8E4M3($x), B::F8E4M3($y)) => B::F8E4M3($e),
            (B::F8E4M3FN($x), B::F8E4M3FN($y)) => B::F8E4M3FN($e),
            (B::F8E4M3B11FNUZ($x), B::F8E4M3B11FNUZ($y)) => B::F8E4M3B11FNUZ($e),
            (B::F8E3M4($x), B::F8E3M4($y)) => B::F8E3M4($e),
            (B::F8E5M2FNUZ($x), B::F8E5M2FNUZ($y)) => B::F8E5M2FNUZ($e),
            (B::F8E4M3FNUZ($x), B::F8E4M3FNUZ($y)) => B::F8E4M3FNUZ($e),
            (B::F8E8M0FNU($x), B::F8E8M0FNU($y)) => B::F8E8M0FNU($e),
            (B::F4E2M1FN($x), B::F4E2M1FN($y)) => B::F4E2M1FN($e),
            (B::C64($x), B::C64($y)) => B::C64($e),
            (B::C128($x), B::C128($y)) => B::C128($e),
            _ => $else,
        }
    }};
}

/// Evaluates `$e` (generic over the element type) for any buffer, returning its value.
#[macro_export]
macro_rules! with_buf {
    ($buf:expr, $v:ident => $e:expr) => {{
        use $crate::value::Buffer as B;
        match $buf {
            B::Pred($v) => $e,
            B::S8($v) => $e,
            B::S16($v) => $e,
            B::S32($v) => $e,
            B::S64($v) => $e,
            B::U8($v) => $e,
            B::U16($v) => $e,
            B::U32($v) => $e,
            B::U64($v) => $e,
            B::F16($v) => $e,
            B::Bf16($v) => $e,
            B::F32($v) => $e,
            B::F64($v) => $e,
            B::F8E5M2($v) => $e,
            B::F8E4M3($v) => $e,
            B::F8E4M3FN($v) => $e,
            B::F8E4M3B11FNUZ($v) => $e,
            B::F8E3M4($v) => $e,
            B::F8E5M2FNUZ($v) => $e,
            B::F8E4M3FNUZ($v) => $e,
            B::F8E8M0FNU($v) => $e,
            B::F4E2M1FN($v) => $e,
            B::C64($v) => $e,
            B::C128($v) => $e,
        }
    }};
}

/// Dispatches over the float buffers (`$v: &Vec<T>` with `T: FloatElem`), rebuilding the variant;
/// other buffers go to `$else`.
#[macro_export]
macro_rules! map_float_buf {
    ($buf:expr, $v:ident => $e:expr, $else:expr) => {{
        use $crate::value::Buffer as B;
        match $buf {
            B::F16($v) => B::F16($e),
            B::Bf16($v) => B::Bf16($e),
            B::F32($v) => B::F32($e),
            B::F64($v) => B::F64($e),
            B::F8E5M2($v) => B::F8E5M2($e),
            B::F8E4M3($v) => B::F8E4M3($e),
            B::F8E4M3FN($v) => B::F8E4M3FN($e),
            B::F8E4M3B11FNUZ($v) => B::F8E4M3B11FNUZ($e),
            B::F8E3M4($v) => B::F8E3M4($e),
            B::F8E5M2FNUZ($v) => B::F8E5M2FNUZ($e),
            B::F8E4M3FNUZ($v) => B::F8E4M3FNUZ($e),
            B::F8E8M0FNU($v) => B::F8E8M0FNU($e),
            B::F4E2M1FN($v) => B::F4E2M1FN($e),
            #[allow(unreachable_patterns)]
            _ => $else,
        }
    }};
}

/// Dispatches over integer buffers (`$v: &Vec<T>` with `T: IntElem`), rebuilding the variant.
#[macro_export]
macro_rules! map_int_buf {
    ($buf:expr, $v:ident => $e:expr, $else:expr) => {{
        use $crate::value::Buffer as B;
        match $buf {
            B::S8($v) => B::S8($e),
            B::S16($v) => B::S16($e),
            B::S32($v) => B::S32($e),
            B::S64($v) => B::S64($e),
            B::U8($v) => B::U8($e),
            B::U16($v) => B::U16($e),
            B::U32($v) => B::U32($e),
            B::U64($v) => B::U64($e),
            #[allow(unreachable_patterns)]
            _ => $else,
        }
    }};
}

/// Correctly rounds `x` (round to nearest even) to a binary float format with `man` explicit
/// mantissa bits whose smallest normal exponent is `emin` (subnormals kept). The exponent range is
/// not bounded above: callers decide what overflow means.
pub fn round_to_precision(x: f64, emin: i32, man: u32) -> f64 {
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    let a = x.abs();
    let e = exponent_of(a);
    let q = e.max(emin) - man as i32;
    let r = (scale2(a, -q)).round_ties_even();
    let v = scale2(r, q);
    if x < 0.0 {
        -v
    } else {
        v
    }
}

/// floor(log2(a)) for a finite positive f64 (subnormals included).
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

/// a * 2^k exactly (when representable), in steps that cannot overflow the exponent early.
fn scale2(mut a: f64, mut k: i32) -> f64 {
    while k > 1000 {
        a *= pow2(1000);
        k -= 1000;
    }
    while k < -1000 {
        a *= pow2(-1000);
        k += 1000;
    }
    a * pow2(k)
}

/// 2^k for a normal exponent (|k| <= 1000 here), built from its bits: exact, as `powi` is, and
/// without its loop (roundings to narrow types call this for every element).
fn pow2(k: i32) -> f64 {
    debug_assert!((-1022..=1023).contains(&k));
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// An IEEE-style rounding to a format with infinities (`emax` its largest exponent).
fn round_ieee(x: f64, emin: i32, emax: i32, man: u32) -> f64 {
    let r = round_to_precision(x, emin, man);
    let max = scale2(2.0 - scale2(1.0, -(man as i32)), emax);
    if r.abs() > max {
        if r < 0.0 {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        }
    } else {
        r
    }
}

/// The bits of NaN `v` narrowed to a float with `exp` exponent and `man` mantissa bits, as the
/// CPU's conversions narrow them: the sign and the top mantissa bits kept, the quiet bit set.
/// An f16 NaN an operation passes through keeps its payload, as on XLA CPU.
fn nan_bits(v: f64, exp: u32, man: u32) -> u64 {
    let b = v.to_bits();
    let sign = b >> 63;
    let payload = ((b >> (52 - man)) & ((1 << man) - 1)) | (1 << (man - 1));
    (sign << (exp + man)) | (((1 << exp) - 1) << man) | payload
}

/// Float element types: values widen exactly to f64; `from_f64` rounds once to nearest even.
pub trait FloatElem: Copy + Send + Sync + 'static {
    fn to_f64(self) -> f64;
    fn from_f64(v: f64) -> Self;
}

impl FloatElem for f32 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v as f32
    }
}
impl FloatElem for f64 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v
    }
}
impl FloatElem for f16 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        f16::to_f64(self)
    }
    #[inline]
    fn from_f64(v: f64) -> Self {
        if v.is_nan() {
            return f16::from_bits(nan_bits(v, 5, 10) as u16);
        }
        // Exactly representable after rounding, so half's conversion is exact.
        f16::from_f64(round_ieee(v, -14, 15, 10))
    }
}
impl FloatElem for bf16 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        bf16::to_f64(self)
    }
    #[inline]
    fn from_f64(v: f64) -> Self {
        if v.is_nan() {
            // XLA CPU rounds f32 to bf16 in code of its own, which makes every NaN the quiet
            // one of its sign.
            return if v.is_sign_negative() {
                -bf16::NAN
            } else {
                bf16::NAN
            };
        }
        bf16::from_f64(round_ieee(v, -126, 127, 7))
    }
}

/// Micro floats: round once to the format's precision (exponent range unbounded above), then let
/// microfloat (modelled on ml_dtypes) apply the format's overflow rule to the exact value.
macro_rules! micro_float_elem {
    ($t:ty, $emin:expr, $man:expr) => {
        impl FloatElem for $t {
            #[inline(always)]
            fn to_f64(self) -> f64 {
                <$t>::to_f64(self)
            }
            #[inline]
            fn from_f64(v: f64) -> Self {
                if $man == 0 {
                    return <$t>::from_f32(v as f32);
                }
                let r = round_to_precision(v, $emin, $man);
                let r32 = if r.abs() > f32::MAX as f64 {
                    if r < 0.0 {
                        f32::NEG_INFINITY
                    } else {
                        f32::INFINITY
                    }
                } else {
                    r as f32
                };
                <$t>::from_f32(r32)
            }
        }
    };
}
micro_float_elem!(f8e5m2, -14, 2);
micro_float_elem!(f8e4m3, -6, 3);
micro_float_elem!(f8e4m3fn, -6, 3);
micro_float_elem!(f8e4m3b11fnuz, -10, 3);
micro_float_elem!(f8e3m4, -2, 4);
micro_float_elem!(f8e5m2fnuz, -15, 2);
micro_float_elem!(f8e4m3fnuz, -7, 3);
micro_float_elem!(f8e8m0fnu, -127, 0);
micro_float_elem!(f4e2m1fn, 0, 1);

/// Integer storage types. `to_i64` sign- or zero-extends; `from_i64` truncates.
pub trait IntElem: Copy + Send + Sync + 'static {
    fn to_i64(self) -> i64;
    fn from_i64(v: i64) -> Self;
}
macro_rules! int_elem {
    ($($t:ty),*) => {$(
        impl IntElem for $t {
            #[inline(always)]
            fn to_i64(self) -> i64 { self as i64 }
            #[inline(always)]
            fn from_i64(v: i64) -> Self { v as $t }
        }
    )*};
}
int_elem!(i8, i16, i32, i64, u8, u16, u32, u64);

/// Complex storage types, widened to `Complex64`.
pub trait ComplexElem: Copy + Send + Sync + 'static {
    fn to_c(self) -> Complex64;
    fn from_c(v: Complex64) -> Self;
}
impl ComplexElem for Complex32 {
    #[inline(always)]
    fn to_c(self) -> Complex64 {
        Complex64::new(self.re as f64, self.im as f64)
    }
    #[inline(always)]
    fn from_c(v: Complex64) -> Self {
        Complex32::new(v.re as f32, v.im as f32)
    }
}
impl ComplexElem for Complex64 {
    #[inline(always)]
    fn to_c(self) -> Complex64 {
        self
    }
    #[inline(always)]
    fn from_c(v: Complex64) -> Self {
        v
    }
}

/// Wraps an integer result to `bits` bits (sign-extending when `signed`).
#[inline(always)]
pub fn wrap_int(v: i64, bits: u32, signed: bool) -> i64 {
    if bits >= 64 {
        v
    } else if signed {
        let s = 64 - bits;
        (v << s) >> s
    } else {
        v & ((1i64 << bits) - 1)
    }
}

/// An array value: element type, dimensions (row-major) and elements.
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    pub ty: PrimitiveType,
    pub dims: Vec<usize>,
    pub buf: Buffer,
}

/// A runtime value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Array(Arc<Array>),
    Tuple(Vec<Value>),
    Token,
}

pub fn product(dims: &[usize]) -> usize {
    dims.iter().product()
}

/// Row-major strides.
pub fn strides(dims: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * dims[i + 1];
    }
    s
}

/// Calls `f(index, linear)` for every multi-index of `dims` in row-major order.
pub fn for_each_index(dims: &[usize], mut f: impl FnMut(&[usize], usize)) {
    let n = product(dims);
    if n == 0 {
        return;
    }
    let mut idx = vec![0usize; dims.len()];
    for lin in 0..n {
        f(&idx, lin);
        for d in (0..dims.len()).rev() {
            idx[d] += 1;
            if idx[d] < dims[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

impl Buffer {
    pub fn len(&self) -> usize {
        with_buf!(self, v => v.len())
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A buffer of `n` zeros of storage type for `ty`.
    pub fn zeros(ty: PrimitiveType, n: usize) -> Result<Buffer, EvalError> {
        use PrimitiveType as P;
        Ok(match ty {
            P::Pred => Buffer::Pred(vec![false; n]),
            P::S1 | P::S2 | P::S4 | P::S8 => Buffer::S8(vec![0; n]),
            P::S16 => Buffer::S16(vec![0; n]),
            P::S32 => Buffer::S32(vec![0; n]),
            P::S64 => Buffer::S64(vec![0; n]),
            P::U1 | P::U2 | P::U4 | P::U8 => Buffer::U8(vec![0; n]),
            P::U16 => Buffer::U16(vec![0; n]),
            P::U32 => Buffer::U32(vec![0; n]),
            P::U64 => Buffer::U64(vec![0; n]),
            P::F16 => Buffer::F16(vec![f16::ZERO; n]),
            P::Bf16 => Buffer::Bf16(vec![bf16::ZERO; n]),
            P::F32 => Buffer::F32(vec![0.0; n]),
            P::F64 => Buffer::F64(vec![0.0; n]),
            P::F8E5M2 => Buffer::F8E5M2(vec![f8e5m2::from_bits(0); n]),
            P::F8E4M3 => Buffer::F8E4M3(vec![f8e4m3::from_bits(0); n]),
            P::F8E4M3FN => Buffer::F8E4M3FN(vec![f8e4m3fn::from_bits(0); n]),
            P::F8E4M3B11FNUZ => Buffer::F8E4M3B11FNUZ(vec![f8e4m3b11fnuz::from_bits(0); n]),
            P::F8E3M4 => Buffer::F8E3M4(vec![f8e3m4::from_bits(0); n]),
            P::F8E5M2FNUZ => Buffer::F8E5M2FNUZ(vec![f8e5m2fnuz::from_bits(0); n]),
            P::F8E4M3FNUZ => Buffer::F8E4M3FNUZ(vec![f8e4m3fnuz::from_bits(0); n]),
            // e8m0 has no zero: bits 0 are 2^-127, its smallest value.
            P::F8E8M0FNU => Buffer::F8E8M0FNU(vec![f8e8m0fnu::from_bits(0); n]),
            P::F4E2M1FN => Buffer::F4E2M1FN(vec![f4e2m1fn::from_bits(0); n]),
            P::C64 => Buffer::C64(vec![Complex32::new(0.0, 0.0); n]),
            P::C128 => Buffer::C128(vec![Complex64::new(0.0, 0.0); n]),
            P::Token | P::Opaque => {
                return Err(EvalError::Unsupported {
                    what: format!("array of element type {ty}"),
                })
            }
        })
    }

    /// Elements at the given positions (every position must be in range).
    pub fn take(&self, idx: &[usize]) -> Buffer {
        map_buf!(self, v => idx.iter().map(|&i| v[i]).collect())
    }

    /// Elements at the given positions, or `fill`'s first element where the position is `None`.
    pub fn take_or(&self, idx: &[Option<usize>], fill: &Buffer) -> Buffer {
        map_buf2!(self, fill, v, f => {
            let f0 = f[0];
            idx.iter().map(|i| match i { Some(i) => v[*i], None => f0 }).collect()
        }, unreachable!("take_or: fill of another type"))
    }

    /// Repeats element `i` `n` times.
    pub fn splat(&self, i: usize, n: usize) -> Buffer {
        map_buf!(self, v => vec![v[i]; n])
    }

    /// Concatenation of buffers of one variant (`None` when variants differ).
    pub fn concat(parts: &[&Buffer]) -> Option<Buffer> {
        let first = parts.first()?;
        let total: usize = parts.iter().map(|p| p.len()).sum();
        let mut out = map_buf!(*first, _v => Vec::with_capacity(total));
        for p in parts {
            if !out.extend_from(p) {
                return None;
            }
        }
        Some(out)
    }

    /// Appends all of `src` (same variant) to `self`.
    pub fn extend_from(&mut self, src: &Buffer) -> bool {
        macro_rules! go {
            ($($var:ident),*) => {
                match (self, src) {
                    $((Buffer::$var(a), Buffer::$var(b)) => { a.extend_from_slice(b); true })*
                    _ => false,
                }
            };
        }
        with_all_variants!(go)
    }

    /// `self[i] = src[j]` (same variant).
    pub fn set_from(&mut self, i: usize, src: &Buffer, j: usize) -> bool {
        macro_rules! go {
            ($($var:ident),*) => {
                match (self, src) {
                    $((Buffer::$var(a), Buffer::$var(b)) => { a[i] = b[j]; true })*
                    _ => false,
                }
            };
        }
        with_all_variants!(go)
    }

    /// Copies `src[i]` into `self[dst[i]]` for every i.
    pub fn scatter_from(&mut self, dst: &[usize], src: &Buffer) -> bool {
        macro_rules! go {
            ($($var:ident),*) => {
                match (self, src) {
                    $((Buffer::$var(a), Buffer::$var(b)) => {
                        for (k, &d) in dst.iter().enumerate() { a[d] = b[k]; }
                        true
                    })*
                    _ => false,
                }
            };
        }
        with_all_variants!(go)
    }
}

impl Array {
    pub fn new(ty: PrimitiveType, dims: Vec<usize>, buf: Buffer) -> Array {
        Array { ty, dims, buf }
    }
    pub fn len(&self) -> usize {
        self.buf.len()
    }
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
    pub fn zeros(ty: PrimitiveType, dims: Vec<usize>) -> Result<Array, EvalError> {
        let n = product(&dims);
        Ok(Array {
            ty,
            buf: Buffer::zeros(ty, n)?,
            dims,
        })
    }

    /// Element `i` as i64 (integers, pred; floats truncated). For index operands.
    pub fn get_i64(&self, i: usize) -> i64 {
        match &self.buf {
            Buffer::Pred(v) => v[i] as i64,
            Buffer::S8(v) => v[i] as i64,
            Buffer::S16(v) => v[i] as i64,
            Buffer::S32(v) => v[i] as i64,
            Buffer::S64(v) => v[i],
            Buffer::U8(v) => v[i] as i64,
            Buffer::U16(v) => v[i] as i64,
            Buffer::U32(v) => v[i] as i64,
            // Large unsigned indices: saturate so that clamping still works.
            Buffer::U64(v) => v[i].min(i64::MAX as u64) as i64,
            b => with_float_f64(b, i).map(|f| f as i64).unwrap_or(0),
        }
    }

    /// Element `i` of a pred array.
    pub fn get_bool(&self, i: usize) -> bool {
        match &self.buf {
            Buffer::Pred(v) => v[i],
            _ => self.get_i64(i) != 0,
        }
    }

    /// Size in bytes as a literal would hold it.
    pub fn byte_size(&self) -> usize {
        self.len() * self.ty.byte_size().max(1)
    }
}

fn with_float_f64(b: &Buffer, i: usize) -> Option<f64> {
    let mut out = None;
    let _ =
        map_float_buf!(b, v => { out = Some(v[i].to_f64()); Vec::new() }, Buffer::Pred(Vec::new()));
    out
}

impl Value {
    pub fn array(a: Array) -> Value {
        Value::Array(Arc::new(a))
    }
    pub fn as_array(&self) -> Option<&Array> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
    /// Total bytes held (arrays counted once per reference).
    pub fn byte_size(&self) -> usize {
        match self {
            Value::Array(a) => a.byte_size(),
            Value::Tuple(t) => t.iter().map(Value::byte_size).sum(),
            Value::Token => 0,
        }
    }

    pub fn from_literal(lit: &Literal) -> Result<Value, EvalError> {
        Ok(match lit {
            Literal::Array(a) => Value::array(array_from_literal(a)?),
            Literal::Tuple(t) => Value::Tuple(
                t.iter()
                    .map(Value::from_literal)
                    .collect::<Result<_, _>>()?,
            ),
            Literal::Token => Value::Token,
        })
    }

    pub fn to_literal(&self) -> Literal {
        match self {
            Value::Array(a) => Literal::Array(array_to_literal(a)),
            Value::Tuple(t) => Literal::Tuple(t.iter().map(Value::to_literal).collect()),
            Value::Token => Literal::Token,
        }
    }
}

fn bad_literal(why: String) -> EvalError {
    EvalError::Invalid {
        instr: "<argument>".into(),
        why,
    }
}

/// Decodes a literal's little-endian bytes into a typed array.
pub fn array_from_literal(a: &ArrayLiteral) -> Result<Array, EvalError> {
    let mut dims = Vec::with_capacity(a.dims.len());
    for &d in &a.dims {
        if d < 0 {
            return Err(bad_literal(format!("negative dimension {d}")));
        }
        dims.push(d as usize);
    }
    let n = dims
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| bad_literal("element count overflows".into()))?;
    let w = a.ty.byte_size();
    if w == 0 || n.checked_mul(w) != Some(a.data.len()) {
        return Err(bad_literal(format!(
            "{}[{:?}] literal has {} bytes of data",
            a.ty,
            a.dims,
            a.data.len()
        )));
    }
    let d = &a.data;
    use PrimitiveType as P;
    macro_rules! le {
        ($t:ty, $n:expr) => {
            d.chunks_exact($n)
                .map(|c| <$t>::from_le_bytes(c.try_into().unwrap()))
                .collect()
        };
    }
    let bits = a.ty.bit_width();
    let buf = match a.ty {
        P::Pred => Buffer::Pred(d.iter().map(|&b| b != 0).collect()),
        P::S1 | P::S2 | P::S4 => Buffer::S8(
            d.iter()
                .map(|&b| wrap_int(b as i64, bits, true) as i8)
                .collect(),
        ),
        P::S8 => Buffer::S8(d.iter().map(|&b| b as i8).collect()),
        P::S16 => Buffer::S16(le!(i16, 2)),
        P::S32 => Buffer::S32(le!(i32, 4)),
        P::S64 => Buffer::S64(le!(i64, 8)),
        P::U1 | P::U2 | P::U4 => Buffer::U8(
            d.iter()
                .map(|&b| wrap_int(b as i64, bits, false) as u8)
                .collect(),
        ),
        P::U8 => Buffer::U8(d.clone()),
        P::U16 => Buffer::U16(le!(u16, 2)),
        P::U32 => Buffer::U32(le!(u32, 4)),
        P::U64 => Buffer::U64(le!(u64, 8)),
        P::F16 => Buffer::F16(
            d.chunks_exact(2)
                .map(|c| f16::from_le_bytes([c[0], c[1]]))
                .collect(),
        ),
        P::Bf16 => Buffer::Bf16(
            d.chunks_exact(2)
                .map(|c| bf16::from_le_bytes([c[0], c[1]]))
                .collect(),
        ),
        P::F32 => Buffer::F32(le!(f32, 4)),
        P::F64 => Buffer::F64(le!(f64, 8)),
        P::F8E5M2 => Buffer::F8E5M2(d.iter().map(|&b| f8e5m2::from_bits(b)).collect()),
        P::F8E4M3 => Buffer::F8E4M3(d.iter().map(|&b| f8e4m3::from_bits(b)).collect()),
        P::F8E4M3FN => Buffer::F8E4M3FN(d.iter().map(|&b| f8e4m3fn::from_bits(b)).collect()),
        P::F8E4M3B11FNUZ => {
            Buffer::F8E4M3B11FNUZ(d.iter().map(|&b| f8e4m3b11fnuz::from_bits(b)).collect())
        }
        P::F8E3M4 => Buffer::F8E3M4(d.iter().map(|&b| f8e3m4::from_bits(b)).collect()),
        P::F8E5M2FNUZ => Buffer::F8E5M2FNUZ(d.iter().map(|&b| f8e5m2fnuz::from_bits(b)).collect()),
        P::F8E4M3FNUZ => Buffer::F8E4M3FNUZ(d.iter().map(|&b| f8e4m3fnuz::from_bits(b)).collect()),
        P::F8E8M0FNU => Buffer::F8E8M0FNU(d.iter().map(|&b| f8e8m0fnu::from_bits(b)).collect()),
        P::F4E2M1FN => Buffer::F4E2M1FN(d.iter().map(|&b| f4e2m1fn::from_bits(b & 0x0f)).collect()),
        P::C64 => Buffer::C64(
            d.chunks_exact(8)
                .map(|c| {
                    Complex32::new(
                        f32::from_le_bytes(c[0..4].try_into().unwrap()),
                        f32::from_le_bytes(c[4..8].try_into().unwrap()),
                    )
                })
                .collect(),
        ),
        P::C128 => Buffer::C128(
            d.chunks_exact(16)
                .map(|c| {
                    Complex64::new(
                        f64::from_le_bytes(c[0..8].try_into().unwrap()),
                        f64::from_le_bytes(c[8..16].try_into().unwrap()),
                    )
                })
                .collect(),
        ),
        P::Token | P::Opaque => return Err(bad_literal(format!("array of {}", a.ty))),
    };
    Ok(Array {
        ty: a.ty,
        dims,
        buf,
    })
}

/// Encodes an array as a literal (little-endian, row-major; sub-byte types one byte each).
pub fn array_to_literal(a: &Array) -> ArrayLiteral {
    let mut data = Vec::with_capacity(a.byte_size());
    match &a.buf {
        Buffer::Pred(v) => data.extend(v.iter().map(|&b| b as u8)),
        Buffer::S8(v) => data.extend(v.iter().map(|&x| x as u8)),
        Buffer::S16(v) => v
            .iter()
            .for_each(|x| data.extend_from_slice(&x.to_le_bytes())),
        Buffer::S32(v) => v
            .iter()
            .for_each(|x| data.extend_from_slice(&x.to_le_bytes())),
        Buffer::S64(v) => v
            .iter()
            .for_each(|x| data.extend_from_slice(&x.to_le_bytes())),
        Buffer::U8(v) => data.extend_from_slice(v),
        Buffer::U16(v) => v
            .iter()
            .for_each(|x| data.extend_from_slice(&x.to_le_bytes())),
        Buffer::U32(v) => v
            .iter()
            .for_each(|x| data.extend_from_slice(&x.to_le_bytes())),
        Buffer::U64(v) => v
            .iter()
            .for_each(|x| data.extend_from_slice(&x.to_le_bytes())),
        Buffer::F16(v) => v
            .iter()
            .for_each(|x| data.extend_from_slice(&x.to_le_bytes())),
        Buffer::Bf16(v) => v
            .iter()
            .for_each(|x| data.extend_from_slice(&x.to_le_bytes())),
        Buffer::F32(v) => v
            .iter()
            .for_each(|x| data.extend_from_slice(&x.to_le_bytes())),
        Buffer::F64(v) => v
            .iter()
            .for_each(|x| data.extend_from_slice(&x.to_le_bytes())),
        Buffer::F8E5M2(v) => data.extend(v.iter().map(|x| x.to_bits())),
        Buffer::F8E4M3(v) => data.extend(v.iter().map(|x| x.to_bits())),
        Buffer::F8E4M3FN(v) => data.extend(v.iter().map(|x| x.to_bits())),
        Buffer::F8E4M3B11FNUZ(v) => data.extend(v.iter().map(|x| x.to_bits())),
        Buffer::F8E3M4(v) => data.extend(v.iter().map(|x| x.to_bits())),
        Buffer::F8E5M2FNUZ(v) => data.extend(v.iter().map(|x| x.to_bits())),
        Buffer::F8E4M3FNUZ(v) => data.extend(v.iter().map(|x| x.to_bits())),
        Buffer::F8E8M0FNU(v) => data.extend(v.iter().map(|x| x.to_bits())),
        Buffer::F4E2M1FN(v) => data.extend(v.iter().map(|x| x.to_bits() & 0x0f)),
        Buffer::C64(v) => v.iter().for_each(|x| {
            data.extend_from_slice(&x.re.to_le_bytes());
            data.extend_from_slice(&x.im.to_le_bytes());
        }),
        Buffer::C128(v) => v.iter().for_each(|x| {
            data.extend_from_slice(&x.re.to_le_bytes());
            data.extend_from_slice(&x.im.to_le_bytes());
        }),
    }
    ArrayLiteral {
        ty: a.ty,
        dims: a.dims.iter().map(|&d| d as i64).collect(),
        data,
    }
}

/// Raw bits of every element, zero-extended (for bitcast-convert and total-order keys).
pub fn to_bits(buf: &Buffer) -> Vec<u128> {
    match buf {
        Buffer::Pred(v) => v.iter().map(|&b| b as u128).collect(),
        Buffer::S8(v) => v.iter().map(|&x| x as u8 as u128).collect(),
        Buffer::S16(v) => v.iter().map(|&x| x as u16 as u128).collect(),
        Buffer::S32(v) => v.iter().map(|&x| x as u32 as u128).collect(),
        Buffer::S64(v) => v.iter().map(|&x| x as u64 as u128).collect(),
        Buffer::U8(v) => v.iter().map(|&x| x as u128).collect(),
        Buffer::U16(v) => v.iter().map(|&x| x as u128).collect(),
        Buffer::U32(v) => v.iter().map(|&x| x as u128).collect(),
        Buffer::U64(v) => v.iter().map(|&x| x as u128).collect(),
        Buffer::F16(v) => v.iter().map(|x| x.to_bits() as u128).collect(),
        Buffer::Bf16(v) => v.iter().map(|x| x.to_bits() as u128).collect(),
        Buffer::F32(v) => v.iter().map(|x| x.to_bits() as u128).collect(),
        Buffer::F64(v) => v.iter().map(|x| x.to_bits() as u128).collect(),
        Buffer::C64(v) => v
            .iter()
            .map(|x| x.re.to_bits() as u128 | (x.im.to_bits() as u128) << 32)
            .collect(),
        Buffer::C128(v) => v
            .iter()
            .map(|x| x.re.to_bits() as u128 | (x.im.to_bits() as u128) << 64)
            .collect(),
        Buffer::F8E5M2(v) => v.iter().map(|x| x.to_bits() as u128).collect(),
        Buffer::F8E4M3(v) => v.iter().map(|x| x.to_bits() as u128).collect(),
        Buffer::F8E4M3FN(v) => v.iter().map(|x| x.to_bits() as u128).collect(),
        Buffer::F8E4M3B11FNUZ(v) => v.iter().map(|x| x.to_bits() as u128).collect(),
        Buffer::F8E3M4(v) => v.iter().map(|x| x.to_bits() as u128).collect(),
        Buffer::F8E5M2FNUZ(v) => v.iter().map(|x| x.to_bits() as u128).collect(),
        Buffer::F8E4M3FNUZ(v) => v.iter().map(|x| x.to_bits() as u128).collect(),
        Buffer::F8E8M0FNU(v) => v.iter().map(|x| x.to_bits() as u128).collect(),
        Buffer::F4E2M1FN(v) => v.iter().map(|x| (x.to_bits() & 0xf) as u128).collect(),
    }
}

/// Builds a buffer of `ty` from raw bits (the low `bit_width` bits of each value).
pub fn from_bits(ty: PrimitiveType, bits: &[u128]) -> Result<Buffer, EvalError> {
    let w = ty.bit_width();
    let mut bytes = Vec::with_capacity(bits.len() * ty.byte_size());
    for &b in bits {
        let b = if w >= 128 { b } else { b & ((1u128 << w) - 1) };
        bytes.extend_from_slice(&b.to_le_bytes()[..ty.byte_size()]);
    }
    let lit = ArrayLiteral {
        ty,
        dims: vec![bits.len() as i64],
        data: bytes,
    };
    Ok(array_from_literal(&lit)?.buf)
}

/// Like [`map_float_buf!`] over two buffers of the same float variant.
#[macro_export]
macro_rules! map_float_buf2 {
    ($a:expr, $b:expr, $x:ident, $y:ident => $e:expr, $else:expr) => {{
        use $crate::value::Buffer as B;
        match ($a, $b) {
            (B::F16($x), B::F16($y)) => B::F16($e),
            (B::Bf16($x), B::Bf16($y)) => B::Bf16($e),
            (B::F32($x), B::F32($y)) => B::F32($e),
            (B::F64($x), B::F64($y)) => B::F64($e),
            (B::F8E5M2($x), B::F8E5M2($y)) => B::F8E5M2($e),
            (B::F8E4M3($x), B::F8E4M3($y)) => B::F8E4M3($e),
            (B::F8E4M3FN($x), B::F8E4M3FN($y)) => B::F8E4M3FN($e),
            (B::F8E4M3B11FNUZ($x), B::F8E4M3B11FNUZ($y)) => B::F8E4M3B11FNUZ($e),
            (B::F8E3M4($x), B::F8E3M4($y)) => B::F8E3M4($e),
            (B::F8E5M2FNUZ($x), B::F8E5M2FNUZ($y)) => B::F8E5M2FNUZ($e),
            (B::F8E4M3FNUZ($x), B::F8E4M3FNUZ($y)) => B::F8E4M3FNUZ($e),
            (B::F8E8M0FNU($x), B::F8E8M0FNU($y)) => B::F8E8M0FNU($e),
            (B::F4E2M1FN($x), B::F4E2M1FN($y)) => B::F4E2M1FN($e),
            #[allow(unreachable_patterns)]
            _ => $else,
        }
    }};
}

/// Like [`map_int_buf!`] over two buffers of the same integer variant.
#[macro_export]
macro_rules! map_int_buf2 {
    ($a:expr, $b:expr, $x:ident, $y:ident => $e:expr, $else:expr) => {{
        use $crate::value::Buffer as B;
        match ($a, $b) {
            (B::S8($x), B::S8($y)) => B::S8($e),
            (B::S16($x), B::S16($y)) => B::S16($e),
            (B::S32($x), B::S32($y)) => B::S32($e),
            (B::S64($x), B::S64($y)) => B::S64($e),
            (B::U8($x), B::U8($y)) => B::U8($e),
            (B::U16($x), B::U16($y)) => B::U16($e),
            (B::U32($x), B::U32($y)) => B::U32($e),
            (B::U64($x), B::U64($y)) => B::U64($e),
            #[allow(unreachable_patterns)]
            _ => $else,
        }
    }};
}

#[cfg(test)]
mod rounding_tests {
    //! The narrow-float rounding helpers: `round_to_precision`, and `FloatElem::from_f64` for
    //! f16, bf16 and every f8/f4 format (one rounding to nearest even from f64, then the format's
    //! overflow rule).
    use super::*;

    fn p2(k: i32) -> f64 {
        2f64.powi(k)
    }

    #[test]
    fn round_to_precision_ties_to_even_and_keeps_subnormals() {
        // 10 mantissa bits (f16): the ulp at 1 is 2^-10.
        assert_eq!(round_to_precision(1.0 + p2(-11), -14, 10), 1.0);
        assert_eq!(
            round_to_precision(1.0 + 3.0 * p2(-11), -14, 10),
            1.0 + p2(-9)
        );
        assert_eq!(
            round_to_precision(1.0 + p2(-11) + p2(-40), -14, 10),
            1.0 + p2(-10)
        );
        assert_eq!(
            round_to_precision(-(1.0 + p2(-11) + p2(-40)), -14, 10),
            -(1.0 + p2(-10))
        );
        // Below the smallest normal the spacing stays 2^(emin - man) = 2^-24.
        assert_eq!(round_to_precision(p2(-25), -14, 10), 0.0);
        assert_eq!(round_to_precision(3.0 * p2(-26), -14, 10), p2(-24));
        assert_eq!(round_to_precision(3.0 * p2(-25), -14, 10), 2.0 * p2(-24));
        // Unbounded above; zeros, infinities and NaN pass through.
        assert_eq!(
            round_to_precision(1e300, -14, 10),
            round_to_precision(1e300, -14, 10)
        );
        assert!(round_to_precision(1e300, -14, 10).is_finite());
        assert_eq!(
            round_to_precision(-0.0, -14, 10).to_bits(),
            (-0.0f64).to_bits()
        );
        assert_eq!(round_to_precision(f64::INFINITY, -14, 10), f64::INFINITY);
        assert!(round_to_precision(f64::NAN, -14, 10).is_nan());
    }

    /// Every finite value of a format round-trips; the midpoint between neighbours goes to the
    /// one with the even bit pattern, and anything past the midpoint to the upper neighbour.
    fn check_exhaustive<T: FloatElem + PartialEq + std::fmt::Debug>(
        name: &str,
        values: Vec<(u32, T)>,
        bits: impl Fn(T) -> u32,
    ) {
        let mut finite: Vec<(u32, f64)> = values
            .iter()
            .map(|&(b, v)| (b, v.to_f64()))
            .filter(|(_, x)| x.is_finite() && (*x != 0.0 || x.is_sign_positive()))
            .collect();
        for &(b, x) in &finite {
            assert_eq!(bits(T::from_f64(x)), b, "{name}: {x} does not round-trip");
        }
        finite.sort_by(|a, b| a.1.total_cmp(&b.1));
        finite.dedup_by(|a, b| a.1 == b.1);
        for w in finite.windows(2) {
            let ((lb, lo), (hb, hi)) = (w[0], w[1]);
            let mid = (lo + hi) / 2.0;
            let even = if lo == 0.0 || lb & 1 == 0 { lb } else { hb };
            let got = bits(T::from_f64(mid));
            // An all-zero pattern has no odd neighbour below; for negatives the even bit is the
            // same rule on the magnitude.
            assert!(
                got == even || lo == 0.0 || hi == 0.0,
                "{name}: midpoint {mid} of {lo} and {hi} gave {got:#x}, expected {even:#x}"
            );
            // Just off the midpoint: the nearer neighbour (by value: a result of -0 for +0 is right
            // for a tiny negative input).
            let above = T::from_f64(mid + (hi - lo) * 1e-6).to_f64();
            let below = T::from_f64(mid - (hi - lo) * 1e-6).to_f64();
            assert_eq!(above, hi, "{name}: just above {mid}");
            assert_eq!(below, lo, "{name}: just below {mid}");
        }
    }

    #[test]
    fn f16_and_bf16_round_once_exhaustively() {
        check_exhaustive(
            "f16",
            (0..=0xffffu32)
                .map(|b| (b, f16::from_bits(b as u16)))
                .collect(),
            |v: f16| v.to_bits() as u32,
        );
        check_exhaustive(
            "bf16",
            (0..=0xffffu32)
                .map(|b| (b, bf16::from_bits(b as u16)))
                .collect(),
            |v: bf16| v.to_bits() as u32,
        );
        // Overflow: past max + half an ulp is infinity; the tie itself rounds to even (infinity).
        assert_eq!(<f16 as FloatElem>::from_f64(65519.99).to_f64(), 65504.0);
        assert_eq!(
            <f16 as FloatElem>::from_f64(65520.0).to_f64(),
            f64::INFINITY
        );
        assert_eq!(
            <bf16 as FloatElem>::from_f64(-1e39).to_f64(),
            f64::NEG_INFINITY
        );
        // A single rounding from f64 (no detour through f32): just above a tie rounds up.
        assert_eq!(
            <f16 as FloatElem>::from_f64(1.0 + p2(-11) + p2(-40)).to_f64(),
            1.0 + p2(-10)
        );
        assert_eq!(
            <bf16 as FloatElem>::from_f64(1.0 + p2(-8) + p2(-40)).to_f64(),
            1.0 + p2(-7)
        );
        // NaN keeps its sign.
        assert!(<f16 as FloatElem>::from_f64(-f64::NAN).to_bits() & 0x8000 != 0);
        assert!(<bf16 as FloatElem>::from_f64(f64::NAN).to_f64().is_nan());
        // An f16 NaN's payload survives the round trip through f64 (its top bits, quieted), as
        // through the CPU's conversions; bf16 NaNs become the quiet NaN of their sign.
        for b in [0xffffu16, 0xfc01] {
            let x = f16::from_bits(b).to_f64();
            let want = b | 0x0200;
            assert_eq!(<f16 as FloatElem>::from_f64(x).to_bits(), want, "{b:#x}");
        }
        let x = bf16::from_bits(0xff81).to_f64();
        assert_eq!(<bf16 as FloatElem>::from_f64(x).to_bits(), 0xffc0);
    }

    fn all_bytes<T>(from: impl Fn(u8) -> T) -> Vec<(u32, T)> {
        (0..=255u8).map(|b| (b as u32, from(b))).collect()
    }

    #[test]
    fn f8_and_f4_round_once_exhaustively() {
        check_exhaustive("f8e5m2", all_bytes(f8e5m2::from_bits), |v| {
            v.to_bits() as u32
        });
        check_exhaustive("f8e4m3", all_bytes(f8e4m3::from_bits), |v| {
            v.to_bits() as u32
        });
        check_exhaustive("f8e4m3fn", all_bytes(f8e4m3fn::from_bits), |v| {
            v.to_bits() as u32
        });
        check_exhaustive("f8e4m3b11fnuz", all_bytes(f8e4m3b11fnuz::from_bits), |v| {
            v.to_bits() as u32
        });
        check_exhaustive("f8e3m4", all_bytes(f8e3m4::from_bits), |v| {
            v.to_bits() as u32
        });
        check_exhaustive("f8e5m2fnuz", all_bytes(f8e5m2fnuz::from_bits), |v| {
            v.to_bits() as u32
        });
        check_exhaustive("f8e4m3fnuz", all_bytes(f8e4m3fnuz::from_bits), |v| {
            v.to_bits() as u32
        });
        check_exhaustive(
            "f4e2m1fn",
            (0..16u8)
                .map(|b| (b as u32, f4e2m1fn::from_bits(b)))
                .collect(),
            |v| v.to_bits() as u32,
        );
        // Single rounding from f64, as XLA CPU converts f64 -> f8 (checked on jaxlib 0.10.2):
        // 1.125 + 2^-40 is past the tie between 1 and 1.25 in e5m2.
        assert_eq!(
            <f8e5m2 as FloatElem>::from_f64(1.125 + p2(-40)).to_bits(),
            61
        );
        assert_eq!(
            <f8e4m3fn as FloatElem>::from_f64(1.0625 + p2(-40)).to_bits(),
            57
        );
    }

    /// Bit patterns ml_dtypes 0.5 gives for values exact in f32 (so its f32 detour does not
    /// matter): overflow, saturation, NaN encodings, subnormals, negative zero per format.
    #[test]
    fn narrow_formats_match_ml_dtypes_on_format_edges() {
        let vals = [
            1.0625,
            1.1875,
            3.0,
            5.0,
            240.0,
            464.0,
            465.0,
            1000.0,
            57344.0,
            61440.0,
            65520.0,
            1e6,
            p2(-9),
            p2(-10),
            3.0 * p2(-11),
            -0.0,
            6.0,
            7.0,
            0.01171875,
            15.5,
            30.0,
            31.0,
        ];
        fn run<T: FloatElem>(vals: &[f64], bits: impl Fn(T) -> u32) -> Vec<u32> {
            vals.iter().map(|&x| bits(T::from_f64(x))).collect()
        }
        let b8 = |v: u8| v as u32;
        let cases: Vec<(&str, Vec<u32>, [u32; 22])> = vec![
            (
                "f8e5m2",
                run(&vals, |v: f8e5m2| b8(v.to_bits())),
                [
                    60, 61, 66, 69, 92, 95, 95, 100, 123, 124, 124, 124, 24, 20, 22, 128, 70, 71,
                    34, 76, 80, 80,
                ],
            ),
            (
                "f8e4m3",
                run(&vals, |v: f8e4m3| b8(v.to_bits())),
                [
                    56, 58, 68, 74, 119, 120, 120, 120, 120, 120, 120, 120, 1, 0, 1, 128, 76, 78,
                    6, 88, 95, 96,
                ],
            ),
            (
                "f8e4m3fn",
                run(&vals, |v: f8e4m3fn| b8(v.to_bits())),
                [
                    56, 58, 68, 74, 119, 126, 127, 127, 127, 127, 127, 127, 1, 0, 1, 128, 76, 78,
                    6, 88, 95, 96,
                ],
            ),
            (
                "f8e4m3b11fnuz",
                run(&vals, |v: f8e4m3b11fnuz| b8(v.to_bits())),
                [
                    88, 90, 100, 106, 128, 128, 128, 128, 128, 128, 128, 128, 16, 8, 12, 0, 108,
                    110, 36, 120, 127, 128,
                ],
            ),
            (
                "f8e3m4",
                run(&vals, |v: f8e3m4| b8(v.to_bits())),
                [
                    49, 51, 72, 84, 112, 112, 112, 112, 112, 112, 112, 112, 0, 0, 0, 128, 88, 92,
                    1, 111, 112, 112,
                ],
            ),
            (
                "f8e5m2fnuz",
                run(&vals, |v: f8e5m2fnuz| b8(v.to_bits())),
                [
                    64, 65, 70, 73, 96, 99, 99, 104, 127, 128, 128, 128, 28, 24, 26, 0, 74, 75, 38,
                    80, 84, 84,
                ],
            ),
            (
                "f8e4m3fnuz",
                run(&vals, |v: f8e4m3fnuz| b8(v.to_bits())),
                [
                    64, 66, 76, 82, 127, 128, 128, 128, 128, 128, 128, 128, 2, 1, 2, 0, 84, 86, 12,
                    96, 103, 104,
                ],
            ),
            (
                "f8e8m0fnu",
                run(&vals, |v: f8e8m0fnu| b8(v.to_bits())),
                [
                    127, 127, 129, 129, 135, 136, 136, 137, 143, 143, 143, 147, 118, 117, 118, 255,
                    130, 130, 121, 131, 132, 132,
                ],
            ),
            (
                "f4e2m1fn",
                run(&vals, |v: f4e2m1fn| b8(v.to_bits())),
                [
                    2, 2, 5, 6, 7, 7, 7, 7, 7, 7, 7, 7, 0, 0, 0, 8, 7, 7, 0, 7, 7, 7,
                ],
            ),
            (
                "f16",
                run(&vals, |v: f16| v.to_bits() as u32),
                [
                    15424, 15552, 16896, 17664, 23424, 24384, 24388, 25552, 31488, 31616, 31744,
                    31744, 6144, 5120, 5632, 32768, 17920, 18176, 8704, 19392, 20352, 20416,
                ],
            ),
            (
                "bf16",
                run(&vals, |v: bf16| v.to_bits() as u32),
                [
                    16264, 16280, 16448, 16544, 17264, 17384, 17384, 17530, 18272, 18288, 18304,
                    18804, 15104, 14976, 15040, 32768, 16576, 16608, 15424, 16760, 16880, 16888,
                ],
            ),
        ];
        let mut bad = Vec::new();
        for (name, got, want) in cases {
            for (k, (g, w)) in got.iter().zip(want.iter()).enumerate() {
                if g != w {
                    bad.push(format!("{name}({}) = {g}, ml_dtypes {w}", vals[k]));
                }
            }
        }
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }
}

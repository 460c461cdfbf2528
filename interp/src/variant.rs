//! Implementation choices XLA is free to make, as evaluation options of the oracle.
//!
//! The default evaluation makes one choice for each; a differential harness that sees XLA
//! disagree with the oracle can evaluate again under another [`Variant`] and ask whether XLA's
//! result is one of the allowed ones:
//!
//! - **Sign of a NaN** an operation produces. IEEE 754 leaves it open; x86 hardware makes the
//!   "default NaN" negative, while constant folders (C++ `std::` functions, LLVM's folder) make
//!   it positive, so the same XLA module gives either depending on what was folded. It is only
//!   visible through `bitcast-convert`, `TOTALORDER` comparisons and sorts.
//! - **Last bits of approximated functions** (`exponential`, `log`, `tanh`, `cbrt`, ...). XLA
//!   CPU uses its own polynomial approximations, a few ulps from the correctly rounded result.
//!   Comparators allow that on floats; a variant nudges the oracle's results by whole ulps so
//!   that what depends on them discontinuously (comparisons, bitcasts, rounding to integers)
//!   can be checked against the nudged result too. Results XLA never misses (a bound the
//!   function saturates to, as f64 `tanh(-40) = -1`, or its value at an exact point, as
//!   `exp(0) = 1`) are not nudged: see [`exact_result`].
//! - **Denormals**: XLA CPU runs with the CPU's flush-to-zero and denormals-are-zero modes,
//!   so subnormal floats anywhere (inputs or intermediate results) count as zero. The variant
//!   runs the oracle in the same CPU mode (x86-64 only).
//! - **Accumulation precision** of `dot` and `convolution`. The oracle sums in f64 and rounds
//!   once; XLA CPU sums f32 (and narrower) in f32, so a sum whose partial results overflow is
//!   inf or NaN there and finite here.
//! - **Precision of c64 functions**: the oracle evaluates `power`, `exp`, `log`, ... of c64
//!   values by C99 Annex G in double precision; XLA's formulas in single precision round (and
//!   overflow) elsewhere:
//!   a part much smaller than the modulus (the imaginary part of (-28343 + 0i)^1, sin(pi) times
//!   28343) carries an error of the modulus' ulps. The variant computes those functions in
//!   double precision and rounds once.
//! - **Rounding noise in complex results**: complex functions are accurate relative to their
//!   modulus, not part by part. atan2(z, z) is pi/4 plus an imaginary part that is pure rounding
//!   noise (1e-16 here, 2e-16 in XLA's compiled code, 9e-17 when XLA folds it), and what follows
//!   can magnify it without bound (its log) or turn on its sign (a square root's branch cut).
//!   The variant moves both parts of complex results by ulps of the larger part.
//! - **Convolution padding**: the oracle multiplies the zeros that padding and base dilation put
//!   into a convolution's lhs (StableHLO's definition: pad, then dot; XLA's lowerings through
//!   `pad` do the same), while XLA's convolution kernels skip them. Only an inf or NaN kernel
//!   value over padding tells them apart (0 * NaN is NaN); the variant skips them.
//! - **Contraction of complex products**: XLA CPU multiplies complex values in the component
//!   type, with LLVM fusing some partial products into multiply-adds: which ones depends on
//!   the code around the multiply (a product used twice is never fused). Where a partial
//!   product overflows, that decides whether a part is finite, inf or NaN. The default is the
//!   form measured on elementwise multiplies and reducers; the variant picks another
//!   ([`ComplexMul`]).
//! - **Narrowing to f16**: `convert` from f64 (a c128's real part, an integer) to f16 rounds
//!   once on a host with AVX512-FP16 and through f32 (twice) on one without; the default
//!   follows the host the oracle runs on ([`crate::host`]), the variant picks either.

use crate::value::{from_bits, to_bits, Array, Buffer};
use crate::Result;
use hlo::{Opcode, PrimitiveType};

/// One set of implementation choices. The default is the oracle's usual evaluation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Variant {
    /// `Some(negative)`: every NaN an arithmetic op produces gets this sign.
    pub nan_sign: Option<bool>,
    /// Results of approximated functions move this many ulps (of their type) up, or down when
    /// negative; finite results stay finite, and exact ones ([`exact_result`]) stay as they are.
    pub nudge_ulps: i32,
    /// Only the results of this approximated op move (`None`: of every approximated op).
    pub nudge_only: Option<Opcode>,
    /// Evaluate with the CPU's flush-to-zero and denormals-are-zero modes on, as XLA CPU runs:
    /// subnormal inputs of float instructions read as zero and subnormal results become zero.
    pub flush_denormals: bool,
    /// How `dot` and `convolution` accumulate.
    pub accumulation: Accumulation,
    /// `convolution` skips the padding and base-dilation zeros of its lhs instead of
    /// multiplying them.
    pub skip_conv_padding: bool,
    /// Approximated functions of c64 values follow XLA CPU's formulas in single precision (its
    /// overflow and roundings: an implementation choice); by default the oracle computes them
    /// by C99 Annex G in double precision and rounds once.
    pub narrow_complex: bool,
    /// Nudges move complex results only, and both parts of each by `nudge_ulps` ulps of the
    /// larger part: complex functions are accurate relative to their modulus, so a part much
    /// smaller than the other is rounding noise, free to move by the larger one's ulps.
    pub normwise_complex: bool,
    /// Which element `select-and-scatter` selects among elements its `select` ties (`select(a,
    /// b) == select(b, a)`: equal values under `GE`/`LT`, a `select` that orders nothing). By
    /// default, as XLA's evaluator: scanning the window in order, the selection moves whenever
    /// `select(selected, next)` is false (the first of equal values under `GE`, the last under
    /// `LT`). StableHLO defines the selection as a reduction in no fixed order, so any of the
    /// tied elements is allowed; XLA CPU's choice differs from the evaluator's.
    pub select_ties: Option<SelectTies>,
    /// How `convert` narrows f64, c128 and integer values to f16 (`None`: as XLA CPU does on
    /// the host, [`crate::host::HostCpu::narrowing`]).
    pub narrowing: Option<Narrowing>,
    /// Which partial products of complex `multiply` (elementwise, in reducers, combiners and
    /// mapped computations) are fused into multiply-adds.
    pub complex_mul: ComplexMul,
    /// The order `reduce` and `reduce-window` combine a group's elements in.
    pub reduce_order: ReduceOrder,
}

/// The order a reduction combines its elements in. XLA requires reducers to be associative and
/// commutative and then combines in whatever order its code generator likes (vector lanes,
/// trees, threads): where float rounding or overflow makes the reducer not associative, every
/// order gives an allowed result. A product of [-4.3, -3.4e38, 0, ...] is 0 visited in order
/// and NaN when -4.3 * -3.4e38 overflows to inf before a zero joins it (XLA CPU, f32). The
/// oracle tries a few orders; only reducers it recognizes as one binary op (`add`, `multiply`,
/// ...) of one operand are reordered, others are always folded in order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReduceOrder {
    /// The init value, then the elements in row-major order: the default.
    #[default]
    Sequential,
    /// The elements in reverse row-major order.
    Reverse,
    /// Adjacent pairs combined level by level (a balanced tree), then the init value.
    Pairwise,
    /// The elements by decreasing magnitude (ties in row-major order), then the init value
    /// (which XLA may apply last, or more than once: a reducer's init must be its identity,
    /// and generated modules do not always keep that: a product with init 0 is 0 in order and
    /// NaN when its elements overflow first): where some order makes
    /// a partial result overflow (a product of the largest factors, a sum of the largest
    /// terms), this one does, as XLA's may when it visits the operand in another layout than
    /// the oracle's (a transpose folded into the reduce).
    LargestFirst,
    /// Element `i` into accumulator `i mod L` (a vectorized loop's lanes, L = 4 or 8), each
    /// lane in order, then the lanes combined pairwise (a horizontal reduction), then the init
    /// value.
    Lanes(u8),
}

impl ReduceOrder {
    /// The orders other than the default.
    pub const OTHERS: [ReduceOrder; 5] = [
        ReduceOrder::Reverse,
        ReduceOrder::Pairwise,
        ReduceOrder::LargestFirst,
        ReduceOrder::Lanes(4),
        ReduceOrder::Lanes(8),
    ];

    /// Folds `elements` (in row-major order) and `init` with `f(accumulator, element)` in this
    /// order; a tree combines two partial results with `f` as well. `magnitude` orders the
    /// elements for [`ReduceOrder::LargestFirst`] (NaN counts as the largest).
    pub fn fold<T: Clone>(
        self,
        init: T,
        elements: impl DoubleEndedIterator<Item = T>,
        f: impl Fn(T, T) -> T,
        magnitude: impl Fn(&T) -> f64,
    ) -> T {
        match self {
            ReduceOrder::Sequential => elements.fold(init, &f),
            ReduceOrder::Reverse => elements.rev().fold(init, &f),
            ReduceOrder::LargestFirst => {
                let mut v: Vec<(f64, T)> = elements
                    .map(|x| {
                        let m = magnitude(&x);
                        (if m.is_nan() { f64::INFINITY } else { m }, x)
                    })
                    .collect();
                v.sort_by(|a, b| b.0.total_cmp(&a.0));
                let mut it = v.into_iter().map(|(_, x)| x);
                match it.next() {
                    Some(first) => f(init, it.fold(first, &f)),
                    None => init,
                }
            }
            ReduceOrder::Lanes(l) => {
                let l = usize::from(l.max(1));
                let mut lanes: Vec<Option<T>> = vec![None; l];
                for (i, x) in elements.enumerate() {
                    let lane = &mut lanes[i % l];
                    *lane = Some(match lane.take() {
                        Some(acc) => f(acc, x),
                        None => x,
                    });
                }
                let partial = lanes.into_iter().flatten();
                ReduceOrder::Pairwise.fold(
                    init,
                    partial.collect::<Vec<_>>().into_iter(),
                    f,
                    magnitude,
                )
            }
            ReduceOrder::Pairwise => {
                let mut level: Vec<T> = elements.collect();
                while level.len() > 1 {
                    level = level
                        .chunks(2)
                        .map(|c| {
                            if c.len() == 2 {
                                f(c[0].clone(), c[1].clone())
                            } else {
                                c[0].clone()
                            }
                        })
                        .collect();
                }
                match level.first() {
                    Some(total) => f(init, total.clone()),
                    None => init,
                }
            }
        }
    }
}

/// Which partial products of a complex product `a * b` are fused into multiply-adds (one
/// rounding for a product and a sum). XLA CPU emits the product as
/// `(a.re b.re - a.im b.im, a.im b.re + a.re b.im)` and LLVM contracts it as it finds it: a
/// product used twice is not fused (`complex(p, p)` makes every product used twice, squaring
/// the two of the imaginary part one), and which product of the imaginary part's sum it fuses
/// depends on the code around it. The parts are computed in the component type (f32 for c64),
/// so where a partial product overflows, the form decides whether a part is finite, infinite
/// or NaN.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ComplexMul {
    /// The reference, the default: the textbook formula computed in double precision (c64
    /// rounded once), with the infinities of C99 Annex G.5.1 recovered where it makes NaN of
    /// both parts (`crate::annex_g::mul`).
    #[default]
    AnnexG,
    /// `fma(a.re, b.re, -(a.im b.im))`, `fma(a.im, b.re, a.re b.im)` in the component type:
    /// XLA CPU's elementwise multiply and its reducers (`multiply(p0, p1)` as `p0 * p1`),
    /// measured.
    Fused,
    /// The imaginary part fuses the other product, `fma(a.re, b.im, a.im b.re)` (XLA CPU's
    /// scatter with a `multiply(operand, update)` combiner).
    FusedOtherIm,
    /// The imaginary part unfused (rounded products, rounded sum).
    UnfusedIm,
    /// Nothing fused: every product and both sums rounded (the StableHLO reference; XLA CPU on
    /// `complex(p, p)` operands).
    Unfused,
}

impl ComplexMul {
    /// The forms other than the default, in the order a harness tries them.
    pub const OTHERS: [ComplexMul; 4] = [
        ComplexMul::Fused,
        ComplexMul::Unfused,
        ComplexMul::FusedOtherIm,
        ComplexMul::UnfusedIm,
    ];
}

/// How `convert` narrows f64 (a c128's real part, an integer) to f16 (see
/// [`Variant::narrowing`]). bf16 goes through f32 either way: x86 has no instruction that
/// narrows f64 to bf16, and XLA CPU rounds through f32 on every host measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Narrowing {
    /// Round to f32, then to f16 (two roundings): XLA CPU on hosts without AVX512-FP16, and
    /// HloEvaluator (Eigen's `half` constructors).
    ViaF32,
    /// Round once to f16: XLA CPU on hosts with AVX512-FP16 (`vcvtsd2sh`).
    Direct,
}

/// The element `select-and-scatter` keeps among tied ones (see [`Variant::select_ties`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SelectTies {
    First,
    Last,
}

/// The accumulation of `dot` and `convolution` sums.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Accumulation {
    /// In f64 (c128 for complex), rounded once to the result type: the default.
    #[default]
    Wide,
    /// In the precision of the result (f32 for f32 and narrower floats, single-precision parts
    /// for c64), every product and every sum rounded.
    Narrow,
    /// As `Narrow`, with each product and sum fused (one rounding per step), as FMA code does;
    /// c64 as `Narrow`.
    NarrowFused,
}

impl Variant {
    /// Whether `op` on values of type `ty` follows XLA CPU's single-precision c64 formulas.
    pub fn narrows_complex(&self, op: Opcode, ty: PrimitiveType) -> bool {
        self.narrow_complex && ty == PrimitiveType::C64 && op.is_approximated()
    }

    /// True when no option changes the evaluation of elementwise results (see [`adjust`]).
    pub fn leaves_elementwise_results(&self) -> bool {
        self.nan_sign.is_none() && self.nudge_ulps == 0 && !self.flush_denormals
    }
}

/// Whether results of `op` of type `ty` carry rounding XLA does its own way, so that nudges move
/// them: the approximated functions, and complex `divide` (Smith's algorithm, whose partial
/// products LLVM may contract into multiply-adds: `z / z` has an imaginary part of rounding
/// noise, 0 in the oracle and 5.8e-19 in XLA CPU's c128 code).
pub fn rounds_like_approximated(op: Opcode, ty: PrimitiveType) -> bool {
    op.is_approximated() || (op == Opcode::Divide && ty.is_complex())
}

/// Functions XLA computes with approximations of its own (results a few ulps off): the
/// opcodes `hlo`'s opcode table marks approximated ([`Opcode::is_approximated`]).
pub const APPROXIMATED: &[Opcode] = hlo::opcode::APPROXIMATED;

/// Results an approximated function never misses, which nudges leave alone: the exact value
/// at an exact point (`exp(0) = 1`, `sin(0) = 0`, `log(1) = 0`) and the bound the function
/// saturates to (`tanh` at +-1, `exp` underflowing to 0, `expm1` at -1). Moving them by an ulp
/// would give a value no implementation returns: `1 + tanh(-40)` would be 2^-53 instead of 0,
/// and whatever multiplies it afterwards would be "explained" however far XLA's result is.
///
/// `r` is the real result (component type `ty`, finite) of `op` on the real operands `args`
/// (`NaN` where unknown). Only what XLA CPU (jaxlib 0.10.2) returns exactly is listed, measured
/// on f16, bf16, f32 and f64 over dense sweeps of the approaches to each bound
/// (`tests/saturation.rs`, KNOWN_DIFFERENCES.md "Exact results of approximated functions"):
/// f64 `tanh` is +-1 on XLA only from |x| = 20 (below, down to 19.06 where the correctly
/// rounded result is already +-1, XLA returns 1 - 7 * 2^-53), and f32 `atan2` near +-pi/2
/// is an ulp either side of the rounded value, so those results keep being nudged; so do the
/// functions XLA CPU does not implement (acos, sinh, ...).
pub fn exact_result(op: Opcode, ty: PrimitiveType, args: &[f64], r: f64) -> bool {
    use Opcode as O;
    let zero = r == 0.0;
    match op {
        O::Tanh => {
            let x = args.first().copied().unwrap_or(f64::NAN);
            zero || r.abs() == 1.0 && (ty != PrimitiveType::F64 || x.abs() >= 20.0)
        }
        O::Erf => zero || r.abs() == 1.0,
        O::Logistic | O::Exp | O::Power => zero || r == 1.0,
        O::Expm1 => zero || r == -1.0,
        O::Cos => r == 1.0,
        O::Log | O::Log1p | O::Sin | O::Tan | O::Cbrt | O::Rsqrt => zero,
        O::Atan2 => {
            let pi = |v: f64| r.abs() == rounded(ty, v);
            zero || pi(std::f64::consts::PI)
                || ty != PrimitiveType::F32 && pi(std::f64::consts::FRAC_PI_2)
        }
        _ => false,
    }
}

/// `v` rounded to the float type `ty` (NaN if it cannot be).
fn rounded(ty: PrimitiveType, v: f64) -> f64 {
    match ty {
        PrimitiveType::F64 => return v,
        PrimitiveType::F32 => return v as f32 as f64,
        _ => {}
    }
    let a = Array::new(PrimitiveType::F64, vec![1], Buffer::F64(vec![v]));
    crate::convert::convert(&a, ty)
        .map(|c| crate::elementwise::to_f64s(&c.buf)[0])
        .unwrap_or(f64::NAN)
}

/// Runs `f` with the x86-64 MXCSR flush-to-zero and denormals-are-zero bits set, on a one-off
/// thread pool whose threads all have them (the oracle's parallel loops run on rayon), or
/// `Unsupported` on other architectures.
pub fn with_flush_denormals<R: Send>(f: impl FnOnce() -> R + Send) -> crate::Result<R> {
    #[cfg(target_arch = "x86_64")]
    {
        #[allow(deprecated)]
        fn set_ftz_daz() {
            use std::arch::x86_64::{_mm_getcsr, _mm_setcsr};
            // FTZ is bit 15, DAZ bit 6. Both only change how subnormals are treated; the pool's
            // threads exit with the pool, so the mode never leaks into other work.
            unsafe { _mm_setcsr(_mm_getcsr() | 0x8040) };
        }
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .start_handler(|_| set_ftz_daz())
            .build()
            .map_err(|e| crate::unsupported(format!("flush-to-zero thread pool: {e}")))?;
        Ok(pool.install(f))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = f;
        Err(crate::unsupported(
            "evaluation with flush-to-zero needs x86-64",
        ))
    }
}

/// Ops whose NaN results keep the operand's sign bit by definition (they move or flip bits).
fn keeps_sign(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Negate | Opcode::Abs | Opcode::Real | Opcode::Imag | Opcode::Complex
    )
}

/// Sign-magnitude layout of a float type: (bit width, sign bit) or `None` when the type has no
/// sign bit or no signed NaN (the fnuz types keep NaN in the negative-zero pattern).
fn sign_layout(ty: PrimitiveType) -> Option<u32> {
    use PrimitiveType as T;
    match ty {
        T::F16 | T::Bf16 | T::F32 | T::F64 | T::F8E5M2 | T::F8E4M3 | T::F8E4M3FN | T::F8E3M4 => {
            Some(ty.bit_width() as u32)
        }
        _ => None,
    }
}

/// Under [`Variant::flush_denormals`], the operand of a `convert` to f64 (or c128) from bf16 or
/// f32 (or c64) with its subnormals made zeros, or `None` when nothing changes. XLA CPU widens
/// to f64 through f32 with `cvtss2sd`, which reads a subnormal as zero in the denormals-are-zero
/// mode (measured on jaxlib 0.10.2: bf16 9.2e-41 converts to f32 9.2e-41 but to f64 0, compiled
/// and constant-folded alike); the oracle's conversion is exact. A `convert` to `pred` from
/// bf16, f32 or f64 is a floating-point compare with zero, which reads a subnormal as zero too
/// (measured on jaxlib 0.10.2: f32 1e-45 and f64 5e-324 convert to false; bf16 9.2e-41 to true
/// alone and to false when the convert feeds a select in the same fusion, compared in f32; f16
/// subnormals are normal in f32 and convert to true).
pub fn flush_widened(
    a: &std::sync::Arc<Array>,
    to: PrimitiveType,
    v: &Variant,
) -> Result<Option<std::sync::Arc<Array>>> {
    use PrimitiveType as T;
    let from = a.ty.complex_component().unwrap_or(a.ty);
    let widened =
        to.complex_component().unwrap_or(to) == T::F64 && matches!(from, T::Bf16 | T::F32);
    let compared = to == T::Pred && matches!(a.ty, T::Bf16 | T::F32 | T::F64);
    if !widened && !compared {
        return Ok(None);
    }
    flush_operand(Opcode::Add, a, v)
}

/// Under [`Variant::flush_denormals`], an operand of arithmetic op `op` with its subnormals
/// made zeros of the same sign, or `None` when nothing changes. XLA CPU computes bf16, f32 and
/// f64 (and their complex forms) with the CPU's denormals-are-zero mode on, and its constant
/// folding reads them the same way; the oracle computes some of these ops in a wider type, where
/// the hardware mode would not see a subnormal, so the flush is done here. Ops that only move
/// or relabel bits (convert, bitcast-convert, negate, abs, real, imag, complex,
/// reduce-precision) do not flush in XLA and are left alone (a widening to f64 does:
/// [`flush_widened`]); f16 values are normal once
/// widened to f32, so they are left alone too.
pub fn flush_operand(
    op: Opcode,
    a: &std::sync::Arc<Array>,
    v: &Variant,
) -> Result<Option<std::sync::Arc<Array>>> {
    use PrimitiveType as T;
    // The modulus of a complex value is arithmetic (XLA CPU flushes a subnormal part there:
    // abs of c64 (1e-45, 0) is 0); abs of a real value only clears the sign bit.
    let complex_abs = op == Opcode::Abs && a.ty.is_complex();
    // Complex maximum and minimum compare the real parts in the CPU's mode (a subnormal reads
    // as zero there) and return the operand picked with its bits: not flushed
    // (`elementwise::complex_max`).
    let complex_pick = matches!(op, Opcode::Maximum | Opcode::Minimum) && a.ty.is_complex();
    if !v.flush_denormals
        || complex_pick
        || !complex_abs
            && matches!(
                op,
                Opcode::Convert
                    | Opcode::BitcastConvert
                    | Opcode::Negate
                    | Opcode::Abs
                    | Opcode::Real
                    | Opcode::Imag
                    | Opcode::Complex
                    | Opcode::ReducePrecision
                    | Opcode::Copy
            )
    {
        return Ok(None);
    }
    let comp = a.ty.complex_component().unwrap_or(a.ty);
    let (width, exp, man): (usize, u128, u128) = match comp {
        T::Bf16 => (16, 0x7f80, 0x7f),
        T::F32 => (32, 0x7f80_0000, 0x7f_ffff),
        T::F64 => (64, 0x7ff0_0000_0000_0000, 0x000f_ffff_ffff_ffff),
        _ => return Ok(None),
    };
    let parts = if a.ty.is_complex() { 2 } else { 1 };
    let mask = (1u128 << width) - 1;
    let sign = 1u128 << (width - 1);
    let bits = to_bits(&a.buf);
    let mut changed = false;
    let out: Vec<u128> = bits
        .iter()
        .map(|&b| {
            let mut r = 0u128;
            for p in 0..parts {
                let mut x = (b >> (p * width)) & mask;
                if x & exp == 0 && x & man != 0 {
                    x &= sign;
                    changed = true;
                }
                r |= x << (p * width);
            }
            r
        })
        .collect();
    if !changed {
        return Ok(None);
    }
    Ok(Some(std::sync::Arc::new(Array::new(
        a.ty,
        a.dims.clone(),
        from_bits(a.ty, &out)?,
    ))))
}

/// Applies `v` to the result `a` of elementwise op `op` on the operands `args` (same shape as
/// `a`; they tell results that are exact, see [`exact_result`], from those that may move).
pub fn adjust(op: Opcode, args: &[&Array], a: Array, v: &Variant) -> Result<Array> {
    if v.leaves_elementwise_results() || !(a.ty.is_float() || a.ty.is_complex()) {
        return Ok(a);
    }
    let comp = a.ty.complex_component().unwrap_or(a.ty);
    let Some(width) = sign_layout(comp) else {
        return Ok(a);
    };
    // bf16 shares f32's exponent range: XLA CPU computes it in f32, where a bf16 subnormal is
    // an f32 subnormal and the CPU's flush-to-zero mode makes it zero; f16 results come from the
    // CPU's f32-to-f16 conversion, which flushes too. The oracle converts both in software, so
    // that flush is done here. (f8 and f4 conversions are software in XLA as well: kept.)
    let flush_half = match (v.flush_denormals, comp) {
        (true, PrimitiveType::Bf16) => Some((0x7f80u128, 0x7fu128, 0x8000u128)),
        (true, PrimitiveType::F16) => Some((0x7c00, 0x3ff, 0x8000)),
        _ => None,
    };
    // abs of a complex value is a modulus computed in arithmetic: its NaN's sign is free too.
    let complex_abs = op == Opcode::Abs && args.first().is_some_and(|x| x.ty.is_complex());
    // Complex maximum and minimum select an operand (`elementwise::complex_max`): its NaNs
    // keep their bits.
    let complex_pick = matches!(op, Opcode::Maximum | Opcode::Minimum) && a.ty.is_complex();
    let nan_sign = v
        .nan_sign
        .filter(|_| (!keeps_sign(op) || complex_abs) && !complex_pick);
    let normwise = v.normwise_complex && a.ty.is_complex();
    // Normwise nudges leave real results alone.
    let nudge = if rounds_like_approximated(op, a.ty)
        && v.nudge_only.is_none_or(|o| o == op)
        && (a.ty.is_complex() || !v.normwise_complex)
    {
        v.nudge_ulps
    } else {
        0
    };
    if nan_sign.is_none() && nudge == 0 && flush_half.is_none() {
        return Ok(a);
    }
    let bits = to_bits(&a.buf);
    let parts = if a.ty.is_complex() { 2 } else { 1 };
    let mask = (1u128 << width) - 1;
    // Real results only: complex functions are nudged as they are (their parts are no bounds).
    let check_exact = nudge != 0 && !a.ty.is_complex();
    let operands: Vec<Vec<f64>> = if check_exact {
        args.iter()
            .map(|x| crate::elementwise::to_f64s(&x.buf))
            .map(|x| {
                if x.len() == bits.len() {
                    x
                } else {
                    vec![f64::NAN; bits.len()]
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    let mut at = Vec::with_capacity(operands.len());
    let out: Vec<u128> = bits
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            let nudge = if !check_exact {
                nudge
            } else {
                at.clear();
                at.extend(operands.iter().map(|x| x[i]));
                if exact_result(op, comp, &at, value_of(comp, b & mask)) {
                    0
                } else {
                    nudge
                }
            };
            let mut part = [0u128; 2];
            for (p, out) in part.iter_mut().enumerate().take(parts) {
                let mut x = (b >> (p * width as usize)) & mask;
                // Exponent field 0 with a nonzero mantissa: a subnormal.
                if let Some((exp, man, sign)) = flush_half {
                    if x & exp == 0 && x & man != 0 {
                        x &= sign;
                    }
                }
                *out = adjust_bits(comp, width, x, nan_sign, if normwise { 0 } else { nudge });
                if !a.ty.is_complex() {
                    *out = within_image(op, comp, *out);
                }
            }
            if normwise && nudge != 0 {
                part = nudge_normwise(comp, width, part, nudge);
            }
            part[0] | (part[1] << width)
        })
        .collect();
    let buf: Buffer = from_bits(a.ty, &out)?;
    Ok(Array::new(a.ty, a.dims, buf))
}

/// A nudged result kept within its function's image: `tanh`, `erf`, `sin` and `cos` never
/// leave [-1, 1], `logistic` [0, 1], `exp` and `expm1` stay above 0 and -1 (a nudge past the
/// bound is no implementation's result).
fn within_image(op: Opcode, ty: PrimitiveType, bits: u128) -> u128 {
    let (lo, hi) = match op {
        Opcode::Tanh | Opcode::Erf | Opcode::Sin | Opcode::Cos => (-1.0, 1.0),
        Opcode::Logistic => (0.0, 1.0),
        Opcode::Exp => (0.0, f64::INFINITY),
        Opcode::Expm1 => (-1.0, f64::INFINITY),
        _ => return bits,
    };
    let v = value_of(ty, bits);
    if v.is_nan() || (lo..=hi).contains(&v) {
        return bits;
    }
    let b = v.clamp(lo, hi);
    let a = Array::new(PrimitiveType::F64, vec![1], Buffer::F64(vec![b]));
    crate::convert::convert(&a, ty)
        .map(|c| to_bits(&c.buf)[0])
        .unwrap_or(bits)
}

fn value_of(ty: PrimitiveType, bits: u128) -> f64 {
    from_bits(ty, &[bits])
        .ok()
        .map(|b| crate::elementwise::to_f64s(&b)[0])
        .unwrap_or(f64::NAN)
}

/// The parts (re, im) of a complex value of component type `ty`, each moved by `nudge` ulps of
/// the larger one; values with a non-finite part stay as they are.
fn nudge_normwise(ty: PrimitiveType, width: u32, part: [u128; 2], nudge: i32) -> [u128; 2] {
    let v = [value_of(ty, part[0]), value_of(ty, part[1])];
    if !v[0].is_finite() || !v[1].is_finite() {
        return part;
    }
    let big = usize::from(v[1].abs() > v[0].abs());
    let moved = adjust_bits(ty, width, part[big], None, nudge);
    // Exact: both are values of `ty`, a few ulps apart.
    let delta = value_of(ty, moved) - v[big];
    let other = v[1 - big] + delta;
    let other = match ty {
        PrimitiveType::F32 => (other as f32).to_bits() as u128,
        PrimitiveType::F64 => other.to_bits() as u128,
        _ => return part,
    };
    let mut out = part;
    out[big] = moved;
    out[1 - big] = other;
    out
}

fn adjust_bits(ty: PrimitiveType, width: u32, x: u128, nan_sign: Option<bool>, nudge: i32) -> u128 {
    let sign = 1u128 << (width - 1);
    let v = value_of(ty, x);
    if v.is_nan() {
        return match nan_sign {
            Some(true) => x | sign,
            Some(false) => x & !sign,
            None => x,
        };
    }
    if nudge == 0 || !v.is_finite() {
        return x;
    }
    // Ordered integer: -magnitude for negatives, so +-1 is one ulp up or down.
    let mag = (x & (sign - 1)) as i128;
    let ord = if x & sign != 0 { -mag } else { mag };
    let moved = ord + nudge as i128;
    let y = if moved < 0 {
        sign | (-moved) as u128
    } else {
        moved as u128
    };
    if value_of(ty, y).is_finite() {
        y
    } else {
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32_array(v: &[f32]) -> Array {
        Array::new(PrimitiveType::F32, vec![v.len()], Buffer::F32(v.to_vec()))
    }

    fn f32s(a: &Array) -> Vec<u32> {
        match &a.buf {
            Buffer::F32(v) => v.iter().map(|x| x.to_bits()).collect(),
            _ => panic!("not f32"),
        }
    }

    #[test]
    fn nan_sign_is_set_on_arithmetic_results_only() {
        let a = f32_array(&[f32::NAN, -f32::NAN, 1.0]);
        let neg = Variant {
            nan_sign: Some(true),
            ..Variant::default()
        };
        let r = adjust1(Opcode::Remainder, a.clone(), &neg).unwrap();
        assert_eq!(f32s(&r), vec![0xffc0_0000, 0xffc0_0000, 1f32.to_bits()]);
        let kept = adjust1(Opcode::Negate, a, &neg).unwrap();
        assert_eq!(f32s(&kept), f32s(&f32_array(&[f32::NAN, -f32::NAN, 1.0])));
    }

    /// clamp propagates a NaN bound as arithmetic does, so its NaN takes the variant's sign (XLA
    /// CPU returns -NaN for clamp(x, x, +NaN), which a TOTALORDER compare sees).
    #[test]
    fn clamp_nans_take_the_variants_sign() {
        let m = hlo::parse::parse_module(
            "HloModule c\n\nENTRY %main (x: f32[1], h: f32[]) -> s32[1] {\n  %x = f32[1] parameter(0)\n  %h = f32[] parameter(1)\n  %c = f32[1] clamp(%x, %x, %h)\n  ROOT %b = s32[1] bitcast-convert(%c)\n}\n",
        )
        .unwrap();
        let args = [
            hlo::Literal::Array(
                hlo::ArrayLiteral::from_scalars(
                    PrimitiveType::F32,
                    vec![1],
                    &[hlo::Scalar::F(-2.0)],
                )
                .unwrap(),
            ),
            hlo::Literal::Array(
                hlo::ArrayLiteral::from_scalars(
                    PrimitiveType::F32,
                    vec![],
                    &[hlo::Scalar::F(f64::NAN)],
                )
                .unwrap(),
            ),
        ];
        let bits = |nan_sign| {
            let opts = crate::EvalOptions {
                variant: Variant {
                    nan_sign,
                    ..Variant::default()
                },
                ..crate::EvalOptions::default()
            };
            let r = crate::evaluate_with(&m, &args, &opts).unwrap();
            r.as_array().unwrap().get(0).to_f64() as i64 as u32
        };
        assert_eq!(bits(None), 0x7fc0_0000);
        assert_eq!(bits(Some(true)), 0xffc0_0000);
    }

    /// A dot's inf * 0 and a complex modulus of NaN are arithmetic NaNs: their sign is the
    /// variant's (XLA CPU sorts a f8e5m2 dot's NaN of -inf * 0 as positive under TOTALORDER).
    #[test]
    fn dot_and_complex_abs_nans_take_the_variants_sign() {
        let m = hlo::parse::parse_module(
            "HloModule d\n\nENTRY %main (x: f32[1], y: f32[1], z: c64[]) -> (s32[], s32[]) {\n  %x = f32[1] parameter(0)\n  %y = f32[1] parameter(1)\n  %z = c64[] parameter(2)\n  %d = f32[] dot(%x, %y), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n  %a = f32[] abs(%z)\n  %bd = s32[] bitcast-convert(%d)\n  %ba = s32[] bitcast-convert(%a)\n  ROOT %t = (s32[], s32[]) tuple(%bd, %ba)\n}\n",
        )
        .unwrap();
        let f32s = |v: f64| {
            hlo::Literal::Array(
                hlo::ArrayLiteral::from_scalars(PrimitiveType::F32, vec![1], &[hlo::Scalar::F(v)])
                    .unwrap(),
            )
        };
        let z = hlo::Literal::Array(
            hlo::ArrayLiteral::from_scalars(
                PrimitiveType::C64,
                vec![],
                &[hlo::Scalar::C(f64::NAN, 1.0)],
            )
            .unwrap(),
        );
        let args = [f32s(f64::NEG_INFINITY), f32s(0.0), z];
        let signs = |nan_sign| {
            let opts = crate::EvalOptions {
                variant: Variant {
                    nan_sign,
                    ..Variant::default()
                },
                ..crate::EvalOptions::default()
            };
            let hlo::Literal::Tuple(t) = crate::evaluate_with(&m, &args, &opts).unwrap() else {
                panic!("a tuple")
            };
            t.iter()
                .map(|l| (l.as_array().unwrap().get(0).to_f64() as i64) < 0)
                .collect::<Vec<bool>>()
        };
        assert_eq!(signs(Some(true)), vec![true, true]);
        assert_eq!(signs(Some(false)), vec![false, false]);
    }

    /// `adjust` of a unary op's result `a` (its operand unknown: NaN).
    fn adjust1(op: Opcode, a: Array, v: &Variant) -> Result<Array> {
        let x = f32_array(&vec![f32::NAN; a.dims[0]]);
        adjust(op, &[&x], a, v)
    }

    #[test]
    fn nudge_moves_approximated_results_by_ulps_across_zero_and_not_past_the_largest() {
        let tiny = f32::from_bits(1);
        let a = f32_array(&[1.0, -1.0, -tiny, f32::MAX, f32::INFINITY, 0.0]);
        let up = Variant {
            nudge_ulps: 1,
            ..Variant::default()
        };
        let r = adjust1(Opcode::Cbrt, a.clone(), &up).unwrap();
        let b = f32s(&r);
        assert_eq!(b[0], 1f32.to_bits() + 1);
        assert_eq!(b[1], (-1f32).to_bits() - 1);
        assert_eq!(f32::from_bits(b[2]), 0.0);
        assert_eq!(f32::from_bits(b[3]), f32::MAX);
        assert_eq!(f32::from_bits(b[4]), f32::INFINITY);
        // cbrt(+-0) = +-0 is exact (`exact_result`).
        assert_eq!(b[5], 0);
        let down = Variant {
            nudge_ulps: -2,
            ..Variant::default()
        };
        let r = adjust1(Opcode::Cbrt, f32_array(&[tiny]), &down).unwrap();
        assert_eq!(f32s(&r), vec![0x8000_0001]);
        // Exact ops are never nudged.
        let r = adjust1(Opcode::Add, f32_array(&[1.0]), &up).unwrap();
        assert_eq!(f32s(&r), vec![1f32.to_bits()]);
    }

    /// Exact results stay, per opcode and operand: f64 tanh is +-1 on XLA CPU only from
    /// |x| = 20 on, so a 1 from x = 19.5 still moves.
    #[test]
    fn exact_results_of_approximated_functions_are_not_nudged() {
        let f64_array =
            |v: &[f64]| Array::new(PrimitiveType::F64, vec![v.len()], Buffer::F64(v.to_vec()));
        let f64s = |a: &Array| match &a.buf {
            Buffer::F64(v) => v.clone(),
            _ => panic!("not f64"),
        };
        let up = Variant {
            nudge_ulps: 1,
            ..Variant::default()
        };
        let x = f64_array(&[-40.0, 19.5, 0.0, 0.5]);
        let r = adjust(
            Opcode::Tanh,
            &[&x],
            f64_array(&[-1.0, 1.0, 0.0, 0.5f64.tanh()]),
            &up,
        );
        let r = f64s(&r.unwrap());
        assert_eq!(r[0], -1.0);
        // Not saturated in f64 (tanh(19.5) rounds to 1 but is no exact bound there), yet a
        // nudge never leaves the function's image [-1, 1].
        assert_eq!(r[1], 1.0);
        assert_eq!(r[2].to_bits(), 0);
        assert_eq!(r[3].to_bits(), 0.5f64.tanh().to_bits() + 1);
        // The same bound in f32 stays whatever the operand.
        let x = f32_array(&[9.5, -20.0]);
        let r = adjust(Opcode::Tanh, &[&x], f32_array(&[1.0, -1.0]), &up).unwrap();
        assert_eq!(f32s(&r), vec![1f32.to_bits(), (-1f32).to_bits()]);
        // Only the opcode's own bounds stay: expm1's -1, not its 1.
        let r = adjust1(Opcode::Expm1, f32_array(&[-1.0, 1.0]), &up).unwrap();
        assert_eq!(f32s(&r), vec![(-1f32).to_bits(), 1f32.to_bits() + 1]);
        // atan2: pi is exact in f32, pi/2 is not; in f64 both are.
        let (y, xx) = (f32_array(&[0.0, 1.0]), f32_array(&[-1.0, 0.0]));
        let pi = std::f32::consts::PI;
        let half = std::f32::consts::FRAC_PI_2;
        let r = adjust(Opcode::Atan2, &[&y, &xx], f32_array(&[pi, half]), &up).unwrap();
        assert_eq!(f32s(&r), vec![pi.to_bits(), half.to_bits() + 1]);
        let (y, xx) = (f64_array(&[0.0, 1.0]), f64_array(&[-1.0, 0.0]));
        let r = adjust(
            Opcode::Atan2,
            &[&y, &xx],
            f64_array(&[std::f64::consts::PI, std::f64::consts::FRAC_PI_2]),
            &up,
        );
        assert_eq!(
            f64s(&r.unwrap()),
            vec![std::f64::consts::PI, std::f64::consts::FRAC_PI_2]
        );
    }

    #[test]
    fn complex_parts_are_adjusted_separately() {
        let a = Array::new(
            PrimitiveType::C64,
            vec![1],
            Buffer::C64(vec![num_complex::Complex32::new(f32::NAN, 2.0)]),
        );
        let v = Variant {
            nan_sign: Some(true),
            nudge_ulps: 1,
            ..Variant::default()
        };
        let r = adjust(Opcode::Log, &[&a.clone()], a, &v).unwrap();
        match r.buf {
            Buffer::C64(v) => {
                assert_eq!(v[0].re.to_bits(), 0xffc0_0000);
                assert_eq!(v[0].im.to_bits(), 2f32.to_bits() + 1);
            }
            _ => panic!("not c64"),
        }
    }
}

#[cfg(test)]
mod normwise_tests {
    use super::*;
    use num_complex::Complex64;

    /// A normwise nudge moves the small part by ulps of the large one (so its sign can flip),
    /// leaves real results alone and keeps values with non-finite parts.
    #[test]
    fn normwise_nudge_moves_both_parts_by_ulps_of_the_larger() {
        let z = |re: f64, im: f64| {
            Array::new(
                PrimitiveType::C128,
                vec![1],
                Buffer::C128(vec![Complex64::new(re, im)]),
            )
        };
        let v = |n| Variant {
            nudge_ulps: n,
            normwise_complex: true,
            ..Variant::default()
        };
        let get = |a: Array| match a.buf {
            Buffer::C128(v) => v[0],
            _ => panic!("not c128"),
        };
        let ulp = f64::EPSILON / 2.0; // of 0.785 (in [0.5, 1))
        let down = get(adjust(Opcode::Atan2, &[], z(0.785, 1e-17), &v(-1)).unwrap());
        assert_eq!(down.re, 0.785 - ulp);
        assert_eq!(down.im, 1e-17 - ulp);
        assert!(down.im < 0.0);
        let up = get(adjust(Opcode::Atan2, &[], z(3e-17, -2.0), &v(2)).unwrap());
        assert_eq!(up.im, -2.0 + 2.0 * f64::EPSILON);
        assert_eq!(up.re, 3e-17 + 2.0 * f64::EPSILON);
        let inf = get(adjust(Opcode::Log, &[], z(f64::INFINITY, 1.0), &v(1)).unwrap());
        assert_eq!((inf.re, inf.im), (f64::INFINITY, 1.0));
        let real = adjust(
            Opcode::Log,
            &[],
            Array::new(PrimitiveType::F64, vec![1], Buffer::F64(vec![2.0])),
            &v(1),
        )
        .unwrap();
        assert!(matches!(real.buf, Buffer::F64(ref x) if x[0] == 2.0));
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod ftz_tests {
    #[test]
    fn flush_denormals_makes_subnormal_results_and_inputs_zero() {
        let tiny = std::hint::black_box(f32::MIN_POSITIVE);
        let half = std::hint::black_box(0.5f32);
        let sub = std::hint::black_box(f32::from_bits(1));
        let (r, d) = super::with_flush_denormals(|| (tiny * half, sub + 0.0)).unwrap();
        assert_eq!(r, 0.0);
        assert_eq!(d, 0.0);
        // Outside, the mode is off.
        assert!(tiny * half > 0.0);
    }

    /// Under the flush variant, arithmetic reads a bf16 subnormal operand as zero, as XLA CPU
    /// does (sqrt(9.18e-41) is 0, and so is a dot with it: 0 * -inf is NaN), while ops that only
    /// move bits (bitcast-convert) keep it; without the variant sqrt gives 9.58e-21.
    #[test]
    fn flush_variant_reads_subnormal_operands_of_arithmetic_as_zero() {
        use hlo::{ArrayLiteral, Literal, PrimitiveType, Scalar};
        let m = hlo::parse::parse_module(
            "HloModule f\n\nENTRY %main (x: bf16[1], y: bf16[1]) -> (bf16[1], s16[1], bf16[], f64[1], f32[1]) {\n  %x = bf16[1] parameter(0)\n  %y = bf16[1] parameter(1)\n  %s = bf16[1] sqrt(%x)\n  %b = s16[1] bitcast-convert(%x)\n  %d = bf16[] dot(%x, %y), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n  %w = f64[1] convert(%x)\n  %n = f32[1] convert(%x)\n  ROOT %t = (bf16[1], s16[1], bf16[], f64[1], f32[1]) tuple(%s, %b, %d, %w, %n)\n}\n",
        )
        .unwrap();
        let one = |v: f64| {
            Literal::Array(
                ArrayLiteral::from_scalars(PrimitiveType::Bf16, vec![1], &[Scalar::F(v)]).unwrap(),
            )
        };
        let args = [one(9.1835e-41), one(f64::NEG_INFINITY)];
        let run = |flush_denormals| {
            let opts = crate::EvalOptions {
                variant: super::Variant {
                    flush_denormals,
                    ..super::Variant::default()
                },
                ..crate::EvalOptions::default()
            };
            let Literal::Tuple(t) = crate::evaluate_with(&m, &args, &opts).unwrap() else {
                panic!("a tuple")
            };
            t.iter()
                .map(|l| l.as_array().unwrap().get(0).to_f64())
                .collect::<Vec<f64>>()
        };
        let plain = run(false);
        assert!(plain[0] > 9e-21 && plain[0] < 1e-20, "{plain:?}");
        assert_eq!(plain[1], 1.0);
        assert_eq!(plain[2], f64::NEG_INFINITY);
        let flushed = run(true);
        assert_eq!(flushed[0], 0.0, "{flushed:?}");
        assert_eq!(flushed[1], 1.0, "{flushed:?}");
        assert!(flushed[2].is_nan(), "{flushed:?}");
        // A widening to f64 goes through the hardware's conversion and reads it as zero.
        assert!(plain[3] > 9e-41 && plain[3] < 1e-40, "{plain:?}");
        assert_eq!(flushed[3], 0.0, "{flushed:?}");
        assert!(plain[4] > 9e-41, "{plain:?}");
    }
}

#[cfg(test)]
mod accumulation_tests {
    use super::*;
    use hlo::{ArrayLiteral, Literal, Scalar};

    /// [3e38, -3e38] . [2, 2]: the exact sum is 0 (Wide); rounded products overflow to inf and
    /// -inf and give NaN (Narrow); fused steps give inf, then inf - 6e38 = inf (NarrowFused).
    #[test]
    fn accumulation_variants_differ_where_partial_sums_overflow() {
        let m = hlo::parse::parse_module("HloModule d\n\nENTRY %main (a: f32[2], b: f32[2]) -> f32[] {\n  %a = f32[2] parameter(0)\n  %b = f32[2] parameter(1)\n  ROOT %d = f32[] dot(%a, %b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}\n").unwrap();
        let arr = |v: [f64; 2]| {
            Literal::Array(
                ArrayLiteral::from_scalars(
                    PrimitiveType::F32,
                    vec![2],
                    &[Scalar::F(v[0]), Scalar::F(v[1])],
                )
                .unwrap(),
            )
        };
        let args = [arr([3e38, -3e38]), arr([2.0, 2.0])];
        let run = |accumulation| {
            let opts = crate::EvalOptions {
                variant: Variant {
                    accumulation,
                    ..Variant::default()
                },
                ..Default::default()
            };
            match crate::evaluate_with(&m, &args, &opts).unwrap().leaves()[0].get(0) {
                Scalar::F(x) => x,
                s => panic!("{s:?}"),
            }
        };
        assert_eq!(run(Accumulation::Wide), 0.0);
        assert!(run(Accumulation::Narrow).is_nan());
        assert_eq!(run(Accumulation::NarrowFused), f64::INFINITY);
    }
}

#[cfg(test)]
mod reduce_order_tests {
    use super::ReduceOrder;

    /// Lanes: element i joins accumulator i mod L, lanes are combined pairwise, the init last.
    #[test]
    fn lanes_sum_each_lane_then_combine_them() {
        let order = std::cell::RefCell::new(Vec::new());
        let f = |a: String, b: String| {
            let s = format!("({a}+{b})");
            order.borrow_mut().push(s.clone());
            s
        };
        let xs = (0..6).map(|i| i.to_string());
        let got = ReduceOrder::Lanes(4).fold("i".to_string(), xs, f, |_| 0.0);
        assert_eq!(got, "(i+(((0+4)+(1+5))+(2+3)))");
    }

    /// [-0.5, 0, -3.4e38, 50.9] multiplied in f32: 0 in order (the zero comes first), NaN
    /// when the two large factors meet before it (pairs, reverse, the largest first).
    #[test]
    fn each_order_combines_the_elements_as_it_says() {
        let xs = [-0.5f32, 0.0, -3.4e38, 50.9];
        let mul = |a: f32, b: f32| a * b;
        let run = |o: ReduceOrder| o.fold(1.0f32, xs.iter().copied(), mul, |x| x.abs() as f64);
        assert_eq!(run(ReduceOrder::Sequential), 0.0);
        assert!(run(ReduceOrder::Pairwise).is_nan());
        assert!(run(ReduceOrder::LargestFirst).is_nan());
        assert!(run(ReduceOrder::Reverse).is_nan());
        // The init value comes first in order and last in a tree or by magnitude.
        let trace = |o: ReduceOrder| {
            o.fold(
                String::from("i"),
                ["a", "b", "c"].iter().map(|s| s.to_string()),
                |a, b| format!("({a}{b})"),
                |s| s.len() as f64,
            )
        };
        assert_eq!(trace(ReduceOrder::Sequential), "(((ia)b)c)");
        assert_eq!(trace(ReduceOrder::Reverse), "(((ic)b)a)");
        assert_eq!(trace(ReduceOrder::Pairwise), "(i((ab)c))");
        assert_eq!(trace(ReduceOrder::LargestFirst), "(i((ab)c))");
    }
}

//! convert, bitcast-convert and reduce-precision.

use crate::elementwise::{to_c64s, to_f64s, to_i64s};
use crate::value::{from_bits, to_bits, wrap_int, Array, Buffer, ComplexElem, FloatElem, IntElem};
use crate::variant::Narrowing;
use crate::{invalid, unsupported, Result};
use hlo::{PrimitiveType, TypeClass};
use num_complex::{Complex32, Complex64};

/// Source elements widened to one of three exact forms.
enum Wide {
    F(Vec<f64>),
    /// Integer values and whether they are unsigned (u64 values above i64::MAX stored as their
    /// bit pattern).
    I(Vec<i64>, bool),
    C(Vec<Complex64>),
}

/// An integer as f64 carrying a sticky bit, so that one later rounding to any format narrower
/// than 52 bits is correct (a direct i64 -> f64 -> narrow route would round twice).
fn int_to_f64_sticky(v: i128) -> f64 {
    let a = v.unsigned_abs();
    if a < (1u128 << 53) {
        return v as f64;
    }
    let nbits = 128 - a.leading_zeros();
    let k = nbits - 53;
    let mut m = a >> k;
    if a & ((1u128 << k) - 1) != 0 {
        m |= 1;
    }
    let r = (m as f64) * 2f64.powi(k as i32);
    if v < 0 {
        -r
    } else {
        r
    }
}

fn build_float<T: FloatElem>(w: &Wide, target64: bool) -> Vec<T> {
    match w {
        Wide::F(v) => v.iter().map(|&x| T::from_f64(x)).collect(),
        Wide::I(v, unsigned) => v
            .iter()
            .map(|&x| {
                let wide: i128 = if *unsigned {
                    x as u64 as i128
                } else {
                    x as i128
                };
                if target64 {
                    T::from_f64(wide as f64)
                } else {
                    T::from_f64(int_to_f64_sticky(wide))
                }
            })
            .collect(),
        Wide::C(v) => v.iter().map(|z| T::from_f64(z.re)).collect(),
    }
}

/// The source values rounded to f32 (once, to nearest even), as f64.
fn through_f32(w: Wide) -> Wide {
    match w {
        Wide::F(v) => Wide::F(v.into_iter().map(|x| x as f32 as f64).collect()),
        Wide::I(v, unsigned) => Wide::F(
            v.into_iter()
                .map(|x| if unsigned { x as u64 as f32 } else { x as f32 } as f64)
                .collect(),
        ),
        Wide::C(v) => Wide::F(v.into_iter().map(|z| z.re as f32 as f64).collect()),
    }
}

/// `x` rounded to f32 toward zero, with the last bit set when that was inexact ("round to
/// odd"): a later rounding to nearest of the result to 22 or fewer significant bits (f16 has 11)
/// gives what rounding `x` itself would. NaN and values beyond f32's range convert as `as`
/// does.
fn f64_to_f32_odd(x: f64) -> f32 {
    let y = x as f32;
    if x.is_nan() || y.is_infinite() || y as f64 == x {
        return y;
    }
    let mut b = y.to_bits();
    if (y as f64).abs() > x.abs() {
        // `as` rounded away from zero: the f32 below in magnitude is the truncation.
        b -= 1;
    }
    f32::from_bits(b | 1)
}

/// `x` rounded once to f16 (nearest, ties to even), as AVX512-FP16's `vcvtsd2sh` does; NaN
/// payloads as through f32. (`half::f16::from_f64` rounds through f32 where the CPU has F16C,
/// and its software path ignores the low 32 mantissa bits, so neither is one rounding.)
fn f64_to_f16_once(x: f64) -> half::f16 {
    half::f16::from_f32(f64_to_f32_odd(x))
}

/// The source values rounded once to f16 (see [`Narrowing::Direct`]).
fn direct_f16(w: &Wide) -> Vec<half::f16> {
    match w {
        Wide::F(v) => v.iter().map(|&x| f64_to_f16_once(x)).collect(),
        Wide::I(v, unsigned) => v
            .iter()
            .map(|&x| {
                let wide: i128 = if *unsigned {
                    x as u64 as i128
                } else {
                    x as i128
                };
                f64_to_f16_once(int_to_f64_sticky(wide))
            })
            .collect(),
        Wide::C(v) => v.iter().map(|z| f64_to_f16_once(z.re)).collect(),
    }
}

/// Float -> integer: NaN -> 0, out of range saturates, otherwise truncation toward zero.
fn f64_to_int(x: f64, bits: u32, signed: bool) -> i64 {
    if x.is_nan() {
        return 0;
    }
    if signed {
        let max = if bits >= 64 {
            i64::MAX
        } else {
            (1i64 << (bits - 1)) - 1
        };
        let min = if bits >= 64 {
            i64::MIN
        } else {
            -(1i64 << (bits - 1))
        };
        let t = x as i64; // saturating in Rust
        t.clamp(min, max)
    } else {
        let max = if bits >= 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let t = x as u64; // saturating, negatives to 0
        t.min(max) as i64
    }
}

fn build_int<T: IntElem>(w: &Wide, bits: u32, signed: bool) -> Vec<T> {
    match w {
        Wide::F(v) => v
            .iter()
            .map(|&x| T::from_i64(f64_to_int(x, bits, signed)))
            .collect(),
        Wide::I(v, _) => v
            .iter()
            .map(|&x| T::from_i64(wrap_int(x, bits, signed)))
            .collect(),
        Wide::C(v) => v
            .iter()
            .map(|z| T::from_i64(f64_to_int(z.re, bits, signed)))
            .collect(),
    }
}

fn build_complex<T: ComplexElem>(w: &Wide) -> Vec<T> {
    match w {
        Wide::F(v) => v
            .iter()
            .map(|&x| T::from_c(Complex64::new(x, 0.0)))
            .collect(),
        Wide::I(v, u) => v
            .iter()
            .map(|&x| {
                T::from_c(Complex64::new(
                    if *u { x as u64 as f64 } else { x as f64 },
                    0.0,
                ))
            })
            .collect(),
        Wide::C(v) => v.iter().map(|&z| T::from_c(z)).collect(),
    }
}

/// `convert` to element type `to`, narrowing to f16 through f32 (for the oracle's own
/// roundings of wide results; the `convert` op uses [`convert_with`] and the host's choice).
pub fn convert(a: &Array, to: PrimitiveType) -> Result<Array> {
    convert_with(a, to, Narrowing::ViaF32)
}

/// `convert` to element type `to`, narrowing f64, c128 and integers to f16 as `narrowing` says
/// (bf16 always through f32, f8 and f4 types always in one rounding).
pub fn convert_with(a: &Array, to: PrimitiveType, narrowing: Narrowing) -> Result<Array> {
    if a.ty == to {
        return Ok(a.clone());
    }
    let wide = match a.ty.class() {
        TypeClass::Float => Wide::F(to_f64s(&a.buf)),
        TypeClass::Signed | TypeClass::Pred => Wide::I(to_i64s(&a.buf).unwrap_or_default(), false),
        TypeClass::Unsigned => Wide::I(to_i64s(&a.buf).unwrap_or_default(), true),
        TypeClass::Complex => Wide::C(to_c64s(&a.buf)),
        TypeClass::Other => return Err(unsupported(format!("convert from {}", a.ty))),
    };
    let bits = to.bit_width();
    use PrimitiveType as P;
    let buf = match to {
        P::Pred => Buffer::Pred(match &wide {
            Wide::F(v) => v.iter().map(|&x| x != 0.0).collect(),
            Wide::I(v, _) => v.iter().map(|&x| x != 0).collect(),
            Wide::C(v) => v.iter().map(|z| z.re != 0.0 || z.im != 0.0).collect(),
        }),
        P::S1 | P::S2 | P::S4 | P::S8 => Buffer::S8(build_int(&wide, bits, true)),
        P::S16 => Buffer::S16(build_int(&wide, bits, true)),
        P::S32 => Buffer::S32(build_int(&wide, bits, true)),
        P::S64 => Buffer::S64(build_int(&wide, bits, true)),
        P::U1 | P::U2 | P::U4 | P::U8 => Buffer::U8(build_int(&wide, bits, false)),
        P::U16 => Buffer::U16(build_int(&wide, bits, false)),
        P::U32 => Buffer::U32(build_int(&wide, bits, false)),
        P::U64 => Buffer::U64(build_int(&wide, bits, false)),
        // XLA (CPU and HloEvaluator, through Eigen's half/bfloat16 constructors) narrows to f16
        // and bf16 through f32: two roundings for f64 and integer sources. XLA CPU on a host
        // with AVX512-FP16 narrows to f16 in one (see `crate::host`).
        P::F16 => Buffer::F16(match narrowing {
            Narrowing::ViaF32 => build_float(&through_f32(wide), false),
            Narrowing::Direct => direct_f16(&wide),
        }),
        P::Bf16 => Buffer::Bf16(build_float(&through_f32(wide), false)),
        P::F32 => Buffer::F32(match &wide {
            // i64 -> f32 directly: Rust's `as` rounds once to nearest even.
            Wide::I(v, u) => v
                .iter()
                .map(|&x| if *u { x as u64 as f32 } else { x as f32 })
                .collect(),
            w => build_float(w, false),
        }),
        P::F64 => Buffer::F64(build_float(&wide, true)),
        P::F8E5M2 => Buffer::F8E5M2(build_float(&wide, false)),
        P::F8E4M3 => Buffer::F8E4M3(build_float(&wide, false)),
        P::F8E4M3FN => Buffer::F8E4M3FN(build_float(&wide, false)),
        P::F8E4M3B11FNUZ => Buffer::F8E4M3B11FNUZ(build_float(&wide, false)),
        P::F8E3M4 => Buffer::F8E3M4(build_float(&wide, false)),
        P::F8E5M2FNUZ => Buffer::F8E5M2FNUZ(build_float(&wide, false)),
        P::F8E4M3FNUZ => Buffer::F8E4M3FNUZ(build_float(&wide, false)),
        P::F8E8M0FNU => Buffer::F8E8M0FNU(build_float(&wide, false)),
        P::F4E2M1FN => Buffer::F4E2M1FN(build_float(&wide, false)),
        P::C64 => Buffer::C64(build_complex::<Complex32>(&wide)),
        P::C128 => Buffer::C128(build_complex::<Complex64>(&wide)),
        P::Token | P::Opaque => return Err(unsupported(format!("convert to {to}"))),
    };
    Ok(Array::new(to, a.dims.clone(), buf))
}

/// `bitcast-convert`: same bits, new element type. Between widths, the wider element holds the
/// narrower ones little-endian (element 0 of the new minor dimension is the least significant).
/// A `pred` is a byte, as XLA stores it (`storage_bit_width`): its bits are 0 or 1, and bits
/// made into a `pred` are true when any is set. XLA CPU keeps such a byte as it is (an f64's
/// bytes in `pred[8]`: measured on jaxlib 0.10.2, its result buffer holds 0xef, 0xcd, ... for
/// 0x0123456789abcdef); the oracle keeps the truth value a nonzero byte reads as.
pub fn bitcast_convert(a: &Array, to: PrimitiveType, out_dims: Vec<usize>) -> Result<Array> {
    let wi = a.ty.storage_bit_width();
    let wo = to.storage_bit_width();
    if wi == 0 || wo == 0 {
        return Err(unsupported(format!("bitcast-convert {} -> {to}", a.ty)));
    }
    let bits = to_bits(&a.buf);
    let out: Vec<u128> = if wi == wo {
        bits
    } else if wi > wo {
        if wi % wo != 0 {
            return Err(invalid("bitcast-convert widths do not divide"));
        }
        let r = (wi / wo) as usize;
        let mask = (1u128 << wo) - 1;
        let mut out = Vec::with_capacity(bits.len() * r);
        for b in bits {
            for k in 0..r {
                out.push((b >> (k as u32 * wo)) & mask);
            }
        }
        out
    } else {
        if wo % wi != 0 {
            return Err(invalid("bitcast-convert widths do not divide"));
        }
        let r = (wo / wi) as usize;
        let mask = if wi >= 128 {
            u128::MAX
        } else {
            (1u128 << wi) - 1
        };
        bits.chunks(r)
            .map(|c| {
                c.iter()
                    .enumerate()
                    .fold(0u128, |acc, (k, &b)| acc | (b & mask) << (k as u32 * wi))
            })
            .collect()
    };
    if out.len() != out_dims.iter().product::<usize>() {
        return Err(invalid(format!(
            "bitcast-convert of {}{:?} cannot make {to}{out_dims:?}",
            a.ty, a.dims
        )));
    }
    let out = if to == PrimitiveType::Pred {
        out.into_iter().map(|b| (b != 0) as u128).collect()
    } else {
        out
    };
    Ok(Array::new(to, out_dims, from_bits(to, &out)?))
}

/// XLA's reduce-precision on the bits of a float with `src_e` exponent and `src_m` mantissa bits:
/// round the mantissa to nearest even, then exponent overflow to +-inf and underflow (denormals
/// included) to +-0. NaN inputs are returned unchanged by the caller.
pub fn reduce_precision_bits(
    mut bits: u64,
    src_e: u32,
    src_m: u32,
    exponent_bits: u32,
    mantissa_bits: u32,
) -> u64 {
    let width = 1 + src_e + src_m;
    let all = if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    if mantissa_bits < src_m {
        let last_bit_mask = 1u64 << (src_m - mantissa_bits);
        let base_bias = (last_bit_mask >> 1).wrapping_sub(1);
        let last_bit = (bits & last_bit_mask) >> (src_m - mantissa_bits);
        let bias = last_bit.wrapping_add(base_bias);
        let trunc_mask = !(last_bit_mask - 1);
        bits = (bits.wrapping_add(bias) & trunc_mask) & all;
    }
    if exponent_bits < src_e {
        let sign = bits & (1u64 << (width - 1));
        let exp_mask = ((1u64 << src_e) - 1) << src_m;
        let bias = (1i64 << (src_e - 1)) - 1;
        let reduced_bias = (1i64 << (exponent_bits - 1)) - 1;
        let max_e = (bias + reduced_bias) as u64;
        let min_e = (bias - reduced_bias) as u64;
        let e = bits & exp_mask;
        if e > (max_e << src_m) {
            bits = sign | exp_mask;
        } else if e <= (min_e << src_m) {
            bits = sign;
        }
    }
    bits
}

/// `reduce-precision` on a float array (bit-exact on f16/bf16/f32/f64; other float types are
/// handled in an f64 container). NaN stays NaN, except with `mantissa_bits = 0`, where no NaN
/// is representable: XLA gives +inf then.
pub fn reduce_precision(a: &Array, exponent_bits: i64, mantissa_bits: i64) -> Result<Array> {
    if exponent_bits < 1 || mantissa_bits < 0 {
        return Err(invalid(
            "reduce-precision needs exponent_bits >= 1 and mantissa_bits >= 0",
        ));
    }
    let (e, m) = (exponent_bits.min(64) as u32, mantissa_bits.min(64) as u32);
    let buf = match &a.buf {
        Buffer::F32(v) => {
            Buffer::F32(
                v.iter()
                    .map(|&x| {
                        if x.is_nan() {
                            if m == 0 {
                                f32::INFINITY
                            } else {
                                x
                            }
                        } else {
                            f32::from_bits(
                                reduce_precision_bits(x.to_bits() as u64, 8, 23, e, m) as u32
                            )
                        }
                    })
                    .collect(),
            )
        }
        Buffer::F64(v) => Buffer::F64(
            v.iter()
                .map(|&x| {
                    if x.is_nan() {
                        if m == 0 {
                            f64::INFINITY
                        } else {
                            x
                        }
                    } else {
                        f64::from_bits(reduce_precision_bits(x.to_bits(), 11, 52, e, m))
                    }
                })
                .collect(),
        ),
        Buffer::F16(v) => Buffer::F16(
            v.iter()
                .map(|&x| {
                    if x.is_nan() {
                        if m == 0 {
                            half::f16::INFINITY
                        } else {
                            x
                        }
                    } else {
                        half::f16::from_bits(
                            reduce_precision_bits(x.to_bits() as u64, 5, 10, e, m) as u16
                        )
                    }
                })
                .collect(),
        ),
        Buffer::Bf16(v) => Buffer::Bf16(
            v.iter()
                .map(|&x| {
                    if x.is_nan() {
                        if m == 0 {
                            half::bf16::INFINITY
                        } else {
                            x
                        }
                    } else {
                        half::bf16::from_bits(
                            reduce_precision_bits(x.to_bits() as u64, 8, 7, e, m) as u16
                        )
                    }
                })
                .collect(),
        ),
        b => {
            let (se, sm) =
                a.ty.float_bits()
                    .ok_or_else(|| unsupported(format!("reduce-precision on {}", a.ty)))?;
            // XLA reduces these types in a wider IEEE type, so `exponent_bits` is an IEEE
            // exponent range: the fn/fnuz types, whose ranges differ from IEEE's, overflow to
            // inf (NaN in the type) and flush below it even at their own widths. For the IEEE
            // formats (f8e5m2, f8e4m3, f8e3m4) a reduction to at least their widths changes
            // nothing, subnormals included.
            let ieee = matches!(
                a.ty,
                PrimitiveType::F8E5M2 | PrimitiveType::F8E4M3 | PrimitiveType::F8E3M4
            );
            if ieee && e >= se && m >= sm {
                return Ok(a.clone());
            }
            // The 5-exponent-bit types are reduced in f16, where their subnormals stay
            // subnormal: rounding one to no mantissa bits rounds its f16 subnormal mantissa
            // (0.75 * 2^-14 becomes 2^-14 and stays), not the normalized f64 one (1.5 * 2^-15
            // would round to 2^-15 and flush), as XLA CPU and the StableHLO reference do.
            let in_f16 = matches!(a.ty, PrimitiveType::F8E5M2 | PrimitiveType::F8E5M2FNUZ);
            let (e2, m2) = (e.min(11), m.min(sm));
            let reduce = |f: f64| -> f64 {
                if in_f16 {
                    let h = half::f16::from_f64(f).to_bits() as u64;
                    half::f16::from_bits(reduce_precision_bits(h, 5, 10, e, m2) as u16).to_f64()
                } else {
                    f64::from_bits(reduce_precision_bits(f.to_bits(), 11, 52, e2, m2))
                }
            };
            crate::map_float_buf!(b, v => v.iter().map(|x| {
                let f = x.to_f64();
                if f.is_nan() { if m == 0 { FloatElem::from_f64(f64::INFINITY) } else { *x } } else {
                    FloatElem::from_f64(reduce(f))
                }
            }).collect(), return Err(unsupported(format!("reduce-precision on {}", a.ty))))
        }
    };
    Ok(Array::new(a.ty, a.dims.clone(), buf))
}

//! Literals: the one value currency between the oracle, the XLA worker, the comparator and repro files.
//!
//! An array literal is its element type, its dimensions and its elements as little-endian bytes in
//! row-major logical order (layouts never reach a literal). Each element takes
//! [`PrimitiveType::byte_size`] bytes: sub-byte types one byte each (sign-extended for signed
//! types), pred one byte holding 0 or 1.

use crate::shape::{ArrayShape, Shape};
use crate::types::{PrimitiveType, TypeClass};
use half::{bf16, f16};
use serde::{Deserialize, Serialize};

/// A value: an array, a tuple of values, or a token.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Literal {
    Array(ArrayLiteral),
    Tuple(Vec<Literal>),
    Token,
}

/// An array of elements of one type.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ArrayLiteral {
    pub ty: PrimitiveType,
    pub dims: Vec<i64>,
    pub data: Vec<u8>,
}

/// One element's value, widened so that every element type fits exactly
/// (every narrow float is exact in f64).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Pred(bool),
    S(i64),
    U(u64),
    F(f64),
    C(f64, f64),
}

impl Scalar {
    /// The value as f64 (real part for complex, 0/1 for pred).
    pub fn to_f64(self) -> f64 {
        match self {
            Scalar::Pred(b) => b as u8 as f64,
            Scalar::S(v) => v as f64,
            Scalar::U(v) => v as f64,
            Scalar::F(v) => v,
            Scalar::C(re, _) => re,
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum LiteralError {
    #[error("{ty}[{dims}] needs {expected} bytes of data, got {got}")]
    Size {
        ty: PrimitiveType,
        dims: String,
        expected: usize,
        got: usize,
    },
    #[error("dimension {0} is negative or dynamic: a literal needs a static shape")]
    BadDim(i64),
    #[error("{0} has no array literal")]
    NotArrayType(PrimitiveType),
    #[error("{ty}[{dims}] has more bytes than this machine can address")]
    TooLarge { ty: PrimitiveType, dims: String },
}

fn dims_text(dims: &[i64]) -> String {
    dims.iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

impl ArrayLiteral {
    /// A literal of zeros (false for pred).
    pub fn zeros(ty: PrimitiveType, dims: Vec<i64>) -> Result<ArrayLiteral, LiteralError> {
        if !ty.is_array_type() {
            return Err(LiteralError::NotArrayType(ty));
        }
        let bytes = byte_count(ty, &dims)?;
        Ok(ArrayLiteral {
            ty,
            data: vec![0u8; bytes],
            dims,
        })
    }

    /// Wraps raw bytes, checking that their length fits the shape.
    pub fn from_bytes(
        ty: PrimitiveType,
        dims: Vec<i64>,
        data: Vec<u8>,
    ) -> Result<ArrayLiteral, LiteralError> {
        if !ty.is_array_type() {
            return Err(LiteralError::NotArrayType(ty));
        }
        let expected = byte_count(ty, &dims)?;
        if expected != data.len() {
            return Err(LiteralError::Size {
                ty,
                dims: dims_text(&dims),
                expected,
                got: data.len(),
            });
        }
        Ok(ArrayLiteral { ty, dims, data })
    }

    /// Builds a literal from widened element values, converting each to `ty`
    /// (round to nearest even for floats, wrap for integers).
    pub fn from_scalars(
        ty: PrimitiveType,
        dims: Vec<i64>,
        values: &[Scalar],
    ) -> Result<ArrayLiteral, LiteralError> {
        let mut lit = ArrayLiteral::zeros(ty, dims)?;
        if values.len() != lit.len() {
            return Err(LiteralError::Size {
                ty,
                dims: dims_text(&lit.dims),
                expected: lit.len(),
                got: values.len(),
            });
        }
        for (i, v) in values.iter().enumerate() {
            lit.set(i, *v);
        }
        Ok(lit)
    }

    pub fn len(&self) -> usize {
        self.data
            .len()
            .checked_div(self.ty.byte_size())
            .unwrap_or(0)
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn shape(&self) -> ArrayShape {
        ArrayShape::new(self.ty, self.dims.clone())
    }

    /// The storage bytes of the i-th element (row-major).
    pub fn bytes_at(&self, i: usize) -> &[u8] {
        let w = self.ty.byte_size();
        &self.data[i * w..(i + 1) * w]
    }

    /// The i-th element (row-major), widened.
    pub fn get(&self, i: usize) -> Scalar {
        decode(self.ty, self.bytes_at(i))
    }

    /// Stores a widened value into the i-th element, converting to the element type.
    pub fn set(&mut self, i: usize, v: Scalar) {
        let w = self.ty.byte_size();
        encode(self.ty, v, &mut self.data[i * w..(i + 1) * w]);
    }

    /// The raw bits of the i-th element, zero-extended (for bitwise comparison and printing NaN payloads).
    pub fn bits(&self, i: usize) -> u128 {
        let mut buf = [0u8; 16];
        let b = self.bytes_at(i);
        buf[..b.len()].copy_from_slice(b);
        u128::from_le_bytes(buf)
    }
}

/// The bytes of a `ty[dims]` literal, with checked arithmetic.
fn byte_count(ty: PrimitiveType, dims: &[i64]) -> Result<usize, LiteralError> {
    let too_large = || LiteralError::TooLarge {
        ty,
        dims: dims_text(dims),
    };
    dims.iter()
        .try_fold(1usize, |acc, &d| {
            if d < 0 {
                Err(LiteralError::BadDim(d))
            } else {
                acc.checked_mul(d as usize).ok_or_else(too_large)
            }
        })?
        .checked_mul(ty.byte_size())
        .ok_or_else(too_large)
}

fn sign_extend(v: u64, bits: u32) -> i64 {
    let shift = 64 - bits;
    ((v << shift) as i64) >> shift
}

/// Decodes one element from its little-endian storage bytes.
pub fn decode(ty: PrimitiveType, b: &[u8]) -> Scalar {
    use PrimitiveType::*;
    let le = |n: usize| {
        let mut buf = [0u8; 8];
        buf[..n].copy_from_slice(&b[..n]);
        u64::from_le_bytes(buf)
    };
    match ty {
        Pred => Scalar::Pred(b[0] != 0),
        S1 | S2 | S4 | S8 | S16 | S32 | S64 => {
            let bits = ty.bit_width();
            let raw = le(ty.byte_size());
            let mask = if bits == 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
            Scalar::S(sign_extend(raw & mask, bits))
        }
        U1 | U2 | U4 | U8 | U16 | U32 | U64 => {
            let bits = ty.bit_width();
            let raw = le(ty.byte_size());
            let mask = if bits == 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
            Scalar::U(raw & mask)
        }
        F16 => Scalar::F(f16::from_bits(le(2) as u16).to_f64()),
        Bf16 => Scalar::F(bf16::from_bits(le(2) as u16).to_f64()),
        F32 => Scalar::F(f32::from_bits(le(4) as u32) as f64),
        F64 => Scalar::F(f64::from_bits(le(8))),
        C64 => Scalar::C(
            f32::from_bits(le(4) as u32) as f64,
            f32::from_bits(u32::from_le_bytes([b[4], b[5], b[6], b[7]])) as f64,
        ),
        C128 => Scalar::C(
            f64::from_bits(le(8)),
            f64::from_bits(u64::from_le_bytes(b[8..16].try_into().unwrap())),
        ),
        F8E5M2 | F8E4M3 | F8E4M3FN | F8E4M3B11FNUZ | F8E3M4 | F8E5M2FNUZ | F8E4M3FNUZ
        | F8E8M0FNU | F4E2M1FN => Scalar::F(micro_to_f32(ty, b[0]) as f64),
        Token | Opaque => Scalar::U(0),
    }
}

/// Encodes a widened value as one element of `ty` (round to nearest even; integers wrap).
pub fn encode(ty: PrimitiveType, v: Scalar, out: &mut [u8]) {
    use PrimitiveType::*;
    let as_f64 = v.to_f64();
    let as_u64 = match v {
        Scalar::Pred(b) => b as u64,
        Scalar::S(x) => x as u64,
        Scalar::U(x) => x,
        Scalar::F(x) => x as i64 as u64,
        Scalar::C(x, _) => x as i64 as u64,
    };
    match ty.class() {
        TypeClass::Pred => out[0] = (as_u64 != 0 || as_f64 != 0.0) as u8,
        TypeClass::Signed => {
            let bits = ty.bit_width();
            let val = sign_extend(as_u64 & mask(bits), bits);
            let bytes = val.to_le_bytes();
            out.copy_from_slice(&bytes[..out.len()]);
        }
        TypeClass::Unsigned => {
            let bytes = (as_u64 & mask(ty.bit_width())).to_le_bytes();
            out.copy_from_slice(&bytes[..out.len()]);
        }
        TypeClass::Complex => {
            let (re, im) = match v {
                Scalar::C(re, im) => (re, im),
                _ => (as_f64, 0.0),
            };
            if ty == C64 {
                out[..4].copy_from_slice(&(re as f32).to_le_bytes());
                out[4..].copy_from_slice(&(im as f32).to_le_bytes());
            } else {
                out[..8].copy_from_slice(&re.to_le_bytes());
                out[8..].copy_from_slice(&im.to_le_bytes());
            }
        }
        TypeClass::Float => match ty {
            F16 => out.copy_from_slice(&f16::from_f64(as_f64).to_bits().to_le_bytes()),
            Bf16 => out.copy_from_slice(&bf16::from_f64(as_f64).to_bits().to_le_bytes()),
            F32 => out.copy_from_slice(&(as_f64 as f32).to_le_bytes()),
            F64 => out.copy_from_slice(&as_f64.to_le_bytes()),
            _ => out[0] = micro_from_f64(ty, as_f64),
        },
        TypeClass::Other => {}
    }
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// The value of an f8/f4 bit pattern.
pub fn micro_to_f32(ty: PrimitiveType, bits: u8) -> f32 {
    use microfloat::*;
    use PrimitiveType::*;
    match ty {
        F8E5M2 => f8e5m2::from_bits(bits).to_f32(),
        F8E4M3 => f8e4m3::from_bits(bits).to_f32(),
        F8E4M3FN => f8e4m3fn::from_bits(bits).to_f32(),
        F8E4M3B11FNUZ => f8e4m3b11fnuz::from_bits(bits).to_f32(),
        F8E3M4 => f8e3m4::from_bits(bits).to_f32(),
        F8E5M2FNUZ => f8e5m2fnuz::from_bits(bits).to_f32(),
        F8E4M3FNUZ => f8e4m3fnuz::from_bits(bits).to_f32(),
        F8E8M0FNU => f8e8m0fnu::from_bits(bits).to_f32(),
        F4E2M1FN => f4e2m1fn::from_bits(bits & 0x0f).to_f32(),
        _ => f32::NAN,
    }
}

/// The nearest f8/f4 bit pattern to a value (round to nearest even).
pub fn micro_from_f64(ty: PrimitiveType, v: f64) -> u8 {
    use microfloat::*;
    use PrimitiveType::*;
    // Rounding f64 -> f32 first is exact for every value these formats can tell apart
    // except ties below f32's precision, which no 8-bit format can see.
    let v = v as f32;
    match ty {
        F8E5M2 => f8e5m2::from_f32(v).to_bits(),
        F8E4M3 => f8e4m3::from_f32(v).to_bits(),
        F8E4M3FN => f8e4m3fn::from_f32(v).to_bits(),
        F8E4M3B11FNUZ => f8e4m3b11fnuz::from_f32(v).to_bits(),
        F8E3M4 => f8e3m4::from_f32(v).to_bits(),
        F8E5M2FNUZ => f8e5m2fnuz::from_f32(v).to_bits(),
        F8E4M3FNUZ => f8e4m3fnuz::from_f32(v).to_bits(),
        F8E8M0FNU => f8e8m0fnu::from_f32(v).to_bits(),
        F4E2M1FN => f4e2m1fn::from_f32(v).to_bits() & 0x0f,
        _ => 0,
    }
}

impl Literal {
    /// A literal of zeros for a static shape.
    pub fn zeros(shape: &Shape) -> Result<Literal, LiteralError> {
        Ok(match shape {
            Shape::Array(a) => Literal::Array(ArrayLiteral::zeros(a.ty, a.dims.clone())?),
            Shape::Tuple(t) => {
                Literal::Tuple(t.iter().map(Literal::zeros).collect::<Result<_, _>>()?)
            }
            Shape::Token => Literal::Token,
            Shape::Opaque => return Err(LiteralError::NotArrayType(PrimitiveType::Opaque)),
            Shape::Buffer(a) => return Err(LiteralError::NotArrayType(a.ty)),
        })
    }

    /// The literal's shape (no layout).
    pub fn shape(&self) -> Shape {
        match self {
            Literal::Array(a) => Shape::Array(a.shape()),
            Literal::Tuple(t) => Shape::Tuple(t.iter().map(Literal::shape).collect()),
            Literal::Token => Shape::Token,
        }
    }

    pub fn as_array(&self) -> Option<&ArrayLiteral> {
        match self {
            Literal::Array(a) => Some(a),
            _ => None,
        }
    }

    /// Array leaves in depth-first order, as XLA flattens tuple results.
    pub fn leaves(&self) -> Vec<&ArrayLiteral> {
        let mut out = Vec::new();
        fn walk<'a>(l: &'a Literal, out: &mut Vec<&'a ArrayLiteral>) {
            match l {
                Literal::Array(a) => out.push(a),
                Literal::Tuple(t) => t.iter().for_each(|e| walk(e, out)),
                Literal::Token => {}
            }
        }
        walk(self, &mut out);
        out
    }

    /// Rebuilds a tuple tree of `shape` from flattened leaves (the inverse of [`Literal::leaves`]).
    pub fn from_leaves(
        shape: &Shape,
        leaves: &mut impl Iterator<Item = ArrayLiteral>,
    ) -> Option<Literal> {
        Some(match shape {
            Shape::Array(_) => Literal::Array(leaves.next()?),
            Shape::Tuple(t) => Literal::Tuple(
                t.iter()
                    .map(|s| Literal::from_leaves(s, leaves))
                    .collect::<Option<_>>()?,
            ),
            Shape::Token => Literal::Token,
            Shape::Opaque | Shape::Buffer(_) => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use PrimitiveType::*;

    /// c128[2^60] is 2^64 bytes: the size must not wrap to 0 and accept no data.
    #[test]
    fn a_size_that_overflows_is_an_error_not_an_empty_literal() {
        let e = ArrayLiteral::from_bytes(C128, vec![1 << 60], Vec::new()).unwrap_err();
        assert!(matches!(e, LiteralError::TooLarge { .. }), "{e}");
        assert!(e.to_string().contains("c128[1152921504606846976]"), "{e}");
        let e = ArrayLiteral::zeros(F32, vec![1 << 62, 4]).unwrap_err();
        assert!(matches!(e, LiteralError::TooLarge { .. }), "{e}");
    }

    #[test]
    fn every_type_round_trips_small_values() {
        for ty in PrimitiveType::ALL_ARRAY {
            let vals: Vec<Scalar> = match ty.class() {
                TypeClass::Pred => vec![Scalar::Pred(true), Scalar::Pred(false)],
                TypeClass::Signed if ty.bit_width() == 1 => vec![Scalar::S(-1), Scalar::S(0)],
                TypeClass::Signed => vec![Scalar::S(-1), Scalar::S(1)],
                TypeClass::Unsigned => vec![Scalar::U(1), Scalar::U(0)],
                TypeClass::Float if ty == F8E8M0FNU => vec![Scalar::F(1.0), Scalar::F(0.5)],
                TypeClass::Float => vec![Scalar::F(1.0), Scalar::F(-0.5)],
                TypeClass::Complex => vec![Scalar::C(1.5, -2.0), Scalar::C(0.0, 3.0)],
                TypeClass::Other => unreachable!(),
            };
            let lit = ArrayLiteral::from_scalars(ty, vec![2], &vals).unwrap();
            assert_eq!(lit.get(0), vals[0], "{ty}");
            assert_eq!(lit.get(1), vals[1], "{ty}");
        }
    }

    #[test]
    fn signed_sub_byte_values_are_sign_extended_in_storage() {
        let lit = ArrayLiteral::from_scalars(S4, vec![1], &[Scalar::S(-3)]).unwrap();
        assert_eq!(lit.data, vec![0xfd]);
        assert_eq!(lit.get(0), Scalar::S(-3));
    }

    #[test]
    fn size_mismatch_is_an_error() {
        assert!(ArrayLiteral::from_bytes(F32, vec![2], vec![0; 7]).is_err());
        assert!(ArrayLiteral::zeros(F32, vec![-1]).is_err());
    }

    #[test]
    fn leaves_round_trip_through_tuple_shapes() {
        let shape = Shape::Tuple(vec![
            Shape::array(F32, vec![2]),
            Shape::Tuple(vec![Shape::scalar(S32)]),
        ]);
        let lit = Literal::zeros(&shape).unwrap();
        let leaves: Vec<ArrayLiteral> = lit.leaves().into_iter().cloned().collect();
        let back = Literal::from_leaves(&shape, &mut leaves.into_iter()).unwrap();
        assert_eq!(back, lit);
    }
}

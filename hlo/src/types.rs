//! XLA element types (`PrimitiveType` in xla_data.proto), named as HLO text names them.

use serde::{Deserialize, Serialize};
use std::fmt;

/// An XLA element type. `Tuple` is not listed: tuples are a [`crate::Shape`] variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum PrimitiveType {
    Pred,
    S1,
    S2,
    S4,
    S8,
    S16,
    S32,
    S64,
    U1,
    U2,
    U4,
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
    C128,
    Token,
    Opaque,
}

/// What kind of numbers an element type holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TypeClass {
    Pred,
    Signed,
    Unsigned,
    Float,
    Complex,
    /// token and opaque: no numeric value.
    Other,
}

use PrimitiveType::*;

impl PrimitiveType {
    /// Every array element type, in the order of xla_data.proto's families.
    pub const ALL_ARRAY: [PrimitiveType; 30] = [
        Pred,
        S1,
        S2,
        S4,
        S8,
        S16,
        S32,
        S64,
        U1,
        U2,
        U4,
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
        C128,
    ];

    /// The name HLO text uses (`f32`, `bf16`, `f8e4m3fn`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Pred => "pred",
            S1 => "s1",
            S2 => "s2",
            S4 => "s4",
            S8 => "s8",
            S16 => "s16",
            S32 => "s32",
            S64 => "s64",
            U1 => "u1",
            U2 => "u2",
            U4 => "u4",
            U8 => "u8",
            U16 => "u16",
            U32 => "u32",
            U64 => "u64",
            F16 => "f16",
            Bf16 => "bf16",
            F32 => "f32",
            F64 => "f64",
            F8E5M2 => "f8e5m2",
            F8E4M3 => "f8e4m3",
            F8E4M3FN => "f8e4m3fn",
            F8E4M3B11FNUZ => "f8e4m3b11fnuz",
            F8E3M4 => "f8e3m4",
            F8E5M2FNUZ => "f8e5m2fnuz",
            F8E4M3FNUZ => "f8e4m3fnuz",
            F8E8M0FNU => "f8e8m0fnu",
            F4E2M1FN => "f4e2m1fn",
            C64 => "c64",
            C128 => "c128",
            Token => "token",
            Opaque => "opaque",
        }
    }

    pub fn from_name(s: &str) -> Option<PrimitiveType> {
        PrimitiveType::ALL_ARRAY
            .into_iter()
            .chain([Token, Opaque])
            .find(|t| t.name() == s)
    }

    pub fn class(self) -> TypeClass {
        match self {
            Pred => TypeClass::Pred,
            S1 | S2 | S4 | S8 | S16 | S32 | S64 => TypeClass::Signed,
            U1 | U2 | U4 | U8 | U16 | U32 | U64 => TypeClass::Unsigned,
            C64 | C128 => TypeClass::Complex,
            Token | Opaque => TypeClass::Other,
            _ => TypeClass::Float,
        }
    }

    pub fn is_float(self) -> bool {
        self.class() == TypeClass::Float
    }
    pub fn is_complex(self) -> bool {
        self.class() == TypeClass::Complex
    }
    pub fn is_integer(self) -> bool {
        matches!(self.class(), TypeClass::Signed | TypeClass::Unsigned)
    }
    pub fn is_signed_integer(self) -> bool {
        self.class() == TypeClass::Signed
    }
    pub fn is_unsigned_integer(self) -> bool {
        self.class() == TypeClass::Unsigned
    }
    /// Floating point or complex.
    pub fn is_floating_or_complex(self) -> bool {
        self.is_float() || self.is_complex()
    }
    /// pred, integers, floats and complex: types an array may hold.
    pub fn is_array_type(self) -> bool {
        self.class() != TypeClass::Other
    }

    /// Logical width in bits (pred counts 1).
    pub fn bit_width(self) -> u32 {
        match self {
            Pred | S1 | U1 => 1,
            S2 | U2 => 2,
            S4 | U4 | F4E2M1FN => 4,
            S8 | U8 | F8E5M2 | F8E4M3 | F8E4M3FN | F8E4M3B11FNUZ | F8E3M4 | F8E5M2FNUZ
            | F8E4M3FNUZ | F8E8M0FNU => 8,
            S16 | U16 | F16 | Bf16 => 16,
            S32 | U32 | F32 => 32,
            S64 | U64 | F64 | C64 => 64,
            C128 => 128,
            Token | Opaque => 0,
        }
    }

    /// Bits an element takes in memory as XLA's `primitive_util::StorageBitWidth` counts them:
    /// [`Self::bit_width`], except `pred`, which is stored as a byte (8). `bitcast-convert`'s
    /// shape rule and bits use it: an f64 is `pred[8]`, an s8 is one `pred`, and a `pred` is
    /// two s4 values.
    pub fn storage_bit_width(self) -> u32 {
        match self {
            Pred => 8,
            t => t.bit_width(),
        }
    }

    /// Bytes one element takes in a [`crate::Literal`]: sub-byte types take a whole
    /// byte each (as numpy/ml_dtypes store them), pred takes one byte (0 or 1).
    pub fn byte_size(self) -> usize {
        match self {
            Token | Opaque => 0,
            _ => (self.bit_width() as usize).div_ceil(8),
        }
    }

    /// For complex types, the component type (f32 for c64, f64 for c128).
    pub fn complex_component(self) -> Option<PrimitiveType> {
        match self {
            C64 => Some(F32),
            C128 => Some(F64),
            _ => None,
        }
    }

    /// Exponent and mantissa bits of a float type (as `reduce-precision` counts them).
    pub fn float_bits(self) -> Option<(u32, u32)> {
        Some(match self {
            F16 => (5, 10),
            Bf16 => (8, 7),
            F32 => (8, 23),
            F64 => (11, 52),
            F8E5M2 | F8E5M2FNUZ => (5, 2),
            F8E4M3 | F8E4M3FN | F8E4M3B11FNUZ | F8E4M3FNUZ => (4, 3),
            F8E3M4 => (3, 4),
            F8E8M0FNU => (8, 0),
            F4E2M1FN => (2, 1),
            _ => return None,
        })
    }
}

impl fmt::Display for PrimitiveType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_for_every_type() {
        for t in PrimitiveType::ALL_ARRAY
            .iter()
            .copied()
            .chain([Token, Opaque])
        {
            assert_eq!(PrimitiveType::from_name(t.name()), Some(t));
        }
        assert_eq!(PrimitiveType::from_name("f33"), None);
    }

    #[test]
    fn storage_sizes_follow_numpy() {
        assert_eq!(S4.byte_size(), 1);
        assert_eq!(Pred.byte_size(), 1);
        assert_eq!(Bf16.byte_size(), 2);
        assert_eq!(C128.byte_size(), 16);
        assert_eq!(F4E2M1FN.byte_size(), 1);
    }
}

//! How far XLA CPU's approximated functions are from the correctly rounded result: the largest
//! error in ulps of the element type, measured on XLA CPU (jaxlib 0.10.2) over dense sweeps of
//! every range where the function is not exact (`tests/ulps.rs` measures it again against real
//! XLA and fails when XLA is further off than this table says). A function or type not in the
//! table is not approximated by a measured bound, so its results are any value of the type.

use hlo::{Opcode, PrimitiveType};

/// The largest error, in ulps of `ty`, of XLA CPU's `op` (real operands), the measured figure
/// plus the rounding of the oracle's own f64 reference (1 ulp of f64 for f64 results).
pub(crate) fn max_ulps(op: Opcode, ty: PrimitiveType) -> Option<u32> {
    use Opcode as O;
    use PrimitiveType as T;
    let narrow = matches!(ty, T::F16 | T::Bf16) || ty.bit_width() <= 8;
    Some(match (op, ty) {
        (O::Sqrt, _) => 0,
        (_, T::F32) => match op {
            O::Exp | O::Expm1 | O::Log | O::Log1p | O::Logistic | O::Tanh => 4,
            O::Erf | O::Cbrt | O::Rsqrt | O::Atan2 | O::Sin | O::Cos | O::Tan => 4,
            O::Power => 8,
            O::Atan | O::Asin | O::Acos | O::Asinh | O::Acosh | O::Atanh => 4,
            O::Sinh | O::Cosh => 4,
            _ => return None,
        },
        (_, T::F64) => match op {
            O::Exp | O::Expm1 | O::Log | O::Log1p | O::Logistic | O::Tanh => 8,
            O::Erf | O::Cbrt | O::Rsqrt | O::Atan2 | O::Sin | O::Cos | O::Tan => 8,
            O::Power => 16,
            O::Atan | O::Asin | O::Acos | O::Asinh | O::Acosh | O::Atanh => 8,
            O::Sinh | O::Cosh => 8,
            _ => return None,
        },
        _ if narrow => match op {
            O::Exp | O::Expm1 | O::Log | O::Log1p | O::Logistic | O::Tanh | O::Erf => 2,
            O::Cbrt | O::Rsqrt | O::Atan2 | O::Sin | O::Cos | O::Tan | O::Power => 2,
            O::Atan | O::Asin | O::Acos | O::Asinh | O::Acosh | O::Atanh => 2,
            O::Sinh | O::Cosh => 2,
            _ => return None,
        },
        _ => return None,
    })
}

/// The largest error of XLA CPU's complex `op`, in ulps of the component type relative to the
/// result's modulus (complex functions are accurate normwise, not part by part).
pub(crate) fn max_normwise_ulps(op: Opcode, ty: PrimitiveType) -> Option<u32> {
    use Opcode as O;
    if !ty.is_complex() {
        return None;
    }
    Some(match op {
        O::Multiply | O::Divide => 4,
        O::Exp | O::Log | O::Sqrt | O::Rsqrt | O::Tanh | O::Tan | O::Logistic => 8,
        O::Expm1 | O::Log1p | O::Sign | O::Sin | O::Cos | O::Atan2 => 8,
        O::Power => 32,
        O::Abs => 4,
        _ => return None,
    })
}

/// Above this magnitude XLA CPU's argument reduction for sin, cos and tan of `ty` is not
/// measured: their results there are any value in [-1, 1] (tan: any value).
pub(crate) fn periodic_limit(ty: PrimitiveType) -> f64 {
    match ty {
        PrimitiveType::F64 => 1e6,
        _ => 1e4,
    }
}

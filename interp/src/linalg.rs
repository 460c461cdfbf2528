//! cholesky and triangular-solve when they reach the interpreter unexpanded.

use crate::value::Array;
use crate::{unsupported, Result};
use hlo::Instruction;

pub fn cholesky(_i: &Instruction, a: &Array) -> Result<Array> {
    Err(unsupported(format!(
        "cholesky on {} (not implemented yet)",
        a.ty
    )))
}

pub fn triangular_solve(_i: &Instruction, a: &Array, _b: &Array) -> Result<Array> {
    Err(unsupported(format!(
        "triangular-solve on {} (not implemented yet)",
        a.ty
    )))
}

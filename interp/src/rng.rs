//! rng-bit-generator.

use crate::value::{Array, Value};
use crate::{unsupported, Result};
use hlo::Instruction;

pub fn rng_bit_generator(i: &Instruction, _state: &Array) -> Result<Value> {
    let alg = crate::attrs::word(i, "algorithm").unwrap_or_default();
    Err(unsupported(format!(
        "rng-bit-generator algorithm={alg} (not implemented yet)"
    )))
}

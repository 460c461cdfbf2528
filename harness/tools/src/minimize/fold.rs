//! Replacing an instruction that depends on no parameter by a constant holding the value the
//! oracle computes for it (`not(bitcast-convert(c))` -> the constant it evaluates to): the
//! instruction and whatever only it used become dead. This is what makes a constant-folding bug's repro
//! the one folded op on a literal, instead of the op with the chain that produced its operand.
//! Small values only (a repro with a huge literal is not smaller to read).

use super::{edit, replaceable_value, Candidate, Case, Reduction};
use hlo::{Literal, Opcode, Scalar};

pub struct FoldToValue;

/// Largest value (in elements) folded into a literal.
const MAX_ELEMENTS: u64 = 64;

/// Entry instructions worth folding, nearest the root first (folding those removes the most).
/// Only values that do not depend on a parameter: they are compile-time constants to XLA
/// already, so folding them keeps every op downstream on the same code path (constant folding
/// or not); folding a parameter-fed value could move a kernel bug onto a folding bug.
fn targets(case: &Case) -> Vec<usize> {
    let m = &case.module;
    let c = m.entry_computation();
    let mut variable = vec![false; c.instructions.len()];
    for (k, i) in c.instructions.iter().enumerate() {
        variable[k] = matches!(
            i.opcode,
            Opcode::Parameter
                | Opcode::Rng
                | Opcode::RngBitGenerator
                | Opcode::RngGetAndUpdateState
        ) || i.has_side_effect()
            || i.operands
                .iter()
                .any(|&o| variable.get(o).copied().unwrap_or(true));
    }
    (0..c.instructions.len())
        .rev()
        .filter(|&ii| {
            ii != c.root
                && !variable[ii]
                && replaceable_value(c, ii)
                    .is_some_and(|a| a.element_count().is_some_and(|n| n <= MAX_ELEMENTS))
        })
        .collect()
}

/// Whether every element is a value HLO text carries without doubt: no NaN (payloads and
/// signs), no -0 and no subnormal. XLA has had bugs in reading exactly those constants; a
/// folded literal with one could move the repro onto such a bug.
fn plain(v: &hlo::ArrayLiteral) -> bool {
    let ok = |x: f64| !x.is_nan() && !(x == 0.0 && x.is_sign_negative());
    let no_subnormal = judge::compare::flush_subnormals(&[Literal::Array(v.clone())]).is_none();
    no_subnormal
        && (0..v.len()).all(|i| match v.get(i) {
            Scalar::F(x) => ok(x),
            Scalar::C(re, im) => ok(re) && ok(im),
            _ => true,
        })
}

impl Reduction for FoldToValue {
    fn name(&self) -> &'static str {
        "fold-to-value"
    }

    fn count(&self, case: &Case) -> usize {
        targets(case).len()
    }

    fn candidate(&self, case: &Case, index: usize) -> Option<Candidate> {
        let ii = *targets(case).get(index)?;
        let entry = case.module.entry;
        let Some(Literal::Array(value)) = judge::forms::value_of(case, ii) else {
            return None;
        };
        if !plain(&value) {
            return None;
        }
        let mut m = case.module.clone();
        let name = m.computations[entry].instructions[ii].name.clone();
        let cname = edit::fresh_name(&m, &name);
        let c = &mut m.computations[entry];
        let k = edit::insert(c, ii, edit::constant_instruction(cname, value));
        edit::replace_uses(c, ii + 1, k);
        Some(Candidate {
            what: format!("{name} -> its value"),
            case: Case {
                module: m,
                inputs: case.inputs.clone(),
            },
        })
    }
}

//! Replacing an entry instruction by a new entry parameter of the same shape. The new input is
//! the instruction's value as the oracle (`interp`) computes it from the case's inputs, so the
//! values downstream stay what they were: what is cut is the computation above it.

use super::{edit, replaceable_value, Candidate, Case, Reduction};
use hlo::{Instruction, Opcode};
use judge::forms::value_of;

pub struct ReplaceByParameter;

fn targets(case: &Case) -> Vec<usize> {
    let m = &case.module;
    let c = m.entry_computation();
    (0..c.instructions.len())
        .rev()
        .filter(|&ii| replaceable_value(c, ii).is_some())
        .collect()
}

impl Reduction for ReplaceByParameter {
    fn name(&self) -> &'static str {
        "replace-by-parameter"
    }

    fn count(&self, case: &Case) -> usize {
        targets(case).len()
    }

    fn candidate(&self, case: &Case, index: usize) -> Option<Candidate> {
        let ii = *targets(case).get(index)?;
        let value = value_of(case, ii)?;
        let mut m = case.module.clone();
        let entry = m.entry;
        let old = &m.computations[entry].instructions[ii];
        let old_name = old.name.clone();
        let shape = old.shape.clone();
        let number = m.computations[entry].parameters().len();
        let name = edit::fresh_name(&m, &format!("p.{old_name}"));
        let mut p = Instruction::new(name, Opcode::Parameter, shape);
        p.parameter_number = Some(number as i64);
        let c = &mut m.computations[entry];
        let id = edit::insert(c, 0, p);
        edit::replace_uses(c, ii + 1, id);
        let mut inputs = case.inputs.clone();
        inputs.push(value);
        Some(Candidate {
            what: format!("{old_name} -> new parameter {number}"),
            case: Case { module: m, inputs },
        })
    }
}

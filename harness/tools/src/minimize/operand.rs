//! Replacing an instruction by one of its operands of the same shape (`add(x, y)` -> `x`):
//! the instruction and whatever only it used become dead.

use super::{edit, sites, Candidate, Case, Reduction};
use hlo::Opcode;

pub struct ReplaceByOperand;

/// (computation, instruction, operand position) triples, most useful first.
fn pairs(case: &Case) -> Vec<(usize, usize, usize)> {
    let m = &case.module;
    let mut out = Vec::new();
    for (ci, ii) in sites(m) {
        let i = &m.computations[ci].instructions[ii];
        if matches!(i.opcode, Opcode::Parameter | Opcode::Constant) {
            continue;
        }
        for (k, &o) in i.operands.iter().enumerate() {
            let op = &m.computations[ci].instructions[o];
            if op.shape.compatible(&i.shape) {
                out.push((ci, ii, k));
            }
        }
    }
    out
}

impl Reduction for ReplaceByOperand {
    fn name(&self) -> &'static str {
        "replace-by-operand"
    }

    fn count(&self, case: &Case) -> usize {
        pairs(case).len()
    }

    fn candidate(&self, case: &Case, index: usize) -> Option<Candidate> {
        let (ci, ii, k) = *pairs(case).get(index)?;
        let mut m = case.module.clone();
        let c = &mut m.computations[ci];
        let o = c.instructions[ii].operands[k];
        let what = format!(
            "{} -> its operand {}",
            c.instructions[ii].name, c.instructions[o].name
        );
        edit::replace_uses(c, ii, o);
        Some(Candidate {
            what,
            case: Case {
                module: m,
                inputs: case.inputs.clone(),
            },
        })
    }
}

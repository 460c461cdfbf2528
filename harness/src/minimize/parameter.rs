//! Replacing an entry instruction by a new entry parameter of the same shape. The new input is
//! the instruction's value as the oracle (`interp`) computes it from the case's inputs, so the
//! values downstream stay what they were: what is cut is the computation above it.

use super::{edit, is_splat, Candidate, Case, Reduction};
use hlo::{Instruction, Opcode, Shape};

pub struct ReplaceByParameter;

fn targets(case: &Case) -> Vec<usize> {
    let m = &case.module;
    let c = m.entry_computation();
    (0..c.instructions.len())
        .rev()
        .filter(|&ii| {
            let i = &c.instructions[ii];
            let Shape::Array(a) = &i.shape else {
                return false;
            };
            a.ty.is_array_type()
                && a.is_static()
                && !matches!(i.opcode, Opcode::Parameter | Opcode::Constant)
                && !is_splat(c, ii)
        })
        .collect()
}

/// The value of entry instruction `ii` on the case's inputs, as the oracle computes it.
pub fn value_of(case: &Case, ii: usize) -> Option<hlo::Literal> {
    let mut m = case.module.clone();
    let entry = m.entry;
    m.computations[entry].root = ii;
    let cleaned = super::unused::cleanup(&Case {
        module: m,
        inputs: case.inputs.clone(),
    })?;
    interp::evaluate(&cleaned.module, &cleaned.inputs).ok()
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

/// Every constant and iota of the entry computation turned into a new entry parameter whose
/// input is its value: the same program, with nothing left for XLA to fold at compile time.
/// `None` when there is nothing to turn or a value cannot be computed.
pub fn constants_to_parameters(case: &Case) -> Option<Case> {
    let c = case.module.entry_computation();
    let targets: Vec<usize> = (0..c.instructions.len())
        .filter(|&ii| {
            let i = &c.instructions[ii];
            matches!(i.opcode, Opcode::Constant | Opcode::Iota)
                && matches!(&i.shape, Shape::Array(a) if a.ty.is_array_type() && a.is_static())
        })
        .collect();
    if targets.is_empty() {
        return None;
    }
    let values = targets
        .iter()
        .map(|&ii| value_of(case, ii))
        .collect::<Option<Vec<_>>>()?;
    let mut m = case.module.clone();
    let mut inputs = case.inputs.clone();
    let entry = m.entry;
    for (k, (&ii, value)) in targets.iter().zip(values).enumerate() {
        // Each insertion at position 0 moved the later instructions down by one.
        let at = ii + k;
        let old = &m.computations[entry].instructions[at];
        let name = edit::fresh_name(&m, &format!("p.{}", old.name));
        let mut p = Instruction::new(name, Opcode::Parameter, old.shape.clone());
        p.parameter_number = Some(inputs.len() as i64);
        let c = &mut m.computations[entry];
        let id = edit::insert(c, 0, p);
        edit::replace_uses(c, at + 1, id);
        inputs.push(value);
    }
    super::unused::cleanup(&Case { module: m, inputs })
}

/// Every unsigned index operand narrower than 64 bits (of `gather`, `scatter`, `dynamic-slice`
/// and `dynamic-update-slice`, in any computation) converted to s64 first: the same program,
/// since an unsigned index means its unsigned value. `None` when there is none.
pub fn widen_unsigned_indices(case: &Case) -> Option<Case> {
    let mut m = case.module.clone();
    let mut changed = false;
    for ci in 0..m.computations.len() {
        let mut ii = 0;
        while ii < m.computations[ci].instructions.len() {
            let i = &m.computations[ci].instructions[ii];
            let n = i.operands.len();
            let idx: Vec<usize> = match i.opcode {
                Opcode::Gather => vec![1],
                Opcode::Scatter => vec![n / 2],
                Opcode::DynamicSlice => (1..n).collect(),
                Opcode::DynamicUpdateSlice => (2..n).collect(),
                _ => vec![],
            };
            let mut at = ii;
            for k in idx {
                let c = &m.computations[ci];
                let Some(&o) = c.instructions[at].operands.get(k) else {
                    continue;
                };
                let Shape::Array(a) = &c.instructions[o].shape else {
                    continue;
                };
                if a.ty.class() != hlo::TypeClass::Unsigned || a.ty.bit_width() >= 64 {
                    continue;
                }
                let name = edit::fresh_name(&m, &format!("{}.s64", c.instructions[o].name));
                let mut conv = Instruction::new(
                    name,
                    Opcode::Convert,
                    Shape::array(hlo::PrimitiveType::S64, a.dims.clone()),
                );
                conv.operands = vec![o];
                let c = &mut m.computations[ci];
                let id = edit::insert(c, at, conv);
                at += 1;
                c.instructions[at].operands[k] = id;
                changed = true;
            }
            ii = at + 1;
        }
    }
    changed.then(|| Case {
        module: m,
        inputs: case.inputs.clone(),
    })
}

//! Dropping outputs of the entry's root tuple: first "keep only output i" (the root becomes
//! that value), then "drop output i" (a smaller tuple).

use super::{Candidate, Case, Reduction};
use hlo::{Opcode, Shape};

pub struct DropOutputs;

fn root_tuple_width(case: &Case) -> usize {
    let c = case.module.entry_computation();
    let r = c.root_instruction();
    if r.opcode == Opcode::Tuple {
        r.operands.len()
    } else {
        0
    }
}

impl Reduction for DropOutputs {
    fn name(&self) -> &'static str {
        "drop-outputs"
    }

    fn count(&self, case: &Case) -> usize {
        let n = root_tuple_width(case);
        if n <= 1 {
            n
        } else {
            2 * n
        }
    }

    fn candidate(&self, case: &Case, index: usize) -> Option<Candidate> {
        let n = root_tuple_width(case);
        let mut m = case.module.clone();
        let entry = m.entry;
        let c = &mut m.computations[entry];
        let root = c.root;
        let ops = c.instructions[root].operands.clone();
        let what;
        if index < n {
            // Keep only output `index`: the root is that value itself.
            c.root = ops[index];
            what = format!("kept only output {index} of {n}");
        } else {
            let drop = index - n;
            if drop >= n || n <= 1 {
                return None;
            }
            let r = &mut c.instructions[root];
            r.operands.remove(drop);
            if let Shape::Tuple(t) = &mut r.shape {
                if drop < t.len() {
                    t.remove(drop);
                }
            }
            what = format!("dropped output {drop} of {n}");
        }
        Some(Candidate {
            what,
            case: Case {
                module: m,
                inputs: case.inputs.clone(),
            },
        })
    }
}

/// Making an earlier instruction of the entry computation the output (`root = clz(x)` instead
/// of `root = sort(convert(clz(x)))`): what only the old root used becomes dead. The bug is
/// often in an op whose wrong values only a downstream op of another element type carries to
/// the output; without this edit such ops stay in every repro and split one bug into buckets.
/// Earliest instructions first: a success there removes the most.
pub struct Reroot;

fn reroot_sites(case: &Case) -> Vec<usize> {
    let c = case.module.entry_computation();
    (0..c.instructions.len())
        .filter(|&ii| {
            let i = &c.instructions[ii];
            ii != c.root
                && !matches!(
                    i.opcode,
                    Opcode::Parameter | Opcode::Constant | Opcode::Tuple | Opcode::GetTupleElement
                )
                && matches!(i.shape, Shape::Array(_))
        })
        .collect()
}

impl Reduction for Reroot {
    fn name(&self) -> &'static str {
        "reroot"
    }

    fn count(&self, case: &Case) -> usize {
        reroot_sites(case).len()
    }

    fn candidate(&self, case: &Case, index: usize) -> Option<Candidate> {
        let ii = *reroot_sites(case).get(index)?;
        let mut m = case.module.clone();
        let entry = m.entry;
        let c = &mut m.computations[entry];
        c.root = ii;
        let what = format!("{} is the output", c.instructions[ii].name);
        Some(Candidate {
            what,
            case: Case {
                module: m,
                inputs: case.inputs.clone(),
            },
        })
    }
}

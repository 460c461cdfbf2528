//! Shrinking shapes: when the entry computation is elementwise over one set of dimensions
//! (parameters, elementwise ops, broadcasts of scalars, scalars), every array of those
//! dimensions becomes one element (`[1,...,1]`, the rank kept), and each input keeps one
//! element. Candidates pick which element: the positions where some input is non-zero first
//! (after `zero-inputs` these are the ones that matter), then the first.

use super::{Candidate, Case, Reduction};
use hlo::{Attr, Literal, Opcode, Shape};

pub struct ShrinkShapes;

/// Most element positions tried.
const MAX_PICKS: usize = 16;

/// Elementwise over one shape: the opcode table's elementwise categories, and the conversions
/// that keep the shape.
fn elementwise(op: Opcode) -> bool {
    op.is_elementwise() || matches!(op, Opcode::Convert | Opcode::ReducePrecision)
}

/// The dimensions every non-scalar array of the entry has, when the entry is elementwise over
/// them and has more than one element.
fn common_dims(case: &Case) -> Option<Vec<i64>> {
    let c = case.module.entry_computation();
    let mut dims: Option<Vec<i64>> = None;
    for i in &c.instructions {
        let Shape::Array(a) = &i.shape else {
            return None;
        };
        if !a.is_static() {
            return None;
        }
        if a.dims.is_empty() {
            if i.opcode == Opcode::Constant
                || i.opcode == Opcode::Parameter
                || elementwise(i.opcode)
            {
                continue;
            }
            return None;
        }
        let ok = match i.opcode {
            Opcode::Parameter => true,
            Opcode::Broadcast => {
                i.operands.len() == 1 && c.instructions[i.operands[0]].shape.rank() == 0
            }
            op => elementwise(op),
        };
        if !ok {
            return None;
        }
        match &dims {
            None => dims = Some(a.dims.clone()),
            Some(d) if *d == a.dims => {}
            Some(_) => return None,
        }
    }
    let d = dims?;
    (d.iter().product::<i64>() > 1).then_some(d)
}

/// Flat positions to keep, most promising first.
fn picks(case: &Case, n: usize) -> Vec<usize> {
    let mut out = Vec::new();
    for k in 0..n {
        let nonzero = case.inputs.iter().any(|l| match l {
            Literal::Array(a) if !a.dims.is_empty() && a.len() == n => {
                let w = a.ty.byte_size();
                a.data[k * w..(k + 1) * w].iter().any(|&b| b != 0)
            }
            _ => false,
        });
        if nonzero {
            out.push(k);
            if out.len() == MAX_PICKS {
                break;
            }
        }
    }
    if !out.contains(&0) && out.len() < MAX_PICKS {
        out.push(0);
    }
    out
}

impl Reduction for ShrinkShapes {
    fn name(&self) -> &'static str {
        "shrink-shapes"
    }

    fn count(&self, case: &Case) -> usize {
        match common_dims(case) {
            Some(d) => picks(case, d.iter().product::<i64>() as usize).len(),
            None => 0,
        }
    }

    fn candidate(&self, case: &Case, index: usize) -> Option<Candidate> {
        let dims = common_dims(case)?;
        let n = dims.iter().product::<i64>() as usize;
        let k = *picks(case, n).get(index)?;
        let ones = vec![1i64; dims.len()];
        let mut m = case.module.clone();
        let entry = m.entry;
        for i in m.computations[entry].instructions.iter_mut() {
            if let Shape::Array(a) = &mut i.shape {
                if a.dims == dims {
                    a.dims = ones.clone();
                }
            }
            if i.opcode == Opcode::Broadcast {
                i.set_attr("dimensions", Attr::Ints(vec![]));
            }
        }
        let mut inputs = case.inputs.clone();
        for l in inputs.iter_mut() {
            if let Literal::Array(a) = l {
                if a.dims == dims {
                    let w = a.ty.byte_size();
                    a.data = a.data[k * w..(k + 1) * w].to_vec();
                    a.dims = ones.clone();
                }
            }
        }
        Some(Candidate {
            what: format!("shapes {dims:?} -> {ones:?}, keeping element {k}"),
            case: Case { module: m, inputs },
        })
    }
}

//! Replacing an instruction (or an entry parameter) by a constant of its shape: zero, then one
//! (a scalar constant, broadcast when the shape has rank > 0).

use super::{edit, is_splat, sites, Candidate, Case, Reduction};
use hlo::{Opcode, Scalar, Shape};

pub struct ReplaceByConstant;

const VALUES: [(i64, &str); 2] = [(0, "zero"), (1, "one")];

fn targets(case: &Case) -> Vec<(usize, usize)> {
    let m = &case.module;
    sites(m)
        .into_iter()
        .filter(|&(ci, ii)| {
            let c = &m.computations[ci];
            let i = &c.instructions[ii];
            let Shape::Array(a) = &i.shape else {
                return false;
            };
            if !a.ty.is_array_type() || !a.is_static() {
                return false;
            }
            match i.opcode {
                Opcode::Constant => false,
                // A called computation's parameters are its signature; the entry's may go.
                Opcode::Parameter => ci == m.entry,
                _ => !is_splat(c, ii),
            }
        })
        .collect()
}

impl Reduction for ReplaceByConstant {
    fn name(&self) -> &'static str {
        "replace-by-constant"
    }

    fn count(&self, case: &Case) -> usize {
        targets(case).len() * VALUES.len()
    }

    fn candidate(&self, case: &Case, index: usize) -> Option<Candidate> {
        let (ci, ii) = *targets(case).get(index / VALUES.len())?;
        let (v, label) = VALUES[index % VALUES.len()];
        let mut m = case.module.clone();
        let i = &m.computations[ci].instructions[ii];
        let shape = i.shape.as_array()?.clone();
        let name = i.name.clone();
        let value = if shape.ty == hlo::PrimitiveType::Pred {
            Scalar::Pred(v != 0)
        } else {
            Scalar::S(v)
        };
        let lit = edit::scalar_literal(shape.ty, value)?;
        let without_layout = hlo::ArrayShape {
            layout: None,
            ..shape.clone()
        };
        let (id, moved) = edit::insert_splat(&mut m, ci, ii, &without_layout, lit, &name);
        edit::replace_uses(&mut m.computations[ci], moved, id);
        Some(Candidate {
            what: format!("{name} -> {label}"),
            case: Case {
                module: m,
                inputs: case.inputs.clone(),
            },
        })
    }
}

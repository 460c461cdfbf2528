//! Simplifying constants: an array constant becomes a broadcast of its first element; a scalar
//! constant becomes 0, or else 1.

use super::{edit, sites, Candidate, Case, Reduction};
use hlo::{Constant, Literal, Opcode, Scalar};

pub struct SimplifyConstants;

fn array_constant(case: &Case, ci: usize, ii: usize) -> Option<&hlo::ArrayLiteral> {
    let i = &case.module.computations[ci].instructions[ii];
    if i.opcode != Opcode::Constant {
        return None;
    }
    match &i.constant {
        Some(Constant::Literal(Literal::Array(a))) if a.ty.is_array_type() => Some(a),
        _ => None,
    }
}

fn is_zero(s: Scalar) -> bool {
    match s {
        Scalar::Pred(b) => !b,
        Scalar::S(v) => v == 0,
        Scalar::U(v) => v == 0,
        Scalar::F(v) => v == 0.0 && v.is_sign_positive(),
        Scalar::C(re, im) => re == 0.0 && im == 0.0,
    }
}

fn is_one(s: Scalar) -> bool {
    match s {
        Scalar::Pred(b) => b,
        Scalar::S(v) => v == 1,
        Scalar::U(v) => v == 1,
        Scalar::F(v) => v == 1.0,
        Scalar::C(re, im) => re == 1.0 && im == 0.0,
    }
}

/// (computation, instruction, edit): edit 0 = splat of the first element (rank > 0, not
/// uniform), 1 = scalar to zero, 2 = scalar to one.
fn edits(case: &Case) -> Vec<(usize, usize, u8)> {
    let mut out = Vec::new();
    for (ci, ii) in sites(&case.module) {
        let Some(a) = array_constant(case, ci, ii) else {
            continue;
        };
        if !a.dims.is_empty() {
            if a.len() > 1 && (1..a.len()).any(|k| a.bits(k) != a.bits(0)) {
                out.push((ci, ii, 0));
            }
        } else if a.len() == 1 {
            let v = a.get(0);
            if !is_zero(v) {
                out.push((ci, ii, 1));
                if !is_one(v) {
                    out.push((ci, ii, 2));
                }
            }
        }
    }
    out
}

impl Reduction for SimplifyConstants {
    fn name(&self) -> &'static str {
        "simplify-constants"
    }

    fn count(&self, case: &Case) -> usize {
        edits(case).len()
    }

    fn candidate(&self, case: &Case, index: usize) -> Option<Candidate> {
        let (ci, ii, kind) = *edits(case).get(index)?;
        let a = array_constant(case, ci, ii)?.clone();
        let mut m = case.module.clone();
        let name = m.computations[ci].instructions[ii].name.clone();
        let what;
        if kind == 0 {
            let first = edit::scalar_literal(a.ty, a.get(0))?;
            let mut scalar_bits = first.clone();
            scalar_bits
                .data
                .copy_from_slice(&a.data[..a.ty.byte_size()]);
            let shape = hlo::ArrayShape::new(a.ty, a.dims.clone());
            let (id, moved) = edit::insert_splat(&mut m, ci, ii, &shape, scalar_bits, &name);
            edit::replace_uses(&mut m.computations[ci], moved, id);
            what = format!("{name} -> broadcast of its first element");
        } else {
            let v = if a.ty == hlo::PrimitiveType::Pred {
                Scalar::Pred(kind == 2)
            } else {
                Scalar::S(if kind == 1 { 0 } else { 1 })
            };
            let lit = edit::scalar_literal(a.ty, v)?;
            m.computations[ci].instructions[ii].constant =
                Some(Constant::Literal(Literal::Array(lit)));
            what = format!("{name} -> {}", if kind == 1 { "0" } else { "1" });
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

//! Inlining `call` (and `fusion`) instructions: the callee's body is copied into the caller in
//! place of the call; the callee becomes unused and the cleanup deletes it.

use super::{edit, sites, Candidate, Case, Reduction};
use hlo::{Attr, Opcode};

pub struct InlineCalls;

fn callee_attr(op: Opcode) -> Option<&'static str> {
    match op {
        Opcode::Call => Some("to_apply"),
        Opcode::Fusion => Some("calls"),
        _ => None,
    }
}

fn targets(case: &Case) -> Vec<(usize, usize)> {
    let m = &case.module;
    sites(m)
        .into_iter()
        .filter(|&(ci, ii)| {
            let i = &m.computations[ci].instructions[ii];
            callee_attr(i.opcode)
                .and_then(|a| i.comp(a))
                .is_some_and(|callee| callee < m.computations.len() && callee != ci)
        })
        .collect()
}

impl Reduction for InlineCalls {
    fn name(&self) -> &'static str {
        "inline-calls"
    }

    fn count(&self, case: &Case) -> usize {
        targets(case).len()
    }

    fn candidate(&self, case: &Case, index: usize) -> Option<Candidate> {
        let (ci, ii) = *targets(case).get(index)?;
        let mut m = case.module.clone();
        let call = m.computations[ci].instructions[ii].clone();
        let callee = call.comp(callee_attr(call.opcode)?)?;
        let body = m.computations[callee].clone();
        // Map each callee instruction to its id in the caller.
        let mut map: Vec<Option<usize>> = vec![None; body.instructions.len()];
        let mut pos = ii;
        for (k, bi) in body.instructions.iter().enumerate() {
            if bi.opcode == Opcode::Parameter {
                let n = bi.parameter_number? as usize;
                map[k] = Some(*call.operands.get(n)?);
                continue;
            }
            let mut ni = bi.clone();
            ni.name = edit::fresh_name(&m, &bi.name);
            ni.operands = bi
                .operands
                .iter()
                .map(|&o| map.get(o).copied().flatten())
                .collect::<Option<Vec<_>>>()?;
            ni.attrs.retain(|(_, a)| !matches!(a, Attr::Instrs(_)));
            let id = edit::insert(&mut m.computations[ci], pos, ni);
            map[k] = Some(id);
            pos += 1;
        }
        let new_root = map.get(body.root).copied().flatten()?;
        // The call moved to `pos`.
        edit::replace_uses(&mut m.computations[ci], pos, new_root);
        Some(Candidate {
            what: format!("inlined {} ({})", call.name, body.name),
            case: Case {
                module: m,
                inputs: case.inputs.clone(),
            },
        })
    }
}

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
        let body = m.computations[callee].name.clone();
        inline(&mut m, ci, ii)?;
        Some(Candidate {
            what: format!("inlined {} ({body})", call.name),
            case: Case {
                module: m,
                inputs: case.inputs.clone(),
            },
        })
    }
}

/// Inlines the `call` (or `fusion`) instruction `ii` of computation `ci`: the callee's body is
/// copied in before it and its uses take the copy's root. The ids in `ci` of the callee's
/// instructions (a parameter: the call's operand), by their ids in the callee; `None` when it
/// is no call or its operands do not fit.
pub fn inline(m: &mut hlo::Module, ci: usize, ii: usize) -> Option<Vec<Option<usize>>> {
    let call = m.computations[ci].instructions.get(ii)?.clone();
    let callee = call.comp(callee_attr(call.opcode)?)?;
    if callee == ci || callee >= m.computations.len() {
        return None;
    }
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
        ni.name = edit::fresh_name(m, &bi.name);
        ni.operands = bi
            .operands
            .iter()
            .map(|&o| map.get(o).copied().flatten())
            .collect::<Option<Vec<_>>>()?;
        ni.attrs.retain(|(_, a)| !matches!(a, Attr::Instrs(_)));
        let id = edit::insert(&mut m.computations[ci], pos, ni);
        // An insertion shifts every later id of the caller, the operands mapped so far
        // included (they come before `pos`, so only ids at or after it move).
        map[k] = Some(id);
        pos += 1;
    }
    let new_root = map.get(body.root).copied().flatten()?;
    // The call moved to `pos`.
    edit::replace_uses(&mut m.computations[ci], pos, new_root);
    Some(map)
}

/// The `call` instructions that lead from the entry to computation `target`: (computation,
/// instruction) of each, outermost first; `None` when no chain of calls reaches it (a while
/// body, a reducer).
pub fn call_chain(m: &hlo::Module, target: usize) -> Option<Vec<(usize, usize)>> {
    let mut from: Vec<Option<(usize, usize)>> = vec![None; m.computations.len()];
    let mut seen = vec![false; m.computations.len()];
    let mut queue = std::collections::VecDeque::from([m.entry]);
    *seen.get_mut(m.entry)? = true;
    while let Some(c) = queue.pop_front() {
        if c == target {
            let mut chain = Vec::new();
            let mut at = c;
            while let Some((pc, pi)) = from[at] {
                chain.push((pc, pi));
                at = pc;
            }
            chain.reverse();
            return Some(chain);
        }
        for (ii, i) in m.computations[c].instructions.iter().enumerate() {
            if i.opcode != Opcode::Call {
                continue;
            }
            let Some(callee) = i.comp("to_apply").filter(|&k| k < m.computations.len()) else {
                continue;
            };
            if !seen[callee] {
                seen[callee] = true;
                from[callee] = Some((c, ii));
                queue.push_back(callee);
            }
        }
    }
    None
}

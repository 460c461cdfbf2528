//! Removing what nothing uses: dead instructions (in every computation), entry parameters the
//! root no longer reaches (renumbered, with their inputs dropped) and computations no
//! instruction calls. Applied to every candidate before it is tried, so the other reductions
//! only need to cut a use. The signature's header attributes are refitted to what is left
//! ([`super::signature::refit`]).

use super::{self as edit, Case};
use crate::{Attr, CompId, Computation, InstrId, Module, Opcode};

/// The case without unused instructions, parameters and computations, or `None` when a
/// reference is out of range (the caller's verifier will refuse such a case anyway).
pub fn cleanup(case: &Case) -> Option<Case> {
    let mut m = case.module.clone();
    let mut inputs = case.inputs.clone();
    if m.entry >= m.computations.len() {
        return None;
    }
    let mut renumbered: Vec<Option<i64>> = Vec::new();
    for ci in 0..m.computations.len() {
        let is_entry = ci == m.entry;
        let c = &mut m.computations[ci];
        if c.root >= c.instructions.len()
            || c.instructions
                .iter()
                .any(|i| i.operands.iter().any(|&o| o >= c.instructions.len()))
        {
            return None;
        }
        let mut keep = edit::live(c);
        for (k, i) in c.instructions.iter().enumerate() {
            // A called computation's parameters are its signature.
            if i.opcode == Opcode::Parameter && !is_entry {
                keep[k] = true;
            }
        }
        if is_entry {
            let mut removed: Vec<usize> = c
                .instructions
                .iter()
                .enumerate()
                .filter(|(k, i)| i.opcode == Opcode::Parameter && !keep[*k])
                .filter_map(|(_, i)| i.parameter_number.map(|n| n as usize))
                .collect();
            if removed.iter().any(|&n| n >= inputs.len()) {
                return None;
            }
            removed.sort_unstable();
            for &n in removed.iter().rev() {
                inputs.remove(n);
            }
            for (k, i) in c.instructions.iter_mut().enumerate() {
                if i.opcode != Opcode::Parameter {
                    continue;
                }
                let n = i.parameter_number.unwrap_or(0) as usize;
                if n >= inputs.len() + removed.len() {
                    return None;
                }
                if renumbered.len() <= n {
                    renumbered.resize(n + 1, None);
                }
                if keep[k] {
                    let below = removed.iter().filter(|&&r| r < n).count();
                    i.parameter_number = Some((n - below) as i64);
                    renumbered[n] = i.parameter_number;
                }
            }
        }
        retain_instructions(c, &keep);
    }
    remove_uncalled_computations(&mut m);
    super::signature::refit(&mut m, &renumbered);
    Some(Case { module: m, inputs })
}

/// Keeps the instructions whose `keep` flag is set, renumbering every reference.
pub fn retain_instructions(c: &mut Computation, keep: &[bool]) {
    let mut map: Vec<Option<InstrId>> = vec![None; c.instructions.len()];
    let mut next = 0;
    for (k, &kp) in keep.iter().enumerate() {
        if kp {
            map[k] = Some(next);
            next += 1;
        }
    }
    let old = std::mem::take(&mut c.instructions);
    for (k, mut i) in old.into_iter().enumerate() {
        if !keep[k] {
            continue;
        }
        i.operands = i.operands.iter().filter_map(|&o| map[o]).collect();
        for (_, a) in i.attrs.iter_mut() {
            if let Attr::Instrs(v) = a {
                *v = v
                    .iter()
                    .filter_map(|&o| map.get(o).copied().flatten())
                    .collect();
            }
        }
        c.instructions.push(i);
    }
    c.root = map[c.root].unwrap_or(0);
}

/// Removes computations no instruction reachable from the entry calls, renumbering the rest.
pub fn remove_uncalled_computations(m: &mut Module) {
    let n = m.computations.len();
    let mut reached = vec![false; n];
    let mut stack = vec![m.entry];
    while let Some(ci) = stack.pop() {
        if ci >= n || reached[ci] {
            continue;
        }
        reached[ci] = true;
        for i in &m.computations[ci].instructions {
            stack.extend(i.called_computations());
        }
    }
    if reached.iter().all(|&r| r) {
        return;
    }
    let mut map: Vec<Option<CompId>> = vec![None; n];
    let mut next = 0;
    for (k, &r) in reached.iter().enumerate() {
        if r {
            map[k] = Some(next);
            next += 1;
        }
    }
    let old = std::mem::take(&mut m.computations);
    for (k, mut c) in old.into_iter().enumerate() {
        if !reached[k] {
            continue;
        }
        for i in c.instructions.iter_mut() {
            for (_, a) in i.attrs.iter_mut() {
                match a {
                    Attr::Comp(x) => *x = map[*x].unwrap_or(0),
                    Attr::Comps(xs) => {
                        for x in xs.iter_mut() {
                            *x = map[*x].unwrap_or(0);
                        }
                    }
                    _ => {}
                }
            }
        }
        m.computations.push(c);
    }
    m.entry = map[m.entry].unwrap_or(0);
}

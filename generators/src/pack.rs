//! Packing: several independent modules in one, so that one XLA compile tests many programs.
//!
//! The packed entry computation holds every module's entry instructions (renamed `m<k>_<name>`),
//! with parameters renumbered consecutively (module 0's first) and one ROOT tuple holding every
//! module's outputs in order (a module whose root is a tuple contributes its elements). Called
//! computations are copied, renamed the same way, before the entry. The modules'
//! `input_output_alias` entries move to their packed output and parameter numbers, and an
//! `entry_computation_layout` is written again for the packed entry when it has non-default
//! layouts.

use hlo::{Attr, CompId, Computation, InstrId, Instruction, Module, Opcode, Shape};

/// Where each packed module's parameters and outputs went.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct PackLayout {
    /// Per module: (first parameter number, parameter count).
    pub params: Vec<(usize, usize)>,
    /// Per module: (first output index in the ROOT tuple, output count).
    pub outputs: Vec<(usize, usize)>,
}

/// Merges modules into one (see the module documentation). Inputs for the packed module are the
/// modules' inputs concatenated in order.
pub fn pack(modules: &[Module]) -> Module {
    pack_with_layout(modules).0
}

/// [`pack`], also telling where each module's parameters and outputs are.
pub fn pack_with_layout(modules: &[Module]) -> (Module, PackLayout) {
    let mut comps: Vec<Computation> = Vec::new();
    let mut entry_instrs: Vec<Instruction> = Vec::new();
    let mut outs: Vec<InstrId> = Vec::new();
    let mut layout = PackLayout::default();
    let mut n_params = 0usize;
    let mut aliases = Vec::new();
    for (k, m) in modules.iter().enumerate() {
        let prefix = format!("m{k}_");
        // Called computations keep their relative order; ids shift by what is already there.
        let mut comp_map: Vec<CompId> = vec![usize::MAX; m.computations.len()];
        for (ci, c) in m.computations.iter().enumerate() {
            if ci == m.entry {
                continue;
            }
            comp_map[ci] = comps.len();
            comps.push(Computation {
                name: format!("{prefix}{}", c.name),
                instructions: Vec::new(),
                root: c.root,
                trailing_attrs: c.trailing_attrs.clone(),
            });
        }
        for (ci, c) in m.computations.iter().enumerate() {
            if ci == m.entry {
                continue;
            }
            let ids: Vec<InstrId> = (0..c.instructions.len()).collect();
            comps[comp_map[ci]].instructions = c
                .instructions
                .iter()
                .map(|i| renamed(i, &prefix, &ids, &comp_map, 0))
                .collect();
        }
        // The entry: drop a root tuple that nothing else uses; its elements become outputs.
        let e = m.entry_computation();
        let root = &e.instructions[e.root];
        let root_used = e.instructions.iter().any(|i| i.operands.contains(&e.root));
        let drop_root = root.opcode == Opcode::Tuple && !root_used;
        let base = entry_instrs.len();
        let mut id_map = vec![usize::MAX; e.instructions.len()];
        let mut next = base;
        for (i, slot) in id_map.iter_mut().enumerate() {
            if !(drop_root && i == e.root) {
                *slot = next;
                next += 1;
            }
        }
        for (i, ins) in e.instructions.iter().enumerate() {
            if drop_root && i == e.root {
                continue;
            }
            entry_instrs.push(renamed(ins, &prefix, &id_map, &comp_map, n_params as i64));
        }
        let first_out = outs.len();
        if drop_root {
            outs.extend(root.operands.iter().map(|&o| id_map[o]));
        } else {
            outs.push(id_map[e.root]);
        }
        // The module's input/output aliases, at their packed output and parameter numbers (a
        // root that is not dropped is one output: an alias of its elements has no place).
        if drop_root {
            let text = m
                .header_attrs
                .iter()
                .find(|(k, _)| k == "input_output_alias")
                .map(|(_, v)| v.as_str());
            for a in text
                .and_then(crate::structure::parse_alias_text)
                .unwrap_or_default()
            {
                aliases.push(crate::structure::Alias {
                    output: first_out + a.output,
                    param: a.param + n_params as i64,
                    must: a.must,
                });
            }
        }
        let np = e.parameters().len();
        layout.params.push((n_params, np));
        layout.outputs.push((first_out, outs.len() - first_out));
        n_params += np;
    }
    let shape = Shape::Tuple(
        outs.iter()
            .map(|&o| entry_instrs[o].shape.clone())
            .collect(),
    );
    let mut root = Instruction::new("packed_root", Opcode::Tuple, shape);
    root.operands = outs;
    entry_instrs.push(root);
    comps.push(Computation {
        name: "main".into(),
        root: entry_instrs.len() - 1,
        instructions: entry_instrs,
        trailing_attrs: Vec::new(),
    });
    let entry = comps.len() - 1;
    let mut m = Module {
        name: "packed".into(),
        header_attrs: Vec::new(),
        stack_frame_tables: Vec::new(),
        computations: comps,
        entry,
    };
    crate::structure::write_header(&mut m, &aliases);
    (m, layout)
}

fn renamed(
    i: &Instruction,
    prefix: &str,
    ids: &[InstrId],
    comps: &[CompId],
    param_offset: i64,
) -> Instruction {
    let mut n = i.clone();
    n.name = format!("{prefix}{}", i.name);
    n.operands = i.operands.iter().map(|&o| ids[o]).collect();
    if let Some(p) = n.parameter_number.as_mut() {
        *p += param_offset;
    }
    for (_, a) in n.attrs.iter_mut() {
        match a {
            Attr::Comp(c) => *c = comps[*c],
            Attr::Comps(cs) => cs.iter_mut().for_each(|c| *c = comps[*c]),
            Attr::Instrs(is) => is.iter_mut().for_each(|x| *x = ids[*x]),
            _ => {}
        }
    }
    n
}

//! Small edits of the IR that the minimizer's reductions and the judge's equivalent forms
//! share: inserting an instruction (shifting the ids after it), redirecting uses, fresh names,
//! constants of a shape, and removing what nothing uses ([`unused`]).

pub mod signature;
pub mod unused;

use crate::{
    ArrayLiteral, ArrayShape, Attr, CompId, Computation, Constant, InstrId, Instruction, Literal,
    Module, Opcode, PrimitiveType, Scalar, Shape,
};
use std::collections::HashSet;

/// A module with one input per entry parameter: what a backend runs, what the minimizer
/// reduces.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    pub module: Module,
    pub inputs: Vec<Literal>,
}

/// A name no instruction of the module has, derived from `base`.
pub fn fresh_name(m: &Module, base: &str) -> String {
    let taken: HashSet<&str> = m
        .computations
        .iter()
        .flat_map(|c| c.instructions.iter().map(|i| i.name.as_str()))
        .collect();
    let base = base.split(".reduced").next().unwrap_or(base);
    for k in 0.. {
        let name = format!("{base}.reduced{k}");
        if !taken.contains(name.as_str()) {
            return name;
        }
    }
    unreachable!()
}

fn shift_ids(ids: &mut [InstrId], pos: InstrId, by: usize) {
    for id in ids {
        if *id >= pos {
            *id += by;
        }
    }
}

/// Inserts `instr` at `pos` (its operands must be `< pos`, already in the numbering after the
/// insertion); every id at or after `pos` moves up by one. Returns the new instruction's id.
pub fn insert(c: &mut Computation, pos: InstrId, instr: Instruction) -> InstrId {
    for i in c.instructions.iter_mut() {
        shift_ids(&mut i.operands, pos, 1);
        for (_, a) in i.attrs.iter_mut() {
            if let Attr::Instrs(v) = a {
                shift_ids(v, pos, 1);
            }
        }
    }
    if c.root >= pos {
        c.root += 1;
    }
    c.instructions.insert(pos, instr);
    pos
}

/// Makes every use of `old` (operands and the root) use `new` instead.
pub fn replace_uses(c: &mut Computation, old: InstrId, new: InstrId) {
    for (k, i) in c.instructions.iter_mut().enumerate() {
        if k == new {
            continue;
        }
        for o in i.operands.iter_mut() {
            if *o == old {
                *o = new;
            }
        }
    }
    if c.root == old {
        c.root = new;
    }
}

/// A scalar of `ty` holding `v` (converted as the literal code converts).
pub fn scalar_literal(ty: PrimitiveType, v: Scalar) -> Option<ArrayLiteral> {
    let mut l = ArrayLiteral::zeros(ty, vec![]).ok()?;
    l.set(0, v);
    Some(l)
}

/// A constant instruction holding `lit`.
pub fn constant_instruction(name: String, lit: ArrayLiteral) -> Instruction {
    let shape = Shape::Array(ArrayShape::new(lit.ty, lit.dims.clone()));
    let mut i = Instruction::new(name, Opcode::Constant, shape);
    i.constant = Some(Constant::Literal(Literal::Array(lit)));
    i
}

/// Inserts, just before `before`, instructions producing an array of `shape` filled with the
/// scalar `lit` (a constant, and a broadcast when `shape` has rank > 0). Returns the id of the
/// value and the position `before` moved to.
pub fn insert_splat(
    m: &mut Module,
    comp: CompId,
    before: InstrId,
    shape: &ArrayShape,
    lit: ArrayLiteral,
    base: &str,
) -> (InstrId, InstrId) {
    let cname = fresh_name(m, base);
    let c = &mut m.computations[comp];
    let k = insert(c, before, constant_instruction(cname, lit));
    if shape.dims.is_empty() {
        return (k, before + 1);
    }
    let bname = fresh_name(m, base);
    let c = &mut m.computations[comp];
    let mut b = Instruction::new(bname, Opcode::Broadcast, Shape::Array(shape.clone()));
    b.operands = vec![k];
    b.set_attr("dimensions", Attr::Ints(vec![]));
    let id = insert(c, before + 1, b);
    (id, before + 2)
}

/// Ids of instructions the root (and side-effecting instructions) reach, in a computation.
pub fn live(c: &Computation) -> Vec<bool> {
    let mut live = vec![false; c.instructions.len()];
    let mut stack = vec![c.root];
    for (k, i) in c.instructions.iter().enumerate() {
        if i.has_side_effect() {
            stack.push(k);
        }
    }
    while let Some(k) = stack.pop() {
        if k >= live.len() || live[k] {
            continue;
        }
        live[k] = true;
        let i = &c.instructions[k];
        stack.extend(i.operands.iter().copied());
        stack.extend(i.control_predecessors().iter().copied());
    }
    live
}

/// The instruction ids whose values are the leaves of `id`'s result, when it is built by
/// `tuple` instructions (one entry per array leaf of the shape, in depth-first order; `None`
/// where a leaf does not come from a visible producer).
pub fn leaf_producers(c: &Computation, id: InstrId) -> Vec<InstrId> {
    let i = &c.instructions[id];
    if i.opcode == Opcode::Tuple {
        i.operands
            .iter()
            .flat_map(|&o| leaf_producers(c, o))
            .collect()
    } else {
        std::iter::repeat_n(id, i.shape.leaves().len().max(1)).collect()
    }
}

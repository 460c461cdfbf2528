//! Small scalar computations (sort comparators such as jax's NaN- and zero-canonicalizing
//! `lt_to`) compiled into a straight-line program over unboxed scalars, so that running them per
//! comparison costs nanoseconds instead of a full computation call (a `Value` per instruction).
//!
//! Only computations whose every instruction is a rank-0 real or pred value and whose opcodes are
//! parameter, constant, compare, select, and/or/xor/not (pred only) are compiled; anything else
//! falls back to the general evaluator. Semantics are the evaluator's: floats compare as IEEE
//! (`type=TOTALORDER`: total order, -NaN < -inf < ... < -0 < +0 < ... < +NaN), integers by
//! signedness.

use crate::elementwise::{to_f64s, to_i64s};
use crate::value::{Array, Value};
use crate::{attrs, Result};
use hlo::{Computation, Module, Opcode, PrimitiveType, Shape, TypeClass};
use std::cmp::Ordering;

/// One unboxed scalar. Float values of every float type are exact in f64.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sv {
    F(f64),
    S(i64),
    U(u64),
    P(bool),
}

#[derive(Clone, Copy, PartialEq)]
enum Dir {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

enum Op {
    Param(usize),
    Const(Sv),
    Compare {
        a: usize,
        b: usize,
        dir: Dir,
        total: bool,
    },
    Select {
        p: usize,
        a: usize,
        b: usize,
    },
    And(usize, usize),
    Or(usize, usize),
    Xor(usize, usize),
    Not(usize),
}

/// A compiled computation: `ops` in dependency order, each writing its own slot.
pub struct ScalarProg {
    ops: Vec<Op>,
    /// The type class of each parameter, in parameter order.
    pub params: Vec<PrimitiveType>,
}

fn scalar_type(s: &Shape) -> Option<PrimitiveType> {
    match s {
        Shape::Array(a) if a.dims.is_empty() => match a.ty.class() {
            TypeClass::Float | TypeClass::Signed | TypeClass::Unsigned | TypeClass::Pred => {
                Some(a.ty)
            }
            _ => None,
        },
        _ => None,
    }
}

/// The scalar of a rank-0 (or any) array at flat index `k`.
pub fn sv_of(ty: PrimitiveType, a: &Array, k: usize) -> Option<Sv> {
    Some(match ty.class() {
        TypeClass::Float => Sv::F(*to_f64s(&a.buf.take(&[k])).first()?),
        TypeClass::Pred => Sv::P(a.get_bool(k)),
        TypeClass::Signed => Sv::S(a.get_i64(k)),
        TypeClass::Unsigned => Sv::U(a.get_i64(k) as u64),
        _ => return None,
    })
}

/// Every element of `a` as a scalar (None for complex and other types).
pub fn svs_of(a: &Array) -> Option<Vec<Sv>> {
    Some(match a.ty.class() {
        TypeClass::Float => to_f64s(&a.buf).into_iter().map(Sv::F).collect(),
        TypeClass::Pred => (0..a.len()).map(|k| Sv::P(a.get_bool(k))).collect(),
        TypeClass::Signed => to_i64s(&a.buf)?.into_iter().map(Sv::S).collect(),
        TypeClass::Unsigned => to_i64s(&a.buf)?
            .into_iter()
            .map(|x| Sv::U(x as u64))
            .collect(),
        _ => return None,
    })
}

impl ScalarProg {
    /// Compiles computation `c` of `module`, or `None` when it uses anything outside the subset.
    pub fn compile(module: &Module, c: usize) -> Option<ScalarProg> {
        let comp: &Computation = module.computations.get(c)?;
        let n = comp.instructions.len();
        if n == 0 || n > 256 || comp.root >= n {
            return None;
        }
        // Post-order from the root (iterative), so unused instructions are skipped.
        let mut order = Vec::with_capacity(n);
        let mut state = vec![0u8; n]; // 0 new, 1 open, 2 done
        let mut stack = vec![(comp.root, false)];
        while let Some((id, expanded)) = stack.pop() {
            if expanded {
                state[id] = 2;
                order.push(id);
                continue;
            }
            match state[id] {
                2 => continue,
                1 => return None, // a cycle: let the evaluator report it
                _ => {}
            }
            state[id] = 1;
            stack.push((id, true));
            for &o in comp.instructions.get(id)?.operands.iter().rev() {
                if o >= n {
                    return None;
                }
                if state[o] != 2 {
                    stack.push((o, false));
                }
            }
        }
        let mut slot = vec![usize::MAX; n];
        let mut ops = Vec::with_capacity(order.len());
        let mut tys = Vec::with_capacity(order.len());
        let mut params: Vec<Option<PrimitiveType>> = Vec::new();
        for &id in &order {
            let i = &comp.instructions[id];
            let ty = scalar_type(&i.shape)?;
            let opnd = |k: usize| -> Option<usize> {
                let s = slot[*i.operands.get(k)?];
                (s != usize::MAX).then_some(s)
            };
            let arity_ok = |k: usize| i.operands.len() == k;
            let op = match i.opcode {
                Opcode::Parameter => {
                    let p = usize::try_from(i.parameter_number?).ok()?;
                    if params.len() <= p {
                        params.resize(p + 1, None);
                    }
                    params[p] = Some(ty);
                    Op::Param(p)
                }
                Opcode::Constant => {
                    let hlo::Constant::Literal(l) = i.constant.as_ref()? else {
                        return None;
                    };
                    let v = Value::from_literal(l).ok()?;
                    let a = v.as_array()?;
                    if a.len() != 1 || a.ty != ty {
                        return None;
                    }
                    Op::Const(sv_of(a.ty, a, 0)?)
                }
                Opcode::Compare if arity_ok(2) => {
                    let (a, b) = (opnd(0)?, opnd(1)?);
                    if tys[a] != tys[b] || ty != PrimitiveType::Pred {
                        return None;
                    }
                    let dir = match attrs::word(i, "direction")?.as_str() {
                        "EQ" => Dir::Eq,
                        "NE" => Dir::Ne,
                        "LT" => Dir::Lt,
                        "LE" => Dir::Le,
                        "GT" => Dir::Gt,
                        "GE" => Dir::Ge,
                        _ => return None,
                    };
                    let total = attrs::word(i, "type").as_deref() == Some("TOTALORDER");
                    Op::Compare { a, b, dir, total }
                }
                Opcode::Select if arity_ok(3) => {
                    let (p, a, b) = (opnd(0)?, opnd(1)?, opnd(2)?);
                    if tys[p] != PrimitiveType::Pred || tys[a] != ty || tys[b] != ty {
                        return None;
                    }
                    Op::Select { p, a, b }
                }
                Opcode::And | Opcode::Or | Opcode::Xor if arity_ok(2) => {
                    let (a, b) = (opnd(0)?, opnd(1)?);
                    if ty != PrimitiveType::Pred || tys[a] != ty || tys[b] != ty {
                        return None;
                    }
                    match i.opcode {
                        Opcode::And => Op::And(a, b),
                        Opcode::Or => Op::Or(a, b),
                        _ => Op::Xor(a, b),
                    }
                }
                Opcode::Not if arity_ok(1) => {
                    let a = opnd(0)?;
                    if ty != PrimitiveType::Pred || tys[a] != ty {
                        return None;
                    }
                    Op::Not(a)
                }
                _ => return None,
            };
            slot[id] = ops.len();
            ops.push(op);
            tys.push(ty);
        }
        if *tys.last()? != PrimitiveType::Pred {
            return None;
        }
        // Every parameter must be present in the computation's signature.
        let declared = comp.parameter_shapes();
        if params.len() > declared.len() {
            return None;
        }
        let params = declared
            .iter()
            .map(scalar_type)
            .collect::<Option<Vec<_>>>()?;
        Some(ScalarProg { ops, params })
    }

    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Runs the program; `regs` is scratch space (reused between calls). The arguments must have
    /// the parameters' type classes (checked when the keys are built, see [`svs_of`]).
    pub fn run_pred(&self, args: &[Sv], regs: &mut Vec<Sv>) -> Result<bool> {
        regs.clear();
        for op in &self.ops {
            let v = match *op {
                Op::Param(p) => *args
                    .get(p)
                    .ok_or_else(|| crate::invalid(format!("parameter({p}) has no argument")))?,
                Op::Const(v) => v,
                Op::Compare { a, b, dir, total } => Sv::P(compare(regs[a], regs[b], dir, total)),
                Op::Select { p, a, b } => {
                    if matches!(regs[p], Sv::P(true)) {
                        regs[a]
                    } else {
                        regs[b]
                    }
                }
                Op::And(a, b) => Sv::P(pred(regs[a]) & pred(regs[b])),
                Op::Or(a, b) => Sv::P(pred(regs[a]) | pred(regs[b])),
                Op::Xor(a, b) => Sv::P(pred(regs[a]) ^ pred(regs[b])),
                Op::Not(a) => Sv::P(!pred(regs[a])),
            };
            regs.push(v);
        }
        Ok(regs.last().map(|&v| pred(v)).unwrap_or(false))
    }
}

fn pred(v: Sv) -> bool {
    matches!(v, Sv::P(true))
}

fn compare(x: Sv, y: Sv, dir: Dir, total: bool) -> bool {
    let o: Option<Ordering> = match (x, y) {
        (Sv::F(a), Sv::F(b)) => {
            if total {
                Some(a.total_cmp(&b))
            } else {
                a.partial_cmp(&b)
            }
        }
        (Sv::S(a), Sv::S(b)) => Some(a.cmp(&b)),
        (Sv::U(a), Sv::U(b)) => Some(a.cmp(&b)),
        (Sv::P(a), Sv::P(b)) => Some(a.cmp(&b)),
        _ => None,
    };
    match dir {
        Dir::Eq => o == Some(Ordering::Equal),
        Dir::Ne => o != Some(Ordering::Equal),
        Dir::Lt => o == Some(Ordering::Less),
        Dir::Le => matches!(o, Some(Ordering::Less | Ordering::Equal)),
        Dir::Gt => o == Some(Ordering::Greater),
        Dir::Ge => matches!(o, Some(Ordering::Greater | Ordering::Equal)),
    }
}

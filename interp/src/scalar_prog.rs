//! Small scalar computations (sort comparators such as jax's NaN- and zero-canonicalizing
//! `lt_to`) compiled into a straight-line program over unboxed scalars, so that running them per
//! comparison costs nanoseconds instead of a full computation call (a `Value` per instruction).
//!
//! Only computations whose every instruction is a rank-0 real or pred value (the root may be a
//! tuple of them) and whose opcodes are parameter, constant, compare, select, and/or/xor/not
//! (pred), the float unary and binary ops on f16/bf16/f32/f64, and the integer binary ops are
//! compiled; anything else falls back to the general evaluator. Semantics are the evaluator's,
//! by the same functions: floats are computed in f64 and rounded once to the element type;
//! integers wrap; floats compare as IEEE (`type=TOTALORDER`: total order, -NaN < -inf < ... <
//! -0 < +0 < ... < +NaN), integers by signedness.

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
    FUn {
        a: usize,
        f: fn(f64) -> f64,
        ty: PrimitiveType,
    },
    FBin {
        a: usize,
        b: usize,
        f: fn(f64, f64) -> f64,
        ty: PrimitiveType,
    },
    IBin {
        a: usize,
        b: usize,
        f: IntFn,
        unsigned: bool,
    },
}

type IntFn = Box<dyn Fn(i64, i64) -> i64 + Sync + Send>;

/// Rounds an f64 to float type `ty` (one rounding, as the evaluator's `FloatElem::from_f64`).
fn round_to(ty: PrimitiveType, x: f64) -> f64 {
    use crate::value::FloatElem;
    match ty {
        PrimitiveType::F32 => x as f32 as f64,
        PrimitiveType::F16 => <half::f16 as FloatElem>::from_f64(x).to_f64(),
        PrimitiveType::Bf16 => <half::bf16 as FloatElem>::from_f64(x).to_f64(),
        _ => x,
    }
}

fn arith_float(ty: PrimitiveType) -> bool {
    matches!(
        ty,
        PrimitiveType::F16 | PrimitiveType::Bf16 | PrimitiveType::F32 | PrimitiveType::F64
    )
}

/// A compiled computation: `ops` in dependency order, each writing its own slot.
pub struct ScalarProg {
    ops: Vec<Op>,
    /// Slots of the results (one, or the root tuple's elements) and their types.
    outs: Vec<usize>,
    pub out_types: Vec<PrimitiveType>,
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
        // Not `get_i64`: it saturates u64 values above i64::MAX (right for indices only).
        TypeClass::Unsigned => match &a.buf {
            crate::value::Buffer::U64(v) => Sv::U(v[k]),
            _ => Sv::U(a.get_i64(k) as u64),
        },
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
        let root_is_tuple = comp.instructions[comp.root].opcode == Opcode::Tuple;
        for &id in &order {
            let i = &comp.instructions[id];
            if id == comp.root && root_is_tuple {
                continue;
            }
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
                op if arity_ok(1) && arith_float(ty) => {
                    let a = opnd(0)?;
                    if tys[a] != ty {
                        return None;
                    }
                    Op::FUn {
                        a,
                        f: crate::elementwise::unary_float_fn(op)?,
                        ty,
                    }
                }
                op if arity_ok(2) && arith_float(ty) => {
                    let (a, b) = (opnd(0)?, opnd(1)?);
                    if tys[a] != ty || tys[b] != ty {
                        return None;
                    }
                    Op::FBin {
                        a,
                        b,
                        f: crate::elementwise::float_binop(op)?,
                        ty,
                    }
                }
                op if arity_ok(2)
                    && matches!(ty.class(), TypeClass::Signed | TypeClass::Unsigned) =>
                {
                    let (a, b) = (opnd(0)?, opnd(1)?);
                    if tys[a] != ty || tys[b] != ty {
                        return None;
                    }
                    let unsigned = ty.class() == TypeClass::Unsigned;
                    Op::IBin {
                        a,
                        b,
                        f: crate::elementwise::int_binary_fn(op, ty.bit_width(), !unsigned)?,
                        unsigned,
                    }
                }
                _ => return None,
            };
            slot[id] = ops.len();
            ops.push(op);
            tys.push(ty);
        }
        let (outs, out_types): (Vec<usize>, Vec<PrimitiveType>) = if root_is_tuple {
            let root = &comp.instructions[comp.root];
            let mut o = Vec::new();
            for &e in &root.operands {
                let s = *slot.get(e)?;
                if s == usize::MAX {
                    return None;
                }
                o.push((s, tys[s]));
            }
            o.into_iter().unzip()
        } else {
            (vec![ops.len() - 1], vec![*tys.last()?])
        };
        // Every parameter must be present in the computation's signature.
        let declared = comp.parameter_shapes();
        if params.len() > declared.len() {
            return None;
        }
        let params = declared
            .iter()
            .map(scalar_type)
            .collect::<Option<Vec<_>>>()?;
        Some(ScalarProg {
            ops,
            outs,
            out_types,
            params,
        })
    }

    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Runs the program; `regs` is scratch space (reused between calls), the results are read
    /// with [`ScalarProg::output`]. The arguments must have the parameters' type classes (checked
    /// when the keys are built, see [`svs_of`]).
    pub fn run(&self, args: &[Sv], regs: &mut Vec<Sv>) -> Result<()> {
        regs.clear();
        for op in &self.ops {
            let v = match op {
                Op::Param(p) => *args
                    .get(*p)
                    .ok_or_else(|| crate::invalid(format!("parameter({p}) has no argument")))?,
                Op::Const(v) => *v,
                Op::Compare { a, b, dir, total } => {
                    Sv::P(compare(regs[*a], regs[*b], *dir, *total))
                }
                Op::Select { p, a, b } => {
                    if matches!(regs[*p], Sv::P(true)) {
                        regs[*a]
                    } else {
                        regs[*b]
                    }
                }
                Op::And(a, b) => Sv::P(pred(regs[*a]) & pred(regs[*b])),
                Op::Or(a, b) => Sv::P(pred(regs[*a]) | pred(regs[*b])),
                Op::Xor(a, b) => Sv::P(pred(regs[*a]) ^ pred(regs[*b])),
                Op::Not(a) => Sv::P(!pred(regs[*a])),
                Op::FUn { a, f, ty } => Sv::F(round_to(*ty, f(float(regs[*a])))),
                Op::FBin { a, b, f, ty } => {
                    Sv::F(round_to(*ty, f(float(regs[*a]), float(regs[*b]))))
                }
                Op::IBin { a, b, f, unsigned } => {
                    let r = f(int(regs[*a]), int(regs[*b]));
                    if *unsigned {
                        Sv::U(r as u64)
                    } else {
                        Sv::S(r)
                    }
                }
            };
            regs.push(v);
        }
        Ok(())
    }

    /// Result `k` of the last [`ScalarProg::run`].
    pub fn output(&self, regs: &[Sv], k: usize) -> Sv {
        regs[self.outs[k]]
    }

    /// Runs a program with one pred result.
    pub fn run_pred(&self, args: &[Sv], regs: &mut Vec<Sv>) -> Result<bool> {
        self.run(args, regs)?;
        Ok(pred(self.output(regs, 0)))
    }
}

fn float(v: Sv) -> f64 {
    match v {
        Sv::F(x) => x,
        _ => f64::NAN,
    }
}

fn int(v: Sv) -> i64 {
    match v {
        Sv::S(x) => x,
        Sv::U(x) => x as i64,
        Sv::P(b) => b as i64,
        Sv::F(x) => x as i64,
    }
}

/// Scalars of type `ty` as an array of dimensions `dims`.
pub fn array_of(ty: PrimitiveType, dims: Vec<usize>, v: &[Sv]) -> Result<Array> {
    use crate::value::Buffer;
    let wide = match ty.class() {
        TypeClass::Float => Array::new(
            PrimitiveType::F64,
            dims,
            Buffer::F64(v.iter().map(|&x| float(x)).collect()),
        ),
        TypeClass::Pred => {
            return Ok(Array::new(
                ty,
                dims,
                Buffer::Pred(v.iter().map(|&x| pred(x)).collect()),
            ))
        }
        TypeClass::Signed => Array::new(
            PrimitiveType::S64,
            dims,
            Buffer::S64(v.iter().map(|&x| int(x)).collect()),
        ),
        TypeClass::Unsigned => Array::new(
            PrimitiveType::U64,
            dims,
            Buffer::U64(v.iter().map(|&x| int(x) as u64).collect()),
        ),
        _ => {
            return Err(crate::unsupported(format!(
                "scalar program result of type {ty}"
            )))
        }
    };
    crate::convert::convert(&wide, ty)
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

//! reduce, reduce-window, select-and-scatter and scatter: ops that apply a called computation.
//!
//! A called computation that is one binary op of its two scalar parameters (add, multiply,
//! maximum, ...) runs as a typed loop; any other computation is called per element, in XLA's
//! order (row-major over the reduced/window/update indices).

use crate::elementwise::{c64_binop_single, complex_binop, float_binop, int_binary_fn, pred_binop};
use crate::eval::{arr, out_dims, Ctx};
use crate::shape_ops::start_vector;
use crate::value::{for_each_index, product, strides, Array, Buffer, FloatElem, IntElem, Value};
use crate::variant::{ComplexMul, ReduceOrder};
use crate::{attrs, invalid, Result};
use hlo::{CompId, Instruction, Module, Opcode, PrimitiveType, Shape, TypeClass};
use rayon::prelude::*;

/// If computation `c` is `op(parameter(0), parameter(1))` on scalars, the op, and whether its
/// operands are the other way round (`op(parameter(1), parameter(0))`). The order matters where
/// the op does not round the same both ways round: complex multiply fuses one partial product
/// of its imaginary part, the one its first operand's imaginary part makes
/// ([`crate::variant::ComplexMul`]).
pub fn simple_binop(module: &Module, c: CompId) -> Option<(Opcode, bool)> {
    let comp = module.computations.get(c)?;
    let root = comp.instructions.get(comp.root)?;
    use Opcode as O;
    if root.opcode == O::Conditional {
        return same_binop_in_every_branch(module, comp, root);
    }
    if !matches!(
        root.opcode,
        O::Add | O::Multiply | O::Maximum | O::Minimum | O::And | O::Or | O::Xor
    ) {
        return None;
    }
    if root.operands.len() != 2 || comp.parameters().len() != 2 {
        return None;
    }
    let p = |k: usize| {
        comp.instructions.get(root.operands[k]).and_then(|i| {
            if i.opcode == O::Parameter {
                i.parameter_number
            } else {
                None
            }
        })
    };
    match (p(0), p(1)) {
        (Some(0), Some(1)) => Some((root.opcode, false)),
        (Some(1), Some(0)) => Some((root.opcode, true)),
        _ => None,
    }
}

/// A reducer `conditional(pred, tuple(p0, p1), ...)` whose every branch is the same binary op
/// of the pair it is passed (`op(gte(t, 0), gte(t, 1))`): that op, whichever branch runs.
fn same_binop_in_every_branch(
    module: &Module,
    comp: &hlo::Computation,
    root: &hlo::Instruction,
) -> Option<(Opcode, bool)> {
    use Opcode as O;
    if comp.parameters().len() != 2 {
        return None;
    }
    let branches: Vec<usize> = match root.comps("branch_computations") {
        Some(b) => b.to_vec(),
        None => vec![
            root.comp("true_computation")?,
            root.comp("false_computation")?,
        ],
    };
    if branches.is_empty() || root.operands.len() != branches.len() + 1 {
        return None;
    }
    let param = |c: &hlo::Computation, id: usize| {
        c.instructions
            .get(id)
            .filter(|i| i.opcode == O::Parameter)
            .and_then(|i| i.parameter_number)
    };
    let mut found: Option<(Opcode, bool)> = None;
    for (k, &b) in branches.iter().enumerate() {
        // The branch's operand: the reducer's two parameters, as a pair.
        let arg = comp.instructions.get(root.operands[k + 1])?;
        if arg.opcode != O::Tuple || arg.operands.len() != 2 {
            return None;
        }
        let pair = (param(comp, arg.operands[0])?, param(comp, arg.operands[1])?);
        let branch = module.computations.get(b)?;
        let broot = branch.instructions.get(branch.root)?;
        if !matches!(
            broot.opcode,
            O::Add | O::Multiply | O::Maximum | O::Minimum | O::And | O::Or | O::Xor
        ) || broot.operands.len() != 2
            || branch.parameters().len() != 1
        {
            return None;
        }
        let index = |id: usize| {
            let g = branch.instructions.get(id)?;
            (g.opcode == O::GetTupleElement && param(branch, *g.operands.first()?) == Some(0))
                .then(|| g.int("index"))
                .flatten()
        };
        let (i0, i1) = (index(broot.operands[0])?, index(broot.operands[1])?);
        let pick = |i: i64| match i {
            0 => Some(pair.0),
            1 => Some(pair.1),
            _ => None,
        };
        let swapped = match (pick(i0)?, pick(i1)?) {
            (0, 1) => false,
            (1, 0) => true,
            _ => return None,
        };
        match found {
            None => found = Some((broot.opcode, swapped)),
            Some(f) if f == (broot.opcode, swapped) => {}
            Some(_) => return None,
        }
    }
    found
}

/// If computation `c` returns its second parameter (scatter's "replace" combiner).
pub(crate) fn is_assign(module: &Module, c: CompId) -> bool {
    let Some(comp) = module.computations.get(c) else {
        return false;
    };
    let Some(root) = comp.instructions.get(comp.root) else {
        return false;
    };
    comp.parameters().len() == 2
        && root.opcode == Opcode::Parameter
        && root.parameter_number == Some(1)
}

/// Groups of source positions: group g is `positions[offsets[g]..offsets[g+1]]`.
pub struct Groups {
    pub positions: Vec<usize>,
    pub offsets: Vec<usize>,
}

impl Groups {
    pub(crate) fn len(&self) -> usize {
        self.offsets.len() - 1
    }
    pub(crate) fn group(&self, g: usize) -> &[usize] {
        &self.positions[self.offsets[g]..self.offsets[g + 1]]
    }
}

fn fold_float<T: FloatElem>(
    data: &[T],
    init: T,
    groups: &Groups,
    f: fn(f64, f64) -> f64,
    order: ReduceOrder,
) -> Vec<T> {
    let one = |g: usize| {
        // Round after every step: the accumulator has the element type.
        let step = |acc: f64, x: f64| T::from_f64(f(acc, x)).to_f64();
        let elements = groups.group(g).iter().map(|&p| data[p].to_f64());
        T::from_f64(order.fold(init.to_f64(), elements, step, |x: &f64| x.abs()))
    };
    if groups.positions.len() >= crate::elementwise::PAR_THRESHOLD && groups.len() > 1 {
        (0..groups.len()).into_par_iter().map(one).collect()
    } else {
        (0..groups.len()).map(one).collect()
    }
}

fn fold_int<T: IntElem>(
    data: &[T],
    init: T,
    groups: &Groups,
    f: &(dyn Fn(i64, i64) -> i64 + Sync),
) -> Vec<T> {
    (0..groups.len())
        .map(|g| {
            let mut acc = init.to_i64();
            for &p in groups.group(g) {
                acc = f(acc, data[p].to_i64());
            }
            T::from_i64(acc)
        })
        .collect()
}

/// Folds complex values with `f(accumulator, element)`, or `f(element, accumulator)` when
/// `swapped` (the reducer is `op(parameter(1), parameter(0))`), in the element type's own
/// precision: c64 in single precision, as XLA CPU computes it (a partial product that overflows
/// f32 makes a part inf or NaN where the exact product is finite).
fn fold_complex<T: Copy>(
    data: &[T],
    init: T,
    groups: &Groups,
    f: fn(T, T) -> T,
    swapped: bool,
    order: ReduceOrder,
    magnitude: fn(&T) -> f64,
) -> Vec<T> {
    let step = |acc: T, x: T| if swapped { f(x, acc) } else { f(acc, x) };
    (0..groups.len())
        .map(|g| {
            order.fold(
                init,
                groups.group(g).iter().map(|&p| data[p]),
                step,
                magnitude,
            )
        })
        .collect()
}

/// The typed-loop fold for a recognized binary op; `None` when the op does not apply to the type.
/// `swapped`: the reducer is `op(parameter(1), parameter(0))` (see [`simple_binop`]); `mul`:
/// complex multiply's contraction (the variant's).
fn fold_fast(
    op: Opcode,
    swapped: bool,
    mul: ComplexMul,
    order: ReduceOrder,
    ty: PrimitiveType,
    data: &Buffer,
    init: &Buffer,
    groups: &Groups,
) -> Option<Buffer> {
    match ty.class() {
        TypeClass::Float => {
            let f = float_binop(op)?;
            Some(
                crate::map_float_buf2!(data, init, d, i0 => fold_float(d, i0[0], groups, f, order), return None),
            )
        }
        TypeClass::Signed | TypeClass::Unsigned => {
            let f = int_binary_fn(op, ty.bit_width(), ty.is_signed_integer())?;
            Some(
                crate::map_int_buf2!(data, init, d, i0 => fold_int(d, i0[0], groups, &*f), return None),
            )
        }
        TypeClass::Pred => {
            let f = pred_binop(op)?;
            match (data, init) {
                (Buffer::Pred(d), Buffer::Pred(i0)) => Some(Buffer::Pred(
                    (0..groups.len())
                        .map(|g| groups.group(g).iter().fold(i0[0], |acc, &p| f(acc, d[p])))
                        .collect(),
                )),
                _ => None,
            }
        }
        TypeClass::Complex => match (data, init) {
            (Buffer::C64(d), Buffer::C64(i0)) => {
                let f = c64_binop_single(op, mul)?;
                Some(Buffer::C64(fold_complex(
                    d,
                    i0[0],
                    groups,
                    f,
                    swapped,
                    order,
                    |z| z.l1_norm() as f64,
                )))
            }
            (Buffer::C128(d), Buffer::C128(i0)) => {
                let f = complex_binop(op, mul)?;
                Some(Buffer::C128(fold_complex(
                    d,
                    i0[0],
                    groups,
                    f,
                    swapped,
                    order,
                    |z| z.l1_norm(),
                )))
            }
            _ => None,
        },
        TypeClass::Other => None,
    }
}

fn fast_ok(op: Opcode, ty: PrimitiveType) -> bool {
    match ty.class() {
        TypeClass::Float => float_binop(op).is_some(),
        TypeClass::Signed | TypeClass::Unsigned => {
            int_binary_fn(op, ty.bit_width(), ty.is_signed_integer()).is_some()
        }
        TypeClass::Pred => pred_binop(op).is_some(),
        TypeClass::Complex => complex_binop(op, ComplexMul::Fused).is_some(),
        TypeClass::Other => false,
    }
}

pub fn scalar(a: &Array, i: usize) -> Value {
    Value::array(Array::new(a.ty, vec![], a.buf.take(&[i])))
}

/// Splits a computation result into `n` scalar arrays.
fn unpack(v: Value, n: usize) -> Result<Vec<std::sync::Arc<Array>>> {
    match v {
        Value::Array(a) if n == 1 => Ok(vec![a]),
        Value::Tuple(t) if t.len() == n => t.iter().map(|x| arr(x).cloned()).collect(),
        _ => Err(invalid(format!(
            "called computation must return {n} scalar(s)"
        ))),
    }
}

/// Folds each group through computation `c` called per element: variadic, any computation.
fn fold_general(
    ctx: &mut Ctx,
    c: CompId,
    inputs: &[&Array],
    inits: &[&Array],
    groups: &Groups,
) -> Result<Vec<Array>> {
    let n = inputs.len();
    let mut outs: Vec<Array> = inits
        .iter()
        .map(|a| {
            Ok(Array::new(
                a.ty,
                vec![groups.len()],
                Buffer::zeros(a.ty, groups.len())?,
            ))
        })
        .collect::<Result<_>>()?;
    if let Some(outs) = fold_compiled(ctx, c, inputs, inits, groups)? {
        return Ok(outs);
    }
    for g in 0..groups.len() {
        let mut accs: Vec<std::sync::Arc<Array>> = inits
            .iter()
            .map(|a| std::sync::Arc::new((*a).clone()))
            .collect();
        for &p in groups.group(g) {
            let mut args: Vec<Value> = accs.iter().map(|a| Value::Array(a.clone())).collect();
            args.extend(inputs.iter().map(|a| scalar(a, p)));
            accs = unpack(ctx.call(c, args)?, n)?;
        }
        for (k, a) in accs.iter().enumerate() {
            if a.len() != 1 || !outs[k].buf.set_from(g, &a.buf, 0) {
                return Err(invalid("reducer result has the wrong type"));
            }
        }
    }
    Ok(outs)
}

/// [`fold_general`] with the reducer compiled to a scalar program, when it compiles and its
/// parameters and results have the accumulators' and inputs' types (`Ok(None)` otherwise).
fn fold_compiled(
    ctx: &mut Ctx,
    c: CompId,
    inputs: &[&Array],
    inits: &[&Array],
    groups: &Groups,
) -> Result<Option<Vec<Array>>> {
    use crate::scalar_prog::{array_of, sv_of, svs_of, ScalarProg};
    let n = inputs.len();
    let Some(prog) = ScalarProg::compile(ctx.module, c) else {
        return Ok(None);
    };
    let types_fit = prog.params.len() == 2 * n
        && prog.out_types.len() == n
        && (0..n).all(|k| {
            prog.params[k] == inits[k].ty
                && prog.params[n + k] == inputs[k].ty
                && prog.out_types[k] == inits[k].ty
                && inits[k].len() == 1
        });
    if !types_fit {
        return Ok(None);
    }
    let Some(keys) = inputs.iter().map(|a| svs_of(a)).collect::<Option<Vec<_>>>() else {
        return Ok(None);
    };
    let Some(init) = inits
        .iter()
        .map(|a| sv_of(a.ty, a, 0))
        .collect::<Option<Vec<_>>>()
    else {
        return Ok(None);
    };
    ctx.step((groups.positions.len() as u64).saturating_mul(prog.len() as u64))?;
    let mut results: Vec<Vec<crate::scalar_prog::Sv>> = vec![Vec::with_capacity(groups.len()); n];
    let (mut args, mut regs) = (Vec::with_capacity(2 * n), Vec::with_capacity(prog.len()));
    let mut accs = init.clone();
    for g in 0..groups.len() {
        accs.copy_from_slice(&init);
        for &p in groups.group(g) {
            args.clear();
            args.extend_from_slice(&accs);
            args.extend(keys.iter().map(|k| k[p]));
            prog.run(&args, &mut regs)?;
            for (k, a) in accs.iter_mut().enumerate() {
                *a = prog.output(&regs, k);
            }
        }
        for (k, a) in accs.iter().enumerate() {
            results[k].push(*a);
        }
    }
    let outs = results
        .iter()
        .zip(inits)
        .map(|(v, i)| array_of(i.ty, vec![groups.len()], v))
        .collect::<Result<Vec<_>>>()?;
    Ok(Some(outs))
}

/// Runs the fold for each group, fast when possible. Results are flat (one element per group).
fn fold(
    ctx: &mut Ctx,
    c: CompId,
    inputs: &[&Array],
    inits: &[&Array],
    groups: &Groups,
) -> Result<Vec<Array>> {
    if inputs.len() == 1 {
        if let Some((op, swapped)) = simple_binop(ctx.module, c) {
            let (a, i0) = (inputs[0], inits[0]);
            if a.ty == i0.ty && i0.len() == 1 {
                let (mul, order) = (ctx.variant().complex_mul, ctx.variant().reduce_order);
                if let Some(buf) = fold_fast(op, swapped, mul, order, a.ty, &a.buf, &i0.buf, groups)
                {
                    ctx.step(groups.positions.len() as u64 / 8)?;
                    return Ok(vec![Array::new(a.ty, vec![groups.len()], buf)]);
                }
            }
        }
    }
    ctx.step(groups.positions.len() as u64)?;
    fold_general(ctx, c, inputs, inits, groups)
}

fn split_operands<'v>(ops: &[&'v Value]) -> Result<(Vec<&'v Array>, Vec<&'v Array>)> {
    if ops.is_empty() || ops.len() % 2 != 0 {
        return Err(invalid("expects N inputs and N init values"));
    }
    let n = ops.len() / 2;
    let arrays: Vec<&Array> = ops
        .iter()
        .map(|v| arr(v).map(|a| &**a))
        .collect::<Result<_>>()?;
    let (a, b) = arrays.split_at(n);
    for (x, i0) in a.iter().zip(b) {
        if i0.len() != 1 || !i0.dims.is_empty() {
            return Err(invalid("init values must be scalars"));
        }
        if x.dims != a[0].dims {
            return Err(invalid("reduce inputs differ in shape"));
        }
    }
    Ok((a.to_vec(), b.to_vec()))
}

fn result_value(i: &Instruction, outs: Vec<Array>, dims: &[usize]) -> Result<Value> {
    let mut vals: Vec<Value> = outs
        .into_iter()
        .map(|mut a| {
            a.dims = dims.to_vec();
            Value::array(a)
        })
        .collect();
    match &i.shape {
        Shape::Tuple(_) => Ok(Value::Tuple(vals)),
        _ if vals.len() == 1 => Ok(vals.pop().unwrap()),
        _ => Err(invalid("variadic op must have a tuple shape")),
    }
}

pub fn reduce(ctx: &mut Ctx, i: &Instruction, ops: &[&Value]) -> Result<Value> {
    let (inputs, inits) = split_operands(ops)?;
    let c = attrs::comp(i, "to_apply")?;
    let (groups, out_d) = reduce_groups(i, &inputs[0].dims)?;
    let outs = fold(ctx, c, &inputs, &inits, &groups)?;
    result_value(i, outs, &out_d)
}

/// For a reduce of an operand of dims `in_dims`: the positions (row-major) each output element
/// folds, in row-major order of the reduced dimensions, and the output's dims.
pub(crate) fn reduce_groups(i: &Instruction, in_dims: &[usize]) -> Result<(Groups, Vec<usize>)> {
    let rd = attrs::dims(i, "dimensions")?;
    if rd.iter().any(|&d| d >= in_dims.len()) {
        return Err(invalid("reduce dimension out of range"));
    }
    let kept: Vec<usize> = (0..in_dims.len()).filter(|d| !rd.contains(d)).collect();
    let mut red: Vec<usize> = rd.clone();
    red.sort_unstable();
    red.dedup();
    let order: Vec<usize> = kept.iter().chain(&red).copied().collect();
    let pdims: Vec<usize> = order.iter().map(|&d| in_dims[d]).collect();
    let st = strides(in_dims);
    let mut positions = Vec::with_capacity(product(in_dims));
    for_each_index(&pdims, |idx, _| {
        positions.push(idx.iter().zip(&order).map(|(&x, &d)| x * st[d]).sum())
    });
    let out_d: Vec<usize> = kept.iter().map(|&d| in_dims[d]).collect();
    let ng = product(&out_d);
    let r: usize = red.iter().map(|&d| in_dims[d]).product();
    let groups = Groups {
        positions,
        offsets: (0..=ng).map(|g| g * r).collect(),
    };
    Ok((groups, out_d))
}

/// For a window op: the positions (row-major in the operand) each output element's window
/// covers, skipping padding and base-dilation holes.
pub(crate) fn window_groups(i: &Instruction, in_dims: &[usize], out_d: &[usize]) -> Result<Groups> {
    let w = i.window().ok_or_else(|| invalid("missing window"))?;
    if w.dims.len() != in_dims.len() || out_d.len() != in_dims.len() {
        return Err(invalid("window rank differs from operand rank"));
    }
    if w.dims
        .iter()
        .any(|d| d.size < 0 || d.stride < 1 || d.base_dilation < 1 || d.window_dilation < 1)
    {
        return Err(invalid("bad window"));
    }
    let wsize: Vec<usize> = w.dims.iter().map(|d| d.size as usize).collect();
    let st = strides(in_dims);
    let mut positions = Vec::new();
    let mut offsets = vec![0usize];
    for_each_index(out_d, |o, _| {
        for_each_index(&wsize, |k, _| {
            let mut lin = 0usize;
            for d in 0..o.len() {
                let wd = &w.dims[d];
                let x = o[d] as i64 * wd.stride + k[d] as i64 * wd.window_dilation - wd.padding_low;
                if x < 0 || x % wd.base_dilation != 0 {
                    return;
                }
                let x = (x / wd.base_dilation) as usize;
                if x >= in_dims[d] {
                    return;
                }
                lin += x * st[d];
            }
            positions.push(lin);
        });
        offsets.push(positions.len());
    });
    Ok(Groups { positions, offsets })
}

pub fn reduce_window(ctx: &mut Ctx, i: &Instruction, ops: &[&Value]) -> Result<Value> {
    let (inputs, inits) = split_operands(ops)?;
    let c = attrs::comp(i, "to_apply")?;
    let out_d = match &i.shape {
        Shape::Tuple(t) => t
            .first()
            .map(|s| s.dims().iter().map(|&d| d.max(0) as usize).collect())
            .unwrap_or_default(),
        _ => out_dims(i)?.1,
    };
    let groups = window_groups(i, &inputs[0].dims, &out_d)?;
    let outs = fold(ctx, c, &inputs, &inits, &groups)?;
    result_value(i, outs, &out_d)
}

pub fn select_and_scatter(ctx: &mut Ctx, i: &Instruction, ops: &[&Value]) -> Result<Value> {
    if ops.len() != 3 {
        return Err(invalid(
            "select-and-scatter takes operand, source and init value",
        ));
    }
    let (a, src, init) = (arr(ops[0])?, arr(ops[1])?, arr(ops[2])?);
    let sel = attrs::comp(i, "select")?;
    let sc = attrs::comp(i, "scatter")?;
    if init.len() != 1 || init.ty != src.ty {
        return Err(invalid("bad init value"));
    }
    let groups = window_groups(i, &a.dims, &src.dims)?;
    ctx.step(groups.positions.len() as u64)?;
    // Fast selection for select = compare(p0, p1) with a fixed direction.
    let sel_dir = {
        let comp = &ctx.module.computations[sel];
        let root = comp.root_instruction();
        let params_ok = root.operands.len() == 2
            && root.operands.iter().enumerate().all(|(k, &o)| {
                comp.instructions
                    .get(o)
                    .map(|x| x.opcode == Opcode::Parameter && x.parameter_number == Some(k as i64))
                    .unwrap_or(false)
            });
        if root.opcode == Opcode::Compare
            && params_ok
            && attrs::word(root, "type").as_deref() != Some("TOTALORDER")
        {
            attrs::word(root, "direction")
        } else {
            None
        }
    };
    let vals = crate::elementwise::to_f64s(&a.buf);
    let mut out = Array::new(src.ty, a.dims.clone(), init.buf.splat(0, a.len()));
    let scatter_op = simple_binop(ctx.module, sc);
    for g in 0..groups.len() {
        let win = groups.group(g);
        let Some(&first) = win.first() else { continue };
        let mut selected = first;
        for &cand in &win[1..] {
            let keep = match (&sel_dir, a.ty.is_float() || a.ty.is_integer()) {
                (Some(d), true) if !a.ty.is_unsigned_integer() || a.ty.bit_width() < 64 => {
                    let (x, y) = (vals[selected], vals[cand]);
                    match d.as_str() {
                        "GE" => x >= y,
                        "GT" => x > y,
                        "LE" => x <= y,
                        "LT" => x < y,
                        "EQ" => x == y,
                        _ => x != y,
                    }
                }
                _ => {
                    let r = ctx.call(sel, vec![scalar(a, selected), scalar(a, cand)])?;
                    arr(&r)?.get_bool(0)
                }
            };
            let moves = match ctx.variant().select_ties {
                None => !keep,
                Some(rule) => {
                    let back = ctx.call(sel, vec![scalar(a, cand), scalar(a, selected)])?;
                    if arr(&back)?.get_bool(0) == keep {
                        rule == crate::variant::SelectTies::Last
                    } else {
                        !keep
                    }
                }
            };
            if moves {
                selected = cand;
            }
        }
        // out[selected] = scatter(out[selected], source[g])
        let cur = Array::new(out.ty, vec![], out.buf.take(&[selected]));
        let s = Array::new(src.ty, vec![], src.buf.take(&[g]));
        let mul = ctx.variant().complex_mul;
        let r = match scatter_op.and_then(|(op, swapped)| {
            fold_fast(
                op,
                swapped,
                mul,
                ReduceOrder::Sequential,
                src.ty,
                &s.buf,
                &cur.buf,
                &Groups {
                    positions: vec![0],
                    offsets: vec![0, 1],
                },
            )
        }) {
            Some(b) => b,
            None => {
                let v = ctx.call(sc, vec![Value::array(cur), Value::array(s)])?;
                arr(&v)?.buf.clone()
            }
        };
        if !out.buf.set_from(selected, &r, 0) {
            return Err(invalid("scatter computation returned the wrong type"));
        }
    }
    Ok(Value::array(out))
}

/// For a scatter of updates of dims `ud` into operands of dims `od` at indices `idx`: the
/// (operand position, update position) pairs it writes, row-major over the updates, skipping
/// windows that fall outside the operand.
pub(crate) fn scatter_targets(
    i: &Instruction,
    od: &[usize],
    idx: &Array,
    ud: &[usize],
) -> Result<Vec<(usize, usize)>> {
    let uwd = attrs::dims(i, "update_window_dims")?;
    let iwd = attrs::dims(i, "inserted_window_dims")?;
    let sdod = attrs::dims(i, "scatter_dims_to_operand_dims")?;
    let ibd = attrs::dims(i, "input_batching_dims")?;
    let sibd = attrs::dims(i, "scatter_indices_batching_dims")?;
    let ivd = attrs::req_int(i, "index_vector_dim")? as usize;
    let rank = od.len();
    if uwd.iter().any(|&d| d >= ud.len())
        || iwd.iter().chain(&sdod).chain(&ibd).any(|&d| d >= rank)
        || ivd > idx.dims.len()
        || ibd.len() != sibd.len()
        || sibd.iter().any(|&d| d >= idx.dims.len() || d == ivd)
    {
        return Err(invalid("inconsistent scatter dimension numbers"));
    }
    let nvec = if ivd < idx.dims.len() {
        idx.dims[ivd]
    } else {
        1
    };
    if nvec != sdod.len() {
        return Err(invalid(
            "index vector length differs from scatter_dims_to_operand_dims",
        ));
    }
    let usd: Vec<usize> = (0..ud.len()).filter(|d| !uwd.contains(d)).collect();
    let window_operand: Vec<usize> = (0..rank)
        .filter(|d| !iwd.contains(d) && !ibd.contains(d))
        .collect();
    if window_operand.len() != uwd.len() {
        return Err(invalid("update_window_dims do not match the operand"));
    }
    let idx_rank_wo = idx.dims.len() - usize::from(ivd < idx.dims.len());
    if usd.len() != idx_rank_wo {
        return Err(invalid("update scatter dims do not match the indices"));
    }
    let sibd_pos: Vec<usize> = sibd.iter().map(|&d| d - usize::from(d > ivd)).collect();
    // Window extent per operand dim.
    let mut wsize = vec![1usize; rank];
    for (k, &d) in window_operand.iter().enumerate() {
        wsize[d] = ud[uwd[k]];
    }
    let st = strides(od);
    let mut b = vec![0usize; usd.len()];
    let mut sv = Vec::new();
    let mut start = vec![0i64; rank];
    let mut targets: Vec<(usize, usize)> = Vec::with_capacity(product(ud));
    for_each_index(ud, |u, lin| {
        for (k, &d) in usd.iter().enumerate() {
            b[k] = u[d];
        }
        start_vector(idx, ivd, &b, nvec, &mut sv);
        start.iter_mut().for_each(|s| *s = 0);
        for (k, &d) in sdod.iter().enumerate() {
            start[d] = sv[k];
        }
        for (k, &d) in ibd.iter().enumerate() {
            start[d] = b[sibd_pos[k]] as i64;
        }
        // Skip the whole window when any part of it is out of bounds.
        for d in 0..rank {
            if start[d] < 0 || start[d] as u64 + wsize[d] as u64 > od[d] as u64 {
                return;
            }
        }
        let mut p: usize = (0..rank).map(|d| start[d] as usize * st[d]).sum();
        for (k, &d) in window_operand.iter().enumerate() {
            p += u[uwd[k]] * st[d];
        }
        targets.push((p, lin));
    });
    Ok(targets)
}

pub fn scatter(ctx: &mut Ctx, i: &Instruction, ops: &[&Value]) -> Result<Value> {
    if ops.len() < 3 || ops.len() % 2 == 0 {
        return Err(invalid("scatter takes N operands, indices and N updates"));
    }
    let n = (ops.len() - 1) / 2;
    let operands: Vec<&Array> = ops[..n]
        .iter()
        .map(|v| arr(v).map(|a| &**a))
        .collect::<Result<_>>()?;
    let idx = arr(ops[n])?;
    let updates: Vec<&Array> = ops[n + 1..]
        .iter()
        .map(|v| arr(v).map(|a| &**a))
        .collect::<Result<_>>()?;
    let c = attrs::comp(i, "to_apply")?;
    if operands.iter().zip(&updates).any(|(a, u)| a.ty != u.ty) {
        return Err(invalid("inconsistent scatter dimension numbers"));
    }
    let od = operands[0].dims.clone();
    let ud = updates[0].dims.clone();
    if operands.iter().any(|a| a.dims != od) || updates.iter().any(|u| u.dims != ud) {
        return Err(invalid("inconsistent scatter dimension numbers"));
    }
    let targets = scatter_targets(i, &od, idx, &ud)?;
    let mut outs: Vec<Array> = operands.iter().map(|a| (*a).clone()).collect();
    let fast = if n == 1 {
        if is_assign(ctx.module, c) {
            Some(None)
        } else {
            simple_binop(ctx.module, c).map(Some)
        }
    } else {
        None
    };
    ctx.step(targets.len() as u64)?;
    match fast {
        Some(None) => {
            let (dst, srcs): (Vec<usize>, Vec<usize>) = targets.iter().copied().unzip();
            let vals = updates[0].buf.take(&srcs);
            outs[0].buf.scatter_from(&dst, &vals);
        }
        Some(Some((op, swapped))) if fast_ok(op, updates[0].ty) => {
            let one = Groups {
                positions: vec![0],
                offsets: vec![0, 1],
            };
            let mul = ctx.variant().complex_mul;
            for &(p, l) in &targets {
                let cur = outs[0].buf.take(&[p]);
                let upd = updates[0].buf.take(&[l]);
                let r = fold_fast(
                    op,
                    swapped,
                    mul,
                    ReduceOrder::Sequential,
                    updates[0].ty,
                    &upd,
                    &cur,
                    &one,
                )
                .ok_or_else(|| invalid("scatter combiner does not apply"))?;
                outs[0].buf.set_from(p, &r, 0);
            }
        }
        _ => {
            for &(p, l) in &targets {
                let mut args: Vec<Value> = outs.iter().map(|a| scalar(a, p)).collect();
                args.extend(updates.iter().map(|u| scalar(u, l)));
                let r = unpack(ctx.call(c, args)?, n)?;
                for (k, a) in r.iter().enumerate() {
                    if a.len() != 1 || !outs[k].buf.set_from(p, &a.buf, 0) {
                        return Err(invalid("scatter combiner returned the wrong type"));
                    }
                }
            }
        }
    }
    let vals: Vec<Value> = outs.into_iter().map(Value::array).collect();
    match &i.shape {
        Shape::Tuple(_) => Ok(Value::Tuple(vals)),
        _ if vals.len() == 1 => Ok(vals.into_iter().next().unwrap()),
        _ => Err(invalid("variadic scatter must have a tuple shape")),
    }
}

//! The evaluation loop: one step per instruction, values released after their last use.

use crate::host::HostCpu;
use crate::value::{Array, Value};
use crate::{attrs, control, convert, dot, elementwise, fft, linalg, reduce, rng, shape_ops, sort};
use crate::{invalid, unsupported, EvalError, EvalOptions, Result};
use hlo::{Category, CompId, InstrId, Instruction, Module, Opcode, Shape};
use std::rc::Rc;
use std::sync::Arc;

/// The order to evaluate a computation in, and which values die after each step.
pub(crate) struct Plan {
    pub(crate) order: Vec<InstrId>,
    /// `release[k]`: values no longer needed after step k.
    pub(crate) release: Vec<Vec<InstrId>>,
}

pub(crate) struct Ctx<'m> {
    pub module: &'m Module,
    pub(crate) opts: EvalOptions,
    steps: u64,
    live_bytes: u64,
    plans: Vec<Option<Rc<Plan>>>,
    /// Constants already decoded, by (computation, instruction): a constant inside a loop body
    /// or reducer is decoded once per evaluation, not once per iteration.
    consts: std::collections::HashMap<(CompId, usize), Value>,
    depth: usize,
}

impl Ctx<'_> {
    /// The implementation choices this evaluation makes.
    pub fn variant(&self) -> &crate::variant::Variant {
        &self.opts.variant
    }
}

pub(crate) fn run_entry(module: &Module, args: Vec<Value>, opts: &EvalOptions) -> Result<Value> {
    if module.entry >= module.computations.len() {
        return Err(invalid("module has no entry computation"));
    }
    // Mixed float precisions verify (as in XLA, whose passes decide where the conversions
    // happen), but the oracle evaluates each op in its own types only.
    if let Some(e) = hlo::verify::mixed_precision(module) {
        return Err(unsupported(format!("mixed float precision: {e}")));
    }
    let mut ctx = Ctx {
        module,
        opts: opts.clone(),
        steps: 0,
        live_bytes: 0,
        plans: vec![None; module.computations.len()],
        consts: std::collections::HashMap::new(),
        depth: 0,
    };
    let entry = module.entry_computation();
    let nparams = entry.parameters().len();
    if nparams != args.len() {
        return Err(EvalError::Invalid {
            instr: entry.name.clone(),
            why: format!(
                "entry computation takes {nparams} parameters, given {}",
                args.len()
            ),
        });
    }
    for ((_, p), a) in entry.parameters().iter().zip(&args) {
        check_value_shape(&p.shape, a).map_err(|why| EvalError::Invalid {
            instr: p.name.clone(),
            why: format!("argument does not match the parameter's shape: {why}"),
        })?;
    }
    ctx.call(module.entry, args)
}

/// One instruction of `comp` evaluated alone on `ops` (the enclosure's exact fallback for ops
/// XLA has no freedom in, on exactly known operands).
pub(crate) fn eval_one(
    module: &Module,
    opts: &EvalOptions,
    comp: &hlo::Computation,
    i: &Instruction,
    ops: &[&Value],
) -> Result<Value> {
    let mut ctx = Ctx {
        module,
        opts: opts.clone(),
        steps: 0,
        live_bytes: 0,
        plans: vec![None; module.computations.len()],
        consts: std::collections::HashMap::new(),
        depth: 0,
    };
    ctx.eval_instr(comp, i, ops)
}

/// Checks a value against a shape (element type and dimensions; layouts ignored).
pub(crate) fn check_value_shape(s: &Shape, v: &Value) -> std::result::Result<(), String> {
    match (s, v) {
        (Shape::Array(a), Value::Array(x)) => {
            let dims: Vec<usize> = a.dims.iter().map(|&d| d.max(0) as usize).collect();
            if a.ty != x.ty || dims != x.dims {
                return Err(format!(
                    "expected {}{:?}, got {}{:?}",
                    a.ty, a.dims, x.ty, x.dims
                ));
            }
            Ok(())
        }
        (Shape::Tuple(ts), Value::Tuple(vs)) if ts.len() == vs.len() => ts
            .iter()
            .zip(vs)
            .try_for_each(|(t, v)| check_value_shape(t, v)),
        (Shape::Token, Value::Token) => Ok(()),
        _ => Err(format!("expected a value of shape {s:?}")),
    }
}

/// Bytes a value of this shape takes.
pub(crate) fn shape_bytes(s: &Shape) -> u64 {
    match s {
        Shape::Array(a) => {
            let n = a.element_count().unwrap_or(u64::MAX);
            n.saturating_mul(a.ty.byte_size().max(1) as u64)
        }
        Shape::Tuple(t) => t
            .iter()
            .map(shape_bytes)
            .fold(0u64, |a, b| a.saturating_add(b)),
        _ => 0,
    }
}

/// Output dims of an array instruction.
pub(crate) fn out_dims(i: &Instruction) -> Result<(hlo::PrimitiveType, Vec<usize>)> {
    match &i.shape {
        Shape::Array(a) => {
            let mut d = Vec::with_capacity(a.dims.len());
            for &x in &a.dims {
                if x < 0 {
                    return Err(unsupported("unbounded dynamic dimension"));
                }
                d.push(x as usize);
            }
            Ok((a.ty, d))
        }
        _ => Err(invalid("expected an array-shaped instruction")),
    }
}

pub(crate) fn arr(v: &Value) -> Result<&Arc<Array>> {
    match v {
        Value::Array(a) => Ok(a),
        _ => Err(invalid("operand is not an array")),
    }
}

pub(crate) fn plan(module: &Module, c: CompId) -> Result<Plan> {
    let comp = &module.computations[c];
    let n = comp.instructions.len();
    if comp.root >= n {
        return Err(invalid(format!("computation {} has no root", comp.name)));
    }
    // Iterative post-order DFS from the root.
    let mut state = vec![0u8; n]; // 0 new, 1 open, 2 done
    let mut order = Vec::new();
    let mut stack: Vec<(InstrId, usize)> = vec![(comp.root, 0)];
    state[comp.root] = 1;
    while let Some((id, k)) = stack.pop() {
        let ops = &comp.instructions[id].operands;
        if k < ops.len() {
            stack.push((id, k + 1));
            let o = ops[k];
            if o >= n {
                return Err(EvalError::Invalid {
                    instr: comp.instructions[id].name.clone(),
                    why: format!("operand {k} refers to a missing instruction"),
                });
            }
            match state[o] {
                0 => {
                    state[o] = 1;
                    stack.push((o, 0));
                }
                1 => {
                    return Err(EvalError::Invalid {
                        instr: comp.instructions[id].name.clone(),
                        why: "instructions form a cycle".into(),
                    })
                }
                _ => {}
            }
        } else {
            state[id] = 2;
            order.push(id);
        }
    }
    let mut last = vec![usize::MAX; n];
    for (k, &id) in order.iter().enumerate() {
        for &o in &comp.instructions[id].operands {
            last[o] = k;
        }
    }
    let mut release = vec![Vec::new(); order.len()];
    for &id in &order {
        if id != comp.root && last[id] != usize::MAX {
            release[last[id]].push(id);
        }
    }
    // Values nobody uses die right after they are made.
    for (k, &id) in order.iter().enumerate() {
        if id != comp.root && last[id] == usize::MAX {
            release[k].push(id);
        }
    }
    Ok(Plan { order, release })
}

impl<'m> Ctx<'m> {
    fn get_plan(&mut self, c: CompId) -> Result<Rc<Plan>> {
        if let Some(p) = &self.plans[c] {
            return Ok(p.clone());
        }
        let p = Rc::new(plan(self.module, c)?);
        self.plans[c] = Some(p.clone());
        Ok(p)
    }

    pub fn step(&mut self, n: u64) -> Result<()> {
        let before = self.steps;
        self.steps = self.steps.saturating_add(n);
        if self.steps > self.opts.max_steps {
            return Err(EvalError::Budget {
                what: format!("more than {} evaluation steps", self.opts.max_steps),
            });
        }
        let checkpoint = |s: u64| s / crate::DEADLINE_CHECK_STEPS;
        if let Some(d) = self.opts.deadline {
            if checkpoint(before) != checkpoint(self.steps) && std::time::Instant::now() >= d {
                return Err(EvalError::Budget {
                    what: format!(
                        "still evaluating at its deadline, after {} steps",
                        self.steps
                    ),
                });
            }
        }
        Ok(())
    }

    /// Evaluates computation `c` on `args` (by parameter number).
    pub fn call(&mut self, c: CompId, args: Vec<Value>) -> Result<Value> {
        let module = self.module;
        let comp = module
            .computations
            .get(c)
            .ok_or_else(|| invalid(format!("called computation {c} does not exist")))?;
        if self.depth > 200 {
            return Err(EvalError::Budget {
                what: "computation calls nested deeper than 200".into(),
            });
        }
        let plan = self.get_plan(c)?;
        let mut env: Vec<Option<Value>> = vec![None; comp.instructions.len()];
        let mut env_bytes = 0u64;
        self.depth += 1;
        let result = (|| {
            for (k, &id) in plan.order.iter().enumerate() {
                let instr = &comp.instructions[id];
                self.step(1)?;
                let v = if instr.opcode == Opcode::Parameter {
                    let p = instr.parameter_number.unwrap_or(-1);
                    let v = usize::try_from(p)
                        .ok()
                        .and_then(|p| args.get(p))
                        .ok_or_else(|| EvalError::Invalid {
                            instr: instr.name.clone(),
                            why: format!("parameter({p}) has no argument ({} given)", args.len()),
                        })?;
                    v.clone()
                } else {
                    let need = shape_bytes(&instr.shape);
                    if need > self.opts.max_bytes.saturating_sub(self.live_bytes) {
                        return Err(EvalError::Budget {
                            what: format!(
                                "{} needs {need} bytes with {} live (limit {})",
                                instr.name, self.live_bytes, self.opts.max_bytes
                            ),
                        });
                    }
                    // An instruction costs steps by the size of what it makes (a step per 8
                    // bytes), so that a loop over large arrays meets the budget as soon as one
                    // over scalars does (a while loop that never ends, which a minimizer's edit
                    // can make, ran for minutes on 131,072-element bodies at 1 step each).
                    self.step(need / 8)?;
                    let cached = if instr.opcode == Opcode::Constant {
                        self.consts.get(&(c, id)).cloned()
                    } else {
                        None
                    };
                    if let Some(v) = cached {
                        v
                    } else {
                        let ops: Vec<&Value> = instr
                            .operands
                            .iter()
                            .map(|&o| env[o].as_ref().expect("operand evaluated before use"))
                            .collect();
                        let v = self.eval_instr(comp, instr, &ops).map_err(|e| match e {
                            EvalError::Invalid { instr: s, why } if s.is_empty() => {
                                EvalError::Invalid {
                                    instr: format!("{} ({})", instr.name, instr.opcode.name()),
                                    why,
                                }
                            }
                            e => e,
                        })?;
                        if instr.opcode == Opcode::Constant {
                            self.consts.insert((c, id), v.clone());
                        }
                        v
                    }
                };
                let b = v.byte_size() as u64;
                env_bytes += b;
                self.live_bytes += b;
                env[id] = Some(v);
                for &d in &plan.release[k] {
                    if let Some(v) = env[d].take() {
                        let b = v.byte_size() as u64;
                        env_bytes -= b;
                        self.live_bytes -= b;
                    }
                }
            }
            env[comp.root]
                .take()
                .ok_or_else(|| invalid("root was not evaluated"))
        })();
        self.live_bytes -= env_bytes.min(self.live_bytes);
        self.depth -= 1;
        result
    }

    fn eval_instr(
        &mut self,
        comp: &hlo::Computation,
        i: &Instruction,
        ops: &[&Value],
    ) -> Result<Value> {
        use Opcode as O;
        let n_ops = ops.len();
        let need = |k: usize| -> Result<()> {
            if n_ops != k {
                Err(invalid(format!("expects {k} operands, has {n_ops}")))
            } else {
                Ok(())
            }
        };
        let a = |k: usize| -> Result<&Arc<Array>> {
            arr(ops.get(k).ok_or_else(|| invalid("missing operand"))?)
        };
        Ok(match i.opcode {
            O::Constant => match &i.constant {
                Some(hlo::Constant::Literal(l)) => {
                    let v = Value::from_literal(l)?;
                    check_value_shape(&i.shape, &v).map_err(invalid)?;
                    v
                }
                Some(hlo::Constant::Elided) => {
                    return Err(unsupported("constant elided from the dump ({...})"))
                }
                None => return Err(invalid("constant without a value")),
            },
            O::Tuple => Value::Tuple(ops.iter().map(|v| (*v).clone()).collect()),
            O::GetTupleElement => {
                need(1)?;
                let idx = attrs::req_int(i, "index")?;
                match ops[0] {
                    Value::Tuple(t) => usize::try_from(idx)
                        .ok()
                        .and_then(|k| t.get(k))
                        .cloned()
                        .ok_or_else(|| invalid(format!("tuple index {idx} out of range")))?,
                    _ => return Err(invalid("get-tuple-element of a non-tuple")),
                }
            }
            O::Copy | O::OptimizationBarrier | O::Domain => {
                need(1)?;
                ops[0].clone()
            }
            O::AddDependency => {
                need(2)?;
                ops[0].clone()
            }
            O::AfterAll => Value::Token,
            O::PartitionId | O::ReplicaId => {
                let (ty, dims) = out_dims(i)?;
                Value::array(Array::zeros(ty, dims)?)
            }
            O::Call => {
                let c = attrs::comp(i, "to_apply")?;
                self.call(c, ops.iter().map(|v| (*v).clone()).collect())?
            }
            O::Fusion => {
                let c = attrs::comp(i, "calls")?;
                self.call(c, ops.iter().map(|v| (*v).clone()).collect())?
            }
            O::While => control::while_loop(self, i, ops)?,
            O::Conditional => control::conditional(self, i, ops)?,
            O::Map => control::map(self, i, ops)?,
            O::Scan => control::scan(self, i, ops)?,
            O::CustomCall => control::custom_call(self, i, ops)?,

            // Elementwise, by the opcode table's categories: every unary and binary op but
            // compare goes through `elementwise` and the variant's adjustments.
            op if op.category() == Category::ElementwiseUnary => {
                need(1)?;
                let (ty, _) = out_dims(i)?;
                let f0 = crate::variant::flush_operand(i.opcode, a(0)?, &self.opts.variant)?;
                let x0 = f0.as_ref().map_or(a(0), Ok)?;
                let r = elementwise_op(&self.opts.variant, i.opcode, &[x0], ty, |x, t| {
                    elementwise::unary(i.opcode, x[0], t)
                })?;
                let r = f8_nan_bits(i.opcode, &[x0], r, self.opts.host())?;
                let args = [&**x0];
                Value::array(crate::variant::adjust(
                    i.opcode,
                    &args,
                    r,
                    &self.opts.variant,
                )?)
            }
            O::Compare => {
                need(2)?;
                let dir = attrs::word(i, "direction")
                    .ok_or_else(|| invalid("compare without direction"))?;
                let ty = attrs::word(i, "type");
                Value::array(elementwise::compare(a(0)?, a(1)?, &dir, ty.as_deref())?)
            }
            op if op.category() == Category::ElementwiseBinary => {
                need(2)?;
                let (ty, _) = out_dims(i)?;
                let f0 = crate::variant::flush_operand(i.opcode, a(0)?, &self.opts.variant)?;
                let f1 = crate::variant::flush_operand(i.opcode, a(1)?, &self.opts.variant)?;
                let (x0, x1) = (f0.as_ref().map_or(a(0), Ok)?, f1.as_ref().map_or(a(1), Ok)?);
                let r = elementwise_op(&self.opts.variant, i.opcode, &[x0, x1], ty, |x, t| {
                    elementwise::binary_with(i.opcode, x[0], x[1], t, self.opts.variant.complex_mul)
                })?;
                let r = f8_nan_bits(i.opcode, &[x0, x1], r, self.opts.host())?;
                let args = [&**x0, &**x1];
                Value::array(crate::variant::adjust(
                    i.opcode,
                    &args,
                    r,
                    &self.opts.variant,
                )?)
            }
            O::Select => {
                need(3)?;
                Value::array(elementwise::select(a(0)?, a(1)?, a(2)?)?)
            }
            O::Clamp => {
                need(3)?;
                // XLA computes clamp as min(max(..)): float arithmetic, flushed like any other.
                let f: Vec<_> = (0..3)
                    .map(|k| crate::variant::flush_operand(i.opcode, a(k)?, &self.opts.variant))
                    .collect::<Result<_>>()?;
                let x = |k: usize| f[k].as_ref().map_or(a(k), Ok);
                let r = elementwise::clamp(x(0)?, x(1)?, x(2)?)?;
                // Its NaNs are signed as any arithmetic op's (XLA CPU gives -NaN for a +NaN
                // bound).
                let args = [&**x(0)?, &**x(1)?, &**x(2)?];
                Value::array(crate::variant::adjust(
                    O::Clamp,
                    &args,
                    r,
                    &self.opts.variant,
                )?)
            }
            O::Convert => {
                need(1)?;
                let (ty, _) = out_dims(i)?;
                let f0 = crate::variant::flush_widened(a(0)?, ty, &self.opts.variant)?;
                let x = f0.as_ref().map_or(a(0), Ok)?;
                let r = convert::convert_with(x, ty, self.opts.narrowing())?;
                if x.ty == hlo::PrimitiveType::F16 {
                    // f16 -> f8e5m2 (a truncation on XLA CPU) makes every NaN 0x7f.
                    Value::array(f8_nan_bits(Opcode::Convert, &[x], r, self.opts.host())?)
                } else {
                    Value::array(r)
                }
            }
            O::BitcastConvert => {
                need(1)?;
                let (ty, dims) = out_dims(i)?;
                Value::array(convert::bitcast_convert(a(0)?, ty, dims)?)
            }
            O::ReducePrecision => {
                need(1)?;
                let e = attrs::req_int(i, "exponent_bits")?;
                let m = attrs::req_int(i, "mantissa_bits")?;
                Value::array(convert::reduce_precision(a(0)?, e, m)?)
            }
            O::StochasticConvert => return Err(unsupported("stochastic-convert")),

            // Data movement.
            O::Broadcast
            | O::Reshape
            | O::Transpose
            | O::Slice
            | O::Concatenate
            | O::Pad
            | O::Reverse
            | O::Iota
            | O::DynamicSlice
            | O::DynamicUpdateSlice
            | O::Bitcast
            | O::Gather
            | O::GetDimensionSize
            | O::SetDimensionSize
            | O::DynamicReshape => {
                let arrays: Vec<&Array> = ops
                    .iter()
                    .map(|v| arr(v).map(|a| &**a))
                    .collect::<Result<_>>()?;
                let shapes: Vec<&Shape> = i
                    .operands
                    .iter()
                    .map(|&o| &comp.instructions[o].shape)
                    .collect();
                Value::array(shape_ops::eval(i, &arrays, &shapes)?)
            }
            O::Scatter => reduce::scatter(self, i, ops)?,
            O::Reduce => reduce::reduce(self, i, ops)?,
            O::ReduceWindow => reduce::reduce_window(self, i, ops)?,
            O::SelectAndScatter => reduce::select_and_scatter(self, i, ops)?,
            O::Dot => {
                need(2)?;
                let f0 = crate::variant::flush_operand(i.opcode, a(0)?, &self.opts.variant)?;
                let f1 = crate::variant::flush_operand(i.opcode, a(1)?, &self.opts.variant)?;
                let (x0, x1) = (f0.as_ref().map_or(a(0), Ok)?, f1.as_ref().map_or(a(1), Ok)?);
                let r = dot::dot(
                    i,
                    x0,
                    x1,
                    self.opts.variant.accumulation,
                    self.opts.variant.reduce_order,
                )?;
                // A NaN a dot makes (inf * 0) is signed as any arithmetic op's.
                let args = [&**x0, &**x1];
                Value::array(crate::variant::adjust(
                    O::Dot,
                    &args,
                    r,
                    &self.opts.variant,
                )?)
            }
            O::Convolution => {
                need(2)?;
                let f0 = crate::variant::flush_operand(i.opcode, a(0)?, &self.opts.variant)?;
                let f1 = crate::variant::flush_operand(i.opcode, a(1)?, &self.opts.variant)?;
                let (x0, x1) = (f0.as_ref().map_or(a(0), Ok)?, f1.as_ref().map_or(a(1), Ok)?);
                let r = dot::convolution(
                    i,
                    x0,
                    x1,
                    self.opts.variant.accumulation,
                    self.opts.variant.skip_conv_padding,
                )?;
                let args = [&**x0, &**x1];
                Value::array(crate::variant::adjust(
                    O::Convolution,
                    &args,
                    r,
                    &self.opts.variant,
                )?)
            }
            O::Sort => sort::sort(self, i, ops)?,
            O::TopK => {
                need(1)?;
                sort::topk(i, a(0)?)?
            }
            O::RngBitGenerator => {
                need(1)?;
                rng::rng_bit_generator(i, a(0)?)?
            }
            O::Fft => {
                need(1)?;
                Value::array(fft::fft(i, a(0)?)?)
            }
            O::Cholesky => {
                need(1)?;
                Value::array(linalg::cholesky(i, a(0)?)?)
            }
            O::TriangularSolve => {
                need(2)?;
                Value::array(linalg::triangular_solve(i, a(0)?, a(1)?)?)
            }
            O::Parameter => unreachable!("parameters are bound by the caller"),
            op => return Err(unsupported(format!("opcode {}", op.name()))),
        })
    }
}

/// `f` (an elementwise op `op` with result type `ty`) on `args`; when the variant follows XLA
/// CPU's single-precision c64 formulas for this op, those.
fn elementwise_op(
    variant: &crate::variant::Variant,
    op: Opcode,
    args: &[&Array],
    ty: hlo::PrimitiveType,
    f: impl Fn(&[&Array], hlo::PrimitiveType) -> Result<Array>,
) -> Result<Array> {
    if variant.narrows_complex(op, ty) && args.len() == 1 {
        if let Some(r) = elementwise::unary_c64_narrow(op, args[0]) {
            return Ok(r);
        }
    }
    f(args, ty)
}

/// The NaN bits XLA CPU's compiled code gives f8 results (measured; see KNOWN_DIFFERENCES.md):
/// f8e5m2 is computed in f16 and truncated back, so every NaN an elementwise op or an
/// f16 -> f8e5m2 conversion produces is `0x7f`, whatever its sign and payload. `maximum` and
/// `minimum` of f8e4m3fn, f8e4m3 and f8e3m4 give the quiet NaN of the type (`0x7f`, `0x7c`,
/// `0x78`) with a sign that depends on the host ([`crate::host`]): positive without
/// AVX512-FP16; with it, the sign [`native_min_max_nan_sign`] gives. `args` are the operands.
fn f8_nan_bits(op: Opcode, args: &[&Array], r: Array, host: HostCpu) -> Result<Array> {
    use hlo::PrimitiveType as P;
    let canonical: u128 = match (r.ty, op) {
        (P::F8E5M2, _) => 0x7f,
        (P::F8E4M3FN, Opcode::Maximum | Opcode::Minimum) => 0x7f,
        (P::F8E4M3, Opcode::Maximum | Opcode::Minimum) => 0x7c,
        (P::F8E3M4, Opcode::Maximum | Opcode::Minimum) => 0x78,
        _ => return Ok(r),
    };
    let values = elementwise::to_f64s(&r.buf);
    if !values.iter().any(|v| v.is_nan()) {
        return Ok(r);
    }
    // The operands as (NaN, negative) where the sign of a NaN result depends on them.
    let signed = r.ty != P::F8E5M2 && host.avx512fp16;
    let operands: Vec<Vec<(bool, bool)>> = if signed {
        args.iter()
            .map(|x| {
                let sign = 1u128 << (x.ty.bit_width() - 1);
                elementwise::to_f64s(&x.buf)
                    .into_iter()
                    .zip(crate::value::to_bits(&x.buf))
                    .map(|(v, b)| (v.is_nan(), b & sign != 0))
                    .collect()
            })
            .collect()
    } else {
        Vec::new()
    };
    let bits: Vec<u128> = crate::value::to_bits(&r.buf)
        .into_iter()
        .zip(&values)
        .enumerate()
        .map(|(k, (b, v))| {
            if !v.is_nan() {
                return b;
            }
            let negative = match operands.as_slice() {
                [x, y] if x.len() == values.len() && y.len() == values.len() => {
                    native_min_max_nan_sign(op, x[k], y[k])
                }
                _ => false,
            };
            if negative {
                canonical | 0x80
            } else {
                canonical
            }
        })
        .collect();
    let buf = crate::value::from_bits(r.ty, &bits)?;
    Ok(Array::new(r.ty, r.dims, buf))
}

/// Whether XLA CPU's native `maximum`/`minimum` (x86 code for a type the CPU computes in:
/// f16 with AVX512-FP16, in which the f8 types are computed) of `x` and `y`, given as (NaN,
/// negative) with at least one NaN, gives a negative NaN: the sign of `x` when `x` is NaN;
/// otherwise for `maximum` negative only when both are negative, for `minimum` negative when
/// either is (the sign bits ANDed or ORed, as for zeros of either sign). Measured on every pair
/// of NaNs of both signs, zeros, infinities and finite values of f8e4m3fn, f8e4m3 and f8e3m4
/// on a Sapphire Rapids host (XLA CPU's f16, f32 and f64 `maximum`/`minimum` sign their NaNs
/// the same way; the oracle does not imitate those, see KNOWN_DIFFERENCES.md).
fn native_min_max_nan_sign(op: Opcode, x: (bool, bool), y: (bool, bool)) -> bool {
    let ((x_nan, sx), (_, sy)) = (x, y);
    if x_nan {
        sx
    } else if op == Opcode::Maximum {
        sx && sy
    } else {
        sx || sy
    }
}

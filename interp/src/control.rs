//! while, conditional, map, scan and custom-call.

use crate::eval::{arr, out_dims, Ctx};
use crate::reduce::scalar;
use crate::value::{Array, Buffer, Value};
use crate::{attrs, invalid, unsupported, Result};
use hlo::Instruction;

pub fn while_loop(ctx: &mut Ctx, i: &Instruction, ops: &[&Value]) -> Result<Value> {
    if ops.len() != 1 {
        return Err(invalid("while takes one operand"));
    }
    let cond = attrs::comp(i, "condition")?;
    let body = attrs::comp(i, "body")?;
    let mut state = ops[0].clone();
    loop {
        let c = ctx.call(cond, vec![state.clone()])?;
        let c = arr(&c)?;
        if c.len() != 1 {
            return Err(invalid("while condition must return a pred scalar"));
        }
        if !c.get_bool(0) {
            return Ok(state);
        }
        state = ctx.call(body, vec![state])?;
    }
}

pub fn conditional(ctx: &mut Ctx, i: &Instruction, ops: &[&Value]) -> Result<Value> {
    let sel = arr(ops
        .first()
        .ok_or_else(|| invalid("conditional without a selector"))?)?;
    if sel.len() != 1 {
        return Err(invalid("conditional selector must be a scalar"));
    }
    let branches: Vec<usize> = if let Some(b) = i.comps("branch_computations") {
        b.to_vec()
    } else {
        let t = attrs::comp(i, "true_computation")?;
        let f = attrs::comp(i, "false_computation")?;
        vec![t, f]
    };
    if branches.is_empty() || ops.len() != branches.len() + 1 {
        return Err(invalid("conditional needs one operand per branch"));
    }
    let k = if sel.ty == hlo::PrimitiveType::Pred {
        // pred: true -> branch 0 (true_computation), false -> branch 1.
        if sel.get_bool(0) {
            0
        } else {
            1
        }
    } else {
        // Out-of-range indices run the last branch.
        let v = sel.get_i64(0);
        if v < 0 || v as usize >= branches.len() {
            branches.len() - 1
        } else {
            v as usize
        }
    };
    ctx.call(branches[k], vec![ops[k + 1].clone()])
}

pub fn map(ctx: &mut Ctx, i: &Instruction, ops: &[&Value]) -> Result<Value> {
    let c = attrs::comp(i, "to_apply")?;
    let (ty, dims) = out_dims(i)?;
    let arrays: Vec<&Array> = ops
        .iter()
        .map(|v| arr(v).map(|a| &**a))
        .collect::<Result<_>>()?;
    if arrays.iter().any(|a| a.dims != dims) {
        return Err(invalid("map operands must have the result's dimensions"));
    }
    let n: usize = dims.iter().product();
    ctx.step(n as u64)?;
    if let (Some((op, swapped)), 2) = (crate::reduce::simple_binop(ctx.module, c), arrays.len()) {
        if arrays[0].ty == ty && arrays[1].ty == ty {
            // The op's operands in the computation's order (complex multiply is not symmetric
            // in its roundings).
            let (x, y) = if swapped {
                (arrays[1], arrays[0])
            } else {
                (arrays[0], arrays[1])
            };
            let mul = ctx.variant().complex_mul;
            return Ok(Value::array(crate::elementwise::binary_with(
                op, x, y, ty, mul,
            )?));
        }
    }
    let mut out = Array::new(ty, dims, Buffer::zeros(ty, n)?);
    for k in 0..n {
        let r = ctx.call(c, arrays.iter().map(|a| scalar(a, k)).collect())?;
        let r = arr(&r)?;
        if r.len() != 1 || !out.buf.set_from(k, &r.buf, 0) {
            return Err(invalid("map computation returned the wrong type"));
        }
    }
    Ok(Value::array(out))
}

/// What a `scan` instruction does, read from its attributes, its result shape and its
/// inputs' dimensions (the oracle's [`scan`] and the enclosure's step by it alike).
pub(crate) struct ScanPlan {
    pub body: hlo::CompId,
    /// The scanned dimension, and its extent.
    pub dim: usize,
    pub len: usize,
    pub carries: usize,
    pub reverse: bool,
    /// The result is a tuple (else one array).
    pub tuple: bool,
    /// Each scanned output's element type and dimensions.
    pub outputs: Vec<(hlo::PrimitiveType, Vec<usize>)>,
}

impl ScanPlan {
    /// The plan of `i` with `operands` operands, of which the scanned inputs have the
    /// dimensions `input_dims` (in order).
    pub(crate) fn new(i: &Instruction, operands: usize, input_dims: &[&[usize]]) -> Result<Self> {
        let body = attrs::comp(i, "to_apply")?;
        let dim = match attrs::dims(i, "dimensions")?.as_slice() {
            [d] => *d,
            d => {
                return Err(invalid(format!(
                    "scan needs one dimension, has {}",
                    d.len()
                )))
            }
        };
        let carries = usize::try_from(attrs::req_int(i, "num_carries")?)
            .ok()
            .filter(|&c| c <= operands)
            .ok_or_else(|| invalid("num_carries exceeds the operands"))?;
        let reverse = attrs::flag(i, "is_reverse", false);
        let tuple = i.shape.tuple_elements().is_some();
        let result_shapes: Vec<&hlo::Shape> = match i.shape.tuple_elements() {
            Some(t) => t.iter().collect(),
            None => vec![&i.shape],
        };
        let n_out = result_shapes
            .len()
            .checked_sub(carries)
            .ok_or_else(|| invalid("scan has fewer results than carries"))?;
        if n_out + carries == 0 || (!tuple && n_out + carries != 1) {
            return Err(invalid("scan has no inputs or outputs"));
        }
        let mut outputs = Vec::with_capacity(n_out);
        for s in &result_shapes[..n_out] {
            let a = s
                .as_array()
                .ok_or_else(|| invalid("a scan output must be an array"))?;
            let dims = a
                .dims
                .iter()
                .map(|&d| {
                    usize::try_from(d).map_err(|_| unsupported("unbounded dynamic dimension"))
                })
                .collect::<Result<Vec<_>>>()?;
            if dim >= dims.len() {
                return Err(invalid("scan dimension out of an output's bounds"));
            }
            outputs.push((a.ty, dims));
        }
        let len = match (input_dims.first(), outputs.first()) {
            (Some(d), _) => *d
                .get(dim)
                .ok_or_else(|| invalid("scan dimension out of an input's bounds"))?,
            (None, Some((_, d))) => d[dim],
            (None, None) => return Err(invalid("scan without inputs or outputs has no extent")),
        };
        let all = input_dims
            .iter()
            .copied()
            .chain(outputs.iter().map(|o| o.1.as_slice()));
        for d in all {
            if d.get(dim) != Some(&len) {
                return Err(invalid(format!(
                    "scan operands and outputs differ in dimension {dim}"
                )));
            }
        }
        Ok(ScanPlan {
            body,
            dim,
            len,
            carries,
            reverse,
            tuple,
            outputs,
        })
    }
}

/// `scan` as XLA CPU runs it (jaxlib 0.10.2 parses the op and its `ScanExpander` turns it into
/// a while loop before anything else sees it). The operands are the inputs, then
/// `num_carries` initial carries; `to_apply` takes one slice of each input (the scan dimension
/// removed) and the carries, and returns the outputs' slices, then the new carries. Step `k`
/// (of the scan dimension's extent) reads and writes index `k`, or `n - 1 - k` when
/// `is_reverse`; the result is the outputs (the scan dimension put back at its place), then the
/// final carries: a tuple when the instruction's shape is one, else the one output or carry.
/// `is_associative` lets XLA combine in another order (a parallel prefix); the oracle always
/// steps in order, as the expander does.
pub fn scan(ctx: &mut Ctx, i: &Instruction, ops: &[&Value]) -> Result<Value> {
    let n_in = ops
        .len()
        .checked_sub(usize::try_from(attrs::req_int(i, "num_carries")?).unwrap_or(usize::MAX))
        .ok_or_else(|| invalid("num_carries exceeds the operands"))?;
    let inputs: Vec<&Array> = ops[..n_in]
        .iter()
        .map(|v| arr(v).map(|a| &**a))
        .collect::<Result<_>>()?;
    let dims: Vec<&[usize]> = inputs.iter().map(|a| a.dims.as_slice()).collect();
    let ScanPlan {
        body,
        dim,
        len,
        carries,
        reverse,
        tuple,
        outputs,
        ..
    } = ScanPlan::new(i, ops.len(), &dims)?;
    let n_out = outputs.len();
    // The outputs, zero-filled as the expander fills them.
    let mut outs: Vec<Array> = outputs
        .into_iter()
        .map(|(ty, dims)| Array::zeros(ty, dims))
        .collect::<Result<_>>()?;
    // Element (outer, k, inner) of an array whose dimension `dim` is the scan's.
    let split = |dims: &[usize]| -> (usize, usize) {
        (
            crate::value::product(&dims[..dim]),
            crate::value::product(&dims[dim + 1..]),
        )
    };
    let mut carry: Vec<Value> = ops[n_in..].iter().map(|v| (*v).clone()).collect();
    for step in 0..len {
        let k = if reverse { len - 1 - step } else { step };
        let mut args: Vec<Value> = Vec::with_capacity(ops.len());
        for a in &inputs {
            let (outer, inner) = split(&a.dims);
            let idx: Vec<usize> = (0..outer)
                .flat_map(|o| (0..inner).map(move |x| (o * len + k) * inner + x))
                .collect();
            ctx.step(idx.len() as u64 / 8)?;
            let mut dims = a.dims.clone();
            dims.remove(dim);
            args.push(Value::array(Array::new(a.ty, dims, a.buf.take(&idx))));
        }
        args.append(&mut carry);
        let r = ctx.call(body, args)?;
        let mut results = match r {
            Value::Tuple(t) => t,
            v => vec![v],
        };
        if results.len() != n_out + carries {
            return Err(invalid(format!(
                "scan's to_apply returned {} values for {n_out} outputs and {carries} carries",
                results.len()
            )));
        }
        carry = results.split_off(n_out);
        for (o, v) in outs.iter_mut().zip(&results) {
            let v = arr(v)?;
            let (outer, inner) = split(&o.dims);
            let mut want = o.dims.clone();
            want.remove(dim);
            if v.ty != o.ty || v.dims != want {
                return Err(invalid(
                    "scan's to_apply returned an output of the wrong shape",
                ));
            }
            for j in 0..outer * inner {
                let dst = ((j / inner.max(1)) * len + k) * inner + j % inner.max(1);
                if !o.buf.set_from(dst, &v.buf, j) {
                    return Err(invalid(
                        "scan's to_apply returned an output of the wrong type",
                    ));
                }
            }
        }
    }
    let mut all: Vec<Value> = outs.into_iter().map(Value::array).collect();
    all.append(&mut carry);
    Ok(if tuple {
        Value::Tuple(all)
    } else {
        all.pop().expect("one result")
    })
}

pub fn custom_call(ctx: &mut Ctx, i: &Instruction, ops: &[&Value]) -> Result<Value> {
    let target = attrs::word(i, "custom_call_target").unwrap_or_default();
    match target.as_str() {
        "TopK" | "__cpu$TopK" => {
            let a = arr(ops.first().ok_or_else(|| invalid("TopK without operand"))?)?;
            crate::sort::topk(i, a)
        }
        // Single-device programs: sharding annotations are identities.
        "Sharding" | "SPMDFullToShardShape" | "SPMDShardToFullShape" => ops
            .first()
            .map(|v| (*v).clone())
            .ok_or_else(|| invalid("no operand")),
        t => crate::onednn::custom_call(ctx, i, t, ops)
            .or_else(|| crate::linalg::lapack_custom_call(i, t, ops))
            .unwrap_or_else(|| Err(unsupported(format!("custom-call target \"{t}\"")))),
    }
}

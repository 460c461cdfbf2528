//! while, conditional, map and custom-call.

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

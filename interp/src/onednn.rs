//! XLA CPU's oneDNN library calls: `__onednn$matmul` (with its fused post-ops),
//! `__onednn$softmax` and `__onednn$convolution`.
//!
//! jaxlib 0.4.26 .. 0.4.30 rewrite large dots with their bias and activation epilogues, softmax
//! and (0.4.35 .. 0.5.x with `--xla_cpu_use_thunk_runtime=false`) convolutions into these
//! custom-calls; every per-pass snapshot after the rewrite holds them. Each call is read from its
//! `backend_config` and written back as the HLO computation it stands for (a transposed and
//! broadcast dot, then each post-op in order; max-subtract-exp-sum-divide; a convolution with the
//! call's dimension labels and window). The interpreter evaluates that computation with the
//! caller's options, so a snapshot after a correct rewrite evaluates like the module before it,
//! and a rewrite that changed the meaning shows as a changed result.
//!
//! What the config does not say is taken from the operands and the result shape; a config this
//! module cannot read (an unknown post-op, a layout that does not produce the result shape) is
//! [`crate::EvalError::Unsupported`], never a guess.

use crate::eval::{run_entry, Ctx};
use crate::value::{product, Value};
use crate::{unsupported, EvalError, Result};
use hlo::{Instruction, PrimitiveType, Shape};
use serde_json::Value as Json;
use std::fmt::Write as _;

/// Evaluates a `__onednn$...` custom-call, or `None` when `target` is not one.
pub(crate) fn custom_call(
    ctx: &mut Ctx,
    i: &Instruction,
    target: &str,
    ops: &[&Value],
) -> Option<Result<Value>> {
    let lower = match target {
        "__onednn$matmul" => matmul,
        "__onednn$softmax" => softmax,
        "__onednn$convolution" => convolution,
        _ => return None,
    };
    Some((|| {
        let operands = ops
            .iter()
            .map(|v| match v {
                Value::Array(a) => Ok((a.ty, a.dims.clone())),
                _ => Err(unsupported(format!("{target} with a tuple operand"))),
            })
            .collect::<Result<Vec<_>>>()?;
        let config = backend_config(i)?;
        // Whether each flat operand's elements are all equal (bit for bit): prepacked weights
        // are a flat buffer in oneDNN's own blocked layout, which only a uniform buffer makes
        // irrelevant. Operands of rank 2 and more are never read as such: not scanned.
        let uniform: Vec<bool> = ops
            .iter()
            .map(|v| match v {
                Value::Array(a) if a.dims.len() < 2 => {
                    let x = crate::elementwise::to_f64s(&a.buf);
                    x.windows(2).all(|w| w[0].to_bits() == w[1].to_bits())
                }
                _ => false,
            })
            .collect();
        let text = lower(&config, &operands, &i.shape, &uniform)?;
        let module = hlo::parse::parse_module(&text).map_err(|e| EvalError::Internal {
            why: format!("{target} lowered to unparsable HLO: {e}\n{text}"),
        })?;
        let args = ops.iter().map(|v| (*v).clone()).collect();
        run_entry(&module, args, &ctx.opts)
    })())
}

/// The instruction's `backend_config` as JSON (`{}` when it has none).
fn backend_config(i: &Instruction) -> Result<Json> {
    let text = match i.attr("backend_config") {
        None => return Ok(Json::Object(Default::default())),
        Some(hlo::Attr::Raw(s)) | Some(hlo::Attr::Str(s)) | Some(hlo::Attr::Ident(s)) => s,
        Some(_) => return Err(unsupported("a backend_config that is not JSON")),
    };
    serde_json::from_str(text)
        .map_err(|e| unsupported(format!("backend_config is not JSON ({e}): {text}")))
}

/// An integer field that protobuf's JSON writes either as a number or as a string.
fn int_of(v: &Json) -> Option<i64> {
    match v {
        Json::Number(n) => n.as_i64(),
        Json::String(s) => s.parse().ok(),
        _ => None,
    }
}

fn ints_of(v: Option<&Json>) -> Option<Vec<i64>> {
    match v {
        None => Some(Vec::new()),
        Some(Json::Array(a)) => a.iter().map(int_of).collect(),
        Some(_) => None,
    }
}

fn flag_of(v: Option<&Json>) -> bool {
    matches!(v, Some(Json::Bool(true)))
}

/// A post-op of a oneDNN call (protobuf `OneDnnFusionConfig.FusionKind`, by name or number).
#[derive(Debug, Clone, Copy, PartialEq)]
enum PostOp {
    Bias,
    Relu,
    Tanh,
    GeluErf,
    GeluTanh,
    BinaryAdd,
    Linear,
    Sigmoid,
    Elu,
    Relu6,
    Swish,
}

impl PostOp {
    fn read(v: &Json) -> Result<PostOp> {
        let by_number = [
            (1, PostOp::Bias),
            (2, PostOp::Relu),
            (3, PostOp::Tanh),
            (4, PostOp::GeluErf),
            (5, PostOp::GeluTanh),
            (6, PostOp::BinaryAdd),
            (7, PostOp::Linear),
        ];
        let op = match v {
            Json::String(s) => match s.as_str() {
                "BIAS" => Some(PostOp::Bias),
                "RELU" => Some(PostOp::Relu),
                "TANH" => Some(PostOp::Tanh),
                "GELU_ERF" => Some(PostOp::GeluErf),
                "GELU_TANH" => Some(PostOp::GeluTanh),
                "BINARY_ADD" => Some(PostOp::BinaryAdd),
                "LINEAR" => Some(PostOp::Linear),
                "SIGMOID" => Some(PostOp::Sigmoid),
                "ELU" => Some(PostOp::Elu),
                "RELU6" => Some(PostOp::Relu6),
                "SWISH" => Some(PostOp::Swish),
                _ => None,
            },
            Json::Number(n) => n
                .as_i64()
                .and_then(|n| by_number.iter().find(|(k, _)| *k == n).map(|(_, op)| *op)),
            _ => None,
        };
        op.ok_or_else(|| unsupported(format!("oneDNN post-op {v}")))
    }
}

/// The post-ops of a matmul or convolution config, and LINEAR's factor. Releases write them as
/// `fused_ops` + `alpha_typecast` beside the other fields (0.4.x) or inside `fusions` as `ops` +
/// `alpha_typecast` (later ones).
fn post_ops(config: &Json) -> Result<(Vec<PostOp>, Option<f32>)> {
    let (list, alpha) = match config.get("fusions") {
        Some(f) => (f.get("ops"), f.get("alpha_typecast")),
        None => (config.get("fused_ops"), config.get("alpha_typecast")),
    };
    let ops = match list {
        None => Vec::new(),
        Some(Json::Array(a)) => a.iter().map(PostOp::read).collect::<Result<_>>()?,
        Some(v) => return Err(unsupported(format!("oneDNN fused ops {v}"))),
    };
    // The factor is an f32 whose bits were stored as an int32.
    let alpha = alpha
        .and_then(int_of)
        .map(|bits| f32::from_bits(bits as i32 as u32));
    Ok((ops, alpha))
}

/// An array's element type and dimensions.
type Dims = (PrimitiveType, Vec<usize>);

/// HLO text of one computation, built an instruction at a time.
struct Text {
    body: String,
    n: usize,
}

fn shape_text(ty: PrimitiveType, dims: &[usize]) -> String {
    let d: Vec<String> = dims.iter().map(|x| x.to_string()).collect();
    format!("{}[{}]", ty.name(), d.join(","))
}

fn list(v: &[usize]) -> String {
    let d: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    format!("{{{}}}", d.join(","))
}

impl Text {
    fn new() -> Text {
        Text {
            body: String::new(),
            n: 0,
        }
    }

    /// Adds `name = <shape> <rest>` and returns the name.
    fn add(&mut self, shape: &str, rest: String) -> String {
        self.n += 1;
        let name = format!("v{}", self.n);
        let _ = writeln!(self.body, "  {name} = {shape} {rest}");
        name
    }

    fn scalar(&mut self, ty: PrimitiveType, dims: &[usize], value: &str) -> String {
        let c = self.add(&shape_text(ty, &[]), format!("constant({value})"));
        self.add(
            &shape_text(ty, dims),
            format!("broadcast({c}), dimensions={{}}"),
        )
    }

    fn unary(&mut self, op: &str, ty: PrimitiveType, dims: &[usize], x: &str) -> String {
        self.add(&shape_text(ty, dims), format!("{op}({x})"))
    }

    fn binary(&mut self, op: &str, ty: PrimitiveType, dims: &[usize], x: &str, y: &str) -> String {
        self.add(&shape_text(ty, dims), format!("{op}({x}, {y})"))
    }

    /// `x` (of `ty[from]`) broadcast to `to` the way NumPy aligns shapes: trailing dimensions
    /// match, a dimension of 1 or a missing leading one is repeated.
    fn broadcast_to(
        &mut self,
        x: &str,
        ty: PrimitiveType,
        from: &[usize],
        to: &[usize],
    ) -> Result<String> {
        if from == to {
            return Ok(x.to_string());
        }
        if from.len() > to.len() {
            return Err(unsupported(format!(
                "oneDNN operand {from:?} does not broadcast to {to:?}"
            )));
        }
        let lead = to.len() - from.len();
        let mut kept_dims = Vec::new();
        let mut kept_at = Vec::new();
        for (j, &d) in from.iter().enumerate() {
            if d == to[lead + j] {
                kept_dims.push(d);
                kept_at.push(lead + j);
            } else if d != 1 {
                return Err(unsupported(format!(
                    "oneDNN operand {from:?} does not broadcast to {to:?}"
                )));
            }
        }
        let r = self.add(&shape_text(ty, &kept_dims), format!("reshape({x})"));
        Ok(self.add(
            &shape_text(ty, to),
            format!("broadcast({r}), dimensions={}", list(&kept_at)),
        ))
    }

    fn convert(
        &mut self,
        x: &str,
        from: PrimitiveType,
        to: PrimitiveType,
        dims: &[usize],
    ) -> String {
        if from == to {
            x.to_string()
        } else {
            self.add(&shape_text(to, dims), format!("convert({x})"))
        }
    }
}

/// The module text: reducers, then the entry with one parameter per operand and `root`.
fn module_text(name: &str, reducers: &str, operands: &[Dims], t: &Text, root: &str) -> String {
    let mut s = format!("HloModule {name}\n\n{reducers}ENTRY main {{\n");
    for (k, (ty, dims)) in operands.iter().enumerate() {
        let _ = writeln!(s, "  p{k} = {} parameter({k})", shape_text(*ty, dims));
    }
    s.push_str(&t.body);
    let _ = writeln!(s, "  ROOT out = {root}\n}}");
    s
}

/// The array result of a call, and the other elements of a tuple result (oneDNN's scratchpad).
fn result_parts(shape: &Shape) -> Result<(Dims, Vec<Dims>)> {
    let arr = |s: &Shape| -> Result<Dims> {
        match s {
            Shape::Array(a) if a.dims.iter().all(|&d| d >= 0) => {
                Ok((a.ty, a.dims.iter().map(|&d| d as usize).collect()))
            }
            _ => Err(unsupported(
                "a oneDNN call whose result is not a static array",
            )),
        }
    };
    match shape {
        Shape::Tuple(t) if !t.is_empty() => {
            let rest = t[1..].iter().map(arr).collect::<Result<_>>()?;
            Ok((arr(&t[0])?, rest))
        }
        s => Ok((arr(s)?, Vec::new())),
    }
}

/// The root: the result, or a tuple of it and zero-filled scratch buffers.
fn root_of(t: &mut Text, y: &str, result: &Dims, rest: &[Dims]) -> String {
    if rest.is_empty() {
        return format!("{} copy({y})", shape_text(result.0, &result.1));
    }
    let mut names = vec![y.to_string()];
    let mut shapes = vec![shape_text(result.0, &result.1)];
    for (ty, dims) in rest {
        names.push(t.scalar(*ty, dims, "0"));
        shapes.push(shape_text(*ty, dims));
    }
    format!("({}) tuple({})", shapes.join(", "), names.join(", "))
}

/// Applies `ops` in order to `y` (`ty[dims]`), reading operands `extra` for BIAS and BINARY_ADD.
fn apply_post_ops(
    t: &mut Text,
    mut y: String,
    ty: PrimitiveType,
    dims: &[usize],
    ops: &[PostOp],
    alpha: Option<f32>,
    extra: &[(usize, PrimitiveType, Vec<usize>)],
) -> Result<String> {
    let mut next = extra.iter();
    for &op in ops {
        y = match op {
            PostOp::Bias | PostOp::BinaryAdd => {
                let (k, ety, edims) = next.next().ok_or_else(|| {
                    unsupported(format!("oneDNN post-op {op:?} without its operand"))
                })?;
                let e = t.convert(&format!("p{k}"), *ety, ty, edims);
                let e = t.broadcast_to(&e, ty, edims, dims)?;
                t.binary("add", ty, dims, &y, &e)
            }
            PostOp::Relu => {
                let z = t.scalar(ty, dims, "0");
                t.binary("maximum", ty, dims, &y, &z)
            }
            PostOp::Relu6 => {
                let z = t.scalar(ty, dims, "0");
                let six = t.scalar(ty, dims, "6");
                t.add(&shape_text(ty, dims), format!("clamp({z}, {y}, {six})"))
            }
            PostOp::Tanh => t.unary("tanh", ty, dims, &y),
            PostOp::Sigmoid => t.unary("logistic", ty, dims, &y),
            PostOp::Swish => {
                let s = t.unary("logistic", ty, dims, &y);
                t.binary("multiply", ty, dims, &y, &s)
            }
            PostOp::Elu => {
                let z = t.scalar(ty, dims, "0");
                let gt = t.add(
                    &shape_text(PrimitiveType::Pred, dims),
                    format!("compare({y}, {z}), direction=GT"),
                );
                let em = t.unary("exponential-minus-one", ty, dims, &y);
                t.add(&shape_text(ty, dims), format!("select({gt}, {y}, {em})"))
            }
            PostOp::Linear => {
                let a = alpha
                    .filter(|a| a.is_finite())
                    .ok_or_else(|| unsupported("oneDNN LINEAR post-op without a finite alpha"))?;
                let c = t.scalar(ty, dims, &format!("{a:?}"));
                t.binary("multiply", ty, dims, &y, &c)
            }
            // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
            PostOp::GeluTanh => {
                let x2 = t.binary("multiply", ty, dims, &y, &y);
                let x3 = t.binary("multiply", ty, dims, &x2, &y);
                let k = t.scalar(ty, dims, "0.044715");
                let kx3 = t.binary("multiply", ty, dims, &k, &x3);
                let inner = t.binary("add", ty, dims, &y, &kx3);
                let c = t.scalar(ty, dims, "0.7978845608028654");
                let arg = t.binary("multiply", ty, dims, &c, &inner);
                let th = t.unary("tanh", ty, dims, &arg);
                half_x_times_one_plus(t, ty, dims, &y, &th)
            }
            // 0.5 x (1 + erf(x / sqrt(2)))
            PostOp::GeluErf => {
                let c = t.scalar(ty, dims, "0.7071067811865476");
                let arg = t.binary("multiply", ty, dims, &y, &c);
                let e = t.unary("erf", ty, dims, &arg);
                half_x_times_one_plus(t, ty, dims, &y, &e)
            }
        };
    }
    if next.next().is_some() {
        return Err(unsupported(
            "a oneDNN call with operands its post-ops do not read",
        ));
    }
    Ok(y)
}

fn half_x_times_one_plus(
    t: &mut Text,
    ty: PrimitiveType,
    dims: &[usize],
    x: &str,
    f: &str,
) -> String {
    let one = t.scalar(ty, dims, "1");
    let s = t.binary("add", ty, dims, &one, f);
    let half = t.scalar(ty, dims, "0.5");
    let hx = t.binary("multiply", ty, dims, &half, x);
    t.binary("multiply", ty, dims, &hx, &s)
}

/// `__onednn$matmul(A, B, extra...)`: `A` is `[batch..., M, K]` (`[..., K, M]` with
/// `transpose_a`), `B` is `[batch..., K, N]` (`[..., N, K]` with `transpose_b`); batch dimensions
/// broadcast to the result's; then the post-ops.
fn matmul(config: &Json, operands: &[Dims], shape: &Shape, uniform: &[bool]) -> Result<String> {
    let c = config
        .get("onednn_matmul_config")
        .ok_or_else(|| unsupported("__onednn$matmul without onednn_matmul_config"))?;
    let (ops, alpha) = post_ops(c)?;
    let (result, rest) = result_parts(shape)?;
    let (ty, out) = (result.0, result.1.clone());
    if operands.len() < 2 || out.len() < 2 {
        return Err(unsupported("__onednn$matmul of less than two matrices"));
    }
    let r = out.len();
    let prepacked = flag_of(c.get("weights_prepacked"))
        || flag_of(
            c.get("optimization_config")
                .and_then(|o| o.get("weights_prepacked")),
        );
    let mut t = Text::new();
    // Each side as `[batch..., rows, cols]` after its transpose, batch dims broadcast to the
    // result's; `want` is the matrix the dot needs.
    let mut side =
        |k: usize, transpose: bool, want: [Option<usize>; 2]| -> Result<(String, usize)> {
            let (xty, dims) = &operands[k];
            let mut x = format!("p{k}");
            let mut d = dims.clone();
            if dims.len() < 2 {
                // Weights the rewriter prepacked: a flat buffer in oneDNN's blocked layout. Only
                // when every element is the same does the layout not matter.
                let (Some(rows), Some(cols)) = (want[0], want[1]) else {
                    return Err(unsupported("__onednn$matmul of a vector"));
                };
                if !(k == 1 && prepacked && product(dims) == rows * cols) {
                    return Err(unsupported(format!(
                        "__onednn$matmul operand {k} {dims:?} for result {out:?}"
                    )));
                }
                if !uniform.get(k).copied().unwrap_or(false) {
                    return Err(unsupported(
                        "__onednn$matmul weights prepacked in oneDNN's blocked layout (their \
                         elements differ, so the layout matters)",
                    ));
                }
                d = vec![rows, cols];
                x = t.add(&shape_text(*xty, &d), format!("reshape({x})"));
            }
            let q = d.len();
            if transpose && dims.len() >= 2 {
                let mut perm: Vec<usize> = (0..q).collect();
                perm.swap(q - 2, q - 1);
                d.swap(q - 2, q - 1);
                x = t.add(
                    &shape_text(*xty, &d),
                    format!("transpose({x}), dimensions={}", list(&perm)),
                );
            }
            let fits = |w: Option<usize>, got: usize| w.is_none_or(|w| w == got);
            if !fits(want[0], d[q - 2]) || !fits(want[1], d[q - 1]) {
                return Err(unsupported(format!(
                    "__onednn$matmul operand {k} {dims:?} for result {out:?}"
                )));
            }
            let mut target: Vec<usize> = out[..r - 2].to_vec();
            target.extend_from_slice(&d[q - 2..]);
            Ok((t.broadcast_to(&x, *xty, &d, &target)?, d[q - 1]))
        };
    let (a, k) = side(0, flag_of(c.get("transpose_a")), [Some(out[r - 2]), None])?;
    let (b, _) = side(
        1,
        flag_of(c.get("transpose_b")),
        [Some(k), Some(out[r - 1])],
    )?;
    let batch: Vec<usize> = (0..r - 2).collect();
    let y = t.add(
        &shape_text(ty, &out),
        format!(
            "dot({a}, {b}), lhs_batch_dims={}, lhs_contracting_dims={{{}}}, \
             rhs_batch_dims={}, rhs_contracting_dims={{{}}}",
            list(&batch),
            r - 1,
            list(&batch),
            r - 2
        ),
    );
    let extra: Vec<_> = operands
        .iter()
        .enumerate()
        .skip(2)
        .map(|(k, (ty, d))| (k, *ty, d.clone()))
        .collect();
    let y = apply_post_ops(&mut t, y, ty, &out, &ops, alpha, &extra)?;
    let root = root_of(&mut t, &y, &result, &rest);
    Ok(module_text("onednn_matmul", "", operands, &t, &root))
}

/// `__onednn$softmax(x)` over `softmax_axis`: exp(x - max) / sum(exp(x - max)).
fn softmax(config: &Json, operands: &[Dims], shape: &Shape, _: &[bool]) -> Result<String> {
    let (result, rest) = result_parts(shape)?;
    let [(xty, dims)] = operands else {
        return Err(unsupported("__onednn$softmax takes one operand"));
    };
    let axis = softmax_axis(config, dims.len())
        .ok_or_else(|| unsupported(format!("the softmax axis of {config}")))?;
    if result.1 != *dims || !rest.is_empty() {
        return Err(unsupported(
            "__onednn$softmax whose result is not its operand's shape",
        ));
    }
    let ty = result.0;
    let mut t = Text::new();
    let x = t.convert("p0", *xty, ty, dims);
    let kept: Vec<usize> = (0..dims.len()).filter(|&d| d != axis).collect();
    let small: Vec<usize> = kept.iter().map(|&d| dims[d]).collect();
    // `x` reduced over `axis` with `reducer` from `init`, broadcast back to `dims`.
    let over_axis = |t: &mut Text, x: &str, init: &str, reducer: &str| {
        let c = t.add(&shape_text(ty, &[]), format!("constant({init})"));
        let r = t.add(
            &shape_text(ty, &small),
            format!("reduce({x}, {c}), dimensions={{{axis}}}, to_apply={reducer}"),
        );
        t.add(
            &shape_text(ty, dims),
            format!("broadcast({r}), dimensions={}", list(&kept)),
        )
    };
    let mxb = over_axis(&mut t, &x, "-inf", "max_of");
    let d = t.binary("subtract", ty, dims, &x, &mxb);
    let e = t.unary("exponential", ty, dims, &d);
    let sb = over_axis(&mut t, &e, "0", "sum_of");
    let y = t.binary("divide", ty, dims, &e, &sb);
    let root = root_of(&mut t, &y, &result, &rest);
    let n = ty.name();
    let reducers = format!(
        "max_of {{\n  a = {n}[] parameter(0)\n  b = {n}[] parameter(1)\n  ROOT m = {n}[] maximum(a, b)\n}}\n\n\
         sum_of {{\n  a = {n}[] parameter(0)\n  b = {n}[] parameter(1)\n  ROOT s = {n}[] add(a, b)\n}}\n\n"
    );
    Ok(module_text(
        "onednn_softmax",
        &reducers,
        operands,
        &t,
        &root,
    ))
}

/// The axis a softmax call normalizes over: `softmax_axis` of its config (proto3 leaves out a
/// 0); without any config (jaxlib 0.4.26, whose kernel has no axis setting) the last one.
fn softmax_axis(config: &Json, rank: usize) -> Option<usize> {
    let axis = match config.get("onednn_softmax_config") {
        Some(c) => c.get("softmax_axis").map_or(Some(0), int_of)?,
        None => rank.checked_sub(1)? as i64,
    };
    usize::try_from(axis).ok().filter(|&a| a < rank)
}

/// One reading of a convolution config: dimension numbers and window, zero-based.
struct ConvLayout {
    labels: String,
    window: String,
}

/// `__onednn$convolution(input, kernel, extra...)`, laid out by `onednn_conv_config`. Releases
/// store spatial dimensions, padding, strides and dilations either one-based (each value + 1) or
/// as they are; the reading whose output shape is the call's result shape is taken, and a config
/// that neither reading explains is unsupported.
fn convolution(config: &Json, operands: &[Dims], shape: &Shape, _: &[bool]) -> Result<String> {
    let c = config
        .get("onednn_conv_config")
        .ok_or_else(|| unsupported("__onednn$convolution without onednn_conv_config"))?;
    let (ops, alpha) = post_ops(c)?;
    let (result, rest) = result_parts(shape)?;
    if operands.len() < 2 {
        return Err(unsupported("__onednn$convolution without input and kernel"));
    }
    let groups = c.get("feature_groups").and_then(int_of).unwrap_or(1).max(1);
    let layout = [1i64, 0]
        .iter()
        .find_map(|&base| conv_layout(c, base, &operands[0].1, &operands[1].1, &result.1))
        .ok_or_else(|| {
            unsupported(format!(
                "an onednn_conv_config that gives no result of shape {:?}: {c}",
                result.1
            ))
        })?;
    let (ty, out) = (result.0, result.1.clone());
    let mut t = Text::new();
    let y = t.add(
        &shape_text(ty, &out),
        format!(
            "convolution(p0, p1), window={{{}}}, dim_labels={}, feature_group_count={groups}",
            layout.window, layout.labels
        ),
    );
    let extra: Vec<_> = operands
        .iter()
        .enumerate()
        .skip(2)
        .map(|(k, (ty, d))| (k, *ty, d.clone()))
        .collect();
    let y = apply_post_ops(&mut t, y, ty, &out, &ops, alpha, &extra)?;
    let root = root_of(&mut t, &y, &result, &rest);
    Ok(module_text("onednn_convolution", "", operands, &t, &root))
}

/// Reads the config with spatial dimensions and window values offset by `base`; `None` when the
/// reading is inconsistent or does not give `out`.
fn conv_layout(
    c: &Json,
    base: i64,
    input: &[usize],
    kernel: &[usize],
    out: &[usize],
) -> Option<ConvLayout> {
    let rank = input.len();
    if kernel.len() != rank || out.len() != rank || rank < 3 {
        return None;
    }
    let dim = |v: i64| usize::try_from(v).ok().filter(|&d| d < rank);
    let spatial = |v: Option<&Json>| -> Option<Vec<usize>> {
        ints_of(v)?.into_iter().map(|d| dim(d - base)).collect()
    };
    let data = |name: &str| -> Option<(usize, usize, Vec<usize>)> {
        let d = c.get(name)?.get("data")?;
        Some((
            dim(int_of(d.get("batch_dim").unwrap_or(&Json::from(0)))?)?,
            dim(int_of(d.get("feature_dim").unwrap_or(&Json::from(0)))?)?,
            spatial(d.get("spatial_dims"))?,
        ))
    };
    let (ib, ifd, isp) = data("input")?;
    let (ob, ofd, osp) = data("output")?;
    let f = c.get("kernel")?.get("filter")?;
    let ki = dim(int_of(
        f.get("input_feature_dim").unwrap_or(&Json::from(0)),
    )?)?;
    let ko = dim(int_of(
        f.get("output_feature_dim").unwrap_or(&Json::from(0)),
    )?)?;
    let ksp = spatial(f.get("spatial_dims"))?;
    let nsp = rank - 2;
    if isp.len() != nsp || osp.len() != nsp || ksp.len() != nsp {
        return None;
    }
    let labels = |b: usize, f: usize, sp: &[usize], bl: char, fl: char| -> Option<String> {
        let mut s = vec![None; rank];
        s[b] = Some(bl);
        if s[f].is_some() {
            return None;
        }
        s[f] = Some(fl);
        for (k, &d) in sp.iter().enumerate() {
            if s[d].is_some() {
                return None;
            }
            s[d] = char::from_digit(k as u32, 10);
        }
        s.into_iter().collect()
    };
    let lin = labels(ib, ifd, &isp, 'b', 'f')?;
    let ker = labels(ki, ko, &ksp, 'i', 'o')?;
    let outl = labels(ob, ofd, &osp, 'b', 'f')?;
    let w = c.get("window")?;
    let values = |name: &str, default: i64| -> Option<Vec<i64>> {
        let v = ints_of(w.get(name))?;
        if v.is_empty() {
            return Some(vec![default; nsp]);
        }
        (v.len() == nsp).then(|| v.iter().map(|x| x - base).collect())
    };
    let pl = values("pad_left", 0)?;
    let pr = values("pad_right", 0)?;
    let st = values("strides", 1)?;
    let dl = values("window_dilations", 1)?;
    if st.iter().chain(&dl).any(|&x| x < 1) || pl.iter().chain(&pr).any(|&x| x < 0) {
        return None;
    }
    let mut win = Vec::new();
    for k in 0..nsp {
        let size = kernel[ksp[k]] as i64;
        let span = (size - 1) * dl[k] + 1;
        let padded = input[isp[k]] as i64 + pl[k] + pr[k];
        let o = if padded < span {
            0
        } else {
            (padded - span) / st[k] + 1
        };
        if o != out[osp[k]] as i64 {
            return None;
        }
        win.push(size);
    }
    let x = |v: &[i64]| {
        v.iter()
            .map(|a| a.to_string())
            .collect::<Vec<_>>()
            .join("x")
    };
    let pads: Vec<String> = pl
        .iter()
        .zip(&pr)
        .map(|(a, b)| format!("{a}_{b}"))
        .collect();
    Some(ConvLayout {
        labels: format!("{lin}_{ker}->{outl}"),
        window: format!(
            "size={} stride={} pad={} rhs_dilate={}",
            x(&win),
            x(&st),
            pads.join("x"),
            x(&dl)
        ),
    })
}

/// What a oneDNN call computes, as the judge's tolerance model needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CallProfile {
    /// Products summed into each result element (a matmul's K, a convolution's window times
    /// input features, a softmax's axis).
    pub reduction_length: u64,
    /// Whether a function XLA approximates is applied (tanh, GELU, sigmoid, exp, ...).
    pub approximated: bool,
    /// Whether the call is a matmul or convolution (whose accumulation order is XLA's choice).
    pub contraction: bool,
}

/// The profile of a `__onednn$...` custom-call whose operands have `operand_dims`, or `None`
/// when `i` is not one this module evaluates.
pub fn call_profile(i: &Instruction, operand_dims: &[Vec<i64>]) -> Option<CallProfile> {
    let target = crate::attrs::word(i, "custom_call_target")?;
    let config = backend_config(i).ok()?;
    let approximated = |c: Option<&Json>| {
        c.and_then(|c| post_ops(c).ok()).is_some_and(|(ops, _)| {
            ops.iter().any(|op| {
                matches!(
                    op,
                    PostOp::Tanh
                        | PostOp::Sigmoid
                        | PostOp::GeluErf
                        | PostOp::GeluTanh
                        | PostOp::Elu
                        | PostOp::Swish
                )
            })
        })
    };
    let size = |d: i64| d.max(0) as u64;
    match target.as_str() {
        "__onednn$matmul" => {
            let c = config.get("onednn_matmul_config");
            let a = operand_dims.first().cloned().unwrap_or_default();
            let q = a.len();
            let transpose_a = flag_of(c.and_then(|c| c.get("transpose_a")));
            let k = if q < 2 {
                1
            } else if transpose_a {
                a[q - 2]
            } else {
                a[q - 1]
            };
            Some(CallProfile {
                reduction_length: size(k),
                approximated: approximated(c),
                contraction: true,
            })
        }
        "__onednn$convolution" => {
            let c = config.get("onednn_conv_config");
            let kernel = operand_dims.get(1).cloned().unwrap_or_default();
            let out_f = c
                .and_then(|c| c.get("kernel")?.get("filter")?.get("output_feature_dim"))
                .and_then(int_of)
                .unwrap_or(-1);
            let k = kernel
                .iter()
                .enumerate()
                .filter(|(d, _)| *d as i64 != out_f)
                .fold(1u64, |acc, (_, &d)| acc.saturating_mul(size(d)));
            Some(CallProfile {
                reduction_length: k,
                approximated: approximated(c),
                contraction: true,
            })
        }
        "__onednn$softmax" => {
            let n = operand_dims
                .first()
                .and_then(|x| Some(x[softmax_axis(&config, x.len())?]))
                .unwrap_or(1);
            Some(CallProfile {
                reduction_length: size(n),
                approximated: true,
                contraction: false,
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conv_config(spatial: [u32; 2], kernel_spatial: [u32; 2], window: [u32; 4]) -> Json {
        // The layout of a 3x3 NHWC/HWIO convolution with padding 1, as jaxlib 0.5.0 writes it
        // (one-based) or as later releases do (zero-based): `window` is pad, pad, stride,
        // dilation.
        let [p, q, s, d] = window;
        serde_json::from_str(&format!(
            r#"{{"dims":"4","input":{{"dims":"0","data":{{"batch_dim":"0","feature_dim":"3","spatial_dims":["{}","{}"]}}}},
            "kernel":{{"dims":"0","filter":{{"input_feature_dim":"2","output_feature_dim":"3","spatial_dims":["{}","{}"],"shape":[]}}}},
            "output":{{"dims":"0","data":{{"batch_dim":"0","feature_dim":"3","spatial_dims":["{}","{}"]}}}},
            "window":{{"size":[],"pad_left":["{p}","{p}"],"pad_right":["{q}","{q}"],"strides":["{s}","{s}"],"window_dilations":["{d}","{d}"]}},"feature_groups":"1"}}"#,
            spatial[0], spatial[1], kernel_spatial[0], kernel_spatial[1], spatial[0], spatial[1]
        ))
        .unwrap()
    }

    /// Both ways releases store a convolution's layout read as the same convolution: the
    /// reading that gives the result shape wins.
    #[test]
    fn convolution_layouts_read_one_based_and_zero_based() {
        let (input, kernel, out) = ([8, 64, 64, 32], [3, 3, 32, 64], [8, 64, 64, 64]);
        let one = conv_config([2, 3], [1, 2], [2, 2, 2, 2]);
        let zero = conv_config([1, 2], [0, 1], [1, 1, 1, 1]);
        for (c, base) in [(&one, 1), (&zero, 0)] {
            let l = conv_layout(c, base, &input, &kernel, &out).expect("reads");
            assert_eq!(l.labels, "b01f_01io->b01f");
            assert_eq!(l.window, "size=3x3 stride=1x1 pad=1_1x1_1 rhs_dilate=1x1");
        }
        // The one-based config read as zero-based is padding 2, stride 2: another output shape.
        assert!(conv_layout(&one, 0, &input, &kernel, &out).is_none());
    }

    /// Post-ops by name (0.4.x), by enum number, and nested under `fusions` (later releases);
    /// LINEAR's factor is an f32's bits; an unknown post-op is unsupported, never skipped.
    #[test]
    fn post_ops_read_every_form() {
        let flat: Json = serde_json::from_str(
            r#"{"fused_ops":["BIAS","GELU_TANH"],"alpha_typecast":1056964608}"#,
        )
        .unwrap();
        assert_eq!(
            post_ops(&flat).unwrap(),
            (vec![PostOp::Bias, PostOp::GeluTanh], Some(0.5))
        );
        let nested: Json =
            serde_json::from_str(r#"{"fusions":{"ops":[6,7],"alpha_typecast":1031798784}}"#)
                .unwrap();
        assert_eq!(
            post_ops(&nested).unwrap(),
            (vec![PostOp::BinaryAdd, PostOp::Linear], Some(0.0625))
        );
        let unknown: Json = serde_json::from_str(r#"{"fused_ops":["PRELU"]}"#).unwrap();
        assert!(matches!(
            post_ops(&unknown),
            Err(crate::EvalError::Unsupported { .. })
        ));
    }

    /// A matmul with a transposed rhs, a broadcast bias and RELU evaluates as the dot, add and
    /// maximum it stands for; its scratchpad output is zeros.
    #[test]
    fn matmul_with_bias_and_relu_evaluates_as_its_ops() {
        let text = r#"HloModule m

ENTRY main {
  a = f32[2,3] parameter(0)
  b = f32[2,3] parameter(1)
  c = f32[2] parameter(2)
  ROOT mm = (f32[2,2], u8[4]) custom-call(a, b, c), custom_call_target="__onednn$matmul", backend_config={"outer_dimension_partitions":[],"onednn_matmul_config":{"transpose_a":false,"transpose_b":true,"fused_ops":["BIAS","RELU"],"bias_broadcast":true,"alpha_typecast":0,"weights_prepacked":false,"user_scratchpad":true}}
}
"#;
        let m = hlo::parse::parse_module(text).unwrap();
        let lit = |dims: Vec<i64>, v: &[f32]| {
            hlo::Literal::Array(
                hlo::ArrayLiteral::from_bytes(
                    PrimitiveType::F32,
                    dims,
                    v.iter().flat_map(|x| x.to_le_bytes()).collect(),
                )
                .unwrap(),
            )
        };
        let args = [
            lit(vec![2, 3], &[1., 2., 3., 4., 5., 6.]),
            lit(vec![2, 3], &[1., 0., -1., 0., 1., 0.]),
            lit(vec![2], &[0.5, -10.]),
        ];
        let out = crate::evaluate(&m, &args).unwrap();
        let hlo::Literal::Tuple(parts) = out else {
            panic!("a tuple")
        };
        // a · bᵀ = [[-2, 2], [-2, 5]]; + [0.5, -10] = [[-1.5, -8], [-1.5, -5]]; relu: zeros.
        // Then with a bias that keeps the second column positive:
        let got: Vec<f64> = (0..4)
            .map(|k| parts[0].as_array().unwrap().get(k).to_f64())
            .collect();
        assert_eq!(got, vec![0.0, 0.0, 0.0, 0.0]);
        assert!((0..4).all(|k| parts[1].as_array().unwrap().get(k).to_f64() == 0.0));
        let args2 = [args[0].clone(), args[1].clone(), lit(vec![2], &[3., 1.])];
        let hlo::Literal::Tuple(p2) = crate::evaluate(&m, &args2).unwrap() else {
            panic!("a tuple")
        };
        let got: Vec<f64> = (0..4)
            .map(|k| p2[0].as_array().unwrap().get(k).to_f64())
            .collect();
        assert_eq!(got, vec![1.0, 3.0, 1.0, 6.0]);
    }
}

#[cfg(test)]
mod prepacked_tests {
    use hlo::{ArrayLiteral, Literal, PrimitiveType};

    /// A matmul whose weights the rewriter prepacked (a flat constant in oneDNN's blocked
    /// layout, as jaxlib 0.4.28 writes it for jax-ml/jax#13054): evaluated when every weight is
    /// the same value (the layout cannot matter), refused otherwise.
    fn module(weights: &str) -> hlo::Module {
        hlo::parse::parse_module(&format!(
            r#"HloModule m

ENTRY main {{
  a = f32[4,3] parameter(0)
  w = f32[9] constant({weights})
  c = f32[3] constant({{1, 2, 3}})
  mm = (f32[4,3], u8[0]) custom-call(a, w, c), custom_call_target="__onednn$matmul", backend_config={{"outer_dimension_partitions":[],"onednn_matmul_config":{{"transpose_a":false,"transpose_b":false,"fused_ops":["BINARY_ADD"],"bias_broadcast":true,"alpha_typecast":0,"weights_prepacked":true,"user_scratchpad":true}}}}
  ROOT r = f32[4,3] get-tuple-element(mm), index=0
}}
"#
        ))
        .unwrap()
    }

    #[test]
    fn prepacked_weights_evaluate_only_when_uniform() {
        let a = Literal::Array(
            ArrayLiteral::from_bytes(
                PrimitiveType::F32,
                vec![4, 3],
                (0..12).flat_map(|k| (k as f32).to_le_bytes()).collect(),
            )
            .unwrap(),
        );
        let out = crate::evaluate(&module("{2, 2, 2, 2, 2, 2, 2, 2, 2}"), &[a.clone()]).unwrap();
        // Row i of a is (3i, 3i+1, 3i+2): each output is 2 * (9i + 3) plus the row [1, 2, 3].
        let got: Vec<f64> = (0..12)
            .map(|k| out.as_array().unwrap().get(k).to_f64())
            .collect();
        let want: Vec<f64> = (0..12)
            .map(|k| 2.0 * (9.0 * (k / 3) as f64 + 3.0) + (k % 3 + 1) as f64)
            .collect();
        assert_eq!(got, want);
        let e = crate::evaluate(&module("{0, 1, 2, 3, 4, 5, 6, 7, 8}"), &[a]).unwrap_err();
        assert!(
            matches!(&e, crate::EvalError::Unsupported { what } if what.contains("blocked layout")),
            "{e}"
        );
    }
}

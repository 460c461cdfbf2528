//! The verifier: structural rules (operands defined before use, parameter numbering, called
//! computations exist and do not recurse, arity) and shape inference per opcode, as XLA's
//! `ShapeInference` defines it. Layouts are ignored (only dimensions, dynamic bounds and element
//! types are compared), so modules after layout assignment and fusion verify like the rest.
//!
//! Opcodes whose shape rule is not modelled (custom-call, collectives, async wrappers, infeed,
//! ...) are accepted when their structure is sound.

use crate::ir::{CompId, Computation, Instruction, Module};
use crate::literal::Literal;
use crate::opcode::Opcode;
use crate::shape::{ArrayShape, Shape, UNBOUNDED_SIZE};
use crate::types::PrimitiveType;
use std::fmt;

/// One broken rule: where (computation, instruction) and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyError {
    pub computation: String,
    /// `None` for rules about the computation or module itself.
    pub instruction: Option<String>,
    pub message: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.instruction {
            Some(i) => write!(
                f,
                "in computation %{}, instruction %{}: {}",
                self.computation, i, self.message
            ),
            None => write!(f, "in computation %{}: {}", self.computation, self.message),
        }
    }
}

impl std::error::Error for VerifyError {}

/// Verifies the module; the first broken rule is the error.
pub fn verify_module(m: &Module) -> Result<(), VerifyError> {
    match verify_module_all(m).into_iter().next() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Every broken rule in the module (at most one per instruction), in module order.
pub fn verify_module_all(m: &Module) -> Vec<VerifyError> {
    let mut errs = Vec::new();
    if m.computations.is_empty() {
        errs.push(VerifyError {
            computation: String::new(),
            instruction: None,
            message: "the module has no computations".into(),
        });
        return errs;
    }
    if m.entry >= m.computations.len() {
        errs.push(VerifyError {
            computation: String::new(),
            instruction: None,
            message: format!("entry computation index {} is out of range", m.entry),
        });
        return errs;
    }
    for c in &m.computations {
        verify_computation(m, c, &mut errs);
    }
    if errs.is_empty() {
        check_call_graph(m, &mut errs);
    }
    errs
}

fn verify_computation(m: &Module, c: &Computation, errs: &mut Vec<VerifyError>) {
    let cerr = |msg: String| VerifyError {
        computation: c.name.clone(),
        instruction: None,
        message: msg,
    };
    if c.instructions.is_empty() {
        errs.push(cerr("the computation has no instructions".into()));
        return;
    }
    if c.root >= c.instructions.len() {
        errs.push(cerr(format!("root index {} is out of range", c.root)));
        return;
    }
    // Parameter numbering: 0..n-1, each once.
    let mut nums: Vec<i64> = c
        .instructions
        .iter()
        .filter(|i| i.opcode == Opcode::Parameter)
        .map(|i| i.parameter_number.unwrap_or(-1))
        .collect();
    nums.sort_unstable();
    for (k, &n) in nums.iter().enumerate() {
        if n != k as i64 {
            errs.push(cerr(format!(
                "parameter numbers must be 0..{} with each used once, found {:?}",
                nums.len(),
                nums
            )));
            break;
        }
    }
    let mut names = std::collections::HashSet::new();
    for (id, instr) in c.instructions.iter().enumerate() {
        let v = V { m, c, id, instr };
        if !names.insert(instr.name.as_str()) {
            errs.push(v.err(format!("the name %{} is used twice", instr.name)));
            continue;
        }
        if let Err(msg) = v.check() {
            errs.push(v.err(msg));
        }
    }
}

/// Called computations must not (transitively) call the computation that calls them.
fn check_call_graph(m: &Module, errs: &mut Vec<VerifyError>) {
    let n = m.computations.len();
    let callees: Vec<Vec<CompId>> = m
        .computations
        .iter()
        .map(|c| {
            let mut v: Vec<CompId> = c
                .instructions
                .iter()
                .flat_map(|i| i.called_computations())
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        })
        .collect();
    // 0 = unvisited, 1 = on stack, 2 = done. Iterative DFS.
    let mut state = vec![0u8; n];
    for start in 0..n {
        if state[start] != 0 {
            continue;
        }
        let mut stack = vec![(start, 0usize)];
        state[start] = 1;
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            if let Some(&callee) = callees[node].get(*next) {
                *next += 1;
                match state[callee] {
                    0 => {
                        state[callee] = 1;
                        stack.push((callee, 0));
                    }
                    1 => {
                        errs.push(VerifyError {
                            computation: m.computations[node].name.clone(),
                            instruction: None,
                            message: format!(
                                "calls computation %{} recursively (computations may not recurse)",
                                m.computations[callee].name
                            ),
                        });
                        return;
                    }
                    _ => {}
                }
            } else {
                state[node] = 2;
                stack.pop();
            }
        }
    }
}

type R = Result<(), String>;

fn s(shape: &Shape) -> String {
    crate::print::shape_to_string(&shape.without_layout())
}

/// Equal up to layouts.
fn same(a: &Shape, b: &Shape) -> bool {
    a.compatible(b)
}

fn dims_str(d: &[i64]) -> String {
    let v: Vec<String> = d
        .iter()
        .map(|&x| {
            if x == UNBOUNDED_SIZE {
                "?".into()
            } else {
                x.to_string()
            }
        })
        .collect();
    format!("[{}]", v.join(","))
}

struct V<'a> {
    m: &'a Module,
    c: &'a Computation,
    id: usize,
    instr: &'a Instruction,
}

impl<'a> V<'a> {
    fn err(&self, message: String) -> VerifyError {
        VerifyError {
            computation: self.c.name.clone(),
            instruction: Some(self.instr.name.clone()),
            message,
        }
    }

    fn op(&self, i: usize) -> &'a Shape {
        &self.c.instructions[self.instr.operands[i]].shape
    }

    fn arr(&self, i: usize) -> Result<&'a ArrayShape, String> {
        self.op(i)
            .as_array()
            .ok_or_else(|| format!("operand {i} must be an array, it is {}", s(self.op(i))))
    }

    fn out(&self) -> Result<&'a ArrayShape, String> {
        self.instr.shape.as_array().ok_or_else(|| {
            format!(
                "the result must be an array, it is {}",
                s(&self.instr.shape)
            )
        })
    }

    fn expect(&self, want: Shape) -> R {
        if same(&want, &self.instr.shape) {
            Ok(())
        } else {
            Err(format!(
                "{} should have shape {} by the shape rule of {}, but is {}",
                self.instr.opcode.name(),
                s(&want),
                self.instr.opcode.name(),
                s(&self.instr.shape)
            ))
        }
    }

    fn expect_array(&self, ty: PrimitiveType, dims: Vec<i64>, like: &ArrayShape) -> R {
        let mut a = ArrayShape::new(ty, dims);
        if a.dims.len() == like.dims.len() {
            a.dynamic = like.dynamic.clone();
        }
        // Dynamic flags come from the result where the rule cannot know them.
        let out = self.instr.shape.as_array();
        if let Some(o) = out {
            if o.dims.len() == a.dims.len() {
                a.dynamic = o.dynamic.clone();
            }
        }
        self.expect(Shape::Array(a))
    }

    fn ints(&self, name: &str) -> Result<&'a [i64], String> {
        self.instr
            .ints(name)
            .ok_or_else(|| format!("attribute {name}={{...}} is missing"))
    }

    fn int(&self, name: &str) -> Result<i64, String> {
        self.instr
            .int(name)
            .ok_or_else(|| format!("attribute {name}=N is missing"))
    }

    fn comp(&self, name: &str) -> Result<&'a Computation, String> {
        let id = self
            .instr
            .comp(name)
            .ok_or_else(|| format!("attribute {name}=%computation is missing"))?;
        self.m
            .computations
            .get(id)
            .ok_or_else(|| format!("{name} refers to computation #{id}, which does not exist"))
    }

    fn nops(&self, n: usize) -> R {
        if self.instr.operands.len() == n {
            Ok(())
        } else {
            Err(format!(
                "{} takes {n} operand(s), got {}",
                self.instr.opcode.name(),
                self.instr.operands.len()
            ))
        }
    }

    fn check(&self) -> R {
        let instr = self.instr;
        for (k, &o) in instr.operands.iter().enumerate() {
            if o >= self.id {
                return Err(format!(
                    "operand {k} (index {o}) is not defined before this instruction"
                ));
            }
        }
        for &p in instr.control_predecessors() {
            if p >= self.c.instructions.len() || p == self.id {
                return Err(format!("control predecessor index {p} is invalid"));
            }
        }
        for cid in instr.called_computations() {
            if cid >= self.m.computations.len() {
                return Err(format!("calls computation #{cid}, which does not exist"));
            }
        }
        check_shape_valid(&instr.shape)
            .map_err(|e| format!("invalid shape {}: {e}", s(&instr.shape)))?;
        if let Some(n) = instr.opcode.arity() {
            self.nops(n)?;
        }
        self.shape_rule()
    }

    fn shape_rule(&self) -> R {
        use Opcode::*;
        let instr = self.instr;
        match instr.opcode {
            Parameter => match instr.parameter_number {
                Some(n) if n >= 0 => Ok(()),
                _ => Err("parameter without a parameter number".into()),
            },
            Constant => match &instr.constant {
                Some(crate::ir::Constant::Literal(l)) => check_literal_shape(l, &instr.shape),
                Some(crate::ir::Constant::Elided) => Ok(()),
                None => Err("constant without a value".into()),
            },
            Abs | Negate | Exp | Expm1 | Log | Log1p | Sqrt | Rsqrt | Cbrt | Sin | Cos | Tan
            | Tanh | Ceil | Floor | Sign | RoundNearestAfz | RoundNearestEven | Logistic | Not
            | PopulationCount | Clz | Erf | Copy | Acos | Acosh | Asin | Asinh | Atan | Atanh
            | Cosh | Sinh | IsFinite | Real | Imag => {
                let a = self.arr(0)?;
                let ty = match instr.opcode {
                    IsFinite => {
                        if !a.ty.is_float() {
                            return Err(format!("is-finite needs a float operand, got {}", a.ty));
                        }
                        PrimitiveType::Pred
                    }
                    Real | Imag | Abs => a.ty.complex_component().unwrap_or(a.ty),
                    Not if !(a.ty.is_integer() || a.ty == PrimitiveType::Pred) => {
                        return Err(format!("not needs pred or integers, got {}", a.ty))
                    }
                    PopulationCount | Clz if !a.ty.is_integer() => {
                        return Err(format!("{} needs integers, got {}", instr.opcode, a.ty))
                    }
                    _ => a.ty,
                };
                self.expect_array(ty, a.dims.clone(), a)
            }
            Add | Subtract | Multiply | Divide | Remainder | Maximum | Minimum | Power | And
            | Or | Xor | ShiftLeft | ShiftRightArithmetic | ShiftRightLogical | Atan2 | Complex
            | Compare => {
                let a = self.arr(0)?;
                let b = self.arr(1)?;
                if a.ty != b.ty || a.dims != b.dims {
                    return Err(format!(
                        "operands must have the same shape, got {} and {}",
                        s(self.op(0)),
                        s(self.op(1))
                    ));
                }
                let ty = match instr.opcode {
                    Compare => {
                        if instr.ident("direction").is_none() {
                            return Err("compare without direction=".into());
                        }
                        PrimitiveType::Pred
                    }
                    Complex => match a.ty {
                        PrimitiveType::F32 => PrimitiveType::C64,
                        PrimitiveType::F64 => PrimitiveType::C128,
                        t => return Err(format!("complex needs f32 or f64 operands, got {t}")),
                    },
                    And | Or | Xor if !(a.ty.is_integer() || a.ty == PrimitiveType::Pred) => {
                        return Err(format!(
                            "{} needs pred or integers, got {}",
                            instr.opcode, a.ty
                        ))
                    }
                    ShiftLeft | ShiftRightArithmetic | ShiftRightLogical if !a.ty.is_integer() => {
                        return Err(format!("{} needs integers, got {}", instr.opcode, a.ty))
                    }
                    _ => a.ty,
                };
                self.expect_array(ty, a.dims.clone(), a)
            }
            Select => {
                let p = self.arr(0)?;
                let a = self.arr(1)?;
                let b = self.arr(2)?;
                if p.ty != PrimitiveType::Pred {
                    return Err(format!("select's predicate must be pred, got {}", p.ty));
                }
                if a.ty != b.ty || a.dims != b.dims {
                    return Err(format!(
                        "select's branches must have the same shape, got {} and {}",
                        s(self.op(1)),
                        s(self.op(2))
                    ));
                }
                if !p.dims.is_empty() && p.dims != a.dims {
                    return Err(format!(
                        "select's predicate {} does not match the branches {}",
                        s(self.op(0)),
                        s(self.op(1))
                    ));
                }
                self.expect_array(a.ty, a.dims.clone(), a)
            }
            Clamp => {
                let lo = self.arr(0)?;
                let x = self.arr(1)?;
                let hi = self.arr(2)?;
                for (name, b) in [("min", lo), ("max", hi)] {
                    if b.ty != x.ty || !(b.dims.is_empty() || b.dims == x.dims) {
                        return Err(format!(
                            "clamp's {name} {} must be a scalar or match the operand {}",
                            s(&Shape::Array(b.clone())),
                            s(self.op(1))
                        ));
                    }
                }
                self.expect_array(x.ty, x.dims.clone(), x)
            }
            Convert | StochasticConvert => {
                let a = self.arr(0)?;
                let o = self.out()?;
                self.expect_array(o.ty, a.dims.clone(), a)
            }
            BitcastConvert => {
                let a = self.arr(0)?;
                let o = self.out()?;
                let (iw, ow) = (a.ty.bit_width() as i64, o.ty.bit_width() as i64);
                let mut dims = a.dims.clone();
                if iw > ow {
                    if ow == 0 || iw % ow != 0 {
                        return Err(format!("cannot bitcast-convert {} to {}", a.ty, o.ty));
                    }
                    dims.push(iw / ow);
                } else if iw < ow {
                    if iw == 0 || ow % iw != 0 || dims.last() != Some(&(ow / iw)) {
                        return Err(format!(
                            "bitcast-convert from {} to {} needs a last dimension of {}",
                            a.ty,
                            o.ty,
                            if iw == 0 { 0 } else { ow / iw }
                        ));
                    }
                    dims.pop();
                }
                self.expect_array(o.ty, dims, a)
            }
            ReducePrecision => {
                let a = self.arr(0)?;
                if !a.ty.is_float() {
                    return Err(format!("reduce-precision needs floats, got {}", a.ty));
                }
                let e = self.int("exponent_bits")?;
                let mb = self.int("mantissa_bits")?;
                if e < 1 || mb < 0 {
                    return Err(format!("bad exponent_bits={e} / mantissa_bits={mb}"));
                }
                self.expect_array(a.ty, a.dims.clone(), a)
            }
            Broadcast => {
                let a = self.arr(0)?;
                let o = self.out()?;
                let dims = self.ints("dimensions")?;
                if dims.len() != a.dims.len() {
                    return Err(format!(
                        "dimensions={:?} must list one result dimension per operand dimension ({})",
                        dims,
                        a.dims.len()
                    ));
                }
                for (i, &d) in dims.iter().enumerate() {
                    let Some(&od) = usize::try_from(d).ok().and_then(|d| o.dims.get(d)) else {
                        return Err(format!(
                            "broadcast dimension {d} is out of range for {}",
                            s(&self.instr.shape)
                        ));
                    };
                    if od != a.dims[i] {
                        return Err(format!(
                            "operand dimension {i} ({}) does not match result dimension {d} ({od})",
                            a.dims[i]
                        ));
                    }
                }
                self.expect_array(a.ty, o.dims.clone(), o)
            }
            Reshape => {
                let a = self.arr(0)?;
                let o = self.out()?;
                if a.ty != o.ty {
                    return Err(format!(
                        "reshape changes the element type {} to {}",
                        a.ty, o.ty
                    ));
                }
                if a.is_static() && o.is_static() && a.element_count() != o.element_count() {
                    return Err(format!(
                        "reshape from {} to {} changes the element count",
                        s(self.op(0)),
                        s(&self.instr.shape)
                    ));
                }
                Ok(())
            }
            Bitcast => {
                let a = self.op(0);
                let o = &self.instr.shape;
                match (a.as_array(), o.as_array()) {
                    (Some(a), Some(o)) => {
                        let same_count = a.element_count() == o.element_count();
                        let bytes = |x: &ArrayShape| {
                            x.element_count()
                                .map(|n| n as u128 * x.ty.bit_width() as u128)
                        };
                        if same_count || bytes(a) == bytes(o) {
                            Ok(())
                        } else {
                            Err(format!(
                                "bitcast from {} to {} changes both the element count and the byte size",
                                s(self.op(0)),
                                s(&self.instr.shape)
                            ))
                        }
                    }
                    _ => Ok(()),
                }
            }
            Transpose => {
                let a = self.arr(0)?;
                let perm = self.ints("dimensions")?;
                let dims = permute(&a.dims, perm).ok_or_else(|| {
                    format!(
                        "dimensions={perm:?} is not a permutation of 0..{}",
                        a.dims.len()
                    )
                })?;
                self.expect_array(a.ty, dims, a)
            }
            Reverse => {
                let a = self.arr(0)?;
                for &d in self.ints("dimensions")? {
                    if d < 0 || d as usize >= a.dims.len() {
                        return Err(format!("reverse dimension {d} is out of range"));
                    }
                }
                self.expect_array(a.ty, a.dims.clone(), a)
            }
            Slice => {
                let a = self.arr(0)?;
                let sl = instr.slice().ok_or("attribute slice={...} is missing")?;
                if sl.len() != a.dims.len() {
                    return Err(format!(
                        "slice has {} dimensions, the operand {}",
                        sl.len(),
                        a.dims.len()
                    ));
                }
                let mut dims = Vec::new();
                for (i, d) in sl.iter().enumerate() {
                    if d.stride < 1 || d.start < 0 || d.start > d.limit || d.limit > a.dims[i] {
                        return Err(format!(
                            "slice dimension {i} [{}:{}:{}] is invalid for size {}",
                            d.start, d.limit, d.stride, a.dims[i]
                        ));
                    }
                    dims.push((d.limit - d.start + d.stride - 1) / d.stride);
                }
                self.expect_array(a.ty, dims, a)
            }
            DynamicSlice => {
                let a = self.arr(0)?;
                let sizes = self.ints("dynamic_slice_sizes")?;
                if sizes.len() != a.dims.len() {
                    return Err(format!(
                        "dynamic_slice_sizes has {} entries for rank {}",
                        sizes.len(),
                        a.dims.len()
                    ));
                }
                self.check_start_indices(1, a.dims.len())?;
                for (i, (&z, &d)) in sizes.iter().zip(&a.dims).enumerate() {
                    if z < 0 || z > d {
                        return Err(format!("slice size {z} of dimension {i} exceeds {d}"));
                    }
                }
                self.expect_array(a.ty, sizes.to_vec(), a)
            }
            DynamicUpdateSlice => {
                let a = self.arr(0)?;
                let u = self.arr(1)?;
                if u.ty != a.ty || u.dims.len() != a.dims.len() {
                    return Err(format!(
                        "update {} does not fit operand {}",
                        s(self.op(1)),
                        s(self.op(0))
                    ));
                }
                for (i, (&x, &d)) in u.dims.iter().zip(&a.dims).enumerate() {
                    if x > d {
                        return Err(format!(
                            "update dimension {i} ({x}) exceeds the operand's ({d})"
                        ));
                    }
                }
                self.check_start_indices(2, a.dims.len())?;
                self.expect_array(a.ty, a.dims.clone(), a)
            }
            Concatenate => {
                if instr.operands.is_empty() {
                    return Err("concatenate needs operands".into());
                }
                let d = self.ints("dimensions")?;
                let [d] = d else {
                    return Err("concatenate takes exactly one dimension".into());
                };
                let a = self.arr(0)?;
                let d = *d;
                if d < 0 || d as usize >= a.dims.len() {
                    return Err(format!("concatenate dimension {d} is out of range"));
                }
                let mut dims = a.dims.clone();
                dims[d as usize] = 0;
                for i in 0..instr.operands.len() {
                    let b = self.arr(i)?;
                    if b.ty != a.ty || b.dims.len() != a.dims.len() {
                        return Err(format!(
                            "operand {i} {} does not match operand 0 {}",
                            s(self.op(i)),
                            s(self.op(0))
                        ));
                    }
                    for (k, (&x, &y)) in b.dims.iter().zip(&a.dims).enumerate() {
                        if k as i64 != d && x != y {
                            return Err(format!(
                                "operand {i} differs from operand 0 in dimension {k}"
                            ));
                        }
                    }
                    dims[d as usize] += b.dims[d as usize];
                }
                self.expect_array(a.ty, dims, a)
            }
            Pad => {
                let a = self.arr(0)?;
                let v = self.arr(1)?;
                if !v.dims.is_empty() || v.ty != a.ty {
                    return Err(format!(
                        "the padding value must be a {} scalar, got {}",
                        a.ty,
                        s(self.op(1))
                    ));
                }
                let p = instr.padding().ok_or("attribute padding=... is missing")?;
                if p.len() != a.dims.len() {
                    return Err(format!(
                        "padding has {} dimensions, the operand {}",
                        p.len(),
                        a.dims.len()
                    ));
                }
                let mut dims = Vec::new();
                for (i, (pd, &d)) in p.iter().zip(&a.dims).enumerate() {
                    if pd.interior < 0 {
                        return Err(format!("negative interior padding in dimension {i}"));
                    }
                    let n = d as i128
                        + pd.low as i128
                        + pd.high as i128
                        + (d.max(1) - 1) as i128 * pd.interior as i128;
                    if n < 0 || n > i64::MAX as i128 {
                        return Err(format!("padded dimension {i} has size {n}"));
                    }
                    dims.push(n as i64);
                }
                self.expect_array(a.ty, dims, a)
            }
            Iota => {
                let o = self.out()?;
                let d = self.int("iota_dimension")?;
                if d < 0 || d as usize >= o.dims.len() {
                    return Err(format!(
                        "iota_dimension={d} is out of range for rank {}",
                        o.dims.len()
                    ));
                }
                Ok(())
            }
            Tuple => self.expect(Shape::Tuple(
                instr
                    .operands
                    .iter()
                    .map(|&o| self.c.instructions[o].shape.clone())
                    .collect(),
            )),
            GetTupleElement => {
                let t = self.op(0).tuple_elements().ok_or_else(|| {
                    format!(
                        "get-tuple-element needs a tuple operand, got {}",
                        s(self.op(0))
                    )
                })?;
                let i = self.int("index")?;
                let e = usize::try_from(i)
                    .ok()
                    .and_then(|i| t.get(i))
                    .ok_or_else(|| format!("index={i} is out of range for a {}-tuple", t.len()))?;
                self.expect(e.clone())
            }
            Reduce => self.reduce(),
            ReduceWindow => self.reduce_window(),
            SelectAndScatter => self.select_and_scatter(),
            Dot => self.dot(),
            Convolution => self.convolution(),
            Gather => self.gather(),
            Scatter => self.scatter(),
            Sort => self.sort(),
            While => self.while_(),
            Conditional => self.conditional(),
            Call => {
                let f = self.comp("to_apply")?;
                self.check_call(f, "to_apply")
            }
            Fusion => {
                let f = self.comp("calls")?;
                self.check_call(f, "calls")
            }
            Map => {
                let f = self.comp("to_apply")?;
                if instr.operands.is_empty() {
                    return Err("map needs operands".into());
                }
                let a = self.arr(0)?;
                for i in 0..instr.operands.len() {
                    let b = self.arr(i)?;
                    if b.dims != a.dims {
                        return Err(format!(
                            "map operand {i} has dimensions {} unlike operand 0's {}",
                            dims_str(&b.dims),
                            dims_str(&a.dims)
                        ));
                    }
                }
                let ps = f.parameter_shapes();
                if ps.len() != instr.operands.len() {
                    return Err(format!(
                        "to_apply %{} takes {} parameters for {} operands",
                        f.name,
                        ps.len(),
                        instr.operands.len()
                    ));
                }
                let r = f
                    .root_instruction()
                    .shape
                    .as_array()
                    .filter(|r| r.dims.is_empty())
                    .ok_or_else(|| format!("to_apply %{} must return a scalar", f.name))?;
                self.expect_array(r.ty, a.dims.clone(), a)
            }
            RngBitGenerator => {
                let st = self.arr(0)?;
                let t = instr
                    .shape
                    .tuple_elements()
                    .filter(|t| t.len() == 2)
                    .ok_or("rng-bit-generator's result must be a (state, values) tuple")?;
                if !same(&t[0], &Shape::Array(st.clone())) {
                    return Err(format!(
                        "the state result {} must match the state operand {}",
                        s(&t[0]),
                        s(self.op(0))
                    ));
                }
                Ok(())
            }
            Fft => self.fft(),
            OptimizationBarrier => self.expect(self.op(0).clone()),
            GetDimensionSize => {
                let a = self.arr(0)?;
                let d = self.int("dimensions").or_else(|_| {
                    self.instr
                        .ints("dimensions")
                        .and_then(|v| v.first().copied())
                        .ok_or("attribute dimensions= is missing".to_string())
                })?;
                if d < 0 || d as usize >= a.dims.len() {
                    return Err(format!("dimension {d} is out of range"));
                }
                self.expect(Shape::scalar(PrimitiveType::S32))
            }
            TopK => {
                let a = self.arr(0)?;
                let k = self.int("k")?;
                let Some(&last) = a.dims.last() else {
                    return Err("topk needs an operand of rank >= 1".into());
                };
                if k < 0 || k > last {
                    return Err(format!("k={k} exceeds the last dimension {last}"));
                }
                let mut d = a.dims.clone();
                *d.last_mut().unwrap_or(&mut 0) = k;
                self.expect(Shape::Tuple(vec![
                    Shape::array(a.ty, d.clone()),
                    Shape::array(PrimitiveType::S32, d),
                ]))
            }
            AfterAll => self.expect(Shape::Token),
            AddDependency => self.expect(self.op(0).clone()),
            ReplicaId | PartitionId => self.expect(Shape::scalar(PrimitiveType::U32)),
            _ => Ok(()),
        }
    }

    fn check_start_indices(&self, first: usize, rank: usize) -> R {
        let n = self.instr.operands.len() - first.min(self.instr.operands.len());
        if n == rank {
            for i in first..self.instr.operands.len() {
                let x = self.arr(i)?;
                if !x.dims.is_empty() || !x.ty.is_integer() {
                    return Err(format!(
                        "start index operand {i} must be an integer scalar, got {}",
                        s(self.op(i))
                    ));
                }
            }
            Ok(())
        } else if n == 1 && self.arr(first)?.dims == [rank as i64] {
            Ok(())
        } else {
            Err(format!(
                "needs {rank} scalar start indices, got {n} operand(s)"
            ))
        }
    }

    /// The called computation takes the operands' shapes and returns the result's.
    fn check_call(&self, f: &Computation, attr: &str) -> R {
        let ps = f.parameter_shapes();
        if ps.len() != self.instr.operands.len() {
            return Err(format!(
                "{attr}=%{} takes {} parameters but the instruction has {} operands",
                f.name,
                ps.len(),
                self.instr.operands.len()
            ));
        }
        for (i, p) in ps.iter().enumerate() {
            if !same(p, self.op(i)) {
                return Err(format!(
                    "operand {i} {} does not match parameter {i} {} of %{}",
                    s(self.op(i)),
                    s(p),
                    f.name
                ));
            }
        }
        let r = &f.root_instruction().shape;
        if !same(r, &self.instr.shape) {
            return Err(format!(
                "the result {} does not match the root {} of %{}",
                s(&self.instr.shape),
                s(r),
                f.name
            ));
        }
        Ok(())
    }

    /// A reducer taking `2n` scalars of `tys` (twice) and returning those `n` scalars.
    fn check_reducer(&self, f: &Computation, tys: &[PrimitiveType]) -> R {
        let ps = f.parameter_shapes();
        let scalars: Vec<Shape> = tys.iter().map(|&t| Shape::scalar(t)).collect();
        let want: Vec<Shape> = scalars.iter().chain(scalars.iter()).cloned().collect();
        if ps.len() != want.len() || ps.iter().zip(&want).any(|(a, b)| !same(a, b)) {
            return Err(format!(
                "reducer %{} must take ({}), it takes ({})",
                f.name,
                want.iter().map(s).collect::<Vec<_>>().join(", "),
                ps.iter().map(s).collect::<Vec<_>>().join(", ")
            ));
        }
        let r = &f.root_instruction().shape;
        let ok = if tys.len() == 1 {
            same(r, &scalars[0]) || same(r, &Shape::Tuple(scalars.clone()))
        } else {
            same(r, &Shape::Tuple(scalars.clone()))
        };
        if ok {
            Ok(())
        } else {
            Err(format!(
                "reducer %{} returns {}, it must return the accumulator type(s)",
                f.name,
                s(r)
            ))
        }
    }

    fn result_of(&self, tys: &[PrimitiveType], dims: &[i64]) -> Shape {
        if tys.len() == 1 {
            Shape::array(tys[0], dims.to_vec())
        } else {
            Shape::Tuple(
                tys.iter()
                    .map(|&t| Shape::array(t, dims.to_vec()))
                    .collect(),
            )
        }
    }

    fn reduce(&self) -> R {
        let n2 = self.instr.operands.len();
        if n2 == 0 || n2 % 2 != 0 {
            return Err(format!(
                "reduce takes N inputs and N init values, got {n2} operands"
            ));
        }
        let n = n2 / 2;
        let a = self.arr(0)?;
        let mut tys = Vec::new();
        for i in 0..n {
            let x = self.arr(i)?;
            if x.dims != a.dims {
                return Err(format!(
                    "reduce input {i} {} differs in dimensions from input 0 {}",
                    s(self.op(i)),
                    s(self.op(0))
                ));
            }
            let init = self.arr(n + i)?;
            if !init.dims.is_empty() {
                return Err(format!(
                    "init value {i} must be a scalar, got {}",
                    s(self.op(n + i))
                ));
            }
            tys.push(init.ty);
        }
        let rd = self.ints("dimensions")?;
        let mut keep = vec![true; a.dims.len()];
        for &d in rd {
            match usize::try_from(d).ok().filter(|&d| d < keep.len()) {
                Some(d) if keep[d] => keep[d] = false,
                _ => return Err(format!("reduce dimension {d} is out of range or repeated")),
            }
        }
        let dims: Vec<i64> = a
            .dims
            .iter()
            .zip(&keep)
            .filter(|(_, &k)| k)
            .map(|(&d, _)| d)
            .collect();
        self.check_reducer(self.comp("to_apply")?, &tys)?;
        self.expect(self.result_of(&tys, &dims))
    }

    fn window_output(&self, dims: &[i64]) -> Result<Vec<i64>, String> {
        let w = self
            .instr
            .window()
            .ok_or("attribute window={...} is missing")?;
        if w.dims.len() != dims.len() {
            return Err(format!(
                "the window has {} dimensions, the operand {}",
                w.dims.len(),
                dims.len()
            ));
        }
        let mut out = Vec::new();
        for (i, (wd, &d)) in w.dims.iter().zip(dims).enumerate() {
            if wd.size < 0 || wd.stride < 1 || wd.base_dilation < 1 || wd.window_dilation < 1 {
                return Err(format!(
                    "window dimension {i} has a bad size, stride or dilation"
                ));
            }
            let base = if d == 0 {
                0
            } else {
                (d as i128 - 1) * wd.base_dilation as i128 + 1
            };
            let padded = base + wd.padding_low as i128 + wd.padding_high as i128;
            let win = if wd.size == 0 {
                0
            } else {
                (wd.size as i128 - 1) * wd.window_dilation as i128 + 1
            };
            let o = if padded < win {
                0
            } else {
                (padded - win) / wd.stride as i128 + 1
            };
            if o > i64::MAX as i128 {
                return Err(format!("window output dimension {i} overflows"));
            }
            out.push(o as i64);
        }
        Ok(out)
    }

    fn reduce_window(&self) -> R {
        let n2 = self.instr.operands.len();
        if n2 == 0 || n2 % 2 != 0 {
            return Err(format!(
                "reduce-window takes N inputs and N init values, got {n2} operands"
            ));
        }
        let n = n2 / 2;
        let a = self.arr(0)?;
        let mut tys = Vec::new();
        for i in 0..n {
            let x = self.arr(i)?;
            if x.dims != a.dims {
                return Err(format!("input {i} differs in dimensions from input 0"));
            }
            let init = self.arr(n + i)?;
            if !init.dims.is_empty() {
                return Err(format!("init value {i} must be a scalar"));
            }
            tys.push(init.ty);
        }
        let dims = self.window_output(&a.dims)?;
        self.check_reducer(self.comp("to_apply")?, &tys)?;
        self.expect(self.result_of(&tys, &dims))
    }

    fn select_and_scatter(&self) -> R {
        let a = self.arr(0)?;
        let src = self.arr(1)?;
        let init = self.arr(2)?;
        let wdims = self.window_output(&a.dims)?;
        if src.dims != wdims {
            return Err(format!(
                "source {} must have the window output dimensions {}",
                s(self.op(1)),
                dims_str(&wdims)
            ));
        }
        if !init.dims.is_empty() || init.ty != src.ty {
            return Err("the init value must be a scalar of the source's type".into());
        }
        let sel = self.comp("select")?;
        let ps = sel.parameter_shapes();
        let sc = Shape::scalar(a.ty);
        if ps.len() != 2
            || !same(&ps[0], &sc)
            || !same(&ps[1], &sc)
            || !same(
                &sel.root_instruction().shape,
                &Shape::scalar(PrimitiveType::Pred),
            )
        {
            return Err(format!(
                "select=%{} must map ({}, {}) to pred[]",
                sel.name, a.ty, a.ty
            ));
        }
        self.check_reducer(self.comp("scatter")?, &[src.ty])?;
        self.expect_array(a.ty, a.dims.clone(), a)
    }

    fn dot(&self) -> R {
        let l = self.arr(0)?;
        let r = self.arr(1)?;
        let o = self.out()?;
        let g = |n| self.instr.ints(n).unwrap_or(&[]);
        let (lb, rb, lc, rc) = (
            g("lhs_batch_dims"),
            g("rhs_batch_dims"),
            g("lhs_contracting_dims"),
            g("rhs_contracting_dims"),
        );
        if lb.len() != rb.len() || lc.len() != rc.len() {
            return Err(
                "lhs and rhs list different numbers of batch or contracting dimensions".into(),
            );
        }
        let get = |a: &ArrayShape, d: i64, side: &str| -> Result<i64, String> {
            usize::try_from(d)
                .ok()
                .and_then(|d| a.dims.get(d).copied())
                .ok_or_else(|| format!("{side} dimension {d} is out of range"))
        };
        for (&x, &y) in lb.iter().zip(rb).chain(lc.iter().zip(rc)) {
            let (dx, dy) = (get(l, x, "lhs")?, get(r, y, "rhs")?);
            if dx != dy {
                return Err(format!(
                    "lhs dimension {x} ({dx}) and rhs dimension {y} ({dy}) must be equal"
                ));
            }
        }
        let mut dims: Vec<i64> = lb.iter().map(|&d| l.dims[d as usize]).collect();
        let free = |a: &ArrayShape, b: &[i64], c: &[i64]| -> Vec<i64> {
            (0..a.dims.len() as i64)
                .filter(|d| !b.contains(d) && !c.contains(d))
                .map(|d| a.dims[d as usize])
                .collect()
        };
        dims.extend(free(l, lb, lc));
        dims.extend(free(r, rb, rc));
        self.expect_array(o.ty, dims, o)
    }

    fn convolution(&self) -> R {
        let x = self.arr(0)?;
        let k = self.arr(1)?;
        let o = self.out()?;
        let d = self
            .instr
            .conv_dims()
            .ok_or("attribute dim_labels=... is missing")?;
        let fgc = self.instr.int("feature_group_count").unwrap_or(1);
        let bgc = self.instr.int("batch_group_count").unwrap_or(1);
        let nsp = d.input_spatial.len();
        if x.dims.len() != nsp + 2 || k.dims.len() != nsp + 2 || o.dims.len() != nsp + 2 {
            return Err(format!("dim_labels has {nsp} spatial dimensions; input, kernel and output must have rank {}", nsp + 2));
        }
        if fgc < 1 || bgc < 1 {
            return Err("feature_group_count and batch_group_count must be >= 1".into());
        }
        let at = |a: &ArrayShape, i: i64| a.dims.get(i as usize).copied().unwrap_or(-1);
        let in_f = at(x, d.input_feature);
        let k_in = at(k, d.kernel_input_feature);
        let k_out = at(k, d.kernel_output_feature);
        if in_f != k_in * fgc {
            return Err(format!("input feature size {in_f} must equal kernel input features {k_in} x feature_group_count {fgc}"));
        }
        let batch = at(x, d.input_batch);
        if batch % bgc != 0 {
            return Err(format!(
                "batch {batch} is not a multiple of batch_group_count {bgc}"
            ));
        }
        let spatial: Vec<i64> = d.input_spatial.iter().map(|&i| at(x, i)).collect();
        // Without spatial dimensions the window is empty, and XLA (which prints no `window=`
        // for an empty window) accepts the attribute's absence.
        let out_sp = match self.instr.window() {
            None if spatial.is_empty() => Vec::new(),
            None => return Err("attribute window={...} is missing".into()),
            Some(w) => {
                for (i, (wd, &ks)) in w.dims.iter().zip(&d.kernel_spatial).enumerate() {
                    if wd.size != at(k, ks) {
                        return Err(format!(
                            "window size {} of spatial dimension {i} differs from the kernel's {}",
                            wd.size,
                            at(k, ks)
                        ));
                    }
                }
                self.window_output(&spatial)?
            }
        };
        let mut dims = vec![0i64; nsp + 2];
        let mut put = |i: i64, v: i64| {
            if let Some(s) = dims.get_mut(i as usize) {
                *s = v;
            }
        };
        put(d.output_batch, batch / bgc);
        put(d.output_feature, k_out);
        for (&i, &v) in d.output_spatial.iter().zip(&out_sp) {
            put(i, v);
        }
        self.expect_array(o.ty, dims, o)
    }

    fn gather(&self) -> R {
        let a = self.arr(0)?;
        let idx = self.arr(1)?;
        let offset = self.ints("offset_dims")?;
        let collapsed = self.ints("collapsed_slice_dims")?;
        let start_map = self.ints("start_index_map")?;
        let ivd = self.int("index_vector_dim")?;
        let sizes = self.ints("slice_sizes")?;
        let obatch = self.instr.ints("operand_batching_dims").unwrap_or(&[]);
        if sizes.len() != a.dims.len() {
            return Err(format!(
                "slice_sizes has {} entries for operand rank {}",
                sizes.len(),
                a.dims.len()
            ));
        }
        for (i, (&z, &d)) in sizes.iter().zip(&a.dims).enumerate() {
            if z < 0 || z > d {
                return Err(format!("slice size {z} of dimension {i} exceeds {d}"));
            }
        }
        if ivd < 0 || ivd as usize > idx.dims.len() {
            return Err(format!("index_vector_dim={ivd} is out of range"));
        }
        let index_len = if (ivd as usize) < idx.dims.len() {
            idx.dims[ivd as usize]
        } else {
            1
        };
        if index_len != start_map.len() as i64 {
            return Err(format!(
                "start_index_map has {} entries, the index vector {}",
                start_map.len(),
                index_len
            ));
        }
        let window: Vec<i64> = (0..a.dims.len() as i64)
            .filter(|d| !collapsed.contains(d) && !obatch.contains(d))
            .map(|d| sizes[d as usize])
            .collect();
        if window.len() != offset.len() {
            return Err(format!(
                "offset_dims has {} entries but {} slice dimensions remain",
                offset.len(),
                window.len()
            ));
        }
        let batch: Vec<i64> = idx
            .dims
            .iter()
            .enumerate()
            .filter(|(i, _)| *i as i64 != ivd)
            .map(|(_, &d)| d)
            .collect();
        let rank = batch.len() + offset.len();
        let (mut wi, mut bi) = (0, 0);
        let mut dims = Vec::with_capacity(rank);
        for i in 0..rank as i64 {
            if offset.contains(&i) {
                dims.push(window[wi]);
                wi += 1;
            } else {
                let Some(&b) = batch.get(bi) else {
                    return Err("offset_dims do not fit the result rank".into());
                };
                dims.push(b);
                bi += 1;
            }
        }
        let o = self.out()?;
        self.expect_array(a.ty, dims, o)
    }

    fn scatter(&self) -> R {
        let n3 = self.instr.operands.len();
        if n3 < 3 || (n3 - 1) % 2 != 0 {
            return Err(format!(
                "scatter takes N operands, indices and N updates, got {n3}"
            ));
        }
        let n = (n3 - 1) / 2;
        let a = self.arr(0)?;
        let idx = self.arr(n)?;
        let uwd = self.ints("update_window_dims")?;
        let ivd = self.int("index_vector_dim")?;
        if ivd < 0 || ivd as usize > idx.dims.len() {
            return Err(format!("index_vector_dim={ivd} is out of range"));
        }
        let scatter_rank = idx.dims.len() - usize::from((ivd as usize) < idx.dims.len());
        let mut tys = Vec::new();
        for i in 0..n {
            let x = self.arr(i)?;
            if x.dims != a.dims {
                return Err(format!(
                    "scatter operand {i} differs in dimensions from operand 0"
                ));
            }
            let u = self.arr(n + 1 + i)?;
            if u.dims.len() != scatter_rank + uwd.len() {
                return Err(format!(
                    "update {i} {} must have rank {} (scatter dims + update_window_dims)",
                    s(self.op(n + 1 + i)),
                    scatter_rank + uwd.len()
                ));
            }
            tys.push(x.ty);
        }
        self.check_reducer(self.comp("to_apply")?, &tys)?;
        self.expect(self.result_of(&tys, &a.dims))
    }

    fn sort(&self) -> R {
        if self.instr.operands.is_empty() {
            return Err("sort needs operands".into());
        }
        let a = self.arr(0)?;
        let mut shapes = Vec::new();
        for i in 0..self.instr.operands.len() {
            let x = self.arr(i)?;
            if x.dims != a.dims {
                return Err(format!(
                    "sort operand {i} differs in dimensions from operand 0"
                ));
            }
            shapes.push(Shape::array(x.ty, x.dims.clone()));
        }
        let d = self.ints("dimensions")?;
        if d.len() != 1 || d[0] < 0 || d[0] as usize >= a.dims.len().max(1) {
            return Err(format!(
                "sort dimensions={d:?} must name one dimension in range"
            ));
        }
        let cmp = self.comp("to_apply")?;
        let ps = cmp.parameter_shapes();
        if ps.len() != 2 * shapes.len() {
            return Err(format!(
                "comparator %{} takes {} parameters, needs {}",
                cmp.name,
                ps.len(),
                2 * shapes.len()
            ));
        }
        if !same(
            &cmp.root_instruction().shape,
            &Shape::scalar(PrimitiveType::Pred),
        ) {
            return Err(format!("comparator %{} must return pred[]", cmp.name));
        }
        let want = if shapes.len() == 1 {
            shapes.pop().unwrap_or(Shape::Token)
        } else {
            Shape::Tuple(shapes)
        };
        self.expect(want)
    }

    fn while_(&self) -> R {
        let body = self.comp("body")?;
        let cond = self.comp("condition")?;
        let init = self.op(0);
        let bp = body.parameter_shapes();
        let cp = cond.parameter_shapes();
        if bp.len() != 1 || !same(&bp[0], init) {
            return Err(format!(
                "body %{} must take the init shape {}",
                body.name,
                s(init)
            ));
        }
        if cp.len() != 1 || !same(&cp[0], init) {
            return Err(format!(
                "condition %{} must take the init shape {}",
                cond.name,
                s(init)
            ));
        }
        if !same(&body.root_instruction().shape, init) {
            return Err(format!(
                "body %{} must return the init shape {}, it returns {}",
                body.name,
                s(init),
                s(&body.root_instruction().shape)
            ));
        }
        if !same(
            &cond.root_instruction().shape,
            &Shape::scalar(PrimitiveType::Pred),
        ) {
            return Err(format!("condition %{} must return pred[]", cond.name));
        }
        self.expect(init.clone())
    }

    fn conditional(&self) -> R {
        let p = self.arr(0)?;
        let branches: Vec<CompId> = if p.ty == PrimitiveType::Pred {
            let t = self
                .instr
                .comp("true_computation")
                .ok_or("true_computation= is missing")?;
            let f = self
                .instr
                .comp("false_computation")
                .ok_or("false_computation= is missing")?;
            vec![t, f]
        } else if p.ty == PrimitiveType::S32 {
            self.instr
                .comps("branch_computations")
                .ok_or("branch_computations= is missing")?
                .to_vec()
        } else {
            return Err(format!(
                "the branch selector must be pred[] or s32[], got {}",
                s(self.op(0))
            ));
        };
        if !p.dims.is_empty() {
            return Err("the branch selector must be a scalar".into());
        }
        if self.instr.operands.len() != branches.len() + 1 {
            return Err(format!(
                "{} branches need {} operands, got {}",
                branches.len(),
                branches.len() + 1,
                self.instr.operands.len()
            ));
        }
        for (i, &b) in branches.iter().enumerate() {
            let f = self
                .m
                .computations
                .get(b)
                .ok_or("a branch computation does not exist")?;
            let ps = f.parameter_shapes();
            if ps.len() != 1 || !same(&ps[0], self.op(i + 1)) {
                return Err(format!(
                    "branch %{} must take operand {} {}",
                    f.name,
                    i + 1,
                    s(self.op(i + 1))
                ));
            }
            if !same(&f.root_instruction().shape, &self.instr.shape) {
                return Err(format!(
                    "branch %{} returns {}, the conditional {}",
                    f.name,
                    s(&f.root_instruction().shape),
                    s(&self.instr.shape)
                ));
            }
        }
        Ok(())
    }

    fn fft(&self) -> R {
        let a = self.arr(0)?;
        let len = self.ints("fft_length")?;
        let ty = self.instr.ident("fft_type").ok_or("fft_type= is missing")?;
        let n = len.len();
        if n == 0 || n > 3 || n > a.dims.len() {
            return Err(format!(
                "fft_length={len:?} must have 1 to 3 entries, at most the rank"
            ));
        }
        let mut dims = a.dims.clone();
        let r = dims.len();
        let out_ty = match ty {
            "FFT" | "IFFT" => {
                if !a.ty.is_complex() {
                    return Err(format!("{ty} needs a complex operand"));
                }
                a.ty
            }
            "RFFT" => {
                if dims[r - n..] != *len {
                    return Err(format!(
                        "RFFT's last dimensions must equal fft_length {len:?}"
                    ));
                }
                dims[r - 1] = len[n - 1] / 2 + 1;
                match a.ty {
                    PrimitiveType::F32 => PrimitiveType::C64,
                    PrimitiveType::F64 => PrimitiveType::C128,
                    t => return Err(format!("RFFT needs f32 or f64, got {t}")),
                }
            }
            "IRFFT" => {
                dims[r - n..].copy_from_slice(len);
                match a.ty {
                    PrimitiveType::C64 => PrimitiveType::F32,
                    PrimitiveType::C128 => PrimitiveType::F64,
                    t => return Err(format!("IRFFT needs c64 or c128, got {t}")),
                }
            }
            other => return Err(format!("unknown fft_type {other}")),
        };
        self.expect_array(out_ty, dims, a)
    }
}

fn permute(dims: &[i64], perm: &[i64]) -> Option<Vec<i64>> {
    if perm.len() != dims.len() {
        return None;
    }
    let mut seen = vec![false; dims.len()];
    let mut out = Vec::with_capacity(dims.len());
    for &p in perm {
        let p = usize::try_from(p).ok().filter(|&p| p < dims.len())?;
        if std::mem::replace(&mut seen[p], true) {
            return None;
        }
        out.push(dims[p]);
    }
    Some(out)
}

fn check_shape_valid(s: &Shape) -> Result<(), String> {
    match s {
        Shape::Array(a) => {
            if !a.ty.is_array_type() {
                return Err(format!("{} is not an array element type", a.ty));
            }
            if a.dynamic.len() != a.dims.len() {
                return Err("dynamic flags do not match the rank".into());
            }
            for (i, &d) in a.dims.iter().enumerate() {
                if d < 0 && !(d == UNBOUNDED_SIZE && a.dynamic[i]) {
                    return Err(format!("dimension {i} is negative ({d})"));
                }
            }
            if let Some(l) = &a.layout {
                if !l.minor_to_major.is_empty() && permute(&a.dims, &l.minor_to_major).is_none() {
                    return Err(format!(
                        "layout {:?} is not a permutation of the dimensions",
                        l.minor_to_major
                    ));
                }
            }
            Ok(())
        }
        Shape::Tuple(t) => t.iter().try_for_each(check_shape_valid),
        Shape::Token | Shape::Opaque => Ok(()),
    }
}

fn check_literal_shape(l: &Literal, shape: &Shape) -> R {
    match (l, shape) {
        (Literal::Array(a), Shape::Array(s)) => {
            if a.ty != s.ty || a.dims != s.dims {
                Err(format!(
                    "the constant's value is {}{} but its shape is {}",
                    a.ty,
                    dims_str(&a.dims),
                    crate::print::shape_to_string(shape)
                ))
            } else {
                Ok(())
            }
        }
        (Literal::Tuple(ls), Shape::Tuple(ss)) if ls.len() == ss.len() => ls
            .iter()
            .zip(ss)
            .try_for_each(|(l, s)| check_literal_shape(l, s)),
        (Literal::Token, Shape::Token) => Ok(()),
        _ => Err(format!(
            "the constant's value does not have its shape {}",
            crate::print::shape_to_string(shape)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_module;

    fn module(body: &str) -> Module {
        let text = format!(
            "HloModule t\n\n%add (x: f32[], y: f32[]) -> f32[] {{\n  %x = f32[] parameter(0)\n  %y = f32[] parameter(1)\n  ROOT %s = f32[] add(%x, %y)\n}}\n\n%lt (a: f32[], b: f32[]) -> pred[] {{\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n  ROOT %c = pred[] compare(%a, %b), direction=LT\n}}\n\nENTRY %main {{\n{body}\n}}\n"
        );
        parse_module(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    fn ok(body: &str) {
        let m = module(body);
        if let Err(e) = verify_module(&m) {
            panic!("expected valid, got: {e}\n{body}");
        }
    }

    /// The error names the entry computation, the instruction, and contains `needle`.
    fn bad(body: &str, instr: &str, needle: &str) {
        let m = module(body);
        match verify_module(&m) {
            Ok(()) => panic!("expected an error about {needle:?} for:\n{body}"),
            Err(e) => {
                assert_eq!(e.computation, "main", "{e}");
                assert_eq!(e.instruction.as_deref(), Some(instr), "{e}");
                assert!(e.message.contains(needle), "{e} lacks {needle:?}");
            }
        }
    }

    #[test]
    fn elementwise_rules() {
        ok("  %p = f32[2,3] parameter(0)\n  %q = f32[2,3] parameter(1)\n  %a = f32[2,3] add(%p, %q)\n  %c = pred[2,3] compare(%p, %q), direction=GT\n  %n = f32[2,3] select(%c, %p, %q)\n  ROOT %r = s32[2,3] convert(%n)");
        bad("  %p = f32[4] parameter(0)\n  %q = f32[5] parameter(1)\n  ROOT %a = f32[4] add(%p, %q)", "a", "same shape");
        bad(
            "  %p = f32[4] parameter(0)\n  ROOT %a = f32[5] negate(%p)",
            "a",
            "should have shape f32[4]",
        );
        bad(
            "  %p = f32[4] parameter(0)\n  ROOT %a = f32[4] compare(%p, %p), direction=EQ",
            "a",
            "pred[4]",
        );
        bad(
            "  %p = f32[4] parameter(0)\n  ROOT %a = f32[4] and(%p, %p)",
            "a",
            "pred or integers",
        );
        ok("  %p = c64[4] parameter(0)\n  ROOT %a = f32[4] abs(%p)");
        ok("  %p = f32[] parameter(0)\n  %x = f32[4] parameter(1)\n  ROOT %c = f32[4] clamp(%p, %x, %p)");
    }

    #[test]
    fn bitcast_convert_and_bitcast_rules() {
        ok("  %p = f32[4] parameter(0)\n  ROOT %b = u8[4,4] bitcast-convert(%p)");
        ok("  %p = u8[4,4] parameter(0)\n  ROOT %b = f32[4] bitcast-convert(%p)");
        bad(
            "  %p = u8[4,3] parameter(0)\n  ROOT %b = f32[4] bitcast-convert(%p)",
            "b",
            "last dimension of 4",
        );
        ok("  %p = f32[2,8]{1,0} parameter(0)\n  ROOT %b = f32[16]{0} bitcast(%p)");
        ok("  %p = f32[4] parameter(0)\n  ROOT %b = u8[16] bitcast(%p)");
        bad(
            "  %p = f32[4] parameter(0)\n  ROOT %b = f32[5] bitcast(%p)",
            "b",
            "element count",
        );
    }

    #[test]
    fn data_movement_rules() {
        ok("  %p = f32[3] parameter(0)\n  ROOT %b = f32[2,3] broadcast(%p), dimensions={1}");
        bad(
            "  %p = f32[3] parameter(0)\n  ROOT %b = f32[3,2] broadcast(%p), dimensions={1}",
            "b",
            "does not match result dimension 1",
        );
        ok("  %p = f32[2,3] parameter(0)\n  ROOT %t = f32[3,2] transpose(%p), dimensions={1,0}");
        bad(
            "  %p = f32[2,3] parameter(0)\n  ROOT %t = f32[3,2] transpose(%p), dimensions={1,1}",
            "t",
            "not a permutation",
        );
        bad(
            "  %p = f32[4] parameter(0)\n  ROOT %r = f32[5] reshape(%p)",
            "r",
            "element count",
        );
        ok("  %p = f32[10] parameter(0)\n  ROOT %s = f32[3] slice(%p), slice={[1:8:3]}");
        bad(
            "  %p = f32[10] parameter(0)\n  ROOT %s = f32[3] slice(%p), slice={[1:11]}",
            "s",
            "invalid for size 10",
        );
        ok("  %p = f32[4,4] parameter(0)\n  %i = s32[] parameter(1)\n  ROOT %d = f32[2,4] dynamic-slice(%p, %i, %i), dynamic_slice_sizes={2,4}");
        bad("  %p = f32[4,4] parameter(0)\n  %i = s32[] parameter(1)\n  ROOT %d = f32[2,4] dynamic-slice(%p, %i), dynamic_slice_sizes={2,4}", "d", "start indices");
        ok("  %p = f32[4,4] parameter(0)\n  %u = f32[1,4] parameter(1)\n  %i = s32[] parameter(2)\n  ROOT %d = f32[4,4] dynamic-update-slice(%p, %u, %i, %i)");
        ok("  %p = f32[2,3] parameter(0)\n  %q = f32[2,5] parameter(1)\n  ROOT %c = f32[2,8] concatenate(%p, %q), dimensions={1}");
        bad("  %p = f32[2,3] parameter(0)\n  %q = f32[3,5] parameter(1)\n  ROOT %c = f32[2,8] concatenate(%p, %q), dimensions={1}", "c", "dimension 0");
        ok("  %p = f32[3] parameter(0)\n  %z = f32[] constant(0)\n  ROOT %q = f32[8] pad(%p, %z), padding=1_2_1");
        bad("  %p = f32[3] parameter(0)\n  %z = f32[] constant(0)\n  ROOT %q = f32[9] pad(%p, %z), padding=1_2_1", "q", "f32[8]");
        ok("  ROOT %i = s32[3,4] iota(), iota_dimension=1");
        bad(
            "  ROOT %i = s32[3,4] iota(), iota_dimension=2",
            "i",
            "out of range",
        );
    }

    #[test]
    fn reductions_dot_convolution_gather_scatter() {
        ok("  %p = f32[2,3] parameter(0)\n  %z = f32[] constant(0)\n  ROOT %r = f32[2] reduce(%p, %z), dimensions={1}, to_apply=%add");
        bad("  %p = f32[2,3] parameter(0)\n  %z = f32[] constant(0)\n  ROOT %r = f32[3] reduce(%p, %z), dimensions={1}, to_apply=%add", "r", "f32[2]");
        bad("  %p = f32[2,3] parameter(0)\n  %z = f32[] constant(0)\n  ROOT %r = f32[2] reduce(%p, %z), dimensions={1}, to_apply=%lt", "r", "reducer %lt");
        ok("  %p = f32[8,8] parameter(0)\n  %z = f32[] constant(0)\n  ROOT %r = f32[4,4] reduce-window(%p, %z), window={size=2x2 stride=2x2}, to_apply=%add");
        bad("  %p = f32[8,8] parameter(0)\n  %z = f32[] constant(0)\n  ROOT %r = f32[4,5] reduce-window(%p, %z), window={size=2x2 stride=2x2}, to_apply=%add", "r", "f32[4,4]");
        ok("  %a = f32[5,2,3] parameter(0)\n  %b = f32[5,3,7] parameter(1)\n  ROOT %d = f32[5,2,7] dot(%a, %b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}");
        bad("  %a = f32[2,3] parameter(0)\n  %b = f32[4,7] parameter(1)\n  ROOT %d = f32[2,7] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}", "d", "must be equal");
        ok("  %x = f32[1,8,8,3] parameter(0)\n  %k = f32[3,3,3,4] parameter(1)\n  ROOT %c = f32[1,4,4,4] convolution(%x, %k), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f");
        bad("  %x = f32[1,8,8,3] parameter(0)\n  %k = f32[3,3,2,4] parameter(1)\n  ROOT %c = f32[1,4,4,4] convolution(%x, %k), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f", "c", "feature_group_count");
        // No spatial dimensions: `window` may be absent (XLA prints none for an empty window).
        ok("  %x = f32[2,3] parameter(0)\n  %k = f32[3,5] parameter(1)\n  ROOT %c = f32[2,5] convolution(%x, %k), dim_labels=bf_io->bf");
        ok("  %x = f32[2,3] parameter(0)\n  %k = f32[3,5] parameter(1)\n  ROOT %c = f32[2,5] convolution(%x, %k), window={}, dim_labels=bf_io->bf");
        bad("  %x = f32[2,3] parameter(0)\n  %k = f32[3,5] parameter(1)\n  ROOT %c = f32[2,4] convolution(%x, %k), dim_labels=bf_io->bf", "c", "f32[2,5]");
        // With spatial dimensions it stays required.
        bad("  %x = f32[1,8,3] parameter(0)\n  %k = f32[3,3,4] parameter(1)\n  ROOT %c = f32[1,6,4] convolution(%x, %k), dim_labels=b0f_0io->b0f", "c", "window");
        ok("  %o = f32[5,4] parameter(0)\n  %i = s32[3,1] parameter(1)\n  ROOT %g = f32[3,4] gather(%o, %i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}");
        bad("  %o = f32[5,4] parameter(0)\n  %i = s32[3,1] parameter(1)\n  ROOT %g = f32[3,5] gather(%o, %i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}", "g", "f32[3,4]");
        ok("  %o = f32[5,4] parameter(0)\n  %i = s32[3,1] parameter(1)\n  %u = f32[3,4] parameter(2)\n  ROOT %s = f32[5,4] scatter(%o, %i, %u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add");
        ok("  %k = f32[4,5] parameter(0)\n  ROOT %s = f32[4,5] sort(%k), dimensions={1}, to_apply=%lt");
        bad("  %k = f32[4,5] parameter(0)\n  ROOT %s = f32[4,5] sort(%k), dimensions={1}, to_apply=%add", "s", "must return pred[]");
    }

    #[test]
    fn control_flow_and_calls() {
        let m = parse_module("HloModule w\n%c (p: (s32[], f32[])) -> pred[] {\n  %p = (s32[], f32[]) parameter(0)\n  %i = s32[] get-tuple-element(%p), index=0\n  %n = s32[] constant(3)\n  ROOT %lt = pred[] compare(%i, %n), direction=LT\n}\n%b (p: (s32[], f32[])) -> (s32[], f32[]) {\n  %p = (s32[], f32[]) parameter(0)\n  %i = s32[] get-tuple-element(%p), index=0\n  %x = f32[] get-tuple-element(%p), index=1\n  ROOT %t = (s32[], f32[]) tuple(%i, %x)\n}\nENTRY %e (a: (s32[], f32[])) -> (s32[], f32[]) {\n  %a = (s32[], f32[]) parameter(0)\n  ROOT %w = (s32[], f32[]) while(%a), condition=%c, body=%b\n}\n").unwrap();
        verify_module(&m).unwrap();
        let mut broken = m.clone();
        broken.computations[1].root = 1; // body now returns s32[]
        let e = verify_module(&broken).unwrap_err();
        assert!(
            e.to_string().contains("body %b must return the init shape"),
            "{e}"
        );
        // fusion parameter/root shapes must match operands/result.
        let m = parse_module("HloModule f\n%fused (p: f32[4]) -> f32[4] {\n  %p = f32[4] parameter(0)\n  ROOT %n = f32[4] negate(%p)\n}\nENTRY %e (a: f32[4]) -> f32[4] {\n  %a = f32[4]{0} parameter(0)\n  ROOT %f = f32[4]{0} fusion(%a), kind=kLoop, calls=%fused\n}\n").unwrap();
        verify_module(&m).unwrap();
        let m = parse_module("HloModule f\n%fused (p: f32[5]) -> f32[5] {\n  %p = f32[5] parameter(0)\n  ROOT %n = f32[5] negate(%p)\n}\nENTRY %e (a: f32[4]) -> f32[4] {\n  %a = f32[4]{0} parameter(0)\n  ROOT %f = f32[4]{0} fusion(%a), kind=kLoop, calls=%fused\n}\n").unwrap();
        let e = verify_module(&m).unwrap_err();
        assert_eq!(
            (e.computation.as_str(), e.instruction.as_deref()),
            ("e", Some("f"))
        );
        assert!(e.message.contains("does not match parameter 0"), "{e}");
        // Recursion through call is rejected.
        let m = parse_module("HloModule r\n%a (p: f32[]) -> f32[] {\n  %p = f32[] parameter(0)\n  ROOT %c = f32[] call(%p), to_apply=%a\n}\nENTRY %e (x: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n  ROOT %c = f32[] call(%x), to_apply=%a\n}\n").unwrap();
        let e = verify_module(&m).unwrap_err();
        assert!(e.message.contains("recursively"), "{e}");
        // Conditional with s32 index and branch computations.
        let m = parse_module("HloModule c\n%b0 (p: f32[]) -> f32[] {\n  %p = f32[] parameter(0)\n  ROOT %n = f32[] negate(%p)\n}\n%b1 (p: f32[]) -> f32[] {\n  ROOT %p = f32[] parameter(0)\n}\nENTRY %e (i: s32[], x: f32[]) -> f32[] {\n  %i = s32[] parameter(0)\n  %x = f32[] parameter(1)\n  ROOT %c = f32[] conditional(%i, %x, %x), branch_computations={%b0, %b1}\n}\n").unwrap();
        verify_module(&m).unwrap();
    }

    #[test]
    fn parameter_numbering_and_tuple_rules() {
        let m = module("  %p = f32[] parameter(1)\n  ROOT %n = f32[] negate(%p)");
        let e = verify_module(&m).unwrap_err();
        assert_eq!(e.instruction, None);
        assert!(e.message.contains("parameter numbers must be 0..1"), "{e}");
        bad(
            "  %p = f32[4] parameter(0)\n  ROOT %g = f32[4] get-tuple-element(%p), index=0",
            "g",
            "tuple operand",
        );
        bad(
            "  %p = (f32[4]) parameter(0)\n  ROOT %g = f32[4] get-tuple-element(%p), index=1",
            "g",
            "out of range for a 1-tuple",
        );
        bad(
            "  %p = f32[4] parameter(0)\n  ROOT %t = (f32[4], f32[]) tuple(%p, %p)",
            "t",
            "(f32[4], f32[4])",
        );
        // A constant whose value does not have its shape (only constructible in memory).
        let mut m = module("  ROOT %k = f32[2] constant({1, 2})");
        m.computations[2].instructions[0].shape = Shape::array(PrimitiveType::F32, vec![3]);
        let e = verify_module(&m).unwrap_err();
        assert!(e.message.contains("the constant's value is f32[2]"), "{e}");
        // Operands must be defined before their users.
        let mut m = module("  %p = f32[] parameter(0)\n  ROOT %n = f32[] negate(%p)");
        m.computations[2].instructions[0].operands = vec![];
        m.computations[2].instructions[1].operands = vec![1];
        let e = verify_module(&m).unwrap_err();
        assert!(e.message.contains("not defined before"), "{e}");
    }
}

//! The op families' builders: each picks operands from the typed pool (or makes them), chooses
//! attributes within XLA's shape rules, and appends a valid instruction.
//!
//! What an opcode accepts and returns comes from `hlo`'s opcode table: the element types of
//! elementwise operands ([`Opcode::accepts_element_type`]) and their result type
//! ([`Opcode::elementwise_result_type`]). The lists here only say which opcodes the generator
//! builds, in which order (the order is part of what a seed means), and where the generator
//! restricts the types further than XLA's shape inference does.
//!
//! A builder returns `None` when the configuration leaves it nothing to build with (e.g. no
//! float type enabled for `exponential`); the caller then tries another one.

use crate::config::OpFamily;
use crate::gen::{convertible, product, Comp, Gen};
use hlo::{
    ArrayShape, Attr, CompId, ConvDimLabels, InstrId, Opcode, PaddingDim, PrimitiveType, Scalar,
    Shape, SliceDim, Window, WindowDim,
};
use PrimitiveType::*;

type Builder = fn(&mut Gen, &mut Comp) -> Option<InstrId>;

fn table(f: OpFamily) -> &'static [Builder] {
    match f {
        OpFamily::Unary => &[unary],
        OpFamily::Binary => &[binary],
        OpFamily::Bitwise => &[bitwise_unary, bitwise_binary],
        OpFamily::CompareSelect => &[compare, select, clamp],
        OpFamily::Convert => &[convert, bitcast_convert, reduce_precision],
        OpFamily::Complex => &[complex, real_imag],
        OpFamily::Shape => &[broadcast, reshape, transpose, reverse, iota, constant],
        OpFamily::Slicing => &[slice, dynamic_slice, dynamic_update_slice, concatenate, pad],
        OpFamily::Reduction => &[reduce, reduce_window, select_and_scatter],
        OpFamily::Contraction => &[dot, convolution],
        OpFamily::GatherScatter => &[gather, scatter],
        OpFamily::Sort => &[sort],
        OpFamily::ControlFlow => &[while_loop, conditional, call, map],
        OpFamily::Tuple => &[tuple_gte, opt_barrier],
    }
}

fn elementwise_family(f: OpFamily) -> bool {
    matches!(
        f,
        OpFamily::Unary
            | OpFamily::Binary
            | OpFamily::Bitwise
            | OpFamily::CompareSelect
            | OpFamily::Convert
            | OpFamily::Complex
    )
}

/// Appends one random instruction (and whatever operands it needs) to `c`.
pub(crate) fn random_op(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let fams: Vec<(OpFamily, u32)> = g
        .families
        .iter()
        .copied()
        .filter(|(f, _)| !c.scalar_only || elementwise_family(*f))
        .filter(|(f, _)| *f != OpFamily::ControlFlow || c.depth < g.cfg.max_nesting)
        .collect();
    let weights: Vec<u32> = fams.iter().map(|(_, w)| *w).collect();
    let fam = fams[g.weighted(&weights)?].0;
    let b = g.pick(table(fam));
    b(g, c)
}

// ----- type predicates -----

fn any(_: PrimitiveType) -> bool {
    true
}
fn fl(t: PrimitiveType) -> bool {
    t.is_float()
}
fn fc(t: PrimitiveType) -> bool {
    t.is_float() || t.is_complex()
}
fn num(t: PrimitiveType) -> bool {
    t.is_integer() || fc(t)
}
fn nonc(t: PrimitiveType) -> bool {
    t.is_integer() || t.is_float()
}

// ----- operand helpers -----

/// A pool value of an arithmetic type satisfying `pred` (or a fresh one).
fn ew_operand(g: &mut Gen, c: &mut Comp, pred: impl Fn(PrimitiveType) -> bool) -> Option<InstrId> {
    let tys: Vec<PrimitiveType> = g.arith.iter().copied().filter(|&t| pred(t)).collect();
    if tys.is_empty() {
        return None;
    }
    if !g.coin(20) {
        if let Some(v) = g.pool_pick(c, |s| tys.contains(&s.ty)) {
            return Some(v);
        }
    }
    let ty = g.pick(&tys);
    let rank = if c.scalar_only { 0 } else { g.fresh_rank() };
    let dims = g.fresh_dims(rank);
    Some(g.value(c, ty, &dims))
}

/// A pool value of any configured type with rank >= `min_rank` (or a fresh one).
fn any_operand(g: &mut Gen, c: &mut Comp, min_rank: usize, arith_only: bool) -> InstrId {
    let tys: Vec<PrimitiveType> = if arith_only {
        g.arith.clone()
    } else {
        g.types.clone()
    };
    let tys = if tys.is_empty() { vec![F32] } else { tys };
    if !g.coin(15) {
        if let Some(v) = g.pool_pick(c, |s| s.rank() >= min_rank && tys.contains(&s.ty)) {
            return v;
        }
    }
    let ty = g.pick(&tys);
    let lo = min_rank as i64;
    let rank = g.range(lo, (g.cfg.max_rank as i64).max(lo)) as usize;
    let dims = g.fresh_dims(rank);
    g.value(c, ty, &dims)
}

fn shape_of(g: &Gen, c: &Comp, id: InstrId) -> ArrayShape {
    g.arr(c, id).clone()
}

pub(crate) fn arr(ty: PrimitiveType, dims: Vec<i64>) -> Shape {
    Shape::array(ty, dims)
}

pub(crate) fn ints(v: &[usize]) -> Attr {
    Attr::Ints(v.iter().map(|&x| x as i64).collect())
}

// ----- elementwise -----

/// A generator restriction on top of the element types `op` accepts (`hlo`'s table).
type Restriction = fn(PrimitiveType) -> bool;

/// The element types the generator uses for elementwise `op`: those XLA accepts, restricted.
fn ew_types(op: Opcode, restriction: Restriction) -> impl Fn(PrimitiveType) -> bool {
    move |t| op.accepts_element_type(t) && restriction(t)
}

/// The result element type of elementwise `op` on `t` (`copy`: `t`).
fn ew_result(op: Opcode, t: PrimitiveType) -> Option<PrimitiveType> {
    if op == Opcode::Copy {
        Some(t)
    } else {
        op.elementwise_result_type(t).ok()
    }
}

/// The unary ops, in pick order, each with the generator's own restriction (`any`: none; cbrt
/// is built on real floats only).
const UNARY: [(Opcode, Restriction); 22] = [
    (Opcode::Abs, any),
    (Opcode::Negate, any),
    (Opcode::Sign, any),
    (Opcode::Floor, any),
    (Opcode::Ceil, any),
    (Opcode::RoundNearestAfz, any),
    (Opcode::RoundNearestEven, any),
    (Opcode::Exp, any),
    (Opcode::Expm1, any),
    (Opcode::Log, any),
    (Opcode::Log1p, any),
    (Opcode::Sqrt, any),
    (Opcode::Rsqrt, any),
    (Opcode::Cbrt, fl),
    (Opcode::Tanh, any),
    (Opcode::Sin, any),
    (Opcode::Cos, any),
    (Opcode::Tan, any),
    (Opcode::Logistic, any),
    (Opcode::Erf, any),
    (Opcode::IsFinite, any),
    (Opcode::Copy, any),
];

fn unary(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let (op, restriction) = g.pick(&UNARY);
    let x = if op == Opcode::Expm1 && c.scalar_only && g.cfg.avoid_known_xla_bugs {
        ew_operand(g, c, fl)?
    } else {
        ew_operand(g, c, ew_types(op, restriction))?
    };
    let s = shape_of(g, c, x);
    let ty = ew_result(op, s.ty)?;
    Some(g.add(c, op, arr(ty, s.dims), vec![x], vec![]))
}

/// The binary ops, in pick order, each with the generator's own restriction: no pred
/// arithmetic, and no complex maximum, minimum or remainder; atan2 on floats and complex.
const BINARY: [(Opcode, Restriction); 9] = [
    (Opcode::Add, num),
    (Opcode::Subtract, any),
    (Opcode::Multiply, num),
    (Opcode::Divide, any),
    (Opcode::Maximum, nonc),
    (Opcode::Minimum, nonc),
    (Opcode::Power, any),
    (Opcode::Remainder, nonc),
    (Opcode::Atan2, fc),
];

fn binary_op(g: &mut Gen, c: &mut Comp, op: Opcode, restriction: Restriction) -> Option<InstrId> {
    let x = ew_operand(g, c, ew_types(op, restriction))?;
    let s = shape_of(g, c, x);
    let y = g.value(c, s.ty, &s.dims);
    let (a, mut b) = if g.coin(50) { (x, y) } else { (y, x) };
    if matches!(op, Opcode::Divide | Opcode::Remainder) && s.ty.is_integer() {
        if c.entry && g.coin(30) && c.n_params < g.cfg.max_params {
            b = g.add_param(c, arr(s.ty, s.dims.clone()));
        }
        if g.cfg.avoid_known_xla_bugs && !(c.entry && param_rooted(c, b)) {
            b = nonzero(g, c, b);
        }
    }
    let ty = ew_result(op, s.ty)?;
    Some(g.add(c, op, arr(ty, s.dims), vec![a, b], vec![]))
}

/// Whether `id` is an entry parameter seen through ops that cannot turn it into a constant.
fn param_rooted(c: &Comp, mut id: InstrId) -> bool {
    loop {
        let i = &c.instrs[id];
        match i.opcode {
            Opcode::Parameter => return true,
            Opcode::Convert
            | Opcode::Reshape
            | Opcode::Copy
            | Opcode::Transpose
            | Opcode::Reverse
            | Opcode::Negate
            | Opcode::Not => id = i.operands[0],
            Opcode::Broadcast if !i.shape.dims().contains(&0) => id = i.operands[0],
            _ => return false,
        }
    }
}

/// `select(d == 0, 1, d)`: XLA:CPU dies with SIGFPE when it constant-folds an integer division
/// by zero (jaxlib 0.10.2), so divisors that XLA might fold are kept nonzero.
fn nonzero(g: &mut Gen, c: &mut Comp, d: InstrId) -> InstrId {
    let s = shape_of(g, c, d);
    let bcast = |g: &mut Gen, c: &mut Comp, x: InstrId, ty: PrimitiveType| {
        if s.dims.is_empty() {
            x
        } else {
            g.add(
                c,
                Opcode::Broadcast,
                arr(ty, s.dims.clone()),
                vec![x],
                vec![("dimensions", Attr::Ints(vec![]))],
            )
        }
    };
    let z = g.const_scalar(c, s.ty, Scalar::S(0));
    let z = bcast(g, c, z, s.ty);
    let one = g.const_scalar(c, s.ty, Scalar::S(1));
    let one = bcast(g, c, one, s.ty);
    let eq = g.add(
        c,
        Opcode::Compare,
        arr(Pred, s.dims.clone()),
        vec![d, z],
        vec![("direction", Attr::Ident("EQ".into()))],
    );
    g.add(
        c,
        Opcode::Select,
        arr(s.ty, s.dims.clone()),
        vec![eq, one, d],
        vec![],
    )
}

fn binary(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let (op, restriction) = g.pick(&BINARY);
    binary_op(g, c, op, restriction)
}

/// The bitwise ops, in pick order, on every type XLA accepts for them.
const BITWISE_UNARY: [Opcode; 3] = [Opcode::Not, Opcode::PopulationCount, Opcode::Clz];
const BITWISE_BINARY: [Opcode; 6] = [
    Opcode::And,
    Opcode::Or,
    Opcode::Xor,
    Opcode::ShiftLeft,
    Opcode::ShiftRightArithmetic,
    Opcode::ShiftRightLogical,
];

fn bitwise_unary(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let op = g.pick(&BITWISE_UNARY);
    let x = ew_operand(g, c, ew_types(op, any))?;
    let s = shape_of(g, c, x);
    let ty = ew_result(op, s.ty)?;
    Some(g.add(c, op, arr(ty, s.dims), vec![x], vec![]))
}

fn bitwise_binary(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let op = g.pick(&BITWISE_BINARY);
    binary_op(g, c, op, any)
}

const DIRECTIONS: [&str; 6] = ["EQ", "NE", "LT", "LE", "GT", "GE"];

fn compare_attrs(g: &mut Gen, ty: PrimitiveType, dir: &str) -> Vec<(&'static str, Attr)> {
    let mut attrs = vec![("direction", Attr::Ident(dir.to_string()))];
    if ty.is_float() && g.coin(35) {
        attrs.push(("type", Attr::Ident("TOTALORDER".into())));
    }
    attrs
}

fn compare(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let x = ew_operand(g, c, any)?;
    let s = shape_of(g, c, x);
    let y = g.value(c, s.ty, &s.dims);
    let dir = if s.ty.is_complex() {
        g.pick(&DIRECTIONS[..2])
    } else {
        g.pick(&DIRECTIONS)
    };
    let attrs = compare_attrs(g, s.ty, dir);
    Some(g.add(c, Opcode::Compare, arr(Pred, s.dims), vec![x, y], attrs))
}

fn select(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let x = any_operand(g, c, 0, false);
    let s = shape_of(g, c, x);
    let p = g.value(c, Pred, &s.dims);
    let y = g.value(c, s.ty, &s.dims);
    let (a, b) = if g.coin(50) { (x, y) } else { (y, x) };
    Some(g.add(c, Opcode::Select, arr(s.ty, s.dims), vec![p, a, b], vec![]))
}

fn clamp(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let x = ew_operand(g, c, nonc)?;
    let s = shape_of(g, c, x);
    let lo_dims = if g.coin(50) { vec![] } else { s.dims.clone() };
    let lo = g.value(c, s.ty, &lo_dims);
    let hi_dims = if g.coin(50) { vec![] } else { s.dims.clone() };
    let hi = g.value(c, s.ty, &hi_dims);
    Some(g.add(c, Opcode::Clamp, arr(s.ty, s.dims), vec![lo, x, hi], vec![]))
}

// ----- conversions -----

fn convert(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let x = any_operand(g, c, 0, false);
    let s = shape_of(g, c, x);
    let targets: Vec<PrimitiveType> = g
        .types
        .iter()
        .copied()
        .filter(|&t| convertible(s.ty, t))
        .collect();
    let ty = g.pick_opt(&targets)?;
    Some(g.add(c, Opcode::Convert, arr(ty, s.dims), vec![x], vec![]))
}

fn bitcastable(t: PrimitiveType) -> bool {
    t != Pred && !t.is_complex() && t.bit_width() >= 8
}

fn bitcast_convert(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let tys: Vec<PrimitiveType> = g
        .types
        .iter()
        .copied()
        .filter(|&t| bitcastable(t))
        .collect();
    if tys.is_empty() {
        return None;
    }
    let x = match g.pool_pick(c, |s| tys.contains(&s.ty)) {
        Some(x) if !g.coin(15) => x,
        _ => {
            let ty = g.pick(&tys);
            let rank = if c.scalar_only { 0 } else { g.fresh_rank() };
            let dims = g.fresh_dims(rank);
            g.value(c, ty, &dims)
        }
    };
    let s = shape_of(g, c, x);
    let chained = {
        let xi = &c.instrs[x];
        xi.opcode == Opcode::BitcastConvert
            && xi.shape.rank() != c.instrs[xi.operands[0]].shape.rank()
    };
    let to_tys: Vec<PrimitiveType> = if c.scalar_only || (chained && g.cfg.avoid_known_xla_bugs) {
        tys.iter()
            .copied()
            .filter(|t| t.bit_width() == s.ty.bit_width())
            .collect()
    } else {
        tys.clone()
    };
    let to = g.pick(&to_tys);
    let (wi, wo) = (s.ty.bit_width() as i64, to.bit_width() as i64);
    if wi == wo {
        return Some(g.add(c, Opcode::BitcastConvert, arr(to, s.dims), vec![x], vec![]));
    }
    if wo < wi {
        let mut d = s.dims.clone();
        d.push(wi / wo);
        if !g.fits(&d) {
            return None;
        }
        return Some(g.add(c, Opcode::BitcastConvert, arr(to, d), vec![x], vec![]));
    }
    // Wider: the operand's last dimension must be the width ratio.
    let mut base = s.dims.clone();
    if base.len() >= g.cfg.max_rank.max(1) {
        base.pop();
    }
    let mut d = base.clone();
    d.push(wo / wi);
    if !g.fits(&d) {
        return None;
    }
    let y = g.value(c, s.ty, &d);
    let yi = &c.instrs[y];
    if g.cfg.avoid_known_xla_bugs
        && yi.opcode == Opcode::BitcastConvert
        && yi.shape.rank() != c.instrs[yi.operands[0]].shape.rank()
    {
        return None;
    }
    Some(g.add(c, Opcode::BitcastConvert, arr(to, base), vec![y], vec![]))
}

fn reduce_precision(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let x = ew_operand(g, c, fl)?;
    let s = shape_of(g, c, x);
    let (eb, mb) = s.ty.float_bits()?;
    let e = g.range(1, eb as i64);
    let m = g.range(0, mb as i64);
    Some(g.add(
        c,
        Opcode::ReducePrecision,
        arr(s.ty, s.dims),
        vec![x],
        vec![
            ("exponent_bits", Attr::Int(e)),
            ("mantissa_bits", Attr::Int(m)),
        ],
    ))
}

// ----- complex -----

fn complex(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let mut comps = Vec::new();
    if g.types.contains(&C64) {
        comps.push(F32);
    }
    if g.types.contains(&C128) {
        comps.push(F64);
    }
    let ty = g.pick_opt(&comps)?;
    let x = match g.pool_pick(c, |s| s.ty == ty) {
        Some(x) => x,
        None => {
            let rank = if c.scalar_only { 0 } else { g.fresh_rank() };
            let dims = g.fresh_dims(rank);
            g.value(c, ty, &dims)
        }
    };
    let s = shape_of(g, c, x);
    let y = g.value(c, ty, &s.dims);
    let out = if ty == F32 { C64 } else { C128 };
    Some(g.add(c, Opcode::Complex, arr(out, s.dims), vec![x, y], vec![]))
}

fn real_imag(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let x = ew_operand(g, c, |t| t.is_complex())?;
    let s = shape_of(g, c, x);
    let op = g.pick(&[Opcode::Real, Opcode::Imag]);
    let ty = s.ty.complex_component()?;
    Some(g.add(c, op, arr(ty, s.dims), vec![x], vec![]))
}

// ----- shape -----

fn broadcast(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let x = any_operand(g, c, 0, false);
    let s = shape_of(g, c, x);
    let r = s.rank();
    let big = (g.cfg.max_rank).max(r);
    let rr = g.range(r as i64, big as i64) as usize;
    // Which output dimensions the operand's dimensions map to (increasing).
    let mut pos: Vec<usize> = (0..rr).collect();
    while pos.len() > r {
        let i = g.below(pos.len());
        pos.remove(i);
    }
    let mut out = vec![0i64; rr];
    let mut k = 0;
    for (i, o) in out.iter_mut().enumerate() {
        if k < r && pos[k] == i {
            *o = s.dims[k];
            k += 1;
        } else {
            *o = g.fresh_dim();
        }
    }
    if !g.fits(&out) {
        for (i, o) in out.iter_mut().enumerate() {
            if !pos.contains(&i) {
                *o = 1;
            }
        }
    }
    Some(g.add(
        c,
        Opcode::Broadcast,
        arr(s.ty, out),
        vec![x],
        vec![("dimensions", ints(&pos))],
    ))
}

fn factor(mut n: u64) -> Vec<i64> {
    let mut f = Vec::new();
    let mut p = 2;
    while p * p <= n {
        while n.is_multiple_of(p) {
            f.push(p as i64);
            n /= p;
        }
        p += 1;
    }
    if n > 1 {
        f.push(n as i64);
    }
    f
}

/// Random dimensions with exactly `n` elements.
fn dims_with_count(g: &mut Gen, n: u64) -> Vec<i64> {
    let maxr = g.cfg.max_rank.max(1) as i64;
    if n == 0 {
        let r = g.range(1, maxr) as usize;
        let mut d: Vec<i64> = (0..r).map(|_| g.range(0, 4)).collect();
        let z = g.below(r);
        d[z] = 0;
        return d;
    }
    let lo = if n > 1 { 1 } else { 0 };
    let r = g.range(lo, maxr) as usize;
    let mut d = vec![1i64; r];
    for p in factor(n) {
        let i = g.below(r);
        d[i] *= p;
    }
    d
}

fn reshape(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let x = any_operand(g, c, 0, false);
    let s = shape_of(g, c, x);
    let d = dims_with_count(g, product(&s.dims));
    Some(g.add(c, Opcode::Reshape, arr(s.ty, d), vec![x], vec![]))
}

fn transpose(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let x = any_operand(g, c, 1, false);
    let s = shape_of(g, c, x);
    let perm = g.permutation(s.rank());
    let d: Vec<i64> = perm.iter().map(|&p| s.dims[p]).collect();
    Some(g.add(
        c,
        Opcode::Transpose,
        arr(s.ty, d),
        vec![x],
        vec![("dimensions", ints(&perm))],
    ))
}

fn reverse(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let x = any_operand(g, c, 1, false);
    let s = shape_of(g, c, x);
    let mut dims = g.subset(s.rank(), 50);
    if dims.is_empty() {
        dims.push(g.below(s.rank()));
    }
    Some(g.add(
        c,
        Opcode::Reverse,
        arr(s.ty, s.dims),
        vec![x],
        vec![("dimensions", ints(&dims))],
    ))
}

fn iota(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let tys: Vec<PrimitiveType> = g.arith.iter().copied().filter(|&t| nonc(t)).collect();
    let ty = g.pick_opt(&tys)?;
    let r = g.range(1, g.cfg.max_rank.max(1) as i64) as usize;
    let d = g.fresh_dims(r);
    let k = g.below(r) as i64;
    Some(g.add(
        c,
        Opcode::Iota,
        arr(ty, d),
        vec![],
        vec![("iota_dimension", Attr::Int(k))],
    ))
}

fn constant(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let ty = g.pick(&g.types.clone());
    let r = g.range(0, 2.min(g.cfg.max_rank as i64)) as usize;
    let d = g.fresh_dims(r);
    Some(g.constant(c, ty, &d))
}

// ----- slicing -----

fn slice(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let x = any_operand(g, c, 1, false);
    let s = shape_of(g, c, x);
    let mut sl = Vec::new();
    let mut out = Vec::new();
    for &d in &s.dims {
        let start = g.range(0, d);
        let limit = g.range(start, d);
        let stride = if g.coin(25) { g.range(2, 3) } else { 1 };
        out.push((limit - start + stride - 1) / stride);
        sl.push(SliceDim {
            start,
            limit,
            stride,
        });
    }
    if g.cfg.avoid_known_xla_bugs && out.contains(&0) && concat_with_empty_operand(c, x) {
        return None;
    }
    Some(g.add(
        c,
        Opcode::Slice,
        arr(s.ty, out),
        vec![x],
        vec![("slice", Attr::Slice(sl))],
    ))
}

fn dynamic_slice(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let x = any_operand(g, c, 1, false);
    let s = shape_of(g, c, x);
    let sizes: Vec<i64> = s.dims.iter().map(|&d| g.range(0, d)).collect();
    if g.cfg.avoid_known_xla_bugs && sizes.contains(&0) && concat_with_empty_operand(c, x) {
        return None;
    }
    let ity = g.index_type();
    let mut ops = vec![x];
    for (i, &d) in s.dims.iter().enumerate() {
        ops.push(g.index_scalar(c, ity, d - sizes[i]));
    }
    Some(g.add(
        c,
        Opcode::DynamicSlice,
        arr(s.ty, sizes.clone()),
        ops,
        vec![("dynamic_slice_sizes", Attr::Ints(sizes))],
    ))
}

/// Whether `id` is a concatenate with an operand of no elements. XLA:CPU (jaxlib 0.10.2) aborts
/// ("SmallVector unable to grow", `std::length_error`) compiling an empty slice of such a
/// concatenate taken at the empty operand's offset (`slice(concatenate(f32[1], f32[0])),
/// slice={[1:1]}`, also a dynamic-slice with a constant start), so while
/// `avoid_known_xla_bugs` holds, empty slices and dynamic-slices never read such a concatenate.
fn concat_with_empty_operand(c: &Comp, id: InstrId) -> bool {
    let i = &c.instrs[id];
    i.opcode == Opcode::Concatenate
        && i.operands
            .iter()
            .any(|&o| c.instrs[o].shape.dims().contains(&0))
}

fn dynamic_update_slice(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let x = any_operand(g, c, 1, false);
    let s = shape_of(g, c, x);
    let ud: Vec<i64> = s.dims.iter().map(|&d| g.range(0, d)).collect();
    let upd = g.value(c, s.ty, &ud);
    let ity = g.index_type();
    let mut ops = vec![x, upd];
    for (i, &d) in s.dims.iter().enumerate() {
        ops.push(g.index_scalar(c, ity, d - ud[i]));
    }
    Some(g.add(
        c,
        Opcode::DynamicUpdateSlice,
        arr(s.ty, s.dims),
        ops,
        vec![],
    ))
}

fn concatenate(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let x = any_operand(g, c, 1, false);
    let s = shape_of(g, c, x);
    let dim = g.below(s.rank());
    let k = g.range(1, 3);
    let mut ops = vec![x];
    let mut total = s.dims[dim];
    for _ in 0..k {
        let mut d = s.dims.clone();
        d[dim] = g.fresh_dim();
        let mut out = s.dims.clone();
        out[dim] = total + d[dim];
        if !g.fits(&out) {
            break;
        }
        total += d[dim];
        let v = g.value(c, s.ty, &d);
        ops.push(v);
    }
    let mut out = s.dims.clone();
    out[dim] = total;
    Some(g.add(
        c,
        Opcode::Concatenate,
        arr(s.ty, out),
        ops,
        vec![("dimensions", ints(&[dim]))],
    ))
}

fn pad(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let x = any_operand(g, c, 1, false);
    let s = shape_of(g, c, x);
    let pv = g.value(c, s.ty, &[]);
    let mut cfg = Vec::new();
    let mut out = Vec::new();
    for &d in &s.dims {
        let interior = if g.coin(25) { g.range(1, 2) } else { 0 };
        let base = d + (d - 1).max(0) * interior;
        let low = g.range(-base.min(3), 3);
        let rem = base + low;
        let high = g.range(-rem.min(3), 3);
        out.push(rem + high);
        cfg.push(PaddingDim {
            low,
            high,
            interior,
        });
    }
    if !g.fits(&out) {
        return None;
    }
    Some(g.add(
        c,
        Opcode::Pad,
        arr(s.ty, out),
        vec![x, pv],
        vec![("padding", Attr::Padding(cfg))],
    ))
}

// ----- reductions -----

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Red {
    Add,
    Mul,
    Max,
    Min,
    And,
    Or,
    Xor,
}

fn red_kinds(t: PrimitiveType) -> &'static [Red] {
    if t == Pred {
        &[Red::And, Red::Or, Red::Xor]
    } else if t.is_integer() {
        &[
            Red::Add,
            Red::Mul,
            Red::Max,
            Red::Min,
            Red::And,
            Red::Or,
            Red::Xor,
        ]
    } else if t.is_float() {
        &[Red::Add, Red::Mul, Red::Max, Red::Min]
    } else {
        &[Red::Add, Red::Mul]
    }
}

fn red_opcode(r: Red) -> Opcode {
    match r {
        Red::Add => Opcode::Add,
        Red::Mul => Opcode::Multiply,
        Red::Max => Opcode::Maximum,
        Red::Min => Opcode::Minimum,
        Red::And => Opcode::And,
        Red::Or => Opcode::Or,
        Red::Xor => Opcode::Xor,
    }
}

/// The identity of a reduction: with another init the semantics table leaves the result
/// implementation-defined (`hlo::semantics::Condition::NotAMonoid`: any value, which decides
/// nothing), so generated reductions take this one (`tests/semantics.rs` keeps the rule tied to
/// the table).
pub(crate) fn identity(r: Red, t: PrimitiveType) -> Scalar {
    let bits = t.bit_width();
    let umax = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    match (r, t.class()) {
        (Red::Add | Red::Or | Red::Xor, hlo::TypeClass::Pred) => Scalar::Pred(false),
        (Red::And, hlo::TypeClass::Pred) => Scalar::Pred(true),
        (Red::Add | Red::Or | Red::Xor, _) => Scalar::S(0),
        (Red::Mul, hlo::TypeClass::Complex) => Scalar::C(1.0, 0.0),
        (Red::Mul, _) => Scalar::S(1),
        (Red::And, hlo::TypeClass::Unsigned) => Scalar::U(umax),
        (Red::And, _) => Scalar::S(-1),
        (Red::Max | Red::Min, hlo::TypeClass::Float) => {
            // Types without infinities have their largest finite value as the identity (an
            // infinity would convert to NaN, which minimum and maximum propagate).
            let (lowest, highest) = float_range(t);
            Scalar::F(if r == Red::Max { lowest } else { highest })
        }
        (Red::Max, hlo::TypeClass::Signed) => Scalar::S(i64::MIN >> (64 - bits)),
        (Red::Max, _) => Scalar::U(0),
        (Red::Min, hlo::TypeClass::Signed) => Scalar::S(((1u64 << (bits - 1)) - 1) as i64),
        (Red::Min, _) => Scalar::U(umax),
    }
}

/// The lowest and highest values of float type `t`: the infinities where it has them, its
/// finite extremes otherwise.
fn float_range(t: PrimitiveType) -> (f64, f64) {
    use PrimitiveType as T;
    let max = match t {
        T::F8E4M3FN => 448.0,
        T::F8E4M3FNUZ => 240.0,
        T::F8E5M2FNUZ => 57344.0,
        T::F8E4M3B11FNUZ => 30.0,
        T::F4E2M1FN => 6.0,
        // Unsigned powers of two: 2^-127 ..= 2^127.
        T::F8E8M0FNU => return (2f64.powi(-127), 2f64.powi(127)),
        _ => return (f64::NEG_INFINITY, f64::INFINITY),
    };
    (-max, max)
}

/// A reducer computation: `(acc_0..acc_n, x_0..x_n) -> op_i(acc_i, x_i)` (a tuple when n > 1).
pub(crate) fn reducer(g: &mut Gen, kinds: &[(Red, PrimitiveType)], depth: usize) -> CompId {
    let mut r = g.new_comp("region", depth + 1, false, false);
    let accs: Vec<InstrId> = kinds
        .iter()
        .map(|(_, t)| g.add_param(&mut r, Shape::scalar(*t)))
        .collect();
    let xs: Vec<InstrId> = kinds
        .iter()
        .map(|(_, t)| g.add_param(&mut r, Shape::scalar(*t)))
        .collect();
    let mut outs = Vec::new();
    for (i, (k, t)) in kinds.iter().enumerate() {
        let (op, t) = (red_opcode(*k), *t);
        let out = if g.coin(g.cfg.nested_control_percent) {
            nested_binary(g, &mut r, op, t, accs[i], xs[i])
        } else {
            g.add(&mut r, op, Shape::scalar(t), vec![accs[i], xs[i]], vec![])
        };
        outs.push(out);
    }
    let root = if outs.len() == 1 {
        outs[0]
    } else {
        g.tuple(&mut r, outs)
    };
    g.finish(r, root)
}

/// `op(a, b)` computed through control flow inside a reducer: a `conditional` on `a < b` whose
/// two branches both compute it, or (when known bugs are not avoided) a `call` of a computation
/// that computes it: the same function as the bare op, so the reduction means what it meant.
fn nested_binary(
    g: &mut Gen,
    r: &mut Comp,
    op: Opcode,
    t: PrimitiveType,
    a: InstrId,
    b: InstrId,
) -> InstrId {
    let scalar = Shape::scalar(t);
    // XLA CPU through jaxlib 0.10.2 crashes (SIGSEGV) compiling a reduce that nothing uses
    // whose reducer holds a `call` (registry entry xla-dead-reduce-reducer-call-segfault), and
    // a generated reduce may end up unused: the call form only when known bugs are not avoided.
    if !g.cfg.avoid_known_xla_bugs && g.coin(50) {
        let mut f = g.new_comp("reducer_call", r.depth + 1, false, false);
        let x = g.add_param(&mut f, scalar.clone());
        let y = g.add_param(&mut f, scalar.clone());
        let root = g.add(&mut f, op, scalar.clone(), vec![x, y], vec![]);
        let f = g.finish(f, root);
        return g.add(
            r,
            Opcode::Call,
            scalar,
            vec![a, b],
            vec![("to_apply", Attr::Comp(f))],
        );
    }
    let pair = Shape::Tuple(vec![scalar.clone(), scalar.clone()]);
    let mut branches = Vec::new();
    for _ in 0..2 {
        let mut f = g.new_comp("reducer_branch", r.depth + 1, false, false);
        let p = g.add_param(&mut f, pair.clone());
        let x = g.gte(&mut f, p, 0);
        let y = g.gte(&mut f, p, 1);
        let root = g.add(&mut f, op, scalar.clone(), vec![x, y], vec![]);
        branches.push(g.finish(f, root));
    }
    let mut cmp = vec![("direction", Attr::Ident("LT".into()))];
    if t.is_float() {
        cmp.push(("type", Attr::Ident("TOTALORDER".into())));
    }
    let pred = if t.is_complex() || t == Pred {
        g.const_scalar(r, Pred, Scalar::Pred(true))
    } else {
        g.add(r, Opcode::Compare, Shape::scalar(Pred), vec![a, b], cmp)
    };
    let args = g.tuple(r, vec![a, b]);
    g.add(
        r,
        Opcode::Conditional,
        scalar,
        vec![pred, args, args],
        vec![
            ("true_computation", Attr::Comp(branches[0])),
            ("false_computation", Attr::Comp(branches[1])),
        ],
    )
}

fn pick_red(g: &mut Gen, t: PrimitiveType) -> Red {
    g.pick(red_kinds(t))
}

/// Wraps a variadic result: a tuple instruction followed by one get-tuple-element per element.
fn results(
    g: &mut Gen,
    c: &mut Comp,
    op: Opcode,
    shapes: Vec<Shape>,
    ops: Vec<InstrId>,
    attrs: Vec<(&str, Attr)>,
) -> InstrId {
    if shapes.len() == 1 {
        return g.add(c, op, shapes.into_iter().next().unwrap(), ops, attrs);
    }
    let n = shapes.len();
    let t = g.add(c, op, Shape::Tuple(shapes), ops, attrs);
    let mut last = t;
    for i in 0..n {
        last = g.gte(c, t, i);
    }
    last
}

/// A type for a second operand of a variadic reduce: XLA's verifier rejects floats of
/// different precisions among one instruction's operands.
fn second_type(g: &mut Gen, first: PrimitiveType) -> PrimitiveType {
    let ok: Vec<PrimitiveType> = g
        .arith
        .iter()
        .copied()
        .filter(|&t| !(t.is_float() && first.is_float() && t != first))
        .collect();
    g.pick_opt(&ok).unwrap_or(first)
}

/// Dimensions of rank 1 or 2 with one large extent (`large_extent/4..=large_extent`): a long
/// row or column, the sizes at which XLA:CPU changes code paths (vectorized and tree reductions,
/// GEMV/GEMM emitters and library calls). Shrunk to `max_elements`. `None` when `max_rank` is 0.
fn large_dims(g: &mut Gen) -> Option<Vec<i64>> {
    if g.cfg.max_rank == 0 {
        return None;
    }
    let hi = g.cfg.large_extent.max(1);
    let big = g.range((hi / 4).max(1), hi);
    let mut d = if g.cfg.max_rank >= 2 && g.coin(60) {
        let small = g.range(1, g.cfg.max_extent.max(1));
        if g.coin(50) {
            vec![big, small]
        } else {
            vec![small, big]
        }
    } else {
        vec![big]
    };
    g.fit(&mut d);
    Some(d)
}

/// A value for a large operand: a new entry parameter when possible (so XLA cannot fold the
/// data away at compile time), else any value of that type and shape.
fn large_value(g: &mut Gen, c: &mut Comp, ty: PrimitiveType, dims: &[i64]) -> InstrId {
    if c.entry && c.n_params < g.cfg.max_params {
        g.add_param(c, arr(ty, dims.to_vec()))
    } else {
        g.value(c, ty, dims)
    }
}

fn reduce(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let large = if g.coin(g.cfg.large_op_percent) {
        large_dims(g)
    } else {
        None
    };
    let x0 = match large {
        Some(d) => {
            let tys = if g.arith.is_empty() {
                vec![F32]
            } else {
                g.arith.clone()
            };
            let ty = g.pick(&tys);
            large_value(g, c, ty, &d)
        }
        None => any_operand(g, c, 0, true),
    };
    let s = shape_of(g, c, x0);
    let mut xs = vec![(x0, s.ty)];
    if g.coin(25) {
        let t = second_type(g, s.ty);
        let x1 = g.value(c, t, &s.dims);
        xs.push((x1, t));
    }
    let mut dims = g.subset(s.rank(), 50);
    // XLA drops a reduce over no dimensions in favour of its operand, ignoring the init value
    // (corpora/regressions/xla_miscompile_reduce_no_dimensions.hlo).
    if dims.is_empty() && g.cfg.avoid_known_xla_bugs {
        if s.rank() == 0 {
            return None;
        }
        dims.push(0);
    }
    let out: Vec<i64> = (0..s.rank())
        .filter(|i| !dims.contains(i))
        .map(|i| s.dims[i])
        .collect();
    let kinds: Vec<(Red, PrimitiveType)> = xs.iter().map(|&(_, t)| (pick_red(g, t), t)).collect();
    let mut ops: Vec<InstrId> = xs.iter().map(|x| x.0).collect();
    for &(k, t) in &kinds {
        ops.push(g.const_scalar(c, t, identity(k, t)));
    }
    let comp = reducer(g, &kinds, c.depth);
    let shapes = kinds.iter().map(|&(_, t)| arr(t, out.clone())).collect();
    Some(results(
        g,
        c,
        Opcode::Reduce,
        shapes,
        ops,
        vec![("dimensions", ints(&dims)), ("to_apply", Attr::Comp(comp))],
    ))
}

fn window_out(d: i64, w: &WindowDim) -> i64 {
    let base = if d == 0 {
        0
    } else {
        (d - 1) * w.base_dilation + 1
    };
    let padded = base + w.padding_low + w.padding_high;
    let win = (w.size - 1) * w.window_dilation + 1;
    if padded < win {
        0
    } else {
        (padded - win) / w.stride + 1
    }
}

fn random_window(g: &mut Gen, dims: &[i64], dilations: bool) -> Window {
    let mut w = Window::default();
    for &d in dims {
        let size = g.range(1, d.clamp(1, 3));
        let stride = g.range(1, 2.min(size.max(1)) + 1);
        let (lo, hi) = if g.coin(30) {
            (g.range(0, 2), g.range(0, 2))
        } else {
            (0, 0)
        };
        let bd = if dilations && g.coin(10) { 2 } else { 1 };
        let wd = if dilations && g.coin(10) { 2 } else { 1 };
        w.dims.push(WindowDim {
            size,
            stride,
            padding_low: lo,
            padding_high: hi,
            base_dilation: bd,
            window_dilation: wd,
            window_reversal: false,
        });
    }
    w
}

fn reduce_window(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let x0 = any_operand(g, c, 1, true);
    let s = shape_of(g, c, x0);
    let mut xs = vec![(x0, s.ty)];
    if g.coin(15) {
        let t = second_type(g, s.ty);
        let x1 = g.value(c, t, &s.dims);
        xs.push((x1, t));
    }
    let w = random_window(g, &s.dims, true);
    let out: Vec<i64> = s
        .dims
        .iter()
        .zip(&w.dims)
        .map(|(&d, wd)| window_out(d, wd))
        .collect();
    let wsize: u64 = w.dims.iter().map(|d| d.size as u64).product();
    if product(&out).saturating_mul(wsize) > g.cfg.max_work || !g.fits(&out) {
        return None;
    }
    let kinds: Vec<(Red, PrimitiveType)> = xs.iter().map(|&(_, t)| (pick_red(g, t), t)).collect();
    let mut ops: Vec<InstrId> = xs.iter().map(|x| x.0).collect();
    for &(k, t) in &kinds {
        ops.push(g.const_scalar(c, t, identity(k, t)));
    }
    let comp = reducer(g, &kinds, c.depth);
    let shapes = kinds.iter().map(|&(_, t)| arr(t, out.clone())).collect();
    Some(results(
        g,
        c,
        Opcode::ReduceWindow,
        shapes,
        ops,
        vec![("window", Attr::Window(w)), ("to_apply", Attr::Comp(comp))],
    ))
}

fn select_and_scatter(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let tys: Vec<PrimitiveType> = g.arith.iter().copied().filter(|&t| nonc(t)).collect();
    if tys.is_empty() {
        return None;
    }
    let x = match g.pool_pick(c, |s| s.rank() >= 1 && tys.contains(&s.ty)) {
        Some(x) => x,
        None => {
            let ty = g.pick(&tys);
            let r = g.range(1, g.cfg.max_rank.max(1) as i64) as usize;
            let d = g.fresh_dims(r);
            g.value(c, ty, &d)
        }
    };
    let s = shape_of(g, c, x);
    let w = random_window(g, &s.dims, false);
    let sd: Vec<i64> = s
        .dims
        .iter()
        .zip(&w.dims)
        .map(|(&d, wd)| window_out(d, wd))
        .collect();
    let wsize: u64 = w.dims.iter().map(|d| d.size as u64).product();
    if product(&sd).saturating_mul(wsize) > g.cfg.max_work {
        return None;
    }
    let src = g.value(c, s.ty, &sd);
    let kind = g.pick(&[Red::Add, Red::Add, Red::Max, Red::Min]);
    let init = g.const_scalar(c, s.ty, identity(kind, s.ty));
    // select: (a, b) -> pred
    let mut sc = g.new_comp("select", c.depth + 1, false, false);
    let a = g.add_param(&mut sc, Shape::scalar(s.ty));
    let b = g.add_param(&mut sc, Shape::scalar(s.ty));
    let dir = g.pick(&["GE", "GT", "LE", "LT"]);
    let attrs = compare_attrs(g, s.ty, dir);
    let root = g.add(
        &mut sc,
        Opcode::Compare,
        Shape::scalar(Pred),
        vec![a, b],
        attrs,
    );
    let sel = g.finish(sc, root);
    let scat = reducer(g, &[(kind, s.ty)], c.depth);
    Some(g.add(
        c,
        Opcode::SelectAndScatter,
        arr(s.ty, s.dims),
        vec![x, src, init],
        vec![
            ("window", Attr::Window(w)),
            ("select", Attr::Comp(sel)),
            ("scatter", Attr::Comp(scat)),
        ],
    ))
}

// ----- contractions -----

fn dot(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let tys: Vec<PrimitiveType> = g
        .arith
        .iter()
        .copied()
        .filter(|&t| t != Pred && !crate::config::CPU_NO_DOT_TYPES.contains(&t))
        .collect();
    if tys.is_empty() {
        return None;
    }
    if g.coin(g.cfg.large_op_percent) {
        if let Some(d) = large_dot(g, c, &tys) {
            return Some(d);
        }
    }
    let x = match g.pool_pick(c, |s| s.rank() <= 4 && tys.contains(&s.ty)) {
        Some(x) if !g.coin(20) => x,
        _ => {
            let ty = g.pick(&tys);
            let r = g.range(1, 3);
            let d = g.fresh_dims(r as usize);
            g.value(c, ty, &d)
        }
    };
    let s = shape_of(g, c, x);
    let roles: Vec<usize> = (0..s.rank()).map(|_| g.below(3)).collect();
    let pos = |k: usize| -> Vec<usize> { (0..roles.len()).filter(|&i| roles[i] == k).collect() };
    let (lb, lc, lf) = (pos(0), pos(1), pos(2));
    let nf = g.range(0, 2) as usize;
    let rr = lb.len() + lc.len() + nf;
    let perm = g.permutation(rr);
    let rb: Vec<usize> = perm[..lb.len()].to_vec();
    let rc: Vec<usize> = perm[lb.len()..lb.len() + lc.len()].to_vec();
    let mut rdims = vec![0i64; rr];
    for (i, &p) in rb.iter().enumerate() {
        rdims[p] = s.dims[lb[i]];
    }
    for (i, &p) in rc.iter().enumerate() {
        rdims[p] = s.dims[lc[i]];
    }
    let mut rfree = Vec::new();
    for (i, d) in rdims.iter_mut().enumerate() {
        if !rb.contains(&i) && !rc.contains(&i) {
            *d = g.fresh_dim();
            rfree.push(i);
        }
    }
    let mut out: Vec<i64> = lb.iter().map(|&i| s.dims[i]).collect();
    out.extend(lf.iter().map(|&i| s.dims[i]));
    out.extend(rfree.iter().map(|&i| rdims[i]));
    let k: u64 = lc.iter().map(|&i| s.dims[i].max(1) as u64).product();
    if !g.fits(&out) || !g.fits(&rdims) || product(&out).saturating_mul(k) > g.cfg.max_work {
        return None;
    }
    let y = g.value(c, s.ty, &rdims);
    let mut attrs = Vec::new();
    if !lb.is_empty() {
        attrs.push(("lhs_batch_dims", ints(&lb)));
    }
    if !lc.is_empty() {
        attrs.push(("lhs_contracting_dims", ints(&lc)));
    }
    if !rb.is_empty() {
        attrs.push(("rhs_batch_dims", ints(&rb)));
    }
    if !rc.is_empty() {
        attrs.push(("rhs_contracting_dims", ints(&rc)));
    }
    Some(g.add(c, Opcode::Dot, arr(s.ty, out), vec![x, y], attrs))
}

/// A matrix-matrix or matrix-vector `dot` with one large dimension: a long contraction
/// (`[m,K] x [K,n]`) or many rows (`[M,k] x [k,n]`), contracting dimensions in either position,
/// within `max_elements` and `max_work`. Operands are new entry parameters where possible.
fn large_dot(g: &mut Gen, c: &mut Comp, tys: &[PrimitiveType]) -> Option<InstrId> {
    if g.cfg.max_rank < 2 {
        return None;
    }
    let ty = g.pick(tys);
    let hi = g.cfg.large_extent.max(1);
    let big = g.range((hi / 4).max(1), hi);
    let small_hi = g.cfg.max_extent.max(1);
    let vector = g.coin(30);
    let n = if vector { 1 } else { g.range(1, small_hi) };
    let long_contraction = g.coin(50);
    let (max_el, max_work) = (
        g.cfg.max_elements.max(1) as i64,
        g.cfg.max_work.max(1) as i64,
    );
    let (m, k) = if long_contraction {
        let m = g.range(1, small_hi);
        let cap = (max_work / (m * n)).min(max_el / m.max(n));
        (m, big.min(cap))
    } else {
        let k = g.range(1, small_hi);
        let cap = (max_work / (k * n)).min(max_el / k.max(n));
        (big.min(cap), k)
    };
    if m < 1 || k < 1 {
        return None;
    }
    let lc = g.below(2);
    let lhs_dims = if lc == 1 { vec![m, k] } else { vec![k, m] };
    let (rc, rhs_dims) = if vector {
        (0, vec![k])
    } else {
        let rc = g.below(2);
        (rc, if rc == 0 { vec![k, n] } else { vec![n, k] })
    };
    let out = if vector { vec![m] } else { vec![m, n] };
    let x = large_value(g, c, ty, &lhs_dims);
    let y = large_value(g, c, ty, &rhs_dims);
    Some(g.add(
        c,
        Opcode::Dot,
        arr(ty, out),
        vec![x, y],
        vec![
            ("lhs_contracting_dims", ints(&[lc])),
            ("rhs_contracting_dims", ints(&[rc])),
        ],
    ))
}

fn convolution(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let tys: Vec<PrimitiveType> = g.arith.iter().copied().filter(|&t| t.is_float()).collect();
    let ty = g.pick_opt(&tys)?;
    let ns = g.range(0, 2) as usize;
    let (mut fgc, mut bgc) = (1i64, 1i64);
    if g.coin(20) {
        fgc = g.range(2, 3);
    } else if g.coin(15) {
        bgc = g.range(2, 3);
    }
    let n = bgc * g.range(1, 3);
    let cin_g = g.range(1, 3);
    let cin = cin_g * fgc;
    let cout = g.range(1, 3) * fgc * bgc;
    let mut window = Window::default();
    let mut sp_in = Vec::new();
    let mut sp_k = Vec::new();
    let mut sp_out = Vec::new();
    for _ in 0..ns {
        let sz = g.range(1, 7);
        let k = g.range(1, 3);
        let w = WindowDim {
            size: k,
            stride: g.range(1, 2),
            padding_low: g.range(-1, 2),
            padding_high: g.range(-1, 2),
            base_dilation: if g.coin(15) { 2 } else { 1 },
            window_dilation: if g.coin(15) { 2 } else { 1 },
            window_reversal: false,
        };
        sp_in.push(sz);
        sp_k.push(k);
        sp_out.push(window_out(sz, &w));
        window.dims.push(w);
    }
    let rank = ns + 2;
    let p = g.permutation(rank);
    let q = g.permutation(rank);
    let r = g.permutation(rank);
    let labels = ConvDimLabels {
        input_batch: p[0] as i64,
        input_feature: p[1] as i64,
        input_spatial: p[2..].iter().map(|&x| x as i64).collect(),
        kernel_input_feature: q[0] as i64,
        kernel_output_feature: q[1] as i64,
        kernel_spatial: q[2..].iter().map(|&x| x as i64).collect(),
        output_batch: r[0] as i64,
        output_feature: r[1] as i64,
        output_spatial: r[2..].iter().map(|&x| x as i64).collect(),
    };
    let mut ind = vec![0i64; rank];
    let mut kd = vec![0i64; rank];
    let mut od = vec![0i64; rank];
    ind[p[0]] = n;
    ind[p[1]] = cin;
    kd[q[0]] = cin_g;
    kd[q[1]] = cout;
    od[r[0]] = n / bgc;
    od[r[1]] = cout;
    for i in 0..ns {
        ind[p[2 + i]] = sp_in[i];
        kd[q[2 + i]] = sp_k[i];
        od[r[2 + i]] = sp_out[i];
    }
    let kwork: u64 = product(&sp_k) * cin_g as u64;
    if product(&od).saturating_mul(kwork) > g.cfg.max_work {
        return None;
    }
    let lhs = g.value(c, ty, &ind);
    let rhs = g.value(c, ty, &kd);
    let mut attrs = Vec::new();
    attrs.push(("window", Attr::Window(window)));
    attrs.push(("dim_labels", Attr::ConvDims(labels)));
    if fgc > 1 {
        attrs.push(("feature_group_count", Attr::Int(fgc)));
    }
    if bgc > 1 {
        attrs.push(("batch_group_count", Attr::Int(bgc)));
    }
    Some(g.add(c, Opcode::Convolution, arr(ty, od), vec![lhs, rhs], attrs))
}

// ----- gather / scatter -----

/// Start indices of a gather or scatter: their dimensions, where the index vector lies,
/// which dimensions pair with the operand's batching dimensions, and the batch extents.
struct Indices {
    dims: Vec<i64>,
    index_vector_dim: usize,
    batching: Vec<usize>,
    batch_sizes: Vec<i64>,
}

/// Chooses batching dims, index-mapped dims and start-index layout for an operand.
/// Returns (operand batching dims, index map, indices layout).
fn index_layout(g: &mut Gen, od: &[i64]) -> Option<(Vec<usize>, Vec<usize>, Indices)> {
    let r = od.len();
    let mut ob: Vec<usize> = Vec::new();
    if g.coin(25) && r >= 2 {
        let cands: Vec<usize> = (0..r).filter(|&i| od[i] >= 1).collect();
        if let Some(d) = g.pick_opt(&cands) {
            ob.push(d);
        }
    }
    let rest: Vec<usize> = (0..r).filter(|i| !ob.contains(i)).collect();
    let mut map: Vec<usize> = rest.iter().copied().filter(|_| g.coin(60)).collect();
    if map.is_empty() {
        map.push(g.pick(&rest));
    }
    let perm = g.permutation(map.len());
    let map: Vec<usize> = perm.iter().map(|&i| map[i]).collect();
    let nfree = g.range(0, 2) as usize;
    let nbd = ob.len() + nfree;
    // Which batch slots carry the operand's batching dimensions (in order).
    let mut slots: Vec<usize> = (0..nbd).collect();
    while slots.len() > ob.len() {
        let i = g.below(slots.len());
        slots.remove(i);
    }
    let mut batch_sizes = Vec::new();
    let mut k = 0;
    for i in 0..nbd {
        if k < slots.len() && slots[k] == i {
            batch_sizes.push(od[ob[k]]);
            k += 1;
        } else {
            batch_sizes.push(g.range(0, 4));
        }
    }
    let implicit = map.len() == 1 && g.coin(30);
    let ivd = if implicit {
        nbd
    } else {
        g.range(0, nbd as i64) as usize
    };
    let mut dims = batch_sizes.clone();
    if !implicit {
        dims.insert(ivd, map.len() as i64);
    }
    let batching = slots
        .iter()
        .map(|&s| if !implicit && s >= ivd { s + 1 } else { s })
        .collect();
    Some((
        ob,
        map,
        Indices {
            dims,
            index_vector_dim: ivd,
            batching,
            batch_sizes,
        },
    ))
}

/// An index array whose component `j` (along `ivd`) is in range when in `0..=bounds[j]`.
fn index_array(
    g: &mut Gen,
    c: &mut Comp,
    ity: PrimitiveType,
    idx: &Indices,
    bounds: &[i64],
) -> InstrId {
    let n = product(&idx.dims);
    let r = g.below(100);
    if r < 15 {
        if let Some(v) = g.pool_pick(c, |s| s.ty == ity && s.dims == idx.dims) {
            return v;
        }
    }
    if r < 60 && c.entry && c.n_params < g.cfg.max_params {
        return g.add_param(c, arr(ity, idx.dims.clone()));
    }
    if n <= 64 {
        let stride: usize = idx
            .dims
            .iter()
            .skip(idx.index_vector_dim + 1)
            .map(|&d| d as usize)
            .product();
        let comps = if idx.index_vector_dim < idx.dims.len() {
            idx.dims[idx.index_vector_dim] as usize
        } else {
            1
        };
        let vals: Vec<Scalar> = (0..n as usize)
            .map(|i| {
                let j = if comps == 0 {
                    0
                } else {
                    (i / stride.max(1)) % comps
                };
                g.index_constant_value(ity, bounds.get(j).copied().unwrap_or(0))
            })
            .collect();
        let lit =
            hlo::ArrayLiteral::from_scalars(ity, idx.dims.clone(), &vals).expect("index literal");
        return g.add_constant(c, lit);
    }
    g.value(c, ity, &idx.dims)
}

fn gather(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let x = any_operand(g, c, 1, false);
    let s = shape_of(g, c, x);
    let od = s.dims.clone();
    let (ob, map, idx) = index_layout(g, &od)?;
    let collapsed: Vec<usize> = (0..od.len())
        .filter(|i| !ob.contains(i) && od[*i] >= 1 && g.coin(40))
        .collect();
    let sizes: Vec<i64> = (0..od.len())
        .map(|i| {
            if ob.contains(&i) || collapsed.contains(&i) {
                1
            } else {
                g.range(0, od[i])
            }
        })
        .collect();
    let offset_src: Vec<usize> = (0..od.len())
        .filter(|i| !ob.contains(i) && !collapsed.contains(i))
        .collect();
    let out_rank = idx.batch_sizes.len() + offset_src.len();
    let mut offset_dims: Vec<usize> = (0..out_rank).collect();
    while offset_dims.len() > offset_src.len() {
        let i = g.below(offset_dims.len());
        offset_dims.remove(i);
    }
    let mut out = Vec::with_capacity(out_rank);
    let (mut bi, mut oi) = (0, 0);
    for i in 0..out_rank {
        if oi < offset_dims.len() && offset_dims[oi] == i {
            out.push(sizes[offset_src[oi]]);
            oi += 1;
        } else {
            out.push(idx.batch_sizes[bi]);
            bi += 1;
        }
    }
    if !g.fits(&out) || !g.fits(&idx.dims) {
        return None;
    }
    let bounds: Vec<i64> = map.iter().map(|&d| od[d] - sizes[d]).collect();
    let ity = g.index_type();
    let ind = index_array(g, c, ity, &idx, &bounds);
    let mut attrs = vec![
        ("offset_dims", ints(&offset_dims)),
        ("collapsed_slice_dims", ints(&collapsed)),
        ("start_index_map", ints(&map)),
    ];
    if !ob.is_empty() {
        attrs.push(("operand_batching_dims", ints(&ob)));
        attrs.push(("start_indices_batching_dims", ints(&idx.batching)));
    }
    attrs.push(("index_vector_dim", Attr::Int(idx.index_vector_dim as i64)));
    attrs.push(("slice_sizes", Attr::Ints(sizes)));
    Some(g.add(c, Opcode::Gather, arr(s.ty, out), vec![x, ind], attrs))
}

fn scatter(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let x = any_operand(g, c, 1, true);
    let s = shape_of(g, c, x);
    let od = s.dims.clone();
    let (ob, map, idx) = index_layout(g, &od)?;
    let inserted: Vec<usize> = (0..od.len())
        .filter(|i| !ob.contains(i) && od[*i] >= 1 && g.coin(40))
        .collect();
    let window_src: Vec<usize> = (0..od.len())
        .filter(|i| !ob.contains(i) && !inserted.contains(i))
        .collect();
    let wsizes: Vec<i64> = window_src.iter().map(|&d| g.range(0, od[d])).collect();
    let urank = idx.batch_sizes.len() + window_src.len();
    let mut uwd: Vec<usize> = (0..urank).collect();
    while uwd.len() > window_src.len() {
        let i = g.below(uwd.len());
        uwd.remove(i);
    }
    let mut ud = Vec::with_capacity(urank);
    let (mut bi, mut wi) = (0, 0);
    for i in 0..urank {
        if wi < uwd.len() && uwd[wi] == i {
            ud.push(wsizes[wi]);
            wi += 1;
        } else {
            ud.push(idx.batch_sizes[bi]);
            bi += 1;
        }
    }
    if !g.fits(&ud) || !g.fits(&idx.dims) {
        return None;
    }
    // Full-window bounds: a start is in range when the whole update window fits.
    let bounds: Vec<i64> = map
        .iter()
        .map(|&d| match window_src.iter().position(|&w| w == d) {
            Some(k) => od[d] - wsizes[k],
            None => od[d] - 1,
        })
        .collect();
    let ity = g.index_type();
    let ind = index_array(g, c, ity, &idx, &bounds);
    let upd = g.value(c, s.ty, &ud);
    let kind = pick_red(g, s.ty);
    let comp = reducer(g, &[(kind, s.ty)], c.depth);
    let mut attrs = vec![
        ("update_window_dims", ints(&uwd)),
        ("inserted_window_dims", ints(&inserted)),
        ("scatter_dims_to_operand_dims", ints(&map)),
    ];
    if !ob.is_empty() {
        attrs.push(("input_batching_dims", ints(&ob)));
        attrs.push(("scatter_indices_batching_dims", ints(&idx.batching)));
    }
    attrs.push(("index_vector_dim", Attr::Int(idx.index_vector_dim as i64)));
    attrs.push(("to_apply", Attr::Comp(comp)));
    Some(g.add(
        c,
        Opcode::Scatter,
        arr(s.ty, s.dims),
        vec![x, ind, upd],
        attrs,
    ))
}

// ----- sort -----

fn sort(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let keys: Vec<PrimitiveType> = g
        .arith
        .iter()
        .copied()
        .filter(|t| !t.is_complex())
        .collect();
    if keys.is_empty() {
        return None;
    }
    let x0 = match g.pool_pick(c, |s| s.rank() >= 1 && keys.contains(&s.ty)) {
        Some(x) if !g.coin(15) => x,
        _ => {
            let ty = g.pick(&keys);
            let r = g.range(1, g.cfg.max_rank.max(1) as i64) as usize;
            let d = g.fresh_dims(r);
            g.value(c, ty, &d)
        }
    };
    let s = shape_of(g, c, x0);
    let n = g.range(1, 3) as usize;
    let mut xs = vec![(x0, s.ty)];
    // XLA:CPU rejects multi-operand sorts that mix a 2-bit type with another type
    // ("INTERNAL: Inputs must have the same shape").
    let two_bit = |t: PrimitiveType| t.bit_width() == 2;
    let others: Vec<PrimitiveType> = if two_bit(s.ty) {
        vec![s.ty]
    } else {
        g.arith.iter().copied().filter(|&t| !two_bit(t)).collect()
    };
    for _ in 1..n {
        let t = g.pick_opt(&others).unwrap_or(s.ty);
        let v = g.value(c, t, &s.dims);
        xs.push((v, t));
    }
    let dim = g.below(s.rank());
    // Comparator: a strict weak order on key 0 (TOTALORDER for floats), optionally then key 1.
    let mut cc = g.new_comp("compare", c.depth + 1, false, false);
    let params: Vec<InstrId> = xs
        .iter()
        .flat_map(|&(_, t)| [t, t])
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| g.add_param(&mut cc, Shape::scalar(t)))
        .collect();
    let dir = g.pick(&["LT", "GT"]);
    let total = |t: PrimitiveType| -> Vec<(&'static str, Attr)> {
        let mut a = vec![("direction", Attr::Ident(dir.to_string()))];
        if t.is_float() {
            a.push(("type", Attr::Ident("TOTALORDER".into())));
        }
        a
    };
    let lt0 = g.add(
        &mut cc,
        Opcode::Compare,
        Shape::scalar(Pred),
        vec![params[0], params[1]],
        total(s.ty),
    );
    let mut root = lt0;
    if xs.len() >= 2 && !xs[1].1.is_complex() && g.coin(50) {
        let t1 = xs[1].1;
        let mut eqa = total(s.ty);
        eqa[0].1 = Attr::Ident("EQ".into());
        let eq0 = g.add(
            &mut cc,
            Opcode::Compare,
            Shape::scalar(Pred),
            vec![params[0], params[1]],
            eqa,
        );
        let lt1 = g.add(
            &mut cc,
            Opcode::Compare,
            Shape::scalar(Pred),
            vec![params[2], params[3]],
            total(t1),
        );
        let both = g.add(
            &mut cc,
            Opcode::And,
            Shape::scalar(Pred),
            vec![eq0, lt1],
            vec![],
        );
        root = g.add(
            &mut cc,
            Opcode::Or,
            Shape::scalar(Pred),
            vec![lt0, both],
            vec![],
        );
    }
    let mut comp = g.finish(cc, root);
    if g.coin(g.cfg.nested_control_percent) {
        // The comparator calls the one just built: control flow inside a comparator.
        let mut outer = g.new_comp("compare_outer", c.depth + 1, false, false);
        let ps: Vec<InstrId> = xs
            .iter()
            .flat_map(|&(_, t)| [t, t])
            .collect::<Vec<_>>()
            .into_iter()
            .map(|t| g.add_param(&mut outer, Shape::scalar(t)))
            .collect();
        let root = g.add(
            &mut outer,
            Opcode::Call,
            Shape::scalar(Pred),
            ps,
            vec![("to_apply", Attr::Comp(comp))],
        );
        comp = g.finish(outer, root);
    }
    let stable = n > 1 || g.coin(70);
    let shapes = xs.iter().map(|&(_, t)| arr(t, s.dims.clone())).collect();
    let ops = xs.iter().map(|x| x.0).collect();
    let mut attrs = vec![("dimensions", ints(&[dim]))];
    if stable {
        attrs.push(("is_stable", Attr::Bool(true)));
    }
    attrs.push(("to_apply", Attr::Comp(comp)));
    Some(results(g, c, Opcode::Sort, shapes, ops, attrs))
}

// ----- control flow -----

fn body_size(g: &mut Gen) -> usize {
    g.range(0, g.cfg.max_body_instructions as i64) as usize
}

/// Picks 1..=3 pool values (making one when the pool is empty).
fn some_values(g: &mut Gen, c: &mut Comp) -> Vec<InstrId> {
    let k = g.range(1, 3);
    (0..k).map(|_| any_operand(g, c, 0, false)).collect()
}

/// A result shape for a called computation: a pool value's, or fresh.
fn result_shape(g: &mut Gen, c: &mut Comp) -> (PrimitiveType, Vec<i64>) {
    if !g.coin(30) {
        if let Some(v) = g.pick_opt(&c.pool.clone()) {
            let s = shape_of(g, c, v);
            return (s.ty, s.dims);
        }
    }
    let ty = g.pick(&g.types.clone());
    let r = g.fresh_rank();
    (ty, g.fresh_dims(r))
}

/// A computation with parameters of the given shapes (tuple parameters are unpacked into the
/// pool), a random body and a root of the requested array shape.
fn called(
    g: &mut Gen,
    base: &str,
    depth: usize,
    params: &[Shape],
    out: &(PrimitiveType, Vec<i64>),
) -> CompId {
    let mut b = g.new_comp(base, depth + 1, false, false);
    for p in params {
        let id = g.add_param(&mut b, p.clone());
        if let Shape::Tuple(t) = p {
            for i in 0..t.len() {
                g.gte(&mut b, id, i);
            }
        }
    }
    let n = body_size(g);
    g.fill(&mut b, n);
    let root = g.value(&mut b, out.0, &out.1);
    g.finish(b, root)
}

/// An s32 scalar computed from data: a scalar of the pool converted to s32 (floats saturate,
/// NaN is 0), a new s32 parameter of the entry, or else a constant.
fn data_s32(g: &mut Gen, c: &mut Comp) -> InstrId {
    let from_pool = g.coin(60);
    let scalar = if from_pool {
        g.pool_pick(c, |s| {
            s.dims.is_empty() && !s.ty.is_complex() && (s.ty.is_integer() || s.ty.is_float())
        })
    } else {
        None
    };
    match scalar {
        Some(x) if shape_of(g, c, x).ty == S32 => x,
        Some(x) => g.add(c, Opcode::Convert, Shape::scalar(S32), vec![x], vec![]),
        None if c.entry && c.n_params < g.cfg.max_params => g.add_param(c, Shape::scalar(S32)),
        None => {
            let v = g.index_constant_value(S32, g.cfg.max_trip_count);
            g.const_scalar(c, S32, v)
        }
    }
}

fn while_loop(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    // A data-dependent trip count: the bound, clamped to 0..=max_trip_count, rides in the
    // state after the counter, and the body passes it on unchanged.
    let data_bound = g.coin(g.cfg.nested_control_percent);
    let vals = some_values(g, c);
    let start = g.range(-2, 0);
    let init = g.const_scalar(c, S32, Scalar::S(start));
    let mut elems = vec![init];
    if data_bound {
        let raw = data_s32(g, c);
        let lo = g.const_scalar(c, S32, Scalar::S(0));
        let hi = g.const_scalar(c, S32, Scalar::S(g.cfg.max_trip_count.max(0)));
        let bound = g.add(
            c,
            Opcode::Clamp,
            Shape::scalar(S32),
            vec![lo, raw, hi],
            vec![],
        );
        elems.push(bound);
    }
    let first_val = elems.len();
    elems.extend(&vals);
    let t = g.tuple(c, elems);
    let state = c.instrs[t].shape.clone();
    let limit = if data_bound {
        0
    } else {
        g.range(0, g.cfg.max_trip_count.max(0))
    };
    // condition: counter < limit (or the bound in the state)
    let mut cc = g.new_comp("cond", c.depth + 1, false, false);
    let p = g.add_param(&mut cc, state.clone());
    let ctr = g.gte(&mut cc, p, 0);
    let lim = if data_bound {
        g.gte(&mut cc, p, 1)
    } else {
        g.const_scalar(&mut cc, S32, Scalar::S(limit))
    };
    let root = g.add(
        &mut cc,
        Opcode::Compare,
        Shape::scalar(Pred),
        vec![ctr, lim],
        vec![("direction", Attr::Ident("LT".into()))],
    );
    let cond = g.finish(cc, root);
    // body: counter + 1, new values of the same shapes
    let mut bc = g.new_comp("body", c.depth + 1, false, false);
    let p = g.add_param(&mut bc, state.clone());
    let gtes: Vec<InstrId> = (0..first_val + vals.len())
        .map(|i| g.gte(&mut bc, p, i))
        .collect();
    let n = body_size(g);
    g.fill(&mut bc, n);
    let one = g.const_scalar(&mut bc, S32, Scalar::S(1));
    let next = g.add(
        &mut bc,
        Opcode::Add,
        Shape::scalar(S32),
        vec![gtes[0], one],
        vec![],
    );
    let mut outs = vec![next];
    if data_bound {
        outs.push(gtes[1]);
    }
    for &v in &vals {
        let s = shape_of(g, c, v);
        outs.push(g.value(&mut bc, s.ty, &s.dims));
    }
    let root = g.tuple(&mut bc, outs);
    let body = g.finish(bc, root);
    let w = g.add(
        c,
        Opcode::While,
        state,
        vec![t],
        vec![("condition", Attr::Comp(cond)), ("body", Attr::Comp(body))],
    );
    let mut last = w;
    for i in 0..first_val + vals.len() {
        last = g.gte(c, w, i);
    }
    Some(last)
}

fn conditional(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    // 4 or 5 branches indexed by an s32 computed from data (XLA runs the last branch for an
    // index out of range).
    let from_data = g.coin(g.cfg.nested_control_percent);
    let indexed = from_data || g.coin(50);
    let nb = if from_data {
        g.range(4, 5) as usize
    } else if indexed {
        g.range(1, 3) as usize
    } else {
        2
    };
    let sel = if from_data {
        data_s32(g, c)
    } else if indexed {
        g.index_scalar(c, S32, nb as i64 - 1)
    } else {
        g.value(c, Pred, &[])
    };
    let out = result_shape(g, c);
    let mut ops = vec![sel];
    let mut comps = Vec::new();
    for _ in 0..nb {
        let v = any_operand(g, c, 0, false);
        let sh = c.instrs[v].shape.clone();
        comps.push(called(g, "branch", c.depth, &[sh], &out));
        ops.push(v);
    }
    let attrs = if indexed {
        vec![("branch_computations", Attr::Comps(comps))]
    } else {
        vec![
            ("true_computation", Attr::Comp(comps[0])),
            ("false_computation", Attr::Comp(comps[1])),
        ]
    };
    Some(g.add(c, Opcode::Conditional, arr(out.0, out.1), ops, attrs))
}

fn call(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let args = some_values(g, c);
    let shapes: Vec<Shape> = args.iter().map(|&a| c.instrs[a].shape.clone()).collect();
    let out = result_shape(g, c);
    let comp = called(g, "called", c.depth, &shapes, &out);
    let mut attrs = vec![("to_apply", Attr::Comp(comp))];
    if g.coin(g.cfg.composite_call_percent) {
        // A composite call as jax's `lax.composite` writes it (an array result: with a tuple
        // result jaxlib 0.10.2's HLO -> MLIR import refuses it, "has 1 result(s), but
        // decomposition has 2").
        let version = g.range(0, 2);
        attrs.push(("is_composite", Attr::Raw("true".into())));
        attrs.push((
            "frontend_attributes",
            Attr::Raw(format!(
                "{{composite.attributes=\"{{n = {} : i32}}\",composite.name=\"hlo_diff.composite_{}\",composite.version=\"{version}\"}}",
                g.range(0, 9),
                g.below(4)
            )),
        ));
    }
    Some(g.add(c, Opcode::Call, arr(out.0, out.1), args, attrs))
}

fn map(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    if g.arith.is_empty() {
        return None;
    }
    let x0 = any_operand(g, c, 0, true);
    let s = shape_of(g, c, x0);
    let n = g.range(1, 2);
    let mut xs = vec![(x0, s.ty)];
    for _ in 1..n {
        // XLA's verifier rejects map operands of different float precisions: one type for all.
        let v = g.value(c, s.ty, &s.dims);
        xs.push((v, s.ty));
    }
    let mut mc = g.new_comp("mapped", c.depth + 1, false, true);
    for &(_, t) in &xs {
        g.add_param(&mut mc, Shape::scalar(t));
    }
    let k = g.range(1, g.cfg.max_body_instructions.max(1) as i64) as usize;
    g.fill(&mut mc, k);
    let oty = g.pick(&g.arith.clone());
    let root = g.value(&mut mc, oty, &[]);
    let comp = g.finish(mc, root);
    let dims: Vec<usize> = (0..s.rank()).collect();
    Some(g.add(
        c,
        Opcode::Map,
        arr(oty, s.dims),
        xs.iter().map(|x| x.0).collect(),
        vec![("dimensions", ints(&dims)), ("to_apply", Attr::Comp(comp))],
    ))
}

// ----- tuples -----

fn tuple_gte(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let vals = some_values(g, c);
    let t = g.tuple(c, vals.clone());
    let i = g.below(vals.len());
    Some(g.gte(c, t, i))
}

fn opt_barrier(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let vals = some_values(g, c);
    let t = g.tuple(c, vals.clone());
    let sh = c.instrs[t].shape.clone();
    let b = g.add(c, Opcode::OptimizationBarrier, sh, vec![t], vec![]);
    let mut last = b;
    for i in 0..vals.len() {
        last = g.gte(c, b, i);
    }
    Some(last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hlo::literal::{decode, ArrayLiteral};

    /// `minimum`/`maximum` reductions start from a value no element can beat: never NaN (which
    /// both propagate), and for the 8- and 4-bit types no bit pattern of the type is beyond it.
    #[test]
    fn min_max_identities_are_extremes_of_the_type() {
        for &t in PrimitiveType::ALL_ARRAY.iter().filter(|t| t.is_float()) {
            for r in [Red::Min, Red::Max] {
                let lit = ArrayLiteral::from_scalars(t, vec![], &[identity(r, t)]).unwrap();
                let v = lit.get(0).to_f64();
                assert!(!v.is_nan(), "{r:?} identity of {t} is NaN");
                if t.bit_width() <= 8 {
                    for b in 0..(1u32 << t.bit_width()) {
                        let x = decode(t, &[b as u8]).to_f64();
                        let beats = if r == Red::Min { x > v } else { x < v };
                        assert!(x.is_nan() || !beats, "{t} {b:#x} = {x} beats {r:?} {v}");
                    }
                }
            }
        }
    }
    /// The element types each elementwise op is generated with (XLA's, from `hlo`'s table,
    /// and the generator's restriction) are the ones the generator used before the table
    /// existed, so that a seed keeps meaning the same module. Changing the table's types for
    /// one of these opcodes changes generated modules: this test says so.
    #[test]
    fn elementwise_types_are_the_generators_historical_ones() {
        let int = |t: PrimitiveType| t.is_integer();
        let fc = |t: PrimitiveType| t.is_float() || t.is_complex();
        let sfc = |t: PrimitiveType| t.is_signed_integer() || fc(t);
        let num = |t: PrimitiveType| t.is_integer() || fc(t);
        let pi = |t: PrimitiveType| t == Pred || t.is_integer();
        let nonc = |t: PrimitiveType| t.is_integer() || t.is_float();
        let fl = |t: PrimitiveType| t.is_float();
        let anyt = |_: PrimitiveType| true;
        let historical: Vec<(Opcode, &dyn Fn(PrimitiveType) -> bool)> = vec![
            (Opcode::Abs, &sfc),
            (Opcode::Negate, &num),
            (Opcode::Sign, &sfc),
            (Opcode::Floor, &fl),
            (Opcode::Ceil, &fl),
            (Opcode::RoundNearestAfz, &fl),
            (Opcode::RoundNearestEven, &fl),
            (Opcode::Exp, &fc),
            (Opcode::Expm1, &fc),
            (Opcode::Log, &fc),
            (Opcode::Log1p, &fc),
            (Opcode::Sqrt, &fc),
            (Opcode::Rsqrt, &fc),
            (Opcode::Cbrt, &fl),
            (Opcode::Tanh, &fc),
            (Opcode::Sin, &fc),
            (Opcode::Cos, &fc),
            (Opcode::Tan, &fc),
            (Opcode::Logistic, &fc),
            (Opcode::Erf, &fl),
            (Opcode::IsFinite, &fl),
            (Opcode::Copy, &anyt),
            (Opcode::Add, &num),
            (Opcode::Subtract, &num),
            (Opcode::Multiply, &num),
            (Opcode::Divide, &num),
            (Opcode::Maximum, &nonc),
            (Opcode::Minimum, &nonc),
            (Opcode::Power, &num),
            (Opcode::Remainder, &nonc),
            (Opcode::Atan2, &fc),
            (Opcode::Not, &pi),
            (Opcode::PopulationCount, &int),
            (Opcode::Clz, &int),
            (Opcode::And, &pi),
            (Opcode::Or, &pi),
            (Opcode::Xor, &pi),
            (Opcode::ShiftLeft, &int),
            (Opcode::ShiftRightArithmetic, &int),
            (Opcode::ShiftRightLogical, &int),
        ];
        let ours: Vec<(Opcode, Restriction)> = UNARY
            .iter()
            .chain(BINARY.iter())
            .copied()
            .chain(
                BITWISE_UNARY
                    .iter()
                    .chain(BITWISE_BINARY.iter())
                    .map(|&o| (o, any as Restriction)),
            )
            .collect();
        assert_eq!(ours.len(), historical.len());
        for ((op, r), (hop, h)) in ours.into_iter().zip(historical) {
            assert_eq!(op, hop);
            for t in PrimitiveType::ALL_ARRAY {
                assert_eq!(ew_types(op, r)(t), h(t), "{op} on {t}");
                if h(t) {
                    // The table gives every generated combination a result type.
                    assert!(ew_result(op, t).is_some(), "{op} on {t}");
                }
            }
        }
    }
}

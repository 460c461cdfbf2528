//! Realistic patterns: what jax programs lower to at the sizes real models use, for the code
//! paths XLA CPU takes only there (library fusions such as `__ynn_fusion`, GEMV/GEMM emitters,
//! vectorized and tree reductions, multi-threaded loops, sort past its small-size path).
//!
//! A module whose configuration draws [`Config::realistic_percent`](crate::Config) starts its
//! entry computation with one of these patterns (then the usual random instructions follow, and
//! may use its values); the pattern's result is always an output. Every pattern is valid by
//! construction and stays within `max_elements` (every array) and `max_work` (every dot,
//! convolution and reduction): extents are shrunk until it fits.
//!
//! The patterns, modelled on the programs of `corpora/jax/` and on the bugs users reported:
//! - batched and vmapped `dot`s: batch dimensions, matrix-vector, long contractions, many rows,
//!   with a bias/ReLU/sum-of-squares epilogue;
//! - reductions over inner, middle, outer or several axes of rank 3-8 arrays, of a product
//!   (`sum(a*b, axis=k)`);
//! - broadcast-multiply-reduce (what `einsum` and `vmap(matvec)` lower to);
//! - elementwise chains over 10^4 elements and more;
//! - convolutions with realistic feature counts (NHWC/NCHW, 3x3, strides, SAME padding);
//! - sorts of long rows (also `argsort`: keys with an `iota`);
//! - max and sum pooling (`reduce-window` over NHWC);
//! - `rfft`/`fft` of rows, `top_k` values, and a Cholesky solve (`cholesky` of a positive
//!   definite matrix, then `triangular-solve`): the ops XLA CPU hands to library calls. Their
//!   inputs are made finite and moderate first (`sanitize`), since what a library does with
//!   NaN, infinities or an indefinite matrix is implementation-defined.

use crate::gen::{product, Comp, Gen};
use crate::ops::{arr, identity, ints, reducer, Red};
use hlo::{Attr, ConvDimLabels, InstrId, Opcode, PrimitiveType, Scalar, Shape, Window, WindowDim};
use PrimitiveType::*;

/// The types real programs compute in, in order of preference.
const REAL_FLOATS: [PrimitiveType; 4] = [F32, Bf16, F16, F64];
const REAL_INTS: [PrimitiveType; 3] = [S32, S8, U8];

/// Builds one pattern in the entry computation `c`; its result value, or `None` when the
/// configuration allows none (no usable type).
pub(crate) fn pattern(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let weights = [22, 22, 16, 8, 8, 6, 14, 10, 10, 3];
    match g.weighted(&weights)? {
        0 => batched_dot(g, c),
        1 => axis_reduce(g, c),
        2 => broadcast_multiply_reduce(g, c),
        3 => elementwise_chain(g, c),
        4 => convolution(g, c),
        5 => long_sort(g, c),
        6 => pooling(g, c),
        7 => fft(g, c),
        8 => top_k(g, c),
        _ => linear_solve(g, c),
    }
}

/// A float type of the configuration (f32 most often), else an integer type, else `None`.
fn real_type(g: &mut Gen, floats_only: bool) -> Option<PrimitiveType> {
    let ok = |g: &Gen, t: &PrimitiveType| g.types.contains(t) && g.arith.contains(t);
    let fl: Vec<PrimitiveType> = REAL_FLOATS.iter().copied().filter(|t| ok(g, t)).collect();
    if !fl.is_empty() {
        if fl[0] == F32 && g.coin(60) {
            return Some(F32);
        }
        return Some(g.pick(&fl));
    }
    if floats_only {
        return None;
    }
    let is: Vec<PrimitiveType> = REAL_INTS.iter().copied().filter(|t| ok(g, t)).collect();
    g.pick_opt(&is)
}

/// An extent in `lo..=hi`, log-uniform, often a power of two or one off it (where kernels
/// switch between vector and remainder code).
fn extent(g: &mut Gen, lo: i64, hi: i64) -> i64 {
    let (lo, hi) = (lo.max(1), hi.max(lo.max(1)));
    let (elo, ehi) = (
        63 - lo.leading_zeros() as i64,
        63 - hi.leading_zeros() as i64,
    );
    let e = g.range(elo, ehi);
    let base = 1i64 << e;
    let v = match g.below(4) {
        0 => base,
        1 => base + 1,
        2 => base - 1,
        _ => g.range(base, (base * 2 - 1).min(hi)),
    };
    v.clamp(lo, hi)
}

/// Halves the largest of `dims` (never below 1) until `ok` holds; false if it never does.
fn shrink(dims: &mut [i64], ok: impl Fn(&[i64]) -> bool) -> bool {
    for _ in 0..256 {
        if ok(dims) {
            return true;
        }
        let Some((i, &d)) = dims.iter().enumerate().max_by_key(|(_, &x)| x) else {
            return ok(dims);
        };
        if d <= 1 {
            return ok(dims);
        }
        dims[i] = (d / 2).max(1);
    }
    ok(dims)
}

/// A new entry parameter when the configuration allows one more, else any value.
fn input(g: &mut Gen, c: &mut Comp, ty: PrimitiveType, dims: &[i64]) -> InstrId {
    if c.entry && c.n_params < g.cfg.max_params.max(2) {
        g.add_param(c, arr(ty, dims.to_vec()))
    } else {
        g.value(c, ty, dims)
    }
}

fn scalar_const(g: &mut Gen, c: &mut Comp, ty: PrimitiveType, v: f64) -> InstrId {
    let s = if ty.is_float() {
        Scalar::F(v)
    } else if ty.is_signed_integer() {
        Scalar::S(v as i64)
    } else {
        Scalar::U(v.max(0.0) as u64)
    };
    g.const_scalar(c, ty, s)
}

/// `x` broadcast from `dims_of_x` (positions in `to`) to the shape `to`.
fn broadcast(
    g: &mut Gen,
    c: &mut Comp,
    x: InstrId,
    ty: PrimitiveType,
    to: &[i64],
    dims_of_x: &[usize],
) -> InstrId {
    g.add(
        c,
        Opcode::Broadcast,
        arr(ty, to.to_vec()),
        vec![x],
        vec![("dimensions", ints(dims_of_x))],
    )
}

fn reduce(
    g: &mut Gen,
    c: &mut Comp,
    x: InstrId,
    ty: PrimitiveType,
    dims: &[i64],
    over: &[usize],
    kind: Red,
) -> InstrId {
    let out: Vec<i64> = (0..dims.len())
        .filter(|i| !over.contains(i))
        .map(|i| dims[i])
        .collect();
    let init = g.const_scalar(c, ty, identity(kind, ty));
    let comp = reducer(g, &[(kind, ty)], c.depth);
    g.add(
        c,
        Opcode::Reduce,
        arr(ty, out),
        vec![x, init],
        vec![("dimensions", ints(over)), ("to_apply", Attr::Comp(comp))],
    )
}

fn red_kind(g: &mut Gen) -> Red {
    match g.below(10) {
        0..=5 => Red::Add,
        6 | 7 => Red::Max,
        _ => Red::Min,
    }
}

/// `[batch..., M, K] x [batch..., K, N]` (contracting dimensions on either side; matrix-vector
/// without `N`), one of: matrix-vector with many rows, a long contraction, many rows, square.
fn batched_dot(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let ty = real_type(g, false)?;
    let nb = g.pick(&[0usize, 0, 1, 1, 2]);
    let batch: Vec<i64> = (0..nb).map(|_| extent(g, 1, 16)).collect();
    let (m, k, n) = match g.below(4) {
        0 => (extent(g, 256, 65536), extent(g, 2, 512), None),
        1 => (
            extent(g, 1, 64),
            extent(g, 1024, 65536),
            g.coin(60).then(|| extent(g, 1, 64)),
        ),
        2 => (
            extent(g, 1024, 65536),
            extent(g, 1, 64),
            Some(extent(g, 1, 64)),
        ),
        _ => (
            extent(g, 16, 256),
            extent(g, 16, 256),
            Some(extent(g, 16, 256)),
        ),
    };
    let (max_el, max_work) = (g.cfg.max_elements.max(1), g.cfg.max_work.max(1));
    // [batch..., M, K, N?] shrunk together.
    let mut all: Vec<i64> = batch.clone();
    all.extend([m, k]);
    if let Some(n) = n {
        all.push(n);
    }
    let fits = |d: &[i64]| {
        let b = product(&d[..nb]);
        let (m, k) = (d[nb] as u64, d[nb + 1] as u64);
        let n = d.get(nb + 2).map_or(1, |&n| n as u64);
        b * m * k <= max_el
            && b * k * n <= max_el
            && b * m * n <= max_el
            && b * m * k * n <= max_work
    };
    if !shrink(&mut all, fits) {
        return None;
    }
    let batch = all[..nb].to_vec();
    let (m, k) = (all[nb], all[nb + 1]);
    let n = n.map(|_| all[nb + 2]);
    let lhs_k_last = g.coin(70);
    let mut lhs = batch.clone();
    lhs.extend(if lhs_k_last { [m, k] } else { [k, m] });
    let mut rhs = batch.clone();
    let rc = match n {
        Some(n) => {
            if g.coin(70) {
                rhs.extend([k, n]);
                nb
            } else {
                rhs.extend([n, k]);
                nb + 1
            }
        }
        None => {
            rhs.push(k);
            nb
        }
    };
    let mut out = batch.clone();
    out.push(m);
    if let Some(n) = n {
        out.push(n);
    }
    let x = input(g, c, ty, &lhs);
    let y = input(g, c, ty, &rhs);
    let bd: Vec<usize> = (0..nb).collect();
    let mut attrs = Vec::new();
    if nb > 0 {
        attrs.push(("lhs_batch_dims", ints(&bd)));
        attrs.push(("rhs_batch_dims", ints(&bd)));
    }
    attrs.push((
        "lhs_contracting_dims",
        ints(&[if lhs_k_last { nb + 1 } else { nb }]),
    ));
    attrs.push(("rhs_contracting_dims", ints(&[rc])));
    let d = g.add(c, Opcode::Dot, arr(ty, out.clone()), vec![x, y], attrs);
    let last = out.len() - 1;
    Some(match g.below(5) {
        // bias + ReLU
        0 => {
            let b = input(g, c, ty, &[out[last]]);
            let bb = broadcast(g, c, b, ty, &out, &[last]);
            let s = g.add(c, Opcode::Add, arr(ty, out.clone()), vec![d, bb], vec![]);
            let z = scalar_const(g, c, ty, 0.0);
            let zb = broadcast(g, c, z, ty, &out, &[]);
            g.add(
                c,
                Opcode::Maximum,
                arr(ty, out.clone()),
                vec![s, zb],
                vec![],
            )
        }
        // sum of squares along one axis (jax-ml/jax#39103's shape)
        1 => {
            let sq = g.add(
                c,
                Opcode::Multiply,
                arr(ty, out.clone()),
                vec![d, d],
                vec![],
            );
            let ax = g.below(out.len());
            reduce(g, c, sq, ty, &out, &[ax], Red::Add)
        }
        _ => d,
    })
}

/// A reduction over inner, middle, outer or several axes of a rank 3-8 array, often of a
/// product of two arrays (`sum(a*b, axis=k)`).
fn axis_reduce(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let ty = real_type(g, false)?;
    let rank = g.range(3, 8) as usize;
    let mut dims: Vec<i64> = (0..rank)
        .map(|_| if g.coin(15) { 1 } else { extent(g, 2, 64) })
        .collect();
    let max_el = g.cfg.max_elements.max(1);
    if !shrink(&mut dims, |d| product(d) <= max_el) {
        return None;
    }
    let a = input(g, c, ty, &dims);
    let x = if g.coin(60) {
        let b = input(g, c, ty, &dims);
        g.add(
            c,
            Opcode::Multiply,
            arr(ty, dims.clone()),
            vec![a, b],
            vec![],
        )
    } else {
        a
    };
    let over: Vec<usize> = match g.below(4) {
        0 => vec![rank - 1],
        1 => vec![0],
        2 => vec![g.range(1, rank as i64 - 2) as usize],
        _ => {
            let mut v: Vec<usize> = (0..rank).filter(|_| g.coin(40)).collect();
            if v.is_empty() {
                v.push(g.below(rank));
            }
            v
        }
    };
    let kind = if ty.is_float() { red_kind(g) } else { Red::Add };
    Some(reduce(g, c, x, ty, &dims, &over, kind))
}

/// `einsum`-like: two arrays, each over some axes of a rank 3-5 shape (both over the reduced
/// ones), broadcast to it, multiplied, and reduced over the shared axes.
fn broadcast_multiply_reduce(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let ty = real_type(g, false)?;
    let rank = g.range(3, 5) as usize;
    let mut dims: Vec<i64> = (0..rank).map(|_| extent(g, 1, 256)).collect();
    let max_el = g.cfg.max_elements.max(1);
    if !shrink(&mut dims, |d| product(d) <= max_el) {
        return None;
    }
    let n_red = g.range(1, 2) as usize;
    let perm = g.permutation(rank);
    let mut red: Vec<usize> = perm[..n_red].to_vec();
    red.sort_unstable();
    let mut in_a: Vec<usize> = Vec::new();
    let mut in_b: Vec<usize> = Vec::new();
    for i in 0..rank {
        if red.contains(&i) {
            in_a.push(i);
            in_b.push(i);
        } else {
            // Batch axes (both), or one side's free axis.
            match g.below(3) {
                0 => {
                    in_a.push(i);
                    in_b.push(i);
                }
                1 => in_a.push(i),
                _ => in_b.push(i),
            }
        }
    }
    let sub = |ax: &[usize]| -> Vec<i64> { ax.iter().map(|&i| dims[i]).collect() };
    let a = input(g, c, ty, &sub(&in_a));
    let b = input(g, c, ty, &sub(&in_b));
    let ab = broadcast(g, c, a, ty, &dims, &in_a);
    let bb = broadcast(g, c, b, ty, &dims, &in_b);
    let p = g.add(
        c,
        Opcode::Multiply,
        arr(ty, dims.clone()),
        vec![ab, bb],
        vec![],
    );
    Some(reduce(g, c, p, ty, &dims, &red, Red::Add))
}

/// A chain of elementwise operations over one array of 10^4 elements or more.
fn elementwise_chain(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let ty = real_type(g, false)?;
    let max_el = g.cfg.max_elements.max(1) as i64;
    let n = extent(g, 10_000.min(max_el), max_el);
    let dims = match g.below(3) {
        0 => vec![n],
        1 => {
            let k = extent(g, 1, 512).min(n);
            vec![(n / k).max(1), k]
        }
        _ => {
            let k = extent(g, 1, 64).min(n);
            let j = extent(g, 1, 64).min((n / k).max(1));
            vec![(n / k / j).max(1), j, k]
        }
    };
    let mut x = input(g, c, ty, &dims);
    let float_unary = [
        Opcode::Exp,
        Opcode::Tanh,
        Opcode::Logistic,
        Opcode::Negate,
        Opcode::Abs,
        Opcode::Sqrt,
        Opcode::Log,
        Opcode::Sin,
        Opcode::Floor,
    ];
    let binary = [
        Opcode::Add,
        Opcode::Subtract,
        Opcode::Multiply,
        Opcode::Maximum,
        Opcode::Minimum,
    ];
    let len = g.range(3, 10);
    let shape = arr(ty, dims.clone());
    for _ in 0..len {
        x = match g.below(3) {
            0 if ty.is_float() => {
                let op = g.pick(&float_unary);
                g.add(c, op, shape.clone(), vec![x], vec![])
            }
            0 | 1 => {
                let op = g.pick(&binary);
                let y = if g.coin(40) {
                    input(g, c, ty, &dims)
                } else {
                    let v = g.range(-4, 4) as f64 / 2.0;
                    let s = scalar_const(g, c, ty, v);
                    broadcast(g, c, s, ty, &dims, &[])
                };
                g.add(c, op, shape.clone(), vec![x, y], vec![])
            }
            _ => {
                let z = scalar_const(g, c, ty, 0.0);
                let zb = broadcast(g, c, z, ty, &dims, &[]);
                let p = g.add(
                    c,
                    Opcode::Compare,
                    arr(PrimitiveType::Pred, dims.clone()),
                    vec![x, zb],
                    vec![("direction", Attr::Ident("GT".into()))],
                );
                let y = input(g, c, ty, &dims);
                g.add(c, Opcode::Select, shape.clone(), vec![p, x, y], vec![])
            }
        };
    }
    Some(x)
}

/// A 2-d convolution with realistic feature counts: NHWC or NCHW input, HWIO kernel, 1x1 to
/// 3x3 windows, strides 1-2, SAME or VALID padding.
fn convolution(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let ty = real_type(g, true)?;
    let mut d = [
        extent(g, 1, 4),                   // batch
        extent(g, 4, 32),                  // height
        extent(g, 4, 32),                  // width
        g.pick(&[1i64, 3, 8, 16, 32, 64]), // input features
        g.pick(&[4i64, 8, 16, 32, 64]),    // output features
    ];
    let k = g.range(1, 3);
    let stride = g.range(1, 2);
    let same = g.coin(60);
    let (max_el, max_work) = (g.cfg.max_elements.max(1), g.cfg.max_work.max(1));
    let fits = |d: &[i64]| {
        let (n, h, w, ci, co) = (
            d[0] as u64,
            d[1] as u64,
            d[2] as u64,
            d[3] as u64,
            d[4] as u64,
        );
        n * h * w * ci.max(co) <= max_el && n * h * w * co * ci * (k * k) as u64 <= max_work
    };
    if !shrink(&mut d, fits) {
        return None;
    }
    let [n, h, w, ci, co] = d;
    let (lo, hi) = if same { ((k - 1) / 2, k / 2) } else { (0, 0) };
    let wd = WindowDim {
        size: k,
        stride,
        padding_low: lo,
        padding_high: hi,
        ..WindowDim::default()
    };
    let (wh, ww) = (wd.clone(), wd);
    let out_sp = |x: i64| {
        let padded = x + lo + hi;
        if padded < k {
            0
        } else {
            (padded - k) / stride + 1
        }
    };
    let (oh, ow) = (out_sp(h), out_sp(w));
    let nchw = g.coin(30);
    let (input_dims, labels_in) = if nchw {
        (vec![n, ci, h, w], (0, 1, vec![2, 3]))
    } else {
        (vec![n, h, w, ci], (0, 3, vec![1, 2]))
    };
    let out_dims = if nchw {
        vec![n, co, oh, ow]
    } else {
        vec![n, oh, ow, co]
    };
    let labels = ConvDimLabels {
        input_batch: labels_in.0,
        input_feature: labels_in.1,
        input_spatial: labels_in.2.clone(),
        kernel_input_feature: 2,
        kernel_output_feature: 3,
        kernel_spatial: vec![0, 1],
        output_batch: labels_in.0,
        output_feature: labels_in.1,
        output_spatial: labels_in.2,
    };
    let x = input(g, c, ty, &input_dims);
    let kern = input(g, c, ty, &[k, k, ci, co]);
    Some(g.add(
        c,
        Opcode::Convolution,
        arr(ty, out_dims),
        vec![x, kern],
        vec![
            ("window", Attr::Window(Window { dims: vec![wh, ww] })),
            ("dim_labels", Attr::ConvDims(labels)),
        ],
    ))
}

/// A sort of long rows: keys alone, or keys with an `iota` (what `argsort` lowers to).
fn long_sort(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let ty = real_type(g, false)?;
    let mut dims = vec![extent(g, 1, 64), extent(g, 256, 16384)];
    let max_el = g.cfg.max_elements.max(1);
    if !shrink(&mut dims, |d| product(d) <= max_el) {
        return None;
    }
    let dim = if g.coin(80) { 1 } else { 0 };
    let keys = input(g, c, ty, &dims);
    let arg = g.coin(50);
    let mut cc = g.new_comp("compare", c.depth + 1, false, false);
    let mut ps = vec![
        g.add_param(&mut cc, Shape::scalar(ty)),
        g.add_param(&mut cc, Shape::scalar(ty)),
    ];
    if arg {
        ps.push(g.add_param(&mut cc, Shape::scalar(S32)));
        ps.push(g.add_param(&mut cc, Shape::scalar(S32)));
    }
    let mut attrs = vec![("direction", Attr::Ident(g.pick(&["LT", "GT"]).to_string()))];
    if ty.is_float() {
        attrs.push(("type", Attr::Ident("TOTALORDER".into())));
    }
    let root = g.add(
        &mut cc,
        Opcode::Compare,
        Shape::scalar(Pred),
        vec![ps[0], ps[1]],
        attrs,
    );
    let comp = g.finish(cc, root);
    let sort_attrs = |comp| {
        vec![
            ("dimensions", ints(&[dim])),
            ("is_stable", Attr::Bool(true)),
            ("to_apply", Attr::Comp(comp)),
        ]
    };
    if !arg {
        return Some(g.add(
            c,
            Opcode::Sort,
            arr(ty, dims.clone()),
            vec![keys],
            sort_attrs(comp),
        ));
    }
    let iota = g.add(
        c,
        Opcode::Iota,
        arr(S32, dims.clone()),
        vec![],
        vec![("iota_dimension", Attr::Int(dim as i64))],
    );
    let t = g.add(
        c,
        Opcode::Sort,
        Shape::Tuple(vec![arr(ty, dims.clone()), arr(S32, dims.clone())]),
        vec![keys, iota],
        sort_attrs(comp),
    );
    let _keys = g.gte(c, t, 0);
    Some(g.gte(c, t, 1))
}

/// `x` made finite and moderate: NaN and infinities become 0, the rest is clamped to
/// `[-bound, bound]`, and -0 becomes +0.
fn sanitize(
    g: &mut Gen,
    c: &mut Comp,
    x: InstrId,
    ty: PrimitiveType,
    dims: &[i64],
    bound: f64,
) -> InstrId {
    let shape = arr(ty, dims.to_vec());
    let lo = scalar_const(g, c, ty, -bound);
    let lob = broadcast(g, c, lo, ty, dims, &[]);
    let hi = scalar_const(g, c, ty, bound);
    let hib = broadcast(g, c, hi, ty, dims, &[]);
    let cl = g.add(c, Opcode::Clamp, shape.clone(), vec![lob, x, hib], vec![]);
    let fin = g.add(
        c,
        Opcode::IsFinite,
        arr(Pred, dims.to_vec()),
        vec![x],
        vec![],
    );
    let z = scalar_const(g, c, ty, 0.0);
    let zb = broadcast(g, c, z, ty, dims, &[]);
    let sel = g.add(c, Opcode::Select, shape.clone(), vec![fin, cl, zb], vec![]);
    g.add(c, Opcode::Add, shape, vec![sel, zb], vec![])
}

/// Max or sum pooling over the spatial axes of an NHWC array (2x2 or 3x3 windows, strides
/// 1-2), of the array or of `max(a, b)` (a ReLU-like input).
fn pooling(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let ty = real_type(g, true)?;
    let mut d = vec![
        extent(g, 1, 8),
        extent(g, 4, 64),
        extent(g, 4, 64),
        g.pick(&[1i64, 3, 8, 16, 32, 64]),
    ];
    let k = g.range(2, 3);
    let stride = g.range(1, 2).max(if g.coin(60) { k } else { 1 });
    let max_el = g.cfg.max_elements.max(1);
    let max_work = g.cfg.max_work.max(1);
    if !shrink(&mut d, |d| {
        product(d) <= max_el && product(d) * (k * k) as u64 <= max_work
    }) {
        return None;
    }
    let a = input(g, c, ty, &d);
    let x = if g.coin(40) {
        let b = input(g, c, ty, &d);
        g.add(c, Opcode::Maximum, arr(ty, d.clone()), vec![a, b], vec![])
    } else {
        a
    };
    let same = g.coin(30);
    let mut w = Window::default();
    let mut out = Vec::new();
    for (i, &n) in d.iter().enumerate() {
        let spatial = i == 1 || i == 2;
        let (size, st, lo, hi) = if spatial {
            if same {
                (k, stride, (k - 1) / 2, k / 2)
            } else {
                (k.min(n), stride, 0, 0)
            }
        } else {
            (1, 1, 0, 0)
        };
        let padded = n + lo + hi;
        out.push(if padded < size {
            0
        } else {
            (padded - size) / st + 1
        });
        w.dims.push(WindowDim {
            size,
            stride: st,
            padding_low: lo,
            padding_high: hi,
            ..WindowDim::default()
        });
    }
    let kind = if g.coin(60) { Red::Max } else { Red::Add };
    let init = g.const_scalar(c, ty, identity(kind, ty));
    let comp = reducer(g, &[(kind, ty)], c.depth);
    Some(g.add(
        c,
        Opcode::ReduceWindow,
        arr(ty, out),
        vec![x, init],
        vec![("window", Attr::Window(w)), ("to_apply", Attr::Comp(comp))],
    ))
}

/// `rfft` of f32 rows, or `fft` of complex rows made from two f32 arrays (lengths 8-256,
/// within `max_work` for the oracle's direct transform).
fn fft(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    if !(g.types.contains(&F32) && g.arith.contains(&F32)) {
        return None;
    }
    let n = extent(g, 8, 256);
    let mut rows = extent(g, 1, 256);
    let max_work = g.cfg.max_work.max(1) as i64;
    while rows > 1 && rows * n * n > max_work {
        rows /= 2;
    }
    let dims = vec![rows, n];
    let a = input(g, c, F32, &dims);
    let a = sanitize(g, c, a, F32, &dims, 1e3);
    let len = ("fft_length", Attr::Ints(vec![n]));
    if g.coin(50) {
        let out = vec![rows, n / 2 + 1];
        return Some(g.add(
            c,
            Opcode::Fft,
            arr(C64, out),
            vec![a],
            vec![("fft_type", Attr::Ident("RFFT".into())), len],
        ));
    }
    let b = input(g, c, F32, &dims);
    let b = sanitize(g, c, b, F32, &dims, 1e3);
    let z = g.add(
        c,
        Opcode::Complex,
        arr(C64, dims.clone()),
        vec![a, b],
        vec![],
    );
    let ty = if g.coin(50) { "FFT" } else { "IFFT" };
    Some(g.add(
        c,
        Opcode::Fft,
        arr(C64, dims),
        vec![z],
        vec![("fft_type", Attr::Ident(ty.into())), len],
    ))
}

/// The values of `top_k` along the last dimension of rows of 64-4096 elements.
fn top_k(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let ty = real_type(g, true)?;
    let mut dims = vec![extent(g, 1, 64), extent(g, 64, 4096)];
    let max_el = g.cfg.max_elements.max(1);
    if !shrink(&mut dims, |d| product(d) <= max_el) {
        return None;
    }
    let k = extent(g, 1, 64).min(dims[1]);
    let x = input(g, c, ty, &dims);
    let x = sanitize(g, c, x, ty, &dims, 1e4);
    let out = vec![dims[0], k];
    let t = g.add(
        c,
        Opcode::TopK,
        Shape::Tuple(vec![arr(ty, out.clone()), arr(S32, out)]),
        vec![x],
        vec![("k", Attr::Int(k)), ("largest", Attr::Bool(true))],
    );
    // Only the values: which of equal elements comes first (the indices) is the library's.
    Some(g.gte(c, t, 0))
}

/// `A = X Xᵀ + n I` (positive definite), `L = cholesky(A)`, then `L Y = B` solved by
/// `triangular-solve`; optionally batched. Only the solve is a value others may use: the
/// triangle of `L` not asked for is implementation-defined.
fn linear_solve(g: &mut Gen, c: &mut Comp) -> Option<InstrId> {
    let ty = *[F32, F64]
        .iter()
        .find(|t| g.types.contains(t) && g.arith.contains(t))?;
    let n = extent(g, 2, 64);
    let m = extent(g, 1, 32);
    let batch: Vec<i64> = if g.coin(40) {
        vec![extent(g, 1, 8)]
    } else {
        vec![]
    };
    let nb = batch.len();
    let mut sq = batch.clone();
    sq.extend([n, n]);
    let mut rhs = batch.clone();
    rhs.extend([n, m]);
    if product(&sq) * n as u64 > g.cfg.max_work.max(1) || product(&sq) > g.cfg.max_elements {
        return None;
    }
    let x = input(g, c, ty, &sq);
    let x = sanitize(g, c, x, ty, &sq, 4.0);
    let bd: Vec<usize> = (0..nb).collect();
    let mut attrs = Vec::new();
    if nb > 0 {
        attrs.push(("lhs_batch_dims", ints(&bd)));
        attrs.push(("rhs_batch_dims", ints(&bd)));
    }
    attrs.push(("lhs_contracting_dims", ints(&[nb + 1])));
    attrs.push(("rhs_contracting_dims", ints(&[nb + 1])));
    let xxt = g.add(c, Opcode::Dot, arr(ty, sq.clone()), vec![x, x], attrs);
    let r = g.add(
        c,
        Opcode::Iota,
        arr(S32, sq.clone()),
        vec![],
        vec![("iota_dimension", Attr::Int(nb as i64))],
    );
    let col = g.add(
        c,
        Opcode::Iota,
        arr(S32, sq.clone()),
        vec![],
        vec![("iota_dimension", Attr::Int(nb as i64 + 1))],
    );
    let eye = g.add(
        c,
        Opcode::Compare,
        arr(Pred, sq.clone()),
        vec![r, col],
        vec![("direction", Attr::Ident("EQ".into()))],
    );
    let nv = scalar_const(g, c, ty, n as f64);
    let nb_ = broadcast(g, c, nv, ty, &sq, &[]);
    let z = scalar_const(g, c, ty, 0.0);
    let zb = broadcast(g, c, z, ty, &sq, &[]);
    let diag = g.add(
        c,
        Opcode::Select,
        arr(ty, sq.clone()),
        vec![eye, nb_, zb],
        vec![],
    );
    let a = g.add(c, Opcode::Add, arr(ty, sq.clone()), vec![xxt, diag], vec![]);
    let l = g.add(
        c,
        Opcode::Cholesky,
        arr(ty, sq.clone()),
        vec![a],
        vec![("lower", Attr::Bool(true))],
    );
    c.pool.retain(|&v| v != l);
    let b = input(g, c, ty, &rhs);
    let b = sanitize(g, c, b, ty, &rhs, 1e3);
    Some(g.add(
        c,
        Opcode::TriangularSolve,
        arr(ty, rhs),
        vec![l, b],
        vec![
            ("left_side", Attr::Bool(true)),
            ("lower", Attr::Bool(true)),
            ("unit_diagonal", Attr::Bool(false)),
            ("transpose_a", Attr::Ident("NO_TRANSPOSE".into())),
        ],
    ))
}

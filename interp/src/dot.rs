//! dot (general dimension numbers) and convolution.
//!
//! Operands are widened (floats to f64, integers to i64, complex to Complex64); products are
//! accumulated in the wide type and rounded once to the result type. XLA CPU accumulates f32 dots
//! in f32 (in an order of its own), so float results agree within a tolerance, not bit for bit.
//! Integer dots wrap exactly like XLA's (arithmetic modulo 2^width).
//!
//! Under `Accumulation::Narrow` / `NarrowFused` (implementation-choice variants, see `variant`),
//! float results narrower than f64 accumulate in f32 and c64 in single-precision parts, each
//! product and sum rounded (or fused) as XLA CPU's loops do: intermediate overflow then gives
//! inf, or NaN from inf - inf, where the wide sum stays finite.

use crate::attrs;
use crate::convert::convert;
use crate::elementwise::{to_c64s, to_f64s, to_i64s};
use crate::eval::out_dims;
use crate::value::{for_each_index, product, strides, Array, Buffer};
use crate::{invalid, unsupported, Result};
use hlo::{Instruction, PrimitiveType, TypeClass};
use num_complex::Complex64;
use rayon::prelude::*;

/// The accumulation domain.
pub trait Acc: Copy + Send + Sync + 'static {
    const ZERO: Self;
    fn mul_add(self, a: Self, b: Self) -> Self;
    /// `a * b` rounded as the accumulation rounds a product.
    fn mul(a: Self, b: Self) -> Self;
    /// `self + x` rounded as the accumulation rounds a sum.
    fn add(self, x: Self) -> Self;
    /// The size [`ReduceOrder::LargestFirst`] sorts by.
    fn magnitude(&self) -> f64;
}
impl Acc for f64 {
    const ZERO: f64 = 0.0;
    #[inline(always)]
    fn mul_add(self, a: f64, b: f64) -> f64 {
        self + a * b
    }
    #[inline(always)]
    fn mul(a: Self, b: Self) -> Self {
        a * b
    }
    #[inline(always)]
    fn add(self, x: Self) -> Self {
        self + x
    }
    fn magnitude(&self) -> f64 {
        self.abs()
    }
}
impl Acc for i64 {
    const ZERO: i64 = 0;
    #[inline(always)]
    fn mul_add(self, a: i64, b: i64) -> i64 {
        self.wrapping_add(a.wrapping_mul(b))
    }
    #[inline(always)]
    fn mul(a: Self, b: Self) -> Self {
        a.wrapping_mul(b)
    }
    #[inline(always)]
    fn add(self, x: Self) -> Self {
        self.wrapping_add(x)
    }
    fn magnitude(&self) -> f64 {
        self.unsigned_abs() as f64
    }
}
impl Acc for Complex64 {
    const ZERO: Complex64 = Complex64::new(0.0, 0.0);
    #[inline(always)]
    fn mul_add(self, a: Complex64, b: Complex64) -> Complex64 {
        self + a * b
    }
    #[inline(always)]
    fn mul(a: Self, b: Self) -> Self {
        a * b
    }
    #[inline(always)]
    fn add(self, x: Self) -> Self {
        self + x
    }
    fn magnitude(&self) -> f64 {
        self.norm()
    }
}

/// An accumulator of products of `I` values: what [`batched_matmul`] and a convolution fold
/// each output's products into. Every [`Acc`] accumulates its own values; the enclosure
/// accumulates sets into order-free sums. Accumulation is in place: an enclosure's accumulator
/// is large, and copying it per product was half a dot's time.
pub trait Accumulate<I>: Copy + Send + Sync {
    fn zero() -> Self;
    fn mul_add(&mut self, a: I, b: I);
    /// A padding or base-dilation zero of a convolution's lhs times `b`.
    fn pad(&mut self, b: I);
}

impl<T: Acc> Accumulate<T> for T {
    #[inline(always)]
    fn zero() -> Self {
        T::ZERO
    }
    #[inline(always)]
    fn mul_add(&mut self, a: T, b: T) {
        *self = Acc::mul_add(*self, a, b);
    }
    #[inline(always)]
    fn pad(&mut self, b: T) {
        *self = Acc::mul_add(*self, T::ZERO, b);
    }
}

/// f32 accumulation (products and sums rounded to f32).
#[derive(Clone, Copy)]
struct F32Acc(f32);
impl Acc for F32Acc {
    const ZERO: F32Acc = F32Acc(0.0);
    #[inline(always)]
    fn mul_add(self, a: F32Acc, b: F32Acc) -> F32Acc {
        F32Acc(self.0 + a.0 * b.0)
    }
    #[inline(always)]
    fn mul(a: Self, b: Self) -> Self {
        F32Acc(a.0 * b.0)
    }
    #[inline(always)]
    fn add(self, x: Self) -> Self {
        F32Acc(self.0 + x.0)
    }
    fn magnitude(&self) -> f64 {
        self.0.abs() as f64
    }
}
/// f32 accumulation with fused multiply-adds (one rounding per step).
#[derive(Clone, Copy)]
struct F32FmaAcc(f32);
impl Acc for F32FmaAcc {
    const ZERO: F32FmaAcc = F32FmaAcc(0.0);
    #[inline(always)]
    fn mul_add(self, a: F32FmaAcc, b: F32FmaAcc) -> F32FmaAcc {
        F32FmaAcc(a.0.mul_add(b.0, self.0))
    }
    #[inline(always)]
    fn mul(a: Self, b: Self) -> Self {
        F32FmaAcc(a.0 * b.0)
    }
    #[inline(always)]
    fn add(self, x: Self) -> Self {
        F32FmaAcc(self.0 + x.0)
    }
    fn magnitude(&self) -> f64 {
        self.0.abs() as f64
    }
}
/// Single-precision complex accumulation.
#[derive(Clone, Copy)]
struct C32Acc(num_complex::Complex32);
impl Acc for C32Acc {
    const ZERO: C32Acc = C32Acc(num_complex::Complex32::new(0.0, 0.0));
    #[inline(always)]
    fn mul_add(self, a: C32Acc, b: C32Acc) -> C32Acc {
        C32Acc(self.0 + a.0 * b.0)
    }
    #[inline(always)]
    fn mul(a: Self, b: Self) -> Self {
        C32Acc(a.0 * b.0)
    }
    #[inline(always)]
    fn add(self, x: Self) -> Self {
        C32Acc(self.0 + x.0)
    }
    fn magnitude(&self) -> f64 {
        self.0.norm() as f64
    }
}

fn f32s(v: &[f64]) -> Vec<F32Acc> {
    v.iter().map(|&x| F32Acc(x as f32)).collect()
}
fn f32fmas(v: &[f64]) -> Vec<F32FmaAcc> {
    v.iter().map(|&x| F32FmaAcc(x as f32)).collect()
}
fn from_f32fmas(v: Vec<F32FmaAcc>) -> Wide {
    Wide::F(v.into_iter().map(|x| x.0 as f64).collect())
}
fn c32s(v: &[Complex64]) -> Vec<C32Acc> {
    v.iter()
        .map(|x| C32Acc(num_complex::Complex32::new(x.re as f32, x.im as f32)))
        .collect()
}
fn from_f32s(v: Vec<F32Acc>) -> Wide {
    Wide::F(v.into_iter().map(|x| x.0 as f64).collect())
}
fn from_c32s(v: Vec<C32Acc>) -> Wide {
    Wide::C(
        v.into_iter()
            .map(|x| Complex64::new(x.0.re as f64, x.0.im as f64))
            .collect(),
    )
}

/// Whether a result of type `ty` accumulates narrowly under a narrow accumulation.
fn narrow_float(ty: PrimitiveType) -> bool {
    ty.is_float() && ty != PrimitiveType::F64
}

use crate::variant::{Accumulation, ReduceOrder};

enum Wide {
    F(Vec<f64>),
    I(Vec<i64>),
    C(Vec<Complex64>),
}

#[derive(Clone, Copy, PartialEq)]
enum Domain {
    F,
    I,
    C,
}

fn domain(tys: &[PrimitiveType]) -> Domain {
    if tys.iter().any(|t| t.is_complex()) {
        Domain::C
    } else if tys.iter().any(|t| t.is_float()) {
        Domain::F
    } else {
        Domain::I
    }
}

fn widen(b: &Buffer, d: Domain) -> Result<Wide> {
    Ok(match d {
        Domain::F => Wide::F(to_f64s(b)),
        Domain::I => Wide::I(to_i64s(b).ok_or_else(|| unsupported("integer dot of non-integers"))?),
        Domain::C => Wide::C(to_c64s(b)),
    })
}

/// Converts a wide result to the output element type (one rounding).
fn narrow(w: Wide, dims: Vec<usize>, ty: PrimitiveType) -> Result<Array> {
    let a = match w {
        Wide::F(v) => Array::new(PrimitiveType::F64, dims, Buffer::F64(v)),
        Wide::I(v) => Array::new(PrimitiveType::S64, dims, Buffer::S64(v)),
        Wide::C(v) => Array::new(PrimitiveType::C128, dims, Buffer::C128(v)),
    };
    if ty.class() == TypeClass::Unsigned
        || ty.class() == TypeClass::Signed
        || ty == PrimitiveType::Pred
    {
        if a.ty == PrimitiveType::S64 {
            return convert(&a, ty);
        }
    }
    convert(&a, ty)
}

/// out[b][m][n] = sum_k l[b][m][k] * r[b][k][n]
pub(crate) fn batched_matmul<I: Copy + Send + Sync, A: Accumulate<I>>(
    l: &[I],
    r: &[I],
    bsz: usize,
    m: usize,
    k: usize,
    n: usize,
) -> Vec<A> {
    let row = |bm: usize| -> Vec<A> {
        let b = bm / m.max(1);
        let lrow = &l[bm * k..bm * k + k];
        let rb = &r[b * k * n..(b + 1) * k * n];
        let mut acc = vec![A::zero(); n];
        for (kk, &a) in lrow.iter().enumerate() {
            let rr = &rb[kk * n..kk * n + n];
            for (o, &x) in acc.iter_mut().zip(rr) {
                Accumulate::mul_add(o, a, x);
            }
        }
        acc
    };
    let rows = bsz * m;
    if rows * k * n >= (1 << 18) && rows > 1 {
        (0..rows).into_par_iter().flat_map_iter(row).collect()
    } else {
        (0..rows).flat_map(row).collect()
    }
}

/// The elements `outputs` (flat indices into `[bsz, m, n]`) of [`batched_matmul`]'s result,
/// in that order; an index past the end gives an empty accumulator.
pub(crate) fn matmul_elements<I: Copy + Send + Sync, A: Accumulate<I>>(
    l: &[I],
    r: &[I],
    (m, k, n): (usize, usize, usize),
    outputs: &[usize],
) -> Vec<A> {
    outputs
        .iter()
        .map(|&o| {
            let (bm, j) = (o / n.max(1), o % n.max(1));
            let b = bm / m.max(1);
            let mut acc = A::zero();
            let (Some(lrow), Some(rb)) =
                (l.get(bm * k..bm * k + k), r.get(b * k * n..(b + 1) * k * n))
            else {
                return acc;
            };
            for (kk, &a) in lrow.iter().enumerate() {
                acc.mul_add(a, rb[kk * n + j]);
            }
            acc
        })
        .collect()
}

/// [`batched_matmul`] with each output's products summed in `order` (an implementation-choice
/// variant: XLA's blocked kernels add the products in an order of their own, which decides the
/// value where a partial sum overflows or cancels).
fn ordered_matmul<T: Acc>(
    l: &[T],
    r: &[T],
    (bsz, m, k, n): (usize, usize, usize, usize),
    order: ReduceOrder,
) -> Vec<T> {
    if order == ReduceOrder::Sequential {
        return batched_matmul(l, r, bsz, m, k, n);
    }
    let one = |o: usize| -> T {
        let (bm, j) = (o / n.max(1), o % n.max(1));
        let b = bm / m.max(1);
        let lrow = &l[bm * k..bm * k + k];
        let rb = &r[b * k * n..(b + 1) * k * n];
        let products = (0..k).map(|kk| T::mul(lrow[kk], rb[kk * n + j]));
        order.fold(
            T::ZERO,
            products,
            |acc, x| acc.add(x),
            |x: &T| x.magnitude(),
        )
    };
    let outs = bsz * m * n;
    if outs * k >= (1 << 18) && outs > 1 {
        (0..outs).into_par_iter().map(one).collect()
    } else {
        (0..outs).map(one).collect()
    }
}

/// Positions of an operand's elements in the order of `order` (a permutation of its dims).
fn permuted_positions(dims: &[usize], order: &[usize]) -> Vec<usize> {
    let st = strides(dims);
    let pd: Vec<usize> = order.iter().map(|&d| dims[d]).collect();
    let mut out = Vec::with_capacity(product(dims));
    for_each_index(&pd, |idx, _| {
        out.push(idx.iter().zip(order).map(|(&x, &d)| x * st[d]).sum())
    });
    out
}

/// Where a dot's operands and result sit: the batch, free and contracting sizes, and the
/// positions that lay each operand out as `[batch][free][contracting]` (lhs) and
/// `[batch][contracting][free]` (rhs) for [`batched_matmul`].
pub(crate) struct DotPlan {
    pub ty: PrimitiveType,
    pub dims: Vec<usize>,
    pub bsz: usize,
    pub m: usize,
    pub k: usize,
    pub n: usize,
    pub lpos: Vec<usize>,
    pub rpos: Vec<usize>,
}

pub(crate) fn dot_plan(i: &Instruction, ldims: &[usize], rdims: &[usize]) -> Result<DotPlan> {
    let (ty, dims) = out_dims(i)?;
    let lb = attrs::dims(i, "lhs_batch_dims")?;
    let rb = attrs::dims(i, "rhs_batch_dims")?;
    let lc = attrs::dims(i, "lhs_contracting_dims")?;
    let rc = attrs::dims(i, "rhs_contracting_dims")?;
    let ok = lb.len() == rb.len()
        && lc.len() == rc.len()
        && lb.iter().chain(&lc).all(|&d| d < ldims.len())
        && rb.iter().chain(&rc).all(|&d| d < rdims.len())
        && lb.iter().zip(&rb).all(|(&a, &b)| ldims[a] == rdims[b])
        && lc.iter().zip(&rc).all(|(&a, &b)| ldims[a] == rdims[b]);
    if !ok {
        return Err(invalid("inconsistent dot dimension numbers"));
    }
    let lf: Vec<usize> = (0..ldims.len())
        .filter(|d| !lb.contains(d) && !lc.contains(d))
        .collect();
    let rf: Vec<usize> = (0..rdims.len())
        .filter(|d| !rb.contains(d) && !rc.contains(d))
        .collect();
    let bsz: usize = lb.iter().map(|&d| ldims[d]).product();
    let m: usize = lf.iter().map(|&d| ldims[d]).product();
    let k: usize = lc.iter().map(|&d| ldims[d]).product();
    let n: usize = rf.iter().map(|&d| rdims[d]).product();
    let expect: Vec<usize> = lb
        .iter()
        .map(|&d| ldims[d])
        .chain(lf.iter().map(|&d| ldims[d]))
        .chain(rf.iter().map(|&d| rdims[d]))
        .collect();
    if expect != dims {
        return Err(invalid(format!(
            "dot result dims {dims:?}, expected {expect:?}"
        )));
    }
    let lorder: Vec<usize> = lb.iter().chain(&lf).chain(&lc).copied().collect();
    let rorder: Vec<usize> = rb.iter().chain(&rc).chain(&rf).copied().collect();
    Ok(DotPlan {
        ty,
        dims,
        bsz,
        m,
        k,
        n,
        lpos: permuted_positions(ldims, &lorder),
        rpos: permuted_positions(rdims, &rorder),
    })
}

/// `order`: how each output's products are summed (see [`ordered_matmul`]).
pub fn dot(
    i: &Instruction,
    l: &Array,
    r: &Array,
    acc: Accumulation,
    order: ReduceOrder,
) -> Result<Array> {
    let narrow_acc = acc != Accumulation::Wide;
    let p = dot_plan(i, &l.dims, &r.dims)?;
    let (ty, dims) = (p.ty, p.dims.clone());
    let lbuf = l.buf.take(&p.lpos);
    let rbuf = r.buf.take(&p.rpos);
    let d = domain(&[l.ty, r.ty, ty]);
    let sizes = (p.bsz, p.m, p.k, p.n);
    let (bsz, m, k, n) = sizes;
    let out = match (widen(&lbuf, d)?, widen(&rbuf, d)?) {
        (Wide::F(a), Wide::F(b)) if acc == Accumulation::NarrowFused && narrow_float(ty) => {
            from_f32fmas(ordered_matmul(&f32fmas(&a), &f32fmas(&b), sizes, order))
        }
        (Wide::F(a), Wide::F(b)) if narrow_acc && narrow_float(ty) => {
            from_f32s(ordered_matmul(&f32s(&a), &f32s(&b), sizes, order))
        }
        (Wide::C(a), Wide::C(b)) if narrow_acc && ty == PrimitiveType::C64 => {
            from_c32s(ordered_matmul(&c32s(&a), &c32s(&b), sizes, order))
        }
        (Wide::F(a), Wide::F(b)) => Wide::F(ordered_matmul(&a, &b, sizes, order)),
        (Wide::I(a), Wide::I(b)) => Wide::I(batched_matmul(&a, &b, bsz, m, k, n)),
        (Wide::C(a), Wide::C(b)) => Wide::C(ordered_matmul(&a, &b, sizes, order)),
        _ => return Err(invalid("dot operand domains differ")),
    };
    narrow(out, dims, ty)
}

/// Where a convolution reads its operands: for each output element and kernel position, the
/// lhs and rhs base offsets (or a padding / base-dilation zero of the lhs), with the input
/// feature loop stepping by the feature strides.
pub(crate) struct ConvPlan {
    pub ty: PrimitiveType,
    pub dims: Vec<usize>,
    /// For each spatial dim: (output pos, kernel pos) -> input pos or none.
    tables: Vec<Vec<Option<usize>>>,
    lst: Vec<usize>,
    rst: Vec<usize>,
    ost: Vec<usize>,
    kspd: Vec<usize>,
    ospd: Vec<usize>,
    of_per_fg: usize,
    of_per_bg: usize,
    out_batch: usize,
    out_feat: usize,
    k_in: usize,
    ib: usize,
    ifd: usize,
    kif: usize,
    kof: usize,
    ob: usize,
    of: usize,
    isp: Vec<usize>,
    ksp: Vec<usize>,
    osp: Vec<usize>,
}

pub(crate) fn conv_plan(i: &Instruction, ldims: &[usize], rdims: &[usize]) -> Result<ConvPlan> {
    let (ty, dims) = out_dims(i)?;
    let dl = i
        .conv_dims()
        .ok_or_else(|| invalid("convolution without dim_labels"))?;
    let fgc = attrs::int(i, "feature_group_count")?.unwrap_or(1);
    let bgc = attrs::int(i, "batch_group_count")?.unwrap_or(1);
    let nsp = dl.input_spatial.len();
    let default_window = hlo::Window {
        dims: vec![hlo::WindowDim::default(); nsp],
    };
    let w = i.window().unwrap_or(&default_window);
    let u = |x: i64| usize::try_from(x).ok();
    let bad = || invalid("inconsistent convolution dimension numbers");
    let rank = ldims.len();
    if dl.kernel_spatial.len() != nsp
        || dl.output_spatial.len() != nsp
        || w.dims.len() != nsp
        || rank != nsp + 2
        || rdims.len() != rank
        || dims.len() != rank
        || fgc < 1
        || bgc < 1
    {
        return Err(bad());
    }
    let ib = u(dl.input_batch).filter(|&d| d < rank).ok_or_else(bad)?;
    let ifd = u(dl.input_feature).filter(|&d| d < rank).ok_or_else(bad)?;
    let kif = u(dl.kernel_input_feature)
        .filter(|&d| d < rank)
        .ok_or_else(bad)?;
    let kof = u(dl.kernel_output_feature)
        .filter(|&d| d < rank)
        .ok_or_else(bad)?;
    let ob = u(dl.output_batch).filter(|&d| d < rank).ok_or_else(bad)?;
    let of = u(dl.output_feature).filter(|&d| d < rank).ok_or_else(bad)?;
    let spatial = |v: &[i64]| -> Result<Vec<usize>> {
        v.iter()
            .map(|&d| u(d).filter(|&d| d < rank))
            .collect::<Option<_>>()
            .ok_or_else(bad)
    };
    let isp = spatial(&dl.input_spatial)?;
    let ksp = spatial(&dl.kernel_spatial)?;
    let osp = spatial(&dl.output_spatial)?;
    let (fgc, bgc) = (fgc as usize, bgc as usize);
    let in_batch = ldims[ib];
    let in_feat = ldims[ifd];
    let k_in = rdims[kif];
    let k_out = rdims[kof];
    let out_feat = dims[of];
    let out_batch = dims[ob];
    if in_feat % fgc != 0
        || in_feat / fgc != k_in
        || k_out % fgc != 0
        || k_out % bgc != 0
        || in_batch % bgc != 0
        || out_batch * bgc != in_batch
        || out_feat != k_out
    {
        return Err(invalid("convolution feature/batch group sizes do not fit"));
    }
    if w.dims
        .iter()
        .any(|d| d.stride < 1 || d.base_dilation < 1 || d.window_dilation < 1)
    {
        return Err(invalid("bad convolution window"));
    }
    for s in 0..nsp {
        if w.dims[s].size as usize != rdims[ksp[s]] {
            return Err(invalid(
                "window size differs from the kernel's spatial size",
            ));
        }
    }
    let tables: Vec<Vec<Option<usize>>> = (0..nsp)
        .map(|s| {
            let wd = &w.dims[s];
            let (no, nk, ni) = (dims[osp[s]], rdims[ksp[s]], ldims[isp[s]]);
            let mut t = vec![None; no * nk];
            for o in 0..no {
                for k in 0..nk {
                    let x = o as i64 * wd.stride + k as i64 * wd.window_dilation - wd.padding_low;
                    if x >= 0 && x % wd.base_dilation == 0 && ((x / wd.base_dilation) as usize) < ni
                    {
                        let kk = if wd.window_reversal { nk - 1 - k } else { k };
                        t[o * nk + kk] = Some((x / wd.base_dilation) as usize);
                    }
                }
            }
            t
        })
        .collect();
    Ok(ConvPlan {
        ty,
        lst: strides(ldims),
        rst: strides(rdims),
        ost: strides(&dims),
        kspd: ksp.iter().map(|&d| rdims[d]).collect(),
        ospd: osp.iter().map(|&d| dims[d]).collect(),
        of_per_fg: out_feat / fgc,
        of_per_bg: out_feat / bgc,
        out_batch,
        out_feat,
        k_in,
        ib,
        ifd,
        kif,
        kof,
        ob,
        of,
        isp,
        ksp,
        osp,
        tables,
        dims,
    })
}

impl ConvPlan {
    /// Base offsets of the lhs and rhs for (batch, out feature, out spatial, kernel spatial);
    /// the third field is 0 for an input element, 1 for a padding / dilation zero (`None` for
    /// one when `skip_padding`).
    fn locate(
        &self,
        b: usize,
        fo: usize,
        o: &[usize],
        k: &[usize],
        skip_padding: bool,
    ) -> Option<(usize, usize, usize)> {
        let fg = fo / self.of_per_fg;
        let bg = fo / self.of_per_bg;
        let in_b = bg * self.out_batch + b;
        let mut lbase = in_b * self.lst[self.ib] + fg * self.k_in * self.lst[self.ifd];
        let mut rbase = fo * self.rst[self.kof];
        let mut pad = 0;
        for s in 0..self.isp.len() {
            match self.tables[s][o[s] * self.kspd[s] + k[s]] {
                Some(x) => lbase += x * self.lst[self.isp[s]],
                None => pad = 1,
            }
            rbase += k[s] * self.rst[self.ksp[s]];
        }
        if pad == 1 && skip_padding {
            return None;
        }
        Some((lbase, rbase, pad))
    }

    fn place(&self, b: usize, fo: usize, o: &[usize]) -> usize {
        b * self.ost[self.ob]
            + fo * self.ost[self.of]
            + o.iter()
                .zip(&self.osp)
                .map(|(&x, &d)| x * self.ost[d])
                .sum::<usize>()
    }

    /// Every output's products accumulated (row-major operands, output in row-major order).
    pub(crate) fn run<I: Copy + Send + Sync, A: Accumulate<I>>(
        &self,
        lw: &[I],
        rw: &[I],
        skip_padding: bool,
    ) -> Vec<A> {
        let n_out = product(&self.dims);
        let (lfs, rfs) = (self.lst[self.ifd], self.rst[self.kif]);
        let mut out = vec![A::zero(); n_out];
        let per_bf: Vec<Vec<(usize, A)>> = (0..self.out_batch * self.out_feat)
            .into_par_iter()
            .map(|bf| {
                let (b, fo) = (bf / self.out_feat, bf % self.out_feat);
                let mut res = Vec::new();
                for_each_index(&self.ospd, |o, _| {
                    let mut acc = A::zero();
                    for_each_index(&self.kspd, |k, _| {
                        match self.locate(b, fo, o, k, skip_padding) {
                            Some((lbase, rbase, 0)) => {
                                for c in 0..self.k_in {
                                    Accumulate::mul_add(
                                        &mut acc,
                                        lw[lbase + c * lfs],
                                        rw[rbase + c * rfs],
                                    );
                                }
                            }
                            // A padding or base-dilation zero of the lhs: it is multiplied like
                            // any element (StableHLO pads, then takes the dot), so an inf/NaN
                            // kernel value makes the sum NaN, as on XLA.
                            Some((_, rbase, _)) => {
                                for c in 0..self.k_in {
                                    acc.pad(rw[rbase + c * rfs]);
                                }
                            }
                            None => {}
                        }
                    });
                    res.push((self.place(b, fo, o), acc));
                });
                res
            })
            .collect();
        for res in per_bf {
            for (p, v) in res {
                out[p] = v;
            }
        }
        out
    }
}

/// Convolution as the StableHLO spec defines it, including feature and batch groups.
/// `skip_padding`: padding and base-dilation zeros of the lhs are not multiplied (see
/// [`crate::variant::Variant::skip_conv_padding`]); by default they are.
pub fn convolution(
    i: &Instruction,
    l: &Array,
    r: &Array,
    acc: Accumulation,
    skip_padding: bool,
) -> Result<Array> {
    let narrow_acc = acc != Accumulation::Wide;
    let plan = conv_plan(i, &l.dims, &r.dims)?;
    let (ty, dims) = (plan.ty, plan.dims.clone());
    let d = domain(&[l.ty, r.ty, ty]);
    let out = match (widen(&l.buf, d)?, widen(&r.buf, d)?) {
        (Wide::F(a), Wide::F(b)) if acc == Accumulation::NarrowFused && narrow_float(ty) => {
            from_f32fmas(plan.run(&f32fmas(&a), &f32fmas(&b), skip_padding))
        }
        (Wide::F(a), Wide::F(b)) if narrow_acc && narrow_float(ty) => {
            from_f32s(plan.run(&f32s(&a), &f32s(&b), skip_padding))
        }
        (Wide::C(a), Wide::C(b)) if narrow_acc && ty == PrimitiveType::C64 => {
            from_c32s(plan.run(&c32s(&a), &c32s(&b), skip_padding))
        }
        (Wide::F(a), Wide::F(b)) => Wide::F(plan.run(&a, &b, skip_padding)),
        (Wide::I(a), Wide::I(b)) => Wide::I(plan.run(&a, &b, skip_padding)),
        (Wide::C(a), Wide::C(b)) => Wide::C(plan.run(&a, &b, skip_padding)),
        _ => return Err(invalid("convolution operand domains differ")),
    };
    narrow(out, dims, ty)
}

//! Dense linear algebra: the `cholesky` and `triangular-solve` ops, and the LAPACK custom-calls
//! jax emits on CPU (`lapack_{s,d}{potrf,trsm,getrf,geqrf,orgqr,syevd}_ffi`, typed FFI).
//!
//! Every routine reads its operands as f64, computes in f64 and rounds once to the result type.
//! Leading dimensions are batch dimensions (the last two are the matrix); values are logical
//! (row-major) whatever the operand layout, so `a[r][c]` is LAPACK's `A(r+1, c+1)`.
//! LAPACK conventions kept: `potrf` leaves the unreferenced triangle as it was and reports the
//! first non-positive leading minor in `info`; `getrf` returns 1-based pivots and keeps going
//! after a zero pivot (`info` = its 1-based column); `geqrf` uses `slarfg`'s reflector
//! (`beta = -sign(alpha) * norm`, `tau = 0` when the column below the diagonal is zero);
//! `orgqr` forms the first `n` columns of `H_1 ... H_k`; `syevd` returns eigenvalues ascending and
//! unit eigenvectors as columns, each with its largest-magnitude component positive (LAPACK's signs
//! are implementation-defined, see KNOWN_DIFFERENCES.md).

use crate::elementwise::to_f64s;
use crate::eval::arr;
use crate::value::{product, Array, Buffer, Value};
use crate::{attrs, invalid, unsupported, Result};
use hlo::{Instruction, PrimitiveType, Shape};
use num_complex::Complex64;

/// A batch of row-major `rows x cols` matrices in f64.
struct Mats {
    batch: Vec<usize>,
    rows: usize,
    cols: usize,
    data: Vec<f64>,
}

impl Mats {
    fn from(a: &Array, what: &str) -> Result<Mats> {
        if !(a.ty.is_float()) {
            return Err(unsupported(format!("{what} on {}", a.ty)));
        }
        let r = a.dims.len();
        if r < 2 {
            return Err(invalid(format!(
                "{what}: operand of rank {r}, need at least 2"
            )));
        }
        Ok(Mats {
            batch: a.dims[..r - 2].to_vec(),
            rows: a.dims[r - 2],
            cols: a.dims[r - 1],
            data: to_f64s(&a.buf),
        })
    }
    fn count(&self) -> usize {
        product(&self.batch)
    }
    fn size(&self) -> usize {
        self.rows * self.cols
    }
    fn mat(&mut self, b: usize) -> &mut [f64] {
        let s = self.size();
        &mut self.data[b * s..(b + 1) * s]
    }
    fn dims(&self) -> Vec<usize> {
        let mut d = self.batch.clone();
        d.push(self.rows);
        d.push(self.cols);
        d
    }
}

fn to_array(data: Vec<f64>, dims: Vec<usize>, ty: PrimitiveType) -> Result<Array> {
    crate::convert::convert(&Array::new(PrimitiveType::F64, dims, Buffer::F64(data)), ty)
}

fn s32(data: Vec<i32>, dims: Vec<usize>) -> Array {
    Array::new(PrimitiveType::S32, dims, Buffer::S32(data))
}

// ---------------------------------------------------------------------------------------------
// Kernels on one row-major matrix.

/// Cholesky of the `lower` (else upper) triangle of the n x n matrix `a`, in place: the factor
/// replaces that triangle, the other is untouched. Returns LAPACK's `info` (0, or the 1-based order
/// of the first leading minor that is not positive definite, where the factorization stopped).
fn potrf(a: &mut [f64], n: usize, lower: bool) -> i32 {
    // Index of element (r, c) of L (for upper: U = L^T, so L(r, c) is stored at (c, r)).
    let at = |r: usize, c: usize| if lower { r * n + c } else { c * n + r };
    for j in 0..n {
        let mut d = a[at(j, j)];
        for k in 0..j {
            d -= a[at(j, k)] * a[at(j, k)];
        }
        if d <= 0.0 || d.is_nan() {
            a[at(j, j)] = d;
            return j as i32 + 1;
        }
        let d = d.sqrt();
        a[at(j, j)] = d;
        for i in j + 1..n {
            let mut s = a[at(i, j)];
            for k in 0..j {
                s -= a[at(i, k)] * a[at(j, k)];
            }
            a[at(i, j)] = s / d;
        }
    }
    0
}

/// The scalars the triangular kernels run on: f64, and Complex64 for complex solves.
trait Field:
    Copy
    + From<f64>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
{
    /// The complex conjugate (the value itself for reals).
    fn conj(self) -> Self;
}

impl Field for f64 {
    fn conj(self) -> f64 {
        self
    }
}

impl Field for Complex64 {
    fn conj(self) -> Complex64 {
        Complex64::conj(&self)
    }
}

/// The k x k triangular matrix `op(A)` that a solve uses, dense, plus whether it is lower
/// triangular: only `A`'s `lower` (else upper) triangle is read, its diagonal taken as 1 when
/// `unit`, and it is transposed when `trans`; its elements conjugated when `conj` (an adjoint).
fn tri_matrix<T: Field>(
    a: &[T],
    k: usize,
    lower: bool,
    unit: bool,
    trans: bool,
    conj: bool,
) -> (Vec<T>, bool) {
    let mut m = vec![T::from(0.0); k * k];
    for r in 0..k {
        for c in 0..k {
            let inside = if lower { c <= r } else { c >= r };
            if !inside {
                continue;
            }
            let v = if r == c && unit {
                T::from(1.0)
            } else if conj {
                a[r * k + c].conj()
            } else {
                a[r * k + c]
            };
            if trans {
                m[c * k + r] = v;
            } else {
                m[r * k + c] = v;
            }
        }
    }
    (m, lower != trans)
}

/// Solves `m x = rhs` in place for a lower (else upper) triangular k x k `m`.
fn tri_solve<T: Field>(m: &[T], k: usize, lower: bool, x: &mut [T]) {
    if lower {
        for r in 0..k {
            let mut s = x[r];
            for c in 0..r {
                s = s - m[r * k + c] * x[c];
            }
            x[r] = s / m[r * k + r];
        }
    } else {
        for r in (0..k).rev() {
            let mut s = x[r];
            for c in r + 1..k {
                s = s - m[r * k + c] * x[c];
            }
            x[r] = s / m[r * k + r];
        }
    }
}

/// `op(A) X = B` (`left`) or `X op(A) = B`, B (m x n) overwritten by X; `op(A)` is `A`, its
/// transpose (`trans`) or its adjoint (`trans` and `conj`).
#[allow(clippy::too_many_arguments)]
fn trsm<T: Field>(
    a: &[T],
    b: &mut [T],
    m: usize,
    n: usize,
    left: bool,
    lower: bool,
    unit: bool,
    trans: bool,
    conj: bool,
) {
    if left {
        let (t, low) = tri_matrix(a, m, lower, unit, trans, conj);
        let mut col = vec![T::from(0.0); m];
        for c in 0..n {
            for r in 0..m {
                col[r] = b[r * n + c];
            }
            tri_solve(&t, m, low, &mut col);
            for r in 0..m {
                b[r * n + c] = col[r];
            }
        }
    } else {
        // X T = B  <=>  T^T X^T = B^T: solve each row of B with T^T (the conjugation stays).
        let (t, low) = tri_matrix(a, n, lower, unit, !trans, conj);
        for r in 0..m {
            tri_solve(&t, n, low, &mut b[r * n..(r + 1) * n]);
        }
    }
}

/// LU with partial pivoting (LAPACK getrf) of the m x n `a` in place; returns (1-based pivots,
/// info).
fn getrf(a: &mut [f64], m: usize, n: usize) -> (Vec<i32>, i32) {
    let k = m.min(n);
    let mut piv = Vec::with_capacity(k);
    let mut info = 0;
    for j in 0..k {
        // isamax: the first row with the largest magnitude.
        let mut p = j;
        let mut best = a[j * n + j].abs();
        for i in j + 1..m {
            let v = a[i * n + j].abs();
            if v > best {
                best = v;
                p = i;
            }
        }
        piv.push(p as i32 + 1);
        if a[p * n + j] != 0.0 {
            if p != j {
                for c in 0..n {
                    a.swap(j * n + c, p * n + c);
                }
            }
            let d = a[j * n + j];
            for i in j + 1..m {
                a[i * n + j] /= d;
            }
        } else if info == 0 {
            info = j as i32 + 1;
        }
        for i in j + 1..m {
            let l = a[i * n + j];
            if l == 0.0 {
                continue;
            }
            for c in j + 1..n {
                a[i * n + c] -= l * a[j * n + c];
            }
        }
    }
    (piv, info)
}

/// Householder QR (LAPACK geqrf) of the m x n `a` in place; returns tau (min(m, n)).
fn geqrf(a: &mut [f64], m: usize, n: usize) -> Vec<f64> {
    let k = m.min(n);
    let mut tau = vec![0.0; k];
    for j in 0..k {
        let alpha = a[j * n + j];
        let xnorm = (j + 1..m)
            .map(|i| a[i * n + j] * a[i * n + j])
            .sum::<f64>()
            .sqrt();
        if xnorm == 0.0 {
            continue; // H = I, tau = 0
        }
        let norm = alpha.hypot(xnorm);
        let beta = if alpha.is_sign_negative() {
            norm
        } else {
            -norm
        };
        tau[j] = (beta - alpha) / beta;
        let scale = 1.0 / (alpha - beta);
        for i in j + 1..m {
            a[i * n + j] *= scale;
        }
        a[j * n + j] = beta;
        // Apply H = I - tau v v^T (v = [1, a[j+1.., j]]) to the columns right of j.
        for c in j + 1..n {
            let mut w = a[j * n + c];
            for i in j + 1..m {
                w += a[i * n + j] * a[i * n + c];
            }
            w *= tau[j];
            a[j * n + c] -= w;
            for i in j + 1..m {
                a[i * n + c] -= w * a[i * n + j];
            }
        }
    }
    tau
}

/// The first n columns of Q = H_1 ... H_k (LAPACK orgqr), from geqrf's reflectors in the m x n `a`
/// and `tau` (k values); returned m x n.
fn orgqr(a: &[f64], m: usize, n: usize, tau: &[f64]) -> Vec<f64> {
    let mut q = vec![0.0; m * n];
    for d in 0..n.min(m) {
        q[d * n + d] = 1.0;
    }
    for j in (0..tau.len().min(n)).rev() {
        let t = tau[j];
        if t == 0.0 {
            continue;
        }
        for c in 0..n {
            let mut w = q[j * n + c];
            for i in j + 1..m {
                w += a[i * n + j] * q[i * n + c];
            }
            w *= t;
            q[j * n + c] -= w;
            for i in j + 1..m {
                q[i * n + c] -= w * a[i * n + j];
            }
        }
    }
    q
}

/// Symmetric eigendecomposition by cyclic Jacobi rotations of the n x n matrix whose `lower`
/// (else upper) triangle is `a`: (eigenvalues ascending, eigenvectors as columns, row-major).
fn syev(a: &[f64], n: usize, lower: bool) -> (Vec<f64>, Vec<f64>) {
    let mut s = vec![0.0; n * n];
    for r in 0..n {
        for c in 0..n {
            let (i, j) = if (c <= r) == lower { (r, c) } else { (c, r) };
            s[r * n + c] = a[i * n + j];
        }
    }
    if s.iter().any(|v| !v.is_finite()) {
        return (vec![f64::NAN; n], vec![f64::NAN; n * n]);
    }
    let mut v = vec![0.0; n * n];
    for d in 0..n {
        v[d * n + d] = 1.0;
    }
    for _sweep in 0..100 {
        let off: f64 = (0..n)
            .flat_map(|r| (0..n).filter(move |&c| c != r).map(move |c| (r, c)))
            .map(|(r, c)| s[r * n + c] * s[r * n + c])
            .sum();
        let total: f64 = s.iter().map(|x| x * x).sum();
        if off <= total * 1e-32 || off == 0.0 {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                let apq = s[p * n + q];
                if apq == 0.0 {
                    continue;
                }
                let theta = (s[q * n + q] - s[p * n + p]) / (2.0 * apq);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let sn = t * c;
                for k in 0..n {
                    let (skp, skq) = (s[k * n + p], s[k * n + q]);
                    s[k * n + p] = c * skp - sn * skq;
                    s[k * n + q] = sn * skp + c * skq;
                }
                for k in 0..n {
                    let (spk, sqk) = (s[p * n + k], s[q * n + k]);
                    s[p * n + k] = c * spk - sn * sqk;
                    s[q * n + k] = sn * spk + c * sqk;
                }
                for k in 0..n {
                    let (vkp, vkq) = (v[k * n + p], v[k * n + q]);
                    v[k * n + p] = c * vkp - sn * vkq;
                    v[k * n + q] = sn * vkp + c * vkq;
                }
            }
        }
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&x, &y| s[x * n + x].total_cmp(&s[y * n + y]));
    let w: Vec<f64> = order.iter().map(|&d| s[d * n + d]).collect();
    let mut vecs = vec![0.0; n * n];
    for (c, &src) in order.iter().enumerate() {
        // Sign: the largest-magnitude component (first of equals) positive.
        let mut big = 0;
        for r in 0..n {
            if v[r * n + src].abs() > v[big * n + src].abs() {
                big = r;
            }
        }
        let sign = if v[big * n + src] < 0.0 { -1.0 } else { 1.0 };
        for r in 0..n {
            vecs[r * n + c] = sign * v[r * n + src];
        }
    }
    (w, vecs)
}

// ---------------------------------------------------------------------------------------------
// HLO ops.

/// `cholesky(a), lower=...`: the factor in the chosen triangle; the other triangle is zero (XLA
/// calls it implementation-defined); a matrix that is not positive definite gives NaN throughout
/// (XLA: implementation-defined).
pub fn cholesky(i: &Instruction, a: &Array) -> Result<Array> {
    let lower = attrs::flag(i, "lower", false);
    let mut m = Mats::from(a, "cholesky")?;
    if m.rows != m.cols {
        return Err(invalid("cholesky of a non-square matrix"));
    }
    let n = m.rows;
    for b in 0..m.count() {
        let x = m.mat(b);
        let info = potrf(x, n, lower);
        for r in 0..n {
            for c in 0..n {
                if info != 0 {
                    x[r * n + c] = f64::NAN;
                } else if (c <= r) != lower && r != c {
                    x[r * n + c] = 0.0;
                }
            }
        }
    }
    to_array(m.data.clone(), m.dims(), a.ty)
}

/// `triangular-solve(a, b), left_side, lower, unit_diagonal, transpose_a`.
pub fn triangular_solve(i: &Instruction, a: &Array, b: &Array) -> Result<Array> {
    let left = attrs::flag(i, "left_side", false);
    let lower = attrs::flag(i, "lower", false);
    let unit = attrs::flag(i, "unit_diagonal", false);
    let (trans, adjoint) = match attrs::word(i, "transpose_a").as_deref() {
        None | Some("NO_TRANSPOSE") => (false, false),
        Some("TRANSPOSE") => (true, false),
        Some("ADJOINT") => (true, true),
        Some(t) => return Err(invalid(format!("transpose_a={t}"))),
    };
    if a.ty.is_complex() || b.ty.is_complex() {
        return solve_batch_complex(a, b, left, lower, unit, trans, adjoint);
    }
    // A real matrix's adjoint is its transpose.
    solve_batch(a, b, left, lower, unit, trans, "triangular-solve")
}

/// [`solve_batch`] of c64 or c128 matrices: computed in c128 (Complex64) and rounded once to
/// the result type, as the real solves are in f64. XLA CPU expands the op into blocked
/// substitutions of its own (TriangularSolveExpander), so its results agree within rounding.
fn solve_batch_complex(
    a: &Array,
    b: &Array,
    left: bool,
    lower: bool,
    unit: bool,
    trans: bool,
    adjoint: bool,
) -> Result<Array> {
    let what = "triangular-solve";
    let wide = |x: &Array| -> Result<Vec<Complex64>> {
        match &x.buf {
            Buffer::C64(v) => Ok(v
                .iter()
                .map(|z| Complex64::new(z.re as f64, z.im as f64))
                .collect()),
            Buffer::C128(v) => Ok(v.clone()),
            _ => Err(invalid(format!("{what}: {} and {} differ", a.ty, b.ty))),
        }
    };
    if a.ty != b.ty {
        return Err(invalid(format!("{what}: {} and {} differ", a.ty, b.ty)));
    }
    let (ra, rb) = (a.dims.len(), b.dims.len());
    if ra < 2 || rb < 2 {
        return Err(invalid(format!(
            "{what}: operands of rank {ra} and {rb}, need at least 2"
        )));
    }
    let (m, n) = (b.dims[rb - 2], b.dims[rb - 1]);
    let k = if left { m } else { n };
    if a.dims[ra - 2] != k || a.dims[ra - 1] != k || a.dims[..ra - 2] != b.dims[..rb - 2] {
        return Err(invalid(format!(
            "{what}: a {:?} does not fit b {:?}",
            a.dims, b.dims
        )));
    }
    let (av, mut bv) = (wide(a)?, wide(b)?);
    let count = product(&b.dims[..rb - 2]);
    for t in 0..count {
        let a_t = &av[t * k * k..(t + 1) * k * k];
        trsm(
            a_t,
            &mut bv[t * m * n..(t + 1) * m * n],
            m,
            n,
            left,
            lower,
            unit,
            trans,
            adjoint,
        );
    }
    let buf = match b.ty {
        PrimitiveType::C64 => Buffer::C64(
            bv.iter()
                .map(|z| num_complex::Complex32::new(z.re as f32, z.im as f32))
                .collect(),
        ),
        _ => Buffer::C128(bv),
    };
    Ok(Array::new(b.ty, b.dims.clone(), buf))
}

fn solve_batch(
    a: &Array,
    b: &Array,
    left: bool,
    lower: bool,
    unit: bool,
    trans: bool,
    what: &str,
) -> Result<Array> {
    let am = Mats::from(a, what)?;
    let mut bm = Mats::from(b, what)?;
    let k = if left { bm.rows } else { bm.cols };
    if am.rows != k || am.cols != k || am.batch != bm.batch {
        return Err(invalid(format!(
            "{what}: a {:?} does not fit b {:?}",
            a.dims, b.dims
        )));
    }
    let (m, n) = (bm.rows, bm.cols);
    for t in 0..bm.count() {
        let am_t = &am.data[t * k * k..(t + 1) * k * k];
        trsm(am_t, bm.mat(t), m, n, left, lower, unit, trans, false);
    }
    to_array(bm.data.clone(), bm.dims(), b.ty)
}

// ---------------------------------------------------------------------------------------------
// LAPACK custom-calls.

/// One `u8` character from `backend_config={uplo = 76 : ui8, ...}` (76 = 'L').
pub(crate) fn config_char(i: &Instruction, key: &str) -> Option<u8> {
    let text = match i.attr("backend_config")? {
        hlo::Attr::Raw(s) | hlo::Attr::Str(s) | hlo::Attr::Ident(s) => s.clone(),
        _ => return None,
    };
    let t = text.trim().trim_start_matches('{').trim_end_matches('}');
    t.split(',').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        if k.trim() != key {
            return None;
        }
        v.split(':').next()?.trim().parse::<u8>().ok()
    })
}

fn want_char(i: &Instruction, key: &str, allowed: &[u8]) -> Result<u8> {
    let c = config_char(i, key).ok_or_else(|| invalid(format!("backend_config has no {key}")))?;
    if allowed.contains(&c) {
        Ok(c)
    } else {
        Err(invalid(format!(
            "backend_config {key} = {c} ('{}')",
            c as char
        )))
    }
}

fn result_types(i: &Instruction) -> Vec<PrimitiveType> {
    match &i.shape {
        Shape::Array(a) => vec![a.ty],
        Shape::Tuple(t) => t
            .iter()
            .map(|s| match s {
                Shape::Array(a) => a.ty,
                _ => PrimitiveType::S32,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Runs `lapack_<t><routine>_ffi`; `None` when `target` is not one of these.
pub fn lapack_custom_call(i: &Instruction, target: &str, ops: &[&Value]) -> Option<Result<Value>> {
    let name = target.strip_prefix("lapack_")?;
    let Some(name) = name.strip_suffix("_ffi") else {
        return Some(Err(unsupported(format!(
            "custom-call target \"{target}\" (pre-FFI LAPACK kernel)"
        ))));
    };
    let (prefix, routine) = name.split_at(1.min(name.len()));
    Some(lapack(i, target, prefix, routine, ops))
}

fn lapack(
    i: &Instruction,
    target: &str,
    prefix: &str,
    routine: &str,
    ops: &[&Value],
) -> Result<Value> {
    let ty = match prefix {
        "s" => PrimitiveType::F32,
        "d" => PrimitiveType::F64,
        _ => {
            return Err(unsupported(format!(
                "custom-call target \"{target}\" (complex LAPACK)"
            )))
        }
    };
    let operand = |k: usize| -> Result<&Array> {
        let a = arr(ops
            .get(k)
            .ok_or_else(|| invalid(format!("{target}: missing operand {k}")))?)?;
        if a.ty != ty {
            return Err(invalid(format!(
                "{target}: operand {k} is {}, expected {ty}",
                a.ty
            )));
        }
        Ok(a)
    };
    let tys = result_types(i);
    let info_ty = |k: usize| tys.get(k).copied().unwrap_or(PrimitiveType::S32);
    let int_out = |v: Vec<i32>, dims: Vec<usize>, k: usize| -> Result<Array> {
        crate::convert::convert(&s32(v, dims), info_ty(k))
    };
    let tuple = |parts: Vec<Array>| Value::Tuple(parts.into_iter().map(Value::array).collect());
    match routine {
        "potrf" => {
            let lower = want_char(i, "uplo", b"LU")? == b'L';
            let mut m = Mats::from(operand(0)?, target)?;
            if m.rows != m.cols {
                return Err(invalid(format!("{target}: non-square matrix")));
            }
            let n = m.rows;
            let info: Vec<i32> = (0..m.count()).map(|b| potrf(m.mat(b), n, lower)).collect();
            let batch = m.batch.clone();
            Ok(tuple(vec![
                to_array(m.data.clone(), m.dims(), ty)?,
                int_out(info, batch, 1)?,
            ]))
        }
        "trsm" => {
            let left = want_char(i, "side", b"LR")? == b'L';
            let lower = want_char(i, "uplo", b"LU")? == b'L';
            let trans = want_char(i, "trans_x", b"NTC")? != b'N';
            let unit = want_char(i, "diag", b"NU")? == b'U';
            let out = solve_batch(operand(0)?, operand(1)?, left, lower, unit, trans, target)?;
            Ok(Value::array(out))
        }
        "getrf" => {
            let mut m = Mats::from(operand(0)?, target)?;
            let (r, c) = (m.rows, m.cols);
            let (mut pivs, mut infos) = (Vec::new(), Vec::new());
            for b in 0..m.count() {
                let (p, info) = getrf(m.mat(b), r, c);
                pivs.extend(p);
                infos.push(info);
            }
            let mut pdims = m.batch.clone();
            pdims.push(r.min(c));
            let batch = m.batch.clone();
            Ok(tuple(vec![
                to_array(m.data.clone(), m.dims(), ty)?,
                int_out(pivs, pdims, 1)?,
                int_out(infos, batch, 2)?,
            ]))
        }
        "geqrf" => {
            let mut m = Mats::from(operand(0)?, target)?;
            let (r, c) = (m.rows, m.cols);
            let mut taus = Vec::new();
            for b in 0..m.count() {
                taus.extend(geqrf(m.mat(b), r, c));
            }
            let mut tdims = m.batch.clone();
            tdims.push(r.min(c));
            Ok(tuple(vec![
                to_array(m.data.clone(), m.dims(), ty)?,
                to_array(taus, tdims, ty)?,
            ]))
        }
        "orgqr" => {
            let m = Mats::from(operand(0)?, target)?;
            let tau = operand(1)?;
            let k = *tau.dims.last().unwrap_or(&0);
            let taus = to_f64s(&tau.buf);
            if tau.dims.len() != m.batch.len() + 1 || k > m.cols || m.cols > m.rows {
                return Err(invalid(format!(
                    "{target}: a {:?} and tau {:?} do not fit",
                    m.dims(),
                    tau.dims
                )));
            }
            let (r, c) = (m.rows, m.cols);
            let mut out = Vec::with_capacity(m.data.len());
            for b in 0..m.count() {
                out.extend(orgqr(
                    &m.data[b * r * c..(b + 1) * r * c],
                    r,
                    c,
                    &taus[b * k..(b + 1) * k],
                ));
            }
            Ok(Value::array(to_array(out, m.dims(), ty)?))
        }
        "syevd" => {
            let vectors = want_char(i, "mode", b"NV")? == b'V';
            let lower = want_char(i, "uplo", b"LU")? == b'L';
            let m = Mats::from(operand(0)?, target)?;
            if m.rows != m.cols {
                return Err(invalid(format!("{target}: non-square matrix")));
            }
            let n = m.rows;
            let (mut ws, mut vs) = (Vec::new(), Vec::new());
            for b in 0..m.count() {
                let a = &m.data[b * n * n..(b + 1) * n * n];
                let (w, v) = syev(a, n, lower);
                ws.extend(w);
                // Without vectors LAPACK leaves the matrix destroyed; we return it unchanged.
                vs.extend(if vectors { v } else { a.to_vec() });
            }
            let mut wdims = m.batch.clone();
            wdims.push(n);
            let batch = m.batch.clone();
            let infos = vec![0; m.count()];
            Ok(tuple(vec![
                to_array(vs, m.dims(), ty)?,
                to_array(ws, wdims, ty)?,
                int_out(infos, batch, 2)?,
            ]))
        }
        _ => Err(unsupported(format!("custom-call target \"{target}\""))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matmul(a: &[f64], b: &[f64], n: usize, k: usize, m: usize) -> Vec<f64> {
        let mut c = vec![0.0; n * m];
        for i in 0..n {
            for j in 0..m {
                c[i * m + j] = (0..k).map(|t| a[i * k + t] * b[t * m + j]).sum();
            }
        }
        c
    }

    fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol)
    }

    const SPD: [f64; 9] = [4.0, 2.0, 0.4, 2.0, 5.0, 1.0, 0.4, 1.0, 3.0];

    #[test]
    fn potrf_lower_reconstructs_and_keeps_upper() {
        let mut a = SPD.to_vec();
        a[1] = 99.0; // upper triangle is never read and must be kept
        assert_eq!(potrf(&mut a, 3, true), 0);
        assert_eq!(a[1], 99.0);
        let l: Vec<f64> = (0..9)
            .map(|k| if k % 3 <= k / 3 { a[k] } else { 0.0 })
            .collect();
        let lt: Vec<f64> = (0..9).map(|k| l[(k % 3) * 3 + k / 3]).collect();
        assert!(close(&matmul(&l, &lt, 3, 3, 3), &SPD, 1e-12));
    }

    #[test]
    fn potrf_upper_and_not_positive_definite() {
        let mut a = SPD.to_vec();
        assert_eq!(potrf(&mut a, 3, false), 0);
        let u: Vec<f64> = (0..9)
            .map(|k| if k % 3 >= k / 3 { a[k] } else { 0.0 })
            .collect();
        let ut: Vec<f64> = (0..9).map(|k| u[(k % 3) * 3 + k / 3]).collect();
        assert!(close(&matmul(&ut, &u, 3, 3, 3), &SPD, 1e-12));
        let mut bad = vec![1.0, 2.0, 2.0, 1.0];
        assert_eq!(potrf(&mut bad, 2, true), 2);
    }

    #[test]
    fn trsm_all_sides_and_transposes() {
        let a = [2.0, 7.0, 1.0, 3.0]; // lower: [[2,0],[1,3]]; upper: [[2,7],[0,3]]
        let b0 = [4.0, 1.0, 5.0, 6.0];
        for left in [true, false] {
            for lower in [true, false] {
                for trans in [true, false] {
                    for unit in [true, false] {
                        let (t, _) = tri_matrix(&a, 2, lower, unit, trans, false);
                        let mut x = b0.to_vec();
                        trsm(&a, &mut x, 2, 2, left, lower, unit, trans, false);
                        let back = if left {
                            matmul(&t, &x, 2, 2, 2)
                        } else {
                            matmul(&x, &t, 2, 2, 2)
                        };
                        assert!(close(&back, &b0, 1e-12), "{left} {lower} {trans} {unit}");
                    }
                }
            }
        }
    }

    #[test]
    fn getrf_pivots_like_lapack() {
        // [[1,2],[3,4]]: pivot row 2 first (1-based), L = [[1,0],[1/3,1]], U = [[3,4],[0,2/3]].
        let mut a = vec![1.0, 2.0, 3.0, 4.0];
        let (p, info) = getrf(&mut a, 2, 2);
        assert_eq!((p, info), (vec![2, 2], 0));
        assert!(close(&a, &[3.0, 4.0, 1.0 / 3.0, 2.0 / 3.0], 1e-15));
        let mut z = vec![0.0, 1.0, 0.0, 1.0];
        assert_eq!(getrf(&mut z, 2, 2).1, 1);
    }

    #[test]
    fn geqrf_orgqr_reconstruct_with_lapack_signs() {
        let a0 = [1.0, 2.0, 3.0, 4.0, 5.0, 6.5]; // 3 x 2
        let mut a = a0.to_vec();
        let tau = geqrf(&mut a, 3, 2);
        // slarfg: beta = -sign(alpha) * norm, so R's diagonal is negative for positive alpha.
        assert!(a[0] < 0.0 && (a[0] + (35.0f64).sqrt()).abs() < 1e-12);
        assert!(tau.iter().all(|t| (1.0..=2.0).contains(t)));
        let q = orgqr(&a, 3, 2, &tau);
        let r = [a[0], a[1], 0.0, a[3]];
        assert!(close(&matmul(&q, &r, 3, 2, 2), &a0, 1e-12));
        let qt: Vec<f64> = (0..6).map(|k| q[(k % 3) * 2 + k / 3]).collect();
        assert!(close(
            &matmul(&qt, &q, 2, 3, 2),
            &[1.0, 0.0, 0.0, 1.0],
            1e-12
        ));
    }

    #[test]
    fn syev_ascending_orthonormal_and_reads_one_triangle() {
        let mut a = SPD.to_vec();
        a[2] = -50.0; // upper triangle ignored with lower = true
        let (w, v) = syev(&a, 3, true);
        assert!(w.windows(2).all(|p| p[0] <= p[1]));
        for c in 0..3 {
            let col: Vec<f64> = (0..3).map(|r| v[r * 3 + c]).collect();
            let av = matmul(&SPD, &col, 3, 3, 1);
            assert!(close(
                &av,
                &col.iter().map(|x| x * w[c]).collect::<Vec<_>>(),
                1e-12
            ));
            let big = col
                .iter()
                .cloned()
                .fold(0.0f64, |m, x| if x.abs() > m.abs() { x } else { m });
            assert!(big > 0.0);
        }
        let trace: f64 = w.iter().sum();
        assert!((trace - 12.0).abs() < 1e-12);
    }
}

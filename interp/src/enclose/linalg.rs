//! Sets of the numerical kernels: `cholesky`, `triangular-solve` and the LAPACK calls jax makes
//! on CPU (`lapack_{s,d}{potrf,trsm,getrf,geqrf,orgqr,syevd}_ffi`). Their results are bounded
//! as wholes by the kernels' error analyses (the semantics table's `ErrorBound` rows), not one
//! rounding at a time: the oracle computes each kernel in f64 at the operands' midpoints, and
//! each output element is that value widened by a bound of what a backward-stable
//! implementation of the kernel returns in the element type, plus the effect of the operands'
//! own uncertainty (first order, with a factor of 2). Where a kernel's output is not unique
//! (LU's pivots, QR's reflectors, eigenvectors' signs) the bound is the kernel's invariant
//! (`|L| <= 1` under partial pivoting, components of orthonormal vectors within 1); where the
//! texts leave a part implementation-defined (the other triangle; a matrix that is not
//! positive definite or is singular), any value.

use super::eval::{Elems, SetArray};
use super::set::{CSet, FSet, ISet, Why};
use num_complex::Complex64 as C;

/// Midpoints and radii of a float or complex array's elements (radius: of the modulus of the
/// difference); `None` when an element may be NaN or infinite.
pub(crate) fn midpoints(x: &SetArray) -> Option<(Vec<C>, Vec<f64>)> {
    let part = |s: &FSet| -> Option<(f64, f64)> {
        if s.nan || s.pinf || s.ninf {
            return None;
        }
        let (lo, hi) = s.extent()?;
        (lo.is_finite() && hi.is_finite()).then(|| (0.5 * lo + 0.5 * hi, 0.5 * (hi - lo)))
    };
    let mut mid = Vec::with_capacity(x.len());
    let mut rad = Vec::with_capacity(x.len());
    match &x.elems {
        Elems::F(v) => {
            for s in v {
                let (m, r) = part(s)?;
                mid.push(C::new(m, 0.0));
                rad.push(r);
            }
        }
        Elems::C(v) => {
            for c in v {
                if c.inf {
                    return None;
                }
                let (a, ra) = part(&c.re)?;
                let (b, rb) = part(&c.im)?;
                mid.push(C::new(a, b));
                rad.push(ra.hypot(rb));
            }
        }
        Elems::I(_) => return None,
    }
    Some((mid, rad))
}

/// The set `c +- r` of an element of type `complex` (or real), rounded outward by the caller.
fn around(c: C, r: f64, complex: bool) -> (FSet, Option<FSet>) {
    let f = |x: f64| FSet::range(x - r, x + r).because(Why::ERROR_BOUND);
    (f(c.re), complex.then(|| f(c.im)))
}

/// A float or complex array of `values +- radii` (per element), each part rounded outward to
/// `ty` by `round`.
pub(crate) fn bounded(
    ty: hlo::PrimitiveType,
    dims: Vec<usize>,
    values: &[C],
    radii: &[f64],
    round: impl Fn(FSet) -> FSet,
) -> SetArray {
    let complex = ty.is_complex();
    let elems = if complex {
        Elems::C(
            values
                .iter()
                .zip(radii)
                .map(|(&c, &r)| {
                    if !r.is_finite() {
                        return CSet::top(Why::ERROR_BOUND);
                    }
                    let (re, im) = around(c, r, true);
                    CSet {
                        re: round(re),
                        im: round(im.expect("complex")),
                        inf: false,
                    }
                })
                .collect(),
        )
    } else {
        Elems::F(
            values
                .iter()
                .zip(radii)
                .map(|(&c, &r)| {
                    if !r.is_finite() || !c.re.is_finite() {
                        return FSet::top(Why::ERROR_BOUND);
                    }
                    round(around(c, r, false).0)
                })
                .collect(),
        )
    };
    SetArray { ty, dims, elems }
}

/// Any value of the type for element `k` of `a` (what the texts leave implementation-defined).
pub(crate) fn undefine(a: &mut SetArray, k: usize) {
    match &mut a.elems {
        Elems::F(v) => v[k] = FSet::top(Why::UNDEFINED),
        Elems::C(v) => v[k] = CSet::top(Why::UNDEFINED),
        Elems::I(v) => v[k] = ISet::undefined(a.ty, Why::NONE),
    }
}

/// A dense k x k matrix of complex values, row-major.
struct Mat {
    n: usize,
    v: Vec<C>,
}

impl Mat {
    fn at(&self, r: usize, c: usize) -> C {
        self.v[r * self.n + c]
    }

    /// The inverse of a triangular matrix (`lower` or upper), by substitution on the identity's
    /// columns; `None` for a zero or non-finite diagonal.
    fn tri_inverse(&self, lower: bool) -> Option<Mat> {
        let n = self.n;
        let mut x = vec![C::new(0.0, 0.0); n * n];
        for col in 0..n {
            let rows: Vec<usize> = if lower {
                (0..n).collect()
            } else {
                (0..n).rev().collect()
            };
            for &r in &rows {
                let mut s = if r == col {
                    C::new(1.0, 0.0)
                } else {
                    C::new(0.0, 0.0)
                };
                let others: Box<dyn Iterator<Item = usize>> = if lower {
                    Box::new(0..r)
                } else {
                    Box::new(r + 1..n)
                };
                for j in others {
                    s -= self.at(r, j) * x[j * n + col];
                }
                let d = self.at(r, r);
                if d.norm() == 0.0 || !d.re.is_finite() || !d.im.is_finite() {
                    return None;
                }
                x[r * n + col] = s / d;
            }
        }
        x.iter()
            .all(|z| z.re.is_finite() && z.im.is_finite())
            .then_some(Mat { n, v: x })
    }

    fn abs(&self) -> Vec<f64> {
        self.v.iter().map(|z| z.norm()).collect()
    }

    fn frobenius(&self) -> f64 {
        self.v.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt()
    }
}

/// `|a| * |b|` of n x n matrices of magnitudes.
fn mul_abs(a: &[f64], b: &[f64], n: usize) -> Vec<f64> {
    let mut out = vec![0.0; n * n];
    for r in 0..n {
        for k in 0..n {
            let x = a[r * n + k];
            if x == 0.0 {
                continue;
            }
            for c in 0..n {
                out[r * n + c] += x * b[k * n + c];
            }
        }
    }
    out
}

fn mat_vec(a: &[f64], v: &[f64], n: usize) -> Vec<f64> {
    (0..n)
        .map(|r| (0..n).map(|c| a[r * n + c] * v[c]).sum())
        .collect()
}

/// The radii of a triangular solve's solutions: `op(T) x = b` for each right-hand side (left
/// side; a right-side solve `x op(T) = b` is the transposed left one). XLA CPU inverts the
/// diagonal blocks and multiplies (its expander), so with `X` the computed inverse, `T X = I +
/// E`, `|E| <= c k u |T| |X|`: `|x^ - x| <= c k u |T^-1| |T| |T^-1| |b| + k u |T^-1| |b|`
/// (the product's rounding), with c = 4; the operands' radii add `|T^-1| (|dT| |x| + |db|)`
/// (twice, for the first order). `None`: a singular matrix (any value).
#[allow(clippy::too_many_arguments)]
pub(crate) fn solve_radii(
    t: &[C],
    t_rad: &[f64],
    b_rad: &[f64],
    x: &[C],
    k: usize,
    rhs: usize,
    layout: Layout,
    u: f64,
) -> Option<Vec<f64>> {
    let Layout {
        left,
        lower,
        unit,
        trans,
    } = layout;
    // The effective lower/upper matrix M with M y = c: op(T), transposed for a right-side
    // solve.
    let transposed = trans != !left;
    let eff_lower = lower != transposed;
    let get = |r: usize, c: usize| -> (C, f64) {
        let (rr, cc) = if transposed { (c, r) } else { (r, c) };
        let in_triangle = if lower { cc <= rr } else { cc >= rr };
        if rr == cc && unit {
            (C::new(1.0, 0.0), 0.0)
        } else if in_triangle {
            (t[rr * k + cc], t_rad[rr * k + cc])
        } else {
            (C::new(0.0, 0.0), 0.0)
        }
    };
    let mut m = Mat {
        n: k,
        v: vec![C::new(0.0, 0.0); k * k],
    };
    let mut m_rad = vec![0.0; k * k];
    for r in 0..k {
        for c in 0..k {
            let (z, d) = get(r, c);
            m.v[r * k + c] = z;
            m_rad[r * k + c] = d;
        }
    }
    let inv = m.tri_inverse(eff_lower)?;
    let inv_abs = inv.abs();
    let w = mul_abs(&inv_abs, &m.abs(), k);
    let c = 4.0 * k as f64 * u;
    let mut out = vec![0.0; x.len()];
    // Each right-hand side as a vector of length k: columns (left) or rows (right) of b.
    for j in 0..rhs {
        let idx = |i: usize| if left { i * rhs + j } else { j * k + i };
        let xv: Vec<f64> = (0..k).map(|i| x[idx(i)].norm()).collect();
        let bv: Vec<f64> = (0..k)
            .map(|i| (0..k).map(|c2| m.at(i, c2).norm() * xv[c2]).sum::<f64>())
            .collect();
        let db: Vec<f64> = (0..k).map(|i| b_rad[idx(i)]).collect();
        let v = mat_vec(&inv_abs, &bv, k);
        let wv = mat_vec(&w, &v, k);
        let pert: Vec<f64> = (0..k)
            .map(|i| (0..k).map(|c2| m_rad[i * k + c2] * xv[c2]).sum::<f64>() + db[i])
            .collect();
        let dp = mat_vec(&inv_abs, &pert, k);
        for i in 0..k {
            out[idx(i)] = c * wv[i] + k as f64 * u * v[i] + 2.0 * dp[i];
        }
    }
    Some(out)
}

/// How a triangular solve reads its matrix.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    pub left: bool,
    pub lower: bool,
    pub unit: bool,
    pub trans: bool,
}

/// The radius of a Cholesky factor's elements (`a` = the operand's matrix as read from its
/// `lower` triangle, `l` the factor, both k x k): Higham Thm 10.3's backward error `|dA| <=
/// gamma(k+1) |L| |L^T|` through the factor's perturbation bound (Sun: `||dL||_F <=
/// kappa(A) ||dA||_F / ||A|| * ||L||`, taken with a factor of 4), with the operand's radii
/// `a_rad` as a further `dA`. `None` when the matrix may not be positive definite within those
/// bounds (the texts leave that implementation-defined).
pub(crate) fn cholesky_radius(
    l: &[C],
    a_rad: &[f64],
    k: usize,
    lower: bool,
    u: f64,
) -> Option<f64> {
    let lm = Mat {
        n: k,
        v: l.to_vec(),
    };
    if l.iter().any(|z| !z.re.is_finite() || !z.im.is_finite()) {
        return None;
    }
    let linv = lm.tri_inverse(lower)?;
    let l_f = lm.frobenius();
    let a_f = l_f * l_f;
    let ainv_f = linv.frobenius().powi(2);
    let kappa = a_f * ainv_f;
    let backward = (k as f64 + 1.0) * u * a_f;
    let operand = a_rad.iter().map(|r| r * r).sum::<f64>().sqrt();
    let rel = (backward + operand) / a_f.max(f64::MIN_POSITIVE);
    if 4.0 * kappa * rel >= 0.25 || !kappa.is_finite() {
        return None;
    }
    Some(4.0 * kappa * rel * l_f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_triangular_inverse_inverts() {
        let m = Mat {
            n: 2,
            v: vec![
                C::new(2.0, 0.0),
                C::new(0.0, 0.0),
                C::new(1.0, 0.0),
                C::new(4.0, 0.0),
            ],
        };
        let inv = m.tri_inverse(true).unwrap();
        assert_eq!(inv.at(0, 0), C::new(0.5, 0.0));
        assert_eq!(inv.at(1, 1), C::new(0.25, 0.0));
        assert_eq!(inv.at(1, 0), C::new(-0.125, 0.0));
        let singular = Mat {
            n: 1,
            v: vec![C::new(0.0, 0.0)],
        };
        assert!(singular.tri_inverse(true).is_none());
    }

    /// The bound grows with the condition number and vanishes for exact operands in exact
    /// arithmetic (u = 0).
    #[test]
    fn cholesky_radius_grows_with_the_condition() {
        let well = [
            C::new(1.0, 0.0),
            C::new(0.0, 0.0),
            C::new(0.0, 0.0),
            C::new(1.0, 0.0),
        ];
        let ill = [
            C::new(1.0, 0.0),
            C::new(0.0, 0.0),
            C::new(0.0, 0.0),
            C::new(0.1, 0.0),
        ];
        let u = f32::EPSILON as f64 / 2.0;
        let a = cholesky_radius(&well, &[0.0; 4], 2, true, u).unwrap();
        let b = cholesky_radius(&ill, &[0.0; 4], 2, true, u).unwrap();
        assert!(b > 5.0 * a, "{a} {b}");
        assert_eq!(cholesky_radius(&well, &[0.0; 4], 2, true, 0.0), Some(0.0));
        // Within the operand's uncertainty a nearly singular matrix may not be definite.
        assert!(cholesky_radius(&ill, &[1e-3; 4], 2, true, u).is_none());
        let singular = [
            C::new(1.0, 0.0),
            C::new(0.0, 0.0),
            C::new(0.0, 0.0),
            C::new(1e-4, 0.0),
        ];
        assert!(cholesky_radius(&singular, &[0.0; 4], 2, true, u).is_none());
    }
}

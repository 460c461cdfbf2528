//! fft: FFT, IFFT, RFFT and IRFFT over the last 1 to 3 dimensions, as a direct DFT in f64
//! (one rounding to the result type at the end).

use crate::elementwise::to_c64s;
use crate::eval::out_dims;
use crate::value::{product, Array, Buffer};
use crate::{attrs, invalid, unsupported, Result};
use hlo::{Instruction, PrimitiveType};
use num_complex::Complex64;

/// In-place DFT of every line along axis `ax` of `data` (dims `dims`).
fn dft_axis(data: &mut [Complex64], dims: &[usize], ax: usize, inverse: bool) {
    let n = dims[ax];
    if n <= 1 {
        return;
    }
    let inner: usize = dims[ax + 1..].iter().product();
    let outer: usize = dims[..ax].iter().product();
    let sign = if inverse { 1.0 } else { -1.0 };
    let tw: Vec<Complex64> = (0..n)
        .map(|k| {
            let ang = sign * 2.0 * std::f64::consts::PI * (k as f64) / (n as f64);
            Complex64::new(ang.cos(), ang.sin())
        })
        .collect();
    let mut line = vec![Complex64::new(0.0, 0.0); n];
    for o in 0..outer {
        for i in 0..inner {
            let base = o * n * inner + i;
            for (k, x) in line.iter_mut().enumerate() {
                *x = data[base + k * inner];
            }
            for k in 0..n {
                let mut acc = Complex64::new(0.0, 0.0);
                for (j, x) in line.iter().enumerate() {
                    acc += x * tw[(j * k) % n];
                }
                if inverse {
                    acc /= n as f64;
                }
                data[base + k * inner] = acc;
            }
        }
    }
}

pub fn fft(i: &Instruction, a: &Array) -> Result<Array> {
    let (ty, dims, values) = fft_unrounded(i, a)?;
    match values {
        Unrounded::Complex(d) => finish(d, dims, ty),
        Unrounded::Real(re) => {
            crate::convert::convert(&Array::new(PrimitiveType::F64, dims, Buffer::F64(re)), ty)
        }
    }
}

/// The transform's values before their rounding to the result type.
pub(crate) enum Unrounded {
    Complex(Vec<Complex64>),
    Real(Vec<f64>),
}

/// [`fft`]'s result type, dimensions and values in f64, not yet rounded (the enclosure bounds
/// XLA's transform around them).
pub(crate) fn fft_unrounded(
    i: &Instruction,
    a: &Array,
) -> Result<(PrimitiveType, Vec<usize>, Unrounded)> {
    let (ty, dims) = out_dims(i)?;
    let kind = attrs::word(i, "fft_type").ok_or_else(|| invalid("fft without fft_type"))?;
    let len = attrs::dims(i, "fft_length")?;
    let rank = a.dims.len();
    if len.is_empty() || len.len() > 3 || len.len() > rank {
        return Err(invalid("fft_length must name 1 to 3 trailing dimensions"));
    }
    let first = rank - len.len();
    let axes: Vec<usize> = (first..rank).collect();
    let last = rank - 1;
    match kind.as_str() {
        "FFT" | "IFFT" => {
            if a.dims[first..] != len[..] || dims != a.dims {
                return Err(invalid("fft_length differs from the operand"));
            }
            let mut d = to_c64s(&a.buf);
            for &ax in &axes {
                dft_axis(&mut d, &a.dims, ax, kind == "IFFT");
            }
            Ok((ty, dims, Unrounded::Complex(d)))
        }
        "RFFT" => {
            if a.dims[first..] != len[..] || !a.ty.is_float() {
                return Err(invalid("RFFT needs a real operand of fft_length"));
            }
            let mut d = to_c64s(&a.buf);
            dft_axis(&mut d, &a.dims, last, false);
            // Keep the first n/2+1 outputs along the last axis.
            let n = a.dims[last];
            let keep = n / 2 + 1;
            let rows = product(&a.dims[..last]);
            let mut out = Vec::with_capacity(rows * keep);
            for r in 0..rows {
                out.extend_from_slice(&d[r * n..r * n + keep]);
            }
            let mut od = a.dims.clone();
            od[last] = keep;
            for &ax in &axes[..axes.len() - 1] {
                dft_axis(&mut out, &od, ax, false);
            }
            if od != dims {
                return Err(invalid("RFFT result shape is wrong"));
            }
            Ok((ty, dims, Unrounded::Complex(out)))
        }
        "IRFFT" => {
            let n = *len.last().unwrap_or(&0);
            let keep = n / 2 + 1;
            if a.dims[last] != keep || a.dims[first..last] != len[..len.len() - 1] {
                return Err(invalid("IRFFT operand does not fit fft_length"));
            }
            let mut d = to_c64s(&a.buf);
            for &ax in &axes[..axes.len() - 1] {
                dft_axis(&mut d, &a.dims, ax, true);
            }
            let rows = product(&a.dims[..last]);
            let mut full = Vec::with_capacity(rows * n);
            for r in 0..rows {
                let line = &d[r * keep..(r + 1) * keep];
                for k in 0..n {
                    full.push(if k < keep {
                        line[k]
                    } else {
                        line[n - k].conj()
                    });
                }
            }
            let mut fd = a.dims.clone();
            fd[last] = n;
            dft_axis(&mut full, &fd, last, true);
            if fd != dims {
                return Err(invalid("IRFFT result shape is wrong"));
            }
            let re: Vec<f64> = full.iter().map(|z| z.re).collect();
            Ok((ty, dims, Unrounded::Real(re)))
        }
        k => Err(unsupported(format!("fft_type {k}"))),
    }
}

fn finish(d: Vec<Complex64>, dims: Vec<usize>, ty: PrimitiveType) -> Result<Array> {
    crate::convert::convert(&Array::new(PrimitiveType::C128, dims, Buffer::C128(d)), ty)
}

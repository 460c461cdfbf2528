//! Data movement: broadcast, reshape, transpose, slice, concatenate, pad, reverse, iota,
//! dynamic-slice, dynamic-update-slice, bitcast (layout-aware), gather, get-dimension-size.
//!
//! Each op computes, for every output element, the row-major position of its source element and
//! then copies with one typed loop ([`Buffer::take`]).

use crate::attrs;
use crate::eval::out_dims;
use crate::value::{for_each_index, product, strides, Array, Buffer};
use crate::{invalid, unsupported, Result};
use hlo::{Instruction, Opcode, PrimitiveType, Shape};

fn want(arrays: &[&Array], n: usize) -> Result<()> {
    if arrays.len() != n {
        return Err(invalid(format!(
            "expects {n} operands, has {}",
            arrays.len()
        )));
    }
    Ok(())
}

/// Builds an output by mapping each output multi-index to a source row-major position.
fn gather_map(a: &Array, dims: Vec<usize>, mut f: impl FnMut(&[usize]) -> usize) -> Array {
    let mut idx = Vec::with_capacity(product(&dims));
    for_each_index(&dims, |i, _| idx.push(f(i)));
    Array::new(a.ty, dims, a.buf.take(&idx))
}

pub fn eval(i: &Instruction, arrays: &[&Array], operand_shapes: &[&Shape]) -> Result<Array> {
    use Opcode as O;
    let (ty, dims) = out_dims(i)?;
    match i.opcode {
        O::Broadcast => {
            want(arrays, 1)?;
            let a = arrays[0];
            let bd = attrs::dims(i, "dimensions")?;
            if bd.len() != a.dims.len()
                || bd
                    .iter()
                    .zip(&a.dims)
                    .any(|(&d, &n)| d >= dims.len() || dims[d] != n)
            {
                return Err(invalid(format!(
                    "broadcast dimensions {bd:?} do not map {:?} into {dims:?}",
                    a.dims
                )));
            }
            if a.len() == 1 {
                return Ok(Array::new(
                    a.ty,
                    dims.clone(),
                    a.buf.splat(0, product(&dims)),
                ));
            }
            let st = strides(&a.dims);
            Ok(gather_map(a, dims, |o| {
                bd.iter().zip(&st).map(|(&d, &s)| o[d] * s).sum()
            }))
        }
        O::Reshape | O::DynamicReshape => {
            let a = arrays.first().ok_or_else(|| invalid("missing operand"))?;
            if a.len() != product(&dims) || a.ty != ty {
                return Err(invalid(format!(
                    "reshape of {}{:?} to {ty}{dims:?}",
                    a.ty, a.dims
                )));
            }
            Ok(Array::new(a.ty, dims, a.buf.clone()))
        }
        O::Transpose => {
            want(arrays, 1)?;
            let a = arrays[0];
            let perm = attrs::dims(i, "dimensions")?;
            let mut seen = vec![false; a.dims.len()];
            if perm.len() != a.dims.len()
                || perm
                    .iter()
                    .any(|&p| p >= seen.len() || std::mem::replace(&mut seen[p], true))
                || perm
                    .iter()
                    .enumerate()
                    .any(|(k, &p)| dims.get(k) != Some(&a.dims[p]))
            {
                return Err(invalid(format!("bad transpose permutation {perm:?}")));
            }
            let st = strides(&a.dims);
            Ok(gather_map(a, dims, |o| {
                perm.iter().enumerate().map(|(k, &p)| o[k] * st[p]).sum()
            }))
        }
        O::Slice => {
            want(arrays, 1)?;
            let a = arrays[0];
            let sl = i
                .slice()
                .ok_or_else(|| invalid("slice without slice={...}"))?;
            if sl.len() != a.dims.len() {
                return Err(invalid("slice rank differs from operand rank"));
            }
            for (k, s) in sl.iter().enumerate() {
                let n = if s.stride <= 0
                    || s.start < 0
                    || s.limit < s.start
                    || s.limit as usize > a.dims[k]
                {
                    return Err(invalid(format!("bad slice {s:?} of dimension {k}")));
                } else {
                    ((s.limit - s.start) as usize).div_ceil(s.stride as usize)
                };
                if dims.get(k) != Some(&n) {
                    return Err(invalid("slice result shape is wrong"));
                }
            }
            let st = strides(&a.dims);
            Ok(gather_map(a, dims, |o| {
                sl.iter()
                    .enumerate()
                    .map(|(k, s)| (s.start as usize + o[k] * s.stride as usize) * st[k])
                    .sum()
            }))
        }
        O::Concatenate => {
            let d = attrs::dims(i, "dimensions")?;
            let d = *d
                .first()
                .ok_or_else(|| invalid("concatenate without dimensions"))?;
            if arrays.is_empty() || d >= dims.len() {
                return Err(invalid("bad concatenate"));
            }
            let mut total = 0;
            for a in arrays {
                if a.dims.len() != dims.len() || a.ty != ty {
                    return Err(invalid("concatenate operand shapes differ"));
                }
                for k in 0..dims.len() {
                    if k != d && a.dims[k] != dims[k] {
                        return Err(invalid("concatenate operand shapes differ"));
                    }
                }
                total += a.dims[d];
            }
            if total != dims[d] {
                return Err(invalid("concatenate result size is wrong"));
            }
            // Row-major: concatenation is interleaving blocks of size (d..) per outer index.
            let outer: usize = dims[..d].iter().product();
            let inner: usize = dims[d + 1..].iter().product();
            let mut idx = Vec::with_capacity(product(&dims));
            let mut parts_idx: Vec<(usize, usize)> = Vec::with_capacity(product(&dims));
            for o in 0..outer {
                for (k, a) in arrays.iter().enumerate() {
                    let block = a.dims[d] * inner;
                    for j in 0..block {
                        parts_idx.push((k, o * block + j));
                    }
                }
            }
            // Concatenate all buffers and offset positions.
            let mut offsets = Vec::with_capacity(arrays.len());
            let mut off = 0;
            for a in arrays {
                offsets.push(off);
                off += a.len();
            }
            for (k, p) in parts_idx {
                idx.push(offsets[k] + p);
            }
            let all = Buffer::concat(&arrays.iter().map(|a| &a.buf).collect::<Vec<_>>())
                .ok_or_else(|| invalid("concatenate operand types differ"))?;
            Ok(Array::new(ty, dims, all.take(&idx)))
        }
        O::Pad => {
            want(arrays, 2)?;
            let (a, pv) = (arrays[0], arrays[1]);
            let cfg = i.padding().ok_or_else(|| invalid("pad without padding="))?;
            if cfg.len() != a.dims.len() || pv.len() != 1 || pv.ty != a.ty {
                return Err(invalid("bad pad operands"));
            }
            for (k, p) in cfg.iter().enumerate() {
                let n = a.dims[k] as i64;
                let want = p.low + p.high + n + (n - 1).max(0) * p.interior;
                if p.interior < 0 || dims.get(k).map(|&x| x as i64) != Some(want) {
                    return Err(invalid(format!("pad result dimension {k} is wrong")));
                }
            }
            let st = strides(&a.dims);
            let mut idx = Vec::with_capacity(product(&dims));
            for_each_index(&dims, |o, _| {
                let mut lin = 0usize;
                for (k, p) in cfg.iter().enumerate() {
                    let x = o[k] as i64 - p.low;
                    let step = p.interior + 1;
                    if x < 0 || x % step != 0 || (x / step) as usize >= a.dims[k] {
                        idx.push(None);
                        return;
                    }
                    lin += (x / step) as usize * st[k];
                }
                idx.push(Some(lin));
            });
            Ok(Array::new(ty, dims, a.buf.take_or(&idx, &pv.buf)))
        }
        O::Reverse => {
            want(arrays, 1)?;
            let a = arrays[0];
            let rd = attrs::dims(i, "dimensions")?;
            if rd.iter().any(|&d| d >= a.dims.len()) || dims != a.dims {
                return Err(invalid("bad reverse dimensions"));
            }
            let st = strides(&a.dims);
            let ad = a.dims.clone();
            Ok(gather_map(a, dims, |o| {
                (0..o.len())
                    .map(|k| {
                        if rd.contains(&k) {
                            (ad[k] - 1 - o[k]) * st[k]
                        } else {
                            o[k] * st[k]
                        }
                    })
                    .sum()
            }))
        }
        O::Iota => {
            let d = attrs::req_int(i, "iota_dimension")?;
            let d = usize::try_from(d)
                .ok()
                .filter(|&d| d < dims.len())
                .ok_or_else(|| invalid("bad iota_dimension"))?;
            let n = product(&dims);
            let inner: usize = dims[d + 1..].iter().product();
            let vals: Vec<i64> = (0..n)
                .map(|k| ((k / inner.max(1)) % dims[d]) as i64)
                .collect();
            let src = Array::new(PrimitiveType::S64, dims, Buffer::S64(vals));
            crate::convert::convert(&src, ty)
        }
        O::DynamicSlice => {
            let a = arrays.first().ok_or_else(|| invalid("missing operand"))?;
            let sizes = attrs::dims(i, "dynamic_slice_sizes")?;
            let starts = start_indices(&arrays[1..], a.dims.len())?;
            if sizes.len() != a.dims.len()
                || sizes.iter().zip(&a.dims).any(|(s, d)| s > d)
                || sizes != dims
            {
                return Err(invalid("bad dynamic_slice_sizes"));
            }
            let st: Vec<usize> = starts
                .iter()
                .enumerate()
                .map(|(k, &s)| s.clamp(0, (a.dims[k] - sizes[k]) as i64) as usize)
                .collect();
            let strd = strides(&a.dims);
            Ok(gather_map(a, dims, |o| {
                (0..o.len()).map(|k| (st[k] + o[k]) * strd[k]).sum()
            }))
        }
        O::DynamicUpdateSlice => {
            if arrays.len() < 2 {
                return Err(invalid("dynamic-update-slice needs operand and update"));
            }
            let (a, u) = (arrays[0], arrays[1]);
            if u.dims.len() != a.dims.len()
                || u.dims.iter().zip(&a.dims).any(|(x, y)| x > y)
                || u.ty != a.ty
            {
                return Err(invalid("update does not fit the operand"));
            }
            let starts = start_indices(&arrays[2..], a.dims.len())?;
            let st: Vec<usize> = starts
                .iter()
                .enumerate()
                .map(|(k, &s)| s.clamp(0, (a.dims[k] - u.dims[k]) as i64) as usize)
                .collect();
            let strd = strides(&a.dims);
            let mut dst = Vec::with_capacity(u.len());
            for_each_index(&u.dims, |o, _| {
                dst.push((0..o.len()).map(|k| (st[k] + o[k]) * strd[k]).sum())
            });
            let mut out = (*a).clone();
            out.buf.scatter_from(&dst, &u.buf);
            Ok(out)
        }
        O::Bitcast => {
            want(arrays, 1)?;
            let a = arrays[0];
            let in_shape = operand_shapes.first().and_then(|s| s.as_array());
            bitcast(a, in_shape, i.shape.as_array(), ty, dims)
        }
        O::Gather => {
            want(arrays, 2)?;
            gather(i, arrays[0], arrays[1], dims)
        }
        O::GetDimensionSize => {
            want(arrays, 1)?;
            let d = attrs::dims(i, "dimensions")?;
            let n = d
                .first()
                .and_then(|&d| arrays[0].dims.get(d))
                .ok_or_else(|| invalid("bad dimensions"))?;
            let src = Array::new(PrimitiveType::S64, vec![], Buffer::S64(vec![*n as i64]));
            crate::convert::convert(&src, ty)
        }
        O::SetDimensionSize => {
            // Static evaluation: the array keeps its full (bound) size. A smaller size makes
            // the elements past it unspecified (XLA returns whatever its buffer holds there),
            // which the oracle does not model: it evaluates only the size that is the bound.
            want(arrays, 2)?;
            let a = arrays[0];
            let d = attrs::dims(i, "dimensions")?;
            let bound = d
                .first()
                .and_then(|&d| a.dims.get(d))
                .ok_or_else(|| invalid("bad dimensions"))?;
            let size = arrays[1].get_i64(0);
            if size != *bound as i64 {
                return Err(unsupported(format!(
                    "set-dimension-size to {size} below the bound {bound}: dynamic sizes are not modelled"
                )));
            }
            Ok(a.clone())
        }
        op => Err(unsupported(format!("opcode {}", op.name()))),
    }
}

/// Start indices of dynamic-slice/dynamic-update-slice: one scalar per dimension (or, in the old
/// form, one rank-1 array).
fn start_indices(ops: &[&Array], rank: usize) -> Result<Vec<i64>> {
    if ops.len() == 1 && ops[0].dims.len() == 1 && rank != 1 {
        let a = ops[0];
        if a.len() != rank {
            return Err(invalid("start index vector has the wrong length"));
        }
        return Ok((0..rank).map(|k| a.get_i64(k)).collect());
    }
    if ops.len() != rank || ops.iter().any(|a| a.len() != 1 || !a.ty.is_integer()) {
        return Err(invalid(format!(
            "expects {rank} scalar integer start indices"
        )));
    }
    Ok(ops.iter().map(|a| a.get_i64(0)).collect())
}

/// Physical position of a logical index under a minor-to-major layout.
fn physical_strides(dims: &[usize], m2m: &[i64]) -> Option<Vec<usize>> {
    let mut s = vec![0usize; dims.len()];
    let mut acc = 1usize;
    let mut seen = vec![false; dims.len()];
    for &d in m2m {
        let d = usize::try_from(d).ok().filter(|&d| d < dims.len())?;
        if std::mem::replace(&mut seen[d], true) {
            return None;
        }
        s[d] = acc;
        acc *= dims[d];
    }
    if seen.iter().all(|&x| x) {
        Some(s)
    } else {
        None
    }
}

/// `bitcast`: reinterpret the operand's physical element order (by its layout) in the result's
/// layout. Same element count and element byte size required.
fn bitcast(
    a: &Array,
    in_shape: Option<&hlo::ArrayShape>,
    out_shape: Option<&hlo::ArrayShape>,
    ty: PrimitiveType,
    dims: Vec<usize>,
) -> Result<Array> {
    if product(&dims) != a.len() {
        if ty.byte_size() != a.ty.byte_size() {
            return Err(unsupported("bitcast changing the element size"));
        }
        // The verifier accepts it, as XLA's does without layouts; what it reads past the
        // operand's end is not defined.
        return Err(unsupported("bitcast that changes the element count"));
    }
    let in_m2m = in_shape
        .map(|s| s.minor_to_major())
        .unwrap_or_else(|| (0..a.dims.len() as i64).rev().collect());
    let out_m2m = out_shape
        .map(|s| s.minor_to_major())
        .unwrap_or_else(|| (0..dims.len() as i64).rev().collect());
    let ps_in = physical_strides(&a.dims, &in_m2m).ok_or_else(|| invalid("bad operand layout"))?;
    let ps_out = physical_strides(&dims, &out_m2m).ok_or_else(|| invalid("bad result layout"))?;
    // inverse map of the operand: physical position -> logical row-major position
    let mut inv = vec![0usize; a.len()];
    for_each_index(&a.dims, |idx, lin| {
        let p: usize = idx.iter().zip(&ps_in).map(|(i, s)| i * s).sum();
        inv[p] = lin;
    });
    let moved = gather_map(a, dims, |o| {
        inv[o.iter().zip(&ps_out).map(|(i, s)| i * s).sum::<usize>()]
    });
    if ty == a.ty {
        Ok(moved)
    } else {
        let d = moved.dims.clone();
        crate::convert::bitcast_convert(&moved, ty, d)
    }
}

/// Reads the start vector for batch index `b` (indices dims without index_vector_dim).
pub fn start_vector(idx: &Array, ivd: usize, b: &[usize], n: usize, out: &mut Vec<i64>) {
    out.clear();
    let st = strides(&idx.dims);
    let mut base = 0usize;
    let mut k = 0usize;
    for d in 0..idx.dims.len() {
        if d == ivd {
            continue;
        }
        base += b[k] * st[d];
        k += 1;
    }
    if ivd >= idx.dims.len() {
        out.push(idx.get_i64(base));
    } else {
        for j in 0..n {
            out.push(idx.get_i64(base + j * st[ivd]));
        }
    }
}

fn gather(i: &Instruction, a: &Array, idx: &Array, dims: Vec<usize>) -> Result<Array> {
    let offset_dims = attrs::dims(i, "offset_dims")?;
    let collapsed = attrs::dims(i, "collapsed_slice_dims")?;
    let start_index_map = attrs::dims(i, "start_index_map")?;
    let op_batch = attrs::dims(i, "operand_batching_dims")?;
    let idx_batch = attrs::dims(i, "start_indices_batching_dims")?;
    let ivd = attrs::req_int(i, "index_vector_dim")? as usize;
    let slice_sizes = attrs::dims(i, "slice_sizes")?;
    let rank = a.dims.len();
    // A window of size 0 in a collapsed (or batching) dimension leaves no element to read for
    // a non-empty result: XLA's semantics give it no value.
    if product(&a.dims) == 0 && product(&dims) > 0 {
        return Err(unsupported(
            "gather with a non-empty result from an empty operand (an empty window)",
        ));
    }
    if slice_sizes.len() != rank
        || slice_sizes.iter().zip(&a.dims).any(|(s, d)| s > d)
        || start_index_map
            .iter()
            .chain(&collapsed)
            .chain(&op_batch)
            .any(|&d| d >= rank)
        || ivd > idx.dims.len()
        || offset_dims.iter().any(|&d| d >= dims.len())
        || op_batch.len() != idx_batch.len()
        || idx_batch.iter().any(|&d| d >= idx.dims.len() || d == ivd)
    {
        return Err(invalid("inconsistent gather dimension numbers"));
    }
    let nvec = if ivd < idx.dims.len() {
        idx.dims[ivd]
    } else {
        1
    };
    if nvec != start_index_map.len() {
        return Err(invalid("index vector length differs from start_index_map"));
    }
    let batch_out: Vec<usize> = (0..dims.len())
        .filter(|d| !offset_dims.contains(d))
        .collect();
    let idx_rank_wo = idx.dims.len() - usize::from(ivd < idx.dims.len());
    if batch_out.len() != idx_rank_wo {
        return Err(invalid("gather batch dimensions do not match the indices"));
    }
    let window_operand: Vec<usize> = (0..rank)
        .filter(|d| !collapsed.contains(d) && !op_batch.contains(d))
        .collect();
    if window_operand.len() != offset_dims.len() {
        return Err(invalid("offset_dims do not match the slice"));
    }
    // Position in the batch index of each start_indices_batching_dim.
    let idx_batch_pos: Vec<usize> = idx_batch
        .iter()
        .map(|&d| d - usize::from(d > ivd))
        .collect();
    for (k, &od) in offset_dims.iter().enumerate() {
        if dims[od] > slice_sizes[window_operand[k]] {
            return Err(invalid("gather offset dimension larger than the slice"));
        }
    }
    let st = strides(&a.dims);
    let mut b = vec![0usize; batch_out.len()];
    let mut sv = Vec::new();
    let mut start = vec![0i64; rank];
    Ok(gather_map(a, dims, |o| {
        for (k, &d) in batch_out.iter().enumerate() {
            b[k] = o[d];
        }
        start_vector(idx, ivd, &b, nvec, &mut sv);
        start.iter_mut().for_each(|s| *s = 0);
        for (k, &d) in start_index_map.iter().enumerate() {
            start[d] = sv[k];
        }
        for (k, &d) in op_batch.iter().enumerate() {
            start[d] = b[idx_batch_pos[k]] as i64;
        }
        let mut lin = 0usize;
        for d in 0..rank {
            let s = start[d].clamp(0, (a.dims[d] - slice_sizes[d]) as i64) as usize;
            lin += s * st[d];
        }
        for (k, &od) in offset_dims.iter().enumerate() {
            lin += o[od] * st[window_operand[k]];
        }
        lin
    }))
}

//! sort (multi-operand, comparator computation) and TopK.
//!
//! Sorting is a stable merge sort driven by the comparator ("is lhs less than rhs"). It never
//! panics on an inconsistent comparator (Rust's own sorts may); it then simply returns some
//! permutation.

use crate::elementwise::{to_f64s, to_i64s};
use crate::eval::{arr, Ctx};
use crate::reduce::scalar;
use crate::scalar_prog::{svs_of, ScalarProg};
use crate::value::{strides, Array, Value};
use crate::{attrs, invalid, Result};
use hlo::{Instruction, Opcode, Shape, TypeClass};

/// Stable merge sort of `v` with a fallible "less than".
///
/// A comparator under which the merge sort's result is not sorted is no strict weak order
/// either, and refused the same way.
///
/// A comparator that holds for an element and itself is no strict weak order, and XLA leaves
/// the order undefined then (XLA CPU sorts with the C++ library, which requires one: C++
/// [alg.sorting.general]); there is no result to compare against, so it is unsupported (a
/// minimizer reducing `a > b or (a == b and c > d)` to `a == b` made one).
fn merge_sort(
    v: &mut Vec<usize>,
    less: &mut dyn FnMut(usize, usize) -> Result<bool>,
) -> Result<()> {
    for &x in v.iter() {
        if less(x, x)? {
            return Err(crate::unsupported(format!(
                "a sort comparator that is no strict weak order: it holds for element {x} and \
                 itself, and XLA leaves the order undefined"
            )));
        }
    }
    let n = v.len();
    let mut buf = v.clone();
    let mut width = 1;
    while width < n {
        let mut lo = 0;
        while lo < n {
            let mid = (lo + width).min(n);
            let hi = (lo + 2 * width).min(n);
            let (mut i, mut j, mut k) = (lo, mid, lo);
            while i < mid && j < hi {
                // Take from the right only when it is strictly less: stability.
                if less(v[j], v[i])? {
                    buf[k] = v[j];
                    j += 1;
                } else {
                    buf[k] = v[i];
                    i += 1;
                }
                k += 1;
            }
            buf[k..k + (mid - i)].copy_from_slice(&v[i..mid]);
            k += mid - i;
            buf[k..k + (hi - j)].copy_from_slice(&v[j..hi]);
            lo = hi;
        }
        std::mem::swap(v, &mut buf);
        width *= 2;
    }
    // Under a strict weak order a merge sort's result is sorted; where an element is still
    // less than the one before it, the comparator is none (`NE` is one such: it holds both
    // ways for any two different elements), and XLA CPU's sort may do anything with it (it
    // has crashed on one).
    for k in 1..v.len() {
        if less(v[k], v[k - 1])? {
            return Err(crate::unsupported(format!(
                "a sort comparator that is no strict weak order: after sorting, element {} is \
                 still less than element {} before it, and XLA leaves the order undefined",
                v[k],
                v[k - 1]
            )));
        }
    }
    Ok(())
}

/// A comparator that is `compare(p[2k], p[2k+1])` (or its mirror) of operand `k`.
struct SimpleCmp {
    operand: usize,
    dir: String,
    total: bool,
    swapped: bool,
}

fn simple_comparator(ctx: &Ctx, c: usize, n: usize) -> Option<SimpleCmp> {
    let comp = ctx.module.computations.get(c)?;
    let root = comp.root_instruction();
    if root.opcode != Opcode::Compare || root.operands.len() != 2 {
        return None;
    }
    let pn = |k: usize| {
        let x = comp.instructions.get(root.operands[k])?;
        (x.opcode == Opcode::Parameter).then_some(x.parameter_number?)
    };
    let (a, b) = (pn(0)?, pn(1)?);
    let (lo, swapped) = if b == a + 1 && a % 2 == 0 {
        (a, false)
    } else if a == b + 1 && b % 2 == 0 {
        (b, true)
    } else {
        return None;
    };
    let operand = (lo / 2) as usize;
    if operand >= n {
        return None;
    }
    Some(SimpleCmp {
        operand,
        dir: attrs::word(root, "direction")?,
        total: attrs::word(root, "type").as_deref() == Some("TOTALORDER"),
        swapped,
    })
}

pub fn sort(ctx: &mut Ctx, i: &Instruction, ops: &[&Value]) -> Result<Value> {
    let arrays: Vec<&Array> = ops
        .iter()
        .map(|v| arr(v).map(|a| &**a))
        .collect::<Result<_>>()?;
    let first = arrays
        .first()
        .ok_or_else(|| invalid("sort without operands"))?;
    if arrays.iter().any(|a| a.dims != first.dims) {
        return Err(invalid("sort operands differ in dimensions"));
    }
    let c = attrs::comp(i, "to_apply")?;
    let d = attrs::dims(i, "dimensions")?;
    let d = *d
        .first()
        .ok_or_else(|| invalid("sort without dimensions"))?;
    let dims = first.dims.clone();
    if d >= dims.len() {
        // A scalar "sort" of rank 0 has nothing to do.
        if dims.is_empty() {
            return Ok(pack(i, arrays.iter().map(|a| (*a).clone()).collect()));
        }
        return Err(invalid("sort dimension out of range"));
    }
    let n = dims[d];
    let st = strides(&dims);
    let total: usize = dims.iter().product();
    let simple = simple_comparator(ctx, c, arrays.len());
    // Keys for the fast path.
    enum Keys {
        F(Vec<f64>),
        S(Vec<i64>),
        U(Vec<u64>),
    }
    let keys = simple.as_ref().and_then(|s| {
        let a = arrays[s.operand];
        match a.ty.class() {
            TypeClass::Float => Some(Keys::F(to_f64s(&a.buf))),
            TypeClass::Signed | TypeClass::Pred => to_i64s(&a.buf).map(Keys::S),
            TypeClass::Unsigned => {
                to_i64s(&a.buf).map(|v| Keys::U(v.into_iter().map(|x| x as u64).collect()))
            }
            _ => None,
        }
    });
    // Other comparators: compiled to a scalar program when they are plain compare/select logic
    // over the keys (jax's NaN/zero-canonicalizing `lt_to`), else called per comparison.
    let compiled = if simple.is_none() {
        ScalarProg::compile(ctx.module, c).and_then(|prog| {
            let fits = prog.params.len() == 2 * arrays.len()
                && arrays
                    .iter()
                    .enumerate()
                    .all(|(k, a)| prog.params[2 * k] == a.ty && prog.params[2 * k + 1] == a.ty);
            let keys = arrays
                .iter()
                .map(|a| svs_of(a))
                .collect::<Option<Vec<_>>>()?;
            fits.then_some((prog, keys))
        })
    } else {
        None
    };
    let per_compare = compiled.as_ref().map_or(1, |(p, _)| p.len() as u64);
    ctx.step(
        (total as u64)
            .saturating_mul((usize::BITS - n.leading_zeros()) as u64)
            .saturating_mul(per_compare),
    )?;
    let mut perm_all: Vec<usize> = Vec::with_capacity(total);
    // Every 1-D line along d: its base offset.
    let outer_dims: Vec<usize> = dims
        .iter()
        .enumerate()
        .map(|(k, &x)| if k == d { 1 } else { x })
        .collect();
    let mut bases = Vec::new();
    crate::value::for_each_index(&outer_dims, |idx, _| {
        bases.push(idx.iter().zip(&st).map(|(a, b)| a * b).sum::<usize>())
    });
    let mut dst_all = Vec::with_capacity(total);
    for base in bases {
        let mut line: Vec<usize> = (0..n).map(|k| base + k * st[d]).collect();
        match (&simple, &keys) {
            (Some(s), Some(keys)) => {
                use std::cmp::Ordering;
                let dir = s.dir.clone();
                let lt = |o: Option<Ordering>| -> bool {
                    match dir.as_str() {
                        "LT" => o == Some(Ordering::Less),
                        "GT" => o == Some(Ordering::Greater),
                        "LE" => matches!(o, Some(Ordering::Less | Ordering::Equal)),
                        "GE" => matches!(o, Some(Ordering::Greater | Ordering::Equal)),
                        "EQ" => o == Some(Ordering::Equal),
                        _ => o != Some(Ordering::Equal),
                    }
                };
                let swapped = s.swapped;
                let total_order = s.total;
                let mut less = |x: usize, y: usize| -> Result<bool> {
                    let (x, y) = if swapped { (y, x) } else { (x, y) };
                    let o = match keys {
                        Keys::F(k) => {
                            if total_order {
                                Some(k[x].total_cmp(&k[y]))
                            } else {
                                k[x].partial_cmp(&k[y])
                            }
                        }
                        Keys::S(k) => Some(k[x].cmp(&k[y])),
                        Keys::U(k) => Some(k[x].cmp(&k[y])),
                    };
                    Ok(lt(o))
                };
                merge_sort(&mut line, &mut less)?;
            }
            _ if compiled.is_some() => {
                let (prog, keys) = compiled.as_ref().expect("checked");
                let mut args = Vec::with_capacity(2 * keys.len());
                let mut regs = Vec::with_capacity(prog.len());
                let mut less = |x: usize, y: usize| -> Result<bool> {
                    args.clear();
                    for k in keys {
                        args.push(k[x]);
                        args.push(k[y]);
                    }
                    prog.run_pred(&args, &mut regs)
                };
                merge_sort(&mut line, &mut less)?;
            }
            _ => {
                let mut less = |x: usize, y: usize| -> Result<bool> {
                    let mut args = Vec::with_capacity(2 * arrays.len());
                    for a in &arrays {
                        args.push(scalar(a, x));
                        args.push(scalar(a, y));
                    }
                    let r = ctx.call(c, args)?;
                    let r = arr(&r)?;
                    if r.len() != 1 {
                        return Err(invalid("sort comparator must return a pred scalar"));
                    }
                    Ok(r.get_bool(0))
                };
                merge_sort(&mut line, &mut less)?;
            }
        }
        for k in 0..n {
            dst_all.push(base + k * st[d]);
            perm_all.push(line[k]);
        }
    }
    let outs: Vec<Array> = arrays
        .iter()
        .map(|a| {
            let vals = a.buf.take(&perm_all);
            let mut out = (*a).clone();
            out.buf.scatter_from(&dst_all, &vals);
            out
        })
        .collect();
    Ok(pack(i, outs))
}

fn pack(i: &Instruction, outs: Vec<Array>) -> Value {
    let mut vals: Vec<Value> = outs.into_iter().map(Value::array).collect();
    if matches!(i.shape, Shape::Tuple(_)) || vals.len() != 1 {
        Value::Tuple(vals)
    } else {
        vals.pop().unwrap_or(Value::Tuple(vec![]))
    }
}

/// TopK along the last dimension: (values, s32 indices), largest first (or smallest with
/// `largest=false`); ties keep the lower index first.
pub fn topk(i: &Instruction, a: &Array) -> Result<Value> {
    let rank = a.dims.len();
    let n = *a.dims.last().ok_or_else(|| invalid("topk of a scalar"))?;
    let k = match attrs::int(i, "k")? {
        Some(k) => k,
        None => match &i.shape {
            Shape::Tuple(t) => t
                .first()
                .and_then(|s| s.dims().last().copied())
                .unwrap_or(0),
            _ => 0,
        },
    };
    let k = usize::try_from(k)
        .ok()
        .filter(|&k| k <= n)
        .ok_or_else(|| invalid("bad k"))?;
    let largest = attrs::flag(i, "largest", true);
    let rows: usize = a.dims[..rank - 1].iter().product();
    let keys = to_f64s(&a.buf);
    let ints = to_i64s(&a.buf);
    let mut pos = Vec::with_capacity(rows * k);
    let mut idx = Vec::with_capacity(rows * k);
    for r in 0..rows {
        let mut line: Vec<usize> = (0..n).collect();
        let base = r * n;
        let mut less = |x: usize, y: usize| -> Result<bool> {
            // "less" = comes first.
            let o = match &ints {
                Some(v) if !a.ty.is_float() => {
                    if a.ty.is_unsigned_integer() {
                        (v[base + x] as u64).cmp(&(v[base + y] as u64))
                    } else {
                        v[base + x].cmp(&v[base + y])
                    }
                }
                _ => keys[base + x].total_cmp(&keys[base + y]),
            };
            Ok(if largest {
                o == std::cmp::Ordering::Greater
            } else {
                o == std::cmp::Ordering::Less
            })
        };
        merge_sort(&mut line, &mut less)?;
        for &j in &line[..k] {
            pos.push(base + j);
            idx.push(j as i32);
        }
    }
    let mut odims = a.dims.clone();
    odims[rank - 1] = k;
    let vals = Array::new(a.ty, odims.clone(), a.buf.take(&pos));
    let inds = Array::new(
        hlo::PrimitiveType::S32,
        odims,
        crate::value::Buffer::S32(idx),
    );
    Ok(Value::Tuple(vec![Value::array(vals), Value::array(inds)]))
}

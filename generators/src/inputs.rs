//! Arguments for a module's entry parameters.
//!
//! Values are uniform with boundary values (NaN, +-inf, -0, denormals, min, max, INT_MIN, -1,
//! 0, 1) mixed in at [`Config::special_value_percent`]. Parameters that the entry computation
//! uses directly as indices (dynamic-slice / dynamic-update-slice starts, gather / scatter
//! indices, a conditional's branch index) get values that are mostly in range and out of range
//! at [`Config::out_of_range_index_percent`].

use crate::config::Config;
use crate::rng::SplitMix64;
use arbitrary::Unstructured;
use hlo::literal::encode;
use hlo::{
    ArrayLiteral, Computation, InstrId, Literal, Module, Opcode, PrimitiveType, Scalar, Shape,
    TypeClass,
};
use std::collections::BTreeMap;

/// Arguments for `module`'s entry parameters (in parameter order), seeded from the fuzzer bytes.
pub fn generate_inputs(module: &Module, u: &mut Unstructured, cfg: &Config) -> Vec<Literal> {
    let seed: u64 = u.arbitrary().unwrap_or(0);
    generate_inputs_from_seed(module, seed, cfg)
}

/// Arguments for `module`'s entry parameters from a seed. For the modules the generators make
/// (their shapes are bounded by the configuration); a module from a user goes through
/// [`try_generate_inputs_from_seed`], which checks the sizes first.
pub fn generate_inputs_from_seed(module: &Module, seed: u64, cfg: &Config) -> Vec<Literal> {
    try_generate_inputs_from_seed(module, seed, cfg, u64::MAX)
        .unwrap_or_else(|e| panic!("a generated module's inputs cannot be made: {e}"))
}

/// [`generate_inputs_from_seed`] for any module: the entry parameters' sizes are computed with
/// checked arithmetic and must fit in `max_bytes` together (the oracle's memory budget, for a
/// user's module) before anything is allocated; an error says which parameter does not.
pub fn try_generate_inputs_from_seed(
    module: &Module,
    seed: u64,
    cfg: &Config,
    max_bytes: u64,
) -> Result<Vec<Literal>, String> {
    let entry = module.entry_computation();
    let params = entry.parameters();
    let mut total = 0u64;
    for (_, p) in &params {
        let bytes = shape_bytes(&p.shape).ok_or_else(|| {
            format!(
                "parameter {} ({}) has more bytes than can be addressed",
                p.name, p.shape
            )
        })?;
        total = total.saturating_add(bytes);
        if total > max_bytes {
            return Err(format!(
                "parameter {} ({}): the inputs need {} bytes or more, over the memory budget \
                 of {max_bytes} bytes",
                p.name, p.shape, total
            ));
        }
    }
    let mut r = SplitMix64(seed ^ 0x05ee_d1a9_u64);
    let bounds = index_bounds(entry);
    Ok(params
        .into_iter()
        .map(|(id, p)| make(&mut r, &p.shape, bounds.get(&id), cfg))
        .collect())
}

/// The bytes of a value of `shape` (`None` when it overflows or a dimension is negative).
fn shape_bytes(shape: &Shape) -> Option<u64> {
    match shape {
        Shape::Array(a) => a.element_count()?.checked_mul(a.ty.byte_size() as u64),
        Shape::Tuple(t) => t
            .iter()
            .try_fold(0u64, |acc, s| acc.checked_add(shape_bytes(s)?)),
        Shape::Token | Shape::Opaque | Shape::Buffer(_) => Some(0),
    }
}

/// For an index parameter: the in-range bound of each component along `index_vector_dim`.
#[derive(Clone, Debug)]
struct IndexUse {
    bounds: Vec<i64>,
    index_vector_dim: usize,
}

fn dims_of(c: &Computation, id: InstrId) -> Vec<i64> {
    c.instructions[id].shape.dims().to_vec()
}

fn index_bounds(c: &Computation) -> BTreeMap<InstrId, IndexUse> {
    let mut m = BTreeMap::new();
    let mut put = |id: InstrId, u: IndexUse| {
        if c.instructions[id].opcode == Opcode::Parameter {
            m.entry(id).or_insert(u);
        }
    };
    for ins in &c.instructions {
        match ins.opcode {
            Opcode::DynamicSlice if !ins.operands.is_empty() => {
                let od = dims_of(c, ins.operands[0]);
                let sd = ins.shape.dims();
                for (k, &o) in ins.operands[1..].iter().enumerate() {
                    if k < od.len() && k < sd.len() {
                        put(
                            o,
                            IndexUse {
                                bounds: vec![od[k] - sd[k]],
                                index_vector_dim: 0,
                            },
                        );
                    }
                }
            }
            Opcode::DynamicUpdateSlice if ins.operands.len() >= 2 => {
                let od = dims_of(c, ins.operands[0]);
                let ud = dims_of(c, ins.operands[1]);
                for (k, &o) in ins.operands[2..].iter().enumerate() {
                    if k < od.len() && k < ud.len() {
                        put(
                            o,
                            IndexUse {
                                bounds: vec![od[k] - ud[k]],
                                index_vector_dim: 0,
                            },
                        );
                    }
                }
            }
            Opcode::Gather if ins.operands.len() == 2 => {
                let od = dims_of(c, ins.operands[0]);
                let sizes = ins.ints("slice_sizes").unwrap_or(&[]);
                let map = ins.ints("start_index_map").unwrap_or(&[]);
                let bounds = map
                    .iter()
                    .map(|&d| {
                        let d = d as usize;
                        od.get(d).copied().unwrap_or(0) - sizes.get(d).copied().unwrap_or(0)
                    })
                    .collect();
                let ivd = ins.int("index_vector_dim").unwrap_or(0).max(0) as usize;
                put(
                    ins.operands[1],
                    IndexUse {
                        bounds,
                        index_vector_dim: ivd,
                    },
                );
            }
            Opcode::Scatter if ins.operands.len() >= 3 => {
                let n = ins.operands.len() / 2;
                let od = dims_of(c, ins.operands[0]);
                let ud = dims_of(c, ins.operands[n + 1]);
                let uwd = ins.ints("update_window_dims").unwrap_or(&[]);
                let inserted = ins.ints("inserted_window_dims").unwrap_or(&[]);
                let batching = ins.ints("input_batching_dims").unwrap_or(&[]);
                let window_src: Vec<i64> = (0..od.len() as i64)
                    .filter(|d| !inserted.contains(d) && !batching.contains(d))
                    .collect();
                let map = ins.ints("scatter_dims_to_operand_dims").unwrap_or(&[]);
                let bounds = map
                    .iter()
                    .map(|&d| {
                        let size = match window_src.iter().position(|&w| w == d) {
                            Some(k) => uwd
                                .get(k)
                                .and_then(|&p| ud.get(p as usize))
                                .copied()
                                .unwrap_or(1),
                            None => 1,
                        };
                        od.get(d as usize).copied().unwrap_or(0) - size
                    })
                    .collect();
                let ivd = ins.int("index_vector_dim").unwrap_or(0).max(0) as usize;
                put(
                    ins.operands[1],
                    IndexUse {
                        bounds,
                        index_vector_dim: ivd,
                    },
                );
            }
            Opcode::Conditional if ins.attr("branch_computations").is_some() => {
                let nb = ins.comps("branch_computations").map_or(1, |b| b.len()) as i64;
                if let Some(&o) = ins.operands.first() {
                    put(
                        o,
                        IndexUse {
                            bounds: vec![nb - 1],
                            index_vector_dim: 0,
                        },
                    );
                }
            }
            _ => {}
        }
    }
    m
}

fn make(r: &mut SplitMix64, shape: &Shape, idx: Option<&IndexUse>, cfg: &Config) -> Literal {
    match shape {
        Shape::Array(a) => {
            let n: usize = a.dims.iter().map(|&d| d.max(0) as usize).product();
            let w = a.ty.byte_size();
            let mut data = vec![0u8; n * w];
            let stride: usize = match idx {
                Some(u) => a
                    .dims
                    .iter()
                    .skip(u.index_vector_dim + 1)
                    .map(|&d| d.max(0) as usize)
                    .product(),
                None => 1,
            };
            let comps = match idx {
                Some(u) if u.index_vector_dim < a.dims.len() => {
                    a.dims[u.index_vector_dim].max(1) as usize
                }
                _ => 1,
            };
            for i in 0..n {
                let out = &mut data[i * w..(i + 1) * w];
                match idx {
                    Some(u) if a.ty.is_integer() => {
                        let j = (i / stride.max(1)) % comps;
                        let bound = u.bounds.get(j).copied().unwrap_or(0).max(0);
                        let v = if r.percent(cfg.out_of_range_index_percent) {
                            if r.percent(50) {
                                -1 - r.below(4) as i64
                            } else {
                                bound + 1 + r.below(4) as i64
                            }
                        } else {
                            r.below(bound as u64 + 1) as i64
                        };
                        encode(a.ty, Scalar::S(v), out);
                    }
                    _ => element(r, a.ty, cfg, out),
                }
            }
            Literal::Array(ArrayLiteral {
                ty: a.ty,
                dims: a.dims.clone(),
                data,
            })
        }
        Shape::Tuple(t) => Literal::Tuple(t.iter().map(|s| make(r, s, None, cfg)).collect()),
        // Not data the oracle evaluates: a placeholder, as for tokens.
        Shape::Token | Shape::Opaque | Shape::Buffer(_) => Literal::Token,
    }
}

/// Boundary values of a float type: NaN, +-inf, -0, the smallest denormal, the smallest normal,
/// the largest finite value, +-1.
fn float_specials(ty: PrimitiveType) -> [f64; 9] {
    let (den, norm, max) = match ty {
        PrimitiveType::F16 => (2f64.powi(-24), 2f64.powi(-14), 65504.0),
        PrimitiveType::Bf16 => (2f64.powi(-133), 2f64.powi(-126), 3.3895313892515355e38),
        PrimitiveType::F32 => (2f64.powi(-149), 2f64.powi(-126), f32::MAX as f64),
        _ => (f64::from_bits(1), f64::MIN_POSITIVE, f64::MAX),
    };
    [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -0.0,
        den,
        norm,
        max,
        -max,
        -1.0,
    ]
}

fn float_value(r: &mut SplitMix64, ty: PrimitiveType, special: bool) -> f64 {
    if special {
        let s = float_specials(ty);
        return s[r.below(s.len() as u64) as usize];
    }
    let scale = [1.0, 1.0, 4.0, 100.0][r.below(4) as usize];
    (r.unit() * 2.0 - 1.0) * scale
}

fn element(r: &mut SplitMix64, ty: PrimitiveType, cfg: &Config, out: &mut [u8]) {
    let special = r.percent(cfg.special_value_percent);
    match ty.class() {
        TypeClass::Pred => out[0] = r.percent(50) as u8,
        TypeClass::Signed | TypeClass::Unsigned => {
            let bits = ty.bit_width();
            let v: u64 = if special {
                let min = if ty.is_signed_integer() {
                    1u64 << (bits - 1)
                } else {
                    0
                };
                let max = if ty.is_signed_integer() {
                    (1u64 << (bits - 1)) - 1
                } else if bits == 64 {
                    u64::MAX
                } else {
                    (1u64 << bits) - 1
                };
                [min, max, u64::MAX, 0, 1][r.below(5) as usize]
            } else if r.percent(50) {
                (r.below(21) as i64 - 10) as u64
            } else {
                r.next_u64()
            };
            encode(ty, Scalar::U(v), out);
        }
        TypeClass::Float => {
            if special && out.len() == 1 {
                // f8 / f4: any bit pattern (NaN, inf where the type has them, denormals, max).
                let mask = if ty == PrimitiveType::F4E2M1FN {
                    0x0f
                } else {
                    0xff
                };
                out[0] = (r.next_u64() as u8) & mask;
            } else {
                let v = float_value(r, ty, special);
                encode(ty, Scalar::F(v), out);
            }
        }
        TypeClass::Complex => {
            let c = ty.complex_component().unwrap_or(PrimitiveType::F32);
            let re = float_value(r, c, special);
            let sp = special && r.percent(50);
            let im = float_value(r, c, sp);
            encode(ty, Scalar::C(re, im), out);
        }
        TypeClass::Other => {}
    }
}

//! rng-bit-generator: Threefry-2x32 (20 rounds) and Philox-4x32 (10 rounds) with the state layout,
//! counters and output ordering of XLA's RngBitGeneratorExpander and its prng library.
//! `rng_default` is Philox, as XLA's CPU (and GPU) compilers resolve it.

use crate::value::{from_bits, Array, Buffer, Value};
use crate::{attrs, invalid, unsupported, Result};
use hlo::{Instruction, PrimitiveType, Shape};

fn threefry2x32(x: [u32; 2], key: [u32; 2]) -> [u32; 2] {
    const R: [u32; 8] = [13, 15, 26, 6, 17, 29, 16, 24];
    let ks = [key[0], key[1], 0x1BD1_1BDA ^ key[0] ^ key[1]];
    let mut x = [x[0].wrapping_add(ks[0]), x[1].wrapping_add(ks[1])];
    let rounds = |x: &mut [u32; 2], rs: &[u32]| {
        for &r in rs {
            x[0] = x[0].wrapping_add(x[1]);
            x[1] = x[1].rotate_left(r) ^ x[0];
        }
    };
    for i in 0..5u32 {
        let rs = if i % 2 == 0 { &R[..4] } else { &R[4..] };
        rounds(&mut x, rs);
        let a = ks[((i + 1) % 3) as usize];
        let b = ks[((i + 2) % 3) as usize];
        x[0] = x[0].wrapping_add(a);
        x[1] = x[1].wrapping_add(b).wrapping_add(i + 1);
    }
    x
}

fn philox4x32(mut x: [u32; 4], mut key: [u32; 2]) -> [u32; 4] {
    const W_A: u32 = 0x9E37_79B9;
    const W_B: u32 = 0xBB67_AE85;
    const M_A: u64 = 0xD251_1F53;
    const M_B: u64 = 0xCD9E_8D57;
    for _ in 0..10 {
        let p0 = x[0] as u64 * M_A;
        let p1 = x[2] as u64 * M_B;
        x = [
            ((p1 >> 32) as u32) ^ x[1] ^ key[0],
            p1 as u32,
            ((p0 >> 32) as u32) ^ x[3] ^ key[1],
            p0 as u32,
        ];
        key = [key[0].wrapping_add(W_A), key[1].wrapping_add(W_B)];
    }
    x
}

fn split(v: u64) -> [u32; 2] {
    [v as u32, (v >> 32) as u32]
}

/// Threefry bits for `dims` with 32-bit (`wide == false`) or 64-bit words.
fn threefry(key: u64, ctr: u64, dims: &[usize], wide: bool) -> (Vec<u64>, u64) {
    let n: usize = dims.iter().product();
    let k = split(key);
    if wide {
        let out = (0..n)
            .map(|j| {
                let o = threefry2x32(split(ctr.wrapping_add(j as u64)), k);
                o[0] as u64 | (o[1] as u64) << 32
            })
            .collect();
        return (out, ctr.wrapping_add(n as u64));
    }
    // Split the shape in halves along the first even dimension (else the largest one); each
    // Threefry call makes one element of each half.
    if dims.is_empty() {
        let o = threefry2x32(split(ctr), k);
        return (vec![o[0] as u64], ctr.wrapping_add(1));
    }
    let sd = dims
        .iter()
        .position(|d| d % 2 == 0)
        .unwrap_or_else(|| (0..dims.len()).fold(0, |b, i| if dims[i] > dims[b] { i } else { b }));
    let mut half = dims.to_vec();
    half[sd] = dims[sd].div_ceil(2);
    let hn: usize = half.iter().product();
    let outs: Vec<[u32; 2]> = (0..hn)
        .map(|j| threefry2x32(split(ctr.wrapping_add(j as u64)), k))
        .collect();
    let hst = crate::value::strides(&half);
    let mut out = Vec::with_capacity(n);
    crate::value::for_each_index(dims, |idx, _| {
        let mut j = 0;
        for d in 0..dims.len() {
            let x = if d == sd { idx[d] / 2 } else { idx[d] };
            j += x * hst[d];
        }
        out.push(outs[j][idx[sd] % 2] as u64);
    });
    (out, ctr.wrapping_add(hn as u64))
}

/// Philox bits: `n` words of 32 or 64 bits from the 128-bit counter (lo, hi).
fn philox(key: u64, lo: u64, hi: u64, n: usize, wide: bool) -> (Vec<u64>, u64, u64) {
    let n32 = if wide { n * 2 } else { n };
    let nv4 = n32.div_ceil(4);
    let k = split(key);
    let blocks: Vec<[u32; 4]> = (0..nv4)
        .map(|i| {
            let l = lo.wrapping_add(i as u64);
            let h = if l < lo { hi.wrapping_add(1) } else { hi };
            let (a, b) = (split(l), split(h));
            philox4x32([a[0], a[1], b[0], b[1]], k)
        })
        .collect();
    let out: Vec<u64> = if wide {
        (0..n)
            .map(|j| {
                let b = &blocks[j / 2];
                let c = j % 2;
                b[2 * c] as u64 | (b[2 * c + 1] as u64) << 32
            })
            .collect()
    } else {
        (0..n).map(|j| blocks[j / 4][j % 4] as u64).collect()
    };
    let nl = lo.wrapping_add(nv4 as u64);
    let nh = if nl < lo { hi.wrapping_add(1) } else { hi };
    (out, nl, nh)
}

pub fn rng_bit_generator(i: &Instruction, state_arr: &Array) -> Result<Value> {
    let alg = attrs::word(i, "algorithm").unwrap_or_else(|| "rng_default".into());
    let Shape::Tuple(parts) = &i.shape else {
        // XLA's verifier accepts a result of the bits alone; where the state goes is its own.
        return Err(unsupported(
            "rng-bit-generator without a (state, bits) result",
        ));
    };
    let data = parts
        .get(1)
        .and_then(|s| s.as_array())
        .ok_or_else(|| invalid("bad result shape"))?;
    let ty = data.ty;
    let dims: Vec<usize> = data.dims.iter().map(|&d| d.max(0) as usize).collect();
    let Buffer::U64(state) = &state_arr.buf else {
        return Err(unsupported(format!(
            "rng-bit-generator state of type {}",
            state_arr.ty
        )));
    };
    if state_arr.dims.len() != 1 || state.len() < 2 {
        return Err(invalid("rng-bit-generator state must be u64[>=2]"));
    }
    let bits = ty.bit_width();
    if !(ty.is_integer() || ty.is_float()) || bits > 64 || bits == 0 {
        return Err(unsupported(format!("rng-bit-generator producing {ty}")));
    }
    let wide = bits == 64;
    let n: usize = dims.iter().product();
    let key = state[0];
    let (words, new_state) = match alg.as_str() {
        "rng_three_fry" => {
            if state.len() != 2 {
                return Err(unsupported("three-fry with a state longer than 2"));
            }
            let (w, c) = threefry(key, state[1], &dims, wide);
            (w, vec![key, c])
        }
        "rng_philox" | "rng_default" => {
            let (lo, hi) = if state.len() >= 3 {
                (state[1], state[2])
            } else {
                (state[1], state[0])
            };
            let (w, nl, nh) = philox(key, lo, hi, n, wide);
            let mut s = state.clone();
            s[1] = nl;
            if state.len() >= 3 {
                s[2] = nh;
            }
            (w, s)
        }
        a => return Err(unsupported(format!("rng-bit-generator algorithm {a}"))),
    };
    // Narrow types keep the low bits of each 32-bit word.
    let raw: Vec<u128> = words.iter().map(|&w| w as u128).collect();
    let buf = from_bits(ty, &raw)?;
    let st = Array::new(
        PrimitiveType::U64,
        state_arr.dims.clone(),
        Buffer::U64(new_state),
    );
    Ok(Value::Tuple(vec![
        Value::array(st),
        Value::array(Array::new(ty, dims, buf)),
    ]))
}

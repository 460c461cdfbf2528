#!/usr/bin/env python3
"""Build the real-XLA HLO corpus of hlo-diff.

Run from the repository root:

    .venv/bin/python corpora/gen_corpus.py

The script defines a fixed set of small but real jax programs (training steps,
attention, convolutions, loops, RNG, linear algebra, FFT, odd dtypes, ...),
compiles each of them on XLA:CPU in fresh subprocesses with different
``XLA_FLAGS`` dump settings, and writes the text dumps to ``corpora/jax/``:

* ``dump/``           every program, default dump (``--xla_dump_to`` only)
* ``passes_all/``     a few programs, ``--xla_dump_hlo_pass_re=.*``
* ``passes_narrow/``  two or three programs, a narrower pass regex
* ``capped/``         every program, ``--xla_dump_max_hlo_modules=3``

For each dump directory ``<dir>.FILES`` lists every file XLA wrote (relative
paths, sorted) before binary/large files (``.o``, ``.ll``, ``.pb``, ...) are
deleted.  Machine-specific paths are scrubbed to stable placeholders.
Everything is deterministic: fixed shapes, PRNG keys passed as arguments or
derived from fixed seeds, and the same compile order in every subprocess (so
XLA's process-wide module ids are the same in every dump directory).

Only programs are compiled, never executed; nothing runs outside ``jax.jit``,
so no helper modules show up in the dumps.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))          # <repo>/corpora
REPO = os.path.dirname(HERE)
OUT = os.path.join(HERE, "jax")

# --------------------------------------------------------------------------
# Dump configurations.  Each runs in its own subprocess (XLA reads XLA_FLAGS
# once, at process start).  All programs are compiled in every configuration
# (same order, same module ids); --xla_dump_hlo_module_re picks the modules.
# --------------------------------------------------------------------------
PASSES_ALL_PROGRAMS = [
    "mlp_sgd_step",
    "softmax_attention",
    "conv1d_strided",
    "while_loop_newton_sqrt",
    "scatter_updates",
]
PASSES_NARROW_PROGRAMS = ["layer_norm", "conv2d_depthwise", "int_bit_ops"]
NARROW_PASS_RE = "algsimp|fusion|layout-assignment"


def _module_re(names):
    return "^jit_(" + "|".join(names) + ")$"


DUMP_CONFIGS = [
    ("dump", []),
    ("passes_all", ["--xla_dump_hlo_pass_re=.*",
                    "--xla_dump_hlo_module_re=" + _module_re(PASSES_ALL_PROGRAMS)]),
    ("passes_narrow", ["--xla_dump_hlo_pass_re=" + NARROW_PASS_RE,
                       "--xla_dump_hlo_module_re=" + _module_re(PASSES_NARROW_PROGRAMS)]),
    ("capped", ["--xla_dump_max_hlo_modules=3"]),
]

# Files kept in the checked-in corpus (everything else is only listed).
KEEP_SUFFIXES = (".txt", ".mlir", ".textproto")
KEEP_NAMES = ("debug_options",)
CAPPED_LOG_LINES = 5


# --------------------------------------------------------------------------
# The programs.  Defined in a function so that the parent process never
# imports jax (only workers do).
# --------------------------------------------------------------------------
def define_programs():
    import jax
    import jax.numpy as jnp
    from jax import lax

    jax.config.update("jax_enable_x64", True)

    f32, f16, bf16, f64 = jnp.float32, jnp.float16, jnp.bfloat16, jnp.float64
    i8, u8, i32, u32, i64 = jnp.int8, jnp.uint8, jnp.int32, jnp.uint32, jnp.int64
    c64, c128 = jnp.complex64, jnp.complex128

    def S(shape, dtype=f32):
        return jax.ShapeDtypeStruct(shape, dtype)

    programs = []  # (fn, arg specs, features)

    def program(args, features):
        def deco(fn):
            programs.append((fn, args, features))
            return fn
        return deco

    # ---------------- training steps ----------------
    @program([S((16, 32)), S((32,)), S((32, 10)), S((10,)), S((8, 16)), S((8,), i32)],
             ["mlp", "training step", "grad", "sgd update", "log_softmax", "take_along_axis", "matmul"])
    def mlp_sgd_step(w1, b1, w2, b2, x, y):
        def loss(p):
            w1, b1, w2, b2 = p
            h = jax.nn.relu(x @ w1 + b1)
            logp = jax.nn.log_softmax(h @ w2 + b2)
            return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))
        p = (w1, b1, w2, b2)
        l, g = jax.value_and_grad(loss)(p)
        return l, jax.tree_util.tree_map(lambda a, b: a - f32(0.1) * b, p, g)

    @program([S((3, 3, 3, 8)), S((8,)), S((288, 10)), S((4, 12, 12, 3)), S((4,), i32)],
             ["cnn", "training step", "grad", "conv2d", "avg pool", "sgd update", "one_hot"])
    def cnn_train_step(k, kb, w, x, y):
        def loss(p):
            k, kb, w = p
            h = lax.conv_general_dilated(x, k, (1, 1), "SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
            h = jax.nn.relu(h + kb)
            h = lax.reduce_window(h, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / f32(4)
            logits = h.reshape(4, -1) @ w
            onehot = jax.nn.one_hot(y, 10, dtype=f32)
            return -jnp.mean(jnp.sum(onehot * jax.nn.log_softmax(logits), axis=-1))
        p = (k, kb, w)
        l, g = jax.value_and_grad(loss)(p)
        return l, jax.tree_util.tree_map(lambda a, b: a - f32(0.01) * b, p, g)

    @program([S((8, 4)), S((16, 8)), S((16, 4))],
             ["vmap", "per-example gradients", "grad", "matmul"])
    def vmap_per_example_grad(w, xs, ys):
        def loss(w, x, y):
            return jnp.sum((jnp.tanh(x @ w) - y) ** 2)
        return jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(w, xs, ys)

    # ---------------- attention / transformer ----------------
    @program([S((2, 4, 16, 8))] * 3, ["attention", "softmax", "einsum batch dims"])
    def softmax_attention(q, k, v):
        s = jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.sqrt(f32(8))
        return jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, axis=-1), v)

    @program([S((2, 4, 16, 8))] * 3 + [S((2,), i32)],
             ["attention", "causal mask", "padding mask", "select", "iota", "softmax"])
    def masked_attention(q, k, v, lengths):
        s = jnp.einsum("bhqd,bhkd->bhqk", q, k) * f32(8 ** -0.5)
        qi = lax.broadcasted_iota(i32, (16, 16), 0)
        ki = lax.broadcasted_iota(i32, (16, 16), 1)
        causal = (ki <= qi)[None, None]
        valid = (lax.broadcasted_iota(i32, (2, 16), 1) < lengths[:, None])[:, None, None, :]
        s = jnp.where(causal & valid, s, jnp.finfo(f32).min)
        return jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, axis=-1), v)

    @program([S((2, 16, 32)), S((32, 96)), S((32, 32)), S((32, 64)), S((64, 32))],
             ["transformer block", "layer norm", "attention", "gelu", "residual"])
    def transformer_block(x, wqkv, wo, w1, w2):
        def ln(x):
            m = jnp.mean(x, -1, keepdims=True)
            v = jnp.mean((x - m) ** 2, -1, keepdims=True)
            return (x - m) * lax.rsqrt(v + f32(1e-5))
        q, k, v = jnp.split(ln(x) @ wqkv, 3, axis=-1)
        a = jax.nn.softmax(jnp.einsum("bqd,bkd->bqk", q, k) * f32(32 ** -0.5), axis=-1)
        x = x + jnp.einsum("bqk,bkd->bqd", a, v) @ wo
        return x + jax.nn.gelu(ln(x) @ w1) @ w2

    # ---------------- convolutions and pooling ----------------
    @program([S((2, 32, 4)), S((5, 4, 6))], ["conv1d", "strided conv", "padding"])
    def conv1d_strided(x, k):
        return lax.conv_general_dilated(x, k, (2,), [(2, 2)],
                                        dimension_numbers=("NWC", "WIO", "NWC"))

    @program([S((1, 16, 16, 3)), S((3, 3, 3, 4))], ["conv2d", "dilated conv (rhs and lhs dilation)"])
    def conv2d_dilated(x, k):
        a = lax.conv_general_dilated(x, k, (1, 1), "VALID", rhs_dilation=(2, 2),
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        b = lax.conv_general_dilated(x, k, (1, 1), [(1, 1), (1, 1)], lhs_dilation=(2, 2),
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return a, b

    @program([S((2, 3, 16, 16)), S((6, 3, 3, 3))], ["conv2d", "NCHW/OIHW layout", "strided conv"])
    def conv2d_strided_nchw(x, k):
        return lax.conv_general_dilated(x, k, (2, 2), "SAME")

    @program([S((1, 10, 10, 8)), S((3, 3, 1, 8))], ["conv2d", "depthwise conv", "feature_group_count"])
    def conv2d_depthwise(x, k):
        return lax.conv_general_dilated(x, k, (1, 1), "SAME", feature_group_count=8,
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))

    @program([S((1, 10, 10, 8)), S((3, 3, 4, 8))], ["conv2d", "grouped conv", "feature_group_count"])
    def conv2d_grouped(x, k):
        return lax.conv_general_dilated(x, k, (1, 1), "VALID", feature_group_count=2,
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))

    @program([S((1, 8, 8, 4)), S((3, 3, 4, 2))], ["transposed conv", "lhs dilation"])
    def conv2d_transpose(x, k):
        return lax.conv_transpose(x, k, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))

    @program([S((2, 16, 16, 4))], ["max pool", "reduce_window max", "SAME padding"])
    def max_pool_2d(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")

    @program([S((2, 15, 15, 4))], ["avg pool", "reduce_window add", "padding count"])
    def avg_pool_2d(x):
        pad = [(0, 0), (1, 1), (1, 1), (0, 0)]
        s = lax.reduce_window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 2, 2, 1), pad)
        n = lax.reduce_window(jnp.ones_like(x), 0.0, lax.add, (1, 3, 3, 1), (1, 2, 2, 1), pad)
        return s / n

    # ---------------- control flow ----------------
    @program([S((10, 4, 8)), S((4, 16)), S((8, 16)), S((16, 16))], ["scan", "rnn", "while loop", "tanh"])
    def scan_rnn(xs, h0, wx, wh):
        def step(h, x):
            h = jnp.tanh(x @ wx + h @ wh)
            return h, jnp.sum(h, axis=-1)
        return lax.scan(step, h0, xs)

    @program([S((16, 16)), S((16,))], ["fori_loop", "power iteration", "matvec", "norm"])
    def fori_loop_power_iteration(a, v):
        def body(i, v):
            w = a @ v
            return w / jnp.linalg.norm(w)
        v = lax.fori_loop(jnp.int32(0), jnp.int32(20), body, v)
        return v, v @ a @ v

    @program([S((32,))], ["while_loop", "convergence test", "tuple loop state"])
    def while_loop_newton_sqrt(x):
        def cond(s):
            y, i = s
            return (i < 50) & (jnp.max(jnp.abs(y * y - x)) > f32(1e-6))
        def body(s):
            y, i = s
            return f32(0.5) * (y + x / y), i + 1
        return lax.while_loop(cond, body, (jnp.maximum(x, f32(1)), jnp.int32(0)))

    @program([S((16,), i32)], ["while_loop", "integer loop", "select", "int div/rem"])
    def while_loop_collatz(x):
        def cond(s):
            x, n = s
            return jnp.any(x > 1) & (jnp.max(n) < 1000)
        def body(s):
            x, n = s
            odd = (x % 2) == 1
            nx = jnp.where(x > 1, jnp.where(odd, 3 * x + 1, x // 2), x)
            return nx, n + (x > 1).astype(i32)
        return lax.while_loop(cond, body, (jnp.maximum(x, 1), jnp.zeros_like(x)))

    @program([S((8,)), S((8,))], ["cond", "branches"])
    def cond_branch(x, y):
        return lax.cond(jnp.sum(x) > 0, lambda a, b: jnp.sin(a) * b, lambda a, b: a - jnp.exp(b), x, y)

    @program([S((), i32), S((8,))], ["switch", "3 branches", "index clamp"])
    def switch_branches(i, x):
        return lax.switch(i, [jnp.sin, jnp.cos, lambda x: x * f32(2) + f32(1)], x)

    @program([S((6, 8))], ["vmap", "cond under vmap (select)"])
    def vmap_cond_select(xs):
        return jax.vmap(lambda x: lax.cond(jnp.sum(x) > 0, jnp.tanh, lambda x: -x, x))(xs)

    # ---------------- sort / gather / scatter ----------------
    @program([S((4, 32)), S((4, 32), i32)], ["sort", "argsort", "multi-operand sort", "stable sort"])
    def sort_argsort(x, y):
        s = jnp.sort(x, axis=-1)
        a = jnp.argsort(x, axis=-1, stable=True).astype(i32)
        k, v = lax.sort((x, y), dimension=1, num_keys=1, is_stable=True)
        return s, a, k, v, jnp.sort(y, axis=0, descending=True)

    @program([S((8, 100))], ["top_k"])
    def top_k(x):
        v, i = lax.top_k(x, 5)
        return v, i

    @program([S((10, 6)), S((4,), i32)], ["gather", "fancy indexing", "negative indices"])
    def gather_indexing(x, idx):
        return x[idx], x[idx, 2], x[:, idx], x[idx[:, None], idx[None, :2]], x[-idx]

    @program([S((10, 6)), S((4,), i32), S((4, 6))],
             ["scatter", ".at[].add", ".at[].set", ".at[].max", ".at[].min", ".at[].mul"])
    def scatter_updates(x, idx, u):
        return (x.at[idx].add(u), x.at[idx].set(u), x.at[idx].max(u),
                x.at[idx, 1].min(u[:, 0]), x.at[idx].mul(u, mode="drop"))

    @program([S((5, 7)), S((5, 3), i32)], ["take_along_axis", "gather"])
    def take_along_axis(x, idx):
        return jnp.take_along_axis(x, idx, axis=1), jnp.take_along_axis(x, jnp.broadcast_to(idx[:2, :1], (2, 7)), axis=0)

    @program([S((20, 4)), S((20,), i32)], ["segment_sum", "segment_max", "scatter-add"])
    def segment_reductions(data, seg):
        return (jax.ops.segment_sum(data, seg, num_segments=5),
                jax.ops.segment_max(data, seg, num_segments=5))

    # ---------------- RNG ----------------
    @program([S((), i32)], ["rng", "threefry", "normal", "uniform", "bernoulli", "randint", "split"])
    def random_threefry(seed):
        key = jax.random.key(seed)
        k1, k2, k3, k4 = jax.random.split(key, 4)
        return (jax.random.normal(k1, (4, 8), dtype=f32),
                jax.random.uniform(k2, (16,), dtype=f32, minval=-1, maxval=1),
                jax.random.bernoulli(k3, 0.3, (32,)),
                jax.random.randint(k4, (8,), 0, 100, dtype=i32))

    @program([S((), i32)], ["rng", "rbg", "rng-bit-generator", "normal", "uniform"])
    def random_rbg(seed):
        key = jax.random.key(seed, impl="rbg")
        k1, k2 = jax.random.split(key)
        return jax.random.normal(k1, (4, 8), dtype=f32), jax.random.uniform(k2, (16,), dtype=f32)

    @program([S((4,), u32), S((4,), u32)], ["rng_bit_generator", "philox", "three_fry", "uint32/uint8"])
    def rng_bit_generator(key_a, key_b):
        k1, a = lax.rng_bit_generator(key_a, (8, 16), dtype=u32, algorithm=lax.RandomAlgorithm.RNG_PHILOX)
        k2, b = lax.rng_bit_generator(key_b, (32,), dtype=u8, algorithm=lax.RandomAlgorithm.RNG_THREE_FRY)
        return k1, a, k2, b

    # ---------------- integer / bit ops ----------------
    @program([S((64,), i32), S((64,), i32), S((64,), u32)],
             ["shift_left", "shift_right_logical", "shift_right_arithmetic", "popcount", "clz",
              "and/or/xor/not"])
    def int_bit_ops(a, b, u):
        s = b & 31
        return (lax.shift_left(a, s), lax.shift_right_logical(a, s), lax.shift_right_arithmetic(a, b),
                lax.population_count(u), lax.clz(a), (a & b) | (~a ^ b), ~u, u >> 3, lax.shift_left(u, b.astype(u32)))

    @program([S((64,), i32), S((64,), i32), S((64,), u8), S((64,), u8)],
             ["integer div", "integer rem", "floor_divide", "mod", "uint8"])
    def int_div_rem(a, b, ua, ub):
        return lax.div(a, b), lax.rem(a, b), a // b, a % b, lax.div(ua, ub), lax.rem(ua, ub), ua // ub

    @program([S((16,)), S((16,), f16), S((16,), i32)],
             ["bitcast_convert_type", "f32<->s32", "f16->u16", "f32->u8[4]", "convert"])
    def bitcast_convert(x, h, n):
        return (lax.bitcast_convert_type(x, i32), lax.bitcast_convert_type(h, jnp.uint16),
                lax.bitcast_convert_type(x, u8), lax.bitcast_convert_type(n, f32),
                x.astype(i32), n.astype(f16))

    # ---------------- dtypes ----------------
    @program([S((32, 64), bf16), S((64, 16), bf16), S((16,), bf16)],
             ["bf16", "matmul with f32 accumulation", "gelu in bf16"])
    def bf16_matmul(a, b, bias):
        y = lax.dot(a, b, preferred_element_type=f32)
        return jax.nn.gelu(y.astype(bf16) + bias), jnp.sum(a, axis=0)

    @program([S((64,), f16), S((8, 8), f16)], ["f16", "exp/sqrt/log", "reduce in f16", "matmul f16"])
    def f16_ops(x, m):
        return jnp.exp(x) + jnp.sqrt(jnp.abs(x)), jnp.log(jnp.abs(x) + f16(1)), jnp.sum(x), m @ m

    @program([S((32, 32)), S((32, 32))], ["int8", "uint8", "quantize/dequantize", "int8 matmul to int32", "round", "clip"])
    def int8_quantize(a, b):
        sa = jnp.max(jnp.abs(a)) / f32(127)
        sb = jnp.max(jnp.abs(b)) / f32(127)
        qa = jnp.clip(jnp.round(a / sa), -127, 127).astype(i8)
        qb = jnp.clip(jnp.round(b / sb), -127, 127).astype(i8)
        acc = lax.dot(qa, qb, preferred_element_type=i32)
        qu = jnp.clip(jnp.round(a / sa) + 128, 0, 255).astype(u8)
        return acc.astype(f32) * sa * sb, qu, (qu.astype(i32) - 128).astype(f32) * sa

    @program([S((16,), i64), S((16,), f64), S((16,), jnp.uint64)],
             ["int64", "uint64", "f64", "x64", "cumsum int64", "f64 transcendental"])
    def x64_ops(a, x, u):
        return (a * 3 + (a >> 7), jnp.cumsum(a), u ^ (u << 13), jnp.sqrt(jnp.abs(x)) + jnp.sin(x),
                jnp.sum(x), x.astype(f32), a.astype(f64) / x)

    @program([S((16,), c64), S((16,), c64), S((16,))],
             ["complex64", "complex arithmetic", "abs", "conj", "exp", "angle", "real/imag"])
    def complex64_ops(z, w, r):
        c = lax.complex(r, -r)
        return z * w, z / w, jnp.abs(z), jnp.conj(z) + c, jnp.exp(z), jnp.angle(w), jnp.real(z * c), jnp.imag(w)

    @program([S((8, 8), c128), S((8,), c128)], ["complex128", "complex matmul", "sqrt", "log"])
    def complex128_ops(m, v):
        return m @ v, jnp.sqrt(m), jnp.log(v), jnp.sum(m * jnp.conj(m)).real

    # ---------------- FFT ----------------
    @program([S((4, 32), c64)], ["fft", "ifft", "complex64"])
    def fft_c2c(z):
        return jnp.fft.fft(z), jnp.fft.ifft(z, axis=0)

    @program([S((4, 32)), S((17,))], ["rfft", "irfft", "filtering"])
    def rfft_irfft(x, h):
        return jnp.fft.irfft(jnp.fft.rfft(x) * h, n=32)

    @program([S((8, 16), c64), S((8, 16))], ["fft2", "ifft2", "rfft2"])
    def fft2_ops(z, x):
        return jnp.fft.fft2(z), jnp.fft.ifft2(z), jnp.fft.rfft2(x)

    # ---------------- linear algebra ----------------
    @program([S((8, 8)), S((8, 3))], ["cholesky", "triangular_solve", "lapack custom call"])
    def cholesky_solve(a, b):
        m = a @ a.T + f32(8) * jnp.eye(8, dtype=f32)
        l = jnp.linalg.cholesky(m)
        y = lax.linalg.triangular_solve(l, b, left_side=True, lower=True)
        return lax.linalg.triangular_solve(l, y, left_side=True, lower=True, transpose_a=True)

    @program([S((6, 4))], ["qr", "householder", "lapack custom call"])
    def qr_decomp(a):
        q, r = jnp.linalg.qr(a)
        return q, r

    @program([S((6, 6)), S((6, 2))], ["lu", "pivots", "permutation", "solve"])
    def lu_decomp(a, b):
        lu, piv, perm = lax.linalg.lu(a)
        return lu, piv, perm, jnp.linalg.solve(a, b)

    @program([S((8, 8))], ["eigh", "symmetric eigendecomposition"])
    def eigh_sym(a):
        w, v = jnp.linalg.eigh((a + a.T) / f32(2))
        return w, v

    @program([S((4, 8, 16)), S((4, 16, 12)), S((2, 3, 8, 5)), S((2, 3, 5, 6))],
             ["einsum", "batch dims", "dot_general", "batched contraction"])
    def batched_einsum(a, b, c, d):
        return (jnp.einsum("bij,bjk->bik", a, b), jnp.einsum("hqij,hqjk->hqik", c, d),
                jnp.einsum("bij,bij->b", a, a), jnp.einsum("bij->bji", a))

    @program([S((8192, 64)), S((64, 32))], ["matmul", "tall matmul (library rewrite)", "transpose"])
    def matmul_tall(a, b):
        return a @ b, a.T @ a

    # ---------------- reductions / normalizations ----------------
    @program([S((8, 16)), S((16,), i32)], ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "reverse cumsum"])
    def cumulative_ops(x, n):
        return (jnp.cumsum(x, axis=1), jnp.cumprod(x, axis=0), lax.cummax(x, axis=1),
                lax.cummin(n, axis=0), lax.cumlogsumexp(x, axis=1), lax.cumsum(x, axis=0, reverse=True))

    @program([S((8, 16))], ["argmax", "argmin", "max", "min", "sum", "prod", "mean", "var"])
    def argmax_reductions(x):
        return (lax.argmax(x, 1, i32), lax.argmin(x, 0, i32), jnp.max(x, 0), jnp.min(x), jnp.sum(x, 1),
                jnp.prod(x, 0), jnp.mean(x), jnp.var(x, axis=1))

    @program([S((4, 16, 32)), S((32,)), S((32,))], ["layer norm", "mean", "variance", "rsqrt"])
    def layer_norm(x, g, b):
        m = jnp.mean(x, -1, keepdims=True)
        v = jnp.mean(jnp.square(x - m), -1, keepdims=True)
        return (x - m) * lax.rsqrt(v + f32(1e-5)) * g + b

    @program([S((8, 32))], ["logsumexp", "softmax", "log_softmax"])
    def logsumexp_softmax(x):
        return jax.nn.logsumexp(x, axis=-1), jax.nn.softmax(x), jax.nn.log_softmax(x, axis=0)

    @program([S((8, 10)), S((8,), i32)], ["one_hot", "cross entropy", "label smoothing"])
    def one_hot_cross_entropy(logits, labels):
        t = jax.nn.one_hot(labels, 10, dtype=f32) * f32(0.9) + f32(0.01)
        return -jnp.sum(t * jax.nn.log_softmax(logits), axis=-1)

    # ---------------- data movement ----------------
    @program([S((64,)), S((64,)), S((64,), jnp.bool_), S((64,), i32)], ["clamp", "select", "where", "select_n"])
    def clamp_select(x, y, p, k):
        return (lax.clamp(f32(-1), x, f32(1)), lax.select(p, x, y), jnp.where(x > y, x, y * f32(2)),
                lax.select_n(jnp.clip(k, 0, 2), x, y, x * y))

    @program([S((16, 16)), S((), i32), S((), i32), S((4, 4))],
             ["dynamic_slice", "dynamic_update_slice", "index clamping"])
    def dynamic_slice_update(x, i, j, u):
        return (lax.dynamic_slice(x, (i, j), (4, 4)), lax.dynamic_update_slice(x, u, (i, j)),
                lax.dynamic_slice_in_dim(x, i, 3, axis=1), lax.dynamic_update_index_in_dim(x, u[0, :1].repeat(16), j, 0))

    @program([S((8, 8)), S((5,), i32)], ["pad", "negative padding", "interior padding"])
    def pad_negative_interior(x, n):
        return (lax.pad(x, f32(0), [(-1, 2, 1), (3, -2, 0)]), lax.pad(x, f32(-1), [(0, 0, 2), (1, 1, 1)]),
                lax.pad(n, i32(7), [(-2, -1, 0)]))

    @program([S((4, 6)), S((4, 3))], ["concatenate", "reverse", "iota", "broadcasted_iota", "slice", "transpose"])
    def concat_reverse_iota(x, y):
        c = jnp.concatenate([x, y, x[:, ::2]], axis=1)
        return (c, lax.rev(x, (0, 1)), lax.iota(i32, 10), x + lax.broadcasted_iota(f32, (4, 6), 1),
                jnp.transpose(c), x[1:3, ::-1])

    @program([S((16, 16, 3), u8), S((3,))], ["uint8 image", "convert", "resize (bilinear)", "normalize"])
    def image_resize_uint8(img, mean):
        x = img.astype(f32) / f32(255) - mean
        y = jax.image.resize(x, (24, 8, 3), method="bilinear")
        return jnp.clip(jnp.round((y + mean) * 255), 0, 255).astype(u8)

    # ---------------- elementwise math ----------------
    @program([S((64,))], ["reduce_precision", "bf16-like", "fp8 e5m2-like", "f16-like"])
    def reduce_precision(x):
        return (lax.reduce_precision(x, exponent_bits=8, mantissa_bits=7),
                lax.reduce_precision(x, exponent_bits=5, mantissa_bits=2),
                lax.reduce_precision(x, exponent_bits=5, mantissa_bits=10))

    @program([S((64,)), S((64,))], ["expm1", "log1p", "erf", "tanh", "atan2", "pow", "logistic", "erf_inv"])
    def transcendental_math(x, y):
        return (jnp.expm1(x), jnp.log1p(jnp.abs(x)), lax.erf(x), jnp.tanh(y), jnp.arctan2(x, y),
                jnp.power(jnp.abs(x), y), x ** 3, jax.nn.sigmoid(y), lax.erf_inv(jnp.clip(x, -0.9, 0.9)))

    @program([S((64,)), S((64,))], ["remainder", "fmod", "nextafter", "is_finite", "round", "sign", "floor/ceil"])
    def rounding_misc(x, y):
        return (jnp.remainder(x, y), lax.rem(x, y), jnp.nextafter(x, y), jnp.isfinite(x / y),
                jnp.round(x), lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO), jnp.sign(x),
                jnp.floor(x), jnp.ceil(y), jnp.isnan(x - y))

    return programs


# --------------------------------------------------------------------------
# Worker: compile every program (XLA dumps according to XLA_FLAGS).
# --------------------------------------------------------------------------
def worker():
    import jax
    programs = define_programs()
    for fn, args, _ in programs:
        jax.jit(fn).lower(*args).compile()
        print("compiled jit_" + fn.__name__, flush=True)


def program_table():
    """(name, features) for every program, without importing jax in the caller."""
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--list"],
                         check=True, capture_output=True, text=True, env=_worker_env([]))
    return json.loads(out.stdout)


def list_programs():
    programs = define_programs()
    print(json.dumps([{"name": fn.__name__, "features": feats} for fn, _, feats in programs]))


# --------------------------------------------------------------------------
# Parent: run workers, list, scrub, prune.
# --------------------------------------------------------------------------
def _worker_env(flags):
    env = dict(os.environ)
    env["XLA_FLAGS"] = " ".join(flags)
    env["JAX_PLATFORMS"] = "cpu"
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)
    env["PYTHONHASHSEED"] = "0"
    return env


def _replacements(dump_dir):
    pairs = [(dump_dir, "<dump>"), (os.path.realpath(dump_dir), "<dump>")]
    paths = sysconfig.get_paths()
    for key in ("purelib", "platlib"):
        pairs.append((paths[key], "<site-packages>"))
    for key in ("stdlib", "platstdlib"):
        pairs.append((paths[key], "<stdlib>"))
    pairs.append((REPO + "/", ""))
    pairs.append((REPO, "."))
    pairs.append((tempfile.gettempdir() + "/", "<tmp>/"))
    seen, out = set(), []
    for a, b in sorted(pairs, key=lambda p: -len(p[0])):
        if a and a not in seen:
            seen.add(a)
            out.append((a, b))
    return out


def _keep(name):
    return name.endswith(KEEP_SUFFIXES) or name.endswith(KEEP_NAMES)


def run_config(name, flags, tmp_root):
    dump_dir = os.path.join(tmp_root, name)
    os.makedirs(dump_dir)
    flags = ["--xla_dump_to=" + dump_dir] + flags
    print(f"[{name}] XLA_FLAGS={' '.join(flags)}", flush=True)
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker"],
                          env=_worker_env(flags), capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"worker for {name} failed with {proc.returncode}")
    repl = _replacements(dump_dir)

    def scrub(text):
        for a, b in repl:
            text = text.replace(a, b)
        return text

    files = []
    for root, _, names in os.walk(dump_dir):
        for n in names:
            files.append(os.path.relpath(os.path.join(root, n), dump_dir))
    files.sort()
    dest = os.path.join(OUT, name)
    if os.path.exists(dest):
        shutil.rmtree(dest)
    os.makedirs(dest)
    with open(os.path.join(OUT, name + ".FILES"), "w") as f:
        f.write("".join(p + "\n" for p in files))
    kept = 0
    for rel in files:
        if not _keep(rel):
            continue
        src = os.path.join(dump_dir, rel)
        with open(src, "r", encoding="utf-8") as f:
            text = f.read()
        out = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "w", encoding="utf-8") as f:
            f.write(scrub(text))
        kept += 1
    # XLA's own log lines (e.g. the module cap) are kept for the capped run.
    log_lines = [scrub(l) for l in proc.stderr.splitlines()
                 if re.search(r"dumped|limit|dump", l, re.IGNORECASE)]
    print(f"[{name}] {len(files)} files written by XLA, {kept} kept", flush=True)
    return files, log_lines


def write_programs_json(table, dump_files):
    ids = {}
    for rel in dump_files:
        m = re.match(r"module_(\d+)\.(jit_\w+)\.before_optimizations\.txt$", rel)
        if m:
            ids[m.group(2)] = m.group(1)
    data = []
    for p in table:
        mod = "jit_" + p["name"]
        data.append({"module": mod, "module_id": ids.get(mod), "features": p["features"],
                     "passes_all": p["name"] in PASSES_ALL_PROGRAMS,
                     "passes_narrow": p["name"] in PASSES_NARROW_PROGRAMS})
    with open(os.path.join(OUT, "programs.json"), "w") as f:
        json.dump({"generator": "corpora/gen_corpus.py", "programs": data}, f, indent=1)
        f.write("\n")


README = os.path.join(HERE, "README.md")
TABLE_BEGIN = "<!-- programs:begin (written by gen_corpus.py) -->"
TABLE_END = "<!-- programs:end -->"


def update_readme_table(table, dump_files):
    """Rewrite the program table between the markers in corpora/README.md."""
    if not os.path.exists(README):
        return
    ids = {}
    for rel in dump_files:
        m = re.match(r"module_(\d+)\.(jit_\w+)\.before_optimizations\.txt$", rel)
        if m:
            ids[m.group(2)] = m.group(1)
    rows = ["| # | module | id in `dump/` | covers |", "|---|---|---|---|"]
    for i, p in enumerate(table, 1):
        mod = "jit_" + p["name"]
        extra = []
        if p["name"] in PASSES_ALL_PROGRAMS:
            extra.append("**passes_all**")
        if p["name"] in PASSES_NARROW_PROGRAMS:
            extra.append("**passes_narrow**")
        rows.append(f"| {i} | `{mod}` | {ids.get(mod, '-')} | {', '.join(p['features'] + extra)} |")
    with open(README) as f:
        text = f.read()
    a, b = text.find(TABLE_BEGIN), text.find(TABLE_END)
    if a < 0 or b < a:
        return
    text = text[:a + len(TABLE_BEGIN)] + "\n" + "\n".join(rows) + "\n" + text[b:]
    with open(README, "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--list", action="store_true", help="print the programs as JSON and exit")
    ap.add_argument("--only", action="append", help="run only this dump configuration (repeatable)")
    args = ap.parse_args()
    if args.worker:
        return worker()
    if args.list:
        return list_programs()

    table = program_table()
    names = [p["name"] for p in table]
    assert len(names) == len(set(names)), "program names must be distinct"
    for n in PASSES_ALL_PROGRAMS + PASSES_NARROW_PROGRAMS:
        assert n in names, n
    os.makedirs(OUT, exist_ok=True)
    tmp_root = tempfile.mkdtemp(prefix="hlo-diff-corpus-")
    try:
        for name, flags in DUMP_CONFIGS:
            if args.only and name not in args.only:
                continue
            files, log_lines = run_config(name, flags, tmp_root)
            if name == "dump":
                write_programs_json(table, files)
                update_readme_table(table, files)
            if name == "capped":
                path = os.path.join(OUT, "capped.log")
                if log_lines:
                    # XLA prints one such line per file it declines to write; their
                    # timestamps and thread ids vary, so keep a few verbatim.
                    with open(path, "w") as f:
                        f.write("".join(l + "\n" for l in log_lines[:CAPPED_LOG_LINES]))
                elif os.path.exists(path):
                    os.remove(path)
    finally:
        shutil.rmtree(tmp_root, ignore_errors=True)
    print(f"{len(table)} programs", flush=True)


if __name__ == "__main__":
    sys.exit(main())

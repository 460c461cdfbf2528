#!/usr/bin/env python3
"""Build the sharded jax corpus of hlo-diff: SPMD programs over 2 and 4 host devices.

Run from the repository root:

    .venv/bin/python corpora/gen_sharded.py

Each program is a small jax function jitted with shardings over a mesh of host devices (the
ops XLA's SPMD partitioner rewrites most: dynamic-slice, dynamic-update-slice, gather, scatter,
pad, concatenate, reduce, dot, transpose and reshape, reduce-window, sort, convolution). The
script re-runs itself in a subprocess with ``--xla_force_host_platform_device_count=4`` and
``--xla_dump_hlo_pass_re=spmd|propagation|sharding`` (sharding propagation, the partitioner and
the sharding passes around them), compiles every program once (never runs one), and keeps in
``corpora/jax-sharded/`` each module's ``before_optimizations.txt`` (a global program whose
header says ``num_partitions``) and the per-pass files of those passes. Paths are scrubbed
(the repository root removed). Two runs on one machine give the same files.
"""

import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
OUT = os.path.join(HERE, "jax-sharded")
PASS_RE = "spmd|propagation|sharding"


def programs():
    import jax
    import jax.numpy as jnp
    from jax import lax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    devs = jax.devices()
    mesh2 = Mesh(devs[:2], ("x",))
    mesh4 = Mesh(devs[:4], ("x",))
    mesh22 = Mesh([devs[:2], devs[2:4]], ("x", "y"))

    def spec(mesh, shape, dtype, *axes):
        return jax.ShapeDtypeStruct(shape, dtype, sharding=NamedSharding(mesh, P(*axes)))

    f32, s32 = jnp.float32, jnp.int32
    return [
        ("sharded_dynamic_slice",
         lambda x, i: lax.dynamic_slice(x, (i, 0), (3, 4)),
         [spec(mesh2, (8, 4), f32, "x"), spec(mesh2, (), s32)]),
        ("sharded_dynamic_update_slice",
         lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 1)),
         [spec(mesh2, (8, 4), f32, "x"), spec(mesh2, (3, 2), f32), spec(mesh2, (), s32)]),
        ("sharded_gather",
         lambda x, idx: jnp.take(x, idx, axis=0),
         [spec(mesh4, (16, 3), f32, "x"), spec(mesh4, (5,), s32)]),
        ("sharded_scatter_add",
         lambda x, idx, u: x.at[idx].add(u),
         [spec(mesh2, (8, 3), f32, "x"), spec(mesh2, (4,), s32), spec(mesh2, (4, 3), f32)]),
        ("sharded_pad",
         lambda x: jnp.pad(x, ((1, 2), (0, 1))),
         [spec(mesh2, (6, 4), f32, "x")]),
        ("sharded_concatenate",
         lambda a, b: jnp.concatenate([a, b], axis=0),
         [spec(mesh4, (8, 2), f32, "x"), spec(mesh4, (4, 2), f32, "x")]),
        ("sharded_reduce_sum",
         lambda x: jnp.sum(x, axis=0),
         [spec(mesh4, (8, 3), f32, "x")]),
        ("sharded_reduce_max",
         lambda x: jnp.max(x, axis=0),
         [spec(mesh2, (8, 3), f32, "x")]),
        ("sharded_dot_2d_mesh",
         lambda a, b: a @ b,
         [spec(mesh22, (4, 6), f32, "x", "y"), spec(mesh22, (6, 4), f32, "y")]),
        ("sharded_transpose_reshape",
         lambda x: jnp.transpose(x, (1, 0)).reshape(2, 16),
         [spec(mesh4, (8, 4), f32, "x")]),
        ("sharded_cumsum",
         lambda x: jnp.cumsum(x, axis=0),
         [spec(mesh2, (8, 2), f32, "x")]),
        ("sharded_sort",
         lambda x: jnp.sort(x, axis=0),
         [spec(mesh2, (8, 2), f32, "x")]),
        ("sharded_conv1d",
         lambda x, w: lax.conv_general_dilated(x, w, (1,), "SAME",
                                               dimension_numbers=("NWC", "WIO", "NWC")),
         [spec(mesh2, (4, 8, 2), f32, "x"), spec(mesh2, (3, 2, 3), f32)]),
    ]


def worker():
    import jax
    for name, fn, specs in programs():
        fn.__name__ = name
        jax.jit(fn).lower(*specs).compile()


def keep(name):
    if name.endswith(".before_optimizations.txt"):
        return True
    return ".txt" in name and any(p in name for p in ("spmd", "propagation", "sharding")) \
        and "after_optimizations" not in name


def main():
    if "--worker" in sys.argv:
        worker()
        return
    with tempfile.TemporaryDirectory() as tmp:
        flags = ["--xla_force_host_platform_device_count=4", "--xla_dump_to=" + tmp,
                 "--xla_dump_hlo_pass_re=" + PASS_RE]
        env = dict(os.environ, XLA_FLAGS=" ".join(flags), JAX_PLATFORMS="cpu",
                   JAX_ENABLE_COMPILATION_CACHE="false")
        subprocess.run([sys.executable, os.path.abspath(__file__), "--worker"], env=env,
                       check=True)
        if os.path.exists(OUT):
            shutil.rmtree(OUT)
        os.makedirs(OUT)
        n = 0
        for name in sorted(os.listdir(tmp)):
            if not keep(name):
                continue
            with open(os.path.join(tmp, name), encoding="utf-8") as f:
                text = f.read().replace(REPO + "/", "")
            with open(os.path.join(OUT, name), "w", encoding="utf-8") as f:
                f.write(text)
            n += 1
    print("wrote %d files to %s" % (n, OUT))


if __name__ == "__main__":
    main()

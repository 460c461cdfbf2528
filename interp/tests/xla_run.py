"""Test helper for interp's tests: runs HLO text modules on XLA CPU through jaxlib and writes
each result leaf as raw little-endian bytes.

Usage: python xla_run.py JOBS.json [FIRST_JOB]

JOBS.json is a list of jobs: {"hlo": PATH, "inputs": [{"ty": "f32", "dims": [2,3], "path": P}],
"out": DIR}. For each job this writes DIR/meta.json: {"ok": true, "outputs": [{"ty", "dims",
"file"}]} or {"ok": false, "error": "..."}, with the leaves of the result (tuples flattened as
XLA flattens them) in DIR/out_<k>.bin. One process runs all jobs (importing jax costs ~1 s).
"""
import json
import os
import sys

import numpy as np
import ml_dtypes
import jax

jax.config.update("jax_enable_x64", True)
from jax._src import xla_bridge  # noqa: E402
import jaxlib._jax as _jax  # noqa: E402
from jaxlib import _hlo  # noqa: E402

# XLA CPU's lapack_* custom-calls jump through jaxlib's LAPACK table, which jaxlib fills lazily
# when jax itself lowers a linalg op; modules handed over as HLO text need it filled first.
from jax._src.lib import lapack as _lapack_mod  # noqa: E402

_lapack_mod._lapack.initialize()

DTYPES = {
    "pred": np.bool_, "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64,
    "c64": np.complex64, "c128": np.complex128,
    "s2": ml_dtypes.int2, "s4": ml_dtypes.int4, "u2": ml_dtypes.uint2, "u4": ml_dtypes.uint4,
    "f8e5m2": ml_dtypes.float8_e5m2, "f8e4m3fn": ml_dtypes.float8_e4m3fn,
    "f8e4m3": getattr(ml_dtypes, "float8_e4m3", None),
    "f8e4m3b11fnuz": ml_dtypes.float8_e4m3b11fnuz, "f8e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
    "f8e4m3fnuz": ml_dtypes.float8_e4m3fnuz, "f8e3m4": getattr(ml_dtypes, "float8_e3m4", None),
    "f8e8m0fnu": getattr(ml_dtypes, "float8_e8m0fnu", None),
    "f4e2m1fn": getattr(ml_dtypes, "float4_e2m1fn", None),
}
NAMES = {np.dtype(v): k for k, v in DTYPES.items() if v is not None}


def run_job(backend, devs, job):
    text = open(job["hlo"]).read()
    m = _hlo.hlo_module_from_text(text)
    comp = _hlo.XlaComputation(m.as_serialized_hlo_module_proto())
    mlir = _jax.mlir.xla_computation_to_mlir_module(comp)
    exe = backend.compile_and_load(mlir, _jax.DeviceList(tuple(devs[:1])), _jax.CompileOptions())
    args = []
    for inp in job["inputs"]:
        dt = np.dtype(DTYPES[inp["ty"]])
        raw = open(inp["path"], "rb").read()
        arr = np.frombuffer(raw, dtype=dt).reshape(inp["dims"])
        args.append(jax.device_put(arr, devs[0]))
    outs = exe.execute(args)
    meta = []
    for k, o in enumerate(outs):
        a = np.asarray(o)
        name = "out_%d.bin" % k
        with open(os.path.join(job["out"], name), "wb") as f:
            f.write(a.tobytes(order="C"))
        meta.append({"ty": NAMES.get(a.dtype, str(a.dtype)), "dims": list(a.shape), "file": name})
    return meta


def main():
    jobs = json.load(open(sys.argv[1]))
    backend = xla_bridge.get_backend("cpu")
    devs = backend.local_devices()
    start = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    for job in jobs[start:]:
        os.makedirs(job["out"], exist_ok=True)
        try:
            res = {"ok": True, "outputs": run_job(backend, devs, job)}
        except Exception as e:  # report per job, keep going
            res = {"ok": False, "error": "%s: %s" % (type(e).__name__, e)}
        with open(os.path.join(job["out"], "meta.json"), "w") as f:
            json.dump(res, f)


if __name__ == "__main__":
    main()
